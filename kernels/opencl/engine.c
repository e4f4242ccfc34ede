/*
 * The opencl search engine: exhaustive matching on an OpenCL device.
 *
 * The kernels (kernels/match.cl, embedded in the binary at build time) do
 * all the work of match(): the contract's argmin over the whole dictionary
 * of each residual node's scale, for every mode and every node of the
 * prediction leaf, one work-group per (node, chunk of elements); for leaves
 * whose nodes span several chunks a second small kernel reduces the chunks'
 * results.
 *
 * Batches. The search calls match() from many host threads at once (-t, 16
 * by default on a GPU), and a GPU runs one small kernel much as fast as one
 * that is many times larger, and the kernels of different queues one after
 * another. So the calls waiting at any moment go to the device together:
 * one write of their residuals and of a table that describes them, one
 * match kernel over all their work-groups, one reduce_chunks, one read of
 * all the results. A batch is launched as soon as one is free (by default
 * one at a time: the next gathers the calls that arrive while one runs),
 * and the thread that hands out a batch's results launches the next before
 * it returns.
 *
 * Device memory, allocated at dictionary capacity and kept for the encode:
 *   dict    every scale, samples interleaved by element (see match.cl);
 *   norms   the squared norm of every element;
 *   blk     per block: element counts, index costs of every scale;
 *   stage   the elements added since the last block, before append_elements
 *           scatters them into dict;
 *   in      per batch: the batch table, the residuals of the modes of every
 *           call and their masks of real pixels;
 *   part    per batch: each work-group's best per mode;
 *   out     per batch: the results, laid out as mmp_match;
 *   nodes   the residual nodes of every leaf shape, in mmp_match_offset order;
 *   groups  the work-groups of every leaf shape, (node, chunk);
 *   info    each node's first group and number of chunks.
 * Per block: one write of blk, and when the dictionary grew one write of
 * stage and one append_elements, through the main queue, finished before
 * any batch. Each batch has its own queue, kernels and buffers, and pinned
 * host memory for its transfers.
 *
 * The dictionary updates, redundancy check included, stay on the host: for
 * camera at lambda 10 they and the entropy coding take 0.06 s of a 4 s
 * encode, less than one device round trip per block would add.
 *
 * Any OpenCL failure is reported once on stderr (one line) and every later
 * call returns MMP_EENGINE.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "kernels/opencl/engine.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "common/timing.h"
#include "common/wait.h"
#include "kernels/engine.h"
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

#define MAX_HOST_THREADS 256
/* Host threads by default: on a GPU (the camera image at lambda 10 on an
 * H100 took 3.4-3.7 s with 12 or 16 and 3.5-4.2 s with 24 or 32; with the
 * first version of the batches, 5.5-5.7 s with 8 where 16 took 4.1-4.7 s),
 * and on a CPU device, whose kernels run on the same cores as the search. */
#define DEFAULT_HOST_THREADS_GPU 16
#define DEFAULT_HOST_THREADS_CPU 4

/* Profiling events of one queue (verbose only). */
typedef struct prof {
    cl_event ev[8];
    int ev_kind[8], nev;
    double ms[NPROF];
    long n[NPROF];
    cl_ulong *span; /* start, end of every command */
    size_t nspan, span_cap;
} prof;

/* The batch table: REQ_INTS ints per request, as in match.cl. */
#define REQ_INTS 16
enum { R_G0, R_GBASE, R_NBASE, R_LH, R_LW, R_NMODES, R_MASKED, R_RES, R_PART, R_OUT, R_NGROUPS,
       R_COUNT, R_R0 };
/* How long a thread waiting for a batch spins before it sleeps: on GPUs,
 * when there are cores enough for the host threads (on a CPU device the
 * spinning would take cores from the kernels). */
#define SPIN_S 50e-6
/* Batches in flight at once, by default: while the device runs one, the
 * next gathers requests (on an H100, 1 and 2 measured alike, 3.4-3.7 s for
 * camera at lambda 10 with 16 host threads; more batches are smaller). */
#define DEFAULT_BATCHES 1
#define MAX_BATCHES 8
#define HIST 8 /* batch sizes 1, 2, 3-4, 5-8, ... in the -v figures */

/* One match() call waiting for its batch. */
typedef struct request {
    const int32_t *orig, *pred;
    const uint8_t *real;
    int nmodes, lh, lw;
    mmp_match *out;
    int done, err;
    struct request *next;
} request;

/* What one batch in flight owns: its queue, kernels and buffers. */
typedef struct batch {
    cl_command_queue q;
    cl_kernel k_match[2], k_reduce; /* match: narrow, wide */
    cl_mem in, part, out;           /* table and residuals; partial results; results */
    cl_mem in_pin, out_pin;         /* pinned host memory behind in_host, out_host */
    int32_t *in_host;
    mmp_match *out_host;
    request **req;
    int nreq;
    int err;                        /* of the launch */
    long out_len;                   /* results read back */
    prof pf;
    double host_s, work, bytes_up, bytes_down;
    long runs, calls, wide_runs, reduce_runs, hist[HIST];
} batch;

typedef struct ocl {
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q; /* the main queue: per-block writes */
    cl_program prog;
    cl_kernel k_append;
    cl_mem dict, norms, blk, stage, nodes, groups, info;
    batch *batches;
    int nbatches;
    int threads;  /* host threads that may call match() at once: requests per batch */
    pthread_mutex_t lock;
    pthread_cond_t cv;         /* a batch ended */
    request *head, *tail;      /* waiting for a batch */
    int nfree;
    int free_list[MAX_BATCHES];
    batch *running[MAX_BATCHES]; /* launched, oldest first */
    int nrunning;
    int completing;              /* a thread waits for running[0]'s results */
    _Atomic unsigned epoch;      /* counts the broadcasts of cv */
    double spin_s;               /* a waiting thread spins this long, then sleeps */
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
    mmp_logger log;
    _Atomic int failed;
    char why[512];               /* the first failure, for last_error */
    char name[256];
    prof pf; /* the main queue's */
    double host_begin_s, build_s;
    long begins;
    double bytes_up;
} ocl;

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

/* Keeps the first failure's reason (one line, for last_error) and turns it
 * into an MMP_E* code. */
static int fail(ocl *ce, cl_int e, const char *what)
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
static int choose(const dev_entry *list, int count, const char *env, char *why, size_t whylen)
{
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
    snprintf(why, whylen, "no OpenCL device matches '%s' (%d found)", env, count);
    return MMP_EENGINE;
}

static int ocl_devices(mmp_engine_device *out, int max, const char *spec, int *pick,
                       char *errbuf, size_t errlen)
{
    dev_entry list[MAX_DEVICES];
    int count;
    *pick = -1;
    if (enumerate(list, &count, errbuf, errlen))
        return MMP_EENGINE;
    *pick = choose(list, count, spec, errbuf, errlen);
    if (*pick < 0)
        *pick = -1;
    for (int i = 0; i < count && i < max; i++) {
        mmp_engine_device *o = &out[i];
        memset(o, 0, sizeof *o);
        o->platform = list[i].p;
        o->device = list[i].d;
        o->is_gpu = (list[i].type & CL_DEVICE_TYPE_GPU) != 0;
        device_name(list[i].dev, o->name, sizeof o->name);
        clGetPlatformInfo(list[i].plat, CL_PLATFORM_NAME, sizeof o->platform_name,
                          o->platform_name, NULL);
        o->platform_name[sizeof o->platform_name - 1] = 0;
        cl_uint cus = 0;
        cl_ulong mem = 0;
        clGetDeviceInfo(list[i].dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
        clGetDeviceInfo(list[i].dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
        o->compute_units = cus;
        o->memory_mib = (unsigned long long)(mem >> 20);
        const cl_device_type t = list[i].type;
        snprintf(o->type, sizeof o->type, "%s",
                 t & CL_DEVICE_TYPE_GPU           ? "GPU"
                 : t & CL_DEVICE_TYPE_CPU         ? "CPU"
                 : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
                                                  : "other");
    }
    return count;
}

/* For -e auto: first choice when the device it would use is a GPU, not a
 * candidate otherwise (the CPU engines are faster on the CPU). */
static int ocl_probe(const mmp_engine_config *cfg)
{
    dev_entry list[MAX_DEVICES];
    int count;
    char why[200];
    if (enumerate(list, &count, why, sizeof why))
        return -1;
    const int pick = choose(list, count, cfg->device, why, sizeof why);
    if (pick < 0)
        return -1;
    return (list[pick].type & CL_DEVICE_TYPE_GPU) ? 2 : -1;
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
            t1 >= t0) {
            pf->ms[pf->ev_kind[i]] += (double)(t1 - t0) * 1e-6;
            if (pf->nspan == pf->span_cap) {
                size_t cap = pf->span_cap ? 2 * pf->span_cap : 4096;
                cl_ulong *p = realloc(pf->span, sizeof(cl_ulong) * 2 * cap);
                if (p) {
                    pf->span = p;
                    pf->span_cap = cap;
                }
            }
            if (pf->nspan < pf->span_cap) {
                pf->span[2 * pf->nspan] = t0;
                pf->span[2 * pf->nspan + 1] = t1;
                pf->nspan++;
            }
        }
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

static void batch_release(batch *b)
{
    if (b->in_host)
        clEnqueueUnmapMemObject(b->q, b->in_pin, b->in_host, 0, NULL, NULL);
    if (b->out_host)
        clEnqueueUnmapMemObject(b->q, b->out_pin, b->out_host, 0, NULL, NULL);
    if (b->q)
        clFinish(b->q);
    release_mem(&b->in_pin);
    release_mem(&b->out_pin);
    cl_mem *mems[] = {&b->in, &b->part, &b->out};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        release_mem(mems[i]);
    cl_kernel ks[] = {b->k_match[0], b->k_match[1], b->k_reduce};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i])
            clReleaseKernel(ks[i]);
    if (b->q)
        clReleaseCommandQueue(b->q);
    free(b->req);
    free(b->pf.span);
}

static int cmp_u64(const void *a, const void *b)
{
    const cl_ulong x = *(const cl_ulong *)a, y = *(const cl_ulong *)b;
    return x < y ? -1 : x > y;
}

/* How long the device was busy with any command (the union of the
 * commands' intervals), over the span from the first start to the last end. */
static void report_busy(ocl *ce)
{
    prof *pfs[MAX_BATCHES + 1];
    int np = 0;
    pfs[np++] = &ce->pf;
    for (int i = 0; i < ce->nbatches; i++)
        pfs[np++] = &ce->batches[i].pf;
    size_t m = 0;
    for (int i = 0; i < np; i++)
        m += pfs[i]->nspan;
    cl_ulong *all = malloc(sizeof(cl_ulong) * 2 * (m ? m : 1));
    if (!all)
        return;
    m = 0;
    for (int i = 0; i < np; i++) {
        if (pfs[i]->nspan)
            memcpy(all + 2 * m, pfs[i]->span, sizeof(cl_ulong) * 2 * pfs[i]->nspan);
        m += pfs[i]->nspan;
    }
    qsort(all, m, 2 * sizeof(cl_ulong), cmp_u64);
    double busy = 0;
    cl_ulong start = 0, end = 0;
    for (size_t i = 0; i < m; i++) {
        const cl_ulong a = all[2 * i], b = all[2 * i + 1];
        if (i == 0 || a > end) {
            busy += i ? (double)(end - start) : 0;
            start = a;
            end = b;
        } else if (b > end) {
            end = b;
        }
    }
    if (m)
        busy += (double)(end - start);
    mmp_log(&ce->log, MMP_LOG_INFO,
            "opencl: device busy %.1f ms of the %.1f ms from its first command to its last",
            busy * 1e-6, m ? (double)(end - all[0]) * 1e-6 : 0.0);
    free(all);
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
    /* The batches' figures, summed. */
    prof all = ce->pf;
    double host_s = 0, work = 0, bytes_up = ce->bytes_up, bytes_down = 0;
    long runs = 0, calls = 0, wide_runs = 0, reduce_runs = 0, hist[HIST] = {0};
    for (int i = 0; i < ce->nbatches; i++) {
        batch *b = &ce->batches[i];
        if (b->q) {
            clFinish(b->q);
            collect(&b->pf);
        }
        for (int k = 0; k < NPROF; k++) {
            all.ms[k] += b->pf.ms[k];
            all.n[k] += b->pf.n[k];
        }
        for (int k = 0; k < HIST; k++)
            hist[k] += b->hist[k];
        host_s += b->host_s;
        runs += b->runs;
        calls += b->calls;
        wide_runs += b->wide_runs;
        reduce_runs += b->reduce_runs;
        work += b->work;
        bytes_up += b->bytes_up;
        bytes_down += b->bytes_down;
    }
    if (ce->verbose && ce->begins) {
        const double dev_ms = all.ms[P_NARROW] + all.ms[P_WIDE];
        mmp_log(&ce->log, MMP_LOG_INFO,
                "opencl: %d host threads, %d batches in flight; %ld blocks (%.1f ms on the host), "
                "%ld match calls in %ld batches (%ld wide, %ld with reduce_chunks; %.1f ms on the "
                "host, %.1f us per batch); %.1f MB up, %.1f MB down; %.3g comparisons, %.2f G/s in "
                "the match kernels",
                ce->threads, ce->nbatches, ce->begins, ce->host_begin_s * 1e3, calls, runs,
                wide_runs, reduce_runs, host_s * 1e3, runs ? host_s * 1e6 / runs : 0.0,
                bytes_up / 1e6, bytes_down / 1e6, work, dev_ms > 0 ? work / dev_ms * 1e-6 : 0.0);
        char line[1024];
        size_t at = 0;
        for (int k = 0; k < HIST; k++)
            if (hist[k] && at < sizeof line)
                at += (size_t)snprintf(line + at, sizeof line - at, " %d-%d: %ld",
                                       k ? (1 << (k - 1)) + 1 : 1, 1 << k, hist[k]);
        mmp_log(&ce->log, MMP_LOG_INFO, "opencl: calls per batch:%s", at ? line : "");
        at = 0;
        for (int k = 0; k < NPROF; k++)
            if (all.n[k] && at < sizeof line)
                at += (size_t)snprintf(line + at, sizeof line - at, "%s %s %.1f ms (%ld, %.1f us each)",
                                       at ? "," : "", prof_name[k], all.ms[k], all.n[k],
                                       all.ms[k] * 1e3 / all.n[k]);
        mmp_log(&ce->log, MMP_LOG_INFO, "opencl: device time:%s", at ? line : "");
        report_busy(ce);
    }
    free(ce->pf.span);
    for (int i = 0; i < ce->nbatches; i++)
        batch_release(&ce->batches[i]);
    free(ce->batches);
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
    pthread_cond_destroy(&ce->cv);
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
    double t0 = mmp_now_seconds();
    ce->prog = clCreateProgramWithSource(ce->ctx, 1, &src, NULL, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "clCreateProgramWithSource");
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
        return fail(ce, e, "append_elements");
    return 0;
}

/* Ints of a batch's input: the table, then up to one leaf of residuals and
 * mask per host thread. */
static size_t in_ints(const ocl *ce)
{
    return (size_t)ce->threads * (REQ_INTS + (MAXM + 1) * LEAF_MAX);
}

/* A batch's queue, kernels and per-call buffers (part comes with the
 * dictionary, in alloc_groups). */
static int batch_create(ocl *ce, batch *b)
{
    cl_int e;
    b->q = clCreateCommandQueue(ce->ctx, ce->dev, ce->verbose ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS)
        return fail(ce, e, "clCreateCommandQueue");
    static const char *const names[3] = {"match_narrow", "match_wide", "reduce_chunks"};
    cl_kernel *ks[3] = {&b->k_match[0], &b->k_match[1], &b->k_reduce};
    for (int i = 0; i < 3; i++) {
        *ks[i] = clCreateKernel(ce->prog, names[i], &e);
        if (e != CL_SUCCESS)
            return fail(ce, e, names[i]);
    }
    const size_t nout = (size_t)ce->threads * MAXM * mmp_match_count(MMP_LOG2B, MMP_LOG2B);
    b->req = malloc(sizeof(request *) * ce->threads);
    if (!b->req)
        return MMP_ENOMEM;
    const size_t in_bytes = sizeof(int32_t) * in_ints(ce), out_bytes = sizeof(mmp_match) * nout;
    b->in = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY, in_bytes, NULL, &e);
    if (e == CL_SUCCESS)
        b->out = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE, out_bytes, NULL, &e);
    /* The host side of the transfers in pinned memory (buffers allocated by
     * the implementation and mapped for the engine's life): the copies run
     * straight from and to it. */
    if (e == CL_SUCCESS)
        b->in_pin = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, in_bytes,
                                   NULL, &e);
    if (e == CL_SUCCESS)
        b->out_pin = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, out_bytes,
                                    NULL, &e);
    if (e == CL_SUCCESS)
        b->in_host = clEnqueueMapBuffer(b->q, b->in_pin, CL_TRUE, CL_MAP_WRITE, 0, in_bytes, 0,
                                        NULL, NULL, &e);
    if (e == CL_SUCCESS)
        b->out_host = clEnqueueMapBuffer(b->q, b->out_pin, CL_TRUE, CL_MAP_READ, 0, out_bytes, 0,
                                         NULL, NULL, &e);
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

/* The engine config's tune string, "wg=N,vec=N,kt=N,batches=N" (any of
 * them, for benchmarks), overrides the defaults. */
static void tune(ocl *ce, int gpu, const char *env)
{
    ce->wg = gpu ? 128 : 8;
    ce->vec = gpu ? 1 : 16;
    ce->kt = 256;
    ce->nbatches = DEFAULT_BATCHES;
    while (env && *env) {
        int v = 0, used = 0;
        if (sscanf(env, "wg=%d%n", &v, &used) == 1 && v >= 1 && v <= 1024 && !(v & (v - 1)))
            ce->wg = v;
        else if (sscanf(env, "vec=%d%n", &v, &used) == 1 && v >= 1 && v <= 16 && !(v & (v - 1)))
            ce->vec = v;
        else if (sscanf(env, "kt=%d%n", &v, &used) == 1 && v >= 1 && v <= 65536)
            ce->kt = v;
        else if (sscanf(env, "batches=%d%n", &v, &used) == 1 && v >= 1 && v <= MAX_BATCHES)
            ce->nbatches = v;
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
    pthread_cond_init(&ce->cv, NULL);
    pthread_mutex_init(&ce->fail_lock, NULL);
    atomic_init(&ce->failed, 0);
    ce->verbose = cfg->verbose;
    ce->log = cfg->log;
    snprintf(ce->name, sizeof ce->name, "no device");

    dev_entry list[MAX_DEVICES];
    int count, pick = -1;
    char why[200];
    if (enumerate(list, &count, why, sizeof why) ||
        (pick = choose(list, count, cfg->device, why, sizeof why)) < 0) {
        ocl_destroy(ce);
        return mmp_error(errbuf, errlen, MMP_EENGINE, "%s", why);
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
    tune(ce, (list[pick].type & CL_DEVICE_TYPE_GPU) != 0, cfg->tune);
    while (ce->wg > 1 && ((size_t)ce->wg > maxwg || local_bytes(ce->wg) > lmem))
        ce->wg /= 2;
    if (local_bytes(ce->wg) > lmem) {
        snprintf(ce->why, sizeof ce->why,
                 "opencl: %s has %llu bytes of local memory, the kernels need %zu", ce->name, (unsigned long long)lmem, local_bytes(1));
        ce->failed = 1;
        err = MMP_EENGINE;
        goto out;
    }
    if ((err = build(ce)) || (err = upload_nodes(ce)))
        goto out;

    /* Host threads for the search: they spend most of their time waiting
     * for the device, so their number need not be that of the cores; more
     * of them make larger batches. */
    const int gpu = (list[pick].type & CL_DEVICE_TYPE_GPU) != 0;
    ce->threads = cfg->threads > 0 ? cfg->threads
                  : gpu           ? DEFAULT_HOST_THREADS_GPU
                                  : DEFAULT_HOST_THREADS_CPU;
    ce->threads = ce->threads < 1 ? 1 : ce->threads > MAX_HOST_THREADS ? MAX_HOST_THREADS
                                                                       : ce->threads;
    /* Spin only where every host thread may have a core of its own. */
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ce->spin_s = gpu && ce->threads <= cores ? SPIN_S : 0;
    ce->batches = calloc((size_t)ce->nbatches, sizeof(batch));
    if (!ce->batches) {
        err = MMP_ENOMEM;
        goto out;
    }
    for (int i = 0; i < ce->nbatches; i++) {
        if ((err = batch_create(ce, &ce->batches[i])))
            goto out;
        ce->free_list[ce->nfree++] = i;
    }
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
    for (int i = 0; i < ce->nbatches && e == CL_SUCCESS; i++)
        ce->batches[i].part = clCreateBuffer(
            ce->ctx, CL_MEM_READ_WRITE, sizeof(mmp_match) * MAXM * most * ce->threads, NULL, &e);
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
    for (int i = 0; i < ce->nbatches; i++)
        release_mem(&ce->batches[i].part);
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
        snprintf(ce->why, sizeof ce->why,
                 "opencl: out of device memory (%zu MiB for the dictionary, %s "
                 "allocates at most %llu MiB)",
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
    const double t0 = mmp_now_seconds();
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
    for (int i = 0; i < ce->nbatches; i++) {
        batch *bt = &ce->batches[i];
        for (int w = 0; w < 2; w++) {
            cl_kernel k = bt->k_match[w];
            e = clSetKernelArg(k, 0, sizeof(cl_mem), &ce->dict);
            e |= clSetKernelArg(k, 1, sizeof(cl_mem), &ce->norms);
            e |= clSetKernelArg(k, 2, sizeof(cl_mem), &ce->blk);
            e |= clSetKernelArg(k, 3, sizeof(cl_mem), &bt->in);
            e |= clSetKernelArg(k, 5, sizeof(cl_mem), &ce->nodes);
            e |= clSetKernelArg(k, 6, sizeof(cl_mem), &ce->groups);
            e |= clSetKernelArg(k, 7, sizeof(cl_long), &lambda);
            e |= clSetKernelArg(k, 8, sizeof(cl_int), &pitch);
            e |= clSetKernelArg(k, 9, sizeof(cl_mem), &bt->part);
            e |= clSetKernelArg(k, 10, sizeof(cl_mem), &bt->out);
            if (e != CL_SUCCESS)
                return fail(ce, CL_INVALID_KERNEL_ARGS, "match arguments");
        }
        e = clSetKernelArg(bt->k_reduce, 0, sizeof(cl_mem), &bt->part);
        e |= clSetKernelArg(bt->k_reduce, 1, sizeof(cl_mem), &ce->info);
        e |= clSetKernelArg(bt->k_reduce, 2, sizeof(cl_mem), &bt->in);
        e |= clSetKernelArg(bt->k_reduce, 5, sizeof(cl_mem), &bt->out);
        if (e != CL_SUCCESS)
            return fail(ce, CL_INVALID_KERNEL_ARGS, "reduce_chunks arguments");
    }
    /* The batches' queues must see this block's tables; the host copies
     * may be rewritten at the next block. */
    if ((e = clFinish(ce->q)) != CL_SUCCESS)
        return fail(ce, e, "clFinish");
    ce->begins++;
    ce->host_begin_s += mmp_now_seconds() - t0;
    return 0;
}

/*
 * Sends the requests of b to the device as one batch: their residuals and
 * the batch table in one write, one match kernel over every work-group of
 * every request, one reduce_chunks over the nodes of several chunks, and
 * one read of all the results, queued without waiting (finish_batch waits).
 */
static int launch_batch(ocl *ce, batch *b)
{
    const double t0 = mmp_now_seconds();
    int32_t *tab = b->in_host;
    const size_t res0 = (size_t)ce->threads * REQ_INTS;
    size_t at = res0;
    int groups = 0, wide = 0;
    long part_at = 0, out_at = 0, red = 0;
    double work = 0;
    for (int r = 0; r < b->nreq; r++) {
        const request *rq = b->req[r];
        const int lh = rq->lh, lw = rq->lw, nmodes = rq->nmodes;
        const int area = 1 << (lh + lw), count = mmp_match_count(lh, lw);
        /* Residuals before clipping, and the largest of them. */
        int32_t *res = b->in_host + at;
        int64_t maxr = 0;
        for (int m = 0; m < nmodes; m++)
            for (int i = 0; i < area; i++) {
                const int64_t v = (int64_t)rq->orig[i] - rq->pred[(long)m * area + i];
                res[m * area + i] = (int32_t)v;
                maxr = v > maxr ? v : -v > maxr ? -v : maxr;
            }
        int masked = 0;
        if (rq->real)
            for (int i = 0; i < area; i++) {
                res[nmodes * area + i] = rq->real[i] ? -1 : 0;
                masked |= !rq->real[i];
            }
        /* 32-bit sums when no node can exceed 2^32 - 1. */
        const int64_t bound = maxr + ce->maxe;
        wide |= !(bound <= 65535 && (uint64_t)(bound * bound) * area <= UINT32_MAX);
        const int direct = ce->direct[lh][lw], ngroups = ce->ngroups[lh][lw];
        int32_t *tr = tab + (size_t)r * REQ_INTS;
        tr[R_G0] = groups;
        tr[R_GBASE] = ce->group_base[lh][lw];
        tr[R_NBASE] = ce->node_base[lh][lw];
        tr[R_LH] = lh;
        tr[R_LW] = lw;
        tr[R_NMODES] = nmodes;
        tr[R_MASKED] = masked;
        tr[R_RES] = (int32_t)at;
        tr[R_PART] = (int32_t)part_at;
        tr[R_OUT] = (int32_t)out_at;
        tr[R_NGROUPS] = ngroups;
        tr[R_COUNT] = count;
        tr[R_R0] = (int32_t)red;
        groups += ngroups;
        if (!direct) {
            part_at += (long)nmodes * ngroups;
            red += (long)nmodes * count;
        }
        out_at += (long)nmodes * count;
        at += (size_t)(nmodes + masked) * area;
        if (ce->verbose) {
            long n = 0;
            for (int a = 0; a <= lh; a++)
                for (int c = 0; c <= lw; c++)
                    n += ce->dev_n[mmp_scale(a, c)];
            work += (double)n * area * nmodes;
        }
    }

    cl_int e;
    cl_event *ev = event_for(ce, &b->pf, b->q, P_RES);
    e = clEnqueueWriteBuffer(b->q, b->in, CL_FALSE, 0, sizeof(int32_t) * at, b->in_host, 0, NULL,
                             ev);
    if (e != CL_SUCCESS) {
        drop_event(&b->pf, ev);
        return fail(ce, e, "write residuals");
    }
    const cl_int nreq = b->nreq;
    cl_kernel k = b->k_match[wide];
    if ((e = clSetKernelArg(k, 4, sizeof(cl_int), &nreq)) != CL_SUCCESS) {
        clFinish(b->q);
        return fail(ce, CL_INVALID_KERNEL_ARGS, "match arguments");
    }
    const size_t global = (size_t)groups * ce->wg, local = ce->wg;
    ev = event_for(ce, &b->pf, b->q, wide ? P_WIDE : P_NARROW);
    e = clEnqueueNDRangeKernel(b->q, k, 1, NULL, &global, &local, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        drop_event(&b->pf, ev);
        clFinish(b->q);
        return fail(ce, e, wide ? "match_wide" : "match_narrow");
    }
    if (red) {
        const cl_int total = (cl_int)red;
        e = clSetKernelArg(b->k_reduce, 3, sizeof(cl_int), &nreq);
        e |= clSetKernelArg(b->k_reduce, 4, sizeof(cl_int), &total);
        if (e != CL_SUCCESS) {
            clFinish(b->q);
            return fail(ce, CL_INVALID_KERNEL_ARGS, "reduce_chunks arguments");
        }
        const size_t rglobal = ((size_t)red + 63) / 64 * 64;
        ev = event_for(ce, &b->pf, b->q, P_REDUCE);
        e = clEnqueueNDRangeKernel(b->q, b->k_reduce, 1, NULL, &rglobal, NULL, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            drop_event(&b->pf, ev);
            clFinish(b->q);
            return fail(ce, e, "reduce_chunks");
        }
        b->reduce_runs++;
    }
    ev = event_for(ce, &b->pf, b->q, P_READ);
    e = clEnqueueReadBuffer(b->q, b->out, CL_FALSE, 0, sizeof(mmp_match) * out_at, b->out_host, 0,
                            NULL, ev);
    if (e != CL_SUCCESS) {
        drop_event(&b->pf, ev);
        clFinish(b->q);
        return fail(ce, e, "read results");
    }
    if ((e = clFlush(b->q)) != CL_SUCCESS) {
        clFinish(b->q);
        return fail(ce, e, "clFlush");
    }
    b->out_len = out_at;
    b->wide_runs += wide;
    b->work += work;
    b->bytes_up += sizeof(int32_t) * at;
    b->host_s += mmp_now_seconds() - t0;
    return 0;
}

/* Waits for the batch that launch_batch() sent and hands out its results. */
static int finish_batch(ocl *ce, batch *b)
{
    const double t0 = mmp_now_seconds();
    cl_int e = clFinish(b->q);
    if (e != CL_SUCCESS)
        return fail(ce, e, "clFinish");
    const int32_t *tab = b->in_host;
    for (int r = 0; r < b->nreq; r++) {
        const request *rq = b->req[r];
        memcpy(rq->out, b->out_host + tab[(size_t)r * REQ_INTS + R_OUT],
               sizeof(mmp_match) * rq->nmodes * mmp_match_count(rq->lh, rq->lw));
    }
    if (ce->verbose)
        collect(&b->pf);
    int hk = 0;
    while (hk < HIST - 1 && (1 << hk) < b->nreq)
        hk++;
    b->hist[hk]++;
    b->runs++;
    b->calls += b->nreq;
    b->bytes_down += sizeof(mmp_match) * b->out_len;
    b->host_s += mmp_now_seconds() - t0;
    return 0;
}

/* Wakes the waiters of ce (lock held). */
static void wake_all(ocl *ce)
{
    atomic_fetch_add_explicit(&ce->epoch, 1, memory_order_release);
    pthread_cond_broadcast(&ce->cv);
}

/*
 * A call joins the queue of requests and waits until a batch has computed
 * it. The threads in match() share two jobs, taken by whoever is free:
 * launching a batch of every request waiting whenever a batch is free, and
 * waiting for the oldest launched batch, then handing out its results. The
 * thread that hands out a batch's results launches the next batch before
 * it returns, so the device gets it without waiting for a thread to wake
 * up. A waiting thread spins for a few microseconds before it sleeps.
 */
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
    request rq = {.orig = orig, .pred = pred, .real = real, .nmodes = nmodes, .lh = lh, .lw = lw,
                  .out = out};
    pthread_mutex_lock(&ce->lock);
    if (ce->tail)
        ce->tail->next = &rq;
    else
        ce->head = &rq;
    ce->tail = &rq;
    for (;;) {
        if (ce->head && ce->nfree) {
            batch *b = &ce->batches[ce->free_list[--ce->nfree]];
            b->nreq = 0;
            while (ce->head && b->nreq < ce->threads) {
                b->req[b->nreq++] = ce->head;
                ce->head = ce->head->next;
            }
            if (!ce->head)
                ce->tail = NULL;
            pthread_mutex_unlock(&ce->lock);
            b->err = ce->failed ? MMP_EENGINE : launch_batch(ce, b);
            pthread_mutex_lock(&ce->lock);
            ce->running[ce->nrunning++] = b;
            wake_all(ce);
            continue;
        }
        if (rq.done)
            break;
        if (ce->nrunning && !ce->completing) {
            batch *b = ce->running[0];
            ce->completing = 1;
            pthread_mutex_unlock(&ce->lock);
            const int err = b->err ? b->err : finish_batch(ce, b);
            pthread_mutex_lock(&ce->lock);
            for (int r = 0; r < b->nreq; r++) {
                b->req[r]->err = err;
                b->req[r]->done = 1;
            }
            ce->nrunning--;
            memmove(ce->running, ce->running + 1, sizeof(batch *) * ce->nrunning);
            ce->free_list[ce->nfree++] = (int)(b - ce->batches);
            ce->completing = 0;
            wake_all(ce);
            continue;
        }
        /* Nothing to do but wait: spin a little, then sleep. */
        const unsigned ep = atomic_load_explicit(&ce->epoch, memory_order_acquire);
        pthread_mutex_unlock(&ce->lock);
        const double t0 = mmp_now_seconds();
        for (int i = 0; atomic_load_explicit(&ce->epoch, memory_order_acquire) == ep; i++)
            if ((i & 63) == 63 && mmp_now_seconds() - t0 > ce->spin_s)
                break;
            else
                mmp_wait_step(0);
        pthread_mutex_lock(&ce->lock);
        if (atomic_load_explicit(&ce->epoch, memory_order_relaxed) == ep)
            pthread_cond_wait(&ce->cv, &ce->lock);
    }
    pthread_mutex_unlock(&ce->lock);
    return rq.err;
}

void mmp_opencl_batch_counts(void *state, long *calls, long *batches)
{
    ocl *ce = state;
    *calls = *batches = 0;
    pthread_mutex_lock(&ce->lock);
    for (int i = 0; i < ce->nbatches; i++) {
        *calls += ce->batches[i].calls;
        *batches += ce->batches[i].runs;
    }
    pthread_mutex_unlock(&ce->lock);
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
    .begin_block = ocl_begin_block,
    .match = ocl_match,
    .concurrency = ocl_concurrency,
    /* Every split as a task: the more calls wait at once, the larger the
     * batches. */
    .task_min_area = 2 * (1 << (2 * MMP_LOG2_PMIN)),
};
