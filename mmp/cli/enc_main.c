/* mmp-enc: encode an image file (PNG, PAM, PPM, PGM) to an .mmp file. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmp/cli/cli.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/cli/ratectl.h"
#include "mmp/mmp.h"

static const char *prog = "mmp-enc";

/* --help on stdout; exit status 1 when it cannot be written. */
static int usage(FILE *f)
{
    fprintf(f,
            "Usage: mmp-enc [options] IN OUT.mmp\n"
            "Encode an image with MMP. '-' is stdin or stdout. IN is told by its first\n"
            "bytes, not its name: PNG (grey, grey+alpha, RGB, RGBA, palette, 1 to 16\n"
            "bits, interlaced or not; a palette becomes 8-bit RGB, with alpha when tRNS\n"
            "gives transparency), PAM (GRAYSCALE, GRAYSCALE_ALPHA, RGB, RGB_ALPHA,\n"
            "BLACKANDWHITE), PPM, PGM or PBM (plain or raw, 8 or 16 bits). Samples keep\n"
            "their depth: maxval is the file's (2^bits - 1 for PNG).\n"
            "\n"
            "  -l, --lambda L       Lagrangian multiplier, 0..1000000 (default 10);\n"
            "                       higher means fewer bits and lower quality. It weighs\n"
            "                       bits against squared errors on the 8-bit scale at every\n"
            "                       maxval (errors count (255 / maxval)^2 times)\n"
            "      --lossless       the decoder gives back every sample exactly\n"
            "      --max-error N    near-lossless: every decoded sample within N of the\n"
            "                       input (0 to %d; 0 is --lossless); the bound is in the\n"
            "                       file (mmp-dec --info). Colour needs --chroma 444, and\n"
            "                       N > 0 the rgb transform (the default then). Neither\n"
            "                       takes the lambda targets below\n"
            "      --residual R     how --lossless and --max-error planes reach the bound:\n"
            "                       alone (the residual coder's own prediction), mmp (MMP\n"
            "                       at lambda first, then the residual coder on its\n"
            "                       output) or auto (default: alone)\n"
            "      --target-bpp X   choose lambda for X bits per pixel (within 3 %%)\n"
            "      --target-psnr Y  choose lambda for a PSNR of Y dB: the smallest file of at\n"
            "                       least Y - 0.05 dB\n"
            "      --max-bytes N    choose lambda for the largest file of at most N bytes\n"
            "                       These three search lambda by encoding the image several\n"
            "                       times (at most 12, at the settings given; bisection and\n"
            "                       interpolation on log lambda) and keep the best probe:\n"
            "                       the same file as -l with the lambda chosen, which is\n"
            "                       printed on stderr unless -q (-v: every probe), with\n"
            "                       --filter off where a PSNR or bpp target needed the\n"
            "                       filter off. At most\n"
            "                       one of them, and not with -l. A target out of reach\n"
            "                       fails (exit 1) naming the closest value reached\n"
            "  -e, --engine NAME    search engine: %s (default auto:\n"
            "                       the GPU through opencl when there is one and the image\n"
            "                       has more than 20 blocks of 16x16 per core, else omp on\n"
            "                       the cores the process may use (its affinity mask); seq\n"
            "                       is the reference; all write the same bytes)\n"
            "  -t, --threads N      engine threads (omp) or host threads (opencl); 0 = the\n"
            "                       cores the process may use for omp; for opencl 64 on a\n"
            "                       GPU, 4 on a CPU device (default 0)\n"
            "      --cl-device DEV  OpenCL device for -e opencl/auto: P:D indices or part of\n"
            "                       its name (default: $MMP_CL_DEVICE, else the first GPU);\n"
            "                       -e opencl fails when it matches no device, -e auto uses\n"
            "                       it only if it is a GPU (else a CPU engine, with a warning)\n"
            "      --list-devices   list the OpenCL devices and exit\n"
            "      --head-start H   while opencl starts (a few tenths of a second), a CPU\n"
            "                       engine searches the first steps: auto (default: until\n"
            "                       opencl is ready), off, or a number of steps. The same\n"
            "                       bytes in every case\n"
            "  -d, --dict-size N    dictionary elements per scale, %d..%d (default %d; %d at\n"
            "                       --speed 3 and 4)\n"
            "      --redundancy T   dictionary redundancy threshold: mean squared distance per\n"
            "                       pixel a new pattern must exceed\n"
            "                       (default: min(lambda / 4, 8))\n"
            "      --order ORDER    coding order of the blocks: wavefront (diagonal steps of\n"
            "                       blocks searched at once: faster on many threads and\n"
            "                       GPUs) or raster (one block after another, the published\n"
            "                       MMP; files within 0.2 %% of the same size) (default\n"
            "                       wavefront)\n"
            "      --speed N        search effort, 0 to %d (default 1; 0: the exhaustive search).\n"
            "                       Higher is faster for larger files at the same quality:\n"
            "                       1 gives the dictionary search the 5 most promising of\n"
            "                       the 11 prediction modes of each leaf (ranked by SATD),\n"
            "                       2 the 2 most promising; the transform residual is\n"
            "                       priced for all 11. 3 also leaves out the 16x4 and 4x16\n"
            "                       leaves, prices the transform for the 5 most promising\n"
            "                       (its RDOQ levels only) and searches no dictionary where\n"
            "                       the transform codes no coefficient, in a dictionary\n"
            "                       of 512 elements unless -d says; 4 gives it one mode.\n"
            "                       Same format: any mmp-dec decodes it, and every\n"
            "                       engine writes the same bytes at a speed\n"
            "      --colour T       colour transform: ycocg-r (reversible; maxval up to\n"
            "                       32767), ycbcr (BT.601 full range) or rgb (none)\n"
            "                       (default: ycocg-r, ycbcr above maxval 32767; with\n"
            "                       --max-error N > 0, or lossless above 32767, rgb)\n"
            "      --chroma S       chroma sampling: 444 or 420 (half width and height)\n"
            "                       (default 444)\n"
            "      --chroma-lambda F  the chroma planes' lambda is lambda times F over their\n"
            "                       weight in the RGB error (default 1)\n"
            "      --alpha A        alpha channel: exact (lossless, whatever lambda) or mmp\n"
            "                       (lossy, at lambda) (default exact)\n"
            "      --filter F       restoration filter of the decoded planes: on (each plane\n"
            "                       gets the adaptive filter that lowers its cost, or none)\n"
            "                       or off (default on)\n"
            "      --dct D          transform residual: on (each prediction leaf may code its\n"
            "                       residual as quantised DCT coefficients instead of\n"
            "                       dictionary patterns, chosen by rate-distortion) or off\n"
            "                       (default on; lossless and near-lossless: off)\n"
            "      --recon FILE     also write the encoder's reconstruction: PNG if FILE\n"
            "                       ends in .png (maxval must be 2^k-1: 8 or 16 bits, sBIT\n"
            "                       for fewer; any other maxval is an error), PGM for .pgm\n"
            "                       (grey only), PPM for .ppm (RGB only), PAM for .pam;\n"
            "                       otherwise PGM, PPM or PAM (alpha) by the image's kind\n"
            "      --stats          print one line: bytes, bpp, PSNR (over RGB for colour,\n"
            "                       alpha left out), seconds, size, lambda, engine (the one\n"
            "                       that ran), channels, the PSNR of each coded plane; with\n"
            "                       a target also probes, and seconds of the whole search;\n"
            "                       last max_abs_error, the largest sample error\n"
            "  -v, --verbose        more detail on stderr\n"
            "  -q, --quiet          no progress bar\n"
            "  -h, --help           this help\n"
            "      --version        version\n"
            "\n"
            "IN, OUT and FILE must be three different files (two '-' outputs clash).\n"
            "A regular output file is replaced only once complete, keeping its mode; one\n"
            "with several hard links is refused (not detached, not changed in place). A\n"
            "device, FIFO or socket is written in place; a symbolic link is followed.\n"
            "Exit status: 0 success, 1 failure, 2 usage error.\n",
            MMP_MAX_ERROR, mmp_engine_names(), 64, 16384, MMP_DEFAULT_DICT_CAP, MMP_FAST_DICT_CAP,
            MMP_MAX_SPEED);
    return mmp_cli_stdout_done(prog);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

typedef struct blob {
    const uint8_t *data;
    size_t len;
} blob;

static int write_blob(void *opaque, void *file)
{
    blob *b = opaque;
    return fwrite(b->data, 1, b->len, file) == b->len ? 0 : MMP_EIO;
}


/* The largest difference between two samples of a and b (same size and
 * channels): 0 for a lossless file, at most N for --max-error N. */
static int max_abs_error(const mmp_image *a, const mmp_image *b)
{
    const size_t n = (size_t)a->width * a->height * mmp_image_channels(a);
    int m = 0;
    for (size_t i = 0; i < n; i++) {
        const int d = abs((int)a->pix[i] - (int)b->pix[i]);
        m = d > m ? d : m;
    }
    return m;
}

/* The library's messages: warnings unless -q, figures with -v. */
typedef struct log_ctx {
    int quiet, verbose;
} log_ctx;

static void log_message(void *opaque, int level, const char *msg)
{
    const log_ctx *lc = opaque;
    if (level == MMP_LOG_WARNING && !lc->quiet)
        fprintf(stderr, "%s: warning: %s\n", prog, msg);
    else if (level == MMP_LOG_INFO && lc->verbose)
        fprintf(stderr, "%s\n", msg);
    else if (level == MMP_LOG_ERROR)
        fprintf(stderr, "%s: %s\n", prog, msg);
}

/* --list-devices: the opencl engine's devices, the one it would use marked;
 * `label` names where spec came from (--cl-device or MMP_CL_DEVICE). */
static int list_devices(const char *spec, const char *label)
{
    mmp_device_info dev[64];
    char err[512] = "";
    int pick = -1;
    const int n = mmp_engine_devices("opencl", dev, 64, spec, &pick, err, sizeof err);
    if (n < 0) {
        mmp_cli_error(prog, "%s", err);
        return MMP_EXIT_FAILURE;
    }
    for (int i = 0; i < n && i < 64; i++)
        printf("%c %d:%d  %s  [%s]  %s, %u compute units, %llu MiB\n", i == pick ? '*' : ' ',
               dev[i].platform, dev[i].device, dev[i].name, dev[i].type, dev[i].platform_name,
               dev[i].compute_units, dev[i].memory_mib);
    if (pick < 0)
        printf("%s: %s\n", label, err);
    return mmp_cli_stdout_done(prog);
}

/*
 * A device the user named (--cl-device or MMP_CL_DEVICE, `label` says which
 * and its value), checked before anything is read: with -e opencl one that
 * matches no device is an error; -e auto takes the opencl engine only for a
 * GPU, so it warns (unless quiet) when it falls back to a CPU engine instead
 * of the device named; -e seq or omp never use a device, which only the
 * option (not the environment, a standing setting) is warned about.
 */
static int check_device(const mmp_settings *st, const char *label, int from_option, int quiet)
{
    const char *engine = st->engine ? st->engine : "auto";
    const int is_auto = strcmp(engine, "auto") == 0;
    if (!st->device)
        return 0;
    if (!is_auto && strcmp(engine, "opencl") != 0) {
        if (from_option && !quiet)
            fprintf(stderr, "%s: warning: %s has no effect with -e %s (only opencl and auto use "
                            "a device)\n",
                    prog, label, engine);
        return 0;
    }
    mmp_device_info dev[64];
    char why[512] = "";
    int pick = -1;
    const int n = mmp_engine_devices("opencl", dev, 64, st->device, &pick, why, sizeof why);
    if (n >= 0 && pick >= 0 && pick < 64 && (!is_auto || dev[pick].is_gpu))
        return 0;
    if (!is_auto) {
        mmp_cli_error(prog, "%s: %s", label, why[0] ? why : "no such OpenCL device");
        return MMP_EXIT_FAILURE;
    }
    if (quiet)
        return 0;
    /* auto's order: opencl on a GPU, else omp, else seq. */
    const char *cpu = mmp_engine_exists("omp") ? "omp" : "seq";
    if (n >= 0 && pick >= 0 && pick < 64)
        fprintf(stderr,
                "%s: warning: %s: %s is a %s device, not a GPU; -e auto uses the CPU engine %s "
                "instead of it (-e opencl would run on it)\n",
                prog, label, dev[pick].name, dev[pick].type, cpu);
    else
        fprintf(stderr, "%s: warning: %s: %s; -e auto uses the CPU engine %s instead\n", prog,
                label, why[0] ? why : "no such OpenCL device", cpu);
    return 0;
}

int main(int argc, char **argv)
{
    enum { OPT_RECON = 256, OPT_STATS, OPT_VERSION, OPT_REDUND, OPT_CLDEV, OPT_LISTDEV, OPT_ORDER,
           OPT_COLOUR, OPT_CHROMA, OPT_CHROMA_LAMBDA, OPT_ALPHA, OPT_FILTER, OPT_BPP, OPT_PSNR,
           OPT_BYTES, OPT_SPEED, OPT_LOSSLESS, OPT_MAX_ERROR, OPT_RESIDUAL, OPT_DCT,
           OPT_HEAD_START };
    static const struct option longopts[] = {
        {"lambda", required_argument, 0, 'l'},   {"engine", required_argument, 0, 'e'},
        {"threads", required_argument, 0, 't'},  {"dict-size", required_argument, 0, 'd'},
        {"recon", required_argument, 0, OPT_RECON},
        {"redundancy", required_argument, 0, OPT_REDUND},
        {"order", required_argument, 0, OPT_ORDER},
        {"speed", required_argument, 0, OPT_SPEED},
        {"colour", required_argument, 0, OPT_COLOUR},
        {"chroma", required_argument, 0, OPT_CHROMA},
        {"chroma-lambda", required_argument, 0, OPT_CHROMA_LAMBDA},
        {"alpha", required_argument, 0, OPT_ALPHA},
        {"filter", required_argument, 0, OPT_FILTER},
        {"dct", required_argument, 0, OPT_DCT},
        {"head-start", required_argument, 0, OPT_HEAD_START},
        {"lossless", no_argument, 0, OPT_LOSSLESS},
        {"max-error", required_argument, 0, OPT_MAX_ERROR},
        {"residual", required_argument, 0, OPT_RESIDUAL},
        {"stats", no_argument, 0, OPT_STATS},
        {"target-bpp", required_argument, 0, OPT_BPP},
        {"target-psnr", required_argument, 0, OPT_PSNR},
        {"max-bytes", required_argument, 0, OPT_BYTES},
        {"cl-device", required_argument, 0, OPT_CLDEV}, {"list-devices", no_argument, 0, OPT_LISTDEV},
        {"verbose", no_argument, 0, 'v'},        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},           {"version", no_argument, 0, OPT_VERSION},
        {0, 0, 0, 0}};
    mmp_settings st;
    mmp_default_settings(&st);
    const char *recon_path = NULL;
    int want_stats = 0, quiet = 0, list = 0, dev_option = 0;
    /* Rate control: the target and how many target options; -l given. */
    int rc_kind = MMP_RATE_NONE, rc_count = 0, lambda_given = 0;
    double rc_target = 0;
    /* The environment is the front end's to read, not the library's. */
    st.device = getenv("MMP_CL_DEVICE");
    if (st.device && !*st.device)
        st.device = NULL;
    st.engine_tune = getenv("MMP_CL_TUNE");
    long v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":l:e:t:d:vqh", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': {
            char *end;
            errno = 0;
            double l = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(l >= 0 && l <= 1e6)) {
                mmp_cli_error(prog, "invalid lambda '%s' (a number from 0 to 1000000)", optarg);
                return MMP_EXIT_USAGE;
            }
            st.lambda = l;
            lambda_given = 1;
            break;
        }
        case 'e':
            if (!mmp_engine_exists(optarg)) {
                mmp_cli_error(prog, "unknown engine '%s' (known: %s)", optarg, mmp_engine_names());
                return MMP_EXIT_USAGE;
            }
            st.engine = optarg;
            break;
        case 't':
            if (parse_long(optarg, 0, 4096, &v)) {
                mmp_cli_error(prog, "invalid thread count '%s' (0 to 4096)", optarg);
                return MMP_EXIT_USAGE;
            }
            st.threads = (int)v;
            break;
        case 'd':
            if (parse_long(optarg, 64, 16384, &v)) {
                mmp_cli_error(prog, "invalid dictionary size '%s' (64 to 16384)", optarg);
                return MMP_EXIT_USAGE;
            }
            st.dict_cap = (int)v;
            break;
        case OPT_SPEED:
            if (parse_long(optarg, 0, MMP_MAX_SPEED, &v)) {
                mmp_cli_error(prog, "invalid speed '%s' (0 to %d)", optarg, MMP_MAX_SPEED);
                return MMP_EXIT_USAGE;
            }
            st.speed = (int)v;
            break;
        case OPT_REDUND: {
            char *end;
            errno = 0;
            double r = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(r >= 0 && r <= 65535)) {
                mmp_cli_error(prog, "invalid redundancy threshold '%s' (0 to 65535)", optarg);
                return MMP_EXIT_USAGE;
            }
            st.redundancy = r;
            break;
        }
        case OPT_COLOUR:
            if (!strcmp(optarg, "ycbcr")) {
                st.transform = MMP_TRANSFORM_YCBCR;
            } else if (!strcmp(optarg, "ycocg-r")) {
                st.transform = MMP_TRANSFORM_YCOCG_R;
            } else if (!strcmp(optarg, "rgb")) {
                st.transform = MMP_TRANSFORM_RGB;
            } else {
                mmp_cli_error(prog, "unknown colour transform '%s' (ycbcr, ycocg-r or rgb)",
                              optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_CHROMA:
            if (!strcmp(optarg, "420")) {
                st.chroma = MMP_CHROMA_420;
            } else if (!strcmp(optarg, "444")) {
                st.chroma = MMP_CHROMA_444;
            } else {
                mmp_cli_error(prog, "unknown chroma sampling '%s' (420 or 444)", optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_ALPHA:
            if (!strcmp(optarg, "exact")) {
                st.alpha = MMP_ALPHA_EXACT;
            } else if (!strcmp(optarg, "mmp")) {
                st.alpha = MMP_ALPHA_MMP;
            } else {
                mmp_cli_error(prog, "unknown alpha coding '%s' (exact or mmp)", optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_LOSSLESS:
        case OPT_MAX_ERROR: {
            long n = 0;
            if (c == OPT_MAX_ERROR && parse_long(optarg, 0, MMP_MAX_ERROR, &n)) {
                mmp_cli_error(prog, "invalid max error '%s' (an integer from 0 to %d)", optarg,
                              MMP_MAX_ERROR);
                return MMP_EXIT_USAGE;
            }
            if (st.max_error >= 0 && st.max_error != n) {
                mmp_cli_error(prog, "--lossless and --max-error disagree");
                return MMP_EXIT_USAGE;
            }
            st.max_error = (int)n;
            break;
        }
        case OPT_RESIDUAL:
            if (!strcmp(optarg, "auto")) {
                st.residual = MMP_RESIDUAL_AUTO;
            } else if (!strcmp(optarg, "mmp")) {
                st.residual = MMP_RESIDUAL_AFTER_MMP;
            } else if (!strcmp(optarg, "alone")) {
                st.residual = MMP_RESIDUAL_ALONE;
            } else {
                mmp_cli_error(prog, "unknown residual coding '%s' (auto, mmp or alone)", optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_FILTER:
            if (!strcmp(optarg, "on")) {
                st.restoration = 1;
            } else if (!strcmp(optarg, "off")) {
                st.restoration = 0;
            } else {
                mmp_cli_error(prog, "unknown filter setting '%s' (on or off)", optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_DCT:
            if (!strcmp(optarg, "on")) {
                st.dct = 1;
            } else if (!strcmp(optarg, "off")) {
                st.dct = 0;
            } else {
                mmp_cli_error(prog, "unknown dct setting '%s' (on or off)", optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_HEAD_START:
            if (!strcmp(optarg, "auto")) {
                st.head_start = -1;
            } else if (!strcmp(optarg, "off")) {
                st.head_start = 0;
            } else if (!parse_long(optarg, 1, 1L << 30, &v)) {
                st.head_start = (int)v;
            } else {
                mmp_cli_error(prog, "invalid head start '%s' (auto, off or a number of steps)",
                              optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_CHROMA_LAMBDA: {
            char *end;
            errno = 0;
            double f = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(f > 0 && f <= 1e6)) {
                mmp_cli_error(prog, "invalid chroma lambda factor '%s' (above 0, at most 1000000)",
                              optarg);
                return MMP_EXIT_USAGE;
            }
            st.chroma_lambda = f;
            break;
        }
        case OPT_ORDER:
            if (!strcmp(optarg, "raster")) {
                st.order = MMP_ORDER_RASTER;
            } else if (!strcmp(optarg, "wavefront")) {
                st.order = MMP_ORDER_WAVEFRONT;
            } else {
                mmp_cli_error(prog, "unknown order '%s' (raster or wavefront)", optarg);
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_BPP:
        case OPT_PSNR:
        case OPT_BYTES:
            rc_kind = c == OPT_BPP ? MMP_RATE_BPP : c == OPT_PSNR ? MMP_RATE_PSNR : MMP_RATE_BYTES;
            rc_count++;
            if (mmp_ratectl_parse(rc_kind, optarg, &rc_target)) {
                mmp_cli_error(prog, "invalid %s '%s' (%s)", mmp_ratectl_option(rc_kind), optarg,
                              rc_kind == MMP_RATE_BPP    ? "a number above 0, up to 64"
                              : rc_kind == MMP_RATE_PSNR ? "dB above 0, up to 1000"
                                                       : "a whole number of bytes from 1");
                return MMP_EXIT_USAGE;
            }
            break;
        case OPT_CLDEV:
            st.device = optarg;
            dev_option = 1;
            break;
        case OPT_LISTDEV:
            list = 1;
            break;
        case OPT_RECON:
            recon_path = optarg;
            break;
        case OPT_STATS:
            want_stats = 1;
            break;
        case 'v':
            st.verbose = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            return usage(stdout);
        case OPT_VERSION:
            printf("mmp-enc %s\n", MMP_VERSION_STRING);
            return mmp_cli_stdout_done(prog);
        case ':':
            mmp_cli_error(prog, "option '%s' needs a value", argv[optind - 1]);
            return MMP_EXIT_USAGE;
        default:
            mmp_cli_error(prog, "unknown option '%s' (see --help)", argv[optind - 1]);
            return MMP_EXIT_USAGE;
        }
    }
    /* Messages name the device setting the way the user gave it. */
    char dev_label[256] = "";
    if (st.device)
        snprintf(dev_label, sizeof dev_label, dev_option ? "--cl-device %s" : "MMP_CL_DEVICE=%s",
                 st.device);
    if (list)
        return list_devices(st.device, dev_label);
    if (rc_count > 1 || (rc_count && lambda_given)) {
        mmp_cli_error(prog, "%s", rc_count > 1 ? "at most one of --target-bpp, --target-psnr and "
                                                 "--max-bytes (see --help)"
                                               : "-l cannot be combined with --target-bpp, "
                                                 "--target-psnr or --max-bytes (see --help)");
        return MMP_EXIT_USAGE;
    }
    if (rc_count && st.max_error >= 0) {
        mmp_cli_error(prog, "--lossless and --max-error cannot be combined with --target-bpp, "
                            "--target-psnr or --max-bytes (see --help)");
        return MMP_EXIT_USAGE;
    }
    if (argc - optind != 2) {
        mmp_cli_error(prog, "expected IN and OUT.mmp (see --help)");
        return MMP_EXIT_USAGE;
    }
    const char *in_path = argv[optind], *out_path = argv[optind + 1];
    char err[512];
    /* The reconstruction first in the list (its temporary file is written
     * first); neither output is renamed into place unless both are written. */
    blob b = {NULL, 0};
    mmp_image img = {0}, rec = {0};
    mmp_image_out rec_out = {.img = &rec, .fmt = MMP_FILE_PGM};
    mmp_cli_output outs[2] = {
        {.path = recon_path, .what = "--recon", .write = mmp_imagefile_write_out, .opaque = &rec_out},
        {.path = out_path, .what = "output", .write = write_blob, .opaque = &b}};
    mmp_cli_output *o = recon_path ? outs : outs + 1;
    const int nout = recon_path ? 2 : 1;
    int e = mmp_cli_outputs_check(in_path, o, nout, err, sizeof err);
    if (e) {
        mmp_cli_error(prog, "%s", err);
        mmp_cli_outputs_free(o, nout);
        return e == MMP_EINVAL ? MMP_EXIT_USAGE : MMP_EXIT_FAILURE;
    }
    e = check_device(&st, dev_label, dev_option, quiet);
    if (e) {
        mmp_cli_outputs_free(o, nout);
        return e;
    }
    if (!quiet) {
        st.progress = mmp_cli_progress;
        st.progress_opaque = NULL;
    }
    log_ctx lc = {.quiet = quiet, .verbose = st.verbose};
    st.log = log_message;
    st.log_opaque = &lc;

    e = mmp_imagefile_read_path(in_path, &img, err, sizeof(err));
    if (e) {
        /* The file named once: "cannot open X: ..." names it already. */
        if (strncmp(err, "cannot open ", 12) == 0)
            mmp_cli_error(prog, "%s", err);
        else
            mmp_cli_error(prog, "%s: %s", strcmp(in_path, "-") ? in_path : "standard input", err);
        mmp_cli_outputs_free(o, nout);
        return MMP_EXIT_FAILURE;
    }
    /* The reconstruction has the input's kind and maxval: a --recon name
     * that cannot hold it fails before the encode, not after. */
    if (recon_path && mmp_imagefile_format(recon_path, &img, &rec_out.fmt, err, sizeof err)) {
        mmp_cli_error(prog, "--recon %s: %s", recon_path, err);
        mmp_image_free(&img);
        mmp_cli_outputs_free(o, nout);
        return MMP_EXIT_FAILURE;
    }
    uint8_t *out = NULL;
    size_t outlen = 0;
    mmp_enc_stats stats;
    mmp_ratectl_result rc;
    if (rc_kind != MMP_RATE_NONE) {
        e = mmp_ratectl_encode(&st, &img, rc_kind, rc_target, &out, &outlen, &rec, &stats, &rc,
                          st.verbose ? stderr : NULL, prog, err, sizeof err);
        if (!e) {
            const mmp_ratectl_probe *p = &rc.probe[rc.chosen];
            st.lambda = p->lambda;
            stats.seconds = rc.seconds;
            if (!quiet)
                fprintf(stderr,
                        "%s: lambda %.15g%s chosen (%s %.15g) after %d probes in %.3f s: %zu "
                        "bytes, %.4f bpp, PSNR %.4f dB\n",
                        prog, p->lambda, p->restoration || !st.restoration ? "" : " --filter off",
                        mmp_ratectl_option(rc_kind), rc_target, rc.probes, rc.seconds, p->bytes,
                        p->bpp, p->psnr);
        }
    } else {
        e = mmp_encode(&st, &img, &out, &outlen, &rec, &stats, err, sizeof(err));
    }
    if (e) {
        mmp_cli_error(prog, "%s", err);
        mmp_image_free(&img);
        mmp_cli_outputs_free(o, nout);
        return MMP_EXIT_FAILURE;
    }
    b.data = out;
    b.len = outlen;
    e = mmp_cli_outputs_write(o, nout, err, sizeof err);
    mmp_cli_outputs_free(o, nout);
    if (e) {
        mmp_cli_error(prog, "%s", err);
    } else {
        double bpp = 8.0 * outlen / ((double)img.width * img.height);
        double psnr = mmp_psnr(&img, &rec);
        if (st.verbose) {
            char head[64] = "";
            if (stats.head_steps)
                snprintf(head, sizeof head, " (the first %ld steps on a CPU engine)",
                         stats.head_steps);
            fprintf(stderr, "%s: engine %s%s: search %.3f s, coding and dictionary updates %.3f s\n",
                    prog, stats.engine, head, stats.search_seconds, stats.code_seconds);
        }
        char planes[128] = "";
        for (int p = 0, at = 0; p < stats.planes && at < (int)sizeof planes; p++)
            at += snprintf(planes + at, sizeof planes - at, "%s%.4f", p ? "," : "",
                           stats.plane_psnr[p]);
        if (st.verbose)
            fprintf(stderr, "%s: %dx%d maxval %d, lambda %.15g, %zu bytes, %.4f bpp, PSNR %.4f dB "
                            "(planes %s), %.3f s, %llu dictionary elements\n",
                    prog, img.width, img.height, img.maxval, st.lambda, outlen, bpp, psnr, planes,
                    stats.seconds, (unsigned long long)stats.dict_elements);
        if (want_stats) {
            /* stderr when stdout carries an output. */
            const int taken =
                strcmp(out_path, "-") == 0 || (recon_path && strcmp(recon_path, "-") == 0);
            fprintf(taken ? stderr : stdout,
                    "bytes=%zu bpp=%.6f psnr=%.4f seconds=%.3f width=%d height=%d lambda=%.15g "
                    "engine=%s channels=%d plane_psnr=%s",
                    outlen, bpp, psnr, stats.seconds, img.width, img.height, st.lambda,
                    stats.engine, mmp_image_channels(&img), planes);
            if (rc_kind != MMP_RATE_NONE)
                fprintf(taken ? stderr : stdout, " probes=%d", rc.probes);
            fprintf(taken ? stderr : stdout, " max_abs_error=%d", max_abs_error(&img, &rec));
            fputc('\n', taken ? stderr : stdout);
        }
    }
    free(out);
    mmp_image_free(&img);
    mmp_image_free(&rec);
    if (e)
        return MMP_EXIT_FAILURE;
    return mmp_cli_stdout_done(prog);
}
