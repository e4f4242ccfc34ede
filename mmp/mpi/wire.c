/* The frames of mmp-enc-mpi over a socket and over MPI (wire.h). */
#include "mmp/mpi/wire.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* MPI tags: a frame's header, and the pieces of its blocks. */
#define TAG_FRAME 1
#define TAG_DATA 2
/* Largest piece of one MPI message (counts are ints). */
#define PIECE ((size_t)1 << 30)
/* Largest block a frame may announce: a tile's samples are at most 2 GiB
 * (MMP_MAX_PIXELS of four 16-bit channels), its bytes at most 4 GiB. */
#define MAX_BLOCK ((uint64_t)1 << 33)

void mpi_message_free(mpi_message *m)
{
    free(m->data[0]);
    free(m->data[1]);
    m->data[0] = m->data[1] = NULL;
}

/* All of n bytes written to (send, without SIGPIPE) or read from fd: 0,
 * or -1 at an error or the end of the stream. */
static int move_all(int fd, void *buf, size_t n, int writing)
{
    char *p = buf;
    while (n > 0) {
        const ssize_t k = writing ? send(fd, p, n, MSG_NOSIGNAL) : read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Room for the blocks that m's header announces (one byte at least, so
 * that an empty block is not NULL before it is read). */
static int alloc_blocks(mpi_message *m)
{
    m->data[0] = m->data[1] = NULL;
    for (int b = 0; b < 2; b++) {
        if (m->f.len[b] > MAX_BLOCK)
            return -1;
        if (m->f.len[b] && !(m->data[b] = malloc((size_t)m->f.len[b]))) {
            mpi_message_free(m);
            return -1;
        }
    }
    return 0;
}

int wire_fd_send(int fd, const mpi_frame *f, const void *d0, const void *d1)
{
    const void *d[2] = {d0, d1};
    if (move_all(fd, (void *)f, sizeof *f, 1))
        return -1;
    for (int b = 0; b < 2; b++)
        if (f->len[b] && move_all(fd, (void *)d[b], (size_t)f->len[b], 1))
            return -1;
    return 0;
}

int wire_fd_recv(int fd, mpi_message *m)
{
    m->data[0] = m->data[1] = NULL;
    if (move_all(fd, &m->f, sizeof m->f, 0) || alloc_blocks(m))
        return -1;
    for (int b = 0; b < 2; b++)
        if (m->f.len[b] && move_all(fd, m->data[b], (size_t)m->f.len[b], 0)) {
            mpi_message_free(m);
            return -1;
        }
    return 0;
}

int wire_mpi_send(int peer, const mpi_frame *f, const void *d0, const void *d1)
{
    const char *d[2] = {d0, d1};
    MPI_Send(f, (int)sizeof *f, MPI_BYTE, peer, TAG_FRAME, MPI_COMM_WORLD);
    for (int b = 0; b < 2; b++)
        for (uint64_t at = 0; at < f->len[b]; at += PIECE) {
            const size_t n = f->len[b] - at < PIECE ? (size_t)(f->len[b] - at) : PIECE;
            MPI_Send(d[b] + at, (int)n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        }
    return 0;
}

int wire_mpi_recv(int peer, mpi_message *m, int *from)
{
    MPI_Status s;
    m->data[0] = m->data[1] = NULL;
    MPI_Recv(&m->f, (int)sizeof m->f, MPI_BYTE, peer, TAG_FRAME, MPI_COMM_WORLD, &s);
    if (from)
        *from = s.MPI_SOURCE;
    /* The sender waits for its blocks to be received: without room for
     * them this rank cannot go on, and the job ends (mpirun's message). */
    if (alloc_blocks(m)) {
        fprintf(stderr, "mmp-enc-mpi: out of memory for a frame of %llu and %llu bytes\n",
                (unsigned long long)m->f.len[0], (unsigned long long)m->f.len[1]);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return -1;
    }
    for (int b = 0; b < 2; b++)
        for (uint64_t at = 0; at < m->f.len[b]; at += PIECE) {
            const size_t n = m->f.len[b] - at < PIECE ? (size_t)(m->f.len[b] - at) : PIECE;
            MPI_Recv((char *)m->data[b] + at, (int)n, MPI_BYTE, s.MPI_SOURCE, TAG_DATA,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    return 0;
}

int wire_mpi_ready(int peer, int *from)
{
    int flag = 0;
    MPI_Status s;
    MPI_Iprobe(peer, TAG_FRAME, MPI_COMM_WORLD, &flag, &s);
    if (flag && from)
        *from = s.MPI_SOURCE;
    return flag;
}

void wire_nap(void)
{
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
}

double wire_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
