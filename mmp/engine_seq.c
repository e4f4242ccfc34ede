/*
 * The sequential reference engine.
 *
 * For each residual sub-block it visits the dictionary elements of its scale
 * in order of the distance between their sums and the sub-block's sum. Since
 * ||r - e||^2 >= (sum r - sum e)^2 / n, the visit stops as soon as that bound
 * plus the cheapest index cost exceeds the best cost found, and a tighter
 * bound from the sums of the two halves skips most of the remaining
 * candidates: the result is exactly the exhaustive argmin, lowest index on
 * ties, at a fraction of the work. Sub-blocks that hang over the image edge
 * are searched exhaustively over their real pixels.
 *
 * The dictionary is frozen during a block, so begin_block copies each scale
 * into sum order once (only the scales that grew), which keeps the candidate
 * loop in contiguous memory.
 */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/engine.h"

typedef struct sorted_scale {
    int n, cap;          /* elements copied, allocated */
    int32_t *data;       /* n * area samples in sum order */
    int32_t *sum;        /* sums, ascending */
    int32_t *half;       /* sums of the first half (row-major) of each element */
    int32_t *id;         /* dictionary index of each */
    int64_t *rate;       /* lambda_q8 * idx_cost[id] */
} sorted_scale;

typedef struct seq_state {
    sorted_scale sc[MMP_NSCALES];
    int64_t min_rate[MMP_NSCALES];
    int narrow;          /* samples small enough for 32-bit partial sums */
} seq_state;

static void seq_destroy(void *state)
{
    seq_state *s = state;
    if (!s)
        return;
    for (int k = 0; k < MMP_NSCALES; k++) {
        free(s->sc[k].data);
        free(s->sc[k].sum);
        free(s->sc[k].half);
        free(s->sc[k].id);
        free(s->sc[k].rate);
    }
    free(s);
}

static int seq_create(void **state, const mmp_engine_config *cfg)
{
    (void)cfg;
    seq_state *s = calloc(1, sizeof(*s));
    if (!s)
        return MMP_ENOMEM;
    *state = s;
    return 0;
}

static int seq_begin_block(void *state, const mmp_search_tables *t)
{
    seq_state *st = state;
    const mmp_dict *d = t->dict;
    /* |r - e| <= 2 maxval: sixteen squares fit in 32 bits up to 5792. */
    st->narrow = t->maxval <= 5792;
    for (int k = 0; k < MMP_NSCALES; k++) {
        sorted_scale *ss = &st->sc[k];
        const int area = mmp_scale_area(k), n = d->n[k];
        if (ss->cap < d->cap) {
            free(ss->data);
            free(ss->sum);
            free(ss->half);
            free(ss->id);
            free(ss->rate);
            ss->data = malloc(sizeof(int32_t) * d->cap * area);
            ss->sum = malloc(sizeof(int32_t) * d->cap);
            ss->half = malloc(sizeof(int32_t) * d->cap);
            ss->id = malloc(sizeof(int32_t) * d->cap);
            ss->rate = malloc(sizeof(int64_t) * d->cap);
            ss->n = 0;
            if (!ss->data || !ss->sum || !ss->half || !ss->id || !ss->rate) {
                ss->cap = 0;
                return MMP_ENOMEM;
            }
            ss->cap = d->cap;
        }
        if (ss->n != n) {
            for (int i = 0; i < n; i++) {
                const int id = d->sorted_id[k][i];
                const int32_t *e = mmp_dict_elem(d, k, id);
                int32_t h = 0;
                for (int p = 0; p < area / 2; p++)
                    h += e[p];
                memcpy(ss->data + (long)i * area, e, sizeof(int32_t) * area);
                ss->sum[i] = d->sorted_sum[k][i];
                ss->half[i] = h;
                ss->id[i] = id;
            }
            ss->n = n;
        }
        int64_t m = INT64_MAX;
        for (int i = 0; i < n; i++) {
            ss->rate[i] = t->lambda_q8 * t->idx_cost[k][ss->id[i]];
            m = ss->rate[i] < m ? ss->rate[i] : m;
        }
        st->min_rate[k] = m;
    }
    return 0;
}

/* (||r - e||^2 << 16) + rate, or INT64_MAX once it must exceed limit. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static int64_t cost_narrow(const int32_t *r, const int32_t *e, int n, int64_t rate, int64_t limit)
{
    int64_t acc = 0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        int32_t part = 0;
        for (int k = 0; k < 16; k++) {
            int32_t d = r[i + k] - e[i + k];
            part += d * d;
        }
        acc += part;
        if ((acc << 16) + rate > limit)
            return INT64_MAX;
    }
    for (; i < n; i++) {
        int32_t d = r[i] - e[i];
        acc += d * d;
    }
    return (acc << 16) + rate;
}

static int64_t cost_wide(const int32_t *r, const int32_t *e, int n, int64_t rate, int64_t limit)
{
    int64_t acc = 0;
    for (int i = 0; i < n; i++) {
        int64_t d = (int64_t)r[i] - e[i];
        acc += d * d;
        if ((i & 15) == 15 && (acc << 16) + rate > limit)
            return INT64_MAX;
    }
    return (acc << 16) + rate;
}

/* One candidate (position k of the sorted scale) against the best so far. */
static inline void try_candidate(const seq_state *st, const sorted_scale *ss, int k, int log2n,
                                 const int32_t *r, int64_t rhalf, int64_t rhalf2, int64_t *best,
                                 int *best_id)
{
    const int64_t rate = ss->rate[k];
    if (log2n > 0) {
        int64_t d1 = rhalf - ss->half[k], d2 = rhalf2 - (ss->sum[k] - ss->half[k]);
        if ((((d1 * d1 + d2 * d2) >> (log2n - 1)) << 16) + rate > *best)
            return;
    }
    const int32_t *e = ss->data + ((long)k << log2n);
    const int n = 1 << log2n;
    int64_t j = st->narrow ? cost_narrow(r, e, n, rate, *best) : cost_wide(r, e, n, rate, *best);
    int id = ss->id[k];
    if (j < *best || (j == *best && id < *best_id)) {
        *best = j;
        *best_id = id;
    }
}

static void best_sorted(const seq_state *st, int s, int log2n, const int32_t *r, int64_t rsum,
                        int64_t rhalf, mmp_match *out)
{
    const sorted_scale *ss = &st->sc[s];
    const int N = ss->n;
    const int64_t min_rate = st->min_rate[s], rhalf2 = rsum - rhalf;
    int lo = 0, hi = N;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ss->sum[mid] < rsum)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t best = INT64_MAX;
    int best_id = 0;
    /* Seed with the nearest sums, then walk outwards on each side until the
     * sum bound rules out everything further away. */
    if (lo < N)
        try_candidate(st, ss, lo, log2n, r, rhalf, rhalf2, &best, &best_id);
    if (lo > 0)
        try_candidate(st, ss, lo - 1, log2n, r, rhalf, rhalf2, &best, &best_id);
    for (int k = lo + 1; k < N; k++) {
        int64_t diff = ss->sum[k] - rsum;
        if ((((diff * diff) >> log2n) << 16) + min_rate > best)
            break;
        try_candidate(st, ss, k, log2n, r, rhalf, rhalf2, &best, &best_id);
    }
    for (int k = lo - 2; k >= 0; k--) {
        int64_t diff = rsum - ss->sum[k];
        if ((((diff * diff) >> log2n) << 16) + min_rate > best)
            break;
        try_candidate(st, ss, k, log2n, r, rhalf, rhalf2, &best, &best_id);
    }
    out->j = best;
    out->idx = best_id;
    out->pad = 0;
}

/* Exhaustive search over the real pixels only. */
static void best_masked(const mmp_search_tables *t, int s, int n, const int32_t *r,
                        const uint8_t *real, mmp_match *out)
{
    const mmp_dict *d = t->dict;
    int64_t best = INT64_MAX;
    int best_id = 0;
    for (int id = 0; id < d->n[s]; id++) {
        const int32_t *e = mmp_dict_elem(d, s, id);
        int64_t acc = 0;
        for (int i = 0; i < n; i++) {
            int64_t diff = (int64_t)r[i] - e[i];
            acc += real[i] ? diff * diff : 0;
        }
        int64_t j = (acc << 16) + t->lambda_q8 * t->idx_cost[s][id];
        if (j < best) {
            best = j;
            best_id = id;
        }
    }
    out->j = best;
    out->idx = best_id;
    out->pad = 0;
}

static int seq_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    const seq_state *st = state;
    const int h = 1 << lh, w = 1 << lw, area = h * w;
    const int count = mmp_match_count(lh, lw);
    int32_t res[MMP_B * MMP_B], node[MMP_B * MMP_B];
    uint8_t node_real[MMP_B * MMP_B];

    for (int m = 0; m < nmodes; m++) {
        const int32_t *pm = pred + (long)m * area;
        for (int i = 0; i < area; i++)
            res[i] = orig[i] - pm[i];
        mmp_match *om = out + (long)m * count;
        for (int a = 0; a <= lh; a++)
            for (int b = 0; b <= lw; b++) {
                const int s = mmp_scale(a, b), hs = 1 << a, ws = 1 << b, n = hs * ws;
                mmp_match *os = om + mmp_match_offset(lh, lw, a, b);
                for (int i = 0; i < (h >> a); i++)
                    for (int j = 0; j < (w >> b); j++) {
                        const int y0 = i * hs, x0 = j * ws;
                        int all_real = 1;
                        int64_t sum = 0, half = 0;
                        for (int y = 0; y < hs; y++) {
                            memcpy(node + y * ws, res + (y0 + y) * w + x0, sizeof(int32_t) * ws);
                            if (real) {
                                memcpy(node_real + y * ws, real + (y0 + y) * w + x0, ws);
                                for (int x = 0; x < ws; x++)
                                    all_real &= real[(y0 + y) * w + x0 + x];
                            }
                        }
                        mmp_match *o = os + i * (w >> b) + j;
                        if (!all_real) {
                            best_masked(t, s, n, node, node_real, o);
                            continue;
                        }
                        for (int p = 0; p < n / 2; p++)
                            half += node[p];
                        sum = half;
                        for (int p = n / 2; p < n; p++)
                            sum += node[p];
                        best_sorted(st, s, a + b, node, sum, half, o);
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
