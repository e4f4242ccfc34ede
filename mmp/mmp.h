/*
 * mmp: the public API of the MMP image codec.
 *
 * Encode a grey image to an .mmp file in memory, and decode it back. Every
 * function returns 0 or a negative MMP_E* code (common/error.h); when given an
 * error buffer it also writes a one-line reason there.
 */
#ifndef MMP_MMP_H
#define MMP_MMP_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/image.h"

#define MMP_VERSION_STRING "0.1.0"

/* Encoder settings; fill with mmp_default_settings() then change fields. */
typedef struct mmp_settings {
    double lambda;          /* Lagrangian multiplier, 0..1e6 (default 10) */
    const char *engine;     /* search engine name (default "seq") */
    int threads;            /* engine threads, 0 = all available (default 0) */
    int dict_cap;           /* dictionary elements per scale (default MMP_DEFAULT_DICT_CAP) */
    double redundancy;      /* redundancy threshold: a new pattern joins a scale only if its
                             * mean squared distance per pixel to every element there exceeds
                             * this; < 0 (default) derives it from lambda */
    int verbose;            /* 0 quiet; 1 more detail on stderr */
    /* Called after each block row when set (progress bars). */
    void (*progress)(void *opaque, int done, int total);
    void *progress_opaque;
} mmp_settings;

#define MMP_DEFAULT_DICT_CAP 1024

void mmp_default_settings(mmp_settings *s);

/* Figures from one encode. */
typedef struct mmp_enc_stats {
    double seconds;          /* wall time of the encode */
    uint64_t blocks;
    uint64_t dict_elements;  /* summed over scales at the end */
} mmp_enc_stats;

/*
 * Encode `img`. On success *out (owned by the caller, free()) holds the whole
 * .mmp file of *outlen bytes; if `recon` is not NULL it receives the
 * encoder's reconstruction (the caller frees it with mmp_image_free), which
 * the decoder reproduces exactly. `stats` may be NULL.
 */
int mmp_encode(const mmp_settings *s, const mmp_image *img, uint8_t **out, size_t *outlen,
               mmp_image *recon, mmp_enc_stats *stats, char *errbuf, size_t errlen);

/*
 * Decode a whole .mmp file held in buf[0..len). On success `img` holds the
 * image (free with mmp_image_free). Hostile input yields an error, never a
 * crash, a hang or an unbounded allocation.
 */
int mmp_decode(const uint8_t *buf, size_t len, mmp_image *img, char *errbuf, size_t errlen);

#endif
