/*
 * The encoder's choice of a plane's restoration filter (filter/restore.h):
 * least-squares (Wiener) filters per class of 4 x 4 groups, classes merged
 * greedily while the Lagrangian cost falls, coefficients quantised, regions
 * switched off where filtering does not lower their error, and the whole
 * filter off when it does not pay for its bits. Informative: any choice is a
 * valid stream.
 */
#ifndef MMP_MMP_RESTORE_FIT_H
#define MMP_MMP_RESTORE_FIT_H

#include <stdint.h>

#include "filter/restore.h"

/*
 * rec: the plane's reconstruction, orig: its original, both w x h samples of
 * row stride `stride`; lambda: the plane's Lagrangian multiplier (squared
 * error per bit). r must come from mmp_restore_init(w, h); on return it holds
 * the filter to signal (possibly disabled); the same whatever `threads`
 * (how many it may use, 1: this one). Returns 0 or MMP_ENOMEM.
 */
int mmp_restore_fit(mmp_restore *r, const int32_t *rec, const int32_t *orig, int stride, int w,
                    int h, int maxval, double lambda, int threads);

/* Rounds of fitting the filters and switching regions on and off that
 * mmp_restore_fit makes. */
#define MMP_RESTORE_FIT_ROUNDS 3

/* mmp_restore_fit with `rounds` rounds (at least 1): the fastest speed
 * presets take one, which finds nearly the same filter (docs/tuning.md,
 * "Speed presets"). cost, unless NULL, gets the change in squared error
 * plus lambda times the estimated bits of the syntax that the filter
 * brings (0 when it is disabled). */
int mmp_restore_fit_rounds(mmp_restore *r, const int32_t *rec, const int32_t *orig, int stride,
                           int w, int h, int maxval, double lambda, int threads, int rounds,
                           double *cost);

/* mmp_restore_apply in bands of groups of rows on up to `threads` threads
 * (OpenMP; 1: this one): the bands are independent, so the output is the
 * same. Returns 0 or MMP_ENOMEM. */
int mmp_restore_apply_threads(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                              int maxval, int threads, uint16_t *out);

/* For tests: on (1), the fit takes its statistics the plain way, which the
 * default must equal: every round sums the samples of the regions that are
 * on afresh (rather than taking those of the regions that are off from the
 * first round's sums), each sample's taps clamped into the plane (rather
 * than read at fixed offsets away from its edges). Off (0) by default. */
void mmp_restore_fit_plain(int on);

#endif
