/*
 * Tests of the .mmp container (common/container.c, docs/format.md section
 * 2): the signature and the chunks (HEAD, ancillary chunks, TIDX, TILE),
 * written and parsed back field by field; two example files byte for byte;
 * every check of the parse: each HEAD field's range, the tile sizes, the
 * coding tools and chunk types a newer writer may use, the chunks' order,
 * the tile index, truncation at every byte, a flip of every bit, trailing
 * bytes; and huge tile counts within bounded memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "common/container.h"
#include "common/error.h"
#include "common/limits.h"
#include "mmp/mmp.h"
#include "util.h"

#define PAYLOAD_LEN 37
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A valid header of a 64 x 48 image in one 128 x 128 tile. */
static void fill_header(mmp_header *h)
{
    memset(h, 0, sizeof *h);
    h->width = 64;
    h->height = 48;
    h->maxval = 255;
    h->planes = 4;
    h->log2_block = 4;
    h->log2_pmin = 2;
    h->dict_cap = 1024;
    h->redund_q4 = 100;
    h->lambda_q8 = 2560;
    h->order = MMP_ORDER_WAVEFRONT;
    h->transform = MMP_TRANSFORM_YCBCR;
    h->chroma = MMP_CHROMA_420;
    h->alpha = MMP_ALPHA_EXACT;
    h->tools = MMP_TOOL_TRANSFORM;
    h->tile_w = 128;
    h->tile_h = 128;
}

static void fill_payload(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 151u + 7u + seed * 29u);
}

/* A valid file of one tile and no ancillary chunk; the caller frees it. */
static uint8_t *make_file(size_t *len)
{
    mmp_header h;
    uint8_t payload[PAYLOAD_LEN];
    fill_header(&h);
    fill_payload(payload, sizeof payload, 0);
    uint8_t *buf = NULL;
    assert_int_equal(mmp_container_build(&h, payload, sizeof payload, &buf, len), MMP_OK);
    assert_non_null(buf);
    assert_int_equal(*len, MF_ONE_TILE + PAYLOAD_LEN);
    return buf;
}

/* The multi-tile file: 300 x 200 in tiles of 128 x 128 (3 x 2, the last
 * column 44 wide, the last row 72 high), tiles of these lengths (one
 * empty), and with_extra ancillary chunks (an ICC profile, a text and an
 * empty chunk of a type no decoder knows). */
#define MULTI_W 300
#define MULTI_H 200
#define MULTI_TILES 6
static const size_t multi_len[MULTI_TILES] = {5, 0, 9, 1, 17, 3};
#define MULTI_EXTRA 3
static const char *const multi_types[MULTI_EXTRA] = {"iccp", "text", "zzzz"};
static const uint8_t multi_icc[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const uint8_t multi_text[] = "Title\0x";

static uint8_t *make_multi(size_t *len, int with_extra)
{
    mmp_header h;
    fill_header(&h);
    h.width = MULTI_W;
    h.height = MULTI_H;
    uint8_t data[MULTI_TILES][32];
    const uint8_t *td[MULTI_TILES];
    for (int i = 0; i < MULTI_TILES; i++) {
        fill_payload(data[i], multi_len[i], (unsigned)i + 1);
        td[i] = data[i];
    }
    const mmp_extra_in x[MULTI_EXTRA] = {
        {{'i', 'c', 'c', 'p'}, multi_icc, sizeof multi_icc},
        {{'t', 'e', 'x', 't'}, multi_text, sizeof multi_text - 1},
        {{'z', 'z', 'z', 'z'}, NULL, 0},
    };
    uint8_t *buf = NULL;
    assert_int_equal(mmp_container_write(&h, td, multi_len, MULTI_TILES, x,
                                         with_extra ? MULTI_EXTRA : 0, &buf, len),
                     MMP_OK);
    size_t want = MF_CHUNK2 + MMP_CHUNK_OVERHEAD + 4 + 8 * MULTI_TILES;
    for (int i = 0; i < MULTI_TILES; i++)
        want += MMP_CHUNK_OVERHEAD + multi_len[i];
    if (with_extra)
        want += 3 * MMP_CHUNK_OVERHEAD + sizeof multi_icc + sizeof multi_text - 1;
    assert_int_equal(*len, want);
    return buf;
}

/* A copy of b[0..n) in a buffer of exactly n bytes (ASan sees any read
 * past it); NULL for n = 0. */
static uint8_t *exact_copy(const uint8_t *b, size_t n)
{
    if (!n)
        return NULL;
    uint8_t *c = malloc(n);
    assert_non_null(c);
    memcpy(c, b, n);
    return c;
}

/* The parse must fail with `code` and a one-line message containing `want`
 * (NULL: any); mmp_header_parse must say the same; *c is left empty. */
static void expect_fail(const uint8_t *buf, size_t len, int code, const char *want)
{
    mmp_container c;
    char err[256], err2[256];
    memset(err, 'x', sizeof err);
    memset(&c, 0x5a, sizeof c);
    const int rc = mmp_container_parse(buf, len, &c, err, sizeof err);
    if (rc != code || (want && !strstr(err, want)))
        print_error("len %zu: rc %d (want %d), message '%s' (want '%s')\n", len, rc, code, err,
                    want ? want : "");
    assert_int_equal(rc, code);
    assert_true(strlen(err) > 0);
    assert_null(strchr(err, '\n'));
    if (want)
        assert_non_null(strstr(err, want));
    assert_null(c.tiles);
    assert_null(c.extra);
    assert_int_equal(c.ntiles, 0);
    mmp_header h;
    assert_int_equal(mmp_header_parse(buf, len, &h, err2, sizeof err2), code);
    assert_string_equal(err, err2);
}

/* The parse must succeed; *c gets the result (the caller frees it). */
static void expect_ok(const uint8_t *buf, size_t len, mmp_container *c)
{
    char err[256] = "";
    const int rc = mmp_container_parse(buf, len, c, err, sizeof err);
    if (rc)
        print_error("len %zu: rc %d, %s\n", len, rc, err);
    assert_int_equal(rc, MMP_OK);
}

static void assert_same_header(const mmp_header *got, const mmp_header *want)
{
#define SAME(f)                                                                             \
    do {                                                                                    \
        if (got->f != want->f)                                                              \
            fail_msg("field " #f ": %llu, want %llu", (unsigned long long)got->f,            \
                     (unsigned long long)want->f);                                          \
    } while (0)
    SAME(width);
    SAME(height);
    SAME(maxval);
    SAME(max_error);
    SAME(residual);
    SAME(tools);
    SAME(planes);
    SAME(log2_block);
    SAME(log2_pmin);
    SAME(dict_cap);
    SAME(redund_q4);
    SAME(lambda_q8);
    SAME(order);
    SAME(transform);
    SAME(chroma);
    SAME(alpha);
    SAME(tile_w);
    SAME(tile_h);
#undef SAME
}

/* -------------------------------------------------------------- round trips */

static void test_roundtrip_one_tile(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    mmp_header want;
    fill_header(&want);
    mmp_container c;
    expect_ok(buf, len, &c);
    assert_same_header(&c.h, &want);
    assert_int_equal(c.cols, 1);
    assert_int_equal(c.rows, 1);
    assert_int_equal(c.ntiles, 1);
    assert_int_equal(c.nextra, 0);
    assert_null(c.extra);
    assert_int_equal(c.tiles[0].x, 0);
    assert_int_equal(c.tiles[0].y, 0);
    assert_int_equal(c.tiles[0].w, 64);
    assert_int_equal(c.tiles[0].h, 48);
    assert_int_equal(c.tiles[0].offset, MF_TILE_DATA);
    assert_int_equal(c.tiles[0].len, PAYLOAD_LEN);
    uint8_t payload[PAYLOAD_LEN];
    fill_payload(payload, sizeof payload, 0);
    assert_memory_equal(buf + c.tiles[0].offset, payload, PAYLOAD_LEN);
    mmp_container_free(&c);
    mmp_container_free(&c); /* safe twice */
    mmp_container_free(NULL);

    /* The layout of a one-tile file (util.h's MF_*): the signature, HEAD,
     * TILE. */
    assert_memory_equal(buf, "MMPi", 4);
    assert_int_equal(buf[MF_MAJOR], MMP_FORMAT_MAJOR);
    assert_int_equal(buf[MF_MINOR], MMP_FORMAT_MINOR);
    assert_int_equal(get32(buf + MF_HEAD), MMP_HEAD_SIZE);
    assert_memory_equal(buf + MF_HEAD_TYPE, "HEAD", 4);
    assert_int_equal(get32(buf + MF_TILE_LEN), PAYLOAD_LEN);
    assert_memory_equal(buf + MF_TILE_TYPE, "TILE", 4);

    /* mmp_head_write of the parsed header is HEAD's data; its CRC and
     * TILE's are zlib's crc32 of the type and the data. */
    uint8_t head[MMP_HEAD_SIZE];
    mmp_head_write(&want, head);
    assert_memory_equal(head, buf + MF_HEAD_DATA, MMP_HEAD_SIZE);
    assert_int_equal(get32(buf + MF_HEAD_CRC), crc32(0, buf + MF_HEAD_TYPE, 4 + MMP_HEAD_SIZE));
    assert_int_equal(get32(buf + MF_HEAD_CRC), mmp_chunk_crc(buf + MF_HEAD_TYPE, head, sizeof head));
    assert_int_equal(get32(buf + len - 4), crc32(0, buf + MF_TILE_TYPE, 4 + PAYLOAD_LEN));

    /* mmp_header_parse: the header alone. */
    mmp_header h;
    assert_int_equal(mmp_header_parse(buf, len, &h, NULL, 0), MMP_OK);
    assert_same_header(&h, &want);
    free(buf);
}

/* Random valid headers, every field within its range: written and read
 * back field for field. */
static void test_roundtrip_every_field(void **state)
{
    (void)state;
    rng_seed(21);
    for (int k = 0; k < 400; k++) {
        mmp_header h;
        memset(&h, 0, sizeof h);
        h.planes = 1 + (uint32_t)rng_below(4);
        h.log2_block = 4;
        h.log2_pmin = 2;
        h.residual = (uint32_t)rng_below(3);
        h.max_error = h.residual ? (uint32_t)rng_below(MMP_MAX_ERROR_LIMIT + 1) : 0;
        h.width = 1 + (uint32_t)rng_below(k % 4 ? 300 : MMP_MAX_DIM);
        h.height = 1 + (uint32_t)rng_below(k % 4 ? 300 : MMP_MAX_PIXELS / h.width < MMP_MAX_DIM
                                                          ? MMP_MAX_PIXELS / h.width
                                                          : MMP_MAX_DIM);
        h.dict_cap = MMP_MIN_DICT_CAP + (uint32_t)rng_below(MMP_MAX_DICT_CAP - MMP_MIN_DICT_CAP + 1);
        h.order = (uint32_t)rng_below(2);
        h.tools = (uint32_t)rng_below(2);
        h.redund_q4 = k % 7 ? rng_next() % (MMP_MAX_REDUND_Q4 + 1) : MMP_MAX_REDUND_Q4;
        h.lambda_q8 = rng_next();
        if (h.planes >= 3) {
            h.transform = 1 + (uint32_t)rng_below(3);
            h.chroma = (uint32_t)rng_below(2);
        }
        if (h.planes == 2 || h.planes == 4)
            h.alpha = 1 + (uint32_t)rng_below(2);
        h.maxval = 1 + (uint32_t)rng_below(h.transform == MMP_TRANSFORM_YCOCG_R ? 32767 : 65535);
        /* One tile as large as the image at least (multiples of 16). */
        h.tile_w = (h.width + 15) / 16 * 16 < 128 ? 128 : (h.width + 15) / 16 * 16;
        h.tile_h = (h.height + 15) / 16 * 16 < 128 ? 128 : (h.height + 15) / 16 * 16;
        if (k % 3 == 0)
            h.tile_w = MMP_MAX_TILE;
        const uint8_t pay[3] = {1, 2, 3};
        uint8_t *buf;
        size_t len;
        assert_int_equal(mmp_container_build(&h, pay, (size_t)(k % 4), &buf, &len), MMP_OK);
        mmp_container c;
        expect_ok(buf, len, &c);
        assert_same_header(&c.h, &h);
        assert_int_equal(c.ntiles, 1);
        assert_int_equal(c.tiles[0].len, (uint64_t)(k % 4));
        mmp_container_free(&c);
        free(buf);
    }
}

/* Several tiles and ancillary chunks: every tile's place and data, the
 * index, the ancillary chunks in order. */
static void test_roundtrip_tiles_and_chunks(void **state)
{
    (void)state;
    for (int with_extra = 0; with_extra < 2; with_extra++) {
        size_t len;
        uint8_t *buf = make_multi(&len, with_extra);
        mmp_container c;
        expect_ok(buf, len, &c);
        assert_int_equal(c.h.width, MULTI_W);
        assert_int_equal(c.h.tile_w, 128);
        assert_int_equal(c.cols, 3);
        assert_int_equal(c.rows, 2);
        assert_int_equal(c.ntiles, MULTI_TILES);
        static const uint32_t rect[MULTI_TILES][4] = {
            {0, 0, 128, 128},   {128, 0, 128, 128},   {256, 0, 44, 128},
            {0, 128, 128, 72}, {128, 128, 128, 72}, {256, 128, 44, 72},
        };
        /* The chunks in the file's order. */
        chunk_ref list[16];
        const int n = chunk_walk(buf, len, list, 16);
        assert_int_equal(n, 1 + (with_extra ? MULTI_EXTRA : 0) + 1 + MULTI_TILES);
        assert_string_equal(list[0].type, "HEAD");
        const chunk_ref *tidx = &list[1 + (with_extra ? MULTI_EXTRA : 0)];
        assert_string_equal(tidx->type, "TIDX");
        assert_int_equal(tidx->len, 4 + 8 * MULTI_TILES);
        assert_int_equal(get32(buf + tidx->at + 8), MULTI_TILES);
        for (int i = 0; i < MULTI_TILES; i++) {
            const mmp_tile *t = &c.tiles[i];
            const chunk_ref *ch = tidx + 1 + i;
            assert_string_equal(ch->type, "TILE");
            assert_int_equal(t->x, rect[i][0]);
            assert_int_equal(t->y, rect[i][1]);
            assert_int_equal(t->w, rect[i][2]);
            assert_int_equal(t->h, rect[i][3]);
            assert_int_equal(t->len, multi_len[i]);
            assert_int_equal(t->offset, ch->at + 8);
            assert_int_equal(get64(buf + tidx->at + 12 + 8 * i), ch->at);
            uint8_t want[32];
            fill_payload(want, multi_len[i], (unsigned)i + 1);
            if (multi_len[i])
                assert_memory_equal(buf + t->offset, want, multi_len[i]);
            /* mmp_tile_rect agrees. */
            mmp_tile r;
            mmp_tile_rect(&c.h, (uint32_t)i, &r);
            assert_int_equal(r.x, t->x);
            assert_int_equal(r.h, t->h);
        }
        assert_int_equal(c.nextra, with_extra ? MULTI_EXTRA : 0);
        for (uint32_t i = 0; i < c.nextra; i++) {
            assert_string_equal(c.extra[i].type, multi_types[i]);
            assert_string_equal(list[1 + i].type, multi_types[i]);
            assert_int_equal(c.extra[i].offset, list[1 + i].at + 8);
        }
        if (with_extra) {
            assert_int_equal(c.extra[0].len, sizeof multi_icc);
            assert_memory_equal(buf + c.extra[0].offset, multi_icc, sizeof multi_icc);
            assert_int_equal(c.extra[1].len, sizeof multi_text - 1);
            assert_memory_equal(buf + c.extra[1].offset, multi_text, sizeof multi_text - 1);
            assert_int_equal(c.extra[2].len, 0);
        }
        mmp_container_free(&c);
        free(buf);
    }
}

/* The tile grid of several image and tile sizes. */
static void test_tile_grid(void **state)
{
    (void)state;
    static const uint32_t cases[][6] = {
        /* width, height, tile_w, tile_h, cols, rows */
        {1, 1, 128, 128, 1, 1},         {128, 128, 128, 128, 1, 1},
        {129, 128, 128, 128, 2, 1},     {128, 129, 128, 128, 1, 2},
        {300, 200, 128, 256, 3, 1},     {1024, 1024, 1024, 1024, 1, 1},
        {1025, 3000, 1024, 1008, 2, 3}, {65536, 4096, 128, 128, 512, 32},
        {65536, 1, 65536, 128, 1, 1},   {5, 65536, 144, 65536, 1, 1},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        mmp_header h;
        fill_header(&h);
        h.width = cases[i][0];
        h.height = cases[i][1];
        h.tile_w = cases[i][2];
        h.tile_h = cases[i][3];
        uint32_t cols, rows;
        mmp_tile_grid(&h, &cols, &rows);
        assert_int_equal(cols, cases[i][4]);
        assert_int_equal(rows, cases[i][5]);
        /* The tiles cover the image exactly, row by row. */
        uint64_t area = 0;
        for (uint32_t t = 0; t < cols * rows; t++) {
            mmp_tile r;
            mmp_tile_rect(&h, t, &r);
            assert_int_equal(r.x, t % cols * h.tile_w);
            assert_int_equal(r.y, t / cols * h.tile_h);
            assert_true(r.w >= 1 && r.w <= h.tile_w && r.x + r.w <= h.width);
            assert_true(r.h >= 1 && r.h <= h.tile_h && r.y + r.h <= h.height);
            assert_true(t % cols == cols - 1 ? r.x + r.w == h.width : r.w == h.tile_w);
            assert_true(t / cols == rows - 1 ? r.y + r.h == h.height : r.h == h.tile_h);
            area += (uint64_t)r.w * r.h;
        }
        assert_int_equal(area, (uint64_t)h.width * h.height);
    }
}

/* ---------------------------------------------------------------- examples */

/*
 * The example of docs/format.md section 2, byte for byte: a 4 x 3 grey
 * image (8 bits), coded losslessly by the residual stage alone
 * (mmp-enc --lossless --residual-mix off writes this file), in one tile of
 * 128 x 128. It decodes to the samples of example_pixels.
 */
static const uint8_t example_one_tile[] = {
    /* signature: "MMPi", major 1, minor 4 */
    0x4D, 0x4D, 0x50, 0x69, 0x01, 0x04,
    /* HEAD: length 38, type "HEAD" */
    0x26, 0x00, 0x00, 0x00, 0x48, 0x45, 0x41, 0x44,
    /* planes 1, log2_block 4, log2_pmin 2, residual 2 (alone) */
    0x01, 0x04, 0x02, 0x02,
    /* width 4, height 3 (u32) */
    0x04, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
    /* maxval 255, max_error 0, dict_cap 1024 (u16) */
    0xFF, 0x00, 0x00, 0x00, 0x00, 0x04,
    /* order 1 (wavefront), transform 0, chroma 0, alpha 0 */
    0x01, 0x00, 0x00, 0x00,
    /* tools 0, redund_q4 40, lambda_q8 2560 (u32) */
    0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00,
    /* tile_w / 16 = 8, tile_h / 16 = 8 (u16): tiles of 128 x 128 */
    0x08, 0x00, 0x08, 0x00,
    /* HEAD's CRC: crc32("HEAD" and its 38 bytes) = 0x74E4B5F0 */
    0xF0, 0xB5, 0xE4, 0x74,
    /* TILE: length 20, type "TILE" */
    0x14, 0x00, 0x00, 0x00, 0x54, 0x49, 0x4C, 0x45,
    /* the range-coded payload of the tile */
    0xC0, 0x0F, 0xBB, 0x25, 0x23, 0xF1, 0x41, 0x3B, 0x93, 0x27, 0x5F, 0xB1, 0xEE, 0xA1,
    0x44, 0x1F, 0x34, 0x5E, 0x7C, 0x00,
    /* TILE's CRC: crc32("TILE" and the payload) = 0x77F5A0AD */
    0xAD, 0xA0, 0xF5, 0x77,
};
static const uint16_t example_pixels[12] = {0, 60, 120, 180, 20, 87, 154, 200, 40, 114, 167, 220};

/*
 * The second example: a 200 x 100 grey image in tiles of 128 x 128 (two
 * columns, one row) with a text chunk; the tiles' data are placeholders of
 * 3 and 2 bytes (no decoder reads them as an image).
 */
static const uint8_t example_two_tiles[] = {
    /* signature */
    0x4D, 0x4D, 0x50, 0x69, 0x01, 0x04,
    /* HEAD: length 38, "HEAD"; planes 1, log2_block 4, log2_pmin 2, residual 0 */
    0x26, 0x00, 0x00, 0x00, 0x48, 0x45, 0x41, 0x44, 0x01, 0x04, 0x02, 0x00,
    /* width 200, height 100 */
    0xC8, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00,
    /* maxval 255, max_error 0, dict_cap 1024; order 1, transform, chroma, alpha 0 */
    0xFF, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00,
    /* tools 1 (the transform residual), redund_q4 40, lambda_q8 2560 */
    0x01, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00,
    /* tiles of 128 x 128; HEAD's CRC 0xDF894C39 */
    0x08, 0x00, 0x08, 0x00, 0x39, 0x4C, 0x89, 0xDF,
    /* text: length 13, "text", "Title", NUL, "Example"; its CRC 0x747C1582 */
    0x0D, 0x00, 0x00, 0x00, 0x74, 0x65, 0x78, 0x74, 0x54, 0x69, 0x74, 0x6C, 0x65, 0x00,
    0x45, 0x78, 0x61, 0x6D, 0x70, 0x6C, 0x65, 0x82, 0x15, 0x7C, 0x74,
    /* TIDX: length 20, "TIDX", count 2, the TILE chunks at bytes 113 and 128 (u64) */
    0x14, 0x00, 0x00, 0x00, 0x54, 0x49, 0x44, 0x58, 0x02, 0x00, 0x00, 0x00,
    0x71, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    /* TIDX's CRC 0xE9935647 */
    0x47, 0x56, 0x93, 0xE9,
    /* tile 0 (x 0..127): length 3, "TILE", 01 02 03, CRC 0xF9950D36 */
    0x03, 0x00, 0x00, 0x00, 0x54, 0x49, 0x4C, 0x45, 0x01, 0x02, 0x03, 0x36, 0x0D, 0x95, 0xF9,
    /* tile 1 (x 128..199): length 2, "TILE", 04 05, CRC 0xC0AB485F */
    0x02, 0x00, 0x00, 0x00, 0x54, 0x49, 0x4C, 0x45, 0x04, 0x05, 0x5F, 0x48, 0xAB, 0xC0,
};

static void example_header(mmp_header *h, uint32_t w, uint32_t hh, uint32_t residual,
                           uint32_t tools)
{
    memset(h, 0, sizeof *h);
    h->planes = 1;
    h->log2_block = 4;
    h->log2_pmin = 2;
    h->residual = residual;
    h->width = w;
    h->height = hh;
    h->maxval = 255;
    h->dict_cap = 1024;
    h->order = MMP_ORDER_WAVEFRONT;
    h->tools = tools;
    h->redund_q4 = 40;
    h->lambda_q8 = 2560;
    h->tile_w = h->tile_h = 128;
}

static void print_bytes(const char *name, const uint8_t *b, size_t n)
{
    print_message("%s (%zu bytes):\n", name, n);
    for (size_t i = 0; i < n; i += 16) {
        char line[80];
        int at = 0;
        for (size_t j = i; j < n && j < i + 16; j++)
            at += snprintf(line + at, sizeof line - (size_t)at, " %02X", b[j]);
        print_message("  %04zx:%s\n", i, line);
    }
}

static void test_example_one_tile(void **state)
{
    (void)state;
    mmp_header h;
    example_header(&h, 4, 3, MMP_RESIDUAL_ALONE, 0);
    const uint8_t *payload = example_one_tile + MF_TILE_DATA;
    const size_t plen = sizeof example_one_tile - MF_ONE_TILE;
    uint8_t *buf;
    size_t len;
    assert_int_equal(mmp_container_build(&h, payload, plen, &buf, &len), MMP_OK);
    assert_int_equal(len, sizeof example_one_tile);
    assert_memory_equal(buf, example_one_tile, len);
    print_bytes("the one-tile example", buf, len);
    /* The CRCs as documented: zlib's crc32 of the type and the data. */
    assert_int_equal(get32(buf + MF_HEAD_CRC), 0x74E4B5F0u);
    assert_int_equal(crc32(0, buf + MF_HEAD_TYPE, 4 + MMP_HEAD_SIZE), 0x74E4B5F0u);
    assert_int_equal(get32(buf + len - 4), 0x77F5A0ADu);
    assert_int_equal(crc32(0, buf + MF_TILE_TYPE, 4 + plen), 0x77F5A0ADu);
    mmp_container c;
    expect_ok(buf, len, &c);
    assert_same_header(&c.h, &h);
    mmp_container_free(&c);
    /* It is a real file: the decoder gives the image back. */
    mmp_image img;
    char err[256] = "";
    assert_int_equal(mmp_decode(example_one_tile, sizeof example_one_tile, &img, err, sizeof err),
                     MMP_OK);
    assert_int_equal(img.width, 4);
    assert_int_equal(img.height, 3);
    assert_int_equal(img.maxval, 255);
    assert_int_equal(img.channels, 1);
    assert_memory_equal(img.pix, example_pixels, sizeof example_pixels);
    mmp_image_free(&img);
    free(buf);
}

static void test_example_two_tiles(void **state)
{
    (void)state;
    mmp_header h;
    example_header(&h, 200, 100, MMP_RESIDUAL_NONE, MMP_TOOL_TRANSFORM);
    static const uint8_t t0[] = {1, 2, 3}, t1[] = {4, 5};
    const uint8_t *td[2] = {t0, t1};
    const size_t tl[2] = {sizeof t0, sizeof t1};
    static const uint8_t text[] = "Title\0Example";
    const mmp_extra_in x = {{'t', 'e', 'x', 't'}, text, sizeof text - 1};
    uint8_t *buf;
    size_t len;
    assert_int_equal(mmp_container_write(&h, td, tl, 2, &x, 1, &buf, &len), MMP_OK);
    assert_int_equal(len, sizeof example_two_tiles);
    assert_memory_equal(buf, example_two_tiles, len);
    print_bytes("the two-tile example", buf, len);
    mmp_container c;
    expect_ok(buf, len, &c);
    assert_int_equal(c.ntiles, 2);
    assert_int_equal(c.tiles[0].offset, 113 + 8);
    assert_int_equal(c.tiles[1].offset, 128 + 8);
    assert_int_equal(c.tiles[1].x, 128);
    assert_int_equal(c.tiles[1].w, 72);
    assert_int_equal(c.nextra, 1);
    assert_string_equal(c.extra[0].type, "text");
    mmp_container_free(&c);
    free(buf);
}

/* HEAD's data: the byte layout of every field (docs/format.md section 2). */
static void test_head_layout(void **state)
{
    (void)state;
    mmp_header h;
    fill_header(&h);
    h.planes = 0x11;
    h.log2_block = 0x12;
    h.log2_pmin = 0x13;
    h.residual = 0x14;
    h.width = 0x01020304;
    h.height = 0x05060708;
    h.maxval = 0xabcd;
    h.max_error = 0x1234;
    h.dict_cap = 0x3344;
    h.order = 0x21;
    h.transform = 0x22;
    h.chroma = 0x23;
    h.alpha = 0x24;
    h.tools = 0x31323334;
    h.redund_q4 = 0x55667788;
    h.lambda_q8 = 0x99aabbcc;
    h.tile_w = 0x1230;
    h.tile_h = 0xfff0;
    uint8_t b[MMP_HEAD_SIZE];
    memset(b, 0xee, sizeof b);
    mmp_head_write(&h, b);
    static const uint8_t want[MMP_HEAD_SIZE] = {
        0x11, 0x12, 0x13, 0x14,                         /* planes, log2s, residual */
        0x04, 0x03, 0x02, 0x01, 0x08, 0x07, 0x06, 0x05, /* width, height */
        0xcd, 0xab, 0x34, 0x12, 0x44, 0x33,             /* maxval, max_error, dict_cap */
        0x21, 0x22, 0x23, 0x24,                         /* order, transform, chroma, alpha */
        0x34, 0x33, 0x32, 0x31,                         /* tools */
        0x88, 0x77, 0x66, 0x55, 0xcc, 0xbb, 0xaa, 0x99, /* redund_q4, lambda_q8 */
        0x23, 0x01, 0xff, 0x0f,                         /* tile_w / 16, tile_h / 16 */
    };
    assert_memory_equal(b, want, MMP_HEAD_SIZE);
    /* util.h's offsets are these. */
    assert_int_equal(MF_WIDTH - MF_HEAD_DATA, 4);
    assert_int_equal(MF_TOOLS - MF_HEAD_DATA, 22);
    assert_int_equal(MF_TILE_H16 - MF_HEAD_DATA, 36);
    assert_int_equal(MMP_SIGNATURE_SIZE, 6);
    assert_int_equal(MMP_CHUNK_OVERHEAD, 12);
    assert_int_equal(MF_ONE_TILE, 68);
}

/* -------------------------------------------------------------- HEAD fields */

struct mutation {
    int off;          /* byte offset in the file */
    int size;         /* 1, 2 or 4 bytes, little-endian */
    uint64_t value;
    int code;         /* expected error */
    const char *msg;  /* substring the message must contain */
};

/* Each field set out of its range, HEAD's CRC recomputed: the parse names
 * the field. */
static void test_head_fields_invalid(void **state)
{
    (void)state;
    static const struct mutation cases[] = {
        {MF_PLANES, 1, 0, MMP_EUNSUPPORTED, "unsupported planes 0"},
        {MF_PLANES, 1, 5, MMP_EUNSUPPORTED, "unsupported planes 5"},
        {MF_PLANES, 1, 255, MMP_EUNSUPPORTED, "unsupported planes 255"},
        {MF_PLANES, 1, 3, MMP_EUNSUPPORTED, "unsupported alpha 1 for 3 planes"},
        {MF_PLANES, 1, 2, MMP_EUNSUPPORTED, "unsupported transform 2 for 2 planes"},
        {MF_PLANES, 1, 1, MMP_EUNSUPPORTED, "unsupported transform 2 for 1 planes"},
        {MF_LOG2_BLOCK, 1, 3, MMP_EUNSUPPORTED, "unsupported log2_block 3"},
        {MF_LOG2_BLOCK, 1, 5, MMP_EUNSUPPORTED, "unsupported log2_block 5"},
        {MF_LOG2_PMIN, 1, 1, MMP_EUNSUPPORTED, "unsupported log2_pmin 1"},
        {MF_LOG2_PMIN, 1, 3, MMP_EUNSUPPORTED, "unsupported log2_pmin 3"},
        {MF_RESIDUAL, 1, 3, MMP_EUNSUPPORTED, "unsupported residual 3"},
        {MF_RESIDUAL, 1, 255, MMP_EUNSUPPORTED, "unsupported residual 255"},
        {MF_WIDTH, 4, 0, MMP_EBITSTREAM, "invalid width 0"},
        {MF_WIDTH, 4, MMP_MAX_DIM + 1, MMP_ELIMIT, "width 65537 exceeds limit"},
        {MF_WIDTH, 4, 0xffffffffu, MMP_ELIMIT, "width 4294967295 exceeds limit"},
        {MF_HEIGHT, 4, 0, MMP_EBITSTREAM, "invalid height 0"},
        {MF_HEIGHT, 4, MMP_MAX_DIM + 1, MMP_ELIMIT, "height 65537 exceeds limit"},
        {MF_HEIGHT, 4, 0x80000000u, MMP_ELIMIT, "height 2147483648 exceeds limit"},
        {MF_MAXVAL, 2, 0, MMP_EBITSTREAM, "invalid maxval 0"},
        {MF_MAX_ERROR, 2, 1, MMP_EUNSUPPORTED, "unsupported max_error 1 with residual 0"},
        {MF_MAX_ERROR, 2, 0xffff, MMP_EUNSUPPORTED, "unsupported max_error 65535 with residual 0"},
        {MF_DICT_CAP, 2, 0, MMP_ELIMIT, "dict_cap 0 outside"},
        {MF_DICT_CAP, 2, MMP_MIN_DICT_CAP - 1, MMP_ELIMIT, "dict_cap 63 outside"},
        {MF_DICT_CAP, 2, MMP_MAX_DICT_CAP + 1, MMP_ELIMIT, "dict_cap 16385 outside"},
        {MF_DICT_CAP, 2, 0xffff, MMP_ELIMIT, "dict_cap 65535 outside"},
        {MF_ORDER, 1, 2, MMP_EUNSUPPORTED, "unsupported order 2"},
        {MF_ORDER, 1, 255, MMP_EUNSUPPORTED, "unsupported order 255"},
        {MF_TRANSFORM, 1, 0, MMP_EUNSUPPORTED, "unsupported transform 0 for 4 planes"},
        {MF_TRANSFORM, 1, 4, MMP_EUNSUPPORTED, "unsupported transform 4 for 4 planes"},
        {MF_TRANSFORM, 1, 255, MMP_EUNSUPPORTED, "unsupported transform 255 for 4 planes"},
        {MF_CHROMA, 1, 2, MMP_EUNSUPPORTED, "unsupported chroma 2 for 4 planes"},
        {MF_CHROMA, 1, 255, MMP_EUNSUPPORTED, "unsupported chroma 255"},
        {MF_ALPHA, 1, 0, MMP_EUNSUPPORTED, "unsupported alpha 0 for 4 planes"},
        {MF_ALPHA, 1, 3, MMP_EUNSUPPORTED, "unsupported alpha 3 for 4 planes"},
        {MF_TOOLS, 4, 32, MMP_EUNSUPPORTED, "this file needs a newer mmp-dec (coding tool 5)"},
        {MF_TOOLS, 4, 63, MMP_EUNSUPPORTED, "(coding tool 5)"},
        {MF_TOOLS, 4, 0x80000000u, MMP_EUNSUPPORTED, "(coding tool 31)"},
        {MF_TOOLS, 4, 0xffffffffu, MMP_EUNSUPPORTED, "(coding tool 5)"},
        {MF_TOOLS, 4, 0x00010000u, MMP_EUNSUPPORTED, "(coding tool 16)"},
        {MF_REDUND_Q4, 4, (uint64_t)MMP_MAX_REDUND_Q4 + 1, MMP_ELIMIT, "redund_q4 1073741825 exceeds"},
        {MF_REDUND_Q4, 4, 0xffffffffu, MMP_ELIMIT, "redund_q4 4294967295 exceeds"},
        {MF_TILE_W16, 2, 0, MMP_EBITSTREAM, "invalid tile size 0x128"},
        {MF_TILE_W16, 2, 1, MMP_EBITSTREAM, "invalid tile size 16x128"},
        {MF_TILE_W16, 2, MMP_MIN_TILE / 16 - 1, MMP_EBITSTREAM, "invalid tile size 112x128"},
        {MF_TILE_W16, 2, MMP_MAX_TILE / 16 + 1, MMP_EBITSTREAM, "invalid tile size 65552x128"},
        {MF_TILE_W16, 2, 0xffff, MMP_EBITSTREAM, "invalid tile size 1048560x128"},
        {MF_TILE_H16, 2, 0, MMP_EBITSTREAM, "invalid tile size 128x0"},
        {MF_TILE_H16, 2, MMP_MIN_TILE / 16 - 1, MMP_EBITSTREAM, "invalid tile size 128x112"},
        {MF_TILE_H16, 2, MMP_MAX_TILE / 16 + 1, MMP_EBITSTREAM, "invalid tile size 128x65552"},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        put_field(buf + cases[i].off, cases[i].size, cases[i].value);
        fixup_container(buf, len, 0);
        expect_fail(buf, len, cases[i].code, cases[i].msg);
        /* With HEAD's CRC stale, the CRC is what fails. */
        buf[MF_HEAD_CRC] ^= 0x10;
        expect_fail(buf, len, MMP_EBITSTREAM, "CRC mismatch in HEAD chunk at byte 6");
        free(buf);
    }
}

/* A coding tool this decoder does not know is named before any other
 * problem of the header (a newer file is told so, not that it is corrupt). */
static void test_unknown_tools(void **state)
{
    (void)state;
    assert_int_equal(MMP_TOOLS_ALL, 31);
    for (int bit = 5; bit < 32; bit++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        put32(buf + MF_TOOLS, MMP_TOOL_TRANSFORM | 1u << bit);
        buf[MF_PLANES] = 9;      /* invalid too */
        put32(buf + MF_WIDTH, 0); /* and this */
        fixup_container(buf, len, 0);
        char want[64];
        snprintf(want, sizeof want, "this file needs a newer mmp-dec (coding tool %d)", bit);
        expect_fail(buf, len, MMP_EUNSUPPORTED, want);
        free(buf);
    }
    /* The known tools (the transform residual, the deblocking filter, the
     * residual stage's mixing coder and its residual context, the
     * reversible colour transforms), every combination of them, and none,
     * are accepted. */
    for (uint32_t tools = 0; tools <= MMP_TOOLS_ALL; tools++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        put32(buf + MF_TOOLS, tools);
        fixup_container(buf, len, 0);
        mmp_container c;
        expect_ok(buf, len, &c);
        assert_int_equal(c.h.tools, tools);
        mmp_container_free(&c);
        free(buf);
    }
}

/* Valid tile sizes other than the writer's: the grid follows them. */
static void test_tile_sizes(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{128, 128}, {144, 128}, {128, 4096}, {65536, 65536},
                                        {1024, 128}, {65520, 208}};
    for (size_t i = 0; i < NELEM(sizes); i++) {
        mmp_header h;
        fill_header(&h);
        h.width = 64;
        h.height = 48;
        h.tile_w = sizes[i][0];
        h.tile_h = sizes[i][1];
        uint8_t *buf;
        size_t len;
        assert_int_equal(mmp_container_build(&h, NULL, 0, &buf, &len), MMP_OK);
        mmp_container c;
        expect_ok(buf, len, &c);
        assert_int_equal(c.h.tile_w, sizes[i][0]);
        assert_int_equal(c.h.tile_h, sizes[i][1]);
        assert_int_equal(get16(buf + MF_TILE_W16), sizes[i][0] / 16);
        mmp_container_free(&c);
        free(buf);
    }
    /* A one-tile file whose tile sides shrink so that the image needs more
     * tiles: its TILE chunk comes without the index. */
    size_t len;
    uint8_t *buf = make_file(&len);
    put32(buf + MF_WIDTH, 129);
    fixup_container(buf, len, 0);
    expect_fail(buf, len, MMP_EBITSTREAM, "a TILE chunk before the tile index");
    free(buf);
}

/* The colour fields against each other and the sample range. */
static void test_colour_fields(void **state)
{
    (void)state;
    static const struct {
        uint32_t planes, transform, chroma, alpha, maxval;
        int code;
        const char *msg;
    } cases[] = {
        {1, 0, 0, 0, 255, MMP_OK, NULL},
        {2, 0, 0, 2, 65535, MMP_OK, NULL},
        {3, 1, 1, 0, 32767, MMP_OK, NULL},
        {3, 2, 0, 0, 65535, MMP_OK, NULL},
        {4, 3, 0, 1, 65535, MMP_OK, NULL},
        {1, 3, 0, 0, 255, MMP_EUNSUPPORTED, "unsupported transform 3 for 1 planes"},
        {1, 0, 1, 0, 255, MMP_EUNSUPPORTED, "unsupported chroma 1 for 1 planes"},
        {2, 0, 0, 0, 255, MMP_EUNSUPPORTED, "unsupported alpha 0 for 2 planes"},
        {1, 0, 0, 1, 255, MMP_EUNSUPPORTED, "unsupported alpha 1 for 1 planes"},
        {3, 1, 0, 0, 32768, MMP_EUNSUPPORTED, "YCoCg-R with maxval 32768"},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        mmp_header h;
        fill_header(&h);
        h.planes = cases[i].planes;
        h.transform = cases[i].transform;
        h.chroma = cases[i].chroma;
        h.alpha = cases[i].alpha;
        h.maxval = cases[i].maxval;
        uint8_t *buf = NULL;
        size_t len = 0;
        assert_int_equal(mmp_container_build(&h, NULL, 0, &buf, &len), MMP_OK);
        if (cases[i].code == MMP_OK) {
            mmp_container c;
            expect_ok(buf, len, &c);
            assert_same_header(&c.h, &h);
            mmp_container_free(&c);
        } else {
            expect_fail(buf, len, cases[i].code, cases[i].msg);
        }
        free(buf);
    }
}

/* The residual stage's fields: the bound only with a stage, and within the
 * quantiser's 16 bits. */
static void test_residual_fields(void **state)
{
    (void)state;
    static const struct {
        uint32_t residual, max_error;
        int code;
    } cases[] = {
        {0, 0, MMP_OK},           {1, 0, MMP_OK},           {2, 32767, MMP_OK},
        {1, 32768, MMP_EUNSUPPORTED}, {2, 65535, MMP_EUNSUPPORTED}, {0, 7, MMP_EUNSUPPORTED},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        mmp_header h, got;
        fill_header(&h);
        h.residual = cases[i].residual;
        h.max_error = cases[i].max_error;
        uint8_t *buf = NULL;
        size_t len = 0;
        assert_int_equal(mmp_container_build(&h, NULL, 0, &buf, &len), MMP_OK);
        assert_int_equal(mmp_header_parse(buf, len, &got, NULL, 0), cases[i].code);
        if (cases[i].code == MMP_OK) {
            assert_int_equal(got.residual, cases[i].residual);
            assert_int_equal(got.max_error, cases[i].max_error);
        }
        free(buf);
    }
}

/* Pixel count over the limit although each side is within it. */
static void test_too_many_pixels(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    put32(buf + MF_WIDTH, 16385);
    put32(buf + MF_HEIGHT, 16385);
    fixup_container(buf, len, 0);
    expect_fail(buf, len, MMP_ELIMIT, "image too large: width x height = 16385 x 16385");
    free(buf);
}

/* The extreme values that must still be accepted. */
static void test_boundaries_accepted(void **state)
{
    (void)state;
    static const struct mutation ok[] = {
        {MF_MAXVAL, 2, 1, 0, NULL},
        {MF_MAXVAL, 2, 65535, 0, NULL},
        {MF_DICT_CAP, 2, MMP_MIN_DICT_CAP, 0, NULL},
        {MF_DICT_CAP, 2, MMP_MAX_DICT_CAP, 0, NULL},
        {MF_REDUND_Q4, 4, 0, 0, NULL},
        {MF_REDUND_Q4, 4, MMP_MAX_REDUND_Q4, 0, NULL},
        {MF_LAMBDA_Q8, 4, 0, 0, NULL},
        {MF_LAMBDA_Q8, 4, 0xffffffffu, 0, NULL}, /* lambda is informational */
        {MF_WIDTH, 4, 1, 0, NULL},
        {MF_HEIGHT, 4, 1, 0, NULL},
        {MF_ORDER, 1, MMP_ORDER_RASTER, 0, NULL},
        {MF_TILE_W16, 2, MMP_MAX_TILE / 16, 0, NULL},
        {MF_TILE_H16, 2, MMP_MAX_TILE / 16, 0, NULL},
    };
    for (size_t i = 0; i < NELEM(ok); i++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        put_field(buf + ok[i].off, ok[i].size, ok[i].value);
        fixup_container(buf, len, 0);
        mmp_container c;
        expect_ok(buf, len, &c);
        mmp_container_free(&c);
        free(buf);
    }
    /* The largest images, in one tile: MMP_MAX_DIM by as many rows as
     * MMP_MAX_PIXELS allows, and the square of MMP_MAX_PIXELS. */
    static const uint32_t big[][2] = {{65536, 4096}, {4096, 65536}, {16384, 16384}, {65536, 1}};
    for (size_t i = 0; i < NELEM(big); i++) {
        mmp_header h;
        fill_header(&h);
        h.width = big[i][0];
        h.height = big[i][1];
        h.tile_w = h.tile_h = MMP_MAX_TILE;
        uint8_t *buf;
        size_t len;
        assert_int_equal(mmp_container_build(&h, NULL, 0, &buf, &len), MMP_OK);
        mmp_container c;
        expect_ok(buf, len, &c);
        assert_int_equal(c.h.width, big[i][0]);
        assert_int_equal(c.ntiles, 1);
        mmp_container_free(&c);
        free(buf);
    }
}

/* ------------------------------------------------------------- the signature */

static void test_signature(void **state)
{
    (void)state;
    static const struct mutation cases[] = {
        {0, 1, 'X', MMP_EBITSTREAM, "not an MMP file (bad magic)"},
        {1, 1, 'm', MMP_EBITSTREAM, "not an MMP file (bad magic)"},
        {2, 1, 0, MMP_EBITSTREAM, "not an MMP file (bad magic)"},
        {3, 1, 'I', MMP_EBITSTREAM, "not an MMP file (bad magic)"},
        /* The writer's minor version is 4 (test_versions). */
        {MF_MAJOR, 1, 0, MMP_EUNSUPPORTED,
         "unsupported format version 0.4 (this decoder reads 1.x and 0.9)"},
        {MF_MAJOR, 1, 2, MMP_EUNSUPPORTED,
         "unsupported format version 2.4 (this decoder reads 1.x and 0.9)"},
        {MF_MAJOR, 1, 9, MMP_EUNSUPPORTED, "unsupported format version 9.4"},
        {MF_MAJOR, 1, 255, MMP_EUNSUPPORTED, "unsupported format version 255.4"},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        put_field(buf + cases[i].off, cases[i].size, cases[i].value);
        expect_fail(buf, len, cases[i].code, cases[i].msg);
        free(buf);
    }
    /* The versions before the chunked format: 1 to 8 at byte 4, where they
     * wrote their version, and log2_block 4 and log2_pmin 2 at bytes 6 and
     * 7, where a chunked file has HEAD's length. */
    for (int v = 1; v <= 8; v++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        buf[MF_MAJOR] = (uint8_t)v;
        buf[MF_MINOR] = 1; /* their planes */
        buf[6] = 4;
        buf[7] = 2;
        char want[160];
        snprintf(want, sizeof want,
                 "unsupported format version %d (written before the chunked format; "
                 "this decoder reads 1.x and 0.9)", v);
        expect_fail(buf, len, MMP_EUNSUPPORTED, want);
        free(buf);
    }
}

/* A whole file of format version 8 (a 48-byte header with a CRC over it
 * and the payload, then the payload): refused by its version, not as
 * corrupt. */
static void test_version8_file(void **state)
{
    (void)state;
    uint8_t b[48 + PAYLOAD_LEN];
    memset(b, 0, sizeof b);
    memcpy(b, "MMPi", 4);
    b[4] = 8;                             /* version */
    b[5] = 1;                             /* planes */
    b[6] = 4;                             /* log2_block */
    b[7] = 2;                             /* log2_pmin */
    put32(b + 8, 64);                     /* width */
    put32(b + 12, 48);                    /* height */
    put16(b + 16, 255);                   /* maxval */
    put16(b + 20, 1024);                  /* dict_cap */
    b[23] = 1;                            /* tools */
    put32(b + 24, 40);                    /* redund_q4 */
    put32(b + 28, 2560);                  /* lambda_q8 */
    put64(b + 32, PAYLOAD_LEN);           /* payload_len */
    b[40] = 1;                            /* order */
    fill_payload(b + 48, PAYLOAD_LEN, 0);
    uLong crc = crc32(0, b, 44);
    crc = crc32(crc, b + 48, PAYLOAD_LEN);
    put32(b + 44, (uint32_t)crc);
    expect_fail(b, sizeof b, MMP_EUNSUPPORTED,
                "unsupported format version 8 (written before the chunked format; this decoder "
                "reads 1.x and 0.9)");
    /* Its first bytes alone, too. */
    expect_fail(b, 6, MMP_EUNSUPPORTED, "unsupported format version 8");
}

static void test_short_foreign_file(void **state)
{
    (void)state;
    static const uint8_t pgm[] = "P5 1 1 255\n";
    expect_fail(pgm, sizeof pgm - 1, MMP_EBITSTREAM, "not an MMP file (bad magic)");
    expect_fail((const uint8_t *)"P", 1, MMP_EBITSTREAM, "not an MMP file (bad magic)");
    expect_fail((const uint8_t *)"MM", 2, MMP_EBITSTREAM, "truncated signature (2 of 6 bytes)");
    expect_fail((const uint8_t *)"MMPi\0", 5, MMP_EBITSTREAM, "truncated signature (5 of 6 bytes)");
    expect_fail(NULL, 0, MMP_EBITSTREAM, "truncated signature (0 of 6 bytes)");
    /* The signature alone. */
    expect_fail((const uint8_t *)"MMPi\x01\0", 6, MMP_EBITSTREAM, "truncated file (0 of 0 tiles)");
    expect_fail((const uint8_t *)"MMPi\0\x09", 6, MMP_EBITSTREAM, "truncated file (0 of 0 tiles)");
    /* No buffer or no result. */
    mmp_container c;
    char err[128] = "";
    assert_int_equal(mmp_container_parse(NULL, 5, &c, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_container_parse((const uint8_t *)"MMPi", 4, NULL, err, sizeof err),
                     MMP_EINVAL);
    assert_int_equal(mmp_header_parse((const uint8_t *)"MMPi", 4, NULL, err, sizeof err),
                     MMP_EINVAL);
    /* No buffer for a length: the record is left empty, nothing freed. */
    mmp_header h;
    assert_int_equal(mmp_header_parse(NULL, 5, &h, err, sizeof err), MMP_EINVAL);
    assert_null(c.tiles);
}

/* ----------------------------------------------------- truncation, bit flips */

/* What the parse says of the first n bytes of a valid file whose chunks
 * are list[0..k). */
static void truncation_reason(const chunk_ref *list, int k, size_t n, char *want, size_t cap)
{
    if (n < MMP_SIGNATURE_SIZE) {
        snprintf(want, cap, "truncated signature (%zu of 6 bytes)", n);
        return;
    }
    for (int i = 0; i < k; i++) {
        const size_t at = list[i].at;
        if (n == at) {
            snprintf(want, cap, "truncated file (");
            return;
        }
        if (n < at + MMP_CHUNK_OVERHEAD) {
            snprintf(want, cap, "truncated chunk header (");
            return;
        }
        if (n < at + MMP_CHUNK_OVERHEAD + list[i].len) {
            snprintf(want, cap, "truncated %s chunk (%u bytes, %zu left)", list[i].type,
                     list[i].len, n - at - MMP_CHUNK_OVERHEAD);
            return;
        }
    }
    fail_msg("%zu bytes are not a truncation", n);
}

/* Every prefix of the file, each in a buffer of its exact size. */
static void truncate_everywhere(const uint8_t *buf, size_t len)
{
    chunk_ref list[16];
    const int k = chunk_walk(buf, len, list, 16);
    assert_true(k <= 16);
    for (size_t n = 0; n < len; n++) {
        uint8_t *cut = exact_copy(buf, n);
        char want[128];
        truncation_reason(list, k, n, want, sizeof want);
        expect_fail(cut, n, MMP_EBITSTREAM, want);
        free(cut);
    }
    mmp_container c;
    expect_ok(buf, len, &c);
    mmp_container_free(&c);
}

static void test_truncation(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    truncate_everywhere(buf, len);
    free(buf);
    buf = make_multi(&len, 1);
    truncate_everywhere(buf, len);
    /* A truncation at a chunk boundary says how many tiles came. */
    chunk_ref list[16];
    const int k = chunk_walk(buf, len, list, 16);
    expect_fail(buf, list[k - 1].at, MMP_EBITSTREAM, "truncated file (5 of 6 tiles)");
    expect_fail(buf, list[k - 6].at, MMP_EBITSTREAM, "truncated file (0 of 6 tiles)");
    expect_fail(buf, list[k - 6].at + 5, MMP_EBITSTREAM,
                "truncated chunk header (0 of 6 tiles before it)");
    free(buf);
}

/* Every single-bit flip of the file is refused, but for those of the minor
 * version (a later 1.x without new tools is read); one in the data or the
 * CRC of a chunk is found by that chunk's CRC, before anything else. */
static void flip_everywhere(uint8_t *buf, size_t len)
{
    chunk_ref list[16];
    const int k = chunk_walk(buf, len, list, 16);
    int by_crc = 0, covered = 0;
    for (size_t i = 0; i < len; i++) {
        /* The chunk the byte is in and its part. */
        const chunk_ref *ch = NULL;
        for (int j = 0; j < k; j++)
            if (i >= list[j].at && i < list[j].at + MMP_CHUNK_OVERHEAD + list[j].len)
                ch = &list[j];
        const int in_type = ch && i >= ch->at + 4 && i < ch->at + 8;
        const int in_data_or_crc = ch && i >= ch->at + 8;
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            mmp_container c;
            char err[256] = "";
            const int rc = mmp_container_parse(buf, len, &c, err, sizeof err);
            if (i == MF_MINOR) {
                /* A later minor version of major 1 with no new tool is
                 * read (the signature has no CRC). */
                if (rc)
                    fail_msg("minor version %u refused: %s", buf[i], err);
                assert_int_equal(c.minor, buf[i]);
                mmp_container_free(&c);
                buf[i] ^= (uint8_t)(1u << bit);
                continue;
            }
            if (rc == 0)
                fail_msg("the flip of bit %d of byte %zu was not found", bit, i);
            assert_true(rc == MMP_EBITSTREAM || rc == MMP_EUNSUPPORTED || rc == MMP_ELIMIT);
            if (i < 4)
                assert_non_null(strstr(err, "bad magic"));
            else if (i < MMP_SIGNATURE_SIZE)
                assert_non_null(strstr(err, "unsupported format version"));
            if (in_data_or_crc || in_type) {
                /* A flip in the type gives another type, whose CRC fails,
                 * or an invalid one. */
                char want[64], at[32];
                snprintf(want, sizeof want, "CRC mismatch in %s chunk at byte %zu", ch->type,
                         ch->at);
                snprintf(at, sizeof at, " chunk at byte %zu (", ch->at);
                if (!strstr(err, want) &&
                    !(in_type && ((strstr(err, "CRC mismatch in ") && strstr(err, at)) ||
                                  strstr(err, "invalid chunk type"))))
                    fail_msg("bit %d of byte %zu (%s chunk): '%s', want '%s'", bit, i, ch->type,
                             err, want);
                covered++;
            }
            by_crc += strstr(err, "CRC mismatch") != NULL;
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
    print_message("%zu bytes: %zu flips refused, %d by a CRC (%d in types, data and CRCs)\n", len,
                  8 * len - 8, by_crc, covered);
    mmp_container c;
    expect_ok(buf, len, &c);
    mmp_container_free(&c);
}

static void test_bit_flips(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    flip_everywhere(buf, len);
    free(buf);
    buf = make_multi(&len, 1);
    flip_everywhere(buf, len);
    free(buf);
}

/* A wrong CRC of each chunk, named with its type and place. */
static void test_crc_each_chunk(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_multi(&len, 1);
    chunk_ref list[16];
    const int k = chunk_walk(buf, len, list, 16);
    for (int i = 0; i < k; i++) {
        uint8_t *crc = buf + list[i].at + 8 + list[i].len;
        const uint32_t good = get32(crc);
        put32(crc, good ^ 0x00800000u);
        char want[128];
        snprintf(want, sizeof want,
                 "CRC mismatch in %s chunk at byte %zu (stored %08x, computed %08x)",
                 list[i].type, list[i].at, good ^ 0x00800000u, good);
        expect_fail(buf, len, MMP_EBITSTREAM, want);
        put32(crc, good);
    }
    /* Its data changed, the CRC kept. */
    assert_string_equal(list[2].type, "text");
    buf[list[2].at + 8] ^= 1;
    expect_fail(buf, len, MMP_EBITSTREAM, "CRC mismatch in text chunk");
    free(buf);
}

/* ---------------------------------------------------------------- chunks */

/* A file built chunk by chunk. */
typedef struct fbuild {
    uint8_t *b;
    size_t n, cap;
} fbuild;

static void fb_put(fbuild *f, const void *p, size_t n)
{
    if (f->n + n > f->cap) {
        f->cap = (f->n + n) * 2 + 64;
        f->b = realloc(f->b, f->cap);
        assert_non_null(f->b);
    }
    if (n)
        memcpy(f->b + f->n, p, n);
    f->n += n;
}

static void fb_sig(fbuild *f)
{
    const uint8_t sig[MMP_SIGNATURE_SIZE] = {'M', 'M', 'P', 'i', MMP_FORMAT_MAJOR,
                                             MMP_FORMAT_MINOR};
    f->n = 0;
    fb_put(f, sig, sizeof sig);
}

/* A chunk with a right CRC; returns where it starts. */
static size_t fb_chunk(fbuild *f, const char *type, const uint8_t *data, size_t len)
{
    const size_t at = f->n;
    uint8_t hdr[8], crc[4];
    put32(hdr, (uint32_t)len);
    memcpy(hdr + 4, type, 4);
    fb_put(f, hdr, 8);
    fb_put(f, data, len);
    put32(crc, mmp_chunk_crc((const uint8_t *)type, data, len));
    fb_put(f, crc, 4);
    return at;
}

static void fb_head(fbuild *f, const mmp_header *h)
{
    uint8_t d[MMP_HEAD_SIZE];
    mmp_head_write(h, d);
    fb_chunk(f, "HEAD", d, sizeof d);
}

/* A TIDX chunk of `count` and n entries, all 0 (fixup_tidx fills them). */
static void fb_tidx(fbuild *f, uint32_t count, uint32_t n)
{
    uint8_t *d = calloc(4 + 8 * (size_t)n, 1);
    assert_non_null(d);
    put32(d, count);
    fb_chunk(f, "TIDX", d, 4 + 8 * (size_t)n);
    free(d);
}

static void fb_tile(fbuild *f, size_t len)
{
    uint8_t d[64];
    fill_payload(d, len, (unsigned)f->n);
    fb_chunk(f, "TILE", d, len);
}

/* The index filled and its CRC. */
static void fb_done(fbuild *f)
{
    fixup_tidx(f->b, f->n);
    fixup_chunks(f->b, f->n, 0);
}

/* The header of make_multi: 3 x 2 tiles. */
static void multi_header(mmp_header *h)
{
    fill_header(h);
    h->width = MULTI_W;
    h->height = MULTI_H;
}

/* Chunk types: invalid ones, unknown critical ones (a newer writer's),
 * unknown ancillary ones (skipped, listed). */
static void test_chunk_types(void **state)
{
    (void)state;
    mmp_header h, hm;
    fill_header(&h);
    multi_header(&hm);
    fbuild f = {0};
    static const char *const invalid[] = {"TI1E", "TIL ", "\0\0\0\0", "ti\xc3\xa9", "[EAD",
                                          "@ILE", "tIL{"};
    for (size_t i = 0; i < NELEM(invalid); i++) {
        fb_sig(&f);
        fb_head(&f, &h);
        const size_t at = fb_chunk(&f, invalid[i], NULL, 0);
        fb_tile(&f, 4);
        char want[64];
        snprintf(want, sizeof want, "invalid chunk type at byte %zu", at + 4);
        expect_fail(f.b, f.n, MMP_EBITSTREAM, want);
        /* In place of HEAD, too. */
        fb_sig(&f);
        fb_chunk(&f, invalid[i], NULL, 0);
        expect_fail(f.b, f.n, MMP_EBITSTREAM, "invalid chunk type at byte 10");
    }
    /* An unknown critical chunk wherever it is after HEAD: before the
     * tiles, after the index, between tiles. */
    static const char *const critical[] = {"ABCD", "Tile", "HEAd", "TIDx", "XIFF"};
    for (size_t i = 0; i < NELEM(critical); i++) {
        char want[96];
        snprintf(want, sizeof want, "this file needs a newer mmp-dec (critical chunk %s)",
                 critical[i]);
        for (int where = 0; where < 4; where++) {
            fb_sig(&f);
            fb_head(&f, where < 2 ? &h : &hm);
            if (where == 0)
                fb_chunk(&f, critical[i], (const uint8_t *)"data", 4);
            if (where == 1) {
                fb_chunk(&f, "text", (const uint8_t *)"a\0b", 3);
                fb_chunk(&f, critical[i], NULL, 0);
            }
            if (where >= 2) {
                fb_tidx(&f, MULTI_TILES, MULTI_TILES);
                if (where == 2)
                    fb_chunk(&f, critical[i], NULL, 0);
                for (int t = 0; t < MULTI_TILES; t++) {
                    fb_tile(&f, (size_t)t + 1);
                    if (where == 3 && t == 2)
                        fb_chunk(&f, critical[i], (const uint8_t *)"x", 1);
                }
            } else {
                fb_tile(&f, 5);
            }
            fb_done(&f);
            expect_fail(f.b, f.n, MMP_EUNSUPPORTED, want);
        }
        /* As the first chunk, before HEAD. */
        fb_sig(&f);
        fb_chunk(&f, critical[i], NULL, 0);
        fb_head(&f, &h);
        fb_tile(&f, 5);
        snprintf(want, sizeof want, "the first chunk is %s, not HEAD", critical[i]);
        expect_fail(f.b, f.n, MMP_EBITSTREAM, want);
    }
    /* Unknown ancillary chunks: skipped, and listed in order with their
     * data. */
    static const char *const anc[] = {"zzzz", "abcD", "head", "tile", "tIDX", "xYZw"};
    fb_sig(&f);
    fb_head(&f, &hm);
    size_t at[NELEM(anc)];
    for (size_t i = 0; i < NELEM(anc); i++)
        at[i] = fb_chunk(&f, anc[i], (const uint8_t *)"0123456789", i);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    for (int t = 0; t < MULTI_TILES; t++)
        fb_tile(&f, 3);
    fb_done(&f);
    mmp_container c;
    expect_ok(f.b, f.n, &c);
    assert_int_equal(c.nextra, NELEM(anc));
    for (size_t i = 0; i < NELEM(anc); i++) {
        assert_string_equal(c.extra[i].type, anc[i]);
        assert_int_equal(c.extra[i].offset, at[i] + 8);
        assert_int_equal(c.extra[i].len, i);
        assert_true(mmp_chunk_ancillary(anc[i]));
    }
    assert_int_equal(c.ntiles, MULTI_TILES);
    mmp_container_free(&c);
    /* The type predicates. */
    assert_true(mmp_chunk_type_valid("HEAD"));
    assert_true(mmp_chunk_type_valid("zZzZ"));
    assert_false(mmp_chunk_type_valid("HEA1"));
    assert_false(mmp_chunk_type_valid("HE D"));
    assert_false(mmp_chunk_type_valid("\x80HEA"));
    assert_false(mmp_chunk_ancillary("HEAD"));
    assert_false(mmp_chunk_ancillary("Text"));
    assert_true(mmp_chunk_ancillary("text"));
    free(f.b);
}

/* The chunks' order: HEAD first and once, ancillary chunks before the
 * index and the tiles, the index before the tiles (and only with several),
 * nothing after the last tile. */
static void test_chunk_order(void **state)
{
    (void)state;
    mmp_header h, hm;
    fill_header(&h);
    multi_header(&hm);
    fbuild f = {0};

    /* Two HEADs. */
    fb_sig(&f);
    fb_head(&f, &h);
    fb_head(&f, &h);
    fb_tile(&f, 3);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "a second HEAD chunk");
    /* An ancillary chunk before HEAD; a TILE before HEAD. */
    fb_sig(&f);
    fb_chunk(&f, "text", (const uint8_t *)"k\0v", 3);
    fb_head(&f, &h);
    fb_tile(&f, 3);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "the first chunk is text, not HEAD");
    fb_sig(&f);
    fb_tile(&f, 3);
    fb_head(&f, &h);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "the first chunk is TILE, not HEAD");
    /* HEAD of another length. */
    for (size_t hl = 0; hl < 44; hl += hl == 36 ? 1 : 37 - hl > 1 ? 12 : 1) {
        if (hl == MMP_HEAD_SIZE)
            continue;
        uint8_t d[64];
        memset(d, 0, sizeof d);
        mmp_head_write(&h, d);
        fb_sig(&f);
        fb_chunk(&f, "HEAD", d, hl);
        fb_tile(&f, 3);
        char want[64];
        snprintf(want, sizeof want, "HEAD chunk of %zu bytes, not 38", hl);
        expect_fail(f.b, f.n, MMP_EBITSTREAM, want);
    }
    /* An ancillary chunk after the only tile: trailing bytes. */
    fb_sig(&f);
    fb_head(&f, &h);
    fb_tile(&f, 3);
    fb_chunk(&f, "text", (const uint8_t *)"k\0v", 3);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "trailing bytes after the last tile (15)");
    /* Several tiles: an ancillary chunk after the index, between tiles,
     * after the last. */
    for (int where = 0; where < 3; where++) {
        fb_sig(&f);
        fb_head(&f, &hm);
        fb_tidx(&f, MULTI_TILES, MULTI_TILES);
        if (where == 0)
            fb_chunk(&f, "iccp", (const uint8_t *)"icc", 3);
        for (int t = 0; t < MULTI_TILES; t++) {
            fb_tile(&f, 2);
            if (where == 1 && t == 0)
                fb_chunk(&f, "iccp", (const uint8_t *)"icc", 3);
        }
        if (where == 2)
            fb_chunk(&f, "iccp", (const uint8_t *)"icc", 3);
        fb_done(&f);
        expect_fail(f.b, f.n, MMP_EBITSTREAM,
                    where == 2 ? "trailing bytes after the last tile (15)"
                               : "iccp chunk after the tile index or a tile (ancillary "
                                 "chunks come before them)");
    }
    /* A TILE before the index; no index at all; the index after a tile. */
    fb_sig(&f);
    fb_head(&f, &hm);
    for (int t = 0; t < MULTI_TILES; t++)
        fb_tile(&f, 2);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "a TILE chunk before the tile index");
    fb_sig(&f);
    fb_head(&f, &hm);
    fb_tile(&f, 2);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    for (int t = 1; t < MULTI_TILES; t++)
        fb_tile(&f, 2);
    fb_done(&f);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "a TILE chunk before the tile index");
    /* Two indexes. */
    fb_sig(&f);
    fb_head(&f, &hm);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    for (int t = 0; t < MULTI_TILES; t++)
        fb_tile(&f, 2);
    fb_done(&f);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "TIDX chunk out of place");
    /* An index in a file of one tile (with the count it would have). */
    fb_sig(&f);
    fb_head(&f, &h);
    fb_tidx(&f, 1, 1);
    fb_tile(&f, 2);
    fb_done(&f);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "TIDX chunk out of place");
    /* An index between tiles. */
    fb_sig(&f);
    fb_head(&f, &hm);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    fb_tile(&f, 2);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    for (int t = 1; t < MULTI_TILES; t++)
        fb_tile(&f, 2);
    fb_done(&f);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "TIDX chunk out of place");
    /* Fewer TILE chunks than tiles; more (the rest is trailing). */
    fb_sig(&f);
    fb_head(&f, &hm);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    for (int t = 0; t < MULTI_TILES - 1; t++)
        fb_tile(&f, 2);
    fb_done(&f);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "truncated file (5 of 6 tiles)");
    fb_tile(&f, 2);
    fb_tile(&f, 2);
    fb_done(&f);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "trailing bytes after the last tile (14)");
    /* HEAD and nothing else. */
    fb_sig(&f);
    fb_head(&f, &h);
    expect_fail(f.b, f.n, MMP_EBITSTREAM, "truncated file (0 of 1 tiles)");
    free(f.b);
}

static void test_trailing_bytes(void **state)
{
    (void)state;
    for (int multi = 0; multi < 2; multi++) {
        size_t len;
        uint8_t *buf = multi ? make_multi(&len, 1) : make_file(&len);
        for (size_t extra = 1; extra <= 2 * MMP_CHUNK_OVERHEAD; extra++) {
            uint8_t *big = malloc(len + extra);
            assert_non_null(big);
            memcpy(big, buf, len);
            memset(big + len, (int)extra, extra);
            char want[64];
            snprintf(want, sizeof want, "trailing bytes after the last tile (%zu)", extra);
            expect_fail(big, len + extra, MMP_EBITSTREAM, want);
            free(big);
        }
        /* A whole valid chunk after the last tile is trailing too. */
        uint8_t *big = malloc(len + MMP_CHUNK_OVERHEAD + 2);
        assert_non_null(big);
        memcpy(big, buf, len);
        put32(big + len, 2);
        memcpy(big + len + 4, "TILE", 4);
        big[len + 8] = big[len + 9] = 7;
        chunk_fix_crc(big, len + MMP_CHUNK_OVERHEAD + 2, len);
        expect_fail(big, len + MMP_CHUNK_OVERHEAD + 2, MMP_EBITSTREAM,
                    "trailing bytes after the last tile (14)");
        free(big);
        free(buf);
    }
}

/* A chunk length that points outside the file. */
static void test_chunk_length_outside(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_multi(&len, 1);
    chunk_ref list[16];
    const int k = chunk_walk(buf, len, list, 16);
    static const uint32_t lens[] = {0xffffffffu, 0x80000000u, 0x10000u};
    for (int i = 0; i < k; i++)
        for (size_t j = 0; j < NELEM(lens) + 1; j++) {
            const uint32_t old = list[i].len;
            /* Also one past what the file holds. */
            const uint32_t v = j < NELEM(lens) ? lens[j]
                                               : (uint32_t)(len - list[i].at - MMP_CHUNK_OVERHEAD + 1);
            put32(buf + list[i].at, v);
            char want[96];
            snprintf(want, sizeof want, "truncated %s chunk (%u bytes, %zu left)", list[i].type,
                     v, len - list[i].at - MMP_CHUNK_OVERHEAD);
            expect_fail(buf, len, MMP_EBITSTREAM, want);
            put32(buf + list[i].at, old);
        }
    free(buf);
}

/* ------------------------------------------------------------ the tile index */

static void test_tidx(void **state)
{
    (void)state;
    size_t len;
    uint8_t *good = make_multi(&len, 1);
    chunk_ref t = {0};
    assert_true(chunk_find(good, len, "TIDX", &t) >= 0);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    const size_t e0 = t.at + 12; /* the first entry */
    uint64_t off[MULTI_TILES];
    for (int i = 0; i < MULTI_TILES; i++)
        off[i] = get64(good + e0 + 8 * i);

    /* Each entry off by one either way, 0, past the file, huge. */
    for (int i = 0; i < MULTI_TILES; i++) {
        const uint64_t bad[] = {off[i] + 1, off[i] - 1, 0, len, len + 100, UINT64_MAX,
                                (uint64_t)1 << 32 | off[i]};
        for (size_t j = 0; j < NELEM(bad); j++) {
            memcpy(buf, good, len);
            put64(buf + e0 + 8 * i, bad[j]);
            chunk_fix_crc(buf, len, t.at);
            char want[96];
            snprintf(want, sizeof want, "tile %d is at byte %llu, the index says %llu", i,
                     (unsigned long long)off[i], (unsigned long long)bad[j]);
            expect_fail(buf, len, MMP_EBITSTREAM, want);
        }
    }
    /* Overlapping: two entries the same; swapped; all the first. */
    memcpy(buf, good, len);
    put64(buf + e0 + 8 * 3, off[2]);
    chunk_fix_crc(buf, len, t.at);
    expect_fail(buf, len, MMP_EBITSTREAM, "tile 3 is at byte");
    memcpy(buf, good, len);
    put64(buf + e0 + 8 * 1, off[0]);
    put64(buf + e0, off[1]);
    chunk_fix_crc(buf, len, t.at);
    expect_fail(buf, len, MMP_EBITSTREAM, "tile 0 is at byte");
    memcpy(buf, good, len);
    for (int i = 1; i < MULTI_TILES; i++)
        put64(buf + e0 + 8 * i, off[0]);
    chunk_fix_crc(buf, len, t.at);
    expect_fail(buf, len, MMP_EBITSTREAM, "tile 1 is at byte");
    /* The count wrong, the length right; and every count from 0 to 20. */
    for (uint32_t count = 0; count <= 20; count++) {
        if (count == MULTI_TILES)
            continue;
        memcpy(buf, good, len);
        put32(buf + t.at + 8, count);
        chunk_fix_crc(buf, len, t.at);
        expect_fail(buf, len, MMP_EBITSTREAM,
                    "tile index of 52 bytes does not list the 6 tiles of HEAD");
    }
    memcpy(buf, good, len);
    put32(buf + t.at + 8, 0xffffffffu);
    chunk_fix_crc(buf, len, t.at);
    expect_fail(buf, len, MMP_EBITSTREAM, "does not list the 6 tiles of HEAD");
    free(buf);

    /* The length wrong (with a count to match it, or not): built again. */
    mmp_header hm;
    multi_header(&hm);
    fbuild f = {0};
    static const uint32_t entries[] = {0, 1, 5, 7, 100};
    for (size_t i = 0; i < NELEM(entries); i++)
        for (int match = 0; match < 2; match++) {
            fb_sig(&f);
            fb_head(&f, &hm);
            fb_tidx(&f, match ? entries[i] : MULTI_TILES, entries[i]);
            for (int k = 0; k < MULTI_TILES; k++)
                fb_tile(&f, 2);
            fb_done(&f);
            char want[96];
            snprintf(want, sizeof want, "tile index of %u bytes does not list the 6 tiles",
                     4 + 8 * entries[i]);
            expect_fail(f.b, f.n, MMP_EBITSTREAM, want);
        }
    /* Shorter than its count, not a multiple of 8 past it. */
    static const size_t odd[] = {0, 1, 3, 5, 4 + 8 * MULTI_TILES - 1, 4 + 8 * MULTI_TILES + 1};
    for (size_t i = 0; i < NELEM(odd); i++) {
        uint8_t d[64] = {0};
        put32(d, MULTI_TILES);
        fb_sig(&f);
        fb_head(&f, &hm);
        fb_chunk(&f, "TIDX", d, odd[i]);
        for (int k = 0; k < MULTI_TILES; k++)
            fb_tile(&f, 2);
        fb_done(&f);
        char want[96];
        snprintf(want, sizeof want, "tile index of %zu bytes does not list", odd[i]);
        expect_fail(f.b, f.n, MMP_EBITSTREAM, want);
    }
    /* The builder's file with its index filled is valid. */
    fb_sig(&f);
    fb_head(&f, &hm);
    fb_tidx(&f, MULTI_TILES, MULTI_TILES);
    for (int k = 0; k < MULTI_TILES; k++)
        fb_tile(&f, (size_t)k);
    fb_done(&f);
    mmp_container c;
    expect_ok(f.b, f.n, &c);
    assert_int_equal(c.ntiles, MULTI_TILES);
    mmp_container_free(&c);
    free(f.b);
    free(good);
}

/* ---------------------------------------------------------- huge tile counts */

/* The largest tile count: the smallest tiles (128 x 128) on the largest
 * image (MMP_MAX_PIXELS), 512 x 32 = 16384 tiles. */
#define HUGE_W 65536
#define HUGE_H 4096
#define HUGE_TILES 16384

static void huge_header(mmp_header *h)
{
    fill_header(h);
    h->width = HUGE_W;
    h->height = HUGE_H;
    h->tile_w = h->tile_h = MMP_MIN_TILE;
}

/* The files of the test: 0 the signature and HEAD alone, 1 with the index
 * too, 2 with the index and half the tiles, 3 whole (every tile empty),
 * 4 with an index whose length claims 4 GiB, 5 with an index of one
 * entry. */
static void huge_file(int which, fbuild *f)
{
    mmp_header h;
    huge_header(&h);
    fb_sig(f);
    fb_head(f, &h);
    if (which == 4) {
        uint8_t d[12] = {0};
        put32(d, HUGE_TILES);
        fb_chunk(f, "TIDX", d, sizeof d);
        put32(f->b + f->n - MMP_CHUNK_OVERHEAD - sizeof d, 0xffffffffu);
        return;
    }
    if (which == 0)
        return;
    fb_tidx(f, HUGE_TILES, which == 5 ? 1 : HUGE_TILES);
    const int tiles = which == 2 ? HUGE_TILES / 2 : which == 3 ? HUGE_TILES : 0;
    for (int i = 0; i < tiles; i++)
        fb_chunk(f, "TILE", NULL, 0);
    fb_done(f);
}

/* Parses the huge files; 0 when each gives what it must. */
static int huge_parse_all(void)
{
    static const char *const want[] = {
        "truncated file (0 of 16384 tiles)",
        "truncated file (0 of 16384 tiles)",
        "truncated file (8192 of 16384 tiles)",
        NULL,
        "truncated TIDX chunk (4294967295 bytes",
        "tile index of 12 bytes does not list the 16384 tiles of HEAD",
    };
    fbuild f = {0};
    int bad = 0;
    for (int which = 0; which < 6; which++) {
        huge_file(which, &f);
        mmp_container c;
        char err[256] = "";
        const int rc = mmp_container_parse(f.b, f.n, &c, err, sizeof err);
        if (want[which] ? rc == 0 || !strstr(err, want[which]) : rc != 0) {
            fprintf(stderr, "huge file %d: rc %d '%s'\n", which, rc, err);
            bad = 1;
        }
        if (!rc) {
            mmp_tile last;
            mmp_tile_rect(&c.h, HUGE_TILES - 1, &last);
            if (c.ntiles != HUGE_TILES || c.cols != 512 || c.rows != 32 ||
                c.tiles[HUGE_TILES - 1].x != HUGE_W - 128 ||
                c.tiles[HUGE_TILES - 1].y != HUGE_H - 128 || last.x != c.tiles[HUGE_TILES - 1].x) {
                fprintf(stderr, "huge file %d: %u tiles of %u x %u\n", which, c.ntiles, c.cols,
                        c.rows);
                bad = 1;
            }
            /* The probe of the library reads the same. */
            mmp_file_info fi;
            if (mmp_probe(f.b, f.n, &fi, err, sizeof err) || fi.tiles != HUGE_TILES ||
                fi.tile_width != 128 || fi.payload_len != 0)
                bad = 1;
            mmp_container_free(&c);
        }
    }
    free(f.b);
    return bad;
}

/* The process's address space in bytes (/proc/self/statm), or 0 (not
 * used under AddressSanitizer, whose shadow memory takes terabytes). */
static __attribute__((unused)) size_t address_space(void)
{
    FILE *fp = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!fp)
        return 0;
    if (fscanf(fp, "%lu", &pages) != 1)
        pages = 0;
    fclose(fp);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * The tile count is bounded by the limits (MMP_MAX_PIXELS / 128^2 = 16384
 * tiles), and the parse allocates for it no more than a record per tile
 * and the index: the parses run in a child whose address space may grow by
 * HUGE_BUDGET_MB at most (files written into it included). Under
 * AddressSanitizer, whose shadow memory a limit on the address space
 * breaks, the parses run without the limit.
 */
#define HUGE_BUDGET_MB 24
static void test_huge_tile_count(void **state)
{
    (void)state;
    mmp_header h;
    huge_header(&h);
    uint32_t cols, rows;
    mmp_tile_grid(&h, &cols, &rows);
    assert_int_equal((uint64_t)cols * rows, HUGE_TILES);
    assert_int_equal(HUGE_TILES, MMP_MAX_PIXELS / (MMP_MIN_TILE * MMP_MIN_TILE));
#if defined(__SANITIZE_ADDRESS__)
    assert_int_equal(huge_parse_all(), 0);
    print_message("huge tile counts parsed (no limit on memory under AddressSanitizer)\n");
#else
    const size_t base = address_space();
    assert_true(base > 0);
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = base + (size_t)HUGE_BUDGET_MB * 1024 * 1024;
        if (setrlimit(RLIMIT_AS, &rl))
            _exit(3);
        _exit(huge_parse_all());
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the parses of huge tile counts failed within %d MB more address space "
                 "(status %d)", HUGE_BUDGET_MB, st);
    print_message("huge tile counts (16384 tiles) parsed within %d MB more address space\n",
                  HUGE_BUDGET_MB);
#endif
    /* The writer makes the whole file: an index of 16384 entries. */
    const uint8_t **td = calloc(HUGE_TILES, sizeof *td);
    size_t *tl = calloc(HUGE_TILES, sizeof *tl);
    assert_true(td && tl);
    uint8_t *buf;
    size_t len;
    assert_int_equal(mmp_container_write(&h, td, tl, HUGE_TILES, NULL, 0, &buf, &len), MMP_OK);
    fbuild f = {0};
    huge_file(3, &f);
    assert_int_equal(len, f.n);
    assert_memory_equal(buf, f.b, len);
    /* One tile less than the grid: refused. */
    uint8_t *none = NULL;
    assert_int_equal(mmp_container_write(&h, td, tl, HUGE_TILES - 1, NULL, 0, &none, &len),
                     MMP_EINVAL);
    assert_null(none);
    free(buf);
    free(f.b);
    free(td);
    free(tl);
}

/* At most MMP_MAX_EXTRA_CHUNKS ancillary chunks. */
static void test_too_many_ancillary(void **state)
{
    (void)state;
    mmp_header h;
    fill_header(&h);
    fbuild f = {0};
    for (int n = MMP_MAX_EXTRA_CHUNKS; n <= MMP_MAX_EXTRA_CHUNKS + 1; n++) {
        fb_sig(&f);
        fb_head(&f, &h);
        for (int i = 0; i < n; i++)
            fb_chunk(&f, "text", (const uint8_t *)"k\0v", i % 4);
        fb_tile(&f, 4);
        if (n == MMP_MAX_EXTRA_CHUNKS) {
            mmp_container c;
            expect_ok(f.b, f.n, &c);
            assert_int_equal(c.nextra, MMP_MAX_EXTRA_CHUNKS);
            assert_int_equal(c.extra[n - 1].len, (n - 1) % 4);
            mmp_container_free(&c);
        } else {
            expect_fail(f.b, f.n, MMP_ELIMIT, "more than 1024 ancillary chunks");
        }
    }
    free(f.b);
}

/* ----------------------------------------------------------- the writer */

static void test_write_errors(void **state)
{
    (void)state;
    mmp_header h;
    fill_header(&h);
    uint8_t *out = (uint8_t *)&h;
    size_t outlen = 99;
    uint8_t one = 0;
    assert_int_equal(mmp_container_build(NULL, &one, 1, &out, &outlen), MMP_EINVAL);
    assert_int_equal(mmp_container_build(&h, NULL, 1, &out, &outlen), MMP_EINVAL);
    assert_int_equal(mmp_container_build(&h, &one, 1, NULL, &outlen), MMP_EINVAL);
    assert_int_equal(mmp_container_build(&h, &one, 1, &out, NULL), MMP_EINVAL);
    /* A chunk over 4 GiB is refused before the payload is touched or
     * anything is allocated. */
    assert_int_equal(mmp_container_build(&h, &one, (size_t)MMP_MAX_CHUNK + 1, &out, &outlen),
                     MMP_EINVAL);
    assert_null(out);
    assert_int_equal(outlen, 0);

    /* mmp_container_write: the tile count must be the grid's. */
    mmp_header hm;
    multi_header(&hm);
    const uint8_t *td[MULTI_TILES] = {&one, &one, &one, &one, &one, &one};
    size_t tl[MULTI_TILES] = {1, 1, 1, 1, 1, 1};
    static const uint32_t counts[] = {0, 1, 5, 7};
    for (size_t i = 0; i < NELEM(counts); i++)
        assert_int_equal(mmp_container_write(&hm, td, tl, counts[i], NULL, 0, &out, &outlen),
                         MMP_EINVAL);
    assert_int_equal(mmp_container_write(&hm, NULL, tl, MULTI_TILES, NULL, 0, &out, &outlen),
                     MMP_EINVAL);
    assert_int_equal(mmp_container_write(&hm, td, NULL, MULTI_TILES, NULL, 0, &out, &outlen),
                     MMP_EINVAL);
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, NULL, 1, &out, &outlen),
                     MMP_EINVAL);
    td[3] = NULL; /* no data, with a length */
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, NULL, 0, &out, &outlen),
                     MMP_EINVAL);
    tl[3] = 0; /* no data, no length: an empty tile */
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, NULL, 0, &out, &outlen),
                     MMP_OK);
    free(out);
    /* Ancillary chunks: valid ancillary types only, data with a length. */
    static const char *const bad_types[] = {"TEXT", "Text", "te1t", "te t", "\0\0\0\0"};
    for (size_t i = 0; i < NELEM(bad_types); i++) {
        mmp_extra_in x = {{0}, &one, 1};
        memcpy(x.type, bad_types[i], 4);
        assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, &x, 1, &out, &outlen),
                         MMP_EINVAL);
    }
    mmp_extra_in x = {{'t', 'e', 'x', 't'}, NULL, 1};
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, &x, 1, &out, &outlen),
                     MMP_EINVAL);
    x.len = (size_t)MMP_MAX_CHUNK + 1;
    x.data = &one;
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, &x, 1, &out, &outlen),
                     MMP_EINVAL);
    mmp_extra_in *many = calloc(MMP_MAX_EXTRA_CHUNKS + 1, sizeof *many);
    assert_non_null(many);
    for (int i = 0; i <= MMP_MAX_EXTRA_CHUNKS; i++)
        memcpy(many[i].type, "text", 4);
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, many, MMP_MAX_EXTRA_CHUNKS + 1,
                                         &out, &outlen),
                     MMP_EINVAL);
    assert_int_equal(mmp_container_write(&hm, td, tl, MULTI_TILES, many, MMP_MAX_EXTRA_CHUNKS,
                                         &out, &outlen),
                     MMP_OK);
    mmp_container c;
    expect_ok(out, outlen, &c);
    assert_int_equal(c.nextra, MMP_MAX_EXTRA_CHUNKS);
    mmp_container_free(&c);
    free(out);
    free(many);
}

static void test_strerror(void **state)
{
    (void)state;
    const int codes[] = {MMP_OK, MMP_EINVAL, MMP_ENOMEM, MMP_EIO, MMP_EFORMAT,
                         MMP_EBITSTREAM, MMP_EUNSUPPORTED, MMP_ELIMIT, MMP_EENGINE,
                         MMP_ECANCELED};
    size_t n = NELEM(codes);
    for (size_t i = 0; i < n; i++) {
        const char *s = mmp_strerror(codes[i]);
        assert_non_null(s);
        assert_string_not_equal(s, "unknown error");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(s, mmp_strerror(codes[j]));
    }
    assert_string_equal(mmp_strerror(-10), "unknown error");
    assert_string_equal(mmp_strerror(1), "unknown error");
    assert_string_equal(mmp_strerror(-1000), "unknown error");
}

/* The version rule of docs/format.md section 2: this decoder (1.4) reads
 * every file of major 1, of its minor version and of later ones, unless a
 * later one uses a coding tool or a critical chunk it lacks (refused by
 * name); and the draft 0.9, whose syntax is 1.0's. Every other version is
 * refused. */
static void test_versions(void **state)
{
    (void)state;
    assert_int_equal(MMP_FORMAT_MAJOR, 1);
    assert_int_equal(MMP_FORMAT_MINOR, 4);
    /* Read: 1.0 to 1.4, the draft 0.9, later minor versions; one tile and several,
     * with ancillary chunks (one of a type no decoder knows). */
    static const uint8_t read[][2] = {{1, 0}, {0, 9}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5},
                                      {1, 9}, {1, 255}};
    for (size_t i = 0; i < NELEM(read); i++) {
        for (int multi = 0; multi < 2; multi++) {
            size_t len;
            uint8_t *buf = multi ? make_multi(&len, 1) : make_file(&len);
            buf[MF_MAJOR] = read[i][0];
            buf[MF_MINOR] = read[i][1];
            mmp_container c;
            expect_ok(buf, len, &c);
            assert_int_equal(c.major, read[i][0]);
            assert_int_equal(c.minor, read[i][1]);
            assert_int_equal(c.ntiles, multi ? MULTI_TILES : 1);
            assert_int_equal(c.nextra, multi ? MULTI_EXTRA : 0);
            mmp_container_free(&c);
            /* mmp_probe gives the file's version. */
            mmp_file_info fi;
            char err[256] = "";
            assert_int_equal(mmp_probe(buf, len, &fi, err, sizeof err), MMP_OK);
            assert_int_equal(fi.version, read[i][0]);
            assert_int_equal(fi.version_minor, read[i][1]);
            /* A later minor version's coding tool or critical chunk is
             * refused by name; so is one in a file of minor 0 or of the
             * draft, which have no such tool. */
            put32(buf + MF_TOOLS, MMP_TOOL_TRANSFORM | 1u << 5);
            fixup_container(buf, len, 0);
            expect_fail(buf, len, MMP_EUNSUPPORTED,
                        "this file needs a newer mmp-dec (coding tool 5)");
            free(buf);
        }
        fbuild f = {0};
        mmp_header h;
        fill_header(&h);
        fb_sig(&f);
        f.b[MF_MAJOR] = read[i][0];
        f.b[MF_MINOR] = read[i][1];
        fb_head(&f, &h);
        fb_chunk(&f, "zzzz", (const uint8_t *)"?", 1);
        fb_chunk(&f, "NEWT", (const uint8_t *)"tool", 4);
        fb_tile(&f, 5);
        fb_done(&f);
        expect_fail(f.b, f.n, MMP_EUNSUPPORTED,
                    "this file needs a newer mmp-dec (critical chunk NEWT)");
        free(f.b);
    }
    /* Refused: other minor versions of the draft, other major versions. */
    static const uint8_t refused[][2] = {{0, 0}, {0, 8}, {0, 10}, {0, 255}, {2, 0},
                                         {2, 9}, {3, 1}, {9, 0},  {128, 0}, {255, 255}};
    for (size_t i = 0; i < NELEM(refused); i++) {
        size_t len;
        uint8_t *buf = make_multi(&len, 1);
        buf[MF_MAJOR] = refused[i][0];
        buf[MF_MINOR] = refused[i][1];
        char want[128];
        snprintf(want, sizeof want,
                 "unsupported format version %u.%u (this decoder reads 1.x and 0.9)",
                 refused[i][0], refused[i][1]);
        expect_fail(buf, len, MMP_EUNSUPPORTED, want);
        mmp_file_info fi;
        char err[256] = "";
        assert_int_equal(mmp_probe(buf, len, &fi, err, sizeof err), MMP_EUNSUPPORTED);
        assert_string_equal(err, want);
        free(buf);
    }
    /* The draft's file decodes as the same file of 1.0 does. */
    uint8_t draft[sizeof example_one_tile];
    memcpy(draft, example_one_tile, sizeof draft);
    draft[MF_MAJOR] = 0;
    draft[MF_MINOR] = 9;
    mmp_image img;
    char err[256] = "";
    assert_int_equal(mmp_decode(draft, sizeof draft, &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.width, 4);
    assert_int_equal(img.height, 3);
    assert_memory_equal(img.pix, example_pixels, sizeof example_pixels);
    mmp_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_one_tile),
        cmocka_unit_test(test_roundtrip_every_field),
        cmocka_unit_test(test_roundtrip_tiles_and_chunks),
        cmocka_unit_test(test_tile_grid),
        cmocka_unit_test(test_example_one_tile),
        cmocka_unit_test(test_example_two_tiles),
        cmocka_unit_test(test_head_layout),
        cmocka_unit_test(test_head_fields_invalid),
        cmocka_unit_test(test_unknown_tools),
        cmocka_unit_test(test_tile_sizes),
        cmocka_unit_test(test_colour_fields),
        cmocka_unit_test(test_residual_fields),
        cmocka_unit_test(test_too_many_pixels),
        cmocka_unit_test(test_boundaries_accepted),
        cmocka_unit_test(test_signature),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_version8_file),
        cmocka_unit_test(test_short_foreign_file),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_crc_each_chunk),
        cmocka_unit_test(test_chunk_types),
        cmocka_unit_test(test_chunk_order),
        cmocka_unit_test(test_trailing_bytes),
        cmocka_unit_test(test_chunk_length_outside),
        cmocka_unit_test(test_tidx),
        cmocka_unit_test(test_huge_tile_count),
        cmocka_unit_test(test_too_many_ancillary),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
