/*
 * Tests for the deblocking filter (filter/deblock.c, its edge map in
 * mmp/common/syntax.c, mmp/enc/deblock_fit.c; docs/format.md section 7.7):
 * a re-implementation of the section written from the document ("naive_*"
 * below: the edge map marked from coding leaves, the order of the
 * segments, the decisions, the reach, the corrections, the clamped reads,
 * the writes inside the plane, the bounds scaled with maxval) that the
 * library must match sample for sample on random planes and edge maps, odd
 * sizes, maxval 1 to 65535 and strides wider than the plane, with every
 * branch of the section taken, and at each decision's bound; the change in
 * squared error it reports; the edge map that coding and decoding blocks
 * leave, against the document's; and the encoder's fit, which never makes
 * the error worse. tests/test_deblock_files.c checks the syntax and whole
 * encodes.
 */
#include <math.h>

#include "common/rangecoder.h"
#include "filter/deblock.h"
#include "mmp/common/syntax.h"
#include "mmp/enc/deblock_fit.h"
#include "mmp/mmp.h"
#include "tests/util.h"

/* ---- section 7.7 from the document ---- */

/* The edge map as the document states it, per unit of 4 x 4 samples of
 * the padded plane: the base-2 logarithms lw, lh and the flags. */
typedef struct naive_map {
    int uw, uh;
    int *lw, *lh;
    int *left, *top;
} naive_map;

static void naive_map_init(naive_map *m, int pw, int ph)
{
    m->uw = pw / 4;
    m->uh = ph / 4;
    const size_t n = (size_t)m->uw * m->uh;
    m->lw = malloc(sizeof *m->lw * n);
    m->lh = malloc(sizeof *m->lh * n);
    m->left = calloc(n, sizeof *m->left);
    m->top = calloc(n, sizeof *m->top);
    assert_non_null(m->lw);
    assert_non_null(m->lh);
    assert_non_null(m->left);
    assert_non_null(m->top);
    for (size_t i = 0; i < n; i++)
        m->lw[i] = m->lh[i] = 4;
}

static void naive_map_free(naive_map *m)
{
    free(m->lw);
    free(m->lh);
    free(m->left);
    free(m->top);
}

/* "Each coding leaf of 2^a x 2^b samples (height x width) at (y, x) marks
 * every unit that holds any of its samples ..." */
static void naive_mark_leaf(naive_map *m, int y, int x, int a, int b)
{
    for (int yy = y; yy < y + (1 << a); yy++)
        for (int xx = x; xx < x + (1 << b); xx++) {
            const int u = (yy / 4) * m->uw + xx / 4;
            m->lw[u] = m->lw[u] < b ? m->lw[u] : b;
            m->lh[u] = m->lh[u] < a ? m->lh[u] : a;
            if (x % 4 == 0 && xx / 4 == x / 4)
                m->left[u] = 1;
            if (y % 4 == 0 && yy / 4 == y / 4)
                m->top[u] = 1;
        }
}

/* How often each branch of the section was taken, over a test. */
static struct {
    long segments, skipped, fallback, reach[9], lines, lines_left, clip0, clipmax, moved;
} naive_seen;

/* S(y, x): the nearest sample inside the w x h plane. */
static int64_t naive_s(const int32_t *pix, int stride, int w, int h, int y, int x)
{
    y = y < 0 ? 0 : y > h - 1 ? h - 1 : y;
    x = x < 0 ? 0 : x > w - 1 ? w - 1 : x;
    return pix[(long)y * stride + x];
}

/* floor(a / b), b > 0, towards minus infinity. */
static int64_t naive_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && a < 0)
        q--;
    return q;
}

static int64_t naive_clip3(int64_t lo, int64_t hi, int64_t v)
{
    return v < lo ? lo : v > hi ? hi : v;
}

typedef struct naive_plane {
    int32_t *pix;
    int stride, w, h;
    int64_t maxval, tc, beta; /* M, tc', beta' */
} naive_plane;

/* Sample t across the edge on line l: S(l, t) for vertical edges, S(t, l)
 * for horizontal ones. */
static int64_t naive_at(const naive_plane *pl, int vertical, int l, int t)
{
    return vertical ? naive_s(pl->pix, pl->stride, pl->w, pl->h, l, t)
                    : naive_s(pl->pix, pl->stride, pl->w, pl->h, t, l);
}

/* Writes v at (l, t) where that lies inside the plane; counts the clips. */
static void naive_put(naive_plane *pl, int vertical, int l, int t, int64_t v)
{
    const int y = vertical ? l : t, x = vertical ? t : l;
    if (y < 0 || y >= pl->h || x < 0 || x >= pl->w)
        return;
    naive_seen.clip0 += v < 0;
    naive_seen.clipmax += v > pl->maxval;
    v = naive_clip3(0, pl->maxval, v);
    naive_seen.moved += pl->pix[(long)y * pl->stride + x] != v;
    pl->pix[(long)y * pl->stride + x] = (int32_t)v;
}

/* "A segment": the 4 lines l0 .. l0 + 3 across the edge at e. */
static void naive_segment(naive_plane *pl, int vertical, int e, int l0, long n)
{
    const int nlines = vertical ? pl->h : pl->w;
    int k = n >= 16 ? 8 : n == 8 ? 4 : n == 4 ? 2 : 1;
    naive_seen.segments++;
    int64_t d = 0, flat = 0;
    for (int j = 0; j <= 3; j += 3) {
        const int l = l0 + j >= nlines ? nlines - 1 : l0 + j;
#define P(i) naive_at(pl, vertical, l, e - 1 - (i))
#define Q(i) naive_at(pl, vertical, l, e + (i))
        d += llabs(P(2) - 2 * P(1) + P(0)) + llabs(Q(2) - 2 * Q(1) + Q(0));
        if (k >= 4)
            flat += llabs(P(0) - 2 * P(k - 1) + P(2 * k - 2)) +
                    llabs(Q(0) - 2 * Q(k - 1) + Q(2 * k - 2));
#undef P
#undef Q
    }
    if (d >= pl->beta) {
        naive_seen.skipped++;
        return;
    }
    if (k >= 4 && (16 * d >= pl->beta || 8 * flat >= pl->beta)) {
        k = 2;
        naive_seen.fallback++;
    }
    naive_seen.reach[k]++;
    for (int l = l0; l <= l0 + 3; l++) {
        if (l >= nlines)
            break;
        naive_seen.lines++;
        int64_t p[8], q[8];
        for (int i = 0; i < 8; i++) {
            p[i] = naive_at(pl, vertical, l, e - 1 - i);
            q[i] = naive_at(pl, vertical, l, e + i);
        }
        const int64_t s = 9 * (q[0] - p[0]) - 3 * (q[1] - p[1]);
        if (llabs(s) >= 160 * pl->tc) {
            naive_seen.lines_left++;
            continue;
        }
        for (int i = 0; i < k; i++) {
            const int64_t c = naive_clip3(
                -pl->tc, pl->tc, naive_floor_div(s * (2 * k - 2 * i - 1) + 12 * k, 24 * k));
            naive_put(pl, vertical, l, e - 1 - i, p[i] + c);
            naive_put(pl, vertical, l, e + i, q[i] - c);
        }
    }
}

/* The filter of section 7.7 on the top-left w x h samples of pix. */
static void naive_deblock(const mmp_deblock *d, const naive_map *m, int32_t *pix, int stride, int w,
                          int h, int maxval)
{
    if (!d->enabled)
        return;
    naive_plane pl = {.pix = pix, .stride = stride, .w = w, .h = h, .maxval = maxval};
    pl.tc = naive_floor_div((int64_t)d->tc * maxval + 127, 255);
    pl.beta = naive_floor_div(4 * (int64_t)d->beta * maxval + 127, 255);
    if (pl.tc == 0)
        return;
    const int cw = (w + 3) / 4, ch = (h + 3) / 4;
    for (int uy = 0; uy <= ch - 1; uy++)
        for (int ux = 1; ux <= cw - 1; ux++) {
            const int u = uy * m->uw + ux;
            if (!m->left[u])
                continue;
            const int lw = m->lw[u - 1] < m->lw[u] ? m->lw[u - 1] : m->lw[u];
            naive_segment(&pl, 1, 4 * ux, 4 * uy, 1L << lw);
        }
    for (int uy = 1; uy <= ch - 1; uy++)
        for (int ux = 0; ux <= cw - 1; ux++) {
            const int u = uy * m->uw + ux;
            if (!m->top[u])
                continue;
            const int lh = m->lh[u - m->uw] < m->lh[u] ? m->lh[u - m->uw] : m->lh[u];
            naive_segment(&pl, 0, 4 * uy, 4 * ux, 1L << lh);
        }
}

/* ---- edge maps ---- */

/* The library's map of the same units (filter/deblock.h: lw in bits 0..3,
 * lh in bits 4..7 of size; the flags MMP_DB_LEFT and MMP_DB_TOP). */
static void to_edges(const naive_map *m, int pw, int ph, mmp_edges *e)
{
    assert_int_equal(mmp_edges_init(e, pw, ph), 0);
    assert_int_equal(e->uw, m->uw);
    assert_int_equal(e->uh, m->uh);
    for (int i = 0; i < m->uw * m->uh; i++) {
        /* A map with no boundary yet: sizes 4 x 4, no flags. */
        assert_int_equal(e->size[i], 4 | 4 << 4);
        assert_int_equal(e->flags[i], 0);
        e->size[i] = (uint8_t)(m->lw[i] | m->lh[i] << 4);
        e->flags[i] = (uint8_t)((m->left[i] ? MMP_DB_LEFT : 0) | (m->top[i] ? MMP_DB_TOP : 0));
    }
}

/* A w x h plane (multiples of 8) of 8 x 8 coding leaves: its map both ways. */
static void grid_map(naive_map *m, mmp_edges *e, int w, int h)
{
    naive_map_init(m, w, h);
    for (int y = 0; y < h; y += 8)
        for (int x = 0; x < w; x += 8)
            naive_mark_leaf(m, y, x, 3, 3);
    to_edges(m, w, h, e);
}

/* A residual tree of a 2^a x 2^b node at (y, x): leaves from 16 x 16 down
 * to 1 x 1 (docs/format.md section 4). */
static void random_residual(naive_map *m, int y, int x, int a, int b, int depth_bias)
{
    const int r = (int)rng_below(8);
    if ((a == 0 && b == 0) || r < 3 - depth_bias) {
        naive_mark_leaf(m, y, x, a, b);
        return;
    }
    if (b == 0 || (a > 0 && r % 2)) {
        random_residual(m, y, x, a - 1, b, depth_bias);
        random_residual(m, y + (1 << (a - 1)), x, a - 1, b, depth_bias);
    } else {
        random_residual(m, y, x, a, b - 1, depth_bias);
        random_residual(m, y, x + (1 << (b - 1)), a, b - 1, depth_bias);
    }
}

/* A prediction tree of a 2^a x 2^b node at (y, x): leaves of 4 to 16 a
 * side, each a transform leaf (a coding leaf itself) or a residual tree. */
static void random_prediction(naive_map *m, int y, int x, int a, int b, int split_bias,
                              int depth_bias)
{
    const int r = (int)rng_below(8);
    if ((a == 2 && b == 2) || r >= split_bias) {
        if (rng_below(2))
            naive_mark_leaf(m, y, x, a, b);
        else
            random_residual(m, y, x, a, b, depth_bias);
        return;
    }
    if (b == 2 || (a > 2 && r % 2)) {
        random_prediction(m, y, x, a - 1, b, split_bias, depth_bias);
        random_prediction(m, y + (1 << (a - 1)), x, a - 1, b, split_bias, depth_bias);
    } else {
        random_prediction(m, y, x, a, b - 1, split_bias, depth_bias);
        random_prediction(m, y, x + (1 << (b - 1)), a, b - 1, split_bias, depth_bias);
    }
}

/* A map as coding can make it: every 16 x 16 block of the padded plane
 * cut into coding leaves. */
static void real_map(naive_map *m)
{
    const int split_bias = (int)rng_below(6), depth_bias = (int)rng_below(4) - 1;
    for (int by = 0; by < m->uh / 4; by++)
        for (int bx = 0; bx < m->uw / 4; bx++)
            random_prediction(m, 16 * by, 16 * bx, 4, 4, split_bias, depth_bias);
}

/* Any flags and sizes (log2 sides 0 to 15). */
static void arbitrary_map(naive_map *m)
{
    for (int i = 0; i < m->uw * m->uh; i++) {
        m->lw[i] = (int)(rng_below(4) ? rng_below(5) : rng_below(16));
        m->lh[i] = (int)(rng_below(4) ? rng_below(5) : rng_below(16));
        m->left[i] = rng_below(3) != 0;
        m->top[i] = rng_below(3) != 0;
    }
}

/* ---- planes ---- */

/*
 * A w x h plane in rows `stride` apart (and one guard row above and below,
 * which no filter may write): in 8-bit steps scaled to maxval, smooth ramps
 * with a step at the boundary of each block of 4, 8 or 16 samples (the
 * coding's steps), noise, the odd large step (a real edge), saturated at 0
 * and maxval; or, now and then, noise alone. Returns the buffer; the plane
 * starts one row in. smooth: the same without steps nor noise (an
 * original for the squared error).
 */
static int32_t *random_plane(int w, int h, int stride, int maxval, int32_t **smooth)
{
    const size_t n = (size_t)stride * (h + 2);
    int32_t *buf = malloc(sizeof *buf * n), *sm = malloc(sizeof *sm * n);
    assert_non_null(buf);
    assert_non_null(sm);
    for (size_t i = 0; i < n; i++)
        buf[i] = sm[i] = (int32_t)(0x5a5a5a5a ^ i);
    const double scale = maxval / 255.0;
    const int noise_only = rng_below(12) == 0;
    const int bs = 4 << rng_below(3);
    const double gx = (rng_range(-40, 40)) / 10.0, gy = (rng_range(-40, 40)) / 10.0;
    const double base = rng_range(-60, 300);
    const int steps = (int)rng_below(4) * 4, noise = rng_below(3) ? (int)rng_below(3) : 0;
    const int nbw = (w + bs - 1) / bs + 1, nbh = (h + bs - 1) / bs + 1;
    double *off = malloc(sizeof *off * (size_t)nbw * nbh);
    assert_non_null(off);
    for (int i = 0; i < nbw * nbh; i++)
        off[i] = rng_below(16) == 0 ? rng_range(-120, 120) : rng_range(-steps, steps);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double v, s;
            if (noise_only) {
                v = (double)rng_below(256);
                s = 127;
            } else {
                s = base + gx * x + gy * y;
                v = s + off[(y / bs) * nbw + x / bs] + rng_range(-noise, noise);
            }
            long q = lround(v * scale), qs = lround(s * scale);
            q = q < 0 ? 0 : q > maxval ? maxval : q;
            qs = qs < 0 ? 0 : qs > maxval ? maxval : qs;
            buf[(long)(y + 1) * stride + x] = (int32_t)q;
            sm[(long)(y + 1) * stride + x] = (int32_t)qs;
        }
    free(off);
    *smooth = sm;
    return buf;
}

static int64_t plane_sse(const int32_t *a, const int32_t *b, int stride, int w, int h)
{
    int64_t s = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int64_t d = (int64_t)a[(long)y * stride + x] - b[(long)y * stride + x];
            s += d * d;
        }
    return s;
}

/* A size for a test plane: now and then 1 to 5, else up to `most`. */
static int random_side(int most)
{
    return rng_below(5) == 0 ? 1 + (int)rng_below(5) : 1 + (int)rng_below((size_t)most);
}

static int32_t *copy_of(const int32_t *p, size_t n)
{
    int32_t *c = malloc(sizeof *c * n);
    assert_non_null(c);
    memcpy(c, p, sizeof *c * n);
    return c;
}

/* ---- tests ---- */

/* mmp_deblock_apply against the document, and its change in squared
 * error; every branch of the section is taken on the way. */
static void test_matches_document(void **state)
{
    (void)state;
    rng_seed(0xdeb10c);
    memset(&naive_seen, 0, sizeof naive_seen);
    static const int maxvals[] = {255, 1023, 65535, 1, 255, 4095, 65535, 3};
    long compared = 0, unchanged = 0;
    for (int iter = 0; iter < 1500; iter++) {
        const int w = random_side(iter < 500 ? 24 : 70), h = random_side(iter < 500 ? 24 : 70);
        const int stride = w + (rng_below(2) ? (int)rng_below(7) : 0);
        const int maxval = maxvals[iter % 8];
        const int pw = (w + 15) / 16 * 16, ph = (h + 15) / 16 * 16;
        naive_map m;
        naive_map_init(&m, pw, ph);
        const int arbitrary = iter % 3 == 2;
        if (arbitrary)
            arbitrary_map(&m);
        else
            real_map(&m);
        mmp_edges e;
        to_edges(&m, pw, ph, &e);
        mmp_deblock d = {.enabled = rng_below(16) != 0,
                         .tc = rng_below(8) ? 1 + (int)rng_below(63) : (int)rng_below(4),
                         .beta = rng_below(8) ? (int)rng_below(64) : 63};
        if (iter % 50 == 7)
            d.tc = MMP_DB_MAX_INDEX;
        int32_t *orig, *before = random_plane(w, h, stride, maxval, &orig);
        const size_t n = (size_t)stride * (h + 2);
        int32_t *want = copy_of(before, n), *got = copy_of(before, n), *plain = copy_of(before, n);
        naive_deblock(&d, &m, want + stride, stride, w, h, maxval);
        const int64_t dsse =
            mmp_deblock_apply(&d, &e, got + stride, stride, w, h, maxval, orig + stride);
        for (size_t i = 0; i < n; i++)
            if (got[i] != want[i]) {
                const long y = (long)(i / (size_t)stride) - 1, x = (long)(i % (size_t)stride);
                fail_msg("%dx%d stride %d maxval %d, %s map, tc %d beta %d: sample (%ld, %ld) is "
                         "%d, the document says %d (was %d)",
                         w, h, stride, maxval, arbitrary ? "arbitrary" : "real", d.tc, d.beta, y, x,
                         got[i], want[i], before[i]);
            }
        /* The change in squared error it reports is the one it made. */
        const int64_t actual = plane_sse(orig + stride, got + stride, stride, w, h) -
                               plane_sse(orig + stride, before + stride, stride, w, h);
        assert_int_equal(dsse, actual);
        /* Without orig: the same samples, and 0. */
        assert_int_equal(mmp_deblock_apply(&d, &e, plain + stride, stride, w, h, maxval, NULL), 0);
        assert_memory_equal(plain, got, sizeof *got * n);
        /* Disabled, or tc' = 0: nothing changes, nothing is reported. */
        const int64_t tcp = ((int64_t)d.tc * maxval + 127) / 255;
        if (!d.enabled || tcp == 0) {
            assert_memory_equal(got, before, sizeof *got * n);
            assert_int_equal(dsse, 0);
            unchanged++;
        }
        compared++;
        free(orig);
        free(before);
        free(want);
        free(got);
        free(plain);
        mmp_edges_free(&e);
        naive_map_free(&m);
    }
    print_message("%ld planes (%ld left as they were): %ld segments, %ld skipped by d, reach "
                  "1/2/4/8 %ld/%ld/%ld/%ld, %ld long reaches down to 2; %ld lines, %ld left by "
                  "|s|; %ld samples moved, %ld clipped at 0, %ld at maxval\n",
                  compared, unchanged, naive_seen.segments, naive_seen.skipped, naive_seen.reach[1],
                  naive_seen.reach[2], naive_seen.reach[4], naive_seen.reach[8],
                  naive_seen.fallback, naive_seen.lines, naive_seen.lines_left, naive_seen.moved,
                  naive_seen.clip0, naive_seen.clipmax);
    /* Every branch of the section was taken. */
    assert_true(unchanged > 0);
    assert_true(naive_seen.skipped > 0);
    assert_true(naive_seen.fallback > 0);
    assert_true(naive_seen.reach[1] > 0);
    assert_true(naive_seen.reach[2] > 0);
    assert_true(naive_seen.reach[4] > 0);
    assert_true(naive_seen.reach[8] > 0);
    assert_true(naive_seen.lines_left > 0);
    assert_true(naive_seen.moved > 0);
    assert_true(naive_seen.clip0 > 0);
    assert_true(naive_seen.clipmax > 0);
}

/*
 * The bounds scaled with maxval: tc' = floor((tc M + 127) / 255) is 0 for
 * every tc at maxval 1 and for tc 0 at any maxval, and the filter then
 * leaves a plane full of steps as it is; tc' = 1 already moves it.
 */
static void test_nothing_to_do(void **state)
{
    (void)state;
    const int w = 32, h = 32;
    naive_map m;
    mmp_edges e;
    grid_map(&m, &e, w, h);
    static const int maxvals[] = {1, 3, 7, 255, 1023, 65535};
    for (size_t mi = 0; mi < sizeof maxvals / sizeof *maxvals; mi++) {
        const int maxval = maxvals[mi];
        int32_t *pix = malloc(sizeof *pix * w * h), *orig = malloc(sizeof *orig * w * h);
        assert_non_null(pix);
        assert_non_null(orig);
        /* Flat blocks one step apart: what the filter is for. */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                pix[y * w + x] = (maxval / 3 + (x / 8 + y / 8) % 2 * (maxval / 16 + 3));
                if (pix[y * w + x] > maxval)
                    pix[y * w + x] = maxval;
                orig[y * w + x] = maxval / 3;
            }
        int32_t *work = copy_of(pix, (size_t)w * h);
        for (int tc = 0; tc <= MMP_DB_MAX_INDEX; tc++) {
            const mmp_deblock d = {.enabled = 1, .tc = tc, .beta = MMP_DB_MAX_INDEX};
            const int64_t tcp = ((int64_t)tc * maxval + 127) / 255;
            memcpy(work, pix, sizeof *pix * w * h);
            const int64_t dsse = mmp_deblock_apply(&d, &e, work, w, w, h, maxval, orig);
            if (tcp == 0) {
                assert_int_equal(dsse, 0);
                assert_memory_equal(work, pix, sizeof *pix * w * h);
            } else if (maxval > 1) {
                /* Steps of 1/16 of the range between flat blocks are smoothed. */
                if (!memcmp(work, pix, sizeof *pix * w * h))
                    fail_msg("maxval %d tc %d (tc' %lld): nothing smoothed", maxval, tc,
                             (long long)tcp);
            }
            if (maxval == 1)
                assert_int_equal(tcp, 0);
        }
        /* Disabled: whatever tc and beta say. */
        const mmp_deblock off = {.enabled = 0, .tc = 40, .beta = 40};
        memcpy(work, pix, sizeof *pix * w * h);
        assert_int_equal(mmp_deblock_apply(&off, &e, work, w, w, h, maxval, orig), 0);
        assert_memory_equal(work, pix, sizeof *pix * w * h);
        free(work);
        free(orig);
        free(pix);
    }
    mmp_edges_free(&e);
    naive_map_free(&m);
}

/* One segment's 4 lines, all alike, across an edge between leaves 16
 * wide (or tall): p_i = near for i < from, else far; q_i = q. */
typedef struct threshold_case {
    const char *what;
    int tc, beta;
    int near, far, from, q;
    int reach; /* how far from the edge the document changes samples (c_7 = 0 for a
                * step of 10 at reach 8); 0: nowhere */
} threshold_case;

/*
 * Each test of a segment at its bound, at 8 bits (tc' = tc, beta' = 4 beta):
 * d = beta' leaves the segment, 16 d = beta' and 8 flat = beta' bring the
 * reach down to 2, |s| = 160 tc' leaves the line; one step inside each
 * bound does the other thing. Across a vertical and a horizontal edge; the
 * library as the document, and the samples changed as far from the edge
 * as the reach.
 */
static void test_thresholds(void **state)
{
    (void)state;
    static const threshold_case cases[] = {
        /* s = 9 * 80 - 3 * 80 = 480 = 160 tc'. */
        {"|s| = 160 tc'", 3, 63, 100, 100, 16, 180, 0},
        {"|s| < 160 tc'", 3, 63, 100, 100, 16, 179, 8},
        /* d = 2 |110 - 2 * 100 + 100| = 20. */
        {"d = beta'", 10, 5, 100, 110, 2, 120, 0},
        {"d < beta'", 10, 6, 100, 110, 2, 120, 2},
        /* d = 2, flat = 2: 16 d = 32 = beta' > 8 flat. */
        {"16 d = beta'", 10, 8, 100, 101, 2, 110, 2},
        {"16 d < beta'", 10, 9, 100, 101, 2, 110, 7},
        /* d = 0, flat = 2 |100 - 2 * 100 + 102| = 4: 8 flat = 32 = beta'. */
        {"8 flat = beta'", 10, 8, 100, 102, 14, 110, 2},
        {"8 flat < beta'", 10, 9, 100, 102, 14, 110, 7},
    };
    const int len = 32, e = 16;
    for (int vertical = 0; vertical <= 1; vertical++) {
        const int w = vertical ? len : 4, h = vertical ? 4 : len;
        naive_map m;
        naive_map_init(&m, vertical ? len : 16, vertical ? 16 : len);
        for (int y = 0; y < h; y += 16)
            for (int x = 0; x < w; x += 16)
                naive_mark_leaf(&m, y, x, vertical ? 2 : 4, vertical ? 4 : 2);
        mmp_edges ed;
        to_edges(&m, vertical ? len : 16, vertical ? 16 : len, &ed);
        for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
            const threshold_case *c = &cases[ci];
            int32_t pix[4 * 32], want[4 * 32], got[4 * 32];
            for (int l = 0; l < 4; l++)
                for (int t = 0; t < len; t++) {
                    const int v = t >= e ? c->q : e - 1 - t < c->from ? c->near : c->far;
                    pix[vertical ? l * w + t : t * w + l] = v;
                }
            memcpy(want, pix, sizeof pix);
            memcpy(got, pix, sizeof pix);
            const mmp_deblock d = {.enabled = 1, .tc = c->tc, .beta = c->beta};
            naive_deblock(&d, &m, want, w, w, h, 255);
            mmp_deblock_apply(&d, &ed, got, w, w, h, 255, NULL);
            int reach = 0;
            for (int l = 0; l < 4; l++)
                for (int t = 0; t < len; t++) {
                    const int i = vertical ? l * w + t : t * w + l;
                    if (got[i] != want[i])
                        fail_msg("%s, %s edge: sample %d of line %d is %d, the document says %d",
                                 c->what, vertical ? "vertical" : "horizontal", t, l, got[i],
                                 want[i]);
                    if (want[i] != pix[i]) {
                        const int away = t < e ? e - t : t - e + 1;
                        reach = away > reach ? away : reach;
                    }
                }
            if (reach != c->reach)
                fail_msg("%s, %s edge: samples changed up to %d from the edge, not %d", c->what,
                         vertical ? "vertical" : "horizontal", reach, c->reach);
        }
        mmp_edges_free(&ed);
        naive_map_free(&m);
    }
}

/* ---- the edge map from the syntax ---- */

/* The tokens of one block for mmp_code_block (mmp/common/syntax.h: one a
 * decision, in traversal order, forced ones included). */
typedef struct block_tokens {
    int32_t tok[4 * MMP_B * MMP_B + 64];
    int n;
} block_tokens;

static void push_token(block_tokens *t, int32_t v)
{
    assert_true(t->n < (int)(sizeof t->tok / sizeof *t->tok));
    t->tok[t->n++] = v;
}

/* A random residual tree of the 2^a x 2^b node at (y, x) of the plane: its
 * flags (leaf 0, split H 1 where a > 0, split V last) and each leaf's
 * dictionary index 0; its leaves marked as the document says. */
static void tokens_residual(block_tokens *t, naive_map *m, int y, int x, int a, int b, int stop)
{
    if ((a == 0 && b == 0) || (int)rng_below(8) < stop) {
        push_token(t, 0);
        push_token(t, 0);
        naive_mark_leaf(m, y, x, a, b);
        return;
    }
    if (b == 0 || (a > 0 && rng_below(2))) {
        push_token(t, 1);
        tokens_residual(t, m, y, x, a - 1, b, stop);
        tokens_residual(t, m, y + (1 << (a - 1)), x, a - 1, b, stop);
    } else {
        push_token(t, a > 0 ? 2 : 1);
        tokens_residual(t, m, y, x, a, b - 1, stop);
        tokens_residual(t, m, y, x + (1 << (b - 1)), a, b - 1, stop);
    }
}

/* A random prediction tree of the 2^a x 2^b node at (y, x): leaves of mode
 * 0, each with a transform residual of zero levels or a residual tree. */
static void tokens_prediction(block_tokens *t, naive_map *m, int y, int x, int a, int b, int split,
                              int stop)
{
    if ((a == 2 && b == 2) || (int)rng_below(8) >= split) {
        push_token(t, 0);
        push_token(t, MMP_PRED_V);
        if (rng_below(2)) {
            push_token(t, 1);
            for (int i = 0; i < 1 << (a + b); i++)
                push_token(t, 0);
            naive_mark_leaf(m, y, x, a, b);
        } else {
            push_token(t, 0);
            tokens_residual(t, m, y, x, a, b, stop);
        }
        return;
    }
    if (b == 2 || (a > 2 && rng_below(2))) {
        push_token(t, 1);
        tokens_prediction(t, m, y, x, a - 1, b, split, stop);
        tokens_prediction(t, m, y + (1 << (a - 1)), x, a - 1, b, split, stop);
    } else {
        push_token(t, a > 2 ? 2 : 1);
        tokens_prediction(t, m, y, x, a, b - 1, split, stop);
        tokens_prediction(t, m, y, x + (1 << (b - 1)), a, b - 1, split, stop);
    }
}

static void assert_same_map(const mmp_edges *e, const naive_map *m, const char *who)
{
    assert_int_equal(e->uw, m->uw);
    assert_int_equal(e->uh, m->uh);
    for (int i = 0; i < m->uw * m->uh; i++) {
        const int want_flags = (m->left[i] ? MMP_DB_LEFT : 0) | (m->top[i] ? MMP_DB_TOP : 0);
        if ((e->size[i] & 15) != m->lw[i] || e->size[i] >> 4 != m->lh[i] ||
            e->flags[i] != want_flags)
            fail_msg("%s: unit (%d, %d) has lw %d lh %d flags %d; the document says %d %d %d", who,
                     i / m->uw, i % m->uw, e->size[i] & 15, e->size[i] >> 4, e->flags[i], m->lw[i],
                     m->lh[i], want_flags);
    }
}

/*
 * The edge map that coding a plane's blocks leaves in mmp_codec (the
 * encoder's side, from tokens) and decoding them leaves (the decoder's,
 * from the range decoder) is the document's, marked from the same coding
 * leaves: random prediction trees whose leaves have transform residuals or
 * residual trees down to 1 x 1, on planes of odd sizes.
 */
static void test_edge_map_from_syntax(void **state)
{
    (void)state;
    rng_seed(0xed9e);
    for (int iter = 0; iter < 30; iter++) {
        const int w = 1 + (int)rng_below(60), h = 1 + (int)rng_below(60);
        const int pw = (w + 15) / 16 * 16, ph = (h + 15) / 16 * 16, bw = pw / 16, bh = ph / 16;
        const int split = 2 + (int)rng_below(6), stop = (int)rng_below(5);
        naive_map m;
        naive_map_init(&m, pw, ph);
        mmp_codec enc, dec;
        assert_int_equal(mmp_codec_init(&enc, w, h, 255, MMP_DEFAULT_DICT_CAP, 0, 1), 0);
        assert_int_equal(mmp_codec_init(&dec, w, h, 255, MMP_DEFAULT_DICT_CAP, 0, 1), 0);
        mmp_codec_set_transform(&enc, 40);
        mmp_codec_set_transform(&dec, 40);
        assert_int_equal(mmp_codec_set_deblock(&enc), 0);
        assert_int_equal(mmp_codec_set_deblock(&dec), 0);
        mmp_rc_enc rc;
        mmp_rc_enc_init(&rc);
        static mmp_block blk;
        for (int by = 0; by < bh; by++)
            for (int bx = 0; bx < bw; bx++) {
                block_tokens t = {.n = 0};
                tokens_prediction(&t, &m, 16 * by, 16 * bx, 4, 4, split, stop);
                mmp_symbols io = {.encoding = 1, .enc = &rc, .tok = t.tok, .ntok = t.n};
                assert_int_equal(mmp_code_block(&enc, &io, &blk), 0);
                mmp_reconstruct_block(&enc, by, bx, &blk);
                mmp_apply_updates(&enc);
            }
        assert_int_equal(mmp_rc_enc_finish(&rc), 0);
        assert_same_map(&enc.edges, &m, "coded");
        mmp_rc_dec rd;
        mmp_rc_dec_init(&rd, rc.buf, rc.len);
        for (int by = 0; by < bh; by++)
            for (int bx = 0; bx < bw; bx++) {
                mmp_symbols io = {.encoding = 0, .dec = &rd};
                assert_int_equal(mmp_code_block(&dec, &io, &blk), 0);
                mmp_reconstruct_block(&dec, by, bx, &blk);
                mmp_apply_updates(&dec);
            }
        assert_int_equal(rd.overrun, 0);
        assert_same_map(&dec.edges, &m, "decoded");
        mmp_rc_enc_free(&rc);
        mmp_codec_free(&enc);
        mmp_codec_free(&dec);
        naive_map_free(&m);
    }
}

/* ---- the encoder's fit ---- */

/*
 * mmp_deblock_fit on random planes and maps: rec left as it was; when
 * enabled, parameters whose change in squared error (which apply gives
 * back exactly) is negative and pays for the bits; when disabled, nothing.
 * Where the reconstruction is the original it stays off, even at lambda
 * 0; on blocky copies of smooth planes it is on.
 */
static void test_fit(void **state)
{
    (void)state;
    rng_seed(0xf17);
    static const int maxvals[] = {255, 1023, 65535};
    static const double lambdas[] = {0, 1, 10, 100};
    int enabled = 0, disabled = 0;
    for (int iter = 0; iter < 150; iter++) {
        const int w = 8 + (int)rng_below(48), h = 8 + (int)rng_below(48);
        const int stride = w + (int)rng_below(3);
        const int maxval = maxvals[iter % 3];
        const double lambda = lambdas[iter / 3 % 4] * (maxval / 255.0) * (maxval / 255.0);
        const int pw = (w + 15) / 16 * 16, ph = (h + 15) / 16 * 16;
        naive_map m;
        naive_map_init(&m, pw, ph);
        real_map(&m);
        mmp_edges e;
        to_edges(&m, pw, ph, &e);
        int32_t *orig, *buf = random_plane(w, h, stride, maxval, &orig);
        const size_t n = (size_t)stride * (h + 2);
        int32_t *rec = buf + stride, *keep = copy_of(buf, n);
        mmp_deblock d;
        int64_t dsse = 1;
        assert_int_equal(
            mmp_deblock_fit(&d, &dsse, &e, rec, orig + stride, stride, w, h, maxval, lambda), 0);
        assert_memory_equal(buf, keep, sizeof *buf * n);
        if (d.enabled) {
            enabled++;
            assert_in_range(d.tc, 1, MMP_DB_MAX_INDEX);
            assert_in_range(d.beta, 0, MMP_DB_MAX_INDEX);
            assert_true(dsse < 0);
            assert_true((double)dsse + lambda * 2 * MMP_DB_BITS < 0);
            int32_t *work = copy_of(buf, n);
            assert_int_equal(
                mmp_deblock_apply(&d, &e, work + stride, stride, w, h, maxval, orig + stride),
                dsse);
            assert_int_equal(plane_sse(orig + stride, work + stride, stride, w, h) -
                                 plane_sse(orig + stride, rec, stride, w, h),
                             dsse);
            free(work);
        } else {
            disabled++;
            assert_int_equal(dsse, 0);
            assert_int_equal(d.tc, 0);
            assert_int_equal(d.beta, 0);
        }
        /* Nothing to gain: the reconstruction is the original. */
        for (int li = 0; li < 2; li++) {
            dsse = 1;
            assert_int_equal(mmp_deblock_fit(&d, &dsse, &e, orig + stride, orig + stride, stride, w,
                                             h, maxval, li ? lambda : 0),
                             0);
            assert_int_equal(d.enabled, 0);
            assert_int_equal(dsse, 0);
        }
        free(keep);
        free(orig);
        free(buf);
        mmp_edges_free(&e);
        naive_map_free(&m);
    }
    print_message("fits: %d enabled, %d disabled\n", enabled, disabled);
    assert_true(enabled > 0);
    assert_true(disabled > 0);

    /* Flat 8 x 8 blocks a step apart from a smooth original: on, and
     * lower error. */
    const int w = 64, h = 48;
    naive_map m;
    mmp_edges e;
    grid_map(&m, &e, w, h);
    int32_t *orig = malloc(sizeof *orig * w * h), *rec = malloc(sizeof *rec * w * h);
    assert_non_null(orig);
    assert_non_null(rec);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            orig[y * w + x] = 60 + 2 * x + y;
            rec[y * w + x] = 60 + 2 * (x / 8 * 8 + 4) + (y / 8 * 8 + 4);
        }
    mmp_deblock d;
    int64_t dsse;
    assert_int_equal(mmp_deblock_fit(&d, &dsse, &e, rec, orig, w, w, h, 255, 10), 0);
    print_message("blocky ramp: tc %d beta %d, squared error %lld, change %lld\n", d.tc, d.beta,
                  (long long)plane_sse(orig, rec, w, w, h), (long long)dsse);
    assert_int_equal(d.enabled, 1);
    assert_true(dsse < -plane_sse(orig, rec, w, w, h) / 4);
    free(rec);
    free(orig);
    mmp_edges_free(&e);
    naive_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_document),
        cmocka_unit_test(test_nothing_to_do),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_edge_map_from_syntax),
        cmocka_unit_test(test_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
