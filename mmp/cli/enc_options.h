/*
 * mmp-enc's command line: argv parsed into one struct before anything is
 * read (enc_options.c); mmp-enc's main (enc_main.c) runs what it says.
 */
#ifndef MMP_CLI_ENC_OPTIONS_H
#define MMP_CLI_ENC_OPTIONS_H

#include <getopt.h>

#include "mmp/cli/cli.h"
#include "mmp/mmp.h"

/* The program's name in its messages: mmp_enc_prog, MMP_ENC_PROG unless
 * another front end that takes mmp-enc's options (mmp-enc-mpi) sets its
 * own before it parses them. */
#define MMP_ENC_PROG "mmp-enc"
extern const char *mmp_enc_prog;

typedef struct mmp_enc_options {
    mmp_settings st;        /* the encoder's settings: the options', MMP_CL_DEVICE's and
                             * MMP_CL_TUNE's; st.verbose is -v */
    const char *in_path;    /* IN ("-": standard input) */
    const char *out_path;   /* OUT.mmp or -o's ("-": standard output) */
    const char *recon_path; /* --recon FILE, or NULL */
    uint64_t max_pixels;    /* --max-pixels (default MMP_CLI_DEFAULT_MAX_PIXELS) */
    int stats;              /* --stats */
    int strip;              /* --strip: the input's metadata is not stored */
    int quiet;              /* --quiet */
    double quality;         /* -q, when quality_given: st holds its lambda (or lossless) */
    int quality_given;
    int list_devices;       /* --list-devices: list them and exit; IN and OUT are not
                             * checked then */
    int rc_kind;            /* MMP_RATE_* (ratectl.h): --target-bpp, --target-psnr,
                             * --max-bytes, or MMP_RATE_NONE */
    double rc_target;       /* the target's value */
    int dev_option;         /* st.device is --cl-device's (else MMP_CL_DEVICE's) */
    int colour_given, chroma_given, chroma_lambda_given, alpha_given;
                            /* options for colour or alpha images given: warned about
                             * (unless --quiet) when the image has no colour or no
                             * alpha */
    char dev_label[256];    /* the device setting as the user gave it, for messages:
                             * "--cl-device DEV" or "MMP_CL_DEVICE=DEV"; "" for none */
} mmp_enc_options;

/*
 * Parse argv into *o. Usage errors print one line "mmp-enc: ..." on stderr
 * and return MMP_EXIT_USAGE; --help, --help-all and --version print their
 * text and return 0 (MMP_EXIT_FAILURE when standard output cannot be
 * written). Returns MMP_CLI_RUN when the command is to run: then either
 * o->list_devices is set, or IN and OUT (or IN and -o) are there, no name
 * is empty, OUT's name ends in .mmp or has no extension, --recon's names a
 * format that mmp_imagefile_format writes, and the options agree (options
 * that no image could use together are a usage error here: -q with another
 * setting of the rate, --residual without a bound, a bound with --chroma
 * 420 or a colour transform that does not keep it; -l with a bound and
 * without --residual mmp, which only the header records, is warned about
 * unless --quiet). -q's quality is in o->st (mmp_set_quality).
 * Reads the environment (MMP_CL_DEVICE, MMP_CL_TUNE), nothing else.
 */
int mmp_enc_options_parse(mmp_enc_options *o, int argc, char **argv);

/* The long options getopt_long accepts, ending with a zeroed entry
 * (the tests compare them with --help-all and the manual page). */
extern const struct option mmp_enc_long_options[];

#endif
