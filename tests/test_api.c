/*
 * The public API as a user of the library sees it: this file includes no
 * project header but mmp/mmp.h, which proves that the header stands alone.
 *
 * 1. The library never prints: an encode with verbose settings on every
 *    engine and a decode write nothing to stdout or stderr (both redirected
 *    to a file here), and the figures reach the log callback instead.
 * 2. The library never reads the environment: MMP_CL_DEVICE naming no
 *    device does not stop the opencl engine, while the same name in the
 *    settings does, with a one-line reason.
 * 3. The engine names and device listing come from the registry.
 * 4. The default engine is auto, and it writes the bytes of seq.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mmp/mmp.h"

/* A 40x24 image with edges and texture, same on every run. */
static void make_image(mmp_image *img, int maxval)
{
    assert_int_equal(mmp_image_alloc(img, 40, 24, maxval), 0);
    uint32_t r = 12345;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            r = r * 1103515245u + 12345u;
            const int v = (x < 20 ? 40 : 180) + (y * 3) + (int)((r >> 16) % 16);
            img->pix[y * img->width + x] = (uint16_t)(v * maxval / 255);
        }
}

typedef struct log_record {
    int info, warning, error;
    char last[1024];
} log_record;

static void record(void *opaque, int level, const char *msg)
{
    log_record *lr = opaque;
    if (level == MMP_LOG_INFO)
        lr->info++;
    else if (level == MMP_LOG_WARNING)
        lr->warning++;
    else
        lr->error++;
    snprintf(lr->last, sizeof lr->last, "%s", msg);
    assert_null(strchr(msg, '\n'));
}

/* Engines named in mmp_engine_names(), "auto" left out. */
static int engine_list(char names[][32], int max)
{
    const char *s = mmp_engine_names();
    int n = 0;
    while (*s && n < max) {
        size_t len = strcspn(s, ",");
        if (len && len < 32) {
            memcpy(names[n], s, len);
            names[n][len] = 0;
            if (strcmp(names[n], "auto") != 0)
                n++;
        }
        s += len;
        while (*s == ',' || *s == ' ')
            s++;
    }
    return n;
}

/* Whether the opencl engine is built in and sees a device. */
static int have_opencl(void)
{
    mmp_device_info dev[8];
    int pick = -1;
    return mmp_engine_devices("opencl", dev, 8, NULL, &pick, NULL, 0) > 0 && pick >= 0;
}

static void test_library_is_silent(void **state)
{
    (void)state;
    char path[] = "/tmp/mmp-test-api-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stdout);
    fflush(stderr);
    const int out = dup(1), err = dup(2);
    assert_true(out >= 0 && err >= 0);
    assert_int_equal(dup2(fd, 1), 1);
    assert_int_equal(dup2(fd, 2), 2);

    char names[8][32];
    const int n = engine_list(names, 8);
    int infos[8] = {0}, fails = 0;
    mmp_image img;
    make_image(&img, 255);
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], "opencl") == 0 && !have_opencl())
            continue;
        log_record lr = {0};
        mmp_settings st;
        mmp_default_settings(&st);
        st.engine = names[i];
        st.threads = 2;
        st.verbose = 1;
        st.log = record;
        st.log_opaque = &lr;
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_image rec = {0}, dec = {0};
        char why[256];
        fails += mmp_encode(&st, &img, &buf, &len, &rec, NULL, why, sizeof why) != 0;
        fails += mmp_decode(buf, len, &dec, why, sizeof why) != 0;
        fails += dec.pix == NULL || memcmp(dec.pix, rec.pix, sizeof(uint16_t) * 40 * 24) != 0;
        infos[i] = lr.info;
        free(buf);
        mmp_image_free(&rec);
        mmp_image_free(&dec);
    }
    mmp_image_free(&img);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    const off_t printed = lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(path);
    assert_int_equal(fails, 0);
    if (printed != 0)
        fail_msg("the library printed %lld bytes to stdout or stderr", (long long)printed);
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], "opencl") == 0 && !have_opencl())
            continue;
        print_message("%s: %d messages at MMP_LOG_INFO\n", names[i], infos[i]);
        if (infos[i] == 0)
            fail_msg("engine %s: verbose figures did not reach the log callback", names[i]);
    }
}

static void test_environment_ignored(void **state)
{
    (void)state;
    if (!have_opencl())
        skip();
    setenv("MMP_CL_DEVICE", "no such device anywhere", 1);
    mmp_image img;
    make_image(&img, 255);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "opencl";
    st.threads = 2;
    uint8_t *buf = NULL;
    size_t len = 0;
    char why[256] = "";
    const int e = mmp_encode(&st, &img, &buf, &len, NULL, NULL, why, sizeof why);
    unsetenv("MMP_CL_DEVICE");
    if (e)
        fail_msg("the library read MMP_CL_DEVICE: %s", why);
    free(buf);

    st.device = "no such device anywhere";
    log_record lr = {0};
    st.log = record;
    st.log_opaque = &lr;
    assert_int_equal(mmp_encode(&st, &img, &buf, &len, NULL, NULL, why, sizeof why), MMP_EENGINE);
    assert_null(buf);
    print_message("device setting: %s\n", why);
    assert_non_null(strstr(why, "no such device anywhere"));
    assert_null(strchr(why, '\n'));
    mmp_image_free(&img);
}

static void test_registry_names(void **state)
{
    (void)state;
    const char *names = mmp_engine_names();
    assert_int_equal(strncmp(names, "seq, ", 5), 0);
    assert_non_null(strstr(names, "auto"));
    assert_true(mmp_engine_exists("seq"));
    assert_true(mmp_engine_exists("auto"));
    assert_false(mmp_engine_exists("nope"));
    assert_false(mmp_engine_exists(NULL));
    char list[8][32];
    const int n = engine_list(list, 8);
    for (int i = 0; i < n; i++)
        assert_true(mmp_engine_exists(list[i]));
    mmp_device_info dev[4];
    int pick = 7;
    char why[256] = "";
    assert_int_equal(mmp_engine_devices("seq", dev, 4, NULL, &pick, why, sizeof why),
                     MMP_EUNSUPPORTED);
    assert_int_equal(pick, -1);
    assert_int_equal(mmp_engine_devices("nope", dev, 4, NULL, &pick, why, sizeof why),
                     MMP_EUNSUPPORTED);
    /* Unknown engines are refused by the encoder too, with the names. */
    mmp_image img;
    make_image(&img, 255);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "nope";
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(mmp_encode(&st, &img, &buf, &len, NULL, NULL, why, sizeof why), MMP_EINVAL);
    assert_non_null(strstr(why, names));
    mmp_image_free(&img);
}

static void test_auto_is_seq_bytes(void **state)
{
    (void)state;
    mmp_image img;
    make_image(&img, 1023);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "seq";
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    mmp_enc_stats sa, sb;
    char why[256];
    assert_int_equal(mmp_encode(&st, &img, &a, &na, NULL, &sa, why, sizeof why), 0);
    st.engine = "auto";
    st.threads = 2;
    assert_int_equal(mmp_encode(&st, &img, &b, &nb, NULL, &sb, why, sizeof why), 0);
    print_message("-e auto ran %s\n", sb.engine);
    assert_string_equal(sa.engine, "seq");
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
    mmp_image_free(&img);
}

/* The engine auto picks on this machine by the rule mmp.h states: opencl
 * when its default device is a GPU, else omp when built in, else seq. */
static const char *expected_auto_engine(void)
{
    mmp_device_info dev[8];
    int pick = -1;
    const int n = mmp_engine_devices("opencl", dev, 8, NULL, &pick, NULL, 0);
    if (n > 0 && pick >= 0 && pick < 8 && dev[pick].is_gpu)
        return "opencl";
    return mmp_engine_exists("omp") ? "omp" : "seq";
}

/* The default settings (and a NULL engine) run auto's choice and write
 * the reference's bytes. */
static void test_default_is_auto(void **state)
{
    (void)state;
    mmp_image img;
    make_image(&img, 255);
    mmp_settings st;
    mmp_default_settings(&st);
    assert_non_null(st.engine);
    assert_string_equal(st.engine, "auto");
    uint8_t *def = NULL, *null = NULL, *seq = NULL;
    size_t ndef = 0, nnull = 0, nseq = 0;
    mmp_enc_stats sdef, snull, sseq;
    char why[256];
    assert_int_equal(mmp_encode(&st, &img, &def, &ndef, NULL, &sdef, why, sizeof why), 0);
    st.engine = NULL;
    assert_int_equal(mmp_encode(&st, &img, &null, &nnull, NULL, &snull, why, sizeof why), 0);
    st.engine = "seq";
    assert_int_equal(mmp_encode(&st, &img, &seq, &nseq, NULL, &sseq, why, sizeof why), 0);
    print_message("default settings ran %s\n", sdef.engine);
    assert_string_equal(sdef.engine, expected_auto_engine());
    assert_string_equal(snull.engine, sdef.engine);
    assert_string_equal(sseq.engine, "seq");
    assert_int_equal(ndef, nseq);
    assert_memory_equal(def, seq, nseq);
    assert_int_equal(nnull, nseq);
    assert_memory_equal(null, seq, nseq);
    free(def);
    free(null);
    free(seq);
    mmp_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_is_silent),
        cmocka_unit_test(test_environment_ignored),
        cmocka_unit_test(test_registry_names),
        cmocka_unit_test(test_auto_is_seq_bytes),
        cmocka_unit_test(test_default_is_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
