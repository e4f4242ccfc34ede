/*
 * Starting and moving the engines of an encode (mmp/enc/engine_start.h).
 */
/* sigaltstack: X/Open, beyond the build's POSIX.1-2008. */
#define _XOPEN_SOURCE 700

#include "mmp/enc/engine_start.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/cores.h"
#include "common/error.h"
#include "common/timing.h"
#include "common/wait.h"
#include "mmp/enc/search.h"

#define MAX_ENGINES 16

/* The best engine by the probes' ranks among those that start at once
 * (what -e auto falls back to without a slow one), or NULL. */
static const mmp_engine_ops *quick_engine(const mmp_engine_config *cfg)
{
    const mmp_engine_ops *best = NULL;
    int best_rank = -1;
    for (int i = 0; i < mmp_engine_count(); i++) {
        const mmp_engine_ops *o = mmp_engine_at(i);
        if (o->slow_start)
            continue;
        const int r = o->probe ? o->probe(cfg) : 0;
        if (r > best_rank) {
            best_rank = r;
            best = o;
        }
    }
    return best;
}

/*
 * The head start's threads where none were given for it (0, or -t meant for
 * the slow engine): three quarters of the cores. While OpenCL starts, its
 * driver keeps a few cores busy, and an OpenMP team on every core then
 * waits for its threads that lost theirs: on a 16-core host a team on
 * every core searches the first steps three times slower beside the start
 * than alone, and three quarters of the cores search the most steps before
 * the start ends (docs/tuning.md, "Head start").
 */
static int head_start_threads(void)
{
    const int cores = mmp_usable_cores();
    return cores >= 2 ? cores * 3 / 4 : 1;
}

static int any_slow(void)
{
    for (int i = 0; i < mmp_engine_count(); i++)
        if (mmp_engine_at(i)->slow_start)
            return 1;
    return 0;
}

/* The settings' engine, or with "auto" the first of the preferences that
 * starts: a later one after a warning, since the CPU engines always can. */
static int start_now(mmp_engines *r, const char *name, char *errbuf, size_t errlen)
{
    const mmp_engine_ops *cand[MAX_ENGINES];
    int n = 1;
    if (strcmp(name, "auto") == 0)
        n = mmp_engine_auto_order(&r->cfg, cand, MAX_ENGINES);
    else
        cand[0] = mmp_engine_find(name);
    char why[512] = "";
    int err = MMP_EENGINE;
    for (int i = 0; i < n; i++) {
        err = cand[i]->create(&r->es, &r->cfg, why, sizeof why);
        if (!err) {
            r->eng = cand[i];
            return 0;
        }
        r->es = NULL;
        if (i + 1 < n)
            mmp_log(&r->cfg.log, MMP_LOG_WARNING, "the %s engine failed to start (%s); using %s",
                    cand[i]->name, why, cand[i + 1]->name);
    }
    return mmp_error(errbuf, errlen, err, "cannot start the %s engine: %s",
                     n ? cand[n - 1]->name : name, why[0] ? why : mmp_strerror(err));
}

/* The starting thread: the slow engine named, or with "auto" the slow
 * engines ranked above the head start's, the first that starts. */
static void *start_slow(void *arg)
{
    mmp_engines *r = arg;
    /* Loading the OpenCL platforms may give this thread another alternate
     * signal stack (PoCL's LLVM installs one for its crash handlers on the
     * thread that loads it); the one the thread began with is put back
     * before it ends, for the runtime that set it up (AddressSanitizer
     * unmaps its own at the thread's end, and fails on another). */
    stack_t alt;
    const int have_alt = sigaltstack(NULL, &alt) == 0;
    r->next_err = MMP_EENGINE;
    if (r->named) {
        const mmp_engine_ops *o = mmp_engine_find(r->name);
        r->next_err = o->create(&r->next_es, &r->cfg, r->why, sizeof r->why);
        if (!r->next_err)
            r->next = o;
    } else {
        const mmp_engine_ops *cand[MAX_ENGINES];
        const int n = mmp_engine_auto_order(&r->cfg, cand, MAX_ENGINES);
        /* The first engine that starts at once is the head start's. */
        for (int i = 0; i < n && cand[i]->slow_start; i++) {
            char why[512] = "";
            if (cand[i]->create(&r->next_es, &r->cfg, why, sizeof why) == 0) {
                r->next = cand[i];
                r->next_err = 0;
                break;
            }
            r->next_es = NULL;
            mmp_log(&r->cfg.log, MMP_LOG_WARNING, "the %s engine failed to start (%s); using %s",
                    cand[i]->name, why,
                    i + 1 < n && cand[i + 1]->slow_start ? cand[i + 1]->name : r->cpu->name);
        }
    }
    if (have_alt)
        sigaltstack(&alt, NULL);
    atomic_store_explicit(&r->ready, 1, memory_order_release);
    return NULL;
}

/* Whether auto leaves the slow engines out of an encode of `blocks` blocks:
 * at most MMP_AUTO_CPU_BLOCKS_PER_CORE per core or thread given (mmp/mmp.h).
 * The slow engine's start is waited for before the encode ends, then it is
 * released, and below that this takes longer than the CPU engine's whole
 * search: on a 16-core host with a GPU, omp on its own is faster than
 * auto up to 256 blocks and as fast at 576 (docs/tuning.md, "Head
 * start"). */
static int cpu_suffices(const mmp_engine_config *cfg, long blocks)
{
    const int cores = cfg->threads > 0 ? cfg->threads : mmp_usable_cores();
    return blocks <= (long)MMP_AUTO_CPU_BLOCKS_PER_CORE * (cores > 0 ? cores : 1);
}

int mmp_engines_start(mmp_engines *r, const mmp_settings *st, const mmp_logger *log, long blocks,
                      char *errbuf, size_t errlen)
{
    memset(r, 0, sizeof *r);
    atomic_init(&r->ready, 0);
    r->t0 = mmp_now_seconds();
    r->head_start = st->head_start;
    r->name = st->engine ? st->engine : "auto";
    r->cfg = (mmp_engine_config){.threads = st->threads,
                                 .verbose = st->verbose,
                                 .device = st->device,
                                 .tune = st->engine_tune,
                                 .log = *log};
    const int is_auto = strcmp(r->name, "auto") == 0;
    const mmp_engine_ops *named = is_auto ? NULL : mmp_engine_find(r->name);
    /* Speeds whose search matches no dictionary (mmp_search_speed.modes 0)
     * never call the engine but for its threads. */
    mmp_search_speed sp;
    mmp_search_speed_preset(st->speed, &sp);
    if (is_auto && any_slow() && (cpu_suffices(&r->cfg, blocks) || sp.modes == 0)) {
        const mmp_engine_ops *cpu = quick_engine(&r->cfg);
        if (cpu) {
            if (r->cfg.verbose && sp.modes == 0)
                mmp_log(&r->cfg.log, MMP_LOG_INFO,
                        "auto: %s alone: speed %d matches no dictionary, no engine slower to "
                        "start is started",
                        cpu->name, st->speed);
            else if (r->cfg.verbose)
                mmp_log(&r->cfg.log, MMP_LOG_INFO,
                        "auto: %s alone for %ld blocks (at most %d per core): no engine slower "
                        "to start is started",
                        cpu->name, blocks, MMP_AUTO_CPU_BLOCKS_PER_CORE);
            return start_now(r, cpu->name, errbuf, errlen);
        }
    }
    if (r->head_start == 0 || (is_auto ? !any_slow() : !named || !named->slow_start))
        return start_now(r, r->name, errbuf, errlen);

    /* The head start: a CPU engine now, the slow one on a thread of its
     * own. */
    r->named = !is_auto;
    mmp_engine_config quick = r->cfg;
    if (r->named || quick.threads == 0)
        quick.threads = head_start_threads();
    r->quick_threads = quick.threads;
    char why[512];
    r->cpu = quick_engine(&quick);
    if (!r->cpu || r->cpu->create(&r->es, &quick, why, sizeof why)) {
        r->es = NULL;
        return start_now(r, r->name, errbuf, errlen);
    }
    r->eng = r->cpu;
    r->starting = pthread_create(&r->thread, NULL, start_slow, r) == 0;
    if (!r->starting) {
        r->eng->destroy(r->es);
        r->es = NULL;
        r->eng = NULL;
        return start_now(r, r->name, errbuf, errlen);
    }
    return 0;
}

/* Waits for the starting thread. */
static void join(mmp_engines *r)
{
    pthread_join(r->thread, NULL);
    r->starting = 0;
}

static int named_failed(mmp_engines *r, char *errbuf, size_t errlen)
{
    return mmp_error(errbuf, errlen, r->next_err, "cannot start the %s engine: %s", r->name,
                     r->why[0] ? r->why : mmp_strerror(r->next_err));
}

/* With "auto" and no slow engine after all (none starts, or none is a
 * GPU): the head start's CPU engine again with the settings' threads, every
 * core by default, where it had fewer while the slow one started. 1 when
 * it was replaced, 0 when it goes on. */
static int cpu_on_every_core(mmp_engines *r, long steps)
{
    if (r->quick_threads == r->cfg.threads)
        return 0;
    void *es = NULL;
    char why[512];
    if (r->eng->create(&es, &r->cfg, why, sizeof why))
        return 0; /* the one with fewer threads goes on */
    if (r->cfg.verbose)
        mmp_log(&r->cfg.log, MMP_LOG_INFO,
                "head start: no engine slower to start; %s on every core from step %ld",
                r->eng->name, steps);
    r->eng->destroy(r->es);
    r->es = es;
    return 1;
}

int mmp_engines_step(mmp_engines *r, long steps, char *errbuf, size_t errlen)
{
    if (!r->starting)
        return 0;
    if (r->head_start > 0 ? steps < r->head_start
                          : !atomic_load_explicit(&r->ready, memory_order_acquire))
        return 0;
    join(r);
    if (r->next_err)
        return r->named ? named_failed(r, errbuf, errlen) : cpu_on_every_core(r, steps);
    if (r->cfg.verbose)
        mmp_log(&r->cfg.log, MMP_LOG_INFO,
                "head start: %ld steps on %s, the rest on %s (ready after %.3f s)", steps,
                r->eng->name, r->next->name, mmp_now_seconds() - r->t0);
    r->eng->destroy(r->es);
    r->eng = r->next;
    r->es = r->next_es;
    r->next = NULL;
    r->next_es = NULL;
    r->head_steps = steps;
    return 1;
}

int mmp_engines_finish(mmp_engines *r, char *errbuf, size_t errlen)
{
    if (!r->starting)
        return 0;
    join(r);
    if (r->next_err)
        return r->named ? named_failed(r, errbuf, errlen) : 0;
    if (r->cfg.verbose)
        mmp_log(&r->cfg.log, MMP_LOG_INFO, "head start: every step on %s; %s was ready after %.3f s",
                r->eng->name, r->next->name, mmp_now_seconds() - r->t0);
    r->next->destroy(r->next_es);
    r->next = NULL;
    r->next_es = NULL;
    return 0;
}

static void *release_run(void *arg)
{
    mmp_engines *r = arg;
    r->eng->destroy(r->released_es);
    return NULL;
}

void mmp_engines_release(mmp_engines *r)
{
    if (!r->eng || !r->es || !r->eng->slow_start || r->cfg.verbose || r->starting || r->releasing)
        return;
    r->released_concurrency = mmp_engines_concurrency(r);
    r->released_es = r->es;
    r->es = NULL;
    r->releasing = pthread_create(&r->release_thread, NULL, release_run, r) == 0;
    if (!r->releasing) {
        r->es = r->released_es; /* destroyed by mmp_engines_stop as before */
        r->released_es = NULL;
    }
}

int mmp_engines_concurrency(const mmp_engines *r)
{
    if (!r->es)
        return r->releasing ? r->released_concurrency : 1;
    return r->eng->concurrency ? r->eng->concurrency(r->es) : 1;
}

void mmp_engines_stop(mmp_engines *r)
{
    if (r->releasing) {
        pthread_join(r->release_thread, NULL);
        r->releasing = 0;
        r->released_es = NULL;
    }
    if (r->starting)
        join(r);
    if (r->next_es)
        r->next->destroy(r->next_es);
    if (r->es)
        r->eng->destroy(r->es);
    r->next_es = r->es = NULL;
}

const mmp_engine_ops *mmp_engines_tile_engine(const mmp_settings *st)
{
    const char *name = st->engine ? st->engine : "auto";
    const mmp_engine_config cfg = {.threads = st->threads, .device = st->device};
    const mmp_engine_ops *o = strcmp(name, "auto") == 0 ? quick_engine(&cfg) : mmp_engine_find(name);
    return o && !o->slow_start && o->concurrency ? o : NULL;
}
