/* The deblocking filter (filter/deblock.h, docs/format.md section 7.7). */
#include "filter/deblock.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

int mmp_edges_init(mmp_edges *e, int pw, int ph)
{
    e->uw = pw >> MMP_DB_LOG2_UNIT;
    e->uh = ph >> MMP_DB_LOG2_UNIT;
    const size_t n = (size_t)e->uw * (size_t)e->uh;
    e->flags = calloc(n ? n : 1, 1);
    e->size = malloc(n ? n : 1);
    if (!e->flags || !e->size) {
        mmp_edges_free(e);
        return MMP_ENOMEM;
    }
    memset(e->size, 0x44, n);
    return 0;
}

void mmp_edges_free(mmp_edges *e)
{
    free(e->flags);
    free(e->size);
    e->flags = e->size = NULL;
}

/* ---- syntax: equiprobable bits, most significant first ---- */

static void put_bits(mmp_rc_enc *rc, uint32_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        mmp_rc_encode_bit(rc, (int)(v >> i & 1));
}

static int get_bits(mmp_rc_dec *rc, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v << 1 | mmp_rc_decode_bit(rc);
    return v;
}

void mmp_deblock_write(mmp_rc_enc *rc, const mmp_deblock *d)
{
    put_bits(rc, d->enabled != 0, 1);
    if (d->enabled) {
        put_bits(rc, (uint32_t)d->tc, MMP_DB_BITS);
        put_bits(rc, (uint32_t)d->beta, MMP_DB_BITS);
    }
}

void mmp_deblock_read(mmp_rc_dec *rc, mmp_deblock *d)
{
    d->enabled = get_bits(rc, 1);
    d->tc = d->enabled ? get_bits(rc, MMP_DB_BITS) : 0;
    d->beta = d->enabled ? get_bits(rc, MMP_DB_BITS) : 0;
}

/* ---- filtering ---- */

/* The longest reach: samples changed on each side of an edge. */
#define MAX_REACH 8

typedef struct edge_pass {
    int32_t *pix;
    const int32_t *orig;
    int stride;
    int vertical;    /* 1: edges between columns; 0: between rows */
    int n_normal;    /* samples across the edges (w for vertical edges, else h) */
    int n_along;     /* samples along them */
    int64_t maxval, tc, beta;
    int64_t dsse;
} edge_pass;

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static inline int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* floor(n / d) for d > 0. */
static inline int64_t floor_div(int64_t n, int64_t d)
{
    return n >= 0 ? n / d : -((-n + d - 1) / d);
}

/* The sample at normal coordinate t on line l, the nearest one inside. */
static inline int32_t *sample(const edge_pass *p, int l, int t)
{
    t = clampi(t, 0, p->n_normal - 1);
    return p->vertical ? p->pix + (long)l * p->stride + t : p->pix + (long)t * p->stride + l;
}

/* Line l's samples across the edge at t = e: p[i] at e - 1 - i, q[i] at e + i. */
static void read_line(const edge_pass *p, int l, int e, int n, int64_t *ps, int64_t *qs)
{
    for (int i = 0; i < n; i++) {
        ps[i] = *sample(p, l, e - 1 - i);
        qs[i] = *sample(p, l, e + i);
    }
}

static void write_sample(edge_pass *p, int l, int t, int64_t v)
{
    if (t < 0 || t >= p->n_normal)
        return;
    int32_t *s = sample(p, l, t);
    if (p->orig) {
        const long at = s - p->pix;
        const int64_t o = p->orig[at], before = o - *s, after = o - v;
        p->dsse += after * after - before * before;
    }
    *s = (int32_t)v;
}

/* A line's new samples at reach K (a constant where inlined): b points at
 * q_0, p_i = b[-(i + 1) step], q_i = b[i step]; none of them outside the
 * plane. */
static inline __attribute__((always_inline)) void filter_line(edge_pass *p, int32_t *b, long step,
                                                              int K)
{
    const int32_t s = 9 * (b[0] - b[-step]) - 3 * (b[step] - b[-2 * step]);
    if ((s < 0 ? -(int64_t)s : s) >= 160 * p->tc)
        return;
    const int32_t tc = (int32_t)p->tc, m = (int32_t)p->maxval;
    for (int i = 0; i < K; i++) {
        const int32_t num = s * (2 * K - 2 * i - 1) + 12 * K;
        int32_t c = num >= 0 ? num / (24 * K) : -((-num + 24 * K - 1) / (24 * K));
        c = c < -tc ? -tc : c > tc ? tc : c;
        if (!c)
            continue;
        int32_t *ps = b - (i + 1) * step, *qs = b + i * step;
        int32_t pv = *ps + c, qv = *qs - c;
        pv = pv < 0 ? 0 : pv > m ? m : pv;
        qv = qv < 0 ? 0 : qv > m ? m : qv;
        if (p->orig) {
            const int64_t op = p->orig[ps - p->pix], oq = p->orig[qs - p->pix];
            p->dsse += (op - pv) * (op - pv) - (op - *ps) * (op - *ps);
            p->dsse += (oq - qv) * (oq - qv) - (oq - *qs) * (oq - *qs);
        }
        *ps = pv;
        *qs = qv;
    }
}

/* The segment's decision on lines b0 and b3 (pointers at their q_0):
 * the reach to filter with, or 0 to leave it. */
static int decide(const edge_pass *p, const int32_t *b0, const int32_t *b3, long step, int k)
{
    int64_t d = 0, flat = 0;
    const int32_t *b = b0;
    for (int j = 0; j < 2; j++, b = b3)
        d += labs((long)b[-3 * step] - 2L * b[-2 * step] + b[-step]) +
             labs((long)b[2 * step] - 2L * b[step] + b[0]);
    if (d >= p->beta)
        return 0;
    b = b0;
    for (int j = 0; j < 2 && k >= 4; j++, b = b3)
        flat += labs((long)b[-step] - 2L * b[-k * step] + b[-(2 * k - 1) * step]) +
                labs((long)b[0] - 2L * b[(k - 1) * step] + b[(2 * k - 2) * step]);
    /* Long reaches only where both sides are much smoother than the
     * general test asks (docs/tuning.md, "Deblocking filter"). */
    if (k >= 4 && (16 * d >= p->beta || 8 * flat >= p->beta))
        return 2;
    return k;
}

/*
 * The segment of 4 lines l0 .. l0 + 3 across the edge at e, whose leaves
 * allow the reach k (before the decision), away from the plane's sides:
 * every sample it reads is inside.
 */
static void filter_inside(edge_pass *p, int e, int l0, int k)
{
    const long step = p->vertical ? 1 : p->stride, across = p->vertical ? p->stride : 1;
    int32_t *b = p->vertical ? p->pix + (long)l0 * p->stride + e : p->pix + (long)e * p->stride + l0;
    k = decide(p, b, b + 3 * across, step, k);
    for (int j = 0; j < 4 && k; j++, b += across)
        switch (k) {
        case 1: filter_line(p, b, step, 1); break;
        case 2: filter_line(p, b, step, 2); break;
        case 4: filter_line(p, b, step, 4); break;
        default: filter_line(p, b, step, 8); break;
        }
}

/*
 * The same near the plane's sides, where reads take the nearest sample
 * inside and writes outside are dropped.
 */
static void filter_near_side(edge_pass *p, int e, int l0, int k)
{
    int64_t ps[2 * MAX_REACH], qs[2 * MAX_REACH];
    int64_t d = 0, flat = 0;
    for (int j = 0; j < 4; j += 3) {
        const int l = l0 + j < p->n_along ? l0 + j : p->n_along - 1;
        read_line(p, l, e, k >= 4 ? 2 * k - 1 : 3, ps, qs);
        d += abs64(ps[2] - 2 * ps[1] + ps[0]) + abs64(qs[2] - 2 * qs[1] + qs[0]);
        if (k >= 4)
            flat += abs64(ps[0] - 2 * ps[k - 1] + ps[2 * k - 2]) +
                    abs64(qs[0] - 2 * qs[k - 1] + qs[2 * k - 2]);
    }
    if (d >= p->beta)
        return;
    if (k >= 4 && (16 * d >= p->beta || 8 * flat >= p->beta))
        k = 2;
    for (int l = l0; l < l0 + 4 && l < p->n_along; l++) {
        read_line(p, l, e, k > 2 ? k : 2, ps, qs);
        const int64_t s = 9 * (qs[0] - ps[0]) - 3 * (qs[1] - ps[1]);
        if (abs64(s) >= 160 * p->tc)
            continue;
        for (int i = 0; i < k; i++) {
            int64_t c = floor_div(s * (2 * k - 2 * i - 1) + 12 * k, 24 * k);
            c = c < -p->tc ? -p->tc : c > p->tc ? p->tc : c;
            if (!c)
                continue;
            const int64_t pv = ps[i] + c, qv = qs[i] - c;
            write_sample(p, l, e - 1 - i, pv < 0 ? 0 : pv > p->maxval ? p->maxval : pv);
            write_sample(p, l, e + i, qv < 0 ? 0 : qv > p->maxval ? p->maxval : qv);
        }
    }
}

static void filter_segment(edge_pass *p, int e, int l0, int n)
{
    const int k = n >= 16 ? 8 : n >= 8 ? 4 : n >= 4 ? 2 : 1;
    const int reach = k >= 4 ? 2 * k - 1 : 3; /* samples read on each side */
    if (e - reach >= 0 && e + reach <= p->n_normal && l0 + 4 <= p->n_along)
        filter_inside(p, e, l0, k);
    else
        filter_near_side(p, e, l0, k);
}

int64_t mmp_deblock_apply(const mmp_deblock *d, const mmp_edges *e, int32_t *pix, int stride,
                          int w, int h, int maxval, const int32_t *orig)
{
    if (!d->enabled)
        return 0;
    const int64_t m = maxval;
    edge_pass p = {.pix = pix, .orig = orig, .stride = stride, .maxval = m,
                   .tc = (d->tc * m + 127) / 255, .beta = (4 * d->beta * m + 127) / 255};
    if (!p.tc)
        return 0;
    const int uw = (w + 3) >> MMP_DB_LOG2_UNIT, uh = (h + 3) >> MMP_DB_LOG2_UNIT;
    p.vertical = 1;
    p.n_normal = w;
    p.n_along = h;
    for (int uy = 0; uy < uh; uy++)
        for (int ux = 1; ux < uw; ux++) {
            const long u = (long)uy * e->uw + ux;
            if (!(e->flags[u] & MMP_DB_LEFT))
                continue;
            const int a = e->size[u - 1] & 15, b = e->size[u] & 15;
            filter_segment(&p, ux << MMP_DB_LOG2_UNIT, uy << MMP_DB_LOG2_UNIT,
                           1 << (a < b ? a : b));
        }
    p.vertical = 0;
    p.n_normal = h;
    p.n_along = w;
    for (int uy = 1; uy < uh; uy++)
        for (int ux = 0; ux < uw; ux++) {
            const long u = (long)uy * e->uw + ux;
            if (!(e->flags[u] & MMP_DB_TOP))
                continue;
            const int a = e->size[u - e->uw] >> 4, b = e->size[u] >> 4;
            filter_segment(&p, uy << MMP_DB_LOG2_UNIT, ux << MMP_DB_LOG2_UNIT,
                           1 << (a < b ? a : b));
        }
    return p.dsse;
}
