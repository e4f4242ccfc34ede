/*
 * The encoder's choice of a plane's deblocking parameters (filter/deblock.h):
 * the pair of least squared error plus lambda times its bits, found by
 * descending one parameter at a time over a ladder of values, or the filter
 * off when no pair pays for its bits. Informative: any choice is a valid
 * stream.
 */
#ifndef MMP_MMP_DEBLOCK_FIT_H
#define MMP_MMP_DEBLOCK_FIT_H

#include <stdint.h>

#include "filter/deblock.h"

/*
 * rec: the plane's reconstruction, orig: its original, both w x h samples of
 * row stride `stride`, e: where its coding leaves meet; lambda: the plane's
 * Lagrangian multiplier (squared error per bit). *d gets the parameters to
 * signal and *dsse the change in squared error they make (0 when the filter
 * is off). rec is left as it was. Returns 0 or MMP_ENOMEM.
 */
int mmp_deblock_fit(mmp_deblock *d, int64_t *dsse, const mmp_edges *e, const int32_t *rec,
                    const int32_t *orig, int stride, int w, int h, int maxval, double lambda);

#endif
