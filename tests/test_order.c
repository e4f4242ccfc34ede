/*
 * Tests of the coding order (mmp/common/order.c, docs/format.md section 4.3): the
 * steps hold every block once; in wavefront order every block that a
 * prediction may read (left, top-left, top, top-right) lies in an earlier
 * step; and decoding gives the same image when the other blocks of a step
 * are poisoned (marked available with garbage) and reconstructed in either
 * order, which fails as soon as a block could read a block of its own step.
 * Also: the tiles of a file decode on as many threads as OMP_NUM_THREADS
 * says, several at once, to the same image.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/container.h"
#include "common/error.h"
#include "mmp/dec/decoder.h"
#include "mmp/mmp.h"
#include "mmp/common/order.h"
#include "util.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const int kinds[2] = {MMP_ORDER_RASTER, MMP_ORDER_WAVEFRONT};

/* step_of[b]: the step of block b. */
static int *steps_of(const mmp_order *o, int nblocks)
{
    int *step_of = malloc(sizeof(int) * (size_t)nblocks);
    assert_non_null(step_of);
    for (int b = 0; b < nblocks; b++)
        step_of[b] = -1;
    for (int t = 0; t < o->nsteps; t++)
        for (int k = o->first[t]; k < o->first[t + 1]; k++) {
            const int b = o->block[k];
            assert_in_range(b, 0, nblocks - 1);
            if (step_of[b] != -1)
                fail_msg("block %d is in steps %d and %d", b, step_of[b], t);
            step_of[b] = t;
        }
    for (int b = 0; b < nblocks; b++)
        if (step_of[b] < 0)
            fail_msg("block %d is in no step", b);
    return step_of;
}

static void test_steps(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 2}, {3, 3}, {7, 4}, {4, 7},
                                   {32, 32}, {33, 17}, {17, 33}, {256, 3}};
    for (int i = 0; i < NELEM(sizes); i++)
        for (int ki = 0; ki < 2; ki++) {
            const int bw = sizes[i][0], bh = sizes[i][1], kind = kinds[ki];
            mmp_order o;
            assert_int_equal(mmp_order_init(&o, kind, bw, bh), 0);
            assert_int_equal(o.first[0], 0);
            assert_int_equal(o.first[o.nsteps], bw * bh);
            int *step_of = steps_of(&o, bw * bh);
            int max_step = 0;
            for (int t = 0; t < o.nsteps; t++) {
                const int n = o.first[t + 1] - o.first[t];
                /* A single column leaves every other wavefront step empty. */
                assert_true(n >= 1 || (kind == MMP_ORDER_WAVEFRONT && bw == 1));
                max_step = n > max_step ? n : max_step;
                /* From the top row down. */
                for (int k = o.first[t] + 1; k < o.first[t + 1]; k++)
                    assert_true(o.block[k] / bw > o.block[k - 1] / bw);
            }
            assert_int_equal(o.max_step, max_step);
            if (kind == MMP_ORDER_RASTER) {
                assert_int_equal(o.nsteps, bw * bh);
                for (int b = 0; b < bw * bh; b++)
                    assert_int_equal(step_of[b], b);
            } else {
                assert_int_equal(o.nsteps, bw + 2 * bh - 2);
                assert_int_equal(max_step, bh < (bw + 1) / 2 ? bh : (bw + 1) / 2);
            }
            /* What a block's predictions may read comes earlier. */
            static const int nb[4][2] = {{0, -1}, {-1, -1}, {-1, 0}, {-1, 1}};
            for (int r = 0; r < bh; r++)
                for (int c = 0; c < bw; c++)
                    for (int j = 0; j < 4; j++) {
                        const int rr = r + nb[j][0], cc = c + nb[j][1];
                        if (rr < 0 || cc < 0 || cc >= bw)
                            continue;
                        if (!(step_of[rr * bw + cc] < step_of[r * bw + c]))
                            fail_msg("%s %dx%d: block (%d,%d) in step %d, its neighbour (%d,%d) in "
                                     "step %d",
                                     mmp_order_name(kind), bw, bh, r, c, step_of[r * bw + c], rr,
                                     cc, step_of[rr * bw + cc]);
                    }
            free(step_of);
            mmp_order_free(&o);
        }
    mmp_order o;
    assert_int_equal(mmp_order_init(&o, 2, 4, 4), MMP_EINVAL);
    assert_null(mmp_order_name(2));
}

static void encode_order(const mmp_image *img, int order, double lambda, uint8_t **buf,
                         size_t *len, mmp_image *recon)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = lambda;
    s.order = order;
    char err[256] = "";
    const int rc = mmp_encode(&s, img, buf, len, recon, NULL, err, sizeof err);
    if (rc)
        fail_msg("encode %dx%d (%s): %s", img->width, img->height, mmp_order_name(order), err);
    assert_int_equal((*buf)[MF_ORDER], order);
}

static void assert_decodes(const uint8_t *buf, size_t len, const mmp_decode_check *chk,
                           const mmp_image *recon, const char *what)
{
    mmp_image dec = {0};
    char err[256] = "";
    const int rc = mmp_decode_checked(buf, len, &dec, chk, err, sizeof err);
    if (rc)
        fail_msg("%s: decode failed: %s", what, err);
    const size_t n = (size_t)dec.width * dec.height;
    for (size_t i = 0; i < n; i++)
        if (dec.pix[i] != recon->pix[i])
            fail_msg("%s: sample (%zu,%zu) is %u, the encoder's reconstruction %u", what,
                     i % (size_t)dec.width, i / (size_t)dec.width, dec.pix[i], recon->pix[i]);
    mmp_image_free(&dec);
}

/* Both orders on one image: the decoder rebuilds the reconstruction, also
 * with the other blocks of each step poisoned, forwards and backwards. */
static void check_poisoned(const char *name, const mmp_image *img, double lambda)
{
    for (int ki = 0; ki < 2; ki++) {
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_image rec = {0};
        encode_order(img, kinds[ki], lambda, &buf, &len, &rec);
        /* Then every step of two blocks or more on all threads, and on
         * crews of one and three helpers (the blocks, then the updates),
         * and the updates and the filter on crews of one and three helpers
         * (also with the steps poisoned and reversed: the reconstruction
         * runs beside the updates). */
#define CHECK(p, r, m, h) {.poison = (p), .reverse = (r), .parallel_min = (m), .helpers = (h)}
        const int top = img->maxval;
        const mmp_decode_check checks[] = {
            CHECK(-1, 0, 0, -1), CHECK(-1, 1, 0, -1), CHECK(0, 0, 0, -1),  CHECK(0, 1, 0, -1),
            CHECK(top, 0, 0, -1), CHECK(top, 1, 0, -1), CHECK(-1, 0, 2, 0), CHECK(-1, 0, 2, 1),
            CHECK(-1, 0, 2, 3),  CHECK(-1, 0, 0, 1),  CHECK(-1, 0, 0, 3),  CHECK(0, 1, 0, 1),
            CHECK(top, 0, 0, 3)};
#undef CHECK
        for (int i = 0; i < NELEM(checks); i++) {
            char what[160];
            snprintf(what, sizeof what, "%s %dx%d %s lambda %g poison %d%s%s, %d helpers", name,
                     img->width, img->height, mmp_order_name(kinds[ki]), lambda, checks[i].poison,
                     checks[i].reverse ? " reversed" : "",
                     checks[i].parallel_min ? " on all threads" : "",
                     checks[i].helpers > 0 ? checks[i].helpers : 0);
            assert_decodes(buf, len, &checks[i], &rec, what);
        }
        print_message("%-8s %dx%d %-9s lambda %4g: %5zu bytes, same image with the step's "
                      "blocks poisoned, forwards, backwards, on all threads and on crews\n",
                      name, img->width, img->height, mmp_order_name(kinds[ki]), lambda, len);
        free(buf);
        mmp_image_free(&rec);
    }
}

static void test_poisoned_steps(void **state)
{
    (void)state;
    /* Sizes with several blocks per step and partial blocks at the edges. */
    mmp_image c = {0};
    if (load_crop("camera", 180, 200, 80, 64, &c) == 0) {
        check_poisoned("camera", &c, 10);
        mmp_image_free(&c);
    }
    if (load_crop("brick", 7, 11, 71, 53, &c) == 0) {
        check_poisoned("brick", &c, 50);
        mmp_image_free(&c);
    }
    /* Noise: every mode and many leaves, at a low lambda. */
    mmp_image noise = {0};
    assert_int_equal(mmp_image_alloc(&noise, 64, 48, 255), 0);
    rng_seed(17);
    for (int i = 0; i < 64 * 48; i++)
        noise.pix[i] = (uint16_t)(i % 64 < 32 ? rng_range(0, 255) : (i % 64) * 4 + rng_range(0, 3));
    check_poisoned("noise", &noise, 2);
    mmp_image_free(&noise);
}

/* A file of six tiles decodes to the encoder's reconstruction on 1, 2 and 3
 * threads (OMP_NUM_THREADS, read at each decode), with one tile at a time
 * on 1 and several at once on 2 and 3: each tile waits for a second to
 * start (mmp_decode_check.meet), which only another thread can start. */
static void test_tiles_on_threads(void **state)
{
    (void)state;
    mmp_image img = {0};
    if (load_crop("camera", 100, 150, 300, 200, &img))
        return;
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = 30;
    s.speed = 4;
    s.tile_width = 128;
    s.tile_height = 128;
    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_image rec = {0};
    char err[256] = "";
    if (mmp_encode(&s, &img, &buf, &len, &rec, NULL, err, sizeof err))
        fail_msg("encode: %s", err);
    const char *old = getenv("OMP_NUM_THREADS");
    char *saved = old ? strdup(old) : NULL;
    for (int t = 1; t <= 3; t++) {
        char n[4], what[64];
        snprintf(n, sizeof n, "%d", t);
        assert_int_equal(setenv("OMP_NUM_THREADS", n, 1), 0);
        _Atomic int most;
        atomic_init(&most, 0);
        const mmp_decode_check chk = {.poison = -1, .meet = t > 1 ? 2 : 0, .tiles_at_once = &most};
        snprintf(what, sizeof what, "6 tiles, OMP_NUM_THREADS=%d", t);
        assert_decodes(buf, len, &chk, &rec, what);
        if (t == 1)
            assert_int_equal(atomic_load(&most), 1);
        else if (atomic_load(&most) < 2)
            fail_msg("%s: at most %d tile at a time", what, atomic_load(&most));
        mmp_image dec = {0};
        assert_int_equal(mmp_decode(buf, len, &dec, err, sizeof err), 0);
        assert_decodes(buf, len, NULL, &dec, what);
        mmp_image_free(&dec);
        print_message("%s: the reconstruction, up to %d tiles at once\n", what,
                      atomic_load(&most));
    }
    if (saved)
        setenv("OMP_NUM_THREADS", saved, 1);
    else
        unsetenv("OMP_NUM_THREADS");
    free(saved);
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&img);
}

/* The order is a setting the encoder checks. */
static void test_bad_order(void **state)
{
    (void)state;
    mmp_image img = {0};
    assert_int_equal(mmp_image_alloc(&img, 16, 16, 255), 0);
    for (int order = -1; order <= 2; order += 3) {
        mmp_settings s;
        mmp_default_settings(&s);
        s.order = order;
        encode_refused(&s, &img, "order");
    }
    mmp_settings s;
    mmp_default_settings(&s);
    assert_int_equal(s.order, MMP_ORDER_WAVEFRONT);
    mmp_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_poisoned_steps),
        cmocka_unit_test(test_bad_order),
        cmocka_unit_test(test_tiles_on_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
