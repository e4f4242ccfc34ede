/*
 * Tests of how bin/mmp-enc and bin/mmp-dec treat their output paths: no run
 * may destroy a file the user did not ask to lose.
 *
 *  - Outputs that are not regular files (character devices, FIFOs, sockets,
 *    and whatever a symbolic link points to) are written in place, never
 *    replaced by a regular file; a link stays a link.
 *  - Replacing a regular file keeps its mode; one with several hard links
 *    is refused (exit 1) and left as it is.
 *  - Any two of IN, OUT and --recon naming the same file (compared by device
 *    and inode, not by name; two '-' outputs are one standard output) is a
 *    usage error (exit 2) before anything is written.
 *  - A failed write to stdout, informational output included, is exit 1
 *    with one line.
 *  - Messages name the option the user gave (--cl-device or MMP_CL_DEVICE)
 *    and the file once.
 *  - A late output (mmp_cli_output.late, mmp-enc-mpi's) has no temporary
 *    file between the check and the write, and is written all the same.
 *
 * The binaries come from $MMP_BIN (make check sets it; the tests skip
 * without it). Each test runs in its own directory under a private mkdtemp
 * directory (the harness: tests/cli_harness.h), with device nodes (mknod:
 * the case is skipped where that is not permitted), FIFOs, sockets and
 * links it makes itself; nothing outside it is ever named as an output. A
 * FIFO or socket reader runs under a timeout, and so does every command
 * that writes to one, so that a binary that never opens it cannot hang the
 * suite.
 */
/* S_IFMT and its kinds, mknod's major() and minor(). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mmp/cli/cli.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"
#include "cli_harness.h"

/* ---------------------------------------------------------------- helpers */

static const char *type_name(mode_t m)
{
    return S_ISREG(m) ? "a regular file" : S_ISCHR(m) ? "a character device" : S_ISFIFO(m) ? "a FIFO"
         : S_ISLNK(m) ? "a symbolic link" : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory"
         : "something else";
}

/* `name` itself (not followed) is still of the type in `want`. */
static void assert_type(const char *name, mode_t want)
{
    struct stat sb;
    if (look(name, &sb) != 0)
        fail_msg("%s is gone", name);
    if ((sb.st_mode & S_IFMT) != want)
        fail_msg("%s is now %s, no longer %s", name, type_name(sb.st_mode), type_name(want));
}

/* mknod NAME c MAJOR MINOR of an existing device (/dev/null, /dev/full);
 * skips the test where that is not permitted. */
static void make_node(const char *name, const char *like)
{
    struct stat sb;
    if (stat(like, &sb) != 0 || !S_ISCHR(sb.st_mode)) {
        print_message("%s is not a character device here: skipping\n", like);
        skip();
    }
    if (run("mknod '%s' c %u %u", name, (unsigned)major(sb.st_rdev), (unsigned)minor(sb.st_rdev)) != 0 ||
        !exists(name)) {
        print_message("mknod is not permitted here (%s): skipping\n", cap_err);
        skip();
    }
    assert_type(name, S_IFCHR);
}

/* The OpenCL devices (mmp-enc --list-devices): 1 when it lists some, with
 * its output in cap_out; 0 when it cannot (no opencl engine, no platform). */
static int list_devices(void)
{
    return run("$ENC --list-devices") == 0 && strstr(cap_out, "0:0") != NULL;
}

/* ------------------------------------------------- not regular outputs */

/* A character device at the output path (a copy of /dev/null) is written
 * in place, never replaced; the same through a symbolic link to it. */
static void test_enc_device_output(void **state)
{
    (void)state;
    need_bin();
    make_node("null", "/dev/null");
    expect_ok("$ENC --quiet in.pgm null");
    assert_type("null", S_IFCHR);
    char p[256];
    wpath(p, sizeof p, "tonull");
    assert_int_equal(symlink("null", p), 0);
    expect_ok("$ENC --quiet --recon tonull in.pgm OUT.mmp");
    assert_type("tonull", S_IFLNK);
    assert_type("null", S_IFCHR);
    assert_content("OUT.mmp", good_mmp, good_len);
}

static void test_dec_device_output(void **state)
{
    (void)state;
    need_bin();
    make_node("null", "/dev/null");
    expect_ok("$DEC good.mmp -o null");
    assert_type("null", S_IFCHR);
    char p[256];
    wpath(p, sizeof p, "tonull");
    assert_int_equal(symlink("null", p), 0);
    expect_ok("$DEC good.mmp -o tonull");
    assert_type("tonull", S_IFLNK);
    assert_type("null", S_IFCHR);
}

/* A device that fails the write (a copy of /dev/full): exit 1 naming it,
 * the node stays, and the --recon written beside it is not left behind, nor
 * is an older --recon file lost. */
static void test_enc_device_write_error(void **state)
{
    (void)state;
    need_bin();
    make_node("full", "/dev/full");
    expect_fail(1, "mmp-enc", "full", NULL, "$ENC --quiet --recon R.pgm in.pgm full");
    assert_type("full", S_IFCHR);
    assert_false(exists("R.pgm"));
    put_file("R.pgm", "keep", 4);
    expect_fail(1, "mmp-enc", "full", NULL, "$ENC --quiet --recon R.pgm in.pgm full");
    assert_text("R.pgm", "keep");
    expect_fail(1, "mmp-dec", "full", NULL, "$DEC good.mmp -o full");
    assert_type("full", S_IFCHR);
}

/* Writing a FIFO: a reader under a timeout gets the whole file, the FIFO
 * stays; through a symbolic link too. The writer runs under a timeout as
 * well, in case it opens the FIFO after the reader has given up. */
static void fifo_case(const char *writer, const char *fifo, const void *want, size_t want_len)
{
    char p[256];
    wpath(p, sizeof p, "got");
    unlink(p);
    int st = run("timeout 20 cat fifo > got & r=$!; timeout 30 %s; s=$?; wait $r; exit $s", writer);
    if (st != 0)
        fail_msg("'%s': exit %d, want 0 (stderr: %s)", writer, st, cap_err);
    if (cap_err[0])
        fail_msg("'%s': unexpected stderr: %s", writer, cap_err);
    assert_type("fifo", S_IFIFO);
    if (strcmp(fifo, "fifo"))
        assert_type(fifo, S_IFLNK);
    assert_content("got", want, want_len);
    assert_no_temp();
}

static void test_enc_fifo_output(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    fifo_case("$ENC --quiet in.pgm fifo", "fifo", good_mmp, good_len);
    wpath(p, sizeof p, "tofifo");
    assert_int_equal(symlink("fifo", p), 0);
    fifo_case("$ENC --quiet in.pgm tofifo", "tofifo", good_mmp, good_len);
    /* The reconstruction into the FIFO, the .mmp into a file. */
    fifo_case("$ENC --quiet --recon fifo in.pgm OUT.mmp", "fifo", good_pgm, good_pgm_len);
    assert_content("OUT.mmp", good_mmp, good_len);
}

static void test_dec_fifo_output(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    fifo_case("$DEC good.mmp -o fifo", "fifo", good_pgm, good_pgm_len);
    wpath(p, sizeof p, "tofifo");
    assert_int_equal(symlink("fifo", p), 0);
    fifo_case("$DEC good.mmp -o tofifo", "tofifo", good_pgm, good_pgm_len);
}

/* A Unix socket at the output path: the encoder connects and writes; the
 * socket stays. The listener is a child under alarm(). */
static void test_enc_socket_output(void **state)
{
    (void)state;
    need_bin();
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    char sp[256];
    wpath(sp, sizeof sp, "sock");
    if (strlen(sp) >= sizeof a.sun_path)
        skip();
    memcpy(a.sun_path, sp, strlen(sp) + 1);
    const int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 1), 0);
    char got[256];
    wpath(got, sizeof got, "got");
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        const int c = accept(ls, NULL, NULL);
        FILE *f = fopen(got, "wb");
        char buf[4096];
        ssize_t k;
        while (c >= 0 && f && (k = read(c, buf, sizeof buf)) > 0)
            fwrite(buf, 1, (size_t)k, f);
        _exit(c >= 0 && f && fclose(f) == 0 ? 0 : 1);
    }
    close(ls);
    const int st = run("timeout 30 $ENC --quiet in.pgm sock");
    int cst;
    waitpid(pid, &cst, 0);
    if (st != 0)
        fail_msg("exit %d, want 0 (stderr: %s)", st, cap_err);
    assert_type("sock", S_IFSOCK);
    if (!WIFEXITED(cst) || WEXITSTATUS(cst) != 0)
        fail_msg("the socket's listener got no connection (status %#x)", cst);
    assert_content("got", good_mmp, good_len);
    assert_no_temp();
}

/* A symbolic link to a regular file: the target is replaced (keeping its
 * mode), the link stays; a dangling link creates its target. */
static void test_symlink_output(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    put_file("target.mmp", "old", 3);
    wpath(p, sizeof p, "target.mmp");
    assert_int_equal(chmod(p, 0600), 0);
    wpath(p, sizeof p, "link.mmp");
    assert_int_equal(symlink("target.mmp", p), 0);
    expect_ok("umask 022 && $ENC --quiet in.pgm link.mmp");
    assert_type("link.mmp", S_IFLNK);
    assert_type("target.mmp", S_IFREG);
    assert_content("target.mmp", good_mmp, good_len);
    struct stat sb;
    assert_int_equal(look("target.mmp", &sb), 0);
    if ((sb.st_mode & 0777) != 0600)
        fail_msg("target.mmp has mode %03o, was 600", (unsigned)(sb.st_mode & 0777));

    wpath(p, sizeof p, "dangling.pgm");
    assert_int_equal(symlink("made.pgm", p), 0);
    expect_ok("$DEC good.mmp -o dangling.pgm");
    assert_type("dangling.pgm", S_IFLNK);
    assert_type("made.pgm", S_IFREG);
    assert_content("made.pgm", good_pgm, good_pgm_len);
    expect_ok("$ENC --quiet --recon dangling.pgm in.pgm OUT.mmp");
    assert_type("dangling.pgm", S_IFLNK);
    assert_content("made.pgm", good_pgm, good_pgm_len);
}

/* ------------------------------------------------------- regular files */

/* Replacing a file keeps its mode (0600 stays 0600 under umask 022). */
static void test_replace_keeps_mode(void **state)
{
    (void)state;
    need_bin();
    const char *names[] = {"OUT.mmp", "OUT.pgm", "R.pgm"};
    for (int i = 0; i < 3; i++) {
        char p[256];
        put_file(names[i], "old", 3);
        wpath(p, sizeof p, names[i]);
        assert_int_equal(chmod(p, 0600), 0);
    }
    expect_ok("umask 022 && $ENC --quiet --recon R.pgm in.pgm OUT.mmp && $DEC good.mmp -o OUT.pgm");
    assert_content("OUT.mmp", good_mmp, good_len);
    assert_content("OUT.pgm", good_pgm, good_pgm_len);
    for (int i = 0; i < 3; i++) {
        struct stat sb;
        assert_int_equal(look(names[i], &sb), 0);
        if ((sb.st_mode & 0777) != 0600)
            fail_msg("%s has mode %03o after being replaced, was 600", names[i],
                     (unsigned)(sb.st_mode & 0777));
    }
}

/* An output with several hard links is refused (exit 1, one line saying
 * why) and every link keeps its content and its inode. */
static void test_hard_links_refused(void **state)
{
    (void)state;
    need_bin();
    char a[256], b[256];
    put_file("OUT.mmp", "old", 3);
    wpath(a, sizeof a, "OUT.mmp");
    wpath(b, sizeof b, "other.mmp");
    assert_int_equal(link(a, b), 0);
    put_file("OUT.pgm", "old", 3);
    wpath(a, sizeof a, "OUT.pgm");
    wpath(b, sizeof b, "other.pgm");
    assert_int_equal(link(a, b), 0);
    struct stat before, after, before_pgm, after_pgm;
    assert_int_equal(look("OUT.mmp", &before), 0);
    assert_int_equal(look("OUT.pgm", &before_pgm), 0);
    expect_fail(1, "mmp-enc", "OUT.mmp", "hard links", "$ENC --quiet in.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "OUT.pgm", "hard links", "$ENC --quiet --recon OUT.pgm in.pgm x.mmp");
    assert_false(exists("x.mmp"));
    expect_fail(1, "mmp-dec", "OUT.pgm", "hard links", "$DEC good.mmp -o OUT.pgm");
    assert_int_equal(look("OUT.mmp", &after), 0);
    assert_int_equal(look("OUT.pgm", &after_pgm), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_nlink, 2);
    assert_int_equal(after_pgm.st_ino, before_pgm.st_ino);
    assert_int_equal(after_pgm.st_nlink, 2);
    assert_text("OUT.mmp", "old");
    assert_text("other.mmp", "old");
    assert_text("OUT.pgm", "old");
    assert_text("other.pgm", "old");
}

/* When the .mmp cannot be written, an existing --recon file is kept. */
static void test_enc_recon_kept_on_failure(void **state)
{
    (void)state;
    need_bin();
    put_file("R.pgm", "keep", 4);
    expect_fail(1, "mmp-enc", "nodir/OUT.mmp", NULL, "$ENC --quiet --recon R.pgm in.pgm nodir/OUT.mmp");
    assert_text("R.pgm", "keep");
}

/* ---------------------------------------------------------- same files */

static void test_enc_same_in_out(void **state)
{
    (void)state;
    need_bin();
    /* The input is named without extension, as an output may be. */
    put_file("a", good_pgm, good_pgm_len);
    expect_fail(2, "mmp-enc", "same file", "input a", "$ENC --quiet a a");
    assert_content("a", good_pgm, good_pgm_len);
    /* Not by name: another spelling, a symbolic link, a hard link. */
    expect_fail(2, "mmp-enc", "same file", NULL, "$ENC --quiet ./a a");
    expect_fail(2, "mmp-enc", "same file", NULL, "$ENC --quiet a -o ./a");
    char a[256], p[256];
    wpath(a, sizeof a, "a");
    wpath(p, sizeof p, "sym.mmp");
    assert_int_equal(symlink("a", p), 0);
    expect_fail(2, "mmp-enc", "same file", NULL, "$ENC --quiet a sym.mmp");
    wpath(p, sizeof p, "hard.mmp");
    assert_int_equal(link(a, p), 0);
    expect_fail(2, "mmp-enc", "same file", NULL, "$ENC --quiet a hard.mmp");
    /* Standard input is the input file: the output may not be it either. */
    expect_fail(2, "mmp-enc", "same file", NULL, "$ENC --quiet - a < a");
    assert_content("a", good_pgm, good_pgm_len);
    assert_type("sym.mmp", S_IFLNK);
}

static void test_enc_recon_is_input(void **state)
{
    (void)state;
    need_bin();
    put_file("b.pgm", good_pgm, good_pgm_len);
    expect_fail(2, "mmp-enc", "same file", "--recon", "$ENC --quiet --recon b.pgm b.pgm b.mmp");
    assert_content("b.pgm", good_pgm, good_pgm_len);
    assert_false(exists("b.mmp"));
}

static void test_enc_recon_is_output(void **state)
{
    (void)state;
    need_bin();
    /* Neither exists yet: the same name in the same directory. */
    expect_fail(2, "mmp-enc", "same file", "--recon", "$ENC --quiet --recon X in.pgm X");
    assert_false(exists("X"));
    expect_fail(2, "mmp-enc", "same file", "--recon", "$ENC --quiet --recon ./X in.pgm X");
    assert_false(exists("X"));
    put_file("X", "keep", 4);
    expect_fail(2, "mmp-enc", "same file", "--recon", "$ENC --quiet --recon X in.pgm ./X");
    assert_text("X", "keep");
    /* --recon to stdout while stdout is the output file. */
    expect_fail(2, "mmp-enc", "same file", "--recon", "$ENC --quiet --recon - in.pgm X > X");
}

/* Two '-' outputs are one standard output: a usage error, nothing written. */
static void test_enc_two_stdout(void **state)
{
    (void)state;
    need_bin();
    expect_fail(2, "mmp-enc", "standard output", "--recon", "$ENC --quiet --recon - - - < in.pgm");
    expect_fail(2, "mmp-enc", "standard output", "--recon", "$ENC --quiet --recon - in.pgm -");
    /* Standard input and standard output do not clash. */
    expect_ok("$ENC --quiet - - < in.pgm > x.mmp");
    assert_content("x.mmp", good_mmp, good_len);
}

static void test_dec_same_in_out(void **state)
{
    (void)state;
    need_bin();
    /* The input is named without extension, as an output may be. */
    put_file("c", good_mmp, good_len);
    expect_fail(2, "mmp-dec", "same file", "input c", "$DEC c -o c");
    assert_content("c", good_mmp, good_len);
    expect_fail(2, "mmp-dec", "same file", NULL, "$DEC - -o c < c");
    assert_content("c", good_mmp, good_len);
    put_file("c.mmp", good_mmp, good_len);
    /* The derived output name d.pgm is a link to the input d.mmp. */
    char p[256];
    put_file("d.mmp", good_mmp, good_len);
    wpath(p, sizeof p, "d.pgm");
    assert_int_equal(symlink("d.mmp", p), 0);
    expect_fail(2, "mmp-dec", "same file", "d.pgm", "$DEC d.mmp");
    assert_content("d.mmp", good_mmp, good_len);
    assert_type("d.pgm", S_IFLNK);
    /* stdin and stdout do not clash. */
    expect_ok("$DEC - < c.mmp > y.pgm");
    assert_content("y.pgm", good_pgm, good_pgm_len);
}

/* ------------------------------------------------------------- stdout */

/* Informational output to a full stdout: exit 1 with one line. */
static void test_stdout_info_write_error(void **state)
{
    (void)state;
    need_bin();
    struct stat sb;
    if (stat("/dev/full", &sb) != 0 || !S_ISCHR(sb.st_mode))
        skip();
    const char *cmds[] = {"$ENC --quiet --stats in.pgm OUT.mmp >/dev/full",
                          "$ENC -h >/dev/full",
                          "$ENC --version >/dev/full",
                          "$DEC --stats good.mmp -o OUT.pgm >/dev/full",
                          "$DEC --help >/dev/full",
                          "$ENC --help-all >/dev/full",
                          "$DEC --help-all >/dev/full",
                          "$DEC --version >/dev/full"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *prog = cmds[i][1] == 'E' ? "mmp-enc" : "mmp-dec";
        /* --stats comes after the output is written: only the status and
         * the line are checked, not whether OUT.mmp or OUT.pgm stays. */
        if (strstr(cmds[i], "--stats"))
            expect_fail_line(1, prog, "standard output", NULL, cmds[i]);
        else
            expect_fail(1, prog, "standard output", NULL, cmds[i]);
    }
    if (list_devices())
        expect_fail(1, "mmp-enc", "standard output", NULL, "$ENC --list-devices >/dev/full");
    else
        print_message("no OpenCL device listed: --list-devices case skipped\n");
}

/* --stats goes to stderr whenever stdout carries an output, --recon
 * included, so that the PGM on stdout stays clean. */
static void test_enc_stats_with_recon_stdout(void **state)
{
    (void)state;
    need_bin();
    int st = run("$ENC --quiet --stats --recon - in.pgm OUT.mmp > r.pgm");
    if (st != 0)
        fail_msg("exit %d (stderr: %s)", st, cap_err);
    if (!strstr(cap_err, "bytes="))
        fail_msg("no --stats line on stderr: %s", cap_err);
    assert_content("r.pgm", good_pgm, good_pgm_len);
    assert_content("OUT.mmp", good_mmp, good_len);
}

/* --help-all says how outputs are treated. */
static void test_help_describes_outputs(void **state)
{
    (void)state;
    need_bin();
    const char *progs[] = {"$ENC", "$DEC"};
    const char *words[] = {"hard link", "FIFO", "symbolic link", "different files"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run("%s --help-all", progs[i]), 0);
        for (int k = 0; k < 4; k++)
            if (!strstr(cap_out, words[k]))
                fail_msg("%s --help-all does not mention '%s'", progs[i], words[k]);
    }
}

/* ------------------------------------------------------------ messages */

static void test_dec_missing_input_named_once(void **state)
{
    (void)state;
    need_bin();
    assert_int_equal(run("$DEC nope.mmp"), 1);
    assert_string_equal(cap_err, "mmp-dec: cannot open nope.mmp: No such file or directory\n");
    assert_false(exists("nope.pgm"));
}

/* -e opencl with a device that matches none: one line naming the setting
 * as given. */
static void test_cl_device_no_match(void **state)
{
    (void)state;
    need_bin();
    if (!list_devices())
        skip();
    expect_fail(1, "mmp-enc", "--cl-device 5:0: ", "no OpenCL device matches '5:0'",
                "$ENC --quiet -e opencl --cl-device 5:0 in.pgm OUT.mmp");
    expect_fail(1, "mmp-enc", "MMP_CL_DEVICE", "no OpenCL device matches '5:0'",
                "MMP_CL_DEVICE=5:0 $ENC --quiet -e opencl in.pgm OUT.mmp");
    /* The option overrides the environment and is the one named. */
    expect_fail(1, "mmp-enc", "--cl-device 7:0: ", "'7:0'",
                "MMP_CL_DEVICE=0:0 $ENC --quiet -e opencl --cl-device 7:0 in.pgm OUT.mmp");
    assert_false(exists("OUT.mmp"));
}

/* -e auto with a named device that is not a GPU: it falls back to a CPU
 * engine, with a warning naming the setting (none under --quiet). */
static void test_auto_fallback_warns(void **state)
{
    (void)state;
    need_bin();
    const char *line = list_devices() ? strstr(cap_out, " 0:0 ") : NULL;
    const char *end = line ? strchr(line, '\n') : NULL;
    const char *gpu = line ? strstr(line, "[GPU]") : NULL;
    if (!line || (gpu && (!end || gpu < end))) {
        print_message("no non-GPU OpenCL device 0:0: skipping\n");
        skip();
    }
    const char *cmd = "$ENC -e auto --cl-device 0:0 in.pgm OUT.mmp";
    assert_int_equal(run("%s", cmd), 0);
    one_line(cmd, "mmp-enc", "warning", "--cl-device 0:0");
    if (!strstr(cap_err, "-e auto") || !strstr(cap_err, "CPU engine"))
        fail_msg("the warning does not say that -e auto uses a CPU engine: %s", cap_err);
    assert_content("OUT.mmp", good_mmp, good_len);
    cmd = "MMP_CL_DEVICE=0:0 $ENC -e auto in.pgm OUT2.mmp";
    assert_int_equal(run("%s", cmd), 0);
    one_line(cmd, "mmp-enc", "warning", "MMP_CL_DEVICE");
    expect_ok("$ENC --quiet -e auto --cl-device 0:0 in.pgm OUT3.mmp");
    assert_content("OUT3.mmp", good_mmp, good_len);
}

/* Files of this test's directory whose names hold ".tmp". */
static int temporaries(void)
{
    DIR *d = opendir(work);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, ".tmp") != NULL;
    closedir(d);
    return n;
}

static int write_text(void *opaque, void *file)
{
    return fputs(opaque, file) >= 0 ? 0 : MMP_EIO;
}

/* A late output (mmp-enc-mpi's, whose process MPI may end without its
 * handlers): the check leaves no temporary file behind, yet refuses what
 * cannot be written; the write makes one, fills it and renames it. */
static void test_late_temporaries(void **state)
{
    (void)state;
    char err[512], late_path[512], early_path[512], bad_path[512];
    wpath(late_path, sizeof late_path, "late.mmp");
    wpath(early_path, sizeof early_path, "early.mmp");
    wpath(bad_path, sizeof bad_path, "no/such/dir.mmp");
    mmp_cli_output early = {.path = early_path, .what = "output", .write = write_text,
                            .opaque = "early\n"};
    mmp_cli_output late = {.path = late_path, .what = "output", .write = write_text,
                           .opaque = "late\n", .late = 1};
    mmp_cli_output bad = {.path = bad_path, .what = "output", .write = write_text, .opaque = "",
                          .late = 1};
    assert_int_equal(mmp_cli_outputs_check(NULL, &early, 1, err, sizeof err), 0);
    assert_int_equal(temporaries(), 1);
    assert_int_equal(mmp_cli_outputs_check(NULL, &late, 1, err, sizeof err), 0);
    assert_int_equal(temporaries(), 1); /* early's alone */
    assert_int_equal(mmp_cli_outputs_write(&late, 1, err, sizeof err), 0);
    assert_int_equal(mmp_cli_outputs_write(&early, 1, err, sizeof err), 0);
    mmp_cli_outputs_free(&late, 1);
    mmp_cli_outputs_free(&early, 1);
    assert_content("late.mmp", "late\n", 5);
    assert_content("early.mmp", "early\n", 6);
    assert_int_equal(temporaries(), 0);
    assert_int_equal(mmp_cli_outputs_check(NULL, &bad, 1, err, sizeof err), MMP_EIO);
    mmp_cli_outputs_free(&bad, 1);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, cli_test_setup)
    const struct CMUnitTest tests[] = {
        T(test_enc_device_output),
        T(test_dec_device_output),
        T(test_enc_device_write_error),
        T(test_enc_fifo_output),
        T(test_dec_fifo_output),
        T(test_enc_socket_output),
        T(test_symlink_output),
        T(test_replace_keeps_mode),
        T(test_hard_links_refused),
        T(test_enc_recon_kept_on_failure),
        T(test_enc_same_in_out),
        T(test_enc_recon_is_input),
        T(test_enc_recon_is_output),
        T(test_enc_two_stdout),
        T(test_dec_same_in_out),
        T(test_stdout_info_write_error),
        T(test_enc_stats_with_recon_stdout),
        T(test_help_describes_outputs),
        T(test_dec_missing_input_named_once),
        T(test_cl_device_no_match),
        T(test_auto_fallback_warns),
        T(test_late_temporaries),
    };
#undef T
    return cmocka_run_group_tests(tests, cli_group_setup, cli_group_teardown);
}
