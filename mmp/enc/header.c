/* The encoder's settings checked, and turned into the file's header
 * (mmp/enc/header.h). */
#include "mmp/enc/header.h"

#include <math.h>
#include <string.h>

#include "common/error.h"
#include "common/limits.h"
#include "kernels/engine.h"
#include "mmp/common/colour.h"
#include "mmp/common/order.h"
#include "mmp/enc/rct_choice.h"
#include "mmp/enc/search.h"

_Static_assert(MMP_MAX_SPEED == MMP_SEARCH_MAX_SPEED, "mmp.h and mmp/enc/search.h disagree");

int mmp_enc_check(const mmp_settings *st, const mmp_image *img, char *errbuf, size_t errlen)
{
    if (!img || !img->pix || img->width < 1 || img->height < 1 || img->maxval < 1 ||
        img->maxval > 65535)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "invalid image");
    if (img->channels < 0 || img->channels > 4)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "invalid image: %d channels", img->channels);
    if (img->width > MMP_MAX_DIM || img->height > MMP_MAX_DIM ||
        (long long)img->width * img->height > MMP_MAX_PIXELS)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "image too large: %dx%d", img->width,
                         img->height);
    /* Every sample in [0, maxval] (mmp_image): the lossless stage indexes
     * tables by sample value. */
    const size_t nsamples = (size_t)img->width * img->height * (size_t)mmp_image_channels(img);
    for (size_t i = 0; i < nsamples; i++)
        if (img->pix[i] > img->maxval)
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "invalid image: sample %u above maxval %d (pixel %zu, channel %zu)",
                             (unsigned)img->pix[i], img->maxval,
                             i / (size_t)mmp_image_channels(img),
                             i % (size_t)mmp_image_channels(img));
    if (!(st->lambda >= 0 && st->lambda <= 1e6))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "lambda must be between 0 and 1000000");
    if (st->threads < 0 || st->threads > MMP_MAX_THREADS)
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "threads must be between 0 (the engine's default) and %d",
                         MMP_MAX_THREADS);
    if (st->restoration != 0 && st->restoration != 1)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "restoration must be 0 or 1, not %d",
                         st->restoration);
    if (st->dct != 0 && st->dct != 1)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "dct must be 0 or 1, not %d", st->dct);
    if (st->deblocking != 0 && st->deblocking != -1)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "deblocking must be 0 or -1, not %d",
                         st->deblocking);
    if (st->residual_mix != 0 && st->residual_mix != -1)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "residual_mix must be 0 or -1, not %d",
                         st->residual_mix);
    if (st->residual_context != 0 && st->residual_context != -1)
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "residual_context must be 0 or -1, not %d", st->residual_context);
    if (st->tile_width < 0 || st->tile_height < 0 ||
        (st->tile_width && (st->tile_width % 16 || st->tile_width < MMP_MIN_TILE ||
                            st->tile_width > MMP_MAX_TILE)) ||
        (st->tile_height && (st->tile_height % 16 || st->tile_height < MMP_MIN_TILE ||
                             st->tile_height > MMP_MAX_TILE)))
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "tile sides must be 0 (auto) or multiples of 16 from %d to %d",
                         MMP_MIN_TILE, MMP_MAX_TILE);
    if (st->nchunks < 0 || st->nchunks > MMP_MAX_EXTRA_CHUNKS || (st->nchunks && !st->chunks))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "chunks: at most %d, and a list for them",
                         MMP_MAX_EXTRA_CHUNKS);
    for (int i = 0; i < st->nchunks; i++)
        if (!mmp_chunk_type_valid(st->chunks[i].type) ||
            !mmp_chunk_ancillary(st->chunks[i].type) ||
            (uint64_t)st->chunks[i].len > MMP_MAX_CHUNK ||
            (!st->chunks[i].data && st->chunks[i].len))
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "chunk %d: an ancillary type is four letters, the first "
                             "lower-case, with data of at most 4 GiB", i);
    if (st->head_start < -1)
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "head start must be -1 (auto), 0 (off) or a number of steps, not %d",
                         st->head_start);
    if (!(st->redundancy < 0 || st->redundancy <= 65535.0))
        return mmp_error(errbuf, errlen, MMP_EINVAL,
                         "redundancy threshold must be between 0 and 65535");
    if (st->speed < 0 || st->speed > MMP_MAX_SPEED)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "speed must be between 0 and %d",
                         MMP_MAX_SPEED);
    if (!mmp_order_name(st->order))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown coding order %d", st->order);
    if (st->dict_cap != 0 && (st->dict_cap < MMP_MIN_DICT_CAP || st->dict_cap > MMP_MAX_DICT_CAP))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "dictionary size must be between %d and %d",
                         MMP_MIN_DICT_CAP, MMP_MAX_DICT_CAP);
    if (mmp_image_channels(img) >= 3) {
        if (st->transform != MMP_TRANSFORM_AUTO && st->transform != MMP_TRANSFORM_YCOCG_R &&
            st->transform != MMP_TRANSFORM_YCBCR && st->transform != MMP_TRANSFORM_RGB &&
            st->transform != MMP_TRANSFORM_RCT)
            return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown colour transform %d",
                             st->transform);
        if (st->transform == MMP_TRANSFORM_RCT &&
            (st->max_error != 0 || img->maxval > MMP_YCOCG_MAX_MAXVAL))
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "the reversible colour transforms are for lossless files of "
                             "maxval up to %d",
                             MMP_YCOCG_MAX_MAXVAL);
        if (st->transform == MMP_TRANSFORM_YCOCG_R && img->maxval > MMP_YCOCG_MAX_MAXVAL)
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "YCoCg-R takes maxval up to %d, not %d (use YCbCr)",
                             MMP_YCOCG_MAX_MAXVAL, img->maxval);
        if (st->chroma != MMP_CHROMA_444 && st->chroma != MMP_CHROMA_420)
            return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown chroma sampling %d", st->chroma);
        if (!(st->chroma_lambda > 0 && st->chroma_lambda <= 1e6))
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "chroma lambda factor must be above 0 and at most 1000000");
    }
    if (st->max_error < -1 || st->max_error > MMP_MAX_ERROR)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "max error must be between 0 and %d",
                         MMP_MAX_ERROR);
    if (st->residual != MMP_RESIDUAL_AUTO && st->residual != MMP_RESIDUAL_AFTER_MMP &&
        st->residual != MMP_RESIDUAL_ALONE)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown residual coding %d", st->residual);
    if (st->max_error >= 0 && mmp_image_channels(img) >= 3) {
        /* The bound holds on the planes; only these transforms carry it to RGB. */
        if (st->chroma != MMP_CHROMA_444)
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "lossless and near-lossless coding need 4:4:4 chroma");
        if (st->transform == MMP_TRANSFORM_YCBCR ||
            (st->transform == MMP_TRANSFORM_YCOCG_R && st->max_error > 0))
            return mmp_error(errbuf, errlen, MMP_EINVAL,
                             "%s does not keep the error bound: use the RGB transform%s",
                             st->transform == MMP_TRANSFORM_YCBCR ? "YCbCr" : "YCoCg-R",
                             st->max_error > 0 ? "" : " or YCoCg-R");
    }
    if (mmp_image_has_alpha(img) && st->alpha != MMP_ALPHA_EXACT && st->alpha != MMP_ALPHA_MMP)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown alpha coding %d", st->alpha);
    const char *name = st->engine ? st->engine : "auto";
    if (strcmp(name, "auto") != 0 && !mmp_engine_find(name))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown engine '%s' (known: %s)", name,
                         mmp_engine_names());
    return 0;
}

/* Largest lambda_q8 the search is given: J = (D << 16) + lambda_q8 * R stays
 * far inside 64 bits (R of a block is below 2^21 in 1/256 bit). */
#define MAX_SEARCH_LAMBDA_Q8 ((int64_t)1 << 40)

int64_t mmp_enc_scaled_lambda_q8(int64_t lambda_q8, int maxval)
{
    if (maxval == 255)
        return lambda_q8;
    const double s = (double)maxval / 255.0;
    const double v = (double)lambda_q8 * s * s;
    return v < (double)MAX_SEARCH_LAMBDA_Q8 ? llround(v) : MAX_SEARCH_LAMBDA_Q8;
}

/* The default redundancy threshold, min(lambda / 4, 8) on the 8-bit scale
 * (dict/dict.c), brought to the image's scale. */
static uint32_t scaled_redund_q4(uint32_t lambda_q8, int maxval)
{
    if (maxval == 255)
        return mmp_redund_for_lambda(lambda_q8);
    const double s = (double)maxval / 255.0;
    const int64_t q4 = (mmp_enc_scaled_lambda_q8(lambda_q8, maxval) + 32) / 64, cap = llround(128 * s * s);
    return (uint32_t)(q4 < cap ? q4 : cap);
}

/* A tile side: the one given, else (0) the side of equal tiles, a multiple
 * of 16, of at most MMP_AUTO_TILE that cover `size` (one tile up to it). */
static uint32_t tile_side(int given, int size)
{
    if (given)
        return (uint32_t)given;
    const int n = (size + MMP_AUTO_TILE - 1) / MMP_AUTO_TILE;
    const int side = ((size + n - 1) / n + 15) / 16 * 16;
    return (uint32_t)(side < MMP_MIN_TILE ? MMP_MIN_TILE : side);
}

void mmp_enc_header(const mmp_settings *st, const mmp_image *img, mmp_header *h)
{
    const uint32_t lambda_q8 = (uint32_t)llround(st->lambda * 256.0);
    const int ch = mmp_image_channels(img);
    memset(h, 0, sizeof *h);
    h->width = img->width;
    h->height = img->height;
    h->maxval = img->maxval;
    h->planes = (uint32_t)ch;
    h->log2_block = MMP_LOG2B;
    h->log2_pmin = MMP_LOG2_PMIN;
    mmp_search_speed sp;
    mmp_search_speed_preset(st->speed, &sp);
    h->dict_cap = (uint32_t)(st->dict_cap ? st->dict_cap : sp.dict_cap);
    h->redund_q4 = st->redundancy < 0 ? scaled_redund_q4(lambda_q8, img->maxval)
                                          : (uint32_t)llround(st->redundancy * 16.0);
    h->lambda_q8 = lambda_q8;
    h->order = (uint32_t)st->order;
    int transform = st->transform;
    if (transform == MMP_TRANSFORM_AUTO && st->max_error >= 0)
        transform = st->max_error == 0 && img->maxval <= MMP_YCOCG_MAX_MAXVAL
                        ? MMP_TRANSFORM_RCT
                        : MMP_TRANSFORM_RGB;
    else if (transform == MMP_TRANSFORM_AUTO)
        transform = img->maxval <= MMP_YCOCG_MAX_MAXVAL ? MMP_TRANSFORM_YCOCG_R
                                                            : MMP_TRANSFORM_YCBCR;
    if (st->max_error >= 0) {
        h->max_error = (uint32_t)st->max_error;
        h->residual = st->residual == MMP_RESIDUAL_AUTO ? MMP_RESIDUAL_ALONE
                                                            : (uint32_t)st->residual;
    }
    if (st->dct && st->max_error < 0)
        h->tools = MMP_TOOL_TRANSFORM;
    if (st->deblocking == 0 && st->max_error < 0)
        h->tools |= MMP_TOOL_DEBLOCK;
    if (st->residual_mix == 0 && st->max_error >= 0)
        h->tools |= MMP_TOOL_RESIDUAL_MIX;
    if (st->residual_mix == 0 && st->residual_context == 0 && st->max_error >= 0)
        h->tools |= MMP_TOOL_RESIDUAL_CONTEXT;
    if (ch >= 3 && transform == MMP_TRANSFORM_RCT) {
        transform = mmp_rct_choose(img);
        if (transform >= MMP_TRANSFORM_RCT)
            h->tools |= MMP_TOOL_RCT;
    }
    h->transform = ch >= 3 ? (uint32_t)transform : MMP_TRANSFORM_NONE;
    h->chroma = ch >= 3 ? (uint32_t)st->chroma : MMP_CHROMA_444;
    h->alpha = ch == 2 || ch == 4 ? (uint32_t)st->alpha : MMP_ALPHA_NONE;
    h->tile_w = tile_side(st->tile_width, img->width);
    h->tile_h = tile_side(st->tile_height, img->height);
}
