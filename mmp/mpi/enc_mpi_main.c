/*
 * mmp-enc-mpi: mmp-enc with the tiles of the image spread over the ranks
 * of an MPI job (docs/cluster.md):
 *
 *     mpirun -np N mmp-enc-mpi [mmp-enc options] IN OUT.mmp
 *
 * Every rank parses the same command line (mmp/cli/enc_options.c) and
 * forks its coder process (coder.c) before MPI_Init. Rank 0 then runs
 * mmp-enc's run (mmp/cli/enc_run.c: the outputs' checks and temporary
 * files, the input, the rate control, the outputs written or removed, the
 * report) with the encoder of farm.c, which hands the tiles to the coders
 * of every rank; the other ranks relay frames between rank 0 and their
 * coder until rank 0 says the run is over. The file is mmp-enc's, byte for
 * byte, whatever the number of ranks.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mmp/cli/cli.h"
#include "mmp/cli/enc_options.h"
#include "mmp/cli/enc_run.h"
#include "mmp/mpi/coder.h"
#include "mmp/mpi/env.h"
#include "mmp/mpi/farm.h"

static int asks_for_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "--help-all"))
            return 1;
    return 0;
}

/* The command line, parsed on every rank alike; what the parse prints
 * (usage errors, --help, --version) only rank 0 prints. */
static int parse(int rank, mmp_enc_options *o, int argc, char **argv)
{
    if (rank == 0) {
        if (asks_for_help(argc, argv))
            printf("Usage: mpirun -np N mmp-enc-mpi [mmp-enc options] IN OUT.mmp\n"
                   "Encodes as mmp-enc does, to the same bytes, with the image's tiles coded\n"
                   "by the ranks of the job: rank 0 reads IN, hands the tiles out and writes\n"
                   "OUT. Each rank's coder runs the engine of -e with -t threads; opencl and\n"
                   "auto take the GPU of the rank's place among its machine's ranks, unless\n"
                   "--cl-device or MMP_CL_DEVICE names one. See docs/cluster.md.\n\n");
        return mmp_enc_options_parse(o, argc, argv);
    }
    fflush(NULL);
    const int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
    if (out >= 0 && err >= 0 && null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
    }
    const int status = mmp_enc_options_parse(o, argc, argv);
    fflush(NULL);
    if (out >= 0 && err >= 0 && null >= 0) {
        dup2(out, 1);
        dup2(err, 2);
    }
    for (int fd = 0, fds[3] = {out, err, null}; fd < 3; fd++)
        if (fds[fd] >= 0)
            close(fds[fd]);
    return status;
}

int main(int argc, char **argv)
{
    mmp_enc_prog = "mmp-enc-mpi";
    const int env_rank = mpi_env_rank();
    mmp_enc_options o;
    int status = parse(env_rank, &o, argc, argv);
    if (status != MMP_CLI_RUN)
        return status;
    if (o.list_devices)
        return env_rank == 0 ? mmp_enc_list_devices(o.st.device, o.dev_label) : 0;
    /* The coder before MPI_Init: a process forked later would share what
     * the MPI library set up. */
    mpi_coder coder;
    if (mpi_coder_start(&coder, &o)) {
        fprintf(stderr, "%s: rank %d: cannot start its coder process: %s\n", mmp_enc_prog, env_rank,
                strerror(errno));
        return MMP_EXIT_FAILURE;
    }
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1, local_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    coder.rank = rank;
    if (rank == 0) {
        mpi_farm farm = {.coder = &coder, .ranks = ranks, .local_rank = local_rank};
        /* Open MPI ends a rank whose peer died with _exit, no handler run:
         * the temporary file is made only once every tile is back. */
        const mmp_cli_encoder enc = {.encode = mpi_farm_encode, .opaque = &farm,
                                     .late_outputs = 1};
        status = mmp_enc_run(&o, &enc);
        mpi_farm_quit(&farm);
    } else {
        mpi_relay(&coder, rank, local_rank);
        status = 0;
    }
    /* A coder that ended badly at the end (a sanitizer's report) fails the
     * rank. Each rank's line in one write, not mixed with another's. */
    if (mpi_coder_stop(&coder) && !status) {
        fprintf(stderr, "%s: rank %d: %s\n", mmp_enc_prog, rank, coder.death);
        status = MMP_EXIT_FAILURE;
    }
    MPI_Finalize();
    return status;
}
