/*
 * Tests for predict/: every mode on planes with known answers, every block
 * shape, reference substitution at image edges and inside a block, the H.264
 * 4x4 equations, LSP exactness and fallback, CfL on planes with a luma
 * reference, and a straightforward
 * re-implementation of docs/format.md section 6 ("naive_*" below, written from the
 * document rather than from predict.c) that the library must match bit for
 * bit on random planes and availability masks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <math.h>

#include "predict/lsp.h"
#include "predict/predict.h"

#define NSHAPES 9
static const int shape_h[NSHAPES] = { 4, 4, 4, 8, 8, 8, 16, 16, 16 };
static const int shape_w[NSHAPES] = { 4, 8, 16, 4, 8, 16, 4, 8, 16 };
#define BLK (MMP_PRED_MAX * MMP_PRED_MAX)

static const char *mode_name[MMP_NUM_MODES] = { "V", "H", "DC", "DDL", "DDR", "VR", "HD", "VL", "HU", "LSP", "ANG", "CfL" };

/* ---------------------------------------------------------------- helpers */

static mmp_plane plane_new(int width, int height, int maxval)
{
    mmp_plane p = {0};
    p.width = width;
    p.height = height;
    p.maxval = maxval;
    p.pix = calloc((size_t)width * height, sizeof *p.pix);
    p.avail = calloc((size_t)width * height, 1);
    assert_non_null(p.pix);
    assert_non_null(p.avail);
    return p;
}

static void plane_free(mmp_plane *p)
{
    free(p->pix);
    free(p->avail);
    p->pix = NULL;
    p->avail = NULL;
}

static int32_t *PIX(const mmp_plane *p, int y, int x) { return &p->pix[(size_t)y * p->width + x]; }
static uint8_t *AV(const mmp_plane *p, int y, int x) { return &p->avail[(size_t)y * p->width + x]; }

/* The availability a block sees when coded in plain raster order of blocks of
 * its own size: everything above, and the rows of the block to its left. */
static void set_causal(mmp_plane *p, int y0, int x0, int h)
{
    memset(p->avail, 0, (size_t)p->width * p->height);
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++)
            if (y < y0 || (y < y0 + h && x < x0))
                *AV(p, y, x) = 1;
}

/* splitmix64 from a fixed seed, so failures are reproducible: this test's
 * own draws (util.h's generator would give other planes). */
static uint64_t splitmix64_state = 0x9e3779b97f4a7c15ull;
static uint64_t splitmix64(void)
{
    uint64_t z = (splitmix64_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int rndn(int n) { return (int)(splitmix64() % (uint64_t)n); }

static void fill_random(mmp_plane *p)
{
    for (int i = 0; i < p->width * p->height; i++)
        p->pix[i] = rndn(p->maxval + 1);
}

static void check_range(const int32_t *v, int count, int maxval)
{
    for (int i = 0; i < count; i++) {
        assert_true(v[i] >= 0);
        assert_true(v[i] <= maxval);
    }
}

/* ------------------------------------- naive implementation of the document */

typedef struct nrefs {
    int n;
    int32_t L[2 * MMP_PRED_MAX], T[2 * MMP_PRED_MAX], C;
} nrefs;

static int in_block(int y, int x, int y0, int x0, int h, int w)
{
    return y >= y0 && y < y0 + h && x >= x0 && x < x0 + w;
}

static int nav(const mmp_plane *p, int y, int x)
{
    return y >= 0 && y < p->height && x >= 0 && x < p->width && *AV(p, y, x);
}

/* Rule 1, written as the document words it: a walk over a list of positions. */
static void naive_refs(const mmp_plane *p, int y0, int x0, int h, int w, nrefs *r)
{
    const int n = w + h, len = 2 * n + 1;
    int32_t v[4 * MMP_PRED_MAX + 1];
    int ok[4 * MMP_PRED_MAX + 1];
    for (int k = 0; k < len; k++) {
        int y, x;
        if (k < n) {            /* L[n-1-k] */
            y = y0 + (n - 1 - k);
            x = x0 - 1;
        } else if (k == n) {    /* C */
            y = y0 - 1;
            x = x0 - 1;
        } else {                /* T[k-n-1] */
            y = y0 - 1;
            x = x0 + (k - n - 1);
        }
        ok[k] = nav(p, y, x);
        v[k] = ok[k] ? *PIX(p, y, x) : -1;
    }
    int first = -1;
    for (int k = 0; k < len && first < 0; k++)
        if (ok[k])
            first = k;
    for (int k = 0; k < len; k++) {
        if (first < 0)
            v[k] = (p->maxval + 1) >> 1;
        else if (k < first)
            v[k] = v[first];
        else if (!ok[k])
            v[k] = v[k - 1];
    }
    r->n = n;
    for (int i = 0; i < n; i++)
        r->L[i] = v[n - 1 - i];
    r->C = v[n];
    for (int j = 0; j < n; j++)
        r->T[j] = v[n + 1 + j];
}

/* p[j,-1] and p[-1,i] of the H.264 equations: index -1 is C, past n-1 clamps. */
static int32_t edge_at(const nrefs *r, const int32_t *side, int i)
{
    if (i < 0)   /* the equations never go below -1 */
        return r->C;
    return side[i < r->n ? i : r->n - 1];
}
static int32_t tt(const nrefs *r, int j) { return edge_at(r, r->T, j); }
static int32_t ll(const nrefs *r, int i) { return edge_at(r, r->L, i); }
static int32_t f3(int32_t a, int32_t b, int32_t c) { return (a + 2 * b + c + 2) >> 2; }
static int32_t f2(int32_t a, int32_t b) { return (a + b + 1) >> 1; }

static int32_t naive_dc(const nrefs *r, int h, int w)
{
    int64_t s = 0;
    for (int j = 0; j < w; j++)
        s += r->T[j];
    for (int i = 0; i < h; i++)
        s += r->L[i];
    return (int32_t)((s + (w + h) / 2) / (w + h));
}

static int32_t naive_pixel(const nrefs *r, int mode, int x, int y, int h, int w)
{
    int z, k;
    switch (mode) {
    case MMP_PRED_V: return r->T[x];
    case MMP_PRED_H: return r->L[y];
    case MMP_PRED_DC: return naive_dc(r, h, w);
    case MMP_PRED_DDL: return f3(tt(r, x + y), tt(r, x + y + 1), tt(r, x + y + 2));
    case MMP_PRED_DDR:
        if (x > y) return f3(tt(r, x - y - 2), tt(r, x - y - 1), tt(r, x - y));
        if (x < y) return f3(ll(r, y - x - 2), ll(r, y - x - 1), ll(r, y - x));
        return f3(tt(r, 0), r->C, ll(r, 0));
    case MMP_PRED_VR:
        z = 2 * x - y;
        k = x - (y >> 1);
        if (z >= 0 && z % 2 == 0) return f2(tt(r, k - 1), tt(r, k));
        if (z >= 0) return f3(tt(r, k - 2), tt(r, k - 1), tt(r, k));
        if (z == -1) return f3(ll(r, 0), r->C, tt(r, 0));
        return f3(ll(r, -z - 1), ll(r, -z - 2), ll(r, -z - 3));
    case MMP_PRED_HD:
        z = 2 * y - x;
        k = y - (x >> 1);
        if (z >= 0 && z % 2 == 0) return f2(ll(r, k - 1), ll(r, k));
        if (z >= 0) return f3(ll(r, k - 2), ll(r, k - 1), ll(r, k));
        if (z == -1) return f3(ll(r, 0), r->C, tt(r, 0));
        return f3(tt(r, -z - 1), tt(r, -z - 2), tt(r, -z - 3));
    case MMP_PRED_VL:
        k = x + (y >> 1);
        if (y % 2 == 0) return f2(tt(r, k), tt(r, k + 1));
        return f3(tt(r, k), tt(r, k + 1), tt(r, k + 2));
    case MMP_PRED_HU:
        z = x + 2 * y;
        k = y + (x >> 1);
        if (z % 2 == 0) return f2(ll(r, k), ll(r, k + 1));
        return f3(ll(r, k), ll(r, k + 1), ll(r, k + 2));
    }
    fail_msg("bad mode %d", mode);
    return 0;
}

/* The solve exactly as the document words it. */
static int naive_solve(int64_t A[6][6], int64_t b[6], int count, double a[6])
{
    double m[6][7];
    double ridge = 0.01 * (double)count;
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 6; j++)
            m[i][j] = (double)A[i][j];
        m[i][i] = m[i][i] + ridge;
        m[i][6] = (double)b[i];
    }
    for (int k = 0; k < 6; k++) {
        int piv = k;
        for (int i = k + 1; i < 6; i++)
            if (fabs(m[i][k]) > fabs(m[piv][k]))
                piv = i;
        if (fabs(m[piv][k]) <= 1e-6 * ridge)
            return 0;
        for (int j = 0; j < 7; j++) {
            double t = m[k][j];
            m[k][j] = m[piv][j];
            m[piv][j] = t;
        }
        for (int i = k + 1; i < 6; i++) {
            double f = m[i][k] / m[k][k];
            for (int j = k + 1; j < 7; j++)
                m[i][j] = m[i][j] - f * m[k][j];
        }
    }
    for (int k = 5; k >= 0; k--) {
        double s = m[k][6];
        for (int j = k + 1; j < 6; j++)
            s = s - m[k][j] * a[j];
        a[k] = s / m[k][k];
    }
    return 1;
}

static const int sup_dy[6] = { 0, -1, -1, -1, 0, -2 };
static const int sup_dx[6] = { -1, 0, -1, 1, -2, 0 };

static int naive_lsp(const mmp_plane *p, int y0, int x0, int h, int w, int32_t dc, int32_t *out)
{
#define OK(y, x) (nav(p, (y), (x)) && !in_block((y), (x), y0, x0, h, w))
    int64_t A[6][6] = {{0}}, b[6] = {0};
    int count = 0;
    for (int y = y0 - 6; y < y0 + h; y++) {
        for (int x = x0 - 6; x < x0 + w + 6; x++) {
            int good = OK(y, x);
            for (int k = 0; k < 6; k++)
                good = good && OK(y + sup_dy[k], x + sup_dx[k]);
            if (!good)
                continue;
            int64_t s[6];
            for (int k = 0; k < 6; k++)
                s[k] = *PIX(p, y + sup_dy[k], x + sup_dx[k]);
            for (int i = 0; i < 6; i++) {
                for (int j = 0; j < 6; j++)
                    A[i][j] += s[i] * s[j];
                b[i] += s[i] * *PIX(p, y, x);
            }
            count++;
        }
    }
    double a[6];
    if (count < 12 || !naive_solve(A, b, count, a)) {
        for (int i = 0; i < h * w; i++)
            out[i] = dc;
        return 0;
    }
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            double s[6];
            int have[6];
            for (int k = 0; k < 6; k++) {
                int yy = y0 + y + sup_dy[k], xx = x0 + x + sup_dx[k];
                have[k] = 1;
                if (OK(yy, xx))
                    s[k] = *PIX(p, yy, xx);
                else if (in_block(yy, xx, y0, x0, h, w))
                    s[k] = out[(yy - y0) * w + (xx - x0)];
                else
                    have[k] = 0;
            }
            if (!have[1]) { s[1] = dc; have[1] = 1; }
            if (!have[3]) { s[3] = s[1]; have[3] = 1; }
            for (int k = 0; k < 6; k++)
                if (!have[k])
                    s[k] = dc;
            double v = 0.0;
            for (int k = 0; k < 6; k++)
                v = v + a[k] * s[k];
            double f = floor(v + 0.5);
            out[y * w + x] = f < 0 ? 0 : f > p->maxval ? p->maxval : (int32_t)f;
        }
    }
    return 1;
#undef OK
}

/* floor(a / b), b > 0, by the definition: the largest q with q * b <= a. */
static int64_t naive_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (q * b > a)
        q--;
    return q;
}

/* Mode 11 as section 6 writes it; 0 (and out untouched) where it falls
 * back to DC. */
static int naive_cfl(const mmp_plane *p, int y0, int x0, int h, int w, int32_t *out)
{
    int64_t n = 0, sl = 0, sc = 0, sll = 0, slc = 0;
    int ys[4 * MMP_PRED_MAX], xs[4 * MMP_PRED_MAX], k = 0;
    for (int j = 0; j < 2 * w; j++, k++) {
        ys[k] = y0 - 1;
        xs[k] = x0 + j;
    }
    for (int i = 0; i < 2 * h; i++, k++) {
        ys[k] = y0 + i;
        xs[k] = x0 - 1;
    }
    for (int q = 0; q < k; q++) {
        const int y = ys[q], x = xs[q];
        if (!p->cfl || y < 0 || x < 0 || y >= p->height || x >= p->width || !*AV(p, y, x))
            continue;
        const int64_t c = *PIX(p, y, x), l = p->cfl[(size_t)y * p->width + x];
        n++;
        sl += l;
        sc += c;
        sll += l * l;
        slc += l * c;
    }
    if (n == 0)
        return 0;
    const int64_t den = n * sll - sl * sl, num = n * slc - sl * sc;
    int64_t alpha = den <= 0 ? 0 : naive_floor_div(128 * num + den, 2 * den);
    alpha = alpha < -256 ? -256 : alpha > 256 ? 256 : alpha;
    const int64_t ml = (sl + n / 2) / n, mc = (sc + n / 2) / n;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int64_t l = p->cfl[(size_t)(y0 + y) * p->width + x0 + x];
            const int64_t v = mc + naive_floor_div(alpha * (l - ml) + 32, 64);
            out[y * w + x] = (int32_t)(v < 0 ? 0 : v > p->maxval ? p->maxval : v);
        }
    return 1;
}

/* Mode 10, direction k, as section 6 writes it (per sample, with the
 * projection of the other side written out rather than tabled). */
static void naive_angle(const nrefs *r, int k, int h, int w, int32_t *out)
{
    static const int disp[MMP_NUM_ANGLES] = {32,  26,  21,  17,  13,  9,  5,  2,  -2, -5, -9,
                                             -13, -17, -21, -26, -32, -26, -21, -17, -13, -9, -5,
                                             -2,  2,   5,   9,   13,  17,  21,  26,  32};
    const int d = disp[k], vert = k >= 15;
    const int v = d < 0 ? (8192 + (-d) / 2) / (-d) : 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            /* Distance from the main side (t) and position along it (u). */
            const int t = vert ? y : x, u = vert ? x : y;
            const int pos = (t + 1) * d;
            const int i = (int)naive_floor_div(pos, 32), f = pos - 32 * i;
            int32_t R[2] = {0, 0};
            for (int q = 0; q < (f ? 2 : 1); q++) {
                const int j = u + i + 1 + q;
                const int32_t *main = vert ? r->T : r->L, *side = vert ? r->L : r->T;
                if (j > r->n)
                    fail_msg("angle %d %dx%d reads R(%d) beyond n = %d", k, h, w, j, r->n);
                if (j >= 1)
                    R[q] = main[j - 1];
                else if (j == 0)
                    R[q] = r->C;
                else {
                    const int si = ((-j * v + 128) >> 8) - 1, dist = vert ? h : w;
                    if (si < 0 || si >= dist)
                        fail_msg("angle %d %dx%d reads the side at %d", k, h, w, si);
                    R[q] = side[si];
                }
            }
            out[y * w + x] = f ? ((32 - f) * R[0] + f * R[1] + 16) >> 5 : R[0];
        }
}

static void naive_predict(const mmp_plane *p, int mode, int y0, int x0, int h, int w, int32_t *out)
{
    if (mode == MMP_PRED_ANG) {
        nrefs ra;
        naive_refs(p, y0, x0, h, w, &ra);
        naive_angle(&ra, 0, h, w, out);
        return;
    }
    nrefs r;
    naive_refs(p, y0, x0, h, w, &r);
    if (mode == MMP_PRED_CFL && naive_cfl(p, y0, x0, h, w, out))
        return;
    if (mode == MMP_PRED_CFL)
        mode = MMP_PRED_DC;
    if (mode == MMP_PRED_LSP) {
        naive_lsp(p, y0, x0, h, w, naive_dc(&r, h, w), out);
        return;
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = naive_pixel(&r, mode, x, y, h, w);
}

/* Library vs document for all modes, and mmp_predict_all vs mmp_predict. */
static void check_block(const mmp_plane *p, int y0, int x0, int h, int w)
{
    int32_t all[MMP_NUM_MODES * BLK], one[BLK], ref[BLK];
    mmp_predict_all(p, y0, x0, h, w, all, NULL);
    for (int m = 0; m < MMP_NUM_MODES; m++) {
        mmp_predict(p, m, y0, x0, h, w, one);
        naive_predict(p, m, y0, x0, h, w, ref);
        for (int i = 0; i < h * w; i++) {
            if (one[i] != all[m * h * w + i] || one[i] != ref[i])
                fail_msg("mode %s block (%d,%d) %dx%d pixel %d: predict %d, predict_all %d, doc %d",
                         mode_name[m], y0, x0, h, w, i, one[i], all[m * h * w + i], ref[i]);
        }
        check_range(one, h * w, p->maxval);
    }
    int32_t angles[MMP_NUM_ANGLES * BLK];
    nrefs r;
    naive_refs(p, y0, x0, h, w, &r);
    mmp_predict_all(p, y0, x0, h, w, all, angles);
    for (int k = 0; k < MMP_NUM_ANGLES; k++) {
        mmp_predict_angle(p, k, y0, x0, h, w, one);
        naive_angle(&r, k, h, w, ref);
        for (int i = 0; i < h * w; i++)
            if (one[i] != angles[k * h * w + i] || one[i] != ref[i])
                fail_msg("angle %d block (%d,%d) %dx%d pixel %d: predict %d, predict_all %d, "
                         "doc %d",
                         k, y0, x0, h, w, i, one[i], angles[k * h * w + i], ref[i]);
        check_range(one, h * w, p->maxval);
    }
    /* mmp_predict_some: the modes and directions of its masks as
     * mmp_predict_all gives them, the others' places untouched. */
    static const unsigned mode_masks[] = {1u << MMP_PRED_LSP, ~(1u << MMP_PRED_LSP), 0x2a5u};
    static const uint32_t dir_masks[] = {0x11111111u, 0x55555555u, 1u};
    int32_t some[MMP_NUM_MODES * BLK], some_angles[MMP_NUM_ANGLES * BLK];
    for (int t = 0; t < 3; t++) {
        const unsigned mm = mode_masks[t] & ((1u << MMP_NUM_MODES) - 1);
        for (int i = 0; i < MMP_NUM_MODES * BLK; i++)
            some[i] = -7;
        for (int i = 0; i < MMP_NUM_ANGLES * BLK; i++)
            some_angles[i] = -7;
        mmp_predict_some(p, y0, x0, h, w, mm, dir_masks[t], some, some_angles);
        for (int m = 0; m < MMP_NUM_MODES; m++)
            for (int i = 0; i < h * w; i++) {
                const int32_t want = (mm >> m & 1) ? (m == MMP_PRED_ANG ? some_angles[i]
                                                                        : all[m * h * w + i])
                                                   : -7;
                if (some[m * h * w + i] != want)
                    fail_msg("predict_some mask %#x mode %s pixel %d: %d, want %d", mm,
                             mode_name[m], i, some[m * h * w + i], want);
            }
        for (int k = 0; k < MMP_NUM_ANGLES; k++)
            for (int i = 0; i < h * w; i++) {
                const int32_t want = (dir_masks[t] >> k & 1) ? angles[k * h * w + i] : -7;
                if (some_angles[k * h * w + i] != want)
                    fail_msg("predict_some directions %#x angle %d pixel %d: %d, want %d",
                             dir_masks[t], k, i, some_angles[k * h * w + i], want);
            }
    }
}

/* ------------------------------------------------------------------ tests */

static void test_constant_plane(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 64, 255);
    for (int i = 0; i < 64 * 64; i++)
        p.pix[i] = 77;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[MMP_NUM_MODES * BLK];
        set_causal(&p, 32, 16, h);
        mmp_predict_all(&p, 32, 16, h, w, out, NULL);
        for (int i = 0; i < MMP_NUM_MODES * h * w; i++)
            assert_int_equal(out[i], 77);
        check_block(&p, 32, 16, h, w);
    }
    plane_free(&p);
}

static void test_vertical_columns(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 64, 1023);
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            *PIX(&p, y, x) = (x * 37 + 11) % 1024;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[BLK];
        set_causal(&p, 16, 32, h);
        mmp_predict(&p, MMP_PRED_V, 16, 32, h, w, out);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                assert_int_equal(out[y * w + x], *PIX(&p, 16 + y, 32 + x));
        check_block(&p, 16, 32, h, w);
    }
    plane_free(&p);
}

static void test_horizontal_rows(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 64, 65535);
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            *PIX(&p, y, x) = (y * 4099 + 5) % 65536;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[BLK];
        set_causal(&p, 32, 16, h);
        mmp_predict(&p, MMP_PRED_H, 32, 16, h, w, out);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                assert_int_equal(out[y * w + x], *PIX(&p, 32 + y, 16 + x));
        check_block(&p, 32, 16, h, w);
    }
    plane_free(&p);
}

/* DC of a block whose top row is all a and left column all b. */
static void test_dc_value(void **state)
{
    (void)state;
    mmp_plane p = plane_new(48, 48, 255);
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[BLK];
        for (int i = 0; i < 48 * 48; i++)
            p.pix[i] = 10;          /* left and everything else */
        for (int x = 16; x < 48; x++)
            *PIX(&p, 15, x) = 200;  /* top row T[j] */
        set_causal(&p, 16, 16, h);
        mmp_predict(&p, MMP_PRED_DC, 16, 16, h, w, out);
        int expect = (200 * w + 10 * h + (w + h) / 2) / (w + h);
        for (int i = 0; i < h * w; i++)
            assert_int_equal(out[i], expect);
    }
    plane_free(&p);
}

/* Every shape, random content, causal availability, several positions. */
static void test_all_shapes(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 64, 255);
    fill_random(&p);
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        const int pos[4][2] = { { 0, 0 }, { 16, 16 }, { 32, 64 - w }, { 64 - h, 0 } };
        for (int k = 0; k < 4; k++) {
            set_causal(&p, pos[k][0], pos[k][1], h);
            check_block(&p, pos[k][0], pos[k][1], h, w);
        }
    }
    plane_free(&p);
}

/* Top-left block of the image: nothing available, every mode mid-grey. */
static void test_edge_top_left(void **state)
{
    (void)state;
    const int maxvals[3] = { 1, 255, 65535 };
    for (int m = 0; m < 3; m++) {
        mmp_plane p = plane_new(32, 32, maxvals[m]);
        fill_random(&p);
        for (int s = 0; s < NSHAPES; s++) {
            int h = shape_h[s], w = shape_w[s];
            int32_t out[MMP_NUM_MODES * BLK];
            set_causal(&p, 0, 0, h);
            mmp_predict_all(&p, 0, 0, h, w, out, NULL);
            for (int i = 0; i < MMP_NUM_MODES * h * w; i++)
                assert_int_equal(out[i], (maxvals[m] + 1) >> 1);
            check_block(&p, 0, 0, h, w);
        }
        plane_free(&p);
    }
}

/* First row: no top, no corner; the walk copies L[0] into C and T. */
static void test_edge_first_row(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 32, 255);
    fill_random(&p);
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[MMP_NUM_MODES * BLK];
        set_causal(&p, 0, 16, h);
        mmp_predict_all(&p, 0, 16, h, w, out, NULL);
        const int32_t l0 = *PIX(&p, 0, 15), lh = *PIX(&p, h - 1, 15);
        for (int i = 0; i < h * w; i++) {
            assert_int_equal(out[MMP_PRED_V * h * w + i], l0);
            assert_int_equal(out[MMP_PRED_DDL * h * w + i], l0);
            assert_int_equal(out[MMP_PRED_VL * h * w + i], l0);
            assert_int_equal(out[MMP_PRED_H * h * w + i], *PIX(&p, i / w, 15));
        }
        /* below-left (rows h..) unavailable: HU's last pixel is L[h-1] */
        assert_int_equal(out[MMP_PRED_HU * h * w + h * w - 1], lh);
        check_block(&p, 0, 16, h, w);
    }
    plane_free(&p);
}

/* First column: no left, no corner; the walk copies T[0] back into C and L. */
static void test_edge_first_column(void **state)
{
    (void)state;
    mmp_plane p = plane_new(32, 64, 255);
    fill_random(&p);
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[MMP_NUM_MODES * BLK];
        set_causal(&p, 16, 0, h);
        mmp_predict_all(&p, 16, 0, h, w, out, NULL);
        const int32_t t0 = *PIX(&p, 15, 0);
        for (int i = 0; i < h * w; i++) {
            assert_int_equal(out[MMP_PRED_H * h * w + i], t0);
            assert_int_equal(out[MMP_PRED_HU * h * w + i], t0);
            assert_int_equal(out[MMP_PRED_V * h * w + i], *PIX(&p, 15, i % w));
        }
        check_block(&p, 16, 0, h, w);
    }
    plane_free(&p);
}

/* Only the corner available: every reference sample equals C. */
static void test_edge_only_corner(void **state)
{
    (void)state;
    mmp_plane p = plane_new(32, 32, 255);
    fill_random(&p);
    *PIX(&p, 7, 7) = 123;
    *AV(&p, 7, 7) = 1;
    int32_t out[MMP_NUM_MODES * BLK];
    mmp_predict_all(&p, 8, 8, 8, 4, out, NULL);
    for (int i = 0; i < MMP_NUM_MODES * 32; i++)
        assert_int_equal(out[i], 123);
    plane_free(&p);
}

/*
 * Run the non-LSP modes on block (y0,x0,h,w) of `a` and on the same block of
 * `b`, which equals `a` except that the missing references are present with
 * the substituted values: the results must agree.
 */
static void compare_directional(const mmp_plane *a, const mmp_plane *b, int y0, int x0, int h, int w)
{
    int32_t oa[MMP_NUM_MODES * BLK], ob[MMP_NUM_MODES * BLK];
    mmp_predict_all(a, y0, x0, h, w, oa, NULL);
    mmp_predict_all(b, y0, x0, h, w, ob, NULL);
    for (int m = 0; m < MMP_PRED_LSP; m++)
        for (int i = 0; i < h * w; i++)
            if (oa[m * h * w + i] != ob[m * h * w + i])
                fail_msg("mode %s %dx%d pixel %d: %d vs %d", mode_name[m], h, w, i,
                         oa[m * h * w + i], ob[m * h * w + i]);
}

/* Right edge of the image: above-right is outside the plane, so T[w..n-1]
 * repeat T[w-1]. Same as a wider plane holding T[w-1] there. */
static void test_edge_right(void **state)
{
    (void)state;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        mmp_plane a = plane_new(48, 48, 255), b = plane_new(48 + 32, 48, 255);
        fill_random(&a);
        int x0 = 48 - w, y0 = 16;
        set_causal(&a, y0, x0, h);
        for (int y = 0; y < 48; y++)
            for (int x = 0; x < 48; x++) {
                *PIX(&b, y, x) = *PIX(&a, y, x);
                *AV(&b, y, x) = *AV(&a, y, x);
            }
        for (int x = 48; x < 48 + 32; x++) {
            *PIX(&b, y0 - 1, x) = *PIX(&a, y0 - 1, 47);
            *AV(&b, y0 - 1, x) = 1;
        }
        compare_directional(&a, &b, y0, x0, h, w);
        check_block(&a, y0, x0, h, w);
        plane_free(&a);
        plane_free(&b);
    }
}

/* Inside the image: above-right flagged unavailable (not yet coded). */
static void test_inside_above_right_unavailable(void **state)
{
    (void)state;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s], n = w + h;
        mmp_plane a = plane_new(80, 64, 1023), b = plane_new(80, 64, 1023);
        fill_random(&a);
        int y0 = 16, x0 = 16;
        set_causal(&a, y0, x0, h);
        for (int x = x0 + w; x < x0 + n; x++)
            *AV(&a, y0 - 1, x) = 0;
        memcpy(b.pix, a.pix, sizeof *a.pix * 80 * 64);
        memcpy(b.avail, a.avail, 80 * 64);
        for (int x = x0 + w; x < x0 + n; x++) {
            *PIX(&b, y0 - 1, x) = *PIX(&a, y0 - 1, x0 + w - 1);
            *AV(&b, y0 - 1, x) = 1;
        }
        compare_directional(&a, &b, y0, x0, h, w);
        check_block(&a, y0, x0, h, w);
        /* and a hole in the middle of the top row takes the sample before it */
        *AV(&a, y0 - 1, x0 + 1) = 0;
        *PIX(&b, y0 - 1, x0 + 1) = *PIX(&a, y0 - 1, x0);
        compare_directional(&a, &b, y0, x0, h, w);
        check_block(&a, y0, x0, h, w);
        plane_free(&a);
        plane_free(&b);
    }
}

/* Below-left available vs unavailable (then L[h..n-1] repeat L[h-1]). */
static void test_below_left(void **state)
{
    (void)state;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s], n = w + h;
        mmp_plane a = plane_new(64, 64, 255), b = plane_new(64, 64, 255);
        fill_random(&a);
        int y0 = 16, x0 = 16;
        set_causal(&a, y0, x0, h);   /* below-left (rows >= y0+h) unavailable */
        memcpy(b.pix, a.pix, sizeof *a.pix * 64 * 64);
        memcpy(b.avail, a.avail, 64 * 64);
        for (int y = y0 + h; y < y0 + n; y++) {
            *PIX(&b, y, x0 - 1) = *PIX(&a, y0 + h - 1, x0 - 1);
            *AV(&b, y, x0 - 1) = 1;
        }
        compare_directional(&a, &b, y0, x0, h, w);
        check_block(&a, y0, x0, h, w);
        /* with below-left really available and different, HU must see it */
        for (int y = y0 + h; y < y0 + n; y++)
            *AV(&a, y, x0 - 1) = 1;
        for (int y = y0 + h; y < y0 + n; y++)
            *PIX(&a, y, x0 - 1) = (*PIX(&a, y0 + h - 1, x0 - 1) + 100) % 256;
        int32_t hu[BLK];
        mmp_predict(&a, MMP_PRED_HU, y0, x0, h, w, hu);
        /* last pixel: z = (w-1) + 2(h-1) is odd, k = y + (x>>1) */
        int k = (h - 1) + ((w - 1) >> 1);
        int32_t e = f3(*PIX(&a, y0 + k, x0 - 1), *PIX(&a, y0 + k + 1, x0 - 1), *PIX(&a, y0 + k + 2, x0 - 1));
        assert_int_equal(hu[h * w - 1], e);
        check_block(&a, y0, x0, h, w);
        plane_free(&a);
        plane_free(&b);
    }
}

/* The H.264 4x4 equations (8.3.1.2.4 .. 8.3.1.2.9), p[x,-1] x = -1..7,
 * p[-1,y] y = 0..3, exactly as the standard writes them. */
static int32_t h264_4x4(int mode, const int32_t *top /* p[-1..7,-1] */, const int32_t *left /* p[-1,0..3] */,
                        int x, int y)
{
#define PT(i) top[(i) + 1]
#define PL(i) ((i) < 0 ? top[0] : left[(i)])
    int z;
    switch (mode) {
    case MMP_PRED_DDL:
        if (x == 3 && y == 3) return (PT(6) + 3 * PT(7) + 2) >> 2;
        return (PT(x + y) + 2 * PT(x + y + 1) + PT(x + y + 2) + 2) >> 2;
    case MMP_PRED_DDR:
        if (x > y) return (PT(x - y - 2) + 2 * PT(x - y - 1) + PT(x - y) + 2) >> 2;
        if (x < y) return (PL(y - x - 2) + 2 * PL(y - x - 1) + PL(y - x) + 2) >> 2;
        return (PT(0) + 2 * PT(-1) + PL(0) + 2) >> 2;
    case MMP_PRED_VR:
        z = 2 * x - y;
        if (z >= 0 && z % 2 == 0) return (PT(x - (y >> 1) - 1) + PT(x - (y >> 1)) + 1) >> 1;
        if (z >= 0) return (PT(x - (y >> 1) - 2) + 2 * PT(x - (y >> 1) - 1) + PT(x - (y >> 1)) + 2) >> 2;
        if (z == -1) return (PL(0) + 2 * PL(-1) + PT(0) + 2) >> 2;
        return (PL(y - 1) + 2 * PL(y - 2) + PL(y - 3) + 2) >> 2;
    case MMP_PRED_HD:
        z = 2 * y - x;
        if (z >= 0 && z % 2 == 0) return (PL(y - (x >> 1) - 1) + PL(y - (x >> 1)) + 1) >> 1;
        if (z >= 0) return (PL(y - (x >> 1) - 2) + 2 * PL(y - (x >> 1) - 1) + PL(y - (x >> 1)) + 2) >> 2;
        if (z == -1) return (PL(0) + 2 * PL(-1) + PT(0) + 2) >> 2;
        return (PT(x - 1) + 2 * PT(x - 2) + PT(x - 3) + 2) >> 2;
    case MMP_PRED_VL:
        if (y == 0 || y == 2) return (PT(x + (y >> 1)) + PT(x + (y >> 1) + 1) + 1) >> 1;
        return (PT(x + (y >> 1)) + 2 * PT(x + (y >> 1) + 1) + PT(x + (y >> 1) + 2) + 2) >> 2;
    case MMP_PRED_HU:
        z = x + 2 * y;
        if (z == 0 || z == 2 || z == 4) return (PL(y + (x >> 1)) + PL(y + (x >> 1) + 1) + 1) >> 1;
        if (z == 1 || z == 3) return (PL(y + (x >> 1)) + 2 * PL(y + (x >> 1) + 1) + PL(y + (x >> 1) + 2) + 2) >> 2;
        if (z == 5) return (PL(2) + 3 * PL(3) + 2) >> 2;
        return PL(3);
    }
#undef PT
#undef PL
    return -1;
}

/* A 4x4 block at (8,8) with distinct references. */
#define HC 50
static const int32_t hand_T[8] = { 60, 80, 40, 100, 20, 120, 90, 30 };
static const int32_t hand_L[8] = { 70, 10, 110, 90, 30, 130, 0, 200 };

static mmp_plane hand_plane(int below_left)
{
    mmp_plane p = plane_new(24, 24, 255);
    fill_random(&p);
    *PIX(&p, 7, 7) = HC;
    *AV(&p, 7, 7) = 1;
    for (int j = 0; j < 8; j++) {
        *PIX(&p, 7, 8 + j) = hand_T[j];
        *AV(&p, 7, 8 + j) = 1;
    }
    for (int i = 0; i < 8; i++) {
        *PIX(&p, 8 + i, 7) = hand_L[i];
        *AV(&p, 8 + i, 7) = (uint8_t)(i < 4 || below_left);
    }
    return p;
}

static void test_h264_4x4(void **state)
{
    (void)state;
    int32_t top[9], left[4];
    top[0] = HC;
    for (int j = 0; j < 8; j++)
        top[1 + j] = hand_T[j];
    for (int i = 0; i < 4; i++)
        left[i] = hand_L[i];
    for (int bl = 0; bl < 2; bl++) {
        mmp_plane p = hand_plane(bl);
        int32_t out[MMP_NUM_MODES * 16];
        mmp_predict_all(&p, 8, 8, 4, 4, out, NULL);
        for (int m = MMP_PRED_DDL; m <= MMP_PRED_HU; m++) {
            if (m == MMP_PRED_HU && bl)
                continue;   /* H.264 has no below-left; see test_hand_values */
            for (int y = 0; y < 4; y++)
                for (int x = 0; x < 4; x++)
                    if (out[m * 16 + y * 4 + x] != h264_4x4(m, top, left, x, y))
                        fail_msg("%s (x=%d,y=%d): %d, H.264 %d", mode_name[m], x, y,
                                 out[m * 16 + y * 4 + x], h264_4x4(m, top, left, x, y));
        }
        check_block(&p, 8, 8, 4, 4);
        plane_free(&p);
    }
}

/* Values worked out by hand from hand_T, hand_L, C = 50. */
static void test_hand_values(void **state)
{
    (void)state;
    mmp_plane p = hand_plane(1);
    int32_t o[MMP_NUM_MODES * 16];
    mmp_predict_all(&p, 8, 8, 4, 4, o, NULL);
#define AT(m, x, y) o[(m) * 16 + (y) * 4 + (x)]
    assert_int_equal(AT(MMP_PRED_V, 2, 3), 40);
    assert_int_equal(AT(MMP_PRED_H, 2, 3), 90);
    assert_int_equal(AT(MMP_PRED_DC, 0, 0), 70);     /* (280 + 280 + 4) / 8 */
    assert_int_equal(AT(MMP_PRED_DDL, 0, 0), 65);    /* (60 + 160 + 40 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_DDL, 3, 3), 45);    /* (90 + 2*30 + 30 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_DDR, 0, 0), 58);    /* (70 + 100 + 60 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_DDR, 1, 0), 63);    /* (50 + 120 + 80 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_DDR, 0, 2), 50);    /* (70 + 20 + 110 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_VR, 0, 0), 55);     /* (50 + 60 + 1) >> 1 */
    assert_int_equal(AT(MMP_PRED_VR, 0, 1), 58);     /* z = -1 */
    assert_int_equal(AT(MMP_PRED_VR, 0, 3), 50);     /* (110 + 20 + 70 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_HD, 2, 0), 63);     /* (80 + 120 + 50 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_VL, 0, 1), 65);     /* (60 + 160 + 40 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_VL, 3, 3), 88);     /* (20 + 240 + 90 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_HU, 0, 0), 40);     /* (70 + 10 + 1) >> 1 */
    assert_int_equal(AT(MMP_PRED_HU, 1, 2), 80);     /* (110 + 180 + 30 + 2) >> 2 */
    assert_int_equal(AT(MMP_PRED_HU, 3, 3), 73);     /* (30 + 260 + 0 + 2) >> 2 */
#undef AT
    plane_free(&p);
    /* below-left unavailable: H.264's special cases come out */
    p = hand_plane(0);
    mmp_predict(&p, MMP_PRED_HU, 8, 8, 4, 4, o);
    assert_int_equal(o[2 * 4 + 1], 95);   /* zHU = 5: (110 + 3*90 + 2) >> 2 */
    assert_int_equal(o[3 * 4 + 3], 90);   /* zHU > 5: L[3] */
    plane_free(&p);
}

/* Random planes, random availability (including stray flags inside the
 * block, which must be ignored), random positions, all shapes and maxvals. */
static void test_random_consistency(void **state)
{
    (void)state;
    const int maxvals[4] = { 1, 255, 4095, 65535 };
    for (int trial = 0; trial < 400; trial++) {
        int W = 16 * (1 + rndn(4)), H = 16 * (1 + rndn(4));
        mmp_plane p = plane_new(W, H, maxvals[trial % 4]);
        fill_random(&p);
        int s = trial % NSHAPES, h = shape_h[s], w = shape_w[s];
        if (h > H || w > W) {
            plane_free(&p);
            continue;
        }
        int y0 = rndn(H - h + 1), x0 = rndn(W - w + 1);
        switch (rndn(3)) {
        case 0:
            set_causal(&p, y0, x0, h);
            break;
        case 1: {
            int q = 50 + rndn(51);   /* percent available */
            for (int i = 0; i < W * H; i++)
                p.avail[i] = (uint8_t)(rndn(100) < q);
            break;
        }
        default:
            set_causal(&p, y0, x0, h);
            for (int i = 0; i < W * H; i++)
                if (rndn(10) == 0)
                    p.avail[i] ^= 1;
            break;
        }
        check_block(&p, y0, x0, h, w);
        /* The same block of a chroma plane: a luma reference, random or a
         * line through the chroma samples with noise. */
        int32_t *ref = malloc(sizeof(int32_t) * (size_t)W * H);
        assert_non_null(ref);
        const int lmax = rndn(2) ? p.maxval : (p.maxval + 1) / 2;
        for (int i = 0; i < W * H; i++)
            ref[i] = trial % 3 ? rndn(lmax + 1) : (p.pix[i] / 2 + rndn(3)) % (lmax + 1);
        p.cfl = ref;
        assert_int_equal(mmp_plane_modes(&p), MMP_NUM_MODES);
        check_block(&p, y0, x0, h, w);
        p.cfl = NULL;
        free(ref);
        plane_free(&p);
    }
}

/* CfL on a chroma plane that is a line of the luma reference, c = 2 l + 7
 * over texture: within one of it everywhere (the means are rounded), where
 * DC is far off; and the plane without a reference has no mode 11. */
static void test_cfl_line(void **state)
{
    (void)state;
    mmp_plane p = plane_new(48, 48, 1023);
    int32_t *ref = malloc(sizeof(int32_t) * 48 * 48);
    assert_non_null(ref);
    for (int i = 0; i < 48 * 48; i++) {
        ref[i] = (int32_t)((i * 37 + (i / 48) * 11) % 400);
        p.pix[i] = 2 * ref[i] + 7;
    }
    assert_int_equal(mmp_plane_modes(&p), MMP_PRED_CFL);
    p.cfl = ref;
    assert_int_equal(mmp_plane_modes(&p), MMP_NUM_MODES);
    for (int s = 0; s < NSHAPES; s++) {
        const int h = shape_h[s], w = shape_w[s];
        int32_t out[BLK], dc[BLK];
        set_causal(&p, 16, 16, h);
        mmp_predict(&p, MMP_PRED_CFL, 16, 16, h, w, out);
        mmp_predict(&p, MMP_PRED_DC, 16, 16, h, w, dc);
        int64_t err_dc = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const int32_t want = *PIX(&p, 16 + y, 16 + x);
                if (abs(out[y * w + x] - want) > 1)
                    fail_msg("%dx%d (%d,%d): CfL %d, want %d", h, w, x, y, out[y * w + x], want);
                err_dc += abs(dc[y * w + x] - want);
            }
        assert_true(err_dc > 50 * h * w);
        check_block(&p, 16, 16, h, w);
    }
    free(ref);
    plane_free(&p);
}

/* Smooth random 16-bit content drives LSP far outside [0, maxval] unclipped. */
static void test_range_16bit(void **state)
{
    (void)state;
    for (int trial = 0; trial < 60; trial++) {
        mmp_plane p = plane_new(48, 48, 65535);
        int base = rndn(65536), gx = rndn(4001) - 2000, gy = rndn(4001) - 2000;
        for (int y = 0; y < 48; y++)
            for (int x = 0; x < 48; x++) {
                int v = base + gx * (x - 24) / 8 + gy * (y - 24) / 8 + rndn(2001) - 1000;
                if (trial % 3 == 0)
                    v = rndn(2) ? 65535 : 0;   /* binary noise at the extremes */
                *PIX(&p, y, x) = v < 0 ? 0 : v > 65535 ? 65535 : v;
            }
        int s = trial % NSHAPES;
        set_causal(&p, 16, 16, shape_h[s]);
        check_block(&p, 16, 16, shape_h[s], shape_w[s]);
        plane_free(&p);
    }
}

/* A plane in x and y: LSP is exact when every support outside the block is
 * available (the column right of the block is flagged available here, so NE
 * is never substituted). */
static void lsp_plane_case(int maxval, int c0, int gx, int gy, int right_col)
{
    mmp_plane p = plane_new(64, 64, maxval);
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            *PIX(&p, y, x) = c0 + gx * x + gy * y;
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[BLK], dc[BLK];
        set_causal(&p, 32, 16, h);
        if (right_col)
            for (int y = 32; y < 32 + h; y++)
                *AV(&p, y, 16 + w) = 1;
        mmp_predict(&p, MMP_PRED_DC, 32, 16, h, w, dc);
        assert_int_equal(mmp_lsp_predict(&p, 32, 16, h, w, dc[0], out), 1);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (out[y * w + x] != *PIX(&p, 32 + y, 16 + x))
                    fail_msg("maxval %d %dx%d (x=%d,y=%d): LSP %d, plane %d", maxval, h, w, x, y,
                             out[y * w + x], *PIX(&p, 32 + y, 16 + x));
        check_block(&p, 32, 16, h, w);
    }
    plane_free(&p);
}

static void test_lsp_ramp_exact(void **state)
{
    (void)state;
    lsp_plane_case(1023, 40, 3, 2, 1);
    lsp_plane_case(255, 250, -2, -1, 1);
    lsp_plane_case(65535, 30000, 5, -7, 1);     /* 16-bit, large offset */
    lsp_plane_case(65535, 1000, 700, 300, 1);   /* 16-bit, steep */
    lsp_plane_case(255, 20, 1, 1, 1);           /* shallowest 8-bit slopes */
    lsp_plane_case(255, 20, 1, 0, 1);
    lsp_plane_case(255, 200, 0, -1, 0);
    /* a ramp in y only: N = NE, so the natural causal case is exact too */
    lsp_plane_case(1023, 100, 0, 3, 0);
    lsp_plane_case(65535, 60000, 0, -500, 0);
}

/* LSP on a constant plane: exact (ridge bias far below 1/2). */
static void test_lsp_constant(void **state)
{
    (void)state;
    const int vals[4] = { 0, 1, 200, 65535 };
    for (int k = 0; k < 4; k++) {
        mmp_plane p = plane_new(48, 48, 65535);
        for (int i = 0; i < 48 * 48; i++)
            p.pix[i] = vals[k];
        for (int s = 0; s < NSHAPES; s++) {
            int32_t out[BLK];
            set_causal(&p, 16, 16, shape_h[s]);
            mmp_predict(&p, MMP_PRED_LSP, 16, 16, shape_h[s], shape_w[s], out);
            for (int i = 0; i < shape_h[s] * shape_w[s]; i++)
                assert_int_equal(out[i], vals[k]);
        }
        plane_free(&p);
    }
}

/* Exactly `count` training samples: three available rows 12..14, columns
 * 14..16+count; the training pixels are row 14, columns 16..15+count. */
static int lsp_with_samples(int count, int32_t *out, int32_t *dc)
{
    mmp_plane p = plane_new(40, 40, 255);
    fill_random(&p);
    for (int y = 12; y <= 14; y++)
        for (int x = 14; x <= 16 + count; x++)
            *AV(&p, y, x) = 1;
    int32_t d[16];
    mmp_predict(&p, MMP_PRED_DC, 20, 20, 4, 4, d);
    *dc = d[0];
    int used = mmp_lsp_predict(&p, 20, 20, 4, 4, d[0], out);
    int32_t viaapi[16];
    mmp_predict(&p, MMP_PRED_LSP, 20, 20, 4, 4, viaapi);
    assert_memory_equal(viaapi, out, sizeof viaapi);
    check_block(&p, 20, 20, 4, 4);
    plane_free(&p);
    return used;
}

static void test_lsp_fallback(void **state)
{
    (void)state;
    int32_t out[16], dc;
    assert_int_equal(lsp_with_samples(11, out, &dc), 0);
    for (int i = 0; i < 16; i++)
        assert_int_equal(out[i], dc);
    assert_int_equal(lsp_with_samples(12, out, &dc), 1);

    /* nothing available at all: DC, i.e. mid-grey */
    mmp_plane p = plane_new(32, 32, 1023);
    fill_random(&p);
    int32_t o[BLK];
    assert_int_equal(mmp_lsp_predict(&p, 8, 8, 8, 8, 512, o), 0);
    mmp_predict(&p, MMP_PRED_LSP, 8, 8, 8, 8, o);
    for (int i = 0; i < 64; i++)
        assert_int_equal(o[i], 512);
    plane_free(&p);
}

/* Flags and values inside the block itself never matter. */
static void test_block_pixels_ignored(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 64, 255);
    fill_random(&p);
    for (int s = 0; s < NSHAPES; s++) {
        int h = shape_h[s], w = shape_w[s];
        int32_t a[MMP_NUM_MODES * BLK], b[MMP_NUM_MODES * BLK];
        set_causal(&p, 16, 16, h);
        mmp_predict_all(&p, 16, 16, h, w, a, NULL);
        for (int y = 16; y < 16 + h; y++)
            for (int x = 16; x < 16 + w; x++) {
                *AV(&p, y, x) = 1;
                *PIX(&p, y, x) = rndn(256);
            }
        mmp_predict_all(&p, 16, 16, h, w, b, NULL);
        assert_memory_equal(a, b, sizeof(int32_t) * MMP_NUM_MODES * h * w);
    }
    plane_free(&p);
}

/* Not a pass/fail check: prints the cost of one mmp_predict_all per shape. */
static void test_speed(void **state)
{
    (void)state;
    mmp_plane p = plane_new(64, 64, 255);
    fill_random(&p);
    for (int s = 0; s < NSHAPES; s += 4) {
        int h = shape_h[s], w = shape_w[s];
        int32_t out[MMP_NUM_MODES * BLK];
        set_causal(&p, 32, 32, h);
        int reps = 2000;
        clock_t t0 = clock();
        for (int i = 0; i < reps; i++) {
            *PIX(&p, 31, 32) = i & 255;
            mmp_predict_all(&p, 32, 32, h, w, out, NULL);
        }
        double us = 1e6 * (double)(clock() - t0) / CLOCKS_PER_SEC / reps;
        printf("    mmp_predict_all %2dx%-2d: %.2f us\n", h, w, us);
    }
    plane_free(&p);
}

/*
 * The encoder's overlays: a plane whose 16x16 window at (oy, ox) is read from
 * an overlay must predict exactly like a plane holding the same samples and
 * flags in place, whatever the plane itself holds under the window. Leaves
 * inside the window, and around it (their neighbourhoods, LSP training
 * included, cross its edges).
 */
static void test_overlay_equivalence(void **state)
{
    (void)state;
    for (int trial = 0; trial < 40; trial++) {
        mmp_plane ref = plane_new(64, 64, trial % 2 ? 255 : 1023);
        fill_random(&ref);
        for (int i = 0; i < 64 * 64; i++)
            ref.avail[i] = rndn(5) != 0;
        const int oy = 16 * (trial % 3), ox = 16 * ((trial / 3) % 3);
        /* The overlaid plane: same everywhere but garbage under the window. */
        mmp_plane ov = plane_new(64, 64, ref.maxval);
        memcpy(ov.pix, ref.pix, sizeof(int32_t) * 64 * 64);
        memcpy(ov.avail, ref.avail, 64 * 64);
        int32_t win_pix[MMP_PLANE_OV * MMP_PLANE_OV];
        uint8_t win_av[MMP_PLANE_OV * MMP_PLANE_OV];
        for (int y = 0; y < 16; y++)
            for (int x = 0; x < 16; x++) {
                win_pix[y * 16 + x] = *PIX(&ref, oy + y, ox + x);
                win_av[y * 16 + x] = *AV(&ref, oy + y, ox + x);
                *PIX(&ov, oy + y, ox + x) = (int32_t)rndn(ref.maxval + 1);
                *AV(&ov, oy + y, ox + x) = (uint8_t)rndn(2);
            }
        ov.ov_pix = win_pix;
        ov.ov_avail = win_av;
        ov.ov_y = oy;
        ov.ov_x = ox;
        for (int k = 0; k < 12; k++) {
            const int sh = rndn(NSHAPES), h = shape_h[sh], w = shape_w[sh];
            const int y0 = oy - 8 + 4 * rndn(7), x0 = ox - 8 + 4 * rndn(7);
            if (y0 < 0 || x0 < 0 || y0 + h > 64 || x0 + w > 64)
                continue;
            int32_t a[MMP_NUM_MODES * 256], b[MMP_NUM_MODES * 256];
            mmp_predict_all(&ref, y0, x0, h, w, a, NULL);
            mmp_predict_all(&ov, y0, x0, h, w, b, NULL);
            assert_memory_equal(a, b, sizeof(int32_t) * MMP_NUM_MODES * h * w);
        }
        plane_free(&ref);
        plane_free(&ov);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_plane),
        cmocka_unit_test(test_vertical_columns),
        cmocka_unit_test(test_horizontal_rows),
        cmocka_unit_test(test_dc_value),
        cmocka_unit_test(test_all_shapes),
        cmocka_unit_test(test_edge_top_left),
        cmocka_unit_test(test_edge_first_row),
        cmocka_unit_test(test_edge_first_column),
        cmocka_unit_test(test_edge_only_corner),
        cmocka_unit_test(test_edge_right),
        cmocka_unit_test(test_inside_above_right_unavailable),
        cmocka_unit_test(test_below_left),
        cmocka_unit_test(test_h264_4x4),
        cmocka_unit_test(test_hand_values),
        cmocka_unit_test(test_random_consistency),
        cmocka_unit_test(test_cfl_line),
        cmocka_unit_test(test_range_16bit),
        cmocka_unit_test(test_overlay_equivalence),
        cmocka_unit_test(test_lsp_ramp_exact),
        cmocka_unit_test(test_lsp_constant),
        cmocka_unit_test(test_lsp_fallback),
        cmocka_unit_test(test_block_pixels_ignored),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
