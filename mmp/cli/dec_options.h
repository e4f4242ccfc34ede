/*
 * mmp-dec's command line: argv parsed into one struct before anything is
 * read (dec_options.c); mmp-dec's main (dec_main.c) runs what it says.
 */
#ifndef MMP_CLI_DEC_OPTIONS_H
#define MMP_CLI_DEC_OPTIONS_H

#include <getopt.h>
#include <stdint.h>

#include "mmp/cli/cli.h"

/* The program's name in its messages. */
#define MMP_DEC_PROG "mmp-dec"

typedef struct mmp_dec_options {
    const char *in_path;  /* IN.mmp ("-": standard input) */
    const char *out_path; /* -o FILE ("-": standard output), or NULL: named after IN */
    int force;            /* -f: the name made from IN may replace a regular file */
    uint64_t max_pixels;  /* --max-pixels (default MMP_CLI_DEFAULT_MAX_PIXELS) */
    int max_pixels_given; /* --max-pixels was given */
    int info;             /* --info: print the header fields, decode nothing */
    int region_given;     /* --region X,Y,W,H: */
    int region[4];        /*   the window to decode */
    int stats;            /* --stats */
    int verbose;          /* -v (a later --quiet turns it off) */
    int quiet;            /* --quiet: no warnings (a later -v turns it off) */
} mmp_dec_options;

/*
 * Parse argv into *o. Usage errors print one line "mmp-dec: ..." on stderr
 * and return MMP_EXIT_USAGE; --help, --help-all and --version print their
 * text and return 0 (MMP_EXIT_FAILURE when standard output cannot be
 * written). Returns MMP_CLI_RUN when the command is to run: IN is there,
 * no name is empty, -o's names a format that mmp_imagefile_format writes
 * (or has no extension), --info comes without -o, --stats, --force and
 * --max-pixels, and without -o IN is "-" or a path that an output may be
 * named after (not under /dev, /proc or /sys: mmp_cli_special_path).
 */
int mmp_dec_options_parse(mmp_dec_options *o, int argc, char **argv);

/* The long options getopt_long accepts, ending with a zeroed entry
 * (the tests compare them with --help-all and the manual page). */
extern const struct option mmp_dec_long_options[];

#endif
