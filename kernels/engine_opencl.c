/*
 * The opencl search engine: exhaustive matching on an OpenCL device.
 *
 * The kernels (kernels/match.cl, embedded in the binary at build time) do
 * all the work of match(): one launch covers every mode and every residual
 * node of the prediction leaf and computes the contract's argmin over the
 * whole dictionary of each node's scale, one work-group per (node, chunk of
 * elements); for leaves whose nodes span several chunks a second small
 * kernel reduces the chunks' results.
 *
 * Device memory, allocated at dictionary capacity and kept for the encode:
 *   dict    every scale, samples interleaved by element (see match.cl);
 *   norms   the squared norm of every element;
 *   blk     per block: element counts, index costs of every scale;
 *   stage   the elements added since the last block, before append_elements
 *           scatters them into dict;
 *   res     per call: the residuals of the modes, and the mask of real pixels;
 *   part    per call: each work-group's best per mode;
 *   out     per call: the results, laid out as mmp_match;
 *   nodes   the residual nodes of every leaf shape, in mmp_match_offset order;
 *   groups  the work-groups of every leaf shape, (node, chunk);
 *   info    each node's first group and number of chunks.
 * Per block: one write of blk, and when the dictionary grew one write of
 * stage and one append_elements. Per match(): one write of res, one or two
 * kernels, one blocking read of the results straight into the caller's
 * array.
 *
 * The search calls match() from several host threads at once (as many as
 * -t says, all cores by default), so that their round trips overlap and the
 * device runs several calls' kernels together: each call takes a slot, with
 * its own command queue, kernels and per-call buffers (res, part, out); the
 * per-block writes go through the main queue, finished before any call.
 *
 * Any OpenCL failure is reported once on stderr (one line) and every later
 * call returns MMP_EENGINE.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "kernels/engine_opencl.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "common/error.h"
#include "mmp/engine.h"
#include "predict/predict.h"

/* Generated from the kernels/ .cl files by the Makefile. */
extern const char mmp_opencl_source[];

#define MAXM MMP_NUM_MODES
#define LEAF_MAX (MMP_B * MMP_B)
/* Samples of one element of every scale: sum of 2^(a+b). */
#define DICT_SAMPLES (((2 << MMP_LOG2B) - 1) * ((2 << MMP_LOG2B) - 1))
/* Nodes of every leaf shape together. */
#define NODE_TABLE (((4 << MMP_LOG2B) - MMP_LOG2B - 3) * ((4 << MMP_LOG2B) - MMP_LOG2B - 3))
/* Dictionary rows are padded to a multiple of this (the widest VEC). */
#define PITCH_ALIGN 16
/* The per-block buffer's header, as in match.cl. */
#define HDR_N 0
#define HDR_COST 25
#define HDR_NEWLO 50
#define HDR_SRC 75
#define HDR_EPRE 100
#define HDR_INTS 128
#define MAX_DEVICES 64

_Static_assert(MMP_NSCALES == 25 && MMP_LOG2B == 4, "match.cl assumes 25 scales up to 16x16");
_Static_assert(sizeof(mmp_match) == 16 && offsetof(mmp_match, idx) == 8,
               "mmp_match must match match_t in match.cl");

enum { P_COSTS, P_STAGE, P_APPEND, P_RES, P_NARROW, P_WIDE, P_REDUCE, P_READ, NPROF };
static const char *const prof_name[NPROF] = {
    "write costs", "write new elements", "append_elements", "write residuals",
    "match_narrow", "match_wide", "reduce_chunks", "read results",
};

#define MAX_SLOTS 256
#define DEFAULT_HOST_THREADS 4

/* Profiling events of one queue (verbose only). */
typedef struct prof {
    cl_event ev[8];
    int ev_kind[8], nev;
    double ms[NPROF];
    long n[NPROF];
} prof;

/* What one match() call in flight owns. */
typedef struct slot {
    cl_command_queue q;
    cl_kernel k_match[2], k_reduce; /* match: narrow, wide */
    cl_mem res, part, out;
    int32_t *res_host;
    prof pf;
    double host_match_s;
    long calls, wide_calls, reduce_calls;
    double work, bytes_up, bytes_down;
} slot;

typedef struct ocl {
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q; /* the main queue: per-block writes */
    cl_program prog;
    cl_kernel k_append;
    cl_mem dict, norms, blk, stage, nodes, groups, info;
    slot *slots;
    int nslots;
    pthread_mutex_t lock;
    pthread_cond_t freed;
    int nfree;
    int free_list[MAX_SLOTS];
    pthread_mutex_t fail_lock;
    int wg, vec, kt;                   /* work-group size, lanes per work-item, chunk target */
    int node_base[MMP_NLOG][MMP_NLOG]; /* first node of each leaf shape in nodes and info */
    int group_base[MMP_NLOG][MMP_NLOG], ngroups[MMP_NLOG][MMP_NLOG];
    int direct[MMP_NLOG][MMP_NLOG];    /* every node in one chunk: no reduce_chunks */

    /* What the device holds. */
    const mmp_dict *host_dict;
    int cap;                      /* 0: nothing yet */
    int pitch;                    /* cap rounded up to PITCH_ALIGN */
    int dev_n[MMP_NSCALES];
    int64_t maxe;                 /* largest |sample| of the uploaded elements */
    size_t stage_cap;             /* ints */
    int pending;                  /* non-blocking writes from host buffers in flight */

    int32_t *blk_host, *stage_host;

    int verbose;
    _Atomic int failed;
    char name[256];
    prof pf; /* the main queue's */
    double host_begin_s, build_s;
    long begins;
    double bytes_up;
} ocl;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

/* Reports the first failure (one line) and turns it into an MMP_E* code. */
static int fail(ocl *ce, cl_int e, const char *what)
{
    const int oom = e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ||
                    e == CL_OUT_OF_HOST_MEMORY || e == CL_INVALID_BUFFER_SIZE;
    pthread_mutex_lock(&ce->fail_lock);
    if (!ce->failed) {
        if (oom)
            fprintf(stderr, "mmp: opencl: out of device memory or resources (%s on %s: %s)\n",
                    what, ce->name, cl_errname(e));
        else
            fprintf(stderr, "mmp: opencl: %s failed on %s: %s (%d)\n", what, ce->name,
                    cl_errname(e), (int)e);
    }
    ce->failed = 1;
    pthread_mutex_unlock(&ce->fail_lock);
    return oom ? MMP_ENOMEM : MMP_EENGINE;
}

/* ------------------------------------------------------------ devices */

typedef struct dev_entry {
    cl_platform_id plat;
    cl_device_id dev;
    int p, d;
    cl_device_type type;
} dev_entry;

/* Every device of every platform; 0, or MMP_EENGINE with the reason in why. */
static int enumerate(dev_entry *list, int *count, char *why, size_t whylen)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    *count = 0;
    cl_int e = clGetPlatformIDs(16, plats, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(why, whylen, "no OpenCL platform found (install an ICD, e.g. pocl-opencl-icd)");
        return MMP_EENGINE;
    }
    for (cl_uint p = 0; p < np && p < 16; p++) {
        cl_device_id devs[MAX_DEVICES];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < MAX_DEVICES && *count < MAX_DEVICES; d++) {
            dev_entry *de = &list[(*count)++];
            de->plat = plats[p];
            de->dev = devs[d];
            de->p = (int)p;
            de->d = (int)d;
            de->type = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof de->type, &de->type, NULL);
        }
    }
    if (*count == 0) {
        snprintf(why, whylen, "no OpenCL device found (%u platform%s)", np, np == 1 ? "" : "s");
        return MMP_EENGINE;
    }
    return 0;
}

static void device_name(cl_device_id dev, char *buf, size_t len)
{
    buf[0] = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_NAME, len, buf, NULL) != CL_SUCCESS)
        snprintf(buf, len, "unknown device");
    buf[len - 1] = 0;
}

static int contains_nocase(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* The index in list of the device to use; MMP_EENGINE with the reason in why. */
static int choose(const dev_entry *list, int count, char *why, size_t whylen)
{
    const char *env = getenv("MMP_CL_DEVICE");
    if (!env || !*env) {
        for (int i = 0; i < count; i++)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                return i;
        return 0;
    }
    int p, d;
    char extra;
    if (sscanf(env, "%d:%d%c", &p, &d, &extra) == 2) {
        for (int i = 0; i < count; i++)
            if (list[i].p == p && list[i].d == d)
                return i;
    } else {
        for (int i = 0; i < count; i++) {
            char name[256];
            device_name(list[i].dev, name, sizeof name);
            if (contains_nocase(name, env))
                return i;
        }
    }
    snprintf(why, whylen, "MMP_CL_DEVICE=%s matches no OpenCL device (%d found)", env, count);
    return MMP_EENGINE;
}

int mmp_opencl_list_devices(FILE *f)
{
    dev_entry list[MAX_DEVICES];
    int count;
    char why[200];
    if (enumerate(list, &count, why, sizeof why)) {
        fprintf(f, "%s\n", why);
        return MMP_EENGINE;
    }
    const int pick = choose(list, count, why, sizeof why);
    for (int i = 0; i < count; i++) {
        char name[256], pname[256] = "";
        cl_uint cus = 0;
        cl_ulong mem = 0;
        device_name(list[i].dev, name, sizeof name);
        clGetPlatformInfo(list[i].plat, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        pname[sizeof pname - 1] = 0;
        clGetDeviceInfo(list[i].dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
        clGetDeviceInfo(list[i].dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
        const cl_device_type t = list[i].type;
        fprintf(f, "%c %d:%d  %s  [%s]  %s, %u compute units, %llu MiB\n", i == pick ? '*' : ' ',
                list[i].p, list[i].d, name,
                t & CL_DEVICE_TYPE_GPU ? "GPU" : t & CL_DEVICE_TYPE_CPU ? "CPU"
                : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator" : "other",
                pname, cus, (unsigned long long)(mem >> 20));
    }
    if (pick < 0)
        fprintf(f, "%s\n", why);
    return count;
}

int mmp_opencl_probe(void)
{
    dev_entry list[MAX_DEVICES];
    int count;
    char why[200];
    if (enumerate(list, &count, why, sizeof why))
        return MMP_EENGINE;
    const int pick = choose(list, count, why, sizeof why);
    if (pick < 0)
        return MMP_EENGINE;
    return (list[pick].type & CL_DEVICE_TYPE_GPU) != 0;
}

/* ------------------------------------------------------------ profile */

static void collect(prof *pf)
{
    for (int i = 0; i < pf->nev; i++) {
        cl_ulong t0 = 0, t1 = 0;
        if (clGetEventProfilingInfo(pf->ev[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) ==
                CL_SUCCESS &&
            clGetEventProfilingInfo(pf->ev[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) ==
                CL_SUCCESS &&
            t1 >= t0)
            pf->ms[pf->ev_kind[i]] += (double)(t1 - t0) * 1e-6;
        pf->n[pf->ev_kind[i]]++;
        clReleaseEvent(pf->ev[i]);
    }
    pf->nev = 0;
}

/* Where an enqueue of this kind on q puts its event: NULL unless profiling. */
static cl_event *event_for(const ocl *ce, prof *pf, cl_command_queue q, int kind)
{
    if (!ce->verbose)
        return NULL;
    if (pf->nev == (int)(sizeof pf->ev / sizeof pf->ev[0])) {
        clFinish(q);
        collect(pf);
    }
    pf->ev_kind[pf->nev] = kind;
    return &pf->ev[pf->nev++];
}

/* An enqueue that failed left no event behind. */
static void drop_event(prof *pf, cl_event *ev)
{
    if (ev)
        pf->nev--;
}

/* ------------------------------------------------------------ engine */

static void release_mem(cl_mem *m)
{
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
}

static void slot_release(slot *sl)
{
    cl_mem *mems[] = {&sl->res, &sl->part, &sl->out};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        release_mem(mems[i]);
    cl_kernel ks[] = {sl->k_match[0], sl->k_match[1], sl->k_reduce};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i])
            clReleaseKernel(ks[i]);
    if (sl->q)
        clReleaseCommandQueue(sl->q);
    free(sl->res_host);
}

static void ocl_destroy(void *state)
{
    ocl *ce = state;
    if (!ce)
        return;
    if (ce->q) {
        clFinish(ce->q);
        collect(&ce->pf);
    }
    /* The slots' figures, summed. */
    prof all = ce->pf;
    double host_match_s = 0, work = 0, bytes_up = ce->bytes_up, bytes_down = 0;
    long calls = 0, wide_calls = 0, reduce_calls = 0;
    for (int i = 0; i < ce->nslots; i++) {
        slot *sl = &ce->slots[i];
        if (sl->q) {
            clFinish(sl->q);
            collect(&sl->pf);
        }
        for (int k = 0; k < NPROF; k++) {
            all.ms[k] += sl->pf.ms[k];
            all.n[k] += sl->pf.n[k];
        }
        host_match_s += sl->host_match_s;
        calls += sl->calls;
        wide_calls += sl->wide_calls;
        reduce_calls += sl->reduce_calls;
        work += sl->work;
        bytes_up += sl->bytes_up;
        bytes_down += sl->bytes_down;
    }
    if (ce->verbose && ce->begins) {
        const double dev_ms = all.ms[P_NARROW] + all.ms[P_WIDE];
        fprintf(stderr,
                "opencl: %d host threads; %ld blocks (%.1f ms on the host), %ld match calls (%ld "
                "wide, %ld with reduce_chunks; %.1f thread-ms on the host, %.1f us per call); "
                "%.1f MB up, %.1f MB down; %.3g comparisons, %.2f G/s in the match kernels\n",
                ce->nslots, ce->begins, ce->host_begin_s * 1e3, calls, wide_calls, reduce_calls,
                host_match_s * 1e3, calls ? host_match_s * 1e6 / calls : 0.0, bytes_up / 1e6,
                bytes_down / 1e6, work, dev_ms > 0 ? work / dev_ms * 1e-6 : 0.0);
        fprintf(stderr, "opencl: device time (kernels of different threads overlap):");
        for (int k = 0; k < NPROF; k++)
            if (all.n[k])
                fprintf(stderr, "%s %s %.1f ms (%ld, %.1f us each)", k ? "," : "", prof_name[k],
                        all.ms[k], all.n[k], all.ms[k] * 1e3 / all.n[k]);
        fprintf(stderr, "\n");
    }
    for (int i = 0; i < ce->nslots; i++)
        slot_release(&ce->slots[i]);
    free(ce->slots);
    cl_mem *mems[] = {&ce->dict, &ce->norms, &ce->blk, &ce->stage, &ce->nodes, &ce->groups,
                      &ce->info};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        release_mem(mems[i]);
    if (ce->k_append)
        clReleaseKernel(ce->k_append);
    if (ce->prog)
        clReleaseProgram(ce->prog);
    if (ce->q)
        clReleaseCommandQueue(ce->q);
    if (ce->ctx)
        clReleaseContext(ce->ctx);
    free(ce->blk_host);
    free(ce->stage_host);
    pthread_mutex_destroy(&ce->lock);
    pthread_cond_destroy(&ce->freed);
    pthread_mutex_destroy(&ce->fail_lock);
    free(ce);
}

/* Local memory of a match kernel at work-group size wg. */
static size_t local_bytes(int wg)
{
    return sizeof(int32_t) * (MAXM * LEAF_MAX + LEAF_MAX) + 8 * MAXM + (size_t)MAXM * wg * 12;
}

static int build(ocl *ce)
{
    const char *src = mmp_opencl_source;
    cl_int e;
    double t0 = now_s();
    ce->prog = clCreateProgramWithSource(ce->ctx, 1, &src, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "clCreateProgramWithSource");
    char opts[128];
    snprintf(opts, sizeof opts, "-DWG=%d -DVEC=%d -DKT=%d -DMAXM=%d", ce->wg, ce->vec, ce->kt,
             MAXM);
    e = clBuildProgram(ce->prog, 1, &ce->dev, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        fprintf(stderr, "mmp: opencl: the kernels do not build on %s (%s)%s\n", ce->name,
                cl_errname(e), ce->verbose ? ":" : "; -v shows the build log");
        if (ce->verbose) {
            size_t len = 0;
            clGetProgramBuildInfo(ce->prog, ce->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
            char *log = malloc(len + 1);
            if (log && clGetProgramBuildInfo(ce->prog, ce->dev, CL_PROGRAM_BUILD_LOG, len, log,
                                             NULL) == CL_SUCCESS) {
                log[len] = 0;
                fprintf(stderr, "%s\n", log);
            }
            free(log);
        }
        ce->failed = 1;
        return MMP_EENGINE;
    }
    ce->build_s = now_s() - t0;
    ce->k_append = clCreateKernel(ce->prog, "append_elements", &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "append_elements");
    return 0;
}

/* A slot's queue, kernels and per-call buffers (part comes with the
 * dictionary, in alloc_groups). */
static int slot_create(ocl *ce, slot *sl)
{
    cl_int e;
    sl->q = clCreateCommandQueue(ce->ctx, ce->dev, ce->verbose ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "clCreateCommandQueue");
    static const char *const names[3] = {"match_narrow", "match_wide", "reduce_chunks"};
    cl_kernel *ks[3] = {&sl->k_match[0], &sl->k_match[1], &sl->k_reduce};
    for (int i = 0; i < 3; i++) {
        *ks[i] = clCreateKernel(ce->prog, names[i], &e);
        if (e != CL_SUCCESS)
            return fail(ce, e, names[i]);
    }
    sl->res_host = malloc(sizeof(int32_t) * (MAXM + 1) * LEAF_MAX);
    if (!sl->res_host)
        return MMP_ENOMEM;
    sl->res = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY, sizeof(int32_t) * (MAXM + 1) * LEAF_MAX,
                             NULL, &e);
    if (e == CL_SUCCESS)
        sl->out = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE,
                                 sizeof(mmp_match) * MAXM * mmp_match_count(MMP_LOG2B, MMP_LOG2B),
                                 NULL, &e);
    return e == CL_SUCCESS ? 0 : fail(ce, e, "clCreateBuffer");
}

/* The node table of every leaf shape, uploaded once. */
static int upload_nodes(ocl *ce)
{
    uint32_t table[NODE_TABLE];
    int k = 0;
    for (int lh = 0; lh <= MMP_LOG2B; lh++)
        for (int lw = 0; lw <= MMP_LOG2B; lw++) {
            ce->node_base[lh][lw] = k;
            for (int a = 0; a <= lh; a++)
                for (int b = 0; b <= lw; b++)
                    for (int i = 0; i < (1 << (lh - a)); i++)
                        for (int j = 0; j < (1 << (lw - b)); j++)
                            table[k++] = (uint32_t)(a | b << 3 | (i << a) << 6 | (j << b) << 11);
        }
    cl_int e;
    ce->nodes = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof table,
                               table, &e);
    return e == CL_SUCCESS ? 0 : fail(ce, e, "node table");
}

/* MMP_CL_TUNE="wg=N,vec=N,kt=N" overrides the defaults (for benchmarks). */
static void tune(ocl *ce, int gpu)
{
    ce->wg = gpu ? 128 : 8;
    ce->vec = gpu ? 1 : 16;
    ce->kt = 256;
    const char *env = getenv("MMP_CL_TUNE");
    while (env && *env) {
        int v = 0, used = 0;
        if (sscanf(env, "wg=%d%n", &v, &used) == 1 && v >= 1 && v <= 1024 && !(v & (v - 1)))
            ce->wg = v;
        else if (sscanf(env, "vec=%d%n", &v, &used) == 1 && v >= 1 && v <= 16 && !(v & (v - 1)))
            ce->vec = v;
        else if (sscanf(env, "kt=%d%n", &v, &used) == 1 && v >= 1 && v <= 65536)
            ce->kt = v;
        env = strchr(env, ',');
        env = env ? env + 1 : NULL;
    }
}

static int ocl_create(void **state, const mmp_engine_config *cfg)
{
    ocl *ce = calloc(1, sizeof *ce);
    if (!ce)
        return MMP_ENOMEM;
    *state = NULL;
    pthread_mutex_init(&ce->lock, NULL);
    pthread_cond_init(&ce->freed, NULL);
    pthread_mutex_init(&ce->fail_lock, NULL);
    atomic_init(&ce->failed, 0);
    ce->verbose = cfg->verbose;
    snprintf(ce->name, sizeof ce->name, "no device");

    dev_entry list[MAX_DEVICES];
    int count, pick = -1;
    char why[200];
    if (enumerate(list, &count, why, sizeof why) || (pick = choose(list, count, why, sizeof why)) < 0) {
        fprintf(stderr, "mmp: opencl: %s\n", why);
        ocl_destroy(ce);
        return MMP_EENGINE;
    }
    ce->dev = list[pick].dev;
    device_name(ce->dev, ce->name, sizeof ce->name);

    cl_int e;
    int err = 0;
    ce->ctx = clCreateContext(NULL, 1, &ce->dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) {
        err = fail(ce, e, "clCreateContext");
        goto out;
    }
    ce->q = clCreateCommandQueue(ce->ctx, ce->dev, ce->verbose ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS) {
        err = fail(ce, e, "clCreateCommandQueue");
        goto out;
    }

    /* GPUs: a work-item per element; CPUs (PoCL runs a group as loops over
     * its work-items): few work-items, each a SIMD vector of elements. */
    size_t maxwg = 1;
    cl_ulong lmem = 0;
    clGetDeviceInfo(ce->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
    clGetDeviceInfo(ce->dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
    tune(ce, (list[pick].type & CL_DEVICE_TYPE_GPU) != 0);
    while (ce->wg > 1 && ((size_t)ce->wg > maxwg || local_bytes(ce->wg) > lmem))
        ce->wg /= 2;
    if (local_bytes(ce->wg) > lmem) {
        fprintf(stderr, "mmp: opencl: %s has %llu bytes of local memory, the kernels need %zu\n",
                ce->name, (unsigned long long)lmem, local_bytes(1));
        ce->failed = 1;
        err = MMP_EENGINE;
        goto out;
    }
    if ((err = build(ce)) || (err = upload_nodes(ce)))
        goto out;

    /* A slot for each host thread of the search. By default DEFAULT_HOST_THREADS
     * (the device is the bottleneck: on an H100, camera at lambda 10 took
     * 8.4 s with 2 host threads, 7.3-7.7 s with 3 or 4, 8.1-8.2 s with 16). */
    ce->nslots = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
    if (cfg->threads <= 0 && ce->nslots > DEFAULT_HOST_THREADS)
        ce->nslots = DEFAULT_HOST_THREADS;
    ce->nslots = ce->nslots < 1 ? 1 : ce->nslots > MAX_SLOTS ? MAX_SLOTS : ce->nslots;
    ce->slots = calloc((size_t)ce->nslots, sizeof(slot));
    if (!ce->slots) {
        err = MMP_ENOMEM;
        goto out;
    }
    for (int i = 0; i < ce->nslots; i++) {
        if ((err = slot_create(ce, &ce->slots[i])))
            goto out;
        ce->free_list[ce->nfree++] = i;
    }
    if (ce->verbose)
        fprintf(stderr, "opencl: %s, work-group %d, %d lanes per work-item, kernels built in %.0f "
                        "ms, %d host threads\n",
                ce->name, ce->wg, ce->vec, ce->build_s * 1e3, ce->nslots);
out:
    if (err) {
        ocl_destroy(ce);
        return err;
    }
    *state = ce;
    return 0;
}

/* Elements per chunk of a scale of 2^lb samples; the kernel computes the same. */
static int chunk_len(const ocl *ce, int lb)
{
    const int kpt = ce->kt >> lb > 1 ? ce->kt >> lb : 1;
    return kpt * ce->wg * ce->vec;
}

/*
 * The work-groups of every leaf shape for a dictionary of capacity cap:
 * each node's chunks in node order (groups), each node's first group and
 * chunk count (info), and a buffer for the groups' partial results.
 */
static int alloc_groups(ocl *ce, int cap)
{
    int total = 0, most = 0;
    for (int lh = 0; lh <= MMP_LOG2B; lh++)
        for (int lw = 0; lw <= MMP_LOG2B; lw++) {
            int n = 0;
            for (int a = 0; a <= lh; a++)
                for (int b = 0; b <= lw; b++) {
                    const int chunks = (cap + chunk_len(ce, a + b) - 1) / chunk_len(ce, a + b);
                    n += (1 << (lh - a + lw - b)) * chunks;
                }
            ce->group_base[lh][lw] = total;
            ce->ngroups[lh][lw] = n;
            ce->direct[lh][lw] = n == mmp_match_count(lh, lw);
            total += n;
            most = n > most ? n : most;
        }
    uint32_t *groups = malloc(sizeof(uint32_t) * total);
    cl_int *info = malloc(sizeof(cl_int) * 2 * NODE_TABLE);
    if (!groups || !info) {
        free(groups);
        free(info);
        return MMP_ENOMEM;
    }
    for (int lh = 0; lh <= MMP_LOG2B; lh++)
        for (int lw = 0; lw <= MMP_LOG2B; lw++) {
            int g = 0, node = 0;
            uint32_t *gt = groups + ce->group_base[lh][lw];
            cl_int *it = info + 2 * ce->node_base[lh][lw];
            for (int a = 0; a <= lh; a++)
                for (int b = 0; b <= lw; b++) {
                    const int chunks = (cap + chunk_len(ce, a + b) - 1) / chunk_len(ce, a + b);
                    for (int k = 0; k < (1 << (lh - a + lw - b)); k++, node++) {
                        it[2 * node] = g;
                        it[2 * node + 1] = chunks;
                        for (int c = 0; c < chunks; c++)
                            gt[g++] = (uint32_t)node | (uint32_t)c << 12;
                    }
                }
        }
    cl_int e;
    ce->groups = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                sizeof(uint32_t) * total, groups, &e);
    if (e == CL_SUCCESS)
        ce->info = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  sizeof(cl_int) * 2 * NODE_TABLE, info, &e);
    for (int i = 0; i < ce->nslots && e == CL_SUCCESS; i++)
        ce->slots[i].part = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE,
                                           sizeof(mmp_match) * MAXM * most, NULL, &e);
    free(groups);
    free(info);
    return e == CL_SUCCESS ? 0 : fail(ce, e, "work-group tables");
}

/* Device buffers for a dictionary of capacity cap. */
static int alloc_dict(ocl *ce, int cap)
{
    cl_int e;
    cl_mem *mems[] = {&ce->dict, &ce->norms, &ce->blk, &ce->groups, &ce->info};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        release_mem(mems[i]);
    for (int i = 0; i < ce->nslots; i++)
        release_mem(&ce->slots[i].part);
    free(ce->blk_host);
    ce->cap = 0;
    ce->pitch = (cap + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
    const size_t blk_ints = HDR_INTS + (size_t)MMP_NSCALES * ce->pitch;
    ce->blk_host = calloc(blk_ints, sizeof(int32_t));
    if (!ce->blk_host)
        return MMP_ENOMEM;
    const size_t dict_bytes = sizeof(int32_t) * (size_t)DICT_SAMPLES * ce->pitch;
    cl_ulong maxalloc = 0;
    clGetDeviceInfo(ce->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxalloc, &maxalloc, NULL);
    if (maxalloc && dict_bytes > maxalloc) {
        fprintf(stderr, "mmp: opencl: out of device memory (%zu MiB for the dictionary, %s "
                        "allocates at most %llu MiB)\n",
                dict_bytes >> 20, ce->name, (unsigned long long)(maxalloc >> 20));
        ce->failed = 1;
        return MMP_ENOMEM;
    }
    ce->dict = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE, dict_bytes, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "dictionary buffer");
    /* Lanes past the last element read zeros, never garbage. */
    const cl_int zero = 0;
    e = clEnqueueFillBuffer(ce->q, ce->dict, &zero, sizeof zero, 0, dict_bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return fail(ce, e, "dictionary buffer");
    const size_t norm_bytes = sizeof(cl_long) * MMP_NSCALES * ce->pitch;
    ce->norms = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE, norm_bytes, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "norm buffer");
    e = clEnqueueFillBuffer(ce->q, ce->norms, &zero, sizeof zero, 0, norm_bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return fail(ce, e, "norm buffer");
    ce->blk = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY, sizeof(int32_t) * blk_ints, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "cost buffer");
    int err = alloc_groups(ce, cap);
    if (err)
        return err;
    ce->cap = cap;
    return 0;
}

static int grow_stage(ocl *ce, size_t ints)
{
    if (ints <= ce->stage_cap)
        return 0;
    size_t cap = ce->stage_cap ? ce->stage_cap : 4096;
    while (cap < ints)
        cap *= 2;
    release_mem(&ce->stage);
    free(ce->stage_host);
    ce->stage_cap = 0;
    ce->stage_host = malloc(sizeof(int32_t) * cap);
    if (!ce->stage_host)
        return MMP_ENOMEM;
    cl_int e;
    ce->stage = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY, sizeof(int32_t) * cap, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "stage buffer");
    ce->stage_cap = cap;
    return 0;
}

static int ocl_begin_block(void *state, const mmp_search_tables *t)
{
    ocl *ce = state;
    if (ce->failed)
        return MMP_EENGINE;
    const double t0 = now_s();
    cl_int e;
    int err;
    collect(&ce->pf);

    const mmp_dict *d = t->dict;
    int reset = d != ce->host_dict || d->cap != ce->cap;
    for (int s = 0; s < MMP_NSCALES; s++)
        reset |= d->n[s] < ce->dev_n[s];
    if (d->cap != ce->cap && (err = alloc_dict(ce, d->cap)))
        return err;
    if (reset) {
        memset(ce->dev_n, 0, sizeof ce->dev_n);
        ce->maxe = 0;
        ce->host_dict = d;
    }

    /* Header and index costs (each scale padded with zeros to a multiple of
     * PITCH_ALIGN, for the vector loads); the elements this block added. */
    int32_t *h = ce->blk_host;
    size_t off = HDR_INTS, total = 0, nnew = 0;
    for (int s = 0; s < MMP_NSCALES; s++) {
        const int n = d->n[s], padded = (n + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
        h[HDR_N + s] = n;
        h[HDR_COST + s] = (int32_t)off;
        memcpy(h + off, t->idx_cost[s], sizeof(uint32_t) * n);
        memset(h + off + n, 0, sizeof(int32_t) * (padded - n));
        off += padded;
        h[HDR_NEWLO + s] = ce->dev_n[s];
        h[HDR_SRC + s] = (int32_t)total;
        h[HDR_EPRE + s] = (int32_t)nnew;
        total += (size_t)(n - ce->dev_n[s]) * mmp_scale_area(s);
        nnew += (size_t)(n - ce->dev_n[s]);
    }
    if ((err = grow_stage(ce, total)))
        return err;
    for (int s = 0, at = 0; s < MMP_NSCALES; s++) {
        const size_t len = (size_t)(d->n[s] - ce->dev_n[s]) * mmp_scale_area(s);
        const int32_t *src = mmp_dict_elem(d, s, ce->dev_n[s]);
        memcpy(ce->stage_host + at, src, sizeof(int32_t) * len);
        for (size_t i = 0; i < len; i++) {
            const int64_t v = src[i] < 0 ? -(int64_t)src[i] : src[i];
            ce->maxe = v > ce->maxe ? v : ce->maxe;
        }
        at += (int)len;
    }

    cl_event *ev = event_for(ce, &ce->pf, ce->q, P_COSTS);
    e = clEnqueueWriteBuffer(ce->q, ce->blk, CL_FALSE, 0, sizeof(int32_t) * off, h, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        drop_event(&ce->pf, ev);
        return fail(ce, e, "write costs");
    }
    ce->bytes_up += sizeof(int32_t) * off;
    if (total) {
        ev = event_for(ce, &ce->pf, ce->q, P_STAGE);
        e = clEnqueueWriteBuffer(ce->q, ce->stage, CL_FALSE, 0, sizeof(int32_t) * total,
                                 ce->stage_host, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            drop_event(&ce->pf, ev);
            return fail(ce, e, "write new elements");
        }
        ce->bytes_up += sizeof(int32_t) * total;
        const cl_int pitch = ce->pitch, tot = (cl_int)total, cnew = (cl_int)nnew;
        e = clSetKernelArg(ce->k_append, 0, sizeof(cl_mem), &ce->dict);
        e |= clSetKernelArg(ce->k_append, 1, sizeof(cl_mem), &ce->norms);
        e |= clSetKernelArg(ce->k_append, 2, sizeof(cl_mem), &ce->blk);
        e |= clSetKernelArg(ce->k_append, 3, sizeof(cl_mem), &ce->stage);
        e |= clSetKernelArg(ce->k_append, 4, sizeof(cl_int), &pitch);
        e |= clSetKernelArg(ce->k_append, 5, sizeof(cl_int), &tot);
        e |= clSetKernelArg(ce->k_append, 6, sizeof(cl_int), &cnew);
        if (e != CL_SUCCESS)
            return fail(ce, CL_INVALID_KERNEL_ARGS, "append_elements arguments");
        const size_t global = (total + 63) / 64 * 64;
        ev = event_for(ce, &ce->pf, ce->q, P_APPEND);
        e = clEnqueueNDRangeKernel(ce->q, ce->k_append, 1, NULL, &global, NULL, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            drop_event(&ce->pf, ev);
            return fail(ce, e, "append_elements");
        }
    }
    memcpy(ce->dev_n, d->n, sizeof ce->dev_n);

    /* The arguments that stay for the block. */
    const cl_long lambda = t->lambda_q8;
    const cl_int pitch = ce->pitch;
    for (int i = 0; i < ce->nslots; i++) {
        slot *sl = &ce->slots[i];
        for (int w = 0; w < 2; w++) {
            cl_kernel k = sl->k_match[w];
            e = clSetKernelArg(k, 0, sizeof(cl_mem), &ce->dict);
            e |= clSetKernelArg(k, 1, sizeof(cl_mem), &ce->norms);
            e |= clSetKernelArg(k, 2, sizeof(cl_mem), &ce->blk);
            e |= clSetKernelArg(k, 3, sizeof(cl_mem), &sl->res);
            e |= clSetKernelArg(k, 4, sizeof(cl_mem), &ce->nodes);
            e |= clSetKernelArg(k, 6, sizeof(cl_mem), &ce->groups);
            e |= clSetKernelArg(k, 12, sizeof(cl_long), &lambda);
            e |= clSetKernelArg(k, 13, sizeof(cl_int), &pitch);
            if (e != CL_SUCCESS)
                return fail(ce, CL_INVALID_KERNEL_ARGS, "match arguments");
        }
        e = clSetKernelArg(sl->k_reduce, 0, sizeof(cl_mem), &sl->part);
        e |= clSetKernelArg(sl->k_reduce, 1, sizeof(cl_mem), &ce->info);
        e |= clSetKernelArg(sl->k_reduce, 6, sizeof(cl_mem), &sl->out);
        if (e != CL_SUCCESS)
            return fail(ce, CL_INVALID_KERNEL_ARGS, "reduce_chunks arguments");
    }
    /* The slots' queues must see this block's tables; the host copies may
     * be rewritten at the next block. */
    if ((e = clFinish(ce->q)) != CL_SUCCESS)
        return fail(ce, e, "clFinish");
    ce->begins++;
    ce->host_begin_s += now_s() - t0;
    return 0;
}

static slot *slot_get(ocl *ce)
{
    pthread_mutex_lock(&ce->lock);
    while (ce->nfree == 0)
        pthread_cond_wait(&ce->freed, &ce->lock);
    slot *sl = &ce->slots[ce->free_list[--ce->nfree]];
    pthread_mutex_unlock(&ce->lock);
    return sl;
}

static void slot_put(ocl *ce, slot *sl)
{
    pthread_mutex_lock(&ce->lock);
    ce->free_list[ce->nfree++] = (int)(sl - ce->slots);
    pthread_cond_signal(&ce->freed);
    pthread_mutex_unlock(&ce->lock);
}

static int slot_match(ocl *ce, slot *sl, const int32_t *orig, const int32_t *pred, int nmodes,
                      const uint8_t *real, int lh, int lw, mmp_match *out)
{
    const double t0 = now_s();
    const int area = 1 << (lh + lw), count = mmp_match_count(lh, lw);

    /* Residuals before clipping, and the largest of them. */
    int32_t *r = sl->res_host;
    int64_t maxr = 0;
    for (int m = 0; m < nmodes; m++)
        for (int i = 0; i < area; i++) {
            const int64_t v = (int64_t)orig[i] - pred[(long)m * area + i];
            r[m * area + i] = (int32_t)v;
            maxr = v > maxr ? v : -v > maxr ? -v : maxr;
        }
    int masked = 0;
    if (real)
        for (int i = 0; i < area; i++) {
            r[nmodes * area + i] = real[i] ? -1 : 0;
            masked |= !real[i];
        }
    const size_t nres = (size_t)(nmodes + masked) * area;
    /* 32-bit sums when no node can exceed 2^32 - 1. */
    const int64_t bound = maxr + ce->maxe;
    const int wide = !(bound <= 65535 && (uint64_t)(bound * bound) * area <= UINT32_MAX);
    const int direct = ce->direct[lh][lw], ngroups = ce->ngroups[lh][lw];

    cl_int e;
    cl_event *ev = event_for(ce, &sl->pf, sl->q, P_RES);
    e = clEnqueueWriteBuffer(sl->q, sl->res, CL_FALSE, 0, sizeof(int32_t) * nres, r, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        drop_event(&sl->pf, ev);
        return fail(ce, e, "write residuals");
    }
    cl_kernel k = sl->k_match[wide];
    const cl_int nbase = ce->node_base[lh][lw], gbase = ce->group_base[lh][lw];
    const cl_int clh = lh, clw = lw, cnm = nmodes, cmask = masked, ccount = count;
    const cl_int cngroups = ngroups, stride = direct ? count : ngroups;
    e = clSetKernelArg(k, 5, sizeof(cl_int), &nbase);
    e |= clSetKernelArg(k, 7, sizeof(cl_int), &gbase);
    e |= clSetKernelArg(k, 8, sizeof(cl_int), &clh);
    e |= clSetKernelArg(k, 9, sizeof(cl_int), &clw);
    e |= clSetKernelArg(k, 10, sizeof(cl_int), &cnm);
    e |= clSetKernelArg(k, 11, sizeof(cl_int), &cmask);
    e |= clSetKernelArg(k, 14, sizeof(cl_mem), direct ? &sl->out : &sl->part);
    e |= clSetKernelArg(k, 15, sizeof(cl_int), &stride);
    if (e != CL_SUCCESS)
        return fail(ce, CL_INVALID_KERNEL_ARGS, "match arguments");
    const size_t global = (size_t)ngroups * ce->wg, local = ce->wg;
    ev = event_for(ce, &sl->pf, sl->q, wide ? P_WIDE : P_NARROW);
    e = clEnqueueNDRangeKernel(sl->q, k, 1, NULL, &global, &local, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        drop_event(&sl->pf, ev);
        return fail(ce, e, wide ? "match_wide" : "match_narrow");
    }
    if (!direct) {
        e = clSetKernelArg(sl->k_reduce, 2, sizeof(cl_int), &nbase);
        e |= clSetKernelArg(sl->k_reduce, 3, sizeof(cl_int), &cngroups);
        e |= clSetKernelArg(sl->k_reduce, 4, sizeof(cl_int), &ccount);
        e |= clSetKernelArg(sl->k_reduce, 5, sizeof(cl_int), &cnm);
        if (e != CL_SUCCESS)
            return fail(ce, CL_INVALID_KERNEL_ARGS, "reduce_chunks arguments");
        const size_t rglobal = ((size_t)nmodes * count + 63) / 64 * 64;
        ev = event_for(ce, &sl->pf, sl->q, P_REDUCE);
        e = clEnqueueNDRangeKernel(sl->q, sl->k_reduce, 1, NULL, &rglobal, NULL, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            drop_event(&sl->pf, ev);
            return fail(ce, e, "reduce_chunks");
        }
        sl->reduce_calls++;
    }
    const size_t nout = sizeof(mmp_match) * nmodes * count;
    ev = event_for(ce, &sl->pf, sl->q, P_READ);
    /* Blocking: it also waits for the write of res_host. */
    e = clEnqueueReadBuffer(sl->q, sl->out, CL_TRUE, 0, nout, out, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        drop_event(&sl->pf, ev);
        clFinish(sl->q);
        return fail(ce, e, "read results");
    }
    if (ce->verbose) {
        collect(&sl->pf);
        long n = 0;
        for (int a = 0; a <= lh; a++)
            for (int b = 0; b <= lw; b++)
                n += ce->dev_n[mmp_scale(a, b)];
        sl->work += (double)n * area * nmodes;
    }
    sl->calls++;
    sl->wide_calls += wide;
    sl->bytes_up += sizeof(int32_t) * nres;
    sl->bytes_down += nout;
    sl->host_match_s += now_s() - t0;
    return 0;
}

static int ocl_match(void *state, const mmp_search_tables *t, const int32_t *orig,
                     const int32_t *pred, int nmodes, const uint8_t *real, int lh, int lw,
                     mmp_match *out)
{
    ocl *ce = state;
    (void)t;
    if (ce->failed)
        return MMP_EENGINE;
    if (nmodes < 1 || nmodes > MAXM || lh < 0 || lh > MMP_LOG2B || lw < 0 || lw > MMP_LOG2B ||
        !ce->cap)
        return MMP_EINVAL;
    slot *sl = slot_get(ce);
    const int err = slot_match(ce, sl, orig, pred, nmodes, real, lh, lw, out);
    slot_put(ce, sl);
    return err;
}

static int ocl_concurrency(void *state)
{
    return ((ocl *)state)->nslots;
}

const mmp_engine_ops mmp_engine_opencl = {
    .name = "opencl",
    .create = ocl_create,
    .destroy = ocl_destroy,
    .begin_block = ocl_begin_block,
    .match = ocl_match,
    .concurrency = ocl_concurrency,
};
