/* Helpers shared by the command-line front ends: messages, options, reading
 * inputs, standard output and the progress bar (the outputs are output.c's). */
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

void mmp_cli_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---------------------------------------------------------------- options */

int mmp_cli_option_error(const char *prog, int c, char **argv, const char *shortopts)
{
    /* getopt_long has moved past the element it refused, except within a
     * cluster of letters not yet finished (-vxyz at x), where argv[optind -
     * 1] is an earlier element: a letter is named by optopt alone. A long
     * option and a letter missing its value always finish their element. */
    const char *elem = optind > 0 ? argv[optind - 1] : "";
    const int is_long = strncmp(elem, "--", 2) == 0;
    const int letter = optopt > 0 && optopt < 128 && optopt != ':' ? optopt : 0;
    const int n = (int)strcspn(elem, "=");
    if (c == ':') {
        if (is_long || !letter)
            mmp_cli_error(prog, "option '%.*s' needs a value", n, elem);
        else
            mmp_cli_error(prog, "option '-%c' needs a value", letter);
    } else if (optopt == 0) {
        mmp_cli_error(prog, "unknown option '%.*s' (see --help)", n, elem);
    } else if (letter && !strchr(shortopts, letter)) {
        mmp_cli_error(prog, "unknown option '-%c' (see --help)", letter);
    } else {
        /* A known option refused: a long one given a value it takes none of. */
        mmp_cli_error(prog, "option '%.*s' takes no value (see --help)", n, elem);
    }
    return MMP_EXIT_USAGE;
}

int mmp_cli_parse_max_pixels(const char *prog, const char *arg, uint64_t *out)
{
    char *end = (char *)arg;
    errno = 0;
    const unsigned long long v = arg[0] >= '0' && arg[0] <= '9' ? strtoull(arg, &end, 10) : 0;
    if (errno || v < 1 || v > (unsigned long long)MMP_MAX_PIXELS || *end) {
        mmp_cli_error(prog, "invalid --max-pixels '%s' (a whole number of pixels from 1 to %lld)",
                      arg, (long long)MMP_MAX_PIXELS);
        return MMP_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

int mmp_cli_version(const char *prog)
{
#ifdef MMP_FORMAT_VERSION_STRING
    printf("%s %s (format version %s)\n", prog, MMP_VERSION_STRING, MMP_FORMAT_VERSION_STRING);
#else
    printf("%s %s\n", prog, MMP_VERSION_STRING);
#endif
    return mmp_cli_stdout_done(prog);
}

/* ------------------------------------------------------------------ input */

/* fread until n bytes or the end: the bytes read. */
static size_t read_full(FILE *f, uint8_t *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        const size_t k = fread(b + got, 1, n - got, f);
        if (k == 0)
            break;
        got += k;
    }
    return got;
}

int mmp_cli_read_file(const char *path, size_t limit, const char *magic, uint8_t **buf,
                      size_t *len, char *errbuf, size_t errlen)
{
    const int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "standard input" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    *buf = NULL;
    *len = 0;
    if (!f) {
        snprintf(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
        return MMP_EIO;
    }
    /* A regular file tells its size: one over the limit is refused unread,
     * and the buffer takes it at once. Other inputs grow the buffer in
     * steps, never past limit + 1 bytes (one byte past the limit proves the
     * file too large). */
    size_t cap = limit < (1 << 16) ? limit + 1 : 1 << 16, n = 0;
    int err = 0;
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
        const off_t at = is_stdin ? lseek(fileno(f), 0, SEEK_CUR) : 0;
        const unsigned long long left =
            sb.st_size > (at > 0 ? at : 0) ? (unsigned long long)(sb.st_size - (at > 0 ? at : 0))
                                           : 0;
        if (left > limit)
            err = MMP_ELIMIT;
        else
            cap = (size_t)left + 1;
    }
    uint8_t *b = NULL;
    const size_t m = magic ? strlen(magic) : 0;
    uint8_t head[16];
    if (!err && m && m <= sizeof head) {
        /* The first bytes alone, so that a foreign file (or /dev/zero) is
         * refused before anything else is read or allocated. */
        n = read_full(f, head, m);
        if (ferror(f)) {
            snprintf(errbuf, errlen, "cannot read %s: %s", name, strerror(errno));
            err = MMP_EIO;
        } else if (n < m || memcmp(head, magic, n) != 0) {
            cap = n ? n : 1;
        }
    }
    if (!err && !(b = malloc(cap)))
        err = MMP_ENOMEM;
    if (!err && n) {
        memcpy(b, head, n);
        if (n < m || memcmp(head, magic, n) != 0)
            goto done;
    }
    while (!err) {
        if (n == cap) {
            if (n > limit) {
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
                snprintf(errbuf, errlen, "cannot read %s: %s", name, strerror(errno));
                err = MMP_EIO;
            }
            break;
        }
    }
done:
    if (err == MMP_ENOMEM)
        snprintf(errbuf, errlen, "out of memory reading %s", name);
    if (err == MMP_ELIMIT)
        snprintf(errbuf, errlen, "%s: file too large (limit %zu bytes)", name, limit);
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

int mmp_cli_progress(void *opaque, int done, int total)
{
    (void)opaque;
    if (!isatty(2))
        return 0;
    int width = 40, filled = total ? done * width / total : width;
    fprintf(stderr, "\r[%.*s%*s] %3d%%", filled, "########################################",
            width - filled, "", total ? done * 100 / total : 100);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
    return 0;
}
