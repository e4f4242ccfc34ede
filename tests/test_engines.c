/*
 * The search engines against the C reference, bit for bit, in the manner of
 * dav1d's checkasm: the engines are those of the registry
 * (mmp_engine_count, mmp_engine_at), none is named here, so that a build
 * without OpenMP or OpenCL tests what it has and a new engine is tested as
 * soon as it is registered.
 *
 * seq, the C reference, is checked against an exhaustive search written
 * here from the contract in kernels/engine.h. Every other engine is checked
 * against seq:
 *
 * 1. match() called directly on random and edge-case inputs (every leaf
 *    shape, 1 to 10 modes, masks of real pixels, residuals at +-maxval,
 *    constant blocks, ties, lambda 0 to huge, 8- and 16-bit maxval, the
 *    limit of 32-bit sums, binary images, dictionaries that grow between
 *    blocks, fill up, or are replaced by a larger one): every mmp_match must
 *    equal seq's, padding included. Engines with concurrency (omp, opencl)
 *    run at 1, 2, 3 and 7 threads and at their default (0), each block's
 *    calls in flight together as the search makes them: as OpenMP tasks in
 *    a parallel region of that many threads.
 * 2. End to end: a 40x40 crop from the centre of every image in images/
 *    and the bottom-right 37x29 corner of those whose sides are not
 *    multiples of 16, at lambda 10 and 300, encode to seq's bytes; engines
 *    with concurrency take 1, 2, 3 and 7 threads in turn (each crop two of
 *    them, to keep the suite quick on two cores). A 16-bit crop: the same
 *    bytes at all four thread counts.
 *
 * Each engine and part is a cmocka test of its own ("omp: match 8-bit").
 * An engine whose create() fails here (opencl without any OpenCL device) is
 * skipped, with a line that says why. tests/test_opencl.c has the tests
 * that are the opencl engine's own (batches of concurrent calls, host
 * threads, devices).
 *
 * Benchmark: `test_engines --bench [N]` runs no test but times N calls
 * (default 200) of match() with 10 modes on every prediction leaf shape,
 * over a dictionary grown to a realistic size, for each engine at its
 * default thread count, with each engine's calls in flight the way the
 * search makes them (as above). It prints microseconds per call and each
 * engine's speed-up over seq (seq's time / its time).
 *
 * The test images are found in $MMP_IMAGES, else ./images, else ../images.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#include "kernels/cpu_match.h"

/* Thread counts of engines with concurrency (0: the engine's default). */
static const int match_threads[] = {1, 2, 3, 7, 0};
static const int e2e_threads[] = {1, 2, 3, 7};
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* test_engines' draws: orig kept in [0, maxval], as match()'s contract
 * asks (kernels/engine.h; the CPU engines assert it). */
static const match_draws draws = {
    .small_max = 7, .grow_div = 4, .leaf = LEAF_CLAMP_ORIG, .exhaustive = 0};

/* An engine under test, and why it is skipped (create() failed). */
typedef struct engine_case {
    const mmp_engine_ops *ops;
    char skip_why[256];
} engine_case;

/* seq, then ec's engine (unless ec is NULL) at each of its thread counts. */
static void set_create(engine_set *es, const engine_case *ec)
{
    es->n = 0;
    engine_add_or_fail(es, "seq", 1);
    if (!ec)
        return;
    const int nt = ec->ops->concurrency ? NELEM(match_threads) : 1;
    for (int i = 0; i < nt; i++)
        engine_add_or_fail(es, ec->ops->name, ec->ops->concurrency ? match_threads[i] : 1);
}

/* Runs cf on seq (with the exhaustive search) or on seq and ec's engine. */
static void run_config(const engine_case *ec, const match_config *cf, uint64_t seed,
                       engine_set *given)
{
    match_draws dr = draws;
    dr.exhaustive = ec == NULL;
    engine_set own;
    if (!given)
        set_create(&own, ec);
    match_run(cf, &dr, seed, given ? given : &own);
    if (!given)
        engine_set_free(&own);
}

/* ------------------------------------------------------------- match() */

static void test_match_8bit(void **state)
{
    const engine_case *ec = *state;
    run_config(ec, &(match_config){"8-bit", 255, 1024, 16, 10, 40}, 1, NULL);
    run_config(ec, &(match_config){"8-bit exact", 255, 256, 0, 10, 40}, 2, NULL);
}

static void test_match_16bit(void **state)
{
    const engine_case *ec = *state;
    run_config(ec, &(match_config){"16-bit", 65535, 512, 16 * 4, 8, 30}, 3, NULL);
}

static void test_match_edges(void **state)
{
    const engine_case *ec = *state;
    /* The largest maxval with 32-bit partial sums, and the first without. */
    run_config(ec, &(match_config){"maxval 5792", 5792, 256, 16, 6, 30}, 4, NULL);
    run_config(ec, &(match_config){"maxval 5793", 5793, 256, 16, 6, 30}, 5, NULL);
    /* A binary image: three elements per scale to start with, many ties. */
    run_config(ec, &(match_config){"maxval 1", 1, 64, 0, 6, 30}, 6, NULL);
    /* A dictionary that fills up, then engines that are handed a larger
     * one: their copies of it must be reallocated and refilled. */
    engine_set es;
    set_create(&es, ec);
    run_config(ec, &(match_config){"full 64", 1023, 64, 0, 6, 30}, 7, &es);
    run_config(ec, &(match_config){"then cap 300", 1023, 300, 0, 4, 30}, 8, &es);
    engine_set_free(&es);
    /* Planes of other maxvals on the same engines (12-bit colour: luma
     * narrow, chroma wide): copies of the other kind of samples, and a table
     * of one-sample nodes (MMP_SORTED_ONE_MAX) made, resized or dropped. */
    set_create(&es, ec);
    run_config(ec, &(match_config){"maxval 4095", 4095, 256, 16, 4, 30}, 9, &es);
    run_config(ec, &(match_config){"then 8191", 8191, 256, 16, 4, 30}, 10, &es);
    run_config(ec, &(match_config){"then 255", 255, 256, 16, 4, 30}, 11, &es);
    run_config(ec, &(match_config){"then 1024", 1024, 256, 16, 4, 30}, 12, &es);
    run_config(ec, &(match_config){"then 1023", 1023, 256, 16, 4, 30}, 13, &es);
    engine_set_free(&es);
}

/* ------------------------------------------------------------ end to end */

/* seq's bytes, encoded once for all the engines. */
typedef struct seq_bytes {
    char what[300];
    double lambda;
    int order;
    uint8_t *buf;
    size_t len;
} seq_bytes;

static seq_bytes seq_cache[128];
static int nseq_cache;

static const seq_bytes *seq_encode(const char *what, const mmp_image *img, double lambda, int order)
{
    for (int i = 0; i < nseq_cache; i++)
        if (seq_cache[i].lambda == lambda && seq_cache[i].order == order &&
            strcmp(seq_cache[i].what, what) == 0)
            return &seq_cache[i];
    seq_bytes sb = {.lambda = lambda, .order = order};
    snprintf(sb.what, sizeof sb.what, "%s", what);
    encode_or_fail(img, lambda, 0, order, "seq", 1, &sb.buf, &sb.len);
    if (nseq_cache == NELEM(seq_cache)) { /* not expected: keep the last ones */
        free(seq_cache[0].buf);
        memmove(seq_cache, seq_cache + 1, sizeof(seq_bytes) * (NELEM(seq_cache) - 1));
        nseq_cache--;
    }
    seq_cache[nseq_cache] = sb;
    return &seq_cache[nseq_cache++];
}

typedef struct e2e_run {
    const engine_case *ec;
    int all_threads; /* every crop at every thread count, else in turn */
    int turn;        /* encodes so far, for the turns */
    int crops, encodes;
    double seconds;
} e2e_run;

/* The engine's bytes are seq's at lambda 10 and 300 in both coding orders: at every thread count
 * of e2e_threads, or (to keep the suite quick) at the next one in turn, so
 * that the crops of one run spread over all of them. */
static void same_bytes(const char *what, const mmp_image *img, void *arg)
{
    e2e_run *run = arg;
    const mmp_engine_ops *ops = run->ec->ops;
    static const double lambdas[] = {10, 300};
    static const int orders[] = {MMP_ORDER_WAVEFRONT, MMP_ORDER_RASTER};
    const int nt = !ops->concurrency ? 1 : run->all_threads ? NELEM(e2e_threads) : 1;
    for (int l = 0; l < 2 * NELEM(lambdas); l++) {
        const int order = orders[l / NELEM(lambdas)];
        const seq_bytes *ref = seq_encode(what, img, lambdas[l % NELEM(lambdas)], order);
        for (int i = 0; i < nt; i++) {
            const int threads = !ops->concurrency ? 0
                                : run->all_threads ? e2e_threads[i]
                                                   : e2e_threads[run->turn % NELEM(e2e_threads)];
            uint8_t *buf = NULL;
            size_t len = 0;
            char who[64];
            snprintf(who, sizeof who, "%s -t %d %s", ops->name, threads,
                     order == MMP_ORDER_RASTER ? "raster" : "wavefront");
            const double t0 = now_seconds();
            encode_or_fail(img, ref->lambda, 0, order, ops->name, threads, &buf, &len);
            run->seconds += now_seconds() - t0;
            assert_same_bytes(what, ref->lambda, who, ref->buf, ref->len, buf, len);
            free(buf);
            run->turn++;
            run->encodes++;
        }
    }
    run->crops++;
}

/* seq's bytes with the node search's C build, against those of the default
 * run (its AVX2 build, where the CPU has it). */
static void same_bytes_c_build(const char *what, const mmp_image *img, void *arg)
{
    int *encodes = arg;
    static const double lambdas[] = {10, 300};
    static const int orders[] = {MMP_ORDER_WAVEFRONT, MMP_ORDER_RASTER};
    for (int l = 0; l < 2 * NELEM(lambdas); l++) {
        const int order = orders[l / NELEM(lambdas)];
        const seq_bytes *ref = seq_encode(what, img, lambdas[l % NELEM(lambdas)], order);
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_cpu_match_simd(0);
        assert_false(mmp_cpu_match_avx2());
        encode_or_fail(img, ref->lambda, 0, order, "seq", 1, &buf, &len);
        mmp_cpu_match_simd(1);
        assert_same_bytes(what, ref->lambda, order == MMP_ORDER_RASTER ? "seq, C build, raster"
                                                                      : "seq, C build, wavefront",
                          ref->buf, ref->len, buf, len);
        free(buf);
        (*encodes)++;
    }
}

static void print_e2e(const e2e_run *run)
{
    const mmp_engine_ops *ops = run->ec->ops;
    char threads[64] = "";
    if (ops->concurrency) {
        int at = snprintf(threads, sizeof threads, " at -t");
        for (int i = 0; i < NELEM(e2e_threads); i++)
            at += snprintf(threads + at, sizeof threads - at, "%s %d", i ? "," : "",
                           e2e_threads[i]);
        snprintf(threads + at, sizeof threads - at, "%s", run->all_threads ? "" : " in turn");
    }
    print_message("%d crop%s at lambda 10 and 300, both orders, %d encodes: %s%s gives seq's bytes "
                  "(%s %.1f s)\n",
                  run->crops, run->crops == 1 ? "" : "s", run->encodes, ops->name, threads,
                  ops->name, run->seconds);
}

/* The node search's C build (kernels/cpu_match.c): where the CPU has AVX2,
 * the tests above check seq's AVX2 build, and these its C build, against
 * the exhaustive search, and the two against each other end to end. */
static int c_build_on(void **state)
{
    (void)state;
    mmp_cpu_match_simd(0);
    return mmp_cpu_match_avx2(); /* nonzero: the switch did not take, the test fails */
}

static int c_build_off(void **state)
{
    (void)state;
    mmp_cpu_match_simd(1);
    return 0;
}

static void test_c_build_same_bytes(void **state)
{
    (void)state;
    int encodes = 0;
    const int images = for_each_image_crop(same_bytes_c_build, &encodes);
    assert_true(images > 0);
    print_message("%d encodes at lambda 10 and 300, both orders: seq's C build gives its AVX2 "
                  "build's bytes\n",
                  encodes);
}

static void test_images_same_bytes(void **state)
{
    e2e_run run = {.ec = *state, .all_threads = 0};
    const int images = for_each_image_crop(same_bytes, &run);
    print_e2e(&run);
    assert_true(images >= 8);
}

/* A 16-bit image: the wide sums. */
static void test_16bit_same_bytes(void **state)
{
    e2e_run run = {.ec = *state, .all_threads = 1};
    mmp_image c = {0};
    camera_16bit_crop(&c);
    same_bytes("camera 16-bit 40x24", &c, &run);
    print_e2e(&run);
    mmp_image_free(&c);
}

/* A wider crop, 8 x 3 blocks: wavefront steps of up to 3 blocks searched at
 * once, at every thread count, in both orders at lambda 300. */
static void test_wide_same_bytes(void **state)
{
    e2e_run run = {.ec = *state, .all_threads = 1};
    const mmp_engine_ops *ops = run.ec->ops;
    mmp_image c = {0};
    if (load_crop("camera", 120, 150, 128, 48, &c))
        skip();
    static const int orders[] = {MMP_ORDER_WAVEFRONT, MMP_ORDER_RASTER};
    for (int o = 0; o < NELEM(orders); o++) {
        const seq_bytes *ref = seq_encode("camera 128x48", &c, 300, orders[o]);
        for (int i = 0; i < (ops->concurrency ? NELEM(e2e_threads) : 1); i++) {
            const int threads = ops->concurrency ? e2e_threads[i] : 0;
            uint8_t *buf = NULL;
            size_t len = 0;
            char who[64];
            snprintf(who, sizeof who, "%s -t %d %s", ops->name, threads,
                     orders[o] == MMP_ORDER_RASTER ? "raster" : "wavefront");
            const double t0 = now_seconds();
            encode_or_fail(&c, 300, 0, orders[o], ops->name, threads, &buf, &len);
            run.seconds += now_seconds() - t0;
            assert_same_bytes("camera 128x48", 300, who, ref->buf, ref->len, buf, len);
            free(buf);
            run.encodes++;
        }
    }
    print_message("camera 128x48 at lambda 300, both orders, %d encodes: %s gives seq's bytes "
                  "(%s %.1f s)\n",
                  run.encodes, ops->name, ops->name, run.seconds);
    mmp_image_free(&c);
}

/* --------------------------------------------------- the registry itself */

static void test_registry(void **state)
{
    const engine_case *cases = *state;
    const int n = mmp_engine_count();
    assert_true(n >= 1);
    /* seq first, always. */
    assert_non_null(mmp_engine_at(0));
    assert_string_equal(mmp_engine_at(0)->name, "seq");
    assert_ptr_equal(mmp_engine_find("seq"), mmp_engine_at(0));
    assert_null(mmp_engine_at(-1));
    assert_null(mmp_engine_at(n));
    assert_null(mmp_engine_find("nope"));
    assert_null(mmp_engine_find("auto"));
    assert_null(mmp_engine_find(NULL));
    const char *names = mmp_engine_names();
    char list[512] = "";
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        const mmp_engine_ops *e = mmp_engine_at(i);
        assert_non_null(e);
        assert_non_null(e->name);
        assert_ptr_equal(mmp_engine_find(e->name), e);
        assert_non_null(strstr(names, e->name));
        assert_non_null(e->create);
        assert_non_null(e->destroy);
        assert_non_null(e->begin_step);
        assert_non_null(e->match);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(mmp_engine_at(j)->name, e->name);
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s%s", i ? ", " : "", e->name,
                               i == 0                 ? " (the reference)"
                               : cases[i].skip_why[0] ? " (skipped)"
                                                      : "");
    }
    /* -e auto: registered engines only, seq among them. */
    const mmp_engine_config cfg = {0};
    const mmp_engine_ops *order[16];
    const int na = mmp_engine_auto_order(&cfg, order, 16);
    assert_true(na >= 1 && na <= n);
    int seq_in = 0;
    for (int i = 0; i < na; i++) {
        int found = 0;
        for (int j = 0; j < n; j++)
            found |= order[i] == mmp_engine_at(j);
        assert_true(found);
        seq_in |= order[i] == mmp_engine_at(0);
    }
    assert_true(seq_in);
    print_message("%d engines registered: %s; -e auto picks %s\n", n, list, order[0]->name);
}

static void test_skipped(void **state)
{
    const engine_case *ec = *state;
    print_message("%s skipped: create() failed: %s\n", ec->ops->name, ec->skip_why);
    skip();
}

/* ---------------------------------------------------------- benchmark */

static int bench(int calls)
{
    engine_set es = {0};
    engine_add_or_fail(&es, "seq", 1);
    for (int i = 0; i < mmp_engine_count(); i++) {
        const mmp_engine_ops *ops = mmp_engine_at(i);
        if (strcmp(ops->name, "seq") == 0)
            continue;
        char err[256];
        if (engine_add(&es, ops, 0, err, sizeof err)) {
            printf("%s skipped: create() failed: %s\n", ops->name, err);
            continue;
        }
        engine_inst *in = &es.e[es.n - 1];
        if (ops->concurrency)
            snprintf(in->label, sizeof in->label, "%s -t %d", ops->name, in->conc);
    }
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
    for (int i = 0; i < es.n; i++)
        assert_int_equal(es.e[i].ops->begin_step(es.e[i].state, &t), 0);
    /* N copies of one leaf: the same work in every call. */
    leaf *lv = malloc(sizeof(leaf) * calls);
    mmp_match *out = malloc(sizeof(mmp_match) * MATCH_MAXOUT * calls);
    int *rc = malloc(sizeof(int) * calls);
    if (!lv || !out || !rc) {
        fprintf(stderr, "test_engines: out of memory for %d calls\n", calls);
        return 1;
    }
    int total = 0;
    for (int s = 0; s < MMP_NSCALES; s++)
        total += d.n[s];
    printf("match() of %d modes, %d calls per shape, %d dictionary elements, lambda 10:\n"
           "microseconds per call (wall time / calls) and speed-up over seq\n\n%-6s",
           MMP_NUM_MODES, calls, total, "shape");
    for (int i = 0; i < es.n; i++)
        printf(i ? " %12s %7s" : " %12s", es.e[i].label, "");
    printf("\n");
    double sum[ENGINE_SET_MAX] = {0};
    for (int lh = MMP_LOG2_PMIN; lh <= MMP_LOG2B; lh++)
        for (int lw = MMP_LOG2_PMIN; lw <= MMP_LOG2B; lw++) {
            const int area = 1 << (lh + lw);
            leaf *l = &lv[0];
            l->lh = lh;
            l->lw = lw;
            l->nmodes = MMP_NUM_MODES;
            l->real = NULL;
            for (int i = 0; i < area; i++)
                l->orig[i] = rng_range(0, 255);
            for (int m = 0; m < MMP_NUM_MODES; m++)
                for (int i = 0; i < area; i++)
                    l->pred[m * area + i] = l->orig[i] + rng_range(-20, 20);
            for (int k = 1; k < calls; k++)
                lv[k] = lv[0];
            char shape[16];
            snprintf(shape, sizeof shape, "%dx%d", 1 << lh, 1 << lw);
            printf("%-6s", shape);
            double us[ENGINE_SET_MAX];
            for (int i = 0; i < es.n; i++) {
                engine_run(&es.e[i], &t, lv, calls < 4 ? calls : 4, out, rc); /* warm-up */
                us[i] = engine_run(&es.e[i], &t, lv, calls, out, rc) * 1e6 / calls;
                for (int k = 0; k < calls; k++)
                    if (rc[k]) {
                        fprintf(stderr, "test_engines: %s: match() returned %d\n",
                                es.e[i].label, rc[k]);
                        return 1;
                    }
                sum[i] += us[i];
                if (i == 0)
                    printf(" %12.1f", us[i]);
                else
                    printf(" %12.1f %6.2fx", us[i], us[0] / us[i]);
            }
            printf("\n");
            fflush(stdout);
        }
    printf("%-6s", "sum");
    for (int i = 0; i < es.n; i++)
        if (i == 0)
            printf(" %12.1f", sum[i]);
        else
            printf(" %12.1f %6.2fx", sum[i], sum[0] / sum[i]);
    printf("\n");
    free(lv);
    free(out);
    free(rc);
    engine_set_free(&es);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
    return 0;
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    if (argc > 1) {
        const int calls = argc > 2 ? atoi(argv[2]) : 200;
        if (strcmp(argv[1], "--bench") || argc > 3 || calls < 1) {
            fprintf(stderr, "usage: %s [--bench [N]]\n"
                            "  no argument: run the tests; --bench: time N match() calls per "
                            "leaf shape and engine (default 200)\n",
                    argv[0]);
            return 2;
        }
        return bench(calls);
    }

    /* The engines of this build: one case each, seq's first. */
    const int n = mmp_engine_count();
    engine_case *cases = calloc((size_t)n, sizeof(engine_case));
    struct CMUnitTest *tests = calloc((size_t)(5 + 6 * n), sizeof(struct CMUnitTest));
    char(*names)[64] = calloc((size_t)(6 * n), sizeof *names);
    if (!cases || !tests || !names)
        return 1;
    int nt = 0, nn = 0;
    tests[nt++] = (struct CMUnitTest){"registry", test_registry, NULL, NULL, cases};
    static const struct {
        const char *what;
        CMUnitTestFunction fn;
        int seq; /* also seq's test (against the exhaustive search) */
    } parts[] = {
        {"match 8-bit", test_match_8bit, 1},
        {"match 16-bit", test_match_16bit, 1},
        {"match edges", test_match_edges, 1},
        {"same bytes on image crops", test_images_same_bytes, 0},
        {"same bytes 16-bit", test_16bit_same_bytes, 0},
        {"same bytes wide crop", test_wide_same_bytes, 0},
    };
    for (int i = 0; i < n; i++) {
        engine_case *ec = &cases[i];
        ec->ops = mmp_engine_at(i);
        const int is_seq = strcmp(ec->ops->name, "seq") == 0;
        if (!is_seq) {
            /* Can this machine run it? */
            void *st = NULL;
            mmp_engine_config cfg = {.threads = 1};
            if (ec->ops->create(&st, &cfg, ec->skip_why, sizeof ec->skip_why)) {
                if (!ec->skip_why[0])
                    snprintf(ec->skip_why, sizeof ec->skip_why, "no reason given");
                printf("test_engines: %s skipped: create() failed: %s\n", ec->ops->name,
                       ec->skip_why);
                snprintf(names[nn], sizeof names[nn], "%s: skipped", ec->ops->name);
                tests[nt++] = (struct CMUnitTest){names[nn++], test_skipped, NULL, NULL, ec};
                continue;
            }
            ec->ops->destroy(st);
        }
        for (int p = 0; p < NELEM(parts); p++) {
            if (is_seq && !parts[p].seq)
                continue;
            snprintf(names[nn], sizeof names[nn], "%s: %s%s", ec->ops->name, parts[p].what,
                     is_seq ? " (exhaustive search)" : "");
            /* seq's tests run with no other engine (state NULL). */
            tests[nt++] =
                (struct CMUnitTest){names[nn++], parts[p].fn, NULL, NULL, is_seq ? NULL : ec};
        }
    }
    if (mmp_cpu_match_avx2()) {
        tests[nt++] = (struct CMUnitTest){"seq, C build: match 8-bit (exhaustive search)",
                                          test_match_8bit, c_build_on, c_build_off, NULL};
        tests[nt++] = (struct CMUnitTest){"seq, C build: match 16-bit (exhaustive search)",
                                          test_match_16bit, c_build_on, c_build_off, NULL};
        tests[nt++] = (struct CMUnitTest){"seq, C build: match edges (exhaustive search)",
                                          test_match_edges, c_build_on, c_build_off, NULL};
        tests[nt++] = (struct CMUnitTest){"seq: C build, same bytes on image crops",
                                          test_c_build_same_bytes, NULL, c_build_off, NULL};
    } else {
        printf("test_engines: this CPU has no AVX2: the node search's C build alone is tested\n");
    }
    const int rc = _cmocka_run_group_tests("test_engines", tests, (size_t)nt, NULL, NULL);
    for (int i = 0; i < nseq_cache; i++)
        free(seq_cache[i].buf);
    free(cases);
    free(tests);
    free(names);
    return rc;
}
