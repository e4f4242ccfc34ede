/* The table of search engines built into this binary. */
#include <string.h>

#include "mmp/engine.h"

static const mmp_engine_ops *const engines[] = {
    &mmp_engine_seq,
};

const mmp_engine_ops *mmp_engine_find(const char *name)
{
    for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
        if (strcmp(engines[i]->name, name) == 0)
            return engines[i];
    return NULL;
}

const char *mmp_engine_names(void) { return "seq"; }
