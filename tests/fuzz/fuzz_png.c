/*
 * libFuzzer target: the front ends' image reader (mmp_imagefile_read: PNG
 * through libpng, PAM, PPM, PGM and PBM through libnetpbm, told apart by
 * the first bytes) on arbitrary bytes, read from a memory stream.
 *
 * The reader must return 0 with a consistent image (1 to 4 channels, sizes
 * within the limits, 1 <= maxval <= 65535, every sample <= maxval) or a
 * negative MMP_E* code with a one-line reason and nothing allocated. An
 * image it accepts (of at most RT_MAX_SAMPLES samples) is written back as
 * PAM and, when PNG can hold its maxval, as PNG, to memory streams, and
 * each must read back to the same image: the writers' output is checked by
 * the readers on every input.
 *
 * libpng and libnetpbm are the system's (not instrumented): coverage
 * guides the fuzzer through mmp/cli/ only, and the sanitizers check what
 * our code does with what they return. libpng's error handler longjmps out
 * of it; ASan's leak check at every input shows that nothing is lost on
 * those paths.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/imageio/png.h"
#include "mmp/mmp.h"

#define RT_MAX_SAMPLES (1 << 16)

static void check_error_text(int rc, const char *err)
{
    if (rc >= 0 || rc < MMP_EENGINE)
        abort();
    if (err[0] == '\0' || strchr(err, '\n'))
        abort();
}

static FILE *open_bytes(const uint8_t *data, size_t size)
{
    /* fmemopen() refuses a zero-sized buffer on some C libraries. */
    static const uint8_t empty[1];
    FILE *f = size ? fmemopen((void *)data, size, "rb") : fmemopen((void *)empty, 1, "rb");
    if (f && !size)
        (void)getc(f); /* now at EOF: an empty stream */
    return f;
}

/* img written in fmt and read back must be img. */
static void roundtrip(const mmp_image *img, mmp_file_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    const int rc = mmp_imagefile_write(m, img, fmt);
    fclose(m);
    if (rc)
        abort();
    FILE *f = open_bytes((const uint8_t *)buf, len);
    if (!f) {
        free(buf);
        return;
    }
    mmp_image back;
    char err[512] = "";
    if (mmp_imagefile_read(f, &back, err, sizeof err))
        abort();
    fclose(f);
    free(buf);
    const size_t n = (size_t)img->width * (size_t)img->height * (size_t)img->channels;
    if (back.width != img->width || back.height != img->height ||
        back.channels != img->channels || back.maxval != img->maxval ||
        memcmp(back.pix, img->pix, n * sizeof img->pix[0]) != 0)
        abort();
    mmp_image_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = open_bytes(data, size);
    if (!f)
        return 0;
    mmp_image img;
    char err[512];
    err[0] = '\0';
    int rc = mmp_imagefile_read(f, &img, err, sizeof err);
    fclose(f);
    if (rc) {
        check_error_text(rc, err);
        if (img.pix || img.width || img.height)
            abort();
        return 0;
    }
    if (!img.pix || img.width < 1 || img.height < 1 || img.maxval < 1 || img.maxval > 65535 ||
        img.width > MMP_MAX_DIM || img.height > MMP_MAX_DIM || img.channels < 1 ||
        img.channels > 4 || (long long)img.width * img.height > MMP_MAX_PIXELS)
        abort();
    const size_t n = (size_t)img.width * (size_t)img.height * (size_t)img.channels;
    for (size_t i = 0; i < n; i++)
        if (img.pix[i] > img.maxval)
            abort();
    if (n <= RT_MAX_SAMPLES) {
        roundtrip(&img, MMP_FILE_PAM);
        if (mmp_png_can_hold(img.maxval))
            roundtrip(&img, MMP_FILE_PNG);
    }
    mmp_image_free(&img);
    return 0;
}
