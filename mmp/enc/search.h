/*
 * The encoder's rate-distortion search of one B x B block: the prediction
 * tree, the modes and the residual trees under
 * J = (D << 16) + lambda_q8 * R_q8, with the engine computing the best
 * dictionary element of every residual sub-block: exhaustively at speed 0,
 * pruned at higher speeds (mmp_search_speed). Every pruning decision is a
 * function of the original, the reconstruction around the leaf and the
 * step's tables alone, made here and never in an engine, so every engine
 * writes the same bytes at every speed; the bitstream is the same format
 * whatever the speed.
 */
#ifndef MMP_MMP_SEARCH_H
#define MMP_MMP_SEARCH_H

#include <stdint.h>

#include "common/log.h"
#include "kernels/engine.h"
#include "mmp/common/syntax.h"

/* Upper bound on the tokens of one block. */
#define MMP_MAX_BLOCK_TOKENS (4 * MMP_B * MMP_B + 64)

typedef struct mmp_search mmp_search;

/* The fastest preset: speeds run from 0 (exhaustive) to this. */
#define MMP_SEARCH_MAX_SPEED 10

/* What a speed preset prunes. */
typedef struct mmp_search_speed {
    int modes;      /* prediction modes of a leaf given to the engine: the best by an
                     * estimate (SATD of the residual plus sqrt(lambda) times the mode's
                     * bits); MMP_NUM_MODES: every mode, exhaustively */
    int tx_modes;   /* where the plane has the transform residual, the modes priced
                     * with it: the best tx_modes (at least `modes`) by the same
                     * estimate; the host's work, far cheaper than the engine's */
    int no_narrow;  /* 1: no prediction leaf more than twice as long as it is wide or
                     * high (no 16x4 or 4x16), that is no split into one */
    int tx_skip;    /* 1: no engine search for a leaf whose best transform residual
                     * has no coefficient (the prediction alone is good enough), as
                     * video encoders stop at a coded-block flag of 0 */
    int rdoq_only;  /* 1: the transform tries its RDOQ levels (and none) only */
    int dict_cap;   /* the dictionary's elements per scale where the settings give none
                     * (mmp_settings.dict_cap 0) */
    int min_log2;   /* the smallest side of a prediction leaf, log2 (MMP_LOG2_PMIN: any) */
    int dir_step;   /* the angular mode tries every dir_step-th direction (1: all) */
    int no_lsp;     /* 1: the least-squares mode is never tried */
    int square;     /* 1: square prediction leaves only (16x16, 8x8, 4x4): an oblong node
                     * always splits into two squares */
    int fit_rounds; /* the restoration fit's rounds (mmp_restore_fit_rounds) */
} mmp_search_speed;

/* The pruning of preset `speed`, 0 .. MMP_SEARCH_MAX_SPEED. */
void mmp_search_speed_preset(int speed, mmp_search_speed *out);

/*
 * orig: the padded original (plane-sized, row-major). The search reads and
 * writes c->plane (trial reconstructions) and reads the rest of `c`. speed:
 * the preset, 0 .. MMP_SEARCH_MAX_SPEED. With verbose set, the memo's
 * figures go to log (MMP_LOG_INFO) at the end.
 */
int mmp_search_create(mmp_search **out, mmp_codec *c, const int32_t *orig,
                      const mmp_engine_ops *eng, void *eng_state, int64_t lambda_q8, int speed,
                      const mmp_logger *log, int verbose);
void mmp_search_destroy(mmp_search *s);

/*
 * Search the n blocks of step `step` (block indices by * bw + bx, bw the
 * padded plane's width in blocks): the tokens of block k for
 * mmp_code_block in tok[k * MMP_MAX_BLOCK_TOKENS ..] (ntok[k] of them). All
 * blocks see the dictionary, the rates and the plane as they are now; the
 * plane holds their chosen reconstructions afterwards.
 */
int mmp_search_step(mmp_search *s, int step, const int32_t *blocks, int n, int32_t *tok,
                    int *ntok);

#endif
