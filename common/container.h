/*
 * The .mmp container: a fixed-size header, then the range-coded payload.
 * docs/format.md describes every byte. The header is validated completely
 * before anything is allocated for decoding.
 */
#ifndef MMP_COMMON_CONTAINER_H
#define MMP_COMMON_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#define MMP_MAGIC "MMPi"
#define MMP_FORMAT_VERSION 8
/* Bytes of the fixed header, CRC included; docs/format.md has the layout. */
#define MMP_HEADER_SIZE 48
/* Bytes of the header covered by the CRC (everything before the CRC field). */
#define MMP_HEADER_CRC_OFFSET 44

/* Decoder-side limits checked by mmp_header_parse. */
#define MMP_MIN_DICT_CAP 64
#define MMP_MAX_DICT_CAP 16384
#define MMP_MAX_PAYLOAD ((uint64_t)1 << 32)
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
/* Coding tools a file may switch on (the header's tools byte, a bit each):
 * the transform residual of prediction leaves (docs/format.md 4.4). */
#define MMP_TOOL_TRANSFORM 1
#define MMP_TOOLS_ALL 1
/* Largest max_error: the quantiser's step 2N + 1 stays within 16 bits. */
#define MMP_MAX_ERROR_LIMIT 32767
/* YCoCg-R's chroma needs 2 * maxval <= 65535. */
#define MMP_YCOCG_MAX_MAXVAL 32767

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
    uint64_t payload_len;     /* bytes of range-coded payload after the header */
    uint32_t order;           /* MMP_ORDER_RASTER or MMP_ORDER_WAVEFRONT */
    uint32_t transform;       /* MMP_TRANSFORM_*: NONE iff planes < 3 */
    uint32_t chroma;          /* MMP_CHROMA_*: 444 when planes < 3 */
    uint32_t alpha;           /* MMP_ALPHA_*: NONE iff planes is 1 or 3 */
    uint32_t payload_crc;     /* zlib crc32 of header bytes [0, 44) followed by the
                                 whole payload: a bit flip anywhere in the file is
                                 detected. See mmp_container_crc. */
} mmp_header;

/*
 * Serialise to out[MMP_HEADER_SIZE] (little-endian fields). The format
 * version written is always MMP_FORMAT_VERSION; maxval, max_error and
 * dict_cap as 16 bits; planes, log2_block, log2_pmin, residual, tools,
 * order, transform, chroma and alpha as single bytes.
 * h->payload_crc is written as given:
 * compute it with mmp_container_crc, or use mmp_container_build, which does
 * both.
 */
void mmp_header_write(const mmp_header *h, uint8_t *out);

/*
 * The file's CRC: zlib crc32 over the first `hlen` header bytes (pass
 * MMP_HEADER_CRC_OFFSET: the serialised header without its CRC field), then
 * over payload[0, plen). payload may be NULL when plen == 0.
 */
uint32_t mmp_container_crc(const uint8_t *header_without_crc, size_t hlen,
                           const uint8_t *payload, size_t plen);

/*
 * Build a whole .mmp file in memory: the header from *h with payload_len set
 * to plen and the CRC computed (h's payload_len and payload_crc are ignored),
 * followed by a copy of the payload. On success *out (free() it) holds
 * *outlen = MMP_HEADER_SIZE + plen bytes. Returns 0, MMP_EINVAL (NULL
 * pointer, or plen > MMP_MAX_PAYLOAD) or MMP_ENOMEM.
 */
int mmp_container_build(const mmp_header *h, const uint8_t *payload, size_t plen,
                        uint8_t **out, size_t *outlen);

/*
 * Parse and validate a whole file in memory: magic, version, every field's
 * range, payload length against `len`, and the CRC. Returns 0 and fills *h,
 * or a negative MMP_E* code with a one-line reason in errbuf.
 */
int mmp_header_parse(const uint8_t *buf, size_t len, mmp_header *h, char *errbuf, size_t errlen);

#endif
