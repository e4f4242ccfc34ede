/*
 * Image files of the front ends: the input's format told by its first bytes
 * (netpbm, PNG, JPEG, TIFF), with its metadata when asked; the output's
 * format from a name (netpbm or PNG), and the metadata written where the
 * format holds it (PNG).
 */
#include "mmp/imageio/imagefile.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "mmp/imageio/jpeg.h"
#include "mmp/imageio/png.h"
#include "mmp/imageio/pnm.h"
#include "mmp/imageio/tiff.h"

static const char *const kind_names[4] = {"grey", "grey+alpha", "RGB", "RGBA"};

#define EXPECTED "PNG, PAM, PPM, PGM, PBM, JPEG or TIFF expected"

static const unsigned char tiff_magic[4][4] = {
    {'I', 'I', 42, 0}, {'M', 'M', 0, 42}, /* TIFF */
    {'I', 'I', 43, 0}, {'M', 'M', 0, 43}, /* BigTIFF */
};

int mmp_imagefile_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen)
{
    return mmp_imagefile_read_meta(f, img, NULL, errbuf, errlen);
}

static int read_stream(FILE *f, uint64_t max_pixels, mmp_image *img, mmp_imageio_meta *meta,
                       char *errbuf, size_t errlen)
{
    /* One byte decides, and is pushed back for libnetpbm (the only pushback
     * stdio guarantees); a PNG's signature is checked here and libpng told
     * that it has been read; the bytes that told JPEG and TIFF are handed
     * to their readers. No seeking: a pipe works. */
    int c0 = getc(f);
    if (c0 == EOF) {
        if (ferror(f)) {
            return mmp_error(errbuf, errlen, MMP_EIO, "read error: %s", strerror(errno));
        }
        return mmp_error(errbuf, errlen, MMP_EFORMAT, "empty file");
    }
    if (c0 == 'P') {
        if (ungetc(c0, f) == EOF) {
            return mmp_error(errbuf, errlen, MMP_EIO, "read error: cannot push back a byte");
        }
        return mmp_pnm_read_limited(f, max_pixels, img, errbuf, errlen);
    }
    unsigned char sig[8];
    sig[0] = (unsigned char)c0;
    size_t got = 1;
    if (c0 == mmp_png_signature[0]) {
        got += fread(sig + 1, 1, sizeof sig - 1, f);
        if (got == sizeof sig && memcmp(sig, mmp_png_signature, sizeof sig) == 0)
            return mmp_png_read_meta(f, (int)sizeof sig, max_pixels, img, meta, errbuf, errlen);
        if (ferror(f)) {
            return mmp_error(errbuf, errlen, MMP_EIO, "read error: %s", strerror(errno));
        }
        if (got < sizeof sig && memcmp(sig, mmp_png_signature, got) == 0) {
            return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated PNG file");
        }
        return mmp_error(errbuf, errlen, MMP_EFORMAT,
                         "not an image file (a damaged PNG signature)");
    }
    int c1 = getc(f);
    if (c1 != EOF)
        sig[got++] = (unsigned char)c1;
    if (c0 == 0xFF && c1 == 0xD8)
        return mmp_jpeg_read(f, sig, got, max_pixels, img, meta, errbuf, errlen);
    if ((c0 == 'I' || c0 == 'M') && c1 == c0) {
        got += fread(sig + got, 1, 2, f);
        for (int i = 0; i < 4; i++)
            if (got == 4 && memcmp(sig, tiff_magic[i], 4) == 0)
                return mmp_tiff_read(f, sig, got, max_pixels, img, meta, errbuf, errlen);
        if (ferror(f)) {
            return mmp_error(errbuf, errlen, MMP_EIO, "read error: %s", strerror(errno));
        }
        for (int i = 0; i < 4; i++)
            if (got < 4 && memcmp(sig, tiff_magic[i], got) == 0) {
                return mmp_error(errbuf, errlen, MMP_EFORMAT, "truncated TIFF file");
            }
    }
    if (ferror(f)) {
        return mmp_error(errbuf, errlen, MMP_EIO, "read error: %s", strerror(errno));
    }
    if (got == 1)
        return mmp_error(errbuf, errlen, MMP_EFORMAT,
                         "not an image file (magic 0x%02X; " EXPECTED ")", c0);
    return mmp_error(errbuf, errlen, MMP_EFORMAT,
                     "not an image file (magic 0x%02X%02X; " EXPECTED ")", sig[0], sig[1]);
}

int mmp_imagefile_read_meta(FILE *f, mmp_image *img, mmp_imageio_meta *meta, char *errbuf,
                            size_t errlen)
{
    return mmp_imagefile_read_limited(f, 0, img, meta, errbuf, errlen);
}

int mmp_imagefile_read_limited(FILE *f, uint64_t max_pixels, mmp_image *img,
                               mmp_imageio_meta *meta, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    mmp_imageio_meta_free(meta);
    if (!img)
        return MMP_EINVAL;
    memset(img, 0, sizeof *img);
    if (!f) {
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input stream");
    }
    return read_stream(f, max_pixels, img, meta, errbuf, errlen);
}

int mmp_imagefile_read_path(const char *path, mmp_image *img, char *errbuf, size_t errlen)
{
    return mmp_imagefile_read_path_meta(path, img, NULL, errbuf, errlen);
}

int mmp_imagefile_read_path_meta(const char *path, mmp_image *img, mmp_imageio_meta *meta,
                                 char *errbuf, size_t errlen)
{
    return mmp_imagefile_read_path_limited(path, 0, img, meta, errbuf, errlen);
}

int mmp_imagefile_read_path_limited(const char *path, uint64_t max_pixels, mmp_image *img,
                                    mmp_imageio_meta *meta, char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    mmp_imageio_meta_free(meta);
    if (img)
        memset(img, 0, sizeof *img);
    if (!path || !img) {
        return mmp_error(errbuf, errlen, MMP_EINVAL, "no input path");
    }
    if (strcmp(path, "-") == 0)
        return mmp_imagefile_read_limited(stdin, max_pixels, img, meta, errbuf, errlen);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return mmp_error(errbuf, errlen, MMP_EIO, "cannot open %s: %s", path, strerror(errno));
    }
    int rc = mmp_imagefile_read_limited(f, max_pixels, img, meta, errbuf, errlen);
    fclose(f);   /* read-only: a close error cannot lose data */
    return rc;
}

mmp_file_format mmp_imagefile_kind_format(const mmp_image *img)
{
    switch (mmp_image_channels(img)) {
    case 1: return MMP_FILE_PGM;
    case 3: return MMP_FILE_PPM;
    default: return MMP_FILE_PAM;
    }
}

const char *mmp_imagefile_extension(mmp_file_format fmt)
{
    switch (fmt) {
    case MMP_FILE_PGM: return ".pgm";
    case MMP_FILE_PPM: return ".ppm";
    case MMP_FILE_PAM: return ".pam";
    default: return ".png";
    }
}

/* The extensions written and their formats; 0 for .pnm: PGM or PPM by
 * the image's kind. */
static const struct {
    const char *ext;
    mmp_file_format fmt;
} writers[] = {{".png", MMP_FILE_PNG},
               {".pgm", MMP_FILE_PGM},
               {".ppm", MMP_FILE_PPM},
               {".pnm", 0},
               {".pam", MMP_FILE_PAM}};
#define WRITERS ((int)(sizeof writers / sizeof writers[0]))

const char *mmp_imagefile_path_extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    return strcmp(path, "-") == 0 || !dot || dot == base ? NULL : dot;
}

/* The writer of path's extension: its index, WRITERS for none, -1 for an
 * extension without a writer. */
static int writer_of(const char *path)
{
    const char *ext = path ? mmp_imagefile_path_extension(path) : NULL;
    if (!ext)
        return WRITERS;
    for (int i = 0; i < WRITERS; i++)
        if (strcasecmp(ext, writers[i].ext) == 0)
            return i;
    return -1;
}

int mmp_imagefile_writes_name(const char *path)
{
    return writer_of(path) >= 0;
}

const char *mmp_imagefile_extensions(void)
{
    return ".png, .pgm, .ppm, .pnm, .pam";
}

int mmp_imagefile_format(const char *path, const mmp_image *img, mmp_file_format *fmt,
                         char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    const int ch = mmp_image_channels(img);
    const char *kind = ch >= 1 && ch <= 4 ? kind_names[ch - 1] : "invalid";
    mmp_file_format want = mmp_imagefile_kind_format(img);
    const int w = writer_of(path);
    if (w < 0)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED, "no writer for %s files (it writes %s)",
                         mmp_imagefile_path_extension(path), mmp_imagefile_extensions());
    if (w < WRITERS && writers[w].fmt)
        want = writers[w].fmt;
    if (w < WRITERS && !writers[w].fmt && want == MMP_FILE_PAM)
        return mmp_error(errbuf, errlen, MMP_EUNSUPPORTED,
                         "a PNM file holds grey or RGB images only and the image is %s (name "
                         "it .pam or .png)",
                         kind);
    if ((want == MMP_FILE_PGM && ch != 1) || (want == MMP_FILE_PPM && ch != 3)) {
        return mmp_error(
            errbuf, errlen, MMP_EUNSUPPORTED,
            "a %s file holds %s images only and the image is %s (name it %s, .pam or .png)",
            want == MMP_FILE_PGM ? "PGM" : "PPM", want == MMP_FILE_PGM ? "grey" : "RGB", kind,
            mmp_imagefile_extension(mmp_imagefile_kind_format(img)));
    }
    if (want == MMP_FILE_PNG && !mmp_png_can_hold(img->maxval)) {
        return mmp_error(
            errbuf, errlen, MMP_EUNSUPPORTED,
            "PNG cannot hold maxval %d exactly (only 2^k-1: 1, 3, 7, ..., 255, ..., 65535); "
            "name it %s or .pam",
            img->maxval, mmp_imagefile_extension(mmp_imagefile_kind_format(img)));
    }
    *fmt = want;
    return MMP_OK;
}

int mmp_imagefile_holds_meta(mmp_file_format fmt)
{
    return fmt == MMP_FILE_PNG;
}

int mmp_imagefile_write(FILE *f, const mmp_image *img, mmp_file_format fmt)
{
    return mmp_imagefile_write_meta(f, img, fmt, NULL, NULL, 0);
}

int mmp_imagefile_write_meta(FILE *f, const mmp_image *img, mmp_file_format fmt,
                             const mmp_imageio_meta *meta, char *warn, size_t warnlen)
{
    if (warn && warnlen)
        warn[0] = '\0';
    if (fmt == MMP_FILE_PNG)
        return mmp_png_write_meta(f, img, meta, warn, warnlen);
    if ((fmt == MMP_FILE_PGM && mmp_image_channels(img) != 1) ||
        (fmt == MMP_FILE_PPM && mmp_image_channels(img) != 3))
        return MMP_EINVAL;
    const int rc = mmp_pnm_write(f, img, fmt == MMP_FILE_PAM);
    if (rc == MMP_OK && !mmp_imageio_meta_is_empty(meta)) {
        char parts[160];
        mmp_imageio_meta_describe(meta, parts, sizeof parts);
        mmp_error(warn, warnlen, MMP_OK, "left out of the %s file (it holds no metadata): %s",
                  fmt == MMP_FILE_PGM   ? "PGM"
                  : fmt == MMP_FILE_PPM ? "PPM"
                                        : "PAM",
                  parts);
    }
    return rc;
}

int mmp_imagefile_write_out(void *image_out, void *file)
{
    mmp_image_out *io = image_out;
    return mmp_imagefile_write_meta(file, io->img, io->fmt, io->meta, io->meta_warn,
                                    sizeof io->meta_warn);
}
