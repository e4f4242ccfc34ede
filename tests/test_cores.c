/*
 * Tests for the cores the process may run on (common/cores.c): the count
 * follows the calling thread's affinity mask (taskset, a cpuset, a batch
 * system's binding), not the processors online, and so do the waits'
 * choice between spinning and sleeping (common/wait.h) and the threads
 * started by the threads that inherit the mask.
 */
/* sched_getaffinity, sched_setaffinity, CPU_*: GNU. */
#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cores.h"
#include "common/wait.h"
#include "tests/util.h"

/* The calling thread's mask now. */
static cpu_set_t mask_now(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    return set;
}

static void *count_on_thread(void *arg)
{
    *(int *)arg = mmp_usable_cores();
    return NULL;
}

/* As many as the mask holds, with the whole mask and with one or two of
 * its processors; a thread started under the narrowed mask counts the
 * same. */
static void test_follows_the_mask(void **state)
{
    (void)state;
    const cpu_set_t all = mask_now();
    const int n = CPU_COUNT(&all);
    assert_int_equal(mmp_usable_cores(), n);
    if (n < 2)
        skip();
    int first = -1, second = -1;
    for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
        if (CPU_ISSET(c, &all)) {
            if (first < 0)
                first = c;
            else
                second = c;
        }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    const int on_one = mmp_usable_cores();
    /* Two threads on one processor wait by sleeping, one may spin. */
    const int spin1 = mmp_may_spin(1), spin2 = mmp_may_spin(2);
    int on_thread = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, count_on_thread, &on_thread), 0);
    pthread_join(t, NULL);
    cpu_set_t two = one;
    CPU_SET(second, &two);
    assert_int_equal(sched_setaffinity(0, sizeof two, &two), 0);
    const int on_two = mmp_usable_cores(), spin2_on_two = mmp_may_spin(2);
    /* The whole mask back before any assertion can end the test. */
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(on_one, 1);
    assert_int_equal(on_thread, 1);
    assert_true(spin1);
    assert_false(spin2);
    assert_int_equal(on_two, 2);
    assert_true(spin2_on_two);
    assert_int_equal(mmp_usable_cores(), n);
}

/* A thread that stays runnable until told to stop. */
static void *spin_until(void *arg)
{
    while (!atomic_load((_Atomic int *)arg))
        ;
    return NULL;
}

/* The rule, from the counts: other processes' runnable threads take cores,
 * down to one left; this process's own never do; unknown counts leave
 * every usable core. */
static void test_spare_cores_rule(void **state)
{
    (void)state;
    static const struct {
        int usable;
        long machine, own;
        int want;
    } cases[] = {
        {16, 1, 1, 16},  /* alone */
        {16, 13, 13, 16}, /* its own team of 12 spinning: still alone */
        {16, 5, 1, 12},  /* four threads of other processes */
        {16, 40, 2, 1},  /* a machine busier than its cores */
        {2, 3, 1, 1},    /* two other encodes on two cores */
        {2, 2, 3, 2},    /* counts read at different instants */
        {8, -1, 1, 8},   /* procs_running unknown */
        {8, 9, -1, 8},   /* own threads unknown */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int got = mmp_spare_cores_of(cases[i].usable, cases[i].machine, cases[i].own);
        if (got != cases[i].want)
            fail_msg("%d cores, %ld runnable, %ld of them this process's: %d, want %d",
                     cases[i].usable, cases[i].machine, cases[i].own, got, cases[i].want);
    }
}

/* The counts as read: k threads of this process spinning are k more of
 * its runnable threads (state R whether they have a core or wait for one);
 * k other processes spinning leave at most usable - k cores (more load
 * from elsewhere only lowers it). Where this process may run on fewer
 * processors than are online, the usable cores whatever runs. */
static void test_spare_cores(void **state)
{
    (void)state;
    const int usable = mmp_usable_cores();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (mmp_own_runnable_threads() < 1 || usable < 1 || online != usable) {
        assert_int_equal(mmp_spare_cores(), usable);
        skip();
    }
    enum { SPINNERS = 2 };
    _Atomic int stop = 0;
    pthread_t t[SPINNERS];
    for (int i = 0; i < SPINNERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, spin_until, &stop), 0);
    const long own = mmp_own_runnable_threads();
    atomic_store(&stop, 1);
    for (int i = 0; i < SPINNERS; i++)
        pthread_join(t[i], NULL);
    pid_t kid[SPINNERS];
    for (int i = 0; i < SPINNERS; i++) {
        kid[i] = fork();
        assert_true(kid[i] >= 0);
        if (kid[i] == 0)
            for (;;)
                ; /* until killed */
    }
    const int want = usable > SPINNERS ? usable - SPINNERS : 1;
    int other = usable;
    for (int tries = 0; tries < 50 && other > want; tries++) {
        other = mmp_spare_cores();
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    for (int i = 0; i < SPINNERS; i++) {
        kill(kid[i], SIGKILL);
        waitpid(kid[i], NULL, 0);
    }
    print_message("runnable threads of this process with %d spinning: %ld; spare cores of %d "
                  "with %d other processes spinning: %d\n",
                  SPINNERS, own, usable, SPINNERS, other);
    assert_true(own >= 1 + SPINNERS);
    assert_true(other >= 1 && other <= want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follows_the_mask),
        cmocka_unit_test(test_spare_cores_rule),
        cmocka_unit_test(test_spare_cores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
