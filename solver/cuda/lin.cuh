/* lin.cuh -- per-frame stages of the CUDA backend: forward differences,
 * linearization (FK, residuals, Jacobian rows, J^T J block and J^T r in one
 * fused kernel that never writes J), costs, the preconditioner factor,
 * per-frame initialization solves and LM acceptance. Each launcher is the
 * CPU phase of the same name in solver/cpu/ for every frame: the heavy ones
 * one warp per frame through warp.cuh's executors of frame.h, the light
 * ones (differences, acceptance) one thread per frame calling frame.h
 * directly. All asynchronous on `s`. */
#ifndef RT_CUDA_LIN_CUH
#define RT_CUDA_LIN_CUH

#include "state.cuh"

/* Builds the warp executors' tables (warp.cuh struct warp_tabs: FK
 * levels, per-target Jacobian columns) for the
 * batch's tree and targets into L->tabs / L->tb and sets the kernels'
 * shared-memory limits. Synchronous. */
enum rt_status cuda_warp_tables_build(struct cuda_lm *L, const struct solver_batch *b, cudaStream_t s,
                                      struct rt_err *err);
/* dq (forward differences) of `state`, then B, g, frozen and part for the
 * frames of clips with gate[clip] != 0. */
enum rt_status cuda_linearize(struct cuda_lm *L, const float *state, const int *gate, cudaStream_t s,
                              struct rt_err *err);
/* Per-frame costs of `state` into out[] for gated clips. */
enum rt_status cuda_costs(struct cuda_lm *L, const float *state, float *out, const int *gate,
                          cudaStream_t s, struct rt_err *err);
/* lamd and the Cholesky factor F of every gated frame (lambda_clip * mu_f). */
enum rt_status cuda_precondition(struct cuda_lm *L, const int *gate, cudaStream_t s, struct rt_err *err);
/* opt.init_iters independent LM iterations per frame on x, then up to
 * LM_RULE_INIT_REPAIR_ROUNDS neighbour repair rounds (cpu_lm.c init_solve); swaps
 * L->x/xt and L->part/part_t as the CPU does. One host read per round. */
enum rt_status cuda_init_solves(struct cuda_lm *L, cudaStream_t s, struct rt_err *err);
/* Per-frame damping update and, for clips with sel == 2, x = xt, part = part_t. */
enum rt_status cuda_accept(struct cuda_lm *L, cudaStream_t s, struct rt_err *err);
/* gmax[c] = max |g| over clip c (exact in any order). */
enum rt_status cuda_grad_max(struct cuda_lm *L, cudaStream_t s, struct rt_err *err);

#endif
