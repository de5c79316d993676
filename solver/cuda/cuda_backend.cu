/* cuda_backend.cu -- the CUDA solver backend: its ops table, its context and
 * device selection (STYLE.md "Backend interface", after ggml's backends).
 *
 * The context owns one stream and the LM stage's device state, whose
 * buffers grow with the frames of the batches solved (never a fixed
 * capacity) and are freed in destroy. Initialization never aborts: a
 * machine without a usable device (no driver, no GPU) gets RT_ENODEV
 * "no CUDA device", so that "auto" falls back to the CPU backend. */
#include "frame_dev.cuh"
#include "../backend.h"
#include "common.cuh"
#include "cuda_api.h"
#include "lm.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cuda_ctx {
    int device;
    cudaStream_t stream;
    struct cuda_lm *lm; /* created on the first solve; grows with batches */
};

/* Selects device 0 after checking that one exists. */
static enum rt_status cuda_pick_device(int *dev, struct rt_err *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
        (void)cudaGetLastError(); /* clear the sticky-free error state */
        if (e == cudaSuccess || e == cudaErrorNoDevice)
            return CUDA_ERR(err, RT_ENODEV, "backend", "no CUDA device");
        return CUDA_ERR(err, RT_ENODEV, "backend", "no CUDA device (%s)", cudaGetErrorString(e));
    }
    *dev = 0;
    CUDA_TRY(cudaSetDevice(0), err);
    return RT_OK;
}

extern "C" enum rt_status solver_cuda_device_describe(char *buf, size_t cap, struct rt_err *err)
{
    int dev = 0;
    cudaDeviceProp p;
    if (buf && cap) buf[0] = '\0';
    enum rt_status st = cuda_pick_device(&dev, err);
    if (st != RT_OK) return st;
    CUDA_TRY(cudaGetDeviceProperties(&p, dev), err);
    int drv = 0, rtv = 0;
    (void)cudaDriverGetVersion(&drv);
    (void)cudaRuntimeGetVersion(&rtv);
    if (buf && cap)
        snprintf(buf, cap, "%s, %d SMs, %.1f GiB, cc %d.%d, L2 %d MiB, driver %d, runtime %d", p.name,
                 p.multiProcessorCount, (double)p.totalGlobalMem / (1024.0 * 1024 * 1024), p.major,
                 p.minor, p.l2CacheSize >> 20, drv, rtv);
    return RT_OK;
}

static enum rt_status cuda_solve(void *vctx, const struct solver_batch *b, struct solver_result *res,
                                 struct rt_err *err)
{
    struct cuda_ctx *ctx = (struct cuda_ctx *)vctx;
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    return cuda_lm_solve(&ctx->lm, b, res, ctx->stream, err);
}

static void cuda_synchronize(void *vctx)
{
    struct cuda_ctx *ctx = (struct cuda_ctx *)vctx;
    (void)cudaStreamSynchronize(ctx->stream);
}

static void cuda_destroy(void *vctx)
{
    struct cuda_ctx *ctx = (struct cuda_ctx *)vctx;
    if (!ctx) return;
    (void)cudaSetDevice(ctx->device);
    cuda_lm_free(ctx->lm);
    if (ctx->stream) (void)cudaStreamDestroy(ctx->stream);
    free(ctx);
}

static const struct solver_backend_ops cuda_ops = {
    /* .name        = */ "cuda",
    /* .solve       = */ cuda_solve,
    /* .synchronize = */ cuda_synchronize,
    /* .destroy     = */ cuda_destroy,
};

extern "C" enum rt_status solver_cuda_last_stats(const struct solver_backend *be, double *pcg_ms,
                                                 int *pcg_graphs, double *solve_ms, struct rt_err *err)
{
    if (!be || be->ops != &cuda_ops) return CUDA_ERR(err, RT_ENODEV, "backend", "not a CUDA backend");
    cuda_lm_stats(((const struct cuda_ctx *)be->ctx)->lm, pcg_ms, pcg_graphs, solve_ms);
    return RT_OK;
}

extern "C" enum rt_status solver_cuda_copy_bandwidth(size_t bytes, double *gbs, struct rt_err *err)
{
    int dev;
    enum rt_status st = cuda_pick_device(&dev, err);
    if (st != RT_OK) return st;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float t[11];
    CUDA_GOTO(cudaMalloc(&a, bytes), err, st, fail);
    CUDA_GOTO(cudaMalloc(&b, bytes), err, st, fail);
    CUDA_GOTO(cudaMemset(a, 1, bytes), err, st, fail);
    CUDA_GOTO(cudaEventCreate(&e0), err, st, fail);
    CUDA_GOTO(cudaEventCreate(&e1), err, st, fail);
    CUDA_GOTO(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), err, st, fail);
    for (int r = 0; r < 11; r++) {
        CUDA_GOTO(cudaEventRecord(e0, 0), err, st, fail);
        CUDA_GOTO(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0), err, st, fail);
        CUDA_GOTO(cudaEventRecord(e1, 0), err, st, fail);
        CUDA_GOTO(cudaEventSynchronize(e1), err, st, fail);
        CUDA_GOTO(cudaEventElapsedTime(&t[r], e0, e1), err, st, fail);
    }
    for (int i = 1; i < 11; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) { float x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
    *gbs = 2.0 * (double)bytes / (1e-3 * (double)t[5]) / 1e9;
fail:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (a) cudaFree(a);
    if (b) cudaFree(b);
    return st;
}

extern "C" enum rt_status solver_backend_cuda_init(struct solver_backend *out, struct rt_err *err)
{
    out->ops = NULL;
    out->ctx = NULL;
    int dev = 0;
    enum rt_status st = cuda_pick_device(&dev, err);
    if (st != RT_OK) return st;
    struct cuda_ctx *ctx = (struct cuda_ctx *)calloc(1, sizeof *ctx);
    if (!ctx) return CUDA_ERR(err, RT_ENOMEM, "backend", "out of memory");
    ctx->device = dev;
    CUDA_GOTO(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking), err, st, fail);
    out->ops = &cuda_ops;
    out->ctx = ctx;
    return RT_OK;
fail:
    free(ctx);
    return st;
}
