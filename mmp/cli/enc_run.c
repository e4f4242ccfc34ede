/*
 * mmp-enc's run of a parsed command line (enc_run.h): check the outputs
 * and the device, read the image, encode it (at a lambda, or at the lambda
 * that meets a rate-control target: ratectl.c), write the outputs and
 * report.
 */
#include "mmp/cli/enc_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmp/cli/cli.h"
#include "mmp/cli/meta_chunks.h"
#include "mmp/cli/ratectl.h"
#include "mmp/imageio/imagefile.h"
#include "mmp/mmp.h"

/* The .mmp file's bytes, as mmp_cli_output's writer sees them. */
typedef struct blob {
    uint8_t *data;
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

/* The library's messages: warnings unless --quiet, figures with -v. */
typedef struct log_ctx {
    int quiet, verbose;
} log_ctx;

static void log_message(void *opaque, int level, const char *msg)
{
    const log_ctx *lc = opaque;
    if (level == MMP_LOG_WARNING && !lc->quiet)
        fprintf(stderr, "%s: warning: %s\n", mmp_enc_prog, msg);
    else if (level == MMP_LOG_INFO && lc->verbose)
        fprintf(stderr, "%s\n", msg);
    else if (level == MMP_LOG_ERROR)
        fprintf(stderr, "%s: %s\n", mmp_enc_prog, msg);
}

int mmp_enc_list_devices(const char *spec, const char *label)
{
    mmp_device_info dev[64];
    char err[512] = "";
    int pick = -1;
    const int n = mmp_engine_devices("opencl", dev, 64, spec, &pick, err, sizeof err);
    if (n < 0) {
        mmp_cli_error(mmp_enc_prog, "%s", err);
        return MMP_EXIT_FAILURE;
    }
    for (int i = 0; i < n && i < 64; i++)
        printf("%c %d:%d  %s  [%s]  %s, %u compute units, %llu MiB\n", i == pick ? '*' : ' ',
               dev[i].platform, dev[i].device, dev[i].name, dev[i].type, dev[i].platform_name,
               dev[i].compute_units, dev[i].memory_mib);
    if (pick < 0)
        printf("%s: %s\n", label, err);
    return mmp_cli_stdout_done(mmp_enc_prog);
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
            fprintf(stderr,
                    "%s: warning: %s has no effect with -e %s (only opencl and auto use "
                    "a device)\n",
                    mmp_enc_prog, label, engine);
        return 0;
    }
    mmp_device_info dev[64];
    char why[512] = "";
    int pick = -1;
    const int n = mmp_engine_devices("opencl", dev, 64, st->device, &pick, why, sizeof why);
    if (n >= 0 && pick >= 0 && pick < 64 && (!is_auto || dev[pick].is_gpu))
        return 0;
    if (!is_auto) {
        mmp_cli_error(mmp_enc_prog, "%s: %s", label, why[0] ? why : "no such OpenCL device");
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
                mmp_enc_prog, label, dev[pick].name, dev[pick].type, cpu);
    else
        fprintf(stderr, "%s: warning: %s: %s; -e auto uses the CPU engine %s instead\n",
                mmp_enc_prog, label, why[0] ? why : "no such OpenCL device", cpu);
    return 0;
}

/* One run: the options, the outputs, the image and what the encode gave. */
typedef struct job {
    mmp_enc_options *o;
    char err[512];
    blob b;                 /* the .mmp file's bytes (malloc'd by the encoder) */
    mmp_image img, rec;     /* the input and the encoder's reconstruction */
    mmp_image_out rec_out;  /* rec and the format of --recon's file */
    mmp_cli_output outs[2]; /* --recon, then OUT */
    mmp_cli_output *out;    /* those in use: outs, or outs + 1 without --recon */
    int nout;
    log_ctx lc;
    mmp_enc_stats stats;
    mmp_ratectl_result rc;
    mmp_imageio_meta meta;      /* the input's metadata (none with --strip) */
    const mmp_cli_encoder *enc; /* the encoder, NULL: mmp_encode */
    mmp_chunk_set chunks;       /* as the file's ancillary chunks */
} job;

/* The outputs checked before anything is read: exit status, or 0. */
static int check_outputs(job *j)
{
    const mmp_enc_options *o = j->o;
    /* The reconstruction first in the list (its temporary file is written
     * first); neither output is renamed into place unless both are written. */
    j->outs[0] = (mmp_cli_output){.path = o->recon_path,
                                  .what = "--recon",
                                  .write = mmp_imagefile_write_out,
                                  .opaque = &j->rec_out};
    j->outs[1] = (mmp_cli_output){
        .path = o->out_path, .what = "output", .write = write_blob, .opaque = &j->b};
    j->outs[0].late = j->outs[1].late = j->enc && j->enc->late_outputs;
    j->out = o->recon_path ? j->outs : j->outs + 1;
    j->nout = o->recon_path ? 2 : 1;
    const int e = mmp_cli_outputs_check(o->in_path, j->out, j->nout, j->err, sizeof j->err);
    if (!e)
        return 0;
    mmp_cli_error(mmp_enc_prog, "%s", j->err);
    return e == MMP_EINVAL ? MMP_EXIT_USAGE : MMP_EXIT_FAILURE;
}

/* One line (unless --quiet) for options given that the image has no use for:
 * the colour options on a grey image, --alpha on an image without alpha.
 * The encode goes on as it would without them. */
static void warn_unused(const mmp_enc_options *o, const mmp_image *img)
{
    if (o->quiet)
        return;
    if (mmp_image_channels(img) < 3 &&
        (o->colour_given || o->chroma_given || o->chroma_lambda_given)) {
        char list[64] = "";
        snprintf(list, sizeof list, "%s%s%s%s%s", o->colour_given ? "--colour" : "",
                 o->colour_given && (o->chroma_given || o->chroma_lambda_given) ? ", " : "",
                 o->chroma_given ? "--chroma" : "",
                 o->chroma_given && o->chroma_lambda_given ? ", " : "",
                 o->chroma_lambda_given ? "--chroma-lambda" : "");
        fprintf(stderr, "%s: warning: %s: no effect on a grey image (it has no colour planes)\n",
                mmp_enc_prog, list);
    }
    if (o->alpha_given && !mmp_image_has_alpha(img))
        fprintf(stderr, "%s: warning: --alpha: no effect on an image without an alpha channel\n",
                mmp_enc_prog);
}

/* The image, and the format of --recon's file: exit status, or 0. */
static int read_input(job *j)
{
    const char *in_path = j->o->in_path, *recon_path = j->o->recon_path;
    /* --max-pixels is checked on the file's header, before the samples
     * are allocated. */
    const int e = mmp_imagefile_read_path_limited(
        in_path, j->o->max_pixels, &j->img, j->o->strip ? NULL : &j->meta, j->err, sizeof j->err);
    if (e) {
        /* The file named once: "cannot open X: ..." names it already. */
        const int budget = e == MMP_ELIMIT && strstr(j->err, "exceeds the limit of");
        if (strncmp(j->err, "cannot open ", 12) == 0)
            mmp_cli_error(mmp_enc_prog, "%s", j->err);
        else
            mmp_cli_error(mmp_enc_prog, "%s: %s%s",
                          strcmp(in_path, "-") ? in_path : "standard input", j->err,
                          budget ? " (--max-pixels)" : "");
        return MMP_EXIT_FAILURE;
    }
    warn_unused(j->o, &j->img);
    /* Metadata is never dropped silently: what the reader could not keep. */
    if (j->meta.lost[0] && !j->o->quiet)
        fprintf(stderr, "%s: warning: %s: not stored: %s\n", mmp_enc_prog,
                strcmp(in_path, "-") ? in_path : "standard input", j->meta.lost);
    if (mmp_meta_to_chunks(&j->meta, &j->chunks)) {
        mmp_cli_error(mmp_enc_prog, "out of memory");
        return MMP_EXIT_FAILURE;
    }
    j->o->st.chunks = j->chunks.chunks;
    j->o->st.nchunks = j->chunks.n;
    j->rec_out.meta = &j->meta;
    /* The reconstruction has the input's kind and maxval: a --recon name
     * that cannot hold it fails before the encode, not after. */
    if (recon_path &&
        mmp_imagefile_format(recon_path, &j->img, &j->rec_out.fmt, j->err, sizeof j->err)) {
        mmp_cli_error(mmp_enc_prog, "--recon %s: %s", recon_path, j->err);
        return MMP_EXIT_FAILURE;
    }
    return 0;
}

/* Encode at the settings' lambda, or at the one that meets the target:
 * exit status, or 0. */
static int encode(job *j)
{
    mmp_enc_options *o = j->o;
    mmp_settings *st = &o->st;
    int e;
    if (o->rc_kind == MMP_RATE_NONE) {
        /* The reconstruction (two bytes a sample, held through the encode)
         * only for what reads it: --recon, and the PSNR of -v and
         * --stats. */
        const int want_rec = o->recon_path || o->stats || st->verbose;
        e = j->enc ? j->enc->encode(j->enc->opaque, st, &j->img, &j->b.data, &j->b.len,
                                    want_rec ? &j->rec : NULL, &j->stats, j->err, sizeof j->err)
                   : mmp_encode(st, &j->img, &j->b.data, &j->b.len, want_rec ? &j->rec : NULL,
                                &j->stats, j->err, sizeof j->err);
    } else {
        e = mmp_ratectl_encode(st, j->enc, &j->img, o->rc_kind, o->rc_target, &j->b.data, &j->b.len,
                               &j->rec, &j->stats, &j->rc, st->verbose ? stderr : NULL,
                               mmp_enc_prog, j->err, sizeof j->err);
        if (!e) {
            const mmp_ratectl_probe *p = &j->rc.probe[j->rc.chosen];
            st->lambda = p->lambda;
            j->stats.seconds = j->rc.seconds;
            if (!o->quiet)
                fprintf(stderr,
                        "%s: lambda %.15g%s chosen (%s %.15g) after %d probes in %.3f s: %zu "
                        "bytes, %.4f bpp, PSNR %.4f dB\n",
                        mmp_enc_prog, p->lambda,
                        p->restoration || !st->restoration ? "" : " --filter off",
                        mmp_ratectl_option(o->rc_kind), o->rc_target, j->rc.probes, j->rc.seconds,
                        p->bytes, p->bpp, p->psnr);
        }
    }
    if (!e)
        return 0;
    mmp_cli_error(mmp_enc_prog, "%s", j->err);
    return MMP_EXIT_FAILURE;
}

/* -v's lines and --stats' line, once the outputs are written. */
static void report(const job *j)
{
    const mmp_enc_options *o = j->o;
    const mmp_enc_stats *stats = &j->stats;
    const mmp_image *img = &j->img;
    const size_t outlen = j->b.len;
    const double bpp = 8.0 * outlen / ((double)img->width * img->height);
    const double psnr = mmp_psnr(img, &j->rec);
    if (o->st.verbose) {
        char head[64] = "";
        if (stats->head_steps)
            snprintf(head, sizeof head, " (the first %ld steps on a CPU engine)",
                     stats->head_steps);
        char tiles[64] = "";
        if (stats->tiles > 1)
            snprintf(tiles, sizeof tiles, ", %d tiles, %d at once", stats->tiles,
                     stats->tile_workers);
        fprintf(stderr,
                "%s: engine %s%s%s: search %.3f s, coding and dictionary updates %.3f s%s\n",
                mmp_enc_prog, stats->engine, head, tiles, stats->search_seconds,
                stats->code_seconds, stats->tile_workers > 1 ? " (thread-seconds)" : "");
    }
    char planes[128] = "";
    for (int p = 0, at = 0; p < stats->planes && at < (int)sizeof planes; p++)
        at +=
            snprintf(planes + at, sizeof planes - at, "%s%.4f", p ? "," : "", stats->plane_psnr[p]);
    if (o->st.verbose)
        fprintf(stderr,
                "%s: %dx%d maxval %d, lambda %.15g, %zu bytes, %.4f bpp, PSNR %.4f dB "
                "(planes %s), %.3f s, %llu dictionary elements\n",
                mmp_enc_prog, img->width, img->height, img->maxval, o->st.lambda, outlen, bpp, psnr,
                planes, stats->seconds, (unsigned long long)stats->dict_elements);
    if (!o->stats)
        return;
    /* Never into an output: stderr when one is standard output, by
     * whatever name ("-", /dev/stdout, the file stdout goes to). */
    int taken = 0;
    for (int i = 0; i < j->nout; i++)
        taken |= mmp_cli_output_is_stdout(&j->out[i]);
    FILE *f = taken ? stderr : stdout;
    fprintf(f,
            "bytes=%zu bpp=%.6f psnr=%.4f seconds=%.3f width=%d height=%d lambda=%.15g "
            "engine=%s channels=%d plane_psnr=%s",
            outlen, bpp, psnr, stats->seconds, img->width, img->height, o->st.lambda, stats->engine,
            mmp_image_channels(img), planes);
    if (o->rc_kind != MMP_RATE_NONE)
        fprintf(f, " probes=%d", j->rc.probes);
    fprintf(f, " max_abs_error=%d", max_abs_error(img, &j->rec));
    fputc('\n', f);
}

int mmp_enc_run(mmp_enc_options *o, const mmp_cli_encoder *enc)
{
    job j = {.o = o, .enc = enc, .rec_out = {.fmt = MMP_FILE_PGM}};
    j.rec_out.img = &j.rec;
    int status = check_outputs(&j);
    if (!status)
        status = check_device(&o->st, o->dev_label, o->dev_option, o->quiet);
    if (!status) {
        if (!o->quiet) {
            o->st.progress = mmp_cli_progress;
            o->st.progress_opaque = NULL;
        }
        j.lc = (log_ctx){.quiet = o->quiet, .verbose = o->st.verbose};
        o->st.log = log_message;
        o->st.log_opaque = &j.lc;
        status = read_input(&j);
    }
    if (!status)
        status = encode(&j);
    if (!status) {
        if (mmp_cli_outputs_write(j.out, j.nout, j.err, sizeof j.err)) {
            mmp_cli_error(mmp_enc_prog, "%s", j.err);
            status = MMP_EXIT_FAILURE;
        } else {
            if (j.rec_out.meta_warn[0] && !o->quiet)
                fprintf(stderr, "%s: warning: --recon %s: %s\n", mmp_enc_prog, o->recon_path,
                        j.rec_out.meta_warn);
            report(&j);
        }
    }
    mmp_cli_outputs_free(j.out, j.nout);
    free(j.b.data);
    mmp_image_free(&j.img);
    mmp_image_free(&j.rec);
    mmp_chunk_set_free(&j.chunks);
    mmp_imageio_meta_free(&j.meta);
    return status ? status : mmp_cli_stdout_done(mmp_enc_prog);
}
