/*
 * The residual stage of lossless and near-lossless files (docs/format.md
 * section 7.6): every sample of a plane is predicted, the difference
 * between the sample and its prediction quantised with the step 2N + 1
 * (N = the header's max_error; N = 0 codes it exactly) and coded with
 * adaptive context models, so that every decoded sample lies within N of
 * the input. The prediction reads the samples already refined (causal
 * neighbours) and, when the plane went through MMP first, the whole MMP
 * reconstruction ("base"). Encoder and decoder share one traversal.
 */
#ifndef MMP_MMP_REFINE_H
#define MMP_MMP_REFINE_H

#include <stdint.h>

#include "common/rangecoder.h"

/*
 * Code the w x h samples x (in [0, maxval]) against base (the plane's MMP
 * reconstruction, or NULL when the plane has no MMP stage); out receives
 * what the decoder rebuilds (|out - x| <= max_error everywhere). out must not
 * alias x or base. mix 1 codes the quantised differences with the mixing
 * coder (mmp/common/refine_mix.h; HEAD tools bit 2, format 1.2), 0 with the
 * count models of format 1.0. Returns 0 or MMP_ENOMEM.
 */
int mmp_refine_encode(mmp_rc_enc *e, const uint16_t *x, const uint16_t *base, uint16_t *out,
                      int w, int h, int maxval, int max_error, int mix);
/* The decoder's side: out from base and the payload; MMP_EBITSTREAM when the
 * payload ends first, MMP_ENOMEM. */
int mmp_refine_decode(mmp_rc_dec *d, const uint16_t *base, uint16_t *out, int w, int h,
                      int maxval, int max_error, int mix);

#endif
