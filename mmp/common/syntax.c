/* The block syntax shared by the encoder and the decoder (docs/format.md). */
#include "mmp/common/syntax.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

int mmp_codec_init(mmp_codec *c, int width, int height, int maxval, int dict_cap,
                   uint32_t redund_q4, int step_blocks)
{
    memset(c, 0, sizeof(*c));
    int pw = (width + MMP_B - 1) / MMP_B * MMP_B, ph = (height + MMP_B - 1) / MMP_B * MMP_B;
    c->width = width;
    c->height = height;
    c->maxval = maxval;
    mmp_tx_scans_init(&c->tx_scans);
    int err = mmp_dict_init(&c->dict, dict_cap, maxval, redund_q4);
    if (err)
        return err;
    c->plane.width = pw;
    c->plane.height = ph;
    c->plane.maxval = maxval;
    c->plane.pix = calloc((size_t)pw * ph, sizeof(int32_t));
    c->plane.avail = calloc((size_t)pw * ph, 1);
    if (step_blocks < 1)
        step_blocks = 1;
    c->upd_cap = step_blocks * MMP_MAX_UPDATES;
    c->upd_room = (long)step_blocks * MMP_MAX_UPDATE_SAMPLES;
    c->upd = malloc((size_t)c->upd_room * sizeof(int32_t));
    c->upd_off = malloc((size_t)c->upd_cap * sizeof(int));
    c->upd_a = malloc((size_t)c->upd_cap);
    c->upd_b = malloc((size_t)c->upd_cap);
    c->upd_repeat = malloc((size_t)c->upd_cap);
    if (!c->plane.pix || !c->plane.avail || !c->upd || !c->upd_off || !c->upd_a || !c->upd_b ||
        !c->upd_repeat) {
        mmp_codec_free(c);
        return MMP_ENOMEM;
    }
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            int ps = mmp_pscale(a, b);
            mmp_model_init(&c->models.pflag[ps], mmp_flag_nsyms(a - MMP_LOG2_PMIN, b - MMP_LOG2_PMIN, 0));
            mmp_model_init(&c->models.mode[ps], mmp_plane_modes(&c->plane));
        }
    mmp_model_init(&c->models.angle_hi, MMP_ANGLE_HI_SYMS);
    for (int hi = 0; hi < MMP_ANGLE_HI_SYMS; hi++)
        mmp_model_init(&c->models.angle_lo[hi], mmp_angle_lo_syms(hi));
    for (int s = 0; s < MMP_NSCALES; s++) {
        int a = s / MMP_NLOG, b = s % MMP_NLOG;
        mmp_model_init(&c->models.rflag[s], mmp_flag_nsyms(a, b, 0));
        if (mmp_imodel_init(&c->models.idx[s], dict_cap, c->dict.n[s])) {
            mmp_codec_free(c);
            return MMP_ENOMEM;
        }
    }
    return 0;
}

void mmp_codec_set_cfl(mmp_codec *c, const int32_t *luma_ref)
{
    c->plane.cfl = luma_ref;
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++)
            mmp_model_init(&c->models.mode[mmp_pscale(a, b)], mmp_plane_modes(&c->plane));
}

void mmp_codec_set_transform(mmp_codec *c, int qi)
{
    c->tx_qi = qi;
    c->tx_step_q4 = qi > 0 ? mmp_tx_step_q4(qi) : 0;
    mmp_tx_models_init(&c->models.tx);
}

int mmp_codec_set_deblock(mmp_codec *c)
{
    return mmp_edges_init(&c->edges, c->plane.width, c->plane.height);
}

void mmp_codec_free(mmp_codec *c)
{
    mmp_dict_free(&c->dict);
    mmp_edges_free(&c->edges);
    for (int s = 0; s < MMP_NSCALES; s++)
        mmp_imodel_free(&c->models.idx[s]);
    free(c->plane.pix);
    free(c->plane.avail);
    free(c->upd);
    free(c->upd_off);
    free(c->upd_a);
    free(c->upd_b);
    free(c->upd_repeat);
    free(c->log.samples);
    free(c->log.off);
    free(c->log.a);
    free(c->log.b);
    free(c->log.step_end);
    memset(c, 0, sizeof(*c));
}

/* One symbol of a small model: from the token list or from the decoder. */
static int sym(mmp_symbols *io, mmp_model *m, int *err)
{
    if (m->nsyms == 1) {
        if (io->encoding)
            io->pos++;
        return 0;
    }
    if (!io->encoding)
        return mmp_model_decode(io->dec, m);
    if (io->pos >= io->ntok || io->tok[io->pos] < 0 || io->tok[io->pos] >= m->nsyms) {
        *err = MMP_EINVAL;
        return 0;
    }
    int v = io->tok[io->pos++];
    mmp_model_encode(io->enc, m, v);
    return v;
}

static int isym(mmp_symbols *io, mmp_imodel *m, int *err)
{
    if (!io->encoding)
        return mmp_imodel_decode(io->dec, m);
    if (io->pos >= io->ntok || io->tok[io->pos] < 0 || io->tok[io->pos] >= m->n) {
        *err = MMP_EINVAL;
        return 0;
    }
    int v = io->tok[io->pos++];
    mmp_imodel_encode(io->enc, m, v);
    return v;
}

/* Canonical flag of a coded flag symbol. */
static int flag_of_symbol(int v, int split_h_allowed)
{
    if (v == 0)
        return MMP_FLAG_LEAF;
    if (v == 1 && split_h_allowed)
        return MMP_FLAG_SPLIT_H;
    return MMP_FLAG_SPLIT_V;
}

/* Queue the 2^a x 2^b pattern at res (row stride MMP_B) as a new pattern of
 * the step. */
static void queue_pattern(mmp_codec *c, const int32_t *res, int a, int b, int *err)
{
    /* The room is sized by the bounds on a block's patterns, times the
     * blocks of a step: this cannot fail for a valid caller. */
    if (c->nupd >= c->upd_cap || c->upd_len + (1L << (a + b)) > c->upd_room) {
        *err = MMP_EINVAL;
        return;
    }
    int32_t *u = c->upd + c->upd_len;
    for (int y = 0; y < (1 << a); y++)
        memcpy(u + (y << b), res + y * MMP_B, sizeof(int32_t) << b);
    c->upd_off[c->nupd] = (int)c->upd_len;
    c->upd_a[c->nupd] = (uint8_t)a;
    c->upd_b[c->nupd] = (uint8_t)b;
    c->nupd++;
    c->upd_len += 1L << (a + b);
}

/* Scale s given the logged steps it has not had, each followed by its index
 * model's growth, as mmp_apply_updates would have at each step's end. */
static void catch_up(mmp_codec *c, int s)
{
    mmp_update_log *g = &c->log;
    for (int k = g->done[s]; k < g->nsteps; k++) {
        for (int i = k ? g->step_end[k - 1] : 0; i < g->step_end[k] && c->dict.n[s] < c->dict.cap;
             i++)
            mmp_dict_update_scale(&c->dict, g->samples + g->off[i], g->a[i], g->b[i], s);
        mmp_imodel_grow(&c->models.idx[s], c->dict.n[s]);
    }
    g->done[s] = g->nsteps;
}

/* The coding leaf 2^a x 2^b at (y, x) of the block into its edge map:
 * every unit it covers gets its size if that is smaller, and its left
 * and top edges, where they lie on the units' grid, are boundaries. */
static void mark_leaf(mmp_block *blk, int y, int x, int a, int b)
{
    const int u0 = y >> MMP_DB_LOG2_UNIT, u1 = (y + (1 << a) - 1) >> MMP_DB_LOG2_UNIT;
    const int v0 = x >> MMP_DB_LOG2_UNIT, v1 = (x + (1 << b) - 1) >> MMP_DB_LOG2_UNIT;
    const int left = (x & ((1 << MMP_DB_LOG2_UNIT) - 1)) == 0;
    const int top = (y & ((1 << MMP_DB_LOG2_UNIT) - 1)) == 0;
    for (int uy = u0; uy <= u1; uy++)
        for (int ux = v0; ux <= v1; ux++) {
            uint8_t *sz = &blk->edge_size[uy * MMP_B_UNITS + ux];
            const int lw = (*sz & 15) < b ? (*sz & 15) : b, lh = (*sz >> 4) < a ? (*sz >> 4) : a;
            *sz = (uint8_t)(lw | lh << 4);
            blk->edge_flags[uy * MMP_B_UNITS + ux] |=
                (uint8_t)((left && ux == v0 ? MMP_DB_LEFT : 0) | (top && uy == u0 ? MMP_DB_TOP : 0));
        }
}

/*
 * Residual node 2^a x 2^b at (ry, rx) of the block's residual (row stride
 * MMP_B), in the prediction leaf at (y0, x0) of blk: fills it and queues the concatenation of split nodes, children
 * first (post-order).
 */
static void code_residual(mmp_codec *c, mmp_symbols *io, mmp_block *blk, int y0, int x0,
                          int32_t *res, int ry, int rx, int a, int b, int *err)
{
    int s = mmp_scale(a, b);
    int v = sym(io, &c->models.rflag[s], err);
    if (*err)
        return;
    int flag = flag_of_symbol(v, a > 0);
    if (flag == MMP_FLAG_LEAF) {
        if (c->defer)
            catch_up(c, s);
        int k = isym(io, &c->models.idx[s], err);
        if (*err)
            return;
        const int32_t *e = mmp_dict_elem(&c->dict, s, k);
        for (int y = 0; y < (1 << a); y++)
            memcpy(res + (ry + y) * MMP_B + rx, e + (y << b), sizeof(int32_t) << b);
        mark_leaf(blk, y0 + ry, x0 + rx, a, b);
        return;
    }
    if (flag == MMP_FLAG_SPLIT_H) {
        code_residual(c, io, blk, y0, x0, res, ry, rx, a - 1, b, err);
        code_residual(c, io, blk, y0, x0, res, ry + (1 << (a - 1)), rx, a - 1, b, err);
    } else {
        code_residual(c, io, blk, y0, x0, res, ry, rx, a, b - 1, err);
        code_residual(c, io, blk, y0, x0, res, ry, rx + (1 << (b - 1)), a, b - 1, err);
    }
    if (!*err)
        queue_pattern(c, res + ry * MMP_B + rx, a, b, err);
}

/*
 * The transform residual of a 2^a x 2^b leaf into res (row stride MMP_B):
 * the levels from the tokens (row-major) or the decoder, then the inverse
 * transform. It creates no new pattern: offering it to the dictionary
 * gained 0.3 % for twice the encoding time
 * (docs/tuning.md, "Transform residual").
 */
static void code_transform(mmp_codec *c, mmp_symbols *io, int32_t *res, int a, int b, int *err)
{
    const int area = 1 << (a + b);
    int32_t level[MMP_B * MMP_B];
    if (io->encoding) {
        if (io->pos > io->ntok - area) {
            *err = MMP_EINVAL;
            return;
        }
        for (int i = 0; i < area; i++) {
            const int32_t v = io->tok[io->pos + i];
            if (v < -MMP_TX_MAX_LEVEL || v > MMP_TX_MAX_LEVEL) {
                *err = MMP_EINVAL;
                return;
            }
            level[i] = v;
        }
        io->pos += area;
        mmp_tx_code_levels(&c->models.tx, io->enc, NULL, NULL, level, a, b,
                           mmp_tx_scan_of(&c->tx_scans, a, b));
    } else {
        mmp_tx_code_levels(&c->models.tx, NULL, io->dec, NULL, level, a, b,
                           mmp_tx_scan_of(&c->tx_scans, a, b));
    }
    mmp_tx_inverse(level, a, b, c->tx_step_q4, c->maxval, res, MMP_B);
}

/* The direction of an angular leaf (docs/format.md 4.2). */
static int code_angle(mmp_codec *c, mmp_symbols *io, int *err)
{
    const int hi = sym(io, &c->models.angle_hi, err);
    if (*err)
        return 0;
    return MMP_ANGLE_GROUP * hi + sym(io, &c->models.angle_lo[hi], err);
}

static void code_prediction(mmp_codec *c, mmp_symbols *io, mmp_block *blk, int y0, int x0, int a,
                            int b, int *err)
{
    int ps = mmp_pscale(a, b);
    int v = sym(io, &c->models.pflag[ps], err);
    if (*err)
        return;
    int flag = flag_of_symbol(v, a > MMP_LOG2_PMIN);
    if (flag == MMP_FLAG_SPLIT_H) {
        code_prediction(c, io, blk, y0, x0, a - 1, b, err);
        if (!*err)
            code_prediction(c, io, blk, y0 + (1 << (a - 1)), x0, a - 1, b, err);
        return;
    }
    if (flag == MMP_FLAG_SPLIT_V) {
        code_prediction(c, io, blk, y0, x0, a, b - 1, err);
        if (!*err)
            code_prediction(c, io, blk, y0, x0 + (1 << (b - 1)), a, b - 1, err);
        return;
    }
    int mode = sym(io, &c->models.mode[ps], err);
    if (*err)
        return;
    const int angle = mode == MMP_PRED_ANG ? code_angle(c, io, err) : 0;
    if (*err)
        return;
    const int rtype = c->tx_qi ? sym(io, &c->models.tx.rtype[ps], err) : 0;
    if (*err)
        return;
    blk->leaf[blk->nleaves++] =
        (mmp_leaf){.y = (uint8_t)y0, .x = (uint8_t)x0, .a = (uint8_t)a, .b = (uint8_t)b,
                   .mode = (uint8_t)mode, .angle = (uint8_t)angle};
    if (rtype) {
        code_transform(c, io, blk->res + y0 * MMP_B + x0, a, b, err);
        mark_leaf(blk, y0, x0, a, b);
    } else {
        code_residual(c, io, blk, y0, x0, blk->res + y0 * MMP_B + x0, 0, 0, a, b, err);
    }
}

int mmp_code_block(mmp_codec *c, mmp_symbols *io, mmp_block *blk)
{
    int err = 0;
    blk->nleaves = 0;
    memset(blk->edge_flags, 0, sizeof blk->edge_flags);
    memset(blk->edge_size, MMP_LOG2B | MMP_LOG2B << 4, sizeof blk->edge_size);
    code_prediction(c, io, blk, 0, 0, MMP_LOG2B, MMP_LOG2B, &err);
    if (!err && io->encoding && io->pos != io->ntok)
        err = MMP_EINVAL;
    return err;
}

void mmp_reconstruct_block(mmp_codec *c, int by, int bx, const mmp_block *blk)
{
    const int pw = c->plane.width;
    for (int i = 0; i < blk->nleaves; i++) {
        const mmp_leaf *l = &blk->leaf[i];
        const int h = 1 << l->a, w = 1 << l->b;
        const int y0 = by * MMP_B + l->y, x0 = bx * MMP_B + l->x;
        int32_t pred[MMP_B * MMP_B];
        if (l->mode == MMP_PRED_ANG)
            mmp_predict_angle(&c->plane, l->angle, y0, x0, h, w, pred);
        else
            mmp_predict(&c->plane, l->mode, y0, x0, h, w, pred);
        for (int y = 0; y < h; y++) {
            mmp_reconstruct(pred + y * w, blk->res + (l->y + y) * MMP_B + l->x, w, c->maxval,
                            c->plane.pix + (long)(y0 + y) * pw + x0);
            memset(c->plane.avail + (long)(y0 + y) * pw + x0, 1, (size_t)w);
        }
    }
    if (c->edges.flags)
        for (int uy = 0; uy < MMP_B_UNITS; uy++) {
            const long u = (long)(by * MMP_B_UNITS + uy) * c->edges.uw + bx * MMP_B_UNITS;
            memcpy(c->edges.flags + u, blk->edge_flags + uy * MMP_B_UNITS, MMP_B_UNITS);
            memcpy(c->edges.size + u, blk->edge_size + uy * MMP_B_UNITS, MMP_B_UNITS);
        }
}

static int width_has_room(const mmp_dict *d, int db)
{
    for (int da = 0; da < MMP_NLOG; da++)
        if (d->n[mmp_scale(da, db)] < d->cap)
            return 1;
    return 0;
}

/* mmp_apply_updates looks for repeats while the scales with room hold more
 * samples than this. */
#define REPEAT_MIN_ROOM 4

void mmp_updates_begin(mmp_codec *c)
{
    /* An exact repeat of a pattern offered before (in an earlier step, or
     * earlier in this one, hence at every scale before it) changes no
     * scale: it is redundant wherever there is room. Decided here, in list
     * order, so that the scales can then go their own ways. */
    int room = 0; /* samples of the scales that are not full */
    for (int s = 0; s < MMP_NSCALES; s++)
        room += c->dict.n[s] < c->dict.cap ? mmp_scale_area(s) : 0;
    /* Once only the smallest scales have room (it never grows back), an
     * offer costs less than the look-up. */
    const int look = room > REPEAT_MIN_ROOM;
    for (int i = 0; i < c->nupd; i++)
        c->upd_repeat[i] = (uint8_t)(look && mmp_dict_repeat(&c->dict, c->upd + c->upd_off[i],
                                                             c->upd_a[i], c->upd_b[i]));
}

void mmp_updates_job(void *codec, int j)
{
    mmp_codec *c = codec;
    const int db = MMP_LOG2B - j;
    for (int i = 0; i < c->nupd && width_has_room(&c->dict, db); i++)
        if (!c->upd_repeat[i])
            mmp_dict_update_width(&c->dict, c->upd + c->upd_off[i], c->upd_a[i], c->upd_b[i],
                                  db);
}

void mmp_updates_end(mmp_codec *c)
{
    c->nupd = 0;
    c->upd_len = 0;
    for (int s = 0; s < MMP_NSCALES; s++)
        mmp_imodel_grow(&c->models.idx[s], c->dict.n[s]);
}

/* The log's bounds: its samples (4 bytes each), its patterns. */
#define LOG_MAX_SAMPLES (1L << 20)
#define LOG_MAX_PATTERNS (1 << 17)

/* Room in the log for n more patterns of len samples and a step: 0, or
 * -1 past its bounds or out of memory. */
static int log_reserve(mmp_update_log *g, int n, long len)
{
    if (g->n + n > LOG_MAX_PATTERNS || g->len + len > LOG_MAX_SAMPLES)
        return -1;
    if (g->len + len > g->room) {
        long room = g->room ? g->room : 1L << 14;
        while (room < g->len + len)
            room *= 2;
        int32_t *p = realloc(g->samples, sizeof *p * (size_t)room);
        if (!p)
            return -1;
        g->samples = p;
        g->room = room;
    }
    if (g->n + n > g->cap) {
        int cap = g->cap ? g->cap : 1 << 10;
        while (cap < g->n + n)
            cap *= 2;
        int *off = realloc(g->off, sizeof *off * (size_t)cap);
        if (off)
            g->off = off;
        uint8_t *a = off ? realloc(g->a, (size_t)cap) : NULL;
        if (a)
            g->a = a;
        uint8_t *b = a ? realloc(g->b, (size_t)cap) : NULL;
        if (!b)
            return -1;
        g->b = b;
        g->cap = cap;
    }
    if (g->nsteps == g->step_cap) {
        const int cap = g->step_cap ? 2 * g->step_cap : 1 << 10;
        int *e = realloc(g->step_end, sizeof *e * (size_t)cap);
        if (!e)
            return -1;
        g->step_end = e;
        g->step_cap = cap;
    }
    return 0;
}

/* The step's patterns (repeats marked) into the log: 1, or 0 when they do
 * not fit even into an empty log, every scale then having caught up. */
static int log_step(mmp_codec *c)
{
    mmp_update_log *g = &c->log;
    int n = 0;
    long len = 0;
    for (int i = 0; i < c->nupd; i++)
        if (!c->upd_repeat[i]) {
            n++;
            len += 1L << (c->upd_a[i] + c->upd_b[i]);
        }
    if (log_reserve(g, n, len)) {
        for (int s = 0; s < MMP_NSCALES; s++)
            catch_up(c, s);
        g->n = g->nsteps = 0;
        g->len = 0;
        memset(g->done, 0, sizeof g->done);
        if (log_reserve(g, n, len))
            return 0;
    }
    for (int i = 0; i < c->nupd; i++) {
        if (c->upd_repeat[i])
            continue;
        const long area = 1L << (c->upd_a[i] + c->upd_b[i]);
        memcpy(g->samples + g->len, c->upd + c->upd_off[i], sizeof(int32_t) * (size_t)area);
        g->off[g->n] = (int)g->len;
        g->a[g->n] = c->upd_a[i];
        g->b[g->n] = c->upd_b[i];
        g->n++;
        g->len += area;
    }
    g->step_end[g->nsteps++] = g->n;
    return 1;
}

void mmp_codec_defer(mmp_codec *c)
{
    c->defer = 1;
}

void mmp_apply_updates(mmp_codec *c)
{
    mmp_updates_begin(c);
    if (c->defer && log_step(c)) {
        c->nupd = 0;
        c->upd_len = 0;
        return;
    }
    /* Scale by scale, each taking the step's patterns in order: the same
     * dictionary as pattern by pattern (mmp_dict_update_scale), and the
     * scales can go to different threads. The five scales of one width go
     * together (mmp_dict_update_width), as they share the resampling of a
     * pattern's rows. Work grows with the width, so the widest go first:
     * handed out last they would leave the other threads idle. This
     * thread takes them in that order; the decoder hands them to its crews
     * (mmp_updates_job). */
    for (int j = 0; j < MMP_NLOG; j++)
        mmp_updates_job(c, j);
    mmp_updates_end(c);
}
