/*
 * The search's schedule. A split runs as a task, taken by whichever thread
 * gets to it first: the node's own thread takes it after the leaf if nobody
 * has. Until the started ones end, that thread helps the engine with
 * others' matches. Each node waits in a task group of its own, which ends as
 * soon as this node's tasks have (a split run here leaves a task that finds
 * nothing to do); a taskwait would also wait for every earlier child of the
 * enclosing task, the splits of the ancestors that this thread runs inline.
 */
#include "mmp/enc/search_sched.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/scales.h"
#include "common/wait.h"

/* Splits of nodes of at least this many samples run as tasks when the
 * search is parallel (unless the engine says otherwise); below that the
 * hand-over costs more than it gains. */
#define TASK_MIN_AREA 64
/* From this many threads on, the horizontal split runs as a task as well:
 * more options in flight pay for many threads, less hand-over for few
 * (docs/tuning.md, "Search tasks"). */
#define BOTH_TASKS_THREADS 4

void mmp_sched_init(mmp_sched *sc, const mmp_engine_ops *eng, void *es)
{
    sc->eng = eng;
    sc->es = es;
#ifdef _OPENMP
    sc->threads = eng->concurrency ? eng->concurrency(es) : 1;
    if (sc->threads < 1)
        sc->threads = 1;
#else
    sc->threads = 1;
#endif
    sc->task_min_area = eng->task_min_area > 0 ? eng->task_min_area : TASK_MIN_AREA;
    sc->oversubscribed = !mmp_may_spin(sc->threads);
}

void mmp_sched_step(const mmp_sched *sc, int workers, void (*fn)(void *, int), void *arg)
{
    if (sc->threads > 1) {
#pragma omp parallel num_threads(sc->threads) default(none) shared(fn, arg, workers)
#pragma omp single
        /* Every worker a task, none on the implicit task: a thread that
         * waits inside a worker may then only take that worker's own tasks
         * (tied tasks), never another worker. */
        for (int w = 0; w < workers; w++) {
#pragma omp task default(none) firstprivate(fn, arg, w)
            fn(arg, w);
        }
    } else {
        for (int w = 0; w < workers; w++)
            fn(arg, w);
    }
}

/* The splits of one node: their states (0 waiting, 1 running, 2 done) and
 * what the node's thread sleeps on, if it must wait long (set up only
 * then, before sleeping is set: most nodes never need it). */
typedef struct node_wait {
    _Atomic int st[3];
    _Atomic int sleeping;
    pthread_mutex_t lock;
    pthread_cond_t cv;
} node_wait;

/* A split, by whichever thread gets to it first. */
static void run_once(const mmp_options *o, node_wait *nw, int flag)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&nw->st[flag], &expect, 1))
        return;
    o->split(o->ctx, flag);
    atomic_store(&nw->st[flag], 2);
    /* The node's thread may be asleep (it sets sleeping, then reads the
     * states: one of the two sees the other's store). */
    if (atomic_load(&nw->sleeping)) {
        pthread_mutex_lock(&nw->lock);
        pthread_cond_broadcast(&nw->cv);
        pthread_mutex_unlock(&nw->lock);
    }
}

static int splits_done(node_wait *nw)
{
    return atomic_load(&nw->st[MMP_FLAG_SPLIT_H]) == 2 &&
           atomic_load(&nw->st[MMP_FLAG_SPLIT_V]) == 2;
}

/* Spins this many steps (mmp_wait_step) for a split that another thread
 * runs, then, if the engine has no work to give a waiting thread (help) and
 * the threads outnumber the cores, sleeps: there, threads that only
 * yielded the core took it from those with work (seconds of system time);
 * with a core each, a thread that yields notices the split's end sooner
 * than one woken from sleep. */
#define SPINS 2000

void mmp_sched_options(const mmp_sched *sc, const mmp_options *o)
{
    if (!(sc->threads > 1 && o->area >= sc->task_min_area && o->can_v)) {
        o->leaf(o->ctx);
        if (o->can_h)
            o->split(o->ctx, MMP_FLAG_SPLIT_H);
        if (o->can_v)
            o->split(o->ctx, MMP_FLAG_SPLIT_V);
        return;
    }
    node_wait nw;
    atomic_init(&nw.st[0], 2);
    atomic_init(&nw.st[MMP_FLAG_SPLIT_H], o->can_h ? 0 : 2);
    atomic_init(&nw.st[MMP_FLAG_SPLIT_V], 0);
    atomic_init(&nw.sleeping, 0);
    node_wait *pw = &nw;
    const int both = sc->threads >= BOTH_TASKS_THREADS && o->can_h;
#pragma omp taskgroup
    {
        if (both) {
#pragma omp task default(none) firstprivate(o, pw)
            run_once(o, pw, MMP_FLAG_SPLIT_H);
        }
#pragma omp task default(none) firstprivate(o, pw)
        run_once(o, pw, MMP_FLAG_SPLIT_V);
        o->leaf(o->ctx);
        for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++)
            run_once(o, pw, f);
        for (int i = 0; !splits_done(pw); i++) {
            if (sc->eng->help && sc->eng->help(sc->es))
                continue;
            if (i < SPINS || sc->eng->help || !sc->oversubscribed) {
                mmp_wait_step(i);
                continue;
            }
            if (!atomic_load(&pw->sleeping)) {
                pthread_mutex_init(&pw->lock, NULL);
                pthread_cond_init(&pw->cv, NULL);
            }
            pthread_mutex_lock(&pw->lock);
            atomic_store(&pw->sleeping, 1);
            while (!splits_done(pw))
                pthread_cond_wait(&pw->cv, &pw->lock);
            pthread_mutex_unlock(&pw->lock);
        }
    }
    /* Other threads touch nw only inside the tasks, which the taskgroup
     * has waited for. */
    if (atomic_load(&nw.sleeping)) {
        pthread_cond_destroy(&nw.cv);
        pthread_mutex_destroy(&nw.lock);
    }
}

int mmp_pool_init(mmp_pool *p, size_t size, int initial, int cap)
{
    pthread_mutex_init(&p->lock, NULL);
    p->size = size;
    p->nowned = p->navail = 0;
    p->cap = cap;
    p->owned = calloc((size_t)cap, sizeof *p->owned);
    p->avail = calloc((size_t)cap, sizeof *p->avail);
    if (!p->owned || !p->avail) {
        p->cap = 0;
        return MMP_ENOMEM;
    }
    for (int i = 0; i < initial && i < cap; i++) {
        void *x = malloc(size);
        if (!x)
            return MMP_ENOMEM;
        p->owned[p->nowned++] = x;
        p->avail[p->navail++] = x;
    }
    return 0;
}

void mmp_pool_free(mmp_pool *p)
{
    for (int i = 0; i < p->nowned; i++)
        free(p->owned[i]);
    free(p->owned);
    free(p->avail);
    pthread_mutex_destroy(&p->lock);
}

void *mmp_pool_get(mmp_pool *p)
{
    void *x = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->navail) {
        x = p->avail[--p->navail];
    } else if (p->nowned < p->cap) {
        x = malloc(p->size);
        if (x)
            p->owned[p->nowned++] = x;
    }
    pthread_mutex_unlock(&p->lock);
    return x;
}

void mmp_pool_put(mmp_pool *p, void *x)
{
    pthread_mutex_lock(&p->lock);
    p->avail[p->navail++] = x;
    pthread_mutex_unlock(&p->lock);
}
