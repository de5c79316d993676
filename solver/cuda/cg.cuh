/* cg.cuh -- block-Jacobi PCG of one LM step over the whole batch, and the
 * step's prediction, on the device (solver/cpu/cpu_cg.c's cpu_pcg and
 * cpu_predict, executed per frame and per clip on the GPU).
 *
 * The PCG runs as one CUDA graph: the init phase and opt.max_cg_iters
 * iterations, each a fixed sequence of launches whose dimensions depend
 * only on the batch's frames. Per-clip state (cg_on, cg_it, gg, rz, alpha,
 * beta) lives on the device and is updated by the last level of each clip's
 * reduction; a clip that stops keeps its vectors bit for bit because every
 * kernel skips its frames. No host round trip inside the PCG. */
#ifndef RT_CUDA_CG_CUH
#define RT_CUDA_CG_CUH

#include "state.cuh"

/* Builds (once per batch) and launches the PCG graph for the clips with
 * L->sel set; results in L->d, iterations in L->cg_it. */
enum rt_status cuda_pcg(struct cuda_lm *L, cudaStream_t s, struct rt_err *err);
/* Adds the last PCG graph's event-timed duration to L->pcg_ms (call after
 * the stream has been synchronized past it). */
enum rt_status cuda_pcg_account(struct cuda_lm *L, struct rt_err *err);
/* q = H d (undamped), pred_f, xt = x (+) d for the clips with L->sel set. */
enum rt_status cuda_predict(struct cuda_lm *L, cudaStream_t s, struct rt_err *err);
/* Drops the graph (after the batch shape or buffers change). */
void cuda_pcg_reset(struct cuda_lm *L);

#endif
