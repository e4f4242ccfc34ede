/*
 * Block sizes and scales. A scale is a block shape 2^a x 2^b (height x width)
 * with 0 <= a, b <= MMP_LOG2B: 25 scales for B = 16, numbered a * 5 + b.
 */
#ifndef MMP_COMMON_SCALES_H
#define MMP_COMMON_SCALES_H

#define MMP_LOG2B 4
#define MMP_B (1 << MMP_LOG2B)
#define MMP_NLOG (MMP_LOG2B + 1)
#define MMP_NSCALES (MMP_NLOG * MMP_NLOG)
/* Smallest prediction block side is 2^MMP_LOG2_PMIN. */
#define MMP_LOG2_PMIN 2
#define MMP_NPSCALES ((MMP_LOG2B - MMP_LOG2_PMIN + 1) * (MMP_LOG2B - MMP_LOG2_PMIN + 1))

static inline int mmp_scale(int a, int b) { return a * MMP_NLOG + b; }
static inline int mmp_pscale(int a, int b)
{
    return (a - MMP_LOG2_PMIN) * (MMP_LOG2B - MMP_LOG2_PMIN + 1) + (b - MMP_LOG2_PMIN);
}

/* Tree flags: a node is a leaf, or split into top/bottom halves (H), or into
 * left/right halves (V). */
enum { MMP_FLAG_LEAF = 0, MMP_FLAG_SPLIT_H = 1, MMP_FLAG_SPLIT_V = 2 };

#endif
