/*
 * libFuzzer target: the netpbm reader (mmp_pnm_read, through libnetpbm) on
 * arbitrary bytes, read from a memory stream; the seeds are PGM files
 * (fuzz_png covers the reader that tells PNG and netpbm apart).
 *
 * libnetpbm keeps process-global state (message handlers, the jump buffer
 * that replaces exit() on errors); mmp_pnm_read installs and removes its
 * handlers around every call and restores the previous jump buffer, so
 * calling it over and over in one process is exactly the library's normal
 * use. The reader must return 0 with a consistent image (every sample <=
 * maxval) or a negative MMP_E* code with a one-line reason, and must leave
 * nothing allocated on failure.
 *
 * The encoder must survive any PGM file: the reader's checks above are
 * what it relies on (size limits, 1 <= maxval <= 65535, every sample <=
 * maxval), and fuzz_roundtrip encodes arbitrary images with those
 * properties. With MMP_FUZZ_PGM_ENCODE=1 in the environment, images of at
 * most ENC_MAX_PIXELS pixels read here are also encoded and decoded, and
 * the decoder's output must equal the encoder's reconstruction; it is off
 * by default because one encode (tens of milliseconds per 16x16 block,
 * several times that under the sanitizers) costs as much as a thousand
 * reads.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/imageio/pnm.h"
#include "mmp/mmp.h"

#define ENC_MAX_PIXELS 64

static void check_error_text(int rc, const char *err)
{
    if (rc >= 0 || rc < MMP_EENGINE)
        abort();
    if (err[0] == '\0' || strchr(err, '\n'))
        abort();
}

static void encode_decode(const mmp_image *img, size_t size)
{
    mmp_settings s;
    mmp_default_settings(&s);
    s.lambda = (double)(size % 301);
    s.engine = "seq";
    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_image rec = {0}, dec = {0};
    char err[512] = "";
    int rc = mmp_encode(&s, img, &buf, &len, &rec, NULL, err, sizeof err);
    if (rc)
        abort(); /* every image the reader accepts must encode */
    rc = mmp_decode(buf, len, &dec, err, sizeof err);
    if (rc || dec.width != rec.width || dec.height != rec.height || dec.maxval != rec.maxval ||
        memcmp(dec.pix, rec.pix, sizeof(uint16_t) * (size_t)dec.width * dec.height) != 0)
        abort();
    free(buf);
    mmp_image_free(&rec);
    mmp_image_free(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* fmemopen() refuses a zero-sized buffer on some C libraries. */
    static const uint8_t empty[1];
    FILE *f = size ? fmemopen((void *)data, size, "rb") : fmemopen((void *)empty, 1, "rb");
    if (!f)
        return 0;
    if (!size)
        (void)getc(f); /* now at EOF: an empty stream */
    mmp_image img;
    char err[512];
    err[0] = '\0';
    int rc = mmp_pnm_read(f, &img, err, sizeof err);
    fclose(f);
    if (rc) {
        check_error_text(rc, err);
        if (img.pix || img.width || img.height)
            abort();
        return 0;
    }
    if (!img.pix || img.width < 1 || img.height < 1 || img.maxval < 1 || img.maxval > 65535 ||
        img.width > MMP_MAX_DIM || img.height > MMP_MAX_DIM)
        abort();
    if (img.channels < 1 || img.channels > 4)
        abort();
    size_t n = (size_t)img.width * (size_t)img.height * (size_t)img.channels;
    for (size_t i = 0; i < n; i++)
        if (img.pix[i] > img.maxval)
            abort();
    static int encode = -1;
    if (encode < 0) {
        const char *e = getenv("MMP_FUZZ_PGM_ENCODE");
        encode = e && e[0] == '1';
    }
    if (encode && n <= ENC_MAX_PIXELS && img.channels == 1)
        encode_decode(&img, size);
    mmp_image_free(&img);
    return 0;
}
