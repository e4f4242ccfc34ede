/* Positions in ascending arrays of int32_t, without a branch per step:
 * shared by the dictionary's insertions and the CPU engines' node search. */
#ifndef MMP_COMMON_LOWER_BOUND_H
#define MMP_COMMON_LOWER_BOUND_H

#include <stdint.h>

/* The first position of a[0..n) whose value is >= v (n if none). Written so
 * that the compiler can use a conditional move: the branch of a plain
 * binary search is mispredicted half the time. */
static inline int mmp_lower_bound(const int32_t *a, int n, int32_t v)
{
    const int32_t *base = a;
    int len = n;
    while (len > 1) {
        const int half = len / 2;
        base = base[half - 1] < v ? base + half : base;
        len -= half;
    }
    return (int)(base - a) + (len == 1 && base[0] < v);
}

/* The same through dir, every step-th value of a from the first: counting
 * the entries of dir below v (a scan while dir has at most scan_max of
 * them), then the values below v in the one run of a that they leave, is
 * two short loops without a chain of dependent loads. */
static inline int mmp_lower_bound_dir(const int32_t *a, int n, const int32_t *dir, int step,
                                      int scan_max, int32_t v)
{
    const int nd = (n + step - 1) / step;
    int c = 0; /* entries of dir below v */
    if (nd <= scan_max) {
        for (int i = 0; i < nd; i++)
            c += dir[i] < v;
    } else {
        c = mmp_lower_bound(dir, nd, v);
    }
    if (c == 0)
        return 0;
    /* a[(c - 1) step] < v, and a[c step] >= v where it exists */
    const int lo = (c - 1) * step + 1, hi = c * step < n ? c * step : n;
    int k = lo;
    for (int i = lo; i < hi; i++)
        k += a[i] < v;
    return k;
}

#endif
