/*
 * Range coder, adaptive models and integer rate estimates (see rangecoder.h).
 *
 * The coder is the LZMA one: low keeps 32 bits of the interval plus a carry
 * bit, and bytes leave through a one-byte cache followed by a run of pending
 * 0xFF bytes, so that a late carry can still ripple into them.
 */
#include "common/rangecoder.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define RC_TOP (1u << 24)

static int floor_log2(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return 31 - __builtin_clz(x);
#else
    int e = 0;
    while (x >>= 1)
        e++;
    return e;
#endif
}

/* ---- encoder ---- */

static void put_byte(mmp_rc_enc *e, unsigned b)
{
    if (e->error)
        return;
    if (e->len == e->cap) {
        size_t ncap = e->cap ? e->cap * 2 : 256;
        uint8_t *nb = ncap > e->cap ? realloc(e->buf, ncap) : NULL;
        if (!nb) {
            e->error = MMP_ENOMEM;
            return;
        }
        e->buf = nb;
        e->cap = ncap;
    }
    e->buf[e->len++] = (uint8_t)b;
}

/*
 * Moves the top byte of low out. cache_size counts the pending bytes: cache
 * and then cache_size-1 bytes of 0xFF. Unlike LZMA we start with nothing
 * pending instead of a virtual leading zero byte, which saves that byte in
 * every stream; a carry can never reach past the first byte because the
 * initial interval [0, 2^32-1) lies below 2^32.
 */
static void shift_low(mmp_rc_enc *e)
{
    if (e->low < 0xFF000000u || e->low > 0xFFFFFFFFu) {
        unsigned carry = (unsigned)(e->low >> 32);
        if (e->cache_size) {
            put_byte(e, (e->cache + carry) & 0xFF);
            while (--e->cache_size)
                put_byte(e, (0xFFu + carry) & 0xFF);
        }
        e->cache = (uint8_t)(e->low >> 24);
    } else if (e->cache_size == 0) {
        e->cache = 0xFF; /* the first byte may itself be 0xFF */
    }
    e->cache_size++;
    e->low = (e->low & 0x00FFFFFFu) << 8;
}

void mmp_rc_enc_init(mmp_rc_enc *e)
{
    memset(e, 0, sizeof *e);
    e->range = 0xFFFFFFFFu;
}

/* The interval [cum, cum + freq) of units of r = range / total. */
static inline void encode_r(mmp_rc_enc *e, uint32_t r, uint32_t cum, uint32_t freq)
{
    e->low += (uint64_t)r * cum;
    e->range = r * freq;
    while (e->range < RC_TOP) {
        e->range <<= 8;
        shift_low(e);
    }
}

void mmp_rc_encode(mmp_rc_enc *e, uint32_t cum, uint32_t freq, uint32_t total)
{
    assert(freq > 0 && total <= MMP_RC_MAX_TOTAL && cum + freq <= total);
    encode_r(e, e->range / total, cum, freq);
}

/* range / 2 is range >> 1. */
void mmp_rc_encode_bit(mmp_rc_enc *e, int bit)
{
    encode_r(e, e->range >> 1, bit ? 1 : 0, 1);
}

int mmp_rc_enc_finish(mmp_rc_enc *e)
{
    /* The decoder reads 4 bytes up front and one per renormalisation; these
     * shifts emit exactly that many, so a complete stream never overruns. */
    for (int i = 0; i < 5; i++)
        shift_low(e);
    return e->error;
}

void mmp_rc_enc_free(mmp_rc_enc *e)
{
    free(e->buf);
    e->buf = NULL;
    e->len = e->cap = 0;
}

/* ---- decoder ---- */

static unsigned get_byte(mmp_rc_dec *d)
{
    if (d->pos < d->len)
        return d->buf[d->pos++];
    d->overrun = 1;
    return 0;
}

void mmp_rc_dec_init(mmp_rc_dec *d, const uint8_t *buf, size_t len)
{
    d->buf = buf;
    d->len = buf ? len : 0;
    d->pos = 0;
    d->overrun = 0;
    d->range = 0xFFFFFFFFu;
    d->code = 0;
    for (int i = 0; i < 4; i++)
        d->code = (d->code << 8) | get_byte(d);
}

/* The two halves of decoding a symbol, sharing r = range / total (the
 * models below divide once per symbol). */
static inline uint32_t decode_freq_r(const mmp_rc_dec *d, uint32_t total, uint32_t *r)
{
    /* On garbage, code may exceed the range; the clamp keeps callers in
     * bounds and everything after it stays defined unsigned arithmetic. */
    *r = d->range / total;
    uint32_t v = d->code / *r;
    return v < total ? v : total - 1;
}

static inline void decode_update_r(mmp_rc_dec *d, uint32_t r, uint32_t cum, uint32_t freq)
{
    d->code -= r * cum;
    d->range = r * freq;
    while (d->range < RC_TOP) {
        d->range <<= 8;
        d->code = (d->code << 8) | get_byte(d);
    }
}

uint32_t mmp_rc_decode_freq(mmp_rc_dec *d, uint32_t total)
{
    uint32_t r;
    return decode_freq_r(d, total, &r);
}

void mmp_rc_decode_update(mmp_rc_dec *d, uint32_t cum, uint32_t freq, uint32_t total)
{
    decode_update_r(d, d->range / total, cum, freq);
}

/* r = range / 2 is range >> 1, and code / r clamped to 1 (decode_freq_r)
 * is 1 exactly when code >= r. */
int mmp_rc_decode_bit(mmp_rc_dec *d)
{
    const uint32_t r = d->range >> 1;
    const int bit = d->code >= r;
    decode_update_r(d, r, (uint32_t)bit, 1);
    return bit;
}

/* A binary decision of P(1) = p / 4096: r = range / 4096 is range >> 12,
 * and the decoder's clamped code / r (decode_freq_r) is below p exactly when
 * code < r p (p <= 4095, r p <= range). */
void mmp_rc_encode_p12(mmp_rc_enc *e, uint32_t p, int bit)
{
    const uint32_t r = e->range >> 12;
    if (bit)
        encode_r(e, r, 0, p);
    else
        encode_r(e, r, p, 4096 - p);
}

int mmp_rc_decode_p12(mmp_rc_dec *d, uint32_t p)
{
    const uint32_t r = d->range >> 12;
    const int bit = d->code < r * p;
    if (bit)
        decode_update_r(d, r, 0, p);
    else
        decode_update_r(d, r, p, 4096 - p);
    return bit;
}

/* ---- small adaptive model ---- */

void mmp_model_init(mmp_model *m, int nsyms)
{
    if (nsyms < 1)
        nsyms = 1;
    if (nsyms > MMP_MODEL_MAX_SYMS)
        nsyms = MMP_MODEL_MAX_SYMS;
    memset(m->freq, 0, sizeof m->freq);
    for (int i = 0; i < nsyms; i++)
        m->freq[i] = 1;
    m->nsyms = nsyms;
    m->total = (uint32_t)nsyms;
}

static void model_update(mmp_model *m, int sym)
{
    if (m->total + MMP_MODEL_INC > MMP_MODEL_LIMIT) {
        uint32_t t = 0;
        for (int i = 0; i < m->nsyms; i++) {
            m->freq[i] = (uint16_t)((m->freq[i] + 1u) >> 1);
            t += m->freq[i];
        }
        m->total = t;
    }
    m->freq[sym] += MMP_MODEL_INC;
    m->total += MMP_MODEL_INC;
}

void mmp_model_encode(mmp_rc_enc *e, mmp_model *m, int sym)
{
    assert(sym >= 0 && sym < m->nsyms);
    uint32_t cum = 0;
    for (int i = 0; i < sym; i++)
        cum += m->freq[i];
    mmp_rc_encode(e, cum, m->freq[sym], m->total);
    model_update(m, sym);
}

int mmp_model_decode(mmp_rc_dec *d, mmp_model *m)
{
    /* The symbol of decode_freq_r's v, without its second division: for an
     * interval's end e (an integer), v < e exactly when code < e * r, and
     * e * r <= total * r <= range fits in 32 bits. Where decode_freq_r
     * clamps v to total - 1 (code >= total * r, on garbage), no end below
     * the last symbol's passes either test. Stopping at the last symbol,
     * rather than testing it, is what makes the result in range whatever
     * code is. */
    const uint32_t r = d->range / m->total;
    uint32_t cum = 0;
    int s = 0;
    for (; s < m->nsyms - 1; s++) {
        const uint32_t end = cum + m->freq[s];
        if (d->code < end * r)
            break;
        cum = end;
    }
    decode_update_r(d, r, cum, m->freq[s]);
    model_update(m, s);
    return s;
}

/* ---- growing index model ---- */

/* The tree spans all cap slots (zero beyond n) so that growing is a plain
 * point update instead of a rebuild. */
static void fen_add(mmp_imodel *m, int i, uint32_t delta)
{
    for (int j = i + 1; j <= m->cap; j += j & -j)
        m->tree[j] += delta;
}

static uint32_t fen_prefix(const mmp_imodel *m, int i)
{
    uint32_t s = 0;
    for (int j = i; j > 0; j -= j & -j)
        s += m->tree[j];
    return s;
}

/* A node above n that does not cover symbol n - 1 covers no symbol with a
 * count and is zero (fen_add keeps it so), so only the nodes up to n and
 * the chain of n above it are built: an index model is made for every
 * scale of every plane with a cap far above its first n. */
static void fen_rebuild(mmp_imodel *m)
{
    const int n = m->n, cap = m->cap;
    assert(n >= 1); /* n + (n & -n) > n: the chain's walk ends */
    for (int i = 1; i <= n; i++)
        m->tree[i] = m->freq[i - 1];
    for (int j = n + (n & -n); j <= cap; j += j & -j)
        m->tree[j] = 0;
    for (int i = 1; i <= n; i++) {
        const int j = i + (i & -i);
        if (j <= cap)
            m->tree[j] += m->tree[i];
    }
    for (int i = n + (n & -n); i <= cap; i += i & -i) {
        const int j = i + (i & -i);
        if (j <= cap)
            m->tree[j] += m->tree[i];
    }
}

static void halve(mmp_imodel *m)
{
    uint32_t t = 0;
    for (int i = 0; i < m->n; i++) {
        m->freq[i] = (uint16_t)((m->freq[i] + 1u) >> 1);
        t += m->freq[i];
    }
    m->total = t;
}

/* Halve until `add` more counts fit under the limit. MMP_IMODEL_MAX_CAP
 * guarantees n + add <= limit, and halving shrinks the total towards n, so
 * this ends; one pass suffices unless many symbols are added at once. */
static void make_room(mmp_imodel *m, uint32_t add)
{
    if (m->total + add <= MMP_IMODEL_LIMIT)
        return;
    do
        halve(m);
    while (m->total + add > MMP_IMODEL_LIMIT && m->total > (uint32_t)m->n);
    fen_rebuild(m);
}

int mmp_imodel_init(mmp_imodel *m, int cap, int n0)
{
    memset(m, 0, sizeof *m);
    if (cap < 1 || cap > MMP_IMODEL_MAX_CAP || n0 < 1 || n0 > cap)
        return MMP_EINVAL;
    m->tree = calloc((size_t)cap + 1, sizeof *m->tree);
    m->freq = calloc((size_t)cap, sizeof *m->freq);
    if (!m->tree || !m->freq) {
        mmp_imodel_free(m);
        return MMP_ENOMEM;
    }
    m->cap = cap;
    m->n = n0;
    for (int i = 0; i < n0; i++)
        m->freq[i] = 1;
    m->total = (uint32_t)n0;
    fen_rebuild(m);
    return MMP_OK;
}

void mmp_imodel_free(mmp_imodel *m)
{
    free(m->tree);
    free(m->freq);
    m->tree = NULL;
    m->freq = NULL;
    m->n = m->cap = 0;
    m->total = 0;
}

void mmp_imodel_grow(mmp_imodel *m, int n)
{
    if (n > m->cap)
        n = m->cap;
    if (n <= m->n)
        return;
    make_room(m, (uint32_t)(n - m->n));
    for (int i = m->n; i < n; i++) {
        m->freq[i] = 1;
        fen_add(m, i, 1);
    }
    m->total += (uint32_t)(n - m->n);
    m->n = n;
}

static void imodel_update(mmp_imodel *m, int sym)
{
    /* A lone symbol can hold the whole total (up to the limit, 2^16), which
     * its uint16 count cannot: halve early in that one case. */
    if (m->freq[sym] + MMP_IMODEL_INC > UINT16_MAX) {
        halve(m);
        fen_rebuild(m);
    }
    make_room(m, MMP_IMODEL_INC);
    m->freq[sym] += MMP_IMODEL_INC;
    fen_add(m, sym, MMP_IMODEL_INC);
    m->total += MMP_IMODEL_INC;
}

void mmp_imodel_encode(mmp_rc_enc *e, mmp_imodel *m, int sym)
{
    assert(sym >= 0 && sym < m->n);
    mmp_rc_encode(e, fen_prefix(m, sym), m->freq[sym], m->total);
    imodel_update(m, sym);
}

int mmp_imodel_decode(mmp_rc_dec *d, mmp_imodel *m)
{
    uint32_t r;
    uint32_t v = decode_freq_r(d, m->total, &r);
    /* Binary lifting: the largest pos with prefix(pos) <= v is the symbol;
     * what is subtracted along the way is its cumulative count. */
    uint32_t rest = v;
    int pos = 0;
    for (int step = 1 << floor_log2((uint32_t)m->cap); step; step >>= 1) {
        int nx = pos + step;
        if (nx <= m->cap && m->tree[nx] <= rest) {
            pos = nx;
            rest -= m->tree[nx];
        }
    }
    /* v < total = prefix(n) already implies pos < n; kept as a cheap guard. */
    if (pos >= m->n) {
        pos = m->n - 1;
        rest = v - fen_prefix(m, pos);
    }
    decode_update_r(d, r, v - rest, m->freq[pos]);
    imodel_update(m, pos);
    return pos;
}

/* ---- costs ---- */

/*
 * log2(1 + i/256) in Q16 for i = 0..256, rounded to nearest. Generated
 * offline with 50-digit decimal arithmetic; as constants they are the same
 * everywhere, which a run-time libm table would not guarantee.
 */
static const uint32_t log_tab[257] = {
    0, 369, 736, 1102, 1466, 1829, 2190, 2551, 2909, 3267,
    3623, 3978, 4331, 4683, 5034, 5384, 5732, 6079, 6425, 6769,
    7112, 7454, 7795, 8134, 8473, 8810, 9146, 9480, 9814, 10146,
    10477, 10807, 11136, 11464, 11791, 12116, 12440, 12764, 13086, 13407,
    13727, 14046, 14363, 14680, 14996, 15310, 15624, 15937, 16248, 16559,
    16868, 17177, 17484, 17791, 18096, 18401, 18704, 19007, 19308, 19609,
    19909, 20207, 20505, 20802, 21098, 21393, 21687, 21980, 22272, 22564,
    22854, 23144, 23433, 23720, 24007, 24293, 24579, 24863, 25146, 25429,
    25711, 25992, 26272, 26551, 26830, 27108, 27384, 27660, 27936, 28210,
    28484, 28757, 29029, 29300, 29571, 29840, 30109, 30378, 30645, 30912,
    31178, 31443, 31707, 31971, 32234, 32496, 32758, 33019, 33279, 33538,
    33797, 34055, 34312, 34569, 34825, 35080, 35334, 35588, 35841, 36094,
    36346, 36597, 36847, 37097, 37346, 37595, 37842, 38090, 38336, 38582,
    38827, 39072, 39316, 39559, 39802, 40044, 40286, 40527, 40767, 41006,
    41246, 41484, 41722, 41959, 42196, 42432, 42667, 42902, 43137, 43370,
    43603, 43836, 44068, 44300, 44530, 44761, 44990, 45220, 45448, 45676,
    45904, 46131, 46357, 46583, 46809, 47034, 47258, 47482, 47705, 47928,
    48150, 48372, 48593, 48813, 49034, 49253, 49472, 49691, 49909, 50127,
    50344, 50560, 50776, 50992, 51207, 51422, 51636, 51850, 52063, 52276,
    52488, 52700, 52911, 53122, 53332, 53542, 53751, 53960, 54169, 54377,
    54584, 54791, 54998, 55204, 55410, 55615, 55820, 56025, 56229, 56432,
    56635, 56838, 57040, 57242, 57443, 57644, 57845, 58045, 58245, 58444,
    58643, 58841, 59039, 59237, 59434, 59631, 59827, 60023, 60219, 60414,
    60609, 60803, 60997, 61190, 61384, 61576, 61769, 61961, 62152, 62343,
    62534, 62725, 62915, 63104, 63294, 63483, 63671, 63859, 64047, 64234,
    64421, 64608, 64794, 64980, 65166, 65351, 65536,
};

/*
 * log2(x) in Q16 for x >= 1: exponent plus a linearly interpolated mantissa.
 * Entry rounding, interpolation (log2 bends by under 3e-6 bit over 1/256)
 * and product rounding stay below 2e-5 bit, so a difference of two of these
 * rounded to Q8 is within 1/512 + 4e-5 of the true value.
 */
static uint32_t log2_q16(uint32_t x)
{
    int e = floor_log2(x);
    uint32_t mant = x << (31 - e); /* leading one at bit 31 */
    uint32_t i = (mant >> 23) & 0xFF;
    uint32_t f = (mant >> 7) & 0xFFFF;
    uint32_t a = log_tab[i], b = log_tab[i + 1];
    return ((uint32_t)e << 16) + a + (((b - a) * f + 0x8000u) >> 16);
}

static uint32_t cost_q16(uint32_t freq, uint32_t log_total)
{
    uint32_t lf = log2_q16(freq ? freq : 1);
    if (lf >= log_total)
        return 0;
    return (log_total - lf + (1u << 7)) >> 8;
}

/* freq 0 is costed as freq 1; freq >= total costs 0. */
uint32_t mmp_cost(uint32_t freq, uint32_t total)
{
    if (freq >= total)
        return 0;
    return cost_q16(freq, log2_q16(total));
}

void mmp_model_costs(const mmp_model *m, uint32_t *out)
{
    uint32_t lt = log2_q16(m->total);
    for (int i = 0; i < m->nsyms; i++)
        out[i] = cost_q16(m->freq[i], lt);
}

void mmp_imodel_costs(const mmp_imodel *m, uint32_t *out)
{
    uint32_t lt = log2_q16(m->total);
    for (int i = 0; i < m->n; i++)
        out[i] = cost_q16(m->freq[i], lt);
}
