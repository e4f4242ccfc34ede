/*
 * Image files of the front ends: the reader that tells the formats apart by
 * their first bytes (netpbm through mmp/imageio/pnm.h, PNG through
 * mmp/imageio/png.h), and the choice of the output format from a file name and
 * the kind of image.
 */
#ifndef MMP_CLI_IMAGEFILE_H
#define MMP_CLI_IMAGEFILE_H

#include <stddef.h>
#include <stdio.h>

#include "mmp/mmp.h"

typedef enum mmp_file_format {
    MMP_FILE_PGM = 1, /* P5: grey */
    MMP_FILE_PPM,     /* P6: RGB */
    MMP_FILE_PAM,     /* P7: any, the only netpbm format with alpha */
    MMP_FILE_PNG
} mmp_file_format;

/*
 * Read an image from `f`: a netpbm file (first byte 'P': PBM, PGM, PPM, PAM;
 * mmp/imageio/pnm.h) or a PNG (the PNG signature; mmp/imageio/png.h), told apart by
 * the first bytes, never by a name, and read as a stream (standard input
 * works). On error returns a negative MMP_E* code and a one-line reason (no
 * newline) in errbuf[errlen]; nothing is allocated then. Not thread-safe
 * (libnetpbm).
 */
int mmp_imagefile_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen);
/* The same from a path; "-" is standard input. */
int mmp_imagefile_read_path(const char *path, mmp_image *img, char *errbuf, size_t errlen);

/*
 * The format in which to write img to `path`: PNG for a name ending in
 * ".png" (any case; maxval must be 2^k - 1), PGM for ".pgm" (grey only),
 * PPM for ".ppm" (RGB only), PAM for ".pam"; any other name, and "-", the
 * netpbm format of the image's kind (mmp_imagefile_kind_format). Returns 0,
 * or MMP_EUNSUPPORTED with a one-line reason in errbuf when the name asks
 * for a format that cannot hold the image.
 */
int mmp_imagefile_format(const char *path, const mmp_image *img, mmp_file_format *fmt,
                         char *errbuf, size_t errlen);
/* PGM for grey, PPM for RGB, PAM for an image with alpha. */
mmp_file_format mmp_imagefile_kind_format(const mmp_image *img);
/* ".pgm", ".ppm", ".pam" or ".png". */
const char *mmp_imagefile_extension(mmp_file_format fmt);

/* Write img to `f` in `fmt` (as chosen by mmp_imagefile_format). Returns 0
 * or a negative MMP_E* code. */
int mmp_imagefile_write(FILE *f, const mmp_image *img, mmp_file_format fmt);

/* An image and the format chosen for its file, and the writer that
 * mmp_cli_output (mmp/cli/cli.h) calls with it as opaque and a FILE *. */
typedef struct mmp_image_out {
    const mmp_image *img;
    mmp_file_format fmt;
} mmp_image_out;
int mmp_imagefile_write_out(void *image_out, void *file);

#endif
