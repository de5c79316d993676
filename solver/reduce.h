/* reduce.h -- the one summation order of the solver (DESIGN.md "The
 * reduction order"), written once for the host and the device.
 *
 * Reduction order: DESIGN.md "The reduction order"; do not reorder.
 * A sum over a sequence of L >= 1 entries is computed as follows:
 *   1. cut the sequence into consecutive blocks of RT_REDUCE_BLOCK (512)
 *      entries, the last one padded with zeros;
 *   2. reduce every block by the pairwise tree with strides 256, 128, ..., 1:
 *      for each stride s, entry i (0 <= i < s) becomes entry i + entry i+s;
 *      the block's value is entry 0;
 *   3. the block values, in block order, form a new sequence; repeat from 1
 *      until the sequence has one entry.
 * At least one level is always done (L = 1 gives x + 0 + ... = x, except
 * that -0 becomes +0). L = 0 sums to +0.
 *
 * The order is the specification; executors choose how to run it. The CPU
 * backend runs short sequences as one loop and long ones block-parallel
 * across threads (solver/cpu/cpu_reduce.c); a CUDA executor may give each
 * block to a thread block. Everything here is RT_HD, free of libm and of
 * allocation, and compiles as C and as CUDA C++. */
#ifndef RT_SOLVER_REDUCE_H
#define RT_SOLVER_REDUCE_H

#include <stddef.h>

#ifdef __CUDACC__
#define RT_HD static __host__ __device__ __forceinline__
#else
#ifndef RT_HD
#define RT_HD static inline
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RT_REDUCE_BLOCK 512

/* Reduces v[0..511] in place by the pairwise tree and returns the result
 * (also left in v[0]). The caller has zero-padded a short last block. */
RT_HD float rt_reduce_block512(float *v)
{
    for (int s = RT_REDUCE_BLOCK / 2; s >= 1; s >>= 1)
        for (int i = 0; i < s; i++) v[i] = v[i] + v[i + s];
    return v[0];
}

/* Number of blocks of a sequence of n entries (n >= 1). */
RT_HD size_t rt_reduce_nblocks(size_t n)
{
    return (n + RT_REDUCE_BLOCK - 1) / RT_REDUCE_BLOCK;
}

/* Value of block `blk` of the sequence x[0..n): copies it into buf[512]
 * (zero-padding past n) and reduces it. */
RT_HD float rt_reduce_block_of(const float *x, size_t n, size_t blk, float *buf)
{
    size_t base = blk * RT_REDUCE_BLOCK;
    for (int i = 0; i < RT_REDUCE_BLOCK; i++) {
        size_t e = base + (size_t)i;
        buf[i] = e < n ? x[e] : 0.0f;
    }
    return rt_reduce_block512(buf);
}

/* The whole reduction of x[0..n) on one thread, in the specified order.
 * scratch: at least RT_REDUCE_BLOCK + rt_reduce_nblocks(n) floats. The
 * level-k partials are written over the start of scratch+512 while the
 * level is read ahead of them, which is safe because block b reads entries
 * [512b, 512b+512) before partial b (b <= 512b) is written. */
RT_HD float rt_reduce_serial(const float *x, size_t n, float *scratch)
{
    float *buf = scratch, *part = scratch + RT_REDUCE_BLOCK;
    const float *src = x;
    size_t m = n;
    if (n == 0) return 0.0f;
    do {
        size_t nb = rt_reduce_nblocks(m);
        for (size_t b = 0; b < nb; b++) part[b] = rt_reduce_block_of(src, m, b, buf);
        src = part;
        m = nb;
    } while (m > 1);
    return src[0];
}

#ifdef __cplusplus
}
#endif
#endif
