/*
 * TIFF files of the front ends, read through libtiff.
 *
 * libtiff reads from the file in memory through client procedures
 * (TIFFClientOpenExt; the memory is also "mapped", so libtiff reads strips
 * where they lie), and reports problems through handlers that are given
 * with the open options: ours keep the first error and the last warning,
 * one line each, and print nothing. libtiff returns errors (it never
 * jumps), so there is no setjmp here.
 *
 * The samples come from TIFFReadEncodedStrip and TIFFReadEncodedTile,
 * decoded by libtiff's codecs and in host byte order, and are placed into
 * the image here: packed samples of 1 to 4 bits unpacked, min-is-white
 * inverted, palette indices looked up, planes interleaved.
 */
#include "mmp/imageio/tiff.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tiffio.h>

#include "common/error.h"

/* The most read from a stream: a TIFF of the largest image, 16-bit RGBA
 * uncompressed, is 2 GiB. */
#define MAX_TIFF_BYTES ((uint64_t)1 << 32)
/* A tile of at most this many pixels is always accepted; a larger one only
 * when it does not reach past the image by more than the 16 pixels a tile
 * side is a multiple of, so that a tiny file cannot ask for a huge buffer. */
#define TILE_PIXELS_ANY ((uint64_t)1 << 20)

typedef struct tiff_src {
    const unsigned char *data;
    size_t len;
    uint64_t pos;
} tiff_src;

typedef struct tiff_msgs {
    char err[200];  /* libtiff's first error, one line */
    char warn[200]; /* its last warning: the reason when a read fails without an error */
} tiff_msgs;

/* ------------------------------------------------------- libtiff's hooks */

static tmsize_t src_read(thandle_t h, void *buf, tmsize_t n)
{
    tiff_src *s = (tiff_src *)h;
    if (n <= 0 || s->pos >= s->len)
        return 0;
    size_t k = s->len - (size_t)s->pos;
    if ((uint64_t)n < k)
        k = (size_t)n;
    memcpy(buf, s->data + s->pos, k);
    s->pos += k;
    return (tmsize_t)k;
}

static tmsize_t src_write(thandle_t h, void *buf, tmsize_t n)
{
    (void)h, (void)buf, (void)n;
    return -1;
}

static toff_t src_seek(thandle_t h, toff_t off, int whence)
{
    tiff_src *s = (tiff_src *)h;
    if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
        return (toff_t)-1;
    const uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->pos : s->len;
    /* toff_t is unsigned: a negative offset comes as its two's complement,
     * which the addition wraps back (below 0 is an error). */
    const uint64_t to = base + (uint64_t)off;
    if (whence != SEEK_SET && off > INT64_MAX && to > base)
        return (toff_t)-1;
    s->pos = to;
    return (toff_t)to;
}

static int src_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t src_size(thandle_t h)
{
    return (toff_t)((tiff_src *)h)->len;
}

static int src_map(thandle_t h, void **base, toff_t *size)
{
    tiff_src *s = (tiff_src *)h;
    *base = (void *)s->data;
    *size = (toff_t)s->len;
    return 1;
}

static void src_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h, (void)base, (void)size;
}

static void one_line(char *dst, size_t size, const char *module, const char *fmt, va_list ap)
{
    size_t n = 0;
    dst[0] = '\0';
    if (module && module[0] && size > 3) {
        /* The module's name, cut to leave room for ": " and the message. */
        n = strnlen(module, size / 2);
        memcpy(dst, module, n);
        memcpy(dst + n, ": ", 3);
        n += 2;
    }
    vsnprintf(dst + n, size - n, fmt, ap);
    for (char *p = dst; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* The first error says what went wrong; later ones say what failed with it. */
static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    tiff_msgs *m = user;
    if (!m->err[0])
        one_line(m->err, sizeof m->err, module, fmt, ap);
    return 1; /* handled: not passed on to the process-wide handler */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    tiff_msgs *m = user;
    one_line(m->warn, sizeof m->warn, module, fmt, ap);
    return 1;
}

/* libtiff's process-wide handlers print to stderr; every message of a read
 * goes to the handle's handlers above, and these stay quiet for any other. */
static void quiet_libtiff(void)
{
    static int done;
    if (!done) {
        TIFFSetErrorHandler(NULL);
        TIFFSetWarningHandler(NULL);
        done = 1;
    }
}

/* ------------------------------------------------------------- decoding */

/* How the file's samples become the image's. */
typedef struct layout {
    uint32_t w, h;
    int bps;          /* bits per sample: 1, 2, 4, 8, 16 */
    int spp;          /* samples per pixel in the file */
    int colour_in;    /* colour samples per pixel in the file: 1 (grey, palette) or 3 */
    int alpha;        /* 0 none, 1 straight, 2 associated (premultiplied) */
    int ch;           /* the image's channels */
    int invert;       /* min-is-white */
    int separate;     /* planar configuration separate: one plane per sample */
    uint16_t *pal[3]; /* palette: the final value of each index, per colour */
} layout;

static unsigned sample_at(const unsigned char *row, size_t i, int bps)
{
    switch (bps) {
    case 8: return row[i];
    case 16: {
        uint16_t v;
        memcpy(&v, row + 2 * i, 2);
        return v;
    }
    default: {
        const size_t bit = i * (size_t)bps;
        return (unsigned)(row[bit >> 3] >> (8 - bps - (int)(bit & 7))) & ((1u << bps) - 1u);
    }
    }
}

/* One row of n pixels of a strip or tile, of plane `plane` (separate) or of
 * every sample (contiguous), to the image at (x0, y). */
static void place_row(const layout *L, mmp_image *img, const unsigned char *row, uint32_t x0,
                      uint32_t y, uint32_t n, int plane)
{
    const int maxval = img->maxval;
    uint16_t *dst = img->pix + ((size_t)y * L->w + x0) * (size_t)L->ch;
    const int first = L->separate ? plane : 0;
    const int count = L->separate ? 1 : L->spp;
    const int used = L->colour_in + (L->alpha ? 1 : 0);
    for (uint32_t i = 0; i < n; i++, dst += L->ch) {
        for (int k = 0; k < count; k++) {
            const int s = first + k;
            if (s >= used)
                break;
            unsigned v = sample_at(row, (size_t)i * (size_t)count + (size_t)k, L->bps);
            if (s == L->colour_in) {
                dst[L->ch - 1] = (uint16_t)v;   /* alpha */
            } else if (L->pal[0]) {
                dst[0] = L->pal[0][v];
                dst[1] = L->pal[1][v];
                dst[2] = L->pal[2][v];
            } else {
                dst[s] = (uint16_t)(L->invert ? (unsigned)maxval - v : v);
            }
        }
    }
}

static int read_strips(TIFF *tif, const layout *L, mmp_image *img, tiff_msgs *msgs,
                       char *errbuf, size_t errlen)
{
    uint32_t rps = 0;
    if (!TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps) || rps == 0 || rps > L->h)
        rps = L->h;
    const int per = L->separate ? 1 : L->spp;
    const size_t rowbytes = (size_t)(((uint64_t)L->w * (uint64_t)per * (uint64_t)L->bps + 7) / 8);
    unsigned char *buf = malloc(rowbytes * rps);
    if (!buf)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot allocate a TIFF strip of %lu rows",
                         (unsigned long)rps);
    const int planes = L->separate ? L->colour_in + (L->alpha ? 1 : 0) : 1;
    int rc = MMP_OK;
    for (int p = 0; p < planes && rc == MMP_OK; p++) {
        for (uint32_t y0 = 0; y0 < L->h; y0 += rps) {
            const uint32_t rows = L->h - y0 < rps ? L->h - y0 : rps;
            const uint32_t strip = TIFFComputeStrip(tif, y0, (uint16_t)p);
            const tmsize_t want = (tmsize_t)(rowbytes * rows);
            const tmsize_t got = TIFFReadEncodedStrip(tif, strip, buf, want);
            if (got != want) {
                rc = mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid TIFF file: strip %lu: %s",
                               (unsigned long)strip,
                               msgs->err[0]    ? msgs->err
                               : msgs->warn[0] ? msgs->warn
                                               : "fewer bytes than its rows need");
                break;
            }
            for (uint32_t r = 0; r < rows; r++)
                place_row(L, img, buf + (size_t)r * rowbytes, 0, y0 + r, L->w, p);
        }
    }
    free(buf);
    return rc;
}

static int read_tiles(TIFF *tif, const layout *L, mmp_image *img, tiff_msgs *msgs, char *errbuf,
                      size_t errlen)
{
    uint32_t tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    if (tw == 0 || th == 0)
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid TIFF file: tiles of %lux%lu",
                         (unsigned long)tw, (unsigned long)th);
    if ((uint64_t)tw * th > TILE_PIXELS_ANY && (tw > L->w + 15 || th > L->h + 15))
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "TIFF tiles of %lux%lu are too large for an image of %lux%lu",
                         (unsigned long)tw, (unsigned long)th, (unsigned long)L->w,
                         (unsigned long)L->h);
    const int per = L->separate ? 1 : L->spp;
    const uint64_t rowbytes = ((uint64_t)tw * (uint64_t)per * (uint64_t)L->bps + 7) / 8;
    if (rowbytes * th > (uint64_t)SIZE_MAX / 2)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "TIFF tiles of %lux%lu are too large",
                         (unsigned long)tw, (unsigned long)th);
    unsigned char *buf = malloc((size_t)(rowbytes * th));
    if (!buf)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot allocate a TIFF tile of %lux%lu",
                         (unsigned long)tw, (unsigned long)th);
    const int planes = L->separate ? L->colour_in + (L->alpha ? 1 : 0) : 1;
    int rc = MMP_OK;
    for (int p = 0; p < planes && rc == MMP_OK; p++) {
        for (uint32_t y0 = 0; y0 < L->h && rc == MMP_OK; y0 += th) {
            for (uint32_t x0 = 0; x0 < L->w; x0 += tw) {
                const uint32_t tile = TIFFComputeTile(tif, x0, y0, 0, (uint16_t)p);
                const tmsize_t want = (tmsize_t)(rowbytes * th);
                if (TIFFReadEncodedTile(tif, tile, buf, want) != want) {
                    rc = mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid TIFF file: tile %lu: %s",
                                   (unsigned long)tile,
                                   msgs->err[0]    ? msgs->err
                                   : msgs->warn[0] ? msgs->warn
                                                   : "fewer bytes than it needs");
                    break;
                }
                const uint32_t rows = L->h - y0 < th ? L->h - y0 : th;
                const uint32_t cols = L->w - x0 < tw ? L->w - x0 : tw;
                for (uint32_t r = 0; r < rows; r++)
                    place_row(L, img, buf + (size_t)r * (size_t)rowbytes, x0, y0 + r, cols, p);
            }
        }
    }
    free(buf);
    return rc;
}

/* Associated alpha: the colours were multiplied by alpha / maxval. */
static void unpremultiply(mmp_image *img)
{
    const int ch = img->channels, m = img->maxval;
    const size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t i = 0; i < n; i++) {
        uint16_t *p = img->pix + i * (size_t)ch;
        const unsigned a = p[ch - 1];
        for (int c = 0; c < ch - 1; c++) {
            if (a == 0) {
                p[c] = 0;
            } else {
                const unsigned v = (unsigned)(((uint64_t)p[c] * (unsigned)m + a / 2) / a);
                p[c] = (uint16_t)(v > (unsigned)m ? (unsigned)m : v);
            }
        }
    }
}

static const char *photometric_name(unsigned p)
{
    switch (p) {
    case PHOTOMETRIC_MASK: return "transparency mask";
    case PHOTOMETRIC_SEPARATED: return "separated (CMYK)";
    case PHOTOMETRIC_YCBCR: return "YCbCr";
    case PHOTOMETRIC_CIELAB: return "CIE L*a*b*";
    case PHOTOMETRIC_ICCLAB: return "ICC L*a*b*";
    case PHOTOMETRIC_ITULAB: return "ITU L*a*b*";
    case PHOTOMETRIC_CFA: return "colour filter array";
    case PHOTOMETRIC_LOGL: return "LogL";
    case PHOTOMETRIC_LOGLUV: return "LogLuv";
    default: return "unknown";
    }
}

/* The palette's final values; maxval 255 or 65535 into *maxval. */
static int make_palette(TIFF *tif, layout *L, int *maxval, char *errbuf, size_t errlen)
{
    uint16_t *map[3] = {NULL, NULL, NULL};
    if (!TIFFGetField(tif, TIFFTAG_COLORMAP, &map[0], &map[1], &map[2]) || !map[0] || !map[1] ||
        !map[2])
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid TIFF file: a palette image "
                                                      "without a colour map");
    const size_t n = (size_t)1 << L->bps;
    int small = 1, replicated = 1;
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < n; i++) {
            small &= map[c][i] <= 255;
            replicated &= (map[c][i] >> 8) == (map[c][i] & 255);
        }
    L->pal[0] = malloc(3 * n * sizeof *L->pal[0]);
    if (!L->pal[0])
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot allocate a TIFF palette");
    L->pal[1] = L->pal[0] + n;
    L->pal[2] = L->pal[1] + n;
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < n; i++)
            L->pal[c][i] = small ? map[c][i] : replicated ? (uint16_t)(map[c][i] >> 8) : map[c][i];
    *maxval = small || replicated ? 255 : 65535;
    return MMP_OK;
}

/* No stored strip or tile may reach past the end of the file. */
static int check_extent(TIFF *tif, size_t len, char *errbuf, size_t errlen)
{
    const int tiled = TIFFIsTiled(tif);
    const uint32_t n = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t off = TIFFGetStrileOffset(tif, i), bc = TIFFGetStrileByteCount(tif, i);
        if (off > len || bc > len - off)
            return mmp_error(errbuf, errlen, MMP_EFORMAT,
                             "truncated TIFF file: %s %lu (bytes %llu to %llu) is beyond its "
                             "end (%zu bytes)", tiled ? "tile" : "strip", (unsigned long)i,
                             (unsigned long long)off, (unsigned long long)(off + bc), len);
    }
    return MMP_OK;
}

static int decode(TIFF *tif, size_t len, uint64_t max_pixels, tiff_msgs *msgs, mmp_image *img,
                  char *errbuf, size_t errlen)
{
    layout L;
    memset(&L, 0, sizeof L);
    uint16_t bps = 1, spp = 1, planar = PLANARCONFIG_CONTIG, sfmt = SAMPLEFORMAT_UINT;
    uint16_t compression = COMPRESSION_NONE, photometric = 0;
    uint32_t depth = 1;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &L.w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &L.h);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &sfmt);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_IMAGEDEPTH, &depth);
    if (L.w == 0 || L.h == 0)
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid TIFF file: image of %lux%lu",
                         (unsigned long)L.w, (unsigned long)L.h);
    if (L.w > MMP_MAX_DIM || L.h > MMP_MAX_DIM ||
        (unsigned long long)L.w * L.h > (unsigned long long)MMP_MAX_PIXELS)
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "image too large: %lux%lu (limits: %d per side, %lld pixels)",
                         (unsigned long)L.w, (unsigned long)L.h, MMP_MAX_DIM,
                         (long long)MMP_MAX_PIXELS);
    if (max_pixels && (uint64_t)L.w * L.h > max_pixels)
        return mmp_error(errbuf, errlen, MMP_ELIMIT,
                         "image of %lux%lu = %llu pixels exceeds the limit of %llu pixels",
                         (unsigned long)L.w, (unsigned long)L.h,
                         (unsigned long long)L.w * L.h, (unsigned long long)max_pixels);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric))
        return mmp_error(errbuf, errlen, MMP_EFORMAT,
                         "invalid TIFF file: no photometric interpretation");
    if (depth != 1)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "TIFF images of %lu slices are not supported", (unsigned long)depth);
    if (sfmt != SAMPLEFORMAT_UINT && sfmt != SAMPLEFORMAT_VOID)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "TIFF samples of %s are not supported (unsigned integers only)",
                         sfmt == SAMPLEFORMAT_INT ? "signed integers"
                         : sfmt == SAMPLEFORMAT_IEEEFP ? "floating point" : "this format");
    L.bps = bps;
    L.spp = spp;
    int maxval;
    const char *kind;
    switch (photometric) {
    case PHOTOMETRIC_MINISWHITE:
        L.invert = 1;
        /* fall through */
    case PHOTOMETRIC_MINISBLACK:
        kind = "grey";
        L.colour_in = 1;
        if (bps != 1 && bps != 2 && bps != 4 && bps != 8 && bps != 16)
            goto bad_depth;
        maxval = (1 << bps) - 1;
        break;
    case PHOTOMETRIC_RGB:
        kind = "RGB";
        L.colour_in = 3;
        if (bps != 8 && bps != 16)
            goto bad_depth;
        maxval = (1 << bps) - 1;
        break;
    case PHOTOMETRIC_PALETTE:
        kind = "palette";
        L.colour_in = 1;
        if (bps != 1 && bps != 2 && bps != 4 && bps != 8)
            goto bad_depth;
        if (spp != 1)
            return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                             "TIFF palette images of %d samples per pixel are not supported",
                             (int)spp);
        maxval = 255;
        break;
    case PHOTOMETRIC_YCBCR:
        if (compression != COMPRESSION_JPEG)
            return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                             "TIFF YCbCr images are supported only JPEG-compressed (this one: "
                             "compression %u)", (unsigned)compression);
        kind = "YCbCr";
        L.colour_in = 3;
        if (bps != 8)
            goto bad_depth;
        if (planar != PLANARCONFIG_CONTIG)
            return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                             "TIFF YCbCr images in separate planes are not supported");
        /* libjpeg gives RGB, upsampled. */
        if (!TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB))
            return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                             "TIFF YCbCr: libtiff cannot convert it to RGB");
        maxval = 255;
        break;
    case PHOTOMETRIC_SEPARATED:
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "CMYK TIFF is not supported (its colours need its CMYK profile and "
                         "colour management; convert it to RGB first)");
    default:
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "TIFF photometric interpretation %u (%s) is not supported (grey, RGB, "
                         "palette or JPEG-compressed YCbCr only)",
                         (unsigned)photometric, photometric_name(photometric));
    }
    if (spp < L.colour_in)
        return mmp_error(errbuf, errlen, MMP_EFORMAT,
                         "invalid TIFF file: %s with %d samples per pixel", kind, (int)spp);
    if (spp > L.colour_in) {
        uint16_t nextra = 0;
        uint16_t *extra = NULL;
        L.alpha = 1;
        if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &nextra, &extra) && nextra > 0 && extra &&
            extra[0] == EXTRASAMPLE_ASSOCALPHA)
            L.alpha = 2;
    }
    L.separate = planar == PLANARCONFIG_SEPARATE && spp > 1;
    if (photometric == PHOTOMETRIC_PALETTE) {
        int rc = make_palette(tif, &L, &maxval, errbuf, errlen);
        if (rc != MMP_OK)
            return rc;
    }
    L.ch = (L.pal[0] ? 3 : L.colour_in) + (L.alpha ? 1 : 0);
    int rc = check_extent(tif, len, errbuf, errlen);
    if (rc == MMP_OK) {
        rc = mmp_image_alloc_channels(img, (int)L.w, (int)L.h, L.ch, maxval);
        if (rc != MMP_OK)
            mmp_error(errbuf, errlen, rc, "cannot allocate %lux%lu image", (unsigned long)L.w,
                      (unsigned long)L.h);
    }
    if (rc == MMP_OK)
        rc = TIFFIsTiled(tif) ? read_tiles(tif, &L, img, msgs, errbuf, errlen)
                              : read_strips(tif, &L, img, msgs, errbuf, errlen);
    if (rc == MMP_OK && L.alpha == 2)
        unpremultiply(img);
    free(L.pal[0]);
    if (rc != MMP_OK)
        mmp_image_free(img);
    return rc;

bad_depth:
    return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                     "TIFF %s images of %d bits per sample are not supported (%s)", kind,
                     (int)bps,
                     photometric == PHOTOMETRIC_RGB ? "8 or 16"
                     : photometric == PHOTOMETRIC_PALETTE ? "1, 2, 4 or 8"
                     : photometric == PHOTOMETRIC_YCBCR ? "8" : "1, 2, 4, 8 or 16");
}

static int read_meta(TIFF *tif, mmp_imageio_meta *m)
{
    uint32_t n = 0;
    void *data = NULL;
    if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &n, &data) && n && data &&
        mmp_imageio_meta_set(&m->icc, &m->icc_len, data, n) != MMP_OK)
        return MMP_ENOMEM;
    n = 0;
    data = NULL;
    if (TIFFGetField(tif, TIFFTAG_XMLPACKET, &n, &data) && n && data &&
        mmp_imageio_meta_set(&m->xmp, &m->xmp_len, data, n) != MMP_OK)
        return MMP_ENOMEM;
    /* The EXIF and GPS IFDs are directories of this file, their values at
     * offsets anywhere in it (a MakerNote's own offsets among them): no
     * verbatim block exists, and one rebuilt from them could carry broken
     * offsets. They are left out, and named. */
    uint64_t ifd = 0;
    if (TIFFGetField(tif, TIFFTAG_EXIFIFD, &ifd) || TIFFGetField(tif, TIFFTAG_GPSIFD, &ifd))
        mmp_imageio_meta_lost(m, "EXIF (a TIFF file's EXIF IFDs are part of its structure, "
                                 "not a block to copy)");
    return MMP_OK;
}

/* -------------------------------------------------------------- entry */

/* The first directory (its offset in the header, its entry count, its
 * entries and the next directory's offset) reaches past the end of the
 * file: what libtiff reports as a directory it cannot read. */
static int first_ifd_cut(const unsigned char *d, size_t len)
{
    const int be = d[0] == 'M', big = d[2] == 43 || d[3] == 43;
    uint64_t v[2] = {0, 0}; /* the offset, then the count */
    const size_t at[2] = {big ? 8u : 4u, 0};
    const unsigned width[2] = {big ? 8u : 4u, big ? 8u : 2u};
    for (int k = 0; k < 2; k++) {
        const uint64_t pos = k == 0 ? at[0] : v[0];
        if (pos > len || len - pos < width[k])
            return 1;
        for (unsigned i = 0; i < width[k]; i++) {
            const unsigned byte = d[pos + (be ? i : width[k] - 1 - i)];
            v[k] = v[k] << 8 | byte;
        }
    }
    const uint64_t entry = big ? 20 : 12, tail = big ? 8 : 4;
    const uint64_t need = width[1] + v[1] * entry + tail; /* no overflow: count < 2^64 / 20 */
    return v[1] > (uint64_t)len || need > len - v[0];
}

/* head, then the rest of the stream, into one buffer. */
static int read_all(FILE *f, const unsigned char *head, size_t head_len, unsigned char **out,
                    size_t *out_len, char *errbuf, size_t errlen)
{
    size_t cap = 1 << 16, len = head_len;
    while (cap < head_len)
        cap *= 2;
    /* A regular file tells its size: one too large is refused before it is
     * read, and the buffer takes it at once (and one byte more, to see its
     * end). A pipe grows the buffer until it ends or passes the limit. */
    struct stat sb;
    const off_t at = ftello(f);
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && at >= 0) {
        const uint64_t rest = sb.st_size > at ? (uint64_t)(sb.st_size - at) : 0;
        if (rest + head_len > MAX_TIFF_BYTES)
            return mmp_error(errbuf, errlen, MMP_ELIMIT, "TIFF file larger than %llu bytes",
                             (unsigned long long)MAX_TIFF_BYTES);
        cap = (size_t)(rest + head_len) + 1;
    }
    unsigned char *b = malloc(cap);
    if (!b)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot allocate memory for the TIFF file");
    if (head_len)
        memcpy(b, head, head_len);
    for (;;) {
        if (len == cap) {
            /* Never more than the limit and one byte, which proves the
             * file too large. */
            if ((uint64_t)len > MAX_TIFF_BYTES || cap > SIZE_MAX / 2) {
                free(b);
                return mmp_error(errbuf, errlen, MMP_ELIMIT, "TIFF file larger than %llu bytes",
                                 (unsigned long long)MAX_TIFF_BYTES);
            }
            const size_t ncap =
                (uint64_t)cap * 2 > MAX_TIFF_BYTES + 1 ? (size_t)(MAX_TIFF_BYTES + 1) : cap * 2;
            unsigned char *nb = realloc(b, ncap);
            if (!nb) {
                free(b);
                return mmp_error(errbuf, errlen, MMP_ENOMEM,
                                 "cannot allocate memory for the TIFF file");
            }
            b = nb;
            cap = ncap;
        }
        const size_t got = fread(b + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(b);
        return mmp_error(errbuf, errlen, MMP_EIO, "read error in TIFF file");
    }
    *out = b;
    *out_len = len;
    return MMP_OK;
}

int mmp_tiff_read(FILE *f, const unsigned char *head, size_t head_len, uint64_t max_pixels,
                  mmp_image *img, mmp_imageio_meta *meta, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (!f || (head_len && !head))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input stream");
    unsigned char *data = NULL;
    size_t len = 0;
    int rc = read_all(f, head, head_len, &data, &len, errbuf, errlen);
    if (rc != MMP_OK)
        return rc;
    const int big = len >= 4 && (data[2] == 43 || data[3] == 43);
    if (len < (big ? 16u : 8u)) {
        free(data);
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated TIFF file (%zu bytes)", len);
    }
    quiet_libtiff();
    tiff_msgs msgs;
    memset(&msgs, 0, sizeof msgs);
    tiff_src src = {data, len, 0};
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        free(data);
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "cannot start libtiff");
    }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, &msgs);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, &msgs);
    TIFF *tif = TIFFClientOpenExt("TIFF", "r", (thandle_t)&src, src_read, src_write, src_seek,
                                  src_close, src_size, src_map, src_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif) {
        rc = first_ifd_cut(data, len)
                 ? mmp_error(errbuf, errlen, MMP_EFORMAT,
                             "truncated TIFF file: its directory is beyond its end (%zu bytes)",
                             len)
                 : mmp_error(errbuf, errlen, MMP_EFORMAT, "invalid TIFF file: %s",
                             msgs.err[0] ? msgs.err : "libtiff cannot open it");
        free(data);
        return rc;
    }
    mmp_imageio_meta m;
    memset(&m, 0, sizeof m);
    rc = decode(tif, len, max_pixels, &msgs, img, errbuf, errlen);
    if (rc == MMP_OK && meta && read_meta(tif, &m) != MMP_OK) {
        mmp_image_free(img);
        rc = mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory reading the TIFF metadata");
    }
    TIFFClose(tif);
    free(data);
    if (rc != MMP_OK) {
        mmp_imageio_meta_free(&m);
        return rc;
    }
    if (meta) {
        mmp_imageio_meta_free(meta);
        *meta = m;
    }
    return MMP_OK;
}
