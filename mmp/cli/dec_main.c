/* mmp-dec: decode an .mmp file to an image file (PGM, PPM, PAM or PNG). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mmp/cli/cli.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"

static const char *prog = "mmp-dec";

/* --help on stdout; exit status 1 when it cannot be written. */
static int usage(FILE *f)
{
    fprintf(f, "Usage: mmp-dec [options] IN.mmp [-o OUT]\n"
               "       mmp-dec --info IN.mmp\n"
               "Decode an MMP file to an image file. OUT ending in .png is PNG (8 or 16\n"
               "bits, sBIT when maxval is 2^k-1 below that; a maxval that is not 2^k-1 is an\n"
               "error: PNG cannot hold it exactly), .pgm PGM (grey images only), .ppm PPM\n"
               "(RGB only), .pam PAM; any other name, and '-' (stdout), PGM for grey, PPM\n"
               "for RGB, PAM for an image with alpha. Without -o the output is IN with the\n"
               "extension of that kind (.pgm, .ppm, .pam) in place of .mmp ('-' as IN\n"
               "reads stdin and then writes stdout).\n"
               "\n"
               "  -o, --output FILE    output image ('-' for stdout)\n"
               "      --info           print the file's header fields on stdout, one\n"
               "                       name=value a line, and decode nothing (no -o, no\n"
               "                       --stats); the file is checked as decoding checks it\n"
               "                       before it starts (header, length, CRC); max_error is\n"
               "                       the bound on every sample's error (0: lossless,\n"
               "                       none: lossy)\n"
               "      --stats          print one line: bytes, seconds, size\n"
               "  -v, --verbose        more detail on stderr\n"
               "  -q, --quiet          nothing but errors\n"
               "  -h, --help           this help\n"
               "      --version        version\n"
               "\n"
               "IN and OUT must be different files. A regular output file is replaced only\n"
               "once complete, keeping its mode; one with several hard links is refused (not\n"
               "detached, not changed in place). A device, FIFO or socket is written in\n"
               "place; a symbolic link is followed. Exit status: 0 success, 1 failure, 2\n"
               "usage error.\n");
    return mmp_cli_stdout_done(prog);
}


/* IN with the extension of the image's kind in place of .mmp. */
static char *derive_name(const char *in_path, const mmp_image *img)
{
    size_t n = strlen(in_path);
    char *name = malloc(n + 5);
    if (!name)
        return NULL;
    memcpy(name, in_path, n + 1);
    if (n > 4 && strcmp(name + n - 4, ".mmp") == 0)
        name[n - 4] = 0;
    strcat(name, mmp_imagefile_extension(mmp_imagefile_kind_format(img)));
    return name;
}

/* "name=" and num / 2^shift in decimal, exactly (a %g would round large
 * values): k / 2^shift = k * 5^shift / 10^shift, so the fraction has at most
 * `shift` digits, printed without trailing zeros. shift <= 8. */
static void print_fixed(const char *name, uint64_t num, int shift)
{
    uint64_t frac = (num & ((1u << shift) - 1)), pow5 = 1;
    for (int i = 0; i < shift; i++)
        pow5 *= 5;
    frac *= pow5;
    int digits = shift;
    while (digits > 0 && frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    if (digits)
        printf("%s=%llu.%0*llu\n", name, (unsigned long long)(num >> shift), digits,
               (unsigned long long)frac);
    else
        printf("%s=%llu\n", name, (unsigned long long)(num >> shift));
}

/* --info: the header fields, after the checks decoding makes before it
 * starts, with the same messages. */
static int print_info(const char *in_path)
{
    char err[512];
    uint8_t *buf = NULL;
    size_t len = 0;
    mmp_file_info fi;
    int e = mmp_cli_read_file(in_path, (size_t)MMP_MAX_FILE_BYTES, &buf, &len, err, sizeof err);
    if (e) {
        mmp_cli_error(prog, "%s", err);
        return MMP_EXIT_FAILURE;
    }
    e = mmp_probe(buf, len, &fi, err, sizeof err);
    free(buf);
    if (e) {
        mmp_cli_error(prog, "%s: %s", strcmp(in_path, "-") ? in_path : "standard input", err);
        return MMP_EXIT_FAILURE;
    }
    printf("version=%d\nplanes=%d\nlog2_block=%d\nlog2_pmin=%d\n", fi.version, fi.planes,
           fi.log2_block, fi.log2_pmin);
    printf("width=%d\nheight=%d\nmaxval=%d\ndict_cap=%d\n", fi.width, fi.height, fi.maxval,
           fi.dict_cap);
    printf("redund_q4=%lu\n", (unsigned long)fi.redund_q4);
    print_fixed("redundancy", fi.redund_q4, 4);
    printf("lambda_q8=%lu\n", (unsigned long)fi.lambda_q8);
    print_fixed("lambda", fi.lambda_q8, 8);
    printf("payload_len=%llu\n", (unsigned long long)fi.payload_len);
    printf("order=%s\n", fi.order == MMP_ORDER_WAVEFRONT ? "wavefront" : "raster");
    static const char *const transform[] = {"none", "ycocg-r", "ycbcr", "rgb"};
    static const char *const alpha[] = {"none", "exact", "mmp"};
    static const char *const residual[] = {"none", "mmp", "alone"};
    printf("transform=%s\nchroma=%s\nalpha=%s\n", transform[fi.transform],
           fi.chroma == MMP_CHROMA_420 ? "420" : "444", alpha[fi.alpha]);
    /* The bound on every decoded sample's error: lossless, near-lossless or none. */
    printf("residual=%s\n", residual[fi.residual]);
    if (fi.max_error < 0)
        printf("max_error=none\n");
    else
        printf("max_error=%d\n", fi.max_error);
    printf("dct=%s\n", fi.dct ? "on" : "off");
    printf("crc=0x%08lx\n", (unsigned long)fi.crc);
    return mmp_cli_stdout_done(prog);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    enum { OPT_STATS = 256, OPT_VERSION, OPT_INFO };
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'}, {"stats", no_argument, 0, OPT_STATS},
        {"info", no_argument, 0, OPT_INFO},
        {"verbose", no_argument, 0, 'v'},      {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},         {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0}};
    const char *out_path = NULL;
    int verbose = 0, want_stats = 0, info = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:vqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out_path = optarg;
            break;
        case OPT_STATS:
            want_stats = 1;
            break;
        case OPT_INFO:
            info = 1;
            break;
        case 'v':
            verbose = 1;
            break;
        case 'q':
            verbose = 0;
            break;
        case 'h':
            return usage(stdout);
        case OPT_VERSION:
            printf("mmp-dec %s\n", MMP_VERSION_STRING);
            return mmp_cli_stdout_done(prog);
        case ':':
            mmp_cli_error(prog, "option '%s' needs a value", argv[optind - 1]);
            return MMP_EXIT_USAGE;
        default:
            mmp_cli_error(prog, "unknown option '%s' (see --help)", argv[optind - 1]);
            return MMP_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        mmp_cli_error(prog, "expected one input file (see --help)");
        return MMP_EXIT_USAGE;
    }
    const char *in_path = argv[optind];
    if (info) {
        if (out_path || want_stats) {
            mmp_cli_error(prog, "--info decodes nothing: it takes no %s",
                          out_path ? "-o" : "--stats");
            return MMP_EXIT_USAGE;
        }
        return print_info(in_path);
    }
    /* Without -o the name depends on the kind of image decoded: it is
     * checked once the image is there. */
    const int derive = !out_path && strcmp(in_path, "-") != 0;
    if (!out_path && !derive)
        out_path = "-";
    char *derived = NULL;
    char err[512];
    mmp_image img = {0};
    mmp_image_out io = {.img = &img, .fmt = MMP_FILE_PGM};
    mmp_cli_output out = {.path = out_path, .what = "output", .write = mmp_imagefile_write_out, .opaque = &io};
    int e = 0;
    if (!derive && (e = mmp_cli_outputs_check(in_path, &out, 1, err, sizeof err)) != 0) {
        mmp_cli_error(prog, "%s", err);
        mmp_cli_outputs_free(&out, 1);
        return e == MMP_EINVAL ? MMP_EXIT_USAGE : MMP_EXIT_FAILURE;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    double t0 = now_seconds();
    /* Its messages name the file; the decoder's do not. */
    e = mmp_cli_read_file(in_path, (size_t)MMP_MAX_FILE_BYTES, &buf, &len, err, sizeof(err));
    if (e) {
        mmp_cli_error(prog, "%s", err);
    } else if ((e = mmp_decode(buf, len, &img, err, sizeof(err))) != 0) {
        mmp_cli_error(prog, "%s: %s", strcmp(in_path, "-") ? in_path : "standard input", err);
    }
    double secs = now_seconds() - t0;
    int usage_error = 0;
    if (!e && derive) {
        derived = derive_name(in_path, &img);
        if (!derived) {
            e = MMP_ENOMEM;
            mmp_cli_error(prog, "out of memory");
        } else {
            out_path = out.path = derived;
            if ((e = mmp_cli_outputs_check(in_path, &out, 1, err, sizeof err)) != 0) {
                mmp_cli_error(prog, "%s", err);
                usage_error = e == MMP_EINVAL;
            }
        }
    }
    if (!e && (e = mmp_imagefile_format(out_path, &img, &io.fmt, err, sizeof err)) != 0)
        mmp_cli_error(prog, "%s: %s", strcmp(out_path, "-") ? out_path : "standard output", err);
    if (!e) {
        e = mmp_cli_outputs_write(&out, 1, err, sizeof err);
        if (e)
            mmp_cli_error(prog, "%s", err);
    }
    mmp_cli_outputs_free(&out, 1);
    if (!e) {
        if (verbose)
            fprintf(stderr, "%s: %dx%d maxval %d, %zu bytes, %.3f s\n", prog, img.width,
                    img.height, img.maxval, len, secs);
        if (want_stats) {
            FILE *sf = strcmp(out_path, "-") == 0 ? stderr : stdout;
            fprintf(sf, "bytes=%zu seconds=%.3f width=%d height=%d\n", len, secs, img.width,
                    img.height);
        }
    }
    free(buf);
    free(derived);
    mmp_image_free(&img);
    if (e)
        return usage_error ? MMP_EXIT_USAGE : MMP_EXIT_FAILURE;
    return mmp_cli_stdout_done(prog);
}
