/*
 * The reversible colour transforms (format 1.4, HEAD tools bit 4,
 * docs/format.md 7.2): a header's transform MMP_TRANSFORM_RCT + 7 * perm +
 * type (4..45), perm 0..5 the order of R, G, B taken as A, B, C
 * ({0,1,2}, {0,2,1}, {1,0,2}, {1,2,0}, {2,0,1}, {2,1,0}), type 0..6: none;
 * C -= A; B -= A; both; B -= floor((A + C) / 2); that and C -= A;
 * YCoCg-R of (A, B, C); each difference offset by maxval M.
 *
 * A re-implementation of the 42 forward and inverse transforms, written
 * from that definition alone, against the library: mmp_rct_forward and
 * mmp_planes_from_image give its planes, on random pixels and on the
 * corners of the colour cube, at maxval 1, 255, 1023 and 32767; the
 * planes lie within the layout's sample ranges (mmp_layout_of's maxv[],
 * M or 2M, as the definition says); mmp_planes_to_pixels of its planes
 * gives the pixels back exactly, alpha beside them. The encoder's choice
 * (mmp_rct_choose): in range, deterministic, blind to alpha, both chroma
 * planes constant on grey in colour, a constant difference plane where
 * G = R + 37. Encodes: lossless colour by default and with
 * MMP_TRANSFORM_RCT sets the tool bit and the chosen transform, decodes
 * exactly (RGB, RGBA, two tiles, maxval 1 and 32767); YCoCg-R, grey,
 * near-lossless and maxval 32768 do without; MMP_TRANSFORM_RCT other than
 * lossless up to maxval 32767 is refused. The container: an RCT transform
 * without the tool bit, with fewer than 3 planes, above maxval 32767, or
 * past 45 is refused; with the bit, 3 or 4 planes, accepted.
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
#include "mmp/common/colour.h"
#include "mmp/enc/rct_choice.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"
#include "util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define RCT_FIRST 4
#define RCT_LAST 45

/* ------------------------------------------------------------ the reference */

static const int ref_order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* floor(x / 2) for any sign. */
static int half_floor(int x)
{
    return x >= 0 ? x / 2 : -((1 - x) / 2);
}

/* The transform t of the pixel rgb[] at maxval m into p[3]. */
static void ref_forward(int t, int m, const int rgb[3], int p[3])
{
    const int *o = ref_order[(t - RCT_FIRST) / 7], type = (t - RCT_FIRST) % 7;
    const int a = rgb[o[0]], b = rgb[o[1]], c = rgb[o[2]];
    p[0] = a;
    p[1] = b;
    p[2] = c;
    switch (type) {
    case 0:
        break;
    case 1:
        p[2] = c - a + m;
        break;
    case 2:
        p[1] = b - a + m;
        break;
    case 3:
        p[1] = b - a + m;
        p[2] = c - a + m;
        break;
    case 4:
        p[1] = b - half_floor(a + c) + m;
        break;
    case 5:
        p[1] = b - half_floor(a + c) + m;
        p[2] = c - a + m;
        break;
    default: { /* YCoCg-R with A, B, C in R's, G's and B's places */
        const int co = a - c, tt = c + half_floor(co), cg = b - tt;
        p[0] = tt + half_floor(cg);
        p[1] = co + m;
        p[2] = cg + m;
    }
    }
}

/* Its inverse: the planes p[3] back to rgb[]. */
static void ref_inverse(int t, int m, const int p[3], int rgb[3])
{
    const int *o = ref_order[(t - RCT_FIRST) / 7], type = (t - RCT_FIRST) % 7;
    int a = p[0], b = p[1], c = p[2];
    if (type == 6) {
        const int co = p[1] - m, cg = p[2] - m, tt = p[0] - half_floor(cg);
        b = cg + tt;
        c = tt - half_floor(co);
        a = c + co;
    } else {
        if (type == 1 || type == 3 || type == 5)
            c = p[2] - m + a;
        if (type == 2 || type == 3)
            b = p[1] - m + a;
        if (type == 4 || type == 5)
            b = p[1] - m + half_floor(a + c);
    }
    rgb[o[0]] = a;
    rgb[o[1]] = b;
    rgb[o[2]] = c;
}

/* The largest sample of plane p (0..2): M, or 2M for a difference. */
static int ref_maxv(int t, int m, int p)
{
    const int type = (t - RCT_FIRST) % 7;
    if (p == 1)
        return type >= 2 ? 2 * m : m;
    if (p == 2)
        return type == 1 || type == 3 || type >= 5 ? 2 * m : m;
    return m;
}

static const int maxvals[] = {1, 255, 1023, 32767};

/* Pixel i of a test set at maxval m: the eight corners of the colour cube
 * first, then the middle, then random pixels. */
static void test_pixel(int i, int m, int rgb[3])
{
    if (i < 8) {
        for (int k = 0; k < 3; k++)
            rgb[k] = i >> k & 1 ? m : 0;
    } else if (i == 8) {
        rgb[0] = rgb[1] = rgb[2] = m / 2;
    } else {
        for (int k = 0; k < 3; k++)
            rgb[k] = (int)(rng_next() % (uint32_t)(m + 1));
    }
}

/* ------------------------------------------------------------ the transforms */

/* mmp_is_rct (common/container.h): 4..45, nothing else. */
static void test_is_rct(void **state)
{
    (void)state;
    for (int t = -2; t < 300; t++)
        assert_int_equal(mmp_is_rct(t) != 0, t >= RCT_FIRST && t <= RCT_LAST);
    assert_int_equal(MMP_TRANSFORM_RCT, RCT_FIRST);
    assert_int_equal(MMP_RCT_COUNT, RCT_LAST - RCT_FIRST + 1);
}

/* mmp_rct_forward equals the reference for all 42 transforms at each
 * maxval, every plane within the reference's range; the reference's
 * inverse undoes it. */
static void test_forward_matches_reference(void **state)
{
    (void)state;
    rng_seed(41);
    for (size_t mi = 0; mi < NELEM(maxvals); mi++) {
        const int m = maxvals[mi];
        for (int t = RCT_FIRST; t <= RCT_LAST; t++)
            for (int i = 0; i < 600; i++) {
                int rgb[3], want[3], got[3] = {-1, -1, -1}, back[3];
                test_pixel(i, m, rgb);
                ref_forward(t, m, rgb, want);
                mmp_rct_forward(t, m, rgb, got);
                if (memcmp(got, want, sizeof want))
                    fail_msg("transform %d, maxval %d, (%d, %d, %d): library (%d, %d, %d), "
                             "reference (%d, %d, %d)",
                             t, m, rgb[0], rgb[1], rgb[2], got[0], got[1], got[2], want[0],
                             want[1], want[2]);
                for (int p = 0; p < 3; p++)
                    assert_in_range(want[p], 0, ref_maxv(t, m, p));
                ref_inverse(t, m, want, back);
                assert_memory_equal(back, rgb, sizeof back);
            }
    }
}

static mmp_layout rct_layout(int t, int planes, int m, int w, int h)
{
    mmp_header hd = {.width = (uint32_t)w, .height = (uint32_t)h, .maxval = (uint32_t)m,
                     .planes = (uint32_t)planes, .transform = (uint32_t)t,
                     .chroma = MMP_CHROMA_444,
                     .alpha = planes == 4 ? MMP_ALPHA_EXACT : MMP_ALPHA_NONE,
                     .tools = MMP_TOOL_RCT};
    mmp_layout l;
    mmp_layout_of(&hd, &l);
    return l;
}

/* mmp_layout_of: full-size planes, maxv[] as the reference says (alpha at
 * M). */
static void test_layout(void **state)
{
    (void)state;
    for (size_t mi = 0; mi < NELEM(maxvals); mi++)
        for (int planes = 3; planes <= 4; planes++)
            for (int t = RCT_FIRST; t <= RCT_LAST; t++) {
                const int m = maxvals[mi];
                const mmp_layout l = rct_layout(t, planes, m, 13, 9);
                assert_int_equal(l.nplanes, planes);
                assert_int_equal(l.ncolour, 3);
                assert_int_equal(l.transform, t);
                for (int p = 0; p < planes; p++) {
                    assert_int_equal(l.w[p], 13);
                    assert_int_equal(l.h[p], 9);
                    assert_int_equal(l.maxv[p], p < 3 ? ref_maxv(t, m, p) : m);
                }
            }
}

/* Images through the library's planes and back, for all 42 transforms at
 * each maxval, RGB and RGBA: mmp_planes_from_image gives the reference's
 * planes; mmp_planes_to_pixels of the reference's planes gives the image
 * back exactly (into a wider buffer: its stride is kept). */
static void test_inverse_through_library(void **state)
{
    (void)state;
    enum { W = 23, H = 7, STRIDE = 29 };
    rng_seed(43);
    for (size_t mi = 0; mi < NELEM(maxvals); mi++)
        for (int ch = 3; ch <= 4; ch++)
            for (int t = RCT_FIRST; t <= RCT_LAST; t++) {
                const int m = maxvals[mi];
                mmp_image img;
                assert_int_equal(mmp_image_alloc_channels(&img, W, H, ch, m), MMP_OK);
                uint16_t want[4][W * H], got[4][W * H];
                for (int i = 0; i < W * H; i++) {
                    int rgb[3], pl[3];
                    test_pixel(i, m, rgb);
                    ref_forward(t, m, rgb, pl);
                    for (int k = 0; k < 3; k++) {
                        img.pix[i * ch + k] = (uint16_t)rgb[k];
                        want[k][i] = (uint16_t)pl[k];
                    }
                    if (ch == 4)
                        want[3][i] = img.pix[i * ch + 3] =
                            (uint16_t)(rng_next() % (uint32_t)(m + 1));
                }
                const mmp_layout l = rct_layout(t, ch, m, W, H);
                uint16_t *const gp[4] = {got[0], got[1], got[2], got[3]};
                mmp_planes_from_image(&l, &img, gp);
                for (int p = 0; p < ch; p++)
                    if (memcmp(got[p], want[p], sizeof want[p]))
                        fail_msg("transform %d, maxval %d, %d channels: plane %d differs", t, m,
                                 ch, p);
                uint16_t pix[H * STRIDE * 4];
                for (size_t i = 0; i < NELEM(pix); i++)
                    pix[i] = 0xbeef;
                const uint16_t *const wp[4] = {want[0], want[1], want[2], want[3]};
                mmp_planes_to_pixels(&l, wp, pix, STRIDE);
                for (int y = 0; y < H; y++) {
                    if (memcmp(pix + (size_t)y * STRIDE * ch, img.pix + (size_t)y * W * ch,
                               sizeof(uint16_t) * W * ch))
                        fail_msg("transform %d, maxval %d, %d channels: row %d differs", t, m,
                                 ch, y);
                    for (int x = W * ch; x < STRIDE * ch && y + 1 < H; x++)
                        assert_int_equal(pix[(size_t)y * STRIDE * ch + x], 0xbeef);
                }
                mmp_image_free(&img);
            }
}

/* ------------------------------------------------------------ the choice */

/* images/colour/face.ppm's w x h crop at (x0, y0), with `channels` 3 or 4
 * (alpha a ramp), scaled to maxval. */
static void face_at(mmp_image *img, int x0, int y0, int w, int h, int channels, int maxval)
{
    mmp_image src = {0};
    load_crop_all("colour/face.ppm", x0, y0, w, h, &src);
    assert_int_equal(mmp_image_alloc_channels(img, w, h, channels, maxval), MMP_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < channels; k++) {
                const int64_t v =
                    k == 3 ? (int64_t)(x + y) * maxval / (w + h - 2)
                           : ((int64_t)src.pix[((size_t)y * w + x) * 3 + k] *
                                  maxval +
                              src.maxval / 2) /
                                 src.maxval;
                img->pix[((size_t)y * w + x) * channels + k] = (uint16_t)v;
            }
    mmp_image_free(&src);
}

/* Whether plane p of transform t is one value over the whole image. */
static int plane_constant(const mmp_image *img, int t, int p)
{
    const int ch = mmp_image_channels(img);
    int first = 0;
    for (int i = 0; i < img->width * img->height; i++) {
        const uint16_t *px = img->pix + (size_t)i * ch;
        int pl[3];
        ref_forward(t, img->maxval, (const int[3]){px[0], px[1], px[2]}, pl);
        if (i == 0)
            first = pl[p];
        else if (pl[p] != first)
            return 0;
    }
    return 1;
}

/* A choice of mmp_rct_choose: one of 4..45 but rct-rgb-0 and rct-rgb-6,
 * which it gives as RGB (3) and YCoCg-R (1), the transforms they are. */
static void assert_choice(int t)
{
    if (t != MMP_TRANSFORM_RGB && t != MMP_TRANSFORM_YCOCG_R) {
        assert_in_range(t, RCT_FIRST, RCT_LAST);
        assert_int_not_equal(t, RCT_FIRST);
        assert_int_not_equal(t, RCT_FIRST + 6);
    }
}

/* The reversible transform a choice stands for. */
static int as_rct(int t)
{
    return t == MMP_TRANSFORM_RGB ? RCT_FIRST : t == MMP_TRANSFORM_YCOCG_R ? RCT_FIRST + 6 : t;
}

/* mmp_rct_choose: a transform as assert_choice says, the same every time,
 * the same with and without alpha; on grey in colour (R = G = B) both
 * chroma planes constant (the two differences cost nothing); with G = R +
 * 37 and B noise, a plane that is that constant difference. */
static void test_choose(void **state)
{
    (void)state;
    mmp_image rgb, rgba;
    face_at(&rgb, 150, 150, 64, 64, 3, 255);
    face_at(&rgba, 150, 150, 64, 64, 4, 255);
    const int t = mmp_rct_choose(&rgb);
    assert_choice(t);
    for (int k = 0; k < 3; k++)
        assert_int_equal(mmp_rct_choose(&rgb), t);
    assert_int_equal(mmp_rct_choose(&rgba), t);
    print_message("face 64x64: transform %d (order %d, type %d)\n", t, (t - RCT_FIRST) / 7,
                  (t - RCT_FIRST) % 7);

    /* Grey in colour. */
    mmp_image grey;
    assert_int_equal(mmp_image_alloc_channels(&grey, 64, 64, 3, 255), MMP_OK);
    for (int i = 0; i < 64 * 64; i++)
        grey.pix[i * 3] = grey.pix[i * 3 + 1] = grey.pix[i * 3 + 2] =
            (uint16_t)((rgb.pix[i * 3] + 2 * rgb.pix[i * 3 + 1] + rgb.pix[i * 3 + 2]) / 4);
    const int tg = mmp_rct_choose(&grey);
    assert_choice(tg);
    assert_int_equal(mmp_rct_choose(&grey), tg);
    assert_false(plane_constant(&grey, as_rct(tg), 0));
    assert_true(plane_constant(&grey, as_rct(tg), 1));
    assert_true(plane_constant(&grey, as_rct(tg), 2));
    print_message("grey in colour: transform %d\n", tg);

    /* G = R + 37, B noise. */
    mmp_image off;
    assert_int_equal(mmp_image_alloc_channels(&off, 64, 64, 3, 255), MMP_OK);
    rng_seed(47);
    for (int i = 0; i < 64 * 64; i++) {
        const int r = rgb.pix[i * 3] * 200 / 255;
        off.pix[i * 3] = (uint16_t)r;
        off.pix[i * 3 + 1] = (uint16_t)(r + 37);
        off.pix[i * 3 + 2] = (uint16_t)(rng_next() % 256);
    }
    const int to = mmp_rct_choose(&off);
    assert_choice(to);
    assert_int_equal(mmp_rct_choose(&off), to);
    int constant = 0;
    for (int p = 0; p < 3; p++)
        constant += plane_constant(&off, as_rct(to), p);
    assert_int_equal(constant, 1);
    print_message("G = R + 37, B noise: transform %d\n", to);
    mmp_image_free(&rgb);
    mmp_image_free(&rgba);
    mmp_image_free(&grey);
    mmp_image_free(&off);
}

/* ------------------------------------------------------------ encodes */

static void lossless_settings(mmp_settings *s, int max_error)
{
    mmp_default_settings(s);
    s->engine = "seq";
    s->threads = 1;
    s->max_error = max_error;
    s->lambda = 10;
}

/* Encodes img with s, decodes, probes: the file (the caller frees it),
 * its info and HEAD's tools; the decode equals the encoder's
 * reconstruction, and within max_error of img (exact when lossless). */
static uint8_t *encode_check(const mmp_image *img, const mmp_settings *s, size_t *len,
                             mmp_file_info *fi, uint32_t *tools)
{
    uint8_t *buf = NULL;
    mmp_image rec = {0}, dec = {0};
    char err[256] = "";
    if (mmp_encode(s, img, &buf, len, &rec, NULL, err, sizeof err))
        fail_msg("encode: %s", err);
    if (mmp_decode(buf, *len, &dec, err, sizeof err))
        fail_msg("decode: %s", err);
    if (mmp_probe(buf, *len, fi, err, sizeof err))
        fail_msg("probe: %s", err);
    *tools = get32(buf + MF_TOOLS);
    const size_t n = (size_t)img->width * img->height * mmp_image_channels(img);
    assert_int_equal(dec.channels, mmp_image_channels(img));
    assert_memory_equal(dec.pix, rec.pix, n * sizeof(uint16_t));
    for (size_t i = 0; i < n; i++)
        assert_true(abs((int)dec.pix[i] - (int)img->pix[i]) <= s->max_error);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
    return buf;
}

/* A lossless file of the estimate's choice: that transform in HEAD, the
 * tool bit with a reversible one (not with RGB or YCoCg-R), version 1.4. */
static void assert_rct_file(const mmp_image *img, const mmp_file_info *fi, uint32_t tools)
{
    assert_int_equal(fi->transform, mmp_rct_choose(img));
    assert_choice(fi->transform);
    assert_int_equal(tools & MMP_TOOL_RCT, fi->transform >= RCT_FIRST ? MMP_TOOL_RCT : 0);
    assert_int_equal(fi->version, 1);
    assert_int_equal(fi->version_minor, 4);
    assert_int_equal(fi->max_error, 0);
}

/* Lossless colour, the 64 x 64 face crop: the default and
 * MMP_TRANSFORM_RCT write the same file, with the estimate's transform and
 * the tool bit, decoded exactly; YCoCg-R asked for is written without the
 * bit. Clearing the bit in the file makes its transform refused. */
static void test_encode_lossless(void **state)
{
    (void)state;
    mmp_image img;
    face_at(&img, 150, 150, 64, 64, 3, 255);
    mmp_settings s;
    lossless_settings(&s, 0);
    mmp_file_info fi;
    uint32_t tools;
    size_t len, len2;
    uint8_t *buf = encode_check(&img, &s, &len, &fi, &tools);
    assert_rct_file(&img, &fi, tools);
    s.transform = MMP_TRANSFORM_RCT;
    uint8_t *buf2 = encode_check(&img, &s, &len2, &fi, &tools);
    assert_int_equal(len2, len);
    assert_memory_equal(buf2, buf, len);
    free(buf2);

    s.transform = MMP_TRANSFORM_YCOCG_R;
    buf2 = encode_check(&img, &s, &len2, &fi, &tools);
    assert_int_equal(tools & MMP_TOOL_RCT, 0);
    assert_int_equal(fi.transform, MMP_TRANSFORM_YCOCG_R);
    print_message("face 64x64 lossless: %zu bytes with transform %d, %zu with YCoCg-R\n", len,
                  get32(buf + MF_TRANSFORM) & 0xff, len2);
    free(buf2);

    put32(buf + MF_TOOLS, get32(buf + MF_TOOLS) & ~(uint32_t)MMP_TOOL_RCT);
    fixup_container(buf, len, 0);
    mmp_image dec;
    char err[256] = "";
    assert_int_equal(mmp_decode(buf, len, &dec, err, sizeof err), MMP_EUNSUPPORTED);
    assert_non_null(strstr(err, "unsupported transform"));
    free(buf);
    mmp_image_free(&img);
}

/* Other lossless colour files: RGBA (alpha exact), two tiles, maxval 1 and
 * 32767: the tool bit, the estimate's transform, exact. */
static void test_encode_lossless_kinds(void **state)
{
    (void)state;
    static const struct {
        int w, h, channels, maxval, tile;
    } kinds[] = {
        {48, 40, 4, 255, 0},
        {192, 48, 3, 255, 128},
        {40, 32, 3, 1, 0},
        {40, 32, 3, 32767, 0},
        {40, 32, 4, 32767, 0},
    };
    for (size_t k = 0; k < NELEM(kinds); k++) {
        mmp_image img;
        face_at(&img, 120, 140, kinds[k].w, kinds[k].h, kinds[k].channels, kinds[k].maxval);
        mmp_settings s;
        lossless_settings(&s, 0);
        s.tile_width = s.tile_height = kinds[k].tile;
        mmp_file_info fi;
        uint32_t tools;
        size_t len;
        uint8_t *buf = encode_check(&img, &s, &len, &fi, &tools);
        assert_rct_file(&img, &fi, tools);
        assert_int_equal(fi.tiles, kinds[k].tile ? 2 : 1);
        assert_int_equal(fi.planes, kinds[k].channels);
        print_message("%dx%d, %d channels, maxval %d, %d tile(s): transform %d, %zu bytes\n",
                      kinds[k].w, kinds[k].h, kinds[k].channels, kinds[k].maxval, fi.tiles,
                      fi.transform, len);
        free(buf);
        mmp_image_free(&img);
    }
}

/* Files that do without: near-lossless colour (RGB), lossless colour at
 * maxval 32768 (RGB), grey (no transform): none sets the bit.
 * MMP_TRANSFORM_RCT is refused, naming the transforms, near-lossless,
 * lossy and above maxval 32767. */
static void test_encode_without(void **state)
{
    (void)state;
    mmp_image img, wide, grey;
    face_at(&img, 150, 150, 32, 32, 3, 255);
    face_at(&wide, 150, 150, 32, 32, 3, 32768);
    assert_int_equal(mmp_image_alloc_channels(&grey, 32, 32, 1, 255), MMP_OK);
    for (int i = 0; i < 32 * 32; i++)
        grey.pix[i] = img.pix[i * 3 + 1];
    const struct {
        const mmp_image *img;
        int max_error, transform;
    } cases[] = {{&img, 2, MMP_TRANSFORM_RGB},
                 {&wide, 0, MMP_TRANSFORM_RGB},
                 {&grey, 0, MMP_TRANSFORM_NONE}};
    for (size_t k = 0; k < NELEM(cases); k++) {
        mmp_settings s;
        lossless_settings(&s, cases[k].max_error);
        mmp_file_info fi;
        uint32_t tools;
        size_t len;
        free(encode_check(cases[k].img, &s, &len, &fi, &tools));
        assert_int_equal(tools & MMP_TOOL_RCT, 0);
        assert_int_equal(fi.transform, cases[k].transform);
    }

    const struct {
        const mmp_image *img;
        int max_error;
    } refused[] = {{&img, 2}, {&img, 1}, {&img, -1}, {&wide, 0}};
    for (size_t k = 0; k < NELEM(refused); k++) {
        mmp_settings s;
        lossless_settings(&s, refused[k].max_error);
        s.transform = MMP_TRANSFORM_RCT;
        encode_refused(&s, refused[k].img, "reversible");
    }
    mmp_image_free(&img);
    mmp_image_free(&wide);
    mmp_image_free(&grey);
}

/* ------------------------------------------------------------ the container */

/* A file of one tile of the 16 x 8 image with this many planes, transform,
 * maxval and tools, parsed: its code, the message in err. */
static int parse_header(int planes, int transform, int maxval, uint32_t tools, char *err,
                        size_t errlen)
{
    mmp_header h;
    memset(&h, 0, sizeof h);
    h.width = 16;
    h.height = 8;
    h.maxval = (uint32_t)maxval;
    h.planes = (uint32_t)planes;
    h.log2_block = 4;
    h.log2_pmin = 2;
    h.dict_cap = 1024;
    h.residual = MMP_RESIDUAL_ALONE;
    h.order = MMP_ORDER_RASTER;
    h.transform = (uint32_t)transform;
    h.chroma = MMP_CHROMA_444;
    h.alpha = planes == 2 || planes == 4 ? MMP_ALPHA_EXACT : MMP_ALPHA_NONE;
    h.tools = tools;
    h.tile_w = 128;
    h.tile_h = 128;
    const uint8_t pay[3] = {1, 2, 3};
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(mmp_container_build(&h, pay, sizeof pay, &buf, &len), MMP_OK);
    mmp_container c;
    const int rc = mmp_container_parse(buf, len, &c, err, errlen);
    if (rc == MMP_OK) {
        assert_int_equal(c.h.transform, (uint32_t)transform);
        assert_int_equal(c.h.tools, tools);
        mmp_container_free(&c);
    }
    free(buf);
    return rc;
}

/* HEAD: transforms 4..45 with tools bit 4 and 3 or 4 planes, maxval up to
 * 32767, are accepted (with the other tools too); without the bit, with 1
 * or 2 planes, at maxval 32768 or more, or from 46 on they are refused. */
static void test_container(void **state)
{
    (void)state;
    char err[256], want[128];
    for (int t = RCT_FIRST; t <= RCT_LAST + 2; t++) {
        const int valid = t <= RCT_LAST;
        for (int planes = 3; planes <= 4; planes++) {
            static const int mv[] = {1, 255, 32767};
            for (size_t m = 0; m < NELEM(mv); m++) {
                const int rc = parse_header(planes, t, mv[m], MMP_TOOL_RCT, err, sizeof err);
                if (valid && rc != MMP_OK)
                    fail_msg("transform %d, %d planes, maxval %d: %s", t, planes, mv[m], err);
                assert_int_equal(rc, valid ? MMP_OK : MMP_EUNSUPPORTED);
            }
            assert_int_equal(parse_header(planes, t, 255, MMP_TOOLS_ALL, err, sizeof err),
                             valid ? MMP_OK : MMP_EUNSUPPORTED);
            /* Without the bit. */
            snprintf(want, sizeof want, "unsupported transform %d for %d planes", t, planes);
            assert_int_equal(parse_header(planes, t, 255, MMP_TOOLS_ALL & ~MMP_TOOL_RCT, err,
                                          sizeof err),
                             MMP_EUNSUPPORTED);
            assert_non_null(strstr(err, want));
            assert_int_equal(parse_header(planes, t, 255, 0, err, sizeof err), MMP_EUNSUPPORTED);
            assert_non_null(strstr(err, want));
            /* Above maxval 32767. */
            static const int big[] = {32768, 65535};
            for (size_t m = 0; m < NELEM(big) && valid; m++) {
                assert_int_equal(parse_header(planes, t, big[m], MMP_TOOL_RCT, err, sizeof err),
                                 MMP_EUNSUPPORTED);
                snprintf(want, sizeof want, "maxval %d (at most 32767)", big[m]);
                assert_non_null(strstr(err, want));
            }
        }
        /* Grey, grey and alpha. */
        for (int planes = 1; planes <= 2; planes++) {
            assert_int_equal(parse_header(planes, t, 255, MMP_TOOL_RCT, err, sizeof err),
                             MMP_EUNSUPPORTED);
            snprintf(want, sizeof want, "unsupported transform %d for %d planes", t, planes);
            assert_non_null(strstr(err, want));
        }
    }
    /* The bit with the other transforms is no error. */
    for (int t = MMP_TRANSFORM_YCOCG_R; t <= MMP_TRANSFORM_RGB; t++)
        assert_int_equal(parse_header(3, t, 255, MMP_TOOL_RCT, err, sizeof err), MMP_OK);
    assert_int_equal(parse_header(1, MMP_TRANSFORM_NONE, 255, MMP_TOOL_RCT, err, sizeof err),
                     MMP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_rct),
        cmocka_unit_test(test_forward_matches_reference),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_inverse_through_library),
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_encode_lossless),
        cmocka_unit_test(test_encode_lossless_kinds),
        cmocka_unit_test(test_encode_without),
        cmocka_unit_test(test_container),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
