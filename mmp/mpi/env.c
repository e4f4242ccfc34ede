/* What a rank of mmp-enc-mpi reads of its environment (env.h). */
#include "mmp/mpi/env.h"

#include <stdlib.h>
#include <string.h>

int mpi_env_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int mpi_test_rank(const char *mode)
{
    const char *v = getenv("MMP_MPI_TEST");
    const size_t n = strlen(mode);
    if (!v || strncmp(v, mode, n) != 0 || v[n] != ':')
        return -1;
    return atoi(v + n + 1);
}
