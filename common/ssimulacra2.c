/* SSIMULACRA 2 after libjxl's tools/ssimulacra2.cc (common/perceptual.h).
 *
 * The reference computes its planes in float, and its SSIM map subtracts
 * blurred squares of about 0.2 from each other to get variances against a
 * constant of 0.0009: the rounding of those floats moves its scores by up
 * to about 0.7 from the same formulas in double. So this file repeats the
 * reference's float arithmetic operation for operation, as libjxl 0.12.0
 * runs it on x86-64 through highway's AVX2 target: the fused multiply-adds
 * of its vector code are fmaf() here (the rest is built with
 * -ffp-contract=off, so nothing else is fused), its 4-lane row blur's
 * unrolled coefficients, its cube root by Newton's method, its rational
 * approximation of sRGB's transfer function. The sums of the norms, the
 * weights and the final mapping are in double, as there. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/perceptual.h"

#define SCALES 6

/* libjxl's opsin absorbance matrix and bias (lib/jxl/cms/opsin_params.h). */
static const float opsin[3][3] = {
    {0.30f, 1.0f - 0.078f - 0.30f, 0.078f},
    {0.23f, 1.0f - 0.078f - 0.23f, 0.078f},
    {0.24342268924547819f, 0.20476744424496821f, 1.0f - 0.24342268924547819f - 0.20476744424496821f},
};
static const float opsin_bias = 0.0037930732552754493f;

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

/* Charalampidis' recursive Gaussian as libjxl's CreateRecursiveGaussian
 * makes it (tools/gauss_blur.cc): three second-order terms k = 1, 3, 5,
 *     y[n] = n2 * (in[n - N - 1] + in[n + N - 1]) - d1 * y[n - 1] - y[n - 2]
 * from n = 1 - N with zero state, zero outside the line, the output at n the
 * sum of the terms. The coefficients are solved in double and kept in float,
 * with the ones that run four outputs of a row at once (mul_*[4 k + j]: the
 * weights of the inputs and of the two previous outputs in output j). */
typedef struct {
    int radius;
    float n2[3], d1[3];
    float mul_in[12], mul_prev[12], mul_prev2[12];
} recursive_gaussian;

static void make_gaussian(recursive_gaussian *rg, double sigma)
{
    const double pi = 3.141592653589793238;
    const double radius = round(3.2795 * sigma + 0.2546);
    const double pi_div_2r = pi / (2.0 * radius);
    const double omega[3] = {pi_div_2r, 3.0 * pi_div_2r, 5.0 * pi_div_2r};
    const double p1 = +1.0 / tan(0.5 * omega[0]);
    const double p3 = -1.0 / tan(0.5 * omega[1]);
    const double p5 = +1.0 / tan(0.5 * omega[2]);
    const double r1 = +p1 * p1 / sin(omega[0]);
    const double r3 = -p3 * p3 / sin(omega[1]);
    const double r5 = +p5 * p5 / sin(omega[2]);
    const double neg_half_sigma2 = -0.5 * sigma * sigma, recip_radius = 1.0 / radius;
    double rho[3];
    for (int i = 0; i < 3; i++)
        rho[i] = exp(neg_half_sigma2 * omega[i] * omega[i]) * recip_radius;
    const double d13 = p1 * r3 - r1 * p3, d35 = p3 * r5 - r3 * p5, d51 = p5 * r1 - r5 * p1;
    const double recip_d13 = 1.0 / d13;
    const double zeta15 = d35 * recip_d13, zeta35 = d51 * recip_d13;
    /* beta = A^-1 gamma, A = {{p1, p3, p5}, {r1, r3, r5}, {zeta15, zeta35, 1}},
     * inverted as libjxl's Inv3x3Matrix does (lib/jxl/base/matrix_ops.h) */
    const double m[3][3] = {{p1, p3, p5}, {r1, r3, r5}, {zeta15, zeta35, 1}};
    double t[3][3];
    t[0][0] = m[1][1] * m[2][2] - m[1][2] * m[2][1];
    t[0][1] = m[0][2] * m[2][1] - m[0][1] * m[2][2];
    t[0][2] = m[0][1] * m[1][2] - m[0][2] * m[1][1];
    t[1][0] = m[1][2] * m[2][0] - m[1][0] * m[2][2];
    t[1][1] = m[0][0] * m[2][2] - m[0][2] * m[2][0];
    t[1][2] = m[0][2] * m[1][0] - m[0][0] * m[1][2];
    t[2][0] = m[1][0] * m[2][1] - m[1][1] * m[2][0];
    t[2][1] = m[0][1] * m[2][0] - m[0][0] * m[2][1];
    t[2][2] = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    const double det = m[0][0] * t[0][0] + m[0][1] * t[1][0] + m[0][2] * t[2][0];
    const double idet = 1.0 / det;
    const double gam[3] = {1, radius * radius - sigma * sigma,
                           zeta15 * rho[0] + zeta35 * rho[1] + rho[2]};
    rg->radius = (int)radius;
    for (int i = 0; i < 3; i++) {
        double beta = 0;
        for (int j = 0; j < 3; j++)
            beta += t[i][j] * idet * gam[j];
        const double n2 = -beta * cos(omega[i] * (radius + 1.0));
        const double d1 = -2.0 * cos(omega[i]);
        const double d_2 = d1 * d1;
        rg->n2[i] = (float)n2;
        rg->d1[i] = (float)d1;
        float *mp = rg->mul_prev + 4 * i, *mp2 = rg->mul_prev2 + 4 * i, *mi = rg->mul_in + 4 * i;
        mp[0] = (float)-d1;
        mp[1] = (float)(d_2 - 1.0);
        mp[2] = (float)(-d_2 * d1 + 2.0 * d1);
        mp[3] = (float)(d_2 * d_2 - 3.0 * d_2 + 1.0);
        mp2[0] = -1.0f;
        mp2[1] = (float)d1;
        mp2[2] = (float)(-d_2 + 1.0);
        mp2[3] = (float)(d_2 * d1 - 2.0 * d1);
        mi[0] = (float)n2;
        mi[1] = (float)(-d1 * n2);
        mi[2] = (float)(d_2 * n2 - n2);
        mi[3] = (float)(-d_2 * d1 * n2 + 2.0 * d1 * n2);
    }
}

/* One output of a row through the three terms one at a time (the row's
 * ends, as libjxl's FastGaussian1D does them). */
static float row_step(const recursive_gaussian *rg, float sum, float prev[3], float prev2[3])
{
    float o[3];
    for (int k = 0; k < 3; k++) {
        o[k] = fmaf(rg->mul_prev2[4 * k], prev2[k], sum * rg->mul_in[4 * k]);
        prev2[k] = prev[k];
        o[k] = fmaf(rg->mul_prev[4 * k], prev[k], o[k]);
        prev[k] = o[k];
    }
    return o[0] + (o[1] + o[2]);
}

/* A row of w samples: the ends one output at a time, the middle four
 * outputs at a time from four input sums and the two outputs before. */
static void blur_row(const recursive_gaussian *rg, const float *in, float *out, int w)
{
    const int r = rg->radius, first = (r + 1 + 3) & ~3;
    float prev[3] = {0, 0, 0}, prev2[3] = {0, 0, 0};
    int n = 1 - r;
    for (; n < (first < w ? first : w); n++) {
        const int left = n - r - 1, right = n + r - 1;
        const float sum = (left >= 0 ? in[left] : 0.0f) + (right < w ? in[right] : 0.0f);
        const float o = row_step(rg, sum, prev, prev2);
        if (n >= 0)
            out[n] = o;
    }
    for (; n < w - r + 1 - 3; n += 4) {
        float sum[4], o[3][4];
        for (int j = 0; j < 4; j++)
            sum[j] = in[n - r - 1 + j] + in[n + r - 1 + j];
        for (int k = 0; k < 3; k++) {
            const float *mi = rg->mul_in + 4 * k;
            for (int j = 0; j < 4; j++) {
                float v = sum[0] * mi[j];
                for (int i = 1; i <= j; i++)
                    v = fmaf(mi[j - i], sum[i], v);
                v = fmaf(rg->mul_prev2[4 * k + j], prev2[k], v);
                o[k][j] = fmaf(rg->mul_prev[4 * k + j], prev[k], v);
            }
            prev2[k] = o[k][2];
            prev[k] = o[k][3];
        }
        for (int j = 0; j < 4; j++)
            out[n + j] = o[0][j] + (o[1][j] + o[2][j]);
    }
    for (; n < w; n++) {
        const int left = n - r - 1, right = n + r - 1;
        out[n] = row_step(rg, (left >= 0 ? in[left] : 0.0f) + (right < w ? in[right] : 0.0f),
                          prev, prev2);
    }
}

/* The columns of in (w x h) into out, all at once row by row, each term
 * y = n2 * sum - (d1 * y[n - 1] + y[n - 2]) with two roundings as libjxl's
 * VerticalBlock does; state holds 6 w. */
static void blur_columns(const recursive_gaussian *rg, const float *in, float *out, float *state,
                         int w, int h)
{
    const int r = rg->radius;
    float *prev = state, *prev2 = state + 3 * (size_t)w;
    memset(state, 0, sizeof(float) * 6 * (size_t)w);
    for (int n = 1 - r; n < h; n++) {
        const int top = n - r - 1, bottom = n + r - 1;
        const float *rt = top >= 0 ? in + (size_t)top * w : NULL;
        const float *rb = bottom < h ? in + (size_t)bottom * w : NULL;
        float *ro = n >= 0 ? out + (size_t)n * w : NULL;
        for (int x = 0; x < w; x++) {
            const float sum = (rt ? rt[x] : 0.0f) + (rb ? rb[x] : 0.0f);
            float y[3];
            for (int k = 0; k < 3; k++) {
                const size_t i = (size_t)k * w + x;
                y[k] = fmaf(rg->n2[k], sum, fmaf(-rg->d1[k], prev[i], -prev2[i]));
                prev2[i] = prev[i];
                prev[i] = y[k];
            }
            if (ro)
                ro[x] = y[0] + (y[1] + y[2]);
        }
    }
}

/* out = blur(a * b), or blur(a) when b is NULL; tmp holds w * h, row w,
 * state 6 w. */
static void blur(const recursive_gaussian *rg, const float *a, const float *b, float *out,
                 float *tmp, float *row, float *state, int w, int h)
{
    for (int y = 0; y < h; y++) {
        const float *src = a + (size_t)y * w;
        if (b) {
            for (int x = 0; x < w; x++)
                row[x] = src[x] * b[(size_t)y * w + x];
            src = row;
        }
        blur_row(rg, src, tmp + (size_t)y * w, w);
    }
    blur_columns(rg, tmp, out, state, w, h);
}

/* sRGB's transfer function, encoded [0, 1] to linear, as libjxl's TF_SRGB
 * approximates it (lib/jxl/cms/transfer_functions-inl.h): a rational
 * polynomial of degree 4 above 0.04045. */
static float srgb_to_linear(float v)
{
    static const float p[5] = {2.200248328E-04f, 1.043637593E-02f, 1.624820318E-01f,
                               7.961564959E-01f, 8.210152774E-01f};
    static const float q[5] = {2.631846970E-01f, 1.076976492E+00f, 4.987528350E-01f,
                               -5.512498495E-02f, 6.521209011E-03f};
    const float x = fabsf(v);
    if (!(x > 0.04045f))
        return copysignf(x * (1.0f / 12.92f), v);
    float yp = p[4], yq = q[4];
    for (int i = 3; i >= 0; i--) {
        yp = fmaf(yp, x, p[i]);
        yq = fmaf(yq, x, q[i]);
    }
    return copysignf(yp / yq, v);
}

/* cbrt(x) + add for x >= 0 as libjxl's CubeRootAndAdd computes it
 * (lib/jxl/base/fast_math-inl.h): a guess from the exponent, then Newton's
 * method. */
static float cube_root_add(float x, float add)
{
    const float k1_3 = 1.0f / 3, k4_3 = 4.0f / 3;
    int32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int32_t guess = bits == 0 ? 0 : 0x54800000 - (bits >> 23) * 0x002AAAAA;
    float r;
    memcpy(&r, &guess, sizeof r);
    const float x_3 = k1_3 * x;
    for (int i = 0; i < 3; i++) {
        const float r2 = r * r;
        r = fmaf(-x_3, r2 * r2, k4_3 * r);
    }
    float r2 = r * r;
    r = fmaf(k1_3, fmaf(-x, r2 * r2, r), r);
    r2 = r * r;
    return fmaf(r2, x, add);
}

/* libjxl's XYB of linear RGB (lib/jxl/enc_xyb.cc), made positive as
 * ssimulacra2.cc's MakePositiveXYB does, into three planes. */
static void to_xyb(const float *const lin[3], size_t n, float *const out[3])
{
    const float neg_cbrt_bias = -cbrtf(opsin_bias);
    for (size_t i = 0; i < n; i++) {
        const float r = lin[0][i], g = lin[1][i], b = lin[2][i];
        float m[3];
        for (int j = 0; j < 3; j++) {
            const float v =
                fmaf(opsin[j][0], r, fmaf(opsin[j][1], g, fmaf(opsin[j][2], b, opsin_bias)));
            m[j] = cube_root_add(v > 0 ? v : 0, neg_cbrt_bias);
        }
        const float x = 0.5f * (m[0] - m[1]), y = 0.5f * (m[0] + m[1]);
        out[0][i] = x * 14.0f + 0.42f;
        out[1][i] = y + 0.01f;
        out[2][i] = (m[2] - y) + 0.55f;
    }
}

/* 2 x 2 means of a plane, the last row and column repeated on odd sides,
 * summed in float in reading order, in place (each output reads samples at
 * or after its own index). */
static void halve(float *p, int w, int h)
{
    const int nw = (w + 1) / 2, nh = (h + 1) / 2;
    for (int y = 0; y < nh; y++) {
        const float *r0 = p + (size_t)(2 * y) * w;
        const float *r1 = 2 * y + 1 < h ? r0 + w : r0;
        for (int x = 0; x < nw; x++) {
            const int x1 = 2 * x + 1 < w ? 2 * x + 1 : 2 * x;
            p[(size_t)y * nw + x] = (((r0[2 * x] + r0[x1]) + r1[2 * x]) + r1[x1]) * 0.25f;
        }
    }
}

static double quartic(double x)
{
    x *= x;
    return x * x;
}

/* The 1- and 4-norms of one channel at one scale: SSIM (2), and ringing and
 * blur (1-norm, 4-norm of each: 4); float and double where the reference
 * has them. */
static void channel_norms(const float *x1, const float *x2, const float *mu1, const float *mu2,
                          const float *s11, const float *s22, const float *s12, size_t n,
                          double ssim[2], double edge[4])
{
    const float c2 = 0.0009f;
    double s[2] = {0, 0}, e[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const float m1 = mu1[i], m2 = mu2[i];
        const float num_m = (float)(1.0 - (m1 - m2) * (m1 - m2));
        const float num_s = 2 * (s12[i] - m1 * m2) + c2;
        const float den_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + c2;
        double d = 1.0 - num_m * num_s / den_s;
        d = d > 0 ? d : 0;
        s[0] += d;
        s[1] += quartic(d);
        const double d1 = (1.0 + fabsf(x2[i] - m2)) / (1.0 + fabsf(x1[i] - m1)) - 1.0;
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
    /* linear RGB of a and b (6 planes), their XYB (6), the blurs of each and
     * of the products of one channel (5), a temporary plane; a row, the
     * column blur's state */
    float *mem = malloc(sizeof(float) * (18 * n + 7 * (size_t)w));
    float *lut = malloc(sizeof(float) * ((size_t)maxval + 1));
    if (!mem || !lut) {
        free(mem);
        free(lut);
        return MMP_ENOMEM;
    }
    /* the reference's decoders scale integer samples by 1 / maxval in float */
    const float scale = 1.0f / (float)maxval;
    for (int v = 0; v <= maxval; v++)
        lut[v] = srgb_to_linear((float)v * scale);
    float *la[3], *lb[3], *xa[3], *xb[3];
    for (int c = 0; c < 3; c++) {
        la[c] = mem + c * n;
        lb[c] = mem + (3 + c) * n;
        xa[c] = mem + (6 + c) * n;
        xb[c] = mem + (9 + c) * n;
    }
    const int colour = channels >= 3;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            la[c][i] = lut[a[i * channels + (colour ? c : 0)]];
            lb[c][i] = lut[b[i * channels + (colour ? c : 0)]];
        }
    free(lut);
    float *mu1 = mem + 12 * n, *mu2 = mem + 13 * n, *s11 = mem + 14 * n, *s22 = mem + 15 * n;
    float *s12 = mem + 16 * n, *tmp = mem + 17 * n, *row = mem + 18 * n, *state = row + w;
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
        const float *const ca[3] = {la[0], la[1], la[2]}, *const cb[3] = {lb[0], lb[1], lb[2]};
        to_xyb(ca, m, xa);
        to_xyb(cb, m, xb);
        for (int c = 0; c < 3; c++) {
            const float *x1 = xa[c], *x2 = xb[c];
            blur(&rg, x1, x1, s11, tmp, row, state, w, h);
            blur(&rg, x2, x2, s22, tmp, row, state, w, h);
            blur(&rg, x1, x2, s12, tmp, row, state, w, h);
            blur(&rg, x1, NULL, mu1, tmp, row, state, w, h);
            blur(&rg, x2, NULL, mu2, tmp, row, state, w, h);
            channel_norms(x1, x2, mu1, mu2, s11, s22, s12, m, ssim[s][c], edge[s][c]);
        }
        scales++;
    }
    free(mem);
    *score = final_score(ssim, edge, scales);
    return MMP_OK;
}
