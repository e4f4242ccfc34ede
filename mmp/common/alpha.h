/*
 * The exact coding of an alpha plane (docs/format.md section 7.4): each
 * sample predicted from its left, top and top-left neighbours and the
 * difference coded with adaptive models, so the decoder gets every sample
 * back as it was. Encoder and decoder share the contexts below.
 */
#ifndef MMP_MMP_ALPHA_H
#define MMP_MMP_ALPHA_H

#include <stdint.h>

#include "common/rangecoder.h"

/* Code the w x h samples of a (each in [0, maxval]). Returns 0 or MMP_ENOMEM. */
int mmp_alpha_encode(mmp_rc_enc *e, const uint16_t *a, int w, int h, int maxval);
/* Decode them into a; MMP_EBITSTREAM when a sample falls outside [0, maxval]
 * or the payload ends first. */
int mmp_alpha_decode(mmp_rc_dec *d, uint16_t *a, int w, int h, int maxval);

#endif
