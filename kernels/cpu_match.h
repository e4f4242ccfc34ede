/*
 * The per-node matching shared by the CPU engines (seq, omp).
 *
 * An engine keeps a copy of the frozen dictionary in sum order (mmp_sorted),
 * refreshed at the start of each step of blocks, and asks mmp_match_node() for the
 * best element of each residual node. The node search depends only on the
 * node and the frozen tables, never on which thread runs it or in what
 * order, so engines that split the nodes differently return the same
 * mmp_match bit for bit.
 *
 * Refreshing the copy (what seq's begin_step does in one call to
 * mmp_sorted_refresh) is split into steps that other engines may spread over
 * threads:
 *   1. mmp_sorted_reserve(), once, on one thread;
 *   2. for every scale k with mmp_sorted_stale(sd, t, k): mmp_sorted_copy()
 *      over disjoint ranges covering [0, t->dict->n[k]), from any threads;
 *   3. mmp_sorted_commit() on one thread (marks the copies current);
 *   4. mmp_sorted_rates() over disjoint ranges of every scale, from any
 *      threads, and sd->min_rate[k] set to the least of what they return;
 *   5. mmp_sorted_finish(), once, on one thread.
 *
 * A node's result depends only on its scale, its residual and the frozen
 * tables, and the same small residual recurs all over a step (the same
 * sub-block of leaves of several sizes, modes that predict it alike): a
 * thread may keep its results of the step in a cache of its own
 * (mmp_node_cache), checked sample by sample.
 */
#ifndef MMP_KERNELS_CPU_MATCH_H
#define MMP_KERNELS_CPU_MATCH_H

#include <stdint.h>

#include "kernels/engine.h"

/* The sums' directory: every MMP_SORTED_DIR-th, so that finding a sum is
 * two short counting loops, not a chain of dependent loads. */
#define MMP_SORTED_DIR 32

/* Samples of at most this keep the table of one-sample nodes (mmp_sorted_finish):
 * at most 2 * 1023 + 1 searches a step, where a block alone has some
 * fifteen thousand nodes of one sample (camera's 256 x 256 crop at lambda
 * 10: 3.98 million in its 256 blocks). */
#define MMP_SORTED_ONE_MAX 1023

/* One scale of the dictionary in ascending order of element sums. */
typedef struct mmp_sorted_scale {
    int n, cap;    /* elements copied, allocated */
    int32_t *data;   /* n * area samples in sum order (wide samples) */
    int16_t *data16; /* the same in 16 bits, for narrow samples (|e| <= maxval <= 5792):
                      * half the memory that the search streams through */
    int32_t *sum;  /* sums, ascending */
    int32_t *half; /* sums of the first half (row-major) of each element */
    int32_t *id;   /* dictionary index of each */
    int64_t *rate; /* lambda_q8 * idx_cost[id] */
    int32_t *dir;  /* every MMP_SORTED_DIR-th sum, from the first */
} mmp_sorted_scale;

typedef struct mmp_sorted {
    mmp_sorted_scale sc[MMP_NSCALES];
    int64_t min_rate[MMP_NSCALES]; /* least rate of each scale, INT64_MAX when empty */
    mmp_match *one; /* one[r + one_max]: the search's result for a node of one sample, residual r; NULL: none */
    int one_max;    /* the maxval the table is for */
    uint64_t gen;   /* the tables' generation: new at every step, unique in the process */
    int narrow;                    /* samples small enough for 32-bit partial sums */
    int avx2;                      /* node searches with the AVX2 build (mmp_cpu_match_avx2) */
    uint32_t dict_id;              /* the dictionary the copies are of */
} mmp_sorted;

/* Whether the node search may use its AVX2 build: the CPU has AVX2 and
 * mmp_cpu_match_simd has not turned it off. Read when an engine reserves
 * its copies (every step). The builds give the same results; the switch is
 * for tests, which check each against the exhaustive search. */
int mmp_cpu_match_avx2(void);
void mmp_cpu_match_simd(int on);

/* Frees the copies; the struct may then be reused (it is left zeroed). */
void mmp_sorted_free(mmp_sorted *sd);

/* Step 1: room for t->dict at every scale. Returns 0 or MMP_ENOMEM. */
int mmp_sorted_reserve(mmp_sorted *sd, const mmp_search_tables *t);

/* Whether scale k must be copied again (the dictionary grew there). */
static inline int mmp_sorted_stale(const mmp_sorted *sd, const mmp_search_tables *t, int k)
{
    return sd->sc[k].n != t->dict->n[k] || sd->dict_id != t->dict_id;
}

/* Step 2: copy positions [lo, hi) of the sum order of scale k. */
void mmp_sorted_copy(mmp_sorted *sd, const mmp_search_tables *t, int k, int lo, int hi);

/* Step 3: the copies of every scale are now those of t->dict. */
void mmp_sorted_commit(mmp_sorted *sd, const mmp_search_tables *t);

/* Step 4: rates of positions [lo, hi) of scale k; returns their least
 * (INT64_MAX when the range is empty). */
int64_t mmp_sorted_rates(mmp_sorted *sd, const mmp_search_tables *t, int k, int lo, int hi);

/* Step 5: a new generation (which empties every mmp_node_cache), and the
 * table of nodes of one sample, where kept (maxval at most
 * MMP_SORTED_ONE_MAX): the node search's result for every residual value
 * |r| <= maxval, looked up instead of searched (nodes of one sample are the
 * most numerous). */
void mmp_sorted_finish(mmp_sorted *sd, const mmp_search_tables *t);

/* One thread's results of nodes of 2 to 16 narrow samples (NULL when out
 * of memory; then the thread searches without one). */
typedef struct mmp_node_cache mmp_node_cache;
mmp_node_cache *mmp_node_cache_new(void);
void mmp_node_cache_free(mmp_node_cache *c);

/* Steps 1 to 5 in one call, sequentially. Returns 0 or MMP_ENOMEM. */
int mmp_sorted_refresh(mmp_sorted *sd, const mmp_search_tables *t);

/*
 * The best element for one residual node: the 2^a x 2^b sub-block at
 * (y0, x0) of the residual orig - pred of a block 2^lw pixels wide; real is
 * the block's mask of real pixels, or NULL when all are real. Writes the
 * contract's (lowest J, lowest index on ties) to *out. cache: the calling
 * thread's own, or NULL.
 */
void mmp_match_node(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                    const int32_t *pred, const uint8_t *real, int lw, int a, int b, int y0, int x0,
                    mmp_match *out, mmp_node_cache *cache);

/* Whether orig and pred hold to match()'s contract (kernels/engine.h:
 * samples in [0, maxval]), on which the 16-bit residuals and the caches'
 * keys rely; for the engines' asserts, once a call. */
int mmp_match_args_ok(const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
                      int nmodes, int lh, int lw);

/* Every node of every mode of a 2^lh x 2^lw leaf: the engine op match()
 * (kernels/engine.h) on the CPU, one node after another. */
void mmp_match_leaf(const mmp_sorted *sd, const mmp_search_tables *t, const int32_t *orig,
                    const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                    mmp_match *out, mmp_node_cache *cache);

#endif
