/*
 * Tests of images in memory and of the image files of the front ends:
 * netpbm files through libnetpbm, PNG through libpng, the dispatch by the
 * first bytes and the choice of the output format.
 * Every malformed input must come back as an error code with a one-line
 * message: libnetpbm must never get to exit() the process.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/error.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "util.h"

static char tmpdir[64];

static int group_setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/mmp_test_image_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    /* Every test removes its own files, so the directory is empty. */
    return rmdir(tmpdir);
}

static const char *tpath(const char *name)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

/* Write `len` bytes to a file, read it as PGM, remove it. */
static int read_bytes(const void *data, size_t len, mmp_image *img, char *err, size_t errlen)
{
    const char *p = tpath("in.pgm");
    write_file(p, data, len);
    int rc = mmp_imagefile_read_path(p, img, err, errlen);
    unlink(p);
    return rc;
}

static int read_str(const char *s, mmp_image *img, char *err, size_t errlen)
{
    return read_bytes(s, strlen(s), img, err, errlen);
}

/* The bytes must be rejected with `code`, a one-line message containing
 * `want`, and nothing allocated. */
static void expect_read_fail(const void *data, size_t len, int code, const char *want)
{
    mmp_image img;
    char err[256];
    memset(err, 'x', sizeof err);
    memset(&img, 0x5a, sizeof img);
    int rc = read_bytes(data, len, &img, err, sizeof err);
    if (rc != code || !strstr(err, want))
        print_error("rc %d (want %d), message '%s' (want '%s')\n", rc, code, err, want);
    assert_int_equal(rc, code);
    assert_non_null(strstr(err, want));
    assert_null(strchr(err, '\n'));
    assert_null(img.pix);
    assert_int_equal(img.width, 0);
}

static void expect_str_fail(const char *s, int code, const char *want)
{
    expect_read_fail(s, strlen(s), code, want);
}

static void fill_pattern(mmp_image *img, unsigned seed)
{
    size_t n = (size_t)img->width * (size_t)img->height;
    uint32_t x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        img->pix[i] = (uint16_t)((x >> 8) % ((uint32_t)img->maxval + 1u));
    }
    img->pix[0] = 0;
    img->pix[n - 1] = (uint16_t)img->maxval;
}

/* Write img to a file, check the P5 header and size, read it back. */
static void pgm_roundtrip(int w, int h, int maxval)
{
    mmp_image img, back;
    assert_int_equal(mmp_image_alloc(&img, w, h, maxval), MMP_OK);
    fill_pattern(&img, (unsigned)(w * 31 + h * 7 + maxval));

    const char *p = tpath("rt.pgm");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_pnm_write(f, &img, 0), MMP_OK);
    assert_int_equal(fclose(f), 0);

    size_t len;
    uint8_t *bytes = slurp(p, &len);
    assert_non_null(bytes);
    char hdr[64];
    int hl = snprintf(hdr, sizeof hdr, "P5\n%d %d\n%d\n", w, h, maxval);
    size_t bps = maxval > 255 ? 2 : 1;
    assert_int_equal(len, (size_t)hl + (size_t)w * (size_t)h * bps);
    assert_memory_equal(bytes, hdr, (size_t)hl);
    /* netpbm's 16-bit samples are big-endian. */
    size_t last = (size_t)w * (size_t)h - 1;
    if (bps == 2) {
        assert_int_equal(bytes[len - 2], img.pix[last] >> 8);
        assert_int_equal(bytes[len - 1], img.pix[last] & 0xff);
    } else {
        assert_int_equal(bytes[len - 1], img.pix[last]);
    }
    free(bytes);

    char err[256] = "";
    int rc = mmp_imagefile_read_path(p, &back, err, sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, MMP_OK);
    assert_int_equal(back.width, w);
    assert_int_equal(back.height, h);
    assert_int_equal(back.maxval, maxval);
    assert_memory_equal(back.pix, img.pix, (size_t)w * (size_t)h * sizeof img.pix[0]);
    mmp_image_free(&back);
    mmp_image_free(&img);
    unlink(p);
}

static void test_roundtrip_8bit(void **state)
{
    (void)state;
    pgm_roundtrip(37, 23, 255);
    pgm_roundtrip(16, 16, 100);
    pgm_roundtrip(5, 3, 1);
}

static void test_roundtrip_16bit(void **state)
{
    (void)state;
    pgm_roundtrip(29, 17, 65535);
    pgm_roundtrip(8, 9, 256);
    pgm_roundtrip(3, 40, 1023);
}

static void test_roundtrip_1x1(void **state)
{
    (void)state;
    pgm_roundtrip(1, 1, 255);
    pgm_roundtrip(1, 1, 65535);
    /* A hand-made 1x1 file. */
    mmp_image img;
    char err[256];
    assert_int_equal(read_bytes("P5 1 1 255\n\x7f", 12, &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.width, 1);
    assert_int_equal(img.height, 1);
    assert_int_equal(img.pix[0], 0x7f);
    mmp_image_free(&img);
}

static void test_read_p2(void **state)
{
    (void)state;
    mmp_image img;
    char err[256] = "";
    int rc = read_str("P2\n# a comment\n3 2\n# another\n1000\n0 500 1000\n  1\n2 3\n", &img, err,
                      sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, MMP_OK);
    assert_int_equal(img.width, 3);
    assert_int_equal(img.height, 2);
    assert_int_equal(img.maxval, 1000);
    static const uint16_t want[6] = {0, 500, 1000, 1, 2, 3};
    assert_memory_equal(img.pix, want, sizeof want);
    mmp_image_free(&img);

    assert_int_equal(read_str("P2 2 1 65535 65535 7\n", &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.pix[0], 65535);
    assert_int_equal(img.pix[1], 7);
    mmp_image_free(&img);
}

static void test_read_p5_16bit_by_hand(void **state)
{
    (void)state;
    static const uint8_t f[] = "P5\n2 1\n65535\n\x12\x34\xff\xfe";
    mmp_image img;
    char err[256] = "";
    assert_int_equal(read_bytes(f, sizeof f - 1, &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.pix[0], 0x1234);
    assert_int_equal(img.pix[1], 0xfffe);
    mmp_image_free(&img);
}

/* Only the first image of a multi-image file is read. */
static void test_multi_image(void **state)
{
    (void)state;
    static const uint8_t f[] = "P5 2 1 255\nabP5 1 1 255\nc";
    mmp_image img;
    char err[256] = "";
    assert_int_equal(read_bytes(f, sizeof f - 1, &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.width, 2);
    assert_int_equal(img.pix[0], 'a');
    assert_int_equal(img.pix[1], 'b');
    mmp_image_free(&img);
}

static void test_read_stdin(void **state)
{
    (void)state;
    const char *p = tpath("stdin.pgm");
    write_file(p, "P5 1 2 255\n\x01\x02", 13);
    assert_non_null(freopen(p, "rb", stdin));
    mmp_image img;
    char err[256] = "";
    assert_int_equal(mmp_imagefile_read_path("-", &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.height, 2);
    assert_int_equal(img.pix[1], 2);
    mmp_image_free(&img);
    unlink(p);
}

static void test_err_empty(void **state)
{
    (void)state;
    expect_read_fail("", 0, MMP_EFORMAT, "empty file");
}

static void test_err_magic(void **state)
{
    (void)state;
    expect_str_fail("GIF89a", MMP_EFORMAT, "not an image file (magic 0x4749; PNG, PAM");
    expect_str_fail("X", MMP_EFORMAT, "not an image file");
    expect_str_fail("P9 1 1 255\na", MMP_EFORMAT, "not an image file");
    expect_str_fail("MMPi\x01\x01\x04\x02", MMP_EFORMAT, "not an image file");
}

/* PBM reads as grey with maxval 1 (0 black). */
static void test_read_pbm(void **state)
{
    (void)state;
    mmp_image img;
    char err[256] = "";
    assert_int_equal(read_str("P1 3 1\n1 0 1\n", &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.maxval, 1);
    assert_int_equal(mmp_image_channels(&img), 1);
    static const uint16_t want[3] = {0, 1, 0};
    assert_memory_equal(img.pix, want, sizeof want);
    mmp_image_free(&img);
    assert_int_equal(read_bytes("P4 3 1\n\xa0", 8, &img, err, sizeof err), MMP_OK);
    assert_memory_equal(img.pix, want, sizeof want);
    mmp_image_free(&img);
}

static void test_err_truncated_data(void **state)
{
    (void)state;
    expect_str_fail("P5 4 4 255\n0123456789", MMP_EFORMAT, "truncated PGM data");
    expect_str_fail("P5 4 4 255\n", MMP_EFORMAT, "truncated PGM data (row 0 of 4)");
    /* 16-bit: an odd number of data bytes. */
    expect_read_fail("P5 2 1 65535\n\x01\x02\x03", 16, MMP_EFORMAT, "truncated PGM data");
    expect_str_fail("P2 2 2 255\n1 2 3\n", MMP_EFORMAT, "truncated PGM data");
}

static void test_err_truncated_header(void **state)
{
    (void)state;
    expect_str_fail("P", MMP_EFORMAT, "truncated netpbm header");
    expect_str_fail("P5", MMP_EFORMAT, "truncated netpbm header");
    expect_str_fail("P5 10", MMP_EFORMAT, "truncated netpbm header");
    expect_str_fail("P5 10 10", MMP_EFORMAT, "truncated netpbm header");
    expect_str_fail("P5 10 10 # comment", MMP_EFORMAT, "truncated netpbm header");
}

static void test_err_zero_dims(void **state)
{
    (void)state;
    expect_str_fail("P5 0 5 255\n", MMP_EFORMAT, "Width is zero");
    expect_str_fail("P5 5 0 255\n", MMP_EFORMAT, "Height is zero");
    expect_str_fail("P2 0 0 255\n", MMP_EFORMAT, "zero");
}

/* Headers announcing huge images fail at once: under ASan an attempt to
 * allocate tens of gigabytes would abort the test. */
static void test_err_absurd_dims(void **state)
{
    (void)state;
    expect_str_fail("P5 100000 100000 255\n", MMP_ELIMIT, "image too large: 100000x100000");
    expect_str_fail("P5 65537 1 255\n", MMP_ELIMIT, "image too large");
    expect_str_fail("P5 1 65537 255\n", MMP_ELIMIT, "image too large");
    expect_str_fail("P5 16385 16385 65535\n", MMP_ELIMIT, "image too large");
    expect_str_fail("P2 65536 65536 255\n", MMP_ELIMIT, "image too large");
    /* Beyond int: libnetpbm itself refuses the number. */
    expect_str_fail("P5 4000000000 1 255\n", MMP_EFORMAT, "invalid netpbm header");
    expect_str_fail("P5 -1 1 255\n", MMP_EFORMAT, "invalid netpbm header");
}

static void test_err_maxval(void **state)
{
    (void)state;
    expect_str_fail("P5 1 1 0\na", MMP_EFORMAT, "maxval");
    expect_str_fail("P5 1 1 70000\nab", MMP_EFORMAT, "maxval");
    expect_str_fail("P2 1 1 70000\n1\n", MMP_EFORMAT, "maxval");
}

static void test_err_sample_above_maxval(void **state)
{
    (void)state;
    expect_str_fail("P2 2 1 3\n1 4\n", MMP_EFORMAT, "4");
    expect_read_fail("P5 1 1 300\n\x01\x2d", 13, MMP_EFORMAT, "maxval");
    expect_str_fail("P2 2 1 3\n1 x\n", MMP_EFORMAT, "invalid PGM data");
}

static void test_err_missing_file(void **state)
{
    (void)state;
    mmp_image img;
    char err[256] = "";
    const char *p = tpath("does-not-exist.pgm");
    assert_int_equal(mmp_imagefile_read_path(p, &img, err, sizeof err), MMP_EIO);
    char want[256];
    snprintf(want, sizeof want, "cannot open %s: %s", p, strerror(ENOENT));
    assert_string_equal(err, want);
    assert_null(img.pix);
}

/* Errors are still reported when the caller gives no message buffer. */
static void test_err_no_errbuf(void **state)
{
    (void)state;
    mmp_image img;
    assert_int_equal(read_str("P6 1 1 255\nab", &img, NULL, 0), MMP_EFORMAT);
    char tiny[8];
    assert_int_equal(read_str("P5 1 1 0\na", &img, tiny, sizeof tiny), MMP_EFORMAT);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

/* After many failures, a valid read still works (the handlers and jump
 * buffers are restored each time). */
static void test_recovers_after_errors(void **state)
{
    (void)state;
    mmp_image img;
    char err[256];
    for (int i = 0; i < 50; i++) {
        assert_int_equal(read_str("P5 4 4 255\n01", &img, err, sizeof err), MMP_EFORMAT);
        assert_int_equal(read_str("P5 1 1 0\n", &img, err, sizeof err), MMP_EFORMAT);
    }
    assert_int_equal(read_str("P5 1 1 255\nz", &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.pix[0], 'z');
    mmp_image_free(&img);
}

static void test_write_errors(void **state)
{
    (void)state;
    mmp_image img;
    assert_int_equal(mmp_image_alloc(&img, 64, 64, 255), MMP_OK);

    /* A full device: the error surfaces at write or flush time. */
    FILE *f = fopen("/dev/full", "wb");
    if (f) {
        assert_int_equal(mmp_pnm_write(f, &img, 0), MMP_EIO);
        fclose(f);
    }
    /* A stream opened for reading cannot be written. */
    const char *p = tpath("ro.pgm");
    write_file(p, "x", 1);
    f = fopen(p, "rb");
    assert_non_null(f);
    assert_int_equal(mmp_pnm_write(f, &img, 0), MMP_EIO);
    fclose(f);
    unlink(p);

    /* Invalid images are refused before anything is written. */
    f = fopen(p, "wb");
    assert_non_null(f);
    img.pix[5] = 256;
    assert_int_equal(mmp_pnm_write(f, &img, 0), MMP_EINVAL);
    img.pix[5] = 0;
    img.maxval = 0;
    assert_int_equal(mmp_pnm_write(f, &img, 0), MMP_EINVAL);
    img.maxval = 70000;
    assert_int_equal(mmp_pnm_write(f, &img, 0), MMP_EINVAL);
    img.maxval = 255;
    assert_int_equal(mmp_pnm_write(NULL, &img, 0), MMP_EINVAL);
    assert_int_equal(mmp_pnm_write(f, NULL, 0), MMP_EINVAL);
    assert_int_equal(ftell(f), 0);
    fclose(f);
    unlink(p);
    mmp_image_free(&img);
}

static void test_image_alloc(void **state)
{
    (void)state;
    mmp_image img;
    assert_int_equal(mmp_image_alloc(&img, 3, 2, 255), MMP_OK);
    for (int i = 0; i < 6; i++)
        assert_int_equal(img.pix[i], 0);
    mmp_image_free(&img);
    assert_null(img.pix);
    mmp_image_free(&img);             /* twice is harmless */
    mmp_image zero = {0};
    mmp_image_free(&zero);
    mmp_image_free(NULL);

    assert_int_equal(mmp_image_alloc(&img, 0, 1, 255), MMP_EINVAL);
    assert_null(img.pix);
    assert_int_equal(mmp_image_alloc(&img, 1, -1, 255), MMP_EINVAL);
    assert_int_equal(mmp_image_alloc(&img, 1, 1, 0), MMP_EINVAL);
    assert_int_equal(mmp_image_alloc(&img, 1, 1, 65536), MMP_EINVAL);
    assert_int_equal(mmp_image_alloc(&img, MMP_MAX_DIM + 1, 1, 255), MMP_ELIMIT);
    assert_int_equal(mmp_image_alloc(&img, 16385, 16385, 255), MMP_ELIMIT);
    assert_int_equal(mmp_image_alloc(NULL, 1, 1, 255), MMP_EINVAL);
    assert_int_equal(mmp_image_alloc(&img, MMP_MAX_DIM, 1, 65535), MMP_OK);
    mmp_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_8bit),
        cmocka_unit_test(test_roundtrip_16bit),
        cmocka_unit_test(test_roundtrip_1x1),
        cmocka_unit_test(test_read_p2),
        cmocka_unit_test(test_read_p5_16bit_by_hand),
        cmocka_unit_test(test_multi_image),
        cmocka_unit_test(test_read_stdin),
        cmocka_unit_test(test_err_empty),
        cmocka_unit_test(test_err_magic),
        cmocka_unit_test(test_read_pbm),
        cmocka_unit_test(test_err_truncated_data),
        cmocka_unit_test(test_err_truncated_header),
        cmocka_unit_test(test_err_zero_dims),
        cmocka_unit_test(test_err_absurd_dims),
        cmocka_unit_test(test_err_maxval),
        cmocka_unit_test(test_err_sample_above_maxval),
        cmocka_unit_test(test_err_missing_file),
        cmocka_unit_test(test_err_no_errbuf),
        cmocka_unit_test(test_recovers_after_errors),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_image_alloc),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
