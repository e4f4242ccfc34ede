/*
 * The search engine interface: the hot part of the Lagrangian search.
 *
 * For a prediction leaf candidate of 2^lh x 2^lw pixels and each of its
 * prediction modes, an engine finds, for every node of the residual tree
 * (every dyadic sub-block 2^a x 2^b at every position), the dictionary
 * element of that scale with the lowest cost
 *
 *     J = (D << 16) + lambda_q8 * idx_cost[e]
 *
 * where D = sum over real pixels of (orig - pred - e)^2, the squared error of
 * the residual before the reconstruction is clipped, and ties go to the
 * lowest index e. (The unclipped error keeps the cost a plain distance, so
 * engines can prune with exact lower bounds.) Everything else (tree decisions, entropy
 * coding, dictionary updates) is common code, so every engine that meets this
 * contract produces the same bytes.
 */
#ifndef MMP_KERNELS_ENGINE_H
#define MMP_KERNELS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/log.h"
#include "common/scales.h"
#include "dict/dict.h"

typedef struct mmp_match {
    int64_t j;    /* best cost (D << 16) + lambda_q8 * idx_cost */
    int32_t idx;  /* its dictionary index */
    int32_t pad;
} mmp_match;

/* What is frozen while the B x B blocks of one step are searched. */
typedef struct mmp_search_tables {
    const mmp_dict *dict;
    const uint32_t *idx_cost[MMP_NSCALES]; /* Q8 bits of each index, dict->n[s] entries */
    int64_t lambda_q8;
    int maxval;
    int step;                              /* index of the step in the coding order */
    uint32_t dict_id;                      /* which dictionary: another value is another
                                            * dictionary (another plane), whose elements
                                            * engines must take afresh */
} mmp_search_tables;

typedef struct mmp_engine_config {
    int threads;        /* 0: the engine's default (all cores for omp) */
    int verbose;        /* 1: figures at MMP_LOG_INFO through log */
    const char *device; /* engines with devices: which one (NULL: the default;
                         * see the engine's devices op for the syntax) */
    const char *tune;   /* engine-specific overrides for benchmarks, or NULL */
    mmp_logger log;     /* warnings and figures; errors also go to errbuf */
} mmp_engine_config;

/* One device an engine can run on (engines with devices: opencl). */
typedef struct mmp_engine_device {
    int platform, device;     /* indices, written "P:D" */
    int is_gpu;
    char type[16];            /* "GPU", "CPU", "accelerator" or "other" */
    char name[128];
    char platform_name[128];
    unsigned compute_units;
    unsigned long long memory_mib;
} mmp_engine_device;

/* A call that submit() started, for its wait(): the engine's record of it. */
typedef struct mmp_engine_ticket {
    void *call;
} mmp_engine_ticket;

typedef struct mmp_engine_ops {
    const char *name;
    /* Returns 0 or a negative MMP_E* code with a one-line reason in errbuf;
     * *state is the engine's to free. */
    int (*create)(void **state, const mmp_engine_config *cfg, char *errbuf, size_t errlen);
    void (*destroy)(void *state);
    /* For -e auto, without creating anything: how much this engine is to be
     * preferred with cfg on this machine (higher first), or < 0 when it
     * should not be picked (for example no GPU). */
    int (*probe)(const mmp_engine_config *cfg);
    /* Optional: the devices the engine sees, up to max of them into list
     * (list may be NULL when max is 0). Returns how many there are, or a
     * negative code with the reason in errbuf (no platform, no device).
     * *pick gets the index of the one that `spec` (cfg->device's syntax,
     * NULL for the default) selects, or -1 with the reason in errbuf. */
    int (*devices)(mmp_engine_device *list, int max, const char *spec, int *pick, char *errbuf,
                   size_t errlen);
    /* Optional: a one-line reason for the first failed call, or NULL. */
    const char *(*last_error)(void *state);
    /* Called once per step of blocks before any match(): the tables stay
     * frozen until the next call (engines may cache or upload the dictionary
     * here). */
    int (*begin_step)(void *state, const mmp_search_tables *t);
    /*
     * orig: the 2^lh x 2^lw original samples (row-major); pred: nmodes
     * predictions of the same size, one after another; both in [0,
     * t->maxval], so that every residual lies in [-maxval, maxval] (the CPU
     * engines hold narrow residuals in 16 bits, and key their caches by
     * them); real: 1 per real pixel, or NULL when all are real. out: nmodes * mmp_match_count(lh, lw)
     * results, for each mode the nodes in the order of mmp_match_offset.
     */
    int (*match)(void *state, const mmp_search_tables *t, const int32_t *orig,
                 const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                 mmp_match *out);
    /* Optional, for engines whose calls mostly wait for a device: match()
     * in two halves, so that the caller works while the device does.
     * submit() takes match()'s arguments, which must stay valid and
     * untouched until wait(), and returns at once: 0, after which exactly
     * one wait() of *tk follows on the same thread before it submits or
     * matches again, or match()'s error code (then no wait()). wait()
     * returns match()'s code once out holds the results. */
    int (*submit)(void *state, const mmp_search_tables *t, const int32_t *orig,
                  const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                  mmp_match *out, mmp_engine_ticket *tk);
    int (*wait)(void *state, mmp_engine_ticket *tk);
    /* How many threads may call match() at the same time (NULL: one). When
     * more than one, the search runs independent options of the prediction
     * tree as OpenMP tasks on that many threads, and match() is called from
     * inside that parallel region (it may spawn tasks of its own). */
    int (*concurrency)(void *state);
    /* Optional, for concurrent engines: run one piece of the work of the
     * match() calls in flight on other threads, if there is any; returns 1
     * if it ran one. The search calls it while it waits for another thread. */
    int (*help)(void *state);
    /* Concurrent engines: the least area (samples) of a prediction-tree
     * node whose splits run as tasks (0: the search's default). An engine
     * whose calls mostly wait for a device wants every option in flight. */
    int task_min_area;
    /* 1 when create() takes long (opencl: loading the platforms, a context
     * and the kernels): the encoder may search on a CPU engine meanwhile
     * (mmp/enc/engine_start.h). */
    int slow_start;
} mmp_engine_ops;

/* Nodes of the residual tree of a 2^lh x 2^lw block: (2^(lh+1)-1)(2^(lw+1)-1). */
static inline int mmp_match_count(int lh, int lw)
{
    return ((2 << lh) - 1) * ((2 << lw) - 1);
}

/* Index of the first node of sub-scale (a, b); node (i, j) of that scale
 * (row i of 2^(lh-a), column j of 2^(lw-b)) follows at + i * 2^(lw-b) + j.
 * Scales are ordered by a, then b. */
static inline int mmp_match_offset(int lh, int lw, int a, int b)
{
    /* sum over a' < a of 2^(lh-a') * (2^(lw+1)-1), then b' < b of 2^(lh-a) 2^(lw-b') */
    int rows_before = (2 << lh) - (2 << (lh - a));          /* sum_{a'<a} 2^(lh-a') */
    int cols_all = (2 << lw) - 1;
    int cols_before = (2 << lw) - (2 << (lw - b));
    return rows_before * cols_all + (1 << (lh - a)) * cols_before;
}

/*
 * The registry: the engines built into this binary (kernels/registry.c), seq
 * first. No caller names a backend: -e auto asks every engine's probe.
 */
int mmp_engine_count(void);
const mmp_engine_ops *mmp_engine_at(int i);
/* NULL when `name` is unknown ("auto" is not an engine: see below). */
const mmp_engine_ops *mmp_engine_find(const char *name);
/* The engines in the order -e auto tries them: the probes' ranks, highest
 * first (ties in registry order), leaving out those that rank below 0 (seq
 * never does). Returns how many were written to order[0..max). */
int mmp_engine_auto_order(const mmp_engine_config *cfg, const mmp_engine_ops **order, int max);
/* "seq, omp, ..., auto": the names for help texts, from the registry. */
const char *mmp_engine_names(void);

#endif
