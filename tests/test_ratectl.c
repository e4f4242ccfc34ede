/*
 * Rate control of mmp-enc (--target-bpp, --target-psnr, --max-bytes;
 * mmp/cli/ratectl.h), run as a separate process from $MMP_BIN on small
 * crops of camera.pgm (tests/cli_harness.h): the targets are reached
 * within their tolerances (3 % of a bpp, 0.05 dB of a PSNR, measured here
 * on the decoded file), a --max-bytes ceiling is never exceeded, the file
 * written is the one `mmp-enc -l LAMBDA` writes with the lambda printed,
 * targets out of reach fail cleanly (exit 1, one line naming the closest
 * value, no output), and bad or combined options are usage errors. The
 * searches run on the seq engine, the fastest here for such small images
 * on a busy machine; every engine writes the same bytes (test_engines.c).
 */
#include <math.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cli_harness.h"
#include "mmp/mmp.h"

/* The crop of the rate tests: camera at (200,200), 48 x 48. */
#define CW 48
#define CH 48
static mmp_image crop_img;
/* A 24 x 24 part of it with noise: no lambda codes it near losslessly. */
static mmp_image noisy_img;

/* Writes c.pgm (and n.pgm, the noisy crop) into the working directory;
 * skips the test without the images. */
static void put_crops(void)
{
    need_bin();
    if (!crop_img.pix) {
        if (load_crop("camera", 200, 200, CW, CH, &crop_img)) {
            print_message("camera.pgm not found: skipping\n");
            skip();
        }
        assert_int_equal(mmp_image_alloc(&noisy_img, 24, 24, 255), MMP_OK);
        uint32_t x = 12345;
        for (int i = 0; i < 24 * 24; i++) {
            x = x * 1103515245u + 12345u;
            const int v = crop_img.pix[(i / 24) * CW + i % 24] + (int)((x >> 16) % 81) - 40;
            noisy_img.pix[i] = (uint16_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    char p[256];
    wpath(p, sizeof p, "c.pgm");
    assert_int_equal(cli_write_pgm(p, &crop_img), 0);
    wpath(p, sizeof p, "n.pgm");
    assert_int_equal(cli_write_pgm(p, &noisy_img), 0);
}

/* The value of key= in the --stats line `line`. */
static double stat_num(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    if (!p)
        fail_msg("no %s in the --stats line: %s", key, line);
    return strtod(p + strlen(key), NULL);
}

/* The text of key= (up to a space) into buf. */
static const char *stat_text(const char *line, const char *key, char *buf, size_t n)
{
    const char *p = strstr(line, key);
    if (!p)
        fail_msg("no %s in the --stats line: %s", key, line);
    p += strlen(key);
    snprintf(buf, n, "%.*s", (int)strcspn(p, " \n"), p);
    return buf;
}

/* The size of `name` in the working directory; -1 when it is not there. */
static long file_size(const char *name)
{
    struct stat sb;
    return look(name, &sb) ? -1 : (long)sb.st_size;
}

/* PSNR of the decoded `name` against img, decoded here (not the
 * encoder's word for it). */
static double decoded_psnr(const char *name, const mmp_image *img)
{
    char p[256];
    size_t n;
    wpath(p, sizeof p, name);
    uint8_t *d = slurp(p, &n);
    if (!d)
        fail_msg("cannot read %s", name);
    mmp_image out = {0};
    assert_int_equal(mmp_decode(d, n, &out, NULL, 0), MMP_OK);
    free(d);
    const double psnr = mmp_psnr(img, &out);
    mmp_image_free(&out);
    return psnr;
}

/* A probe as -v prints it. */
typedef struct probe {
    char lambda[48];
    long bytes;
    double bpp, psnr;
    int filter_off; /* a probe of the second search (step 5 of mmp/cli/ratectl.h) */
} probe;

/* The probes of the last run_target. */
static probe last_probes[12];
static int last_nprobes;

/* The probes printed by -v in cap_err; returns how many. */
static int parse_probes(probe *p, int max)
{
    int n = 0;
    for (const char *at = cap_err; (at = strstr(at, "mmp-enc: probe ")) != NULL; at++) {
        int k;
        probe q;
        if (sscanf(at, "mmp-enc: probe %d: lambda %47[^:]: %ld bytes, %lf bpp, PSNR %lf dB", &k,
                   q.lambda, &q.bytes, &q.bpp, &q.psnr) != 5)
            fail_msg("cannot read the probe line at: %.120s", at);
        if (k != n + 1 || n >= max)
            fail_msg("probe %d out of order or too many: %s", k, cap_err);
        const char *eol = strchr(at, '\n'), *off = strstr(at, ", filter off,");
        q.filter_off = off && (!eol || off < eol);
        p[n++] = q;
    }
    return n;
}

/* The chosen probe c is the best of the n by the rule of the target
 * (mmp/cli/ratectl.h), not merely one within tolerance. */
static void check_best(const char *option, const probe *p, int n, const probe *c)
{
    double t;
    char what[16];
    if (sscanf(option, "--%15s %lf", what, &t) != 2)
        fail_msg("cannot read the option %s", option);
    for (int i = 0; i < n; i++) {
        const probe *q = &p[i];
        int better = 0;
        if (!strcmp(what, "max-bytes")) {
            better = q->bytes <= t && q->bytes > c->bytes;
        } else if (!strcmp(what, "target-bpp")) {
            const int qin = fabs(q->bpp - t) <= 0.03 * t, cin = fabs(c->bpp - t) <= 0.03 * t;
            const int qu = q->bpp <= t, cu = c->bpp <= t;
            better = qin && (!cin || (qu && !cu) ||
                             (qu == cu && fabs(q->bpp - t) < fabs(c->bpp - t) - 1e-9));
        } else {
            const int qin = fabs(q->psnr - t) <= 0.05, cin = fabs(c->psnr - t) <= 0.05;
            const int qok = q->psnr >= t - 0.05;
            better = qok && ((qin && !cin) ||
                             (qin == cin && (q->bytes < c->bytes ||
                                             (q->bytes == c->bytes && q->psnr > c->psnr + 1e-9))));
        }
        if (better)
            fail_msg("%s kept lambda %s (%ld bytes, %.4f bpp, %.4f dB) but probe %d, lambda %s "
                     "(%ld bytes, %.4f bpp, %.4f dB), is better",
                     option, c->lambda, c->bytes, c->bpp, c->psnr, i + 1, q->lambda, q->bytes,
                     q->bpp, q->psnr);
    }
}

/*
 * Runs `mmp-enc -v --stats OPTION c.pgm OUT` (OPTION: "--target-bpp 0.5"
 * ...) and checks what every successful search must give: exit 0; on stderr
 * one "probe N:" line per probe and the line "mmp-enc: lambda L chosen";
 * the --stats line's bytes the file's; and the file is the one `-l L`
 * writes. Leaves the --stats line in `line`; returns the file's bytes.
 */
/* The searches whose targets must be reached run the exhaustive search
 * (speed 0): on a 48 x 48 crop the measure jumps by tenths of a dB and
 * several percent of rate between neighbouring lambdas, and the targets
 * below were chosen where speed 0 reaches them (the presets change where
 * the jumps fall: at the default speed 1, 0.5 bpp lies in a jump from
 * 0.5417 to 0.4826 bpp). Rate control probes at the speed given, so the
 * search is the same at every speed; the other tests run at the default. */
#define SEARCH "--speed 0"

static long run_target(const char *option, const char *in, const char *out, char *line, size_t n)
{
    if (n < sizeof cap_out)
        fail_msg("run_target: line too short");
    const int st = run("$ENC -e seq " SEARCH " -v --stats %s %s %s", option, in, out);
    if (st != 0)
        fail_msg("'%s': exit %d: %s", option, st, cap_err);
    snprintf(line, n, "%s", cap_out);
    const long bytes = file_size(out);
    assert_true(bytes > 0);
    if ((long)stat_num(line, "bytes=") != bytes)
        fail_msg("'%s': --stats says %s but the file has %ld bytes", option, line, bytes);
    const int probes = (int)stat_num(line, "probes=");
    assert_true(probes >= 1 && probes <= 12);
    char want[160], lam[48];
    snprintf(want, sizeof want, "mmp-enc: probe %d: ", probes);
    if (!strstr(cap_err, want))
        fail_msg("'%s': -v lacks '%s': %s", option, want, cap_err);
    snprintf(want, sizeof want, "mmp-enc: probe %d: ", probes + 1);
    if (strstr(cap_err, want))
        fail_msg("'%s': more probe lines than probes=%d: %s", option, probes, cap_err);
    stat_text(line, "lambda=", lam, sizeof lam);
    /* The file kept is the best probe's. */
    probe pr[12];
    const int np = parse_probes(pr, 12);
    assert_int_equal(np, probes);
    memcpy(last_probes, pr, sizeof(probe) * (size_t)np);
    last_nprobes = np;
    const probe *chosen = NULL;
    for (int i = 0; i < np; i++)
        if (!strcmp(pr[i].lambda, lam) && pr[i].bytes == bytes)
            chosen = &pr[i];
    if (!chosen || chosen->bytes != bytes)
        fail_msg("'%s': lambda %s (%ld bytes) is not among the probes: %s", option, lam, bytes,
                 cap_err);
    check_best(option, pr, np, chosen);
    /* Step 5 of the search may have kept a probe without the restoration
     * filter: the line says so, and so must the plain encode below. */
    snprintf(want, sizeof want, "mmp-enc: lambda %s chosen (%s)", lam, option);
    char want_off[160];
    snprintf(want_off, sizeof want_off, "mmp-enc: lambda %s --filter off chosen (%s)", lam,
             option);
    const int off = strstr(cap_err, want_off) != NULL;
    if (!off && !strstr(cap_err, want))
        fail_msg("'%s': stderr lacks '%s': %s", option, want, cap_err);
    /* The same bytes from a plain encode at the lambda printed. */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "$ENC --quiet -e seq " SEARCH " -l %s%s %s L.mmp", lam,
             off ? " --filter off" : "",
             in);
    expect_ok(cmd);
    char a[256], b[256];
    size_t la, lb;
    wpath(a, sizeof a, out);
    wpath(b, sizeof b, "L.mmp");
    uint8_t *da = slurp(a, &la), *db = slurp(b, &lb);
    assert_non_null(da);
    assert_non_null(db);
    if (la != lb || memcmp(da, db, la))
        fail_msg("'%s' wrote %zu bytes, -l %s %zu bytes: not the same file", option, la, lam, lb);
    free(da);
    free(db);
    return bytes;
}

/* --target-bpp: within 3 % of the target. */
static void test_target_bpp(void **state)
{
    (void)state;
    put_crops();
    static const double targets[] = {0.5, 2.0};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        char opt[64], line[sizeof cap_out];
        snprintf(opt, sizeof opt, "--target-bpp %g", targets[i]);
        const long bytes = run_target(opt, "c.pgm", "B.mmp", line, sizeof line);
        const double bpp = 8.0 * bytes / (CW * CH);
        print_message("%s: %ld bytes, %.4f bpp: %s", opt, bytes, bpp, line);
        if (fabs(bpp - targets[i]) > 0.03 * targets[i])
            fail_msg("%s gave %.4f bpp, not within 3 %%", opt, bpp);
        assert_true(fabs(stat_num(line, "bpp=") - bpp) < 1e-5);
    }
}

/*
 * A PSNR target that the last run_target missed must lie in a jump of the
 * measure: two of its probes of the same search, whose lambdas differ by
 * less than 0.25 % (where the search stops, mmp/cli/ratectl.h step 4),
 * fall on either side of the tolerance band. On small crops the
 * dictionary's adaptation makes PSNR jump by tenths of a dB between
 * neighbouring lambdas, and where a target falls depends on the encoder;
 * a search that gave up early on a reachable target still fails here.
 */
static void check_psnr_missed(const char *option, double target, double got)
{
    for (int i = 0; i < last_nprobes; i++)
        for (int j = 0; j < last_nprobes; j++) {
            const probe *a = &last_probes[i], *b = &last_probes[j];
            const double la = strtod(a->lambda, NULL), lb = strtod(b->lambda, NULL);
            if (a->filter_off == b->filter_off && la < lb && (lb - la) < 0.0025 * la &&
                a->psnr > target + 0.05 && b->psnr < target - 0.05) {
                print_message("%s: %.4f dB; the target lies in a jump from %.4f dB at lambda %s "
                              "to %.4f dB at lambda %s\n",
                              option, got, a->psnr, a->lambda, b->psnr, b->lambda);
                return;
            }
        }
    fail_msg("%s gave %.4f dB, not within 0.05 dB, and no jump of the measure across it",
             option, got);
}

/* --target-psnr: within 0.05 dB of the target, measured on the decoded
 * file. */
static void test_target_psnr(void **state)
{
    (void)state;
    put_crops();
    static const double targets[] = {32.0, 40.0};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        char opt[64], line[sizeof cap_out];
        snprintf(opt, sizeof opt, "--target-psnr %g", targets[i]);
        const long bytes = run_target(opt, "c.pgm", "P.mmp", line, sizeof line);
        const double psnr = decoded_psnr("P.mmp", &crop_img);
        print_message("%s: %ld bytes, %.4f dB: %s", opt, bytes, psnr, line);
        if (fabs(psnr - targets[i]) > 0.05)
            check_psnr_missed(opt, targets[i], psnr);
        assert_true(fabs(stat_num(line, "psnr=") - psnr) < 1e-3);
    }
}

/* --max-bytes: never more than N; close below it; a ceiling above the
 * largest file gives lambda 0. */
static void test_max_bytes(void **state)
{
    (void)state;
    put_crops();
    static const long ceilings[] = {150};
    for (size_t i = 0; i < sizeof ceilings / sizeof ceilings[0]; i++) {
        char opt[64], line[sizeof cap_out];
        snprintf(opt, sizeof opt, "--max-bytes %ld", ceilings[i]);
        const long bytes = run_target(opt, "c.pgm", "M.mmp", line, sizeof line);
        print_message("%s: %ld bytes: %s", opt, bytes, line);
        if (bytes > ceilings[i])
            fail_msg("%s wrote %ld bytes", opt, bytes);
        if (bytes < 0.9 * ceilings[i])
            fail_msg("%s wrote only %ld bytes", opt, bytes);
    }
    char line[sizeof cap_out], lam[32];
    const long bytes = run_target("--max-bytes 100000", "c.pgm", "M.mmp", line, sizeof line);
    assert_string_equal(stat_text(line, "lambda=", lam, sizeof lam), "0");
    assert_true(bytes <= 100000);
}

/* A PSNR below what lambda 1000000 gives: the smallest file, the one of
 * the higher PSNR among those of its size (the search ends at lambda
 * 1000000, which is not the best probe here). */
static void test_psnr_below_range(void **state)
{
    (void)state;
    put_crops();
    char line[sizeof cap_out];
    run_target("--target-psnr 5", "c.pgm", "P.mmp", line, sizeof line);
    print_message("--target-psnr 5: %s", line);
}

/*
 * Targets just outside the tolerance of the first probe (lambda 10, the
 * search's start): 3.5 % above a bpp, 0.06 dB below a PSNR, one byte more
 * than a ceiling. The search must go on and end within tolerance; a search
 * whose tolerance is a little too wide stops at once, off target.
 */
static void test_tolerance_edges(void **state)
{
    (void)state;
    put_crops();
    expect_ok("$ENC --quiet -e seq " SEARCH " --stats -l 10 c.pgm T.mmp");
    const double bpp10 = stat_num(cap_out, "bpp="), psnr10 = stat_num(cap_out, "psnr=");
    const long bytes10 = (long)stat_num(cap_out, "bytes=");
    char opt[64], line[sizeof cap_out];
    snprintf(opt, sizeof opt, "--target-bpp %g", bpp10 / 1.035);
    const double tb = strtod(opt + 13, NULL);
    long bytes = run_target(opt, "c.pgm", "B.mmp", line, sizeof line);
    print_message("%s: %s", opt, line);
    if (fabs(8.0 * bytes / (CW * CH) - tb) > 0.03 * tb)
        fail_msg("%s gave %ld bytes, not within 3 %%", opt, bytes);
    snprintf(opt, sizeof opt, "--target-psnr %g", psnr10 - 0.06);
    const double tp = strtod(opt + 14, NULL);
    bytes = run_target(opt, "c.pgm", "P.mmp", line, sizeof line);
    print_message("%s: %s", opt, line);
    const double psnr = decoded_psnr("P.mmp", &crop_img);
    if (fabs(psnr - tp) > 0.05)
        check_psnr_missed(opt, tp, psnr);
    snprintf(opt, sizeof opt, "--max-bytes %ld", bytes10 - 1);
    bytes = run_target(opt, "c.pgm", "M.mmp", line, sizeof line);
    print_message("%s: %s", opt, line);
    if (bytes > bytes10 - 1)
        fail_msg("%s wrote %ld bytes", opt, bytes);
}

/* Targets out of reach: exit 1, one line naming the closest value reached,
 * nothing written (the harness's expect_fail), also without --quiet. */
static void test_unreachable(void **state)
{
    (void)state;
    put_crops();
    /* Smaller than the header. */
    expect_fail(1, "mmp-enc", "--max-bytes 40 cannot be met", "lambda",
                "$ENC -e seq --max-bytes 40 c.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "--target-bpp 0.0001 cannot be reached", "bpp",
                "$ENC -e seq --target-bpp 0.0001 c.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "--target-psnr 99 cannot be reached", " dB) is still too low",
                "$ENC -e seq --target-psnr 99 n.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "--target-bpp 60 cannot be reached", "still too small",
                "$ENC -e seq --quiet --target-bpp 60 n.pgm OUT.mmp");
    /* The same on stdout: nothing at all written. */
    expect_fail(1, "mmp-enc", "--max-bytes 40", NULL, "$ENC -e seq --max-bytes 40 c.pgm -");
}

/* One target at a time, not with -l; values checked. */
static void test_usage(void **state)
{
    (void)state;
    put_crops();
    expect_fail(2, "mmp-enc", "at most one", NULL,
                "$ENC --target-bpp 1 --max-bytes 300 c.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "at most one", NULL,
                "$ENC --target-psnr 30 --target-psnr 31 c.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "-l cannot be combined", NULL,
                "$ENC -l 10 --target-psnr 30 c.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "-l cannot be combined", NULL,
                "$ENC --max-bytes 300 -l 10 c.pgm OUT.mmp");
    static const char *const bad[] = {"--target-bpp 0",    "--target-bpp -1", "--target-bpp abc",
                                      "--target-bpp 65",   "--target-psnr 0", "--target-psnr x",
                                      "--target-psnr inf", "--max-bytes 0",   "--max-bytes 1.5",
                                      "--max-bytes -3",    "--target-bpp nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[128], opt[32];
        snprintf(cmd, sizeof cmd, "$ENC %s c.pgm OUT.mmp", bad[i]);
        snprintf(opt, sizeof opt, "%.*s", (int)strcspn(bad[i], " "), bad[i]);
        expect_fail(2, "mmp-enc", "invalid", opt, cmd);
    }
    expect_fail(2, "mmp-enc", "needs a value", NULL, "$ENC c.pgm OUT.mmp --max-bytes");
    /* --help names them. */
    assert_int_equal(run("$ENC --help"), 0);
    static const char *const opts[] = {"--target-bpp X", "--target-psnr Y", "--max-bytes N"};
    for (int i = 0; i < 3; i++)
        if (!strstr(cap_out, opts[i]))
            fail_msg("--help lacks %s", opts[i]);
}

/* --quiet: no line on stderr; --recon is the chosen probe's reconstruction;
 * --stats goes to stderr when the output is stdout. */
static void test_quiet_recon_stdout(void **state)
{
    (void)state;
    put_crops();
    expect_ok("$ENC --quiet -e seq --target-bpp 1 --recon R.pgm c.pgm Q.mmp");
    expect_ok("$DEC --quiet Q.mmp -o D.pgm");
    char a[256], b[256];
    size_t la, lb;
    wpath(a, sizeof a, "R.pgm");
    wpath(b, sizeof b, "D.pgm");
    uint8_t *da = slurp(a, &la), *db = slurp(b, &lb);
    assert_non_null(da);
    assert_non_null(db);
    assert_true(la == lb && memcmp(da, db, la) == 0);
    free(da);
    free(db);
    const int st = run("$ENC --quiet -e seq --stats --target-bpp 1 c.pgm - > S.mmp");
    assert_int_equal(st, 0);
    assert_non_null(strstr(cap_err, "probes="));
    assert_string_equal(cap_out, "");
    assert_int_equal(file_size("S.mmp"), file_size("Q.mmp"));
}

static int group_teardown(void **state)
{
    mmp_image_free(&crop_img);
    mmp_image_free(&noisy_img);
    return cli_group_teardown(state);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, cli_test_setup)
    const struct CMUnitTest tests[] = {
        T(test_target_bpp),      T(test_target_psnr),        T(test_max_bytes),
        T(test_tolerance_edges), T(test_psnr_below_range),   T(test_unreachable),
        T(test_usage),           T(test_quiet_recon_stdout),
    };
#undef T
    return cmocka_run_group_tests(tests, cli_group_setup, group_teardown);
}
