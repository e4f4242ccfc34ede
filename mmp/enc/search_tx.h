/*
 * The encoder's side of the transform residual (mmp/common/transform.h): for a
 * prediction leaf and one prediction, the levels of least cost
 * J = (D << 16) + lambda_q8 * R under the step's frozen rates. A function of
 * the leaf's samples, the prediction and the frozen tables alone, so every
 * engine and thread count makes the same choice.
 */
#ifndef MMP_MMP_SEARCH_TX_H
#define MMP_MMP_SEARCH_TX_H

#include <stdint.h>

#include "mmp/common/transform.h"

typedef struct mmp_tx_search {
    const mmp_tx_costs *cost; /* frozen at the start of the step */
    const mmp_tx_scans *scans; /* mmp_tx_scans_init's */
    int64_t lambda_q8;
    int64_t step_q4;          /* the plane's quantiser step */
    int32_t maxval;
    int rdoq_only;            /* 1: try the RDOQ levels and no coefficient only, not the
                               * plain roundings too (a speed preset's pruning) */
} mmp_tx_search;

/* F = T_h r T_w^T for the 2^a x 2^b residual r (row-major; T the n-point
 * matrices of mmp_tx_matrix16, 2 <= a, b <= 4), exactly: |r| < 2^17 gives
 * |F| < 2^17 * 1440^2 < 2^39. The encoder's forward transform: it only
 * proposes levels, which the search prices through the normative inverse. */
void mmp_tx_forward(const int32_t *r, int a, int b, int64_t *f);

/* A sum of squared residual samples of a 2^a x 2^b leaf below which every
 * coefficient F of mmp_tx_forward has 2 |F| below the level's unit: every
 * level any quantiser offset or RDOQ gives is zero, without the transform. */
int64_t mmp_tx_zero_sse(int64_t step_q4, int a, int b);

/* The cost in 1/256 bit of a leaf's levels that mmp_tx_code_levels gives
 * under costs c (cost set), where it is at most `most`; otherwise some value
 * above `most`, found without the rest of the leaf: the search needs no
 * more of a candidate whose rate alone loses. last is the scan index of the
 * last level not zero (-1: none), which the search knows. */
uint64_t mmp_tx_rate(const mmp_tx_costs *c, const int32_t *level, int a, int b,
                     const uint16_t *scan, int last, uint64_t most);

/* The quantiser index for a plane searched at lambda_q8 (on the plane's
 * sample scale): a step of 3.9 * sqrt(lambda) (search_tx.c). */
int mmp_tx_qi_for_lambda(int64_t lambda_q8);

/*
 * Best levels of the 2^a x 2^b leaf with original orig and prediction pred
 * (row-major; real: the pixels inside the image, NULL all): returns J of the
 * coefficients (distortion over the real pixels, rate of the coefficient
 * syntax, not of the residual-type symbol), the levels into level and the
 * decoded residual (row-major, what mmp_tx_inverse gives) into res. A J of
 * limit or more is not needed exactly: then the return is some value of at
 * least limit and level and res are left as they are (INT64_MAX: always
 * exact), which spares the candidates whose rate alone reaches it.
 */
int64_t mmp_tx_search_leaf(const mmp_tx_search *t, const int32_t *orig, const int32_t *pred,
                           const uint8_t *real, int a, int b, int64_t limit, int32_t *level,
                           int32_t *res);

/*
 * The transform residual of a leaf's predictions of modes order[0 .. n-1]
 * (the prediction of mode m at pred + m * 2^(a + b)), priced in that order:
 * J of mode m, its coefficients' J plus head[m] (the bits around them, in
 * J units), into jtx[m]. Returns the first mode (in mode order) of least J,
 * whose levels and residual go to best_level and best_res; level and res
 * are working room of 2^(a + b) entries each.
 *
 * A mode m's exact J is needed only if it can beat the best so far, b:
 * (J_m, m) must come before (J_b, b), comparing J first and then the mode.
 * Pricing the likely winner first therefore spares work (the others are
 * priced under its bound, mmp_tx_search_leaf's limit), and a mode that
 * cannot win gets in jtx[m] some value with (jtx[m], m) after (J_b, b),
 * not its exact J: a value that loses to b, which loses to whatever beats
 * b. The order changes neither the mode returned nor its levels, nor any
 * first-of-least choice that includes these J.
 *
 * A rival (rival_mode >= 0) is an option priced already that comes just
 * before the transform of its own mode: the dictionary's best residual,
 * (rival_j, rival_mode). A mode that cannot beat the rival either is priced
 * under the rival's bound too, and gets some value that loses to the
 * rival. So when the rival wins, the mode returned and its levels mean
 * nothing; when a transform wins, they are the ones pricing everything
 * exactly gives. Compare jtx of the mode returned with the rival (the tree
 * of mode d before the transform of mode d) to tell.
 */
int mmp_tx_price_modes(const mmp_tx_search *t, const int32_t *orig, const int32_t *pred,
                       const uint8_t *real, int a, int b, const int *order, int n,
                       const int64_t *head, int64_t rival_j, int rival_mode, int32_t *level,
                       int32_t *res, int32_t *best_level, int32_t *best_res, int64_t *jtx);

#endif
