/*
 * The per-node matching shared by the CPU engines.
 *
 * For each residual sub-block the search visits the dictionary elements of
 * its scale in order of the distance between their sums and the sub-block's
 * sum. Since ||r - e||^2 >= (sum r - sum e)^2 / n, the visit stops as soon as
 * that bound plus the cheapest index cost exceeds the best cost found, and a
 * tighter bound from the sums of the two halves skips most of the remaining
 * candidates (tested four at a time, without a branch per candidate; for
 * nodes of one or two samples it is the exact cost, and their samples are
 * never read): the result is exactly the exhaustive argmin, lowest index on ties, at a
 * fraction of the work. Any candidate skipped has a bound above the best
 * cost at that moment, so it cannot win or tie, and the order in which the
 * others are tried does not change the result. Sub-blocks that hang over
 * the image edge are searched exhaustively over their real pixels.
 *
 * The dictionary is frozen during a step, so each scale is copied into sum
 * order once per step (only the scales that grew), with a directory of
 * every MMP_SORTED_DIR-th sum to find where a node's sum falls, which keeps
 * the candidate loop in contiguous memory; samples of at most 5792 in
 * magnitude are copied in 16 bits. Nodes of one sample, the most numerous,
 * are searched once per step for every residual value where the samples
 * are small (mmp_sorted_finish), and then looked up. Nodes of 2 to 16
 * narrow samples recur within a step (the same sub-block in leaves of
 * several sizes, modes that predict it alike; two fifths to three quarters
 * of them on a smooth image, a quarter to two fifths on a textured one), so a
 * thread keeps the results of its step's searches in a cache of its own
 * (mmp_node_cache), found by a hash and checked sample by sample. With all
 * cores searching, the search is limited by how much memory it reads, not
 * by its arithmetic.
 */
#include "kernels/cpu_match.h"

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/lower_bound.h"

static _Atomic int simd_on = 1;

/* The tables' generations (mmp_sorted_finish), from 1: a node cache's entry
 * holds the generation it was found in, and matches no other. */
static _Atomic uint64_t generations;

/* The node caches: per class of nodes (2, 4, 8 or 16 samples), direct-mapped
 * by a hash of the scale and the samples; an entry is used only when its
 * tag (generation and scale) and every sample are the node's. Entries are
 * as small as their class allows: the cache shares the core's cache memory
 * with the dictionary the searches read. */
#define CACHE_BITS 11
#define CACHE_CLASSES 4
typedef struct cache_entry {
    uint64_t tag; /* generation << 5 | scale; 0 (never a tag): empty */
    int64_t j;
    int32_t idx;
    int16_t r[]; /* 2 to 16 samples, by class */
} cache_entry;

/* Bytes of an entry of class c (nodes of 2 << c samples). */
static inline size_t entry_size(int c)
{
    return (offsetof(cache_entry, r) + sizeof(int16_t) * (2u << c) + 7) & ~(size_t)7;
}

struct mmp_node_cache {
    unsigned char *cls[CACHE_CLASSES]; /* 1 << CACHE_BITS entries of each */
};

mmp_node_cache *mmp_node_cache_new(void)
{
    size_t bytes = 0;
    for (int c = 0; c < CACHE_CLASSES; c++)
        bytes += entry_size(c) << CACHE_BITS;
    mmp_node_cache *nc = malloc(sizeof(*nc));
    unsigned char *mem = calloc(1, bytes);
    if (!nc || !mem) {
        free(nc);
        free(mem);
        return NULL;
    }
    for (int c = 0; c < CACHE_CLASSES; c++) {
        nc->cls[c] = mem;
        mem += entry_size(c) << CACHE_BITS;
    }
    return nc;
}

void mmp_node_cache_free(mmp_node_cache *c)
{
    if (c)
        free(c->cls[0]);
    free(c);
}

/* The entry of a node of n (2 to 16) samples r of scale s. */
static inline cache_entry *cache_slot(mmp_node_cache *c, const int16_t *r, int log2n, int s)
{
    uint64_t h = (uint64_t)(s + 1) * 0x9E3779B97F4A7C15ull;
    if (log2n == 1) {
        uint32_t w;
        memcpy(&w, r, sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    } else {
        for (int i = 0; i < 1 << log2n; i += 4) {
            uint64_t w;
            memcpy(&w, r + i, sizeof w);
            h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        }
    }
    return (cache_entry *)(c->cls[log2n - 1] + entry_size(log2n - 1) * (h >> (64 - CACHE_BITS)));
}

void mmp_cpu_match_simd(int on)
{
    atomic_store(&simd_on, on);
}

int mmp_cpu_match_avx2(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return atomic_load(&simd_on) && __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static void free_scale(mmp_sorted_scale *ss)
{
    free(ss->data);
    free(ss->data16);
    free(ss->sum);
    free(ss->half);
    free(ss->id);
    free(ss->rate);
    free(ss->dir);
    memset(ss, 0, sizeof(*ss));
}

void mmp_sorted_free(mmp_sorted *sd)
{
    for (int k = 0; k < MMP_NSCALES; k++)
        free_scale(&sd->sc[k]);
    free(sd->one);
    memset(sd, 0, sizeof(*sd));
}

int mmp_sorted_reserve(mmp_sorted *sd, const mmp_search_tables *t)
{
    const mmp_dict *d = t->dict;
    /* |r - e| <= 2 maxval: sixteen squares fit in 32 bits up to 5792. The
     * samples of a dictionary lie in [-maxval, maxval] (docs/format.md 5.3). */
    const int narrow = t->maxval <= 5792;
    if (narrow != sd->narrow) /* another plane's samples: copies of the other kind */
        for (int k = 0; k < MMP_NSCALES; k++)
            free_scale(&sd->sc[k]);
    sd->narrow = narrow;
    sd->avx2 = mmp_cpu_match_avx2();
    const int one_max = t->maxval <= MMP_SORTED_ONE_MAX ? t->maxval : -1;
    if (one_max != sd->one_max || !sd->one) {
        free(sd->one);
        sd->one = one_max >= 0 ? malloc(sizeof(mmp_match) * (2 * (size_t)one_max + 1)) : NULL;
        sd->one_max = sd->one ? one_max : -1;
        if (one_max >= 0 && !sd->one)
            return MMP_ENOMEM;
    }
    for (int k = 0; k < MMP_NSCALES; k++) {
        mmp_sorted_scale *ss = &sd->sc[k];
        const size_t area = (size_t)mmp_scale_area(k);
        if (ss->cap >= d->cap)
            continue;
        free_scale(ss);
        if (narrow)
            ss->data16 = malloc(sizeof(int16_t) * d->cap * area);
        else
            ss->data = malloc(sizeof(int32_t) * d->cap * area);
        ss->sum = malloc(sizeof(int32_t) * d->cap);
        ss->half = malloc(sizeof(int32_t) * d->cap);
        ss->id = malloc(sizeof(int32_t) * d->cap);
        ss->rate = malloc(sizeof(int64_t) * d->cap);
        ss->dir = malloc(sizeof(int32_t) * (d->cap / MMP_SORTED_DIR + 1));
        if (!(ss->data || ss->data16) || !ss->sum || !ss->half || !ss->id || !ss->rate ||
            !ss->dir) {
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
        if (sd->narrow)
            for (int p = 0; p < area; p++) {
                /* Exact in 16 bits: opencl matches the 32-bit samples. */
                assert(e[p] >= -t->maxval && e[p] <= t->maxval);
                ss->data16[(long)i * area + p] = (int16_t)e[p];
            }
        else
            memcpy(ss->data + (long)i * area, e, sizeof(int32_t) * area);
        ss->sum[i] = d->sorted_sum[k][i];
        ss->half[i] = h;
        ss->id[i] = id;
        if (i % MMP_SORTED_DIR == 0)
            ss->dir[i / MMP_SORTED_DIR] = ss->sum[i];
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
    mmp_sorted_finish(sd, t);
    return 0;
}

/*
 * The node search comes in two builds of one body (match_node): plain
 * C, and on x86-64 one for AVX2 whose two innermost steps, the bound of a
 * group of candidates and the cost of 16 samples, are written with its
 * intrinsics. Both are the same integer arithmetic, so they give the same
 * results; mmp_match_node picks one by sd->avx2 (mmp_cpu_match_simd).
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2 1
#define AVX2 __attribute__((target("avx2")))
#else
#define HAVE_AVX2 0
#endif

/* (||r - e||^2 << 16) + rate, or INT64_MAX once it must exceed limit; n a
 * multiple of 16, every |r_i - e_i| at most 2 * 5792 (sd->narrow), so
 * that 16 squares sum in 32 bits. */
static inline int64_t cost_narrow(const int32_t *r, const int16_t *e, int n, int64_t rate,
                                  int64_t limit)
{
    int64_t acc = 0;
    for (int i = 0; i < n; i += 16) {
        int32_t part = 0;
        for (int k = 0; k < 16; k++) {
            int32_t d = r[i + k] - e[i + k];
            part += d * d;
        }
        acc += part;
        if ((acc << 16) + rate > limit)
            return INT64_MAX;
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

/* ||r - e||^2 over n < 16 samples, n a constant where inlined: most nodes
 * are that small, and a call and a loop cost more than their samples. */
static inline int64_t small_sse(const int32_t *r, const int32_t *e, int n)
{
    int64_t acc = 0;
    for (int i = 0; i < n; i++) {
        const int64_t d = (int64_t)r[i] - e[i];
        acc += d * d;
    }
    return acc;
}

/* The same with narrow samples: 8 squares sum in 32 bits. */
static inline int64_t small_sse16(const int32_t *r, const int16_t *e, int n)
{
    int32_t acc = 0;
    for (int i = 0; i < n; i++) {
        const int32_t d = r[i] - e[i];
        acc += d * d;
    }
    return acc;
}

/*
 * The bound of the halves' sums for the GROUP candidates from position k on,
 * into bnd, and which of them may beat best by it (bit i for k + i),
 * without a branch per candidate: about a third pass, in no predictable
 * pattern. For nodes of one or two samples the bound is the exact cost: each
 * half is a sample (with one sample, the first half is empty and the second
 * is the node). The differences fit in 32 bits: sums of at most 128 samples
 * of at most 65535.
 */
#define GROUP 4
static inline int half_shift(int log2n)
{
    return log2n > 0 ? log2n - 1 : 0;
}

/* The bound of candidate k alone. */
static inline int64_t half_bound_one(const mmp_sorted_scale *ss, int k, int log2n, int32_t rhalf,
                                     int32_t rhalf2)
{
    const int32_t d1 = rhalf - ss->half[k], d2 = rhalf2 - (ss->sum[k] - ss->half[k]);
    const int64_t q = (int64_t)d1 * d1 + (int64_t)d2 * d2;
    return ((q >> half_shift(log2n)) << 16) + ss->rate[k];
}

static inline unsigned half_bound(const mmp_sorted_scale *ss, int k, int log2n, int32_t rhalf,
                                  int32_t rhalf2, int64_t best, int64_t *bnd)
{
    unsigned m = 0;
    for (int i = 0; i < GROUP; i++) {
        bnd[i] = half_bound_one(ss, k + i, log2n, rhalf, rhalf2);
        m |= (unsigned)(bnd[i] <= best) << i;
    }
    return m;
}

#if HAVE_AVX2
/* half_bound, the four candidates in the lanes of one register. */
AVX2 static inline unsigned half_bound_avx2(const mmp_sorted_scale *ss, int k, int log2n,
                                            int32_t rhalf, int32_t rhalf2, int64_t best,
                                            int64_t *bnd)
{
    const __m128i h = _mm_loadu_si128((const __m128i *)(ss->half + k));
    const __m128i sm = _mm_loadu_si128((const __m128i *)(ss->sum + k));
    const __m256i d1 = _mm256_cvtepi32_epi64(_mm_sub_epi32(_mm_set1_epi32(rhalf), h));
    const __m256i d2 =
        _mm256_cvtepi32_epi64(_mm_sub_epi32(_mm_set1_epi32(rhalf2), _mm_sub_epi32(sm, h)));
    __m256i q = _mm256_add_epi64(_mm256_mul_epi32(d1, d1), _mm256_mul_epi32(d2, d2));
    q = _mm256_slli_epi64(_mm256_srl_epi64(q, _mm_cvtsi32_si128(half_shift(log2n))), 16);
    q = _mm256_add_epi64(q, _mm256_loadu_si256((const __m256i *)(ss->rate + k)));
    _mm256_storeu_si256((__m256i *)bnd, q);
    const __m256i over = _mm256_cmpgt_epi64(q, _mm256_set1_epi64x(best));
    return ~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(over)) & 15u;
}

/* cost_narrow, 16 samples at a time, the node's residual r16 in 16 bits as
 * well: the differences fit, and their squares are summed in pairs (madd),
 * then across the register. */
AVX2 static inline int64_t cost_narrow_avx2(const int16_t *r16, const int16_t *e, int n,
                                            int64_t rate, int64_t limit)
{
    int64_t acc = 0;
    for (int i = 0; i < n; i += 16) {
        const __m256i d = _mm256_sub_epi16(_mm256_loadu_si256((const __m256i *)(r16 + i)),
                                           _mm256_loadu_si256((const __m256i *)(e + i)));
        const __m256i sq = _mm256_madd_epi16(d, d);
        __m128i x = _mm_add_epi32(_mm256_castsi256_si128(sq), _mm256_extracti128_si256(sq, 1));
        x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
        x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xb1));
        acc += (uint32_t)_mm_cvtsi128_si32(x);
        if ((acc << 16) + rate > limit)
            return INT64_MAX;
    }
    return (acc << 16) + rate;
}

#else
#define half_bound_avx2 half_bound
#endif

/* Cost j of candidate k against the best so far (lowest id on ties). */
static inline void take(const mmp_sorted_scale *ss, int k, int64_t j, int64_t *best, int *best_id)
{
    if (j < *best) {
        *best = j;
        *best_id = ss->id[k];
    } else if (j == *best && ss->id[k] < *best_id) {
        *best_id = ss->id[k];
    }
}

/* Candidate k's exact cost against the best so far (lowest id on ties), for
 * nodes of at least 4 samples. */
static inline __attribute__((always_inline)) void
full_candidate(const mmp_sorted *sd, const mmp_sorted_scale *ss, int k, int log2n,
               const int32_t *r, const int16_t *r16, int64_t *best, int *best_id, const int avx2)
{
    const long at = (long)k << log2n;
    const int n = 1 << log2n;
    const int64_t rate = ss->rate[k];
    int64_t j;
    if (!sd->narrow) {
        const int32_t *e = ss->data + at;
        switch (log2n) {
        case 2: j = (small_sse(r, e, 4) << 16) + rate; break;
        case 3: j = (small_sse(r, e, 8) << 16) + rate; break;
        default: j = cost_wide(r, e, n, rate, *best);
        }
    } else {
        const int16_t *e = ss->data16 + at;
        switch (log2n) {
        case 2: j = (small_sse16(r, e, 4) << 16) + rate; break;
        case 3: j = (small_sse16(r, e, 8) << 16) + rate; break;
        default:
#if HAVE_AVX2
            if (avx2) {
                j = cost_narrow_avx2(r16, e, n, rate, *best);
                break;
            }
#endif
            j = cost_narrow(r, e, n, rate, *best);
        }
    }
    take(ss, k, j, best, best_id);
}

/* The candidates of positions k .. k + GROUP - 1 that pass half_bound, in order. */
static inline __attribute__((always_inline)) void
try_group(const mmp_sorted *sd, const mmp_sorted_scale *ss, int k, int log2n, const int32_t *r,
          const int16_t *r16, int32_t rhalf, int32_t rhalf2, int64_t *best, int *best_id,
          const int avx2)
{
    int64_t bnd[GROUP];
    unsigned m = avx2 ? half_bound_avx2(ss, k, log2n, rhalf, rhalf2, *best, bnd)
                      : half_bound(ss, k, log2n, rhalf, rhalf2, *best, bnd);
    while (m) {
        const int i = __builtin_ctz(m);
        m &= m - 1;
        if (log2n <= 1)
            take(ss, k + i, bnd[i], best, best_id);
        else
            full_candidate(sd, ss, k + i, log2n, r, r16, best, best_id, avx2);
    }
}

/* One candidate (position k of the sorted scale) against the best so far. */
static inline __attribute__((always_inline)) void
try_candidate(const mmp_sorted *sd, const mmp_sorted_scale *ss, int k, int log2n,
              const int32_t *r, const int16_t *r16, int32_t rhalf, int32_t rhalf2, int64_t *best,
              int *best_id, const int avx2)
{
    const int64_t bnd = half_bound_one(ss, k, log2n, rhalf, rhalf2);
    if (bnd > *best)
        return;
    if (log2n <= 1)
        take(ss, k, bnd, best, best_id);
    else
        full_candidate(sd, ss, k, log2n, r, r16, best, best_id, avx2);
}

/* Whether candidates whose sums lie diff or farther from the node's must
 * all cost more than best: (sum r - sum e)^2 / n plus the scale's least
 * rate bounds their cost. */
static inline int beyond(int64_t diff, int log2n, int64_t min_rate, int64_t best)
{
    return (((diff * diff) >> log2n) << 16) + min_rate > best;
}

static inline __attribute__((always_inline)) void
best_sorted(const mmp_sorted *sd, int s, int log2n, const int32_t *r, const int16_t *r16,
            int32_t rsum, int32_t rhalf, mmp_match *out, const int avx2)
{
    const mmp_sorted_scale *ss = &sd->sc[s];
    const int N = ss->n;
    const int64_t min_rate = sd->min_rate[s];
    const int32_t rhalf2 = rsum - rhalf;
    /* Where rsum falls, through the directory (a scan of up to 64 entries). */
    const int lo = mmp_lower_bound_dir(ss->sum, N, ss->dir, MMP_SORTED_DIR, 64, rsum);
    int64_t best = INT64_MAX;
    int best_id = 0;
    /* Seed with the nearest sums, then walk outwards on each side until the
     * sum bound rules out everything further away, a group at a time: the
     * sums only grow away from lo, so the group's nearest candidate decides,
     * and a candidate tried beyond where a one-by-one walk would have
     * stopped cannot win (its bound exceeds best). */
    if (lo < N)
        try_candidate(sd, ss, lo, log2n, r, r16, rhalf, rhalf2, &best, &best_id, avx2);
    if (lo > 0)
        try_candidate(sd, ss, lo - 1, log2n, r, r16, rhalf, rhalf2, &best, &best_id, avx2);
    int k = lo + 1;
    for (; k + GROUP <= N && !beyond((int64_t)ss->sum[k] - rsum, log2n, min_rate, best);
         k += GROUP)
        try_group(sd, ss, k, log2n, r, r16, rhalf, rhalf2, &best, &best_id, avx2);
    for (; k < N && !beyond((int64_t)ss->sum[k] - rsum, log2n, min_rate, best); k++)
        try_candidate(sd, ss, k, log2n, r, r16, rhalf, rhalf2, &best, &best_id, avx2);
    k = lo - 2;
    for (; k - GROUP + 1 >= 0 && !beyond((int64_t)rsum - ss->sum[k], log2n, min_rate, best);
         k -= GROUP)
        try_group(sd, ss, k - GROUP + 1, log2n, r, r16, rhalf, rhalf2, &best, &best_id, avx2);
    for (; k >= 0 && !beyond((int64_t)rsum - ss->sum[k], log2n, min_rate, best); k--)
        try_candidate(sd, ss, k, log2n, r, r16, rhalf, rhalf2, &best, &best_id, avx2);
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

/* The node search's body; its residual and sums fit in 32 bits (at most
 * 256 samples of at most 65535). */
static inline __attribute__((always_inline)) void
match_node(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
           const int32_t *pred, const uint8_t *real, int lw, int a, int b, int y0, int x0,
           mmp_match *out, mmp_node_cache *cache, const int avx2)
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
    int32_t half = 0, sum;
    for (int p = 0; p < n / 2; p++)
        half += node[p];
    sum = half;
    for (int p = n / 2; p < n; p++)
        sum += node[p];
    /* For cost_narrow_avx2 and the cache, the residual in 16 bits (|r| <=
     * maxval). */
    int16_t node16[MMP_B * MMP_B];
    const int s = mmp_scale(a, b), log2n = a + b;
    const int cached = cache && sd->narrow && log2n >= 1 && log2n <= CACHE_CLASSES;
    if ((avx2 && sd->narrow && n >= 16) || cached)
        for (int p = 0; p < n; p++)
            node16[p] = (int16_t)node[p];
    cache_entry *ce = NULL;
    const uint64_t tag = sd->gen << 5 | (uint64_t)s;
    if (cached) {
        ce = cache_slot(cache, node16, log2n, s);
        if (ce->tag == tag && !memcmp(ce->r, node16, sizeof(int16_t) * n)) {
            out->j = ce->j;
            out->idx = ce->idx;
            out->pad = 0;
            return;
        }
    }
    best_sorted(sd, s, log2n, node, node16, sum, half, out, avx2);
    if (ce) {
        ce->tag = tag;
        ce->j = out->j;
        ce->idx = out->idx;
        memcpy(ce->r, node16, sizeof(int16_t) * n);
    }
}

static void match_node_c(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                         const int32_t *pred, const uint8_t *real, int lw, int a, int b, int y0,
                         int x0, mmp_match *out, mmp_node_cache *cache)
{
    match_node(sd, t, orig, pred, real, lw, a, b, y0, x0, out, cache, 0);
}

#if HAVE_AVX2
AVX2 static void match_node_avx2(const mmp_sorted *sd, const mmp_search_tables *t,
                                 const int32_t *orig, const int32_t *pred, const uint8_t *real,
                                 int lw, int a, int b, int y0, int x0, mmp_match *out,
                                 mmp_node_cache *cache)
{
    match_node(sd, t, orig, pred, real, lw, a, b, y0, x0, out, cache, 1);
}
#endif

void mmp_sorted_finish(mmp_sorted *sd, const mmp_search_tables *t)
{
    sd->gen = atomic_fetch_add(&generations, 1) + 1;
    if (!sd->one)
        return;
    /* What match_node would search for a node of one sample of residual r:
     * its sum is r, its first half empty. */
    for (int32_t r = -sd->one_max; r <= sd->one_max; r++)
        best_sorted(sd, mmp_scale(0, 0), 0, &r, NULL, r, 0, &sd->one[r + sd->one_max], 0);
}

void mmp_match_node(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                    const int32_t *pred, const uint8_t *real, int lw, int a, int b, int y0, int x0,
                    mmp_match *out, mmp_node_cache *cache)
{
    if (a + b == 0 && sd->one) {
        const long at = ((long)y0 << lw) + x0;
        const int32_t r = orig[at] - pred[at];
        if ((!real || real[at]) && r >= -sd->one_max && r <= sd->one_max) {
            *out = sd->one[r + sd->one_max];
            return;
        }
    }
#if HAVE_AVX2
    if (sd->avx2) {
        match_node_avx2(sd, t, orig, pred, real, lw, a, b, y0, x0, out, cache);
        return;
    }
#endif
    match_node_c(sd, t, orig, pred, real, lw, a, b, y0, x0, out, cache);
}

int mmp_match_args_ok(const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
                      int nmodes, int lh, int lw)
{
    const int area = 1 << (lh + lw);
    int ok = 1;
    for (int i = 0; i < area; i++)
        ok &= orig[i] >= 0 && orig[i] <= t->maxval;
    for (long i = 0; i < (long)nmodes * area; i++)
        ok &= pred[i] >= 0 && pred[i] <= t->maxval;
    return ok;
}

void mmp_match_leaf(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                    const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                    mmp_match *out, mmp_node_cache *cache)
{
    assert(mmp_match_args_ok(t, orig, pred, nmodes, lh, lw));
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
                                       os + i * (w >> b) + j, cache);
            }
    }
}
