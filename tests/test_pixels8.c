/*
 * The one-call helpers for 8-bit pixels (mmp_encode_grey8, _rgb8, _rgba8,
 * mmp_decode_grey8, _rgb8, _rgba8):
 *
 * 1. Encoding with a stride (the padding between rows filled with noise)
 *    gives the bytes of mmp_encode on the same samples at maxval 255, with
 *    the defaults for NULL settings and with the settings given; lossless
 *    settings give the pixels back exactly through the decoders.
 * 2. Decoding converts channels as mmp.h says: grey repeated into RGB, the
 *    BT.601 luma of RGB (Pillow's integer formula), alpha dropped, 255
 *    where the file has none.
 * 3. Samples of other maxvals reach 8 bits as mmp-dec's PNG output writes
 *    them (the very writer, mmp/imageio/png.c, read back raw through
 *    libpng): maxval 31 and 63 (bit repetition, which rounding would miss
 *    at some values), 1023 and 65535 (the top byte of the 16-bit sample);
 *    maxval 100, which PNG cannot hold, by rounding.
 * 4. Bad arguments are MMP_EINVAL; a damaged file gives mmp_decode's code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <png.h>

#include "mmp/imageio/png.h"
#include "mmp/mmp.h"

/* w x h pixels of ch bytes, rows `stride` apart, the padding noise. */
static uint8_t *pixels(int w, int h, int ch, int stride, uint32_t seed)
{
    uint8_t *p = malloc((size_t)stride * h);
    assert_non_null(p);
    uint32_t r = seed;
    for (int y = 0; y < h; y++)
        for (int i = 0; i < stride; i++) {
            r = r * 1103515245u + 12345u;
            const int x = i / ch, c = i % ch;
            p[(size_t)y * stride + i] =
                i < w * ch ? (uint8_t)((x * 4 + y * 3 + c * 60 + (int)((r >> 16) % 20)) % 256)
                           : (uint8_t)(r >> 24);
        }
    return p;
}

/* The same pixels as an mmp_image of maxval 255. */
static void as_image(const uint8_t *p, int w, int h, int ch, int stride, mmp_image *img)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, ch, 255), 0);
    for (int y = 0; y < h; y++)
        for (int i = 0; i < w * ch; i++)
            img->pix[(size_t)y * w * ch + i] = p[(size_t)y * stride + i];
}

typedef int (*encode8_fn)(const uint8_t *, int, int, int, const mmp_settings *, uint8_t **,
                          size_t *);
typedef int (*decode8_fn)(const uint8_t *, size_t, int *, int *, uint8_t **);

static void test_encode_with_stride(void **state)
{
    (void)state;
    const encode8_fn enc[] = {mmp_encode_grey8, NULL, mmp_encode_rgb8, mmp_encode_rgba8};
    const decode8_fn dec[] = {mmp_decode_grey8, NULL, mmp_decode_rgb8, mmp_decode_rgba8};
    const int w = 37, h = 21;
    for (int ch = 1; ch <= 4; ch++) {
        if (!enc[ch - 1])
            continue;
        const int stride = w * ch + 13;
        uint8_t *p = pixels(w, h, ch, stride, (uint32_t)ch);
        mmp_image img;
        as_image(p, w, h, ch, stride, &img);
        mmp_settings s;
        mmp_default_settings(&s);
        s.engine = "seq";
        for (int lossless = 0; lossless <= 1; lossless++) {
            s.max_error = lossless ? 0 : -1;
            uint8_t *ref, *out;
            size_t rlen, len;
            char err[256] = "";
            assert_int_equal(mmp_encode(&s, &img, &ref, &rlen, NULL, NULL, err, sizeof err), 0);
            assert_int_equal(enc[ch - 1](p, w, h, stride, &s, &out, &len), 0);
            assert_int_equal(len, rlen);
            assert_memory_equal(out, ref, len);
            if (lossless) {
                int dw = 0, dh = 0;
                uint8_t *back;
                assert_int_equal(dec[ch - 1](out, len, &dw, &dh, &back), 0);
                assert_int_equal(dw, w);
                assert_int_equal(dh, h);
                for (int y = 0; y < h; y++)
                    assert_memory_equal(back + (size_t)y * w * ch, p + (size_t)y * stride,
                                        (size_t)w * ch);
                mmp_free(back);
            }
            mmp_free(ref);
            mmp_free(out);
        }
        /* NULL settings: the defaults. */
        mmp_settings d;
        mmp_default_settings(&d);
        uint8_t *ref, *out;
        size_t rlen, len;
        assert_int_equal(mmp_encode(&d, &img, &ref, &rlen, NULL, NULL, NULL, 0), 0);
        assert_int_equal(enc[ch - 1](p, w, h, stride, NULL, &out, &len), 0);
        assert_int_equal(len, rlen);
        assert_memory_equal(out, ref, len);
        mmp_free(ref);
        mmp_free(out);
        mmp_image_free(&img);
        free(p);
    }
}

/* The lossless file of img (seq). */
static void lossless_file(const mmp_image *img, uint8_t **out, size_t *len)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    s.max_error = 0;
    char err[256] = "";
    if (mmp_encode(&s, img, out, len, NULL, NULL, err, sizeof err))
        fail_msg("lossless encode: %s", err);
}

static void test_channel_conversions(void **state)
{
    (void)state;
    const int w = 19, h = 11;
    for (int ch = 1; ch <= 4; ch++) {
        uint8_t *p = pixels(w, h, ch, w * ch, 7u + (uint32_t)ch);
        mmp_image img;
        as_image(p, w, h, ch, w * ch, &img);
        uint8_t *file;
        size_t len;
        lossless_file(&img, &file, &len);
        uint8_t *g, *rgb, *rgba;
        assert_int_equal(mmp_decode_grey8(file, len, NULL, NULL, &g), 0);
        assert_int_equal(mmp_decode_rgb8(file, len, NULL, NULL, &rgb), 0);
        assert_int_equal(mmp_decode_rgba8(file, len, NULL, NULL, &rgba), 0);
        for (int i = 0; i < w * h; i++) {
            const uint8_t *s = p + (size_t)i * ch;
            const int colour = ch >= 3;
            const unsigned r = s[0], gr = colour ? s[1] : r, b = colour ? s[2] : r;
            const unsigned a = ch == 2 || ch == 4 ? s[ch - 1] : 255;
            const unsigned y = colour ? (19595 * r + 38470 * gr + 7471 * b + 32768) >> 16 : r;
            assert_int_equal(g[i], y);
            assert_int_equal(rgb[3 * i], r);
            assert_int_equal(rgb[3 * i + 1], gr);
            assert_int_equal(rgb[3 * i + 2], b);
            assert_memory_equal(rgba + 4 * i, rgb + 3 * i, 3);
            assert_int_equal(rgba[4 * i + 3], a);
        }
        mmp_free(g);
        mmp_free(rgb);
        mmp_free(rgba);
        mmp_free(file);
        mmp_image_free(&img);
        free(p);
    }
}

/* The samples of a PNG file as they are in it (no scaling), big-endian
 * pairs for 16 bits: into *out, one byte or two per sample. */
static void png_raw(FILE *f, uint8_t **out, int *depth)
{
    rewind(f);
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng cannot read the PNG back");
    png_init_io(png, f);
    png_read_png(png, info, PNG_TRANSFORM_PACKING, NULL);
    png_bytepp rows = png_get_rows(png, info);
    const size_t rb = png_get_rowbytes(png, info);
    const png_uint_32 h = png_get_image_height(png, info);
    *depth = png_get_bit_depth(png, info);
    *out = malloc(rb * h);
    for (png_uint_32 y = 0; y < h; y++)
        memcpy(*out + rb * y, rows[y], rb);
    png_destroy_read_struct(&png, &info, NULL);
}

static void test_other_maxvals(void **state)
{
    (void)state;
    const int maxvals[] = {31, 63, 1023, 65535, 100};
    for (size_t m = 0; m < sizeof maxvals / sizeof maxvals[0]; m++) {
        const int maxval = maxvals[m], ch = maxval == 63 ? 3 : 1, w = 64, h = 17;
        mmp_image img;
        assert_int_equal(mmp_image_alloc_channels(&img, w, h, ch, maxval), 0);
        uint32_t r = 5;
        for (int i = 0; i < w * h * ch; i++) {
            r = r * 1103515245u + 12345u;
            /* every value in order (all of them up to maxval 1087), then random ones */
            img.pix[i] = (uint16_t)(i <= maxval ? i : (int)((r >> 8) % (uint32_t)(maxval + 1)));
        }
        uint8_t *file, *px;
        size_t len;
        lossless_file(&img, &file, &len);
        int dw, dh;
        assert_int_equal((ch == 1 ? mmp_decode_grey8 : mmp_decode_rgb8)(file, len, &dw, &dh, &px),
                         0);
        assert_int_equal(dw, w);
        if (maxval == 100) {
            for (int i = 0; i < w * h; i++)
                assert_int_equal(px[i], (img.pix[i] * 255 + 50) / 100);
        } else {
            /* What mmp-dec writes for this image (mmp/cli/output.c calls
             * mmp_png_write_meta): 8 bits below 256, else 16. */
            FILE *f = tmpfile();
            assert_non_null(f);
            assert_int_equal(mmp_png_write(f, &img), 0);
            uint8_t *raw;
            int depth;
            png_raw(f, &raw, &depth);
            fclose(f);
            assert_int_equal(depth, maxval > 255 ? 16 : 8);
            for (int i = 0; i < w * h * ch; i++) {
                const int want = depth == 16 ? raw[2 * i] : raw[i];
                if (px[i] != want)
                    fail_msg("maxval %d, sample %d (%u): %u, mmp-dec's PNG %d", maxval, i,
                             img.pix[i], px[i], want);
            }
            free(raw);
        }
        print_message("maxval %d: 8-bit samples as mmp-dec's %s\n", maxval,
                      maxval == 100 ? "rounding (no PNG can hold it)" : "PNG output");
        mmp_free(px);
        mmp_free(file);
        mmp_image_free(&img);
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    uint8_t px[3 * 8 * 8] = {0}, *out = px, *back = px;
    size_t len = 7;
    int w = 9, h = 9;
    assert_int_equal(mmp_encode_rgb8(px, 8, 8, 23, NULL, &out, &len), MMP_EINVAL); /* stride */
    assert_null(out);
    assert_int_equal(len, 0);
    assert_int_equal(mmp_encode_rgb8(NULL, 8, 8, 24, NULL, &out, &len), MMP_EINVAL);
    assert_int_equal(mmp_encode_rgb8(px, 0, 8, 24, NULL, &out, &len), MMP_EINVAL);
    assert_int_equal(mmp_encode_rgb8(px, 8, 8, 24, NULL, NULL, &len), MMP_EINVAL);
    assert_int_equal(mmp_encode_grey8(px, 8, 8, -8, NULL, &out, &len), MMP_EINVAL);
    assert_int_equal(mmp_encode_rgba8(px, 4, 4, 16, NULL, &out, &len), 0);
    assert_int_equal(mmp_decode_rgba8(out, len, &w, &h, NULL), MMP_EINVAL);
    assert_int_equal(mmp_decode_rgba8(out, len - 1, &w, &h, &back), MMP_EBITSTREAM);
    assert_null(back);
    assert_int_equal(w, 0);
    assert_int_equal(h, 0);
    assert_int_equal(mmp_decode_grey8(NULL, len, &w, &h, &back), MMP_EINVAL);
    mmp_free(out);
    mmp_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_with_stride),
        cmocka_unit_test(test_channel_conversions),
        cmocka_unit_test(test_other_maxvals),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
