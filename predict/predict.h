/*
 * Intra prediction of rectangular blocks (h x w, each a power of two from 4 to
 * 16) from the reconstructed causal neighbourhood: the nine H.264 intra modes
 * generalised to rectangles, least-squares prediction (LSP), and for chroma
 * planes a linear prediction from the co-located luma (CfL).
 *
 * Normative: encoder and decoder call these same functions; docs/format.md
 * gives the formulas. Only pixels with avail[] set are read; the rest are
 * substituted by the rule in docs/format.md.
 */
#ifndef MMP_PREDICT_PREDICT_H
#define MMP_PREDICT_PREDICT_H

#include <stdint.h>

#include "predict/plane.h"

enum {
    MMP_PRED_V = 0,  /* vertical */
    MMP_PRED_H,      /* horizontal */
    MMP_PRED_DC,
    MMP_PRED_DDL,    /* diagonal down-left */
    MMP_PRED_DDR,    /* diagonal down-right */
    MMP_PRED_VR,     /* vertical-right */
    MMP_PRED_HD,     /* horizontal-down */
    MMP_PRED_VL,     /* vertical-left */
    MMP_PRED_HU,     /* horizontal-up */
    MMP_PRED_LSP,    /* least-squares prediction */
    MMP_PRED_ANG,    /* angular: one of MMP_NUM_ANGLES directions, coded after the mode */
    MMP_PRED_CFL,    /* chroma from luma: only where the plane has a luma reference */
    MMP_NUM_MODES
};

/* The directions of MMP_PRED_ANG: HEVC's 33 angles less pure vertical and
 * pure horizontal, which modes 0 and 1 already are. */
#define MMP_NUM_ANGLES 31

/* The modes plane p may use: all of them where it has a luma reference,
 * else those before MMP_PRED_CFL. */
static inline int mmp_plane_modes(const mmp_plane *p)
{
    return p->cfl ? MMP_NUM_MODES : MMP_PRED_CFL;
}

/* Predict block (y0, x0, h, w) with `mode` into out[h*w] (row-major);
 * MMP_PRED_ANG gives angle 0 (mmp_predict_angle gives the others). */
void mmp_predict(const mmp_plane *p, int mode, int y0, int x0, int h, int w, int32_t *out);

/* Predict block (y0, x0, h, w) with mode MMP_PRED_ANG and direction `angle`
 * (0 .. MMP_NUM_ANGLES-1). */
void mmp_predict_angle(const mmp_plane *p, int angle, int y0, int x0, int h, int w,
                       int32_t *out);

/* All MMP_NUM_MODES predictions: out + mode*h*w (CfL without a luma
 * reference: the DC prediction; MMP_PRED_ANG: angle 0). Same results as
 * mmp_predict. With angles non-NULL, also every direction of MMP_PRED_ANG:
 * angles + angle*h*w, as mmp_predict_angle gives them. */
void mmp_predict_all(const mmp_plane *p, int y0, int x0, int h, int w, int32_t *out,
                     int32_t *angles);

/* As mmp_predict_all, but only the modes of mask `modes` (bit m: mode m) and
 * the directions of mask `dirs` (bit k: direction k; with angles non-NULL);
 * the others' places in out and angles are left as they were. */
void mmp_predict_some(const mmp_plane *p, int y0, int x0, int h, int w, unsigned modes,
                      uint32_t dirs, int32_t *out, int32_t *angles);

#endif
