/*
 * JPEG files of the front ends, read through libjpeg (libjpeg-turbo).
 *
 * libjpeg reports errors through error_exit, which by default prints and
 * exit()s; ours keeps the message (one line) and longjmp()s back to the
 * setjmp() in read_guarded(), as png.c does for libpng: everything that
 * function changes lives in a struct in its caller's frame, and the caller
 * destroys the decompressor and frees what was allocated, whichever way it
 * ended. Warnings, which libjpeg would print, are kept quietly, except
 * those that say image data was lost (corrupt entropy-coded data): those
 * stop the read as errors, for the encoder must not code grey blocks that
 * libjpeg made up. The input comes from a source manager of our own: the
 * bytes that the format's detection read first, then the stream; its end
 * before the EOI marker is an error (libjpeg's own stdio source would warn
 * and make up the rest).
 */
#include "mmp/imageio/jpeg.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "common/error.h"

/* A progressive file may have any number of scans, each read in full; a
 * small file of many tiny scans would keep libjpeg busy for a long time.
 * Real files have a few dozen at most. */
#define MAX_SCANS 1000
/* The stream is read this many bytes at a time. */
#define CHUNK 65536

typedef struct jpeg_io {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    struct jpeg_source_mgr src;
    struct jpeg_progress_mgr progress;
    jmp_buf jmp;
    FILE *f;
    const unsigned char *head; /* bytes already read from f */
    size_t head_len;
    int head_done;
    JOCTET *buf;               /* CHUNK bytes from libjpeg's pool */
    char msg[200];             /* why it stopped, one line */
    int code;                  /* its MMP_E* code */
    mmp_image img;
    mmp_imageio_meta meta;
    int want_meta;
    uint64_t max_pixels;       /* the pixel budget (0: MMP_MAX_PIXELS alone) */
} jpeg_io;

/* Stop the read: `code` and a one-line message, back to read_guarded. */
static void stop(jpeg_io *io, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;
static void stop(jpeg_io *io, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(io->msg, sizeof io->msg, fmt, ap);
    va_end(ap);
    for (char *p = io->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    io->code = code;
    longjmp(io->jmp, 1);
}

/* libjpeg's message for its current code, on one line. */
static void jpeg_text(j_common_ptr c, char *dst, size_t size)
{
    char text[JMSG_LENGTH_MAX];
    text[0] = '\0';
    (*c->err->format_message)(c, text);
    snprintf(dst, size, "%s", text);
}

static void on_error(j_common_ptr c)
{
    jpeg_io *io = c->client_data;
    char text[JMSG_LENGTH_MAX];
    jpeg_text(c, text, sizeof text);
    switch (c->err->msg_code) {
    case JERR_BAD_PRECISION:
        if (c->err->msg_parm.i[0] == 12)
            stop(io, MMP_EUNSUPPORTED, "12-bit JPEG is not supported (libjpeg: %s)", text);
        break;
    case JERR_SOF_UNSUPPORTED:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
        stop(io, MMP_EUNSUPPORTED, "this kind of JPEG is not supported (libjpeg: %s)", text);
    case JERR_IMAGE_TOO_BIG:
        stop(io, MMP_ELIMIT, "image too large (libjpeg: %s)", text);
    case JERR_OUT_OF_MEMORY:
        stop(io, MMP_ENOMEM, "out of memory reading the JPEG file (libjpeg: %s)", text);
    default:
        break;
    }
    stop(io, MMP_EFORMAT, "invalid JPEG file: %s", text);
}

/* Warnings (level -1) say what libjpeg did about damage; trace messages
 * (level >= 0) are never wanted. Nothing is printed. */
static void on_message(j_common_ptr c, int level)
{
    if (level >= 0)
        return;
    c->err->num_warnings++;
    switch (c->err->msg_code) {
    case JWRN_HIT_MARKER:      /* the entropy-coded data ends early */
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:     /* a restart marker lost */
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_JPEG_EOF: {
        char text[JMSG_LENGTH_MAX];
        jpeg_text(c, text, sizeof text);
        stop(c->client_data, MMP_EFORMAT, "invalid JPEG file: %s", text);
    }
    default:
        break;
    }
}

static void on_output(j_common_ptr c)
{
    (void)c;
}

static void on_progress(j_common_ptr c)
{
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (d->input_scan_number > MAX_SCANS)
        stop(c->client_data, MMP_EFORMAT,
             "invalid JPEG file: more than %d scans (a real file has a few dozen)", MAX_SCANS);
}

/* ------------------------------------------------------------ the source */

static void src_init(j_decompress_ptr c)
{
    (void)c;
}

static boolean src_fill(j_decompress_ptr c)
{
    jpeg_io *io = c->client_data;
    if (!io->head_done) {
        io->head_done = 1;
        if (io->head_len) {
            io->src.next_input_byte = io->head;
            io->src.bytes_in_buffer = io->head_len;
            return TRUE;
        }
    }
    const size_t n = fread(io->buf, 1, CHUNK, io->f);
    if (n == 0) {
        if (ferror(io->f))
            stop(io, MMP_EIO, "read error in JPEG file");
        stop(io, MMP_EFORMAT, "truncated JPEG file (it ends before its EOI marker)");
    }
    io->src.next_input_byte = io->buf;
    io->src.bytes_in_buffer = n;
    return TRUE;
}

static void src_skip(j_decompress_ptr c, long n)
{
    jpeg_io *io = c->client_data;
    if (n <= 0)
        return;
    while ((size_t)n > io->src.bytes_in_buffer) {
        n -= (long)io->src.bytes_in_buffer;
        io->src.bytes_in_buffer = 0;
        (void)src_fill(c);
    }
    io->src.next_input_byte += n;
    io->src.bytes_in_buffer -= (size_t)n;
}

static void src_term(j_decompress_ptr c)
{
    (void)c;
}

/* ---------------------------------------------------------- the metadata */

static const char exif_id[6] = {'E', 'x', 'i', 'f', 0, 0};
static const char icc_id[12] = "ICC_PROFILE"; /* and its NUL */
static const char xmp_id[] = "http://ns.adobe.com/xap/1.0/"; /* and its NUL: 29 bytes */

static void read_meta(jpeg_io *io)
{
    j_decompress_ptr c = &io->cinfo;
    mmp_imageio_meta *m = &io->meta;
    JOCTET *icc = NULL;
    unsigned int icc_len = 0;
    /* libjpeg joins the ICC segments in their sequence order; an
     * inconsistent set (one missing or twice, counts that disagree) is a
     * warning of libjpeg's (JWRN_BOGUS_ICC), and the profile is left out:
     * named in m->lost. */
    int icc_segments = 0;
    if (jpeg_read_icc_profile(c, &icc, &icc_len) && icc) {
        m->icc = icc;   /* allocated with malloc() by libjpeg: ours now */
        m->icc_len = icc_len;
    }
    for (jpeg_saved_marker_ptr p = c->marker_list; p; p = p->next) {
        if (p->marker == JPEG_APP0 + 2 && p->data_length >= sizeof icc_id &&
            memcmp(p->data, icc_id, sizeof icc_id) == 0)
            icc_segments++;
        if (p->marker != JPEG_APP0 + 1)
            continue;
        int rc = MMP_OK;
        if (!m->exif && p->data_length >= sizeof exif_id &&
            memcmp(p->data, exif_id, sizeof exif_id) == 0)
            rc = mmp_imageio_meta_set(&m->exif, &m->exif_len, p->data + sizeof exif_id,
                                      p->data_length - sizeof exif_id);
        else if (!m->xmp && p->data_length >= sizeof xmp_id &&
                 memcmp(p->data, xmp_id, sizeof xmp_id) == 0)
            rc = mmp_imageio_meta_set(&m->xmp, &m->xmp_len, p->data + sizeof xmp_id,
                                      p->data_length - sizeof xmp_id);
        if (rc != MMP_OK)
            stop(io, MMP_ENOMEM, "out of memory reading the JPEG file's metadata");
    }
    if (icc_segments && !m->icc)
        mmp_imageio_meta_lost(m, "the ICC profile (its APP2 segments do not make one profile)");
}

/* ------------------------------------------------------------- reading */

static int read_guarded(jpeg_io *io)
{
    if (setjmp(io->jmp))
        return -1;
    j_decompress_ptr c = &io->cinfo;
    jpeg_create_decompress(c);
    io->buf = (*c->mem->alloc_small)((j_common_ptr)c, JPOOL_PERMANENT, CHUNK);
    io->src.init_source = src_init;
    io->src.fill_input_buffer = src_fill;
    io->src.skip_input_data = src_skip;
    io->src.resync_to_restart = jpeg_resync_to_restart;
    io->src.term_source = src_term;
    c->src = &io->src;
    io->progress.progress_monitor = on_progress;
    c->progress = &io->progress;
    if (io->want_meta) {
        jpeg_save_markers(c, JPEG_APP0 + 1, 0xFFFF);
        jpeg_save_markers(c, JPEG_APP0 + 2, 0xFFFF);
    }
    if (jpeg_read_header(c, TRUE) != JPEG_HEADER_OK)
        stop(io, MMP_EFORMAT, "invalid JPEG file: tables only, no image");

    const unsigned long w = c->image_width, h = c->image_height;
    if (w > MMP_MAX_DIM || h > MMP_MAX_DIM || (unsigned long long)w * h > MMP_MAX_PIXELS)
        stop(io, MMP_ELIMIT, "image too large: %lux%lu (limits: %d per side, %lld pixels)", w, h,
             MMP_MAX_DIM, (long long)MMP_MAX_PIXELS);
    if (io->max_pixels && (uint64_t)w * h > io->max_pixels)
        stop(io, MMP_ELIMIT, "image of %lux%lu = %llu pixels exceeds the limit of %llu pixels", w,
             h, (unsigned long long)w * h, (unsigned long long)io->max_pixels);
    switch (c->jpeg_color_space) {
    case JCS_GRAYSCALE:
        c->out_color_space = JCS_GRAYSCALE;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        c->out_color_space = JCS_RGB;
        break;
    case JCS_CMYK:
    case JCS_YCCK:
        stop(io, MMP_EUNSUPPORTED,
             "CMYK JPEG is not supported (its colours need its CMYK profile and colour "
             "management; convert it to RGB first)");
    default:
        stop(io, MMP_EUNSUPPORTED, "JPEG of %d components in an unknown colour space is not "
                                   "supported (grey, YCbCr or RGB only)", c->num_components);
    }
    if (io->want_meta)
        read_meta(io);
    c->dct_method = JDCT_ISLOW;
    c->do_fancy_upsampling = TRUE;
    (void)jpeg_start_decompress(c);

    const int ch = c->output_components;
    if ((ch != 1 && ch != 3) || c->output_width != w || c->output_height != h)
        stop(io, MMP_EUNSUPPORTED, "unsupported JPEG layout (%d components)", ch);
    const int rc = mmp_image_alloc_channels(&io->img, (int)w, (int)h, ch, 255);
    if (rc != MMP_OK)
        stop(io, rc, "cannot allocate %lux%lu image", w, h);
    const size_t n = (size_t)w * (size_t)ch;
    JSAMPARRAY row = (*c->mem->alloc_sarray)((j_common_ptr)c, JPOOL_IMAGE, (JDIMENSION)n, 1);
    while (c->output_scanline < c->output_height) {
        uint16_t *dst = io->img.pix + (size_t)c->output_scanline * n;
        if (jpeg_read_scanlines(c, row, 1) != 1)
            stop(io, MMP_EFORMAT, "invalid JPEG file: no data at row %u", c->output_scanline);
        for (size_t i = 0; i < n; i++)
            dst[i] = row[0][i];
    }
    /* To the EOI marker: a file cut after its last scan is truncated too. */
    (void)jpeg_finish_decompress(c);
    return 0;
}

int mmp_jpeg_read(FILE *f, const unsigned char *head, size_t head_len, uint64_t max_pixels,
                  mmp_image *img, mmp_imageio_meta *meta, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (!f || (head_len && !head))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input stream");
    jpeg_io *io = calloc(1, sizeof *io);
    if (!io)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot start libjpeg");
    io->f = f;
    io->head = head;
    io->head_len = head_len;
    io->want_meta = meta != NULL;
    io->max_pixels = max_pixels;
    /* Before jpeg_create_decompress, which reports through it. */
    io->cinfo.err = jpeg_std_error(&io->jerr);
    io->jerr.error_exit = on_error;
    io->jerr.emit_message = on_message;
    io->jerr.output_message = on_output;
    io->cinfo.client_data = io;
    const int rc = read_guarded(io);
    /* Safe when jpeg_create_decompress failed or never ran (no pool yet). */
    jpeg_destroy_decompress(&io->cinfo);
    if (rc == 0) {
        *img = io->img;
        if (meta) {
            mmp_imageio_meta_free(meta);
            *meta = io->meta;
        }
        free(io);
        return MMP_OK;
    }
    mmp_image_free(&io->img);
    mmp_imageio_meta_free(&io->meta);
    const int code = io->code ? io->code : MMP_EFORMAT;
    mmp_error(errbuf, errlen, code, "%s", io->msg[0] ? io->msg : "invalid JPEG file");
    free(io);
    return code;
}
