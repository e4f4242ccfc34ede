/*
 * PNG files of the front ends, read and written through libpng.
 *
 * libpng reports errors by calling an error function that must not return:
 * ours keeps the message (one line) and longjmp()s back to the setjmp() in
 * read_guarded() or write_guarded(). Everything those functions change is
 * in a struct that lives in their caller's frame, so no automatic variable
 * of the function that called setjmp() is read after the jump (the C rule
 * about indeterminate non-volatile locals never applies), and the caller
 * frees whatever was allocated, whichever way the guarded function ended:
 * png_destroy_*_struct on every path.
 *
 * Metadata (mmp/imageio/meta.h). libpng derives one colour space from the
 * gAMA, cHRM, sRGB and iCCP chunks together and reports that, not the
 * chunks: an sRGB chunk alone reads back as gAMA and cHRM too, a profile
 * it finds inconsistent is dropped, and on writing it checks each against
 * the others. So those four chunks are read and written as they are, as
 * "unknown" chunks (png_set_keep_unknown_chunks), the iCCP profile
 * inflated and deflated here with zlib; eXIf and the text chunks go
 * through libpng's own calls, which keep their bytes.
 */
#include "mmp/imageio/png.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <zlib.h>

#include "common/error.h"

const unsigned char mmp_png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

/* The most libpng may allocate for one ancillary chunk (iCCP, zTXt, ...),
 * decompressed: profiles and texts are far smaller, and a tiny file must
 * not make us allocate much. */
#define CHUNK_MALLOC_MAX (8u << 20)

typedef struct png_io {
    png_structp png;
    png_infop info;
    FILE *f;
    char msg[200];        /* libpng's last error, one line */
    char warning[120];    /* libpng's last warning, one line */
    int code;             /* our own verdict when we stopped it, else 0 */
    mmp_image img;        /* reading: the image being filled */
    png_bytep *rows;      /* reading: row pointers into img.pix */
    const mmp_image *src; /* writing: the image */
    png_bytep row;        /* writing: one row of the file */
    int depth;            /* writing: bit depth in the file */
    int sig_read;
    int want_meta;        /* reading: keep the metadata chunks */
    uint64_t max_pixels;  /* reading: the pixel budget (0: MMP_MAX_PIXELS alone) */
    const mmp_imageio_meta *meta; /* writing: the metadata, or NULL */
    unsigned char *iccp;  /* writing: the iCCP chunk's data */
    png_textp texts;      /* writing: the text chunks */
    char dropped[200];    /* writing: the parts of meta not written */
} png_io;

/* The chunks read and written as they are (the comment at the top). */
static const png_byte colour_chunks[] = "iCCP\0sRGB\0gAMA\0cHRM";
static const char xmp_key[] = "XML:com.adobe.xmp";

/* A message of libpng on one line. */
static void keep(char *dst, size_t size, const char *msg)
{
    size_t n = 0;
    if (msg)
        for (; msg[n] && n + 1 < size; n++)
            dst[n] = (msg[n] == '\n' || msg[n] == '\r') ? ' ' : msg[n];
    dst[n] = '\0';
}

static void on_error(png_structp png, png_const_charp msg)
{
    png_io *io = png_get_error_ptr(png);
    keep(io->msg, sizeof io->msg, msg);
    png_longjmp(png, 1);
}

/* Warnings (a bad CRC in an ancillary chunk, which libpng skips, ...) would
 * go to stderr; the front ends print only their own messages. The last one
 * says what "Invalid IHDR data" was. */
static void on_warning(png_structp png, png_const_charp msg)
{
    png_io *io = png_get_error_ptr(png);
    keep(io->warning, sizeof io->warning, msg);
}

int mmp_png_can_hold(int maxval)
{
    return maxval >= 1 && maxval <= 65535 && (maxval & (maxval + 1)) == 0;
}

static int bits_of(int maxval)
{
    int k = 0;
    while (maxval >> k)
        k++;
    return k;
}

/* A k-bit value in `depth` bits, its bits repeated from the top (the PNG
 * specification's scaling for sBIT). */
static unsigned replicate(unsigned u, int k, int depth)
{
    unsigned r = 0;
    for (int shift = depth - k; shift > -k; shift -= k)
        r |= shift >= 0 ? u << shift : u >> -shift;
    return r;
}

/* ------------------------------------------------------------------ reading */

/* Everything from the signature to the end of the file, the image into
 * io->img. Returns 0, or -1 after an error (io->msg, and io->code when it was
 * our verdict). */
static int read_guarded(png_io *io)
{
    if (setjmp(png_jmpbuf(io->png)))
        return -1;
    png_structp png = io->png;
    png_infop info = io->info;
    /* Sizes: libpng refuses wider or taller images in png_read_info, before
     * we allocate anything; the pixel count is ours to check below. */
    png_set_user_limits(png, MMP_MAX_DIM, MMP_MAX_DIM);
    png_set_chunk_malloc_max(png, CHUNK_MALLOC_MAX);
    if (io->want_meta)
        png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_ALWAYS, colour_chunks, 4);
    png_init_io(png, io->f);
    png_set_sig_bytes(png, io->sig_read);
    png_read_info(png, info);

    png_uint_32 w, h;
    int depth, ctype, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &ctype, &interlace, NULL, NULL);
    if ((unsigned long long)w * h > (unsigned long long)MMP_MAX_PIXELS) {
        snprintf(io->msg, sizeof io->msg,
                 "image too large: %lux%lu (limits: %d per side, %lld pixels)", (unsigned long)w,
                 (unsigned long)h, MMP_MAX_DIM, (long long)MMP_MAX_PIXELS);
        io->code = MMP_ELIMIT;
        return -1;
    }
    if (io->max_pixels && (uint64_t)w * h > io->max_pixels) {
        snprintf(io->msg, sizeof io->msg,
                 "image of %lux%lu = %llu pixels exceeds the limit of %llu pixels",
                 (unsigned long)w, (unsigned long)h, (unsigned long long)w * h,
                 (unsigned long long)io->max_pixels);
        io->code = MMP_ELIMIT;
        return -1;
    }
    const int trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    int maxval;
    if (ctype == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
        maxval = 255;
    } else if (depth < 8 && !trns) {
        /* One byte per sample, values unchanged (not scaled to 8 bits). */
        png_set_packing(png);
        maxval = (1 << depth) - 1;
    } else {
        /* With tRNS, low-depth grey becomes 8 bits (libpng scales it). */
        maxval = depth == 16 ? 65535 : 255;
    }
    if (trns)
        png_set_tRNS_to_alpha(png);
    (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);

    const int ch = png_get_channels(png, info);
    const int out_depth = png_get_bit_depth(png, info);
    const size_t bps = out_depth == 16 ? 2 : 1;
    if (ch < 1 || ch > 4 || (out_depth != 8 && out_depth != 16) ||
        png_get_rowbytes(png, info) != (size_t)w * (size_t)ch * bps) {
        snprintf(io->msg, sizeof io->msg, "unsupported PNG layout (%d channels of %d bits)", ch,
                 out_depth);
        io->code = MMP_EUNSUPPORTED;
        return -1;
    }
    int rc = mmp_image_alloc_channels(&io->img, (int)w, (int)h, ch, maxval);
    if (rc != MMP_OK) {
        snprintf(io->msg, sizeof io->msg, "cannot allocate %lux%lu image", (unsigned long)w,
                 (unsigned long)h);
        io->code = rc;
        return -1;
    }
    io->rows = malloc((size_t)h * sizeof *io->rows);
    if (!io->rows) {
        snprintf(io->msg, sizeof io->msg, "cannot allocate %lux%lu image", (unsigned long)w,
                 (unsigned long)h);
        io->code = MMP_ENOMEM;
        return -1;
    }
    /* libpng writes each row's bytes at the start of the image's own row
     * (2 bytes a sample there, at most as many in the file's row), and we
     * widen them in place afterwards: no second copy of the image. */
    const size_t stride = (size_t)w * (size_t)ch;
    for (png_uint_32 y = 0; y < h; y++)
        io->rows[y] = (png_bytep)(io->img.pix + (size_t)y * stride);
    png_read_image(png, io->rows);
    /* The chunks after the image data (text, eXIf) into the same info. */
    png_read_end(png, io->want_meta ? info : NULL);
    return 0;
}

/* The bytes libpng left at the start of each row become samples. */
static void widen_rows(png_io *io, int bytes_per_sample)
{
    mmp_image *img = &io->img;
    const size_t n = (size_t)img->width * (size_t)img->channels;
    for (int y = 0; y < img->height; y++) {
        uint16_t *row = img->pix + (size_t)y * n;
        const unsigned char *b = (const unsigned char *)row;
        if (bytes_per_sample == 1) {
            /* From the end: sample i (bytes 2i, 2i + 1) never overwrites a
             * byte j < i not yet read. */
            for (size_t i = n; i-- > 0;)
                row[i] = b[i];
        } else {
            for (size_t i = 0; i < n; i++) {
                const uint16_t v = (uint16_t)(b[2 * i] << 8 | b[2 * i + 1]);
                row[i] = v;
            }
        }
    }
}

/* sBIT: k significant bits in every channel and samples that are their
 * k-bit values repeated give maxval 2^k - 1; else the full depth stays. */
static void apply_sbit(png_io *io, int palette)
{
    png_color_8p sig;
    if (palette || !png_get_sBIT(io->png, io->info, &sig))
        return;
    mmp_image *img = &io->img;
    const int depth = bits_of(img->maxval);
    if (depth != 8 && depth != 16)
        return;
    int k;
    switch (img->channels) {
    case 1: k = sig->gray; break;
    case 2: k = sig->gray == sig->alpha ? sig->gray : 0; break;
    case 3: k = sig->red == sig->green && sig->red == sig->blue ? sig->red : 0; break;
    default:
        k = sig->red == sig->green && sig->red == sig->blue && sig->red == sig->alpha ? sig->red
                                                                                      : 0;
        break;
    }
    if (k < 1 || k >= depth)
        return;
    const size_t n = (size_t)img->width * (size_t)img->height * (size_t)img->channels;
    for (size_t i = 0; i < n; i++)
        if (replicate(img->pix[i] >> (depth - k), k, depth) != img->pix[i])
            return;
    for (size_t i = 0; i < n; i++)
        img->pix[i] = (uint16_t)(img->pix[i] >> (depth - k));
    img->maxval = (1 << k) - 1;
}

static uint32_t get32(const png_byte *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void put32(png_byte *b, uint32_t v)
{
    b[0] = (png_byte)(v >> 24), b[1] = (png_byte)(v >> 16), b[2] = (png_byte)(v >> 8);
    b[3] = (png_byte)v;
}

/* The zlib stream of an iCCP chunk, inflated: at most CHUNK_MALLOC_MAX
 * bytes. Returns 0, or -1 for a damaged or too large one (left out, and
 * named in the metadata's `lost`). */
static int inflate_profile(const png_byte *src, size_t n, unsigned char **out, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return -1;
    size_t cap = 4096, len = 0;
    unsigned char *b = malloc(cap);
    int zr = Z_OK;
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n;
    while (b && zr == Z_OK) {
        if (len == cap) {
            unsigned char *nb = cap < CHUNK_MALLOC_MAX ? realloc(b, cap * 2) : NULL;
            if (!nb)
                break;
            b = nb;
            cap *= 2;
        }
        z.next_out = b + len;
        z.avail_out = (uInt)(cap - len);
        zr = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
        if (zr == Z_BUF_ERROR && z.avail_out > 0)
            break;   /* the input ended before the stream */
        if (zr == Z_BUF_ERROR)
            zr = Z_OK;
    }
    inflateEnd(&z);
    if (zr != Z_STREAM_END || len == 0) {
        free(b);
        return -1;
    }
    *out = b;
    *out_len = len;
    return 0;
}

/* The metadata of the file just read (both info structs' chunks are in
 * io->info) into m. Returns 0 or MMP_ENOMEM. */
static int take_meta(png_io *io, mmp_imageio_meta *m)
{
    png_unknown_chunkp u = NULL;
    const int nu = png_get_unknown_chunks(io->png, io->info, &u);
    for (int i = 0; i < nu; i++) {
        const png_byte *d = u[i].data;
        const size_t n = u[i].size;
        const char *name = (const char *)u[i].name;
        if (memcmp(name, "sRGB", 4) == 0 && n == 1 && !m->has_srgb) {
            m->has_srgb = 1;
            m->srgb_intent = d[0];
        } else if (memcmp(name, "gAMA", 4) == 0 && n == 4 && !m->has_gama) {
            m->has_gama = 1;
            m->gama = get32(d);
        } else if (memcmp(name, "cHRM", 4) == 0 && n == 32 && !m->has_chrm) {
            m->has_chrm = 1;
            for (int k = 0; k < 8; k++)
                m->chrm[k] = get32(d + 4 * k);
        } else if (memcmp(name, "iCCP", 4) == 0 && !m->icc) {
            /* Name (1 to 79 bytes), NUL, method 0, zlib stream. */
            const png_byte *nul = memchr(d, 0, n < 81 ? n : 81);
            const size_t k = nul ? (size_t)(nul - d) : 0;
            unsigned char *icc = NULL;
            size_t icc_len = 0;
            if (k < 1 || k + 2 > n || d[k + 1] != 0 ||
                inflate_profile(d + k + 2, n - k - 2, &icc, &icc_len) != 0) {
                mmp_imageio_meta_lost(m, "the ICC profile (an iCCP chunk damaged or over 8 MiB)");
                continue;
            }
            m->icc = icc;
            m->icc_len = icc_len;
            m->icc_name = malloc(k + 1);
            if (!m->icc_name)
                return MMP_ENOMEM;
            memcpy(m->icc_name, d, k);
            m->icc_name[k] = '\0';
        }
    }
    png_uint_32 nexif = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(io->png, io->info, &nexif, &exif) && exif && nexif &&
        mmp_imageio_meta_set(&m->exif, &m->exif_len, exif, nexif) != MMP_OK)
        return MMP_ENOMEM;
    png_textp t = NULL;
    int nt = 0;
    png_get_text(io->png, io->info, &t, &nt);
    for (int i = 0; i < nt; i++) {
        const char *text = t[i].text ? t[i].text : "";
        const size_t len = strlen(text);
        const int c = t[i].compression;
        const mmp_imageio_text_kind kind = c == PNG_TEXT_COMPRESSION_zTXt ? MMP_TEXT_ZTXT
                                           : c == PNG_ITXT_COMPRESSION_NONE ? MMP_TEXT_ITXT
                                           : c == PNG_ITXT_COMPRESSION_zTXt ? MMP_TEXT_ITXT_ZIP
                                                                            : MMP_TEXT_TEXT;
        int rc;
        if ((kind == MMP_TEXT_ITXT || kind == MMP_TEXT_ITXT_ZIP) && !m->xmp &&
            strcmp(t[i].key, xmp_key) == 0)
            rc = mmp_imageio_meta_set(&m->xmp, &m->xmp_len, text, len);
        else
            rc = mmp_imageio_meta_add_text(m, kind, t[i].key, text, len, t[i].lang,
                                           t[i].lang_key);
        if (rc != MMP_OK)
            return rc;
    }
    return MMP_OK;
}

int mmp_png_read(FILE *f, int sig_read, mmp_image *img, char *errbuf, size_t errlen)
{
    return mmp_png_read_meta(f, sig_read, 0, img, NULL, errbuf, errlen);
}

int mmp_png_read_meta(FILE *f, int sig_read, uint64_t max_pixels, mmp_image *img,
                      mmp_imageio_meta *meta, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (!f || sig_read < 0 || sig_read > 8) {
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input stream");
    }
    png_io io;
    memset(&io, 0, sizeof io);
    io.f = f;
    io.sig_read = sig_read;
    io.want_meta = meta != NULL;
    io.max_pixels = max_pixels;
    io.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
    if (io.png)
        io.info = png_create_info_struct(io.png);
    if (!io.png || !io.info) {
        png_destroy_read_struct(io.png ? &io.png : NULL, NULL, NULL);
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot start libpng");
    }
    int rc = read_guarded(&io);
    mmp_imageio_meta m;
    memset(&m, 0, sizeof m);
    if (rc == 0) {
        widen_rows(&io, bits_of(io.img.maxval) == 16 ? 2 : 1);
        apply_sbit(&io, png_get_color_type(io.png, io.info) == PNG_COLOR_TYPE_PALETTE);
        if (meta && take_meta(&io, &m) != MMP_OK) {
            mmp_imageio_meta_free(&m);
            png_destroy_read_struct(&io.png, &io.info, NULL);
            free(io.rows);
            mmp_image_free(&io.img);
            return mmp_error(errbuf, errlen, MMP_ENOMEM,
                             "out of memory reading the PNG file's metadata");
        }
    }
    png_destroy_read_struct(&io.png, &io.info, NULL);
    free(io.rows);
    if (rc == 0) {
        *img = io.img;
        if (meta) {
            mmp_imageio_meta_free(meta);
            *meta = m;
        }
        return MMP_OK;
    }
    mmp_image_free(&io.img);
    if (io.code) {
        mmp_error(errbuf, errlen, MMP_OK, "%s", io.msg);
        return io.code;
    }
    if (ferror(f)) {
        return mmp_error(errbuf, errlen, MMP_EIO, "read error in PNG file");
    }
    if (feof(f)) {
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated PNG file");
    }
    if (strstr(io.msg, "user limit") || (strstr(io.msg, "IHDR") && strstr(io.warning, "user limit"))) {
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "image too large (libpng: %s; limits: %d per side, %lld pixels)",
                         strstr(io.msg, "user limit") ? io.msg : io.warning, MMP_MAX_DIM,
                         (long long)MMP_MAX_PIXELS);
    }
    if (strstr(io.msg, "IHDR") && io.warning[0])
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid PNG file: %s (%s)", io.msg,
                         io.warning);
    return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid PNG file: %s",
                     io.msg[0] ? io.msg : "unknown libpng error");
}

/* ------------------------------------------------------------------ writing */

static void note_dropped(png_io *io, const char *what)
{
    const size_t n = strlen(io->dropped);
    snprintf(io->dropped + n, sizeof io->dropped - n, "%s%s", n ? ", " : "", what);
}

/* A PNG keyword (text chunks, iCCP's profile name): 1 to 79 Latin-1
 * printable bytes, no leading, trailing or double space. */
static int valid_keyword(const char *k)
{
    const size_t n = k ? strlen(k) : 0;
    if (n < 1 || n > 79 || k[0] == ' ' || k[n - 1] == ' ')
        return 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned c = (unsigned char)k[i];
        if (!((c >= 32 && c <= 126) || c >= 161) || (c == ' ' && k[i + 1] == ' '))
            return 0;
    }
    return 1;
}

static void add_text(png_io *io, int *nt, int compression, const char *key, const char *text,
                     const char *lang, const char *lang_key)
{
    png_textp t = &io->texts[(*nt)++];
    t->compression = compression;
    t->key = (png_charp)key;
    t->text = (png_charp)text;
    t->text_length = strlen(text);
    t->lang = (png_charp)lang;
    t->lang_key = (png_charp)lang_key;
}

/* The metadata's chunks, to be written by png_write_info. What a PNG cannot
 * hold, or holds only otherwise, is named in io->dropped. */
static void set_meta(png_io *io)
{
    const mmp_imageio_meta *m = io->meta;
    png_structp png = io->png;
    const int ch = mmp_image_channels(io->src);
    png_unknown_chunk u[4];
    png_byte srgb[1], gama[4], chrm[32];
    int nu = 0, icc_written = 0;
    memset(u, 0, sizeof u);
    if (m->icc) {
        /* The profile's data colour space (bytes 16 to 19) must be the
         * image's: a reader drops any other. */
        if (m->icc_len < 132 || memcmp(m->icc + 16, ch >= 3 ? "RGB " : "GRAY", 4) != 0) {
            note_dropped(io, ch >= 3 ? "the ICC profile (not an RGB profile)"
                                     : "the ICC profile (not a grey profile)");
        } else {
            const char *name = valid_keyword(m->icc_name) ? m->icc_name : "ICC profile";
            const size_t k = strlen(name);
            uLongf zlen = compressBound((uLong)m->icc_len);
            io->iccp = malloc(k + 2 + zlen);
            if (!io->iccp)
                png_error(png, "out of memory for the iCCP chunk");
            memcpy(io->iccp, name, k + 1);
            io->iccp[k + 1] = 0; /* compression method: deflate */
            if (compress2(io->iccp + k + 2, &zlen, m->icc, (uLong)m->icc_len, 9) != Z_OK)
                png_error(png, "cannot compress the ICC profile");
            memcpy(u[nu].name, "iCCP", 5);
            u[nu].data = io->iccp;
            u[nu++].size = k + 2 + zlen;
            icc_written = 1;
        }
    }
    /* sRGB and iCCP: the profile says it all, and PNG wants one or the other. */
    if (m->has_srgb && !icc_written) {
        if (m->srgb_intent < 0 || m->srgb_intent > 3) {
            note_dropped(io, "sRGB (an undefined rendering intent)");
        } else {
            srgb[0] = (png_byte)m->srgb_intent;
            memcpy(u[nu].name, "sRGB", 5);
            u[nu].data = srgb;
            u[nu++].size = 1;
        }
    }
    if (m->has_gama) {
        if (m->gama == 0 || m->gama > 0x7fffffffu) {
            note_dropped(io, "gAMA (an invalid gamma)");
        } else {
            put32(gama, m->gama);
            memcpy(u[nu].name, "gAMA", 5);
            u[nu].data = gama;
            u[nu++].size = 4;
        }
    }
    if (m->has_chrm) {
        int ok = 1;
        for (int i = 0; i < 8; i++) {
            ok &= m->chrm[i] <= 0x7fffffffu;
            put32(chrm + 4 * i, m->chrm[i]);
        }
        if (!ok) {
            note_dropped(io, "cHRM (invalid chromaticities)");
        } else {
            memcpy(u[nu].name, "cHRM", 5);
            u[nu].data = chrm;
            u[nu++].size = 32;
        }
    }
    if (nu) {
        for (int i = 0; i < nu; i++)
            u[i].location = PNG_HAVE_IHDR;
        png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_ALWAYS, colour_chunks, 4);
        png_set_unknown_chunks(png, io->info, u, nu);
    }
    if (m->exif) {
        if (m->exif_len < 8 || m->exif_len > 0x7fffffffu ||
            (memcmp(m->exif, "II*\0", 4) != 0 && memcmp(m->exif, "MM\0*", 4) != 0))
            note_dropped(io, "EXIF (no TIFF header)");
        else
            png_set_eXIf_1(png, io->info, (png_uint_32)m->exif_len, (png_bytep)m->exif);
    }
    io->texts = calloc(m->ntexts + 1, sizeof *io->texts);
    if (!io->texts)
        png_error(png, "out of memory for the text chunks");
    int nt = 0;
    if (m->xmp) {
        if (strlen((const char *)m->xmp) != m->xmp_len)
            note_dropped(io, "XMP (a NUL byte in it)");
        else
            add_text(io, &nt, PNG_ITXT_COMPRESSION_NONE, xmp_key, (const char *)m->xmp, "", "");
    }
    int bad_key = 0, bad_text = 0;
    for (size_t i = 0; i < m->ntexts; i++) {
        const mmp_imageio_text *t = &m->texts[i];
        static const int compression[4] = {PNG_TEXT_COMPRESSION_NONE, PNG_TEXT_COMPRESSION_zTXt,
                                           PNG_ITXT_COMPRESSION_NONE, PNG_ITXT_COMPRESSION_zTXt};
        if (!valid_keyword(t->key))
            bad_key++;
        else if (!t->text || strlen(t->text) != t->text_len || (unsigned)t->kind > 3)
            bad_text++;
        else
            add_text(io, &nt, compression[t->kind], t->key, t->text, t->lang ? t->lang : "",
                     t->lang_key ? t->lang_key : "");
    }
    if (bad_key)
        note_dropped(io, "text with a keyword PNG does not allow");
    if (bad_text)
        note_dropped(io, "text with a NUL byte in it");
    if (nt)
        png_set_text(png, io->info, io->texts, nt);
}

static int write_guarded(png_io *io)
{
    if (setjmp(png_jmpbuf(io->png)))
        return -1;
    png_structp png = io->png;
    const mmp_image *img = io->src;
    const int ch = mmp_image_channels(img), depth = io->depth, k = bits_of(img->maxval);
    static const int types[4] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_init_io(png, io->f);
    png_set_IHDR(png, io->info, (png_uint_32)img->width, (png_uint_32)img->height, depth,
                 types[ch - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (k != depth) {
        png_color_8 sig;
        memset(&sig, 0, sizeof sig);
        sig.gray = sig.red = sig.green = sig.blue = (png_byte)k;
        if (ch == 2 || ch == 4)
            sig.alpha = (png_byte)k;
        png_set_sBIT(png, io->info, &sig);
    }
    if (io->meta)
        set_meta(io);
    png_write_info(png, io->info);
    if (depth < 8)
        png_set_packing(png);
    const size_t n = (size_t)img->width * (size_t)ch;
    for (int y = 0; y < img->height; y++) {
        const uint16_t *src = img->pix + (size_t)y * n;
        png_bytep b = io->row;
        for (size_t i = 0; i < n; i++) {
            const unsigned v = k == depth || depth < 8 ? src[i] : replicate(src[i], k, depth);
            if (depth == 16) {
                b[2 * i] = (png_byte)(v >> 8);
                b[2 * i + 1] = (png_byte)(v & 0xff);
            } else {
                b[i] = (png_byte)v;
            }
        }
        png_write_row(png, io->row);
    }
    png_write_end(png, NULL);
    return 0;
}

int mmp_png_write(FILE *f, const mmp_image *img)
{
    return mmp_png_write_meta(f, img, NULL, NULL, 0);
}

int mmp_png_write_meta(FILE *f, const mmp_image *img, const mmp_imageio_meta *meta, char *warn,
                       size_t warnlen)
{
    if (warn && warnlen)
        warn[0] = '\0';
    if (!f || !img || !img->pix || img->width <= 0 || img->height <= 0 ||
        img->width > MMP_MAX_DIM || img->height > MMP_MAX_DIM ||
        (long long)img->width * img->height > MMP_MAX_PIXELS || img->maxval < 1 ||
        img->maxval > 65535 || img->channels < 0 || img->channels > 4)
        return MMP_EINVAL;
    if (!mmp_png_can_hold(img->maxval))
        return MMP_EUNSUPPORTED;
    const int ch = mmp_image_channels(img), k = bits_of(img->maxval);
    const size_t n = (size_t)img->width * (size_t)img->height * (size_t)ch;
    for (size_t i = 0; i < n; i++)
        if (img->pix[i] > img->maxval)
            return MMP_EINVAL;
    png_io io;
    memset(&io, 0, sizeof io);
    io.f = f;
    io.src = img;
    io.meta = mmp_imageio_meta_is_empty(meta) ? NULL : meta;
    /* Grey may use 1, 2 or 4 bits; every type 8 or 16. */
    io.depth = k > 8 ? 16 : (ch == 1 && (k == 1 || k == 2 || k == 4)) ? k : 8;
    io.row = malloc((size_t)img->width * (size_t)ch * 2);
    if (!io.row)
        return MMP_ENOMEM;
    io.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
    if (io.png)
        io.info = png_create_info_struct(io.png);
    int rc = MMP_ENOMEM;
    if (io.png && io.info)
        rc = write_guarded(&io) == 0 ? MMP_OK : MMP_EIO;
    png_destroy_write_struct(io.png ? &io.png : NULL, io.info ? &io.info : NULL);
    free(io.row);
    free(io.iccp);
    free(io.texts);
    if (rc != MMP_OK)
        return rc;
    if (io.dropped[0])
        mmp_error(warn, warnlen, MMP_OK, "left out of the PNG file: %s", io.dropped);
    /* stdio buffers: a full disk often shows only at flush time. */
    if (fflush(f) != 0 || ferror(f))
        return MMP_EIO;
    return MMP_OK;
}
