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
#include "mmp/enc/search_speed.h"

/* Upper bound on the tokens of one block. */
#define MMP_MAX_BLOCK_TOKENS (4 * MMP_B * MMP_B + 64)

typedef struct mmp_search mmp_search;

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
