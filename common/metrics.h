/* Quality metrics. */
#ifndef MMP_COMMON_METRICS_H
#define MMP_COMMON_METRICS_H

#include <stdint.h>

#include "common/image.h"

/* Sum of squared differences of two images of the same size. */
uint64_t mmp_ssd(const mmp_image *a, const mmp_image *b);
/* PSNR in dB against a's maxval; INFINITY when the images are identical. */
double mmp_psnr(const mmp_image *a, const mmp_image *b);

#endif
