/* The encoder's choice of the deblocking parameters (mmp/enc/deblock_fit.h). */
#include "mmp/enc/deblock_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

/* The ladders the descent walks: about a third more at each rung, as the
 * steps to smooth grow with the quantisation. */
static const int tc_ladder[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 63};
static const int beta_ladder[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 63};
#define NTC ((int)(sizeof tc_ladder / sizeof *tc_ladder))
#define NBETA ((int)(sizeof beta_ladder / sizeof *beta_ladder))

/* The change in squared error that d makes: the filter on work, a copy of rec. */
static int64_t trial(const mmp_deblock *d, const mmp_edges *e, const int32_t *rec,
                     const int32_t *orig, int32_t *work, int stride, int w, int h, int maxval)
{
    memcpy(work, rec, sizeof *work * ((size_t)(h - 1) * (size_t)stride + (size_t)w));
    return mmp_deblock_apply(d, e, work, stride, w, h, maxval, orig);
}

int mmp_deblock_fit(mmp_deblock *d, int64_t *dsse, const mmp_edges *e, const int32_t *rec,
                    const int32_t *orig, int stride, int w, int h, int maxval, double lambda)
{
    int32_t *work = malloc(sizeof *work * ((size_t)(h - 1) * (size_t)stride + (size_t)w));
    if (!work)
        return MMP_ENOMEM;
    /* Bits of the parameters beyond the one of the filter off. */
    const double extra = lambda * 2 * MMP_DB_BITS;
    /* The start: tc near a third of the square root of lambda on the 8-bit
     * scale, about where the descent ends on photographs and graphics
     * alike, so that it has few rungs to walk. */
    const double lambda8 = lambda * (255.0 / maxval) * (255.0 / maxval);
    int ti = 0, bi = 5;
    while (ti + 1 < NTC && tc_ladder[ti + 1] <= sqrt(lambda8) / 3)
        ti++;
    mmp_deblock t = {.enabled = 1, .tc = tc_ladder[ti], .beta = beta_ladder[bi]};
    int64_t best = trial(&t, e, rec, orig, work, stride, w, h, maxval);
    /* tc, then beta, then tc again: each walks up or down its ladder while
     * the error falls. */
    for (int round = 0; round < 3; round++) {
        const int on_tc = round != 1;
        const int n = on_tc ? NTC : NBETA;
        int *at = on_tc ? &ti : &bi;
        for (int dir = 1; dir >= -1; dir -= 2) {
            int moved = 0;
            while (*at + dir >= 0 && *at + dir < n) {
                mmp_deblock c = t;
                if (on_tc)
                    c.tc = tc_ladder[*at + dir];
                else
                    c.beta = beta_ladder[*at + dir];
                const int64_t v = trial(&c, e, rec, orig, work, stride, w, h, maxval);
                if (v >= best)
                    break;
                best = v;
                t = c;
                *at += dir;
                moved = 1;
            }
            if (moved)
                break;
        }
    }
    free(work);
    *d = t;
    d->enabled = (double)best + extra < 0;
    *dsse = d->enabled ? best : 0;
    if (!d->enabled)
        d->tc = d->beta = 0;
    return 0;
}
