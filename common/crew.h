/*
 * A crew: the calling thread and helper threads of its own sharing out
 * batches of jobs, one batch at a time, without a parallel region per
 * batch. The caller posts a batch, may do other work, then runs the jobs no
 * helper has taken and waits only for those a helper has started: a helper
 * that is not running delays nothing. Jobs are handed out one at a time in
 * order of j, to whichever thread asks first, so a batch of many jobs of
 * uneven cost spreads like a dynamic schedule. Helpers wait for batches by
 * spinning, then yielding the core (common/wait.h), which suits work that
 * posts its batches often and briefly, like a decoder's steps; or, for work
 * whose batches are far apart and whose cores have other work meanwhile
 * (an encoder's steps, between searches), by spinning briefly and then
 * sleeping until the next batch.
 */
#ifndef MMP_COMMON_CREW_H
#define MMP_COMMON_CREW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* Most helper threads a crew starts. */
#define MMP_CREW_MAX_HELPERS 255

typedef void (*mmp_crew_job)(void *arg, int job);

typedef struct mmp_crew {
    int helpers;            /* helper threads running */
    int sleep;              /* 1: helpers sleep between batches */
    pthread_mutex_t lock;   /* for the sleepers */
    pthread_cond_t wake;
    _Atomic int sleepers;
    pthread_t *thread;      /* the helpers */
    mmp_crew_job fn;        /* the batch: fn(arg, j), j < njobs */
    void *arg;
    int njobs;
    _Atomic int posted;     /* batches posted so far */
    _Atomic int stop;       /* 1: the helpers return */
    _Atomic int done;       /* jobs of the batch finished */
    _Atomic uint64_t next;  /* the batch's jobs (high half) and the next to take (low) */
} mmp_crew;

/* Starts up to `helpers` helper threads, at most MMP_CREW_MAX_HELPERS
 * (fewer where they cannot be created: crew->helpers says how many; with
 * none, the caller runs every job itself); sleep: 1 for helpers that sleep
 * between batches. */
void mmp_crew_start(mmp_crew *crew, int helpers, int sleep);

/* Posts a batch of njobs jobs (0 to INT_MAX), taken in order of j. The
 * previous batch must be finished. */
void mmp_crew_post(mmp_crew *crew, mmp_crew_job fn, void *arg, int njobs);

/* Runs the batch's jobs that no helper has taken, then waits for the rest. */
void mmp_crew_finish(mmp_crew *crew);

/* Posts a batch and finishes it. */
void mmp_crew_run(mmp_crew *crew, mmp_crew_job fn, void *arg, int njobs);

/* Stops and joins the helpers. */
void mmp_crew_stop(mmp_crew *crew);

#endif
