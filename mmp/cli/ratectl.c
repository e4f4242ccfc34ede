/* Rate control of mmp-enc: the search of ratectl.h's comment. */
#include "mmp/cli/ratectl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The lambda_q8 range: lambda 0 to 1000000 in 1/256. */
#define Q8_MAX 256000000LL
/* The search aims a little below a --max-bytes ceiling. */
#define BYTES_AIM 0.985
/* Prior slopes of y against log lambda, within those of the test images
 * camera and ascent (-0.5 to -0.9 in log bytes, -3 to -3.7 dB). */
#define PRIOR_SLOPE_RATE (-0.7)
#define PRIOR_SLOPE_PSNR (-3.0)
/* Steps of the extrapolation in log lambda, and its overshoot. */
#define STEP_MIN 0.1
#define STEP_MAX 5.0
#define OVERSHOOT 1.25
/* A bracket narrower than this in log lambda (0.25 %) is not split: the
 * measure jumps there (the dictionary adapts) rather than moving. */
#define BRACKET_MIN 0.0025
/* PSNR stands at most at this for the interpolation (lossless: infinite). */
#define PSNR_CAP 200.0

const char *mmp_ratectl_option(int kind)
{
    switch (kind) {
    case MMP_RATE_BYTES:
        return "--max-bytes";
    case MMP_RATE_BPP:
        return "--target-bpp";
    case MMP_RATE_PSNR:
        return "--target-psnr";
    default:
        return "?";
    }
}

int mmp_ratectl_parse(int kind, const char *arg, double *value)
{
    char *end;
    errno = 0;
    const double v = strtod(arg, &end);
    if (errno || end == arg || *end || !isfinite(v))
        return -1;
    switch (kind) {
    case MMP_RATE_BYTES:
        if (!(v >= 1 && v <= (double)MMP_MAX_FILE_BYTES) || v != floor(v))
            return -1;
        break;
    case MMP_RATE_BPP:
        if (!(v > 0 && v <= 64))
            return -1;
        break;
    default:
        if (!(v > 0 && v <= 1000))
            return -1;
    }
    *value = v;
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One probe as the search sees it. */
typedef struct point {
    long long q8;
    double t; /* log lambda (lambda 0 stands at log(1/512)) */
    double y; /* log payload bytes, or PSNR */
    size_t bytes;
    double bpp, psnr;
} point;

typedef struct search {
    int kind;
    double target;
    const mmp_image *img;
    const mmp_cli_encoder *enc; /* NULL: mmp_encode */
    double pixels;
    double ystar; /* the y aimed at */
    int aimed;    /* ystar is set (after the first probe) */
    point p[MMP_RATE_MAX_PROBES];
    int n;
} search;

static double t_of(long long q8)
{
    return log(q8 > 0 ? (double)q8 : 0.5) - log(256.0);
}

/* The probe is within the stopping tolerance of the target. */
static int in_tolerance(const search *s, const point *p)
{
    switch (s->kind) {
    case MMP_RATE_BYTES:
        return (double)p->bytes <= s->target && (double)p->bytes >= MMP_RATE_BYTES_FILL * s->target;
    case MMP_RATE_BPP:
        return fabs(p->bpp - s->target) <= MMP_RATE_BPP_TOL * s->target;
    default:
        return fabs(p->psnr - s->target) <= MMP_RATE_PSNR_TOL;
    }
}

/* The probe meets the target (the hard constraint of the result). */
static int meets(const search *s, const point *p)
{
    switch (s->kind) {
    case MMP_RATE_BYTES:
        return (double)p->bytes <= s->target;
    case MMP_RATE_BPP:
        return fabs(p->bpp - s->target) <= MMP_RATE_BPP_TOL * s->target;
    default:
        return p->psnr >= s->target - MMP_RATE_PSNR_TOL;
    }
}

/* 1 when probe a is a better result than probe b: those that meet the
 * target first, then by the target's rule (ratectl.h). */
static int better(const search *s, const point *a, const point *b)
{
    const int ma = meets(s, a), mb = meets(s, b);
    if (ma != mb)
        return ma;
    switch (s->kind) {
    case MMP_RATE_BYTES:
        /* The largest that fits; else the smallest. */
        return ma ? a->bytes > b->bytes : a->bytes < b->bytes;
    case MMP_RATE_BPP: {
        if (ma) {
            const int ua = a->bpp <= s->target, ub = b->bpp <= s->target;
            if (ua != ub)
                return ua;
        }
        return fabs(log(a->bpp / s->target)) < fabs(log(b->bpp / s->target));
    }
    default:
        /* The smallest file within 0.05 dB of the target, else the smallest
         * above it (at equal size the higher PSNR); else the highest PSNR. */
        if (ma) {
            const int ia = in_tolerance(s, a), ib = in_tolerance(s, b);
            if (ia != ib)
                return ia;
            return a->bytes < b->bytes || (a->bytes == b->bytes && a->psnr > b->psnr);
        }
        return a->psnr > b->psnr;
    }
}

/* The probe lies above the target's y: lambda must grow. */
static int high(const search *s, const point *p)
{
    return p->y > s->ystar;
}

static int probed(const search *s, long long q8)
{
    for (int i = 0; i < s->n; i++)
        if (s->p[i].q8 == q8)
            return 1;
    return 0;
}

/* The slope of y against t through the two probes of extreme t on the side
 * given (dir > 0: the largest t), or the prior; always negative. */
static double slope(const search *s, int dir)
{
    const double prior = s->kind == MMP_RATE_PSNR ? PRIOR_SLOPE_PSNR : PRIOR_SLOPE_RATE;
    int a = -1, b = -1; /* the extreme and the next */
    for (int i = 0; i < s->n; i++) {
        const double ti = dir * s->p[i].t;
        if (a < 0 || ti > dir * s->p[a].t) {
            b = a;
            a = i;
        } else if (b < 0 || ti > dir * s->p[b].t) {
            b = i;
        }
    }
    if (a < 0 || b < 0 || s->p[a].t == s->p[b].t)
        return prior;
    const double m = (s->p[a].y - s->p[b].y) / (s->p[a].t - s->p[b].t);
    /* Not falling, or falling implausibly fast: the prior is safer. */
    if (!(m < 0.05 * prior) || m < 20 * prior)
        return prior;
    return m;
}

/* The next lambda_q8 to probe, or -1 when there is none to try: *why says
 * then whether an end of the range was reached (1: lambda 1000000 still
 * too high, 2: lambda 0 still too low) or the bracket holds no untried
 * lambda_q8 (3).
 * *interp says whether the probe interpolates inside a bracket; `stall`
 * counts the last interpolated probes that fell on one side. */
static long long next_q8(const search *s, int stall, int *interp, int *why)
{
    int a = -1, b = -1; /* the high probe of largest t, the low probe of least t */
    for (int i = 0; i < s->n; i++) {
        const point *p = &s->p[i];
        if (high(s, p)) {
            if (a < 0 || p->q8 > s->p[a].q8)
                a = i;
        } else if (b < 0 || p->q8 < s->p[b].q8) {
            b = i;
        }
    }
    *why = 0;
    *interp = 0;
    if (a >= 0 && b >= 0) {
        const point *pa = &s->p[a], *pb = &s->p[b];
        long long qa = pa->q8, qb = pb->q8;
        int bisect = stall >= 2;
        if (qa > qb) { /* not monotone here: bisect between them */
            long long x = qa;
            qa = qb;
            qb = x;
            bisect = 1;
        }
        *why = 3;
        const double ta = t_of(qa), tb = t_of(qb), w = tb - ta;
        if (qb - qa <= 1 || w < BRACKET_MIN)
            return -1;
        *interp = 1;
        double t;
        if (bisect) {
            t = ta + 0.5 * w;
        } else {
            t = pa->t + (s->ystar - pa->y) * (pb->t - pa->t) / (pb->y - pa->y);
            if (t < ta + 0.1 * w)
                t = ta + 0.1 * w;
            if (t > tb - 0.1 * w)
                t = tb - 0.1 * w;
        }
        long long q = llround(exp(t + log(256.0)));
        if (q <= qa)
            q = qa + 1;
        if (q >= qb)
            q = qb - 1;
        *why = 0;
        /* A lambda already tried (a non-monotone bracket): the nearest
         * untried one inside. */
        for (long long d = 0; probed(s, q); d++) {
            if (q + d < qb && !probed(s, q + d)) {
                q += d;
                break;
            }
            if (q - d > qa && !probed(s, q - d)) {
                q -= d;
                break;
            }
            if (q + d >= qb && q - d <= qa) {
                *why = 3;
                return -1;
            }
        }
        return q;
    }
    /* One-sided: extrapolate towards the target. */
    const int up = a >= 0; /* every probe is high: lambda must grow */
    const point *e = up ? &s->p[a] : &s->p[b];
    if ((up && e->q8 >= Q8_MAX) || (!up && e->q8 <= 0)) {
        *why = up ? 1 : 2;
        return -1;
    }
    double step = OVERSHOOT * (s->ystar - e->y) / slope(s, up ? 1 : -1);
    const double mag = fmin(fmax(fabs(step), STEP_MIN), STEP_MAX);
    step = up ? mag : -mag;
    const double l = exp(e->t + step + log(256.0));
    long long q = l >= (double)Q8_MAX ? Q8_MAX : l < 1.0 ? 0 : llround(l);
    if (up && q <= e->q8)
        q = e->q8 + 1;
    if (!up && q >= e->q8)
        q = e->q8 - 1;
    return q;
}

/* The library's messages of the first probe only; errors always. */
typedef struct log_gate {
    mmp_log_fn log;
    void *opaque;
    int first;
} log_gate;

static void gated_log(void *opaque, int level, const char *msg)
{
    const log_gate *g = opaque;
    if (g->log && (g->first || level == MMP_LOG_ERROR))
        g->log(g->opaque, level, msg);
}

static void fmt_probe(char *buf, size_t n, const point *p)
{
    snprintf(buf, n, "lambda %.15g: %zu bytes, %.4f bpp, PSNR %.4f dB", p->q8 / 256.0, p->bytes,
             p->bpp, p->psnr);
}

/* The line of an unmet target into errbuf. */
static void unreachable(const search *s, const point *best, int why, char *errbuf, size_t errlen)
{
    char got[160];
    fmt_probe(got, sizeof got, best);
    const char *opt = mmp_ratectl_option(s->kind);
    if (why == 1)
        snprintf(errbuf, errlen, "%s %.15g cannot be %s: the smallest file (%s) is still too large",
                 opt, s->target, s->kind == MMP_RATE_BYTES ? "met" : "reached", got);
    else if (why == 2)
        snprintf(errbuf, errlen,
                 "%s %.15g cannot be reached: the highest quality (%s) is still too %s", opt,
                 s->target, got, s->kind == MMP_RATE_PSNR ? "low" : "small");
    else if (why == 3)
        snprintf(errbuf, errlen,
                 "%s %.15g not reached: it lies between the files of two lambdas less than "
                 "0.25 %% or 1/256 apart after %d probes; the closest was %s",
                 opt, s->target, s->n, got);
    else
        snprintf(errbuf, errlen, "%s %.15g not reached in %d probes: the closest was %s", opt,
                 s->target, s->n, got);
}

/* The probe kept so far, with its outputs. */
typedef struct kept {
    int index; /* in res->probe, -1: none yet */
    point p;
    uint8_t *buf;
    size_t len;
    mmp_image rec;
    mmp_enc_stats st;
} kept;

/*
 * One search (steps 1 to 4 of ratectl.h) from lambda_q8 q8 with the settings
 * ps, adding its probes to s and res and keeping the best in k. Returns 0,
 * or a negative code of a failed encode; *why as next_q8 sets it.
 */
static int run_search(search *s, mmp_settings *ps, long long q8, kept *k, mmp_ratectl_result *res,
                      log_gate *gate, FILE *trace, const char *prog, int *why, char *errbuf,
                      size_t errlen)
{
    int stall = 0, last_side = -1, interp = 0;
    while (s->n < MMP_RATE_MAX_PROBES && res->probes < MMP_RATE_MAX_PROBES) {
        ps->lambda = q8 / 256.0;
        uint8_t *buf = NULL;
        size_t len = 0;
        mmp_image rec = {0};
        mmp_enc_stats pst;
        const double tp = now();
        int e = s->enc ? s->enc->encode(s->enc->opaque, ps, s->img, &buf, &len, &rec, &pst,
                                        errbuf, errlen)
                       : mmp_encode(ps, s->img, &buf, &len, &rec, &pst, errbuf, errlen);
        gate->first = 0;
        if (e)
            return e;
        mmp_file_info info;
        e = mmp_probe(buf, len, &info, errbuf, errlen);
        if (e) {
            free(buf);
            mmp_image_free(&rec);
            return e;
        }
        point *p = &s->p[s->n];
        p->q8 = q8;
        p->t = t_of(q8);
        p->bytes = len;
        p->bpp = 8.0 * (double)len / s->pixels;
        p->psnr = mmp_psnr(s->img, &rec);
        if (!s->aimed) {
            /* The aim, in the measure of the search. */
            const double hdr = (double)(len - info.payload_len);
            if (s->kind == MMP_RATE_PSNR)
                s->ystar = s->target;
            else
                s->ystar = log(fmax((s->kind == MMP_RATE_BPP ? s->target * s->pixels / 8.0
                                                             : BYTES_AIM * s->target) -
                                        hdr,
                                    0.5));
            s->aimed = 1;
        }
        p->y = s->kind == MMP_RATE_PSNR ? fmin(p->psnr, PSNR_CAP)
                                        : log(fmax((double)info.payload_len, 0.5));
        mmp_ratectl_probe *rp = &res->probe[res->probes];
        rp->lambda = ps->lambda;
        rp->restoration = ps->restoration;
        rp->bytes = len;
        rp->bpp = p->bpp;
        rp->psnr = p->psnr;
        rp->seconds = now() - tp;
        if (trace) {
            char line[160];
            fmt_probe(line, sizeof line, p);
            fprintf(trace, "%s: probe %d: %s%s, %.3f s\n", prog, res->probes + 1, line,
                    ps->restoration ? "" : ", filter off", rp->seconds);
        }
        s->n++;
        res->probes++;
        if (k->index < 0 || better(s, p, &k->p)) {
            free(k->buf);
            mmp_image_free(&k->rec);
            k->buf = buf;
            k->len = len;
            k->rec = rec;
            k->st = pst;
            k->p = *p;
            k->index = res->probes - 1;
        } else {
            free(buf);
            mmp_image_free(&rec);
        }
        if (in_tolerance(s, p))
            return 0;
        /* Two interpolations in a row on one side: bisect next. */
        if (interp) {
            const int side = high(s, p);
            stall = side == last_side ? stall + 1 : 1;
            last_side = side;
        }
        q8 = next_q8(s, stall, &interp, why);
        if (q8 < 0)
            return 0;
    }
    return 0;
}

int mmp_ratectl_encode(const mmp_settings *st, const mmp_cli_encoder *enc, const mmp_image *img,
                       int kind, double target, uint8_t **out, size_t *outlen, mmp_image *recon,
                       mmp_enc_stats *stats, mmp_ratectl_result *res, FILE *trace,
                       const char *prog, char *errbuf, size_t errlen)
{
    const double t0 = now();
    search s = {.kind = kind, .target = target, .img = img, .enc = enc};
    s.pixels = (double)img->width * img->height;
    memset(res, 0, sizeof *res);
    res->chosen = -1;
    *out = NULL;
    *outlen = 0;
    log_gate gate = {.log = st->log, .opaque = st->log_opaque, .first = 1};
    mmp_settings ps = *st;
    ps.log = gated_log;
    ps.log_opaque = &gate;

    kept k = {.index = -1};
    int why = 0;
    int e = run_search(&s, &ps, 10 * 256, &k, res, &gate, trace, prog, &why, errbuf, errlen);
    /* Step 5: the filter's jump stepped over the tolerance; search again
     * without it from the best lambda. */
    if (!e && k.index >= 0 && ps.restoration && !in_tolerance(&s, &k.p) &&
        kind != MMP_RATE_BYTES && res->probes < MMP_RATE_MAX_PROBES) {
        search s2 = s;
        s2.n = 0;
        ps.restoration = 0;
        int why2 = 0;
        e = run_search(&s2, &ps, k.p.q8, &k, res, &gate, trace, prog, &why2, errbuf, errlen);
        if (!e && !meets(&s, &k.p) && why2)
            why = why2;
    }
    res->seconds = now() - t0;
    if (e) {
        free(k.buf);
        mmp_image_free(&k.rec);
        return e;
    }
    if (k.index < 0 || !meets(&s, &k.p)) {
        if (k.index >= 0)
            unreachable(&s, &k.p, why, errbuf, errlen);
        else
            snprintf(errbuf, errlen, "%s: no probe was run", mmp_ratectl_option(kind));
        free(k.buf);
        mmp_image_free(&k.rec);
        return MMP_RATE_UNREACHABLE;
    }
    res->chosen = k.index;
    *out = k.buf;
    *outlen = k.len;
    if (recon)
        *recon = k.rec;
    else
        mmp_image_free(&k.rec);
    if (stats)
        *stats = k.st;
    return 0;
}
