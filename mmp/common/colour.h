/*
 * The planes of an image (docs/format.md section 7): how many the header
 * announces, their sizes and sample ranges, the colour transform between
 * them and the image's channels, and the chroma resampling. The inverse
 * direction (planes to image) is normative and shared by the decoder and the
 * encoder's reconstruction; the forward one is the encoder's.
 */
#ifndef MMP_MMP_COLOUR_H
#define MMP_MMP_COLOUR_H

#include <stdint.h>

#include "common/container.h"
#include "mmp/mmp.h"

#define MMP_MAX_PLANES 4

typedef struct mmp_layout {
    int nplanes;                 /* coded planes, alpha included (the header's planes) */
    int ncolour;                 /* 1 grey or 3 colour planes first */
    int alpha;                   /* MMP_ALPHA_*: how the last plane is coded */
    int transform, chroma;       /* MMP_TRANSFORM_*, MMP_CHROMA_* */
    int width, height, maxval;   /* of the image */
    int w[MMP_MAX_PLANES], h[MMP_MAX_PLANES], maxv[MMP_MAX_PLANES];
} mmp_layout;

/* The layout a valid header describes. */
void mmp_layout_of(const mmp_header *h, mmp_layout *l);

/* A reversible colour transform's order (MMP_TRANSFORM_RCT + 7 * order +
 * type, docs/format.md 7.2; mmp_is_rct in common/container.h): the indices
 * of the channels (R 0, G 1, B 2) taken as A, B and C. */
const uint8_t *mmp_rct_order(int transform);

/* A reversible colour transform of one pixel: rgb[] in [0, m] to the three
 * planes' samples (a difference offset by m, in [0, 2m]). */
void mmp_rct_forward(int transform, int m, const int rgb[3], int planes[3]);

/* The image's channels: planes, in the image's order (grey or RGB, then alpha). */
static inline int mmp_layout_channels(const mmp_layout *l)
{
    return l->nplanes;
}

/*
 * The encoder's planes of img (same channels as the layout): the forward
 * transform at full resolution, then for 4:2:0 the chroma planes averaged
 * over 2 x 2 pixels (section 9). planes[p] must hold w[p] * h[p] samples.
 */
void mmp_planes_from_image(const mmp_layout *l, const mmp_image *img, uint16_t *const planes[]);

/*
 * The normative output (section 7): chroma upsampled, the inverse transform,
 * alpha copied. img must be allocated with the layout's size and channels.
 */
void mmp_image_from_planes(const mmp_layout *l, const uint16_t *const planes[], mmp_image *img);

/* The same into pix, interleaved, its rows `stride` pixels apart (a tile
 * written into its place in the whole image). */
void mmp_planes_to_pixels(const mmp_layout *l, const uint16_t *const planes[], uint16_t *pix,
                          long stride);

/* How much an error of one sample of plane p weighs in the RGB squared
 * error, per sample of the plane (the encoder's chroma lambda). */
double mmp_plane_weight(const mmp_layout *l, int p);

/* Whether plane p has a luma reference: the chroma planes of a colour
 * image (docs/format.md 7.1). */
static inline int mmp_layout_has_cfl(const mmp_layout *l, int p)
{
    return l->ncolour == 3 && (p == 1 || p == 2);
}

/*
 * The luma reference of plane p (docs/format.md 7.1) for its padded
 * pw x ph reconstruction, from the decoded luma plane (width x height):
 * at each chroma sample, clamped to the plane, the mean of its pixels'
 * luma (4:2:0: those of its 2 x 2 inside the image), halves rounded up.
 * NULL when p has none, or out of memory; the caller frees it.
 */
int32_t *mmp_cfl_reference(const mmp_layout *l, int p, const uint16_t *luma, int pw, int ph);

#endif
