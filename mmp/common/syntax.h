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
#include "filter/deblock.h"
#include "mmp/common/transform.h"
#include "predict/predict.h"

/* An angular leaf's direction d is coded as d / MMP_ANGLE_GROUP, then
 * d % MMP_ANGLE_GROUP with a model per group; the models' alphabets. */
#define MMP_ANGLE_GROUP 8
#define MMP_ANGLE_HI_SYMS ((MMP_NUM_ANGLES + MMP_ANGLE_GROUP - 1) / MMP_ANGLE_GROUP)
static inline int mmp_angle_lo_syms(int hi)
{
    const int left = MMP_NUM_ANGLES - MMP_ANGLE_GROUP * hi;
    return left < MMP_ANGLE_GROUP ? left : MMP_ANGLE_GROUP;
}

typedef struct mmp_models {
    mmp_model pflag[MMP_NPSCALES];   /* prediction-tree flags per prediction scale */
    mmp_model mode[MMP_NPSCALES];    /* prediction modes per prediction scale */
    mmp_model angle_hi;              /* an angular leaf's direction / 8 */
    mmp_model angle_lo[MMP_ANGLE_HI_SYMS]; /* its direction % 8, per direction / 8 */
    mmp_model rflag[MMP_NSCALES];    /* residual-tree flags per scale (1x1 unused) */
    mmp_imodel idx[MMP_NSCALES];     /* dictionary indices per scale */
    mmp_tx_models tx;                /* the transform residual (when tx_qi > 0) */
} mmp_models;

/* At most this many split residual nodes (new patterns) per block: the
 * split nodes of a leaf's residual tree are at most its area less one. */
#define MMP_MAX_UPDATES (MMP_B * MMP_B)
/* At most this many samples in the new patterns of one block: the split
 * nodes at one depth of a leaf's residual tree cover at most the leaf, and
 * there are at most 2 * (MMP_LOG2B) depths of splits. */
#define MMP_MAX_UPDATE_SAMPLES (2 * MMP_LOG2B * MMP_B * MMP_B)
/* At most this many prediction leaves per block (all of the smallest size). */
#define MMP_MAX_LEAVES ((MMP_B >> MMP_LOG2_PMIN) * (MMP_B >> MMP_LOG2_PMIN))

/* The deblocking filter's units across a block. */
#define MMP_B_UNITS (MMP_B >> MMP_DB_LOG2_UNIT)
/* One prediction leaf of a block: position in the block, size, mode and,
 * for MMP_PRED_ANG, direction. */
typedef struct mmp_leaf {
    uint8_t y, x, a, b, mode, angle;
} mmp_leaf;

/* A block's syntax, as coded: its leaves in coding order and its residual
 * (the dictionary patterns of every leaf in place, row stride MMP_B). What
 * it reconstructs depends on the pixels around it; the syntax does not. */
typedef struct mmp_block {
    int nleaves;
    mmp_leaf leaf[MMP_MAX_LEAVES];
    int32_t res[MMP_B * MMP_B];
    /* Its part of the plane's edge map (filter/deblock.h), unit by unit in
     * raster order: where its coding leaves meet, and their sizes. */
    uint8_t edge_flags[MMP_B_UNITS * MMP_B_UNITS];
    uint8_t edge_size[MMP_B_UNITS * MMP_B_UNITS];
} mmp_block;

/* The decoder's log of deferred updates (mmp_codec_defer): the new patterns
 * of the steps so far, repeats left out, as in mmp_codec's queue, with the
 * patterns logged by each step's end and the steps each scale has had. */
typedef struct mmp_update_log {
    int32_t *samples;
    long len, room;
    int *off;
    uint8_t *a, *b;
    int n, cap;
    int *step_end;
    int nsteps, step_cap;
    int done[MMP_NSCALES];
} mmp_update_log;

typedef struct mmp_codec {
    mmp_dict dict;
    mmp_models models;
    mmp_plane plane;          /* padded reconstruction */
    int width, height;        /* real image size */
    int maxval;
    int plane_index;          /* which plane of the image (0 first; set by the caller) */
    /* The new patterns of the current step, in coding order, packed: pattern
     * i is 2^upd_a[i] x 2^upd_b[i] samples at upd + upd_off[i]. */
    int32_t *upd;
    int *upd_off;
    uint8_t *upd_a, *upd_b;
    uint8_t *upd_repeat;      /* 1: a repeat of an earlier pattern (mmp_dict_repeat), skipped */
    int nupd, upd_cap;        /* patterns queued, room for */
    long upd_len, upd_room;   /* samples queued, room for */
    int defer;                /* 1: updates wait in log (mmp_codec_defer) */
    mmp_update_log log;
    int threads;              /* the encoder's threads for a step's updates and checks
                               * (mmp/enc/encoder.c): 1 one, 0 all cores, N N (default 0) */
    /* The transform residual (docs/format.md 4.4): the plane's quantiser
     * index (0: none, and no residual-type symbol) and its step in 1/16,
     * and the leaves' coefficient scans (made by mmp_codec_init; the
     * search's pricing reads them too). */
    int tx_qi;
    int64_t tx_step_q4;
    mmp_tx_scans tx_scans;
    /* Where the coding leaves meet (the deblocking filter's map), kept by
     * mmp_reconstruct_block once mmp_codec_set_deblock has made it. */
    mmp_edges edges;
} mmp_codec;

/* step_blocks: the most blocks of one step (mmp_order.max_step), whose new
 * patterns wait together. Returns 0 or a negative MMP_E* code (nothing to
 * free on error). */
int mmp_codec_init(mmp_codec *c, int width, int height, int maxval, int dict_cap,
                   uint32_t redund_q4, int step_blocks);
void mmp_codec_free(mmp_codec *c);

/* Give a chroma plane its luma reference (docs/format.md 7.1): the CfL mode
 * becomes available and the mode models get its symbol. Before the first
 * block; luma_ref (plane.width * plane.height samples) stays the caller's
 * and must outlive the codec's use of it. */
void mmp_codec_set_cfl(mmp_codec *c, const int32_t *luma_ref);

/* Switch the plane's transform residual on (qi 1 .. MMP_TX_MAX_QI) or off
 * (0), before its first block. */
void mmp_codec_set_transform(mmp_codec *c, int qi);

/* Keep the plane's edge map (filter/deblock.h), from its first block on.
 * Returns 0 or MMP_ENOMEM. */
int mmp_codec_set_deblock(mmp_codec *c);
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
 * Code (or decode) the symbols of one block into *blk, and queue its new
 * patterns after those of the step's earlier blocks. Nothing here reads the
 * reconstruction, so neither does where the block is. Returns 0 or a
 * negative code.
 */
int mmp_code_block(mmp_codec *c, mmp_symbols *io, mmp_block *blk);

/* Reconstruct block (by, bx) (block units) from its syntax into c->plane, leaf by leaf
 * (each leaf predicted from the plane as it is, its pixels then marked
 * available). */
void mmp_reconstruct_block(mmp_codec *c, int by, int bx, const mmp_block *blk);

/* Apply the queued patterns of the step in order, then let the index models
 * follow the dictionary's growth, on this thread. */
void mmp_apply_updates(mmp_codec *c);

/*
 * From now on mmp_apply_updates logs the step's patterns instead, and a
 * scale gets its share of them, step by step with its index model's growth
 * after each, just before a leaf of that scale is decoded: the same
 * dictionary and models at every leaf, and a scale that no leaf reads
 * again (often the large ones, most of the work) is never updated. For
 * the decoder, which reads the dictionary only at its leaves; the log
 * holds at most a few megabytes, and when full is applied to every scale.
 * Not with mmp_updates_begin/job/end.
 */
void mmp_codec_defer(mmp_codec *c);

/* The same in three parts, for callers that schedule the jobs themselves:
 * begin (the repeats, in list order), then mmp_updates_job for each j in
 * 0 .. MMP_NLOG - 1, in any order and concurrently, then end. Nothing else
 * may change the dictionary or the queued patterns meanwhile. Job j updates
 * the scales of width 2^(MMP_LOG2B - j) and touches no other scale; the
 * widest, whose work is the largest, is job 0. codec is the mmp_codec (a
 * crew's job, common/crew.h). */
void mmp_updates_begin(mmp_codec *c);
void mmp_updates_job(void *codec, int j);
void mmp_updates_end(mmp_codec *c);

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
