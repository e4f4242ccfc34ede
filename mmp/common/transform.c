/* The transform residual of a prediction leaf (see transform.h). */
#include "mmp/common/transform.h"

#include "common/arith.h"
#include "common/bits.h"

/* HEVC's core transform: about 64 * sqrt(2) * cos((2n + 1) k pi / 32), row k
 * = frequency, with row 0 all 64 (docs/format.md 4.4). */
const int8_t mmp_tx_matrix16[16][16] = {
    {64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64},
    {90, 87, 80, 70, 57, 43, 25, 9, -9, -25, -43, -57, -70, -80, -87, -90},
    {89, 75, 50, 18, -18, -50, -75, -89, -89, -75, -50, -18, 18, 50, 75, 89},
    {87, 57, 9, -43, -80, -90, -70, -25, 25, 70, 90, 80, 43, -9, -57, -87},
    {83, 36, -36, -83, -83, -36, 36, 83, 83, 36, -36, -83, -83, -36, 36, 83},
    {80, 9, -70, -87, -25, 57, 90, 43, -43, -90, -57, 25, 87, 70, -9, -80},
    {75, -18, -89, -50, 50, 89, 18, -75, -75, 18, 89, 50, -50, -89, -18, 75},
    {70, -43, -87, 9, 90, 25, -80, -57, 57, 80, -25, -90, -9, 87, 43, -70},
    {64, -64, -64, 64, 64, -64, -64, 64, 64, -64, -64, 64, 64, -64, -64, 64},
    {57, -80, -25, 90, -9, -87, 43, 70, -70, -43, 87, 9, -90, 25, 80, -57},
    {50, -89, 18, 75, -75, -18, 89, -50, -50, 89, -18, -75, 75, 18, -89, 50},
    {43, -90, 57, 25, -87, 70, 9, -80, 80, -9, -70, 87, -25, -57, 90, -43},
    {36, -83, 83, -36, -36, 83, -83, 36, 36, -83, 83, -36, -36, 83, -83, 36},
    {25, -70, 90, -80, 43, 9, -57, 87, -87, 57, -9, -43, 80, -90, 70, -25},
    {18, -50, 75, -89, 89, -75, 50, -18, -18, 50, -75, 89, -89, 75, -50, 18},
    {9, -25, 43, -57, 70, -80, 87, -90, 90, -87, 80, -70, 57, -43, 25, -9},
};

int64_t mmp_tx_step_q4(int qi)
{
    /* round(16 * 2^(k / 8)), k = 0 .. 7 */
    static const int64_t base[8] = {16, 17, 19, 21, 23, 25, 27, 29};
    return base[(qi - 1) & 7] << ((qi - 1) >> 3);
}

int64_t mmp_tx_leaf_step(int64_t step_q4, int a, int b)
{
    return (a + b) & 1 ? (step_q4 * 181 + 64) >> 7 : step_q4;
}

#define DQ_LIMIT ((int64_t)1 << 31)

void mmp_tx_inverse_begin(mmp_tx_inv *s, const int32_t *level, int a, int b, int64_t step_q4,
                          int32_t maxval)
{
    const int h = 1 << a, w = 1 << b;
    const int64_t step = mmp_tx_leaf_step(step_q4, a, b);
    s->a = a;
    s->b = b;
    s->shift = 16 + ((a + b + 1) >> 1);
    s->half = (int64_t)1 << (s->shift - 1);
    s->maxval = maxval;
    /* Most levels are zero: only the rows k and the columns l of d that hold
     * one contribute. The sums are exact, so their order does not matter. */
    s->nr = s->nc = 0;
    unsigned colany = 0;
    for (int k = 0; k < h; k++) {
        int any = 0;
        for (int l = 0; l < w; l++) {
            /* |level| <= MMP_TX_MAX_LEVEL < 2^26 and step < 2^25: no overflow */
            const int64_t v = (int64_t)level[k * w + l] * step;
            s->d[k * w + l] = v > DQ_LIMIT ? DQ_LIMIT : v < -DQ_LIMIT ? -DQ_LIMIT : v;
            if (v) {
                any = 1;
                colany |= 1u << l;
            }
        }
        if (any)
            s->rows[s->nr++] = k;
    }
    for (int l = 0; l < w; l += 2)
        if (colany >> l & 1)
            s->cols[s->nc++] = l;
    s->nce = s->nc;
    for (int l = 1; l < w; l += 2)
        if (colany >> l & 1)
            s->cols[s->nc++] = l;
}

/* The row pass of one row, from its column transforms t[j] (at the columns
 * s->cols[j]): u[x] = sum_j t[j] T_w[cols[j]][x], |u| < 2^53, by even and
 * odd columns: T_w[l][w - 1 - x] = (-1)^l T_w[l][x], so with e and o the
 * even and odd columns' parts of u[x], u[w - 1 - x] = e - o. The same exact
 * sums in half the multiplications. */
static void inverse_row_pass(const mmp_tx_inv *s, const int64_t *t, int32_t *res)
{
    const int w = 1 << s->b, sw = 16 >> s->b;
    for (int x = 0; x < w / 2; x++) {
        int64_t e = 0, o = 0;
        for (int j = 0; j < s->nce; j++)
            e += t[j] * mmp_tx_matrix16[s->cols[j] * sw][x];
        for (int j = s->nce; j < s->nc; j++)
            o += t[j] * mmp_tx_matrix16[s->cols[j] * sw][x];
        const int64_t r0 = mmp_floor_shift(e + o + s->half, s->shift);
        const int64_t r1 = mmp_floor_shift(e - o + s->half, s->shift);
        res[x] = (int32_t)(r0 > s->maxval ? s->maxval : r0 < -s->maxval ? -s->maxval : r0);
        res[w - 1 - x] = (int32_t)(r1 > s->maxval ? s->maxval : r1 < -s->maxval ? -s->maxval : r1);
    }
}

void mmp_tx_inverse_row(const mmp_tx_inv *s, int y, int32_t *res)
{
    const int w = 1 << s->b, sh = 16 >> s->a;
    /* Column transforms at row y: t[l] = sum_k T_h[k][y] d[k][l],
     * |t| <= 16 * 90 * 2^31 < 2^42. (The search's candidates mostly stop
     * within the first rows, so rows come one at a time here; a whole
     * inverse pairs them, mmp_tx_inverse.) */
    int64_t t[MMP_B];
    for (int j = 0; j < s->nc; j++) {
        const int l = s->cols[j];
        int64_t acc = 0;
        for (int i = 0; i < s->nr; i++)
            acc += (int64_t)mmp_tx_matrix16[s->rows[i] * sh][y] * s->d[s->rows[i] * w + l];
        t[j] = acc;
    }
    inverse_row_pass(s, t, res);
}

void mmp_tx_inverse(const int32_t *level, int a, int b, int64_t step_q4, int32_t maxval,
                    int32_t *res, int stride)
{
    mmp_tx_inv s;
    mmp_tx_inverse_begin(&s, level, a, b, step_q4, maxval);
    const int h = 1 << a, w = 1 << b, sh = 16 >> a;
    /* Rows y and h - 1 - y together: T_h[k][h - 1 - y] = (-1)^k T_h[k][y],
     * so with the even and odd rows k's parts of a column transform at y,
     * the one at h - 1 - y is their difference: half the multiplications. */
    int ev[MMP_B], od[MMP_B], ne = 0, no = 0;
    for (int i = 0; i < s.nr; i++) {
        if (s.rows[i] & 1)
            od[no++] = s.rows[i];
        else
            ev[ne++] = s.rows[i];
    }
    for (int y = 0; y < h / 2; y++) {
        int64_t t0[MMP_B], t1[MMP_B];
        for (int j = 0; j < s.nc; j++) {
            const int l = s.cols[j];
            int64_t e = 0, o = 0;
            for (int i = 0; i < ne; i++)
                e += (int64_t)mmp_tx_matrix16[ev[i] * sh][y] * s.d[ev[i] * w + l];
            for (int i = 0; i < no; i++)
                o += (int64_t)mmp_tx_matrix16[od[i] * sh][y] * s.d[od[i] * w + l];
            t0[j] = e + o;
            t1[j] = e - o;
        }
        inverse_row_pass(&s, t0, res + (long)y * stride);
        inverse_row_pass(&s, t1, res + (long)(h - 1 - y) * stride);
    }
}

/* ------------------------------------------------------------ scans */

void mmp_tx_scan(int a, int b, uint16_t *scan)
{
    const int h = 1 << a, w = 1 << b;
    int n = 0;
    for (int dg = 0; dg <= h + w - 2; dg++)
        for (int y = dg < h - 1 ? dg : h - 1; y >= 0 && dg - y < w; y--)
            scan[n++] = (uint16_t)(y * w + dg - y);
}

void mmp_tx_scans_init(mmp_tx_scans *s)
{
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++)
            mmp_tx_scan(a, b, s->scan[a - MMP_LOG2_PMIN][b - MMP_LOG2_PMIN]);
}

/* ------------------------------------------------------------ models */

void mmp_tx_models_init(mmp_tx_models *m)
{
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            const int ps = mmp_pscale(a, b);
            mmp_model_init(&m->rtype[ps], 2);
            mmp_model_init(&m->cbf[ps], 2);
            mmp_model_init(&m->last[ps], a + b + 1);
        }
    for (int i = 0; i < MMP_TX_SIG_CTX; i++)
        mmp_model_init(&m->sig[i], 2);
    for (int i = 0; i < MMP_TX_MAG_CTX; i++)
        mmp_model_init(&m->mag[i], MMP_TX_ESCAPE + 1);
    for (int i = 0; i < MMP_TX_EG_CTX; i++)
        mmp_model_init(&m->eg[i], 2);
}

void mmp_tx_costs_of(const mmp_tx_models *m, mmp_tx_costs *out)
{
    for (int ps = 0; ps < MMP_NPSCALES; ps++) {
        mmp_model_costs(&m->rtype[ps], out->rtype[ps]);
        mmp_model_costs(&m->cbf[ps], out->cbf[ps]);
        mmp_model_costs(&m->last[ps], out->last[ps]);
    }
    for (int i = 0; i < MMP_TX_SIG_CTX; i++)
        mmp_model_costs(&m->sig[i], out->sig[i]);
    for (int i = 0; i < MMP_TX_MAG_CTX; i++)
        mmp_model_costs(&m->mag[i], out->mag[i]);
    for (int i = 0; i < MMP_TX_EG_CTX; i++)
        mmp_model_costs(&m->eg[i], out->eg[i]);
}

/* ------------------------------------------------------------ syntax */

/* One direction of the traversal. */
typedef struct tx_io {
    mmp_rc_enc *enc;
    mmp_rc_dec *dec;
    const mmp_tx_costs *cost;
    uint64_t bits;
} tx_io;

/* Symbol v of model m (cost table c): coded, decoded (returned) or costed. */
static int tsym(tx_io *io, mmp_model *m, const uint32_t *c, int v)
{
    if (io->cost) {
        io->bits += c[v];
        return v;
    }
    if (io->enc) {
        mmp_model_encode(io->enc, m, v);
        return v;
    }
    return mmp_model_decode(io->dec, m);
}

/* n equiprobable bits of v, most significant first. */
static int tbits(tx_io *io, int v, int n)
{
    if (io->cost) {
        io->bits += (uint64_t)n << MMP_COST_SHIFT;
        return v;
    }
    int r = 0;
    for (int i = n - 1; i >= 0; i--) {
        int bit;
        if (io->enc) {
            bit = v >> i & 1;
            mmp_rc_encode_bit(io->enc, bit);
        } else {
            bit = mmp_rc_decode_bit(io->dec);
        }
        r = r << 1 | bit;
    }
    return r;
}

uint64_t mmp_tx_code_levels(mmp_tx_models *m, mmp_rc_enc *enc, mmp_rc_dec *dec,
                            const mmp_tx_costs *cost, int32_t *level, int a, int b,
                            const uint16_t *scan)
{
    tx_io io = {.enc = cost ? NULL : enc, .dec = cost || enc ? NULL : dec, .cost = cost};
    const int w = 1 << b, area = 1 << (a + b), ps = mmp_pscale(a, b);
    const int size_class = mmp_tx_size_class(area);
    const int coding = enc || cost;
    int last = -1;
    if (coding)
        for (int i = area - 1; i >= 0 && last < 0; i--)
            if (level[scan[i]])
                last = i;
    const int cbf = tsym(&io, cost ? NULL : &m->cbf[ps], cost ? cost->cbf[ps] : NULL, last >= 0);
    if (!coding)
        for (int i = 0; i < area; i++)
            level[i] = 0;
    if (!cbf)
        return io.bits;
    /* The last position's bit length, then its bits below the leading one. */
    int g = coding ? mmp_bit_length((uint32_t)last) : 0;
    g = tsym(&io, cost ? NULL : &m->last[ps], cost ? cost->last[ps] : NULL, g);
    if (g >= 2)
        last = (1 << (g - 1)) + tbits(&io, coding ? last - (1 << (g - 1)) : 0, g - 1);
    else if (!coding)
        last = g;
    uint8_t mag[MMP_TX_PAD * MMP_TX_PAD] = {0}; /* mmp_tx_sig_ctx's */
    for (int i = last; i >= 0; i--) {
        const int pos = scan[i], y = pos >> b, x = pos & (w - 1);
        const uint8_t *t = mag + y * MMP_TX_PAD + x;
        const int dg = y + x;
        int v = coding ? level[pos] : 0;
        int sig = 1;
        if (i < last) {
            const int ctx = mmp_tx_sig_ctx(size_class, dg, t);
            sig = tsym(&io, cost ? NULL : &m->sig[ctx], cost ? cost->sig[ctx] : NULL, v != 0);
        }
        if (!sig)
            continue;
        const int mc = mmp_tx_mag_ctx(size_class, dg, t);
        int absv = v < 0 ? -v : v;
        int s = absv - 1 < MMP_TX_ESCAPE ? absv - 1 : MMP_TX_ESCAPE;
        s = tsym(&io, cost ? NULL : &m->mag[mc], cost ? cost->mag[mc] : NULL, s);
        if (s == MMP_TX_ESCAPE) {
            /* Exp-Golomb of order 0: k ones (at most MMP_TX_MAX_PREFIX),
             * a zero unless k is the most, then k bits. */
            const int rem = absv - 1 - MMP_TX_ESCAPE;
            const int kk = coding ? mmp_bit_length((uint32_t)rem + 1) - 1 : 0;
            int k = 0;
            for (; k < MMP_TX_MAX_PREFIX; k++) {
                const int e = k < MMP_TX_EG_CTX ? k : MMP_TX_EG_CTX - 1;
                if (!tsym(&io, cost ? NULL : &m->eg[e], cost ? cost->eg[e] : NULL, k < kk))
                    break;
            }
            const int low = tbits(&io, coding ? rem + 1 - (1 << k) : 0, k);
            absv = MMP_TX_ESCAPE + 1 + (1 << k) - 1 + low;
        } else {
            absv = s + 1;
        }
        const int neg = tbits(&io, v < 0, 1);
        if (!coding)
            level[pos] = neg ? -absv : absv;
        mag[y * MMP_TX_PAD + x] = (uint8_t)(absv < 15 ? absv : 15);
    }
    return io.bits;
}
