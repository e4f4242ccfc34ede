/*
 * The opencl search engine: exhaustive matching on an OpenCL device
 * (registered in kernels/registry.c as "opencl").
 *
 * The kernels (kernels/opencl/match.cl after kernels/opencl/layout.h,
 * embedded in the binary at build time) do all the work of match(): the
 * contract's argmin over the whole dictionary of each residual node's
 * scale, for every mode and every node of the prediction leaf, one
 * work-group per (node, chunk of elements); for leaves whose nodes span
 * several chunks a second small kernel reduces the chunks' results. The
 * host code is split by job (kernels/opencl/opencl.h lists the files).
 *
 * This file makes and unmakes an engine: the choice of device, the build
 * of the kernels for it, the defaults and the tune string that overrides
 * them, and the ops table. The defaults differ by device type because a
 * GPU and a CPU device want different shapes of work (see tune()) and a
 * different number of host threads.
 *
 * Any OpenCL failure is kept (the first one, for last_error, through
 * ocl_fail) and every later call returns MMP_EENGINE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/timing.h"
#include "common/wait.h"
#include "kernels/opencl/opencl.h"

/* Generated from kernels/opencl/layout.h and the .cl files by the Makefile. */
extern const char mmp_opencl_source[];

/* Host threads by default. On a GPU they spend most of their time asleep,
 * waiting for the device, so there are more of them than cores: each
 * holds one call in flight, and the more calls in flight, the more options
 * of the blocks' searches advance in each batch and the fewer batches the
 * image takes (64 threads make about half the batches of 16;
 * docs/tuning.md, "OpenCL engine").
 * On a CPU device few, since its kernels run on the same cores as the
 * search. */
#define DEFAULT_HOST_THREADS_GPU 64
#define DEFAULT_HOST_THREADS_CPU 4
/* How long a thread waiting for a batch spins before it sleeps: on GPUs,
 * when there are cores enough for the host threads (on a CPU device the
 * spinning would take cores from the kernels). */
#define SPIN_S 50e-6
/* Batches in flight at once, by default: one, since while the device runs
 * it the next gathers the requests that arrive, so it is larger; more in
 * flight split the same requests into smaller batches and are no faster,
 * and in wavefront order much less steady (docs/tuning.md). */
#define DEFAULT_BATCHES 1

static const char *cl_errname(cl_int e)
{
    switch (e) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "OpenCL error";
    }
}

int ocl_fail(ocl *ce, cl_int e, const char *what)
{
    const int oom = e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ||
                    e == CL_OUT_OF_HOST_MEMORY || e == CL_INVALID_BUFFER_SIZE;
    pthread_mutex_lock(&ce->fail_lock);
    if (!ce->failed) {
        if (oom)
            snprintf(ce->why, sizeof ce->why,
                     "opencl: out of device memory or resources (%s on %s: %s)", what, ce->name,
                     cl_errname(e));
        else
            snprintf(ce->why, sizeof ce->why, "opencl: %s failed on %s: %s (%d)", what, ce->name,
                     cl_errname(e), (int)e);
    }
    ce->failed = 1;
    pthread_mutex_unlock(&ce->fail_lock);
    return oom ? MMP_ENOMEM : MMP_EENGINE;
}

/* ------------------------------------------------------------ engine */

static void ocl_destroy(void *state)
{
    ocl *ce = state;
    if (!ce)
        return;
    ocl_driver_stop(ce);
    ocl_report(ce);
    free(ce->pf.span);
    for (int i = 0; i < ce->nbatches; i++)
        ocl_batch_release(&ce->batches[i]);
    free(ce->batches);
    while (ce->spare) {
        request *r = ce->spare;
        ce->spare = r->next;
        ocl_request_destroy(r);
    }
    ocl_release_buffers(ce);
    if (ce->k_append)
        clReleaseKernel(ce->k_append);
    if (ce->prog)
        clReleaseProgram(ce->prog);
    if (ce->q)
        clReleaseCommandQueue(ce->q);
    if (ce->ctx)
        clReleaseContext(ce->ctx);
    pthread_mutex_destroy(&ce->lock);
    pthread_mutex_destroy(&ce->spare_lock);
    pthread_mutex_destroy(&ce->fail_lock);
    free(ce);
}

/* Local memory of a match kernel at work-group size wg: what MATCH_BODY of
 * match.cl declares (residuals and mask as int4, the residuals' norms, the
 * work-items' bests). */
static size_t local_bytes(int wg)
{
    return sizeof(cl_int4) * ((size_t)MAXM * LEAF_INT4 + LEAF_INT4) + sizeof(cl_long) * MAXM +
           (size_t)MAXM * wg * (sizeof(cl_long) + sizeof(cl_int));
}

static int build(ocl *ce)
{
    const char *src = mmp_opencl_source;
    cl_int e;
    double t0 = mmp_now_seconds();
    ce->prog = clCreateProgramWithSource(ce->ctx, 1, &src, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "clCreateProgramWithSource");
    char opts[128];
    snprintf(opts, sizeof opts, "-DWG=%d -DVEC=%d -DKT=%d -DMAXM=%d", ce->wg, ce->vec, ce->kt,
             MAXM);
    e = clBuildProgram(ce->prog, 1, &ce->dev, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        snprintf(ce->why, sizeof ce->why, "opencl: the kernels do not build on %s (%s)%s", ce->name,
                 cl_errname(e), ce->verbose ? "; the build log was logged" : "; -v shows the build log");
        if (ce->verbose) {
            size_t len = 0;
            clGetProgramBuildInfo(ce->prog, ce->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
            char *log = malloc(len + 1);
            if (log && clGetProgramBuildInfo(ce->prog, ce->dev, CL_PROGRAM_BUILD_LOG, len, log,
                                             NULL) == CL_SUCCESS) {
                log[len] = 0;
                /* One message per line of the log. */
                for (char *line = log, *nl; line && *line; line = nl) {
                    nl = strchr(line, '\n');
                    if (nl)
                        *nl++ = 0;
                    mmp_log(&ce->log, MMP_LOG_INFO, "opencl build log: %s", line);
                }
            }
            free(log);
        }
        ce->failed = 1;
        return MMP_EENGINE;
    }
    ce->build_s = mmp_now_seconds() - t0;
    ce->k_append = clCreateKernel(ce->prog, "append_elements", &e);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "append_elements");
    return 0;
}

/* The engine config's tune string, "wg=N,vec=N,kt=N,batches=N,spin=US,poll=0|1"
 * (any of them, for benchmarks), overrides the defaults. GPUs: a work-item
 * per element, and chunks of half the samples of CPUs' per work-item: the
 * search's batches hold a few calls, so the more work-groups a call makes,
 * the more of a GPU's cores it keeps busy; CPUs (PoCL runs a group as loops over its work-items): few
 * work-items, each a SIMD vector of elements. spin: how long a waiting
 * thread spins before it sleeps (default SPIN_S where every host thread has
 * a core, else none). poll: the thread that waits for a batch polls its
 * last command's status rather than sleeping in clFinish (default on GPUs,
 * whose batches end within tens of microseconds; the driver thread that
 * waits then also spins a while for the next call, batch.c). */
static void tune(ocl *ce, int gpu, const char *env)
{
    ce->wg = gpu ? 128 : 8;
    ce->vec = gpu ? 1 : 16;
    ce->kt = gpu ? 128 : 256;
    ce->nbatches = DEFAULT_BATCHES;
    ce->spin_us = -1;
    ce->poll = gpu;
    while (env && *env) {
        int v = 0, used = 0;
        if (sscanf(env, "wg=%d%n", &v, &used) == 1 && v >= 1 && v <= 1024 && !(v & (v - 1)))
            ce->wg = v;
        else if (sscanf(env, "vec=%d%n", &v, &used) == 1 && v >= 1 && v <= VEC_MAX && !(v & (v - 1)))
            ce->vec = v;
        else if (sscanf(env, "kt=%d%n", &v, &used) == 1 && v >= 1 && v <= 65536)
            ce->kt = v;
        else if (sscanf(env, "batches=%d%n", &v, &used) == 1 && v >= 1 && v <= MAX_BATCHES)
            ce->nbatches = v;
        else if (sscanf(env, "spin=%d%n", &v, &used) == 1 && v >= 0 && v <= 10000)
            ce->spin_us = v;
        else if (sscanf(env, "poll=%d%n", &v, &used) == 1 && v >= 0 && v <= 1)
            ce->poll = v;
        env = strchr(env, ',');
        env = env ? env + 1 : NULL;
    }
}

static int ocl_create(void **state, const mmp_engine_config *cfg, char *errbuf, size_t errlen)
{
    ocl *ce = calloc(1, sizeof *ce);
    if (!ce)
        return mmp_error(errbuf, errlen, MMP_ENOMEM, "out of memory");
    *state = NULL;
    pthread_mutex_init(&ce->lock, NULL);
    pthread_mutex_init(&ce->spare_lock, NULL);
    pthread_mutex_init(&ce->fail_lock, NULL);
    atomic_init(&ce->failed, 0);
    atomic_init(&ce->inbox, NULL);
    atomic_init(&ce->driver_asleep, 0);
    atomic_init(&ce->stop, 0);
    ce->verbose = cfg->verbose;
    ce->log = cfg->log;
    snprintf(ce->name, sizeof ce->name, "no device");

    dev_entry list[MAX_DEVICES];
    int count, pick = -1;
    char why[200];
    if (ocl_enumerate(list, &count, why, sizeof why) ||
        (pick = ocl_choose(list, count, cfg->device, why, sizeof why)) < 0) {
        ocl_destroy(ce);
        return mmp_error(errbuf, errlen, MMP_EENGINE, "%s", why);
    }
    ce->dev = list[pick].dev;
    ocl_device_name(ce->dev, ce->name, sizeof ce->name);

    cl_int e;
    int err = 0;
    ce->ctx = clCreateContext(NULL, 1, &ce->dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        err = ocl_fail(ce, e, "clCreateContext");
        goto out;
    }
    ce->q = clCreateCommandQueue(ce->ctx, ce->dev, ce->verbose ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS) {
        err = ocl_fail(ce, e, "clCreateCommandQueue");
        goto out;
    }

    /* The work shape for the device (tune), as large a work-group as the
     * device allows up to that. */
    size_t maxwg = 1;
    cl_ulong lmem = 0;
    clGetDeviceInfo(ce->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
    clGetDeviceInfo(ce->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
    tune(ce, (list[pick].type & CL_DEVICE_TYPE_GPU) != 0, cfg->tune);
    while (ce->wg > 1 && ((size_t)ce->wg > maxwg || local_bytes(ce->wg) > lmem))
        ce->wg /= 2;
    if (local_bytes(ce->wg) > lmem) {
        snprintf(ce->why, sizeof ce->why,
                 "opencl: %s has %llu bytes of local memory, the kernels need %zu", ce->name,
                 (unsigned long long)lmem, local_bytes(1));
        ce->failed = 1;
        err = MMP_EENGINE;
        goto out;
    }
    if ((err = build(ce)) || (err = ocl_upload_nodes(ce)))
        goto out;

    /* Host threads for the search: they spend most of their time waiting
     * for the device, so their number need not be that of the cores; more
     * of them make larger batches (DEFAULT_HOST_THREADS_GPU). */
    const int gpu = (list[pick].type & CL_DEVICE_TYPE_GPU) != 0;
    ce->threads = cfg->threads > 0 ? cfg->threads
                  : gpu           ? DEFAULT_HOST_THREADS_GPU
                                  : DEFAULT_HOST_THREADS_CPU;
    ce->threads = ce->threads < 1 ? 1 : ce->threads > MAX_HOST_THREADS ? MAX_HOST_THREADS
                                                                       : ce->threads;
    /* Spin only where every host thread may have a core of its own. */
    ce->spin_s = ce->spin_us >= 0 ? ce->spin_us * 1e-6 : gpu && mmp_may_spin(ce->threads) ? SPIN_S : 0;
    ce->batches = calloc((size_t)ce->nbatches, sizeof(batch));
    if (!ce->batches) {
        err = MMP_ENOMEM;
        goto out;
    }
    for (int i = 0; i < ce->nbatches; i++) {
        if ((err = ocl_batch_create(ce, &ce->batches[i])))
            goto out;
        ce->free_list[ce->nfree++] = i;
    }
    if ((err = ocl_driver_start(ce)))
        goto out;
    if (ce->verbose)
        mmp_log(&ce->log, MMP_LOG_INFO,
                "opencl: %s, work-group %d, %d lanes per work-item, kernels built in %.0f "
                "ms, %d host threads, %d batches in flight",
                ce->name, ce->wg, ce->vec, ce->build_s * 1e3, ce->threads, ce->nbatches);
out:
    if (err) {
        mmp_error(errbuf, errlen, err, "%s", ce->why[0] ? ce->why : mmp_strerror(err));
        ocl_destroy(ce);
        return err;
    }
    *state = ce;
    return 0;
}

static const char *ocl_last_error(void *state)
{
    ocl *ce = state;
    return ce->failed && ce->why[0] ? ce->why : NULL;
}

static int ocl_concurrency(void *state)
{
    return ((ocl *)state)->threads;
}

const mmp_engine_ops mmp_engine_opencl = {
    .name = "opencl",
    .create = ocl_create,
    .destroy = ocl_destroy,
    .probe = ocl_probe,
    .devices = ocl_devices,
    .last_error = ocl_last_error,
    .begin_step = ocl_begin_step,
    .match = ocl_match,
    .submit = ocl_submit,
    .wait = ocl_wait,
    .concurrency = ocl_concurrency,
    /* Every split as a task: the more calls wait at once, the larger the
     * batches. */
    .task_min_area = 2 * (1 << (2 * MMP_LOG2_PMIN)),
    .slow_start = 1,
};

