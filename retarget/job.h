/* job.h -- the job recipe: what `retarget solve`, a local `retarget batch`,
 * the daemon's submission and its worker all run, so that a job is built
 * the same way, once, wherever it comes from (DESIGN.md "Data flow").
 *
 *   spec  -- what the user gave: robot, profile or none, the source's kind
 *            and text, the source robot, the job options;
 *   plan  -- rtg_job_plan(): the source parsed, the profile picked (given,
 *            detected, robot pair, or an automatic mapping built), units
 *            and scale resolved, every input limit checked. Every way the
 *            input can be wrong is found here, without building targets;
 *            the daemon's submission stops here and stores
 *            rtg_job_plan_json() with the job;
 *   build -- rtg_job_build(): the per-frame targets and weights (once per
 *            job; the worker builds from the stored plan with
 *            rtg_job_plan_load(), which never detects again);
 *   solve -- rtg_batch_solve() (retarget/batch.h), many jobs per call;
 *   finish-- rtg_job_finish(): the ground lift and the quality report from
 *            one forward-kinematics pass over the solved frames.
 *
 * The CLI and the daemon differ only in where inputs come from (files,
 * request bodies, the store) and where outputs go.
 *
 * Memory: a plan owns its parsed source and its profile; rtg_job_plan_free()
 * releases them (NULL-safe, idempotent). Everything a spec points to is
 * borrowed and must outlive the plan. */
#ifndef RT_RTG_JOB_H
#define RT_RTG_JOB_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "../base/status.h"
#include "../kinematics/bvh.h"
#include "../kinematics/joints.h"
#include "../kinematics/robot.h"
#include "options.h"
#include "pool.h"
#include "profile.h"
#include "report.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rtg_source_kind {
    RTG_SRC_BVH = 0, /* a BVH clip */
    RTG_SRC_TRAJ = 1, /* a robot trajectory CSV (Unitree's layout) of spec.source_robot */
    RTG_SRC_JOINTS = 2 /* joint positions: .npz, .npy (+ spec.joint_names) or CSV (kinematics/joints.h) */
};

struct rtg_job_spec {
    const struct kin_robot *robot;    /* the robot to retarget onto */
    const char *robot_name;           /* as the user named it ("g1", a path, an upload) */
    const struct rtg_profile *profile;/* the profile given, or NULL: detect / pair / identity */
    int source_kind;                  /* enum rtg_source_kind */
    const char *source;               /* the source text (need not be NUL-terminated) */
    size_t source_len;
    int source_borrow;                /* 1: the plan may read a BVH clip's frames from `source`
                                         (kin_bvh_parse_borrowed()) rather than copy them; the
                                         source then outlives the plan's parsed clip */
    const char *source_label;         /* labels the source's errors ("clip", a path) */
    const struct kin_robot *source_robot; /* RTG_SRC_TRAJ: the robot it moves */
    const char *source_robot_name;    /* as the user named it */
    const char *joint_names;          /* RTG_SRC_JOINTS from an .npy: its names, one a line */
    size_t joint_names_len;
    double joint_units;               /* RTG_SRC_JOINTS: metres per unit, 0: the profile's or detected */
    char joint_up;                    /* RTG_SRC_JOINTS: 'y' or 'z', 0: the profile's or detected */
    struct rtg_job_options opts;      /* the job options given */
    int max_frames, max_joints;       /* limits on the source (0: the readers' own) */
    /* How errors speak of the user's inputs: where a profile is given
     * ("body.profile", "--profile") and what to tell a user whose robots
     * no mapping joins ("name a profile", "give --profile FILE"). */
    const char *profile_where, *profile_hint;
};

struct rtg_job_plan {
    int source_kind;
    int n_frames;
    double frame_time;
    struct kin_clip *clip;            /* RTG_SRC_BVH: the parsed clip; RTG_SRC_JOINTS: frame 0
                                         as a skeleton (kin_joints_skeleton()), for the profile */
    struct kin_joints *joints;        /* RTG_SRC_JOINTS: the parsed positions */
    double *states;                   /* RTG_SRC_TRAJ: n_frames rows of 7 + n_dof */
    const struct kin_robot *source_robot; /* borrowed from the spec */
    struct rtg_profile *profile;      /* the mapping (owned), NULL: the identity mapping */
    int profile_auto;                 /* 1: an automatic mapping ("auto:TEMPLATE") */
    char profile_name[RTG_PROFILE_MAX_NAME]; /* "" for the identity mapping */
    struct solver_options opt;        /* defaults, then the profile's, then the job options */
    double collide_weight, collide_margin; /* the self-collision term: defaults or the job options */
    double ground_weight;                  /* the ground term: the default or the job option */
    double velocity_weight;           /* the velocity limits' weight, x RTG_W_VLIM_REF (0: off) */
    char warning[160];                /* the reader's non-fatal note, "" if none */
    struct rtg_source_units units;    /* RTG_SRC_BVH with units_known: the clip's units as the plan's
                                         check measured them, for rtg_job_build() (a plan loaded from
                                         the store has none: the build measures them) */
    int units_known;
};

/* Plans the job of `spec` into `plan` (zeroed first). On failure `plan` is
 * empty and `err` says what and where: the source's FILE:LINE or label,
 * spec->profile_where for a profile that cannot map the source, "profile"
 * for a source no bundled profile maps (listing the roles it lacks),
 * RT_ELIMIT for frames or joints past the spec's limits. The robot's URDF
 * name in messages is replaced by spec->robot_name. */
enum rt_status rtg_job_plan(const struct rtg_job_spec *spec, struct rtg_job_plan *plan,
                            struct rt_err *err);

/* The plan as the daemon stores it: {"profile": NAME|null} and, for an
 * automatic mapping, "mapping": the profile in full (rtg_profile_json()).
 * malloc'd; NULL when out of memory. */
char *rtg_job_plan_json(const struct rtg_job_plan *plan);

/* The worker's side: `plan` for `spec` from the stored plan text. The
 * source is parsed (once); the profile is spec->profile (a stored name,
 * loaded by the caller) or the stored automatic mapping; nothing is
 * detected or checked again (rtg_job_plan() did that at submission).
 * Failures: RT_EPARSE/RT_EINVAL for a plan or source that does not read
 * back (a corrupt row), RT_ENOMEM. */
enum rt_status rtg_job_plan_load(const struct rtg_job_spec *spec, const char *plan_json,
                                 struct rtg_job_plan *plan, struct rt_err *err);

/* NULL-safe; leaves `plan` zeroed. */
void rtg_job_plan_free(struct rtg_job_plan *plan);

/* Frees the parsed source that `plan` holds (clip, joints, states: about
 * the size of the source text again) and sets them NULL, keeping the
 * mapping, frame count, frame time and options. The daemon's submission
 * calls it once it has rtg_job_plan_json(): from there on it only stores
 * the job. The plan is not fit for rtg_job_build() after it. NULL-safe. */
void rtg_job_plan_drop_source(struct rtg_job_plan *plan);

/* Builds the targets of `plan` for `robot` into `t`. After a successful
 * rtg_job_plan() of the same input this fails only when memory runs out.
 * On failure `t` is zeroed. */
enum rt_status rtg_job_build(const struct kin_robot *robot, const struct rtg_job_plan *plan,
                             struct rtg_targets *t, struct rt_err *err);
/* rtg_job_build() with a long source's per-frame work (a BVH clip's poses,
 * a trajectory's forward kinematics) shared out with the idle workers of
 * `pool` (NULL: this thread alone). The same bits. */
enum rt_status rtg_job_build_on(struct rtg_pool *pool, const struct kin_robot *robot, const struct rtg_job_plan *plan,
                                struct rtg_targets *t, struct rt_err *err);

/* After the solve: with `lift`, puts the feet on the ground
 * (rtg_targets_ground_lift()'s rule) and then measures the quality and
 * builds the report (rtg_report_json()) -- from one forward-kinematics pass
 * over the frames (the frames the lift moves are evaluated again). `state`
 * is the clip's t->n_frames rows, changed in place by the lift. *report
 * gets the tree the caller deletes. `pool` (may be NULL) lends its idle
 * workers to the pass over the frames (rtg_quality_finish_on). RT_ENOMEM. */
enum rt_status rtg_job_finish(struct rtg_pool *pool, const struct kin_robot *robot, const struct rtg_targets *t,
                              float *state, int lift, const struct rtg_report_info *info,
                              const struct solver_clip_result *res, cJSON **report,
                              struct rt_err *err);

/* Counters of the recipe's steps in this process (a test hook: each job
 * builds its targets once, parses its source at most once per step). */
struct rtg_job_counts {
    long plans, loads, source_parses, builds, finishes;
};
void rtg_job_counts_get(struct rtg_job_counts *c);

#ifdef __cplusplus
}
#endif
#endif
