/*
 * libFuzzer target: the decoder on small files, with a structure-aware
 * mutator.
 *
 * fuzz_decode's checks (tests/fuzz/fuzz_util.h: fuzz_decode_checked), with
 * a budget of FAST_MAX_PADDED pixels given to mmp_decode_limited (a file
 * that announces more must be refused with MMP_ELIMIT, nothing allocated):
 * only files whose header announces at most FAST_MAX_PADDED padded pixels
 * (16 blocks of 16 x 16: 64 x 64, 256 x 16, 48 x 80, ...) and a dict_cap of
 * at most FAST_MAX_DICT_CAP are decoded past the container; the others get
 * the container check alone. A file whose chunk lengths, tile index or
 * CRCs are wrong is decoded as given, then with them made right
 * (fuzz_fix_container).
 *
 * LLVMFuzzerCustomMutator keeps inputs valid containers (docs/format.md
 * section 2: the signature, HEAD, ancillary chunks, the tile index, the
 * tiles): it mutates a tile's payload (most often), a HEAD field (set to a
 * boundary or small value, or a random one), HEAD's raw bytes or the whole
 * file with libFuzzer's own mutations (LLVMFuzzerMutate); truncates, cuts
 * or repeats a part of a tile's payload; swaps two tiles' payloads; adds or
 * removes an ancillary chunk; edits the tile index, or the tile sides with
 * the tile count kept. Then it makes the lengths, the index and the CRCs
 * right (except in one mutation of 32, so that the container checks stay
 * covered). Nearly every mutation therefore reaches the range decoder and
 * the block syntax instead of stopping at a CRC check.
 * LLVMFuzzerCustomCrossOver joins the start of a tile's payload of one file
 * with the rest of a tile's payload of another.
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
    if (size < MMP_SIGNATURE_SIZE + MMP_CHUNK_OVERHEAD)
        return 0;
    uint8_t *copy = malloc(size);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_fix_container(copy, size);
    if (memcmp(copy, data, size) != 0) /* not already right */
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

/* The chunks of a file, as far as their lengths fit. */
#define MAX_CHUNKS 64
typedef struct chunks {
    int n;
    size_t at[MAX_CHUNKS];  /* where each starts (its length field) */
    uint32_t len[MAX_CHUNKS];
    int tiles[MAX_CHUNKS];  /* indexes of the TILE chunks */
    int ntiles;
    int tidx;               /* index of the first TIDX chunk, or -1 */
} chunks;

static void walk(const uint8_t *d, size_t size, chunks *c)
{
    c->n = c->ntiles = 0;
    c->tidx = -1;
    for (size_t at = MMP_SIGNATURE_SIZE; c->n < MAX_CHUNKS && size - at >= MMP_CHUNK_OVERHEAD;) {
        const uint64_t len = fuzz_get_le(d + at, 4);
        if (len > size - at - MMP_CHUNK_OVERHEAD)
            break;
        if (!memcmp(d + at + 4, "TILE", 4))
            c->tiles[c->ntiles++] = c->n;
        else if (c->tidx < 0 && !memcmp(d + at + 4, "TIDX", 4))
            c->tidx = c->n;
        c->at[c->n] = at;
        c->len[c->n++] = (uint32_t)len;
        at += MMP_CHUNK_OVERHEAD + (size_t)len;
    }
}

/* Replace the data of the chunk at `at` (of length old) by nd[0..nlen):
 * the rest of the file moves, the chunk's length follows. Returns the new
 * size, or the old one when max_size has no room for it. */
static size_t replace_data(uint8_t *d, size_t size, size_t max_size, size_t at, uint32_t old,
                           const uint8_t *nd, size_t nlen)
{
    const size_t tail = at + 8 + old; /* the CRC and what follows */
    if (size - old + nlen > max_size || nlen > UINT32_MAX)
        return size;
    memmove(d + at + 8 + nlen, d + tail, size - tail);
    memmove(d + at + 8, nd, nlen); /* nd may be the chunk's own data */
    fuzz_put_le(d + at, nlen, 4);
    return size - old + nlen;
}

/* A value for a field: mostly small (inside the fast limits), else a
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

/* Set one of HEAD's fields (h: its data; docs/format.md section 2). */
static void mutate_field(uint8_t *h, uint32_t *s)
{
#define FIELD(off, bytes, small)                                                        \
    fuzz_put_le(h + (off), field_value(s, (uint32_t)fuzz_get_le(h + (off), bytes), small), bytes)
    switch (rnd(s) % 16) {
    case 0: FIELD(FUZZ_H_WIDTH, 4, 64); break;
    case 1: FIELD(FUZZ_H_HEIGHT, 4, 64); break;
    case 2: /* both sizes, inside the fast limits */
        fuzz_put_le(h + FUZZ_H_WIDTH, 1 + rnd(s) % 64, 4);
        fuzz_put_le(h + FUZZ_H_HEIGHT, 1 + rnd(s) % 64, 4);
        break;
    case 3: FIELD(FUZZ_H_MAXVAL, 2, 65535); break;
    case 4: fuzz_put_le(h + FUZZ_H_DICT_CAP, 64 + rnd(s) % 193, 2); break; /* 64..256 */
    case 5: FIELD(FUZZ_H_DICT_CAP, 2, 256); break;
    case 6: FIELD(FUZZ_H_REDUND_Q4, 4, 4096); break;
    case 7: fuzz_put_le(h + FUZZ_H_LAMBDA_Q8, rnd(s), 4); break; /* informational */
    case 8: h[FUZZ_H_ORDER] ^= 1; break;                           /* the coding order */
    case 9: h[FUZZ_H_ORDER] = (uint8_t)(rnd(s) % 4); break;
    case 10: h[FUZZ_H_TRANSFORM + rnd(s) % 3] = (uint8_t)(rnd(s) % 4); break; /* and chroma, alpha */
    case 11: h[rnd(s) % 4] = (uint8_t)(rnd(s) % 6); break; /* planes, log2s, residual */
    case 12: FIELD(FUZZ_H_MAX_ERROR, 2, 8); break;
    case 13: fuzz_put_le(h + FUZZ_H_TOOLS, rnd(s) % 8 ? rnd(s) % 2 : 1u << rnd(s) % 32, 4); break;
    case 14: FIELD(FUZZ_H_TILE_W16, 2, 16); break;
    default: FIELD(FUZZ_H_TILE_H16, 2, 16); break;
    }
#undef FIELD
}

/* A tile's payload mutated by libFuzzer; the new size. */
static size_t mutate_tile(uint8_t *d, size_t size, size_t max_size, const chunks *c, uint32_t *s)
{
    if (!c->ntiles || max_size <= size)
        return size;
    const int k = c->tiles[rnd(s) % c->ntiles];
    const size_t len = c->len[k], room = len + (max_size - size);
    uint8_t *tmp = malloc(room ? room : 1);
    if (!tmp)
        return size;
    memcpy(tmp, d + c->at[k] + 8, len);
    const size_t nlen = LLVMFuzzerMutate(tmp, len, room);
    size = replace_data(d, size, max_size, c->at[k], c->len[k], tmp, nlen);
    free(tmp);
    return size;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint32_t s = seed;
    if (size < FUZZ_CHUNK2 || max_size < FUZZ_CHUNK2 || memcmp(data, MMP_MAGIC, 4) != 0 ||
        memcmp(data + MMP_SIGNATURE_SIZE + 4, "HEAD", 4) != 0 || rnd(&s) % 64 == 0)
        return LLVMFuzzerMutate(data, size, max_size); /* not (or rarely) a container */
    chunks c;
    walk(data, size, &c);
    const unsigned op = rnd(&s) % 20;
    /* A tile's payload: its place and length (t < 0: none). */
    const int t = c.ntiles ? c.tiles[rnd(&s) % c.ntiles] : -1;
    uint8_t *pay = t >= 0 ? data + c.at[t] + 8 : NULL;
    const size_t plen = t >= 0 ? c.len[t] : 0;
    if (op < 7) { /* a tile's payload, libFuzzer's mutations */
        size = mutate_tile(data, size, max_size, &c, &s);
    } else if (op < 10) { /* a HEAD field, sometimes a payload too */
        mutate_field(data + FUZZ_HEAD_DATA, &s);
        if (op == 9)
            size = mutate_tile(data, size, max_size, &c, &s);
    } else if (op < 11) { /* HEAD's raw bytes */
        uint8_t h[MMP_HEAD_SIZE];
        memcpy(h, data + FUZZ_HEAD_DATA, sizeof h);
        const size_t n = LLVMFuzzerMutate(h, sizeof h, sizeof h);
        memcpy(data + FUZZ_HEAD_DATA, h, n);
    } else if (op < 12) { /* the whole file */
        size = LLVMFuzzerMutate(data, size, max_size);
        if (size < FUZZ_CHUNK2)
            return size;
    } else if (op < 13 && t >= 0) { /* truncate a payload */
        size = replace_data(data, size, max_size, c.at[t], c.len[t], pay,
                            plen ? rnd(&s) % plen : 0);
    } else if (op < 14 && plen) { /* cut out a part of a payload */
        const size_t a = rnd(&s) % plen, n = 1 + rnd(&s) % (plen - a);
        memmove(pay + a, pay + a + n, plen - a - n);
        size = replace_data(data, size, max_size, c.at[t], c.len[t], pay, plen - n);
    } else if (op < 15 && plen && size < max_size) { /* repeat a part of a payload */
        const size_t a = rnd(&s) % plen;
        size_t n = 1 + rnd(&s) % (plen - a);
        if (n > max_size - size)
            n = max_size - size;
        uint8_t *tmp = malloc(plen + n);
        if (tmp) {
            memcpy(tmp, pay, a + n);
            memcpy(tmp + a + n, pay + a, plen - a);
            size = replace_data(data, size, max_size, c.at[t], c.len[t], tmp, plen + n);
            free(tmp);
        }
    } else if (op < 16 && plen) { /* flip a bit near the start (the range coder's first bytes) */
        pay[rnd(&s) % (plen < 8 ? plen : 8)] ^= (uint8_t)(1u << (rnd(&s) % 8));
    } else if (op < 17 && c.ntiles >= 2) { /* two tiles' payloads swapped */
        const int a = c.tiles[rnd(&s) % c.ntiles], b = c.tiles[rnd(&s) % c.ntiles];
        const size_t la = c.len[a], lb = c.len[b];
        uint8_t *ta = malloc(la + 1), *tb = malloc(lb + 1);
        if (ta && tb && a != b) {
            memcpy(ta, data + c.at[a] + 8, la);
            memcpy(tb, data + c.at[b] + 8, lb);
            /* The later chunk first: the earlier one's place stays. */
            const int first = a < b ? a : b, second = a < b ? b : a;
            const uint8_t *into_second = second == b ? ta : tb, *into_first = first == a ? tb : ta;
            size = replace_data(data, size, max_size, c.at[second], c.len[second], into_second,
                                second == b ? la : lb);
            size = replace_data(data, size, max_size, c.at[first], c.len[first], into_first,
                                first == a ? lb : la);
        }
        free(ta);
        free(tb);
    } else if (op < 18) { /* an ancillary chunk added after HEAD, or one removed */
        int anc = -1;
        for (int i = 1; i < c.n && anc < 0; i++)
            if (data[c.at[i] + 4] >= 'a' && data[c.at[i] + 4] <= 'z')
                anc = i;
        if (anc >= 0 && rnd(&s) % 2) {
            const size_t at = c.at[anc], n = MMP_CHUNK_OVERHEAD + c.len[anc];
            memmove(data + at, data + at + n, size - at - n);
            size -= n;
        } else if (size + MMP_CHUNK_OVERHEAD + 4 <= max_size) {
            static const char *const types[] = {"iccp", "text", "exif", "zzzz", "ABCD", "tIDX"};
            uint8_t *at = data + FUZZ_CHUNK2;
            const uint32_t n = rnd(&s) % 5;
            memmove(at + MMP_CHUNK_OVERHEAD + n, at, size - FUZZ_CHUNK2);
            fuzz_put_le(at, n, 4);
            memcpy(at + 4, types[rnd(&s) % 6], 4);
            fuzz_put_le(at + 8, rnd(&s), n);
            size += MMP_CHUNK_OVERHEAD + n;
        }
    } else if (op < 19 && c.tidx >= 0) { /* the index: its count or an entry */
        uint8_t *x = data + c.at[c.tidx] + 8;
        const uint32_t entries = c.len[c.tidx] >= 4 ? (c.len[c.tidx] - 4) / 8 : 0;
        if (rnd(&s) % 2 || !entries)
            fuzz_put_le(x, field_value(&s, (uint32_t)fuzz_get_le(x, 4), 8), 4);
        else
            fuzz_put_le(x + 4 + 8 * (rnd(&s) % entries), field_value(&s, 0, (uint32_t)size), 8);
        if (rnd(&s) % 32 != 0) /* the CRC right, the entry not mended */
            fuzz_put_le(x + c.len[c.tidx], mmp_chunk_crc(x - 4, x, c.len[c.tidx]), 4);
        return size;
    } else { /* the tile sides a step larger or smaller (the count often kept) */
        uint8_t *h = data + FUZZ_HEAD_DATA;
        const int off = rnd(&s) % 2 ? FUZZ_H_TILE_W16 : FUZZ_H_TILE_H16;
        const uint32_t v = (uint32_t)fuzz_get_le(h + off, 2);
        fuzz_put_le(h + off, rnd(&s) % 2 ? v + 1 : v - 1, 2);
    }
    if (rnd(&s) % 32 != 0)
        fuzz_fix_container(data, size);
    return size;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t n1, const uint8_t *d2, size_t n2,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    uint32_t s = seed;
    if (n1 > max_out || n1 < FUZZ_CHUNK2 || n2 < FUZZ_CHUNK2)
        return 0;
    chunks c1, c2;
    walk(d1, n1, &c1);
    walk(d2, n2, &c2);
    if (!c1.ntiles || !c2.ntiles)
        return 0;
    /* d1 with one tile's payload: its first a bytes, then the bytes of a
     * tile of d2 from b on. */
    const int t1 = c1.tiles[rnd(&s) % c1.ntiles], t2 = c2.tiles[rnd(&s) % c2.ntiles];
    const size_t p1 = c1.len[t1], p2 = c2.len[t2];
    const size_t a = rnd(&s) % (p1 + 1), b = rnd(&s) % (p2 + 1);
    uint8_t *tmp = malloc(a + (p2 - b) + 1);
    if (!tmp)
        return 0;
    memcpy(tmp, d1 + c1.at[t1] + 8, a);
    memcpy(tmp + a, d2 + c2.at[t2] + 8 + b, p2 - b);
    memcpy(out, d1, n1);
    size_t n = replace_data(out, n1, max_out, c1.at[t1], c1.len[t1], tmp, a + p2 - b);
    free(tmp);
    fuzz_fix_container(out, n);
    return n;
}
#endif
