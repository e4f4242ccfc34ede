/*
 * An encode cut at its tiles, for a program that codes the tiles of one
 * image in several processes, on several machines (mmp-enc-mpi), and puts
 * the file together in one: the same steps that mmp_encode runs on its
 * threads, so that the file is byte for byte mmp_encode's. Every tile is
 * coded on its own (docs/format.md, section 2); what depends on the whole
 * image (the settings' check, the header, the ancillary chunks, the
 * statistics) is the plan's and the assembly's.
 *
 *   mmp_tiled_plan_make   the settings and the image checked, the header made
 *   mmp_tile_coder_*      an engine, and the tiles given to it one at a time
 *   mmp_tiled_assemble    the file from every tile's bytes
 *   mmp_tiled_stats       mmp_enc_stats from the coders' totals
 *
 * Internal to the build: neither in mmp.h nor exported by libmmp.so (a
 * program links libmmp.a). The plan and the totals are plain bytes that
 * one process may send to another of the same build; this header stands
 * alone (mmp/mmp.h and the C library), so that a front end may include it.
 */
#ifndef MMP_ENC_TILED_H
#define MMP_ENC_TILED_H

#include <stddef.h>
#include <stdint.h>

#include "mmp/mmp.h"

/* The plan of an encode: its header (opaque; mmp/enc/tiles.c). */
typedef struct mmp_tiled_plan {
    uint64_t opaque[16];
} mmp_tiled_plan;

/*
 * The settings st and the image img checked as mmp_encode checks them, and
 * the header of their file into *plan (the image's size, its channels and
 * maxval and the settings decide it, not its samples). Returns 0 or
 * mmp_encode's error, with its line in errbuf.
 */
int mmp_tiled_plan_make(const mmp_settings *st, const mmp_image *img, mmp_tiled_plan *plan,
                        char *errbuf, size_t errlen);

/* The tiles of the plan, row by row; tile i's place in the image; the
 * blocks its search visits (its share of a progress bar's total). */
int mmp_tiled_count(const mmp_tiled_plan *plan);
void mmp_tiled_rect(const mmp_tiled_plan *plan, int i, int *x, int *y, int *w, int *h);
long mmp_tiled_tile_blocks(const mmp_tiled_plan *plan, int i);

/* The image's channels and maxval, as the plan's header holds them (what
 * a tile's samples must have). */
int mmp_tiled_channels(const mmp_tiled_plan *plan);
int mmp_tiled_maxval(const mmp_tiled_plan *plan);

/* Tile i's samples of img (the image of the plan) as an image of their
 * own, allocated into *tile; and back: a tile's samples (its
 * reconstruction) into their place in img. 0 or MMP_ENOMEM. */
int mmp_tiled_crop(const mmp_tiled_plan *plan, const mmp_image *img, int i, mmp_image *tile);
void mmp_tiled_paste(const mmp_tiled_plan *plan, int i, const mmp_image *tile, mmp_image *img);

/* What a coder's tiles add to mmp_enc_stats. */
typedef struct mmp_tile_totals {
    int tiles;       /* tiles coded */
    char engine[32]; /* the engine that searched their last steps */
    long head_steps; /* mmp_enc_stats' */
    uint64_t blocks, dict_elements;
    double search_seconds, code_seconds;
    uint64_t ssd[4], nsamples[4]; /* squared errors of each plane, and its samples */
} mmp_tile_totals;

/*
 * A coder of a plan's tiles: settings (checked by mmp_tiled_plan_make; they
 * and their strings and callbacks must live as long as the coder) and an
 * engine, started here. `blocks` is how many blocks it is expected to
 * search, for -e auto's choice (mmp_settings.engine), or -1 when unknown;
 * with `exact` set it will search exactly those, and its engine may go
 * after the last (mmp/enc/engine_start.h, mmp_engines_release).
 * st->progress, when set, is called after each step of blocks with the
 * blocks the coder has searched and the plan's total; a non-zero return
 * stops the tile being coded (MMP_ECANCELED). st->chunks are not read.
 * Returns 0, or an error with its line in errbuf (*tc NULL).
 */
typedef struct mmp_tile_coder mmp_tile_coder;
int mmp_tile_coder_new(const mmp_settings *st, const mmp_tiled_plan *plan, long blocks, int exact,
                       mmp_tile_coder **tc, char *errbuf, size_t errlen);

/*
 * Tile i from `src`: the whole image, or tile i's samples alone (an image of
 * its size). Its bytes into *payload (free() them) and *len; with recon not
 * NULL its reconstruction into recon, an image the caller allocated with
 * the plan's channels: of the tile's size, or of the image's (the tile in
 * its place). Returns 0 or an error with its line in errbuf.
 */
int mmp_tile_coder_code(mmp_tile_coder *tc, int i, const mmp_image *src, uint8_t **payload,
                        size_t *len, mmp_image *recon, char *errbuf, size_t errlen);

/* After the last tile: the coder's totals into *t; an error of an engine
 * named that never started (mmp/enc/engine_start.h) is returned here. */
int mmp_tile_coder_finish(mmp_tile_coder *tc, mmp_tile_totals *t, char *errbuf, size_t errlen);
void mmp_tile_coder_free(mmp_tile_coder *tc);

/*
 * The file of the plan from every tile's bytes, payload[i] of len[i] for
 * each of its tiles, with st->chunks as its ancillary chunks: the bytes
 * mmp_encode writes. *out (free() it) holds *outlen bytes. Returns 0 or an
 * error with its line in errbuf.
 */
int mmp_tiled_assemble(const mmp_settings *st, const mmp_tiled_plan *plan,
                       const uint8_t *const *payload, const size_t *len, uint8_t **out,
                       size_t *outlen, char *errbuf, size_t errlen);

/* *stats from the totals of n coders (those that coded no tile count for
 * nothing); stats->seconds is left 0, for the caller's wall time. */
void mmp_tiled_stats(const mmp_tiled_plan *plan, const mmp_tile_totals *t, int n,
                     mmp_enc_stats *stats);

#endif
