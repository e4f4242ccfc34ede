/*
 * Tests for the restoration filter (filter/restore.c, mmp/enc/restore_fit.c,
 * docs/format.md section 7.5): a re-implementation of the section's classes
 * and filtering written from the document ("naive_*" below) that the library
 * must match sample for sample on random planes, coefficients and region
 * flags, at the edges and at 8 and 16 bits; the syntax read back as written;
 * the encoder's fit lowering the error of a blurred plane and staying off
 * where there is nothing to gain; and whole encodes, where the filter only
 * ever raises PSNR over the same blocks without it.
 */
#include <math.h>

#include "common/rangecoder.h"
#include "filter/restore.h"
#include "mmp/mmp.h"
#include "mmp/enc/restore_fit.h"
#include "tests/util.h"

/* ---- section 7.5 from the document ---- */

static int32_t naive_s(const int32_t *rec, int stride, int w, int h, int y, int x)
{
    y = y < 0 ? 0 : y > h - 1 ? h - 1 : y;
    x = x < 0 ? 0 : x > w - 1 ? w - 1 : x;
    return rec[y * stride + x];
}

static int naive_class(const int32_t *rec, int stride, int w, int h, int maxval, int y, int x)
{
    const int y0 = 4 * (y >> 2), x0 = 4 * (x >> 2);
    long long gv = 0, gh = 0, gd0 = 0, gd1 = 0;
    for (int v = y0 - 1; v <= y0 + 4; v++)
        for (int u = x0 - 1; u <= x0 + 4; u++) {
            const long long c2 = 2LL * naive_s(rec, stride, w, h, v, u);
            gv += llabs(c2 - naive_s(rec, stride, w, h, v - 1, u) - naive_s(rec, stride, w, h, v + 1, u));
            gh += llabs(c2 - naive_s(rec, stride, w, h, v, u - 1) - naive_s(rec, stride, w, h, v, u + 1));
            gd0 += llabs(c2 - naive_s(rec, stride, w, h, v - 1, u - 1) -
                         naive_s(rec, stride, w, h, v + 1, u + 1));
            gd1 += llabs(c2 - naive_s(rec, stride, w, h, v - 1, u + 1) -
                         naive_s(rec, stride, w, h, v + 1, u - 1));
        }
    long long a = 255 * (gv + gh) / (36LL * maxval);
    int act = 0;
    while (a) {
        act++;
        a >>= 1;
    }
    if (act > 6)
        act = 6;
    const long long hmax = gh > gv ? gh : gv, hmin = gh > gv ? gv : gh;
    const long long dmax = gd0 > gd1 ? gd0 : gd1, dmin = gd0 > gd1 ? gd1 : gd0;
    int dir;
    if (hmax <= 2 * hmin && dmax <= 2 * dmin)
        dir = 0;
    else if (hmax * dmin > dmax * hmin)
        dir = 1 + 2 * (gh > gv ? 0 : 1) + (2 * hmax > 9 * hmin ? 1 : 0);
    else
        dir = 5 + 2 * (gd0 > gd1 ? 0 : 1) + (2 * dmax > 9 * dmin ? 1 : 0);
    return 7 * dir + act;
}

static const int naive_tap[12][2] = {{-3, 0},  {-2, -1}, {-2, 0}, {-2, 1}, {-1, -2}, {-1, -1},
                                     {-1, 0},  {-1, 1},  {-1, 2}, {0, -3}, {0, -2},  {0, -1}};

static int32_t naive_out(const mmp_restore *r, const int32_t *rec, int stride, int w, int h,
                         int maxval, int y, int x)
{
    const int32_t sv = naive_s(rec, stride, w, h, y, x);
    if (!r->enabled || !r->on[(y / 64) * r->rw + x / 64])
        return sv;
    const int16_t *c = r->coef[r->map[naive_class(rec, stride, w, h, maxval, y, x)]];
    long long s = 0;
    for (int i = 0; i < 12; i++)
        s += (long long)c[i] * (naive_s(rec, stride, w, h, y + naive_tap[i][0], x + naive_tap[i][1]) +
                                naive_s(rec, stride, w, h, y - naive_tap[i][0], x - naive_tap[i][1]) -
                                2LL * sv);
    const long long q = s + 64, f = q >= 0 ? q / 128 : -((-q + 127) / 128);
    const long long o = sv + f;
    return (int32_t)(o < 0 ? 0 : o > maxval ? maxval : o);
}

/* ---- helpers ---- */

static void random_filter(mmp_restore *r)
{
    r->enabled = 1;
    r->nfilters = 1 + (int)rng_below(MMP_RF_MAX_FILTERS);
    for (int k = 0; k < MMP_RF_CLASSES; k++)
        r->map[k] = (uint8_t)rng_below((size_t)r->nfilters);
    for (int f = 0; f < r->nfilters; f++)
        for (int i = 0; i < MMP_RF_TAPS; i++)
            r->coef[f][i] = (int16_t)(rng_below(4) ? rng_range(-24, 24) : rng_range(-127, 127));
    for (int i = 0; i < r->rw * r->rh; i++)
        r->on[i] = rng_below(4) != 0;
}

/* A plane of w x h samples in a wider buffer: smooth areas, edges and noise. */
static int32_t *random_plane(int w, int h, int stride, int maxval)
{
    int32_t *p = malloc(sizeof *p * (size_t)stride * h);
    assert_non_null(p);
    const int kind = (int)rng_below(3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < stride; x++) {
            long v;
            if (kind == 0)
                v = (long)rng_below((size_t)maxval + 1);
            else if (kind == 1)
                v = (long)maxval * ((x + 2 * y) % 37) / 36 + rng_range(-3, 3);
            else
                v = (x * 7 + y * 3) % 23 < 11 ? maxval / 5 : maxval - maxval / 7;
            p[y * stride + x] = (int32_t)(v < 0 ? 0 : v > maxval ? maxval : v);
        }
    return p;
}

/* ---- tests ---- */

/* mmp_restore_apply and mmp_restore_classify against the document. */
static void test_matches_document(void **state)
{
    (void)state;
    rng_seed(0x5e5707e);
    static const int maxvals[] = {255, 1, 1023, 65535};
    for (int iter = 0; iter < 40; iter++) {
        const int w = 1 + (int)rng_below(iter < 20 ? 20 : 150);
        const int h = 1 + (int)rng_below(iter < 20 ? 20 : 140);
        const int stride = w + (int)rng_below(5);
        const int maxval = maxvals[iter % 4];
        int32_t *rec = random_plane(w, h, stride, maxval);
        mmp_restore r;
        assert_int_equal(mmp_restore_init(&r, w, h), 0);
        assert_int_equal(r.rw, (w + 63) / 64);
        assert_int_equal(r.rh, (h + 63) / 64);
        random_filter(&r);
        uint16_t *out = malloc(sizeof *out * (size_t)w * h);
        uint8_t *cls = malloc((size_t)((w + 3) / 4) * ((h + 3) / 4));
        assert_non_null(out);
        assert_non_null(cls);
        /* In bands on 1 to 5 threads (the encoder's): each sample as the
         * document says. */
        assert_int_equal(
            mmp_restore_apply_threads(&r, rec, stride, w, h, maxval, 1 + iter % 5, out), 0);
        assert_int_equal(mmp_restore_classify(rec, stride, w, h, maxval, NULL, cls), 0);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const int32_t want = naive_out(&r, rec, stride, w, h, maxval, y, x);
                if (out[y * w + x] != want)
                    fail_msg("%dx%d maxval %d: sample (%d, %d) is %d, the document says %d", w, h,
                             maxval, y, x, out[y * w + x], want);
                if (cls[(y / 4) * ((w + 3) / 4) + x / 4] !=
                    naive_class(rec, stride, w, h, maxval, y, x))
                    fail_msg("%dx%d: class of (%d, %d) differs", w, h, y, x);
            }
        /* The same in bands of rows (mmp_restore_rows), given the classes
         * of the regions that are on. */
        uint16_t *bands = malloc(sizeof *bands * (size_t)w * h);
        assert_non_null(bands);
        memset(bands, 0, sizeof *bands * (size_t)w * h);
        assert_int_equal(mmp_restore_classify(rec, stride, w, h, maxval, &r, cls), 0);
        for (int y0 = 0; y0 < h;) {
            const int step = 1 + (int)rng_below(9), y1 = y0 + step < h ? y0 + step : h;
            mmp_restore_rows(&r, rec, stride, w, h, maxval, cls, y0, y1, bands, w);
            y0 = y1;
        }
        assert_memory_equal(bands, out, sizeof *out * (size_t)w * h);
        /* The classes in bands of groups of rows (mmp_restore_classify_rows),
         * each from a buffer of its own, as the decoder's crew makes them. */
        const size_t ncls = (size_t)((w + 3) / 4) * ((h + 3) / 4);
        uint8_t *cls_bands = malloc(ncls);
        assert_non_null(cls_bands);
        memset(cls_bands, 0xff, ncls);
        for (int g0 = 0; g0 < (h + 3) / 4;) {
            const int g1 = g0 + 1 + (int)rng_below(4);
            assert_int_equal(mmp_restore_classify_rows(rec, stride, w, h, maxval, &r, g0,
                                                       g1 < (h + 3) / 4 ? g1 : (h + 3) / 4,
                                                       cls_bands),
                             0);
            g0 = g1;
        }
        assert_memory_equal(cls_bands, cls, ncls);
        /* The whole output in bands of groups (mmp_restore_apply_groups),
         * into rows wider than the plane (as the decoder writes a tile into
         * its place in the image): the samples beyond w stay as they were. */
        const long ostride = w + 3;
        uint16_t *wide = malloc(sizeof *wide * (size_t)ostride * h);
        assert_non_null(wide);
        memset(wide, 0xab, sizeof *wide * (size_t)ostride * h);
        memset(cls_bands, 0xff, ncls);
        for (int g0 = 0; g0 < (h + 3) / 4;) {
            const int g1 = g0 + 1 + (int)rng_below(4);
            assert_int_equal(mmp_restore_apply_groups(&r, rec, stride, w, h, maxval, g0,
                                                      g1 < (h + 3) / 4 ? g1 : (h + 3) / 4,
                                                      cls_bands, wide, ostride),
                             0);
            g0 = g1;
        }
        for (int y = 0; y < h; y++) {
            assert_memory_equal(wide + y * ostride, out + (long)y * w, sizeof *out * (size_t)w);
            for (long x = w; x < ostride; x++)
                assert_int_equal(wide[y * ostride + x], 0xabab);
        }
        free(wide);
        free(cls_bands);
        free(bands);
        /* Disabled: the plane as it is. */
        r.enabled = 0;
        assert_int_equal(mmp_restore_apply(&r, rec, stride, w, h, maxval, out), 0);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                assert_int_equal(out[y * w + x], rec[y * stride + x]);
        mmp_restore_free(&r);
        free(out);
        free(cls);
        free(rec);
    }
}

/* What mmp_restore_write codes, mmp_restore_read gives back, in a stream
 * with other symbols after it. */
static void test_syntax_round_trip(void **state)
{
    (void)state;
    rng_seed(77);
    for (int iter = 0; iter < 50; iter++) {
        const int w = 1 + (int)rng_below(300), h = 1 + (int)rng_below(300);
        mmp_restore a, b;
        assert_int_equal(mmp_restore_init(&a, w, h), 0);
        assert_int_equal(mmp_restore_init(&b, w, h), 0);
        if (iter % 5)
            random_filter(&a);
        if (iter % 7 == 1)
            a.nfilters = 1;
        mmp_rc_enc e;
        mmp_rc_enc_init(&e);
        mmp_restore_write(&e, &a);
        mmp_rc_encode(&e, 5, 1, 11);
        assert_int_equal(mmp_rc_enc_finish(&e), 0);
        mmp_rc_dec d;
        mmp_rc_dec_init(&d, e.buf, e.len);
        assert_int_equal(mmp_restore_read(&d, &b), 0);
        assert_int_equal(mmp_rc_decode_freq(&d, 11), 5);
        assert_int_equal(d.overrun, 0);
        assert_int_equal(b.enabled, a.enabled);
        if (a.enabled) {
            assert_int_equal(b.nfilters, a.nfilters);
            for (int k = 0; k < MMP_RF_CLASSES; k++)
                assert_int_equal(b.map[k], a.nfilters > 1 ? a.map[k] : 0);
            assert_memory_equal(b.coef, a.coef, sizeof a.coef[0] * (size_t)a.nfilters);
            assert_memory_equal(b.on, a.on, (size_t)a.rw * a.rh);
        }
        mmp_rc_enc_free(&e);
        mmp_restore_free(&a);
        mmp_restore_free(&b);
    }
}

static double sse(const int32_t *o, const uint16_t *f, int w, int h)
{
    double s = 0;
    for (int i = 0; i < w * h; i++)
        s += ((double)o[i] - f[i]) * ((double)o[i] - f[i]);
    return s;
}

/* blur: orig (w x h) averaged with weight 4 on each sample and 1 on each of
 * its four neighbours (over 8, rounded), edges replicated. */
static void blur_plane(const int32_t *orig, int w, int h, int32_t *blur)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
            const int yu = y > 0 ? y - 1 : y, yd = y < h - 1 ? y + 1 : y;
            blur[y * w + x] = (orig[y * w + xl] + orig[y * w + xr] + orig[yu * w + x] +
                               orig[yd * w + x] + 4 * orig[y * w + x] + 4) / 8;
        }
}

/* Whether r's regions are on exactly where its filters, applied with every
 * region on, lower the squared error of rec against orig (w x h, stride w):
 * what the fit decides last for the filters it returns. Returns the
 * regions on. */
static int assert_on_by_gain(const mmp_restore *r, const int32_t *rec, const int32_t *orig, int w,
                             int h, int maxval)
{
    mmp_restore all = *r;
    const int nr = r->rw * r->rh;
    all.on = malloc((size_t)nr);
    uint16_t *out = malloc(sizeof *out * (size_t)w * h);
    int64_t *gain = calloc((size_t)nr, sizeof *gain);
    assert_non_null(all.on);
    assert_non_null(out);
    assert_non_null(gain);
    memset(all.on, 1, (size_t)nr);
    assert_int_equal(mmp_restore_apply(&all, rec, w, w, h, maxval, out), 0);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int64_t e0 = orig[y * w + x] - rec[y * w + x], e1 = orig[y * w + x] - out[y * w + x];
            gain[(y / 64) * r->rw + x / 64] += e0 * e0 - e1 * e1;
        }
    int on = 0;
    for (int i = 0; i < nr; i++) {
        if (r->on[i] != (gain[i] > 0))
            fail_msg("region %d: on %d, but its gain is %lld", i, r->on[i], (long long)gain[i]);
        on += r->on[i];
    }
    free(gain);
    free(out);
    free(all.on);
    return on;
}

/* The fit on a blurred camera crop: enabled, lower error than the blurred
 * plane; on the original itself and at a huge lambda: off. */
static void test_fit(void **state)
{
    (void)state;
    mmp_image img;
    if (load_crop("camera", 200, 150, 128, 96, &img)) {
        skip();
        return;
    }
    const int w = img.width, h = img.height;
    int32_t *orig = malloc(sizeof *orig * (size_t)w * h), *blur = malloc(sizeof *blur * (size_t)w * h);
    uint16_t *out = malloc(sizeof *out * (size_t)w * h);
    assert_non_null(orig);
    assert_non_null(blur);
    assert_non_null(out);
    for (int i = 0; i < w * h; i++)
        orig[i] = img.pix[i];
    blur_plane(orig, w, h, blur);
    mmp_restore r;
    assert_int_equal(mmp_restore_init(&r, w, h), 0);
    assert_int_equal(mmp_restore_fit(&r, blur, orig, w, w, h, 255, 10.0, 1), 0);
    assert_int_equal(r.enabled, 1);
    assert_int_equal(mmp_restore_apply(&r, blur, w, w, h, 255, out), 0);
    for (int i = 0; i < w * h; i++)
        assert_in_range(out[i], 0, 255);
    uint16_t *b16 = malloc(sizeof *b16 * (size_t)w * h);
    assert_non_null(b16);
    for (int i = 0; i < w * h; i++)
        b16[i] = (uint16_t)blur[i];
    const double before = sse(orig, b16, w, h), after = sse(orig, out, w, h);
    print_message("blurred crop: squared error %.0f, filtered %.0f (%d filters)\n", before, after,
                  r.nfilters);
    assert_true(after < 0.8 * before);
    /* Nothing to restore. */
    assert_int_equal(mmp_restore_fit(&r, orig, orig, w, w, h, 255, 10.0, 1), 0);
    assert_int_equal(r.enabled, 0);
    /* Not worth its bits. */
    assert_int_equal(mmp_restore_fit(&r, blur, orig, w, w, h, 255, 1e6, 1), 0);
    assert_int_equal(r.enabled, 0);
    mmp_restore_free(&r);
    free(b16);
    free(out);
    free(blur);
    free(orig);
    mmp_image_free(&img);
}

/* r and q hold the same filter. */
static void assert_same_filter(const mmp_restore *r, const mmp_restore *q)
{
    assert_int_equal(r->enabled, q->enabled);
    assert_int_equal(r->nfilters, q->nfilters);
    assert_memory_equal(r->map, q->map, sizeof r->map);
    assert_memory_equal(r->coef, q->coef, sizeof r->coef);
    assert_memory_equal(r->on, q->on, (size_t)r->rw * r->rh);
}

/*
 * The fit is the same on 1 and on several threads: a 384 x 384 tiling of a
 * blurred crop at 8 bits and at 16 bits (samples times 257: sums past 2^53,
 * still exact in 64-bit integers), whose sums are taken over groups of
 * regions on those threads.
 */
static void test_fit_threads(void **state)
{
    (void)state;
    mmp_image img;
    if (load_crop("camera", 200, 150, 128, 96, &img)) {
        skip();
        return;
    }
    const int cw = img.width, ch = img.height, w = 3 * cw, h = 4 * ch;
    int32_t *orig = malloc(sizeof *orig * (size_t)w * h), *blur = malloc(sizeof *blur * (size_t)w * h);
    assert_non_null(orig);
    assert_non_null(blur);
    for (int scale = 1; scale <= 257; scale += 256) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                orig[y * w + x] = scale * img.pix[(y % ch) * cw + x % cw];
        blur_plane(orig, w, h, blur);
        /* Blurred in the first quarter of the rows of every other region,
         * and in the other three quarters of the rest; exact elsewhere, where
         * the filter can only harm: a region's switch depends on all its
         * rows. */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if ((y % 64 < 16) == ((x / 64 + y / 64) % 2 == 0))
                    blur[y * w + x] = orig[y * w + x];
        const int maxval = 255 * scale;
        mmp_restore one, many;
        assert_int_equal(mmp_restore_init(&one, w, h), 0);
        assert_int_equal(mmp_restore_init(&many, w, h), 0);
        assert_int_equal(mmp_restore_fit(&one, blur, orig, w, w, h, maxval, 10.0 * scale * scale, 1), 0);
        assert_int_equal(one.enabled, 1);
        const int on = assert_on_by_gain(&one, blur, orig, w, h, maxval);
        for (int threads = 2; threads <= 5; threads += 3) {
            assert_int_equal(
                mmp_restore_fit(&many, blur, orig, w, w, h, maxval, 10.0 * scale * scale, threads),
                0);
            assert_same_filter(&one, &many);
        }
        print_message("maxval %d: %d filters, %d of %d regions on, the same on 1, 2 and 5 threads\n",
                      maxval, one.nfilters, on, one.rw * one.rh);
        mmp_restore_free(&one);
        mmp_restore_free(&many);
    }
    free(blur);
    free(orig);
    mmp_image_free(&img);
}

/*
 * The fit's statistics taken the fast way (the regions that are off taken
 * from the first round's sums, the taps at fixed offsets away from the
 * edges) equal the plain way's (mmp_restore_fit_plain): the same filter, on
 * a plane whose size is no multiple of a region, at 8 and 16 bits, with an
 * eighth, a quarter and three quarters of its regions left unblurred (where
 * the filter can only harm, so that they go off), on 1 and 3 threads.
 */
static void test_fit_plain(void **state)
{
    (void)state;
    mmp_image img;
    if (load_crop("camera", 200, 150, 128, 96, &img)) {
        skip();
        return;
    }
    const int cw = img.width, ch = img.height, w = 3 * cw - 17, h = 4 * ch - 5;
    int32_t *orig = malloc(sizeof *orig * (size_t)w * h), *blur = malloc(sizeof *blur * (size_t)w * h);
    assert_non_null(orig);
    assert_non_null(blur);
    int few_off = 0, most_off = 0;
    for (int scale = 1; scale <= 257; scale += 256) {
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                orig[y * w + x] = scale * img.pix[(y % ch) * cw + x % cw];
        blur_plane(orig, w, h, blur);
        for (int eighths = 1; eighths <= 6; eighths = eighths == 1 ? 2 : eighths + 4) {
            int32_t *rec = malloc(sizeof *rec * (size_t)w * h);
            assert_non_null(rec);
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    const unsigned reg = (unsigned)(y / 64) * 7919u + (unsigned)(x / 64) * 104729u;
                    rec[y * w + x] = (reg * 2654435761u >> 16) % 8 < (unsigned)eighths
                                         ? orig[y * w + x]
                                         : blur[y * w + x];
                }
            const int maxval = 255 * scale;
            const double lambda = 10.0 * scale * scale;
            for (int threads = 1; threads <= 3; threads += 2) {
                mmp_restore fast, plain;
                assert_int_equal(mmp_restore_init(&fast, w, h), 0);
                assert_int_equal(mmp_restore_init(&plain, w, h), 0);
                assert_int_equal(mmp_restore_fit(&fast, rec, orig, w, w, h, maxval, lambda, threads), 0);
                mmp_restore_fit_plain(1);
                const int err = mmp_restore_fit(&plain, rec, orig, w, w, h, maxval, lambda, threads);
                mmp_restore_fit_plain(0);
                assert_int_equal(err, 0);
                assert_int_equal(fast.enabled, 1);
                assert_same_filter(&fast, &plain);
                int on = 0;
                const int nr = fast.rw * fast.rh;
                for (int i = 0; i < nr; i++)
                    on += fast.on[i];
                few_off += on < nr && 2 * on >= nr;
                most_off += 2 * on < nr;
                mmp_restore_free(&fast);
                mmp_restore_free(&plain);
            }
            free(rec);
        }
    }
    /* Both ways of taking the sums of a later round were taken. */
    print_message("fits with a few regions off: %d, with most off: %d\n", few_off, most_off);
    assert_true(few_off > 0);
    assert_true(most_off > 0);
    free(blur);
    free(orig);
    mmp_image_free(&img);
}

/* Whole encodes: with the filter the blocks are the same, so the file
 * holds the same bytes up to the filter and the PSNR can only rise; the
 * decoder agrees with the encoder's reconstruction either way. */
static void test_encode_filter_on_off(void **state)
{
    (void)state;
    static const char *names[] = {"camera", "brick", "text"};
    int enabled = 0;
    for (int n = 0; n < 3; n++) {
        mmp_image img;
        if (load_crop(names[n], 20, 20, 96, 80, &img)) {
            skip();
            return;
        }
        for (int li = 0; li < 2; li++) {
            mmp_settings st;
            mmp_default_settings(&st);
            st.engine = "seq";
            st.lambda = li ? 100 : 10;
            double psnr[2];
            size_t bytes[2];
            for (int on = 0; on < 2; on++) {
                st.restoration = on;
                uint8_t *buf;
                size_t len;
                mmp_image rec, dec;
                char why[256];
                assert_int_equal(mmp_encode(&st, &img, &buf, &len, &rec, NULL, why, sizeof why), 0);
                assert_int_equal(mmp_decode(buf, len, &dec, why, sizeof why), 0);
                assert_memory_equal(dec.pix, rec.pix, sizeof *rec.pix * (size_t)img.width * img.height);
                psnr[on] = mmp_psnr(&img, &rec);
                bytes[on] = len;
                free(buf);
                mmp_image_free(&rec);
                mmp_image_free(&dec);
            }
            print_message("%s lambda %g: off %zu bytes %.4f dB, on %zu bytes %.4f dB\n", names[n],
                          st.lambda, bytes[0], psnr[0], bytes[1], psnr[1]);
            if (bytes[1] > bytes[0] + 1) {
                enabled++;
                assert_true(psnr[1] > psnr[0]);
            } else {
                assert_true(psnr[1] == psnr[0]);
            }
        }
        mmp_image_free(&img);
    }
    /* The crops are photographs and text at ordinary lambdas: some get a filter. */
    assert_true(enabled > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_document),
        cmocka_unit_test(test_syntax_round_trip),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_fit_threads),
        cmocka_unit_test(test_fit_plain),
        cmocka_unit_test(test_encode_filter_on_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
