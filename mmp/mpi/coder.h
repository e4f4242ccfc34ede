/*
 * The coder process of a rank of mmp-enc-mpi (docs/cluster.md): every
 * rank's MPI process forks one before MPI_Init, and the coder codes the
 * tiles the rank is given, through mmp/enc/tiled.h, over a socket to its
 * rank's process (the frames of wire.h). The rank's process stays small
 * and talks to rank 0: when its coder fails or is killed (a crash, the
 * kernel's out-of-memory killer, kill -9), the rank's process makes the
 * answer that says so, and rank 0 ends the run with one line and exit
 * status 1 instead of the job dying in pieces. The coder ends when its
 * rank's process does.
 */
#ifndef MMP_MPI_CODER_H
#define MMP_MPI_CODER_H

#include <sys/types.h>

#include "mmp/cli/enc_options.h"
#include "mmp/mpi/wire.h"

typedef struct mpi_coder {
    int fd; /* the rank's end of the socket */
    pid_t pid;
    int rank;        /* the rank it codes for, in the answers made for it */
    int dead;        /* it ended: */
    int status;      /* its wait status */
    char death[160]; /* how, as a reason ("its coder process was killed by ...") */
    int busy_tile;   /* the tile it was sent and has not answered, or -1 */
    int job;         /* the job of the frames it was sent last */
    int finishing;   /* it was sent DONE and has not answered */
    int made;        /* an answer made for it waits in `answer` */
    mpi_frame answer;
} mpi_coder;

/* Forks the coder of the rank's options o (every rank parses the same
 * command line). Returns 0, or -1 with errno. */
int mpi_coder_start(mpi_coder *c, const mmp_enc_options *o);

/* A frame to the coder. To a coder that has ended, the answer it would
 * have given is made: ERROR for a TILE, FINISHED with an error for a DONE,
 * saying how it ended. */
void mpi_coder_send(mpi_coder *c, const mpi_frame *f, const void *d0, const void *d1);

/* 1 when an answer waits (polled for up to timeout_ms), else 0. */
int mpi_coder_ready(mpi_coder *c, int timeout_ms);

/* The next answer: the coder's, or the one made when it ended (it then
 * waits no longer). */
void mpi_coder_recv(mpi_coder *c, mpi_message *m);

/* QUIT to the coder, and its end waited for: 0, or -1 when it ended
 * otherwise than with status 0 (c->death says how). */
int mpi_coder_stop(mpi_coder *c);

#endif
