/* The cores this process may run on: what the thread counts of the search,
 * the head start, the crews and the waits are sized by. */
#ifndef MMP_COMMON_CORES_H
#define MMP_COMMON_CORES_H

/* The processors of the calling thread's affinity mask (what taskset, a
 * cpuset or a batch system's binding leaves it), else those online; 0
 * where the system cannot tell. CPU time quotas (a container's cpu.max)
 * are not seen: the threads are not bound by them to fewer processors. */
int mmp_usable_cores(void);

#endif
