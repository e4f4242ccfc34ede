/*
 * Perceptual quality of a decoded image against its original, for
 * measurement (make rd, mmp-metrics); no part of the format.
 *
 * Both functions take two images of w x h pixels, `channels` interleaved
 * samples a pixel (1 grey, 2 grey and alpha, 3 RGB, 4 RGB and alpha; alpha
 * is left out), samples in [0, maxval], maxval 1..65535 (16-bit samples are
 * scaled to [0, 1] by maxval like 8-bit ones). They return 0 and the score
 * in *score, or MMP_EINVAL (a NULL pointer, a size, channels or maxval out
 * of range, an image too small for the metric), MMP_ENOMEM.
 */
#ifndef MMP_COMMON_PERCEPTUAL_H
#define MMP_COMMON_PERCEPTUAL_H

#include <stdint.h>

/*
 * MS-SSIM (Wang, Simoncelli and Bovik, "Multi-scale structural similarity
 * for image quality assessment", Asilomar 2003) as the authors' msssim.m
 * computes it: 5 scales, an 11 x 11 Gaussian window of sigma 1.5 over the
 * positions where it fits ('valid'), K1 0.01 and K2 0.03 on samples scaled
 * to 0..255, the mean contrast-structure term of scales 1 to 4 and the mean
 * SSIM of scale 5 raised to 0.0448, 0.2856, 0.3001, 0.2363 and 0.1333, each
 * scale made from the one before by 2 x 2 means (the last row and column
 * repeated when a side is odd). Colour images are measured on their BT.601
 * luma (0.299 R + 0.587 G + 0.114 B, not rounded). 1 for equal images.
 * The coarsest scale (each side halved four times, rounded up) must be at
 * least 11 x 11: sides of 161 or more (msssim.m asks 176).
 */
int mmp_metric_msssim(const uint16_t *a, const uint16_t *b, int w, int h, int channels,
                      int maxval, double *score);

/*
 * SSIMULACRA 2 as libjxl's tools/ssimulacra2.cc defines it (version 2.1):
 * samples taken as sRGB (grey as R = G = B), made linear, converted to XYB
 * and made positive; at 6 scales (1:1 to 1:32, 2 x 2 means in linear RGB,
 * stopping early on small images as the reference does), the SSIM map
 * without the luminance denominator and the two edge maps (ringing, blur),
 * each through a recursive Gaussian of sigma 1.5 (Charalampidis' three-term
 * IIR, zero outside the image); their mean and 4-norm per channel, the
 * published 108 weights and the final mapping. 100 for equal images, lower
 * the worse (below 0 for very poor ones). In float where the reference
 * computes in float, operation for operation as libjxl 0.12.0's tool runs
 * on x86-64 (highway's AVX2 target: its fused multiply-adds, its cube root,
 * its approximation of sRGB's curve): the scores are the tool's to the last
 * bit. That rounding matters: 16-bit samples (v times 257, maxval 65535)
 * score up to 0.03 from the same picture in 8 bits, in the tool as here.
 * At least 8 x 8 pixels.
 */
int mmp_metric_ssimulacra2(const uint16_t *a, const uint16_t *b, int w, int h, int channels,
                           int maxval, double *score);

#endif
