/* The encoder's side of the transform residual (see search_tx.h). */
#include "mmp/enc/search_tx.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "common/bits.h"
#include "common/scales.h"

/* RDOQ's decisions use doubles: the same bytes from every build and machine
 * need them evaluated in double precision, as LSP does (predict/lsp.c). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the transform search needs double arithmetic in double precision (FLT_EVAL_METHOD == 0)"
#endif

/* Step = k * sqrt(lambda). HEVC's lambda = 0.57 * 2^((QP - 12) / 3) and
 * Qstep = 2^((QP - 4) / 6) give k = 3.34 for the same J = D + lambda * R;
 * measured on crops (docs/tuning.md, "Transform residual": 2.8, 3.34,
 * 3.9 and 4.5 compared), 3.9 is best: the
 * coarser step suits a tool that competes with the dictionary's patterns. */
#define STEP_K 3.9

int mmp_tx_qi_for_lambda(int64_t lambda_q8)
{
    const double step = STEP_K * sqrt((double)lambda_q8 / 256.0);
    const long qi = step > 0 ? 1 + lround(8.0 * log2(step)) : 1;
    return (int)(qi < 1 ? 1 : qi > MMP_TX_MAX_QI ? MMP_TX_MAX_QI : qi);
}

/*
 * The n-point transform out[k * os] = sum over x < n of T[k * s][x]
 * in[x * is], for k < n, where T is mmp_tx_matrix16 and s = 16 / n (the
 * n-point matrix is every s-th row of the 16-point one, cut to n columns),
 * by even and odd halves: row k of the n-point matrix is symmetric for even
 * k and antisymmetric for odd k (T[k s][n - 1 - x] = (-1)^k T[k s][x]), so
 * the odd rows need the differences in[x] - in[n - 1 - x] of the first half
 * alone, and the even rows are the n / 2-point transform of the sums. The
 * sums are those of the matrix product, exactly (integers), in fewer
 * multiplications. forward_odd makes the odd rows and the sums e.
 */
static inline void forward_odd(const int64_t *in, int is, int n, int s, int64_t *out, int os,
                               int64_t *e)
{
    const int h = n / 2;
    int64_t o[MMP_B / 2];
    for (int x = 0; x < h; x++) {
        e[x] = in[x * is] + in[(n - 1 - x) * is];
        o[x] = in[x * is] - in[(n - 1 - x) * is];
    }
    for (int k = 1; k < n; k += 2) {
        const int8_t *t = mmp_tx_matrix16[k * s];
        int64_t acc = 0;
        for (int x = 0; x < h; x++)
            acc += t[x] * o[x];
        out[k * os] = acc;
    }
}

/* One function per size, so that each one's loops have constant bounds
 * (and unroll); the even rows are the next smaller size's transform of
 * the sums. */
static inline void forward_2(const int64_t *in, int is, int s, int64_t *out, int os)
{
    int64_t e[1];
    forward_odd(in, is, 2, s, out, os, e);
    out[0] = mmp_tx_matrix16[0][0] * e[0];
}

static inline void forward_4(const int64_t *in, int is, int s, int64_t *out, int os)
{
    int64_t e[2];
    forward_odd(in, is, 4, s, out, os, e);
    forward_2(e, 1, 2 * s, out, 2 * os);
}

static inline void forward_8(const int64_t *in, int is, int s, int64_t *out, int os)
{
    int64_t e[4];
    forward_odd(in, is, 8, s, out, os, e);
    forward_4(e, 1, 2 * s, out, 2 * os);
}

static inline void forward_16(const int64_t *in, int is, int s, int64_t *out, int os)
{
    int64_t e[8];
    forward_odd(in, is, 16, s, out, os, e);
    forward_8(e, 1, 2 * s, out, 2 * os);
}

/* The n-point transform (n = 4, 8 or 16) of in[x * is] into out[k * os]. */
static inline void forward_1d(const int64_t *in, int is, int n, int64_t *out, int os)
{
    switch (n) {
    case 16: forward_16(in, is, 1, out, os); break;
    case 8: forward_8(in, is, 2, out, os); break;
    default: forward_4(in, is, 4, out, os);
    }
}

/* mmp_tx_forward of the residual orig - pred (pred NULL: orig). */
static void forward(const int32_t *orig, const int32_t *pred, int a, int b, int64_t *f)
{
    const int h = 1 << a, w = 1 << b;
    int64_t in[MMP_B * MMP_B], g[MMP_B * MMP_B];
    for (int i = 0; i < h * w; i++)
        in[i] = (int64_t)orig[i] - (pred ? pred[i] : 0);
    for (int y = 0; y < h; y++)
        forward_1d(in + y * w, 1, w, g + y * w, 1);
    for (int l = 0; l < w; l++)
        forward_1d(g + l, w, h, f + l, w);
}

void mmp_tx_forward(const int32_t *r, int a, int b, int64_t *f)
{
    forward(r, NULL, a, b, f);
}

/* Gershgorin's bound on the largest eigenvalue of T T^T for the 4-, 8- and
 * 16-point matrices: the largest row sum of |T T^T| (test_zero_sse in
 * tests/test_transform.c tries the bound with the matrices' own rows). */
static const int64_t gersh[3] = {16384, 32840, 66414};

int64_t mmp_tx_zero_sse(int64_t step_q4, int a, int b)
{
    /* |F|^2 <= sum F^2 = |T_h r T_w^T|^2 <= g_h g_w sum r^2, so
     * sum r^2 < den^2 / (4 g_h g_w) gives 2 |F| < den. In doubles den^2 is
     * exact (a step of at most 25 bits times a power of two), the quotient
     * has one rounding, well inside the 2^-20 taken off. */
    const double den = (double)(mmp_tx_leaf_step(step_q4, a, b) << (8 + ((a + b) >> 1)));
    const double g = (double)gersh[a - MMP_LOG2_PMIN] * (double)gersh[b - MMP_LOG2_PMIN];
    const double q = den * den / (4.0 * g) * (1.0 - 0x1p-20);
    return q >= 0x1p62 ? (int64_t)1 << 62 : (int64_t)q;
}

/* Rate in 1/256 bit of magnitude |level| = v >= 1 at magnitude context mc,
 * sign included: the symbols of mmp_tx_code_levels for it. Past the escape,
 * Exp-Golomb's prefix of k ones (a zero after unless k is the most) and k
 * bits; k <= MMP_TX_MAX_PREFIX since v <= MMP_TX_MAX_LEVEL. */
static inline uint64_t mag_rate(const mmp_tx_costs *c, int mc, int v)
{
    if (v - 1 < MMP_TX_ESCAPE)
        return c->mag[mc][v - 1] + (1u << MMP_COST_SHIFT);
    const int kk = mmp_bit_length((uint32_t)(v - MMP_TX_ESCAPE)) - 1;
    uint64_t bits = c->mag[mc][MMP_TX_ESCAPE];
    int k = 0;
    for (; k < MMP_TX_MAX_PREFIX; k++) {
        bits += c->eg[k < MMP_TX_EG_CTX ? k : MMP_TX_EG_CTX - 1][k < kk];
        if (k >= kk)
            break;
    }
    return bits + ((uint64_t)(k + 1) << MMP_COST_SHIFT);
}

/* mmp_tx_code_levels' traversal in its cost direction, symbol for symbol,
 * without its coding and decoding branches, and stopped once past `most`
 * (every symbol's cost is at least zero). */
uint64_t mmp_tx_rate(const mmp_tx_costs *c, const int32_t *level, int a, int b,
                     const uint16_t *scan, int last, uint64_t most)
{
    const int w = 1 << b, area = 1 << (a + b), ps = mmp_pscale(a, b);
    const int size_class = mmp_tx_size_class(area);
    uint64_t bits = c->cbf[ps][last >= 0];
    if (last < 0)
        return bits;
    const int g = mmp_bit_length((uint32_t)last);
    bits += c->last[ps][g] + (g >= 2 ? (uint64_t)(g - 1) << MMP_COST_SHIFT : 0);
    /* The leaf's rows and the two below, which the contexts read. */
    uint8_t mag[MMP_TX_PAD * MMP_TX_PAD];
    memset(mag, 0, (size_t)MMP_TX_PAD * ((1 << a) + 2));
    for (int i = last; i >= 0; i--) {
        const int pos = scan[i], y = pos >> b, x = pos & (w - 1);
        const int v = level[pos];
        const uint8_t *t = mag + y * MMP_TX_PAD + x;
        const int dg = y + x;
        if (i < last) {
            bits += c->sig[mmp_tx_sig_ctx(size_class, dg, t)][v != 0];
            if (!v)
                continue;
        }
        const int mc = mmp_tx_mag_ctx(size_class, dg, t);
        const int absv = v < 0 ? -v : v;
        bits += mag_rate(c, mc, absv);
        mag[y * MMP_TX_PAD + x] = (uint8_t)(absv < 15 ? absv : 15);
        if (bits > most)
            return bits;
    }
    return bits;
}

/*
 * Rate-distortion optimised quantisation (into lv; returns the scan index of
 * the last level not zero, or -1): from the rounded levels, whose last not
 * zero is at scan index last0 (or -1: the last of 2 |F| >= den, which is
 * floor(x + 0.5) > 0 for x = |F| / den exactly: den < 2^45, so where
 * 2 |F| < den, x is at most 1/2 - 2^-46 and x + 0.5 rounds below 1), in
 * reverse scan order each level may become one less or zero, whichever
 * lowers distortion (in the transform domain) plus lambda times its rate
 * under the frozen costs with the contexts of the levels already decided;
 * then the last position (or none) of least cost. The contexts mirror
 * mmp_tx_code_levels; the caller measures the result exactly, so an
 * approximation here can only cost efficiency, never correctness.
 */
static int rdoq(const mmp_tx_search *t, const int64_t *f, int64_t den, int64_t step, int a,
                int b, int last0, int32_t *lv)
{
    const int area = 1 << (a + b), w = 1 << b, ps = mmp_pscale(a, b);
    const int size_class = mmp_tx_size_class(area);
    const mmp_tx_costs *c = t->cost;
    const uint16_t *scan = mmp_tx_scan_of(t->scans, a, b);
    /* J units: squared error << 16 against lambda_q8 times 1/256 bits; one
     * level is step / 16 (over sqrt(2) for odd a + b) in orthonormal units. */
    const double wgt = (double)step * (double)step / (256.0 * ((a + b) & 1 ? 2 : 1)) * 65536.0;
    const double lam = (double)t->lambda_q8;
    double x[MMP_B * MMP_B];
    memset(lv, 0, sizeof(int32_t) * area);
    if (last0 < 0)
        return -1;
    for (int i = 0; i <= last0; i++) {
        const int pos = scan[i];
        x[i] = (double)(f[pos] < 0 ? -f[pos] : f[pos]) / (double)den;
    }
    uint8_t mag[MMP_TX_PAD * MMP_TX_PAD] = {0};
    double cost[MMP_B * MMP_B], sigr[MMP_B * MMP_B], dz[MMP_B * MMP_B];
    int32_t chosen[MMP_B * MMP_B];
    for (int i = last0; i >= 0; i--) {
        const int pos = scan[i], y = pos >> b, xx = pos & (w - 1);
        const uint8_t *tp = mag + y * MMP_TX_PAD + xx;
        const int dg = y + xx;
        const int sctx = mmp_tx_sig_ctx(size_class, dg, tp), mc = mmp_tx_mag_ctx(size_class, dg, tp);
        double r = floor(x[i] + 0.5);
        const int l0 = (int)(r > MMP_TX_MAX_LEVEL ? MMP_TX_MAX_LEVEL : r);
        dz[i] = x[i] * x[i] * wgt;
        double best = dz[i] + lam * c->sig[sctx][0];
        int bl = 0;
        for (int v = l0; v >= 1 && v >= l0 - 1; v--) {
            const double d = (x[i] - v) * (x[i] - v) * wgt;
            const double j = d + lam * (double)(c->sig[sctx][1] + mag_rate(c, mc, v));
            if (j < best) {
                best = j;
                bl = v;
            }
        }
        chosen[i] = bl;
        cost[i] = best;
        sigr[i] = lam * c->sig[sctx][bl != 0];
        mag[y * MMP_TX_PAD + xx] = (uint8_t)(bl < 15 ? bl : 15);
    }
    /* The last position: none (cbf 0), or L with every later level zero. */
    double zeros = 0;
    for (int i = 0; i <= last0; i++)
        zeros += dz[i];
    double best = zeros + lam * c->cbf[ps][0];
    int best_last = -1;
    double head = 0; /* cost of positions 0 .. L */
    double tail = zeros; /* zero distortion of positions L + 1 .. last0 */
    for (int L = 0; L <= last0; L++) {
        head += cost[L];
        tail -= dz[L];
        if (!chosen[L])
            continue;
        const int g = mmp_bit_length((uint32_t)L);
        const double j = head - sigr[L] + tail +
                         lam * (c->cbf[ps][1] + c->last[ps][g] + (g >= 2 ? 256.0 * (g - 1) : 0));
        if (j < best) {
            best = j;
            best_last = L;
        }
    }
    for (int i = 0; i <= best_last; i++) {
        const int pos = scan[i];
        lv[pos] = f[pos] < 0 ? -chosen[i] : chosen[i];
    }
    return best_last;
}

/* Rounding offsets of the deadzone quantiser tried, in 1/64 of a step. */
static const int offsets[] = {32, 21, 10};
#define NOFFSETS ((int)(sizeof offsets / sizeof offsets[0]))

int64_t mmp_tx_search_leaf(const mmp_tx_search *t, const int32_t *orig, const int32_t *pred,
                           const uint8_t *real, int a, int b, int64_t limit, int32_t *level,
                           int32_t *res)
{
    const int area = 1 << (a + b);
    int32_t lv[MMP_B * MMP_B], rs[MMP_B * MMP_B];
    int64_t f[MMP_B * MMP_B];
    /* D = F / 2^(8 + floor((a + b) / 2)) in the units of the dequantised
     * value (mmp_tx_inverse), so level = F / den. */
    const int64_t den = mmp_tx_leaf_step(t->step_q4, a, b) << (8 + ((a + b) >> 1));
    /* Where every 2 |F| < den, every candidate is the prediction alone:
     * rounding to nearest, the most any offset gives, makes every level
     * zero, and so does RDOQ, which starts from it (its x = |F| / den is
     * at most 1 / 2 - 1 / (2 den) before rounding, far from 1 / 2). A
     * residual of little energy is such a leaf without its transform. */
    int64_t energy = 0;
    for (int i = 0; i < area; i++) {
        const int64_t d = (int64_t)orig[i] - pred[i];
        energy += d * d;
    }
    /* The positions that any candidate may make non-zero, in scan order:
     * those of 2 |F| >= den, where rounding to nearest (the most any offset
     * gives, and where RDOQ starts) makes a level. Where there is none,
     * every candidate is the prediction alone. */
    const uint16_t *scan = mmp_tx_scan_of(t->scans, a, b);
    int act[MMP_B * MMP_B], nact = 0;
    int zero_only = energy < mmp_tx_zero_sse(t->step_q4, a, b);
    if (!zero_only) {
        forward(orig, pred, a, b, f);
        for (int i = 0; i < area; i++) {
            const int64_t m = f[scan[i]] < 0 ? -f[scan[i]] : f[scan[i]];
            if (2 * m >= den)
                act[nact++] = i;
        }
        zero_only = !nact;
    }
    /* |F| = q * den + rem once: the level at rounding offset o / 64 is then
     * q + (64 rem >= (64 - o) den), floor(|F| / den + o / 64), without a
     * division per offset. */
    int64_t quo[MMP_B * MMP_B], rem[MMP_B * MMP_B];
    for (int k = 0; k < nact && !t->rdoq_only; k++) {
        const int64_t m = f[scan[act[k]]] < 0 ? -f[scan[act[k]]] : f[scan[act[k]]];
        quo[k] = m < den ? 0 : m / den;
        rem[k] = m - quo[k] * den;
    }
    /* The levels tried so far: a set of levels already measured is not
     * measured again (it could not win a tie). */
    int32_t tried[NOFFSETS + 2][MMP_B * MMP_B];
    int ntried = 0;
    /* Only a J below best matters (the first of least cost wins). */
    int64_t best = limit;
    const int o_last = zero_only ? NOFFSETS : NOFFSETS + 1;
    for (int o = t->rdoq_only || zero_only ? NOFFSETS : 0; o <= o_last; o++) {
        /* last: the scan index of the last level not zero, or -1 */
        int last = -1;
        if (o != NOFFSETS + 1) /* RDOQ clears lv itself */
            memset(lv, 0, sizeof(int32_t) * area);
        if (o == NOFFSETS + 1) {
            last = rdoq(t, f, den, mmp_tx_leaf_step(t->step_q4, a, b), a, b, act[nact - 1], lv);
            if (last < 0)
                continue;
        } else if (o < NOFFSETS) {
            const int64_t cut = (64 - offsets[o]) * den;
            for (int k = 0; k < nact; k++) {
                int64_t q = quo[k] + (64 * rem[k] >= cut);
                q = q > MMP_TX_MAX_LEVEL ? MMP_TX_MAX_LEVEL : q;
                const int pos = scan[act[k]];
                lv[pos] = (int32_t)(f[pos] < 0 ? -q : q);
                if (q)
                    last = act[k];
            }
        }
        /* else no coefficient: the prediction alone */
        const int nz = last >= 0;
        int seen = 0;
        for (int k = 0; k < ntried && !seen; k++)
            seen = !memcmp(tried[k], lv, sizeof(int32_t) * area);
        if (seen)
            continue;
        memcpy(tried[ntried++], lv, sizeof(int32_t) * area);
        /* Rates of more than most bits lose: lambda_q8 * bits >= best. */
        const uint64_t most = best <= 0                                  ? 0
                              : best == INT64_MAX || t->lambda_q8 <= 0 ? UINT64_MAX
                                                                        : (uint64_t)((best - 1) / t->lambda_q8);
        const uint64_t bits = mmp_tx_rate(t->cost, lv, a, b, scan, last, most);
        const int64_t rate = bits > most ? best : t->lambda_q8 * (int64_t)bits;
        if (rate >= best)
            continue; /* J >= rate: it cannot win */
        if (!nz && !real) {
            /* The prediction alone: its distortion is the residual's
             * energy (the prediction lies in [0, maxval], so clipping
             * leaves it as it is). */
            const int64_t j = (energy << 16) + rate;
            if (j < best) {
                best = j;
                memset(level, 0, sizeof(int32_t) * area);
                memset(res, 0, sizeof(int32_t) * area);
            }
            continue;
        }
        /* Row by row, each row's residual as it is needed, until J reaches
         * best: most candidates lose (a leaf's modes are priced under the
         * best one's bound), and most of those lose within a few rows. */
        int64_t sse = 0;
        mmp_tx_inv inv;
        if (nz)
            mmp_tx_inverse_begin(&inv, lv, a, b, t->step_q4, t->maxval);
        const int w = 1 << b;
        for (int i = 0; i < area && (sse << 16) + rate < best; i += w) {
            if (nz)
                mmp_tx_inverse_row(&inv, i >> b, rs + i);
            else
                memset(rs + i, 0, sizeof(int32_t) * w);
            for (int k = i; k < i + w; k++) {
                if (real && !real[k])
                    continue;
                int32_t v = pred[k] + rs[k];
                v = v < 0 ? 0 : v > t->maxval ? t->maxval : v;
                const int64_t d = v - orig[k];
                sse += d * d;
            }
        }
        /* Every row's residual is there when j < best. */
        const int64_t j = (sse << 16) + rate;
        if (j < best) {
            best = j;
            memcpy(level, lv, sizeof(int32_t) * area);
            memcpy(res, rs, sizeof(int32_t) * area);
        }
    }
    return best;
}

int mmp_tx_price_modes(const mmp_tx_search *t, const int32_t *orig, const int32_t *pred,
                       const uint8_t *real, int a, int b, const int *order, int n,
                       const int64_t *head, int64_t rival_j, int rival_mode, int32_t *level,
                       int32_t *res, int32_t *best_level, int32_t *best_res, int64_t *jtx)
{
    const int area = 1 << (a + b);
    int best = -1;
    for (int k = 0; k < n; k++) {
        const int m = order[k];
        /* (J, m) must come before the best's and the rival's: J below
         * theirs, or equal with the mode before theirs. */
        int64_t bound = best >= 0 ? jtx[best] + (best > m) : INT64_MAX;
        if (rival_mode >= 0 && rival_j + (rival_mode > m) < bound)
            bound = rival_j + (rival_mode > m);
        const int64_t limit = bound == INT64_MAX ? INT64_MAX : bound - head[m];
        jtx[m] = mmp_tx_search_leaf(t, orig, pred + (long)m * area, real, a, b, limit, level,
                                    res) +
                 head[m];
        if (best < 0 || jtx[m] < jtx[best] || (jtx[m] == jtx[best] && m < best)) {
            best = m;
            memcpy(best_level, level, sizeof(int32_t) * area);
            memcpy(best_res, res, sizeof(int32_t) * area);
        }
    }
    return best;
}
