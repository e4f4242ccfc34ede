/*
 * The OpenMP engine: the seq engine's node search (kernels/cpu_match.h) on
 * every core, at two levels.
 *
 * The search (mmp/enc/search.c) runs the independent options of the prediction
 * tree (leaf, horizontal split, vertical split of every node) as OpenMP
 * tasks, up to `threads` of them at once, each calling match() for its own
 * leaves: this engine reports that concurrency. Inside a match() call the
 * (mode x residual node) searches are cut into tasks of similar estimated
 * cost, largest nodes first, and published in the calling thread's job slot;
 * the caller claims them one at a time, a few OpenMP tasks spawned for the
 * job wake idle threads to claim them too, and threads that wait (for their
 * own job's last tasks, or for an option of the search, through help())
 * claim tasks of any job meanwhile. Nobody waits idle while there is work,
 * and no thread is parked in a taskwait. Calls too small to repay the
 * hand-over run on the calling thread alone. begin_step() copies the
 * dictionary in sum order, in chunks of every scale that grew, and computes
 * the rates of every scale, as a parallel loop.
 *
 * Each node's result depends only on the node and the frozen tables, so the
 * output is that of seq whatever the thread count or the schedule.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "common/cores.h"
#include "common/error.h"
#include "common/log.h"
#include "common/wait.h"
#include "kernels/engine.h"
#include "kernels/cpu_match.h"

/*
 * Cost model, in units of the work on one residual sample (the matching
 * loop's step): a node of n samples costs n + 1, the 1 for the node's
 * fixed overhead. A call is split into tasks from
 * PAR_MIN_COST on; tasks hold up to TASK_COST << 2L for a granularity level
 * L picked per call so that every thread could get a few tasks.
 */
#define PAR_MIN_COST 1024
#define TASK_COST 64
#define LEVELS 4
#define TASKS_PER_THREAD 4
/* OpenMP tasks spawned per job to wake idle threads, at most. */
#define HELPERS 15
/* begin_step: samples per copy task, rates per rate task, and the least
 * work (samples plus rates) worth the team. */
#define COPY_CHUNK 8192
#define RATE_CHUNK 4096
#define BEGIN_PAR_MIN 32768

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

/* One thread's own counters, alone on their cache lines. */
typedef struct thread_data {
    _Alignas(64) int64_t min_rate[MMP_NSCALES];
    uint64_t tasks, calls_par, calls_seq;
    double match_s;
} thread_data;

/* One match() call, shared with its tasks. */
typedef struct job {
    const plan *plan;
    const uint16_t *bound;
    const mmp_sorted *sd;
    const mmp_search_tables *t;
    const int32_t *orig, *pred;
    const uint8_t *real;
    int nmodes, lh, lw;
    mmp_match *out;
} job;

/* A thread's match() job, published for others to claim tasks of: the job
 * is read only by a thread that has claimed one of its tasks, and the owner
 * waits until every claimed task is done, so it never changes under them. */
typedef struct job_slot {
    _Alignas(64) _Atomic uint64_t next; /* generation << 32 | tasks left */
    _Atomic int done;                    /* tasks finished */
    int ntasks;
    uint32_t gen;
    job j;
} job_slot;

typedef struct omp_state {
    mmp_sorted sd;
    mmp_node_cache **cache; /* threads entries: thread i's (or NULL) */
    job_slot *slots; /* threads entries */
    int threads;
    int verbose;
    mmp_logger log;
    thread_data *td; /* threads entries */
    plan plans[MMP_NLOG][MMP_NLOG];
    void *plan_mem;
    begin_task *btasks;
    int nbtasks_cap;
    uint64_t steps;
    double begin_s;
} omp_state;

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

static void run_match_task(const job *j, int item, mmp_node_cache *cache)
{
    const int task = item / j->nmodes, m = item % j->nmodes;
    const int area = 1 << (j->lh + j->lw), count = mmp_match_count(j->lh, j->lw);
    const int32_t *pm = j->pred + (long)m * area;
    mmp_match *om = j->out + (long)m * count;
    for (int q = j->bound[task]; q < j->bound[task + 1]; q++) {
        const node *n = &j->plan->nodes[q];
        mmp_match_node(j->sd, j->t, j->orig, pm, j->real, j->lw, n->a, n->b, n->y0, n->x0,
                       om + n->off, cache);
    }
}

static void run_begin_task(omp_state *s, const mmp_search_tables *t, int item, int tid)
{
    const begin_task *bt = &s->btasks[item];
    if (bt->copy)
        mmp_sorted_copy(&s->sd, t, bt->k, bt->lo, bt->hi);
    int64_t m = mmp_sorted_rates(&s->sd, t, bt->k, bt->lo, bt->hi);
    int64_t *mr = &s->td[tid].min_rate[bt->k];
    *mr = m < *mr ? m : *mr;
}

/* The calling thread's counters (thread 0 outside a parallel region). */
static thread_data *my_data(omp_state *s)
{
    const int tid = omp_get_thread_num();
    return &s->td[tid < s->threads ? tid : 0];
}

/* The calling thread's node cache: the threads of the team that calls
 * match() (the contract: one team, or one caller outside any) have numbers
 * of their own below `threads`. */
static mmp_node_cache *my_cache(omp_state *s)
{
    const int tid = omp_get_thread_num();
    return tid < s->threads ? s->cache[tid] : NULL;
}

/* Claims and runs one task of slot js (of generation gen, or of any when
 * gen is 0); returns 1 if it ran one. */
static int claim_run(omp_state *s, job_slot *js, uint32_t gen)
{
    uint64_t v = atomic_load_explicit(&js->next, memory_order_relaxed);
    for (;;) {
        if ((uint32_t)v == 0 || (gen && (uint32_t)(v >> 32) != gen))
            return 0;
        if (atomic_compare_exchange_weak_explicit(&js->next, &v, v - 1, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    run_match_task(&js->j, js->ntasks - (int)(uint32_t)v, my_cache(s));
    my_data(s)->tasks++;
    atomic_fetch_add_explicit(&js->done, 1, memory_order_release);
    return 1;
}

/* One task of any thread's job but the caller's. */
static int omp_help(void *state)
{
    omp_state *s = state;
    const int me = omp_get_thread_num();
    for (int k = 1; k < s->threads; k++)
        if (claim_run(s, &s->slots[(me + k) % s->threads], 0))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ engine */

static void omp_destroy(void *state)
{
    omp_state *s = state;
    if (!s)
        return;
    if (s->verbose && s->td) {
        uint64_t par = 0, seq = 0;
        double ms = 0;
        char per[512];
        size_t at = 0;
        per[0] = 0;
        for (int i = 0; i < s->threads; i++) {
            par += s->td[i].calls_par;
            seq += s->td[i].calls_seq;
            ms += s->td[i].match_s;
            if (at < sizeof per)
                at += (size_t)snprintf(per + at, sizeof per - at, " %llu",
                                       (unsigned long long)s->td[i].tasks);
        }
        mmp_log(&s->log, MMP_LOG_INFO,
                "omp engine: %d threads, node search's %s build; %llu steps, begin_step %.3f s; "
                "match %.3f thread-s, %llu calls split into tasks, %llu whole; node tasks run per "
                "thread:%s",
                s->threads, s->sd.avx2 ? "AVX2" : "C", (unsigned long long)s->steps, s->begin_s, ms,
                (unsigned long long)par, (unsigned long long)seq, per);
    }
    mmp_sorted_free(&s->sd);
    for (int i = 0; s->cache && i < s->threads; i++)
        mmp_node_cache_free(s->cache[i]);
    free(s->cache);
    free(s->slots);
    free(s->plan_mem);
    free(s->td);
    free(s->btasks);
    free(s);
}

static int omp_create(void **state, const mmp_engine_config *cfg, char *errbuf, size_t errlen)
{
    omp_state *s = calloc(1, sizeof(omp_state));
    if (!s)
        return MMP_ENOMEM;
    /* By default every core that other work leaves (common/cores.h), at
     * most OpenMP's count (OMP_NUM_THREADS). */
    if (cfg->threads > 0) {
        s->threads = cfg->threads;
    } else {
        const int spare = mmp_spare_cores(), most = omp_get_max_threads();
        s->threads = spare > 0 && spare < most ? spare : most;
    }
    if (s->threads < 1)
        s->threads = 1;
    s->verbose = cfg->verbose;
    s->log = cfg->log;
    s->td = aligned_alloc(64, sizeof(thread_data) * s->threads);
    s->slots = aligned_alloc(64, sizeof(job_slot) * s->threads);
    s->cache = calloc((size_t)s->threads, sizeof(mmp_node_cache *));
    for (int i = 0; s->cache && i < s->threads; i++)
        s->cache[i] = mmp_node_cache_new(); /* that thread searches without one if NULL */
    int err = s->td && s->slots && s->cache ? build_plans(s) : MMP_ENOMEM;
    if (err) {
        omp_destroy(s);
        return mmp_error(errbuf, errlen, err, "out of memory");
    }
    memset(s->td, 0, sizeof(thread_data) * s->threads);
    memset(s->slots, 0, sizeof(job_slot) * s->threads);
    for (int i = 0; i < s->threads; i++) {
        atomic_init(&s->slots[i].next, 0);
        atomic_init(&s->slots[i].done, 0);
    }
    *state = s;
    return 0;
}

/* For -e auto: before seq (the same bytes, and no slower on one core). */
static int omp_probe(const mmp_engine_config *cfg)
{
    (void)cfg;
    return 1;
}

static int omp_concurrency(void *state)
{
    return ((omp_state *)state)->threads;
}

static int omp_begin_step(void *state, const mmp_search_tables *t)
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
    const int team = s->threads > 1 && work >= BEGIN_PAR_MIN;
#pragma omp parallel for num_threads(s->threads) if (team) schedule(dynamic, 1) default(none) \
    shared(s, t, ntasks)
    for (int i = 0; i < ntasks; i++)
        run_begin_task(s, t, i, omp_get_thread_num());
    mmp_sorted_commit(&s->sd, t);
    for (int k = 0; k < MMP_NSCALES; k++) {
        int64_t m = INT64_MAX;
        for (int i = 0; i < s->threads; i++)
            m = s->td[i].min_rate[k] < m ? s->td[i].min_rate[k] : m;
        s->sd.min_rate[k] = m;
    }
    mmp_sorted_finish(&s->sd, t);
    if (s->verbose) {
        s->steps++;
        s->begin_s += omp_get_wtime() - t0;
    }
    return 0;
}

/*
 * The op submit: a call large enough to share is published in the calling
 * thread's job slot, with a few OpenMP tasks to wake idle threads, and left
 * to them until wait(), where the caller claims what is left and helps
 * with other jobs until its own are done; a smaller call runs here whole.
 */
static int omp_submit(void *state, const mmp_search_tables *t, const int32_t *orig,
                      const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                      mmp_match *out, mmp_engine_ticket *tk)
{
    omp_state *s = state;
    assert(mmp_match_args_ok(t, orig, pred, nmodes, lh, lw));
    thread_data *td = my_data(s);
    const double t0 = s->verbose ? omp_get_wtime() : 0;
    const plan *p = &s->plans[lh][lw];
    const long cost = (long)nmodes * p->cost;
    const int tid = omp_get_thread_num();
    const int split = s->threads > 1 && cost >= PAR_MIN_COST && omp_in_parallel() &&
                      tid < s->threads;
    /* The coarsest split that still gives every thread a few tasks. */
    int level = LEVELS - 1;
    if (split)
        while (level > 0 && (long)nmodes * p->ntask[level] < (long)TASKS_PER_THREAD * s->threads)
            level--;
    const job j = {.plan = p,
                   .bound = p->bound[level],
                   .sd = &s->sd,
                   .t = t,
                   .orig = orig,
                   .pred = pred,
                   .real = real,
                   .nmodes = nmodes,
                   .lh = lh,
                   .lw = lw,
                   .out = out};
    const int ntasks = nmodes * p->ntask[level];
    tk->call = NULL;
    if (split) {
        job_slot *js = &s->slots[tid];
        js->j = j;
        js->ntasks = ntasks;
        if (++js->gen == 0)
            js->gen = 1;
        const uint32_t gen = js->gen;
        atomic_store_explicit(&js->done, 0, memory_order_relaxed);
        atomic_store_explicit(&js->next, (uint64_t)gen << 32 | (uint32_t)ntasks,
                              memory_order_release);
        const int nh = ntasks - 1 < HELPERS ? ntasks - 1 : HELPERS;
        for (int h = 0; h < nh && h < s->threads - 1; h++) {
#pragma omp task default(none) firstprivate(s, js, gen)
            while (claim_run(s, js, gen))
                ;
        }
        tk->call = js;
        td->calls_par++;
    } else {
        mmp_node_cache *cache = my_cache(s);
        for (int i = 0; i < ntasks; i++)
            run_match_task(&j, i, cache);
        td->tasks += (uint64_t)ntasks;
        td->calls_seq++;
    }
    if (s->verbose)
        td->match_s += omp_get_wtime() - t0;
    return 0;
}

/* The op wait: the job's tasks that nobody claimed, then other jobs'
 * until the claimed ones are done. */
static int omp_wait(void *state, mmp_engine_ticket *tk)
{
    omp_state *s = state;
    job_slot *js = tk->call;
    if (!js)
        return 0;
    const double t0 = s->verbose ? omp_get_wtime() : 0;
    while (claim_run(s, js, js->gen))
        ;
    for (int i = 0; atomic_load_explicit(&js->done, memory_order_acquire) != js->ntasks; i++)
        if (!omp_help(s))
            mmp_wait_step(i);
    if (s->verbose)
        my_data(s)->match_s += omp_get_wtime() - t0;
    return 0;
}

/* The op match: submit, then wait at once. */
static int omp_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    mmp_engine_ticket tk;
    omp_submit(state, t, orig, pred, nmodes, real, lh, lw, out, &tk);
    return omp_wait(state, &tk);
}

const mmp_engine_ops mmp_engine_omp = {
    .name = "omp",
    .create = omp_create,
    .destroy = omp_destroy,
    .probe = omp_probe,
    .begin_step = omp_begin_step,
    .match = omp_match,
    .submit = omp_submit,
    .wait = omp_wait,
    .concurrency = omp_concurrency,
    .help = omp_help,
};
