/* The residual stage's mixing coder (mmp/common/refine_mix.h, docs/format.md
 * section 7.6, "The mixing coder"). */
#include "mmp/common/refine_mix.h"

#include <stdlib.h>

#include "common/arith.h"
#include "common/bits.h"

/* Decisions: 0 .. 15 "bl(|q|) > j", 16 .. 30 the two bits below the leading
 * one, 31 .. 34 the sign. */
#define NID 35
#define ID_MANT 16
#define ID_SIGN 31
/* Context sets, each a table of NID pairs of counters per feature value:
 * six, and with the residual context (format 1.3) two more, on the
 * candidates' deviations and on the previous plane. */
#define NSET_MIX 6
#define NSET 8
static const int set_size[NSET] = {1024, 180, 512, 512, 1024, 1024, 2401, 768};
/* Mixer inputs: two stretched counters a set, then the bias input. */
#define NIN (2 * NSET + 1)
#define BIAS_INPUT 256
#define W_START 8192
#define W_LIMIT (1 << 24)
#define LEARN 3
/* A counter moves by 1 / (n + 1.5) of the way to the decision, n its count
 * so far, capped: at 12 (fast) and 1000 (slow). */
#define CAP_FAST 12
#define CAP_SLOW 1000

typedef struct counter {
    uint16_t fast, slow; /* P(1) in 1/65536 */
    uint16_t n;
} counter;

struct mmp_rmix {
    int nset;                    /* NSET_MIX, or NSET with the residual context */
    counter *set[NSET];
    int32_t w[NID * 3][NIN];     /* per decision and fit class */
    int16_t stretch[4096];       /* the least d with squash(d) >= i, 2047 for none */
    int32_t rate[CAP_SLOW + 1];  /* 65536 / (n + 1.5) */
};

/* lpaq1's logistic table: squash(d) = 4096 / (1 + e^(-d / 256)), on 33
 * knots 128 apart, linearly interpolated. */
static const int16_t squash_knots[33] = {
    1,    2,    3,    6,    10,   16,   27,   45,   73,   120,  194,  310,  488,  747,  1101, 1546, 2047,
    2549, 2994, 3348, 3607, 3785, 3901, 3975, 4022, 4050, 4068, 4079, 4085, 4089, 4092, 4093, 4094};

/* squash of d clamped to [-2047, 2047]: a 12-bit probability, 1 .. 4094. */
static int squash(int d)
{
    const int u = d + 2048; /* 1 .. 4095 */
    const int j = u >> 7, f = u & 127;
    return (squash_knots[j] * (128 - f) + squash_knots[j + 1] * f + 64) >> 7;
}

int mmp_rmix_qlog(uint64_t v)
{
    if (v < 4)
        return (int)v;
    const int k = mmp_bit_length(v);
    const int r = 4 * (k - 2) + (int)(v >> (k - 3) & 3);
    return r < 63 ? r : 63;
}

mmp_rmix *mmp_rmix_new(int context)
{
    mmp_rmix *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nset = context ? NSET : NSET_MIX;
    for (int k = 0; k < s->nset; k++) {
        const size_t n = (size_t)NID * (size_t)set_size[k];
        if (!(s->set[k] = malloc(sizeof(counter) * n))) {
            mmp_rmix_free(s);
            return NULL;
        }
        for (size_t i = 0; i < n; i++)
            s->set[k][i] = (counter){32768, 32768, 0};
    }
    for (int i = 0; i < NID * 3; i++)
        for (int k = 0; k < NIN; k++)
            s->w[i][k] = k < 2 * s->nset ? W_START : 0;
    int i = 0;
    for (int d = -2047; d <= 2047; d++)
        for (const int v = squash(d); i <= v; i++)
            s->stretch[i] = (int16_t)d;
    for (; i < 4096; i++)
        s->stretch[i] = 2047;
    for (int n = 0; n <= CAP_SLOW; n++)
        s->rate[n] = 131072 / (2 * n + 3);
    return s;
}

void mmp_rmix_free(mmp_rmix *s)
{
    if (!s)
        return;
    for (int k = 0; k < s->nset; k++)
        free(s->set[k]);
    free(s);
}

static inline uint16_t move(uint16_t p, int target, int32_t rate)
{
    return (uint16_t)(p + mmp_floor_shift((int64_t)(target - p) * rate, 16));
}

/* One decision: row[k] is set k's NID counters for the sample's feature.
 * The mixer's inputs: set k's two counters at 2k and 2k + 1, then the bias
 * input. */
static int decide(mmp_rmix *s, counter *const *row, int id, int fit, mmp_rc_enc *enc,
                  mmp_rc_dec *dec, int bit)
{
    const int16_t *st = s->stretch;
    const int32_t *rt = s->rate;
    const int nset = s->nset, nin = 2 * nset + 1;
    counter *c[NSET];
    int x[NIN];
    for (int k = 0; k < nset; k++) {
        c[k] = row[k] + id;
        x[2 * k] = st[c[k]->fast >> 4];
        x[2 * k + 1] = st[c[k]->slow >> 4];
    }
    x[2 * nset] = BIAS_INPUT;
    int32_t *w = s->w[id * 3 + fit];
    int64_t dot = 0;
    for (int i = 0; i < nin; i++)
        dot += (int64_t)w[i] * x[i];
    const int64_t d = mmp_floor_shift(dot, 16);
    const int p = squash(d < -2047 ? -2047 : d > 2047 ? 2047 : (int)d);
    if (enc)
        mmp_rc_encode_p12(enc, (uint32_t)p, bit);
    else
        bit = mmp_rc_decode_p12(dec, (uint32_t)p);
    /* |x err| < 2047 * 3 * 4096 < 2^25: the step is the floor of
     * (x err + 8192 + 2^30) / 2^14, less 2^16, in 32 bits without a
     * negative shift; |w| + |step| stays far inside 32 bits. */
    const int32_t err = ((bit << 12) - p) * LEARN;
    for (int i = 0; i < nin; i++) {
        const int32_t v =
            w[i] + (int32_t)((uint32_t)(x[i] * err + 8192 + (1 << 30)) >> 14) - (1 << 16);
        w[i] = v < -W_LIMIT ? -W_LIMIT : v > W_LIMIT ? W_LIMIT : v;
    }
    const int target = bit ? 65535 : 0;
    for (int k = 0; k < nset; k++) {
        const int n = c[k]->n;
        c[k]->fast = move(c[k]->fast, target, rt[n < CAP_FAST ? n : CAP_FAST]);
        c[k]->slow = move(c[k]->slow, target, rt[n]);
        if (n < CAP_SLOW)
            c[k]->n = (uint16_t)(n + 1);
    }
    return bit;
}

static int raw_bit(mmp_rc_enc *enc, mmp_rc_dec *dec, int bit)
{
    if (enc) {
        mmp_rc_encode_bit(enc, bit);
        return bit;
    }
    return mmp_rc_decode_bit(dec);
}

int mmp_rmix_code(mmp_rmix *s, mmp_rc_enc *enc, mmp_rc_dec *dec, const mmp_rmix_feat *f, int q)
{
    const int index[NSET] = {
        (f->ls >> 1) * 32 + (f->le >> 1),
        (f->fit * 20 + f->ectx) * 3 + f->sctx,
        f->tex * 8 + (f->la >> 3),
        (f->la >> 1) * 16 + (f->ls >> 2),
        f->level * 32 + (f->la >> 1),
        f->region,
        f->dev,
        f->guide,
    };
    counter *row[NSET];
    for (int k = 0; k < s->nset; k++)
        row[k] = s->set[k] + (size_t)index[k] * NID;
    const unsigned mag = (unsigned)(q < 0 ? -q : q);
    const int len = enc ? mmp_bit_length(mag) : 0;
    int k = 0;
    while (k < 16 && decide(s, row, k, f->fit, enc, dec, len > k))
        k++;
    if (k == 0)
        return 0;
    unsigned v = 1;
    const int base = ID_MANT + 3 * ((k < 6 ? k : 6) - 2) - 1;
    for (int t = 1; t < k; t++) {
        const int b = enc ? (int)(mag >> (k - 1 - t) & 1) : 0;
        v = v << 1 | (unsigned)(t <= 2 ? decide(s, row, base + (int)v, f->fit, enc, dec, b)
                                       : raw_bit(enc, dec, b));
    }
    /* The sign: sets 1 and 3 on the neighbours' signs instead. */
    row[1] = s->set[1] + (size_t)((f->sctx * 9 + f->sgn / 9) * 5 + (f->ectx >> 2)) * NID;
    row[3] = s->set[3] + (size_t)f->sgn * NID;
    const int neg = decide(s, row, ID_SIGN + (k < 4 ? k : 4) - 1, f->fit, enc, dec, q < 0);
    return neg ? -(int)v : (int)v;
}
