/*
 * The opencl search engine (mmp_engine_opencl in mmp/engine.h): devices.
 *
 * The engine runs on one OpenCL device, chosen by the environment variable
 * MMP_CL_DEVICE: "P:D" (platform and device indices, as listed by
 * mmp_opencl_list_devices) or a substring of the device name (any case).
 * Without it: the first GPU, else the first device of any kind.
 */
#ifndef MMP_KERNELS_ENGINE_OPENCL_H
#define MMP_KERNELS_ENGINE_OPENCL_H

#include <stdio.h>

/*
 * Prints one line per OpenCL device to f ("P:D  name  [type]  platform,
 * compute units, memory"), the one the engine would use marked with '*'.
 * Returns the number of devices, or MMP_EENGINE (after a line saying why)
 * when there is no platform or no device.
 */
int mmp_opencl_list_devices(FILE *f);

/*
 * Which device the engine would use, quietly: 1 a GPU, 0 another kind of
 * device, MMP_EENGINE none (no platform, no device, or MMP_CL_DEVICE names
 * none). For `-e auto`.
 */
int mmp_opencl_probe(void);

/*
 * For tests: the match() calls an opencl engine state has answered and the
 * batches it sent them in (calls > batches once a batch held several).
 * Exact when no call is in flight.
 */
void mmp_opencl_batch_counts(void *state, long *calls, long *batches);

#endif
