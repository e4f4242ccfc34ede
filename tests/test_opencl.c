/*
 * The opencl engine against the seq reference, bit for bit, on whatever
 * OpenCL device the engine picks (MMP_CL_DEVICE, else the first GPU, else
 * the first device: PoCL on CPUs in CI).
 *
 * 1. match() on random inputs: every leaf shape, 1 to 10 modes, masks of
 *    real pixels, lambda 0 to huge, 8-bit, 16-bit (maxval 65535) and binary
 *    images, dictionaries that grow between blocks, fill up, or are
 *    replaced by one of another capacity.
 *    Several threads calling match() at once on one engine, whose calls go
 *    to the device in shared batches (shapes, modes, masks and 32- and
 *    64-bit sums mixed in one batch).
 * 2. End to end: a 40x40 crop from the centre of every image in images/
 *    and the bottom-right 37x29 corner of those whose sides are not
 *    multiples of 16, at lambda 10 and 300, and a 16-bit crop: the same
 *    .mmp bytes with seq and with opencl on 1 and 5 host threads.
 *
 * Without any OpenCL platform or device every test is skipped (with a
 * message), not failed. The test images are found in $MMP_IMAGES, else
 * ./images, else ../images.
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
#include <omp.h>

#include "common/error.h"
#include "mmp/cli/pgm.h"
#include "dict/dict.h"
#include "kernels/opencl/engine.h"
#include "kernels/engine.h"
#include "mmp/mmp.h"
#include "predict/predict.h"

static int have_device;

#define NEED_DEVICE()                                                                 \
    do {                                                                              \
        if (!have_device) {                                                           \
            print_message("skipped: no OpenCL platform or device on this machine\n"); \
            skip();                                                                   \
        }                                                                             \
    } while (0)

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* xorshift64*: every run and every machine tests the same inputs. */
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ull + 1; }
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

/* ----------------------------------------------------------- match() */

typedef struct config {
    const char *name;
    int maxval, cap;
    uint32_t redund_q4;
    int rounds;   /* blocks: dictionary growth, new rate tables */
    int samples;  /* match() calls per block */
} config;

typedef struct pair {
    const mmp_engine_ops *ops[2]; /* seq, opencl */
    void *state[2];
} pair;

static void pair_create(pair *p)
{
    for (int i = 0; i < 2; i++) {
        p->ops[i] = mmp_engine_find(i ? "opencl" : "seq");
        assert_non_null(p->ops[i]);
        mmp_engine_config cfg = {.threads = 1, .verbose = 0};
        assert_int_equal(p->ops[i]->create(&p->state[i], &cfg, NULL, 0), 0);
    }
}

static void pair_destroy(pair *p)
{
    for (int i = 0; i < 2; i++)
        p->ops[i]->destroy(p->state[i]);
}

/* Random patterns of one shape: noise, ramps, constants, and extremes. */
static void random_pattern(int32_t *p, int n, int maxval)
{
    const int kind = rng_range(0, 4);
    const int32_t amp = rng_range(1, maxval);
    const int32_t base = rng_range(-maxval, maxval);
    for (int i = 0; i < n; i++) {
        int64_t v;
        switch (kind) {
        case 0: v = rng_range(-amp, amp); break;
        case 1: v = base + (int64_t)amp * i / n - amp / 2; break;
        case 2: v = base; break;
        case 3: v = (rng_next() & 1) ? maxval : -maxval; break;
        default: v = base / 2 + rng_range(-amp / 8, amp / 8); break;
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
 * zero; lambda 0, small, customary or huge. */
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
        case 0: orig[i] = rng_range(0, maxval); break;
        case 1: orig[i] = c; break;
        case 2: orig[i] = (rng_next() & 1) ? maxval : 0; break;
        case 3: orig[i] = (int32_t)((int64_t)maxval * ((i % w) + (i / w)) / (h + w)); break;
        default: orig[i] = c + rng_range(-3, 3); break;
        }
        orig[i] = orig[i] < 0 ? 0 : orig[i] > maxval ? maxval : orig[i];
    }
    for (int m = 0; m < nmodes; m++) {
        int32_t *p = pred + (long)m * area;
        const int pk = kind == 2 ? 2 : rng_range(0, 3);
        const int32_t pc = rng_range(0, maxval);
        for (int i = 0; i < area; i++) {
            switch (pk) {
            case 0: p[i] = pc; break;
            case 1: p[i] = orig[i] + rng_range(-maxval / 16 - 1, maxval / 16 + 1); break;
            case 2: p[i] = maxval - orig[i]; break; /* residual +-maxval on extremes */
            default: p[i] = rng_range(0, maxval); break;
            }
            p[i] = p[i] < 0 ? 0 : p[i] > maxval ? maxval : p[i];
        }
    }
    if (kind == 5) {
        /* The residual of mode 0 is exactly a dictionary element (ties). */
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
    if (mk == 1) {
        for (int i = 0; i < area; i++)
            real[i] = rng_range(0, 3) != 0;
        if (rng_range(0, 1))
            memset(real, 1, area); /* a mask of all ones */
        return real;
    }
    return NULL;
}

static long total_calls;

/* Runs cf through seq and opencl; p: engines to reuse, or NULL. */
static void run_config(const config *cf, uint64_t seed, pair *given)
{
    rng_seed(seed);
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, cf->cap, cf->maxval, cf->redund_q4), 0);
    uint32_t *cost[MMP_NSCALES];
    for (int s = 0; s < MMP_NSCALES; s++)
        assert_non_null(cost[s] = malloc(sizeof(uint32_t) * cf->cap));
    pair own, *p = given ? given : &own;
    if (!given)
        pair_create(&own);
    const size_t maxout = (size_t)MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B);
    mmp_match *out[2];
    for (int i = 0; i < 2; i++)
        assert_non_null(out[i] = malloc(sizeof(mmp_match) * maxout));
    int32_t orig[MMP_B * MMP_B], pred[MMP_NUM_MODES * MMP_B * MMP_B];
    uint8_t realbuf[MMP_B * MMP_B];
    long calls = 0, nodes = 0;
    for (int r = 0; r < cf->rounds; r++) {
        /* Most blocks grow the dictionary, some leave it as it is. */
        if (r > 0 && rng_range(0, 3) != 0)
            grow_dict(&d, rng_range(1, cf->cap / 3), cf->maxval);
        mmp_search_tables t;
        random_tables(&t, cost, &d, cf->maxval, r);
        for (int i = 0; i < 2; i++)
            assert_int_equal(p->ops[i]->begin_block(p->state[i], &t), 0);
        for (int k = 0; k < cf->samples; k++) {
            /* Every shape, the prediction leaves (4x4 and up) most often. */
            const int small = rng_range(0, 5) == 0;
            const int lh = small ? rng_range(0, MMP_LOG2B) : rng_range(MMP_LOG2_PMIN, MMP_LOG2B);
            const int lw = small ? rng_range(0, MMP_LOG2B) : rng_range(MMP_LOG2_PMIN, MMP_LOG2B);
            const int nmodes = rng_range(0, 2) ? MMP_NUM_MODES : rng_range(1, MMP_NUM_MODES);
            const uint8_t *real = random_leaf(&d, cf->maxval, lh, lw, nmodes, orig, pred, realbuf);
            const size_t n = (size_t)nmodes * mmp_match_count(lh, lw);
            for (int i = 0; i < 2; i++) {
                memset(out[i], 0xA5 + i, sizeof(mmp_match) * n); /* unwritten shows */
                assert_int_equal(p->ops[i]->match(p->state[i], &t, orig, pred, nmodes, real, lh,
                                                  lw, out[i]),
                                 0);
            }
            for (size_t q = 0; q < n; q++)
                if (memcmp(&out[0][q], &out[1][q], sizeof(mmp_match)))
                    fail_msg("%s block %d call %d: %dx%d leaf, %d modes%s, lambda_q8 %lld, "
                             "result %zu (mode %zu node %zu): opencl J %lld idx %d pad %d; seq J "
                             "%lld idx %d pad %d",
                             cf->name, r, k, 1 << lh, 1 << lw, nmodes, real ? ", masked" : "",
                             (long long)t.lambda_q8, q, q / mmp_match_count(lh, lw),
                             q % mmp_match_count(lh, lw), (long long)out[1][q].j, out[1][q].idx,
                             out[1][q].pad, (long long)out[0][q].j, out[0][q].idx, out[0][q].pad);
            calls++;
            nodes += (long)n;
        }
    }
    int total = 0;
    for (int s = 0; s < MMP_NSCALES; s++)
        total += d.n[s];
    print_message("%-14s %3d blocks, %4ld calls, %7ld results equal, %5d elements\n", cf->name,
                  cf->rounds, calls, nodes, total);
    total_calls += calls;
    for (int i = 0; i < 2; i++)
        free(out[i]);
    if (!given)
        pair_destroy(&own);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
}

static void test_match_8bit(void **state)
{
    (void)state;
    NEED_DEVICE();
    run_config(&(config){"8-bit", 255, 512, 16, 8, 25}, 11, NULL);
    run_config(&(config){"8-bit exact", 255, 200, 0, 6, 25}, 12, NULL);
}

static void test_match_16bit(void **state)
{
    (void)state;
    NEED_DEVICE();
    run_config(&(config){"16-bit", 65535, 300, 16 * 4, 6, 25}, 13, NULL);
    /* Around the switch between 32- and 64-bit sums. */
    run_config(&(config){"maxval 4095", 4095, 160, 16, 5, 25}, 14, NULL);
    run_config(&(config){"maxval 32767", 32767, 160, 16, 5, 25}, 15, NULL);
}

static void test_match_edges(void **state)
{
    (void)state;
    NEED_DEVICE();
    /* A binary image: three elements per scale to start with, many ties. */
    run_config(&(config){"maxval 1", 1, 64, 0, 5, 25}, 16, NULL);
    /* One engine pair for several dictionaries: one that fills up, then
     * one of another capacity, then a new one of the same capacity. */
    pair p;
    pair_create(&p);
    run_config(&(config){"full 64", 1023, 64, 0, 5, 20}, 17, &p);
    run_config(&(config){"then cap 300", 1023, 300, 0, 4, 20}, 18, &p);
    run_config(&(config){"then cap 300'", 255, 300, 0, 3, 20}, 19, &p);
    pair_destroy(&p);
}

/*
 * THREADS threads call match() on one opencl engine at once, round after
 * round (a barrier starts each round, so their calls meet in batches), each
 * on its own random leaf; every result must equal seq's for the same leaf.
 * maxval 4095 puts leaves of 32-bit and of 64-bit sums in the same batch.
 */
#define THREADS 6
static void concurrent_config(int maxval, int cap, int rounds, uint64_t seed)
{
    rng_seed(seed);
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, cap, maxval, 16), 0);
    grow_dict(&d, cap * 4, maxval);
    uint32_t *cost[MMP_NSCALES];
    for (int s = 0; s < MMP_NSCALES; s++)
        assert_non_null(cost[s] = malloc(sizeof(uint32_t) * cap));
    mmp_search_tables t;
    random_tables(&t, cost, &d, maxval, 0);
    const mmp_engine_ops *ops[2] = {mmp_engine_find("seq"), mmp_engine_find("opencl")};
    void *st[2];
    for (int i = 0; i < 2; i++) {
        mmp_engine_config cfg = {.threads = THREADS, .verbose = 0};
        assert_int_equal(ops[i]->create(&st[i], &cfg, NULL, 0), 0);
        assert_int_equal(ops[i]->begin_block(st[i], &t), 0);
    }
    /* Every thread's leaves, drawn up front (the generator is not shared). */
    typedef struct leaf {
        int lh, lw, nmodes;
        const uint8_t *real;
        int32_t orig[MMP_B * MMP_B], pred[MMP_NUM_MODES * MMP_B * MMP_B];
        uint8_t realbuf[MMP_B * MMP_B];
    } leaf;
    const int nleaves = rounds * THREADS;
    leaf *lv = malloc(sizeof(leaf) * nleaves);
    assert_non_null(lv);
    for (int k = 0; k < nleaves; k++) {
        leaf *l = &lv[k];
        l->lh = rng_range(0, MMP_LOG2B);
        l->lw = rng_range(0, MMP_LOG2B);
        l->nmodes = rng_range(0, 2) ? MMP_NUM_MODES : rng_range(1, MMP_NUM_MODES);
        l->real = random_leaf(&d, maxval, l->lh, l->lw, l->nmodes, l->orig, l->pred, l->realbuf);
        if (l->real)
            l->real = l->realbuf;
    }
    const size_t maxout = (size_t)MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B);
    mmp_match *got = malloc(sizeof(mmp_match) * maxout * nleaves);
    mmp_match *want = malloc(sizeof(mmp_match) * maxout);
    assert_non_null(got);
    assert_non_null(want);
    memset(got, 0xA5, sizeof(mmp_match) * maxout * nleaves);
    int errs = 0;
#pragma omp parallel num_threads(THREADS) reduction(+ : errs)
    {
        const int me = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int r = 0; r < rounds; r++) {
#pragma omp barrier
            for (int k = r * THREADS + me; k < (r + 1) * THREADS; k += nt) {
                leaf *l = &lv[k];
                errs += ops[1]->match(st[1], &t, l->orig, l->pred, l->nmodes, l->real, l->lh,
                                      l->lw, got + maxout * k) != 0;
            }
        }
    }
    assert_int_equal(errs, 0);
    long nodes = 0;
    for (int k = 0; k < nleaves; k++) {
        leaf *l = &lv[k];
        const size_t n = (size_t)l->nmodes * mmp_match_count(l->lh, l->lw);
        assert_int_equal(ops[0]->match(st[0], &t, l->orig, l->pred, l->nmodes, l->real, l->lh,
                                       l->lw, want),
                         0);
        for (size_t q = 0; q < n; q++)
            if (memcmp(&want[q], &got[maxout * k + q], sizeof(mmp_match)))
                fail_msg("maxval %d leaf %d: %dx%d, %d modes%s, result %zu: opencl J %lld idx %d; "
                         "seq J %lld idx %d",
                         maxval, k, 1 << l->lh, 1 << l->lw, l->nmodes, l->real ? ", masked" : "", q,
                         (long long)got[maxout * k + q].j, got[maxout * k + q].idx,
                         (long long)want[q].j, want[q].idx);
        nodes += (long)n;
    }
    long calls, batches;
    mmp_opencl_batch_counts(st[1], &calls, &batches);
    print_message("maxval %5d: %d threads, %ld calls in %ld batches, %ld results equal\n", maxval,
                  THREADS, calls, batches, nodes);
    assert_int_equal(calls, nleaves);
    /* The calls met: some batch held several. */
    assert_true(batches < calls);
    for (int i = 0; i < 2; i++)
        ops[i]->destroy(st[i]);
    free(lv);
    free(got);
    free(want);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
}

static void test_concurrent_batches(void **state)
{
    (void)state;
    NEED_DEVICE();
    concurrent_config(255, 256, 12, 21);
    concurrent_config(4095, 160, 12, 22);
    concurrent_config(65535, 128, 6, 23);
}

static void test_engine_names(void **state)
{
    (void)state;
    const mmp_engine_ops *e = mmp_engine_find("opencl");
    assert_non_null(e);
    assert_string_equal(e->name, "opencl");
    assert_non_null(strstr(mmp_engine_names(), "opencl"));
    const mmp_engine_config cfg = {0};
    const mmp_engine_ops *order[8];
    const int n = mmp_engine_auto_order(&cfg, order, 8);
    assert_true(n >= 1);
    /* seq always starts; opencl is first exactly when its device is a GPU. */
    assert_string_equal(order[n - 1]->name, "seq");
    int pick = -1;
    mmp_engine_device dev[8];
    const int nd = e->devices(dev, 8, NULL, &pick, NULL, 0);
    if (have_device) {
        assert_true(nd >= 1 && pick >= 0);
        assert_int_equal(order[0] == e, dev[pick].is_gpu);
    }
    print_message("-e auto picks %s here\n", order[0]->name);
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

static double engine_seconds[2];

static void encode(const mmp_image *img, double lambda, int dict_cap, const char *engine,
                   int threads, uint8_t **buf, size_t *len)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = lambda;
    s.engine = engine;
    s.threads = threads;
    s.dict_cap = dict_cap;
    char err[256] = "";
    const double t0 = now_seconds();
    int rc = mmp_encode(&s, img, buf, len, NULL, NULL, err, sizeof err);
    engine_seconds[strcmp(engine, "seq") != 0] += now_seconds() - t0;
    if (rc)
        fail_msg("encode %dx%d lambda %g with %s: %d %s", img->width, img->height, lambda, engine,
                 rc, err);
}

static int crops_checked;

/* A smaller dictionary than the default keeps the exhaustive search on
 * CPU devices quick; it still spans several work-group chunks per scale. */
#define E2E_DICT 512

static void same_bytes(const char *what, const mmp_image *img)
{
    static const double lambdas[] = {10, 300};
    for (int l = 0; l < 2; l++) {
        uint8_t *ref = NULL, *buf = NULL;
        size_t reflen = 0, len = 0;
        encode(img, lambdas[l], E2E_DICT, "seq", 1, &ref, &reflen);
        /* One host thread (batches of one call), and several: the search's
         * options as tasks, their calls in shared batches. */
        for (int threads = 1; threads <= 5; threads += 4) {
            encode(img, lambdas[l], E2E_DICT, "opencl", threads, &buf, &len);
            if (len != reflen || memcmp(buf, ref, len)) {
                size_t at = 0;
                while (at < len && at < reflen && buf[at] == ref[at])
                    at++;
                fail_msg("%s lambda %g: opencl with %d host threads gives %zu bytes, seq %zu; "
                         "first difference at byte %zu",
                         what, lambdas[l], threads, len, reflen, at);
            }
            free(buf);
        }
        free(ref);
    }
    crops_checked++;
}

static void test_images_same_bytes(void **state)
{
    (void)state;
    NEED_DEVICE();
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
    print_message("%d images, %d crops at lambda 10 and 300: same bytes with seq and opencl "
                  "(seq %.1f s, opencl %.1f s)\n",
                  images, crops_checked, engine_seconds[0], engine_seconds[1]);
    assert_true(images >= 8);
}

/* A 16-bit image (a camera crop scaled to maxval 65535): the wide sums. */
static void test_16bit_same_bytes(void **state)
{
    (void)state;
    NEED_DEVICE();
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

int main(void)
{
    int pick = -1;
    have_device = mmp_engine_find("opencl")->devices(NULL, 0, NULL, &pick, NULL, 0) > 0 && pick >= 0;
    if (!have_device)
        printf("test_opencl: no OpenCL platform or device: every test is skipped\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_names),
        cmocka_unit_test(test_concurrent_batches),
        cmocka_unit_test(test_match_8bit),
        cmocka_unit_test(test_match_16bit),
        cmocka_unit_test(test_match_edges),
        cmocka_unit_test(test_images_same_bytes),
        cmocka_unit_test(test_16bit_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
