/*
 * The conventions mmp-enc and mmp-dec share with cwebp, avifenc and cjxl:
 * -q as quality (mmp_set_quality's table, stated alike in mmp.h, --help-all
 * and the manual page; tests/test_quality.c tests the library's side),
 * --quiet, mmp-enc's -o, and output names whose extension names a format
 * the tool cannot write refused before anything is read. Run as
 * tests/test_cli.c runs the programs (tests/cli_harness.h), from the
 * repository's root.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mmp/mmp.h"
#include "cli_harness.h"
#include "quality_pairs.h"

/* ---------------------------------------------------------- the table */

static void assert_same_table(const quality_pairs *a, const char *a_what, const quality_pairs *b,
                              const char *b_what)
{
    if (a->n != b->n)
        fail_msg("%s has %d points, %s %d", a_what, a->n, b_what, b->n);
    for (int i = 0; i < a->n; i++)
        if (a->q[i] != b->q[i] || a->lambda[i] != b->lambda[i])
            fail_msg("point %d: %s says %g:%g, %s %g:%g", i, a_what, a->q[i], a->lambda[i],
                     b_what, b->q[i], b->lambda[i]);
}

/* --help-all and mmp-enc.1 state mmp.h's table (tests/test_quality.c
 * holds the library to it). */
static void test_quality_table_stated(void **state)
{
    (void)state;
    need_bin();
    quality_pairs th, thelp, tman;
    quality_pairs_of_header(&th);
    assert_int_equal(run("$ENC --help-all"), 0);
    quality_pairs_between(cap_out, "-q, --quality", "-l, --lambda", &thelp, "mmp-enc --help-all");
    size_t len;
    char *man = (char *)slurp("mmp/cli/mmp-enc.1", &len);
    if (!man)
        fail_msg("cannot read mmp/cli/mmp-enc.1 (the tests run from the repository's root)");
    quality_pairs_between(man, "\\-\\-quality", "\\-\\-lambda", &tman, "mmp-enc.1");
    free(man);
    assert_same_table(&th, "mmp.h", &thelp, "mmp-enc --help-all");
    assert_same_table(&th, "mmp.h", &tman, "mmp-enc.1");
}

/* The manual pages' headers name the library's version. */
static void test_manual_version(void **state)
{
    (void)state;
    const char *pages[] = {"mmp/cli/mmp-enc.1", "mmp/cli/mmp-dec.1"};
    const char *want = "\"mmp " MMP_VERSION_STRING "\"";
    for (int i = 0; i < 2; i++) {
        size_t len;
        char *man = (char *)slurp(pages[i], &len);
        if (!man)
            fail_msg("cannot read %s (the tests run from the repository's root)", pages[i]);
        const char *th = strstr(man, "\n.TH ");
        const char *eol = th ? strchr(th + 1, '\n') : NULL;
        const char *v = th ? strstr(th, want) : NULL;
        const int ok = v && (!eol || v < eol);
        free(man);
        if (!ok)
            fail_msg("%s: its .TH line does not name %s", pages[i], want);
    }
}

static void assert_same_content(const char *a, const char *b)
{
    char p[256];
    size_t n;
    wpath(p, sizeof p, b);
    uint8_t *d = slurp(p, &n);
    if (!d)
        fail_msg("cannot read %s", b);
    assert_content(a, d, n);
    free(d);
}

/* ------------------------------------------------------------ mmp-enc -q */

/* The lambda= of a --stats line in cap_out. */
static double stats_lambda(void)
{
    const char *p = strstr(cap_out, " lambda=");
    if (!p)
        fail_msg("no lambda= in --stats: %s", cap_out);
    return strtod(p + 8, NULL);
}

static size_t file_size(const char *name)
{
    char p[256];
    size_t n = 0;
    wpath(p, sizeof p, name);
    uint8_t *b = slurp(p, &n);
    if (!b)
        fail_msg("cannot read %s", name);
    free(b);
    return n;
}

static void test_enc_quality(void **state)
{
    (void)state;
    need_bin();
    char cmd[256];
    /* The default quality writes the default's bytes. */
    snprintf(cmd, sizeof cmd, "$ENC -q %d in.pgm d.mmp", MMP_DEFAULT_QUALITY);
    expect_ok(cmd);
    assert_content("d.mmp", good_mmp, good_len);
    /* A quality between points: the library's lambda, in the file. */
    expect_ok("$ENC --stats --quality=33.3 in.pgm q33.mmp > s.txt && cat s.txt");
    assert_true(stats_lambda() == quality_lambda_of(33.3));
    expect_ok("$ENC -q 85 in.pgm q85.mmp");
    assert_true(file_size("q33.mmp") < file_size("q85.mmp"));
    /* 100: lossless, the bytes of --lossless, the input back. */
    expect_ok("$ENC -q 100 in.pgm l.mmp && $ENC --lossless in.pgm l2.mmp && $DEC l.mmp -o l.pgm");
    assert_same_content("l.mmp", "l2.mmp");
    assert_same_content("l.pgm", "in.pgm");
    /* Out of range, not a number: usage errors that say where quiet went. */
    expect_fail(2, "mmp-enc", "invalid quality '101'", "--quiet", "$ENC -q 101 in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "invalid quality", NULL, "$ENC -q -1 in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "invalid quality", NULL, "$ENC -q nan in.pgm O.mmp");
    /* An old `mmp-enc -q IN OUT` takes IN as the quality. */
    expect_fail(2, "mmp-enc", "invalid quality 'in.pgm'", "quiet is --quiet",
                "$ENC -q in.pgm O.mmp");
    /* With another setting of the rate, in either order. */
    expect_fail(2, "mmp-enc", "-q cannot be combined with -l", NULL,
                "$ENC -q 50 -l 3 in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "-q cannot be combined with -l", NULL,
                "$ENC -l 3 -q 50 in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "-q cannot", "--target-bpp", "$ENC -q 50 --target-bpp 1 in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "-q cannot", "--lossless", "$ENC --lossless -q 100 in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "-q cannot", "--max-error", "$ENC -q 90 --max-error 2 in.pgm O.mmp");
    /* -q 100 is a bound: what a bound excludes, named as -q 100. */
    expect_fail(2, "mmp-enc", "-q 100 needs --chroma 444", NULL,
                "$ENC -q 100 --chroma 420 in.pgm O.mmp");
    expect_ok("$ENC -q 100 --residual alone in.pgm r.mmp");
    expect_fail(2, "mmp-enc", "--residual applies only", NULL,
                "$ENC -q 99 --residual alone in.pgm O.mmp");
}

/* --quiet is quiet in both tools; mmp-dec has no -q (as dwebp and djxl). */
static void test_quiet(void **state)
{
    (void)state;
    need_bin();
    /* A warning without --quiet, none with it. */
    assert_int_equal(run("$ENC --alpha mmp in.pgm w.mmp"), 0);
    one_line("--alpha on grey", "mmp-enc", "warning", "--alpha");
    expect_ok("$ENC --quiet --alpha mmp in.pgm w2.mmp");
    expect_ok("$DEC --quiet good.mmp -o x.pgm");
    assert_content("x.pgm", good_pgm, good_pgm_len);
    expect_fail(2, "mmp-dec", "'-q'", "quiet is --quiet", "$DEC -q good.mmp -o y.pgm");
    expect_fail(2, "mmp-dec", "'-q'", "--quiet", "$DEC -vq good.mmp -o y.pgm");
}

/* ------------------------------------------------------------ mmp-enc -o */

static void test_enc_output_option(void **state)
{
    (void)state;
    need_bin();
    expect_ok("$ENC in.pgm -o a.mmp && $ENC -o b.mmp in.pgm && $ENC --output=c.mmp in.pgm");
    assert_content("a.mmp", good_mmp, good_len);
    assert_content("b.mmp", good_mmp, good_len);
    assert_content("c.mmp", good_mmp, good_len);
    expect_ok("$ENC in.pgm -o - > d.mmp");
    assert_content("d.mmp", good_mmp, good_len);
    expect_fail(2, "mmp-enc", "both -o and OUT", NULL, "$ENC in.pgm -o e.mmp f.mmp");
    expect_fail(2, "mmp-enc", "expected IN with -o", NULL, "$ENC -o e.mmp");
    expect_fail(2, "mmp-enc", "expected IN and OUT.mmp", NULL, "$ENC in.pgm");
    expect_fail(2, "mmp-enc", "empty file name for OUT", NULL, "$ENC in.pgm -o ''");
}

/* ---------------------------------------------------- output extensions */

static void test_output_extensions(void **state)
{
    (void)state;
    need_bin();
    /* mmp-enc: OUT ends in .mmp, any case, or has no extension. */
    expect_fail(2, "mmp-enc", "OUT x.png", "name it .mmp", "$ENC in.pgm x.png");
    expect_fail(2, "mmp-enc", "OUT x.jpg", "name it .mmp", "$ENC in.pgm -o x.jpg");
    expect_fail(2, "mmp-enc", "OUT in.pgm", NULL, "$ENC in.pgm in.pgm");
    /* Found before the input is read: no such input, still a usage error. */
    expect_fail(2, "mmp-enc", "OUT x.webp", NULL, "$ENC nosuch.pgm x.webp");
    expect_ok("$ENC in.pgm X.MMP && $ENC in.pgm xmmp && mkdir d.x && $ENC in.pgm d.x/y");
    assert_content("X.MMP", good_mmp, good_len);
    assert_content("xmmp", good_mmp, good_len);
    /* --recon: the image writer's extensions, or none. */
    expect_fail(2, "mmp-enc", "--recon R.jpg", "it writes .png, .pgm, .ppm, .pnm, .pam",
                "$ENC --recon R.jpg in.pgm O.mmp");
    expect_fail(2, "mmp-enc", "--recon R.mmp", "no writer for .mmp", "$ENC --recon R.mmp in.pgm O.mmp");
    expect_ok("$ENC --recon R.pnm in.pgm O.mmp && $ENC --recon R in.pgm O2.mmp");
    assert_content("R.pnm", good_pgm, good_pgm_len);
    assert_content("R", good_pgm, good_pgm_len);
    /* mmp-dec -o: the same extensions; refused before the input is read. */
    expect_fail(2, "mmp-dec", "-o x.jpg", "it writes .png, .pgm, .ppm, .pnm, .pam",
                "$DEC good.mmp -o x.jpg");
    expect_fail(2, "mmp-dec", "-o x.mmp", NULL, "$DEC good.mmp -o x.mmp");
    expect_fail(2, "mmp-dec", "-o x.tiff", NULL, "$DEC nosuch.mmp -o x.tiff");
    expect_ok("$DEC good.mmp -o x.PNM && $DEC good.mmp -o plain");
    assert_content("x.PNM", good_pgm, good_pgm_len);
    assert_content("plain", good_pgm, good_pgm_len);
    /* A colour or alpha image in .pnm: PPM, or refused (exit 1, nothing
     * written) as PNM holds no alpha. */
    mmp_image rgba;
    assert_int_equal(mmp_image_alloc_channels(&rgba, 16, 16, 4, 255), MMP_OK);
    for (int i = 0; i < 16 * 16 * 4; i++)
        rgba.pix[i] = (uint16_t)(i * 37 % 256);
    mmp_settings st;
    mmp_default_settings(&st);
    uint8_t *buf = NULL;
    size_t n = 0;
    assert_int_equal(mmp_encode(&st, &rgba, &buf, &n, NULL, NULL, NULL, 0), MMP_OK);
    put_file("rgba.mmp", buf, n);
    free(buf);
    mmp_image_free(&rgba);
    expect_fail(1, "mmp-dec", "PNM file holds grey or RGB", ".pam", "$DEC rgba.mmp -o a.pnm");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, cli_test_setup)
    const struct CMUnitTest tests[] = {
        T(test_quality_table_stated), T(test_enc_quality),      T(test_quiet),
        T(test_enc_output_option),    T(test_output_extensions), T(test_manual_version),
    };
#undef T
    return cmocka_run_group_tests(tests, cli_group_setup, cli_group_teardown);
}
