/*
 * mmp_set_quality: the 0 to 100 quality scale as settings. Its table as
 * mmp/mmp.h states it, exact at the points and the stated arithmetic
 * between them, monotone, the default quality at the default lambda; 100
 * lossless; bad qualities refused. Run from the repository's root (it
 * reads mmp/mmp.h).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mmp/mmp.h"
#include "quality_pairs.h"

static void test_quality_table(void **state)
{
    (void)state;
    quality_pairs t;
    quality_pairs_of_header(&t);
    assert_true(t.q[0] == 0 && t.q[t.n - 1] < 100);
    for (int i = 0; i < t.n; i++) {
        if (quality_lambda_of(t.q[i]) != t.lambda[i])
            fail_msg("quality %g: lambda %.17g, mmp.h says %g", t.q[i], quality_lambda_of(t.q[i]),
                     t.lambda[i]);
        if (i > 0 && !(t.q[i] > t.q[i - 1] && t.lambda[i] < t.lambda[i - 1]))
            fail_msg("the table is not monotone at %g:%g", t.q[i], t.lambda[i]);
        /* Between points: the stated formula, rounded to 1/256. */
        for (double f = 0.125; i + 1 < t.n && f < 1; f += 0.25) {
            const double q = t.q[i] + f * (t.q[i + 1] - t.q[i]);
            const double want =
                (double)llround(t.lambda[i] * pow(t.lambda[i + 1] / t.lambda[i], f) * 256) / 256;
            if (quality_lambda_of(q) != want)
                fail_msg("quality %g: lambda %.17g, the formula %.17g", q, quality_lambda_of(q),
                         want);
        }
    }
    /* Every whole quality up to the last point a smaller lambda than the
     * one before; from there to 100 the last point's. */
    for (int q = 1; q <= t.q[t.n - 1]; q++)
        if (!(quality_lambda_of(q) < quality_lambda_of(q - 1)))
            fail_msg("quality %d: lambda %g, not below quality %d's %g", q, quality_lambda_of(q),
                     q - 1, quality_lambda_of(q - 1));
    assert_true(quality_lambda_of(99.99) == t.lambda[t.n - 1]);
    /* The default quality is the default lambda. */
    mmp_settings def;
    mmp_default_settings(&def);
    assert_true(quality_lambda_of(MMP_DEFAULT_QUALITY) == def.lambda);
}

/* 100 is lossless, lambda left alone; out of range, NaN and NULL are
 * refused with nothing set. */
static void test_quality_edges(void **state)
{
    (void)state;
    mmp_settings st, before;
    mmp_default_settings(&st);
    st.lambda = 3;
    assert_int_equal(mmp_set_quality(&st, 100), MMP_OK);
    assert_int_equal(st.max_error, 0);
    assert_true(st.lambda == 3);
    const double bad[] = {-0.001, 100.001, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mmp_default_settings(&st);
        before = st;
        assert_int_equal(mmp_set_quality(&st, bad[i]), MMP_EINVAL);
        assert_memory_equal(&st, &before, sizeof st);
    }
    assert_int_equal(mmp_set_quality(NULL, 50), MMP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quality_table),
        cmocka_unit_test(test_quality_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
