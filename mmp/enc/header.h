/*
 * The encoder's settings and image checked, and turned into the header
 * that the decoder mirrors (docs/format.md section 2): the choices the
 * settings leave to the encoder (colour transform, residual coding, tile
 * sides, dictionary size, redundancy threshold) are made here, once.
 */
#ifndef MMP_ENC_HEADER_H
#define MMP_ENC_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "common/container.h"
#include "mmp/mmp.h"

/* 0, or an MMP_E* code with a one-line reason in errbuf: the image and
 * every field of the settings in range and consistent. */
int mmp_enc_check(const mmp_settings *st, const mmp_image *img, char *errbuf, size_t errlen);

/* The header of an encode of img with st (checked by mmp_enc_check): the
 * whole image's, its tiles' sides included. */
void mmp_enc_header(const mmp_settings *st, const mmp_image *img, mmp_header *h);

/*
 * lambda_q8 on the image's sample scale: lambda weighs bits against squared
 * errors on the 8-bit scale whatever the maxval, so the distortion of a
 * maxval M image counts (255 / M)^2 times its squared error, which is the
 * same as lambda times (M / 255)^2 against the raw squared error. At maxval
 * 255 it is lambda_q8 itself; at most 2^40.
 */
int64_t mmp_enc_scaled_lambda_q8(int64_t lambda_q8, int maxval);

#endif
