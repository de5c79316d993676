/* quality.h -- quality figures of a solved trajectory against the targets
 * it was solved for: tracking errors (forward kinematics in double of the
 * result), joint-limit violations, joint velocity and jerk, foot sliding and
 * ground penetration. The report's "quality" object (NAME.report.json) is
 * rtg_quality_json(); the CSV path and the BVH path both use it.
 *
 * Definitions (docs/profiles.md "Quality figures"):
 * - position_error_m: |x_k(q_t) - xhat_kt| over every (frame, target) whose
 *   position weight is > 0; rotation_error_deg: the angle of
 *   R_k(q_t)^T Rhat_kt over those whose orientation weight is > 0. Each as
 *   mean, p95 (nearest rank) and max; per link the same, in "links".
 * - joint_limit_violations: (frame, joint) pairs outside [lower, upper] by
 *   more than RTG_QUALITY_LIMIT_TOL rad (float round-off of the bounds).
 * - max_joint_velocity_rad_s: max |q_j(t+1) - q_j(t)| / dt.
 * - mean_jerk: mean over t and j of |q_j(t+3) - 3q_j(t+2) + 3q_j(t+1) - q_j(t)| / dt^3
 *   (rad/s^3; 0 for clips shorter than 4 frames).
 * - foot_slide_m: for each foot, the horizontal distance its link origin
 *   travels between consecutive frames that are both in contact, summed.
 * - ground_penetration_m: the deepest point of any foot below z = 0 over the
 *   clip, as max(0, -(z_foot - sole_offset)), z_foot the foot link origin's
 *   height and sole_offset the distance from that origin down to the sole
 *   (kin_robot_sole_offset()). 0 when no foot is known.
 * Plausibility (docs/profiles.md "Quality figures"; the capsules and pairs
 * of retarget/collide.h):
 * - self_penetration_m: the deepest max(0, -d) of any checked capsule pair
 *   over the clip, with its pair of links and frame; self_penetration_frames:
 *   frames deeper than RTG_PEN_TOL.
 * - ground_penetration_frames: frames with a sole more than RTG_PEN_TOL
 *   below z = 0; lowest_body_z_m: the lowest sole or capsule point of another link.
 * - foot_slide_speed_m_s {p95, max}: a foot's horizontal speed between two
 *   consecutive contact frames; foot_slide_frames: those faster than
 *   RTG_SLIDE_SPEED_TOL, with the worst frame.
 * - contacts_kept: the share of the source's (frame, foot) contacts in
 *   which the robot's sole is at most RTG_CONTACT_KEPT_M above the ground
 *   (1 when there are none).
 * - normalized_jerk: per joint and per RTG_JERK_WINDOW_S window,
 *   sqrt(0.5 sum_t jerk_t^2 dt T^5 / A^2) (T the window's duration, A the
 *   joint's path length in it), averaged over the windows where it moves.
 * - max_body_speed_m_s: the fastest link origin; joint_velocity_over_limit_frames
 *   and _ratio: frames with a joint faster than its description's velocity
 *   limit, and the largest speed / limit.
 * - filters: the dataset filters (ProtoMotions' rules) the clip fails.
 * - max_joint_velocity_at, max_body_speed_at, lowest_body_at: where the
 *   speed and ground figures of those filters occur (joint or link, frame)
 *   and what the targets do there (source_speed_m_s: the fastest position
 *   target between that frame and the next; tracking_error_m: the largest
 *   position error in those frames; lowest_target_z_m: the lowest position
 *   target of that frame), so that a report can tell a fast or low source
 *   from a robot that cannot follow it; source_max_speed_m_s: the fastest
 *   position target over the clip.
 *
 * Memory: rtg_quality_json() returns a cJSON object the caller deletes
 * (or attaches to a tree that it deletes). */
#ifndef RT_RTG_QUALITY_H
#define RT_RTG_QUALITY_H

#include <cjson/cJSON.h>

#include "../kinematics/robot.h"
#include "pool.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RTG_QUALITY_LIMIT_TOL 1e-6

struct rtg_quality_stat {
    double mean, p95, max;
    int n; /* samples */
};

struct rtg_quality {
    struct rtg_quality_stat pos_m, rot_deg;
    int joint_limit_violations;
    int frames_at_limit;          /* frames with a joint within 1e-4 rad of a bound */
    double max_joint_velocity;    /* rad/s */
    double mean_jerk;             /* rad/s^3 */
    double foot_slide_m;
    double ground_penetration_m;
    int contact_frames;           /* (frame, foot) pairs in contact */
    double self_penetration_m;
    int self_penetration_frames, self_pair, self_frame; /* pair: index into t->pair, -1 */
    int ground_penetration_frames;
    double lowest_body_z_m;
    double foot_slide_speed_p95, foot_slide_speed_max;
    int foot_slide_frames, slide_frame;
    double contacts_kept;
    double normalized_jerk;
    double max_body_speed_m_s;
    int joint_velocity_over_limit_frames;
    double joint_velocity_over_limit_ratio;
    unsigned filters;             /* RTG_FILTER_* bits */
    /* Where the speed and ground filters look, and what the source does
     * there (filter_at_json): the fastest joint (coordinate index) and
     * link between frames f and f + 1, the lowest body point's frame (-1:
     * none); per place the fastest position target's speed over those
     * frames and the largest position tracking error in them. */
    int fast_joint, fast_joint_frame, fast_link, fast_link_frame, low_frame;
    double src_speed_joint, src_err_joint, src_speed_link, src_err_link, low_target_z;
    double source_max_speed_m_s;  /* the fastest position target over the clip */
};

#define RTG_JERK_WINDOW_S 1.0    /* s: the normalized jerk's window */
#define RTG_PEN_TOL 0.01          /* m: a penetration frame is deeper than this */
#define RTG_SLIDE_SPEED_TOL 0.01  /* m/s: a sliding contact frame */
#define RTG_CONTACT_KEPT_M 0.02   /* m: a sole this close to the ground keeps a contact */
/* The dataset filters (ProtoMotions' motion filters). */
#define RTG_FILTER_BELOW_GROUND 0.05       /* any body below z = -0.05 m */
#define RTG_FILTER_BODY_SPEED 15.0         /* a body faster than 15 m/s */
#define RTG_FILTER_JOINT_SPEED 40.0        /* a joint faster than 40 rad/s */
#define RTG_FILTER_FLOAT_HEIGHT 0.2        /* every body above 0.2 m ... */
#define RTG_FILTER_FLOAT_SECONDS 1.0       /* ... for more than 1 s */
#define RTG_FILTER_SELF_DEPTH 0.05         /* self-penetration deeper than 5 cm */
#define RTG_FILTER_SELF_FRAMES_DEPTH 0.03  /* more than 10 frames deeper than 3 cm */
#define RTG_FILTER_SELF_FRAMES 10
enum {
    RTG_FILTER_BELOW = 1,
    RTG_FILTER_BODY_FAST = 2,
    RTG_FILTER_JOINT_FAST = 4,
    RTG_FILTER_FLOATING = 8,
    RTG_FILTER_SELF_DEEP = 16,
    RTG_FILTER_SELF_LONG = 32,
    RTG_FILTER_LAST = 32
};

/* The name of filter bit `bit` in the report ("joint_speed"), never NULL. */
const char *rtg_quality_filter_name(int bit);

/* Computes the figures above for `n_frames` rows of `state` (robot state
 * layout, the frames of `t`). Per-link statistics go to `per_link_pos` /
 * `per_link_rot` when non-NULL ([t->n_targets] each). Returns RT_ENOMEM
 * (figures unspecified) when scratch space cannot be had. */
enum rt_status rtg_quality_compute(const struct kin_robot *r, const struct rtg_targets *t,
                                   const float *state, int n_frames, struct rtg_quality *q,
                                   struct rtg_quality_stat *per_link_pos,
                                   struct rtg_quality_stat *per_link_rot);

/* Feet on the ground after the solve, then the figures. With `lift`: where
 * a robot that cannot follow its targets (a squat deeper than its knees
 * bend) pushes a foot below z = 0, the whole robot is lifted in that frame.
 * The lift is the per-frame penetration (t->foot_link, both needed; sole
 * offset as kin_robot_sole_offset()) through a running max and then a
 * running mean, both RTG_LIFT_WINDOW_S wide, so it rises and falls smoothly
 * and is at least the penetration in every frame; only the root height
 * (column 2) of `state` changes. Then the figures of rtg_quality_compute()
 * over all of t's frames. One forward-kinematics pass serves both: the
 * frames the lift raises are evaluated again, so the figures are those of
 * the lifted state, bit for bit. RT_ENOMEM (figures unspecified). */
#define RTG_LIFT_WINDOW_S 0.1
enum rt_status rtg_quality_finish(const struct kin_robot *r, const struct rtg_targets *t, float *state,
                                  int lift, struct rtg_quality *q, struct rtg_quality_stat *per_link_pos,
                                  struct rtg_quality_stat *per_link_rot);

/* rtg_quality_finish() with the pass over the frames shared out, in pieces
 * of frames, with the workers of `pool` that have nothing else to do
 * (rtg_pool_for_idle; NULL: this thread alone). The same bits. */
enum rt_status rtg_quality_finish_on(struct rtg_pool *pool, const struct kin_robot *r, const struct rtg_targets *t,
                                     float *state, int lift, struct rtg_quality *q,
                                     struct rtg_quality_stat *per_link_pos, struct rtg_quality_stat *per_link_rot);

/* The report's "quality" object of computed figures (per-link statistics
 * [t->n_targets] each). NULL only when out of memory. */
cJSON *rtg_quality_to_json(const struct kin_robot *r, const struct rtg_targets *t,
                           const struct rtg_quality *q, const struct rtg_quality_stat *per_link_pos,
                           const struct rtg_quality_stat *per_link_rot);

/* {"position_error_m":{"mean","p95","max"},"rotation_error_deg":{...},
 *  "links":[{"link","position_error_m":{...},"rotation_error_deg":{...}}],
 *  "joint_limit_violations","frames_at_limit","max_joint_velocity_rad_s",
 *  "mean_jerk","foot_slide_m","ground_penetration_m","contact_frames"}.
 * A statistic with no samples is null. NULL only when out of memory. */
cJSON *rtg_quality_json(const struct kin_robot *r, const struct rtg_targets *t,
                        const float *state, int n_frames);

/* Per-frame series of `n_frames` rows of `state` against `t`, for plotting
 * beside the report (the web page's curves; GET /v1/jobs/ID/result?series=1):
 *   {"links":[{"link":NAME,"position_error_m":[..],"rotation_error_deg":[..]}],
 *    "feet":[{"side":"left"|"right","link":NAME,"height_m":[..],"contact":[0|1,..]}]}
 * "links" follows the report's quality.links (one per target, same order);
 * an error is null in a frame where its target has no weight. height_m is
 * the sole's height above z = 0 (the foot link origin's height less the
 * sole offset, as ground_penetration_m); contact the target's flags (all 0
 * when none were detected). Values are rounded to 1e-6 (micrometres,
 * micro-degrees). Only the feet t knows appear. NULL only when out of
 * memory. */
cJSON *rtg_quality_series_json(const struct kin_robot *r, const struct rtg_targets *t,
                               const float *state, int n_frames);

#ifdef __cplusplus
}
#endif
#endif
