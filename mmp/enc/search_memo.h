/*
 * The search's memo of leaf matches and leaf results (encoder only).
 *
 * Within a block, the same prediction leaf is evaluated once per path of the
 * prediction tree that reaches it, often with the very same prediction. The
 * engine's matches depend only on (leaf, prediction), so they are kept per
 * (leaf, mode) for the block and reused when the prediction repeats: an
 * exact memo, not an approximation. Whether a lookup hits depends on the
 * schedule; the matches it returns do not.
 */
#ifndef MMP_MMP_SEARCH_MEMO_H
#define MMP_MMP_SEARCH_MEMO_H

#include <stdint.h>

#include "kernels/engine.h"
#include "predict/predict.h"

typedef struct mmp_memo mmp_memo;

/* Returns 0 or MMP_ENOMEM. */
int mmp_memo_create(mmp_memo **out);
void mmp_memo_destroy(mmp_memo *m);

/* Forget every entry: a new block (other leaves, and maybe a new step's
 * dictionary and rates). Each block searched at once has its own memo. */
void mmp_memo_clear(mmp_memo *m);

/* The engine that computes what the memo lacks, with the step's tables. */
typedef struct mmp_memo_engine {
    const mmp_engine_ops *eng;
    void *es;
    const mmp_search_tables *tab;
} mmp_memo_engine;

/* Room a caller lends to mmp_memo_matches for the modes it computes. */
typedef struct mmp_memo_scratch {
    int32_t pred[MMP_NUM_MODES * MMP_PRED_MAX * MMP_PRED_MAX];
    mmp_match res[MMP_NUM_MODES * ((2 << MMP_LOG2B) - 1) * ((2 << MMP_LOG2B) - 1)];
} mmp_memo_scratch;

/*
 * The matches of the modes in `modes` (bit m: mode m) of the prediction leaf
 * (y0, x0, 2^a x 2^b) of the current block: pred holds the MMP_NUM_MODES
 * predictions one after another, orig the leaf's original samples, real its
 * mask of real pixels (or NULL). matches receives mmp_match_count(a, b)
 * results for each mode asked for, at mode * mmp_match_count(a, b); the
 * others' places are left as they are. Modes found
 * in the memo are copied; the others go to the engine in one call and are
 * kept; modes that another thread is computing are waited for (helping the
 * engine meanwhile when it can be helped). *hits counts the modes that came
 * from the memo. work (unless NULL) runs at most once, on this thread,
 * with work_arg: while the engine computes, with an engine that can be
 * called in two halves (submit, wait) and a mode to compute; else not at
 * all (the caller does it after). Returns 0 or the engine's error.
 */
int mmp_memo_matches(mmp_memo *m, const mmp_memo_engine *e, int y0, int x0, int a, int b,
                     unsigned modes, const int32_t *orig, const int32_t *pred,
                     const uint8_t *real, mmp_memo_scratch *x, mmp_match *matches,
                     uint64_t *hits, void (*work)(void *), void *work_arg);

/* The hash that finds an entry before its samples are compared (FNV-1a of
 * n samples): the comparison decides, so two blocks of one hash are still
 * told apart (tests/test_search_memo.c makes such pairs). */
uint32_t mmp_memo_hash(const int32_t *p, int n);

/*
 * A leaf's whole result, kept per leaf of the block as well: where a leaf is
 * reached again with the very same predictions of every mode (pred, nm of
 * them) and the same angular direction, everything the search decides for
 * it (its cost, its tokens, its reconstruction) is the same, since it
 * depends on those, the leaf's original samples and the step's frozen
 * tables alone. mmp_memo_leaf_get copies a kept result into j, tok (ntok
 * tokens) and rec and returns 1, or returns 0; either way *hash is the
 * predictions' hash, which mmp_memo_leaf_put takes back with the result to
 * keep (one of more than MMP_MEMO_LEAF_TOKENS(area) tokens is not kept).
 */
#define MMP_MEMO_LEAF_TOKENS(area) (4 * (area) + 32)
int mmp_memo_leaf_get(mmp_memo *m, int y0, int x0, int a, int b, int angle, int nm,
                      const int32_t *pred, uint32_t *hash, int64_t *j, int32_t *tok, int *ntok,
                      int32_t *rec);
void mmp_memo_leaf_put(mmp_memo *m, int y0, int x0, int a, int b, int angle, int nm,
                       const int32_t *pred, uint32_t hash, int64_t j, const int32_t *tok,
                       int ntok, const int32_t *rec);

#endif
