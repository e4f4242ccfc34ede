/* Busy waits for another thread, and the cores they may have: shared by
 * the search and the engines. */
#ifndef MMP_COMMON_WAIT_H
#define MMP_COMMON_WAIT_H

#include <sched.h>

#include "common/cores.h"

/* Whether `threads` threads may each have a core to spin on: where they
 * outnumber the cores, a waiting thread should sleep, not spin or yield. */
static inline int mmp_may_spin(int threads)
{
    const int cores = mmp_usable_cores();
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
