/*
 * libFuzzer target: fuzz_roundtrip's check (encode an image made from the
 * input, decode the file, require the decoder's output to equal the
 * encoder's reconstruction) on images whose search is bounded, so that it
 * runs a hundred times a second or more under ASan and UBSan on one core.
 *
 * The input layout is fuzz_roundtrip.c's, with these changes
 * (tests/fuzz/fuzz_util.h: fuzz_settings, fuzz_fast_image):
 *   0  width  = 1 + b % 48
 *   1  height = 1 + b % 32 (then lowered to 1024 / width if needed: 48 x 21
 *      at most, six blocks, two of them in one wavefront step); b / 32 the
 *      cost class: the work the search may take, in quarters of a block at
 *      speed 4 (fuzz_fast_work: 4, 4, 8, 12, 16, 24, 8, 4)
 *   3  lambda = 0, 1, 4, 10, 30, 100, 300 or 1000 (b % 8); speed
 *      fuzz_fast_speeds[b / 8] (4 in 13 of 32, 3 in 8, 2 in 6, 1 in 4, 0 in
 *      one), apart from the sample mode (byte 6 % 4), unlike fuzz_roundtrip
 *   4  dict_cap = 64, 65, 96 or 128 (b % 4), the rest as in fuzz_roundtrip
 * Then, while the search's blocks (every MMP plane's 16 x 16 blocks) times
 * the speed's weight exceed the class's work, the height is lowered by 16,
 * then the width; a colour image whose planes' first blocks alone exceed
 * it is made grey (but in class 5), and an image that still exceeds it
 * keeps one block per plane. Every setting stays reachable; the slow speeds
 * and colour at them run on the smallest images only.
 *
 * Before the bound (images up to 48 x 21 for every setting, speed 0 for a
 * quarter of the inputs) the target ran 19 times a second; the exhaustive
 * search took two thirds of the time (docs/fuzzing.md, "Issue 20").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mmp/mmp.h"
#include "tests/fuzz/fuzz_util.h"


int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_one_thread();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mmp_settings s;
    fuzz_settings(data, size, 0, &s);
    fuzz_fit_settings_maxval(&s, fuzz_maxval(data, size));
    int w, h, ch;
    fuzz_fast_image(data, size, &s, &w, &h, &ch); /* the sizes depend on the settings */
    mmp_image img, rec;
    fuzz_make_image(data, size, w, h, ch, &img);
    uint8_t *buf;
    size_t len;
    fuzz_encode_checked(&s, &img, &buf, &len, &rec);
    fuzz_decode_equal(buf, len, &rec);
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&img);
    return 0;
}
