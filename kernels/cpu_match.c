/*
 * The per-node matching shared by the CPU engines.
 *
 * For each residual sub-block the search visits the dictionary elements of
 * its scale in order of the distance between their sums and the sub-block's
 * sum. Since ||r - e||^2 >= (sum r - sum e)^2 / n, the visit stops as soon as
 * that bound plus the cheapest index cost exceeds the best cost found, and a
 * tighter bound from the sums of the two halves skips most of the remaining
 * candidates: the result is exactly the exhaustive argmin, lowest index on
 * ties, at a fraction of the work. Sub-blocks that hang over the image edge
 * are searched exhaustively over their real pixels.
 *
 * The dictionary is frozen during a block, so each scale is copied into sum
 * order once per block (only the scales that grew), which keeps the
 * candidate loop in contiguous memory.
 */
#include "kernels/cpu_match.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

static void free_scale(mmp_sorted_scale *ss)
{
    free(ss->data);
    free(ss->sum);
    free(ss->half);
    free(ss->id);
    free(ss->rate);
    memset(ss, 0, sizeof(*ss));
}

void mmp_sorted_free(mmp_sorted *sd)
{
    for (int k = 0; k < MMP_NSCALES; k++)
        free_scale(&sd->sc[k]);
    memset(sd, 0, sizeof(*sd));
}

int mmp_sorted_reserve(mmp_sorted *sd, const mmp_search_tables *t)
{
    const mmp_dict *d = t->dict;
    /* |r - e| <= 2 maxval: sixteen squares fit in 32 bits up to 5792. */
    sd->narrow = t->maxval <= 5792;
    for (int k = 0; k < MMP_NSCALES; k++) {
        mmp_sorted_scale *ss = &sd->sc[k];
        const size_t area = (size_t)mmp_scale_area(k);
        if (ss->cap >= d->cap)
            continue;
        free_scale(ss);
        ss->data = malloc(sizeof(int32_t) * d->cap * area);
        ss->sum = malloc(sizeof(int32_t) * d->cap);
        ss->half = malloc(sizeof(int32_t) * d->cap);
        ss->id = malloc(sizeof(int32_t) * d->cap);
        ss->rate = malloc(sizeof(int64_t) * d->cap);
        if (!ss->data || !ss->sum || !ss->half || !ss->id || !ss->rate) {
            free_scale(ss);
            return MMP_ENOMEM;
        }
        ss->cap = d->cap;
    }
    return 0;
}

void mmp_sorted_copy(mmp_sorted *sd, const mmp_search_tables *t, int k, int lo, int hi)
{
    const mmp_dict *d = t->dict;
    mmp_sorted_scale *ss = &sd->sc[k];
    const int area = mmp_scale_area(k);
    for (int i = lo; i < hi; i++) {
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
}

void mmp_sorted_commit(mmp_sorted *sd, const mmp_search_tables *t)
{
    for (int k = 0; k < MMP_NSCALES; k++)
        sd->sc[k].n = t->dict->n[k];
    sd->dict_id = t->dict_id;
}

int64_t mmp_sorted_rates(mmp_sorted *sd, const mmp_search_tables *t, int k, int lo, int hi)
{
    mmp_sorted_scale *ss = &sd->sc[k];
    const uint32_t *cost = t->idx_cost[k];
    int64_t m = INT64_MAX;
    for (int i = lo; i < hi; i++) {
        ss->rate[i] = t->lambda_q8 * cost[ss->id[i]];
        m = ss->rate[i] < m ? ss->rate[i] : m;
    }
    return m;
}

int mmp_sorted_refresh(mmp_sorted *sd, const mmp_search_tables *t)
{
    int err = mmp_sorted_reserve(sd, t);
    if (err)
        return err;
    for (int k = 0; k < MMP_NSCALES; k++)
        if (mmp_sorted_stale(sd, t, k))
            mmp_sorted_copy(sd, t, k, 0, t->dict->n[k]);
    mmp_sorted_commit(sd, t);
    for (int k = 0; k < MMP_NSCALES; k++)
        sd->min_rate[k] = mmp_sorted_rates(sd, t, k, 0, t->dict->n[k]);
    return 0;
}

/* (||r - e||^2 << 16) + rate, or INT64_MAX once it must exceed limit. (No
 * clones under TSan: its runtime is not up yet when ifunc resolvers run.) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("avx2", "default")))
#endif
static int64_t
cost_narrow(const int32_t *r, const int32_t *e, int n, int64_t rate, int64_t limit)
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
static inline void try_candidate(const mmp_sorted *sd, const mmp_sorted_scale *ss, int k, int log2n,
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
    int64_t j = sd->narrow ? cost_narrow(r, e, n, rate, *best) : cost_wide(r, e, n, rate, *best);
    int id = ss->id[k];
    if (j < *best || (j == *best && id < *best_id)) {
        *best = j;
        *best_id = id;
    }
}

static void best_sorted(const mmp_sorted *sd, int s, int log2n, const int32_t *r, int64_t rsum,
                        int64_t rhalf, mmp_match *out)
{
    const mmp_sorted_scale *ss = &sd->sc[s];
    const int N = ss->n;
    const int64_t min_rate = sd->min_rate[s], rhalf2 = rsum - rhalf;
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
        try_candidate(sd, ss, lo, log2n, r, rhalf, rhalf2, &best, &best_id);
    if (lo > 0)
        try_candidate(sd, ss, lo - 1, log2n, r, rhalf, rhalf2, &best, &best_id);
    for (int k = lo + 1; k < N; k++) {
        int64_t diff = ss->sum[k] - rsum;
        if ((((diff * diff) >> log2n) << 16) + min_rate > best)
            break;
        try_candidate(sd, ss, k, log2n, r, rhalf, rhalf2, &best, &best_id);
    }
    for (int k = lo - 2; k >= 0; k--) {
        int64_t diff = rsum - ss->sum[k];
        if ((((diff * diff) >> log2n) << 16) + min_rate > best)
            break;
        try_candidate(sd, ss, k, log2n, r, rhalf, rhalf2, &best, &best_id);
    }
    out->j = best;
    out->idx = best_id;
    out->pad = 0;
}

/* Exhaustive search over the nr real pixels only, whose residual samples
 * rr[] lie at pos[] in the node. An element stops once its partial cost
 * passes the best so far: its whole cost would too, and on equal costs the
 * earlier id (tried first) is kept, so the winner is the full scan's. The
 * partial blocks at an image's right and bottom edges take this path, all
 * of them where an image is smaller than a block. */
static void best_masked(const mmp_search_tables *t, int s, const int32_t *rr, const int *pos,
                        int nr, mmp_match *out)
{
    const mmp_dict *d = t->dict;
    int64_t best = INT64_MAX;
    int best_id = 0;
    for (int id = 0; id < d->n[s]; id++) {
        const int32_t *e = mmp_dict_elem(d, s, id);
        const int64_t rate = t->lambda_q8 * t->idx_cost[s][id];
        int64_t acc = 0;
        int i = 0;
        for (; i < nr; i++) {
            const int64_t diff = (int64_t)rr[i] - e[pos[i]];
            acc += diff * diff;
            if ((i & 15) == 15 && (acc << 16) + rate > best)
                break;
        }
        if (i < nr)
            continue;
        const int64_t j = (acc << 16) + rate;
        if (j < best) {
            best = j;
            best_id = id;
        }
    }
    out->j = best;
    out->idx = best_id;
    out->pad = 0;
}

void mmp_match_node(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                    const int32_t *pred, const uint8_t *real, int lw, int a, int b, int y0, int x0,
                    mmp_match *out)
{
    const int hs = 1 << a, ws = 1 << b, n = hs * ws, w = 1 << lw;
    int32_t node[MMP_B * MMP_B], real_res[MMP_B * MMP_B];
    int real_pos[MMP_B * MMP_B], nr = 0;
    for (int y = 0; y < hs; y++) {
        const long row = (long)(y0 + y) * w + x0;
        for (int x = 0; x < ws; x++)
            node[y * ws + x] = orig[row + x] - pred[row + x];
        if (real)
            for (int x = 0; x < ws; x++)
                if (real[row + x]) {
                    real_res[nr] = node[y * ws + x];
                    real_pos[nr++] = y * ws + x;
                }
    }
    if (real && nr < n) {
        best_masked(t, mmp_scale(a, b), real_res, real_pos, nr, out);
        return;
    }
    int64_t half = 0, sum;
    for (int p = 0; p < n / 2; p++)
        half += node[p];
    sum = half;
    for (int p = n / 2; p < n; p++)
        sum += node[p];
    best_sorted(sd, mmp_scale(a, b), a + b, node, sum, half, out);
}

void mmp_match_leaf(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                    const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                    mmp_match *out)
{
    const int h = 1 << lh, w = 1 << lw, area = h * w;
    const int count = mmp_match_count(lh, lw);
    for (int m = 0; m < nmodes; m++) {
        const int32_t *pm = pred + (long)m * area;
        mmp_match *om = out + (long)m * count;
        for (int a = 0; a <= lh; a++)
            for (int b = 0; b <= lw; b++) {
                mmp_match *os = om + mmp_match_offset(lh, lw, a, b);
                for (int i = 0; i < (h >> a); i++)
                    for (int j = 0; j < (w >> b); j++)
                        mmp_match_node(sd, t, orig, pm, real, lw, a, b, i << a, j << b,
                                       os + i * (w >> b) + j);
            }
    }
}
