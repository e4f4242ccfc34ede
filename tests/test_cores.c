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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follows_the_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
