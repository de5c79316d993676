/* common.cuh -- what every stage of the CUDA backend shares: the CUDA_TRY
 * error macros, a device buffer that grows with the batch and page-locked
 * host memory.
 *
 * Every CUDA runtime call goes through CUDA_TRY (return on failure) or
 * CUDA_GOTO (set a status and jump to the function's one cleanup label).
 * Both turn the failure into RT_EBACKEND with cudaGetErrorString(), the file
 * and the line in the caller's struct rt_err; neither aborts (STYLE.md
 * "Errors": ggml's CUDA_CHECK aborts, ours must not). */
#ifndef RT_CUDA_COMMON_CUH
#define RT_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdlib.h>

#include "../../base/mem.h"
#include "../../base/status.h"

/* rt_err_set() returns int; C++ wants the enum back. */
#define CUDA_ERR(...) ((enum rt_status)rt_err_set(__VA_ARGS__))

#define CUDA_TRY(call, err)                                                              \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return CUDA_ERR((err), RT_EBACKEND, "cuda", "%s:%d: %s", __FILE__, __LINE__, \
                              cudaGetErrorString(e_));                                   \
    } while (0)

/* Like CUDA_TRY, but stores the status in `st` and jumps to `label`. */
#define CUDA_GOTO(call, err, st, label)                                                  \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            (st) = CUDA_ERR((err), RT_EBACKEND, "cuda", "%s:%d: %s",   \
                                              __FILE__, __LINE__, cudaGetErrorString(e_)); \
            goto label;                                                                  \
        }                                                                                \
    } while (0)

/* Checks the launch that just happened (bad configuration, missing image). */
#define CUDA_TRY_LAUNCH(err) CUDA_TRY(cudaGetLastError(), err)

/* A device allocation that only ever grows. Invariant: ptr == NULL iff
 * cap == 0; cap is in bytes. Contents are not preserved across growth. */
struct cuda_buf {
    void *ptr;
    size_t cap;
};

/* Makes `b` hold at least `bytes` bytes (never shrinks). Returns RT_OK or
 * RT_EBACKEND (the old buffer is then already freed and b is empty). */
static inline enum rt_status cuda_buf_reserve(struct cuda_buf *b, size_t bytes, struct rt_err *err)
{
    if (bytes <= b->cap && b->ptr) return RT_OK;
    if (b->ptr) cudaFree(b->ptr);
    b->ptr = NULL;
    b->cap = 0;
    if (bytes == 0) bytes = 16;
    CUDA_TRY(cudaMalloc(&b->ptr, bytes), err);
    b->cap = bytes;
    return RT_OK;
}

static inline void cuda_buf_free(struct cuda_buf *b)
{
    if (b->ptr) cudaFree(b->ptr);
    b->ptr = NULL;
    b->cap = 0;
}

/* Page-locked host memory, portable (every device's copies take it by
 * DMA): whole pages, huge ones from RT_HUGE_MIN up (rt_alloc_large),
 * registered with the driver. Against cudaHostAlloc on an H100 lend
 * (bench_gpu hostmem, bench/RESULTS.md "twelfth session"): 95 MB locked in
 * 21 ms instead of 51 and released in 2 instead of 15, and a 128,000-frame
 * solve beside the locking slowed by 2 ms instead of 35 (the driver's lock
 * is held that much shorter). NULL when it cannot be had (no error left
 * behind for later checks). Released with cuda_pinned_free(). */
static inline void *cuda_pinned_alloc(size_t bytes)
{
    size_t cap = 0;
    void *p = rt_alloc_large(bytes ? bytes : 1, 4096, &cap);
    if (!p) return NULL;
    if (cudaHostRegister(p, cap, cudaHostRegisterPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        free(p);
        return NULL;
    }
    return p;
}

static inline void cuda_pinned_free(void *p)
{
    if (!p) return;
    (void)cudaHostUnregister(p);
    free(p);
}

/* Blocks of `threads` threads covering n items (n may be 0: one block). */
static inline unsigned cuda_blocks(size_t n, unsigned threads)
{
    size_t g = (n + threads - 1) / threads;
    return g ? (unsigned)g : 1u;
}

#endif
