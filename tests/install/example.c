/*
 * A program of a library user, built by make check-install against an
 * installed copy (pkg-config --cflags --libs mmp): it sees nothing of the
 * source tree but <mmp.h>. Encodes a small image, decodes the file, checks
 * that the decoder rebuilds the encoder's reconstruction; encodes 8-bit RGB
 * rows with a stride through mmp_encode_rgb8 losslessly and gets them back
 * through mmp_decode_rgb8; stops an encode from its progress callback
 * (MMP_ECANCELED). Prints one line and exits 0, or says what went wrong
 * and exits 1.
 */
#include <mmp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stop_at_once(void *opaque, int done, int total)
{
    (void)done;
    (void)total;
    ++*(int *)opaque;
    return 1;
}

/* 8-bit RGB of 19 x 7 pixels in rows of 64 bytes, there and back. */
static int rgb8_round_trip(void)
{
    uint8_t rows[7 * 64], *file = NULL, *back = NULL;
    for (int i = 0; i < 7 * 64; i++)
        rows[i] = (uint8_t)(i * 37 % 251);
    mmp_settings st;
    mmp_default_settings(&st);
    st.max_error = 0;
    size_t len = 0;
    int w = 0, h = 0, rc = mmp_encode_rgb8(rows, 19, 7, 64, &st, &file, &len);
    if (!rc)
        rc = mmp_decode_rgb8(file, len, &w, &h, &back);
    int same = !rc && w == 19 && h == 7;
    for (int y = 0; same && y < 7; y++)
        same = memcmp(back + y * 19 * 3, rows + y * 64, 19 * 3) == 0;
    if (!same)
        fprintf(stderr, "example: 8-bit RGB round trip: %s\n", rc ? mmp_strerror(rc) : "differs");
    mmp_free(file);
    mmp_free(back);
    return same;
}

int main(void)
{
    mmp_image img, rec = {0}, dec = {0};
    if (mmp_image_alloc(&img, 37, 21, 255))
        return 1;
    for (int y = 0; y < img.height; y++)
        for (int x = 0; x < img.width; x++)
            img.pix[y * img.width + x] = (uint16_t)((x * 7 + y * 11) % 256);
    mmp_settings st;
    mmp_default_settings(&st);
    st.lambda = 75;
    uint8_t *file = NULL;
    size_t len = 0;
    char why[256];
    if (mmp_encode(&st, &img, &file, &len, &rec, NULL, why, sizeof why) ||
        mmp_decode(file, len, &dec, why, sizeof why)) {
        fprintf(stderr, "example: %s\n", why);
        return 1;
    }
    const int same = memcmp(rec.pix, dec.pix, sizeof(uint16_t) * 37 * 21) == 0;
    int calls = 0;
    uint8_t *none = NULL;
    size_t none_len = 0;
    st.progress = stop_at_once;
    st.progress_opaque = &calls;
    const int cancelled = mmp_encode(&st, &img, &none, &none_len, NULL, NULL, why, sizeof why);
    if (cancelled != MMP_ECANCELED || calls != 1 || none) {
        fprintf(stderr, "example: the progress callback did not cancel (%d, %d calls)\n",
                cancelled, calls);
        return 1;
    }
    if (!rgb8_round_trip())
        return 1;
    printf("example: mmp %s, engines %s: %zu bytes, PSNR %.2f dB, decoder %s the reconstruction\n",
           MMP_VERSION_STRING, mmp_engine_names(), len, mmp_psnr(&img, &dec),
           same ? "equals" : "DIFFERS FROM");
    mmp_free(file);
    mmp_image_free(&img);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
    return same ? 0 : 1;
}
