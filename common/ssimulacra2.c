/* SSIMULACRA 2 after libjxl's tools/ssimulacra2.cc (common/perceptual.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/perceptual.h"

#define SCALES 6

/* libjxl's opsin absorbance matrix and bias (lib/jxl/cms/opsin_params.h),
 * float constants as libjxl has them. */
static const double opsin[3][3] = {
    {0.30f, 1.0f - 0.078f - 0.30f, 0.078f},
    {0.23f, 1.0f - 0.078f - 0.23f, 0.078f},
    {0.24342268924547819f, 0.20476744424496821f, 1.0f - 0.24342268924547819f - 0.20476744424496821f},
};
static const double opsin_bias = 0.0037930732552754493f;

/* The weights of the 108 norms: for each channel X, Y, B, each scale, each
 * norm (1, 4): SSIM, ringing, blur. */
static const double weight[108] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0,
    0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271, 0.00015231632783718752,
    0.0, 0.0016406437456599754, 0.0, 1.8422455520539298, 11.441172603757666, 0.0,
    0.0007989109436015163, 0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0,
    0.0007289346991508072, 0.9677937080626833, 0.0, 0.00014003424285435884, 0.9981766977854967,
    0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0, 0.0013648766163243398, 0.0, 0.0, 0.0,
    0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262, 0.0006235601634041466, 0.0, 0.0,
    6.683678146179332, 0.00037724407979611296, 1.027889937768264, 225.20515300849274, 0.0, 0.0,
    19.213238186143016, 0.0011401524586618361, 0.001237755635509985, 176.39317598450694, 0.0, 0.0,
    24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0,
    0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833,
    0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0,
    95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493,
    171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0, 0.0005130064588990679, 0.0,
    0.00010854057858411537};

/* Charalampidis' recursive Gaussian (libjxl's CreateRecursiveGaussian):
 * three second-order terms k = 1, 3, 5, each
 *     y[n] = n2 * (in[n - N - 1] + in[n + N - 1]) - d1 * y[n - 1] - y[n - 2]
 * from n = 1 - N with zero state, the output at n the sum of the terms. */
typedef struct {
    int radius;
    double n2[3], d1[3];
} recursive_gaussian;

static void make_gaussian(recursive_gaussian *rg, double sigma)
{
    const double pi = 3.141592653589793238;
    const double radius = round(3.2795 * sigma + 0.2546);
    const double w1 = pi / (2.0 * radius);
    const double omega[3] = {w1, 3.0 * w1, 5.0 * w1};
    const double p1 = +1.0 / tan(0.5 * omega[0]);
    const double p3 = -1.0 / tan(0.5 * omega[1]);
    const double p5 = +1.0 / tan(0.5 * omega[2]);
    const double r1 = +p1 * p1 / sin(omega[0]);
    const double r3 = -p3 * p3 / sin(omega[1]);
    const double r5 = +p5 * p5 / sin(omega[2]);
    double rho[3];
    for (int i = 0; i < 3; i++)
        rho[i] = exp(-0.5 * sigma * sigma * omega[i] * omega[i]) / radius;
    const double d13 = p1 * r3 - r1 * p3, d35 = p3 * r5 - r3 * p5, d51 = p5 * r1 - r5 * p1;
    const double zeta15 = d35 / d13, zeta35 = d51 / d13;
    /* beta = A^-1 gamma, A = {{p1, p3, p5}, {r1, r3, r5}, {zeta15, zeta35, 1}} */
    const double a[3][3] = {{p1, p3, p5}, {r1, r3, r5}, {zeta15, zeta35, 1}};
    const double gam[3] = {1, radius * radius - sigma * sigma,
                           zeta15 * rho[0] + zeta35 * rho[1] + rho[2]};
    const double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                       a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                       a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    double inv[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            /* cofactor of a[j][i] over det */
            const int r0 = (j + 1) % 3, r1i = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            inv[i][j] = (a[r0][c0] * a[r1i][c1] - a[r0][c1] * a[r1i][c0]) / det;
        }
    rg->radius = (int)radius;
    for (int i = 0; i < 3; i++) {
        const double beta = inv[i][0] * gam[0] + inv[i][1] * gam[1] + inv[i][2] * gam[2];
        rg->n2[i] = -beta * cos(omega[i] * (radius + 1.0));
        rg->d1[i] = -2.0 * cos(omega[i]);
    }
}

/* One pass of the recursive Gaussian along `len` samples of in, `step` apart
 * (a row: 1; a column: the width), into out, same layout. */
static void blur_line(const recursive_gaussian *rg, const double *in, double *out, int len,
                      size_t step)
{
    const int n_rad = rg->radius;
    double prev[3] = {0, 0, 0}, prev2[3] = {0, 0, 0};
    for (int n = 1 - n_rad; n < len; n++) {
        const int left = n - n_rad - 1, right = n + n_rad - 1;
        const double sum = (left >= 0 ? in[(size_t)left * step] : 0.0) +
                           (right < len ? in[(size_t)right * step] : 0.0);
        double o = 0;
        for (int k = 0; k < 3; k++) {
            const double y = rg->n2[k] * sum - rg->d1[k] * prev[k] - prev2[k];
            prev2[k] = prev[k];
            prev[k] = y;
            o += y;
        }
        if (n >= 0)
            out[(size_t)n * step] = o;
    }
}

/* out = blur(a * b), or blur(a) when b is NULL; tmp holds w * h. */
static void blur(const recursive_gaussian *rg, const double *a, const double *b, double *out,
                 double *tmp, double *row, int w, int h)
{
    for (int y = 0; y < h; y++) {
        const double *src = a + (size_t)y * w;
        if (b) {
            for (int x = 0; x < w; x++)
                row[x] = src[x] * b[(size_t)y * w + x];
            src = row;
        }
        blur_line(rg, src, tmp + (size_t)y * w, w, 1);
    }
    for (int x = 0; x < w; x++)
        blur_line(rg, tmp + x, out + x, h, (size_t)w);
}

/* sRGB's transfer function, encoded [0, 1] to linear. */
static double srgb_to_linear(double v)
{
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

/* Channel c (0 X, 1 Y, 2 B) of libjxl's XYB of linear RGB, made positive as
 * ssimulacra2.cc's MakePositiveXYB does. */
static void to_xyb(const double *const lin[3], size_t n, int c, double *out)
{
    const double cbrt_bias = cbrt(opsin_bias);
    for (size_t i = 0; i < n; i++) {
        double m[3];
        for (int j = 0; j < 3; j++) {
            const double v =
                opsin[j][0] * lin[0][i] + opsin[j][1] * lin[1][i] + opsin[j][2] * lin[2][i] +
                opsin_bias;
            m[j] = cbrt(v > 0 ? v : 0) - cbrt_bias;
        }
        const double x = 0.5 * (m[0] - m[1]), y = 0.5 * (m[0] + m[1]);
        out[i] = c == 0 ? x * 14.0 + 0.42 : c == 1 ? y + 0.01 : (m[2] - y) + 0.55;
    }
}

/* 2 x 2 means of each plane, the last row and column repeated on odd sides,
 * in place (each output reads samples at or after its own index). */
static void halve(double *p, int w, int h)
{
    const int nw = (w + 1) / 2, nh = (h + 1) / 2;
    for (int y = 0; y < nh; y++) {
        const double *r0 = p + (size_t)(2 * y) * w;
        const double *r1 = 2 * y + 1 < h ? r0 + w : r0;
        for (int x = 0; x < nw; x++) {
            const int x1 = 2 * x + 1 < w ? 2 * x + 1 : 2 * x;
            p[(size_t)y * nw + x] = (r0[2 * x] + r0[x1] + r1[2 * x] + r1[x1]) * 0.25;
        }
    }
}

static double quartic(double x)
{
    x *= x;
    return x * x;
}

/* The 1- and 4-norms of one channel at one scale: SSIM (2), and ringing and
 * blur (1-norm, 4-norm of each: 4). */
static void channel_norms(const double *x1, const double *x2, const double *mu1,
                          const double *mu2, const double *s11, const double *s22,
                          const double *s12, size_t n, double ssim[2], double edge[4])
{
    const double c2 = 0.0009f;
    double s[2] = {0, 0}, e[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const double m1 = mu1[i], m2 = mu2[i];
        const double num_m = 1.0 - (m1 - m2) * (m1 - m2);
        const double num_s = 2 * (s12[i] - m1 * m2) + c2;
        const double den_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + c2;
        double d = 1.0 - num_m * num_s / den_s;
        d = d > 0 ? d : 0;
        s[0] += d;
        s[1] += quartic(d);
        const double d1 = (1.0 + fabs(x2[i] - m2)) / (1.0 + fabs(x1[i] - m1)) - 1.0;
        const double artifact = d1 > 0 ? d1 : 0, lost = d1 < 0 ? -d1 : 0;
        e[0] += artifact;
        e[1] += quartic(artifact);
        e[2] += lost;
        e[3] += quartic(lost);
    }
    const double inv = 1.0 / (double)n;
    ssim[0] = inv * s[0];
    ssim[1] = sqrt(sqrt(inv * s[1]));
    for (int k = 0; k < 4; k += 2) {
        edge[k] = inv * e[k];
        edge[k + 1] = sqrt(sqrt(inv * e[k + 1]));
    }
}

static double final_score(const double ssim[SCALES][3][2], const double edge[SCALES][3][4],
                          int scales)
{
    double sum = 0;
    int i = 0;
    for (int c = 0; c < 3; c++)
        for (int s = 0; s < scales; s++)
            for (int k = 0; k < 2; k++) {
                sum += weight[i++] * fabs(ssim[s][c][k]);
                sum += weight[i++] * fabs(edge[s][c][k]);
                sum += weight[i++] * fabs(edge[s][c][k + 2]);
            }
    sum *= 0.9562382616834844;
    sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum +
          6.248496625763138e-05 * sum * sum * sum;
    return sum > 0 ? 100.0 - 10.0 * pow(sum, 0.6276336467831387) : 100.0;
}

int mmp_metric_ssimulacra2(const uint16_t *a, const uint16_t *b, int w, int h, int channels,
                           int maxval, double *score)
{
    if (!a || !b || !score || w < 8 || h < 8 || channels < 1 || channels > 4 || maxval < 1 ||
        maxval > 65535)
        return MMP_EINVAL;
    const size_t n = (size_t)w * h;
    /* linear RGB of a and b (6 planes), then per channel: the XYB of each,
     * their blurs, the blurs of the products, a temporary plane */
    double *mem = malloc(sizeof(double) * (14 * n + (size_t)w));
    double *lut = malloc(sizeof(double) * ((size_t)maxval + 1));
    if (!mem || !lut) {
        free(mem);
        free(lut);
        return MMP_ENOMEM;
    }
    for (int v = 0; v <= maxval; v++)
        lut[v] = srgb_to_linear((double)v / maxval);
    double *la[3], *lb[3];
    for (int c = 0; c < 3; c++) {
        la[c] = mem + c * n;
        lb[c] = mem + (3 + c) * n;
    }
    const int colour = channels >= 3;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            la[c][i] = lut[a[i * channels + (colour ? c : 0)]];
            lb[c][i] = lut[b[i * channels + (colour ? c : 0)]];
        }
    free(lut);
    double *x1 = mem + 6 * n, *x2 = mem + 7 * n, *mu1 = mem + 8 * n, *mu2 = mem + 9 * n;
    double *s11 = mem + 10 * n, *s22 = mem + 11 * n, *s12 = mem + 12 * n, *tmp = mem + 13 * n;
    double *row = mem + 14 * n;
    recursive_gaussian rg;
    make_gaussian(&rg, 1.5);

    double ssim[SCALES][3][2], edge[SCALES][3][4];
    int scales = 0;
    for (int s = 0; s < SCALES; s++) {
        /* the reference tests the size before it halves */
        if (w < 8 || h < 8)
            break;
        if (s) {
            for (int c = 0; c < 3; c++) {
                halve(la[c], w, h);
                halve(lb[c], w, h);
            }
            w = (w + 1) / 2;
            h = (h + 1) / 2;
        }
        const size_t m = (size_t)w * h;
        const double *const ca[3] = {la[0], la[1], la[2]}, *const cb[3] = {lb[0], lb[1], lb[2]};
        for (int c = 0; c < 3; c++) {
            to_xyb(ca, m, c, x1);
            to_xyb(cb, m, c, x2);
            blur(&rg, x1, x1, s11, tmp, row, w, h);
            blur(&rg, x2, x2, s22, tmp, row, w, h);
            blur(&rg, x1, x2, s12, tmp, row, w, h);
            blur(&rg, x1, NULL, mu1, tmp, row, w, h);
            blur(&rg, x2, NULL, mu2, tmp, row, w, h);
            channel_norms(x1, x2, mu1, mu2, s11, s22, s12, m, ssim[s][c], edge[s][c]);
        }
        scales++;
    }
    free(mem);
    *score = final_score(ssim, edge, scales);
    return MMP_OK;
}
