/*
 * End-to-end tests of the public API (mmp/mmp.h): encode real and synthetic
 * images, decode the bytes, and check that the decoder rebuilds the
 * encoder's reconstruction exactly; that rate falls and quality does not
 * rise as lambda grows; that encoding is deterministic; that bad settings
 * and bad files are refused with a negative code and nothing allocated.
 * Files of several tiles: each tile is coded on its own (its data is its
 * crop's payload), every engine writes seq's bytes, mmp_decode_region
 * decodes exactly the tiles a window touches; ancillary chunks come back
 * from mmp_chunks as mmp_encode was given them.
 *
 * Encoding is slow (tens of ms per 16x16 block), so real images are tested
 * on small crops; one full small image (page.pgm) runs at a high lambda.
 * The test images are found in $MMP_IMAGES, else ./images (make check runs
 * from the repository root), else ../images.
 */
#include <math.h>
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
#include "mmp/mmp.h"
#include "util.h"

/* ---------------------------------------------------------------- helpers */

/* PSNR computed here rather than with common/metrics.c, so a bug there
 * cannot hide one in the codec. INFINITY when identical. */
static double psnr(const mmp_image *a, const mmp_image *b)
{
    double ssd = 0;
    size_t n = (size_t)a->width * a->height;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a->pix[i] - b->pix[i];
        ssd += d * d;
    }
    if (ssd == 0)
        return INFINITY;
    return 10.0 * log10((double)a->maxval * a->maxval * (double)n / ssd);
}

/* Encode with the seq engine; the recon must have the image's geometry and
 * stay inside [0, maxval]. */
static void encode_ok(const mmp_image *img, double lambda, uint8_t **buf, size_t *len,
                      mmp_image *recon)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = lambda;
    s.engine = "seq";
    char err[256] = "";
    mmp_enc_stats st;
    memset(recon, 0, sizeof *recon);
    int rc = mmp_encode(&s, img, buf, len, recon, &st, err, sizeof err);
    if (rc)
        fail_msg("encode %dx%d maxval %d lambda %g: %d %s", img->width, img->height, img->maxval,
                 lambda, rc, err);
    assert_non_null(*buf);
    assert_true(*len > MF_ONE_TILE);
    assert_memory_equal(*buf, MMP_MAGIC, 4);
    /* Up to MMP_AUTO_TILE a side: one tile, its payload right after HEAD. */
    assert_int_equal(st.tiles, 1);
    assert_memory_equal(*buf + MF_TILE_TYPE, "TILE", 4);
    assert_int_equal(get32(*buf + MF_TILE_LEN), *len - MF_ONE_TILE);
    assert_int_equal(recon->width, img->width);
    assert_int_equal(recon->height, img->height);
    assert_int_equal(recon->maxval, img->maxval);
    assert_non_null(recon->pix);
    for (size_t i = 0; i < (size_t)img->width * img->height; i++)
        assert_in_range(recon->pix[i], 0, img->maxval);
    assert_int_equal(st.blocks, (uint64_t)((img->width + 15) / 16) * ((img->height + 15) / 16));
}

/* Decode and require the encoder's reconstruction, sample for sample. */
static void assert_decodes_to(const uint8_t *buf, size_t len, const mmp_image *recon)
{
    mmp_image dec = {0};
    char err[256] = "";
    int rc = mmp_decode(buf, len, &dec, err, sizeof err);
    if (rc)
        fail_msg("decode of %zu bytes (%dx%d): %d %s", len, recon->width, recon->height, rc, err);
    assert_int_equal(dec.width, recon->width);
    assert_int_equal(dec.height, recon->height);
    assert_int_equal(dec.maxval, recon->maxval);
    size_t n = (size_t)dec.width * dec.height;
    for (size_t i = 0; i < n; i++)
        if (dec.pix[i] != recon->pix[i])
            fail_msg("%dx%d: decoded sample (%zu,%zu) is %u, encoder recon has %u", dec.width,
                     dec.height, i % (size_t)dec.width, i / (size_t)dec.width, dec.pix[i],
                     recon->pix[i]);
    mmp_image_free(&dec);
}

/* Encode, decode, compare; returns the size and the PSNR of the recon. */
static void roundtrip(const mmp_image *img, double lambda, size_t *bytes, double *q)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_image rec;
    encode_ok(img, lambda, &buf, &len, &rec);
    assert_decodes_to(buf, len, &rec);
    if (bytes)
        *bytes = len;
    if (q)
        *q = psnr(img, &rec);
    free(buf);
    mmp_image_free(&rec);
}

/* ------------------------------------------------------ real-image crops */

static const double crop_lambdas[3] = {10, 75, 300};

/* Counted over every crop, checked by test_crops_mostly_strict. */
static int crops_done, crops_strict;

static void check_crop(const char *what, const mmp_image *c)
{
    size_t bytes[3];
    double q[3];
    for (int i = 0; i < 3; i++)
        roundtrip(c, crop_lambdas[i], &bytes[i], &q[i]);
    print_message("%-22s %2dx%-2d bytes %5zu %5zu %5zu  PSNR %6.2f %6.2f %6.2f\n", what,
                  c->width, c->height, bytes[0], bytes[1], bytes[2], q[0], q[1], q[2]);
    /* A higher lambda weighs bits more: never more bytes, never more
     * quality. A flat crop may tie, so only >= is required per crop; the
     * strict decrease is required of most crops together below. */
    if (bytes[0] < bytes[1] || bytes[1] < bytes[2])
        fail_msg("%s: bytes not decreasing at lambda 10, 75, 300: %zu %zu %zu", what, bytes[0], bytes[1],
                 bytes[2]);
    if (!(q[0] >= q[2]))
        fail_msg("%s: PSNR at lambda 10 (%.3f) below PSNR at lambda 300 (%.3f)", what, q[0], q[2]);
    crops_done++;
    crops_strict += bytes[0] > bytes[1] && bytes[1] > bytes[2];
}

/* state: the image name. A 48x40 crop from the centre, and for the images
 * whose size is not a multiple of 16 also the bottom-right 37x29 corner,
 * which includes the last row and column. */
static void test_image_crops(void **state)
{
    const char *name = *state;
    mmp_image img = {0}, c = {0};
    char what[64];
    load_image(name, &img);
    assert_int_equal(img.maxval, 255);
    crop(&img, (img.width - 48) / 2, (img.height - 40) / 2, 48, 40, &c);
    snprintf(what, sizeof what, "%s centre", name);
    check_crop(what, &c);
    mmp_image_free(&c);
    if (img.width % 16 || img.height % 16) {
        crop(&img, img.width - 37, img.height - 29, 37, 29, &c);
        snprintf(what, sizeof what, "%s bottom-right", name);
        check_crop(what, &c);
        mmp_image_free(&c);
    }
    mmp_image_free(&img);
}

static void test_crops_mostly_strict(void **state)
{
    (void)state;
    if (crops_done == 0)
        skip();
    print_message("strictly decreasing sizes: %d of %d crops\n", crops_strict, crops_done);
    /* All real crops are textured enough today; allow one tie for a future
     * change that makes a flat crop hit the same size at two lambdas. */
    assert_true(crops_strict >= crops_done - 1);
}

/* The whole of page.pgm (384x191: neither side a multiple of 16). */
static void test_page_full(void **state)
{
    (void)state;
    mmp_image img = {0};
    load_image("page", &img);
    assert_int_equal(img.width, 384);
    assert_int_equal(img.height, 191);
    size_t bytes;
    double q;
    roundtrip(&img, 300, &bytes, &q);
    print_message("page.pgm lambda 300: %zu bytes, PSNR %.2f dB\n", bytes, q);
    /* A sanity bound on the figures, far from today's values: a real image
     * is compressed, and the reconstruction resembles it. */
    assert_true(bytes < (size_t)img.width * img.height / 4);
    assert_true(q > 20.0);
    mmp_image_free(&img);
}

/* ---------------------------------------------------------- tiny images */

static void make_synthetic(mmp_image *img, int w, int h, int maxval, int smooth, uint64_t seed)
{
    assert_int_equal(mmp_image_alloc(img, w, h, maxval), MMP_OK);
    rng_seed(seed);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            long v;
            if (smooth) {
                /* A gradient plus a little noise (about 1% of maxval). */
                double g = (double)maxval * (0.1 + 0.8 * (x + 2.0 * y) / (w + 2.0 * h));
                long noise = (long)(rng_next() % (unsigned)(maxval / 50 + 1)) - maxval / 100;
                v = lround(g) + noise;
            } else {
                v = (long)(rng_next() % ((unsigned)maxval + 1));
            }
            img->pix[(size_t)y * w + x] = (uint16_t)(v < 0 ? 0 : v > maxval ? maxval : v);
        }
}

static void test_tiny_sizes(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {17, 5}, {5, 17}, {16, 16}, {15, 1}, {33, 2}};
    static const double lambdas[] = {0, 10, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int smooth = 0; smooth < 2; smooth++) {
            mmp_image img;
            make_synthetic(&img, sizes[i][0], sizes[i][1], 255, smooth, 100 + i * 2 + smooth);
            for (size_t l = 0; l < sizeof lambdas / sizeof lambdas[0]; l++) {
                double q;
                roundtrip(&img, lambdas[l], NULL, &q);
                if (lambdas[l] == 0) {
                    print_message("%2dx%-2d %-6s lambda 0: PSNR %.2f dB\n", img.width,
                                  img.height, smooth ? "smooth" : "random", q);
                    /* Lambda 0 minimises distortion alone. */
                    if (!(q > 40.0))
                        fail_msg("%dx%d %s at lambda 0: PSNR %.2f dB, want > 40", img.width,
                                 img.height, smooth ? "smooth" : "random", q);
                }
            }
            mmp_image_free(&img);
        }
}

/* --------------------------------------------------------------- 16 bit */

static void test_16bit(void **state)
{
    (void)state;
    static const int maxvals[] = {65535, 1023};
    static const double lambdas[] = {10, 1000};
    for (size_t m = 0; m < 2; m++) {
        mmp_image img;
        make_synthetic(&img, 40, 24, maxvals[m], 1, 7 + m);
        for (size_t l = 0; l < 2; l++) {
            size_t bytes;
            double q;
            /* roundtrip() checks the recon against [0, maxval] and the
             * decoder against the recon. */
            roundtrip(&img, lambdas[l], &bytes, &q);
            print_message("40x24 maxval %5d lambda %4g: %zu bytes, PSNR %.2f dB\n", maxvals[m],
                          lambdas[l], bytes, q);
            /* Lambda is on the 8-bit scale: 1000 is a low quality at any maxval. */
            assert_true(q > (lambdas[l] < 100 ? 35.0 : 22.0));
        }
        mmp_image_free(&img);
    }
}

/* ---------------------------------------------------------- determinism */

static void test_deterministic(void **state)
{
    (void)state;
    mmp_image img = {0}, c = {0}, r1, r2;
    load_image("camera", &img);
    crop(&img, 200, 180, 40, 32, &c);
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t l1 = 0, l2 = 0;
    encode_ok(&c, 10, &b1, &l1, &r1);
    encode_ok(&c, 10, &b2, &l2, &r2);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    assert_memory_equal(r1.pix, r2.pix, sizeof(uint16_t) * 40 * 32);
    free(b2);
    mmp_image_free(&r2);

    /* The engine contract promises the same bytes whatever the thread
     * count. */
    mmp_settings s;
    mmp_default_settings(&s);
    s.threads = 1;
    char err[256] = "";
    assert_int_equal(mmp_encode(&s, &c, &b2, &l2, NULL, NULL, err, sizeof err), MMP_OK);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    free(b1);
    free(b2);
    mmp_image_free(&r1);
    mmp_image_free(&c);
    mmp_image_free(&img);
}

/* ------------------------------------------------------- settings errors */

static void expect_encode_error(const mmp_settings *s, const mmp_image *img, const char *what)
{
    uint8_t *out = NULL;
    size_t outlen = 0;
    mmp_image rec = {0};
    char err[256] = "";
    int rc = mmp_encode(s, img, &out, &outlen, &rec, NULL, err, sizeof err);
    if (rc >= 0)
        fail_msg("%s: mmp_encode returned %d, want a negative code", what, rc);
    assert_null(out);
    assert_int_equal(outlen, 0);
    assert_null(rec.pix);
    /* One line naming the problem. */
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
}

static void test_settings_errors(void **state)
{
    (void)state;
    mmp_image img;
    make_synthetic(&img, 8, 8, 255, 0, 1);
    mmp_settings s;

    mmp_default_settings(&s);
    s.lambda = -1;
    expect_encode_error(&s, &img, "lambda -1");
    s.lambda = NAN;
    expect_encode_error(&s, &img, "lambda NaN");
    s.lambda = INFINITY;
    expect_encode_error(&s, &img, "lambda inf");
    s.lambda = 1e6 * 1.001;
    expect_encode_error(&s, &img, "lambda above 1e6");

    mmp_default_settings(&s);
    s.dict_cap = 10;
    expect_encode_error(&s, &img, "dict_cap 10");
    s.dict_cap = 100000;
    expect_encode_error(&s, &img, "dict_cap 100000");
    s.dict_cap = MMP_MIN_DICT_CAP - 1;
    expect_encode_error(&s, &img, "dict_cap 63");

    mmp_default_settings(&s);
    s.engine = "nosuch";
    expect_encode_error(&s, &img, "engine nosuch");

    /* Bad images are refused the same way. */
    mmp_default_settings(&s);
    mmp_image bad = img;
    bad.maxval = 0;
    expect_encode_error(&s, &bad, "maxval 0");
    bad = img;
    bad.width = 0;
    expect_encode_error(&s, &bad, "width 0");
    bad = img;
    bad.pix = NULL;
    expect_encode_error(&s, &bad, "no samples");
    mmp_image_free(&img);
}

/* ---------------------------------------------------- bad decoder input */

static void expect_decode_error(const uint8_t *buf, size_t len, const char *what)
{
    mmp_image img = {0};
    char err[256] = "";
    int rc = mmp_decode(buf, len, &img, err, sizeof err);
    if (rc >= 0)
        fail_msg("%s: mmp_decode returned %d, want a negative code", what, rc);
    assert_null(img.pix);
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
}

static void test_decode_bad(void **state)
{
    (void)state;
    mmp_image img, rec;
    make_synthetic(&img, 20, 18, 255, 1, 3);
    uint8_t *buf;
    size_t len;
    encode_ok(&img, 10, &buf, &len, &rec);
    assert_true(len > MF_ONE_TILE + 8);
    char what[64];

    expect_decode_error(NULL, 0, "NULL, 0");
    expect_decode_error(buf, 0, "empty");

    /* Truncations: inside the magic, the signature, HEAD's length, type,
     * data and CRC, TILE's, inside the payload and its CRC. */
    const size_t cuts[] = {1, 3, 4, 5, MF_HEAD, MF_HEAD + 2, MF_HEAD_TYPE + 1, MF_HEAD_DATA,
                           MF_HEAD_DATA + 9, MF_HEAD_CRC, MF_HEAD_CRC + 3, MF_CHUNK2,
                           MF_TILE_TYPE, MF_TILE_DATA, MF_TILE_DATA + 1,
                           (MF_TILE_DATA + len) / 2, len - 4, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(what, sizeof what, "truncated to %zu of %zu", cuts[i], len);
        expect_decode_error(buf, cuts[i], what);
    }

    /* Every single-bit flip anywhere in the file (signature, chunk headers,
     * HEAD, payload, CRCs) is refused: the CRCs cover every chunk's type and
     * data. Cheap, since the whole container is checked before any
     * decoding. The minor version is the exception: a later 1.x that uses
     * no new tool is read (docs/format.md section 2), to the same image. */
    uint8_t *copy = malloc(len + 16);
    assert_non_null(copy);
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(copy, buf, len);
            copy[i] ^= (uint8_t)(1u << bit);
            if (i == MF_MINOR) {
                assert_decodes_to(copy, len, &rec);
                continue;
            }
            snprintf(what, sizeof what, "bit %d of byte %zu flipped", bit, i);
            expect_decode_error(copy, len, what);
        }

    /* Trailing garbage. */
    memcpy(copy, buf, len);
    memset(copy + len, 0, 16);
    expect_decode_error(copy, len + 1, "one trailing byte");
    expect_decode_error(copy, len + 16, "16 trailing bytes");

    /* The untouched file still decodes, from the same buffer. */
    assert_decodes_to(buf, len, &rec);
    free(copy);
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&img);
}

/* A corrupt payload under a valid CRC (what a hostile file looks like):
 * the decoder must return, without crashing, an error or an image of the
 * header's size. Run under a sanitizer this also checks memory safety. */
static void test_decode_hostile_payload(void **state)
{
    (void)state;
    mmp_image img, rec;
    make_synthetic(&img, 40, 33, 255, 0, 11);
    uint8_t *buf;
    size_t len;
    encode_ok(&img, 10, &buf, &len, &rec);
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    int errors = 0;
    rng_seed(99);
    for (int trial = 0; trial < 300; trial++) {
        memcpy(copy, buf, len);
        size_t plen = len - MF_ONE_TILE;
        int nflips = 1 + (int)(rng_next() % 8);
        for (int k = 0; k < nflips; k++)
            copy[MF_TILE_DATA + rng_next() % plen] ^= (uint8_t)(1u << (rng_next() % 8));
        fixup_container(copy, len, 0); /* TILE's CRC */
        mmp_image out = {0};
        char err[256] = "";
        int rc = mmp_decode(copy, len, &out, err, sizeof err);
        if (rc == 0) {
            assert_int_equal(out.width, 40);
            assert_int_equal(out.height, 33);
            for (size_t i = 0; i < (size_t)40 * 33; i++)
                assert_in_range(out.pix[i], 0, 255);
            mmp_image_free(&out);
        } else {
            assert_true(rc < 0);
            assert_null(out.pix);
            errors++;
        }
    }
    print_message("hostile payloads: %d of 300 refused\n", errors);
    free(copy);
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&img);
}

/* ------------------------------------------------------------------ tiles */

static void assert_same_image(const char *what, const mmp_image *a, const mmp_image *b)
{
    const int ch = mmp_image_channels(a);
    if (a->width != b->width || a->height != b->height || a->maxval != b->maxval ||
        ch != mmp_image_channels(b))
        fail_msg("%s: %dx%d maxval %d, %d channels; want %dx%d maxval %d, %d channels", what,
                 b->width, b->height, b->maxval, mmp_image_channels(b), a->width, a->height,
                 a->maxval, ch);
    const size_t n = (size_t)a->width * a->height * ch;
    for (size_t i = 0; i < n; i++)
        if (a->pix[i] != b->pix[i])
            fail_msg("%s: sample %zu of pixel (%zu,%zu) is %u, want %u", what, i % (size_t)ch,
                     i / (size_t)ch % (size_t)a->width, i / (size_t)ch / (size_t)a->width,
                     b->pix[i], a->pix[i]);
}

/* Settings of a quick encode: speed 4 (the fastest that still searches the
 * dictionary), a small dictionary, seq. */
static void quick_settings(mmp_settings *s, double lambda)
{
    mmp_default_settings(s);
    s->lambda = lambda;
    s->speed = 4;
    s->dict_cap = 128;
    s->engine = "seq";
    s->threads = 1;
}

static void encode_stats_or_fail(const mmp_settings *s, const mmp_image *img, uint8_t **buf,
                                 size_t *len, mmp_image *rec, mmp_enc_stats *st)
{
    char err[256] = "";
    memset(rec, 0, sizeof *rec);
    const int rc = mmp_encode(s, img, buf, len, rec, st, err, sizeof err);
    if (rc)
        fail_msg("encode %dx%d, %d channels, tiles %dx%d: %d %s", img->width, img->height,
                 mmp_image_channels(img), s->tile_width, s->tile_height, rc, err);
}

/* Decodes buf and requires want, sample for sample. */
static void assert_decodes_to_image(const char *what, const uint8_t *buf, size_t len,
                                    const mmp_image *want)
{
    mmp_image dec = {0};
    char err[256] = "";
    const int rc = mmp_decode(buf, len, &dec, err, sizeof err);
    if (rc)
        fail_msg("%s: decode: %d %s", what, rc, err);
    assert_same_image(what, want, &dec);
    mmp_image_free(&dec);
}

/* The tiles of a file: its container parsed (it must be valid). */
static void parse_or_fail(const uint8_t *buf, size_t len, mmp_container *c)
{
    char err[256] = "";
    if (mmp_container_parse(buf, len, c, err, sizeof err))
        fail_msg("the file does not parse: %s", err);
}

typedef struct tiled_case {
    const char *what;
    const char *file;   /* in images/ */
    int x0, y0, w, h;   /* the crop */
    int tile_w, tile_h;
    double lambda;
    int max_error;      /* -1 lossy */
    int chroma, alpha;
    int transform;      /* mmp_settings.transform */
} tiled_case;

/* Tiled encodes of several tile shapes, grey and colour (4:2:0 of odd
 * sizes), with alpha, lossless and near-lossless: each decodes to the
 * encoder's reconstruction; each tile's place and data are the container's;
 * a tile's data is the payload of its crop coded alone with the same
 * settings (the last tile: the smallest, of odd sides where the image has
 * them), where the crop has the file's colour transform (a reversible one
 * is chosen from the whole image, and the crop alone may choose another);
 * each tile decoded as a region is its crop of the reconstruction. */
static void test_tiled_roundtrip(void **state)
{
    (void)state;
    static const tiled_case cases[] = {
        {"grey 300x200, 128x128", "camera.pgm", 150, 150, 300, 200, 128, 128, 300, -1, 0, 0, 0},
        {"grey 300x200, 256x128", "camera.pgm", 150, 150, 300, 200, 256, 128, 300, -1, 0, 0, 0},
        {"grey 300x200, 128x256", "camera.pgm", 150, 150, 300, 200, 128, 256, 300, -1, 0, 0, 0},
        {"grey 300x200, 144x176", "camera.pgm", 150, 150, 300, 200, 144, 176, 300, -1, 0, 0, 0},
        {"grey 131x257, 128x128", "coins.pgm", 20, 30, 131, 257, 128, 128, 100, -1, 0, 0, 0},
        {"rgb 4:2:0 261x139", "colour/face.ppm", 101, 203, 261, 139, 128, 128, 100, -1,
         MMP_CHROMA_420, 0, 0},
        {"rgb 4:4:4 133x129", "colour/logo.ppm", 181, 97, 133, 129, 128, 128, 30, -1,
         MMP_CHROMA_444, 0, 0},
        {"rgba 4:2:0 197x141 exact alpha", "colour/logo-alpha.png", 151, 151, 197, 141, 128, 128,
         100, -1, MMP_CHROMA_420, MMP_ALPHA_EXACT, 0},
        {"rgba 4:4:4 141x133 mmp alpha", "colour/logo-alpha.png", 201, 61, 141, 133, 128, 128,
         100, -1, MMP_CHROMA_444, MMP_ALPHA_MMP, 0},
        {"grey lossless 283x149", "moon.pgm", 100, 100, 283, 149, 128, 128, 10, 0, 0, 0, 0},
        {"rgb lossless 139x131", "colour/motorcycle.ppm", 300, 200, 139, 131, 128, 128, 10, 0,
         MMP_CHROMA_444, 0, 0},
        {"rgb lossless 139x131 ycocg-r", "colour/motorcycle.ppm", 300, 200, 139, 131, 128, 128,
         10, 0, MMP_CHROMA_444, 0, MMP_TRANSFORM_YCOCG_R},
        {"grey near-lossless 2, 270x140", "brick.pgm", 10, 10, 270, 140, 128, 128, 10, 2, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tiled_case *tc = &cases[i];
        mmp_image img = {0}, rec;
        load_crop_all(tc->file, tc->x0, tc->y0, tc->w, tc->h, &img);
        mmp_settings s;
        quick_settings(&s, tc->lambda);
        s.tile_width = tc->tile_w;
        s.tile_height = tc->tile_h;
        s.max_error = tc->max_error;
        s.chroma = tc->chroma;
        s.transform = tc->transform;
        if (tc->alpha)
            s.alpha = tc->alpha;
        uint8_t *buf;
        size_t len;
        mmp_enc_stats st;
        const double t0 = now_seconds();
        encode_stats_or_fail(&s, &img, &buf, &len, &rec, &st);
        const double secs = now_seconds() - t0;
        const int cols = (tc->w + tc->tile_w - 1) / tc->tile_w;
        const int rows = (tc->h + tc->tile_h - 1) / tc->tile_h;
        assert_int_equal(st.tiles, cols * rows);
        assert_true(st.tiles > 1);
        assert_decodes_to_image(tc->what, buf, len, &rec);
        if (tc->max_error == 0)
            assert_same_image(tc->what, &img, &rec);
        /* The probe and the container. */
        mmp_file_info fi;
        assert_int_equal(mmp_probe(buf, len, &fi, NULL, 0), MMP_OK);
        assert_int_equal(fi.tiles, cols * rows);
        assert_int_equal(fi.tile_width, tc->tile_w);
        assert_int_equal(fi.tile_height, tc->tile_h);
        assert_int_equal(fi.chunks, 0);
        mmp_container c;
        parse_or_fail(buf, len, &c);
        assert_int_equal(c.ntiles, (uint32_t)(cols * rows));
        uint64_t sum = 0;
        for (uint32_t k = 0; k < c.ntiles; k++)
            sum += c.tiles[k].len;
        assert_int_equal(fi.payload_len, sum);
        /* Every tile decoded as a region. */
        for (uint32_t k = 0; k < c.ntiles; k++) {
            const mmp_tile *t = &c.tiles[k];
            mmp_image part = {0}, want = {0};
            char err[256] = "";
            if (mmp_decode_region(buf, len, (int)t->x, (int)t->y, (int)t->w, (int)t->h, 0, &part,
                                  err, sizeof err))
                fail_msg("%s: tile %u as a region: %s", tc->what, k, err);
            crop_all(&rec, (int)t->x, (int)t->y, (int)t->w, (int)t->h, &want);
            assert_same_image(tc->what, &want, &part);
            mmp_image_free(&part);
            mmp_image_free(&want);
        }
        /* The last tile coded alone: the same payload. */
        const mmp_tile *last = &c.tiles[c.ntiles - 1];
        mmp_image alone = {0}, alone_rec;
        crop_all(&img, (int)last->x, (int)last->y, (int)last->w, (int)last->h, &alone);
        mmp_settings s1 = s;
        s1.tile_width = s1.tile_height = 0;
        uint8_t *b1;
        size_t l1;
        mmp_enc_stats st1;
        encode_stats_or_fail(&s1, &alone, &b1, &l1, &alone_rec, &st1);
        assert_int_equal(st1.tiles, 1);
        mmp_file_info f1;
        assert_int_equal(mmp_probe(b1, l1, &f1, NULL, 0), MMP_OK);
        if (f1.transform != fi.transform) {
            /* Each the transform the estimate chose for its own image (a
             * reversible one, RGB or YCoCg-R). */
            assert_true(fi.max_error == 0 && f1.max_error == 0);
            print_message("%s: the last tile alone has transform %d, the file %d\n", tc->what,
                          f1.transform, fi.transform);
        } else if (l1 - MF_ONE_TILE != last->len ||
                   memcmp(b1 + MF_TILE_DATA, buf + last->offset, l1 - MF_ONE_TILE))
            fail_msg("%s: the last tile (%ux%u) is not its crop's payload coded alone "
                     "(%llu bytes, alone %zu)", tc->what, last->w, last->h,
                     (unsigned long long)last->len, l1 - MF_ONE_TILE);
        mmp_image want = {0};
        crop_all(&rec, (int)last->x, (int)last->y, (int)last->w, (int)last->h, &want);
        assert_same_image(tc->what, &want, &alone_rec);
        print_message("%-32s %d tiles, %6zu bytes, %.2f s\n", tc->what, st.tiles, len, secs);
        mmp_image_free(&want);
        mmp_image_free(&alone_rec);
        mmp_image_free(&alone);
        free(b1);
        mmp_container_free(&c);
        free(buf);
        mmp_image_free(&rec);
        mmp_image_free(&img);
    }
}

/* Automatic tiles: one up to MMP_AUTO_TILE a side, else tiles of equal
 * size, multiples of 16 (a lossless encode: no search). */
static void test_auto_tiles(void **state)
{
    (void)state;
    static const int sizes[][4] = {
        /* width, height, tile_w, tile_h */
        {1024, 8, 1024, 128},
        {1025, 8, 528, 128},
        {3000, 2, 1008, 128},
        {2049, 1, 688, 128},
        {100, 1030, 128, 528},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        mmp_image img;
        make_synthetic(&img, sizes[i][0], sizes[i][1], 255, 1, 40 + i);
        mmp_settings s;
        mmp_default_settings(&s);
        s.max_error = 0;
        uint8_t *buf;
        size_t len;
        mmp_image rec;
        mmp_enc_stats st;
        encode_stats_or_fail(&s, &img, &buf, &len, &rec, &st);
        mmp_file_info fi;
        assert_int_equal(mmp_probe(buf, len, &fi, NULL, 0), MMP_OK);
        if (fi.tile_width != sizes[i][2] || fi.tile_height != sizes[i][3])
            fail_msg("%dx%d: tiles of %dx%d, want %dx%d", sizes[i][0], sizes[i][1],
                     fi.tile_width, fi.tile_height, sizes[i][2], sizes[i][3]);
        assert_int_equal(st.tiles, fi.tiles);
        assert_true(fi.tile_width <= MMP_AUTO_TILE && fi.tile_height <= MMP_AUTO_TILE);
        assert_same_image("auto tiles", &img, &rec);
        assert_decodes_to_image("auto tiles", buf, len, &img);
        free(buf);
        mmp_image_free(&rec);
        mmp_image_free(&img);
    }
    /* Tile sides out of range are refused. */
    mmp_image img;
    make_synthetic(&img, 8, 8, 255, 0, 1);
    static const int bad[][2] = {{120, 128}, {128, 130}, {-16, 128}, {65552, 128}, {16, 16}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mmp_settings s;
        mmp_default_settings(&s);
        s.tile_width = bad[i][0];
        s.tile_height = bad[i][1];
        encode_refused(&s, &img, "tile sides");
    }
    mmp_image_free(&img);
}

/* What the progress callback saw: the last count, the total, and whether
 * a count ever went back or past the total. */
typedef struct progress_seen {
    int last, total, backwards;
} progress_seen;

static int count_progress(void *opaque, int done, int total)
{
    progress_seen *pg = opaque;
    if (done < pg->last || done > total || (pg->total && total != pg->total))
        pg->backwards = 1;
    pg->last = done;
    pg->total = total;
    return 0;
}

/* Every engine built in and able to start here gives seq's bytes for a
 * tiled encode: grey with each engine (omp at 1 and 3 threads, the
 * others at their default), colour 4:2:0 with the CPU engines (opencl's
 * start is slow where its device is a CPU). */
static void test_tiled_engines(void **state)
{
    (void)state;
    mmp_image img = {0};
    load_crop_all("camera.pgm", 180, 200, 300, 150, &img);
    mmp_image col = {0};
    load_crop_all("colour/face.ppm", 150, 150, 145, 140, &col);
    const mmp_image *imgs[2] = {&img, &col};
    for (int m = 0; m < 2; m++) {
        mmp_settings s;
        quick_settings(&s, 30);
        s.tile_width = 128;
        s.tile_height = 128;
        s.chroma = MMP_CHROMA_420;
        s.head_start = 0;
        uint8_t *ref;
        size_t rlen;
        mmp_image rec;
        mmp_enc_stats st;
        encode_stats_or_fail(&s, imgs[m], &ref, &rlen, &rec, &st);
        assert_true(st.tiles > 1);
        char ran[256] = "";
        for (int e = 0; e < mmp_engine_count(); e++) {
            const mmp_engine_ops *ops = mmp_engine_at(e);
            if (!strcmp(ops->name, "seq") || (m == 1 && !strcmp(ops->name, "opencl")))
                continue;
            void *probe = NULL;
            mmp_engine_config cfg = {.threads = 1};
            char why[256] = "";
            if (ops->create(&probe, &cfg, why, sizeof why)) {
                print_message("%s skipped: %s\n", ops->name, why);
                continue;
            }
            ops->destroy(probe);
            const int cpu = strcmp(ops->name, "opencl") != 0;
            static const int threads[] = {1, 3};
            for (int t = 0; t < (ops->concurrency && cpu ? 2 : 1); t++) {
                mmp_settings se = s;
                se.engine = ops->name;
                se.threads = ops->concurrency && cpu ? threads[t] : 0;
                uint8_t *buf;
                size_t len;
                mmp_image r2;
                mmp_enc_stats st2;
                encode_stats_or_fail(&se, imgs[m], &buf, &len, &r2, &st2);
                char who[64];
                snprintf(who, sizeof who, "%s -t %d", ops->name, se.threads);
                assert_same_bytes(m ? "tiled colour" : "tiled grey", s.lambda, who, ref, rlen, buf,
                                  len);
                assert_string_equal(st2.engine, ops->name);
                /* omp codes tiles at once (6 tiles on 3 threads: 3 of one
                 * thread; 4 on 3: 2 rounds of 2, faster than 2 rounds of 3
                 * with one thread each); opencl one after another. */
                assert_int_equal(st2.tile_workers,
                                 ops->concurrency && cpu && se.threads > 1 ? (m ? 2 : 3) : 1);
                assert_same_image(who, &rec, &r2);
                snprintf(ran + strlen(ran), sizeof ran - strlen(ran), "%s%s", ran[0] ? ", " : "",
                         who);
                free(buf);
                mmp_image_free(&r2);
            }
        }
        /* auto codes several tiles at once on the CPU, whatever device
         * it finds (mmp/enc/engine_start.h), with seq's bytes, and its
         * progress counts up every block of every tile. */
        if (mmp_engine_find("omp")) {
            mmp_settings se = s;
            se.engine = "auto";
            se.threads = 2;
            progress_seen pg = {0};
            se.progress = count_progress;
            se.progress_opaque = &pg;
            uint8_t *buf;
            size_t len;
            mmp_image r2;
            mmp_enc_stats st2;
            encode_stats_or_fail(&se, imgs[m], &buf, &len, &r2, &st2);
            assert_same_bytes(m ? "tiled colour" : "tiled grey", s.lambda, "auto -t 2", ref, rlen,
                              buf, len);
            assert_string_equal(st2.engine, "omp");
            assert_int_equal(st2.tile_workers, 2);
            assert_false(pg.backwards);
            assert_int_equal(pg.last, (int)st.blocks);
            assert_int_equal(pg.total, (int)st.blocks);
            free(buf);
            mmp_image_free(&r2);
        }
        print_message("%s in %d tiles: %s give seq's bytes\n",
                      m ? "colour 145x140" : "grey 300x150", st.tiles, ran[0] ? ran : "no other engine");
        free(ref);
        mmp_image_free(&rec);
    }
    mmp_image_free(&col);
    mmp_image_free(&img);
}

/* Decodes the window of buf; it must succeed and be that crop of full. */
static void region_ok(const uint8_t *buf, size_t len, const mmp_image *full, int x, int y, int w,
                      int h)
{
    mmp_image part = {0}, want = {0};
    char err[256] = "", what[96];
    snprintf(what, sizeof what, "region %dx%d at %d,%d", w, h, x, y);
    const int rc = mmp_decode_region(buf, len, x, y, w, h, 0, &part, err, sizeof err);
    if (rc)
        fail_msg("%s: %d %s", what, rc, err);
    crop_all(full, x, y, w, h, &want);
    assert_same_image(what, &want, &part);
    mmp_image_free(&part);
    mmp_image_free(&want);
}

/* The region must be refused with code, and nothing allocated. */
static void region_refused(const uint8_t *buf, size_t len, int x, int y, int w, int h,
                           uint64_t max_pixels, int code, const char *needle)
{
    mmp_image part;
    memset(&part, 0x5a, sizeof part);
    char err[256] = "";
    const int rc = mmp_decode_region(buf, len, x, y, w, h, max_pixels, &part, err, sizeof err);
    if (rc != code || (needle && !strstr(err, needle)))
        fail_msg("region %dx%d at %d,%d (max %llu): %d '%s', want %d '%s'", w, h, x, y,
                 (unsigned long long)max_pixels, rc, err, code, needle ? needle : "");
    assert_null(part.pix);
    assert_true(err[0] && !strchr(err, '\n'));
}

/* mmp_decode_region: windows of every kind give the crop of the whole
 * decode, windows outside are refused, the limit bounds the window; and
 * only the tiles a window touches are decoded: with one tile's payload
 * corrupt (its CRC right), the whole decode fails, windows that miss the
 * tile succeed, windows that touch it fail. */
static void test_region(void **state)
{
    (void)state;
    mmp_image grey = {0}, col = {0};
    load_crop_all("camera.pgm", 150, 150, 300, 200, &grey);
    load_crop_all("colour/face.ppm", 101, 203, 261, 139, &col);
    const mmp_image *imgs[2] = {&grey, &col};
    for (int m = 0; m < 2; m++) {
        const mmp_image *img = imgs[m];
        const int W = img->width, H = img->height;
        mmp_settings s;
        quick_settings(&s, 300);
        s.tile_width = s.tile_height = 128;
        s.chroma = MMP_CHROMA_420;
        uint8_t *buf;
        size_t len;
        mmp_image rec;
        mmp_enc_stats st;
        encode_stats_or_fail(&s, img, &buf, &len, &rec, &st);
        assert_int_equal(st.tiles, 6);
        assert_decodes_to_image("the whole", buf, len, &rec);
        const int windows[][4] = {
            {0, 0, W, H},           {0, 0, 1, 1},         {W - 1, H - 1, 1, 1},
            {127, 127, 2, 2},       {128, 0, 128, 128},   {100, 50, W - 100, H - 60},
            {W - 1, 0, 1, H},       {0, H - 1, W, 1},     {0, 128, W, H - 128},
            {129, 1, 126, 126},     {255, 127, 3, 3},     {3, 5, 125, 123},
        };
        for (size_t k = 0; k < sizeof windows / sizeof windows[0]; k++)
            region_ok(buf, len, &rec, windows[k][0], windows[k][1], windows[k][2], windows[k][3]);
        rng_seed(77 + m);
        for (int k = 0; k < 24; k++) {
            const int x = (int)rng_below((size_t)W), y = (int)rng_below((size_t)H);
            const int w = 1 + (int)rng_below((size_t)(W - x)), h = 1 + (int)rng_below((size_t)(H - y));
            region_ok(buf, len, &rec, x, y, w, h);
        }
        /* Windows not inside the image. */
        const int outside[][4] = {
            {-1, 0, 2, 2}, {0, -1, 2, 2}, {0, 0, 0, 5},  {0, 0, 5, 0},       {0, 0, -3, 5},
            {W, 0, 1, 1},  {0, H, 1, 1},  {1, 0, W, 1},  {0, 1, 1, H},       {W - 1, 0, 2, 1},
            {0, 0, 0x7fffffff, 1},        {0x7fffffff, 0, 0x7fffffff, 1},    {0, 0x7fffffff, 1, 0x7fffffff},
        };
        for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++)
            region_refused(buf, len, outside[k][0], outside[k][1], outside[k][2], outside[k][3],
                           0, MMP_EINVAL, NULL);
        /* The limit is on the window, not the image. */
        mmp_image part = {0};
        assert_int_equal(mmp_decode_region(buf, len, 10, 10, 10, 10, 100, &part, NULL, 0), MMP_OK);
        mmp_image_free(&part);
        region_refused(buf, len, 10, 10, 10, 11, 100, MMP_ELIMIT, "exceeds the limit of 100 pixels");
        assert_int_equal(mmp_decode_limited(buf, len, (uint64_t)W * H - 1, &part, NULL, 0),
                         MMP_ELIMIT);
        /* No image to decode into; a damaged file. */
        assert_int_equal(mmp_decode_region(buf, len, 0, 0, 1, 1, 0, NULL, NULL, 0), MMP_EINVAL);
        buf[len - 1] ^= 1;
        region_refused(buf, len, 0, 0, 1, 1, 0, MMP_EBITSTREAM, "CRC mismatch in TILE chunk");
        buf[len - 1] ^= 1;

        /* Tile 4 (the middle of the second row) and then tile 0 emptied. */
        mmp_container c;
        parse_or_fail(buf, len, &c);
        assert_int_equal(c.ntiles, 6);
        for (int bad = 4; bad >= 0; bad -= 4) {
            uint8_t *cor;
            size_t clen;
            const uint8_t nothing = 0;
            rewrite_tile(buf, len, bad, &nothing, 0, &cor, &clen);
            mmp_image out = {0};
            char err[256] = "", want[64];
            const int rc = mmp_decode(cor, clen, &out, err, sizeof err);
            snprintf(want, sizeof want, "(tile %d)", bad);
            if (rc != MMP_EBITSTREAM || !strstr(err, want))
                fail_msg("tile %d emptied: the whole decode gives %d '%s'", bad, rc, err);
            assert_null(out.pix);
            const mmp_tile *t = &c.tiles[bad];
            for (uint32_t k = 0; k < c.ntiles; k++) {
                if ((int)k == bad)
                    continue;
                const mmp_tile *o = &c.tiles[k];
                region_ok(cor, clen, &rec, (int)o->x, (int)o->y, (int)o->w, (int)o->h);
            }
            /* The rows above or below the bad tile, the columns left or right. */
            if (t->y > 0)
                region_ok(cor, clen, &rec, 0, 0, W, (int)t->y);
            else
                region_ok(cor, clen, &rec, 0, (int)(t->y + t->h), W, H - (int)(t->y + t->h));
            region_refused(cor, clen, (int)t->x, (int)t->y, 1, 1, 0, MMP_EBITSTREAM, want);
            region_refused(cor, clen, (int)t->x + (int)t->w - 1, (int)t->y + (int)t->h - 1, 2, 1, 0,
                           MMP_EBITSTREAM, want);
            free(cor);
        }
        mmp_container_free(&c);
        free(buf);
        mmp_image_free(&rec);
    }
    /* A file of one tile: regions too. */
    mmp_image small = {0}, rec;
    crop_all(&grey, 0, 0, 40, 30, &small);
    mmp_settings s;
    quick_settings(&s, 30);
    uint8_t *buf;
    size_t len;
    mmp_enc_stats st;
    encode_stats_or_fail(&s, &small, &buf, &len, &rec, &st);
    region_ok(buf, len, &rec, 0, 0, 40, 30);
    region_ok(buf, len, &rec, 7, 9, 20, 3);
    region_refused(buf, len, 0, 0, 41, 30, 0, MMP_EINVAL, "region 41x30 at 0,0 is not inside");
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&small);
    mmp_image_free(&col);
    mmp_image_free(&grey);
}

/* Ancillary chunks: what mmp_encode is given, mmp_chunks returns byte for
 * byte and in order (types this library does not know included); the
 * payload is the same as without them; they come before the tile index;
 * bad chunks are refused. */
static void test_chunks(void **state)
{
    (void)state;
    mmp_image img;
    make_synthetic(&img, 150, 20, 255, 1, 5);
    static uint8_t icc[1000], exif[64];
    rng_seed(3);
    for (size_t i = 0; i < sizeof icc; i++)
        icc[i] = (uint8_t)rng_next();
    for (size_t i = 0; i < sizeof exif; i++)
        exif[i] = (uint8_t)(i * 7);
    static const char text[] = "Comment\0a tiled test image";
    static const char xmp[] = "<x:xmpmeta xmlns:x='adobe:ns:meta/'></x:xmpmeta>";
    const mmp_chunk chunks[] = {
        {MMP_CHUNK_ICC, icc, sizeof icc},
        {MMP_CHUNK_EXIF, exif, sizeof exif},
        {MMP_CHUNK_XMP, (const uint8_t *)xmp, sizeof xmp - 1},
        {MMP_CHUNK_TEXT, (const uint8_t *)text, sizeof text - 1},
        {MMP_CHUNK_SRGB, (const uint8_t *)"\0", 1},
        {"zzzz", (const uint8_t *)"unknown to everyone", 19},
        {"abcD", NULL, 0},
        {MMP_CHUNK_TEXT, (const uint8_t *)"Author\0me", 9},
    };
    const int nch = (int)(sizeof chunks / sizeof chunks[0]);
    for (int tiled = 0; tiled < 2; tiled++) {
        mmp_settings s;
        quick_settings(&s, 100);
        s.tile_width = tiled ? 128 : 0;
        s.tile_height = tiled ? 128 : 0;
        uint8_t *plain, *buf;
        size_t plen, len;
        mmp_image rec0, rec;
        mmp_enc_stats st;
        encode_stats_or_fail(&s, &img, &plain, &plen, &rec0, &st);
        s.chunks = chunks;
        s.nchunks = nch;
        encode_stats_or_fail(&s, &img, &buf, &len, &rec, &st);
        assert_int_equal(st.tiles, tiled ? 2 : 1);
        mmp_chunk got[16];
        memset(got, 0, sizeof got);
        char err[256] = "";
        assert_int_equal(mmp_chunks(buf, len, got, 16, err, sizeof err), nch);
        for (int i = 0; i < nch; i++) {
            assert_string_equal(got[i].type, chunks[i].type);
            assert_int_equal(got[i].len, chunks[i].len);
            if (chunks[i].len)
                assert_memory_equal(got[i].data, chunks[i].data, chunks[i].len);
            assert_true(got[i].data >= buf && got[i].data + got[i].len <= buf + len);
        }
        /* Fewer asked for: the count, and only those filled. */
        mmp_chunk few[4];
        memset(few, 0x5a, sizeof few);
        assert_int_equal(mmp_chunks(buf, len, few, 3, NULL, 0), nch);
        assert_string_equal(few[2].type, chunks[2].type);
        assert_int_equal(few[3].len, (size_t)0x5a5a5a5a5a5a5a5aull);
        assert_int_equal(mmp_chunks(buf, len, NULL, 0, NULL, 0), nch);
        assert_int_equal(mmp_chunks(buf, len, NULL, 1, err, sizeof err), MMP_EINVAL);
        assert_int_equal(mmp_chunks(buf, len, got, -1, err, sizeof err), MMP_EINVAL);
        assert_int_equal(mmp_chunks(plain, plen, got, 16, NULL, 0), 0);
        /* The probe counts them; the image and the tiles' data are the same
         * as without them. */
        mmp_file_info fi;
        assert_int_equal(mmp_probe(buf, len, &fi, NULL, 0), MMP_OK);
        assert_int_equal(fi.chunks, nch);
        assert_same_image("with chunks", &rec0, &rec);
        assert_decodes_to_image("with chunks", buf, len, &rec0);
        mmp_container a, b;
        parse_or_fail(plain, plen, &a);
        parse_or_fail(buf, len, &b);
        assert_int_equal(a.ntiles, b.ntiles);
        for (uint32_t k = 0; k < a.ntiles; k++) {
            assert_int_equal(a.tiles[k].len, b.tiles[k].len);
            assert_memory_equal(plain + a.tiles[k].offset, buf + b.tiles[k].offset,
                                (size_t)a.tiles[k].len);
        }
        /* In the file: after HEAD, before the index and the tiles. */
        chunk_ref list[32];
        const int n = chunk_walk(buf, len, list, 32);
        assert_int_equal(n, 1 + nch + (tiled ? 1 : 0) + b.ntiles);
        assert_string_equal(list[0].type, "HEAD");
        for (int i = 0; i < nch; i++)
            assert_string_equal(list[1 + i].type, chunks[i].type);
        assert_string_equal(list[1 + nch].type, tiled ? "TIDX" : "TILE");
        /* A damaged file: the error, not the chunks. */
        buf[list[1].at + 9] ^= 4;
        err[0] = 0;
        assert_int_equal(mmp_chunks(buf, len, got, 16, err, sizeof err), MMP_EBITSTREAM);
        assert_non_null(strstr(err, "CRC mismatch in iccp chunk"));
        buf[list[1].at + 9] ^= 4;
        /* An ancillary chunk of an unknown type added by another writer
         * (and the chunks kept): listed, and the file decodes. */
        mmp_extra_in x[16];
        for (uint32_t i = 0; i < b.nextra; i++) {
            memcpy(x[i].type, b.extra[i].type, 4);
            x[i].data = buf + b.extra[i].offset;
            x[i].len = (size_t)b.extra[i].len;
        }
        static const uint8_t q[] = {0, 1, 2, 255};
        memcpy(x[b.nextra].type, "qUUx", 4);
        x[b.nextra].data = q;
        x[b.nextra].len = sizeof q;
        const uint8_t *td[2];
        size_t tl[2];
        for (uint32_t k = 0; k < b.ntiles; k++) {
            td[k] = buf + b.tiles[k].offset;
            tl[k] = (size_t)b.tiles[k].len;
        }
        uint8_t *other;
        size_t olen;
        assert_int_equal(mmp_container_write(&b.h, td, tl, b.ntiles, x, b.nextra + 1, &other,
                                             &olen),
                         MMP_OK);
        assert_int_equal(mmp_chunks(other, olen, got, 16, NULL, 0), nch + 1);
        assert_string_equal(got[nch].type, "qUUx");
        assert_int_equal(got[nch].len, sizeof q);
        assert_memory_equal(got[nch].data, q, sizeof q);
        assert_decodes_to_image("an unknown chunk", other, olen, &rec0);
        free(other);
        mmp_container_free(&a);
        mmp_container_free(&b);
        free(plain);
        free(buf);
        mmp_image_free(&rec0);
        mmp_image_free(&rec);
    }
    /* Chunks the encoder refuses. */
    mmp_settings s;
    quick_settings(&s, 100);
    const mmp_chunk critical = {"ICCP", icc, 4}, digit = {"ic1p", icc, 4}, nodata = {"iccp", NULL, 5};
    s.nchunks = 1;
    s.chunks = &critical;
    encode_refused(&s, &img, "ancillary type");
    s.chunks = &digit;
    encode_refused(&s, &img, "ancillary type");
    s.chunks = &nodata;
    encode_refused(&s, &img, "ancillary type");
    s.chunks = NULL;
    encode_refused(&s, &img, "chunks");
    s.chunks = chunks;
    s.nchunks = -1;
    encode_refused(&s, &img, "chunks");
    mmp_chunk *many = calloc(MMP_MAX_EXTRA_CHUNKS + 1, sizeof *many);
    assert_non_null(many);
    for (int i = 0; i <= MMP_MAX_EXTRA_CHUNKS; i++)
        memcpy(many[i].type, "text", 5);
    s.chunks = many;
    s.nchunks = MMP_MAX_EXTRA_CHUNKS + 1;
    encode_refused(&s, &img, "chunks");
    /* As many as allowed. */
    s.nchunks = MMP_MAX_EXTRA_CHUNKS;
    uint8_t *buf;
    size_t len;
    mmp_image rec;
    mmp_enc_stats st;
    encode_stats_or_fail(&s, &img, &buf, &len, &rec, &st);
    assert_int_equal(mmp_chunks(buf, len, NULL, 0, NULL, 0), MMP_MAX_EXTRA_CHUNKS);
    free(buf);
    mmp_image_free(&rec);
    free(many);
    mmp_image_free(&img);
}

int main(void)
{
    static const char *names[] = {"camera", "ascent", "moon", "brick",
                                  "grass",  "coins",  "page", "text"};
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_errors),
        cmocka_unit_test(test_decode_bad),
        cmocka_unit_test(test_decode_hostile_payload),
        cmocka_unit_test(test_tiled_roundtrip),
        cmocka_unit_test(test_auto_tiles),
        cmocka_unit_test(test_tiled_engines),
        cmocka_unit_test(test_region),
        cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_tiny_sizes),
        cmocka_unit_test(test_16bit),
        {"crops_camera", test_image_crops, NULL, NULL, (void *)names[0]},
        {"crops_ascent", test_image_crops, NULL, NULL, (void *)names[1]},
        {"crops_moon", test_image_crops, NULL, NULL, (void *)names[2]},
        {"crops_brick", test_image_crops, NULL, NULL, (void *)names[3]},
        {"crops_grass", test_image_crops, NULL, NULL, (void *)names[4]},
        {"crops_coins", test_image_crops, NULL, NULL, (void *)names[5]},
        {"crops_page", test_image_crops, NULL, NULL, (void *)names[6]},
        {"crops_text", test_image_crops, NULL, NULL, (void *)names[7]},
        cmocka_unit_test(test_crops_mostly_strict),
        cmocka_unit_test(test_page_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
