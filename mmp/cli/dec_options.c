/*
 * mmp-dec's command line: the options table, --help and --help-all, and
 * the parse of argv into mmp_dec_options. Every usage error that the
 * options alone show is found here, before anything is read.
 */
#include "mmp/cli/dec_options.h"

#include <stdio.h>
#include <string.h>

#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"

static const char *const prog = MMP_DEC_PROG;

enum {
    OPT_STATS = 256,
    OPT_VERSION,
    OPT_INFO,
    OPT_HELP_ALL,
    OPT_MAX_PIXELS,
    OPT_REGION,
    OPT_QUIET
};

/* No -q: quiet is --quiet alone, as in dwebp and djxl (avifdec's -q is the
 * quality of a JPEG output, and -q is quality in mmp-enc). */
static const char shortopts[] = ":o:fvh";

const struct option mmp_dec_long_options[] = {{"output", required_argument, 0, 'o'},
                                              {"force", no_argument, 0, 'f'},
                                              {"max-pixels", required_argument, 0, OPT_MAX_PIXELS},
                                              {"stats", no_argument, 0, OPT_STATS},
                                              {"info", no_argument, 0, OPT_INFO},
                                              {"region", required_argument, 0, OPT_REGION},
                                              {"verbose", no_argument, 0, 'v'},
                                              {"quiet", no_argument, 0, OPT_QUIET},
                                              {"help", no_argument, 0, 'h'},
                                              {"help-all", no_argument, 0, OPT_HELP_ALL},
                                              {"version", no_argument, 0, OPT_VERSION},
                                              {0, 0, 0, 0}};

/* --help (and -h): the options, one line each. */
static int help(void)
{
    printf("Usage: mmp-dec [options] IN.mmp [-o OUT]\n"
           "       mmp-dec --info IN.mmp\n"
           "Decode an MMP file to an image file: PNG, PGM, PPM, PNM or PAM, as OUT's name\n"
           "says; a name without extension, and '-', by the image's kind.\n"
           "\n"
           "  -o, --output FILE    output image ('-' for stdout; default: IN with the\n"
           "                       extension of the image's kind in place of .mmp, never\n"
           "                       replacing a file there)\n"
           "  -f, --force          let that name replace a regular file\n"
           "      --max-pixels N   refuse images of more than N pixels (default %lld)\n"
           "      --info           print the file's header fields and decode nothing\n"
           "      --stats          print one line: bytes, seconds, size\n"
           "  -v, --verbose        more detail on stderr\n"
           "      --quiet          nothing but errors\n"
           "  -h, --help           this help\n"
           "      --help-all       every option, and how outputs are named and written\n"
           "      --version        version\n"
           "\n"
           "Exit status: 0 success, 1 failure, 2 usage error.\n"
           "Every option: mmp-dec --help-all; the manual: man mmp-dec\n",
           (long long)MMP_CLI_DEFAULT_MAX_PIXELS);
    return mmp_cli_stdout_done(prog);
}

/* --help-all: the full reference. */
static int help_all(void)
{
    printf("Usage: mmp-dec [options] IN.mmp [-o OUT]\n"
           "       mmp-dec --info IN.mmp\n"
           "Decode an MMP file to an image file. OUT ending in .png is PNG (8 or 16\n"
           "bits, sBIT when maxval is 2^k-1 below that; a maxval that is not 2^k-1 is an\n"
           "error: PNG cannot hold it exactly), .pgm PGM (grey images only), .ppm PPM\n"
           "(RGB only), .pnm PGM or PPM (no alpha), .pam PAM (any case); a name without\n"
           "extension, and '-' (stdout), PGM for grey, PPM for RGB, PAM for an image\n"
           "with alpha. Another extension (.jpg: there is no JPEG writer) is a usage\n"
           "error, found before anything is read. Without -o the output is IN with the\n"
           "extension of that kind (.pgm, .ppm, .pam) in place of .mmp ('-' as IN\n"
           "reads stdin and then writes stdout; IN under /dev, /proc or /sys needs -o).\n"
           "\n"
           "  -o, --output FILE    output image ('-' for stdout)\n"
           "  -f, --force          without -o, let the name made from IN replace a regular\n"
           "                       file there (without -f that is refused)\n"
           "      --max-pixels N   refuse an image of more than N pixels (width x height),\n"
           "                       before anything is allocated for it: 1 to %lld\n"
           "                       (default %lld, half of that: about 2.2 GB at most\n"
           "                       for a decode)\n"
           "      --region X,Y,W,H decode only the W x H window at X,Y (pixels from the\n"
           "                       top left): the tiles it touches, and exactly those\n"
           "                       samples of the whole image's decode\n"
           "      --info           print the file's header fields on stdout, one\n"
           "                       name=value a line, and decode nothing (no -o, -f,\n"
           "                       --max-pixels, --stats); the file is checked as decoding\n"
           "                       checks it before it starts (header, length, CRC);\n"
           "                       max_error is the bound on every sample's error (0:\n"
           "                       lossless, none: lossy)\n"
           "      --stats          print one line: bytes, seconds, size (on stderr when\n"
           "                       the output is standard output)\n"
           "  -v, --verbose        more detail on stderr\n"
           "      --quiet          nothing but errors (no -q: see mmp-enc -q)\n"
           "  -h, --help           the options, one line each\n"
           "      --help-all       this reference\n"
           "      --version        version\n"
           "\n"
           "IN and OUT must be different files. A regular output file is replaced only\n"
           "once complete, keeping its mode; one with several hard links is refused (not\n"
           "detached, not changed in place). A device, FIFO or socket named by -o is\n"
           "written in place; a symbolic link named by -o is opened by its name (the\n"
           "kernel follows it) and the file it leads to is written in place. The name\n"
           "made from IN is only ever a regular file: a symbolic link, device, FIFO or\n"
           "socket there is refused, and so is a file unless -f. Exit status: 0 success,\n"
           "1 failure, 2 usage error. The manual: man mmp-dec\n",
           (long long)MMP_MAX_PIXELS, (long long)MMP_CLI_DEFAULT_MAX_PIXELS);
    return mmp_cli_stdout_done(prog);
}

int mmp_dec_options_parse(mmp_dec_options *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->max_pixels = (uint64_t)MMP_CLI_DEFAULT_MAX_PIXELS;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, mmp_dec_long_options, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->out_path = optarg;
            break;
        case 'f':
            o->force = 1;
            break;
        case OPT_MAX_PIXELS:
            if (mmp_cli_parse_max_pixels(prog, optarg, &o->max_pixels))
                return MMP_EXIT_USAGE;
            o->max_pixels_given = 1;
            break;
        case OPT_STATS:
            o->stats = 1;
            break;
        case OPT_INFO:
            o->info = 1;
            break;
        case OPT_REGION: {
            char extra;
            if (sscanf(optarg, "%d,%d,%d,%d%c", &o->region[0], &o->region[1], &o->region[2],
                       &o->region[3], &extra) != 4 ||
                o->region[0] < 0 || o->region[1] < 0 || o->region[2] < 1 || o->region[3] < 1) {
                mmp_cli_error(prog, "invalid region '%s' (X,Y,W,H: X, Y from 0, W, H from 1)",
                              optarg);
                return MMP_EXIT_USAGE;
            }
            o->region_given = 1;
            break;
        }
        case 'v':
            o->verbose = 1;
            o->quiet = 0;
            break;
        case OPT_QUIET:
            o->verbose = 0;
            o->quiet = 1;
            break;
        case 'h':
            return help();
        case OPT_HELP_ALL:
            return help_all();
        case OPT_VERSION:
            return mmp_cli_version(prog);
        default:
            if (c == '?' && optopt == 'q') {
                mmp_cli_error(prog, "unknown option '-q' (quiet is --quiet)");
                return MMP_EXIT_USAGE;
            }
            return mmp_cli_option_error(prog, c, argv, shortopts);
        }
    }
    if (argc - optind != 1) {
        mmp_cli_error(prog, "expected one input file (see --help)");
        return MMP_EXIT_USAGE;
    }
    o->in_path = argv[optind];
    if (!*o->in_path || (o->out_path && !*o->out_path)) {
        mmp_cli_error(prog, "empty file name for %s", *o->in_path ? "-o" : "IN");
        return MMP_EXIT_USAGE;
    }
    if (o->info &&
        (o->out_path || o->stats || o->force || o->max_pixels_given || o->region_given)) {
        mmp_cli_error(prog, "--info decodes nothing: it takes no %s",
                      o->out_path       ? "-o"
                      : o->stats        ? "--stats"
                      : o->force        ? "--force"
                      : o->region_given ? "--region"
                                        : "--max-pixels");
        return MMP_EXIT_USAGE;
    }
    if (o->out_path && !mmp_imagefile_writes_name(o->out_path)) {
        mmp_cli_error(prog, "-o %s: no writer for %s files (it writes %s)", o->out_path,
                      mmp_imagefile_path_extension(o->out_path), mmp_imagefile_extensions());
        return MMP_EXIT_USAGE;
    }
    if (!o->info && !o->out_path && strcmp(o->in_path, "-") != 0 &&
        mmp_cli_special_path(o->in_path)) {
        mmp_cli_error(prog,
                      "no output name can be made from %s (it lies under /dev, /proc or "
                      "/sys): name the output with -o", o->in_path);
        return MMP_EXIT_USAGE;
    }
    return MMP_CLI_RUN;
}
