/*
 * libFuzzer target: differential test of the search engines.
 *
 * An image and settings are built from the input as in fuzz_roundtrip_fast
 * (at most 48 x 32 and 1024 pixels, the search's work bounded by the
 * input's cost class, dict_cap 64..128, eight lambdas, speeds 0 to 4, both
 * coding orders; layout in fuzz_roundtrip.c and fuzz_roundtrip_fast.c) and
 * encoded with the seq engine; seq's file must decode to seq's
 * reconstruction. Then every other engine built in (omp with 2 to 4
 * threads from input byte 7, opencl on its default device) encodes the same
 * image with the same settings, and its file must equal seq's byte for byte
 * and its reconstruction seq's sample for sample (kernels/engine.h: every
 * engine that meets the contract produces the same bytes).
 *
 * An engine that fails to start on its first use (no OpenCL platform or
 * device) is skipped for the rest of the run, with one line on stderr; one
 * that started before and then fails, or fails in any other way, is a
 * finding. MMP_FUZZ_DIFF_ENGINES="omp" (a comma-separated list) restricts
 * the engines compared with seq.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmp/mmp.h"
#include "tests/fuzz/fuzz_util.h"


static const char *const engines[] = {"omp", "opencl"};
#define NENGINES (sizeof engines / sizeof engines[0])
/* 0: not tried yet, 1: started, -1: not built in, not wanted or cannot start */
static int engine_state[NENGINES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_one_thread();
    const char *want = getenv("MMP_FUZZ_DIFF_ENGINES");
    for (size_t i = 0; i < NENGINES; i++) {
        int wanted = 1;
        if (want) {
            size_t n = strlen(engines[i]);
            const char *p = want;
            wanted = 0;
            while ((p = strstr(p, engines[i])) != NULL) {
                if ((p == want || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
                    wanted = 1;
                p += n;
            }
        }
        if (!wanted || !mmp_engine_exists(engines[i]))
            engine_state[i] = -1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mmp_settings s;
    fuzz_settings(data, size, 0, &s);
    fuzz_fit_settings_maxval(&s, fuzz_maxval(data, size));
    int w, h, ch;
    fuzz_fast_image(data, size, &s, &w, &h, &ch); /* the sizes depend on the settings */
    mmp_image img, rec0;
    fuzz_make_image(data, size, w, h, ch, &img);
    uint8_t *buf0;
    size_t len0;
    fuzz_encode_checked(&s, &img, &buf0, &len0, &rec0);
    fuzz_decode_equal(buf0, len0, &rec0);

    size_t npix = (size_t)img.width * img.height * (size_t)img.channels;
    for (size_t i = 0; i < NENGINES; i++) {
        if (engine_state[i] < 0)
            continue;
        s.engine = engines[i];
        s.threads = strcmp(engines[i], "omp") == 0 ? 2 + (int)(byte_at(data, size, 7) % 3) : 0;
        /* opencl from the first step, or after a head start of 1 to 3
         * steps on omp (a fixed number: the same work at every run). */
        s.head_start = (int)(byte_at(data, size, 7) / 3 % 4);
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_image rec = {0};
        char err[512] = "";
        int rc = mmp_encode(&s, &img, &buf, &len, &rec, NULL, err, sizeof err);
        if (rc) {
            check_error_text(rc, err);
            if (engine_state[i] == 0 && rc == MMP_EENGINE && strstr(err, "cannot start")) {
                fprintf(stderr, "fuzz_diff: skipping the %s engine: %s\n", engines[i], err);
                engine_state[i] = -1;
                continue;
            }
            fprintf(stderr, "fuzz_diff: the %s engine failed: %s\n", engines[i], err);
            abort();
        }
        engine_state[i] = 1;
        if (len != len0 || memcmp(buf, buf0, len) != 0) {
            fprintf(stderr, "fuzz_diff: the %s engine's file differs from seq's\n", engines[i]);
            abort();
        }
        if (rec.width != rec0.width || rec.height != rec0.height || rec.maxval != rec0.maxval || rec.channels != rec0.channels ||
            memcmp(rec.pix, rec0.pix, sizeof(uint16_t) * npix) != 0) {
            fprintf(stderr, "fuzz_diff: the %s engine's reconstruction differs from seq's\n",
                    engines[i]);
            abort();
        }
        free(buf);
        mmp_image_free(&rec);
    }
    free(buf0);
    mmp_image_free(&rec0);
    mmp_image_free(&img);
    return 0;
}
