/*
 * Internal header of the opencl engine: the state that its files share and
 * the functions they call across files. Not for use outside
 * kernels/opencl/ (the engine's public face is its ops table,
 * mmp_engine_opencl, and the test hook of kernels/opencl/engine.h).
 *
 * The engine is split by job, one file each, so that each can be read on
 * its own:
 *   engine.c   create and destroy, the kernels' build, tuning, the ops table;
 *   device.c   platforms and devices: listing, choice by spec, names, the
 *              devices and probe ops;
 *   buffers.c  device memory: the dictionary and the per-block tables,
 *              uploaded by begin_step, and the node and group tables;
 *   batch.c    match(): requests gathered into batches, their launch on the
 *              device and the hand-out of their results;
 *   profile.c  the -v figures: profiling events, device busy time, the
 *              report through the logger.
 * The layouts the host shares with the kernels are in layout.h, defined
 * once for both; the assertions below tie them to the C side's own
 * definitions, so that a change on one side that the other cannot follow
 * stops the build.
 */
#ifndef MMP_KERNELS_OPENCL_OPENCL_H
#define MMP_KERNELS_OPENCL_OPENCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/log.h"
#include "common/scales.h"
#include "dict/dict.h"
#include "kernels/engine.h"
#include "kernels/opencl/layout.h"
#include "predict/predict.h"

/* The most modes per match() call: the kernels' build option -DMAXM. */
#define MAXM MMP_NUM_MODES
/* Nodes of every leaf shape together: the square of the sum over lh of
 * 2^(lh+1) - 1. */
#define NODE_TABLE (((4 << MMP_LOG2B) - MMP_LOG2B - 3) * ((4 << MMP_LOG2B) - MMP_LOG2B - 3))
#define MAX_DEVICES 64
#define MAX_HOST_THREADS 256
#define MAX_BATCHES 8
#define HIST 8 /* batch sizes 1, 2, 3-4, 5-8, ... in the -v figures */

/* ------------------------------------------- what the kernels assume */

/* The block geometry the kernels are written for is the codec's. */
_Static_assert(LOG2B == MMP_LOG2B && NLOG == MMP_NLOG && NSCALES == MMP_NSCALES,
               "layout.h's block geometry must be common/scales.h's");
_Static_assert(LEAF_MAX == MMP_B * MMP_B && LEAF_INT4 * 4 == LEAF_MAX,
               "a leaf of MMP_B x MMP_B samples fills whole int4 vectors in local memory");
/* The dictionary buffer: every scale's rows, in scale order, and nothing
 * else; the kernels' lane_index and hmin handle up to 16 lanes. */
_Static_assert(FIRST_SAMPLE(MMP_LOG2B, MMP_LOG2B) + MMP_B * MMP_B == DICT_SAMPLES &&
                   FIRST_SAMPLE(1, 0) == SCALE_ROW_SAMPLES,
               "FIRST_SAMPLE must put the scales one after another in DICT_SAMPLES rows");
_Static_assert(VEC_MAX == 16, "match.cl's lane_index and hmin are written for 16 lanes");
_Static_assert(PITCH_ALIGN >= VEC_MAX && PITCH_ALIGN % VEC_MAX == 0,
               "rows padded to PITCH_ALIGN must hold whole vectors of any VEC");
/* The per-block header: NSCALES ints per field, none overlapping, all
 * before the first index cost. */
_Static_assert(HDR_N >= 0 && HDR_COST >= HDR_N + MMP_NSCALES &&
                   HDR_NEWLO >= HDR_COST + MMP_NSCALES && HDR_SRC >= HDR_NEWLO + MMP_NSCALES &&
                   HDR_EPRE >= HDR_SRC + MMP_NSCALES,
               "the per-block header's fields must not overlap");
_Static_assert(HDR_INTS >= HDR_EPRE + MMP_NSCALES && HDR_INTS >= HDR_COST + MMP_NSCALES &&
                   HDR_INTS >= HDR_NEWLO + MMP_NSCALES && HDR_INTS >= HDR_SRC + MMP_NSCALES &&
                   HDR_INTS >= HDR_N + MMP_NSCALES,
               "the index costs must start after the per-block header");
_Static_assert(HDR_INTS % PITCH_ALIGN == 0, "each scale's index costs must start aligned");
/* The batch table. */
_Static_assert(R_FIELDS <= REQ_INTS && R_G0 >= 0 && R_G0 < R_FIELDS && R_GBASE < R_FIELDS &&
                   R_NBASE < R_FIELDS && R_LH < R_FIELDS && R_LW < R_FIELDS &&
                   R_NMODES < R_FIELDS && R_MASKED < R_FIELDS && R_RES < R_FIELDS &&
                   R_PART < R_FIELDS && R_OUT < R_FIELDS && R_NGROUPS < R_FIELDS &&
                   R_COUNT < R_FIELDS && R_R0 < R_FIELDS,
               "a request's fields must fit in REQ_INTS ints");
/* The node and group packing: fields wide enough for MMP_B, within 32 bits. */
_Static_assert(MMP_LOG2B <= NODE_AB_MASK, "a node's scale (a, b) must fit in NODE_AB_BITS");
_Static_assert(MMP_B - 1 <= NODE_POS_MASK, "a node's position (y0, x0) must fit in NODE_POS_BITS");
_Static_assert(NODE_BITS <= 32, "a packed node must fit in 32 bits");
_Static_assert(NODE_A(NODE_PACK(MMP_LOG2B, MMP_LOG2B, MMP_B - 1, MMP_B - 1)) == MMP_LOG2B &&
                   NODE_B(NODE_PACK(MMP_LOG2B, MMP_LOG2B, MMP_B - 1, MMP_B - 1)) == MMP_LOG2B &&
                   NODE_Y0(NODE_PACK(MMP_LOG2B, MMP_LOG2B, MMP_B - 1, MMP_B - 1)) == MMP_B - 1 &&
                   NODE_X0(NODE_PACK(MMP_LOG2B, MMP_LOG2B, MMP_B - 1, MMP_B - 1)) == MMP_B - 1 &&
                   NODE_PACK(0, 0, 0, 0) == 0,
               "NODE_A/B/Y0/X0 must undo NODE_PACK");
_Static_assert(((2 << MMP_LOG2B) - 1) * ((2 << MMP_LOG2B) - 1) - 1 <= GROUP_NODE_MASK,
               "every node of the largest leaf must fit in GROUP_NODE_BITS");
_Static_assert(GROUP_NODE_BITS < 32 && GROUP_CHUNK_MAX == (int)(UINT32_MAX >> GROUP_NODE_BITS),
               "a packed group must use all of 32 bits");
_Static_assert(GROUP_NODE(GROUP_PACK(961u, 5u)) == 961u && GROUP_CHUNK(GROUP_PACK(961u, 5u)) == 5u,
               "GROUP_NODE/GROUP_CHUNK must undo GROUP_PACK");
/* The results: match_t as the kernels write it is mmp_match. */
_Static_assert(sizeof(match_t) == sizeof(mmp_match) &&
                   offsetof(match_t, j) == offsetof(mmp_match, j) &&
                   offsetof(match_t, idx) == offsetof(mmp_match, idx) &&
                   offsetof(match_t, pad) == offsetof(mmp_match, pad) &&
                   sizeof(((match_t *)0)->j) == sizeof(((mmp_match *)0)->j) &&
                   sizeof(((match_t *)0)->idx) == sizeof(((mmp_match *)0)->idx),
               "mmp_match must be laid out as match_t of layout.h");
_Static_assert(sizeof(match_t) == sizeof(cl_long) + 2 * sizeof(cl_int) &&
                   offsetof(match_t, idx) == sizeof(cl_long),
               "match_t must have the layout of OpenCL's { long; int; int; }");
_Static_assert(MAXM >= 1, "the kernels need MAXM >= 1");

/* ------------------------------------------------------------- state */

/* The kinds of device commands in the -v figures (profile.c names them). */
enum { P_COSTS, P_STAGE, P_APPEND, P_RES, P_NARROW, P_WIDE, P_REDUCE, P_READ, NPROF };

/* Profiling events of one queue (verbose only). */
typedef struct prof {
    cl_event ev[8];
    int ev_kind[8], nev;
    double ms[NPROF];
    long n[NPROF];
    cl_ulong *span; /* start, end of every command */
    size_t nspan, span_cap;
} prof;

/* request.state: the call waits for its batch (REQ_PENDING), its thread
 * sleeps until it is done (REQ_ASLEEP), or it is done (REQ_DONE). */
enum { REQ_PENDING, REQ_ASLEEP, REQ_DONE };

/* One match() call waiting for its batch. */
typedef struct request {
    const int32_t *orig, *pred;
    const uint8_t *real;
    int nmodes, lh, lw;
    mmp_match *out;
    /* What the batch's input takes of it, made by the calling thread (not
     * by the one that launches the batch, which the device waits for):
     * the residuals before clipping of each mode, then the mask if any
     * pixel is not real (-1 real, 0 not); the largest residual. */
    int32_t res[(MAXM + 1) * LEAF_MAX];
    int masked;
    int64_t maxr;
    int err;                /* written by the driver before state turns REQ_DONE */
    _Atomic int state;
    /* The calling thread sleeps on these, the request's own, so that
     * neither the driver's wake-up nor the thread's return waits for a
     * lock that other calls take; made with the request and kept while it
     * is spare (a wake-up that comes late only finds a spurious one). */
    pthread_mutex_t m;
    pthread_cond_t cv;
    double poked_at;        /* -v: when the driver marked it done */
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
    cl_event done;                  /* the read of the results, when polled */
    long out_len;                   /* results read back */
    prof pf;
    double work, bytes_up, bytes_down;
    /* Host time: launching (api_s of it in the OpenCL calls), waiting for
     * the device, handing out */
    double launch_s, api_s, wait_s, hand_s;
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
    /* Calls queued by the search's threads, newest first: a lock-free
     * stack that the driver empties at once into its own queue. */
    _Atomic(request *) inbox;
    request *head, *tail;        /* the driver's: waiting for a batch, oldest first */
    pthread_mutex_t spare_lock;
    request *spare;              /* for submit(): free, linked by next (under spare_lock) */
    int nfree;                   /* the driver's, as are the three below */
    int free_list[MAX_BATCHES];
    batch *running[MAX_BATCHES]; /* launched, oldest first */
    int nrunning;
    double spin_s;               /* a waiting thread spins this long, then sleeps */
    int spin_us;                 /* the tune string's spin (-1: none) */
    int poll;                    /* 1: wait for a batch by polling its last command */
    /* The driver: a thread of the engine's own that launches the batches
     * and hands out their results; the threads in match() only queue their
     * calls and sleep until they are done. The lock and the condition are
     * only for the driver's sleep and its stop. */
    pthread_t driver_thread;
    int driver_started;
    pthread_mutex_t lock;
    _Atomic int driver_asleep, stop;
    pthread_cond_t driver_cv;    /* the driver sleeps on it when there is nothing to do */
    pthread_mutex_t fail_lock;
    int wg, vec, kt;                   /* work-group size, lanes per work-item, chunk target */
    int node_base[MMP_NLOG][MMP_NLOG]; /* first node of each leaf shape in nodes and info */
    int group_base[MMP_NLOG][MMP_NLOG], ngroups[MMP_NLOG][MMP_NLOG];
    int direct[MMP_NLOG][MMP_NLOG];    /* every node in one chunk: no reduce_chunks */

    /* What the device holds. */
    const mmp_dict *host_dict;
    uint32_t dict_id;         /* t->dict_id of host_dict */
    int cap;                      /* 0: nothing yet */
    int pitch;                    /* cap rounded up to PITCH_ALIGN */
    int dev_n[MMP_NSCALES];
    int64_t maxe;                 /* largest |sample| of the uploaded elements */
    size_t stage_cap;             /* ints */

    int32_t *blk_host, *stage_host;

    int verbose;
    mmp_logger log;
    _Atomic int failed;
    char why[512];               /* the first failure, for last_error */
    char name[256];
    prof pf; /* the main queue's */
    double host_begin_s, build_s;
    /* No batch on the device, with none waiting to go (-v): since when
     * (0: a batch is running), and how long in all. */
    double idle_since, idle_s;
    /* -v: the finished requests' wake-ups, the time their threads took to
     * run again after them, and how many (these two under spare_lock). */
    double wake_s, woke_s;
    long woke;
    long begins;
    double bytes_up;
} ocl;

/* One device of the platforms' lists. */
typedef struct dev_entry {
    cl_platform_id plat;
    cl_device_id dev;
    int p, d;
    cl_device_type type;
} dev_entry;

/* ------------------------------------------------- engine.c */

/* Keeps the first failure's reason (one line, for last_error) and turns it
 * into an MMP_E* code. */
int ocl_fail(ocl *ce, cl_int e, const char *what);

/* ------------------------------------------------- device.c */

/* Every device of every platform into list (MAX_DEVICES entries); 0, or
 * MMP_EENGINE with the reason in why. */
int ocl_enumerate(dev_entry *list, int *count, char *why, size_t whylen);
/* The index in list of the device that spec selects (NULL or "": the first
 * GPU, else the first device); MMP_EENGINE with the reason in why. */
int ocl_choose(const dev_entry *list, int count, const char *spec, char *why, size_t whylen);
void ocl_device_name(cl_device_id dev, char *buf, size_t len);
/* The ops devices and probe. */
int ocl_devices(mmp_engine_device *out, int max, const char *spec, int *pick, char *errbuf,
                size_t errlen);
int ocl_probe(const mmp_engine_config *cfg);

/* ------------------------------------------------- buffers.c */

/* Releases *m if there is one and clears it. */
void ocl_release_mem(cl_mem *m);
/* The node table of every leaf shape, uploaded once (sets node_base). */
int ocl_upload_nodes(ocl *ce);
/* Releases the engine's device buffers and their host copies (not the
 * batches'). */
void ocl_release_buffers(ocl *ce);
/* The op begin_step. */
int ocl_begin_step(void *state, const mmp_search_tables *t);

/* ------------------------------------------------- batch.c */

/* A batch's queue, kernels and per-call buffers (its part buffer comes with
 * the dictionary); ocl_batch_release frees what it got, even half made. */
int ocl_batch_create(ocl *ce, batch *b);
void ocl_batch_release(batch *b);
/* Starts the driver thread; ocl_driver_stop stops it (if started). */
int ocl_driver_start(ocl *ce);
void ocl_driver_stop(ocl *ce);
/* Frees a spare request, its lock and condition. */
void ocl_request_destroy(request *rq);
/* The op match. */
int ocl_match(void *state, const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
              int nmodes, const uint8_t *real, int lh, int lw, mmp_match *out);
/* The ops submit and wait. */
int ocl_submit(void *state, const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
               int nmodes, const uint8_t *real, int lh, int lw, mmp_match *out,
               mmp_engine_ticket *tk);
int ocl_wait(void *state, mmp_engine_ticket *tk);

/* ------------------------------------------------- profile.c */

/* Where an enqueue of this kind on q puts its event: NULL unless verbose. */
cl_event *ocl_event_for(const ocl *ce, prof *pf, cl_command_queue q, int kind);
/* An enqueue that failed left no event behind. */
void ocl_drop_event(prof *pf, cl_event *ev);
/* Adds the finished commands' times of pf to its figures. */
void ocl_collect(prof *pf);
/* Waits for every queue, collects their events and, when verbose, logs the
 * figures of the whole encode. */
void ocl_report(ocl *ce);

#endif
