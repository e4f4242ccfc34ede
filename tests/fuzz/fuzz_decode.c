/*
 * libFuzzer target: the decoder (mmp_decode) on arbitrary bytes.
 *
 * Each input is decoded twice:
 *
 *  1. as given, which exercises the container checks (signature, chunk
 *     lengths, types and CRCs, their order, HEAD's fields, the tile index:
 *     nearly every mutation stops there);
 *  2. with the chunk lengths, the tile index and the CRCs made right
 *     (fuzz_fix_container), so that mutated payloads and header fields
 *     reach the block syntax, the range decoder, the dictionary and the
 *     prediction.
 *
 * Both decodes must return 0 (with a consistent image) or a negative MMP_E*
 * code with a one-line reason; anything else aborts. The decoder is
 * mmp_decode_limited with a budget of FUZZ_MAX_PADDED pixels (2^17): a legal
 * file may announce 2^28 pixels, and decoding a legal (say constant) image
 * that large takes tens of seconds and ~1.9 GB (4.3 GB with four planes),
 * correct but useless for fuzzing, and more than make fuzz's
 * -rss_limit_mb=3072 under ASan. A file over the budget must be refused
 * with MMP_ELIMIT before anything is allocated; within it, a decode takes
 * at most about 75 MB (the dictionary of a dict_cap of 16384 is most of it),
 * and is run past the container when the padded image has at most as many
 * pixels too (fuzz_util.h: fuzz_decode_checked).
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
    if (size < MMP_SIGNATURE_SIZE + MMP_CHUNK_OVERHEAD)
        return 0;
    uint8_t *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_fix_container(copy, size);
    if (memcmp(copy, data, size) != 0) /* not already right */
        fuzz_decode_checked(copy, size, FUZZ_MAX_PADDED, UINT32_MAX);
    free(copy);
    return 0;
}
