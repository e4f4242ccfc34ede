/* The encoder's plan for the tiles of an image (see tiles.h and tiled.h). */
#include "mmp/enc/tiles.h"

#include <math.h>
#include <string.h>

#include "common/scales.h"
#include "mmp/common/colour.h"

_Static_assert(sizeof(mmp_header) <= sizeof(((mmp_tiled_plan *)0)->opaque),
               "mmp_tiled_plan holds a header");

void mmp_tiled_plan_set(mmp_tiled_plan *plan, const mmp_header *h)
{
    memset(plan, 0, sizeof *plan);
    memcpy(plan->opaque, h, sizeof *h);
}

void mmp_tiled_header(const mmp_tiled_plan *plan, mmp_header *h)
{
    memcpy(h, plan->opaque, sizeof *h);
}

int mmp_tiled_count(const mmp_tiled_plan *plan)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    uint32_t cols, rows;
    mmp_tile_grid(&h, &cols, &rows);
    return (int)(cols * rows);
}

void mmp_tiled_rect(const mmp_tiled_plan *plan, int i, int *x, int *y, int *w, int *h)
{
    mmp_header hd;
    mmp_tiled_header(plan, &hd);
    mmp_tile t;
    mmp_tile_rect(&hd, (uint32_t)i, &t);
    *x = (int)t.x;
    *y = (int)t.y;
    *w = (int)t.w;
    *h = (int)t.h;
}

long mmp_tiled_tile_blocks(const mmp_tiled_plan *plan, int i)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    mmp_tile t;
    mmp_tile_rect(&h, (uint32_t)i, &t);
    h.width = t.w;
    h.height = t.h;
    mmp_layout l;
    mmp_layout_of(&h, &l);
    if (h.residual == MMP_RESIDUAL_ALONE)
        return 0;
    long n = 0;
    for (int p = 0; p < l.nplanes; p++)
        if (!(p == l.nplanes - 1 && l.alpha == MMP_ALPHA_EXACT))
            n += (long)((l.w[p] + MMP_B - 1) / MMP_B) * ((l.h[p] + MMP_B - 1) / MMP_B);
    return n;
}

int mmp_tiled_channels(const mmp_tiled_plan *plan)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    return (int)h.planes;
}

int mmp_tiled_maxval(const mmp_tiled_plan *plan)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    return (int)h.maxval;
}

int mmp_tiled_crop(const mmp_tiled_plan *plan, const mmp_image *img, int i, mmp_image *tile)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    mmp_tile t;
    mmp_tile_rect(&h, (uint32_t)i, &t);
    return mmp_enc_crop_tile(img, &t, tile);
}

void mmp_tiled_paste(const mmp_tiled_plan *plan, int i, const mmp_image *tile, mmp_image *img)
{
    mmp_header h;
    mmp_tiled_header(plan, &h);
    mmp_tile t;
    mmp_tile_rect(&h, (uint32_t)i, &t);
    mmp_enc_paste_tile(tile, &t, img);
}

int mmp_enc_tile_workers(uint32_t ntiles, int threads)
{
    const int most = ntiles < (uint32_t)threads ? (int)ntiles : threads;
    int best = 1;
    double best_cost = (double)ntiles / sqrt((double)threads);
    for (int w = 2; w <= most; w++) {
        const double rounds = (double)((ntiles + (uint32_t)w - 1) / (uint32_t)w);
        const double cost = rounds / sqrt((double)threads / w);
        if (cost <= best_cost * (1 + 1e-9)) {
            best_cost = cost;
            best = w;
        }
    }
    return best;
}

int mmp_enc_crop_tile(const mmp_image *img, const mmp_tile *t, mmp_image *out)
{
    const int ch = mmp_image_channels(img);
    const int err = mmp_image_alloc_channels(out, (int)t->w, (int)t->h, ch, img->maxval);
    if (err)
        return err;
    for (uint32_t y = 0; y < t->h; y++)
        memcpy(out->pix + (size_t)y * t->w * (size_t)ch,
               img->pix + ((size_t)(t->y + y) * img->width + t->x) * (size_t)ch,
               sizeof(uint16_t) * t->w * (size_t)ch);
    return 0;
}

void mmp_enc_paste_tile(const mmp_image *tile, const mmp_tile *t, mmp_image *img)
{
    const size_t ch = (size_t)mmp_image_channels(img), row = t->w * ch;
    for (uint32_t y = 0; y < t->h; y++)
        memcpy(img->pix + ((size_t)(t->y + y) * img->width + t->x) * ch, tile->pix + y * row,
               sizeof(uint16_t) * row);
}
