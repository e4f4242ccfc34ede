/*
 * The coder process of a rank (coder.h): its loop over the frames its
 * rank's process sends, and that process's side of the socket.
 */
#include "mmp/mpi/coder.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "mmp/cli/cli.h"
#include "mmp/mpi/env.h"

/* What the coder process keeps between frames. */
typedef struct coder_state {
    int fd;
    const mmp_enc_options *o; /* the rank's own parse of the command line */
    int job, rank, local_rank, ranks, want_recon;
    mmp_settings st; /* rank 0's, with this rank's pointers */
    mmp_tiled_plan plan;
    mmp_tile_coder *tc; /* started at the job's first tile */
    int tc_err;         /* it failed to start: every tile of the job fails so */
    char tc_why[512];
    char device[32]; /* "P:D": the GPU of the local rank, or "" */
    int device_known;
    int tiles; /* tiles coded in all (for MMP_MPI_TEST) */
} coder_state;

/* The library's messages, each a line naming the rank: warnings unless
 * --quiet, figures with -v; errors come back in the answers. */
static void coder_log(void *opaque, int level, const char *msg)
{
    const coder_state *cs = opaque;
    if (level == MMP_LOG_WARNING && !cs->o->quiet)
        fprintf(stderr, "%s: rank %d: warning: %s\n", mmp_enc_prog, cs->rank, msg);
    else if (level == MMP_LOG_INFO && cs->o->st.verbose)
        fprintf(stderr, "rank %d: %s\n", cs->rank, msg);
}

/* After each step of blocks: a STOP of this job waiting on the socket
 * stops the tile. Nothing else comes while a tile is coded but the run's
 * end (QUIT, or the socket closed), which ends the process. */
static int coder_progress(void *opaque, int done, int total)
{
    coder_state *cs = opaque;
    struct pollfd p = {.fd = cs->fd, .events = POLLIN};
    int stop = 0;
    while (!stop && poll(&p, 1, 0) > 0) {
        mpi_message m;
        if (wire_fd_recv(cs->fd, &m))
            _exit(0);
        if (m.f.kind == FRAME_QUIT)
            _exit(0);
        stop = m.f.kind == FRAME_STOP && m.f.job == cs->job;
        mpi_message_free(&m);
    }
    return stop;
}

/*
 * The device of the rank's coder: --cl-device's or MMP_CL_DEVICE's when
 * given; else, for the engines that use one (opencl, auto), the GPU of
 * the rank's local rank among the machine's GPUs (modulo their number),
 * written "P:D"; else none (the engine's default).
 */
static const char *rank_device(coder_state *cs)
{
    const char *engine = cs->o->st.engine ? cs->o->st.engine : "auto";
    if (cs->o->st.device)
        return cs->o->st.device;
    if ((strcmp(engine, "opencl") != 0 && strcmp(engine, "auto") != 0) ||
        !mmp_engine_exists("opencl"))
        return NULL;
    if (!cs->device_known) {
        mmp_device_info dev[64];
        int pick = -1, gpus[64], ngpu = 0;
        const int n = mmp_engine_devices("opencl", dev, 64, NULL, &pick, NULL, 0);
        for (int i = 0; i < n && i < 64; i++)
            if (dev[i].is_gpu)
                gpus[ngpu++] = i;
        if (ngpu > 0) {
            const mmp_device_info *d = &dev[gpus[cs->local_rank % ngpu]];
            snprintf(cs->device, sizeof cs->device, "%d:%d", d->platform, d->device);
            if (cs->o->st.verbose)
                fprintf(stderr, "rank %d: GPU %s (%s), local rank %d of %d GPUs\n", cs->rank,
                        cs->device, d->name, cs->local_rank, ngpu);
        }
        cs->device_known = 1;
    }
    return cs->device[0] ? cs->device : NULL;
}

static void end_job(coder_state *cs)
{
    mmp_tile_coder_free(cs->tc);
    cs->tc = NULL;
    cs->tc_err = 0;
}

static void start_job(coder_state *cs, const mpi_frame *f)
{
    end_job(cs);
    cs->job = f->job;
    cs->rank = f->rank;
    cs->local_rank = f->local_rank;
    cs->ranks = f->ranks > 0 ? f->ranks : 1;
    cs->want_recon = f->want_recon;
    cs->plan = f->plan;
    /* Rank 0's settings, whose pointers are its own: these are this
     * process's, from the same command line. */
    cs->st = f->st;
    cs->st.engine = cs->o->st.engine;
    cs->st.engine_tune = cs->o->st.engine_tune;
    cs->st.device = rank_device(cs);
    cs->st.chunks = NULL;
    cs->st.nchunks = 0;
    cs->st.log = coder_log;
    cs->st.log_opaque = cs;
    cs->st.progress = coder_progress;
    cs->st.progress_opaque = cs;
}

/* The coder of the job, started at its first tile: auto's choice of engine
 * sees the rank's share of the blocks. 0 or its error (cs->tc_why). */
static int job_coder(coder_state *cs)
{
    if (!cs->tc && !cs->tc_err) {
        long blocks = 0;
        for (int i = 0; i < mmp_tiled_count(&cs->plan); i++)
            blocks += mmp_tiled_tile_blocks(&cs->plan, i);
        cs->tc_err = mmp_tile_coder_new(&cs->st, &cs->plan, (blocks + cs->ranks - 1) / cs->ranks, 0,
                                        &cs->tc, cs->tc_why, sizeof cs->tc_why);
    }
    return cs->tc_err;
}

static void code_tile(coder_state *cs, const mpi_message *m)
{
    mpi_frame a = {.kind = FRAME_ERROR, .job = cs->job, .tile = m->f.tile, .rank = cs->rank};
    const mpi_frame *f = &m->f;
    mmp_image part = {.width = f->width,
                      .height = f->height,
                      .maxval = f->maxval,
                      .channels = f->channels,
                      .pix = m->data[0]};
    mmp_image rec = {0};
    uint8_t *payload = NULL;
    size_t len = 0;
    const uint64_t samples = (uint64_t)f->width * (uint64_t)f->height * (uint64_t)f->channels;
    if (f->width < 1 || f->height < 1 || f->len[0] != samples * sizeof(uint16_t)) {
        a.code = MMP_EINVAL;
        snprintf(a.why, sizeof a.why, "tile %d came with %llu bytes for %dx%d samples", f->tile,
                 (unsigned long long)f->len[0], f->width, f->height);
    } else if ((a.code = job_coder(cs))) {
        snprintf(a.why, sizeof a.why, "%s", cs->tc_why);
    } else if (cs->want_recon && (a.code = mmp_image_alloc_channels(&rec, f->width, f->height,
                                                                    f->channels, f->maxval))) {
        snprintf(a.why, sizeof a.why, "out of memory");
    } else {
        const double t0 = wire_seconds();
        a.code = mmp_tile_coder_code(cs->tc, f->tile, &part, &payload, &len,
                                     cs->want_recon ? &rec : NULL, a.why, sizeof a.why);
        a.seconds = wire_seconds() - t0;
    }
    cs->tiles++;
    /* The tests' ways to fail a rank after its first tile (docs/cluster.md). */
    if (cs->tiles == 1 && mpi_test_rank("kill-coder") == cs->rank)
        raise(SIGKILL);
    if (!a.code && cs->tiles == 1 && mpi_test_rank("fail") == cs->rank) {
        a.code = MMP_EINVAL;
        snprintf(a.why, sizeof a.why, "failed as MMP_MPI_TEST asks");
    }
    if (!a.code) {
        a.kind = FRAME_RESULT;
        a.width = f->width;
        a.height = f->height;
        a.channels = f->channels;
        a.maxval = f->maxval;
        a.len[0] = len;
        a.len[1] = cs->want_recon ? samples * sizeof(uint16_t) : 0;
    }
    wire_fd_send(cs->fd, &a, payload, rec.pix);
    free(payload);
    mmp_image_free(&rec);
}

static void finish_job(coder_state *cs)
{
    mpi_frame a = {.kind = FRAME_FINISHED, .job = cs->job, .rank = cs->rank};
    if (cs->tc)
        a.code = mmp_tile_coder_finish(cs->tc, &a.totals, a.why, sizeof a.why);
    end_job(cs);
    wire_fd_send(cs->fd, &a, NULL, NULL);
}

/* The coder process: frames until QUIT, or until its rank's process is
 * gone. */
static int coder_main(int fd, const mmp_enc_options *o)
{
    coder_state cs = {.fd = fd, .o = o};
    for (;;) {
        mpi_message m;
        if (wire_fd_recv(fd, &m))
            break;
        const int kind = m.f.kind;
        if (kind == FRAME_JOB)
            start_job(&cs, &m.f);
        else if (kind == FRAME_TILE)
            code_tile(&cs, &m);
        else if (kind == FRAME_DONE)
            finish_job(&cs);
        mpi_message_free(&m);
        if (kind == FRAME_QUIT)
            break;
    }
    end_job(&cs);
    return 0;
}

int mpi_coder_start(mpi_coder *c, const mmp_enc_options *o)
{
    memset(c, 0, sizeof *c);
    c->busy_tile = -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return -1;
    const pid_t parent = getpid();
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        close(sv[0]);
        close(sv[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
#ifdef __linux__
        /* The coder dies with its rank's process, however that ends. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        if (getppid() != parent)
            _exit(0);
        exit(coder_main(sv[1], o));
    }
    close(sv[1]);
    c->fd = sv[0];
    c->pid = pid;
    return 0;
}

/* The coder has ended (its socket closed): reaped, and how it ended
 * written down. */
static void bury(mpi_coder *c)
{
    if (c->dead)
        return;
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    c->status = status;
    if (WIFSIGNALED(status))
        snprintf(c->death, sizeof c->death, "its coder process was killed by signal %d (%s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(c->death, sizeof c->death, "its coder process ended (exit status %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    close(c->fd);
    c->fd = -1;
    c->dead = 1;
}

/* For a coder that has ended: the answer it owes, if any. */
static void make_answer(mpi_coder *c)
{
    mpi_frame *a = &c->answer;
    memset(a, 0, sizeof *a);
    a->job = c->job;
    a->rank = c->rank;
    a->code = MMP_EENGINE;
    snprintf(a->why, sizeof a->why, "%s", c->death);
    if (c->busy_tile >= 0) {
        a->kind = FRAME_ERROR;
        a->tile = c->busy_tile;
        c->busy_tile = -1;
        c->made = 1;
    } else if (c->finishing) {
        a->kind = FRAME_FINISHED;
        c->finishing = 0;
        c->made = 1;
    }
}

void mpi_coder_send(mpi_coder *c, const mpi_frame *f, const void *d0, const void *d1)
{
    c->job = f->job;
    if (f->kind == FRAME_TILE)
        c->busy_tile = f->tile;
    else if (f->kind == FRAME_DONE)
        c->finishing = 1;
    if (!c->dead && wire_fd_send(c->fd, f, d0, d1))
        bury(c);
    if (c->dead && !c->made)
        make_answer(c);
}

int mpi_coder_ready(mpi_coder *c, int timeout_ms)
{
    if (c->made)
        return 1;
    if (c->dead)
        return 0;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) > 0;
}

void mpi_coder_recv(mpi_coder *c, mpi_message *m)
{
    memset(m, 0, sizeof *m);
    if (!c->made && !c->dead) {
        if (wire_fd_recv(c->fd, m) == 0) {
            if (m->f.kind == FRAME_RESULT || m->f.kind == FRAME_ERROR)
                c->busy_tile = -1;
            else if (m->f.kind == FRAME_FINISHED)
                c->finishing = 0;
            return;
        }
        bury(c);
        make_answer(c);
    }
    if (c->made) {
        m->f = c->answer;
        c->made = 0;
    }
}

int mpi_coder_stop(mpi_coder *c)
{
    if (c->dead)
        return 0; /* its end was an answer already */
    const mpi_frame q = {.kind = FRAME_QUIT};
    wire_fd_send(c->fd, &q, NULL, NULL);
    /* Its end: EOF on the socket. */
    char b;
    while (read(c->fd, &b, 1) > 0)
        ;
    bury(c);
    return c->status == 0 ? 0 : -1;
}
