/*
 * Rate-distortion decisions of the prediction and residual trees (encoder
 * only).
 *
 * Every node of the prediction tree has three options: a leaf (one
 * prediction, best mode and residual tree), a horizontal split and a
 * vertical split. Each is searched in its own copy of the block's
 * reconstruction (a "view": the plane with a private overlay of the block,
 * predict/plane.h), so that they may run at once (mmp/enc/search_sched.h). The
 * option kept is decided from the three costs in one fixed order (leaf, H,
 * V; ties keep the earlier), so the tokens do not depend on the schedule.
 *
 * A split whose cost after its first half already reaches that of a finished
 * rival cannot be chosen: its second half is skipped. Which rivals have
 * finished depends on the schedule; what is chosen does not.
 *
 * The angular mode (MMP_PRED_ANG) has 31 directions: each leaf ranks them
 * by the SATD of their residual and their bits, and only the best one takes
 * the mode's place beside the others (to the engine, the transform and the
 * decision), as video encoders preselect intra directions.
 *
 * The engine's matches of each leaf come through the memo
 * (mmp/enc/search_memo.h), which computes each (leaf, prediction) once per block.
 *
 * Where the plane has the transform residual (docs/format.md 4.4), each
 * mode's residual tree competes with its transform residual, priced here
 * on the host (mmp/enc/search_tx.h) from the leaf's samples, the prediction and
 * the step's frozen rates alone: the engines do not see it.
 *
 * Speed presets above 0 (mmp_search_speed, mmp/enc/search_speed.c) prune by
 * rules that depend only on the block's samples, its neighbours'
 * reconstruction and the step's rates, never on the schedule or the engine:
 * the modes of a leaf are ranked by an estimate and only the best few go to
 * the engine (none from speed 6: the transform residual alone), the
 * narrowest or all oblong prediction leaves may be left out, and fewer
 * modes and directions predicted. Preset 0 is the exhaustive search.
 *
 * The blocks of one step of the coding order (mmp/common/order.h) are searched at
 * once, by workers that each take the step's next block with a memo of
 * their own: they share the step's frozen dictionary and rates, and none
 * reads the pixels of another block of its step.
 */
#include "mmp/enc/search.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "mmp/mmp.h"
#include "mmp/enc/search_memo.h"
#include "mmp/enc/search_sched.h"
#include "mmp/enc/search_tx.h"

#define NODE_TOKENS (4 * MMP_B * MMP_B + 32)

/* Residual-tree dynamic programme tables of one leaf. */
typedef struct dp_tables {
    int64_t j[MMP_B * MMP_B * 4];
    uint8_t flag[MMP_B * MMP_B * 4];
    /* The flags of the best mode so far, kept rather than recomputed: gcc
     * 12.2 at -O1 and -O2 recomputed different flags from the same matches
     * (found by comparing builds, `make check-opt`). */
    uint8_t best_flag[MMP_B * MMP_B * 4];
} dp_tables;

/* What one leaf evaluation needs, from the pool so that concurrent
 * evaluations never share it and nothing is allocated per leaf. */
typedef struct scratch {
    mmp_match matches[MMP_NUM_MODES * ((2 << MMP_LOG2B) - 1) * ((2 << MMP_LOG2B) - 1)];
    int32_t pred[MMP_NUM_MODES * MMP_B * MMP_B];
    int32_t angles[MMP_NUM_ANGLES * MMP_B * MMP_B]; /* every direction of MMP_PRED_ANG */
    mmp_memo_scratch memo;
    dp_tables dp;
    /* The transform option: one mode's levels and residual, and the best
     * mode's. */
    int32_t tx_level[MMP_B * MMP_B], tx_res[MMP_B * MMP_B];
    int32_t best_level[MMP_B * MMP_B], best_res[MMP_B * MMP_B];
} scratch;

/* One option's private reconstruction of the block being searched. */
typedef struct view {
    mmp_plane plane; /* the codec's plane with the overlay below */
    mmp_memo *memo;  /* the block's memo */
    int32_t pix[MMP_B * MMP_B];
    uint8_t avail[MMP_B * MMP_B];
} view;

struct mmp_search {
    mmp_codec *c;
    const int32_t *orig;
    mmp_search_tables tab;
    uint32_t pflag_cost[MMP_NPSCALES][3];
    uint32_t mode_cost[MMP_NPSCALES][MMP_NUM_MODES];
    uint32_t angle_cost[MMP_NUM_ANGLES]; /* an angular leaf's direction symbols */
    uint32_t rflag_cost[MMP_NSCALES][3];
    uint32_t *idx_cost[MMP_NSCALES];
    mmp_tx_costs tx_cost; /* when the plane has the transform residual */
    mmp_tx_search tx;
    int64_t lambda;
    mmp_search_speed speed;
    unsigned pred_modes; /* the modes the preset predicts (bit m: mode m) */
    uint32_t pred_dirs;  /* the angular directions it tries (bit k: direction k) */
    int64_t sqrt_lambda_q8; /* sqrt(lambda) in 1/256: the weight of bits against SATD */
    mmp_sched sched; /* the engine, and how the options run */
    mmp_memo **memo; /* one per worker of a step */
    int nworkers;
    mmp_pool pool; /* of scratch */
    _Atomic int err;
    _Atomic uint64_t evals, hits, leaf_hits;
    mmp_logger log;
    int verbose;
};

/* ------------------------------------------------------------ views */

static void view_init(view *v, const mmp_plane *base, mmp_memo *memo, int y0, int x0)
{
    v->plane = *base;
    v->memo = memo;
    v->plane.ov_pix = v->pix;
    v->plane.ov_avail = v->avail;
    v->plane.ov_y = y0;
    v->plane.ov_x = x0;
    memset(v->avail, 0, sizeof v->avail);
}

static void view_copy(view *dst, const view *src)
{
    dst->plane = src->plane;
    dst->memo = src->memo;
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
                      const mmp_engine_ops *eng, void *eng_state, int64_t lambda_q8, int speed,
                      const mmp_logger *log, int verbose)
{
    mmp_search *s = calloc(1, sizeof(*s));
    if (!s)
        return MMP_ENOMEM;
    s->c = c;
    s->orig = orig;
    s->lambda = lambda_q8;
    mmp_search_speed_preset(speed, &s->speed);
    s->pred_modes = (1u << MMP_NUM_MODES) - 1;
    if (s->speed.no_lsp)
        s->pred_modes &= ~(1u << MMP_PRED_LSP);
    for (int k = 0; k < MMP_NUM_ANGLES; k += s->speed.dir_step)
        s->pred_dirs |= 1u << k;
    s->sqrt_lambda_q8 = llround(sqrt((double)lambda_q8 / 256.0) * 256.0);
    s->log = *log;
    s->verbose = verbose;
    mmp_sched_init(&s->sched, eng, eng_state);
    s->nworkers = s->sched.threads;
    atomic_init(&s->err, 0);
    atomic_init(&s->evals, 0);
    atomic_init(&s->hits, 0);
    atomic_init(&s->leaf_hits, 0);
    /* One scratch per thread is enough (a thread starts no other search
     * work while it evaluates a leaf); the pool may still grow, as a margin
     * against a runtime that nests tasks where this one does not. */
    int ok = mmp_pool_init(&s->pool, sizeof(scratch), s->sched.threads,
                           16 * s->sched.threads + 16) == 0 &&
             (s->memo = calloc((size_t)s->nworkers, sizeof *s->memo)) != NULL;
    for (int w = 0; w < s->nworkers && ok; w++)
        ok = mmp_memo_create(&s->memo[w]) == 0;
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
    s->tab.dict_id = (uint32_t)c->plane_index;
    s->tx = (mmp_tx_search){.cost = &s->tx_cost, .scans = &c->tx_scans, .lambda_q8 = lambda_q8,
                            .step_q4 = c->tx_step_q4, .maxval = c->maxval,
                            .rdoq_only = s->speed.rdoq_only};
    *out = s;
    return 0;
}

void mmp_search_destroy(mmp_search *s)
{
    if (!s)
        return;
    if (s->verbose)
        mmp_log(&s->log, MMP_LOG_INFO,
                "search: %d threads, %llu mode evaluations, %llu from the memo, %llu leaves "
                "repeated whole, %d scratch",
                s->sched.threads, (unsigned long long)s->evals, (unsigned long long)s->hits,
                (unsigned long long)s->leaf_hits, s->pool.nowned);
    for (int k = 0; k < MMP_NSCALES; k++)
        free(s->idx_cost[k]);
    mmp_pool_free(&s->pool);
    for (int w = 0; s->memo && w < s->nworkers; w++)
        mmp_memo_destroy(s->memo[w]);
    free(s->memo);
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
    uint32_t hi[MMP_MODEL_MAX_SYMS], lo[MMP_MODEL_MAX_SYMS];
    mmp_model_costs(&m->angle_hi, hi);
    for (int h = 0; h < MMP_ANGLE_HI_SYMS; h++) {
        mmp_model_costs(&m->angle_lo[h], lo);
        for (int l = 0; l < mmp_angle_lo_syms(h); l++)
            s->angle_cost[MMP_ANGLE_GROUP * h + l] = hi[h] + lo[l];
    }
    for (int k = 0; k < MMP_NSCALES; k++) {
        flag_costs(&m->rflag[k], k / MMP_NLOG > 0, s->rflag_cost[k]);
        mmp_imodel_costs(&m->idx[k], s->idx_cost[k]);
    }
    if (s->c->tx_qi)
        mmp_tx_costs_of(&m->tx, &s->tx_cost);
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
static void residual_emit(const mmp_search *s, const mmp_match *mt, const uint8_t *flags, int lh,
                          int lw, int a, int b, int i, int jj, int32_t *pat, int32_t *tok, int *nt)
{
    const int cols = 1 << (lw - b);
    const int n = mmp_match_offset(lh, lw, a, b) + i * cols + jj;
    const int flag = flags[n];
    tok[(*nt)++] = flag_symbol(flag, a > 0);
    if (flag == MMP_FLAG_LEAF) {
        const int sc = mmp_scale(a, b), w = 1 << lw;
        const int32_t *e = mmp_dict_elem(&s->c->dict, sc, mt[n].idx);
        tok[(*nt)++] = mt[n].idx;
        for (int y = 0; y < (1 << a); y++)
            memcpy(pat + ((i << a) + y) * w + (jj << b), e + (y << b), sizeof(int32_t) << b);
    } else if (flag == MMP_FLAG_SPLIT_H) {
        residual_emit(s, mt, flags, lh, lw, a - 1, b, 2 * i, jj, pat, tok, nt);
        residual_emit(s, mt, flags, lh, lw, a - 1, b, 2 * i + 1, jj, pat, tok, nt);
    } else {
        residual_emit(s, mt, flags, lh, lw, a, b - 1, i, 2 * jj, pat, tok, nt);
        residual_emit(s, mt, flags, lh, lw, a, b - 1, i, 2 * jj + 1, pat, tok, nt);
    }
}

/* Sum of the absolute 4 x 4 Hadamard coefficients of d (h x w, both
 * multiples of 4), each 4 x 4 sum halved with rounding. */
static int64_t satd(const int32_t *d, int h, int w)
{
    /* In 32 bits: |d| <= 65535, so a coefficient of a 4 x 4 Hadamard
     * transform is below 2^20 and a block's sum of them below 2^24. The
     * columns first, four at a time, then the rows: the same coefficients
     * as rows first. */
    int64_t total = 0;
    for (int y0 = 0; y0 < h; y0 += 4)
        for (int x0 = 0; x0 < w; x0 += 4) {
            const int32_t *r0 = d + y0 * w + x0, *r1 = r0 + w, *r2 = r1 + w, *r3 = r2 + w;
            int32_t t[4][4];
            for (int x = 0; x < 4; x++) {
                const int32_t s0 = r0[x] + r1[x], s1 = r2[x] + r3[x];
                const int32_t d0 = r0[x] - r1[x], d1 = r2[x] - r3[x];
                t[0][x] = s0 + s1;
                t[1][x] = s0 - s1;
                t[2][x] = d0 + d1;
                t[3][x] = d0 - d1;
            }
            int32_t sum = 0;
            for (int y = 0; y < 4; y++) {
                const int32_t s0 = t[y][0] + t[y][1], s1 = t[y][2] + t[y][3];
                const int32_t d0 = t[y][0] - t[y][1], d1 = t[y][2] - t[y][3];
                sum += abs(s0 + s1) + abs(s0 - s1) + abs(d0 + d1) + abs(d0 - d1);
            }
            total += (sum + 1) >> 1;
        }
    return total;
}

static int64_t residual_satd(const int32_t *orig, const int32_t *pred, const uint8_t *real, int h,
                             int w)
{
    int32_t d[MMP_B * MMP_B];
    for (int i = 0; i < h * w; i++)
        d[i] = real && !real[i] ? 0 : orig[i] - pred[i];
    return satd(d, h, w);
}

/*
 * The direction of a leaf's angular mode: the best by SATD of the residual
 * over the real pixels plus sqrt(lambda) times the direction's bits, as
 * rank_modes ranks modes (ties go to the lower direction). Only this one
 * goes on to the engine and the transform.
 */
static int pick_angle(const mmp_search *s, const int32_t *orig, const int32_t *angles,
                      const uint8_t *real, int h, int w)
{
    int64_t best_cost = INT64_MAX;
    int best = 0;
    for (int k = 0; k < MMP_NUM_ANGLES; k += s->speed.dir_step) {
        const int64_t cost = (residual_satd(orig, angles + (long)k * h * w, real, h, w) << 16) +
                             s->sqrt_lambda_q8 * s->angle_cost[k];
        if (cost < best_cost) {
            best_cost = cost;
            best = k;
        }
    }
    return best;
}

/*
 * The plane's modes ranked for a leaf, best first, into order (returns how
 * many): by SATD of the residual over the real pixels (real NULL: all) plus
 * sqrt(lambda) times the mode's bits, as video encoders rank intra modes;
 * ties go to the lower mode. The speed gives the first few to the engine
 * and the first few (as many or more) to the transform.
 */
static int rank_modes(const mmp_search *s, const int32_t *orig, const int32_t *pred,
                      const uint8_t *real, int h, int w, int ps, uint32_t angle_bits, int *order)
{
    const int area = h * w, nm = mmp_plane_modes(&s->c->plane);
    int64_t cost[MMP_NUM_MODES];
    int n = 0;
    for (int m = 0; m < nm; m++) {
        if (m == MMP_PRED_LSP && s->speed.no_lsp)
            continue;
        cost[m] = (residual_satd(orig, pred + (long)m * area, real, h, w) << 16) +
                  s->sqrt_lambda_q8 * (s->mode_cost[ps][m] +
                                       (m == MMP_PRED_ANG ? angle_bits : 0));
        /* insertion: after every mode of lower or equal cost */
        int k = n++;
        while (k > 0 && cost[order[k - 1]] > cost[m]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = m;
    }
    return n;
}

/* The first `keep` modes of a ranking, as a mask (bit m: mode m). */
static unsigned first_modes(const int *order, int n, int keep)
{
    unsigned mask = 0;
    for (int k = 0; k < keep && k < n; k++)
        mask |= 1u << order[k];
    return mask;
}

static void set_error(mmp_search *s, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&s->err, &none, err);
}

/*
 * The transform residual of the prediction of every mode in tmodes, priced
 * in the ranking's order (order[0 .. n-1]): J into jtx[m] (head[m], the
 * leaf's flag and mode bits, included; the exact J only where it may win,
 * mmp_tx_price_modes, against the others and against the dictionary's best
 * (rival_j, rival_mode) when rival_mode >= 0). Returns the first mode of
 * least cost, whose levels and residual go to x->best_level and
 * x->best_res (where it beats the rival).
 */
static int price_tx(const mmp_search *s, scratch *x, const int32_t *orig, const int32_t *pred,
                    const uint8_t *real, int a, int b, unsigned tmodes, const int *order, int n,
                    const int64_t *head, int64_t rival_j, int rival_mode, int64_t *jtx)
{
    const int64_t rtype = s->lambda * s->tx_cost.rtype[mmp_pscale(a, b)][1];
    int64_t htx[MMP_NUM_MODES];
    int tm[MMP_NUM_MODES], ntm = 0;
    for (int k = 0; k < n; k++)
        if (tmodes >> order[k] & 1) {
            tm[ntm++] = order[k];
            htx[order[k]] = head[order[k]] + rtype;
        }
    return mmp_tx_price_modes(&s->tx, orig, pred, real, a, b, tm, ntm, htx, rival_j, rival_mode,
                              x->tx_level, x->tx_res, x->best_level, x->best_res, jtx);
}

/* price_tx's arguments and result, for running it while the engine
 * matches (mmp_memo_matches' work) or after. */
typedef struct tx_job {
    const mmp_search *s;
    scratch *x;
    const int32_t *orig, *pred;
    const uint8_t *real;
    int a, b;
    unsigned tmodes;
    const int *order;
    int n;
    const int64_t *head;
    int64_t *jtx;
    int64_t rival_j;
    int rival_mode;
    int ran, best;
} tx_job;

static void tx_job_run(void *arg)
{
    tx_job *j = arg;
    j->best = price_tx(j->s, j->x, j->orig, j->pred, j->real, j->a, j->b, j->tmodes, j->order,
                       j->n, j->head, j->rival_j, j->rival_mode, j->jtx);
    j->ran = 1;
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
    scratch *x = mmp_pool_get(&s->pool);
    if (!x) {
        set_error(s, MMP_ENOMEM);
        return INT64_MAX / 4;
    }
    int32_t orig[MMP_B * MMP_B];
    uint8_t realbuf[MMP_B * MMP_B];
    const uint8_t *real = NULL;
    int32_t *pred = x->pred;
    /* A mode the preset never tries predicts zeros, which the memo's keys
     * read like the others. */
    if (s->speed.no_lsp)
        memset(pred + (long)MMP_PRED_LSP * h * w, 0, sizeof(int32_t) * h * w);
    mmp_predict_some(&v->plane, y0, x0, h, w, s->pred_modes, s->pred_dirs, pred, x->angles);
    for (int y = 0; y < h; y++)
        memcpy(orig + y * w, s->orig + (long)(y0 + y) * pw + x0, sizeof(int32_t) * w);
    if (y0 + h > c->height || x0 + w > c->width) {
        for (int y = 0; y < h; y++)
            for (int xx = 0; xx < w; xx++)
                realbuf[y * w + xx] = (y0 + y < c->height && x0 + xx < c->width);
        real = realbuf;
    }
    const int count = mmp_match_count(a, b), area = h * w, nm = mmp_plane_modes(&v->plane);
    const int angle = pick_angle(s, orig, x->angles, real, h, w);
    memcpy(pred + (long)MMP_PRED_ANG * area, x->angles + (long)angle * area,
           sizeof(int32_t) * area);
    int32_t pat[MMP_B * MMP_B], rec[MMP_B * MMP_B];
    int64_t kept;
    uint32_t key;
    /* Reached before on another path of the tree with the same predictions:
     * the same decisions (mmp_memo_leaf_get). */
    /* With square leaves only, no leaf is reached twice: no memo. */
    const int memo = !s->speed.square;
    if (memo &&
        mmp_memo_leaf_get(v->memo, y0, x0, a, b, angle, nm, pred, &key, &kept, tok, nt, rec)) {
        atomic_fetch_add_explicit(&s->leaf_hits, 1, memory_order_relaxed);
        view_store(v, y0, x0, h, w, rec);
        mmp_pool_put(&s->pool, x);
        return kept;
    }
    uint64_t hits = 0;
    const mmp_memo_engine me = {.eng = s->sched.eng, .es = s->sched.es, .tab = &s->tab};
    const int tx = c->tx_qi > 0;
    /* The modes for the engine, and those priced with the transform: the
     * first of one ranking (none needed when the engine gets them all). */
    unsigned modes = (1u << nm) - 1, tmodes = modes;
    int order[MMP_NUM_MODES], n = nm;
    /* A plane without the transform residual has the dictionary's alone:
     * the best mode at least goes to the engine. */
    const int keep = s->speed.modes > 0 || tx ? s->speed.modes : 1;
    if (keep < nm) {
        n = rank_modes(s, orig, pred, real, h, w, ps, s->angle_cost[angle], order);
        modes = first_modes(order, n, keep);
        tmodes = tx ? first_modes(order, n, s->speed.tx_modes) | modes : modes;
    } else {
        for (int m = 0; m < nm; m++)
            order[m] = m;
    }
    const uint32_t *rtype_cost = s->tx_cost.rtype[ps];
    int64_t head[MMP_NUM_MODES], jtx[MMP_NUM_MODES];
    for (int m = 0; m < nm; m++)
        if (tmodes >> m & 1)
            head[m] = s->lambda * (s->pflag_cost[ps][MMP_FLAG_LEAF] + s->mode_cost[ps][m] +
                                   (m == MMP_PRED_ANG ? s->angle_cost[angle] : 0));
    tx_job job = {.s = s, .x = x, .orig = orig, .pred = pred, .real = real, .a = a, .b = b,
                  .tmodes = tmodes, .order = order, .n = n, .head = head, .jtx = jtx,
                  .rival_mode = -1, .best = -1};
    /* The transform is priced first where its result decides the engine's
     * work (tx_skip), else while the engine matches (an engine called in
     * two halves) or after it, under the best tree's bound (below). */
    const int tx_first = tx && (s->speed.tx_skip || !modes);
    if (tx_first)
        tx_job_run(&job);
    /* Where the transform's best levels are all zero the prediction alone
     * is good enough: no dictionary search at the speeds that say so. */
    if (s->speed.tx_skip && job.best >= 0) {
        int coded = 0;
        for (int i = 0; i < area && !coded; i++)
            coded = x->best_level[i] != 0;
        if (!coded)
            modes = 0;
    }
    if (modes) {
        const int err = mmp_memo_matches(v->memo, &me, y0, x0, a, b, modes, orig, pred, real,
                                         &x->memo, x->matches, &hits,
                                         tx && !tx_first ? tx_job_run : NULL, &job);
        if (err) {
            set_error(s, err);
            mmp_pool_put(&s->pool, x);
            return INT64_MAX / 4;
        }
    }
    uint64_t nmodes = 0;
    for (unsigned m = modes; m; m &= m - 1)
        nmodes++;
    atomic_fetch_add_explicit(&s->evals, nmodes, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->hits, hits, memory_order_relaxed);
    dp_tables *dp = &x->dp;
    int64_t best = INT64_MAX;
    int best_mode = -1, best_tx = 0;
    /* Every option in mode order, the tree before the transform: of equal
     * costs the first. First the trees' first of least cost. */
    for (int m = 0; m < nm; m++) {
        if ((modes >> m & 1)) {
            const int64_t jv = residual_dp(s, x->matches + (long)m * count, a, b, dp) + head[m] +
                               (tx ? s->lambda * rtype_cost[0] : 0);
            if (jv < best) {
                best = jv;
                best_mode = m;
                memcpy(dp->best_flag, dp->flag, (size_t)count);
            }
        }
    }
    /* The transforms, unless priced while the engine matched: under the
     * best tree's bound, which spares most of the work. A transform that
     * wins is the first of least cost, job.best, whose levels are kept; it
     * comes before the tree of a later mode. */
    if (tx && !job.ran) {
        job.rival_j = best;
        job.rival_mode = best_mode;
        tx_job_run(&job);
    }
    if (job.best >= 0 && (best_mode < 0 || jtx[job.best] < best ||
                          (jtx[job.best] == best && job.best < best_mode))) {
        best = jtx[job.best];
        best_mode = job.best;
        best_tx = 1;
    }
    if (best_mode < 0)
        best_mode = 0; /* no option: an engine error, or no mode */
    const mmp_match *mt = x->matches + (long)best_mode * count;
    *nt = 0;
    tok[(*nt)++] = flag_symbol(MMP_FLAG_LEAF, a > MMP_LOG2_PMIN);
    tok[(*nt)++] = best_mode;
    if (best_mode == MMP_PRED_ANG) {
        tok[(*nt)++] = angle / MMP_ANGLE_GROUP;
        tok[(*nt)++] = angle % MMP_ANGLE_GROUP;
    }
    if (tx)
        tok[(*nt)++] = best_tx;
    if (best_tx) {
        memcpy(tok + *nt, x->best_level, sizeof(int32_t) * area);
        *nt += area;
        memcpy(pat, x->best_res, sizeof(int32_t) * area);
    } else {
        residual_emit(s, mt, dp->best_flag, a, b, a, b, 0, 0, pat, tok, nt);
    }
    mmp_reconstruct(pred + (long)best_mode * area, pat, area, c->maxval, rec);
    view_store(v, y0, x0, h, w, rec);
    if (memo && !atomic_load_explicit(&s->err, memory_order_relaxed))
        mmp_memo_leaf_put(v->memo, y0, x0, a, b, angle, nm, pred, key, best, tok, *nt, rec);
    mmp_pool_put(&s->pool, x);
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

/* What the options of one node share with the scheduler's callbacks. */
typedef struct node {
    mmp_search *s;
    view *v;
    int y0, x0, a, b;
    int32_t *tok;
    int *nt;
    int64_t leaf;
    split sp[3];
    rivals r;
} node;

static void node_leaf(void *ctx)
{
    node *n = ctx;
    n->leaf = search_leaf(n->s, n->v, n->y0, n->x0, n->a, n->b, n->tok, n->nt);
    atomic_store_explicit(&n->r.j[MMP_FLAG_LEAF], n->leaf, memory_order_relaxed);
}

static void node_split(void *ctx, int flag)
{
    node *n = ctx;
    search_split(n->s, &n->sp[flag], &n->r, flag, n->y0, n->x0, n->a, n->b);
}

/*
 * With square leaves only (mmp_search_speed.square): an oblong node
 * (y0, x0, 2^a x 2^b) is no leaf; it splits across its long side into two
 * squares, each searched in v in turn. Its cost and tokens, as search_pred.
 */
static int64_t search_halves(mmp_search *s, view *v, int y0, int x0, int a, int b, int32_t *tok,
                             int *nt)
{
    const int f = a > b ? MMP_FLAG_SPLIT_H : MMP_FLAG_SPLIT_V;
    const int ca = f == MMP_FLAG_SPLIT_H ? a - 1 : a, cb = f == MMP_FLAG_SPLIT_H ? b : b - 1;
    const int y1 = f == MMP_FLAG_SPLIT_H ? y0 + (1 << a) / 2 : y0;
    const int x1 = f == MMP_FLAG_SPLIT_H ? x0 : x0 + (1 << b) / 2;
    int n = 0, n1 = 0, n2 = 0;
    tok[n++] = flag_symbol(f, a > MMP_LOG2_PMIN);
    int64_t j = cost_add(s->lambda * s->pflag_cost[mmp_pscale(a, b)][f],
                         search_pred(s, v, y0, x0, ca, cb, tok + n, &n1));
    n += n1;
    j = cost_add(j, search_pred(s, v, y1, x1, ca, cb, tok + n, &n2));
    *nt = n + n2;
    return j;
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
    /* With no_narrow, no split makes a half more than twice as long as wide
     * or high. */
    const int nn = s->speed.no_narrow, ml = s->speed.min_log2;
    int can[3] = {0, a > ml && (!nn || a > b - 1), b > ml && (!nn || b > a - 1)};
    if (!can[MMP_FLAG_SPLIT_H] && !can[MMP_FLAG_SPLIT_V])
        return search_leaf(s, v, y0, x0, a, b, tok, nt);
    if (s->speed.square && a != b)
        return search_halves(s, v, y0, x0, a, b, tok, nt);
    if (s->speed.square)
        can[MMP_FLAG_SPLIT_V] = 0;
    /* Field by field: an initializer would clear the splits' views and
     * tokens (16 KB), which are all written before they are read. */
    node n;
    n.s = s;
    n.v = v;
    n.y0 = y0;
    n.x0 = x0;
    n.a = a;
    n.b = b;
    n.tok = tok;
    n.nt = nt;
    n.leaf = INT64_MAX;
    for (int f = 0; f < 3; f++)
        atomic_init(&n.r.j[f], INT64_MAX);
    for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++) {
        n.sp[f].j = INT64_MAX;
        if (can[f])
            view_copy(&n.sp[f].v, v);
    }
    const mmp_options o = {.leaf = node_leaf,
                           .split = node_split,
                           .ctx = &n,
                           .can_h = can[MMP_FLAG_SPLIT_H],
                           .can_v = can[MMP_FLAG_SPLIT_V],
                           .area = h * w};
    mmp_sched_options(&s->sched, &o);
    int64_t best = n.leaf;
    int win = MMP_FLAG_LEAF;
    for (int f = MMP_FLAG_SPLIT_H; f <= MMP_FLAG_SPLIT_V; f++)
        if (can[f] && n.sp[f].j < best) {
            best = n.sp[f].j;
            win = f;
        }
    if (win != MMP_FLAG_LEAF) {
        memcpy(tok, n.sp[win].tok, sizeof(int32_t) * n.sp[win].ntok);
        *nt = n.sp[win].ntok;
        view_take(v, &n.sp[win].v, y0, x0, h, w);
    }
    return best;
}

/* The search of one step: its blocks, taken in order by the workers. */
typedef struct step_job {
    mmp_search *s;
    const int32_t *blocks;
    int n, bw;
    int32_t *tok;
    int *ntok;
    _Atomic int next;
} step_job;

static void step_worker(void *arg, int w)
{
    step_job *j = arg;
    mmp_search *s = j->s;
    mmp_codec *c = s->c;
    view root;
    for (int k; (k = atomic_fetch_add(&j->next, 1)) < j->n;) {
        const int y0 = j->blocks[k] / j->bw * MMP_B, x0 = j->blocks[k] % j->bw * MMP_B;
        mmp_memo_clear(s->memo[w]);
        view_init(&root, &c->plane, s->memo[w], y0, x0);
        search_pred(s, &root, y0, x0, MMP_LOG2B, MMP_LOG2B, j->tok + (long)k * MMP_MAX_BLOCK_TOKENS,
                    &j->ntok[k]);
        /* The chosen reconstruction into the codec's plane. No block of the
         * step reads another's pixels (docs/format.md 4.3). */
        for (int y = 0; y < MMP_B; y++) {
            memcpy(c->plane.pix + (long)(y0 + y) * c->plane.width + x0, root.pix + y * MMP_B,
                   sizeof(int32_t) * MMP_B);
            memset(c->plane.avail + (long)(y0 + y) * c->plane.width + x0, 1, MMP_B);
        }
    }
}

int mmp_search_step(mmp_search *s, int step, const int32_t *blocks, int n, int32_t *tok,
                    int *ntok)
{
    mmp_codec *c = s->c;
    snapshot_rates(s);
    s->tab.step = step;
    int err = s->sched.eng->begin_step(s->sched.es, &s->tab);
    if (err)
        return err;
    step_job job = {.s = s, .blocks = blocks, .n = n, .bw = c->plane.width / MMP_B, .tok = tok,
                    .ntok = ntok};
    atomic_init(&job.next, 0);
    mmp_sched_step(&s->sched, n < s->nworkers ? n : s->nworkers, step_worker, &job);
    return atomic_load(&s->err);
}
