/*
 * The parts of the public API that encoder and decoder share: settings
 * defaults, images, PSNR. This file includes both the public header and the
 * internal ones that repeat its definitions (error codes, limits, log
 * levels, coding orders): the compiler rejects any difference between them.
 */
#include "mmp/mmp.h"

#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/error.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/metrics.h"

void mmp_default_settings(mmp_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->lambda = 10.0;
    s->engine = "auto";
    s->threads = 0;
    s->dict_cap = MMP_DEFAULT_DICT_CAP;
    s->redundancy = -1.0;
    s->order = MMP_ORDER_RASTER;
}

int mmp_image_alloc(mmp_image *img, int width, int height, int maxval)
{
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (width <= 0 || height <= 0 || maxval < 1 || maxval > 65535)
        return MMP_EINVAL;
    if (width > MMP_MAX_DIM || height > MMP_MAX_DIM || (long long)width * height > MMP_MAX_PIXELS)
        return MMP_ELIMIT;
    uint16_t *pix = calloc((size_t)width * (size_t)height, sizeof *pix);
    if (!pix)
        return MMP_ENOMEM;
    img->width = width;
    img->height = height;
    img->maxval = maxval;
    img->pix = pix;
    return MMP_OK;
}

void mmp_image_free(mmp_image *img)
{
    if (!img)
        return;
    free(img->pix);
    img->pix = NULL;
    img->width = img->height = img->maxval = 0;
}

double mmp_psnr(const mmp_image *a, const mmp_image *b)
{
    const size_t n = (size_t)a->width * a->height;
    return mmp_psnr_of_ssd(mmp_ssd(a->pix, b->pix, n), n, a->maxval);
}
