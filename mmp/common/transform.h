/*
 * The transform residual of a prediction leaf (docs/format.md section 4.4):
 * the alternative to the dictionary's residual tree. A leaf's residual is
 * coded as quantised coefficients of a separable integer DCT (HEVC's core
 * matrices, sizes 4, 8 and 16, rows and columns sized independently), with
 * one uniform quantiser step per plane.
 *
 * Normative: the step of a quantiser index, the inverse transform, and the
 * coefficient syntax (one traversal for the encoder, the decoder and the
 * encoder's rate estimate, so that the three cannot disagree on a context).
 * The forward transform is the encoder's (mmp/enc/search_tx.c).
 */
#ifndef MMP_MMP_TRANSFORM_H
#define MMP_MMP_TRANSFORM_H

#include <stdint.h>

#include "common/rangecoder.h"
#include "common/scales.h"

/* Quantiser indices: 0 is no transform; 1 .. MMP_TX_MAX_QI a step of
 * 2^((qi - 1) / 8) samples, in 1/16 (mmp_tx_step_q4). */
#define MMP_TX_MAX_QI 160

/* The escape's Exp-Golomb prefix is at most this long, so a level's
 * magnitude is at most MMP_TX_ESCAPE + 2^(MMP_TX_MAX_PREFIX + 1) - 1. */
#define MMP_TX_MAX_PREFIX 24
/* Magnitudes |level| - 1 up to this minus one have their own symbol; this
 * symbol is the escape. */
#define MMP_TX_ESCAPE 15
#define MMP_TX_MAX_LEVEL (MMP_TX_ESCAPE + 1 + ((1 << (MMP_TX_MAX_PREFIX + 1)) - 2))

/* Context counts (docs/format.md 4.4). */
#define MMP_TX_SIZE_CLASSES 3 /* area 16, 32 .. 64, 128 .. 256 */
#define MMP_TX_POS_CLASSES 4  /* diagonal 0, 1 .. 2, 3 .. 5, 6 .. */
#define MMP_TX_SIG_NB 4       /* nonzero neighbours 0, 1, 2, 3 or more */
#define MMP_TX_MAG_NB 4       /* neighbours' magnitudes 0, 1 .. 2, 3 .. 5, 6 .. */
#define MMP_TX_SIG_CTX (MMP_TX_SIZE_CLASSES * MMP_TX_POS_CLASSES * MMP_TX_SIG_NB)
#define MMP_TX_MAG_CTX (2 * 2 * MMP_TX_MAG_NB) /* small or not, DC or not, neighbours */
#define MMP_TX_EG_CTX 12

/*
 * The coefficient contexts, one derivation for the syntax (transform.c) and
 * the search's rates and RDOQ (search_tx.c). mag holds min(|level|, 15) at
 * (y, x), stride MMP_TX_PAD, with two zero columns and rows past the leaf;
 * t = mag + y * MMP_TX_PAD + x points at the position, whose diagonal is
 * dg = y + x. The neighbours read are the two to the right, the two below
 * and the one below to the right: all coded before it in reverse scan.
 */
#define MMP_TX_PAD (MMP_B + 2)
static inline int mmp_tx_size_class(int area)
{
    return area <= 16 ? 0 : area <= 64 ? 1 : 2;
}
static inline int mmp_tx_sig_ctx(int size_class, int dg, const uint8_t *t)
{
    const int nz = (t[1] > 0) + (t[2] > 0) + (t[MMP_TX_PAD] > 0) + (t[2 * MMP_TX_PAD] > 0) +
                   (t[MMP_TX_PAD + 1] > 0);
    const int pc = dg == 0 ? 0 : dg <= 2 ? 1 : dg <= 5 ? 2 : 3;
    return (size_class * MMP_TX_POS_CLASSES + pc) * MMP_TX_SIG_NB +
           (nz < MMP_TX_SIG_NB ? nz : MMP_TX_SIG_NB - 1);
}
static inline int mmp_tx_mag_ctx(int size_class, int dg, const uint8_t *t)
{
    const int sum = t[1] + t[2] + t[MMP_TX_PAD] + t[2 * MMP_TX_PAD] + t[MMP_TX_PAD + 1];
    return ((size_class > 0) * 2 + (dg == 0)) * MMP_TX_MAG_NB +
           (sum == 0 ? 0 : sum <= 2 ? 1 : sum <= 5 ? 2 : 3);
}

/* The adaptive models of the transform residual, one set per plane. */
typedef struct mmp_tx_models {
    mmp_model rtype[MMP_NPSCALES]; /* 0: residual tree, 1: transform */
    mmp_model cbf[MMP_NPSCALES];   /* 0: every level zero */
    mmp_model last[MMP_NPSCALES];  /* the bit length of the last position */
    mmp_model sig[MMP_TX_SIG_CTX];
    mmp_model mag[MMP_TX_MAG_CTX]; /* min(|level| - 1, MMP_TX_ESCAPE) */
    mmp_model eg[MMP_TX_EG_CTX];   /* the escape's unary prefix, bin by bin */
} mmp_tx_models;

/* Their symbol costs in 1/256 bit (mmp_cost), frozen for a search step. */
typedef struct mmp_tx_costs {
    uint32_t rtype[MMP_NPSCALES][2];
    uint32_t cbf[MMP_NPSCALES][2];
    uint32_t last[MMP_NPSCALES][MMP_LOG2B * 2 + 1];
    uint32_t sig[MMP_TX_SIG_CTX][2];
    uint32_t mag[MMP_TX_MAG_CTX][MMP_TX_ESCAPE + 1];
    uint32_t eg[MMP_TX_EG_CTX][2];
} mmp_tx_costs;

void mmp_tx_models_init(mmp_tx_models *m);
void mmp_tx_costs_of(const mmp_tx_models *m, mmp_tx_costs *out);

/* The step of quantiser index qi (1 .. MMP_TX_MAX_QI) in 1/16 sample. */
int64_t mmp_tx_step_q4(int qi);

/*
 * The dequantisation step of a 2^a x 2^b leaf: step_q4 where a + b is even,
 * else (step_q4 * 181 + 64) >> 7, which carries the transform's missing
 * factor sqrt(2) (mmp_tx_inverse).
 */
int64_t mmp_tx_leaf_step(int64_t step_q4, int a, int b);

/*
 * The residual of a 2^a x 2^b leaf (2 <= a, b <= 4) from its levels
 * (row-major, row = vertical frequency): each level times the leaf's step,
 * clamped to +-2^31, through the inverse transforms of the columns and then
 * the rows, exact in 64 bits, rounded half up by 2^(16 + ceil((a + b) / 2))
 * and clamped to [-maxval, maxval]. res has row stride `stride`.
 */
void mmp_tx_inverse(const int32_t *level, int a, int b, int64_t step_q4, int32_t maxval,
                    int32_t *res, int stride);

/* The same one output row at a time, for an encoder that stops measuring a
 * candidate once its distortion so far already loses: begin, then
 * mmp_tx_inverse_row for any rows y (mmp_tx_inverse is begin, then every
 * row; each row's values are those of the whole transform). */
typedef struct mmp_tx_inv {
    int64_t d[MMP_B * MMP_B]; /* the dequantised levels */
    int rows[MMP_B], cols[MMP_B], nr, nc; /* the rows and columns of d that hold one, */
    int nce;                              /* the even columns first: nce of them */
    int a, b, shift;
    int64_t half;
    int32_t maxval;
} mmp_tx_inv;
void mmp_tx_inverse_begin(mmp_tx_inv *s, const int32_t *level, int a, int b, int64_t step_q4,
                          int32_t maxval);
void mmp_tx_inverse_row(const mmp_tx_inv *s, int y, int32_t *res);

/* The 16-point matrix; the N-point one is rows 0, 16/N, 2 * 16/N, ... and
 * its first N columns. */
extern const int8_t mmp_tx_matrix16[16][16];

/* The coefficient scan of a 2^a x 2^b leaf into scan[2^(a+b)]: scan[i] is
 * the row-major position of the i-th coefficient (up-right diagonals from
 * DC: diagonal y + x ascending, y descending within one). */
void mmp_tx_scan(int a, int b, uint16_t *scan);

/* Every leaf shape's scan, made once for a caller that codes or prices
 * many leaves. */
typedef struct mmp_tx_scans {
    uint16_t scan[MMP_LOG2B - MMP_LOG2_PMIN + 1][MMP_LOG2B - MMP_LOG2_PMIN + 1][MMP_B * MMP_B];
} mmp_tx_scans;
void mmp_tx_scans_init(mmp_tx_scans *s);
static inline const uint16_t *mmp_tx_scan_of(const mmp_tx_scans *s, int a, int b)
{
    return s->scan[a - MMP_LOG2_PMIN][b - MMP_LOG2_PMIN];
}

/*
 * The coefficient syntax of one leaf, in one of three directions: code the
 * levels (enc set), decode them (dec set) or return their cost in 1/256
 * bit under frozen costs (cost set, models unused). level is row-major
 * 2^a x 2^b; levels coded must lie within +-MMP_TX_MAX_LEVEL; scan is the
 * leaf's (mmp_tx_scan of a, b). Returns the cost (0 when coding).
 */
uint64_t mmp_tx_code_levels(mmp_tx_models *m, mmp_rc_enc *enc, mmp_rc_dec *dec,
                            const mmp_tx_costs *cost, int32_t *level, int a, int b,
                            const uint16_t *scan);

#endif
