/* job_input.h -- a job as the job recipe (retarget/job.h) takes it: the
 * spec of a submission or a stored row, and what the worker solves, built
 * from the plan stored at submission (server/job_input.c). POST /v1/jobs
 * (server/jobs.c) plans from the spec -- every input check -- before the
 * row is written; the scheduler's worker (server/sched.c) builds once from
 * the stored plan.
 *
 * Memory: srv_job_build() fills a caller-owned struct srv_job_input that
 * srv_job_input_free() empties. */
#ifndef RT_SRV_JOB_INPUT_H
#define RT_SRV_JOB_INPUT_H

#include "../base/status.h"
#include "../retarget/targets.h"
#include "../solver/solver.h"
#include "../storage/store.h"

struct cJSON;
struct kin_robot;
struct srv;

/* Fills `spec` (retarget/job.h) for a job on `robot` (named `robot_name`
 * by the client) with profile `prof` (NULL: none named), a source of `kind`
 * (enum store_source) in `text`, the source robot for a trajectory, the
 * options given and the daemon's limits. Errors of the plan then name the
 * request's fields ("clip", "trajectory", "body.profile") or, for joint
 * positions, the source as srv_joints_label() calls it. A joint-position
 * source's names, units and up axis are the caller's to set in `spec`
 * afterwards. Everything is borrowed. */
struct rtg_profile;
struct rtg_job_spec;
struct rtg_job_options;
void srv_job_spec(struct srv *s, const char *robot_name, const struct kin_robot *robot,
                  const struct rtg_profile *prof, int kind, const char *text, size_t len,
                  const char *source_robot_name, const struct kin_robot *src,
                  const struct rtg_job_options *o, struct rtg_job_spec *spec);

/* How errors name a job's joint-position source, by its bytes (the marks
 * kin_joints_parse() reads it by): "joints.npz", "joints.npy" or
 * "joints.csv", so that they read "joints.npz:joints: shape (100, 66) is
 * not (T, J, 3)", "joints.csv:7: row has 65 values, expected 66". Static. */
const char *srv_joints_label(const char *data, size_t len);

/* What a job solves: its targets and options, built from the stored plan. */
struct srv_job_input {
    struct rtg_targets t;
    struct solver_options opt;
    char profile[STORE_MAX_NAME + 1]; /* the profile used ("" for the identity mapping) */
};

/* Builds `in` for job `j` (with its clip and plan) on `robot`: the stored
 * plan read back (a job stored before plans were is planned here), then
 * the targets built once, a long source's frames shared out with the idle
 * workers of `pool` (NULL: this thread alone). On failure `in` is zeroed
 * and `err` names what and where. */
enum rt_status srv_job_build(struct srv *s, struct rtg_pool *pool, const struct store_job *j,
                             const struct kin_robot *robot, struct srv_job_input *in,
                             struct rt_err *err);
/* The tail of srv_job_build(): `in` for job `j` from its `plan` (the
 * stored plan read back, or the submission's own: server/plans.h), the
 * targets built on `robot` as there. On failure `in` is zeroed. */
struct rtg_job_plan;
enum rt_status srv_job_build_planned(struct rtg_pool *pool, const struct store_job *j, const struct kin_robot *robot,
                                     const struct rtg_job_plan *plan, struct srv_job_input *in, struct rt_err *err);

/* Frees what srv_job_build put in `in` and zeroes it; safe on a zeroed or
 * already freed `in`. */
void srv_job_input_free(struct srv_job_input *in);

/* The per-frame series of a job's result (rtg_quality_series_json(),
 * retarget/quality.h) as malloc'd JSON text in *json, which the caller
 * frees: job `j` (read with its clip and plan) is built again on its robot
 * (srv_job_build) and the `frames` rows of `cols` values of `traj` are
 * measured against its targets. RT_ESTATE (where "result") when the robot
 * has changed since (a column count other than its joints'); else the
 * errors of srv_robot_load() and srv_job_build(), or RT_ENOMEM. *json is
 * NULL on failure. */
enum rt_status srv_job_series(struct srv *s, const struct store_job *j, const float *traj, int frames,
                              int cols, char **json, struct rt_err *err);

#endif
