/*
 * The opencl engine's device memory and what begin_step uploads into it.
 *
 * Kept for the encode; all but nodes (made once, with the engine) and stage
 * (grown as needed) are sized by the dictionary's capacity and made again
 * when a dictionary of another capacity comes:
 *   dict    every scale, samples interleaved by element (layout.h,
 *           FIRST_SAMPLE; match.cl);
 *   norms   the squared norm of every element;
 *   blk     per step: element counts, index costs of every scale (layout.h,
 *           HDR_*);
 *   stage   the elements added since the last step, before append_elements
 *           scatters them into dict;
 *   nodes   the residual nodes of every leaf shape, in mmp_match_offset
 *           order (NODE_PACK);
 *   groups  the work-groups of every leaf shape, (node, chunk) (GROUP_PACK);
 *   info    each node's first group and number of chunks;
 *   part    per batch: each work-group's best per mode (sized here, since
 *           the number of chunks follows from the capacity).
 * The batches' own buffers (table and residuals, results) are batch.c's.
 *
 * Per step of blocks: one write of blk, and when the dictionary grew one
 * write of stage and one append_elements, through the main queue, finished
 * before any batch, so that the batches' queues see this step's tables and
 * the host copies may be rewritten at the next step. Only the elements added
 * since the last step travel (a dictionary that lost elements, or another
 * one, is uploaded afresh).
 *
 * The dictionary updates, redundancy check included, stay on the host:
 * they and the entropy coding are a small part of an encode, smaller than
 * the device round trip per step that moving them would add
 * (docs/tuning.md, "OpenCL engine").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/timing.h"
#include "kernels/opencl/opencl.h"

void ocl_release_mem(cl_mem *m)
{
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
}

int ocl_upload_nodes(ocl *ce)
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
                            table[k++] = (uint32_t)NODE_PACK(a, b, i << a, j << b);
        }
    cl_int e;
    ce->nodes = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof table,
                               table, &e);
    return e == CL_SUCCESS ? 0 : ocl_fail(ce, e, "node table");
}

void ocl_release_buffers(ocl *ce)
{
    cl_mem *mems[] = {&ce->dict, &ce->norms, &ce->blk, &ce->stage, &ce->nodes, &ce->groups,
                      &ce->info};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        ocl_release_mem(mems[i]);
    free(ce->blk_host);
    free(ce->stage_host);
    ce->blk_host = ce->stage_host = NULL;
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
    /* The most chunks (those of the largest scale, whose chunks are the
     * shortest) must fit the packing. */
    const int shortest = chunk_len(ce, 2 * MMP_LOG2B);
    if ((cap + shortest - 1) / shortest - 1 > GROUP_CHUNK_MAX) {
        snprintf(ce->why, sizeof ce->why,
                 "opencl: a dictionary of %d elements per scale needs more chunks than the "
                 "work-group table holds",
                 cap);
        ce->failed = 1;
        return MMP_EINVAL;
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
                            gt[g++] = GROUP_PACK((uint32_t)node, (uint32_t)c);
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
    return e == CL_SUCCESS ? 0 : ocl_fail(ce, e, "work-group tables");
}

/* Device buffers for a dictionary of capacity cap. */
static int alloc_dict(ocl *ce, int cap)
{
    cl_int e;
    cl_mem *mems[] = {&ce->dict, &ce->norms, &ce->blk, &ce->groups, &ce->info};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        ocl_release_mem(mems[i]);
    for (int i = 0; i < ce->nbatches; i++)
        ocl_release_mem(&ce->batches[i].part);
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
        return ocl_fail(ce, e, "dictionary buffer");
    /* Lanes past the last element read zeros, never garbage. */
    const cl_int zero = 0;
    e = clEnqueueFillBuffer(ce->q, ce->dict, &zero, sizeof zero, 0, dict_bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "dictionary buffer");
    const size_t norm_bytes = sizeof(cl_long) * MMP_NSCALES * ce->pitch;
    ce->norms = clCreateBuffer(ce->ctx, CL_MEM_READ_WRITE, norm_bytes, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "norm buffer");
    e = clEnqueueFillBuffer(ce->q, ce->norms, &zero, sizeof zero, 0, norm_bytes, 0, NULL, NULL);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "norm buffer");
    ce->blk = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY, sizeof(int32_t) * blk_ints, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "cost buffer");
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
    ocl_release_mem(&ce->stage);
    free(ce->stage_host);
    ce->stage_cap = 0;
    ce->stage_host = malloc(sizeof(int32_t) * cap);
    if (!ce->stage_host)
        return MMP_ENOMEM;
    cl_int e;
    ce->stage = clCreateBuffer(ce->ctx, CL_MEM_READ_ONLY, sizeof(int32_t) * cap, NULL, &e);
    if (e != CL_SUCCESS)
        return ocl_fail(ce, e, "stage buffer");
    ce->stage_cap = cap;
    return 0;
}

int ocl_begin_step(void *state, const mmp_search_tables *t)
{
    ocl *ce = state;
    if (ce->failed)
        return MMP_EENGINE;
    const double t0 = mmp_now_seconds();
    cl_int e;
    int err;
    ocl_collect(&ce->pf);

    const mmp_dict *d = t->dict;
    int reset = d != ce->host_dict || t->dict_id != ce->dict_id || d->cap != ce->cap;
    for (int s = 0; s < MMP_NSCALES; s++)
        reset |= d->n[s] < ce->dev_n[s];
    if (d->cap != ce->cap && (err = alloc_dict(ce, d->cap)))
        return err;
    if (reset) {
        memset(ce->dev_n, 0, sizeof ce->dev_n);
        ce->maxe = 0;
        ce->host_dict = d;
        ce->dict_id = t->dict_id;
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

    cl_event *ev = ocl_event_for(ce, &ce->pf, ce->q, P_COSTS);
    e = clEnqueueWriteBuffer(ce->q, ce->blk, CL_FALSE, 0, sizeof(int32_t) * off, h, 0, NULL, ev);
    if (e != CL_SUCCESS) {
        ocl_drop_event(&ce->pf, ev);
        return ocl_fail(ce, e, "write costs");
    }
    ce->bytes_up += sizeof(int32_t) * off;
    if (total) {
        ev = ocl_event_for(ce, &ce->pf, ce->q, P_STAGE);
        e = clEnqueueWriteBuffer(ce->q, ce->stage, CL_FALSE, 0, sizeof(int32_t) * total,
                                 ce->stage_host, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            ocl_drop_event(&ce->pf, ev);
            return ocl_fail(ce, e, "write new elements");
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
            return ocl_fail(ce, CL_INVALID_KERNEL_ARGS, "append_elements arguments");
        const size_t global = (total + 63) / 64 * 64;
        ev = ocl_event_for(ce, &ce->pf, ce->q, P_APPEND);
        e = clEnqueueNDRangeKernel(ce->q, ce->k_append, 1, NULL, &global, NULL, 0, NULL, ev);
        if (e != CL_SUCCESS) {
            ocl_drop_event(&ce->pf, ev);
            return ocl_fail(ce, e, "append_elements");
        }
    }
    memcpy(ce->dev_n, d->n, sizeof ce->dev_n);

    /* The arguments that stay for the step. */
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
                return ocl_fail(ce, CL_INVALID_KERNEL_ARGS, "match arguments");
        }
        e = clSetKernelArg(bt->k_reduce, 0, sizeof(cl_mem), &bt->part);
        e |= clSetKernelArg(bt->k_reduce, 1, sizeof(cl_mem), &ce->info);
        e |= clSetKernelArg(bt->k_reduce, 2, sizeof(cl_mem), &bt->in);
        e |= clSetKernelArg(bt->k_reduce, 5, sizeof(cl_mem), &bt->out);
        if (e != CL_SUCCESS)
            return ocl_fail(ce, CL_INVALID_KERNEL_ARGS, "reduce_chunks arguments");
    }
    /* The batches' queues must see this block's tables; the host copies
     * may be rewritten at the next block. */
    if ((e = clFinish(ce->q)) != CL_SUCCESS)
        return ocl_fail(ce, e, "clFinish");
    ce->begins++;
    ce->host_begin_s += mmp_now_seconds() - t0;
    return 0;
}
