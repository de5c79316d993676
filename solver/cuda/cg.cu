/* cg.cu -- the PCG and prediction kernels (see cg.cuh).
 *
 * Mapping: one warp per frame stages the frame's packed block or factor
 * (warp.cuh: lower triangle, CUDA_PK_STRIDE floats, 16-byte loads) in
 * shared memory. The block product runs lane c over output c: it sums
 * B_jc x_j over j ascending from 0, then adds lamd_c x_c, then the stencil
 * -- frame_matvec's order exactly. The Cholesky solves run lane l over
 * coordinates l and l + 32; step j's pivot is divided by its owner and
 * broadcast, and every z_i subtracts its products in frame_chol_solve's
 * order. The vector updates are elementwise. Clip scalars come from
 * cuda_reduce_run in the DESIGN.md order, with the clip's scalar logic of
 * cpu_pcg() fused into the last level.
 *
 * The graph: the init phase is one graph; the iterations are a second one
 * whose single node is a while loop (CUDA conditional node) around one CG
 * iteration, ended by a one-block kernel that keeps the loop going while
 * any clip's CG is still on. So a step costs the iterations its clips run,
 * not the budget. Where the driver refuses conditional nodes the iterations
 * are captured unrolled to the budget, as before (same bits: an iteration
 * with no clip on changes nothing). */
#include "cg.cuh"

#include <stdlib.h>
#include <string.h>

struct cg_args {
    struct solver_batch bd;
    int nf, n;
    const int *clip_of, *off;
};

static struct cg_args cg_args_of(const struct cuda_lm *L)
{
    struct cg_args a;
    a.bd = L->bd;
    a.nf = L->nf;
    a.n = L->n;
    a.clip_of = L->clip_of;
    a.off = L->off;
    return a;
}

#define WARP_FRAMES_PER_BLOCK 4

/* q = (H + lamd) p for gated clips (lamd NULL: undamped); one warp per
 * frame, lane l computes outputs l and l + 32 (warp_block_rows: frame_block_mul's order). */
static __global__ void __launch_bounds__(WARP_FRAMES_PER_BLOCK * 32)
matvec_kernel(struct cg_args a, const int *gate, const float *__restrict__ B, const float *lamd,
              const unsigned long long *frozen, const unsigned long long *vact, const float *p, float *q)
{
    extern __shared__ float4 smem4[];
    int w = threadIdx.x >> 5, f = blockIdx.x * WARP_FRAMES_PER_BLOCK + w;
    unsigned lane = threadIdx.x & 31u;
    if (f >= a.nf) return;
    int k = a.clip_of[f];
    if (!gate[k]) return; /* uniform per warp */
    const int n = a.n, pks = (int)CUDA_PK_STRIDE(n);
    float *Bs = (float *)smem4 + (size_t)w * (pks + 64), *xs = Bs + pks;
    warp_copy4(Bs, B + (size_t)f * pks, pks, lane);
    warp_copy(xs, p + (size_t)f * n, n, lane);
    __syncwarp();
    float yv[2];
    warp_block_rows(Bs, xs, n, lane, &yv[0], &yv[1]);
    int t = f - a.off[k], T = a.off[k + 1] - a.off[k];
    unsigned long long fz = frozen[f];
    for (int h = 0; h < 2; h++) {
        int c = (int)lane + 32 * h;
        if (c >= n) break;
        float y = yv[h];
        if ((fz >> c) & 1ull) {
            y = 0.0f;
        } else {
            float v = y;
            if (lamd) v = v + lamd[(size_t)f * n + c] * xs[c];
            v = v + frame_stencil_at(&a.bd, p + (size_t)a.off[k] * n, n, c, t, T);
            if (a.bd.v_limit) v = v + frame_vlim_stencil(&a.bd, vact + a.off[k], p + (size_t)a.off[k] * n, n, c, t, T);
            y = v;
        }
        q[(size_t)f * n + c] = y;
    }
}

/* r = -g, d = 0, z = M^-1 r, p = z (ph_cg_init). */
static __global__ void __launch_bounds__(WARP_FRAMES_PER_BLOCK * 32)
cg_init_kernel(struct cg_args a, const int *gate, const float *__restrict__ F, const float *g, float *r, float *d,
               float *z, float *p)
{
    extern __shared__ float4 smem4[];
    int w = threadIdx.x >> 5, f = blockIdx.x * WARP_FRAMES_PER_BLOCK + w;
    unsigned lane = threadIdx.x & 31u;
    if (f >= a.nf || !gate[a.clip_of[f]]) return; /* uniform per warp */
    size_t o = (size_t)f * a.n;
    const int pks = (int)CUDA_PK_STRIDE(a.n);
    float *Fs = (float *)smem4 + (size_t)w * (pks + 64);
    warp_copy4(Fs, F + (size_t)f * pks, pks, lane);
    __syncwarp();
    int i0 = (int)lane, i1 = (int)lane + 32;
    float z0 = 0.0f, z1 = 0.0f;
    if (i0 < a.n) { z0 = -g[o + i0]; r[o + i0] = z0; d[o + i0] = 0.0f; }
    if (i1 < a.n) { z1 = -g[o + i1]; r[o + i1] = z1; d[o + i1] = 0.0f; }
    warp_chol_solve_pk(Fs, a.n, lane, &z0, &z1);
    if (i0 < a.n) { z[o + i0] = z0; p[o + i0] = z0; }
    if (i1 < a.n) { z[o + i1] = z1; p[o + i1] = z1; }
}

/* d += alpha p, r -= alpha q, z = M^-1 r (ph_cg_update), a group of LPF
 * lanes per frame (group_chol_solve): 32 / LPF frames per warp. With
 * LPF = 16 a 35-coordinate frame costs the warp about half the
 * instructions of one frame per warp, whose rows 32-34 ride on three
 * lanes through every step. The frames' slots in shared memory (the packed
 * factor and LPF floats) sit LPF banks apart: the row starts c (c + 1) / 2
 * of LPF consecutive c are distinct modulo LPF, so the groups' reads of
 * one step hit 32 distinct banks; no more shared memory than that, since
 * it is what bounds the warps per SM. */
#define CGN_THREADS 64
#define CGN_SLOT(pks, lpf) ((pks) + (lpf))
template <int LPF, int NC>
static __global__ void __launch_bounds__(CGN_THREADS)
cg_update_n_kernel(struct cg_args a, const int *gate, const float *alpha, const float *__restrict__ F, const float *p,
                   const float *q, float *d, float *r, float *z)
{
    extern __shared__ float4 smem4[];
    const int n = a.n, pks = (int)CUDA_PK_STRIDE(n);
    const int fpb = CGN_THREADS / LPF, fpw = 32 / LPF; /* frames per block, per warp */
    unsigned hl = threadIdx.x & (unsigned)(LPF - 1);
    int slot = (int)(threadIdx.x / LPF); /* frame slot in the block */
    int f = blockIdx.x * fpb + slot;
    int wf0 = blockIdx.x * fpb + (slot / fpw) * fpw;
    if (wf0 >= a.nf) return; /* uniform per warp */
    int on = f < a.nf && gate[a.clip_of[f]];
    int fr = f < a.nf ? f : a.nf - 1; /* an off group reads a valid frame, writes nothing */
    float *Fs = (float *)smem4 + (size_t)slot * CGN_SLOT(pks, LPF);
    {
        const float4 *s4 = (const float4 *)(F + (size_t)fr * pks);
        float4 *d4 = (float4 *)Fs;
        for (int u = (int)hl; u < pks / 4; u += LPF) d4[u] = s4[u];
    }
    float al = alpha[a.clip_of[fr]];
    size_t o = (size_t)fr * n;
    float v[NC];
#pragma unroll
    for (int m = 0; m < NC; m++) {
        int i = (int)hl + LPF * m;
        v[m] = 0.0f;
        if (on && i < n) {
            d[o + i] = d[o + i] + al * p[o + i];
            v[m] = r[o + i] - al * q[o + i];
            r[o + i] = v[m];
        }
    }
    __syncwarp();
    group_chol_solve<LPF, NC>(Fs, n, hl, v);
    if (on) {
#pragma unroll
        for (int m = 0; m < NC; m++) {
            int i = (int)hl + LPF * m;
            if (i < n) z[o + i] = v[m];
        }
    }
}

/* p = z + beta p (ph_cg_p), four consecutive entries per thread with
 * 16-byte accesses (the arrays are 256-byte aligned); the frame of each
 * entry is looked up separately only where the four span two clips. */
#define CG_P_THREADS 256
static __device__ __forceinline__ int cg_p_frame(size_t i, unsigned n, int narrow)
{
    return narrow ? (int)((unsigned)i / n) : (int)(i / n);
}

static __global__ void cg_p_kernel(struct cg_args a, const int *gate, const float *beta, const float *z, float *p)
{
    size_t tot = (size_t)a.nf * a.n, i0 = ((size_t)blockIdx.x * CG_P_THREADS + threadIdx.x) * 4;
    if (i0 >= tot) return;
    unsigned n = (unsigned)a.n;
    int narrow = tot <= 0xffffffffu; /* 32-bit divisions where they suffice */
    if (i0 + 4 <= tot) {
        int ka = a.clip_of[cg_p_frame(i0, n, narrow)], kb = a.clip_of[cg_p_frame(i0 + 3, n, narrow)];
        if (ka == kb) {
            if (!gate[ka]) return;
            float bt = beta[ka];
            float4 zv = *(const float4 *)(z + i0), pv = *(const float4 *)(p + i0);
            pv.x = zv.x + bt * pv.x;
            pv.y = zv.y + bt * pv.y;
            pv.z = zv.z + bt * pv.z;
            pv.w = zv.w + bt * pv.w;
            *(float4 *)(p + i0) = pv;
            return;
        }
    }
    for (size_t i = i0; i < i0 + 4 && i < tot; i++) {
        int k = a.clip_of[cg_p_frame(i, n, narrow)];
        if (gate[k]) p[i] = z[i] + beta[k] * p[i];
    }
}

/* pred_f = -(g.d) - 0.5 (d.Hd), xt = x (+) d (ph_matvec, undamped). */
static __global__ void predict_kernel(struct cg_args a, int cols, const int *gate, const float *g, const float *d,
                                      const float *q, const float *x, float *xt, float *pred_f)
{
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= a.nf || !gate[a.clip_of[f]]) return;
    size_t o = (size_t)f * a.n;
    pred_f[f] = -frame_dot(g + o, d + o, a.n) - 0.5f * frame_dot(d + o, q + o, a.n);
    frame_retract(a.bd.tree, x + (size_t)f * cols, d + o, xt + (size_t)f * cols);
}

/* ---- per-clip scalar logic of cpu_pcg(), fused into the reductions ---- */

struct fin_init { /* gg = g.g, rz = r.z */
    const int *sel;
    int *cg_on, *cg_it;
    float *gg, *rz;
    __device__ void operator()(int c, const float *v) const
    {
        if (!sel[c]) { cg_on[c] = 0; return; }
        gg[c] = v[0];
        rz[c] = v[1];
        cg_it[c] = 0;
        cg_on[c] = v[0] > 0.0f;
    }
};

struct fin_alpha { /* pq = p.q */
    int *cg_on;
    const float *rz;
    float *alpha;
    __device__ void operator()(int c, const float *v) const
    {
        if (!cg_on[c]) return;
        float pq = v[0];
        if (!(pq > 0.0f)) { cg_on[c] = 0; return; } /* no curvature left */
        alpha[c] = rz[c] / pq;
    }
};

struct fin_beta { /* rr = r.r, rz = r.z */
    int *cg_on, *cg_it;
    const float *gg;
    float *rz, *beta;
    float cg_tol;
    int max_it;
    __device__ void operator()(int c, const float *v) const
    {
        if (!cg_on[c]) return;
        cg_it[c] = cg_it[c] + 1;
        float rr = v[0], rzn = v[1];
        float tol = cg_tol * sqrtf(gg[c]);
        if (sqrtf(rr) <= tol || cg_it[c] >= max_it || !(rzn > 0.0f)) { cg_on[c] = 0; return; }
        beta[c] = rzn / rz[c];
        rz[c] = rzn;
    }
};

/* Dynamic shared memory of the warp-per-frame kernels: a packed block and
 * a vector per warp (n <= 64: at most 35 KB for four warps). */
static size_t warp_smem(const struct cuda_lm *L)
{
    return (size_t)WARP_FRAMES_PER_BLOCK * (CUDA_PK_STRIDE(L->n) + 64) * sizeof(float);
}

/* Keeps the while loop of the CG graph going while any clip's CG is on
 * (one block; an OR over the clips' flags, no atomics). */
static __global__ void cg_cond_kernel(const int *cg_on, int nc, cudaGraphConditionalHandle h)
{
    int any = 0;
    for (int c = (int)threadIdx.x; c < nc; c += (int)blockDim.x) any |= cg_on[c];
    any = __syncthreads_or(any);
    if (threadIdx.x == 0) cudaGraphSetConditional(h, any ? 1u : 0u);
}

/* The init phase: r = -g, z = M^-1 r, p = z, gg, rz, cg_on per clip. */
static enum rt_status pcg_enqueue_init(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct cg_args a = cg_args_of(L);
    unsigned gw = cuda_blocks((size_t)L->nf, WARP_FRAMES_PER_BLOCK);
    cg_init_kernel<<<gw, 32 * WARP_FRAMES_PER_BLOCK, warp_smem(L), s>>>(a, L->sel, L->F, L->g, L->r, L->d, L->z,
                                                                        L->p);
    CUDA_TRY_LAUNCH(err);
    cuda_reduce_src<2> src = {{L->g, L->r}, {L->g, L->z}};
    cuda_reduce_dst<2> dst = {{NULL, NULL}};
    fin_init fin = {L->sel, L->cg_on, L->cg_it, L->gg, L->rz};
    return cuda_reduce_run<2>(&L->plan_n, src, dst, fin, s, err);
}

/* One CG iteration for the clips with cg_on (cpu_pcg's loop body). */
static enum rt_status pcg_enqueue_iter(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct cg_args a = cg_args_of(L);
    unsigned gw = cuda_blocks((size_t)L->nf, WARP_FRAMES_PER_BLOCK);
    size_t sm = warp_smem(L);
    enum rt_status st;
    /* the update runs 2 frames per warp where a frame has at most 48
     * coordinates, else 1 (the cuda_cg_up switch: 1, for comparison; the same
     * bits either way). On the H200 at 64 x 3945 G1 frames a CG iteration
     * took 950 us with 2 frames per warp, 1075 with 4 and 1057 with the
     * earlier hand-written one-frame-per-warp kernel (bench/RESULTS.md). */
    int lpf = L->n <= 48 && !L->cg_up ? 16 : 32;
    unsigned gn = cuda_blocks((size_t)L->nf, (unsigned)(CGN_THREADS / lpf));
    size_t smn = (size_t)(CGN_THREADS / lpf) * CGN_SLOT(CUDA_PK_STRIDE(L->n), (size_t)lpf) * sizeof(float);
    matvec_kernel<<<gw, 32 * WARP_FRAMES_PER_BLOCK, sm, s>>>(a, L->cg_on, L->B, L->lamd, L->frozen, L->vact, L->p, L->q);
    CUDA_TRY_LAUNCH(err);
    {
        cuda_reduce_src<1> src = {{L->p}, {L->q}};
        cuda_reduce_dst<1> dst = {{NULL}};
        fin_alpha fin = {L->cg_on, L->rz, L->alpha};
        if ((st = cuda_reduce_run<1>(&L->plan_n, src, dst, fin, s, err)) != RT_OK) return st;
    }
    if (lpf == 16)
        cg_update_n_kernel<16, 3><<<gn, CGN_THREADS, smn, s>>>(a, L->cg_on, L->alpha, L->F, L->p, L->q, L->d, L->r,
                                                               L->z);
    else
        cg_update_n_kernel<32, 2><<<gn, CGN_THREADS, smn, s>>>(a, L->cg_on, L->alpha, L->F, L->p, L->q, L->d, L->r,
                                                               L->z);
    CUDA_TRY_LAUNCH(err);
    {
        cuda_reduce_src<2> src = {{L->r, L->r}, {L->r, L->z}};
        cuda_reduce_dst<2> dst = {{NULL, NULL}};
        fin_beta fin = {L->cg_on, L->cg_it, L->gg, L->rz, L->beta, L->bd.opt.cg_tol, L->bd.opt.max_cg_iters};
        if ((st = cuda_reduce_run<2>(&L->plan_n, src, dst, fin, s, err)) != RT_OK) return st;
    }
    cg_p_kernel<<<cuda_blocks(((size_t)L->nf * L->n + 3) / 4, CG_P_THREADS), CG_P_THREADS, 0, s>>>(a, L->cg_on, L->beta,
                                                                                                  L->z, L->p);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

static enum rt_status capture(struct cuda_lm *L, cudaStream_t s, int what, cudaGraphExec_t *out, struct rt_err *err)
{
    cudaGraph_t g = NULL;
    enum rt_status st = RT_OK;
    CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), err);
    if (what == 0) st = pcg_enqueue_init(L, s, err);
    else
        for (int it = 0; it < L->bd.opt.max_cg_iters && st == RT_OK; it++) st = pcg_enqueue_iter(L, s, err);
    cudaError_t e = cudaStreamEndCapture(s, &g);
    if (st != RT_OK) { if (g) cudaGraphDestroy(g); return st; }
    CUDA_TRY(e, err);
    e = cudaGraphInstantiate(out, g, 0);
    cudaGraphDestroy(g);
    CUDA_TRY(e, err);
    return RT_OK;
}

/* The iterations as a while node: body = one iteration + cg_cond_kernel.
 * Returns RT_EBACKEND (and leaves nothing behind) where unsupported. */
static enum rt_status build_while(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    cudaGraph_t g = NULL, body = NULL;
    cudaGraphConditionalHandle h;
    cudaGraphNode_t node;
    enum rt_status st = RT_OK;
    /* zeroed storage: the type's union has no default constructor in C++ */
    alignas(cudaGraphNodeParams) unsigned char cp_mem[sizeof(cudaGraphNodeParams)];
    memset(cp_mem, 0, sizeof cp_mem);
    cudaGraphNodeParams &cp = *(cudaGraphNodeParams *)cp_mem;
    CUDA_TRY(cudaGraphCreate(&g, 0), err);
    CUDA_GOTO(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault), err, st, fail);
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    CUDA_GOTO(cudaGraphAddNode(&node, g, NULL, NULL, 0, &cp), err, st, fail);
    body = cp.conditional.phGraph_out[0];
    CUDA_GOTO(cudaStreamBeginCaptureToGraph(s, body, NULL, NULL, 0, cudaStreamCaptureModeThreadLocal), err, st, fail);
    st = pcg_enqueue_iter(L, s, err);
    if (st == RT_OK) {
        cg_cond_kernel<<<1, 256, 0, s>>>(L->cg_on, L->nc, h);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = CUDA_ERR(err, RT_EBACKEND, "cuda", "%s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    }
    {
        cudaGraph_t got = NULL;
        cudaError_t e = cudaStreamEndCapture(s, &got);
        if (st == RT_OK && e != cudaSuccess)
            st = CUDA_ERR(err, RT_EBACKEND, "cuda", "%s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    }
    if (st != RT_OK) goto fail;
    CUDA_GOTO(cudaGraphInstantiate(&L->cg_exec, g, 0), err, st, fail);
fail:
    cudaGraphDestroy(g);
    (void)cudaGetLastError();
    return st;
}

enum rt_status cuda_pcg_account(struct cuda_lm *L, struct rt_err *err)
{
    float ms = 0.0f;
    CUDA_TRY(cudaEventElapsedTime(&ms, L->ev0, L->ev1), err);
    L->pcg_ms += ms;
    L->pcg_graphs++;
    return RT_OK;
}

void cuda_pcg_reset(struct cuda_lm *L)
{
    if (L->cg_exec) (void)cudaGraphExecDestroy(L->cg_exec);
    if (L->cg_init_exec) (void)cudaGraphExecDestroy(L->cg_init_exec);
    L->cg_exec = NULL;
    L->cg_init_exec = NULL;
}

enum rt_status cuda_pcg(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    enum rt_status st;
    if (!L->cg_exec) {
        if ((st = capture(L, s, 0, &L->cg_init_exec, err)) != RT_OK) return st;
        L->cg_while = !L->unrolled_cg && build_while(L, s, NULL) == RT_OK;
        if (!L->cg_while && (st = capture(L, s, 1, &L->cg_exec, err)) != RT_OK) return st;
    }
    if (!L->ev0) {
        CUDA_TRY(cudaEventCreate(&L->ev0), err);
        CUDA_TRY(cudaEventCreate(&L->ev1), err);
    }
    CUDA_TRY(cudaEventRecord(L->ev0, s), err);
    CUDA_TRY(cudaGraphLaunch(L->cg_init_exec, s), err);
    CUDA_TRY(cudaGraphLaunch(L->cg_exec, s), err);
    CUDA_TRY(cudaEventRecord(L->ev1, s), err);
    return RT_OK;
}

enum rt_status cuda_predict(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct cg_args a = cg_args_of(L);
    matvec_kernel<<<cuda_blocks((size_t)L->nf, WARP_FRAMES_PER_BLOCK), 32 * WARP_FRAMES_PER_BLOCK, warp_smem(L), s>>>(
        a, L->sel, L->B, NULL, L->frozen, L->vact, L->d, L->q);
    CUDA_TRY_LAUNCH(err);
    predict_kernel<<<cuda_blocks((size_t)L->nf, CUDA_FRAME_THREADS), CUDA_FRAME_THREADS, 0, s>>>(
        a, L->cols, L->sel, L->g, L->d, L->q, L->x, L->xt, L->pred_f);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}
