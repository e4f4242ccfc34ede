/* The encoder's side of the transform residual (see search_tx.h). */
#include "mmp/search_tx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/scales.h"

/* Step = k * sqrt(lambda): HEVC's lambda = 0.57 * 2^((QP - 12) / 3) and
 * Qstep = 2^((QP - 4) / 6) give k = 3.34 for the same J = D + lambda * R. */
static double step_k(void)
{
    const char *e = getenv("MMP_TX_K"); /* experiment only */
    return e ? atof(e) : 3.34;
}

int mmp_tx_qi_for_lambda(int64_t lambda_q8)
{
    const double step = step_k() * sqrt((double)lambda_q8 / 256.0);
    const long qi = step > 0 ? 1 + lround(8.0 * log2(step)) : 1;
    return (int)(qi < 1 ? 1 : qi > MMP_TX_MAX_QI ? MMP_TX_MAX_QI : qi);
}

/* F = T_h r T_w^T, exact: |r| < 2^17 gives |F| < 2^17 * 1440^2 < 2^39. */
static void forward(const int32_t *r, int a, int b, int64_t *f)
{
    const int h = 1 << a, w = 1 << b, sh = 16 >> a, sw = 16 >> b;
    int64_t g[MMP_B * MMP_B];
    for (int y = 0; y < h; y++)
        for (int l = 0; l < w; l++) {
            const int8_t *t = mmp_tx_matrix16[l * sw];
            int64_t acc = 0;
            for (int x = 0; x < w; x++)
                acc += (int64_t)r[y * w + x] * t[x];
            g[y * w + l] = acc;
        }
    for (int k = 0; k < h; k++) {
        const int8_t *t = mmp_tx_matrix16[k * sh];
        for (int l = 0; l < w; l++) {
            int64_t acc = 0;
            for (int y = 0; y < h; y++)
                acc += t[y] * g[y * w + l];
            f[k * w + l] = acc;
        }
    }
}

/* Rounding offsets of the deadzone quantiser tried, in 1/64 of a step. */
static const int offsets[] = {32, 21, 10};
#define NOFFSETS ((int)(sizeof offsets / sizeof offsets[0]))

int64_t mmp_tx_search_leaf(const mmp_tx_search *t, const int32_t *orig, const int32_t *pred,
                           const uint8_t *real, int a, int b, int32_t *level, int32_t *res)
{
    const int area = 1 << (a + b);
    int32_t r[MMP_B * MMP_B], lv[MMP_B * MMP_B], rs[MMP_B * MMP_B];
    int64_t f[MMP_B * MMP_B];
    for (int i = 0; i < area; i++)
        r[i] = orig[i] - pred[i];
    forward(r, a, b, f);
    /* D = F / 2^(8 + floor((a + b) / 2)) in the units of the dequantised
     * value (mmp_tx_inverse), so level = F / den. */
    const int64_t den = mmp_tx_leaf_step(t->step_q4, a, b) << (8 + ((a + b) >> 1));
    int64_t best = INT64_MAX;
    int prev_nz = -1;
    for (int o = 0; o <= NOFFSETS; o++) {
        int nz = 0;
        if (o < NOFFSETS) {
            for (int i = 0; i < area; i++) {
                const int64_t m = f[i] < 0 ? -f[i] : f[i];
                int64_t q = (m * 64 + offsets[o] * den) / (den * 64);
                q = q > MMP_TX_MAX_LEVEL ? MMP_TX_MAX_LEVEL : q;
                lv[i] = (int32_t)(f[i] < 0 ? -q : q);
                nz += q != 0;
            }
        } else {
            /* no coefficient: the prediction alone */
            memset(lv, 0, sizeof(int32_t) * area);
        }
        if (o > 0 && nz == 0 && prev_nz == 0)
            continue;
        prev_nz = nz;
        const uint64_t bits = mmp_tx_code_levels(NULL, NULL, NULL, t->cost, lv, a, b);
        int64_t sse = 0;
        if (nz) {
            mmp_tx_inverse(lv, a, b, t->step_q4, t->maxval, rs, 1 << b);
        } else {
            memset(rs, 0, sizeof(int32_t) * area);
        }
        for (int i = 0; i < area; i++) {
            if (real && !real[i])
                continue;
            int32_t v = pred[i] + rs[i];
            v = v < 0 ? 0 : v > t->maxval ? t->maxval : v;
            const int64_t d = v - orig[i];
            sse += d * d;
        }
        const int64_t j = (sse << 16) + t->lambda_q8 * (int64_t)bits;
        if (j < best) {
            best = j;
            memcpy(level, lv, sizeof(int32_t) * area);
            memcpy(res, rs, sizeof(int32_t) * area);
        }
    }
    return best;
}
