/*
 * Rate control of mmp-enc (--target-bpp, --target-psnr, --max-bytes): the
 * lambda that meets a target, found by encoding the image at a few lambdas
 * (the probes) through the public API alone (mmp_encode, or an encoder
 * with its contract: mmp-enc-mpi's).
 *
 * The search runs on the 1/256 grid of lambda that the header stores
 * (lambda_q8 = lambda * 256, 0 to 256000000), in log lambda, with a
 * measured quantity y that falls as lambda rises: the log of the payload
 * bytes for the rate targets, the PSNR for the quality target.
 *
 *  1. The first probe is lambda 10 (the default).
 *  2. While every probe lies on one side of the target, the next one is
 *     extrapolated along the slope of the last two probes (a prior slope
 *     after the first: -0.7 in log bytes, -3 dB per unit of log lambda),
 *     25 % beyond the predicted point so as to bracket it, by 0.1 to 5 in
 *     log lambda (x1.1 to x148), clamped to lambda 0 and 1000000.
 *  3. Once bracketed, the next probe interpolates linearly (regula falsi)
 *     between the nearest probes on either side, kept 10 % inside the
 *     bracket; bisection instead when the previous two interpolations fell
 *     on the same side (the Illinois stall) or when the measure is not
 *     monotone between the bracket's ends.
 *  4. It stops at the first probe within tolerance, when the bracket holds
 *     no untried lambda_q8 or is narrower than 0.25 % (the measure jumps
 *     there rather than moves), when an end of the range (lambda 0 or 1000000)
 *     shows the target out of reach, or after MMP_RATE_MAX_PROBES probes.
 *  5. For the bpp and PSNR targets, when no probe is within tolerance and
 *     the restoration filter is on: the same search again, from the best
 *     probe's lambda, with the filter off (settings.restoration = 0), with
 *     the probes left. The filter's own decision jumps (a plane's filter
 *     is kept only when it pays for its bytes, so PSNR and rate step by
 *     its gain and its size at some lambda, a few tenths of a dB on small
 *     images); without it the measure follows lambda, up to the jumps of
 *     the dictionary's adaptation (below).
 *     The result is chosen among the probes of both searches.
 *
 * Rate is not strictly monotone in lambda (the dictionary adapts), so the
 * result is chosen among all probes by the rule of the target, which is
 * checked again on the bytes kept, never assumed:
 *
 *  - bytes (--max-bytes N): the largest file of at most N bytes; none: the
 *    target is out of reach. Stops on a file of 97 % to 100 % of N (the
 *    search aims at 98.5 %).
 *  - bpp (--target-bpp X): the closest file within 3 % of X, not over X
 *    where one is; none within 3 %: out of reach.
 *  - psnr (--target-psnr Y): the smallest file whose PSNR is within
 *    0.05 dB of Y, else the smallest whose PSNR is above (a target below
 *    what lambda 1000000 gives), none: out of reach. Stops on a PSNR
 *    within 0.05 dB of Y. (A probe of fewer bytes and a higher PSNR than
 *    the one chosen may exist: the dictionary's adaptation makes PSNR jump
 *    by 0.1 to 0.3 dB between neighbouring lambdas; the target asked for
 *    wins over it.)
 *
 * The file kept is the chosen probe's own bytes (no final encode): with the
 * same settings, mmp-enc -l LAMBDA (the lambda printed) writes the same
 * file. Every probe runs at the settings asked (no cheaper preset for
 * the probes).
 */
#ifndef MMP_CLI_RATECTL_H
#define MMP_CLI_RATECTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mmp/mmp.h"

/* The targets. */
#define MMP_RATE_NONE 0
#define MMP_RATE_BYTES 1 /* --max-bytes: a ceiling on the file's bytes */
#define MMP_RATE_BPP 2   /* --target-bpp: bits per pixel, within MMP_RATE_BPP_TOL */
#define MMP_RATE_PSNR 3  /* --target-psnr: dB, at least target - MMP_RATE_PSNR_TOL */

#define MMP_RATE_MAX_PROBES 12
#define MMP_RATE_BPP_TOL 0.03    /* relative */
#define MMP_RATE_PSNR_TOL 0.05   /* dB */
#define MMP_RATE_BYTES_FILL 0.97 /* --max-bytes stops on a file this full */

/* mmp_ratectl_encode's return when the target cannot be met (errbuf says what
 * was reachable); mmp_encode's negative codes pass through. */
#define MMP_RATE_UNREACHABLE 1

/* An encoder with mmp_encode's contract, called with its opaque pointer:
 * another way to the same bytes (mmp-enc-mpi's spreads the tiles over
 * processes). With late_outputs set, the outputs' temporary files are
 * made only once the encode is done (mmp_cli_output.late): its process
 * may be ended without its handlers while it encodes. */
typedef struct mmp_cli_encoder {
    int (*encode)(void *opaque, const mmp_settings *s, const mmp_image *img, uint8_t **out,
                  size_t *outlen, mmp_image *recon, mmp_enc_stats *stats, char *errbuf,
                  size_t errlen);
    void *opaque;
    int late_outputs;
} mmp_cli_encoder;

/* One probe. */
typedef struct mmp_ratectl_probe {
    double lambda; /* lambda_q8 / 256.0 */
    int restoration; /* the settings' restoration (0 in step 5's probes) */
    size_t bytes;
    double bpp;
    double psnr; /* INFINITY when lossless */
    double seconds;
} mmp_ratectl_probe;

typedef struct mmp_ratectl_result {
    int probes;                                   /* encodes run */
    int chosen;                                   /* index of the probe kept */
    mmp_ratectl_probe probe[MMP_RATE_MAX_PROBES]; /* in the order run */
    double seconds;                               /* wall time of the whole search */
} mmp_ratectl_result;

/*
 * Encode `img` with the settings `s` at the lambda that meets `target` of
 * `kind` (MMP_RATE_*; s->lambda is ignored), each probe through `enc`
 * (NULL: mmp_encode). On success returns 0 and, like
 * mmp_encode, *out, *outlen, *recon (when not NULL) and *stats of the probe
 * kept, with its lambda in res->probe[res->chosen]. When `trace` is not
 * NULL each probe is printed there as one line "PROG: probe N: ...".
 * s->log gets the library's messages of the first probe only (the others
 * would repeat them), errors always. Returns MMP_RATE_UNREACHABLE with one
 * line in errbuf when no probe meets the target, or a negative MMP_E*
 * code of a failed encode; *out is NULL then.
 */
int mmp_ratectl_encode(const mmp_settings *s, const mmp_cli_encoder *enc, const mmp_image *img,
                       int kind, double target, uint8_t **out, size_t *outlen, mmp_image *recon,
                       mmp_enc_stats *stats, mmp_ratectl_result *res, FILE *trace,
                       const char *prog, char *errbuf, size_t errlen);

/* The value of the option of `kind`: --max-bytes a whole number of bytes
 * from 1, --target-bpp a number above 0 up to 64, --target-psnr above 0 up
 * to 1000 dB. Returns 0, or -1 when arg is not one. */
int mmp_ratectl_parse(int kind, const char *arg, double *value);

/* The option that sets `kind` ("--target-bpp"...). */
const char *mmp_ratectl_option(int kind);

#endif
