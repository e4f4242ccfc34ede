/*
 * TIFF files of the front ends, read through libtiff; the front ends write
 * none. mmp/imageio/imagefile.h tells them by their first bytes ("II*\0",
 * "MM\0*", and BigTIFF's "II+\0", "MM\0+").
 */
#ifndef MMP_IMAGEIO_TIFF_H
#define MMP_IMAGEIO_TIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmp/imageio/meta.h"
#include "mmp/mmp.h"

/*
 * Read the first image (the first directory: further pages are ignored) of
 * a TIFF from `f` into *img (free with mmp_image_free), the first head_len
 * bytes of the file having been read from `f` already into head. TIFF
 * needs random access, so the rest of the stream is read into memory first
 * (standard input works; at most 4 GiB: a larger regular file is refused
 * before it is read, a pipe as soon as it passes that).
 *
 * Read: unsigned integer samples; grey of 1, 2, 4, 8 or 16 bits (maxval
 * 2^bits - 1), min-is-black and min-is-white (inverted to min-is-black);
 * RGB of 8 or 16 bits; palette images of 1 to 8 bits, as RGB (8 bits when
 * every colour map entry is a multiple of 257, or when every entry is at
 * most 255, which old writers stored for 8-bit maps, as libtiff's own RGBA
 * reader assumes; else 16 bits); YCbCr only when JPEG-compressed, as RGB
 * (libtiff's JPEG codec converts it). The first extra sample is alpha
 * (associated alpha is divided out; an unspecified extra sample is kept
 * as straight alpha), so grey and alpha, and RGBA, come out with alpha;
 * further extra samples are dropped. Strips and tiles, planar contiguous
 * and separate, any compression that libtiff decodes. Neither the
 * Orientation tag nor the EXIF orientation is applied.
 *
 * Refused with a one-line reason: CMYK (separated) and other photometric
 * interpretations, signed and floating-point samples, other depths
 * (MMP_EUNSUPPORTED); images wider or taller than MMP_MAX_DIM or of more
 * than MMP_MAX_PIXELS pixels, or of more than max_pixels (width x height;
 * 0: no limit below MMP_MAX_PIXELS) (MMP_ELIMIT), checked on the directory before
 * anything is allocated for the pixels, and tiles of more than 2^20 pixels
 * that reach more than 15 pixels past the image (MMP_ELIMIT: a tiny file
 * must not ask for a huge buffer); a directory, strips or tiles beyond the
 * end of the file ("truncated TIFF file") and whatever libtiff refuses
 * (MMP_EFORMAT).
 * libtiff never prints: its messages come back here (the handle's own
 * handlers take them, and libtiff's process-wide handlers, which print by
 * default, are set to none at the first read).
 *
 * With meta not NULL, the ICC profile (tag ICCProfile) and the XMP packet
 * (tag XMLPacket) go into *meta, which must be zeroed or empty. Not the
 * EXIF: a TIFF file's EXIF IFD is part of the file's own structure, its
 * values at offsets anywhere in the file, and there is no verbatim block
 * of it to keep. On error returns a negative MMP_E* code and writes a
 * one-line reason (no newline) to errbuf[errlen]; nothing is allocated
 * then (meta is left empty).
 */
int mmp_tiff_read(FILE *f, const unsigned char *head, size_t head_len, uint64_t max_pixels,
                  mmp_image *img, mmp_imageio_meta *meta, char *errbuf, size_t errlen);

#endif
