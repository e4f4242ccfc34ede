/*
 * The coding order of the blocks (docs/format.md section 4.3): the blocks
 * fall into steps, coded one after another; within a step every block is
 * searched and reconstructed from the dictionary, the adaptive rates and
 * the pixels as they were before the step, so the blocks of one step are
 * independent of each other. Raster order has one block per step;
 * wavefront order puts block (r, c) in step c + 2r.
 */
#ifndef MMP_MMP_ORDER_H
#define MMP_MMP_ORDER_H

#include <stdint.h>

typedef struct mmp_order {
    int nsteps;
    int max_step;   /* most blocks in one step */
    int *first;     /* nsteps + 1 entries: step t is blocks first[t] .. first[t+1] - 1 */
    int32_t *block; /* every block index (by * bw + bx) once, in coding order */
} mmp_order;

/* kind: MMP_ORDER_RASTER or MMP_ORDER_WAVEFRONT; bw x bh blocks. Returns 0,
 * MMP_EINVAL (unknown kind) or MMP_ENOMEM (nothing to free then). */
int mmp_order_init(mmp_order *o, int kind, int bw, int bh);
void mmp_order_free(mmp_order *o);

/* The name of an order kind ("raster", "wavefront"), or NULL. */
const char *mmp_order_name(int kind);

#endif
