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
 *   5  redundancy: b < 128: derived from lambda; else (b - 128) / 4;
 *      alpha: b % 2; the transform residual: b / 2 % 2 = 0 allowed, 1 not
 *   6  coding order: b / 4 % 2 = 0 wavefront, 1 raster; and the
 *      sample mode: b % 4 = 0 raw samples; 1 a smooth ramp plus small
 *      deltas from the data (exercises LSP and dictionary matches); 2 runs
 *      of repeated samples; 3 a 0/maxval pattern (saturation, clipping)
 *   7  sample step for the ramp (mode 1)
 *   10.. sample data (wraps around; zeros when there is none)
 *
 * Encoding costs tens of milliseconds per 16x16 block (several times that
 * under the sanitizers), hence 40 x 24 at most (six blocks: 3 x 2 is the
 * least with two blocks in one wavefront step). fuzz_roundtrip_fast reads
 * the same layout with smaller images, dictionaries and fewer lambdas.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mmp/mmp.h"
#include "tests/fuzz/fuzz_util.h"

#define MAX_WIDTH 40
#define MAX_HEIGHT 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mmp_image img, rec;
    fuzz_make_image(data, size, 1 + (int)(byte_at(data, size, 0) % MAX_WIDTH),
                    1 + (int)(byte_at(data, size, 1) % MAX_HEIGHT), fuzz_channels(data, size),
                    &img);
    mmp_settings s;
    fuzz_settings(data, size, 1, &s);
    fuzz_fit_settings(&s, &img);
    uint8_t *buf;
    size_t len;
    fuzz_encode_checked(&s, &img, &buf, &len, &rec);
    fuzz_decode_equal(buf, len, &rec);
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&img);
    return 0;
}
