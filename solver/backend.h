/* backend.h -- solver backends: a const table of operations plus an opaque
 * context, after ggml's backend pattern. "cpu" always exists; "cuda" exists
 * when the project was built with nvcc and a device is present. "auto" tries
 * CUDA and falls back to the CPU. Callers never #ifdef on CUDA.
 *
 * A backend is configured once, when it is created (struct
 * solver_backend_config): the CPU backend's thread pool and the CUDA
 * backend's switches live as long as its context. The solver never reads
 * the environment; the programs fill the configuration (retarget/engine.h
 * reads the RT_CUDA_* variables for them).
 *
 * A context solves one batch at a time: callers that share a backend
 * between threads serialize their solves on it (the daemon has one worker
 * per backend).
 *
 * Memory: solver_backend_init() fills a caller-owned struct whose context
 * the caller releases with solver_backend_free(); the configuration is
 * borrowed (copied during init). */
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
    /* optional: host memory the device reads and writes fastest (CUDA:
     * page-locked), NULL when none can be had; and its release */
    void *(*host_alloc)(void *ctx, size_t bytes);
    void (*host_free)(void *ctx, void *p);
};

struct solver_backend {
    const struct solver_backend_ops *ops;
    void *ctx;
};

#define SOLVER_MAX_THREADS 256     /* largest solver_backend_config.threads */
#define SOLVER_AUTO_THREADS_MAX 64 /* threads = 0 takes one per online core, at most this many */

/* How a backend is set up; fixed for the life of its context. Every field's
 * zero is its default (solver_backend_config_default()). Results never
 * depend on any of them (DESIGN.md "The numerical contract"). */
struct solver_backend_config {
    int threads;          /* CPU backend threads, 1..SOLVER_MAX_THREADS; 0: one per online
                           * core, at most SOLVER_AUTO_THREADS_MAX */
    int cuda_devices;     /* CUDA: use at most this many devices (a batch is split by clips);
                           * 0: all of them */
    int cuda_profile;     /* CUDA, 1: synchronize after each phase of a solve and print one
                           * timing line per solve to stderr */
    int cuda_unrolled_cg; /* CUDA, 1: capture the CG iterations unrolled instead of as a
                           * while-node graph (for compute-sanitizer, Nsight Compute) */
    int cuda_cg_up;       /* CUDA, 1: the CG update one frame per warp instead of two */
    int cuda_priority;    /* CUDA, 1: the streams at the device's greatest priority, so that a
                           * latency-bound caller's kernels (a few small clips) start ahead of
                           * the waiting blocks of another context's large batch on the same
                           * device */
    int cpu_profile;      /* CPU, 1: time each phase of a solve and print one timing line
                           * per solve to stderr */
};

/* Fills `c` with the defaults: every field 0. */
void solver_backend_config_default(struct solver_backend_config *c);

/* Checks every field of `c` against the ranges above. Returns RT_OK, or
 * RT_EINVAL with `where` "backend.FIELD". */
enum rt_status solver_backend_config_check(const struct solver_backend_config *c, struct rt_err *err);

/* Initializes `out` for the backend `name` ("cpu", "cuda" or "auto"; NULL
 * is "auto") configured by `cfg` (NULL: the defaults). Returns RT_EINVAL
 * for an unknown name or a configuration out of range, RT_ENODEV when CUDA
 * was asked for and is unavailable (the message says why: built without
 * CUDA, no device), RT_ENOMEM when the CPU backend cannot start its
 * threads. "auto" falls back to the CPU whenever CUDA cannot start. On
 * failure `out` is left empty and solver_backend_free() on it is a no-op. */
enum rt_status solver_backend_init(struct solver_backend *out, const char *name,
                                   const struct solver_backend_config *cfg, struct rt_err *err);

/* The CPU backend constructor (solver/cpu/cpu_backend.c): a context that
 * owns a pool of cfg->threads threads and work buffers that grow with the
 * batches solved. Same returns as solver_backend_init(). */
enum rt_status solver_backend_cpu_init(struct solver_backend *out, const struct solver_backend_config *cfg,
                                       struct rt_err *err);

/* The CUDA backend constructor; always links (solver/cuda/cuda_stub.c returns
 * RT_ENODEV "built without CUDA" when nvcc was absent at build time). Uses
 * the cuda_* fields of `cfg` (NULL: the defaults). */
enum rt_status solver_backend_cuda_init(struct solver_backend *out, const struct solver_backend_config *cfg,
                                        struct rt_err *err);

/* Solves `b` into `res` on `be`. Validates the batch (solver_batch_check(),
 * once per solve; backends do not check it again) and returns its error,
 * RT_ESTATE for an uninitialized backend, or the backend's error. On
 * failure the contents of `res` are unspecified. */
enum rt_status solver_backend_solve(struct solver_backend *be, const struct solver_batch *b,
                                    struct solver_result *res, struct rt_err *err);

/* Releases the backend's context; NULL-safe and idempotent. */
void solver_backend_free(struct solver_backend *be);

/* `bytes` of host memory that the backend's solves copy fastest to and
 * from (CUDA: page-locked, so that a batch goes to the device by DMA with
 * no staging copy), for arrays reused from solve to solve: allocating it
 * costs more than malloc. NULL when the backend has none to give (the CPU
 * backend) or it cannot be had: the caller uses malloc then. Released with
 * solver_backend_host_free() on the same backend, before
 * solver_backend_free(); NULL-safe. */
void *solver_backend_host_alloc(struct solver_backend *be, size_t bytes);
void solver_backend_host_free(struct solver_backend *be, void *p);

/* Name of the backend ("cpu", "cuda"); "none" for an empty one. */
const char *solver_backend_name(const struct solver_backend *be);

#ifdef __cplusplus
}
#endif
#endif
