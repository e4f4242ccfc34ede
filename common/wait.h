/* Busy waits for another thread, and the cores they may have: shared by
 * the search and the engines. */
#ifndef MMP_COMMON_WAIT_H
#define MMP_COMMON_WAIT_H

#include <sched.h>
#include <unistd.h>

/* The cores online, or 0 where the system cannot tell. */
static inline int mmp_online_cores(void)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && cores < 1 << 20 ? (int)cores : 0;
}

/* Whether `threads` threads may each have a core to spin on: where they
 * outnumber the cores, a waiting thread should sleep, not spin or yield. */
static inline int mmp_may_spin(int threads)
{
    const int cores = mmp_online_cores();
    return cores == 0 || threads <= cores;
}

/* One step of a wait for another thread: a pause for the first
 * MMP_WAIT_SPINS spins (i counts them), then yields the core. */
#define MMP_WAIT_SPINS 2000
static inline void mmp_wait_step(int i)
{
    if (i < MMP_WAIT_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    } else {
        sched_yield();
    }
}

#endif
