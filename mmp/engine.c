/* The table of search engines built into this binary. */
#include <string.h>

#include "mmp/engine.h"
#include "kernels/engine_opencl.h"

static const mmp_engine_ops *const engines[] = {
    &mmp_engine_seq,
    &mmp_engine_omp,
    &mmp_engine_opencl,
};

const mmp_engine_ops *mmp_engine_find(const char *name)
{
    if (strcmp(name, "auto") == 0)
        return mmp_engine_auto();
    for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
        if (strcmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

const char *mmp_engine_names(void) { return "seq, omp, opencl, auto"; }

const mmp_engine_ops *mmp_engine_auto(void)
{
    if (mmp_opencl_probe() == 1)
        return &mmp_engine_opencl;
    for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
        if (strcmp(engines[i]->name, "omp") == 0)
            return engines[i];
    return &mmp_engine_seq;
}
