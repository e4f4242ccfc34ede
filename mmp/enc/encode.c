/*
 * mmp_encode: the plan of the encode, its tiles coded by workers on
 * threads, each with a tile coder of its own (mmp/enc/encoder.c), and the
 * file put together (mmp/enc/tiled.h's steps, which mmp-enc-mpi runs over
 * processes instead).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/cores.h"
#include "common/error.h"
#include "common/metrics.h"
#include "common/timing.h"
#include "kernels/engine.h"
#include "mmp/common/colour.h"
#include "mmp/common/settings.h"
#include "mmp/enc/engine_start.h"
#include "mmp/enc/header.h"
#include "mmp/enc/tiled.h"
#include "mmp/enc/tiles.h"
#include "mmp/mmp.h"

/* The caller's settings, of whatever version, as this library's. */
static int full_settings(const mmp_settings *st, mmp_settings *full, char *errbuf, size_t errlen)
{
    if (!st)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no settings");
    const int err = mmp_settings_full(st, full);
    if (err == MMP_EINVAL)
        return mmp_error(errbuf, errlen, err,
                         "settings of %zu bytes, not set by mmp_default_settings", st->size);
    if (err)
        return mmp_error(errbuf, errlen, err,
                         "settings with a field this library does not know (a newer mmp.h)");
    return 0;
}

int mmp_tiled_plan_make(const mmp_settings *st, const mmp_image *img, mmp_tiled_plan *plan,
                        char *errbuf, size_t errlen)
{
    mmp_settings full;
    int err = full_settings(st, &full, errbuf, errlen);
    if (!err)
        err = mmp_enc_check(&full, img, errbuf, errlen);
    if (err)
        return err;
    mmp_header h;
    mmp_enc_header(&full, img, &h);
    mmp_tiled_plan_set(plan, &h);
    return 0;
}

int mmp_tiled_assemble(const mmp_settings *st, const mmp_tiled_plan *plan,
                       const uint8_t *const *payload, const size_t *len, uint8_t **out,
                       size_t *outlen, char *errbuf, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    if (st->nchunks < 0 || st->nchunks > MMP_MAX_EXTRA_CHUNKS)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "chunks: at most %d", MMP_MAX_EXTRA_CHUNKS);
    mmp_header h;
    mmp_tiled_header(plan, &h);
    mmp_extra_in extra[MMP_MAX_EXTRA_CHUNKS];
    for (int k = 0; k < st->nchunks; k++) {
        memcpy(extra[k].type, st->chunks[k].type, 4);
        extra[k].data = st->chunks[k].data;
        extra[k].len = st->chunks[k].len;
    }
    const int err = mmp_container_write(&h, payload, len, (uint32_t)mmp_tiled_count(plan), extra,
                                        (uint32_t)st->nchunks, out, outlen);
    if (err)
        return mmp_error(errbuf, errlen, err,
                         err == MMP_ENOMEM ? "out of memory" : "a tile over 4 GiB");
    return 0;
}

void mmp_tiled_stats(const mmp_tiled_plan *plan, const mmp_tile_totals *t, int n,
                     mmp_enc_stats *stats)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    mmp_layout l;
    mmp_layout_of(&h, &l);
    memset(stats, 0, sizeof *stats);
    uint64_t ssd[MMP_MAX_PLANES] = {0}, nsamples[MMP_MAX_PLANES] = {0};
    int first = -1;
    for (int k = 0; k < n; k++) {
        if (first < 0 && t[k].tiles > 0)
            first = k;
        stats->blocks += t[k].blocks;
        stats->dict_elements += t[k].dict_elements;
        stats->search_seconds += t[k].search_seconds;
        stats->code_seconds += t[k].code_seconds;
        stats->head_steps += t[k].head_steps;
        for (int p = 0; p < l.nplanes; p++) {
            ssd[p] += t[k].ssd[p];
            nsamples[p] += t[k].nsamples[p];
        }
    }
    /* The registry's name (a static string) of the first coder's engine
     * that coded a tile. */
    const mmp_engine_ops *eng = n > 0 ? mmp_engine_find(t[first < 0 ? 0 : first].engine) : NULL;
    stats->engine = eng ? eng->name : "unknown";
    stats->planes = l.nplanes;
    stats->tiles = mmp_tiled_count(plan);
    stats->tile_workers = n;
    for (int p = 0; p < l.nplanes; p++)
        stats->plane_psnr[p] = mmp_psnr_of_ssd(ssd[p], nsamples[p], l.maxv[p]);
}

/*
 * The tiles of one encode and what the workers that code them share: a
 * worker takes the next tile not taken, codes it into its payload and its
 * place in recon, and takes another until none is left or a worker failed.
 * Each tile is coded on its own, so which worker codes it, and when, cannot
 * change its bytes.
 */
typedef struct tile_work {
    const mmp_settings *st; /* the caller's */
    const mmp_image *img;
    mmp_tiled_plan plan;
    int ntiles;
    uint8_t **payload;
    size_t *plen;
    mmp_image *recon;
    _Atomic int next;     /* the next tile to take */
    _Atomic int failed;   /* take no more */
    pthread_mutex_t lock; /* the progress and the error below */
    long blocks_done, blocks_total;
    int err_tile; /* the first tile that failed (ntiles: a worker's engine) */
    int err;
    char why[512];
} tile_work;

/* A worker of the encode: its settings (the engine and threads of its
 * share) and its coder. */
typedef struct worker {
    tile_work *tw;
    mmp_settings st;
    long blocks;   /* the blocks it is expected to search, or -1 */
    long reported; /* of those it searched, the blocks counted in tw's progress */
    mmp_tile_coder *tc;
    mmp_tile_totals *totals; /* its coder's, when it finished */
    char why[512];
    pthread_t thread;
    int started;
} worker;

/* Tile i failed with err (why in the worker's errbuf), or with i ==
 * ntiles the worker's engine: kept when it is the first tile that failed.
 * Every worker stops at its next step or tile (worker_progress). */
static void record_failure(tile_work *tw, int i, int err, const char *why)
{
    atomic_store(&tw->failed, 1);
    pthread_mutex_lock(&tw->lock);
    if (!tw->err || i < tw->err_tile) {
        tw->err = err;
        tw->err_tile = i;
        snprintf(tw->why, sizeof tw->why, "%s", why);
    }
    pthread_mutex_unlock(&tw->lock);
}

/*
 * A worker's coder after each step, with the blocks it searched so far:
 * those of every worker to the caller's progress callback, one call at a
 * time, none after a failure or after it asked to stop (recorded for tile
 * 0, ahead of any other). Non-zero, which stops the coder's tile, once any
 * worker failed.
 */
static int worker_progress(void *opaque, int done, int total)
{
    worker *w = opaque;
    tile_work *tw = w->tw;
    int stop = 0;
    pthread_mutex_lock(&tw->lock);
    tw->blocks_done += done - w->reported;
    w->reported = done;
    if (tw->st->progress && !atomic_load(&tw->failed))
        stop = tw->st->progress(tw->st->progress_opaque, (int)tw->blocks_done,
                                (int)tw->blocks_total) != 0;
    pthread_mutex_unlock(&tw->lock);
    if (stop)
        record_failure(tw, 0, MMP_ECANCELED, "cancelled by the progress callback");
    return atomic_load(&tw->failed);
}

/* A worker's life: its engine, then tiles until none is left. */
static void *run_worker(void *arg)
{
    worker *w = arg;
    tile_work *tw = w->tw;
    int err = mmp_tile_coder_new(&w->st, &tw->plan, w->blocks, w->blocks >= 0, &w->tc, w->why,
                                 sizeof w->why);
    if (err) {
        record_failure(tw, tw->ntiles, err, w->why);
        return NULL;
    }
    while (!atomic_load(&tw->failed)) {
        const int i = atomic_fetch_add(&tw->next, 1);
        if (i >= tw->ntiles)
            break;
        err = mmp_tile_coder_code(w->tc, i, tw->img, &tw->payload[i], &tw->plen[i], tw->recon,
                                  w->why, sizeof w->why);
        if (err) {
            /* MMP_ECANCELED: stopped by a failure already recorded. */
            if (err != MMP_ECANCELED)
                record_failure(tw, i, err, w->why);
            return NULL;
        }
    }
    if ((err = mmp_tile_coder_finish(w->tc, w->totals, w->why, sizeof w->why)))
        record_failure(tw, tw->ntiles, err, w->why);
    return NULL;
}

int mmp_encode(const mmp_settings *st, const mmp_image *img, uint8_t **out, size_t *outlen,
               mmp_image *recon, mmp_enc_stats *stats, char *errbuf, size_t errlen)
{
    const double t0 = mmp_now_seconds();
    if (!out || !outlen)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no output buffer");
    *out = NULL;
    *outlen = 0;
    mmp_settings full;
    int err = full_settings(st, &full, errbuf, errlen);
    if (err)
        return err;
    st = &full;
    tile_work tw = {.st = st, .img = img, .recon = recon};
    if ((err = mmp_tiled_plan_make(st, img, &tw.plan, errbuf, errlen)))
        return err;
    tw.ntiles = mmp_tiled_count(&tw.plan);
    for (int i = 0; i < tw.ntiles; i++)
        tw.blocks_total += mmp_tiled_tile_blocks(&tw.plan, i);
    atomic_init(&tw.next, 0);
    atomic_init(&tw.failed, 0);
    pthread_mutex_init(&tw.lock, NULL);
    /* Several tiles at once on an engine that runs threads (mmp/enc/engine_start.h). */
    const mmp_engine_ops *tile_eng = tw.ntiles > 1 ? mmp_engines_tile_engine(st) : NULL;
    const int threads = st->threads > 0 ? st->threads : mmp_spare_cores();
    const int nw = tile_eng ? mmp_enc_tile_workers((uint32_t)tw.ntiles, threads) : 1;
    tw.payload = calloc((size_t)tw.ntiles, sizeof *tw.payload);
    tw.plen = calloc((size_t)tw.ntiles, sizeof *tw.plen);
    worker *w = calloc((size_t)nw, sizeof *w);
    mmp_tile_totals *totals = calloc((size_t)nw, sizeof *totals);
    if (!tw.payload || !tw.plen || !w || !totals)
        err = mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    if (!err && recon &&
        (err = mmp_image_alloc_channels(recon, img->width, img->height,
                                        mmp_tiled_channels(&tw.plan), img->maxval)))
        err = mmp_error(errbuf, errlen, err, "out of memory");
    for (int k = 0; !err && k < nw; k++) {
        w[k].tw = &tw;
        w[k].totals = &totals[k];
        w[k].st = *st;
        if (nw > 1) {
            w[k].st.engine = tile_eng->name;
            w[k].st.threads = threads / nw + (k < threads % nw);
        }
        w[k].st.progress = worker_progress;
        w[k].st.progress_opaque = &w[k];
        /* One worker searches every block; one of several does not know
         * how many it will. */
        w[k].blocks = nw == 1 ? tw.blocks_total : -1;
    }
    if (!err) {
        for (int k = 1; k < nw; k++)
            w[k].started = pthread_create(&w[k].thread, NULL, run_worker, &w[k]) == 0;
        run_worker(&w[0]);
        for (int k = 1; k < nw; k++)
            if (w[k].started)
                pthread_join(w[k].thread, NULL);
        if (tw.err)
            err = mmp_error(errbuf, errlen, tw.err, "%s", tw.why);
    }
    if (!err)
        err = mmp_tiled_assemble(st, &tw.plan, (const uint8_t *const *)tw.payload, tw.plen, out,
                                 outlen, errbuf, errlen);
    if (err && recon)
        mmp_image_free(recon);
    if (!err && stats)
        mmp_tiled_stats(&tw.plan, totals, nw, stats);
    for (int i = 0; tw.payload && i < tw.ntiles; i++)
        free(tw.payload[i]);
    free(tw.payload);
    free(tw.plen);
    for (int k = 0; w && k < nw; k++)
        mmp_tile_coder_free(w[k].tc);
    free(w);
    free(totals);
    pthread_mutex_destroy(&tw.lock);
    if (!err && stats)
        stats->seconds = mmp_now_seconds() - t0;
    return err;
}
