/*
 * Corpus test (issue 6): the decoder and encoder binaries on hostile files.
 *
 * A few valid small .mmp files are encoded here through the API (tiny crops
 * of the test images, synthetic 16-bit and 1-bit images, and colour ones:
 * RGBA, RGB and grey with alpha, both transforms and samplings, both alpha
 * codings), then mutated
 * into more than 500 files: bit flips anywhere, bit flips and byte edits in
 * the payload with the CRC recomputed (so that the payload decoder itself is
 * exercised, not only the CRC check), truncations and extensions with and
 * without payload_len fixed up, edits of every header field to boundary and
 * random values, random payloads behind valid headers, and random bytes.
 * The seed corpus and the regression files of the fuzzers
 * (tests/fuzz/corpus/decode, tests/fuzz/regress/decode) are decoded too.
 *
 * Each file is decoded by $MMP_BIN/mmp-dec in a child process (fork/exec):
 * the exit status must be 0 or 1; on failure stderr must be exactly one line
 * "mmp-dec: ..."; on success stderr is empty (-q); stderr must never hold a
 * sanitizer report ("runtime error", "AddressSanitizer", "LeakSanitizer").
 * Each decode must take under 2 seconds of CPU time (4 under AddressSanitizer;
 * getrusage of the child, on one thread;
 * CPU rather than wall time, so that a loaded machine cannot make the test
 * flaky); RLIMIT_CPU kills a runaway at twice the limit and an alarm at 30 s of wall
 * time catches a decoder blocked on something else.
 *
 * PGM files mutated the same way go through $MMP_BIN/mmp-enc under the same
 * rules, and so do the image fuzzers' seeds and regression files (PGM, PNG,
 * PAM, PPM): the encoder must survive any image file.
 *
 * make check runs this with the normal binaries, make check-sanitize with
 * the ASan/UBSan ones (bin-san/). Without MMP_BIN the tests are skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/container.h"
#include "common/error.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"
#include "util.h"

/* Limits per decode. */
/* AddressSanitizer slows the decoder about threefold, which brings the
 * slowest regression file near the normal build's limit: its build gets
 * twice the limits. */
#if defined(__SANITIZE_ADDRESS__)
#define CPU_LIMIT_S 4.0
#define RLIMIT_CPU_S 8
#else
#define CPU_LIMIT_S 2.0
#define RLIMIT_CPU_S 4
#endif
#define WALL_ALARM_S 30

static const char *bin;        /* $MMP_BIN */
static char dir[64];           /* mkdtemp working directory */
static int keep_dir;           /* a failure keeps the files for inspection */

typedef struct blob {
    uint8_t *b;
    size_t n;
    char name[64];
} blob;

#define MAX_BASE 16
static blob base[MAX_BASE];
static int nbase;

/* Figures over every run, printed at the end of each test. */
typedef struct tally {
    int runs, ok, failed;
    double max_cpu, max_wall, total_wall;
    char slowest[96];
} tally;

/* ---------------------------------------------------------------- helpers */

/* User + system CPU seconds of all waited-for children so far. */
static double children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return 0;
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static void need_bin(void)
{
    if (!bin) {
        print_message("MMP_BIN is not set (make check sets it to bin/): skipping corpus tests\n");
        skip();
    }
}

/*
 * Run PROG (mmp-dec or mmp-enc) on `in_name` (inside dir) with its output
 * in dir, and check the rules in the header comment. `what` names the input
 * in failure messages. Returns the exit status (0 or 1).
 */
static int run_tool(const char *prog, const char *in_name, const char *what, tally *t)
{
    char in[160], out[160], errp[160], exe[1200];
    snprintf(in, sizeof in, "%s/%s", dir, in_name);
    snprintf(out, sizeof out, "%s/out.%s", dir, strcmp(prog, "mmp-dec") == 0 ? "pam" : "mmp");
    snprintf(errp, sizeof errp, "%s/stderr.txt", dir);
    snprintf(exe, sizeof exe, "%s/%s", bin, prog);
    unlink(out);

    double t0 = now_seconds(), cpu_before = children_cpu();
    pid_t pid = fork();
    if (pid < 0)
        fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        int ef = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (nul < 0 || ef < 0)
            _exit(126);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(ef, 2);
        struct rlimit rl = {RLIMIT_CPU_S, RLIMIT_CPU_S + 1};
        setrlimit(RLIMIT_CPU, &rl);
        alarm(WALL_ALARM_S);
        if (strcmp(prog, "mmp-dec") == 0)
            execl(exe, prog, "-q", in, "-o", out, (char *)NULL);
        else
            execl(exe, prog, "-q", "-l", "10", in, out, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    pid_t w;
    do
        w = waitpid(pid, &st, 0);
    while (w < 0 && errno == EINTR);
    if (w != pid)
        fail_msg("waitpid: %s", strerror(errno));
    double wall = now_seconds() - t0;
    /* This process waits for one child at a time, so the growth of the
     * children's CPU time is this child's. */
    double cpu_after = children_cpu();
    double cpu = cpu_after - cpu_before;

    size_t elen = 0;
    char *err = (char *)slurp(errp, &elen);
    if (!err)
        fail_msg("%s: cannot read captured stderr", what);
    keep_dir = 1; /* until the checks pass */
    if (WIFSIGNALED(st))
        fail_msg("%s %s: killed by signal %d after %.2f s (cpu %.2f s); stderr: %.400s", prog,
                 what, WTERMSIG(st), wall, cpu, err);
    int code = WEXITSTATUS(st);
    if (strstr(err, "runtime error") || strstr(err, "Sanitizer") || strstr(err, "SUMMARY:"))
        fail_msg("%s %s: sanitizer report (exit %d): %.1500s", prog, what, code, err);
    if (code == 126 || code == 127)
        fail_msg("%s %s: cannot run %s (exit %d)", prog, what, exe, code);
    if (code != 0 && code != 1)
        fail_msg("%s %s: exit status %d (expected 0 or 1); stderr: %.400s", prog, what, code, err);
    if (code == 1) {
        char *nl = strchr(err, '\n');
        size_t plen = strlen(prog);
        if (elen == 0 || !nl || nl != err + elen - 1 || strlen(err) != elen)
            fail_msg("%s %s: stderr is not exactly one line: \"%.400s\"", prog, what, err);
        if (strncmp(err, prog, plen) != 0 || strncmp(err + plen, ": ", 2) != 0 || elen < plen + 4)
            fail_msg("%s %s: stderr line does not start with \"%s: \": %.400s", prog, what, prog, err);
    } else {
        struct stat sb;
        if (elen != 0)
            fail_msg("%s %s: success but stderr is not empty: %.400s", prog, what, err);
        if (stat(out, &sb) != 0)
            fail_msg("%s %s: success but no output file", prog, what);
    }
    if (cpu > CPU_LIMIT_S)
        fail_msg("%s %s: took %.2f s of CPU time (limit %.1f s; wall %.2f s)", prog, what, cpu,
                 CPU_LIMIT_S, wall);
    keep_dir = 0;
    free(err);

    t->runs++;
    if (code == 0)
        t->ok++;
    else
        t->failed++;
    t->total_wall += wall;
    if (wall > t->max_wall)
        t->max_wall = wall;
    if (cpu > t->max_cpu) {
        t->max_cpu = cpu;
        snprintf(t->slowest, sizeof t->slowest, "%s", what);
    }
    return code;
}

static int decode_blob(const uint8_t *b, size_t n, const char *what, tally *t)
{
    char path[160];
    snprintf(path, sizeof path, "%s/in.mmp", dir);
    write_file(path, b, n);
    return run_tool("mmp-dec", "in.mmp", what, t);
}

static void print_tally(const char *name, const tally *t)
{
    print_message("%s: %d files, %d decoded, %d rejected with one line; "
                  "max %.3f s CPU (%s), max %.3f s wall, %.1f s wall in all\n",
                  name, t->runs, t->ok, t->failed, t->max_cpu, t->slowest, t->max_wall,
                  t->total_wall);
}

/* ------------------------------------------------------------ base files */

/* The residual stage of the next base file (docs/format.md 7.6): max_error
 * (-1: lossy) and how. */
static int base_max_error = -1, base_residual = MMP_RESIDUAL_ALONE;
/* Whether the next base file may use the transform residual (docs/format.md
 * 4.4; on by default, so most bases have its syntax). */
static int base_dct = 1;

static void add_base_colour(const char *name, const mmp_image *img, double lambda, int dict_cap,
                            double redundancy, int order, int transform, int chroma, int alpha)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.max_error = base_max_error;
    s.residual = base_residual;
    s.dct = base_dct;
    s.transform = transform;
    s.chroma = chroma;
    s.alpha = alpha;
    s.order = order;
    s.lambda = lambda;
    s.engine = "seq";
    s.threads = 1;
    if (dict_cap)
        s.dict_cap = dict_cap;
    s.redundancy = redundancy;
    char err[256] = "";
    if (nbase == MAX_BASE)
        fail_msg("more than %d base files", MAX_BASE);
    blob *b = &base[nbase];
    int rc = mmp_encode(&s, img, &b->b, &b->n, NULL, NULL, err, sizeof err);
    if (rc)
        fail_msg("encoding base file %s: %d %s", name, rc, err);
    snprintf(b->name, sizeof b->name, "%s", name);
    nbase++;
}

static void add_base_order(const char *name, const mmp_image *img, double lambda, int dict_cap,
                           double redundancy, int order)
{
    add_base_colour(name, img, lambda, dict_cap, redundancy, order, MMP_TRANSFORM_AUTO,
                    MMP_CHROMA_444, MMP_ALPHA_EXACT);
}

/* In wavefront order (the one with steps of several blocks). */
static void add_base(const char *name, const mmp_image *img, double lambda, int dict_cap,
                     double redundancy)
{
    add_base_order(name, img, lambda, dict_cap, redundancy, MMP_ORDER_WAVEFRONT);
}

static int setup(void **state)
{
    (void)state;
    bin = getenv("MMP_BIN");
    if (bin && !*bin)
        bin = NULL;
    snprintf(dir, sizeof dir, "/tmp/mmp-corpus-XXXXXX");
    if (!mkdtemp(dir))
        return -1;

    mmp_image img;
    if (load_crop("camera", 240, 240, 16, 16, &img) == 0) {
        add_base("camera-16x16-l10", &img, 10, 0, -1);
        mmp_image_free(&img);
    }
    if (load_crop("text", 100, 100, 37, 29, &img) == 0) {
        add_base("text-37x29-l75", &img, 75, 0, -1);
        mmp_image_free(&img);
    }
    if (load_crop("moon", 300, 300, 20, 12, &img) == 0) {
        add_base("moon-20x12-l3-d64", &img, 3, 64, -1);
        mmp_image_free(&img);
    }
    if (load_crop("camera", 200, 150, 48, 32, &img) == 0) {
        add_base("camera-48x32-l2", &img, 2, 0, -1);
        add_base_order("camera-48x32-l2-raster", &img, 2, 0, -1, MMP_ORDER_RASTER);
        /* Without the transform residual: the tools byte 0, and no
         * residual type or coefficients in the block syntax. */
        base_dct = 0;
        add_base_order("camera-48x32-l30-no-dct", &img, 30, 0, -1, MMP_ORDER_RASTER);
        base_dct = 1;
        mmp_image_free(&img);
    }
    /* Large enough that its plane keeps a restoration filter (two filters,
     * two regions: docs/format.md 7.5), so mutations reach that syntax. */
    if (load_crop("camera", 160, 160, 128, 64, &img) == 0) {
        add_base_order("camera-128x64-l100-filter", &img, 100, 0, -1, MMP_ORDER_RASTER);
        mmp_image_free(&img);
    }
    /* Synthetic 16-bit: a ramp with noise; and a 1-bit checker at lambda 0. */
    if (mmp_image_alloc(&img, 12, 9, 65535))
        return -1;
    rng_seed(16);
    for (int i = 0; i < 12 * 9; i++)
        img.pix[i] = (uint16_t)(((i % 12) * 4000 + (i / 12) * 3000 + rng_below(2000)) % 65536);
    add_base("ramp-12x9-16bit-l10", &img, 10, 0, -1);
    mmp_image_free(&img);
    if (mmp_image_alloc(&img, 5, 4, 1))
        return -1;
    for (int i = 0; i < 5 * 4; i++)
        img.pix[i] = (uint16_t)((i % 5 + i / 5) & 1);
    add_base("checker-5x4-maxval1-l0", &img, 0, 0, 0);
    mmp_image_free(&img);
    /* Lossless (the residual stage alone, and after MMP) and near-lossless
     * (docs/format.md 7.6). */
    if (load_crop("camera", 200, 150, 48, 32, &img) == 0) {
        base_max_error = 0;
        add_base_order("camera-48x32-lossless", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_residual = MMP_RESIDUAL_AFTER_MMP;
        add_base_order("camera-48x32-lossless-after-mmp", &img, 30, 64, -1, MMP_ORDER_RASTER);
        base_max_error = 3;
        base_residual = MMP_RESIDUAL_ALONE;
        add_base_order("camera-48x32-near3", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_max_error = -1;
        mmp_image_free(&img);
    }
    /* Colour: RGBA in YCbCr 4:2:0 with exact alpha, RGB in YCoCg-R 4:4:4,
     * grey and alpha with alpha as an MMP plane (docs/format.md section 7). */
    if (mmp_image_alloc_channels(&img, 21, 13, 4, 255))
        return -1;
    for (int i = 0; i < 21 * 13 * 4; i++)
        img.pix[i] = (uint16_t)(i % 4 == 3 ? (i / 4 % 21 < 7 ? 255 : (i / 84) * 19)
                                           : ((i / 4 % 21) * (3 + i % 4) * 5 + (int)rng_below(24)) % 256);
    add_base_colour("rgba-21x13-ycbcr420-l30", &img, 30, 0, -1, MMP_ORDER_WAVEFRONT,
                    MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_EXACT);
    img.channels = 3;
    img.width = 28; /* the same samples read as 28 x 13 RGB pixels */
    add_base_colour("rgb-28x13-ycocg444-l10", &img, 10, 0, -1, MMP_ORDER_RASTER,
                    MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_444, MMP_ALPHA_EXACT);
    img.channels = 2;
    img.width = 42;
    add_base_colour("greyalpha-42x13-mmp-l100", &img, 100, 64, -1, MMP_ORDER_WAVEFRONT,
                    MMP_TRANSFORM_AUTO, MMP_CHROMA_444, MMP_ALPHA_MMP);
    mmp_image_free(&img);
    /* Chroma that is a line of the luma over texture, so that both chroma
     * planes choose CfL (docs/format.md 6, mode 11) in most leaves. */
    if (mmp_image_alloc_channels(&img, 48, 32, 3, 255))
        return -1;
    for (int i = 0; i < 48 * 32; i++) {
        const int t = (int)((i * 37 + (i / 48) * 11) % 160) + (int)rng_below(8);
        img.pix[i * 3 + 0] = img.pix[i * 3 + 1] = (uint16_t)(40 + t);
        img.pix[i * 3 + 2] = (uint16_t)(200 - t);
    }
    add_base_colour("rgb-48x32-cfl-l30", &img, 30, 64, -1, MMP_ORDER_RASTER, MMP_TRANSFORM_AUTO,
                    MMP_CHROMA_444, MMP_ALPHA_NONE);
    mmp_image_free(&img);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < nbase; i++)
        free(base[i].b);
    nbase = 0;
    if (keep_dir) {
        fprintf(stderr, "test_corpus: files of the failing run kept in %s\n", dir);
        return 0;
    }
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[400];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    return 0;
}

/* ------------------------------------------------------------------ tests */

/* The base files decode (exit 0), and to what the library decodes. */
static void test_base_files_decode(void **state)
{
    (void)state;
    need_bin();
    assert_true(nbase >= 5);
    tally t = {0};
    for (int i = 0; i < nbase; i++) {
        if (decode_blob(base[i].b, base[i].n, base[i].name, &t) != 0)
            fail_msg("valid base file %s was rejected", base[i].name);
        char out[160];
        snprintf(out, sizeof out, "%s/out.pam", dir);
        mmp_image a, b;
        char err[256];
        assert_int_equal(mmp_imagefile_read_path(out, &a, err, sizeof err), 0);
        assert_int_equal(mmp_decode(base[i].b, base[i].n, &b, err, sizeof err), 0);
        assert_int_equal(a.width, b.width);
        assert_int_equal(a.height, b.height);
        assert_int_equal(a.maxval, b.maxval);
        assert_int_equal(mmp_image_channels(&a), b.channels);
        assert_memory_equal(a.pix, b.pix, sizeof(uint16_t) * (size_t)a.width * a.height * b.channels);
        mmp_image_free(&a);
        mmp_image_free(&b);
    }
    print_tally("base files", &t);
}

/* A copy of base file i with room for `extra` more bytes. */
static uint8_t *copy_of(int i, size_t extra)
{
    uint8_t *c = malloc(base[i].n + extra + 1);
    assert_non_null(c);
    memcpy(c, base[i].b, base[i].n);
    return c;
}

/* Header field edits: offset, size in bytes, value; decoded with the CRC
 * recomputed (so each reaches its own check, or the payload) and again with
 * the stale CRC. */
typedef struct field_edit {
    const char *name;
    int off, size;
    uint64_t value;
} field_edit;

static const field_edit edits[] = {
    {"version=0", 4, 1, 0},          {"version=1", 4, 1, 1},
    {"version=3", 4, 1, 3},          {"order=0", 40, 1, 0},
    {"order=1", 40, 1, 1},           {"order=2", 40, 1, 2},
    {"order=255", 40, 1, 255},       {"reserved41=1", 41, 1, 1},
    {"reserved42=128", 42, 1, 128},  {"reserved43=255", 43, 1, 255},
    {"version=255", 4, 1, 255},      {"planes=0", 5, 1, 0},
    {"planes=3", 5, 1, 3},           {"log2_block=3", 6, 1, 3},
    {"log2_block=5", 6, 1, 5},       {"log2_pmin=1", 7, 1, 1},
    {"log2_pmin=3", 7, 1, 3},        {"width=0", 8, 4, 0},
    {"width=1", 8, 4, 1},            {"width=17", 8, 4, 17},
    {"width=4096", 8, 4, 4096},      {"width=65536", 8, 4, 65536},
    {"width=65537", 8, 4, 65537},    {"width=2^32-1", 8, 4, 0xFFFFFFFFu},
    {"height=0", 12, 4, 0},          {"height=1", 12, 4, 1},
    {"height=33", 12, 4, 33},        {"height=65536", 12, 4, 65536},
    {"height=65537", 12, 4, 65537},  {"height=2^31", 12, 4, 0x80000000u},
    {"maxval=0", 16, 2, 0},          {"maxval=1", 16, 2, 1},
    {"maxval=254", 16, 2, 254},      {"maxval=256", 16, 2, 256},
    {"maxval=65535", 16, 2, 65535},  {"max_error=0", 18, 2, 0},
    {"max_error=1", 18, 2, 1},       {"max_error=7", 18, 2, 7},
    {"max_error=32767", 18, 2, 32767}, {"max_error=32768", 18, 2, 32768},
    {"max_error=65535", 18, 2, 65535}, {"residual=0", 22, 1, 0},
    {"residual=1", 22, 1, 1},        {"residual=2", 22, 1, 2},
    {"residual=3", 22, 1, 3},        {"tools=1", 23, 1, 1},
    {"tools=0", 23, 1, 0},           {"tools=2", 23, 1, 2},
    {"version=7", 4, 1, 7},          {"version=9", 4, 1, 9},
    {"dict_cap=0", 20, 2, 0},        {"dict_cap=63", 20, 2, 63},
    {"dict_cap=64", 20, 2, 64},      {"dict_cap=65", 20, 2, 65},
    {"dict_cap=16384", 20, 2, 16384}, {"dict_cap=16385", 20, 2, 16385},
    {"dict_cap=2^16-1", 20, 2, 0xFFFFu}, {"redund=0", 24, 4, 0},
    {"redund=2^30", 24, 4, 1u << 30}, {"redund=2^30+1", 24, 4, (1u << 30) + 1},
    {"redund=2^32-1", 24, 4, 0xFFFFFFFFu}, {"lambda=2^32-1", 28, 4, 0xFFFFFFFFu},
    {"payload_len=0", 32, 8, 0},     {"payload_len=2^32", 32, 8, 1ull << 32},
    {"payload_len=2^32+1", 32, 8, (1ull << 32) + 1},
    {"payload_len=2^64-1", 32, 8, ~0ull},
};

static void test_mutations(void **state)
{
    (void)state;
    need_bin();
    assert_true(nbase >= 5);
    tally t = {0};
    char what[160];
    rng_seed(6);

    for (int i = 0; i < nbase; i++) {
        const size_t n = base[i].n, plen = n - MMP_HEADER_SIZE;
        assert_true(n > MMP_HEADER_SIZE + 4);

        /* Bit flips anywhere, CRC left alone: the container must notice. */
        for (int k = 0; k < 18; k++) {
            uint8_t *c = copy_of(i, 0);
            int bits = 1 + (int)rng_below(3);
            for (int j = 0; j < bits; j++) {
                size_t bit = rng_below(n * 8);
                c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
            snprintf(what, sizeof what, "%s: %d bit flip(s) #%d", base[i].name, bits, k);
            if (decode_blob(c, n, what, &t) == 0 && memcmp(c, base[i].b, n) != 0)
                fail_msg("%s: a changed file decoded (the CRC should catch it)", what);
            free(c);
        }
        /* Payload bit flips with the CRC recomputed: the payload decoder. */
        for (int k = 0; k < 28; k++) {
            uint8_t *c = copy_of(i, 0);
            int bits = 1 + (int)rng_below(4);
            for (int j = 0; j < bits; j++) {
                size_t bit = rng_below(plen * 8);
                c[MMP_HEADER_SIZE + bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
            fixup_container(c, n, 1);
            snprintf(what, sizeof what, "%s: %d payload bit flip(s), CRC fixed #%d", base[i].name,
                     bits, k);
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* Payload bytes overwritten with random values, CRC recomputed. */
        for (int k = 0; k < 6; k++) {
            uint8_t *c = copy_of(i, 0);
            int m = 1 + (int)rng_below(8);
            for (int j = 0; j < m; j++)
                c[MMP_HEADER_SIZE + rng_below(plen)] = (uint8_t)rng_next();
            fixup_container(c, n, 1);
            snprintf(what, sizeof what, "%s: %d random payload bytes, CRC fixed #%d",
                     base[i].name, m, k);
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* Truncations: as they are, then with payload_len and CRC fixed. */
        for (int k = 0; k < 16; k++) {
            uint8_t *c = copy_of(i, 0);
            size_t m = k < 4 ? rng_below(MMP_HEADER_SIZE + 1)
                             : MMP_HEADER_SIZE + rng_below(plen);
            int fix = k >= 8;
            if (fix)
                fixup_container(c, m, 1);
            snprintf(what, sizeof what, "%s: truncated to %zu bytes%s", base[i].name, m,
                     fix ? ", header fixed" : "");
            decode_blob(c, m, what, &t);
            free(c);
        }
        /* Extensions: random bytes appended, with and without the fix-up. */
        for (int k = 0; k < 4; k++) {
            size_t m = 1 + rng_below(k < 2 ? 4 : 64);
            uint8_t *c = copy_of(i, m);
            for (size_t j = 0; j < m; j++)
                c[n + j] = (uint8_t)rng_next();
            if (k & 1)
                fixup_container(c, n + m, 1);
            snprintf(what, sizeof what, "%s: %zu bytes appended%s", base[i].name, m,
                     k & 1 ? ", header fixed" : "");
            decode_blob(c, n + m, what, &t);
            free(c);
        }
        /* A byte inserted or deleted inside the payload, header fixed. */
        for (int k = 0; k < 4; k++) {
            uint8_t *c = copy_of(i, 1);
            size_t at = MMP_HEADER_SIZE + rng_below(plen), m;
            if (k & 1) {
                memmove(c + at + 1, c + at, n - at);
                c[at] = (uint8_t)rng_next();
                m = n + 1;
            } else {
                memmove(c + at, c + at + 1, n - at - 1);
                m = n - 1;
            }
            fixup_container(c, m, 1);
            snprintf(what, sizeof what, "%s: byte %s at %zu, header fixed", base[i].name,
                     k & 1 ? "inserted" : "deleted", at);
            decode_blob(c, m, what, &t);
            free(c);
        }
        /* The payload replaced with random bytes of random length. */
        for (int k = 0; k < 6; k++) {
            size_t m = 1 + rng_below(k < 3 ? 16 : 600);
            uint8_t *c = malloc(MMP_HEADER_SIZE + m);
            assert_non_null(c);
            memcpy(c, base[i].b, MMP_HEADER_SIZE);
            for (size_t j = 0; j < m; j++)
                c[MMP_HEADER_SIZE + j] = (uint8_t)(k == 5 ? 0 : rng_next());
            fixup_container(c, MMP_HEADER_SIZE + m, 1);
            snprintf(what, sizeof what, "%s: %zu random payload bytes%s", base[i].name, m,
                     k == 5 ? " (zeros)" : "");
            decode_blob(c, MMP_HEADER_SIZE + m, what, &t);
            free(c);
        }
    }

    /* Header field edits on two base files, CRC recomputed and stale. */
    for (int i = 0; i < 2 && i < nbase; i++) {
        const size_t n = base[i].n;
        for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++)
            for (int fix = 1; fix >= 0; fix--) {
                uint8_t *c = copy_of(i, 0);
                for (int j = 0; j < edits[e].size; j++)
                    c[edits[e].off + j] = (uint8_t)(edits[e].value >> (8 * j));
                if (fix)
                    fixup_container(c, n, 0);
                snprintf(what, sizeof what, "%s: %s%s", base[i].name, edits[e].name,
                         fix ? ", CRC fixed" : "");
                decode_blob(c, n, what, &t);
                free(c);
            }
        /* Random values in random header fields, CRC recomputed. */
        for (int k = 0; k < 12; k++) {
            uint8_t *c = copy_of(i, 0);
            size_t off = 4 + rng_below(36);
            c[off] = (uint8_t)rng_next();
            if (k & 1)
                c[4 + rng_below(36)] = (uint8_t)rng_next();
            fixup_container(c, n, 0);
            snprintf(what, sizeof what, "%s: random header byte(s) at %zu, CRC fixed #%d",
                     base[i].name, off, k);
            decode_blob(c, n, what, &t);
            free(c);
        }
    }

    /* The largest legal images with a small base's payload: the decoder
     * allocates for the header (docs/format.md, section 2), decodes what the
     * payload holds and must stop at its end. */
    static const uint32_t big[][2] = {{16384, 16384}, {65536, 4096}, {4096, 65536}, {65536, 1}};
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
        uint8_t *c = copy_of(0, 0);
        put32(c + 8, big[k][0]);
        put32(c + 12, big[k][1]);
        fixup_container(c, base[0].n, 1);
        snprintf(what, sizeof what, "%s: %ux%u, CRC fixed", base[0].name, big[k][0], big[k][1]);
        decode_blob(c, base[0].n, what, &t);
        free(c);
    }

    /* Random files: pure noise, and "MMPi" followed by noise. */
    for (int k = 0; k < 24; k++) {
        size_t m = rng_below(k < 12 ? 64 : 400);
        uint8_t *c = malloc(m + 8);
        assert_non_null(c);
        for (size_t j = 0; j < m; j++)
            c[j] = (uint8_t)rng_next();
        if (k % 3 == 1 && m >= 4)
            memcpy(c, "MMPi", 4);
        if (k % 3 == 2 && m >= MMP_HEADER_SIZE) {
            memcpy(c, "MMPi\x02\x01\x04\x02", 8);
            fixup_container(c, m, 1);
        }
        snprintf(what, sizeof what, "random file #%d (%zu bytes)", k, m);
        decode_blob(c, m, what, &t);
        free(c);
    }
    /* Valid headers of random small sizes and parameters over random
     * payloads: the payload decoder from its very first symbol. */
    for (int k = 0; k < 40; k++) {
        mmp_header h = {0};
        h.width = 1 + (uint32_t)rng_below(80);
        h.height = 1 + (uint32_t)rng_below(80);
        static const uint32_t maxvals[] = {1, 3, 255, 1023, 65535};
        h.maxval = maxvals[rng_below(5)];
        h.planes = 1;
        h.log2_block = 4;
        h.log2_pmin = 2;
        h.dict_cap = k % 2 ? 64 : 64 + (uint32_t)rng_below(2000);
        h.redund_q4 = k % 4 == 3 ? (1u << 30) : (uint32_t)rng_below(300);
        h.order = (uint32_t)(k % 3 == 0 ? MMP_ORDER_RASTER : MMP_ORDER_WAVEFRONT);
        h.tools = (uint32_t)(k % 2); /* half with the transform residual's syntax */
        size_t m = 4 + rng_below(k < 20 ? 200 : 3000);
        uint8_t *pay = malloc(m);
        assert_non_null(pay);
        for (size_t j = 0; j < m; j++)
            pay[j] = (uint8_t)(k % 5 == 4 ? rng_next() & rng_next() & rng_next() : rng_next());
        uint8_t *c;
        size_t cn;
        assert_int_equal(mmp_container_build(&h, pay, m, &c, &cn), 0);
        snprintf(what, sizeof what, "random payload #%d: %ux%u maxval %u dict %u, %zu bytes", k,
                 h.width, h.height, h.maxval, h.dict_cap, m);
        decode_blob(c, cn, what, &t);
        free(pay);
        free(c);
    }

    print_tally("mutated files", &t);
    assert_true(t.runs >= 500);
}

/* The fuzzers' seed corpus and regression files (when the tests run from
 * the repository root, as make check does). */
static void test_fuzz_files(void **state)
{
    (void)state;
    need_bin();
    tally t = {0};
    const char *dirs[] = {"tests/fuzz/corpus/decode", "tests/fuzz/regress/decode"};
    for (size_t k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char p[600], what[700];
            snprintf(p, sizeof p, "%s/%s", dirs[k], e->d_name);
            size_t n;
            uint8_t *b = slurp(p, &n);
            if (!b)
                continue;
            snprintf(what, sizeof what, "%s", p);
            int rc = decode_blob(b, n, what, &t);
            if (k == 0 && rc != 0)
                fail_msg("seed file %s does not decode", p);
            free(b);
        }
        closedir(d);
    }
    print_tally("fuzz corpus files", &t);
}

/* PGM files, valid and mutated, through the encoder. */
static void test_pgm_mutations(void **state)
{
    (void)state;
    need_bin();
    tally t = {0};
    char what[200], path[160];
    snprintf(path, sizeof path, "%s/in.pgm", dir);
    rng_seed(7);

    /* Two small valid files: P5 8-bit 12x9, P2 16-bit 7x5. */
    char p5[200], p2[600];
    int h5 = snprintf(p5, sizeof p5, "P5\n12 9\n255\n");
    for (int i = 0; i < 12 * 9; i++)
        p5[h5 + i] = (char)(i * 37 + 11);
    size_t n5 = (size_t)h5 + 12 * 9;
    int n2 = snprintf(p2, sizeof p2, "P2\n# sixteen bits\n7 5\n65535\n");
    for (int i = 0; i < 35; i++)
        n2 += snprintf(p2 + n2, sizeof p2 - (size_t)n2, "%d%c", (i * 7919) % 65536,
                       i % 7 == 6 ? '\n' : ' ');
    const struct {
        const char *b;
        size_t n;
    } pgms[2] = {{p5, n5}, {p2, (size_t)n2}};

    for (int i = 0; i < 2; i++) {
        write_file(path, (const uint8_t *)pgms[i].b, pgms[i].n);
        snprintf(what, sizeof what, "valid PGM #%d", i);
        if (run_tool("mmp-enc", "in.pgm", what, &t) != 0)
            fail_msg("%s was rejected", what);
    }
    /* Header rewrites: each replaces the whole header of the P5 file. */
    static const char *headers[] = {
        "P5\n0 9\n255\n",         "P5\n12 0\n255\n",      "P5\n12 9\n0\n",
        "P5\n12 9\n65536\n",      "P5\n12 9\n70000\n",    "P5\n-12 9\n255\n",
        "P5\n65537 1\n255\n",     "P5\n65536 4097\n255\n", "P5\n99999999999 9\n255\n",
        "P5\n12 9\n255",          "P5 12 9 255 ",         "P5\n#\n12 9 #x\n255\n",
        "P6\n12 9\n255\n",        "P4\n12 9\n",           "P7\nWIDTH 12\nHEIGHT 9\n",
        "P1\n12 9\n",             "P3\n12 9\n255\n",      "P9\n12 9\n255\n",
        "Q5\n12 9\n255\n",        "P5\n12 9\n1\n",        "P5\n12 9\n256\n",
        "P5\n1 1\n255\n",         "P5\n12\n",             "P2\n12 9\n255\n",
    };
    for (size_t k = 0; k < sizeof headers / sizeof headers[0]; k++) {
        size_t hl = strlen(headers[k]);
        uint8_t *c = malloc(hl + 12 * 9);
        assert_non_null(c);
        memcpy(c, headers[k], hl);
        memcpy(c + hl, p5 + h5, 12 * 9);
        write_file(path, c, hl + 12 * 9);
        snprintf(what, sizeof what, "PGM header \"%s\"", headers[k]);
        for (char *q = what; *q; q++)
            if (*q == '\n')
                *q = '|';
        run_tool("mmp-enc", "in.pgm", what, &t);
        free(c);
    }
    /* Truncations and bit flips of both files. */
    for (int k = 0; k < 16; k++) {
        int i = k % 2;
        size_t m = k < 8 ? rng_below(pgms[i].n) : pgms[i].n;
        uint8_t *c = malloc(pgms[i].n);
        assert_non_null(c);
        memcpy(c, pgms[i].b, pgms[i].n);
        if (k >= 8) {
            size_t bit = rng_below(k < 12 ? 8 * 16 : 8 * pgms[i].n);
            c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        write_file(path, c, m);
        snprintf(what, sizeof what, "PGM #%d %s #%d", i, k < 8 ? "truncated" : "bit flip", k);
        run_tool("mmp-enc", "in.pgm", what, &t);
        free(c);
    }
    /* The image fuzzers' seeds and regression files (PGM; PNG, PAM, PPM):
     * the name says .pgm, the reader goes by the bytes. */
    const char *dirs[] = {"tests/fuzz/corpus/pgm", "tests/fuzz/regress/pgm",
                          "tests/fuzz/corpus/png", "tests/fuzz/regress/png"};
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        DIR *d = opendir(dirs[k]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char p[600];
            snprintf(p, sizeof p, "%s/%s", dirs[k], e->d_name);
            size_t n;
            uint8_t *b = slurp(p, &n);
            if (!b)
                continue;
            write_file(path, b, n);
            snprintf(what, sizeof what, "%.190s", p);
            run_tool("mmp-enc", "in.pgm", what, &t);
            free(b);
        }
        closedir(d);
    }
    print_tally("image files (encoder)", &t);
}

int main(void)
{
    /* The CPU limit bounds the work a file can cause. The decoder spreads a
     * block's dictionary updates over the cores, and the threads that wait
     * for the others spin: on 2 cores that doubles the CPU time of the
     * slowest regression file without doing more work. The children run on
     * one thread (libgomp reads this when they start). */
    setenv("OMP_NUM_THREADS", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_files_decode),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_fuzz_files),
        cmocka_unit_test(test_pgm_mutations),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
