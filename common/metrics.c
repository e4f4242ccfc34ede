/* Quality metrics on raw samples. */
#include "common/metrics.h"

#include <math.h>

uint64_t mmp_ssd(const uint16_t *a, const uint16_t *b, size_t n)
{
    uint64_t ssd = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t d = (int64_t)a[i] - b[i];
        ssd += (uint64_t)(d * d);
    }
    return ssd;
}

double mmp_psnr_of_ssd(uint64_t ssd, size_t n, int maxval)
{
    if (ssd == 0)
        return INFINITY;
    const double mse = (double)ssd / (double)n;
    return 10.0 * log10((double)maxval * maxval / mse);
}
