/*
 * Netpbm files of the front ends (PBM, PGM, PPM and PAM, 8 and 16 bits),
 * read and written through libnetpbm. The library itself links no image
 * file format; mmp/imageio/imagefile.h chooses between these and PNG.
 */
#ifndef MMP_CLI_PNM_H
#define MMP_CLI_PNM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmp/mmp.h"

/*
 * Read the first image of a netpbm file from `f` into *img (free with
 * mmp_image_free): PBM and PAM BLACKANDWHITE as grey with maxval 1 (0
 * black), PGM and PAM GRAYSCALE as grey, PPM and PAM RGB as RGB, PAM
 * GRAYSCALE_ALPHA, BLACKANDWHITE_ALPHA and RGB_ALPHA with alpha. On error
 * returns a negative MMP_E* code and writes a one-line reason (no newline)
 * to errbuf[errlen]; nothing is allocated then. Not thread-safe:
 * libnetpbm's error handlers are process-global.
 */
int mmp_pnm_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen);
/* The same, refusing an image of more than max_pixels pixels (width x
 * height; 0: no limit below MMP_MAX_PIXELS) with MMP_ELIMIT on its header,
 * before anything is allocated for it. */
int mmp_pnm_read_limited(FILE *f, uint64_t max_pixels, mmp_image *img, char *errbuf,
                         size_t errlen);

/*
 * Write img to `f`: raw PGM (P5) when grey, raw PPM (P6) when RGB, PAM (P7,
 * tuple type GRAYSCALE_ALPHA or RGB_ALPHA) when it has alpha; with
 * force_pam, PAM whatever the channels. 16-bit samples when maxval > 255.
 * Returns 0 or a negative MMP_E* code.
 */
int mmp_pnm_write(FILE *f, const mmp_image *img, int force_pam);

#endif
