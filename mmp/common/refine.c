/* The residual stage of lossless and near-lossless planes: prediction, quantisation and context coding (docs/format.md 7.6). */
#include "mmp/common/refine.h"

#include <stdlib.h>
#include <string.h>

#include "common/arith.h"
#include "common/bits.h"
#include "common/container.h"
#include "common/error.h"
#include "mmp/common/refine_mix.h"

/* Energy contexts: the bit length of the local activity in quantiser steps,
 * capped. Bias contexts: energy / 2 times a 6-bit texture pattern. */
#define NE 20
#define NTEX 64
#define NBIAS (NTEX * (NE / 2))
/* A bias context's counts are halved when they reach this, so that the
 * correction follows the image (LOCO-I's reset). */
#define BIAS_RESET 64

/* The blend of the candidate predictors: for each context the decayed sum of
 * each one's absolute errors, which weighs it (1 / (1 + sum)^2: the one that
 * has been exact dominates, as on repeated samples). Contexts: 4 equality
 * bits of the neighbourhood (which catch repeated samples and flat runs)
 * times 4 energy classes. Nine candidates, and with the residual context
 * (format 1.3) a tenth: the nine blended by their errors at the nearest
 * samples, which follows an edge within the run of one context. */
#define NBASE 9
#define NPRED 10
#define NSEL (16 * 4)
#define SEL_DECAY 32

typedef struct models {
    int32_t sel_err[NSEL][NPRED];
    int32_t sel_cnt[NSEL];
    mmp_model mag[NE * 3];   /* min(bit length of |q|, 15), per energy and fit class */
    mmp_model sign[NE * 3];  /* 0: positive; per energy and the sign of the correction */
    mmp_model top[NE][16];   /* the bit below the leading one, per bit length */
    mmp_model top2[NE][16];  /* the next bit, per bit length */
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
    int use_mix; /* 1: q through the mixing coder (format 1.2) */
    int context; /* 1: the residual context (format 1.3): the local blend and
                  * the mixing coder's sets dev and guide */
    int npred;   /* the candidates: NBASE, or NPRED with the residual context */
    const uint16_t *guide; /* the previous plane's decoded samples, or NULL */
    int32_t *cerr; /* the residual context: |decoded - candidate k| of the
                    * last two rows, row r of candidate k at (2 k + r) w */
    models *m;
    mmp_rmix *mix;
} coder;

static void models_init(models *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < NE * 3; i++)
        mmp_model_init(&m->mag[i], 16);
    for (int i = 0; i < NE * 3; i++)
        mmp_model_init(&m->sign[i], 2);
    for (int i = 0; i < NE; i++) {
        for (int k = 0; k < 16; k++) {
            mmp_model_init(&m->top[i][k], 2);
            mmp_model_init(&m->top2[i][k], 2);
        }
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

/* floor(a / b) for b > 0, as an int. */
static inline int floor_div(int64_t a, int64_t b)
{
    return (int)mmp_floor_div(a, b);
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
        mmp_rc_encode_bit(c->enc, v);
        return v;
    }
    return mmp_rc_decode_bit(c->dec);
}

/* The quantised difference q: its magnitude class, the bit below the leading
 * one with a model, the rest as raw bits, then the sign. */
static int code_q(coder *c, int ctx, int fit, int sctx, int q)
{
    models *m = c->m;
    const unsigned mag = (unsigned)iabs(q);
    int k = c->encoding ? mmp_bit_length(mag) : 0;
    k = sym(c, &m->mag[fit * NE + ctx], k < 15 ? k : 15);
    if (k == 15)
        k += raw_bit(c, c->encoding ? mmp_bit_length(mag) == 16 : 0);
    if (k == 0)
        return 0;
    unsigned v = 1;
    if (k >= 2)
        v = v << 1 | (unsigned)sym(c, &m->top[ctx][k < 16 ? k : 15], (int)(mag >> (k - 2)) & 1);
    if (k >= 3)
        v = v << 1 | (unsigned)sym(c, &m->top2[ctx][k < 16 ? k : 15], (int)(mag >> (k - 3)) & 1);
    for (int b = k - 4; b >= 0; b--)
        v = v << 1 | (unsigned)raw_bit(c, (int)(mag >> b) & 1);
    const int neg = sym(c, &m->sign[sctx * NE + ctx], q < 0);
    return neg ? -(int)v : (int)v;
}

/* The residual context's index of v, a candidate's deviation from p:
 * sign times min(bl(floor(|v| / step)), 3), as 0 .. 6. */
static int deviation(int v, int step)
{
    const int a = mmp_bit_length((uint64_t)(iabs(v) / step));
    const int m = a < 3 ? a : 3;
    return v < 0 ? 3 - m : 3 + m;
}

/* What the mixing coder's features come from, for one sample. */
typedef struct mix_in {
    int act;
    const int *cand; /* the candidates, NULL with a base */
    int ew, en, enw, ene;
    int p, fit, ectx, sctx, tex;
} mix_in;

static inline int sign3(int v)
{
    return v > 0 ? 2 : v < 0 ? 1 : 0;
}

/* The guide feature: the previous plane's sample at (y, x) less its median
 * prediction from w, n and nw there (w alone on the first row, n alone in
 * the first column), as 3 times qlog(floor(|d| / step)) / 2 (0 .. 31) plus
 * its sign class, times 8, plus la / 8. */
static int guide_index(const coder *c, int y, int x, int la)
{
    const uint16_t *g = c->guide;
    const long W = c->w, i = (long)y * W + x;
    int pr;
    if (y == 0) {
        pr = x > 0 ? g[i - 1] : g[i];
    } else if (x == 0) {
        pr = g[i - W];
    } else {
        const int a = g[i - 1], b = g[i - W], nw = g[i - W - 1];
        const int hi = a > b ? a : b, lo = a < b ? a : b;
        pr = nw >= hi ? lo : nw <= lo ? hi : a + b - nw;
    }
    const int d = g[i] - pr;
    const int m = mmp_rmix_qlog((uint64_t)(iabs(d) / c->step)) >> 1;
    return (m * 3 + sign3(d)) * 8 + (la >> 3);
}

/* q through the mixing coder, with the features of docs/format.md 7.6. */
static int code_q_mix(coder *c, int y, int x, const mix_in *in, int q)
{
    const int step = c->step;
    int spread = 0;
    if (in->cand) {
        int lo = in->cand[0], hi = in->cand[0];
        for (int k = 1; k < NBASE; k++) { /* the tenth lies between them */
            lo = in->cand[k] < lo ? in->cand[k] : lo;
            hi = in->cand[k] > hi ? in->cand[k] : hi;
        }
        spread = hi - lo;
    }
    const int64_t errs = 2 * (int64_t)iabs(in->ew) + 2 * (int64_t)iabs(in->en) +
                         iabs(in->enw) + iabs(in->ene);
    const int la = mmp_rmix_qlog((uint64_t)(in->act / step));
    int dev = 0;
    if (c->context && in->cand) {
        const int *k = in->cand, p = in->p;
        dev = ((deviation(k[1] - p, step) * 7 + deviation(k[2] - p, step)) * 7 +
               deviation(k[3] - p, step)) * 7 + deviation(k[4] - p, step);
    }
    const mmp_rmix_feat f = {
        .la = la,
        .ls = mmp_rmix_qlog((uint64_t)(spread / step)),
        .le = mmp_rmix_qlog((uint64_t)(errs / (2 * step))),
        .fit = in->fit,
        .ectx = in->ectx,
        .sctx = in->sctx,
        .tex = in->tex,
        .sgn = 27 * sign3(in->ew) + 9 * sign3(in->en) + 3 * sign3(in->enw) + sign3(in->ene),
        .level = (int)((int64_t)in->p * 32 / ((int64_t)c->maxval + 1)),
        .region = (int)((int64_t)y * 32 / c->h) * 32 + (int)((int64_t)x * 32 / c->w),
        .dev = dev,
        .guide = c->context && c->guide ? guide_index(c, y, x, la) : 0,
    };
    return mmp_rmix_code(c->mix, c->encoding ? c->enc : NULL, c->dec, &f, q);
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

/* CALIC's gradient-adjusted prediction, thresholds on the 8-bit scale. */
static int gap(const coder *c, const hood *h, int dh, int dv)
{
    const hood o = *h;
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
    return clampi(p, 0, c->maxval);
}

/* The candidates of the blend: GAP, the four neighbours, the plane through
 * w, n and nw, the mean of w and ne, and the two linear extrapolations. */
static void candidates(const coder *c, const hood *o, int dh, int dv, int *cand)
{
    cand[0] = gap(c, o, dh, dv);
    cand[1] = o->w_;
    cand[2] = o->n;
    cand[3] = o->nw;
    cand[4] = o->ne;
    cand[5] = clampi(o->w_ + o->n - o->nw, 0, c->maxval);
    cand[6] = floor_div(o->w_ + o->ne, 2);
    cand[7] = clampi(2 * o->n - o->nn, 0, c->maxval);
    cand[8] = clampi(2 * o->w_ - o->ww, 0, c->maxval);
}

/* The residual context's tenth candidate: the nine weighed by 1 / (1 + L)^3,
 * L the sum of a candidate's absolute errors at w, ww, n, nw and ne, where
 * they lie in the plane (nw and ne take n's at the plane's sides). */
static int local_blend(const coder *c, int y, int x, const int *cand)
{
    const int W = c->w;
    int64_t num = 0, den = 0;
    for (int k = 0; k < NBASE; k++) {
        const int32_t *cur = c->cerr + ((size_t)2 * k + (y & 1)) * (size_t)W;
        const int32_t *up = c->cerr + ((size_t)2 * k + (~y & 1)) * (size_t)W;
        int64_t l = 0;
        if (x > 0)
            l += cur[x - 1];
        if (x > 1)
            l += cur[x - 2];
        if (y > 0)
            l += up[x] + up[x > 0 ? x - 1 : x] + up[x + 1 < W ? x + 1 : x];
        const int64_t e = 1 + l;
        const int64_t wk = ((int64_t)1 << 40) / (e * e * e) + 1;
        num += wk * cand[k];
        den += wk;
    }
    return (int)((num + den / 2) / den);
}

/* The uncorrected prediction of (y, x), its activity and texture pattern;
 * *sel gets the selection context, cand the candidates' predictions. */
static int predict_alone(const coder *c, int y, int x, int ew, int *act, int *tex, int *sel,
                         int *cand, int *fit)
{
    hood o;
    neighbours(c, y, x, &o);
    const int dh = iabs(o.w_ - o.ww) + iabs(o.n - o.nw) + iabs(o.n - o.ne);
    const int dv = iabs(o.w_ - o.nw) + iabs(o.n - o.nn) + iabs(o.ne - o.nne);
    candidates(c, &o, dh, dv, cand);
    *act = dh + dv + 2 * iabs(ew);
    const int eq = (o.w_ == o.ww) | (o.n == o.nn) << 1 | (o.nw == o.n) << 2 | (o.w_ == o.nw) << 3;
    const int a = mmp_bit_length((uint64_t)(*act / c->step) * 256 / ((uint64_t)c->maxval + 1)) / 2;
    *sel = eq * 4 + (a < 3 ? a : 3);
    if (c->context)
        cand[NBASE] = local_blend(c, y, x, cand);
    const int32_t *se = c->m->sel_err[*sel];
    int best = 0;
    for (int k = 1; k < c->npred; k++)
        if (se[k] < se[best])
            best = k;
    int64_t num = 0, den = 0;
    for (int k = 0; k < c->npred; k++) {
        const int64_t e1 = 1 + (int64_t)se[k];
        const int64_t wk = ((int64_t)1 << 40) / (e1 * e1) + 1;
        num += wk * cand[k];
        den += wk;
    }
    const int p = (int)((num + den / 2) / den);
    /* How well the winner has done here: its mean error under a quarter of
     * a step, under two steps, or more. */
    const int64_t mean4 = 4 * (int64_t)se[best], n = c->m->sel_cnt[*sel] * (int64_t)c->step;
    *fit = mean4 < n ? 0 : mean4 < 8 * n ? 1 : 2;
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
            int act, tex, sel = -1, cand[NPRED], fit = 1;
            const int p0 = c->base ? predict_base(c, y, x, ew, en, &act, &tex)
                                   : predict_alone(c, y, x, ew, &act, &tex, &sel, cand, &fit);
            int e = act / step;
            e = mmp_bit_length((uint64_t)e);
            const int ectx = e < NE ? e : NE - 1;
            const int bctx = tex * (NE / 2) + ectx / 2;
            /* A predictor that has been exact here is left alone: the bias of
             * its context comes from samples it does not predict as well. */
            const int n = fit ? m->bias_cnt[bctx] : 0;
            const int corr = n ? floor_div(2 * (int64_t)m->bias_sum[bctx] + n, 2 * (int64_t)n) : 0;
            const int p = clampi(p0 + corr, 0, c->maxval);
            const long i = (long)y * w + x;
            int q = 0;
            if (c->encoding) {
                const int d = c->x[i] - p;
                q = d >= 0 ? (d + half) / step : -((-d + half) / step);
            }
            const int sctx = corr > 0 ? 1 : corr < 0 ? 2 : 0;
            if (c->mix)
                q = code_q_mix(c, y, x, &(const mix_in){act, sel >= 0 ? cand : NULL, ew, en,
                                                        x > 0 ? prev[x - 1] : en,
                                                        x + 1 < w ? prev[x + 1] : en, p, fit,
                                                        ectx, sctx, tex},
                               q);
            else
                q = code_q(c, ectx, fit, sctx, q);
            const int64_t v = p + (int64_t)q * step;
            if (v < -half || v > c->maxval + half)
                return MMP_EBITSTREAM;
            c->out[i] = (uint16_t)(v < 0 ? 0 : v > c->maxval ? c->maxval : v);
            const int d = c->out[i] - p0;
            cur[x] = c->out[i] - (c->base ? c->base[i] : p);
            if (sel >= 0) {
                int32_t *se = m->sel_err[sel];
                for (int k = 0; k < c->npred; k++)
                    se[k] += iabs(c->out[i] - cand[k]);
                if (c->cerr)
                    for (int k = 0; k < NBASE; k++)
                        c->cerr[((size_t)2 * k + (y & 1)) * (size_t)w + x] =
                            iabs(c->out[i] - cand[k]);
                if (++m->sel_cnt[sel] >= SEL_DECAY) {
                    for (int k = 0; k < c->npred; k++)
                        se[k] = se[k] * 3 / 4;
                    m->sel_cnt[sel] = SEL_DECAY * 3 / 4;
                }
            }
            if (fit == 0)
                continue;
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
    const int local = c->context && !c->base;
    c->npred = local ? NPRED : NBASE;
    c->m = malloc(sizeof *c->m);
    c->err = malloc(sizeof(int32_t) * 2 * (size_t)c->w);
    c->cerr = local ? calloc((size_t)2 * NBASE * (size_t)c->w, sizeof(int32_t)) : NULL;
    c->mix = c->use_mix ? mmp_rmix_new(c->context) : NULL;
    int err = MMP_ENOMEM;
    if (c->m && c->err && (c->cerr || !local) && (c->mix || !c->use_mix)) {
        models_init(c->m);
        err = code_plane(c);
    }
    free(c->m);
    free(c->err);
    free(c->cerr);
    mmp_rmix_free(c->mix);
    c->m = NULL;
    c->err = NULL;
    c->cerr = NULL;
    c->mix = NULL;
    return err;
}

/* Lossless planes without a base that use few of their levels: when at least
 * an eighth of [0, maxval] never occurs, the plane is coded as the ranks of
 * its samples among the levels that occur, which the payload lists first. */
static int worth_mapping(int used, int maxval)
{
    return (int64_t)used * 8 <= (int64_t)(maxval + 1) * 7;
}

/* The map's syntax: a raw bit (1: mapped), then for each level 0..maxval
 * whether it occurs, with a model per the previous level's answer. Fills
 * rank[] (level to rank) and level[] (rank to level); returns the number of
 * levels used, 0 for no map, or a negative error. */
static int code_map(coder *c, uint8_t *used, uint16_t *level)
{
    const int mapped = raw_bit(c, c->encoding ? used[c->maxval + 1] : 0);
    if (!mapped)
        return 0;
    mmp_model m[2];
    mmp_model_init(&m[0], 2);
    mmp_model_init(&m[1], 2);
    int n = 0, prev = 0;
    for (int v = 0; v <= c->maxval; v++) {
        prev = sym(c, &m[prev], c->encoding ? used[v] : 0);
        used[v] = (uint8_t)prev;
        if (prev)
            level[n++] = (uint16_t)v;
        if (!c->encoding && (v & 1023) == 0 && c->dec->overrun)
            return MMP_EBITSTREAM;
    }
    return n ? n : MMP_EBITSTREAM;
}

/* A lossless plane without a base, through the map when it has one. */
static int run_alone_lossless(coder *c)
{
    const size_t n = (size_t)c->w * c->h;
    uint8_t *used = calloc((size_t)c->maxval + 2, 1);
    uint16_t *level = malloc(sizeof(uint16_t) * ((size_t)c->maxval + 1));
    uint16_t *rank = malloc(sizeof(uint16_t) * ((size_t)c->maxval + 1));
    uint16_t *xr = c->encoding ? malloc(sizeof(uint16_t) * n) : NULL;
    int err = MMP_ENOMEM;
    if (!used || !level || !rank || (c->encoding && !xr))
        goto done;
    if (c->encoding) {
        int count = 0;
        for (size_t i = 0; i < n; i++)
            used[c->x[i]] = 1;
        for (int v = 0; v <= c->maxval; v++)
            count += used[v];
        used[c->maxval + 1] = (uint8_t)worth_mapping(count, c->maxval);
    }
    const int levels = code_map(c, used, level);
    if (levels < 0) {
        err = levels;
        goto done;
    }
    if (levels == 0) {
        err = run(c);
        goto done;
    }
    for (int r = 0; r < levels; r++)
        rank[level[r]] = (uint16_t)r;
    coder cr = *c;
    cr.maxval = levels - 1;
    if (c->encoding) {
        for (size_t i = 0; i < n; i++)
            xr[i] = rank[c->x[i]];
        cr.x = xr;
    }
    if (!(err = run(&cr)))
        for (size_t i = 0; i < n; i++)
            c->out[i] = level[c->out[i]];
done:
    free(used);
    free(level);
    free(rank);
    free(xr);
    return err;
}

int mmp_refine_tools(uint32_t head_tools)
{
    return ((head_tools & MMP_TOOL_RESIDUAL_MIX) ? MMP_REFINE_MIX : 0) |
           ((head_tools & MMP_TOOL_RESIDUAL_CONTEXT) ? MMP_REFINE_CONTEXT : 0);
}

const uint16_t *mmp_refine_guide(const mmp_layout *l, uint16_t *const *planes, int p)
{
    return p > 0 && l->w[p - 1] == l->w[p] && l->h[p - 1] == l->h[p] ? planes[p - 1] : NULL;
}

/* The tools' coder: the residual context only with the mixing coder. */
static coder make_coder(const uint16_t *base, const uint16_t *guide, uint16_t *out, int w,
                        int h, int maxval, int max_error, int tools)
{
    const int mix = (tools & MMP_REFINE_MIX) != 0;
    const int context = mix && (tools & MMP_REFINE_CONTEXT);
    return (coder){.base = base, .out = out, .w = w, .h = h, .maxval = maxval,
                   .step = 2 * max_error + 1, .use_mix = mix, .context = context,
                   .guide = context ? guide : NULL};
}

int mmp_refine_encode(mmp_rc_enc *e, const uint16_t *x, const uint16_t *base,
                      const uint16_t *guide, uint16_t *out, int w, int h, int maxval,
                      int max_error, int tools)
{
    coder c = make_coder(base, guide, out, w, h, maxval, max_error, tools);
    c.encoding = 1;
    c.enc = e;
    c.x = x;
    return base || max_error ? run(&c) : run_alone_lossless(&c);
}

int mmp_refine_decode(mmp_rc_dec *d, const uint16_t *base, const uint16_t *guide, uint16_t *out,
                      int w, int h, int maxval, int max_error, int tools)
{
    coder c = make_coder(base, guide, out, w, h, maxval, max_error, tools);
    c.dec = d;
    return base || max_error ? run(&c) : run_alone_lossless(&c);
}
