/* The one-call encoders of 8-bit interleaved pixels with a stride
 * (mmp_encode_grey8, _rgb8, _rgba8 of mmp/mmp.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/mmp.h"

/* width x height pixels of ch bytes, rows stride apart, as an image of
 * maxval 255, then mmp_encode. */
static int encode8(const uint8_t *px, int width, int height, int stride, int ch,
                   const mmp_settings *s, uint8_t **out, size_t *out_size)
{
    if (!out || !out_size)
        return MMP_EINVAL;
    *out = NULL;
    *out_size = 0;
    if (!px || width < 1 || height < 1 || stride < 0 || (long long)stride < (long long)width * ch)
        return MMP_EINVAL;
    mmp_image img;
    const int err = mmp_image_alloc_channels(&img, width, height, ch, 255);
    if (err)
        return err;
    const size_t row = (size_t)width * (size_t)ch;
    for (int y = 0; y < height; y++) {
        const uint8_t *src = px + (size_t)y * (size_t)stride;
        uint16_t *dst = img.pix + (size_t)y * row;
        for (size_t i = 0; i < row; i++)
            dst[i] = src[i];
    }
    mmp_settings defaults;
    if (!s) {
        mmp_default_settings(&defaults);
        s = &defaults;
    }
    const int rc = mmp_encode(s, &img, out, out_size, NULL, NULL, NULL, 0);
    mmp_image_free(&img);
    return rc;
}

int mmp_encode_grey8(const uint8_t *px, int width, int height, int stride, const mmp_settings *s,
                     uint8_t **out, size_t *out_size)
{
    return encode8(px, width, height, stride, 1, s, out, out_size);
}

int mmp_encode_rgb8(const uint8_t *px, int width, int height, int stride, const mmp_settings *s,
                    uint8_t **out, size_t *out_size)
{
    return encode8(px, width, height, stride, 3, s, out, out_size);
}

int mmp_encode_rgba8(const uint8_t *px, int width, int height, int stride, const mmp_settings *s,
                     uint8_t **out, size_t *out_size)
{
    return encode8(px, width, height, stride, 4, s, out, out_size);
}
