/* lm.cuh -- the Levenberg-Marquardt driver of the CUDA backend (host side).
 *
 * cuda_lm_solve() solves a whole batch (checked by the caller) on
 * `stream`: per-frame init solves, then the coupled LM with block-Jacobi
 * PCG, every clip with its own damping and stopping, in exactly the
 * arithmetic of the CPU backend (solver/cpu/). `cfg` is the backend's
 * configuration (its cuda_profile, cuda_unrolled_cg and cuda_cg_up
 * switches apply).
 * State: *lm is created on the first call and its device buffers grow with
 * the frames of later batches; cuda_lm_free() releases it (NULL-safe). */
#ifndef RT_CUDA_LM_CUH
#define RT_CUDA_LM_CUH

#include "frame_dev.cuh"
#include "common.cuh"
#include "../backend.h"

struct cuda_lm;

enum rt_status cuda_lm_solve(struct cuda_lm **lm, const struct solver_backend_config *cfg,
                             const struct solver_batch *b, struct solver_result *res, cudaStream_t stream,
                             struct rt_err *err);
void cuda_lm_free(struct cuda_lm *lm);
/* Timing of the last solve (zeros when none). */
void cuda_lm_stats(const struct cuda_lm *lm, double *pcg_ms, int *pcg_graphs, double *solve_ms);

#endif
