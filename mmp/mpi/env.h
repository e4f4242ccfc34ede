/*
 * What a rank of mmp-enc-mpi reads of its environment: its rank before
 * MPI_Init (so that one rank alone prints what the command line says),
 * and the tests' ways to make a rank fail (MMP_MPI_TEST, docs/cluster.md).
 */
#ifndef MMP_MPI_ENV_H
#define MMP_MPI_ENV_H

/* The rank that the launcher gave the process (Open MPI's
 * OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, PMI's PMI_RANK, Slurm's
 * SLURM_PROCID, the first that is set), or 0. */
int mpi_env_rank(void);

/* The rank that MMP_MPI_TEST=MODE:RANK names for `mode`, or -1. The modes:
 * "fail" (the rank's coder answers its first tile with an error),
 * "kill-coder" (the rank's coder kills itself with SIGKILL after its first
 * tile), "kill-rank" (the rank's MPI process does, when it passes on its
 * coder's first result). */
int mpi_test_rank(const char *mode);

#endif
