/* MS-SSIM after Wang's msssim.m (common/perceptual.h). */
#include <math.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/perceptual.h"

#define LEVELS 5
#define WIN 11

static const double level_weight[LEVELS] = {0.0448, 0.2856, 0.3001, 0.2363, 0.1333};

/* fspecial('gaussian', 11, 1.5) is the outer product of this normalised
 * 1-D window with itself. */
static void gaussian_window(double g[WIN])
{
    double sum = 0;
    for (int i = 0; i < WIN; i++) {
        const double x = i - WIN / 2;
        g[i] = exp(-x * x / (2.0 * 1.5 * 1.5));
        sum += g[i];
    }
    for (int i = 0; i < WIN; i++)
        g[i] /= sum;
}

/* The means of the SSIM map and of the contrast-structure map of a and b
 * (w x h), over the windows that fit in the image. */
static int level_means(const double *a, const double *b, int w, int h, const double g[WIN],
                       double *mssim, double *mcs)
{
    const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
    const int ow = w - WIN + 1, oh = h - WIN + 1;
    double *col = malloc(sizeof(double) * 5 * (size_t)w);
    if (!col)
        return MMP_ENOMEM;
    double *ca = col, *cb = col + w, *caa = col + 2 * w, *cbb = col + 3 * w, *cab = col + 4 * w;
    double sum_ssim = 0, sum_cs = 0;
    for (int y = 0; y < oh; y++) {
        /* the window's column sums of this row of outputs, then across */
        for (int x = 0; x < w; x++) {
            double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
            for (int k = 0; k < WIN; k++) {
                const double p = a[(size_t)(y + k) * w + x], q = b[(size_t)(y + k) * w + x];
                sa += g[k] * p;
                sb += g[k] * q;
                saa += g[k] * (p * p);
                sbb += g[k] * (q * q);
                sab += g[k] * (p * q);
            }
            ca[x] = sa;
            cb[x] = sb;
            caa[x] = saa;
            cbb[x] = sbb;
            cab[x] = sab;
        }
        for (int x = 0; x < ow; x++) {
            double mu1 = 0, mu2 = 0, e11 = 0, e22 = 0, e12 = 0;
            for (int k = 0; k < WIN; k++) {
                mu1 += g[k] * ca[x + k];
                mu2 += g[k] * cb[x + k];
                e11 += g[k] * caa[x + k];
                e22 += g[k] * cbb[x + k];
                e12 += g[k] * cab[x + k];
            }
            const double s11 = e11 - mu1 * mu1, s22 = e22 - mu2 * mu2, s12 = e12 - mu1 * mu2;
            const double cs = (2 * s12 + c2) / (s11 + s22 + c2);
            sum_cs += cs;
            sum_ssim += (2 * mu1 * mu2 + c1) / (mu1 * mu1 + mu2 * mu2 + c1) * cs;
        }
    }
    free(col);
    *mssim = sum_ssim / ((double)ow * oh);
    *mcs = sum_cs / ((double)ow * oh);
    return MMP_OK;
}

/* imfilter(im, ones(2)/4, 'symmetric', 'same') then im(1:2:end, 1:2:end),
 * in place: each output reads samples at or after its own index. */
static void halve(double *p, int w, int h, int *ow, int *oh)
{
    const int nw = (w + 1) / 2, nh = (h + 1) / 2;
    for (int y = 0; y < nh; y++) {
        const double *r0 = p + (size_t)(2 * y) * w;
        const double *r1 = 2 * y + 1 < h ? r0 + w : r0;
        for (int x = 0; x < nw; x++) {
            const int x1 = 2 * x + 1 < w ? 2 * x + 1 : 2 * x;
            p[(size_t)y * nw + x] = (r0[2 * x] + r0[x1] + r1[2 * x] + r1[x1]) / 4;
        }
    }
    *ow = nw;
    *oh = nh;
}

/* The grey level (luma of RGB) of each pixel on the scale 0..255. */
static void to_grey(const uint16_t *s, int channels, size_t n, int maxval, double *out)
{
    const double k = 255.0 / maxval;
    for (size_t i = 0; i < n; i++, s += channels) {
        if (channels >= 3)
            out[i] = (0.299 * s[0] + 0.587 * s[1] + 0.114 * s[2]) * k;
        else
            out[i] = s[0] * k;
    }
}

int mmp_metric_msssim(const uint16_t *a, const uint16_t *b, int w, int h, int channels,
                      int maxval, double *score)
{
    if (!a || !b || !score || w <= 0 || h <= 0 || channels < 1 || channels > 4 || maxval < 1 ||
        maxval > 65535)
        return MMP_EINVAL;
    int sw = w, sh = h;
    for (int l = 1; l < LEVELS; l++) {
        sw = (sw + 1) / 2;
        sh = (sh + 1) / 2;
    }
    if (sw < WIN || sh < WIN)
        return MMP_EINVAL;
    const size_t n = (size_t)w * h;
    double *pa = malloc(sizeof(double) * n), *pb = malloc(sizeof(double) * n);
    if (!pa || !pb) {
        free(pa);
        free(pb);
        return MMP_ENOMEM;
    }
    to_grey(a, channels, n, maxval, pa);
    to_grey(b, channels, n, maxval, pb);
    double g[WIN];
    gaussian_window(g);
    double result = 1;
    int err = MMP_OK;
    for (int l = 0; l < LEVELS && err == MMP_OK; l++) {
        double mssim, mcs;
        err = level_means(pa, pb, w, h, g, &mssim, &mcs);
        if (err)
            break;
        if (l < LEVELS - 1) {
            result *= pow(mcs, level_weight[l]);
            int nw, nh;
            halve(pa, w, h, &nw, &nh);
            halve(pb, w, h, &nw, &nh);
            w = nw;
            h = nh;
        } else {
            result *= pow(mssim, level_weight[l]);
        }
    }
    free(pa);
    free(pb);
    if (err)
        return err;
    *score = result;
    return MMP_OK;
}
