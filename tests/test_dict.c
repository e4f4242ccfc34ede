/* The multiscale dictionary: rescaling, redundancy control, capacity, determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dict/dict.h"

/* xorshift32 from a fixed state: this test's own draws (util.h's generator
 * would give other patterns). */
static uint32_t xorshift32_state = 12345;
static uint32_t xorshift32(void)
{
    xorshift32_state ^= xorshift32_state << 13;
    xorshift32_state ^= xorshift32_state >> 17;
    xorshift32_state ^= xorshift32_state << 5;
    return xorshift32_state;
}

static void test_initial(void **st)
{
    (void)st;
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, 1024, 255, 16), 0);
    int n0 = mmp_dict_initial_count(255);
    assert_int_equal(n0, 63);
    for (int s = 0; s < MMP_NSCALES; s++) {
        assert_int_equal(d.n[s], n0);
        int area = mmp_scale_area(s);
        const int32_t *z = mmp_dict_elem(&d, s, 0);
        for (int i = 0; i < area; i++)
            assert_int_equal(z[i], 0);
        /* constant blocks 0, +8, -8, +16, ... */
        assert_int_equal(mmp_dict_elem(&d, s, 1)[area - 1], 8);
        assert_int_equal(mmp_dict_elem(&d, s, 2)[0], -8);
        assert_int_equal(mmp_dict_elem(&d, s, 62)[0], -248);
    }
    mmp_dict_free(&d);
    assert_int_equal(mmp_dict_initial_count(1), 3);
    assert_int_equal(mmp_dict_initial_count(65535), 63);
    /* a capacity below the initial contents is refused */
    assert_int_not_equal(mmp_dict_init(&d, 32, 255, 16), 0);
}

/* The initial contents that mmp_dict_init writes directly are those that
 * inserting the constant patterns one by one gives, with the redundancy
 * test (docs/format.md 5.1, 5.3): the same elements in the same order, and
 * the same search and redundancy aids, for thresholds that drop none, some
 * and all but one of them. */
static void test_initial_as_inserted(void **st)
{
    (void)st;
    static const int maxvals[] = {1, 2, 3, 7, 31, 32, 63, 95, 96, 127, 255, 1000, 1023, 4095, 65535};
    static const uint32_t thresholds[] = {0,  1,   15,   16,    17,     63,     64,         65,
                                          128, 144, 1024, 16384, 100000, 1u << 24, UINT32_MAX};
    enum { KNOWN1_WORDS = 2 * 65536 / 64 }; /* dict.c's KNOWN1_HALF */
    int fewer = 0;
    for (size_t i = 0; i < sizeof maxvals / sizeof *maxvals; i++)
        for (size_t j = 0; j < sizeof thresholds / sizeof *thresholds; j++) {
            const int maxval = maxvals[i], n0 = mmp_dict_initial_count(maxval);
            mmp_dict d, r;
            assert_int_equal(mmp_dict_init(&d, 64, maxval, thresholds[j]), 0);
            /* r: the same dictionary emptied, then given the patterns */
            assert_int_equal(mmp_dict_init(&r, 64, maxval, thresholds[j]), 0);
            free(r.known1);
            r.known1 = NULL;
            const int step = (maxval + 1) / 32 < 1 ? 1 : (maxval + 1) / 32;
            for (int s = 0; s < MMP_NSCALES; s++) {
                const int area = mmp_scale_area(s);
                r.n[s] = 0;
                r.maxabs[s] = 0;
                for (int k = 0; k < n0; k++) {
                    int32_t pat[256];
                    for (int x = 0; x < area; x++)
                        pat[x] = (int32_t)((k + 1) / 2) * step * ((k & 1) ? 1 : -1);
                    mmp_dict_insert(&r, s, pat);
                }
            }
            for (int s = 0; s < MMP_NSCALES; s++) {
                const int n = r.n[s], area = mmp_scale_area(s);
                assert_int_equal(d.n[s], n);
                assert_int_equal(d.maxabs[s], r.maxabs[s]);
                assert_memory_equal(d.data[s], r.data[s], sizeof(int32_t) * n * area);
                assert_memory_equal(d.sorted_sum[s], r.sorted_sum[s], sizeof(int32_t) * n);
                assert_memory_equal(d.sorted_id[s], r.sorted_id[s], sizeof(int32_t) * n);
                assert_memory_equal(d.sum_dir[s], r.sum_dir[s],
                                    sizeof(int32_t) * ((n + MMP_DICT_DIR - 1) / MMP_DICT_DIR));
                if (area >= 16) /* dict.c's SIG_MIN_AREA */
                    assert_memory_equal(d.sig[s], r.sig[s], sizeof(int32_t) * n * MMP_DICT_SIG);
            }
            assert_non_null(d.known1);
            assert_non_null(r.known1);
            assert_memory_equal(d.known1, r.known1, sizeof(uint64_t) * KNOWN1_WORDS);
            fewer += d.n[0] < n0;
            mmp_dict_free(&d);
            mmp_dict_free(&r);
        }
    assert_true(fewer > 0); /* some thresholds dropped initial patterns */
}

static void test_rescale_constant_and_identity(void **st)
{
    (void)st;
    int32_t src[256], dst[256];
    for (int a = 0; a <= 4; a++)
        for (int b = 0; b <= 4; b++)
            for (int da = 0; da <= 4; da++)
                for (int db = 0; db <= 4; db++) {
                    for (int i = 0; i < (1 << (a + b)); i++)
                        src[i] = -37;
                    mmp_rescale(src, 1 << a, 1 << b, dst, 1 << da, 1 << db);
                    for (int i = 0; i < (1 << (da + db)); i++)
                        assert_int_equal(dst[i], -37);
                }
    for (int i = 0; i < 128; i++)
        src[i] = (int32_t)(xorshift32() % 511) - 255;
    mmp_rescale(src, 8, 16, dst, 8, 16);
    assert_memory_equal(src, dst, 128 * sizeof(int32_t));
}

/* docs/format.md 5.2 written out with plain divisions, as the reference. */
static int64_t ref_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static void ref_resample(const int32_t *in, int n, int32_t *out, int m)
{
    for (int j = 0; j < m; j++) {
        if (m == n) {
            out[j] = in[j];
        } else if (m < n) {
            const int k = n / m;
            int64_t sum = 0;
            for (int i = 0; i < k; i++)
                sum += in[j * k + i];
            out[j] = (int32_t)ref_floor_div(2 * sum + k, 2 * k);
        } else {
            const int f = m / n, den = 2 * f, t = 2 * j + 1 - f;
            if (t <= 0) {
                out[j] = in[0];
            } else {
                const int i0 = t / den, frac = t % den;
                out[j] = i0 >= n - 1 ? in[n - 1]
                                     : (int32_t)ref_floor_div((int64_t)in[i0] * (den - frac) +
                                                                  (int64_t)in[i0 + 1] * frac +
                                                                  den / 2,
                                                              den);
            }
        }
    }
}

/* Every pair of scales, random signed samples up to +-65535: rows first,
 * then columns, exactly as the format's formulas. */
static void test_rescale_matches_formulas(void **st)
{
    (void)st;
    int32_t src[256], dst[256], rows[256], want[256], col[16], colout[16];
    for (int rep = 0; rep < 8; rep++)
        for (int a = 0; a <= 4; a++)
            for (int b = 0; b <= 4; b++)
                for (int da = 0; da <= 4; da++)
                    for (int db = 0; db <= 4; db++) {
                        const int sh = 1 << a, sw = 1 << b, dh = 1 << da, dw = 1 << db;
                        for (int i = 0; i < sh * sw; i++)
                            src[i] = (int32_t)(xorshift32() % 131071) - 65535;
                        for (int y = 0; y < sh; y++)
                            ref_resample(src + y * sw, sw, rows + y * dw, dw);
                        for (int x = 0; x < dw; x++) {
                            for (int y = 0; y < sh; y++)
                                col[y] = rows[y * dw + x];
                            ref_resample(col, sh, colout, dh);
                            for (int y = 0; y < dh; y++)
                                want[y * dw + x] = colout[y];
                        }
                        mmp_rescale(src, sh, sw, dst, dh, dw);
                        for (int i = 0; i < dh * dw; i++)
                            if (dst[i] != want[i])
                                fail_msg("%dx%d -> %dx%d, sample %d: %d, the formulas give %d", sh,
                                         sw, dh, dw, i, dst[i], want[i]);
                    }
}

static void test_rescale_known_values(void **st)
{
    (void)st;
    /* shrink 1x4 -> 1x2: averages, halves rounded up (towards +inf) */
    int32_t s1[4] = {1, 2, -3, -4}, d1[2];
    mmp_rescale(s1, 1, 4, d1, 1, 2);
    assert_int_equal(d1[0], 2);  /* 1.5 -> 2 */
    assert_int_equal(d1[1], -3); /* -3.5 -> -3 */
    /* grow 1x2 -> 1x4: centres at -0.25, 0.25, 0.75, 1.25 of the source grid */
    int32_t s2[2] = {0, 8}, d2[4];
    mmp_rescale(s2, 1, 2, d2, 1, 4);
    assert_int_equal(d2[0], 0);
    assert_int_equal(d2[1], 2);
    assert_int_equal(d2[2], 6);
    assert_int_equal(d2[3], 8);
    /* 2x1 -> 4x1 is the same along columns */
    int32_t d3[4];
    mmp_rescale(s2, 2, 1, d3, 4, 1);
    assert_memory_equal(d2, d3, sizeof(d2));
    /* 1x1 -> 16x16 replicates */
    int32_t one = 77, big[256];
    mmp_rescale(&one, 1, 1, big, 16, 16);
    for (int i = 0; i < 256; i++)
        assert_int_equal(big[i], 77);
    /* 4x4 -> 1x1 is the rounded mean */
    int32_t q[16];
    for (int i = 0; i < 16; i++)
        q[i] = i;
    int32_t m;
    mmp_rescale(q, 4, 4, &m, 1, 1);
    assert_int_equal(m, 8); /* 7.5 -> 8 */
}

static void test_redundancy(void **st)
{
    (void)st;
    mmp_dict d;
    /* threshold: mean squared distance 2 per pixel (Q4: 32) */
    assert_int_equal(mmp_dict_init(&d, 1024, 255, 32), 0);
    int s = mmp_scale(2, 2); /* 4x4 */
    int n0 = d.n[s];
    int32_t p[16];
    for (int i = 0; i < 16; i++)
        p[i] = (i % 4) * 10 - 15;
    assert_int_equal(mmp_dict_insert(&d, s, p), 1);
    assert_int_equal(d.n[s], n0 + 1);
    assert_memory_equal(mmp_dict_elem(&d, s, n0), p, sizeof(p));
    /* the same pattern again is redundant */
    assert_int_equal(mmp_dict_insert(&d, s, p), 0);
    /* distance 16*1 = mean 1 per pixel: within the threshold */
    for (int i = 0; i < 16; i++)
        p[i] += 1;
    assert_int_equal(mmp_dict_insert(&d, s, p), 0);
    /* mean squared distance exactly 2 is still redundant (<=) */
    int32_t q[16];
    memcpy(q, mmp_dict_elem(&d, s, n0), sizeof(q));
    for (int i = 0; i < 8; i++)
        q[i] += 2; /* 8 * 4 = 32 = 2 * 16 */
    assert_int_equal(mmp_dict_insert(&d, s, q), 0);
    q[8] += 1; /* 33 > 32 */
    assert_int_equal(mmp_dict_insert(&d, s, q), 1);
    mmp_dict_free(&d);

    /* threshold 0: only exact duplicates are redundant */
    assert_int_equal(mmp_dict_init(&d, 1024, 255, 0), 0);
    int32_t r[16] = {0};
    r[3] = 1;
    assert_int_equal(mmp_dict_insert(&d, s, r), 1);
    assert_int_equal(mmp_dict_insert(&d, s, r), 0);
    r[3] = 2;
    assert_int_equal(mmp_dict_insert(&d, s, r), 1);
    mmp_dict_free(&d);
}

/* The sorted index finds a redundant element whatever its position. */
static void test_redundancy_matches_brute_force(void **st)
{
    (void)st;
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, 4096, 255, 40), 0);
    int s = mmp_scale(1, 2); /* 2x4 */
    for (int it = 0; it < 3000; it++) {
        int32_t p[8];
        for (int i = 0; i < 8; i++)
            p[i] = (int32_t)(xorshift32() % 21) - 10;
        int brute = 0;
        for (int k = 0; k < d.n[s]; k++) {
            const int32_t *e = mmp_dict_elem(&d, s, k);
            int64_t ssd = 0;
            for (int i = 0; i < 8; i++)
                ssd += (int64_t)(p[i] - e[i]) * (p[i] - e[i]);
            if (16 * ssd <= 40 * 8)
                brute = 1;
        }
        int n = d.n[s];
        int ins = mmp_dict_insert(&d, s, p);
        assert_int_equal(ins, !brute);
        assert_int_equal(d.n[s], n + ins);
    }
    /* the sorted sums are sorted and a permutation of the ids */
    char seen[4096] = {0};
    for (int k = 0; k < d.n[s]; k++) {
        if (k)
            assert_true(d.sorted_sum[s][k - 1] <= d.sorted_sum[s][k]);
        seen[d.sorted_id[s][k]]++;
    }
    for (int k = 0; k < d.n[s]; k++)
        assert_int_equal(seen[k], 1);
    mmp_dict_free(&d);
}

/* 16 * ||p - e||^2 <= limit for some element e of scale s: the format's
 * rule, element by element. */
static int brute_redundant(const mmp_dict *d, int s, const int32_t *p, int64_t limit)
{
    const int area = mmp_scale_area(s);
    for (int k = 0; k < d->n[s]; k++) {
        const int32_t *e = mmp_dict_elem(d, s, k);
        int64_t ssd = 0;
        for (int i = 0; i < area; i++)
            ssd += ((int64_t)p[i] - e[i]) * ((int64_t)p[i] - e[i]);
        if (16 * ssd <= limit)
            return 1;
    }
    return 0;
}

/*
 * Every scale, patterns made close to the threshold: an element already
 * there, or a smooth random pattern, plus noise or an offset over one part
 * of about the threshold's size. With 8-bit residuals (a threshold, and
 * exact duplicates only), and with samples beyond 2^20,
 * where the index's sums would be too large and it falls back to the
 * samples. Every insert decision must be the brute force's.
 */
static void test_redundancy_every_scale_matches_brute_force(void **st)
{
    (void)st;
    for (int cfg = 0; cfg < 3; cfg++) {
        const int wide = cfg == 2;
        const uint32_t redund_q4 = cfg == 0 ? 40 : cfg == 1 ? 0 : 4000;
        const int32_t amp = wide ? 1 << 21 : 200;
        int inserted = 0, rejected = 0;
        for (int s = 0; s < MMP_NSCALES; s++) {
            const int a = s / MMP_NLOG, b = s % MMP_NLOG, area = 1 << (a + b);
            const int64_t limit = (int64_t)redund_q4 * area;
            mmp_dict d;
            assert_int_equal(mmp_dict_init(&d, 600, 255, redund_q4), 0);
            for (int it = 0; it < 900 && d.n[s] < d.cap; it++) {
                int32_t p[256];
                if (d.n[s] > 63 && xorshift32() % 2) {
                    memcpy(p, mmp_dict_elem(&d, s, 63 + (int)(xorshift32() % (uint32_t)(d.n[s] - 63))),
                           sizeof(int32_t) * area);
                } else {
                    const int32_t base = (int32_t)(xorshift32() % (2u * amp + 1)) - amp;
                    const int32_t gy = (int32_t)(xorshift32() % 41) - 20, gx = (int32_t)(xorshift32() % 41) - 20;
                    for (int y = 0; y < 1 << a; y++)
                        for (int x = 0; x < 1 << b; x++)
                            p[(y << b) + x] = base + (wide ? 4096 : 1) * (gy * y + gx * x);
                }
                /* Noise over the whole pattern, or a constant offset, of about
                 * the size that the threshold allows, over the top-left
                 * quarter, row 0, column 0, the top half or the left half:
                 * the partial sums behind the index see such an offset in
                 * full. */
                const int where = (int)(xorshift32() % 6);
                const int rows = where == 1 || where == 4 ? (1 << a) / 2 + (a == 0)
                                 : where == 2           ? 1
                                                        : 1 << a;
                const int cols = where == 1 || where == 5 ? (1 << b) / 2 + (b == 0)
                                 : where == 3           ? 1
                                                        : 1 << b;
                int32_t c = 0; /* 16 c^2 rows cols near limit, times 0.5 to 2 */
                const int64_t goal = limit * (int64_t)(2 + xorshift32() % 15) / 8;
                while (16 * (int64_t)(c + 1) * (c + 1) * rows * cols <= goal)
                    c++;
                if (xorshift32() % 2)
                    c = -c;
                const uint32_t span = wide ? 65 : 5;
                for (int y = 0; y < 1 << a; y++)
                    for (int x = 0; x < 1 << b; x++) {
                        if (where == 0)
                            p[(y << b) + x] += (int32_t)(xorshift32() % span) - (int32_t)(span / 2);
                        else if (y < rows && x < cols)
                            p[(y << b) + x] += c;
                    }
                const int want = !brute_redundant(&d, s, p, limit);
                const int n = d.n[s];
                const int got = mmp_dict_insert(&d, s, p);
                if (got != want)
                    fail_msg("scale %d (%dx%d), pattern %d: insert %d, brute force %d", s, 1 << a,
                             1 << b, it, got, want);
                assert_int_equal(d.n[s], n + got);
                inserted += got;
                rejected += !got;
            }
            mmp_dict_free(&d);
        }
        /* both outcomes were common */
        assert_true(inserted > 1000);
        assert_true(rejected > 1000);
    }
}

/* mmp_dict_repeat says 1 exactly for a pattern of the same shape and
 * samples as one given before; shapes of one area with the same samples
 * (1x4, 2x2, 4x1) are different patterns. */
static void test_repeat_finds_exact_repeats(void **st)
{
    (void)st;
    enum { NPAT = 4000 };
    static int32_t pats[NPAT][16];
    static int pa[NPAT], pb[NPAT];
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, 256, 255, 16), 0);
    int repeats = 0;
    for (int k = 0; k < NPAT; k++) {
        const int area_log = (int)(xorshift32() % 5);
        pa[k] = (int)(xorshift32() % (uint32_t)(area_log + 1));
        pb[k] = area_log - pa[k];
        for (int i = 0; i < 1 << area_log; i++)
            pats[k][i] = (int32_t)(xorshift32() % 3) - 1;
        int want = 0;
        for (int j = 0; j < k && !want; j++)
            want = pa[j] == pa[k] && pb[j] == pb[k] &&
                   !memcmp(pats[j], pats[k], sizeof(int32_t) << area_log);
        assert_int_equal(mmp_dict_repeat(&d, pats[k], pa[k], pb[k]), want);
        repeats += want;
    }
    assert_true(repeats > NPAT / 4 && repeats < NPAT - 500);
    mmp_dict_free(&d);
}

/* Skipping the repeats leaves the dictionary as offering them does, at a
 * capacity that fills some scales and with or without a threshold. */
static void test_skipping_repeats_same_state(void **st)
{
    (void)st;
    for (uint32_t redund_q4 = 0; redund_q4 <= 24; redund_q4 += 24) {
        mmp_dict d1, d2;
        assert_int_equal(mmp_dict_init(&d1, 100, 255, redund_q4), 0);
        assert_int_equal(mmp_dict_init(&d2, 100, 255, redund_q4), 0);
        int32_t pool[64][256];
        int pa[64], pb[64];
        for (int k = 0; k < 64; k++) {
            pa[k] = (int)(xorshift32() % 5);
            pb[k] = (int)(xorshift32() % 5);
            for (int i = 0; i < 1 << (pa[k] + pb[k]); i++)
                pool[k][i] = (int32_t)(xorshift32() % 41) - 20;
        }
        int skipped = 0;
        for (int it = 0; it < 600; it++) {
            const int k = (int)(xorshift32() % 64);
            mmp_dict_update(&d1, pool[k], pa[k], pb[k]);
            if (mmp_dict_repeat(&d2, pool[k], pa[k], pb[k]))
                skipped++;
            else
                mmp_dict_update(&d2, pool[k], pa[k], pb[k]);
        }
        assert_true(skipped > 300);
        int full = 0;
        for (int s = 0; s < MMP_NSCALES; s++) {
            assert_int_equal(d1.n[s], d2.n[s]);
            assert_memory_equal(d1.data[s], d2.data[s], sizeof(int32_t) * d1.n[s] * mmp_scale_area(s));
            assert_memory_equal(d1.sorted_id[s], d2.sorted_id[s], sizeof(int32_t) * d1.n[s]);
            full += d1.n[s] == 100;
        }
        assert_true(full > 0);
        mmp_dict_free(&d1);
        mmp_dict_free(&d2);
    }
}

static void test_capacity(void **st)
{
    (void)st;
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, 64, 255, 0), 0);
    int s = mmp_scale(0, 0);
    int inserted = 0;
    for (int v = -255; v <= 255; v++) {
        int32_t p = v;
        inserted += mmp_dict_insert(&d, s, &p);
    }
    assert_int_equal(d.n[s], 64);
    assert_int_equal(inserted, 64 - 63);
    mmp_dict_free(&d);
}

/* Two dictionaries given the same updates hold the same elements. */
static void test_same_updates_same_state(void **st)
{
    (void)st;
    mmp_dict d1, d2;
    assert_int_equal(mmp_dict_init(&d1, 300, 255, 24), 0);
    assert_int_equal(mmp_dict_init(&d2, 300, 255, 24), 0);
    for (int it = 0; it < 400; it++) {
        int a = xorshift32() % 5, b = xorshift32() % 5;
        int32_t p[256];
        for (int i = 0; i < (1 << (a + b)); i++)
            p[i] = (int32_t)(xorshift32() % 101) - 50;
        mmp_dict_update(&d1, p, a, b);
        mmp_dict_update(&d2, p, a, b);
    }
    int grew = 0;
    for (int s = 0; s < MMP_NSCALES; s++) {
        assert_int_equal(d1.n[s], d2.n[s]);
        assert_memory_equal(d1.data[s], d2.data[s], sizeof(int32_t) * d1.n[s] * mmp_scale_area(s));
        grew += d1.n[s] > 63;
        assert_true(d1.n[s] <= 300);
    }
    assert_int_equal(grew, MMP_NSCALES);
    mmp_dict_free(&d1);
    mmp_dict_free(&d2);
}

/* Updating scale by scale, scales in any order, or width by width (as
 * mmp_apply_updates does on several threads), gives the dictionary of
 * pattern-by-pattern updates. */
static void test_scale_by_scale_updates(void **st)
{
    (void)st;
    enum { NPAT = 300 };
    static int32_t pats[NPAT][256];
    int pa[NPAT], pb[NPAT];
    for (int k = 0; k < NPAT; k++) {
        pa[k] = xorshift32() % 5;
        pb[k] = xorshift32() % 5;
        for (int i = 0; i < (1 << (pa[k] + pb[k])); i++)
            pats[k][i] = (int32_t)(xorshift32() % 61) - 30;
    }
    mmp_dict d1, d2, d3;
    assert_int_equal(mmp_dict_init(&d1, 200, 255, 16), 0);
    assert_int_equal(mmp_dict_init(&d2, 200, 255, 16), 0);
    assert_int_equal(mmp_dict_init(&d3, 200, 255, 16), 0);
    for (int k = 0; k < NPAT; k++)
        mmp_dict_update(&d1, pats[k], pa[k], pb[k]);
    for (int s = MMP_NSCALES - 1; s >= 0; s--) /* scales backwards */
        for (int k = 0; k < NPAT; k++)
            mmp_dict_update_scale(&d2, pats[k], pa[k], pb[k], s);
    for (int db = 0; db < MMP_NLOG; db++) /* a width at a time */
        for (int k = 0; k < NPAT; k++)
            mmp_dict_update_width(&d3, pats[k], pa[k], pb[k], (db * 2) % MMP_NLOG);
    int full = 0;
    for (int s = 0; s < MMP_NSCALES; s++) {
        assert_int_equal(d1.n[s], d2.n[s]);
        assert_memory_equal(d1.data[s], d2.data[s], sizeof(int32_t) * d1.n[s] * mmp_scale_area(s));
        assert_memory_equal(d1.sorted_id[s], d2.sorted_id[s], sizeof(int32_t) * d1.n[s]);
        assert_int_equal(d1.n[s], d3.n[s]);
        assert_memory_equal(d1.data[s], d3.data[s], sizeof(int32_t) * d1.n[s] * mmp_scale_area(s));
        full += d1.n[s] == 200;
    }
    assert_true(full > 0); /* the capacity rule was exercised too */
    mmp_dict_free(&d1);
    mmp_dict_free(&d2);
    mmp_dict_free(&d3);
}

static void test_redund_for_lambda(void **st)
{
    (void)st;
    assert_int_equal(mmp_redund_for_lambda(0), 0);
    /* monotone in lambda */
    uint32_t prev = 0;
    for (uint32_t l = 0; l < 1000 * 256; l += 997) {
        uint32_t r = mmp_redund_for_lambda(l);
        assert_true(r >= prev);
        prev = r;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initial),
        cmocka_unit_test(test_initial_as_inserted),
        cmocka_unit_test(test_redundancy_every_scale_matches_brute_force),
        cmocka_unit_test(test_repeat_finds_exact_repeats),
        cmocka_unit_test(test_skipping_repeats_same_state),
        cmocka_unit_test(test_scale_by_scale_updates),
        cmocka_unit_test(test_rescale_constant_and_identity),
        cmocka_unit_test(test_rescale_known_values),
        cmocka_unit_test(test_rescale_matches_formulas),
        cmocka_unit_test(test_redundancy),
        cmocka_unit_test(test_redundancy_matches_brute_force),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_same_updates_same_state),
        cmocka_unit_test(test_redund_for_lambda),
    };
    return cmocka_run_group_tests_name("dict", tests, NULL, NULL);
}
