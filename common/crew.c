/*
 * A job is taken by whichever thread increments the low half of `next`
 * while it is below the high half, the batch's count of jobs: the value the
 * increment returns says both which job and of which batch, so a helper
 * that woke for one batch may take a job of a later one. The caller sets
 * `next` only once the batch's function and argument are written (a release
 * that the takers' increments acquire) and the previous batch is finished,
 * and changes them only once this batch is: a thread that takes a job reads
 * the function and argument of that job's batch. Takers that find a batch
 * used up push the low half past the count, by at most one each before they
 * wait for the next batch, far from overflowing it.
 */
#include "common/crew.h"

#include <stdlib.h>

#include "common/wait.h"

/* Every job of the batch not yet taken, taken and run. */
static void take_jobs(mmp_crew *crew)
{
    for (;;) {
        const uint64_t v = atomic_fetch_add_explicit(&crew->next, 1, memory_order_acq_rel);
        const uint32_t j = (uint32_t)v;
        if (j >= (uint32_t)(v >> 32))
            return;
        crew->fn(crew->arg, (int)j);
        atomic_fetch_add_explicit(&crew->done, 1, memory_order_release);
    }
}

/* Whether the crew has a batch after `seen` or is stopping. */
static int news(mmp_crew *crew, int seen)
{
    return atomic_load(&crew->posted) != seen || atomic_load(&crew->stop);
}

static void *helper_main(void *arg)
{
    mmp_crew *crew = arg;
    int seen = 0;
    for (;;) {
        int i = 0;
        while (!news(crew, seen) && (!crew->sleep || i < MMP_WAIT_SPINS)) {
            mmp_wait_step(i);
            i += i < MMP_WAIT_SPINS;
        }
        if (!news(crew, seen)) {
            /* A sleeper counts itself before it looks again, and the poster
             * looks at the count after it posts (both sequentially
             * consistent): either the helper sees the batch or the poster
             * sees the sleeper and wakes it under the lock. */
            pthread_mutex_lock(&crew->lock);
            atomic_fetch_add(&crew->sleepers, 1);
            while (!news(crew, seen))
                pthread_cond_wait(&crew->wake, &crew->lock);
            atomic_fetch_sub(&crew->sleepers, 1);
            pthread_mutex_unlock(&crew->lock);
        }
        const int now = atomic_load(&crew->posted);
        if (now == seen)
            return NULL; /* stopped */
        seen = now;
        take_jobs(crew);
    }
}

/* Wakes the sleeping helpers, if any. */
static void wake_sleepers(mmp_crew *crew)
{
    if (atomic_load(&crew->sleepers) > 0) {
        pthread_mutex_lock(&crew->lock);
        pthread_cond_broadcast(&crew->wake);
        pthread_mutex_unlock(&crew->lock);
    }
}

void mmp_crew_start(mmp_crew *crew, int helpers, int sleep)
{
    crew->helpers = 0;
    crew->sleep = sleep;
    crew->thread = NULL;
    pthread_mutex_init(&crew->lock, NULL);
    pthread_cond_init(&crew->wake, NULL);
    atomic_init(&crew->sleepers, 0);
    crew->fn = NULL;
    crew->arg = NULL;
    crew->njobs = 0;
    atomic_init(&crew->posted, 0);
    atomic_init(&crew->stop, 0);
    atomic_init(&crew->done, 0);
    atomic_init(&crew->next, 0);
    helpers = helpers < MMP_CREW_MAX_HELPERS ? helpers : MMP_CREW_MAX_HELPERS;
    if (helpers > 0 && !(crew->thread = malloc(sizeof *crew->thread * (size_t)helpers)))
        helpers = 0;
    while (crew->helpers < helpers &&
           !pthread_create(&crew->thread[crew->helpers], NULL, helper_main, crew))
        crew->helpers++;
}

void mmp_crew_post(mmp_crew *crew, mmp_crew_job fn, void *arg, int njobs)
{
    crew->fn = fn;
    crew->arg = arg;
    crew->njobs = njobs;
    atomic_store_explicit(&crew->done, 0, memory_order_relaxed);
    atomic_store_explicit(&crew->next, (uint64_t)(uint32_t)njobs << 32, memory_order_release);
    atomic_fetch_add(&crew->posted, 1);
    wake_sleepers(crew);
}

void mmp_crew_finish(mmp_crew *crew)
{
    take_jobs(crew);
    for (int i = 0; atomic_load_explicit(&crew->done, memory_order_acquire) < crew->njobs;
         i += i < MMP_WAIT_SPINS)
        mmp_wait_step(i);
}

void mmp_crew_run(mmp_crew *crew, mmp_crew_job fn, void *arg, int njobs)
{
    mmp_crew_post(crew, fn, arg, njobs);
    mmp_crew_finish(crew);
}

void mmp_crew_stop(mmp_crew *crew)
{
    atomic_store(&crew->stop, 1);
    wake_sleepers(crew);
    for (int h = 0; h < crew->helpers; h++)
        pthread_join(crew->thread[h], NULL);
    crew->helpers = 0;
    free(crew->thread);
    crew->thread = NULL;
    pthread_mutex_destroy(&crew->lock);
    pthread_cond_destroy(&crew->wake);
}
