/*
 * How the search runs (encoder only): the three options of each
 * prediction-tree node (leaf, horizontal split, vertical split) are
 * independent given the reconstruction around the node, so with an engine
 * that takes several match() calls at once (mmp_engine_ops.concurrency) the
 * splits run as OpenMP tasks beside the leaf; and a pool of working memory,
 * so that concurrent leaf evaluations never share any. What is decided
 * never depends on this schedule (mmp/enc/search.c). A thread that waits for a
 * split another thread runs helps the engine if it can (help), else spins,
 * and sleeps after a while if the threads outnumber the cores, so that an
 * engine may have many more threads than cores (opencl's mostly wait for
 * the device).
 */
#ifndef MMP_MMP_SEARCH_SCHED_H
#define MMP_MMP_SEARCH_SCHED_H

#include <pthread.h>
#include <stddef.h>

#include "kernels/engine.h"

typedef struct mmp_sched {
    int threads;       /* > 1: the options run as OpenMP tasks on that many threads */
    int task_min_area; /* of a node whose splits run as tasks */
    int oversubscribed; /* more threads than cores */
    const mmp_engine_ops *eng;
    void *es;
} mmp_sched;

/* The schedule for an engine: its concurrency (one thread without OpenMP)
 * and the task granularity it asks for. */
void mmp_sched_init(mmp_sched *sc, const mmp_engine_ops *eng, void *es);

/* Runs fn(arg, w) for w = 0 .. workers - 1, the workers of one step (each
 * searching blocks): when sc->threads > 1 as tasks of a parallel region of
 * that many threads, which also take the tasks the workers spawn; otherwise
 * one after another. workers is at most sc->threads. */
void mmp_sched_step(const mmp_sched *sc, int workers, void (*fn)(void *, int), void *arg);

/* The options of one node. */
typedef struct mmp_options {
    void (*leaf)(void *ctx);            /* the node as a leaf */
    void (*split)(void *ctx, int flag); /* MMP_FLAG_SPLIT_H or MMP_FLAG_SPLIT_V */
    void *ctx;
    int can_h, can_v; /* which splits exist */
    int area;         /* of the node, in samples */
} mmp_options;

/*
 * Runs each option of o once and returns when all have ended. The leaf runs
 * on this thread, before any split that this thread runs itself; a split
 * may run on another thread, before, during or after the leaf (so a split
 * must only read the leaf's cost through atomics). Without tasks the order
 * is leaf, H, V.
 */
void mmp_sched_options(const mmp_sched *sc, const mmp_options *o);

/* A thread-safe pool of equal-sized blocks of working memory. */
typedef struct mmp_pool {
    pthread_mutex_t lock;
    size_t size;
    void **owned; /* every block, for freeing */
    int nowned, cap;
    void **avail; /* the free ones, last in first out */
    int navail;
} mmp_pool;

/* Room for up to cap blocks of `size` bytes, `initial` of them allocated
 * now. Returns 0 or MMP_ENOMEM (the pool is then empty but valid). */
int mmp_pool_init(mmp_pool *p, size_t size, int initial, int cap);
void mmp_pool_free(mmp_pool *p);
/* A free block (a new one when all are in use), or NULL (cap reached or no
 * memory). */
void *mmp_pool_get(mmp_pool *p);
void mmp_pool_put(mmp_pool *p, void *x);

#endif
