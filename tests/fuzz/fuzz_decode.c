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

#include "common/container.h"
#include "common/error.h"
#include "mmp/mmp.h"

#define FUZZ_MAX_PADDED (1u << 17)

static void check_error_text(int rc, const char *err)
{
    if (rc >= 0 || rc < MMP_EENGINE)
        abort();
    if (err[0] == '\0' || strchr(err, '\n'))
        abort();
}

static uint64_t padded_pixels(const mmp_header *h)
{
    return (uint64_t)((h->width + 15) / 16 * 16) * ((h->height + 15) / 16 * 16);
}

static void decode_checked(const uint8_t *buf, size_t len)
{
    char err[512];
    mmp_header h;
    int prc = mmp_header_parse(buf, len, &h, err, sizeof err);
    if (prc) {
        check_error_text(prc, err);
    } else if (padded_pixels(&h) > FUZZ_MAX_PADDED) {
        return;
    }
    mmp_image img;
    err[0] = '\0';
    int rc = mmp_decode(buf, len, &img, err, sizeof err);
    if (rc) {
        check_error_text(rc, err);
        if (prc && rc != prc)
            abort(); /* the decoder must report what the header check found */
        if (img.pix)
            abort();
        return;
    }
    if (prc || (uint32_t)img.width != h.width || (uint32_t)img.height != h.height ||
        (uint32_t)img.maxval != h.maxval || !img.pix)
        abort();
    size_t n = (size_t)img.width * (size_t)img.height;
    for (size_t i = 0; i < n; i++)
        if (img.pix[i] > img.maxval)
            abort();
    mmp_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    decode_checked(data, size);
    if (size < MMP_HEADER_SIZE)
        return 0;
    uint8_t *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    uint64_t plen = size - MMP_HEADER_SIZE;
    for (int i = 0; i < 8; i++)
        copy[32 + i] = (uint8_t)(plen >> (8 * i));
    uint32_t crc = mmp_container_crc(copy, MMP_HEADER_CRC_OFFSET, copy + MMP_HEADER_SIZE, plen);
    for (int i = 0; i < 4; i++)
        copy[MMP_HEADER_CRC_OFFSET + i] = (uint8_t)(crc >> (8 * i));
    decode_checked(copy, size);
    free(copy);
    return 0;
}
