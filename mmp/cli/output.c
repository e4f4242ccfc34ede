/*
 * The front ends' outputs (mmp/cli/cli.h): the paths they may be named
 * after, their checks before anything is read, temporary files removed on
 * signals, and writing them without destroying a file the user did not name.
 */
/* renameat2 and RENAME_NOREPLACE (Linux; guarded below). */
#define _GNU_SOURCE
#include "mmp/cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "mmp/mmp.h"
/* ----------------------------------------------------------------- paths */

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

/* p is dir or lies under it. */
static int is_under(const char *p, const char *dir)
{
    const size_t n = strlen(dir);
    return strncmp(p, dir, n) == 0 && (p[n] == 0 || p[n] == '/');
}

static int is_system_dir(const char *p)
{
    while (p[0] == '/' && p[1] == '/')
        p++;
    return is_under(p, "/dev") || is_under(p, "/proc") || is_under(p, "/sys");
}

int mmp_cli_special_path(const char *path)
{
    if (is_system_dir(path))
        return 1;
    /* Where a name beside it would go: its directory, links followed (only
     * to classify it; nothing is written through this). */
    char *dir = dir_of(path);
    char *real = dir ? realpath(dir, NULL) : NULL;
    const int special = real && is_system_dir(real);
    free(real);
    free(dir);
    return special;
}


/* ------------------------------------------------------ signals and temps */

/*
 * The temporary files that exist, for the handler of SIGINT, SIGTERM and
 * SIGHUP: fixed buffers (the handler never sees memory being freed) and a
 * flag each, set once the name is complete and cleared before the file is
 * renamed or removed. While `held` is set (creating or renaming a
 * temporary file, writing a linked file in place) a signal is only
 * recorded, and raised again once that step ends.
 */
#define TEMP_SLOTS 8
static char temp_names[TEMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t temp_used[TEMP_SLOTS];
static volatile sig_atomic_t held, held_signal;
static const int caught[] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig)
{
    if (held) {
        held_signal = sig;
        return;
    }
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (temp_used[i])
            unlink(temp_names[i]);
    /* The default action, raised again: the exit status names the signal. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);
}

/* The handler, once; a signal ignored at start (nohup) stays ignored. */
static void install_handler(void)
{
    static int installed;
    if (installed)
        return;
    installed = 1;
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(caught[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigfillset(&sa.sa_mask);
        sigaction(caught[i], &sa, NULL);
    }
}

static void hold_signals(void)
{
    held = 1;
}

static void release_signals(void)
{
    held = 0;
    const int sig = held_signal;
    if (sig) {
        held_signal = 0;
        raise(sig);
    }
}

/* ---------------------------------------------------------------- outputs */

enum {
    OUT_STDOUT = 1, /* standard output, by name or by identity */
    OUT_FILE,       /* a regular file, or none yet: temporary file and rename */
    OUT_LINK,       /* a named symbolic link: opened by its name, written in place */
    OUT_STREAM,     /* a named device, FIFO or socket: written in place */
    OUT_DIR,        /* a directory: refused */
    OUT_REFUSED,    /* a derived name that is not to be written: `refused` says why */
    OUT_BAD         /* the path cannot be looked at: err says why */
};

enum { REFUSE_EXISTS = 1, REFUSE_LINK, REFUSE_SPECIAL };

static const char *type_name(unsigned long mode)
{
    const mode_t m = (mode_t)mode;
    return S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static void set_id(mmp_cli_output *o, const struct stat *sb)
{
    o->has_id = 1;
    o->id_dev = sb->st_dev;
    o->id_ino = sb->st_ino;
}

/* The file behind fd 1, when there is one. */
static int stdout_id(struct stat *sb)
{
    return fstat(1, sb) == 0;
}

/* Look at one output path: its kind and its identity. Nothing here follows
 * a link by reading it: stat lets the kernel do it, lstat looks at the name
 * itself. */
static void look_at(mmp_cli_output *o)
{
    struct stat lsb, sb, out;
    o->err = 0;
    o->has_id = 0;
    o->id_name = NULL;
    o->is_new = 0;
    o->refused = 0;
    if (!o->derived && strcmp(o->path, "-") == 0) {
        o->kind = OUT_STDOUT;
        if (stdout_id(&sb))
            set_id(o, &sb);
        return;
    }
    if (lstat(o->path, &lsb) != 0) {
        if (errno != ENOENT) {
            o->kind = OUT_BAD;
            o->err = errno;
            return;
        }
        /* No file yet: identified by its directory and its name there. */
        o->is_new = 1;
        const char *name = o->path + dir_prefix_len(o->path);
        char *dir = dir_of(o->path);
        if (!dir) {
            o->kind = OUT_BAD;
            o->err = ENOMEM;
        } else if (!*name) {
            o->kind = OUT_BAD;
            o->err = EISDIR;
        } else if (stat(dir, &sb) != 0) {
            o->kind = OUT_BAD;
            o->err = errno;
        } else {
            o->kind = OUT_FILE;
            set_id(o, &sb);
            o->id_name = name;
        }
        free(dir);
        return;
    }
    /* The file the name reaches (links followed by the kernel), for the
     * clash checks; a dangling link reaches none. */
    const int reached = stat(o->path, &sb) == 0;
    const int stat_errno = reached ? 0 : errno;
    if (reached)
        set_id(o, &sb);
    if (S_ISLNK(lsb.st_mode)) {
        if (o->derived) {
            o->kind = OUT_REFUSED;
            o->refused = REFUSE_LINK;
        } else if (!reached && stat_errno != ENOENT) {
            o->kind = OUT_BAD;
            o->err = stat_errno;
        } else if (!reached) {
            o->kind = OUT_LINK;
            o->is_new = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            o->kind = OUT_DIR;
        } else if (stdout_id(&out) && out.st_dev == sb.st_dev && out.st_ino == sb.st_ino) {
            o->kind = OUT_STDOUT;
        } else {
            o->kind = OUT_LINK;
            o->old_mode = sb.st_mode;
            o->old_links = S_ISREG(sb.st_mode) ? sb.st_nlink : 0;
        }
        return;
    }
    if (!reached) { /* the name went away meanwhile */
        o->kind = OUT_BAD;
        o->err = stat_errno;
        return;
    }
    o->old_mode = lsb.st_mode;
    if (S_ISDIR(lsb.st_mode)) {
        o->kind = OUT_DIR;
    } else if (o->derived) {
        o->kind = S_ISREG(lsb.st_mode) && o->replace ? OUT_FILE : OUT_REFUSED;
        o->refused = !S_ISREG(lsb.st_mode) ? REFUSE_SPECIAL : o->replace ? 0 : REFUSE_EXISTS;
    } else if (stdout_id(&out) && out.st_dev == lsb.st_dev && out.st_ino == lsb.st_ino) {
        o->kind = OUT_STDOUT;
    } else if (S_ISREG(lsb.st_mode)) {
        o->kind = OUT_FILE;
    } else {
        o->kind = OUT_STREAM;
    }
    if (o->kind == OUT_FILE) {
        o->old_uid = lsb.st_uid;
        o->old_gid = lsb.st_gid;
        o->old_links = lsb.st_nlink;
    }
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
    case OUT_REFUSED:
        if (o->refused == REFUSE_EXISTS)
            snprintf(errbuf, errlen,
                     "refusing to replace %s, a name made from the input's: name the output "
                     "with -o, or replace it with --force", o->path);
        else if (o->refused == REFUSE_LINK)
            snprintf(errbuf, errlen,
                     "refusing to write %s, a name made from the input's: it is a symbolic "
                     "link (name the output with -o to write through it)", o->path);
        else
            snprintf(errbuf, errlen,
                     "refusing to write %s, a name made from the input's: it is %s (name the "
                     "output with -o to write to it)", o->path, type_name(o->old_mode));
        return MMP_EIO;
    case OUT_FILE:
    case OUT_LINK:
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
    if (!o->is_new && access(o->path, W_OK) != 0) {
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    if (o->kind == OUT_LINK)
        return 0; /* the kernel finds where it leads when it is opened */
    char *dir = dir_of(o->path);
    if (!dir) {
        snprintf(errbuf, errlen, "out of memory");
        return MMP_ENOMEM;
    }
    int err = 0;
    if (access(dir, W_OK | X_OK) != 0) {
        if (!o->is_new)
            snprintf(errbuf, errlen, "cannot write %s: cannot create a file in %s: %s", o->path,
                     dir, strerror(errno));
        else
            snprintf(errbuf, errlen, "cannot create %s: %s", o->path, strerror(errno));
        err = MMP_EIO;
    }
    free(dir);
    return err;
}

/* The temporary file of a regular output, beside it: the directory of the
 * path as given, then NAME.tmpXXXXXX, NAME cut to 64 bytes (at a character
 * boundary of UTF-8) so that the name stays within NAME_MAX whatever the
 * output's. Registered for the signal handler before anything else can
 * happen. */
static int make_temp(mmp_cli_output *o, char *errbuf, size_t errlen)
{
    const size_t pre = dir_prefix_len(o->path);
    const char *base = o->path + pre;
    size_t keep = strlen(base);
    if (keep > 64) {
        keep = 64;
        while (keep > 0 && ((unsigned char)base[keep] & 0xC0) == 0x80)
            keep--;
    }
    int slot = -1;
    for (int i = 0; i < TEMP_SLOTS && slot < 0; i++)
        if (!temp_used[i])
            slot = i;
    if (slot < 0 || pre + keep + 11 > PATH_MAX) {
        snprintf(errbuf, errlen, "cannot create %s: %s", o->path,
                 slot < 0 ? "too many outputs" : strerror(ENAMETOOLONG));
        return MMP_EIO;
    }
    char *name = temp_names[slot];
    memcpy(name, o->path, pre);
    memcpy(name + pre, base, keep);
    memcpy(name + pre + keep, ".tmpXXXXXX", 11);
    hold_signals();
    const int fd = mkstemp(name);
    if (fd >= 0)
        temp_used[slot] = 1;
    release_signals();
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot create %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    o->tmp = name;
    o->slot = slot;
    o->tmp_fd = fd;
    o->tmp_open = 1;
    if (!o->is_new) {
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
    return 0;
}

static void drop_temp(mmp_cli_output *o)
{
    if (o->tmp_open) {
        close(o->tmp_fd);
        o->tmp_open = 0;
    }
    if (o->tmp) {
        hold_signals();
        unlink(o->tmp);
        temp_used[o->slot] = 0;
        release_signals();
        o->tmp = NULL;
    }
}

int mmp_cli_outputs_check(const char *in_path, mmp_cli_output *outs, int n, char *errbuf,
                          size_t errlen)
{
    mmp_cli_output in = {.path = in_path};
    struct stat sb;
    install_handler();
    if (in_path && (strcmp(in_path, "-") == 0 ? fstat(0, &sb) : stat(in_path, &sb)) == 0) {
        in.has_id = 1;
        in.id_dev = sb.st_dev;
        in.id_ino = sb.st_ino;
    }
    /* Standard input, however named, and standard output may well be one
     * terminal, or both ends of one pipe. */
    struct stat si;
    const int in_is_stdin = in_path && (strcmp(in_path, "-") == 0 ||
                                        (in.has_id && fstat(0, &si) == 0 &&
                                         si.st_dev == in.id_dev && si.st_ino == in.id_ino));
    for (int i = 0; i < n; i++) {
        outs[i].tmp = NULL;
        outs[i].tmp_open = 0;
        look_at(&outs[i]);
        outs[i].has_in = in.has_id;
        outs[i].in_dev = in.id_dev;
        outs[i].in_ino = in.id_ino;
    }
    char a[256], b[256];
    for (int i = 0; i < n; i++) {
        if (in_path && !(in_is_stdin && outs[i].kind == OUT_STDOUT) && same_file(&in, &outs[i])) {
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
            if (!strcmp(outs[i].path, "-") && !strcmp(outs[j].path, "-"))
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
    for (int i = 0; i < n; i++) {
        if (outs[i].kind != OUT_FILE)
            continue;
        const int err = make_temp(&outs[i], errbuf, errlen);
        if (err) {
            for (int j = 0; j < i; j++)
                drop_temp(&outs[j]);
            return err;
        }
    }
    /* A late output's temporary file was made to know that it can be. */
    for (int i = 0; i < n; i++)
        if (outs[i].late)
            drop_temp(&outs[i]);
    return 0;
}

int mmp_cli_output_is_stdout(const mmp_cli_output *o)
{
    return o->kind == OUT_STDOUT;
}

/* ----------------------------------------------------------------- writing */

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

/* A regular output: its content into the temporary file. */
static int write_temp(mmp_cli_output *o, char *errbuf, size_t errlen)
{
    int saved = 0;
    o->tmp_open = 0;
    /* fsync before replacing a file, so that a crash cannot leave the
     * name pointing at a file whose data never reached the disk. */
    const int err = write_fd(o, o->tmp_fd, !o->is_new, &saved);
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

/* Standard output, or a named device, FIFO or socket: written in place. */
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
    struct stat sb;
    int fd;
    if (S_ISSOCK((mode_t)o->old_mode)) {
        /* Still a socket, not a link put in its place. */
        errno = 0;
        if (lstat(o->path, &sb) == 0 && !S_ISSOCK(sb.st_mode))
            errno = ENOTSOCK;
        fd = errno == ENOTSOCK ? -1 : connect_socket(o->path);
    } else { /* no link either: it was none when checked */
        fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
    }
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot open %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    /* No O_TRUNC: if the path became a regular file meanwhile, it is left
     * alone rather than written without the temporary file. */
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

/* A named link's content, made in memory before its file is opened. */
typedef struct linked {
    char *data;
    size_t len;
    int fd;
    struct stat sb; /* the file the kernel opened */
} linked;

static int render(const mmp_cli_output *o, linked *l, char *errbuf, size_t errlen)
{
    FILE *f = open_memstream(&l->data, &l->len);
    int err = f ? o->write(o->opaque, f) : MMP_ENOMEM;
    if (f && fclose(f) != 0 && !err)
        err = MMP_ENOMEM;
    if (err)
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, mmp_strerror(err));
    return err;
}

/* Open a named link by its name: the kernel follows it (a dangling one
 * creates the file it names). */
static int open_link(const mmp_cli_output *o, linked *l, char *errbuf, size_t errlen)
{
    struct stat sb;
    if (stat(o->path, &sb) == 0 && S_ISSOCK(sb.st_mode))
        l->fd = connect_socket(o->path);
    else
        l->fd = open(o->path, O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0666);
    if (l->fd < 0 || fstat(l->fd, &l->sb) != 0) {
        snprintf(errbuf, errlen, "cannot open %s: %s", o->path, strerror(errno));
        return MMP_EIO;
    }
    if (S_ISREG(l->sb.st_mode) && l->sb.st_nlink > 1) {
        snprintf(errbuf, errlen,
                 "refusing to overwrite %s: it leads to a file with %lu hard links; remove it "
                 "first", o->path, (unsigned long)l->sb.st_nlink);
        return MMP_EIO;
    }
    return 0;
}

/* What a named link opened turns out to be: the input, or another output's
 * file (the same file reached by two names is refused before anything is
 * written). One line in errbuf, or 0. */
static int check_linked(mmp_cli_output *outs, int n, linked *ls, int i, char *errbuf,
                        size_t errlen)
{
    const struct stat *s = &ls[i].sb;
    const mmp_cli_output *o = &outs[i];
    if (o->has_in && s->st_dev == o->in_dev && s->st_ino == o->in_ino) {
        snprintf(errbuf, errlen, "%s %s and the input are the same file", o->what, o->path);
        return MMP_EINVAL;
    }
    for (int j = 0; j < n; j++) {
        const mmp_cli_output *p = &outs[j];
        struct stat now;
        int clash = 0;
        if (j == i)
            continue;
        if (p->kind == OUT_LINK && ls[j].fd >= 0)
            clash = j < i && ls[j].sb.st_dev == s->st_dev && ls[j].sb.st_ino == s->st_ino;
        else if (p->has_id && !p->id_name)
            clash = p->id_dev == s->st_dev && p->id_ino == s->st_ino;
        else if (p->kind == OUT_FILE && p->is_new && lstat(p->path, &now) == 0 &&
                 now.st_dev == s->st_dev && now.st_ino == s->st_ino) {
            /* The link created the file the other output names: ours, empty. */
            clash = 1;
            if (o->is_new && now.st_size == 0)
                unlink(p->path);
        }
        if (clash) {
            snprintf(errbuf, errlen, "%s %s and %s %s are the same file", p->what, p->path,
                     o->what, o->path);
            return MMP_EINVAL;
        }
    }
    return 0;
}

/* Write a whole buffer at offset 0 of fd. */
static int pwrite_all(int fd, const char *p, size_t n)
{
    size_t at = 0;
    while (at < n) {
        const ssize_t k = pwrite(fd, p + at, n - at, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        at += (size_t)k;
    }
    return 0;
}

/* A named link's file, written in place: a regular file has its space
 * reserved, is overwritten and cut to the content's length (signals held);
 * anything else gets the content as a stream. */
static int write_linked(const mmp_cli_output *o, linked *l, char *errbuf, size_t errlen)
{
    int err = 0;
    if (S_ISREG(l->sb.st_mode)) {
        hold_signals();
        const int r = l->len ? posix_fallocate(l->fd, 0, (off_t)l->len) : 0;
        if (r && r != EINVAL && r != EOPNOTSUPP && r != ENODEV) {
            errno = r; /* nothing written: the file is as it was */
            err = MMP_EIO;
        } else if (pwrite_all(l->fd, l->data, l->len) != 0 || ftruncate(l->fd, (off_t)l->len) != 0 ||
                   (fsync(l->fd) != 0 && errno != EINVAL)) {
            err = MMP_EIO;
        }
        const int e = errno;
        release_signals();
        errno = e;
    } else {
        size_t at = 0;
        while (at < l->len && !err) {
            const ssize_t k = write(l->fd, l->data + at, l->len - at);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                err = MMP_EIO;
            else
                at += (size_t)k;
        }
    }
    if (err)
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(errno));
    if (close(l->fd) != 0 && !err) {
        snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(errno));
        err = MMP_EIO;
    }
    l->fd = -1;
    return err;
}

/* Put the complete temporary file in place of the output. */
static int commit(mmp_cli_output *o, char *errbuf, size_t errlen)
{
    struct stat sb;
    /* Never replace a device, FIFO, socket or link that appeared since the
     * check. */
    if (lstat(o->path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        snprintf(errbuf, errlen, "cannot write %s: it is no longer a regular file", o->path);
        return MMP_EIO;
    }
    int r, e = 0;
    hold_signals();
    if (o->derived && !o->replace) {
        /* A name made from the input's is only ever created: if a file came
         * there meanwhile, it stays. */
        r = -1;
#ifdef RENAME_NOREPLACE
        r = renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE);
        e = errno;
#endif
        if (r != 0 && e != EEXIST) {
            /* No renameat2 here: link() never replaces either. */
            r = link(o->tmp, o->path);
            e = errno;
            if (r == 0)
                unlink(o->tmp);
        }
    } else {
        r = rename(o->tmp, o->path);
        e = errno;
    }
    if (r == 0)
        temp_used[o->slot] = 0;
    release_signals();
    if (r != 0) {
        if (e == EEXIST)
            snprintf(errbuf, errlen,
                     "refusing to replace %s, a name made from the input's (it appeared while "
                     "decoding): name the output with -o, or replace it with --force", o->path);
        else
            snprintf(errbuf, errlen, "cannot write %s: %s", o->path, strerror(e));
        return MMP_EIO;
    }
    o->tmp = NULL;
    return 0;
}

int mmp_cli_outputs_write(mmp_cli_output *outs, int n, char *errbuf, size_t errlen)
{
    for (int i = 0; i < n; i++)
        if (outs[i].kind != OUT_FILE && outs[i].kind != OUT_STDOUT &&
            outs[i].kind != OUT_STREAM && outs[i].kind != OUT_LINK) {
            snprintf(errbuf, errlen, "internal error: %s was not checked", outs[i].path);
            return MMP_EINVAL;
        }
    linked *ls = calloc(n > 0 ? (size_t)n : 1, sizeof *ls);
    if (!ls) {
        snprintf(errbuf, errlen, "out of memory");
        return MMP_ENOMEM;
    }
    int err = 0;
    for (int i = 0; i < n; i++)
        ls[i].fd = -1;
    /* The linked outputs: content, then their files, then what those are. */
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_LINK)
            err = render(&outs[i], &ls[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_LINK && !(err = open_link(&outs[i], &ls[i], errbuf, errlen)))
            err = check_linked(outs, n, ls, i, errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_FILE && !outs[i].tmp)
            err = make_temp(&outs[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_FILE)
            err = write_temp(&outs[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_STDOUT || outs[i].kind == OUT_STREAM)
            err = write_in_place(&outs[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_LINK)
            err = write_linked(&outs[i], &ls[i], errbuf, errlen);
    for (int i = 0; i < n && !err; i++)
        if (outs[i].kind == OUT_FILE)
            err = commit(&outs[i], errbuf, errlen);
    for (int i = 0; i < n; i++) {
        if (ls[i].fd >= 0)
            close(ls[i].fd);
        free(ls[i].data);
        drop_temp(&outs[i]);
    }
    free(ls);
    return err;
}

void mmp_cli_outputs_free(mmp_cli_output *outs, int n)
{
    for (int i = 0; i < n; i++)
        drop_temp(&outs[i]);
}