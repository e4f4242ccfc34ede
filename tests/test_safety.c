/*
 * Tests of what bin/mmp-enc and bin/mmp-dec promise about the files they
 * touch: no run destroys a file its command line does not name, nothing is
 * written through a symbolic link the command line does not name, no input
 * is read further than it needs to be, and no temporary file outlives a run.
 *
 *  - A name mmp-dec makes from IN (no -o) never replaces a file (-f
 *    allows a regular one), and is never a link, a device or a FIFO.
 *  - A named output that is a symbolic link is written by the kernel
 *    through the link, in place: the file it leads to keeps its inode.
 *  - Standard output is a file, not the string "-": /dev/stdout, or the
 *    file stdout is redirected to, gets the output and never the --stats
 *    line; no output is named after a path under /dev or /proc.
 *  - mmp-dec stops at the first bytes of a file that is not an .mmp file,
 *    refuses a regular file too large before reading it, and refuses an
 *    image of more pixels than --max-pixels before decoding it.
 *  - SIGINT, SIGTERM and SIGHUP remove the temporary files and end the
 *    process by the signal; a signal ignored at start stays ignored.
 *  - Usage errors (exit 2) come before anything is read: an empty name,
 *    options that no image can use together; getopt's errors name the
 *    option as written; options an image has no use for are warned about.
 *  - Names of up to 255 bytes work: the temporary name stays short.
 *
 * The binaries come from $MMP_BIN (make check sets it; the tests skip
 * without it); each test runs in its own directory (tests/cli_harness.h).
 * Every command that could wait forever runs under a timeout, and every
 * command that could read gigabytes under a memory limit (ulimit -v), so
 * that a binary that breaks these promises fails the test instead of
 * hanging it or exhausting the machine.
 */
/* S_IFMT and its kinds, mknod's major() and minor(), lchown, kill. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"
#include "cli_harness.h"

/* ---------------------------------------------------------------- helpers */

/* The inode of `name` (links followed). */
static ino_t inode_of(const char *name)
{
    char p[256];
    struct stat sb;
    wpath(p, sizeof p, name);
    if (stat(p, &sb) != 0)
        fail_msg("%s is gone", name);
    return sb.st_ino;
}

/* `name` itself (not followed) is still of the type in `want`. */
static void assert_kind(const char *name, mode_t want)
{
    struct stat sb;
    if (look(name, &sb) != 0)
        fail_msg("%s is gone", name);
    if ((sb.st_mode & S_IFMT) != want)
        fail_msg("%s changed its type (mode %o, was %o)", name, (unsigned)(sb.st_mode & S_IFMT),
                 (unsigned)want);
}

static void make_link(const char *target, const char *name)
{
    char p[256];
    wpath(p, sizeof p, name);
    if (symlink(target, p) != 0)
        fail_msg("symlink %s: %s", name, strerror(errno));
}

/* img, encoded at lambda 30, into `mmp`, and as an image file into `img_name`
 * in the format of its kind. */
static void put_encoded(const mmp_image *img, const char *mmp, const char *img_name)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = 30;
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(mmp_encode(&s, img, &buf, &len, NULL, NULL, NULL, 0), MMP_OK);
    put_file(mmp, buf, len);
    free(buf);
    char p[256];
    wpath(p, sizeof p, img_name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(mmp_imagefile_write(f, img, mmp_imagefile_kind_format(img)), MMP_OK);
    assert_int_equal(fclose(f), 0);
}

static void make_image(mmp_image *img, int channels)
{
    assert_int_equal(mmp_image_alloc_channels(img, 24, 16, channels, 255), MMP_OK);
    for (size_t k = 0; k < (size_t)24 * 16 * (size_t)channels; k++)
        img->pix[k] = (uint16_t)((k * 37 + k / 24) % 256);
}

/* A copy of the character device `like` at `name`; 0 when mknod is not
 * permitted here. */
static int make_node(const char *name, const char *like)
{
    struct stat sb;
    char p[256];
    wpath(p, sizeof p, name);
    return stat(like, &sb) == 0 && S_ISCHR(sb.st_mode) &&
           mknod(p, S_IFCHR | 0666, sb.st_rdev) == 0;
}

/* 1 when the kernel refuses to follow another user's link in a sticky
 * world-writable directory (fs.protected_symlinks) for this process. */
static int kernel_protects_links(void)
{
    FILE *f = fopen("/proc/sys/fs/protected_symlinks", "r");
    int protect = 0;
    if (f) {
        if (fscanf(f, "%d", &protect) != 1)
            protect = 0;
        fclose(f);
    }
    return protect == 1;
}

/* ------------------------------------------------ 1. names made from IN */

/* mmp-dec without -o never replaces the file at the name it makes: the
 * original image beside x.mmp stays (grey, colour and alpha: .pgm, .ppm,
 * .pam), with one line naming -o and --force; -f and --force replace it. */
static void test_derived_name_never_replaces(void **state)
{
    (void)state;
    need_bin();
    static const struct {
        int channels;
        const char *mmp, *img;
    } kinds[] = {{1, "g.mmp", "g.pgm"}, {3, "c.mmp", "c.ppm"}, {4, "a.mmp", "a.pam"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        mmp_image img;
        make_image(&img, kinds[i].channels);
        put_encoded(&img, kinds[i].mmp, kinds[i].img);
        mmp_image_free(&img);
        char p[256], cmd[128];
        size_t len;
        wpath(p, sizeof p, kinds[i].img);
        uint8_t *orig = slurp(p, &len);
        assert_non_null(orig);
        snprintf(cmd, sizeof cmd, "$DEC %s", kinds[i].mmp);
        expect_fail(1, "mmp-dec", "-o", "--force", cmd);
        assert_content(kinds[i].img, orig, len);
        /* --quiet does not make it quiet about it either. */
        snprintf(cmd, sizeof cmd, "$DEC --quiet %s", kinds[i].mmp);
        expect_fail(1, "mmp-dec", kinds[i].img, "--force", cmd);
        assert_content(kinds[i].img, orig, len);
        /* --force: replaced by the decode, which -o writes alike. */
        snprintf(cmd, sizeof cmd, "$DEC --force %s && $DEC %s -o ref.%s", kinds[i].mmp,
                 kinds[i].mmp, kinds[i].img);
        expect_ok(cmd);
        char ref[64];
        snprintf(ref, sizeof ref, "ref.%s", kinds[i].img);
        wpath(p, sizeof p, ref);
        uint8_t *want = slurp(p, &len);
        assert_non_null(want);
        assert_content(kinds[i].img, want, len);
        free(want);
        snprintf(cmd, sizeof cmd, "$DEC -f %s", kinds[i].mmp);
        expect_ok(cmd);
        free(orig);
    }
}

/* ---------------------------------------------------- 2. links, devices */

/* A link planted at the name made from IN (here in a sticky world-writable
 * directory, owned by another user, as in /tmp) is refused and never
 * followed, with --force too: the file it points to keeps its content. So
 * are a device and a FIFO there (the FIFO is never opened: no hang). */
static void test_derived_name_never_followed(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "shared");
    assert_int_equal(mkdir(p, 0777), 0);
    assert_int_equal(chmod(p, 01777), 0);
    put_file("victim", "precious", 8);
    put_file("shared/x.mmp", good_mmp, good_len);
    char target[300];
    snprintf(target, sizeof target, "%s/victim", work);
    make_link(target, "shared/x.pgm");
    wpath(p, sizeof p, "shared/x.pgm");
    if (lchown(p, 65534, 65534) != 0)
        print_message("lchown to nobody not permitted: the link stays ours\n");
    expect_fail(1, "mmp-dec", "symbolic link", "-o", "$DEC shared/x.mmp");
    expect_fail(1, "mmp-dec", "symbolic link", NULL, "$DEC --force shared/x.mmp");
    assert_text("victim", "precious");
    assert_kind("shared/x.pgm", S_IFLNK);
    /* The same link named by -o is the user's to follow, as far as the
     * kernel lets anyone follow it. */
    if (kernel_protects_links() && geteuid() != 65534) {
        expect_fail(1, "mmp-dec", "Permission denied", NULL, "$DEC shared/x.mmp -o shared/x.pgm");
        assert_text("victim", "precious");
    } else {
        expect_ok("$DEC shared/x.mmp -o shared/x.pgm");
        assert_content("victim", good_pgm, good_pgm_len);
    }

    put_file("y.mmp", good_mmp, good_len);
    if (make_node("y.pgm", "/dev/null")) {
        expect_fail(1, "mmp-dec", "character device", "-o", "$DEC y.mmp");
        expect_fail(1, "mmp-dec", "character device", NULL, "$DEC -f y.mmp");
        assert_kind("y.pgm", S_IFCHR);
    } else {
        print_message("mknod not permitted: the device case is skipped\n");
    }
    put_file("z.mmp", good_mmp, good_len);
    wpath(p, sizeof p, "z.pgm");
    assert_int_equal(mkfifo(p, 0666), 0);
    expect_fail(1, "mmp-dec", "FIFO", "-o", "timeout 20 $DEC z.mmp");
    assert_kind("z.pgm", S_IFIFO);
}

/* A named output that is a symbolic link is opened by its name and the
 * file it leads to written in place (same inode, mode kept): no rename onto
 * a path read from the link. Where the kernel protects sticky directories
 * (fs.protected_symlinks), another user's link there is refused by it. */
static void test_named_link_written_in_place(void **state)
{
    (void)state;
    need_bin();
    put_file("target.mmp", "old content, longer than nothing", 32);
    char p[256];
    wpath(p, sizeof p, "target.mmp");
    assert_int_equal(chmod(p, 0640), 0);
    make_link("target.mmp", "link.mmp");
    const ino_t before = inode_of("target.mmp");
    expect_ok("$ENC --quiet in.pgm link.mmp");
    assert_content("target.mmp", good_mmp, good_len);
    assert_kind("link.mmp", S_IFLNK);
    if (inode_of("target.mmp") != before)
        fail_msg("target.mmp was replaced by another file, not written through the link");
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    /* Longer content first, then shorter: cut to the new length. */
    put_file("t.pgm", good_pgm, good_pgm_len);
    put_file("t2.pgm", "x", 1);
    make_link("t2.pgm", "l2.pgm");
    expect_ok("$DEC good.mmp -o l2.pgm");
    assert_content("t2.pgm", good_pgm, good_pgm_len);
    /* A dangling link creating the same new file as another output: the
     * same file, refused, and nothing left behind. */
    make_link("new", "dangling.pgm");
    expect_fail(1, "mmp-enc", "same file", NULL, "$ENC --quiet --recon dangling.pgm in.pgm new");
    assert_false(exists("new"));

    if (!kernel_protects_links() || geteuid() != 0) {
        print_message("fs.protected_symlinks is off (or not root): the sticky case is the "
                      "kernel's, skipped\n");
        return;
    }
    wpath(p, sizeof p, "sticky");
    assert_int_equal(mkdir(p, 0777), 0);
    assert_int_equal(chmod(p, 01777), 0);
    put_file("victim", "precious", 8);
    char target[300];
    snprintf(target, sizeof target, "%s/victim", work);
    make_link(target, "sticky/out.pgm");
    wpath(p, sizeof p, "sticky/out.pgm");
    assert_int_equal(lchown(p, 65534, 65534), 0);
    expect_fail(1, "mmp-dec", "sticky/out.pgm", "Permission denied",
                "$DEC good.mmp -o sticky/out.pgm");
    assert_text("victim", "precious");
}

/* ------------------------------------------------------- 3. standard output */

/* Standard output by another name: the output goes there whole and the
 * --stats line goes to stderr, never into the file. */
static void test_stdout_by_identity(void **state)
{
    (void)state;
    need_bin();
    int st = run("$ENC --quiet --stats in.pgm /dev/stdout | cat > p.mmp");
    if (st != 0)
        fail_msg("exit %d (stderr: %s)", st, cap_err);
    assert_content("p.mmp", good_mmp, good_len);
    if (!strstr(cap_err, "bytes="))
        fail_msg("no --stats line on stderr: %s", cap_err);
    st = run("$DEC --stats good.mmp -o /dev/stdout | cat > p.pgm");
    assert_int_equal(st, 0);
    assert_content("p.pgm", good_pgm, good_pgm_len);
    if (!strstr(cap_err, "bytes="))
        fail_msg("no --stats line on stderr: %s", cap_err);
    st = run("$DEC --stats good.mmp -o /dev/fd/1 | cat > q.pgm");
    assert_int_equal(st, 0);
    assert_content("q.pgm", good_pgm, good_pgm_len);
    /* Standard output redirected to the output file itself. */
    st = run("$ENC --quiet --stats in.pgm same.mmp > same.mmp");
    assert_int_equal(st, 0);
    assert_content("same.mmp", good_mmp, good_len);
    if (!strstr(cap_err, "bytes="))
        fail_msg("no --stats line on stderr: %s", cap_err);
}

/* No output is named after a path under /dev or /proc: a usage error
 * naming -o, before anything is read; nothing is created there. */
static void test_no_name_from_system_paths(void **state)
{
    (void)state;
    need_bin();
    expect_fail(2, "mmp-dec", "-o", NULL, "$DEC /dev/fd/0 < good.mmp");
    expect_fail(2, "mmp-dec", "-o", NULL, "$DEC /proc/self/fd/0 < good.mmp");
    /* /dev/stdin.pgm would be a new file in /dev: remove one a binary that
     * breaks the promise leaves, so that the test harms nothing. */
    struct stat sb;
    const int had = lstat("/dev/stdin.pgm", &sb) == 0;
    const int st = run("$DEC /dev/stdin < good.mmp");
    const int made = !had && lstat("/dev/stdin.pgm", &sb) == 0;
    if (made)
        unlink("/dev/stdin.pgm");
    if (made)
        fail_msg("mmp-dec /dev/stdin created /dev/stdin.pgm");
    if (st != 2)
        fail_msg("mmp-dec /dev/stdin: exit %d, want 2 (stderr: %s)", st, cap_err);
    one_line("$DEC /dev/stdin", "mmp-dec", "-o", NULL);
    /* With -o, or '-' for stdin, it decodes. */
    expect_ok("$DEC /dev/stdin -o a.pgm < good.mmp && $DEC - < good.mmp > b.pgm");
    assert_content("a.pgm", good_pgm, good_pgm_len);
    assert_content("b.pgm", good_pgm, good_pgm_len);
}

/* ------------------------------------------------------------- 4. reading */

/* Under a memory limit far below what reading them whole would take:
 * /dev/zero and a 2 GiB file of zeros stop at the magic, a file larger than
 * any .mmp file is refused on its size, --info alike. A sparse file costs
 * no disk. */
/* The memory limit of the commands that could read gigabytes. Not under
 * AddressSanitizer: its shadow memory reserves terabytes of address space,
 * which no such limit leaves it (the normal build's run holds the limit). */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_LIMIT_1G ""
#define MEM_LIMIT_2G ""
#else
#define MEM_LIMIT_1G "ulimit -v 1000000; "
#define MEM_LIMIT_2G "ulimit -v 2000000; "
#endif

static void test_dec_reads_no_further(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "zeros.mmp");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)1 << 31), 0);
    close(fd);
    wpath(p, sizeof p, "huge.mmp");
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "MMPi", 4), 4);
    assert_int_equal(ftruncate(fd, (off_t)(MMP_MAX_FILE_BYTES + 1)), 0);
    close(fd);
    expect_fail(1, "mmp-dec", "not an MMP file", NULL,
                MEM_LIMIT_1G "timeout 60 $DEC /dev/zero -o OUT.pgm");
    expect_fail(1, "mmp-dec", "zeros.mmp", "not an MMP file",
                MEM_LIMIT_1G "timeout 60 $DEC zeros.mmp -o OUT.pgm");
    expect_fail(1, "mmp-dec", "zeros.mmp", "not an MMP file",
                MEM_LIMIT_1G "timeout 60 $DEC --info zeros.mmp");
    expect_fail(1, "mmp-dec", "huge.mmp", "too large",
                MEM_LIMIT_1G "timeout 60 $DEC huge.mmp -o OUT.pgm");
    expect_fail(1, "mmp-dec", "huge.mmp", "too large",
                MEM_LIMIT_1G "timeout 60 $DEC --info huge.mmp");
    expect_fail(1, "mmp-dec", "standard input", "too large",
                MEM_LIMIT_1G "timeout 60 $DEC - < huge.mmp > OUT.pgm; s=$?; rm -f OUT.pgm; "
                "exit $s");
}

/* mmp-enc reads images as streams, but a TIFF whole, into memory: a
 * regular file larger than its 4 GiB limit is refused on its size, before
 * it is read; /dev/zero stops at its first byte. */
static void test_enc_reads_no_further(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "huge.tif");
    const int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "II*\0\x08\0\0\0", 8), 8);
    assert_int_equal(ftruncate(fd, ((off_t)1 << 32) + 2), 0);
    close(fd);
    expect_fail(1, "mmp-enc", "huge.tif", "larger than",
                MEM_LIMIT_1G "timeout 60 $ENC --quiet huge.tif OUT.mmp");
    expect_fail(1, "mmp-enc", "not an image file", NULL,
                MEM_LIMIT_1G "timeout 60 $ENC --quiet /dev/zero OUT.mmp");
}

/* ----------------------------------------------------------- 5. --max-pixels */

/* mmp-dec --max-pixels: the 40 x 24 input (960 pixels) is refused at 959,
 * decoded at 960; values outside 1..2^28 and --info with it are usage
 * errors. */
static void test_dec_max_pixels(void **state)
{
    (void)state;
    need_bin();
    expect_fail(1, "mmp-dec", "--max-pixels", "960", "$DEC --max-pixels 959 good.mmp -o OUT.pgm");
    expect_fail(1, "mmp-dec", "--max-pixels", NULL, "$DEC --max-pixels=959 good.mmp");
    expect_ok("$DEC --max-pixels 960 good.mmp -o OUT.pgm");
    assert_content("OUT.pgm", good_pgm, good_pgm_len);
    expect_ok("$DEC --max-pixels 268435456 good.mmp -o max.pgm");
    const char *bad[] = {"0", "-5", "268435457", "1e6", "abc", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "$DEC --max-pixels '%s' good.mmp -o X.pgm", bad[i]);
        expect_fail(2, "mmp-dec", "--max-pixels", NULL, cmd);
    }
    expect_fail(2, "mmp-dec", "--info", "--max-pixels", "$DEC --info --max-pixels 5 good.mmp");
    assert_int_equal(run("$DEC --help-all"), 0);
    char want[64];
    snprintf(want, sizeof want, "(default %lld", (long long)(1LL << 27));
    if (!strstr(cap_out, want))
        fail_msg("mmp-dec --help-all does not give --max-pixels' default: %s", want);
}

/* mmp-enc --max-pixels: checked on the image file's header, before the
 * samples are allocated or read; the default refuses a header of more than
 * 2^27 pixels (a file too short for it: only the header is ever read). */
static void test_enc_max_pixels(void **state)
{
    (void)state;
    need_bin();
    expect_fail(1, "mmp-enc", "--max-pixels", NULL, "$ENC --quiet --max-pixels 959 in.pgm OUT.mmp");
    expect_ok("$ENC --quiet --max-pixels 960 in.pgm OUT.mmp");
    assert_content("OUT.mmp", good_mmp, good_len);
    expect_fail(2, "mmp-enc", "--max-pixels", NULL, "$ENC --quiet --max-pixels 0 in.pgm OUT2.mmp");
    static const char big[] = "P5\n16384 8193\n255\n";
    put_file("big.pgm", big, sizeof big - 1);
    expect_fail(1, "mmp-enc", "--max-pixels", NULL,
                MEM_LIMIT_2G "$ENC --quiet big.pgm OUT2.mmp");
    /* Raised, the header passes and the missing samples fail. */
    expect_fail(1, "mmp-enc", "truncated", NULL,
                "$ENC --quiet --max-pixels 268435456 big.pgm OUT2.mmp");
}

/* --------------------------------------------------------------- 8. signals */

/* Start PROG (under $MMP_BIN) with args in the working directory, stdin
 * from /dev/null, stdout and stderr into the root's captures; with
 * ignore_hup, SIGHUP ignored, as nohup leaves it. */
static pid_t start(const char *prog, const char *const *args, int ignore_hup)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", bin, prog);
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, ignore_hup ? SIG_IGN : SIG_DFL);
        const int in = open("/dev/null", O_RDONLY);
        const int out = open(cli_out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(cli_err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (chdir(work) != 0 || in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 ||
            dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(127);
        char *argv[16];
        int n = 0;
        argv[n++] = (char *)prog;
        for (; args[n - 1] && n < 15; n++)
            argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        execv(path, argv);
        _exit(127);
    }
    return pid;
}

/* A name in the working directory that starts with prefix and holds
 * ".tmp": 1 when there is one. */
static int temp_exists(const char *prefix)
{
    DIR *d = opendir(work);
    assert_non_null(d);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL)
        found |= strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, ".tmp");
    closedir(d);
    return found;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The child's status within `ms` milliseconds, or -1 (it is still running). */
static int wait_for(pid_t pid, long ms)
{
    int st;
    for (long t = 0; t <= ms; t += 20) {
        const pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        pause_ms(20);
    }
    return -1;
}

/* Kill the child for good (it outlived the test) and fail with why. */
static void give_up(pid_t pid, const char *why, const char *what)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fail_msg("%s: %s", what, why);
}

/*
 * The run waits forever once its temporary file exists: mmp-enc writes the
 * .mmp's temporary file, then blocks opening --recon's FIFO, which nobody
 * reads; mmp-dec -o blocks opening its input, a FIFO nobody writes, its
 * output's temporary file made before. Then sig: the process must end by
 * that signal with no temporary file left and no output.
 */
static void signal_case(const char *prog, const char *const *args, const char *prefix, int sig,
                        const char *what)
{
    const pid_t pid = start(prog, args, 0);
    long t = 0;
    while (!temp_exists(prefix) && t < 30000) {
        if (wait_for(pid, 0) != -1)
            fail_msg("%s: ended before its temporary file appeared", what);
        pause_ms(20);
        t += 20;
    }
    if (!temp_exists(prefix))
        give_up(pid, "no temporary file appeared within 30 s", what);
    kill(pid, sig);
    const int st = wait_for(pid, 20000);
    if (st == -1)
        give_up(pid, "still running 20 s after the signal", what);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != sig)
        fail_msg("%s: ended with status %#x, not by signal %d", what, st, sig);
    assert_no_temp();
}

static void test_signals_remove_temporaries(void **state)
{
    (void)state;
    need_bin();
    char p[256];
    wpath(p, sizeof p, "Rfifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    wpath(p, sizeof p, "in.fifo");
    assert_int_equal(mkfifo(p, 0644), 0);
    const char *enc[] = {"--quiet", "--recon", "Rfifo", "in.pgm", "OUT.mmp", NULL};
    const char *dec[] = {"--quiet", "-o", "OUT.pgm", "in.fifo", NULL};
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (int i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "mmp-enc, signal %d", sigs[i]);
        signal_case("mmp-enc", enc, "OUT.mmp", sigs[i], what);
        assert_false(exists("OUT.mmp"));
        snprintf(what, sizeof what, "mmp-dec, signal %d", sigs[i]);
        signal_case("mmp-dec", dec, "OUT.pgm", sigs[i], what);
        assert_false(exists("OUT.pgm"));
    }
    /* SIGHUP ignored at start (nohup) stays ignored; SIGTERM still ends it. */
    const pid_t pid = start("mmp-dec", dec, 1);
    long t = 0;
    while (!temp_exists("OUT.pgm") && t < 30000 && wait_for(pid, 0) == -1) {
        pause_ms(20);
        t += 20;
    }
    kill(pid, SIGHUP);
    if (wait_for(pid, 500) != -1)
        fail_msg("mmp-dec ended on a SIGHUP that was ignored at its start");
    kill(pid, SIGTERM);
    const int st = wait_for(pid, 20000);
    if (st == -1)
        give_up(pid, "still running after SIGTERM", "nohup case");
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    assert_no_temp();
}

/* ---------------------------------------------------------- 9. the rest */

/* Usage errors, exit 2, before anything is read (the input does not
 * exist): empty names, options no image can use together. */
static void test_usage_errors_before_reading(void **state)
{
    (void)state;
    need_bin();
    expect_fail(2, "mmp-dec", "empty", "-o", "$DEC good.mmp -o ''");
    expect_fail(2, "mmp-dec", "empty", NULL, "$DEC ''");
    expect_fail(2, "mmp-enc", "empty", "OUT", "$ENC --quiet in.pgm ''");
    expect_fail(2, "mmp-enc", "empty", "--recon", "$ENC --quiet --recon '' in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "empty", "IN", "$ENC --quiet '' OUT.mmp");
    expect_fail(2, "mmp-enc", "--residual", NULL, "$ENC --quiet --residual mmp nosuch.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "--chroma 444", NULL,
                "$ENC --quiet --chroma 420 --lossless nosuch.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "ycbcr", NULL, "$ENC --quiet --colour ycbcr --lossless nosuch.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "ycocg-r", NULL,
                "$ENC --quiet --colour ycocg-r --max-error 3 nosuch.pgm OUT.mmp");
    /* What a bound does take: lambda with --residual mmp, YCoCg-R lossless. */
    expect_ok("$ENC --quiet --lossless --residual mmp -l 5 --colour ycocg-r in.pgm L.mmp");
    expect_ok("$DEC L.mmp -o L.pgm && cmp -s L.pgm in.pgm");
    /* getopt's refusals name the option as written, in a cluster too. */
    expect_fail(2, "mmp-enc", "'-x'", NULL, "$ENC --quiet -xyz in.pgm OUT.mmp");
    expect_fail(2, "mmp-dec", "'-z'", NULL, "$DEC -v -fz good.mmp");
    expect_fail(2, "mmp-enc", "'--stats'", NULL, "$ENC --stats=1 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "'--bogus'", NULL, "$ENC --bogus=1 in.pgm OUT.mmp");
    expect_fail(2, "mmp-enc", "'-l'", NULL, "$ENC in.pgm OUT.mmp -l");
    expect_fail(2, "mmp-enc", "'--recon'", NULL, "$ENC in.pgm OUT.mmp --recon");
}

/* Options that do nothing: one warning line each (none under --quiet), and
 * the same samples as without them. -l with a bound (without --residual
 * mmp) is told before anything is read (the input does not exist). */
static void test_unused_options_warned(void **state)
{
    (void)state;
    need_bin();
    const char *cmd = "$ENC --lossless -l 5 nosuch.pgm OUT.mmp";
    assert_int_equal(run("%s", cmd), 1);
    if (!strstr(cap_err, "warning: -l: --lossless") || !strstr(cap_err, "nosuch.pgm"))
        fail_msg("'%s': no warning about -l before the input: %s", cmd, cap_err);
    cmd = "$ENC -l 5 --max-error 2 in.pgm M.mmp";
    assert_int_equal(run("%s", cmd), 0);
    one_line(cmd, "mmp-enc", "warning: -l", "--max-error");
    expect_ok("$ENC --quiet -l 5 --max-error 2 in.pgm M2.mmp");
    expect_ok("$ENC -l 5 --max-error 2 --residual mmp in.pgm M3.mmp");
    cmd = "$ENC --alpha mmp in.pgm A.mmp";
    assert_int_equal(run("%s", cmd), 0);
    one_line(cmd, "mmp-enc", "warning", "--alpha");
    assert_content("A.mmp", good_mmp, good_len);
    cmd = "$ENC --colour rgb --chroma 420 in.pgm C.mmp";
    assert_int_equal(run("%s", cmd), 0);
    one_line(cmd, "mmp-enc", "--colour, --chroma", "grey");
    assert_content("C.mmp", good_mmp, good_len);
    expect_ok("$ENC --quiet --alpha mmp --colour rgb --chroma-lambda 2 in.pgm Q.mmp");
    assert_content("Q.mmp", good_mmp, good_len);
    /* A colour image uses them: no warning. */
    mmp_image img;
    make_image(&img, 3);
    put_encoded(&img, "c.mmp", "c.ppm");
    mmp_image_free(&img);
    expect_ok("$ENC --colour rgb --chroma 420 c.ppm C2.mmp");
}

/* Output names of up to 255 bytes (NAME_MAX): the temporary file's name
 * is made short enough, whatever the output's. */
static void test_long_output_names(void **state)
{
    (void)state;
    need_bin();
    char name[256], recon[256], cmd[700];
    for (int len = 246; len <= 255; len += 9) {
        memset(name, 'a', (size_t)len - 4);
        memcpy(name + len - 4, ".pgm", 5);
        snprintf(cmd, sizeof cmd, "$DEC good.mmp -o %s", name);
        expect_ok(cmd);
        assert_content(name, good_pgm, good_pgm_len);
        memcpy(recon, name, (size_t)len + 1);
        recon[0] = 'r';
        memcpy(name + len - 4, ".mmp", 5);
        name[0] = 'b';
        snprintf(cmd, sizeof cmd, "$ENC --quiet --recon %s in.pgm %s", recon, name);
        expect_ok(cmd);
        assert_content(name, good_mmp, good_len);
    }
}

/* --version names the library's version and, where mmp.h gives it, the
 * format's. */
static void test_version_names_format(void **state)
{
    (void)state;
    need_bin();
    const char *progs[] = {"$ENC", "$DEC"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run("%s --version", progs[i]), 0);
        assert_non_null(strstr(cap_out, MMP_VERSION_STRING));
#ifdef MMP_FORMAT_VERSION_STRING
        char want[64];
        snprintf(want, sizeof want, "format version %s", MMP_FORMAT_VERSION_STRING);
        if (!strstr(cap_out, want))
            fail_msg("%s --version does not say '%s': %s", progs[i], want, cap_out);
#else
        print_message("mmp.h defines no MMP_FORMAT_VERSION_STRING: the format's version is "
                      "not checked\n");
#endif
    }
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, cli_test_setup)
    const struct CMUnitTest tests[] = {
        T(test_derived_name_never_replaces),
        T(test_derived_name_never_followed),
        T(test_named_link_written_in_place),
        T(test_stdout_by_identity),
        T(test_no_name_from_system_paths),
        T(test_dec_reads_no_further),
        T(test_enc_reads_no_further),
        T(test_dec_max_pixels),
        T(test_enc_max_pixels),
        T(test_signals_remove_temporaries),
        T(test_usage_errors_before_reading),
        T(test_unused_options_warned),
        T(test_long_output_names),
        T(test_version_names_format),
    };
#undef T
    return cmocka_run_group_tests(tests, cli_group_setup, cli_group_teardown);
}
