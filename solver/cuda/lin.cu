/* lin.cu -- per-frame kernels of the CUDA backend (see lin.cuh). Each
 * kernel is the body of the CPU phase of the same name (solver/cpu/
 * cpu_cg.c, cpu_lm.c) for one frame, calling the same frame.h function,
 * so that every float operation happens in the same order on both
 * backends. Frame work grid-strides over a number of thread slots fixed by
 * the batch's frames (at most a few per SM thread); a slot owns one
 * scratch area (links for FK, one n x n block, the init solve's scratch). */
#include "lin.cuh"

#define FRAME_LOOP(L) \
    for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < (L).nf; f += gridDim.x * blockDim.x)

struct lin_args { /* by value into every kernel */
    struct solver_batch bd;
    int nf, n, cols;
    size_t slot_stride;
    const int *clip_of, *off;
};

static struct lin_args lin_args_of(const struct cuda_lm *L)
{
    struct lin_args a;
    a.bd = L->bd;
    a.nf = L->nf;
    a.n = L->n;
    a.cols = L->cols;
    a.slot_stride = L->slot_stride;
    a.clip_of = L->clip_of;
    a.off = L->off;
    return a;
}

static unsigned frame_grid(const struct cuda_lm *L)
{
    return cuda_blocks((size_t)L->n_slots, CUDA_FRAME_THREADS);
}

static __global__ void diff_kernel(struct lin_args a, const float *state, float *dq, const int *gate)
{
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        int T = a.off[k + 1] - a.off[k];
        if (!gate[k] || f - a.off[k] >= T - 1) continue;
        frame_diff(a.bd.tree, state + (size_t)f * a.cols, state + (size_t)(f + 1) * a.cols, dq + (size_t)f * a.n);
    }
}

static __global__ void lin_kernel(struct lin_args a, const float *state, const float *dq, const int *gate,
                                  float *scr, float *B, float *g, float *part, unsigned long long *frozen)
{
    float *lk = scr + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * a.slot_stride;
    size_t nn = (size_t)a.n * a.n;
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        if (!gate[k]) continue;
        int t = f - a.off[k], T = a.off[k + 1] - a.off[k];
        const float *x = state + (size_t)f * a.cols;
        part[f] = frame_eval(&a.bd, f, x, dq + (size_t)a.off[k] * a.n, t, T, lk, B + f * nn, g + (size_t)f * a.n);
        frozen[f] = frame_freeze(a.bd.tree, x, B + f * nn, g + (size_t)f * a.n);
    }
}

static __global__ void cost_kernel(struct lin_args a, const float *state, const float *dq, const int *gate,
                                   float *scr, float *out)
{
    float *lk = scr + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * a.slot_stride;
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        if (!gate[k]) continue;
        int t = f - a.off[k], T = a.off[k + 1] - a.off[k];
        out[f] = frame_eval(&a.bd, f, state + (size_t)f * a.cols, dq + (size_t)a.off[k] * a.n, t, T, lk, NULL, NULL);
    }
}

static __global__ void precond_kernel(struct lin_args a, const int *gate, float *scr, const float *B,
                                      const unsigned long long *frozen, const float *lambda, const float *mu,
                                      float *lamd, float *F)
{
    float *M = scr + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * a.slot_stride +
               (size_t)a.bd.tree->n_links * FRAME_LINK_STRIDE;
    size_t nn = (size_t)a.n * a.n;
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        if (!gate[k]) continue;
        float lam = lambda[k] * mu[f];
        frame_precond(&a.bd, B + f * nn, frozen[f], lam, f - a.off[k], a.off[k + 1] - a.off[k], 1,
                      lamd + (size_t)f * a.n, M, F + f * nn);
    }
}

static __global__ void init_kernel(struct lin_args a, float *x, float *part, float *scr, int iters, float lam0)
{
    float *s = scr + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * a.slot_stride;
    FRAME_LOOP(a) {
        float *xf = x + (size_t)f * a.cols;
        frame_init_solve(&a.bd, f, xf, iters, lam0, s);
        part[f] = frame_eval(&a.bd, f, xf, NULL, 0, 1, s, NULL, NULL);
    }
}

/* One repair round (solver/cpu/cpu_lm.c ph_repair): x, part -> xt, part_t;
 * *changed = 1 when some frame's cost changed (a plain store of one value,
 * the same whichever thread writes it). */
#define INIT_REPAIR_RATIO 2.0f
#define INIT_REPAIR_FLOOR 1e-7f
#define INIT_REPAIR_ROUNDS 8
static __global__ void repair_kernel(struct lin_args a, const float *x, const float *part, float *xt, float *part_t,
                                     float *scr, int iters, float lam0, int *changed)
{
    float *s = scr + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * a.slot_stride;
    float *tmp = s + a.slot_stride - (size_t)a.cols;
    size_t cols = (size_t)a.cols;
    FRAME_LOOP(a) {
        int k = a.clip_of[f], off = a.off[k], T = a.off[k + 1] - off;
        float best = part[f];
        for (size_t i = 0; i < cols; i++) xt[f * cols + i] = x[f * cols + i];
        for (int side = 0; side < 2; side++) {
            long nb = side == 0 ? (long)f - 1 : (long)f + 1;
            if (nb < off || nb >= off + T) continue;
            if (!(part[f] > INIT_REPAIR_RATIO * part[nb] + INIT_REPAIR_FLOOR)) continue;
            for (size_t i = 0; i < cols; i++) tmp[i] = x[(size_t)nb * cols + i];
            frame_init_solve(&a.bd, f, tmp, iters, lam0, s);
            float ct = frame_eval(&a.bd, f, tmp, NULL, 0, 1, s, NULL, NULL);
            if (ct < best) {
                best = ct;
                for (size_t i = 0; i < cols; i++) xt[f * cols + i] = tmp[i];
            }
        }
        part_t[f] = best;
        if (part_t[f] != part[f]) *changed = 1;
    }
}

#define MU_MAX 1e6f /* solver/cpu/cpu_lm.c */

static __global__ void accept_kernel(struct lin_args a, const int *sel, const float *pred, int per_frame,
                                     const float *pred_f, float *part, const float *part_t, float *mu,
                                     float *x, const float *xt)
{
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        if (!sel[k]) continue;
        if (per_frame) {
            float T = (float)(a.off[k + 1] - a.off[k]);
            float pf = pred_f[f], share = 0.01f * pred[k] / T;
            if (pf > 0.0f && pf > share) {
                float rho = (part[f] - part_t[f]) / pf;
                float m = mu[f];
                if (rho < 0.25f) m = m * 4.0f;
                else if (rho > 0.75f) m = m / 3.0f;
                mu[f] = rt_clampf(m, 1.0f, MU_MAX);
            }
        }
        if (sel[k] == 2) {
            for (int i = 0; i < a.cols; i++) x[(size_t)f * a.cols + i] = xt[(size_t)f * a.cols + i];
            part[f] = part_t[f];
        }
    }
}

/* One block per clip; max is exact whatever the order (NaN never wins, as
 * in the CPU's `if (a > m) m = a`). */
static __global__ void gmax_kernel(const float *g, const int *off, int n, const int *gate, float *out)
{
    __shared__ float sm[256];
    int k = blockIdx.x;
    if (!gate[k]) return;
    size_t b = (size_t)off[k] * n, e = (size_t)off[k + 1] * n;
    float m = 0.0f;
    for (size_t i = b + threadIdx.x; i < e; i += blockDim.x) {
        float v = fabsf(g[i]);
        if (v > m) m = v;
    }
    sm[threadIdx.x] = m;
    __syncthreads();
    for (int s = 128; s >= 1; s >>= 1) {
        if ((int)threadIdx.x < s && sm[threadIdx.x + s] > sm[threadIdx.x]) sm[threadIdx.x] = sm[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[k] = sm[0];
}

enum rt_status cuda_linearize(struct cuda_lm *L, const float *state, const int *gate, cudaStream_t s,
                              struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    diff_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, state, L->dq, gate);
    CUDA_TRY_LAUNCH(err);
    lin_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, state, L->dq, gate, L->scr, L->B, L->g, L->part,
                                                            L->frozen);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_costs(struct cuda_lm *L, const float *state, float *out, const int *gate,
                          cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    diff_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, state, L->dq, gate);
    CUDA_TRY_LAUNCH(err);
    cost_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, state, L->dq, gate, L->scr, out);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_precondition(struct cuda_lm *L, const int *gate, cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    precond_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, gate, L->scr, L->B, L->frozen, L->lambda,
                                                                L->mu, L->lamd, L->F);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_init_solves(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    init_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, L->x, L->part, L->scr, L->bd.opt.init_iters,
                                                             L->bd.opt.init_lambda);
    CUDA_TRY_LAUNCH(err);
    int *d_changed = L->cg_it; /* free until the PCG */
    for (int round = 0; round < INIT_REPAIR_ROUNDS; round++) {
        int changed = 0;
        CUDA_TRY(cudaMemsetAsync(d_changed, 0, sizeof(int), s), err);
        repair_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, L->x, L->part, L->xt, L->part_t, L->scr,
                                                                   L->bd.opt.init_iters, L->bd.opt.init_lambda,
                                                                   d_changed);
        CUDA_TRY_LAUNCH(err);
        CUDA_TRY(cudaMemcpyAsync(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost, s), err);
        CUDA_TRY(cudaStreamSynchronize(s), err);
        float *t = L->x; L->x = L->xt; L->xt = t;
        t = L->part; L->part = L->part_t; L->part_t = t;
        if (!changed) break;
    }
    return RT_OK;
}

enum rt_status cuda_accept(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    accept_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, L->sel, L->pred, L->bd.opt.per_frame_damping,
                                                               L->pred_f, L->part, L->part_t, L->mu, L->x, L->xt);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_grad_max(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    gmax_kernel<<<(unsigned)L->nc, 256, 0, s>>>(L->g, L->off, L->n, L->sel, L->gmax);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}
