/*
 * The sequential reference engine: every node of every mode, one after
 * another, through the shared node search (kernels/cpu_match.h).
 */
#include <stdlib.h>

#include "common/error.h"
#include "common/log.h"
#include "kernels/engine.h"
#include "kernels/cpu_match.h"

typedef struct seq_state {
    mmp_sorted sd;
    mmp_node_cache *cache;
    int verbose, steps;
    mmp_logger log;
} seq_state;

static void seq_destroy(void *state)
{
    seq_state *s = state;
    if (!s)
        return;
    if (s->verbose && s->steps)
        mmp_log(&s->log, MMP_LOG_INFO, "seq engine: node search's %s build; %d steps",
                s->sd.avx2 ? "AVX2" : "C", s->steps);
    mmp_sorted_free(&s->sd);
    mmp_node_cache_free(s->cache);
    free(s);
}

static int seq_create(void **state, const mmp_engine_config *cfg, char *errbuf, size_t errlen)
{
    seq_state *s = calloc(1, sizeof(*s));
    if (!s)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    s->verbose = cfg->verbose;
    s->log = cfg->log;
    s->cache = mmp_node_cache_new(); /* searching without one if NULL */
    *state = s;
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
    seq_state *s = state;
    s->steps++;
    return mmp_sorted_refresh(&s->sd, t);
}

static int seq_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    seq_state *s = state;
    mmp_match_leaf(&s->sd, t, orig, pred, nmodes, real, lh, lw, out, s->cache);
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
