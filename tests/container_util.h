/*
 * The tests' view of the .mmp container (tests/util.h includes it): the
 * layout's offsets (MF_*), little-endian fields (put16/32/64, get16/32/64,
 * put_field), and the chunks of a file walked, found, re-checksummed and
 * rewritten (chunk_fix_crc, chunk_walk, chunk_find, fixup_container,
 * fixup_tidx, fixup_chunks, rewrite_tile), for tests that build or damage
 * files byte by byte. Everything is static inline.
 */
#ifndef MMP_TESTS_CONTAINER_UTIL_H
#define MMP_TESTS_CONTAINER_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/container.h"
#include "mmp/mmp.h"

/*
 * The .mmp file's layout (common/container.c, docs/format.md section 2):
 * the signature, then chunks of a length (u32, of the data), a type (four
 * letters), the data and a CRC-32 (u32) of the type and the data; all
 * fields little-endian. HEAD comes first, right after the signature, so its
 * place is fixed. A file of one tile and no ancillary chunk (what an encode
 * makes unless it asks for tiles, up to MMP_AUTO_TILE a side) is the
 * signature, HEAD, then one TILE chunk: MF_ONE_TILE bytes and the payload.
 */
enum {
    MF_MAJOR = 4,                                  /* the signature's version bytes */
    MF_MINOR = 5,
    MF_HEAD = MMP_SIGNATURE_SIZE,                  /* HEAD's length field */
    MF_HEAD_TYPE = MF_HEAD + 4,
    MF_HEAD_DATA = MF_HEAD + 8,
    MF_HEAD_CRC = MF_HEAD_DATA + MMP_HEAD_SIZE,
    MF_CHUNK2 = MF_HEAD_CRC + 4,                   /* the chunk after HEAD */
    /* One tile, no ancillary chunk: the TILE chunk follows HEAD. */
    MF_TILE_LEN = MF_CHUNK2,
    MF_TILE_TYPE = MF_TILE_LEN + 4,
    MF_TILE_DATA = MF_TILE_LEN + 8,                /* the payload */
    MF_ONE_TILE = MF_TILE_DATA + 4                 /* bytes besides the payload */
};

/* HEAD's fields: their offsets in the file (in its data less MF_HEAD_DATA)
 * and their sizes in bytes. */
enum {
    MF_PLANES = MF_HEAD_DATA + 0,
    MF_LOG2_BLOCK = MF_HEAD_DATA + 1,
    MF_LOG2_PMIN = MF_HEAD_DATA + 2,
    MF_RESIDUAL = MF_HEAD_DATA + 3,
    MF_WIDTH = MF_HEAD_DATA + 4,        /* u32 */
    MF_HEIGHT = MF_HEAD_DATA + 8,       /* u32 */
    MF_MAXVAL = MF_HEAD_DATA + 12,      /* u16 */
    MF_MAX_ERROR = MF_HEAD_DATA + 14,   /* u16 */
    MF_DICT_CAP = MF_HEAD_DATA + 16,    /* u16 */
    MF_ORDER = MF_HEAD_DATA + 18,
    MF_TRANSFORM = MF_HEAD_DATA + 19,
    MF_CHROMA = MF_HEAD_DATA + 20,
    MF_ALPHA = MF_HEAD_DATA + 21,
    MF_TOOLS = MF_HEAD_DATA + 22,       /* u32 */
    MF_REDUND_Q4 = MF_HEAD_DATA + 26,   /* u32 */
    MF_LAMBDA_Q8 = MF_HEAD_DATA + 30,   /* u32 */
    MF_TILE_W16 = MF_HEAD_DATA + 34,    /* u16: the tile width / 16 */
    MF_TILE_H16 = MF_HEAD_DATA + 36     /* u16: the tile height / 16 */
};
_Static_assert(MF_TILE_H16 + 2 == MF_HEAD_CRC, "HEAD's fields fill its data");
_Static_assert(MF_ONE_TILE == MMP_SIGNATURE_SIZE + 2 * MMP_CHUNK_OVERHEAD + MMP_HEAD_SIZE,
               "a file of one tile");

/* Little-endian fields. */
static inline void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* A field of `size` bytes (1, 2, 4 or 8) at p, little-endian. */
static inline void put_field(uint8_t *p, int size, uint64_t v)
{
    for (int i = 0; i < size; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes the CRC of the chunk at `at` of b[0..n) from its length and
 * type; 0, or -1 (nothing written) when the chunk does not fit in n. */
static inline int chunk_fix_crc(uint8_t *b, size_t n, size_t at)
{
    if (at > n || n - at < MMP_CHUNK_OVERHEAD)
        return -1;
    const uint64_t len = get32(b + at);
    if (len > n - at - MMP_CHUNK_OVERHEAD)
        return -1;
    put32(b + at + 8 + len, mmp_chunk_crc(b + at + 4, b + at + 8, (size_t)len));
    return 0;
}

/* A chunk of a file as the walk finds it: where it starts, its length and
 * type (NUL-terminated). */
typedef struct chunk_ref {
    size_t at;
    uint32_t len;
    char type[5];
} chunk_ref;

/* The chunks of b[0..n) from the signature on, as far as their lengths
 * fit: up to max of them into list (NULL: only count). Returns how many
 * fit. Nothing is checked but the lengths. */
static inline int chunk_walk(const uint8_t *b, size_t n, chunk_ref *list, int max)
{
    int k = 0;
    for (size_t at = MMP_SIGNATURE_SIZE; at <= n && n - at >= MMP_CHUNK_OVERHEAD;) {
        const uint32_t len = get32(b + at);
        if (len > n - at - MMP_CHUNK_OVERHEAD)
            break;
        if (list && k < max) {
            list[k].at = at;
            list[k].len = len;
            memcpy(list[k].type, b + at + 4, 4);
            list[k].type[4] = 0;
        }
        k++;
        at += MMP_CHUNK_OVERHEAD + (size_t)len;
    }
    return k;
}

/* The first chunk of type `type` in b[0..n) (chunk_walk's), or -1. */
static inline int chunk_find(const uint8_t *b, size_t n, const char *type, chunk_ref *out)
{
    const int k = chunk_walk(b, n, NULL, 0);
    chunk_ref *list = malloc(sizeof *list * (size_t)(k ? k : 1));
    int found = -1;
    chunk_walk(b, n, list, k);
    for (int i = 0; i < k && found < 0; i++)
        if (!memcmp(list[i].type, type, 4)) {
            found = i;
            *out = list[i];
        }
    free(list);
    return found;
}

/*
 * Makes an edited file of one tile and no ancillary chunk (n bytes)
 * self-consistent again, so that a later check, not a CRC's, is what meets
 * the edit: HEAD's CRC recomputed; with fix_len the TILE chunk's length set
 * to what follows its header, less its CRC (the last 4 bytes, recomputed;
 * a file shorter than MF_ONE_TILE keeps its TILE chunk as it is); without,
 * the TILE chunk's CRC recomputed where its length fits in n.
 */
static inline void fixup_container(uint8_t *b, size_t n, int fix_len)
{
    if (n < MF_CHUNK2)
        return;
    chunk_fix_crc(b, n, MF_HEAD);
    if (fix_len && n >= MF_ONE_TILE)
        put32(b + MF_TILE_LEN, (uint32_t)(n - MF_ONE_TILE));
    chunk_fix_crc(b, n, MF_TILE_LEN);
}

/* The tile index of b[0..n) (its first TIDX chunk, if any) set to list the
 * offsets of the TILE chunks that follow it, as many as it has room for;
 * its count and its CRC are left as they are. Returns how many it lists. */
static inline uint32_t fixup_tidx(uint8_t *b, size_t n)
{
    chunk_ref t;
    if (chunk_find(b, n, "TIDX", &t) < 0)
        return 0;
    const uint32_t room = t.len >= 4 ? (t.len - 4) / 8 : 0;
    uint32_t k = 0;
    for (size_t at = t.at + MMP_CHUNK_OVERHEAD + t.len;
         k < room && at <= n && n - at >= MMP_CHUNK_OVERHEAD &&
         get32(b + at) <= n - at - MMP_CHUNK_OVERHEAD;
         at += MMP_CHUNK_OVERHEAD + (size_t)get32(b + at))
        if (!memcmp(b + at + 4, "TILE", 4))
            put64(b + t.at + 12 + 8 * (size_t)k++, at);
    return k;
}

/*
 * The same as fixup_container for any file: every chunk's CRC recomputed,
 * as far as the lengths fit in n. With fix_len the lengths are mended
 * first: the chunk that would run past the end ends at it, as does the
 * last tile of HEAD's grid (the bytes after it become its data), and the
 * tile index lists the TILE chunks that follow it (fixup_tidx). Returns
 * the number of chunks whose CRC was written.
 */
static inline int fixup_chunks(uint8_t *b, size_t n, int fix_len)
{
    if (fix_len && n >= MF_CHUNK2) {
        /* The grid from HEAD's raw fields (valid or not). */
        uint64_t ntiles = 0;
        const uint64_t w = get32(b + MF_WIDTH), h = get32(b + MF_HEIGHT);
        const uint64_t tw = 16 * (uint64_t)get16(b + MF_TILE_W16);
        const uint64_t th = 16 * (uint64_t)get16(b + MF_TILE_H16);
        if (tw && th)
            ntiles = (w + tw - 1) / tw * ((h + th - 1) / th);
        uint64_t tiles = 0;
        for (size_t at = MMP_SIGNATURE_SIZE; at <= n && n - at >= MMP_CHUNK_OVERHEAD;) {
            uint64_t len = get32(b + at);
            const int is_tile = !memcmp(b + at + 4, "TILE", 4);
            if (len > n - at - MMP_CHUNK_OVERHEAD || (is_tile && tiles + 1 == ntiles)) {
                len = n - at - MMP_CHUNK_OVERHEAD;
                if (len > UINT32_MAX)
                    break;
                put32(b + at, (uint32_t)len);
            }
            tiles += is_tile;
            at += MMP_CHUNK_OVERHEAD + (size_t)len;
        }
        fixup_tidx(b, n);
    }
    int fixed = 0;
    for (size_t at = MMP_SIGNATURE_SIZE; chunk_fix_crc(b, n, at) == 0;
         at += MMP_CHUNK_OVERHEAD + (size_t)get32(b + at))
        fixed++;
    return fixed;
}

/*
 * The file b[0..n) (a valid one) written again with tile k's data replaced
 * by data[0..len) (k < 0: none replaced) and the ancillary chunks kept:
 * the tile index and every CRC follow. *out (free()) gets the file.
 */
static inline void rewrite_tile(const uint8_t *b, size_t n, int k, const uint8_t *data,
                                size_t len, uint8_t **out, size_t *outlen)
{
    mmp_container c;
    char err[256] = "";
    if (mmp_container_parse(b, n, &c, err, sizeof err))
        fail_msg("rewrite_tile: the file does not parse: %s", err);
    const uint8_t **td = malloc(sizeof *td * c.ntiles);
    size_t *tl = malloc(sizeof *tl * c.ntiles);
    mmp_extra_in *x = malloc(sizeof *x * (c.nextra ? c.nextra : 1));
    assert_true(td && tl && x);
    for (uint32_t i = 0; i < c.ntiles; i++) {
        td[i] = (int)i == k ? data : b + c.tiles[i].offset;
        tl[i] = (int)i == k ? len : (size_t)c.tiles[i].len;
    }
    for (uint32_t i = 0; i < c.nextra; i++) {
        memcpy(x[i].type, c.extra[i].type, 4);
        x[i].data = b + c.extra[i].offset;
        x[i].len = (size_t)c.extra[i].len;
    }
    assert_int_equal(mmp_container_write(&c.h, td, tl, c.ntiles, x, c.nextra, out, outlen), 0);
    free(td);
    free(tl);
    free(x);
    mmp_container_free(&c);
}

#endif
