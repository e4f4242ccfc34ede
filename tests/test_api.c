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
 * 4. The default engine is auto, and it writes the bytes of seq; auto
 *    starts no opencl for an encode too small to repay its start.
 * 5. mmp_probe gives the header fields of a file, and refuses a damaged one
 *    with mmp_decode's code and reason.
 * 6. The API's edges: every numeric setting out of its range (threads
 *    above MMP_MAX_THREADS or negative among them) and every NULL where a
 *    pointer is required are MMP_EINVAL, before any work; mmp_psnr and
 *    mmp_psnr_channel give NAN for images that differ in size or
 *    channels, NULL images and channels the images lack.
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
#include <limits.h>
#include <math.h>
#include <zlib.h>

#include "mmp/mmp.h"

/* A 40x24 image with edges and texture, same on every run. */
static void make_image(mmp_image *img, int maxval)
{
    assert_int_equal(mmp_image_alloc(img, 40, 24, maxval), 0);
    uint32_t r = 12345;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            r = r * 1103515245u + 12345u;
            const int v = (x < 20 ? 40 : 180) + (y * 3) + (int)((r >> 16) % 16) - 20;
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

/* The engine auto picks on this machine for an encode of `blocks` blocks
 * on `threads` threads (0: the cores) by the rule mmp.h states: opencl when
 * its default device is a GPU and the blocks are more than
 * MMP_AUTO_CPU_BLOCKS_PER_CORE per core, else omp when built in, else seq. */
static const char *expected_auto_engine(long blocks, int threads)
{
    mmp_device_info dev[8];
    int pick = -1;
    const int n = mmp_engine_devices("opencl", dev, 8, NULL, &pick, NULL, 0);
    const long cores = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0 && pick >= 0 && pick < 8 && dev[pick].is_gpu &&
        blocks > MMP_AUTO_CPU_BLOCKS_PER_CORE * cores)
        return "opencl";
    return mmp_engine_exists("omp") ? "omp" : "seq";
}

/* A log that keeps whether a line holding `want` came. */
typedef struct log_find {
    const char *want;
    int found;
} log_find;

static void find_line(void *opaque, int level, const char *msg)
{
    log_find *lf = opaque;
    (void)level;
    lf->found |= strstr(msg, lf->want) != NULL;
}

/*
 * img encoded with st by seq, then by auto on `threads` threads with
 * verbose settings: the same bytes. Returns whether a line of the log held
 * `want`; auto's stats into es.
 */
static int auto_as_seq(mmp_settings st, const mmp_image *img, int threads, const char *want,
                       mmp_enc_stats *es)
{
    uint8_t *ref = NULL, *buf = NULL;
    size_t nref = 0, nbuf = 0;
    char why[256];
    st.engine = "seq";
    assert_int_equal(mmp_encode(&st, img, &ref, &nref, NULL, NULL, why, sizeof why), 0);
    log_find lf = {.want = want};
    st.engine = "auto";
    st.threads = threads;
    st.verbose = 1;
    st.log = find_line;
    st.log_opaque = &lf;
    assert_int_equal(mmp_encode(&st, img, &buf, &nbuf, NULL, es, why, sizeof why), 0);
    assert_int_equal(nbuf, nref);
    assert_memory_equal(buf, ref, nref);
    free(ref);
    free(buf);
    return lf.found;
}

/* auto starts no opencl for an encode that would end before opencl
 * started: a lossless one (the residual stage alone searches no block) and
 * one of at most MMP_AUTO_CPU_BLOCKS_PER_CORE blocks per thread, and says
 * so with verbose settings. Above that it starts opencl behind a head start
 * (a machine without a GPU then stays on the CPU engine). Same bytes. */
static void test_auto_small(void **state)
{
    (void)state;
    if (!mmp_engine_exists("opencl")) {
        print_message("no opencl in this build: auto has no engine to leave out\n");
        return;
    }
    mmp_image small, large;
    make_image(&small, 255); /* 40 x 24: 3 x 2 blocks */
    assert_int_equal(mmp_image_alloc(&large, 96, 80, 255), 0); /* 6 x 5 blocks */
    for (int i = 0; i < 96 * 80; i++)
        large.pix[i] = small.pix[(i / 96 % 24) * 40 + i % 40];
    static const char line[] = "no engine slower to start is started";
    const struct {
        const mmp_image *img;
        int threads, max_error, left_out;
        long blocks;
    } cases[] = {
        {&small, 0, -1, 1, 6},
        {&large, 0, 0, 1, 0}, /* lossless */
        {&large, 1, -1, 0, 30},
        {&large, 2, -1, 1, 30},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mmp_settings st;
        mmp_default_settings(&st);
        st.max_error = cases[k].max_error;
        mmp_enc_stats es;
        const int left_out = auto_as_seq(st, cases[k].img, cases[k].threads, line, &es);
        print_message("%ld blocks, %d threads: auto ran %s, opencl %s\n", cases[k].blocks,
                      cases[k].threads, es.engine, left_out ? "left out" : "started");
        assert_int_equal(left_out, cases[k].left_out);
        if (left_out)
            assert_string_not_equal(es.engine, "opencl");
        else
            assert_string_equal(es.engine, expected_auto_engine(cases[k].blocks, cases[k].threads));
    }
    mmp_image_free(&small);
    mmp_image_free(&large);
}

/* A head start on a machine where opencl is no GPU: auto's CPU engine
 * searches the first steps on three quarters of the cores while the
 * OpenCL platforms load, then, no slower engine being there, on every core
 * (the -v line says from which step). Same bytes. */
static void test_auto_no_gpu(void **state)
{
    (void)state;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!mmp_engine_exists("opencl") || !mmp_engine_exists("omp") || cores < 2 ||
        strcmp(expected_auto_engine(1L << 20, 0), "opencl") == 0) {
        print_message("skipped: needs omp, opencl with no GPU, and 2 cores or more\n");
        return;
    }
    /* one row of blocks more than auto leaves to the CPU engine alone */
    const long blocks = MMP_AUTO_CPU_BLOCKS_PER_CORE * cores + 1;
    if (blocks > 400) {
        print_message("skipped: %ld cores need an image of %ld blocks\n", cores, blocks);
        return;
    }
    mmp_image img;
    const int w = 16 * 8, h = 16 * (int)((blocks + 7) / 8);
    assert_int_equal(mmp_image_alloc(&img, w, h, 255), 0);
    for (int i = 0; i < w * h; i++)
        img.pix[i] = (uint16_t)((i % w * 3 + i / w * 5 + (i * 7919 % 13)) % 256);
    mmp_settings st;
    mmp_default_settings(&st);
    st.lambda = 300;
    st.head_start = 1; /* the move at the first step boundary, whatever the machine's speed */
    mmp_enc_stats es;
    const int found = auto_as_seq(st, &img, 0, "on every core from step", &es);
    print_message("%dx%d, %ld cores: auto ran %s\n", w, h, cores, es.engine);
    assert_true(found);
    assert_string_equal(es.engine, "omp");
    mmp_image_free(&img);
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
    assert_string_equal(sdef.engine, expected_auto_engine(6, 0));
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

/* A sample above maxval breaks mmp_image's contract: the encoder refuses
 * the image with one line, lossy or lossless, grey or RGB, and writes no
 * file (the lossless stage indexes its tables by sample value). */
static void test_sample_above_maxval(void **state)
{
    (void)state;
    static const struct {
        int channels, maxval, max_error;
        long at;
    } cases[] = {{1, 255, -1, 0}, {1, 255, 0, 40 * 24 - 1}, {3, 1023, 0, 77}, {1, 65534, -1, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mmp_image img;
        assert_int_equal(
            mmp_image_alloc_channels(&img, 40, 24, cases[k].channels, cases[k].maxval), 0);
        for (long i = 0; i < 40L * 24 * cases[k].channels; i++)
            img.pix[i] = (uint16_t)(i * 7 % (cases[k].maxval + 1));
        img.pix[cases[k].at] = (uint16_t)(cases[k].maxval + 1);
        mmp_settings st;
        mmp_default_settings(&st);
        st.engine = "seq";
        st.max_error = cases[k].max_error;
        uint8_t *buf = NULL;
        size_t len = 0;
        char why[256] = "";
        assert_int_equal(mmp_encode(&st, &img, &buf, &len, NULL, NULL, why, sizeof why),
                         MMP_EINVAL);
        print_message("%s\n", why);
        assert_non_null(strstr(why, "above maxval"));
        assert_null(buf);
        assert_int_equal(len, 0);
        img.pix[cases[k].at] = (uint16_t)cases[k].maxval;
        assert_int_equal(mmp_encode(&st, &img, &buf, &len, NULL, NULL, why, sizeof why), 0);
        free(buf);
        mmp_image_free(&img);
    }
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The fields of a file encoded with known settings, in both orders; the
 * CRC is checked against zlib over the file without its CRC field (bytes
 * 44..47, docs/format.md section 2). */
static void test_probe_fields(void **state)
{
    (void)state;
    mmp_image img;
    make_image(&img, 1023);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "seq";
    const struct {
        double lambda, redundancy;
        int dict_cap, order;
        uint32_t lambda_q8, redund_q4;
    } cases[] = {{75, 3.25, 512, MMP_ORDER_WAVEFRONT, 19200, 52},
                 /* The derived threshold is min(lambda / 4, 8) on the 8-bit scale,
                  * times (1023 / 255)^2 here: (round(2688 (1023 / 255)^2) + 32) / 64. */
                 {10.5, -1, 1024, MMP_ORDER_RASTER, 2688, 676}};
    for (int i = 0; i < 2; i++) {
        st.lambda = cases[i].lambda;
        st.redundancy = cases[i].redundancy;
        st.dict_cap = cases[i].dict_cap;
        st.order = cases[i].order;
        uint8_t *buf = NULL;
        size_t len = 0;
        char why[256] = "";
        assert_int_equal(mmp_encode(&st, &img, &buf, &len, NULL, NULL, why, sizeof why), 0);
        mmp_file_info fi;
        memset(&fi, 0xa5, sizeof fi);
        assert_int_equal(mmp_probe(buf, len, &fi, why, sizeof why), 0);
        char version[32];
        snprintf(version, sizeof version, "%d.%d", fi.version, fi.version_minor);
        assert_string_equal(version, MMP_FORMAT_VERSION_STRING);
        assert_int_equal(fi.tiles, 1);
        assert_int_equal(fi.chunks, 0);
        assert_int_equal(fi.residual, MMP_RESIDUAL_NONE);
        assert_int_equal(fi.max_error, -1);
        assert_int_equal(fi.planes, 1);
        assert_int_equal(fi.log2_block, 4);
        assert_int_equal(fi.log2_pmin, 2);
        assert_int_equal(fi.width, 40);
        assert_int_equal(fi.height, 24);
        assert_int_equal(fi.maxval, 1023);
        assert_int_equal(fi.dict_cap, cases[i].dict_cap);
        assert_int_equal(fi.redund_q4, cases[i].redund_q4);
        assert_int_equal(fi.lambda_q8, cases[i].lambda_q8);
        assert_int_equal(fi.order, cases[i].order);
        /* One tile, no ancillary chunk: the signature (6 bytes), HEAD (12 +
         * 38) and the TILE chunk's 12 bytes around the payload
         * (docs/format.md 2). */
        assert_true(len > 68);
        assert_int_equal(fi.payload_len, len - 68);
        assert_int_equal(fi.tile_width, 128);
        assert_int_equal(fi.tile_height, 128);
        uLong crc = crc32(0L, Z_NULL, 0);
        crc = crc32(crc, buf + 10, 42);
        assert_int_equal(fi.crc, (uint32_t)crc);
        assert_int_equal(fi.crc, le32(buf + 52));
        assert_int_equal(fi.dct, 1);
        free(buf);
    }
    mmp_image_free(&img);
}

/* A damaged file: the code and the message of mmp_decode, and no fields. */
static void test_probe_errors(void **state)
{
    (void)state;
    mmp_image img;
    make_image(&img, 255);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "seq";
    uint8_t *good = NULL;
    size_t len = 0;
    char why[256] = "", dwhy[256] = "";
    assert_int_equal(mmp_encode(&st, &img, &good, &len, NULL, NULL, why, sizeof why), 0);
    uint8_t *b = malloc(len);
    assert_non_null(b);
    /* Each damage, and the start of the reason both must give. */
    const struct {
        size_t at;   /* byte changed (at < len), or the length cut to (cut) */
        uint8_t xor_;
        int cut;
        const char *reason;
    } cases[] = {
        {0, 0x01, 0, "not an MMP file"},
        {3, 0, 1, "truncated signature"},
        {30, 0, 1, "truncated HEAD chunk"},
        {4, 0x07, 0, "unsupported format version"},
        {26, 0xff, 0, "CRC mismatch in HEAD"}, /* maxval: the chunk's CRC sees it */
        {32, 0x03, 0, "CRC mismatch in HEAD"}, /* order */
        {70, 0x10, 0, "CRC mismatch in TILE"}, /* the payload */
        {len - 1, 0, 1, "truncated TILE chunk"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(b, good, len);
        size_t n = len;
        if (cases[i].cut)
            n = cases[i].at;
        else
            b[cases[i].at] ^= cases[i].xor_;
        mmp_file_info fi;
        memset(&fi, 0xa5, sizeof fi);
        const int e = mmp_probe(b, n, &fi, why, sizeof why);
        mmp_image dec = {0};
        const int de = mmp_decode(b, n, &dec, dwhy, sizeof dwhy);
        assert_true(e < 0);
        assert_int_equal(e, de);
        assert_string_equal(why, dwhy);
        if (strncmp(why, cases[i].reason, strlen(cases[i].reason)) != 0)
            fail_msg("damage %zu: '%s' does not start with '%s'", i, why, cases[i].reason);
        assert_int_equal(fi.width, 0);
        assert_int_equal(fi.payload_len, 0);
        mmp_image_free(&dec);
    }
    assert_int_equal(mmp_probe(good, len, NULL, why, sizeof why), MMP_EINVAL);
    free(b);
    free(good);
    mmp_image_free(&img);
}

/* One setting out of range: MMP_EINVAL with errbuf naming it. */
static void expect_einval(const mmp_image *img, void (*set)(mmp_settings *), const char *word)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    set(&s);
    uint8_t *out = (uint8_t *)1;
    size_t len = 1;
    char err[256] = "";
    assert_int_equal(mmp_encode(&s, img, &out, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_null(out);
    assert_int_equal(len, 0);
    if (!strstr(err, word))
        fail_msg("expected '%s' in '%s'", word, err);
}

static void threads_huge(mmp_settings *s) { s->threads = 100000; }
static void threads_max(mmp_settings *s) { s->threads = INT_MAX; }
static void threads_negative(mmp_settings *s) { s->threads = -3; }
static void threads_one_over(mmp_settings *s) { s->threads = MMP_MAX_THREADS + 1; }
static void restoration_two(mmp_settings *s) { s->restoration = 2; }
static void dct_negative(mmp_settings *s) { s->dct = -1; }
static void head_start_negative(mmp_settings *s) { s->head_start = -2; }
static void lambda_nan(mmp_settings *s) { s->lambda = NAN; }
static void speed_over(mmp_settings *s) { s->speed = MMP_MAX_SPEED + 1; }
static void dict_small(mmp_settings *s) { s->dict_cap = 63; }
static void max_error_over(mmp_settings *s) { s->max_error = MMP_MAX_ERROR + 1; }

static void test_settings_bounded(void **state)
{
    (void)state;
    mmp_image img;
    make_image(&img, 255);
    expect_einval(&img, threads_huge, "threads");
    expect_einval(&img, threads_max, "threads");
    expect_einval(&img, threads_negative, "threads");
    expect_einval(&img, threads_one_over, "threads");
    expect_einval(&img, restoration_two, "restoration");
    expect_einval(&img, dct_negative, "dct");
    expect_einval(&img, head_start_negative, "head start");
    expect_einval(&img, lambda_nan, "lambda");
    expect_einval(&img, speed_over, "speed");
    expect_einval(&img, dict_small, "dictionary");
    expect_einval(&img, max_error_over, "max error");
    /* The largest thread count is accepted (a small image, seq ignores it). */
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    s.threads = MMP_MAX_THREADS;
    uint8_t *out = NULL;
    size_t len = 0;
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, NULL, 0), 0);
    free(out);
    mmp_image_free(&img);
}

static void test_null_arguments(void **state)
{
    (void)state;
    mmp_image img, dec;
    make_image(&img, 255);
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    uint8_t *out = NULL;
    size_t len = 0;
    char err[256];
    assert_int_equal(mmp_encode(NULL, &img, &out, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_encode(&s, NULL, &out, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_encode(&s, &img, NULL, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_encode(&s, &img, &out, NULL, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, NULL, 0), 0);
    assert_int_equal(mmp_decode(out, len, NULL, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_decode(NULL, len, &dec, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_probe(out, len, NULL, err, sizeof err), MMP_EINVAL);
    int pick;
    mmp_device_info list[2];
    assert_int_equal(mmp_engine_devices("opencl", list, 2, NULL, NULL, err, sizeof err),
                     MMP_EINVAL);
    assert_int_equal(mmp_engine_devices(NULL, list, 2, NULL, &pick, err, sizeof err), MMP_EINVAL);
    assert_int_equal(mmp_engine_devices("opencl", NULL, 2, NULL, &pick, err, sizeof err),
                     MMP_EINVAL);
    mmp_default_settings(NULL);
    assert_int_equal(mmp_image_channels(NULL), 0);
    free(out);
    mmp_image_free(&img);
}

/* mmp_decode_limited refuses a file over the limit with MMP_ELIMIT, and
 * decodes one at or under it as mmp_decode does. */
static void test_decode_limited(void **state)
{
    (void)state;
    mmp_image img, a, b;
    make_image(&img, 255); /* 40 x 24 = 960 pixels */
    mmp_settings s;
    mmp_default_settings(&s);
    s.engine = "seq";
    uint8_t *out = NULL;
    size_t len = 0;
    char err[256] = "";
    assert_int_equal(mmp_encode(&s, &img, &out, &len, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(mmp_decode_limited(out, len, 959, &a, err, sizeof err), MMP_ELIMIT);
    assert_non_null(strstr(err, "960 pixels exceeds the limit of 959"));
    assert_null(a.pix);
    assert_int_equal(mmp_decode_limited(out, len, 960, &a, err, sizeof err), 0);
    assert_int_equal(mmp_decode_limited(out, len, 0, &b, err, sizeof err), 0);
    assert_int_equal(a.width, 40);
    assert_memory_equal(a.pix, b.pix, 40 * 24 * sizeof *a.pix);
    assert_int_equal(mmp_decode_limited(out, len, 960, NULL, err, sizeof err), MMP_EINVAL);
    mmp_image_free(&a);
    mmp_image_free(&b);
    mmp_image_free(&img);
    free(out);
}

static void test_psnr_checks_sizes(void **state)
{
    (void)state;
    mmp_image a, b, c, rgb;
    make_image(&a, 255);
    make_image(&b, 255);
    assert_int_equal(mmp_image_alloc(&c, 8, 8, 255), 0);
    assert_int_equal(mmp_image_alloc_channels(&rgb, 40, 24, 3, 255), 0);
    assert_true(isinf(mmp_psnr(&a, &b)));
    assert_true(isnan(mmp_psnr(&a, &c)));   /* smaller: would read past c */
    assert_true(isnan(mmp_psnr(&c, &a)));
    assert_true(isnan(mmp_psnr(&a, &rgb))); /* other channels */
    assert_true(isnan(mmp_psnr(&a, NULL)));
    assert_true(isnan(mmp_psnr(NULL, &a)));
    assert_true(isinf(mmp_psnr_channel(&a, &b, 0)));
    assert_true(isnan(mmp_psnr_channel(&a, &b, 1)));
    assert_true(isnan(mmp_psnr_channel(&a, &b, -1)));
    assert_true(isnan(mmp_psnr_channel(&a, &c, 0)));
    mmp_image_free(&a);
    mmp_image_free(&b);
    mmp_image_free(&c);
    mmp_image_free(&rgb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_is_silent),
        cmocka_unit_test(test_environment_ignored),
        cmocka_unit_test(test_registry_names),
        cmocka_unit_test(test_auto_is_seq_bytes),
        cmocka_unit_test(test_default_is_auto),
        cmocka_unit_test(test_auto_small),
        cmocka_unit_test(test_auto_no_gpu),
        cmocka_unit_test(test_sample_above_maxval),
        cmocka_unit_test(test_probe_fields),
        cmocka_unit_test(test_probe_errors),
        cmocka_unit_test(test_settings_bounded),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_psnr_checks_sizes),
        cmocka_unit_test(test_decode_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
