/*
 * The parts of the public API that encoder and decoder share: images,
 * PSNR, freeing the library's buffers (the settings' defaults are
 * settings.c's). This file includes both the public header and the
 * internal ones that repeat its definitions (error codes, limits, log
 * levels, coding orders): the compiler rejects any difference between them.
 */
#include "mmp/mmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/error.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/perceptual.h"

void mmp_free(void *p)
{
    free(p);
}

int mmp_image_channels(const mmp_image *img)
{
    return !img ? 0 : img->channels ? img->channels : 1;
}

int mmp_image_has_alpha(const mmp_image *img)
{
    const int ch = mmp_image_channels(img);
    return ch == 2 || ch == 4;
}

int mmp_image_alloc_channels(mmp_image *img, int width, int height, int channels, int maxval)
{
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (width <= 0 || height <= 0 || maxval < 1 || maxval > 65535 || channels < 1 ||
        channels > 4)
        return MMP_EINVAL;
    if (width > MMP_MAX_DIM || height > MMP_MAX_DIM || (long long)width * height > MMP_MAX_PIXELS)
        return MMP_ELIMIT;
    uint16_t *pix = calloc((size_t)width * (size_t)height * (size_t)channels, sizeof *pix);
    if (!pix)
        return MMP_ENOMEM;
    img->width = width;
    img->height = height;
    img->maxval = maxval;
    img->channels = channels;
    img->pix = pix;
    return MMP_OK;
}

int mmp_image_alloc(mmp_image *img, int width, int height, int maxval)
{
    return mmp_image_alloc_channels(img, width, height, 1, maxval);
}

void mmp_image_free(mmp_image *img)
{
    if (!img)
        return;
    free(img->pix);
    img->pix = NULL;
    img->width = img->height = img->maxval = img->channels = 0;
}

/* Summed squared error of channels [c0, c1) of interleaved images. */
static uint64_t ssd_channels(const mmp_image *a, const mmp_image *b, int c0, int c1)
{
    const int ch = mmp_image_channels(a);
    const size_t n = (size_t)a->width * a->height;
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = c0; k < c1; k++) {
            const int64_t d = (int64_t)a->pix[i * ch + k] - b->pix[i * ch + k];
            s += (uint64_t)(d * d);
        }
    return s;
}

/* Whether a and b are images of samples, of one size and the same
 * channels: what the PSNR needs to read both within their samples. */
static int comparable(const mmp_image *a, const mmp_image *b)
{
    return a && b && a->pix && b->pix && a->width > 0 && a->height > 0 &&
           a->width == b->width && a->height == b->height && a->maxval > 0 &&
           mmp_image_channels(a) == mmp_image_channels(b) && mmp_image_channels(a) <= 4;
}

double mmp_psnr(const mmp_image *a, const mmp_image *b)
{
    if (!comparable(a, b))
        return NAN;
    const int ch = mmp_image_channels(a);
    const size_t n = (size_t)a->width * a->height;
    if (ch == 1)
        return mmp_psnr_of_ssd(mmp_ssd(a->pix, b->pix, n), n, a->maxval);
    const int colour = ch >= 3 ? 3 : 1;
    return mmp_psnr_of_ssd(ssd_channels(a, b, 0, colour), n * colour, a->maxval);
}

double mmp_psnr_channel(const mmp_image *a, const mmp_image *b, int ch)
{
    if (!comparable(a, b) || ch < 0 || ch >= mmp_image_channels(a))
        return NAN;
    const size_t n = (size_t)a->width * a->height;
    return mmp_psnr_of_ssd(ssd_channels(a, b, ch, ch + 1), n, a->maxval);
}

/* A perceptual metric of b against a (common/perceptual.h), NAN where the
 * images differ in shape or the metric refuses them. */
typedef int (*metric_fn)(const uint16_t *a, const uint16_t *b, int w, int h, int channels,
                         int maxval, double *score);

static double perceptual(const mmp_image *a, const mmp_image *b, metric_fn fn)
{
    double score;
    if (!comparable(a, b) ||
        fn(a->pix, b->pix, a->width, a->height, mmp_image_channels(a), a->maxval, &score))
        return NAN;
    return score;
}

double mmp_ms_ssim(const mmp_image *a, const mmp_image *b)
{
    return perceptual(a, b, mmp_metric_msssim);
}

double mmp_ssimulacra2(const mmp_image *a, const mmp_image *b)
{
    return perceptual(a, b, mmp_metric_ssimulacra2);
}
