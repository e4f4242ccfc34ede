/*
 * The encoder's choice of a plane's two filters, deblocking (filter/deblock.h)
 * and restoration (filter/restore.h), which reads the deblocking's output.
 * Each is fitted against the original; deblocking is kept only where the
 * pair costs less than the restoration filter alone, since a restoration
 * filter fitted to the unfiltered plane can gain more than the two together
 * (docs/tuning.md, "Deblocking filter"). Informative: any choice is a valid
 * stream.
 */
#ifndef MMP_MMP_PLANE_FILTERS_H
#define MMP_MMP_PLANE_FILTERS_H

#include <stdint.h>

#include "filter/deblock.h"
#include "filter/restore.h"

typedef struct mmp_filter_job {
    int32_t *rec;          /* the plane's reconstruction; deblocked on return when d is on */
    const int32_t *orig;   /* its original, the same stride */
    int stride, w, h, maxval;
    const mmp_edges *edges; /* where its coding leaves meet; NULL: no deblocking tool */
    double lambda;         /* the plane's Lagrangian multiplier (squared error per bit) */
    int restoration;       /* 1: fit a restoration filter; 0: it stays disabled */
    int threads;           /* for the restoration fit (mmp_restore_fit_rounds) */
    int rounds;            /* its rounds */
    int alone;             /* 1: deblocking kept on its own gain (one restoration fit) */
} mmp_filter_job;

/* *d (untouched without edges) and *r (from mmp_restore_init(w, h)) get
 * the filters to signal. Returns 0 or MMP_ENOMEM. */
int mmp_choose_filters(const mmp_filter_job *j, mmp_deblock *d, mmp_restore *r);

#endif
