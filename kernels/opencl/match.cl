/*
 * Kernels of the opencl search engine (host code: the .c files of
 * kernels/opencl/; the layouts both share: kernels/opencl/layout.h).
 *
 * match_narrow / match_wide (the published optimize_block): for every mode
 * and every residual node of a prediction leaf, the least
 * J = (D << 16) + lambda * cost over the dictionary elements of the node's
 * scale, lowest index on ties. A work-group takes one node and one chunk
 * of the scale's elements, for all the modes at once: the node's residuals sit in local memory (every
 * work-item reads the same word), each work-item takes VEC consecutive
 * elements at a time (VEC = 1 on GPUs, a SIMD width on CPUs), reads each
 * element once, and accumulates its products with the residual of every
 * mode (D = |r|^2 + |e|^2 - 2 r.e). The work-items' bests are then reduced
 * in the group. Chunks hold about
 * WG * VEC * KT / area elements, so every group has a similar amount of work
 * whatever the scale; a node of several chunks gets its partial results
 * reduced by reduce_chunks (the published j_reducter), otherwise the match
 * kernel writes the final result itself.
 *
 * The dictionary is one buffer: scale s = a * NLOG + b starts at pitch *
 * FIRST_SAMPLE(a, b) and holds sample p of element e at p * pitch + e
 * (pitch: the capacity rounded up to PITCH_ALIGN), so consecutive
 * work-items read consecutive words. append_elements scatters the elements
 * a block added (uploaded in their natural layout) into it.
 *
 * Integer arithmetic only, exact. match_narrow sums products in 32 bits;
 * the host picks it only when (max |r| + max |e|)^2 * leaf area < 2^32, so
 * that no such sum reaches 2^31 in magnitude (8-bit images and most 12-bit
 * ones); match_wide sums in 64 bits (16-bit images).
 *
 * One launch covers a batch of leaves (several match() calls): the batch
 * table at the start of `in` says where each leaf's work-groups, residuals
 * and results are; each work-group finds its leaf by a binary search. The
 * tables nodes, groups and info hold every leaf shape; a leaf's entry
 * selects its shape's part.
 *
 * Build options: -DWG=<work-group size> -DVEC=<1, 2, 4, 8 or 16>
 * -DKT=<samples per work-item and chunk> -DMAXM=<most modes per call>.
 */

/* The layouts shared with the host (HDR_*, REQ_INTS and R_*, the node and
 * group packing, match_t, the block geometry) come from
 * kernels/opencl/layout.h, which the build puts in front of this file. */
#ifndef __OPENCL_VERSION__
#error "layout.h tells OpenCL C from C by __OPENCL_VERSION__, which every OpenCL compiler defines"
#endif
#if VEC > VEC_MAX || VEC > PITCH_ALIGN
#error "VEC is wider than the padding of the dictionary rows"
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#if VEC == 1
typedef int vint;
typedef uint vuint;
typedef long vlong;
#define VLOAD(p) (*(p))
#define VLOADL(p) (*(p))
#define AS_VUINT(x) as_uint(x)
#define AS_VINT(x) as_int(x)
#define TO_VLONG(x) ((long)(x))
#else
typedef CAT(int, VEC) vint;
typedef CAT(uint, VEC) vuint;
typedef CAT(long, VEC) vlong;
#define VLOAD(p) CAT(vload, VEC)(0, p)
#define VLOADL(p) CAT(vload, VEC)(0, p)
#define AS_VUINT(x) CAT(as_uint, VEC)(x)
#define AS_VINT(x) CAT(as_int, VEC)(x)
#define TO_VLONG(x) CAT(convert_long, VEC)(x)
#endif

/* VEC_MAX entries (the host checks that VEC_MAX is 16). */
__constant int lane_index[VEC_MAX] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* The least lane of v. */
static inline long hmin(vlong v)
{
#if VEC == 1
    return v;
#else
#if VEC == 16
    const long8 v8 = min(v.lo, v.hi);
#elif VEC == 8
    const long8 v8 = v;
#endif
#if VEC >= 8
    const long4 v4 = min(v8.lo, v8.hi);
#elif VEC == 4
    const long4 v4 = v;
#endif
#if VEC >= 4
    const long2 v2 = min(v4.lo, v4.hi);
#else
    const long2 v2 = v;
#endif
    return min(v2.s0, v2.s1);
#endif
}

/* The first lane of v equal to x. */
static inline int lane_of(vlong v, long x)
{
#if VEC == 1
    (void)v;
    (void)x;
    return 0;
#else
    long l[VEC];
    CAT(vstore, VEC)(v, 0, l);
    int i = 0;
    while (i < VEC - 1 && l[i] != x)
        i++;
    return i;
#endif
}

/* The last request whose field f is at most x (the fields are prefix sums:
 * the request that item x belongs to). */
static inline int find_request(__global const int *in, int nreq, int f, int x)
{
    int lo = 0, hi = nreq - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (in[mid * REQ_INTS + f] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/*
 * Scatters the added elements (stage: each scale's new elements one after
 * another, natural layout) into dict, and stores their squared norms.
 */
__kernel void append_elements(__global int *dict, __global long *norms, __global const int *blk,
                              __global const int *stage, int pitch, int total, int nnew)
{
    const int i = get_global_id(0);
    if (i < total) {
        int s = 0;
        while (s < NSCALES - 1 && blk[HDR_SRC + s + 1] <= i)
            s++;
        const int a = s / NLOG, b = s % NLOG;
        const int q = i - blk[HDR_SRC + s];
        const int e = blk[HDR_NEWLO + s] + (q >> (a + b));
        const int p = q & ((1 << (a + b)) - 1);
        dict[pitch * FIRST_SAMPLE(a, b) + p * pitch + e] = stage[i];
    }
    if (i < nnew) {
        int s = 0;
        while (s < NSCALES - 1 && blk[HDR_EPRE + s + 1] <= i)
            s++;
        const int lb = s / NLOG + s % NLOG, q = i - blk[HDR_EPRE + s];
        __global const int *src = stage + blk[HDR_SRC + s] + (q << lb);
        long n2 = 0;
        for (int p = 0; p < (1 << lb); p++)
            n2 += (long)src[p] * src[p];
        norms[s * pitch + blk[HDR_NEWLO + s] + q] = n2;
    }
}

/*
 * One (node, chunk) for every mode. groups[g] = GROUP_PACK(node, chunk),
 * nodes[node] = NODE_PACK(a, b, y0, x0) (the tables of the leaf's shape); res
 * holds the nmodes residuals of the leaf (orig - pred, row-major) and, when
 * masked, a mask of its real pixels (-1 real, 0 padding). The group's best
 * of mode m goes to dst[m * stride + g].
 *
 * D = |r|^2 + |e|^2 - 2 r.e over the real pixels, exactly: the residual is
 * zeroed at padding pixels, |e|^2 comes from norms (or is summed over the
 * real pixels when masked), and the work per sample and mode is one
 * multiply-add. The residual is read four samples at a time (scales smaller
 * than four samples are padded with zero residuals; the element samples
 * read there belong to the next scale and are multiplied by zero).
 * Inlined into each kernel, so that `wide` is a constant there.
 */
static inline __attribute__((always_inline)) void
match_group(__global const int *dict, __global const long *norms, __global const int *blk,
            __global const int *in, int nreq, __global const uint *nodes_all,
            __global const uint *groups_all, long lambda, int pitch, __global match_t *part,
            __global match_t *out, __local int4 *lr, __local int4 *lm, __local long *rnl,
            __local long *rj, __local int *ri, const int wide)
{
    const int lid = get_local_id(0);
    const int gb = get_group_id(0);
    const int rq = find_request(in, nreq, R_G0, gb);
    __global const int *tr = in + rq * REQ_INTS;
    const int g = gb - tr[R_G0];
    const int lh = tr[R_LH], lw = tr[R_LW], nmodes = tr[R_NMODES], masked = tr[R_MASKED];
    __global const int *res = in + tr[R_RES];
    __global const uint *nodes = nodes_all + tr[R_NBASE];
    const int direct = tr[R_NGROUPS] == tr[R_COUNT];
    __global match_t *dst = direct ? out + tr[R_OUT] : part + tr[R_PART];
    const int stride = direct ? tr[R_COUNT] : tr[R_NGROUPS];
    const uint gr = groups_all[tr[R_GBASE] + g];
    const uint nd = nodes[GROUP_NODE(gr)];
    const int a = NODE_A(nd), b = NODE_B(nd), y0 = NODE_Y0(nd), x0 = NODE_X0(nd);
    const int s = a * NLOG + b, lb = a + b, area = 1 << lb, ws = 1 << b;
    const int l4 = max(lb, 2) - 2, area4 = 1 << l4; /* int4 vectors per mode */
    const int leaf = 1 << (lh + lw);
    const int kpt = max(1, KT >> lb);           /* passes over the chunk */
    const int start = (int)GROUP_CHUNK(gr) * kpt * WG * VEC;
    const int end = min(blk[HDR_N + s], start + kpt * WG * VEC);
    __global const int *cost = blk + blk[HDR_COST + s];
    __global const int *elems = dict + pitch * FIRST_SAMPLE(a, b);
    __global const long *enorm = norms + s * pitch;
    __global const int *mask = res + nmodes * leaf;

    for (int i = lid; i < nmodes * area4; i += WG) {
        const int m = i >> l4;
        int v[4];
        for (int c = 0; c < 4; c++) {
            const int p = ((i & (area4 - 1)) << 2) + c;
            const int at = (y0 + (p >> b)) * (1 << lw) + x0 + (p & (ws - 1));
            v[c] = p < area ? res[m * leaf + at] & (masked ? mask[at] : -1) : 0;
        }
        lr[i] = (int4)(v[0], v[1], v[2], v[3]);
    }
    if (masked)
        for (int i = lid; i < area4; i += WG) {
            int v[4];
            for (int c = 0; c < 4; c++) {
                const int p = (i << 2) + c;
                v[c] = p < area ? mask[(y0 + (p >> b)) * (1 << lw) + x0 + (p & (ws - 1))] : 0;
            }
            lm[i] = (int4)(v[0], v[1], v[2], v[3]);
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = lid; m < nmodes; m += WG) {
        long q = 0;
        for (int i = 0; i < area4; i++) {
            const long4 r = convert_long4(lr[m * area4 + i]);
            q += r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w;
        }
        rnl[m] = q;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    long rn[MAXM], bj[MAXM];
    int bi[MAXM];
#pragma unroll
    for (int m = 0; m < MAXM; m++) {
        rn[m] = m < nmodes ? rnl[m] : 0;
        bj[m] = LONG_MAX;
        bi[m] = INT_MAX;
    }
    const vint lane = VLOAD(lane_index);
    for (int k = 0; k < kpt; k++) {
        const int e0 = start + (k * WG + lid) * VEC;
        if (e0 >= end)
            break;
        vuint cn[MAXM], en_n = 0; /* cross terms, masked norms: 32 bits */
        vlong cw[MAXM], en_w = 0; /* 64 bits */
#pragma unroll
        for (int m = 0; m < MAXM; m++) {
            cn[m] = 0;
            cw[m] = 0;
        }
        __global const int *col = elems + e0;
        for (int i = 0; i < area4; i++) {
            const vint v0 = VLOAD(col + (4 * i) * pitch), v1 = VLOAD(col + (4 * i + 1) * pitch);
            const vint v2 = VLOAD(col + (4 * i + 2) * pitch), v3 = VLOAD(col + (4 * i + 3) * pitch);
            if (masked) {
                const int4 mk = lm[i];
                if (wide) {
                    const vlong w0 = TO_VLONG(v0), w1 = TO_VLONG(v1);
                    const vlong w2 = TO_VLONG(v2), w3 = TO_VLONG(v3);
                    en_w += ((w0 * w0) & (long)mk.x) + ((w1 * w1) & (long)mk.y) +
                            ((w2 * w2) & (long)mk.z) + ((w3 * w3) & (long)mk.w);
                } else {
                    const vuint u0 = AS_VUINT(v0), u1 = AS_VUINT(v1);
                    const vuint u2 = AS_VUINT(v2), u3 = AS_VUINT(v3);
                    en_n += ((u0 * u0) & (uint)mk.x) + ((u1 * u1) & (uint)mk.y) +
                            ((u2 * u2) & (uint)mk.z) + ((u3 * u3) & (uint)mk.w);
                }
            }
#pragma unroll
            for (int m = 0; m < MAXM; m++) {
                if (m < nmodes) {
                    const int4 r = lr[m * area4 + i];
                    if (wide)
                        cw[m] += TO_VLONG(v0) * (long)r.x + TO_VLONG(v1) * (long)r.y +
                                 TO_VLONG(v2) * (long)r.z + TO_VLONG(v3) * (long)r.w;
                    else /* modulo 2^32; the true sum is below 2^31 in magnitude */
                        cn[m] += AS_VUINT(v0) * (uint)r.x + AS_VUINT(v1) * (uint)r.y +
                                 AS_VUINT(v2) * (uint)r.z + AS_VUINT(v3) * (uint)r.w;
                }
            }
        }
        const vlong en = masked ? (wide ? en_w : TO_VLONG(en_n)) : VLOADL(enorm + e0);
        const vlong rate = lambda * TO_VLONG(AS_VUINT(VLOAD(cost + e0)));
        const vlong over = TO_VLONG(lane >= end - e0); /* -1 past the last element */
#pragma unroll
        for (int m = 0; m < MAXM; m++) {
            if (m < nmodes) {
                const vlong cross = wide ? cw[m] : TO_VLONG(AS_VINT(cn[m]));
                const vlong d = rn[m] + en - 2 * cross;
                const vlong jv = select((d << 16) + rate, (vlong)LONG_MAX, over);
                const long jm = hmin(jv);
                if (jm < bj[m]) {
                    bj[m] = jm;
                    bi[m] = e0 + lane_of(jv, jm);
                }
            }
        }
    }

#pragma unroll
    for (int m = 0; m < MAXM; m++) {
        if (m < nmodes) {
            rj[m * WG + lid] = bj[m];
            ri[m * WG + lid] = bi[m];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = WG / 2; step > 0; step >>= 1) {
        for (int t = lid; t < nmodes * step; t += WG) {
            const int m = t / step, k = m * WG + t % step;
            const long j2 = rj[k + step];
            const int i2 = ri[k + step];
            if (j2 < rj[k] || (j2 == rj[k] && i2 < ri[k])) {
                rj[k] = j2;
                ri[k] = i2;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int m = lid; m < nmodes; m += WG) {
        match_t r;
        r.j = rj[m * WG];
        r.idx = ri[m * WG] == INT_MAX ? 0 : ri[m * WG]; /* no element */
        r.pad = 0;
        dst[m * stride + g] = r;
    }
}

#define MATCH_ARGS                                                                     \
    __global const int *dict, __global const long *norms, __global const int *blk,     \
        __global const int *in, int nreq, __global const uint *nodes,                  \
        __global const uint *groups, long lambda, int pitch, __global match_t *part,   \
        __global match_t *out

#define MATCH_BODY(WIDE)                                                                     \
    __local int4 lr[MAXM * LEAF_INT4] __attribute__((aligned(16)));                          \
    __local int4 lm[LEAF_INT4] __attribute__((aligned(16)));                                 \
    __local long rnl[MAXM], rj[MAXM * WG];                                                   \
    __local int ri[MAXM * WG];                                                               \
    match_group(dict, norms, blk, in, nreq, nodes, groups, lambda, pitch, part, out, lr, lm, \
                rnl, rj, ri, WIDE)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void match_narrow(MATCH_ARGS)
{
    MATCH_BODY(0);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void match_wide(MATCH_ARGS)
{
    MATCH_BODY(1);
}

/*
 * The best of each node's chunks, for the requests whose nodes span several
 * chunks: item t belongs to the request r whose range [R_R0, R_R0 + nmodes
 * * count) holds it; its item i there takes mode i / count, node i % count,
 * whose chunks are the groups info[node].x .. + info[node].y - 1 of r. An
 * empty scale gives (LONG_MAX, 0), as the reference does.
 */
__kernel void reduce_chunks(__global const match_t *part, __global const int2 *info,
                            __global const int *in, int nreq, int total, __global match_t *out)
{
    const int t = get_global_id(0);
    if (t >= total)
        return;
    __global const int *tr = in + find_request(in, nreq, R_R0, t) * REQ_INTS;
    const int i = t - tr[R_R0], count = tr[R_COUNT];
    const int m = i / count, node = i % count;
    const int2 inf = info[tr[R_NBASE] + node];
    __global const match_t *p = part + tr[R_PART] + m * tr[R_NGROUPS] + inf.x;
    long bj = LONG_MAX;
    int bi = INT_MAX;
    for (int c = 0; c < inf.y; c++) {
        const long j = p[c].j;
        const int ix = p[c].idx;
        if (j < bj || (j == bj && ix < bi)) {
            bj = j;
            bi = ix;
        }
    }
    match_t r;
    r.j = bj;
    r.idx = bi == INT_MAX ? 0 : bi;
    r.pad = 0;
    out[tr[R_OUT] + i] = r;
}
