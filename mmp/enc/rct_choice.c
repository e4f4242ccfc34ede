/* The choice of a reversible colour transform (mmp/enc/rct_choice.h). */
#include "mmp/enc/rct_choice.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arith.h"
#include "common/bits.h"
#include "mmp/common/colour.h"

/*
 * Every plane of the 42 transforms is, up to its offset and sign (which
 * change no estimate below), one of twelve functions of a pixel's channels:
 * a channel, the difference of two, a channel less the mean of the other
 * two (floor), or YCoCg-R's Y with a channel in G's place. The estimate of
 * a plane: the entropy of the median (LOCO-I) prediction's residual in 16
 * classes of local activity, over a sample of rows, in integer arithmetic
 * (the same choice on every machine).
 */
enum { RAW = 0, DIFF = 3, AVG = 6, YCY = 9, NFUNC = 12 };
/* DIFF + k: the two channels other than k, the lower less the higher. */

static int func_value(int f, const uint16_t *px)
{
    const int k = f % 3, o1 = k == 0 ? 1 : 0, o2 = k == 2 ? 1 : 2;
    switch (f - k) {
    case RAW:
        return px[k];
    case DIFF:
        return px[o1] - px[o2];
    case AVG:
        return px[k] - (int)mmp_floor_shift(px[o1] + px[o2], 1);
    default: {
        const int t = (int)mmp_floor_shift(px[o1] + px[o2], 1);
        return t + (int)mmp_floor_shift(px[k] - t, 1);
    }
    }
}

/* The function of plane p (0..2) of transform index i (0..41). */
static int plane_func(int i, int p)
{
    const uint8_t *o = mmp_rct_order(MMP_TRANSFORM_RCT + i);
    const int type = i % 7, a = o[0], b = o[1], c = o[2];
    /* The difference of channels x and y is DIFF + the third channel. */
    if (type == 6)
        return p == 0 ? YCY + b : p == 1 ? DIFF + b : AVG + b;
    if (p == 0)
        return RAW + a;
    if (p == 1)
        return type >= 4 ? AVG + b : type >= 2 ? DIFF + c : RAW + b;
    return type & 1 ? DIFF + b : RAW + c;
}

/* log2(n) in 1/65536 for n >= 1, by squaring the mantissa. */
static int64_t log2_q16(uint64_t n)
{
    const int k = mmp_bit_length(n) - 1;
    uint64_t x = k >= 31 ? n >> (k - 31) : n << (31 - k); /* in [2^31, 2^32) */
    int64_t r = (int64_t)k << 16;
    for (int b = 15; b >= 0; b--) {
        x = (x * x) >> 31;
        if (x >= ((uint64_t)1 << 32)) {
            x >>= 1;
            r += (int64_t)1 << b;
        }
    }
    return r;
}

#define NCLASS 16
#define NBUCKET 160
/* Residuals below 64 in size are their own bucket; larger ones a bucket per
 * bit length and sign, plus the bits below the leading one. */
static int bucket(int r, int *extra)
{
    const int a = r < 0 ? -r : r;
    if (a < 64) {
        *extra = 0;
        return r + 64;
    }
    const int k = mmp_bit_length((uint64_t)a);
    *extra = k - 1;
    return 128 + 2 * (k - 7) + (r < 0);
}

/* Function f of row y's pixels into out[0 .. w). */
static void func_row(const mmp_image *img, int f, int y, int *out)
{
    const int w = img->width, ch = mmp_image_channels(img);
    const uint16_t *px = img->pix + (size_t)y * w * ch;
    for (int x = 0; x < w; x++)
        out[x] = func_value(f, px + (size_t)x * ch);
}

/* The estimate of function f's plane, in 1/65536 bit; rows: two rows of
 * width ints. */
static int64_t plane_cost(const mmp_image *img, int f, int row_step, uint32_t *hist, int *rows)
{
    const int w = img->width, h = img->height;
    int *up = rows, *cur = rows + w;
    memset(hist, 0, sizeof(uint32_t) * NCLASS * NBUCKET);
    int64_t extra_bits = 0;
    func_row(img, f, 0, cur);
    for (int y = 1; y < h; y += row_step) {
        /* The row above: the last one made when rows are consecutive. */
        int *t = up;
        up = cur;
        cur = t;
        if (row_step > 1)
            func_row(img, f, y - 1, up);
        func_row(img, f, y, cur);
        for (int x = 1; x < w; x++) {
            const int v = cur[x], wv = cur[x - 1], n = up[x], nw = up[x - 1];
            const int ne = x + 1 < w ? up[x + 1] : n;
            const int hi = wv > n ? wv : n, lo = wv < n ? wv : n;
            const int pred = nw >= hi ? lo : nw <= lo ? hi : wv + n - nw;
            const int act = abs(wv - nw) + abs(n - nw) + abs(n - ne);
            const int c = mmp_bit_length((uint64_t)act);
            int extra;
            const int b = bucket(v - pred, &extra);
            hist[(c < NCLASS ? c : NCLASS - 1) * NBUCKET + b]++;
            extra_bits += extra;
        }
    }
    int64_t cost = extra_bits << 16;
    for (int c = 0; c < NCLASS; c++) {
        const uint32_t *hc = hist + c * NBUCKET;
        uint64_t total = 0;
        for (int b = 0; b < NBUCKET; b++)
            total += hc[b];
        if (!total)
            continue;
        cost += (int64_t)total * log2_q16(total);
        for (int b = 0; b < NBUCKET; b++)
            if (hc[b])
                cost -= (int64_t)hc[b] * log2_q16(hc[b]);
    }
    return cost;
}

int mmp_rct_choose(const mmp_image *img)
{
    /* About a million samples a plane at most: every row_step-th row. */
    const int64_t pixels = (int64_t)img->width * img->height;
    const int row_step = pixels > ((int64_t)1 << 20) ? (int)(pixels >> 20) + 1 : 1;
    uint32_t *hist = malloc(sizeof(uint32_t) * NCLASS * NBUCKET);
    int *rows = malloc(sizeof(int) * 2 * (size_t)img->width);
    if (!hist || !rows) {
        free(hist);
        free(rows);
        return MMP_TRANSFORM_YCOCG_R;
    }
    int64_t cost[NFUNC];
    for (int f = 0; f < NFUNC; f++)
        cost[f] = plane_cost(img, f, row_step, hist, rows);
    free(hist);
    free(rows);
    int best = 0;
    int64_t best_cost = INT64_MAX;
    for (int i = 0; i < MMP_RCT_COUNT; i++) {
        const int64_t c = cost[plane_func(i, 0)] + cost[plane_func(i, 1)] + cost[plane_func(i, 2)];
        if (c < best_cost) {
            best_cost = c;
            best = i;
        }
    }
    /* rct-rgb-0 and rct-rgb-6 are RGB and YCoCg-R, which older decoders read. */
    return best == 0 ? MMP_TRANSFORM_RGB : best == 6 ? MMP_TRANSFORM_YCOCG_R
                                                     : MMP_TRANSFORM_RCT + best;
}
