/* The residual stage of lossless and near-lossless planes: prediction, quantisation and context coding (docs/format.md 7.6). */
#include "mmp/refine.h"

#include <stdlib.h>
#include <string.h>

#include "common/bits.h"
#include "common/error.h"

/* Energy contexts: the bit length of the local activity in quantiser steps,
 * capped. Bias contexts: energy / 2 times a 6-bit texture pattern. */
#define NE 16
#define NTEX 64
#define NBIAS (NTEX * (NE / 2))
/* A bias context's counts are halved when they reach this, so that the
 * correction follows the image (LOCO-I's reset). */
#define BIAS_RESET 64

typedef struct models {
    mmp_model mag[NE];       /* min(bit length of |q|, 15) */
    mmp_model sign[NE];      /* 0: positive */
    mmp_model top[NE][16];   /* the bit below the leading one, per bit length */
    int32_t bias_sum[NBIAS]; /* sum of (decoded - uncorrected prediction) */
    int32_t bias_cnt[NBIAS];
} models;

/* One traversal for both sides. */
typedef struct coder {
    int encoding;
    mmp_rc_enc *enc;
    mmp_rc_dec *dec;
    const uint16_t *x;    /* the input (encoder only) */
    const uint16_t *base; /* the MMP reconstruction, or NULL */
    uint16_t *out;
    int32_t *err;         /* decoded - prediction, two rows (causal errors) */
    int w, h, maxval, step;
    models *m;
} coder;

static void models_init(models *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < NE; i++) {
        mmp_model_init(&m->mag[i], 16);
        mmp_model_init(&m->sign[i], 2);
        for (int k = 0; k < 16; k++)
            mmp_model_init(&m->top[i][k], 2);
    }
}

static inline int iabs(int v)
{
    return v < 0 ? -v : v;
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* floor(a / b) for b > 0. */
static inline int floor_div(int64_t a, int64_t b)
{
    return (int)(a >= 0 ? a / b : -((-a + b - 1) / b));
}

static int sym(coder *c, mmp_model *m, int v)
{
    if (c->encoding) {
        mmp_model_encode(c->enc, m, v);
        return v;
    }
    return mmp_model_decode(c->dec, m);
}

static int raw_bit(coder *c, int v)
{
    if (c->encoding) {
        mmp_rc_encode(c->enc, (uint32_t)v, 1, 2);
        return v;
    }
    const int b = (int)mmp_rc_decode_freq(c->dec, 2);
    mmp_rc_decode_update(c->dec, (uint32_t)b, 1, 2);
    return b;
}

/* The quantised difference q: its magnitude class, the bit below the leading
 * one with a model, the rest as raw bits, then the sign. */
static int code_q(coder *c, int ctx, int q)
{
    models *m = c->m;
    const unsigned mag = (unsigned)iabs(q);
    int k = c->encoding ? mmp_bit_length(mag) : 0;
    k = sym(c, &m->mag[ctx], k < 15 ? k : 15);
    if (k == 15)
        k += raw_bit(c, c->encoding ? mmp_bit_length(mag) == 16 : 0);
    if (k == 0)
        return 0;
    unsigned v = 1;
    if (k >= 2)
        v = v << 1 | (unsigned)sym(c, &m->top[ctx][k < 16 ? k : 15], (int)(mag >> (k - 2)) & 1);
    for (int b = k - 3; b >= 0; b--)
        v = v << 1 | (unsigned)raw_bit(c, (int)(mag >> b) & 1);
    const int neg = sym(c, &m->sign[ctx], q < 0);
    return neg ? -(int)v : (int)v;
}

/* The causal neighbourhood of (y, x) in the refined samples: outside the
 * plane a neighbour takes the nearest one that exists before (y, x) in
 * raster order (docs/format.md 7.6). */
typedef struct hood {
    int w_, n, nw, ne, ww, nn, nne;
} hood;

static void neighbours(const coder *c, int y, int x, hood *o)
{
    const uint16_t *p = c->out;
    const long W = c->w;
    const long i = (long)y * W + x;
    if (y == 0) {
        const int l = x > 0 ? p[i - 1] : (c->maxval + 1) / 2;
        o->w_ = o->n = o->nw = o->ne = o->nn = o->nne = l;
        o->ww = x > 1 ? p[i - 2] : l;
        return;
    }
    o->n = p[i - W];
    o->w_ = x > 0 ? p[i - 1] : o->n;
    o->nw = x > 0 ? p[i - W - 1] : o->n;
    o->ne = x + 1 < W ? p[i - W + 1] : o->n;
    o->ww = x > 1 ? p[i - 2] : o->w_;
    o->nn = y > 1 ? p[i - 2 * W] : o->n;
    o->nne = y > 1 && x + 1 < W ? p[i - 2 * W + 1] : o->ne;
}

/* The base's sample at (y, x) clamped into the plane. */
static inline int base_at(const coder *c, int y, int x)
{
    y = clampi(y, 0, c->h - 1);
    x = clampi(x, 0, c->w - 1);
    return c->base[(long)y * c->w + x];
}

/* Scales an activity in samples to the 8-bit scale of the contexts' thresholds. */
static inline int threshold(const coder *c, int t8)
{
    return (int)(((int64_t)t8 * (c->maxval + 1) + 128) >> 8);
}

/* The uncorrected prediction of (y, x), its activity and texture pattern. */
static int predict_alone(const coder *c, int y, int x, int ew, int *act, int *tex)
{
    hood o;
    neighbours(c, y, x, &o);
    const int dh = iabs(o.w_ - o.ww) + iabs(o.n - o.nw) + iabs(o.n - o.ne);
    const int dv = iabs(o.w_ - o.nw) + iabs(o.n - o.nn) + iabs(o.ne - o.nne);
    /* CALIC's gradient-adjusted prediction, thresholds on the 8-bit scale. */
    int p;
    if (dv - dh > threshold(c, 80)) {
        p = o.w_;
    } else if (dh - dv > threshold(c, 80)) {
        p = o.n;
    } else {
        p = floor_div(2 * (o.w_ + o.n) + o.ne - o.nw, 4);
        if (dv - dh > threshold(c, 32))
            p = floor_div(p + o.w_, 2);
        else if (dv - dh > threshold(c, 8))
            p = floor_div(3 * p + o.w_, 4);
        else if (dh - dv > threshold(c, 32))
            p = floor_div(p + o.n, 2);
        else if (dh - dv > threshold(c, 8))
            p = floor_div(3 * p + o.n, 4);
    }
    p = clampi(p, 0, c->maxval);
    *act = dh + dv + 2 * iabs(ew);
    *tex = (o.n < p) | (o.w_ < p) << 1 | (o.nw < p) << 2 | (o.ne < p) << 3 |
           (o.nn < p) << 4 | (o.ww < p) << 5;
    return p;
}

/* With a base: the base's sample, its activity over the 3 x 3 neighbourhood
 * (the base is known everywhere), and the causal errors of the base. */
static int predict_base(const coder *c, int y, int x, int ew, int en, int *act, int *tex)
{
    const int b = base_at(c, y, x);
    const int bn = base_at(c, y - 1, x), bs = base_at(c, y + 1, x);
    const int bw = base_at(c, y, x - 1), be = base_at(c, y, x + 1);
    const int p = clampi(b, 0, c->maxval);
    *act = iabs(be - bw) + iabs(bs - bn) + 2 * (iabs(ew) + iabs(en));
    *tex = (bn < b) | (bw < b) << 1 | (bs < b) << 2 | (be < b) << 3 | (ew < 0) << 4 |
           (en < 0) << 5;
    return p;
}

static int code_plane(coder *c)
{
    models *m = c->m;
    const int w = c->w, step = c->step, half = (step - 1) / 2;
    int32_t *prev = c->err, *cur = c->err + w;
    memset(prev, 0, sizeof(int32_t) * (size_t)w);
    for (int y = 0; y < c->h; y++) {
        for (int x = 0; x < w; x++) {
            const int ew = x > 0 ? cur[x - 1] : prev[x], en = prev[x];
            int act, tex;
            const int p0 = c->base ? predict_base(c, y, x, ew, en, &act, &tex)
                                   : predict_alone(c, y, x, ew, &act, &tex);
            int e = act / step;
            e = mmp_bit_length((uint64_t)e);
            const int ectx = e < NE ? e : NE - 1;
            const int bctx = tex * (NE / 2) + ectx / 2;
            const int n = m->bias_cnt[bctx];
            const int corr = n ? floor_div(2 * (int64_t)m->bias_sum[bctx] + n, 2 * (int64_t)n) : 0;
            const int p = clampi(p0 + corr, 0, c->maxval);
            const long i = (long)y * w + x;
            int q = 0;
            if (c->encoding) {
                const int d = c->x[i] - p;
                q = d >= 0 ? (d + half) / step : -((-d + half) / step);
            }
            q = code_q(c, ectx, q);
            const int v = p + q * step;
            if (v < -half || v > c->maxval + half)
                return MMP_EBITSTREAM;
            c->out[i] = (uint16_t)clampi(v, 0, c->maxval);
            const int d = c->out[i] - p0;
            cur[x] = c->out[i] - (c->base ? c->base[i] : p);
            m->bias_sum[bctx] += d;
            if (++m->bias_cnt[bctx] >= BIAS_RESET) {
                m->bias_sum[bctx] = floor_div(m->bias_sum[bctx], 2);
                m->bias_cnt[bctx] /= 2;
            }
        }
        if (!c->encoding && c->dec->overrun)
            return MMP_EBITSTREAM;
        int32_t *t = prev;
        prev = cur;
        cur = t;
    }
    return 0;
}

static int run(coder *c)
{
    c->m = malloc(sizeof *c->m);
    c->err = malloc(sizeof(int32_t) * 2 * (size_t)c->w);
    int err = MMP_ENOMEM;
    if (c->m && c->err) {
        models_init(c->m);
        err = code_plane(c);
    }
    free(c->m);
    free(c->err);
    return err;
}

int mmp_refine_encode(mmp_rc_enc *e, const uint16_t *x, const uint16_t *base, uint16_t *out,
                      int w, int h, int maxval, int max_error)
{
    coder c = {.encoding = 1, .enc = e, .x = x, .base = base, .out = out, .w = w, .h = h,
               .maxval = maxval, .step = 2 * max_error + 1};
    return run(&c);
}

int mmp_refine_decode(mmp_rc_dec *d, const uint16_t *base, uint16_t *out, int w, int h,
                      int maxval, int max_error)
{
    coder c = {.encoding = 0, .dec = d, .base = base, .out = out, .w = w, .h = h,
               .maxval = maxval, .step = 2 * max_error + 1};
    return run(&c);
}
