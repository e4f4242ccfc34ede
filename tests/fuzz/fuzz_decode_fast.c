/*
 * libFuzzer target: the decoder on small files, with a structure-aware
 * mutator.
 *
 * fuzz_decode's checks (tests/fuzz/fuzz_util.h: fuzz_decode_checked), but
 * only files whose header announces at most FAST_MAX_PADDED padded pixels
 * (16 blocks of 16 x 16: 64 x 64, 256 x 16, 48 x 80, ...) and a dict_cap of
 * at most FAST_MAX_DICT_CAP are decoded past the header; the others get the
 * header check alone. A file whose payload_len or CRC is wrong is decoded
 * as given, then with both fixed.
 *
 * LLVMFuzzerCustomMutator keeps inputs valid containers: it mutates the
 * payload (most often), a header field (set to a boundary or small value,
 * or a random one), the raw header bytes or the whole file with libFuzzer's
 * own mutations (LLVMFuzzerMutate), or truncates, cuts or repeats a part of
 * the payload; then it sets payload_len and recomputes the CRC (except in
 * one mutation of 32, so that the container checks stay covered). Nearly
 * every mutation therefore reaches the range decoder and the block syntax
 * instead of stopping at the CRC check. LLVMFuzzerCustomCrossOver joins the
 * header and the start of one file's payload with the rest of another's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "mmp/mmp.h"
#include "tests/fuzz/fuzz_util.h"

#define FAST_MAX_PADDED (64u * 64u)
#define FAST_MAX_DICT_CAP 256u

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_one_thread();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode_checked(data, size, FAST_MAX_PADDED, FAST_MAX_DICT_CAP);
    if (size < MMP_HEADER_SIZE)
        return 0;
    uint8_t *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_fix_container(copy, size);
    if (memcmp(copy + 32, data + 32, 16) != 0) /* not already right */
        fuzz_decode_checked(copy, size, FAST_MAX_PADDED, FAST_MAX_DICT_CAP);
    free(copy);
    return 0;
}

/* ------------------------------------------------ the mutator */

/* -DMMP_FUZZ_NO_CUSTOM_MUTATOR builds the target with libFuzzer's own
 * mutations only (to measure what the mutator brings). */
#ifndef MMP_FUZZ_NO_CUSTOM_MUTATOR

/* xorshift32 from libFuzzer's seed: the same seed, the same mutation. */
static uint32_t rnd(uint32_t *s)
{
    uint32_t x = *s ? *s : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

/* A value for a u32 field: mostly small (inside the fast limits), else a
 * boundary of the format or a random one. */
static uint32_t field_value(uint32_t *s, uint32_t old, uint32_t small)
{
    static const uint32_t edges[] = {0,     1,          2,          15,         16,
                                     17,    63,         64,         65,         255,
                                     256,   1023,       1024,       16384,      16385,
                                     65535, 65536,      65537,      1u << 28,   1u << 30,
                                     (1u << 30) + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu};
    switch (rnd(s) % 6) {
    case 0: case 1: return 1 + rnd(s) % small;
    case 2: return edges[rnd(s) % (sizeof edges / sizeof edges[0])];
    case 3: return old + 1 + rnd(s) % 4;
    case 4: return old - 1 - rnd(s) % 4;
    default: return rnd(s);
    }
}

/* Set one header field (docs/format.md section 2). */
static void mutate_field(uint8_t *d, uint32_t *s)
{
    switch (rnd(s) % 12) {
    case 0: fuzz_put_le(d + 8, field_value(s, (uint32_t)fuzz_get_le(d + 8, 4), 64), 4); break;
    case 1: fuzz_put_le(d + 12, field_value(s, (uint32_t)fuzz_get_le(d + 12, 4), 64), 4); break;
    case 2: /* both sizes, inside the fast limits */
        fuzz_put_le(d + 8, 1 + rnd(s) % 64, 4);
        fuzz_put_le(d + 12, 1 + rnd(s) % 64, 4);
        break;
    case 3: fuzz_put_le(d + 16, field_value(s, (uint32_t)fuzz_get_le(d + 16, 4), 65535), 4); break;
    case 4: fuzz_put_le(d + 20, 64 + rnd(s) % 193, 4); break; /* dict_cap 64..256 */
    case 5: fuzz_put_le(d + 20, field_value(s, (uint32_t)fuzz_get_le(d + 20, 4), 256), 4); break;
    case 6: fuzz_put_le(d + 24, field_value(s, (uint32_t)fuzz_get_le(d + 24, 4), 4096), 4); break;
    case 7: fuzz_put_le(d + 28, rnd(s), 4); break; /* lambda_q8: informational */
    case 8: d[40] ^= 1; break;                     /* the coding order */
    case 9: d[40] = (uint8_t)(rnd(s) % 4); break;
    case 10: d[41 + rnd(s) % 3] = (uint8_t)(rnd(s) % 4); break; /* transform, chroma, alpha */
    default: d[4 + rnd(s) % 4] = (uint8_t)(rnd(s) % 6); break; /* version, planes, log2s */
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint32_t s = seed;
    if (size < MMP_HEADER_SIZE || max_size < MMP_HEADER_SIZE || memcmp(data, MMP_MAGIC, 4) != 0 ||
        rnd(&s) % 64 == 0)
        return LLVMFuzzerMutate(data, size, max_size); /* not (or rarely) a container */
    size_t plen = size - MMP_HEADER_SIZE, room = max_size - MMP_HEADER_SIZE;
    uint8_t *pay = data + MMP_HEADER_SIZE;
    unsigned op = rnd(&s) % 16;
    if (op < 7 && room) { /* the payload, libFuzzer's mutations */
        size = MMP_HEADER_SIZE + LLVMFuzzerMutate(pay, plen, room);
    } else if (op < 10) { /* a header field, sometimes the payload too */
        mutate_field(data, &s);
        if (op == 9 && plen)
            size = MMP_HEADER_SIZE + LLVMFuzzerMutate(pay, plen, room);
    } else if (op < 11) { /* the raw header bytes before the CRC */
        uint8_t h[MMP_HEADER_CRC_OFFSET];
        memcpy(h, data, sizeof h);
        size_t n = LLVMFuzzerMutate(h + 4, sizeof h - 4, sizeof h - 4);
        memcpy(data + 4, h + 4, n);
    } else if (op < 12) { /* the whole file */
        size = LLVMFuzzerMutate(data, size, max_size);
        if (size < MMP_HEADER_SIZE)
            return size;
    } else if (op < 13) { /* truncate the payload */
        size = MMP_HEADER_SIZE + (plen ? rnd(&s) % plen : 0);
    } else if (op < 14 && plen) { /* cut out a part of the payload */
        size_t a = rnd(&s) % plen, n = 1 + rnd(&s) % (plen - a);
        memmove(pay + a, pay + a + n, plen - a - n);
        size -= n;
    } else if (op < 15 && plen && plen < room) { /* repeat a part of the payload */
        size_t a = rnd(&s) % plen, n = 1 + rnd(&s) % (plen - a);
        if (n > room - plen)
            n = room - plen;
        memmove(pay + a + n, pay + a, plen - a);
        size += n;
    } else if (plen) { /* flip a bit near the start (the range coder's first bytes) */
        size_t at = rnd(&s) % (plen < 8 ? plen : 8);
        pay[at] ^= (uint8_t)(1u << (rnd(&s) % 8));
    }
    if (rnd(&s) % 32 != 0)
        fuzz_fix_container(data, size);
    return size;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t n1, const uint8_t *d2, size_t n2,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    uint32_t s = seed;
    if (n1 < MMP_HEADER_SIZE || n2 < MMP_HEADER_SIZE || max_out < MMP_HEADER_SIZE)
        return 0;
    /* d1's header and the first a bytes of its payload, then d2's payload
     * from b on. */
    size_t p1 = n1 - MMP_HEADER_SIZE, p2 = n2 - MMP_HEADER_SIZE;
    size_t a = p1 ? rnd(&s) % (p1 + 1) : 0, b = p2 ? rnd(&s) % (p2 + 1) : 0;
    size_t n = MMP_HEADER_SIZE + a;
    if (n > max_out)
        n = max_out;
    memcpy(out, d1, n);
    size_t m = p2 - b;
    if (m > max_out - n)
        m = max_out - n;
    memcpy(out + n, d2 + MMP_HEADER_SIZE + b, m);
    n += m;
    fuzz_fix_container(out, n);
    return n;
}
#endif
