/*
 * libFuzzer target: encode a tiny image made from the input bytes, decode
 * the file, and require the decoder's output to equal the encoder's
 * reconstruction sample for sample (and the file to be self-consistent).
 *
 * Input layout (missing bytes read as 0):
 *   0  width  = 1 + b % 40          1  height = 1 + b % 24
 *   2  maxval: b % 4 = 0: 255, 1: 65535, 2: 1 + b / 4 (1..64),
 *      3: 1 + (bytes 8..9, little-endian) % 65535
 *   3  lambda = b * b / 65 (0 to 1000; b = 0 is lambda 0)
 *   4  dict_cap: 64, 65, 96, 128, 256, 1024 (b % 6)
 *   5  redundancy: b < 128: derived from lambda; else (b - 128) / 4
 *   6  coding order: b / 4 % 2 = 0 wavefront, 1 raster; and the
 *      sample mode: b % 4 = 0 raw samples; 1 a smooth ramp plus small
 *      deltas from the data (exercises LSP and dictionary matches); 2 runs
 *      of repeated samples; 3 a 0/maxval pattern (saturation, clipping)
 *   7  sample step for the ramp (mode 1)
 *   10.. sample data (wraps around; zeros when there is none)
 *
 * Encoding costs tens of milliseconds per 16x16 block, hence 40 x 24 at
 * most (six blocks: 3 x 2 is the least with two blocks in one wavefront
 * step).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/error.h"
#include "mmp/cli/pgm.h"
#include "mmp/mmp.h"

#define MAX_WIDTH 40
#define MAX_HEIGHT 24
#define DATA_OFF 10

static unsigned byte_at(const uint8_t *d, size_t n, size_t i) { return i < n ? d[i] : 0; }

/* The k-th sample byte pair as a 16-bit value, wrapping over the data. */
static unsigned sample_at(const uint8_t *d, size_t n, size_t k, int wide)
{
    if (n <= DATA_OFF)
        return 0;
    size_t m = n - DATA_OFF;
    if (!wide)
        return d[DATA_OFF + k % m];
    return d[DATA_OFF + (2 * k) % m] | (unsigned)d[DATA_OFF + (2 * k + 1) % m] << 8;
}

static void make_image(const uint8_t *d, size_t n, mmp_image *img)
{
    int w = 1 + (int)(byte_at(d, n, 0) % MAX_WIDTH);
    int h = 1 + (int)(byte_at(d, n, 1) % MAX_HEIGHT);
    unsigned mb = byte_at(d, n, 2);
    int maxval;
    switch (mb % 4) {
    case 0: maxval = 255; break;
    case 1: maxval = 65535; break;
    case 2: maxval = 1 + (int)(mb / 4); break;
    default: maxval = 1 + (int)((byte_at(d, n, 8) | byte_at(d, n, 9) << 8) % 65535); break;
    }
    if (mmp_image_alloc(img, w, h, maxval))
        abort();
    int wide = maxval > 255;
    unsigned mode = byte_at(d, n, 6) % 4, step = byte_at(d, n, 7);
    uint32_t run = 0, runv = 0;
    size_t src = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t k = (size_t)y * w + x;
            uint32_t v;
            switch (mode) {
            case 0:
                v = sample_at(d, n, k, wide);
                break;
            case 1: {
                int64_t base = (int64_t)(x + 2 * y) * (step + 1) * (maxval > 255 ? 257 : 1);
                int delta = (int)(sample_at(d, n, k, 0) % 9) - 4;
                int64_t t = base + delta * (maxval / 64 + 1);
                v = (uint32_t)(t < 0 ? 0 : t % (maxval + 1));
                break;
            }
            case 2:
                if (run == 0) {
                    unsigned b = sample_at(d, n, src++, 0);
                    run = 1 + b % 16;
                    runv = sample_at(d, n, src++, wide);
                }
                run--;
                v = runv;
                break;
            default:
                v = (sample_at(d, n, k / 8, 0) >> (k % 8)) & 1 ? (uint32_t)maxval : 0;
                break;
            }
            img->pix[k] = (uint16_t)(v % ((uint32_t)maxval + 1));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mmp_image img;
    make_image(data, size, &img);

    mmp_settings s;
    mmp_default_settings(&s);
    unsigned lb = byte_at(data, size, 3);
    s.lambda = (double)(lb * lb) / 65.0;
    static const int caps[6] = {64, 65, 96, 128, 256, 1024};
    s.dict_cap = caps[byte_at(data, size, 4) % 6];
    unsigned rb = byte_at(data, size, 5);
    s.redundancy = rb < 128 ? -1.0 : (double)(rb - 128) / 4.0;
    s.engine = "seq";
    s.threads = 1;
    s.order = byte_at(data, size, 6) / 4 % 2 ? MMP_ORDER_RASTER : MMP_ORDER_WAVEFRONT;

    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_image rec = {0}, dec = {0};
    char err[512] = "";
    int rc = mmp_encode(&s, &img, &buf, &len, &rec, NULL, err, sizeof err);
    if (rc)
        abort(); /* every valid image with valid settings must encode */

    mmp_header h;
    if (mmp_header_parse(buf, len, &h, err, sizeof err) || h.width != (uint32_t)img.width ||
        h.height != (uint32_t)img.height || h.maxval != (uint32_t)img.maxval ||
        h.dict_cap != (uint32_t)s.dict_cap)
        abort();

    rc = mmp_decode(buf, len, &dec, err, sizeof err);
    if (rc || dec.width != rec.width || dec.height != rec.height || dec.maxval != rec.maxval ||
        rec.width != img.width || rec.height != img.height || rec.maxval != img.maxval)
        abort();
    size_t n = (size_t)img.width * img.height;
    for (size_t i = 0; i < n; i++)
        if (dec.pix[i] != rec.pix[i] || rec.pix[i] > rec.maxval)
            abort(); /* decoder output differs from the encoder's reconstruction */

    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
    mmp_image_free(&img);
    return 0;
}
