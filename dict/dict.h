/*
 * The multiscale dictionary: one list of integer patterns per scale.
 *
 * Normative (docs/format.md): the initial contents, the rescaling of a new
 * pattern to every scale, the redundancy test and the insertion order. The
 * encoder and the decoder apply exactly the same updates in the same order.
 */
#ifndef MMP_DICT_DICT_H
#define MMP_DICT_DICT_H

#include <stdint.h>
#include "common/scales.h"

typedef struct mmp_dict {
    int cap;                     /* capacity per scale */
    uint32_t redund_q4;          /* redundancy threshold, mean squared distance per pixel in 1/16 */
    int n[MMP_NSCALES];          /* elements at each scale */
    int32_t *data[MMP_NSCALES];  /* cap * area samples per scale, element k at k*area */
    /* Search aids, not normative: element sums sorted ascending, with their ids. */
    int32_t *sorted_sum[MMP_NSCALES];
    int32_t *sorted_id[MMP_NSCALES];
    /* Redundancy test aids, not normative: each element's signature (sums
     * over its quadrants and over a grid of up to 4 x 4 cells; element k at
     * k * MMP_DICT_SIG), and the largest |sample| of any element of the scale. */
    int32_t *sig[MMP_NSCALES];
    int32_t *sum_dir[MMP_NSCALES]; /* every MMP_DICT_DIR-th sorted sum, from the first */
    int32_t maxabs[MMP_NSCALES];
    /* The taps of every 1-D resampling between sides 2^i and 2^j, at
     * [i * MMP_NLOG + j] (dict.c). */
    struct mmp_taps *taps;
    /* Values known to be redundant at the 1 x 1 scale (dict.c). */
    uint64_t *known1;
    /* Every distinct pattern given to mmp_dict_repeat so far (dict.c). */
    struct mmp_seen *seen;
} mmp_dict;

#define MMP_DICT_SIG 20
#define MMP_DICT_DIR 16

static inline int mmp_scale_area(int s) { return 1 << (s / MMP_NLOG + s % MMP_NLOG); }
static inline const int32_t *mmp_dict_elem(const mmp_dict *d, int s, int k)
{
    return d->data[s] + (long)k * mmp_scale_area(s);
}

/* Number of initial (constant) elements per scale for a given maxval. */
int mmp_dict_initial_count(int maxval);

/* Allocate and fill with the initial elements. Returns 0 or a negative MMP_E* code. */
int mmp_dict_init(mmp_dict *d, int cap, int maxval, uint32_t redund_q4);
void mmp_dict_free(mmp_dict *d);

/* Separable integer resampling of a sh x sw block to dh x dw (powers of two). */
void mmp_rescale(const int32_t *src, int sh, int sw, int32_t *dst, int dh, int dw);

/*
 * Insert `pat` (area of scale s) unless the scale is full or the pattern is
 * redundant. Returns 1 when inserted, 0 otherwise.
 */
int mmp_dict_insert(mmp_dict *d, int s, const int32_t *pat);

/* Rescale a new 2^a x 2^b pattern to every scale (in scale order) and insert it. */
void mmp_dict_update(mmp_dict *d, const int32_t *pat, int a, int b);

/* The same for scale s alone. A scale's state depends only on the patterns
 * offered to it, in order: scales may be updated independently, on
 * different threads. */
void mmp_dict_update_scale(mmp_dict *d, const int32_t *pat, int a, int b, int s);

/*
 * Not normative, a shortcut: 1 when a pattern of the same shape and samples
 * was given to this function before, else 0 (and the pattern is recorded,
 * memory permitting). Once a pattern has been offered to every scale, an
 * exact repeat of it is redundant at every scale that is not full (the
 * first one's rescaled version, or what made that redundant, is there: the
 * dictionary never loses an element), so the repeat may be skipped without
 * changing the dictionary. Callers ask in offering order, and offer each
 * pattern to a scale before any later repeat of it.
 */
int mmp_dict_repeat(mmp_dict *d, const int32_t *pat, int a, int b);

/* The same for the scales of width 2^db (heights 1 to 16), which share the
 * resampling of the rows: what mmp_dict_update_scale does for each. */
void mmp_dict_update_width(mmp_dict *d, const int32_t *pat, int a, int b, int db);

/* The redundancy threshold this encoder uses for a lambda (in 1/256). */
uint32_t mmp_redund_for_lambda(uint32_t lambda_q8);

#endif
