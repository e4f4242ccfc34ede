/* The encoder's plan for the tiles of an image (see tiles.h). */
#include "mmp/enc/tiles.h"

#include <math.h>
#include <string.h>

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
