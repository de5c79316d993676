/* cuda_backend.cu -- the CUDA solver backend: its ops table, its context and
 * device selection (STYLE.md "Backend interface", after ggml's backends).
 *
 * The context owns its configuration (struct solver_backend_config: the
 * device limit and the cuda_* switches, fixed at init) and, per device
 * used, one stream (at the device's greatest priority with cuda_priority:
 * several contexts may solve on one device at once) and the LM stage's
 * device state, whose buffers grow with
 * the frames of the batches solved (never a fixed capacity) and are freed
 * in destroy. With several devices a batch is
 * split by clips into contiguous groups of about equal frames, one per
 * device, solved concurrently (one host thread per device). Because a
 * clip's result never depends on its batch (DESIGN.md "The numerical
 * contract" 1), the bits are those of one device. Initialization never
 * aborts: a machine without a usable device (no driver, no GPU) gets
 * RT_ENODEV "no CUDA device", so that "auto" falls back to the CPU
 * backend. */
#include "frame_dev.cuh"
#include "../../base/clock.h"
#include "../backend.h"
#include "common.cuh"
#include "cuda_api.h"
#include "lm.cuh"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_MAX_DEVICES 16

struct cuda_dev {
    int device;
    cudaStream_t stream;
    struct cuda_lm *lm; /* created on the first solve; grows with batches */
};

struct cuda_ctx {
    struct solver_backend_config cfg;
    int n_dev;
    struct cuda_dev dev[CUDA_MAX_DEVICES];
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

/* One device's share of a batch. */
struct cuda_part {
    struct cuda_dev *dev;
    const struct solver_backend_config *cfg;
    struct solver_batch b;
    struct solver_result res;
    int *frame_off;
    enum rt_status st;
    struct rt_err err;
};

static void *cuda_part_run(void *arg)
{
    struct cuda_part *p = (struct cuda_part *)arg;
    cudaError_t e = cudaSetDevice(p->dev->device);
    if (e != cudaSuccess)
        p->st = CUDA_ERR(&p->err, RT_EBACKEND, "cuda", "%s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    else
        p->st = cuda_lm_solve(&p->dev->lm, p->cfg, &p->b, &p->res, p->dev->stream, &p->err);
    return NULL;
}

static enum rt_status cuda_solve(void *vctx, const struct solver_batch *b, struct solver_result *res,
                                 struct rt_err *err)
{
    struct cuda_ctx *ctx = (struct cuda_ctx *)vctx;
    int nd = ctx->n_dev < b->n_clips ? ctx->n_dev : b->n_clips;
    if (nd <= 1) {
        CUDA_TRY(cudaSetDevice(ctx->dev[0].device), err);
        return cuda_lm_solve(&ctx->dev[0].lm, &ctx->cfg, b, res, ctx->dev[0].stream, err);
    }
    /* Split by clips: device d takes the clips whose first frame lies in
     * [d * total / nd, (d + 1) * total / nd), every device at least one. */
    double t0 = rt_now();
    const int nf = b->frame_off[b->n_clips], cols = rt_state_cols(b->tree);
    struct cuda_part part[CUDA_MAX_DEVICES];
    pthread_t th[CUDA_MAX_DEVICES];
    int started[CUDA_MAX_DEVICES];
    int c0 = 0;
    enum rt_status st = RT_OK;
    memset(part, 0, sizeof part);
    memset(started, 0, sizeof started);
    for (int d = 0; d < nd; d++) {
        int c1 = c0 + 1;
        if (d == nd - 1) c1 = b->n_clips;
        else
            while (c1 < b->n_clips - (nd - 1 - d) && (long long)b->frame_off[c1] * nd < (long long)nf * (d + 1)) c1++;
        struct cuda_part *p = &part[d];
        int f0 = b->frame_off[c0];
        size_t nt = (size_t)b->n_targets, tf = (size_t)f0 * nt;
        p->dev = &ctx->dev[d];
        p->cfg = &ctx->cfg;
        p->frame_off = (int *)malloc(((size_t)(c1 - c0) + 1) * sizeof(int));
        if (!p->frame_off) { st = CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory"); break; }
        for (int c = c0; c <= c1; c++) p->frame_off[c - c0] = b->frame_off[c] - f0;
        p->b = *b;
        p->b.n_clips = c1 - c0;
        p->b.frame_off = p->frame_off;
        if (b->target_pos) p->b.target_pos = b->target_pos + 3 * tf;
        if (b->target_rot) p->b.target_rot = b->target_rot + 4 * tf;
        if (b->target_wpos) p->b.target_wpos = b->target_wpos + tf;
        if (b->target_wrot) p->b.target_wrot = b->target_wrot + tf;
        if (b->init) p->b.init = b->init + (size_t)f0 * cols;
        p->b.progress = NULL;
        p->b.progress_user = NULL;
        p->res.state = res->state + (size_t)f0 * cols;
        p->res.clips = res->clips + c0;
        c0 = c1;
    }
    for (int d = 0; d < nd && st == RT_OK; d++) {
        if (pthread_create(&th[d], NULL, cuda_part_run, &part[d]) != 0) {
            st = CUDA_ERR(err, RT_EBACKEND, "cuda", "cannot start a thread for device %d", d);
            break;
        }
        started[d] = 1;
    }
    for (int d = 0; d < nd; d++)
        if (started[d]) pthread_join(th[d], NULL);
    for (int d = 0; d < nd; d++) {
        if (st == RT_OK && started[d] && part[d].st != RT_OK) {
            st = part[d].st;
            if (err) *err = part[d].err;
        }
        free(part[d].frame_off);
    }
    if (st == RT_OK) {
        double sec = rt_now() - t0;
        int max_it = 0;
        for (int k = 0; k < b->n_clips; k++) {
            res->clips[k].seconds = sec;
            if (res->clips[k].lm_iters > max_it) max_it = res->clips[k].lm_iters;
        }
        if (b->progress) b->progress(b->progress_user, max_it, b->n_clips);
    }
    return st;
}

static void cuda_synchronize(void *vctx)
{
    struct cuda_ctx *ctx = (struct cuda_ctx *)vctx;
    for (int d = 0; d < ctx->n_dev; d++) {
        (void)cudaSetDevice(ctx->dev[d].device);
        (void)cudaStreamSynchronize(ctx->dev[d].stream);
    }
}

static void cuda_destroy(void *vctx)
{
    struct cuda_ctx *ctx = (struct cuda_ctx *)vctx;
    if (!ctx) return;
    for (int d = 0; d < ctx->n_dev; d++) {
        (void)cudaSetDevice(ctx->dev[d].device);
        cuda_lm_free(ctx->dev[d].lm);
        if (ctx->dev[d].stream) (void)cudaStreamDestroy(ctx->dev[d].stream);
    }
    free(ctx);
}

/* Page-locked and portable: cuda_pinned_alloc (common.cuh). */
static void *cuda_host_alloc(void *vctx, size_t bytes)
{
    (void)vctx;
    return cuda_pinned_alloc(bytes);
}

static void cuda_host_free(void *vctx, void *p)
{
    (void)vctx;
    cuda_pinned_free(p);
}

static const struct solver_backend_ops cuda_ops = {
    /* .name        = */ "cuda",
    /* .solve       = */ cuda_solve,
    /* .synchronize = */ cuda_synchronize,
    /* .destroy     = */ cuda_destroy,
    /* .host_alloc  = */ cuda_host_alloc,
    /* .host_free   = */ cuda_host_free,
};

extern "C" enum rt_status solver_cuda_last_stats(const struct solver_backend *be, double *pcg_ms,
                                                 int *pcg_graphs, double *solve_ms, struct rt_err *err)
{
    if (!be || be->ops != &cuda_ops) return CUDA_ERR(err, RT_ENODEV, "backend", "not a CUDA backend");
    cuda_lm_stats(((const struct cuda_ctx *)be->ctx)->dev[0].lm, pcg_ms, pcg_graphs, solve_ms);
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

extern "C" enum rt_status solver_backend_cuda_init(struct solver_backend *out,
                                                   const struct solver_backend_config *cfg, struct rt_err *err)
{
    struct solver_backend_config def;
    out->ops = NULL;
    out->ctx = NULL;
    if (!cfg) {
        solver_backend_config_default(&def);
        cfg = &def;
    }
    enum rt_status st = solver_backend_config_check(cfg, err);
    if (st != RT_OK) return st;
    int dev = 0, count = 0;
    st = cuda_pick_device(&dev, err);
    if (st != RT_OK) return st;
    CUDA_TRY(cudaGetDeviceCount(&count), err);
    if (cfg->cuda_devices > 0 && count > cfg->cuda_devices) count = cfg->cuda_devices;
    if (count > CUDA_MAX_DEVICES) count = CUDA_MAX_DEVICES;
    struct cuda_ctx *ctx = (struct cuda_ctx *)calloc(1, sizeof *ctx);
    if (!ctx) return CUDA_ERR(err, RT_ENOMEM, "backend", "out of memory");
    ctx->cfg = *cfg;
    for (int d = 0; d < count; d++) {
        int least = 0, greatest = 0;
        ctx->dev[d].device = d;
        CUDA_GOTO(cudaSetDevice(d), err, st, fail);
        if (cfg->cuda_priority) CUDA_GOTO(cudaDeviceGetStreamPriorityRange(&least, &greatest), err, st, fail);
        CUDA_GOTO(cudaStreamCreateWithPriority(&ctx->dev[d].stream, cudaStreamNonBlocking, cfg->cuda_priority ? greatest : least),
                  err, st, fail);
        ctx->n_dev = d + 1;
    }
    (void)cudaSetDevice(0);
    out->ops = &cuda_ops;
    out->ctx = ctx;
    return RT_OK;
fail:
    cuda_destroy(ctx);
    return st;
}

extern "C" void solver_cuda_release_devices(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    for (int d = 0; d < n; d++)
        if (cudaSetDevice(d) == cudaSuccess) (void)cudaDeviceReset();
    (void)cudaGetLastError();
}

extern "C" void solver_cuda_limit_queues(int queues)
{
    char v[16];
    if (queues < 1) queues = 1;
    if (queues > 32) queues = 32; /* the driver's range */
    snprintf(v, sizeof v, "%d", queues);
    (void)setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 0);
}

extern "C" int solver_cuda_backend_devices(const struct solver_backend *be)
{
    if (!be || be->ops != &cuda_ops) return 0;
    return ((const struct cuda_ctx *)be->ctx)->n_dev;
}
