/* The cores this process may run on (common/cores.h). */
/* sched_getaffinity and CPU_COUNT: GNU, beyond the build's POSIX.1-2008. */
#define _GNU_SOURCE

#include "common/cores.h"

#include <sched.h>
#include <unistd.h>

int mmp_usable_cores(void)
{
#ifdef __linux__
    /* A mask of more processors than cpu_set_t holds (1024) fails with
     * EINVAL: then the count online stands. */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
#endif
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 && cores < 1 << 20 ? (int)cores : 0;
}
