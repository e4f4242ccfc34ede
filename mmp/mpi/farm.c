/* Rank 0's encoder over the ranks, and the other ranks' relays (farm.h). */
#include "mmp/mpi/farm.h"

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmp/mpi/env.h"

/* A rank during a job, as rank 0 sees it. */
typedef struct peer {
    int busy_tile; /* the tile it codes, or -1 */
    int finishing; /* sent DONE, its FINISHED not back yet */
    int tiles;     /* coded */
    double coding; /* its coder's seconds on them */
    double last;   /* when its last answer came */
    mmp_tile_totals totals;
} peer;

/* One encode over the ranks. */
typedef struct job_state {
    mpi_farm *farm;
    const mmp_settings *st;
    const mmp_image *img;
    mmp_tiled_plan plan;
    int job, ntiles, next;
    int *order; /* the tiles in the order they are handed out */
    long blocks_done, blocks_total;
    uint8_t **payload;
    size_t *plen;
    mmp_image *recon;
    peer *peers;
    int stopped; /* a failure: no more tiles, STOP to the busy */
    int err;
    char why[512];
    double t0;
} job_state;

static void send_to(job_state *js, int r, const mpi_frame *f, const void *d0, const void *d1)
{
    if (r == 0)
        mpi_coder_send(js->farm->coder, f, d0, d1);
    else
        wire_mpi_send(r, f, d0, d1);
}

/* The first failure of the job is its error; the ranks that code a tile
 * are told to stop. */
static void fail(job_state *js, int err, const char *fmt, ...)
{
    if (!js->err) {
        js->err = err;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(js->why, sizeof js->why, fmt, ap);
        va_end(ap);
    }
    if (js->stopped)
        return;
    js->stopped = 1;
    const mpi_frame stop = {.kind = FRAME_STOP, .job = js->job};
    for (int r = 0; r < js->farm->ranks; r++)
        if (js->peers[r].busy_tile >= 0)
            send_to(js, r, &stop, NULL, NULL);
}

/* A guess of tile i's coding time: its samples, each weighed by 8 plus its
 * mean absolute difference from its left neighbour on the 8-bit scale.
 * On the pictures of images/ at --speed 4 the time of a picture follows
 * that (moon the fastest, grass the slowest), not closely at every lambda,
 * and it decides only which tile goes first, never a tile's bytes. */
static double tile_cost(const job_state *js, int i)
{
    int x, y, w, h;
    mmp_tiled_rect(&js->plan, i, &x, &y, &w, &h);
    const mmp_image *img = js->img;
    const int ch = mmp_image_channels(img);
    double diff = 0;
    for (int r = y; r < y + h; r++) {
        const uint16_t *row = img->pix + ((size_t)r * img->width + (size_t)x) * (size_t)ch;
        for (int k = ch; k < w * ch; k++)
            diff += abs((int)row[k] - (int)row[k - ch]);
    }
    const double samples = (double)w * h * ch;
    return samples * (8.0 + diff / samples * 255.0 / img->maxval);
}

static const double *sort_costs; /* for by_cost, while js->order is sorted */

static int by_cost(const void *a, const void *b)
{
    const int i = *(const int *)a, j = *(const int *)b;
    if (sort_costs[i] != sort_costs[j])
        return sort_costs[i] > sort_costs[j] ? -1 : 1;
    return i - j;
}

/* The order of the tiles: the costliest first by tile_cost (the longest
 * first, as in scheduling jobs on machines), so that the last round holds
 * the cheapest tiles and the ranks end close together. 0 or MMP_ENOMEM. */
static int order_tiles(job_state *js)
{
    double *cost = malloc(sizeof *cost * (size_t)js->ntiles);
    js->order = malloc(sizeof *js->order * (size_t)js->ntiles);
    if (!cost || !js->order) {
        free(cost);
        return MMP_ENOMEM;
    }
    for (int i = 0; i < js->ntiles; i++) {
        cost[i] = tile_cost(js, i);
        js->order[i] = i;
    }
    sort_costs = cost;
    qsort(js->order, (size_t)js->ntiles, sizeof *js->order, by_cost);
    sort_costs = NULL;
    free(cost);
    return 0;
}

/* Rank r is free: the next tile, or DONE when none is left or the job
 * failed. */
static void give_tile(job_state *js, int r)
{
    peer *p = &js->peers[r];
    if (!js->stopped && js->next < js->ntiles) {
        const int i = js->order[js->next++];
        mmp_image part = {0};
        if (mmp_tiled_crop(&js->plan, js->img, i, &part)) {
            fail(js, MMP_ENOMEM, "out of memory");
        } else {
            const mpi_frame f = {.kind = FRAME_TILE,
                                 .job = js->job,
                                 .tile = i,
                                 .width = part.width,
                                 .height = part.height,
                                 .channels = mmp_image_channels(&part),
                                 .maxval = part.maxval,
                                 .len = {(uint64_t)part.width * (uint64_t)part.height *
                                         (uint64_t)mmp_image_channels(&part) * sizeof(uint16_t)}};
            p->busy_tile = i;
            send_to(js, r, &f, part.pix, NULL);
            mmp_image_free(&part);
            return;
        }
    }
    const mpi_frame done = {.kind = FRAME_DONE, .job = js->job};
    p->finishing = 1;
    send_to(js, r, &done, NULL, NULL);
}

static void take_result(job_state *js, int r, mpi_message *m)
{
    const mpi_frame *f = &m->f;
    const int i = f->tile;
    peer *p = &js->peers[r];
    int x, y, w, h;
    mmp_tiled_rect(&js->plan, i >= 0 && i < js->ntiles ? i : 0, &x, &y, &w, &h);
    const uint64_t rec_bytes =
        (uint64_t)w * (uint64_t)h * (uint64_t)mmp_tiled_channels(&js->plan) * sizeof(uint16_t);
    if (i < 0 || i >= js->ntiles || i != p->busy_tile || js->payload[i] || !m->data[0] ||
        f->len[1] != (js->recon ? rec_bytes : 0)) {
        p->busy_tile = -1;
        fail(js, MMP_EINVAL, "rank %d: an answer for tile %d that was not asked for", r, i);
        return;
    }
    p->busy_tile = -1;
    p->tiles++;
    p->coding += f->seconds;
    js->payload[i] = m->data[0];
    js->plen[i] = (size_t)f->len[0];
    m->data[0] = NULL;
    if (js->recon) {
        const mmp_image t = {.width = w,
                             .height = h,
                             .maxval = js->img->maxval,
                             .channels = mmp_tiled_channels(&js->plan),
                             .pix = m->data[1]};
        mmp_tiled_paste(&js->plan, i, &t, js->recon);
    }
    js->blocks_done += mmp_tiled_tile_blocks(&js->plan, i);
    const mmp_settings *st = js->st;
    if (st->progress && !js->stopped &&
        st->progress(st->progress_opaque, (int)js->blocks_done, (int)js->blocks_total))
        fail(js, MMP_ECANCELED, "cancelled by the progress callback");
}

/* An answer of rank r. */
static void handle(job_state *js, int r, mpi_message *m)
{
    const mpi_frame *f = &m->f;
    peer *p = &js->peers[r];
    if (f->job != js->job || !f->kind)
        return; /* an answer of an earlier job, or none */
    p->last = wire_seconds();
    if (f->kind == FRAME_RESULT) {
        take_result(js, r, m);
        give_tile(js, r);
    } else if (f->kind == FRAME_ERROR) {
        p->busy_tile = -1;
        /* After STOP a tile ends so; the failure that caused it is kept. */
        if (f->code != MMP_ECANCELED || !js->stopped)
            fail(js, f->code ? f->code : MMP_EENGINE, "rank %d, tile %d: %s", r, f->tile, f->why);
        give_tile(js, r);
    } else if (f->kind == FRAME_FINISHED) {
        p->finishing = 0;
        p->totals = f->totals;
        if (f->code)
            fail(js, f->code, "rank %d: %s", r, f->why);
    }
}

/* The next answer from any rank: its own coder's, or one over MPI. */
static void next_answer(job_state *js, mpi_message *m, int *from)
{
    mpi_coder *c = js->farm->coder;
    for (;;) {
        if (mpi_coder_ready(c, 0)) {
            mpi_coder_recv(c, m);
            *from = 0;
            return;
        }
        if (js->farm->ranks > 1 && wire_mpi_ready(MPI_ANY_SOURCE, from)) {
            wire_mpi_recv(*from, m, from);
            return;
        }
        if (!mpi_coder_ready(c, 1) && c->dead)
            wire_nap();
    }
}

static int waiting(const job_state *js)
{
    for (int r = 0; r < js->farm->ranks; r++)
        if (js->peers[r].busy_tile >= 0 || js->peers[r].finishing)
            return 1;
    return 0;
}

/* -v: what each rank did, at MMP_LOG_INFO. */
static void log_ranks(const job_state *js, double end)
{
    const mmp_settings *st = js->st;
    if (!st->verbose || !st->log)
        return;
    for (int r = 0; r < js->farm->ranks; r++) {
        const peer *p = &js->peers[r];
        char line[256];
        snprintf(line, sizeof line,
                 "rank %d: %d tiles, %.3f s coding them, %.3f s of the encode's %.3f s idle "
                 "after its last%s%s",
                 r, p->tiles, p->coding, p->tiles ? end - p->last : end - js->t0, end - js->t0,
                 p->tiles ? ", engine " : "", p->tiles ? p->totals.engine : "");
        st->log(st->log_opaque, MMP_LOG_INFO, line);
    }
}

int mpi_farm_encode(void *opaque, const mmp_settings *st, const mmp_image *img, uint8_t **out,
                    size_t *outlen, mmp_image *recon, mmp_enc_stats *stats, char *errbuf,
                    size_t errlen)
{
    mpi_farm *farm = opaque;
    job_state js = {.farm = farm, .st = st, .img = img, .t0 = wire_seconds()};
    *out = NULL;
    *outlen = 0;
    int err = mmp_tiled_plan_make(st, img, &js.plan, errbuf, errlen);
    if (err)
        return err;
    js.job = ++farm->job;
    js.ntiles = mmp_tiled_count(&js.plan);
    for (int i = 0; i < js.ntiles; i++)
        js.blocks_total += mmp_tiled_tile_blocks(&js.plan, i);
    js.payload = calloc((size_t)js.ntiles, sizeof *js.payload);
    js.plen = calloc((size_t)js.ntiles, sizeof *js.plen);
    js.peers = calloc((size_t)farm->ranks, sizeof *js.peers);
    mmp_tile_totals *totals = calloc((size_t)farm->ranks, sizeof *totals);
    if (!js.payload || !js.plen || !js.peers || !totals || order_tiles(&js) ||
        (recon && mmp_image_alloc_channels(recon, img->width, img->height,
                                           mmp_tiled_channels(&js.plan), img->maxval))) {
        free(js.order);
        free(js.payload);
        free(js.plen);
        free(js.peers);
        free(totals);
        snprintf(errbuf, errlen, "out of memory");
        return MMP_ENOMEM;
    }
    js.recon = recon;
    mpi_frame jf = {.kind = FRAME_JOB,
                    .job = js.job,
                    .ranks = farm->ranks,
                    .want_recon = recon != NULL,
                    .st = *st,
                    .plan = js.plan};
    for (int r = 0; r < farm->ranks; r++) {
        js.peers[r].busy_tile = -1;
        jf.rank = r;
        jf.local_rank = r == 0 ? farm->local_rank : 0; /* a relay puts its own */
        send_to(&js, r, &jf, NULL, NULL);
    }
    for (int r = 0; r < farm->ranks; r++)
        give_tile(&js, r);
    while (waiting(&js)) {
        mpi_message m;
        int from = 0;
        next_answer(&js, &m, &from);
        if (from >= 0 && from < farm->ranks)
            handle(&js, from, &m);
        mpi_message_free(&m);
    }
    err = js.err;
    if (err)
        snprintf(errbuf, errlen, "%s", js.why);
    else
        err = mmp_tiled_assemble(st, &js.plan, (const uint8_t *const *)js.payload, js.plen, out,
                                 outlen, errbuf, errlen);
    if (!err) {
        const double end = wire_seconds();
        log_ranks(&js, end);
        if (stats) {
            for (int r = 0; r < farm->ranks; r++)
                totals[r] = js.peers[r].totals;
            mmp_tiled_stats(&js.plan, totals, farm->ranks, stats);
            stats->seconds = end - js.t0;
        }
    } else if (recon) {
        mmp_image_free(recon);
    }
    for (int i = 0; i < js.ntiles; i++)
        free(js.payload[i]);
    free(js.order);
    free(js.payload);
    free(js.plen);
    free(js.peers);
    free(totals);
    return err;
}

void mpi_farm_quit(const mpi_farm *f)
{
    const mpi_frame q = {.kind = FRAME_QUIT};
    for (int r = 1; r < f->ranks; r++)
        wire_mpi_send(r, &q, NULL, NULL);
}

void mpi_relay(mpi_coder *c, int rank, int local_rank)
{
    int results = 0;
    for (;;) {
        mpi_message m;
        if (wire_mpi_ready(0, NULL)) {
            wire_mpi_recv(0, &m, NULL);
            const int quit = m.f.kind == FRAME_QUIT;
            if (m.f.kind == FRAME_JOB)
                m.f.local_rank = local_rank;
            if (!quit)
                mpi_coder_send(c, &m.f, m.data[0], m.data[1]);
            mpi_message_free(&m);
            if (quit)
                return;
        } else if (mpi_coder_ready(c, 1)) {
            mpi_coder_recv(c, &m);
            if (m.f.kind == FRAME_RESULT && ++results == 1 && mpi_test_rank("kill-rank") == rank)
                raise(SIGKILL);
            if (m.f.kind) {
                m.f.rank = rank;
                wire_mpi_send(0, &m.f, m.data[0], m.data[1]);
            }
            mpi_message_free(&m);
        } else if (c->dead) {
            wire_nap();
        }
    }
}
