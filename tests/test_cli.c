/*
 * Tests of the command-line tools bin/mmp-enc and bin/mmp-dec, run as
 * separate processes from $MMP_BIN (make check sets it; the tests skip
 * without it). Every test runs in its own directory under a private mkdtemp
 * directory, with stdout and stderr captured to files beside it (the
 * harness: tests/cli_harness.h).
 *
 * For every bad input or option: the exit status is 1 (runtime failure) or
 * 2 (usage error), stderr is exactly one line "PROG: reason" that names the
 * problem, stdout is empty, and the working directory holds no new file,
 * neither the output nor a temporary OUT.tmp* left by the atomic writer.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <zlib.h>

#include "common/container.h"
#include "common/error.h"
#include "kernels/cpu_match.h"
#include "mmp/cli/dec_options.h"
#include "mmp/cli/enc_options.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"
#include "cli_harness.h"

/* ---------------------------------------------------------------- helpers */

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

    expect_fail(1, "mmp-enc", "nosuch.pgm", NULL, "$ENC --quiet nosuch.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "not an image file", NULL, "$ENC --quiet text.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "empty", NULL, "$ENC --quiet empty.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "truncated", NULL, "$ENC --quiet trunc.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "too large", NULL, "$ENC --quiet huge.pgm OUT.mmp");
    /* The same through stdin, and with --recon: neither output appears. */
    expect_fail(1, "mmp-enc", "truncated", NULL, "$ENC --quiet - OUT.mmp < trunc.pgm");
    expect_fail(1, "mmp-enc", "empty", NULL, "$ENC --quiet --recon OUT.pgm - OUT.mmp < empty.pgm");
}

static void test_enc_bad_options(void **state)
{
    (void)state;
    need_bin();
    expect_fail(2, "mmp-enc", "lambda", NULL, "$ENC -l abc in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "lambda", NULL, "$ENC -l -5 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "lambda", NULL, "$ENC --lambda=nan in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "lambda", NULL, "$ENC -l 1000001 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "dictionary", NULL, "$ENC -d 10 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "dictionary", NULL, "$ENC -d 99999 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "thread", NULL, "$ENC -t -1 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "speed", NULL, "$ENC --speed 11 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "speed", NULL, "$ENC --speed -1 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "speed", NULL, "$ENC --speed fast in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "nosuch", NULL, "$ENC -e nosuch in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "--bogus", NULL, "$ENC --bogus in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "-x", NULL, "$ENC -x in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "-l", NULL, "$ENC in.pgm OUT.mmp -l");
    expect_fail(2, "mmp-enc", "expected", NULL, "$ENC");
    expect_fail(2, "mmp-enc", "expected", NULL, "$ENC in.pgm");
    expect_fail(2, "mmp-enc", "expected", NULL, "$ENC in.pgm OUT.mmp extra");
}

/* ------------------------------------------------------------- mmp-dec */

static void test_dec_bad_inputs(void **state)
{
    (void)state;
    need_bin();
    uint8_t *b = malloc(good_len + 8);
    assert_non_null(b);

    expect_fail(1, "mmp-dec", "nosuch.mmp", NULL, "$DEC nosuch.mmp -o OUT.pgm");
    put_file("empty.mmp", "", 0);
    expect_fail(1, "mmp-dec", "truncated", NULL, "$DEC empty.mmp -o OUT.pgm");
    /* Without -o the output would be empty.pgm: it must not appear. */
    expect_fail(1, "mmp-dec", "truncated", NULL, "$DEC empty.mmp");
    memcpy(b, good_mmp, good_len);
    memcpy(b, "MMPx", 4);
    put_file("magic.mmp", b, good_len);
    expect_fail(1, "mmp-dec", "not an MMP file", NULL, "$DEC magic.mmp -o OUT.pgm");

    /* Inside the signature, HEAD, its CRC, TILE's header, the payload and
     * TILE's CRC (util.h's MF_* offsets of a one-tile file). */
    const size_t cuts[] = {2, MF_HEAD_DATA + 6, MF_HEAD_CRC + 1, MF_CHUNK2, MF_TILE_DATA - 1,
                           MF_TILE_DATA, MF_TILE_DATA + 1, (MF_TILE_DATA + good_len) / 2,
                           good_len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        put_file("cut.mmp", good_mmp, cuts[i]);
        expect_fail(1, "mmp-dec", "truncated", NULL, "$DEC cut.mmp -o OUT.pgm");
        expect_fail(1, "mmp-dec", "truncated", NULL, "$DEC cut.mmp");
    }

    /* A flipped bit in the informational lambda field, in the payload and
     * in TILE's CRC: only the CRCs can tell; in the width with HEAD's CRC
     * made right again: the range check does. */
    const size_t flips[] = {MF_LAMBDA_Q8 + 1, MF_TILE_DATA + 1, good_len - 1};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        memcpy(b, good_mmp, good_len);
        b[flips[i]] ^= 0x04;
        put_file("flip.mmp", b, good_len);
        expect_fail(1, "mmp-dec", "CRC", NULL, "$DEC flip.mmp -o OUT.pgm");
    }
    memcpy(b, good_mmp, good_len);
    b[MF_WIDTH + 2] ^= 0x01; /* width 40 -> 65576 */
    fixup_container(b, good_len, 0);
    put_file("flipw.mmp", b, good_len);
    expect_fail(1, "mmp-dec", "width", NULL, "$DEC flipw.mmp -o OUT.pgm");

    memcpy(b, good_mmp, good_len);
    memcpy(b + good_len, "garbage!", 8);
    put_file("trail.mmp", b, good_len + 8);
    expect_fail(1, "mmp-dec", "trailing", NULL, "$DEC trail.mmp -o OUT.pgm");
    /* The same on stdin and stdout: nothing at all is written. */
    expect_fail(1, "mmp-dec", "trailing", NULL, "$DEC - < trail.mmp");

    expect_fail(2, "mmp-dec", "expected", NULL, "$DEC");
    expect_fail(2, "mmp-dec", "expected", NULL, "$DEC a.mmp b.mmp");
    expect_fail(2, "mmp-dec", "-o", NULL, "$DEC trail.mmp -o");
    expect_fail(2, "mmp-dec", "--bogus", NULL, "$DEC --bogus trail.mmp");
    free(b);
}

/* What mmp-dec --info must print for the file `name` of the working
 * directory, encoded with the given settings: the fields that follow from
 * the file's size and HEAD's CRC (a file of one tile: util.h's MF_HEAD_CRC,
 * little-endian) come from it. */
static void info_text(char *buf, size_t n, const char *name, int maxval, int dict_cap,
                      const char *q4_and_threshold, const char *q8_and_lambda, const char *order)
{
    char p[256];
    size_t len;
    wpath(p, sizeof p, name);
    uint8_t *d = slurp(p, &len);
    if (!d || len <= MF_ONE_TILE || memcmp(d + MF_TILE_TYPE, "TILE", 4) != 0)
        fail_msg("cannot read %s as a file of one tile", name);
    const unsigned long crc = get32(d + MF_HEAD_CRC);
    free(d);
    snprintf(buf, n,
             "version=" MMP_FORMAT_VERSION_STRING "\n"
             "planes=1\nlog2_block=4\nlog2_pmin=2\nwidth=40\nheight=24\n"
             "maxval=%d\ndict_cap=%d\n%s%spayload_len=%zu\norder=%s\n"
             "transform=none\nchroma=444\nalpha=none\nresidual=none\nmax_error=none\n"
             "dct=on\ndeblock=on\nresidual_mix=off\nresidual_context=off\n"
             "crc=0x%08lx\ntile_width=128\ntile_height=128\ntiles=1\nchunks=0\n",
             maxval, dict_cap, q4_and_threshold, q8_and_lambda, len - MF_ONE_TILE, order,
             crc);
}

/* mmp-dec --info: the header fields of files encoded here, in both orders,
 * from a file and from stdin; the residual stage's tools as mmp-enc's
 * --residual-mix and --residual-context set them; a damaged file fails as
 * decoding it does; --info takes no output. */
static void test_dec_info(void **state)
{
    (void)state;
    need_bin();
    char want[1024];
    expect_ok("$ENC --quiet -l 75 -d 512 --redundancy 3.25 --order wavefront in.pgm W.mmp");
    expect_ok("$DEC --info W.mmp");
    info_text(want, sizeof want, "W.mmp", 255, 512, "redund_q4=52\nredundancy=3.25\n",
              "lambda_q8=19200\nlambda=75\n", "wavefront");
    assert_string_equal(cap_out, want);
    expect_ok("$ENC --quiet -l 10.5 --redundancy 0.0625 --order raster in.pgm R.mmp");
    expect_ok("$DEC --info - < R.mmp");
    info_text(want, sizeof want, "R.mmp", 255, 1024, "redund_q4=1\nredundancy=0.0625\n",
              "lambda_q8=2688\nlambda=10.5\n", "raster");
    assert_string_equal(cap_out, want);
    /* Nothing decoded, nothing written. */
    assert_false(exists("R.pgm"));
    assert_false(exists("W.pgm"));

    /* The residual stage's tools: the mixing coder and its residual context
     * by default in a lossless file, --residual-context off drops the
     * context alone, --residual-mix off both. */
    static const struct {
        const char *opts, *tools;
    } residual[] = {
        {"", "residual_mix=on\nresidual_context=on\n"},
        {"--residual-context on", "residual_mix=on\nresidual_context=on\n"},
        {"--residual-context off", "residual_mix=on\nresidual_context=off\n"},
        {"--residual-mix off", "residual_mix=off\nresidual_context=off\n"},
    };
    for (size_t k = 0; k < sizeof residual / sizeof residual[0]; k++) {
        char line[256];
        snprintf(line, sizeof line, "$ENC --quiet --lossless %s in.pgm L%zu.mmp", residual[k].opts,
                 k);
        expect_ok(line);
        snprintf(line, sizeof line, "$DEC --info L%zu.mmp", k);
        expect_ok(line);
        if (!strstr(cap_out, residual[k].tools))
            fail_msg("'%s': no '%s' in %s", residual[k].opts, residual[k].tools, cap_out);
    }
    expect_fail(2, "mmp-enc", "residual-context", NULL,
                "$ENC --lossless --residual-context maybe in.pgm L.mmp");

    /* Damaged headers: the decoder's line, exit 1, nothing on stdout. */
    uint8_t *b = malloc(good_len);
    assert_non_null(b);
    const struct {
        size_t at;
        uint8_t xor_;
        int fix_crc; /* HEAD's CRC made right again: the field's check */
        const char *needle;
    } damage[] = {{0, 0x20, 0, "not an MMP file"},
                  {MF_MAXVAL, 0xff, 1, "invalid maxval 0"},
                  {MF_ORDER, 0x03, 1, "unsupported order 2"},
                  {MF_LAMBDA_Q8 + 1, 0x04, 0, "CRC mismatch in HEAD chunk"},
                  {MF_TILE_DATA + 2, 0x10, 0, "CRC mismatch in TILE chunk"}};
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        memcpy(b, good_mmp, good_len);
        b[damage[i].at] ^= damage[i].xor_;
        if (damage[i].fix_crc)
            fixup_container(b, good_len, 0);
        put_file("bad.mmp", b, good_len);
        expect_fail(1, "mmp-dec", "bad.mmp: ", damage[i].needle, "$DEC --info bad.mmp");
        char line[sizeof cap_err];
        snprintf(line, sizeof line, "%s", cap_err);
        expect_fail(1, "mmp-dec", "bad.mmp: ", damage[i].needle, "$DEC bad.mmp -o OUT.pgm");
        assert_string_equal(line, cap_err);
    }
    put_file("cut.mmp", good_mmp, MF_HEAD_DATA + 16);
    expect_fail(1, "mmp-dec", "standard input: ", "truncated HEAD chunk",
                "$DEC --info - < cut.mmp");
    expect_fail(1, "mmp-dec", "nosuch.mmp", NULL, "$DEC --info nosuch.mmp");
    free(b);

    /* --info prints and writes nothing else. */
    expect_fail(2, "mmp-dec", "--info", "-o", "$DEC --info good.mmp -o OUT.pgm");
    expect_fail(2, "mmp-dec", "--info", "-o", "$DEC -o OUT.pgm --info good.mmp");
    expect_fail(2, "mmp-dec", "--info", "--stats", "$DEC --info --stats good.mmp");
    expect_fail(2, "mmp-dec", "expected", NULL, "$DEC --info");
}

/* ---------------------------------------------------------- good paths */

static void test_good_paths(void **state)
{
    (void)state;
    need_bin();
    /* Every value option spelled out: the reference engine on one thread,
     * the rest at their defaults. */
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

    /* --speed 0 is the default; the fastest speed's file decodes to its
     * reconstruction. */
    expect_ok("$ENC --quiet -l 10 -e seq --speed 0 in.pgm S0.mmp");
    assert_same_files("S0.mmp", "OUT.mmp");
    expect_ok("$ENC --quiet -l 10 -e seq --speed 4 --recon S4r.pgm in.pgm S4.mmp");
    expect_ok("$DEC S4.mmp -o S4.pgm");
    assert_same_files("S4.pgm", "S4r.pgm");

    /* No OUT.mmp.tmp* or OUT.pgm.tmp* left behind. */
    assert_no_temp();
}

/* The value of key= in the --stats line of the last run, into buf. */
static const char *stats_value(const char *line, const char *key, char *buf, size_t n)
{
    const char *p = strstr(line, key);
    if (!p)
        fail_msg("no %s in the --stats line: %s", key, line);
    p += strlen(key);
    snprintf(buf, n, "%.*s", (int)strcspn(p, " \n"), p);
    return buf;
}

/* Without -e the engine is auto's choice, which --stats names, and the
 * file is the one seq writes. */
static void test_default_engine(void **state)
{
    (void)state;
    need_bin();
    char def[32], aut[32], seq[32];
    /* No head start: with one, a small image may end on the CPU engine
     * before auto's choice starts, sooner or later from run to run. */
    expect_ok("$ENC --quiet --stats --head-start off in.pgm DEF.mmp");
    stats_value(cap_out, "engine=", def, sizeof def);
    expect_ok("$ENC --quiet --stats --head-start off -e auto in.pgm AUTO.mmp");
    stats_value(cap_out, "engine=", aut, sizeof aut);
    expect_ok("$ENC --quiet --stats -e seq in.pgm SEQ.mmp");
    stats_value(cap_out, "engine=", seq, sizeof seq);
    print_message("default engine ran %s\n", def);
    assert_string_equal(seq, "seq");
    assert_string_equal(def, aut);
    assert_true(mmp_engine_exists(def));
    assert_string_not_equal(def, "auto");
    assert_same_files("DEF.mmp", "SEQ.mmp");
    assert_same_files("AUTO.mmp", "SEQ.mmp");
    assert_content("DEF.mmp", good_mmp, good_len);
    /* -v names the engine too. */
    assert_int_equal(run("$ENC --quiet -v in.pgm V.mmp"), 0);
    char want[64];
    snprintf(want, sizeof want, "mmp-enc: engine %s: ", def);
    if (!strstr(cap_err, want))
        fail_msg("-v does not say '%s': %s", want, cap_err);
    /* and the build of the CPU engines' node search that ran. */
    assert_int_equal(run("$ENC --quiet -v -e seq in.pgm V.mmp"), 0);
    snprintf(want, sizeof want, "seq engine: node search's %s build",
             mmp_cpu_match_avx2() ? "AVX2" : "C");
    if (!strstr(cap_err, want))
        fail_msg("-v does not say '%s': %s", want, cap_err);
    assert_int_equal(run("$ENC --help"), 0);
    assert_non_null(strstr(cap_out, "(default auto"));
}

/* ------------------------------------------------ image file formats */

/* img as a file in the working directory, in fmt. */
static void put_image(const char *name, const mmp_image *img, mmp_file_format fmt)
{
    char p[256];
    wpath(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write(f, img, fmt), MMP_OK);
    assert_int_equal(fclose(f), 0);
}

static void get_image(const char *name, mmp_image *img)
{
    char p[256], err[256] = "";
    wpath(p, sizeof p, name);
    if (mmp_imagefile_read_path(p, img, err, sizeof err))
        fail_msg("%s: %s", name, err);
}

static void assert_same_samples(const char *a, const char *b)
{
    mmp_image x, y;
    get_image(a, &x);
    get_image(b, &y);
    const size_t n = (size_t)x.width * (size_t)x.height * (size_t)mmp_image_channels(&x);
    if (x.width != y.width || x.height != y.height || x.maxval != y.maxval ||
        mmp_image_channels(&x) != mmp_image_channels(&y) ||
        memcmp(x.pix, y.pix, n * sizeof x.pix[0]))
        fail_msg("%s and %s hold different images", a, b);
    mmp_image_free(&x);
    mmp_image_free(&y);
}

/* A grey PNG encodes to the bytes of the same image as PGM, from a file and
 * from stdin; mmp-dec -o x.png equals --recon x.pgm in samples. */
static void test_png_grey_paths(void **state)
{
    (void)state;
    need_bin();
    put_image("in.png", &cli_input, MMP_FILE_PNG);
    expect_ok("$ENC --quiet --recon R.pgm in.png P.mmp");
    assert_content("P.mmp", good_mmp, good_len);
    expect_ok("$ENC --quiet - S.mmp < in.png");
    assert_content("S.mmp", good_mmp, good_len);
    /* The name does not decide the format, the bytes do. */
    expect_ok("cp in.png fake.pgm && $ENC --quiet fake.pgm F.mmp");
    assert_content("F.mmp", good_mmp, good_len);

    expect_ok("$DEC good.mmp -o x.png");
    assert_same_samples("x.png", "R.pgm");
    expect_ok("$DEC good.mmp -o UPPER.PNG");
    assert_same_samples("UPPER.PNG", "R.pgm");
    expect_ok("$ENC --quiet --recon R.png in.pgm Q.mmp");
    assert_same_samples("R.png", "R.pgm");
    char p[256];
    wpath(p, sizeof p, "x.png");
    size_t len;
    uint8_t *b = slurp(p, &len);
    assert_non_null(b);
    assert_true(len > 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0);
    free(b);
    /* .pam by name; stdout and a name without extension by kind (grey:
     * PGM). */
    expect_ok("$DEC good.mmp -o x.pam");
    assert_same_samples("x.pam", "R.pgm");
    wpath(p, sizeof p, "x.pam");
    b = slurp(p, &len);
    assert_true(b && len > 3 && memcmp(b, "P7\n", 3) == 0);
    free(b);
    expect_ok("$DEC good.mmp -o - > stdout.img && $DEC good.mmp -o xout");
    assert_content("stdout.img", good_pgm, good_pgm_len);
    assert_content("xout", good_pgm, good_pgm_len);
    /* Without -o: IN with the extension of the kind. */
    expect_ok("cp good.mmp dflt.mmp && $DEC dflt.mmp");
    assert_content("dflt.pgm", good_pgm, good_pgm_len);
}

/* Names that cannot hold the image, and a maxval PNG cannot hold: one line,
 * exit 1, no output (for --recon, neither output). */
static void test_output_name_errors(void **state)
{
    (void)state;
    need_bin();
    expect_fail(1, "mmp-dec", "x.ppm: a PPM file holds RGB images only", NULL,
                "$DEC good.mmp -o x.ppm");
    expect_fail(1, "mmp-enc", "--recon R.ppm", "PPM", "$ENC --quiet --recon R.ppm in.pgm O.mmp");
    /* A 10-bit image whose maxval is not 2^k - 1. */
    mmp_image img;
    assert_int_equal(mmp_image_alloc(&img, 16, 8, 1000), MMP_OK);
    for (int i = 0; i < 16 * 8; i++)
        img.pix[i] = (uint16_t)(i * 7 % 1001);
    put_image("m1000.pgm", &img, MMP_FILE_PGM);
    mmp_settings st;
    mmp_default_settings(&st);
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(mmp_encode(&st, &img, &buf, &len, NULL, NULL, NULL, 0), MMP_OK);
    put_file("m1000.mmp", buf, len);
    free(buf);
    mmp_image_free(&img);
    expect_fail(1, "mmp-dec", "PNG cannot hold maxval 1000", NULL, "$DEC m1000.mmp -o x.png");
    expect_fail(1, "mmp-enc", "PNG cannot hold maxval 1000", NULL,
                "$ENC --quiet --recon R.png m1000.pgm O.mmp");
    expect_ok("$DEC m1000.mmp -o ok.pgm");
}

/* Bad image files: one line, exit 1, no output. */
static void test_enc_bad_images(void **state)
{
    (void)state;
    need_bin();
    put_image("in.png", &cli_input, MMP_FILE_PNG);
    char p[256];
    wpath(p, sizeof p, "in.png");
    size_t len;
    uint8_t *b = slurp(p, &len);
    assert_non_null(b);
    put_file("trunc.png", b, len / 2);
    b[20] ^= 4; /* the IHDR's width: its CRC no longer matches */
    put_file("crc.png", b, len);
    free(b);
    static const char pam[] = "P7\nWIDTH 1\nHEIGHT 1\nDEPTH 1\nMAXVAL 255\nTUPLTYPE FOO\nENDHDR\na";
    put_file("foo.pam", pam, sizeof pam - 1);
    static const char ppm[] = "P6 4 4 255\nabcdef";
    put_file("short.ppm", ppm, sizeof ppm - 1);
    expect_fail(1, "mmp-enc", "trunc.png: truncated PNG", NULL, "$ENC --quiet trunc.png OUT.mmp");
    expect_fail(1, "mmp-enc", "standard input: truncated PNG", NULL,
                "$ENC --quiet --recon R.png - OUT.mmp < trunc.png");
    expect_fail(1, "mmp-enc", "crc.png: invalid PNG file", "CRC", "$ENC --quiet crc.png OUT.mmp");
    expect_fail(1, "mmp-enc", "foo.pam: PAM tuple type 'FOO' is not supported", NULL,
                "$ENC --quiet foo.pam OUT.mmp");
    expect_fail(1, "mmp-enc", "short.ppm: truncated PPM data", NULL, "$ENC --quiet short.ppm OUT.mmp");
}

/* Colour and alpha inputs in every format, 8 and 16 bits: encoded, decoded
 * to the default name of their kind, equal to --recon; alpha exact. */
static void test_colour_inputs(void **state)
{
    (void)state;
    need_bin();
    static const struct {
        int ch, maxval;
        mmp_file_format fmt;
        const char *name, *dflt;
    } cases[] = {
        {3, 255, MMP_FILE_PPM, "c.ppm", "c.ppm.ppm"}, {3, 255, MMP_FILE_PNG, "c.png", "c.png.ppm"},
        {4, 255, MMP_FILE_PAM, "a.pam", "a.pam.pam"}, {4, 255, MMP_FILE_PNG, "a.png", "a.png.pam"},
        {2, 255, MMP_FILE_PNG, "ga.png", "ga.png.pam"},
        {3, 65535, MMP_FILE_PNG, "c16.png", "c16.png.ppm"},
        {4, 65535, MMP_FILE_PAM, "a16.pam", "a16.pam.pam"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mmp_image img;
        assert_int_equal(mmp_image_alloc_channels(&img, 24, 16, cases[i].ch, cases[i].maxval),
                         MMP_OK);
        for (size_t k = 0; k < (size_t)24 * 16 * (size_t)cases[i].ch; k++)
            img.pix[k] = (uint16_t)((k * 37 + k / 24) % 256 * (cases[i].maxval / 255));
        put_image(cases[i].name, &img, cases[i].fmt);
        mmp_image_free(&img);
        char cmd[256];
        char enc[64], rec[64];
        snprintf(enc, sizeof enc, "%s.mmp", cases[i].name);
        snprintf(rec, sizeof rec, "%s-recon.png", cases[i].name);
        snprintf(cmd, sizeof cmd, "$ENC --quiet --recon %s %s %s && $DEC %s", rec, cases[i].name,
                 enc, enc);
        expect_ok(cmd);
        assert_same_samples(cases[i].dflt, rec);
        /* Alpha, coded exactly by default, comes back exactly. */
        mmp_image in, out;
        get_image(cases[i].name, &in);
        get_image(cases[i].dflt, &out);
        const int ch = cases[i].ch;
        assert_int_equal(mmp_image_channels(&out), ch);
        for (size_t k = (size_t)ch - 1; ch % 2 == 0 && k < (size_t)24 * 16 * ch; k += ch)
            assert_int_equal(out.pix[k], in.pix[k]);
        mmp_image_free(&in);
        mmp_image_free(&out);
    }
}

/* ------------------------------------- --help, --help-all, manual pages */

/*
 * --help is one screen: at most 30 lines, the options most used, a last
 * line pointing to --help-all and the manual page. --help-all is the
 * reference of every option, and the manual page (mmp/cli/PROG.1, read
 * from the repository's root, where the tests run) describes the same
 * options: each list is checked against the others and against the
 * options getopt_long accepts (mmp_enc_long_options, mmp_dec_long_options).
 */
#define MAX_OPTS 64

/* Options by long name, with their short letter (0: none). */
typedef struct opt_list {
    int n;
    char name[MAX_OPTS][32];
    char letter[MAX_OPTS];
} opt_list;

static int opt_find(const opt_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name))
            return i;
    return -1;
}

/* Adds --name (the option characters at s) with its letter; twice is an
 * error of the text `what`. */
static void opt_add(opt_list *l, const char *s, char letter, const char *what)
{
    const size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
    char name[32];
    if (n == 0 || n >= sizeof name)
        fail_msg("%s: an option name that is empty or too long: '%.40s'", what, s);
    snprintf(name, sizeof name, "%.*s", (int)n, s);
    if (opt_find(l, name) >= 0)
        fail_msg("%s lists --%s twice", what, name);
    if (l->n == MAX_OPTS)
        fail_msg("%s: more than %d options", what, MAX_OPTS);
    snprintf(l->name[l->n], sizeof l->name[0], "%s", name);
    l->letter[l->n++] = letter;
}

/* The option entries of a help text: the lines "  -x, --name ..." and
 * "      --name ..." (descriptions go on at column 23; prose starts at
 * column 0). */
static void help_entries(const char *text, opt_list *l, const char *what)
{
    memset(l, 0, sizeof *l);
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        if (!strncmp(p, "  -", 3) && p[3] != '-' && !strncmp(p + 4, ", --", 4))
            opt_add(l, p + 8, p[3], what);
        else if (!strncmp(p, "      --", 8))
            opt_add(l, p + 8, 0, what);
    }
}

/* The options a manual page documents: in its OPTIONS section, the .B or
 * .BR line after each .TP, with \- read as -. */
static void man_entries(const char *page, opt_list *l)
{
    char path[128];
    size_t len;
    snprintf(path, sizeof path, "mmp/cli/%s.1", page);
    char *text = (char *)slurp(path, &len);
    if (!text)
        fail_msg("cannot read %s (the tests run from the repository's root)", path);
    memset(l, 0, sizeof *l);
    int in_options = 0, after_tp = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, ".SH", 3))
            in_options = strstr(line, "OPTIONS") != NULL;
        if (in_options && after_tp && !strncmp(line, ".B", 2)) {
            char head[256];
            size_t k = 0;
            for (const char *s = line; *s && k + 1 < sizeof head; s++)
                if (!(s[0] == '\\' && s[1] == '-'))
                    head[k++] = *s;
            head[k] = 0;
            /* "-x" and "--name" standing alone: after a space or a quote. */
            char letter = 0;
            for (const char *s = head; *s; s++) {
                if (s[0] != '-' || (s != head && s[-1] != ' ' && s[-1] != '"'))
                    continue;
                if (s[1] == '-') {
                    opt_add(l, s + 2, letter, path);
                    letter = 0;
                    s++;
                } else if (s[1] >= 'a' && s[1] <= 'z' && strchr(" \"", s[2])) {
                    letter = s[1];
                }
            }
        }
        after_tp = !strncmp(line, ".TP", 3);
    }
    free(text);
}

/* The options getopt_long accepts, with their letters. */
static void table_entries(const struct option *t, opt_list *l, const char *what)
{
    memset(l, 0, sizeof *l);
    for (; t->name; t++)
        opt_add(l, t->name, t->val < 128 ? (char)t->val : 0, what);
}

/* Every option of a is in b, with the same letter. */
static void assert_opts_in(const opt_list *a, const char *a_what, const opt_list *b,
                           const char *b_what)
{
    for (int i = 0; i < a->n; i++) {
        const int k = opt_find(b, a->name[i]);
        if (k < 0)
            fail_msg("%s has --%s; %s does not", a_what, a->name[i], b_what);
        if (a->letter[i] != b->letter[k])
            fail_msg("--%s: %s gives it the letter '%c', %s '%c'", a->name[i], a_what,
                     a->letter[i] ? a->letter[i] : ' ', b_what, b->letter[k] ? b->letter[k] : ' ');
    }
}

/* The number of lines of s (a last line without '\n' counts). */
static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n' || s[1] == 0;
    return n;
}

/* --help and -h: one screen, exit 0, nothing on stderr, the options
 * `opts` named, each an option of --help-all (in all_opts), a last line
 * that points to --help-all and the manual page; then --version. */
static void check_help(const char *prog, const char *name, const char *const *opts, size_t n,
                       const opt_list *all_opts)
{
    assert_int_equal(run("%s --help", prog), 0);
    assert_string_equal(cap_err, "");
    assert_non_null(strstr(cap_out, "Usage:"));
    const int lines = count_lines(cap_out);
    if (lines > 30)
        fail_msg("%s --help has %d lines, more than 30", name, lines);
    for (size_t i = 0; i < n; i++)
        if (!strstr(cap_out, opts[i]))
            fail_msg("%s --help does not mention %s", name, opts[i]);
    opt_list shown;
    help_entries(cap_out, &shown, "--help");
    assert_opts_in(&shown, "--help", all_opts, "--help-all");
    const char *last = cap_out + strlen(cap_out) - 1;
    while (last > cap_out && last[-1] != '\n')
        last--;
    char man[32];
    snprintf(man, sizeof man, "man %s", name);
    if (!strstr(last, "--help-all") || !strstr(last, man))
        fail_msg("%s --help's last line does not point to --help-all and '%s': %s", name, man,
                 last);
    char first[sizeof cap_out];
    snprintf(first, sizeof first, "%s", cap_out);
    assert_int_equal(run("%s -h", prog), 0);
    assert_string_equal(cap_out, first);

    assert_int_equal(run("%s --version", prog), 0);
    assert_non_null(strstr(cap_out, MMP_VERSION_STRING));
    assert_string_equal(cap_err, "");
}

/* --help-all: exit 0, nothing on stderr, every option getopt_long accepts
 * and the options `opts` named; its entries into *l. */
static void check_help_all(const char *prog, const char *name, const struct option *table,
                           const char *const *opts, size_t n, opt_list *l)
{
    assert_int_equal(run("%s --help-all", prog), 0);
    assert_string_equal(cap_err, "");
    assert_non_null(strstr(cap_out, "Usage:"));
    if (strlen(cap_out) + 1 >= sizeof cap_out)
        fail_msg("%s --help-all fills the capture of %zu bytes", name, sizeof cap_out);
    for (size_t i = 0; i < n; i++)
        if (!strstr(cap_out, opts[i]))
            fail_msg("%s --help-all does not mention %s", name, opts[i]);
    char what[64];
    snprintf(what, sizeof what, "%s --help-all", name);
    help_entries(cap_out, l, what);
    opt_list accepted;
    table_entries(table, &accepted, name);
    assert_opts_in(&accepted, name, l, what);
    assert_opts_in(l, what, &accepted, "the options table");
}

static void test_help_version(void **state)
{
    (void)state;
    need_bin();
    static const char *const enc_short[] = {
        "-l, --lambda", "-e, --engine", "-t, --threads", "--speed", "--lossless", "--chroma",
        "--target-bpp", "--recon",      "--stats",       "-v, --verbose", "      --quiet",
        "-h, --help",   "--help-all",   "--version",     "seq",           "(default auto",
        "-q, --quality", "-o, --output"};
    static const char *const enc_all[] = {"-d, --dict-size", "--max-error", "--cl-device",
                                          "--colour", "--alpha", "seq", "Exit status"};
    static const char *const dec_short[] = {"-o, --output",  "--info",     "--stats",
                                            "-v, --verbose", "      --quiet", "-h, --help",
                                            "--help-all",    "--version"};
    static const char *const dec_all[] = {"-o, --output", "--info", "Exit status"};
    opt_list all;
    check_help_all("$ENC", "mmp-enc", mmp_enc_long_options, enc_all,
                   sizeof enc_all / sizeof enc_all[0], &all);
    check_help("$ENC", "mmp-enc", enc_short, sizeof enc_short / sizeof enc_short[0], &all);
    check_help_all("$DEC", "mmp-dec", mmp_dec_long_options, dec_all,
                   sizeof dec_all / sizeof dec_all[0], &all);
    check_help("$DEC", "mmp-dec", dec_short, sizeof dec_short / sizeof dec_short[0], &all);
}

/* --help-all and the manual page list the same options, with the same
 * letters; each one the page documents is accepted by the program (no
 * "unknown option" with it alone: a missing value, IN or OUT is another
 * error). */
static void check_manual(const char *prog, const char *name, const struct option *table)
{
    opt_list help, page, accepted;
    char help_what[64], page_what[64];
    snprintf(help_what, sizeof help_what, "%s --help-all", name);
    snprintf(page_what, sizeof page_what, "mmp/cli/%s.1", name);
    assert_int_equal(run("%s --help-all", prog), 0);
    help_entries(cap_out, &help, help_what);
    man_entries(name, &page);
    table_entries(table, &accepted, name);
    if (page.n == 0)
        fail_msg("%s documents no option (no .TP entry in its OPTIONS section)", page_what);
    assert_opts_in(&help, help_what, &page, page_what);
    assert_opts_in(&page, page_what, &help, help_what);
    assert_opts_in(&page, page_what, &accepted, name);
    print_message("%s: %d options, in --help-all, %s and the options table alike\n", name,
                  page.n, page_what);
    for (int i = 0; i < page.n; i++) {
        run("%s --%s", prog, page.name[i]);
        if (strstr(cap_err, "unknown option"))
            fail_msg("%s documents --%s, which %s refuses: %s", page_what, page.name[i], name,
                     cap_err);
    }
}

static void test_manual_pages(void **state)
{
    (void)state;
    need_bin();
    check_manual("$ENC", "mmp-enc", mmp_enc_long_options);
    check_manual("$DEC", "mmp-dec", mmp_dec_long_options);
}

/* ------------------------------------------- outputs on failed commands */

static void test_existing_output_kept(void **state)
{
    (void)state;
    need_bin();
    put_file("OUT.mmp", "keep", 4);
    put_file("OUT.pgm", "keep", 4);
    static const char hdr[] = "P5\n40 24\n255\nshort";
    put_file("trunc.pgm", hdr, sizeof hdr - 1);
    put_file("bad.mmp", "MMPi", 4);
    expect_fail(1, "mmp-enc", "truncated", NULL, "$ENC --quiet trunc.pgm OUT.mmp");
    assert_text("OUT.mmp", "keep");
    expect_fail(2, "mmp-enc", "lambda", NULL, "$ENC -l abc in.pgm OUT.mmp");
    assert_text("OUT.mmp", "keep");
    expect_fail(1, "mmp-dec", "truncated", NULL, "$DEC bad.mmp -o OUT.pgm");
    assert_text("OUT.pgm", "keep");
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
    /* The test's directory is fresh: no OUT.mmp yet, and none after. */
    expect_fail(1, "mmp-enc", "nodir/R.pgm", NULL, "$ENC --quiet --recon nodir/R.pgm in.pgm OUT.mmp");
}

/* A write error on stdout is a failure with one line, not a silent exit 0. */
static void test_stdout_write_error(void **state)
{
    (void)state;
    need_bin();
    struct stat sb;
    if (stat("/dev/full", &sb) != 0)
        skip();
    expect_fail(1, "mmp-enc", "standard output", NULL, "$ENC --quiet in.pgm - >/dev/full");
    expect_fail(1, "mmp-dec", "standard output", NULL, "$DEC good.mmp -o - >/dev/full");
}

/* Output files are created like any other tool's: mode 0666 less the umask
 * (mkstemp's private 0600 must not leak through the rename). */
static void test_output_mode(void **state)
{
    (void)state;
    need_bin();
    assert_int_equal(run("umask 022 && $ENC --quiet in.pgm OUT_mode.mmp && $DEC good.mmp -o OUT_mode.pgm"),
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

/* The path of `name` in the working directory (one at a time). */
static const char *wpath_static(const char *name)
{
    static char p[2][512];
    static int k;
    k ^= 1;
    wpath(p[k], sizeof p[k], name);
    return p[k];
}

/* Appends a PNG chunk (length, type, data, CRC) at *at of b. */
static void png_chunk(uint8_t *b, size_t *at, const char *type, const void *data, size_t n)
{
    uint8_t *p = b + *at;
    p[0] = (uint8_t)(n >> 24), p[1] = (uint8_t)(n >> 16), p[2] = (uint8_t)(n >> 8);
    p[3] = (uint8_t)n;
    memcpy(p + 4, type, 4);
    memcpy(p + 8, data, n);
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), p + 4, (uInt)(n + 4));
    p[8 + n] = (uint8_t)(crc >> 24), p[9 + n] = (uint8_t)(crc >> 16);
    p[10 + n] = (uint8_t)(crc >> 8), p[11 + n] = (uint8_t)crc;
    *at += 12 + n;
}

/* The data of the first chunk `type` of PNG file b[0..n), or NULL. */
static const uint8_t *png_find(const uint8_t *b, size_t n, const char *type, size_t *len)
{
    for (size_t at = 8; at + 12 <= n;) {
        const size_t l = (size_t)b[at] << 24 | (size_t)b[at + 1] << 16 |
                         (size_t)b[at + 2] << 8 | b[at + 3];
        if (!memcmp(b + at + 4, type, 4)) {
            *len = l;
            return b + at + 8;
        }
        at += 12 + l;
    }
    return NULL;
}

/* A grey PNG with an EXIF block (orientation 6) and a Latin-1 text goes
 * through mmp-enc and mmp-dec: --info lists both chunks, the PNG written
 * back holds both byte for byte (the orientation kept, not applied: same
 * size), a PGM output warns that it leaves them out, --strip stores none;
 * --tile makes the tiles asked for, and --region decodes exactly that
 * window of the whole decode. */
static void test_metadata_tiles_region(void **state)
{
    (void)state;
    need_bin();
    enum { W = 300, H = 200 };
    static const uint8_t exif[] = {'M', 'M', 0, '*', 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3,
                                   0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0};
    static const char text[] = "Title\0Caf\xe9";
    uint8_t *raw = malloc((size_t)(W + 1) * H), *png = malloc(200000);
    assert_non_null(raw);
    assert_non_null(png);
    for (int y = 0; y < H; y++) {
        raw[(size_t)y * (W + 1)] = 0;
        for (int x = 0; x < W; x++)
            raw[(size_t)y * (W + 1) + 1 + (size_t)x] = (uint8_t)((x * 3 + y * 5 + (x * y) % 7) & 255);
    }
    uLongf zlen = 150000;
    uint8_t *z = malloc(zlen);
    assert_non_null(z);
    assert_int_equal(compress(z, &zlen, raw, (uLong)(W + 1) * H), Z_OK);
    size_t at = 8;
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    const uint8_t ihdr[13] = {0, 0, W >> 8, W & 255, 0, 0, H >> 8, H & 255, 8, 0, 0, 0, 0};
    png_chunk(png, &at, "IHDR", ihdr, 13);
    png_chunk(png, &at, "eXIf", exif, sizeof exif);
    png_chunk(png, &at, "tEXt", text, sizeof text - 1);
    png_chunk(png, &at, "IDAT", z, zlen);
    png_chunk(png, &at, "IEND", "", 0);
    put_file("meta.png", png, at);
    free(raw);
    free(z);
    free(png);

    expect_ok("$ENC --quiet -l 30 --tile 128 meta.png m.mmp");
    expect_ok("$DEC --info m.mmp");
    assert_non_null(strstr(cap_out, "tile_width=128\ntile_height=128\ntiles=6\n"));
    assert_non_null(strstr(cap_out, "chunks=2\nchunk_list=exif:26 text:"));
    expect_ok("$DEC --quiet m.mmp -o back.png");
    size_t n, len;
    uint8_t *b = slurp(wpath_static("back.png"), &n);
    assert_non_null(b);
    const uint8_t *got = png_find(b, n, "eXIf", &len);
    assert_non_null(got);
    assert_int_equal(len, sizeof exif);
    assert_memory_equal(got, exif, sizeof exif);
    got = png_find(b, n, "tEXt", &len);
    assert_non_null(got);
    assert_int_equal(len, sizeof text - 1);
    assert_memory_equal(got, text, sizeof text - 1);
    got = png_find(b, n, "IHDR", &len);
    assert_memory_equal(got, ihdr, 13);
    free(b);
    assert_int_equal(run("$DEC m.mmp -o back.pgm"), 0);
    assert_non_null(strstr(cap_err, "left out of the PGM file"));
    expect_ok("$ENC --quiet -l 30 --strip meta.png s.mmp");
    expect_ok("$DEC --info s.mmp");
    assert_non_null(strstr(cap_out, "chunks=0\n"));
    assert_non_null(strstr(cap_out, "tiles=1\n"));
    /* A window across four tiles: the same samples as the whole decode's. */
    expect_ok("$DEC --quiet --region 100,90,57,77 m.mmp -o r.pgm");
    expect_ok("pamcut -left 100 -top 90 -width 57 -height 77 back.pgm > cut.pgm");
    uint8_t *r = slurp(wpath_static("r.pgm"), &n), *c = slurp(wpath_static("cut.pgm"), &len);
    assert_non_null(r);
    assert_non_null(c);
    assert_int_equal(n, len);
    assert_memory_equal(r, c, n);
    free(r);
    free(c);
    expect_fail(1, "mmp-dec", "not inside", NULL, "$DEC --quiet --region 290,0,20,10 m.mmp -o x.pgm");
    expect_fail(2, "mmp-dec", "invalid region", NULL, "$DEC --region 1,2,3 m.mmp -o x.pgm");
    expect_fail(2, "mmp-enc", "invalid tile size", NULL, "$ENC --tile 100 meta.png x.mmp");
}

/* file(1) with data/mmp.magic names mmp-enc's files: the version, the
 * size, grey or colour, with alpha or not, lossless; --mime-type gives
 * image/x-mmp, and data/mmp.xml (the shared-mime-info type) is well formed
 * (xmllint). Skipped where file is not installed (scripts/install-deps.sh
 * installs it). */
static void test_file_magic(void **state)
{
    (void)state;
    need_bin();
    char cwd[900], magic[1000], xml[1000];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(magic, sizeof magic, "%s/data/mmp.magic", cwd);
    snprintf(xml, sizeof xml, "%s/data/mmp.xml", cwd);
    if (access(magic, R_OK) || access(xml, R_OK))
        fail_msg("data/mmp.magic or data/mmp.xml not found (run from the repository root)");
    if (run("command -v file") != 0) {
        print_message("file(1) is not installed: skipping\n");
        skip();
    }
#define MAGIC_VERSION "MMP image data, version " MMP_FORMAT_VERSION_STRING
    static const struct {
        int channels, w, h;
        const char *opts, *want;
    } cases[] = {
        {1, 40, 24, "", MAGIC_VERSION ", 40 x 24, grey"},
        {3, 33, 17, "", MAGIC_VERSION ", 33 x 17, colour"},
        {4, 20, 30, "", MAGIC_VERSION ", 20 x 30, colour with alpha"},
        {2, 21, 9, "--lossless", MAGIC_VERSION ", 21 x 9, grey with alpha, lossless"},
        {1, 16, 16, "--max-error 3", MAGIC_VERSION ", 16 x 16, grey, near-lossless (max error 3)"},
    };
#undef MAGIC_VERSION
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mmp_image img = {0};
        const int ch = cases[k].channels;
        assert_int_equal(mmp_image_alloc_channels(&img, cases[k].w, cases[k].h, ch, 255), 0);
        for (int i = 0; i < cases[k].w * cases[k].h * ch; i++)
            img.pix[i] = (uint16_t)(i * 37 % 251);
        char in[64], path[300], out[64], line[1200];
        snprintf(in, sizeof in, "in%zu.%s", k, ch == 1 ? "pgm" : ch == 3 ? "ppm" : "pam");
        wpath(path, sizeof path, in);
        assert_int_equal(cli_write_pgm(path, &img), 0);
        mmp_image_free(&img);
        snprintf(out, sizeof out, "x%zu.mmp", k);
        snprintf(line, sizeof line, "$ENC --quiet %s %s %s", cases[k].opts, in, out);
        expect_ok(line);
        snprintf(line, sizeof line, "file -b -m '%s' %s", magic, out);
        expect_ok(line);
        cap_out[strcspn(cap_out, "\n")] = '\0';
        if (strcmp(cap_out, cases[k].want))
            fail_msg("%s: file says '%s', want '%s'", cases[k].opts, cap_out, cases[k].want);
        snprintf(line, sizeof line, "file -b --mime-type -m '%s' %s", magic, out);
        expect_ok(line);
        assert_string_equal(cap_out, "image/x-mmp\n");
    }
    /* Not an MMP file: not named one. */
    expect_ok("printf 'MMPj\\001\\000' > other.bin");
    char line[1200];
    snprintf(line, sizeof line, "file -b -m '%s' other.bin", magic);
    expect_ok(line);
    assert_null(strstr(cap_out, "MMP"));
    if (run("command -v xmllint") == 0) {
        snprintf(line, sizeof line, "xmllint --noout '%s'", xml);
        expect_ok(line);
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, cli_test_setup)
    const struct CMUnitTest tests[] = {
        T(test_enc_bad_inputs),
        T(test_enc_bad_options),
        T(test_dec_bad_inputs),
        T(test_dec_info),
        T(test_good_paths),
        T(test_default_engine),
        T(test_help_version),
        T(test_manual_pages),
        T(test_png_grey_paths),
        T(test_output_name_errors),
        T(test_enc_bad_images),
        T(test_colour_inputs),
        T(test_existing_output_kept),
        T(test_enc_recon_failure),
        T(test_stdout_write_error),
        T(test_output_mode),
        T(test_metadata_tiles_region),
        T(test_file_magic),
    };
#undef T
    return cmocka_run_group_tests(tests, cli_group_setup, cli_group_teardown);
}
