/* Helpers shared by the command-line front ends. */
#include "mmp/cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "mmp/mmp.h"

void mmp_cli_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int mmp_cli_read_file(const char *path, size_t limit, uint8_t **buf, size_t *len, char *errbuf,
                      size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    *buf = NULL;
    *len = 0;
    if (!f) {
        snprintf(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
        return MMP_EIO;
    }
    /* Never more than limit + 1 bytes: one byte past the limit proves the
     * file too large. */
    size_t cap = limit < (1 << 16) ? limit + 1 : 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    int err = b ? 0 : MMP_ENOMEM;
    while (!err) {
        if (n == cap) {
            if (n > limit) {
                snprintf(errbuf, errlen, "%s: file too large (limit %zu bytes)", path, limit);
                err = MMP_ELIMIT;
                break;
            }
            cap = cap > limit / 2 ? limit + 1 : cap * 2;
            uint8_t *nb = realloc(b, cap);
            if (!nb) {
                err = MMP_ENOMEM;
                break;
            }
            b = nb;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                snprintf(errbuf, errlen, "cannot read %s: %s", path, strerror(errno));
                err = MMP_EIO;
            }
            break;
        }
    }
    if (err == MMP_ENOMEM)
        snprintf(errbuf, errlen, "out of memory reading %s", path);
    if (!is_stdin)
        fclose(f);
    if (err) {
        free(b);
        return err;
    }
    *buf = b;
    *len = n;
    return 0;
}

/* ---------------------------------------------------------------- outputs */

enum {
    OUT_STDOUT = 1, /* "-" */
    OUT_FILE,       /* a regular file, or none yet: temporary file and rename */
    OUT_STREAM,     /* a device, FIFO or socket: written in place */
    OUT_DIR,        /* a directory: refused */
    OUT_BAD         /* the path cannot be looked at: err says why */
};

/* The part of `p` up to and including its last '/' ("" when none). */
static size_t dir_prefix_len(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? (size_t)(slash - p) + 1 : 0;
}

/* The directory of `p` (malloc'd): "." when p has no '/'. */
static char *dir_of(const char *p)
{
    size_t n = dir_prefix_len(p);
    if (n == 0)
        return strdup(".");
    if (n > 1)
        n--; /* drop the slash, except for "/" itself */
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = 0;
    }
    return d;
}

/*
 * Follow the symbolic links of `path` to the end of the chain: the path of
 * the file (or the name to be) that opening `path` would reach. malloc'd;
 * NULL with *err set on failure (ELOOP after 40 links, as the kernel does).
 */
static char *follow_links(const char *path, int *err)
{
    char *p = strdup(path);
    if (!p) {
        *err = ENOMEM;
        return NULL;
    }
    for (int hops = 0;; hops++) {
        struct stat sb;
        if (lstat(p, &sb) != 0 || !S_ISLNK(sb.st_mode))
            return p;
        if (hops == 40) {
            *err = ELOOP;
            free(p);
            return NULL;
        }
        /* st_size is the link's length, except for some (/proc: 0). */
        size_t cap = (size_t)sb.st_size + 1 > 256 ? (size_t)sb.st_size + 1 : 256;
        char *t = NULL;
        ssize_t k;
        for (;;) {
            char *nt = realloc(t, cap);
            if (!nt) {
                free(t);
                free(p);
                *err = ENOMEM;
                return NULL;
            }
            t = nt;
            k = readlink(p, t, cap);
            if (k < 0) {
                *err = errno;
                free(t);
                free(p);
                return NULL;
            }
            if ((size_t)k < cap)
                break;
            cap *= 2;
        }
        t[k] = 0;
        if (t[0] != '/') {
            /* Relative to the link's own directory. */
            const size_t pre = dir_prefix_len(p);
            char *np = malloc(pre + (size_t)k + 1);
            if (!np) {
                free(t);
                free(p);
                *err = ENOMEM;
                return NULL;
            }
            memcpy(np, p, pre);
            memcpy(np + pre, t, (size_t)k + 1);
            free(t);
            t = np;
        }
        free(p);
        p = t;
    }
}

/* Look at one output path: its kind, the file written, its identity. */
static void look_at(mmp_cli_output *o)
{
    struct stat sb;
    o->err = 0;
    o->has_id = 0;
    o->id_name = NULL;
    if (strcmp(o->path, "-") == 0) {
        o->kind = OUT_STDOUT;
        if (fstat(1, &sb) == 0) {
            o->has_id = 1;
            o->id_dev = sb.st_dev;
            o->id_ino = sb.st_ino;
        }
        return;
    }
    /* stat follows every link, the kernel's own (/dev/stdout) included. */
    if (stat(o->path, &sb) == 0) {
        o->has_id = 1;
        o->id_dev = sb.st_dev;
        o->id_ino = sb.st_ino;
        o->old_mode = sb.st_mode;
        if (S_ISDIR(sb.st_mode)) {
            o->kind = OUT_DIR;
            return;
        }
        if (!S_ISREG(sb.st_mode)) {
            /* Opened through the path as given: a link to a pipe
             * (/proc/self/fd/1) reads as "pipe:[N]", no path at all. */
            o->kind = OUT_STREAM;
            o->target = strdup(o->path);
            if (!o->target) {
                o->kind = OUT_BAD;
                o->err = ENOMEM;
            }
            return;
        }
        /* A regular file: replaced by its real path, links followed; it
         * must be the file that stat found. */
        struct stat tb;
        o->target = follow_links(o->path, &o->err);
        if (!o->target || lstat(o->target, &tb) != 0 || tb.st_dev != sb.st_dev ||
            tb.st_ino != sb.st_ino) {
            o->kind = OUT_BAD;
            if (!o->err)
                o->err = ELOOP;
            return;
        }
        o->kind = OUT_FILE;
        o->old_mode = tb.st_mode;
        o->old_uid = tb.st_uid;
        o->old_gid = tb.st_gid;
        o->old_links = tb.st_nlink;
        return;
    }
    if (errno != ENOENT) {
        o->kind = OUT_BAD;
        o->err = errno;
        return;
    }
    /* No file yet (or a dangling link): created where the links lead,
     * identified by its directory and its name there. */
    o->old_links = 0;
    o->is_new = 1;
    o->target = follow_links(o->path, &o->err);
    if (!o->target) {
        o->kind = OUT_BAD;
        return;
    }
    const char *name = o->target + dir_prefix_len(o->target);
    char *dir = dir_of(o->target);
    if (!dir) {
        o->kind = OUT_BAD;
        o->err = ENOMEM;
        return;
    }
    if (!*name) {
        o->kind = OUT_BAD;
        o->err = EISDIR;
    } else if (stat(dir, &sb) != 0) {
        o->kind = OUT_BAD;
        o->err = errno;
    } else {
        o->kind = OUT_FILE;
        o->has_id = 1;
        o->id_dev = sb.st_dev;
        o->id_ino = sb.st_ino;
        o->id_name = name;
    }
    free(dir);
}

/* How messages name a file: "input a.pgm", "--recon -" ... */
static void describe(char *buf, size_t n, const char *what, const char *path, int is_input)
{
    if (strcmp(path, "-") == 0)
        snprintf(buf, n, "%s - (standard %s)", what, is_input ? "input" : "output");
    else
        snprintf(buf, n, "%s %s", what, path);
}

static int same_file(const mmp_cli_output *a, const mmp_cli_output *b)
{
    if (a->kind == OUT_STDOUT && b->kind == OUT_STDOUT)
        return 1;
    if (!a->has_id || !b->has_id || a->id_dev != b->id_dev || a->id_ino != b->id_ino)
        return 0;
    if (!a->id_name || !b->id_name)
        return !a->id_name && !b->id_name;
    return strcmp(a->id_name, b->id_name) == 0;
}

/* Refusals that need no writing: one line in errbuf, or 0. */
static int check_writable(const mmp_cli_output *o, char *errbuf, size_t errlen)
{
    switch (o->kind) {
    case OUT_DIR:
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(EISDIR));
        return MMP_EIO;
    case OUT_BAD:
        snprintf(errbuf, errlen, "cannot %s %s: %s", o->is_new ? "create" : "write", o->path,
                 strerror(o->err));
        return MMP_EIO;
    case OUT_FILE:
        break;
    default:
        return 0;
    }
    if (o->old_links > 1) {
        /* Neither choice is safe: replacing detaches this name from the
         * others (they keep the old content), writing in place changes every
         * name at once and leaves them half-written if the write fails. */
        snprintf(errbuf, errlen,
                 "refusing to overwrite %s: it has %lu hard links (replacing it would detach it "
                 "from the others, writing it in place would change them all); remove it first",
                 o->path, o->old_links);
        return MMP_EIO;
    }
    if (o->old_links && access(o->target, W_OK) != 0) {
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    char *dir = dir_of(o->target);
    if (!dir) {
        snprintf(errbuf, errlen, "out of memory");
        return MMP_ENOMEM;
    }
    int err = 0;
    if (access(dir, W_OK | X_OK) != 0) {
        if (o->old_links)
            snprintf(errbuf, errlen, "cannot write %s: cannot create a file in %s: %s", o->path,
                     dir, strerror(errno));
        else
            snprintf(errbuf, errlen, "cannot create %s: %s", o->path, strerror(errno));
        err = MMP_EIO;
    }
    free(dir);
    return err;
}

int mmp_cli_outputs_check(const char *in_path, mmp_cli_output *outs, int n, char *errbuf,
                          size_t errlen)
{
    mmp_cli_output in = {.path = in_path};
    struct stat sb;
    if (in_path && (strcmp(in_path, "-") == 0 ? fstat(0, &sb) : stat(in_path, &sb)) == 0) {
        in.has_id = 1;
        in.id_dev = sb.st_dev;
        in.id_ino = sb.st_ino;
    }
    for (int i = 0; i < n; i++)
        look_at(&outs[i]);
    char a[256], b[256];
    for (int i = 0; i < n; i++) {
        /* Standard input and standard output may well be one terminal. */
        if (in_path && !(strcmp(in_path, "-") == 0 && outs[i].kind == OUT_STDOUT) &&
            same_file(&in, &outs[i])) {
            describe(a, sizeof a, "input", in_path, 1);
            describe(b, sizeof b, outs[i].what, outs[i].path, 0);
            snprintf(errbuf, errlen, "%s and %s are the same file", a, b);
            return MMP_EINVAL;
        }
        for (int j = 0; j < i; j++) {
            if (!same_file(&outs[j], &outs[i]))
                continue;
            describe(a, sizeof a, outs[j].what, outs[j].path, 0);
            describe(b, sizeof b, outs[i].what, outs[i].path, 0);
            if (outs[i].kind == OUT_STDOUT && outs[j].kind == OUT_STDOUT)
                snprintf(errbuf, errlen, "%s - and %s - would both write to standard output",
                         outs[j].what, outs[i].what);
            else
                snprintf(errbuf, errlen, "%s and %s are the same file", a, b);
            return MMP_EINVAL;
        }
    }
    for (int i = 0; i < n; i++) {
        const int err = check_writable(&outs[i], errbuf, errlen);
        if (err)
            return err;
    }
    return 0;
}

/* The reason for a failed write: errno for I/O, else the code's text. */
static const char *write_reason(int err, int saved_errno)
{
    return err == MMP_EIO && saved_errno ? strerror(saved_errno) : mmp_strerror(err);
}

/* Run the writer on fd (closed in any case); fsync when asked. */
static int write_fd(const mmp_cli_output *o, int fd, int sync, int *saved_errno)
{
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        *saved_errno = errno;
        close(fd);
        return MMP_EIO;
    }
    errno = 0;
    int err = o->write(o->opaque, f);
    if (!err && (fflush(f) != 0 || ferror(f)))
        err = MMP_EIO;
    if (!err && sync && fsync(fileno(f)) != 0 && errno != EINVAL)
        err = MMP_EIO;
    if (err)
        *saved_errno = errno;
    if (fclose(f) != 0 && !err) {
        err = MMP_EIO;
        *saved_errno = errno;
    }
    return err;
}

/* A regular output: its content in a temporary file beside it. */
static int write_temp(mmp_cli_output *o, char *errbuf, size_t errlen)
{
    const size_t n = strlen(o->target) + 16;
    o->tmp = malloc(n);
    if (!o->tmp) {
        snprintf(errbuf, errlen, "out of memory");
        return MMP_ENOMEM;
    }
    snprintf(o->tmp, n, "%s.tmpXXXXXX", o->target);
    const int fd = mkstemp(o->tmp);
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot create %s: %s", o->path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return MMP_EIO;
    }
    if (o->old_links) {
        /* The replaced file's owner where permitted (root), then its mode
         * (after the owner: chown clears the set-id bits). */
        if (fchown(fd, (uid_t)o->old_uid, (gid_t)o->old_gid) != 0) {
            /* not permitted: the file is ours, as any new file would be */
        }
        fchmod(fd, (mode_t)(o->old_mode & 07777));
    } else {
        /* mkstemp creates 0600; give the mode a plain fopen would. */
        const mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }
    int saved = 0;
    /* fsync before replacing a file, so that a crash cannot leave the
     * name pointing at a file whose data never reached the disk. */
    const int err = write_fd(o, fd, o->old_links != 0, &saved);
    if (err)
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, write_reason(err, saved));
    return err;
}

static int connect_socket(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(a.sun_path, path);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&a, sizeof a) != 0) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Standard output, a device, a FIFO or a socket: written in place. */
static int write_in_place(mmp_cli_output *o, char *errbuf, size_t errlen)
{
    int saved = 0, err;
    if (o->kind == OUT_STDOUT) {
        errno = 0;
        err = o->write(o->opaque, stdout);
        if (!err && (fflush(stdout) != 0 || ferror(stdout)))
            err = MMP_EIO;
        if (err) {
            saved = errno;
            snprintf(errbuf, errlen, "cannot write to standard output: %s",
                     write_reason(err, saved));
        }
        return err;
    }
    const int fd = S_ISSOCK((mode_t)o->old_mode) ? connect_socket(o->target)
                                                  : open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot open %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    /* No O_TRUNC: if the path became a regular file meanwhile, it is left
     * alone rather than written without the temporary file. */
    struct stat sb;
    if (fstat(fd, &sb) != 0 || S_ISREG(sb.st_mode)) {
        close(fd);
        snprintf(errbuf, errlen, "cannot write %s: it changed while being opened", o->path);
        return MMP_EIO;
    }
    err = write_fd(o, fd, 0, &saved);
    if (err)
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, write_reason(err, saved));
    return err;
}

/* The temporary file renamed over the output. */
static int commit(mmp_cli_output *o, char *errbuf, size_t errlen)
{
    struct stat sb;
    /* Never rename over a device, FIFO, socket or link that appeared
     * since the check. */
    if (lstat(o->target, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        snprintf(errbuf, errlen, "cannot write %s: it is no longer a regular file", o->path);
        return MMP_EIO;
    }
    if (rename(o->tmp, o->target) != 0) {
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}

static void drop_temp(mmp_cli_output *o)
{
    if (o->tmp) {
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
}

int mmp_cli_outputs_write(mmp_cli_output *outs, int n, char *errbuf, size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (outs[i].kind != OUT_FILE && outs[i].kind != OUT_STDOUT &&
            outs[i].kind != OUT_STREAM) {
            snprintf(errbuf, errlen, "internal error: %s was not checked", outs[i].path);
            return MMP_EINVAL;
        }
    int err = 0;
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_FILE)
            err = write_temp(&outs[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_STDOUT || outs[i].kind == OUT_STREAM)
            err = write_in_place(&outs[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_FILE)
            err = commit(&outs[i], errbuf, errlen);
    for (int i = 0; i < n; i++)
        drop_temp(&outs[i]);
    return err;
}

void mmp_cli_outputs_free(mmp_cli_output *outs, int n)
{
    for (int i = 0; i < n; i++) {
        drop_temp(&outs[i]);
        free(outs[i].target);
        outs[i].target = NULL;
    }
}

int mmp_cli_stdout_done(const char *prog)
{
    errno = 0;
    const int flushed = fflush(stdout) == 0;
    if (flushed && !ferror(stdout))
        return 0;
    const int e = flushed ? 0 : errno;
    mmp_cli_error(prog, "cannot write to standard output%s%s", e ? ": " : "", e ? strerror(e) : "");
    return MMP_EXIT_FAILURE;
}

void mmp_cli_progress(void *opaque, int done, int total)
{
    (void)opaque;
    if (!isatty(2))
        return;
    int width = 40, filled = total ? done * width / total : width;
    fprintf(stderr, "\r[%.*s%*s] %3d%%", filled, "########################################",
            width - filled, "", total ? done * 100 / total : 100);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}
