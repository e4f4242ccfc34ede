/*
 * The opencl engine's -v figures: the device time of each kind of command
 * (from profiling events), how long the device was busy, the batches'
 * sizes, and one report through the logger when the engine is destroyed.
 *
 * Kept apart because it is bookkeeping only: without -v the queues are made
 * without profiling, ocl_event_for gives every enqueue a NULL event and
 * nothing here costs anything; with it, events are collected per queue
 * (one prof each, so the batches' threads never share one) and summed at
 * the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/opencl/opencl.h"

static const char *const prof_name[NPROF] = {
    "write costs", "write new elements", "append_elements", "write residuals",
    "match_narrow", "match_wide", "reduce_chunks", "read results",
};

void ocl_collect(prof *pf)
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

cl_event *ocl_event_for(const ocl *ce, prof *pf, cl_command_queue q, int kind)
{
    if (!ce->verbose)
        return NULL;
    if (pf->nev == (int)(sizeof pf->ev / sizeof pf->ev[0])) {
        clFinish(q);
        ocl_collect(pf);
    }
    pf->ev_kind[pf->nev] = kind;
    return &pf->ev[pf->nev++];
}

void ocl_drop_event(prof *pf, cl_event *ev)
{
    if (ev)
        pf->nev--;
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

void ocl_report(ocl *ce)
{
    if (ce->q) {
        clFinish(ce->q);
        ocl_collect(&ce->pf);
    }
    /* The batches' figures, summed. */
    prof all = ce->pf;
    double work = 0, bytes_up = ce->bytes_up, bytes_down = 0;
    double launch_s = 0, api_s = 0, wait_s = 0, hand_s = 0;
    long runs = 0, calls = 0, wide_runs = 0, reduce_runs = 0, hist[HIST] = {0};
    for (int i = 0; i < ce->nbatches; i++) {
        batch *b = &ce->batches[i];
        if (b->q) {
            clFinish(b->q);
            ocl_collect(&b->pf);
        }
        for (int k = 0; k < NPROF; k++) {
            all.ms[k] += b->pf.ms[k];
            all.n[k] += b->pf.n[k];
        }
        for (int k = 0; k < HIST; k++)
            hist[k] += b->hist[k];
        launch_s += b->launch_s;
        api_s += b->api_s;
        wait_s += b->wait_s;
        hand_s += b->hand_s;
        runs += b->runs;
        calls += b->calls;
        wide_runs += b->wide_runs;
        reduce_runs += b->reduce_runs;
        work += b->work;
        bytes_up += b->bytes_up;
        bytes_down += b->bytes_down;
    }
    if (!ce->verbose || !ce->begins)
        return;
    const double host_s = launch_s + wait_s + hand_s;
    const double dev_ms = all.ms[P_NARROW] + all.ms[P_WIDE];
    mmp_log(&ce->log, MMP_LOG_INFO,
            "opencl: %d host threads, %d batches in flight; %ld steps (%.1f ms on the host), "
            "%ld match calls in %ld batches (%ld wide, %ld with reduce_chunks; %.1f ms on the "
            "host, %.1f us per batch); %.1f MB up, %.1f MB down; %.3g comparisons, %.2f G/s in "
            "the match kernels",
            ce->threads, ce->nbatches, ce->begins, ce->host_begin_s * 1e3, calls, runs,
            wide_runs, reduce_runs, host_s * 1e3, runs ? host_s * 1e6 / runs : 0.0,
            bytes_up / 1e6, bytes_down / 1e6, work, dev_ms > 0 ? work / dev_ms * 1e-6 : 0.0);
    if (runs)
        mmp_log(&ce->log, MMP_LOG_INFO,
                "opencl: per batch, %.1f us to launch (%.1f us of it in OpenCL calls), %.1f us "
                "waiting for the device, %.1f us handing out results; no batch running nor "
                "waiting %.1f ms in all",
                launch_s * 1e6 / runs, api_s * 1e6 / runs, wait_s * 1e6 / runs, hand_s * 1e6 / runs,
                ce->idle_s * 1e3);
    if (runs && ce->woke)
        mmp_log(&ce->log, MMP_LOG_INFO,
                "opencl: waking the threads of a batch's requests %.1f us per batch; a thread "
                "woken for its results ran %.1f us later (%ld times)",
                ce->wake_s * 1e6 / runs, ce->woke_s * 1e6 / ce->woke, ce->woke);
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
