/*
 * Tests of the .mmp container header: layout, round trip, validation of
 * every field, truncation, bit flips and trailing bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/container.h"
#include "common/error.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "util.h"

#define PAYLOAD_LEN 37

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
}

static void fill_payload(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 151u + 7u);
}

/* A valid small file; the caller frees it. */
static uint8_t *make_file(size_t *len)
{
    mmp_header h;
    uint8_t payload[PAYLOAD_LEN];
    fill_header(&h);
    fill_payload(payload, sizeof payload);
    uint8_t *buf = NULL;
    assert_int_equal(mmp_container_build(&h, payload, sizeof payload, &buf, len), MMP_OK);
    assert_non_null(buf);
    assert_int_equal(*len, MMP_HEADER_SIZE + PAYLOAD_LEN);
    return buf;
}

/* Parse and check the code and that the message is one line containing
 * `want` (NULL: no message check). */
static void expect_fail(const uint8_t *buf, size_t len, int code, const char *want)
{
    mmp_header h;
    char err[256];
    memset(err, 'x', sizeof err);
    int rc = mmp_header_parse(buf, len, &h, err, sizeof err);
    if (rc != code || (want && !strstr(err, want)))
        print_error("len %zu: rc %d (want %d), message '%s' (want '%s')\n", len, rc, code, err,
                    want ? want : "");
    assert_int_equal(rc, code);
    assert_true(strlen(err) > 0);
    assert_null(strchr(err, '\n'));
    if (want)
        assert_non_null(strstr(err, want));
}

static void test_roundtrip(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    mmp_header want, got;
    fill_header(&want);
    char err[128] = "";
    assert_int_equal(mmp_header_parse(buf, len, &got, err, sizeof err), MMP_OK);
    assert_int_equal(got.width, want.width);
    assert_int_equal(got.height, want.height);
    assert_int_equal(got.maxval, want.maxval);
    assert_int_equal(got.planes, want.planes);
    assert_int_equal(got.log2_block, want.log2_block);
    assert_int_equal(got.log2_pmin, want.log2_pmin);
    assert_int_equal(got.dict_cap, want.dict_cap);
    assert_int_equal(got.redund_q4, want.redund_q4);
    assert_int_equal(got.lambda_q8, want.lambda_q8);
    assert_int_equal(got.payload_len, PAYLOAD_LEN);
    assert_int_equal(got.payload_crc,
                     mmp_container_crc(buf, MMP_HEADER_CRC_OFFSET, buf + MMP_HEADER_SIZE,
                                       PAYLOAD_LEN));
    uint8_t payload[PAYLOAD_LEN];
    fill_payload(payload, sizeof payload);
    assert_memory_equal(buf + MMP_HEADER_SIZE, payload, PAYLOAD_LEN);

    /* mmp_header_write of the parsed header reproduces the file's header. */
    uint8_t hdr[MMP_HEADER_SIZE];
    mmp_header_write(&got, hdr);
    assert_memory_equal(hdr, buf, MMP_HEADER_SIZE);
    free(buf);
}

static void test_empty_payload(void **state)
{
    (void)state;
    mmp_header h, got;
    fill_header(&h);
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(mmp_container_build(&h, NULL, 0, &buf, &len), MMP_OK);
    assert_int_equal(len, MMP_HEADER_SIZE);
    assert_int_equal(mmp_header_parse(buf, len, &got, NULL, 0), MMP_OK);
    assert_int_equal(got.payload_len, 0);
    free(buf);
}

/* Pins the byte layout documented in docs/format.md section 2. */
static void test_layout(void **state)
{
    (void)state;
    mmp_header h;
    fill_header(&h);
    h.width = 0x01020304;
    h.height = 0x05060708;
    h.maxval = 0x0000abcd;
    h.max_error = 0x1234;
    h.dict_cap = 0x3344;
    h.residual = 0x05;
    h.tools = 0x01;
    h.redund_q4 = 0x55667788;
    h.lambda_q8 = 0x99aabbcc;
    h.payload_len = 0x0102030405060708ull;
    h.payload_crc = 0xdeadbeef;
    uint8_t b[MMP_HEADER_SIZE];
    mmp_header_write(&h, b);
    static const uint8_t want[MMP_HEADER_SIZE] = {
        'M', 'M', 'P', 'i', MMP_FORMAT_VERSION, 4, 4, 2,
        0x04, 0x03, 0x02, 0x01, 0x08, 0x07, 0x06, 0x05,
        0xcd, 0xab, 0x34, 0x12, 0x44, 0x33, 0x05, 0x01,
        0x88, 0x77, 0x66, 0x55, 0xcc, 0xbb, 0xaa, 0x99,
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
        0x01, 0x02, 0x01, 0x01, 0xef, 0xbe, 0xad, 0xde,
    };
    assert_int_equal(MMP_HEADER_SIZE, 48);
    assert_int_equal(MMP_HEADER_CRC_OFFSET, 44);
    assert_memory_equal(b, want, MMP_HEADER_SIZE);

    /* The CRC is plain zlib crc32 of header[0,44) then the payload, which
     * equals crc32 of the concatenation. */
    size_t len;
    uint8_t *buf = make_file(&len);
    uint8_t tmp[MMP_HEADER_SIZE + PAYLOAD_LEN];
    memcpy(tmp, buf, MMP_HEADER_CRC_OFFSET);
    memcpy(tmp + MMP_HEADER_CRC_OFFSET, buf + MMP_HEADER_SIZE, PAYLOAD_LEN);
    assert_int_equal(get32(buf + MMP_HEADER_CRC_OFFSET),
                     mmp_container_crc(tmp, MMP_HEADER_CRC_OFFSET + PAYLOAD_LEN, NULL, 0));
    /* The worked example in docs/format.md section 2. */
    assert_int_equal(get32(buf + MMP_HEADER_CRC_OFFSET), 0x01C42FF5u);
    static const uint8_t example[MMP_HEADER_CRC_OFFSET] = {
        0x4D, 0x4D, 0x50, 0x69, 0x08, 0x04, 0x04, 0x02, 0x40, 0x00, 0x00, 0x00, 0x30, 0x00,
        0x00, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x01, 0x64, 0x00, 0x00, 0x00,
        0x00, 0x0A, 0x00, 0x00, 0x25, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02,
        0x01, 0x01,
    };
    assert_memory_equal(buf, example, sizeof example);
    free(buf);
}

struct mutation {
    int off;          /* byte offset in the file */
    int size;         /* 1, 4 or 8 bytes, little-endian */
    uint64_t value;
    int code;         /* expected error */
    const char *msg;  /* substring the message must contain */
};

static void apply(uint8_t *buf, const struct mutation *m)
{
    if (m->size == 1)
        buf[m->off] = (uint8_t)m->value;
    else if (m->size == 4)
        put32(buf + m->off, (uint32_t)m->value);
    else
        put64(buf + m->off, m->value);
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
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
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
            mmp_header got;
            assert_int_equal(mmp_header_parse(buf, len, &got, NULL, 0), MMP_OK);
            assert_int_equal(got.transform, cases[i].transform);
            assert_int_equal(got.chroma, cases[i].chroma);
            assert_int_equal(got.alpha, cases[i].alpha);
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
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
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

static void test_each_field_invalid(void **state)
{
    (void)state;
    static const struct mutation cases[] = {
        {0, 1, 'X', MMP_EBITSTREAM, "not an MMP file"},
        {3, 1, 'I', MMP_EBITSTREAM, "not an MMP file"},
        {4, 1, 0, MMP_EUNSUPPORTED, "version 0"},
        {4, 1, 1, MMP_EUNSUPPORTED, "unsupported format version 1"},
        {4, 1, 2, MMP_EUNSUPPORTED, "unsupported format version 2"},
        {4, 1, 3, MMP_EUNSUPPORTED, "unsupported format version 3"},
        {4, 1, 4, MMP_EUNSUPPORTED, "unsupported format version 4"},
        {4, 1, 5, MMP_EUNSUPPORTED, "unsupported format version 5"},
        {4, 1, 6, MMP_EUNSUPPORTED, "unsupported format version 6"},
        {4, 1, 7, MMP_EUNSUPPORTED, "unsupported format version 7"},
        {4, 1, 9, MMP_EUNSUPPORTED, "unsupported format version 9"},
        {4, 1, 255, MMP_EUNSUPPORTED, "version 255"},
        {5, 1, 0, MMP_EUNSUPPORTED, "planes"},
        {5, 1, 5, MMP_EUNSUPPORTED, "unsupported planes 5"},
        {5, 1, 3, MMP_EUNSUPPORTED, "unsupported alpha 1 for 3 planes"},
        {5, 1, 2, MMP_EUNSUPPORTED, "unsupported transform 2 for 2 planes"},
        {5, 1, 1, MMP_EUNSUPPORTED, "unsupported transform 2 for 1 planes"},
        {6, 1, 3, MMP_EUNSUPPORTED, "log2_block"},
        {6, 1, 5, MMP_EUNSUPPORTED, "unsupported log2_block 5"},
        {7, 1, 1, MMP_EUNSUPPORTED, "log2_pmin"},
        {7, 1, 3, MMP_EUNSUPPORTED, "unsupported log2_pmin 3"},
        {8, 4, 0, MMP_EBITSTREAM, "width"},
        {8, 4, MMP_MAX_DIM + 1, MMP_ELIMIT, "width"},
        {8, 4, 0xffffffffu, MMP_ELIMIT, "width"},
        {12, 4, 0, MMP_EBITSTREAM, "height"},
        {12, 4, MMP_MAX_DIM + 1, MMP_ELIMIT, "height"},
        {16, 4, 0, MMP_EBITSTREAM, "maxval"},
        {16, 4, 65536, MMP_EBITSTREAM, "maxval"},
        {18, 1, 1, MMP_EUNSUPPORTED, "unsupported max_error 1 with residual 0"},
        {20, 4, 0, MMP_ELIMIT, "dict_cap"},
        {22, 1, 3, MMP_EUNSUPPORTED, "unsupported residual 3"},
        {23, 1, 2, MMP_EUNSUPPORTED, "unsupported tools 2"},
        {23, 1, 255, MMP_EUNSUPPORTED, "unsupported tools 255"},
        {20, 4, MMP_MIN_DICT_CAP - 1, MMP_ELIMIT, "dict_cap"},
        {20, 4, MMP_MAX_DICT_CAP + 1, MMP_ELIMIT, "dict_cap"},
        {24, 4, (uint64_t)MMP_MAX_REDUND_Q4 + 1, MMP_ELIMIT, "redund_q4"},
        {24, 4, 0xffffffffu, MMP_ELIMIT, "redund_q4"},
        {32, 8, MMP_MAX_PAYLOAD + 1, MMP_ELIMIT, "payload_len"},
        {32, 8, UINT64_MAX, MMP_ELIMIT, "payload_len"},
        {32, 8, PAYLOAD_LEN + 1, MMP_EBITSTREAM, "truncated payload"},
        {32, 8, PAYLOAD_LEN - 1, MMP_EBITSTREAM, "trailing bytes"},
        {32, 8, 0, MMP_EBITSTREAM, "trailing bytes"},
        {40, 1, 2, MMP_EUNSUPPORTED, "unsupported order 2"},
        {40, 1, 255, MMP_EUNSUPPORTED, "unsupported order 255"},
        {41, 1, 0, MMP_EUNSUPPORTED, "unsupported transform 0 for 4 planes"},
        {41, 1, 4, MMP_EUNSUPPORTED, "unsupported transform 4 for 4 planes"},
        {42, 1, 2, MMP_EUNSUPPORTED, "unsupported chroma 2 for 4 planes"},
        {42, 1, 255, MMP_EUNSUPPORTED, "unsupported chroma 255"},
        {43, 1, 0, MMP_EUNSUPPORTED, "unsupported alpha 0 for 4 planes"},
        {43, 1, 3, MMP_EUNSUPPORTED, "unsupported alpha 3 for 4 planes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        apply(buf, &cases[i]);
        fixup_container(buf, len, 0);
        expect_fail(buf, len, cases[i].code, cases[i].msg);
        free(buf);
    }
}

/* Pixel count over the limit although each side is within it. */
static void test_too_many_pixels(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    put32(buf + 8, 16385);
    put32(buf + 12, 16385);
    fixup_container(buf, len, 0);
    expect_fail(buf, len, MMP_ELIMIT, "image too large");
    expect_fail(buf, len, MMP_ELIMIT, "width");
    free(buf);
}

/* The extreme values that must still be accepted. */
static void test_boundaries_accepted(void **state)
{
    (void)state;
    static const struct mutation ok[] = {
        {8, 4, MMP_MAX_DIM, 0, NULL},            /* width 65536 x height 48: 3 Mpixel */
        {12, 4, 1, 0, NULL},
        {16, 4, 1, 0, NULL},
        {16, 4, 65535, 0, NULL},
        {20, 4, MMP_MIN_DICT_CAP, 0, NULL},
        {20, 4, MMP_MAX_DICT_CAP, 0, NULL},
        {24, 4, 0, 0, NULL},
        {24, 4, MMP_MAX_REDUND_Q4, 0, NULL},
        {28, 4, 0, 0, NULL},
        {28, 4, 0xffffffffu, 0, NULL},            /* lambda is informational */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        size_t len;
        uint8_t *buf = make_file(&len);
        apply(buf, &ok[i]);
        fixup_container(buf, len, 0);
        mmp_header h;
        char err[128] = "";
        int rc = mmp_header_parse(buf, len, &h, err, sizeof err);
        if (rc != 0)
            print_error("case %zu: %s\n", i, err);
        assert_int_equal(rc, MMP_OK);
        free(buf);
    }
    /* Exactly MMP_MAX_PIXELS: 16384 x 16384. */
    size_t len;
    uint8_t *buf = make_file(&len);
    put32(buf + 8, 16384);
    put32(buf + 12, 16384);
    fixup_container(buf, len, 0);
    mmp_header h;
    assert_int_equal(mmp_header_parse(buf, len, &h, NULL, 0), MMP_OK);
    assert_int_equal(h.width, 16384);
    free(buf);
}

static void test_truncation(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    for (size_t n = 0; n < len; n++) {
        /* A fresh copy of exactly n bytes, so ASan catches any read past it. */
        uint8_t *cut = malloc(n ? n : 1);
        assert_non_null(cut);
        memcpy(cut, buf, n);
        expect_fail(n ? cut : NULL, n, MMP_EBITSTREAM,
                    n < MMP_HEADER_SIZE ? "truncated header" : "truncated payload");
        free(cut);
    }
    mmp_header h;
    assert_int_equal(mmp_header_parse(buf, len, &h, NULL, 0), MMP_OK);
    free(buf);
}

static void test_short_foreign_file(void **state)
{
    (void)state;
    static const uint8_t pgm[] = "P5 1 1 255\n";
    expect_fail(pgm, sizeof pgm - 1, MMP_EBITSTREAM, "not an MMP file");
    expect_fail((const uint8_t *)"MM", 2, MMP_EBITSTREAM, "truncated header");
}

static void test_bit_flips(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    int by_crc = 0;
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            mmp_header h;
            char err[256] = "";
            int rc = mmp_header_parse(buf, len, &h, err, sizeof err);
            if (rc == 0)
                print_error("flip of byte %zu bit %d not detected\n", i, bit);
            assert_int_not_equal(rc, MMP_OK);
            assert_true(rc == MMP_EBITSTREAM || rc == MMP_EUNSUPPORTED || rc == MMP_ELIMIT);
            by_crc += strstr(err, "CRC mismatch") != NULL;
            buf[i] ^= (uint8_t)(1u << bit);
        }
    }
    /* Payload, CRC and lambda flips can only be caught by the CRC. */
    assert_true(by_crc >= (PAYLOAD_LEN + 4 + 4) * 8);
    free(buf);
}

static void test_crc_mismatch(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    buf[len - 1] ^= 0x80;                          /* last payload byte */
    expect_fail(buf, len, MMP_EBITSTREAM, "CRC mismatch");
    buf[len - 1] ^= 0x80;
    buf[28] ^= 1;                                  /* lambda_q8: no range check */
    expect_fail(buf, len, MMP_EBITSTREAM, "CRC mismatch");
    buf[28] ^= 1;
    buf[MMP_HEADER_CRC_OFFSET + 2] ^= 4;           /* the stored CRC itself */
    expect_fail(buf, len, MMP_EBITSTREAM, "CRC mismatch");
    free(buf);
}

static void test_trailing_bytes(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len);
    for (size_t extra = 1; extra <= 3; extra++) {
        uint8_t *big = malloc(len + extra);
        assert_non_null(big);
        memcpy(big, buf, len);
        memset(big + len, 0, extra);
        expect_fail(big, len + extra, MMP_EBITSTREAM, "trailing bytes");
        free(big);
    }
    free(buf);
}

static void test_build_errors(void **state)
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
    /* Rejected before the payload is touched or anything is allocated. */
    assert_int_equal(mmp_container_build(&h, &one, (size_t)(MMP_MAX_PAYLOAD + 1), &out, &outlen),
                     MMP_EINVAL);
    /* The caller's payload_len and payload_crc are ignored. */
    h.payload_len = 12345;
    h.payload_crc = 1;
    assert_int_equal(mmp_container_build(&h, &one, 1, &out, &outlen), MMP_OK);
    mmp_header got;
    assert_int_equal(mmp_header_parse(out, outlen, &got, NULL, 0), MMP_OK);
    assert_int_equal(got.payload_len, 1);
    free(out);
}

static void test_strerror(void **state)
{
    (void)state;
    const int codes[] = {MMP_OK, MMP_EINVAL, MMP_ENOMEM, MMP_EIO, MMP_EFORMAT,
                         MMP_EBITSTREAM, MMP_EUNSUPPORTED, MMP_ELIMIT, MMP_EENGINE};
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        const char *s = mmp_strerror(codes[i]);
        assert_non_null(s);
        assert_string_not_equal(s, "unknown error");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(s, mmp_strerror(codes[j]));
    }
    assert_string_equal(mmp_strerror(-9), "unknown error");
    assert_string_equal(mmp_strerror(1), "unknown error");
    assert_string_equal(mmp_strerror(-1000), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_empty_payload),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_each_field_invalid),
        cmocka_unit_test(test_colour_fields),
        cmocka_unit_test(test_residual_fields),
        cmocka_unit_test(test_too_many_pixels),
        cmocka_unit_test(test_boundaries_accepted),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_short_foreign_file),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_crc_mismatch),
        cmocka_unit_test(test_trailing_bytes),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
