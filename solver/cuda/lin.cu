/* lin.cu -- per-frame kernels of the CUDA backend (see lin.cuh). Each
 * kernel is the body of the CPU phase of the same name (solver/cpu/
 * cpu_cg.c, cpu_lm.c) for one frame, so that every float operation happens
 * in the same order on both backends. The heavy phases (linearization,
 * costs, preconditioner, initialization solves, repair rounds) run one warp
 * per frame with the frame's links, block, factor and vectors in shared
 * memory (warp.cuh: the lanes run frame.h's independent outputs side by
 * side); the light ones one thread per frame. */
#include "lin.cuh"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_LOOP(L) \
    for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < (L).nf; f += gridDim.x * blockDim.x)

struct lin_args { /* by value into every kernel */
    struct solver_batch bd;
    struct warp_tabs tb;
    int nf, n, cols, pks;
    size_t ws_floats; /* a warp's workspace, before its rows' region (warp_rows_floats) */
    const int *clip_of, *off;
};

static struct lin_args lin_args_of(const struct cuda_lm *L)
{
    struct lin_args a;
    a.bd = L->bd;
    a.tb = L->tb;
    a.nf = L->nf;
    a.n = L->n;
    a.cols = L->cols;
    a.pks = (int)CUDA_PK_STRIDE(L->n);
    a.ws_floats = warp_ws_floats(L->nl, L->n, L->cols, L->bd.n_targets);
    a.clip_of = L->clip_of;
    a.off = L->off;
    return a;
}

static unsigned frame_grid(const struct cuda_lm *L)
{
    return cuda_blocks((size_t)L->nf, CUDA_FRAME_THREADS);
}

/* Warp-per-frame kernels: LIN_WARPS frames per block, one shared-memory
 * workspace (warp.cuh) per warp. */
#define LIN_WARPS 4
/* Blocks a SM that the register budget is cut for. lin, cost, precond: 7
 * (at most 72 registers, none spilled; 28 warps a SM for G1, as many as
 * its shared memory holds with F over the link records). init, repair: 5
 * (96 registers): their iterations are bound by the instructions they
 * issue, and at 6 or 7 (80 or 72 registers, more spills) they ran 5-7%
 * slower for all the warps they gained (bench/RESULTS.md). */
#define LIN_MIN_BLOCKS 7
#define INIT_MIN_BLOCKS 5
static unsigned warp_grid(const struct cuda_lm *L) { return cuda_blocks((size_t)L->nf, LIN_WARPS); }
extern __shared__ float4 smem4[];

/* How each kernel's warps keep the rows of B (warp_rows_floats): cost and
 * precond build none; init and repair every target's columns at once
 * (2: their iterations, bound by what they issue, ran 17% faster than one
 * target at a time), lin one target at a time (1: its single eval gains
 * more from the 28 warps a SM that the smaller workspace leaves it than
 * from the store: 15.1-15.3 against 17.0-17.1 ms at 20; bench/RESULTS.md). */
#define JAC_LIN 1
#define JAC_INIT 2

/* A block's shared memory: LIN_WARPS workspaces with their rows' region. */
static size_t warp_smem_bytes(const struct cuda_lm *L, int jac)
{
    size_t w = warp_ws_floats(L->nl, L->n, L->cols, L->bd.n_targets) + warp_rows_floats(L->n, L->tb.n_slots, jac);
    return (size_t)LIN_WARPS * w * sizeof(float);
}

static __device__ __forceinline__ struct warp_ws warp_ws_of(const struct lin_args &a, int jac)
{
    size_t stride = a.ws_floats + warp_rows_floats(a.n, a.tb.n_slots, jac);
    float *base = (float *)smem4 + (size_t)(threadIdx.x >> 5) * stride;
    struct warp_ws w = warp_ws_at(base, a.bd.tree->n_links, a.n, a.cols);
    warp_rows_at(&w, base + a.ws_floats, a.n, a.tb.n_slots, jac);
    return w;
}

#define WARP_FRAME_J(a, jac)                                                       \
    const unsigned lane = threadIdx.x & 31u;                                       \
    const int f = (int)(blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5));      \
    const struct warp_ws ws = warp_ws_of(a, jac);                                  \
    if (f >= (a).nf) return; /* uniform per warp */
#define WARP_FRAME(a) WARP_FRAME_J(a, 0)

static __global__ void diff_kernel(struct lin_args a, const float *state, float *dq, const int *gate)
{
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        int T = a.off[k + 1] - a.off[k];
        if (!gate[k] || f - a.off[k] >= T - 1) continue;
        frame_diff(a.bd.tree, state + (size_t)f * a.cols, state + (size_t)(f + 1) * a.cols, dq + (size_t)f * a.n);
    }
}

/* ph_lin: frame_eval with the block, frame_freeze; B (packed), g and the
 * velocity-limit masks out. */
static __global__ void __launch_bounds__(LIN_WARPS * 32, LIN_MIN_BLOCKS)
lin_kernel(struct lin_args a, const float *state, const float *dq, const int *gate, float *B, float *g, float *part,
           unsigned long long *frozen, unsigned long long *vact)
{
    WARP_FRAME_J(a, JAC_LIN)
    int k = a.clip_of[f];
    if (!gate[k]) return;
    int t = f - a.off[k], T = a.off[k + 1] - a.off[k];
    const float *x = state + (size_t)f * a.cols;
    float c = warp_eval(&a.bd, a.tb, f, x, dq + (size_t)a.off[k] * a.n, t, T, ws, ws.B, ws.g, lane);
    unsigned long long fz = warp_freeze(a.bd.tree, x, ws.B, ws.g, lane);
    warp_copy4(B + (size_t)f * a.pks, ws.B, (int)warp_r4((size_t)a.n * (a.n + 1) / 2), lane);
    warp_copy(g + (size_t)f * a.n, ws.g, a.n, lane);
    if (lane == 0) {
        part[f] = c;
        frozen[f] = fz;
        if (a.bd.v_limit) vact[f] = frame_vlim_mask(&a.bd, dq + (size_t)a.off[k] * a.n, a.n, t, T);
    }
}

/* ph_cost: frame_eval without the block. */
static __global__ void __launch_bounds__(LIN_WARPS * 32, LIN_MIN_BLOCKS)
cost_kernel(struct lin_args a, const float *state, const float *dq, const int *gate, float *out)
{
    WARP_FRAME(a)
    int k = a.clip_of[f];
    if (!gate[k]) return;
    int t = f - a.off[k], T = a.off[k + 1] - a.off[k];
    float c = warp_eval(&a.bd, a.tb, f, state + (size_t)f * a.cols, dq + (size_t)a.off[k] * a.n, t, T, ws, NULL,
                        NULL, lane);
    if (lane == 0) out[f] = c;
}

/* ph_precond: lamd and the packed factor F of the frame's M. */
static __global__ void __launch_bounds__(LIN_WARPS * 32, LIN_MIN_BLOCKS)
precond_kernel(struct lin_args a, const int *gate, const float *B, const unsigned long long *frozen,
               const unsigned long long *vact, const float *lambda, const float *mu, float *lamd, float *F)
{
    WARP_FRAME(a)
    int k = a.clip_of[f];
    if (!gate[k]) return;
    int pk4 = (int)warp_r4((size_t)a.n * (a.n + 1) / 2);
    warp_copy4(ws.B, B + (size_t)f * a.pks, pk4, lane);
    __syncwarp();
    float lam = lambda[k] * mu[f];
    warp_precond(&a.bd, ws.B, frozen[f], lam, f - a.off[k], a.off[k + 1] - a.off[k], 1,
                 a.bd.v_limit ? vact + a.off[k] : NULL, ws.lamd, ws.F, ws.dM, lane);
    warp_copy4(F + (size_t)f * a.pks, ws.F, pk4, lane);
    warp_copy(lamd + (size_t)f * a.n, ws.lamd, a.n, lane);
}

/* ph_init: frame_init_solve, then the frame's cost (warp_init_solve
 * returns it: the same floats as frame_eval on the final state). */
static __global__ void __launch_bounds__(LIN_WARPS * 32, INIT_MIN_BLOCKS)
init_kernel(struct lin_args a, float *x, float *part, int iters, float lam0)
{
    WARP_FRAME_J(a, JAC_INIT)
    float *xf = x + (size_t)f * a.cols;
    warp_copy(ws.x, xf, a.cols, lane);
    __syncwarp();
    float c;
    warp_init_solve(&a.bd, a.tb, f, ws.x, iters, lam0, ws, lane, &c);
    warp_copy(xf, ws.x, a.cols, lane);
    if (lane == 0) part[f] = c;
}

/* One repair round (solver/cpu/cpu_lm.c ph_repair): x, part -> xt, part_t;
 * *changed = 1 when some frame's cost changed (a plain store of one value,
 * the same whichever thread writes it). */
static __global__ void __launch_bounds__(LIN_WARPS * 32, INIT_MIN_BLOCKS)
repair_kernel(struct lin_args a, const float *x, const float *part, float *xt, float *part_t, int iters, float lam0,
              int *changed)
{
    WARP_FRAME_J(a, JAC_INIT)
    size_t cols = (size_t)a.cols;
    int k = a.clip_of[f], off = a.off[k], T = a.off[k + 1] - off;
    float best = part[f];
    int from = -1; /* the neighbour whose restart won, or -1 */
    for (int side = 0; side < 2; side++) {
        long nb = side == 0 ? (long)f - 1 : (long)f + 1;
        if (nb < off || nb >= off + T) continue;
        if (!lm_rule_repair_wants(part[f], part[nb])) continue;
        warp_copy(ws.tmp, x + (size_t)nb * cols, a.cols, lane);
        __syncwarp();
        float ct;
        warp_init_solve(&a.bd, a.tb, f, ws.tmp, iters, lam0, ws, lane, &ct);
        if (ct < best) {
            best = ct;
            from = side;
            warp_copy(xt + (size_t)f * cols, ws.tmp, a.cols, lane);
        }
        __syncwarp();
    }
    if (from < 0) warp_copy(xt + (size_t)f * cols, x + (size_t)f * cols, a.cols, lane);
    if (lane == 0) {
        part_t[f] = best;
        if (part_t[f] != part[f]) *changed = 1;
    }
}

static __global__ void accept_kernel(struct lin_args a, const int *sel, const float *pred, int per_frame,
                                     const float *pred_f, float *part, const float *part_t, float *mu,
                                     float *x, const float *xt)
{
    FRAME_LOOP(a) {
        int k = a.clip_of[f];
        if (!sel[k]) continue;
        if (per_frame)
            mu[f] = lm_rule_mu(mu[f], part[f], part_t[f], pred_f[f], pred[k], (float)(a.off[k + 1] - a.off[k]));
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

/* ---- tables ---- */

/* Host copies of warp_eval_targets_jtj's tables (warp_tabs), laid out as
 * on the device in one buffer (offsets o_*); n_slots 0 where the store
 * would not fit a block's shared memory or the slots' 12-bit and the
 * targets' 8-bit fields, and the kernels take the targets one at a time. */
struct jtj_tabs {
    int n_slots, merges;
    char *buf;
    size_t bytes, o_sloff, o_slk, o_slcode, o_slorder, o_gcoff, o_gcslot, o_beoff, o_beat, o_bioff, o_bi;
};

static void jtj_tabs_free(struct jtj_tabs *t) { free(t->buf); t->buf = NULL; }

static size_t jtj_at(size_t *o, size_t bytes)
{
    size_t at = (*o + 15) & ~(size_t)15;
    *o = at + bytes;
    return at;
}

static enum rt_status jtj_tabs_build(struct cuda_lm *L, const struct solver_batch *b, const signed char *tgnc,
                                     const signed char *tgcols, const int *choff, const signed char *chslot,
                                     const short *chlink, const signed char *chfirst, struct jtj_tabs *t,
                                     struct rt_err *err)
{
    const struct rt_tree *tr = b->tree;
    const int nt = b->n_targets, n = rt_tangent_dim(tr), npk = n * (n + 1) / 2;
    memset(t, 0, sizeof *t);
    int S = 0, items = 0;
    for (int k = 0; k < nt; k++) {
        S += tgnc[k];
        items += tgnc[k] * (tgnc[k] + 1) / 2;
    }
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, L->device) != cudaSuccess) optin = 0;
    size_t need = (size_t)LIN_WARPS * (warp_ws_floats(L->nl, n, L->cols, nt) + warp_rows_floats(n, S, 2)) * sizeof(float);
    if (S == 0 || S > 4095 || nt > 255 || need > (size_t)optin) return RT_OK;
    size_t o = 0;
    t->o_sloff = jtj_at(&o, ((size_t)nt + 1) * sizeof(int));
    t->o_slk = jtj_at(&o, (size_t)S);
    t->o_slcode = jtj_at(&o, (size_t)S * sizeof(short));
    t->o_slorder = jtj_at(&o, (size_t)S * sizeof(short));
    t->o_gcoff = jtj_at(&o, ((size_t)n + 1) * sizeof(int));
    t->o_gcslot = jtj_at(&o, (size_t)S * sizeof(short));
    t->o_beoff = jtj_at(&o, 33 * sizeof(int));
    t->o_beat = jtj_at(&o, (size_t)npk * sizeof(short));
    t->o_bioff = jtj_at(&o, ((size_t)npk + 1) * sizeof(int));
    t->o_bi = jtj_at(&o, (size_t)items * sizeof(unsigned));
    t->bytes = o;
    t->buf = (char *)calloc(1, o);
    int *cnt = (int *)calloc((size_t)npk + 1, sizeof(int)), *eoff = (int *)calloc((size_t)npk + 1, sizeof(int));
    unsigned *eit = (unsigned *)malloc((size_t)items * sizeof(unsigned));
    int *order = (int *)malloc((size_t)npk * sizeof(int)), *lane_of = (int *)malloc((size_t)npk * sizeof(int));
    if (!t->buf || !cnt || !eoff || !eit || !order || !lane_of) {
        free(cnt), free(eoff), free(eit), free(order), free(lane_of);
        jtj_tabs_free(t);
        return CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory");
    }
    int *sloff = (int *)(t->buf + t->o_sloff);
    unsigned char *slk = (unsigned char *)(t->buf + t->o_slk);
    short *slcode = (short *)(t->buf + t->o_slcode), *slorder = (short *)(t->buf + t->o_slorder);
    int *gcoff = (int *)(t->buf + t->o_gcoff);
    short *gcslot = (short *)(t->buf + t->o_gcslot);
    int *beoff = (int *)(t->buf + t->o_beoff), *bioff = (int *)(t->buf + t->o_bioff);
    short *beat = (short *)(t->buf + t->o_beat);
    unsigned *bi = (unsigned *)(t->buf + t->o_bi);
    /* the slots: root columns (frame_jac_root), then each chain element
     * that opens a slot (frame_jac_joint); a mimic joint adds into one */
    int s = 0;
    for (int k = 0; k < nt; k++) {
        sloff[k] = s;
        for (int c = 0; c < tgnc[k]; c++) { slk[s + c] = (unsigned char)k; slcode[s + c] = (short)(-1 - c); }
        for (int e = choff[k]; e < choff[k + 1]; e++) {
            if (chfirst[e]) slcode[s + chslot[e]] = chlink[e];
            else t->merges = 1;
        }
        s += tgnc[k];
    }
    sloff[nt] = s;
    int q = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < S; i++)
            if ((slcode[i] < 0) == (pass == 0)) slorder[q++] = (short)i;
    /* gradient entries: each column's slots, targets ascending */
    q = 0;
    for (int c = 0; c < n; c++) {
        gcoff[c] = q;
        for (int k = 0; k < nt; k++)
            for (int a = 0; a < tgnc[k]; a++)
                if (tgcols[(size_t)k * FRAME_MAX_DIM + a] == c) gcslot[q++] = (short)(sloff[k] + a);
    }
    gcoff[n] = q;
    /* block entries: each entry's slot pairs, targets ascending */
    for (int k = 0; k < nt; k++)
        for (int a = 0; a < tgnc[k]; a++)
            for (int c = 0; c <= a; c++) {
                cnt[pk_sym(tgcols[(size_t)k * FRAME_MAX_DIM + a], tgcols[(size_t)k * FRAME_MAX_DIM + c])]++;
            }
    for (int e = 0; e < npk; e++) eoff[e + 1] = eoff[e] + cnt[e];
    memset(cnt, 0, (size_t)npk * sizeof(int));
    for (int k = 0; k < nt; k++)
        for (int a = 0; a < tgnc[k]; a++)
            for (int c = 0; c <= a; c++) {
                int e = pk_sym(tgcols[(size_t)k * FRAME_MAX_DIM + a], tgcols[(size_t)k * FRAME_MAX_DIM + c]);
                eit[eoff[e] + cnt[e]++] = (unsigned)(sloff[k] + a) | (unsigned)(sloff[k] + c) << 12 | (unsigned)k << 24;
            }
    /* entries to lanes: the longest first, each to the least loaded lane */
    int ne = 0;
    for (int e = 0; e < npk; e++)
        if (cnt[e]) order[ne++] = e;
    for (int i = 1; i < ne; i++) { /* insertion sort by count, descending (stable) */
        int v = order[i], j = i;
        while (j > 0 && cnt[order[j - 1]] < cnt[v]) { order[j] = order[j - 1]; j--; }
        order[j] = v;
    }
    long load[32] = {0};
    for (int i = 0; i < ne; i++) {
        int best = 0;
        for (int l = 1; l < 32; l++)
            if (load[l] < load[best]) best = l;
        lane_of[order[i]] = best;
        load[best] += cnt[order[i]] + 2;
    }
    int m = 0, it = 0;
    for (int l = 0; l < 32; l++) {
        beoff[l] = m;
        for (int i = 0; i < ne; i++) {
            int e = order[i];
            if (lane_of[e] != l) continue;
            beat[m] = (short)e;
            bioff[m] = it;
            for (int j = eoff[e]; j < eoff[e + 1]; j++) bi[it++] = eit[j];
            m++;
        }
    }
    beoff[32] = m;
    bioff[m] = it;
    t->n_slots = S;
    free(cnt), free(eoff), free(eit), free(order), free(lane_of);
    return RT_OK;
}


/* Raises kernel fn's limit of dynamic shared memory on the current device
 * to at least `bytes`, never lowering it: the limit is the process's, and
 * contexts that solve side by side on one device (the CLI's two lanes) set
 * it from their own batches; one lowered by one solve would fail another's
 * launch. The limit only bounds a launch's request (a launch's occupancy
 * follows what it asks for). */
static enum rt_status smem_allow(const void *fn, int bytes, struct rt_err *err)
{
    enum { SEEN_MAX = 128 };
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static struct { const void *fn; int dev, bytes; } seen[SEEN_MAX];
    static int n_seen;
    int dev = 0, k = 0;
    cudaError_t e = cudaSuccess;
    CUDA_TRY(cudaGetDevice(&dev), err);
    pthread_mutex_lock(&mu);
    while (k < n_seen && (seen[k].fn != fn || seen[k].dev != dev)) k++;
    if (k == n_seen || seen[k].bytes < bytes) {
        e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e == cudaSuccess && k < SEEN_MAX) {
            seen[k].fn = fn;
            seen[k].dev = dev;
            seen[k].bytes = bytes;
            if (k == n_seen) n_seen++;
        }
    }
    pthread_mutex_unlock(&mu);
    CUDA_TRY(e, err);
    return RT_OK;
}

enum rt_status cuda_warp_tables_build(struct cuda_lm *L, const struct solver_batch *b, cudaStream_t s,
                                      struct rt_err *err)
{
    const struct rt_tree *tr = b->tree;
    const int nl = tr->n_links, nt = b->n_targets, ro = tr->floating_base ? 6 : 0;
    /* chain elements: at most the tree depth per target */
    int n_ch = 0;
    for (int k = 0; k < nt; k++)
        for (int i = b->target_link[k]; i > 0; i = tr->parent[i]) n_ch++;
    /* host staging, laid out as on the device */
    size_t o_order = 0, o_wave = o_order + (size_t)nl * sizeof(short);
    o_wave = (o_wave + 15) & ~(size_t)15;
    size_t o_choff = o_wave + ((size_t)nl + 1) * sizeof(int);
    o_choff = (o_choff + 15) & ~(size_t)15;
    size_t o_chlink = o_choff + ((size_t)nt + 1) * sizeof(int);
    o_chlink = (o_chlink + 15) & ~(size_t)15;
    size_t o_chslot = o_chlink + ((size_t)n_ch + 1) * sizeof(short);
    size_t o_chfirst = o_chslot + (size_t)n_ch + 1;
    size_t o_tgnc = o_chfirst + (size_t)n_ch + 1;
    size_t o_tgcols = o_tgnc + (size_t)nt + 1;
    size_t o_spair = o_tgcols + ((size_t)nt + 1) * FRAME_MAX_DIM;
    o_spair = (o_spair + 15) & ~(size_t)15;
    const int nsp = FRAME_MAX_DIM * (FRAME_MAX_DIM + 1) / 2;
    size_t bytes = o_spair + (size_t)nsp * sizeof(unsigned short);
    char *h = (char *)calloc(1, bytes);
    int *depth = (int *)calloc((size_t)nl, sizeof(int));
    if (!h || !depth) { free(h); free(depth); return CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory"); }
    short *order = (short *)(h + o_order);
    int *wave = (int *)(h + o_wave);
    int *choff = (int *)(h + o_choff);
    short *chlink = (short *)(h + o_chlink);
    signed char *chslot = (signed char *)(h + o_chslot), *chfirst = (signed char *)(h + o_chfirst);
    signed char *tgnc = (signed char *)(h + o_tgnc), *tgcols = (signed char *)(h + o_tgcols);
    /* FK levels: links 1.. grouped by depth (parents first within the order) */
    int maxd = 0, nw = 0, m = 0;
    for (int i = 1; i < nl; i++) {
        depth[i] = depth[tr->parent[i]] + 1;
        if (depth[i] > maxd) maxd = depth[i];
    }
    for (int d = 1; d <= maxd; d++) {
        wave[nw++] = m;
        for (int i = 1; i < nl; i++)
            if (depth[i] == d) order[m++] = (short)i;
    }
    wave[nw] = m;
    /* slot pairs (a, c), c <= a, a ascending (warp_eval's block entries) */
    {
        unsigned short *sp = (unsigned short *)(h + o_spair);
        int q = 0;
        for (int a = 0; a < FRAME_MAX_DIM; a++)
            for (int c = 0; c <= a; c++) sp[q++] = (unsigned short)(a | (c << 8));
    }
    /* per-target compact columns (frame_eval's list: base, then the chain) */
    m = 0;
    for (int k = 0; k < nt; k++) {
        signed char *cols = tgcols + (size_t)k * FRAME_MAX_DIM;
        int nc = 0;
        if (tr->floating_base)
            for (int c = 0; c < 6; c++) cols[nc++] = (signed char)c;
        choff[k] = m;
        for (int i = b->target_link[k]; i > 0; i = tr->parent[i]) {
            int ji = tr->joint_index[i], type = tr->joint_type[i];
            if (ji < 0 || type == RT_JOINT_FIXED) continue;
            int col = ro + ji, e = 0;
            while (e < nc && cols[e] != col) e++;
            chlink[m] = (short)i;
            chslot[m] = (signed char)e;
            chfirst[m] = e == nc;
            if (e == nc) cols[nc++] = (signed char)col;
            m++;
        }
        tgnc[k] = (signed char)nc;
    }
    choff[nt] = m;
    free(depth);
    /* the tables of warp_eval_targets_jtj, after the others */
    size_t o_j = (bytes + 15) & ~(size_t)15, jbytes = 0;
    struct jtj_tabs jt;
    enum rt_status st = jtj_tabs_build(L, b, tgnc, tgcols, choff, chslot, chlink, chfirst, &jt, err);
    if (st != RT_OK) { free(h); return st; }
    if (jt.n_slots) {
        jbytes = jt.bytes;
        char *h2 = (char *)realloc(h, o_j + jbytes);
        if (!h2) { free(h); jtj_tabs_free(&jt); return CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory"); }
        h = h2;
        memcpy(h + o_j, jt.buf, jbytes);
        bytes = o_j + jbytes;
    }
    jtj_tabs_free(&jt);
    st = cuda_buf_reserve(&L->tabs, bytes, err);
    if (st == RT_OK) {
        cudaError_t e = cudaMemcpyAsync(L->tabs.ptr, h, bytes, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        if (e != cudaSuccess) st = CUDA_ERR(err, RT_EBACKEND, "cuda", "%s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    }
    free(h);
    if (st != RT_OK) return st;
    char *d = (char *)L->tabs.ptr;
    L->tb.fk_order = (const short *)(d + o_order);
    L->tb.fk_wave = (const int *)(d + o_wave);
    L->tb.n_waves = nw;
    L->tb.ch_off = (const int *)(d + o_choff);
    L->tb.ch_link = (const short *)(d + o_chlink);
    L->tb.ch_slot = (const signed char *)(d + o_chslot);
    L->tb.ch_first = (const signed char *)(d + o_chfirst);
    L->tb.tg_nc = (const signed char *)(d + o_tgnc);
    L->tb.tg_cols = (const signed char *)(d + o_tgcols);
    L->tb.spair = (const unsigned short *)(d + o_spair);
    L->tb.n_slots = jt.n_slots;
    L->tb.merges = jt.merges;
    if (jt.n_slots) {
        char *dj = d + o_j;
        L->tb.sl_off = (const int *)(dj + jt.o_sloff);
        L->tb.sl_k = (const unsigned char *)(dj + jt.o_slk);
        L->tb.sl_code = (const short *)(dj + jt.o_slcode);
        L->tb.sl_order = (const short *)(dj + jt.o_slorder);
        L->tb.gc_off = (const int *)(dj + jt.o_gcoff);
        L->tb.gc_slot = (const short *)(dj + jt.o_gcslot);
        L->tb.be_off = (const int *)(dj + jt.o_beoff);
        L->tb.be_at = (const short *)(dj + jt.o_beat);
        L->tb.bi_off = (const int *)(dj + jt.o_bioff);
        L->tb.bi = (const unsigned *)(dj + jt.o_bi);
    }
    /* shared memory beyond the 48 KB default for large trees */
    int sm = (int)warp_smem_bytes(L, 0), sml = (int)warp_smem_bytes(L, JAC_LIN), smj = (int)warp_smem_bytes(L, JAC_INIT);
    if ((st = smem_allow((const void *)lin_kernel, sml, err)) != RT_OK ||
        (st = smem_allow((const void *)cost_kernel, sm, err)) != RT_OK ||
        (st = smem_allow((const void *)precond_kernel, sm, err)) != RT_OK ||
        (st = smem_allow((const void *)init_kernel, smj, err)) != RT_OK ||
        (st = smem_allow((const void *)repair_kernel, smj, err)) != RT_OK)
        return st;
    if (L->profile) { /* the warp-per-frame kernels' occupancy, with the profile's lines */
        int o[4] = {0, 0, 0, 0};
        (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o[0], lin_kernel, LIN_WARPS * 32, (size_t)sml);
        (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o[1], cost_kernel, LIN_WARPS * 32, (size_t)sm);
        (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o[2], precond_kernel, LIN_WARPS * 32, (size_t)sm);
        (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&o[3], init_kernel, LIN_WARPS * 32, (size_t)smj);
        fprintf(stderr, "cuda occupancy: shared memory a frame %d bytes (lin %d, init %d: the %d targets' %d Jacobian slots); "
                "warps a SM: lin %d cost %d precond %d init %d\n", sm / LIN_WARPS, sml / LIN_WARPS, smj / LIN_WARPS,
                L->bd.n_targets, jt.n_slots, o[0] * LIN_WARPS, o[1] * LIN_WARPS, o[2] * LIN_WARPS, o[3] * LIN_WARPS);
    }
    return RT_OK;
}

enum rt_status cuda_linearize(struct cuda_lm *L, const float *state, const int *gate, cudaStream_t s,
                              struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    diff_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, state, L->dq, gate);
    CUDA_TRY_LAUNCH(err);
    lin_kernel<<<warp_grid(L), LIN_WARPS * 32, warp_smem_bytes(L, JAC_LIN), s>>>(a, state, L->dq, gate, L->B, L->g, L->part,
                                                                         L->frozen, L->vact);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_costs(struct cuda_lm *L, const float *state, float *out, const int *gate,
                          cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    diff_kernel<<<frame_grid(L), CUDA_FRAME_THREADS, 0, s>>>(a, state, L->dq, gate);
    CUDA_TRY_LAUNCH(err);
    cost_kernel<<<warp_grid(L), LIN_WARPS * 32, warp_smem_bytes(L, 0), s>>>(a, state, L->dq, gate, out);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_precondition(struct cuda_lm *L, const int *gate, cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    precond_kernel<<<warp_grid(L), LIN_WARPS * 32, warp_smem_bytes(L, 0), s>>>(a, gate, L->B, L->frozen, L->vact, L->lambda,
                                                                             L->mu, L->lamd, L->F);
    CUDA_TRY_LAUNCH(err);
    return RT_OK;
}

enum rt_status cuda_init_solves(struct cuda_lm *L, cudaStream_t s, struct rt_err *err)
{
    struct lin_args a = lin_args_of(L);
    a.bd.w_collide = lm_rule_init_collide(a.bd.w_collide); /* as cpu_lm.c init_solve */
    init_kernel<<<warp_grid(L), LIN_WARPS * 32, warp_smem_bytes(L, JAC_INIT), s>>>(a, L->x, L->part, L->bd.opt.init_iters,
                                                                          L->bd.opt.init_lambda);
    CUDA_TRY_LAUNCH(err);
    int *d_changed = L->cg_it; /* free until the PCG */
    for (int round = 0; round < LM_RULE_INIT_REPAIR_ROUNDS; round++) {
        int changed = 0;
        CUDA_TRY(cudaMemsetAsync(d_changed, 0, sizeof(int), s), err);
        repair_kernel<<<warp_grid(L), LIN_WARPS * 32, warp_smem_bytes(L, JAC_INIT), s>>>(
            a, L->x, L->part, L->xt, L->part_t, L->bd.opt.init_iters, L->bd.opt.init_lambda, d_changed);
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
