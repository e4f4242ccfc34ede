/* Helpers shared by the command-line front ends. */
#ifndef MMP_MMP_CLI_H
#define MMP_MMP_CLI_H

#include <stddef.h>
#include <stdint.h>

/* Exit statuses: runtime failures and usage errors. */
#define MMP_EXIT_FAILURE 1
#define MMP_EXIT_USAGE 2
/* What a front end's parse of its options returns when the command is
 * to run (any other return is the exit status: 0 after --help). */
#define MMP_CLI_RUN (-1)

/*
 * --max-pixels' default: 2^27 pixels (128 Mpixel), half of the hard limit
 * MMP_MAX_PIXELS. It takes the largest camera images in common use, and
 * bounds what one file can make the tools allocate: mmp-dec's decode of a
 * four-plane image at most about 2.2 GB (docs/format.md, section 2), half
 * of what the hard limit allows. The option raises it up to MMP_MAX_PIXELS.
 */
#define MMP_CLI_DEFAULT_MAX_PIXELS (1LL << 27)

/* Print "PROG: message" and a newline to stderr. */
void mmp_cli_error(const char *prog, const char *fmt, ...);

/*
 * The usage error of a getopt_long that returned c (':' for a missing
 * value, '?' for anything else it refused; opterr 0 and shortopts
 * starting with ':'), naming the option as the user wrote it: "-x" for a
 * letter (within a cluster such as -vx too), "--name" for a long option.
 * Prints one line and returns MMP_EXIT_USAGE.
 */
int mmp_cli_option_error(const char *prog, int c, char **argv, const char *shortopts);

/* --max-pixels N: a whole number from 1 to MMP_MAX_PIXELS into *out, 0; or
 * a usage error printed and MMP_EXIT_USAGE. */
int mmp_cli_parse_max_pixels(const char *prog, const char *arg, uint64_t *out);

/* "PROG VERSION", with the format version where mmp.h gives it, on stdout;
 * returns mmp_cli_stdout_done's status. */
int mmp_cli_version(const char *prog);

/*
 * Read a whole file ("-": stdin) into a malloc'd buffer; limit in bytes.
 * A regular file larger than the limit is refused before anything is read;
 * anything else (a pipe, a device) is read in bounded steps and refused as
 * soon as it passes the limit. With magic not NULL, the file's first bytes
 * are read first: when they differ from magic (strlen(magic) bytes, or
 * fewer at the end of the file), reading stops there and *buf holds just
 * those bytes, for the caller's parser to refuse with its own message.
 * Returns 0 or a negative code with a reason in errbuf.
 */
int mmp_cli_read_file(const char *path, size_t limit, const char *magic, uint8_t **buf,
                      size_t *len, char *errbuf, size_t errlen);

/*
 * 1 when no output may be named after `path`: it lies under /dev, /proc or
 * /sys (as written, or once its directory's links are followed), where a
 * name is a device, a process's file or a kernel setting, not a file of the
 * user's (/dev/stdin, /dev/fd/0, /proc/self/fd/0).
 */
int mmp_cli_special_path(const char *path);

/*
 * The outputs of a run, written so that no run destroys a file the user did
 * not name, and nothing is written through a link the user did not name:
 *
 *  - Standard output: "-", and any name of the file that is standard output
 *    (/dev/stdout, /dev/fd/1, the file stdout is redirected to: the same
 *    device and inode), written to it in place.
 *  - A named path that is a regular file, or no file yet, gets its content
 *    in a temporary file beside it (in the same directory, NAME.tmpXXXXXX
 *    with NAME cut to 64 bytes), renamed over it only when complete; rename
 *    replaces the name, never writes through whatever is there. An existing
 *    file's mode (and, where permitted, owner and group) carries over. An
 *    existing file with several hard links is refused: replacing it would
 *    detach it from its other names, and writing it in place would change
 *    every name and could leave it half-written.
 *  - A named path that is a symbolic link is opened by its name, so that the
 *    kernel follows the link (and applies its own rules: in a sticky
 *    world-writable directory, fs.protected_symlinks refuses a link of
 *    another user). No link is read here and nothing is renamed onto what it
 *    points to. A regular file reached so is written in place once the whole
 *    content is ready in memory: its space reserved first (posix_fallocate,
 *    where the file system has it), then overwritten and cut to the new
 *    length, with SIGINT, SIGTERM and SIGHUP held until that ends; the inode,
 *    mode and owner stay. A dangling link creates the file it names. A
 *    device, FIFO or socket reached so is written in place.
 *  - A named device, FIFO or socket is written in place, never replaced.
 *  - A derived name (mmp_cli_output.derived: one the program made, such as
 *    mmp-dec's IN.pgm) is written only as a regular file: a symbolic link, a
 *    device, a FIFO or a socket there is refused (never opened, never
 *    followed), and so is an existing file unless `replace` is set; without
 *    it the complete temporary file is linked to the name only if the name
 *    is still free (renameat2's RENAME_NOREPLACE, or link()), so that a file
 *    that appears meanwhile is not replaced either.
 *
 * The temporary files are created by mmp_cli_outputs_check, before anything
 * is read (those of `late` outputs by mmp_cli_outputs_write, just before
 * their content), and removed on every failure, and on SIGINT, SIGTERM and
 * SIGHUP
 * (a handler unlinks them, restores the signal's default action and raises
 * it again, so that the exit status says which signal ended the process; a
 * signal ignored at start, as under nohup, stays ignored).
 *
 * Fill path, what, write, opaque (and derived, replace), zero the rest (a
 * designated initialiser does), call mmp_cli_outputs_check before reading
 * anything, then mmp_cli_outputs_write once the content is ready, and
 * mmp_cli_outputs_free in any case.
 */
typedef int (*mmp_cli_writer)(void *opaque, void *file);
typedef struct mmp_cli_output {
    const char *path;        /* as given; "-" is standard output */
    const char *what;        /* its name in messages: "output", "--recon" */
    mmp_cli_writer write;    /* writes the content to a FILE *, 0 or MMP_E* */
    void *opaque;
    int derived;             /* the program made the name: regular files only */
    int replace;             /* derived: an existing regular file may be replaced */
    int late;                /* a regular output's temporary file is made when the
                              * content is written, not by the check (which makes one
                              * and removes it again, to know that it can): for a
                              * program whose process may be ended without its
                              * handlers while it works (mmp-enc-mpi's rank 0, which
                              * its MPI library or mpirun may end) */
    /* Filled by mmp_cli_outputs_check (private to cli.c). */
    int kind;                /* OUT_* of cli.c */
    int err;                 /* errno found while looking at the path, or 0 */
    int is_new;              /* no file there yet (or a dangling link) */
    int refused;             /* derived: why the name is refused (REFUSE_* of cli.c) */
    char *tmp;               /* the temporary file while one exists */
    int tmp_fd, tmp_open;    /* its descriptor, until written */
    int slot;                /* its place among the names the signal handler removes */
    int has_id;              /* id_* identify the file (or the name to be) */
    unsigned long long id_dev, id_ino;
    const char *id_name;     /* NULL for an existing file; else its name in
                              * the directory id_dev, id_ino */
    int has_in;              /* the input's identity, for the checks at writing */
    unsigned long long in_dev, in_ino;
    unsigned long old_mode, old_uid, old_gid, old_links; /* an existing file */
} mmp_cli_output;

/*
 * Before anything is read or written: any two of the input (in_path, "-":
 * standard input; NULL: none) and the n outputs naming the same file
 * (device and inode, links followed by the kernel; two standard outputs
 * clash, standard input and standard output never do) is MMP_EINVAL, a
 * usage error; an output that cannot be written as described above (a
 * directory, several hard links, no permission, no such directory, a
 * derived name refused) is MMP_EIO. Either way errbuf holds one line. On
 * success the temporary files exist (but those of `late` outputs).
 */
int mmp_cli_outputs_check(const char *in_path, mmp_cli_output *outs, int n, char *errbuf,
                          size_t errlen);

/* 1 when the output is standard output (checked): what --stats must not
 * write to. */
int mmp_cli_output_is_stdout(const mmp_cli_output *o);

/*
 * Write every output: the content of the linked ones is made in memory and
 * their files opened (a link that turns out to reach the input or another
 * output is refused here), then the temporary files are written, then the
 * streams and the linked files in place, then the renames. A failure before
 * the in-place writes leaves every output as it was; a failure of a stream
 * may leave part of its content there. Returns 0 or a negative code with
 * one line in errbuf.
 */
int mmp_cli_outputs_write(mmp_cli_output *outs, int n, char *errbuf, size_t errlen);

/* Free what mmp_cli_outputs_check allocated, removing a leftover
 * temporary file. */
void mmp_cli_outputs_free(mmp_cli_output *outs, int n);

/*
 * Flush standard output and check that every write to it succeeded (the
 * --stats line, --help, --list-devices...). Returns 0, or prints
 * "PROG: cannot write to standard output: reason" and returns
 * MMP_EXIT_FAILURE.
 */
int mmp_cli_stdout_done(const char *prog);

/* Progress bar on stderr (only when stderr is a terminal); 0: go on. */
int mmp_cli_progress(void *opaque, int done, int total);

#endif
