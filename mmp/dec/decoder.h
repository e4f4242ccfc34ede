/*
 * The decoder with checks of the coding order (tests only; inside the
 * library): no block of a step may read the pixels of another block of the
 * same step, so decoding must give the same image whatever those pixels
 * hold, in whatever order the step's blocks are reconstructed, and when
 * they are reconstructed on several threads.
 */
#ifndef MMP_MMP_DECODER_H
#define MMP_MMP_DECODER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mmp/mmp.h"

typedef struct mmp_decode_check {
    int poison;  /* >= 0: before a step is reconstructed, all its blocks hold
                  * this value and are marked available (each is made
                  * unavailable again just before its own reconstruction) */
    int reverse; /* 1: reconstruct the blocks of each step last to first */
    int parallel_min; /* > 0: steps of at least this many blocks are decoded
                       * on all threads (0: the decoder's own threshold) */
    int helpers;      /* > 0: a crew of this many helper threads whatever the
                       * image's size and the cores; < 0: none; 0: the
                       * decoder's own rule (mmp/dec/decoder.c) */
    int meet;         /* > 0: each tile, once started, waits (up to ten
                       * seconds) until this many tiles have started */
    _Atomic int *tiles_at_once; /* non-NULL: set to the most tiles that were
                                 * being decoded at one time */
} mmp_decode_check;

/* mmp_decode, with the check (NULL: none). */
int mmp_decode_checked(const uint8_t *buf, size_t len, mmp_image *img,
                       const mmp_decode_check *chk, char *errbuf, size_t errlen);

#endif
