/*
 * The .mmp container: a 6-byte signature, then chunks, each with a length,
 * a type, its data and a CRC (as PNG's). docs/format.md section 2
 * describes every byte. The whole container is validated before anything
 * is allocated for decoding.
 */
#ifndef MMP_COMMON_CONTAINER_H
#define MMP_COMMON_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#define MMP_MAGIC "MMPi"
/* The format's version, major.minor, as this library writes it. A decoder
 * of 1.m reads every file of major 1: those of minor <= m, and those of a
 * later minor that use no tool bit and no critical chunk it lacks (a later
 * minor adds coding tools only so; the others are refused by name). It
 * also reads the draft 0.9, whose syntax is 1.0's. */
#define MMP_FORMAT_MAJOR 1
#define MMP_FORMAT_MINOR 4
#define MMP_DRAFT_MAJOR 0
#define MMP_DRAFT_MINOR 9
/* Bytes of the signature: the magic, major, minor. */
#define MMP_SIGNATURE_SIZE 6
/* Bytes a chunk adds to its data: length, type, CRC. */
#define MMP_CHUNK_OVERHEAD 12
/* Bytes of the HEAD chunk's data. */
#define MMP_HEAD_SIZE 38
/* Largest data of one chunk (its length is a u32). */
#define MMP_MAX_CHUNK ((uint64_t)UINT32_MAX)

/* Decoder-side limits checked by mmp_container_parse. */
#define MMP_MIN_DICT_CAP 64
#define MMP_MAX_DICT_CAP 16384
/* Tile sides: multiples of 16 from MMP_MIN_TILE to MMP_MAX_TILE. */
#define MMP_MIN_TILE 128
#define MMP_MAX_TILE 65536
/* Ancillary chunks a file may hold. */
#define MMP_MAX_EXTRA_CHUNKS 1024
/* Largest redund_q4 accepted: 2^30 in Q4 is a mean squared distance of 2^26
 * (RMS 8192 grey levels), beyond any useful threshold even for 16-bit images,
 * and the bound keeps the value well inside uint32_t arithmetic. */
#define MMP_MAX_REDUND_Q4 ((uint32_t)1 << 30)

/* The coding order of the blocks (docs/format.md section 4.3). */
#define MMP_ORDER_RASTER 0
#define MMP_ORDER_WAVEFRONT 1

/* The colour planes (docs/format.md section 7): the transform from RGB, the
 * chroma sampling and how alpha is coded. */
#define MMP_TRANSFORM_NONE 0     /* grey */
#define MMP_TRANSFORM_YCOCG_R 1  /* reversible YCoCg-R; chroma at maxval 2 * maxval */
#define MMP_TRANSFORM_YCBCR 2    /* BT.601 full-range YCbCr */
#define MMP_TRANSFORM_RGB 3      /* none: the R, G and B planes as they are */
/* The reversible colour transforms of format 1.4 (HEAD tools bit 4):
 * MMP_TRANSFORM_RCT + 7 * permutation + type, permutation 0..5 the order
 * of R, G, B taken as A, B, C and type 0..6 what is subtracted
 * (docs/format.md 7.2); lossless files up to maxval 32767. */
#define MMP_TRANSFORM_RCT 4
#define MMP_RCT_COUNT 42

/* Whether a header's transform is one of the reversible colour transforms. */
static inline int mmp_is_rct(int transform)
{
    return transform >= MMP_TRANSFORM_RCT && transform < MMP_TRANSFORM_RCT + MMP_RCT_COUNT;
}
#define MMP_CHROMA_444 0
#define MMP_CHROMA_420 1
#define MMP_ALPHA_NONE 0
#define MMP_ALPHA_EXACT 1        /* the alpha plane's own exact coding */
#define MMP_ALPHA_MMP 2          /* an MMP plane like the others (lossy) */
/* The residual stage of lossless and near-lossless files (docs/format.md
 * section 7.6): none (lossy), after each plane's MMP stage, or alone. */
#define MMP_RESIDUAL_NONE 0
#define MMP_RESIDUAL_AFTER_MMP 1
#define MMP_RESIDUAL_ALONE 2
/* Coding tools a file may switch on (HEAD's tools, a bit each): the
 * transform residual of prediction leaves (docs/format.md 4.4), the
 * deblocking filter (7.7, format 1.1), the residual stage's mixing coder
 * (7.6, format 1.2) and its residual context (7.6, format 1.3; only with
 * the mixing coder), the reversible colour transforms (7.2, format 1.4).
 * A bit this decoder does not know makes it refuse the file, naming the
 * bit. */
#define MMP_TOOL_TRANSFORM 1
#define MMP_TOOL_DEBLOCK 2
#define MMP_TOOL_RESIDUAL_MIX 4
#define MMP_TOOL_RESIDUAL_CONTEXT 8
#define MMP_TOOL_RCT 16
#define MMP_TOOLS_ALL 31
/* Largest max_error: the quantiser's step 2N + 1 stays within 16 bits. */
#define MMP_MAX_ERROR_LIMIT 32767
/* YCoCg-R's chroma needs 2 * maxval <= 65535. */
#define MMP_YCOCG_MAX_MAXVAL 32767

/* The HEAD chunk: what the decoder needs to mirror the encoder. */
typedef struct mmp_header {
    uint32_t width, height;   /* 1..MMP_MAX_DIM, width*height <= MMP_MAX_PIXELS */
    uint32_t maxval;          /* 1..65535 */
    uint32_t max_error;       /* residual stage: every sample within this of the input;
                                 0 without one */
    uint32_t residual;        /* MMP_RESIDUAL_* */
    uint32_t tools;           /* MMP_TOOL_* bits */
    uint32_t planes;          /* 1 grey, 2 grey + alpha, 3 colour, 4 colour + alpha */
    uint32_t log2_block;      /* 4: B = 16 */
    uint32_t log2_pmin;       /* 2: smallest prediction block side 4 */
    uint32_t dict_cap;        /* elements per scale, MMP_MIN_DICT_CAP..MMP_MAX_DICT_CAP */
    uint32_t redund_q4;       /* redundancy threshold: mean squared distance per pixel, Q4 (1/16) */
    uint32_t lambda_q8;       /* the encoder's lambda in 1/256 (informational) */
    uint32_t order;           /* MMP_ORDER_RASTER or MMP_ORDER_WAVEFRONT */
    uint32_t transform;       /* MMP_TRANSFORM_*: NONE iff planes < 3 */
    uint32_t chroma;          /* MMP_CHROMA_*: 444 when planes < 3 */
    uint32_t alpha;           /* MMP_ALPHA_*: NONE iff planes is 1 or 3 */
    uint32_t tile_w, tile_h;  /* tile sides: multiples of 16, MMP_MIN_TILE..MMP_MAX_TILE */
} mmp_header;

/* A tile: its place in the image and its coded bytes (the data of its
 * TILE chunk) within the file. */
typedef struct mmp_tile {
    uint32_t x, y, w, h;
    uint64_t offset, len;
} mmp_tile;

/* An ancillary chunk: its type and where its data lies in the file. */
typedef struct mmp_extra {
    char type[5];             /* four letters, the first lower-case; NUL-terminated */
    uint64_t offset, len;
} mmp_extra;

/* A parsed file: its version, the header, the tile grid and the ancillary
 * chunks. */
typedef struct mmp_container {
    uint32_t major, minor;    /* the signature's version */
    mmp_header h;
    uint32_t cols, rows, ntiles;
    mmp_tile *tiles;          /* ntiles, row by row (owned) */
    uint32_t nextra;
    mmp_extra *extra;         /* nextra, in file order (owned) */
} mmp_container;

/* An ancillary chunk to write. */
typedef struct mmp_extra_in {
    char type[4];
    const uint8_t *data;
    size_t len;
} mmp_extra_in;

/* The tile grid of a header: columns and rows, and tile i's place. */
void mmp_tile_grid(const mmp_header *h, uint32_t *cols, uint32_t *rows);
void mmp_tile_rect(const mmp_header *h, uint32_t i, mmp_tile *t);

/* Whether type[0..4) is a valid chunk type (four ASCII letters), and
 * whether it is ancillary (first letter lower-case). */
int mmp_chunk_type_valid(const char *type);
int mmp_chunk_ancillary(const char *type);

/* CRC-32 (zlib's) of a chunk's type and data, as its CRC field holds it. */
uint32_t mmp_chunk_crc(const uint8_t *type, const uint8_t *data, size_t len);

/*
 * Write a whole .mmp file in memory: the signature, HEAD from *h, the
 * ancillary chunks extra[0..nextra) (valid ancillary types), the tile index
 * (when there are several tiles) and the tiles' data
 * tile_data[i][0..tile_len[i]) (as many as *h's grid has). On success *out (free() it) holds *outlen bytes. Returns 0,
 * MMP_EINVAL (a NULL pointer, a tile count that is not the grid's, a
 * non-ancillary or invalid type, a chunk over MMP_MAX_CHUNK) or MMP_ENOMEM.
 */
int mmp_container_write(const mmp_header *h, const uint8_t *const *tile_data,
                        const size_t *tile_len, uint32_t ntiles, const mmp_extra_in *extra,
                        uint32_t nextra, uint8_t **out, size_t *outlen);

/* mmp_container_write of a file of one tile and no ancillary chunk. */
int mmp_container_build(const mmp_header *h, const uint8_t *payload, size_t plen,
                        uint8_t **out, size_t *outlen);

/*
 * Parse and validate a whole file in memory: the signature, every chunk's
 * length, type and CRC, their order, every HEAD field's range, the tile
 * index against the tiles. Returns 0 and fills *c (free it with
 * mmp_container_free), or a negative MMP_E* code with a one-line reason in
 * errbuf (and *c empty).
 */
int mmp_container_parse(const uint8_t *buf, size_t len, mmp_container *c, char *errbuf,
                        size_t errlen);
void mmp_container_free(mmp_container *c);

/* mmp_container_parse for the header alone. */
int mmp_header_parse(const uint8_t *buf, size_t len, mmp_header *h, char *errbuf, size_t errlen);

/* Serialise h as HEAD's data, out[MMP_HEAD_SIZE]. */
void mmp_head_write(const mmp_header *h, uint8_t *out);

#endif
