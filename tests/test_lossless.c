/*
 * Lossless and near-lossless files (docs/format.md section 7.6) and lambda
 * on the 8-bit scale at every maxval: decoded samples equal to the input
 * for maxval 1 to 65535, grey, colour and alpha, noise included, with the
 * residual stage alone and after MMP; every sample within N for
 * --max-error N; the header's bound; rate and PSNR falling with lambda at
 * 16 bits; a 1-bit image that comes back nearly right at the default lambda;
 * the residual stage's mixing coder on and off, and its residual context on
 * and off (grey and colour, one tile and two).
 * Crops of 32 x 32 and smaller keep it under a few seconds (96 x 96 and
 * 144 x 128 for the residual stage's tools, whose gains need the area).
 * The sample comparisons are made here, not by the codec's own metrics.
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

#include "mmp/mmp.h"
#include "util.h"

/* The 32 x 32 crop of camera.pgm at (200, 100), rescaled to maxval with
 * rounding (maxval 1: a threshold at mid-grey), in `channels` channels: the
 * others are the crop shifted by a few pixels, alpha a ramp. */
static void camera_at(mmp_image *img, int maxval, int channels)
{
    mmp_image src = {0};
    load_image("camera", &src);
    assert_int_equal(mmp_image_alloc_channels(img, 32, 32, channels, maxval), MMP_OK);
    for (int y = 0; y < 32; y++)
        for (int x = 0; x < 32; x++)
            for (int c = 0; c < channels; c++) {
                const int v8 = src.pix[(size_t)(100 + y + 3 * c) * src.width + 200 + x + 2 * c];
                const int v = c == 3 ? (x + y) * maxval / 62
                                     : (int)(((int64_t)v8 * maxval + 127) / 255);
                img->pix[((size_t)y * 32 + x) * channels + c] = (uint16_t)v;
            }
    mmp_image_free(&src);
}

/* Uniform noise over [0, maxval]: nothing to predict. */
static void noise_at(mmp_image *img, int w, int h, int maxval, int channels, uint64_t seed)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, channels, maxval), MMP_OK);
    rng_seed(seed);
    for (size_t i = 0; i < (size_t)w * h * channels; i++)
        img->pix[i] = (uint16_t)(rng_next() % ((uint32_t)maxval + 1));
}

/* HEAD's tools (docs/format.md section 2) of the last file encode_decode
 * wrote. */
static uint32_t last_tools;

/* Encode with the seq engine, decode, and check that the decoder gives the
 * encoder's reconstruction; returns the largest sample error of the decoded
 * image against img and the file's size; last_tools gets its tools. */
static int encode_decode(const mmp_image *img, const mmp_settings *s, size_t *bytes,
                         double *psnr, mmp_file_info *info)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_image rec = {0}, dec = {0};
    char err[256] = "";
    const int rc = mmp_encode(s, img, &buf, &len, &rec, NULL, err, sizeof err);
    if (rc)
        fail_msg("encode: %d %s", rc, err);
    if (mmp_decode(buf, len, &dec, err, sizeof err))
        fail_msg("decode: %s", err);
    if (info && mmp_probe(buf, len, info, err, sizeof err))
        fail_msg("probe: %s", err);
    assert_true(len > MF_TOOLS + 4);
    last_tools = get32(buf + MF_TOOLS);
    const size_t n = (size_t)img->width * img->height * mmp_image_channels(img);
    assert_int_equal(dec.channels, mmp_image_channels(img));
    assert_int_equal(dec.maxval, img->maxval);
    assert_memory_equal(dec.pix, rec.pix, n * sizeof(uint16_t));
    int worst = 0;
    double ssd = 0;
    for (size_t i = 0; i < n; i++) {
        const int d = abs((int)dec.pix[i] - (int)img->pix[i]);
        worst = d > worst ? d : worst;
        ssd += (double)d * d;
    }
    if (psnr)
        *psnr = ssd ? 10 * log10((double)img->maxval * img->maxval * (double)n / ssd) : INFINITY;
    if (bytes)
        *bytes = len;
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
    return worst;
}

static void settings(mmp_settings *s, int max_error, int residual, double lambda)
{
    mmp_default_settings(s);
    s->engine = "seq";
    s->threads = 1;
    s->max_error = max_error;
    s->residual = residual;
    s->lambda = lambda;
}

/* Decoded samples equal to the input, byte for byte, at every maxval the
 * issue names, on a crop and on noise, grey, colour and with alpha. */
static void test_lossless_maxvals(void **state)
{
    (void)state;
    static const int maxvals[] = {1, 255, 256, 1023, 4095, 65535};
    static const int channels[] = {1, 2, 3, 4};
    for (size_t m = 0; m < sizeof maxvals / sizeof maxvals[0]; m++)
        for (size_t c = 0; c < sizeof channels / sizeof channels[0]; c++)
            for (int noise = 0; noise < 2; noise++) {
                mmp_image img;
                if (noise)
                    noise_at(&img, 19, 13, maxvals[m], channels[c], 17 + m);
                else
                    camera_at(&img, maxvals[m], channels[c]);
                mmp_settings s;
                settings(&s, 0, MMP_RESIDUAL_AUTO, 10);
                mmp_file_info fi;
                size_t bytes;
                assert_int_equal(encode_decode(&img, &s, &bytes, NULL, &fi), 0);
                assert_int_equal(fi.max_error, 0);
                assert_int_not_equal(fi.residual, MMP_RESIDUAL_NONE);
                /* Lossless colour: the reversible colour transform the
                 * encoder picks up to maxval 32767 (MMP_TRANSFORM_RCT +
                 * 0..41 with tools bit 4, or RGB and YCoCg-R, two of the
                 * 42, without it), else no transform. */
                if (channels[c] >= 3 && maxvals[m] <= 32767) {
                    const int rct = fi.transform >= MMP_TRANSFORM_RCT;
                    if (rct)
                        assert_in_range(fi.transform, MMP_TRANSFORM_RCT, MMP_TRANSFORM_RCT + 41);
                    else
                        assert_true(fi.transform == MMP_TRANSFORM_RGB ||
                                    fi.transform == MMP_TRANSFORM_YCOCG_R);
                    assert_int_equal(last_tools & MMP_TOOL_RCT, rct ? MMP_TOOL_RCT : 0);
                } else if (channels[c] >= 3) {
                    assert_int_equal(fi.transform, MMP_TRANSFORM_RGB);
                }
                print_message("lossless maxval %5d, %d channels, %s: %zu bytes\n", maxvals[m],
                              channels[c], noise ? "noise" : "camera", bytes);
                mmp_image_free(&img);
            }
}

/* The file of s for img, failing the test on an error. */
static uint8_t *encode_file(const mmp_image *img, const mmp_settings *s, size_t *len)
{
    uint8_t *buf = NULL;
    char err[256] = "";
    if (mmp_encode(s, img, &buf, len, NULL, NULL, err, sizeof err))
        fail_msg("encode: %s", err);
    return buf;
}

/* The residual stage after MMP is lossless too, at a low and a high lambda,
 * and the lossy stage's lambda changes the bytes but not the samples; the
 * omp engine writes seq's bytes. */
static void test_lossless_after_mmp(void **state)
{
    (void)state;
    static const int maxvals[] = {1, 255, 65535};
    for (size_t m = 0; m < 3; m++)
        for (int channels = 1; channels <= 3; channels += 2) {
            mmp_image img;
            camera_at(&img, maxvals[m], channels);
            size_t bytes[2];
            for (int l = 0; l < 2; l++) {
                mmp_settings s;
                settings(&s, 0, MMP_RESIDUAL_AFTER_MMP, l ? 1000 : 10);
                mmp_file_info fi;
                assert_int_equal(encode_decode(&img, &s, &bytes[l], NULL, &fi), 0);
                assert_int_equal(fi.residual, MMP_RESIDUAL_AFTER_MMP);
            }
            if (mmp_engine_exists("omp")) {
                mmp_settings s;
                settings(&s, 0, MMP_RESIDUAL_AFTER_MMP, 10);
                size_t la, lb;
                uint8_t *a = encode_file(&img, &s, &la);
                s.engine = "omp";
                s.threads = 2;
                uint8_t *b = encode_file(&img, &s, &lb);
                assert_same_bytes("lossless after MMP", 10, "omp", a, la, b, lb);
                free(a);
                free(b);
            }
            /* (At maxval 1 both lambdas leave MMP next to exact.) */
            if (maxvals[m] > 1)
                assert_int_not_equal(bytes[0], bytes[1]);
            mmp_image_free(&img);
        }
}

/* Every sample within N, guaranteed by the encoder, for N = 1, 2 and 7,
 * both residual codings, grey and colour, 8 and 16 bits, and the header
 * carries N. A larger N gives a smaller file. */
static void test_near_lossless(void **state)
{
    (void)state;
    static const int bounds[] = {1, 2, 7};
    static const int maxvals[] = {255, 65535};
    for (size_t m = 0; m < 2; m++)
        for (int channels = 1; channels <= 4; channels += 3)
            for (int residual = MMP_RESIDUAL_AFTER_MMP; residual <= MMP_RESIDUAL_ALONE;
                 residual++) {
                mmp_image img;
                camera_at(&img, maxvals[m], channels);
                size_t prev = SIZE_MAX;
                for (size_t b = 0; b < 3; b++) {
                    mmp_settings s;
                    settings(&s, bounds[b], residual, 100);
                    mmp_file_info fi;
                    size_t bytes;
                    const int worst = encode_decode(&img, &s, &bytes, NULL, &fi);
                    print_message("max error %d, maxval %d, %d channels, residual %d: worst %d, "
                                  "%zu bytes\n",
                                  bounds[b], maxvals[m], channels, residual, worst, bytes);
                    assert_true(worst <= bounds[b]);
                    assert_int_equal(fi.max_error, bounds[b]);
                    if (channels >= 3)
                        assert_int_equal(fi.transform, MMP_TRANSFORM_RGB);
                    assert_true(bytes < prev);
                    prev = bytes;
                }
                mmp_image_free(&img);
            }
    /* Noise, where the quantiser does all the work. */
    mmp_image img;
    noise_at(&img, 23, 11, 1023, 1, 5);
    for (size_t b = 0; b < 3; b++) {
        mmp_settings s;
        settings(&s, bounds[b], MMP_RESIDUAL_AUTO, 10);
        assert_true(encode_decode(&img, &s, NULL, NULL, NULL) <= bounds[b]);
    }
    mmp_image_free(&img);
}

/* The 96 x 96 crop of camera.pgm at (200, 150), grey. */
static void camera96(mmp_image *img)
{
    mmp_image src = {0};
    load_image("camera", &src);
    assert_int_equal(mmp_image_alloc_channels(img, 96, 96, 1, 255), MMP_OK);
    for (int y = 0; y < 96; y++)
        memcpy(img->pix + (size_t)y * 96, src.pix + (size_t)(150 + y) * src.width + 200,
               96 * sizeof(uint16_t));
    mmp_image_free(&src);
}

/* The residual stage's mixing coder (format 1.2, HEAD tools bit 2): the
 * default for lossless and near-lossless files, alone and after MMP, and
 * residual_mix -1 writes the count models of format 1.0 (no tool bit, and
 * no residual context either);
 * both keep the bound, and on a photograph's crop of 96 x 96 the mixing
 * coder's file is the smaller. Lossy files never set the bit (their
 * bytes do not depend on the setting); other values are refused. */
static void test_residual_mix(void **state)
{
    (void)state;
    mmp_image img;
    camera96(&img);
    static const int bounds[] = {0, 2};
    for (size_t b = 0; b < 2; b++)
        for (int residual = MMP_RESIDUAL_AFTER_MMP; residual <= MMP_RESIDUAL_ALONE; residual++) {
            size_t bytes[2];
            for (int mix = 0; mix < 2; mix++) {
                mmp_settings s;
                settings(&s, bounds[b], residual, 100);
                s.residual_mix = mix ? 0 : -1;
                mmp_file_info fi;
                assert_true(encode_decode(&img, &s, &bytes[mix], NULL, &fi) <= bounds[b]);
                assert_int_equal(fi.residual_mix, mix);
                assert_int_equal(fi.residual_context, mix);
                assert_int_equal(fi.version_minor, MMP_FORMAT_MINOR);
            }
            print_message("max error %d, residual %d: count models %zu bytes, mixing %zu\n",
                          bounds[b], residual, bytes[0], bytes[1]);
            assert_true(bytes[1] < bytes[0]);
        }
    size_t lossy[2];
    for (int mix = 0; mix < 2; mix++) {
        mmp_settings s;
        settings(&s, -1, MMP_RESIDUAL_AUTO, 100);
        s.residual_mix = mix ? 0 : -1;
        mmp_file_info fi;
        encode_decode(&img, &s, &lossy[mix], NULL, &fi);
        assert_int_equal(fi.residual_mix, 0);
        assert_int_equal(fi.residual_context, 0);
    }
    assert_int_equal(lossy[0], lossy[1]);
    mmp_settings s;
    settings(&s, 0, MMP_RESIDUAL_AUTO, 10);
    s.residual_mix = 1;
    uint8_t *buf = NULL;
    size_t len = 0;
    char err[256] = "";
    assert_int_equal(mmp_encode(&s, &img, &buf, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_non_null(strstr(err, "residual_mix"));
    mmp_image_free(&img);
}

/* The residual stage's tools bits of the last file encode_decode wrote. */
#define RESIDUAL_TOOLS (last_tools & (MMP_TOOL_RESIDUAL_MIX | MMP_TOOL_RESIDUAL_CONTEXT))

/* The residual context (format 1.3, HEAD tools bit 3): the default with the
 * mixing coder, on the 96 x 96 grey crop and a 64 x 64 colour crop (whose
 * later planes read the plane before as the guide), lossless and with max
 * error 2, alone and after MMP. residual_context 0 sets the bit (and
 * mmp_probe's residual_context, in a file of the current version), -1 clears it
 * (the mixing coder's bit stays), and both keep the bound; the context's
 * file is the smaller with the residual stage alone, and no more than 1 %
 * larger after MMP. residual_mix -1 sets neither bit; lossy files never set it
 * (their bytes do not depend on the setting); other values are refused by
 * name. */
static void test_residual_context(void **state)
{
    (void)state;
    mmp_image imgs[2];
    camera96(&imgs[0]);
    load_crop_all("colour/face.ppm", 150, 150, 64, 64, &imgs[1]);
    static const int bounds[] = {0, 2};
    for (int colour = 0; colour < 2; colour++)
        for (size_t b = 0; b < 2; b++)
            for (int residual = MMP_RESIDUAL_AFTER_MMP; residual <= MMP_RESIDUAL_ALONE;
                 residual++) {
                size_t bytes[2];
                for (int on = 0; on < 2; on++) {
                    mmp_settings s;
                    settings(&s, bounds[b], residual, 100);
                    s.residual_context = on ? 0 : -1;
                    mmp_file_info fi;
                    assert_true(encode_decode(&imgs[colour], &s, &bytes[on], NULL, &fi) <=
                                bounds[b]);
                    assert_int_equal(fi.residual, residual);
                    assert_int_equal(fi.residual_mix, 1);
                    assert_int_equal(fi.residual_context, on);
                    assert_int_equal(fi.version_minor, MMP_FORMAT_MINOR);
                    assert_int_equal(RESIDUAL_TOOLS,
                                     MMP_TOOL_RESIDUAL_MIX | (on ? MMP_TOOL_RESIDUAL_CONTEXT : 0));
                }
                print_message("%s, max error %d, residual %d: without the context %zu bytes, "
                              "with it %zu\n",
                              colour ? "colour" : "grey", bounds[b], residual, bytes[0], bytes[1]);
                /* Alone, the local blend and the deviations' set come in and
                 * the file is the smaller; after MMP only the guide informs
                 * (a grey plane has none), and the file stays within 1 %. */
                if (residual == MMP_RESIDUAL_ALONE)
                    assert_true(bytes[1] < bytes[0]);
                else
                    assert_true(bytes[1] * 100 <= bytes[0] * 101);
            }
    /* The count models: neither bit, whatever residual_context says. */
    for (int colour = 0; colour < 2; colour++) {
        mmp_settings s;
        settings(&s, 0, MMP_RESIDUAL_ALONE, 100);
        s.residual_mix = -1;
        s.residual_context = 0;
        mmp_file_info fi;
        assert_int_equal(encode_decode(&imgs[colour], &s, NULL, NULL, &fi), 0);
        assert_int_equal(fi.residual_mix, 0);
        assert_int_equal(fi.residual_context, 0);
        assert_int_equal(RESIDUAL_TOOLS, 0);
    }
    /* Lossy: no bit, the same bytes either way. */
    for (int colour = 0; colour < 2; colour++) {
        uint8_t *lossy[2];
        size_t len[2];
        for (int on = 0; on < 2; on++) {
            mmp_settings s;
            settings(&s, -1, MMP_RESIDUAL_AUTO, 100);
            s.residual_context = on ? 0 : -1;
            encode_settings_or_fail(&s, &imgs[colour], &lossy[on], &len[on], NULL);
            assert_int_equal(get32(lossy[on] + MF_TOOLS) & MMP_TOOL_RESIDUAL_CONTEXT, 0);
        }
        assert_int_equal(len[0], len[1]);
        assert_memory_equal(lossy[0], lossy[1], len[0]);
        free(lossy[0]);
        free(lossy[1]);
    }
    static const int bad[] = {1, -2};
    for (size_t i = 0; i < 2; i++) {
        mmp_settings s;
        settings(&s, 0, MMP_RESIDUAL_AUTO, 10);
        s.residual_context = bad[i];
        uint8_t *buf = NULL;
        size_t len = 0;
        char err[256] = "";
        assert_int_equal(mmp_encode(&s, &imgs[0], &buf, &len, NULL, NULL, err, sizeof err),
                         MMP_EINVAL);
        assert_non_null(strstr(err, "residual_context"));
        assert_null(buf);
    }
    mmp_image_free(&imgs[0]);
    mmp_image_free(&imgs[1]);
}

/* The residual context in a lossless colour image of two tiles (144 x 128
 * in tiles of 128 x 128), alone and after MMP: each tile's later planes
 * read that tile's plane before as the guide, and the image decodes
 * exactly; without the context the tiles' bytes differ. */
static void test_residual_context_tiles(void **state)
{
    (void)state;
    mmp_image img;
    load_crop_all("colour/face.ppm", 100, 120, 144, 128, &img);
    for (int residual = MMP_RESIDUAL_AFTER_MMP; residual <= MMP_RESIDUAL_ALONE; residual++) {
        size_t bytes[2];
        for (int on = 0; on < 2; on++) {
            mmp_settings s;
            settings(&s, 0, residual, 100);
            s.tile_width = s.tile_height = 128;
            s.residual_context = on ? 0 : -1;
            mmp_file_info fi;
            assert_int_equal(encode_decode(&img, &s, &bytes[on], NULL, &fi), 0);
            assert_int_equal(fi.tiles, 2);
            assert_int_equal(fi.residual_context, on);
        }
        print_message("two tiles, residual %d: without the context %zu bytes, with it %zu\n",
                      residual, bytes[0], bytes[1]);
        assert_true(bytes[0] != bytes[1]);
    }
    mmp_image_free(&img);
}

/* Lossy files say so: no residual stage, no bound. */
static void test_lossy_header(void **state)
{
    (void)state;
    mmp_image img;
    camera_at(&img, 255, 1);
    mmp_settings s;
    settings(&s, -1, MMP_RESIDUAL_AUTO, 10);
    mmp_file_info fi;
    assert_true(encode_decode(&img, &s, NULL, NULL, &fi) > 0);
    assert_int_equal(fi.residual, MMP_RESIDUAL_NONE);
    assert_int_equal(fi.max_error, -1);
    mmp_image_free(&img);
}

/* Settings that cannot keep the bound are refused. */
static void test_refused(void **state)
{
    (void)state;
    mmp_image img;
    camera_at(&img, 255, 3);
    static const struct {
        int max_error, transform, chroma, residual;
    } bad[] = {
        {1, MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_444, MMP_RESIDUAL_AUTO},
        {2, MMP_TRANSFORM_RCT, MMP_CHROMA_444, MMP_RESIDUAL_AUTO},
        {0, MMP_TRANSFORM_YCBCR, MMP_CHROMA_444, MMP_RESIDUAL_AUTO},
        {0, MMP_TRANSFORM_AUTO, MMP_CHROMA_420, MMP_RESIDUAL_AUTO},
        {-2, MMP_TRANSFORM_AUTO, MMP_CHROMA_444, MMP_RESIDUAL_AUTO},
        {MMP_MAX_ERROR + 1, MMP_TRANSFORM_AUTO, MMP_CHROMA_444, MMP_RESIDUAL_AUTO},
        {0, MMP_TRANSFORM_AUTO, MMP_CHROMA_444, 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mmp_settings s;
        settings(&s, bad[i].max_error, bad[i].residual, 10);
        s.transform = bad[i].transform;
        s.chroma = bad[i].chroma;
        encode_refused(&s, &img, NULL);
    }
    mmp_image_free(&img);
}

/* Lambda on the 8-bit scale: at 16 bits a sweep gives falling rate and
 * falling PSNR (the distortion term counts), and the same lambda gives
 * nearly the same PSNR at 8 and 16 bits. */
static void test_lambda_16bit(void **state)
{
    (void)state;
    static const double lambdas[] = {1, 10, 100, 1000};
    mmp_image img8, img16;
    camera_at(&img8, 255, 1);
    camera_at(&img16, 65535, 1);
    size_t prev_bytes = SIZE_MAX;
    double prev_q = INFINITY;
    for (size_t l = 0; l < 4; l++) {
        mmp_settings s;
        settings(&s, -1, MMP_RESIDUAL_AUTO, lambdas[l]);
        size_t b8, b16;
        double q8, q16;
        encode_decode(&img8, &s, &b8, &q8, NULL);
        encode_decode(&img16, &s, &b16, &q16, NULL);
        print_message("lambda %4g: 8 bits %zu bytes %.2f dB, 16 bits %zu bytes %.2f dB\n",
                      lambdas[l], b8, q8, b16, q16);
        assert_true(b16 < prev_bytes);
        assert_true(q16 < prev_q);
        assert_true(fabs(q16 - q8) < 1.5);
        prev_bytes = b16;
        prev_q = q16;
    }
    mmp_image_free(&img8);
    mmp_image_free(&img16);
}

/* A 1-bit image at the default lambda comes back nearly right (before the
 * normalisation half its pixels were wrong). */
static void test_maxval1_default(void **state)
{
    (void)state;
    mmp_image img;
    camera_at(&img, 1, 1);
    mmp_settings s;
    settings(&s, -1, MMP_RESIDUAL_AUTO, 10);
    double q;
    encode_decode(&img, &s, NULL, &q, NULL);
    print_message("maxval 1, lambda 10: PSNR %.2f dB\n", q);
    assert_true(q > 20.0);
    mmp_image_free(&img);
}

int main(void)
{
    if (!images_find()) {
        print_message("test images not found: skipped\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lossless_maxvals), cmocka_unit_test(test_lossless_after_mmp),
        cmocka_unit_test(test_near_lossless),    cmocka_unit_test(test_lossy_header),
        cmocka_unit_test(test_refused),          cmocka_unit_test(test_lambda_16bit),
        cmocka_unit_test(test_maxval1_default),  cmocka_unit_test(test_residual_mix),
        cmocka_unit_test(test_residual_context), cmocka_unit_test(test_residual_context_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
