/* job_input.c -- a job's spec for the job recipe and the targets it solves
 * (job_input.h). POST /v1/jobs plans a job (retarget/job.h) from the spec
 * and stores the plan; the worker builds from the stored plan with
 * srv_job_build(), so the job's mapping is never detected twice and its
 * targets are built once. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/robot.h"
#include "../retarget/job.h"
#include "../retarget/profile.h"
#include "../retarget/quality.h"
#include "assets.h"
#include "job_input.h"
#include "state.h"

void srv_job_input_free(struct srv_job_input *in)
{
    rtg_targets_free(&in->t);
    memset(in, 0, sizeof *in);
}

const char *srv_joints_label(const char *data, size_t len)
{
    if (len >= 4 && !memcmp(data, "PK\x03\x04", 4)) return "joints.npz";
    if (len >= 6 && !memcmp(data, "\x93NUMPY", 6)) return "joints.npy";
    return "joints.csv";
}

void srv_job_spec(struct srv *s, const char *robot_name, const struct kin_robot *robot,
                     const struct rtg_profile *prof, int kind, const char *text, size_t len,
                     const char *source_robot_name, const struct kin_robot *src,
                     const struct rtg_job_options *o, struct rtg_job_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->robot = robot;
    spec->robot_name = robot_name;
    spec->profile = prof;
    spec->source_kind = kind == STORE_SRC_CSV ? RTG_SRC_TRAJ : kind == STORE_SRC_JOINTS ? RTG_SRC_JOINTS : RTG_SRC_BVH;
    spec->source = text;
    spec->source_len = len;
    spec->source_label = kind == STORE_SRC_CSV ? "trajectory" : kind == STORE_SRC_JOINTS ? srv_joints_label(text, len) : "clip";
    spec->source_robot = src;
    spec->source_robot_name = source_robot_name;
    spec->opts = *o;
    spec->max_frames = s->cfg.max_frames;
    spec->max_joints = s->cfg.max_joints;
    spec->profile_where = "body.profile";
    spec->profile_hint = "name a profile";
}

enum rt_status srv_job_build(struct srv *s, struct rtg_pool *pool, const struct store_job *j,
                             const struct kin_robot *robot, struct srv_job_input *in,
                             struct rt_err *err)
{
    struct rtg_profile *prof = NULL;
    struct kin_robot *src = NULL;
    struct rtg_job_options o;
    struct rtg_job_spec spec;
    struct rtg_job_plan plan;
    enum rt_status st;
    memset(in, 0, sizeof *in);
    memset(&plan, 0, sizeof plan);
    cJSON *oj = j->options ? cJSON_Parse(j->options) : NULL;
    st = rtg_job_options_from_json(oj, "options", &o, err);
    cJSON_Delete(oj);
    if (st != RT_OK) return st;
    if (j->profile[0] && (st = srv_profile_load(s, j->profile, &prof, err)) != RT_OK) goto done;
    if (j->source_kind == STORE_SRC_CSV && (st = srv_robot_load(s, j->source_robot, &src, err)) != RT_OK)
        goto done;
    srv_job_spec(s, j->robot, robot, prof, j->source_kind, j->clip, j->clip_len, j->source_robot, src, &o, &spec);
    spec.joint_names = j->joint_names;
    spec.joint_names_len = j->joint_names_len;
    spec.joint_units = j->joint_units;
    spec.joint_up = j->joint_up;
    /* The plan stored at submission: no mapping is detected again. A job
     * stored before plans were (schema version 4) is planned here. */
    st = j->plan ? rtg_job_plan_load(&spec, j->plan, &plan, err) : rtg_job_plan(&spec, &plan, err);
    if (st != RT_OK) goto done;
    st = srv_job_build_planned(pool, j, robot, &plan, in, err);
done:
    if (st != RT_OK) srv_job_input_free(in);
    rtg_job_plan_free(&plan);
    rtg_profile_free(prof);
    kin_robot_free(src);
    return st;
}

enum rt_status srv_job_build_planned(struct rtg_pool *pool, const struct store_job *j, const struct kin_robot *robot,
                                     const struct rtg_job_plan *plan, struct srv_job_input *in, struct rt_err *err)
{
    enum rt_status st;
    memset(in, 0, sizeof *in);
    if ((st = rtg_job_build_on(pool, robot, plan, &in->t, err)) != RT_OK) return st;
    in->opt = plan->opt;
    /* The profile used: a named one's name as the client gave it (an
     * upload's JSON may call itself otherwise), else the plan's. */
    snprintf(in->profile, sizeof in->profile, "%.*s", (int)sizeof in->profile - 1,
             j->profile[0] ? j->profile : plan->profile_name);
    return RT_OK;
}

enum rt_status srv_job_series(struct srv *s, const struct store_job *j, const float *traj, int frames,
                              int cols, char **json, struct rt_err *err)
{
    struct kin_robot *robot = NULL;
    struct srv_job_input in;
    enum rt_status st;
    memset(&in, 0, sizeof in);
    *json = NULL;
    if ((st = srv_robot_load(s, j->robot, &robot, err)) != RT_OK) return st;
    if (cols != RT_ROOT_COLS + robot->n_dof) {
        st = rt_err_set(err, RT_ESTATE, "result", "robot '%s' changed since the job ran (%d columns, now %d)",
                        j->robot, cols, RT_ROOT_COLS + robot->n_dof);
        goto done;
    }
    if ((st = srv_job_build(s, NULL, j, robot, &in, err)) != RT_OK) goto done;
    cJSON *o = rtg_quality_series_json(robot, &in.t, traj, frames);
    *json = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!*json) st = rt_err_set(err, RT_ENOMEM, "result", "out of memory");
done:
    srv_job_input_free(&in);
    kin_robot_free(robot);
    return st;
}
