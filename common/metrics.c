/* Quality metrics. */
#include "common/metrics.h"

#include <math.h>

uint64_t mmp_ssd(const mmp_image *a, const mmp_image *b)
{
    uint64_t ssd = 0;
    long n = (long)a->width * a->height;
    for (long i = 0; i < n; i++) {
        int64_t d = (int64_t)a->pix[i] - b->pix[i];
        ssd += (uint64_t)(d * d);
    }
    return ssd;
}

double mmp_psnr(const mmp_image *a, const mmp_image *b)
{
    uint64_t ssd = mmp_ssd(a, b);
    if (ssd == 0)
        return INFINITY;
    double mse = (double)ssd / ((double)a->width * a->height);
    return 10.0 * log10((double)a->maxval * a->maxval / mse);
}
