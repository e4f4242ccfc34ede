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

/* The sample at normal coordinate t on line l, the nearest one inside. */
static inline int32_t *sample(const edge_pass *p, int l, int t)
{
    t = clampi(t, 0, p->n_normal - 1);
    return p->vertical ? p->pix + (long)l * p->stride + t : p->pix + (long)t * p->stride + l;
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
 * q_0, p_i = b[-(i + 1) step], q_i = b[i step]; o, unless NULL, at the
 * original of q_0, for the change in squared error. */
static inline __attribute__((always_inline)) void filter_line(edge_pass *p, int32_t *b, long step,
                                                              int K, const int32_t *o)
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
        if (o) {
            const int64_t op = o[-(i + 1) * step], oq = o[i * step];
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
    const int32_t *o = p->orig ? p->orig + (b - p->pix) : NULL;
    k = decide(p, b, b + 3 * across, step, k);
    for (int j = 0; j < 4 && k; j++, b += across, o = o ? o + across : NULL)
        switch (k) {
        case 1: filter_line(p, b, step, 1, o); break;
        case 2: filter_line(p, b, step, 2, o); break;
        case 4: filter_line(p, b, step, 4, o); break;
        default: filter_line(p, b, step, 8, o); break;
        }
}

/*
 * The same near the plane's sides: the segment's lines copied out with the
 * nearest sample inside in place of those outside (the decision's last
 * line past the plane is the plane's last), filtered there by the same
 * decision and lines, and the samples inside the plane written back.
 */
static void filter_near_side(edge_pass *p, int e, int l0, int k, int reach)
{
    enum { C = 2 * MAX_REACH }; /* q_0's place in a line's copy */
    int32_t line[4][2 * C];
    for (int j = 0; j < 4; j++) {
        const int l = l0 + j < p->n_along ? l0 + j : p->n_along - 1;
        for (int i = -reach; i < reach; i++)
            line[j][C + i] = *sample(p, l, e + i);
    }
    k = decide(p, line[0] + C, line[3] + C, 1, k);
    for (int j = 0; j < 4 && k && l0 + j < p->n_along; j++) {
        int32_t *b = line[j] + C;
        filter_line(p, b, 1, k, NULL);
        for (int i = -k; i < k; i++)
            if (e + i >= 0 && e + i < p->n_normal && b[i] != *sample(p, l0 + j, e + i))
                write_sample(p, l0 + j, e + i, b[i]);
    }
}

static void filter_segment(edge_pass *p, int e, int l0, int n)
{
    const int k = n >= 16 ? 8 : n >= 8 ? 4 : n >= 4 ? 2 : 1;
    const int reach = k >= 4 ? 2 * k - 1 : 3; /* samples read on each side */
    if (e - reach >= 0 && e + reach <= p->n_normal && l0 + 4 <= p->n_along)
        filter_inside(p, e, l0, k);
    else
        filter_near_side(p, e, l0, k, reach);
}

/* Every edge of the pass p->vertical chooses, over the uw x uh units of the
 * plane, in raster order of their segments. */
static void filter_edges(edge_pass *p, const mmp_edges *e, int uw, int uh)
{
    const int v = p->vertical;
    const uint8_t flag = v ? MMP_DB_LEFT : MMP_DB_TOP;
    const long back = v ? 1 : e->uw; /* the unit before the edge */
    const int shift = v ? 0 : 4;      /* the size's nibble across the edge */
    for (int uy = !v; uy < uh; uy++)
        for (int ux = v; ux < uw; ux++) {
            const long u = (long)uy * e->uw + ux;
            if (!(e->flags[u] & flag))
                continue;
            const int a = e->size[u - back] >> shift & 15, b = e->size[u] >> shift & 15;
            filter_segment(p, (v ? ux : uy) << MMP_DB_LOG2_UNIT, (v ? uy : ux) << MMP_DB_LOG2_UNIT,
                           1 << (a < b ? a : b));
        }
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
    filter_edges(&p, e, uw, uh);
    p.vertical = 0;
    p.n_normal = h;
    p.n_along = w;
    filter_edges(&p, e, uw, uh);
    return p.dsse;
}
