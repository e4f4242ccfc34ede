/*
 * The OpenMP engine: the seq engine's node search (mmp/engine_match.h),
 * spread over a persistent team of threads.
 *
 * match() cuts its (mode x residual node) searches into tasks of similar
 * estimated cost, largest nodes first, and the team claims them one at a
 * time, so it stays busy past ten threads even when only a few modes are
 * left to search. Calls too small to repay the hand-over run on the calling
 * thread alone. begin_block() spreads the copy of the dictionary in sum
 * order over chunks of every scale that grew, and the rates of every scale.
 *
 * Each node's result depends only on the node and the frozen tables, so the
 * output is that of seq whatever the thread count or the schedule.
 *
 * The team is one OpenMP parallel region that lives as long as the engine,
 * hosted by a helper thread; the calling thread joins in as thread 0 for
 * each job. A job is a count of tasks behind one atomic word (generation,
 * tasks left): threads claim tasks by compare-and-swap, and the caller waits
 * only for the tasks that were claimed, never for a thread that has not
 * woken up yet. (A parallel region per call would end in a barrier over the
 * whole team, which costs a lot where cores are shared or oversubscribed.)
 * Idle threads spin for a few tens of microseconds, then sleep on a
 * condition variable.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "common/error.h"
#include "mmp/engine.h"
#include "mmp/engine_match.h"

/*
 * Cost model, in units of one residual sample (about 0.1 us on a 2020s
 * core): a node of n samples costs n + 1. A call runs on the team from
 * PAR_MIN_COST on; tasks hold up to TASK_COST << 2L for a granularity level
 * L picked per call so that every thread gets several tasks.
 */
#define PAR_MIN_COST 256
#define TASK_COST 64
#define LEVELS 4
#define TASKS_PER_THREAD 16
/* begin_block: samples per copy task, rates per rate task, and the least
 * work (samples plus rates) worth the team. */
#define COPY_CHUNK 8192
#define RATE_CHUNK 4096
#define BEGIN_PAR_MIN 32768
/* Idle polls (about 30 ns each) before a thread sleeps or yields. */
#define SPIN 2000

typedef struct node {
    uint8_t a, b, y0, x0; /* scale and position of a residual node */
    uint16_t off;         /* its index among the block's nodes */
    uint16_t pad;
} node;

/* One leaf shape: its nodes, largest first, and their split into tasks
 * (node ranges) at each granularity level. */
typedef struct plan {
    int nnodes;
    int cost; /* of one mode */
    node *nodes;
    int ntask[LEVELS];
    uint16_t *bound[LEVELS]; /* task k: nodes bound[k] .. bound[k + 1] - 1 */
} plan;

typedef struct begin_task {
    int k, lo, hi, copy;
} begin_task;

/* One thread's own data, alone on its cache lines. */
typedef struct thread_data {
    _Alignas(64) int64_t min_rate[MMP_NSCALES];
    uint64_t tasks;
} thread_data;

enum { JOB_MATCH, JOB_BEGIN };

/* What the caller publishes; threads read it only after claiming a task. */
typedef struct job {
    int kind;
    int ntasks;
    /* JOB_MATCH */
    const plan *plan;
    const uint16_t *bound;
    const mmp_search_tables *t;
    const int32_t *orig, *pred;
    const uint8_t *real;
    int nmodes, lh, lw;
    mmp_match *out;
} job;

typedef struct omp_state {
    _Alignas(64) _Atomic uint64_t next; /* generation << 32 | tasks left */
    _Alignas(64) _Atomic int done;      /* tasks finished, summed when a thread runs dry */
    _Alignas(64) _Atomic int sleepers;
    _Atomic int quit;
    _Atomic int exited; /* threads out of worker() */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t host;
    int host_started;
    uint32_t gen;

    _Alignas(64) job job;
    mmp_sorted sd;
    int threads;
    int verbose;
    thread_data *td;
    plan plans[MMP_NLOG][MMP_NLOG];
    void *plan_mem;
    begin_task *btasks;
    int nbtasks_cap;
    uint64_t calls_seq, calls_par, wakes, blocks;
    double match_s, begin_s;
} omp_state;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ------------------------------------------------------------ plans */

static int node_cost(const node *n)
{
    return (1 << (n->a + n->b)) + 1;
}

static int build_plans(omp_state *s)
{
    size_t nodes = 0, bounds = 0;
    for (int lh = 0; lh <= MMP_LOG2B; lh++)
        for (int lw = 0; lw <= MMP_LOG2B; lw++) {
            nodes += mmp_match_count(lh, lw);
            bounds += LEVELS * (mmp_match_count(lh, lw) + 1);
        }
    char *mem = malloc(sizeof(node) * nodes + sizeof(uint16_t) * bounds);
    if (!mem)
        return MMP_ENOMEM;
    s->plan_mem = mem;
    node *nd = (node *)mem;
    uint16_t *bd = (uint16_t *)(nd + nodes);
    for (int lh = 0; lh <= MMP_LOG2B; lh++)
        for (int lw = 0; lw <= MMP_LOG2B; lw++) {
            plan *p = &s->plans[lh][lw];
            p->nodes = nd;
            p->nnodes = 0;
            p->cost = 0;
            /* Largest nodes first, so that what is handed out last is small. */
            for (int area = lh + lw; area >= 0; area--)
                for (int a = lh; a >= 0; a--) {
                    const int b = area - a;
                    if (b < 0 || b > lw)
                        continue;
                    const int rows = 1 << (lh - a), cols = 1 << (lw - b);
                    const int off = mmp_match_offset(lh, lw, a, b);
                    for (int i = 0; i < rows; i++)
                        for (int j = 0; j < cols; j++) {
                            node n = {.a = (uint8_t)a,
                                      .b = (uint8_t)b,
                                      .y0 = (uint8_t)(i << a),
                                      .x0 = (uint8_t)(j << b),
                                      .off = (uint16_t)(off + i * cols + j)};
                            p->nodes[p->nnodes++] = n;
                            p->cost += node_cost(&n);
                        }
                }
            nd += p->nnodes;
            for (int l = 0; l < LEVELS; l++) {
                const int cap = TASK_COST << (2 * l);
                p->bound[l] = bd;
                int k = 0, acc = 0;
                p->bound[l][k++] = 0;
                for (int q = 0; q < p->nnodes; q++) {
                    const int c = node_cost(&p->nodes[q]);
                    if (acc > 0 && acc + c > cap) {
                        p->bound[l][k++] = (uint16_t)q;
                        acc = 0;
                    }
                    acc += c;
                }
                p->bound[l][k] = (uint16_t)p->nnodes;
                p->ntask[l] = k;
                bd += k + 1;
            }
        }
    return 0;
}

/* ------------------------------------------------------------ tasks */

static void run_match_task(omp_state *s, int item)
{
    const job *j = &s->job;
    const int task = item / j->nmodes, m = item % j->nmodes;
    const int area = 1 << (j->lh + j->lw), count = mmp_match_count(j->lh, j->lw);
    const int32_t *pm = j->pred + (long)m * area;
    mmp_match *om = j->out + (long)m * count;
    for (int q = j->bound[task]; q < j->bound[task + 1]; q++) {
        const node *n = &j->plan->nodes[q];
        mmp_match_node(&s->sd, j->t, j->orig, pm, j->real, j->lw, n->a, n->b, n->y0, n->x0,
                       om + n->off);
    }
}

static void run_begin_task(omp_state *s, int item, int tid)
{
    const begin_task *bt = &s->btasks[item];
    if (bt->copy)
        mmp_sorted_copy(&s->sd, s->job.t, bt->k, bt->lo, bt->hi);
    int64_t m = mmp_sorted_rates(&s->sd, s->job.t, bt->k, bt->lo, bt->hi);
    int64_t *mr = &s->td[tid].min_rate[bt->k];
    *mr = m < *mr ? m : *mr;
}

static void run_task(omp_state *s, int item, int tid)
{
    if (s->job.kind == JOB_MATCH)
        run_match_task(s, item);
    else
        run_begin_task(s, item, tid);
}

/* Claim and run tasks of generation gen until none is left; returns how many. */
static int drain(omp_state *s, uint32_t gen, int tid)
{
    int n = 0;
    uint64_t v = atomic_load_explicit(&s->next, memory_order_relaxed);
    while ((uint32_t)(v >> 32) == gen && (uint32_t)v != 0) {
        if (atomic_compare_exchange_weak_explicit(&s->next, &v, v - 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
            /* The job cannot change before this task is done. */
            run_task(s, s->job.ntasks - (int)(uint32_t)v, tid);
            n++;
            v = atomic_load_explicit(&s->next, memory_order_relaxed);
        }
    }
    s->td[tid].tasks += (uint64_t)n;
    return n;
}

/* ------------------------------------------------------------ the team */

/* The next word whose generation is not `seen`, or any once quit is set. */
static uint64_t wait_job(omp_state *s, uint32_t seen)
{
    uint64_t v;
    for (int i = 0; i < SPIN; i++) {
        v = atomic_load_explicit(&s->next, memory_order_relaxed);
        if ((uint32_t)(v >> 32) != seen || atomic_load_explicit(&s->quit, memory_order_relaxed))
            return v;
        cpu_relax();
    }
    pthread_mutex_lock(&s->lock);
    atomic_fetch_add(&s->sleepers, 1);
    while ((uint32_t)((v = atomic_load(&s->next)) >> 32) == seen && !atomic_load(&s->quit))
        pthread_cond_wait(&s->wake, &s->lock);
    atomic_fetch_sub(&s->sleepers, 1);
    pthread_mutex_unlock(&s->lock);
    return v;
}

static void worker(omp_state *s, int tid)
{
    uint32_t seen = 0;
    for (;;) {
        uint64_t v = wait_job(s, seen);
        if (atomic_load_explicit(&s->quit, memory_order_relaxed)) {
            atomic_fetch_add_explicit(&s->exited, 1, memory_order_release);
            return;
        }
        seen = (uint32_t)(v >> 32);
        int n = drain(s, seen, tid);
        if (n)
            atomic_fetch_add_explicit(&s->done, n, memory_order_release);
    }
}

static void *host_team(void *arg)
{
    omp_state *s = arg;
#pragma omp parallel num_threads(s->threads - 1)
    worker(s, omp_get_thread_num() + 1);
    return NULL;
}

/* Run s->job's ntasks tasks on the team and the calling thread. */
static void run_job(omp_state *s, int ntasks)
{
    s->job.ntasks = ntasks;
    atomic_store_explicit(&s->done, 0, memory_order_relaxed);
    if (++s->gen == 0)
        s->gen = 1;
    atomic_store(&s->next, (uint64_t)s->gen << 32 | (uint32_t)ntasks);
    if (atomic_load(&s->sleepers) > 0) {
        s->wakes++;
        pthread_mutex_lock(&s->lock);
        pthread_cond_broadcast(&s->wake);
        pthread_mutex_unlock(&s->lock);
    }
    const int others = ntasks - drain(s, s->gen, 0);
    for (int i = 0; atomic_load_explicit(&s->done, memory_order_acquire) != others; i++) {
        if (i < SPIN)
            cpu_relax();
        else
            sched_yield();
    }
}

static void run_inline(omp_state *s, int ntasks)
{
    s->job.ntasks = ntasks;
    for (int i = 0; i < ntasks; i++)
        run_task(s, i, 0);
}

/* ------------------------------------------------------------ engine */

static void omp_destroy(void *state)
{
    omp_state *s = state;
    if (!s)
        return;
    if (s->host_started) {
        atomic_store(&s->quit, 1);
        pthread_mutex_lock(&s->lock);
        pthread_cond_broadcast(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->host, NULL);
        /* The end of the team's region already orders the threads' last
         * accesses before the join; this says so in C11 terms (and to TSan,
         * which does not see into libgomp). */
        (void)atomic_load_explicit(&s->exited, memory_order_acquire);
    }
    if (s->verbose && s->td) {
        fprintf(stderr,
                "omp engine: %d threads; %llu blocks, begin_block %.3f s; match %.3f s, "
                "%llu calls on the team (%llu woke it), %llu alone; tasks per thread:",
                s->threads, (unsigned long long)s->blocks, s->begin_s, s->match_s,
                (unsigned long long)s->calls_par, (unsigned long long)s->wakes,
                (unsigned long long)s->calls_seq);
        for (int i = 0; i < s->threads; i++)
            fprintf(stderr, " %llu", (unsigned long long)s->td[i].tasks);
        fprintf(stderr, "\n");
    }
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    mmp_sorted_free(&s->sd);
    free(s->plan_mem);
    free(s->td);
    free(s->btasks);
    free(s);
}

static int omp_create(void **state, const mmp_engine_config *cfg)
{
    omp_state *s = aligned_alloc(64, sizeof(omp_state));
    if (!s)
        return MMP_ENOMEM;
    memset(s, 0, sizeof(*s));
    atomic_init(&s->next, 0);
    atomic_init(&s->done, 0);
    atomic_init(&s->sleepers, 0);
    atomic_init(&s->quit, 0);
    atomic_init(&s->exited, 0);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    s->threads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
    if (s->threads < 1)
        s->threads = 1;
    s->verbose = cfg->verbose;
    s->td = aligned_alloc(64, sizeof(thread_data) * s->threads);
    int err = s->td ? build_plans(s) : MMP_ENOMEM;
    if (err) {
        omp_destroy(s);
        return err;
    }
    memset(s->td, 0, sizeof(thread_data) * s->threads);
    if (s->threads > 1) {
        if (pthread_create(&s->host, NULL, host_team, s) == 0)
            s->host_started = 1;
        else
            s->threads = 1; /* no team: the calling thread does everything */
    }
    *state = s;
    return 0;
}

static int omp_begin_block(void *state, const mmp_search_tables *t)
{
    omp_state *s = state;
    const double t0 = s->verbose ? omp_get_wtime() : 0;
    int err = mmp_sorted_reserve(&s->sd, t);
    if (err)
        return err;
    /* Tasks: chunks of every scale, largest first; a stale scale's chunks
     * copy before they rate. */
    int need = 0;
    for (int k = 0; k < MMP_NSCALES; k++) {
        const int per =
            mmp_sorted_stale(&s->sd, t, k) ? COPY_CHUNK / mmp_scale_area(k) : RATE_CHUNK;
        need += (t->dict->n[k] + per - 1) / per;
    }
    if (need > s->nbtasks_cap) {
        free(s->btasks);
        s->btasks = malloc(sizeof(begin_task) * need);
        s->nbtasks_cap = s->btasks ? need : 0;
        if (!s->btasks)
            return MMP_ENOMEM;
    }
    int ntasks = 0;
    long work = 0;
    for (int k = MMP_NSCALES - 1; k >= 0; k--) {
        const int n = t->dict->n[k], copy = mmp_sorted_stale(&s->sd, t, k);
        const int per = copy ? COPY_CHUNK / mmp_scale_area(k) : RATE_CHUNK;
        for (int lo = 0; lo < n; lo += per)
            s->btasks[ntasks++] = (begin_task){k, lo, lo + per < n ? lo + per : n, copy};
        work += (long)n * (copy ? mmp_scale_area(k) + 1 : 1);
    }
    for (int i = 0; i < s->threads; i++)
        for (int k = 0; k < MMP_NSCALES; k++)
            s->td[i].min_rate[k] = INT64_MAX;
    s->job.kind = JOB_BEGIN;
    s->job.t = t;
    if (s->threads > 1 && work >= BEGIN_PAR_MIN)
        run_job(s, ntasks);
    else
        run_inline(s, ntasks);
    mmp_sorted_commit(&s->sd, t);
    for (int k = 0; k < MMP_NSCALES; k++) {
        int64_t m = INT64_MAX;
        for (int i = 0; i < s->threads; i++)
            m = s->td[i].min_rate[k] < m ? s->td[i].min_rate[k] : m;
        s->sd.min_rate[k] = m;
    }
    if (s->verbose) {
        s->blocks++;
        s->begin_s += omp_get_wtime() - t0;
    }
    return 0;
}

static int omp_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    omp_state *s = state;
    const double t0 = s->verbose ? omp_get_wtime() : 0;
    const plan *p = &s->plans[lh][lw];
    const long cost = (long)nmodes * p->cost;
    const int team = s->threads > 1 && cost >= PAR_MIN_COST;
    /* The coarsest split that still gives every thread a few tasks. */
    int level = LEVELS - 1;
    if (team)
        while (level > 0 && (long)nmodes * p->ntask[level] < (long)TASKS_PER_THREAD * s->threads)
            level--;
    job *j = &s->job;
    j->kind = JOB_MATCH;
    j->plan = p;
    j->bound = p->bound[level];
    j->t = t;
    j->orig = orig;
    j->pred = pred;
    j->real = real;
    j->nmodes = nmodes;
    j->lh = lh;
    j->lw = lw;
    j->out = out;
    if (team) {
        run_job(s, nmodes * p->ntask[level]);
        s->calls_par++;
    } else {
        run_inline(s, nmodes * p->ntask[level]);
        s->calls_seq++;
    }
    if (s->verbose)
        s->match_s += omp_get_wtime() - t0;
    return 0;
}

const mmp_engine_ops mmp_engine_omp = {
    .name = "omp",
    .create = omp_create,
    .destroy = omp_destroy,
    .begin_block = omp_begin_block,
    .match = omp_match,
};
