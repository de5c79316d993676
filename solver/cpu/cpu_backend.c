/* cpu_backend.c -- the CPU solver backend: its ops table, its context and
 * the context's work arena (STYLE.md "Backend interface", after ggml's
 * backends; the CUDA backend's counterpart is cuda/cuda_backend.cu).
 *
 * A context owns a thread pool, started once by solver_backend_cpu_init()
 * with the configured thread count, and one work arena that holds every
 * array a solve needs (struct cpu_ctx in cpu_internal.h). The arena grows
 * to the largest batch solved so far and is freed with the context, so a
 * stream of batches (the daemon's worker, `retarget solve` over many
 * clips, the per-frame baseline's one-frame solves) pays for threads and
 * memory once. Reuse must never show in the results (DESIGN.md "The
 * numerical contract": no dependence on thread count, batch composition or
 * earlier solves): cpu_ctx_prepare() resets what the solve reads before it
 * writes, and the test hook solver_cpu_debug_poison() fills the arena with
 * NaNs before each solve to prove that nothing else is read early.
 * The LM itself is cpu_lm.c; its linear algebra cpu_cg.c and
 * cpu_direct.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../backend.h"
#include "../../base/mem.h"
#include "../../base/clock.h"
#include "../frame.h"
#include "../reduce.h"
#include "cpu_internal.h"

#define CPU_ARENA_ALIGN 64 /* every array starts on its own cache line */


/* ---- the work arena ------------------------------------------------ */

/* Lays arrays out one after another, each aligned; with base NULL it only
 * measures. `bad` is set when a size overflows. */
struct carver {
    unsigned char *base;
    size_t used;
    int bad;
};

static void *carve(struct carver *a, size_t count, size_t per, size_t elem)
{
    size_t n, bytes, at;
    if (!rt_mul_size(count, per, &n) || !rt_mul_size(n, elem, &bytes)) {
        a->bad = 1;
        return NULL;
    }
    at = (a->used + (CPU_ARENA_ALIGN - 1)) & ~(size_t)(CPU_ARENA_ALIGN - 1);
    if (at < a->used || bytes > SIZE_MAX - at) {
        a->bad = 1;
        return NULL;
    }
    a->used = at + bytes;
    return a->base && !a->bad ? a->base + at : NULL;
}

/* Points every per-solve array of `c` into a->base for the sizes already
 * set in `c`. */
static void lay_out(struct cpu_ctx *c, struct carver *a)
{
    size_t nf = (size_t)c->nf, nc = (size_t)c->nc, n = (size_t)c->n, cols = (size_t)c->cols;
    c->clip_of = (int *)carve(a, nf, 1, sizeof(int));
    c->clip = (struct cpu_clip *)carve(a, nc, 1, sizeof(struct cpu_clip));
    c->x = (float *)carve(a, nf, cols, sizeof(float));
    c->xt = (float *)carve(a, nf, cols, sizeof(float));
    c->dq = (float *)carve(a, nf, n, sizeof(float));
    size_t quads = (nf + CPU_QUAD - 1) / CPU_QUAD * CPU_QUAD;
    c->B = (float *)carve(a, quads, (size_t)c->np, sizeof(float));
    c->F = (float *)carve(a, quads, (size_t)c->np, sizeof(float));
    float **vecs[7] = {&c->g, &c->lamd, &c->d, &c->r, &c->z, &c->p, &c->q};
    for (int k = 0; k < 7; k++) *vecs[k] = (float *)carve(a, nf, n, sizeof(float));
    c->frozen = (unsigned long long *)carve(a, nf, 1, sizeof(unsigned long long));
    c->vact = (unsigned long long *)carve(a, nf, 1, sizeof(unsigned long long));
    c->mu = (float *)carve(a, nf, 1, sizeof(float));
    c->part = (float *)carve(a, nf, 1, sizeof(float));
    c->part_t = (float *)carve(a, nf, 1, sizeof(float));
    c->pred_f = (float *)carve(a, nf, 1, sizeof(float));
    c->gmax_f = (float *)carve(a, nf, 1, sizeof(float));
    c->tscratch = (float *)carve(a, (size_t)c->threads, c->tscratch_stride, sizeof(float));
    c->blk_clip = (int *)carve(a, c->blk_cap, 1, sizeof(int));
    c->blk_start = (size_t *)carve(a, c->blk_cap, 1, sizeof(size_t));
    for (int k = 0; k < 3; k++) c->blk_part[k] = (float *)carve(a, c->blk_cap, 1, sizeof(float));
    /* blk_cap + RT_REDUCE_BLOCK + nf cannot overflow: blk_cap <= nf * cols + nc + 1 */
    c->red_scratch = (float *)carve(a, c->blk_cap + RT_REDUCE_BLOCK + nf, 1, sizeof(float));
    c->dot_d = (float (*)[3])carve(a, nc, 3, sizeof(float));
    c->dot_x = (float (*)[3])carve(a, nc, 3, sizeof(float));
    c->dot_cg = (float (*)[3])carve(a, nc, 3, sizeof(float));
    c->cg_was = (int *)carve(a, nc, 1, sizeof(int));
    c->sel_list = (int *)carve(a, nc, 1, sizeof(int));
    c->sel_start = (size_t *)carve(a, nc + 1, 1, sizeof(size_t));
}

/* Sets `c` up for batch `b` (checked by the caller): sizes, the arena grown
 * when this batch needs more than any before, the arrays laid over it, and
 * the per-solve state that the solve reads before writing (clip records
 * zeroed, frame-to-clip map, per-frame damping factors 1). Returns RT_OK,
 * RT_ELIMIT when the batch's sizes overflow, or RT_ENOMEM; on failure the
 * context stays usable for later solves (its arena may have been freed). */
static enum rt_status cpu_ctx_prepare(struct cpu_ctx *c, const struct solver_batch *b, struct rt_err *err)
{
    struct carver a = {NULL, 0, 0};
    c->b = b;
    c->tr = b->tree;
    c->n = rt_tangent_dim(b->tree);
    c->cols = rt_state_cols(b->tree);
    c->nf = b->frame_off[b->n_clips];
    c->nc = b->n_clips;
    c->nl = b->tree->n_links;
    c->np = c->n * (c->n + 1) / 2;
    size_t nf = (size_t)c->nf, n = (size_t)c->n;
    /* per thread: the links, then the preconditioner's four-frame blocks
     * (cpu_cg.c: 64-byte aligned, 2 * 4 + 2 blocks of n*n floats) */
    size_t ts = (size_t)c->nl * FRAME_LINK_STRIDE + 16 + 10 * n * n;
    size_t ti = frame_init_scratch(c->tr);
    c->tscratch_stride = ts > ti ? ts : ti;
    /* dot blocks: at most sum_c ceil(T_c * cols / 512) <= nf*cols/512 + nc */
    c->blk_cap = nf * (size_t)c->cols / RT_REDUCE_BLOCK + (size_t)c->nc + 1;
    lay_out(c, &a);
    if (a.bad) return rt_err_set(err, RT_ELIMIT, "solver", "batch of %zu frames too large", nf);
    if (a.used > c->arena_cap) {
        free(c->arena);
        c->arena = NULL;
        c->arena_cap = 0;
        if (!(c->arena = (unsigned char *)rt_alloc_large(a.used, CPU_ARENA_ALIGN, &c->arena_cap)))
            return rt_err_set(err, RT_ENOMEM, "solver", "out of memory for %zu frames", nf);
    }
    if (c->poison) memset(c->arena, 0xff, c->arena_cap);
    a.base = c->arena;
    a.used = 0;
    lay_out(c, &a);
    memset(c->clip, 0, (size_t)c->nc * sizeof *c->clip);
    for (int k = 0; k < c->nc; k++) {
        struct cpu_clip *cl = &c->clip[k];
        cl->off = b->frame_off[k];
        cl->T = b->frame_off[k + 1] - b->frame_off[k];
        for (int t = 0; t < cl->T; t++) c->clip_of[cl->off + t] = k;
    }
    for (size_t f = 0; f < nf; f++) c->mu[f] = 1.0f;
    return RT_OK;
}

/* Ends a solve: the batch was borrowed for it only. */
static void cpu_ctx_release(struct cpu_ctx *c)
{
    c->b = NULL;
    c->tr = NULL;
}

/* ---- the ops ------------------------------------------------------- */

static enum rt_status cpu_solve(void *vctx, const struct solver_batch *b, struct solver_result *res,
                                struct rt_err *err)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    double t0 = rt_now();
    enum rt_status st = cpu_ctx_prepare(c, b, err);
    if (st == RT_OK) st = cpu_lm_solve(c, res, err);
    if (st == RT_OK) {
        double sec = rt_now() - t0;
        for (int k = 0; k < b->n_clips; k++) res->clips[k].seconds = sec;
    }
    cpu_ctx_release(c);
    return st;
}

static void cpu_destroy(void *vctx)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    if (!c) return;
    cpu_pool_free(c->pool);
    free(c->arena);
    free(c);
}

static const struct solver_backend_ops cpu_ops = {
    .name = "cpu",
    .solve = cpu_solve,
    .synchronize = NULL,
    .destroy = cpu_destroy,
};

/* threads 0: one per online core, at most SOLVER_AUTO_THREADS_MAX. */
static int cpu_threads_of(const struct solver_backend_config *cfg)
{
    if (cfg->threads > 0) return cfg->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > SOLVER_AUTO_THREADS_MAX) n = SOLVER_AUTO_THREADS_MAX;
    return (int)n;
}

enum rt_status solver_backend_cpu_init(struct solver_backend *out, const struct solver_backend_config *cfg,
                                       struct rt_err *err)
{
    struct solver_backend_config def;
    struct cpu_ctx *c = NULL;
    enum rt_status st;
    out->ops = NULL;
    out->ctx = NULL;
    if (!cfg) {
        solver_backend_config_default(&def);
        cfg = &def;
    }
    if ((st = solver_backend_config_check(cfg, err)) != RT_OK) return st;
    c = (struct cpu_ctx *)calloc(1, sizeof *c);
    if (!c) return rt_err_set(err, RT_ENOMEM, "backend", "out of memory");
    c->threads = cpu_threads_of(cfg);
    c->profile = cfg->cpu_profile;
    if ((st = cpu_pool_create(c->threads, &c->pool, err)) != RT_OK) goto fail;
    out->ops = &cpu_ops;
    out->ctx = c;
    return RT_OK;
fail:
    cpu_destroy(c);
    return st;
}

/* ---- test hooks ---------------------------------------------------- */

enum rt_status solver_cpu_debug_steps(struct solver_backend *be, const struct solver_batch *b,
                                      const float *state, float lambda, float *d_pcg, float *d_direct,
                                      int *cg_iters, struct rt_err *err)
{
    if (!be || be->ops != &cpu_ops) return rt_err_set(err, RT_EINVAL, "backend", "not a CPU backend");
    struct cpu_ctx *c = (struct cpu_ctx *)be->ctx;
    enum rt_status st = solver_batch_check(b, err);
    if (st == RT_OK) st = cpu_ctx_prepare(c, b, err);
    if (st == RT_OK) st = cpu_lm_debug_steps(c, state, lambda, d_pcg, d_direct, cg_iters, err);
    cpu_ctx_release(c);
    return st;
}

int solver_cpu_debug_poison(struct solver_backend *be, int on)
{
    if (!be || be->ops != &cpu_ops) return -1;
    ((struct cpu_ctx *)be->ctx)->poison = on != 0;
    return 0;
}
