/*
 * Tests of the measurement scripts in scripts/, run as separate processes
 * with python3 from the repository root (make check runs the tests there
 * and sets $MMP_BIN to bin/):
 *
 *  - bdrate on synthetic curves: identical curves give 0.00 %, a test curve
 *    at half the rate at every PSNR gives -50.00 %, curves that do not
 *    overlap are an error, and the images x codecs table;
 *  - rd-sweep on a 32x32 crop at one lambda: one row with exactly the
 *    schema's columns and values that parse (bytes > 0, bpp = 8 bytes /
 *    pixels, PSNR > 0); running it again adds no row, a new lambda one row;
 *  - compare: JPEG only, when cjpeg and djpeg are installed (skipped
 *    otherwise), same schema and resumability; a codec whose tools are not on
 *    PATH is skipped with a warning;
 *  - colour: compare's RGB PSNR and luma PSNR of two small PPM files against
 *    the values this test computes itself; compare on a colour PPM with JPEG
 *    (the colour schema, chroma 420, the bytes of cjpeg 4:2:0 -optimize run
 *    here, and the RGB PSNR of djpeg's output computed here); rd-sweep with
 *    a fake mmp-enc and mmp-dec (shell scripts): the reconstruction and
 *    decode extension by the input's kind (.pgm, .ppm, .pam), --enc-args
 *    passed verbatim, --codec-name, extra --stats keys ignored, a decode
 *    that differs from the reconstruction fails; bdrate on a colour CSV
 *    (psnr and --column psnr_y, avif and avif420 in the table);
 *  - decode-bench with fake decoders: both builds' medians and the MD5 of
 *    the decode, and a failure when the builds decode differently;
 *  - pareto on a 32x32 crop at two mmp speeds and two lambdas, against
 *    synthetic JPEG 2000 anchors: the rows (codecs mmp-sN), a report line
 *    per speed, resumability, and a speed out of range refused;
 *  - results-page on synthetic make rd CSVs: the marked sections rewritten
 *    (tables, plot links relative to the page), the hand-kept text around
 *    them untouched, --check, a page without a section refused, a missing
 *    page made with every section.
 *
 * Everything is written into a private mkdtemp directory, removed at the end.
 * Tests skip when python3 (or $MMP_BIN, for rd-sweep) is missing.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"
#include "util.h"

#define SCHEMA "image,width,height,codec,param,bytes,bpp,psnr,enc_seconds,dec_seconds"
#define NCOL 10
/* rd-sweep's and compare's rows: the perceptual columns after the others */
#define SWEEP_SCHEMA SCHEMA ",ms_ssim,ssimulacra2"
#define SWEEP_NCOL 12

static char dir[64];           /* mkdtemp directory */
static char python[512];       /* absolute path of python3, "" when missing */
static const char *bin;        /* $MMP_BIN */
static char cap_out[16384], cap_err[16384];

/* ---------------------------------------------------------------- helpers */

/* The file into buf as a string, cut to n - 1 bytes ("" when unreadable). */
static void slurp_into(const char *path, char *buf, size_t n)
{
    size_t len;
    uint8_t *b = slurp(path, &len);
    len = b && len < n ? len : b ? n - 1 : 0;
    if (b)
        memcpy(buf, b, len);
    buf[len] = 0;
    free(b);
}

/* Run `sh -c CMD` from the repository root with stdout and stderr captured
 * into cap_out and cap_err; PY in CMD stands for python3. Returns the exit
 * status. */
static int run(const char *fmt, ...)
{
    char cmd[4096], full[8192], o[128], e[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(o, sizeof o, "%s/stdout", dir);
    snprintf(e, sizeof e, "%s/stderr", dir);
    snprintf(full, sizeof full, "PY='%s' && (%s) >'%s' 2>'%s' </dev/null", python, cmd, o, e);
    int st = system(full);
    assert_true(st != -1);
    if (!WIFEXITED(st))
        fail_msg("'%s' did not exit normally (status %#x)", cmd, st);
    slurp_into(o, cap_out, sizeof cap_out);
    slurp_into(e, cap_err, sizeof cap_err);
    return WEXITSTATUS(st);
}

static void need_python(void)
{
    if (!python[0]) {
        print_message("python3 is not installed: skipping script tests\n");
        skip();
    }
}

static int have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

static void put(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The whole of a file in dir, into buf. */
static void get(const char *name, char *buf, size_t n)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    slurp_into(p, buf, n);
}

/* Split text into lines in place (trailing \r dropped); returns the count. */
static int lines(char *text, char **line, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l && n < max; l = strtok_r(NULL, "\n", &save)) {
        size_t k = strlen(l);
        if (k && l[k - 1] == '\r')
            l[k - 1] = 0;
        line[n++] = l;
    }
    return n;
}

/* Split one CSV line (no quoting in our rows) into at most max fields. */
static int fields(char *l, char **f, int max)
{
    int n = 0;
    for (;;) {
        if (n == max)
            return max + 1;
        f[n++] = l;
        char *c = strchr(l, ',');
        if (!c)
            return n;
        *c = 0;
        l = c + 1;
    }
}

static double num(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        fail_msg("'%s' is not a number", s);
    return v;
}

static long integer(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end)
        fail_msg("'%s' is not an integer", s);
    return v;
}

/* The value printed on the text line of bdrate that starts with `label`. */
static void bd_line(const char *label, double *rate, double *psnr)
{
    char copy[sizeof cap_out], *line[64] = {0};
    snprintf(copy, sizeof copy, "%s", cap_out);
    int n = lines(copy, line, 64);
    for (int i = 0; i < n; i++) {
        char name[64];
        if (sscanf(line[i], "%63s BD-rate %lf %% BD-PSNR %lf", name, rate, psnr) == 3 &&
            !strcmp(name, label))
            return;
    }
    fail_msg("no line '%s' in bdrate's output:\n%s%s", label, cap_out, cap_err);
}

/* A CSV of two images x codecs, each curve five points; the test codec's
 * rates are the reference's times `factor`. */
static void synthetic(const char *name, double factor, double psnr_shift)
{
    static const double bpp[] = {0.1, 0.25, 0.5, 1.0, 2.0};
    static const double db[2][5] = {{27.0, 30.5, 34.0, 38.2, 43.0}, {24.0, 26.0, 28.5, 32.0, 36.5}};
    static const char *img[2] = {"alpha", "beta"};
    char text[8192];
    size_t k = (size_t)snprintf(text, sizeof text, "%s\n", SCHEMA);
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 5; p++) {
            k += (size_t)snprintf(text + k, sizeof text - k, "%s,64,64,ref,x=%d,%d,%.6f,%.4f,0.1,0.1\n",
                                  img[i], p, (int)(bpp[p] * 512), bpp[p], db[i][p]);
            k += (size_t)snprintf(text + k, sizeof text - k, "%s,64,64,test,x=%d,%d,%.6f,%.4f,0.1,0.1\n",
                                  img[i], p, (int)(bpp[p] * factor * 512), bpp[p] * factor,
                                  db[i][p] + psnr_shift);
        }
    put(name, text);
}

/* A 32x32 8-bit PGM: a crop of images/camera.pgm, or a synthetic pattern. */
static void make_crop(const char *name)
{
    mmp_image c = {0};
    if (load_crop("camera", 200, 200, 32, 32, &c) || c.maxval != 255) {
        mmp_image_free(&c);
        assert_int_equal(mmp_image_alloc(&c, 32, 32, 255), 0);
        for (int i = 0; i < 32 * 32; i++)
            c.pix[i] = (uint16_t)((i % 32) * 6 + (i / 32) * 2 + ((i * 7919) % 13));
    }
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_pnm_write(f, &c, 0), 0);
    assert_int_equal(fclose(f), 0);
    mmp_image_free(&c);
}

/* Check an output CSV: the schema's header and `rows` rows of 32x32 images,
 * each with values that parse; returns the number of rows with `codec`. */
static int check_csv(const char *name, int rows, const char *codec)
{
    static char text[65536];
    char *line[256] = {0}, *f[SWEEP_NCOL + 1] = {0};
    get(name, text, sizeof text);
    int n = lines(text, line, 256);
    assert_true(n >= 1);
    assert_string_equal(line[0], SWEEP_SCHEMA);
    assert_int_equal(n - 1, rows);
    int match = 0;
    for (int i = 1; i < n; i++) {
        assert_int_equal(fields(line[i], f, SWEEP_NCOL), SWEEP_NCOL);
        /* 32 x 32 is too small for MS-SSIM, not for SSIMULACRA 2 */
        assert_string_equal(f[10], "nan");
        assert_true(num(f[11]) > -100 && num(f[11]) < 100);
        assert_string_equal(f[0], "crop");
        assert_int_equal(integer(f[1]), 32);
        assert_int_equal(integer(f[2]), 32);
        match += !strcmp(f[3], codec);
        assert_non_null(strchr(f[4], '='));
        long bytes = integer(f[5]);
        assert_true(bytes > 0);
        double bpp = num(f[6]);
        assert_true(fabs(bpp - 8.0 * bytes / (32 * 32)) < 1e-5);
        double psnr = num(f[7]);
        assert_true(psnr > 0);
        assert_true(num(f[8]) >= 0);
        assert_true(num(f[9]) >= 0);
    }
    return match;
}

/* ------------------------------------------------------------------ tests */

static void test_bdrate_identical(void **state)
{
    (void)state;
    need_python();
    synthetic("same.csv", 1.0, 0.0);
    assert_int_equal(run("\"$PY\" scripts/bdrate --test test --ref ref '%s/same.csv'", dir), 0);
    double rate, psnr;
    bd_line("alpha", &rate, &psnr);
    assert_true(fabs(rate) < 0.005 && fabs(psnr) < 0.0005);
    bd_line("average", &rate, &psnr);
    assert_true(fabs(rate) < 0.005 && fabs(psnr) < 0.0005);
    assert_non_null(strstr(cap_out, "+0.00 %"));
}

static void test_bdrate_half_rate(void **state)
{
    (void)state;
    need_python();
    synthetic("half.csv", 0.5, 0.0);
    assert_int_equal(run("\"$PY\" scripts/bdrate --test test --ref ref '%s/half.csv'", dir), 0);
    double rate, psnr;
    bd_line("alpha", &rate, &psnr);
    assert_true(fabs(rate + 50.0) < 0.01);
    assert_true(psnr > 0);
    bd_line("beta", &rate, &psnr);
    assert_true(fabs(rate + 50.0) < 0.01);
    bd_line("average", &rate, &psnr);
    assert_true(fabs(rate + 50.0) < 0.01);
    assert_non_null(strstr(cap_out, "-50.00 %"));
    /* the other way round: twice the rate */
    assert_int_equal(run("\"$PY\" scripts/bdrate --test ref --ref test '%s/half.csv'", dir), 0);
    bd_line("average", &rate, &psnr);
    assert_true(fabs(rate - 100.0) < 0.01);
    assert_true(psnr < 0);
}

static void test_bdrate_no_overlap(void **state)
{
    (void)state;
    need_python();
    synthetic("apart.csv", 1.0, 30.0);   /* test PSNRs all above the reference's */
    assert_int_equal(run("\"$PY\" scripts/bdrate --test test --ref ref '%s/apart.csv'", dir), 1);
    assert_non_null(strstr(cap_err, "overlap"));
    synthetic("same.csv", 1.0, 0.0);
    assert_int_equal(run("\"$PY\" scripts/bdrate --test nosuch --ref ref '%s/same.csv'", dir), 1);
}

static void test_bdrate_table(void **state)
{
    (void)state;
    need_python();
    synthetic("half.csv", 0.5, 0.0);
    assert_int_equal(run("\"$PY\" scripts/bdrate --test all --ref ref --markdown '%s/half.csv'", dir), 0);
    assert_non_null(strstr(cap_out, "| image | test |"));
    assert_non_null(strstr(cap_out, "| alpha | -50.00 % |"));
    assert_non_null(strstr(cap_out, "| **average** | **-50.00 %** |"));
}

static void test_rdsweep_row(void **state)
{
    (void)state;
    need_python();
    if (!bin) {
        print_message("MMP_BIN is not set (make check sets it to bin/): skipping rd-sweep\n");
        skip();
    }
    make_crop("crop.pgm");
    assert_int_equal(run("\"$PY\" scripts/rd-sweep -j 1 -l 300 --bin '%s' -o '%s/rd.csv' '%s/crop.pgm'",
                         bin, dir, dir), 0);
    assert_int_equal(check_csv("rd.csv", 1, "mmp"), 1);
    assert_non_null(strstr(cap_err, "[1/1] crop mmp lambda=300"));
    static char text[4096];
    get("rd.csv", text, sizeof text);
    assert_non_null(strstr(text, ",mmp,lambda=300,"));

    /* resumable: the same sweep again adds nothing and leaves the file as it was */
    static char before[4096], after[4096];
    get("rd.csv", before, sizeof before);
    assert_int_equal(run("\"$PY\" scripts/rd-sweep -j 1 -l 300 --bin '%s' -o '%s/rd.csv' '%s/crop.pgm'",
                         bin, dir, dir), 0);
    get("rd.csv", after, sizeof after);
    assert_string_equal(before, after);
    assert_non_null(strstr(cap_err, "nothing to do"));

    /* a new lambda adds exactly its row */
    assert_int_equal(run("\"$PY\" scripts/rd-sweep -j 2 -l 300,1000 --bin '%s' -o '%s/rd.csv' '%s/crop.pgm'",
                         bin, dir, dir), 0);
    assert_int_equal(check_csv("rd.csv", 2, "mmp"), 2);
    assert_non_null(strstr(cap_err, "[1/1] crop mmp lambda=1000"));
}

static void test_rdsweep_errors(void **state)
{
    (void)state;
    need_python();
    if (!bin)
        skip();
    /* a CSV with other columns is not appended to */
    put("other.csv", "a,b\n1,2\n");
    make_crop("crop.pgm");
    assert_int_not_equal(run("\"$PY\" scripts/rd-sweep -l 300 --bin '%s' -o '%s/other.csv' '%s/crop.pgm'",
                             bin, dir, dir), 0);
    static char text[256];
    get("other.csv", text, sizeof text);
    assert_string_equal(text, "a,b\n1,2\n");
    /* a missing image */
    assert_int_not_equal(run("\"$PY\" scripts/rd-sweep -l 300 --bin '%s' -o '%s/x.csv' '%s/none.pgm'",
                             bin, dir, dir), 0);
}

static void test_compare_jpeg(void **state)
{
    (void)state;
    need_python();
    if (!have_tool("cjpeg") || !have_tool("djpeg")) {
        print_message("cjpeg/djpeg not installed: skipping compare (scripts/install-deps.sh --extra)\n");
        skip();
    }
    make_crop("crop.pgm");
    assert_int_equal(run("\"$PY\" scripts/compare -j 2 -c jpeg --setting jpeg=50,90 -o '%s/cmp.csv' '%s/crop.pgm'",
                         dir, dir), 0);
    assert_int_equal(check_csv("cmp.csv", 2, "jpeg"), 2);
    static char text[4096];
    get("cmp.csv", text, sizeof text);
    assert_non_null(strstr(text, ",jpeg,Q=50,"));
    assert_non_null(strstr(text, ",jpeg,Q=90,"));
    assert_int_equal(run("\"$PY\" scripts/compare -c jpeg --setting jpeg=50,90 -o '%s/cmp.csv' '%s/crop.pgm'",
                         dir, dir), 0);
    assert_int_equal(check_csv("cmp.csv", 2, "jpeg"), 2);
}

/* compare --lossless: mmp's row (and PNG's where pnmtopng is installed), each
 * decoded file checked sample by sample; --table prints them. */
static void test_compare_lossless(void **state)
{
    (void)state;
    need_python();
    make_crop("crop.pgm");
    const int png = have_tool("pnmtopng") && have_tool("pngtopnm");
    assert_int_equal(run("\"$PY\" scripts/compare --lossless -c %s -o '%s/ll.csv' '%s/crop.pgm'",
                         png ? "mmp,png" : "mmp", dir, dir), 0);
    static char text[4096];
    get("ll.csv", text, sizeof text);
    assert_non_null(strstr(text, "image,width,height,channels,maxval,codec,param,bytes,"
                                 "bits_per_sample,exact,enc_seconds,dec_seconds"));
    assert_non_null(strstr(text, ",mmp,lossless,"));
    assert_null(strstr(text, ",no,"));
    if (png)
        assert_non_null(strstr(text, ",png,"));
    assert_int_equal(run("\"$PY\" scripts/compare --table '%s/ll.csv'", dir), 0);
    assert_non_null(strstr(cap_out, "| crop | 255 |"));
    /* --near 2: mmp's row within the bound, under its name */
    assert_int_equal(run("\"$PY\" scripts/compare --lossless --near 2 -c mmp -o '%s/nl.csv' '%s/crop.pgm'",
                         dir, dir), 0);
    get("nl.csv", text, sizeof text);
    assert_non_null(strstr(text, ",mmp,near=2,"));
    assert_null(strstr(text, ",no,"));
}

static void test_compare_missing_tool(void **state)
{
    (void)state;
    need_python();
    make_crop("crop.pgm");
    /* no codec tool on PATH: every codec is skipped with a warning, no row */
    assert_int_equal(run("PATH='%s/nothing' \"$PY\" scripts/compare -o '%s/none.csv' '%s/crop.pgm'",
                         dir, dir, dir), 0);
    assert_non_null(strstr(cap_err, "warning: jpeg skipped"));
    assert_non_null(strstr(cap_err, "warning: jxl skipped"));
    assert_int_equal(check_csv("none.csv", 0, "jpeg"), 0);
}


/* ----------------------------------------------------------------- colour */

#define CW 12
#define CH 8

/* A CW x CH 8-bit RGB pattern; with `perturb`, some samples moved by known
 * amounts. */
static void colour_pattern(uint8_t *px, int perturb)
{
    for (int i = 0; i < CW * CH * 3; i++)
        px[i] = (uint8_t)((i * 37 + (i / 3) * 11 + (i % 3) * 70) % 251);
    if (perturb)   /* R of every other pixel +5, B of every fourth -20, G unchanged */
        for (int p = 0; p < CW * CH; p++) {
            int r = px[3 * p] + (p % 2 ? 0 : 5), bl = px[3 * p + 2] - (p % 4 ? 0 : 20);
            px[3 * p] = (uint8_t)(r > 255 ? 255 : r);
            px[3 * p + 2] = (uint8_t)(bl < 0 ? 0 : bl);
        }
}

static void write_ppm(const char *name, int w, int h, const uint8_t *px)
{
    char p[256], head[64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int n = snprintf(head, sizeof head, "P6\n%d %d\n255\n", w, h);
    size_t len = (size_t)n + (size_t)w * h * 3;
    uint8_t *b = malloc(len);
    assert_non_null(b);
    memcpy(b, head, (size_t)n);
    memcpy(b + n, px, (size_t)w * h * 3);
    write_file(p, b, len);
    free(b);
}

/* The samples of a binary PPM in dir (maxval 255) into px; returns w * h. */
static int read_ppm(const char *name, int w, int h, uint8_t *px)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    size_t len;
    uint8_t *b = slurp(p, &len);
    assert_non_null(b);
    int fw, fh, mx, off = 0;
    assert_int_equal(sscanf((char *)b, "P6 %d %d %d%n", &fw, &fh, &mx, &off), 3);
    assert_int_equal(fw, w);
    assert_int_equal(fh, h);
    assert_int_equal(mx, 255);
    off++;   /* the one white space after maxval */
    assert_true(len >= (size_t)off + (size_t)w * h * 3);
    memcpy(px, b + off, (size_t)w * h * 3);
    free(b);
    return w * h;
}

/* RGB PSNR (one MSE over all samples) and BT.601 luma PSNR, computed here. */
static void rgb_psnr(const uint8_t *a, const uint8_t *b, int n, double *rgb, double *y)
{
    double se = 0, sey = 0;
    for (int i = 0; i < n; i++) {
        double dr = a[3 * i] - b[3 * i], dg = a[3 * i + 1] - b[3 * i + 1], db = a[3 * i + 2] - b[3 * i + 2];
        se += dr * dr + dg * dg + db * db;
        double dy = 0.299 * dr + 0.587 * dg + 0.114 * db;
        sey += dy * dy;
    }
    *rgb = 10 * log10(255.0 * 255.0 * 3 * n / se);
    *y = 10 * log10(255.0 * 255.0 * n / sey);
}

static void test_colour_psnr(void **state)
{
    (void)state;
    need_python();
    static uint8_t a[CW * CH * 3], b[CW * CH * 3];
    colour_pattern(a, 0);
    colour_pattern(b, 1);
    write_ppm("ca.ppm", CW, CH, a);
    write_ppm("cb.ppm", CW, CH, b);
    double rgb, y;
    rgb_psnr(a, b, CW * CH, &rgb, &y);
    /* the perturbation is uneven over the channels: a PSNR over one channel
     * (R here) or over luma only would differ */
    double r, se = 0;
    for (int i = 0; i < CW * CH; i++)
        se += (double)(a[3 * i] - b[3 * i]) * (a[3 * i] - b[3 * i]);
    r = 10 * log10(255.0 * 255.0 * CW * CH / se);
    assert_true(fabs(rgb - y) > 0.5 && fabs(rgb - r) > 0.5);
    assert_int_equal(run("\"$PY\" -c \"import importlib.machinery as m; "
                         "c = m.SourceFileLoader('c', 'scripts/compare').load_module(); "
                         "a = c.read_rgb('%s/ca.ppm')[2]; b = c.read_rgb('%s/cb.ppm')[2]; "
                         "print('%%.6f %%.6f' %% (c.psnr(a, b), c.psnr_luma(a, b)))\"", dir, dir), 0);
    double srgb, sy;
    assert_int_equal(sscanf(cap_out, "%lf %lf", &srgb, &sy), 2);
    if (fabs(srgb - rgb) > 1e-5 || fabs(sy - y) > 1e-5)
        fail_msg("compare: RGB PSNR %.6f, luma %.6f; computed here %.6f, %.6f", srgb, sy, rgb, y);
}

static void test_compare_colour_jpeg(void **state)
{
    (void)state;
    need_python();
    if (!have_tool("cjpeg") || !have_tool("djpeg")) {
        print_message("cjpeg/djpeg not installed: skipping compare in colour\n");
        skip();
    }
    enum { W = 40, H = 24 };
    static uint8_t a[W * H * 3], d[W * H * 3];
    for (int i = 0; i < W * H; i++) {
        int x = i % W, yy = i / W;
        a[3 * i] = (uint8_t)(x * 6);
        a[3 * i + 1] = (uint8_t)(yy * 10 + ((x * 7919 + yy * 31) % 17));
        a[3 * i + 2] = (uint8_t)(255 - x * 3 - yy * 4);
    }
    write_ppm("rgb.ppm", W, H, a);
    assert_int_equal(run("\"$PY\" scripts/compare -j 1 -c jpeg --setting jpeg=60 -o '%s/ccmp.csv' '%s/rgb.ppm'",
                         dir, dir), 0);
    /* the encoding and decoding of the colour anchors, run here */
    assert_int_equal(run("cd '%s' && cjpeg -optimize -quality 60 -outfile t.jpg rgb.ppm && "
                         "djpeg -pnm -outfile t.ppm t.jpg && wc -c < t.jpg", dir), 0);
    long bytes = atol(cap_out);
    assert_true(bytes > 0);
    double rgb, y;
    rgb_psnr(a, d, read_ppm("t.ppm", W, H, d), &rgb, &y);

    static char text[4096];
    char *line[8] = {0}, *f[15] = {0};
    get("ccmp.csv", text, sizeof text);
    assert_int_equal(lines(text, line, 8), 2);
    assert_string_equal(line[0], SCHEMA ",psnr_y,chroma,ms_ssim,ssimulacra2");
    assert_int_equal(fields(line[1], f, 14), 14);
    assert_string_equal(f[0], "rgb");
    assert_int_equal(integer(f[1]), W);
    assert_int_equal(integer(f[2]), H);
    assert_string_equal(f[3], "jpeg");
    assert_string_equal(f[4], "Q=60");
    assert_int_equal(integer(f[5]), bytes);
    assert_true(fabs(num(f[6]) - 8.0 * bytes / (W * H)) < 1e-5);
    if (fabs(num(f[7]) - rgb) > 1e-4 || fabs(num(f[10]) - y) > 1e-4)
        fail_msg("compare: psnr %s psnr_y %s; computed here %.4f %.4f", f[7], f[10], rgb, y);
    assert_string_equal(f[11], "420");
}

/* A fake mmp-enc that logs the extension of --recon and its other options,
 * copies the input to the reconstruction and the output, and prints the
 * --stats line with keys rd-sweep does not know; a fake mmp-dec that copies
 * the .mmp to its output, with two bytes more when it holds BAD. */
static void fake_bin(void)
{
    char p[256];
    snprintf(p, sizeof p, "%s/fake", dir);
    mkdir(p, 0755);
    put("fake/mmp-enc",
        "#!/bin/sh\n"
        "rec=; args=\n"
        "while [ $# -gt 2 ]; do\n"
        "  case \"$1\" in --recon) rec=$2; shift 2 ;; *) args=\"$args $1\"; shift ;; esac\n"
        "done\n"
        "echo \"$(basename \"$1\") ${rec##*.}$args\" >> \"$(dirname \"$0\")/log\"\n"
        "cp \"$1\" \"$rec\" && cp \"$1\" \"$2\" || exit 1\n"
        "echo \"bytes=1 bpp=1 seconds=0.1 psnr=41.25 width=2 height=2 lambda=1 engine=seq channels=3 "
        "psnr_r=40.1 psnr_g=42 note\"\n");
    put("fake/mmp-dec",
        "#!/bin/sh\n"
        "cp \"$2\" \"$4\" || exit 1\n"
        "if grep -q BAD \"$2\"; then echo x >> \"$4\"; fi\n");
    put("fake/mmp-metrics", "#!/bin/sh\necho \"psnr=41.25 ms_ssim=0.5 ssimulacra2=50\"\n");
    snprintf(p, sizeof p, "chmod +x '%s/fake/mmp-enc' '%s/fake/mmp-dec' '%s/fake/mmp-metrics'", dir,
             dir, dir);
    assert_int_equal(system(p), 0);
}

static void test_rdsweep_kinds(void **state)
{
    (void)state;
    need_python();
    fake_bin();
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    /* PNG: signature and an IHDR of 2x2, 8 bits, colour types 6 (RGBA) and 2 (RGB) */
    uint8_t png[33] = {0};
    memcpy(png, png_sig, 8);
    memcpy(png + 8, "\0\0\0\x0dIHDR\0\0\0\x02\0\0\0\x02\x08\x06", 26 - 8);
    char p[256];
    snprintf(p, sizeof p, "%s/rgba.png", dir);
    write_file(p, png, sizeof png);
    png[25] = 2;
    snprintf(p, sizeof p, "%s/rgbpng.png", dir);
    write_file(p, png, sizeof png);
    put("grey.pgm", "P5\n2 2\n255\nabcd");
    put("rgb.ppm", "P6\n2 2\n255\nabcdefghijkl");
    put("ga.pam", "P7\nWIDTH 2\nHEIGHT 2\nDEPTH 2\nMAXVAL 255\nTUPLTYPE GRAYSCALE_ALPHA\nENDHDR\nabcdefgh");
    put("g.pam", "P7\nWIDTH 2\nHEIGHT 2\nDEPTH 1\nMAXVAL 255\nTUPLTYPE GRAYSCALE\nENDHDR\nabcd");
    assert_int_equal(run("\"$PY\" scripts/rd-sweep -j 1 -l 7 --bin '%s/fake' --enc-args \"--chroma '4 2 0'\" "
                         "--codec-name mmp-420 -o '%s/kinds.csv' '%s/grey.pgm' '%s/rgb.ppm' '%s/ga.pam' "
                         "'%s/g.pam' '%s/rgba.png' '%s/rgbpng.png'", dir, dir, dir, dir, dir, dir, dir, dir), 0);
    static char log[4096];
    get("fake/log", log, sizeof log);
    static const char *want[] = {"grey.pgm pgm ", "rgb.ppm ppm ", "ga.pam pam ", "g.pam pgm ",
                                 "rgba.png pam ", "rgbpng.png ppm "};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(log, want[i]))
            fail_msg("fake mmp-enc's log has no '%s...':\n%s", want[i], log);
    /* the options verbatim, as one argument each after shell splitting */
    assert_non_null(strstr(log, " -l 7 -e seq -d 1024 --order raster --chroma 4 2 0\n"));
    static char text[4096];
    get("kinds.csv", text, sizeof text);
    char *line[16] = {0}, *f[SWEEP_NCOL + 1] = {0};
    int n = lines(text, line, 16);
    assert_int_equal(n, 7);
    for (int i = 1; i < n; i++) {
        assert_int_equal(fields(line[i], f, SWEEP_NCOL), SWEEP_NCOL);
        assert_string_equal(f[3], "mmp-420");
        assert_string_equal(f[4], "lambda=7");
        assert_string_equal(f[7], "41.25");
        assert_string_equal(f[10], "0.5");
        assert_string_equal(f[11], "50");
    }

    /* a CSV from before the perceptual columns: rewritten with them, its row
     * measured again and replaced, the other row kept with empty cells */
    put("old.csv", SCHEMA "\ngrey,2,2,mmp,lambda=7,9,18,30.5,1,1\ngrey,2,2,mmp,lambda=9,9,18,31,1,1\n");
    assert_int_equal(run("\"$PY\" scripts/rd-sweep -j 1 -l 7 --bin '%s/fake' -o '%s/old.csv' '%s/grey.pgm'",
                         dir, dir, dir), 0);
    get("old.csv", text, sizeof text);
    n = lines(text, line, 16);
    assert_int_equal(n, 3);
    assert_string_equal(line[0], SWEEP_SCHEMA);
    assert_non_null(strstr(line[1], "grey,2,2,mmp,lambda=7,15,30.000000,41.25,"));
    assert_non_null(strstr(line[1], ",0.5,50"));
    assert_string_equal(line[2], "grey,2,2,mmp,lambda=9,9,18,31,1,1,,");

    /* a decode that differs from the reconstruction is a failed job, no row */
    put("bad.pam", "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\nBAD!");
    assert_int_equal(run("\"$PY\" scripts/rd-sweep -j 1 -l 7 --bin '%s/fake' -o '%s/bad.csv' '%s/bad.pam'",
                         dir, dir, dir), 1);
    assert_non_null(strstr(cap_err, "differs from the encoder's reconstruction"));
    get("fake/log", log, sizeof log);
    assert_non_null(strstr(log, "bad.pam pam "));
    /* an input of no known kind is refused before any job */
    put("x.txt", "hello");
    assert_int_not_equal(run("\"$PY\" scripts/rd-sweep -j 1 -l 7 --bin '%s/fake' -o '%s/x.csv' '%s/x.txt'",
                             dir, dir, dir), 0);
    assert_non_null(strstr(cap_err, "not a PGM, PPM, PAM or PNG"));
}

/* decode-bench with fake decoders (shell scripts that copy the file and
 * print a --stats line): one row per file with both builds' medians, the
 * seconds the decoders report and the MD5 of what they wrote; a build that
 * decodes differently fails the run. */
static void test_decode_bench(void **state)
{
    (void)state;
    need_python();
    char p[512];
    snprintf(p, sizeof p, "%s/fa", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/fb", dir);
    mkdir(p, 0755);
    const char *same = "#!/bin/sh\n"
                       "cp \"$2\" \"$4\" || exit 1\n"
                       "echo \"bytes=5 seconds=0.002 width=1 height=1\"\n";
    put("fa/mmp-enc", "#!/bin/sh\nexit 1\n");
    put("fa/mmp-dec", same);
    put("fb/mmp-enc", "#!/bin/sh\nexit 1\n");
    put("fb/mmp-dec", "#!/bin/sh\n"
                      "cp \"$2\" \"$4\" && echo x >> \"$4\" || exit 1\n"
                      "echo \"bytes=5 seconds=0.002 width=1 height=1\"\n");
    snprintf(p, sizeof p, "chmod +x '%s'/fa/* '%s'/fb/*", dir, dir);
    assert_int_equal(system(p), 0);
    put("x.mmp", "hello");
    assert_int_equal(run("\"$PY\" scripts/decode-bench -r 3 --bin '%s/fa' --versus '%s/fa' '%s/x.mmp'",
                         dir, dir, dir), 0);
    /* MD5 of "hello" */
    char *row = strstr(cap_out, "| x.mmp | 5 | ");
    if (!row)
        fail_msg("no row for x.mmp in:\n%s", cap_out);
    char *f[8] = {0};
    char *end = strchr(row, '\n');
    if (end)
        *end = 0;
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(row, "|", &save); t && n < 8; t = strtok_r(NULL, "|", &save))
        f[n++] = t;
    assert_int_equal(n, 7);
    assert_true(atof(f[2]) > 0.0 && atof(f[4]) > 0.0); /* walls */
    assert_true(fabs(atof(f[3]) - 2.0) < 1e-9 && fabs(atof(f[5]) - 2.0) < 1e-9);
    assert_non_null(strstr(f[6], "5d41402abc4b2a76b9719d911017c592"));
    /* another output from the other build: an error */
    assert_int_equal(run("\"$PY\" scripts/decode-bench -r 1 --bin '%s/fa' --versus '%s/fb' '%s/x.mmp'",
                         dir, dir, dir), 1);
    assert_non_null(strstr(cap_err, "decodes differently"));
}

/* bench with a fake encoder (a shell script whose file and --stats time
 * depend on --speed and -e) and a fake decoder: a row per speed and engine,
 * the speedup against the first row (seq at speed 0), the same bytes
 * within a speed; an engine that writes other bytes fails the run. */
static void test_bench_speeds(void **state)
{
    (void)state;
    need_python();
    char p[512];
    snprintf(p, sizeof p, "%s/fe", dir);
    mkdir(p, 0755);
    /* args: --quiet --stats -e ENGINE -t T -l L --speed S IN OUT ($4, $10, $12) */
    put("fe/mmp-enc", "#!/bin/sh\n"
                      "e=$4; s=${10}; out=${12}\n"
                      "echo \"speed $s\" > \"$out\"\n"
                      "[ \"$e\" = bad ] && echo odd >> \"$out\"\n"
                      "[ \"$s\" = 0 ] && t=0.8 || t=0.1\n"
                      "echo \"bytes=9 seconds=$t\"\n");
    put("fe/mmp-dec", "#!/bin/sh\necho \"bytes=9 seconds=0.002\"\n");
    snprintf(p, sizeof p, "chmod +x '%s'/fe/*", dir);
    assert_int_equal(system(p), 0);
    put("x.pgm", "P5 1 1 255\n\200");
    assert_int_equal(run("\"$PY\" scripts/bench -r 1 -t 2 -e 'seq omp' -s '0 4' --bin '%s/fe' "
                         "'%s/x.pgm'", dir, dir), 0);
    if (!strstr(cap_out, "| x | 0 | seq | - | 0.800 | 0.002 | 1.00x | 8 | yes |") ||
        !strstr(cap_out, "| x | 0 | omp | 2 | 0.800 | 0.002 | 1.00x | 8 | yes |") ||
        !strstr(cap_out, "| x | 4 | seq | - | 0.100 | 0.002 | 8.00x | 8 | yes |") ||
        !strstr(cap_out, "| x | 4 | omp | 2 | 0.100 | 0.002 | 8.00x | 8 | yes |"))
        fail_msg("unexpected bench table:\n%s", cap_out);
    assert_int_equal(run("\"$PY\" scripts/bench -r 1 -t 2 -e 'seq bad' -s 4 --bin '%s/fe' "
                         "'%s/x.pgm'", dir, dir), 1);
    assert_non_null(strstr(cap_out, "| x | 4 | bad | 2 | 0.100 | 0.002 | 1.00x | 12 | NO |"));
    assert_non_null(strstr(cap_err, "did not produce the reference bytes"));
}

/* A colour CSV (the columns of scripts/compare in colour): on the RGB PSNR
 * (psnr) avif420 needs half the rate of j2k and avif the same; psnr_y is
 * 1.5 dB above psnr, 3.5 dB for avif. */
static void test_bdrate_colour(void **state)
{
    (void)state;
    need_python();
    static const double bpp[] = {0.15, 0.4, 1.0, 2.0, 4.0};
    static const double db[] = {27.0, 30.5, 34.0, 38.2, 43.0};
    static const char *codec[] = {"j2k", "avif", "avif420"};
    static const double rate[] = {1.0, 1.0, 0.5};
    char text[8192];
    size_t k = (size_t)snprintf(text, sizeof text, "%s,psnr_y,chroma\n", SCHEMA);
    for (int c = 0; c < 3; c++)
        for (int p = 0; p < 5; p++) {
            double b = bpp[p] * rate[c];
            /* psnr_y: the same curve for j2k and avif420 */
            double y = db[p] + 1.5 + (c == 1 ? 2.0 : 0.0);
            k += (size_t)snprintf(text + k, sizeof text - k, "alpha,64,64,%s,x=%d,%d,%.6f,%.4f,0.1,0.1,%.4f,%s\n",
                                  codec[c], p, (int)(b * 512), b, db[p], y, c == 2 ? "420" : "444");
        }
    put("colour.csv", text);
    assert_int_equal(run("\"$PY\" scripts/bdrate --test all --ref j2k --markdown '%s/colour.csv'", dir), 0);
    assert_non_null(strstr(cap_out, "| image | avif | avif420 |"));
    assert_non_null(strstr(cap_out, "| alpha | +0.00 % | -50.00 % |"));
    assert_int_equal(run("\"$PY\" scripts/bdrate --test avif420 --ref j2k '%s/colour.csv'", dir), 0);
    double r, ps;
    bd_line("average", &r, &ps);
    assert_true(fabs(r + 50.0) < 0.01);
    /* on psnr_y, avif is 2 dB better than j2k at the same rate */
    assert_int_equal(run("\"$PY\" scripts/bdrate --test avif --ref j2k --column psnr_y '%s/colour.csv'", dir), 0);
    bd_line("average", &r, &ps);
    assert_true(r < -10.0 && fabs(ps - 2.0) < 0.01);
    /* a column that is not there */
    assert_int_equal(run("\"$PY\" scripts/bdrate --test avif --ref j2k --column ssim '%s/colour.csv'", dir), 1);
    assert_non_null(strstr(cap_err, "lacks the column"));
}

/* results-page on a data folder of make rd's names: rd-mmp.csv with mmp and
 * mmp-wavefront (half mmp's rate), rd-anchors-local.csv with j2k (twice
 * mmp's rate), two plots. */
/* scripts/pareto: mmp's rows at two speeds, the report of each against
 * synthetic JPEG 2000 curves, nothing encoded again on a second run. AVIF
 * rows come too where avifenc is installed; they are not counted here. */
static void test_pareto(void **state)
{
    (void)state;
    need_python();
    if (!bin) {
        print_message("MMP_BIN is not set (make check sets it to bin/): skipping pareto\n");
        skip();
    }
    make_crop("pcrop.pgm");
    put("anch.csv", SCHEMA "\n"
                    "pcrop,32,32,j2k,ratio=40,26,0.2,24.0,0.01,0.01\n"
                    "pcrop,32,32,j2k,ratio=16,64,0.5,28.0,0.01,0.01\n"
                    "pcrop,32,32,j2k,ratio=8,128,1.0,32.0,0.01,0.01\n"
                    "pcrop,32,32,j2k,ratio=4,256,2.0,37.0,0.01,0.01\n"
                    "pcrop,32,32,j2k,ratio=2,512,4.0,44.0,0.01,0.01\n");
    const char *cmd = "\"$PY\" scripts/pareto -j 2 --mmp-speeds 9-10 --avif-speeds 6 -l 30,300 "
                      "--bin '%s' --anchors '%s/anch.csv' -o '%s/p.csv' '%s/pcrop.pgm'";
    assert_int_equal(run(cmd, bin, dir, dir, dir), 0);
    static char text[65536], again[65536];
    get("p.csv", text, sizeof text);
    int mmp_rows = 0;
    for (const char *q = text; (q = strstr(q, ",mmp-s")) != NULL; q++)
        mmp_rows++;
    assert_int_equal(mmp_rows, 4);
    assert_non_null(strstr(text, "pcrop,32,32,mmp-s9,lambda=30,"));
    assert_non_null(strstr(text, "pcrop,32,32,mmp-s10,lambda=300,"));
    assert_non_null(strstr(cap_out, "mmp-s9 "));
    assert_non_null(strstr(cap_out, "mmp-s10 "));
    assert_non_null(strstr(cap_out, "BD-rate"));
    /* resumable: nothing encoded again */
    assert_int_equal(run(cmd, bin, dir, dir, dir), 0);
    get("p.csv", again, sizeof again);
    assert_string_equal(text, again);
    assert_int_equal(run("\"$PY\" scripts/pareto --mmp-speeds 11 -o '%s/p.csv' '%s/pcrop.pgm'",
                         dir, dir), 2);
    assert_non_null(strstr(cap_err, "speeds 0 to 10"));
}

static void test_results_page(void **state)
{
    (void)state;
    need_python();
    static const double bpp[] = {0.1, 0.25, 0.5, 1.0, 2.0};
    static const double db[] = {27.0, 30.5, 34.0, 38.2, 43.0};
    static const char *codec[] = {"mmp", "mmp-wavefront", "j2k"};
    static const double rate[] = {1.0, 0.5, 2.0};
    char p[512], text[8192], mmp[4096], anchors[4096];
    snprintf(p, sizeof p, "%s/rd", dir);
    mkdir(p, 0755);
    size_t km = (size_t)snprintf(mmp, sizeof mmp, "%s\n", SCHEMA);
    size_t ka = (size_t)snprintf(anchors, sizeof anchors, "%s\n", SCHEMA);
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 5; i++) {
            double b = bpp[i] * rate[c];
            char *t = c < 2 ? mmp : anchors;
            size_t *k = c < 2 ? &km : &ka;
            *k += (size_t)snprintf(t + *k, 4096 - *k, "alpha,64,64,%s,lambda=%d,%d,%.6f,%.4f,0.1,0.1\n",
                                   codec[c], i, (int)(b * 512), b, db[i]);
        }
    put("rd/rd-mmp.csv", mmp);
    put("rd/rd-anchors-local.csv", anchors);
    put("rd/rd-alpha.png", "");
    put("rd/time-mmp.png", "");
    const char *page = "# Results\n\nhand text stays\n\n"
                       "<!-- make rd: grey-bdrate begin -->\nan old table\n<!-- make rd: grey-bdrate end -->\n"
                       "between, by hand\n"
                       "<!-- make rd: grey-order begin -->\n<!-- make rd: grey-order end -->\n"
                       "<!-- make rd: grey-perceptual begin -->\n<!-- make rd: grey-perceptual end -->\n"
                       "<!-- make rd: grey-plots begin -->\nold plots\n<!-- make rd: grey-plots end -->\n"
                       "the end, by hand\n";
    put("page.md", page);
    assert_int_equal(run("\"$PY\" scripts/results-page --data '%s/rd' --page '%s/page.md' --set grey", dir, dir), 0);
    get("page.md", text, sizeof text);
    if (!strstr(text, "# Results\n\nhand text stays\n\n<!-- make rd: grey-bdrate begin -->\n| image | mmp | mmp-wavefront |") ||
        !strstr(text, "| **average** | **-50.00 %** | **-75.00 %** |\n<!-- make rd: grey-bdrate end -->\n"
                      "between, by hand\n<!-- make rd: grey-order begin -->\n") ||
        !strstr(text, "| **average** | **-50.00 %** | ") ||
        !strstr(text, "![alpha: PSNR against bits per pixel, every codec](rd/rd-alpha.png)") ||
        /* CSVs without the perceptual columns, and no AVIF: no table, one line */
        !strstr(text, "<!-- make rd: grey-perceptual begin -->\nNothing to show: bdrate: ") ||
        !strstr(text, "[mmp](rd/time-mmp.png).\n<!-- make rd: grey-plots end -->\nthe end, by hand\n") ||
        strstr(text, "an old table") || strstr(text, "old plots"))
        fail_msg("unexpected page:\n%s", text);
    assert_int_equal(run("\"$PY\" scripts/results-page --data '%s/rd' --page '%s/page.md' --set grey --check",
                         dir, dir), 0);
    /* the data moved: --check names the sections that differ */
    for (size_t i = 0; anchors[i]; i++)
        if (!strncmp(anchors + i, ",j2k,", 5))
            anchors[i + 1] = 'J';
    put("rd/rd-anchors-local.csv", anchors);
    assert_int_equal(run("\"$PY\" scripts/results-page --data '%s/rd' --page '%s/page.md' --set grey --check",
                         dir, dir), 1);
    assert_non_null(strstr(cap_err, "section grey-bdrate"));
    assert_null(strstr(cap_err, "section grey-order"));
    /* no colour sections in the page: refused, the page left as it was */
    char before[8192];
    get("page.md", before, sizeof before);
    assert_int_equal(run("\"$PY\" scripts/results-page --data '%s/rd' --page '%s/page.md' --set colour", dir, dir), 1);
    assert_non_null(strstr(cap_err, "no section colour-bdrate"));
    get("page.md", text, sizeof text);
    assert_string_equal(text, before);
    /* a page that does not exist is made with every section; no JPEG 2000
     * rows now, and no colour CSV: each such section says so in one line */
    assert_int_equal(run("\"$PY\" scripts/results-page --data '%s/rd' --page '%s/new/results.md'", dir, dir), 0);
    assert_non_null(strstr(cap_err, "warning: grey-bdrate"));
    assert_non_null(strstr(cap_err, "warning: colour-bdrate"));
    get("new/results.md", text, sizeof text);
    if (!strstr(text, "<!-- make rd: grey-order begin -->\n| image | BD-rate mmp-wavefront vs mmp |") ||
        !strstr(text, "<!-- make rd: grey-bdrate begin -->\nNothing to show: ") ||
        !strstr(text, "<!-- make rd: colour-plots begin -->\nNothing to show: ") ||
        !strstr(text, "](../rd/rd-alpha.png)"))
        fail_msg("unexpected new page:\n%s", text);
}

/* ------------------------------------------------------------------ main */

static int group_setup(void **state)
{
    (void)state;
    bin = getenv("MMP_BIN");
    if (bin && !*bin)
        bin = NULL;
    snprintf(dir, sizeof dir, "/tmp/mmp-scripts.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    /* the interpreter itself, not a wrapper that needs PATH (pyenv shims) */
    FILE *p = popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
    python[0] = 0;
    if (p) {
        if (!fgets(python, sizeof python, p))
            python[0] = 0;
        pclose(p);
    }
    python[strcspn(python, "\r\n")] = 0;
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bdrate_identical),
        cmocka_unit_test(test_bdrate_half_rate),
        cmocka_unit_test(test_bdrate_no_overlap),
        cmocka_unit_test(test_bdrate_table),
        cmocka_unit_test(test_rdsweep_row),
        cmocka_unit_test(test_rdsweep_errors),
        cmocka_unit_test(test_compare_jpeg),
        cmocka_unit_test(test_compare_lossless),
        cmocka_unit_test(test_compare_missing_tool),
        cmocka_unit_test(test_colour_psnr),
        cmocka_unit_test(test_compare_colour_jpeg),
        cmocka_unit_test(test_rdsweep_kinds),
        cmocka_unit_test(test_bdrate_colour),
        cmocka_unit_test(test_decode_bench),
        cmocka_unit_test(test_bench_speeds),
        cmocka_unit_test(test_pareto),
        cmocka_unit_test(test_results_page),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
