/* The multiscale dictionary: initial contents, redundancy control, insertion. */
#include "dict/dict.h"

#include <stdlib.h>
#include <string.h>

#include "common/arith.h"
#include "common/error.h"
#include "common/lower_bound.h"

/* Scales of fewer samples have no signature (see signature()). */
#define SIG_MIN_AREA 16

static int initial_step(int maxval)
{
    int step = (maxval + 1) / 32;
    return step < 1 ? 1 : step;
}

int mmp_dict_initial_count(int maxval)
{
    int k = maxval / initial_step(maxval);
    if (k > 31)
        k = 31;
    return 2 * k + 1;
}

static void seen_free(struct mmp_seen *t);

void mmp_dict_free(mmp_dict *d)
{
    for (int s = 0; s < MMP_NSCALES; s++) {
        free(d->data[s]);
        free(d->sorted_sum[s]);
        free(d->sum_dir[s]);
        free(d->sorted_id[s]);
        free(d->sig[s]);
    }
    free(d->taps);
    free(d->known1);
    seen_free(d->seen);
    memset(d, 0, sizeof(*d));
}


static int log2_of(int v)
{
    int l = 0;
    while ((1 << l) < v)
        l++;
    return l;
}

/*
 * 1-D resampling of n samples to m, n and m powers of two up to MMP_B
 * (docs/format.md 5.2), as the taps of each output sample. Shrinking (k > 0)
 * averages groups of k = n/m samples: floor((2 * sum + k) / 2k). Growing
 * interpolates linearly between sample centres: output j is
 * floor((in[i0] * w0 + in[i1] * w1 + round) / 2^shift); where the format
 * clamps to in[0] or in[n-1], i0 = i1 is that sample and w0 = 2^shift,
 * w1 = 0, which gives the sample itself (round < 2^shift). A copy has
 * w0 = 1, shift 0.
 */
typedef struct mmp_taps {
    int k, shift;
    int64_t round;
    int i0[MMP_B], i1[MMP_B];
    int64_t w0[MMP_B], w1[MMP_B];
} taps;

static void make_taps(int n, int m, taps *t)
{
    t->k = 0;
    if (m < n) {
        t->k = n / m;
        t->shift = log2_of(t->k) + 1;
        t->round = t->k;
        return;
    }
    if (m == n) {
        t->shift = 0;
        t->round = 0;
        for (int j = 0; j < m; j++) {
            t->i0[j] = t->i1[j] = j;
            t->w0[j] = 1;
            t->w1[j] = 0;
        }
        return;
    }
    const int f = m / n, den = 2 * f, lden = log2_of(den);
    t->shift = lden;
    t->round = den / 2;
    for (int j = 0; j < m; j++) {
        const int pos = 2 * j + 1 - f; /* source position * den */
        const int i0 = pos <= 0 ? 0 : pos >> lden, frac = pos <= 0 ? 0 : pos & (den - 1);
        if (pos <= 0 || i0 >= n - 1) {
            t->i0[j] = t->i1[j] = pos <= 0 ? 0 : n - 1;
            t->w0[j] = den;
            t->w1[j] = 0;
        } else {
            t->i0[j] = i0;
            t->i1[j] = i0 + 1;
            t->w0[j] = den - frac;
            t->w1[j] = frac;
        }
    }
}

/* Each of the rows of src (sh x sw) from sw to dw samples, into dst (sh x dw). */
static void resample_rows(const int32_t *src, int sh, int sw, int32_t *dst, int dw, const taps *t)
{
    for (int y = 0; y < sh; y++) {
        const int32_t *in = src + y * sw;
        int32_t *out = dst + y * dw;
        if (t->k) {
            for (int j = 0; j < dw; j++) {
                int64_t sum = 0;
                for (int i = 0; i < t->k; i++)
                    sum += in[j * t->k + i];
                out[j] = (int32_t)mmp_floor_shift(2 * sum + t->round, t->shift);
            }
        } else {
            for (int j = 0; j < dw; j++)
                out[j] = (int32_t)mmp_floor_shift(in[t->i0[j]] * t->w0[j] + in[t->i1[j]] * t->w1[j] +
                                                  t->round,
                                              t->shift);
        }
    }
}

/* Each column of src (w wide) to dh samples, into dst (dh x w), as t
 * resamples them: one output row at a time, so that the inner loop runs
 * along a row. */
static void resample_cols(const int32_t *src, int w, int32_t *dst, int dh, const taps *t)
{
    for (int j = 0; j < dh; j++) {
        int32_t *out = dst + j * w;
        if (t->k) {
            const int32_t *in = src + j * t->k * w;
            for (int x = 0; x < w; x++) {
                int64_t sum = 0;
                for (int i = 0; i < t->k; i++)
                    sum += in[i * w + x];
                out[x] = (int32_t)mmp_floor_shift(2 * sum + t->round, t->shift);
            }
        } else {
            const int32_t *r0 = src + t->i0[j] * w, *r1 = src + t->i1[j] * w;
            const int64_t w0 = t->w0[j], w1 = t->w1[j];
            for (int x = 0; x < w; x++)
                out[x] = (int32_t)mmp_floor_shift(r0[x] * w0 + r1[x] * w1 + t->round, t->shift);
        }
    }
}

void mmp_rescale(const int32_t *src, int sh, int sw, int32_t *dst, int dh, int dw)
{
    if (sh == dh && sw == dw) {
        memcpy(dst, src, (size_t)sh * sw * sizeof(int32_t));
        return;
    }
    int32_t tmp[MMP_B * MMP_B];
    taps tr, tc;
    make_taps(sw, dw, &tr);
    make_taps(sh, dh, &tc);
    resample_rows(src, sh, sw, tmp, dw, &tr);
    resample_cols(tmp, dw, dst, dh, &tc);
}

/* mmp_rescale of a 2^a x 2^b pattern to 2^da x 2^db with the dictionary's taps. */
static void rescale_with(const mmp_dict *d, const int32_t *src, int a, int b, int32_t *dst, int da,
                         int db)
{
    if (a == da && b == db) {
        memcpy(dst, src, sizeof(int32_t) << (a + b));
        return;
    }
    int32_t tmp[MMP_B * MMP_B];
    resample_rows(src, 1 << a, 1 << b, tmp, 1 << db, &d->taps[b * MMP_NLOG + db]);
    resample_cols(tmp, 1 << db, dst, 1 << da, &d->taps[a * MMP_NLOG + da]);
}

static int64_t signature(const int32_t *p, int s, int32_t *sig);
static void set_known1(mmp_dict *d, int32_t v);

/*
 * The initial contents (docs/format.md 5.1): the constant patterns 0, +step,
 * -step, +2 step, -2 step, ... (the zero block has index 0) offered to every
 * scale in that order, each appended unless redundant, as mmp_dict_insert
 * does. Between constant patterns of values v and w at a scale of n samples
 * the redundancy test, 16 * n * (v - w)^2 <= redund_q4 * n, does not depend
 * on the scale, so the values kept are found once, on the values alone,
 * and written to every scale without the test, with their sorted sums
 * (v * n sorts as v does) in one pass rather than an insertion each: a
 * decoder makes this dictionary for every plane it decodes, the fuzz
 * targets for every input. tests/test_dict.c compares the result with the
 * insertions'.
 */
#define INIT_MAX 63 /* mmp_dict_initial_count's largest */
static void init_constants(mmp_dict *d, int maxval)
{
    const int n0 = mmp_dict_initial_count(maxval), step = initial_step(maxval);
    int32_t val[INIT_MAX];
    int m = 0;
    for (int k = 0; k < n0; k++) {
        const int32_t v = (int32_t)((k + 1) / 2) * step * ((k & 1) ? 1 : -1);
        int red = 0;
        for (int j = 0; j < m && !red; j++) {
            const int64_t diff = (int64_t)v - val[j];
            red = 16 * diff * diff <= (int64_t)d->redund_q4;
        }
        set_known1(d, v); /* every value offered at the 1 x 1 scale */
        if (!red)
            val[m++] = v;
    }
    int ord[INIT_MAX]; /* the kept values' indices, values ascending (all distinct) */
    int32_t maxabs = 0;
    for (int k = 0; k < m; k++) {
        int j = k;
        for (; j > 0 && val[ord[j - 1]] > val[k]; j--)
            ord[j] = ord[j - 1];
        ord[j] = k;
        const int32_t av = val[k] < 0 ? -val[k] : val[k];
        maxabs = av > maxabs ? av : maxabs;
    }
    int32_t ones[MMP_B * MMP_B], unit[MMP_DICT_SIG] = {0};
    for (int i = 0; i < MMP_B * MMP_B; i++)
        ones[i] = 1;
    for (int s = 0; s < MMP_NSCALES; s++) {
        const int area = mmp_scale_area(s);
        int32_t *e = d->data[s];
        for (int k = 0; k < m; k++)
            for (int i = 0; i < area; i++)
                *e++ = val[k];
        /* A constant pattern's signature is v times that of the pattern of
         * ones (no sum of it reaches SIG_DIFF_MAX: |v| < 2^16 and a quadrant
         * holds at most 64 samples), its largest |sample| |v|. */
        if (area >= SIG_MIN_AREA) {
            signature(ones, s, unit);
            int32_t *g = d->sig[s];
            for (int k = 0; k < m; k++)
                for (int i = 0; i < MMP_DICT_SIG; i++)
                    *g++ = val[k] * unit[i];
            d->maxabs[s] = maxabs;
        }
        for (int p = 0; p < m; p++) {
            d->sorted_sum[s][p] = val[ord[p]] * area;
            d->sorted_id[s][p] = ord[p];
        }
        for (int i = 0; i * MMP_DICT_DIR < m; i++)
            d->sum_dir[s][i] = d->sorted_sum[s][i * MMP_DICT_DIR];
        d->n[s] = m;
    }
}

int mmp_dict_init(mmp_dict *d, int cap, int maxval, uint32_t redund_q4)
{
    memset(d, 0, sizeof(*d));
    int n0 = mmp_dict_initial_count(maxval);
    if (cap < n0 || maxval < 1 || maxval > 65535)
        return MMP_EINVAL;
    d->cap = cap;
    d->redund_q4 = redund_q4;
    if (!(d->taps = malloc(sizeof(taps) * MMP_NLOG * MMP_NLOG)))
        return MMP_ENOMEM;
    for (int i = 0; i < MMP_NLOG; i++)
        for (int j = 0; j < MMP_NLOG; j++)
            make_taps(1 << i, 1 << j, &d->taps[i * MMP_NLOG + j]);
    for (int s = 0; s < MMP_NSCALES; s++) {
        d->data[s] = malloc((size_t)cap * mmp_scale_area(s) * sizeof(int32_t));
        d->sorted_sum[s] = malloc((size_t)cap * sizeof(int32_t));
        d->sorted_id[s] = malloc((size_t)cap * sizeof(int32_t));
        d->sig[s] = mmp_scale_area(s) >= SIG_MIN_AREA
                        ? malloc((size_t)cap * MMP_DICT_SIG * sizeof(int32_t))
                        : malloc(sizeof(int32_t));
        d->sum_dir[s] = malloc(((size_t)cap / MMP_DICT_DIR + 1) * sizeof(int32_t));
        if (!d->data[s] || !d->sorted_sum[s] || !d->sorted_id[s] || !d->sig[s] || !d->sum_dir[s]) {
            mmp_dict_free(d);
            return MMP_ENOMEM;
        }
    }
    init_constants(d, maxval);
    return 0;
}

static int32_t pattern_sum(const int32_t *p, int area)
{
    int32_t sum = 0;
    for (int i = 0; i < area; i++)
        sum += p[i];
    return sum;
}

/* The first position of scale s's sorted sums that is >= v, through its
 * directory (a scan of up to DIR_SCAN_MAX entries). */
#define DIR_SCAN_MAX 128
static int sorted_lower_bound(const mmp_dict *d, int s, int32_t v)
{
    return mmp_lower_bound_dir(d->sorted_sum[s], d->n[s], d->sum_dir[s], MMP_DICT_DIR,
                               DIR_SCAN_MAX, v);
}

/* True when 16 * ||p - e||^2 <= limit, stopping once it cannot be. The sum
 * only grows, so testing it after every run of up to 16 samples (a loop the
 * compiler can vectorise) gives the same answer as after every sample. */
static int within(const int32_t *p, const int32_t *e, int area, int64_t limit)
{
    int64_t acc = 0;
    for (int i0 = 0; i0 < area; i0 += 16) {
        const int i1 = i0 + 16 < area ? i0 + 16 : area;
        for (int i = i0; i < i1; i++) {
            const int64_t diff = (int64_t)p[i] - e[i];
            acc += diff * diff;
        }
        if (16 * acc > limit)
            return 0;
    }
    return 1;
}

/*
 * Lower bounds on ||p - e||^2 from partial sums. Cut a pattern into cells of
 * equal size 2^l; by Cauchy-Schwarz, ||p - e||^2 >= sum over the cells c of
 * (sum_c p - sum_c e)^2 / 2^l, the finer the grid the tighter. Each element
 * keeps a signature of such sums, together in a small array: its quadrants
 * (a grid of min(h, 2) x min(w, 2) cells, at 0..3) and a grid of
 * min(h, 4) x min(w, 4) cells (at 4..19). The quadrants, then the cells,
 * rule out most of the candidates that the sorted sums leave, before the
 * element's samples are read. Unused entries are 0.
 */
#define SIG_QUADS 0
#define SIG_CELLS 4

/* log2 of the samples in one cell of a grid of at most 2^g x 2^g at scale s. */
static int grid_cell_log2(int s, int g)
{
    const int a = s / MMP_NLOG, b = s % MMP_NLOG;
    return (a > g ? a - g : 0) + (b > g ? b - g : 0);
}

/* The signature is used while every |p_i| and |e_i| of the scale sum to at
 * most SIG_DIFF_MAX >> (quadrant log2): then each difference of quadrant or
 * cell sums is at most SIG_DIFF_MAX, its square below 2^52, and the sums of
 * 16 times 16 of them fit in an int64_t. The codec's samples are below 2^16.
 * Scales of fewer than SIG_MIN_AREA samples have no signature: there the
 * test on the samples costs no more. */
#define SIG_DIFF_MAX ((int64_t)1 << 26)

/* p's signature (entries are 0 where a sum would pass SIG_DIFF_MAX: the
 * signature is not used then); returns max |p_i|. */
static int64_t signature(const int32_t *p, int s, int32_t *sig)
{
    const int a = s / MMP_NLOG, b = s % MMP_NLOG, w = 1 << b;
    const int ca = a > 2 ? a - 2 : 0, cb = b > 2 ? b - 2 : 0;  /* log2 of a cell's sides */
    const int gh = 1 << (a - ca), gw = 1 << (b - cb);          /* cells per column, row */
    const int qsa = gh > 2 ? 1 : 0, qsb = gw > 2 ? 1 : 0;      /* cells to quadrants */
    int64_t cell[16] = {0}, quad[4] = {0};
    /* Each row of cells: its rows summed column by column, then each cell's
     * columns; loops along rows that the compiler can vectorise. */
    for (int cy = 0; cy < gh; cy++) {
        int64_t col[MMP_B] = {0};
        for (int y = cy << ca; y < (cy + 1) << ca; y++) {
            const int32_t *row = p + (y << b);
            for (int x = 0; x < w; x++)
                col[x] += row[x];
        }
        for (int cx = 0; cx < gw; cx++) {
            int64_t sum = 0;
            for (int x = cx << cb; x < (cx + 1) << cb; x++)
                sum += col[x];
            cell[cy * 4 + cx] = sum;
        }
    }
    int32_t lo = 0, hi = 0;
    for (int i = 0; i < w << a; i++) {
        lo = p[i] < lo ? p[i] : lo;
        hi = p[i] > hi ? p[i] : hi;
    }
    for (int cy = 0; cy < gh; cy++)
        for (int cx = 0; cx < gw; cx++)
            quad[(cy >> qsa) * 2 + (cx >> qsb)] += cell[cy * 4 + cx];
    for (int i = 0; i < 4; i++)
        sig[SIG_QUADS + i] = quad[i] >= -SIG_DIFF_MAX && quad[i] <= SIG_DIFF_MAX ? (int32_t)quad[i] : 0;
    for (int i = 0; i < 16; i++)
        sig[SIG_CELLS + i] = cell[i] >= -SIG_DIFF_MAX && cell[i] <= SIG_DIFF_MAX ? (int32_t)cell[i] : 0;
    return -(int64_t)lo > hi ? -(int64_t)lo : hi;
}

/* 16 * sum (x_i - y_i)^2 over n entries <= limit. */
static int sums_within(const int32_t *x, const int32_t *y, int n, int64_t limit)
{
    int64_t acc = 0;
    for (int i = 0; i < n; i++) {
        const int64_t diff = (int64_t)x[i] - y[i];
        acc += diff * diff;
    }
    return 16 * acc <= limit;
}

/*
 * Redundant when some element e has 16 * ||p - e||^2 <= redund_q4 * area. Only
 * elements whose sum is close enough can qualify, since
 * ||p - e||^2 >= (sum p - sum e)^2 / area; the sorted sums find them, and
 * the signatures rule out most of those. *first: the first position of the
 * sorted sums that is >= sum p.
 */
static int redundant(const mmp_dict *d, int s, const int32_t *p, int32_t psum,
                     const int32_t *psig, int64_t pmaxabs, int *first)
{
    int area = mmp_scale_area(s), n = d->n[s];
    int64_t limit = (int64_t)d->redund_q4 * area;
    int64_t sum_limit = limit * area;
    const int lq = grid_cell_log2(s, 1), lc = grid_cell_log2(s, 2);
    const int use_sig = area >= SIG_MIN_AREA && (pmaxabs + d->maxabs[s]) << lq <= SIG_DIFF_MAX;
    const int64_t qlimit = limit << lq, climit = limit << lc;
    const int32_t *ss = d->sorted_sum[s], *ids = d->sorted_id[s], *sigs = d->sig[s];
    int pos = sorted_lower_bound(d, s, psum);
    *first = pos;
    for (int dir = 1; dir >= -1; dir -= 2) {
        for (int k = dir > 0 ? pos : pos - 1; k >= 0 && k < n; k += dir) {
            int64_t diff = (int64_t)ss[k] - psum;
            if (16 * diff * diff > sum_limit)
                break;
            const int id = ids[k];
            if (use_sig) {
                const int32_t *esig = sigs + (long)id * MMP_DICT_SIG;
                if (!sums_within(psig + SIG_QUADS, esig + SIG_QUADS, 4, qlimit) ||
                    !sums_within(psig + SIG_CELLS, esig + SIG_CELLS, 16, climit))
                    continue;
            }
            if (within(p, mmp_dict_elem(d, s, id), area, limit))
                return 1;
        }
    }
    return 0;
}

/*
 * At the 1 x 1 scale, which every pattern reaches (it fills last, if ever),
 * a bit per value |v| < KNOWN1_HALF says that v is known to be redundant
 * there: it was found redundant, or inserted. Either stays true, as the
 * scale only gains elements, so a set bit answers the test at once.
 */
#define KNOWN1_HALF (1 << 16)

static int known1(const mmp_dict *d, int32_t v)
{
    if (!d->known1 || v <= -KNOWN1_HALF || v >= KNOWN1_HALF)
        return 0;
    const uint32_t i = (uint32_t)(v + KNOWN1_HALF);
    return (int)(d->known1[i / 64] >> (i % 64) & 1);
}

static void set_known1(mmp_dict *d, int32_t v)
{
    if (!d->known1 && !(d->known1 = calloc(2 * KNOWN1_HALF / 64, sizeof(uint64_t))))
        return;
    if (v <= -KNOWN1_HALF || v >= KNOWN1_HALF)
        return;
    const uint32_t i = (uint32_t)(v + KNOWN1_HALF);
    d->known1[i / 64] |= (uint64_t)1 << (i % 64);
}

/* Pattern pat (sum psum, signature psig, largest |sample| pmaxabs) as the
 * next element of scale s, its sum at sorted position pos or after the
 * equal sums there. */
static void append(mmp_dict *d, int s, const int32_t *pat, int32_t psum, const int32_t *psig,
                   int64_t pmaxabs, int pos)
{
    const int n = d->n[s], area = mmp_scale_area(s);
    memcpy(d->data[s] + (long)n * area, pat, (size_t)area * sizeof(int32_t));
    if (area >= SIG_MIN_AREA)
        memcpy(d->sig[s] + (long)n * MMP_DICT_SIG, psig, sizeof(int32_t) * MMP_DICT_SIG);
    if (pmaxabs > d->maxabs[s])
        d->maxabs[s] = pmaxabs > INT32_MAX ? INT32_MAX : (int32_t)pmaxabs;
    while (pos < n && d->sorted_sum[s][pos] == psum) /* after equal sums */
        pos++;
    memmove(d->sorted_sum[s] + pos + 1, d->sorted_sum[s] + pos, (size_t)(n - pos) * sizeof(int32_t));
    memmove(d->sorted_id[s] + pos + 1, d->sorted_id[s] + pos, (size_t)(n - pos) * sizeof(int32_t));
    d->sorted_sum[s][pos] = psum;
    d->sorted_id[s][pos] = n;
    d->n[s] = n + 1;
    for (int i = pos / MMP_DICT_DIR; i * MMP_DICT_DIR <= n; i++)
        d->sum_dir[s][i] = d->sorted_sum[s][i * MMP_DICT_DIR];
}

int mmp_dict_insert(mmp_dict *d, int s, const int32_t *pat)
{
    int n = d->n[s], area = mmp_scale_area(s);
    if (n >= d->cap)
        return 0;
    if (area == 1 && known1(d, pat[0]))
        return 0;
    int32_t psum = pattern_sum(pat, area);
    int32_t psig[MMP_DICT_SIG] = {0};
    const int64_t pmaxabs = area >= SIG_MIN_AREA ? signature(pat, s, psig) : 0;
    int pos;
    const int red = redundant(d, s, pat, psum, psig, pmaxabs, &pos);
    if (area == 1)
        set_known1(d, pat[0]);
    if (red)
        return 0;
    append(d, s, pat, psum, psig, pmaxabs, pos);
    return 1;
}

void mmp_dict_update_scale(mmp_dict *d, const int32_t *pat, int a, int b, int s)
{
    int32_t tmp[MMP_B * MMP_B];
    if (d->n[s] >= d->cap)
        return;
    rescale_with(d, pat, a, b, tmp, s / MMP_NLOG, s % MMP_NLOG);
    mmp_dict_insert(d, s, tmp);
}

void mmp_dict_update_width(mmp_dict *d, const int32_t *pat, int a, int b, int db)
{
    int32_t rows[MMP_B * MMP_B], tmp[MMP_B * MMP_B];
    const int32_t *r = NULL; /* pat's rows resampled to 2^db, once for all heights */
    for (int da = 0; da < MMP_NLOG; da++) {
        const int s = da * MMP_NLOG + db;
        if (d->n[s] >= d->cap)
            continue;
        if (!r && b == db) {
            r = pat;
        } else if (!r) {
            resample_rows(pat, 1 << a, 1 << b, rows, 1 << db, &d->taps[b * MMP_NLOG + db]);
            r = rows;
        }
        if (a == da) {
            mmp_dict_insert(d, s, r);
        } else {
            resample_cols(r, 1 << db, tmp, 1 << da, &d->taps[a * MMP_NLOG + da]);
            mmp_dict_insert(d, s, tmp);
        }
    }
}

void mmp_dict_update(mmp_dict *d, const int32_t *pat, int a, int b)
{
    for (int s = 0; s < MMP_NSCALES; s++)
        mmp_dict_update_scale(d, pat, a, b, s);
}

/*
 * The set of mmp_dict_repeat: the patterns' samples one after another in
 * `samples`, their entries (hash, shape, offset), and an open-addressing
 * table of slots, each the entry's number plus 1 with the high half of its
 * hash as a tag, so that a probe reads an entry only when the tags match. The
 * set stops growing at SEEN_MAX_SAMPLES samples or when memory runs out; a
 * pattern it did not record is simply never called a repeat.
 */
#define SEEN_MAX_SAMPLES (1L << 22)

typedef struct seen_entry {
    uint64_t hash;
    int32_t off;
    uint8_t a, b;
} seen_entry;

struct mmp_seen {
    uint64_t *slot;       /* nslot (a power of two): 0, or hash tag << 32 | 1 + entry */
    long nslot;
    seen_entry *entry;
    long n, cap_entries;
    int32_t *samples;
    long len, cap_samples;
};

static void seen_free(struct mmp_seen *t)
{
    if (t) {
        free(t->slot);
        free(t->entry);
        free(t->samples);
        free(t);
    }
}

static uint64_t pattern_hash(const int32_t *p, int a, int b)
{
    uint64_t h = 0x9E3779B97F4A7C15u ^ (uint64_t)(a * MMP_NLOG + b);
    for (int i = 0; i < 1 << (a + b); i++)
        h = (h ^ (uint32_t)p[i]) * 0x100000001B3u;
    return h ^ (h >> 29);
}

static uint64_t seen_slot(uint64_t hash, long entry)
{
    return (hash & 0xFFFFFFFF00000000u) | (uint64_t)(entry + 1);
}

/* Room for one more entry of `area` samples: 0, or -1 when the set is full
 * or memory ran out. */
static int seen_reserve(struct mmp_seen *t, int area)
{
    if (t->len + area > SEEN_MAX_SAMPLES)
        return -1;
    if (t->len + area > t->cap_samples) {
        long cap = t->cap_samples ? 2 * t->cap_samples : 1L << 14;
        while (cap < t->len + area)
            cap *= 2;
        int32_t *ns = realloc(t->samples, (size_t)cap * sizeof(int32_t));
        if (!ns)
            return -1;
        t->samples = ns;
        t->cap_samples = cap;
    }
    if (t->n + 1 > t->cap_entries) {
        long cap = t->cap_entries ? 2 * t->cap_entries : 1L << 10;
        seen_entry *ne = realloc(t->entry, (size_t)cap * sizeof(seen_entry));
        if (!ne)
            return -1;
        t->entry = ne;
        t->cap_entries = cap;
    }
    if (2 * (t->n + 1) > t->nslot) { /* load at most 1/2: rehash into twice the slots */
        long nslot = t->nslot ? 2 * t->nslot : 1L << 11;
        uint64_t *slot = calloc((size_t)nslot, sizeof(uint64_t));
        if (!slot)
            return -1;
        for (long i = 0; i < t->n; i++) {
            long j = (long)(t->entry[i].hash & (uint64_t)(nslot - 1));
            while (slot[j])
                j = (j + 1) & (nslot - 1);
            slot[j] = seen_slot(t->entry[i].hash, i);
        }
        free(t->slot);
        t->slot = slot;
        t->nslot = nslot;
    }
    return 0;
}

int mmp_dict_repeat(mmp_dict *d, const int32_t *pat, int a, int b)
{
    if (!d->seen && !(d->seen = calloc(1, sizeof *d->seen)))
        return 0;
    struct mmp_seen *t = d->seen;
    const int area = 1 << (a + b);
    const uint64_t h = pattern_hash(pat, a, b);
    long j = t->nslot ? (long)(h & (uint64_t)(t->nslot - 1)) : 0;
    for (; t->nslot && t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
        if ((t->slot[j] ^ h) >> 32)
            continue;
        const seen_entry *e = &t->entry[(t->slot[j] & 0xFFFFFFFFu) - 1];
        if (e->hash == h && e->a == a && e->b == b &&
            !memcmp(t->samples + e->off, pat, (size_t)area * sizeof(int32_t)))
            return 1;
    }
    if (seen_reserve(t, area))
        return 0;
    j = (long)(h & (uint64_t)(t->nslot - 1));
    while (t->slot[j])
        j = (j + 1) & (t->nslot - 1);
    memcpy(t->samples + t->len, pat, (size_t)area * sizeof(int32_t));
    t->entry[t->n] = (seen_entry){.hash = h, .off = (int32_t)t->len, .a = (uint8_t)a, .b = (uint8_t)b};
    t->slot[j] = seen_slot(h, t->n);
    t->n++;
    t->len += area;
    return 0;
}

uint32_t mmp_redund_for_lambda(uint32_t lambda_q8)
{
    /* Mean squared distance per pixel of min(lambda / 4, 8), in Q4. Chosen by
     * measurement (docs/tuning.md, "Redundancy threshold"): below lambda 30
     * it keeps lambda / 4, which is as good as any smaller threshold and
     * faster; above, the cap cuts the Lagrangian cost by about 2 % at lambda
     * 300-1000. */
    uint32_t q4 = (uint32_t)(((uint64_t)lambda_q8 + 32) / 64);
    return q4 < 128 ? q4 : 128;
}
