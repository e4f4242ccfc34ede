/* The encoder driver: the planes, and in each the steps of blocks in the coding order: search, coding, updates. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/container.h"
#include "common/crew.h"
#include "common/cores.h"
#include "common/error.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/timing.h"
#include "common/wait.h"
#include "kernels/engine.h"
#include "mmp/common/alpha.h"
#include "mmp/common/colour.h"
#include "mmp/mmp.h"
#include "mmp/common/order.h"
#include "mmp/common/refine.h"
#include "mmp/common/settings.h"
#include "mmp/enc/engine_start.h"
#include "mmp/enc/header.h"
#include "mmp/enc/plane_filters.h"
#include "mmp/enc/restore_fit.h"
#include "mmp/enc/search.h"
#include "mmp/enc/search_tx.h"
#include "mmp/enc/tiled.h"
#include "mmp/enc/tiles.h"
#include "mmp/common/syntax.h"

/* One encode: what its planes and steps share. */
typedef struct encoder {
    const mmp_settings *st;
    const mmp_image *img;       /* the tile being coded */
    const mmp_image *img_whole; /* the image */
    mmp_logger log;
    mmp_header hdr;
    mmp_layout lay;
    uint16_t *in[MMP_MAX_PLANES];   /* the planes of the input */
    uint16_t *out[MMP_MAX_PLANES];  /* their reconstructions */
    uint64_t ssd[MMP_MAX_PLANES];      /* squared errors of each plane, every tile's */
    uint64_t nsamples[MMP_MAX_PLANES];
    /* The MMP plane being coded. */
    mmp_codec c;
    mmp_order order;
    int32_t *orig;   /* its padded original */
    int32_t *cfl;    /* its luma reference, or NULL (mmp_cfl_reference) */
    long mode_leaves[MMP_NUM_MODES]; /* its prediction leaves per mode (for -v) */
    int32_t *tok;    /* the tokens of a step's blocks, MMP_MAX_BLOCK_TOKENS each */
    int *ntok;
    mmp_block *blk;  /* the syntax of each block of a step */
    mmp_search *search;
    /* For all of them. */
    mmp_engines engines;
    long steps_done; /* of every plane */
    mmp_rc_enc rc;
    double search_s, code_s;
    mmp_crew crew; /* the steps' updates and checks (start_update_crew) */
    int crew_on;
    double plane_code_s, plane_update_s, plane_restore_s; /* -v: the plane's serial parts */
    long blocks_done;
    long blocks_total;    /* the blocks it will search, or -1: not known */
    long blocks_expected; /* the blocks it is expected to search (auto's choice), or -1 */
    uint64_t dict_elements;
    long plan_blocks; /* the blocks of every tile of the encode (the progress's total) */
    char *errbuf;
    size_t errlen;
} encoder;

/* Plane p is an exact alpha plane (docs/format.md 7.4). */
static int is_exact_alpha(const mmp_layout *l, int p)
{
    return p == l->nplanes - 1 && l->alpha == MMP_ALPHA_EXACT;
}

/* The planes of the input and room for their reconstructions. */
static int make_planes(encoder *e)
{
    const mmp_layout *l = &e->lay;
    for (int p = 0; p < l->nplanes; p++) {
        const size_t n = (size_t)l->w[p] * l->h[p];
        e->in[p] = malloc(n * sizeof(uint16_t));
        e->out[p] = malloc(n * sizeof(uint16_t));
        if (!e->in[p] || !e->out[p])
            return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
    }
    mmp_planes_from_image(l, e->img, e->in);
    return 0;
}

/* The padded original of plane p: edge replication to a multiple of the
 * block size. */
static int32_t *pad_original(const uint16_t *src, int w, int h, int pw, int ph)
{
    int32_t *o = malloc((size_t)pw * ph * sizeof(int32_t));
    if (!o)
        return NULL;
    for (int y = 0; y < ph; y++) {
        int sy = y < h ? y : h - 1;
        for (int x = 0; x < pw; x++) {
            int sx = x < w ? x : w - 1;
            o[(long)y * pw + x] = src[(long)sy * w + sx];
        }
    }
    return o;
}

/* The concurrency of the engine of the moment. */
static int engine_threads(const encoder *e)
{
    return mmp_engines_concurrency(&e->engines);
}

/*
 * After a step's symbols, its dictionary updates (a job per width of
 * scales) and its blocks' checks run as one batch of jobs (step_job): with
 * an engine that has as many threads as cores (omp) on the threads of the
 * search's last region, which are still awake; with one that has more
 * threads than cores (opencl's mostly wait for the device) on a crew of
 * sleeping helpers, as a region would have to wake many threads that share
 * the cores (docs/tuning.md, "Encoder threads"): up to UPDATE_HELPERS, one
 * fewer than the cores. Called when a plane starts and when its engine
 * changes.
 */
#define UPDATE_HELPERS 4
static void start_update_crew(encoder *e)
{
    if (e->crew_on)
        mmp_crew_stop(&e->crew);
    e->crew_on = 0;
    const int cores = mmp_usable_cores(), threads = engine_threads(e);
    if (cores > 1 && threads > cores) {
        mmp_crew_start(&e->crew, cores - 1 < UPDATE_HELPERS ? cores - 1 : UPDATE_HELPERS, 1);
        e->crew_on = 1; /* with no helper started, encode_step runs every job itself */
    }
}

/* For plane p: the coding order, the codec state both sides keep, the
 * padded original, the token buffers. */
static int set_up_plane(encoder *e, int p)
{
    const mmp_layout *l = &e->lay;
    const int bw = (l->w[p] + MMP_B - 1) / MMP_B, bh = (l->h[p] + MMP_B - 1) / MMP_B;
    int err = mmp_order_init(&e->order, (int)e->hdr.order, bw, bh);
    if (!err)
        err = mmp_codec_init(&e->c, l->w[p], l->h[p], l->maxv[p], (int)e->hdr.dict_cap,
                             e->hdr.redund_q4, e->order.max_step);
    if (err)
        return mmp_error(e->errbuf, e->errlen, err, "cannot set up the encoder: %s",
                         mmp_strerror(err));
    e->c.plane_index = p;
    /* The step's updates and checks use as many threads as the search
     * (encode_step), on a crew where the engine has more threads than cores. */
    e->c.threads = engine_threads(e);
    memset(e->mode_leaves, 0, sizeof e->mode_leaves);
    e->plane_code_s = e->plane_update_s = e->plane_restore_s = 0;
    start_update_crew(e);
    if (mmp_layout_has_cfl(l, p)) {
        e->cfl = mmp_cfl_reference(l, p, e->out[0], e->c.plane.width, e->c.plane.height);
        if (!e->cfl)
            return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
        mmp_codec_set_cfl(&e->c, e->cfl);
    }
    if ((e->hdr.tools & MMP_TOOL_DEBLOCK) && mmp_codec_set_deblock(&e->c))
        return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
    e->orig = pad_original(e->in[p], l->w[p], l->h[p], e->c.plane.width, e->c.plane.height);
    /* Without a residual stage nothing reads the plane's input again (its
     * squared error comes from the padded original): it goes now. */
    if (e->orig && e->hdr.residual == MMP_RESIDUAL_NONE) {
        free(e->in[p]);
        e->in[p] = NULL;
    }
    e->tok = malloc(sizeof(int32_t) * MMP_MAX_BLOCK_TOKENS * e->order.max_step);
    e->ntok = malloc(sizeof(int) * e->order.max_step);
    e->blk = malloc(sizeof *e->blk * (size_t)e->order.max_step);
    if (!e->orig || !e->tok || !e->ntok || !e->blk)
        return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
    return 0;
}

/* What only the plane's steps need: the search, the token buffers, the
 * dictionary, the map of the pixels reconstructed so far. */
static void release_search(encoder *e)
{
    free(e->c.plane.avail);
    e->c.plane.avail = NULL;
    mmp_search_destroy(e->search);
    e->search = NULL;
    free(e->blk);
    free(e->ntok);
    free(e->tok);
    e->blk = NULL;
    e->ntok = NULL;
    e->tok = NULL;
    mmp_dict_free(&e->c.dict);
}

static void tear_down_plane(encoder *e)
{
    if (e->crew_on)
        mmp_crew_stop(&e->crew);
    e->crew_on = 0;
    release_search(e);
    free(e->orig);
    free(e->cfl);
    e->cfl = NULL;
    e->orig = NULL;
    mmp_codec_free(&e->c);
    mmp_order_free(&e->order);
}

/* The engines (mmp/enc/engine_start.h). */
static int start_engine(encoder *e)
{
    return mmp_engines_start(&e->engines, e->st, &e->log, e->blocks_expected, e->errbuf,
                             e->errlen);
}

/* The reason for an engine failure, as precise as the engine can say. */
static const char *engine_reason(const encoder *e, int err)
{
    const mmp_engine_ops *eng = e->engines.eng;
    const char *why = eng->last_error ? eng->last_error(e->engines.es) : NULL;
    return why ? why : mmp_strerror(err);
}

/* The jobs after a step's symbols: MMP_NLOG of updates (mmp_updates_job),
 * then up to STEP_JOBS - MMP_NLOG of checks (blocks k, k + nchk, ...). */
#define STEP_JOBS 16

typedef struct step_checks {
    encoder *e;
    const int32_t *blocks;
    int n, bw, nchk;
    _Atomic int bad; /* the first block whose rebuild differs (n: none) */
} step_checks;

/* The block at (by, bx) rebuilt through the decoder's path from its coded
 * syntax blk; 1 if it equals what the search chose. */
static int check_block(encoder *e, int by, int bx, const mmp_block *blk)
{
    mmp_codec *c = &e->c;
    const int pw = c->plane.width;
    int32_t chosen[MMP_B * MMP_B];
    for (int y = 0; y < MMP_B; y++) {
        const long row = (long)(by * MMP_B + y) * pw + bx * MMP_B;
        memcpy(chosen + y * MMP_B, c->plane.pix + row, sizeof(chosen[0]) * MMP_B);
        memset(c->plane.avail + row, 0, MMP_B);
    }
    mmp_reconstruct_block(c, by, bx, blk);
    for (int y = 0; y < MMP_B; y++)
        if (memcmp(chosen + y * MMP_B, c->plane.pix + (long)(by * MMP_B + y) * pw + bx * MMP_B,
                   sizeof(chosen[0]) * MMP_B))
            return 0;
    return 1;
}

static void step_job(void *arg, int j)
{
    step_checks *sc = arg;
    if (j < MMP_NLOG) {
        mmp_updates_job(&sc->e->c, j);
        return;
    }
    for (int k = j - MMP_NLOG; k < sc->n; k += sc->nchk)
        if (!check_block(sc->e, sc->blocks[k] / sc->bw, sc->blocks[k] % sc->bw, &sc->e->blk[k])) {
            int was = atomic_load(&sc->bad);
            while (k < was && !atomic_compare_exchange_weak(&sc->bad, &was, k))
                ;
        }
}

/*
 * Step t: the search's decisions for all its blocks, then block by block in
 * coding order their symbols, coded through the decoder's own path, then
 * at once the step's dictionary updates and each block's check that the
 * decoder's path rebuilds exactly what the search chose (step_job).
 */
static int encode_step(encoder *e, int t)
{
    mmp_codec *c = &e->c;
    const int pw = c->plane.width, bw = pw / MMP_B;
    const int32_t *blocks = e->order.block + e->order.first[t];
    const int n = e->order.first[t + 1] - e->order.first[t];
    const double ts = mmp_now_seconds();
    int err = mmp_search_step(e->search, t, blocks, n, e->tok, e->ntok);
    const double tc = mmp_now_seconds();
    e->search_s += tc - ts;
    if (err)
        return mmp_error(e->errbuf, e->errlen, err, "search failed in step %d: %s", t,
                         engine_reason(e, err));
    for (int k = 0; k < n; k++) {
        mmp_symbols io = {.encoding = 1,
                          .enc = &e->rc,
                          .tok = e->tok + (long)k * MMP_MAX_BLOCK_TOKENS,
                          .ntok = e->ntok[k]};
        err = mmp_code_block(c, &io, &e->blk[k]);
        if (err)
            return mmp_error(e->errbuf, e->errlen, err,
                             "internal error: block %d,%d does not code as searched",
                             blocks[k] / bw, blocks[k] % bw);
        for (int i = 0; i < e->blk[k].nleaves; i++)
            e->mode_leaves[e->blk[k].leaf[i].mode]++;
    }
    /* The step's updates and its blocks' checks at once: the updates read
     * the queued patterns and change the dictionary, a check reads its
     * block's residuals and the plane, and rebuilds only its own block (no
     * block of a step reads another's pixels, docs/format.md 4.3). */
    const double tu = mmp_now_seconds();
    mmp_updates_begin(c);
    step_checks sc = {.e = e, .blocks = blocks, .n = n, .bw = bw,
                      .nchk = n < STEP_JOBS - MMP_NLOG ? n : STEP_JOBS - MMP_NLOG};
    atomic_init(&sc.bad, n);
    const int jobs = MMP_NLOG + sc.nchk;
    if (e->crew_on) {
        mmp_crew_run(&e->crew, step_job, &sc, jobs);
    } else {
#ifdef _OPENMP
        const int nt = c->threads > 1 ? c->threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) if (c->threads != 1) num_threads(nt) default(none) \
    shared(sc) firstprivate(jobs)
#endif
        for (int j = 0; j < jobs; j++)
            step_job(&sc, j);
    }
    mmp_updates_end(c);
    const int bad = atomic_load(&sc.bad);
    if (bad < n)
        return mmp_error(e->errbuf, e->errlen, MMP_EINVAL,
                         "internal error: block %d,%d does not code as searched",
                         blocks[bad] / bw, blocks[bad] % bw);
    const double te = mmp_now_seconds();
    e->plane_code_s += tu - tc;
    e->plane_update_s += te - tu;
    e->code_s += te - tc;
    return 0;
}

/* The lambda of plane p in 1/256: the chroma planes' weighed by how much
 * their errors count in the RGB error (docs/format.md section 9). */
static int64_t plane_lambda_q8(const encoder *e, int p)
{
    const double w = mmp_plane_weight(&e->lay, p);
    const int64_t q8 = w == 1.0 ? e->hdr.lambda_q8
                                : llround((double)e->hdr.lambda_q8 * e->st->chroma_lambda / w);
    return mmp_enc_scaled_lambda_q8(q8, e->lay.maxval);
}

/*
 * Plane p's deblocking filter (docs/format.md section 7.7), where the file
 * has the tool, and its restoration filter (7.5): chosen against the
 * original (mmp/enc/plane_filters.h), coded after the plane's blocks, and
 * applied to what the decoder will output.
 */
static int filter_plane(encoder *e, int p)
{
    const mmp_layout *l = &e->lay;
    mmp_codec *c = &e->c;
    mmp_search_speed sp;
    mmp_search_speed_preset(e->st->speed, &sp);
    const int deblocking = (e->hdr.tools & MMP_TOOL_DEBLOCK) != 0;
    const mmp_filter_job job = {.rec = c->plane.pix, .orig = e->orig, .stride = c->plane.width,
                                .w = l->w[p], .h = l->h[p], .maxval = l->maxv[p],
                                .edges = deblocking ? &c->edges : NULL,
                                .lambda = (double)plane_lambda_q8(e, p) / 256.0,
                                .restoration = e->st->restoration, .threads = engine_threads(e),
                                .rounds = sp.fit_rounds, .alone = sp.deblock_alone};
    mmp_deblock d = {0};
    mmp_restore r;
    int err = mmp_restore_init(&r, l->w[p], l->h[p]);
    if (!err)
        err = mmp_choose_filters(&job, &d, &r);
    if (!err) {
        if (deblocking)
            mmp_deblock_write(&e->rc, &d);
        mmp_restore_write(&e->rc, &r);
        err = mmp_restore_apply_threads(&r, c->plane.pix, c->plane.width, l->w[p], l->h[p],
                                        l->maxv[p], engine_threads(e), e->out[p]);
    }
    if (!err && e->st->verbose) {
        int on = 0;
        for (int i = 0; i < r.rw * r.rh; i++)
            on += r.on[i];
        if (deblocking && d.enabled)
            mmp_log(&e->log, MMP_LOG_INFO, "plane %d: deblocking filter, tc %d, beta %d", p, d.tc,
                    d.beta);
        else if (deblocking)
            mmp_log(&e->log, MMP_LOG_INFO, "plane %d: no deblocking filter", p);
        if (r.enabled)
            mmp_log(&e->log, MMP_LOG_INFO,
                    "plane %d: restoration filter, %d filters, %d of %d regions on", p,
                    r.nfilters, on, r.rw * r.rh);
        else
            mmp_log(&e->log, MMP_LOG_INFO, "plane %d: no restoration filter", p);
    }
    mmp_restore_free(&r);
    return err ? mmp_error(e->errbuf, e->errlen, err, "out of memory") : 0;
}

/* The search of plane p on the engine of the moment. */
static int make_search(encoder *e, int p)
{
    const int err = mmp_search_create(&e->search, &e->c, e->orig, e->engines.eng,
                                      e->engines.es, plane_lambda_q8(e, p), e->st->speed,
                                      &e->log, e->st->verbose);
    return err ? mmp_error(e->errbuf, e->errlen, err, "out of memory") : 0;
}

/* The squared error of plane p's output against its padded original
 * (plane p's input, whose own copy is gone). */
static void add_error(encoder *e, int p)
{
    const int w = e->lay.w[p], h = e->lay.h[p], pw = e->c.plane.width;
    uint64_t ssd = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int64_t d = (int64_t)e->orig[(long)y * pw + x] - e->out[p][(long)y * w + x];
            ssd += (uint64_t)(d * d);
        }
    e->ssd[p] += ssd;
    e->nsamples[p] += (uint64_t)w * h;
}

/* Plane p through the MMP machinery, step by step. */
static int encode_plane(encoder *e, int p)
{
    int err = set_up_plane(e, p);
    if (!err && (e->hdr.tools & MMP_TOOL_TRANSFORM)) {
        /* The plane's quantiser index opens its payload (docs/format.md 4.4). */
        const int qi = mmp_tx_qi_for_lambda(plane_lambda_q8(e, p));
        mmp_rc_encode(&e->rc, (uint32_t)qi, 1, 256);
        mmp_codec_set_transform(&e->c, qi);
    }
    if (!err)
        err = make_search(e, p);
    for (int t = 0; t < e->order.nsteps && !err; t++) {
        err = encode_step(e, t);
        e->blocks_done += e->order.first[t + 1] - e->order.first[t];
        e->steps_done++;
        /* The callback asks to stop (mmp_encode's when another worker
         * failed): the tile ends here. */
        if (!err && e->st->progress &&
            e->st->progress(e->st->progress_opaque, (int)e->blocks_done, (int)e->plan_blocks))
            err = MMP_ECANCELED;
        /* A slow engine that has started takes over here (a head start). */
        if (!err && t + 1 < e->order.nsteps &&
            (err = mmp_engines_step(&e->engines, e->steps_done, e->errbuf, e->errlen)) == 1) {
            mmp_search_destroy(e->search);
            e->search = NULL;
            e->c.threads = engine_threads(e);
            start_update_crew(e);
            err = make_search(e, p);
        }
    }
    /* Every block of the encode searched: the engine may go (its release
     * overlaps the restoration filters and the rest of the file). */
    if (!err && e->blocks_done == e->blocks_total)
        mmp_engines_release(&e->engines);
    if (!err && e->st->verbose) {
        static const char *const name[MMP_NUM_MODES] = {"V",  "H",  "DC", "DDL", "DDR", "VR",
                                                        "HD", "VL", "HU", "LSP", "ANG", "CfL"};
        char line[256];
        int len = 0;
        for (int m = 0; m < mmp_plane_modes(&e->c.plane); m++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s %ld", name[m],
                            e->mode_leaves[m]);
        mmp_log(&e->log, MMP_LOG_INFO, "plane %d: prediction leaves per mode:%s", p, line);
    }
    /* The restoration filter reads the plane and its original alone: the
     * search and the dictionary go first, so that a tile's memory does not
     * peak with the filter's fit on top of them. */
    if (!err) {
        for (int k = 0; k < MMP_NSCALES; k++)
            e->dict_elements += e->c.dict.n[k];
        release_search(e);
    }
    if (!err) {
        const double t0 = mmp_now_seconds();
        err = filter_plane(e, p);
        if (!err && !e->in[p])
            add_error(e, p);
        e->plane_restore_s = mmp_now_seconds() - t0;
        e->code_s += e->plane_restore_s;
        if (!err && e->st->verbose)
            mmp_log(&e->log, MMP_LOG_INFO,
                    "plane %d: coding %.3f s, dictionary updates and the blocks' checks %.3f s, "
                    "restoration filter %.3f s",
                    p, e->plane_code_s, e->plane_update_s, e->plane_restore_s);
    }
    tear_down_plane(e);
    return err;
}

/*
 * Plane p with its residual stage (docs/format.md 7.6): after the MMP stage,
 * whose output becomes the base of the prediction, or alone.
 */
static int encode_residual_plane(encoder *e, int p)
{
    const mmp_layout *l = &e->lay;
    const int w = l->w[p], h = l->h[p];
    uint16_t *base = NULL;
    int err = 0;
    if (e->hdr.residual == MMP_RESIDUAL_AFTER_MMP) {
        if ((err = encode_plane(e, p)))
            return err;
        if (!(base = malloc(sizeof(uint16_t) * (size_t)w * h)))
            return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
        memcpy(base, e->out[p], sizeof(uint16_t) * (size_t)w * h);
    }
    const double t0 = mmp_now_seconds();
    err = mmp_refine_encode(&e->rc, e->in[p], base, mmp_refine_guide(l, e->out, p), e->out[p], w,
                            h, l->maxv[p], (int)e->hdr.max_error, mmp_refine_tools(e->hdr.tools));
    e->code_s += mmp_now_seconds() - t0;
    free(base);
    if (err)
        return mmp_error(e->errbuf, e->errlen, err, "%s",
                         err == MMP_ENOMEM ? "out of memory" : "internal error: residual stage");
    return 0;
}

/* Every plane in payload order: the MMP planes, then an exact alpha plane. */
static int encode_planes(encoder *e)
{
    const mmp_layout *l = &e->lay;
    for (int p = 0; p < l->nplanes; p++) {
        int err;
        if (!is_exact_alpha(l, p) && e->hdr.residual != MMP_RESIDUAL_NONE) {
            if ((err = encode_residual_plane(e, p)))
                return err;
        } else if (is_exact_alpha(l, p)) {
            const double t0 = mmp_now_seconds();
            err = mmp_alpha_encode(&e->rc, e->in[p], l->w[p], l->h[p], l->maxv[p]);
            if (err)
                return mmp_error(e->errbuf, e->errlen, err, "out of memory");
            memcpy(e->out[p], e->in[p], sizeof(uint16_t) * (size_t)l->w[p] * l->h[p]);
            e->code_s += mmp_now_seconds() - t0;
        } else if ((err = encode_plane(e, p))) {
            return err;
        }
    }
    return 0;
}

/* The payload of the tile just coded: the range coder's bytes, handed over
 * to *out (free() them). */
static int finish_tile(encoder *e, uint8_t **out, size_t *outlen)
{
    if (mmp_rc_enc_finish(&e->rc))
        return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
    *out = e->rc.buf;
    *outlen = e->rc.len;
    e->rc.buf = NULL;
    e->rc.len = 0;
    return 0;
}

/* The tile's reconstruction into recon: an image of the tile's size, or
 * of the image's (into the tile's place). 0 or MMP_ENOMEM. */
static int paste_recon(encoder *e, const mmp_tile *t, mmp_image *recon)
{
    const mmp_layout *l = &e->lay;
    if (recon->width == (int)t->w && recon->height == (int)t->h) {
        mmp_image_from_planes(l, (const uint16_t *const *)e->out, recon);
        return 0;
    }
    const int ch = l->nplanes;
    mmp_image tile = {.width = (int)t->w, .height = (int)t->h, .maxval = l->maxval,
                      .channels = ch};
    tile.pix = malloc(sizeof(uint16_t) * (size_t)t->w * t->h * (size_t)ch);
    if (!tile.pix)
        return MMP_ENOMEM;
    mmp_image_from_planes(l, (const uint16_t *const *)e->out, &tile);
    mmp_enc_paste_tile(&tile, t, recon);
    free(tile.pix);
    return 0;
}

/* The planes of one tile, freed for the next. */
static void free_planes(encoder *e)
{
    for (int p = 0; p < MMP_MAX_PLANES; p++) {
        free(e->in[p]);
        free(e->out[p]);
        e->in[p] = e->out[p] = NULL;
    }
}

static void tear_down(encoder *e)
{
    tear_down_plane(e);
    mmp_engines_stop(&e->engines);
    mmp_rc_enc_free(&e->rc);
    free_planes(e);
}

/*
 * Tile i of the image: cropped (unless it is the whole image), coded as an
 * image of its own with the header's parameters, its payload into
 * *payload, its reconstruction into recon, its planes' squared errors
 * added up.
 */
static int encode_tile(encoder *e, const mmp_header *whole, uint32_t i, uint8_t **payload,
                       size_t *plen, mmp_image *recon)
{
    mmp_tile t;
    mmp_tile_rect(whole, i, &t);
    const mmp_image *img = e->img_whole;
    mmp_image part = {0};
    if (t.w != (uint32_t)img->width || t.h != (uint32_t)img->height) {
        if (mmp_enc_crop_tile(img, &t, &part))
            return mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
        img = &part;
    }
    e->img = img;
    e->hdr = *whole;
    e->hdr.width = t.w;
    e->hdr.height = t.h;
    mmp_layout_of(&e->hdr, &e->lay);
    mmp_rc_enc_init(&e->rc);
    int err = make_planes(e);
    /* The crop is in the planes now: freed before the tile is coded. */
    mmp_image_free(&part);
    e->img = e->img_whole;
    if (!err)
        err = encode_planes(e);
    if (!err)
        err = finish_tile(e, payload, plen);
    for (int p = 0; !err && p < e->lay.nplanes; p++) {
        const size_t n = (size_t)e->lay.w[p] * e->lay.h[p];
        if (!e->in[p])
            continue; /* added with its restoration (add_error) */
        e->ssd[p] += mmp_ssd(e->in[p], e->out[p], n);
        e->nsamples[p] += n;
    }
    if (!err && recon && paste_recon(e, &t, recon))
        err = mmp_error(e->errbuf, e->errlen, MMP_ENOMEM, "out of memory");
    mmp_rc_enc_free(&e->rc);
    free_planes(e);
    return err;
}

/* A coder of a plan's tiles (mmp/enc/tiled.h): an encoder and its engine. */
struct mmp_tile_coder {
    encoder e;
    mmp_settings st;
    mmp_header whole;
    int ntiles, tiles;
    char why[512];
};

int mmp_tile_coder_new(const mmp_settings *st, const mmp_tiled_plan *plan, long blocks, int exact,
                       mmp_tile_coder **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    mmp_tile_coder *tc = calloc(1, sizeof *tc);
    if (!tc)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    if (mmp_settings_full(st, &tc->st)) {
        free(tc);
        return mmp_error(errbuf, errlen, MMP_EINVAL, "settings not checked by the plan");
    }
    mmp_tiled_header(plan, &tc->whole);
    tc->ntiles = mmp_tiled_count(plan);
    encoder *e = &tc->e;
    e->st = &tc->st;
    e->log = (mmp_logger){tc->st.log, tc->st.log_opaque};
    e->hdr = tc->whole;
    e->errbuf = tc->why;
    e->errlen = sizeof tc->why;
    /* A coder that knows its last block lets its engine go after it
     * (mmp_engines_release). */
    e->blocks_expected = blocks;
    e->blocks_total = exact ? blocks : -1;
    for (int i = 0; i < tc->ntiles; i++)
        e->plan_blocks += mmp_tiled_tile_blocks(plan, i);
    mmp_rc_enc_init(&e->rc);
    const int err = start_engine(e);
    if (err) {
        mmp_error(errbuf, errlen, err, "%s", tc->why);
        mmp_tile_coder_free(tc);
        return err;
    }
    *out = tc;
    return 0;
}

int mmp_tile_coder_code(mmp_tile_coder *tc, int i, const mmp_image *src, uint8_t **payload,
                        size_t *len, mmp_image *recon, char *errbuf, size_t errlen)
{
    *payload = NULL;
    *len = 0;
    if (i < 0 || i >= tc->ntiles)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no tile %d in a plan of %d", i, tc->ntiles);
    mmp_tile t;
    mmp_tile_rect(&tc->whole, (uint32_t)i, &t);
    const int whole = src->width == (int)tc->whole.width && src->height == (int)tc->whole.height;
    if ((!whole && (src->width != (int)t.w || src->height != (int)t.h)) ||
        mmp_image_channels(src) != (int)tc->whole.planes || src->maxval != (int)tc->whole.maxval)
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "tile %d: samples of %dx%d, %d channels, maxval %d, not the plan's", i,
                         src->width, src->height, mmp_image_channels(src), src->maxval);
    if (recon && (mmp_image_channels(recon) != (int)tc->whole.planes ||
                  ((recon->width != (int)t.w || recon->height != (int)t.h) &&
                   (recon->width != (int)tc->whole.width ||
                    recon->height != (int)tc->whole.height))))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "tile %d: a reconstruction of %dx%d", i,
                         recon->width, recon->height);
    tc->e.img = tc->e.img_whole = src;
    tc->why[0] = 0;
    const int err = encode_tile(&tc->e, &tc->whole, (uint32_t)i, payload, len, recon);
    tc->e.img = tc->e.img_whole = NULL;
    if (err == MMP_ECANCELED)
        return mmp_error(errbuf, errlen, err, "stopped by the progress callback");
    if (err)
        return mmp_error(errbuf, errlen, err, "%s", tc->why);
    tc->tiles++;
    return 0;
}

int mmp_tile_coder_finish(mmp_tile_coder *tc, mmp_tile_totals *t, char *errbuf, size_t errlen)
{
    const encoder *e = &tc->e;
    const int err = mmp_engines_finish(&tc->e.engines, tc->why, sizeof tc->why);
    memset(t, 0, sizeof *t);
    t->tiles = tc->tiles;
    if (e->engines.eng)
        snprintf(t->engine, sizeof t->engine, "%s", e->engines.eng->name);
    t->head_steps = e->engines.head_steps;
    t->blocks = (uint64_t)e->blocks_done;
    t->dict_elements = e->dict_elements;
    t->search_seconds = e->search_s;
    t->code_seconds = e->code_s;
    for (int p = 0; p < MMP_MAX_PLANES; p++) {
        t->ssd[p] = e->ssd[p];
        t->nsamples[p] = e->nsamples[p];
    }
    return err ? mmp_error(errbuf, errlen, err, "%s", tc->why) : 0;
}

void mmp_tile_coder_free(mmp_tile_coder *tc)
{
    if (!tc)
        return;
    tear_down(&tc->e);
    free(tc);
}
