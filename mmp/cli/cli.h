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

/* Print "PROG: message" and a newline to stderr. */
void mmp_cli_error(const char *prog, const char *fmt, ...);

/* Read a whole file ("-": stdin) into a malloc'd buffer; limit in bytes.
 * Returns 0 or a negative code with a reason in errbuf. */
int mmp_cli_read_file(const char *path, size_t limit, uint8_t **buf, size_t *len, char *errbuf,
                      size_t errlen);

/*
 * The outputs of a run, written so that no run destroys a file the user did
 * not ask to lose:
 *
 *  - "-" is standard output, written in place.
 *  - A symbolic link is followed (to the end of its chain): the file it
 *    points to is written, the link stays.
 *  - A regular file (or a path that does not exist yet) gets its content in
 *    a temporary file beside it, renamed over it only when complete; an
 *    existing file's mode (and, where permitted, owner and group) carries
 *    over to the new one. An existing file with several hard links is
 *    refused: replacing it would detach it from its other names, and writing
 *    it in place would change every name and could leave it half-written.
 *  - Anything else (a character or block device, a FIFO, a socket) is
 *    opened and written in place, never replaced.
 *
 * Fill path, what, write and opaque, zero the rest (a designated
 * initialiser does), call mmp_cli_outputs_check before reading anything,
 * then mmp_cli_outputs_write once the content is ready, and
 * mmp_cli_outputs_free in any case.
 */
typedef int (*mmp_cli_writer)(void *opaque, void *file);
typedef struct mmp_cli_output {
    const char *path;        /* as given; "-" is standard output */
    const char *what;        /* its name in messages: "output", "--recon" */
    mmp_cli_writer write;    /* writes the content to a FILE *, 0 or MMP_E* */
    void *opaque;
    /* Filled by mmp_cli_outputs_check. */
    int kind;                /* private: OUT_* of cli.c */
    int err;                 /* errno found while looking at the path, or 0 */
    int is_new;              /* no file there yet (or a dangling link) */
    char *target;            /* the path written (links followed), malloc'd */
    char *tmp;               /* the temporary file while one exists */
    int has_id;              /* id_* identify the file (or the name to be) */
    unsigned long long id_dev, id_ino;
    const char *id_name;     /* NULL for an existing file; else its name in
                              * the directory id_dev, id_ino */
    unsigned long old_mode, old_uid, old_gid, old_links; /* an existing file */
} mmp_cli_output;

/*
 * Before anything is read or written: any two of the input (in_path, "-":
 * standard input; NULL: none) and the n outputs naming the same file
 * (device and inode, links followed; two "-" outputs are the same standard
 * output, standard input and standard output never clash) is MMP_EINVAL, a
 * usage error; an output that cannot be written as described above (a
 * directory, several hard links, no permission, no such directory) is
 * MMP_EIO. Either way errbuf holds one line.
 */
int mmp_cli_outputs_check(const char *in_path, mmp_cli_output *outs, int n, char *errbuf,
                          size_t errlen);

/*
 * Write every output: first the temporary files of the regular ones, then
 * the streams in place, then the renames. A failure before the renames
 * leaves no regular output changed (a stream may have got part of its
 * content). Returns 0 or a negative code with one line in errbuf.
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

/* Progress bar on stderr (only when stderr is a terminal). */
void mmp_cli_progress(void *opaque, int done, int total);

#endif
