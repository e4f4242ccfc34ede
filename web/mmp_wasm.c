/*
 * The browser's entry points into libmmpdec, built to WebAssembly by `make
 * web` (emscripten): decode a whole .mmp file held in the module's memory
 * to 8-bit RGBA for a canvas. One result at a time (the module runs on one
 * thread): mmp_web_decode keeps it until the next call or mmp_web_release,
 * and the getters read it. web/view.js is the caller.
 *
 * The pixels are mmp_decode_rgba8's: samples brought to 8 bits the way
 * mmp-dec's PNG output reaches a viewer, grey copied to R, G and B, alpha
 * kept (255 where the file has none). The header is read first with
 * mmp_probe, for the image's channels and maxval, for the pixel limit
 * before anything is allocated, and for the reason of a refusal.
 */
#include <stdint.h>
#include <stdio.h>
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
#define WEB_MAX_PIXELS (1LL << 25)

static struct {
    uint8_t *rgba;
    int width, height, channels, maxval;
    char error[256];
} result;

WEB_EXPORT void mmp_web_release(void)
{
    mmp_free(result.rgba);
    memset(&result, 0, sizeof result);
}

/* Decodes buf[0..len); 0, or a negative MMP_E* code with the reason in
 * mmp_web_error(). */
WEB_EXPORT int mmp_web_decode(const uint8_t *buf, size_t len)
{
    mmp_web_release();
    mmp_file_info info;
    int err = mmp_probe(buf, len, &info, result.error, sizeof result.error);
    if (!err && (long long)info.width * info.height > WEB_MAX_PIXELS) {
        err = MMP_ELIMIT;
        snprintf(result.error, sizeof result.error, "%d x %d pixels: more than this page's %lld",
                 info.width, info.height, WEB_MAX_PIXELS);
    }
    if (!err && (err = mmp_decode_rgba8(buf, len, &result.width, &result.height, &result.rgba)))
        strncpy(result.error, mmp_strerror(err), sizeof result.error - 1);
    if (err) {
        mmp_free(result.rgba);
        result.rgba = NULL;
        result.width = result.height = 0;
        return err;
    }
    result.channels = info.planes;
    result.maxval = info.maxval;
    return 0;
}

WEB_EXPORT const uint8_t *mmp_web_rgba(void) { return result.rgba; }
WEB_EXPORT int mmp_web_width(void) { return result.width; }
WEB_EXPORT int mmp_web_height(void) { return result.height; }
WEB_EXPORT int mmp_web_channels(void) { return result.channels; }
WEB_EXPORT int mmp_web_maxval(void) { return result.maxval; }
WEB_EXPORT const char *mmp_web_error(void) { return result.error; }
