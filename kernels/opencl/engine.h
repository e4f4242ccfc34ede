/*
 * The opencl search engine (registered in kernels/registry.c as "opencl"):
 * what tests may see beyond the engine contract of kernels/engine.h.
 */
#ifndef MMP_KERNELS_OPENCL_ENGINE_H
#define MMP_KERNELS_OPENCL_ENGINE_H

/*
 * The match() calls an opencl engine state has answered and the batches it
 * sent them in (calls > batches once a batch held several). Exact when no
 * call is in flight.
 */
void mmp_opencl_batch_counts(void *state, long *calls, long *batches);

#endif
