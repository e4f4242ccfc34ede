/*
 * mmp-metrics: the quality of a decoded image against its original, one
 * line of key=value pairs, for scripts/rd-sweep and scripts/compare:
 *
 *     mmp-metrics ORIGINAL DECODED
 *     psnr=38.123456 ms_ssim=0.98765432 ssimulacra2=81.234567
 *
 * psnr is the grey or RGB PSNR (mmp_psnr), ms_ssim and ssimulacra2 those of
 * mmp.h; a metric that the images are too small for prints nan. Any image
 * file the front ends read (PNM, PNG, JPEG, TIFF); both of one size and the
 * same channels. Built beside mmp-enc and mmp-dec, not installed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"

static const char usage[] =
    "usage: mmp-metrics ORIGINAL DECODED\n"
    "prints psnr=DB ms_ssim=X ssimulacra2=X of DECODED against ORIGINAL (nan: too small)\n";

static int read_image(const char *path, mmp_image *img)
{
    char err[256];
    if (mmp_imagefile_read_path(path, img, err, sizeof err) < 0) {
        fprintf(stderr, "mmp-metrics: %s: %s\n", path, err);
        return -1;
    }
    return 0;
}

static void print_value(const char *key, double v, int decimals)
{
    if (isnan(v))
        printf("%s=nan", key);
    else if (isinf(v))
        printf("%s=inf", key);
    else
        printf("%s=%.*f", key, decimals, v);
}

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc != 3) {
        fputs(usage, stderr);
        return 2;
    }
    mmp_image a = {0}, b = {0};
    if (read_image(argv[1], &a) || read_image(argv[2], &b)) {
        mmp_image_free(&a);
        return 1;
    }
    if (a.width != b.width || a.height != b.height ||
        mmp_image_channels(&a) != mmp_image_channels(&b)) {
        fprintf(stderr, "mmp-metrics: %s is %dx%d with %d channels, %s %dx%d with %d\n", argv[1],
                a.width, a.height, mmp_image_channels(&a), argv[2], b.width, b.height,
                mmp_image_channels(&b));
        mmp_image_free(&a);
        mmp_image_free(&b);
        return 1;
    }
    print_value("psnr", mmp_psnr(&a, &b), 6);
    print_value(" ms_ssim", mmp_ms_ssim(&a, &b), 8);
    print_value(" ssimulacra2", mmp_ssimulacra2(&a, &b), 6);
    putchar('\n');
    mmp_image_free(&a);
    mmp_image_free(&b);
    return fflush(stdout) == 0 ? 0 : 1;
}
