/*
 * The harness of the tests that run bin/mmp-enc and bin/mmp-dec as separate
 * processes (tests/test_cli.c, tests/test_output.c): one copy of it, built
 * on tests/util.h (slurp, write_file, load_crop). Everything is static
 * inline, as in util.h; the shared state below is the test program's own.
 *
 * How a test program uses it:
 *
 *   #include "cli_harness.h"
 *
 *   static void test_x(void **state)
 *   {
 *       (void)state;
 *       need_bin();                          skips without $MMP_BIN
 *       put_file("bad.mmp", "MMPi", 4);      into the working directory
 *       expect_fail(1, "mmp-dec", "truncated", NULL, "$DEC bad.mmp -o OUT.pgm");
 *       expect_ok("$ENC --quiet in.pgm OUT.mmp");
 *       assert_content("OUT.mmp", good_mmp, good_len);
 *   }
 *
 *   main: cmocka_unit_test_setup(test_x, cli_test_setup) for each test, run
 *   by cmocka_run_group_tests(tests, cli_group_setup, cli_group_teardown).
 *
 * Directories. cli_group_setup makes a private mkdtemp directory, `root`,
 * which holds the captured stdout and stderr and nothing else of the
 * commands'; cli_group_teardown removes it and all it holds. cli_test_setup
 * gives each test a fresh working directory `work` (root/t1, root/t2, ...)
 * holding in.pgm (make_input's image) and good.mmp (good_mmp). Commands run
 * there, and names given to the helpers (wpath, put_file, look, exists,
 * assert_content, assert_text) are names in it.
 *
 * Commands. run(fmt, ...) runs `sh -c` on the formatted command in the
 * working directory with $ENC and $DEC set to the binaries of $MMP_BIN,
 * stdin from /dev/null, and returns its exit status; its stdout and stderr
 * are in cap_out and cap_err (as strings, cut to their sizes). A command
 * killed by a signal fails the test.
 *
 * Checks. expect_fail: the exit status, exactly one line on stderr
 * "PROG: ..." holding one or two needles, nothing on stdout, and the working
 * directory as it was (no output, no temporary file, nothing removed).
 * expect_fail_line: the same but for the working directory, where only
 * temporary files are looked for (a command that fails after writing its
 * output). expect_ok: exit 0, nothing on stderr, no temporary file.
 * one_line: the stderr line alone (warnings of a command that succeeds).
 *
 * State:
 *   bin                    $MMP_BIN, or NULL (need_bin skips the test)
 *   root, work             the mkdtemp directory, the current test's one
 *   cap_out, cap_err       what the last run() wrote on stdout, stderr
 *   good_mmp, good_len     in.pgm encoded by the library, default settings
 *   good_pgm, good_pgm_len good_mmp decoded, as mmp-dec writes it
 */
#ifndef MMP_TESTS_CLI_HARNESS_H
#define MMP_TESTS_CLI_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"
#include "util.h"

static const char *bin;          /* $MMP_BIN */
static char root[64];            /* mkdtemp directory: captures live here */
static char work[128];           /* root/tN: the current test's directory */
static char cap_out[16384], cap_err[4096];
static uint8_t *good_mmp;        /* in.pgm encoded by the library, default settings */
static size_t good_len;
static uint8_t *good_pgm;        /* good_mmp decoded, as mmp-dec writes it */
static size_t good_pgm_len;

static char cli_out_path[128], cli_err_path[128]; /* the captures */
static mmp_image cli_input;                       /* in.pgm */
static int cli_ntest;                             /* the N of root/tN */

/* ---------------------------------------------------------------- files */

static inline void need_bin(void)
{
    if (!bin) {
        print_message("MMP_BIN is not set (make check sets it to bin/): skipping\n");
        skip();
    }
}

/* The path of `name` in the working directory. */
static inline void wpath(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", work, name);
}

/* Writes len bytes to `name` (replacing it); fails the test on any error. */
static inline void put_file(const char *name, const void *data, size_t len)
{
    char p[512];
    wpath(p, sizeof p, name);
    write_file(p, data, len);
}

/* lstat of `name`; 0 when it exists (a dangling link does). */
static inline int look(const char *name, struct stat *sb)
{
    char p[512];
    wpath(p, sizeof p, name);
    return lstat(p, sb);
}

static inline int exists(const char *name)
{
    struct stat sb;
    return look(name, &sb) == 0;
}

/* The file `name` (links followed) holds exactly data[0..len). */
static inline void assert_content(const char *name, const void *data, size_t len)
{
    char p[512];
    size_t n;
    wpath(p, sizeof p, name);
    uint8_t *d = slurp(p, &n);
    if (!d)
        fail_msg("cannot read %s", name);
    if (n != len || memcmp(d, data, len)) {
        size_t at = 0;
        while (at < n && at < len && d[at] == ((const uint8_t *)data)[at])
            at++;
        free(d);
        fail_msg("%s holds %zu bytes, not the %zu expected (first difference at byte %zu)",
                 name, n, len, at);
    }
    free(d);
}

/* The file `name` holds exactly the string text. */
static inline void assert_text(const char *name, const char *text)
{
    assert_content(name, text, strlen(text));
}

/* No temporary file (NAME.tmpXXXXXX) in the working directory. */
static inline void assert_no_temp(void)
{
    DIR *d = opendir(work);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp")) {
            closedir(d);
            fail_msg("a temporary file was left behind: %s", e->d_name);
        }
    closedir(d);
}

/* The names in the working directory, sorted, as "\nNAME\n...NAME\n" (no
 * . and ..): a snapshot for cli_first_missing. */
static inline void cli_dir_names(char *buf, size_t n)
{
    struct dirent **e;
    const int k = scandir(work, &e, NULL, alphasort);
    if (k < 0)
        fail_msg("cannot list %s: %s", work, strerror(errno));
    size_t at = (size_t)snprintf(buf, n, "\n");
    for (int i = 0; i < k; i++) {
        if (strcmp(e[i]->d_name, ".") && strcmp(e[i]->d_name, "..") && at < n)
            at += (size_t)snprintf(buf + at, n - at, "%s\n", e[i]->d_name);
        free(e[i]);
    }
    free(e);
    if (at >= n)
        fail_msg("too many names in %s", work);
}

/* The first name of snapshot a that snapshot b lacks, in name; NULL when
 * there is none. */
static inline const char *cli_first_missing(const char *a, const char *b, char *name, size_t n)
{
    for (const char *p = a + 1, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
        snprintf(name, n, "\n%.*s\n", (int)(nl - p), p);
        if (!strstr(b, name)) {
            snprintf(name, n, "%.*s", (int)(nl - p), p);
            return name;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------- commands */

/* Runs `sh -c CMD` in the working directory; $ENC and $DEC in CMD stand for
 * the binaries. Returns the exit status; stdout and stderr are in cap_out
 * and cap_err. */
static inline int run(const char *fmt, ...)
{
    char cmd[2048], full[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full,
             "cd '%s' && ENC='%s/mmp-enc' && DEC='%s/mmp-dec' && (%s) >'%s' 2>'%s' </dev/null",
             work, bin, bin, cmd, cli_out_path, cli_err_path);
    /* The shell expands $ENC and $DEC. */
    const int st = system(full);
    assert_true(st != -1);
    if (!WIFEXITED(st))
        fail_msg("'%s' did not exit normally (status %#x)", cmd, st);
    size_t n;
    uint8_t *b = slurp(cli_out_path, &n);
    snprintf(cap_out, sizeof cap_out, "%s", b ? (char *)b : "");
    free(b);
    b = slurp(cli_err_path, &n);
    snprintf(cap_err, sizeof cap_err, "%s", b ? (char *)b : "");
    free(b);
    return WEXITSTATUS(st);
}

/* stderr is exactly one line "PROG: ..." containing each needle (NULL: no
 * needle). */
static inline void one_line(const char *cmd, const char *prog, const char *n1, const char *n2)
{
    const size_t len = strlen(cap_err);
    const char *nl = strchr(cap_err, '\n');
    if (len == 0 || !nl || nl != cap_err + len - 1)
        fail_msg("'%s': stderr is not exactly one line: '%s'", cmd, cap_err);
    if (strncmp(cap_err, prog, strlen(prog)) || strncmp(cap_err + strlen(prog), ": ", 2))
        fail_msg("'%s': stderr does not start with '%s: ': %s", cmd, prog, cap_err);
    if (n1 && !strstr(cap_err, n1))
        fail_msg("'%s': stderr does not mention '%s': %s", cmd, n1, cap_err);
    if (n2 && !strstr(cap_err, n2))
        fail_msg("'%s': stderr does not mention '%s': %s", cmd, n2, cap_err);
}

/* A command that must fail with `status` and one line "PROG: ..." naming
 * needle (and needle2 when not NULL), with nothing on stdout and no
 * temporary file left; what else it leaves in the working directory is not
 * checked (see expect_fail). */
static inline void expect_fail_line(int status, const char *prog, const char *needle,
                                    const char *needle2, const char *cmd)
{
    const int st = run("%s", cmd);
    if (st != status)
        fail_msg("'%s': exit %d, want %d (stderr: %s)", cmd, st, status, cap_err);
    one_line(cmd, prog, needle, needle2);
    if (cap_out[0])
        fail_msg("'%s': unexpected stdout: %.200s", cmd, cap_out);
    assert_no_temp();
}

/* expect_fail_line, and the working directory left as it was: no output,
 * no name added or removed. */
static inline void expect_fail(int status, const char *prog, const char *needle,
                               const char *needle2, const char *cmd)
{
    char before[4096], after[4096], name[300];
    cli_dir_names(before, sizeof before);
    expect_fail_line(status, prog, needle, needle2, cmd);
    cli_dir_names(after, sizeof after);
    if (cli_first_missing(after, before, name, sizeof name))
        fail_msg("'%s': left %s behind", cmd, name);
    if (cli_first_missing(before, after, name, sizeof name))
        fail_msg("'%s': removed %s", cmd, name);
}

/* A command that must succeed with nothing on stderr and no temporary
 * file. */
static inline void expect_ok(const char *cmd)
{
    const int st = run("%s", cmd);
    if (st != 0)
        fail_msg("'%s': exit %d, want 0 (stderr: %s)", cmd, st, cap_err);
    if (cap_err[0])
        fail_msg("'%s': unexpected stderr: %s", cmd, cap_err);
    assert_no_temp();
}

/* ------------------------------------------------------ setup, teardown */

/* The input: the 40x24 crop of camera.pgm at (230,240), or a gradient when
 * the images are not at hand (the CLI tests need no particular content). */
static inline void make_input(mmp_image *c)
{
    if (load_crop("camera", 230, 240, 40, 24, c) == 0)
        return;
    assert_int_equal(mmp_image_alloc(c, 40, 24, 255), MMP_OK);
    for (int i = 0; i < 40 * 24; i++)
        c->pix[i] = (uint16_t)((i % 40) * 5 + (i / 40) * 2 + (i * 7919 % 13));
}

/* img as a PGM file at path: 0, or -1 on any error. */
static inline int cli_write_pgm(const char *path, const mmp_image *img)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    const int e = mmp_pnm_write(f, img, 0);
    return fclose(f) || e ? -1 : 0;
}

/* The group's setup: bin, root, the input, good_mmp and good_pgm. */
static inline int cli_group_setup(void **state)
{
    (void)state;
    bin = getenv("MMP_BIN");
    if (bin && !*bin)
        bin = NULL;
    snprintf(root, sizeof root, "/tmp/mmp-cli-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    snprintf(cli_out_path, sizeof cli_out_path, "%s/stdout", root);
    snprintf(cli_err_path, sizeof cli_err_path, "%s/stderr", root);
    make_input(&cli_input);
    mmp_settings s;
    mmp_default_settings(&s);
    mmp_image d = {0};
    if (mmp_encode(&s, &cli_input, &good_mmp, &good_len, NULL, NULL, NULL, 0) ||
        mmp_decode(good_mmp, good_len, &d, NULL, 0))
        return -1;
    char p[128];
    snprintf(p, sizeof p, "%s/ref.pgm", root);
    const int e = cli_write_pgm(p, &d);
    mmp_image_free(&d);
    if (e)
        return -1;
    good_pgm = slurp(p, &good_pgm_len);
    return good_pgm && unlink(p) == 0 ? 0 : -1;
}

static inline int cli_group_teardown(void **state)
{
    (void)state;
    char cmd[256];
    free(good_mmp);
    free(good_pgm);
    mmp_image_free(&cli_input);
    /* Our own mkdtemp directory, nothing else. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* Each test's setup: a fresh working directory holding in.pgm (the image
 * good_mmp codes) and good.mmp. */
static inline int cli_test_setup(void **state)
{
    (void)state;
    snprintf(work, sizeof work, "%s/t%d", root, ++cli_ntest);
    if (mkdir(work, 0755))
        return -1;
    char p[512];
    wpath(p, sizeof p, "in.pgm");
    if (cli_write_pgm(p, &cli_input))
        return -1;
    wpath(p, sizeof p, "good.mmp");
    FILE *f = fopen(p, "wb");
    return f && fwrite(good_mmp, 1, good_len, f) == good_len && fclose(f) == 0 ? 0 : -1;
}

#endif
