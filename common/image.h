/*
 * Grey images in memory and their PGM files (through libnetpbm).
 */
#ifndef MMP_COMMON_IMAGE_H
#define MMP_COMMON_IMAGE_H

#include <stdint.h>
#include <stdio.h>

/* A grey image: width x height samples in [0, maxval], row-major, no padding. */
typedef struct mmp_image {
    int width;
    int height;
    int maxval;      /* 1..65535 */
    uint16_t *pix;   /* width * height samples, owned by the image */
} mmp_image;

/* Largest width or height accepted anywhere (files, headers, API). */
#define MMP_MAX_DIM 65536
/* Largest number of pixels accepted (2^28: 256 Mpixel). */
#define MMP_MAX_PIXELS (1LL << 28)

/* Allocate a zeroed image. Returns 0 or a negative MMP_E* code. */
int mmp_image_alloc(mmp_image *img, int width, int height, int maxval);
/* Free the samples; safe on a zeroed struct. */
void mmp_image_free(mmp_image *img);

/*
 * Read a PGM (P2 or P5, maxval 1..65535) from `f`. On error returns a
 * negative MMP_E* code and writes a one-line reason (no newline) to
 * errbuf[errlen]; nothing is allocated then.
 */
int mmp_pgm_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen);
/* Read from a path; "-" is stdin. */
int mmp_pgm_read_path(const char *path, mmp_image *img, char *errbuf, size_t errlen);
/* Write binary PGM (P5) to `f`. Returns 0 or negative MMP_E* code. */
int mmp_pgm_write(FILE *f, const mmp_image *img);

#endif
