/*
 * Tests for the residual stage's mixing coder (mmp/common/refine_mix.c,
 * docs/format.md section 7.6, formats 1.2 and 1.3): a re-implementation
 * written from the text of the section ("naive_*" below: qlog, the six
 * context sets of format 1.2 and the two of the residual context, dev and
 * guide, of format 1.3, their indices, the sign's replaced sets, the
 * binarisation, the counters and their two rates, squash and stretch, the
 * mixer's inputs (two a set, then the bias), its weights' start and its
 * update), coded with the range coder's plain primitives (mmp_rc_encode
 * with total 4096, mmp_rc_encode_bit). The library must write the same
 * bytes as the re-implementation, both as mmp_rmix_new(0) (six sets, dev
 * and guide 0) and as mmp_rmix_new(1) (eight sets), on random sequences of
 * q and features (uniform features, features that tell q's size and sign
 * so that the mixer learns, one constant context, the features' extremes),
 * with the encoder's state compared after every sample so that a
 * difference is reported at the sample where it begins; the library's
 * decoder must give the q back from its own bytes. Also: mmp_rmix_qlog
 * against the document's qlog, and mmp_rc_encode_p12 / mmp_rc_decode_p12
 * against mmp_rc_encode with total 4096.
 */
#include "common/rangecoder.h"
#include "mmp/common/refine_mix.h"
#include "tests/util.h"

/* ---- section 7.6 from the document ---- */

#define NAIVE_IDS 35
/* Sets: six, eight with the residual context. Inputs: two a set, then
 * the bias. */
#define NAIVE_SETS 8
#define NAIVE_INPUTS (2 * NAIVE_SETS + 1)

static const int naive_set_size[NAIVE_SETS] = {1024, 180, 512, 512, 1024, 1024, 2401, 768};

/* floor(a / b) for b > 0, towards minus infinity. */
static int64_t naive_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && a < 0)
        q--;
    return q;
}

static int naive_bit_length(uint64_t v)
{
    int k = 0;
    while (v) {
        k++;
        v >>= 1;
    }
    return k;
}

static int naive_qlog(uint64_t v)
{
    if (v < 4)
        return (int)v;
    const int k = naive_bit_length(v);
    const int r = 4 * (k - 2) + (int)((v >> (k - 3)) & 3);
    return r < 63 ? r : 63;
}

static const int naive_knots[33] = {1,    2,    3,    6,    10,   16,   27,   45,   73,
                                    120,  194,  310,  488,  747,  1101, 1546, 2047, 2549,
                                    2994, 3348, 3607, 3785, 3901, 3975, 4022, 4050, 4068,
                                    4079, 4085, 4089, 4092, 4093, 4094};

static int naive_squash(int d)
{
    assert_true(d >= -2047 && d <= 2047);
    const int u = d + 2048, j = u >> 7, f = u & 127;
    return (naive_knots[j] * (128 - f) + naive_knots[j + 1] * f + 64) >> 7;
}

/* "the least d in [-2047, 2047] with squash(d) >= i; 2047 if none", by
 * search: slow and plain. */
static int naive_stretch_table[4096];

static void naive_tables(void)
{
    for (int i = 0; i < 4096; i++) {
        int s = 2047;
        for (int d = -2047; d <= 2047; d++)
            if (naive_squash(d) >= i) {
                s = d;
                break;
            }
        naive_stretch_table[i] = s;
    }
}

typedef struct naive_ctr {
    int fast, slow, n;
} naive_ctr;

typedef struct naive_mix {
    int nset;                   /* 6, or 8 with the residual context */
    naive_ctr *set[NAIVE_SETS]; /* set[k][value * NAIVE_IDS + id] */
    int32_t w[NAIVE_IDS * 3][NAIVE_INPUTS];
} naive_mix;

/* How often each branch was taken, over a test. */
static struct {
    long decisions, raw, ids[NAIVE_IDS], dlo, dhi, wclamp, wmax, n_cap, k[17];
    long dev_lo, dev_hi, guide_lo, guide_hi; /* with the residual context */
} naive_seen;

static void naive_init(naive_mix *m, int context)
{
    memset(m, 0, sizeof *m);
    m->nset = context ? 8 : 6;
    for (int k = 0; k < m->nset; k++) {
        const size_t n = (size_t)naive_set_size[k] * NAIVE_IDS;
        m->set[k] = malloc(sizeof *m->set[k] * n);
        assert_non_null(m->set[k]);
        for (size_t i = 0; i < n; i++)
            m->set[k][i] = (naive_ctr){32768, 32768, 0};
    }
    for (int i = 0; i < NAIVE_IDS * 3; i++)
        for (int j = 0; j < NAIVE_INPUTS; j++)
            m->w[i][j] = j < 2 * m->nset ? 8192 : 0; /* the bias input's starts at 0 */
}

static void naive_free(naive_mix *m)
{
    for (int k = 0; k < m->nset; k++)
        free(m->set[k]);
}

static int naive_rate(int n)
{
    return 131072 / (2 * n + 3);
}

/* One decision: its probability from the sets' counters and the weights,
 * the bit coded with mmp_rc_encode (total 4096), then the updates. */
static void naive_decide(naive_mix *m, mmp_rc_enc *e, const mmp_rmix_feat *f, int id, int bit)
{
    int idx[NAIVE_SETS];
    idx[0] = (f->ls >> 1) * 32 + (f->le >> 1);
    idx[1] = (f->fit * 20 + f->ectx) * 3 + f->sctx;
    idx[2] = f->tex * 8 + (f->la >> 3);
    idx[3] = (f->la >> 1) * 16 + (f->ls >> 2);
    idx[4] = f->level * 32 + (f->la >> 1);
    idx[5] = f->region;
    idx[6] = f->dev;
    idx[7] = f->guide;
    if (id >= 31) { /* the sign: sets 1 and 3 only */
        idx[1] = (f->sctx * 9 + f->sgn / 9) * 5 + (f->ectx >> 2);
        idx[3] = f->sgn;
    }
    if (m->nset == 6) /* without the residual context, dev and guide are 0 */
        assert_true(f->dev == 0 && f->guide == 0);
    else {
        naive_seen.dev_lo += f->dev == 0;
        naive_seen.dev_hi += f->dev == 2400;
        naive_seen.guide_lo += f->guide == 0;
        naive_seen.guide_hi += f->guide == 767;
    }
    const int nin = 2 * m->nset + 1;
    naive_ctr *c[NAIVE_SETS];
    int x[NAIVE_INPUTS];
    for (int k = 0; k < m->nset; k++) {
        assert_true(idx[k] >= 0 && idx[k] < naive_set_size[k]);
        c[k] = &m->set[k][(size_t)idx[k] * NAIVE_IDS + id];
        x[2 * k] = naive_stretch_table[c[k]->fast >> 4];
        x[2 * k + 1] = naive_stretch_table[c[k]->slow >> 4];
    }
    x[2 * m->nset] = 256;
    int32_t *w = m->w[id * 3 + f->fit];
    int64_t dot = 0;
    for (int i = 0; i < nin; i++)
        dot += (int64_t)w[i] * x[i];
    int64_t d = naive_floor_div(dot, 65536);
    if (d < -2047) {
        d = -2047;
        naive_seen.dlo++;
    }
    if (d > 2047) {
        d = 2047;
        naive_seen.dhi++;
    }
    const int p = naive_squash((int)d);
    mmp_rc_encode(e, bit ? 0 : (uint32_t)p, bit ? (uint32_t)p : (uint32_t)(4096 - p), 4096);
    naive_seen.decisions++;
    naive_seen.ids[id]++;

    const int64_t err = (int64_t)((bit << 12) - p) * 3;
    for (int i = 0; i < nin; i++) {
        int64_t v = (int64_t)w[i] + naive_floor_div((int64_t)x[i] * err + 8192, 16384);
        if (v < -(1 << 24) || v > (1 << 24)) {
            v = v < 0 ? -(1 << 24) : (1 << 24);
            naive_seen.wclamp++;
        }
        w[i] = (int32_t)v;
        if ((v < 0 ? -v : v) > naive_seen.wmax)
            naive_seen.wmax = (long)(v < 0 ? -v : v);
    }
    const int t = bit ? 65535 : 0;
    for (int k = 0; k < m->nset; k++) {
        naive_ctr *q = c[k];
        q->fast +=
            (int)naive_floor_div((int64_t)(t - q->fast) * naive_rate(q->n < 12 ? q->n : 12), 65536);
        q->slow += (int)naive_floor_div((int64_t)(t - q->slow) * naive_rate(q->n), 65536);
        assert_true(q->fast >= 0 && q->fast <= 65535 && q->slow >= 0 && q->slow <= 65535);
        if (q->n == 1000)
            naive_seen.n_cap++;
        q->n = q->n + 1 < 1000 ? q->n + 1 : 1000;
    }
}

/* One q: its bit length in unary, the two bits below the leading one as
 * decisions and the rest raw, the sign. */
static void naive_code(naive_mix *m, mmp_rc_enc *e, const mmp_rmix_feat *f, int q)
{
    const int a = q < 0 ? -q : q;
    assert_true(a < 65536);
    const int K = naive_bit_length((uint64_t)a);
    naive_seen.k[K]++;
    for (int j = 0; j < 16; j++) {
        const int b = K > j;
        naive_decide(m, e, f, j, b);
        if (!b)
            break;
    }
    if (K == 0)
        return;
    int v = 1;
    for (int t = 1; t <= K - 1; t++) {
        const int bit = (a >> (K - 1 - t)) & 1;
        if (t <= 2) {
            naive_decide(m, e, f, 16 + 3 * ((K < 6 ? K : 6) - 2) - 1 + v, bit);
        } else {
            mmp_rc_encode_bit(e, bit);
            naive_seen.raw++;
        }
        v = 2 * v + bit;
    }
    naive_decide(m, e, f, 31 + (K < 4 ? K : 4) - 1, q < 0);
}

/* ---- random sequences ---- */

enum { SEQ_UNIFORM, SEQ_CORRELATED, SEQ_CONSTANT, SEQ_EXTREMES, SEQ_KINDS };

static int draw_q(void)
{
    const uint32_t r = rng_next() % 100;
    int a;
    if (r < 45)
        a = (int)rng_below(4);
    else if (r < 75)
        a = (int)rng_below(64);
    else if (r < 90)
        a = (int)rng_below(4096);
    else if (r < 97)
        a = (int)rng_below(65536);
    else {
        static const int edge[] = {65535, 65534, 32768, 32767, 1, 2, 3, 4, 7, 8, 63, 64};
        a = edge[rng_below(sizeof edge / sizeof edge[0])];
    }
    return (rng_next() & 1) ? -a : a;
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* dev's digit (0 .. 6) of a deviation of sign neg and size class m (0 .. 3). */
static int dev_digit(int neg, int m)
{
    return neg ? 3 - m : 3 + m;
}

/* The features of q in a sequence of a kind; with the residual context
 * (context 1) dev in 0 .. 2400 and guide in 0 .. 767 too, 0 otherwise. */
static void draw_features(int kind, int context, int q, mmp_rmix_feat *f)
{
    const int a = q < 0 ? -q : q;
    switch (kind) {
    case SEQ_UNIFORM:
        *f = (mmp_rmix_feat){
            .la = rng_range(0, 63),
            .ls = rng_range(0, 63),
            .le = rng_range(0, 63),
            .fit = rng_range(0, 2),
            .ectx = rng_range(0, 19),
            .sctx = rng_range(0, 2),
            .tex = rng_range(0, 63),
            .sgn = rng_range(0, 80),
            .level = rng_range(0, 31),
            .region = rng_range(0, 1023),
        };
        if (context) {
            f->dev = rng_range(0, 2400);
            f->guide = rng_range(0, 767);
        }
        break;
    case SEQ_CORRELATED: {
        /* The size of q in la, le and level, its sign in sctx and sgn
         * (mostly), a few regions: the mixer has something to learn. */
        const int lq = naive_qlog((uint64_t)a);
        const int neg = q < 0;
        *f = (mmp_rmix_feat){
            .la = clampi(lq + rng_range(-2, 2), 0, 63),
            .ls = clampi(lq / 2 + rng_range(0, 3), 0, 63),
            .le = clampi(lq + rng_range(-1, 1), 0, 63),
            .fit = rng_range(0, 2),
            .ectx = clampi(lq / 3, 0, 19),
            .sctx = rng_below(8) ? (a == 0 ? 0
                                    : neg  ? 1
                                           : 2)
                                 : rng_range(0, 2),
            .tex = rng_range(0, 7),
            .sgn = rng_below(6) ? (neg ? rng_range(0, 26) : rng_range(54, 80)) : rng_range(0, 80),
            .level = clampi(lq / 2, 0, 31),
            .region = rng_range(0, 3),
        };
        if (context) {
            /* q's sign and size in the candidates' deviations and in the
             * guide's residual, as the residual stage's features have them. */
            const int m = clampi(naive_bit_length((uint64_t)a) / 4 + rng_range(-1, 1), 0, 3);
            const int d = dev_digit(neg, m);
            f->dev = ((d * 7 + dev_digit(neg, clampi(m - 1, 0, 3))) * 7 + rng_range(0, 6)) * 7 +
                     (rng_below(3) ? d : rng_range(0, 6));
            const int gm = clampi(lq / 2 + rng_range(-1, 1), 0, 31);
            const int gs = a == 0 || !rng_below(5) ? rng_range(0, 2) : neg ? 1 : 2;
            f->guide = (gm * 3 + gs) * 8 + (f->la >> 3);
        }
        break;
    }
    case SEQ_CONSTANT:
        /* One context throughout: the counters reach their caps. */
        *f = (mmp_rmix_feat){.la = 9,
                             .ls = 4,
                             .le = 17,
                             .fit = 1,
                             .ectx = 5,
                             .sctx = 2,
                             .tex = 33,
                             .sgn = 40,
                             .level = 7,
                             .region = 512,
                             .dev = context ? 1200 : 0,
                             .guide = context ? 300 : 0};
        break;
    default: {
        /* Each field at its least or its greatest value. */
        const uint32_t r = rng_next();
        *f = (mmp_rmix_feat){
            .la = (r & 1) ? 63 : 0,
            .ls = (r & 2) ? 63 : 0,
            .le = (r & 4) ? 63 : 0,
            .fit = (r & 8) ? 2 : 0,
            .ectx = (r & 16) ? 19 : 0,
            .sctx = (r & 32) ? 2 : 0,
            .tex = (r & 64) ? 63 : 0,
            .sgn = (r & 128) ? 80 : 0,
            .level = (r & 256) ? 31 : 0,
            .region = (r & 512) ? 1023 : 0,
            .dev = context && (r & 1024) ? 2400 : 0,
            .guide = context && (r & 2048) ? 767 : 0,
        };
        break;
    }
    }
}

/* The samples qs[0 .. n) with features fs, without (context 0) or with
 * the residual context: the document's bytes against the library's, state
 * by state, then the library's decoder on its bytes; `what` names the
 * sequence in a failure. */
static void check_codes(int context, const int *qs, const mmp_rmix_feat *fs, int n,
                        const char *what)
{
    naive_mix ref;
    naive_init(&ref, context);
    mmp_rmix *lib = mmp_rmix_new(context);
    assert_non_null(lib);
    mmp_rc_enc er, el;
    mmp_rc_enc_init(&er);
    mmp_rc_enc_init(&el);
    for (int i = 0; i < n; i++) {
        naive_code(&ref, &er, &fs[i], qs[i]);
        const int back = mmp_rmix_code(lib, &el, NULL, &fs[i], qs[i]);
        if (back != qs[i])
            fail_msg("%s, sample %d: mmp_rmix_code returned %d coding %d", what, i, back, qs[i]);
        if (er.len != el.len || er.low != el.low || er.range != el.range || er.cache != el.cache ||
            er.cache_size != el.cache_size)
            fail_msg("%s: the coders part at sample %d (q %d, la %d ls %d le %d fit %d ectx %d "
                     "sctx %d tex %d sgn %d level %d region %d dev %d guide %d): range %u "
                     "against the document's %u",
                     what, i, qs[i], fs[i].la, fs[i].ls, fs[i].le, fs[i].fit, fs[i].ectx,
                     fs[i].sctx, fs[i].tex, fs[i].sgn, fs[i].level, fs[i].region, fs[i].dev,
                     fs[i].guide, (unsigned)el.range, (unsigned)er.range);
    }
    assert_int_equal(mmp_rc_enc_finish(&er), 0);
    assert_int_equal(mmp_rc_enc_finish(&el), 0);
    assert_int_equal(er.len, el.len);
    assert_memory_equal(er.buf, el.buf, er.len);

    mmp_rmix *dec = mmp_rmix_new(context);
    assert_non_null(dec);
    mmp_rc_dec d;
    mmp_rc_dec_init(&d, el.buf, el.len);
    for (int i = 0; i < n; i++) {
        const int q = mmp_rmix_code(dec, NULL, &d, &fs[i], 0);
        if (q != qs[i])
            fail_msg("%s, sample %d: decoded %d, coded %d", what, i, q, qs[i]);
    }
    assert_false(d.overrun);

    mmp_rmix_free(dec);
    mmp_rmix_free(lib);
    mmp_rc_enc_free(&er);
    mmp_rc_enc_free(&el);
    naive_free(&ref);
}

/* One random sequence of n samples of a kind (check_codes). */
static void check_sequence(int context, uint64_t seed, int kind, int n)
{
    rng_seed(seed);
    int *qs = malloc(sizeof *qs * (size_t)n);
    mmp_rmix_feat *fs = malloc(sizeof *fs * (size_t)n);
    assert_non_null(qs);
    assert_non_null(fs);
    for (int i = 0; i < n; i++) {
        /* Constant contexts favour small q, the way the residual does. */
        qs[i] = kind == SEQ_CONSTANT && rng_below(4) ? (int)rng_below(3) - 1 : draw_q();
        draw_features(kind, context, qs[i], &fs[i]);
    }
    char what[64];
    snprintf(what, sizeof what, "context %d seed %llu kind %d", context, (unsigned long long)seed,
             kind);
    check_codes(context, qs, fs, n, what);
    free(qs);
    free(fs);
}

/* The sequences without (context 0) or with the residual context. */
static void check_matches_document(int context)
{
    naive_tables();
    memset(&naive_seen, 0, sizeof naive_seen);
    for (uint64_t seed = 1; seed <= 3; seed++)
        for (int kind = 0; kind < SEQ_KINDS; kind++)
            check_sequence(context, seed * 7919 + (uint64_t)kind, kind,
                           kind == SEQ_CONSTANT ? 6000 : 3000);

    /* Every decision id, every bit length, raw bits, both ends of the
     * mixer's clamp, counters at their cap. Ids 17 and 18 are never coded:
     * the first mantissa bit of K = 2 takes 16 + 3 * 0 - 1 + 1 = 16, and
     * K = 2 has no second one; K = 3 starts at 19. */
    for (int id = 0; id < NAIVE_IDS; id++)
        if (!naive_seen.ids[id] != (id == 17 || id == 18))
            fail_msg("decision id %d coded %ld times", id, naive_seen.ids[id]);
    for (int k = 0; k <= 16; k++)
        if (!naive_seen.k[k])
            fail_msg("no q of bit length %d", k);
    assert_true(naive_seen.raw > 0);
    assert_true(naive_seen.dlo > 0);
    assert_true(naive_seen.dhi > 0);
    assert_true(naive_seen.n_cap > 0);
    /* dev and guide at both ends of their sets. */
    if (context)
        assert_true(naive_seen.dev_lo > 0 && naive_seen.dev_hi > 0 && naive_seen.guide_lo > 0 &&
                    naive_seen.guide_hi > 0);
    print_message("mix, context %d: %ld decisions, %ld raw bits, d clamped %ld low / %ld high, "
                  "%ld weight clamps (largest |w| %ld), %ld counter updates at n = 1000\n",
                  context, naive_seen.decisions, naive_seen.raw, naive_seen.dlo, naive_seen.dhi,
                  naive_seen.wclamp, naive_seen.wmax, naive_seen.n_cap);
}

static void test_matches_document(void **state)
{
    (void)state;
    check_matches_document(0);
}

static void test_matches_document_context(void **state)
{
    (void)state;
    check_matches_document(1);
}

/* One q from a fresh coder, each of a few (zero, the extremes, each sign),
 * without and with the residual context: the flush of a stream of a single
 * sample, and its decoding. */
static void test_short_sequences(void **state)
{
    (void)state;
    naive_tables();
    static const int one[] = {0, 1, -1, 65535, -65535, 32768, -4, 5};
    for (int context = 0; context <= 1; context++) {
        const mmp_rmix_feat f = {.la = 1, .ls = 2, .le = 3, .fit = 2, .ectx = 19, .sctx = 1,
                                 .tex = 63, .sgn = 80, .level = 31, .region = 1023,
                                 .dev = context ? 2400 : 0, .guide = context ? 767 : 0};
        for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
            char what[48];
            snprintf(what, sizeof what, "context %d, q %d alone", context, one[i]);
            check_codes(context, &one[i], &f, 1, what);
        }
    }
}

static void test_qlog(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < (1u << 18); v++)
        if (mmp_rmix_qlog(v) != naive_qlog(v))
            fail_msg("qlog(%llu): %d, the document's %d", (unsigned long long)v, mmp_rmix_qlog(v),
                     naive_qlog(v));
    for (int k = 18; k < 64; k++) {
        const uint64_t b = (uint64_t)1 << k;
        const uint64_t vs[] = {
            b - 1, b, b + 1, b | (b >> 1), b | (b >> 2), b | (b >> 1) | (b >> 2)};
        for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
            assert_int_equal(mmp_rmix_qlog(vs[i]), naive_qlog(vs[i]));
    }
    assert_int_equal(mmp_rmix_qlog(UINT64_MAX), 63);
    assert_int_equal(naive_qlog(UINT64_MAX), 63);
    /* The cap: 4 (k - 2) + 3 passes 63 from bit length 18 on (v >= 2^17). */
    assert_int_equal(naive_qlog(0xFFFF), 59);
    assert_int_equal(naive_qlog(1u << 16), 60);
    assert_int_equal(naive_qlog(0x1BFFF), 62);
    assert_int_equal(naive_qlog((1u << 17) - 1), 63);
    assert_int_equal(naive_qlog(1u << 17), 63);
}

/* mmp_rc_encode_p12 writes mmp_rc_encode's bytes with total 4096, and
 * mmp_rc_decode_p12 reads them back. */
static void test_p12(void **state)
{
    (void)state;
    rng_seed(12);
    enum { N = 20000 };
    uint32_t *ps = malloc(sizeof *ps * N);
    int *bits = malloc(sizeof *bits * N);
    assert_non_null(ps);
    assert_non_null(bits);
    mmp_rc_enc a, b;
    mmp_rc_enc_init(&a);
    mmp_rc_enc_init(&b);
    for (int i = 0; i < N; i++) {
        const uint32_t r = rng_next() % 8;
        ps[i] = r == 0 ? 1 : r == 1 ? 4095 : 1 + rng_next() % 4095;
        bits[i] = (int)(rng_next() % 4096) < (int)ps[i];
        if (rng_below(16) == 0)
            bits[i] = !bits[i];
        mmp_rc_encode(&a, bits[i] ? 0 : ps[i], bits[i] ? ps[i] : 4096 - ps[i], 4096);
        mmp_rc_encode_p12(&b, ps[i], bits[i]);
    }
    assert_int_equal(mmp_rc_enc_finish(&a), 0);
    assert_int_equal(mmp_rc_enc_finish(&b), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.buf, b.buf, a.len);
    mmp_rc_dec d;
    mmp_rc_dec_init(&d, b.buf, b.len);
    for (int i = 0; i < N; i++)
        if (mmp_rc_decode_p12(&d, ps[i]) != bits[i])
            fail_msg("decision %d (p %u): the wrong bit", i, (unsigned)ps[i]);
    assert_false(d.overrun);
    mmp_rc_enc_free(&a);
    mmp_rc_enc_free(&b);
    free(ps);
    free(bits);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qlog),
        cmocka_unit_test(test_p12),
        cmocka_unit_test(test_short_sequences),
        cmocka_unit_test(test_matches_document),
        cmocka_unit_test(test_matches_document_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
