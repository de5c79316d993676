/* cuda_stub.c -- built instead of the .cu files when nvcc is absent, so that
 * solver_backend_cuda_init() and cuda_api.h always link and callers need no
 * #ifdef. */
#include "../backend.h"
#include "cuda_api.h"

enum rt_status solver_backend_cuda_init(struct solver_backend *out, const struct solver_backend_config *cfg,
                                        struct rt_err *err)
{
    (void)cfg;
    out->ops = NULL;
    out->ctx = NULL;
    return rt_err_set(err, RT_ENODEV, "backend", "built without CUDA");
}

enum rt_status solver_cuda_device_describe(char *buf, size_t cap, struct rt_err *err)
{
    if (buf && cap) buf[0] = '\0';
    return rt_err_set(err, RT_ENODEV, "backend", "built without CUDA");
}

enum rt_status solver_cuda_sum_segments(const float *x, const size_t *seg_off, int n_seg,
                                        float *out, float *ms, struct rt_err *err)
{
    (void)x, (void)seg_off, (void)n_seg, (void)out, (void)ms;
    return rt_err_set(err, RT_ENODEV, "backend", "built without CUDA");
}

enum rt_status solver_cuda_last_stats(const struct solver_backend *be, double *pcg_ms, int *pcg_graphs,
                                      double *solve_ms, struct rt_err *err)
{
    (void)be, (void)pcg_ms, (void)pcg_graphs, (void)solve_ms;
    return rt_err_set(err, RT_ENODEV, "backend", "built without CUDA");
}

enum rt_status solver_cuda_copy_bandwidth(size_t bytes, double *gbs, struct rt_err *err)
{
    (void)bytes, (void)gbs;
    return rt_err_set(err, RT_ENODEV, "backend", "built without CUDA");
}

int solver_cuda_backend_devices(const struct solver_backend *be)
{
    (void)be;
    return 0;
}

void solver_cuda_release_devices(void) {}

void solver_cuda_limit_queues(int queues) { (void)queues; }
