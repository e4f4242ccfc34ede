/*
 * Helpers shared by the tests (tests/test_*.c): one copy of each, so that
 * every test draws the same numbers, finds the same images and reports
 * differences the same way. Everything is static inline (a test that uses
 * some of it gets no unused-function warning); the header includes what it
 * needs, cmocka included, so it may come after any other include.
 *
 * The tests of the command-line programs use it through tests/cli_harness.h;
 * the fuzz targets in tests/fuzz/ keep their own copies (they must not link
 * cmocka).
 *
 *   Random numbers   rng_seed, rng_next, rng_range, rng_below
 *   Time             now_seconds
 *   Files            slurp, write_file
 *   Containers       tests/container_util.h: the layout's offsets (MF_*),
 *                    put16/32/64, get16/32/64, put_field, chunk_fix_crc,
 *                    chunk_walk, chunk_find, fixup_container, fixup_tidx,
 *                    fixup_chunks, rewrite_tile
 *   Images           images_find, images_dir, read_image, load_image,
 *                    image_crop, crop, load_crop, camera_16bit_crop,
 *                    for_each_image_crop
 *   Encoding         encode_or_fail, encode_refused, assert_same_bytes
 *   Engines          random_pattern, grow_dict, random_tables, random_leaf,
 *                    engine_set (engine_add, engine_set_free, engine_run),
 *                    match_run: the checkasm-style comparison of engines'
 *                    match() with seq's (test_engines.c, test_opencl.c)
 */
#ifndef MMP_TESTS_UTIL_H
#define MMP_TESTS_UTIL_H

#include <dirent.h>
#include <errno.h>
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
#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/container.h"
#include "common/error.h"
#include "common/scales.h"
#include "dict/dict.h"
#include "kernels/engine.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"
#include "predict/predict.h"

/* ---------------------------------------------------------- random numbers */

/* xorshift64*, seeded per test: every run and every machine tests the same
 * inputs. One generator per test program (not thread-safe: draw before
 * going parallel). */
static uint64_t rng_state __attribute__((unused));

static inline void rng_seed(uint64_t s)
{
    rng_state = s * 0x9E3779B97F4A7C15ull + 1;
}

static inline uint32_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Uniform in [lo, hi] (modulo: the draws the tests have always made). */
static inline int32_t rng_range(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(rng_next() % (uint32_t)(hi - lo + 1));
}

/* In [0, n), or 0 when n is 0. */
static inline size_t rng_below(size_t n)
{
    return n ? (size_t)rng_next() % n : 0;
}

/* -------------------------------------------------------------------- time */

/* Monotonic seconds. */
static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------- files */

/* The whole file in a malloc'ed buffer with a 0 after its *len bytes (so a
 * text file is a string), or NULL when it cannot be read. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    uint8_t *b = malloc(cap + 1);
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(b, (cap *= 2) + 1);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    fclose(f);
    if (b)
        b[n] = 0;
    *len = n;
    return b;
}

/* Writes n bytes to path (replacing it); fails the test on any error. */
static inline void write_file(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(b, 1, n, f) != n) || fclose(f) != 0)
        fail_msg("cannot write %s: %s", path, strerror(errno));
}

/* -------------------------------------------------------------- containers */

#include "container_util.h"

/* ------------------------------------------------------------------ images */

/* The test images: $MMP_IMAGES, else ./images (make check runs from the
 * repository root), ../images or ../../images, the first that holds
 * camera.pgm; NULL when none does. */
static inline const char *images_find(void)
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
    return NULL;
}

/* The same, failing the test when there are no images. */
static inline const char *images_dir(void)
{
    const char *d = images_find();
    if (!d)
        fail_msg("test images not found: set MMP_IMAGES or run from the repository root");
    return d;
}

/* images/NAME.pgm into img; 0 or a negative MMP_E* code (no images: -1),
 * with the reason in err. */
static inline int read_image(const char *name, mmp_image *img, char *err, size_t errlen)
{
    const char *d = images_find();
    if (!d) {
        snprintf(err, errlen, "test images not found");
        return -1;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.pgm", d, name);
    return mmp_imagefile_read_path(path, img, err, errlen);
}

/* images/NAME.pgm into img, failing the test when it cannot be read. */
static inline void load_image(const char *name, mmp_image *img)
{
    char err[256] = "";
    int rc = read_image(name, img, err, sizeof err);
    if (rc)
        fail_msg("cannot read %s.pgm in %s: %d %s", name, images_dir(), rc, err);
}

/* The w x h rectangle of src at (x0, y0) into a new image dst: 0, or
 * MMP_EINVAL when it is not inside src, or the allocation's error. */
static inline int image_crop(const mmp_image *src, int x0, int y0, int w, int h, mmp_image *dst)
{
    if (x0 < 0 || y0 < 0 || w < 1 || h < 1 || x0 + w > src->width || y0 + h > src->height)
        return MMP_EINVAL;
    int rc = mmp_image_alloc(dst, w, h, src->maxval);
    if (rc)
        return rc;
    for (int y = 0; y < h; y++)
        memcpy(dst->pix + (size_t)y * w, src->pix + (size_t)(y0 + y) * src->width + x0,
               sizeof(uint16_t) * (size_t)w);
    return MMP_OK;
}

/* image_crop, failing the test on any error. */
static inline void crop(const mmp_image *src, int x0, int y0, int w, int h, mmp_image *dst)
{
    if (image_crop(src, x0, y0, w, h, dst))
        fail_msg("cannot crop %dx%d at (%d,%d) of a %dx%d image", w, h, x0, y0, src->width,
                 src->height);
}

/* A crop of images/NAME.pgm: 0, or -1 when the image is missing or the
 * rectangle does not fit (the caller does without). */
static inline int load_crop(const char *name, int x0, int y0, int w, int h, mmp_image *out)
{
    mmp_image img = {0};
    char err[256];
    if (read_image(name, &img, err, sizeof err))
        return -1;
    const int rc = image_crop(&img, x0, y0, w, h, out);
    mmp_image_free(&img);
    return rc ? -1 : 0;
}

/* The w x h rectangle of src at (x0, y0), every channel, into dst. */
static inline void crop_all(const mmp_image *src, int x0, int y0, int w, int h, mmp_image *dst)
{
    const int ch = mmp_image_channels(src);
    assert_true(x0 >= 0 && y0 >= 0 && x0 + w <= src->width && y0 + h <= src->height);
    assert_int_equal(mmp_image_alloc_channels(dst, w, h, ch, src->maxval), MMP_OK);
    for (int y = 0; y < h; y++)
        memcpy(dst->pix + (size_t)y * w * ch, src->pix + ((size_t)(y0 + y) * src->width + x0) * ch,
               sizeof(uint16_t) * (size_t)w * ch);
}

/* A crop of an image file of images/ (PGM, PPM or PNG with alpha), every
 * channel. */
static inline void load_crop_all(const char *file, int x0, int y0, int w, int h, mmp_image *out)
{
    char path[1200], err[256] = "";
    snprintf(path, sizeof path, "%s/%s", images_dir(), file);
    mmp_image img = {0};
    if (mmp_imagefile_read_path(path, &img, err, sizeof err))
        fail_msg("cannot read %s: %s", path, err);
    crop_all(&img, x0, y0, w, h, out);
    mmp_image_free(&img);
}

/* A 16-bit test image: the 40x24 crop of camera.pgm at (200,200) scaled
 * to maxval 65535 (the engines' wide sums). */
static inline void camera_16bit_crop(mmp_image *c)
{
    mmp_image img = {0};
    load_image("camera", &img);
    crop(&img, 200, 200, 40, 24, c);
    c->maxval = 65535;
    for (int i = 0; i < c->width * c->height; i++)
        c->pix[i] = (uint16_t)(c->pix[i] * 257);
    mmp_image_free(&img);
}

/* Calls fn on a 40x40 crop from the centre of every image in images/, and
 * on the bottom-right 37x29 corner (last row and column included) of those
 * whose sides are not multiples of 16; `what` names the crop. Returns the
 * number of images. */
static inline int for_each_image_crop(void (*fn)(const char *what, const mmp_image *c, void *arg),
                                      void *arg)
{
    const char *dir = images_dir();
    DIR *dp = opendir(dir);
    if (!dp)
        fail_msg("cannot list %s", dir);
    struct dirent *de;
    int images = 0;
    while ((de = readdir(dp))) {
        const size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".pgm"))
            continue;
        char path[2048], err[256] = "", what[300];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        mmp_image img = {0}, c = {0};
        if (mmp_imagefile_read_path(path, &img, err, sizeof err))
            fail_msg("cannot read %s: %s", path, err);
        crop(&img, (img.width - 40) / 2, (img.height - 40) / 2, 40, 40, &c);
        snprintf(what, sizeof what, "%s centre 40x40", de->d_name);
        fn(what, &c, arg);
        mmp_image_free(&c);
        if (img.width % 16 || img.height % 16) {
            crop(&img, img.width - 37, img.height - 29, 37, 29, &c);
            snprintf(what, sizeof what, "%s corner 37x29", de->d_name);
            fn(what, &c, arg);
            mmp_image_free(&c);
        }
        mmp_image_free(&img);
        images++;
    }
    closedir(dp);
    return images;
}

/* ---------------------------------------------------------------- encoding */

/* mmp_encode of img with settings s (recon may be NULL); fails the test on
 * error, naming the image, lambda, speed, engine and threads. */
static inline void encode_settings_or_fail(const mmp_settings *s, const mmp_image *img,
                                           uint8_t **buf, size_t *len, mmp_image *recon)
{
    char err[256] = "";
    int rc = mmp_encode(s, img, buf, len, recon, NULL, err, sizeof err);
    if (rc)
        fail_msg("encode %dx%d lambda %g speed %d with %s -t %d: %d %s", img->width, img->height,
                 s->lambda, s->speed, s->engine ? s->engine : "auto", s->threads, rc, err);
}

/* mmp_encode of img at lambda with engine at threads (0: its default) and
 * dict_cap elements per scale (0: the default); fails the test on error. */
static inline void encode_or_fail(const mmp_image *img, double lambda, int dict_cap, int order,
                                  const char *engine, int threads, uint8_t **buf, size_t *len)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.order = order;
    s.lambda = lambda;
    s.engine = engine;
    s.threads = threads;
    s.head_start = 0; /* the engine named searches every step */
    if (dict_cap)
        s.dict_cap = dict_cap;
    encode_settings_or_fail(&s, img, buf, len, NULL);
}

/* mmp_encode of img with s must be refused: MMP_EINVAL, no file, and a
 * message that contains `needle` (NULL: any message). */
static inline void encode_refused(const mmp_settings *s, const mmp_image *img, const char *needle)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    char err[256] = "";
    assert_int_equal(mmp_encode(s, img, &buf, &len, NULL, NULL, err, sizeof err), MMP_EINVAL);
    assert_null(buf);
    assert_true(err[0] != 0);
    if (needle)
        assert_non_null(strstr(err, needle));
}

/* Fails the test, naming the first differing byte, unless buf (what `who`
 * wrote) holds seq's bytes ref. */
static inline void assert_same_bytes(const char *what, double lambda, const char *who,
                                     const uint8_t *ref, size_t reflen, const uint8_t *buf,
                                     size_t len)
{
    if (len == reflen && memcmp(buf, ref, len) == 0)
        return;
    size_t at = 0;
    while (at < len && at < reflen && buf[at] == ref[at])
        at++;
    fail_msg("%s lambda %g: %s gives %zu bytes, seq %zu; first difference at byte %zu", what,
             lambda, who, len, reflen, at);
}

/* ------------------------------------------------- engines: random inputs */

/* Random patterns of one shape: noise, ramps, constants, and extremes. */
static inline void random_pattern(int32_t *p, int n, int maxval)
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

/* npat random patterns of random scales offered to the dictionary. */
static inline void grow_dict(mmp_dict *d, int npat, int maxval)
{
    int32_t pat[MMP_B * MMP_B];
    for (int k = 0; k < npat; k++) {
        const int a = rng_range(0, MMP_LOG2B), b = rng_range(0, MMP_LOG2B);
        random_pattern(pat, 1 << (a + b), maxval);
        mmp_dict_update(d, pat, a, b);
    }
}

/* Rate tables: random, all equal (ties between equidistant elements), or
 * zero; lambda 0, small, customary or huge. cost[s] has d->cap entries. */
static inline void random_tables(mmp_search_tables *t, uint32_t **cost, const mmp_dict *d,
                                 int maxval, int block)
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
    t->step = block;
}

/* random_leaf's variants: each test keeps the draws it has always made. */
enum {
    LEAF_CLAMP_ORIG = 1,  /* orig clamped into [0, maxval] (else nearly flat leaves may
                           * leave it by up to 3) */
    LEAF_DENSE_MASKS = 2, /* a quarter of the calls get a mask of 3 real pixels in 4,
                           * half of those all ones (else 1 in 16 get a mask of 1 in 2) */
};

/* orig and nmodes predictions of a 2^lh x 2^lw leaf; real is filled and
 * returned when some pixels are padding (NULL: all are real). */
static inline const uint8_t *random_leaf(const mmp_dict *d, int maxval, int lh, int lw,
                                         int nmodes, unsigned flags, int32_t *orig,
                                         int32_t *pred, uint8_t *real)
{
    const int h = 1 << lh, w = 1 << lw, area = h * w;
    const int kind = rng_range(0, 5);
    const int32_t c = rng_range(0, maxval);
    for (int i = 0; i < area; i++) {
        switch (kind) {
        case 0: orig[i] = rng_range(0, maxval); break;                /* noise */
        case 1: orig[i] = c; break;                                   /* constant */
        case 2: orig[i] = (rng_next() & 1) ? maxval : 0; break;       /* extremes */
        case 3: orig[i] = (int32_t)((int64_t)maxval * ((i % w) + (i / w)) / (h + w)); break;
        default: orig[i] = c + rng_range(-3, 3); break;               /* nearly flat */
        }
        if (flags & LEAF_CLAMP_ORIG)
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
        /* The residual of mode 0 is exactly a dictionary element of the
         * leaf's scale (ties), with orig still in [0, maxval] as the
         * engines' callers guarantee (else the other modes' residuals
         * reach 2 maxval, beyond the engines' 32-bit partial sums). */
        const int s = mmp_scale(lh, lw);
        const int32_t *e = mmp_dict_elem(d, s, rng_range(0, d->n[s] - 1));
        for (int i = 0; i < area; i++) {
            pred[i] = rng_range(e[i] < 0 ? -e[i] : 0, e[i] > 0 ? maxval - e[i] : maxval);
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
    if (flags & LEAF_DENSE_MASKS) {
        if (mk == 1) {
            for (int i = 0; i < area; i++)
                real[i] = rng_range(0, 3) != 0;
            if (rng_range(0, 1))
                memset(real, 1, area); /* a mask of all ones */
            return real;
        }
    } else if (mk == 1 && rng_range(0, 3) == 0) {
        for (int i = 0; i < area; i++)
            real[i] = rng_next() & 1;
        return real;
    }
    return NULL;
}

/* One match() call's inputs. */
typedef struct leaf {
    int lh, lw, nmodes;
    const uint8_t *real; /* realbuf or NULL */
    int32_t orig[MMP_B * MMP_B], pred[MMP_NUM_MODES * MMP_B * MMP_B];
    uint8_t realbuf[MMP_B * MMP_B];
} leaf;

/* Results of the largest call: every mode of a 16x16 leaf. */
#define MATCH_MAXOUT ((size_t)MMP_NUM_MODES * mmp_match_count(MMP_LOG2B, MMP_LOG2B))

/* ------------------------------------------------ engines: instances */

/* One engine under test: a state of a registered engine. */
typedef struct engine_inst {
    const mmp_engine_ops *ops;
    void *state;
    int threads;    /* the cfg.threads it was created with */
    int conc;       /* its concurrency(): match() calls it takes at once */
    char label[48]; /* "omp -t 3", in messages */
    double seconds; /* spent in its match() calls */
} engine_inst;

#define ENGINE_SET_MAX 16

/* seq (the C reference) first, then the engines compared with it. */
typedef struct engine_set {
    int n;
    engine_inst e[ENGINE_SET_MAX];
} engine_set;

/* Creates ops with cfg.threads = threads and adds it to es. Returns 0, or
 * create()'s code with its reason in errbuf (es unchanged). */
/* engine_add with the engine config's tune string (NULL: the defaults). */
static inline int engine_add_tuned(engine_set *es, const mmp_engine_ops *ops, int threads,
                                   const char *tune, char *errbuf, size_t errlen)
{
    assert_true(es->n < ENGINE_SET_MAX);
    engine_inst *in = &es->e[es->n];
    memset(in, 0, sizeof *in);
    mmp_engine_config cfg = {.threads = threads, .verbose = 0, .tune = tune};
    if (errlen)
        errbuf[0] = 0;
    int rc = ops->create(&in->state, &cfg, errbuf, errlen);
    if (rc)
        return rc;
    assert_non_null(in->state);
    in->ops = ops;
    in->threads = threads;
    in->conc = ops->concurrency ? ops->concurrency(in->state) : 1;
    assert_true(in->conc >= 1);
    if (ops->concurrency)
        snprintf(in->label, sizeof in->label, "%s -t %d%s%s", ops->name, threads,
                 tune ? " " : "", tune ? tune : "");
    else
        snprintf(in->label, sizeof in->label, "%s", ops->name);
    es->n++;
    return 0;
}

static inline int engine_add(engine_set *es, const mmp_engine_ops *ops, int threads,
                             char *errbuf, size_t errlen)
{
    return engine_add_tuned(es, ops, threads, NULL, errbuf, errlen);
}

/* engine_add that fails the test when create() fails. */
static inline void engine_add_or_fail(engine_set *es, const char *name, int threads)
{
    const mmp_engine_ops *ops = mmp_engine_find(name);
    if (!ops)
        fail_msg("engine %s is not registered (%s)", name, mmp_engine_names());
    char err[256];
    int rc = engine_add(es, ops, threads, err, sizeof err);
    if (rc)
        fail_msg("%s -t %d: create() returned %d: %s", name, threads, rc, err);
}

static inline void engine_set_free(engine_set *es)
{
    for (int i = 0; i < es->n; i++)
        es->e[i].ops->destroy(es->e[i].state);
    es->n = 0;
}

/* Leaf k through match(), or, for an engine that has them and odd k,
 * through submit() and wait() (the search's way when it has work to do
 * meanwhile). */
static inline int engine_call(engine_inst *in, const mmp_search_tables *t, const leaf *l, int k,
                              mmp_match *out)
{
    if (in->ops->submit && k % 2) {
        mmp_engine_ticket tk;
        const int rc = in->ops->submit(in->state, t, l->orig, l->pred, l->nmodes, l->real, l->lh,
                                       l->lw, out, &tk);
        return rc ? rc : in->ops->wait(in->state, &tk);
    }
    return in->ops->match(in->state, t, l->orig, l->pred, l->nmodes, l->real, l->lh, l->lw, out);
}

/*
 * Runs match() of in on the n leaves lv into out[k] (MATCH_MAXOUT results
 * each), rc[k] its return code (engine_call: half of them through submit()
 * and wait() where the engine has them). An engine that takes several calls at once
 * (conc > 1) gets them the way the search makes them: from inside an OpenMP
 * parallel region of conc threads, as tasks, all in flight together (its
 * match() may then split a call into tasks of its own, or batch calls).
 * Without OpenMP the calls are made one after another, as the search does
 * then. Returns the wall time.
 */
static inline double engine_run(engine_inst *in, const mmp_search_tables *t, const leaf *lv,
                                int n, mmp_match *out, int *rc)
{
    const double t0 = now_seconds();
#ifdef _OPENMP
    if (in->conc > 1) {
#pragma omp parallel num_threads(in->conc)
#pragma omp single
        for (int k = 0; k < n; k++) {
#pragma omp task firstprivate(k)
            rc[k] = engine_call(in, t, &lv[k], k, out + MATCH_MAXOUT * k);
        }
    } else
#endif
    {
        for (int k = 0; k < n; k++)
            rc[k] = engine_call(in, t, &lv[k], k, out + MATCH_MAXOUT * k);
    }
    const double dt = now_seconds() - t0;
    in->seconds += dt;
    return dt;
}

/* ------------------------------------- engines: the contract, exhaustively */

/* The best element of the node's scale for one node, by brute force from
 * the contract in kernels/engine.h. */
static inline void exhaustive_node(const mmp_search_tables *t, const int32_t *orig,
                                   const int32_t *pred, const uint8_t *real, int lw, int a, int b,
                                   int y0, int x0, mmp_match *out)
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

/* Result q of a call of lh x lw: its mode, and its node's scale and place. */
static inline void match_node_of(int lh, int lw, size_t q, int *m, int *a, int *b, int *i, int *j)
{
    const int count = mmp_match_count(lh, lw);
    int n = (int)(q % (size_t)count);
    *m = (int)(q / (size_t)count);
    for (*a = 0; *a <= lh; (*a)++)
        for (*b = 0; *b <= lw; (*b)++) {
            const int off = mmp_match_offset(lh, lw, *a, *b), cols = 1 << (lw - *b);
            if (n >= off && n < off + (1 << (lh - *a)) * cols) {
                *i = (n - off) / cols;
                *j = (n - off) % cols;
                return;
            }
        }
    *a = *b = *i = *j = -1;
}

/* Fails the test unless the first nmodes modes of got (seq's results for
 * the leaf) are the exhaustive search's. */
static inline void check_contract(const mmp_search_tables *t, const leaf *l, int nmodes,
                                  const mmp_match *got, const char *what)
{
    const int lh = l->lh, lw = l->lw, count = mmp_match_count(lh, lw);
    for (int m = 0; m < nmodes; m++)
        for (int a = 0; a <= lh; a++)
            for (int b = 0; b <= lw; b++)
                for (int i = 0; i < (1 << (lh - a)); i++)
                    for (int j = 0; j < (1 << (lw - b)); j++) {
                        const int n = mmp_match_offset(lh, lw, a, b) + i * (1 << (lw - b)) + j;
                        mmp_match want;
                        exhaustive_node(t, l->orig, l->pred + (long)m * (1 << (lh + lw)), l->real,
                                        lw, a, b, i << a, j << b, &want);
                        const mmp_match *g = &got[(long)m * count + n];
                        if (g->j != want.j || g->idx != want.idx)
                            fail_msg("seq differs from the exhaustive search: %s, %dx%d leaf, "
                                     "mode %d, node %dx%d (%d,%d): seq J %lld idx %d, "
                                     "exhaustive J %lld idx %d",
                                     what, 1 << lh, 1 << lw, m, 1 << a, 1 << b, i, j,
                                     (long long)g->j, g->idx, (long long)want.j, want.idx);
                    }
}

/* ------------------------------------------- engines: the comparison */

/* One run of match_run: blocks of random calls over a dictionary that grows. */
typedef struct match_config {
    const char *name;
    int maxval, cap;
    uint32_t redund_q4;
    int rounds;  /* blocks: dictionary growth, new rate tables */
    int samples; /* match() calls per block */
} match_config;

/* How match_run draws (each test keeps its own, so its inputs stay). */
typedef struct match_draws {
    int small_max;   /* a call is of any shape when rng_range(0, small_max) is 0, else
                      * a prediction leaf (4x4 and up) */
    int grow_div;    /* a block that grows the dictionary offers 1 to cap / grow_div
                      * patterns (3 blocks in 4 grow it) */
    unsigned leaf;   /* random_leaf flags */
    int exhaustive;  /* 1: every 4th call, seq's first two modes against the
                      * exhaustive search */
} match_draws;

/*
 * The checkasm-style comparison: for cf->rounds blocks, random tables (and
 * a dictionary grown between blocks), begin_step() on every engine of es,
 * then cf->samples random calls: es->e[0] (seq) computes the reference,
 * every other engine must return 0 and give the same mmp_match, bit for bit
 * (padding included; outputs start filled with a pattern, so an unwritten
 * result shows). The first difference fails the test with the engine, the
 * call and the node. Prints one line of figures.
 */
static inline void match_run(const match_config *cf, const match_draws *dr, uint64_t seed,
                             engine_set *es)
{
    assert_true(es->n >= 1);
    assert_string_equal(es->e[0].ops->name, "seq");
    rng_seed(seed);
    mmp_dict d;
    assert_int_equal(mmp_dict_init(&d, cf->cap, cf->maxval, cf->redund_q4), 0);
    uint32_t *cost[MMP_NSCALES];
    for (int s = 0; s < MMP_NSCALES; s++)
        assert_non_null(cost[s] = malloc(sizeof(uint32_t) * cf->cap));
    leaf *lv = malloc(sizeof(leaf) * cf->samples);
    mmp_match *ref = malloc(sizeof(mmp_match) * MATCH_MAXOUT * cf->samples);
    mmp_match *got = malloc(sizeof(mmp_match) * MATCH_MAXOUT * cf->samples);
    int *rc = malloc(sizeof(int) * cf->samples);
    assert_true(lv && ref && got && rc);
    double seconds[ENGINE_SET_MAX] = {0};
    long calls = 0, nodes = 0, exhaustive = 0;
    for (int r = 0; r < cf->rounds; r++) {
        /* Most blocks grow the dictionary, some leave it as it is. */
        if (r > 0 && rng_range(0, 3) != 0)
            grow_dict(&d, rng_range(1, cf->cap / dr->grow_div), cf->maxval);
        mmp_search_tables t;
        random_tables(&t, cost, &d, cf->maxval, r);
        for (int i = 0; i < es->n; i++) {
            const int brc = es->e[i].ops->begin_step(es->e[i].state, &t);
            if (brc)
                fail_msg("%s: begin_step() returned %d on %s block %d", es->e[i].label, brc,
                         cf->name, r);
        }
        /* The calls of the block, drawn first (engines may run them at once). */
        for (int k = 0; k < cf->samples; k++) {
            leaf *l = &lv[k];
            /* Every shape, the prediction leaves (4x4 and up) most often. */
            const int small = rng_range(0, dr->small_max) == 0;
            l->lh = small ? rng_range(0, MMP_LOG2B) : rng_range(MMP_LOG2_PMIN, MMP_LOG2B);
            l->lw = small ? rng_range(0, MMP_LOG2B) : rng_range(MMP_LOG2_PMIN, MMP_LOG2B);
            l->nmodes = rng_range(0, 2) ? MMP_NUM_MODES : rng_range(1, MMP_NUM_MODES);
            l->real = random_leaf(&d, cf->maxval, l->lh, l->lw, l->nmodes, dr->leaf, l->orig,
                                  l->pred, l->realbuf);
        }
        for (int i = 0; i < es->n; i++) {
            engine_inst *in = &es->e[i];
            mmp_match *out = i == 0 ? ref : got;
            memset(out, 0xA5 + i, sizeof(mmp_match) * MATCH_MAXOUT * cf->samples);
            seconds[i] += engine_run(in, &t, lv, cf->samples, out, rc);
            for (int k = 0; k < cf->samples; k++) {
                const leaf *l = &lv[k];
                if (rc[k]) {
                    const char *why = in->ops->last_error ? in->ops->last_error(in->state) : NULL;
                    fail_msg("%s: match() returned %d (%s) on %s block %d call %d (%dx%d leaf, "
                             "%d modes)",
                             in->label, rc[k], why ? why : "no reason given", cf->name, r, k,
                             1 << l->lh, 1 << l->lw, l->nmodes);
                }
                if (i == 0)
                    continue;
                const mmp_match *w = ref + MATCH_MAXOUT * k, *g = got + MATCH_MAXOUT * k;
                const size_t n = (size_t)l->nmodes * mmp_match_count(l->lh, l->lw);
                for (size_t q = 0; q < n; q++)
                    if (memcmp(&w[q], &g[q], sizeof(mmp_match))) {
                        int m, a, b, ni, nj;
                        match_node_of(l->lh, l->lw, q, &m, &a, &b, &ni, &nj);
                        fail_msg("%s differs from seq: %s block %d call %d: %dx%d leaf, %d "
                                 "modes%s, lambda_q8 %lld, result %zu (mode %d, node %dx%d at "
                                 "row %d col %d): %s J %lld idx %d pad %d; seq J %lld idx %d "
                                 "pad %d",
                                 in->label, cf->name, r, k, 1 << l->lh, 1 << l->lw, l->nmodes,
                                 l->real ? ", masked" : "", (long long)t.lambda_q8, q, m, 1 << a,
                                 1 << b, ni, nj, in->ops->name, (long long)g[q].j, g[q].idx,
                                 g[q].pad, (long long)w[q].j, w[q].idx, w[q].pad);
                    }
            }
        }
        for (int k = 0; k < cf->samples; k++) {
            const leaf *l = &lv[k];
            /* The exhaustive search is slow: a share of the calls, one or two modes. */
            if (dr->exhaustive && k % 4 == 0) {
                check_contract(&t, l, l->nmodes < 2 ? l->nmodes : 2, ref + MATCH_MAXOUT * k,
                               cf->name);
                exhaustive++;
            }
            calls++;
            nodes += (long)l->nmodes * mmp_match_count(l->lh, l->lw);
        }
    }
    int total = 0;
    for (int s = 0; s < MMP_NSCALES; s++)
        total += d.n[s];
    char line[1024];
    int at = snprintf(line, sizeof line, "%-14s %3d blocks, %4ld calls, %7ld results, %5d elements:",
                      cf->name, cf->rounds, calls, nodes, total);
    if (exhaustive)
        at += snprintf(line + at, sizeof line - at, " seq = exhaustive search on %ld calls;",
                       exhaustive);
    for (int i = 0; i < es->n && at < (int)sizeof line; i++)
        at += snprintf(line + at, sizeof line - at, "%s %s %.2f s", i == 0 ? "" : i == 1 ? "; = seq:" : ",",
                       es->e[i].label, seconds[i]);
    print_message("%s\n", line);
    free(lv);
    free(ref);
    free(got);
    free(rc);
    for (int s = 0; s < MMP_NSCALES; s++)
        free(cost[s]);
    mmp_dict_free(&d);
}

#endif
