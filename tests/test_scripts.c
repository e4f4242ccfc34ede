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
 *    PATH is skipped with a warning.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mmp/cli/imagefile.h"
#include "mmp/cli/pnm.h"
#include "mmp/mmp.h"
#include "util.h"

#define SCHEMA "image,width,height,codec,param,bytes,bpp,psnr,enc_seconds,dec_seconds"
#define NCOL 10

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
    char *line[256] = {0}, *f[NCOL + 1] = {0};
    get(name, text, sizeof text);
    int n = lines(text, line, 256);
    assert_true(n >= 1);
    assert_string_equal(line[0], SCHEMA);
    assert_int_equal(n - 1, rows);
    int match = 0;
    for (int i = 1; i < n; i++) {
        assert_int_equal(fields(line[i], f, NCOL), NCOL);
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
        cmocka_unit_test(test_compare_missing_tool),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
