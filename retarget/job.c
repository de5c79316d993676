/* job.c -- the job recipe: spec -> plan -> build -> (solve) -> finish (see
 * job.h). */
#include "job.h"

#include "collide.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/traj.h"
#include "quality.h"
#include "retarget.h"

static atomic_long n_plans, n_loads, n_parses, n_builds, n_finishes;

void rtg_job_counts_get(struct rtg_job_counts *c)
{
    c->plans = atomic_load(&n_plans);
    c->loads = atomic_load(&n_loads);
    c->source_parses = atomic_load(&n_parses);
    c->builds = atomic_load(&n_builds);
    c->finishes = atomic_load(&n_finishes);
}

void rtg_job_plan_drop_source(struct rtg_job_plan *plan)
{
    if (!plan) return;
    kin_clip_free(plan->clip);
    kin_joints_free(plan->joints);
    free(plan->states);
    plan->clip = NULL;
    plan->joints = NULL;
    plan->states = NULL;
}

void rtg_job_plan_free(struct rtg_job_plan *plan)
{
    if (!plan) return;
    rtg_job_plan_drop_source(plan);
    rtg_profile_free(plan->profile);
    memset(plan, 0, sizeof *plan);
}

/* The mapping code names a robot by its URDF robot name ("g1_29dof_rev_1_0");
 * the user named it `user_name` ("g1", an upload's name). Replaces the first
 * quoted URDF name in err->msg with the user's name, so that the message
 * speaks of the robot the user named. */
static void err_name_robot(struct rt_err *err, const char *urdf_name, const char *user_name)
{
    char quoted[RT_QUOTE_BUF + 2], msg[sizeof err->msg];
    if (!err || !user_name || !strcmp(urdf_name, user_name)) return;
    snprintf(quoted, sizeof quoted, "'%s'", RT_QUOTE(urdf_name));
    const char *at = strstr(err->msg, quoted);
    if (!at) return;
    snprintf(msg, sizeof msg, "%.*s'%s'%s", (int)(at - err->msg), err->msg, RT_QUOTE(user_name),
             at + strlen(quoted));
    rt_err_set(err, err->code, err->where, "%s", msg); /* rt_err_set() may read its own where */
}

/* Parses the spec's source into `plan` and checks its limits. */
static enum rt_status parse_source(const struct rtg_job_spec *spec, struct rtg_job_plan *plan,
                                   struct rt_err *err)
{
    const char *label = spec->source_label ? spec->source_label : "source";
    enum rt_status st;
    atomic_fetch_add(&n_parses, 1);
    plan->source_kind = spec->source_kind;
    plan->source_robot = spec->source_robot;
    if (spec->source_kind == RTG_SRC_BVH) {
        st = spec->source_borrow ? kin_bvh_parse_borrowed(spec->source, spec->source_len, label, &plan->clip, err)
                                 : kin_bvh_parse(spec->source, spec->source_len, label, &plan->clip, err);
        if (st != RT_OK) return st;
        const struct kin_clip *c = plan->clip;
        snprintf(plan->warning, sizeof plan->warning, "%s", c->warning);
        if (c->n_frames < 1) return rt_err_set(err, RT_EINVAL, label, "the clip has no frames");
        if (spec->max_frames > 0 && c->n_frames > spec->max_frames)
            return rt_err_set(err, RT_ELIMIT, label, "%d frames: the limit is %d", c->n_frames, spec->max_frames);
        if (spec->max_joints > 0 && c->n_joints > spec->max_joints)
            return rt_err_set(err, RT_ELIMIT, label, "%d joints: the limit is %d", c->n_joints, spec->max_joints);
        plan->n_frames = c->n_frames;
        plan->frame_time = c->frame_time;
        return RT_OK;
    }
    if (spec->source_kind == RTG_SRC_JOINTS) {
        st = kin_joints_parse(spec->source, spec->source_len, spec->joint_names, spec->joint_names_len, label,
                              &plan->joints, err);
        if (st != RT_OK) return st;
        const struct kin_joints *j = plan->joints;
        if (spec->max_frames > 0 && j->n_frames > spec->max_frames)
            return rt_err_set(err, RT_ELIMIT, label, "%d frames: the limit is %d", j->n_frames, spec->max_frames);
        if (spec->max_joints > 0 && j->n_joints > spec->max_joints)
            return rt_err_set(err, RT_ELIMIT, label, "%d joints: the limit is %d", j->n_joints, spec->max_joints);
        /* The rate: the job's fps, else the file's, else 30. */
        plan->n_frames = j->n_frames;
        plan->frame_time = spec->opts.set & (1u << RTG_JOB_FPS) ? 1.0 / spec->opts.fps
                           : j->fps > 0                          ? 1.0 / j->fps
                                                                 : 1.0 / 30.0;
        if ((st = kin_joints_skeleton(j, &plan->clip, NULL, err)) != RT_OK) return st;
        plan->clip->frame_time = plan->frame_time;
        return RT_OK;
    }
    if (!spec->source_robot)
        return rt_err_set(err, RT_EINVAL, label, "a trajectory CSV needs a source robot (the robot it moves)");
    st = kin_traj_parse(spec->source, spec->source_len, label, RT_ROOT_COLS + spec->source_robot->n_dof,
                        &plan->states, &plan->n_frames, err);
    if (st != RT_OK) return st;
    if (spec->max_frames > 0 && plan->n_frames > spec->max_frames)
        return rt_err_set(err, RT_ELIMIT, label, "%d frames: the limit is %d", plan->n_frames, spec->max_frames);
    plan->frame_time = spec->opts.set & (1u << RTG_JOB_FPS) ? 1.0 / spec->opts.fps : 1.0 / 30.0;
    return RT_OK;
}

/* The solver options of the plan: defaults, the profile's, the job's. */
static void resolve_options(const struct rtg_job_spec *spec, struct rtg_job_plan *plan)
{
    solver_options_default(&plan->opt);
    if (plan->profile) rtg_profile_solver_options(plan->profile, &plan->opt);
    rtg_job_options_apply(&spec->opts, &plan->opt);
    /* The identity mapping re-solves a trajectory of the robot's own model:
     * its contacts are the robot's, and the capsules' approximation would
     * only move it (Unitree's G1 reference comes within the 1 cm margin in
     * 39 of its 3945 frames and inside the capsules in 2, and the term then
     * doubled the LM iterations). Off unless asked. */
    int identity = plan->source_kind == RTG_SRC_TRAJ && !plan->profile;
    plan->collide_weight = spec->opts.set & (1u << RTG_JOB_COLLIDE_WEIGHT) ? spec->opts.collide_weight
                           : identity                                     ? 0.0
                                                                          : RTG_COLLIDE_WEIGHT;
    plan->collide_margin =
        spec->opts.set & (1u << RTG_JOB_COLLIDE_MARGIN) ? spec->opts.collide_margin : RTG_COLLIDE_MARGIN;
    plan->velocity_weight = spec->opts.set & (1u << RTG_JOB_VELOCITY_WEIGHT) ? spec->opts.velocity_weight : 1.0;
    plan->ground_weight = spec->opts.set & (1u << RTG_JOB_GROUND_WEIGHT) ? spec->opts.ground_weight
                          : identity                                    ? 0.0
                                                                        : RTG_GROUND_WEIGHT;
}

/* The number of identity-mapping links two robots share. */
static int identity_shared(const struct kin_robot *a, const struct kin_robot *b)
{
    int n = 0;
    for (const char *const *l = kin_robot_identity_links(); *l; l++)
        n += kin_robot_link_index(a, *l) >= 0 && kin_robot_link_index(b, *l) >= 0;
    return n;
}

enum rt_status rtg_job_plan(const struct rtg_job_spec *spec, struct rtg_job_plan *plan,
                            struct rt_err *err)
{
    const struct kin_robot *robot = spec->robot;
    enum rt_status st;
    memset(plan, 0, sizeof *plan);
    atomic_fetch_add(&n_plans, 1);
    if ((st = parse_source(spec, plan, err)) != RT_OK) goto fail;
    if (spec->profile && !(plan->profile = rtg_profile_copy(spec->profile))) goto oom;
    if (plan->source_kind == RTG_SRC_BVH || plan->source_kind == RTG_SRC_JOINTS) {
        /* A joint-position source is picked for by its skeleton view:
         * bundled profiles by joint names, else the recognizer. */
        if (!plan->profile) {
            if ((st = rtg_retarget_pick_profile(plan->clip, robot, &plan->profile, err)) != RT_OK) {
                err_name_robot(err, robot->name, spec->robot_name);
                goto fail;
            }
            plan->profile_auto = !strncmp(plan->profile->name, "auto:", 5);
        } else if (plan->profile->n_links == 0) {
            /* A roles profile: the automatic mapping with its roles. */
            struct rtg_profile *built = NULL;
            if ((st = rtg_retarget_roles_profile(plan->clip, robot, plan->profile, &built, err)) != RT_OK) {
                err_name_robot(err, robot->name, spec->robot_name);
                goto fail;
            }
            rtg_profile_free(plan->profile);
            plan->profile = built;
            plan->profile_auto = 1;
        }
        /* Units and up axis given for joint positions replace the
         * profile's (the plan owns its copy). */
        if (plan->source_kind == RTG_SRC_JOINTS && spec->joint_units > 0) plan->profile->units = spec->joint_units;
        if (plan->source_kind == RTG_SRC_JOINTS && spec->joint_up) plan->profile->up = spec->joint_up;
        st = plan->source_kind == RTG_SRC_BVH
                 ? rtg_targets_check_clip(robot, plan->clip, plan->profile, &plan->units, err)
                 : rtg_targets_check_joints(robot, plan->joints, plan->clip, plan->frame_time, plan->profile, err);
        if (st != RT_OK) {
            err_name_robot(err, robot->name, spec->robot_name);
            goto fail;
        }
        plan->units_known = plan->source_kind == RTG_SRC_BVH;
    } else {
        const struct kin_robot *src = spec->source_robot;
        /* A profile given wins; two different robot models (their URDF
         * robot names differ) use the bundled pair profile when there is
         * one (matching links by name across models tracks far worse); the
         * identity mapping (links of the same name) is for the same model,
         * or for a pair no bundled profile covers. */
        if (!plan->profile && strcmp(src->name, robot->name)) {
            if (spec->source_robot_name && spec->robot_name)
                plan->profile = rtg_profile_find_robot_pair(spec->source_robot_name, spec->robot_name);
            if (!plan->profile) plan->profile = rtg_profile_find_robot_pair(src->name, robot->name);
        }
        if (plan->profile) {
            st = rtg_targets_check_robot_traj(robot, src, plan->states, plan->n_frames, plan->profile, err);
            if (st != RT_OK) goto fail;
        } else if (identity_shared(src, robot) < 2) {
            st = rt_err_set(err, RT_EINVAL, spec->profile_where ? spec->profile_where : "profile",
                            "no mapping from robot '%s' to '%s': %s",
                            RT_QUOTE(spec->source_robot_name ? spec->source_robot_name : src->name),
                            RT_QUOTE(spec->robot_name ? spec->robot_name : robot->name),
                            spec->profile_hint ? spec->profile_hint : "give a profile");
            goto fail;
        }
    }
    if (plan->profile) snprintf(plan->profile_name, sizeof plan->profile_name, "%s", plan->profile->name);
    resolve_options(spec, plan);
    return RT_OK;
oom:
    st = rt_err_set(err, RT_ENOMEM, "plan", "out of memory");
fail:
    rtg_job_plan_free(plan);
    return st;
}

char *rtg_job_plan_json(const struct rtg_job_plan *plan)
{
    cJSON *o = cJSON_CreateObject();
    char *text = NULL;
    if (!o) return NULL;
    if (plan->profile_name[0]) cJSON_AddStringToObject(o, "profile", plan->profile_name);
    else cJSON_AddNullToObject(o, "profile");
    if (plan->profile_auto) {
        cJSON *m = rtg_profile_json(plan->profile);
        if (!m) goto done;
        cJSON_AddItemToObject(o, "mapping", m);
    }
    text = cJSON_PrintUnformatted(o);
done:
    cJSON_Delete(o);
    return text;
}

enum rt_status rtg_job_plan_load(const struct rtg_job_spec *spec, const char *plan_json,
                                 struct rtg_job_plan *plan, struct rt_err *err)
{
    enum rt_status st;
    cJSON *doc = NULL;
    memset(plan, 0, sizeof *plan);
    atomic_fetch_add(&n_loads, 1);
    if ((st = parse_source(spec, plan, err)) != RT_OK) goto fail;
    doc = plan_json ? cJSON_Parse(plan_json) : NULL;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "mapping");
    if (!cJSON_IsObject(doc)) {
        st = rt_err_set(err, RT_EPARSE, "plan", "the stored plan does not read back");
        goto fail;
    }
    if (m) {
        char *text = cJSON_PrintUnformatted(m);
        if (!text) {
            st = rt_err_set(err, RT_ENOMEM, "plan", "out of memory");
            goto fail;
        }
        st = rtg_profile_parse(text, strlen(text), "plan.mapping", &plan->profile, err);
        cJSON_free(text);
        if (st != RT_OK) goto fail;
        plan->profile_auto = 1;
    } else if (spec->profile && !(plan->profile = rtg_profile_copy(spec->profile))) {
        st = rt_err_set(err, RT_ENOMEM, "plan", "out of memory");
        goto fail;
    }
    if (plan->profile && plan->source_kind == RTG_SRC_JOINTS && spec->joint_units > 0)
        plan->profile->units = spec->joint_units;
    if (plan->profile && plan->source_kind == RTG_SRC_JOINTS && spec->joint_up) plan->profile->up = spec->joint_up;
    if (plan->profile) snprintf(plan->profile_name, sizeof plan->profile_name, "%s", plan->profile->name);
    resolve_options(spec, plan);
    cJSON_Delete(doc);
    return RT_OK;
fail:
    cJSON_Delete(doc);
    rtg_job_plan_free(plan);
    return st;
}

enum rt_status rtg_job_build(const struct kin_robot *robot, const struct rtg_job_plan *plan,
                             struct rtg_targets *t, struct rt_err *err)
{
    return rtg_job_build_on(NULL, robot, plan, t, err);
}

enum rt_status rtg_job_build_on(struct rtg_pool *pool, const struct kin_robot *robot, const struct rtg_job_plan *plan,
                                struct rtg_targets *t, struct rt_err *err)
{
    enum rt_status st;
    atomic_fetch_add(&n_builds, 1);
    if (plan->source_kind == RTG_SRC_BVH)
        st = rtg_targets_from_clip_on(pool, robot, plan->clip, plan->profile, plan->units_known ? &plan->units : NULL,
                                      t, err);
    else if (plan->source_kind == RTG_SRC_JOINTS)
        st = rtg_targets_from_joints(robot, plan->joints, plan->clip, plan->frame_time, plan->profile, t, err);
    else if (plan->profile)
        st = rtg_targets_from_robot_traj(robot, plan->source_robot, plan->states, plan->n_frames,
                                         plan->frame_time, plan->profile, t, err);
    else
        st = rtg_targets_from_traj(pool, plan->source_robot, plan->states, plan->n_frames, plan->frame_time, robot, t,
                                   err);
    if (st == RT_OK && ((st = rtg_targets_collide(t, robot, plan->collide_margin, plan->collide_weight,
                                                       plan->ground_weight, err)) != RT_OK ||
                        (st = rtg_targets_velocity_limits(t, robot, plan->velocity_weight, err)) != RT_OK))
        rtg_targets_free(t);
    return st;
}

enum rt_status rtg_job_finish(struct rtg_pool *pool, const struct kin_robot *robot, const struct rtg_targets *t,
                              float *state, int lift, const struct rtg_report_info *info,
                              const struct solver_clip_result *res, cJSON **report,
                              struct rt_err *err)
{
    struct rtg_quality q;
    struct rtg_quality_stat *lp = NULL, *lr = NULL;
    int nt = t->n_targets ? t->n_targets : 1;
    atomic_fetch_add(&n_finishes, 1);
    *report = NULL;
    lp = malloc((size_t)nt * sizeof *lp);
    lr = malloc((size_t)nt * sizeof *lr);
    if (!lp || !lr || rtg_quality_finish_on(pool, robot, t, state, lift, &q, lp, lr) != RT_OK ||
        !(*report = rtg_report_json(info, robot, t, state, res, &q, lp, lr))) {
        free(lp);
        free(lr);
        return rt_err_set(err, RT_ENOMEM, "report", "out of memory");
    }
    free(lp);
    free(lr);
    return RT_OK;
}
