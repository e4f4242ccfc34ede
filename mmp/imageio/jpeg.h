/*
 * JPEG files of the front ends, read through libjpeg (libjpeg-turbo); the
 * front ends write none. mmp/imageio/imagefile.h tells them by their first
 * bytes (0xFF 0xD8).
 */
#ifndef MMP_IMAGEIO_JPEG_H
#define MMP_IMAGEIO_JPEG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmp/imageio/meta.h"
#include "mmp/mmp.h"

/*
 * Read a JPEG from `f` into *img (free with mmp_image_free), the first
 * head_len bytes of the file having been read from `f` already into head
 * (0 to 2 bytes: the SOI marker). Greyscale files give grey (1 channel),
 * YCbCr and RGB files RGB (3 channels), maxval 255, decoded with libjpeg's
 * defaults (the accurate integer IDCT, smooth chroma upsampling). Baseline,
 * extended, progressive and arithmetic-coded files are read, with restart
 * markers or without.
 *
 * Refused with a one-line reason: CMYK and YCCK files (MMP_EUNSUPPORTED:
 * turning ink into RGB needs the file's CMYK profile and a colour
 * management engine, and a naive formula would give wrong colours without
 * saying so; convert such files to RGB first), 12-bit and lossless files
 * (MMP_EUNSUPPORTED, which this libjpeg build does not decode), images wider
 * or taller than MMP_MAX_DIM or of more than MMP_MAX_PIXELS pixels
 * (MMP_ELIMIT, checked on the frame header before anything is allocated for
 * the pixels), a file that ends before its EOI marker ("truncated JPEG
 * file") and entropy-coded data that libjpeg finds corrupt (MMP_EFORMAT:
 * libjpeg would go on with grey blocks; lesser warnings, such as stray
 * bytes between markers, are ignored), and a file of more than 1000 scans.
 * libjpeg never prints and never exits: its errors come back here.
 *
 * With meta not NULL, the ICC profile (APP2 "ICC_PROFILE" segments, joined
 * in sequence order by libjpeg's jpeg_read_icc_profile; an inconsistent
 * set is left out), the first EXIF block (APP1 "Exif\0\0", without that
 * prefix) and the first XMP packet (APP1 "http://ns.adobe.com/xap/1.0/\0",
 * without that prefix) go into *meta, which must be zeroed or empty; the
 * EXIF orientation is not applied. On error returns a negative MMP_E* code
 * and writes a one-line reason (no newline) to errbuf[errlen]; nothing is
 * allocated then (meta is left empty). An image of more than max_pixels
 * pixels (width x height; 0: no limit below MMP_MAX_PIXELS) is refused
 * with MMP_ELIMIT on the frame header, as the limits above are.
 */
int mmp_jpeg_read(FILE *f, const unsigned char *head, size_t head_len, uint64_t max_pixels,
                  mmp_image *img, mmp_imageio_meta *meta, char *errbuf, size_t errlen);

#endif
