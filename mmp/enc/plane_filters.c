/* The choice of a plane's deblocking and restoration filters
 * (mmp/enc/plane_filters.h). */
#include "mmp/enc/plane_filters.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/enc/deblock_fit.h"
#include "mmp/enc/restore_fit.h"

/* Restoration filter of rec into r, and its cost (0 when not fitted). */
static int fit_restore(const mmp_filter_job *j, const int32_t *rec, mmp_restore *r, double *cost)
{
    *cost = 0;
    if (!j->restoration)
        return 0;
    return mmp_restore_fit_rounds(r, rec, j->orig, j->stride, j->w, j->h, j->maxval, j->lambda,
                                  j->threads, j->rounds, cost);
}

int mmp_choose_filters(const mmp_filter_job *j, mmp_deblock *d, mmp_restore *r)
{
    double cost_plain;
    if (!j->edges)
        return fit_restore(j, j->rec, r, &cost_plain);
    int64_t dsse;
    int err = mmp_deblock_fit(d, &dsse, j->edges, j->rec, j->orig, j->stride, j->w, j->h,
                              j->maxval, j->lambda);
    if (err || !d->enabled)
        return err ? err : fit_restore(j, j->rec, r, &cost_plain);
    if (j->alone) {
        mmp_deblock_apply(d, j->edges, j->rec, j->stride, j->w, j->h, j->maxval, NULL);
        return fit_restore(j, j->rec, r, &cost_plain);
    }
    /* Both ways: the restoration filter of the plane as it is, and that of
     * the deblocked plane, with the deblocking's error and bits. */
    const size_t n = (size_t)(j->h - 1) * (size_t)j->stride + (size_t)j->w;
    int32_t *deblocked = malloc(sizeof *deblocked * n);
    mmp_restore other;
    if (!deblocked || mmp_restore_init(&other, j->w, j->h)) {
        free(deblocked);
        return MMP_ENOMEM;
    }
    memcpy(deblocked, j->rec, sizeof *deblocked * n);
    mmp_deblock_apply(d, j->edges, deblocked, j->stride, j->w, j->h, j->maxval, NULL);
    double cost_deblocked;
    err = fit_restore(j, j->rec, r, &cost_plain);
    if (!err)
        err = fit_restore(j, deblocked, &other, &cost_deblocked);
    if (!err) {
        const double on = (double)dsse + j->lambda * 2 * MMP_DB_BITS + cost_deblocked;
        if (on < cost_plain) {
            memcpy(j->rec, deblocked, sizeof *deblocked * n);
            const mmp_restore plain = *r;
            *r = other;
            other = plain;
        } else {
            *d = (mmp_deblock){0};
        }
    }
    mmp_restore_free(&other);
    free(deblocked);
    return err;
}
