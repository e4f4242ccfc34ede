/* Tests of the range coder, its models and the integer rate estimates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/rangecoder.h"
#include "util.h"

/* util.h's xorshift64*, seeded per test so that every run codes the same
 * streams; in [0, n) by multiplication rather than rng_below's modulo (the
 * draws this test has always made). */
static uint32_t rnd_below(uint32_t n) { return (uint32_t)(((uint64_t)rng_next() * n) >> 32); }

/* A symbol of an alphabet of n, drawn from one of a few shapes. */
static int draw(int n, int shape)
{
    switch (shape) {
    case 0: return (int)rnd_below((uint32_t)n);
    case 1: return (int)((uint64_t)rnd_below((uint32_t)n) * rnd_below((uint32_t)n) / (uint32_t)n);
    case 2: return rnd_below(20) ? 0 : (int)rnd_below((uint32_t)n);
    default: return rnd_below(8) ? (int)rnd_below(n < 8 ? (uint32_t)n : 8u) : (int)rnd_below((uint32_t)n);
    }
}

/* The model's own invariants: counts sum to total, the Fenwick tree agrees. */
static void check_imodel(const mmp_imodel *m)
{
    uint32_t sum = 0;
    for (int i = 0; i < m->n; i++) {
        assert_true(m->freq[i] >= 1);
        sum += m->freq[i];
    }
    assert_int_equal(sum, m->total);
    assert_true(m->total <= MMP_RC_MAX_TOTAL);
    for (int k = 0; k < 8; k++) {
        int i = (int)rnd_below((uint32_t)m->n + 1);
        uint32_t s = 0, t = 0;
        for (int j = 0; j < i; j++)
            s += m->freq[j];
        for (int j = i; j > 0; j -= j & -j)
            t += m->tree[j];
        assert_int_equal(s, t);
    }
    /* Every node of the tree, those above n (which growing adds to) too. */
    for (int j = 1; j <= m->cap; j++) {
        uint32_t s = 0;
        for (int i = j - (j & -j); i < j && i < m->n; i++)
            s += m->freq[i];
        assert_int_equal(m->tree[j], s);
    }
}

static void test_enc_growth_from_empty(void **state)
{
    (void)state;
    mmp_rc_enc e;
    mmp_rc_enc_init(&e);
    assert_null(e.buf);
    assert_int_equal(e.len, 0);
    assert_int_equal(e.cap, 0);

    enum { N = 60000 };
    static uint16_t v[N];
    rng_seed(7);
    size_t last_cap = 0;
    int reallocs = 0;
    for (int i = 0; i < N; i++) {
        v[i] = (uint16_t)rng_next();
        mmp_rc_encode(&e, v[i], 1, MMP_RC_MAX_TOTAL);
        assert_true(e.len <= e.cap);
        if (e.cap != last_cap) {
            reallocs++;
            last_cap = e.cap;
        }
    }
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    assert_true(reallocs >= 5);
    /* 16 bits a symbol, four flushed bytes, nothing else. */
    assert_true(e.len >= 2 * N && e.len <= 2 * N + 5);

    mmp_rc_dec d;
    mmp_rc_dec_init(&d, e.buf, e.len);
    for (int i = 0; i < N; i++) {
        uint32_t f = mmp_rc_decode_freq(&d, MMP_RC_MAX_TOTAL);
        assert_int_equal(f, v[i]);
        mmp_rc_decode_update(&d, f, 1, MMP_RC_MAX_TOTAL);
    }
    assert_false(d.overrun);
    assert_int_equal(d.pos, e.len);

    /* Ownership taken by the caller: free must leave it alone. */
    uint8_t *taken = e.buf;
    e.buf = NULL;
    mmp_rc_enc_free(&e);
    free(taken);

    /* After a failed allocation nothing more is written and finish says so. */
    mmp_rc_enc_init(&e);
    e.error = MMP_ENOMEM;
    for (int i = 0; i < 1000; i++)
        mmp_rc_encode(&e, rnd_below(256), 1, 256);
    assert_int_equal(mmp_rc_enc_finish(&e), MMP_ENOMEM);
    assert_int_equal(e.len, 0);
    mmp_rc_enc_free(&e);

    /* An empty stream is valid too. */
    mmp_rc_enc_init(&e);
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    assert_int_equal(e.len, 4);
    mmp_rc_enc_free(&e);
}

static void test_models_interleaved(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 5, 8, 11, 16};
    enum { NM = sizeof sizes / sizeof sizes[0], N = 40000 };
    static uint8_t which[N], sym[N];
    for (uint64_t seed = 1; seed <= 6; seed++) {
        mmp_model m[NM];
        rng_seed(seed);
        for (int i = 0; i < N; i++) {
            which[i] = (uint8_t)rnd_below(NM);
            sym[i] = (uint8_t)draw(sizes[which[i]], (int)((which[i] + seed) % 4));
        }
        mmp_rc_enc e;
        mmp_rc_enc_init(&e);
        for (int k = 0; k < NM; k++)
            mmp_model_init(&m[k], sizes[k]);
        for (int i = 0; i < N; i++)
            mmp_model_encode(&e, &m[which[i]], sym[i]);
        assert_int_equal(mmp_rc_enc_finish(&e), 0);

        mmp_rc_dec d;
        mmp_rc_dec_init(&d, e.buf, e.len);
        for (int k = 0; k < NM; k++)
            mmp_model_init(&m[k], sizes[k]);
        for (int i = 0; i < N; i++)
            assert_int_equal(mmp_model_decode(&d, &m[which[i]]), sym[i]);
        assert_false(d.overrun);
        assert_int_equal(d.pos, e.len);
        for (int k = 0; k < NM; k++)
            assert_true(m[k].total <= MMP_MODEL_LIMIT);
        mmp_rc_enc_free(&e);
    }
}

/* One step of an index-model script: grow to `n` (0: no growth), then code
 * `sym` with the index model (or with the side model when side >= 0). */
typedef struct { int grow, sym, side; } op;

static void run_imodel_script(const op *ops, int nops, int cap, int n0, int *rescales)
{
    mmp_imodel im;
    mmp_model side;
    mmp_rc_enc e;
    mmp_rc_enc_init(&e);
    assert_int_equal(mmp_imodel_init(&im, cap, n0), 0);
    mmp_model_init(&side, 6);
    uint32_t prev_total = im.total;
    for (int i = 0; i < nops; i++) {
        if (ops[i].grow)
            mmp_imodel_grow(&im, ops[i].grow);
        if (ops[i].side >= 0) {
            mmp_model_encode(&e, &side, ops[i].side);
            continue;
        }
        mmp_imodel_encode(&e, &im, ops[i].sym);
        if (im.total < prev_total)
            (*rescales)++;
        prev_total = im.total;
        if (i % 997 == 0)
            check_imodel(&im);
    }
    check_imodel(&im);
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    mmp_imodel_free(&im);

    mmp_rc_dec d;
    mmp_rc_dec_init(&d, e.buf, e.len);
    assert_int_equal(mmp_imodel_init(&im, cap, n0), 0);
    mmp_model_init(&side, 6);
    for (int i = 0; i < nops; i++) {
        if (ops[i].grow)
            mmp_imodel_grow(&im, ops[i].grow);
        if (ops[i].side >= 0)
            assert_int_equal(mmp_model_decode(&d, &side), ops[i].side);
        else
            assert_int_equal(mmp_imodel_decode(&d, &im), ops[i].sym);
    }
    assert_false(d.overrun);
    assert_int_equal(d.pos, e.len);
    mmp_imodel_free(&im);
    mmp_rc_enc_free(&e);
}

static void test_imodel_growing(void **state)
{
    (void)state;
    static const int caps[] = {64, 100, 1024, 4096, 16384};
    enum { N = 30000 };
    static op ops[N];
    int rescales = 0;
    for (int c = 0; c < 5; c++) {
        int cap = caps[c];
        for (int shape = 0; shape < 4; shape++) {
            rng_seed((uint64_t)(100 * c + shape));
            int n0 = 1 + (int)rnd_below(4), n = n0;
            for (int i = 0; i < N; i++) {
                ops[i].grow = 0;
                if (n < cap && rnd_below(4) == 0) {
                    /* Mostly small steps, now and then a big jump. */
                    int add = rnd_below(500) ? 1 + (int)rnd_below(3) : cap / 3;
                    n = n + add < cap ? n + add : cap;
                    ops[i].grow = n;
                }
                ops[i].side = rnd_below(5) == 0 ? (int)rnd_below(6) : -1;
                ops[i].sym = draw(n, shape);
            }
            run_imodel_script(ops, N, cap, n0, &rescales);
        }
    }
    assert_true(rescales >= 20);
}

static void test_extremes(void **state)
{
    (void)state;
    enum { RUN = 300000 };
    mmp_rc_enc e;
    mmp_rc_dec d;

    /* One-symbol alphabets cost almost nothing however long the run. */
    mmp_model m;
    mmp_imodel im;
    mmp_rc_enc_init(&e);
    mmp_model_init(&m, 1);
    assert_int_equal(mmp_imodel_init(&im, 1, 1), 0);
    for (int i = 0; i < RUN; i++) {
        mmp_model_encode(&e, &m, 0);
        mmp_imodel_encode(&e, &im, 0);
        assert_true(im.total <= MMP_RC_MAX_TOTAL);
    }
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    assert_true(e.len < 400);
    mmp_imodel_free(&im);
    mmp_rc_dec_init(&d, e.buf, e.len);
    mmp_model_init(&m, 1);
    assert_int_equal(mmp_imodel_init(&im, 1, 1), 0);
    for (int i = 0; i < RUN; i++) {
        assert_int_equal(mmp_model_decode(&d, &m), 0);
        assert_int_equal(mmp_imodel_decode(&d, &im), 0);
    }
    assert_false(d.overrun);
    mmp_imodel_free(&im);
    mmp_rc_enc_free(&e);

    /* Long runs of one symbol in big alphabets, broken by rare others. */
    mmp_rc_enc_init(&e);
    mmp_model_init(&m, 16);
    assert_int_equal(mmp_imodel_init(&im, 16384, 16384), 0);
    for (int i = 0; i < RUN; i++) {
        mmp_model_encode(&e, &m, i == RUN / 2 ? 15 : 3);
        mmp_imodel_encode(&e, &im, i % 100000 == 99999 ? 0 : 16383);
    }
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    mmp_imodel_free(&im);
    mmp_rc_dec_init(&d, e.buf, e.len);
    mmp_model_init(&m, 16);
    assert_int_equal(mmp_imodel_init(&im, 16384, 16384), 0);
    for (int i = 0; i < RUN; i++) {
        assert_int_equal(mmp_model_decode(&d, &m), i == RUN / 2 ? 15 : 3);
        assert_int_equal(mmp_imodel_decode(&d, &im), i % 100000 == 99999 ? 0 : 16383);
    }
    assert_false(d.overrun);
    mmp_imodel_free(&im);
    mmp_rc_enc_free(&e);

    /* Total at its maximum: the narrowest and the widest intervals. The
     * first symbol is the top one, so the first byte out is 0xFF. */
    enum { N = 20000 };
    static uint32_t cum[N], fr[N];
    rng_seed(99);
    fr[0] = 1;
    cum[0] = MMP_RC_MAX_TOTAL - 1;
    for (int i = 1; i < N; i++) {
        switch (rnd_below(4)) {
        case 0: fr[i] = 1; cum[i] = rnd_below(2) ? 0 : MMP_RC_MAX_TOTAL - 1; break;
        case 1: fr[i] = MMP_RC_MAX_TOTAL; cum[i] = 0; break;
        case 2: fr[i] = MMP_RC_MAX_TOTAL - 1; cum[i] = rnd_below(2); break;
        default: fr[i] = 1 + rnd_below(64); cum[i] = rnd_below(MMP_RC_MAX_TOTAL - fr[i] + 1);
        }
    }
    mmp_rc_enc_init(&e);
    for (int i = 0; i < N; i++)
        mmp_rc_encode(&e, cum[i], fr[i], MMP_RC_MAX_TOTAL);
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    assert_int_equal(e.buf[0], 0xFF);
    mmp_rc_dec_init(&d, e.buf, e.len);
    for (int i = 0; i < N; i++) {
        uint32_t v = mmp_rc_decode_freq(&d, MMP_RC_MAX_TOTAL);
        assert_true(v >= cum[i] && v < cum[i] + fr[i]);
        mmp_rc_decode_update(&d, cum[i], fr[i], MMP_RC_MAX_TOTAL);
    }
    assert_false(d.overrun);
    assert_int_equal(d.pos, e.len);
    mmp_rc_enc_free(&e);

    /* Growing a full-limit model by many symbols at once stays in bounds. */
    mmp_rc_enc_init(&e);
    assert_int_equal(mmp_imodel_init(&im, MMP_IMODEL_MAX_CAP, 1), 0);
    for (int i = 0; i < 5000; i++)
        mmp_imodel_encode(&e, &im, 0);
    mmp_imodel_grow(&im, MMP_IMODEL_MAX_CAP);
    check_imodel(&im);
    assert_int_equal(im.n, MMP_IMODEL_MAX_CAP);
    mmp_imodel_free(&im);
    mmp_rc_enc_free(&e);
}

static void test_imodel_args(void **state)
{
    (void)state;
    mmp_imodel im;
    assert_int_equal(mmp_imodel_init(&im, 0, 1), MMP_EINVAL);
    assert_int_equal(mmp_imodel_init(&im, 8, 0), MMP_EINVAL);
    assert_int_equal(mmp_imodel_init(&im, 8, 9), MMP_EINVAL);
    assert_int_equal(mmp_imodel_init(&im, MMP_IMODEL_MAX_CAP + 1, 1), MMP_EINVAL);
    mmp_imodel_free(&im); /* harmless after a failed init */
    /* A new model's every tree node, at caps and first counts around
     * powers of two, and then after growing by one. */
    for (int cap = 1; cap <= 70; cap++)
        for (int n0 = 1; n0 <= cap; n0++) {
            assert_int_equal(mmp_imodel_init(&im, cap, n0), 0);
            assert_int_equal(im.total, (uint32_t)n0);
            check_imodel(&im);
            mmp_imodel_grow(&im, n0 + 1);
            check_imodel(&im);
            mmp_imodel_free(&im);
        }
    assert_int_equal(mmp_imodel_init(&im, 8, 3), 0);
    mmp_imodel_grow(&im, 2);
    assert_int_equal(im.n, 3);
    mmp_imodel_grow(&im, 100);
    assert_int_equal(im.n, 8);
    assert_int_equal(im.total, 8);
    mmp_imodel_free(&im);
}

/* The counts follow the documented rules exactly (a plain reference model),
 * since encoders and decoders built elsewhere must agree with them. */
static void ref_update(uint32_t *f, int n, uint32_t *total, int s, uint32_t inc, uint32_t limit)
{
    if (*total + inc > limit || f[s] + inc > UINT16_MAX) {
        *total = 0;
        for (int i = 0; i < n; i++) {
            f[i] = (f[i] + 1) / 2;
            *total += f[i];
        }
    }
    f[s] += inc;
    *total += inc;
}

static void test_counts_exact(void **state)
{
    (void)state;
    static uint32_t rf[4096];
    uint32_t rt;
    mmp_rc_enc e;
    mmp_rc_enc_init(&e);
    rng_seed(42);
    for (int n = 1; n <= MMP_MODEL_MAX_SYMS; n += 5) {
        mmp_model m;
        mmp_model_init(&m, n);
        for (int i = 0; i < n; i++)
            rf[i] = 1;
        rt = (uint32_t)n;
        for (int k = 0; k < 3000; k++) {
            int s = draw(n, 2);
            mmp_model_encode(&e, &m, s);
            ref_update(rf, n, &rt, s, MMP_MODEL_INC, MMP_MODEL_LIMIT);
            assert_int_equal(m.total, rt);
            for (int i = 0; i < n; i++)
                assert_int_equal(m.freq[i], rf[i]);
        }
    }
    mmp_imodel im;
    assert_int_equal(mmp_imodel_init(&im, 4096, 2), 0);
    rf[0] = rf[1] = 1;
    rt = 2;
    for (int k = 0; k < 40000; k++) {
        if (k % 10 == 0 && im.n < im.cap) {
            /* Growing halves first when the new counts would not fit. */
            int add = k % 5000 == 0 ? 1500 : 1;
            if (im.n + add > im.cap)
                add = im.cap - im.n;
            while (rt + (uint32_t)add > MMP_IMODEL_LIMIT) {
                rt = 0;
                for (int i = 0; i < im.n; i++) {
                    rf[i] = (rf[i] + 1) / 2;
                    rt += rf[i];
                }
            }
            for (int i = im.n; i < im.n + add; i++)
                rf[i] = 1;
            rt += (uint32_t)add;
            mmp_imodel_grow(&im, im.n + add);
        }
        int s = draw(im.n, 1);
        mmp_imodel_encode(&e, &im, s);
        ref_update(rf, im.n, &rt, s, MMP_IMODEL_INC, MMP_IMODEL_LIMIT);
        assert_int_equal(im.total, rt);
        if (k % 97 == 0) {
            for (int i = 0; i < im.n; i++)
                assert_int_equal(im.freq[i], rf[i]);
            check_imodel(&im);
        }
    }
    mmp_imodel_free(&im);
    mmp_rc_enc_free(&e);
}

/* Estimated bits (Q8 costs from the state before each symbol) against the
 * bytes actually written. */
static void test_rate_estimate(void **state)
{
    (void)state;
    enum { N = 200000 };
    for (int shape = 0; shape < 4; shape++) {
        mmp_model m[3];
        mmp_imodel im;
        mmp_rc_enc e;
        uint64_t est = 0;
        uint32_t costs[MMP_IMODEL_MAX_CAP];
        rng_seed(500 + (uint64_t)shape);
        mmp_rc_enc_init(&e);
        mmp_model_init(&m[0], 2);
        mmp_model_init(&m[1], 7);
        mmp_model_init(&m[2], 16);
        assert_int_equal(mmp_imodel_init(&im, 4096, 16), 0);
        for (int i = 0; i < N; i++) {
            int k = (int)rnd_below(4);
            if (k < 3) {
                int s = draw(m[k].nsyms, shape);
                est += mmp_cost(m[k].freq[s], m[k].total);
                if (i % 1001 == 0) {
                    mmp_model_costs(&m[k], costs);
                    assert_int_equal(costs[s], mmp_cost(m[k].freq[s], m[k].total));
                }
                mmp_model_encode(&e, &m[k], s);
            } else {
                if (im.n < im.cap && rnd_below(16) == 0)
                    mmp_imodel_grow(&im, im.n + 1);
                int s = draw(im.n, shape);
                est += mmp_cost(im.freq[s], im.total);
                if (i % 1001 == 0) {
                    mmp_imodel_costs(&im, costs);
                    for (int j = 0; j < im.n; j++)
                        assert_int_equal(costs[j], mmp_cost(im.freq[j], im.total));
                }
                mmp_imodel_encode(&e, &im, s);
            }
        }
        assert_int_equal(mmp_rc_enc_finish(&e), 0);
        double est_bits = (double)est / (1 << MMP_COST_SHIFT);
        double real_bits = 8.0 * (double)e.len;
        print_message("shape %d: estimated %.0f bits, coded %.0f bits\n", shape, est_bits, real_bits);
        assert_true(fabs(real_bits - est_bits) <= 0.01 * est_bits + 32);
        mmp_imodel_free(&im);
        mmp_rc_enc_free(&e);
    }
}

static void check_cost(uint32_t f, uint32_t t)
{
    double want = log2((double)t) - log2((double)f);
    double got = (double)mmp_cost(f, t) / (1 << MMP_COST_SHIFT);
    if (fabs(got - want) > 1.0 / 256)
        fail_msg("mmp_cost(%u, %u) = %.6f, log2 says %.6f", f, t, got, want);
}

static void test_cost_vs_libm(void **state)
{
    (void)state;
    for (uint32_t t = 1; t <= 700; t++)
        for (uint32_t f = 1; f <= t; f++)
            check_cost(f, t);
    for (uint32_t f = 1; f <= MMP_RC_MAX_TOTAL; f++)
        check_cost(f, MMP_RC_MAX_TOTAL);
    rng_seed(3);
    for (int i = 0; i < 1000000; i++) {
        uint32_t t = 1 + rnd_below(MMP_RC_MAX_TOTAL);
        check_cost(1 + rnd_below(t), t);
    }
    for (int i = 0; i < 100000; i++) { /* wider than the coder needs */
        uint32_t t = 1 + rng_next();
        check_cost(1 + rnd_below(t), t);
    }
    assert_int_equal(mmp_cost(1, 2), 256);
    assert_int_equal(mmp_cost(1, MMP_RC_MAX_TOTAL), 16 * 256);
    assert_int_equal(mmp_cost(5, 5), 0);
    assert_int_equal(mmp_cost(0, 4), mmp_cost(1, 4));
}

static void decode_garbage(const uint8_t *buf, size_t len, int nsyms)
{
    mmp_rc_dec d;
    mmp_model m[3];
    mmp_imodel im;
    mmp_rc_dec_init(&d, buf, len);
    mmp_model_init(&m[0], 1);
    mmp_model_init(&m[1], 5);
    mmp_model_init(&m[2], 16);
    assert_int_equal(mmp_imodel_init(&im, 2000, 1), 0);
    for (int i = 0; i < nsyms; i++) {
        int k = i % 5;
        if (k < 3) {
            int s = mmp_model_decode(&d, &m[k]);
            assert_true(s >= 0 && s < m[k].nsyms);
        } else if (k == 3) {
            mmp_imodel_grow(&im, im.n + 1 + (int)(i % 3));
            int s = mmp_imodel_decode(&d, &im);
            assert_true(s >= 0 && s < im.n);
        } else {
            uint32_t t = 1 + rnd_below(MMP_RC_MAX_TOTAL);
            uint32_t v = mmp_rc_decode_freq(&d, t);
            assert_true(v < t);
            mmp_rc_decode_update(&d, v, 1, t);
        }
        assert_true(d.pos <= len);
    }
    mmp_imodel_free(&im);
    if (len < 4)
        assert_true(d.overrun);
}

static void test_garbage(void **state)
{
    (void)state;
    uint8_t buf[4096];
    rng_seed(11);
    decode_garbage(NULL, 0, 1000);
    decode_garbage(buf, 0, 1000);
    for (int trial = 0; trial < 300; trial++) {
        size_t len = trial < 200 ? (size_t)trial % 40 : 1 + rnd_below(sizeof buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(trial % 3 == 0 ? 0xFF : trial % 3 == 1 ? rng_next() : 0);
        /* A heap copy of exactly len bytes lets ASan catch any over-read. */
        uint8_t *copy = malloc(len ? len : 1);
        assert_non_null(copy);
        memcpy(copy, buf, len);
        decode_garbage(copy, len, 5000);
        free(copy);
    }
    /* A truncated stream is reported. */
    mmp_rc_enc e;
    mmp_rc_enc_init(&e);
    for (int i = 0; i < 1000; i++)
        mmp_rc_encode(&e, rnd_below(200), 1, 200);
    assert_int_equal(mmp_rc_enc_finish(&e), 0);
    mmp_rc_dec d;
    mmp_rc_dec_init(&d, e.buf, e.len - 1);
    for (int i = 0; i < 1000; i++)
        mmp_rc_decode_update(&d, mmp_rc_decode_freq(&d, 200), 1, 200);
    assert_true(d.overrun);
    mmp_rc_enc_free(&e);
}

/* The model's symbol the general way: decode_freq's value, then a scan. */
static int model_decode_by_value(mmp_rc_dec *d, mmp_model *m)
{
    const uint32_t v = mmp_rc_decode_freq(d, m->total);
    uint32_t cum = 0;
    int s = 0;
    for (; s < m->nsyms - 1 && v >= cum + m->freq[s]; s++)
        cum += m->freq[s];
    mmp_rc_decode_update(d, cum, m->freq[s], m->total);
    /* the model's own update, through a scratch encoder */
    mmp_rc_enc e;
    mmp_rc_enc_init(&e);
    mmp_model_encode(&e, m, s);
    mmp_rc_enc_free(&e);
    return s;
}

/* mmp_model_decode and mmp_rc_decode_bit divide less than decode_freq and
 * update: on coded streams and on garbage, they must read the same symbols
 * and leave the decoder in the same state as those, step for step. And
 * mmp_rc_encode_bit must write what mmp_rc_encode(bit, 1, 2) writes. */
static void test_division_free_paths(void **state)
{
    (void)state;
    rng_seed(14);
    uint8_t buf[2048];
    for (int trial = 0; trial < 400; trial++) {
        const int nsyms = 1 + (int)rnd_below(MMP_MODEL_MAX_SYMS), shape = trial % 4;
        size_t len;
        mmp_rc_enc e0, e1;
        mmp_rc_enc_init(&e0);
        mmp_rc_enc_init(&e1);
        if (trial % 2 == 0) {
            /* a coded stream: model symbols and raw bits, both ways */
            mmp_model m;
            mmp_model_init(&m, nsyms);
            for (int i = 0; i < 3000; i++) {
                if (rnd_below(3) == 0) {
                    const int bit = (int)rnd_below(2);
                    mmp_rc_encode(&e0, (uint32_t)bit, 1, 2);
                    mmp_rc_encode_bit(&e1, bit);
                } else {
                    const int sym = draw(nsyms, shape);
                    mmp_model mc = m;
                    mmp_model_encode(&e0, &m, sym);
                    mmp_model_encode(&e1, &mc, sym);
                }
            }
            assert_int_equal(mmp_rc_enc_finish(&e0), 0);
            assert_int_equal(mmp_rc_enc_finish(&e1), 0);
            assert_int_equal(e0.len, e1.len);
            assert_memory_equal(e0.buf, e1.buf, e0.len);
            len = e0.len < sizeof buf ? e0.len : sizeof buf;
            memcpy(buf, e0.buf, len);
        } else {
            len = 1 + rnd_below(sizeof buf);
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)(trial % 3 == 0 ? 0xFF : rng_next());
        }
        mmp_rc_enc_free(&e0);
        mmp_rc_enc_free(&e1);
        mmp_rc_dec a, b;
        mmp_rc_dec_init(&a, buf, len);
        mmp_rc_dec_init(&b, buf, len);
        mmp_model ma, mb;
        mmp_model_init(&ma, nsyms);
        mmp_model_init(&mb, nsyms);
        for (int i = 0; i < 3000; i++) {
            if (rnd_below(3) == 0) {
                const uint32_t v = mmp_rc_decode_freq(&a, 2);
                mmp_rc_decode_update(&a, v, 1, 2);
                assert_int_equal(mmp_rc_decode_bit(&b), (int)v);
            } else {
                assert_int_equal(model_decode_by_value(&a, &ma), mmp_model_decode(&b, &mb));
            }
            assert_int_equal(a.range, b.range);
            assert_int_equal(a.code, b.code);
            assert_int_equal(a.pos, b.pos);
        }
    }
    /* Codes at the intervals' ends and around them, which random streams
     * almost never hit: e * r - 1, e * r, e * r + 1 for every end e, and
     * codes past total * r (garbage). */
    static const uint32_t ranges[] = {1u << 24, (1u << 24) + 1, 0xFFFFFFFFu, 0x80000000u, 0x9E3779B9u};
    for (int k = 0; k < 5; k++) {
        mmp_model m;
        mmp_model_init(&m, 1 + k * 3);
        for (int i = 0; i < 200 * k; i++) {
            mmp_rc_enc e;
            mmp_rc_enc_init(&e);
            mmp_model_encode(&e, &m, draw(m.nsyms, 3));
            mmp_rc_enc_free(&e);
        }
        const uint32_t r = ranges[k] / m.total;
        uint32_t ends[MMP_MODEL_MAX_SYMS + 3], cum = 0;
        int ne = 0;
        for (int sy = 0; sy < m.nsyms; sy++)
            ends[ne++] = (cum += m.freq[sy]) * r;
        ends[ne++] = ranges[k] >> 1;
        ends[ne++] = ranges[k] - 1;
        ends[ne++] = 0xFFFFFFFFu;
        for (int i = 0; i < ne; i++)
            for (int dc = -1; dc <= 1; dc++) {
                const uint32_t code = ends[i] + (uint32_t)dc;
                mmp_rc_dec a, b;
                mmp_rc_dec_init(&a, buf, 64);
                a.range = ranges[k];
                a.code = code;
                b = a;
                mmp_model ma = m, mb = m;
                assert_int_equal(model_decode_by_value(&a, &ma), mmp_model_decode(&b, &mb));
                assert_int_equal(a.range, b.range);
                assert_int_equal(a.code, b.code);
                a.range = b.range = ranges[k];
                a.code = b.code = code;
                const uint32_t v = mmp_rc_decode_freq(&a, 2);
                mmp_rc_decode_update(&a, v, 1, 2);
                assert_int_equal(mmp_rc_decode_bit(&b), (int)v);
                assert_int_equal(a.range, b.range);
                assert_int_equal(a.code, b.code);
            }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enc_growth_from_empty),
        cmocka_unit_test(test_models_interleaved),
        cmocka_unit_test(test_imodel_growing),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_imodel_args),
        cmocka_unit_test(test_counts_exact),
        cmocka_unit_test(test_rate_estimate),
        cmocka_unit_test(test_cost_vs_libm),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_division_free_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
