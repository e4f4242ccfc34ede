/*
 * The versions of mmp_settings (mmp/mmp.h, MMP_ABI_VERSION), as a caller
 * built against another header meets them:
 *
 * 1. mmp_default_settings writes the struct's size and the defaults;
 *    mmp_settings_init refuses NULL and a size below the first version's.
 * 2. Settings not set by it (a size of 0: a struct filled by hand) are
 *    MMP_EINVAL before any work, with a reason that says so.
 * 3. A caller built against a newer, larger struct: mmp_settings_init
 *    zeroes the fields this library does not know, and the encode gives
 *    the bytes of the defaults; a field it does not know set to anything
 *    but 0 is MMP_EUNSUPPORTED, never read as something else.
 * 4. A caller built against the first struct (up to progress_opaque, before
 *    the deblocking filter's field): the fields it lacks take their
 *    defaults, so its encode has the default's bytes; sizes between two
 *    versions' are refused.
 * 5. A caller built against the second struct (up to residual_mix, format
 *    1.2's header): residual_context, which it lacks, takes its default 0
 *    (on), so its lossless encode has the default's bytes, the residual
 *    context's tool bit included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "container_util.h"
#include "mmp/mmp.h"

static void gradient(mmp_image *img)
{
    assert_int_equal(mmp_image_alloc(img, 48, 32, 255), 0);
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++)
            img->pix[y * img->width + x] = (uint16_t)((x * 5 + y * 3 + (x * y) % 7) % 256);
}

/* img at lambda with the defaults on the seq engine, into *buf: the
 * reference the other versions' structs must give; *s keeps its settings. */
static void default_encode(const mmp_image *img, double lambda, mmp_settings *s, uint8_t **buf,
                           size_t *len)
{
    char err[256] = "";
    mmp_default_settings(s);
    s->engine = "seq";
    s->lambda = lambda;
    assert_int_equal(mmp_encode(s, img, buf, len, NULL, NULL, err, sizeof err), 0);
}

static void test_defaults_carry_the_size(void **state)
{
    (void)state;
    mmp_settings s;
    memset(&s, 0xa5, sizeof s);
    mmp_default_settings(&s);
    assert_int_equal(s.size, sizeof(mmp_settings));
    assert_true(s.lambda == 10.0);
    assert_string_equal(s.engine, "auto");
    assert_int_equal(s.order, MMP_ORDER_WAVEFRONT);
    assert_int_equal(s.speed, 1);
    assert_int_equal(s.max_error, -1);
    assert_int_equal(s.head_start, -1);
    assert_true(s.redundancy == -1.0);
    assert_null(s.progress);
    assert_null(s.log);
    assert_int_equal(s.residual_mix, 0);
    assert_int_equal(s.residual_context, 0);
    assert_int_equal(s.spare, 0);
    assert_int_equal(mmp_settings_init(&s, sizeof s), 0);
    assert_int_equal(mmp_settings_init(NULL, sizeof s), MMP_EINVAL);
    assert_int_equal(mmp_settings_init(&s, sizeof s - 1), MMP_EINVAL);
    assert_int_equal(mmp_settings_init(&s, 0), MMP_EINVAL);
    mmp_default_settings(NULL); /* ignored */
}

static void test_unset_settings_are_refused(void **state)
{
    (void)state;
    mmp_image img;
    gradient(&img);
    mmp_settings s;
    memset(&s, 0, sizeof s);
    s.lambda = 10;
    s.engine = "seq";
    uint8_t *out = (uint8_t *)&s; /* set to NULL on every failure */
    size_t len = 1;
    char err[256] = "";
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_non_null(strstr(err, "not set by mmp_default_settings"));
    assert_null(out);
    assert_int_equal(len, 0);
    s.size = sizeof s - 4; /* a size no version of the struct has had */
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    const uint8_t px[16] = {0};
    assert_int_equal(mmp_encode_grey8(px, 4, 4, 4, &s, &out, &len), MMP_EINVAL);
    mmp_image_free(&img);
}

/* A caller's struct of a newer header: this library's fields, then one
 * more it does not know. */
typedef struct newer_settings {
    mmp_settings known;
    int64_t unknown;
} newer_settings;

static void test_newer_struct(void **state)
{
    (void)state;
    mmp_image img;
    gradient(&img);
    mmp_settings s;
    uint8_t *ref = NULL, *out = NULL;
    size_t rlen = 0, len = 0;
    char err[256] = "";
    default_encode(&img, 10, &s, &ref, &rlen);

    newer_settings n;
    memset(&n, 0xff, sizeof n);
    assert_int_equal(mmp_settings_init(&n.known, sizeof n), 0);
    assert_int_equal(n.known.size, sizeof n);
    assert_int_equal(n.unknown, 0); /* zeroed: the field's default */
    n.known.engine = "seq";
    assert_int_equal(mmp_encode(&n.known, &img, &out, &len, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(len, rlen);
    assert_memory_equal(out, ref, len);
    mmp_free(out);

    n.unknown = 1;
    out = NULL;
    assert_int_equal(mmp_encode(&n.known, &img, &out, &len, NULL, NULL, err, sizeof err),
                     MMP_EUNSUPPORTED);
    assert_non_null(strstr(err, "does not know"));
    assert_null(out);
    mmp_free(ref);
    mmp_image_free(&img);
}

/* The first version's size: every field up to progress_opaque. The
 * second's: up to residual_mix. */
#define FIRST_SIZE (offsetof(mmp_settings, progress_opaque) + sizeof(void *))
#define SECOND_SIZE (offsetof(mmp_settings, residual_mix) + sizeof(int))

/* A caller built against an older mmp.h: old set up by mmp_settings_init
 * with that version's size (the bytes past it are not the caller's), the
 * seq engine, lambda and max_error; its encode of img must be ref. */
static void encode_as_older(mmp_settings *old, size_t size, const mmp_image *img, double lambda,
                            int max_error, const uint8_t *ref, size_t rlen)
{
    uint8_t *out = NULL;
    size_t len = 0;
    char err[256] = "";
    memset(old, 0xa5, sizeof *old);
    assert_int_equal(mmp_settings_init(old, size), 0);
    assert_int_equal(old->size, size);
    old->engine = "seq";
    old->lambda = lambda;
    if (size > FIRST_SIZE)
        old->max_error = max_error;
    assert_int_equal(mmp_encode(old, img, &out, &len, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(len, rlen);
    assert_memory_equal(out, ref, len);
    mmp_free(out);
}

static void test_first_struct(void **state)
{
    (void)state;
    mmp_image img;
    gradient(&img);
    mmp_settings s;
    uint8_t *ref = NULL, *out = NULL;
    size_t rlen = 0, len = 0;
    char err[256] = "";
    default_encode(&img, 300, &s, &ref, &rlen); /* lambda 300: the gradient takes the
                                                 * deblocking filter (tc 6, beta 12) */

    mmp_settings first;
    encode_as_older(&first, FIRST_SIZE, &img, 300, -1, ref, rlen);

    /* Without the filter the file differs: the default above had it. */
    s.deblocking = -1;
    out = NULL;
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, err, sizeof err), 0);
    assert_true(len != rlen || memcmp(out, ref, len) != 0);
    mmp_free(out);

    for (size_t size = FIRST_SIZE + 1; size < sizeof(mmp_settings); size++)
        assert_int_equal(mmp_settings_init(&first, size), size == SECOND_SIZE ? 0 : MMP_EINVAL);
    mmp_free(ref);
    mmp_image_free(&img);
}

/* The residual stage's tools bits of HEAD (docs/format.md section 2) in
 * the file buf of one tile, as mmp_probe reports them too. */
static uint32_t residual_tools(const uint8_t *buf, size_t len)
{
    mmp_file_info fi;
    char err[256] = "";
    assert_int_equal(mmp_probe(buf, len, &fi, err, sizeof err), 0);
    const uint32_t t = get32(buf + MF_TOOLS) & (MMP_TOOL_RESIDUAL_MIX | MMP_TOOL_RESIDUAL_CONTEXT);
    assert_int_equal(fi.residual_mix, (t & MMP_TOOL_RESIDUAL_MIX) != 0);
    assert_int_equal(fi.residual_context, (t & MMP_TOOL_RESIDUAL_CONTEXT) != 0);
    return t;
}

static void test_second_struct(void **state)
{
    (void)state;
    assert_true(FIRST_SIZE < SECOND_SIZE && SECOND_SIZE < sizeof(mmp_settings));
    mmp_image img;
    gradient(&img);
    mmp_settings s;
    uint8_t *ref = NULL, *out = NULL;
    size_t rlen = 0, len = 0;
    char err[256] = "";
    mmp_default_settings(&s);
    s.engine = "seq";
    s.max_error = 0; /* lossless: the residual stage's tools count */
    assert_int_equal(mmp_encode(&s, &img, &ref, &rlen, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(residual_tools(ref, rlen), MMP_TOOL_RESIDUAL_MIX | MMP_TOOL_RESIDUAL_CONTEXT);

    mmp_settings second;
    encode_as_older(&second, SECOND_SIZE, &img, s.lambda, 0, ref, rlen);
    assert_int_equal(second.residual_mix, 0);

    /* Without the residual context the file differs: no bit 3. */
    s.residual_context = -1;
    out = NULL;
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(residual_tools(out, len), MMP_TOOL_RESIDUAL_MIX);
    assert_true(len != rlen || memcmp(out, ref, len) != 0);
    mmp_free(out);
    /* The second struct's residual_mix -1: neither tool. */
    second.residual_mix = -1;
    out = NULL;
    assert_int_equal(mmp_encode(&second, &img, &out, &len, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(residual_tools(out, len), 0);
    mmp_free(out);

    for (size_t size = SECOND_SIZE + 1; size < sizeof(mmp_settings); size++)
        assert_int_equal(mmp_settings_init(&second, size), MMP_EINVAL);
    mmp_free(ref);
    mmp_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_carry_the_size),
        cmocka_unit_test(test_unset_settings_are_refused),
        cmocka_unit_test(test_newer_struct),
        cmocka_unit_test(test_first_struct),
        cmocka_unit_test(test_second_struct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
