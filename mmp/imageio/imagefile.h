/*
 * Image files of the front ends: the reader that tells the formats apart by
 * their first bytes (netpbm through mmp/imageio/pnm.h, PNG through
 * mmp/imageio/png.h, JPEG through mmp/imageio/jpeg.h, TIFF through
 * mmp/imageio/tiff.h) and keeps their metadata when asked
 * (mmp/imageio/meta.h: ICC profile, EXIF, XMP, PNG's colour chunks and
 * texts), the choice of the output format (netpbm or PNG) from a file name
 * and the kind of image, and the writer, which writes the metadata into
 * PNG (netpbm files hold none).
 */
#ifndef MMP_CLI_IMAGEFILE_H
#define MMP_CLI_IMAGEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmp/imageio/meta.h"
#include "mmp/mmp.h"

typedef enum mmp_file_format {
    MMP_FILE_PGM = 1, /* P5: grey */
    MMP_FILE_PPM,     /* P6: RGB */
    MMP_FILE_PAM,     /* P7: any, the only netpbm format with alpha */
    MMP_FILE_PNG
} mmp_file_format;

/*
 * Read an image from `f`: a netpbm file (first byte 'P': PBM, PGM, PPM, PAM;
 * mmp/imageio/pnm.h), a PNG (the PNG signature; mmp/imageio/png.h), a JPEG
 * (0xFF 0xD8; mmp/imageio/jpeg.h) or a TIFF ("II*\0" or "MM\0*", BigTIFF's
 * "II+\0" or "MM\0+"; mmp/imageio/tiff.h: its first page), told apart by
 * the first bytes, never by a name, and read as a stream (standard input
 * works; a TIFF is read into memory first). On error returns a negative
 * MMP_E* code and a one-line reason (no newline) in errbuf[errlen]; nothing
 * is allocated then. Not thread-safe (libnetpbm, libtiff's process-wide
 * handlers).
 */
int mmp_imagefile_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen);
/*
 * The same, and with meta not NULL the file's metadata into *meta (see
 * mmp/imageio/meta.h for what each format gives; netpbm files give none).
 * *meta must be zeroed, or hold metadata, which is freed first; free it
 * with mmp_imageio_meta_free. On error it is left empty.
 */
int mmp_imagefile_read_meta(FILE *f, mmp_image *img, mmp_imageio_meta *meta, char *errbuf,
                            size_t errlen);
/* The same from a path; "-" is standard input. */
int mmp_imagefile_read_path(const char *path, mmp_image *img, char *errbuf, size_t errlen);
int mmp_imagefile_read_path_meta(const char *path, mmp_image *img, mmp_imageio_meta *meta,
                                 char *errbuf, size_t errlen);
/*
 * The same with a pixel budget, the front ends' --max-pixels: an image of
 * more than max_pixels pixels (width x height; 0: no limit below
 * MMP_MAX_PIXELS) is refused with MMP_ELIMIT and the reason "image of WxH =
 * N pixels exceeds the limit of M pixels" when its header is read, before
 * anything is allocated for its samples (a TIFF, read into memory first,
 * is bounded by its 4 GiB limit until then). meta may be NULL.
 */
int mmp_imagefile_read_limited(FILE *f, uint64_t max_pixels, mmp_image *img,
                               mmp_imageio_meta *meta, char *errbuf, size_t errlen);
int mmp_imagefile_read_path_limited(const char *path, uint64_t max_pixels, mmp_image *img,
                                    mmp_imageio_meta *meta, char *errbuf, size_t errlen);

/*
 * The extension of a file name: the part of its last component from its
 * last '.' on (".png", ".MMP"), or NULL when it has none: no '.' there, or
 * only a leading one (".hidden"), and for "-" (standard input or output).
 */
const char *mmp_imagefile_path_extension(const char *path);
/*
 * 1 when `path` names a file mmp_imagefile_format can choose a format for:
 * its extension is one of mmp_imagefile_extensions() (any case), or it has
 * none (the netpbm format of the image's kind); 0 for another extension
 * (".jpg": there is no JPEG writer), which the front ends refuse as a usage
 * error before anything is read.
 */
int mmp_imagefile_writes_name(const char *path);
/* The extensions written, for messages: ".png, .pgm, .ppm, .pnm, .pam". */
const char *mmp_imagefile_extensions(void);

/*
 * The format in which to write img to `path`: PNG for a name ending in
 * ".png" (any case; maxval must be 2^k - 1), PGM for ".pgm" (grey only),
 * PPM for ".ppm" (RGB only), PGM or PPM for ".pnm" (grey or RGB), PAM for
 * ".pam"; a name without extension, and "-", the netpbm format of the
 * image's kind (mmp_imagefile_kind_format). Returns 0, or MMP_EUNSUPPORTED
 * with a one-line reason in errbuf when the name has another extension or
 * asks for a format that cannot hold the image.
 */
int mmp_imagefile_format(const char *path, const mmp_image *img, mmp_file_format *fmt,
                         char *errbuf, size_t errlen);
/* PGM for grey, PPM for RGB, PAM for an image with alpha. */
mmp_file_format mmp_imagefile_kind_format(const mmp_image *img);
/* ".pgm", ".ppm", ".pam" or ".png". */
const char *mmp_imagefile_extension(mmp_file_format fmt);

/* 1 when files of `fmt` hold metadata (PNG: all of mmp_imageio_meta), 0
 * when they hold none (PGM, PPM, PAM), so that a caller can say what an
 * output leaves out. */
int mmp_imagefile_holds_meta(mmp_file_format fmt);

/* Write img to `f` in `fmt` (as chosen by mmp_imagefile_format). Returns 0
 * or a negative MMP_E* code. */
int mmp_imagefile_write(FILE *f, const mmp_image *img, mmp_file_format fmt);
/*
 * The same with the metadata of `meta` (NULL or empty: none): into a PNG
 * (mmp_png_write_meta); a netpbm file holds none. What is left out is
 * named in warn[warnlen] as one line ("" when nothing is, e.g. "left out of
 * the PAM file (it holds no metadata): ICC profile, EXIF"); the image is
 * written all the same.
 */
int mmp_imagefile_write_meta(FILE *f, const mmp_image *img, mmp_file_format fmt,
                             const mmp_imageio_meta *meta, char *warn, size_t warnlen);

/* An image and the format chosen for its file, and the writer that
 * mmp_cli_output (mmp/cli/cli.h) calls with it as opaque and a FILE *.
 * meta (NULL: none) is written as mmp_imagefile_write_meta does, which
 * leaves its warning in meta_warn. */
typedef struct mmp_image_out {
    const mmp_image *img;
    mmp_file_format fmt;
    const mmp_imageio_meta *meta;
    char meta_warn[200];
} mmp_image_out;
int mmp_imagefile_write_out(void *image_out, void *file);

#endif
