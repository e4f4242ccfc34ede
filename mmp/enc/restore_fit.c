/* The encoder's fit of a plane's restoration filter (mmp/enc/restore_fit.h). */
#include "mmp/enc/restore_fit.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/bits.h"
#include "common/error.h"
#include "common/wait.h"

#define N MMP_RF_TAPS

/* Least-squares statistics of a set of samples: features f (the tap pairs'
 * second differences), error e = original - reconstruction. */
typedef struct stats {
    double R[N][N]; /* sum f f^T */
    double r[N];    /* sum f e */
    double E;       /* sum e^2 */
    long n;
} stats;

static void stats_add(stats *a, const stats *b)
{
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            a->R[i][j] += b->R[i][j];
        a->r[i] += b->r[i];
    }
    a->E += b->E;
    a->n += b->n;
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The statistics of stats in exact integers (see accumulate). */
typedef struct istats {
    int64_t R[N][N], r[N], E, n;
} istats;

/* How far a tap reaches from its sample, in rows or columns. */
#define REACH 3

/* Sample (y, x) of rec near the plane's edge: its features f (the tap
 * pairs' second differences, the taps' rows and columns clamped into the
 * plane). */
static void edge_features(const int32_t *rec, int stride, int w, int h, int y, int x, int64_t *f)
{
    const int64_t v2 = 2 * (int64_t)rec[(long)y * stride + x];
    for (int k = 0; k < N; k++) {
        const int dy = mmp_rf_tap[k][0], dx = mmp_rf_tap[k][1];
        const int32_t a = rec[(long)clampi(y + dy, 0, h - 1) * stride + clampi(x + dx, 0, w - 1)];
        const int32_t b = rec[(long)clampi(y - dy, 0, h - 1) * stride + clampi(x - dx, 0, w - 1)];
        f[k] = (int64_t)a + b - v2;
    }
}

/* The samples of region `reg` (row-major among r->rw x r->rh) added into
 * st[MMP_RF_CLASSES], by class: features f, error e = orig - rec. Away
 * from the plane's edges the taps are read at fixed offsets. */
static void accumulate_region(istats *st, const uint8_t *cls, const mmp_restore *r,
                              const int32_t *rec, const int32_t *orig, int stride, int w, int h,
                              long reg, int plain)
{
    const int y0 = (int)(reg / r->rw) << MMP_RF_LOG2_REGION, x0 = (int)(reg % r->rw) << MMP_RF_LOG2_REGION;
    const int y1 = y0 + (1 << MMP_RF_LOG2_REGION) < h ? y0 + (1 << MMP_RF_LOG2_REGION) : h;
    const int x1 = x0 + (1 << MMP_RF_LOG2_REGION) < w ? x0 + (1 << MMP_RF_LOG2_REGION) : w;
    const int gw = (w + 3) / 4;
    long off[N];
    for (int k = 0; k < N; k++)
        off[k] = (long)mmp_rf_tap[k][0] * stride + mmp_rf_tap[k][1];
    for (int y = y0; y < y1; y++) {
        const int inner = y >= REACH && y + REACH < h;
        for (int x = x0; x < x1; x++) {
            const long i = (long)y * stride + x;
            int64_t f[N];
            if (inner && x >= REACH && x + REACH < w && !plain) {
                const int64_t v2 = 2 * (int64_t)rec[i];
                for (int k = 0; k < N; k++)
                    f[k] = (int64_t)rec[i + off[k]] + rec[i - off[k]] - v2;
            } else {
                edge_features(rec, stride, w, h, y, x, f);
            }
            const int64_t e = (int64_t)orig[i] - rec[i];
            istats *s = &st[cls[(long)(y / 4) * gw + x / 4]];
            for (int a = 0; a < N; a++) {
                for (int b = a; b < N; b++)
                    s->R[a][b] += f[a] * f[b];
                s->r[a] += f[a] * e;
            }
            s->E += e * e;
            s->n++;
        }
    }
}

/* a += sign * b, over the sums accumulate_region fills. */
static void istats_add(istats *a, const istats *b, int sign)
{
    for (int i = 0; i < N; i++) {
        for (int j = i; j < N; j++)
            a->R[i][j] += sign * b->R[i][j];
        a->r[i] += sign * b->r[i];
    }
    a->E += sign * b->E;
    a->n += sign * b->n;
}

/* Groups of regions summed apart, at most (one group's sums per thread at a
 * time, added up in a fixed order afterwards). */
#define BANDS 16

/* The sums of the regions list[0 .. count) into out[MMP_RF_CLASSES], over
 * up to `threads` threads, in band[BANDS * MMP_RF_CLASSES]. Integers: the
 * same in any order. */
static void accumulate_regions(istats *out, const long *list, long count, const uint8_t *cls,
                               const mmp_restore *r, const int32_t *rec, const int32_t *orig,
                               int stride, int w, int h, int threads, int plain, istats *band)
{
    const int nb = count < BANDS ? (int)count : BANDS, nt = threads > 1 ? threads : 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1) default(none) \
    shared(band, list, count, cls, r, rec, orig, stride, w, h, nb, plain)
#endif
    for (int k = 0; k < nb; k++) {
        istats *bk = band + (long)k * MMP_RF_CLASSES;
        memset(bk, 0, sizeof(istats) * MMP_RF_CLASSES);
        for (long q = count * k / nb; q < count * (k + 1) / nb; q++)
            accumulate_region(bk, cls, r, rec, orig, stride, w, h, list[q], plain);
    }
    (void)nt;
    memset(out, 0, sizeof(istats) * MMP_RF_CLASSES);
    for (int k = 0; k < nb; k++)
        for (int c = 0; c < MMP_RF_CLASSES; c++)
            istats_add(&out[c], &band[(long)k * MMP_RF_CLASSES + c], 1);
}

/* Tests: 1 for the plain sums (mmp_restore_fit_plain). */
static _Atomic int plain_sums;

void mmp_restore_fit_plain(int on)
{
    atomic_store(&plain_sums, on);
}

/*
 * Accumulate, per class, the samples of the regions that are on into st.
 * Every feature, error and product is an integer, so while no sum can reach
 * 2^62 (|f| <= 4 maxval, |e| <= maxval: 16 maxval^2 w h < 2^62) the sums in
 * 64-bit integers are exact, the same in any order and on any number of
 * threads, and so are the doubles made from them. all[MMP_RF_CLASSES] holds
 * the sums of every region, taken by the first call (every region is on
 * then); a later call sums only the regions that are off and takes them
 * from those, or the regions that are on where they are fewer. In the
 * regions' list `list` (r->rw * r->rh entries) and band.
 */
static void accumulate(stats *st, istats *all, int first, const uint8_t *cls,
                       const mmp_restore *r, const int32_t *rec, const int32_t *orig, int stride,
                       int w, int h, int threads, long *list, istats *band)
{
    const long nr = (long)r->rw * r->rh;
    long non = 0;
    for (long i = 0; i < nr; i++)
        non += r->on[i] != 0;
    istats *sum = band + (long)BANDS * MMP_RF_CLASSES; /* past the bands */
    const int plain = atomic_load(&plain_sums);
    if (first || plain || 2 * non <= nr) {
        long n = 0;
        for (long i = 0; i < nr; i++)
            if (r->on[i])
                list[n++] = i;
        accumulate_regions(sum, list, n, cls, r, rec, orig, stride, w, h, threads, plain, band);
        if (first)
            memcpy(all, sum, sizeof(istats) * MMP_RF_CLASSES);
    } else {
        long n = 0;
        for (long i = 0; i < nr; i++)
            if (!r->on[i])
                list[n++] = i;
        accumulate_regions(sum, list, n, cls, r, rec, orig, stride, w, h, threads, plain, band);
        for (int c = 0; c < MMP_RF_CLASSES; c++) {
            istats s = all[c];
            istats_add(&s, &sum[c], -1);
            sum[c] = s;
        }
    }
    for (int c = 0; c < MMP_RF_CLASSES; c++) {
        for (int i = 0; i < N; i++) {
            for (int j = i; j < N; j++)
                st[c].R[i][j] = st[c].R[j][i] = (double)sum[c].R[i][j];
            st[c].r[i] = (double)sum[c].r[i];
        }
        st[c].E = (double)sum[c].E;
        st[c].n = (long)sum[c].n;
    }
}

/* The same in doubles, in raster order on one thread, for planes whose
 * sums could pass 2^62. */
static void accumulate_raster(stats *st, const uint8_t *cls, const mmp_restore *r,
                              const int32_t *rec, const int32_t *orig, int stride, int w, int h)
{
    memset(st, 0, sizeof(stats) * MMP_RF_CLASSES);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!r->on[(y >> MMP_RF_LOG2_REGION) * r->rw + (x >> MMP_RF_LOG2_REGION)])
                continue;
            int64_t fi[N];
            edge_features(rec, stride, w, h, y, x, fi);
            const long i = (long)y * stride + x;
            stats *s = &st[cls[(long)(y / 4) * ((w + 3) / 4) + x / 4]];
            double f[N];
            for (int k = 0; k < N; k++)
                f[k] = (double)fi[k];
            const double e = (double)((int64_t)orig[i] - rec[i]);
            for (int a = 0; a < N; a++) {
                for (int b = a; b < N; b++)
                    s->R[a][b] += f[a] * f[b];
                s->r[a] += f[a] * e;
            }
            s->E += e * e;
            s->n++;
        }
    for (int c = 0; c < MMP_RF_CLASSES; c++)
        for (int a = 0; a < N; a++)
            for (int b = 0; b < a; b++)
                st[c].R[a][b] = st[c].R[b][a];
}

/* The least-squares filter of s (Cholesky with a small ridge) into c; returns
 * the squared error left, E - r.c (E when there is nothing to fit). */
static double solve(const stats *s, double *c)
{
    double L[N][N], y[N], tr = 0;
    for (int i = 0; i < N; i++)
        tr += s->R[i][i];
    memset(c, 0, sizeof(double) * N);
    if (s->n == 0 || tr <= 0)
        return s->E;
    const double ridge = 1e-6 * tr / N + 1e-9;
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) {
            double v = s->R[i][j] + (i == j ? ridge : 0);
            for (int k = 0; k < j; k++)
                v -= L[i][k] * L[j][k];
            if (i == j) {
                if (v <= 0)
                    return s->E;
                L[i][i] = sqrt(v);
            } else {
                L[i][j] = v / L[j][j];
            }
        }
    for (int i = 0; i < N; i++) {
        double v = s->r[i];
        for (int k = 0; k < i; k++)
            v -= L[i][k] * y[k];
        y[i] = v / L[i][i];
    }
    for (int i = N - 1; i >= 0; i--) {
        double v = y[i];
        for (int k = i + 1; k < N; k++)
            v -= L[k][i] * c[k];
        c[i] = v / L[i][i];
    }
    double d = s->E;
    for (int i = 0; i < N; i++)
        d -= s->r[i] * c[i];
    return d > 0 ? d : 0;
}

/* Squared error of s under the integer filter q (in 1/128). */
static double error_of(const stats *s, const int *q)
{
    double c[N], d = s->E;
    for (int i = 0; i < N; i++)
        c[i] = q[i] / (double)(1 << MMP_RF_SHIFT);
    for (int i = 0; i < N; i++) {
        d -= 2 * c[i] * s->r[i];
        for (int j = 0; j < N; j++)
            d += c[i] * s->R[i][j] * c[j];
    }
    return d;
}

/* Estimated bits of a coefficient: its length symbol, then sign and lower bits. */
static double coef_bits(int q)
{
    return 2.5 + mmp_bit_length((unsigned)abs(q));
}

/* The integer filter of s: the rounded least-squares one, then each
 * coefficient moved by one while that lowers error + lambda * bits. */
static void quantise(const stats *s, const double *c, double lambda, int *q)
{
    for (int i = 0; i < N; i++) {
        const long v = lround(c[i] * (1 << MMP_RF_SHIFT));
        q[i] = (int)(v < -MMP_RF_COEF_MAX ? -MMP_RF_COEF_MAX : v > MMP_RF_COEF_MAX ? MMP_RF_COEF_MAX : v);
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < N; i++) {
            double best = error_of(s, q) + lambda * coef_bits(q[i]);
            const int q0 = q[i];
            for (int dq = -1; dq <= 1; dq += 2) {
                const int t = q0 + dq;
                if (t < -MMP_RF_COEF_MAX || t > MMP_RF_COEF_MAX)
                    continue;
                const int keep = q[i];
                q[i] = t;
                const double j = error_of(s, q) + lambda * coef_bits(t);
                if (j < best)
                    best = j;
                else
                    q[i] = keep;
            }
        }
}

/* The extra error of merging groups i and j: the union's least-squares
 * error less theirs. */
static double merge_cost(const stats *g, const double *d, int i, int j)
{
    stats u = g[i];
    double c[N];
    stats_add(&u, &g[j]);
    return solve(&u, c) - d[i] - d[j];
}

/* A merge's new pair costs (a solve per group left) go to the threads
 * while more groups than this are left, and only where every thread has a
 * core: on sixteen threads of sixteen cores that saves time, on opencl's
 * 64 it costs more than the whole fit saves (docs/tuning.md,
 * "Restoration fit"). */
#define MERGE_PAR_MIN 16

/* Classes merged into at most MMP_RF_MAX_FILTERS groups: greedy merging of
 * the pair whose union leaves the least extra error, keeping the grouping of
 * least error + lambda * bits. Fills r->nfilters, r->map, r->coef. The cost
 * of each pair is kept until one of its groups changes: a merge changes one
 * group, so each step solves as many unions as there are groups left, not
 * all their pairs. */
static void merge_classes(const stats *st, double lambda, int nt, mmp_restore *r)
{
    stats g[MMP_RF_CLASSES];
    double d[MMP_RF_CLASSES], c[N], du[MMP_RF_CLASSES][MMP_RF_CLASSES];
    const int step_par = nt > 1 && mmp_may_spin(nt);
    (void)step_par; /* without OpenMP */
    int grp[MMP_RF_CLASSES], alive[MMP_RF_CLASSES], ng = 0;
    for (int k = 0; k < MMP_RF_CLASSES; k++) {
        grp[k] = -1;
        if (st[k].n > 0) {
            g[ng] = st[k];
            d[ng] = solve(&g[ng], c);
            alive[ng] = 1;
            grp[k] = ng++;
        }
    }
    /* Every pair's cost is its own solve: computed in any order, on any
     * thread, each is the same double. */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1) default(none) \
    shared(g, d, du, ng)
#endif
    for (int i = 0; i < ng; i++)
        for (int j = i + 1; j < ng; j++)
            du[i][j] = merge_cost(g, d, i, j);
    double best = INFINITY;
    int best_map[MMP_RF_CLASSES];
    int best_n = 0;
    int cur = ng;
    for (;;) {
        if (cur <= MMP_RF_MAX_FILTERS && cur > 0) {
            /* Number the live groups and price this grouping. */
            int num[MMP_RF_CLASSES], n = 0;
            double cost = 0;
            for (int i = 0; i < ng; i++)
                if (alive[i]) {
                    num[i] = n++;
                    cost += d[i] + lambda * N * 7.0;
                }
            if (n > 1)
                cost += lambda * MMP_RF_CLASSES * log2((double)n) * 0.75;
            if (cost < best) {
                best = cost;
                best_n = n;
                for (int k = 0; k < MMP_RF_CLASSES; k++)
                    best_map[k] = grp[k] < 0 ? -1 : num[grp[k]];
            }
        }
        if (cur <= 1)
            break;
        int bi = -1, bj = -1;
        double bd = INFINITY;
        for (int i = 0; i < ng; i++)
            for (int j = i + 1; j < ng && alive[i]; j++) {
                if (!alive[j])
                    continue;
                if (du[i][j] < bd) {
                    bd = du[i][j];
                    bi = i;
                    bj = j;
                }
            }
        stats_add(&g[bi], &g[bj]);
        d[bi] = solve(&g[bi], c);
        alive[bj] = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (step_par && cur > MERGE_PAR_MIN) \
    default(none) shared(g, d, du, alive, ng, bi)
#endif
        for (int k = 0; k < ng; k++)
            if (alive[k] && k != bi)
                du[k < bi ? k : bi][k < bi ? bi : k] = merge_cost(g, d, k < bi ? k : bi, k < bi ? bi : k);
        for (int k = 0; k < MMP_RF_CLASSES; k++)
            if (grp[k] == bj)
                grp[k] = bi;
        cur--;
    }
    r->nfilters = best_n > 0 ? best_n : 1;
    memset(r->coef, 0, sizeof r->coef);
    stats sum[MMP_RF_MAX_FILTERS];
    memset(sum, 0, sizeof sum);
    for (int k = 0; k < MMP_RF_CLASSES; k++) {
        r->map[k] = (uint8_t)(best_n > 0 && best_map[k] >= 0 ? best_map[k] : 0);
        if (best_n > 0 && best_map[k] >= 0)
            stats_add(&sum[best_map[k]], &st[k]);
    }
    for (int f = 0; f < best_n; f++) {
        int q[N];
        solve(&sum[f], c);
        quantise(&sum[f], c, lambda, q);
        for (int i = 0; i < N; i++)
            r->coef[f][i] = (int16_t)q[i];
    }
}

/* filter_gains' bands: a quarter of a region's rows each. */
#define GAIN_BANDS_PER_REGION 4
#define GAIN_ROWS ((1 << MMP_RF_LOG2_REGION) / GAIN_BANDS_PER_REGION)

/*
 * The plane through `all` (every region on, so cls, the classes of the
 * whole plane, are those mmp_restore_apply would find) into flt, and each
 * region's change of squared error into gain: in bands of rows on up to nt
 * threads, each band's sums in g64 (a row of all->rw regions per band). Every error and
 * square is an integer and a region's sum stays far below 2^53, so the sums
 * are exact in any order, the same doubles as one raster pass.
 */
static void filter_gains(const mmp_restore *all, const int32_t *rec, const int32_t *orig,
                         int stride, int w, int h, int maxval, const uint8_t *cls, int nt,
                         uint16_t *flt, int64_t *g64, double *gain)
{
    const int nb = (h + GAIN_ROWS - 1) / GAIN_ROWS, rw = all->rw;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1) default(none) \
    shared(all, rec, orig, stride, w, h, maxval, cls, flt, g64, nb, rw)
#endif
    for (int k = 0; k < nb; k++) {
        const int y0 = k * GAIN_ROWS, y1 = y0 + GAIN_ROWS < h ? y0 + GAIN_ROWS : h;
        int64_t *gk = g64 + (long)k * rw;
        memset(gk, 0, sizeof(int64_t) * (size_t)rw);
        mmp_restore_rows(all, rec, stride, w, h, maxval, cls, y0, y1, flt, w);
        for (int y = y0; y < y1; y++)
            for (int x = 0; x < w; x++) {
                const int64_t e0 = (int64_t)orig[(long)y * stride + x] - rec[(long)y * stride + x];
                const int64_t e1 = (int64_t)orig[(long)y * stride + x] - flt[(long)y * w + x];
                gk[x >> MMP_RF_LOG2_REGION] += e0 * e0 - e1 * e1;
            }
    }
    for (int ry = 0; ry < all->rh; ry++)
        for (int rx = 0; rx < rw; rx++) {
            int64_t t = 0;
            for (int k = ry * GAIN_BANDS_PER_REGION; k < nb && k < (ry + 1) * GAIN_BANDS_PER_REGION; k++)
                t += g64[(long)k * rw + rx];
            gain[ry * rw + rx] = (double)t;
        }
}

/* Estimated bits of r's syntax. */
static double syntax_bits(const mmp_restore *r)
{
    double b = 1 + 4;
    if (r->nfilters > 1)
        b += MMP_RF_CLASSES * log2((double)r->nfilters) * 0.75;
    for (int f = 0; f < r->nfilters; f++)
        for (int i = 0; i < N; i++)
            b += coef_bits(r->coef[f][i]);
    const long nr = (long)r->rw * r->rh;
    long on = 0;
    for (long i = 0; i < nr; i++)
        on += r->on[i];
    if (on > 0 && on < nr) {
        const double p = (double)on / nr;
        b += nr * -(p * log2(p) + (1 - p) * log2(1 - p)) + 2;
    } else {
        b += 2 + 0.1 * nr;
    }
    return b;
}

int mmp_restore_fit(mmp_restore *r, const int32_t *rec, const int32_t *orig, int stride, int w,
                    int h, int maxval, double lambda, int threads)
{
    return mmp_restore_fit_rounds(r, rec, orig, stride, w, h, maxval, lambda, threads,
                                  MMP_RESTORE_FIT_ROUNDS, NULL);
}

int mmp_restore_fit_rounds(mmp_restore *r, const int32_t *rec, const int32_t *orig, int stride,
                           int w, int h, int maxval, double lambda, int threads, int rounds,
                           double *cost)
{
    const int gw = (w + 3) / 4, gh = (h + 3) / 4;
    const long nr = (long)r->rw * r->rh;
    uint8_t *cls = malloc((size_t)gw * gh);
    stats *st = malloc(sizeof(stats) * MMP_RF_CLASSES);
    uint16_t *flt = malloc(sizeof(uint16_t) * (size_t)w * h);
    double *gain = malloc(sizeof(double) * (size_t)nr);
    /* As many threads as the search's team, even where they outnumber the
     * cores (opencl's): a team of another size costs the next parallel
     * region more than it saves here (docs/tuning.md, "Restoration fit"). */
    const int nt = threads > 1 ? threads : 1;
    int64_t *g64 = malloc(sizeof(int64_t) * (size_t)((h + GAIN_ROWS - 1) / GAIN_ROWS) * r->rw);
    /* The bands' sums, then one more set for their total (accumulate). */
    istats *band = malloc(sizeof(istats) * (BANDS + 1) * MMP_RF_CLASSES);
    istats *all = malloc(sizeof(istats) * MMP_RF_CLASSES);
    long *list = malloc(sizeof(long) * (size_t)nr);
    const int exact = 16.0 * maxval * maxval * w * h < 4611686018427387904.0; /* 2^62 */
    mmp_restore all_on = {0}, best = {0};
    all_on.on = malloc((size_t)nr);
    best.on = malloc((size_t)nr);
    int err = 0;
    if (!cls || !st || !flt || !gain || !g64 || !band || !all || !list || !all_on.on || !best.on)
        err = MMP_ENOMEM;
    if (!err && !(err = mmp_restore_classify(rec, stride, w, h, maxval, NULL, cls))) {
        memset(r->on, 1, (size_t)nr);
        memset(all_on.on, 1, (size_t)nr);
    }
    double best_j = 0; /* the change of cost that the best filter so far brings */
    for (int round = 0; round < rounds && !err; round++) {
        if (exact)
            accumulate(st, all, round == 0, cls, r, rec, orig, stride, w, h, nt, list, band);
        else
            accumulate_raster(st, cls, r, rec, orig, stride, w, h);
        merge_classes(st, lambda, nt, r);
        /* Each region's change of squared error under these filters. */
        all_on.enabled = 1;
        all_on.nfilters = r->nfilters;
        all_on.rw = r->rw;
        all_on.rh = r->rh;
        memcpy(all_on.map, r->map, sizeof all_on.map);
        memcpy(all_on.coef, r->coef, sizeof all_on.coef);
        filter_gains(&all_on, rec, orig, stride, w, h, maxval, cls, nt, flt, g64, gain);
        double total = 0;
        for (long i = 0; i < nr; i++) {
            r->on[i] = gain[i] > 0;
            if (r->on[i])
                total += gain[i];
        }
        const double j = lambda * syntax_bits(r) - total;
        if (j < best_j) {
            best_j = j;
            uint8_t *on = best.on;
            best = *r;
            best.on = on;
            memcpy(best.on, r->on, (size_t)nr);
            best.enabled = 1;
        }
        if (total <= 0)
            break;
    }
    if (!err) {
        uint8_t *on = r->on;
        if (best.enabled) {
            *r = best;
            r->on = on;
            memcpy(r->on, best.on, (size_t)nr);
        } else {
            r->enabled = 0;
            memset(r->on, 1, (size_t)nr);
        }
        if (cost)
            *cost = best.enabled ? best_j : 0;
    }
    free(all_on.on);
    free(best.on);
    free(all);
    free(list);
    free(cls);
    free(st);
    free(flt);
    free(gain);
    free(g64);
    free(band);
    return err;
}

/* Bands per thread of mmp_restore_apply_threads: a few, so that threads
 * that get their cores late still find work. */
#define BANDS_PER_THREAD 4

int mmp_restore_apply_threads(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                              int maxval, int threads, uint16_t *out)
{
    const int gh = (h + 3) / 4, nt = threads > 1 ? threads : 1;
    const int bands = BANDS_PER_THREAD * nt < gh ? BANDS_PER_THREAD * nt : gh;
    uint8_t *cls = r->enabled ? malloc((size_t)((w + 3) / 4) * gh) : NULL;
    if (r->enabled && !cls)
        return MMP_ENOMEM;
    int err = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) if (nt > 1) num_threads(nt) default(none) \
    shared(r, rec, stride, w, h, maxval, cls, out, gh, bands) reduction(| : err)
#endif
    for (int k = 0; k < bands; k++)
        err |= mmp_restore_apply_groups(r, rec, stride, w, h, maxval, (int)((long)gh * k / bands),
                                        (int)((long)gh * (k + 1) / bands), cls, out, w);
    (void)nt;
    free(cls);
    return err ? MMP_ENOMEM : 0;
}
