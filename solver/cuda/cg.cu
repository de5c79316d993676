/* cg.cu -- the PCG and prediction kernels (see cg.cuh).
 *
 * Mapping: the block product and the stencil run one thread per (frame,
 * coordinate): output c sums B[j][c] x_j over j ascending from 0, then adds
 * lamd_c x_c, then the stencil -- frame_matvec's order exactly. The
 * Cholesky solves run one warp per frame, lane l owning coordinates l and
 * l + 32; step j's pivot is divided by its owner and broadcast, and every
 * z_i subtracts its products in frame_chol_solve's order. The vector
 * updates are elementwise. Clip scalars come from cuda_reduce_run in the
 * DESIGN.md order, with the clip's scalar logic of cpu_pcg() fused into the
 * last level. */
#include "cg.cuh"

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

#define WARP_FRAMES_PER_BLOCK 2

/* Stages a frame's n x n block in shared memory: independent coalesced
 * loads, so that the sequential loops below run at shared-memory latency
 * instead of one device-memory round trip per step. */
static __device__ __forceinline__ void warp_stage(float *dst, const float *src, int count, unsigned lane)
{
    for (int i = (int)lane; i < count; i += 32) dst[i] = src[i];
    __syncwarp();
}

/* q = (H + lamd) p for gated clips (lamd NULL: undamped); one warp per
 * frame, lane l computes outputs l and l + 32. */
static __global__ void matvec_kernel(struct cg_args a, const int *gate, const float *B, const float *lamd,
                                     const unsigned long long *frozen, const float *p, float *q)
{
    extern __shared__ float smem[];
    int w = threadIdx.x >> 5, f = blockIdx.x * WARP_FRAMES_PER_BLOCK + w;
    unsigned lane = threadIdx.x & 31u;
    if (f >= a.nf) return;
    int k = a.clip_of[f];
    if (!gate[k]) return; /* uniform per warp */
    const int n = a.n;
    float *Bs = smem + (size_t)w * (n * n + n), *xs = Bs + n * n;
    warp_stage(Bs, B + (size_t)f * n * n, n * n, lane);
    warp_stage(xs, p + (size_t)f * n, n, lane);
    int t = f - a.off[k], T = a.off[k + 1] - a.off[k];
    unsigned long long fz = frozen[f];
    for (int h = 0; h < 2; h++) {
        int c = (int)lane + 32 * h;
        if (c >= n) break;
        float y = 0.0f;
        for (int j = 0; j < n; j++) y = y + Bs[j * n + c] * xs[j];
        if ((fz >> c) & 1ull) {
            y = 0.0f;
        } else {
            float v = y;
            if (lamd) v = v + lamd[(size_t)f * n + c] * xs[c];
            v = v + frame_stencil_at(&a.bd, p + (size_t)a.off[k] * n, n, c, t, T);
            y = v;
        }
        q[(size_t)f * n + c] = y;
    }
}

/* z = F^-1 r for one frame on one warp (frame_chol_solve's order). */
static __device__ __forceinline__ void warp_chol_solve(const float *F, int n, unsigned lane, float *z0, float *z1)
{
    int i0 = (int)lane, i1 = (int)lane + 32;
    for (int j = 0; j < n; j++) {
        const float *row = F + (size_t)j * n;
        float mine = (j < 32 ? *z0 : *z1) / row[j];
        float zj = __shfl_sync(0xffffffffu, mine, j & 31);
        if (i0 == j) *z0 = zj;
        else if (i0 > j && i0 < n) *z0 = *z0 - row[i0] * zj;
        if (i1 == j) *z1 = zj;
        else if (i1 > j && i1 < n) *z1 = *z1 - row[i1] * zj;
    }
    for (int j = n - 1; j >= 0; j--) {
        const float *row = F + (size_t)j * n;
        float mine = (j < 32 ? *z0 : *z1) / row[j];
        float zj = __shfl_sync(0xffffffffu, mine, j & 31);
        if (i0 == j) *z0 = zj;
        else if (i0 < j) *z0 = *z0 - row[i0] * zj;
        if (i1 == j) *z1 = zj;
        else if (i1 < j) *z1 = *z1 - row[i1] * zj;
    }
}

/* r = -g, d = 0, z = M^-1 r, p = z (ph_cg_init). */
static __global__ void cg_init_kernel(struct cg_args a, const int *gate, const float *F, const float *g,
                                      float *r, float *d, float *z, float *p)
{
    extern __shared__ float smem[];
    int w = threadIdx.x >> 5, f = blockIdx.x * WARP_FRAMES_PER_BLOCK + w;
    unsigned lane = threadIdx.x & 31u;
    if (f >= a.nf || !gate[a.clip_of[f]]) return; /* uniform per warp */
    size_t o = (size_t)f * a.n;
    float *Fs = smem + (size_t)w * (a.n * a.n + a.n);
    warp_stage(Fs, F + o * a.n, a.n * a.n, lane);
    int i0 = (int)lane, i1 = (int)lane + 32;
    float z0 = 0.0f, z1 = 0.0f;
    if (i0 < a.n) { z0 = -g[o + i0]; r[o + i0] = z0; d[o + i0] = 0.0f; }
    if (i1 < a.n) { z1 = -g[o + i1]; r[o + i1] = z1; d[o + i1] = 0.0f; }
    warp_chol_solve(Fs, a.n, lane, &z0, &z1);
    if (i0 < a.n) { z[o + i0] = z0; p[o + i0] = z0; }
    if (i1 < a.n) { z[o + i1] = z1; p[o + i1] = z1; }
}

/* d += alpha p, r -= alpha q, z = M^-1 r (ph_cg_update). */
static __global__ void cg_update_kernel(struct cg_args a, const int *gate, const float *alpha, const float *F,
                                        const float *p, const float *q, float *d, float *r, float *z)
{
    extern __shared__ float smem[];
    int w = threadIdx.x >> 5, f = blockIdx.x * WARP_FRAMES_PER_BLOCK + w;
    unsigned lane = threadIdx.x & 31u;
    if (f >= a.nf) return;
    int k = a.clip_of[f];
    if (!gate[k]) return;
    float al = alpha[k];
    size_t o = (size_t)f * a.n;
    float *Fs = smem + (size_t)w * (a.n * a.n + a.n);
    warp_stage(Fs, F + o * a.n, a.n * a.n, lane);
    int i0 = (int)lane, i1 = (int)lane + 32;
    float z0 = 0.0f, z1 = 0.0f;
    if (i0 < a.n) {
        d[o + i0] = d[o + i0] + al * p[o + i0];
        z0 = r[o + i0] - al * q[o + i0];
        r[o + i0] = z0;
    }
    if (i1 < a.n) {
        d[o + i1] = d[o + i1] + al * p[o + i1];
        z1 = r[o + i1] - al * q[o + i1];
        r[o + i1] = z1;
    }
    warp_chol_solve(Fs, a.n, lane, &z0, &z1);
    if (i0 < a.n) z[o + i0] = z0;
    if (i1 < a.n) z[o + i1] = z1;
}

/* p = z + beta p (ph_cg_p). */
static __global__ void cg_p_kernel(struct cg_args a, const int *gate, const float *beta, const float *z, float *p)
{
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= (size_t)a.nf * a.n) return;
    int k = a.clip_of[gid / a.n];
    if (!gate[k]) return;
    p[gid] = z[gid] + beta[k] * p[gid];
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

/* Dynamic shared memory of the warp-per-frame kernels: a block and a
 * vector per warp (n <= 64: at most 33 KB for two warps). */
static size_t warp_smem(const struct cuda_lm *L)
{
    return (size_t)WARP_FRAMES_PER_BLOCK * ((size_t)L->n * L->n + L->n) * sizeof(float);
}

static enum rt_status pcg_enqueue(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct cg_args a = cg_args_of(L);
    size_t ne = (size_t)L->nf * L->n;
    unsigned ge = cuda_blocks(ne, 256), gw = cuda_blocks((size_t)L->nf, WARP_FRAMES_PER_BLOCK);
    size_t sm = warp_smem(L);
    enum rt_status st;
    cg_init_kernel<<<gw, 32 * WARP_FRAMES_PER_BLOCK, sm, s>>>(a, L->sel, L->F, L->g, L->r, L->d, L->z, L->p);
    CUDA_TRY_LAUNCH(err);
    {
        cuda_reduce_src<2> src = {{L->g, L->r}, {L->g, L->z}};
        cuda_reduce_dst<2> dst = {{NULL, NULL}};
        fin_init fin = {L->sel, L->cg_on, L->cg_it, L->gg, L->rz};
        if ((st = cuda_reduce_run<2>(&L->plan_n, src, dst, fin, s, err)) != RT_OK) return st;
    }
    for (int it = 0; it < L->bd.opt.max_cg_iters; it++) {
        matvec_kernel<<<gw, 32 * WARP_FRAMES_PER_BLOCK, sm, s>>>(a, L->cg_on, L->B, L->lamd, L->frozen, L->p, L->q);
        CUDA_TRY_LAUNCH(err);
        {
            cuda_reduce_src<1> src = {{L->p}, {L->q}};
            cuda_reduce_dst<1> dst = {{NULL}};
            fin_alpha fin = {L->cg_on, L->rz, L->alpha};
            if ((st = cuda_reduce_run<1>(&L->plan_n, src, dst, fin, s, err)) != RT_OK) return st;
        }
        cg_update_kernel<<<gw, 32 * WARP_FRAMES_PER_BLOCK, sm, s>>>(a, L->cg_on, L->alpha, L->F, L->p, L->q, L->d,
                                                                    L->r, L->z);
        CUDA_TRY_LAUNCH(err);
        {
            cuda_reduce_src<2> src = {{L->r, L->r}, {L->r, L->z}};
            cuda_reduce_dst<2> dst = {{NULL, NULL}};
            fin_beta fin = {L->cg_on, L->cg_it, L->gg, L->rz, L->beta, L->bd.opt.cg_tol, L->bd.opt.max_cg_iters};
            if ((st = cuda_reduce_run<2>(&L->plan_n, src, dst, fin, s, err)) != RT_OK) return st;
        }
        cg_p_kernel<<<ge, 256, 0, s>>>(a, L->cg_on, L->beta, L->z, L->p);
        CUDA_TRY_LAUNCH(err);
    }
    return RT_OK;
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
    L->cg_exec = NULL;
}

enum rt_status cuda_pcg(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    if (!L->cg_exec) {
        cudaGraph_t g = NULL;
        CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), err);
        enum rt_status st = pcg_enqueue(L, s, err);
        cudaError_t e = cudaStreamEndCapture(s, &g);
        if (st != RT_OK) { if (g) cudaGraphDestroy(g); return st; }
        CUDA_TRY(e, err);
        e = cudaGraphInstantiate(&L->cg_exec, g, 0);
        cudaGraphDestroy(g);
        CUDA_TRY(e, err);
    }
    if (!L->ev0) {
        CUDA_TRY(cudaEventCreate(&L->ev0), err);
        CUDA_TRY(cudaEventCreate(&L->ev1), err);
    }
    CUDA_TRY(cudaEventRecord(L->ev0, s), err);
    CUDA_TRY(cudaGraphLaunch(L->cg_exec, s), err);
    CUDA_TRY(cudaEventRecord(L->ev1, s), err);
    return RT_OK;
}

enum rt_status cuda_predict(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct cg_args a = cg_args_of(L);
    matvec_kernel<<<cuda_blocks((size_t)L->nf, WARP_FRAMES_PER_BLOCK), 32 * WARP_FRAMES_PER_BLOCK, warp_smem(L), s>>>(
        a, L->sel, L->B, NULL, L->frozen, L->d, L->q);
    CUDA_TRY_LAUNCH(err);
    predict_kernel<<<cuda_blocks((size_t)L->nf, CUDA_FRAME_THREADS), CUDA_FRAME_THREADS, 0, s>>>(
        a, L->cols, L->sel, L->g, L->d, L->q, L->x, L->xt, L->pred_f);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}
