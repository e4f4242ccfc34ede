/*
 * Corpus test (issue 6): the decoder and encoder binaries on hostile files.
 *
 * A few valid small .mmp files are encoded here through the API (tiny crops
 * of the test images, synthetic 16-bit and 1-bit images, colour ones: RGBA,
 * RGB and grey with alpha, both transforms and samplings, both alpha
 * codings; files of several tiles, grey and colour 4:2:0 with tiles of odd
 * sides; files with ancillary chunks), then mutated into more than 500
 * files: bit flips anywhere, bit flips and byte edits in a tile's payload
 * with the CRCs recomputed (so that the payload decoder itself is
 * exercised, not only the CRC checks), truncations and extensions with and
 * without the chunk lengths fixed up, bytes inserted into or deleted from a
 * tile, edits of every HEAD field (and the signature and the chunk lengths)
 * to boundary and random values, the tile index and the tiles' order
 * edited, ancillary chunks damaged or misplaced, random payloads behind
 * valid headers (of one tile and of several), and random bytes.
 * The seed corpus and the regression files of the fuzzers
 * (tests/fuzz/corpus/decode, tests/fuzz/regress/decode) are decoded too.
 *
 * Each file is decoded by $MMP_BIN/mmp-dec in a child process (fork/exec):
 * the exit status must be 0 or 1; on failure stderr must be exactly one line
 * "mmp-dec: ..."; on success stderr is empty (--quiet); stderr must never hold a
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

#define MAX_BASE 28
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
            execl(exe, prog, "--quiet", in, "-o", out, (char *)NULL);
        else
            execl(exe, prog, "--quiet", "-l", "10", in, out, (char *)NULL);
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
/* Whether the next base file's residual stage uses the mixing coder
 * (docs/format.md 7.6, format 1.2; 0, the default) or the count models of
 * 1.0 (-1), and with it the residual context (format 1.3; 0, the default)
 * or not (-1). */
static int base_residual_mix, base_residual_context;
/* The next base file's tile sides (0: one tile), speed, and ancillary
 * chunks. */
static int base_tile, base_speed = 1;
static const mmp_chunk *base_chunks;
static int base_nchunks;

static void add_base_colour(const char *name, const mmp_image *img, double lambda, int dict_cap,
                            double redundancy, int order, int transform, int chroma, int alpha)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.max_error = base_max_error;
    s.residual = base_residual;
    s.dct = base_dct;
    s.residual_mix = base_residual_mix;
    s.residual_context = base_residual_context;
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
    s.tile_width = s.tile_height = base_tile;
    s.speed = base_speed;
    s.chunks = base_chunks;
    s.nchunks = base_nchunks;
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
    /* Smooth enough at lambda 1000 that its plane keeps the deblocking
     * filter (docs/format.md 7.7; long reaches), so mutations reach its
     * parameters. */
    if (load_crop("moon", 150, 150, 64, 48, &img) == 0) {
        add_base("moon-64x48-l1000-deblock", &img, 1000, 0, -1);
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
     * (docs/format.md 7.6), with the mixing coder and its residual context;
     * lossless with the mixing coder alone (format 1.2) and with the count
     * models of 1.0. */
    if (load_crop("camera", 200, 150, 48, 32, &img) == 0) {
        base_max_error = 0;
        add_base_order("camera-48x32-lossless", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_residual = MMP_RESIDUAL_AFTER_MMP;
        add_base_order("camera-48x32-lossless-after-mmp", &img, 30, 64, -1, MMP_ORDER_RASTER);
        base_max_error = 3;
        base_residual = MMP_RESIDUAL_ALONE;
        add_base_order("camera-48x32-near3", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_max_error = 0;
        base_residual_context = -1;
        add_base_order("camera-48x32-lossless-no-context", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_residual_context = 0;
        base_residual_mix = -1;
        add_base_order("camera-48x32-lossless-no-mix", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_residual_mix = 0;
        base_max_error = -1;
        mmp_image_free(&img);
    }
    /* Lossless colour: the reversible colour transform the encoder picks
     * (format 1.4; rct-rbg-5 on this crop) and the residual context's guide
     * in planes 1 and 2. */
    load_crop_all("colour/face.ppm", 150, 150, 32, 24, &img);
    base_max_error = 0;
    add_base_order("face-32x24-lossless-rct", &img, 10, 64, -1, MMP_ORDER_RASTER);
    base_max_error = -1;
    mmp_image_free(&img);
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
    /* Ancillary chunks (an ICC profile, a text, a type no decoder knows),
     * one tile and several. */
    static const uint8_t icc[40] = {0, 0, 2, 0x30, 'm', 'n', 't', 'r', 'G', 'R', 'A', 'Y'};
    static const mmp_chunk chunks[] = {
        {MMP_CHUNK_ICC, icc, sizeof icc},
        {MMP_CHUNK_TEXT, (const uint8_t *)"Title\0corpus", 12},
        {"zzzz", (const uint8_t *)"?", 1},
    };
    base_chunks = chunks;
    base_nchunks = 3;
    if (load_crop("camera", 200, 150, 48, 32, &img) == 0) {
        add_base("camera-48x32-l30-chunks", &img, 30, 64, -1);
        mmp_image_free(&img);
    }
    /* Several tiles (docs/format.md section 2): grey in 3 x 2 tiles of
     * 128 x 128 with chunks, and at speed 4 (the fastest that still
     * searches the dictionary) to keep the encodes short. */
    base_speed = 4;
    base_tile = 128;
    if (load_crop("camera", 150, 150, 300, 200, &img) == 0) {
        add_base("camera-300x200-tiles128-l300-chunks", &img, 300, 64, -1);
        base_nchunks = 0;
        add_base_order("camera-300x200-tiles128-l100-raster", &img, 100, 64, -1,
                       MMP_ORDER_RASTER);
        mmp_image_free(&img);
    }
    base_nchunks = 0;
    /* Colour 4:2:0 of odd sides in 2 x 2 tiles (the last ones 23 x 13);
     * RGBA; lossless. */
    if (mmp_image_alloc_channels(&img, 151, 141, 4, 255))
        return -1;
    for (int i = 0; i < 151 * 141 * 4; i++)
        img.pix[i] = (uint16_t)(i % 4 == 3 ? (i / 4 % 151 < 40 ? 255 : (i / 604) % 256)
                                           : ((i / 4 % 151) * (3 + i % 4) + (i / 604) * 2 +
                                              (int)rng_below(16)) % 256);
    add_base_colour("rgba-151x141-tiles128-ycbcr420-l100", &img, 100, 64, -1, MMP_ORDER_WAVEFRONT,
                    MMP_TRANSFORM_YCBCR, MMP_CHROMA_420, MMP_ALPHA_EXACT);
    img.channels = 3;
    add_base_colour("rgb-151x141-tiles128-ycocg420-l300", &img, 300, 64, -1, MMP_ORDER_RASTER,
                    MMP_TRANSFORM_YCOCG_R, MMP_CHROMA_420, MMP_ALPHA_NONE);
    mmp_image_free(&img);
    if (load_crop("moon", 100, 100, 140, 130, &img) == 0) {
        base_max_error = 0;
        add_base_order("moon-140x130-tiles128-lossless", &img, 10, 64, -1, MMP_ORDER_RASTER);
        base_max_error = -1;
        mmp_image_free(&img);
    }
    base_tile = 0;
    base_speed = 1;
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

/* Field edits: name, offset, size in bytes, value; decoded with the CRCs
 * recomputed (so each reaches its own check, or the payload) and again
 * with the stale CRC. The signature's bytes have no CRC; HEAD's fields are
 * util.h's MF_*; TILE's length is that of a file of one tile. */
typedef struct field_edit {
    const char *name;
    int off, size;
    uint64_t value;
} field_edit;

static const field_edit edits[] = {
    {"major=0", MF_MAJOR, 1, 0},           {"major=8", MF_MAJOR, 1, 8},
    {"major=255", MF_MAJOR, 1, 255},       {"minor=1", MF_MINOR, 1, 1},
    {"minor=255", MF_MINOR, 1, 255},       {"magic=MMPI", 3, 1, 'I'},
    {"HEAD length=0", MF_HEAD, 4, 0},      {"HEAD length=37", MF_HEAD, 4, 37},
    {"HEAD length=39", MF_HEAD, 4, 39},    {"HEAD length=2^32-1", MF_HEAD, 4, 0xFFFFFFFFu},
    {"HEAD type=HEAd", MF_HEAD_TYPE + 3, 1, 'd'},
    {"HEAD type=head", MF_HEAD_TYPE, 4, 0x64616568u},
    {"order=0", MF_ORDER, 1, 0},           {"order=1", MF_ORDER, 1, 1},
    {"order=2", MF_ORDER, 1, 2},           {"order=255", MF_ORDER, 1, 255},
    {"transform=1", MF_TRANSFORM, 1, 1},   {"transform=3", MF_TRANSFORM, 1, 3},
    {"chroma=1", MF_CHROMA, 1, 1},         {"chroma=128", MF_CHROMA, 1, 128},
    {"alpha=1", MF_ALPHA, 1, 1},           {"alpha=255", MF_ALPHA, 1, 255},
    {"planes=0", MF_PLANES, 1, 0},         {"planes=2", MF_PLANES, 1, 2},
    {"planes=3", MF_PLANES, 1, 3},         {"planes=4", MF_PLANES, 1, 4},
    {"log2_block=3", MF_LOG2_BLOCK, 1, 3}, {"log2_block=5", MF_LOG2_BLOCK, 1, 5},
    {"log2_pmin=1", MF_LOG2_PMIN, 1, 1},   {"log2_pmin=3", MF_LOG2_PMIN, 1, 3},
    {"width=0", MF_WIDTH, 4, 0},           {"width=1", MF_WIDTH, 4, 1},
    {"width=17", MF_WIDTH, 4, 17},         {"width=4096", MF_WIDTH, 4, 4096},
    {"width=65536", MF_WIDTH, 4, 65536},   {"width=65537", MF_WIDTH, 4, 65537},
    {"width=2^32-1", MF_WIDTH, 4, 0xFFFFFFFFu},
    {"height=0", MF_HEIGHT, 4, 0},         {"height=1", MF_HEIGHT, 4, 1},
    {"height=33", MF_HEIGHT, 4, 33},       {"height=65536", MF_HEIGHT, 4, 65536},
    {"height=65537", MF_HEIGHT, 4, 65537}, {"height=2^31", MF_HEIGHT, 4, 0x80000000u},
    {"maxval=0", MF_MAXVAL, 2, 0},         {"maxval=1", MF_MAXVAL, 2, 1},
    {"maxval=254", MF_MAXVAL, 2, 254},     {"maxval=256", MF_MAXVAL, 2, 256},
    {"maxval=65535", MF_MAXVAL, 2, 65535}, {"max_error=0", MF_MAX_ERROR, 2, 0},
    {"max_error=1", MF_MAX_ERROR, 2, 1},   {"max_error=7", MF_MAX_ERROR, 2, 7},
    {"max_error=32767", MF_MAX_ERROR, 2, 32767}, {"max_error=32768", MF_MAX_ERROR, 2, 32768},
    {"max_error=65535", MF_MAX_ERROR, 2, 65535}, {"residual=0", MF_RESIDUAL, 1, 0},
    {"residual=1", MF_RESIDUAL, 1, 1},     {"residual=2", MF_RESIDUAL, 1, 2},
    {"residual=3", MF_RESIDUAL, 1, 3},     {"tools=1", MF_TOOLS, 4, 1},
    {"tools=0", MF_TOOLS, 4, 0},           {"tools=2", MF_TOOLS, 4, 2},
    {"tools=2^31", MF_TOOLS, 4, 0x80000000u},
    {"dict_cap=0", MF_DICT_CAP, 2, 0},     {"dict_cap=63", MF_DICT_CAP, 2, 63},
    {"dict_cap=64", MF_DICT_CAP, 2, 64},   {"dict_cap=65", MF_DICT_CAP, 2, 65},
    {"dict_cap=16384", MF_DICT_CAP, 2, 16384}, {"dict_cap=16385", MF_DICT_CAP, 2, 16385},
    {"dict_cap=2^16-1", MF_DICT_CAP, 2, 0xFFFFu}, {"redund=0", MF_REDUND_Q4, 4, 0},
    {"redund=2^30", MF_REDUND_Q4, 4, 1u << 30}, {"redund=2^30+1", MF_REDUND_Q4, 4, (1u << 30) + 1},
    {"redund=2^32-1", MF_REDUND_Q4, 4, 0xFFFFFFFFu}, {"lambda=2^32-1", MF_LAMBDA_Q8, 4, 0xFFFFFFFFu},
    {"tile_w=0", MF_TILE_W16, 2, 0},       {"tile_w=112", MF_TILE_W16, 2, 7},
    {"tile_w=144", MF_TILE_W16, 2, 9},     {"tile_w=65536", MF_TILE_W16, 2, 4096},
    {"tile_w=65552", MF_TILE_W16, 2, 4097}, {"tile_w=2^16-1 x 16", MF_TILE_W16, 2, 0xFFFF},
    {"tile_h=0", MF_TILE_H16, 2, 0},       {"tile_h=112", MF_TILE_H16, 2, 7},
    {"tile_h=65536", MF_TILE_H16, 2, 4096}, {"tile_h=65552", MF_TILE_H16, 2, 4097},
};

/* TILE's length edits of a file of one tile (relative to the payload's). */
static const struct {
    const char *name;
    int64_t delta;    /* added to the length, or (absolute) */
    uint32_t value;
} len_edits[] = {
    {"TILE length=0", 0, 0},     {"TILE length=1", 0, 1},
    {"TILE length-1", -1, 0},    {"TILE length+1", 1, 0},
    {"TILE length+5", 5, 0},     {"TILE length=2^31", 0, 0x80000000u},
    {"TILE length=2^32-1", 0, 0xFFFFFFFFu},
};

/* The container of base file i (valid); the caller frees it. */
static void base_container(int i, mmp_container *c)
{
    char err[256] = "";
    if (mmp_container_parse(base[i].b, base[i].n, c, err, sizeof err))
        fail_msg("base file %s does not parse: %s", base[i].name, err);
}

/* A tile of c with data (any tile when all are empty). */
static uint32_t some_tile(const mmp_container *c)
{
    for (int tries = 0; tries < 8; tries++) {
        const uint32_t k = (uint32_t)rng_below(c->ntiles);
        if (c->tiles[k].len)
            return k;
    }
    return (uint32_t)rng_below(c->ntiles);
}

/* Base file i written again with tile k's data replaced by d[0..len); *n
 * gets the size. */
static uint8_t *with_tile(int i, uint32_t k, const uint8_t *d, size_t len, size_t *n)
{
    uint8_t *out;
    rewrite_tile(base[i].b, base[i].n, (int)k, d, len, &out, n);
    return out;
}

/* Tile data of base i rearranged: tile t gets the data of tile perm[t];
 * the container right. */
static uint8_t *tiles_permuted(int i, const mmp_container *c, const uint32_t *perm, size_t *n)
{
    const uint8_t **td = malloc(sizeof *td * c->ntiles);
    size_t *tl = malloc(sizeof *tl * c->ntiles);
    mmp_extra_in *x = malloc(sizeof *x * (c->nextra + 1));
    assert_true(td && tl && x);
    for (uint32_t t = 0; t < c->ntiles; t++) {
        td[t] = base[i].b + c->tiles[perm[t]].offset;
        tl[t] = (size_t)c->tiles[perm[t]].len;
    }
    for (uint32_t e = 0; e < c->nextra; e++) {
        memcpy(x[e].type, c->extra[e].type, 4);
        x[e].data = base[i].b + c->extra[e].offset;
        x[e].len = (size_t)c->extra[e].len;
    }
    uint8_t *out;
    assert_int_equal(mmp_container_write(&c->h, td, tl, c->ntiles, x, c->nextra, &out, n), 0);
    free(td);
    free(tl);
    free(x);
    return out;
}

static void test_mutations(void **state)
{
    (void)state;
    need_bin();
    assert_true(nbase >= 5);
    tally t = {0};
    char what[200];
    rng_seed(6);

    int multi = 0;
    for (int i = 0; i < nbase; i++) {
        const size_t n = base[i].n;
        mmp_container bc;
        base_container(i, &bc);
        multi += bc.ntiles > 1;
        /* Where the first tile's data begins: the chunks before it. */
        const size_t data0 = (size_t)bc.tiles[0].offset;

        /* Bit flips anywhere, CRCs left alone: the container must notice
         * (test_container flips every bit of its files). */
        for (int k = 0; k < 10; k++) {
            uint8_t *c = copy_of(i, 0);
            int bits = 1 + (int)rng_below(3);
            for (int j = 0; j < bits; j++) {
                size_t bit = rng_below(n * 8);
                c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
            snprintf(what, sizeof what, "%s: %d bit flip(s) #%d", base[i].name, bits, k);
            if (decode_blob(c, n, what, &t) == 0 && memcmp(c, base[i].b, n) != 0)
                fail_msg("%s: a changed file decoded (a CRC should catch it)", what);
            free(c);
        }
        /* Payload bit flips in a tile with the CRCs recomputed: the payload
         * decoder. */
        for (int k = 0; k < 22; k++) {
            uint8_t *c = copy_of(i, 0);
            const mmp_tile *tl = &bc.tiles[some_tile(&bc)];
            int bits = 1 + (int)rng_below(4);
            for (int j = 0; j < bits && tl->len; j++) {
                size_t bit = rng_below((size_t)tl->len * 8);
                c[tl->offset + bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: %d payload bit flip(s) at tile %u, CRC fixed #%d",
                     base[i].name, bits, (unsigned)(tl - bc.tiles), k);
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* Payload bytes overwritten with random values, CRCs recomputed. */
        for (int k = 0; k < 6; k++) {
            uint8_t *c = copy_of(i, 0);
            const mmp_tile *tl = &bc.tiles[some_tile(&bc)];
            int m = 1 + (int)rng_below(8);
            for (int j = 0; j < m && tl->len; j++)
                c[tl->offset + rng_below((size_t)tl->len)] = (uint8_t)rng_next();
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: %d random payload bytes, CRC fixed #%d",
                     base[i].name, m, k);
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* Truncations: as they are (before the tiles, then anywhere), with
         * the lengths and CRCs fixed (the chunk cut ends at the end), and
         * a tile's data truncated in a file otherwise right. */
        for (int k = 0; k < 12; k++) {
            uint8_t *c = copy_of(i, 0);
            size_t m = k < 3 ? rng_below(data0 + 1) : data0 + rng_below(n - data0);
            if (k >= 9) {
                const uint32_t tk = some_tile(&bc);
                const size_t keep = rng_below((size_t)bc.tiles[tk].len + 1);
                free(c);
                c = with_tile(i, tk, base[i].b + bc.tiles[tk].offset, keep, &m);
                snprintf(what, sizeof what, "%s: tile %u truncated to %zu of %llu bytes",
                         base[i].name, tk, keep, (unsigned long long)bc.tiles[tk].len);
            } else {
                const int fix = k >= 6;
                if (fix)
                    fixup_chunks(c, m, 1);
                snprintf(what, sizeof what, "%s: truncated to %zu bytes%s", base[i].name, m,
                         fix ? ", lengths fixed" : "");
            }
            decode_blob(c, m, what, &t);
            free(c);
        }
        /* Extensions: random bytes appended, with and without the fix-up
         * (the last tile takes them). */
        for (int k = 0; k < 4; k++) {
            size_t m = 1 + rng_below(k < 2 ? 4 : 64);
            uint8_t *c = copy_of(i, m);
            for (size_t j = 0; j < m; j++)
                c[n + j] = (uint8_t)rng_next();
            if (k & 1)
                fixup_chunks(c, n + m, 1);
            snprintf(what, sizeof what, "%s: %zu bytes appended%s", base[i].name, m,
                     k & 1 ? ", lengths fixed" : "");
            decode_blob(c, n + m, what, &t);
            free(c);
        }
        /* A byte inserted into or deleted from a tile's data, the rest of
         * the file made right (lengths, index, CRCs). */
        for (int k = 0; k < 4; k++) {
            const uint32_t tk = some_tile(&bc);
            const size_t tlen = (size_t)bc.tiles[tk].len;
            uint8_t *d = malloc(tlen + 1);
            assert_non_null(d);
            memcpy(d, base[i].b + bc.tiles[tk].offset, tlen);
            size_t at = rng_below(tlen + (k & 1)), dl;
            if (k & 1) {
                memmove(d + at + 1, d + at, tlen - at);
                d[at] = (uint8_t)rng_next();
                dl = tlen + 1;
            } else {
                if (tlen)
                    memmove(d + at, d + at + 1, tlen - at - 1);
                dl = tlen ? tlen - 1 : 0;
            }
            size_t m;
            uint8_t *c = with_tile(i, tk, d, dl, &m);
            snprintf(what, sizeof what, "%s: byte %s at %zu of tile %u, lengths fixed",
                     base[i].name, k & 1 ? "inserted" : "deleted", at, tk);
            decode_blob(c, m, what, &t);
            free(c);
            free(d);
        }
        /* A tile's data replaced with random bytes of random length. */
        for (int k = 0; k < 6; k++) {
            size_t m = 1 + rng_below(k < 3 ? 16 : 600), cn;
            uint8_t *d = malloc(m);
            assert_non_null(d);
            for (size_t j = 0; j < m; j++)
                d[j] = (uint8_t)(k == 5 ? 0 : rng_next());
            const uint32_t tk = (uint32_t)rng_below(bc.ntiles);
            uint8_t *c = with_tile(i, tk, d, m, &cn);
            snprintf(what, sizeof what, "%s: %zu random payload bytes in tile %u%s", base[i].name,
                     m, tk, k == 5 ? " (zeros)" : "");
            decode_blob(c, cn, what, &t);
            free(c);
            free(d);
        }
        mmp_container_free(&bc);
    }
    assert_true(multi >= 4);

    /* Field edits on a base file of one tile, CRCs recomputed and stale,
     * and on one of several tiles, CRCs recomputed. A new width or height
     * comes with tile sides that keep the grid the file has (one tile, or
     * the multi-tile file's columns or rows) where the new size allows, so
     * that the decoder meets the new size. */
    int edited[2] = {0, -1};
    for (int i = 0; i < nbase; i++)
        if (strstr(base[i].name, "tiles128-l300-chunks"))
            edited[1] = i;
    assert_true(edited[1] >= 0);
    for (int ei = 0; ei < 2; ei++) {
        const int i = edited[ei];
        const size_t n = base[i].n;
        mmp_container bc;
        base_container(i, &bc);
        for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++)
            for (int fix = 1; fix >= ei; fix--) {
                uint8_t *c = copy_of(i, 0);
                put_field(c + edits[e].off, edits[e].size, edits[e].value);
                const uint64_t v = edits[e].value;
                if ((edits[e].off == MF_WIDTH || edits[e].off == MF_HEIGHT) && v >= 1 &&
                    v <= MMP_MAX_DIM) {
                    const uint64_t per = edits[e].off == MF_WIDTH ? bc.cols : bc.rows;
                    uint64_t side = (v + per - 1) / per;
                    side = side < MMP_MIN_TILE ? MMP_MIN_TILE : (side + 15) / 16 * 16;
                    put16(c + (edits[e].off == MF_WIDTH ? MF_TILE_W16 : MF_TILE_H16),
                          (uint32_t)(side / 16));
                }
                if (fix)
                    fixup_chunks(c, n, 0);
                snprintf(what, sizeof what, "%s: %s%s", base[i].name, edits[e].name,
                         fix ? ", CRC fixed" : "");
                decode_blob(c, n, what, &t);
                free(c);
            }
        /* Random values in random HEAD bytes, CRC recomputed. */
        for (int k = 0; k < 12; k++) {
            uint8_t *c = copy_of(i, 0);
            size_t off = MF_HEAD_DATA + rng_below(MMP_HEAD_SIZE);
            c[off] = (uint8_t)rng_next();
            if (k & 1)
                c[MF_HEAD_DATA + rng_below(MMP_HEAD_SIZE)] = (uint8_t)rng_next();
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: random HEAD byte(s) at %zu, CRC fixed #%d",
                     base[i].name, off, k);
            decode_blob(c, n, what, &t);
            free(c);
        }
        mmp_container_free(&bc);
    }
    /* TILE's length in files of one tile, CRCs recomputed where they fit. */
    for (int i = 0; i < 2; i++) {
        const size_t n = base[i].n;
        for (size_t e = 0; e < sizeof len_edits / sizeof len_edits[0]; e++) {
            uint8_t *c = copy_of(i, 0);
            const uint32_t len = get32(c + MF_TILE_LEN);
            put32(c + MF_TILE_LEN, len_edits[e].delta ? (uint32_t)(len + len_edits[e].delta)
                                                      : len_edits[e].value);
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: %s", base[i].name, len_edits[e].name);
            decode_blob(c, n, what, &t);
            free(c);
        }
    }

    /* Files of several tiles: the index, the tiles' order and data, the
     * ancillary chunks. */
    for (int i = 0; i < nbase; i++) {
        mmp_container bc;
        base_container(i, &bc);
        if (bc.ntiles < 2) {
            mmp_container_free(&bc);
            continue;
        }
        const size_t n = base[i].n;
        chunk_ref tidx = {0};
        assert_true(chunk_find(base[i].b, n, "TIDX", &tidx) >= 0);
        /* Index entries set to boundary and random values, CRC fixed. */
        for (int k = 0; k < 8; k++) {
            uint8_t *c = copy_of(i, 0);
            const uint32_t e = (uint32_t)rng_below(bc.ntiles);
            const uint64_t vals[] = {0, 1, n, n - 4, UINT64_MAX, bc.tiles[0].offset - 8,
                                     bc.tiles[bc.ntiles - 1].offset - 8, rng_next()};
            put64(c + tidx.at + 12 + 8 * (size_t)e, vals[k]);
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: index entry %u = %llu", base[i].name, e,
                     (unsigned long long)vals[k]);
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* The count changed; the index's length changed with it. */
        for (int k = 0; k < 4; k++) {
            uint8_t *c = copy_of(i, 0);
            const uint32_t counts[] = {0, bc.ntiles - 1, bc.ntiles + 1, 0xFFFFFFFFu};
            put32(c + tidx.at + 8, counts[k]);
            if (k & 1)
                put32(c + tidx.at, tidx.len - 8);
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: index count %u%s", base[i].name, counts[k],
                     k & 1 ? ", its length 8 less" : "");
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* The index cut out (a TILE before it); then doubled. */
        {
            uint8_t *c = malloc(n + MMP_CHUNK_OVERHEAD + tidx.len);
            assert_non_null(c);
            const size_t tn = MMP_CHUNK_OVERHEAD + tidx.len;
            memcpy(c, base[i].b, tidx.at);
            memcpy(c + tidx.at, base[i].b + tidx.at + tn, n - tidx.at - tn);
            snprintf(what, sizeof what, "%s: no tile index", base[i].name);
            decode_blob(c, n - tn, what, &t);
            memcpy(c, base[i].b, tidx.at + tn);
            memcpy(c + tidx.at + tn, base[i].b + tidx.at, n - tidx.at);
            fixup_tidx(c, n + tn);
            fixup_chunks(c, n + tn, 0);
            snprintf(what, sizeof what, "%s: two tile indexes", base[i].name);
            decode_blob(c, n + tn, what, &t);
            free(c);
        }
        /* Tiles' data swapped, rotated, one tile's data in every tile: a
         * right container, payloads of other tiles' sizes. */
        uint32_t *perm = malloc(sizeof *perm * bc.ntiles);
        assert_non_null(perm);
        for (int k = 0; k < 6; k++) {
            for (uint32_t q = 0; q < bc.ntiles; q++)
                perm[q] = k < 2 ? q : k < 4 ? (q + (uint32_t)k - 1) % bc.ntiles : (uint32_t)k % 2 * (bc.ntiles - 1);
            if (k < 2) {
                const uint32_t a = (uint32_t)rng_below(bc.ntiles), b = (uint32_t)rng_below(bc.ntiles);
                perm[a] = b;
                perm[b] = a;
            }
            size_t cn;
            uint8_t *c = tiles_permuted(i, &bc, perm, &cn);
            snprintf(what, sizeof what, "%s: tiles' data rearranged #%d", base[i].name, k);
            decode_blob(c, cn, what, &t);
            free(c);
        }
        free(perm);
        /* Tile sides changed with the tile count kept (CRC fixed): the
         * payloads meet other sizes. */
        for (int k = 0; k < 3; k++) {
            uint8_t *c = copy_of(i, 0);
            const uint32_t w16 = get16(c + MF_TILE_W16), h16 = get16(c + MF_TILE_H16);
            put16(c + MF_TILE_W16, k == 1 ? w16 : w16 + 1 + (uint32_t)k);
            put16(c + MF_TILE_H16, k == 0 ? h16 : h16 + 1);
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: tiles of %ux%u", base[i].name,
                     16 * get16(c + MF_TILE_W16), 16 * get16(c + MF_TILE_H16));
            decode_blob(c, n, what, &t);
            free(c);
        }
        /* Ancillary chunks: a huge length, a critical type, moved after
         * the tiles. */
        if (bc.nextra) {
            const size_t x = (size_t)bc.extra[0].offset - 8, xn = MMP_CHUNK_OVERHEAD + (size_t)bc.extra[0].len;
            uint8_t *c = copy_of(i, 0);
            put32(c + x, 0xFFFFFFF0u);
            snprintf(what, sizeof what, "%s: %s chunk of 2^32 - 16 bytes", base[i].name,
                     bc.extra[0].type);
            decode_blob(c, n, what, &t);
            memcpy(c, base[i].b, n);
            c[x + 4] = (uint8_t)(c[x + 4] - 'a' + 'A');
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: %s chunk made critical", base[i].name,
                     bc.extra[0].type);
            decode_blob(c, n, what, &t);
            memcpy(c, base[i].b, x);
            memcpy(c + x, base[i].b + x + xn, n - x - xn);
            memcpy(c + n - xn, base[i].b + x, xn);
            fixup_tidx(c, n);
            fixup_chunks(c, n, 0);
            snprintf(what, sizeof what, "%s: %s chunk after the tiles", base[i].name,
                     bc.extra[0].type);
            decode_blob(c, n, what, &t);
            free(c);
        }
        mmp_container_free(&bc);
    }

    /* The largest images mmp-dec decodes by default (--max-pixels: half of
     * MMP_MAX_PIXELS; test_container parses the largest legal ones) with a
     * small base's payload: the decoder allocates for the header
     * (docs/format.md, section 2), decodes what the payload holds and must
     * stop at its end. In one tile, and in many: the small payload in each
     * of 16 tiles of 1024 x 1024, and 256 empty tiles of 128 x 128 (each
     * tile that fails costs the decoder its set-up: many more would go
     * past the limit of CPU time). */
    static const uint32_t big[][4] = {{16384, 8192, 16384, 8192},   {65536, 2048, 65536, 2048},
                                      {2048, 65536, 2048, 65536},   {65536, 1, 65536, 128},
                                      {4096, 4096, 1024, 1024},     {4096, 1024, 128, 128}};
    for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
        mmp_container bc;
        base_container(0, &bc);
        mmp_header h = bc.h;
        h.width = big[k][0];
        h.height = big[k][1];
        h.tile_w = big[k][2];
        h.tile_h = big[k][3];
        uint32_t cols, rows;
        mmp_tile_grid(&h, &cols, &rows);
        const uint32_t nt = cols * rows;
        const uint8_t **td = malloc(sizeof *td * nt);
        size_t *tl = malloc(sizeof *tl * nt);
        assert_true(td && tl);
        for (uint32_t q = 0; q < nt; q++) {
            td[q] = base[0].b + bc.tiles[0].offset;
            tl[q] = nt > 100 ? 0 : (size_t)bc.tiles[0].len;
        }
        uint8_t *c;
        size_t cn;
        assert_int_equal(mmp_container_write(&h, td, tl, nt, NULL, 0, &c, &cn), 0);
        snprintf(what, sizeof what, "%s's payload: %ux%u in %u tiles of %ux%u", base[0].name,
                 big[k][0], big[k][1], nt, big[k][2], big[k][3]);
        decode_blob(c, cn, what, &t);
        free(c);
        free(td);
        free(tl);
        mmp_container_free(&bc);
    }

    /* Random files: pure noise, "MMPi" followed by noise, and the
     * signature and a HEAD chunk's length and type followed by noise
     * (the lengths and CRCs made right). */
    for (int k = 0; k < 24; k++) {
        size_t m = rng_below(k < 12 ? 64 : 400);
        uint8_t *c = malloc(m + 8);
        assert_non_null(c);
        for (size_t j = 0; j < m; j++)
            c[j] = (uint8_t)rng_next();
        if (k % 3 == 1 && m >= 4)
            memcpy(c, "MMPi", 4);
        if (k % 3 == 2 && m >= MF_CHUNK2) {
            memcpy(c, "MMPi\x01\x00\x26\x00\x00\x00HEAD", MF_HEAD_DATA);
            fixup_chunks(c, m, 1);
        }
        snprintf(what, sizeof what, "random file #%d (%zu bytes)", k, m);
        decode_blob(c, m, what, &t);
        free(c);
    }
    /* Valid headers of random small sizes and parameters over random
     * payloads: the payload decoder from its very first symbol. Every
     * fourth has tiles of 128 or 144 (up to 3 x 3 of them). */
    for (int k = 0; k < 40; k++) {
        mmp_header h = {0};
        const int tiled = k % 4 == 3;
        h.width = 1 + (uint32_t)rng_below(tiled ? 300 : 80);
        h.height = 1 + (uint32_t)rng_below(tiled ? 300 : 80);
        static const uint32_t maxvals[] = {1, 3, 255, 1023, 65535};
        h.maxval = maxvals[rng_below(5)];
        h.planes = 1;
        h.log2_block = 4;
        h.log2_pmin = 2;
        h.dict_cap = k % 2 ? 64 : 64 + (uint32_t)rng_below(2000);
        h.redund_q4 = k % 8 == 7 ? (1u << 30) : (uint32_t)rng_below(300);
        h.order = (uint32_t)(k % 3 == 0 ? MMP_ORDER_RASTER : MMP_ORDER_WAVEFRONT);
        h.tools = (uint32_t)(k % 2); /* half with the transform residual's syntax */
        h.tile_w = tiled && k % 8 == 3 ? 144 : 128;
        h.tile_h = 128;
        uint32_t cols, rows;
        mmp_tile_grid(&h, &cols, &rows);
        const uint32_t nt = cols * rows;
        uint8_t *pay[9];
        size_t pl[9];
        assert_true(nt <= 9);
        for (uint32_t q = 0; q < nt; q++) {
            pl[q] = 4 + rng_below(k < 20 ? 200 : 3000);
            pay[q] = malloc(pl[q]);
            assert_non_null(pay[q]);
            for (size_t j = 0; j < pl[q]; j++)
                pay[q][j] = (uint8_t)(k % 5 == 4 ? rng_next() & rng_next() & rng_next() : rng_next());
        }
        uint8_t *c;
        size_t cn;
        assert_int_equal(mmp_container_write(&h, (const uint8_t *const *)pay, pl, nt, NULL, 0, &c,
                                             &cn),
                         0);
        snprintf(what, sizeof what, "random payload #%d: %ux%u in %u tiles, maxval %u dict %u, "
                 "%zu bytes", k, h.width, h.height, nt, h.maxval, h.dict_cap, cn);
        decode_blob(c, cn, what, &t);
        for (uint32_t q = 0; q < nt; q++)
            free(pay[q]);
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
