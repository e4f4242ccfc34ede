/*
 * A program of a library user, built by make check-install against an
 * installed copy (pkg-config --cflags --libs mmp): it sees nothing of the
 * source tree but <mmp.h>. Encodes a small image, decodes the file, checks
 * that the decoder rebuilds the encoder's reconstruction; stops an encode
 * from its progress callback (MMP_ECANCELED). Prints one line and exits 0, or says what went wrong
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
    printf("example: mmp %s, engines %s: %zu bytes, PSNR %.2f dB, decoder %s the reconstruction\n",
           MMP_VERSION_STRING, mmp_engine_names(), len, mmp_psnr(&img, &dec),
           same ? "equals" : "DIFFERS FROM");
    mmp_free(file);
    mmp_image_free(&img);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
    return same ? 0 : 1;
}
