/* solver.h -- the public API of the trajectory-IK solver.
 *
 * The solver takes a kinematic tree in flat arrays and per-frame link
 * targets and returns, for every frame of every clip of a batch, the robot's
 * floating-base pose and joint angles. It knows nothing of URDF, BVH, JSON,
 * HTTP or SQL (DESIGN.md "Layout"). Formulation: SOLVER.md and
 * docs/solver.md. Numerical contract: DESIGN.md "The numerical contract":
 * a clip's result is the same bits solo or batched, run to run, for any
 * thread count, and (goal) on CPU and CUDA.
 *
 * Batches are solved through a backend (backend.h: solver_backend_init(),
 * solver_backend_solve()); how many threads or devices a backend uses is
 * its configuration, not an option of the problem.
 *
 * Memory: every pointer in these structs is borrowed; the caller owns the
 * arrays and keeps them alive for the duration of solver_backend_solve().
 * Output arrays are caller-allocated. */
#ifndef RT_SOLVER_H
#define RT_SOLVER_H

#include "../base/status.h"
#include "../base/tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Termination reasons, per clip. */
enum solver_termination {
    SOLVER_TERM_NONE = 0,
    SOLVER_TERM_COST = 1,      /* relative cost decrease below tol_cost (lm_rule_step) */
    SOLVER_TERM_GRADIENT = 2,  /* gradient norm below tol_grad */
    SOLVER_TERM_STEP = 3,      /* step norm below tol_step */
    SOLVER_TERM_MAX_ITERS = 4, /* LM iteration limit reached */
    SOLVER_TERM_DAMPING = 5,   /* damping grew past its ceiling: no descent found */
    SOLVER_TERM_PROGRESS = 6      /* the cost fell too little over the last iterations (lm_rule.h) */
};
const char *solver_termination_str(int term); /* "cost", "gradient", ... never NULL */

enum solver_linear {
    SOLVER_LINEAR_PCG = 0,   /* block-Jacobi PCG in float (default) */
    SOLVER_LINEAR_DIRECT = 1 /* banded Cholesky in double (LAPACKE dpbsv); reference */
};

struct solver_options {
    int max_lm_iters;  /* LM iterations of the coupled solve */
    int max_cg_iters;  /* CG budget per LM iteration */
    float cg_tol;      /* stop CG at ||r|| <= cg_tol * ||g|| */
    float lambda_init; /* initial LM damping */
    float tol_cost;    /* stop when relative cost decrease < tol_cost */
    float tol_grad;    /* stop when ||g||_inf < tol_grad */
    float tol_step;    /* stop when ||dx|| < tol_step * (||x|| + tol_step) */
    int init_iters;    /* per-frame independent LM iterations before the coupled solve (0: none) */
    int linear;        /* enum solver_linear */
    int per_frame_damping; /* 1: damping lambda * mu_t * D_t with a per-frame factor mu_t >= 1
                            * grown where frame t's local model was poor (SOLVER.md remedy 2);
                            * 0: one lambda for the whole clip */
    float init_lambda;     /* initial damping of the per-frame initialization solves */
};

/* The ranges of the options a user may set (solver_batch_check() refuses
 * others; retarget/options.c's table gives users these same ranges). */
#define SOLVER_MAX_LM_ITERS 10000
#define SOLVER_MAX_CG_ITERS 10000
#define SOLVER_MAX_INIT_ITERS 10000
#define SOLVER_MAX_CAPSULES 1024
#define SOLVER_MAX_PAIRS 8192

/* Fills `o` with the defaults documented in docs/solver.md. */
void solver_options_default(struct solver_options *o);

/* A batch of clips sharing one tree, one target layout and one set of weights.
 *
 * Frames of all clips are concatenated; clip c owns global frames
 * [frame_off[c], frame_off[c+1]). frame_off[0] = 0, strictly increasing
 * (every clip has at least one frame).
 *
 * Targets: n_targets mapped links, target_link[k] in [0, n_links). For global
 * frame f and target k, index i = f * n_targets + k:
 *   target_pos[3i..3i+2]  world position (m)
 *   target_rot[4i..4i+3]  world orientation, unit quaternion (x, y, z, w)
 *   target_wpos[i]        position weight (0: no position target this frame)
 *   target_wrot[i]        orientation weight (0: no orientation target)
 * Either target array may be NULL when all its weights are NULL/zero.
 *
 * Weights per tangent coordinate (tangent_dim entries: base dp, dphi, then joints):
 *   w_vel, w_acc: first/second-difference smoothness weights (NULL: 0).
 * Rest pose per joint: rest[n_joints], w_rest[n_joints] (NULL: 0).
 *
 * init: optional initial state [n_frames_total * state_cols]; NULL starts
 * every frame at the rest pose with the base placed at the root target if
 * one exists (else the origin).
 *
 * Self-collision (docs/solver.md "Self-collision"): n_capsules capsules,
 * capsule c fixed to link capsule_link[c] with capsule_seg[7c..7c+6] =
 * segment end a[3], end b[3] (link frame, m), radius; n_pairs pairs of
 * capsule indices pair[2p], pair[2p+1]. A pair whose signed distance d
 * (segment distance minus both radii) is below collide_margin adds the
 * within-frame residual w_collide (collide_margin - d). n_pairs = 0: none.
 * Ground: the n_ground capsules ground[0..n_ground) (indices into the
 * capsules) are kept above the plane z = 0: one whose lowest point h (its
 * segment's lower end's z minus its radius) is below 0 adds the
 * within-frame residual w_ground (0 - h). n_ground = 0: none. */
struct solver_batch {
    const struct rt_tree *tree;
    int n_clips;
    const int *frame_off; /* [n_clips + 1] */
    int n_targets;
    const int *target_link;
    const float *target_pos;
    const float *target_rot;
    const float *target_wpos;
    const float *target_wrot;
    const float *w_vel;
    const float *w_acc;
    const float *rest;
    const float *w_rest;
    const float *init;
    int n_capsules;
    const int *capsule_link;  /* [n_capsules] */
    const float *capsule_seg; /* [n_capsules * 7] */
    int n_pairs;
    const int *pair;          /* [n_pairs * 2] */
    int n_ground;
    const int *ground;        /* [n_ground] capsule indices */
    float w_ground;
    float w_collide;
    float collide_margin;
    /* Planted feet (docs/solver.md "Self-collision"): planted[2f + s] != 0
     * when link foot_link[s] stands on the ground in global frame f (a
     * source contact). A pair of a planted foot's capsule and a capsule of
     * any link but the other planted foot moves only that other link's
     * chain: the ground holds a planted foot, the collision term does not
     * push it. NULL: none. */
    const unsigned char *planted; /* [n_frames_total * 2] */
    int foot_link[2];
    /* Velocity limits (docs/solver.md "Velocity limits"): v_limit[c] > 0 is
     * the largest |dq_t| of tangent coordinate c per frame (the limit in
     * units per second times the frame time); a forward difference beyond
     * it adds the residual w_vlim (dq_t - clamp(dq_t, -v_limit, v_limit)).
     * NULL: none. */
    const float *v_limit; /* [tangent_dim] */
    float w_vlim;
    struct solver_options opt;
    /* Optional progress callback, called from the solving thread after each
     * LM iteration of the batch: (user, lm_iteration, clips_done). */
    void (*progress)(void *user, int lm_iter, int clips_done);
    void *progress_user;
};

struct solver_clip_result {
    int lm_iters;
    int cg_iters;        /* summed over LM iterations */
    int termination;     /* enum solver_termination */
    float start_cost;    /* cost of the starting state, before the per-frame initialization */
    float initial_cost;  /* cost at the start of the coupled solve */
    float final_cost;    /* 0.5 * ||r||^2 at the result */
    float final_lambda;  /* clip damping at the end */
    int frames_at_bound; /* frames with at least one joint at a limit */
    int limit_violations;/* joint values outside [lower, upper]: always 0 */
    double seconds;      /* wall time of the batch call the clip was in */
};

struct solver_result {
    float *state;                       /* [n_frames_total * state_cols], caller-allocated */
    struct solver_clip_result *clips;   /* [n_clips], caller-allocated */
};

/* Validates a batch (sizes, offsets, indices, weights finite and >= 0,
 * options in range, tangent_dim <= 64, n_links <= 256). Returns RT_EINVAL
 * with `where` naming the field. */
enum rt_status solver_batch_check(const struct solver_batch *b, struct rt_err *err);

/* Counts over T rows of a state (state_cols floats each) the joint values
 * outside their limits into r->limit_violations and the frames with a joint
 * exactly at a limit into r->frames_at_bound (every backend's clip result). */
void solver_clip_bounds(const struct rt_tree *t, const float *state, int T, struct solver_clip_result *r);

#ifdef __cplusplus
}
#endif
#endif
