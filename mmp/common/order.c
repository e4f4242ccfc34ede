/* The coding order of the blocks (docs/format.md section 4.3). */
#include "mmp/common/order.h"

#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "common/error.h"

const char *mmp_order_name(int kind)
{
    return kind == MMP_ORDER_RASTER ? "raster" : kind == MMP_ORDER_WAVEFRONT ? "wavefront" : NULL;
}

int mmp_order_init(mmp_order *o, int kind, int bw, int bh)
{
    memset(o, 0, sizeof *o);
    if (!mmp_order_name(kind) || bw < 1 || bh < 1)
        return MMP_EINVAL;
    const long nblocks = (long)bw * bh;
    /* Wavefront: step c + 2r puts the left, top-left, top and top-right
     * neighbours of a block in earlier steps. */
    const long nsteps = kind == MMP_ORDER_RASTER ? nblocks : (long)(bw - 1) + 2L * (bh - 1) + 1;
    o->first = malloc(sizeof(int) * (size_t)(nsteps + 1));
    o->block = malloc(sizeof(int32_t) * (size_t)nblocks);
    if (!o->first || !o->block) {
        mmp_order_free(o);
        return MMP_ENOMEM;
    }
    o->nsteps = (int)nsteps;
    long k = 0;
    for (long t = 0; t < nsteps; t++) {
        o->first[t] = (int)k;
        if (kind == MMP_ORDER_RASTER) {
            o->block[k++] = (int32_t)t;
        } else {
            /* Within a step, from the top row down. */
            for (long r = 0; r < bh && 2 * r <= t; r++) {
                const long c = t - 2 * r;
                if (c < bw)
                    o->block[k++] = (int32_t)(r * bw + c);
            }
        }
        const int n = (int)(k - o->first[t]);
        if (n > o->max_step)
            o->max_step = n;
    }
    o->first[nsteps] = (int)k;
    return 0;
}

void mmp_order_free(mmp_order *o)
{
    free(o->first);
    free(o->block);
    memset(o, 0, sizeof *o);
}
