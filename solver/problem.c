/* problem.c -- solver options, batch validation and termination names:
 * the backend-independent part of the public API (solver.h). */
#include "solver.h"

#include <math.h>
#include <stdio.h>

#include "frame.h"

void solver_options_default(struct solver_options *o)
{
    /* docs/solver.md "Default options" says why these values. */
    o->max_lm_iters = 96;
    o->max_cg_iters = 24;
    o->cg_tol = 1e-3f;
    o->lambda_init = 1e-3f;
    o->tol_cost = 1e-6f;
    o->tol_grad = 1e-9f;
    o->tol_step = 1e-7f;
    o->init_iters = 8;
    o->linear = SOLVER_LINEAR_PCG;
    o->per_frame_damping = 1;
    o->init_lambda = 1e-2f;
}

void solver_clip_bounds(const struct rt_tree *t, const float *state, int T, struct solver_clip_result *r)
{
    size_t cols = (size_t)rt_state_cols(t);
    for (int f = 0; f < T; f++) {
        const float *x = state + (size_t)f * cols + RT_ROOT_COLS;
        int at = 0;
        for (int j = 0; j < t->n_joints; j++) {
            if (x[j] < t->lower[j] || x[j] > t->upper[j]) r->limit_violations++;
            if (x[j] == t->lower[j] || x[j] == t->upper[j]) at = 1;
        }
        r->frames_at_bound += at;
    }
}

const char *solver_termination_str(int term)
{
    switch (term) {
    case SOLVER_TERM_NONE: return "none";
    case SOLVER_TERM_COST: return "cost";
    case SOLVER_TERM_GRADIENT: return "gradient";
    case SOLVER_TERM_STEP: return "step";
    case SOLVER_TERM_MAX_ITERS: return "max_iters";
    case SOLVER_TERM_DAMPING: return "damping";
    case SOLVER_TERM_PROGRESS: return "progress";
    default: return "unknown";
    }
}

static int finite_nonneg(float v) { return isfinite(v) && v >= 0.0f; }

/* Checks n weights: finite and >= 0. Returns the first bad index or -1. */
static long bad_weight(const float *w, size_t n)
{
    if (!w) return -1;
    for (size_t i = 0; i < n; i++)
        if (!finite_nonneg(w[i])) return (long)i;
    return -1;
}

enum rt_status solver_batch_check(const struct solver_batch *b, struct rt_err *err)
{
    char where[64];
    if (!b) return rt_err_set(err, RT_EINVAL, "batch", "no batch");
    const struct rt_tree *t = b->tree;
    if (!t) return rt_err_set(err, RT_EINVAL, "batch.tree", "no tree");
    if (t->n_links < 1 || t->n_links > FRAME_MAX_LINKS)
        return rt_err_set(err, RT_EINVAL, "batch.tree.n_links", "%d links (want 1..%d)", t->n_links,
                          FRAME_MAX_LINKS);
    if (t->n_joints < 0 || rt_tangent_dim(t) > FRAME_MAX_DIM || rt_tangent_dim(t) < 1)
        return rt_err_set(err, RT_EINVAL, "batch.tree.n_joints", "%d joints (tangent dim 1..%d)",
                          t->n_joints, FRAME_MAX_DIM);
    if (!t->parent || !t->joint_type || !t->joint_index || !t->joint_mult || !t->joint_offset ||
        !t->origin_pos || !t->origin_rot || !t->axis || (t->n_joints && (!t->lower || !t->upper)))
        return rt_err_set(err, RT_EINVAL, "batch.tree", "missing tree array");
    for (int i = 0; i < t->n_links; i++) {
        snprintf(where, sizeof where, "batch.tree.link[%d]", i);
        if (i == 0 ? t->parent[0] != -1 : (t->parent[i] < 0 || t->parent[i] >= i))
            return rt_err_set(err, RT_EINVAL, where, "parent %d breaks topological order", t->parent[i]);
        if (t->joint_index[i] < -1 || t->joint_index[i] >= t->n_joints)
            return rt_err_set(err, RT_EINVAL, where, "joint index %d out of range", t->joint_index[i]);
        if (t->joint_type[i] < 0 || t->joint_type[i] > RT_JOINT_PRISMATIC)
            return rt_err_set(err, RT_EINVAL, where, "unknown joint type %d", t->joint_type[i]);
    }
    for (int j = 0; j < t->n_joints; j++)
        if (!(t->lower[j] <= t->upper[j])) {
            snprintf(where, sizeof where, "batch.tree.lower[%d]", j);
            return rt_err_set(err, RT_EINVAL, where, "lower %g > upper %g", (double)t->lower[j],
                              (double)t->upper[j]);
        }
    if (b->n_clips < 1 || !b->frame_off)
        return rt_err_set(err, RT_EINVAL, "batch.n_clips", "need at least one clip");
    if (b->frame_off[0] != 0) return rt_err_set(err, RT_EINVAL, "batch.frame_off[0]", "must be 0");
    for (int c = 0; c < b->n_clips; c++)
        if (b->frame_off[c + 1] <= b->frame_off[c]) {
            snprintf(where, sizeof where, "batch.frame_off[%d]", c + 1);
            return rt_err_set(err, RT_EINVAL, where, "offsets must increase (empty clip %d)", c);
        }
    size_t nf = (size_t)b->frame_off[b->n_clips], nt;
    if (b->n_targets < 0 || (b->n_targets > 0 && !b->target_link))
        return rt_err_set(err, RT_EINVAL, "batch.n_targets", "bad target count or no target_link");
    if (!rt_mul_size(nf, (size_t)b->n_targets, &nt) || nt > (size_t)1 << 40)
        return rt_err_set(err, RT_ELIMIT, "batch.n_targets", "too many target entries");
    for (int k = 0; k < b->n_targets; k++)
        if (b->target_link[k] < 0 || b->target_link[k] >= t->n_links) {
            snprintf(where, sizeof where, "batch.target_link[%d]", k);
            return rt_err_set(err, RT_EINVAL, where, "link %d out of range", b->target_link[k]);
        }
    long bad;
    if ((bad = bad_weight(b->target_wpos, nt)) >= 0) {
        snprintf(where, sizeof where, "batch.target_wpos[%ld]", bad);
        return rt_err_set(err, RT_EINVAL, where, "weight must be finite and >= 0");
    }
    if ((bad = bad_weight(b->target_wrot, nt)) >= 0) {
        snprintf(where, sizeof where, "batch.target_wrot[%ld]", bad);
        return rt_err_set(err, RT_EINVAL, where, "weight must be finite and >= 0");
    }
    if (b->target_wpos && !b->target_pos)
        for (size_t i = 0; i < nt; i++)
            if (b->target_wpos[i] > 0.0f)
                return rt_err_set(err, RT_EINVAL, "batch.target_pos", "position weights without targets");
    if (b->target_wrot && !b->target_rot)
        for (size_t i = 0; i < nt; i++)
            if (b->target_wrot[i] > 0.0f)
                return rt_err_set(err, RT_EINVAL, "batch.target_rot", "orientation weights without targets");
    int dim = rt_tangent_dim(t);
    if ((bad = bad_weight(b->w_vel, (size_t)dim)) >= 0)
        return rt_err_set(err, RT_EINVAL, "batch.w_vel", "weight %ld must be finite and >= 0", bad);
    if ((bad = bad_weight(b->w_acc, (size_t)dim)) >= 0)
        return rt_err_set(err, RT_EINVAL, "batch.w_acc", "weight %ld must be finite and >= 0", bad);
    if ((bad = bad_weight(b->w_rest, (size_t)t->n_joints)) >= 0)
        return rt_err_set(err, RT_EINVAL, "batch.w_rest", "weight %ld must be finite and >= 0", bad);
    if (b->n_capsules < 0 || b->n_capsules > SOLVER_MAX_CAPSULES || b->n_pairs < 0 ||
        b->n_pairs > SOLVER_MAX_PAIRS || (b->n_capsules && (!b->capsule_link || !b->capsule_seg)) ||
        (b->n_pairs && !b->pair))
        return rt_err_set(err, RT_EINVAL, "batch.n_pairs", "%d capsules, %d pairs (want 0..%d, 0..%d, with arrays)",
                          b->n_capsules, b->n_pairs, SOLVER_MAX_CAPSULES, SOLVER_MAX_PAIRS);
    for (int c = 0; c < b->n_capsules; c++) {
        snprintf(where, sizeof where, "batch.capsule[%d]", c);
        if (b->capsule_link[c] < 0 || b->capsule_link[c] >= t->n_links)
            return rt_err_set(err, RT_EINVAL, where, "link %d out of range", b->capsule_link[c]);
        for (int k = 0; k < 7; k++)
            if (!isfinite(b->capsule_seg[7 * c + k]) || fabsf(b->capsule_seg[7 * c + k]) > 100.0f)
                return rt_err_set(err, RT_EINVAL, where, "segment and radius must be finite, |v| <= 100 m");
        if (!(b->capsule_seg[7 * c + 6] >= 0.0f))
            return rt_err_set(err, RT_EINVAL, where, "radius must be >= 0");
    }
    for (int p = 0; p < b->n_pairs; p++)
        for (int k = 0; k < 2; k++)
            if (b->pair[2 * p + k] < 0 || b->pair[2 * p + k] >= b->n_capsules) {
                snprintf(where, sizeof where, "batch.pair[%d]", p);
                return rt_err_set(err, RT_EINVAL, where, "capsule %d out of range", b->pair[2 * p + k]);
            }
    if (b->n_ground < 0 || b->n_ground > b->n_capsules || (b->n_ground && !b->ground))
        return rt_err_set(err, RT_EINVAL, "batch.n_ground", "%d ground capsules of %d (want 0..%d, with the array)",
                          b->n_ground, b->n_capsules, b->n_capsules);
    for (int i = 0; i < b->n_ground; i++)
        if (b->ground[i] < 0 || b->ground[i] >= b->n_capsules) {
            snprintf(where, sizeof where, "batch.ground[%d]", i);
            return rt_err_set(err, RT_EINVAL, where, "capsule %d out of range", b->ground[i]);
        }
    if (!finite_nonneg(b->w_ground))
        return rt_err_set(err, RT_EINVAL, "batch.w_ground", "weight must be finite and >= 0");
    if (!finite_nonneg(b->w_collide) || !finite_nonneg(b->collide_margin) || b->collide_margin > 1.0f)
        return rt_err_set(err, RT_EINVAL, "batch.w_collide", "weight and margin must be finite, >= 0 (margin <= 1 m)");
    if ((bad = bad_weight(b->v_limit, (size_t)dim)) >= 0)
        return rt_err_set(err, RT_EINVAL, "batch.v_limit", "limit %ld must be finite and >= 0", bad);
    if (!finite_nonneg(b->w_vlim))
        return rt_err_set(err, RT_EINVAL, "batch.w_vlim", "weight must be finite and >= 0");
    const struct solver_options *o = &b->opt;
    if (o->max_lm_iters < 0 || o->max_lm_iters > SOLVER_MAX_LM_ITERS)
        return rt_err_set(err, RT_EINVAL, "opt.max_lm_iters", "%d (want 0..%d)", o->max_lm_iters, SOLVER_MAX_LM_ITERS);
    if (o->max_cg_iters < 1 || o->max_cg_iters > SOLVER_MAX_CG_ITERS)
        return rt_err_set(err, RT_EINVAL, "opt.max_cg_iters", "%d (want 1..%d)", o->max_cg_iters, SOLVER_MAX_CG_ITERS);
    if (o->init_iters < 0 || o->init_iters > SOLVER_MAX_INIT_ITERS)
        return rt_err_set(err, RT_EINVAL, "opt.init_iters", "%d (want 0..%d)", o->init_iters, SOLVER_MAX_INIT_ITERS);
    if (!(o->cg_tol >= 0.0f && o->cg_tol < 1.0f))
        return rt_err_set(err, RT_EINVAL, "opt.cg_tol", "%g (want [0, 1))", (double)o->cg_tol);
    if (o->linear != SOLVER_LINEAR_PCG && o->linear != SOLVER_LINEAR_DIRECT)
        return rt_err_set(err, RT_EINVAL, "opt.linear", "unknown linear solver %d", o->linear);
    if (!finite_nonneg(o->cg_tol) || !finite_nonneg(o->tol_cost) || !finite_nonneg(o->tol_grad) ||
        !finite_nonneg(o->tol_step))
        return rt_err_set(err, RT_EINVAL, "opt.tol", "tolerances must be finite and >= 0");
    if (!(o->lambda_init > 0.0f) || !isfinite(o->lambda_init) || !(o->init_lambda > 0.0f) ||
        !isfinite(o->init_lambda))
        return rt_err_set(err, RT_EINVAL, "opt.lambda_init", "damping must be finite and > 0");
    return RT_OK;
}
