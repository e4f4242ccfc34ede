/*
 * A job is taken by whichever thread swaps its flag from 0 to 1 first. The
 * caller clears the flags of a batch only once the batch's inputs are ready
 * and the previous batch is finished, so a helper may take any job whose
 * flag it finds clear, even one of a batch posted after the one it woke
 * for; it reads the batch's function and argument only after taking a job.
 */
#include "common/crew.h"

#include "common/wait.h"

/* Every job whose flag is still clear, taken and run. */
static void take_jobs(mmp_crew *crew)
{
    for (int j = 0; j < MMP_CREW_MAX_JOBS; j++)
        if (!atomic_exchange_explicit(&crew->taken[j], 1, memory_order_acq_rel)) {
            crew->fn(crew->arg, j);
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
    pthread_mutex_init(&crew->lock, NULL);
    pthread_cond_init(&crew->wake, NULL);
    atomic_init(&crew->sleepers, 0);
    crew->fn = NULL;
    crew->arg = NULL;
    crew->njobs = 0;
    atomic_init(&crew->posted, 0);
    atomic_init(&crew->stop, 0);
    atomic_init(&crew->done, 0);
    for (int j = 0; j < MMP_CREW_MAX_JOBS; j++)
        atomic_init(&crew->taken[j], 1);
    helpers = helpers < MMP_CREW_MAX_HELPERS ? helpers : MMP_CREW_MAX_HELPERS;
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
    for (int j = 0; j < MMP_CREW_MAX_JOBS; j++)
        atomic_store_explicit(&crew->taken[j], j >= njobs, memory_order_release);
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
    pthread_mutex_destroy(&crew->lock);
    pthread_cond_destroy(&crew->wake);
}
