/* The cores this process may run on (common/cores.h). */
/* sched_getaffinity and CPU_COUNT: GNU, beyond the build's POSIX.1-2008. */
#define _GNU_SOURCE

#include "common/cores.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* procs_running of /proc/stat: the threads running or ready to run on the
 * machine now, the caller's included; -1 where it cannot be read. */
static long machine_runnable(void)
{
#ifndef __linux__
    return -1;
#endif
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[256];
    long n = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "procs_running ", 14) == 0) {
            if (sscanf(line + 14, "%ld", &n) != 1)
                n = -1;
            break;
        }
    fclose(f);
    return n;
}

/* The threads of this process running or ready to run now (state R in
 * /proc/self/task/TID/stat), the caller's included; -1 where they cannot
 * be read. */
long mmp_own_runnable_threads(void)
{
#ifndef __linux__
    return -1;
#endif
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9' || strlen(de->d_name) > 20)
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        const size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        /* "TID (NAME) S ...": the name may hold spaces and parentheses. */
        const char *close = strrchr(buf, ')');
        if (close && close[1] == ' ' && close[2] == 'R')
            n++;
    }
    closedir(d);
    return n;
}

int mmp_spare_cores_of(int usable, long machine, long own)
{
    if (usable < 1 || machine < 0 || own < 1)
        return usable;
    const long others = machine > own ? machine - own : 0;
    return others >= usable ? 1 : usable - (int)others;
}

int mmp_spare_cores(void)
{
    const int usable = mmp_usable_cores();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (usable < 1 || online != usable)
        return usable;
    return mmp_spare_cores_of(usable, machine_runnable(), mmp_own_runnable_threads());
}

int mmp_env_threads(void)
{
    /* getenv is safe here: the library sets no environment variable, and a
     * program that does while decoding races with every getenv it calls. */
    const char *s = getenv("OMP_NUM_THREADS");
    if (!s)
        return 0;
    while (*s == ' ' || *s == '\t')
        s++;
    long n = 0;
    if (*s < '0' || *s > '9')
        return 0;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((n = n * 10 + (*s - '0')) > 1 << 20)
            return 0;
    while (*s == ' ' || *s == '\t')
        s++;
    return n > 0 && (*s == '\0' || *s == ',') ? (int)n : 0;
}
