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
#include "mmp/common/colour.h"

/* The coding tools of the stage (a file's HEAD tools bits 2 and 3): the
 * mixing coder (mmp/common/refine_mix.h, format 1.2) instead of the count
 * models of format 1.0, and with it the residual context (format 1.3). */
#define MMP_REFINE_MIX 1
#define MMP_REFINE_CONTEXT 2

/* The MMP_REFINE_* bits of a file whose HEAD has these tools bits. */
int mmp_refine_tools(uint32_t head_tools);

/* Plane p's guide (docs/format.md 7.6): planes[p - 1], the plane coded
 * before it, when there is one of the same size; NULL otherwise. */
const uint16_t *mmp_refine_guide(const mmp_layout *l, uint16_t *const *planes, int p);

/*
 * Code the w x h samples x (in [0, maxval]) against base (the plane's MMP
 * reconstruction, or NULL when the plane has no MMP stage); out receives
 * what the decoder rebuilds (|out - x| <= max_error everywhere). out must not
 * alias x or base. guide: the decoded samples of the plane coded before this
 * one when it has the same size, or NULL (the residual context reads it).
 * tools: MMP_REFINE_* bits; MMP_REFINE_CONTEXT counts only with
 * MMP_REFINE_MIX. Returns 0 or MMP_ENOMEM.
 */
int mmp_refine_encode(mmp_rc_enc *e, const uint16_t *x, const uint16_t *base,
                      const uint16_t *guide, uint16_t *out, int w, int h, int maxval,
                      int max_error, int tools);
/* The decoder's side: out from base and the payload; MMP_EBITSTREAM when the
 * payload ends first, MMP_ENOMEM. */
int mmp_refine_decode(mmp_rc_dec *d, const uint16_t *base, const uint16_t *guide, uint16_t *out,
                      int w, int h, int maxval, int max_error, int tools);

#endif
