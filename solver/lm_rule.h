/* lm_rule.h -- the Levenberg-Marquardt decisions of the solver, written
 * once for both backends.
 *
 * The CPU backend (solver/cpu/cpu_lm.c lm_run) and the CUDA backend's host
 * driver (solver/cuda/lm.cu cuda_lm_solve) run the same per-clip loop on
 * the same clip scalars (costs, predicted decrease, step and state norms,
 * all reduced in the DESIGN.md order). What each clip does with those
 * scalars -- the stopping tests after a linearization, accept or reject,
 * the Nielsen damping update, the stopping tests after a step -- lives here
 * and nowhere else, so the two backends cannot drift apart: the contract
 * is the same bits (DESIGN.md "The numerical contract", point 3). The
 * per-frame rules (per-frame damping factor mu, the neighbour repair test
 * of the initialization, the per-frame LM of frame_init_solve and its warp
 * executor) are RT_HD and run on the device as well.
 *
 * Every function is a pure expression of its arguments in one fixed
 * order; -ffp-contract=off (cc, nvcc's host compiler) and -fmad=false keep
 * the compilers from fusing. Valid C11 and C++ (extern "C"-safe); include
 * after solver.h (CUDA sources: through frame_dev.cuh). */
#ifndef RT_SOLVER_LM_RULE_H
#define RT_SOLVER_LM_RULE_H

#include <math.h> /* sqrtf: correctly rounded on host and device */

#include "solver.h"
#include "reduce.h" /* RT_HD */

#ifdef __cplusplus
extern "C" {
#endif

/* Per-clip damping bounds: a clip whose damping passes LM_RULE_LAMBDA_MAX
 * on a rejected step stops (SOLVER_TERM_DAMPING); an accepted step never
 * shrinks it below LM_RULE_LAMBDA_MIN. */
#define LM_RULE_LAMBDA_MIN 1e-9f
#define LM_RULE_LAMBDA_MAX 1e10f
/* A step "matches its model" (lm_rule_step's quadratic test) when its gain
 * ratio is within this of 1. */
#define LM_RULE_QUAD_RHO 0.1f
/* The same bounds of the independent per-frame LM (frame_init_solve). */
#define LM_RULE_INIT_LAMBDA_MIN 1e-7f
#define LM_RULE_INIT_LAMBDA_MAX 1e10f
/* The per-frame LM stops after an accepted step that lowered the frame's
 * cost by at most this fraction: the frame is converged as far as a
 * starting point goes (the coupled solve polishes it). */
#define LM_RULE_INIT_STOP 1e-4f
/* Per-frame damping factor mu_t in [1, LM_RULE_MU_MAX]. */
#define LM_RULE_MU_MAX 1e6f
/* Initialization repair (cpu_lm.c init_solve, lin.cu repair_kernel): a
 * frame whose tracking cost exceeds RATIO times a same-clip neighbour's
 * plus FLOOR restarts from that neighbour; at most ROUNDS rounds. */
#define LM_RULE_INIT_REPAIR_RATIO 2.0f
#define LM_RULE_INIT_REPAIR_FLOOR 1e-7f
#define LM_RULE_INIT_REPAIR_ROUNDS 8
/* The per-frame initialization (frame_init_solve, its repair rounds) weighs
 * the self-collision pairs this many times the solve's w_collide: each frame
 * alone picks its basin there, and one that lands with limbs through each
 * other (H1 knees on milad.bvh) stays in that basin in the coupled solve.
 * The coupled solve uses w_collide itself (docs/solver.md "The stall and
 * its two remedies"). */
#define LM_RULE_INIT_COLLIDE_SCALE 3.0f

/* The self-collision weight of the per-frame initialization. */
RT_HD float lm_rule_init_collide(float w_collide)
{
    return LM_RULE_INIT_COLLIDE_SCALE * w_collide;
}

/* The Nielsen shrink of an accepted step with gain ratio rho > 0:
 * lambda * max(1 - (2 rho - 1)^3, 1/3), not below lambda_min. */
RT_HD float lm_rule_shrink(float lambda, float rho, float lambda_min)
{
    float t2 = 2.0f * rho - 1.0f, fct = 1.0f - t2 * t2 * t2;
    lambda = lambda * (fct > (1.0f / 3.0f) ? fct : (1.0f / 3.0f));
    if (lambda < lambda_min) lambda = lambda_min;
    return lambda;
}

/* The gain ratio: actual over predicted decrease, -1 when the model
 * predicts no decrease. */
RT_HD float lm_rule_rho(float cost, float cost_new, float pred)
{
    return pred > 0.0f ? (cost - cost_new) / pred : -1.0f;
}

/* The stopping tests of a selected clip right after its linearization at
 * a state of cost `cost` (gmax: max |g|). Returns SOLVER_TERM_NONE while
 * the clip goes on. */
static inline int lm_rule_after_lin(const struct solver_options *o, float gmax, float cost, int lm_iters)
{
    if (gmax < o->tol_grad) return SOLVER_TERM_GRADIENT;
    if (!(cost > 0.0f)) return SOLVER_TERM_COST;
    if (lm_iters >= o->max_lm_iters) return SOLVER_TERM_MAX_ITERS;
    return SOLVER_TERM_NONE;
}

/* One clip's decision on its trial step. In: *cost (at the state), cost_t
 * (at the trial state), pred (predicted decrease), dd = d.d and xx = x.x
 * of the step and the state (clip dot products), *lambda, *nu. Out:
 * *lambda, *nu and *cost updated, *term set when the clip stops (left
 * alone otherwise). Returns 1 when the step is accepted (the caller copies
 * the trial state and relinearizes), 0 when it is rejected.
 * A rejected step that is already negligible cannot be improved by more
 * damping: the clip has converged to float precision (SOLVER_TERM_STEP).
 * Nor can one whose predicted and actual relative decrease are both below
 * tol_cost (MINPACK's ftol test): the model promises no gain the float
 * costs could show, and the cost did not move beyond that either; the
 * clip stops on SOLVER_TERM_COST instead of shrinking its step until the
 * step test holds (on bench-e2e's windows of the G1 reference that was
 * up to 5 more iterations after the cost had settled).
 * An accepted step stops the clip on SOLVER_TERM_COST as well when the
 * convergence is plainly quadratic: this step and the accepted one before
 * it both matched their model (rho within LM_RULE_QUAD_RHO of 1), and the
 * decrease extrapolated one step further, dec * (dec / dec_prev), is below
 * tol_cost * cost, so the next step could gain nothing the float costs
 * could show (bench-e2e's windows: 6% of their cost, then 1e-5; the
 * third step, rejected or accepted, moved no final cost by more than
 * 2.3e-7 of it).
 * *dec_prev (0 at the clip's start) carries the last accepted step's
 * decrease when it matched its model, 0 when it did not. */
static inline int lm_rule_step(const struct solver_options *o, float *cost, float cost_t, float pred, float dd,
                               float xx, float *lambda, float *nu, float *dec_prev, int *term)
{
    float rho = lm_rule_rho(*cost, cost_t, pred);
    float dn = sqrtf(dd), xn = sqrtf(xx);
    if (rho > 0.0f) {
        float dec = *cost - cost_t, tc = o->tol_cost * *cost;
        int model = rho >= 1.0f - LM_RULE_QUAD_RHO && rho <= 1.0f + LM_RULE_QUAD_RHO;
        *lambda = lm_rule_shrink(*lambda, rho, LM_RULE_LAMBDA_MIN);
        *nu = 2.0f;
        if (dec < tc) *term = SOLVER_TERM_COST;
        else if (dn < o->tol_step * (xn + o->tol_step)) *term = SOLVER_TERM_STEP;
        else if (model && *dec_prev > 0.0f && dec * (dec / *dec_prev) < tc) *term = SOLVER_TERM_COST;
        *dec_prev = model ? dec : 0.0f;
        *cost = cost_t;
        return 1;
    }
    *lambda = *lambda * *nu;
    *nu = *nu * 2.0f;
    float tc = o->tol_cost * *cost;
    if (tc > 0.0f && pred < tc && cost_t - *cost < tc) *term = SOLVER_TERM_COST;
    else if (*lambda > LM_RULE_LAMBDA_MAX) *term = SOLVER_TERM_DAMPING;
    else if (dn < o->tol_step * (xn + o->tol_step)) *term = SOLVER_TERM_STEP;
    return 0;
}

/* The progress test of the coupled solve (docs/solver.md "Default
 * options"): every LM_RULE_PROGRESS_EVERY iterations from LM_RULE_PROGRESS_FROM
 * on, a clip whose cost fell by less than LM_RULE_PROGRESS_GAIN of it over the
 * last LM_RULE_PROGRESS_EVERY iterations stops (SOLVER_TERM_PROGRESS). A clip
 * still falling steadily (a long contact the initialization left the body
 * far from, H1 edge/test_mocapbank.bvh) goes on up to max_lm_iters; the
 * others stop where a budget of LM_RULE_PROGRESS_FROM would have. */
#define LM_RULE_PROGRESS_FROM 24
#define LM_RULE_PROGRESS_EVERY 8
#define LM_RULE_PROGRESS_GAIN 0.05f

/* After every clip's step decision: an active clip with a termination
 * stops, one at the iteration limit stops with SOLVER_TERM_MAX_ITERS, and
 * one that fails the progress test above stops with SOLVER_TERM_PROGRESS.
 * `cost` is the clip's cost at its state, *mark its cost at the last
 * multiple of LM_RULE_PROGRESS_EVERY iterations (the coupled solve's initial
 * cost before the first), updated here. Updates *active and *term. */
static inline void lm_rule_end_iter(const struct solver_options *o, int lm_iters, float cost, float *mark,
                                    int *active, int *term)
{
    if (*active && *term != SOLVER_TERM_NONE) *active = 0;
    if (*active && lm_iters >= o->max_lm_iters) { *term = SOLVER_TERM_MAX_ITERS; *active = 0; }
    if (*active && lm_iters % LM_RULE_PROGRESS_EVERY == 0) {
        if (lm_iters >= LM_RULE_PROGRESS_FROM && !(cost < (1.0f - LM_RULE_PROGRESS_GAIN) * *mark)) {
            *term = SOLVER_TERM_PROGRESS;
            *active = 0;
        }
        *mark = cost;
    }
}

/* Per-frame damping (options.per_frame_damping): the frame's own gain
 * ratio, its partial cost change (part - part_t) over its share pred_f of
 * the clip's predicted decrease pred; only frames carrying more than 1% of
 * the average share (pred / T over T frames) are judged. Returns the new
 * mu. */
RT_HD float lm_rule_mu(float mu, float part, float part_t, float pred_f, float pred, float T)
{
    float share = 0.01f * pred / T;
    if (pred_f > 0.0f && pred_f > share) {
        float rho = (part - part_t) / pred_f;
        float m = mu;
        if (rho < 0.25f) m = m * 4.0f;
        else if (rho > 0.75f) m = m / 3.0f;
        mu = m < 1.0f ? 1.0f : (m > LM_RULE_MU_MAX ? LM_RULE_MU_MAX : m); /* rt_clampf */
    }
    return mu;
}

/* Is the per-frame LM done after an accepted step from cost to cost_new? */
RT_HD int lm_rule_init_done(float cost, float cost_new)
{
    return cost - cost_new <= LM_RULE_INIT_STOP * cost;
}

/* The repair test of the initialization: does a frame of independent-solve
 * cost `part` restart from a neighbour of cost `part_nb`? */
RT_HD int lm_rule_repair_wants(float part, float part_nb)
{
    return part > LM_RULE_INIT_REPAIR_RATIO * part_nb + LM_RULE_INIT_REPAIR_FLOOR;
}

#ifdef __cplusplus
}
#endif
#endif
