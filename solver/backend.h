/* backend.h -- solver backends: a const table of operations plus an opaque
 * context, after ggml's backend pattern. "cpu" always exists; "cuda" exists
 * when the project was built with nvcc and a device is present. "auto" tries
 * CUDA and falls back to the CPU. Callers never #ifdef on CUDA. */
#ifndef RT_SOLVER_BACKEND_H
#define RT_SOLVER_BACKEND_H

#include "solver.h"

#ifdef __cplusplus
extern "C" {
#endif

struct solver_backend_ops {
    const char *name; /* "cpu", "cuda" */
    enum rt_status (*solve)(void *ctx, const struct solver_batch *b, struct solver_result *res,
                            struct rt_err *err);
    void (*synchronize)(void *ctx); /* optional */
    void (*destroy)(void *ctx);     /* optional */
};

struct solver_backend {
    const struct solver_backend_ops *ops;
    void *ctx;
};

/* Initializes `out` for the backend `name` ("cpu", "cuda" or "auto").
 * Returns RT_ENODEV when CUDA was asked for and is unavailable (message says
 * why: built without CUDA, no device), RT_EINVAL for an unknown name.
 * On failure `out` is left empty and solver_backend_free() on it is a no-op. */
enum rt_status solver_backend_init(struct solver_backend *out, const char *name,
                                   struct rt_err *err);

/* The CUDA backend constructor; always links (solver/cuda/cuda_stub.c returns
 * RT_ENODEV "built without CUDA" when nvcc was absent at build time). */
enum rt_status solver_backend_cuda_init(struct solver_backend *out, struct rt_err *err);

/* Solves `b` into `res` on `be` (validates the batch first). */
enum rt_status solver_backend_solve(struct solver_backend *be, const struct solver_batch *b,
                                    struct solver_result *res, struct rt_err *err);

/* Releases the backend's context; NULL-safe and idempotent. */
void solver_backend_free(struct solver_backend *be);

/* Name of the backend ("cpu", "cuda"); "none" for an empty one. */
const char *solver_backend_name(const struct solver_backend *be);

#ifdef __cplusplus
}
#endif
#endif
