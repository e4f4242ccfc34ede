/*
 * The encoder's speed presets (mmp_settings.speed): what each prunes of the
 * search (mmp/enc/search.c), every rule a function of the block's samples,
 * its neighbours' reconstruction and the step's rates, so that every engine
 * writes the same bytes at a speed. The decoder never sees them.
 */
#ifndef MMP_ENC_SEARCH_SPEED_H
#define MMP_ENC_SEARCH_SPEED_H

/* The fastest preset: speeds run from 0 (exhaustive) to this. */
#define MMP_SEARCH_MAX_SPEED 10

/* What a speed preset prunes. */
typedef struct mmp_search_speed {
    int modes;      /* prediction modes of a leaf given to the engine: the best by an
                     * estimate (SATD of the residual plus sqrt(lambda) times the mode's
                     * bits); MMP_NUM_MODES: every mode, exhaustively */
    int tx_modes;   /* where the plane has the transform residual, the modes priced
                     * with it: the best tx_modes (at least `modes`) by the same
                     * estimate; the host's work, far cheaper than the engine's */
    int no_narrow;  /* 1: no prediction leaf more than twice as long as it is wide or
                     * high (no 16x4 or 4x16), that is no split into one */
    int tx_skip;    /* 1: no engine search for a leaf whose best transform residual
                     * has no coefficient (the prediction alone is good enough), as
                     * video encoders stop at a coded-block flag of 0 */
    int rdoq_only;  /* 1: the transform tries its RDOQ levels (and none) only */
    int dict_cap;   /* the dictionary's elements per scale where the settings give none
                     * (mmp_settings.dict_cap 0) */
    int min_log2;   /* the smallest side of a prediction leaf, log2 (MMP_LOG2_PMIN: any) */
    int dir_step;   /* the angular mode tries every dir_step-th direction (1: all) */
    int no_lsp;     /* 1: the least-squares mode is never tried */
    int square;     /* 1: square prediction leaves only (16x16, 8x8, 4x4): an oblong node
                     * always splits into two squares */
    int fit_rounds; /* the restoration fit's rounds (mmp_restore_fit_rounds) */
    int deblock_alone; /* 1: the deblocking filter is kept on its own gain, without
                        * fitting the restoration filter both ways
                        * (mmp/enc/plane_filters.h) */
} mmp_search_speed;

/* The pruning of preset `speed`, 0 .. MMP_SEARCH_MAX_SPEED. */
void mmp_search_speed_preset(int speed, mmp_search_speed *out);

#endif
