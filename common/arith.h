/* Integer rounding shared by the normative formulas (prediction, colour
 * transforms, the restoration filter, the residual stage): C's / and >>
 * truncate or are implementation-defined for negative values, the format
 * rounds down. */
#ifndef MMP_COMMON_ARITH_H
#define MMP_COMMON_ARITH_H

#include <stdint.h>

/* floor(a / d) for d > 0, whatever the sign of a. */
static inline int64_t mmp_floor_div(int64_t a, int64_t d)
{
    return a >= 0 ? a / d : -((-a + d - 1) / d);
}

/* floor(a / 2^s) for 0 <= s < 63, whatever the sign of a, without a
 * division (the resampling, the colour transforms and the inverse transform
 * divide by powers of two in their inner loops): for a < 0, ~a = -a - 1 >= 0
 * and floor(a / 2^s) = ~(~a >> s). */
static inline int64_t mmp_floor_shift(int64_t a, int s)
{
    return a >= 0 ? a >> s : ~(~a >> s);
}

#endif
