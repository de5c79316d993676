/* cpu_cg.c -- the CPU backend's linear algebra over a batch: per-frame
 * phases run on the thread pool (linearization, preconditioner, PCG) and
 * the per-clip dot products in the reduce.h order.
 *
 * Every phase runs over the frames of the clips whose `sel` is set
 * (cpu_run_selected: the threads share those frames evenly, so clips that
 * have stopped leave no thread idle), and a clip that has stopped keeps its
 * vectors bit for bit while its siblings go on. Per-frame work reads
 * neighbours only within its own clip.
 * The blocks and factors lie in quads of four frames (cpu_internal.h): the
 * linearization packs each frame's block into its lane, the preconditioner
 * factors four frames at a time, and the PCG's block products and Cholesky
 * solves run a quad at a time, each lane with frame_block_mul's and
 * frame_chol_solve's operations in their order.
 * Clip scalars: cpu_dots() reduces the sequence of u_i v_i over the clip's
 * entries ordered by (frame, coordinate); its first level runs block-parallel
 * (blocks never straddle clips: they start at the clip's first entry), the
 * next levels serially per clip. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../frame.h"
#include "../reduce.h"
#include "cpu_internal.h"

static float *thread_scratch(struct cpu_ctx *c, int tid) { return c->tscratch + (size_t)tid * c->tscratch_stride; }

/* Four floats a vector (GCC's and clang's vector extension: SSE on x86-64,
 * NEON on arm64); each lane is the scalar IEEE operation. */
typedef float v4sf __attribute__((vector_size(16)));

/* The preconditioner's part of thread tid's scratch (cpu_backend.c sizes
 * it): two blocks of n*n vectors and two blocks, 64-byte aligned, after the
 * link scratch. The linearization's full block is its first n*n floats. */
static v4sf *precond_scratch(struct cpu_ctx *c, int tid)
{
    float *s = thread_scratch(c, tid) + (size_t)c->nl * FRAME_LINK_STRIDE;
    return (v4sf *)(((uintptr_t)s + 63) & ~(uintptr_t)63);
}

/* ---- the quads ----------------------------------------------------- */

/* Quad q of A (B or F): np vectors. */
static v4sf *quad_of(const struct cpu_ctx *c, float *A, size_t q)
{
    return (v4sf *)(A + q * (size_t)c->np * CPU_QUAD);
}

/* Hints the quad after q of A into the cache: the products walk the
 * triangle by columns too, a pattern the hardware's prefetch does not
 * follow, so each quad's first pass would wait on memory. */
static void quad_prefetch(const struct cpu_ctx *c, float *A, size_t q)
{
    if ((q + 1) * CPU_QUAD >= (size_t)c->nf) return;
    const char *p = (const char *)quad_of(c, A, q + 1);
    size_t bytes = (size_t)c->np * sizeof(v4sf);
    for (size_t k = 0; k < bytes; k += 64) __builtin_prefetch(p + k);
}

/* Frame f's block (full, n*n) into its lane of B's quads. */
static void quad_pack(struct cpu_ctx *c, float *A, size_t f, const float *full)
{
    int n = c->n;
    float *dst = A + cpu_quad_at(c, f, 0, 0);
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++, k += CPU_QUAD) dst[k] = full[(size_t)i * n + j];
}

/* Frame f's block from its lane, both triangles. */
static void quad_unpack(const struct cpu_ctx *c, const float *A, size_t f, float *full)
{
    int n = c->n;
    const float *src = A + cpu_quad_at(c, f, 0, 0);
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++, k += CPU_QUAD) full[(size_t)i * n + j] = full[(size_t)j * n + i] = src[k];
}

/* The lanes of quad q (bit l: frame 4q + l) within [begin, end) whose clip
 * is selected: the ones this range computes and stores. */
static unsigned quad_lanes(const struct cpu_ctx *c, size_t q, size_t begin, size_t end)
{
    unsigned m = 0;
    for (unsigned l = 0; l < CPU_QUAD; l++) {
        size_t f = q * CPU_QUAD + l;
        if (f >= begin && f < end && c->clip[c->clip_of[f]].sel) m |= 1u << l;
    }
    return m;
}

static const float quad_zero[FRAME_MAX_DIM];

/* The lanes' n-vectors v + f n into four-frame vectors (zeros in the
 * lanes not in m). */
static void quad_gather(const float *v, size_t q, unsigned m, int n, v4sf *out)
{
    const float *s[CPU_QUAD];
    for (unsigned l = 0; l < CPU_QUAD; l++)
        s[l] = (m >> l) & 1u ? v + (q * CPU_QUAD + l) * (size_t)n : quad_zero;
    for (int i = 0; i < n; i++) out[i] = (v4sf){s[0][i], s[1][i], s[2][i], s[3][i]};
}

/* Lane l of the four-frame vectors into v + f n, f = 4q + l. */
static void quad_scatter(const v4sf *in, size_t q, unsigned l, int n, float *v)
{
    float *o = v + (q * CPU_QUAD + l) * (size_t)n;
    for (int i = 0; i < n; i++) o[i] = in[i][l];
}

/* frame_block_mul on a quad: y_i sums B_ji x_j over j ascending. */
static void quad_block_mul(const v4sf *Bq, const v4sf *x, v4sf *y, int n)
{
    for (int i = 0; i < n; i++) y[i] = (v4sf){0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < n; j++) {
        const v4sf *row = Bq + (size_t)j * (j + 1) / 2; /* B_jk, k <= j */
        v4sf xj = x[j];
        for (int i = 0; i < j; i++) y[i] = y[i] + row[i] * xj;
        const v4sf *col = row + j; /* B_ij, i >= j: row i's entry j */
        for (int i = j; i < n; i++, col += i) y[i] = y[i] + *col * xj;
    }
}

/* frame_chol_solve on a quad, in place. */
static void quad_chol_solve(const v4sf *Fq, v4sf *z, int n)
{
    for (int j = 0; j < n; j++) {
        const v4sf *col = Fq + (size_t)j * (j + 1) / 2 + j; /* L_jj, then L_ij for i > j */
        v4sf zj = z[j] * *col;
        z[j] = zj;
        col += j + 1;
        for (int i = j + 1; i < n; i++, col += i) z[i] = z[i] - *col * zj;
    }
    for (int j = n - 1; j >= 0; j--) {
        const v4sf *row = Fq + (size_t)j * (j + 1) / 2; /* L_ji, i <= j */
        v4sf zj = z[j] * row[j];
        z[j] = zj;
        for (int i = 0; i < j; i++) z[i] = z[i] - row[i] * zj;
    }
}

/* ---- phases over the selected clips -------------------------------- */

/* Items [begin, end) of the selected clips' frames, in clip order, to
 * global frames: the first clip by bisection, then clip by clip. */
static void ph_selected(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    int lo = 0, hi = c->sel_n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (c->sel_start[mid + 1] <= begin) lo = mid + 1;
        else hi = mid;
    }
    for (int i = lo; i < c->sel_n && c->sel_start[i] < end; i++) {
        const struct cpu_clip *cl = &c->clip[c->sel_list[i]];
        size_t s0 = c->sel_start[i];
        size_t b = begin > s0 ? begin - s0 : 0, e = end - s0 < (size_t)cl->T ? end - s0 : (size_t)cl->T;
        c->ph_fn(c, tid, (size_t)cl->off + b, (size_t)cl->off + e);
    }
}

void cpu_run_selected(struct cpu_ctx *c, cpu_task_fn fn)
{
    size_t total = 0;
    int n = 0;
    for (int k = 0; k < c->nc; k++) {
        if (!c->clip[k].sel) continue;
        c->sel_list[n] = k;
        c->sel_start[n] = total;
        total += (size_t)c->clip[k].T;
        n++;
    }
    c->sel_start[n] = total;
    c->sel_n = n;
    if (total == 0) return;
    if (total == (size_t)c->nf) { /* every clip: the frames as they lie */
        cpu_pool_run(c->pool, fn, c, total);
        return;
    }
    c->ph_fn = fn;
    cpu_pool_run(c->pool, ph_selected, c, total);
}

/* ---- dots ---------------------------------------------------------- */

static void ph_dots(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    float buf[RT_REDUCE_BLOCK];
    (void)tid;
    for (size_t i = begin; i < end; i++) {
        const struct cpu_clip *cl = &c->clip[c->blk_clip[i]];
        size_t L = (size_t)cl->T * (size_t)c->ph_width, s = c->blk_start[i];
        size_t base = (size_t)cl->off * (size_t)c->ph_width + s;
        size_t len = L - s < RT_REDUCE_BLOCK ? L - s : RT_REDUCE_BLOCK;
        for (int k = 0; k < c->ph_ndot; k++) {
            const float *u = c->ph_u[k] + base, *v = c->ph_v[k] + base;
            size_t e = 0;
            for (; e < len; e++) buf[e] = u[e] * v[e];
            for (; e < RT_REDUCE_BLOCK; e++) buf[e] = 0.0f;
            c->blk_part[k][i] = rt_reduce_block512(buf);
        }
    }
}

void cpu_dots(struct cpu_ctx *c, int ndot, const float *const *u, const float *const *v, int width,
              float out[][3])
{
    size_t nb = 0;
    for (int k = 0; k < c->nc; k++) {
        const struct cpu_clip *cl = &c->clip[k];
        if (!cl->sel) continue;
        size_t L = (size_t)cl->T * (size_t)width;
        for (size_t s = 0; s < L; s += RT_REDUCE_BLOCK) {
            c->blk_clip[nb] = k;
            c->blk_start[nb] = s;
            nb++;
        }
    }
    c->ph_ndot = ndot;
    c->ph_width = width;
    for (int k = 0; k < ndot; k++) { c->ph_u[k] = u[k]; c->ph_v[k] = v[k]; }
    cpu_pool_run(c->pool, ph_dots, c, nb);
    /* Next levels: the clip's block partials, in block order. */
    size_t i = 0;
    for (int k = 0; k < c->nc; k++) {
        const struct cpu_clip *cl = &c->clip[k];
        if (!cl->sel) continue;
        size_t nbk = rt_reduce_nblocks((size_t)cl->T * (size_t)width);
        for (int j = 0; j < ndot; j++)
            out[k][j] = nbk == 1 ? c->blk_part[j][i] : rt_reduce_serial(c->blk_part[j] + i, nbk, c->red_scratch);
        i += nbk;
    }
}

/* ---- linearization ------------------------------------------------- */

static void ph_diff(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    (void)tid;
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        if (!cl->sel || (int)f - cl->off >= cl->T - 1) continue;
        frame_diff(c->tr, c->ph_state + f * c->cols, c->ph_state + (f + 1) * c->cols, c->dq + f * c->n);
    }
}

static void ph_lin(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    float *lk = thread_scratch(c, tid), *B = (float *)precond_scratch(c, tid);
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        if (!cl->sel) continue;
        const float *x = c->ph_state + f * c->cols;
        int t = (int)f - cl->off;
        c->part[f] = frame_eval(c->b, (int)f, x, c->dq + (size_t)cl->off * c->n, t, cl->T, lk, B,
                                c->g + f * c->n);
        c->frozen[f] = frame_freeze(c->tr, x, B, c->g + f * c->n);
        quad_pack(c, c->B, f, B);
        /* the clip's max |g| (the stopping test) is the max of these: the
         * same float in any order */
        float m = 0.0f;
        for (int i = 0; i < c->n; i++) {
            float a = fabsf(c->g[f * c->n + (size_t)i]);
            if (a > m) m = a;
        }
        c->gmax_f[f] = m;
        if (c->b->v_limit) c->vact[f] = frame_vlim_mask(c->b, c->dq + (size_t)cl->off * c->n, c->n, t, cl->T);
    }
}

static void ph_cost(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    float *lk = thread_scratch(c, tid);
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        if (!cl->sel) continue;
        int t = (int)f - cl->off;
        c->ph_out[f] = frame_eval(c->b, (int)f, c->ph_state + f * c->cols, c->dq + (size_t)cl->off * c->n, t,
                                  cl->T, lk, NULL, NULL);
    }
}

/* B, g, frozen masks and per-frame costs (c->part) at `state` for the
 * selected clips. */
void cpu_linearize(struct cpu_ctx *c, const float *state)
{
    c->ph_state = state;
    cpu_run_selected(c, ph_diff);
    cpu_run_selected(c, ph_lin);
}

/* Per-frame costs at `state` into out[] for the selected clips. */
void cpu_costs(struct cpu_ctx *c, const float *state, float *out)
{
    c->ph_state = state;
    c->ph_out = out;
    cpu_run_selected(c, ph_diff);
    cpu_run_selected(c, ph_cost);
}

/* ---- preconditioner ------------------------------------------------ */

/* frame_chol of four blocks at once, lane l of every vector the block of
 * frame l (M4 and F4: n*n vectors, element (i, j) at i*n + j): the same
 * operations in the same order in each lane, so each F is frame_chol's to
 * the bit, while the four division chains (one per element: the next
 * element's sum needs this one) run side by side. F4 gets the whole
 * factor: both triangles and the reciprocal pivots. */
static void chol4(const v4sf *M4, v4sf *F4, int n)
{
    for (int i = 0; i < n; i++) {
        const v4sf *Fi = F4 + (size_t)i * n;
        for (int j = 0; j <= i; j++) {
            const v4sf *Fj = F4 + (size_t)j * n;
            v4sf s = M4[(size_t)i * n + j];
            for (int k = 0; k < j; k++) s = s - Fi[k] * Fj[k];
            if (i == j) {
                v4sf fl = 1e-7f * M4[(size_t)i * n + i] + 1e-30f, r = s;
                for (int l = 0; l < 4; l++) r[l] = sqrtf(s[l] > fl[l] ? s[l] : fl[l]);
                F4[(size_t)i * n + i] = r;
            } else {
                v4sf v = s / Fj[j];
                F4[(size_t)i * n + j] = v;
                F4[(size_t)j * n + i] = v;
            }
        }
    }
    for (int i = 0; i < n; i++) F4[(size_t)i * n + i] = 1.0f / F4[(size_t)i * n + i];
}

/* The factors of the ng (1..4) frames of one quad whose blocks M4's first
 * ng lanes hold, in frame order, into their lanes of F: a whole quad is
 * stored a vector at a time; a group of fewer than four (the quads cut by a
 * range's or a selection's edge) repeats its first block in the lanes left
 * over and stores its own lane by lane. */
static void precond_group(struct cpu_ctx *c, v4sf *M4, v4sf *F4, const size_t *group, int ng)
{
    int n = c->n;
    size_t nn = (size_t)n * n;
    for (int l = ng; l < 4; l++)
        for (size_t e = 0; e < nn; e++) M4[e][l] = M4[e][0];
    chol4(M4, F4, n);
    if (ng == CPU_QUAD) {
        v4sf *Fq = quad_of(c, c->F, group[0] / CPU_QUAD);
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) *Fq++ = F4[(size_t)i * n + j];
        return;
    }
    for (int l = 0; l < ng; l++) {
        float *dst = c->F + cpu_quad_at(c, group[l], 0, 0);
        size_t k = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++, k += CPU_QUAD) dst[k] = F4[(size_t)i * n + j][l];
    }
}

/* A quad at a time: each selected frame's M (frame_precond_matrix of its
 * block, unpacked) into the next lane, then precond_group. */
static void ph_precond(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    size_t nn = (size_t)c->n * c->n;
    v4sf *M4 = precond_scratch(c, tid), *F4 = M4 + nn;
    float *M = (float *)(F4 + nn), *B = M + nn;
    size_t group[4];
    int ng = 0;
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        if (!cl->sel) continue;
        if (ng && f / CPU_QUAD != group[0] / CPU_QUAD) { /* a group is one quad's frames */
            precond_group(c, M4, F4, group, ng);
            ng = 0;
        }
        float lam = cl->lambda * c->mu[f];
        quad_unpack(c, c->B, f, B);
        frame_precond_matrix(c->b, B, c->frozen[f], lam, (int)f - cl->off, cl->T, 1,
                             c->b->v_limit ? c->vact + cl->off : NULL, c->lamd + f * c->n, M);
        for (size_t e = 0; e < nn; e++) M4[e][ng] = M[e];
        group[ng++] = f;
        if (ng == 4) {
            precond_group(c, M4, F4, group, ng);
            ng = 0;
        }
    }
    if (ng) precond_group(c, M4, F4, group, ng);
}

void cpu_precondition(struct cpu_ctx *c) { cpu_run_selected(c, ph_precond); }

/* ---- PCG ----------------------------------------------------------- */

/* The quads that frames [begin, end) touch: q over them, with m the lanes
 * of q to compute (quad_lanes); quads with none are skipped. */
#define CPU_FOR_QUADS(c, begin, end, q, m)                                                      \
    for (size_t q = (begin) / CPU_QUAD, q##_end = ((end) + CPU_QUAD - 1) / CPU_QUAD; q < q##_end; q++) \
        for (unsigned m = quad_lanes((c), q, (begin), (end)); m; m = 0)

static void ph_cg_init(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    int n = c->n;
    v4sf z4[FRAME_MAX_DIM];
    (void)tid;
    CPU_FOR_QUADS(c, begin, end, q, m) {
        quad_prefetch(c, c->F, q);
        for (unsigned l = 0; l < CPU_QUAD; l++) {
            if (!((m >> l) & 1u)) continue;
            size_t f = q * CPU_QUAD + l;
            float *r = c->r + f * n, *d = c->d + f * n;
            const float *g = c->g + f * n;
            for (int i = 0; i < n; i++) { r[i] = -g[i]; d[i] = 0.0f; }
        }
        quad_gather(c->r, q, m, n, z4);
        quad_chol_solve(quad_of(c, c->F, q), z4, n);
        for (unsigned l = 0; l < CPU_QUAD; l++) {
            if (!((m >> l) & 1u)) continue;
            quad_scatter(z4, q, l, n, c->z);
            quad_scatter(z4, q, l, n, c->p);
        }
    }
}

/* q = (H + lambda D) p, or with ph_undamped the undamped H d into q plus the
 * per-frame predicted decrease pred_f = -(g.d) - 0.5 (d.Hd) and the trial
 * state xt = x (+) d: the block products a quad at a time, the rest of
 * frame_matvec per frame. */
static void ph_matvec(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    int n = c->n;
    const float *x = c->ph_undamped ? c->d : c->p;
    v4sf x4[FRAME_MAX_DIM], y4[FRAME_MAX_DIM];
    (void)tid;
    CPU_FOR_QUADS(c, begin, end, q, m) {
        quad_prefetch(c, c->B, q);
        quad_gather(x, q, m, n, x4);
        quad_block_mul(quad_of(c, c->B, q), x4, y4, n);
        for (unsigned l = 0; l < CPU_QUAD; l++) {
            if (!((m >> l) & 1u)) continue;
            size_t f = q * CPU_QUAD + l;
            const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
            int t = (int)f - cl->off;
            const unsigned long long *act = c->b->v_limit ? c->vact + cl->off : NULL;
            float *y = c->q + f * n;
            quad_scatter(y4, q, l, n, c->q);
            frame_matvec_rest(c->b, c->ph_undamped ? NULL : c->lamd + f * n, c->frozen[f],
                              x + (size_t)cl->off * n, t, cl->T, 1, act, y);
            if (c->ph_undamped) {
                const float *d = c->d + f * n;
                c->pred_f[f] = -frame_dot(c->g + f * n, d, n) - 0.5f * frame_dot(d, y, n);
                frame_retract(c->tr, c->x + f * c->cols, d, c->xt + f * c->cols);
            }
        }
    }
}

static void ph_cg_update(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    int n = c->n;
    v4sf z4[FRAME_MAX_DIM];
    (void)tid;
    CPU_FOR_QUADS(c, begin, end, q, m) {
        quad_prefetch(c, c->F, q);
        for (unsigned l = 0; l < CPU_QUAD; l++) {
            if (!((m >> l) & 1u)) continue;
            size_t f = q * CPU_QUAD + l;
            float a = c->clip[c->clip_of[f]].alpha;
            float *r = c->r + f * n, *p = c->p + f * n, *d = c->d + f * n, *qv = c->q + f * n;
            for (int i = 0; i < n; i++) {
                d[i] = d[i] + a * p[i];
                r[i] = r[i] - a * qv[i];
            }
        }
        quad_gather(c->r, q, m, n, z4);
        quad_chol_solve(quad_of(c, c->F, q), z4, n);
        for (unsigned l = 0; l < CPU_QUAD; l++)
            if ((m >> l) & 1u) quad_scatter(z4, q, l, n, c->z);
    }
}

static void ph_cg_p(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    size_t n = (size_t)c->n;
    (void)tid;
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        if (!cl->sel) continue;
        float bt = cl->beta;
        float *z = c->z + f * n, *p = c->p + f * n;
        for (size_t i = 0; i < n; i++) p[i] = z[i] + bt * p[i];
    }
}

/* Undamped H d, per-frame predicted decrease and trial states for the
 * selected clips (after the step d is known). */
void cpu_predict(struct cpu_ctx *c)
{
    c->ph_undamped = 1;
    cpu_run_selected(c, ph_matvec);
    c->ph_undamped = 0;
}

/* Block-Jacobi PCG on (H + lambda D) d = -g for the clips with `sel` set
 * (they must have been linearized and preconditioned). Each clip stops on
 * its own at ||r|| <= cg_tol ||g|| or after max_cg_iters; from then on its
 * vectors are left alone. On return `sel` is restored. */
void cpu_pcg(struct cpu_ctx *c)
{
    const struct solver_options *o = &c->b->opt;
    float (*s)[3] = c->dot_cg;
    int *was = c->cg_was;
    for (int k = 0; k < c->nc; k++) was[k] = c->clip[k].sel;
    cpu_run_selected(c, ph_cg_init);
    {
        const float *u[3] = {c->g, c->r, NULL}, *v[3] = {c->g, c->z, NULL};
        cpu_dots(c, 2, u, v, c->n, s);
    }
    int any = 0;
    for (int k = 0; k < c->nc; k++) {
        struct cpu_clip *cl = &c->clip[k];
        if (!cl->sel) continue;
        cl->gg = s[k][0];
        cl->rz = s[k][1];
        cl->cg_it = 0;
        cl->cg_on = cl->gg > 0.0f;
        if (!cl->cg_on) cl->sel = 0;
        any |= cl->cg_on;
    }
    while (any) {
        cpu_run_selected(c, ph_matvec);
        {
            const float *u[3] = {c->p, NULL, NULL}, *v[3] = {c->q, NULL, NULL};
            cpu_dots(c, 1, u, v, c->n, s);
        }
        for (int k = 0; k < c->nc; k++) {
            struct cpu_clip *cl = &c->clip[k];
            if (!cl->sel) continue;
            float pq = s[k][0];
            if (!(pq > 0.0f)) { cl->cg_on = 0; cl->sel = 0; continue; } /* no curvature left */
            cl->alpha = cl->rz / pq;
        }
        cpu_run_selected(c, ph_cg_update);
        {
            const float *u[3] = {c->r, c->r, NULL}, *v[3] = {c->r, c->z, NULL};
            cpu_dots(c, 2, u, v, c->n, s);
        }
        any = 0;
        for (int k = 0; k < c->nc; k++) {
            struct cpu_clip *cl = &c->clip[k];
            if (!cl->sel) continue;
            cl->cg_it++;
            float rr = s[k][0], rz = s[k][1];
            float tol = o->cg_tol * sqrtf(cl->gg);
            if (sqrtf(rr) <= tol || cl->cg_it >= o->max_cg_iters || !(rz > 0.0f)) {
                cl->cg_on = 0;
                cl->sel = 0;
                continue;
            }
            cl->beta = rz / cl->rz;
            cl->rz = rz;
            any = 1;
        }
        if (any) cpu_run_selected(c, ph_cg_p);
    }
    for (int k = 0; k < c->nc; k++) c->clip[k].sel = was[k];
}
