/* The cores this process may run on: what the thread counts of the search,
 * the head start, the crews and the waits are sized by. */
#ifndef MMP_COMMON_CORES_H
#define MMP_COMMON_CORES_H

/* The processors of the calling thread's affinity mask (what taskset, a
 * cpuset or a batch system's binding leaves it), else those online; 0
 * where the system cannot tell. CPU time quotas (a container's cpu.max)
 * are not seen: the threads are not bound by them to fewer processors. */
int mmp_usable_cores(void);

/*
 * The usable cores less the threads of other processes that are running
 * or ready to run now (Linux: /proc/stat's procs_running, less this
 * process's threads in state R), at least 1: the threads a CPU engine takes where none are given.
 * On a machine busy with other encodes (xargs -P, a batch system), a team
 * of threads on every core loses its cores to them, and its threads spin
 * in OpenMP's waits for threads that are not running: there it takes the
 * cores left, down to one thread, which never waits (docs/tuning.md,
 * "Threads under load"). This process's own threads are not counted: an
 * OpenMP team of its own that just finished spins for a while, and would
 * otherwise look like other work. A program that runs several encodes at
 * once on its own threads gives each its share of the threads. Where the runnable threads cannot be told to be
 * on this process's cores (its affinity leaves fewer cores than are
 * online: a cpuset, a container), or cannot be read, the usable cores.
 */
int mmp_spare_cores(void);

/* The rule of mmp_spare_cores: of `usable` cores, those that the `machine`
 * runnable threads leave once this process's `own` are taken out (at least
 * one); `usable` where either count is unknown (below 0, own below 1). */
int mmp_spare_cores_of(int usable, long machine, long own);

/* This process's threads running or ready to run now, the caller's
 * included (Linux: state R in /proc/self/task/TID/stat); -1 elsewhere. */
long mmp_own_runnable_threads(void);

/* The threads OMP_NUM_THREADS asks for, read as OpenMP's runtime reads it
 * (its first value: a positive decimal number, then the end or a comma),
 * or 0 where it is unset or reads otherwise. The decoder's threads follow
 * it, as they did when they were OpenMP's (mmp/dec/decoder.c). */
int mmp_env_threads(void);

#endif
