/*
 * The encoder's choice of a reversible colour transform for a lossless
 * colour image (docs/format.md 7.2, format 1.4; section 9): the one of the
 * 42 whose three planes an estimate finds the cheapest. Not normative: any
 * choice decodes.
 */
#ifndef MMP_ENC_RCT_CHOICE_H
#define MMP_ENC_RCT_CHOICE_H

#include "mmp/mmp.h"

/* The header's transform for img, an image of 3 or 4 channels of maxval up
 * to 32767: MMP_TRANSFORM_RCT + 7 * permutation + type, or MMP_TRANSFORM_RGB
 * and MMP_TRANSFORM_YCOCG_R for the two transforms of the 42 that they are
 * (a file a decoder of format 1.3 reads). */
int mmp_rct_choose(const mmp_image *img);

#endif
