/*
 * PNG files of the front ends, read and written through libpng, with their
 * metadata (mmp/imageio/meta.h). The library itself links no image file
 * format; mmp/imageio/imagefile.h chooses between these, the netpbm files,
 * JPEG and TIFF.
 */
#ifndef MMP_CLI_PNG_H
#define MMP_CLI_PNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmp/imageio/meta.h"
#include "mmp/mmp.h"

/* The 8-byte PNG signature. */
extern const unsigned char mmp_png_signature[8];

/*
 * Read a PNG from `f` into *img (free with mmp_image_free), `sig_read`
 * (0..8) bytes of the signature having been read and checked already.
 * Grey, grey and alpha, RGB and RGBA keep their sample depth: maxval
 * 2^bitdepth - 1 (1, 3, 15, 255 or 65535); a palette is expanded to 8-bit
 * RGB, and to RGBA when a tRNS chunk gives transparency, which also adds
 * alpha to grey and RGB images (low-depth grey is then expanded to 8 bits).
 * An sBIT chunk of k significant bits in every channel gives maxval 2^k - 1
 * when every sample is its k-bit value with the bits repeated (as
 * mmp_png_write stores it), so that nothing is lost; otherwise it is
 * ignored. Interlaced files are read too. Sizes are checked against
 * MMP_MAX_DIM and MMP_MAX_PIXELS before anything is allocated for the
 * image, and libpng's allocations for ancillary chunks are bounded. On
 * error returns a negative MMP_E* code and writes a one-line reason (no
 * newline) to errbuf[errlen]; nothing is allocated then.
 */
int mmp_png_read(FILE *f, int sig_read, mmp_image *img, char *errbuf, size_t errlen);
/*
 * The same, and with meta not NULL (zeroed or empty) its metadata, from
 * before and after the image data, into *meta: iCCP (the profile inflated,
 * and its name), sRGB, gAMA and cHRM as stored, eXIf, and the tEXt, zTXt
 * and iTXt chunks, the first iTXt "XML:com.adobe.xmp" as the XMP packet.
 * Damaged ancillary chunks are left out (libpng skips those with a bad CRC;
 * an iCCP whose profile does not inflate is left out here). On error meta
 * is left empty. An image of more than max_pixels pixels (width x height;
 * 0: no limit below MMP_MAX_PIXELS) is refused with MMP_ELIMIT on its
 * header, before anything is allocated for it.
 */
int mmp_png_read_meta(FILE *f, int sig_read, uint64_t max_pixels, mmp_image *img,
                      mmp_imageio_meta *meta, char *errbuf, size_t errlen);

/* 1 when a PNG can hold samples of this maxval exactly: 2^k - 1, k = 1..16. */
int mmp_png_can_hold(int maxval);

/*
 * Write img to `f` as PNG: grey, grey and alpha, RGB or RGBA by its
 * channels, 16 bits when maxval > 255, else 8 bits (grey with maxval 1, 3
 * or 15: 1, 2 or 4 bits). A maxval 2^k - 1 below the depth is written
 * with the bits of each sample repeated and an sBIT chunk of k bits. A
 * maxval that is not 2^k - 1 is MMP_EUNSUPPORTED (nothing written);
 * otherwise returns 0 or a negative MMP_E* code.
 */
int mmp_png_write(FILE *f, const mmp_image *img);
/*
 * The same with the metadata of `meta` (NULL or empty: none), before the
 * image data: the ICC profile as iCCP (named by icc_name when that is a
 * valid PNG keyword, else "ICC profile"), or else sRGB (PNG wants one of
 * the two: with a profile written, sRGB is not); gAMA, cHRM, eXIf; the XMP
 * packet as an uncompressed iTXt "XML:com.adobe.xmp"; the texts, each as
 * the chunk its kind names. Every part keeps its bytes. Left out, and named
 * in warn[warnlen] as one line ("" when nothing was; the image is written
 * all the same): a profile whose colour space is not the image's (RGB for
 * colour, GRAY for grey) or shorter than an ICC header, an undefined sRGB
 * rendering intent, gAMA 0, an EXIF block without a TIFF header, XMP or a
 * text with a NUL byte, a keyword PNG does not allow (1 to 79 printable
 * Latin-1 bytes, no leading, trailing or double space). Returns as
 * mmp_png_write.
 */
int mmp_png_write_meta(FILE *f, const mmp_image *img, const mmp_imageio_meta *meta, char *warn,
                       size_t warnlen);

#endif
