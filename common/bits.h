/* Bit lengths, shared by the syntaxes that code a number as its length and
 * the bits below its leading one (exact alpha, the restoration filter, the
 * transform's last position and escapes) and the search's rate of them. */
#ifndef MMP_COMMON_BITS_H
#define MMP_COMMON_BITS_H

#include <stdint.h>

/* The number of bits of v: 0 for 0, 1 for 1, 2 for 2 and 3, ... */
static inline int mmp_bit_length(uint64_t v)
{
    int n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
}

#endif
