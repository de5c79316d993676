/* cuda_stub.c -- built instead of the .cu files when nvcc is absent, so that
 * solver_backend_cuda_init() always links and callers need no #ifdef. */
#include "../backend.h"

enum rt_status solver_backend_cuda_init(struct solver_backend *out, struct rt_err *err)
{
    out->ops = NULL;
    out->ctx = NULL;
    return rt_err_set(err, RT_ENODEV, "backend", "built without CUDA");
}
