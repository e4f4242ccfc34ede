/*
 * mmp_encode from several threads at once (mmp/mmp.h, "Threads"): four
 * threads encode four different images at the same time, each with its
 * own settings (grey through mmp_encode_grey8 on seq, colour on omp with
 * two threads, grey in tiles coded at once, colour and alpha through
 * mmp_encode_rgba8 on auto),
 * twice over, and each file is byte for byte the one the same encode gives
 * alone; meanwhile each thread decodes its file and gets the encoder's
 * reconstruction.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mmp/mmp.h"

#define JOBS 4
#define ROUNDS 2

typedef struct job {
    mmp_image img;
    mmp_settings s;
    int helper;           /* through mmp_encode_grey8 or _rgba8 (its pixels in px) */
    uint8_t *px;
    uint8_t *ref;         /* the file encoded alone */
    size_t rlen;
    mmp_image rec;        /* and its reconstruction */
    uint8_t *out[ROUNDS]; /* the files encoded at once */
    size_t len[ROUNDS];
    int rc[ROUNDS], dec_rc[ROUNDS], dec_same[ROUNDS];
    pthread_barrier_t *start;
} job;

static void make_job(job *j, int k)
{
    memset(j, 0, sizeof *j);
    static const int ws[JOBS] = {48, 40, 256, 33}, hs[JOBS] = {40, 32, 136, 29};
    static const int chs[JOBS] = {1, 3, 1, 4};
    const int w = ws[k], h = hs[k], ch = chs[k];
    assert_int_equal(mmp_image_alloc_channels(&j->img, w, h, ch, 255), 0);
    uint32_t r = 1000u + (uint32_t)k;
    for (int i = 0; i < w * h * ch; i++) {
        r = r * 1103515245u + 12345u;
        const int x = (i / ch) % w, y = (i / ch) / w;
        j->img.pix[i] = (uint16_t)((x * (k + 2) + y * (5 - k) + (i % ch) * 50 +
                                    (int)((r >> 16) % 16)) % 256);
    }
    mmp_default_settings(&j->s);
    j->s.lambda = 20 + 10 * k;
    j->s.speed = 3;
    switch (k) {
    case 0:
        j->s.engine = "seq";
        j->helper = 1;
        break;
    case 1:
        j->s.engine = mmp_engine_exists("omp") ? "omp" : "seq";
        j->s.threads = 2;
        break;
    case 2:
        j->s.engine = mmp_engine_exists("omp") ? "omp" : "seq";
        j->s.threads = 2;
        j->s.tile_width = j->s.tile_height = 128;
        break;
    default:
        j->s.engine = "auto";
        j->s.threads = 1;
        j->helper = 1;
        break;
    }
    if (j->helper) {
        j->px = malloc((size_t)w * h * (size_t)ch);
        assert_non_null(j->px);
        for (int i = 0; i < w * h * ch; i++)
            j->px[i] = (uint8_t)j->img.pix[i];
    }
}

static int encode_job(job *j, uint8_t **out, size_t *len, mmp_image *rec)
{
    const int w = j->img.width, h = j->img.height;
    if (j->helper)
        return j->img.channels == 1 ? mmp_encode_grey8(j->px, w, h, w, &j->s, out, len)
                                    : mmp_encode_rgba8(j->px, w, h, w * 4, &j->s, out, len);
    return mmp_encode(&j->s, &j->img, out, len, rec, NULL, NULL, 0);
}

static void *run_job(void *arg)
{
    job *j = arg;
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(j->start);
        j->rc[round] = encode_job(j, &j->out[round], &j->len[round], NULL);
        mmp_image dec = {0};
        j->dec_rc[round] = j->rc[round] ? -1 : mmp_decode(j->out[round], j->len[round], &dec,
                                                          NULL, 0);
        j->dec_same[round] =
            !j->dec_rc[round] && dec.width == j->rec.width && dec.height == j->rec.height &&
            mmp_image_channels(&dec) == mmp_image_channels(&j->rec) &&
            memcmp(dec.pix, j->rec.pix,
                   sizeof(uint16_t) * (size_t)dec.width * dec.height *
                       (size_t)mmp_image_channels(&dec)) == 0;
        mmp_image_free(&dec);
    }
    return NULL;
}

static void test_concurrent_encodes(void **state)
{
    (void)state;
    job jobs[JOBS];
    for (int k = 0; k < JOBS; k++) {
        make_job(&jobs[k], k);
        /* Alone first: the reference bytes and reconstruction. */
        assert_int_equal(encode_job(&jobs[k], &jobs[k].ref, &jobs[k].rlen, &jobs[k].rec), 0);
        if (jobs[k].helper)
            assert_int_equal(mmp_decode(jobs[k].ref, jobs[k].rlen, &jobs[k].rec, NULL, 0), 0);
    }
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, JOBS), 0);
    pthread_t th[JOBS];
    for (int k = 0; k < JOBS; k++) {
        jobs[k].start = &start;
        assert_int_equal(pthread_create(&th[k], NULL, run_job, &jobs[k]), 0);
    }
    for (int k = 0; k < JOBS; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&start);
    for (int k = 0; k < JOBS; k++) {
        job *j = &jobs[k];
        for (int round = 0; round < ROUNDS; round++) {
            if (j->rc[round])
                fail_msg("job %d, round %d: %s", k, round, mmp_strerror(j->rc[round]));
            if (j->len[round] != j->rlen || memcmp(j->out[round], j->ref, j->rlen) != 0)
                fail_msg("job %d (%s), round %d: %zu bytes at once, %zu alone, not the same", k,
                         j->s.engine, round, j->len[round], j->rlen);
            assert_int_equal(j->dec_rc[round], 0);
            assert_true(j->dec_same[round]);
            mmp_free(j->out[round]);
        }
        print_message("job %d: %dx%d, %d channels, %s: %zu bytes, the same at once as alone\n", k,
                      j->img.width, j->img.height, mmp_image_channels(&j->img), j->s.engine,
                      j->rlen);
        mmp_free(j->ref);
        mmp_image_free(&j->rec);
        mmp_image_free(&j->img);
        free(j->px);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_encodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
