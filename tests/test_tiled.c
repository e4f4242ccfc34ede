/*
 * The encode cut at its tiles (mmp/enc/tiled.h), as mmp-enc-mpi runs it:
 * a plan, the tiles coded apart by two coders from their own samples in
 * an order of their own, and the file put together, is byte for byte
 * mmp_encode's file, with its reconstruction and its figures, and holds
 * the ancillary chunks asked for; for grey, colour with alpha and
 * ancillary chunks, 4:2:0, 16-bit samples in raster order, lossless and
 * near-lossless files. A coder stops when its progress
 * callback says so, and refuses samples that are not its tile's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mmp/enc/tiled.h"
#include "mmp/mmp.h"

static void texture(mmp_image *img, int w, int h, int ch, int maxval)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, ch, maxval), 0);
    uint32_t r = 7;
    for (int i = 0; i < w * h * ch; i++) {
        r = r * 1103515245u + 12345u;
        const int x = (i / ch) % w, y = (i / ch) / w;
        const int v = (x * 3 + y * 2 + (i % ch) * 40) % 256 + (int)((r >> 16) % 24);
        img->pix[i] = (uint16_t)((long)(v % 256) * maxval / 255);
    }
}

/* The tiles of img with s coded by two coders, coder k taking the tiles
 * of parity k from the last, each from its crop, then assembled; compared
 * with mmp_encode's file, reconstruction and figures. */
static void same_as_encode(const mmp_settings *s, const mmp_image *img, const char *what)
{
    uint8_t *ref = NULL;
    size_t rlen = 0;
    mmp_image rrec = {0};
    mmp_enc_stats rst;
    char err[512] = "";
    if (mmp_encode(s, img, &ref, &rlen, &rrec, &rst, err, sizeof err))
        fail_msg("%s: mmp_encode: %s", what, err);

    mmp_tiled_plan plan;
    assert_int_equal(mmp_tiled_plan_make(s, img, &plan, err, sizeof err), 0);
    const int n = mmp_tiled_count(&plan);
    assert_int_equal(n, rst.tiles);
    assert_true(n >= 4);
    uint8_t **payload = calloc((size_t)n, sizeof *payload);
    size_t *len = calloc((size_t)n, sizeof *len);
    assert_non_null(payload);
    assert_non_null(len);
    mmp_image rec = {0};
    assert_int_equal(mmp_image_alloc_channels(&rec, img->width, img->height,
                                              mmp_tiled_channels(&plan), img->maxval),
                     0);
    mmp_tile_totals totals[2];
    for (int k = 0; k < 2; k++) {
        mmp_tile_coder *tc = NULL;
        if (mmp_tile_coder_new(s, &plan, -1, 0, &tc, err, sizeof err))
            fail_msg("%s: coder %d: %s", what, k, err);
        for (int i = n - 1 - k; i >= 0; i -= 2) {
            mmp_image part = {0}, prec = {0};
            int x, y, w, h;
            mmp_tiled_rect(&plan, i, &x, &y, &w, &h);
            assert_int_equal(mmp_tiled_crop(&plan, img, i, &part), 0);
            assert_int_equal(mmp_image_alloc_channels(&prec, w, h, mmp_tiled_channels(&plan),
                                                      mmp_tiled_maxval(&plan)),
                             0);
            if (mmp_tile_coder_code(tc, i, &part, &payload[i], &len[i], &prec, err, sizeof err))
                fail_msg("%s: tile %d: %s", what, i, err);
            mmp_tiled_paste(&plan, i, &prec, &rec);
            mmp_image_free(&part);
            mmp_image_free(&prec);
        }
        assert_int_equal(mmp_tile_coder_finish(tc, &totals[k], err, sizeof err), 0);
        mmp_tile_coder_free(tc);
    }
    uint8_t *out = NULL;
    size_t olen = 0;
    assert_int_equal(mmp_tiled_assemble(s, &plan, (const uint8_t *const *)payload, len, &out, &olen,
                                        err, sizeof err),
                     0);
    if (olen != rlen || memcmp(out, ref, rlen))
        fail_msg("%s: %zu bytes apart, %zu from mmp_encode", what, olen, rlen);
    /* mmp_encode assembles its file the same way: the chunks are checked in
     * the file itself. */
    mmp_chunk got[4];
    assert_int_equal(mmp_chunks(out, olen, got, 4, err, sizeof err), s->nchunks);
    for (int k = 0; k < s->nchunks; k++) {
        assert_string_equal(got[k].type, s->chunks[k].type);
        assert_int_equal(got[k].len, s->chunks[k].len);
        assert_memory_equal(got[k].data, s->chunks[k].data, got[k].len);
    }
    const size_t samples = (size_t)img->width * img->height * (size_t)mmp_image_channels(&rrec);
    assert_memory_equal(rec.pix, rrec.pix, samples * sizeof(uint16_t));
    mmp_enc_stats st;
    mmp_tiled_stats(&plan, totals, 2, &st);
    assert_int_equal(st.tiles, n);
    assert_int_equal(st.tile_workers, 2);
    assert_int_equal(st.planes, rst.planes);
    assert_int_equal(st.blocks, rst.blocks);
    assert_string_equal(st.engine, rst.engine);
    for (int p = 0; p < st.planes; p++)
        assert_true(st.plane_psnr[p] == rst.plane_psnr[p]);
    for (int i = 0; i < n; i++)
        free(payload[i]);
    free(payload);
    free(len);
    free(out);
    free(ref);
    mmp_image_free(&rec);
    mmp_image_free(&rrec);
}

static void test_tiles_apart(void **state)
{
    (void)state;
    static const uint8_t exif[] = "Exif\0\0MM-test", text[] = "Comment\0\0\0tiles apart";
    const mmp_chunk chunks[2] = {{MMP_CHUNK_EXIF, exif, sizeof exif},
                                 {MMP_CHUNK_TEXT, text, sizeof text}};
    mmp_image grey = {0}, rgba = {0}, deep = {0}, rgb = {0};
    texture(&grey, 300, 200, 1, 255);
    texture(&rgba, 260, 140, 4, 255);
    texture(&deep, 270, 150, 1, 4095);
    texture(&rgb, 140, 260, 3, 255);
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    s.speed = 4;
    s.lambda = 30;
    s.tile_width = s.tile_height = 128;
    same_as_encode(&s, &grey, "grey, 6 tiles");

    mmp_settings c = s;
    c.chunks = chunks;
    c.nchunks = 2;
    c.alpha = MMP_ALPHA_MMP;
    c.chroma = MMP_CHROMA_420;
    same_as_encode(&c, &rgba, "colour with alpha, 4:2:0, ancillary chunks");

    mmp_settings d = s;
    d.order = MMP_ORDER_RASTER;
    d.dct = 0;
    d.tile_width = 144;
    same_as_encode(&d, &deep, "16-bit grey, raster order, no DCT");

    mmp_settings l = s;
    l.max_error = 0;
    same_as_encode(&l, &rgb, "lossless colour");

    mmp_settings nl = s;
    nl.max_error = 2;
    nl.residual = MMP_RESIDUAL_AFTER_MMP;
    same_as_encode(&nl, &grey, "near-lossless grey after MMP");

    mmp_image_free(&grey);
    mmp_image_free(&rgba);
    mmp_image_free(&deep);
    mmp_image_free(&rgb);
}

/* A progress callback that says stop at its second call. */
static int stop_second(void *opaque, int done, int total)
{
    int *calls = opaque;
    assert_true(done <= total);
    return ++*calls == 2;
}

static void test_coder_stops_and_checks(void **state)
{
    (void)state;
    mmp_image img = {0}, part = {0}, small = {0};
    texture(&img, 256, 256, 1, 255);
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    s.speed = 4;
    s.tile_width = s.tile_height = 128;
    char err[512] = "";
    mmp_tiled_plan plan;
    /* What mmp_encode refuses, the plan refuses with its words. */
    mmp_settings bad = s;
    bad.lambda = -1;
    assert_int_equal(mmp_tiled_plan_make(&bad, &img, &plan, err, sizeof err), MMP_EINVAL);
    assert_string_equal(err, "lambda must be between 0 and 1000000");

    assert_int_equal(mmp_tiled_plan_make(&s, &img, &plan, err, sizeof err), 0);
    assert_int_equal(mmp_tiled_count(&plan), 4);
    assert_int_equal(mmp_tiled_tile_blocks(&plan, 3), 64);
    int calls = 0;
    s.progress = stop_second;
    s.progress_opaque = &calls;
    mmp_tile_coder *tc = NULL;
    assert_int_equal(mmp_tile_coder_new(&s, &plan, -1, 0, &tc, err, sizeof err), 0);
    uint8_t *payload = (uint8_t *)&calls;
    size_t len = 1;
    assert_int_equal(mmp_tiled_crop(&plan, &img, 1, &part), 0);
    assert_int_equal(mmp_tile_coder_code(tc, 1, &part, &payload, &len, NULL, err, sizeof err),
                     MMP_ECANCELED);
    assert_null(payload);
    assert_int_equal(len, 0);
    assert_int_equal(calls, 2);
    /* Samples of another size than the tile's or the image's. */
    texture(&small, 100, 128, 1, 255);
    assert_int_equal(mmp_tile_coder_code(tc, 1, &small, &payload, &len, NULL, err, sizeof err),
                     MMP_EINVAL);
    assert_int_equal(mmp_tile_coder_code(tc, 4, &img, &payload, &len, NULL, err, sizeof err),
                     MMP_EINVAL);
    mmp_tile_totals t;
    assert_int_equal(mmp_tile_coder_finish(tc, &t, err, sizeof err), 0);
    assert_int_equal(t.tiles, 0);
    mmp_tile_coder_free(tc);
    mmp_image_free(&img);
    mmp_image_free(&part);
    mmp_image_free(&small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiles_apart),
        cmocka_unit_test(test_coder_stops_and_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
