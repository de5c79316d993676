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
    size_t n_blocks;
};

struct cuda_reduce_plan {
    int n_seg;
    int n_levels; /* >= 1; the last level has exactly one block per segment */
    struct cuda_reduce_level lv[CUDA_REDUCE_MAX_LEVELS];
    struct cuda_buf meta; /* offsets and block maps of every level */
    struct cuda_buf part; /* CUDA_REDUCE_MAX_K partial arrays per level but the last */
    void *host;           /* host staging for meta (malloc'd) */
    size_t host_cap;
};

/* Builds (or rebuilds, reusing its buffers) `p` for segments given by the
 * host array seg_off[0..n_seg] (non-decreasing, every segment non-empty).
 * Synchronous upload on `stream`. Returns RT_OK, RT_ENOMEM or RT_EBACKEND. */
enum rt_status cuda_reduce_plan_build(struct cuda_reduce_plan *p, const size_t *seg_off, int n_seg,
                                      cudaStream_t stream, struct rt_err *err);
void cuda_reduce_plan_free(struct cuda_reduce_plan *p);

/* Partials of up to CUDA_REDUCE_MAX_K sums share one plan and one launch. */
#define CUDA_REDUCE_MAX_K 3

/* What level 0 sums, entry i of the sequence: a[k][i] * b[k][i], or a[k][i]
 * when b[k] is NULL. The product is rounded to float before the tree, as
 * the CPU does when it fills its 512-entry buffer. */
template <int K> struct cuda_reduce_src {
    const float *a[K];
    const float *b[K];
};

template <int K> struct cuda_reduce_dst {
    float *o[K]; /* device [n_seg] each, or NULL */
};

/* A finalizer runs on lane 0 of the warp that produces segment c's result,
 * with the K results, so that a stage can fuse its per-clip scalar logic
 * into the last level (no extra launch). */
struct cuda_reduce_nofin {
    __device__ void operator()(int, const float *) const {}
};

/* The tree of one 512-entry block on one warp; see reduce.cu's header for
 * why this is exactly the order of solver/reduce.h. */
static __device__ __forceinline__ float cuda_warp_tree512(float v[16], unsigned lane)
{
#pragma unroll
    for (int s = 8; s >= 1; s >>= 1)
#pragma unroll
        for (int k = 0; k < s; k++) v[k] = v[k] + v[k + s];
    float acc = v[0];
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
        float o = __shfl_down_sync(0xffffffffu, acc, s);
        if (lane < (unsigned)s) acc = acc + o;
    }
    return acc;
}

#define CUDA_REDUCE_WARPS 8

/* One level of the segmented tree: warp gb reduces block gb. Level 0 reads
 * the source; later levels read the K partial arrays of the previous level
 * (part_in + k * part_stride). The last level writes out[k][c] (when out[k]
 * is non-NULL) and calls fin(c, results). */
template <int K, class Fin>
static __global__ void __launch_bounds__(CUDA_REDUCE_WARPS * 32)
cuda_reduce_level_kernel(cuda_reduce_src<K> src, const float *part_in, size_t in_stride,
                         const size_t *in_off, const size_t *out_off, const int *blk_seg,
                         float *part_out, size_t out_stride, size_t n_blocks, int level, int last,
                         cuda_reduce_dst<K> out, Fin fin)
{
    size_t gb = (size_t)blockIdx.x * CUDA_REDUCE_WARPS + (threadIdx.x >> 5);
    if (gb >= n_blocks) return; /* uniform per warp */
    unsigned lane = threadIdx.x & 31u;
    int c = blk_seg[gb];
    size_t base = in_off[c], len = in_off[c + 1] - base;
    float res[K];
    if (level > 0 && len == 1) { /* one entry left: the sequence is done */
#pragma unroll
        for (int k = 0; k < K; k++) res[k] = part_in[k * in_stride + base];
    } else {
        float v[K][16];
        size_t e0 = (gb - out_off[c]) * 512 + lane;
        if (e0 - lane + 512 <= len) {
            /* A whole 512-entry block (every block of a segment but its
             * last): no bounds tests, and every load of the K sums is
             * issued before the first tree. */
#pragma unroll
            for (int k = 0; k < K; k++) {
                const float *pa = level > 0 ? part_in + k * in_stride + base + e0 : src.a[k] + base + e0;
                int hb = level == 0 && src.b[k] != NULL;
                const float *pb = hb ? src.b[k] + base + e0 : pa;
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    float x = pa[32 * j], y = pb[32 * j];
                    v[k][j] = hb ? x * y : x;
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    size_t e = e0 + 32 * (size_t)j;
                    float x = 0.0f;
                    if (e < len) {
                        if (level > 0) x = part_in[k * in_stride + base + e];
                        else if (src.b[k]) x = src.a[k][base + e] * src.b[k][base + e];
                        else x = src.a[k][base + e];
                    }
                    v[k][j] = x;
                }
        }
#pragma unroll
        for (int k = 0; k < K; k++) res[k] = cuda_warp_tree512(v[k], lane);
    }
    if (lane != 0) return;
    if (!last) {
#pragma unroll
        for (int k = 0; k < K; k++) part_out[k * out_stride + gb] = res[k];
        return;
    }
#pragma unroll
    for (int k = 0; k < K; k++)
        if (out.o[k]) out.o[k][c] = res[k];
    fin(c, res);
}

/* Runs the K sums of `src` over the segments of `p`: results into
 * out.o[k][c] (device, may be NULL) and through fin. Asynchronous on
 * `stream`, one launch per level; capturable in a graph. */
template <int K, class Fin>
static enum rt_status cuda_reduce_run(const struct cuda_reduce_plan *p, cuda_reduce_src<K> src,
                                      cuda_reduce_dst<K> out, Fin fin, cudaStream_t stream,
                                      struct rt_err *err)
{
    static_assert(K >= 1 && K <= CUDA_REDUCE_MAX_K, "K sums per launch");
    float *part = (float *)p->part.ptr;
    size_t stride[CUDA_REDUCE_MAX_LEVELS];
    float *lvl_part[CUDA_REDUCE_MAX_LEVELS];
    for (int k = 0; k < p->n_levels; k++) {
        stride[k] = p->lv[k].n_blocks;
        lvl_part[k] = part;
        if (k + 1 < p->n_levels) part += (size_t)CUDA_REDUCE_MAX_K * p->lv[k].n_blocks;
    }
    for (int k = 0; k < p->n_levels; k++) {
        const struct cuda_reduce_level *l = &p->lv[k];
        int last = k + 1 == p->n_levels;
        unsigned grid = cuda_blocks(l->n_blocks, CUDA_REDUCE_WARPS);
        cuda_reduce_level_kernel<K, Fin><<<grid, CUDA_REDUCE_WARPS * 32, 0, stream>>>(
            src, k ? lvl_part[k - 1] : NULL, k ? stride[k - 1] : 0, l->in_off, l->out_off, l->blk_seg,
            last ? NULL : lvl_part[k], stride[k], l->n_blocks, k, last, out, fin);
        CUDA_TRY_LAUNCH(err);
    }
    return RT_OK;
}

#endif
