/*
 * mmp-enc's command line: the options table, --help and --help-all, and
 * the parse of argv into mmp_enc_options. Every usage error is found here,
 * before anything is read or written.
 */
#include "mmp/cli/enc_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mmp/cli/cli.h"
#include "mmp/cli/ratectl.h"
#include "mmp/imageio/imagefile.h"

const char *mmp_enc_prog = MMP_ENC_PROG;
/* mmp_enc_prog as the parse found it (mmp_enc_options_parse sets it). */
static const char *prog = MMP_ENC_PROG;

enum {
    OPT_RECON = 256,
    OPT_STATS,
    OPT_VERSION,
    OPT_HELP_ALL,
    OPT_REDUND,
    OPT_CLDEV,
    OPT_LISTDEV,
    OPT_ORDER,
    OPT_COLOUR,
    OPT_CHROMA,
    OPT_CHROMA_LAMBDA,
    OPT_ALPHA,
    OPT_FILTER,
    OPT_BPP,
    OPT_PSNR,
    OPT_BYTES,
    OPT_SPEED,
    OPT_LOSSLESS,
    OPT_MAX_ERROR,
    OPT_RESIDUAL,
    OPT_DCT,
    OPT_DEBLOCK,
    OPT_RESIDUAL_MIX,
    OPT_RESIDUAL_CONTEXT,
    OPT_HEAD_START,
    OPT_MAX_PIXELS,
    OPT_TILE,
    OPT_STRIP,
    OPT_QUIET
};

static const char shortopts[] = ":q:l:o:e:t:d:vh";

const struct option mmp_enc_long_options[] = {
    {"quality", required_argument, 0, 'q'},
    {"lambda", required_argument, 0, 'l'},
    {"output", required_argument, 0, 'o'},
    {"engine", required_argument, 0, 'e'},
    {"threads", required_argument, 0, 't'},
    {"dict-size", required_argument, 0, 'd'},
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
    {"deblock", required_argument, 0, OPT_DEBLOCK},
    {"residual-mix", required_argument, 0, OPT_RESIDUAL_MIX},
    {"residual-context", required_argument, 0, OPT_RESIDUAL_CONTEXT},
    {"head-start", required_argument, 0, OPT_HEAD_START},
    {"lossless", no_argument, 0, OPT_LOSSLESS},
    {"max-error", required_argument, 0, OPT_MAX_ERROR},
    {"residual", required_argument, 0, OPT_RESIDUAL},
    {"stats", no_argument, 0, OPT_STATS},
    {"target-bpp", required_argument, 0, OPT_BPP},
    {"target-psnr", required_argument, 0, OPT_PSNR},
    {"max-bytes", required_argument, 0, OPT_BYTES},
    {"max-pixels", required_argument, 0, OPT_MAX_PIXELS},
    {"tile", required_argument, 0, OPT_TILE},
    {"strip", no_argument, 0, OPT_STRIP},
    {"cl-device", required_argument, 0, OPT_CLDEV},
    {"list-devices", no_argument, 0, OPT_LISTDEV},
    {"verbose", no_argument, 0, 'v'},
    {"quiet", no_argument, 0, OPT_QUIET},
    {"help", no_argument, 0, 'h'},
    {"help-all", no_argument, 0, OPT_HELP_ALL},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0}};

/* ------------------------------------------------------------------ help */

/* --help (and -h): the options most used, on one screen. */
static int help(void)
{
    printf("Usage: mmp-enc [options] IN OUT.mmp   (or: IN -o OUT.mmp)\n"
           "Encode an image (PNG, JPEG, TIFF, PAM, PPM, PGM, PBM) with MMP. '-' is stdin\n"
           "or stdout; the image's colour profile, EXIF, XMP and text are kept.\n"
           "\n"
           "  -q, --quality Q      0 (fewest bits) to 100 (lossless) (default %d)\n"
           "  -l, --lambda L       or lambda, 0..1000000 (default 10): higher, fewer bits\n"
           "      --target-bpp X   choose lambda for X bits per pixel\n"
           "      --target-psnr Y  choose lambda for a PSNR of Y dB\n"
           "      --max-bytes N    choose lambda for the largest file of at most N bytes\n"
           "      --lossless       the decoder gives back every sample exactly\n"
           "      --max-error N    near-lossless: every decoded sample within N of the input\n"
           "      --chroma S       chroma sampling: 444 or 420 (default 444)\n"
           "  -o, --output FILE    the .mmp file, in place of OUT\n"
           "  -e, --engine NAME    search engine: %s (default auto)\n"
           "  -t, --threads N      engine threads; 0 (default): the engine's choice\n"
           "      --speed N        search effort, 0 (exhaustive) to %d (default 1)\n"
           "      --recon FILE     also write the encoder's reconstruction\n"
           "      --stats          print one line of figures: bytes, bpp, PSNR, ...\n"
           "  -v, --verbose        more detail on stderr\n"
           "      --quiet          no progress bar, no warnings\n"
           "  -h, --help           this help\n"
           "      --help-all       every option, with its default\n"
           "      --version        version\n"
           "\n"
           "Exit status: 0 success, 1 failure, 2 usage error.\n"
           "Every option: mmp-enc --help-all; the manual: man mmp-enc\n",
           MMP_DEFAULT_QUALITY, mmp_engine_names(), MMP_MAX_SPEED);
    return mmp_cli_stdout_done(prog);
}

/* --help-all, part 1: the input, the rate and the quality. */
static void help_all_rate(void)
{
    printf("Usage: mmp-enc [options] IN OUT.mmp   (or: IN -o OUT.mmp)\n"
           "Encode an image with MMP. '-' is stdin or stdout. IN is told by its first\n"
           "bytes, not its name: PNG (grey, grey+alpha, RGB, RGBA, palette, 1 to 16\n"
           "bits, interlaced or not; a palette becomes 8-bit RGB, with alpha when tRNS\n"
           "gives transparency), PAM (GRAYSCALE, GRAYSCALE_ALPHA, RGB, RGB_ALPHA,\n"
           "BLACKANDWHITE), PPM, PGM or PBM (plain or raw, 8 or 16 bits), JPEG (grey or\n"
           "RGB; not CMYK), TIFF (the first page: grey, RGB, RGBA, palette, 8 or 16\n"
           "bits). Samples keep their depth: maxval is the file's (2^bits - 1 for PNG).\n"
           "Its metadata (ICC profile, EXIF, XMP, PNG's sRGB, gAMA, cHRM and text) is\n"
           "stored in the file as it is, unless --strip; an EXIF orientation is kept,\n"
           "never applied.\n"
           "\n"
           "Rate and quality:\n"
           "  -q, --quality Q      quality, 0 to 100 (default %d, lambda 10), as cwebp's,\n"
           "                       avifenc's and cjxl's -q: lambda from the table\n"
           "                       (quality:lambda) 0:8192 10:3500 20:1700 30:700 40:330\n"
           "                       50:140 60:50 70:17 75:10 80:5.25 90:1.25 99:0.25,\n"
           "                       log-linear between points, rounded to 1/256 (99 to\n"
           "                       100: 0.25); 100 is --lossless. Each step of quality\n"
           "                       changes the bits of a photograph by about 5 %%. Not\n"
           "                       with -l, --lossless, --max-error or a target\n"
           "  -l, --lambda L       Lagrangian multiplier, 0..1000000 (default 10);\n"
           "                       higher means fewer bits and lower quality. It weighs\n"
           "                       bits against squared errors on the 8-bit scale at every\n"
           "                       maxval (errors count (255 / maxval)^2 times)\n"
           "      --target-bpp X   choose lambda for X bits per pixel (within 3 %%)\n"
           "      --target-psnr Y  choose lambda for a PSNR of Y dB: the smallest file of at\n"
           "                       least Y - 0.05 dB\n"
           "      --max-bytes N    choose lambda for the largest file of at most N bytes\n"
           "                       Rate control: at most one of these three, and not with\n"
           "                       -q, -l, --lossless or --max-error. The image is\n"
           "                       encoded up to %d times at the settings given; the file\n"
           "                       kept is the one -l with the lambda chosen writes (with\n"
           "                       --filter off where a bpp or PSNR target needed the\n"
           "                       filter off). The lambda chosen is printed on stderr\n"
           "                       unless --quiet (-v: every probe). A target out of reach\n"
           "                       fails (exit 1), naming the closest value reached\n"
           "      --lossless       the decoder gives back every sample exactly\n"
           "      --max-error N    near-lossless: every decoded sample within N of the\n"
           "                       input (0 to %d; 0 is --lossless); the bound is in the\n"
           "                       file (mmp-dec --info). Colour needs --chroma 444, and\n"
           "                       N > 0 the rgb transform (the default then)\n"
           "      --residual R     how --lossless and --max-error planes reach the bound:\n"
           "                       alone (the residual coder's own prediction), mmp (MMP\n"
           "                       at lambda first, then the residual coder on its\n"
           "                       output) or auto (default: alone)\n"
           "      --filter F       restoration filter of the decoded planes: on (each plane\n"
           "                       gets the adaptive filter that lowers its cost, or none)\n"
           "                       or off (default on)\n"
           "      --dct D          transform residual: on (each prediction leaf may code its\n"
           "                       residual as quantised DCT coefficients instead of\n"
           "                       dictionary patterns, chosen by rate-distortion) or off\n"
           "                       (default on; lossless and near-lossless: off)\n"
           "      --deblock D      deblocking filter of the decoded planes: on (each plane\n"
           "                       gets the strength that lowers its cost, or none) or off\n"
           "                       (default on; a file with it needs an mmp-dec of format\n"
           "                       1.1 or later; lossless and near-lossless: off)\n"
           "      --residual-mix R lossless and near-lossless: the residual stage's\n"
           "                       differences coded by mixing several context models (on,\n"
           "                       the default; against off about 2 %% smaller at 2.4x\n"
           "                       the time with --residual-context off, 3.9 %% at 3.1x\n"
           "                       with it; a file with it needs an mmp-dec of format\n"
           "                       1.2 or later) or by format 1.0's models (off)\n"
           "      --residual-context R  with --residual-mix on: the residual stage also\n"
           "                       predicts from its candidates' errors at the nearest\n"
           "                       samples and mixes contexts on the candidates' deviations\n"
           "                       and on the plane coded before (on, the default; about\n"
           "                       2 %% smaller in grey and 4 %% in colour, about 1.3x the\n"
           "                       time of off; a file with it needs an mmp-dec of format\n"
           "                       1.3 or later) or not (off, format 1.2's coder)\n",
           MMP_DEFAULT_QUALITY, MMP_RATE_MAX_PROBES, MMP_MAX_ERROR);
}

/* --help-all, part 2: the search. */
static void help_all_search(void)
{
    printf("\n"
           "Search:\n"
           "  -e, --engine NAME    search engine: %s (default auto:\n"
           "                       opencl when its device is a GPU and the image has more\n"
           "                       than %d blocks of 16x16 per core, else omp on the cores\n"
           "                       the process may use (its affinity mask); seq is the\n"
           "                       reference; all write the same bytes)\n"
           "  -t, --threads N      engine threads (omp) or host threads (opencl); 0 = the\n"
           "                       cores the process may use for omp; for opencl 64 on a\n"
           "                       GPU, 4 on a CPU device (default 0)\n"
           "      --cl-device DEV  OpenCL device for -e opencl/auto: P:D indices or part of\n"
           "                       its name (default: $MMP_CL_DEVICE, else the first GPU);\n"
           "                       -e opencl fails when it matches no device, -e auto uses\n"
           "                       it only if it is a GPU (else a CPU engine, with a\n"
           "                       warning)\n"
           "      --list-devices   list the OpenCL devices and exit\n"
           "      --head-start H   while opencl starts, a CPU engine searches the first\n"
           "                       steps: auto (default: until opencl is ready), off, or a\n"
           "                       number of steps. The same bytes in every case\n"
           "      --speed N        search effort, 0 to %d (default 1). 0: the exhaustive\n"
           "                       search; 1: the dictionary search gets the 5 most\n"
           "                       promising of the 11 prediction modes of each leaf\n"
           "                       (ranked by SATD), the transform is priced for all 11;\n"
           "                       2: the 2 most promising; 3: as 2, without 16x4 and 4x16\n"
           "                       leaves, the transform priced for the 5 most promising\n"
           "                       (RDOQ levels only), no dictionary search where the\n"
           "                       transform codes no coefficient, and a dictionary of %d\n"
           "                       elements unless -d says; 4: as 3 with one mode; 5: as\n"
           "                       4 with 128 elements. 6 to 10 search no dictionary:\n"
           "                       every leaf codes the transform residual, with no\n"
           "                       least-squares mode; 7: as 6 with square leaves only;\n"
           "                       8: as 7, the transform priced for 2 modes, half the\n"
           "                       angular directions, one round of the restoration\n"
           "                       fit; 9: for 1 mode, a quarter of the directions; 10:\n"
           "                       as 9 without 4x4 leaves. Any mmp-dec decodes every\n"
           "                       speed; every engine writes the same bytes at a speed\n"
           "      --tile N|WxH     tiles, each coded on its own (decodable alone, decoded\n"
           "                       in parallel): sides that are multiples of 16 from\n"
           "                       128 to 65536; default: one tile up to 1024 a side,\n"
           "                       equal tiles of at most 1024 beyond\n"
           "      --strip          store none of the input's metadata\n"
           "  -d, --dict-size N    dictionary elements per scale, %d..%d (default %d;\n"
           "                       %d at --speed 3 and 4, %d above)\n"
           "      --redundancy T   dictionary redundancy threshold: the mean squared\n"
           "                       distance per pixel a new pattern must exceed\n"
           "                       (default: min(lambda / 4, 8))\n"
           "      --order ORDER    coding order of the blocks: wavefront (diagonal steps of\n"
           "                       blocks searched at once, in parallel) or raster (one\n"
           "                       block after another, the published MMP) (default\n"
           "                       wavefront)\n",
           mmp_engine_names(), MMP_AUTO_CPU_BLOCKS_PER_CORE, MMP_MAX_SPEED, MMP_FAST_DICT_CAP, 64,
           16384, MMP_DEFAULT_DICT_CAP, MMP_FAST_DICT_CAP, MMP_FASTEST_DICT_CAP);
}

/* --help-all, part 3: colour and alpha, the outputs, the rest. */
static int help_all_rest(void)
{
    printf("\n"
           "Colour and alpha:\n"
           "      --colour T       colour transform: ycocg-r (reversible; maxval up to\n"
           "                       32767), ycbcr (BT.601 full range), rgb (none) or,\n"
           "                       lossless up to maxval 32767, rct (the one of 42\n"
           "                       reversible transforms whose planes the encoder\n"
           "                       estimates the cheapest; a file with it needs an\n"
           "                       mmp-dec of format 1.4 or later) (default: ycocg-r,\n"
           "                       ycbcr above maxval 32767; lossless rct; with\n"
           "                       --max-error N > 0, or lossless above 32767, rgb)\n"
           "      --chroma S       chroma sampling: 444 or 420 (half width and height)\n"
           "                       (default 444)\n"
           "      --chroma-lambda F  the chroma planes' lambda is lambda times F over their\n"
           "                       weight in the RGB error (default 1)\n"
           "      --alpha A        alpha channel: exact (lossless, whatever lambda) or mmp\n"
           "                       (lossy, at lambda) (default exact)\n"
           "\n"
           "Outputs:\n"
           "  -o, --output FILE    the .mmp file, in place of OUT. Its name ends in .mmp\n"
           "                       (any case) or has no extension ('-' is stdout);\n"
           "                       another extension is a usage error\n"
           "      --recon FILE     also write the encoder's reconstruction: PNG if FILE\n"
           "                       ends in .png (maxval must be 2^k-1: 8 or 16 bits, sBIT\n"
           "                       for fewer; any other maxval is an error), PGM for .pgm\n"
           "                       (grey only), PPM for .ppm (RGB only), PGM or PPM for\n"
           "                       .pnm, PAM for .pam; a name without extension, and '-',\n"
           "                       PGM, PPM or PAM (alpha) by the image's kind; another\n"
           "                       extension (.jpg: no JPEG writer) is a usage error\n"
           "      --stats          print one line: bytes, bpp, PSNR (over RGB for colour,\n"
           "                       alpha left out), seconds, size, lambda, engine (the one\n"
           "                       that ran), channels, the PSNR of each coded plane; with\n"
           "                       a target also probes, and seconds of the whole search;\n"
           "                       last max_abs_error, the largest sample error; on\n"
           "                       stderr when an output is standard output (by any name)\n"
           "  -v, --verbose        more detail on stderr\n"
           "      --quiet          no progress bar, no warnings\n"
           "\n"
           "Other:\n"
           "      --max-pixels N   refuse an image of more than N pixels (width x height)\n"
           "                       before anything is allocated for it: 1 to %lld\n"
           "                       (default %lld, half of that)\n"
           "  -h, --help           the options most used\n"
           "      --help-all       this reference\n"
           "      --version        version\n"
           "\n"
           "IN, OUT and FILE must be three different files (two standard outputs clash,\n"
           "by any name: '-', /dev/stdout). A regular output file is replaced only once\n"
           "complete, keeping its mode; one with several hard links is refused (not\n"
           "detached, not changed in place). A device, FIFO or socket is written in\n"
           "place; a symbolic link is opened by its name (the kernel follows it) and the\n"
           "file it leads to is written in place. Options that do nothing (-l with a\n"
           "bound but without --residual mmp; --colour, --chroma, --chroma-lambda on\n"
           "grey; --alpha without alpha) are warned about unless --quiet.\n"
           "Environment: MMP_CL_DEVICE, the default of --cl-device; MMP_CL_TUNE, overrides\n"
           "of the opencl engine's tuning (the same bytes whatever they are).\n"
           "Exit status: 0 success, 1 failure, 2 usage error. The manual: man mmp-enc\n",
           (long long)MMP_MAX_PIXELS, (long long)MMP_CLI_DEFAULT_MAX_PIXELS);
    return mmp_cli_stdout_done(prog);
}

static int help_all(void)
{
    help_all_rate();
    help_all_search();
    return help_all_rest();
}

/* --------------------------------------------------------------- values */

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

/* A number in [lo, hi], or (lo, hi] when open_lo; 0 or -1. */
static int parse_double(const char *s, double lo, double hi, int open_lo, double *out)
{
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (errno || end == s || *end || !((open_lo ? v > lo : v >= lo) && v <= hi))
        return -1;
    *out = v;
    return 0;
}

/* The keywords of an option that takes one, and their values. */
typedef struct keyword {
    const char *name;
    int value;
} keyword;

static const keyword colours[] = {{"ycbcr", MMP_TRANSFORM_YCBCR},
                                  {"ycocg-r", MMP_TRANSFORM_YCOCG_R},
                                  {"rgb", MMP_TRANSFORM_RGB},
                                  {"rct", MMP_TRANSFORM_RCT},
                                  {0, 0}};
static const keyword chromas[] = {{"420", MMP_CHROMA_420}, {"444", MMP_CHROMA_444}, {0, 0}};
static const keyword alphas[] = {{"exact", MMP_ALPHA_EXACT}, {"mmp", MMP_ALPHA_MMP}, {0, 0}};
static const keyword residuals[] = {{"auto", MMP_RESIDUAL_AUTO},
                                    {"mmp", MMP_RESIDUAL_AFTER_MMP},
                                    {"alone", MMP_RESIDUAL_ALONE},
                                    {0, 0}};
static const keyword on_off[] = {{"on", 1}, {"off", 0}, {0, 0}};
static const keyword orders[] = {
    {"raster", MMP_ORDER_RASTER}, {"wavefront", MMP_ORDER_WAVEFRONT}, {0, 0}};

/* *out = the value of keyword arg of kw; else "unknown WHAT 'arg' (LIST)"
 * and a usage error. */
static int parse_keyword(const char *arg, const keyword *kw, const char *what, const char *list,
                         int *out)
{
    for (; kw->name; kw++)
        if (!strcmp(arg, kw->name)) {
            *out = kw->value;
            return 0;
        }
    mmp_cli_error(prog, "unknown %s '%s' (%s)", what, arg, list);
    return MMP_EXIT_USAGE;
}

/* Prints "invalid ..." and returns a usage error when bad is nonzero. */
static int invalid(int bad, const char *what, const char *arg, const char *range)
{
    if (!bad)
        return 0;
    mmp_cli_error(prog, "invalid %s '%s' (%s)", what, arg, range);
    return MMP_EXIT_USAGE;
}

/* --tile N or WxH: sides that are multiples of 16 from 128 to 65536. */
static int tile_side(const char *arg, long *v)
{
    return parse_long(arg, 128, 65536, v) || *v % 16;
}

static int parse_tile(const char *arg, mmp_settings *st)
{
    long w = 0, h = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", arg);
    char *x = strchr(buf, 'x');
    if (x)
        *x = 0;
    if (strlen(arg) >= sizeof buf || tile_side(buf, &w) || tile_side(x ? x + 1 : buf, &h))
        return invalid(1, "tile size", arg, "N or WxH, multiples of 16 from 128 to 65536");
    st->tile_width = (int)w;
    st->tile_height = (int)h;
    return 0;
}

/* -------------------------------------------------------------- options */

/* The options of a number: 0, or a usage error (reported). */
static int parse_number(mmp_enc_options *o, int c, const char *arg)
{
    mmp_settings *st = &o->st;
    long v = 0;
    switch (c) {
    case 'q':
        /* Quiet was -q before it was quality: say where it went. */
        return invalid(parse_double(arg, 0, 100, 0, &o->quality), "quality", arg,
                       "a number from 0 to 100; quiet is --quiet");
    case 'l':
        return invalid(parse_double(arg, 0, 1e6, 0, &st->lambda), "lambda", arg,
                       "a number from 0 to 1000000");
    case 'd':
        if (parse_long(arg, 64, 16384, &v))
            return invalid(1, "dictionary size", arg, "64 to 16384");
        st->dict_cap = (int)v;
        return 0;
    case 't':
        if (parse_long(arg, 0, MMP_MAX_THREADS, &v))
            return invalid(1, "thread count", arg, "0 to 1024");
        st->threads = (int)v;
        return 0;
    case OPT_TILE:
        return parse_tile(arg, st);
    case OPT_SPEED:
        if (parse_long(arg, 0, MMP_MAX_SPEED, &v)) {
            mmp_cli_error(prog, "invalid speed '%s' (0 to %d)", arg, MMP_MAX_SPEED);
            return MMP_EXIT_USAGE;
        }
        st->speed = (int)v;
        return 0;
    case OPT_REDUND:
        return invalid(parse_double(arg, 0, 65535, 0, &st->redundancy), "redundancy threshold", arg,
                       "0 to 65535");
    case OPT_CHROMA_LAMBDA:
        return invalid(parse_double(arg, 0, 1e6, 1, &st->chroma_lambda), "chroma lambda factor",
                       arg, "above 0, at most 1000000");
    case OPT_HEAD_START:
        if (!strcmp(arg, "auto"))
            st->head_start = -1;
        else if (!strcmp(arg, "off"))
            st->head_start = 0;
        else if (!parse_long(arg, 1, 1L << 30, &v))
            st->head_start = (int)v;
        else
            return invalid(1, "head start", arg, "auto, off or a number of steps");
        return 0;
    case OPT_LOSSLESS:
    case OPT_MAX_ERROR:
        if (c == OPT_MAX_ERROR && parse_long(arg, 0, MMP_MAX_ERROR, &v)) {
            mmp_cli_error(prog, "invalid max error '%s' (an integer from 0 to %d)", arg,
                          MMP_MAX_ERROR);
            return MMP_EXIT_USAGE;
        }
        if (st->max_error >= 0 && st->max_error != v) {
            mmp_cli_error(prog, "--lossless and --max-error disagree");
            return MMP_EXIT_USAGE;
        }
        st->max_error = (int)v;
        return 0;
    }
    return -1;
}

/* The options of a keyword: 0, a usage error (reported), or -1 for an
 * option that is none of them. */
static int parse_choice(mmp_enc_options *o, int c, const char *arg)
{
    mmp_settings *st = &o->st;
    switch (c) {
    case OPT_COLOUR:
        return parse_keyword(arg, colours, "colour transform", "ycbcr, ycocg-r, rgb or rct",
                             &st->transform);
    case OPT_CHROMA:
        return parse_keyword(arg, chromas, "chroma sampling", "420 or 444", &st->chroma);
    case OPT_ALPHA:
        return parse_keyword(arg, alphas, "alpha coding", "exact or mmp", &st->alpha);
    case OPT_RESIDUAL:
        return parse_keyword(arg, residuals, "residual coding", "auto, mmp or alone",
                             &st->residual);
    case OPT_FILTER:
        return parse_keyword(arg, on_off, "filter setting", "on or off", &st->restoration);
    case OPT_DCT:
        return parse_keyword(arg, on_off, "dct setting", "on or off", &st->dct);
    case OPT_DEBLOCK: {
        int on = 1;
        const int rc = parse_keyword(arg, on_off, "deblock setting", "on or off", &on);
        st->deblocking = on ? 0 : -1;
        return rc;
    }
    case OPT_RESIDUAL_MIX: {
        int on = 1;
        const int rc = parse_keyword(arg, on_off, "residual-mix setting", "on or off", &on);
        st->residual_mix = on ? 0 : -1;
        return rc;
    }
    case OPT_RESIDUAL_CONTEXT: {
        int on = 1;
        const int rc = parse_keyword(arg, on_off, "residual-context setting", "on or off", &on);
        st->residual_context = on ? 0 : -1;
        return rc;
    }
    case OPT_ORDER:
        return parse_keyword(arg, orders, "order", "raster or wavefront", &st->order);
    case 'e':
        if (!mmp_engine_exists(arg)) {
            mmp_cli_error(prog, "unknown engine '%s' (known: %s)", arg, mmp_engine_names());
            return MMP_EXIT_USAGE;
        }
        st->engine = arg;
        return 0;
    }
    return -1;
}

/* A rate-control target: its kind and value, counted in *count. */
static int parse_target(mmp_enc_options *o, int c, const char *arg, int *count)
{
    const int kind = c == OPT_BPP ? MMP_RATE_BPP : c == OPT_PSNR ? MMP_RATE_PSNR : MMP_RATE_BYTES;
    o->rc_kind = kind;
    (*count)++;
    if (!mmp_ratectl_parse(kind, arg, &o->rc_target))
        return 0;
    mmp_cli_error(prog, "invalid %s '%s' (%s)", mmp_ratectl_option(kind), arg,
                  kind == MMP_RATE_BPP    ? "a number above 0, up to 64"
                  : kind == MMP_RATE_PSNR ? "dB above 0, up to 1000"
                                          : "a whole number of bytes from 1");
    return MMP_EXIT_USAGE;
}

/* What the options say together, once all are read: 0 or a usage error
 * (reported). */
static int check_together(const mmp_enc_options *o, int rc_count, int lambda_given,
                          int residual_given)
{
    const mmp_settings *st = &o->st;
    const char *bound = o->quality_given ? "-q 100" : st->max_error == 0 ? "--lossless" : "--max-error";
    if (rc_count > 1 || (rc_count && lambda_given)) {
        mmp_cli_error(prog, "%s",
                      rc_count > 1 ? "at most one of --target-bpp, --target-psnr and "
                                     "--max-bytes (see --help)"
                                   : "-l cannot be combined with --target-bpp, "
                                     "--target-psnr or --max-bytes (see --help)");
        return MMP_EXIT_USAGE;
    }
    if (rc_count && o->st.max_error >= 0 && !o->quality_given) {
        mmp_cli_error(prog, "--lossless and --max-error cannot be combined with --target-bpp, "
                            "--target-psnr or --max-bytes (see --help)");
        return MMP_EXIT_USAGE;
    }
    if (residual_given && st->max_error < 0) {
        mmp_cli_error(prog, "--residual applies only with --lossless or --max-error");
        return MMP_EXIT_USAGE;
    }
    if (st->max_error < 0)
        return 0;
    /* Not an error: the lambda is still written in the header (mmp-dec
     * --info shows it), and scripts that sweep lambda over every mode pass
     * it; but it changes no sample, and the user is told so. */
    if (lambda_given && st->residual != MMP_RESIDUAL_AFTER_MMP && !o->quiet)
        fprintf(stderr,
                "%s: warning: -l: %s codes the planes with the residual stage alone, which "
                "uses no lambda (the header records it; --residual mmp uses it)\n",
                prog, bound);
    if (st->chroma != MMP_CHROMA_444) {
        mmp_cli_error(prog, "%s needs --chroma 444", bound);
        return MMP_EXIT_USAGE;
    }
    if (st->transform == MMP_TRANSFORM_YCBCR ||
        (st->transform == MMP_TRANSFORM_YCOCG_R && st->max_error > 0)) {
        mmp_cli_error(prog, "--colour %s does not keep the bound of %s: use rgb%s",
                      st->transform == MMP_TRANSFORM_YCBCR ? "ycbcr" : "ycocg-r", bound,
                      st->max_error > 0 ? "" : " or ycocg-r");
        return MMP_EXIT_USAGE;
    }
    return 0;
}

/* -q: the settings of its quality (mmp_set_quality), once no other
 * option has set the rate: 0 or a usage error (reported). */
static int apply_quality(mmp_enc_options *o, int rc_count, int lambda_given)
{
    if (!o->quality_given)
        return 0;
    if (lambda_given || rc_count || o->st.max_error >= 0) {
        mmp_cli_error(prog, "-q cannot be combined with %s: each sets the rate (see --help)",
                      lambda_given ? "-l"
                      : rc_count   ? "--target-bpp, --target-psnr or --max-bytes"
                                   : "--lossless or --max-error (-q 100 is lossless)");
        return MMP_EXIT_USAGE;
    }
    if (mmp_set_quality(&o->st, o->quality) != MMP_OK) {
        mmp_cli_error(prog, "invalid quality %.15g", o->quality);
        return MMP_EXIT_USAGE;
    }
    return 0;
}

/* The outputs' names: OUT.mmp (or no extension), and a --recon name of a
 * format the image writer has. 0 (MMP_CLI_RUN) or a usage error. */
static int check_names(const mmp_enc_options *o)
{
    const char *ext = mmp_imagefile_path_extension(o->out_path);
    if (ext && strcasecmp(ext, ".mmp") != 0) {
        mmp_cli_error(prog,
                      "OUT %s: mmp-enc writes MMP files; name it .mmp (or give no "
                      "extension; '-' is stdout)",
                      o->out_path);
        return MMP_EXIT_USAGE;
    }
    if (o->recon_path && !mmp_imagefile_writes_name(o->recon_path)) {
        mmp_cli_error(prog, "--recon %s: no writer for %s files (it writes %s)", o->recon_path,
                      mmp_imagefile_path_extension(o->recon_path), mmp_imagefile_extensions());
        return MMP_EXIT_USAGE;
    }
    return MMP_CLI_RUN;
}

/* The defaults, and what the environment sets: it is the front end's to
 * read, not the library's. */
static void defaults(mmp_enc_options *o)
{
    memset(o, 0, sizeof *o);
    mmp_default_settings(&o->st);
    o->rc_kind = MMP_RATE_NONE;
    o->max_pixels = (uint64_t)MMP_CLI_DEFAULT_MAX_PIXELS;
    o->st.device = getenv("MMP_CL_DEVICE");
    if (o->st.device && !*o->st.device)
        o->st.device = NULL;
    o->st.engine_tune = getenv("MMP_CL_TUNE");
}

int mmp_enc_options_parse(mmp_enc_options *o, int argc, char **argv)
{
    prog = mmp_enc_prog;
    defaults(o);
    int rc_count = 0, lambda_given = 0, residual_given = 0, c, e;
    const char *out_opt = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, mmp_enc_long_options, NULL)) != -1) {
        if ((e = parse_number(o, c, optarg)) >= 0 || (e = parse_choice(o, c, optarg)) >= 0) {
            if (e)
                return e;
            lambda_given |= c == 'l';
            o->quality_given |= c == 'q';
            residual_given |= c == OPT_RESIDUAL;
            o->colour_given |= c == OPT_COLOUR;
            o->chroma_given |= c == OPT_CHROMA;
            o->chroma_lambda_given |= c == OPT_CHROMA_LAMBDA;
            o->alpha_given |= c == OPT_ALPHA;
            continue;
        }
        switch (c) {
        case OPT_BPP:
        case OPT_PSNR:
        case OPT_BYTES:
            if ((e = parse_target(o, c, optarg, &rc_count)) != 0)
                return e;
            break;
        case OPT_CLDEV:
            o->st.device = optarg;
            o->dev_option = 1;
            break;
        case OPT_LISTDEV:
            o->list_devices = 1;
            break;
        case OPT_RECON:
            o->recon_path = optarg;
            break;
        case 'o':
            out_opt = optarg;
            break;
        case OPT_MAX_PIXELS:
            if (mmp_cli_parse_max_pixels(prog, optarg, &o->max_pixels))
                return MMP_EXIT_USAGE;
            break;
        case OPT_STRIP:
            o->strip = 1;
            break;
        case OPT_STATS:
            o->stats = 1;
            break;
        case 'v':
            o->st.verbose = 1;
            break;
        case OPT_QUIET:
            o->quiet = 1;
            break;
        case 'h':
            return help();
        case OPT_HELP_ALL:
            return help_all();
        case OPT_VERSION:
            return mmp_cli_version(prog);
        default:
            return mmp_cli_option_error(prog, c, argv, shortopts);
        }
    }
    /* Messages name the device setting the way the user gave it. */
    if (o->st.device)
        snprintf(o->dev_label, sizeof o->dev_label,
                 o->dev_option ? "--cl-device %s" : "MMP_CL_DEVICE=%s", o->st.device);
    if (o->list_devices)
        return MMP_CLI_RUN;
    if ((e = apply_quality(o, rc_count, lambda_given)) != 0 ||
        (e = check_together(o, rc_count, lambda_given, residual_given)) != 0)
        return e;
    if (argc - optind != (out_opt ? 1 : 2)) {
        mmp_cli_error(prog, "%s (see --help)",
                      !out_opt ? "expected IN and OUT.mmp, or IN -o OUT.mmp"
                      : argc - optind == 2 ? "both -o and OUT name the output: give one"
                                           : "expected IN with -o OUT.mmp");
        return MMP_EXIT_USAGE;
    }
    o->in_path = argv[optind];
    o->out_path = out_opt ? out_opt : argv[optind + 1];
    if (!*o->in_path || !*o->out_path || (o->recon_path && !*o->recon_path)) {
        mmp_cli_error(prog, "empty file name for %s",
                      !*o->in_path ? "IN" : !*o->out_path ? "OUT" : "--recon");
        return MMP_EXIT_USAGE;
    }
    return check_names(o);
}
