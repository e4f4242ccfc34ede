/*
 * The registry of the search engines built into this binary. The build
 * defines MMP_HAVE_OPENMP and MMP_HAVE_OPENCL (Makefile switches OPENMP and
 * OPENCL); seq is always there. Nothing outside kernels/ names an engine.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernels/engine.h"

extern const mmp_engine_ops mmp_engine_seq;    /* kernels/seq.c */
#ifdef MMP_HAVE_OPENMP
extern const mmp_engine_ops mmp_engine_omp;    /* kernels/omp.c */
#endif
#ifdef MMP_HAVE_OPENCL
extern const mmp_engine_ops mmp_engine_opencl; /* kernels/opencl/engine.c */
#endif

static const mmp_engine_ops *const engines[] = {
    &mmp_engine_seq,
#ifdef MMP_HAVE_OPENMP
    &mmp_engine_omp,
#endif
#ifdef MMP_HAVE_OPENCL
    &mmp_engine_opencl,
#endif
};
#define NENGINES ((int)(sizeof engines / sizeof engines[0]))

int mmp_engine_count(void) { return NENGINES; }

const mmp_engine_ops *mmp_engine_at(int i)
{
    return i >= 0 && i < NENGINES ? engines[i] : NULL;
}

const mmp_engine_ops *mmp_engine_find(const char *name)
{
    for (int i = 0; name && i < NENGINES; i++)
        if (strcmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

int mmp_engine_auto_order(const mmp_engine_config *cfg, const mmp_engine_ops **order, int max)
{
    int rank[NENGINES], idx[NENGINES], n = 0;
    for (int i = 0; i < NENGINES; i++) {
        const int r = engines[i]->probe ? engines[i]->probe(cfg) : 0;
        if (r < 0)
            continue;
        /* Stable insertion: after every engine of the same or a higher rank. */
        int at = n++;
        for (; at > 0 && rank[at - 1] < r; at--) {
            rank[at] = rank[at - 1];
            idx[at] = idx[at - 1];
        }
        rank[at] = r;
        idx[at] = i;
    }
    if (n > max)
        n = max;
    for (int k = 0; k < n; k++)
        order[k] = engines[idx[k]];
    return n;
}

static char names[256];

static void build_names(void)
{
    size_t at = 0;
    for (int i = 0; i < NENGINES; i++)
        at += (size_t)snprintf(names + at, sizeof names - at, "%s, ", engines[i]->name);
    snprintf(names + at, sizeof names - at, "auto");
}

const char *mmp_engine_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_names);
    return names;
}
