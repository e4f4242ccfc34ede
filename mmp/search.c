/* Rate-distortion search of the prediction and residual trees (encoder only). */
#include "mmp/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define NODE_TOKENS (4 * MMP_B * MMP_B + 32)

/*
 * Within a block, the same prediction leaf is evaluated once per path of the
 * prediction tree that reaches it, often with the very same prediction. The
 * engine's matches depend only on (leaf, prediction), so they are kept per
 * (leaf, mode) for the block and reused when the prediction repeats: an
 * exact memo, not an approximation.
 */
#define CACHE_WAYS 4
#define CACHE_NODES 49 /* prediction leaves of a 16x16 block: 4x4 up to 16x16 */

typedef struct cache_entry {
    uint32_t hash;
    int valid;
    int32_t *pred;
    mmp_match *match;
} cache_entry;

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
    mmp_match *matches;
    mmp_match *scratch;
    int64_t lambda;
    int err;
    cache_entry cache[CACHE_NODES][MMP_NUM_MODES][CACHE_WAYS];
    uint8_t next_way[CACHE_NODES][MMP_NUM_MODES];
    int node_base[MMP_NPSCALES];
    void *cache_mem;
    uint64_t evals, hits;
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

int mmp_search_create(mmp_search **out, mmp_codec *c, const int32_t *orig,
                      const mmp_engine_ops *eng, void *eng_state, int64_t lambda_q8)
{
    mmp_search *s = calloc(1, sizeof(*s));
    if (!s)
        return MMP_ENOMEM;
    s->c = c;
    s->orig = orig;
    s->eng = eng;
    s->es = eng_state;
    s->lambda = lambda_q8;
    s->matches = malloc(sizeof(mmp_match) * MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B));
    s->scratch = malloc(sizeof(mmp_match) * MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B));
    int ok = s->matches && s->scratch && cache_alloc(s) == 0;
    for (int k = 0; k < MMP_NSCALES && ok; k++)
        ok = (s->idx_cost[k] = malloc(sizeof(uint32_t) * c->dict.cap)) != NULL;
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
    if (getenv("MMP_DEBUG_CACHE"))
        fprintf(stderr, "search: %llu mode evaluations, %llu from the memo\n",
                (unsigned long long)s->evals, (unsigned long long)s->hits);
    for (int k = 0; k < MMP_NSCALES; k++)
        free(s->idx_cost[k]);
    free(s->matches);
    free(s->scratch);
    free(s->cache_mem);
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
typedef struct dp_tables {
    int64_t j[MMP_B * MMP_B * 4];
    uint8_t flag[MMP_B * MMP_B * 4];
} dp_tables;

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

static void set_avail(mmp_plane *p, int y0, int x0, int h, int w, int v)
{
    for (int y = 0; y < h; y++)
        memset(p->avail + (long)(y0 + y) * p->width + x0, v, w);
}

static void save_region(const mmp_plane *p, int y0, int x0, int h, int w, int32_t *dst)
{
    for (int y = 0; y < h; y++)
        memcpy(dst + y * w, p->pix + (long)(y0 + y) * p->width + x0, sizeof(int32_t) * w);
}

static void load_region(mmp_plane *p, int y0, int x0, int h, int w, const int32_t *src)
{
    for (int y = 0; y < h; y++)
        memcpy(p->pix + (long)(y0 + y) * p->width + x0, src + y * w, sizeof(int32_t) * w);
}

/* Best prediction leaf over the modes: tokens, and the reconstruction written to the plane. */
static int64_t search_leaf(mmp_search *s, int y0, int x0, int a, int b, int32_t *tok, int *nt)
{
    mmp_codec *c = s->c;
    const int h = 1 << a, w = 1 << b, ps = mmp_pscale(a, b), pw = c->plane.width;
    int32_t pred[MMP_NUM_MODES * MMP_B * MMP_B], orig[MMP_B * MMP_B];
    uint8_t realbuf[MMP_B * MMP_B];
    const uint8_t *real = NULL;
    mmp_predict_all(&c->plane, y0, x0, h, w, pred);
    for (int y = 0; y < h; y++)
        memcpy(orig + y * w, s->orig + (long)(y0 + y) * pw + x0, sizeof(int32_t) * w);
    if (y0 + h > c->height || x0 + w > c->width) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                realbuf[y * w + x] = (y0 + y < c->height && x0 + x < c->width);
        real = realbuf;
    }
    const int count = mmp_match_count(a, b), area = h * w;
    const int nd = s->node_base[ps] + ((y0 % MMP_B) >> a) * (MMP_B >> b) + ((x0 % MMP_B) >> b);
    int32_t missing_pred[MMP_NUM_MODES * MMP_B * MMP_B];
    int missing[MMP_NUM_MODES], nmiss = 0;
    uint32_t hashes[MMP_NUM_MODES];
    for (int m = 0; m < MMP_NUM_MODES; m++) {
        const int32_t *pm = pred + (long)m * area;
        uint32_t hv = hash_block(pm, area);
        int hit = -1;
        for (int wy = 0; wy < CACHE_WAYS && hit < 0; wy++) {
            const cache_entry *ce = &s->cache[nd][m][wy];
            if (ce->valid && ce->hash == hv && !memcmp(ce->pred, pm, sizeof(int32_t) * area))
                hit = wy;
        }
        s->evals++;
        if (hit >= 0) {
            s->hits++;
            memcpy(s->matches + (long)m * count, s->cache[nd][m][hit].match,
                   sizeof(mmp_match) * count);
        } else {
            hashes[m] = hv;
            memcpy(missing_pred + (long)nmiss * area, pm, sizeof(int32_t) * area);
            missing[nmiss++] = m;
        }
    }
    if (nmiss) {
        int err = s->eng->match(s->es, &s->tab, orig, missing_pred, nmiss, real, a, b, s->scratch);
        if (err) {
            s->err = err;
            return INT64_MAX / 4;
        }
        for (int k = 0; k < nmiss; k++) {
            int m = missing[k];
            const mmp_match *res = s->scratch + (long)k * count;
            memcpy(s->matches + (long)m * count, res, sizeof(mmp_match) * count);
            cache_entry *ce = &s->cache[nd][m][s->next_way[nd][m]];
            s->next_way[nd][m] = (uint8_t)((s->next_way[nd][m] + 1) % CACHE_WAYS);
            ce->valid = 1;
            ce->hash = hashes[m];
            memcpy(ce->pred, pred + (long)m * area, sizeof(int32_t) * area);
            memcpy(ce->match, res, sizeof(mmp_match) * count);
        }
    }
    static _Thread_local dp_tables dp;
    int64_t best = INT64_MAX;
    int best_mode = 0;
    for (int m = 0; m < MMP_NUM_MODES; m++) {
        int64_t jv = residual_dp(s, s->matches + (long)m * count, a, b, &dp) +
                     s->lambda * (s->pflag_cost[ps][MMP_FLAG_LEAF] + s->mode_cost[ps][m]);
        if (jv < best) {
            best = jv;
            best_mode = m;
        }
    }
    const mmp_match *mt = s->matches + (long)best_mode * count;
    residual_dp(s, mt, a, b, &dp);
    int32_t pat[MMP_B * MMP_B], rec[MMP_B * MMP_B];
    *nt = 0;
    tok[(*nt)++] = flag_symbol(MMP_FLAG_LEAF, a > MMP_LOG2_PMIN);
    tok[(*nt)++] = best_mode;
    residual_emit(s, mt, &dp, a, b, a, b, 0, 0, pat, tok, nt);
    mmp_reconstruct(pred + (long)best_mode * h * w, pat, h * w, c->maxval, rec);
    load_region(&c->plane, y0, x0, h, w, rec);
    set_avail(&c->plane, y0, x0, h, w, 1);
    return best;
}

/* Best prediction subtree of node (y0, x0, 2^a x 2^b); leaves its reconstruction in the plane. */
static int64_t search_pred(mmp_search *s, int y0, int x0, int a, int b, int32_t *tok, int *nt)
{
    mmp_plane *p = &s->c->plane;
    const int h = 1 << a, w = 1 << b, ps = mmp_pscale(a, b);
    const int hsplit = a > MMP_LOG2_PMIN, vsplit = b > MMP_LOG2_PMIN;
    int64_t best = search_leaf(s, y0, x0, a, b, tok, nt);
    if (!hsplit && !vsplit)
        return best;
    int32_t best_rec[MMP_B * MMP_B], trial[NODE_TOKENS];
    save_region(p, y0, x0, h, w, best_rec);
    for (int flag = MMP_FLAG_SPLIT_H; flag <= MMP_FLAG_SPLIT_V; flag++) {
        if ((flag == MMP_FLAG_SPLIT_H && !hsplit) || (flag == MMP_FLAG_SPLIT_V && !vsplit))
            continue;
        set_avail(p, y0, x0, h, w, 0);
        int ca = flag == MMP_FLAG_SPLIT_H ? a - 1 : a, cb = flag == MMP_FLAG_SPLIT_H ? b : b - 1;
        int y1 = flag == MMP_FLAG_SPLIT_H ? y0 + h / 2 : y0;
        int x1 = flag == MMP_FLAG_SPLIT_H ? x0 : x0 + w / 2;
        int n = 0, n1 = 0, n2 = 0;
        trial[n++] = flag_symbol(flag, hsplit);
        int64_t jv = s->lambda * s->pflag_cost[ps][flag];
        jv += search_pred(s, y0, x0, ca, cb, trial + n, &n1);
        n += n1;
        /* Costs only grow, and ties keep the earlier option: stop early. */
        if (jv < best) {
            jv += search_pred(s, y1, x1, ca, cb, trial + n, &n2);
            n += n2;
        }
        if (jv < best) {
            best = jv;
            memcpy(tok, trial, sizeof(int32_t) * n);
            *nt = n;
            save_region(p, y0, x0, h, w, best_rec);
        }
    }
    load_region(p, y0, x0, h, w, best_rec);
    set_avail(p, y0, x0, h, w, 1);
    return best;
}

int mmp_search_block(mmp_search *s, int by, int bx, int32_t *tok, int *ntok)
{
    snapshot_rates(s);
    s->tab.block_index = by * (s->c->plane.width / MMP_B) + bx;
    for (int nd = 0; nd < CACHE_NODES; nd++)
        for (int m = 0; m < MMP_NUM_MODES; m++)
            for (int wy = 0; wy < CACHE_WAYS; wy++)
                s->cache[nd][m][wy].valid = 0;
    s->err = s->eng->begin_block(s->es, &s->tab);
    if (s->err)
        return s->err;
    set_avail(&s->c->plane, by * MMP_B, bx * MMP_B, MMP_B, MMP_B, 0);
    search_pred(s, by * MMP_B, bx * MMP_B, MMP_LOG2B, MMP_LOG2B, tok, ntok);
    return s->err;
}
