/*
 * The opencl engine's match(): the calls gather into batches, one launch
 * each, and their results go back to the calling threads.
 *
 * Why batches. The search calls match() from many host threads at once
 * (-t; on a GPU more than there are cores, since they mostly wait), a GPU
 * runs one small kernel in about the time of one many times larger, and
 * the kernels of different queues ran one after another, never together.
 * So the calls waiting at any moment go to the device together: one write
 * of their residuals and of a table that describes them (layout.h: REQ_INTS,
 * R_*), one match kernel over all their work-groups, one reduce_chunks, one
 * read of all the results. A batch is launched as soon as one is free (by
 * default one at a time: the next gathers the calls that arrive while one
 * runs).
 *
 * Each batch has its own queue, kernels and buffers, and pinned host memory
 * for its transfers. A thread of the engine's own, the driver (drive),
 * launches the batches, waits for each, hands out its results and launches
 * the next; the threads in match() only queue their calls (on a lock-free
 * stack, the driver's inbox) and sleep, each on its request's own lock and
 * condition, until the driver wakes them. While it works, the driver takes
 * no lock that a call takes (the calls share only the spare requests'
 * short one, and take the engine's lock only to wake a sleeping driver):
 * when it did, a woken thread waited for the lock while the driver held it
 * to hand out a batch (docs/tuning.md, "OpenCL engine"). The driver does
 * nothing else, so it is there when a batch
 * ends: when threads of the search took turns at it, one whose own call
 * came back had to wake another to wait for the next batch, and a woken
 * thread runs later than a batch lasts on a GPU. A call may
 * also come in two halves (the ops submit and wait), so that the search
 * prices the transform while the device matches.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/timing.h"
#include "common/wait.h"
#include "kernels/opencl/engine.h"
#include "kernels/opencl/opencl.h"

/* Ints of a batch's input: the table, then up to one leaf of residuals and
 * mask per host thread. */
static size_t in_ints(const ocl *ce)
{
    return (size_t)ce->threads * (REQ_INTS + (MAXM + 1) * LEAF_MAX);
}

int ocl_batch_create(ocl *ce, batch *b)
{
    cl_int e;
    b->q = clCreateCommandQueue(ce->ctx, ce->dev, ce->verbose ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "clCreateCommandQueue");
    static const char *const names[3] = {"match_narrow", "match_wide", "reduce_chunks"};
    cl_kernel *ks[3] = {&b->k_match[0], &b->k_match[1], &b->k_reduce};
    for (int i = 0; i < 3; i++) {
        *ks[i] = clCreateKernel(ce->prog, names[i], &e);
        if (e != CL_SUCCESS)
            return ocl_fail(ce, e, names[i]);
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
    return e == CL_SUCCESS ? 0 : ocl_fail(ce, e, "clCreateBuffer");
}

void ocl_batch_release(batch *b)
{
    if (b->done)
        clReleaseEvent(b->done);
    if (b->in_host)
        clEnqueueUnmapMemObject(b->q, b->in_pin, b->in_host, 0, NULL, NULL);
    if (b->out_host)
        clEnqueueUnmapMemObject(b->q, b->out_pin, b->out_host, 0, NULL, NULL);
    if (b->q)
        clFinish(b->q);
    ocl_release_mem(&b->in_pin);
    ocl_release_mem(&b->out_pin);
    cl_mem *mems[] = {&b->in, &b->part, &b->out};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        ocl_release_mem(mems[i]);
    cl_kernel ks[] = {b->k_match[0], b->k_match[1], b->k_reduce};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i])
            clReleaseKernel(ks[i]);
    if (b->q)
        clReleaseCommandQueue(b->q);
    free(b->req);
    free(b->pf.span);
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
        const int lh = rq->lh, lw = rq->lw, nmodes = rq->nmodes, masked = rq->masked;
        const int area = 1 << (lh + lw), count = mmp_match_count(lh, lw);
        const size_t nres = (size_t)(nmodes + masked) * area;
        memcpy(b->in_host + at, rq->res, sizeof(int32_t) * nres);
        /* 32-bit sums when no node can exceed 2^32 - 1. */
        const int64_t bound = rq->maxr + ce->maxe;
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
        at += nres;
        if (ce->verbose) {
            long n = 0;
            for (int a = 0; a <= lh; a++)
                for (int c = 0; c <= lw; c++)
                    n += ce->dev_n[mmp_scale(a, c)];
            work += (double)n * area * nmodes;
        }
    }

    cl_int e;
    const double t_api = mmp_now_seconds();
    cl_event *ev = ocl_event_for(ce, &b->pf, b->q, P_RES);
    e = clEnqueueWriteBuffer(b->q, b->in, CL_FALSE, 0, sizeof(int32_t) * at, b->in_host, 0, NULL,
                             ev);
    if (e != CL_SUCCESS) {
        ocl_drop_event(&b->pf, ev);
        return ocl_fail(ce, e, "write residuals");
    }
    const cl_int nreq = b->nreq;
    cl_kernel k = b->k_match[wide];
    if ((e = clSetKernelArg(k, 4, sizeof(cl_int), &nreq)) != CL_SUCCESS) {
        clFinish(b->q);
        return ocl_fail(ce, CL_INVALID_KERNEL_ARGS, "match arguments");
    }
    const size_t global = (size_t)groups * ce->wg, local = ce->wg;
    ev = ocl_event_for(ce, &b->pf, b->q, wide ? P_WIDE : P_NARROW);
    e = clEnqueueNDRangeKernel(b->q, k, 1, NULL, &global, &local, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        ocl_drop_event(&b->pf, ev);
        clFinish(b->q);
        return ocl_fail(ce, e, wide ? "match_wide" : "match_narrow");
    }
    if (red) {
        const cl_int total = (cl_int)red;
        e = clSetKernelArg(b->k_reduce, 3, sizeof(cl_int), &nreq);
        e |= clSetKernelArg(b->k_reduce, 4, sizeof(cl_int), &total);
        if (e != CL_SUCCESS) {
            clFinish(b->q);
            return ocl_fail(ce, CL_INVALID_KERNEL_ARGS, "reduce_chunks arguments");
        }
        const size_t rglobal = ((size_t)red + 63) / 64 * 64;
        ev = ocl_event_for(ce, &b->pf, b->q, P_REDUCE);
        e = clEnqueueNDRangeKernel(b->q, b->k_reduce, 1, NULL, &rglobal, NULL, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            ocl_drop_event(&b->pf, ev);
            clFinish(b->q);
            return ocl_fail(ce, e, "reduce_chunks");
        }
        b->reduce_runs++;
    }
    ev = ocl_event_for(ce, &b->pf, b->q, P_READ);
    cl_event done = NULL;
    e = clEnqueueReadBuffer(b->q, b->out, CL_FALSE, 0, sizeof(mmp_match) * out_at, b->out_host, 0,
                            NULL, ev ? ev : ce->poll ? &done : NULL);
    if (e != CL_SUCCESS) {
        ocl_drop_event(&b->pf, ev);
        clFinish(b->q);
        return ocl_fail(ce, e, "read results");
    }
    if (ce->poll && ev) {
        done = *ev;
        clRetainEvent(done);
    }
    if ((e = clFlush(b->q)) != CL_SUCCESS) {
        if (done)
            clReleaseEvent(done);
        clFinish(b->q);
        return ocl_fail(ce, e, "clFlush");
    }
    b->done = done;
    b->out_len = out_at;
    b->wide_runs += wide;
    b->work += work;
    b->bytes_up += sizeof(int32_t) * at;
    const double t1 = mmp_now_seconds();
    b->launch_s += t1 - t0;
    b->api_s += t1 - t_api;
    return 0;
}

/* Waits for the batch that launch_batch() sent and hands out its results. */
static int finish_batch(ocl *ce, batch *b)
{
    const double t0 = mmp_now_seconds();
    cl_int e = CL_SUCCESS;
    if (b->done) {
        /* The read of the results is the batch's last command: poll it,
         * which notices its end sooner than clFinish's sleep. */
        cl_int st = CL_QUEUED;
        while ((e = clGetEventInfo(b->done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                   NULL)) == CL_SUCCESS &&
               st > CL_COMPLETE)
            mmp_wait_step(0);
        clReleaseEvent(b->done);
        b->done = NULL;
        if (e == CL_SUCCESS && st < 0)
            e = st;
    }
    if (e == CL_SUCCESS)
        e = clFinish(b->q);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "clFinish");
    const double t1 = mmp_now_seconds();
    b->wait_s += t1 - t0;
    const int32_t *tab = b->in_host;
    for (int r = 0; r < b->nreq; r++) {
        const request *rq = b->req[r];
        memcpy(rq->out, b->out_host + tab[(size_t)r * REQ_INTS + R_OUT],
               sizeof(mmp_match) * rq->nmodes * mmp_match_count(rq->lh, rq->lw));
    }
    if (ce->verbose)
        ocl_collect(&b->pf);
    int hk = 0;
    while (hk < HIST - 1 && (1 << hk) < b->nreq)
        hk++;
    b->hist[hk]++;
    b->runs++;
    b->calls += b->nreq;
    b->bytes_down += sizeof(mmp_match) * b->out_len;
    b->hand_s += mmp_now_seconds() - t1;
    return 0;
}

/* The driver's queue gets every call queued since it last looked, oldest
 * first. */
static void take_inbox(ocl *ce)
{
    request *r = atomic_exchange_explicit(&ce->inbox, NULL, memory_order_seq_cst);
    request *oldest = NULL, *newest = r;
    while (r) {
        request *next = r->next;
        r->next = oldest;
        oldest = r;
        r = next;
    }
    if (!oldest)
        return;
    if (ce->tail)
        ce->tail->next = oldest;
    else
        ce->head = oldest;
    ce->tail = newest;
}

/* Launches a batch of every request waiting, up to one per host thread,
 * if a batch is free. Returns 1 if it launched one. */
static int launch_waiting(ocl *ce)
{
    if (!ce->nfree)
        return 0;
    take_inbox(ce);
    if (!ce->head)
        return 0;
    batch *b = &ce->batches[ce->free_list[--ce->nfree]];
    b->nreq = 0;
    while (ce->head && b->nreq < ce->threads) {
        b->req[b->nreq++] = ce->head;
        ce->head = ce->head->next;
    }
    if (!ce->head)
        ce->tail = NULL;
    if (ce->verbose && ce->idle_since > 0) {
        ce->idle_s += mmp_now_seconds() - ce->idle_since;
        ce->idle_since = 0;
    }
    b->err = ce->failed ? MMP_EENGINE : launch_batch(ce, b);
    ce->running[ce->nrunning++] = b;
    return 1;
}

/* Marks rq done, and wakes its thread if it sleeps. rq may be back in the
 * spares, or in another call, as soon as its state is REQ_DONE: only its
 * lock and condition, which live as long as the engine, are touched after
 * that (a wake-up the new call takes as spurious). */
static void mark_done(ocl *ce, request *rq, int err)
{
    rq->err = err;
    if (ce->verbose)
        rq->poked_at = mmp_now_seconds();
    if (atomic_exchange_explicit(&rq->state, REQ_DONE, memory_order_acq_rel) == REQ_ASLEEP) {
        pthread_mutex_lock(&rq->m);
        pthread_cond_signal(&rq->cv);
        pthread_mutex_unlock(&rq->m);
    }
}

/* Waits for the oldest launched batch and hands out its results, waking
 * the threads of its requests. */
static void complete_oldest(ocl *ce)
{
    batch *b = ce->running[0];
    const int err = b->err ? b->err : finish_batch(ce, b);
    /* The finished requests' threads are woken before the next batch is
     * launched (launching first was no faster). */
    const double tw = ce->verbose ? mmp_now_seconds() : 0;
    for (int r = 0; r < b->nreq; r++)
        mark_done(ce, b->req[r], err);
    if (ce->verbose)
        ce->wake_s += mmp_now_seconds() - tw;
    ce->nrunning--;
    memmove(ce->running, ce->running + 1, sizeof(batch *) * ce->nrunning);
    ce->free_list[ce->nfree++] = (int)(b - ce->batches);
    if (ce->verbose && !ce->nrunning && !ce->head &&
        !atomic_load_explicit(&ce->inbox, memory_order_relaxed))
        ce->idle_since = mmp_now_seconds();
}

/*
 * Until rq is done: the driver hands it out and wakes this thread, which
 * sleeps meanwhile (after spinning spin_s). No event wakes every sleeper:
 * with many host threads, waking them all for each batch cost more system
 * time than the search's own work.
 */
static void sleep_until_done(ocl *ce, request *rq)
{
    int pending = REQ_PENDING;
    if (!atomic_compare_exchange_strong_explicit(&rq->state, &pending, REQ_ASLEEP,
                                                 memory_order_acq_rel, memory_order_acquire))
        return; /* done already */
    if (ce->spin_s > 0) {
        const double t0 = mmp_now_seconds();
        for (int i = 0; atomic_load_explicit(&rq->state, memory_order_acquire) != REQ_DONE; i++)
            if ((i & 63) == 63 && mmp_now_seconds() - t0 > ce->spin_s)
                break;
            else
                mmp_wait_step(0);
    }
    if (atomic_load_explicit(&rq->state, memory_order_acquire) != REQ_DONE) {
        pthread_mutex_lock(&rq->m);
        while (atomic_load_explicit(&rq->state, memory_order_acquire) != REQ_DONE)
            pthread_cond_wait(&rq->cv, &rq->m);
        pthread_mutex_unlock(&rq->m);
    }
    if (ce->verbose) {
        const double late = mmp_now_seconds() - rq->poked_at;
        pthread_mutex_lock(&ce->spare_lock);
        ce->woke_s += late;
        ce->woke++;
        pthread_mutex_unlock(&ce->spare_lock);
    }
}

/* How long the driver spins for a call before it sleeps, where it polls
 * for the device (ce->poll): longer than a batch's turn, so that it sleeps
 * only between steps. */
#define DRIVER_SPIN_S 1e-3

/* Sleeps until a call is queued or the engine stops; returns 0 to stop.
 * The driver says it sleeps before it looks at the inbox, and enqueue
 * looks whether it sleeps after it queues (both sequentially consistent),
 * so one of them sees the other. */
static int driver_sleep(ocl *ce)
{
    atomic_store(&ce->driver_asleep, 1);
    pthread_mutex_lock(&ce->lock);
    while (!atomic_load(&ce->inbox) && !atomic_load(&ce->stop))
        pthread_cond_wait(&ce->driver_cv, &ce->lock);
    pthread_mutex_unlock(&ce->lock);
    atomic_store(&ce->driver_asleep, 0);
    return !atomic_load(&ce->stop);
}

/* The driver's loop: launch a batch of the calls waiting whenever one is
 * free, wait for the oldest launched batch and hand out its results; with
 * nothing to do, spin a while where it polls (calls come within
 * microseconds while a step is searched), then sleep until a call is
 * queued. The driver alone touches the batches and its queue, so it takes
 * no lock for them. */
static void *drive(void *arg)
{
    ocl *ce = arg;
    const double spin = ce->poll ? DRIVER_SPIN_S : 0;
    for (;;) {
        if (launch_waiting(ce))
            continue;
        if (ce->nrunning) {
            complete_oldest(ce);
            continue;
        }
        /* Every batch free, and no call waiting. */
        if (spin > 0) {
            const double t0 = mmp_now_seconds();
            for (int i = 0; !atomic_load_explicit(&ce->inbox, memory_order_relaxed) &&
                            !atomic_load_explicit(&ce->stop, memory_order_relaxed);
                 i++)
                if ((i & 255) == 255 && mmp_now_seconds() - t0 > spin)
                    break;
                else
                    mmp_wait_step(0);
        }
        if (!atomic_load(&ce->inbox) && !driver_sleep(ce))
            break;
    }
    return NULL;
}

int ocl_driver_start(ocl *ce)
{
    pthread_cond_init(&ce->driver_cv, NULL);
    if (pthread_create(&ce->driver_thread, NULL, drive, ce) != 0) {
        pthread_cond_destroy(&ce->driver_cv);
        return MMP_ENOMEM;
    }
    ce->driver_started = 1;
    return 0;
}

void ocl_driver_stop(ocl *ce)
{
    if (!ce->driver_started)
        return;
    pthread_mutex_lock(&ce->lock);
    atomic_store(&ce->stop, 1);
    pthread_cond_signal(&ce->driver_cv);
    pthread_mutex_unlock(&ce->lock);
    pthread_join(ce->driver_thread, NULL);
    pthread_cond_destroy(&ce->driver_cv);
    ce->driver_started = 0;
}

/* The residuals of rq before clipping, the largest of them, and the mask
 * if a pixel is not real (request.res). */
static void prepare(request *rq)
{
    const int area = 1 << (rq->lh + rq->lw), nmodes = rq->nmodes;
    int64_t maxr = 0;
    for (int m = 0; m < nmodes; m++)
        for (int i = 0; i < area; i++) {
            const int64_t v = (int64_t)rq->orig[i] - rq->pred[(long)m * area + i];
            rq->res[m * area + i] = (int32_t)v;
            maxr = v > maxr ? v : -v > maxr ? -v : maxr;
        }
    int masked = 0;
    if (rq->real)
        for (int i = 0; i < area; i++) {
            rq->res[nmodes * area + i] = rq->real[i] ? -1 : 0;
            masked |= !rq->real[i];
        }
    rq->maxr = maxr;
    rq->masked = masked;
}

/* Puts rq in the driver's inbox and tells the driver if it sleeps. */
static int enqueue(ocl *ce, request *rq)
{
    if (ce->failed)
        return MMP_EENGINE;
    if (rq->nmodes < 1 || rq->nmodes > MAXM || rq->lh < 0 || rq->lh > MMP_LOG2B || rq->lw < 0 ||
        rq->lw > MMP_LOG2B || !ce->cap)
        return MMP_EINVAL;
    prepare(rq);
    request *top = atomic_load_explicit(&ce->inbox, memory_order_relaxed);
    do
        rq->next = top;
    while (!atomic_compare_exchange_weak(&ce->inbox, &top, rq));
    if (atomic_load(&ce->driver_asleep)) {
        pthread_mutex_lock(&ce->lock);
        pthread_cond_signal(&ce->driver_cv);
        pthread_mutex_unlock(&ce->lock);
    }
    return 0;
}

/* A request for a call, from the engine's spares (new ones are allocated:
 * as many as calls were ever in flight at once), or NULL. Field by field:
 * its residuals' room is large, and prepare fills what it needs of it. */
static request *request_new(ocl *ce, const int32_t *orig, const int32_t *pred, int nmodes,
                            const uint8_t *real, int lh, int lw, mmp_match *out)
{
    pthread_mutex_lock(&ce->spare_lock);
    request *rq = ce->spare;
    if (rq)
        ce->spare = rq->next;
    pthread_mutex_unlock(&ce->spare_lock);
    if (!rq) {
        if (!(rq = malloc(sizeof *rq)))
            return NULL;
        pthread_mutex_init(&rq->m, NULL);
        pthread_cond_init(&rq->cv, NULL);
    }
    rq->orig = orig;
    rq->pred = pred;
    rq->real = real;
    rq->nmodes = nmodes;
    rq->lh = lh;
    rq->lw = lw;
    rq->out = out;
    rq->err = 0;
    atomic_store_explicit(&rq->state, REQ_PENDING, memory_order_relaxed);
    rq->next = NULL;
    return rq;
}

/* rq back to the spares. */
static void request_free(ocl *ce, request *rq)
{
    pthread_mutex_lock(&ce->spare_lock);
    rq->next = ce->spare;
    ce->spare = rq;
    pthread_mutex_unlock(&ce->spare_lock);
}

void ocl_request_destroy(request *rq)
{
    pthread_mutex_destroy(&rq->m);
    pthread_cond_destroy(&rq->cv);
    free(rq);
}

/*
 * The op submit: the call joins the queue of requests, which the driver
 * sends with the next batch it launches; wait() sleeps until the driver
 * has handed out its results.
 */
int ocl_submit(void *state, const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
               int nmodes, const uint8_t *real, int lh, int lw, mmp_match *out,
               mmp_engine_ticket *tk)
{
    ocl *ce = state;
    (void)t;
    request *rq = request_new(ce, orig, pred, nmodes, real, lh, lw, out);
    if (!rq)
        return MMP_ENOMEM;
    const int err = enqueue(ce, rq);
    if (err) {
        request_free(ce, rq);
        return err;
    }
    tk->call = rq;
    return 0;
}

/* The op wait. */
int ocl_wait(void *state, mmp_engine_ticket *tk)
{
    ocl *ce = state;
    request *rq = tk->call;
    sleep_until_done(ce, rq);
    const int err = rq->err;
    request_free(ce, rq);
    return err;
}

/* The op match: submit, then wait at once. */
int ocl_match(void *state, const mmp_search_tables *t, const int32_t *orig, const int32_t *pred,
              int nmodes, const uint8_t *real, int lh, int lw, mmp_match *out)
{
    mmp_engine_ticket tk;
    const int err = ocl_submit(state, t, orig, pred, nmodes, real, lh, lw, out, &tk);
    return err ? err : ocl_wait(state, &tk);
}

void mmp_opencl_batch_counts(void *state, long *calls, long *batches)
{
    ocl *ce = state;
    *calls = *batches = 0;
    /* Between calls: the driver counted each batch before its calls
     * returned. */
    for (int i = 0; i < ce->nbatches; i++) {
        *calls += ce->batches[i].calls;
        *batches += ce->batches[i].runs;
    }
}
