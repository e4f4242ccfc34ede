/*
 * The encoder's plan for the tiles of an image: the plan's header and its
 * tiles (mmp/enc/tiled.h), how many are coded at once, and a tile's
 * samples as an image of their own.
 */
#ifndef MMP_ENC_TILES_H
#define MMP_ENC_TILES_H

#include <stdint.h>

#include "common/container.h"
#include "mmp/enc/tiled.h"
#include "mmp/mmp.h"

/* The plan of an encode whose header is *h, and the header of a plan. */
void mmp_tiled_plan_set(mmp_tiled_plan *plan, const mmp_header *h);
void mmp_tiled_header(const mmp_tiled_plan *plan, mmp_header *h);

/*
 * How many tiles are coded at once with `threads` threads: W workers of
 * threads / W each take ntiles / W rounds (rounded up) of tiles, and a tile
 * on k threads takes about 1 / sqrt(k) of its time on one, since the ends
 * of its wavefront keep a team waiting for the few blocks of the first and
 * last steps. The fewest rounds so weighed, the most workers where several
 * do as well. On a 16-core host 24 tiles go to 12 workers, which was
 * faster than 16 of one thread each (the last round half empty) or 8 of two
 * (docs/tuning.md, "Tiles in parallel").
 */
int mmp_enc_tile_workers(uint32_t ntiles, int threads);

/* Tile t's samples of img as an image of their own (out is allocated):
 * 0 or MMP_ENOMEM. */
int mmp_enc_crop_tile(const mmp_image *img, const mmp_tile *t, mmp_image *out);

/* A tile's samples (an image of tile t's size and img's channels) into
 * their place in img. */
void mmp_enc_paste_tile(const mmp_image *tile, const mmp_tile *t, mmp_image *img);

#endif
