/* The one-call decoders to 8-bit interleaved pixels (mmp_decode_grey8,
 * _rgb8, _rgba8 of mmp/mmp.h): the file decoded, its samples brought to 8
 * bits and its channels to those asked for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/mmp.h"

/* A k-bit value in `depth` bits, its bits repeated from the top (PNG's
 * scaling for sBIT, as mmp-dec's PNG output and the Pillow plugin of
 * python/ scale; from the top bits where depth < k). */
static unsigned replicate(unsigned u, int k, int depth)
{
    unsigned r = 0;
    for (int shift = depth - k; shift > -k; shift -= k)
        r |= shift >= 0 ? u << shift : u >> -shift;
    return r;
}

static int bits_of(int maxval)
{
    int k = 0;
    while (maxval >> k)
        k++;
    return k;
}

/* Every value of [0, maxval] on the 8-bit scale (mmp.h: 8 bits for maxval
 * up to 255, else the top 8 of 16). */
static void table_to_8(int maxval, uint8_t *t)
{
    const int k = bits_of(maxval), depth = maxval > 255 ? 16 : 8;
    const unsigned full = (1u << depth) - 1;
    const int pow2 = maxval == (1 << k) - 1;
    for (unsigned v = 0; v <= (unsigned)maxval; v++) {
        const unsigned s = (unsigned)maxval == full ? v
                           : pow2 ? replicate(v, k, depth)
                                  : (unsigned)(((uint64_t)v * full + (unsigned)maxval / 2) /
                                               (unsigned)maxval);
        t[v] = (uint8_t)(depth == 16 ? s >> 8 : s);
    }
}

/* The whole file into *px with `want` channels (1, 3 or 4). */
static int decode8(const uint8_t *buf, size_t len, int want, int *width, int *height,
                   uint8_t **px)
{
    if (width)
        *width = 0;
    if (height)
        *height = 0;
    if (!px)
        return MMP_EINVAL;
    *px = NULL;
    mmp_image img;
    int err = mmp_decode(buf, len, &img, NULL, 0);
    if (err)
        return err;
    uint8_t *t = malloc((size_t)img.maxval + 1);
    const size_t n = (size_t)img.width * (size_t)img.height;
    uint8_t *out = malloc(n * (size_t)want);
    if (!t || !out) {
        free(t);
        free(out);
        mmp_image_free(&img);
        return MMP_ENOMEM;
    }
    table_to_8(img.maxval, t);
    const int ch = mmp_image_channels(&img), colour = ch >= 3;
    for (size_t i = 0; i < n; i++) {
        const uint16_t *s = img.pix + i * (size_t)ch;
        uint8_t *d = out + i * (size_t)want;
        const unsigned r = t[s[0]], g = colour ? t[s[1]] : r, b = colour ? t[s[2]] : r;
        if (want == 1) {
            /* BT.601 luma, as Pillow's convert("L"). */
            d[0] = colour ? (uint8_t)((19595 * r + 38470 * g + 7471 * b + 32768) >> 16)
                          : (uint8_t)r;
        } else {
            d[0] = (uint8_t)r;
            d[1] = (uint8_t)g;
            d[2] = (uint8_t)b;
            if (want == 4)
                d[3] = ch == 2 || ch == 4 ? t[s[ch - 1]] : 255;
        }
    }
    if (width)
        *width = img.width;
    if (height)
        *height = img.height;
    free(t);
    mmp_image_free(&img);
    *px = out;
    return MMP_OK;
}

int mmp_decode_grey8(const uint8_t *buf, size_t len, int *width, int *height, uint8_t **px)
{
    return decode8(buf, len, 1, width, height, px);
}

int mmp_decode_rgb8(const uint8_t *buf, size_t len, int *width, int *height, uint8_t **px)
{
    return decode8(buf, len, 3, width, height, px);
}

int mmp_decode_rgba8(const uint8_t *buf, size_t len, int *width, int *height, uint8_t **px)
{
    return decode8(buf, len, 4, width, height, px);
}
