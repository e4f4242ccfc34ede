/*
 * Rate-distortion search of the prediction and residual trees (encoder only).
 *
 * Every node of the prediction tree has three options: a leaf (one
 * prediction, best mode and residual tree), a horizontal split and a vertical
 * split. They are independent given the reconstruction around the node, so
 * each is searched in its own copy of the block's reconstruction (a "view":
 * the plane with a private overlay of the block, predict/predict.h), and when
 * the engine takes several match() calls at once (mmp_engine_ops.concurrency)
 * the splits run as OpenMP tasks beside the leaf. The option kept is decided
 * from the three costs in one fixed order (leaf, H, V; ties keep the earlier),
 * so the tokens do not depend on the schedule.
 *
 * A split whose cost after its first half already reaches that of a finished
 * rival cannot be chosen: its second half is skipped. Which rivals have
 * finished depends on the schedule; what is chosen does not.
 */
#include "mmp/search.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/wait.h"

#define NODE_TOKENS (4 * MMP_B * MMP_B + 32)
/* Splits of nodes of at least this many samples run as tasks when the
 * search is parallel (unless the engine says otherwise); below that the
 * hand-over costs more than it gains. */
#define TASK_MIN_AREA 64
/* From this many threads on, the horizontal split runs as a task as well:
 * more options in flight for many threads, less hand-over for few
 * (camera on 16 threads: 7.5-7.8 s against 8.7-9.4 s; on 2: 16.9 s against
 * 15.0 s for a 256x256 crop; measured before each node had its own task
 * group, not since). */
#define BOTH_TASKS_THREADS 4

/*
 * Within a block, the same prediction leaf is evaluated once per path of the
 * prediction tree that reaches it, often with the very same prediction. The
 * engine's matches depend only on (leaf, prediction), so they are kept per
 * (leaf, mode) for the block and reused when the prediction repeats: an
 * exact memo, not an approximation. Whether a lookup hits depends on the
 * schedule; the matches it returns do not. An entry being computed is
 * marked pending, and a parallel search waits for it rather than computing
 * it twice. (No cycle of waits: a thread holds pending entries only while
 * it is inside the engine's match(), where it runs nothing but node
 * matching, and it waits for others' entries only after publishing its
 * own; while it waits it helps the engine, which runs nothing but node
 * matching, or sleeps when the engine cannot be helped.)
 */
#define CACHE_WAYS 4
#define CACHE_NODES 49 /* prediction leaves of a 16x16 block: 4x4 up to 16x16 */

enum { ENTRY_EMPTY, ENTRY_PENDING, ENTRY_VALID };

typedef struct cache_entry {
    uint32_t hash;
    int state;
    int32_t *pred;
    mmp_match *match;
} cache_entry;

/* Residual-tree dynamic programme tables of one leaf. */
typedef struct dp_tables {
    int64_t j[MMP_B * MMP_B * 4];
    uint8_t flag[MMP_B * MMP_B * 4];
} dp_tables;

/* What one leaf evaluation needs, taken from a pool so that concurrent
 * evaluations never share it and nothing is allocated per leaf. */
typedef struct scratch {
    struct scratch *next;
    mmp_match *matches; /* MMP_NUM_MODES leaves of matches */
    mmp_match *res;     /* the engine's output for the modes not in the memo */
    int32_t pred[MMP_NUM_MODES * MMP_B * MMP_B];
    int32_t missing_pred[MMP_NUM_MODES * MMP_B * MMP_B];
    dp_tables dp;
} scratch;

/* One option's private reconstruction of the block being searched. */
typedef struct view {
    mmp_plane plane; /* the codec's plane with the overlay below */
    int32_t pix[MMP_B * MMP_B];
    uint8_t avail[MMP_B * MMP_B];
} view;

struct mmp_search {
    mmp_codec *c;
    const int32_t *orig;
    const mmp_engine_ops *eng;
    void *es;
    mmp_search_tables tab;
    uint32_t pflag_cost[MMP_NPSCALES][3];
    uint32_t mode_cost[MMP_NPSCALES][MMP_NUM_MODES];
    uint32_t rflag_cost[MMP_NSCALES][3];
    uint32_t *idx_cost[MMP_NSCALES];
    int64_t lambda;
    int threads;    /* > 1: splits run as OpenMP tasks on that many threads */
    int task_min_area; /* of a node whose splits run as tasks */
    _Atomic int err;
    cache_entry cache[CACHE_NODES][MMP_NUM_MODES][CACHE_WAYS];
    uint8_t next_way[CACHE_NODES][MMP_NUM_MODES];
    pthread_mutex_t cache_lock[CACHE_NODES];
    pthread_cond_t cache_done[CACHE_NODES];
    _Atomic unsigned cache_gen[CACHE_NODES]; /* counts the broadcasts of cache_done */
    int node_base[MMP_NPSCALES];
    void *cache_mem;
    pthread_mutex_t pool_lock;
    scratch *pool;     /* free scratch */
    int nscratch;
    scratch **owned;   /* every scratch, for freeing */
    int owned_cap;
    view root;
    _Atomic uint64_t evals, hits;
    mmp_logger log;
    int verbose;
};

static int cache_alloc(mmp_search *s)
{
    size_t total = 0;
    int base = 0;
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            int nodes = (MMP_B >> a) * (MMP_B >> b);
            s->node_base[mmp_pscale(a, b)] = base;
            base += nodes;
            total += (size_t)nodes * MMP_NUM_MODES * CACHE_WAYS *
                     (sizeof(int32_t) * (1 << (a + b)) + sizeof(mmp_match) * mmp_match_count(a, b));
        }
    char *mem = malloc(total);
    if (!mem)
        return MMP_ENOMEM;
    s->cache_mem = mem;
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            int nodes = (MMP_B >> a) * (MMP_B >> b), ps = mmp_pscale(a, b);
            for (int nd = 0; nd < nodes; nd++)
                for (int m = 0; m < MMP_NUM_MODES; m++)
                    for (int w = 0; w < CACHE_WAYS; w++) {
                        cache_entry *e = &s->cache[s->node_base[ps] + nd][m][w];
                        e->match = (mmp_match *)mem;
                        mem += sizeof(mmp_match) * mmp_match_count(a, b);
                        e->pred = (int32_t *)mem;
                        mem += sizeof(int32_t) * (1 << (a + b));
                    }
        }
    return 0;
}

static uint32_t hash_block(const int32_t *p, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint32_t)p[i]) * 16777619u;
    return h;
}

/* ------------------------------------------------------------ scratch pool */

static void scratch_free(scratch *x)
{
    if (!x)
        return;
    free(x->matches);
    free(x->res);
    free(x);
}

static scratch *scratch_new(void)
{
    const size_t n = (size_t)MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B);
    scratch *x = malloc(sizeof(*x));
    if (!x)
        return NULL;
    x->matches = malloc(sizeof(mmp_match) * n);
    x->res = malloc(sizeof(mmp_match) * n);
    if (!x->matches || !x->res) {
        scratch_free(x);
        return NULL;
    }
    return x;
}

/* A free scratch (a new one when all are in use), or NULL without memory. */
static scratch *scratch_get(mmp_search *s)
{
    pthread_mutex_lock(&s->pool_lock);
    scratch *x = s->pool;
    if (x) {
        s->pool = x->next;
    } else if (s->nscratch < s->owned_cap) {
        x = scratch_new();
        if (x)
            s->owned[s->nscratch++] = x;
    }
    pthread_mutex_unlock(&s->pool_lock);
    return x;
}

static void scratch_put(mmp_search *s, scratch *x)
{
    pthread_mutex_lock(&s->pool_lock);
    x->next = s->pool;
    s->pool = x;
    pthread_mutex_unlock(&s->pool_lock);
}

/* ------------------------------------------------------------ views */

static void view_init(view *v, const mmp_plane *base, int y0, int x0)
{
    v->plane = *base;
    v->plane.ov_pix = v->pix;
    v->plane.ov_avail = v->avail;
    v->plane.ov_y = y0;
    v->plane.ov_x = x0;
    memset(v->avail, 0, sizeof v->avail);
}

static void view_copy(view *dst, const view *src)
{
    dst->plane = src->plane;
    dst->plane.ov_pix = dst->pix;
    dst->plane.ov_avail = dst->avail;
    memcpy(dst->pix, src->pix, sizeof dst->pix);
    memcpy(dst->avail, src->avail, sizeof dst->avail);
}

/* Region (y0, x0, h, w), in plane coordinates, of src into dst. */
static void view_take(view *dst, const view *src, int y0, int x0, int h, int w)
{
    const int o = (y0 - dst->plane.ov_y) * MMP_B + (x0 - dst->plane.ov_x);
    for (int y = 0; y < h; y++) {
        memcpy(dst->pix + o + y * MMP_B, src->pix + o + y * MMP_B, sizeof(int32_t) * w);
        memcpy(dst->avail + o + y * MMP_B, src->avail + o + y * MMP_B, (size_t)w);
    }
}

static void view_store(view *v, int y0, int x0, int h, int w, const int32_t *rec)
{
    const int o = (y0 - v->plane.ov_y) * MMP_B + (x0 - v->plane.ov_x);
    for (int y = 0; y < h; y++) {
        memcpy(v->pix + o + y * MMP_B, rec + y * w, sizeof(int32_t) * w);
        memset(v->avail + o + y * MMP_B, 1, (size_t)w);
    }
}

/* ------------------------------------------------------------ setup */

int mmp_search_create(mmp_search **out, mmp_codec *c, const int32_t *orig,
                      const mmp_engine_ops *eng, void *eng_state, int64_t lambda_q8,
                      const mmp_logger *log, int verbose)
{
    mmp_search *s = calloc(1, sizeof(*s));
    if (!s)
        return MMP_ENOMEM;
    s->c = c;
    s->orig = orig;
    s->eng = eng;
    s->es = eng_state;
    s->lambda = lambda_q8;
    s->log = *log;
    s->verbose = verbose;
    s->threads = eng->concurrency ? eng->concurrency(eng_state) : 1;
    if (s->threads < 1)
        s->threads = 1;
    s->task_min_area = eng->task_min_area > 0 ? eng->task_min_area : TASK_MIN_AREA;
    atomic_init(&s->err, 0);
    atomic_init(&s->evals, 0);
    atomic_init(&s->hits, 0);
    pthread_mutex_init(&s->pool_lock, NULL);
    for (int i = 0; i < CACHE_NODES; i++) {
        pthread_mutex_init(&s->cache_lock[i], NULL);
        pthread_cond_init(&s->cache_done[i], NULL);
        atomic_init(&s->cache_gen[i], 0);
    }
    /* One scratch per thread is enough (a thread starts no other search
     * work while it evaluates a leaf); the pool may still grow, as a margin
     * against a runtime that nests tasks where this one does not. */
    s->owned_cap = 16 * s->threads + 16;
    s->owned = calloc((size_t)s->owned_cap, sizeof(*s->owned));
    int ok = s->owned && cache_alloc(s) == 0;
    for (int k = 0; k < MMP_NSCALES && ok; k++)
        ok = (s->idx_cost[k] = malloc(sizeof(uint32_t) * c->dict.cap)) != NULL;
    /* One scratch per thread up front. */
    for (int i = 0; i < s->threads && ok; i++) {
        scratch *x = scratch_new();
        ok = x != NULL;
        if (x) {
            s->owned[s->nscratch++] = x;
            x->next = s->pool;
            s->pool = x;
        }
    }
    if (!ok) {
        mmp_search_destroy(s);
        return MMP_ENOMEM;
    }
    s->tab.dict = &c->dict;
    for (int k = 0; k < MMP_NSCALES; k++)
        s->tab.idx_cost[k] = s->idx_cost[k];
    s->tab.lambda_q8 = lambda_q8;
    s->tab.maxval = c->maxval;
    *out = s;
    return 0;
}

void mmp_search_destroy(mmp_search *s)
{
    if (!s)
        return;
    if (s->verbose)
        mmp_log(&s->log, MMP_LOG_INFO,
                "search: %d threads, %llu mode evaluations, %llu from the memo, %d scratch",
                s->threads, (unsigned long long)s->evals, (unsigned long long)s->hits,
                s->nscratch);
    for (int k = 0; k < MMP_NSCALES; k++)
        free(s->idx_cost[k]);
    for (int i = 0; i < s->nscratch; i++)
        scratch_free(s->owned[i]);
    free(s->owned);
    free(s->cache_mem);
    pthread_mutex_destroy(&s->pool_lock);
    for (int i = 0; i < CACHE_NODES; i++) {
        pthread_mutex_destroy(&s->cache_lock[i]);
        pthread_cond_destroy(&s->cache_done[i]);
    }
    free(s);
}

/* Flag symbol costs indexed by canonical flag (leaf, H, V). */
static void flag_costs(const mmp_model *m, int split_h_allowed, uint32_t out[3])
{
    uint32_t sc[MMP_MODEL_MAX_SYMS];
    out[0] = out[1] = out[2] = 0;
    if (m->nsyms == 1)
        return;
    mmp_model_costs(m, sc);
    out[MMP_FLAG_LEAF] = sc[0];
    if (split_h_allowed) {
        out[MMP_FLAG_SPLIT_H] = sc[1];
        if (m->nsyms == 3)
            out[MMP_FLAG_SPLIT_V] = sc[2];
    } else {
        out[MMP_FLAG_SPLIT_V] = sc[1];
    }
}

static int flag_symbol(int flag, int split_h_allowed)
{
    if (flag == MMP_FLAG_LEAF)
        return 0;
    if (flag == MMP_FLAG_SPLIT_H)
        return 1;
    return split_h_allowed ? 2 : 1;
}

static void snapshot_rates(mmp_search *s)
{
    mmp_models *m = &s->c->models;
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            int ps = mmp_pscale(a, b);
            flag_costs(&m->pflag[ps], a > MMP_LOG2_PMIN, s->pflag_cost[ps]);
            mmp_model_costs(&m->mode[ps], s->mode_cost[ps]);
        }
    for (int k = 0; k < MMP_NSCALES; k++) {
        flag_costs(&m->rflag[k], k / MMP_NLOG > 0, s->rflag_cost[k]);
        mmp_imodel_costs(&m->idx[k], s->idx_cost[k]);
    }
}

/* Residual-tree dynamic programme over the engine's matches of one mode. */
static int64_t residual_dp(const mmp_search *s, const mmp_match *mt, int lh, int lw, dp_tables *dp)
{
    const int64_t lam = s->lambda;
    for (int a = 0; a <= lh; a++)
        for (int b = 0; b <= lw; b++) {
            const int sc = mmp_scale(a, b), cols = 1 << (lw - b), rows = 1 << (lh - a);
            const uint32_t *fc = s->rflag_cost[sc];
            const int off = mmp_match_offset(lh, lw, a, b);
            const int offh = a > 0 ? mmp_match_offset(lh, lw, a - 1, b) : 0;
            const int offv = b > 0 ? mmp_match_offset(lh, lw, a, b - 1) : 0;
            for (int i = 0; i < rows; i++)
                for (int jj = 0; jj < cols; jj++) {
                    int n = off + i * cols + jj;
                    int64_t best = mt[n].j + lam * fc[MMP_FLAG_LEAF];
                    int flag = MMP_FLAG_LEAF;
                    if (a > 0) {
                        int c0 = offh + (2 * i) * cols + jj, c1 = offh + (2 * i + 1) * cols + jj;
                        int64_t v = lam * fc[MMP_FLAG_SPLIT_H] + dp->j[c0] + dp->j[c1];
                        if (v < best) {
                            best = v;
                            flag = MMP_FLAG_SPLIT_H;
                        }
                    }
                    if (b > 0) {
                        int c0 = offv + i * (2 * cols) + 2 * jj, c1 = c0 + 1;
                        int64_t v = lam * fc[MMP_FLAG_SPLIT_V] + dp->j[c0] + dp->j[c1];
                        if (v < best) {
                            best = v;
                            flag = MMP_FLAG_SPLIT_V;
                        }
                    }
                    dp->j[n] = best;
                    dp->flag[n] = (uint8_t)flag;
                }
        }
    return dp->j[mmp_match_offset(lh, lw, lh, lw)];
}

/* Tokens and pattern of the residual node (a, b, i, j) of a 2^lh x 2^lw leaf. */
static void residual_emit(const mmp_search *s, const mmp_match *mt, const dp_tables *dp, int lh,
                          int lw, int a, int b, int i, int jj, int32_t *pat, int32_t *tok, int *nt)
{
    const int cols = 1 << (lw - b);
    const int n = mmp_match_offset(lh, lw, a, b) + i * cols + jj;
    const int flag = dp->flag[n];
    tok[(*nt)++] = flag_symbol(flag, a > 0);
    if (flag == MMP_FLAG_LEAF) {
        const int sc = mmp_scale(a, b), w = 1 << lw;
        const int32_t *e = mmp_dict_elem(&s->c->dict, sc, mt[n].idx);
        tok[(*nt)++] = mt[n].idx;
        for (int y = 0; y < (1 << a); y++)
            memcpy(pat + ((i << a) + y) * w + (jj << b), e + (y << b), sizeof(int32_t) << b);
    } else if (flag == MMP_FLAG_SPLIT_H) {
        residual_emit(s, mt, dp, lh, lw, a - 1, b, 2 * i, jj, pat, tok, nt);
        residual_emit(s, mt, dp, lh, lw, a - 1, b, 2 * i + 1, jj, pat, tok, nt);
    } else {
        residual_emit(s, mt, dp, lh, lw, a, b - 1, i, 2 * jj, pat, tok, nt);
        residual_emit(s, mt, dp, lh, lw, a, b - 1, i, 2 * jj + 1, pat, tok, nt);
    }
}

static void set_error(mmp_search *s, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&s->err, &none, err);
}

/*
 * Best prediction leaf over the modes for node (y0, x0, 2^a x 2^b) of view v:
 * its cost, its tokens, and its reconstruction written to v.
 */
static int64_t search_leaf(mmp_search *s, view *v, int y0, int x0, int a, int b, int32_t *tok,
                           int *nt)
{
    mmp_codec *c = s->c;
    const int h = 1 << a, w = 1 << b, ps = mmp_pscale(a, b), pw = c->plane.width;
    scratch *x = scratch_get(s);
    if (!x) {
        set_error(s, MMP_ENOMEM);
        return INT64_MAX / 4;
    }
    int32_t orig[MMP_B * MMP_B];
    uint8_t realbuf[MMP_B * MMP_B];
    const uint8_t *real = NULL;
    int32_t *pred = x->pred;
    mmp_predict_all(&v->plane, y0, x0, h, w, pred);
    for (int y = 0; y < h; y++)
        memcpy(orig + y * w, s->orig + (long)(y0 + y) * pw + x0, sizeof(int32_t) * w);
    if (y0 + h > c->height || x0 + w > c->width) {
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++)
                realbuf[y * w + xx] = (y0 + y < c->height && x0 + xx < c->width);
        real = realbuf;
    }
    const int count = mmp_match_count(a, b), area = h * w;
    const int nd = s->node_base[ps] + ((y0 % MMP_B) >> a) * (MMP_B >> b) + ((x0 % MMP_B) >> b);
    /* Per mode: a hit is copied now; a miss claims an entry (when one is not
     * pending) and goes to the engine; a pending match is waited for. */
    int missing[MMP_NUM_MODES], nmiss = 0, waiting[MMP_NUM_MODES], nwait = 0;
    cache_entry *claim[MMP_NUM_MODES];
    uint32_t hashes[MMP_NUM_MODES];
    uint64_t hits = 0;
    pthread_mutex_t *lock = &s->cache_lock[nd];
    pthread_mutex_lock(lock);
    for (int m = 0; m < MMP_NUM_MODES; m++) {
        const int32_t *pm = pred + (long)m * area;
        const uint32_t hv = hash_block(pm, area);
        cache_entry *found = NULL;
        for (int wy = 0; wy < CACHE_WAYS && !found; wy++) {
            cache_entry *ce = &s->cache[nd][m][wy];
            if (ce->state != ENTRY_EMPTY && ce->hash == hv &&
                !memcmp(ce->pred, pm, sizeof(int32_t) * area))
                found = ce;
        }
        hashes[m] = hv;
        if (found && found->state == ENTRY_VALID) {
            hits++;
            memcpy(x->matches + (long)m * count, found->match, sizeof(mmp_match) * count);
            continue;
        }
        if (found) {
            waiting[nwait++] = m;
            continue;
        }
        /* The next entry in turn that nobody is computing, if any. */
        cache_entry *ce = NULL;
        for (int k = 0; k < CACHE_WAYS && !ce; k++) {
            cache_entry *e = &s->cache[nd][m][s->next_way[nd][m]];
            s->next_way[nd][m] = (uint8_t)((s->next_way[nd][m] + 1) % CACHE_WAYS);
            if (e->state != ENTRY_PENDING)
                ce = e;
        }
        if (ce) {
            ce->state = ENTRY_PENDING;
            ce->hash = hv;
            memcpy(ce->pred, pm, sizeof(int32_t) * area);
        }
        claim[nmiss] = ce;
        memcpy(x->missing_pred + (long)nmiss * area, pm, sizeof(int32_t) * area);
        missing[nmiss++] = m;
    }
    pthread_mutex_unlock(lock);
    if (nmiss) {
        int err = s->eng->match(s->es, &s->tab, orig, x->missing_pred, nmiss, real, a, b, x->res);
        pthread_mutex_lock(lock);
        for (int k = 0; k < nmiss; k++) {
            cache_entry *ce = claim[k];
            const mmp_match *res = x->res + (long)k * count;
            memcpy(x->matches + (long)missing[k] * count, res, sizeof(mmp_match) * count);
            if (ce) {
                ce->state = err ? ENTRY_EMPTY : ENTRY_VALID;
                if (!err)
                    memcpy(ce->match, res, sizeof(mmp_match) * count);
            }
        }
        atomic_fetch_add_explicit(&s->cache_gen[nd], 1, memory_order_release);
        pthread_cond_broadcast(&s->cache_done[nd]);
        pthread_mutex_unlock(lock);
        if (err) {
            set_error(s, err);
            scratch_put(s, x);
            return INT64_MAX / 4;
        }
    }
    /* Matches others were computing: wait for them; one that failed or was
     * replaced meanwhile is computed here. */
    for (int k = 0; k < nwait; k++) {
        const int m = waiting[k];
        const int32_t *pm = pred + (long)m * area;
        int done = 0;
        pthread_mutex_lock(lock);
        for (;;) {
            cache_entry *found = NULL;
            for (int wy = 0; wy < CACHE_WAYS && !found; wy++) {
                cache_entry *ce = &s->cache[nd][m][wy];
                if (ce->state != ENTRY_EMPTY && ce->hash == hashes[m] &&
                    !memcmp(ce->pred, pm, sizeof(int32_t) * area))
                    found = ce;
            }
            if (!found)
                break;
            if (found->state == ENTRY_VALID) {
                memcpy(x->matches + (long)m * count, found->match, sizeof(mmp_match) * count);
                hits++;
                done = 1;
                break;
            }
            if (s->eng->help) {
                /* Help the engine (with that very match, among others)
                 * until the entries of this node change. */
                const unsigned g = atomic_load_explicit(&s->cache_gen[nd], memory_order_acquire);
                pthread_mutex_unlock(lock);
                for (int i = 0; atomic_load_explicit(&s->cache_gen[nd], memory_order_acquire) == g;
                     i++)
                    if (!s->eng->help(s->es))
                        mmp_wait_step(i);
                pthread_mutex_lock(lock);
            } else {
                pthread_cond_wait(&s->cache_done[nd], lock);
            }
        }
        pthread_mutex_unlock(lock);
        if (!done) {
            int err = s->eng->match(s->es, &s->tab, orig, pm, 1, real, a, b,
                                    x->matches + (long)m * count);
            if (err) {
                set_error(s, err);
                scratch_put(s, x);
                return INT64_MAX / 4;
            }
        }
    }
    atomic_fetch_add_explicit(&s->evals, MMP_NUM_MODES, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->hits, hits, memory_order_relaxed);
    dp_tables *dp = &x->dp;
    int64_t best = INT64_MAX;
    int best_mode = 0;
    for (int m = 0; m < MMP_NUM_MODES; m++) {
        int64_t jv = residual_dp(s, x->matches + (long)m * count, a, b, dp) +
                     s->lambda * (s->pflag_cost[ps][MMP_FLAG_LEAF] + s->mode_cost[ps][m]);
        if (jv < best) {
            best = jv;
            best_mode = m;
        }
    }
    const mmp_match *mt = x->matches + (long)best_mode * count;
    residual_dp(s, mt, a, b, dp);
    int32_t pat[MMP_B * MMP_B], rec[MMP_B * MMP_B];
    *nt = 0;
    tok[(*nt)++] = flag_symbol(MMP_FLAG_LEAF, a > MMP_LOG2_PMIN);
    tok[(*nt)++] = best_mode;
    residual_emit(s, mt, dp, a, b, a, b, 0, 0, pat, tok, nt);
    mmp_reconstruct(pred + (long)best_mode * area, pat, area, c->maxval, rec);
    view_store(v, y0, x0, h, w, rec);
    scratch_put(s, x);
    return best;
}

/* The three options of a node, as their costs become known (INT64_MAX:
 * not yet, or ruled out). */
typedef struct rivals {
    _Atomic int64_t j[3]; /* indexed by MMP_FLAG_* */
} rivals;

/* Whether a split whose cost is at least jv can no longer be chosen: ties go
 * to the leaf, then to H. */
static int beaten(rivals *r, int flag, int64_t jv)
{
    if (jv >= atomic_load_explicit(&r->j[MMP_FLAG_LEAF], memory_order_relaxed))
        return 1;
    if (flag == MMP_FLAG_SPLIT_H)
        return jv > atomic_load_explicit(&r->j[MMP_FLAG_SPLIT_V], memory_order_relaxed);
    return jv >= atomic_load_explicit(&r->j[MMP_FLAG_SPLIT_H], memory_order_relaxed);
}

/* a + b for non-negative costs, at most INT64_MAX (after an engine error
 * every leaf costs INT64_MAX / 4, and a subtree adds many). */
static int64_t cost_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* One split of a node, searched in its own view. */
typedef struct split {
    view v;
    int64_t j; /* INT64_MAX when beaten */
    int ntok;
    int32_t tok[NODE_TOKENS];
} split;

static int64_t search_pred(mmp_search *s, view *v, int y0, int x0, int a, int b, int32_t *tok,
                           int *nt);

static void search_split(mmp_search *s, split *sp, rivals *r, int flag, int y0, int x0, int a,
                         int b)
{
    const int h = 1 << a, w = 1 << b, ps = mmp_pscale(a, b);
    const int ca = flag == MMP_FLAG_SPLIT_H ? a - 1 : a, cb = flag == MMP_FLAG_SPLIT_H ? b : b - 1;
    const int y1 = flag == MMP_FLAG_SPLIT_H ? y0 + h / 2 : y0;
    const int x1 = flag == MMP_FLAG_SPLIT_H ? x0 : x0 + w / 2;
    int n = 0, n1 = 0, n2 = 0;
    sp->tok[n++] = flag_symbol(flag, a > MMP_LOG2_PMIN);
    int64_t jv = cost_add(s->lambda * s->pflag_cost[ps][flag],
                          search_pred(s, &sp->v, y0, x0, ca, cb, sp->tok + n, &n1));
    n += n1;
    /* Costs only grow: a half already beaten needs no second half. */
    if (beaten(r, flag, jv)) {
        jv = INT64_MAX;
    } else {
        jv = cost_add(jv, search_pred(s, &sp->v, y1, x1, ca, cb, sp->tok + n, &n2));
        n += n2;
    }
    sp->j = jv;
    sp->ntok = n;
    atomic_store_explicit(&r->j[flag], jv, memory_order_relaxed);
}

/* A split of a node, by whichever thread gets to it first. */
static void run_once(mmp_search *s, split *sp, rivals *r, _Atomic int *state, int flag, int y0,
                     int x0, int a, int b)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(state, &expect, 1))
        return;
    search_split(s, sp, r, flag, y0, x0, a, b);
    atomic_store_explicit(state, 2, memory_order_release);
}

/*
 * Best prediction subtree of node (y0, x0, 2^a x 2^b): its cost and tokens,
 * and its reconstruction left in v. The node's samples are unavailable in v
 * on entry.
 */
static int64_t search_pred(mmp_search *s, view *v, int y0, int x0, int a, int b, int32_t *tok,
                           int *nt)
{
    const int h = 1 << a, w = 1 << b;
    const int can[3] = {0, a > MMP_LOG2_PMIN, b > MMP_LOG2_PMIN};
    if (!can[MMP_FLAG_SPLIT_H] && !can[MMP_FLAG_SPLIT_V])
        return search_leaf(s, v, y0, x0, a, b, tok, nt);
    split sp[3];
    rivals r;
    for (int f = 0; f < 3; f++)
        atomic_init(&r.j[f], INT64_MAX);
    for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++) {
        sp[f].j = INT64_MAX;
        if (can[f])
            view_copy(&sp[f].v, v);
    }
    int64_t leaf;
    if (s->threads > 1 && h * w >= s->task_min_area && can[MMP_FLAG_SPLIT_V]) {
        /* The splits as tasks (the horizontal one only for many threads),
         * each run by whichever thread gets to it first: this one takes
         * them after the leaf if nobody has. Until the started ones end,
         * this thread helps the engine with others' matches. The task group
         * then ends as soon as this node's own tasks have (a split run here
         * leaves a task that finds nothing to do); a taskwait would also
         * wait for every earlier child of the enclosing task, the splits of
         * the ancestors that this thread runs inline. */
        _Atomic int st[3] = {2, can[MMP_FLAG_SPLIT_H] ? 0 : 2, 0}; /* 0 waiting, 1 running, 2 done */
#pragma omp taskgroup
        {
            if (s->threads >= BOTH_TASKS_THREADS && can[MMP_FLAG_SPLIT_H]) {
#pragma omp task default(none) firstprivate(s, y0, x0, a, b) shared(sp, r, st)
                run_once(s, &sp[MMP_FLAG_SPLIT_H], &r, &st[MMP_FLAG_SPLIT_H], MMP_FLAG_SPLIT_H, y0,
                         x0, a, b);
            }
#pragma omp task default(none) firstprivate(s, y0, x0, a, b) shared(sp, r, st)
            run_once(s, &sp[MMP_FLAG_SPLIT_V], &r, &st[MMP_FLAG_SPLIT_V], MMP_FLAG_SPLIT_V, y0, x0,
                     a, b);
            leaf = search_leaf(s, v, y0, x0, a, b, tok, nt);
            atomic_store_explicit(&r.j[MMP_FLAG_LEAF], leaf, memory_order_relaxed);
            for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++)
                run_once(s, &sp[f], &r, &st[f], f, y0, x0, a, b);
            for (int i = 0; atomic_load_explicit(&st[MMP_FLAG_SPLIT_H], memory_order_acquire) != 2 ||
                            atomic_load_explicit(&st[MMP_FLAG_SPLIT_V], memory_order_acquire) != 2;
                 i++)
                if (!(s->eng->help && s->eng->help(s->es)))
                    mmp_wait_step(i);
        }
    } else {
        leaf = search_leaf(s, v, y0, x0, a, b, tok, nt);
        atomic_store_explicit(&r.j[MMP_FLAG_LEAF], leaf, memory_order_relaxed);
        for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++)
            if (can[f])
                search_split(s, &sp[f], &r, f, y0, x0, a, b);
    }
    int64_t best = leaf;
    int win = MMP_FLAG_LEAF;
    for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++)
        if (can[f] && sp[f].j < best) {
            best = sp[f].j;
            win = f;
        }
    if (win != MMP_FLAG_LEAF) {
        memcpy(tok, sp[win].tok, sizeof(int32_t) * sp[win].ntok);
        *nt = sp[win].ntok;
        view_take(v, &sp[win].v, y0, x0, h, w);
    }
    return best;
}

int mmp_search_block(mmp_search *s, int by, int bx, int32_t *tok, int *ntok)
{
    mmp_codec *c = s->c;
    snapshot_rates(s);
    s->tab.block_index = by * (c->plane.width / MMP_B) + bx;
    for (int nd = 0; nd < CACHE_NODES; nd++)
        for (int m = 0; m < MMP_NUM_MODES; m++)
            for (int wy = 0; wy < CACHE_WAYS; wy++)
                s->cache[nd][m][wy].state = ENTRY_EMPTY;
    int err = s->eng->begin_block(s->es, &s->tab);
    if (err)
        return err;
    const int y0 = by * MMP_B, x0 = bx * MMP_B;
    view *root = &s->root;
    view_init(root, &c->plane, y0, x0);
    if (s->threads > 1) {
#pragma omp parallel num_threads(s->threads) default(none) shared(s, root, tok, ntok) \
    firstprivate(y0, x0)
#pragma omp single
        search_pred(s, root, y0, x0, MMP_LOG2B, MMP_LOG2B, tok, ntok);
    } else {
        search_pred(s, root, y0, x0, MMP_LOG2B, MMP_LOG2B, tok, ntok);
    }
    /* The chosen reconstruction into the codec's plane. */
    for (int y = 0; y < MMP_B; y++) {
        memcpy(c->plane.pix + (long)(y0 + y) * c->plane.width + x0, root->pix + y * MMP_B,
               sizeof(int32_t) * MMP_B);
        memset(c->plane.avail + (long)(y0 + y) * c->plane.width + x0, 1, MMP_B);
    }
    return atomic_load(&s->err);
}
