/*
 * The deblocking filter of a decoded plane (docs/format.md section 7.7): it
 * smooths the steps that coding leaves leave at their boundaries where both
 * sides are smooth, over a reach that grows with the leaves' size, and leaves
 * real edges alone. Two parameters per plane, signalled after its blocks,
 * bound its corrections and its test of smoothness. Like the restoration
 * filter, which reads its output, it changes only what the decoder outputs:
 * prediction never sees filtered samples.
 *
 * Normative: the edge map, the filtering and the syntax here are what
 * encoder and decoder share; the encoder's choice of the parameters lives in
 * mmp/enc/deblock_fit.c.
 */
#ifndef MMP_FILTER_DEBLOCK_H
#define MMP_FILTER_DEBLOCK_H

#include <stdint.h>

#include "common/rangecoder.h"

/* The edge map's unit: 4 x 4 samples. */
#define MMP_DB_LOG2_UNIT 2
/* A unit's flags: a coding leaf's boundary runs along its left, its top edge. */
#define MMP_DB_LEFT 1
#define MMP_DB_TOP 2
/* The parameters' indices, MMP_DB_BITS bits each. */
#define MMP_DB_BITS 6
#define MMP_DB_MAX_INDEX ((1 << MMP_DB_BITS) - 1)

typedef struct mmp_deblock {
    int enabled;
    int tc;   /* 0 .. MMP_DB_MAX_INDEX: the largest correction, in 8-bit steps */
    int beta; /* 0 .. MMP_DB_MAX_INDEX: the smoothness bound, in 4 8-bit steps */
} mmp_deblock;

/*
 * Where the coding leaves of a plane meet, per unit of its padded samples
 * (uw across, uh down): flags (MMP_DB_LEFT, MMP_DB_TOP) and size, the base-2
 * logarithms of the width (bits 0..3) and the height (bits 4..7) of the
 * narrowest and of the shortest coding leaf that covers any of the unit's
 * samples. A coding leaf is a transform leaf or a leaf of a residual tree.
 */
typedef struct mmp_edges {
    int uw, uh;
    uint8_t *flags;
    uint8_t *size;
} mmp_edges;

/* The map of a padded pw x ph plane (multiples of 16), no boundary yet.
 * Returns 0 or MMP_ENOMEM. */
int mmp_edges_init(mmp_edges *e, int pw, int ph);
void mmp_edges_free(mmp_edges *e);

/* The plane's parameters: written after its blocks, read back. */
void mmp_deblock_write(mmp_rc_enc *rc, const mmp_deblock *d);
void mmp_deblock_read(mmp_rc_dec *rc, mmp_deblock *d);

/*
 * Filter the top-left w x h samples of pix (rows `stride` apart; samples in
 * [0, maxval]) in place along the boundaries of e: every vertical edge,
 * then every horizontal one. Nothing happens when d is disabled. With orig
 * (same stride), returns the change in the squared error against it that
 * the filter made; else 0.
 */
int64_t mmp_deblock_apply(const mmp_deblock *d, const mmp_edges *e, int32_t *pix, int stride,
                          int w, int h, int maxval, const int32_t *orig);

#endif
