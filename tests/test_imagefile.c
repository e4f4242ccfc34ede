/*
 * Tests of the front ends' image files beyond grey PGM (tests/test_image.c):
 * PPM and PAM through libnetpbm, PNG through libpng, JPEG through libjpeg,
 * TIFF through libtiff, the dispatch by the first bytes, the output format
 * a name asks for, and bad input (the metadata: tests/test_metadata.c).
 *
 * Every input type goes read -> write -> read and must keep its samples,
 * channels and maxval. The netpbm inputs are written byte by byte here; the
 * PNG inputs with libpng directly (raw_png), so that the types our writer
 * never produces (palette, interlaced, low-depth grey with tRNS) are read
 * too; and what our writer writes is read back by libpng directly
 * (libpng_read), not by our reader. The JPEG inputs are written by libjpeg
 * (make_jpeg) and what we read must equal libjpeg's own decode of them
 * (libjpeg_decode); the TIFF inputs are written by libtiff (make_tiff) and
 * must read as the samples written.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jpeglib.h>
#include <png.h>
#include <tiffio.h>
#include <zlib.h>

#include "common/error.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/png.h"
#include "mmp/imageio/pnm.h"
#include "util.h"

static char tmpdir[64];

static int group_setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/mmp_test_imagefile_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

static const char *tpath(const char *name)
{
    static char buf[4][128];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
    return buf[i];
}

/* An image of w x h pixels of ch samples, every value in [0, maxval], 0 and
 * maxval among them, different in every channel. */
static void make_image(mmp_image *img, int w, int h, int ch, int maxval, unsigned seed)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, ch, maxval), MMP_OK);
    const size_t n = (size_t)w * (size_t)h * (size_t)ch;
    uint32_t x = seed * 2654435761u + 7u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        img->pix[i] = (uint16_t)((x >> 8) % ((uint32_t)maxval + 1u));
    }
    img->pix[0] = 0;
    img->pix[n - 1] = (uint16_t)maxval;
}

static void assert_same_image(const mmp_image *a, const mmp_image *b)
{
    assert_int_equal(a->width, b->width);
    assert_int_equal(a->height, b->height);
    assert_int_equal(mmp_image_channels(a), mmp_image_channels(b));
    assert_int_equal(a->maxval, b->maxval);
    const size_t n = (size_t)a->width * (size_t)a->height * (size_t)mmp_image_channels(a);
    for (size_t i = 0; i < n; i++)
        if (a->pix[i] != b->pix[i])
            fail_msg("sample %zu (pixel %zu, channel %zu): %u, want %u", i,
                     i / (size_t)mmp_image_channels(a), i % (size_t)mmp_image_channels(a),
                     b->pix[i], a->pix[i]);
}

static void read_ok(const char *path, mmp_image *img)
{
    char err[256] = "";
    const int rc = mmp_imagefile_read_path(path, img, err, sizeof err);
    if (rc)
        fail_msg("%s: %s", path, err);
}

static void write_ok(const char *path, const mmp_image *img, mmp_file_format fmt)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write(f, img, fmt), MMP_OK);
    assert_int_equal(fclose(f), 0);
}

/* The file at `path` holds `want`; it is read, written in `fmt` (as the
 * name would ask), read again, and both reads equal `want`. */
static void check_file(const char *path, const mmp_image *want, mmp_file_format fmt)
{
    mmp_image a, b;
    read_ok(path, &a);
    assert_same_image(want, &a);
    const char *p2 = tpath(fmt == MMP_FILE_PNG ? "again.png" : "again.pnm");
    write_ok(p2, &a, fmt);
    read_ok(p2, &b);
    assert_same_image(want, &b);
    mmp_image_free(&a);
    mmp_image_free(&b);
    unlink(p2);
}

/* ------------------------------------------------------------- netpbm */

/* A netpbm file of img written here, byte by byte: magic 2 or 3 (plain),
 * 5 or 6 (raw), or 7 (PAM with `tupltype`). */
static void write_netpbm(const char *path, const mmp_image *img, int magic, const char *tupltype)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    const int ch = mmp_image_channels(img);
    if (magic == 7)
        fprintf(f, "P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n",
                img->width, img->height, ch, img->maxval, tupltype);
    else
        fprintf(f, "P%d\n# made by test_imagefile\n%d %d\n%d\n", magic, img->width,
                img->height, img->maxval);
    const size_t n = (size_t)img->width * (size_t)img->height * (size_t)ch;
    for (size_t i = 0; i < n; i++) {
        const unsigned v = img->pix[i];
        if (magic == 2 || magic == 3)
            fprintf(f, "%u%c", v, (i + 1) % 9 ? ' ' : '\n');
        else if (img->maxval > 255)
            fprintf(f, "%c%c", v >> 8, v & 0xff);
        else
            fputc((int)v, f);
    }
    if (magic == 2 || magic == 3)
        fputc('\n', f);
    assert_int_equal(fclose(f), 0);
}

static void netpbm_case(int ch, int maxval, int magic, const char *tupltype)
{
    mmp_image img;
    make_image(&img, 13, 7, ch, maxval, (unsigned)(ch * 100 + maxval + magic));
    const char *p = tpath("in.pnm");
    write_netpbm(p, &img, magic, tupltype);
    /* Written back as the kind's netpbm format, as PAM, and as PNG when it
     * can hold the maxval. */
    check_file(p, &img, mmp_imagefile_kind_format(&img));
    check_file(p, &img, MMP_FILE_PAM);
    if (mmp_png_can_hold(maxval))
        check_file(p, &img, MMP_FILE_PNG);
    unlink(p);
    mmp_image_free(&img);
}

static void test_pgm_inputs(void **state)
{
    (void)state;
    netpbm_case(1, 255, 2, NULL);
    netpbm_case(1, 255, 5, NULL);
    netpbm_case(1, 65535, 2, NULL);
    netpbm_case(1, 65535, 5, NULL);
    netpbm_case(1, 1000, 5, NULL);
}

static void test_ppm_inputs(void **state)
{
    (void)state;
    netpbm_case(3, 255, 3, NULL);
    netpbm_case(3, 255, 6, NULL);
    netpbm_case(3, 65535, 3, NULL);
    netpbm_case(3, 65535, 6, NULL);
    netpbm_case(3, 4095, 6, NULL);
    /* The channels in file order: R, G, B. */
    mmp_image img;
    char err[256] = "";
    const char *p = tpath("order.ppm");
    write_file(p, "P6 2 1 255\n\x01\x02\x03\x04\x05\x06", 17);
    assert_int_equal(mmp_imagefile_read_path(p, &img, err, sizeof err), MMP_OK);
    static const uint16_t want[6] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(img.channels, 3);
    assert_memory_equal(img.pix, want, sizeof want);
    mmp_image_free(&img);
    unlink(p);
}

static void test_pam_inputs(void **state)
{
    (void)state;
    netpbm_case(1, 255, 7, "GRAYSCALE");
    netpbm_case(1, 65535, 7, "GRAYSCALE");
    netpbm_case(2, 255, 7, "GRAYSCALE_ALPHA");
    netpbm_case(2, 65535, 7, "GRAYSCALE_ALPHA");
    netpbm_case(3, 255, 7, "RGB");
    netpbm_case(3, 1023, 7, "RGB");
    netpbm_case(4, 255, 7, "RGB_ALPHA");
    netpbm_case(4, 65535, 7, "RGB_ALPHA");
    netpbm_case(1, 1, 7, "BLACKANDWHITE");
    netpbm_case(2, 1, 7, "BLACKANDWHITE_ALPHA");
}

/* What the netpbm writer writes: P5, P6, P7 and the tuple type. */
static void test_netpbm_writer_headers(void **state)
{
    (void)state;
    static const struct {
        int ch, pam;
        const char *start;
    } cases[] = {
        {1, 0, "P5\n"}, {3, 0, "P6\n"}, {2, 0, "P7\n"}, {4, 0, "P7\n"}, {1, 1, "P7\n"},
    };
    static const char *const types[4] = {"TUPLTYPE GRAYSCALE\n", "TUPLTYPE GRAYSCALE_ALPHA\n",
                                         "TUPLTYPE RGB\n", "TUPLTYPE RGB_ALPHA\n"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mmp_image img;
        make_image(&img, 3, 2, cases[i].ch, 255, (unsigned)i);
        const char *p = tpath("hdr.pnm");
        write_ok(p, &img, cases[i].pam ? MMP_FILE_PAM : mmp_imagefile_kind_format(&img));
        size_t len;
        char *b = (char *)slurp(p, &len);
        assert_non_null(b);
        assert_memory_equal(b, cases[i].start, 3);
        if (b[1] == '7')
            assert_non_null(strstr(b, types[cases[i].ch - 1]));
        free(b);
        unlink(p);
        mmp_image_free(&img);
    }
}

/* ---------------------------------------------------------------- PNG */

typedef struct raw_png_opts {
    int ctype, depth, interlace;
    const png_color *palette;
    int npalette;
    const png_byte *trans;     /* palette alpha, or NULL */
    int ntrans;
    int trans_value;           /* grey or RGB tRNS colour (all equal), -1: none */
    int sbit;                  /* sBIT in every channel, 0: none */
} raw_png_opts;

/* A PNG written with libpng itself: `samples` are the file's samples (or
 * palette indices), one per channel of the colour type, row by row. */
static void raw_png(const char *path, int w, int h, const raw_png_opts *o, const uint16_t *samples)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    const int ch = o->ctype == PNG_COLOR_TYPE_GRAY || o->ctype == PNG_COLOR_TYPE_PALETTE ? 1
                   : o->ctype == PNG_COLOR_TYPE_GRAY_ALPHA                              ? 2
                   : o->ctype == PNG_COLOR_TYPE_RGB                                     ? 3
                                                                                        : 4;
    png_bytep row = malloc((size_t)w * (size_t)ch * 2);
    assert_non_null(row);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, o->depth, o->ctype, o->interlace,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (o->palette)
        png_set_PLTE(png, info, o->palette, o->npalette);
    if (o->trans)
        png_set_tRNS(png, info, o->trans, o->ntrans, NULL);
    if (o->trans_value >= 0) {
        png_color_16 c;
        memset(&c, 0, sizeof c);
        c.gray = c.red = c.green = c.blue = (png_uint_16)o->trans_value;
        png_set_tRNS(png, info, NULL, 0, &c);
    }
    if (o->sbit) {
        png_color_8 s;
        memset(&s, 0, sizeof s);
        s.gray = s.red = s.green = s.blue = (png_byte)o->sbit;
        if (ch == 2 || ch == 4)
            s.alpha = (png_byte)o->sbit;
        png_set_sBIT(png, info, &s);
    }
    png_write_info(png, info);
    if (o->depth < 8)
        png_set_packing(png);
    const int passes = png_set_interlace_handling(png);
    const size_t n = (size_t)w * (size_t)ch;
    for (int pass = 0; pass < passes; pass++)
        for (int y = 0; y < h; y++) {
            const uint16_t *s = samples + (size_t)y * n;
            for (size_t i = 0; i < n; i++) {
                if (o->depth == 16) {
                    row[2 * i] = (png_byte)(s[i] >> 8);
                    row[2 * i + 1] = (png_byte)s[i];
                } else {
                    row[i] = (png_byte)s[i];
                }
            }
            png_write_row(png, row);
        }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    assert_int_equal(fclose(f), 0);
}

/* A PNG read with libpng itself: the file's samples (unpacked, not scaled),
 * its channels, bit depth and sBIT (0: none). */
static uint16_t *libpng_read(const char *path, int *w, int *h, int *ch, int *depth, int *sbit)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng cannot read %s", path);
    png_init_io(png, f);
    png_read_png(png, info, PNG_TRANSFORM_PACKING, NULL);
    *w = (int)png_get_image_width(png, info);
    *h = (int)png_get_image_height(png, info);
    *ch = png_get_channels(png, info);
    /* The file's depth (IHDR); the rows hold one byte a sample below 8. */
    uint8_t ihdr[25];
    rewind(f);
    assert_int_equal(fread(ihdr, 1, sizeof ihdr, f), sizeof ihdr);
    *depth = ihdr[24];
    const int row_depth = png_get_bit_depth(png, info);
    png_color_8p s;
    *sbit = png_get_sBIT(png, info, &s) ? s->gray ? s->gray : s->red : 0;
    png_bytepp rows = png_get_rows(png, info);
    const size_t n = (size_t)*w * (size_t)*ch;
    uint16_t *out = malloc((size_t)*h * n * sizeof *out);
    assert_non_null(out);
    for (int y = 0; y < *h; y++)
        for (size_t i = 0; i < n; i++)
            out[(size_t)y * n + i] = row_depth == 16
                                         ? (uint16_t)(rows[y][2 * i] << 8 | rows[y][2 * i + 1])
                                         : rows[y][i];
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return out;
}

/* A PNG of the plain types (grey, grey+alpha, RGB, RGBA at 1..16 bits),
 * written by libpng, read by us, written by us, read again. */
static void png_case(int ctype, int ch, int depth, int interlace)
{
    const int maxval = (1 << depth) - 1;
    mmp_image img;
    make_image(&img, 19, 11, ch, maxval, (unsigned)(ctype * 64 + depth + interlace * 7));
    raw_png_opts o = {.ctype = ctype, .depth = depth, .interlace = interlace, .trans_value = -1};
    const char *p = tpath("raw.png");
    raw_png(p, 19, 11, &o, img.pix);
    check_file(p, &img, MMP_FILE_PNG);
    check_file(p, &img, mmp_imagefile_kind_format(&img));
    unlink(p);
    mmp_image_free(&img);
}

static void test_png_grey(void **state)
{
    (void)state;
    const int depths[] = {1, 2, 4, 8, 16};
    for (int i = 0; i < 5; i++)
        png_case(PNG_COLOR_TYPE_GRAY, 1, depths[i], PNG_INTERLACE_NONE);
}

static void test_png_alpha_and_colour(void **state)
{
    (void)state;
    png_case(PNG_COLOR_TYPE_GRAY_ALPHA, 2, 8, PNG_INTERLACE_NONE);
    png_case(PNG_COLOR_TYPE_GRAY_ALPHA, 2, 16, PNG_INTERLACE_NONE);
    png_case(PNG_COLOR_TYPE_RGB, 3, 8, PNG_INTERLACE_NONE);
    png_case(PNG_COLOR_TYPE_RGB, 3, 16, PNG_INTERLACE_NONE);
    png_case(PNG_COLOR_TYPE_RGB_ALPHA, 4, 8, PNG_INTERLACE_NONE);
    png_case(PNG_COLOR_TYPE_RGB_ALPHA, 4, 16, PNG_INTERLACE_NONE);
}

static void test_png_interlaced(void **state)
{
    (void)state;
    png_case(PNG_COLOR_TYPE_GRAY, 1, 8, PNG_INTERLACE_ADAM7);
    png_case(PNG_COLOR_TYPE_GRAY, 1, 2, PNG_INTERLACE_ADAM7);
    png_case(PNG_COLOR_TYPE_GRAY, 1, 16, PNG_INTERLACE_ADAM7);
    png_case(PNG_COLOR_TYPE_RGB_ALPHA, 4, 8, PNG_INTERLACE_ADAM7);
    png_case(PNG_COLOR_TYPE_RGB, 3, 16, PNG_INTERLACE_ADAM7);
}

static const png_color test_palette[5] = {
    {0, 0, 0}, {255, 0, 0}, {10, 200, 30}, {1, 2, 3}, {255, 255, 255}};

/* A palette image: 8-bit RGB, or RGBA when tRNS gives alpha (entries past
 * the tRNS list are opaque). */
static void palette_case(int depth, int ntrans, int interlace)
{
    static const png_byte trans[3] = {0, 128, 7};
    const int w = 9, h = 5;
    const int npal = depth < 4 ? 1 << depth : 5;
    uint16_t idx[9 * 5];
    for (int i = 0; i < w * h; i++)
        idx[i] = (uint16_t)((i * 7 + i / w) % npal);
    raw_png_opts o = {.ctype = PNG_COLOR_TYPE_PALETTE, .depth = depth, .interlace = interlace,
                      .palette = test_palette, .npalette = npal, .trans = ntrans ? trans : NULL,
                      .ntrans = ntrans, .trans_value = -1};
    const char *p = tpath("pal.png");
    raw_png(p, w, h, &o, idx);
    const int ch = ntrans ? 4 : 3;
    mmp_image want;
    assert_int_equal(mmp_image_alloc_channels(&want, w, h, ch, 255), MMP_OK);
    for (int i = 0; i < w * h; i++) {
        const png_color c = test_palette[idx[i]];
        uint16_t *d = want.pix + (size_t)i * (size_t)ch;
        d[0] = c.red;
        d[1] = c.green;
        d[2] = c.blue;
        if (ntrans)
            d[3] = idx[i] < ntrans ? trans[idx[i]] : 255;
    }
    check_file(p, &want, MMP_FILE_PNG);
    check_file(p, &want, MMP_FILE_PAM);
    unlink(p);
    mmp_image_free(&want);
}

static void test_png_palette(void **state)
{
    (void)state;
    palette_case(8, 0, PNG_INTERLACE_NONE);
    palette_case(4, 0, PNG_INTERLACE_NONE);
    palette_case(1, 0, PNG_INTERLACE_NONE);
    palette_case(8, 3, PNG_INTERLACE_NONE);
    palette_case(2, 2, PNG_INTERLACE_ADAM7);
}

/* tRNS on grey and RGB adds alpha: maxval where the colour differs. */
static void test_png_trns_colour(void **state)
{
    (void)state;
    const int w = 6, h = 4;
    uint16_t s[6 * 4 * 3];
    for (int i = 0; i < w * h * 3; i++)
        s[i] = (uint16_t)(i % 5 * 60);
    /* RGB 8-bit, transparent colour (60, 60, 60). */
    raw_png_opts o = {.ctype = PNG_COLOR_TYPE_RGB, .depth = 8, .trans_value = 60};
    const char *p = tpath("trns.png");
    s[0] = s[1] = s[2] = 60;
    raw_png(p, w, h, &o, s);
    mmp_image want;
    assert_int_equal(mmp_image_alloc_channels(&want, w, h, 4, 255), MMP_OK);
    for (int i = 0; i < w * h; i++) {
        for (int c = 0; c < 3; c++)
            want.pix[i * 4 + c] = s[i * 3 + c];
        want.pix[i * 4 + 3] =
            s[i * 3] == 60 && s[i * 3 + 1] == 60 && s[i * 3 + 2] == 60 ? 0 : 255;
    }
    check_file(p, &want, MMP_FILE_PNG);
    mmp_image_free(&want);
    /* Grey 16-bit, transparent 120. */
    o.ctype = PNG_COLOR_TYPE_GRAY;
    o.depth = 16;
    o.trans_value = 120;
    raw_png(p, w, h, &o, s);
    assert_int_equal(mmp_image_alloc_channels(&want, w, h, 2, 65535), MMP_OK);
    for (int i = 0; i < w * h; i++) {
        want.pix[i * 2] = s[i];
        want.pix[i * 2 + 1] = s[i] == 120 ? 0 : 65535;
    }
    check_file(p, &want, MMP_FILE_PNG);
    mmp_image_free(&want);
    unlink(p);
}

/* sBIT gives maxval 2^k - 1 only when the samples are exactly their k-bit
 * values repeated; otherwise the full depth stays (nothing lost). */
static void test_png_sbit(void **state)
{
    (void)state;
    const char *p = tpath("sbit.png");
    uint16_t s[4] = {0, 0x1f << 3 | 0x1f >> 2, 0x0a << 3 | 0x0a >> 2, 0};
    raw_png_opts o = {.ctype = PNG_COLOR_TYPE_GRAY, .depth = 8, .trans_value = -1, .sbit = 5};
    raw_png(p, 4, 1, &o, s);
    mmp_image img;
    read_ok(p, &img);
    assert_int_equal(img.maxval, 31);
    assert_int_equal(img.pix[1], 31);
    assert_int_equal(img.pix[2], 10);
    mmp_image_free(&img);
    s[3] = 1; /* not a repeated 5-bit value */
    raw_png(p, 4, 1, &o, s);
    read_ok(p, &img);
    assert_int_equal(img.maxval, 255);
    assert_int_equal(img.pix[1], s[1]);
    assert_int_equal(img.pix[3], 1);
    mmp_image_free(&img);
    unlink(p);
}

/* Our writer's PNGs, read by libpng itself: the same samples, at the depth
 * the maxval needs, with sBIT when maxval is 2^k - 1 below it. */
static void writer_case(int ch, int maxval, int want_depth, int want_sbit)
{
    mmp_image img;
    make_image(&img, 10, 6, ch, maxval, (unsigned)(ch + maxval));
    const char *p = tpath("ours.png");
    write_ok(p, &img, MMP_FILE_PNG);
    int w, h, fch, depth, sbit;
    uint16_t *s = libpng_read(p, &w, &h, &fch, &depth, &sbit);
    assert_int_equal(w, 10);
    assert_int_equal(h, 6);
    assert_int_equal(fch, ch);
    assert_int_equal(depth, want_depth);
    assert_int_equal(sbit, want_sbit);
    const int k = want_sbit ? want_sbit : depth;
    for (size_t i = 0; i < (size_t)w * (size_t)h * (size_t)ch; i++)
        if ((s[i] >> (depth - k)) != img.pix[i])
            fail_msg("sample %zu: libpng reads %u, want %u", i, s[i], img.pix[i]);
    free(s);
    /* And our reader gives the image back. */
    mmp_image back;
    read_ok(p, &back);
    assert_same_image(&img, &back);
    mmp_image_free(&back);
    unlink(p);
    mmp_image_free(&img);
}

static void test_png_writer_libpng_reads(void **state)
{
    (void)state;
    writer_case(1, 255, 8, 0);
    writer_case(1, 65535, 16, 0);
    writer_case(1, 1, 1, 0);
    writer_case(1, 15, 4, 0);
    writer_case(1, 1023, 16, 10);
    writer_case(1, 127, 8, 7);
    writer_case(2, 255, 8, 0);
    writer_case(2, 65535, 16, 0);
    writer_case(3, 255, 8, 0);
    writer_case(3, 65535, 16, 0);
    writer_case(3, 31, 8, 5);
    writer_case(4, 255, 8, 0);
    writer_case(4, 4095, 16, 12);
}

/* A maxval that is not 2^k - 1 is refused before anything is written. */
static void test_png_writer_refuses(void **state)
{
    (void)state;
    mmp_image img;
    make_image(&img, 4, 4, 1, 1000, 1);
    const char *p = tpath("no.png");
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write(f, &img, MMP_FILE_PNG), MMP_EUNSUPPORTED);
    assert_int_equal(ftell(f), 0);
    fclose(f);
    unlink(p);
    f = fopen("/dev/full", "wb");
    if (f) {
        img.maxval = 1023;
        assert_int_equal(mmp_imagefile_write(f, &img, MMP_FILE_PNG), MMP_EIO);
        fclose(f);
    }
    mmp_image_free(&img);
}

/* The format is told by the bytes, not the name; stdin works. */
static void test_dispatch(void **state)
{
    (void)state;
    mmp_image img, back;
    make_image(&img, 5, 4, 3, 255, 9);
    const char *png = tpath("really-png.pgm"), *pam = tpath("really-pam.png");
    write_ok(png, &img, MMP_FILE_PNG);
    write_ok(pam, &img, MMP_FILE_PAM);
    read_ok(png, &back);
    assert_same_image(&img, &back);
    mmp_image_free(&back);
    read_ok(pam, &back);
    assert_same_image(&img, &back);
    mmp_image_free(&back);
    assert_non_null(freopen(png, "rb", stdin));
    char err[256] = "";
    assert_int_equal(mmp_imagefile_read_path("-", &back, err, sizeof err), MMP_OK);
    assert_same_image(&img, &back);
    mmp_image_free(&back);
    unlink(png);
    unlink(pam);
    mmp_image_free(&img);
}

/* The output format a name asks for, and the names that cannot hold the
 * image. */
static void test_output_format(void **state)
{
    (void)state;
    mmp_image grey, rgb, ga, rgba;
    make_image(&grey, 2, 2, 1, 255, 1);
    make_image(&rgb, 2, 2, 3, 255, 2);
    make_image(&ga, 2, 2, 2, 1000, 3);
    make_image(&rgba, 2, 2, 4, 65535, 4);
    static const struct {
        const char *name;
        int which;
        int fmt; /* 0: refused */
        const char *why;
    } cases[] = {
        {"x.pgm", 0, MMP_FILE_PGM, NULL}, {"x.ppm", 0, 0, "PPM"},
        {"x.pam", 0, MMP_FILE_PAM, NULL}, {"x.PNG", 0, MMP_FILE_PNG, NULL},
        {"-", 0, MMP_FILE_PGM, NULL},     {"x", 0, MMP_FILE_PGM, NULL},
        {"x.pgm", 1, 0, "is RGB"},        {"x.ppm", 1, MMP_FILE_PPM, NULL},
        {"x.out", 1, 0, "no writer for .out files"}, {"-", 1, MMP_FILE_PPM, NULL},
        {"x.png", 1, MMP_FILE_PNG, NULL}, {"x.pgm", 2, 0, "grey+alpha"},
        {"x.ppm", 2, 0, ".pam"},          {"-", 2, MMP_FILE_PAM, NULL},
        {"x.png", 2, 0, "maxval 1000"},   {"x.pnm", 3, 0, "PNM file holds grey or RGB"},
        {"x.png", 3, MMP_FILE_PNG, NULL}, {"x.ppm", 3, 0, "RGBA"},
        /* PNM: PGM or PPM by the kind; a name without extension (a dot in
         * a directory, a leading dot) by the kind; any other extension
         * refused, naming what is written. */
        {"x.pnm", 0, MMP_FILE_PGM, NULL}, {"x.PNM", 1, MMP_FILE_PPM, NULL},
        {"d.png/x", 1, MMP_FILE_PPM, NULL}, {".pgm", 1, MMP_FILE_PPM, NULL},
        {"x.jpg", 1, 0, "(it writes .png, .pgm, .ppm, .pnm, .pam)"},
        {"x.pgm.jpg", 0, 0, "no writer for .jpg files"}, {"x.", 0, 0, "no writer for . files"},
    };
    const mmp_image *imgs[4] = {&grey, &rgb, &ga, &rgba};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mmp_file_format fmt = 0;
        char err[256] = "";
        const int rc = mmp_imagefile_format(cases[i].name, imgs[cases[i].which], &fmt, err,
                                            sizeof err);
        if (cases[i].fmt) {
            if (rc || (int)fmt != cases[i].fmt)
                fail_msg("%s (%d): rc %d, format %d, want %d: %s", cases[i].name,
                         cases[i].which, rc, (int)fmt, cases[i].fmt, err);
        } else {
            if (rc != MMP_EUNSUPPORTED || !strstr(err, cases[i].why) || strchr(err, '\n'))
                fail_msg("%s (%d): rc %d, message '%s', want '%s'", cases[i].name,
                         cases[i].which, rc, err, cases[i].why);
        }
    }
    mmp_image_free(&grey);
    mmp_image_free(&rgb);
    mmp_image_free(&ga);
    mmp_image_free(&rgba);
}

/* ---------------------------------------------------------- bad input */

/* stderr into a file while a reader runs: the readers print nothing (nor do
 * libnetpbm, libpng, libjpeg and libtiff through them). */
static int saved_stderr = -1;
static const char *stderr_path;

static void watch_stderr(void)
{
    fflush(stderr);
    stderr_path = tpath("stderr.txt");
    saved_stderr = dup(2);
    const int fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved_stderr >= 0 && fd >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    close(fd);
}

/* Restores stderr, then fails when anything was printed. */
static void unwatch_stderr(void)
{
    fflush(stderr);
    const int ok = dup2(saved_stderr, 2) == 2;
    close(saved_stderr);
    assert_true(ok);
    size_t len;
    uint8_t *b = slurp(stderr_path, &len);
    unlink(stderr_path);
    if (len)
        fail_msg("the reader printed to stderr: %s", b);
    free(b);
}

/* The bytes must be refused with `code` and a one-line message containing
 * `want`, with nothing allocated and nothing printed. */
static void expect_bad(const void *data, size_t len, int code, const char *want)
{
    const char *p = tpath("bad.img");
    write_file(p, data, len);
    mmp_image img;
    char err[256];
    memset(err, 'x', sizeof err);
    memset(&img, 0x5a, sizeof img);
    watch_stderr();
    const int rc = mmp_imagefile_read_path(p, &img, err, sizeof err);
    unwatch_stderr();
    unlink(p);
    if (rc != code || !strstr(err, want) || strchr(err, '\n'))
        fail_msg("rc %d (want %d), message '%s' (want '%s')", rc, code, err, want);
    assert_null(img.pix);
    assert_int_equal(img.width, 0);
}

static void expect_bad_str(const char *s, int code, const char *want)
{
    expect_bad(s, strlen(s), code, want);
}

/* A valid PNG of `w` x `h` (IHDR as given) from a tiny image: the IHDR
 * rewritten with a fresh CRC; IDAT left as it is. */
static uint8_t *png_with_ihdr(size_t *len, uint32_t w, uint32_t h, int depth, int ctype)
{
    mmp_image img;
    make_image(&img, 4, 4, 1, 255, 5);
    const char *p = tpath("ihdr.png");
    write_ok(p, &img, MMP_FILE_PNG);
    mmp_image_free(&img);
    uint8_t *b = slurp(p, len);
    unlink(p);
    assert_non_null(b);
    /* Signature (8), length (4), "IHDR" (4) at 12, data at 16. */
    assert_memory_equal(b + 12, "IHDR", 4);
    uint8_t *d = b + 16;
    d[0] = (uint8_t)(w >> 24), d[1] = (uint8_t)(w >> 16), d[2] = (uint8_t)(w >> 8), d[3] = (uint8_t)w;
    d[4] = (uint8_t)(h >> 24), d[5] = (uint8_t)(h >> 16), d[6] = (uint8_t)(h >> 8), d[7] = (uint8_t)h;
    d[8] = (uint8_t)depth;
    d[9] = (uint8_t)ctype;
    const uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), b + 12, 17);
    b[29] = (uint8_t)(crc >> 24), b[30] = (uint8_t)(crc >> 16), b[31] = (uint8_t)(crc >> 8);
    b[32] = (uint8_t)crc;
    return b;
}

static void test_bad_png(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = png_with_ihdr(&len, 4, 4, 8, 0);
    {
        /* The unchanged file reads. */
        mmp_image img;
        const char *p = tpath("good.png");
        write_file(p, b, len);
        read_ok(p, &img);
        mmp_image_free(&img);
        unlink(p);
    }
    /* Truncated anywhere: in the signature, the IHDR, the IDAT, the IEND. */
    const size_t cuts[] = {1, 5, 8, 20, 33, 40, len - 20, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_bad(b, cuts[i], MMP_EFORMAT, "truncated PNG");
    /* A bad CRC in IHDR and in IDAT. */
    b[20] ^= 1;
    expect_bad(b, len, MMP_EFORMAT, "CRC");
    b[20] ^= 1;
    b[len - 20] ^= 0x40;
    expect_bad(b, len, MMP_EFORMAT, "invalid PNG");
    free(b);
    /* A damaged signature. */
    expect_bad("\x89PNG\r\n\x1a\x0b....", 12, MMP_EFORMAT, "PNG signature");
    /* Zero and huge declared sizes; a bomb: a tiny file announcing 2^28 + 1
     * pixels (each side within MMP_MAX_DIM) fails before any allocation,
     * which under ASan would abort the test. */
    static const struct {
        uint32_t w, h;
        int code;
        const char *why;
    } sizes[] = {
        {0, 4, MMP_EFORMAT, "width is zero"}, {4, 0, MMP_EFORMAT, "height is zero"},
        {65537, 1, MMP_ELIMIT, "too large"},  {1, 100000, MMP_ELIMIT, "too large"},
        {0x7fffffffu, 1, MMP_ELIMIT, "too large"}, {16385, 16385, MMP_ELIMIT, "too large"},
        {65536, 65536, MMP_ELIMIT, "too large"},   {0x80000000u, 1, MMP_EFORMAT, "invalid PNG"},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        b = png_with_ihdr(&len, sizes[i].w, sizes[i].h, 8, 0);
        expect_bad(b, len, sizes[i].code, sizes[i].why);
        free(b);
    }
    /* Bit depths and colour types PNG does not have. */
    const int bad[][2] = {{3, 0}, {0, 0}, {32, 0}, {4, 2}, {8, 1}, {8, 5}, {16, 3}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        b = png_with_ihdr(&len, 4, 4, bad[i][0], bad[i][1]);
        expect_bad(b, len, MMP_EFORMAT, "invalid PNG");
        free(b);
    }
    /* A legal size whose data is missing: the image is allocated, then
     * freed (ASan's leak check watches). */
    b = png_with_ihdr(&len, 300, 200, 16, 6);
    expect_bad(b, len, MMP_EFORMAT, "PNG");
    free(b);
}

static void test_bad_netpbm(void **state)
{
    (void)state;
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE CMYK\nENDHDR\na",
                   MMP_EUNSUPPORTED, "PAM tuple type 'CMYK' is not supported");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nENDHDR\na", MMP_EUNSUPPORTED,
                   "tuple type");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\nabcd",
                   MMP_EFORMAT, "depth 4 does not match tuple type RGB");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 2\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\nab",
                   MMP_EFORMAT, "RGB");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE BLACKANDWHITE\nENDHDR\na",
                   MMP_EFORMAT, "BLACKANDWHITE");
    expect_bad_str("P7\nWIDTH 2\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\nabcdef",
                   MMP_EFORMAT, "truncated PAM data");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 3\nTUPLTYPE GRAYSCALE\nENDHDR\n\x09",
                   MMP_EFORMAT, "exceeds the image maxval");
    /* PPM with too few samples, raw and plain; a sample above maxval. */
    expect_bad_str("P6 2 2 255\nabcdefghi", MMP_EFORMAT, "truncated PPM data");
    expect_bad_str("P6 2 1 65535\nabcdefghijk", MMP_EFORMAT, "truncated PPM data");
    expect_bad_str("P3 2 1 255\n1 2 3 4 5\n", MMP_EFORMAT, "truncated PPM data");
    expect_bad_str("P3 1 1 7\n1 8 3\n", MMP_EFORMAT, "sample value 8 exceeds");
    expect_bad_str("P6 100000 100000 255\n", MMP_ELIMIT, "too large");
    /* PAM headers are parsed here (libnetpbm's parser overran its buffer on
     * fuzzed headers: docs/fuzzing.md). */
    char line[400];
    memset(line, 'W', sizeof line);
    memcpy(line, "P7\nWIDTH ", 9);
    line[sizeof line - 1] = '\0';
    expect_bad_str(line, MMP_EFORMAT, "a line longer than 255 bytes");
    expect_bad("P7\nWIDTH 1\0\nHEIGHT 1\n", 20, MMP_EFORMAT, "NUL byte");
    expect_bad_str("P7\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\na",
                   MMP_EFORMAT, "no WIDTH line");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\nCOLOURS 1\nENDHDR\n", MMP_EFORMAT,
                   "unknown line 'COLOURS'");
    expect_bad_str("P7\nWIDTH 1x\nHEIGHT 1\n", MMP_EFORMAT, "WIDTH '1x' is not a number");
    expect_bad_str("P7\nWIDTH 99999999999\n", MMP_EFORMAT, "not a number");
    expect_bad_str("P7 WIDTH 1\n", MMP_EFORMAT, "magic P7 must end its line");
    expect_bad_str("P7\nWIDTH 1\nHEIGHT 1\n", MMP_EFORMAT, "truncated netpbm header");
    expect_bad_str("P5 1 1 255\n", MMP_EFORMAT, "truncated PGM data");
}

/* Header details: comments anywhere (right after maxval too), blank and
 * comment lines in PAM, TUPLTYPE on two lines. */
static void test_netpbm_headers(void **state)
{
    (void)state;
    mmp_image img;
    char err[256] = "";
    const char *p = tpath("hdr.pnm");
    write_file(p, "P5 2 1 255#c\nab", 15);
    assert_int_equal(mmp_imagefile_read_path(p, &img, err, sizeof err), MMP_OK);
    assert_int_equal(img.pix[0], 'a');
    assert_int_equal(img.pix[1], 'b');
    mmp_image_free(&img);
    static const char pam[] = "P7\n# comment\n\nWIDTH 2\n  HEIGHT\t1  \nDEPTH 2\nMAXVAL 255\n"
                              "TUPLTYPE GRAYSCALE\nENDHDR\nabcd";
    write_file(p, pam, sizeof pam - 1);
    assert_int_equal(mmp_imagefile_read_path(p, &img, err, sizeof err), MMP_EFORMAT);
    assert_non_null(strstr(err, "depth 2 does not match tuple type GRAYSCALE"));
    static const char pam2[] = "P7\nWIDTH 2\nHEIGHT 1\nDEPTH 2\nMAXVAL 255\nTUPLTYPE GRAYSCALE\n"
                               "TUPLTYPE _ALPHA\nENDHDR\nabcd";
    write_file(p, pam2, sizeof pam2 - 1);
    assert_int_equal(mmp_imagefile_read_path(p, &img, err, sizeof err), MMP_EUNSUPPORTED);
    assert_non_null(strstr(err, "'GRAYSCALE _ALPHA'"));
    static const char pam3[] = "P7\n# c\n\nWIDTH 2\n  HEIGHT\t1  \r\nDEPTH 2\nMAXVAL 255\n"
                               "TUPLTYPE GRAYSCALE_ALPHA\nENDHDR\nabcd";
    write_file(p, pam3, sizeof pam3 - 1);
    assert_int_equal(mmp_imagefile_read_path(p, &img, err, sizeof err), MMP_OK);
    static const uint16_t want[4] = {'a', 'b', 'c', 'd'};
    assert_int_equal(img.channels, 2);
    assert_memory_equal(img.pix, want, sizeof want);
    mmp_image_free(&img);
    unlink(p);
}

/* --------------------------------------------------------------- JPEG */

typedef struct jpeg_opts {
    J_COLOR_SPACE in_space; /* JCS_GRAYSCALE, JCS_RGB or JCS_CMYK */
    J_COLOR_SPACE file_space; /* JCS_UNKNOWN: libjpeg's default for in_space */
    int quality;
    int h_samp, v_samp;     /* the first component's sampling (2, 2: 4:2:0) */
    int progressive;
    int restart_rows;       /* restart markers every this many MCU rows, 0: none */
    int arith;
    const jpeg_scan_info *scans; /* a progressive scan script, NULL: none */
    int nscans;
} jpeg_opts;

/* A JPEG of w x h written by libjpeg into memory (free()), from the samples
 * of make_image (ch of them a pixel, maxval 255). */
static unsigned char *make_jpeg(const mmp_image *img, const jpeg_opts *o, size_t *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long out_len = 0;
    jpeg_mem_dest(&c, &out, &out_len);
    const int ch = mmp_image_channels(img);
    c.image_width = (JDIMENSION)img->width;
    c.image_height = (JDIMENSION)img->height;
    c.input_components = ch;
    c.in_color_space = o->in_space;
    jpeg_set_defaults(&c);
    if (o->file_space != JCS_UNKNOWN)
        jpeg_set_colorspace(&c, o->file_space);
    jpeg_set_quality(&c, o->quality, TRUE);
    if (o->h_samp) {
        c.comp_info[0].h_samp_factor = o->h_samp;
        c.comp_info[0].v_samp_factor = o->v_samp;
    }
    if (o->progressive)
        jpeg_simple_progression(&c);
    if (o->scans) {
        c.scan_info = o->scans;
        c.num_scans = o->nscans;
    }
    c.restart_in_rows = o->restart_rows;
    c.arith_code = o->arith ? TRUE : FALSE;
    jpeg_start_compress(&c, TRUE);
    const size_t n = (size_t)img->width * (size_t)ch;
    JSAMPLE *row = malloc(n);
    assert_non_null(row);
    while (c.next_scanline < c.image_height) {
        for (size_t i = 0; i < n; i++)
            row[i] = (JSAMPLE)img->pix[(size_t)c.next_scanline * n + i];
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&c, rows, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    *len = out_len;
    return out;
}

/* libjpeg's own decode of a JPEG with its defaults, as an image. */
static void libjpeg_decode(const unsigned char *data, size_t len, mmp_image *img)
{
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, data, (unsigned long)len);
    assert_int_equal(jpeg_read_header(&c, TRUE), JPEG_HEADER_OK);
    jpeg_start_decompress(&c);
    const int ch = c.output_components;
    assert_int_equal(mmp_image_alloc_channels(img, (int)c.output_width, (int)c.output_height, ch,
                                              255),
                     MMP_OK);
    const size_t n = (size_t)c.output_width * (size_t)ch;
    JSAMPLE *row = malloc(n);
    assert_non_null(row);
    while (c.output_scanline < c.output_height) {
        const size_t y = c.output_scanline;
        JSAMPROW rows[1] = {row};
        assert_int_equal(jpeg_read_scanlines(&c, rows, 1), 1);
        for (size_t i = 0; i < n; i++)
            img->pix[y * n + i] = row[i];
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    free(row);
}

/* A smooth image (JPEG's kind) of w x h, ch channels at maxval 255. */
static void smooth_image(mmp_image *img, int w, int h, int ch)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, ch, 255), MMP_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++)
                img->pix[((size_t)y * (size_t)w + (size_t)x) * (size_t)ch + (size_t)c] =
                    (uint16_t)((x * 7 + y * 3 + c * 60 + ((x ^ y) & 8) * 4) % 256);
}

/* The JPEG read by us equals libjpeg's own decode of it, sample for
 * sample, and is close to what was coded (quality 100). */
static void jpeg_case(int w, int h, int ch, const jpeg_opts *o)
{
    mmp_image src, want, got;
    smooth_image(&src, w, h, ch);
    size_t len;
    unsigned char *data = make_jpeg(&src, o, &len);
    const char *p = tpath("in.jpg");
    write_file(p, data, len);
    libjpeg_decode(data, len, &want);
    read_ok(p, &got);
    assert_int_equal(got.channels, ch);
    assert_int_equal(got.maxval, 255);
    assert_same_image(&want, &got);
    if (o->quality == 100 && o->h_samp != 2 && mmp_psnr(&src, &got) < 40)
        fail_msg("PSNR %.2f dB against the coded image", mmp_psnr(&src, &got));
    mmp_image_free(&got);
    /* Standard input too. */
    assert_non_null(freopen(p, "rb", stdin));
    char err[256] = "";
    assert_int_equal(mmp_imagefile_read_path("-", &got, err, sizeof err), MMP_OK);
    assert_same_image(&want, &got);
    mmp_image_free(&got);
    mmp_image_free(&want);
    mmp_image_free(&src);
    free(data);
    unlink(p);
}

static void test_jpeg_inputs(void **state)
{
    (void)state;
    const jpeg_opts grey = {.in_space = JCS_GRAYSCALE, .quality = 100};
    const jpeg_opts rgb444 = {.in_space = JCS_RGB, .quality = 100, .h_samp = 1, .v_samp = 1};
    const jpeg_opts rgb420 = {.in_space = JCS_RGB, .quality = 100, .h_samp = 2, .v_samp = 2};
    jpeg_case(32, 24, 1, &grey);
    jpeg_case(37, 23, 1, &grey);
    jpeg_case(32, 24, 3, &rgb444);
    jpeg_case(37, 23, 3, &rgb420);
    /* RGB coded as RGB (no YCbCr: an Adobe marker says so). */
    jpeg_opts o = rgb444;
    o.file_space = JCS_RGB;
    jpeg_case(21, 18, 3, &o);
    /* Progressive, restart markers, arithmetic coding, lower quality. */
    o = rgb420;
    o.progressive = 1;
    jpeg_case(45, 31, 3, &o);
    o = grey;
    o.progressive = 1;
    jpeg_case(45, 31, 1, &o);
    o = rgb420;
    o.restart_rows = 1;
    jpeg_case(45, 40, 3, &o);
    o = rgb444;
    o.arith = 1;
    o.quality = 75;
    jpeg_case(33, 17, 3, &o);
}

/* The offset of the first SOFn marker's segment in a JPEG. */
static size_t jpeg_sof(const unsigned char *b, size_t len)
{
    for (size_t i = 2; i + 9 < len; i++)
        if (b[i] == 0xFF && (b[i + 1] == 0xC0 || b[i + 1] == 0xC1 || b[i + 1] == 0xC2))
            return i;
    fail_msg("no SOF marker");
    return 0;
}

static void test_jpeg_refused(void **state)
{
    (void)state;
    /* CMYK, and YCCK, which is CMYK too. */
    mmp_image src;
    smooth_image(&src, 16, 16, 4);
    size_t len;
    const jpeg_opts cmyk = {.in_space = JCS_CMYK, .quality = 90};
    unsigned char *b = make_jpeg(&src, &cmyk, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "CMYK JPEG is not supported");
    free(b);
    jpeg_opts ycck = cmyk;
    ycck.file_space = JCS_YCCK;
    b = make_jpeg(&src, &ycck, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "CMYK JPEG is not supported");
    free(b);
    mmp_image_free(&src);

    smooth_image(&src, 16, 16, 3);
    const jpeg_opts rgb = {.in_space = JCS_RGB, .quality = 90};
    b = make_jpeg(&src, &rgb, &len);
    mmp_image_free(&src);
    const size_t sof = jpeg_sof(b, len);
    /* 12 bits a sample: this libjpeg decodes 8 only. */
    b[sof + 4] = 12;
    expect_bad(b, len, MMP_EUNSUPPORTED, "12-bit JPEG is not supported");
    b[sof + 4] = 8;
    /* Lossless (SOF3) and hierarchical (SOF5) processes. */
    b[sof + 1] = 0xC3;
    expect_bad(b, len, MMP_EUNSUPPORTED, "not supported");
    b[sof + 1] = 0xC5;
    expect_bad(b, len, MMP_EUNSUPPORTED, "not supported");
    b[sof + 1] = 0xC0;
    /* Sizes: refused on the header, before any allocation (under ASan a
     * 25 GB allocation would fail the test), or allocated and freed when
     * the data runs out. */
    static const struct {
        unsigned w, h;
        int code;
        const char *why;
    } sizes[] = {
        {65500, 65500, MMP_ELIMIT, "too large"},
        {65535, 65535, MMP_ELIMIT, "too large"}, /* libjpeg's own limit: 65500 */
        {20000, 20000, MMP_ELIMIT, "too large"},
        {65500, 1, MMP_EFORMAT, "invalid JPEG file"},
        {300, 200, MMP_EFORMAT, "invalid JPEG file"},
        {0, 16, MMP_EFORMAT, "invalid JPEG file"},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        b[sof + 5] = (unsigned char)(sizes[i].h >> 8), b[sof + 6] = (unsigned char)sizes[i].h;
        b[sof + 7] = (unsigned char)(sizes[i].w >> 8), b[sof + 8] = (unsigned char)sizes[i].w;
        expect_bad(b, len, sizes[i].code, sizes[i].why);
    }
    b[sof + 5] = 0, b[sof + 6] = 16, b[sof + 7] = 0, b[sof + 8] = 16;
    /* Truncated anywhere: in the SOI, the headers, the scan, before EOI. */
    const size_t cuts[] = {1, 2, 3, 20, sof + 6, len / 2, len - 40, len - 2, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        if (cuts[i] == 1) {
            expect_bad(b, 1, MMP_EFORMAT, "not an image file (magic 0xFF;");
            continue;
        }
        expect_bad(b, cuts[i], MMP_EFORMAT, "JPEG file");
    }
    /* Truncated progressive files: between scans too. */
    smooth_image(&src, 40, 40, 3);
    jpeg_opts prog = rgb;
    prog.progressive = 1;
    unsigned char *pb = make_jpeg(&src, &prog, &len);
    mmp_image_free(&src);
    for (size_t cut = len / 8; cut < len; cut += len / 8)
        expect_bad(pb, cut, MMP_EFORMAT, "JPEG file");
    /* A valid file of too many scans: each AC coefficient of each
     * component sent alone, in 11 successive approximation steps. */
    {
        jpeg_scan_info *scans = calloc(11 * (1 + 63 * 3), sizeof *scans);
        assert_non_null(scans);
        int n = 0;
        for (int al = 10; al >= 0; al--, n++) {
            scans[n].comps_in_scan = 3;
            for (int k = 0; k < 3; k++)
                scans[n].component_index[k] = k;
            scans[n].Ah = al == 10 ? 0 : al + 1;
            scans[n].Al = al;
        }
        for (int k = 0; k < 3; k++)
            for (int coef = 1; coef < 64; coef++)
                for (int al = 10; al >= 0; al--, n++) {
                    scans[n].comps_in_scan = 1;
                    scans[n].component_index[0] = k;
                    scans[n].Ss = scans[n].Se = coef;
                    scans[n].Ah = al == 10 ? 0 : al + 1;
                    scans[n].Al = al;
                }
        mmp_image small;
        smooth_image(&small, 8, 8, 3);
        jpeg_opts many = rgb;
        many.scans = scans;
        many.nscans = n;
        size_t mlen;
        unsigned char *mb = make_jpeg(&small, &many, &mlen);
        expect_bad(mb, mlen, MMP_EFORMAT, "more than 1000 scans");
        free(mb);
        free(scans);
        mmp_image_free(&small);
    }
    /* A marker in the entropy-coded data: corrupt, refused. */
    const size_t mid = len - len / 3;
    pb[mid] = 0xFF;
    pb[mid + 1] = 0xD0 + 5;
    expect_bad(pb, len, MMP_EFORMAT, "invalid JPEG file");
    free(pb);
    /* Not a JPEG after its SOI. */
    expect_bad("\xFF\xD8\xFF\xD9", 4, MMP_EFORMAT, "invalid JPEG file");
    expect_bad("\xFF\xD8garbage", 9, MMP_EFORMAT, "truncated JPEG file");
    expect_bad("\xFF\xD9", 2, MMP_EFORMAT, "not an image file (magic 0xFFD9;");
    free(b);
}

/* --------------------------------------------------------------- TIFF */

typedef struct tiff_opts {
    int bps, spp, photometric;
    int planar;                 /* PLANARCONFIG_CONTIG or _SEPARATE */
    int tile;                   /* tile side (a multiple of 16), 0: strips */
    int rps;                    /* rows per strip */
    int compression;
    int extra;                  /* the extra sample's type, -1: no ExtraSamples tag */
    int big_endian;
    int sample_format;          /* 0: not written */
    const uint16_t *cmap;       /* palette: 3 x 2^bps entries */
    int pages;                  /* 0 or 1: one; 2: a second page after */
} tiff_opts;

/* Row n samples of `bps` bits, packed as TIFF stores them (host order for
 * 16 bits, which libtiff swaps as the file needs). */
static size_t pack(unsigned char *dst, const uint16_t *s, size_t n, int bps)
{
    if (bps == 16) {
        memcpy(dst, s, n * 2);
        return n * 2;
    }
    if (bps == 8) {
        for (size_t i = 0; i < n; i++)
            dst[i] = (unsigned char)s[i];
        return n;
    }
    /* Any other depth: bit by bit, the first sample's top bit first. */
    const size_t bytes = (n * (size_t)bps + 7) / 8;
    memset(dst, 0, bytes);
    size_t pos = 0;
    for (size_t i = 0; i < n; i++)
        for (int b = bps - 1; b >= 0; b--, pos++)
            if (b < 16 && (s[i] >> b) & 1)
                dst[pos / 8] |= (unsigned char)(0x80 >> (pos % 8));
    return bytes;
}

/* A TIFF of the w x h samples `s` (o->spp a pixel, interleaved) written
 * by libtiff. */
static void make_tiff(const char *path, int w, int h, const tiff_opts *o, const uint16_t *s)
{
    TIFF *tif = TIFFOpen(path, o->big_endian ? "wb" : "wl");
    assert_non_null(tif);
    const int spp = o->spp;
    for (int page = 0; page < (o->pages > 1 ? 2 : 1); page++) {
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)w);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)h);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)o->bps);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)spp);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, (uint16_t)o->photometric);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, (uint16_t)o->planar);
        TIFFSetField(tif, TIFFTAG_COMPRESSION, (uint16_t)o->compression);
        if (o->sample_format)
            TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, (uint16_t)o->sample_format);
        if (o->extra >= 0 && spp > (o->photometric == PHOTOMETRIC_RGB ? 3 : 1)) {
            uint16_t types[1] = {(uint16_t)o->extra};
            TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, types);
        }
        if (o->cmap) {
            const size_t n = (size_t)1 << o->bps;
            TIFFSetField(tif, TIFFTAG_COLORMAP, o->cmap, o->cmap + n, o->cmap + 2 * n);
        }
        if (o->compression == COMPRESSION_JPEG) {
            TIFFSetField(tif, TIFFTAG_JPEGQUALITY, 95);
            TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        }
        const int sep = o->planar == PLANARCONFIG_SEPARATE;
        const int per = sep ? 1 : spp;
        unsigned char *buf =
            calloc((size_t)(o->tile ? o->tile * o->tile : w) * (size_t)per * 4 + 16, 1);
        uint16_t *tmp = calloc((size_t)(o->tile ? o->tile * o->tile : w) * (size_t)per, 2);
        assert_true(buf && tmp);
        for (int plane = 0; plane < (sep ? spp : 1); plane++) {
            if (o->tile) {
                if (plane == 0) {
                    assert_int_equal(TIFFSetField(tif, TIFFTAG_TILEWIDTH, (uint32_t)o->tile), 1);
                    assert_int_equal(TIFFSetField(tif, TIFFTAG_TILELENGTH, (uint32_t)o->tile), 1);
                }
                for (int y0 = 0; y0 < h; y0 += o->tile)
                    for (int x0 = 0; x0 < w; x0 += o->tile) {
                        size_t off = 0;
                        for (int y = y0; y < y0 + o->tile; y++) {
                            for (int x = x0; x < x0 + o->tile; x++)
                                for (int k = 0; k < per; k++)
                                    tmp[(size_t)(x - x0) * (size_t)per + (size_t)k] =
                                        y < h && x < w
                                            ? s[((size_t)y * (size_t)w + (size_t)x) * (size_t)spp +
                                                (size_t)(sep ? plane : k)]
                                            : 0;
                            off += pack(buf + off, tmp, (size_t)o->tile * (size_t)per, o->bps);
                        }
                        assert_true(TIFFWriteTile(tif, buf, (uint32_t)x0, (uint32_t)y0, 0,
                                                  (uint16_t)plane) >= 0);
                    }
            } else {
                if (plane == 0)
                    assert_int_equal(
                        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)(o->rps ? o->rps : h)), 1);
                for (int y = 0; y < h; y++) {
                    for (int x = 0; x < w; x++)
                        for (int k = 0; k < per; k++)
                            tmp[(size_t)x * (size_t)per + (size_t)k] =
                                s[((size_t)y * (size_t)w + (size_t)x) * (size_t)spp +
                                  (size_t)(sep ? plane : k)];
                    pack(buf, tmp, (size_t)w * (size_t)per, o->bps);
                    assert_int_equal(TIFFWriteScanline(tif, buf, (uint32_t)y, (uint16_t)plane), 1);
                }
            }
        }
        free(buf);
        free(tmp);
        assert_int_equal(TIFFWriteDirectory(tif), 1);
    }
    TIFFClose(tif);
}

/* The TIFF of `o` from samples of make_image (spp channels at 2^bps - 1)
 * reads as `want`. */
static void tiff_check(const tiff_opts *o, int w, int h, const mmp_image *samples,
                       const mmp_image *want)
{
    const char *p = tpath("in.tif");
    make_tiff(p, w, h, o, samples->pix);
    mmp_image got;
    read_ok(p, &got);
    assert_same_image(want, &got);
    mmp_image_free(&got);
    unlink(p);
}

/* A TIFF whose samples are the image's (grey, RGB, with alpha). */
static void tiff_plain(const tiff_opts *o, int w, int h)
{
    mmp_image img;
    make_image(&img, w, h, o->spp, (1 << o->bps) - 1,
               (unsigned)(o->bps * 31 + o->spp * 7 + o->tile + o->planar * 3 + o->compression));
    tiff_check(o, w, h, &img, &img);
    mmp_image_free(&img);
}

static void test_tiff_inputs(void **state)
{
    (void)state;
    const tiff_opts grey8 = {.bps = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
                             .planar = PLANARCONFIG_CONTIG, .rps = 3,
                             .compression = COMPRESSION_NONE, .extra = -1};
    tiff_opts o = grey8;
    tiff_plain(&o, 19, 11);                  /* 8-bit grey, strips of 3 rows */
    o.big_endian = 1;
    tiff_plain(&o, 19, 11);
    o = grey8;
    o.bps = 16;
    o.big_endian = 1;
    tiff_plain(&o, 19, 11);                  /* 16-bit grey, big-endian */
    for (int bps = 1; bps <= 4; bps *= 2) {  /* 1, 2, 4 bits */
        o = grey8;
        o.bps = bps;
        tiff_plain(&o, 19, 11);
    }
    const tiff_opts rgb16 = {.bps = 16, .spp = 3, .photometric = PHOTOMETRIC_RGB,
                             .planar = PLANARCONFIG_CONTIG, .tile = 16,
                             .compression = COMPRESSION_NONE, .extra = -1};
    tiff_plain(&rgb16, 37, 23);              /* 16-bit RGB, tiles */
    o = rgb16;
    o.tile = 0;
    o.rps = 5;
    tiff_plain(&o, 37, 23);                  /* 16-bit RGB, strips */
    o.big_endian = 1;
    o.compression = COMPRESSION_ADOBE_DEFLATE;
    tiff_plain(&o, 37, 23);
    o = rgb16;
    o.bps = 8;
    o.compression = COMPRESSION_LZW;
    tiff_plain(&o, 37, 23);                  /* 8-bit RGB, tiles, LZW */
    o.planar = PLANARCONFIG_SEPARATE;
    tiff_plain(&o, 37, 23);                  /* separate planes, tiles */
    o.tile = 0;
    o.rps = 4;
    tiff_plain(&o, 37, 23);                  /* separate planes, strips */
    o = rgb16;
    o.bps = 8;
    o.spp = 4;
    o.extra = EXTRASAMPLE_UNASSALPHA;
    tiff_plain(&o, 37, 23);                  /* RGBA, tiles */
    o.tile = 0;
    o.rps = 7;
    o.compression = COMPRESSION_PACKBITS;
    tiff_plain(&o, 37, 23);                  /* RGBA, strips */
    o.planar = PLANARCONFIG_SEPARATE;
    o.bps = 16;
    tiff_plain(&o, 37, 23);                  /* RGBA, 16 bits, separate planes */
    o = grey8;
    o.spp = 2;
    o.extra = EXTRASAMPLE_UNASSALPHA;
    tiff_plain(&o, 19, 11);                  /* grey and alpha */
    o.bps = 16;
    o.extra = EXTRASAMPLE_UNSPECIFIED;
    tiff_plain(&o, 19, 11);                  /* an unspecified extra sample: alpha */
    o = grey8;
    o.pages = 2;
    tiff_plain(&o, 19, 11);                  /* two pages: the first */

    /* Min-is-white, 8 and 1 bits: inverted. */
    for (int bps = 1; bps <= 8; bps += 7) {
        mmp_image file, want;
        const int maxval = (1 << bps) - 1;
        make_image(&file, 19, 11, 1, maxval, (unsigned)bps);
        make_image(&want, 19, 11, 1, maxval, (unsigned)bps);
        for (size_t i = 0; i < 19 * 11; i++)
            want.pix[i] = (uint16_t)(maxval - file.pix[i]);
        o = grey8;
        o.bps = bps;
        o.photometric = PHOTOMETRIC_MINISWHITE;
        tiff_check(&o, 19, 11, &file, &want);
        mmp_image_free(&file);
        mmp_image_free(&want);
    }

    /* Palettes: 4 bits of 16-bit entries; 8 bits of entries v * 257 (RGB
     * of 8 bits). */
    for (int bps = 4; bps <= 8; bps += 4) {
        const size_t n = (size_t)1 << bps;
        uint16_t *cmap = malloc(3 * n * sizeof *cmap);
        assert_non_null(cmap);
        for (size_t i = 0; i < 3 * n; i++)
            cmap[i] = bps == 8 ? (uint16_t)(((i * 37) % 256) * 257) : (uint16_t)(i * 4099 + 7);
        mmp_image idx, want;
        make_image(&idx, 19, 11, 1, (int)n - 1, (unsigned)bps);
        assert_int_equal(mmp_image_alloc_channels(&want, 19, 11, 3, bps == 8 ? 255 : 65535),
                         MMP_OK);
        for (size_t i = 0; i < 19 * 11; i++)
            for (size_t c = 0; c < 3; c++)
                want.pix[3 * i + c] = bps == 8 ? (uint16_t)(cmap[c * n + idx.pix[i]] >> 8)
                                               : cmap[c * n + idx.pix[i]];
        o = grey8;
        o.bps = bps;
        o.photometric = PHOTOMETRIC_PALETTE;
        o.cmap = cmap;
        tiff_check(&o, 19, 11, &idx, &want);
        mmp_image_free(&idx);
        mmp_image_free(&want);
        free(cmap);
    }

    /* Associated alpha is divided out. */
    {
        mmp_image file, want;
        make_image(&file, 19, 11, 4, 255, 77);
        make_image(&want, 19, 11, 4, 255, 77);
        for (size_t i = 0; i < 19 * 11; i++) {
            const unsigned a = file.pix[4 * i + 3];
            for (int c = 0; c < 3; c++) {
                file.pix[4 * i + c] = (uint16_t)(file.pix[4 * i + c] * a / 255);
                const unsigned v = a ? (file.pix[4 * i + c] * 255u + a / 2) / a : 0;
                want.pix[4 * i + c] = (uint16_t)(v > 255 ? 255 : v);
            }
        }
        o = rgb16;
        o.bps = 8;
        o.spp = 4;
        o.extra = EXTRASAMPLE_ASSOCALPHA;
        tiff_check(&o, 19, 11, &file, &want);
        mmp_image_free(&file);
        mmp_image_free(&want);
    }

    /* JPEG-compressed YCbCr: RGB out, as libtiff's own RGBA reader gives it. */
    {
        mmp_image src, got, want;
        smooth_image(&src, 48, 32, 3);
        o = rgb16;
        o.bps = 8;
        o.tile = 0;
        o.rps = 16;
        o.photometric = PHOTOMETRIC_YCBCR;
        o.compression = COMPRESSION_JPEG;
        const char *p = tpath("jpeg.tif");
        make_tiff(p, 48, 32, &o, src.pix);
        read_ok(p, &got);
        TIFF *tif = TIFFOpen(p, "r");
        assert_non_null(tif);
        uint32_t *rgba = malloc(48 * 32 * sizeof *rgba);
        assert_non_null(rgba);
        assert_int_equal(TIFFReadRGBAImageOriented(tif, 48, 32, rgba, ORIENTATION_TOPLEFT, 0), 1);
        TIFFClose(tif);
        assert_int_equal(mmp_image_alloc_channels(&want, 48, 32, 3, 255), MMP_OK);
        for (size_t i = 0; i < 48 * 32; i++) {
            want.pix[3 * i] = (uint16_t)TIFFGetR(rgba[i]);
            want.pix[3 * i + 1] = (uint16_t)TIFFGetG(rgba[i]);
            want.pix[3 * i + 2] = (uint16_t)TIFFGetB(rgba[i]);
        }
        assert_same_image(&want, &got);
        free(rgba);
        mmp_image_free(&want);
        mmp_image_free(&got);
        mmp_image_free(&src);
        unlink(p);
    }
}

/* The value of `tag` in the first directory of the little-endian classic
 * TIFF b, set to the LONG v. */
static void tiff_patch(uint8_t *b, size_t len, uint16_t tag, uint32_t v)
{
    assert_memory_equal(b, "II*\0", 4);
    const uint32_t ifd = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
                         (uint32_t)b[7] << 24;
    assert_true(ifd + 2 <= len);
    const unsigned n = (unsigned)b[ifd] | (unsigned)b[ifd + 1] << 8;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *e = b + ifd + 2 + 12 * i;
        if (((unsigned)e[0] | (unsigned)e[1] << 8) == tag) {
            e[2] = 4, e[3] = 0;                  /* LONG */
            e[4] = 1, e[5] = e[6] = e[7] = 0;    /* one */
            e[8] = (uint8_t)v, e[9] = (uint8_t)(v >> 8), e[10] = (uint8_t)(v >> 16);
            e[11] = (uint8_t)(v >> 24);
            return;
        }
    }
    fail_msg("no tag %u", tag);
}

static uint8_t *tiff_bytes(const tiff_opts *o, int w, int h, size_t *len)
{
    mmp_image img;
    make_image(&img, w, h, o->spp, (1 << (o->bps < 16 ? o->bps : 16)) - 1, 3);
    const char *p = tpath("bytes.tif");
    make_tiff(p, w, h, o, img.pix);
    mmp_image_free(&img);
    uint8_t *b = slurp(p, len);
    unlink(p);
    assert_non_null(b);
    return b;
}

static void test_tiff_refused(void **state)
{
    (void)state;
    const tiff_opts grey8 = {.bps = 8, .spp = 1, .photometric = PHOTOMETRIC_MINISBLACK,
                             .planar = PLANARCONFIG_CONTIG, .rps = 4,
                             .compression = COMPRESSION_NONE, .extra = -1};
    size_t len;
    tiff_opts o = grey8;
    o.spp = 4;
    o.photometric = PHOTOMETRIC_SEPARATED;
    uint8_t *b = tiff_bytes(&o, 8, 8, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "CMYK TIFF is not supported");
    free(b);
    o = grey8;
    o.bps = 32;
    o.sample_format = SAMPLEFORMAT_IEEEFP;
    b = tiff_bytes(&o, 8, 8, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "floating point");
    free(b);
    o = grey8;
    o.bps = 16;
    o.sample_format = SAMPLEFORMAT_INT;
    b = tiff_bytes(&o, 8, 8, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "signed integers");
    free(b);
    o = grey8;
    o.bps = 12;
    b = tiff_bytes(&o, 8, 8, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "12 bits per sample");
    free(b);
    o = grey8;
    o.photometric = PHOTOMETRIC_CIELAB;
    o.spp = 3;
    b = tiff_bytes(&o, 8, 8, &len);
    expect_bad(b, len, MMP_EUNSUPPORTED, "photometric interpretation 8");
    free(b);

    /* Sizes on the header: refused before any allocation. */
    o = grey8;
    b = tiff_bytes(&o, 40, 24, &len);
    static const struct {
        uint32_t w, h;
        int code;
        const char *why;
    } sizes[] = {
        {70000, 70000, MMP_ELIMIT, "too large"},   {70000, 1, MMP_ELIMIT, "too large"},
        {20000, 20000, MMP_ELIMIT, "too large"},   {0xffffffffu, 1, MMP_ELIMIT, "too large"},
        {400, 300, MMP_EFORMAT, "TIFF"},
    };
    uint8_t *c = malloc(len);
    assert_non_null(c);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memcpy(c, b, len);
        tiff_patch(c, len, TIFFTAG_IMAGEWIDTH, sizes[i].w);
        tiff_patch(c, len, TIFFTAG_IMAGELENGTH, sizes[i].h);
        expect_bad(c, len, sizes[i].code, sizes[i].why);
    }
    /* Truncated anywhere: the header, the data, the directory. */
    const size_t cuts[] = {2, 3, 4, 7, 8, 20, len / 2, len - 100, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_bad(b, cuts[i], MMP_EFORMAT, "TIFF");
    /* Damaged: the directory's offset beyond the end; its entries beyond
     * the end; garbage after the header. */
    memcpy(c, b, len);
    c[4] = 0xff, c[5] = 0xff, c[6] = 0xff, c[7] = 0x0f;
    expect_bad(c, len, MMP_EFORMAT, "truncated TIFF file: its directory is beyond its end");
    memcpy(c, b, len);
    c[4] = (uint8_t)(len - 8), c[5] = (uint8_t)((len - 8) >> 8), c[6] = c[7] = 0;
    expect_bad(c, len, MMP_EFORMAT, "truncated TIFF file: its directory is beyond its end");
    memcpy(c, b, len);
    memset(c + 8, 0xA5, len - 8);
    expect_bad(c, len, MMP_EFORMAT, "TIFF");
    free(c);
    free(b);
    /* Truncated compressed and tiled files. */
    o = grey8;
    o.compression = COMPRESSION_LZW;
    o.tile = 16;
    b = tiff_bytes(&o, 40, 40, &len);
    for (size_t cut = 16; cut < len; cut += len / 7)
        expect_bad(b, cut, MMP_EFORMAT, "TIFF");
    free(b);
    expect_bad("MM\0*", 4, MMP_EFORMAT, "truncated TIFF file");
    expect_bad("II*", 3, MMP_EFORMAT, "truncated TIFF file");
    expect_bad("IIxx", 4, MMP_EFORMAT, "not an image file (magic 0x4949;");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pgm_inputs),
        cmocka_unit_test(test_ppm_inputs),
        cmocka_unit_test(test_pam_inputs),
        cmocka_unit_test(test_netpbm_writer_headers),
        cmocka_unit_test(test_png_grey),
        cmocka_unit_test(test_png_alpha_and_colour),
        cmocka_unit_test(test_png_interlaced),
        cmocka_unit_test(test_png_palette),
        cmocka_unit_test(test_png_trns_colour),
        cmocka_unit_test(test_png_sbit),
        cmocka_unit_test(test_png_writer_libpng_reads),
        cmocka_unit_test(test_png_writer_refuses),
        cmocka_unit_test(test_dispatch),
        cmocka_unit_test(test_output_format),
        cmocka_unit_test(test_bad_png),
        cmocka_unit_test(test_bad_netpbm),
        cmocka_unit_test(test_netpbm_headers),
        cmocka_unit_test(test_jpeg_inputs),
        cmocka_unit_test(test_jpeg_refused),
        cmocka_unit_test(test_tiff_inputs),
        cmocka_unit_test(test_tiff_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
