/* lm.cu -- the host side of the CUDA backend's Levenberg-Marquardt (see
 * lm.cuh): batch upload, device arena, and the LM loop of
 * solver/cpu/cpu_lm.c's lm_run() line for line.
 *
 * Division of labour: every per-frame computation and the whole PCG run on
 * the device (lin.cu, cg.cu); every clip scalar is reduced on the device in
 * the DESIGN.md order (reduce.cuh); the per-clip LM decisions (acceptance,
 * lambda, stopping) run here on the host on those few floats, through the
 * functions of solver/lm_rule.h that the CPU backend calls too, so that
 * they are the same bits (this file is compiled with -ffp-contract=off
 * like the C code). One round trip
 * per LM phase (two per iteration), none inside the PCG. */
#include "lm.cuh"
#include "cg.cuh"
#include "lin.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../base/clock.h"
extern "C" {
#include "../cpu/cpu_internal.h" /* the thread pool, for the host copies */
}

struct host_clip { /* struct cpu_clip's LM fields */
    int off, T, active, sel, need_lin, lm_iters, cg_total, term;
    float lambda, nu, dec_prev, cost, cost_t, pred, start_cost, initial_cost, mark;
};

/* ---- device memory -------------------------------------------------- */

struct carver {
    char *base;
    size_t used;
};
static size_t carve_at(struct carver *c, size_t bytes)
{
    size_t at = (c->used + 255) & ~(size_t)255;
    c->used = at + bytes;
    return at;
}
static void *carve(struct carver *c, size_t bytes)
{
    size_t at = carve_at(c, bytes);
    return c->base ? c->base + at : NULL;
}

/* Lays the per-frame and per-clip arrays over the arena (base NULL: just
 * measures). */
static size_t lay_out(struct cuda_lm *L, char *base)
{
    struct carver c = {base, 0};
    size_t nf = (size_t)L->nf, n = (size_t)L->n, nc = (size_t)L->nc;
    L->clip_of = (int *)carve(&c, nf * sizeof(int));
    L->x = (float *)carve(&c, nf * L->cols * sizeof(float));
    L->xt = (float *)carve(&c, nf * L->cols * sizeof(float));
    L->dq = (float *)carve(&c, nf * n * sizeof(float));
    L->B = (float *)carve(&c, nf * CUDA_PK_STRIDE(n) * sizeof(float));
    L->F = (float *)carve(&c, nf * CUDA_PK_STRIDE(n) * sizeof(float));
    float **vec[7] = {&L->g, &L->lamd, &L->d, &L->r, &L->z, &L->p, &L->q};
    for (int k = 0; k < 7; k++) *vec[k] = (float *)carve(&c, nf * n * sizeof(float));
    L->frozen = (unsigned long long *)carve(&c, nf * sizeof(unsigned long long));
    L->vact = (unsigned long long *)carve(&c, nf * sizeof(unsigned long long));
    float **pf[4] = {&L->mu, &L->part, &L->part_t, &L->pred_f};
    for (int k = 0; k < 4; k++) *pf[k] = (float *)carve(&c, nf * sizeof(float));
    L->off = (int *)carve(&c, (nc + 1) * sizeof(int));
    int **pi[3] = {&L->sel, &L->cg_on, &L->cg_it};
    for (int k = 0; k < 3; k++) *pi[k] = (int *)carve(&c, nc * sizeof(int));
    float **pc[12] = {&L->lambda, &L->pred, &L->gg, &L->rz, &L->alpha, &L->beta,
                      &L->cost, &L->gmax, &L->sum_pred, &L->cost_t, &L->dd, &L->xx};
    for (int k = 0; k < 12; k++) *pc[k] = (float *)carve(&c, nc * sizeof(float));
    return c.used;
}

/* ---- large transfers through a pinned double buffer ---------------- */

/* A pageable cudaMemcpy moves about 5 GB/s here; through two pinned
 * halves the host copy of one chunk overlaps the DMA of the other. Below
 * STAGE_MIN bytes a plain copy is cheaper. */
#define STAGE_CHUNK ((size_t)8 << 20)
#define STAGE_MIN ((size_t)1 << 20)

/* The host side of a staged transfer (pageable <-> pinned) is a memcpy
 * that one core runs at a few GB/s (and that takes the page faults of a
 * fresh result array); STAGE_THREADS threads split each chunk in pieces. */
#define STAGE_THREADS 4
#define STAGE_PIECE ((size_t)256 << 10)

struct copy_job {
    char *dst;
    const char *src;
    size_t len;
};

static void copy_task(void *ctx, int tid, size_t begin, size_t end)
{
    const struct copy_job *j = (const struct copy_job *)ctx;
    size_t lo = begin * STAGE_PIECE, hi = end * STAGE_PIECE;
    (void)tid;
    if (hi > j->len) hi = j->len;
    if (lo < hi) memcpy(j->dst + lo, j->src + lo, hi - lo);
}

static void host_copy(struct cuda_lm *L, void *dst, const void *src, size_t len)
{
    if (!L->copy_pool) {
        memcpy(dst, src, len);
        return;
    }
    struct copy_job j = {(char *)dst, (const char *)src, len};
    cpu_pool_run(L->copy_pool, copy_task, &j, (len + STAGE_PIECE - 1) / STAGE_PIECE);
}

/* Bytes of the chunk that starts at off. */
static size_t stage_len(size_t bytes, size_t off) { return bytes - off < STAGE_CHUNK ? bytes - off : STAGE_CHUNK; }

static enum rt_status stage_ready(struct cuda_lm *L, struct rt_err *err)
{
    if (L->stage) return RT_OK;
    if (!L->copy_pool) {
        long nproc = sysconf(_SC_NPROCESSORS_ONLN);
        int th = nproc > 1 ? (int)(nproc < STAGE_THREADS ? nproc : STAGE_THREADS) : 1;
        if (th > 1 && cpu_pool_create(th, &L->copy_pool, NULL) != RT_OK) L->copy_pool = NULL;
    }
    if (!(L->stage = (char *)cuda_pinned_alloc(2 * STAGE_CHUNK))) /* callers fall back to plain copies */
        return CUDA_ERR(err, RT_EBACKEND, "cuda", "no page-locked memory for the staging halves");
    for (int h = 0; h < 2; h++) {
        cudaError_t e = cudaEventCreateWithFlags(&L->stage_ev[h], cudaEventDisableTiming);
        if (e != cudaSuccess) {
            for (int k = 0; k < h; k++) cudaEventDestroy(L->stage_ev[k]);
            cuda_pinned_free(L->stage);
            L->stage = NULL;
            (void)cudaGetLastError();
            CUDA_TRY(e, err);
        }
    }
    return RT_OK;
}

/* Whether the host array p is page-locked (solver_backend_host_alloc()):
 * then the device takes it by DMA, with no staging copy. */
static int host_pinned(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

/* dst (device) <- src (host), queued on s; returns when src may change,
 * but for a page-locked src, whose copy runs on s after the return (the
 * caller synchronizes s before src changes: upload_batch does). */
static enum rt_status stage_up(struct cuda_lm *L, void *dst, const void *src, size_t bytes, cudaStream_t s,
                               struct rt_err *err)
{
    if (bytes < STAGE_MIN || host_pinned(src) || stage_ready(L, NULL) != RT_OK) {
        CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), err);
        return RT_OK;
    }
    int used[2] = {0, 0};
    for (size_t off = 0, i = 0; off < bytes; off += STAGE_CHUNK, i++) {
        int h = (int)(i & 1);
        size_t len = stage_len(bytes, off);
        if (used[h]) CUDA_TRY(cudaEventSynchronize(L->stage_ev[h]), err);
        host_copy(L, L->stage + (size_t)h * STAGE_CHUNK, (const char *)src + off, len);
        CUDA_TRY(cudaMemcpyAsync((char *)dst + off, L->stage + (size_t)h * STAGE_CHUNK, len, cudaMemcpyHostToDevice, s),
                 err);
        CUDA_TRY(cudaEventRecord(L->stage_ev[h], s), err);
        used[h] = 1;
    }
    /* the halves are free again once their copies ran */
    CUDA_TRY(cudaEventSynchronize(L->stage_ev[0]), err);
    CUDA_TRY(cudaEventSynchronize(L->stage_ev[1]), err);
    return RT_OK;
}

/* dst (host) <- src (device) after the work queued on s; synchronous. */
static enum rt_status stage_down(struct cuda_lm *L, void *dst, const void *src, size_t bytes, cudaStream_t s,
                                 struct rt_err *err)
{
    if (bytes < STAGE_MIN || stage_ready(L, NULL) != RT_OK) {
        CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), err);
        CUDA_TRY(cudaStreamSynchronize(s), err);
        return RT_OK;
    }
    size_t nch = (bytes + STAGE_CHUNK - 1) / STAGE_CHUNK;
    for (size_t i = 0; i < nch && i < 2; i++) {
        size_t off = i * STAGE_CHUNK, len = stage_len(bytes, off);
        CUDA_TRY(cudaMemcpyAsync(L->stage + i * STAGE_CHUNK, (const char *)src + off, len, cudaMemcpyDeviceToHost, s),
                 err);
        CUDA_TRY(cudaEventRecord(L->stage_ev[i], s), err);
    }
    for (size_t i = 0; i < nch; i++) {
        int h = (int)(i & 1);
        size_t off = i * STAGE_CHUNK, len = stage_len(bytes, off);
        CUDA_TRY(cudaEventSynchronize(L->stage_ev[h]), err);
        host_copy(L, (char *)dst + off, L->stage + (size_t)h * STAGE_CHUNK, len);
        if (i + 2 < nch) {
            size_t o2 = (i + 2) * STAGE_CHUNK, l2 = stage_len(bytes, o2);
            CUDA_TRY(cudaMemcpyAsync(L->stage + (size_t)h * STAGE_CHUNK, (const char *)src + o2, l2,
                                     cudaMemcpyDeviceToHost, s),
                     err);
            CUDA_TRY(cudaEventRecord(L->stage_ev[h], s), err);
        }
    }
    return RT_OK;
}

/* Copies the batch's input arrays into L->in and points L->bd at them. */
static enum rt_status upload_batch(struct cuda_lm *L, const struct solver_batch *b, cudaStream_t s,
                                   struct rt_err *err)
{
    const struct rt_tree *t = b->tree;
    size_t nl = (size_t)t->n_links, nj = (size_t)t->n_joints, nt = (size_t)b->n_targets;
    size_t nft = (size_t)L->nf * nt, n = (size_t)L->n;
    struct up_item { const void *src; size_t bytes; const void **dst; };
    enum { NIT = 26 };
    const struct up_item it[NIT] = {
        {t->parent, nl * sizeof(int), (const void **)&L->bd.tree},
        {t->joint_type, nl * sizeof(int), NULL},
        {t->joint_index, nl * sizeof(int), NULL},
        {t->joint_mult, nl * sizeof(float), NULL},
        {t->joint_offset, nl * sizeof(float), NULL},
        {t->origin_pos, 3 * nl * sizeof(float), NULL},
        {t->origin_rot, 9 * nl * sizeof(float), NULL},
        {t->axis, 3 * nl * sizeof(float), NULL},
        {t->lower, nj * sizeof(float), NULL},
        {t->upper, nj * sizeof(float), NULL},
        {b->target_link, nt * sizeof(int), (const void **)&L->bd.target_link},
        {b->target_pos, 3 * nft * sizeof(float), (const void **)&L->bd.target_pos},
        {b->target_rot, 4 * nft * sizeof(float), (const void **)&L->bd.target_rot},
        {b->target_wpos, nft * sizeof(float), (const void **)&L->bd.target_wpos},
        {b->target_wrot, nft * sizeof(float), (const void **)&L->bd.target_wrot},
        {b->w_vel, n * sizeof(float), (const void **)&L->bd.w_vel},
        {b->w_acc, n * sizeof(float), (const void **)&L->bd.w_acc},
        {b->rest, nj * sizeof(float), (const void **)&L->bd.rest},
        {b->w_rest, nj * sizeof(float), (const void **)&L->bd.w_rest},
        {b->init, (size_t)L->nf * (size_t)L->cols * sizeof(float), (const void **)&L->bd.init},
        {b->capsule_link, (size_t)b->n_capsules * sizeof(int), (const void **)&L->bd.capsule_link},
        {b->capsule_seg, (size_t)b->n_capsules * 7 * sizeof(float), (const void **)&L->bd.capsule_seg},
        {b->pair, (size_t)b->n_pairs * 2 * sizeof(int), (const void **)&L->bd.pair},
        {b->ground, (size_t)b->n_ground * sizeof(int), (const void **)&L->bd.ground},
        {b->v_limit, n * sizeof(float), (const void **)&L->bd.v_limit},
        {b->planted, (size_t)L->nf * 2, (const void **)&L->bd.planted},
    };
    struct carver c = {NULL, 0};
    size_t at[NIT];
    size_t tree_at = carve_at(&c, sizeof(struct rt_tree));
    for (int i = 0; i < NIT; i++) at[i] = carve_at(&c, it[i].bytes ? it[i].bytes : 1);
    enum rt_status st = cuda_buf_reserve(&L->in, c.used, err);
    if (st != RT_OK) return st;
    char *base = (char *)L->in.ptr;
    void *dptr[NIT];
    for (int i = 0; i < NIT; i++) {
        dptr[i] = it[i].src ? base + at[i] : NULL;
        if (it[i].src && it[i].bytes) {
            enum rt_status us = stage_up(L, dptr[i], it[i].src, it[i].bytes, s, err);
            if (us != RT_OK) return us;
        }
    }
    struct rt_tree td = *t;
    td.parent = (const int *)dptr[0];
    td.joint_type = (const int *)dptr[1];
    td.joint_index = (const int *)dptr[2];
    td.joint_mult = (const float *)dptr[3];
    td.joint_offset = (const float *)dptr[4];
    td.origin_pos = (const float *)dptr[5];
    td.origin_rot = (const float *)dptr[6];
    td.axis = (const float *)dptr[7];
    td.lower = (const float *)dptr[8];
    td.upper = (const float *)dptr[9];
    L->tree_d = (struct rt_tree *)(base + tree_at);
    CUDA_TRY(cudaMemcpyAsync(L->tree_d, &td, sizeof td, cudaMemcpyHostToDevice, s), err);
    L->bd = *b;
    L->bd.tree = L->tree_d;
    L->bd.progress = NULL;
    L->bd.progress_user = NULL;
    for (int i = 10; i < NIT; i++) *it[i].dst = dptr[i];
    CUDA_TRY(cudaStreamSynchronize(s), err); /* the temporary `td` leaves scope */
    return RT_OK;
}

static enum rt_status prepare(struct cuda_lm *L, const struct solver_batch *b, cudaStream_t s, struct rt_err *err)
{
    const struct rt_tree *t = b->tree;
    L->nf = b->frame_off[b->n_clips];
    L->nc = b->n_clips;
    L->n = rt_tangent_dim(t);
    L->cols = rt_state_cols(t);
    L->nl = t->n_links;
    enum rt_status st;
    if ((st = cuda_buf_reserve(&L->arena, lay_out(L, NULL), err)) != RT_OK) return st;
    lay_out(L, (char *)L->arena.ptr);
    if ((st = upload_batch(L, b, s, err)) != RT_OK) return st;
    if ((st = cuda_warp_tables_build(L, b, s, err)) != RT_OK) return st;
    /* reduction plans: widths n, 1 and cols per frame */
    size_t *so = (size_t *)malloc(((size_t)L->nc + 1) * sizeof *so);
    int *clip_of = (int *)malloc((size_t)L->nf * sizeof *clip_of);
    if (!so || !clip_of) { free(so); free(clip_of); return CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory"); }
    int w[3] = {L->n, 1, L->cols};
    struct cuda_reduce_plan *pl[3] = {&L->plan_n, &L->plan_1, &L->plan_cols};
    for (int k = 0; k < 3 && st == RT_OK; k++) {
        for (int c = 0; c <= L->nc; c++) so[c] = (size_t)b->frame_off[c] * (size_t)w[k];
        st = cuda_reduce_plan_build(pl[k], so, L->nc, s, err);
    }
    free(so);
    for (int c = 0; c < L->nc && st == RT_OK; c++)
        for (int f = b->frame_off[c]; f < b->frame_off[c + 1]; f++) clip_of[f] = c;
    if (st == RT_OK) {
        cudaError_t e = cudaMemcpyAsync(L->clip_of, clip_of, (size_t)L->nf * sizeof(int), cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(L->off, b->frame_off, ((size_t)L->nc + 1) * sizeof(int), cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        if (e != cudaSuccess) st = CUDA_ERR(err, RT_EBACKEND, "cuda", "%s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e));
    }
    free(clip_of);
    cuda_pcg_reset(L); /* kernel arguments changed */
    /* pinned staging: 10 per-clip arrays of 4 bytes */
    size_t pin = (size_t)10 * L->nc * 4;
    if (st == RT_OK && pin > L->h_pin_cap) {
        cuda_pinned_free(L->h_pin); /* nothing queued reads it: the stream was synchronized above */
        L->h_pin_cap = 0;
        if (!(L->h_pin = cuda_pinned_alloc(pin)))
            return CUDA_ERR(err, RT_EBACKEND, "cuda", "no page-locked memory for %zu bytes of per-clip flags", pin);
        L->h_pin_cap = pin;
    }
    return st;
}

/* ---- start state: frame_start_state() of frame.h, as on the CPU ---------- */

/* bd's arrays are the device copies (b->init too, when given). */
static __global__ void start_kernel(struct solver_batch bd, int nf, int cols, float *x)
{
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < nf) frame_start_state(&bd, f, x + (size_t)f * cols);
}

/* ---- phase profile (config cuda_profile, RT_CUDA_PROFILE=1) --------- */

/* With the cuda_profile switch on each phase of a solve ends in a stream
 * synchronization and its wall time is added to its bucket; one line per
 * solve goes to stderr. Off (the default) nothing is synchronized. */
enum { PH_PREP, PH_START, PH_INIT, PH_LIN, PH_PRECOND, PH_PCG, PH_EVAL, PH_ACCEPT, PH_DOWN, PH_N };
static const char *const ph_name[PH_N] = {"prepare", "start", "init", "linearize", "precond",
                                          "pcg", "step_eval", "accept", "download"};
struct phase_prof {
    int on;
    double t, ms[PH_N];
};
static void prof_start(struct phase_prof *p, int on)
{
    memset(p, 0, sizeof *p);
    p->on = on;
    p->t = rt_now();
}
static void prof_mark(struct phase_prof *p, int ph, cudaStream_t s)
{
    if (!p->on) return;
    (void)cudaStreamSynchronize(s);
    double t = rt_now();
    p->ms[ph] += 1e3 * (t - p->t);
    p->t = t;
}
static void prof_print(const struct phase_prof *p, int nf, int nc)
{
    if (!p->on) return;
    double tot = 0;
    for (int k = 0; k < PH_N; k++) tot += p->ms[k];
    fprintf(stderr, "cuda profile: %d clips %d frames total %.2f ms:", nc, nf, tot);
    for (int k = 0; k < PH_N; k++) fprintf(stderr, " %s %.2f", ph_name[k], p->ms[k]);
    fprintf(stderr, "\n");
}

/* ---- small transfers ------------------------------------------------ */

#define TRY(x) do { if ((st = (x)) != RT_OK) goto done; } while (0)
#define CTRY(x) CUDA_GOTO(x, err, st, done)

static enum rt_status sum_frames(struct cuda_lm *L, const float *a, const float *b2, float *o1, float *o2,
                                 cudaStream_t s, struct rt_err *err)
{
    if (b2) {
        cuda_reduce_src<2> src = {{a, b2}, {NULL, NULL}};
        cuda_reduce_dst<2> dst = {{o1, o2}};
        return cuda_reduce_run<2>(&L->plan_1, src, dst, cuda_reduce_nofin(), s, err);
    }
    cuda_reduce_src<1> src = {{a}, {NULL}};
    cuda_reduce_dst<1> dst = {{o1}};
    return cuda_reduce_run<1>(&L->plan_1, src, dst, cuda_reduce_nofin(), s, err);
}

static enum rt_status dot_self(struct cuda_reduce_plan *p, const float *a, float *o, cudaStream_t s, struct rt_err *err)
{
    cuda_reduce_src<1> src = {{a}, {a}};
    cuda_reduce_dst<1> dst = {{o}};
    return cuda_reduce_run<1>(p, src, dst, cuda_reduce_nofin(), s, err);
}

static __global__ void fill_kernel(float *a, size_t n, float v)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = v;
}

enum rt_status cuda_lm_solve(struct cuda_lm **lmp, const struct solver_backend_config *cfg,
                             const struct solver_batch *b, struct solver_result *res, cudaStream_t s,
                             struct rt_err *err)
{
    double t0 = rt_now();
    const struct solver_options *o = &b->opt;
    enum rt_status st = RT_OK;
    struct host_clip *cl = NULL;
    if (!res || !res->state || !res->clips) return CUDA_ERR(err, RT_EINVAL, "result", "no output arrays");
    if (o->linear == SOLVER_LINEAR_DIRECT)
        return CUDA_ERR(err, RT_EINVAL, "options.linear", "the direct reference solver runs on the CPU backend only");
    if (!*lmp) {
        struct cuda_lm *L = (struct cuda_lm *)calloc(1, sizeof *L);
        if (!L) return CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory");
        CUDA_TRY(cudaGetDevice(&L->device), err);
        CUDA_TRY(cudaDeviceGetAttribute(&L->n_sm, cudaDevAttrMultiProcessorCount, L->device), err);
        *lmp = L;
    }
    struct cuda_lm *L = *lmp;
    int nc, nf;
    struct phase_prof prof;
    L->profile = cfg->cuda_profile;
    L->unrolled_cg = cfg->cuda_unrolled_cg;
    L->cg_up = cfg->cuda_cg_up;
    prof_start(&prof, L->profile);
    L->pcg_ms = 0.0;
    L->pcg_graphs = 0;
    TRY(prepare(L, b, s, err));
    prof_mark(&prof, PH_PREP, s);
    nc = L->nc;
    nf = L->nf;
    cl = (struct host_clip *)calloc((size_t)nc, sizeof *cl);
    if (!cl) { st = CUDA_ERR(err, RT_ENOMEM, "solver", "out of memory"); goto done; }
    {
        int *h_sel = (int *)L->h_pin;
        float *h_lam = (float *)L->h_pin + nc, *h_a = (float *)L->h_pin + 2 * nc, *h_b = (float *)L->h_pin + 3 * nc;
        float *h_c = (float *)L->h_pin + 4 * nc, *h_d = (float *)L->h_pin + 5 * nc;
        int *h_it = (int *)L->h_pin + 6 * nc;
        /* The accept phase stages its flags in slots of its own: its copies
         * are still queued when the next iteration rewrites h_sel. */
        int *h_sel_acc = (int *)L->h_pin + 8 * nc;
        float *h_pred = (float *)L->h_pin + 9 * nc;
        size_t cb = (size_t)nc * 4;

        start_kernel<<<cuda_blocks((size_t)nf, 256), 256, 0, s>>>(L->bd, nf, L->cols, L->x);
        CTRY(cudaGetLastError());
        fill_kernel<<<cuda_blocks((size_t)nf, 256), 256, 0, s>>>(L->mu, (size_t)nf, 1.0f);
        CTRY(cudaGetLastError());
        for (int k = 0; k < nc; k++) {
            cl[k].off = b->frame_off[k];
            cl[k].T = b->frame_off[k + 1] - b->frame_off[k];
            cl[k].active = 1;
            cl[k].sel = 1;
            cl[k].lambda = o->lambda_init;
            cl[k].nu = 2.0f;
            cl[k].dec_prev = 0.0f;
            cl[k].need_lin = 1;
            h_sel[k] = 1;
        }
        CTRY(cudaMemcpyAsync(L->sel, h_sel, cb, cudaMemcpyHostToDevice, s));
        TRY(cuda_costs(L, L->x, L->part, L->sel, s, err));
        TRY(sum_frames(L, L->part, NULL, L->cost, NULL, s, err));
        CTRY(cudaMemcpyAsync(h_a, L->cost, cb, cudaMemcpyDeviceToHost, s));
        CTRY(cudaStreamSynchronize(s));
        for (int k = 0; k < nc; k++) cl[k].start_cost = h_a[k];
        prof_mark(&prof, PH_START, s);
        if (o->init_iters > 0) TRY(cuda_init_solves(L, s, err));
        prof_mark(&prof, PH_INIT, s);

        int first = 1;
        for (;;) {
            /* 1. linearize clips that moved */
            int any = 0;
            for (int k = 0; k < nc; k++) {
                cl[k].sel = cl[k].active && cl[k].need_lin;
                h_sel[k] = cl[k].sel;
                any |= cl[k].active;
            }
            if (!any) break;
            CTRY(cudaMemcpyAsync(L->sel, h_sel, cb, cudaMemcpyHostToDevice, s));
            TRY(cuda_linearize(L, L->x, L->sel, s, err));
            TRY(sum_frames(L, L->part, NULL, L->cost, NULL, s, err));
            TRY(cuda_grad_max(L, s, err));
            CTRY(cudaMemcpyAsync(h_a, L->cost, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaMemcpyAsync(h_b, L->gmax, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaStreamSynchronize(s));
            prof_mark(&prof, PH_LIN, s);
            for (int k = 0; k < nc; k++) {
                struct host_clip *c = &cl[k];
                if (!c->sel) continue;
                c->cost = h_a[k];
                if (first) c->initial_cost = c->mark = c->cost;
                c->need_lin = 0;
                int term = lm_rule_after_lin(o, h_b[k], c->cost, c->lm_iters);
                if (term != SOLVER_TERM_NONE) { c->term = term; c->active = 0; }
            }
            first = 0;
            any = 0;
            for (int k = 0; k < nc; k++) {
                cl[k].sel = cl[k].active;
                h_sel[k] = cl[k].sel;
                h_lam[k] = cl[k].lambda;
                any |= cl[k].sel;
            }
            if (!any) break;

            /* 2. step */
            CTRY(cudaMemcpyAsync(L->sel, h_sel, cb, cudaMemcpyHostToDevice, s));
            CTRY(cudaMemcpyAsync(L->lambda, h_lam, cb, cudaMemcpyHostToDevice, s));
            TRY(cuda_precondition(L, L->sel, s, err));
            prof_mark(&prof, PH_PRECOND, s);
            TRY(cuda_pcg(L, s, err));
            prof_mark(&prof, PH_PCG, s);
            TRY(cuda_predict(L, s, err));
            TRY(cuda_costs(L, L->xt, L->part_t, L->sel, s, err));
            TRY(dot_self(&L->plan_n, L->d, L->dd, s, err));
            TRY(dot_self(&L->plan_cols, L->x, L->xx, s, err));
            TRY(sum_frames(L, L->pred_f, L->part_t, L->sum_pred, L->cost_t, s, err));
            CTRY(cudaMemcpyAsync(h_a, L->dd, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaMemcpyAsync(h_b, L->xx, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaMemcpyAsync(h_c, L->sum_pred, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaMemcpyAsync(h_d, L->cost_t, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaMemcpyAsync(h_it, L->cg_it, cb, cudaMemcpyDeviceToHost, s));
            CTRY(cudaStreamSynchronize(s));
            prof_mark(&prof, PH_EVAL, s);
            TRY(cuda_pcg_account(L, err));

            /* 3. accept or reject, per clip (lm_rule.h, as cpu_lm.c) */
            for (int k = 0; k < nc; k++) {
                struct host_clip *c = &cl[k];
                if (!c->sel) continue;
                c->pred = h_c[k];
                c->cost_t = h_d[k];
                c->cg_total += h_it[k];
                c->lm_iters++;
                if (lm_rule_step(o, &c->cost, c->cost_t, c->pred, h_a[k], h_b[k], &c->lambda, &c->nu, &c->dec_prev,
                                 &c->term)) {
                    c->sel = 2;
                    c->need_lin = 1;
                }
            }
            for (int k = 0; k < nc; k++) {
                h_sel_acc[k] = cl[k].sel;
                h_pred[k] = cl[k].pred;
            }
            CTRY(cudaMemcpyAsync(L->sel, h_sel_acc, cb, cudaMemcpyHostToDevice, s));
            CTRY(cudaMemcpyAsync(L->pred, h_pred, cb, cudaMemcpyHostToDevice, s));
            TRY(cuda_accept(L, s, err));
            prof_mark(&prof, PH_ACCEPT, s);
            int done_clips = 0, max_it = 0;
            for (int k = 0; k < nc; k++) {
                struct host_clip *c = &cl[k];
                lm_rule_end_iter(o, c->lm_iters, c->cost, &c->mark, &c->active, &c->term);
                done_clips += !c->active;
                if (c->lm_iters > max_it) max_it = c->lm_iters;
            }
            if (b->progress) b->progress(b->progress_user, max_it, done_clips);
        }
    }
    TRY(stage_down(L, res->state, L->x, (size_t)nf * L->cols * sizeof(float), s, err));
    {
        double sec = rt_now() - t0;
        L->solve_ms = 1e3 * sec;
        prof_mark(&prof, PH_DOWN, s);
        prof_print(&prof, nf, nc);
        for (int k = 0; k < nc; k++) {
            const struct host_clip *c = &cl[k];
            struct solver_clip_result *r = &res->clips[k];
            memset(r, 0, sizeof *r);
            r->lm_iters = c->lm_iters;
            r->cg_iters = c->cg_total;
            r->termination = c->term;
            r->start_cost = c->start_cost;
            r->initial_cost = c->initial_cost;
            r->final_cost = c->cost;
            r->final_lambda = c->lambda;
            r->seconds = sec;
            solver_clip_bounds(b->tree, res->state + (size_t)c->off * L->cols, c->T, r);
        }
    }
done:
    free(cl);
    return st;
}

void cuda_lm_stats(const struct cuda_lm *L, double *pcg_ms, int *pcg_graphs, double *solve_ms)
{
    *pcg_ms = L ? L->pcg_ms : 0.0;
    *pcg_graphs = L ? L->pcg_graphs : 0;
    *solve_ms = L ? L->solve_ms : 0.0;
}

void cuda_lm_free(struct cuda_lm *L)
{
    if (!L) return;
    cuda_pcg_reset(L);
    cuda_reduce_plan_free(&L->plan_n);
    cuda_reduce_plan_free(&L->plan_1);
    cuda_reduce_plan_free(&L->plan_cols);
    cuda_buf_free(&L->arena);
    cuda_buf_free(&L->in);
    cuda_buf_free(&L->tabs);
    cuda_pinned_free(L->h_pin);
    cpu_pool_free(L->copy_pool);
    if (L->stage) {
        cuda_pinned_free(L->stage);
        cudaEventDestroy(L->stage_ev[0]);
        cudaEventDestroy(L->stage_ev[1]);
    }
    if (L->ev0) cudaEventDestroy(L->ev0);
    if (L->ev1) cudaEventDestroy(L->ev1);
    free(L);
}
