/*
 * Least-squares prediction (LSP). Normative: encoder and decoder must get
 * bit-identical results, so the training statistics are exact integers and
 * the solve and the prediction use IEEE double with one fixed operation order
 * (docs/prediction.md, section "LSP"). The build uses -ffp-contract=off so that
 * no a*b+c is fused into an FMA, which would change the rounding.
 */
#include "predict/lsp.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

/* x87 excess precision (FLT_EVAL_METHOD 2) would round differently from SSE2
 * or AArch64 doubles and make the decoder disagree with the encoder. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "LSP needs double arithmetic evaluated in double precision (FLT_EVAL_METHOD == 0)"
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

/* Ridge added to each diagonal entry: RIDGE_PER_SAMPLE * number of samples. */
#define RIDGE_PER_SAMPLE 0.01
/* A pivot of absolute value <= PIVOT_TOL * ridge counts as a failed solve. */
#define PIVOT_TOL 1e-6

/*
 * Solve (A + ridge*I) a = b by Gaussian elimination with partial pivoting.
 * A is given by its exact integer upper triangle (a[i][j], i <= j). Returns 1
 * and the coefficients, or 0 if a pivot is too small (caller falls back).
 */
static int solve(const int64_t ai[MMP_LSP_ORDER][MMP_LSP_ORDER], const int64_t bi[MMP_LSP_ORDER],
                 int count, double coef[MMP_LSP_ORDER])
{
    enum { K = MMP_LSP_ORDER };
    double m[K][K + 1];
    const double ridge = RIDGE_PER_SAMPLE * (double)count;
    const double tol = PIVOT_TOL * ridge;

    /* Values below 2^53, so the conversions are exact. */
    for (int i = 0; i < K; i++) {
        for (int j = 0; j < K; j++)
            m[i][j] = (double)(i <= j ? ai[i][j] : ai[j][i]);
        m[i][i] = m[i][i] + ridge;
        m[i][K] = (double)bi[i];
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
    for (int r = 0; r < rows; r++) {
        int y = y0 - WIN_TOP + r;
        int rin = y >= 0 && y < p->height;
        int rblk = r >= WIN_TOP;
        const int32_t *prow = rin ? p->pix + (size_t)y * p->width : NULL;
        const uint8_t *arow = rin ? p->avail + (size_t)y * p->width : NULL;
        for (int c = 0; c < cols; c++) {
            int x = x0 - WIN_LEFT + c;
            int good = rin && x >= 0 && x < p->width && arow[x] &&
                       !(rblk && c >= WIN_LEFT && c < WIN_LEFT + w);
            ok[r][c] = (uint8_t)good;
            val[r][c] = good ? prow[x] : 0;
        }
    }

    /* Normal equations, exact: at most 22*28 samples of products < 2^32. */
    int64_t a[K][K] = {{0}};
    int64_t b[K] = {0};
    int count = 0;
    for (int r = WIN_TOP - MMP_LSP_MARGIN; r < WIN_TOP + h; r++) {
        for (int c = WIN_LEFT - MMP_LSP_MARGIN; c < WIN_LEFT + w + MMP_LSP_MARGIN; c++) {
            if (!(ok[r][c] && ok[r][c - 1] && ok[r - 1][c] && ok[r - 1][c - 1] &&
                  ok[r - 1][c + 1] && ok[r][c - 2] && ok[r - 2][c]))
                continue;
            const int64_t s[K] = { val[r][c - 1], val[r - 1][c], val[r - 1][c - 1],
                                   val[r - 1][c + 1], val[r][c - 2], val[r - 2][c] };
            const int64_t t = val[r][c];
            for (int i = 0; i < K; i++) {
                for (int j = i; j < K; j++)
                    a[i][j] += s[i] * s[j];
                b[i] += s[i] * t;
            }
            count++;
        }
    }

    double coef[K];
    if (count < MMP_LSP_MIN_SAMPLES || !solve(a, b, count, coef)) {
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
