/*
 * Tests of the command-line tools bin/mmp-enc and bin/mmp-dec, run as
 * separate processes from $MMP_BIN (make check sets it; the tests skip
 * without it). Every run happens in a private mkdtemp directory with stdout
 * and stderr captured to files beside it.
 *
 * For every bad input or option: the exit status is 1 (runtime failure) or
 * 2 (usage error), stderr is exactly one line "PROG: reason" that names the
 * problem, stdout is empty, and the working directory holds no new file,
 * neither the output nor a temporary OUT.tmp* left by the atomic writer.
 */
#include <dirent.h>
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

#include "common/container.h"
#include "common/error.h"
#include "mmp/cli/pgm.h"
#include "mmp/mmp.h"

static const char *bin;          /* $MMP_BIN */
static char root[64];            /* mkdtemp directory: captures live here */
static char work[96];            /* root/w: the commands' working directory */
static char out_path[128], err_path[128];
static char cap_out[4096], cap_err[4096];
static uint8_t *good_mmp;        /* a valid .mmp of in.pgm, from the library */
static size_t good_len;

/* ---------------------------------------------------------------- helpers */

static void need_bin(void)
{
    if (!bin) {
        print_message("MMP_BIN is not set (make check sets it to bin/): skipping CLI tests\n");
        skip();
    }
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1024, n = 0, got;
    uint8_t *b = malloc(cap);
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[n < cap ? n : cap - 1] = 0;
    *len = n;
    return b;
}

static void wpath(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", work, name); }

static void put_file(const char *name, const void *data, size_t len)
{
    char p[256];
    wpath(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int exists(const char *name)
{
    char p[256];
    struct stat sb;
    wpath(p, sizeof p, name);
    return stat(p, &sb) == 0;
}

/* Number of entries in the working directory; whether one starts with
 * `prefix` (the output, or its temporary OUT.tmpXXXXXX). */
static int dir_scan(const char *prefix, int *has_prefix)
{
    DIR *d = opendir(work);
    assert_non_null(d);
    int n = 0;
    *has_prefix = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        if (prefix && !strncmp(e->d_name, prefix, strlen(prefix)))
            *has_prefix = 1;
    }
    closedir(d);
    return n;
}

/* Run `sh -c CMD` in the working directory; ENC and DEC in CMD stand for
 * the binaries (quoted). Returns the exit status; stdout and stderr are in
 * cap_out and cap_err. */
static int run(const char *fmt, ...)
{
    char cmd[2048], full[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full,
             "cd '%s' && ENC='%s/mmp-enc' && DEC='%s/mmp-dec' && (%s) >'%s' 2>'%s' </dev/null",
             work, bin, bin, cmd, out_path, err_path);
    /* Let the shell expand $ENC and $DEC. */
    int st = system(full);
    assert_true(st != -1);
    if (!WIFEXITED(st))
        fail_msg("'%s' did not exit normally (status %#x)", cmd, st);
    size_t n;
    uint8_t *b = slurp(out_path, &n);
    snprintf(cap_out, sizeof cap_out, "%s", b ? (char *)b : "");
    free(b);
    b = slurp(err_path, &n);
    snprintf(cap_err, sizeof cap_err, "%s", b ? (char *)b : "");
    free(b);
    return WEXITSTATUS(st);
}

/*
 * Run a command that must fail with `status`, one line on stderr starting
 * with `prog` and containing `needle`, nothing on stdout, and no file left
 * whose name starts with `outprefix`, nor any new file at all.
 */
static void expect_fail(int status, const char *prog, const char *needle, const char *outprefix,
                        const char *cmd)
{
    int had;
    int before = dir_scan(outprefix, &had);
    int st = run("%s", cmd);
    if (st != status)
        fail_msg("'%s': exit %d, want %d (stderr: %s)", cmd, st, status, cap_err);
    size_t len = strlen(cap_err);
    char *nl = strchr(cap_err, '\n');
    if (len == 0 || !nl || nl != cap_err + len - 1)
        fail_msg("'%s': stderr is not exactly one line: '%s'", cmd, cap_err);
    if (strncmp(cap_err, prog, strlen(prog)) || strncmp(cap_err + strlen(prog), ": ", 2))
        fail_msg("'%s': stderr does not start with '%s: ': %s", cmd, prog, cap_err);
    if (!strstr(cap_err, needle))
        fail_msg("'%s': stderr does not mention '%s': %s", cmd, needle, cap_err);
    if (cap_out[0])
        fail_msg("'%s': unexpected stdout: %s", cmd, cap_out);
    int has;
    int after = dir_scan(outprefix, &has);
    if (has && !had)
        fail_msg("'%s': left a file starting with '%s' behind", cmd, outprefix);
    if (after != before)
        fail_msg("'%s': %d files in the directory before, %d after", cmd, before, after);
}

static void assert_same_files(const char *a, const char *b)
{
    char pa[256], pb[256];
    size_t la, lb;
    wpath(pa, sizeof pa, a);
    wpath(pb, sizeof pb, b);
    uint8_t *da = slurp(pa, &la), *db = slurp(pb, &lb);
    if (!da || !db)
        fail_msg("cannot read %s or %s", a, b);
    if (la != lb || memcmp(da, db, la))
        fail_msg("%s (%zu bytes) and %s (%zu bytes) differ", a, la, b, lb);
    free(da);
    free(db);
}

/* ------------------------------------------------------ setup, teardown */

/* The input: a 40x24 crop of camera.pgm, or a gradient when the images are
 * not at hand (the CLI tests need no particular content). */
static void make_input(mmp_image *c)
{
    mmp_image img = {0};
    char path[512], err[256];
    const char *dir = getenv("MMP_IMAGES");
    snprintf(path, sizeof path, "%s/camera.pgm", dir && *dir ? dir : "images");
    assert_int_equal(mmp_image_alloc(c, 40, 24, 255), MMP_OK);
    if (mmp_pgm_read_path(path, &img, err, sizeof err) == 0) {
        for (int y = 0; y < 24; y++)
            for (int x = 0; x < 40; x++)
                c->pix[y * 40 + x] = img.pix[(size_t)(240 + y) * img.width + 230 + x];
        mmp_image_free(&img);
    } else {
        for (int i = 0; i < 40 * 24; i++)
            c->pix[i] = (uint16_t)((i % 40) * 5 + (i / 40) * 2 + (i * 7919 % 13));
    }
}

static int group_setup(void **state)
{
    (void)state;
    bin = getenv("MMP_BIN");
    if (bin && !*bin)
        bin = NULL;
    snprintf(root, sizeof root, "/tmp/mmp-cli-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(work, sizeof work, "%s/w", root);
    snprintf(out_path, sizeof out_path, "%s/stdout", root);
    snprintf(err_path, sizeof err_path, "%s/stderr", root);
    if (mkdir(work, 0755))
        return -1;
    mmp_image c;
    make_input(&c);
    char p[256];
    wpath(p, sizeof p, "in.pgm");
    FILE *f = fopen(p, "wb");
    if (!f || mmp_pgm_write(f, &c) || fclose(f))
        return -1;
    mmp_settings s;
    mmp_default_settings(&s);
    int e = mmp_encode(&s, &c, &good_mmp, &good_len, NULL, NULL, NULL, 0);
    mmp_image_free(&c);
    return e;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[256];
    free(good_mmp);
    /* Our own mkdtemp directory, nothing else. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------- mmp-enc */

static void test_enc_bad_inputs(void **state)
{
    (void)state;
    need_bin();
    static const char txt[] = "this is not an image\n";
    static const char huge[] = "P5\n100000 100000\n255\n";
    put_file("text.pgm", txt, sizeof txt - 1);
    put_file("empty.pgm", "", 0);
    put_file("huge.pgm", huge, sizeof huge - 1);
    /* A header, then half of the 40x24 samples. */
    static const char hdr[] = "P5\n40 24\n255\n";
    uint8_t trunc[sizeof hdr - 1 + 480];
    memcpy(trunc, hdr, sizeof hdr - 1);
    memset(trunc + sizeof hdr - 1, 100, 480);
    put_file("trunc.pgm", trunc, sizeof trunc);
    /* A valid 4x4 PPM. */
    uint8_t ppm[11 + 48];
    memcpy(ppm, "P6\n4 4\n255\n", 11);
    memset(ppm + 11, 77, 48);
    put_file("colour.ppm", ppm, sizeof ppm);

    expect_fail(1, "mmp-enc", "nosuch.pgm", "OUT", "$ENC -q nosuch.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "not a PGM", "OUT", "$ENC -q text.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "empty", "OUT", "$ENC -q empty.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "truncated", "OUT", "$ENC -q trunc.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "P6", "OUT", "$ENC -q colour.ppm OUT.mmp");
    expect_fail(1, "mmp-enc", "too large", "OUT", "$ENC -q huge.pgm OUT.mmp");
    /* The same through stdin, and with --recon: neither output appears. */
    expect_fail(1, "mmp-enc", "truncated", "OUT", "$ENC -q - OUT.mmp < trunc.pgm");
    expect_fail(1, "mmp-enc", "empty", "OUT", "$ENC -q --recon OUT.pgm - OUT.mmp < empty.pgm");
}

static void test_enc_bad_options(void **state)
{
    (void)state;
    need_bin();
    expect_fail(2, "mmp-enc", "lambda", "OUT", "$ENC -l abc in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "lambda", "OUT", "$ENC -l -5 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "lambda", "OUT", "$ENC --lambda=nan in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "lambda", "OUT", "$ENC -l 1000001 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "dictionary", "OUT", "$ENC -d 10 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "dictionary", "OUT", "$ENC -d 99999 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "thread", "OUT", "$ENC -t -1 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "nosuch", "OUT", "$ENC -e nosuch in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "--bogus", "OUT", "$ENC --bogus in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "-x", "OUT", "$ENC -x in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "-l", "OUT", "$ENC in.pgm OUT.mmp -l");
    expect_fail(2, "mmp-enc", "expected", "OUT", "$ENC");
    expect_fail(2, "mmp-enc", "expected", "OUT", "$ENC in.pgm");
    expect_fail(2, "mmp-enc", "expected", "OUT", "$ENC in.pgm OUT.mmp extra");
}

/* ------------------------------------------------------------- mmp-dec */

static void test_dec_bad_inputs(void **state)
{
    (void)state;
    need_bin();
    uint8_t *b = malloc(good_len + 8);
    assert_non_null(b);

    expect_fail(1, "mmp-dec", "nosuch.mmp", "OUT", "$DEC nosuch.mmp -o OUT.pgm");
    put_file("empty.mmp", "", 0);
    expect_fail(1, "mmp-dec", "truncated", "OUT", "$DEC empty.mmp -o OUT.pgm");
    /* Without -o the output would be empty.pgm: it must not appear. */
    expect_fail(1, "mmp-dec", "truncated", "empty.pgm", "$DEC empty.mmp");
    memcpy(b, good_mmp, good_len);
    memcpy(b, "MMPx", 4);
    put_file("magic.mmp", b, good_len);
    expect_fail(1, "mmp-dec", "not an MMP file", "OUT", "$DEC magic.mmp -o OUT.pgm");

    const size_t cuts[] = {2, 20, MMP_HEADER_SIZE - 1, MMP_HEADER_SIZE, MMP_HEADER_SIZE + 1,
                           (MMP_HEADER_SIZE + good_len) / 2, good_len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        put_file("cut.mmp", good_mmp, cuts[i]);
        expect_fail(1, "mmp-dec", "truncated", "OUT", "$DEC cut.mmp -o OUT.pgm");
        expect_fail(1, "mmp-dec", "truncated", "cut.pgm", "$DEC cut.mmp");
    }

    /* A flipped bit in the informational lambda field and in the payload:
     * only the CRC can tell; in the width: the range check does. */
    const size_t flips[] = {29, MMP_HEADER_SIZE + 1, good_len - 1};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        memcpy(b, good_mmp, good_len);
        b[flips[i]] ^= 0x04;
        put_file("flip.mmp", b, good_len);
        expect_fail(1, "mmp-dec", "CRC", "OUT", "$DEC flip.mmp -o OUT.pgm");
    }
    memcpy(b, good_mmp, good_len);
    b[10] ^= 0x01; /* width 40 -> 65576 */
    put_file("flipw.mmp", b, good_len);
    expect_fail(1, "mmp-dec", "width", "OUT", "$DEC flipw.mmp -o OUT.pgm");

    memcpy(b, good_mmp, good_len);
    memcpy(b + good_len, "garbage!", 8);
    put_file("trail.mmp", b, good_len + 8);
    expect_fail(1, "mmp-dec", "trailing", "OUT", "$DEC trail.mmp -o OUT.pgm");
    /* The same on stdin and stdout: nothing at all is written. */
    expect_fail(1, "mmp-dec", "trailing", "OUT", "$DEC - < trail.mmp");

    expect_fail(2, "mmp-dec", "expected", "OUT", "$DEC");
    expect_fail(2, "mmp-dec", "expected", "OUT", "$DEC a.mmp b.mmp");
    expect_fail(2, "mmp-dec", "-o", "OUT", "$DEC trail.mmp -o");
    expect_fail(2, "mmp-dec", "--bogus", "OUT", "$DEC --bogus trail.mmp");
    free(b);
}

/* ---------------------------------------------------------- good paths */

static void test_good_paths(void **state)
{
    (void)state;
    need_bin();
    /* Every value option spelled out, at its default. */
    int st = run("$ENC -l 10 -e seq -t 1 -d 1024 --recon R.pgm --stats in.pgm OUT.mmp");
    if (st != 0)
        fail_msg("encode failed (%d): %s", st, cap_err);
    assert_string_equal(cap_err, "");
    /* One line: bytes=N bpp=X psnr=X seconds=X ... */
    char *nl = strchr(cap_out, '\n');
    assert_non_null(nl);
    assert_int_equal(nl[1], '\0');
    const char *keys[] = {"bytes=", "bpp=", "psnr=", "seconds="};
    for (int i = 0; i < 4; i++)
        if (!strstr(cap_out, keys[i]))
            fail_msg("--stats line lacks %s: %s", keys[i], cap_out);
    /* The stated size is the file's, and bpp follows from it. */
    unsigned long bytes = strtoul(strstr(cap_out, "bytes=") + 6, NULL, 10);
    double bpp = strtod(strstr(cap_out, "bpp=") + 4, NULL);
    char p[256];
    struct stat sb;
    wpath(p, sizeof p, "OUT.mmp");
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(bytes, (unsigned long)sb.st_size);
    assert_true(bpp > 0 && bpp * 40 * 24 / 8 > bytes - 0.01 && bpp * 40 * 24 / 8 < bytes + 0.01);
    /* The library gives the same file from the same image and settings. */
    assert_int_equal(sb.st_size, good_len);

    /* mmp-dec without -o writes OUT.pgm, equal to the encoder's recon. */
    st = run("$DEC OUT.mmp");
    if (st != 0)
        fail_msg("decode failed (%d): %s", st, cap_err);
    assert_string_equal(cap_err, "");
    assert_true(exists("OUT.pgm"));
    assert_same_files("OUT.pgm", "R.pgm");

    /* '-' for stdin and stdout. --stats with stdout taken goes to stderr,
     * so the .mmp on stdout stays clean. */
    st = run("cat in.pgm | $ENC --stats - - > x.mmp");
    if (st != 0)
        fail_msg("piped encode failed (%d): %s", st, cap_err);
    assert_non_null(strstr(cap_err, "bytes="));
    assert_same_files("x.mmp", "OUT.mmp");
    st = run("$DEC - < x.mmp > y.pgm");
    assert_int_equal(st, 0);
    assert_string_equal(cap_err, "");
    st = run("$DEC x.mmp -o x_dec.pgm");
    assert_int_equal(st, 0);
    assert_same_files("y.pgm", "x_dec.pgm");
    assert_same_files("y.pgm", "R.pgm");

    int has;
    dir_scan("OUT.mmp.tmp", &has);
    assert_false(has);
    dir_scan("OUT.pgm.tmp", &has);
    assert_false(has);
}

/* Every option of the usage text is listed by --help, which exits 0. */
static void check_help(const char *prog, const char *const *opts, size_t n)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "%s --help", prog);
    assert_int_equal(run("%s", cmd), 0);
    assert_string_equal(cap_err, "");
    assert_non_null(strstr(cap_out, "Usage:"));
    for (size_t i = 0; i < n; i++)
        if (!strstr(cap_out, opts[i]))
            fail_msg("%s does not mention %s", cmd, opts[i]);
    char first[4096];
    snprintf(first, sizeof first, "%s", cap_out);
    snprintf(cmd, sizeof cmd, "%s -h", prog);
    assert_int_equal(run("%s", cmd), 0);
    assert_string_equal(cap_out, first);

    snprintf(cmd, sizeof cmd, "%s --version", prog);
    assert_int_equal(run("%s", cmd), 0);
    assert_non_null(strstr(cap_out, MMP_VERSION_STRING));
    assert_string_equal(cap_err, "");
}

static void test_help_version(void **state)
{
    (void)state;
    need_bin();
    static const char *const enc_opts[] = {
        "-l, --lambda", "-e, --engine", "-t, --threads", "-d, --dict-size", "--recon",
        "--stats", "-v, --verbose", "-q, --quiet", "-h, --help", "--version", "seq"};
    static const char *const dec_opts[] = {"-o, --output", "--stats", "-v, --verbose",
                                           "-q, --quiet", "-h, --help", "--version"};
    check_help("$ENC", enc_opts, sizeof enc_opts / sizeof enc_opts[0]);
    check_help("$DEC", dec_opts, sizeof dec_opts / sizeof dec_opts[0]);
}

/* ------------------------------------------- outputs on failed commands */

static void assert_content(const char *name, const char *want)
{
    char p[256];
    size_t n;
    wpath(p, sizeof p, name);
    uint8_t *d = slurp(p, &n);
    assert_non_null(d);
    if (n != strlen(want) || memcmp(d, want, n))
        fail_msg("%s was changed by a failing command (%zu bytes now)", name, n);
    free(d);
}

static void test_existing_output_kept(void **state)
{
    (void)state;
    need_bin();
    put_file("OUT.mmp", "keep", 4);
    put_file("OUT.pgm", "keep", 4);
    static const char hdr[] = "P5\n40 24\n255\nshort";
    put_file("trunc.pgm", hdr, sizeof hdr - 1);
    put_file("bad.mmp", "MMPi", 4);
    /* The prefix OUT.mmp.tmp: OUT.mmp itself exists beforehand. */
    expect_fail(1, "mmp-enc", "truncated", "OUT.mmp.tmp", "$ENC -q trunc.pgm OUT.mmp");
    assert_content("OUT.mmp", "keep");
    expect_fail(2, "mmp-enc", "lambda", "OUT.mmp.tmp", "$ENC -l abc in.pgm OUT.mmp");
    assert_content("OUT.mmp", "keep");
    expect_fail(1, "mmp-dec", "truncated", "OUT.pgm.tmp", "$DEC bad.mmp -o OUT.pgm");
    assert_content("OUT.pgm", "keep");
}

/*
 * When the reconstruction cannot be written, the command fails (exit 1) and,
 * like every failing command, must leave no output behind. Writing the .mmp
 * first and the recon second would break that.
 */
static void test_enc_recon_failure(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "OUT.mmp");
    unlink(p);
    expect_fail(1, "mmp-enc", "nodir/R.pgm", "OUT.mmp", "$ENC -q --recon nodir/R.pgm in.pgm OUT.mmp");
}

/* A write error on stdout is a failure with one line, not a silent exit 0. */
static void test_stdout_write_error(void **state)
{
    (void)state;
    need_bin();
    struct stat sb;
    if (stat("/dev/full", &sb) != 0)
        skip();
    put_file("good.mmp", good_mmp, good_len);
    expect_fail(1, "mmp-enc", "standard output", "OUT", "$ENC -q in.pgm - >/dev/full");
    expect_fail(1, "mmp-dec", "standard output", "OUT", "$DEC good.mmp -o - >/dev/full");
}

/* Output files are created like any other tool's: mode 0666 less the umask
 * (mkstemp's private 0600 must not leak through the rename). */
static void test_output_mode(void **state)
{
    (void)state;
    need_bin();
    put_file("good.mmp", good_mmp, good_len);
    assert_int_equal(run("umask 022 && $ENC -q in.pgm OUT_mode.mmp && $DEC good.mmp -o OUT_mode.pgm"),
                     0);
    const char *names[] = {"OUT_mode.mmp", "OUT_mode.pgm"};
    for (int i = 0; i < 2; i++) {
        char p[256];
        struct stat sb;
        wpath(p, sizeof p, names[i]);
        assert_int_equal(stat(p, &sb), 0);
        if ((sb.st_mode & 0777) != 0644)
            fail_msg("%s has mode %03o under umask 022, want 644", names[i],
                     (unsigned)(sb.st_mode & 0777));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enc_bad_inputs),
        cmocka_unit_test(test_enc_bad_options),
        cmocka_unit_test(test_dec_bad_inputs),
        cmocka_unit_test(test_good_paths),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test(test_existing_output_kept),
        cmocka_unit_test(test_enc_recon_failure),
        cmocka_unit_test(test_stdout_write_error),
        cmocka_unit_test(test_output_mode),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
