/*
 * Least-squares prediction (LSP), internal to predict/. The public entry is
 * mmp_predict(..., MMP_PRED_LSP, ...); this header exists so that predict.c
 * can hand over the DC value it has already computed, and so that tests can
 * see whether the least-squares solve was used or the DC fallback.
 *
 * Normative: docs/format.md section 6, "Mode 9: LSP", describes every step.
 */
#ifndef MMP_PREDICT_LSP_H
#define MMP_PREDICT_LSP_H

#include <stdint.h>

#include "predict/plane.h"

/* Number of causal neighbours in the LSP support: W, N, NW, NE, WW, NN. */
#define MMP_LSP_ORDER 6
/* Training window reaches this many pixels above, left and right of the block. */
#define MMP_LSP_MARGIN 6
/* Fewer training samples than this: DC fallback. */
#define MMP_LSP_MIN_SAMPLES 12

/*
 * Predict block (y0, x0, h, w) into out[h*w]. `dc` is the block's DC
 * prediction (rule "DC" of docs/format.md section 6), used both as the fallback and
 * to substitute missing support samples. Returns 1 if the least-squares
 * predictor was used, 0 if out[] was filled with dc (fallback).
 */
int mmp_lsp_predict(const mmp_plane *p, int y0, int x0, int h, int w, int32_t dc, int32_t *out);

#endif
