/*
 * libFuzzer target: fuzz_roundtrip's check (encode an image made from the
 * input, decode the file, require the decoder's output to equal the
 * encoder's reconstruction) on images small enough for deep searches: at
 * most 48 x 32 and 1024 pixels (so 48 x 21 at most, six blocks of which
 * two in one wavefront step; mostly one to four), dict_cap 64, 65, 96 or
 * 128, lambda 0, 1, 4, 10, 30, 100, 300 or 1000, both coding orders.
 *
 * The input layout is fuzz_roundtrip.c's, with byte 0 width = 1 + b % 48,
 * byte 1 height = 1 + b % 32 (then lowered to 1024 / width if needed),
 * byte 3 lambda (b % 8 in the list above) and byte 4 dict_cap (b % 4).
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
