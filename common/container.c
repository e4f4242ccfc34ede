/*
 * The .mmp container header: serialisation, CRC and validation.
 *
 * Layout (docs/format.md section 2): all multi-byte fields little-endian.
 *   0  magic "MMPi"     4  version u8   5  planes u8   6  log2_block u8
 *   7  log2_pmin u8     8  width u32   12  height u32  16  maxval u16
 *  18  max_error u16   20  dict_cap u16   22  residual u8  23  tools u8
 *  24  redund_q4 u32   28  lambda_q8 u32
 *  32  payload_len u64 40  order u8    41  transform u8 42  chroma u8
 *  43  alpha u8        44  crc32 u32   48  payload
 *
 * Fields are read byte by byte, never by casting the buffer, so the code is
 * independent of host endianness and alignment.
 */
#include "common/container.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "common/error.h"
#include "common/limits.h"

enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 4,
    OFF_PLANES = 5,
    OFF_LOG2_BLOCK = 6,
    OFF_LOG2_PMIN = 7,
    OFF_WIDTH = 8,
    OFF_HEIGHT = 12,
    OFF_MAXVAL = 16,
    OFF_MAX_ERROR = 18,
    OFF_DICT_CAP = 20,
    OFF_RESIDUAL = 22,
    OFF_TOOLS = 23,
    OFF_REDUND_Q4 = 24,
    OFF_LAMBDA_Q8 = 28,
    OFF_PAYLOAD_LEN = 32,
    OFF_ORDER = 40,
    OFF_TRANSFORM = 41,
    OFF_CHROMA = 42,
    OFF_ALPHA = 43,
    OFF_CRC = 44
};

/* The offsets above and the public sizes must agree. */
_Static_assert(OFF_CRC == MMP_HEADER_CRC_OFFSET, "CRC offset");
_Static_assert(OFF_CRC + 4 == MMP_HEADER_SIZE, "header size");
_Static_assert(sizeof(MMP_MAGIC) - 1 == 4, "magic length");

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t get_u16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

void mmp_header_write(const mmp_header *h, uint8_t *out)
{
    memcpy(out + OFF_MAGIC, MMP_MAGIC, 4);
    out[OFF_VERSION] = MMP_FORMAT_VERSION;
    out[OFF_PLANES] = (uint8_t)h->planes;
    out[OFF_LOG2_BLOCK] = (uint8_t)h->log2_block;
    out[OFF_LOG2_PMIN] = (uint8_t)h->log2_pmin;
    put_u32(out + OFF_WIDTH, h->width);
    put_u32(out + OFF_HEIGHT, h->height);
    put_u16(out + OFF_MAXVAL, h->maxval);
    put_u16(out + OFF_MAX_ERROR, h->max_error);
    put_u16(out + OFF_DICT_CAP, h->dict_cap);
    out[OFF_RESIDUAL] = (uint8_t)h->residual;
    out[OFF_TOOLS] = (uint8_t)h->tools;
    put_u32(out + OFF_REDUND_Q4, h->redund_q4);
    put_u32(out + OFF_LAMBDA_Q8, h->lambda_q8);
    put_u64(out + OFF_PAYLOAD_LEN, h->payload_len);
    out[OFF_ORDER] = (uint8_t)h->order;
    out[OFF_TRANSFORM] = (uint8_t)h->transform;
    out[OFF_CHROMA] = (uint8_t)h->chroma;
    out[OFF_ALPHA] = (uint8_t)h->alpha;
    put_u32(out + OFF_CRC, h->payload_crc);
}

/* zlib's crc32() takes a uInt length; feed large buffers in pieces. */
static uLong crc_update(uLong crc, const uint8_t *p, size_t n)
{
    while (n > 0) {
        uInt chunk = n > (size_t)(UINT_MAX / 2 + 1) ? (uInt)(UINT_MAX / 2 + 1) : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return crc;
}

uint32_t mmp_container_crc(const uint8_t *header_without_crc, size_t hlen,
                           const uint8_t *payload, size_t plen)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc_update(crc, header_without_crc, hlen);
    if (payload)
        crc = crc_update(crc, payload, plen);
    return (uint32_t)crc;
}

int mmp_container_build(const mmp_header *h, const uint8_t *payload, size_t plen,
                        uint8_t **out, size_t *outlen)
{
    if (!h || !out || !outlen || (!payload && plen > 0) || (uint64_t)plen > MMP_MAX_PAYLOAD)
        return MMP_EINVAL;
    *out = NULL;
    *outlen = 0;
    if (plen > SIZE_MAX - MMP_HEADER_SIZE)
        return MMP_ENOMEM;
    size_t total = MMP_HEADER_SIZE + plen;
    uint8_t *buf = malloc(total);
    if (!buf)
        return MMP_ENOMEM;
    mmp_header hh = *h;
    hh.payload_len = plen;
    hh.payload_crc = 0;
    mmp_header_write(&hh, buf);
    if (plen > 0)
        memcpy(buf + MMP_HEADER_SIZE, payload, plen);
    /* The CRC covers the serialised header (not the struct) so that what is
     * checked is exactly what the decoder reads. */
    put_u32(buf + OFF_CRC, mmp_container_crc(buf, OFF_CRC, buf + MMP_HEADER_SIZE, plen));
    *out = buf;
    *outlen = total;
    return MMP_OK;
}

int mmp_header_parse(const uint8_t *buf, size_t len, mmp_header *h, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!h || (!buf && len > 0))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input buffer");
    memset(h, 0, sizeof *h);

    /* Magic first, on whatever prefix exists: a short foreign file is "not
     * an MMP file" rather than a truncated one. */
    size_t mlen = len < 4 ? len : 4;
    if (mlen > 0 && memcmp(buf, MMP_MAGIC, mlen) != 0)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "not an MMP file (bad magic)");
    if (len < MMP_HEADER_SIZE)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "truncated header (%zu of %d bytes)",
                    len, MMP_HEADER_SIZE);

    /* The version decides the rest of the layout, so it comes before any
     * other field. */
    if (buf[OFF_VERSION] != MMP_FORMAT_VERSION)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                    "unsupported format version %u (this decoder reads version %d)",
                    buf[OFF_VERSION], MMP_FORMAT_VERSION);

    mmp_header t;
    t.planes = buf[OFF_PLANES];
    t.log2_block = buf[OFF_LOG2_BLOCK];
    t.log2_pmin = buf[OFF_LOG2_PMIN];
    t.width = get_u32(buf + OFF_WIDTH);
    t.height = get_u32(buf + OFF_HEIGHT);
    t.maxval = get_u16(buf + OFF_MAXVAL);
    t.max_error = get_u16(buf + OFF_MAX_ERROR);
    t.dict_cap = get_u16(buf + OFF_DICT_CAP);
    t.residual = buf[OFF_RESIDUAL];
    t.tools = buf[OFF_TOOLS];
    t.redund_q4 = get_u32(buf + OFF_REDUND_Q4);
    t.lambda_q8 = get_u32(buf + OFF_LAMBDA_Q8);
    t.payload_len = get_u64(buf + OFF_PAYLOAD_LEN);
    t.order = buf[OFF_ORDER];
    t.transform = buf[OFF_TRANSFORM];
    t.chroma = buf[OFF_CHROMA];
    t.alpha = buf[OFF_ALPHA];
    t.payload_crc = get_u32(buf + OFF_CRC);

    if (t.planes < 1 || t.planes > 4)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported planes %u (1 to 4)",
                         t.planes);
    if (t.log2_block != 4)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported log2_block %u (only 4)",
                    t.log2_block);
    if (t.log2_pmin != 2)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported log2_pmin %u (only 2)",
                    t.log2_pmin);

    if (t.width == 0)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "invalid width 0");
    if (t.height == 0)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "invalid height 0");
    if (t.width > MMP_MAX_DIM)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "width %u exceeds limit %d", t.width, MMP_MAX_DIM);
    if (t.height > MMP_MAX_DIM)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "height %u exceeds limit %d", t.height,
                    MMP_MAX_DIM);
    if ((uint64_t)t.width * t.height > (uint64_t)MMP_MAX_PIXELS)
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                    "image too large: width x height = %u x %u exceeds %lld pixels",
                    t.width, t.height, (long long)MMP_MAX_PIXELS);
    if (t.tools & ~(uint32_t)MMP_TOOLS_ALL)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported tools %u (known: %d)",
                         t.tools, MMP_TOOLS_ALL);
    if (t.maxval < 1 || t.maxval > 65535)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "invalid maxval %u (must be 1..65535)",
                    t.maxval);
    if (t.dict_cap < MMP_MIN_DICT_CAP || t.dict_cap > MMP_MAX_DICT_CAP)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "dict_cap %u outside %d..%d", t.dict_cap,
                    MMP_MIN_DICT_CAP, MMP_MAX_DICT_CAP);
    if (t.redund_q4 > MMP_MAX_REDUND_Q4)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "redund_q4 %u exceeds limit %u", t.redund_q4,
                    (unsigned)MMP_MAX_REDUND_Q4);
    if (t.residual > MMP_RESIDUAL_ALONE)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported residual %u (0 none, 1 after MMP, 2 alone)", t.residual);
    if (t.residual == MMP_RESIDUAL_NONE ? t.max_error != 0 : t.max_error > MMP_MAX_ERROR_LIMIT)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported max_error %u with residual %u",
                         t.max_error, t.residual);
    /* lambda_q8 is informational: every value is valid. */
    if (t.order != MMP_ORDER_RASTER && t.order != MMP_ORDER_WAVEFRONT)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                    "unsupported order %u (0 raster, 1 wavefront)", t.order);
    /* Colour fields: only what the plane count allows (section 2). */
    const int colour = t.planes >= 3, alpha = t.planes == 2 || t.planes == 4;
    if (colour ? t.transform != MMP_TRANSFORM_YCOCG_R && t.transform != MMP_TRANSFORM_YCBCR &&
                     t.transform != MMP_TRANSFORM_RGB
               : t.transform != MMP_TRANSFORM_NONE)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported transform %u for %u planes", t.transform, t.planes);
    if (t.transform == MMP_TRANSFORM_YCOCG_R && t.maxval > MMP_YCOCG_MAX_MAXVAL)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "transform YCoCg-R with maxval %u (at most %d)", t.maxval,
                         MMP_YCOCG_MAX_MAXVAL);
    if (colour ? t.chroma != MMP_CHROMA_444 && t.chroma != MMP_CHROMA_420
               : t.chroma != MMP_CHROMA_444)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported chroma %u for %u planes",
                         t.chroma, t.planes);
    if (alpha ? t.alpha != MMP_ALPHA_EXACT && t.alpha != MMP_ALPHA_MMP
              : t.alpha != MMP_ALPHA_NONE)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported alpha %u for %u planes",
                         t.alpha, t.planes);

    if (t.payload_len > MMP_MAX_PAYLOAD)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "payload_len %llu exceeds limit %llu",
                    (unsigned long long)t.payload_len, (unsigned long long)MMP_MAX_PAYLOAD);
    uint64_t have = (uint64_t)(len - MMP_HEADER_SIZE);
    if (have < t.payload_len)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                    "truncated payload (%llu of payload_len %llu bytes)",
                    (unsigned long long)have, (unsigned long long)t.payload_len);
    if (have > t.payload_len)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                    "trailing bytes after payload (%llu extra beyond payload_len %llu)",
                    (unsigned long long)(have - t.payload_len),
                    (unsigned long long)t.payload_len);

    uint32_t crc = mmp_container_crc(buf, OFF_CRC, buf + MMP_HEADER_SIZE, (size_t)t.payload_len);
    if (crc != t.payload_crc)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "CRC mismatch (stored %08x, computed %08x)",
                    t.payload_crc, crc);

    *h = t;
    return MMP_OK;
}
