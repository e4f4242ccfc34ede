/*
 * The transform residual (docs/format.md 4.4, mmp/common/transform.h): the matrix
 * against the rule that defines it, the inverse transform against a naive
 * 128-bit re-implementation of the spec and against known answers, the
 * encoder's forward transform against the matrix product, the pricing of
 * a leaf's modes in any order against pricing each exactly, the
 * coefficient syntax round trip and its rate estimate, and whole files:
 * decoder output equal to the encoder's reconstruction on crops of every
 * image (8 and 16 bits), and the same bytes from seq and omp.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/container.h"
#include "common/rangecoder.h"
#include "mmp/mmp.h"
#include "mmp/enc/search_tx.h"
#include "mmp/common/transform.h"
#include "util.h"

/* test_inverse_known_answers: FNV-1a of the inverse transforms it draws. */
#define TX_CHECKSUM 0x160ec89a8bcdd429ull
/* test_levels_known_bytes: FNV-1a and length of the bytes it codes. */
#define LEVELS_CHECKSUM 0x3b2130e394133d99ull
#define LEVELS_BYTES 52057

/* ------------------------------------------------------------ the matrix */

/* docs/format.md 4.4: row 0 all 64; else M[q] or -M[32 - q] for
 * q = min(p, 64 - p), p = (2n + 1) k mod 64. */
static void test_matrix_rule(void **state)
{
    (void)state;
    static const int mag[17] = {64, 90, 89, 87, 83, 80, 75, 70, 64, 57, 50, 43, 36, 25, 18, 9, 0};
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 16; n++) {
            int p = (2 * n + 1) * k % 64, q = p < 64 - p ? p : 64 - p;
            int v = k == 0 ? 64 : q <= 16 ? mag[q] : -mag[32 - q];
            if (mmp_tx_matrix16[k][n] != v)
                fail_msg("matrix[%d][%d] = %d, the rule gives %d", k, n, mmp_tx_matrix16[k][n], v);
        }
    /* Nearly orthogonal at every size: rows of norm 64^2 N within 0.2 %,
     * cross products below 0.3 % of it. */
    for (int a = 2; a <= 4; a++) {
        const int n = 1 << a, st = 16 >> a;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                long dot = 0;
                for (int x = 0; x < n; x++)
                    dot += (long)mmp_tx_matrix16[i * st][x] * mmp_tx_matrix16[j * st][x];
                const long norm = 4096L * n;
                if (i == j)
                    assert_true(labs(dot - norm) * 500 <= norm);
                else
                    assert_true(labs(dot) * 333 <= norm);
            }
    }
}

static void test_steps(void **state)
{
    (void)state;
    assert_int_equal(mmp_tx_step_q4(1), 16);
    assert_int_equal(mmp_tx_step_q4(2), 17);
    assert_int_equal(mmp_tx_step_q4(8), 29);
    assert_int_equal(mmp_tx_step_q4(9), 32);
    assert_int_equal(mmp_tx_step_q4(MMP_TX_MAX_QI), (int64_t)29 << 19);
    for (int qi = 2; qi <= MMP_TX_MAX_QI; qi++)
        assert_true(mmp_tx_step_q4(qi) > mmp_tx_step_q4(qi - 1));
    assert_int_equal(mmp_tx_leaf_step(16, 2, 2), 16);
    assert_int_equal(mmp_tx_leaf_step(16, 2, 3), (16 * 181 + 64) >> 7);
    assert_int_equal(mmp_tx_leaf_step(1000, 4, 3), (1000 * 181 + 64) >> 7);
}

/* ------------------------------------------------------------ the inverse */

/* The spec's formula in 128 bits, in the other order (rows first). */
static void naive_inverse(const int32_t *level, int a, int b, int64_t step_q4, int32_t maxval,
                          int32_t *res)
{
    const int h = 1 << a, w = 1 << b, sh = 16 >> a, sw = 16 >> b;
    const int shift = 16 + (a + b + 1) / 2;
    const int64_t step = (a + b) % 2 ? (step_q4 * 181 + 64) / 128 : step_q4;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            __int128 acc = 0;
            for (int l = 0; l < w; l++) {
                __int128 col = 0;
                for (int k = 0; k < h; k++) {
                    __int128 d = (__int128)level[k * w + l] * step;
                    const __int128 lim = (__int128)1 << 31;
                    d = d > lim ? lim : d < -lim ? -lim : d;
                    col += d * mmp_tx_matrix16[k * sh][y];
                }
                acc += col * mmp_tx_matrix16[l * sw][x];
            }
            acc += (__int128)1 << (shift - 1);
            /* floor division by 2^shift, spelt out */
            const __int128 p = (__int128)1 << shift;
            __int128 q = acc / p;
            if (acc % p != 0 && acc < 0)
                q -= 1;
            res[y * w + x] = (int32_t)(q > maxval ? maxval : q < -maxval ? -maxval : q);
        }
}

/* Levels of one of several kinds: sparse small, dense, the largest, one DC. */
static void draw_levels(int32_t *lv, int n, int kind)
{
    for (int i = 0; i < n; i++) {
        switch (kind) {
        case 0: lv[i] = rng_below(4) ? 0 : rng_range(-3, 3); break;
        case 1: lv[i] = rng_range(-200, 200); break;
        case 2: lv[i] = rng_below(2) ? MMP_TX_MAX_LEVEL : -MMP_TX_MAX_LEVEL; break;
        case 3: lv[i] = rng_below(3) ? 0 : rng_range(-MMP_TX_MAX_LEVEL, MMP_TX_MAX_LEVEL); break;
        default: lv[i] = i == 0 ? rng_range(-50, 50) : 0; break;
        }
    }
}

static void test_inverse_exact(void **state)
{
    (void)state;
    rng_seed(15);
    const int qis[] = {1, 2, 9, 30, 57, 100, MMP_TX_MAX_QI};
    const int32_t maxvals[] = {1, 255, 1023, 65535};
    int32_t lv[256], got[256], want[256];
    for (int a = 2; a <= 4; a++)
        for (int b = 2; b <= 4; b++)
            for (int t = 0; t < 60; t++) {
                const int n = 1 << (a + b);
                const int64_t step = mmp_tx_step_q4(qis[t % 7]);
                const int32_t mv = maxvals[t / 7 % 4];
                draw_levels(lv, n, t % 5);
                mmp_tx_inverse(lv, a, b, step, mv, got, 1 << b);
                naive_inverse(lv, a, b, step, mv, want);
                for (int i = 0; i < n; i++)
                    if (got[i] != want[i])
                        fail_msg("%dx%d kind %d step %lld maxval %d: sample %d is %d, want %d",
                                 1 << a, 1 << b, t % 5, (long long)step, mv, i, got[i], want[i]);
            }
}

/* The encoder's forward transform (mmp_tx_forward, by even and odd halves)
 * is the matrix product T_h r T_w^T, every coefficient, on random residuals
 * up to the largest (|r| < 2^17). */
static void test_forward_is_matrix_product(void **state)
{
    (void)state;
    rng_seed(16);
    int32_t r[256];
    int64_t f[256], g[256];
    for (int a = 2; a <= 4; a++)
        for (int b = 2; b <= 4; b++)
            for (int t = 0; t < 40; t++) {
                const int h = 1 << a, w = 1 << b, lim = t % 2 ? 255 : (1 << 17) - 1;
                for (int i = 0; i < h * w; i++)
                    r[i] = rng_range(-lim, lim);
                mmp_tx_forward(r, a, b, f);
                for (int y = 0; y < h; y++)
                    for (int l = 0; l < w; l++) {
                        int64_t acc = 0;
                        for (int x = 0; x < w; x++)
                            acc += (int64_t)r[y * w + x] * mmp_tx_matrix16[l * (16 >> b)][x];
                        g[y * w + l] = acc;
                    }
                for (int k = 0; k < h; k++)
                    for (int l = 0; l < w; l++) {
                        int64_t acc = 0;
                        for (int y = 0; y < h; y++)
                            acc += mmp_tx_matrix16[k * (16 >> a)][y] * g[y * w + l];
                        if (f[k * w + l] != acc)
                            fail_msg("%dx%d draw %d: coefficient (%d, %d) is %lld, want %lld",
                                     h, w, t, k, l, (long long)f[k * w + l], (long long)acc);
                    }
            }
}

/*
 * mmp_tx_zero_sse: a residual of less energy has every coefficient below
 * half a level (2 |F| < the level's unit), so the search may skip its
 * transform. Tried with the residuals that come nearest, a basis function
 * of the transform (and its sign flips, and random residuals) scaled to just
 * under the bound; and the bound is no more than 3 % below the one the
 * matrices' norms (about 64 sqrt(n)) would give, so that it spares work.
 */
static void test_zero_sse(void **state)
{
    (void)state;
    rng_seed(23);
    static const int qis[] = {1, 9, 24, 40, 56, 72, 88, 120, 160};
    int tried = 0;
    for (int a = 2; a <= 4; a++)
        for (int b = 2; b <= 4; b++)
            for (size_t q = 0; q < sizeof qis / sizeof qis[0]; q++) {
                const int h = 1 << a, w = 1 << b, area = h * w;
                const int64_t step_q4 = mmp_tx_step_q4(qis[q]);
                const int64_t den = mmp_tx_leaf_step(step_q4, a, b) << (8 + ((a + b) >> 1));
                const int64_t lim = mmp_tx_zero_sse(step_q4, a, b);
                const double ideal = (double)den * (double)den /
                                     (4.0 * 4096.0 * 4096.0 * (double)area);
                if (!((double)lim <= ideal && (double)lim >= 0.97 * ideal - 1))
                    fail_msg("%dx%d qi %d: bound %lld, norms give %.1f", h, w, qis[q],
                             (long long)lim, ideal);
                for (int k = 0; k < h && lim > 1; k++)
                    for (int l = 0; l < w; l++)
                        for (int kind = 0; kind < 3; kind++) {
                            double base[256], e = 0;
                            for (int y = 0; y < h; y++)
                                for (int x = 0; x < w; x++) {
                                    double v = (double)mmp_tx_matrix16[k * (16 >> a)][y] *
                                               mmp_tx_matrix16[l * (16 >> b)][x];
                                    if (kind == 1 && rng_below(8) == 0)
                                        v = -v;
                                    if (kind == 2)
                                        v = rng_range(-100, 100);
                                    base[y * w + x] = v;
                                    e += v * v;
                                }
                            if (e == 0)
                                continue;
                            /* truncated towards zero: the energy stays under lim */
                            const double sc = sqrt((double)(lim - 1) / e);
                            int32_t r[256];
                            int64_t f[256], sse = 0, fmax = 0;
                            int big = 0;
                            for (int i = 0; i < area; i++) {
                                const double v = sc * base[i];
                                big |= v > 65535 || v < -65535;
                                r[i] = (int32_t)v;
                                sse += (int64_t)r[i] * r[i];
                            }
                            if (big)
                                continue; /* past any sample range */
                            assert_true(sse < lim);
                            mmp_tx_forward(r, a, b, f);
                            for (int i = 0; i < area; i++) {
                                const int64_t m = f[i] < 0 ? -f[i] : f[i];
                                fmax = m > fmax ? m : fmax;
                            }
                            if (!(2 * fmax < den))
                                fail_msg("%dx%d qi %d basis (%d, %d) kind %d: energy %lld under "
                                         "%lld, yet |F| %lld reaches half of %lld",
                                         h, w, qis[q], k, l, kind, (long long)sse,
                                         (long long)lim, (long long)fmax, (long long)den);
                            tried++;
                        }
            }
    print_message("%d residuals just under the bound\n", tried);
    assert_true(tried > 1000);
}

/*
 * mmp_tx_price_modes in any order gives the first mode of least J and its
 * levels, as pricing every mode exactly does; a mode priced under a bound
 * gets either its exact J or one that loses to the winner's. Every draw
 * holds two modes of exactly equal J and different levels: the residual and
 * its mirror image (the matrices' rows are even or odd, the sign is one
 * bit, the contexts see magnitudes), so that the tie rule is tested both
 * ways round, and draws alternate which of them the others beat.
 */
#define PM_MODES 8
static void test_price_modes_any_order(void **state)
{
    (void)state;
    rng_seed(21);
    mmp_tx_models models;
    mmp_tx_costs costs;
    mmp_tx_scans scans;
    mmp_tx_models_init(&models);
    mmp_tx_costs_of(&models, &costs);
    mmp_tx_scans_init(&scans);
    int ties = 0, bounded = 0, rival_wins = 0;
    for (int draw = 0; draw < 72; draw++) {
        const int a = 2 + draw % 3, b = 2 + (draw / 3) % 3, h = 1 << a, w = 1 << b;
        const int area = h * w;
        const int64_t lambda_q8 = (int64_t)(draw % 2 ? 10 : 60) * 256;
        const mmp_tx_search t = {.cost = &costs,
                                 .scans = &scans,
                                 .lambda_q8 = lambda_q8,
                                 .step_q4 = mmp_tx_step_q4(mmp_tx_qi_for_lambda(lambda_q8)),
                                 .maxval = 255,
                                 .rdoq_only = draw % 4 == 3};
        int32_t orig[256], r[256], pred[PM_MODES * 256];
        for (int i = 0; i < area; i++)
            orig[i] = rng_range(100, 155);
        /* A residual with a strong odd (left-right) part, so that its
         * mirror image's levels differ in sign. */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                r[y * w + x] = (2 * x - (w - 1)) * 40 / w + rng_range(-3, 3);
        const int m1 = 1 + draw % 3, m2 = 4 + draw % 4; /* the mirrored pair */
        for (int m = 0; m < PM_MODES; m++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    const int i = y * w + x;
                    int32_t v = r[i] + rng_range(-20, 20); /* worse than the pair */
                    if (m == m1)
                        v = r[i];
                    else if (m == m2)
                        v = r[y * w + (w - 1 - x)];
                    pred[m * area + i] = orig[i] - v;
                }
        int64_t head[PM_MODES], exact[PM_MODES];
        int32_t lv[PM_MODES][256], rs[PM_MODES][256];
        for (int m = 0; m < PM_MODES; m++)
            head[m] = m == m2 ? 0 : (int64_t)rng_below(3) * lambda_q8 * 256;
        head[m1] = head[m2];
        int want = -1;
        for (int m = 0; m < PM_MODES; m++) {
            exact[m] = mmp_tx_search_leaf(&t, orig, pred + m * area, NULL, a, b, INT64_MAX,
                                          lv[m], rs[m]) +
                       head[m];
            if (want < 0 || exact[m] < exact[want])
                want = m;
        }
        assert_int_equal(exact[m1], exact[m2]);
        assert_memory_not_equal(lv[m1], lv[m2], sizeof(int32_t) * area);
        ties += want == m1;
        for (int o = 0; o < 6; o++) {
            int order[PM_MODES];
            for (int k = 0; k < PM_MODES; k++)
                order[k] = o == 0 ? k : PM_MODES - 1 - k;
            if (o >= 2) /* random orders, and the mirror image first */
                for (int k = PM_MODES - 1; k > 0; k--) {
                    const int j = (int)rng_below((uint32_t)k + 1), tmp = order[k];
                    order[k] = order[j];
                    order[j] = tmp;
                }
            if (o == 5)
                for (int k = 0; k < PM_MODES; k++)
                    if (order[k] == m2) {
                        order[k] = order[0];
                        order[0] = m2;
                    }
            int32_t level[256], res[256], best_level[256], best_res[256];
            int64_t jtx[PM_MODES];
            /* A rival (the dictionary's best) just before, at or just after
             * the winner's J, at a mode before or after it; the transform
             * wins where (J, m) comes first, a tree before its transform. */
            for (int rv = 0; rv < 6; rv++) {
                const int64_t rj = exact[want] - 1 + rv % 3;
                const int rm = rv < 3 ? (want + 1) % PM_MODES : (want + PM_MODES - 1) % PM_MODES;
                const int tx_wins = exact[want] < rj || (exact[want] == rj && want < rm);
                const int g = mmp_tx_price_modes(&t, orig, pred, NULL, a, b, order, PM_MODES,
                                                 head, rj, rm, level, res, best_level, best_res,
                                                 jtx);
                const int g_wins = jtx[g] < rj || (jtx[g] == rj && g < rm);
                if (g_wins != tx_wins)
                    fail_msg("%dx%d draw %d order %d rival %d: transform wins %d, want %d", h,
                             w, draw, o, rv, g_wins, tx_wins);
                rival_wins += !tx_wins;
                if (!tx_wins)
                    continue;
                if (g != want)
                    fail_msg("%dx%d draw %d order %d rival %d: mode %d, want %d", h, w, draw, o,
                             rv, g, want);
                assert_int_equal(jtx[g], exact[want]);
                assert_memory_equal(best_level, lv[want], sizeof(int32_t) * area);
                assert_memory_equal(best_res, rs[want], sizeof(int32_t) * area);
            }
            const int got = mmp_tx_price_modes(&t, orig, pred, NULL, a, b, order, PM_MODES, head,
                                               INT64_MAX, -1, level, res, best_level, best_res,
                                               jtx);
            if (got != want)
                fail_msg("%dx%d draw %d order %d: mode %d, want %d", h, w, draw, o, got, want);
            assert_memory_equal(best_level, lv[want], sizeof(int32_t) * area);
            assert_memory_equal(best_res, rs[want], sizeof(int32_t) * area);
            for (int m = 0; m < PM_MODES; m++) {
                if (jtx[m] == exact[m])
                    continue;
                bounded++;
                if (!(jtx[m] > exact[want] || (jtx[m] == exact[want] && m > want)))
                    fail_msg("%dx%d draw %d order %d: mode %d got J %lld (exact %lld), which "
                             "does not lose to mode %d's %lld",
                             h, w, draw, o, m, (long long)jtx[m], (long long)exact[m], want,
                             (long long)exact[want]);
            }
        }
    }
    /* The draws reached what they are for: the pair winning on a tie, and
     * modes priced under a bound. */
    print_message("%d of 72 draws won by the first of two equal modes; %d bounded prices; "
                  "the rival won %d of %d\n",
                  ties, bounded, rival_wins, 72 * 6 * 6);
    assert_true(ties >= 36);
    assert_true(bounded > 0);
    assert_true(rival_wins > 0 && rival_wins < 72 * 6 * 6);
}

/* Values worked out by hand from docs/format.md 4.4, and a checksum over
 * many: a change of a matrix entry, the rounding, the clamps or the step
 * table changes them. */
static void test_inverse_known_answers(void **state)
{
    (void)state;
    int32_t lv[256] = {0}, r[256];
    /* 4x4, step 1 (qi 1): DC level 4 is an orthonormal DC of 4, a flat 1:
     * (64 * 64 * 64 + 2^17) >> 18 = 1. Level 2: (131072 + 131072) >> 18 = 1;
     * level 1: 0; level -2: floor(-131072 + 131072) / 2^18 = 0. */
    const int dc[4][2] = {{4, 1}, {2, 1}, {1, 0}, {-2, 0}};
    for (int i = 0; i < 4; i++) {
        lv[0] = dc[i][0];
        mmp_tx_inverse(lv, 2, 2, 16, 255, r, 4);
        for (int k = 0; k < 16; k++)
            assert_int_equal(r[k], dc[i][1]);
    }
    /* 4x8 (odd): step (16 * 181 + 64) >> 7 = 23, DC level 10: u = 230 * 4096
     * = 942080, shift 19: (942080 + 262144) >> 19 = 2. */
    lv[0] = 10;
    mmp_tx_inverse(lv, 2, 3, 16, 255, r, 8);
    for (int k = 0; k < 32; k++)
        assert_int_equal(r[k], 2);
    /* The clamp to maxval. */
    lv[0] = 100000;
    mmp_tx_inverse(lv, 4, 4, mmp_tx_step_q4(80), 255, r, 16);
    assert_int_equal(r[0], 255);
    lv[0] = -100000;
    mmp_tx_inverse(lv, 4, 4, mmp_tx_step_q4(80), 255, r, 16);
    assert_int_equal(r[255], -255);
    /* FNV-1a over every shape at a few steps. */
    rng_seed(7);
    uint64_t h = 1469598103934665603ull;
    for (int a = 2; a <= 4; a++)
        for (int b = 2; b <= 4; b++)
            for (int t = 0; t < 8; t++) {
                const int n = 1 << (a + b);
                draw_levels(lv, n, t % 2);
                mmp_tx_inverse(lv, a, b, mmp_tx_step_q4(1 + 13 * t), 65535, r, 1 << b);
                for (int i = 0; i < n; i++) {
                    h ^= (uint32_t)r[i];
                    h *= 1099511628211ull;
                }
            }
    if (h != TX_CHECKSUM)
        fail_msg("inverse transform checksum %016llx, expected %016llx",
                 (unsigned long long)h, (unsigned long long)TX_CHECKSUM);
}

/* ------------------------------------------------------------ levels */

static void test_levels_round_trip(void **state)
{
    (void)state;
    rng_seed(3);
    mmp_tx_models me, md;
    mmp_tx_scans sc;
    mmp_tx_models_init(&me);
    mmp_tx_models_init(&md);
    mmp_tx_scans_init(&sc);
    enum { LEAVES = 3000 };
    static int32_t all[LEAVES][256];
    int shape[LEAVES][2];
    mmp_rc_enc enc;
    mmp_rc_enc_init(&enc);
    uint64_t estimate = 0;
    for (int k = 0; k < LEAVES; k++) {
        const int a = 2 + (int)rng_below(3), b = 2 + (int)rng_below(3), n = 1 << (a + b);
        shape[k][0] = a;
        shape[k][1] = b;
        const int kind = (int)rng_below(10);
        draw_levels(all[k], n, kind < 5 ? 0 : kind < 7 ? 1 : kind < 8 ? 3 : 4);
        if (kind == 9)
            memset(all[k], 0, sizeof(int32_t) * n);
        /* the estimate under the encoder's models as they are now */
        mmp_tx_costs c;
        mmp_tx_costs_of(&me, &c);
        estimate +=
            mmp_tx_code_levels(NULL, NULL, NULL, &c, all[k], a, b, mmp_tx_scan_of(&sc, a, b));
        mmp_tx_code_levels(&me, &enc, NULL, NULL, all[k], a, b, mmp_tx_scan_of(&sc, a, b));
    }
    assert_int_equal(mmp_rc_enc_finish(&enc), 0);
    /* the estimate within 2 % (plus the flush) of what was written: it
     * takes each leaf's models as they were before the leaf (as the search
     * does), while the coder adapts within the leaf */
    const double bits = 8.0 * (double)enc.len, est = (double)estimate / 256.0;
    if (est < bits * 0.98 - 40 || est > bits * 1.02 + 40)
        fail_msg("rate estimate %.0f bits, coded %.0f bits", est, bits);
    mmp_rc_dec dec;
    mmp_rc_dec_init(&dec, enc.buf, enc.len);
    for (int k = 0; k < LEAVES; k++) {
        int32_t got[256];
        const int a = shape[k][0], b = shape[k][1];
        mmp_tx_code_levels(&md, NULL, &dec, NULL, got, a, b, mmp_tx_scan_of(&sc, a, b));
        if (memcmp(got, all[k], sizeof(int32_t) << (a + b)))
            fail_msg("leaf %d (%dx%d) decodes differently", k, 1 << a, 1 << b);
    }
    assert_false(dec.overrun);
    mmp_rc_enc_free(&enc);
}

/* The coefficient syntax pinned: the bytes of a fixed set of leaves. A
 * change of a context, a binarisation or a model's start changes them,
 * which the round trip above cannot see (both sides would change alike). */
/*
 * mmp_tx_rate, the search's rate of a leaf's levels, is the cost direction
 * of mmp_tx_code_levels, cut short above `most`: the same value where that
 * is at most `most`, and more than `most` otherwise, under random costs
 * (each symbol's own), on every leaf shape and on levels of every kind.
 */
static void test_rate_is_syntax_cost(void **state)
{
    (void)state;
    rng_seed(23);
    mmp_tx_scans sc;
    mmp_tx_scans_init(&sc);
    for (int t = 0; t < 4000; t++) {
        mmp_tx_costs c;
        uint32_t *cw = (uint32_t *)&c;
        for (size_t i = 0; i < sizeof c / sizeof *cw; i++)
            cw[i] = (uint32_t)rng_below(t % 3 ? 3000 : 40);
        const int a = 2 + (int)rng_below(3), b = 2 + (int)rng_below(3), n = 1 << (a + b);
        const uint16_t *scan = mmp_tx_scan_of(&sc, a, b);
        int32_t lv[256];
        draw_levels(lv, n, t % 5);
        if (t % 7 == 0)
            memset(lv, 0, sizeof(int32_t) * n);
        int last = n - 1;
        while (last >= 0 && !lv[scan[last]])
            last--;
        const uint64_t want = mmp_tx_code_levels(NULL, NULL, NULL, &c, lv, a, b, scan);
        assert_true(mmp_tx_rate(&c, lv, a, b, scan, last, UINT64_MAX) == want);
        const uint64_t most = rng_below(2) ? want : rng_below((uint32_t)(want + 1));
        const uint64_t got = mmp_tx_rate(&c, lv, a, b, scan, last, most);
        if (want <= most ? got != want : got <= most)
            fail_msg("leaf %d (%dx%d): rate %llu under most %llu, syntax %llu", t, 1 << a,
                     1 << b, (unsigned long long)got, (unsigned long long)most,
                     (unsigned long long)want);
    }
}

static void test_levels_known_bytes(void **state)
{
    (void)state;
    rng_seed(11);
    mmp_tx_models m;
    mmp_tx_scans sc;
    mmp_tx_models_init(&m);
    mmp_tx_scans_init(&sc);
    mmp_rc_enc enc;
    mmp_rc_enc_init(&enc);
    for (int k = 0; k < 400; k++) {
        int32_t lv[256];
        const int a = 2 + k % 3, b = 2 + k / 3 % 3;
        draw_levels(lv, 1 << (a + b), k % 7 == 6 ? 3 : k % 4);
        mmp_tx_code_levels(&m, &enc, NULL, NULL, lv, a, b, mmp_tx_scan_of(&sc, a, b));
    }
    assert_int_equal(mmp_rc_enc_finish(&enc), 0);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < enc.len; i++) {
        h ^= enc.buf[i];
        h *= 1099511628211ull;
    }
    if (h != LEVELS_CHECKSUM || enc.len != LEVELS_BYTES)
        fail_msg("coefficient syntax: %zu bytes, checksum %016llx; expected %d, %016llx", enc.len,
                 (unsigned long long)h, LEVELS_BYTES, (unsigned long long)LEVELS_CHECKSUM);
    mmp_rc_enc_free(&enc);
}

/* The scan: each position once, diagonals in order, up-right in each. */
static void test_scan(void **state)
{
    (void)state;
    uint16_t s[256];
    mmp_tx_scan(2, 3, s);
    const uint16_t want[8] = {0, 8, 1, 16, 9, 2, 24, 17};
    assert_memory_equal(s, want, sizeof want);
    for (int a = 2; a <= 4; a++)
        for (int b = 2; b <= 4; b++) {
            const int n = 1 << (a + b);
            uint8_t seen[256] = {0};
            mmp_tx_scan(a, b, s);
            for (int i = 0; i < n; i++) {
                assert_true(s[i] < n);
                assert_false(seen[s[i]]);
                seen[s[i]] = 1;
                if (i > 0) {
                    const int y = s[i] >> b, x = s[i] & ((1 << b) - 1);
                    const int py = s[i - 1] >> b, px = s[i - 1] & ((1 << b) - 1);
                    assert_true(y + x > py + px || (y + x == py + px && y < py));
                }
            }
        }
}

/* ------------------------------------------------------------ files */

typedef struct files_arg {
    double lambda;
    int leaves_seen; /* files whose bytes differ from --dct off's */
} files_arg;

static void dct_settings(mmp_settings *s, double lambda, const char *engine, int threads, int dct)
{
    mmp_default_settings(s);
    s->lambda = lambda;
    s->engine = engine;
    s->threads = threads;
    s->head_start = 0; /* the engine named searches every step */
    s->dct = dct;
}

/* decode(encode(c)) is the encoder's reconstruction; the header says so. */
static void round_trip(const char *what, const mmp_image *c, void *arg)
{
    files_arg *fa = arg;
    mmp_settings s;
    dct_settings(&s, fa->lambda, "seq", 1, 1);
    uint8_t *buf = NULL, *off = NULL;
    size_t len = 0, offlen = 0;
    mmp_image recon = {0}, dec = {0};
    encode_settings_or_fail(&s, c, &buf, &len, &recon);
    assert_int_equal(get32(buf + MF_TOOLS) & MMP_TOOL_TRANSFORM, MMP_TOOL_TRANSFORM);
    char err[256] = "";
    if (mmp_decode(buf, len, &dec, err, sizeof err))
        fail_msg("%s lambda %g: %s", what, fa->lambda, err);
    assert_int_equal(dec.width, recon.width);
    if (memcmp(dec.pix, recon.pix, sizeof(uint16_t) * (size_t)c->width * c->height))
        fail_msg("%s lambda %g: the decoder's output is not the encoder's reconstruction", what,
                 fa->lambda);
    s.dct = 0;
    encode_settings_or_fail(&s, c, &off, &offlen, NULL);
    assert_int_equal(off[23], 0);
    fa->leaves_seen += len != offlen || memcmp(buf, off, len);
    free(buf);
    free(off);
    mmp_image_free(&recon);
    mmp_image_free(&dec);
}

static void test_files_round_trip(void **state)
{
    (void)state;
    const double lambdas[] = {3, 30, 300};
    for (int i = 0; i < 3; i++) {
        files_arg fa = {.lambda = lambdas[i]};
        const int n = for_each_image_crop(round_trip, &fa);
        assert_true(n >= 8);
        /* the transform is chosen somewhere at every lambda */
        assert_true(fa.leaves_seen > 0);
    }
    /* 16 bits: the largest samples through the same arithmetic. */
    mmp_image c16 = {0};
    camera_16bit_crop(&c16);
    files_arg fa = {.lambda = 10};
    round_trip("camera 16-bit", &c16, &fa);
    fa.lambda = 1000;
    round_trip("camera 16-bit", &c16, &fa);
    mmp_image_free(&c16);
}

static void same_bytes(const char *what, const mmp_image *c, void *arg)
{
    const double lambda = *(const double *)arg;
    mmp_settings s;
    uint8_t *ref = NULL, *buf = NULL;
    size_t reflen = 0, len = 0;
    dct_settings(&s, lambda, "seq", 1, 1);
    encode_settings_or_fail(&s, c, &ref, &reflen, NULL);
    dct_settings(&s, lambda, "omp", 2, 1);
    encode_settings_or_fail(&s, c, &buf, &len, NULL);
    assert_same_bytes(what, lambda, "omp -t 2", ref, reflen, buf, len);
    free(buf);
    buf = NULL;
    s.order = MMP_ORDER_WAVEFRONT;
    s.threads = 2;
    encode_settings_or_fail(&s, c, &buf, &len, NULL);
    uint8_t *wref = NULL;
    size_t wreflen = 0;
    dct_settings(&s, lambda, "seq", 1, 1);
    s.order = MMP_ORDER_WAVEFRONT;
    encode_settings_or_fail(&s, c, &wref, &wreflen, NULL);
    assert_same_bytes(what, lambda, "omp -t 2 wavefront", wref, wreflen, buf, len);
    free(wref);
    free(buf);
    free(ref);
}

static void test_seq_omp_same_bytes(void **state)
{
    (void)state;
    if (!mmp_engine_exists("omp"))
        skip();
    double lambda = 20;
    for_each_image_crop(same_bytes, &lambda);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_rule),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_inverse_exact),
        cmocka_unit_test(test_forward_is_matrix_product),
        cmocka_unit_test(test_zero_sse),
        cmocka_unit_test(test_price_modes_any_order),
        cmocka_unit_test(test_inverse_known_answers),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_levels_round_trip),
        cmocka_unit_test(test_levels_known_bytes),
        cmocka_unit_test(test_rate_is_syntax_cost),
        cmocka_unit_test(test_files_round_trip),
        cmocka_unit_test(test_seq_omp_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
