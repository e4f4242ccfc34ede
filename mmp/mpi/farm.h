/*
 * The ranks of mmp-enc-mpi at work (docs/cluster.md). Rank 0 runs mmp-enc's
 * run (mmp/cli/enc_run.h) with an encoder that hands the tiles out to the
 * coders of every rank, its own among them, one tile at a time to whichever
 * coder answers first (a queue: tiles of different content take different
 * times), the costliest first by a guess from their samples, and puts the
 * file together when every tile is back. Every other rank passes the frames
 * between rank 0 and its coder.
 */
#ifndef MMP_MPI_FARM_H
#define MMP_MPI_FARM_H

#include "mmp/mpi/coder.h"

typedef struct mpi_farm {
    mpi_coder *coder; /* rank 0's own */
    int ranks;        /* MPI_COMM_WORLD's size */
    int local_rank;   /* rank 0's among the ranks of its machine */
    int job;          /* encodes so far (the rate control runs several) */
} mpi_farm;

/*
 * mmp_encode's contract (mmp_cli_encoder) over the ranks, `opaque` an
 * mpi_farm: the plan and every check on rank 0, the tiles coded by the
 * coders, the file assembled. A rank's failure (its error, or its coder's
 * end) stops the others at their next step and is returned as one line:
 * "rank R, tile T: reason". With verbose settings each rank's share is
 * logged at MMP_LOG_INFO.
 */
int mpi_farm_encode(void *opaque, const mmp_settings *st, const mmp_image *img, uint8_t **out,
                    size_t *outlen, mmp_image *recon, mmp_enc_stats *stats, char *errbuf,
                    size_t errlen);

/* The run's end: QUIT to every other rank. */
void mpi_farm_quit(const mpi_farm *f);

/* A rank other than 0: rank 0's frames to its coder c and the coder's
 * answers back, until rank 0 says QUIT. */
void mpi_relay(mpi_coder *c, int rank, int local_rank);

#endif
