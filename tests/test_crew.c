/*
 * Tests for the crew (common/crew.c): every job of every batch runs exactly
 * once, on whichever thread takes it, and mmp_crew_finish returns only once
 * all of them have ended, with no helper, one, or several, spinning or
 * sleeping between batches (and woken by the next); batches of every
 * size up to MAX_JOBS (more jobs than threads, and empty ones), back to
 * back, some of whose jobs take long enough for a helper to hold one while
 * the caller finishes; a job outside the batch never runs; and a crew of
 * more helpers than the cores.
 */
#include <stdatomic.h>
#include <time.h>

#include "common/crew.h"
#include "tests/util.h"

#define MAX_JOBS 40

typedef struct batch_state {
    _Atomic int runs[MAX_JOBS];
    _Atomic int finished[MAX_JOBS];
    int slow;     /* jobs j with j % 3 == slow sleep a little */
} batch_state;

static void job(void *arg, int j)
{
    batch_state *b = arg;
    atomic_fetch_add(&b->runs[j], 1);
    if (j % 3 == b->slow) {
        const struct timespec ts = {0, 200000}; /* 200 microseconds */
        nanosleep(&ts, NULL);
    }
    atomic_store(&b->finished[j], 1);
}

static void count_job(void *arg, int j)
{
    _Atomic int *runs = arg;
    atomic_fetch_add(&runs[j], 1);
}

static void check_crew(int helpers, int sleep)
{
    mmp_crew crew;
    mmp_crew_start(&crew, helpers, sleep);
    assert_int_equal(crew.helpers, helpers);
    rng_seed(0xc4e3 + (unsigned)helpers);
    for (int iter = 0; iter < 300; iter++) {
        batch_state b;
        const int njobs = (int)rng_below(MAX_JOBS + 1);
        b.slow = (int)rng_below(4); /* 3: none */
        for (int j = 0; j < MAX_JOBS; j++) {
            atomic_init(&b.runs[j], 0);
            atomic_init(&b.finished[j], 0);
        }
        if (iter % 2) {
            mmp_crew_run(&crew, job, &b, njobs);
        } else {
            mmp_crew_post(&crew, job, &b, njobs);
            const struct timespec ts = {0, 50000}; /* the caller's own work */
            nanosleep(&ts, NULL);
            mmp_crew_finish(&crew);
        }
        if (sleep && iter % 7 == 0) { /* long enough between batches for helpers to sleep */
            const struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        for (int j = 0; j < MAX_JOBS; j++) {
            const int want = j < njobs;
            if (atomic_load(&b.runs[j]) != want || atomic_load(&b.finished[j]) != want)
                fail_msg("%d helpers%s, batch %d of %d jobs: job %d ran %d times, %s at the end",
                         helpers, sleep ? " that sleep" : "", iter, njobs, j,
                         atomic_load(&b.runs[j]),
                         atomic_load(&b.finished[j]) ? "finished" : "not finished");
        }
    }
    mmp_crew_stop(&crew);
    assert_int_equal(crew.helpers, 0);
}

static void test_every_job_once(void **state)
{
    (void)state;
    static const int helpers[] = {0, 1, 2, 3, 4, 7};
    for (int h = 0; h < (int)(sizeof helpers / sizeof helpers[0]); h++)
        for (int sleep = 0; sleep < 2; sleep++)
            check_crew(helpers[h], sleep);
}

/* More helpers asked for than a crew holds: it starts MMP_CREW_MAX_HELPERS,
 * which share out a batch of twice as many jobs. */
static void test_helpers_capped(void **state)
{
    (void)state;
    mmp_crew crew;
    mmp_crew_start(&crew, MMP_CREW_MAX_HELPERS + 3, 1);
    assert_int_equal(crew.helpers, MMP_CREW_MAX_HELPERS);
    enum { N = 2 * MMP_CREW_MAX_HELPERS };
    _Atomic int *runs = malloc(sizeof *runs * N);
    assert_non_null(runs);
    for (int j = 0; j < N; j++)
        atomic_init(&runs[j], 0);
    mmp_crew_run(&crew, count_job, runs, N);
    for (int j = 0; j < N; j++)
        assert_int_equal(atomic_load(&runs[j]), 1);
    free(runs);
    mmp_crew_stop(&crew);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_job_once),
        cmocka_unit_test(test_helpers_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
