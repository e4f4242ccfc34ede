/*
 * The search engines against the reference, bit for bit.
 *
 * 1. checkasm-style: each engine's match() is called directly on random and
 *    edge-case inputs (every leaf shape, 1 to 10 modes, masks of real
 *    pixels, residuals at +-maxval, constant blocks, ties, lambda 0, 8- and
 *    16-bit maxval, dictionaries that grow between blocks) and every
 *    mmp_match must equal seq's; seq itself is checked against an
 *    exhaustive search written here from the contract in kernels/engine.h.
 * 2. End to end: crops of every image in images/ at lambda 10 and 300
 *    encode to the same bytes with seq and with omp at 1, 2, 3 and 7
 *    threads.
 * 3. With MMP_TEST_BENCH set: the time of match() per leaf shape and engine.
 *
 * The test images are found in $MMP_IMAGES, else ./images, else ../images.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "common/error.h"
#include "mmp/cli/pgm.h"
#include "dict/dict.h"
#include "kernels/engine.h"
#include "mmp/mmp.h"
#include "predict/predict.h"

/* ---------------------------------------------------------------- helpers */

/* xorshift64*: every run and every machine tests the same inputs. */
static uint64_t rng_state;
static void rng_seed(uint64_t s)
{
    rng_state = s * 0x9E3779B97F4A7C15ull + 1;
}
static uint32_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}
/* Uniform in [lo, hi]. */
static int32_t rng_range(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(rng_next() % (uint32_t)(hi - lo + 1));
}

/* The engines under test: seq, then omp at these thread counts (0: all). */
static const int omp_threads[] = {1, 2, 3, 7, 0};
#define NOMP ((int)(sizeof omp_threads / sizeof omp_threads[0]))
#define NENG (1 + NOMP)

typedef struct engines {
    const mmp_engine_ops *ops[NENG];
    void *state[NENG];
    int threads[NENG];
} engines;

static void engines_create(engines *e)
{
    memset(e, 0, sizeof *e);
    for (int i = 0; i < NENG; i++) {
        e->ops[i] = mmp_engine_find(i == 0 ? "seq" : "omp");
        assert_non_null(e->ops[i]);
        e->threads[i] = i == 0 ? 1 : omp_threads[i - 1];
        mmp_engine_config cfg = {.threads = e->threads[i], .verbose = 0};
        assert_int_equal(e->ops[i]->create(&e->state[i], &cfg, NULL, 0), 0);
        assert_non_null(e->state[i]);
    }
}

static void engines_destroy(engines *e)
{
    for (int i = 0; i < NENG; i++)
        e->ops[i]->destroy(e->state[i]);
}

/* ------------------------------------------------- the contract, exhaustively */

static void exhaustive_node(const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
                            const uint8_t *real, int lw, int a, int b, int y0, int x0,
                            mmp_match *out)
{
    const int s = mmp_scale(a, b), w = 1 << lw;
    int64_t best = INT64_MAX;
    int best_id = -1;
    for (int id = 0; id < t->dict->n[s]; id++) {
        const int32_t *e = mmp_dict_elem(t->dict, s, id);
        int64_t d = 0;
        for (int y = 0; y < (1 << a); y++)
            for (int x = 0; x < (1 << b); x++) {
                const long p = (long)(y0 + y) * w + x0 + x;
                const int64_t r = (int64_t)orig[p] - pred[p] - e[(y << b) + x];
                if (!real || real[p])
                    d += r * r;
            }
        const int64_t j = d * 65536 + t->lambda_q8 * (int64_t)t->idx_cost[s][id];
        if (j < best) { /* strict: ties keep the lowest index */
            best = j;
            best_id = id;
        }
    }
    out->j = best;
    out->idx = best_id;
    out->pad = 0;
}

static void check_contract(const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
                           int nmodes, const uint8_t *real, int lh, int lw, const mmp_match *got,
                           const char *what)
{
    const int count = mmp_match_count(lh, lw);
    for (int m = 0; m < nmodes; m++)
        for (int a = 0; a <= lh; a++)
            for (int b = 0; b <= lw; b++)
                for (int i = 0; i < (1 << (lh - a)); i++)
                    for (int j = 0; j < (1 << (lw - b)); j++) {
                        const int n = mmp_match_offset(lh, lw, a, b) + i * (1 << (lw - b)) + j;
                        mmp_match want;
                        exhaustive_node(t, orig, pred + (long)m * (1 << (lh + lw)), real, lw, a, b,
                                        i << a, j << b, &want);
                        const mmp_match *g = &got[(long)m * count + n];
                        if (g->j != want.j || g->idx != want.idx)
                            fail_msg("%s: seq %dx%d mode %d node %dx%d (%d,%d): J %lld idx %d, "
                                     "exhaustive J %lld idx %d",
                                     what, 1 << lh, 1 << lw, m, 1 << a, 1 << b, i, j,
                                     (long long)g->j, g->idx, (long long)want.j, want.idx);
                    }
}

/* --------------------------------------------------------- checkasm-style */

typedef struct config {
    const char *name;
    int maxval, cap;
    uint32_t redund_q4;
    int rounds;  /* blocks: dictionary growth, new rate tables */
    int samples; /* match() calls per block */
} config;

/* Random patterns of one shape: noise, ramps, constants, and extremes. */
static void random_pattern(int32_t *p, int n, int maxval)
{
    const int kind = rng_range(0, 4);
    const int32_t amp = rng_range(1, maxval);
    const int32_t base = rng_range(-maxval, maxval);
    for (int i = 0; i < n; i++) {
        int64_t v;
        switch (kind) {
        case 0:
            v = rng_range(-amp, amp);
            break;
        case 1:
            v = base + (int64_t)amp * i / n - amp / 2;
            break;
        case 2:
            v = base;
            break;
        case 3:
            v = (rng_next() & 1) ? maxval : -maxval;
            break;
        default:
            v = base / 2 + rng_range(-amp / 8, amp / 8);
            break;
        }
        p[i] = (int32_t)(v < -maxval ? -maxval : v > maxval ? maxval : v);
    }
}

static void grow_dict(mmp_dict *d, int npat, int maxval)
{
    int32_t pat[MMP_B * MMP_B];
    for (int k = 0; k < npat; k++) {
        const int a = rng_range(0, MMP_LOG2B), b = rng_range(0, MMP_LOG2B);
        random_pattern(pat, 1 << (a + b), maxval);
        mmp_dict_update(d, pat, a, b);
    }
}

/* Rate tables: random, all equal (ties between equidistant elements), or
 * zero; lambda sometimes 0 or huge. */
static void random_tables(mmp_search_tables *t, uint32_t **cost, const mmp_dict *d, int maxval,
                          int block)
{
    const int kind = rng_range(0, 3);
    for (int s = 0; s < MMP_NSCALES; s++)
        for (int i = 0; i < d->cap; i++)
            cost[s][i] = kind == 0 ? 0 : kind == 1 ? 2048 : (uint32_t)rng_range(0, 24 * 256);
    static const int64_t lambdas[] = {0, 1, 256 * 10, 256 * 75, 256 * 300, 256LL * 1000000};
    t->dict = d;
    for (int s = 0; s < MMP_NSCALES; s++)
        t->idx_cost[s] = cost[s];
    t->lambda_q8 = lambdas[rng_range(0, 5)];
    t->maxval = maxval;
    t->block_index = block;
}

/* orig and nmodes predictions of a 2^lh x 2^lw leaf; real is filled and
 * returned when some pixels are padding. */
static const uint8_t *random_leaf(const mmp_dict *d, int maxval, int lh, int lw, int nmodes,
                                  int32_t *orig, int32_t *pred, uint8_t *real)
{
    const int h = 1 << lh, w = 1 << lw, area = h * w;
    const int kind = rng_range(0, 5);
    const int32_t c = rng_range(0, maxval);
    for (int i = 0; i < area; i++) {
        switch (kind) {
        case 0:
            orig[i] = rng_range(0, maxval);
            break; /* noise */
        case 1:
            orig[i] = c;
            break; /* constant */
        case 2:
            orig[i] = (rng_next() & 1) ? maxval : 0;
            break; /* extremes */
        case 3:
            orig[i] = (int32_t)((int64_t)maxval * ((i % w) + (i / w)) / (h + w));
            break;
        default:
            orig[i] = c + rng_range(-3, 3);
            break; /* nearly flat */
        }
    }
    for (int m = 0; m < nmodes; m++) {
        int32_t *p = pred + (long)m * area;
        const int pk = kind == 2 ? 2 : rng_range(0, 3);
        const int32_t pc = rng_range(0, maxval);
        for (int i = 0; i < area; i++) {
            switch (pk) {
            case 0:
                p[i] = pc;
                break;
            case 1:
                p[i] = orig[i] + rng_range(-maxval / 16 - 1, maxval / 16 + 1);
                break;
            case 2:
                p[i] = maxval - orig[i];
                break; /* residual +-maxval on extremes */
            default:
                p[i] = rng_range(0, maxval);
                break;
            }
            p[i] = p[i] < 0 ? 0 : p[i] > maxval ? maxval : p[i];
        }
    }
    if (kind == 5) {
        /* The residual of mode 0 is exactly a dictionary element of the leaf's scale. */
        const int s = mmp_scale(lh, lw);
        const int32_t *e = mmp_dict_elem(d, s, rng_range(0, d->n[s] - 1));
        for (int i = 0; i < area; i++) {
            pred[i] = rng_range(0, maxval);
            orig[i] = pred[i] + e[i];
        }
    }
    const int mk = rng_range(0, 3);
    if (mk == 0) {
        /* What the encoder passes at the right or bottom edge. */
        const int rh = rng_range(1, h), rw = rng_range(1, w);
        for (int i = 0; i < area; i++)
            real[i] = (i / w) < rh && (i % w) < rw;
        return real;
    }
    if (mk == 1 && rng_range(0, 3) == 0) {
        for (int i = 0; i < area; i++)
            real[i] = rng_next() & 1;
        return real;
    }
    return NULL;
}

static void run_config(const config *cf, uint64_t seed, engines *given)
{
    rng_seed(seed);
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, cf->cap, cf->maxval, cf->redund_q4), 0);
    uint32_t *cost[MMP_NSCALES];
    for (int s = 0; s < MMP_NSCALES; s++)
        assert_non_null(cost[s] = malloc(sizeof(uint32_t) * cf->cap));
    engines own, *ep = given ? given : &own;
    if (!given)
        engines_create(&own);
    engines e = *ep;
    const size_t maxout = (size_t)MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B);
    mmp_match *out[NENG];
    for (int i = 0; i < NENG; i++)
        assert_non_null(out[i] = malloc(sizeof(mmp_match) * maxout));
    int32_t orig[MMP_B * MMP_B], pred[MMP_NUM_MODES * MMP_B * MMP_B];
    uint8_t realbuf[MMP_B * MMP_B];
    long calls = 0, nodes = 0, exhaustive = 0;
    for (int r = 0; r < cf->rounds; r++) {
        /* Most blocks grow the dictionary, some leave it as it is. */
        if (r > 0 && rng_range(0, 3) != 0)
            grow_dict(&d, rng_range(1, cf->cap / 4), cf->maxval);
        mmp_search_tables t;
        random_tables(&t, cost, &d, cf->maxval, r);
        for (int i = 0; i < NENG; i++)
            assert_int_equal(e.ops[i]->begin_block(e.state[i], &t), 0);
        for (int k = 0; k < cf->samples; k++) {
            /* Every shape, the prediction leaves (4x4 and up) most often. */
            const int small = rng_range(0, 7) == 0;
            const int lh = small ? rng_range(0, MMP_LOG2B) : rng_range(MMP_LOG2_PMIN, MMP_LOG2B);
            const int lw = small ? rng_range(0, MMP_LOG2B) : rng_range(MMP_LOG2_PMIN, MMP_LOG2B);
            const int nmodes = rng_range(0, 2) ? MMP_NUM_MODES : rng_range(1, MMP_NUM_MODES);
            const uint8_t *real = random_leaf(&d, cf->maxval, lh, lw, nmodes, orig, pred, realbuf);
            const size_t n = (size_t)nmodes * mmp_match_count(lh, lw);
            for (int i = 0; i < NENG; i++) {
                memset(out[i], 0xA5 + i, sizeof(mmp_match) * n); /* unwritten shows */
                assert_int_equal(
                    e.ops[i]->match(e.state[i], &t, orig, pred, nmodes, real, lh, lw, out[i]), 0);
            }
            for (int i = 1; i < NENG; i++)
                for (size_t q = 0; q < n; q++)
                    if (memcmp(&out[0][q], &out[i][q], sizeof(mmp_match)))
                        fail_msg("%s block %d call %d: omp -t %d, %dx%d, %d modes, result %zu: "
                                 "J %lld idx %d pad %d; seq J %lld idx %d pad %d",
                                 cf->name, r, k, e.threads[i], 1 << lh, 1 << lw, nmodes, q,
                                 (long long)out[i][q].j, out[i][q].idx, out[i][q].pad,
                                 (long long)out[0][q].j, out[0][q].idx, out[0][q].pad);
            /* The exhaustive search is slow: a share of the calls, one or two modes. */
            if (k % 4 == 0) {
                check_contract(&t, orig, pred, nmodes < 2 ? nmodes : 2, real, lh, lw, out[0],
                               cf->name);
                exhaustive++;
            }
            calls++;
            nodes += (long)n;
        }
    }
    int total = 0;
    for (int s = 0; s < MMP_NSCALES; s++)
        total += d.n[s];
    print_message("%-16s %3d blocks, %5ld calls, %7ld results equal on %d engines "
                  "(%ld checked exhaustively), %d elements\n",
                  cf->name, cf->rounds, calls, nodes, NENG, exhaustive, total);
    for (int i = 0; i < NENG; i++)
        free(out[i]);
    if (!given)
        engines_destroy(&own);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
}

static void test_match_8bit(void **state)
{
    (void)state;
    run_config(&(config){"8-bit", 255, 1024, 16, 10, 40}, 1, NULL);
    run_config(&(config){"8-bit exact", 255, 256, 0, 10, 40}, 2, NULL);
}

static void test_match_16bit(void **state)
{
    (void)state;
    run_config(&(config){"16-bit", 65535, 512, 16 * 4, 8, 30}, 3, NULL);
}

static void test_match_edges(void **state)
{
    (void)state;
    /* The largest maxval with 32-bit partial sums, and the first without. */
    run_config(&(config){"maxval 5792", 5792, 256, 16, 6, 30}, 4, NULL);
    run_config(&(config){"maxval 5793", 5793, 256, 16, 6, 30}, 5, NULL);
    /* A binary image: three elements per scale to start with, many ties. */
    run_config(&(config){"maxval 1", 1, 64, 0, 6, 30}, 6, NULL);
    /* A dictionary that fills up, then engines that are handed a larger
     * one: their copies in sum order must be reallocated and refilled. */
    engines e;
    engines_create(&e);
    run_config(&(config){"full 64", 1023, 64, 0, 6, 30}, 7, &e);
    run_config(&(config){"then cap 300", 1023, 300, 0, 4, 30}, 8, &e);
    engines_destroy(&e);
}

static void test_engine_names(void **state)
{
    (void)state;
    assert_non_null(mmp_engine_find("seq"));
    assert_non_null(mmp_engine_find("omp"));
    assert_null(mmp_engine_find("nope"));
    assert_non_null(strstr(mmp_engine_names(), "omp"));
    assert_string_equal(mmp_engine_find("omp")->name, "omp");
}

/* ------------------------------------------------------------ end to end */

static const char *images_dir(void)
{
    static char dir[1024];
    const char *env = getenv("MMP_IMAGES");
    const char *cands[] = {env, "images", "../images", "../../images"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        struct stat sb;
        if (!cands[i] || !*cands[i])
            continue;
        snprintf(dir, sizeof dir, "%s/camera.pgm", cands[i]);
        if (stat(dir, &sb) == 0) {
            snprintf(dir, sizeof dir, "%s", cands[i]);
            return dir;
        }
    }
    fail_msg("test images not found: set MMP_IMAGES or run from the repository root");
    return NULL;
}

static void crop(const mmp_image *src, int x0, int y0, int w, int h, mmp_image *dst)
{
    assert_true(x0 >= 0 && y0 >= 0 && x0 + w <= src->width && y0 + h <= src->height);
    assert_int_equal(mmp_image_alloc(dst, w, h, src->maxval), MMP_OK);
    for (int y = 0; y < h; y++)
        memcpy(dst->pix + (size_t)y * w, src->pix + (size_t)(y0 + y) * src->width + x0,
               sizeof(uint16_t) * (size_t)w);
}

static void encode(const mmp_image *img, double lambda, const char *engine, int threads,
                   uint8_t **buf, size_t *len)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = lambda;
    s.engine = engine;
    s.threads = threads;
    char err[256] = "";
    int rc = mmp_encode(&s, img, buf, len, NULL, NULL, err, sizeof err);
    if (rc)
        fail_msg("encode %dx%d lambda %g with %s -t %d: %d %s", img->width, img->height, lambda,
                 engine, threads, rc, err);
}

static int crops_checked;

/* seq, then omp at 1, 2, 3 and 7 threads: the same bytes. */
static void same_bytes(const char *what, const mmp_image *img)
{
    static const double lambdas[] = {10, 300};
    static const int threads[] = {1, 2, 3, 7};
    for (int l = 0; l < 2; l++) {
        uint8_t *ref = NULL, *buf = NULL;
        size_t reflen = 0, len = 0;
        encode(img, lambdas[l], "seq", 0, &ref, &reflen);
        for (int i = 0; i < 4; i++) {
            encode(img, lambdas[l], "omp", threads[i], &buf, &len);
            if (len != reflen || memcmp(buf, ref, len)) {
                size_t at = 0;
                while (at < len && at < reflen && buf[at] == ref[at])
                    at++;
                fail_msg("%s lambda %g: omp -t %d gives %zu bytes, seq %zu; first difference "
                         "at byte %zu",
                         what, lambdas[l], threads[i], len, reflen, at);
            }
            free(buf);
        }
        free(ref);
    }
    crops_checked++;
}

/* A 40x40 crop from the centre of every image in images/, and the
 * bottom-right 37x29 corner (last row and column included) of those whose
 * sides are not multiples of 16. */
static void test_images_same_bytes(void **state)
{
    (void)state;
    const char *dir = images_dir();
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    struct dirent *de;
    int images = 0;
    while ((de = readdir(dp))) {
        const size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".pgm"))
            continue;
        char path[2048], err[256] = "", what[300];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        mmp_image img = {0}, c = {0};
        if (mmp_pgm_read_path(path, &img, err, sizeof err))
            fail_msg("cannot read %s: %s", path, err);
        crop(&img, (img.width - 40) / 2, (img.height - 40) / 2, 40, 40, &c);
        snprintf(what, sizeof what, "%s centre 40x40", de->d_name);
        same_bytes(what, &c);
        mmp_image_free(&c);
        if (img.width % 16 || img.height % 16) {
            crop(&img, img.width - 37, img.height - 29, 37, 29, &c);
            snprintf(what, sizeof what, "%s corner 37x29", de->d_name);
            same_bytes(what, &c);
            mmp_image_free(&c);
        }
        mmp_image_free(&img);
        images++;
    }
    closedir(dp);
    print_message("%d images, %d crops: same bytes with seq and omp -t 1, 2, 3, 7\n", images,
                  crops_checked);
    assert_true(images >= 8);
}

/* A 16-bit image (the camera crop scaled to maxval 65535): the wide sums. */
static void test_16bit_same_bytes(void **state)
{
    (void)state;
    char path[1100], err[256] = "";
    snprintf(path, sizeof path, "%s/camera.pgm", images_dir());
    mmp_image img = {0}, c = {0};
    if (mmp_pgm_read_path(path, &img, err, sizeof err))
        fail_msg("cannot read %s: %s", path, err);
    crop(&img, 200, 200, 40, 24, &c);
    c.maxval = 65535;
    for (int i = 0; i < c.width * c.height; i++)
        c.pix[i] = (uint16_t)(c.pix[i] * 257);
    same_bytes("camera 16-bit 40x24", &c);
    mmp_image_free(&c);
    mmp_image_free(&img);
}

/* ---------------------------------------------------------- benchmark */

/*
 * With MMP_TEST_BENCH set (to a number of calls, default 200 when not a
 * number): microseconds per match() of 10 modes on every leaf shape, for
 * each engine, over a dictionary grown to a realistic size. Skipped
 * otherwise.
 */
static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void test_bench(void **state)
{
    (void)state;
    const char *env = getenv("MMP_TEST_BENCH");
    if (!env)
        skip();
    const int calls = atoi(env) > 0 ? atoi(env) : 200;
    rng_seed(99);
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, 1024, 255, 16), 0);
    grow_dict(&d, 1500, 255);
    uint32_t *cost[MMP_NSCALES];
    for (int s = 0; s < MMP_NSCALES; s++)
        assert_non_null(cost[s] = malloc(sizeof(uint32_t) * d.cap));
    mmp_search_tables t;
    random_tables(&t, cost, &d, 255, 0);
    t.lambda_q8 = 256 * 10;
    engines e;
    engines_create(&e);
    mmp_match *out =
        malloc(sizeof(mmp_match) * MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B));
    assert_non_null(out);
    int32_t orig[MMP_B * MMP_B], pred[MMP_NUM_MODES * MMP_B * MMP_B];
    print_message("us per match() of 10 modes (seq, then omp -t");
    for (int i = 1; i < NENG; i++)
        print_message(" %d", e.threads[i]);
    print_message("):\n");
    for (int lh = MMP_LOG2_PMIN; lh <= MMP_LOG2B; lh++)
        for (int lw = MMP_LOG2_PMIN; lw <= MMP_LOG2B; lw++) {
            const int area = 1 << (lh + lw);
            for (int i = 0; i < area; i++)
                orig[i] = rng_range(0, 255);
            for (int m = 0; m < MMP_NUM_MODES; m++)
                for (int i = 0; i < area; i++)
                    pred[m * area + i] = orig[i] + rng_range(-20, 20);
            print_message("%2dx%-2d", 1 << lh, 1 << lw);
            for (int i = 0; i < NENG; i++) {
                assert_int_equal(e.ops[i]->begin_block(e.state[i], &t), 0);
                const double t0 = now_us();
                for (int k = 0; k < calls; k++)
                    e.ops[i]->match(e.state[i], &t, orig, pred, MMP_NUM_MODES, NULL, lh, lw, out);
                print_message(" %9.1f", (now_us() - t0) / calls);
            }
            print_message("\n");
        }
    free(out);
    engines_destroy(&e);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_names),
        cmocka_unit_test(test_match_8bit),
        cmocka_unit_test(test_match_16bit),
        cmocka_unit_test(test_match_edges),
        cmocka_unit_test(test_images_same_bytes),
        cmocka_unit_test(test_16bit_same_bytes),
        cmocka_unit_test(test_bench),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
