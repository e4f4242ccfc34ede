/*
 * libFuzzer target: the decoder (mmp_decode) on arbitrary bytes.
 *
 * Each input is decoded twice:
 *
 *  1. as given, which exercises the container checks (magic, version, field
 *     ranges, payload length, CRC: nearly every mutation stops there);
 *  2. with payload_len set to the real payload size and the CRC recomputed,
 *     so that mutated payloads and header fields reach the block syntax, the
 *     range decoder, the dictionary and the prediction.
 *
 * Both decodes must return 0 (with a consistent image) or a negative MMP_E*
 * code with a one-line reason; anything else aborts. A decode is only run
 * past the header when the padded image has at most FUZZ_MAX_PADDED pixels:
 * a legal file may announce 2^28 pixels, and decoding a legal (say constant)
 * image that large takes tens of seconds and ~1.9 GB, which is correct
 * behaviour but useless for fuzzing throughput. Larger headers still go
 * through mmp_header_parse.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#define FUZZ_MAX_PADDED (1u << 17)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode_checked(data, size, FUZZ_MAX_PADDED, UINT32_MAX);
    if (size < MMP_HEADER_SIZE)
        return 0;
    uint8_t *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_fix_container(copy, size);
    fuzz_decode_checked(copy, size, FUZZ_MAX_PADDED, UINT32_MAX);
    free(copy);
    return 0;
}
