/*
 * mmp-dec: decode an .mmp file to an image file (PGM, PPM, PAM or PNG).
 * The command line is parsed by dec_options.c; this file runs it: --info,
 * or read and decode the file, name and check the output, write it and
 * report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "mmp/cli/cli.h"
#include "mmp/cli/dec_options.h"
#include "mmp/cli/meta_chunks.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"

static const char *const prog = MMP_DEC_PROG;

/* The first bytes of every .mmp file (docs/format.md, section 2): mmp-dec
 * reads no further into a file that does not start with them. */
static const char mmp_magic[] = "MMPi";

/* IN with the extension of `fmt` in place of .mmp. */
static char *derive_name(const char *in_path, mmp_file_format fmt)
{
    size_t n = strlen(in_path);
    char *name = malloc(n + 5);
    if (!name)
        return NULL;
    memcpy(name, in_path, n + 1);
    if (n > 4 && strcmp(name + n - 4, ".mmp") == 0)
        name[n - 4] = 0;
    strcat(name, mmp_imagefile_extension(fmt));
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
    int e = mmp_cli_read_file(in_path, (size_t)MMP_MAX_FILE_BYTES, mmp_magic, &buf, &len, err,
                              sizeof err);
    if (e) {
        mmp_cli_error(prog, "%s", err);
        return MMP_EXIT_FAILURE;
    }
    e = mmp_probe(buf, len, &fi, err, sizeof err);
    mmp_chunk chunks[64];
    const int nchunks = e ? 0 : mmp_chunks(buf, len, chunks, 64, NULL, 0);
    char list[64 * 24] = "";
    for (int i = 0, at = 0; i < nchunks && i < 64; i++)
        at += snprintf(list + at, sizeof list - (size_t)at, "%s%s:%zu", i ? " " : "",
                       chunks[i].type, chunks[i].len);
    free(buf);
    if (e) {
        mmp_cli_error(prog, "%s: %s", strcmp(in_path, "-") ? in_path : "standard input", err);
        return MMP_EXIT_FAILURE;
    }
    printf("version=%d.%d\nplanes=%d\nlog2_block=%d\nlog2_pmin=%d\n", fi.version,
           fi.version_minor, fi.planes, fi.log2_block, fi.log2_pmin);
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
    /* A reversible colour transform: rct-, the channels in the order they
     * are taken as A, B, C, and the type (docs/format.md 7.2). */
    static const char *const rct_order[] = {"rgb", "rbg", "grb", "gbr", "brg", "bgr"};
    if (fi.transform >= MMP_TRANSFORM_RCT)
        printf("transform=rct-%s-%d\n", rct_order[(fi.transform - MMP_TRANSFORM_RCT) / 7],
               (fi.transform - MMP_TRANSFORM_RCT) % 7);
    else
        printf("transform=%s\n", transform[fi.transform]);
    printf("chroma=%s\nalpha=%s\n", fi.chroma == MMP_CHROMA_420 ? "420" : "444",
           alpha[fi.alpha]);
    /* The bound on every decoded sample's error: lossless, near-lossless or none. */
    printf("residual=%s\n", residual[fi.residual]);
    if (fi.max_error < 0)
        printf("max_error=none\n");
    else
        printf("max_error=%d\n", fi.max_error);
    printf("dct=%s\n", fi.dct ? "on" : "off");
    printf("deblock=%s\n", fi.deblock ? "on" : "off");
    printf("residual_mix=%s\n", fi.residual_mix ? "on" : "off");
    printf("residual_context=%s\n", fi.residual_context ? "on" : "off");
    printf("crc=0x%08lx\n", (unsigned long)fi.crc);
    printf("tile_width=%d\ntile_height=%d\ntiles=%d\n", fi.tile_width, fi.tile_height,
           fi.tiles);
    /* The ancillary chunks: type:bytes each (the first 64). */
    printf("chunks=%d\n", fi.chunks);
    if (fi.chunks)
        printf("chunk_list=%s\n", list);
    return mmp_cli_stdout_done(prog);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One run: the options, the output and the image decoded. */
typedef struct job {
    const mmp_dec_options *o;
    const char *in_name;  /* IN in messages */
    const char *out_path; /* -o's, "-", or the name derived from IN */
    int derive;           /* the name is derived from IN once its kind is known */
    char *derived;        /* that name (malloc'd) */
    char err[512];
    uint8_t *buf; /* the file's bytes */
    size_t len;
    double secs;  /* reading and decoding */
    mmp_file_info fi;
    mmp_image img;
    mmp_image_out io;   /* img and the format of its file */
    mmp_cli_output out; /* the output file */
    mmp_imageio_meta meta; /* the file's metadata, for the output */
} job;

/* Read the file and check its header: exit status, or 0. */
static int read_input(job *j)
{
    int e = mmp_cli_read_file(j->o->in_path, (size_t)MMP_MAX_FILE_BYTES, mmp_magic, &j->buf,
                              &j->len, j->err, sizeof j->err);
    /* Its messages name the file; the library's do not. */
    if (e)
        mmp_cli_error(prog, "%s", j->err);
    else if ((e = mmp_probe(j->buf, j->len, &j->fi, j->err, sizeof j->err)) != 0)
        mmp_cli_error(prog, "%s: %s", j->in_name, j->err);
    return e ? MMP_EXIT_FAILURE : 0;
}

/* The image as far as the header (and --region) tells it: the output's
 * name and format are chosen from it before anything is decoded. */
static mmp_image header_image(const mmp_dec_options *o, const mmp_file_info *fi)
{
    return (mmp_image){.width = o->region_given ? o->region[2] : fi->width,
                       .height = o->region_given ? o->region[3] : fi->height,
                       .maxval = fi->maxval,
                       .channels = fi->planes};
}

/* The file's metadata for the output (a format that holds none gets a
 * warning when it is written). */
static int take_meta(job *j)
{
    mmp_chunk chunks[1024];
    const int n = mmp_chunks(j->buf, j->len, chunks, 1024, NULL, 0);
    if (n > 0 && mmp_chunks_to_meta(chunks, n, &j->meta, NULL)) {
        mmp_cli_error(prog, "out of memory");
        return MMP_EXIT_FAILURE;
    }
    j->io.meta = &j->meta;
    return 0;
}

/* Without -o, the name of the output once the image's kind is known, and
 * its check: exit status, or 0. */
static int name_output(job *j)
{
    const mmp_image kind = header_image(j->o, &j->fi);
    j->derived = derive_name(j->o->in_path, mmp_imagefile_kind_format(&kind));
    if (!j->derived) {
        mmp_cli_error(prog, "out of memory");
        return MMP_EXIT_FAILURE;
    }
    j->out_path = j->out.path = j->derived;
    const int e = mmp_cli_outputs_check(j->o->in_path, &j->out, 1, j->err, sizeof j->err);
    if (!e)
        return 0;
    mmp_cli_error(prog, "%s", j->err);
    return e == MMP_EINVAL ? MMP_EXIT_USAGE : MMP_EXIT_FAILURE;
}

/* The format the output's name asks for, and the pixel budget, from the
 * header; then the decode: exit status, or 0. */
static int decode(job *j, double t0)
{
    const mmp_image kind = header_image(j->o, &j->fi);
    if (mmp_imagefile_format(j->out_path, &kind, &j->io.fmt, j->err, sizeof j->err)) {
        mmp_cli_error(prog, "%s: %s", strcmp(j->out_path, "-") ? j->out_path : "standard output",
                      j->err);
        return MMP_EXIT_FAILURE;
    }
    const uint64_t pixels = (uint64_t)kind.width * (uint64_t)kind.height;
    if (pixels > j->o->max_pixels) {
        mmp_cli_error(prog, "%s: image of %dx%d = %llu pixels exceeds --max-pixels %llu",
                      j->in_name, kind.width, kind.height, (unsigned long long)pixels,
                      (unsigned long long)j->o->max_pixels);
        return MMP_EXIT_FAILURE;
    }
    const int *r = j->o->region;
    const int e = j->o->region_given
                      ? mmp_decode_region(j->buf, j->len, r[0], r[1], r[2], r[3],
                                          j->o->max_pixels, &j->img, j->err, sizeof j->err)
                      : mmp_decode_limited(j->buf, j->len, j->o->max_pixels, &j->img, j->err,
                                           sizeof j->err);
    j->secs = now_seconds() - t0;
    if (e)
        mmp_cli_error(prog, "%s: %s", j->in_name, j->err);
    return e ? MMP_EXIT_FAILURE : 0;
}

/* -v's line and --stats' line. */
static void report(const job *j)
{
    if (j->o->verbose)
        fprintf(stderr, "%s: %dx%d maxval %d, %zu bytes, %.3f s\n", prog, j->img.width,
                j->img.height, j->img.maxval, j->len, j->secs);
    if (j->o->stats) {
        /* Never into the image: stderr when the output is standard output,
         * by whatever name. */
        FILE *sf = mmp_cli_output_is_stdout(&j->out) ? stderr : stdout;
        fprintf(sf, "bytes=%zu seconds=%.3f width=%d height=%d\n", j->len, j->secs, j->img.width,
                j->img.height);
    }
}

/* The decode of a parsed command line: its exit status. */
static int run(const mmp_dec_options *o)
{
    job j = {.o = o, .out_path = o->out_path};
    j.in_name = strcmp(o->in_path, "-") ? o->in_path : "standard input";
    j.io = (mmp_image_out){.img = &j.img, .fmt = MMP_FILE_PGM};
    /* Without -o the name depends on the kind of image: it is made and
     * checked once the header is read. */
    j.derive = !j.out_path && strcmp(o->in_path, "-") != 0;
    if (!j.out_path && !j.derive)
        j.out_path = "-";
    j.out = (mmp_cli_output){.path = j.out_path,
                             .what = "output",
                             .write = mmp_imagefile_write_out,
                             .opaque = &j.io,
                             .derived = j.derive,
                             .replace = o->force};
    int status = 0;
    if (!j.derive) {
        const int e = mmp_cli_outputs_check(o->in_path, &j.out, 1, j.err, sizeof j.err);
        if (e) {
            mmp_cli_error(prog, "%s", j.err);
            status = e == MMP_EINVAL ? MMP_EXIT_USAGE : MMP_EXIT_FAILURE;
        }
    }
    const double t0 = now_seconds();
    if (!status)
        status = read_input(&j);
    if (!status && j.derive)
        status = name_output(&j);
    if (!status)
        status = take_meta(&j);
    if (!status)
        status = decode(&j, t0);
    if (!status && mmp_cli_outputs_write(&j.out, 1, j.err, sizeof j.err)) {
        mmp_cli_error(prog, "%s", j.err);
        status = MMP_EXIT_FAILURE;
    }
    if (!status && j.io.meta_warn[0] && !j.o->quiet)
        fprintf(stderr, "%s: warning: %s: %s\n", prog,
                strcmp(j.out_path, "-") ? j.out_path : "standard output", j.io.meta_warn);
    if (!status)
        report(&j);
    mmp_cli_outputs_free(&j.out, 1);
    free(j.buf);
    free(j.derived);
    mmp_image_free(&j.img);
    mmp_imageio_meta_free(&j.meta);
    return status ? status : mmp_cli_stdout_done(prog);
}

int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* mmp-dec decodes one file and exits. The tiles of a file each allocate
     * and free their working memory (megabytes); glibc would give the top
     * of the heap back to the system after each tile, only to have the next
     * fault it in again page by page (a tenth of the decoding of 256 x 256
     * tiles), and would map and unmap each block of 128 KiB or more. Keep
     * them (up to 32 MiB a block) until the exit. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    mmp_dec_options o;
    const int status = mmp_dec_options_parse(&o, argc, argv);
    if (status != MMP_CLI_RUN)
        return status;
    if (o.info)
        return print_info(o.in_path);
    return run(&o);
}
