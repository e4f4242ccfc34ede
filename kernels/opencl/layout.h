/*
 * What the opencl engine's host code and its kernels must agree on, defined
 * once: the buffers' layouts, the packing of the work tables and the block
 * geometry the kernels are written for.
 *
 * This header is both C11 and OpenCL C. The host code includes it
 * (kernels/opencl/opencl.h); the Makefile puts it in front of match.cl in
 * the kernel source embedded in the binary (CL_SRC), so the kernels see the
 * same text. It therefore includes nothing on the OpenCL side, uses only
 * what both languages share (macros, int arithmetic, one struct), and keeps
 * the bits of one side under __OPENCL_VERSION__.
 *
 * The kernels cannot include common/scales.h or kernels/engine.h, so the
 * block geometry and the result type are written here again; the host
 * checks them against those headers at compile time (the _Static_asserts
 * of kernels/opencl/opencl.h), so a change on either side that the other
 * does not follow stops the build.
 *
 * MAXM, the most modes per call, is not here: it is a build option of the
 * kernels (-DMAXM, with WG, VEC and KT), set by the host from
 * MMP_NUM_MODES, its one definition.
 */
#ifndef MMP_KERNELS_OPENCL_LAYOUT_H
#define MMP_KERNELS_OPENCL_LAYOUT_H

#ifndef __OPENCL_VERSION__
#include <stdint.h>
#endif

/* ------------------------------------------------------- block geometry */

/* Blocks up to 2^LOG2B x 2^LOG2B; NSCALES scales 2^a x 2^b (0 <= a, b <=
 * LOG2B), numbered a * NLOG + b (common/scales.h: MMP_LOG2B, MMP_NSCALES). */
#define LOG2B 4
#define NLOG (LOG2B + 1)
#define NSCALES (NLOG * NLOG)
/* Samples of the largest leaf, and the int4 vectors that hold them (the
 * match kernels keep residuals and masks in local memory as int4). */
#define LEAF_MAX (1 << (2 * LOG2B))
#define LEAF_INT4 (LEAF_MAX / 4)

/* ------------------------------------------------------------ dictionary */

/* The widest VEC (lanes per work-item) the kernels support; the dictionary
 * rows, the norms and each scale's index costs are padded to a multiple of
 * it, so that a vector load from any element stays in its row. */
#define VEC_MAX 16
#define PITCH_ALIGN VEC_MAX
/* Samples of one element of the scales (a, 0), ..., (a, LOG2B) for a = 0:
 * 2^0 + ... + 2^LOG2B. */
#define SCALE_ROW_SAMPLES ((2 << LOG2B) - 1)
/* The dictionary buffer holds scale (a, b) from row FIRST_SAMPLE(a, b) (in
 * units of the pitch): the samples of one element of every scale before
 * it, in scale order. DICT_SAMPLES rows in all. */
#define FIRST_SAMPLE(a, b) \
    (SCALE_ROW_SAMPLES * ((1 << (a)) - 1) + (1 << (a)) * ((1 << (b)) - 1))
#define DICT_SAMPLES (SCALE_ROW_SAMPLES * SCALE_ROW_SAMPLES)

/* ------------------------------------------------------ per-block buffer */

/* The header of the per-block buffer blk (ints), NSCALES of each: elements
 * at each scale; offset of each scale's index costs in blk; first element
 * added by this block; offset of each scale's added samples in the stage
 * buffer; added elements of the scales before each. The index costs follow
 * from HDR_INTS, each scale's padded to a multiple of PITCH_ALIGN. */
#define HDR_N 0
#define HDR_COST (HDR_N + NSCALES)
#define HDR_NEWLO (HDR_COST + NSCALES)
#define HDR_SRC (HDR_NEWLO + NSCALES)
#define HDR_EPRE (HDR_SRC + NSCALES)
#define HDR_INTS ((HDR_EPRE + NSCALES + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN)

/* ----------------------------------------------------------- batch table */

/* The batch table at the start of a batch's `in` buffer: REQ_INTS ints per
 * request (the host's request r): its first work-group in the batch, the
 * bases of its leaf shape in groups and nodes, the shape, modes, whether
 * masked, where its residuals start in `in`, its offsets in part and out
 * (in results), its groups and nodes per mode (equal when every node is
 * one chunk: the match kernel then writes the results itself, else
 * reduce_chunks does), and its first item of reduce_chunks. R_FIELDS
 * fields are used. */
#define REQ_INTS 16
#define R_G0 0
#define R_GBASE 1
#define R_NBASE 2
#define R_LH 3
#define R_LW 4
#define R_NMODES 5
#define R_MASKED 6
#define R_RES 7
#define R_PART 8
#define R_OUT 9
#define R_NGROUPS 10
#define R_COUNT 11
#define R_R0 12
#define R_FIELDS 13

/* ------------------------------------------------- node and group tables */

/* A residual node of a leaf shape, one 32-bit word of the nodes table: its
 * scale (a, b) in NODE_AB_BITS each, its top-left sample (y0, x0) in the
 * leaf in NODE_POS_BITS each. The host packs, the kernels unpack. */
#define NODE_AB_BITS 3
#define NODE_POS_BITS 5
#define NODE_AB_MASK ((1 << NODE_AB_BITS) - 1)
#define NODE_POS_MASK ((1 << NODE_POS_BITS) - 1)
#define NODE_SHIFT_B NODE_AB_BITS
#define NODE_SHIFT_Y (2 * NODE_AB_BITS)
#define NODE_SHIFT_X (NODE_SHIFT_Y + NODE_POS_BITS)
#define NODE_BITS (NODE_SHIFT_X + NODE_POS_BITS)
#define NODE_PACK(a, b, y0, x0) \
    ((a) | (b) << NODE_SHIFT_B | (y0) << NODE_SHIFT_Y | (x0) << NODE_SHIFT_X)
#define NODE_A(nd) ((nd) & NODE_AB_MASK)
#define NODE_B(nd) (((nd) >> NODE_SHIFT_B) & NODE_AB_MASK)
#define NODE_Y0(nd) (((nd) >> NODE_SHIFT_Y) & NODE_POS_MASK)
#define NODE_X0(nd) (((nd) >> NODE_SHIFT_X) & NODE_POS_MASK)

/* A work-group of a leaf shape, one 32-bit word of the groups table: the
 * node's index in its shape's nodes in the low GROUP_NODE_BITS, the chunk
 * of the scale's elements above them (at most GROUP_CHUNK_MAX + 1 chunks). */
#define GROUP_NODE_BITS 12
#define GROUP_NODE_MASK ((1 << GROUP_NODE_BITS) - 1)
#define GROUP_CHUNK_MAX ((1 << (32 - GROUP_NODE_BITS)) - 1)
#define GROUP_PACK(node, chunk) ((node) | (chunk) << GROUP_NODE_BITS)
#define GROUP_NODE(gr) ((gr) & GROUP_NODE_MASK)
#define GROUP_CHUNK(gr) ((gr) >> GROUP_NODE_BITS)

/* ---------------------------------------------------------------- results */

/* One result as the kernels write it and the host reads it: mmp_match of
 * kernels/engine.h (the host checks size and offsets). One definition for
 * both sides: OpenCL's long and int are 64 and 32 bits wide. */
#ifdef __OPENCL_VERSION__
#define MATCH_I64 long
#define MATCH_I32 int
#else
#define MATCH_I64 int64_t
#define MATCH_I32 int32_t
#endif
typedef struct match_t {
    MATCH_I64 j;
    MATCH_I32 idx;
    MATCH_I32 pad;
} match_t;

#endif
