/* state.cuh -- the device state of one CUDA solve, shared by the stages
 * (lin.cu: per-frame linearization kernels; cg.cu: PCG and prediction;
 * lm.cu: the host LM driver). It mirrors struct cpu_ctx of
 * solver/cpu/cpu_internal.h array for array, so that every kernel is the
 * CPU phase of the same name executed per frame on the device.
 *
 * Invariants: every per-frame array has nf rows; per-clip arrays nc rows;
 * the arena grows to the largest batch seen and is never sized by a
 * capacity constant. Kernels gate each frame on a per-clip flag (sel or
 * cg_on), so a clip that is not selected keeps its vectors bit for bit. */
#ifndef RT_CUDA_STATE_CUH
#define RT_CUDA_STATE_CUH

#include "frame_dev.cuh"
#include "common.cuh"
#include "reduce.cuh"
#include "warp.cuh"

struct cpu_pool;

struct cuda_lm {
    int device, n_sm;
    /* the backend's switches (struct solver_backend_config), set by every
     * cuda_lm_solve() from its context's configuration */
    int profile, unrolled_cg, cg_up;
    /* sizes of the current batch */
    int nf, nc, n, cols, nl;
    /* the batch on the device: bd's pointers are device pointers, bd.tree
     * points at tree_d (device) */
    struct solver_batch bd;
    struct rt_tree *tree_d;
    struct cuda_buf in;    /* tree, targets, weights */
    struct cuda_buf tabs;  /* the warp executors' tables (tb points into it) */
    struct warp_tabs tb;
    struct cuda_buf arena; /* everything below */
    /* per frame */
    int *clip_of;
    float *x, *xt, *dq;
    float *B, *F; /* packed lower triangles, CUDA_PK_STRIDE(n) floats per frame (warp.cuh) */
    float *g, *lamd, *d, *r, *z, *p, *q;
    unsigned long long *frozen;
    unsigned long long *vact; /* velocity-limit masks at the linearization point (frame_vlim_mask) */
    float *mu, *part, *part_t, *pred_f;
    /* per clip */
    int *off; /* [nc + 1] frame offsets */
    int *sel, *cg_on, *cg_it;
    float *lambda, *pred, *gg, *rz, *alpha, *beta;
    float *cost, *gmax, *sum_pred, *cost_t, *dd, *xx;
    /* reduction plans: entries of width n, 1 and cols per frame */
    struct cuda_reduce_plan plan_n, plan_1, plan_cols;
    /* the PCG of one LM step: the init phase as one graph, the iterations
     * as a second graph holding a while node (or unrolled; cg.cu) */
    cudaGraphExec_t cg_exec, cg_init_exec;
    int cg_while; /* 1: cg_exec is the while-node graph */
    int cg_iters_built;
    /* timing of the last solve: PCG graphs (event-timed), whole solve */
    cudaEvent_t ev0, ev1;
    double pcg_ms, solve_ms;
    int pcg_graphs;
    /* host staging (pinned) for per-clip scalars */
    void *h_pin;
    size_t h_pin_cap;
    /* pinned double buffer for the large transfers (lm.cu: stage_up,
     * stage_down), allocated on first use, and its two events */
    char *stage;
    cudaEvent_t stage_ev[2];
    struct cpu_pool *copy_pool; /* threads of the host side of those copies (or NULL) */
};

/* Threads per block of the per-frame kernels. */
#define CUDA_FRAME_THREADS 128

#endif
