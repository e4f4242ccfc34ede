/* The encoder driver: blocks in raster order, search, coding, updates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/container.h"
#include "mmp/engine.h"
#include "mmp/mmp.h"
#include "mmp/search.h"
#include "mmp/syntax.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The padded original: edge replication to a multiple of the block size. */
static int32_t *pad_original(const mmp_image *img, int pw, int ph)
{
    int32_t *o = malloc((size_t)pw * ph * sizeof(int32_t));
    if (!o)
        return NULL;
    for (int y = 0; y < ph; y++) {
        int sy = y < img->height ? y : img->height - 1;
        for (int x = 0; x < pw; x++) {
            int sx = x < img->width ? x : img->width - 1;
            o[(long)y * pw + x] = img->pix[(long)sy * img->width + sx];
        }
    }
    return o;
}

int mmp_encode(const mmp_settings *st, const mmp_image *img, uint8_t **out, size_t *outlen,
               mmp_image *recon, mmp_enc_stats *stats, char *errbuf, size_t errlen)
{
    double t0 = now_seconds();
    *out = NULL;
    *outlen = 0;
    if (!img || !img->pix || img->width < 1 || img->height < 1 || img->maxval < 1 ||
        img->maxval > 65535)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "invalid image");
    if (img->width > MMP_MAX_DIM || img->height > MMP_MAX_DIM ||
        (long long)img->width * img->height > MMP_MAX_PIXELS)
        return mmp_error(errbuf, errlen, MMP_ELIMIT, "image too large: %dx%d", img->width, img->height);
    if (!(st->lambda >= 0 && st->lambda <= 1e6))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "lambda must be between 0 and 1000000");
    if (!(st->redundancy < 0 || st->redundancy <= 65535.0))
        return mmp_error(errbuf, errlen, MMP_EINVAL, "redundancy threshold must be between 0 and 65535");
    if (st->dict_cap < MMP_MIN_DICT_CAP || st->dict_cap > MMP_MAX_DICT_CAP)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "dictionary size must be between %d and %d",
                    MMP_MIN_DICT_CAP, MMP_MAX_DICT_CAP);
    const mmp_engine_ops *eng = mmp_engine_find(st->engine ? st->engine : "seq");
    if (!eng)
        return mmp_error(errbuf, errlen, MMP_EINVAL, "unknown engine '%s' (known: %s)", st->engine,
                    mmp_engine_names());

    const uint32_t lambda_q8 = (uint32_t)llround(st->lambda * 256.0);
    mmp_header hdr = {0};
    hdr.width = img->width;
    hdr.height = img->height;
    hdr.maxval = img->maxval;
    hdr.planes = 1;
    hdr.log2_block = MMP_LOG2B;
    hdr.log2_pmin = MMP_LOG2_PMIN;
    hdr.dict_cap = st->dict_cap;
    hdr.redund_q4 = st->redundancy < 0 ? mmp_redund_for_lambda(lambda_q8)
                                        : (uint32_t)llround(st->redundancy * 16.0);
    hdr.lambda_q8 = lambda_q8;

    mmp_codec c;
    int err = mmp_codec_init(&c, img->width, img->height, img->maxval, st->dict_cap, hdr.redund_q4);
    if (err)
        return mmp_error(errbuf, errlen, err, "cannot set up the encoder: %s", mmp_strerror(err));
    const int pw = c.plane.width, ph = c.plane.height, bw = pw / MMP_B, bh = ph / MMP_B;
    int32_t *orig = pad_original(img, pw, ph);
    int32_t *tok = malloc(sizeof(int32_t) * MMP_MAX_BLOCK_TOKENS);
    void *es = NULL;
    mmp_search *search = NULL;
    mmp_rc_enc rc;
    mmp_rc_enc_init(&rc);
    if (!orig || !tok) {
        err = mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
        goto done;
    }
    mmp_engine_config ecfg = {.threads = st->threads, .verbose = st->verbose};
    err = eng->create(&es, &ecfg);
    if (err && st->engine && strcmp(st->engine, "auto") == 0 && eng != &mmp_engine_seq) {
        /* -e auto: a GPU that cannot be used is not fatal; the CPU engines are. */
        const mmp_engine_ops *cpu = mmp_engine_find("omp");
        fprintf(stderr, "mmp: warning: the %s engine failed to start (%s); using %s\n", eng->name,
                mmp_strerror(err), cpu ? cpu->name : "seq");
        eng = cpu ? cpu : &mmp_engine_seq;
        es = NULL;
        err = eng->create(&es, &ecfg);
    }
    if (err) {
        mmp_error(errbuf, errlen, err, "cannot start the %s engine: %s", eng->name, mmp_strerror(err));
        goto done;
    }
    /* The dictionary updates use as many threads as the engine's search. */
    c.threads = eng->concurrency ? eng->concurrency(es) : 1;
    err = mmp_search_create(&search, &c, orig, eng, es, lambda_q8);
    if (err) {
        mmp_error(errbuf, errlen, err, "out of memory");
        goto done;
    }
    int32_t chosen[MMP_B * MMP_B];
    double search_s = 0, code_s = 0;
    for (int by = 0; by < bh; by++) {
        for (int bx = 0; bx < bw; bx++) {
            int ntok = 0;
            const double ts = st->verbose ? now_seconds() : 0;
            err = mmp_search_block(search, by, bx, tok, &ntok);
            const double tc = st->verbose ? now_seconds() : 0;
            search_s += tc - ts;
            if (err) {
                mmp_error(errbuf, errlen, err, "search failed in block %d,%d: %s", by, bx,
                     mmp_strerror(err));
                goto done;
            }
            /* Code the decisions through the decoder's own path, from the
             * availability the decoder will have, and check that it rebuilds
             * exactly what the search chose. */
            for (int y = 0; y < MMP_B; y++) {
                long row = (long)(by * MMP_B + y) * pw + bx * MMP_B;
                memcpy(chosen + y * MMP_B, c.plane.pix + row, sizeof(chosen[0]) * MMP_B);
                memset(c.plane.avail + row, 0, MMP_B);
            }
            mmp_symbols io = {.encoding = 1, .enc = &rc, .tok = tok, .ntok = ntok};
            err = mmp_code_block(&c, &io, by, bx);
            for (int y = 0; y < MMP_B && !err; y++)
                if (memcmp(chosen + y * MMP_B, c.plane.pix + (long)(by * MMP_B + y) * pw + bx * MMP_B,
                           sizeof(chosen[0]) * MMP_B))
                    err = MMP_EINVAL;
            if (err) {
                mmp_error(errbuf, errlen, err, "internal error: block %d,%d does not code as searched",
                     by, bx);
                goto done;
            }
            mmp_apply_updates(&c);
            if (st->verbose)
                code_s += now_seconds() - tc;
        }
        if (st->progress)
            st->progress(st->progress_opaque, by + 1, bh);
    }
    if (st->verbose)
        fprintf(stderr, "mmp-enc: search %.3f s, coding and dictionary updates %.3f s\n", search_s,
                code_s);
    if (mmp_rc_enc_finish(&rc)) {
        err = mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
        goto done;
    }
    hdr.payload_len = rc.len;
    err = mmp_container_build(&hdr, rc.buf, rc.len, out, outlen);
    if (err) {
        mmp_error(errbuf, errlen, err, "out of memory");
        goto done;
    }
    if (recon) {
        err = mmp_image_alloc(recon, img->width, img->height, img->maxval);
        if (err) {
            free(*out);
            *out = NULL;
            mmp_error(errbuf, errlen, err, "out of memory");
            goto done;
        }
        for (int y = 0; y < img->height; y++)
            for (int x = 0; x < img->width; x++)
                recon->pix[(long)y * img->width + x] = (uint16_t)c.plane.pix[(long)y * pw + x];
    }
    if (stats) {
        stats->blocks = (uint64_t)bw * bh;
        stats->dict_elements = 0;
        for (int k = 0; k < MMP_NSCALES; k++)
            stats->dict_elements += c.dict.n[k];
        stats->seconds = now_seconds() - t0;
    }
done:
    mmp_search_destroy(search);
    if (es)
        eng->destroy(es);
    mmp_rc_enc_free(&rc);
    free(tok);
    free(orig);
    mmp_codec_free(&c);
    return err;
}
