/* cpu_lm.c -- the CPU backend's per-clip Levenberg-Marquardt over a batch
 * (SOLVER.md, docs/solver.md): cpu_lm_solve() runs one solve in a context
 * that cpu_backend.c has set up for the batch, and cpu_lm_debug_steps() is
 * the test hook's single linearization.
 *
 * Flow of one call:
 *   1. start state (b->init, or the rest pose with the base at the root
 *      target), then opt.init_iters independent per-frame LM iterations
 *      (frame_init_solve, no smoothness, every frame its own damping, the
 *      collision pairs at lm_rule_init_collide's weight);
 *   2. coupled LM, all clips in lock step: linearize (B_t, g_t, frozen
 *      joints), precondition (damping lambda_clip * mu_t * D_t), solve (PCG
 *      or the banded direct reference), predict, evaluate the trial state,
 *      accept or reject per clip, update lambda (Nielsen) and mu_t.
 * A clip that stops (cost, gradient, step, iterations, damping) is
 * deselected and its state never changes again. Every clip scalar comes
 * from reduce.h sums over that clip's own entries: see docs/solver.md
 * "Reductions" for which sequence each one sums. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../base/clock.h"
#include "../frame.h"
#include "../lm_rule.h"
#include "../reduce.h"
#include "cpu_internal.h"

void cpu_select_all_active(struct cpu_ctx *c)
{
    for (int k = 0; k < c->nc; k++) c->clip[k].sel = c->clip[k].active;
}

/* Sum of a per-frame array over each selected clip's frames (reduce.h). */
static float clip_frame_sum(struct cpu_ctx *c, const struct cpu_clip *cl, const float *a)
{
    return rt_reduce_serial(a + cl->off, (size_t)cl->T, c->red_scratch);
}

/* ---- phase profile (config cpu_profile, RT_CPU_PROFILE=1) ------------ */

/* With the profile on, the wall time since the last mark is added to phase
 * `ph`; one line per solve goes to stderr (the CUDA backend's "cuda
 * profile" line, its phases as near as the backends allow: "pcg" is the
 * linear solve, PCG or direct). Off (the default) nothing is timed. */
static const char *const cpu_ph_name[CPU_PH_N] = {"start", "init", "repair", "linearize", "precond",
                                                  "pcg", "step_eval", "accept", "copy"};
static void prof_mark(struct cpu_ctx *c, int ph)
{
    if (!c->profile) return;
    double t = rt_now(), busy, max, wall;
    c->prof.ms[ph] += 1e3 * (t - c->prof_t);
    c->prof_t = t;
    cpu_pool_take_times(c->pool, &busy, &max, &wall);
    c->prof.busy[ph] += 1e3 * busy;
    c->prof.max[ph] += 1e3 * max;
    c->prof.pool[ph] += 1e3 * wall;
}

/* The timing line, then the threads' line: per phase the pool's share of
 * the phase's wall (the rest ran on the calling thread alone), the threads'
 * busy time against the pool's wall times P (what was not busy waited at
 * the end of a run), and the slowest thread's busy time against the mean
 * (1.00: every thread worked equally long). */
static void prof_print(const struct cpu_ctx *c)
{
    if (!c->profile) return;
    double tot = 0;
    for (int k = 0; k < CPU_PH_N; k++) tot += c->prof.ms[k];
    fprintf(stderr, "cpu profile: %d clips %d frames %d threads total %.2f ms:", c->nc, c->nf, c->threads, tot);
    for (int k = 0; k < CPU_PH_N; k++) fprintf(stderr, " %s %.2f", cpu_ph_name[k], c->prof.ms[k]);
    fprintf(stderr, "\ncpu threads: %d threads (pool ms, busy share, slowest / mean):", c->threads);
    for (int k = 0; k < CPU_PH_N; k++) {
        double P = (double)c->threads, mean = c->prof.busy[k] / P;
        fprintf(stderr, " %s %.1f %.2f %.2f", cpu_ph_name[k], c->prof.pool[k],
                c->prof.pool[k] > 0 ? c->prof.busy[k] / (P * c->prof.pool[k]) : 0.0, mean > 0 ? c->prof.max[k] / mean : 0.0);
    }
    fprintf(stderr, "\n");
}

/* ---- start state and per-frame initialization ---------------------- */

static void ph_start(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    (void)tid;
    for (size_t f = begin; f < end; f++) frame_start_state(c->b, (int)f, c->x + f * (size_t)c->cols);
}

static void ph_init(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    float *s = c->tscratch + (size_t)tid * c->tscratch_stride;
    for (size_t f = begin; f < end; f++) {
        float *x = c->x + f * c->cols;
        int lk_x;
        frame_init_solve(c->binit, (int)f, x, c->b->opt.init_iters, c->b->opt.init_lambda, s, &lk_x);
        c->part[f] = frame_eval_fk(c->binit, (int)f, x, NULL, 0, 1, s, NULL, NULL, !lk_x);
    }
}

/* One repair round over the independent solutions (read from x, written to
 * xt, costs from part to part_t): a frame whose tracking cost exceeds
 * LM_RULE_INIT_REPAIR_RATIO times a same-clip neighbour's (plus a floor) restarts
 * from that neighbour's solution (left neighbour first, then right) and
 * keeps the result only if it lowers its own cost (lm_rule.h
 * lm_rule_repair_wants). Independent solves from the rest pose can land in
 * another basin (a wrist flipped against its limits); the neighbour usually
 * sits in the right one. Frame-parallel and double-buffered, so the result
 * never depends on thread count. */
static void ph_repair(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    float *s = c->tscratch + (size_t)tid * c->tscratch_stride;
    float *tmp = s + c->tscratch_stride - (size_t)c->cols; /* frame_init_solve leaves the tail free */
    size_t cols = (size_t)c->cols;
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        float best = c->part[f];
        memcpy(c->xt + f * cols, c->x + f * cols, cols * sizeof(float));
        for (int side = 0; side < 2; side++) {
            long nb = side == 0 ? (long)f - 1 : (long)f + 1;
            if (nb < cl->off || nb >= cl->off + cl->T) continue;
            if (!lm_rule_repair_wants(c->part[f], c->part[nb])) continue;
            memcpy(tmp, c->x + (size_t)nb * cols, cols * sizeof(float));
            int lk_x;
            frame_init_solve(c->binit, (int)f, tmp, c->b->opt.init_iters, c->b->opt.init_lambda, s, &lk_x);
            float ct = frame_eval_fk(c->binit, (int)f, tmp, NULL, 0, 1, s, NULL, NULL, !lk_x);
            if (ct < best) {
                best = ct;
                memcpy(c->xt + f * cols, tmp, cols * sizeof(float));
            }
        }
        c->part_t[f] = best;
    }
}

/* The independent solves, then the repair rounds, with the
 * initialization's collision weight (lm_rule_init_collide); the coupled
 * solve's linearization computes every cost again with the batch's own. */
static void init_solve(struct cpu_ctx *c)
{
    struct solver_batch bi = *c->b;
    bi.w_collide = lm_rule_init_collide(bi.w_collide);
    c->binit = &bi;
    cpu_pool_run(c->pool, ph_init, c, (size_t)c->nf);
    prof_mark(c, CPU_PH_INIT);
    for (int round = 0; round < LM_RULE_INIT_REPAIR_ROUNDS; round++) {
        cpu_pool_run(c->pool, ph_repair, c, (size_t)c->nf);
        int changed = 0;
        for (int f = 0; f < c->nf; f++) changed += c->part_t[f] != c->part[f];
        float *t = c->x; c->x = c->xt; c->xt = t;
        t = c->part; c->part = c->part_t; c->part_t = t;
        if (!changed) break;
    }
    prof_mark(c, CPU_PH_REPAIR);
    c->binit = NULL;
}

/* ---- per-frame damping and acceptance ------------------------------ */

/* Per frame of a selected clip: the per-frame damping update (when on) and,
 * for accepted clips (cl->sel == 2), the copy of the trial state. */
static void ph_accept(void *vctx, int tid, size_t begin, size_t end)
{
    struct cpu_ctx *c = (struct cpu_ctx *)vctx;
    (void)tid;
    for (size_t f = begin; f < end; f++) {
        const struct cpu_clip *cl = &c->clip[c->clip_of[f]];
        if (!cl->sel) continue;
        if (c->b->opt.per_frame_damping)
            c->mu[f] = lm_rule_mu(c->mu[f], c->part[f], c->part_t[f], c->pred_f[f], cl->pred, (float)cl->T);
        if (cl->sel == 2) {
            memcpy(c->x + f * c->cols, c->xt + f * c->cols, (size_t)c->cols * sizeof(float));
            c->part[f] = c->part_t[f];
        }
    }
}

/* ---- the solve ----------------------------------------------------- */

static enum rt_status linear_solve(struct cpu_ctx *c, struct rt_err *err)
{
    cpu_precondition(c);
    prof_mark(c, CPU_PH_PRECOND);
    if (c->b->opt.linear == SOLVER_LINEAR_DIRECT) {
        for (int k = 0; k < c->nc; k++) c->clip[k].cg_it = 0;
        enum rt_status st = cpu_direct(c, err);
        prof_mark(c, CPU_PH_PCG);
        return st;
    }
    cpu_pcg(c);
    prof_mark(c, CPU_PH_PCG);
    return RT_OK;
}

/* max |g| over the clip's entries, from the linearization's per-frame
 * maxima (a max is the same float in any order). */
static float max_abs_g(const struct cpu_ctx *c, const struct cpu_clip *cl)
{
    float m = 0.0f;
    for (int f = cl->off; f < cl->off + cl->T; f++)
        if (c->gmax_f[f] > m) m = c->gmax_f[f];
    return m;
}

static enum rt_status lm_run(struct cpu_ctx *c, struct rt_err *err)
{
    const struct solver_batch *b = c->b;
    const struct solver_options *o = &b->opt;
    float (*s)[3] = c->dot_d, (*sx)[3] = c->dot_x;
    enum rt_status st = RT_OK;

    for (int k = 0; k < c->nc; k++) {
        struct cpu_clip *cl = &c->clip[k];
        cl->active = 1;
        cl->sel = 1;
        cl->lambda = o->lambda_init;
        cl->nu = 2.0f;
        cl->dec_prev = 0.0f;
        cl->need_lin = 1;
    }
    /* Start cost (before the initialization). */
    cpu_costs(c, c->x, c->part);
    for (int k = 0; k < c->nc; k++) c->clip[k].start_cost = clip_frame_sum(c, &c->clip[k], c->part);
    prof_mark(c, CPU_PH_START);
    if (o->init_iters > 0) init_solve(c);

    int first = 1;
    for (;;) {
        /* 1. linearize clips that moved */
        int any = 0;
        for (int k = 0; k < c->nc; k++) {
            struct cpu_clip *cl = &c->clip[k];
            cl->sel = cl->active && cl->need_lin;
            any |= cl->active;
        }
        if (!any) break;
        cpu_linearize(c, c->x);
        for (int k = 0; k < c->nc; k++) {
            struct cpu_clip *cl = &c->clip[k];
            if (!cl->sel) continue;
            cl->cost = clip_frame_sum(c, cl, c->part);
            if (first) cl->initial_cost = cl->mark = cl->cost;
            cl->need_lin = 0;
            int term = lm_rule_after_lin(o, max_abs_g(c, cl), cl->cost, cl->lm_iters);
            if (term != SOLVER_TERM_NONE) { cl->term = term; cl->active = 0; }
        }
        prof_mark(c, CPU_PH_LIN);
        first = 0;
        cpu_select_all_active(c);
        any = 0;
        for (int k = 0; k < c->nc; k++) any |= c->clip[k].sel;
        if (!any) break;

        /* 2. step */
        st = linear_solve(c, err);
        if (st != RT_OK) goto done;
        cpu_predict(c);
        cpu_costs(c, c->xt, c->part_t);
        {
            const float *u[3] = {c->d, NULL, NULL}, *v[3] = {c->d, NULL, NULL};
            cpu_dots(c, 1, u, v, c->n, s);
        }
        {
            const float *u[3] = {c->x, NULL, NULL}, *v[3] = {c->x, NULL, NULL};
            cpu_dots(c, 1, u, v, c->cols, sx);
        }
        prof_mark(c, CPU_PH_EVAL);
        /* 3. accept or reject, per clip (lm_rule.h, shared with the CUDA
         * backend's host driver) */
        for (int k = 0; k < c->nc; k++) {
            struct cpu_clip *cl = &c->clip[k];
            if (!cl->sel) continue;
            cl->pred = clip_frame_sum(c, cl, c->pred_f);
            cl->cost_t = clip_frame_sum(c, cl, c->part_t);
            cl->cg_total += cl->cg_it;
            cl->lm_iters++;
            if (lm_rule_step(o, &cl->cost, cl->cost_t, cl->pred, s[k][0], sx[k][0], &cl->lambda, &cl->nu, &cl->dec_prev,
                             &cl->term)) {
                cl->sel = 2;
                cl->need_lin = 1;
            }
        }
        cpu_run_selected(c, ph_accept);
        int done_clips = 0;
        int max_it = 0;
        for (int k = 0; k < c->nc; k++) {
            struct cpu_clip *cl = &c->clip[k];
            lm_rule_end_iter(o, cl->lm_iters, cl->cost, &cl->mark, &cl->active, &cl->term);
            done_clips += !cl->active;
            if (cl->lm_iters > max_it) max_it = cl->lm_iters;
        }
        if (b->progress) b->progress(b->progress_user, max_it, done_clips);
        prof_mark(c, CPU_PH_ACCEPT);
    }
done:
    return st;
}

enum rt_status cpu_lm_solve(struct cpu_ctx *c, struct solver_result *res, struct rt_err *err)
{
    memset(&c->prof, 0, sizeof c->prof);
    cpu_pool_set_timing(c->pool, c->profile);
    c->prof_t = rt_now();
    cpu_pool_run(c->pool, ph_start, c, (size_t)c->nf);
    enum rt_status st = lm_run(c, err);
    if (st != RT_OK) return st;
    memcpy(res->state, c->x, (size_t)c->nf * c->cols * sizeof(float));
    prof_mark(c, CPU_PH_COPY);
    prof_print(c);
    for (int k = 0; k < c->nc; k++) {
        const struct cpu_clip *cl = &c->clip[k];
        struct solver_clip_result *r = &res->clips[k];
        memset(r, 0, sizeof *r);
        r->lm_iters = cl->lm_iters;
        r->cg_iters = cl->cg_total;
        r->termination = cl->term;
        r->start_cost = cl->start_cost;
        r->initial_cost = cl->initial_cost;
        r->final_cost = cl->cost;
        r->final_lambda = cl->lambda;
        solver_clip_bounds(c->tr, c->x + (size_t)cl->off * c->cols, cl->T, r);
    }
    return RT_OK;
}

enum rt_status cpu_lm_debug_steps(struct cpu_ctx *c, const float *state, float lambda, float *d_pcg,
                                  float *d_direct, int *cg_iters, struct rt_err *err)
{
    memcpy(c->x, state, (size_t)c->nf * c->cols * sizeof(float));
    for (int k = 0; k < c->nc; k++) {
        c->clip[k].active = 1;
        c->clip[k].sel = 1;
        c->clip[k].lambda = lambda;
    }
    cpu_linearize(c, c->x);
    cpu_precondition(c);
    cpu_pcg(c);
    memcpy(d_pcg, c->d, (size_t)c->nf * c->n * sizeof(float));
    if (cg_iters) *cg_iters = c->clip[0].cg_it;
    enum rt_status st = cpu_direct(c, err);
    if (st == RT_OK) memcpy(d_direct, c->d, (size_t)c->nf * c->n * sizeof(float));
    return st;
}
