/* The multiscale dictionary: initial contents, redundancy control, insertion. */
#include "dict/dict.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

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

void mmp_dict_free(mmp_dict *d)
{
    for (int s = 0; s < MMP_NSCALES; s++) {
        free(d->data[s]);
        free(d->sorted_sum[s]);
        free(d->sorted_id[s]);
    }
    memset(d, 0, sizeof(*d));
}

int mmp_dict_init(mmp_dict *d, int cap, int maxval, uint32_t redund_q4)
{
    memset(d, 0, sizeof(*d));
    int n0 = mmp_dict_initial_count(maxval);
    if (cap < n0 || maxval < 1 || maxval > 65535)
        return MMP_EINVAL;
    d->cap = cap;
    d->redund_q4 = redund_q4;
    for (int s = 0; s < MMP_NSCALES; s++) {
        d->data[s] = malloc((size_t)cap * mmp_scale_area(s) * sizeof(int32_t));
        d->sorted_sum[s] = malloc((size_t)cap * sizeof(int32_t));
        d->sorted_id[s] = malloc((size_t)cap * sizeof(int32_t));
        if (!d->data[s] || !d->sorted_sum[s] || !d->sorted_id[s]) {
            mmp_dict_free(d);
            return MMP_ENOMEM;
        }
    }
    /* 0, +step, -step, +2 step, -2 step, ...: the zero block has index 0. */
    int step = initial_step(maxval);
    int32_t pat[MMP_B * MMP_B];
    for (int s = 0; s < MMP_NSCALES; s++) {
        int area = mmp_scale_area(s);
        for (int k = 0; k < n0; k++) {
            int32_t v = (int32_t)((k + 1) / 2) * step * ((k & 1) ? 1 : -1);
            for (int i = 0; i < area; i++)
                pat[i] = v;
            mmp_dict_insert(d, s, pat);
        }
    }
    return 0;
}

/* floor(a / 2^s): every divisor of the resampling is a power of two, and a
 * shift costs far less than a 64-bit division (the decoder rescales every
 * new pattern to every scale). Written without shifting a negative value. */
static int64_t floor_shift(int64_t a, int s)
{
    return a >= 0 ? a >> s : -((-a + ((int64_t)1 << s) - 1) >> s);
}

static int log2_of(int v)
{
    int l = 0;
    while ((1 << l) < v)
        l++;
    return l;
}

/*
 * 1-D resampling of n samples (stride sstride) to m samples (stride dstride),
 * n and m powers of two (docs/format.md 5.2). Shrinking averages groups of
 * n/m samples; growing interpolates linearly between sample centres; both
 * round halves up.
 */
static void resample_1d(const int32_t *src, int n, int sstride, int32_t *dst, int m, int dstride)
{
    if (m == n) {
        for (int j = 0; j < m; j++)
            dst[j * dstride] = src[j * sstride];
    } else if (m < n) {
        const int k = n / m, lk = log2_of(k);
        for (int j = 0; j < m; j++) {
            int64_t sum = 0;
            for (int i = 0; i < k; i++)
                sum += src[(j * k + i) * sstride];
            dst[j * dstride] = (int32_t)floor_shift(2 * sum + k, lk + 1); /* / (2k) */
        }
    } else {
        const int f = m / n, den = 2 * f, lden = log2_of(den);
        for (int j = 0; j < m; j++) {
            int t = 2 * j + 1 - f; /* source position * den */
            int32_t v;
            if (t <= 0) {
                v = src[0];
            } else {
                int i0 = t >> lden, frac = t & (den - 1);
                if (i0 >= n - 1)
                    v = src[(n - 1) * sstride];
                else
                    v = (int32_t)floor_shift((int64_t)src[i0 * sstride] * (den - frac) +
                                                 (int64_t)src[(i0 + 1) * sstride] * frac + den / 2,
                                             lden);
            }
            dst[j * dstride] = v;
        }
    }
}

void mmp_rescale(const int32_t *src, int sh, int sw, int32_t *dst, int dh, int dw)
{
    int32_t tmp[MMP_B * MMP_B];
    for (int y = 0; y < sh; y++)
        resample_1d(src + y * sw, sw, 1, tmp + y * dw, dw, 1);
    for (int x = 0; x < dw; x++)
        resample_1d(tmp + x, sh, dw, dst + x, dh, dw);
}

static int32_t pattern_sum(const int32_t *p, int area)
{
    int32_t sum = 0;
    for (int i = 0; i < area; i++)
        sum += p[i];
    return sum;
}

/* First position in the sorted sums whose value is >= v. */
static int lower_bound(const int32_t *a, int n, int32_t v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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
 * Redundant when some element e has 16 * ||p - e||^2 <= redund_q4 * area. Only
 * elements whose sum is close enough can qualify, since
 * ||p - e||^2 >= (sum p - sum e)^2 / area; the sorted sums find them.
 */
static int redundant(const mmp_dict *d, int s, const int32_t *p, int32_t psum)
{
    int area = mmp_scale_area(s), n = d->n[s];
    int64_t limit = (int64_t)d->redund_q4 * area;
    int64_t sum_limit = limit * area;
    const int32_t *ss = d->sorted_sum[s];
    int pos = lower_bound(ss, n, psum);
    for (int k = pos; k < n; k++) {
        int64_t diff = (int64_t)ss[k] - psum;
        if (16 * diff * diff > sum_limit)
            break;
        if (within(p, mmp_dict_elem(d, s, d->sorted_id[s][k]), area, limit))
            return 1;
    }
    for (int k = pos - 1; k >= 0; k--) {
        int64_t diff = (int64_t)ss[k] - psum;
        if (16 * diff * diff > sum_limit)
            break;
        if (within(p, mmp_dict_elem(d, s, d->sorted_id[s][k]), area, limit))
            return 1;
    }
    return 0;
}

int mmp_dict_insert(mmp_dict *d, int s, const int32_t *pat)
{
    int n = d->n[s], area = mmp_scale_area(s);
    if (n >= d->cap)
        return 0;
    int32_t psum = pattern_sum(pat, area);
    if (redundant(d, s, pat, psum))
        return 0;
    memcpy(d->data[s] + (long)n * area, pat, (size_t)area * sizeof(int32_t));
    int pos = lower_bound(d->sorted_sum[s], n, psum + 1); /* after equal sums */
    memmove(d->sorted_sum[s] + pos + 1, d->sorted_sum[s] + pos, (size_t)(n - pos) * sizeof(int32_t));
    memmove(d->sorted_id[s] + pos + 1, d->sorted_id[s] + pos, (size_t)(n - pos) * sizeof(int32_t));
    d->sorted_sum[s][pos] = psum;
    d->sorted_id[s][pos] = n;
    d->n[s] = n + 1;
    return 1;
}

void mmp_dict_update_scale(mmp_dict *d, const int32_t *pat, int a, int b, int s)
{
    int32_t tmp[MMP_B * MMP_B];
    if (d->n[s] >= d->cap)
        return;
    int da = s / MMP_NLOG, db = s % MMP_NLOG;
    mmp_rescale(pat, 1 << a, 1 << b, tmp, 1 << da, 1 << db);
    mmp_dict_insert(d, s, tmp);
}

void mmp_dict_update(mmp_dict *d, const int32_t *pat, int a, int b)
{
    for (int s = 0; s < MMP_NSCALES; s++)
        mmp_dict_update_scale(d, pat, a, b, s);
}

uint32_t mmp_redund_for_lambda(uint32_t lambda_q8)
{
    /* Mean squared distance per pixel of min(lambda / 4, 8), in Q4. Chosen by
     * measurement (docs/results/tuning): below lambda 30 it keeps lambda / 4,
     * which is as good as any smaller threshold and faster; above, the cap
     * cuts the Lagrangian cost by about 2 % at lambda 300-1000. */
    uint32_t q4 = (uint32_t)(((uint64_t)lambda_q8 + 32) / 64);
    return q4 < 128 ? q4 : 128;
}
