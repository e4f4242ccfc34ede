/* Exact alpha planes: MED prediction and adaptive coding of the difference (docs/format.md 7.4). */
#include "mmp/common/alpha.h"

#include <stdlib.h>

#include "common/bits.h"
#include "common/error.h"

/* Contexts: activity 0..2 from the neighbours, and whether the previous
 * sample (raster order) was predicted exactly. */
#define ACTS 3

typedef struct alpha_models {
    mmp_model zero[ACTS * 2]; /* 0: difference 0, 1: not */
    mmp_model sign[ACTS];     /* 0: positive, 1: negative */
    mmp_model len[ACTS];      /* bit length of |difference| less 1, 0..15 */
} alpha_models;

static void models_init(alpha_models *m)
{
    for (int i = 0; i < ACTS * 2; i++)
        mmp_model_init(&m->zero[i], 2);
    for (int i = 0; i < ACTS; i++) {
        mmp_model_init(&m->sign[i], 2);
        mmp_model_init(&m->len[i], 16);
    }
}

static inline int iabs(int v)
{
    return v < 0 ? -v : v;
}

/* The prediction of sample (y, x) and its activity class. */
static inline int predict(const uint16_t *a, int w, int y, int x, int maxval, int *act)
{
    *act = 0;
    if (y == 0)
        return x == 0 ? maxval : a[x - 1];
    const long i = (long)y * w + x;
    if (x == 0)
        return a[i - w];
    const int l = a[i - 1], t = a[i - w], c = a[i - w - 1];
    const int g = iabs(l - c) + iabs(t - c), small = maxval >> 5 > 1 ? maxval >> 5 : 1;
    *act = g == 0 ? 0 : g <= small ? 1 : 2;
    const int lo = l < t ? l : t, hi = l < t ? t : l;
    return c >= hi ? lo : c <= lo ? hi : l + t - c;
}

int mmp_alpha_encode(mmp_rc_enc *e, const uint16_t *a, int w, int h, int maxval)
{
    alpha_models *m = malloc(sizeof *m);
    if (!m)
        return MMP_ENOMEM;
    models_init(m);
    int prev_zero = 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int act;
            const int p = predict(a, w, y, x, maxval, &act);
            const int r = a[(long)y * w + x] - p;
            mmp_model_encode(e, &m->zero[act * 2 + prev_zero], r != 0);
            prev_zero = r == 0;
            if (r == 0)
                continue;
            mmp_model_encode(e, &m->sign[act], r < 0);
            const unsigned mag = (unsigned)iabs(r);
            const int k = mmp_bit_length(mag) - 1;
            mmp_model_encode(e, &m->len[act], k);
            for (int b = k - 1; b >= 0; b--)
                mmp_rc_encode_bit(e, (int)((mag >> b) & 1));
        }
    free(m);
    return 0;
}

int mmp_alpha_decode(mmp_rc_dec *d, uint16_t *a, int w, int h, int maxval)
{
    alpha_models *m = malloc(sizeof *m);
    if (!m)
        return MMP_ENOMEM;
    models_init(m);
    int prev_zero = 1, err = 0;
    for (int y = 0; y < h && !err; y++) {
        for (int x = 0; x < w && !err; x++) {
            int act;
            const int p = predict(a, w, y, x, maxval, &act);
            int v = p;
            prev_zero = !mmp_model_decode(d, &m->zero[act * 2 + prev_zero]);
            if (!prev_zero) {
                const int neg = mmp_model_decode(d, &m->sign[act]);
                const int k = mmp_model_decode(d, &m->len[act]);
                unsigned mag = 1;
                for (int b = 0; b < k; b++) {
                    const unsigned bit = (unsigned)mmp_rc_decode_bit(d);
                    mag = mag << 1 | bit;
                }
                v = neg ? p - (int)mag : p + (int)mag;
            }
            if (v < 0 || v > maxval)
                err = MMP_EBITSTREAM;
            else
                a[(long)y * w + x] = (uint16_t)v;
        }
        if (d->overrun)
            err = MMP_EBITSTREAM;
    }
    free(m);
    return err;
}
