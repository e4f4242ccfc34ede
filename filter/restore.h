/*
 * The restoration filter of a decoded plane (docs/format.md section 7.5): an
 * adaptive 7 x 7 diamond filter, one of up to MMP_RF_MAX_FILTERS per plane
 * chosen by the class of each 4 x 4 group (local activity and direction),
 * switched on or off per 64 x 64 region, its coefficients signalled after the
 * plane's blocks. It reads the whole reconstruction and changes only what the
 * decoder outputs: prediction never sees filtered samples.
 *
 * Normative: the classes, the filtering and the syntax here are what encoder
 * and decoder share; the encoder's fit of the coefficients lives in
 * mmp/enc/restore_fit.c.
 */
#ifndef MMP_FILTER_RESTORE_H
#define MMP_FILTER_RESTORE_H

#include <stdint.h>

#include "common/rangecoder.h"

/* Symmetric tap pairs of the diamond (the centre is implied). */
#define MMP_RF_TAPS 12
/* Coefficients are in 1/128 and lie in [-MMP_RF_COEF_MAX, MMP_RF_COEF_MAX]. */
#define MMP_RF_SHIFT 7
#define MMP_RF_COEF_MAX 127
/* Classes of 4 x 4 groups: 7 activities times 9 directions. */
#define MMP_RF_ACTS 7
#define MMP_RF_DIRS 9
#define MMP_RF_CLASSES (MMP_RF_ACTS * MMP_RF_DIRS)
#define MMP_RF_MAX_FILTERS 16
/* Regions switched on or off: 2^6 = 64 samples square. */
#define MMP_RF_LOG2_REGION 6

/* The taps' offsets (dy, dx); each tap reads (y + dy, x + dx) and (y - dy, x - dx). */
extern const int8_t mmp_rf_tap[MMP_RF_TAPS][2];

typedef struct mmp_restore {
    int enabled;
    int nfilters;                              /* 1..MMP_RF_MAX_FILTERS */
    uint8_t map[MMP_RF_CLASSES];               /* class -> filter */
    int16_t coef[MMP_RF_MAX_FILTERS][MMP_RF_TAPS];
    int rw, rh;                                /* regions across and down */
    uint8_t *on;                               /* rw * rh flags, owned */
} mmp_restore;

/* Regions of a w x h plane, flags all on, no filter. Returns 0 or MMP_ENOMEM. */
int mmp_restore_init(mmp_restore *r, int w, int h);
void mmp_restore_free(mmp_restore *r);

/*
 * The class of every 4 x 4 group of the reconstruction rec (w x h samples,
 * row stride `stride`) into cls[((h + 3) / 4) * ((w + 3) / 4)]. Only the
 * groups of regions that are on are classified when r is given (the others
 * get class 0). Returns 0 or MMP_ENOMEM.
 */
int mmp_restore_classify(const int32_t *rec, int stride, int w, int h, int maxval,
                          const mmp_restore *r, uint8_t *cls);

/* The same for the groups of rows g0 .. g1 - 1 only (groups of 4 rows):
 * bands of groups are independent, so they may be classified in parallel. */
int mmp_restore_classify_rows(const int32_t *rec, int stride, int w, int h, int maxval,
                              const mmp_restore *r, int g0, int g1, uint8_t *cls);

/*
 * The filtered plane: rec (w x h, stride `stride`) through r into out (w x h,
 * stride w). Samples of regions that are off, and every sample when the
 * filter is disabled, are copied. On this thread; the decoder and the
 * encoder run it in bands of groups of rows on their threads
 * (mmp_restore_apply_groups). Returns 0 or MMP_ENOMEM.
 */
int mmp_restore_apply(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                      int maxval, uint16_t *out);

/* The rows of the groups g0 .. g1 - 1 (rows 4 g0 .. min(4 g1, h) - 1) of
 * mmp_restore_apply's output, into out with rows ostride samples apart:
 * their classes into their part of cls (the whole plane's array, unused
 * when r is disabled), then the filter. Bands
 * of groups are independent, so they may run in parallel. Returns 0 or
 * MMP_ENOMEM. */
int mmp_restore_apply_groups(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                             int maxval, int g0, int g1, uint8_t *cls, uint16_t *out,
                             long ostride);

/* Rows [y0, y1) of mmp_restore_apply's output, into out with rows ostride
 * samples apart, given the classes cls of
 * mmp_restore_classify with r (unread when r is disabled): rows are
 * independent, so the encoder's fit filters bands of them in parallel. */
void mmp_restore_rows(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                      int maxval, const uint8_t *cls, int y0, int y1, uint16_t *out,
                      long ostride);

/* The syntax after a plane's blocks: write r, or read it into r (made by
 * mmp_restore_init for the plane's size). Every value the syntax can code
 * is allowed, so reading returns 0; a payload that ends too soon shows in
 * d->overrun, which the caller checks. */
void mmp_restore_write(mmp_rc_enc *e, const mmp_restore *r);
int mmp_restore_read(mmp_rc_dec *d, mmp_restore *r);

#endif
