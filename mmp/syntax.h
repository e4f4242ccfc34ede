/*
 * The block syntax, shared by the encoder and the decoder: the state both
 * sides keep (dictionary, adaptive models, reconstruction plane) and the one
 * traversal of a block's trees that codes or decodes its symbols,
 * reconstructs it and collects its dictionary updates.
 */
#ifndef MMP_MMP_SYNTAX_H
#define MMP_MMP_SYNTAX_H

#include <stdint.h>

#include "common/rangecoder.h"
#include "common/scales.h"
#include "dict/dict.h"
#include "predict/predict.h"

typedef struct mmp_models {
    mmp_model pflag[MMP_NPSCALES];   /* prediction-tree flags per prediction scale */
    mmp_model mode[MMP_NPSCALES];    /* prediction modes per prediction scale */
    mmp_model rflag[MMP_NSCALES];    /* residual-tree flags per scale (1x1 unused) */
    mmp_imodel idx[MMP_NSCALES];     /* dictionary indices per scale */
} mmp_models;

/* At most this many split residual nodes (new patterns) per block. */
#define MMP_MAX_UPDATES (MMP_B * MMP_B)

typedef struct mmp_codec {
    mmp_dict dict;
    mmp_models models;
    mmp_plane plane;          /* padded reconstruction */
    int width, height;        /* real image size */
    int maxval;
    int32_t *upd;             /* pending patterns of the current block, MMP_B*MMP_B each */
    uint8_t upd_a[MMP_MAX_UPDATES], upd_b[MMP_MAX_UPDATES];
    int nupd;
    int threads;              /* for mmp_apply_updates: 1 one, 0 all cores, N N (default 0) */
} mmp_codec;

/* Returns 0 or a negative MMP_E* code (nothing to free on error). */
int mmp_codec_init(mmp_codec *c, int width, int height, int maxval, int dict_cap,
                   uint32_t redund_q4);
void mmp_codec_free(mmp_codec *c);

/* Where the symbols of a block come from and go to. Encoding takes them from
 * tok[] (one token per decision, in traversal order, forced ones included)
 * and codes them; decoding reads them from the range decoder. */
typedef struct mmp_symbols {
    int encoding;
    mmp_rc_enc *enc;
    mmp_rc_dec *dec;
    const int32_t *tok;
    int ntok, pos;
} mmp_symbols;

/* Number of symbols of the flag of node 2^a x 2^b whose halves must stay at
 * least 2^amin x 2^bmin. Symbol order: leaf, split H (if allowed), split V. */
static inline int mmp_flag_nsyms(int a, int b, int amin)
{
    return 1 + (a > amin) + (b > amin);
}

/*
 * Code (or decode) block (by, bx) in block units: symbols, reconstruction
 * into c->plane, pending updates into c->upd. Returns 0 or a negative code.
 */
int mmp_code_block(mmp_codec *c, mmp_symbols *io, int by, int bx);

/* Apply the pending updates of the block in order, then let the index
 * models follow the dictionary's growth. */
void mmp_apply_updates(mmp_codec *c);

/* Reconstruct: clip(pred + pattern) into out (n samples). */
static inline void mmp_reconstruct(const int32_t *pred, const int32_t *pat, int n, int32_t maxval,
                                   int32_t *out)
{
    for (int i = 0; i < n; i++) {
        int32_t v = pred[i] + pat[i];
        out[i] = v < 0 ? 0 : v > maxval ? maxval : v;
    }
}

#endif
