/* The encoder's speed presets (see search_speed.h). */
#include "mmp/enc/search_speed.h"

#include "common/scales.h"
#include "mmp/enc/restore_fit.h"
#include "mmp/mmp.h"
#include "predict/predict.h"

void mmp_search_speed_preset(int speed, mmp_search_speed *out)
{
    /* Measured on crops and whole images: docs/tuning.md, "Speed presets". */
    static const mmp_search_speed preset[MMP_SEARCH_MAX_SPEED + 1] = {
        {.modes = MMP_NUM_MODES, .tx_modes = MMP_NUM_MODES, .dict_cap = MMP_DEFAULT_DICT_CAP},
        {.modes = 5, .tx_modes = MMP_NUM_MODES, .dict_cap = MMP_DEFAULT_DICT_CAP},
        {.modes = 2, .tx_modes = MMP_NUM_MODES, .dict_cap = MMP_DEFAULT_DICT_CAP},
        {.modes = 2, .tx_modes = 5, .no_narrow = 1, .tx_skip = 1, .rdoq_only = 1,
         .dict_cap = MMP_FAST_DICT_CAP},
        {.modes = 1, .tx_modes = 5, .no_narrow = 1, .tx_skip = 1, .rdoq_only = 1,
         .dict_cap = MMP_FAST_DICT_CAP},
        {.modes = 1, .tx_modes = 5, .no_narrow = 1, .tx_skip = 1, .rdoq_only = 1,
         .dict_cap = MMP_FASTEST_DICT_CAP},
        /* From 6 on, no dictionary search: every leaf codes the transform
         * residual (the engine is not called). */
#define MMP_TX_ONLY                                                                               \
    .modes = 0, .no_narrow = 1, .tx_skip = 1, .rdoq_only = 1, .no_lsp = 1,                       \
    .dict_cap = MMP_FASTEST_DICT_CAP
        {MMP_TX_ONLY, .tx_modes = 5},
        {MMP_TX_ONLY, .tx_modes = 5, .square = 1},
        {MMP_TX_ONLY, .tx_modes = 2, .square = 1, .dir_step = 2, .fit_rounds = 1,
         .deblock_alone = 1},
        {MMP_TX_ONLY, .tx_modes = 1, .square = 1, .dir_step = 4, .fit_rounds = 1,
         .deblock_alone = 1},
        {MMP_TX_ONLY, .tx_modes = 1, .square = 1, .dir_step = 4, .min_log2 = 3, .fit_rounds = 1,
         .deblock_alone = 1},
#undef MMP_TX_ONLY
    };
    *out = preset[speed < 0 ? 0 : speed > MMP_SEARCH_MAX_SPEED ? MMP_SEARCH_MAX_SPEED : speed];
    if (out->min_log2 < MMP_LOG2_PMIN)
        out->min_log2 = MMP_LOG2_PMIN;
    if (out->dir_step < 1)
        out->dir_step = 1;
    if (out->fit_rounds < 1)
        out->fit_rounds = MMP_RESTORE_FIT_ROUNDS;
}
