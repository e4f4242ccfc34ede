/*
 * The frames of mmp-enc-mpi (docs/cluster.md): what rank 0 says to the
 * coders of the ranks and what they answer, and how a frame travels, over
 * MPI between ranks and over a socket between a rank's MPI process and
 * its coder process (coder.c). A frame is a fixed header and up to two
 * blocks of bytes after it. Every rank runs the same build on the same
 * architecture: the header holds this build's structs as they are.
 *
 * To a coder:
 *   JOB       an encode begins: rank 0's settings and plan
 *   TILE      code tile `tile`: its samples (width x height x channels)
 *   STOP      stop the tile being coded (another rank failed)
 *   DONE      no more tiles of this job: answer FINISHED
 *   QUIT      the run is over
 * From a coder:
 *   RESULT    tile `tile` coded: its bytes, and its reconstruction when
 *             the job asks for it; `seconds` it took
 *   ERROR     tile `tile` failed with `code`: `why` (MMP_ECANCELED after
 *             STOP)
 *   FINISHED  after DONE: the coder's totals, or its error (code, why)
 */
#ifndef MMP_MPI_WIRE_H
#define MMP_MPI_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "mmp/enc/tiled.h"
#include "mmp/mmp.h"

enum {
    FRAME_JOB = 1,
    FRAME_TILE,
    FRAME_STOP,
    FRAME_DONE,
    FRAME_QUIT,
    FRAME_RESULT,
    FRAME_ERROR,
    FRAME_FINISHED
};

typedef struct mpi_frame {
    int32_t kind; /* FRAME_* */
    int32_t job;  /* the encode it belongs to, counted from 1 */
    int32_t tile;
    int32_t code;       /* ERROR, FINISHED: 0 or an MMP_E* code */
    int32_t rank;       /* JOB: the rank of the coder's process; answers: the sender's */
    int32_t local_rank; /* JOB: its rank among the ranks of its machine */
    int32_t ranks;      /* JOB: how many there are */
    int32_t want_recon; /* JOB: RESULT carries the tile's reconstruction */
    int32_t width, height, channels, maxval; /* TILE's samples, RESULT's reconstruction */
    double seconds;                          /* RESULT: the coder's time on the tile */
    uint64_t len[2];                         /* the bytes that follow the header */
    mmp_settings st;        /* JOB: rank 0's settings (their pointers are not the coder's) */
    mmp_tiled_plan plan;    /* JOB */
    mmp_tile_totals totals; /* FINISHED */
    char why[512];          /* ERROR, FINISHED: one line */
} mpi_frame;

/* A frame and the blocks that follow it (malloc'd, or NULL when empty). */
typedef struct mpi_message {
    mpi_frame f;
    void *data[2];
} mpi_message;

void mpi_message_free(mpi_message *m);

/* Over a stream socket: 0, or -1 when the other end is gone or broke the
 * stream (EOF, a read or write error, a length out of range). The socket
 * is written with MSG_NOSIGNAL: no SIGPIPE. */
int wire_fd_send(int fd, const mpi_frame *f, const void *d0, const void *d1);
int wire_fd_recv(int fd, mpi_message *m);

/* Over MPI_COMM_WORLD to or from rank `peer` (MPI_ANY_SOURCE for recv:
 * *from gets the sender). Blocks of any size, in pieces of at most 1 GiB.
 * 0; a frame whose blocks find no room ends the job (MPI_Abort). */
int wire_mpi_send(int peer, const mpi_frame *f, const void *d0, const void *d1);
int wire_mpi_recv(int peer, mpi_message *m, int *from);

/* Whether a frame from `peer` (MPI_ANY_SOURCE: any) waits to be received:
 * 1 (*from gets its sender), else 0. */
int wire_mpi_ready(int peer, int *from);

/* A short sleep between polls of what has not arrived: a millisecond. */
void wire_nap(void);

/* Seconds of a monotonic clock. */
double wire_seconds(void);

#endif
