/*
 * The progress callback stops an encode (mmp_settings.progress returns
 * non-zero):
 *
 * 1. At its first call and at a later one, with every engine built in and
 *    able to start here (seq, omp, opencl, auto): mmp_encode returns
 *    MMP_ECANCELED with mmp_strerror's text in errbuf, no file, no
 *    reconstruction, and the callback is not called again.
 * 2. With tiles coded at once on several CPU workers: the same, whichever
 *    worker's step asks to stop; stopped at the first call, no worker
 *    finishes a plane (none logs the plane's figures).
 * 3. Nothing of a cancelled encode stays behind: the next encode with the
 *    same settings gives the bytes of one that was never cancelled.
 * Under make check-sanitize, LeakSanitizer checks that everything is freed.
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

#include "mmp/mmp.h"

/* The callback's script: stop at call number stop_at (1 is the first;
 * 0: never), and what it saw. */
typedef struct script {
    int stop_at, calls, calls_after_stop, last_done, total;
} script;

static int scripted(void *opaque, int done, int total)
{
    script *sc = opaque;
    if (sc->stop_at && sc->calls >= sc->stop_at)
        sc->calls_after_stop++;
    sc->calls++;
    sc->last_done = done;
    sc->total = total;
    return sc->stop_at && sc->calls == sc->stop_at;
}

static void texture(mmp_image *img, int w, int h, int ch)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, ch, 255), 0);
    uint32_t r = 99;
    for (int i = 0; i < w * h * ch; i++) {
        r = r * 1103515245u + 12345u;
        const int x = (i / ch) % w, y = (i / ch) / w;
        img->pix[i] = (uint16_t)(((x * 3 + y * 2 + (i % ch) * 40) + (int)((r >> 16) % 24)) % 256);
    }
}

static int engine_starts(const char *name)
{
    if (!mmp_engine_exists(name))
        return 0;
    if (strcmp(name, "opencl") != 0)
        return 1;
    mmp_device_info dev[8];
    int pick = -1;
    return mmp_engine_devices("opencl", dev, 8, NULL, &pick, NULL, 0) > 0 && pick >= 0;
}

/* The planes whose figures were logged (from several threads at once). */
static void count_planes(void *opaque, int level, const char *msg)
{
    if (level == MMP_LOG_INFO && strstr(msg, "prediction leaves per mode"))
        atomic_fetch_add((_Atomic int *)opaque, 1);
}

/* An encode of img with s stopped at call stop_at: MMP_ECANCELED, nothing
 * returned, no call after the one that said stop; returns how many planes
 * were finished. */
static int cancelled(const mmp_settings *s0, const mmp_image *img, int stop_at, const char *who)
{
    mmp_settings s = *s0;
    _Atomic int planes = 0;
    s.verbose = 1;
    s.log = count_planes;
    s.log_opaque = (void *)&planes;
    script sc = {.stop_at = stop_at};
    s.progress = scripted;
    s.progress_opaque = &sc;
    uint8_t *out = (uint8_t *)&sc;
    size_t len = 1;
    mmp_image rec = {0};
    char err[256] = "";
    const int rc = mmp_encode(&s, img, &out, &len, &rec, NULL, err, sizeof err);
    if (rc != MMP_ECANCELED)
        fail_msg("%s, stop at call %d: %d %s", who, stop_at, rc, err);
    assert_string_equal(err, mmp_strerror(MMP_ECANCELED));
    assert_null(out);
    assert_int_equal(len, 0);
    assert_null(rec.pix);
    assert_int_equal(sc.calls, stop_at);
    assert_int_equal(sc.calls_after_stop, 0);
    assert_true(sc.last_done < sc.total);
    return atomic_load(&planes);
}

/* The bytes of img with s, and the calls the callback got. */
static void full_encode(const mmp_settings *s0, const mmp_image *img, uint8_t **out, size_t *len,
                        int *calls, mmp_enc_stats *stats)
{
    mmp_settings s = *s0;
    script sc = {0};
    s.progress = scripted;
    s.progress_opaque = &sc;
    char err[256] = "";
    if (mmp_encode(&s, img, out, len, NULL, stats, err, sizeof err))
        fail_msg("encode: %s", err);
    assert_int_equal(sc.last_done, sc.total);
    *calls = sc.calls;
}

static void test_cancel_every_engine(void **state)
{
    (void)state;
    mmp_image img;
    texture(&img, 64, 48, 1);
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = 30;
    s.speed = 4;
    const char *engines[] = {"seq", "omp", "opencl", "auto"};
    uint8_t *ref = NULL;
    size_t rlen = 0;
    for (size_t k = 0; k < sizeof engines / sizeof engines[0]; k++) {
        if (!engine_starts(engines[k]))
            continue;
        s.engine = engines[k];
        s.threads = strcmp(engines[k], "omp") == 0 ? 2 : 0;
        int calls;
        uint8_t *out;
        size_t len;
        full_encode(&s, &img, &out, &len, &calls, NULL);
        assert_true(calls > 3);
        cancelled(&s, &img, 1, engines[k]);
        cancelled(&s, &img, calls / 2, engines[k]);
        cancelled(&s, &img, calls - 1, engines[k]);
        /* The next encode is as if none had been cancelled. */
        uint8_t *again;
        size_t alen;
        full_encode(&s, &img, &again, &alen, &calls, NULL);
        assert_int_equal(alen, len);
        assert_memory_equal(again, out, len);
        if (!ref) {
            ref = out;
            rlen = len;
        } else {
            assert_int_equal(len, rlen);
            assert_memory_equal(out, ref, len);
            mmp_free(out);
        }
        mmp_free(again);
        print_message("%s: cancelled at the first, a middle and the last but one of %d calls\n",
                      engines[k], calls);
    }
    mmp_free(ref);
    mmp_image_free(&img);
}

/* Tiles coded by two workers at once (omp, 2 threads): four in grey, two
 * in colour, stopped at the first call, at one in the middle, at one near
 * the end. */
static void test_cancel_tiles(void **state)
{
    (void)state;
    if (!engine_starts("omp")) {
        print_message("no omp engine: tiles are coded one after another\n");
        return;
    }
    for (int ch = 1; ch <= 3; ch += 2) {
        mmp_image img;
        texture(&img, 256, ch == 1 ? 256 : 128, ch);
        mmp_settings s;
        mmp_default_settings(&s);
        s.lambda = 30;
        s.speed = 4;
        s.engine = "omp";
        s.threads = 2;
        s.tile_width = s.tile_height = 128;
        int calls;
        uint8_t *out;
        size_t len;
        mmp_enc_stats st;
        full_encode(&s, &img, &out, &len, &calls, &st);
        assert_int_equal(st.tiles, ch == 1 ? 4 : 2);
        assert_int_equal(st.tile_workers, 2);
        assert_int_equal(cancelled(&s, &img, 1, "tiles"), 0);
        cancelled(&s, &img, calls / 3, "tiles");
        cancelled(&s, &img, calls - 2, "tiles");
        uint8_t *again;
        size_t alen;
        full_encode(&s, &img, &again, &alen, &calls, NULL);
        assert_int_equal(alen, len);
        assert_memory_equal(again, out, len);
        print_message("%s in %d tiles on %d workers: cancelled at calls 1, %d and %d of %d\n",
                      ch == 1 ? "grey" : "colour", st.tiles, st.tile_workers, calls / 3,
                      calls - 2, calls);
        mmp_free(out);
        mmp_free(again);
        mmp_image_free(&img);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_every_engine),
        cmocka_unit_test(test_cancel_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
