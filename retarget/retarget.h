/* retarget.h -- from a source motion (a BVH clip, joint positions, or
 * another robot's trajectory) to per-frame link targets for a robot, through a profile:
 * skeleton recognition, units and up axis, scale, orientation frames and
 * their offsets, ground placement, foot contacts and their anchors. Also the
 * per-frame baseline solve (`--per-frame`). The method is documented in
 * docs/profiles.md ("How targets are built").
 *
 * Memory: targets built here are owned by the caller's struct rtg_targets
 * and released with rtg_targets_free(); profiles returned are freed with
 * rtg_profile_free(). */
#ifndef RT_RTG_RETARGET_H
#define RT_RTG_RETARGET_H

#include "../kinematics/bvh.h"
#include "../kinematics/joints.h"
#include "profile.h"
#include "../kinematics/robot.h"
#include "../base/status.h"
#include "../solver/backend.h"
#include "pool.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Recognizes a clip's skeleton by its joint names: returns the name of the
 * bundled profile (static string) for robot `robot_name` ("g1", "h1"; a
 * URDF robot name such as "g1_29dof_rev_1_0" matches the profile robot
 * "g1") whose every referenced joint the clip has, or NULL. Joint names
 * match exactly or after a "namespace:" prefix ("mixamorig:Hips"). When
 * several fit, the one referencing the most joints wins. */
const char *rtg_retarget_detect_profile(const struct kin_clip *clip, const char *robot_name);

/* As rtg_retarget_detect_profile(), but also checks the robot's links and
 * loads the profile. When no bundled profile fits by name, the skeleton is
 * recognized by name synonyms and topology and a profile is built from the
 * closest bundled template (rtg_skeleton_auto_profile(), named
 * "auto:<template>"); for a robot no bundled profile targets, the template
 * is filled with the robot's own role links (roles.h,
 * rtg_skeleton_auto_profile_roles(), "auto:roles:<template>"). Fails with
 * RT_EINVAL when that fails too; the message lists the roles it could not
 * find: "cannot map: no left foot (looked for Foot/Ankle under LeftLeg),
 * ...", or the robot's: "cannot map robot 'panda': no pelvis, ...". */
enum rt_status rtg_retarget_pick_profile(const struct kin_clip *clip, const struct kin_robot *robot,
                                         struct rtg_profile **out, struct rt_err *err);

/* The automatic mapping of `clip` onto `robot` with the robot links that
 * a roles profile (n_links == 0, "robot_roles") names for some roles, the
 * other roles found by rtg_robot_roles() (roles.h): always the
 * "auto:roles:<template>" path (rtg_skeleton_auto_profile_roles()), on a
 * bundled robot too. RT_EINVAL naming an unknown link
 * ("profile:robot_roles.left_hand") or the roles still missing. *out is
 * freed by the caller. */
enum rt_status rtg_retarget_roles_profile(const struct kin_clip *clip, const struct kin_robot *robot,
                                          const struct rtg_profile *roles_profile, struct rtg_profile **out,
                                          struct rt_err *err);

/* Settles the units and up axis of a BVH clip (rtg_source_units_clip)
 * or of joint positions `jp` with `skel` their frame 0 as a skeleton
 * (rtg_source_units_joints) for profile `p` (may be NULL: none): the
 * profile's units and up when it gives them, else the rules of docs/profiles.md "Units and up
 * axis" (up: head above feet over the whole clip; unit: recognized from
 * the frame-0 height, else guessed from the median height). Never fails
 * for an unrecognized unit; RT_EINVAL only for a source of no frames or
 * no extent along its up axis, RT_ENOMEM. Fills *u (struct
 * rtg_source_units, targets.h). */
enum rt_status rtg_source_units_clip(const struct kin_clip *clip, const struct rtg_profile *p,
                                     struct rtg_source_units *u, struct rt_err *err);
enum rt_status rtg_source_units_joints(const struct kin_joints *jp, const struct kin_clip *skel,
                                       const struct rtg_profile *p, struct rtg_source_units *u,
                                       struct rt_err *err);

/* Builds targets for `robot` from a BVH clip through `profile` (NULL: the
 * detected bundled profile; a roles profile: rtg_retarget_roles_profile()). On success `t` holds n_frames = clip frames,
 * one target per profile link, weights, the initial state, foot links and
 * contact flags, and t->units how the clip's units were settled
 * (rtg_source_units_clip()). Failures: RT_EINVAL listing missing joints
 * or links, RT_ENOMEM, RT_ELIMIT.
 * On failure `t` is left zeroed. The clip needs at least one frame. */
enum rt_status rtg_targets_from_clip(const struct kin_robot *robot, const struct kin_clip *clip,
                                     const struct rtg_profile *profile, struct rtg_targets *t,
                                     struct rt_err *err);
/* rtg_targets_from_clip() with the per-frame poses of a long clip shared
 * out, in pieces of frames, with the idle workers of `pool`
 * (rtg_pool_for_idle; NULL: this thread alone). The same bits. `units`:
 * what rtg_targets_check_clip() measured for the same clip and profile
 * (NULL: measured here; rtg_source_units_clip() samples 1,024 poses). */
enum rt_status rtg_targets_from_clip_on(struct rtg_pool *pool, const struct kin_robot *robot,
                                        const struct kin_clip *clip, const struct rtg_profile *profile,
                                        const struct rtg_source_units *units, struct rtg_targets *t,
                                        struct rt_err *err);

/* The job plan's checks (retarget/job.c): every way rtg_targets_from_clip()
 * or rtg_targets_from_robot_traj() with the same arguments can fail for
 * the input's sake (profile kind, units, names missing in the source or
 * the robot, sizes, an underivable scale), found without building the
 * targets: they look at the source's first frames only. RT_OK means the
 * build fails only when memory runs out. rtg_targets_check_clip() also
 * gives the clip's units (may be NULL) for rtg_targets_from_clip_on(). */
enum rt_status rtg_targets_check_clip(const struct kin_robot *robot, const struct kin_clip *clip,
                                      const struct rtg_profile *profile, struct rtg_source_units *units,
                                      struct rt_err *err);
enum rt_status rtg_targets_check_robot_traj(const struct kin_robot *robot, const struct kin_robot *src,
                                            const double *states, int n_frames,
                                            const struct rtg_profile *profile, struct rt_err *err);

/* Joint positions (kinematics/joints.h) as a source: points only, through
 * a BVH-kind profile whose frames are point pairs (a link with frame
 * "source" is RT_EINVAL: positions carry no rotations). `skel` is frame 0
 * of `jp` as a skeleton (kin_joints_skeleton()): the units and up axis are
 * detected on it when the profile does not give them. `frame_time` is the
 * source's (seconds). The check does what rtg_targets_check_clip() does,
 * the build what rtg_targets_from_clip() does, with that contract; the
 * profile is required (pick one with rtg_retarget_pick_profile(skel)). */
enum rt_status rtg_targets_check_joints(const struct kin_robot *robot, const struct kin_joints *jp,
                                        const struct kin_clip *skel, double frame_time,
                                        const struct rtg_profile *profile, struct rt_err *err);
enum rt_status rtg_targets_from_joints(const struct kin_robot *robot, const struct kin_joints *jp,
                                       const struct kin_clip *skel, double frame_time,
                                       const struct rtg_profile *profile, struct rtg_targets *t,
                                       struct rt_err *err);

/* Builds targets for `robot` from a trajectory of robot `src` (n_frames rows
 * of 7 + src->n_dof doubles, the CSV layout) through a profile whose source
 * joints are `src`'s link names (source.kind "robot"), e.g. g1_to_h1.
 * Same contract as rtg_targets_from_clip(). */
enum rt_status rtg_targets_from_robot_traj(const struct kin_robot *robot,
                                           const struct kin_robot *src, const double *states,
                                           int n_frames, double frame_time,
                                           const struct rtg_profile *profile,
                                           struct rtg_targets *t, struct rt_err *err);

/* The per-frame baseline (`retarget solve --per-frame`): solves every frame
 * on its own on the backend `be` as a one-frame clip, smoothness off,
 * frame 0 started from t->init (or the solver's default) and every later
 * frame warm-started from the previous frame's result, as per-frame IK
 * tools do. `opt` gives the LM/CG budget per frame (init_iters is ignored).
 * Writes n_frames * state_cols floats to `state`; `res` (may be NULL) gets
 * the summed LM and CG iterations, the summed initial and final costs, the
 * last frame's termination and the wall time. On failure err->where names
 * the frame ("per-frame:F") and the contents of `state` are unspecified. */
enum rt_status rtg_solve_per_frame(struct solver_backend *be, const struct kin_robot *robot,
                                   const struct rtg_targets *t, const struct solver_options *opt, float *state,
                                   struct solver_clip_result *res, struct rt_err *err);

/* Fills a one-clip solver batch for `t` (pointers borrowed from `t`). */
void rtg_targets_batch(const struct kin_robot *robot, const struct rtg_targets *t,
                       const int frame_off[2], const struct solver_options *opt,
                       struct solver_batch *b);

#ifdef __cplusplus
}
#endif
#endif
