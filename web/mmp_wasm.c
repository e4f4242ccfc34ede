/*
 * The browser's entry points into libmmpdec, built to WebAssembly by `make
 * web` (emscripten): decode a whole .mmp file held in the module's memory
 * to 8-bit RGBA for a canvas. One result at a time (the module runs on one
 * thread): mmp_web_decode keeps it until the next call or mmp_web_release,
 * and the getters read it. web/view.js is the caller.
 *
 * Samples become 8 bits the way mmp-dec's PNG output reaches a viewer
 * (and the Pillow plugin, python/mmp/pil.py, gives them): a maxval of 2^k -
 * 1 up to 255 is scaled to 8 bits by repeating its bits from the top (PNG's
 * scaling for sBIT), a larger one to 16 bits the same way and then its top
 * 8 bits kept; any other maxval by rounding v * full / maxval. Grey is
 * copied to R, G and B; an image without alpha is opaque.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmp/mmp.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#define WEB_EXPORT EMSCRIPTEN_KEEPALIVE
#else
#define WEB_EXPORT
#endif

/* The largest image the page decodes, 2^25 pixels (8K UHD fits): the
 * decoder's samples (2 bytes each), the RGBA, the file and the decoder's
 * planes of one tile (docs/format.md section 2) stay well within the
 * module's 2 GiB of memory. */
#define WEB_MAX_PIXELS (1ULL << 25)

static struct {
    uint8_t *rgba;
    int width, height, channels, maxval;
    char error[256];
} result;

/* A k-bit sample in `depth` bits, its bits repeated from the top. */
static unsigned replicate(unsigned v, int k, int depth)
{
    unsigned r = 0;
    for (int shift = depth - k; shift > -k; shift -= k)
        r |= shift >= 0 ? v << shift : v >> -shift;
    return r;
}

/* The 8-bit value of every sample 0..maxval, into map. */
static void scale_map(uint8_t *map, int maxval)
{
    const int depth = maxval > 255 ? 16 : 8;
    const unsigned full = (1u << depth) - 1;
    int k = 0;
    while (maxval >> k)
        k++;
    for (unsigned v = 0; v <= (unsigned)maxval; v++) {
        unsigned s;
        if ((unsigned)maxval == (1u << k) - 1)
            s = replicate(v, k, depth);
        else
            s = (unsigned)(((uint64_t)v * full + (unsigned)maxval / 2) / (unsigned)maxval);
        map[v] = (uint8_t)(depth == 16 ? s >> 8 : s);
    }
}

/* img as RGBA, 4 bytes a pixel; NULL when out of memory. */
static uint8_t *to_rgba(const mmp_image *img)
{
    const size_t n = (size_t)img->width * (size_t)img->height;
    const int ch = mmp_image_channels(img);
    uint8_t *map = malloc((size_t)img->maxval + 1);
    uint8_t *out = malloc(n * 4);
    if (!map || !out) {
        free(map);
        free(out);
        return NULL;
    }
    scale_map(map, img->maxval);
    const uint16_t *s = img->pix;
    for (size_t i = 0; i < n; i++, s += ch) {
        uint8_t *d = out + 4 * i;
        if (ch <= 2) {
            d[0] = d[1] = d[2] = map[s[0]];
        } else {
            d[0] = map[s[0]];
            d[1] = map[s[1]];
            d[2] = map[s[2]];
        }
        d[3] = ch == 2 || ch == 4 ? map[s[ch - 1]] : 255;
    }
    free(map);
    return out;
}

WEB_EXPORT void mmp_web_release(void)
{
    free(result.rgba);
    memset(&result, 0, sizeof result);
}

/* Decodes buf[0..len); 0, or a negative MMP_E* code with the reason in
 * mmp_web_error(). */
WEB_EXPORT int mmp_web_decode(const uint8_t *buf, size_t len)
{
    mmp_web_release();
    mmp_image img;
    memset(&img, 0, sizeof img);
    int err = mmp_decode_limited(buf, len, WEB_MAX_PIXELS, &img, result.error, sizeof result.error);
    if (!err && !(result.rgba = to_rgba(&img)))
        err = MMP_ENOMEM;
    if (err) {
        if (!result.error[0])
            strncpy(result.error, mmp_strerror(err), sizeof result.error - 1);
        mmp_image_free(&img);
        return err;
    }
    result.width = img.width;
    result.height = img.height;
    result.channels = mmp_image_channels(&img);
    result.maxval = img.maxval;
    mmp_image_free(&img);
    return 0;
}

WEB_EXPORT const uint8_t *mmp_web_rgba(void) { return result.rgba; }
WEB_EXPORT int mmp_web_width(void) { return result.width; }
WEB_EXPORT int mmp_web_height(void) { return result.height; }
WEB_EXPORT int mmp_web_channels(void) { return result.channels; }
WEB_EXPORT int mmp_web_maxval(void) { return result.maxval; }
WEB_EXPORT const char *mmp_web_error(void) { return result.error; }
