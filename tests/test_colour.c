/*
 * Colour and alpha (docs/format.md section 7): the transforms and the chroma
 * resampling against independent formulas, and encodes of colour, grey +
 * alpha and colour + alpha crops whose decodes equal the encoder's
 * reconstruction, in every engine, with alpha exact.
 *
 * Tuning: `test_colour --tune CODEC TRANSFORM CHROMA CHROMA_LAMBDA ENGINE
 * LAMBDAS IMAGE.ppm...` runs no test but encodes each 8-bit PPM at each
 * lambda (comma-separated) with those settings and engine (ENGINE:THREADS
 * sets its threads) (transform ycbcr or ycocg-r,
 * chroma 420 or 444), checks that the decode equals the reconstruction, and
 * prints rows of scripts/rd-sweep's CSV (codec CODEC, RGB PSNR) on stdout,
 * for scripts/bdrate (docs/tuning.md, "Colour transform").
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
#include <netpbm/pam.h>

#include "common/container.h"
#include "kernels/engine.h"
#include "mmp/common/colour.h"
#include "mmp/mmp.h"
#include "util.h"

static mmp_layout layout(int planes, int transform, int chroma, int alpha, int w, int h, int maxval)
{
    mmp_header hd = {.width = (uint32_t)w, .height = (uint32_t)h, .maxval = (uint32_t)maxval,
                     .planes = (uint32_t)planes, .transform = (uint32_t)transform,
                     .chroma = (uint32_t)chroma, .alpha = (uint32_t)alpha};
    mmp_layout l;
    mmp_layout_of(&hd, &l);
    return l;
}

/* A test picture: smooth colour ramps, an edge, noise; alpha with opaque,
 * transparent and graded parts. */
static void picture(mmp_image *img, int w, int h, int channels, int maxval, uint64_t seed)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, channels, maxval), 0);
    rng_seed(seed);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint16_t *p = img->pix + ((long)y * w + x) * channels;
            const int colour = channels >= 3 ? 3 : 1;
            for (int k = 0; k < colour; k++) {
                long v = (long)maxval * ((x * (k + 1) + y * (3 - k)) % 64) / 64;
                if (x > w / 2)
                    v = maxval - v / 2;
                v += rng_range(-maxval / 16, maxval / 16);
                p[k] = (uint16_t)(v < 0 ? 0 : v > maxval ? maxval : v);
            }
            if (channels == 2 || channels == 4)
                p[channels - 1] = (uint16_t)(y < h / 3 ? maxval : x < w / 3 ? 0
                                                               : (long)maxval * x / w);
        }
}

/* YCoCg-R at 4:4:4 is exact: image -> planes -> image gives the image back,
 * at every bit depth it takes, and its chroma stays within 0..2 maxval. */
static void test_ycocg_r_reversible(void **state)
{
    (void)state;
    static const int maxvals[] = {1, 255, 1023, 4095, 32767};
    for (size_t m = 0; m < sizeof maxvals / sizeof maxvals[0]; m++) {
        const int mv = maxvals[m];
        mmp_image img, back;
        picture(&img, 37, 11, 4, mv, 7 + m);
        for (int i = 0; i < 37 * 4; i++) /* the corners of the cube */
            img.pix[i] = (uint16_t)((i / 4 + i) & 1 ? mv : 0);
        const mmp_layout l = layout(4, MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_444, MMP_ALPHA_EXACT, 37, 11, mv);
        assert_int_equal(l.maxv[1], 2 * mv);
        uint16_t *pl[4];
        for (int p = 0; p < 4; p++)
            pl[p] = malloc(sizeof(uint16_t) * 37 * 11);
        mmp_planes_from_image(&l, &img, pl);
        for (int p = 0; p < 4; p++)
            for (int i = 0; i < 37 * 11; i++)
                assert_true(pl[p][i] <= l.maxv[p]);
        assert_int_equal(mmp_image_alloc_channels(&back, 37, 11, 4, mv), 0);
        mmp_image_from_planes(&l, (const uint16_t *const *)pl, &back);
        assert_memory_equal(back.pix, img.pix, sizeof(uint16_t) * 37 * 11 * 4);
        for (int p = 0; p < 4; p++)
            free(pl[p]);
        mmp_image_free(&img);
        mmp_image_free(&back);
    }
}

/* The YCbCr inverse against the BT.601 full-range formulas in floating
 * point: within one level everywhere, the planes of grey pixels neutral. */
static void test_ycbcr_matches_bt601(void **state)
{
    (void)state;
    const int mv = 255, w = 64, h = 64;
    const mmp_layout l = layout(3, MMP_TRANSFORM_YCBCR, MMP_CHROMA_444, MMP_ALPHA_NONE, w, h, mv);
    uint16_t *pl[3];
    for (int p = 0; p < 3; p++)
        pl[p] = malloc(sizeof(uint16_t) * w * h);
    rng_seed(3);
    for (int i = 0; i < w * h; i++) {
        pl[0][i] = (uint16_t)rng_range(0, mv);
        pl[1][i] = (uint16_t)rng_range(0, mv);
        pl[2][i] = (uint16_t)rng_range(0, mv);
    }
    mmp_image img;
    assert_int_equal(mmp_image_alloc_channels(&img, w, h, 3, mv), 0);
    mmp_image_from_planes(&l, (const uint16_t *const *)pl, &img);
    for (int i = 0; i < w * h; i++) {
        const double y = pl[0][i], cb = pl[1][i] - 128.0, cr = pl[2][i] - 128.0;
        const double rgb[3] = {y + 1.402 * cr, y - 0.344136 * cb - 0.714136 * cr, y + 1.772 * cb};
        for (int k = 0; k < 3; k++) {
            const double want = rgb[k] < 0 ? 0 : rgb[k] > mv ? mv : rgb[k];
            assert_true(fabs(img.pix[i * 3 + k] - want) <= 1.0);
        }
    }
    /* Grey pixels: Cb = Cr = 128 and Y the grey level. */
    for (int v = 0; v <= mv; v++) {
        img.pix[0] = img.pix[1] = img.pix[2] = (uint16_t)v;
        mmp_planes_from_image(&l, &img, pl);
        assert_int_equal(pl[0][0], v);
        assert_int_equal(pl[1][0], 128);
        assert_int_equal(pl[2][0], 128);
    }
    for (int p = 0; p < 3; p++)
        free(pl[p]);
    mmp_image_free(&img);
}

/* 4:2:0: the planes' sizes round up; downsampling averages 2 x 2 pixels;
 * upsampling weighs the nearest chroma sample 3/4 per direction (a 2 x 2
 * plane worked by hand). */
static void test_chroma_420(void **state)
{
    (void)state;
    const mmp_layout l = layout(3, MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_NONE, 4, 3, 255);
    assert_int_equal(l.w[1], 2);
    assert_int_equal(l.h[1], 2);
    assert_int_equal(l.w[0], 4);
    const mmp_layout odd = layout(3, MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_NONE, 17, 5, 255);
    assert_int_equal(odd.w[2], 9);
    assert_int_equal(odd.h[2], 3);

    /* Luma 100 everywhere; Cb 128 (no blue shift); Cr a 2 x 2 plane. */
    uint16_t y[12], cb[4] = {128, 128, 128, 128}, cr[4] = {128, 160, 96, 192};
    for (int i = 0; i < 12; i++)
        y[i] = 100;
    const uint16_t *pl[3] = {y, cb, cr};
    mmp_image img;
    assert_int_equal(mmp_image_alloc_channels(&img, 4, 3, 3, 255), 0);
    mmp_image_from_planes(&l, pl, &img);
    /* Pixel (0, 1): rows i0 = 0, i1 = 0 (clamped), columns j0 = 0, j1 = 1:
     * (9 * 128 + 3 * 160 + 3 * 128 + 160 + 8) >> 4 = 136; R = 100 +
     * floor((91881 * 8 + 32768) / 65536) = 111. */
    assert_int_equal(img.pix[(0 * 4 + 1) * 3 + 0], 111);
    /* Pixel (2, 3): i0 = 1, i1 = 0; j0 = 1, j1 = 2 clamped to 1:
     * (9 * 192 + 3 * 192 + 3 * 160 + 160 + 8) >> 4 = 184; R = 100 +
     * floor((91881 * 56 + 32768) / 65536) = 179. */
    assert_int_equal(img.pix[(2 * 4 + 3) * 3 + 0], 179);

    /* Downsampling: constant 2 x 2 groups give those constants back, and
     * the upsampled constant plane is the constant. */
    mmp_image in;
    assert_int_equal(mmp_image_alloc_channels(&in, 4, 3, 3, 255), 0);
    for (int yy = 0; yy < 3; yy++)
        for (int x = 0; x < 4; x++) {
            uint16_t *p = in.pix + (yy * 4 + x) * 3;
            p[0] = 200;
            p[1] = p[2] = 50;
        }
    uint16_t py[12], pu[4], pv[4];
    uint16_t *const out[3] = {py, pu, pv};
    mmp_planes_from_image(&l, &in, out);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pu[i], pu[0]);
    mmp_image_from_planes(&l, (const uint16_t *const *)out, &img);
    for (int i = 1; i < 12; i++)
        assert_memory_equal(img.pix + i * 3, img.pix, 3 * sizeof(uint16_t));
    mmp_image_free(&in);
    mmp_image_free(&img);
}

/* Encode, decode, compare: the decode equals the reconstruction, alpha
 * coded exactly is exact, and the engines in this build give the bytes of
 * seq. */
static void roundtrip(int w, int h, int channels, int maxval, int transform, int chroma, int alpha,
                      double lambda, int engines_too)
{
    mmp_image img, rec, dec;
    picture(&img, w, h, channels, maxval, (uint64_t)w * 31 + h + channels);
    mmp_settings st;
    mmp_default_settings(&st);
    st.lambda = lambda;
    st.engine = "seq";
    st.transform = transform;
    st.chroma = chroma;
    st.alpha = alpha;
    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_enc_stats stats;
    char why[256] = "";
    int err = mmp_encode(&st, &img, &buf, &len, &rec, &stats, why, sizeof why);
    if (err)
        fail_msg("%dx%d channels %d: %s", w, h, channels, why);
    assert_int_equal(rec.channels, channels);
    assert_int_equal(stats.planes, channels);
    assert_int_equal(mmp_decode(buf, len, &dec, why, sizeof why), 0);
    assert_int_equal(dec.channels, channels);
    assert_int_equal(dec.width, w);
    assert_memory_equal(dec.pix, rec.pix, sizeof(uint16_t) * w * h * channels);
    mmp_file_info fi;
    assert_int_equal(mmp_probe(buf, len, &fi, why, sizeof why), 0);
    assert_int_equal(fi.planes, channels);
    if (channels == 2 || channels == 4) {
        assert_int_equal(fi.alpha, alpha);
        if (alpha == MMP_ALPHA_EXACT) {
            for (long i = 0; i < (long)w * h; i++)
                assert_int_equal(dec.pix[i * channels + channels - 1],
                                 img.pix[i * channels + channels - 1]);
            assert_true(isinf(stats.plane_psnr[channels - 1]));
        }
    }
    if (channels >= 3) {
        assert_int_equal(fi.transform, transform);
        assert_int_equal(fi.chroma, chroma);
    }
    static const char *const engines[] = {"omp", "opencl"};
    for (size_t k = 0; engines_too && k < sizeof engines / sizeof engines[0]; k++) {
        if (!mmp_engine_exists(engines[k]))
            continue;
        st.engine = engines[k];
        st.head_start = 0; /* the engine named searches every step */
        uint8_t *b2 = NULL;
        size_t l2 = 0;
        err = mmp_encode(&st, &img, &b2, &l2, NULL, NULL, why, sizeof why);
        if (err == MMP_EENGINE) /* no OpenCL device here */
            continue;
        assert_int_equal(err, 0);
        assert_int_equal(l2, len);
        assert_memory_equal(b2, buf, len);
        free(b2);
    }
    free(buf);
    mmp_image_free(&img);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
}

static void test_roundtrip_colour(void **state)
{
    (void)state;
    roundtrip(40, 24, 3, 255, MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_NONE, 10, 1);
    roundtrip(40, 24, 3, 255, MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_444, MMP_ALPHA_NONE, 10, 0);
    roundtrip(17, 5, 3, 255, MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_420, MMP_ALPHA_NONE, 30, 0);
    roundtrip(1, 1, 3, 255, MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_NONE, 10, 0);
    roundtrip(33, 18, 3, 65535, MMP_TRANSFORM_YCBCR, MMP_CHROMA_444, MMP_ALPHA_NONE, 10, 0);
}

static void test_roundtrip_alpha(void **state)
{
    (void)state;
    roundtrip(40, 24, 4, 255, MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_EXACT, 100, 0);
    roundtrip(23, 9, 2, 255, MMP_TRANSFORM_NONE, MMP_CHROMA_444, MMP_ALPHA_EXACT, 1000, 0);
    roundtrip(23, 9, 2, 65535, MMP_TRANSFORM_NONE, MMP_CHROMA_444, MMP_ALPHA_EXACT, 0, 0);
    roundtrip(20, 20, 4, 1023, MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_444, MMP_ALPHA_MMP, 30, 1);
    roundtrip(16, 3, 2, 1, MMP_TRANSFORM_NONE, MMP_CHROMA_444, MMP_ALPHA_EXACT, 10, 0);
}

/* The CfL counts of the encoder's -v lines "plane P: prediction leaves per
 * mode: ... CfL N" (plane P's at cfl[P]; -1: no CfL count printed). */
static void count_cfl(void *opaque, int level, const char *msg)
{
    long *cfl = opaque;
    int p;
    const char *at = strstr(msg, " CfL ");
    (void)level;
    if (strstr(msg, ": prediction leaves per mode:") && sscanf(msg, "plane %d:", &p) == 1 &&
        p >= 0 && p < 4)
        cfl[p] = at ? atol(at + 5) : -1;
}

/* Chroma from luma (docs/format.md section 6, mode 11): the chroma planes
 * of a colour image have it and use it where chroma follows luma (here a
 * line of it over texture); the luma plane does not; and the decode is the
 * reconstruction, at 4:4:4 and at 4:2:0, in every engine. */
static void test_cfl_used(void **state)
{
    (void)state;
    for (int chroma = MMP_CHROMA_444; chroma <= MMP_CHROMA_420; chroma++) {
        mmp_image img, rec, dec;
        assert_int_equal(mmp_image_alloc_channels(&img, 48, 32, 3, 255), 0);
        rng_seed(7);
        for (int i = 0; i < 48 * 32; i++) {
            const int t = (int)((i * 37 + (i / 48) * 11) % 160) + (int)rng_below(8);
            img.pix[i * 3 + 0] = (uint16_t)(40 + t);
            img.pix[i * 3 + 1] = (uint16_t)(40 + t);
            img.pix[i * 3 + 2] = (uint16_t)(200 - t);
        }
        mmp_settings st;
        mmp_default_settings(&st);
        st.lambda = 30;
        st.engine = "seq";
        st.chroma = chroma;
        st.verbose = 1;
        long cfl[4] = {-2, -2, -2, -2};
        st.log = count_cfl;
        st.log_opaque = cfl;
        uint8_t *buf = NULL;
        size_t len = 0;
        char why[256] = "";
        assert_int_equal(mmp_encode(&st, &img, &buf, &len, &rec, NULL, why, sizeof why), 0);
        assert_int_equal(cfl[0], -1);
        assert_true(cfl[1] > 0);
        assert_true(cfl[2] > 0);
        assert_int_equal(mmp_decode(buf, len, &dec, why, sizeof why), 0);
        assert_memory_equal(dec.pix, rec.pix, sizeof(uint16_t) * 48 * 32 * 3);
        free(buf);
        mmp_image_free(&img);
        mmp_image_free(&rec);
        mmp_image_free(&dec);
    }
    roundtrip(40, 24, 3, 255, MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_420, MMP_ALPHA_NONE, 30, 1);
}

/* Grey images ignore the colour settings: the same bytes whatever they say. */
static void test_grey_unchanged(void **state)
{
    (void)state;
    mmp_image img;
    picture(&img, 40, 24, 1, 255, 5);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "seq";
    uint8_t *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    assert_int_equal(mmp_encode(&st, &img, &a, &la, NULL, NULL, NULL, 0), 0);
    st.transform = MMP_TRANSFORM_YCOCG_R;
    st.chroma = MMP_CHROMA_444;
    st.chroma_lambda = 3;
    assert_int_equal(mmp_encode(&st, &img, &b, &lb, NULL, NULL, NULL, 0), 0);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    assert_int_equal(a[MF_PLANES], 1);
    assert_int_equal(a[MF_TRANSFORM] | a[MF_CHROMA] | a[MF_ALPHA], 0);
    free(a);
    free(b);
    mmp_image_free(&img);
}

/* Settings the encoder refuses, each with its reason. */
static void test_bad_settings(void **state)
{
    (void)state;
    mmp_image img;
    picture(&img, 8, 8, 3, 40000, 1);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "seq";
    uint8_t *b = NULL;
    size_t l = 0;
    char why[256];
    st.transform = MMP_TRANSFORM_YCOCG_R;
    assert_int_equal(mmp_encode(&st, &img, &b, &l, NULL, NULL, why, sizeof why), MMP_EINVAL);
    assert_non_null(strstr(why, "YCoCg-R"));
    st.transform = 7;
    assert_int_equal(mmp_encode(&st, &img, &b, &l, NULL, NULL, why, sizeof why), MMP_EINVAL);
    st.transform = MMP_TRANSFORM_YCBCR;
    st.chroma = 2;
    assert_int_equal(mmp_encode(&st, &img, &b, &l, NULL, NULL, why, sizeof why), MMP_EINVAL);
    st.chroma = MMP_CHROMA_420;
    st.chroma_lambda = 0;
    assert_int_equal(mmp_encode(&st, &img, &b, &l, NULL, NULL, why, sizeof why), MMP_EINVAL);
    st.chroma_lambda = 1;
    img.channels = 5;
    assert_int_equal(mmp_encode(&st, &img, &b, &l, NULL, NULL, why, sizeof why), MMP_EINVAL);
    assert_null(b);
    img.channels = 3;
    mmp_image_free(&img);
}

/*
 * Each plane has a dictionary of its own, told apart by the tables'
 * dict_id: an engine that saw plane 0's dictionary must match against
 * plane 1's, even where a scale holds as many elements in both (YCoCg-R's
 * chroma starts with the same count of elements at twice the step). Every
 * engine of the registry: the matches after the switch equal those of a
 * fresh engine.
 */
static void test_engines_switch_dictionary(void **state)
{
    (void)state;
    /* One struct for both, as the encoder's codec of each plane in turn. */
    mmp_dict d, b;
    assert_int_equal(mmp_dict_init(&d, 256, 255, 0), 0);
    assert_int_equal(mmp_dict_init(&b, 256, 510, 0), 0);
    uint32_t *cost[MMP_NSCALES];
    for (int s = 0; s < MMP_NSCALES; s++) {
        assert_int_equal(d.n[s], b.n[s]);
        cost[s] = calloc(256, sizeof(uint32_t));
        for (int i = 0; i < 256; i++)
            cost[s][i] = 256 + 16 * (uint32_t)i;
    }
    mmp_dict_free(&b);
    mmp_search_tables ta = {.dict = &d, .lambda_q8 = 256, .maxval = 255, .dict_id = 0};
    mmp_search_tables tb = {.dict = &d, .lambda_q8 = 256, .maxval = 510, .dict_id = 1};
    for (int s = 0; s < MMP_NSCALES; s++)
        ta.idx_cost[s] = tb.idx_cost[s] = cost[s];
    int32_t orig[16 * 16], pred[16 * 16];
    rng_seed(11);
    /* Samples of both planes' range (match()'s contract: [0, maxval]). */
    for (int i = 0; i < 16 * 16; i++) {
        orig[i] = rng_range(0, 255);
        pred[i] = (int32_t)rng_range(0, 255);
    }
    const size_t nout = (size_t)mmp_match_count(4, 4);
    mmp_match *want = calloc(nout, sizeof *want), *got = calloc(nout, sizeof *got);
    for (int i = 0; i < mmp_engine_count(); i++) {
        const mmp_engine_ops *ops = mmp_engine_at(i);
        mmp_engine_config cfg = {.threads = 1};
        void *fresh = NULL, *used = NULL;
        char why[256];
        if (ops->create(&used, &cfg, why, sizeof why)) {
            printf("%s skipped: %s\n", ops->name, why);
            continue;
        }
        assert_int_equal(ops->create(&fresh, &cfg, why, sizeof why), 0);
        mmp_dict_free(&d);
        assert_int_equal(mmp_dict_init(&d, 256, 255, 0), 0);
        assert_int_equal(ops->begin_step(used, &ta), 0);
        assert_int_equal(ops->match(used, &ta, orig, pred, 1, NULL, 4, 4, got), 0);
        mmp_dict_free(&d);
        assert_int_equal(mmp_dict_init(&d, 256, 510, 0), 0);
        assert_int_equal(ops->begin_step(used, &tb), 0);
        assert_int_equal(ops->match(used, &tb, orig, pred, 1, NULL, 4, 4, got), 0);
        assert_int_equal(ops->begin_step(fresh, &tb), 0);
        assert_int_equal(ops->match(fresh, &tb, orig, pred, 1, NULL, 4, 4, want), 0);
        for (size_t k = 0; k < nout; k++) {
            assert_int_equal(got[k].idx, want[k].idx);
            assert_true(got[k].j == want[k].j);
        }
        ops->destroy(fresh);
        ops->destroy(used);
    }
    free(want);
    free(got);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
}

static int tune(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "usage: test_colour --tune CODEC ycbcr|ycocg-r 420|444 CHROMA_LAMBDA "
                        "ENGINE[:THREADS] L1,L2,... IMAGE.ppm...\n");
        return 2;
    }
    pm_init(argv[0], 0);
    mmp_settings st;
    mmp_default_settings(&st);
    st.transform = strcmp(argv[3], "ycocg-r") ? MMP_TRANSFORM_YCBCR : MMP_TRANSFORM_YCOCG_R;
    st.chroma = strcmp(argv[4], "444") ? MMP_CHROMA_420 : MMP_CHROMA_444;
    st.chroma_lambda = atof(argv[5]);
    /* ENGINE or ENGINE:THREADS */
    static char engine[64];
    snprintf(engine, sizeof engine, "%s", argv[6]);
    if (strchr(engine, ':')) {
        st.threads = atoi(strchr(engine, ':') + 1);
        *strchr(engine, ':') = 0;
    }
    st.engine = engine;
    st.head_start = 0; /* the engine named searches every step */
    for (int f = 8; f < argc; f++) {
        FILE *in = fopen(argv[f], "rb");
        if (!in) {
            perror(argv[f]);
            return 1;
        }
        struct pam pam;
        tuple **rows = pnm_readpam(in, &pam, PAM_STRUCT_SIZE(tuple_type));
        fclose(in);
        mmp_image img;
        if (pam.depth != 3 || mmp_image_alloc_channels(&img, pam.width, pam.height, 3,
                                                       (int)pam.maxval)) {
            fprintf(stderr, "%s: not an RGB image\n", argv[f]);
            return 1;
        }
        for (int y = 0; y < pam.height; y++)
            for (int x = 0; x < pam.width; x++)
                for (int k = 0; k < 3; k++)
                    img.pix[((long)y * pam.width + x) * 3 + k] = (uint16_t)rows[y][x][k];
        pnm_freepamarray(rows, &pam);
        char name[256];
        const char *base = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
        snprintf(name, sizeof name, "%s", base);
        if (strrchr(name, '.'))
            *strrchr(name, '.') = 0;
        char lambdas[256];
        snprintf(lambdas, sizeof lambdas, "%s", argv[7]);
        for (char *tok = strtok(lambdas, ","); tok; tok = strtok(NULL, ",")) {
            st.lambda = atof(tok);
            uint8_t *buf = NULL;
            size_t len = 0;
            mmp_image rec, dec;
            mmp_enc_stats stats;
            char why[256];
            if (mmp_encode(&st, &img, &buf, &len, &rec, &stats, why, sizeof why)) {
                fprintf(stderr, "%s: %s\n", argv[f], why);
                return 1;
            }
            const double t0 = now_seconds();
            if (mmp_decode(buf, len, &dec, why, sizeof why) ||
                memcmp(dec.pix, rec.pix, sizeof(uint16_t) * 3 * img.width * img.height)) {
                fprintf(stderr, "%s: the decode differs from the reconstruction\n", argv[f]);
                return 1;
            }
            const double dec_s = now_seconds() - t0;
            printf("%s,%d,%d,%s,lambda=%s,%zu,%.6f,%.4f,%.3f,%.3f\n", name, img.width,
                   img.height, argv[2], tok, len, 8.0 * len / ((double)img.width * img.height),
                   mmp_psnr(&img, &rec), stats.seconds, dec_s);
            fflush(stdout);
            free(buf);
            mmp_image_free(&rec);
            mmp_image_free(&dec);
        }
        mmp_image_free(&img);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--tune") == 0)
        return tune(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ycocg_r_reversible),
        cmocka_unit_test(test_ycbcr_matches_bt601),
        cmocka_unit_test(test_chroma_420),
        cmocka_unit_test(test_roundtrip_colour),
        cmocka_unit_test(test_roundtrip_alpha),
        cmocka_unit_test(test_cfl_used),
        cmocka_unit_test(test_grey_unchanged),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_engines_switch_dictionary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
