/*
 * The sequential reference engine: every node of every mode, one after
 * another, through the shared node search (kernels/cpu_match.h).
 */
#include <stdlib.h>

#include "common/error.h"
#include "kernels/engine.h"
#include "kernels/cpu_match.h"

static void seq_destroy(void *state)
{
    mmp_sorted *sd = state;
    if (!sd)
        return;
    mmp_sorted_free(sd);
    free(sd);
}

static int seq_create(void **state, const mmp_engine_config *cfg, char *errbuf, size_t errlen)
{
    (void)cfg;
    mmp_sorted *sd = calloc(1, sizeof(*sd));
    if (!sd)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    *state = sd;
    return 0;
}

/* For -e auto: the engine that always works, picked last. */
static int seq_probe(const mmp_engine_config *cfg)
{
    (void)cfg;
    return 0;
}

static int seq_begin_step(void *state, const mmp_search_tables *t)
{
    return mmp_sorted_refresh(state, t);
}

static int seq_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    mmp_match_leaf(state, t, orig, pred, nmodes, real, lh, lw, out);
    return 0;
}

const mmp_engine_ops mmp_engine_seq = {
    .name = "seq",
    .create = seq_create,
    .destroy = seq_destroy,
    .probe = seq_probe,
    .begin_step = seq_begin_step,
    .match = seq_match,
};
