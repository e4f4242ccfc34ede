/*
 * Least-squares prediction (LSP). Normative: encoder and decoder must get
 * bit-identical results, so the training statistics are exact integers and
 * the solve and the prediction use IEEE double with one fixed operation order
 * (docs/format.md section 6, "Mode 9: LSP"). The build uses -ffp-contract=off so that
 * no a*b+c is fused into an FMA, which would change the rounding.
 */
#include "predict/lsp.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* x87 excess precision (FLT_EVAL_METHOD 2) would round differently from SSE2
 * or AArch64 doubles and make the decoder disagree with the encoder. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "LSP needs double arithmetic evaluated in double precision (FLT_EVAL_METHOD == 0)"
#endif
/* Belt and braces for compilers that contract by default even without
 * -ffp-contract=fast (clang); GCC ignores this pragma but honours the flag. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/*
 * A local copy of the neighbourhood, so the loops need no bounds checks.
 * Training pixels reach MMP_LSP_MARGIN beyond the block; their supports reach
 * 2 more to the top (NN) and left (WW), 1 more to the right (NE).
 */
#define WIN_TOP   (MMP_LSP_MARGIN + 2)
#define WIN_LEFT  (MMP_LSP_MARGIN + 2)
#define WIN_RIGHT (MMP_LSP_MARGIN + 1)
#define WIN_H     (WIN_TOP + MMP_PRED_MAX)
#define WIN_W     (WIN_LEFT + MMP_PRED_MAX + WIN_RIGHT)

/* Most training samples: (MARGIN + MAX) rows by (MARGIN + MAX + MARGIN) columns. */
#define MAX_TRAIN ((MMP_LSP_MARGIN + MMP_PRED_MAX) * (2 * MMP_LSP_MARGIN + MMP_PRED_MAX))

/*
 * Ridge: RIDGE_PER_SAMPLE * (number of samples) is added to each diagonal
 * entry, a penalty of 1/100 squared grey level per sample and unit of
 * coefficient norm. It makes flat or planar training sets (rank-deficient A)
 * solvable. Small, because its bias accumulates when the block extrapolates
 * its own predictions: with 1.0 a ramp of slope 3 is no longer predicted
 * exactly over 16 columns; with 0.01 slopes of 1 still are.
 */
#define RIDGE_PER_SAMPLE 0.01
/* A pivot of absolute value <= PIVOT_TOL * ridge counts as a failed solve.
 * Relative to the ridge, not to A: the smallest eigenvalue of A + ridge*I is
 * at least the ridge whatever the sample magnitudes, so the test only catches
 * numerical breakdown (it never triggers on smooth 16-bit content). */
#define PIVOT_TOL 1e-6

/*
 * Solve (A + ridge*I) a = b by Gaussian elimination with partial pivoting.
 * A is given by its upper triangle (ai[i][j], i <= j; read only, not const
 * because C11 cannot pass double[][] to const double[][]), exact integers
 * held in doubles. Returns 1 and the coefficients, or 0 if a pivot is too small (the
 * caller falls back to DC). Every operation below is one IEEE double
 * operation in the order written; docs/format.md section 6 ("Mode 9: LSP") spells it out.
 */
static int solve(double ai[MMP_LSP_ORDER][MMP_LSP_ORDER], const double bi[MMP_LSP_ORDER],
                 int count, double coef[MMP_LSP_ORDER])
{
    enum { K = MMP_LSP_ORDER };
    double m[K][K + 1];
    const double ridge = RIDGE_PER_SAMPLE * (double)count;
    const double tol = PIVOT_TOL * ridge;

    for (int i = 0; i < K; i++) {
        for (int j = 0; j < K; j++)
            m[i][j] = i <= j ? ai[i][j] : ai[j][i];
        m[i][i] = m[i][i] + ridge;
        m[i][K] = bi[i];
    }
    for (int k = 0; k < K; k++) {
        /* Largest |m[i][k]|; strict > keeps the lowest row index on ties. */
        int piv = k;
        double best = fabs(m[k][k]);
        for (int i = k + 1; i < K; i++) {
            double v = fabs(m[i][k]);
            if (v > best) {
                best = v;
                piv = i;
            }
        }
        if (!(best > tol))   /* also catches a NaN */
            return 0;
        if (piv != k) {
            for (int j = 0; j <= K; j++) {
                double t = m[k][j];
                m[k][j] = m[piv][j];
                m[piv][j] = t;
            }
        }
        for (int i = k + 1; i < K; i++) {
            double f = m[i][k] / m[k][k];
            for (int j = k + 1; j <= K; j++)
                m[i][j] = m[i][j] - f * m[k][j];
        }
    }
    for (int k = K - 1; k >= 0; k--) {
        double s = m[k][K];
        for (int j = k + 1; j < K; j++)
            s = s - m[k][j] * coef[j];
        coef[k] = s / m[k][k];
    }
    return 1;
}

/*
 * Sum of a[i]*b[i] over n (a multiple of DOT_LANES) integer-valued doubles.
 * Exact: samples <= 65535, so every product is an integer < 2^32 and every
 * partial sum of at most MAX_TRAIN of them is an integer < 2^53. Hence the
 * result does not depend on the order of the additions, and the compiler may
 * vectorise the fixed-length inner loop freely.
 */
#define DOT_LANES 8
static double dot(const double *a, const double *b, int n)
{
    double acc[DOT_LANES] = {0};
    for (int i = 0; i < n; i += DOT_LANES)
        for (int l = 0; l < DOT_LANES; l++)
            acc[l] += a[i + l] * b[i + l];
    double s = 0.0;
    for (int l = 0; l < DOT_LANES; l++)
        s += acc[l];
    return s;
}

/* The largest maxval for which dot16 is exact: samples fit an int16_t, and
 * MAX_TRAIN products of two samples sum below 2^31. */
#define SMALL_MAXVAL 1867
_Static_assert((long long)SMALL_MAXVAL * SMALL_MAXVAL * MAX_TRAIN < 2147483648LL,
               "16-bit LSP sums must fit an int32_t");

/* Sum of a[i]*b[i] over n (a multiple of DOT_LANES) samples of at most
 * SMALL_MAXVAL: exact in 32 bits, so any order of the additions gives it. */
static int32_t dot16(const int16_t *a, const int16_t *b, int n)
{
    int32_t s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* floor(v + 0.5) clipped to [0, maxval], without converting out-of-range
 * doubles to int (undefined behaviour). */
static int32_t round_clip(double v, int maxval)
{
    double t = v + 0.5;
    if (!(t >= 1.0))                   /* floor(t) <= 0, or NaN */
        return 0;
    if (t >= (double)maxval + 1.0)     /* floor(t) > maxval */
        return maxval;
    return (int32_t)t;                 /* truncation == floor for t >= 1 */
}

int mmp_lsp_predict(const mmp_plane *p, int y0, int x0, int h, int w, int32_t dc, int32_t *out)
{
    enum { K = MMP_LSP_ORDER };
    int32_t val[WIN_H][WIN_W];
    uint8_t ok[WIN_H][WIN_W];
    const int rows = WIN_TOP + h, cols = WIN_LEFT + w + WIN_RIGHT;

    /* ok = inside the plane, outside the block and available. The block's own
     * pixels are excluded whatever their flag says. */
    const int xl = x0 - WIN_LEFT;
    for (int r = 0; r < rows; r++) {
        const int y = y0 - WIN_TOP + r;
        /* A row inside the plane that no overlay covers is read straight:
         * what mmp_plane_get gives, without a test per sample. */
        const int plain = (unsigned)y < (unsigned)p->height && xl >= 0 && xl + cols <= p->width &&
                          (!p->ov_pix || (unsigned)(y - p->ov_y) >= MMP_PLANE_OV ||
                           xl + cols <= p->ov_x || xl >= p->ov_x + MMP_PLANE_OV);
        if (plain) {
            const int32_t *pix = p->pix + (size_t)y * p->width + xl;
            const uint8_t *av = p->avail + (size_t)y * p->width + xl;
            for (int c = 0; c < cols; c++) {
                ok[r][c] = av[c] != 0;
                val[r][c] = ok[r][c] ? pix[c] : 0;
            }
        } else {
            for (int c = 0; c < cols; c++) {
                val[r][c] = 0;
                ok[r][c] = (uint8_t)mmp_plane_get(p, y, xl + c, &val[r][c]);
            }
        }
        if (r >= WIN_TOP)
            memset(&ok[r][WIN_LEFT], 0, (size_t)w);
    }

    /* Gather the training samples column-wise (W, N, NW, NE, WW, NN, target)
     * so that each entry of the normal equations is one plain dot product.
     * Samples up to SMALL_MAXVAL go to 16-bit columns, whose products sum
     * exactly in 32 bits (a loop that vectorises four times wider); the
     * sums are the same integers either way. */
    const int small = p->maxval <= SMALL_MAXVAL;
    double col[K + 1][MAX_TRAIN + DOT_LANES];
    int16_t col16[K + 1][MAX_TRAIN + DOT_LANES];
    int count = 0;
    for (int r = WIN_TOP - MMP_LSP_MARGIN; r < WIN_TOP + h; r++) {
        const uint8_t *o0 = ok[r], *o1 = ok[r - 1], *o2 = ok[r - 2];
        const int32_t *v0 = val[r], *v1 = val[r - 1], *v2 = val[r - 2];
        for (int c = WIN_LEFT - MMP_LSP_MARGIN; c < WIN_LEFT + w + MMP_LSP_MARGIN; c++) {
            if (!(o0[c] & o0[c - 1] & o1[c] & o1[c - 1] & o1[c + 1] & o0[c - 2] & o2[c]))
                continue;
            if (small) {
                col16[0][count] = (int16_t)v0[c - 1];
                col16[1][count] = (int16_t)v1[c];
                col16[2][count] = (int16_t)v1[c - 1];
                col16[3][count] = (int16_t)v1[c + 1];
                col16[4][count] = (int16_t)v0[c - 2];
                col16[5][count] = (int16_t)v2[c];
                col16[K][count] = (int16_t)v0[c];
            } else {
                col[0][count] = v0[c - 1];
                col[1][count] = v1[c];
                col[2][count] = v1[c - 1];
                col[3][count] = v1[c + 1];
                col[4][count] = v0[c - 2];
                col[5][count] = v2[c];
                col[K][count] = v0[c];
            }
            count++;
        }
    }

    double coef[K];
    int solved = 0;
    if (count >= MMP_LSP_MIN_SAMPLES) {
        /* Zero samples pad to a whole number of lanes; they add nothing. */
        const int padded = (count + DOT_LANES - 1) / DOT_LANES * DOT_LANES;
        double a[K][K], b[K];
        if (small) {
            for (int k = 0; k <= K; k++)
                for (int i = count; i < padded; i++)
                    col16[k][i] = 0;
            for (int i = 0; i < K; i++) {
                for (int j = i; j < K; j++)
                    a[i][j] = (double)dot16(col16[i], col16[j], padded);
                b[i] = (double)dot16(col16[i], col16[K], padded);
            }
        } else {
            for (int k = 0; k <= K; k++)
                for (int i = count; i < padded; i++)
                    col[k][i] = 0.0;
            for (int i = 0; i < K; i++) {
                for (int j = i; j < K; j++)
                    a[i][j] = dot(col[i], col[j], padded);
                b[i] = dot(col[i], col[K], padded);
            }
        }
        solved = solve(a, b, count, coef);
    }
    if (!solved) {
        for (int i = 0; i < h * w; i++)
            out[i] = dc;
        return 0;
    }

    /* Raster order: in-block supports (W, N, NW, NE, WW, NN all causal) are
     * already predicted and marked ok; the rest are reconstructed or missing. */
    const double dcd = (double)dc;
    for (int y = 0; y < h; y++) {
        const int r = WIN_TOP + y;
        for (int x = 0; x < w; x++) {
            const int c = WIN_LEFT + x;
            double s[K];
            s[0] = ok[r][c - 1] ? (double)val[r][c - 1] : dcd;          /* W */
            s[1] = ok[r - 1][c] ? (double)val[r - 1][c] : dcd;          /* N */
            s[2] = ok[r - 1][c - 1] ? (double)val[r - 1][c - 1] : dcd;  /* NW */
            s[3] = ok[r - 1][c + 1] ? (double)val[r - 1][c + 1] : s[1]; /* NE, else N */
            s[4] = ok[r][c - 2] ? (double)val[r][c - 2] : dcd;          /* WW */
            s[5] = ok[r - 2][c] ? (double)val[r - 2][c] : dcd;          /* NN */
            double acc = 0.0;
            for (int k = 0; k < K; k++)
                acc = acc + coef[k] * s[k];
            int32_t v = round_clip(acc, p->maxval);
            out[y * w + x] = v;
            val[r][c] = v;
            ok[r][c] = 1;
        }
    }
    return 1;
}
