/*
 * The deblocking filter in files (docs/format.md section 7.7; its filtering
 * is tests/test_deblock.c's): the syntax read back as written, bit for bit
 * as the document lays it out; whole encodes with the filter on and off,
 * where the decoder gives the encoder's reconstruction and the header's
 * tool bit says which files have it; lossless files, which never have it.
 */
#include <math.h>

#include "common/container.h"
#include "common/rangecoder.h"
#include "filter/deblock.h"
#include "mmp/mmp.h"
#include "tests/util.h"

/* ---- syntax ---- */

/* "Bits with the fixed frequencies 1 and 1 of a total of 2, most
 * significant first". */
static void naive_put_bits(mmp_rc_enc *rc, int v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        mmp_rc_encode(rc, (uint32_t)(v >> i & 1), 1, 2);
}

static int naive_get_bits(mmp_rc_dec *rc, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        const uint32_t b = mmp_rc_decode_freq(rc, 2);
        mmp_rc_decode_update(rc, b, 1, 2);
        v = v << 1 | (int)b;
    }
    return v;
}

/*
 * Every pair tc, beta of 0 .. 63 and the filter disabled, in one stream
 * with other symbols between: mmp_deblock_read gives back what
 * mmp_deblock_write wrote, and both code the bits the document lays out
 * (enabled, then tc and beta in 6 bits each when enabled).
 */
static void test_syntax_round_trip(void **state)
{
    (void)state;
    enum { NPAIRS = 64 * 64, NPARAMS = NPAIRS + NPAIRS / 4 };
    static mmp_deblock params[NPARAMS];
    rng_seed(0x5e);
    for (int i = 0; i < NPARAMS; i++) {
        if (i < NPAIRS)
            params[i] = (mmp_deblock){.enabled = 1, .tc = i / 64, .beta = i % 64};
        else
            params[i] = (mmp_deblock){0};
    }
    /* In a random order, so that disabled ones sit among the others. */
    for (int i = NPARAMS - 1; i > 0; i--) {
        const int j = (int)rng_below((size_t)i + 1);
        const mmp_deblock t = params[i];
        params[i] = params[j];
        params[j] = t;
    }
    for (int way = 0; way < 2; way++) {
        /* way 0: the library writes, the document reads; way 1: the
         * other way round. */
        mmp_rc_enc e;
        mmp_rc_enc_init(&e);
        for (int i = 0; i < NPARAMS; i++) {
            if (way == 0)
                mmp_deblock_write(&e, &params[i]);
            else {
                naive_put_bits(&e, params[i].enabled, 1);
                if (params[i].enabled) {
                    naive_put_bits(&e, params[i].tc, 6);
                    naive_put_bits(&e, params[i].beta, 6);
                }
            }
            if (i % 97 == 0)
                mmp_rc_encode(&e, (uint32_t)(i % 11), 1, 11);
        }
        mmp_rc_encode(&e, 5, 1, 11);
        assert_int_equal(mmp_rc_enc_finish(&e), 0);
        /* 13 bits for each enabled filter, 1 for each disabled one. */
        const double bits = 13.0 * NPAIRS + (NPARAMS - NPAIRS) + (NPARAMS / 97 + 2) * log2(11.0);
        assert_in_range(e.len, (size_t)(bits / 8) - 2, (size_t)(bits / 8) + 8);
        mmp_rc_dec dec;
        mmp_rc_dec_init(&dec, e.buf, e.len);
        for (int i = 0; i < NPARAMS; i++) {
            mmp_deblock r = {.enabled = -1, .tc = -1, .beta = -1};
            if (way == 1)
                mmp_deblock_read(&dec, &r);
            else {
                r.enabled = naive_get_bits(&dec, 1);
                r.tc = r.enabled ? naive_get_bits(&dec, 6) : 0;
                r.beta = r.enabled ? naive_get_bits(&dec, 6) : 0;
            }
            if (r.enabled != params[i].enabled || r.tc != params[i].tc || r.beta != params[i].beta)
                fail_msg("way %d, filter %d: wrote %d %d %d, read %d %d %d", way, i,
                         params[i].enabled, params[i].tc, params[i].beta, r.enabled, r.tc, r.beta);
            if (i % 97 == 0) {
                assert_int_equal(mmp_rc_decode_freq(&dec, 11), (uint32_t)(i % 11));
                mmp_rc_decode_update(&dec, (uint32_t)(i % 11), 1, 11);
            }
        }
        assert_int_equal(mmp_rc_decode_freq(&dec, 11), 5);
        assert_int_equal(dec.overrun, 0);
        mmp_rc_enc_free(&e);
    }
    /* A disabled filter's tc and beta are not written: what was in them
     * does not matter. */
    mmp_rc_enc a, b;
    mmp_rc_enc_init(&a);
    mmp_rc_enc_init(&b);
    mmp_deblock_write(&a, &(mmp_deblock){.enabled = 0, .tc = 63, .beta = 17});
    mmp_deblock_write(&b, &(mmp_deblock){0});
    assert_int_equal(mmp_rc_enc_finish(&a), 0);
    assert_int_equal(mmp_rc_enc_finish(&b), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.buf, b.buf, a.len);
    mmp_rc_enc_free(&a);
    mmp_rc_enc_free(&b);
}

/* ---- whole encodes ---- */

/* What the encoder logged of its deblocking filters (one encode on the
 * seq engine: one thread calls the log). */
typedef struct filter_log {
    int planes_on, planes_off, tc[4], beta[4];
} filter_log;

static void log_filters(void *opaque, int level, const char *msg)
{
    (void)level;
    filter_log *fl = opaque;
    int p, tc, beta;
    if (sscanf(msg, "plane %d: deblocking filter, tc %d, beta %d", &p, &tc, &beta) == 3) {
        assert_in_range(p, 0, 3);
        assert_in_range(tc, 1, MMP_DB_MAX_INDEX);
        assert_in_range(beta, 0, MMP_DB_MAX_INDEX);
        fl->tc[p] = tc;
        fl->beta[p] = beta;
        fl->planes_on++;
    } else if (strstr(msg, ": no deblocking filter")) {
        fl->planes_off++;
    }
}

typedef struct encoded {
    uint8_t *buf;
    size_t len;
    mmp_image rec;
    filter_log log;
    double psnr, sse;
    int tiles;
} encoded;

/* Encodes img with st and deblocking on (0) or off (-1); the decoder gives
 * the encoder's reconstruction, and the header's tool bit says which it
 * was. */
static void encode_checked(const mmp_settings *base, const mmp_image *img, int deblocking,
                           encoded *out)
{
    mmp_settings st = *base;
    memset(out, 0, sizeof *out);
    st.deblocking = deblocking;
    st.verbose = 1;
    st.log = log_filters;
    st.log_opaque = &out->log;
    char why[256] = "";
    mmp_enc_stats stats;
    if (mmp_encode(&st, img, &out->buf, &out->len, &out->rec, &stats, why, sizeof why))
        fail_msg("encode %dx%d: %s", img->width, img->height, why);
    mmp_image dec;
    assert_int_equal(mmp_decode(out->buf, out->len, &dec, why, sizeof why), 0);
    const size_t n = (size_t)img->width * img->height * mmp_image_channels(img);
    assert_int_equal(dec.width, img->width);
    assert_int_equal(dec.height, img->height);
    assert_int_equal(mmp_image_channels(&dec), mmp_image_channels(img));
    for (size_t i = 0; i < n; i++)
        if (dec.pix[i] != out->rec.pix[i])
            fail_msg("%dx%d deblocking %d: decoded sample %zu is %u, the encoder's %u", img->width,
                     img->height, deblocking, i, dec.pix[i], out->rec.pix[i]);
    mmp_image_free(&dec);
    /* Format 1.1 whether or not the file uses the filter; tool bit 1 in
     * lossy files with the filter alone. */
    assert_memory_equal(out->buf, MMP_MAGIC, 4);
    assert_int_equal(out->buf[MF_MAJOR], MMP_FORMAT_MAJOR);
    assert_int_equal(out->buf[MF_MINOR], MMP_FORMAT_MINOR);
    const uint32_t tools = get32(out->buf + MF_TOOLS);
    assert_int_equal(!!(tools & MMP_TOOL_DEBLOCK), deblocking == 0 && st.max_error < 0);
    /* Each plane of each tile of a file with the tool says what its filter is. */
    assert_int_equal(out->log.planes_on + out->log.planes_off,
                     tools & MMP_TOOL_DEBLOCK ? mmp_image_channels(img) * stats.tiles : 0);
    out->tiles = stats.tiles;
    out->psnr = mmp_psnr(img, &out->rec);
    for (size_t i = 0; i < n; i++)
        out->sse +=
            ((double)img->pix[i] - out->rec.pix[i]) * ((double)img->pix[i] - out->rec.pix[i]);
}

static void encoded_free(encoded *e)
{
    free(e->buf);
    mmp_image_free(&e->rec);
}

/* A smooth image: a gradient with slow waves, at maxval; or (noisy) the
 * same with noise of a tenth of the range on it. */
static void smooth_image(mmp_image *img, int w, int h, int channels, int maxval, int noisy)
{
    assert_int_equal(mmp_image_alloc_channels(img, w, h, channels, maxval), 0);
    rng_seed(3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++) {
                const double v = 0.15 + 0.5 * x / w + 0.2 * y / h +
                                 0.1 * sin(6.0 * (x + 2.0 * y) / (w + h) + c) +
                                 0.05 * cos(9.0 * y / h - 3.0 * x / w) +
                                 (noisy ? rng_range(-50, 50) / 1000.0 : 0);
                img->pix[((size_t)y * w + x) * channels + c] = (uint16_t)lround(v * maxval);
            }
}

/*
 * Encodes with deblocking on and off, with the restoration filter and
 * without: the decoder gives the encoder's reconstruction every time (its
 * edge map, built from the symbols, is the encoder's), files with the
 * filter have tool bit 1 and those without do not. The blocks are the
 * same either way, so where no plane takes the filter the reconstruction
 * is the one without it. Without the restoration filter, a plane takes the
 * deblocking only for a lower squared error, so the PSNR rises, for at
 * most 13 bits a plane; smooth images at high lambdas take it. With the
 * restoration filter the encoder weighs both together: the error plus
 * lambda times the bits does not rise (the PSNR may fall where the
 * deblocking saves a restoration filter's bits).
 */
static void test_encode_on_off(void **state)
{
    (void)state;
    struct {
        const char *what;
        int w, h, channels, maxval, chroma, speed, dct, tile, noisy;
        double lambda;
    } cases[] = {
        {"smooth 96x80", 96, 80, 1, 255, 0, 1, 1, 0, 0, 300},
        {"smooth 96x80", 96, 80, 1, 255, 0, 1, 1, 0, 0, 1000},
        {"smooth 61x43 speed 6", 61, 43, 1, 255, 0, 6, 1, 0, 0, 600},
        {"smooth 50x37 16-bit", 50, 37, 1, 65535, 0, 1, 1, 0, 0, 500},
        {"smooth 45x37 colour 4:2:0", 45, 37, 3, 255, MMP_CHROMA_420, 1, 1, 0, 0, 400},
        {"smooth 40x33 no DCT", 40, 33, 1, 255, 0, 1, 0, 0, 0, 300},
        {"smooth 200x136 4 tiles", 200, 136, 1, 255, 0, 6, 1, 128, 0, 500},
        {"noisy 48x40", 48, 40, 1, 255, 0, 1, 1, 0, 1, 10},
        {"noisy 35x29 colour", 35, 29, 3, 255, 0, 1, 1, 0, 1, 30},
    };
    int psnr_fell = 0, taken = 0, not_taken = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        mmp_image img;
        const int planes = cases[ci].channels;
        smooth_image(&img, cases[ci].w, cases[ci].h, planes, cases[ci].maxval, cases[ci].noisy);
        const size_t n = (size_t)img.width * img.height * planes;
        for (int restoration = 0; restoration <= 1; restoration++) {
            mmp_settings st;
            mmp_default_settings(&st);
            st.engine = "seq";
            st.threads = 1;
            st.lambda = cases[ci].lambda;
            st.speed = cases[ci].speed;
            st.dct = cases[ci].dct;
            st.restoration = restoration;
            if (cases[ci].chroma)
                st.chroma = cases[ci].chroma;
            st.tile_width = st.tile_height = cases[ci].tile;
            encoded on, off;
            encode_checked(&st, &img, 0, &on);
            encode_checked(&st, &img, -1, &off);
            print_message("%-26s lambda %4g restoration %d: off %4zu bytes %.3f dB, on %4zu "
                          "bytes %.3f dB, %d of %d planes deblocked (plane 0: tc %d beta %d)\n",
                          cases[ci].what, st.lambda, restoration, off.len, off.psnr, on.len,
                          on.psnr, on.log.planes_on, on.log.planes_on + on.log.planes_off,
                          on.log.tc[0], on.log.beta[0]);
            taken += on.log.planes_on > 0;
            not_taken += on.log.planes_on == 0;
            if (on.log.planes_on == 0) {
                assert_memory_equal(on.rec.pix, off.rec.pix, sizeof *on.rec.pix * n);
            } else if (!restoration) {
                assert_true(on.sse < off.sse);
                assert_true(on.psnr > off.psnr);
                assert_true(on.len + 1 >= off.len);
                assert_true(on.len <= off.len + on.tiles * ((13 * (size_t)planes + 7) / 8 + 1));
            } else {
                assert_true(memcmp(on.rec.pix, off.rec.pix, sizeof *on.rec.pix * n) != 0);
                psnr_fell += on.psnr < off.psnr;
                /* Grey 8-bit images, where the plane's lambda is the
                 * settings': two bytes of slack, as the choice weighs the
                 * restoration filters' estimated bits. */
                if (planes == 1 && cases[ci].maxval == 255)
                    assert_true(on.sse + st.lambda * 8.0 * on.len <=
                                off.sse + st.lambda * 8.0 * (off.len + 2));
            }
            /* Smooth images at high lambdas take the filter. */
            if (!restoration && !cases[ci].noisy)
                assert_true(on.log.planes_on > 0);
            encoded_free(&on);
            encoded_free(&off);
        }
        mmp_image_free(&img);
    }
    print_message("deblocking taken in %d encodes, not in %d; with the restoration filter, the "
                  "PSNR fell with it %d times\n",
                  taken, not_taken, psnr_fell);
    assert_true(not_taken > 0);
}

/* Lossless files have no deblocking filter whatever the settings ask: no
 * tool bit, the same bytes as with it off. */
static void test_lossless_without(void **state)
{
    (void)state;
    mmp_image img;
    smooth_image(&img, 37, 29, 1, 255, 1);
    mmp_settings st;
    mmp_default_settings(&st);
    st.engine = "seq";
    st.threads = 1;
    st.max_error = 0;
    encoded on, off;
    encode_checked(&st, &img, 0, &on);
    encode_checked(&st, &img, -1, &off);
    assert_int_equal(on.len, off.len);
    assert_memory_equal(on.buf, off.buf, on.len);
    assert_memory_equal(on.rec.pix, img.pix, sizeof *img.pix * 37 * 29);
    encoded_free(&on);
    encoded_free(&off);
    mmp_image_free(&img);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_round_trip),
        cmocka_unit_test(test_encode_on_off),
        cmocka_unit_test(test_lossless_without),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
