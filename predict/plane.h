/*
 * The reconstruction plane that the predictors read: the samples the decoder
 * has rebuilt so far, with an optional overlay for the encoder's trial
 * reconstructions. Used by predict.c and lsp.c alike.
 */
#ifndef MMP_PREDICT_PLANE_H
#define MMP_PREDICT_PLANE_H

#include <stddef.h>
#include <stdint.h>

/* Largest prediction block side. */
#define MMP_PRED_MAX 16

/* Side of the overlay window of a plane (the block size). */
#define MMP_PLANE_OV 16

/*
 * The reconstruction plane as the decoder has it at a given moment. The plane
 * covers the padded image (width, height multiples of the block size).
 *
 * The encoder's search tries several reconstructions of one block at once,
 * each in its own overlay: an MMP_PLANE_OV x MMP_PLANE_OV window at (ov_y,
 * ov_x) whose samples and flags the predictors read instead of those of pix
 * and avail. The decoder has no overlay (ov_pix NULL).
 */
typedef struct mmp_plane {
    int32_t *pix;    /* width*height samples, row-major */
    uint8_t *avail;  /* width*height flags: 1 = already reconstructed */
    int width, height;
    int maxval;
    const int32_t *ov_pix;  /* NULL, or the window's samples, row-major */
    const uint8_t *ov_avail;
    int ov_y, ov_x;
    /* NULL, or the co-located luma reference of a chroma plane: width*height
     * samples, row-major, all of them usable (docs/format.md 6, mode 11). */
    const int32_t *cfl;
} mmp_plane;

/* Sample (y, x) as the predictors see it: 1 and *v when it lies inside the
 * plane and is reconstructed, else 0 (and *v untouched). */
static inline int mmp_plane_get(const mmp_plane *p, int y, int x, int32_t *v)
{
    if ((unsigned)y >= (unsigned)p->height || (unsigned)x >= (unsigned)p->width)
        return 0;
    if (p->ov_pix && (unsigned)(y - p->ov_y) < MMP_PLANE_OV &&
        (unsigned)(x - p->ov_x) < MMP_PLANE_OV) {
        const int o = (y - p->ov_y) * MMP_PLANE_OV + (x - p->ov_x);
        if (!p->ov_avail[o])
            return 0;
        *v = p->ov_pix[o];
        return 1;
    }
    const size_t o = (size_t)y * p->width + x;
    if (!p->avail[o])
        return 0;
    *v = p->pix[o];
    return 1;
}

#endif
