/*
 * Quality, the 0 to 100 scale of other encoders' -q, as settings: lambda
 * from a table measured on photographs (docs/tuning.md, "Quality scale"),
 * and 100 as lossless. The arithmetic is mmp.h's, at mmp_set_quality.
 */
#include "mmp/mmp.h"

#include <math.h>

/* (quality, lambda): qualities rising, lambdas falling, each lambda a
 * multiple of 1/256 (what the header keeps), so that a quality of the
 * table gives its lambda exactly. */
static const struct {
    double quality, lambda;
} table[] = {
    {0, 8192}, {10, 3500}, {20, 1700}, {30, 700}, {40, 330}, {50, 140},
    {60, 50}, {70, 17}, {75, 10}, {80, 5.25}, {90, 1.25}, {99, 0.25},
};
#define POINTS ((int)(sizeof table / sizeof table[0]))

_Static_assert(MMP_DEFAULT_QUALITY == 75, "the table holds lambda 10, the default, at 75");

int mmp_set_quality(mmp_settings *st, double quality)
{
    if (!st || !(quality >= 0 && quality <= 100))
        return MMP_EINVAL;
    if (quality == 100) {
        st->max_error = 0;
        return MMP_OK;
    }
    int i = 0;
    while (i + 1 < POINTS && quality >= table[i + 1].quality)
        i++;
    double lambda = table[i].lambda;
    if (i + 1 < POINTS && quality > table[i].quality) {
        const double t = (quality - table[i].quality) / (table[i + 1].quality - table[i].quality);
        lambda = table[i].lambda * pow(table[i + 1].lambda / table[i].lambda, t);
    }
    st->lambda = (double)llround(lambda * 256.0) / 256.0;
    st->max_error = -1;
    return MMP_OK;
}
