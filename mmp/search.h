/*
 * The encoder's rate-distortion search of one B x B block: the prediction
 * tree, the modes and the residual trees, exhaustively under
 * J = (D << 16) + lambda_q8 * R_q8, with the engine computing the best
 * dictionary element of every residual sub-block.
 */
#ifndef MMP_MMP_SEARCH_H
#define MMP_MMP_SEARCH_H

#include <stdint.h>

#include "common/log.h"
#include "kernels/engine.h"
#include "mmp/syntax.h"

/* Upper bound on the tokens of one block. */
#define MMP_MAX_BLOCK_TOKENS (4 * MMP_B * MMP_B + 64)

typedef struct mmp_search mmp_search;

/*
 * orig: the padded original (plane-sized, row-major). The search reads and
 * writes c->plane (trial reconstructions) and reads the rest of `c`. With
 * verbose set, the memo's figures go to log (MMP_LOG_INFO) at the end.
 */
int mmp_search_create(mmp_search **out, mmp_codec *c, const int32_t *orig,
                      const mmp_engine_ops *eng, void *eng_state, int64_t lambda_q8,
                      const mmp_logger *log, int verbose);
void mmp_search_destroy(mmp_search *s);

/* Search block (by, bx): tokens for mmp_code_block in tok[0..*ntok). The
 * plane holds the block's chosen reconstruction afterwards. */
int mmp_search_block(mmp_search *s, int by, int bx, int32_t *tok, int *ntok);

#endif
