/*
 * Tests of the front ends' image files beyond grey PGM (tests/test_image.c):
 * PPM and PAM through libnetpbm, PNG through libpng, the dispatch by the
 * first bytes, the output format a name asks for, and bad input.
 *
 * Every input type goes read -> write -> read and must keep its samples,
 * channels and maxval. The netpbm inputs are written byte by byte here; the
 * PNG inputs with libpng directly (raw_png), so that the types our writer
 * never produces (palette, interlaced, low-depth grey with tRNS) are read
 * too; and what our writer writes is read back by libpng directly
 * (libpng_read), not by our reader.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <png.h>
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
        {"x.out", 1, MMP_FILE_PPM, NULL}, {"-", 1, MMP_FILE_PPM, NULL},
        {"x.png", 1, MMP_FILE_PNG, NULL}, {"x.pgm", 2, 0, "grey+alpha"},
        {"x.ppm", 2, 0, ".pam"},          {"-", 2, MMP_FILE_PAM, NULL},
        {"x.png", 2, 0, "maxval 1000"},   {"x.pnm", 3, MMP_FILE_PAM, NULL},
        {"x.png", 3, MMP_FILE_PNG, NULL}, {"x.ppm", 3, 0, "RGBA"},
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

/* The bytes must be refused with `code` and a one-line message containing
 * `want`, with nothing allocated. */
static void expect_bad(const void *data, size_t len, int code, const char *want)
{
    const char *p = tpath("bad.img");
    write_file(p, data, len);
    mmp_image img;
    char err[256];
    memset(err, 'x', sizeof err);
    memset(&img, 0x5a, sizeof img);
    const int rc = mmp_imagefile_read_path(p, &img, err, sizeof err);
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
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
