/*
 * The .mmp container: the signature, then chunks (docs/format.md section 2).
 * All multi-byte fields are little-endian.
 *
 *   signature  "MMPi", major u8, minor u8
 *   chunk      length u32 (of the data), type (4 letters), data, CRC-32 u32
 *              of the type and the data
 *
 * The chunks, in order: HEAD; ancillary chunks (type's first letter
 * lower-case); TIDX, the tile index, when there is more than one tile; one
 * TILE per tile, row by row; nothing after the last tile.
 *
 * HEAD's data (MMP_HEAD_SIZE bytes):
 *   0  planes u8       1  log2_block u8   2  log2_pmin u8    3  residual u8
 *   4  width u32       8  height u32     12  maxval u16     14  max_error u16
 *  16  dict_cap u16   18  order u8       19  transform u8   20  chroma u8
 *  21  alpha u8       22  tools u32      26  redund_q4 u32  30  lambda_q8 u32
 *  34  tile_w / 16 u16                   36  tile_h / 16 u16
 *
 * Fields are read byte by byte, never by casting the buffer, so the code is
 * independent of host endianness and alignment.
 */
#include "common/container.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/limits.h"

enum {
    H_PLANES = 0,
    H_LOG2_BLOCK = 1,
    H_LOG2_PMIN = 2,
    H_RESIDUAL = 3,
    H_WIDTH = 4,
    H_HEIGHT = 8,
    H_MAXVAL = 12,
    H_MAX_ERROR = 14,
    H_DICT_CAP = 16,
    H_ORDER = 18,
    H_TRANSFORM = 19,
    H_CHROMA = 20,
    H_ALPHA = 21,
    H_TOOLS = 22,
    H_REDUND_Q4 = 26,
    H_LAMBDA_Q8 = 30,
    H_TILE_W = 34,
    H_TILE_H = 36
};
_Static_assert(H_TILE_H + 2 == MMP_HEAD_SIZE, "HEAD size");
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

void mmp_head_write(const mmp_header *h, uint8_t *out)
{
    memset(out, 0, MMP_HEAD_SIZE);
    out[H_PLANES] = (uint8_t)h->planes;
    out[H_LOG2_BLOCK] = (uint8_t)h->log2_block;
    out[H_LOG2_PMIN] = (uint8_t)h->log2_pmin;
    out[H_RESIDUAL] = (uint8_t)h->residual;
    put_u32(out + H_WIDTH, h->width);
    put_u32(out + H_HEIGHT, h->height);
    put_u16(out + H_MAXVAL, h->maxval);
    put_u16(out + H_MAX_ERROR, h->max_error);
    put_u16(out + H_DICT_CAP, h->dict_cap);
    out[H_ORDER] = (uint8_t)h->order;
    out[H_TRANSFORM] = (uint8_t)h->transform;
    out[H_CHROMA] = (uint8_t)h->chroma;
    out[H_ALPHA] = (uint8_t)h->alpha;
    put_u32(out + H_TOOLS, h->tools);
    put_u32(out + H_REDUND_Q4, h->redund_q4);
    put_u32(out + H_LAMBDA_Q8, h->lambda_q8);
    put_u16(out + H_TILE_W, h->tile_w / 16);
    put_u16(out + H_TILE_H, h->tile_h / 16);
}

/*
 * CRC-32 as zlib's crc32() and PNG compute it (reflected polynomial
 * 0xEDB88320, initial value and final XOR 0xFFFFFFFF), here so that the
 * decoder needs no zlib. Eight bytes a round (slicing by eight): table[k][b]
 * is the CRC of byte b followed by k zero bytes.
 */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int i = 0; i < 8; i++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][b] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int b = 0; b < 256; b++)
            crc_table[k][b] =
                crc_table[0][crc_table[k - 1][b] & 0xff] ^ (crc_table[k - 1][b] >> 8);
}

/* crc: the register (before the final XOR) after the bytes so far. */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8) {
        const uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                                   (uint32_t)p[3] << 24);
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
              crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
    }
    for (; n > 0; p++, n--)
        crc = crc_table[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
    return crc;
}

uint32_t mmp_chunk_crc(const uint8_t *type, const uint8_t *data, size_t len)
{
    pthread_once(&crc_once, crc_init);
    uint32_t crc = crc_update(0xFFFFFFFFu, type, 4);
    if (data)
        crc = crc_update(crc, data, len);
    return crc ^ 0xFFFFFFFFu;
}

int mmp_chunk_type_valid(const char *type)
{
    for (int i = 0; i < 4; i++) {
        const char ch = type[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')))
            return 0;
    }
    return 1;
}

int mmp_chunk_ancillary(const char *type)
{
    return type[0] >= 'a' && type[0] <= 'z';
}

void mmp_tile_grid(const mmp_header *h, uint32_t *cols, uint32_t *rows)
{
    *cols = h->tile_w ? (uint32_t)(((uint64_t)h->width + h->tile_w - 1) / h->tile_w) : 0;
    *rows = h->tile_h ? (uint32_t)(((uint64_t)h->height + h->tile_h - 1) / h->tile_h) : 0;
}

void mmp_tile_rect(const mmp_header *h, uint32_t i, mmp_tile *t)
{
    uint32_t cols, rows;
    mmp_tile_grid(h, &cols, &rows);
    const uint32_t r = i / cols, c = i % cols;
    t->x = c * h->tile_w;
    t->y = r * h->tile_h;
    t->w = h->width - t->x < h->tile_w ? h->width - t->x : h->tile_w;
    t->h = h->height - t->y < h->tile_h ? h->height - t->y : h->tile_h;
    t->offset = t->len = 0;
}

/* Appends one chunk at *at of out (room checked by the caller). */
static void put_chunk(uint8_t *out, size_t *at, const char *type, const uint8_t *data, size_t len)
{
    uint8_t *p = out + *at;
    put_u32(p, (uint32_t)len);
    memcpy(p + 4, type, 4);
    if (len)
        memcpy(p + 8, data, len);
    put_u32(p + 8 + len, mmp_chunk_crc(p + 4, p + 8, len));
    *at += MMP_CHUNK_OVERHEAD + len;
}

int mmp_container_write(const mmp_header *h, const uint8_t *const *tile_data,
                        const size_t *tile_len, uint32_t ntiles, const mmp_extra_in *extra,
                        uint32_t nextra, uint8_t **out, size_t *outlen)
{
    if (!h || !out || !outlen || (ntiles && (!tile_data || !tile_len)) || (nextra && !extra))
        return MMP_EINVAL;
    *out = NULL;
    *outlen = 0;
    uint32_t cols, rows;
    mmp_tile_grid(h, &cols, &rows);
    if ((uint64_t)cols * rows != ntiles || ntiles == 0 || nextra > MMP_MAX_EXTRA_CHUNKS)
        return MMP_EINVAL;
    uint64_t total = MMP_SIGNATURE_SIZE + MMP_CHUNK_OVERHEAD + MMP_HEAD_SIZE;
    for (uint32_t i = 0; i < nextra; i++) {
        if (!mmp_chunk_type_valid(extra[i].type) || !mmp_chunk_ancillary(extra[i].type) ||
            (uint64_t)extra[i].len > MMP_MAX_CHUNK || (!extra[i].data && extra[i].len))
            return MMP_EINVAL;
        total += MMP_CHUNK_OVERHEAD + (uint64_t)extra[i].len;
    }
    /* One tile needs no index. */
    const uint64_t tidx_len = ntiles > 1 ? 4 + 8 * (uint64_t)ntiles : 0;
    if (tidx_len > MMP_MAX_CHUNK)
        return MMP_EINVAL;
    if (tidx_len)
        total += MMP_CHUNK_OVERHEAD + tidx_len;
    for (uint32_t i = 0; i < ntiles; i++) {
        if ((uint64_t)tile_len[i] > MMP_MAX_CHUNK || (!tile_data[i] && tile_len[i]))
            return MMP_EINVAL;
        total += MMP_CHUNK_OVERHEAD + (uint64_t)tile_len[i];
    }
    if (total > SIZE_MAX)
        return MMP_ENOMEM;
    uint8_t *buf = malloc((size_t)total);
    uint8_t *tidx = tidx_len ? malloc((size_t)tidx_len) : NULL;
    if (!buf || (tidx_len && !tidx)) {
        free(buf);
        free(tidx);
        return MMP_ENOMEM;
    }
    memcpy(buf, MMP_MAGIC, 4);
    buf[4] = MMP_FORMAT_MAJOR;
    buf[5] = MMP_FORMAT_MINOR;
    size_t at = MMP_SIGNATURE_SIZE;
    uint8_t head[MMP_HEAD_SIZE];
    mmp_head_write(h, head);
    put_chunk(buf, &at, "HEAD", head, sizeof head);
    for (uint32_t i = 0; i < nextra; i++)
        put_chunk(buf, &at, extra[i].type, extra[i].data, extra[i].len);
    if (tidx) {
        /* The tiles follow the index: their offsets are known now. */
        put_u32(tidx, ntiles);
        uint64_t t_at = at + MMP_CHUNK_OVERHEAD + tidx_len;
        for (uint32_t i = 0; i < ntiles; i++) {
            put_u64(tidx + 4 + 8 * (size_t)i, t_at);
            t_at += MMP_CHUNK_OVERHEAD + (uint64_t)tile_len[i];
        }
        put_chunk(buf, &at, "TIDX", tidx, (size_t)tidx_len);
        free(tidx);
    }
    for (uint32_t i = 0; i < ntiles; i++)
        put_chunk(buf, &at, "TILE", tile_data[i], tile_len[i]);
    *out = buf;
    *outlen = at;
    return MMP_OK;
}

int mmp_container_build(const mmp_header *h, const uint8_t *payload, size_t plen,
                        uint8_t **out, size_t *outlen)
{
    if (!h || (!payload && plen > 0))
        return MMP_EINVAL;
    return mmp_container_write(h, &payload, &plen, 1, NULL, 0, out, outlen);
}

/* Validates HEAD's fields (data of MMP_HEAD_SIZE bytes) into *h. */
static int parse_head(const uint8_t *d, mmp_header *h, char *errbuf, size_t errlen)
{
    mmp_header t;
    memset(&t, 0, sizeof t);
    t.planes = d[H_PLANES];
    t.log2_block = d[H_LOG2_BLOCK];
    t.log2_pmin = d[H_LOG2_PMIN];
    t.residual = d[H_RESIDUAL];
    t.width = get_u32(d + H_WIDTH);
    t.height = get_u32(d + H_HEIGHT);
    t.maxval = get_u16(d + H_MAXVAL);
    t.max_error = get_u16(d + H_MAX_ERROR);
    t.dict_cap = get_u16(d + H_DICT_CAP);
    t.order = d[H_ORDER];
    t.transform = d[H_TRANSFORM];
    t.chroma = d[H_CHROMA];
    t.alpha = d[H_ALPHA];
    t.tools = get_u32(d + H_TOOLS);
    t.redund_q4 = get_u32(d + H_REDUND_Q4);
    t.lambda_q8 = get_u32(d + H_LAMBDA_Q8);
    t.tile_w = 16 * get_u16(d + H_TILE_W);
    t.tile_h = 16 * get_u16(d + H_TILE_H);

    /* A tool this decoder lacks first: a newer file gets that reason. */
    if (t.tools & ~(uint32_t)MMP_TOOLS_ALL) {
        int bit = 0;
        while (!((t.tools & ~(uint32_t)MMP_TOOLS_ALL) >> bit & 1))
            bit++;
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "this file needs a newer mmp-dec (coding tool %d)", bit);
    }
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
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "width %u exceeds limit %d", t.width,
                         MMP_MAX_DIM);
    if (t.height > MMP_MAX_DIM)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "height %u exceeds limit %d", t.height,
                         MMP_MAX_DIM);
    if ((uint64_t)t.width * t.height > (uint64_t)MMP_MAX_PIXELS)
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "image too large: width x height = %u x %u exceeds %lld pixels",
                         t.width, t.height, (long long)MMP_MAX_PIXELS);
    if (t.maxval < 1 || t.maxval > 65535)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "invalid maxval %u (must be 1..65535)",
                         t.maxval);
    if (t.dict_cap < MMP_MIN_DICT_CAP || t.dict_cap > MMP_MAX_DICT_CAP)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "dict_cap %u outside %d..%d", t.dict_cap,
                         MMP_MIN_DICT_CAP, MMP_MAX_DICT_CAP);
    if (t.redund_q4 > MMP_MAX_REDUND_Q4)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "redund_q4 %u exceeds limit %u",
                         t.redund_q4, (unsigned)MMP_MAX_REDUND_Q4);
    if (t.residual > MMP_RESIDUAL_ALONE)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported residual %u (0 none, 1 after MMP, 2 alone)", t.residual);
    if (t.residual == MMP_RESIDUAL_NONE ? t.max_error != 0 : t.max_error > MMP_MAX_ERROR_LIMIT)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported max_error %u with residual %u", t.max_error, t.residual);
    /* lambda_q8 is informational: every value is valid. */
    if (t.order != MMP_ORDER_RASTER && t.order != MMP_ORDER_WAVEFRONT)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported order %u (0 raster, 1 wavefront)", t.order);
    /* Colour fields: only what the plane count allows (section 2). */
    const int colour = t.planes >= 3, alpha = t.planes == 2 || t.planes == 4;
    /* The reversible colour transforms only with their tool bit. */
    const int rct = mmp_is_rct((int)t.transform) && (t.tools & MMP_TOOL_RCT);
    if (colour ? t.transform != MMP_TRANSFORM_YCOCG_R && t.transform != MMP_TRANSFORM_YCBCR &&
                     t.transform != MMP_TRANSFORM_RGB && !rct
               : t.transform != MMP_TRANSFORM_NONE)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported transform %u for %u planes", t.transform, t.planes);
    if ((t.transform == MMP_TRANSFORM_YCOCG_R || rct) && t.maxval > MMP_YCOCG_MAX_MAXVAL)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "transform %s with maxval %u (at most %d)",
                         rct ? "RCT" : "YCoCg-R", t.maxval, MMP_YCOCG_MAX_MAXVAL);
    if (colour ? t.chroma != MMP_CHROMA_444 && t.chroma != MMP_CHROMA_420
               : t.chroma != MMP_CHROMA_444)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported chroma %u for %u planes",
                         t.chroma, t.planes);
    if (alpha ? t.alpha != MMP_ALPHA_EXACT && t.alpha != MMP_ALPHA_MMP
              : t.alpha != MMP_ALPHA_NONE)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "unsupported alpha %u for %u planes",
                         t.alpha, t.planes);
    if (t.tile_w < MMP_MIN_TILE || t.tile_w > MMP_MAX_TILE || t.tile_h < MMP_MIN_TILE ||
        t.tile_h > MMP_MAX_TILE)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                         "invalid tile size %ux%u (multiples of 16 from %d to %d)", t.tile_w,
                         t.tile_h, MMP_MIN_TILE, MMP_MAX_TILE);
    *h = t;
    return MMP_OK;
}

void mmp_container_free(mmp_container *c)
{
    if (!c)
        return;
    free(c->tiles);
    free(c->extra);
    memset(c, 0, sizeof *c);
}

/* Where the parse is: which chunks have been seen. */
enum { SEEN_NONE, SEEN_HEAD, SEEN_TIDX, SEEN_TILE };

/* One chunk at `at` (its length, type and CRC checked by the caller):
 * HEAD, TIDX, TILE or an ancillary chunk, each where it may be. */
static int take_chunk(const uint8_t *buf, size_t at, const char *name, uint64_t clen,
                      mmp_container *c, int *seen, uint32_t *tile, uint64_t **index,
                      char *errbuf, size_t errlen)
{
    const uint8_t *data = buf + at + 8;
    if (*seen == SEEN_NONE && strcmp(name, "HEAD") != 0)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "the first chunk is %s, not HEAD", name);
    if (!strcmp(name, "HEAD")) {
        if (*seen != SEEN_NONE)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "a second HEAD chunk");
        if (clen != MMP_HEAD_SIZE)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "HEAD chunk of %llu bytes, not %d",
                             (unsigned long long)clen, MMP_HEAD_SIZE);
        const int err = parse_head(data, &c->h, errbuf, errlen);
        if (err)
            return err;
        mmp_tile_grid(&c->h, &c->cols, &c->rows);
        c->ntiles = c->cols * c->rows;
        if (!(c->tiles = calloc(c->ntiles, sizeof *c->tiles)))
            return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
        *seen = SEEN_HEAD;
        return 0;
    }
    if (!strcmp(name, "TIDX")) {
        if (*seen != SEEN_HEAD || c->ntiles < 2)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "TIDX chunk out of place");
        if (clen != 4 + 8 * (uint64_t)c->ntiles || get_u32(data) != c->ntiles)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                             "tile index of %llu bytes does not list the %u tiles of HEAD",
                             (unsigned long long)clen, c->ntiles);
        if (!(*index = malloc(sizeof **index * c->ntiles)))
            return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < c->ntiles; i++)
            (*index)[i] = get_u64(data + 4 + 8 * (size_t)i);
        *seen = SEEN_TIDX;
        return 0;
    }
    if (!strcmp(name, "TILE")) {
        if (*seen == SEEN_HEAD && c->ntiles > 1)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "a TILE chunk before the tile index");
        if (*tile >= c->ntiles)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "more TILE chunks than the %u tiles",
                             c->ntiles);
        if (*index && (*index)[*tile] != at)
            return mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                             "tile %u is at byte %zu, the index says %llu", *tile, at,
                             (unsigned long long)(*index)[*tile]);
        mmp_tile *t = &c->tiles[*tile];
        mmp_tile_rect(&c->h, *tile, t);
        t->offset = at + 8;
        t->len = clen;
        (*tile)++;
        *seen = SEEN_TILE;
        return 0;
    }
    if (!mmp_chunk_ancillary(name))
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "this file needs a newer mmp-dec (critical chunk %s)", name);
    if (*seen != SEEN_HEAD)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                         "%s chunk after the tile index or a tile (ancillary chunks come "
                         "before them)",
                         name);
    if (c->nextra >= MMP_MAX_EXTRA_CHUNKS)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "more than %d ancillary chunks",
                         MMP_MAX_EXTRA_CHUNKS);
    if (c->nextra % 16 == 0) {
        mmp_extra *x = realloc(c->extra, sizeof *x * (c->nextra + 16));
        if (!x)
            return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
        c->extra = x;
    }
    mmp_extra *x = &c->extra[c->nextra++];
    memcpy(x->type, name, 5);
    x->offset = at + 8;
    x->len = clen;
    return 0;
}

static int parse(const uint8_t *buf, size_t len, mmp_container *c, char *errbuf, size_t errlen)
{
    /* The magic first, on whatever prefix exists: a short foreign file is
     * "not an MMP file" rather than a truncated one. */
    const size_t mlen = len < 4 ? len : 4;
    if (mlen > 0 && memcmp(buf, MMP_MAGIC, mlen) != 0)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "not an MMP file (bad magic)");
    if (len < MMP_SIGNATURE_SIZE)
        return mmp_error(errbuf, errlen, MMP_EBITSTREAM, "truncated signature (%zu of %d bytes)",
                         len, MMP_SIGNATURE_SIZE);
    const unsigned major = buf[4], minor = buf[5];
    /* The single-header format before 0.9 held its version (1 to 8) in
     * byte 4 and log2_block 4 and log2_pmin 2 in bytes 6 and 7, where a
     * chunked file has HEAD's length (38: 26 00). */
    if (major >= 1 && major <= 8 && len >= 8 && buf[6] == 4 && buf[7] == 2)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported format version %u (written before the chunked format; "
                         "this decoder reads %d.x and %d.%d)",
                         major, MMP_FORMAT_MAJOR, MMP_DRAFT_MAJOR, MMP_DRAFT_MINOR);
    /* Every minor version of its major (a later one's new tools are
     * refused by their tool bit or critical chunk), and the draft. */
    if (major != MMP_FORMAT_MAJOR && !(major == MMP_DRAFT_MAJOR && minor == MMP_DRAFT_MINOR))
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "unsupported format version %u.%u (this decoder reads %d.x and %d.%d)",
                         major, minor, MMP_FORMAT_MAJOR, MMP_DRAFT_MAJOR, MMP_DRAFT_MINOR);
    c->major = major;
    c->minor = minor;
    size_t at = MMP_SIGNATURE_SIZE;
    int seen = SEEN_NONE;
    uint32_t tile = 0;
    uint64_t *index = NULL;
    int err = 0;
    while (!err && !(seen == SEEN_TILE && tile == c->ntiles)) {
        if (len - at < MMP_CHUNK_OVERHEAD) {
            err = mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                            at == len ? "truncated file (%u of %u tiles)"
                                      : "truncated chunk header (%u of %u tiles before it)",
                            tile, c->ntiles);
            break;
        }
        const uint64_t clen = get_u32(buf + at);
        const char *type = (const char *)buf + at + 4;
        if (!mmp_chunk_type_valid(type)) {
            err = mmp_error(errbuf, errlen, MMP_EBITSTREAM, "invalid chunk type at byte %zu",
                            at + 4);
            break;
        }
        const char name[5] = {type[0], type[1], type[2], type[3], 0};
        if (clen > len - at - MMP_CHUNK_OVERHEAD) {
            err = mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                            "truncated %s chunk (%llu bytes, %llu left)", name,
                            (unsigned long long)clen,
                            (unsigned long long)(len - at - MMP_CHUNK_OVERHEAD));
            break;
        }
        const uint32_t stored = get_u32(buf + at + 8 + clen);
        const uint32_t crc = mmp_chunk_crc(buf + at + 4, buf + at + 8, (size_t)clen);
        if (stored != crc) {
            err = mmp_error(errbuf, errlen, MMP_EBITSTREAM,
                            "CRC mismatch in %s chunk at byte %zu (stored %08x, computed %08x)",
                            name, at, stored, crc);
            break;
        }
        err = take_chunk(buf, at, name, clen, c, &seen, &tile, &index, errbuf, errlen);
        at += MMP_CHUNK_OVERHEAD + (size_t)clen;
    }
    free(index);
    if (!err && at != len)
        err = mmp_error(errbuf, errlen, MMP_EBITSTREAM, "trailing bytes after the last tile (%zu)",
                        len - at);
    return err;
}

int mmp_container_parse(const uint8_t *buf, size_t len, mmp_container *c, char *errbuf,
                        size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (c)
        memset(c, 0, sizeof *c);
    if (!c || (!buf && len > 0))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input buffer");
    const int err = parse(buf, len, c, errbuf, errlen);
    if (err)
        mmp_container_free(c);
    return err;
}

int mmp_header_parse(const uint8_t *buf, size_t len, mmp_header *h, char *errbuf, size_t errlen)
{
    if (!h)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no header record");
    memset(h, 0, sizeof *h);
    mmp_container c;
    const int err = mmp_container_parse(buf, len, &c, errbuf, errlen);
    if (!err)
        *h = c.h;
    mmp_container_free(&c);
    return err;
}
