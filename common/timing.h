/* Wall-clock time for the figures reported under verbose settings. */
#ifndef MMP_COMMON_TIMING_H
#define MMP_COMMON_TIMING_H

#include <time.h>

/* Seconds on a monotonic clock (differences only). */
static inline double mmp_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
