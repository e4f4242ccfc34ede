/*
 * PGM files of the front ends, read and written through libnetpbm.
 *
 * libnetpbm reports every problem through pm_error(), which prints to stderr
 * and then either exit()s or, when a jump buffer is registered with
 * pm_setjmpbuf(), longjmp()s to it. A library must never exit on bad input,
 * so every libnetpbm call here runs inside a "guarded" helper that registers
 * its own jump buffer (restoring the previous one afterwards), while a
 * message handler captures the text instead of printing it. The helpers are
 * small and touch no local state after the jump, so the setjmp rules about
 * indeterminate automatic variables never bite.
 *
 * We validate the header ourselves (dimensions, maxval, format type) before
 * allocating anything, so a tiny file announcing a huge image fails at once.
 *
 * Not thread-safe: libnetpbm's handlers and jump buffer are process-global.
 */
#include "mmp/cli/pgm.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <netpbm/pam.h>
#include <netpbm/pgm.h>

#include "common/error.h"

/* Last message libnetpbm passed to pm_error(), one line. */
static char netpbm_msg[256];
static int netpbm_initialised;

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (!errbuf || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

/* Keep libnetpbm's message (it may end in or contain newlines; callers want
 * one line). */
static void capture_error(const char *msg)
{
    size_t n = 0;
    if (msg) {
        for (; msg[n] && n + 1 < sizeof netpbm_msg; n++)
            netpbm_msg[n] = (msg[n] == '\n' || msg[n] == '\r') ? ' ' : msg[n];
    }
    while (n > 0 && (netpbm_msg[n - 1] == ' ' || netpbm_msg[n - 1] == '.'))
        n--;
    netpbm_msg[n] = '\0';
}

/* Informational pm_message() output would go to stderr; a library stays
 * quiet. */
static void discard_message(const char *msg)
{
    (void)msg;
}

/* Install our handlers for the duration of one API call. libnetpbm has no
 * getter for the previous handlers, so we restore the defaults (NULL) on the
 * way out rather than leave ours installed for other libnetpbm users. */
static void netpbm_enter(void)
{
    if (!netpbm_initialised) {
        pm_init("mmp", 0);
        netpbm_initialised = 1;
    }
    netpbm_msg[0] = '\0';
    pm_setusererrormsgfn(capture_error);
    pm_setusermessagefn(discard_message);
}

static void netpbm_leave(void)
{
    pm_setusererrormsgfn(NULL);
    pm_setusermessagefn(NULL);
}

/*
 * Each guarded_* helper registers a jump buffer before setjmp() (so the saved
 * previous buffer `old` is never modified after setjmp) and returns -1 if
 * libnetpbm called pm_error().
 */
static int guarded_readinit(FILE *f, struct pam *pam)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    /* Size up to tuple_type only: comment_p is then absent, so libnetpbm
     * allocates no comment string we would have to free. Computed with
     * offsetof rather than libnetpbm's PAM_STRUCT_SIZE(), whose member
     * access through a null pointer is undefined behaviour (UBSan). */
    pnm_readpaminit(f, pam, (int)(offsetof(struct pam, tuple_type) + sizeof pam->tuple_type));
    pm_setjmpbuf(old);
    return 0;
}

/* Returns 0, -1 (pm_error) or 1 (a sample above maxval; *bad_* describe it).
 * *row_at tracks progress so the caller can report where the data ended. */
static int guarded_readrows(FILE *f, int width, int height, gray maxval, int format,
                            gray *row, uint16_t *pix, int *row_at,
                            int *bad_x, gray *bad_v)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    for (int y = 0; y < height; y++) {
        *row_at = y;
        pgm_readpgmrow(f, row, width, maxval, format);
        uint16_t *dst = pix + (size_t)y * (size_t)width;
        for (int x = 0; x < width; x++) {
            /* Plain (P2) samples are arbitrary decimal numbers; never store
             * one that does not fit the declared range. */
            if (row[x] > maxval) {
                *bad_x = x;
                *bad_v = row[x];
                pm_setjmpbuf(old);
                return 1;
            }
            dst[x] = (uint16_t)row[x];
        }
    }
    pm_setjmpbuf(old);
    return 0;
}

static int guarded_write_header(FILE *m, const mmp_image *img)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    /* forceplain = 0: raw P5; libnetpbm writes 2-byte big-endian samples
     * when maxval > 255. */
    pgm_writepgminit(m, img->width, img->height, (gray)img->maxval, 0);
    pm_setjmpbuf(old);
    return 0;
}

static int guarded_write_row(FILE *m, const gray *row, int width, gray maxval)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    pgm_writepgmrow(m, row, width, maxval, 0);
    pm_setjmpbuf(old);
    return 0;
}

/* Move what libnetpbm wrote to the memory stream `m` into `f`, then rewind
 * `m`. POSIX sets *msize to the current position at fflush, so after the
 * rewind the next chunk starts again at the beginning of the buffer. */
static int drain(FILE *m, char **mbuf, size_t *msize, FILE *f)
{
    if (fflush(m) != 0)
        return MMP_ENOMEM;
    if (*msize > 0 && fwrite(*mbuf, 1, *msize, f) != *msize)
        return MMP_EIO;
    if (fseeko(m, 0, SEEK_SET) != 0)
        return MMP_ENOMEM;
    return MMP_OK;
}

/*
 * libnetpbm encodes into a memory stream, one row at a time, and we copy
 * each chunk to `f` ourselves. libnetpbm's writers pm_error() on a failed
 * fwrite, and a longjmp out of them leaks their row buffer; a memory stream
 * cannot fail that way (except for lack of memory), and our own fwrite
 * reports errors as codes.
 */
static int write_through_memstream(FILE *f, const mmp_image *img, gray *row)
{
    char *mbuf = NULL;
    size_t msize = 0;
    FILE *m = open_memstream(&mbuf, &msize);
    if (!m)
        return MMP_ENOMEM;
    int rc = MMP_OK;
    netpbm_enter();
    if (guarded_write_header(m, img) != 0)
        rc = MMP_ENOMEM;
    else
        rc = drain(m, &mbuf, &msize, f);
    for (int y = 0; y < img->height && rc == MMP_OK; y++) {
        const uint16_t *src = img->pix + (size_t)y * (size_t)img->width;
        for (int x = 0; x < img->width; x++)
            row[x] = src[x];
        if (guarded_write_row(m, row, img->width, (gray)img->maxval) != 0)
            rc = MMP_ENOMEM;
        else
            rc = drain(m, &mbuf, &msize, f);
    }
    netpbm_leave();
    fclose(m);
    free(mbuf);
    return rc;
}

/* Magic of a libnetpbm format code ('P' * 256 + digit) for messages. */
static void format_magic(int format, char out[3])
{
    out[0] = (char)((format >> 8) & 0xff);
    out[1] = (char)(format & 0xff);
    out[2] = '\0';
    if (out[0] < 0x21 || out[0] > 0x7e || out[1] < 0x21 || out[1] > 0x7e)
        memcpy(out, "??", 3);
}

int mmp_pgm_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (!f) {
        set_err(errbuf, errlen, "no input stream");
        return MMP_EINVAL;
    }

    /* Peek one byte (the only pushback stdio guarantees) so that an empty
     * file and an obviously foreign file get precise messages; anything
     * starting with 'P' goes to libnetpbm. */
    int c0 = getc(f);
    if (c0 == EOF) {
        if (ferror(f)) {
            set_err(errbuf, errlen, "read error: %s", strerror(errno));
            return MMP_EIO;
        }
        set_err(errbuf, errlen, "empty file");
        return MMP_EFORMAT;
    }
    if (c0 != 'P') {
        int c1 = getc(f);
        if (c1 == EOF)
            set_err(errbuf, errlen, "not a PGM file (magic 0x%02X)", c0);
        else
            set_err(errbuf, errlen, "not a PGM file (magic 0x%02X%02X)", c0, c1);
        return MMP_EFORMAT;
    }
    if (ungetc(c0, f) == EOF) {
        set_err(errbuf, errlen, "read error: cannot push back a byte");
        return MMP_EIO;
    }

    struct pam pam;
    memset(&pam, 0, sizeof pam);
    netpbm_enter();
    int rc = guarded_readinit(f, &pam);
    netpbm_leave();
    if (rc != 0) {
        if (ferror(f)) {
            set_err(errbuf, errlen, "read error in PGM header");
            return MMP_EIO;
        }
        if (feof(f)) {
            set_err(errbuf, errlen, "truncated PGM header");
            return MMP_EFORMAT;
        }
        /* libnetpbm consumed the magic itself; its message quotes it. */
        if (strstr(netpbm_msg, "magic"))
            set_err(errbuf, errlen, "not a PGM file (%s)", netpbm_msg);
        else
            set_err(errbuf, errlen, "invalid PGM header: %s",
                    netpbm_msg[0] ? netpbm_msg : "unknown libnetpbm error");
        return MMP_EFORMAT;
    }

    char magic[3];
    format_magic(pam.format, magic);
    switch (PAM_FORMAT_TYPE(pam.format)) {
    case PGM_TYPE:
        break;
    case PPM_TYPE:
        set_err(errbuf, errlen, "not a PGM file (magic %s: PPM colour is not supported yet)", magic);
        return MMP_EFORMAT;
    case PBM_TYPE:
        set_err(errbuf, errlen, "not a PGM file (magic %s: PBM bitmaps are not supported)", magic);
        return MMP_EFORMAT;
    default:
        set_err(errbuf, errlen, "not a PGM file (magic %s: PAM is not supported)", magic);
        return MMP_EFORMAT;
    }

    /* All size checks come before any allocation. */
    if (pam.width <= 0 || pam.height <= 0) {
        set_err(errbuf, errlen, "invalid PGM dimensions %dx%d", pam.width, pam.height);
        return MMP_EFORMAT;
    }
    if (pam.width > MMP_MAX_DIM || pam.height > MMP_MAX_DIM ||
        (long long)pam.width * pam.height > MMP_MAX_PIXELS) {
        set_err(errbuf, errlen, "image too large: %dx%d (limits: %d per side, %lld pixels)",
                pam.width, pam.height, MMP_MAX_DIM, (long long)MMP_MAX_PIXELS);
        return MMP_ELIMIT;
    }
    /* libnetpbm already rejects these; checked again because the limits of
     * our uint16 samples must not depend on the library's version. */
    if (pam.maxval < 1 || pam.maxval > 65535) {
        set_err(errbuf, errlen, "invalid PGM maxval %lu (must be 1..65535)",
                (unsigned long)pam.maxval);
        return MMP_EFORMAT;
    }

    mmp_image tmp;
    rc = mmp_image_alloc(&tmp, pam.width, pam.height, (int)pam.maxval);
    if (rc != MMP_OK) {
        set_err(errbuf, errlen, "cannot allocate %dx%d image", pam.width, pam.height);
        return rc;
    }
    gray *row = malloc((size_t)pam.width * sizeof *row);
    if (!row) {
        mmp_image_free(&tmp);
        set_err(errbuf, errlen, "cannot allocate %dx%d image", pam.width, pam.height);
        return MMP_ENOMEM;
    }

    int row_at = 0, bad_x = 0;
    gray bad_v = 0;
    netpbm_enter();
    rc = guarded_readrows(f, pam.width, pam.height, (gray)pam.maxval, pam.format,
                          row, tmp.pix, &row_at, &bad_x, &bad_v);
    netpbm_leave();
    free(row);
    if (rc == 0) {
        *img = tmp;
        return MMP_OK;
    }
    mmp_image_free(&tmp);
    if (rc > 0) {
        set_err(errbuf, errlen, "PGM sample %u at (%d,%d) exceeds maxval %lu",
                bad_v, bad_x, row_at, (unsigned long)pam.maxval);
        return MMP_EFORMAT;
    }
    if (ferror(f)) {
        set_err(errbuf, errlen, "read error in PGM data (row %d of %d)", row_at, pam.height);
        return MMP_EIO;
    }
    if (feof(f)) {
        /* libnetpbm needs a delimiter after each plain sample, so a P2 file
         * whose last number is not followed by whitespace ends up here too. */
        int plain_last = pam.format == PGM_FORMAT && row_at == pam.height - 1;
        set_err(errbuf, errlen, "truncated PGM data (row %d of %d)%s", row_at, pam.height,
                plain_last ? "; plain PGM needs whitespace after the last sample" : "");
        return MMP_EFORMAT;
    }
    set_err(errbuf, errlen, "invalid PGM data (row %d of %d): %s", row_at, pam.height,
            netpbm_msg[0] ? netpbm_msg : "unknown libnetpbm error");
    return MMP_EFORMAT;
}

int mmp_pgm_read_path(const char *path, mmp_image *img, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (img)
        memset(img, 0, sizeof *img);
    if (!path || !img) {
        set_err(errbuf, errlen, "no input path");
        return MMP_EINVAL;
    }
    if (strcmp(path, "-") == 0)
        return mmp_pgm_read(stdin, img, errbuf, errlen);
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(errbuf, errlen, "cannot open %s: %s", path, strerror(errno));
        return MMP_EIO;
    }
    int rc = mmp_pgm_read(f, img, errbuf, errlen);
    fclose(f);   /* read-only: a close error cannot lose data */
    return rc;
}

int mmp_pgm_write(FILE *f, const mmp_image *img)
{
    if (!f || !img || !img->pix || img->width <= 0 || img->height <= 0 ||
        img->width > MMP_MAX_DIM || img->height > MMP_MAX_DIM ||
        (long long)img->width * img->height > MMP_MAX_PIXELS ||
        img->maxval < 1 || img->maxval > 65535)
        return MMP_EINVAL;
    /* A sample above maxval would make an invalid file (libnetpbm would
     * pm_error half-way through); refuse before writing anything. */
    size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t i = 0; i < n; i++)
        if (img->pix[i] > img->maxval)
            return MMP_EINVAL;

    gray *row = malloc((size_t)img->width * sizeof *row);
    if (!row)
        return MMP_ENOMEM;
    int rc = write_through_memstream(f, img, row);
    free(row);
    if (rc != MMP_OK)
        return rc;
    /* stdio buffers: a full disk often shows only at flush time. */
    if (fflush(f) != 0 || ferror(f))
        return MMP_EIO;
    return MMP_OK;
}
