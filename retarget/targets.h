/* targets.h -- per-frame link targets for one clip: what a source (a BVH
 * clip through a profile, or another robot's trajectory) asks of the robot,
 * in the layout struct solver_batch consumes, plus the per-clip weights.
 *
 * Memory: a struct rtg_targets owns its arrays; rtg_targets_free() releases
 * them (NULL-safe) and leaves the struct zeroed. */
#ifndef RT_RTG_TARGETS_H
#define RT_RTG_TARGETS_H

#include "../kinematics/capsule.h"
#include "../kinematics/robot.h"
#include "../base/status.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RTG_MAX_TARGETS 64

/* How a source's lengths became metres, z up (docs/profiles.md "Units and
 * up axis"). scale > 0 and up is 'y' or 'z' once settled; unit names the
 * recognized unit ("m", "cmu", "in", "cm", "mm", static) or is NULL when
 * the profile gave the scale or it was guessed; guessed is 1 when no unit
 * was recognized and the scale makes the source's median height
 * RTG_NOMINAL_HEIGHT_M (retarget.c), height_units being that median in
 * file units; up_from_body is 1 when the up axis came from the head and
 * feet over the clip (0: given, or the frame-0 span). All zero for a robot
 * source. */
struct rtg_source_units {
    double scale;
    char up;
    const char *unit;
    int guessed, up_from_body;
    double height_units;
};

/* Invariants: target_link[k] is a link index (topological order) of the
 * robot the targets were built for; the frame arrays are indexed
 * i = frame * n_targets + k exactly as in struct solver_batch; a weight of 0
 * means "no target this frame". w_vel/w_acc have tangent_dim entries,
 * rest/w_rest n_dof entries. `init` is NULL or n_frames * state_cols. */
struct rtg_targets {
    int n_frames, n_targets;
    double frame_time;   /* seconds between frames */
    int *target_link;    /* [n_targets] */
    float *pos;          /* [n_frames * n_targets * 3] */
    float *rot;          /* [n_frames * n_targets * 4] x y z w */
    float *wpos;         /* [n_frames * n_targets] */
    float *wrot;         /* [n_frames * n_targets] */
    float *w_vel, *w_acc;
    float *rest, *w_rest;
    float *init;
    /* Feet, for the ground and contact figures of the report: link indices
     * (-1 if unknown) and per-frame contact flags (NULL if not detected). */
    int foot_link[2];
    unsigned char *contact; /* [n_frames * 2] */
    /* planted[f * 2 + side]: a contact frame of that foot while the other
     * foot swings clear of its own contacts (beyond the blend window): the
     * solver's planted foot (solver.h), which the self-collision term does
     * not push. NULL when contact is. */
    unsigned char *planted; /* [n_frames * 2] */
    double sole_offset;     /* m from a foot link origin down to its sole; < 0: the robot's */
    /* Self-collision (retarget/collide.h; solver.h): the robot's capsules
     * (double, for the report; float copy for the solver), the pairs that
     * can touch, the hinge's weight and margin. n_pairs 0: none. */
    int n_capsules, n_pairs;
    struct kin_capsule *capsules;
    int *capsule_link;
    float *capsule_seg;
    int *pair;
    float w_collide, collide_margin;
    /* The ground (solver.h): on_ground when the targets stand on z = 0 (the
     * profile's ground step ran with both feet known); then the capsules
     * kept above it, every one but the legs' (retarget/collide.h),
     * ground[0..n_ground), with the hinge weight w_ground. */
    int on_ground, n_ground;
    int *ground;
    float w_ground;
    /* Velocity limits (solver.h): per tangent coordinate the largest change
     * per frame, from the robot's joint velocity limits (NULL: none). */
    float *v_limit;
    float w_vlim;
    struct rtg_source_units units; /* the source's units (the report names a guessed one) */
};

/* Allocates arrays for n_frames x n_targets (weights zeroed) and the
 * per-coordinate weight arrays for `r`. RT_ELIMIT / RT_ENOMEM on failure,
 * leaving `t` zeroed. */
enum rt_status rtg_targets_alloc(struct rtg_targets *t, const struct kin_robot *r, int n_frames,
                                 int n_targets, struct rt_err *err);

void rtg_targets_free(struct rtg_targets *t);

/* The velocity-limit term of robot r for t's frame time: v_limit of every
 * joint, limit x frame time, the limit its description's (URDF `velocity`)
 * or, where it gives none (MJCF, a URDF without `velocity`),
 * RTG_VLIM_FALLBACK; weight RTG_W_VLIM_REF x `scale` for 30 fps, scaled
 * with the frame rate like the smoothness weights. scale 0: none (v_limit
 * NULL). RT_ENOMEM. */
#define RTG_W_VLIM_REF 1.0
/* rad/s (m/s for a prismatic joint) of the soft bound of a joint with no
 * velocity limit in its description: half the joint_speed dataset filter's
 * 40 rad/s, because the bound is soft and a joint overshoots it where the
 * robot cannot follow (Booster T1's URDF gives 10.9-18.8 rad/s; its MJCF
 * none, where 01_01.bvh reached 128 rad/s without a bound, 48.7 at 40,
 * 38.7 at 25). */
#define RTG_VLIM_FALLBACK 20.0
enum rt_status rtg_targets_velocity_limits(struct rtg_targets *t, const struct kin_robot *r, double scale,
                                           struct rt_err *err);

/* Default per-coordinate weights (smoothness, rest) for robot `r`; see
 * docs/solver.md. Fills t->w_vel, w_acc, rest, w_rest. */
void rtg_targets_default_weights(struct rtg_targets *t, const struct kin_robot *r);

/* Targets for robot `dst` from a trajectory of robot `src` (FK in double of
 * every frame): the identity mapping's links that exist in both robots, each
 * tracked in position and orientation with weight 1, plus default weights.
 * RT_ENOTFOUND naming the missing links when fewer than 2 links match.
 * The frames' forward kinematics go in pieces of frames to the idle
 * workers of `pool` (rtg_pool_for_idle; NULL: this thread alone): the same
 * bits. */
enum rt_status rtg_targets_from_traj(struct rtg_pool *pool, const struct kin_robot *src, const double *states,
                                     int n_frames, double frame_time,
                                     const struct kin_robot *dst, struct rtg_targets *t,
                                     struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
