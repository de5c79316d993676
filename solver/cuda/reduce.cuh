/* reduce.cuh -- segmented sums on the device in the one order of
 * DESIGN.md "The reduction order" (solver/reduce.h is the specification and
 * the CPU executor; this is the CUDA executor of the same arithmetic).
 *
 * A plan describes n_seg segments of one input sequence (segment c is
 * elements [seg_off[c], seg_off[c+1]), every segment at least one element)
 * and the levels the tree needs for the longest of them. Execution is
 * selected by length: every 512-entry block of every segment is one warp
 * (registers and shuffles, no shared memory, no atomics), so a short segment
 * is one warp in one launch and a long one a multi-level segmented reduction
 * over many blocks whose partials are reduced again by the same kernel. The
 * arithmetic is identical either way: it is the tree, entry for entry.
 *
 * Launch dimensions depend only on the segment lengths of the batch, so the
 * launches are fixed for a batch and may be captured in a CUDA graph. */
#ifndef RT_CUDA_REDUCE_CUH
#define RT_CUDA_REDUCE_CUH

#include "common.cuh"

#define CUDA_REDUCE_MAX_LEVELS 6

struct cuda_reduce_level {
    const size_t *in_off;  /* device [n_seg + 1]: input offsets of this level */
    const size_t *out_off; /* device [n_seg + 1]: output (partial) offsets */
    const int *blk_seg;    /* device [n_blocks]: the segment of each block */
    float *out;            /* device [n_blocks]: partials (NULL on the last level) */
    size_t n_blocks;
};

struct cuda_reduce_plan {
    int n_seg;
    int n_levels; /* >= 1; the last level has exactly one block per segment */
    struct cuda_reduce_level lv[CUDA_REDUCE_MAX_LEVELS];
    struct cuda_buf meta; /* offsets and block maps of every level */
    struct cuda_buf part; /* partials of every level */
    void *host;           /* host staging for meta (malloc'd) */
    size_t host_cap;
};

/* Builds (or rebuilds, reusing its buffers) `p` for segments given by the
 * host array seg_off[0..n_seg] (non-decreasing, every segment non-empty).
 * Synchronous upload on `stream`. Returns RT_OK, RT_ENOMEM or RT_EBACKEND. */
enum rt_status cuda_reduce_plan_build(struct cuda_reduce_plan *p, const size_t *seg_off, int n_seg,
                                      cudaStream_t stream, struct rt_err *err);
void cuda_reduce_plan_free(struct cuda_reduce_plan *p);

/* Sums x over each segment of p into out[0..n_seg) (device). The last
 * level writes straight into `out`, so several sums can share one plan.
 * Asynchronous on `stream`; one launch per level. */
enum rt_status cuda_reduce_sum(const struct cuda_reduce_plan *p, const float *x, float *out,
                               cudaStream_t stream, struct rt_err *err);

/* Sums a[i] * b[i] over each segment of p into out[0..n_seg): the product
 * rounded to float, then summed in the tree order, as the CPU does. */
enum rt_status cuda_reduce_dot(const struct cuda_reduce_plan *p, const float *a, const float *b,
                               float *out, cudaStream_t stream, struct rt_err *err);

#endif
