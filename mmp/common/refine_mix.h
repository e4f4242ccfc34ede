/*
 * The mixing coder of the residual stage's quantised differences
 * (docs/format.md section 7.6, "The mixing coder", format 1.2, HEAD tools
 * bit 2): each q as binary decisions (its bit length in unary, the two bits
 * below the leading one, the sign; lower bits raw), each decision's
 * probability mixed from six context sets of two adaptive counters (eight
 * with the residual context of format 1.3, HEAD tools bit 3) by a logistic
 * mixer that learns as it codes. Integer arithmetic only; the encoder and
 * the decoder run the same updates.
 *
 * Normative: the features' set indices, the binarisation, the counters,
 * the mixer, squash and stretch, and the binary coding of a decision
 * (mmp_rc_encode_p12). refine.c computes the features of each sample.
 */
#ifndef MMP_MMP_REFINE_MIX_H
#define MMP_MMP_REFINE_MIX_H

#include "common/rangecoder.h"

/* The features of one sample (docs/format.md 7.6). */
typedef struct mmp_rmix_feat {
    int la;     /* qlog(floor(act / step)), 0 .. 63 */
    int ls;     /* qlog(floor(spread / step)), 0 .. 63 (0 with a base) */
    int le;     /* qlog(floor((2 |ew| + 2 |en| + |enw| + |ene|) / (2 step))), 0 .. 63 */
    int fit;    /* 0 .. 2 */
    int ectx;   /* 0 .. 19 */
    int sctx;   /* 0 .. 2: the correction's sign class */
    int tex;    /* 0 .. 63 */
    int sgn;    /* 0 .. 80: the signs of ew, en, enw, ene */
    int level;  /* 0 .. 31: floor(32 p / (M + 1)), M the plane's maxval (after a
                 * level map, the number of levels less one) */
    int region; /* 0 .. 1023: 32 floor(32 y / h) + floor(32 x / w) */
    /* With the residual context only (format 1.3; 0 otherwise): */
    int dev;    /* 0 .. 2400: the deviations of w, n, nw and ne from p */
    int guide;  /* 0 .. 767: the previous plane's gradient residual and la */
} mmp_rmix_feat;

/* qlog(v): v below 4, else 4 (bl(v) - 2) + the two bits below v's leading
 * one, at most 63. */
int mmp_rmix_qlog(uint64_t v);

typedef struct mmp_rmix mmp_rmix;

/* A fresh coder (every counter at one half, the mixer's weights at their
 * start), or NULL when out of memory; context 1 adds the sets of the
 * residual context (format 1.3, HEAD tools bit 3): dev and guide. */
mmp_rmix *mmp_rmix_new(int context);
void mmp_rmix_free(mmp_rmix *s);

/*
 * Codes q with enc, or decodes it with dec when enc is NULL, and returns
 * it; f's fields must lie in their ranges and |q| below 2^16 (the
 * quantiser's differences of samples of at most 16 bits are).
 */
int mmp_rmix_code(mmp_rmix *s, mmp_rc_enc *enc, mmp_rc_dec *dec, const mmp_rmix_feat *f, int q);

#endif
