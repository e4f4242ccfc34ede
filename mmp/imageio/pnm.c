/*
 * Netpbm files of the front ends (PBM, PGM, PPM, PAM), read and written
 * through libnetpbm.
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
 * We validate the header ourselves (dimensions, maxval, tuple type and depth) before
 * allocating anything, so a tiny file announcing a huge image fails at once.
 *
 * Not thread-safe: libnetpbm's handlers and jump buffer are process-global.
 */
#include "mmp/imageio/pnm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <netpbm/pam.h>

#include "common/error.h"

/* Last message libnetpbm passed to pm_error(), one line. */
static char netpbm_msg[256];
static int netpbm_initialised;

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
static int guarded_readrows(const struct pam *pam, tuple *row, uint16_t *pix, int *row_at,
                            int *bad_x, sample *bad_v)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    const int w = pam->width;
    const unsigned depth = pam->depth;
    for (int y = 0; y < pam->height; y++) {
        *row_at = y;
        pnm_readpamrow(pam, row);
        uint16_t *dst = pix + (size_t)y * (size_t)w * depth;
        for (int x = 0; x < w; x++) {
            for (unsigned c = 0; c < depth; c++) {
                /* Plain (P2, P3) samples are arbitrary decimal numbers; never
                 * store one that does not fit the declared range. */
                const sample v = row[x][c];
                if (v > pam->maxval) {
                    *bad_x = x;
                    *bad_v = v;
                    pm_setjmpbuf(old);
                    return 1;
                }
                *dst++ = (uint16_t)v;
            }
        }
    }
    pm_setjmpbuf(old);
    return 0;
}

static int guarded_write_header(struct pam *pam)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    pnm_writepaminit(pam);
    pm_setjmpbuf(old);
    return 0;
}

static int guarded_write_row(const struct pam *pam, tuple *row)
{
    jmp_buf jb;
    jmp_buf *old;
    pm_setjmpbufsave(&jb, &old);
    if (setjmp(jb)) {
        pm_setjmpbuf(old);
        return -1;
    }
    pnm_writepamrow(pam, row);
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

/* A row of `width` tuples of `depth` samples in one allocation, as
 * pnm_allocpamrow makes it, but ours: pnm_allocpamrow pm_error()s when out
 * of memory. */
static tuple *alloc_row(int width, unsigned depth)
{
    size_t n = (size_t)width;
    tuple *row = malloc(n * sizeof *row + n * depth * sizeof(sample));
    if (!row)
        return NULL;
    sample *s = (sample *)(row + n);
    for (size_t x = 0; x < n; x++)
        row[x] = s + x * depth;
    return row;
}

/*
 * libnetpbm encodes into a memory stream, one row at a time, and we copy
 * each chunk to `f` ourselves. libnetpbm's writers pm_error() on a failed
 * fwrite, and a longjmp out of them leaks their row buffer; a memory stream
 * cannot fail that way (except for lack of memory), and our own fwrite
 * reports errors as codes.
 */
static int write_through_memstream(FILE *f, const mmp_image *img, struct pam *pam, tuple *row)
{
    char *mbuf = NULL;
    size_t msize = 0;
    FILE *m = open_memstream(&mbuf, &msize);
    if (!m)
        return MMP_ENOMEM;
    pam->file = m;
    const unsigned depth = pam->depth;
    int rc = MMP_OK;
    netpbm_enter();
    if (guarded_write_header(pam) != 0)
        rc = MMP_ENOMEM;
    else
        rc = drain(m, &mbuf, &msize, f);
    for (int y = 0; y < img->height && rc == MMP_OK; y++) {
        const uint16_t *src = img->pix + (size_t)y * (size_t)img->width * depth;
        for (int x = 0; x < img->width; x++)
            for (unsigned c = 0; c < depth; c++)
                row[x][c] = *src++;
        if (guarded_write_row(pam, row) != 0)
            rc = MMP_ENOMEM;
        else
            rc = drain(m, &mbuf, &msize, f);
    }
    netpbm_leave();
    fclose(m);
    free(mbuf);
    return rc;
}

/* The kind of netpbm file, for messages. */
static const char *format_name(int format)
{
    switch (PAM_FORMAT_TYPE(format)) {
    case PBM_TYPE: return "PBM";
    case PGM_TYPE: return "PGM";
    case PPM_TYPE: return "PPM";
    default: return "PAM";
    }
}

/* The tuple types we read: name, depth, channels, and whether maxval must
 * be 1. */
static const struct {
    const char *name;
    unsigned depth;
    int bw;
} tuple_types[] = {
    {PAM_PGM_TUPLETYPE, 1, 0},       {PAM_PPM_TUPLETYPE, 3, 0},
    {PAM_PGM_ALPHA_TUPLETYPE, 2, 0}, {PAM_PPM_ALPHA_TUPLETYPE, 4, 0},
    {PAM_PBM_TUPLETYPE, 1, 1},       {PAM_PBM_ALPHA_TUPLETYPE, 2, 1},
};

/* The tuple type as a printable string for a one-line message. */
static void printable(const char *s, char *out, size_t outlen)
{
    size_t n = 0;
    for (; s[n] && n + 4 < outlen && n < 40; n++)
        out[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
    if (s[n] && n + 4 < outlen) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

/*
 * Headers. libnetpbm 11's PAM header parser (fgets into fixed buffers) can
 * read past the end of a line buffer on some malformed headers: fuzz_png
 * found ASan reports inside pnm_readpaminit that depend on what the stack
 * held before (tests/fuzz/regress/png/, docs/fuzzing.md). So a PAM header
 * is parsed here, and only the raster goes through libnetpbm
 * (pnm_readpamrow with the struct pam we fill). The PBM, PGM and PPM
 * headers (numbers, whitespace and comments, read by libnetpbm a character
 * at a time) are copied from the stream into memory, at most HEADER_MAX
 * bytes, and parsed by pnm_readpaminit from there: two bytes of magic have
 * then been read without a second pushback, which stdio does not promise.
 */
#define HEADER_MAX 65536

typedef struct header_copy {
    char buf[HEADER_MAX];
    size_t n;
} header_copy;

static int put(header_copy *h, int c)
{
    if (h->n >= sizeof h->buf)
        return -1;
    h->buf[h->n++] = (char)c;
    return 0;
}

/* Copy a PBM, PGM or PPM header (after its magic, already in h) up to and
 * including the one character after its last number, or to a character
 * libnetpbm will refuse, or to the end of the stream. */
static int copy_pnm_header(FILE *f, int numbers, header_copy *h)
{
    int got = 0, in_number = 0;
    for (;;) {
        int c = getc(f);
        if (c == EOF)
            return 0;
        if (put(h, c))
            return -1;
        if (c >= '0' && c <= '9') {
            in_number = 1;
            continue;
        }
        if (in_number && ++got == numbers) {
            /* The delimiter ends the header; a comment right after the
             * number runs to its newline. */
            if (c == '#')
                while ((c = getc(f)) != EOF) {
                    if (put(h, c))
                        return -1;
                    if (c == '\n')
                        break;
                }
            return 0;
        }
        in_number = 0;
        if (c == '#') {
            while ((c = getc(f)) != EOF) {
                if (put(h, c))
                    return -1;
                if (c == '\n')
                    break;
            }
        } else if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
                     c == '\f')) {
            return 0; /* junk: libnetpbm says so */
        }
    }
}

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* One header number: decimal digits only, at most 2^31 - 1. */
static int parse_number(const char *v, unsigned long *out)
{
    if (!*v)
        return -1;
    unsigned long x = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9')
            return -1;
        x = x * 10 + (unsigned long)(*v - '0');
        if (x > 0x7fffffffUL)
            return -1;
    }
    *out = x;
    return 0;
}

static void printable(const char *s, char *out, size_t outlen);

/* A PAM header after "P7": lines "LABEL value" up to ENDHDR, '#' comments
 * and blank lines ignored, TUPLTYPE lines joined by a space. */
static int read_pam_header(FILE *f, struct pam *pam, char *errbuf, size_t errlen)
{
    char line[256], what[48];
    size_t total = 0;
    unsigned long v[4];
    int seen[4] = {0, 0, 0, 0};
    static const char *const labels[4] = {"WIDTH", "HEIGHT", "DEPTH", "MAXVAL"};
    int c = getc(f);
    if (c == EOF || !is_space(c))
        goto bad_magic;
    if (c != '\n')
        while ((c = getc(f)) != EOF && c != '\n')
            if (!is_space(c))
                goto bad_magic;
    for (;;) {
        size_t n = 0;
        while ((c = getc(f)) != EOF && c != '\n') {
            if (n + 1 >= sizeof line) {
                return mmp_error(errbuf, errlen, MMP_EFORMAT,
                                 "invalid PAM header: a line longer than %zu bytes",
                                 sizeof line - 1);
            }
            if (c == '\0') {
                return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid PAM header: a NUL byte");
            }
            line[n++] = (char)c;
        }
        if (c == EOF) {
            if (ferror(f)) {
                return mmp_error(errbuf, errlen, MMP_EIO, "read error in netpbm header");
            }
            return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated netpbm header");
        }
        total += n + 1;
        if (total > HEADER_MAX) {
            return mmp_error(errbuf, errlen, MMP_EFORMAT,
                             "invalid PAM header: longer than %d bytes", HEADER_MAX);
        }
        while (n > 0 && is_space(line[n - 1]))
            n--;
        line[n] = '\0';
        char *label = line;
        while (is_space(*label))
            label++;
        if (*label == '\0' || *label == '#')
            continue;
        char *value = label;
        while (*value && !is_space(*value))
            value++;
        if (*value)
            *value++ = '\0';
        while (is_space(*value))
            value++;
        if (strcmp(label, "ENDHDR") == 0)
            break;
        if (strcmp(label, "TUPLTYPE") == 0) {
            size_t have = strlen(pam->tuple_type), add = strlen(value);
            if (add == 0 || have + (have > 0) + add >= sizeof pam->tuple_type) {
                return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid PAM header: %s TUPLTYPE",
                                 add ? "too long a" : "an empty");
            }
            if (have)
                pam->tuple_type[have++] = ' ';
            memcpy(pam->tuple_type + have, value, add + 1);
            continue;
        }
        int k = 0;
        while (k < 4 && strcmp(label, labels[k]) != 0)
            k++;
        if (k == 4) {
            printable(label, what, sizeof what);
            return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid PAM header: unknown line '%s'",
                             what);
        }
        if (parse_number(value, &v[k])) {
            printable(value, what, sizeof what);
            return mmp_error(errbuf, errlen, MMP_EFORMAT,
                             "invalid PAM header: %s '%s' is not a number up to 2^31 - 1",
                             labels[k], what);
        }
        seen[k] = 1;
    }
    for (int k = 0; k < 4; k++)
        if (!seen[k]) {
            return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid PAM header: no %s line",
                             labels[k]);
        }
    pam->size = sizeof *pam;
    pam->len = (unsigned)(offsetof(struct pam, tuple_type) + sizeof pam->tuple_type);
    pam->file = f;
    pam->format = PAM_FORMAT;
    pam->plainformat = 0;
    pam->width = (int)v[0];
    pam->height = (int)v[1];
    pam->depth = (unsigned)v[2];
    pam->maxval = (sample)v[3];
    pam->bytes_per_sample = v[3] > 255 ? 2 : 1;
    return MMP_OK;
bad_magic:
    return mmp_error(errbuf, errlen, MMP_EFORMAT,
                     "invalid PAM header: the magic P7 must end its line");
}

/* The header of any netpbm file into *pam; the stream is left at the
 * raster. */
static int read_header(FILE *f, struct pam *pam, char *errbuf, size_t errlen)
{
    int c0 = getc(f), c1 = c0 == 'P' ? getc(f) : EOF;
    if (c0 == EOF || c1 == EOF) {
        if (ferror(f)) {
            return mmp_error(errbuf, errlen, MMP_EIO, "read error in netpbm header");
        }
        if (c0 == 'P' || c0 == EOF) {
            return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated netpbm header");
        }
    }
    if (c0 != 'P') {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "not an image file (magic 0x%02X)", c0);
    }
    if (c1 == '7')
        return read_pam_header(f, pam, errbuf, errlen);
    header_copy *h = malloc(sizeof *h);
    if (!h) {
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    }
    h->n = 0;
    (void)put(h, c0);
    (void)put(h, c1);
    const int numbers = c1 == '1' || c1 == '4' ? 2 : 3;
    if (c1 >= '1' && c1 <= '6' && copy_pnm_header(f, numbers, h)) {
        free(h);
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid netpbm header: longer than %d bytes",
                         HEADER_MAX);
    }
    FILE *m = fmemopen(h->buf, h->n, "rb");
    if (!m) {
        free(h);
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    }
    netpbm_enter();
    int rc = guarded_readinit(m, pam);
    netpbm_leave();
    const int ended = feof(m);
    fclose(m);
    free(h);
    if (rc == 0) {
        pam->file = f;
        return MMP_OK;
    }
    if (ferror(f)) {
        return mmp_error(errbuf, errlen, MMP_EIO, "read error in netpbm header");
    }
    if (ended || feof(f)) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated netpbm header");
    }
    /* libnetpbm's message quotes a bad magic. */
    if (strstr(netpbm_msg, "magic"))
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "not an image file (%s)", netpbm_msg);
    return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid netpbm header: %s",
                     netpbm_msg[0] ? netpbm_msg : "unknown libnetpbm error");
}

int mmp_pnm_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen)
{
    return mmp_pnm_read_limited(f, 0, img, errbuf, errlen);
}

int mmp_pnm_read_limited(FILE *f, uint64_t max_pixels, mmp_image *img, char *errbuf,
                         size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (!f) {
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input stream");
    }

    struct pam pam;
    memset(&pam, 0, sizeof pam);
    int rc = read_header(f, &pam, errbuf, errlen);
    if (rc != MMP_OK)
        return rc;

    const char *kind = format_name(pam.format);
    /* All size checks come before any allocation. */
    if (pam.width <= 0 || pam.height <= 0) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid %s dimensions %dx%d", kind,
                         pam.width, pam.height);
    }
    if (pam.width > MMP_MAX_DIM || pam.height > MMP_MAX_DIM ||
        (long long)pam.width * pam.height > MMP_MAX_PIXELS) {
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "image too large: %dx%d (limits: %d per side, %lld pixels)", pam.width,
                         pam.height, MMP_MAX_DIM, (long long)MMP_MAX_PIXELS);
    }
    if (max_pixels && (uint64_t)pam.width * (uint64_t)pam.height > max_pixels) {
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "image of %dx%d = %llu pixels exceeds the limit of %llu pixels",
                         pam.width, pam.height,
                         (unsigned long long)pam.width * (unsigned long long)pam.height,
                         (unsigned long long)max_pixels);
    }
    /* libnetpbm already rejects these; checked again because the limits of
     * our uint16 samples must not depend on the library's version. */
    if (pam.maxval < 1 || pam.maxval > 65535) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid %s maxval %lu (must be 1..65535)",
                         kind, (unsigned long)pam.maxval);
    }
    /* libnetpbm names the tuple type of PBM, PGM and PPM files itself. */
    int type = -1;
    for (int i = 0; i < (int)(sizeof tuple_types / sizeof tuple_types[0]); i++)
        if (strcmp(pam.tuple_type, tuple_types[i].name) == 0)
            type = i;
    if (type < 0) {
        char name[48];
        printable(pam.tuple_type, name, sizeof name);
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "PAM tuple type '%s' is not supported (GRAYSCALE, RGB, GRAYSCALE_ALPHA, "
                         "RGB_ALPHA, BLACKANDWHITE)",
                         name);
    }
    if (pam.depth != tuple_types[type].depth) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT,
                         "PAM depth %u does not match tuple type %s (depth %u)", pam.depth,
                         tuple_types[type].name, tuple_types[type].depth);
    }
    if (tuple_types[type].bw && pam.maxval != 1) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "PAM tuple type %s needs maxval 1, not %lu",
                         tuple_types[type].name, (unsigned long)pam.maxval);
    }

    mmp_image tmp;
    rc = mmp_image_alloc_channels(&tmp, pam.width, pam.height, (int)pam.depth, (int)pam.maxval);
    if (rc != MMP_OK) {
        mmp_error(errbuf, errlen, MMP_OK, "cannot allocate %dx%d image", pam.width, pam.height);
        return rc;
    }
    tuple *row = alloc_row(pam.width, pam.depth);
    if (!row) {
        mmp_image_free(&tmp);
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot allocate %dx%d image", pam.width,
                         pam.height);
    }

    int row_at = 0, bad_x = 0;
    sample bad_v = 0;
    netpbm_enter();
    rc = guarded_readrows(&pam, row, tmp.pix, &row_at, &bad_x, &bad_v);
    netpbm_leave();
    free(row);
    if (rc == 0) {
        *img = tmp;
        return MMP_OK;
    }
    mmp_image_free(&tmp);
    if (rc > 0) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "%s sample %lu at (%d,%d) exceeds maxval %lu",
                         kind, (unsigned long)bad_v, bad_x, row_at, (unsigned long)pam.maxval);
    }
    if (ferror(f)) {
        return mmp_error(errbuf, errlen, MMP_EIO, "read error in %s data (row %d of %d)", kind,
                         row_at, pam.height);
    }
    if (feof(f)) {
        /* libnetpbm needs a delimiter after each plain sample, so a plain
         * file whose last number is not followed by whitespace ends up here
         * too. */
        int plain_last = (pam.format == PGM_FORMAT || pam.format == PPM_FORMAT) &&
                         row_at == pam.height - 1;
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated %s data (row %d of %d)%s", kind,
                         row_at, pam.height,
                         plain_last ? "; a plain file needs whitespace after the last sample" : "");
    }
    return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid %s data (row %d of %d): %s", kind,
                     row_at, pam.height, netpbm_msg[0] ? netpbm_msg : "unknown libnetpbm error");
}

int mmp_pnm_write(FILE *f, const mmp_image *img, int force_pam)
{
    if (!f || !img || !img->pix || img->width <= 0 || img->height <= 0 ||
        img->width > MMP_MAX_DIM || img->height > MMP_MAX_DIM ||
        (long long)img->width * img->height > MMP_MAX_PIXELS ||
        img->maxval < 1 || img->maxval > 65535 || img->channels < 0 || img->channels > 4)
        return MMP_EINVAL;
    const int ch = mmp_image_channels(img);
    /* A sample above maxval would make an invalid file (libnetpbm would
     * pm_error half-way through); refuse before writing anything. */
    size_t n = (size_t)img->width * (size_t)img->height * (size_t)ch;
    for (size_t i = 0; i < n; i++)
        if (img->pix[i] > img->maxval)
            return MMP_EINVAL;

    struct pam pam;
    memset(&pam, 0, sizeof pam);
    pam.size = sizeof pam;
    pam.len = (unsigned)(offsetof(struct pam, tuple_type) + sizeof pam.tuple_type);
    pam.plainformat = 0;
    pam.width = img->width;
    pam.height = img->height;
    pam.depth = (unsigned)ch;
    pam.maxval = (sample)img->maxval;
    /* libnetpbm writes 2-byte big-endian samples when maxval > 255. */
    pam.bytes_per_sample = img->maxval > 255 ? 2 : 1;
    static const char *const types[4] = {PAM_PGM_TUPLETYPE, PAM_PGM_ALPHA_TUPLETYPE,
                                         PAM_PPM_TUPLETYPE, PAM_PPM_ALPHA_TUPLETYPE};
    strcpy(pam.tuple_type, types[ch - 1]);
    if (force_pam || ch == 2 || ch == 4)
        pam.format = PAM_FORMAT;
    else
        pam.format = ch == 1 ? RPGM_FORMAT : RPPM_FORMAT;

    tuple *row = alloc_row(img->width, (unsigned)ch);
    if (!row)
        return MMP_ENOMEM;
    int rc = write_through_memstream(f, img, &pam, row);
    free(row);
    if (rc != MMP_OK)
        return rc;
    /* stdio buffers: a full disk often shows only at flush time. */
    if (fflush(f) != 0 || ferror(f))
        return MMP_EIO;
    return MMP_OK;
}
