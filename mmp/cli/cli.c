/* Helpers shared by the command-line front ends. */
#include "mmp/cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int mmp_cli_write_atomic(const char *path, mmp_cli_writer write_fn, void *opaque, char *errbuf,
                         size_t errlen)
{
    if (strcmp(path, "-") == 0) {
        int err = write_fn(opaque, stdout);
        if (!err && fflush(stdout) != 0)
            err = MMP_EIO;
        if (err)
            snprintf(errbuf, errlen, "cannot write to standard output");
        return err;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) {
        snprintf(errbuf, errlen, "out of memory");
        return MMP_ENOMEM;
    }
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot create %s: %s", path, strerror(errno));
        free(tmp);
        return MMP_EIO;
    }
    /* mkstemp creates 0600; give the file the mode a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "wb");
    int err = f ? write_fn(opaque, f) : MMP_EIO;
    if (f && fclose(f) != 0)
        err = err ? err : MMP_EIO;
    else if (!f)
        close(fd);
    if (!err && rename(tmp, path) != 0)
        err = MMP_EIO;
    if (err) {
        snprintf(errbuf, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return err;
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
