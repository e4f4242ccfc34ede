/*
 * PGM files (P2 and P5, maxval 1..65535) of the front ends, read and written
 * through libnetpbm. The library itself links no image file format.
 */
#ifndef MMP_CLI_PGM_H
#define MMP_CLI_PGM_H

#include <stddef.h>
#include <stdio.h>

#include "mmp/mmp.h"

/*
 * Read a PGM from `f` into *img (free with mmp_image_free). On error returns
 * a negative MMP_E* code and writes a one-line reason (no newline) to
 * errbuf[errlen]; nothing is allocated then. Not thread-safe: libnetpbm's
 * error handlers are process-global.
 */
int mmp_pgm_read(FILE *f, mmp_image *img, char *errbuf, size_t errlen);
/* Read from a path; "-" is stdin. */
int mmp_pgm_read_path(const char *path, mmp_image *img, char *errbuf, size_t errlen);
/* Write binary PGM (P5) to `f`. Returns 0 or a negative MMP_E* code. */
int mmp_pgm_write(FILE *f, const mmp_image *img);

#endif
