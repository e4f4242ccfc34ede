/*
 * The decoder driver: header validation, then plane by plane (section 7)
 * and step by step in the coding order the symbols of the step's blocks, their reconstruction (in parallel
 * for large steps: no block of a step reads another's pixels) and the step's
 * dictionary updates.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/crew.h"
#include "common/cores.h"
#include "common/error.h"
#include "common/timing.h"
#include "common/wait.h"
#include "filter/deblock.h"
#include "filter/restore.h"
#include "mmp/common/alpha.h"
#include "mmp/common/colour.h"
#include "mmp/dec/decoder.h"
#include "mmp/mmp.h"
#include "mmp/common/order.h"
#include "mmp/common/refine.h"
#include "mmp/common/syntax.h"

_Static_assert(MMP_MAX_FILE_BYTES >= MMP_MAX_CHUNK,
               "mmp.h's file size limit is the container's");

/*
 * Threads, all of them the decoder's own (pthreads; the decoder uses no
 * OpenMP, so that libmmpdec needs no OpenMP runtime): decoder_threads() of
 * them, OMP_NUM_THREADS's count where it is set (as when they were
 * OpenMP's), else the cores of the process's affinity mask.
 *
 * A file of several tiles decodes them on a crew (common/crew.h) of up to
 * one thread a tile, each tile on one thread. A tile, or a file of one,
 * decodes plane by plane. A plane whose steps all have fewer than
 * PARALLEL_MIN_BLOCKS blocks (512 x 512: at most 16 a step) gets a crew of
 * up to CREW_HELPERS helper threads, one fewer than the threads: each
 * step's dictionary updates, the scales of one width a job (about two
 * thirds of the decoding of such planes), are posted to it and taken while
 * the decoding thread reconstructs the step, and the restoration filter
 * runs in bands on it. A parallel region per step would wait at its end for
 * threads that are not running, longer than the step's work on a busy
 * machine (ten to fifty times as long), and OpenMP's tasks, whose waits
 * sleep, gained nothing (docs/tuning.md, "Decoder threads"). A plane with
 * larger steps gets a crew of all the threads (one fewer helpers): it
 * reconstructs the blocks of those steps (a job a block, handed out as
 * they finish) and then applies their updates, and it takes the updates of
 * the plane's small steps as above, and the filter's bands. Planes of
 * fewer than CREW_MIN_BLOCKS blocks decode on one thread: a helper's start
 * and stop would cost more than it saves.
 */
#define PARALLEL_MIN_BLOCKS 32
#define CREW_HELPERS 4
#define CREW_MIN_BLOCKS 64
#define MAX_THREADS (MMP_CREW_MAX_HELPERS + 1)
/* Bands of the restoration filter per thread: a few, so that threads that
 * get their cores late still find work. */
#define BANDS_PER_THREAD 4

/* The threads a decode may use (see above), 1 to MAX_THREADS. */
static int decoder_threads(void)
{
    const int env = mmp_env_threads();
    const int n = env > 0 ? env : mmp_usable_cores();
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
}

/* Block b's samples set to v (v >= 0) and marked available, or (v < 0)
 * marked unavailable. */
static void fill_block(mmp_codec *c, int b, int bw, int v)
{
    const int y0 = b / bw * MMP_B, x0 = b % bw * MMP_B;
    for (int y = 0; y < MMP_B; y++) {
        const long row = (long)(y0 + y) * c->plane.width + x0;
        for (int x = 0; x < MMP_B && v >= 0; x++)
            c->plane.pix[row + x] = v;
        memset(c->plane.avail + row, v >= 0, MMP_B);
    }
}

/* The test hook (mmp/dec/decoder.h): every block of the step poisoned, then
 * each made unavailable just before its own reconstruction, in the order
 * asked for. */
static void reconstruct_checked(mmp_codec *c, const int32_t *blocks, int n, int bw,
                                const mmp_block *blk, const mmp_decode_check *chk)
{
    for (int k = 0; k < n && chk->poison >= 0; k++)
        fill_block(c, blocks[k], bw, chk->poison);
    for (int i = 0; i < n; i++) {
        const int k = chk->reverse ? n - 1 - i : i;
        if (chk->poison >= 0)
            fill_block(c, blocks[k], bw, -1);
        mmp_reconstruct_block(c, blocks[k] / bw, blocks[k] % bw, &blk[k]);
    }
}

/* The blocks of a large step, a crew's jobs. */
typedef struct step_blocks {
    mmp_codec *c;
    const int32_t *blocks;
    const mmp_block *blk;
    int bw;
} step_blocks;

static void reconstruct_job(void *arg, int k)
{
    const step_blocks *s = arg;
    mmp_reconstruct_block(s->c, s->blocks[k] / s->bw, s->blocks[k] % s->bw, &s->blk[k]);
}

/* The payload's steps; crew: the plane's helpers, or NULL. */
static int decode_payload(mmp_codec *c, const mmp_order *o, mmp_block *blk, mmp_rc_dec *rc,
                          const mmp_decode_check *chk, mmp_crew *crew)
{
    const int bw = c->plane.width / MMP_B;
    const int pmin = chk && chk->parallel_min > 0 ? chk->parallel_min : PARALLEL_MIN_BLOCKS;
    for (int t = 0; t < o->nsteps; t++) {
        const int32_t *blocks = o->block + o->first[t];
        const int n = o->first[t + 1] - o->first[t];
        for (int k = 0; k < n; k++) {
            mmp_symbols io = {.encoding = 0, .dec = rc};
            const int err = mmp_code_block(c, &io, &blk[k]);
            if (err)
                return err;
            if (rc->overrun)
                return MMP_EBITSTREAM;
        }
        /* The updates read the queued patterns and change the dictionary;
         * the reconstruction reads the residuals in blk and changes the
         * plane: they may run at once. A small step's updates go to the
         * crew while this thread reconstructs; a large step's blocks go to
         * the crew, then its updates. */
        const int large = crew && n >= pmin;
        if (crew) {
            mmp_updates_begin(c);
            if (!large)
                mmp_crew_post(crew, mmp_updates_job, c, MMP_NLOG);
        }
        if (chk && (chk->poison >= 0 || chk->reverse)) {
            reconstruct_checked(c, blocks, n, bw, blk, chk);
        } else if (large) {
            step_blocks sb = {.c = c, .blocks = blocks, .blk = blk, .bw = bw};
            mmp_crew_run(crew, reconstruct_job, &sb, n);
        } else {
            for (int k = 0; k < n; k++)
                mmp_reconstruct_block(c, blocks[k] / bw, blocks[k] % bw, &blk[k]);
        }
        if (large)
            mmp_crew_run(crew, mmp_updates_job, c, MMP_NLOG);
        else if (crew)
            mmp_crew_finish(crew);
        if (crew)
            mmp_updates_end(c);
        else
            mmp_apply_updates(c);
    }
    return 0;
}

/* The restoration filter in bands of rows, a crew's jobs. */
typedef struct restore_bands {
    const mmp_restore *r;
    const int32_t *rec;
    int stride, w, h, maxval, groups; /* groups of 4 rows a band */
    uint8_t *cls;
    uint16_t *out;
    long ostride;
    _Atomic int err;
} restore_bands;

static void restore_band(void *arg, int j)
{
    restore_bands *b = arg;
    const int gh = (b->h + 3) / 4, g0 = j * b->groups;
    const int g1 = g0 + b->groups < gh ? g0 + b->groups : gh;
    if (g0 < g1 &&
        mmp_restore_apply_groups(b->r, b->rec, b->stride, b->w, b->h, b->maxval, g0, g1, b->cls,
                                 b->out, b->ostride))
        atomic_store(&b->err, MMP_ENOMEM);
}

/* mmp_restore_apply into out (rows ostride samples apart), in bands on the
 * crew if there is one, else on this thread. */
static int restore_plane(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                         int maxval, uint16_t *out, long ostride, mmp_crew *crew)
{
    const int gw = (w + 3) / 4, gh = (h + 3) / 4;
    const int bands = !crew ? 1
                      : BANDS_PER_THREAD * (crew->helpers + 1) < gh
                          ? BANDS_PER_THREAD * (crew->helpers + 1)
                          : gh;
    restore_bands b = {.r = r, .rec = rec, .stride = stride, .w = w, .h = h, .maxval = maxval,
                       .groups = (gh + bands - 1) / bands, .out = out, .ostride = ostride};
    atomic_init(&b.err, 0);
    if (r->enabled && !(b.cls = malloc((size_t)gw * gh)))
        return MMP_ENOMEM;
    if (crew)
        mmp_crew_run(crew, restore_band, &b, bands);
    else
        restore_band(&b, 0);
    free(b.cls);
    return atomic_load(&b.err);
}

/* Plane p of the layout through the MMP machinery, its samples into out
 * (rows ostride samples apart); luma: the decoded luma plane (read by the
 * chroma planes' CfL mode). */
static int decode_plane(const mmp_header *hdr, const mmp_layout *l, int p, mmp_rc_dec *rc,
                        const uint16_t *luma, uint16_t *out, long ostride,
                        const mmp_decode_check *chk, int threads)
{
    const int bw = (l->w[p] + MMP_B - 1) / MMP_B, bh = (l->h[p] + MMP_B - 1) / MMP_B;
    mmp_order o;
    mmp_codec c;
    mmp_block *blk = NULL;
    int32_t *cfl = NULL;
    int err = mmp_order_init(&o, (int)hdr->order, bw, bh);
    if (err)
        return err;
    if ((err = mmp_codec_init(&c, l->w[p], l->h[p], l->maxv[p], (int)hdr->dict_cap,
                              hdr->redund_q4, o.max_step))) {
        mmp_order_free(&o);
        return err;
    }
    if (!(blk = malloc(sizeof *blk * (size_t)o.max_step)))
        err = MMP_ENOMEM;
    if (!err && mmp_layout_has_cfl(l, p)) {
        if ((cfl = mmp_cfl_reference(l, p, luma, c.plane.width, c.plane.height)))
            mmp_codec_set_cfl(&c, cfl);
        else
            err = MMP_ENOMEM;
    }
    if (err) {
        free(blk);
        mmp_codec_free(&c);
        mmp_order_free(&o);
        return err;
    }
    c.plane_index = p;
    if (hdr->tools & MMP_TOOL_TRANSFORM) {
        /* The plane's quantiser index (docs/format.md 4.4). */
        const uint32_t qi = mmp_rc_decode_freq(rc, 256);
        mmp_rc_decode_update(rc, qi, 1, 256);
        if (qi > MMP_TX_MAX_QI)
            err = MMP_EBITSTREAM;
        else
            mmp_codec_set_transform(&c, (int)qi);
    }
    /* The plane's crew (see above). */
    const int pmin = chk && chk->parallel_min > 0 ? chk->parallel_min : PARALLEL_MIN_BLOCKS;
    int helpers = 0;
    if (o.max_step >= pmin)
        helpers = threads - 1;
    else if ((long)bw * bh >= CREW_MIN_BLOCKS)
        helpers = threads - 1 < CREW_HELPERS ? threads - 1 : CREW_HELPERS;
    if (chk && chk->helpers)
        helpers = chk->helpers > 0 ? chk->helpers : 0;
    mmp_crew crew;
    mmp_crew_start(&crew, err ? 0 : helpers, 0);
    mmp_crew *cr = crew.helpers ? &crew : NULL;
    /* On one thread, each scale is updated only when a leaf reads it; a
     * crew updates every scale at each step, the widths in parallel. */
    if (!cr)
        mmp_codec_defer(&c);
    if (!err && (hdr->tools & MMP_TOOL_DEBLOCK))
        err = mmp_codec_set_deblock(&c);
    if (!err)
        err = decode_payload(&c, &o, blk, rc, chk, cr);
    free(blk);
    mmp_order_free(&o);
    /* The plane's deblocking filter, applied to its reconstruction. */
    if (!err && (hdr->tools & MMP_TOOL_DEBLOCK)) {
        mmp_deblock d;
        mmp_deblock_read(rc, &d);
        if (rc->overrun)
            err = MMP_EBITSTREAM;
        else
            mmp_deblock_apply(&d, &c.edges, c.plane.pix, c.plane.width, l->w[p], l->h[p],
                              l->maxv[p], NULL);
    }
    /* The plane's restoration filter, then the filtered plane. */
    mmp_restore r;
    if (!err && !(err = mmp_restore_init(&r, l->w[p], l->h[p]))) {
        if (!(err = mmp_restore_read(rc, &r)) && rc->overrun)
            err = MMP_EBITSTREAM;
        if (!err)
            err = restore_plane(&r, c.plane.pix, c.plane.width, l->w[p], l->h[p], l->maxv[p],
                                out, ostride, cr);
        mmp_restore_free(&r);
    }
    mmp_crew_stop(&crew);
    mmp_codec_free(&c);
    free(cfl);
    return err;
}

/* Plane p with its residual stage (docs/format.md 7.6): after the MMP
 * stage, its output is the base of the residual stage's prediction. planes:
 * the tile's planes, those before p decoded (planes[0], the luma plane,
 * residual stage included, as decode_plane reads it; planes[p - 1], the
 * guide of the residual context). */
static int decode_residual_plane(const mmp_header *hdr, const mmp_layout *l, int p,
                                 mmp_rc_dec *rc, uint16_t *const *planes, uint16_t *out,
                                 const mmp_decode_check *chk, int threads)
{
    const int w = l->w[p], h = l->h[p], m = l->maxv[p], n = (int)hdr->max_error;
    const int tools = mmp_refine_tools(hdr->tools);
    const uint16_t *guide = mmp_refine_guide(l, planes, p);
    if (hdr->residual == MMP_RESIDUAL_ALONE)
        return mmp_refine_decode(rc, NULL, guide, out, w, h, m, n, tools);
    uint16_t *base = malloc(sizeof(uint16_t) * (size_t)w * h);
    if (!base)
        return MMP_ENOMEM;
    int err = decode_plane(hdr, l, p, rc, planes[0], base, w, chk, threads);
    if (!err)
        err = mmp_refine_decode(rc, base, guide, out, w, h, m, n, tools);
    free(base);
    return err;
}

/* Tile t of a file: its planes decoded from its payload, as a whole image
 * of its size with the header's parameters, on up to `threads` threads,
 * into pix (interleaved, rows `stride` pixels apart). A single plane
 * without a residual stage is filtered straight into pix; otherwise the
 * planes are decoded apart and then interleaved, as section 7 says. */
static int decode_tile(const mmp_header *whole, const uint8_t *buf, const mmp_tile *t,
                       uint16_t *pix, long stride, const mmp_decode_check *chk, int threads)
{
    mmp_header hdr = *whole;
    hdr.width = t->w;
    hdr.height = t->h;
    mmp_layout l;
    mmp_layout_of(&hdr, &l);
    mmp_rc_dec rc;
    mmp_rc_dec_init(&rc, buf + t->offset, (size_t)t->len);
    if (l.nplanes == 1 && hdr.residual == MMP_RESIDUAL_NONE)
        return decode_plane(&hdr, &l, 0, &rc, NULL, pix, stride, chk, threads);
    int err = 0;
    uint16_t *planes[MMP_MAX_PLANES] = {NULL};
    for (int p = 0; p < l.nplanes && !err; p++)
        if (!(planes[p] = malloc(sizeof(uint16_t) * (size_t)l.w[p] * l.h[p])))
            err = MMP_ENOMEM;
    for (int p = 0; p < l.nplanes && !err; p++) {
        if (p == l.nplanes - 1 && l.alpha == MMP_ALPHA_EXACT)
            err = mmp_alpha_decode(&rc, planes[p], l.w[p], l.h[p], l.maxv[p]);
        else if (hdr.residual != MMP_RESIDUAL_NONE)
            err = decode_residual_plane(&hdr, &l, p, &rc, planes, planes[p], chk, threads);
        else
            err = decode_plane(&hdr, &l, p, &rc, planes[0], planes[p], l.w[p], chk, threads);
    }
    if (!err)
        mmp_planes_to_pixels(&l, (const uint16_t *const *)planes, pix, stride);
    for (int p = 0; p < MMP_MAX_PLANES; p++)
        free(planes[p]);
    return err;
}

/* The tiles of a decode, a crew's jobs. */
typedef struct tile_run {
    const mmp_container *c;
    const uint8_t *buf;
    const uint32_t *need; /* the tiles the window touches, in file order */
    int x, y, w, h, ch;   /* the window, and the image's channels */
    mmp_image *img;
    const mmp_decode_check *chk;
    int threads;          /* each tile's */
    int shared;           /* 1: tiles run at once, and lock guards tile_err and bad */
    _Atomic int failed;   /* 1: a tile has failed */
    _Atomic int started, running; /* tiles, for the checks */
    pthread_mutex_t lock;
    int tile_err;         /* the error of the failed tile first in file order */
    uint32_t bad;         /* that tile */
} tile_run;

/* Tile need[k] decoded and copied into its place in the window. */
static void tile_job(void *arg, int k)
{
    tile_run *tr = arg;
    /* After a failure the tiles left are not decoded: the file is refused
     * whatever they hold. */
    if (atomic_load(&tr->failed))
        return;
    const mmp_tile *t = &tr->c->tiles[tr->need[k]];
    const int x = tr->x, y = tr->y, w = tr->w, h = tr->h, ch = tr->ch;
    const int x0 = (int)t->x > x ? (int)t->x : x, y0 = (int)t->y > y ? (int)t->y : y;
    const int x1 = (int)(t->x + t->w) < x + w ? (int)(t->x + t->w) : x + w;
    const int y1 = (int)(t->y + t->h) < y + h ? (int)(t->y + t->h) : y + h;
    const mmp_decode_check *chk = tr->chk;
    if (chk && chk->tiles_at_once) {
        const int now = atomic_fetch_add(&tr->running, 1) + 1;
        for (int most = atomic_load(chk->tiles_at_once);
             most < now && !atomic_compare_exchange_weak(chk->tiles_at_once, &most, now);)
            ;
    }
    atomic_fetch_add(&tr->started, 1);
    if (chk && chk->meet > 0)
        for (const double t0 = mmp_now_seconds();
             atomic_load(&tr->started) < chk->meet && mmp_now_seconds() < t0 + 10;)
            sched_yield();
    /* A tile inside the window is decoded into its place; one that the
     * window cuts, into an image of its own, then the part inside copied. */
    const int inside = x0 == (int)t->x && y0 == (int)t->y && x1 == (int)(t->x + t->w) &&
                       y1 == (int)(t->y + t->h);
    mmp_image part = {0};
    int terr = 0;
    if (inside)
        terr = decode_tile(&tr->c->h, tr->buf, t, tr->img->pix + ((size_t)(y0 - y) * (size_t)w +
                                                                  (size_t)(x0 - x)) * (size_t)ch,
                           w, tr->chk, tr->threads);
    else if (!(terr = mmp_image_alloc_channels(&part, (int)t->w, (int)t->h, ch, tr->img->maxval)))
        terr = decode_tile(&tr->c->h, tr->buf, t, part.pix, (long)t->w, tr->chk, tr->threads);
    if (chk && chk->tiles_at_once)
        atomic_fetch_sub(&tr->running, 1);
    if (terr) {
        mmp_image_free(&part);
        const int locked = tr->shared && !pthread_mutex_lock(&tr->lock);
        if (!tr->tile_err || tr->need[k] < tr->bad) {
            tr->tile_err = terr;
            tr->bad = tr->need[k];
        }
        atomic_store(&tr->failed, 1);
        if (locked)
            pthread_mutex_unlock(&tr->lock);
        return;
    }
    if (inside)
        return;
    for (int yy = y0; yy < y1; yy++)
        memcpy(tr->img->pix + ((size_t)(yy - y) * (size_t)w + (size_t)(x0 - x)) * (size_t)ch,
               part.pix + ((size_t)(yy - (int)t->y) * t->w + (size_t)(x0 - (int)t->x)) * (size_t)ch,
               sizeof(uint16_t) * (size_t)(x1 - x0) * (size_t)ch);
    mmp_image_free(&part);
}

/* The decoder: the container checked (and the window's pixels against
 * max_pixels, 0 for no limit below MMP_MAX_PIXELS) before anything is
 * allocated for decoding; then each tile the window [x, x + w) x [y, y + h)
 * touches (a negative w: the whole image), into its place. */
static int decode(const uint8_t *buf, size_t len, int x, int y, int w, int h, mmp_image *img,
                  const mmp_decode_check *chk, uint64_t max_pixels, char *errbuf,
                  size_t errlen)
{
    memset(img, 0, sizeof(*img));
    mmp_container c;
    int err = mmp_container_parse(buf, len, &c, errbuf, errlen);
    if (err)
        return err;
    const mmp_header *hdr = &c.h;
    if (w < 0) {
        x = y = 0;
        w = (int)hdr->width;
        h = (int)hdr->height;
    } else if (x < 0 || y < 0 || w < 1 || h < 1 || (uint64_t)x + (uint64_t)w > hdr->width ||
               (uint64_t)y + (uint64_t)h > hdr->height) {
        err = mmp_error(errbuf, errlen, MMP_EINVAL,
                        "region %dx%d at %d,%d is not inside the %ux%u image", w, h, x, y,
                        (unsigned)hdr->width, (unsigned)hdr->height);
        mmp_container_free(&c);
        return err;
    }
    if (max_pixels && (uint64_t)w * (uint64_t)h > max_pixels) {
        err = mmp_error(errbuf, errlen, MMP_ELIMIT,
                        "image of %dx%d = %llu pixels exceeds the limit of %llu pixels", w, h,
                        (unsigned long long)w * (unsigned long long)h,
                        (unsigned long long)max_pixels);
        mmp_container_free(&c);
        return err;
    }
    const int ch = (int)hdr->planes;
    err = mmp_image_alloc_channels(img, w, h, ch, (int)hdr->maxval);
    /* The tiles the window touches. */
    uint32_t *need = err ? NULL : malloc(sizeof *need * c.ntiles);
    int nneed = 0;
    if (!err && !need)
        err = MMP_ENOMEM;
    for (uint32_t i = 0; i < c.ntiles && !err; i++) {
        const mmp_tile *t = &c.tiles[i];
        if ((int)t->x < x + w && (int)(t->x + t->w) > x && (int)t->y < y + h &&
            (int)(t->y + t->h) > y)
            need[nneed++] = i;
    }
    /* Tiles are independent: several decode at once, each into its own part
     * of the image, each on one thread. After a failure no further tile
     * starts; the failing tile reported is the first in file order of
     * those that failed. */
    tile_run tr = {.c = &c, .buf = buf, .need = need, .x = x, .y = y, .w = w, .h = h, .ch = ch,
                   .img = img, .chk = chk, .threads = decoder_threads()};
    atomic_init(&tr.failed, 0);
    atomic_init(&tr.started, 0);
    atomic_init(&tr.running, 0);
    if (!err && nneed > 1 && tr.threads > 1) {
        tr.shared = !pthread_mutex_init(&tr.lock, NULL);
        /* As many tiles at once as take the fewest rounds, and no more:
         * each holds its working memory (megabytes) while it runs, and 24
         * tiles on 16 threads take two rounds on 12 of them as on 16. */
        const int rounds = (nneed + tr.threads - 1) / tr.threads;
        const int workers = (nneed + rounds - 1) / rounds;
        mmp_crew crew;
        mmp_crew_start(&crew, tr.shared ? workers - 1 : 0, 1);
        tr.threads = 1;
        mmp_crew_run(&crew, tile_job, &tr, nneed);
        mmp_crew_stop(&crew);
        if (tr.shared)
            pthread_mutex_destroy(&tr.lock);
    } else if (!err) {
        for (int k = 0; k < nneed && !tr.tile_err; k++)
            tile_job(&tr, k);
    }
    const int tile_err = tr.tile_err;
    const uint32_t bad = tr.bad;
    free(need);
    if (!err)
        err = tile_err;
    const uint32_t ntiles = c.ntiles;
    mmp_container_free(&c);
    if (err)
        mmp_image_free(img);
    if (err == MMP_ENOMEM)
        return mmp_error(errbuf, errlen, err, "out of memory");
    if (err && ntiles > 1)
        return mmp_error(errbuf, errlen, err, "corrupt payload: more symbols than bytes (tile %u)",
                         bad);
    if (err)
        return mmp_error(errbuf, errlen, err, "corrupt payload: more symbols than bytes");
    return 0;
}

int mmp_decode_checked(const uint8_t *buf, size_t len, mmp_image *img,
                       const mmp_decode_check *chk, char *errbuf, size_t errlen)
{
    return decode(buf, len, 0, 0, -1, -1, img, chk, 0, errbuf, errlen);
}

int mmp_decode_limited(const uint8_t *buf, size_t len, uint64_t max_pixels, mmp_image *img,
                       char *errbuf, size_t errlen)
{
    if (!img)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no image to decode into");
    return decode(buf, len, 0, 0, -1, -1, img, NULL, max_pixels, errbuf, errlen);
}

int mmp_decode_region(const uint8_t *buf, size_t len, int x, int y, int width, int height,
                      uint64_t max_pixels, mmp_image *img, char *errbuf, size_t errlen)
{
    if (!img)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no image to decode into");
    if (width < 1 || height < 1) {
        memset(img, 0, sizeof *img);
        return mmp_error(errbuf, errlen, MMP_EINVAL, "empty region %dx%d", width, height);
    }
    return decode(buf, len, x, y, width, height, img, NULL, max_pixels, errbuf, errlen);
}

int mmp_decode(const uint8_t *buf, size_t len, mmp_image *img, char *errbuf, size_t errlen)
{
    return mmp_decode_limited(buf, len, 0, img, errbuf, errlen);
}
