/* The restoration filter's classes, filtering and syntax (docs/format.md section 7.5). */
#include "filter/restore.h"

#include <stdlib.h>
#include <string.h>

#include "common/arith.h"
#include "common/bits.h"
#include "common/error.h"

const int8_t mmp_rf_tap[MMP_RF_TAPS][2] = {
    {-3, 0},
    {-2, -1}, {-2, 0}, {-2, 1},
    {-1, -2}, {-1, -1}, {-1, 0}, {-1, 1}, {-1, 2},
    {0, -3}, {0, -2}, {0, -1},
};

int mmp_restore_init(mmp_restore *r, int w, int h)
{
    memset(r, 0, sizeof *r);
    r->nfilters = 1;
    r->rw = (w + (1 << MMP_RF_LOG2_REGION) - 1) >> MMP_RF_LOG2_REGION;
    r->rh = (h + (1 << MMP_RF_LOG2_REGION) - 1) >> MMP_RF_LOG2_REGION;
    r->on = malloc((size_t)r->rw * r->rh);
    if (!r->on)
        return MMP_ENOMEM;
    memset(r->on, 1, (size_t)r->rw * r->rh);
    return 0;
}

void mmp_restore_free(mmp_restore *r)
{
    free(r->on);
    r->on = NULL;
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static inline int32_t iabs32(int32_t v)
{
    return v < 0 ? -v : v;
}

/* Sample (y, x) with both coordinates clamped into the plane. */
static inline int32_t at(const int32_t *rec, int stride, int w, int h, int y, int x)
{
    return rec[(long)clampi(y, 0, h - 1) * stride + clampi(x, 0, w - 1)];
}

/* The four gradients of position (v, u) (any coordinates: every read is
 * clamped into the plane): vertical, horizontal and the two diagonals. */
static inline void gradients(const int32_t *rec, int stride, int w, int h, int v, int u,
                             int32_t *g)
{
    int32_t c, n, s, wv, e, nw, ne, sw, se;
    if (v >= 1 && u >= 1 && v + 1 < h && u + 1 < w) {
        const int32_t *p = rec + (long)v * stride + u;
        c = p[0];
        n = p[-stride];
        s = p[stride];
        wv = p[-1];
        e = p[1];
        nw = p[-stride - 1];
        ne = p[-stride + 1];
        sw = p[stride - 1];
        se = p[stride + 1];
    } else {
        c = at(rec, stride, w, h, v, u);
        n = at(rec, stride, w, h, v - 1, u);
        s = at(rec, stride, w, h, v + 1, u);
        wv = at(rec, stride, w, h, v, u - 1);
        e = at(rec, stride, w, h, v, u + 1);
        nw = at(rec, stride, w, h, v - 1, u - 1);
        ne = at(rec, stride, w, h, v - 1, u + 1);
        sw = at(rec, stride, w, h, v + 1, u - 1);
        se = at(rec, stride, w, h, v + 1, u + 1);
    }
    g[0] = iabs32(2 * c - n - s);
    g[1] = iabs32(2 * c - wv - e);
    g[2] = iabs32(2 * c - nw - se);
    g[3] = iabs32(2 * c - ne - sw);
}

/* The class of a group from its gradients summed over the 6 x 6 window. */
static int class_of(int64_t gv, int64_t gh, int64_t gd0, int64_t gd1, int maxval)
{
    const int64_t a = (gv + gh) * 255 / ((int64_t)maxval * 36);
    const int bl = mmp_bit_length((uint64_t)a);
    const int act = bl < MMP_RF_ACTS - 1 ? bl : MMP_RF_ACTS - 1;
    const int64_t hv_max = gh > gv ? gh : gv, hv_min = gh > gv ? gv : gh;
    const int64_t d_max = gd0 > gd1 ? gd0 : gd1, d_min = gd0 > gd1 ? gd1 : gd0;
    int dir;
    if (hv_max <= 2 * hv_min && d_max <= 2 * d_min)
        dir = 0;
    else if (hv_max * d_min > d_max * hv_min)
        dir = 1 + 2 * (gh > gv ? 0 : 1) + (2 * hv_max > 9 * hv_min);
    else
        dir = 5 + 2 * (gd0 > gd1 ? 0 : 1) + (2 * d_max > 9 * d_min);
    return dir * MMP_RF_ACTS + act;
}

static inline int region_on(const mmp_restore *r, int y, int x)
{
    return r->on[(y >> MMP_RF_LOG2_REGION) * r->rw + (x >> MMP_RF_LOG2_REGION)];
}

/* The four gradients of row v at the columns u = -1 .. cols - 2, into g
 * (four arrays of cols, column u at u + 1): away from the edges in loops
 * the compiler can vectorise, the rest through gradients(). */
static void gradient_row(const int32_t *rec, int stride, int w, int h, int v, int cols,
                         int32_t *g)
{
    int32_t *g0 = g + 1, *g1 = g0 + cols, *g2 = g1 + cols, *g3 = g2 + cols;
    int u0 = cols, u1 = cols; /* the columns [u0, u1) are inside */
    if (v >= 1 && v + 1 < h && w >= 3) {
        const int32_t *p = rec + (long)v * stride, *n = p - stride, *s = p + stride;
        u0 = 1;
        u1 = w - 1;
        for (int u = u0; u < u1; u++) {
            const int32_t c2 = 2 * p[u];
            g0[u] = iabs32(c2 - n[u] - s[u]);
            g1[u] = iabs32(c2 - p[u - 1] - p[u + 1]);
            g2[u] = iabs32(c2 - n[u - 1] - s[u + 1]);
            g3[u] = iabs32(c2 - n[u + 1] - s[u - 1]);
        }
    }
    for (int u = -1; u <= cols - 2; u++) {
        if (u == u0 && u1 > u0) {
            u = u1 - 1;
            continue;
        }
        int32_t d[4];
        gradients(rec, stride, w, h, v, u, d);
        g0[u] = d[0];
        g1[u] = d[1];
        g2[u] = d[2];
        g3[u] = d[3];
    }
}

/*
 * Group row by group row: the gradients of the six rows y0 - 1 .. y0 + 4 at
 * every column u = -1 .. 4 gw (the last two rows are the next band's first
 * two), summed down each column, then over each group's six columns.
 */
int mmp_restore_classify(const int32_t *rec, int stride, int w, int h, int maxval,
                         const mmp_restore *r, uint8_t *cls)
{
    return mmp_restore_classify_rows(rec, stride, w, h, maxval, r, 0, (h + 3) / 4, cls);
}

int mmp_restore_classify_rows(const int32_t *rec, int stride, int w, int h, int maxval,
                              const mmp_restore *r, int g0, int g1, uint8_t *cls)
{
    const int gw = (w + 3) / 4, cols = 4 * gw + 2;
    int32_t *row = malloc(sizeof(int32_t) * 6 * 4 * (size_t)cols); /* [row][gradient][column] */
    int64_t *col = malloc(sizeof(int64_t) * 4 * (size_t)cols);
    if (!row || !col) {
        free(row);
        free(col);
        return MMP_ENOMEM;
    }
    for (int gy = g0; gy < g1; gy++) {
        const int y0 = 4 * gy;
        if (gy > g0)
            memmove(row, row + 4 * 4 * (size_t)cols, sizeof(int32_t) * 2 * 4 * (size_t)cols);
        for (int i = gy > g0 ? 2 : 0; i < 6; i++)
            gradient_row(rec, stride, w, h, y0 - 1 + i, cols, row + (size_t)i * 4 * cols);
        for (int k = 0; k < 4; k++)
            for (int c = 0; c < cols; c++) {
                int64_t t = 0;
                for (int i = 0; i < 6; i++)
                    t += row[((size_t)i * 4 + k) * cols + c];
                col[(size_t)k * cols + c] = t;
            }
        for (int gx = 0; gx < gw; gx++) {
            uint8_t v = 0;
            if (!r || region_on(r, y0, 4 * gx)) {
                int64_t sum[4] = {0, 0, 0, 0};
                for (int k = 0; k < 4; k++)
                    for (int c = 4 * gx; c < 4 * gx + 6; c++)
                        sum[k] += col[(size_t)k * cols + c];
                v = (uint8_t)class_of(sum[0], sum[1], sum[2], sum[3], maxval);
            }
            cls[(long)gy * gw + gx] = v;
        }
    }
    free(row);
    free(col);
    return 0;
}

/* floor(v / 2^MMP_RF_SHIFT) without shifting a negative value. */
static inline int64_t floor_shift(int64_t v)
{
    return mmp_floor_div(v, 1 << MMP_RF_SHIFT);
}

/* The filter of one sample (y, x) with coefficients c, every read clamped:
 * the formula of docs/format.md 7.5, for samples near the edges. */
static int32_t filter_sample(const int32_t *rec, int stride, int w, int h, int maxval, int y,
                             int x, const int16_t *c)
{
    const int32_t v = at(rec, stride, w, h, y, x);
    int64_t s = 0;
    for (int k = 0; k < MMP_RF_TAPS; k++) {
        const int dy = mmp_rf_tap[k][0], dx = mmp_rf_tap[k][1];
        s += (int64_t)c[k] * (at(rec, stride, w, h, y + dy, x + dx) +
                              at(rec, stride, w, h, y - dy, x - dx) - 2 * v);
    }
    const int64_t o = v + floor_shift(s + (1 << (MMP_RF_SHIFT - 1)));
    return (int32_t)(o < 0 ? 0 : o > maxval ? maxval : o);
}

/* The same for a sample at least 3 away from every edge; off: the taps'
 * offsets in the plane. */
static inline int32_t sample_inside(const int32_t *p, const long *off, int maxval,
                                    const int16_t *c)
{
    const int32_t v2 = 2 * p[0];
    int64_t s = 0;
    for (int k = 0; k < MMP_RF_TAPS; k++)
        s += (int64_t)c[k] * (p[off[k]] + p[-off[k]] - v2);
    const int64_t o = p[0] + floor_shift(s + (1 << (MMP_RF_SHIFT - 1)));
    return (int32_t)(o < 0 ? 0 : o > maxval ? maxval : o);
}

void mmp_restore_rows(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                      int maxval, const uint8_t *cls, int y0, int y1, uint16_t *out,
                      long ostride)
{
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++)
            out[y * ostride + x] = (uint16_t)rec[(long)y * stride + x];
    if (!r->enabled)
        return;
    const int gw = (w + 3) / 4;
    long off[MMP_RF_TAPS];
    for (int k = 0; k < MMP_RF_TAPS; k++)
        off[k] = (long)mmp_rf_tap[k][0] * stride + mmp_rf_tap[k][1];
    int32_t csum[MMP_RF_MAX_FILTERS]; /* each filter's sum of coefficients */
    for (int f = 0; f < r->nfilters && f < MMP_RF_MAX_FILTERS; f++) {
        csum[f] = 0;
        for (int k = 0; k < MMP_RF_TAPS; k++)
            csum[f] += r->coef[f][k];
    }
    for (int y = y0; y < y1; y++) {
        const int in_y = y >= 3 && y + 3 < h;
        for (int gx = 0; gx < gw; gx++) {
            const int x0 = 4 * gx;
            if (!region_on(r, y, x0))
                continue;
            const int f = r->map[cls[(long)(y / 4) * gw + gx]];
            const int16_t *c = r->coef[f];
            if (in_y && x0 >= 3 && x0 + 4 + 3 <= w) {
                /* Four samples away from every edge: sum c_k (a + b - 2 p)
                 * as sum c_k (a + b) - 2 p sum c_k, each part within
                 * 12 * 127 * 2 * 65535, in 32 bits with room to spare. */
                const int32_t *p = rec + (long)y * stride + x0;
                int32_t acc[4] = {0, 0, 0, 0};
                for (int k = 0; k < MMP_RF_TAPS; k++) {
                    const int32_t ck = c[k];
                    const long o = off[k];
                    for (int j = 0; j < 4; j++)
                        acc[j] += ck * (p[j + o] + p[j - o]);
                }
                for (int j = 0; j < 4; j++)
                    acc[j] -= 2 * p[j] * csum[f];
                for (int j = 0; j < 4; j++) {
                    const int64_t v = p[j] + floor_shift((int64_t)acc[j] + (1 << (MMP_RF_SHIFT - 1)));
                    out[y * ostride + x0 + j] = (uint16_t)(v < 0 ? 0 : v > maxval ? maxval : v);
                }
                continue;
            }
            for (int x = x0; x < x0 + 4 && x < w; x++)
                out[y * ostride + x] =
                    (uint16_t)(in_y && x >= 3 && x + 3 < w
                                   ? sample_inside(rec + (long)y * stride + x, off, maxval, c)
                                   : filter_sample(rec, stride, w, h, maxval, y, x, c));
        }
    }
}

int mmp_restore_apply_groups(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                             int maxval, int g0, int g1, uint8_t *cls, uint16_t *out,
                             long ostride)
{
    if (r->enabled && mmp_restore_classify_rows(rec, stride, w, h, maxval, r, g0, g1, cls))
        return MMP_ENOMEM;
    mmp_restore_rows(r, rec, stride, w, h, maxval, cls, 4 * g0, 4 * g1 < h ? 4 * g1 : h, out,
                     ostride);
    return 0;
}

int mmp_restore_apply(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                      int maxval, uint16_t *out)
{
    const int gh = (h + 3) / 4;
    uint8_t *cls = r->enabled ? malloc((size_t)((w + 3) / 4) * gh) : NULL;
    if (r->enabled && !cls)
        return MMP_ENOMEM;
    const int err = mmp_restore_apply_groups(r, rec, stride, w, h, maxval, 0, gh, cls, out, w);
    free(cls);
    return err;
}

/* ---- syntax ---- */

/* Equiprobable bits, most significant first. */
static void put_bits(mmp_rc_enc *e, uint32_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        mmp_rc_encode(e, (v >> i) & 1, 1, 2);
}

static uint32_t get_bits(mmp_rc_dec *d, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        const uint32_t b = mmp_rc_decode_freq(d, 2) & 1;
        mmp_rc_decode_update(d, b, 1, 2);
        v = v << 1 | b;
    }
    return v;
}

/* Models of the syntax, fresh for each plane. */
typedef struct rf_models {
    mmp_model len;        /* bit length of |coefficient|, 0..7 */
    mmp_model map;        /* filter of a class */
    mmp_model on[3];      /* region flag by left + top flags */
} rf_models;

static void models_init(rf_models *m, int nfilters)
{
    mmp_model_init(&m->len, 8);
    mmp_model_init(&m->map, nfilters);
    for (int i = 0; i < 3; i++)
        mmp_model_init(&m->on[i], 2);
}

static int flag_ctx(const mmp_restore *r, int ry, int rx)
{
    return (rx > 0 && r->on[ry * r->rw + rx - 1]) + (ry > 0 && r->on[(ry - 1) * r->rw + rx]);
}

void mmp_restore_write(mmp_rc_enc *e, const mmp_restore *r)
{
    put_bits(e, (uint32_t)(r->enabled != 0), 1);
    if (!r->enabled)
        return;
    rf_models m;
    models_init(&m, r->nfilters);
    put_bits(e, (uint32_t)(r->nfilters - 1), 4);
    for (int k = 0; k < MMP_RF_CLASSES && r->nfilters > 1; k++)
        mmp_model_encode(e, &m.map, r->map[k]);
    for (int f = 0; f < r->nfilters; f++)
        for (int k = 0; k < MMP_RF_TAPS; k++) {
            const int v = r->coef[f][k], a = v < 0 ? -v : v, n = mmp_bit_length((uint64_t)a);
            mmp_model_encode(e, &m.len, n);
            if (n) {
                put_bits(e, v < 0, 1);
                put_bits(e, (uint32_t)a, n - 1);
            }
        }
    for (int ry = 0; ry < r->rh; ry++)
        for (int rx = 0; rx < r->rw; rx++)
            mmp_model_encode(e, &m.on[flag_ctx(r, ry, rx)], r->on[ry * r->rw + rx]);
}

int mmp_restore_read(mmp_rc_dec *d, mmp_restore *r)
{
    r->enabled = (int)get_bits(d, 1);
    if (!r->enabled)
        return 0;
    r->nfilters = (int)get_bits(d, 4) + 1;
    rf_models m;
    models_init(&m, r->nfilters);
    for (int k = 0; k < MMP_RF_CLASSES; k++)
        r->map[k] = (uint8_t)(r->nfilters > 1 ? mmp_model_decode(d, &m.map) : 0);
    for (int f = 0; f < r->nfilters; f++)
        for (int k = 0; k < MMP_RF_TAPS; k++) {
            const int n = mmp_model_decode(d, &m.len);
            int v = 0;
            if (n) {
                const int neg = (int)get_bits(d, 1);
                v = (int)((1u << (n - 1)) | get_bits(d, n - 1));
                v = neg ? -v : v;
            }
            r->coef[f][k] = (int16_t)v;
        }
    for (int ry = 0; ry < r->rh; ry++)
        for (int rx = 0; rx < r->rw; rx++)
            r->on[ry * r->rw + rx] = (uint8_t)mmp_model_decode(d, &m.on[flag_ctx(r, ry, rx)]);
    return 0;
}
