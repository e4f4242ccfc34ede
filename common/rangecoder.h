/*
 * Adaptive range coding: the bitstream layer of MMP.
 *
 * A byte-oriented range coder (32-bit range, 64-bit low with carry
 * propagation), adaptive frequency models for small alphabets, and a growing
 * adaptive model for dictionary indices whose cumulative frequencies live in a
 * Fenwick tree so that coding one index costs O(log n).
 *
 * Every total frequency stays <= MMP_RC_MAX_TOTAL so that range/total >= 2^8.
 * All arithmetic is integer: the coded bytes are identical on every machine.
 * The decoder never reads past its buffer: past the end it reads zero bytes
 * and sets `overrun`, which callers check to reject truncated streams.
 */
#ifndef MMP_COMMON_RANGECODER_H
#define MMP_COMMON_RANGECODER_H

#include <stddef.h>
#include <stdint.h>

#define MMP_RC_MAX_TOTAL (1u << 16)

/* ---- coder ---- */
typedef struct mmp_rc_enc {
    uint8_t *buf;      /* output bytes, grown with realloc, owned */
    size_t len, cap;
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t cache_size;
    int error;         /* MMP_ENOMEM after a failed allocation */
} mmp_rc_enc;

typedef struct mmp_rc_dec {
    const uint8_t *buf; /* not owned */
    size_t len, pos;
    uint32_t range;
    uint32_t code;
    int overrun;        /* set when more bytes were needed than available */
} mmp_rc_dec;

void mmp_rc_enc_init(mmp_rc_enc *e);
/* Code the interval [cum, cum+freq) of total (0 < freq, cum+freq <= total <= MAX). */
void mmp_rc_encode(mmp_rc_enc *e, uint32_t cum, uint32_t freq, uint32_t total);
/* Flush; afterwards e->buf[0..len) is the complete stream. Returns 0 or MMP_ENOMEM. */
int mmp_rc_enc_finish(mmp_rc_enc *e);
/* Free the buffer (ownership may be taken first by setting buf to NULL). */
void mmp_rc_enc_free(mmp_rc_enc *e);

void mmp_rc_dec_init(mmp_rc_dec *d, const uint8_t *buf, size_t len);
/* Returns a value in [0, total): the cumulative count that the next symbol covers. */
uint32_t mmp_rc_decode_freq(mmp_rc_dec *d, uint32_t total);
/* Consume the symbol [cum, cum+freq) found through mmp_rc_decode_freq. */
void mmp_rc_decode_update(mmp_rc_dec *d, uint32_t cum, uint32_t freq, uint32_t total);
/* One equiprobable bit: the same as mmp_rc_decode_freq(d, 2) and its
 * update, or mmp_rc_encode(e, bit, 1, 2), without a division. */
int mmp_rc_decode_bit(mmp_rc_dec *d);
void mmp_rc_encode_bit(mmp_rc_enc *e, int bit);
/* A binary decision with P(1) = p / 4096, 1 <= p <= 4095: the bytes of
 * mmp_rc_encode(e, bit ? 0 : p, bit ? p : 4096 - p, 4096) and its decoding,
 * with one multiplication in place of the divisions. */
void mmp_rc_encode_p12(mmp_rc_enc *e, uint32_t p, int bit);
int mmp_rc_decode_p12(mmp_rc_dec *d, uint32_t p);

/* ---- small adaptive model (alphabet 1..MMP_MODEL_MAX_SYMS) ---- */
#define MMP_MODEL_MAX_SYMS 16
typedef struct mmp_model {
    uint16_t freq[MMP_MODEL_MAX_SYMS];
    uint32_t total;
    int nsyms;
} mmp_model;

/* Every symbol starts with count 1; each coded symbol adds MMP_MODEL_INC and the
 * counts are halved (rounding up, so none reaches 0) when total would exceed
 * MMP_MODEL_LIMIT. */
#define MMP_MODEL_INC 24
#define MMP_MODEL_LIMIT (1u << 13)
/* nsyms is clamped to 1..MMP_MODEL_MAX_SYMS. */
void mmp_model_init(mmp_model *m, int nsyms);
void mmp_model_encode(mmp_rc_enc *e, mmp_model *m, int sym);
/* Always returns a symbol in [0, nsyms), whatever the bytes. */
int mmp_model_decode(mmp_rc_dec *d, mmp_model *m);

/* ---- growing index model (alphabet grows up to cap, never shrinks) ---- */
typedef struct mmp_imodel {
    uint32_t *tree;   /* Fenwick tree over freq, 1-based, cap+1 entries */
    uint16_t *freq;   /* cap entries */
    int n, cap;
    uint32_t total;
} mmp_imodel;

/* Same rules as mmp_model with these constants; growing halves first when the
 * new symbols would push total over the limit, and a count that would pass
 * 65535 (only when one symbol holds nearly all of total) also halves first. */
#define MMP_IMODEL_INC 16
#define MMP_IMODEL_LIMIT (1u << 16)
/* Largest cap: halving must always leave room under the limit for new
 * symbols (each keeps a count >= 1), which needs cap <= MMP_IMODEL_LIMIT / 2. */
#define MMP_IMODEL_MAX_CAP (1 << 15)
/* n0 symbols, each with count 1. Returns 0, MMP_EINVAL (cap outside
 * 1..MMP_IMODEL_MAX_CAP or n0 outside 1..cap) or MMP_ENOMEM. */
int mmp_imodel_init(mmp_imodel *m, int cap, int n0);
void mmp_imodel_free(mmp_imodel *m);
/* Append symbols (each with count 1) until there are n (n is clamped to cap;
 * n <= current count is a no-op). */
void mmp_imodel_grow(mmp_imodel *m, int n);
void mmp_imodel_encode(mmp_rc_enc *e, mmp_imodel *m, int sym);
int mmp_imodel_decode(mmp_rc_dec *d, mmp_imodel *m);

/* ---- costs in fixed point: 1/256 bit (Q8) ---- */
#define MMP_COST_SHIFT 8
/* Q8 value of -log2(freq/total), computed with integer arithmetic only, within
 * 1/256 bit of the true value. freq 0 is costed as 1; freq >= total costs 0. */
uint32_t mmp_cost(uint32_t freq, uint32_t total);
/* Cost of each symbol of a model: out[0..nsyms). */
void mmp_model_costs(const mmp_model *m, uint32_t *out);
/* Cost of every index of an index model: out[0..n). */
void mmp_imodel_costs(const mmp_imodel *m, uint32_t *out);

#endif
