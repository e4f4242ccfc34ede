/* Quality metrics on raw samples. */
#ifndef MMP_COMMON_METRICS_H
#define MMP_COMMON_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Sum of squared differences of n samples. */
uint64_t mmp_ssd(const uint16_t *a, const uint16_t *b, size_t n);
/* PSNR in dB of an error `ssd` over n samples of peak maxval; INFINITY when
 * ssd is 0. */
double mmp_psnr_of_ssd(uint64_t ssd, size_t n, int maxval);

#endif
