/* Planes and channels: colour transforms and chroma resampling (docs/format.md section 7). */
#include "mmp/common/colour.h"

#include <stdlib.h>
#include <string.h>

#include "common/arith.h"

/* The reversible colour transforms (section 7.2): the permutations of R, G
 * and B taken as A, B, C, in lexicographic order. */
static const uint8_t rct_order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                        {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

const uint8_t *mmp_rct_order(int transform)
{
    return rct_order[(transform - MMP_TRANSFORM_RCT) / 7];
}

/* Whether plane p (1 or 2) of a reversible colour transform holds a
 * difference, at maxval 2M: B's of types 2 to 6, C's of types 1, 3, 5, 6. */
static int rct_difference(int transform, int p)
{
    const int type = (transform - MMP_TRANSFORM_RCT) % 7;
    return p == 1 ? type >= 2 : type == 1 || type == 3 || type >= 5;
}

void mmp_layout_of(const mmp_header *h, mmp_layout *l)
{
    memset(l, 0, sizeof *l);
    l->nplanes = (int)h->planes;
    l->ncolour = h->planes >= 3 ? 3 : 1;
    l->alpha = (int)h->alpha;
    l->transform = (int)h->transform;
    l->chroma = (int)h->chroma;
    l->width = (int)h->width;
    l->height = (int)h->height;
    l->maxval = (int)h->maxval;
    for (int p = 0; p < l->nplanes; p++) {
        const int chroma = p == 1 || p == 2;
        const int sub = l->ncolour == 3 && chroma && l->chroma == MMP_CHROMA_420;
        l->w[p] = sub ? (l->width + 1) / 2 : l->width;
        l->h[p] = sub ? (l->height + 1) / 2 : l->height;
        const int wide = l->ncolour == 3 && chroma &&
                         (l->transform == MMP_TRANSFORM_YCOCG_R ||
                          (mmp_is_rct(l->transform) && rct_difference(l->transform, p)));
        l->maxv[p] = wide ? 2 * l->maxval : l->maxval;
    }
}


/* The mean of cnt samples summing to sum, halves rounded up: the encoder's
 * 4:2:0 chroma and the chroma planes' luma reference (section 7.1). */
static inline int64_t mean_half_up(int64_t sum, int64_t cnt)
{
    return (2 * sum + cnt) / (2 * cnt);
}

static inline int clip(int64_t v, int maxval)
{
    return v < 0 ? 0 : v > maxval ? maxval : (int)v;
}

/* BT.601 full range in 16-bit fixed point (the JPEG/JFIF matrix). */
enum {
    YR = 19595, YG = 38470, YB = 7471,        /* sum 65536 */
    UR = -11059, UG = -21709, UB = 32768,     /* sum 0 */
    VR = 32768, VG = -27439, VB = -5329,      /* sum 0 */
    RV = 91881, GU = -22554, GV = -46802, BU = 116130,
    HALF16 = 32768
};

/* YCoCg-R of (a, b, c) as (R, G, B), and back. */
static void ycocg_forward(int a, int b, int c, int m, int *y, int *u, int *v)
{
    const int co = a - c, t = c + (int)mmp_floor_shift(co, 1), cg = b - t;
    *y = t + (int)mmp_floor_shift(cg, 1);
    *u = co + m;
    *v = cg + m;
}

static void ycocg_inverse(int y, int u, int v, int m, int *a, int *b, int *c)
{
    const int co = u - m, cg = v - m;
    const int t = y - (int)mmp_floor_shift(cg, 1);
    *b = cg + t;
    *c = t - (int)mmp_floor_shift(co, 1);
    *a = *c + co;
}

void mmp_rct_forward(int transform, int m, const int rgb[3], int planes[3])
{
    const uint8_t *o = mmp_rct_order(transform);
    const int type = (transform - MMP_TRANSFORM_RCT) % 7;
    const int a = rgb[o[0]], b = rgb[o[1]], c = rgb[o[2]];
    if (type == 6) {
        ycocg_forward(a, b, c, m, &planes[0], &planes[1], &planes[2]);
        return;
    }
    planes[0] = a;
    planes[1] = type >= 4 ? b - (int)mmp_floor_shift(a + c, 1) + m : type >= 2 ? b - a + m : b;
    planes[2] = type & 1 ? c - a + m : c;
}

/* The inverse, each channel clipped to [0, m]. */
static void rct_inverse(int transform, int m, int y, int u, int v, uint16_t *rgb)
{
    const uint8_t *o = mmp_rct_order(transform);
    const int type = (transform - MMP_TRANSFORM_RCT) % 7;
    int a = y, b, c;
    if (type == 6) {
        ycocg_inverse(y, u, v, m, &a, &b, &c);
    } else {
        c = type & 1 ? v - m + a : v;
        b = type >= 4 ? u - m + (int)mmp_floor_shift(a + c, 1) : type >= 2 ? u - m + a : u;
    }
    rgb[o[0]] = (uint16_t)clip(a, m);
    rgb[o[1]] = (uint16_t)clip(b, m);
    rgb[o[2]] = (uint16_t)clip(c, m);
}

static void forward(const mmp_layout *l, int r, int g, int b, int *y, int *u, int *v)
{
    const int m = l->maxval;
    if (mmp_is_rct(l->transform)) {
        int p[3];
        mmp_rct_forward(l->transform, m, (const int[3]){r, g, b}, p);
        *y = p[0];
        *u = p[1];
        *v = p[2];
    } else if (l->transform == MMP_TRANSFORM_RGB) {
        *y = r;
        *u = g;
        *v = b;
    } else if (l->transform == MMP_TRANSFORM_YCOCG_R) {
        ycocg_forward(r, g, b, m, y, u, v);
    } else {
        const int64_t off = (int64_t)((m + 1) / 2) << 16;
        *y = (int)(((int64_t)YR * r + (int64_t)YG * g + (int64_t)YB * b + HALF16) >> 16);
        *u = clip((UR * (int64_t)r + UG * (int64_t)g + UB * (int64_t)b + off + HALF16) >> 16, m);
        *v = clip((VR * (int64_t)r + VG * (int64_t)g + VB * (int64_t)b + off + HALF16) >> 16, m);
    }
}

static void inverse(const mmp_layout *l, int y, int u, int v, uint16_t *rgb)
{
    const int m = l->maxval;
    if (mmp_is_rct(l->transform)) {
        rct_inverse(l->transform, m, y, u, v, rgb);
    } else if (l->transform == MMP_TRANSFORM_RGB) {
        rgb[0] = (uint16_t)y;
        rgb[1] = (uint16_t)u;
        rgb[2] = (uint16_t)v;
    } else if (l->transform == MMP_TRANSFORM_YCOCG_R) {
        int r, g, b;
        ycocg_inverse(y, u, v, m, &r, &g, &b);
        rgb[0] = (uint16_t)clip(r, m);
        rgb[1] = (uint16_t)clip(g, m);
        rgb[2] = (uint16_t)clip(b, m);
    } else {
        const int64_t du = u - (m + 1) / 2, dv = v - (m + 1) / 2;
        rgb[0] = (uint16_t)clip(y + mmp_floor_shift(RV * dv + HALF16, 16), m);
        rgb[1] = (uint16_t)clip(y + mmp_floor_shift(GU * du + GV * dv + HALF16, 16), m);
        rgb[2] = (uint16_t)clip(y + mmp_floor_shift(BU * du + HALF16, 16), m);
    }
}

void mmp_planes_from_image(const mmp_layout *l, const mmp_image *img, uint16_t *const planes[])
{
    const int w = l->width, h = l->height, ch = mmp_image_channels(img);
    const long n = (long)w * h;
    if (l->ncolour == 1) {
        for (long i = 0; i < n; i++)
            planes[0][i] = img->pix[i * ch];
    } else {
        /* Pixel by pixel, or for 4:2:0 by 2 x 2 groups (those pixels of the
         * group that are inside the image), whose chroma is the mean, halves
         * rounded up; the transform runs once per pixel either way. */
        const int step = l->chroma == MMP_CHROMA_420 ? 2 : 1;
        for (int y0 = 0; y0 < h; y0 += step)
            for (int x0 = 0; x0 < w; x0 += step) {
                int64_t su = 0, sv = 0, cnt = 0;
                for (int y = y0; y < y0 + step && y < h; y++)
                    for (int x = x0; x < x0 + step && x < w; x++) {
                        const uint16_t *px = img->pix + ((long)y * w + x) * ch;
                        int yy, u, v;
                        forward(l, px[0], px[1], px[2], &yy, &u, &v);
                        planes[0][(long)y * w + x] = (uint16_t)yy;
                        su += u;
                        sv += v;
                        cnt++;
                    }
                const long c = (long)(y0 / step) * l->w[1] + x0 / step;
                planes[1][c] = (uint16_t)mean_half_up(su, cnt);
                planes[2][c] = (uint16_t)mean_half_up(sv, cnt);
            }
    }
    if (l->alpha != MMP_ALPHA_NONE)
        for (long i = 0; i < n; i++)
            planes[l->nplanes - 1][i] = img->pix[i * ch + ch - 1];
}

/* Chroma sample (i, j) of a w x h plane clamped to it. */
static inline int at(const uint16_t *c, int w, int h, int i, int j)
{
    i = i < 0 ? 0 : i >= h ? h - 1 : i;
    j = j < 0 ? 0 : j >= w ? w - 1 : j;
    return c[(long)i * w + j];
}

/* Pixel (y, x) of a 4:2:0 chroma plane brought to full resolution: each
 * chroma sample sits between its 2 x 2 pixels, weights 3/4 and 1/4 per
 * direction (section 7.3). */
static inline int upsample(const uint16_t *c, int w, int h, int y, int x)
{
    const int i0 = y >> 1, i1 = (y & 1) ? i0 + 1 : i0 - 1;
    const int j0 = x >> 1, j1 = (x & 1) ? j0 + 1 : j0 - 1;
    return (9 * at(c, w, h, i0, j0) + 3 * at(c, w, h, i0, j1) + 3 * at(c, w, h, i1, j0) +
            at(c, w, h, i1, j1) + 8) >> 4;
}

void mmp_planes_to_pixels(const mmp_layout *l, const uint16_t *const planes[], uint16_t *pix,
                          long stride)
{
    const int w = l->width, h = l->height, ch = l->nplanes;
    const int sub = l->chroma == MMP_CHROMA_420;
    for (int y = 0; y < h; y++) {
        uint16_t *row = pix + (long)y * stride * ch;
        const long i0 = (long)y * w;
        if (l->ncolour == 1) {
            for (int x = 0; x < w; x++)
                row[x * ch] = planes[0][i0 + x];
        } else {
            for (int x = 0; x < w; x++) {
                const long i = i0 + x;
                const int u = sub ? upsample(planes[1], l->w[1], l->h[1], y, x) : planes[1][i];
                const int v = sub ? upsample(planes[2], l->w[2], l->h[2], y, x) : planes[2][i];
                inverse(l, planes[0][i], u, v, row + x * ch);
            }
        }
        if (l->alpha != MMP_ALPHA_NONE)
            for (int x = 0; x < w; x++)
                row[x * ch + ch - 1] = planes[l->nplanes - 1][i0 + x];
    }
}

void mmp_image_from_planes(const mmp_layout *l, const uint16_t *const planes[], mmp_image *img)
{
    mmp_planes_to_pixels(l, planes, img->pix, l->width);
}

int32_t *mmp_cfl_reference(const mmp_layout *l, int p, const uint16_t *luma, int pw, int ph)
{
    if (!mmp_layout_has_cfl(l, p))
        return NULL;
    int32_t *ref = malloc(sizeof(int32_t) * (size_t)pw * ph);
    if (!ref)
        return NULL;
    const int step = l->chroma == MMP_CHROMA_420 ? 2 : 1;
    for (int i = 0; i < ph; i++) {
        const int ci = i < l->h[p] ? i : l->h[p] - 1;
        for (int j = 0; j < pw; j++) {
            const int cj = j < l->w[p] ? j : l->w[p] - 1;
            int64_t sum = 0, cnt = 0;
            for (int y = ci * step; y < ci * step + step && y < l->height; y++)
                for (int x = cj * step; x < cj * step + step && x < l->width; x++) {
                    sum += luma[(long)y * l->width + x];
                    cnt++;
                }
            ref[(long)i * pw + j] = (int32_t)mean_half_up(sum, cnt);
        }
    }
    return ref;
}

double mmp_plane_weight(const mmp_layout *l, int p)
{
    if (l->ncolour == 1 || p == 3)
        return 1.0;
    /* Without a transform each plane is one of the three channels (near
     * enough for the reversible ones, which only lossless files use). */
    if (l->transform == MMP_TRANSFORM_RGB || mmp_is_rct(l->transform))
        return p > 0 && l->chroma == MMP_CHROMA_420 ? 4.0 / 3 : 1.0 / 3;
    if (p == 0)
        return 1.0;
    /* The squares of the plane's column of the inverse matrix, over three
     * channels. */
    double w;
    if (l->transform == MMP_TRANSFORM_YCOCG_R)
        w = p == 1 ? (0.25 + 0.25) / 3 : (0.25 + 0.25 + 0.25) / 3;
    else if (p == 1)
        w = ((double)GU * GU + (double)BU * BU) / (65536.0 * 65536.0) / 3;
    else
        w = ((double)RV * RV + (double)GV * GV) / (65536.0 * 65536.0) / 3;
    /* A subsampled sample's error reaches about four pixels. */
    return l->chroma == MMP_CHROMA_420 ? 4 * w : w;
}
