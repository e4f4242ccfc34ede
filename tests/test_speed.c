/*
 * Speed presets (mmp_settings.speed, mmp-enc --speed): what they prune is
 * the encoder's alone, so at every speed
 *
 * 1. preset 0 prunes nothing (mmp_search_speed_preset); preset 1 is the
 *    default: speed 1 set explicitly writes the bytes of the default
 *    settings; each preset prunes at least what the one below it does;
 * 2. the decoder rebuilds the encoder's reconstruction byte for byte, on a
 *    crop of every image in images/ (and the corners whose sides are not
 *    multiples of 16), lambdas 10 and 300 in turn, and the 16-bit crop;
 * 3. every engine of the registry writes seq's bytes: engines with
 *    concurrency at 1, 2, 3 and 7 threads in turn, both coding orders, on
 *    a 48x32 crop of camera and a 37x29 corner of coins; an engine whose
 *    create() fails here (opencl without a device) is skipped, saying why;
 * 4. a speed out of range is refused;
 * 5. the header's dictionary size is the preset's where the settings give
 *    none, else theirs; no preset's dictionary is larger than a slower one's;
 * 6. the presets that search no dictionary still code planes without the
 *    transform residual (dct off), with the best mode's dictionary search.
 *
 * The test images are found in $MMP_IMAGES, else ./images, else ../images.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmp/enc/restore_fit.h"
#include "mmp/enc/search.h"
#include "util.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* mmp_encode at `speed` (-1: the default settings untouched), failing the
 * test on error; recon may be NULL. */
static void encode_speed(const mmp_image *img, double lambda, int speed, int order,
                         const char *engine, int threads, uint8_t **buf, size_t *len,
                         mmp_image *recon)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = lambda;
    s.order = order;
    s.engine = engine;
    s.threads = threads;
    s.head_start = 0; /* the engine named searches every step */
    if (speed >= 0)
        s.speed = speed;
    encode_settings_or_fail(&s, img, buf, len, recon);
}

/* ------------------------------------------------------------- presets */

static void test_presets(void **state)
{
    (void)state;
    mmp_search_speed p, q;
    mmp_search_speed_preset(0, &p);
    assert_int_equal(p.modes, MMP_NUM_MODES);
    assert_int_equal(p.tx_modes, MMP_NUM_MODES);
    assert_int_equal(p.no_narrow, 0);
    assert_int_equal(p.tx_skip, 0);
    assert_int_equal(p.rdoq_only, 0);
    assert_int_equal(p.dict_cap, MMP_DEFAULT_DICT_CAP);
    assert_int_equal(MMP_MAX_SPEED, MMP_SEARCH_MAX_SPEED);
    assert_int_equal(p.no_lsp, 0);
    assert_int_equal(p.square, 0);
    assert_int_equal(p.dir_step, 1);
    assert_int_equal(p.min_log2, MMP_LOG2_PMIN);
    assert_int_equal(p.fit_rounds, MMP_RESTORE_FIT_ROUNDS);
    int tx_only = 0;
    for (int sp = 1; sp <= MMP_SEARCH_MAX_SPEED; sp++) {
        mmp_search_speed_preset(sp, &q);
        /* Each prunes what the one below does, and more; the transform
         * prices at least the modes the engine gets. */
        assert_true(q.modes >= 0 && q.modes <= p.modes);
        assert_true(q.tx_modes >= 1 && q.tx_modes >= q.modes && q.tx_modes <= p.tx_modes);
        assert_true(q.no_narrow >= p.no_narrow);
        assert_true(q.tx_skip >= p.tx_skip);
        assert_true(q.rdoq_only >= p.rdoq_only);
        assert_true(q.no_lsp >= p.no_lsp);
        assert_true(q.square >= p.square);
        assert_true(q.dir_step >= p.dir_step && q.dir_step <= MMP_NUM_ANGLES);
        assert_true(q.min_log2 >= p.min_log2 && q.min_log2 < MMP_LOG2B);
        assert_true(q.fit_rounds >= 1 && q.fit_rounds <= p.fit_rounds);
        assert_true(q.dict_cap >= MMP_MIN_DICT_CAP && q.dict_cap <= p.dict_cap);
        assert_true(q.modes < p.modes || q.tx_modes < p.tx_modes || q.no_narrow > p.no_narrow ||
                    q.tx_skip > p.tx_skip || q.rdoq_only > p.rdoq_only || q.no_lsp > p.no_lsp ||
                    q.square > p.square || q.dir_step > p.dir_step || q.min_log2 > p.min_log2 ||
                    q.dict_cap < p.dict_cap || q.fit_rounds < p.fit_rounds);
        tx_only += q.modes == 0;
        p = q;
    }
    /* The fastest presets code every leaf with the transform. */
    assert_true(tx_only >= 1);
}

/* The default's preset set explicitly: the same bytes. */
#define DEFAULT_SPEED 1
static void default_preset_bytes(const char *what, const mmp_image *img, void *arg)
{
    int *n = arg;
    const double lambda = (*n)++ % 2 ? 300 : 10;
    uint8_t *def = NULL, *zero = NULL;
    size_t deflen = 0, zerolen = 0;
    encode_speed(img, lambda, -1, MMP_ORDER_RASTER, "seq", 0, &def, &deflen, NULL);
    encode_speed(img, lambda, DEFAULT_SPEED, MMP_ORDER_RASTER, "seq", 0, &zero, &zerolen, NULL);
    assert_same_bytes(what, lambda, "seq --speed 1", def, deflen, zero, zerolen);
    free(def);
    free(zero);
}

static void test_default_preset(void **state)
{
    (void)state;
    mmp_settings s;
    mmp_default_settings(&s);
    assert_int_equal(s.speed, DEFAULT_SPEED);
    int n = 0;
    assert_true(for_each_image_crop(default_preset_bytes, &n) >= 8);
}

/* ---------------------------------------------------------- round trips */

typedef struct trip {
    int n; /* crops so far, for the lambdas in turn */
    int encodes;
    double seconds[MMP_MAX_SPEED + 1];
    size_t bytes[MMP_MAX_SPEED + 1];
} trip;

/* Every speed but the default (test_e2e covers it): the decoder's image
 * is the encoder's reconstruction, and every sample is in range. */
static void round_trip(const char *what, const mmp_image *img, void *arg)
{
    trip *t = arg;
    const double lambda = t->n++ % 2 ? 300 : 10;
    for (int sp = 0; sp <= MMP_MAX_SPEED; sp++) {
        if (sp == DEFAULT_SPEED)
            continue;
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_image recon = {0}, dec = {0};
        const double t0 = now_seconds();
        encode_speed(img, lambda, sp, MMP_ORDER_RASTER, "seq", 0, &buf, &len, &recon);
        t->seconds[sp] += now_seconds() - t0;
        t->bytes[sp] += len;
        t->encodes++;
        char err[256] = "";
        const int rc = mmp_decode(buf, len, &dec, err, sizeof err);
        if (rc)
            fail_msg("%s lambda %g speed %d: decode failed: %d %s", what, lambda, sp, rc, err);
        const size_t n = (size_t)img->width * img->height * mmp_image_channels(img);
        if (dec.width != img->width || dec.height != img->height ||
            mmp_image_channels(&dec) != mmp_image_channels(img) ||
            memcmp(dec.pix, recon.pix, n * sizeof *dec.pix) != 0)
            fail_msg("%s lambda %g speed %d: the decoder's image is not the encoder's "
                     "reconstruction",
                     what, lambda, sp);
        for (size_t i = 0; i < n; i++)
            if (dec.pix[i] > img->maxval)
                fail_msg("%s speed %d: sample %zu out of range", what, sp, i);
        mmp_image_free(&recon);
        mmp_image_free(&dec);
        free(buf);
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    trip t = {0};
    assert_true(for_each_image_crop(round_trip, &t) >= 8);
    mmp_image c = {0};
    camera_16bit_crop(&c);
    round_trip("camera 16-bit 40x24", &c, &t);
    mmp_image_free(&c);
    for (int sp = 0; sp <= MMP_MAX_SPEED; sp++)
        if (sp != DEFAULT_SPEED)
            print_message("speed %d: %d crops round-trip, %zu bytes, %.2f s\n", sp, t.n,
                          t.bytes[sp], t.seconds[sp]);
}

/* ------------------------------------------------------- engines agree */

typedef struct engine_case {
    const mmp_engine_ops *ops;
    char skip_why[256];
} engine_case;

static void test_engines_agree(void **state)
{
    const engine_case *ec = *state;
    if (ec->skip_why[0]) {
        print_message("%s skipped: create() failed: %s\n", ec->ops->name, ec->skip_why);
        skip();
    }
    static const int threads[] = {1, 2, 3, 7};
    static const int orders[] = {MMP_ORDER_RASTER, MMP_ORDER_WAVEFRONT};
    static const struct {
        const char *image;
        int x0, y0, w, h; /* x0 < 0: the bottom-right corner */
        double lambda;
    } crops[] = {{"camera", 200, 120, 48, 32, 10}, {"coins", -1, -1, 37, 29, 300}};
    int turn = 0, encodes = 0;
    double seconds = 0;
    for (int k = 0; k < NELEM(crops); k++) {
        mmp_image img = {0}, c = {0};
        load_image(crops[k].image, &img);
        const int x0 = crops[k].x0 < 0 ? img.width - crops[k].w : crops[k].x0;
        const int y0 = crops[k].y0 < 0 ? img.height - crops[k].h : crops[k].y0;
        crop(&img, x0, y0, crops[k].w, crops[k].h, &c);
        mmp_image_free(&img);
        char what[96];
        snprintf(what, sizeof what, "%s %dx%d at (%d,%d)", crops[k].image, crops[k].w,
                 crops[k].h, x0, y0);
        for (int sp = 0; sp <= MMP_MAX_SPEED; sp++)
            for (int o = 0; o < NELEM(orders) && sp != DEFAULT_SPEED; o++) {
                uint8_t *ref = NULL, *buf = NULL;
                size_t reflen = 0, len = 0;
                encode_speed(&c, crops[k].lambda, sp, orders[o], "seq", 0, &ref, &reflen, NULL);
                const int t = ec->ops->concurrency ? threads[turn++ % NELEM(threads)] : 0;
                const double t0 = now_seconds();
                encode_speed(&c, crops[k].lambda, sp, orders[o], ec->ops->name, t, &buf, &len,
                             NULL);
                seconds += now_seconds() - t0;
                encodes++;
                char who[96];
                snprintf(who, sizeof who, "%s -t %d --speed %d %s", ec->ops->name, t, sp,
                         orders[o] == MMP_ORDER_RASTER ? "raster" : "wavefront");
                assert_same_bytes(what, crops[k].lambda, who, ref, reflen, buf, len);
                free(ref);
                free(buf);
            }
        mmp_image_free(&c);
    }
    print_message("%d encodes at speeds 0 to %d but the default, both orders: %s gives seq's bytes (%.1f s)\n",
                  encodes, MMP_MAX_SPEED, ec->ops->name, seconds);
}

/* ------------------------------------------------------------- settings */

/* The dictionary's size in the header: the preset's where the settings give
 * none, else theirs at every speed. */
static void test_dict_cap(void **state)
{
    (void)state;
    mmp_image img = {0};
    assert_int_equal(mmp_image_alloc(&img, 40, 24, 255), 0);
    for (size_t i = 0; i < (size_t)img.width * img.height; i++)
        img.pix[i] = (uint16_t)(i * 7 % 256);
    for (int sp = 0; sp <= MMP_MAX_SPEED; sp++)
        for (int cap = 0; cap <= 2048; cap += 1024) {
            mmp_settings s;
            mmp_default_settings(&s);
            assert_int_equal(s.dict_cap, 0);
            s.engine = "seq";
            s.speed = sp;
            s.dict_cap = cap;
            uint8_t *buf = NULL;
            size_t len = 0;
            encode_settings_or_fail(&s, &img, &buf, &len, NULL);
            mmp_file_info fi;
            char why[256] = "";
            assert_int_equal(mmp_probe(buf, len, &fi, why, sizeof why), 0);
            mmp_search_speed preset;
            mmp_search_speed_preset(sp, &preset);
            const int want = cap ? cap : preset.dict_cap;
            if (fi.dict_cap != want)
                fail_msg("speed %d, dict_cap %d: the header says %d, not %d", sp, cap,
                         fi.dict_cap, want);
            free(buf);
        }
    mmp_image_free(&img);
}

static void test_out_of_range(void **state)
{
    (void)state;
    mmp_image img = {0};
    assert_int_equal(mmp_image_alloc(&img, 16, 16, 255), 0);
    static const int bad[] = {-1, MMP_MAX_SPEED + 1, 1000};
    for (int i = 0; i < NELEM(bad); i++) {
        mmp_settings s;
        mmp_default_settings(&s);
        s.engine = "seq";
        s.speed = bad[i];
        encode_refused(&s, &img, "speed");
    }
    mmp_image_free(&img);
}

/* Presets that search no dictionary (modes 0) on planes without the
 * transform residual (dct off): the leaves keep the best mode's dictionary
 * search, and the decoder rebuilds the reconstruction. */
static void test_tx_only_without_transform(void **state)
{
    (void)state;
    mmp_image img = {0}, c = {0};
    load_image("camera", &img);
    crop(&img, 200, 120, 48, 32, &c);
    mmp_image_free(&img);
    int n = 0;
    for (int sp = 0; sp <= MMP_MAX_SPEED; sp++) {
        mmp_search_speed p;
        mmp_search_speed_preset(sp, &p);
        if (p.modes)
            continue;
        mmp_settings s;
        mmp_default_settings(&s);
        s.engine = "seq";
        s.speed = sp;
        s.dct = 0;
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_image recon = {0}, dec = {0};
        encode_settings_or_fail(&s, &c, &buf, &len, &recon);
        char err[256] = "";
        if (mmp_decode(buf, len, &dec, err, sizeof err))
            fail_msg("speed %d, dct off: decode failed: %s", sp, err);
        if (memcmp(dec.pix, recon.pix, (size_t)c.width * c.height * sizeof *dec.pix) != 0)
            fail_msg("speed %d, dct off: the decoder's image is not the reconstruction", sp);
        /* The crop's samples are coded, not left at their prediction. */
        double se = 0;
        for (size_t i = 0; i < (size_t)c.width * c.height; i++)
            se += ((double)dec.pix[i] - c.pix[i]) * ((double)dec.pix[i] - c.pix[i]);
        if (se / (c.width * c.height) > 30)
            fail_msg("speed %d, dct off: mean squared error %.1f at lambda 10", sp,
                     se / (c.width * c.height));
        mmp_image_free(&recon);
        mmp_image_free(&dec);
        free(buf);
        n++;
    }
    assert_true(n >= 1);
    mmp_image_free(&c);
}

/* ----------------------------------------------------------------- main */

int main(void)
{
    const int n = mmp_engine_count();
    engine_case *cases = calloc((size_t)n, sizeof *cases);
    struct CMUnitTest *tests = calloc((size_t)(6 + n), sizeof *tests);
    char(*names)[64] = calloc((size_t)n, sizeof *names);
    if (!cases || !tests || !names)
        return 1;
    int nt = 0;
    tests[nt++] = (struct CMUnitTest){"presets", test_presets, NULL, NULL, NULL};
    tests[nt++] = (struct CMUnitTest){"speed 1 is the default", test_default_preset, NULL, NULL,
                                      NULL};
    tests[nt++] = (struct CMUnitTest){"round trip at every speed", test_round_trip, NULL, NULL,
                                      NULL};
    tests[nt++] = (struct CMUnitTest){"speed out of range", test_out_of_range, NULL, NULL, NULL};
    tests[nt++] = (struct CMUnitTest){"the preset's dictionary size", test_dict_cap, NULL, NULL,
                                      NULL};
    tests[nt++] = (struct CMUnitTest){"no dictionary search, no transform",
                                      test_tx_only_without_transform, NULL, NULL, NULL};
    for (int i = 0; i < n; i++) {
        engine_case *ec = &cases[i];
        ec->ops = mmp_engine_at(i);
        if (!strcmp(ec->ops->name, "seq"))
            continue;
        void *st = NULL;
        mmp_engine_config cfg = {.threads = 1};
        if (ec->ops->create(&st, &cfg, ec->skip_why, sizeof ec->skip_why)) {
            if (!ec->skip_why[0])
                snprintf(ec->skip_why, sizeof ec->skip_why, "no reason given");
        } else {
            ec->ops->destroy(st);
        }
        snprintf(names[i], sizeof names[i], "%s: seq's bytes at every speed", ec->ops->name);
        tests[nt++] = (struct CMUnitTest){names[i], test_engines_agree, NULL, NULL, ec};
    }
    const int rc = _cmocka_run_group_tests("test_speed", tests, (size_t)nt, NULL, NULL);
    free(cases);
    free(tests);
    free(names);
    return rc;
}
