/*
 * The sequential reference engine: every dictionary element of every scale
 * against every residual sub-block, for every mode. Other engines must give
 * exactly its results.
 *
 * For one element of scale (a, b), the element is tiled over the whole leaf
 * and the squared errors of all pixels are computed in one vectorisable
 * pass; block sums then give the distortion at every position of the scale.
 */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/engine.h"

typedef struct seq_state {
    int unused;
} seq_state;

static int seq_create(void **state, const mmp_engine_config *cfg)
{
    (void)cfg;
    seq_state *s = calloc(1, sizeof(*s));
    if (!s)
        return MMP_ENOMEM;
    *state = s;
    return 0;
}

static void seq_destroy(void *state) { free(state); }

static int seq_begin_block(void *state, const mmp_search_tables *t)
{
    (void)state;
    (void)t;
    return 0;
}

/* Squared errors of a leaf against an element tiled over it. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void tiled_errors(const int32_t *orig, const int32_t *pred, const int32_t *tile,
                         int hs, int h, int w, int32_t maxval, uint32_t *err)
{
    for (int y = 0; y < h; y++) {
        const int32_t *o = orig + y * w, *p = pred + y * w;
        const int32_t *e = tile + (y & (hs - 1)) * w;
        uint32_t *er = err + y * w;
        for (int x = 0; x < w; x++) {
            int32_t v = p[x] + e[x];
            v = v < 0 ? 0 : v;
            v = v > maxval ? maxval : v;
            int32_t d = o[x] - v;
            er[x] = (uint32_t)(d * d);
        }
    }
}

/* |d| <= maxval, so 32-bit products suffice for every maxval up to 65535:
 * d * d is computed in int32 only when it cannot overflow. */
static void tiled_errors_wide(const int32_t *orig, const int32_t *pred, const int32_t *tile,
                              int hs, int h, int w, int32_t maxval, uint32_t *err)
{
    for (int y = 0; y < h; y++) {
        const int32_t *o = orig + y * w, *p = pred + y * w;
        const int32_t *e = tile + (y & (hs - 1)) * w;
        uint32_t *er = err + y * w;
        for (int x = 0; x < w; x++) {
            int32_t v = p[x] + e[x];
            v = v < 0 ? 0 : v;
            v = v > maxval ? maxval : v;
            int64_t d = (int64_t)o[x] - v;
            er[x] = (uint32_t)(d * d);
        }
    }
}

static int seq_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    (void)state;
    const int h = 1 << lh, w = 1 << lw, area = h * w;
    const int count = mmp_match_count(lh, lw);
    const int wide = t->maxval > 32767;
    uint32_t err[MMP_B * MMP_B];
    int32_t tile[MMP_B * MMP_B];
    uint64_t rowsum[MMP_B * MMP_B];
    uint64_t dist[MMP_B * MMP_B];

    for (int m = 0; m < nmodes; m++) {
        const int32_t *pm = pred + (long)m * area;
        mmp_match *om = out + (long)m * count;
        for (int i = 0; i < count; i++) {
            om[i].j = INT64_MAX;
            om[i].idx = 0;
            om[i].pad = 0;
        }
        for (int a = 0; a <= lh; a++) {
            for (int b = 0; b <= lw; b++) {
                const int s = mmp_scale(a, b), hs = 1 << a, ws = 1 << b;
                const int rows = h >> a, cols = w >> b;
                const int n = t->dict->n[s];
                const uint32_t *cost = t->idx_cost[s];
                mmp_match *os = om + mmp_match_offset(lh, lw, a, b);
                for (int k = 0; k < n; k++) {
                    const int32_t *e = mmp_dict_elem(t->dict, s, k);
                    for (int y = 0; y < hs; y++)
                        for (int x = 0; x < w; x++)
                            tile[y * w + x] = e[y * ws + (x & (ws - 1))];
                    if (wide)
                        tiled_errors_wide(orig, pm, tile, hs, h, w, t->maxval, err);
                    else
                        tiled_errors(orig, pm, tile, hs, h, w, t->maxval, err);
                    if (real)
                        for (int i = 0; i < area; i++)
                            err[i] = real[i] ? err[i] : 0;
                    for (int y = 0; y < h; y++)
                        for (int j = 0; j < cols; j++) {
                            uint64_t acc = 0;
                            for (int x = 0; x < ws; x++)
                                acc += err[y * w + j * ws + x];
                            rowsum[y * cols + j] = acc;
                        }
                    for (int i = 0; i < rows; i++)
                        for (int j = 0; j < cols; j++) {
                            uint64_t acc = 0;
                            for (int y = 0; y < hs; y++)
                                acc += rowsum[(i * hs + y) * cols + j];
                            dist[i * cols + j] = acc;
                        }
                    const int64_t rate = t->lambda_q8 * cost[k];
                    for (int i = 0; i < rows * cols; i++) {
                        int64_t jv = ((int64_t)dist[i] << 16) + rate;
                        if (jv < os[i].j) {
                            os[i].j = jv;
                            os[i].idx = k;
                        }
                    }
                }
            }
        }
    }
    return 0;
}

const mmp_engine_ops mmp_engine_seq = {
    .name = "seq",
    .create = seq_create,
    .destroy = seq_destroy,
    .begin_block = seq_begin_block,
    .match = seq_match,
};
