/* job_input.c -- a job's options and the targets it solves (job_input.h).
 *
 * srv_job_build() is the whole validation of a submission's content: the
 * options, the profile, the clip (parsed, limits on frames and joints) and
 * the targets built from it. What is stored is the clip text and the
 * canonical options; the worker calls srv_job_build() on them again and
 * gets the same targets. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../kinematics/robot.h"
#include "../kinematics/traj.h"
#include "../retarget/profile.h"
#include "../retarget/retarget.h"
#include "assets.h"
#include "job_input.h"
#include "state.h"

/* --- options --------------------------------------------------------------- */

static enum rt_status opt_int(cJSON *v, const char *key, int lo, int hi, int *out,
                              struct rt_err *err)
{
    char where[64];
    snprintf(where, sizeof where, "body.options.%s", key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        return rt_err_set(err, RT_EINVAL, where, "expected an integer in [%d, %d]", lo, hi);
    *out = (int)v->valuedouble;
    return RT_OK;
}

enum rt_status srv_job_opts_parse(const cJSON *obj, struct srv_job_opts *o, struct rt_err *err)
{
    o->max_lm_iters = o->max_cg_iters = o->init_iters = o->linear = -1;
    o->cg_tol = o->fps = -1;
    if (!obj || cJSON_IsNull(obj)) return RT_OK;
    if (!cJSON_IsObject(obj)) return rt_err_set(err, RT_EINVAL, "body.options", "expected an object");
    for (cJSON *v = obj->child; v; v = v->next) {
        const char *k = v->string;
        enum rt_status st = RT_OK;
        if (!strcmp(k, "max_lm_iters")) st = opt_int(v, k, 0, 10000, &o->max_lm_iters, err);
        else if (!strcmp(k, "max_cg_iters")) st = opt_int(v, k, 1, 100000, &o->max_cg_iters, err);
        else if (!strcmp(k, "init_iters")) st = opt_int(v, k, 0, 1000, &o->init_iters, err);
        else if (!strcmp(k, "cg_tol")) {
            if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble <= 1))
                return rt_err_set(err, RT_EINVAL, "body.options.cg_tol", "expected a number in (0, 1]");
            o->cg_tol = v->valuedouble;
        } else if (!strcmp(k, "fps")) {
            if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble <= 10000))
                return rt_err_set(err, RT_EINVAL, "body.options.fps", "expected a frame rate in (0, 10000]");
            o->fps = v->valuedouble;
        } else if (!strcmp(k, "linear")) {
            if (cJSON_IsString(v) && !strcmp(v->valuestring, "pcg")) o->linear = SOLVER_LINEAR_PCG;
            else if (cJSON_IsString(v) && !strcmp(v->valuestring, "direct")) o->linear = SOLVER_LINEAR_DIRECT;
            else return rt_err_set(err, RT_EINVAL, "body.options.linear", "expected \"pcg\" or \"direct\"");
        } else {
            char where[96];
            snprintf(where, sizeof where, "body.options.%.60s", k);
            return rt_err_set(err, RT_EINVAL, where,
                              "unknown option (known: max_lm_iters, max_cg_iters, init_iters, cg_tol, linear, fps)");
        }
        if (st != RT_OK) return st;
    }
    return RT_OK;
}

char *srv_job_opts_text(const struct srv_job_opts *o)
{
    cJSON *j = cJSON_CreateObject();
    if (o->max_lm_iters >= 0) cJSON_AddNumberToObject(j, "max_lm_iters", o->max_lm_iters);
    if (o->max_cg_iters >= 0) cJSON_AddNumberToObject(j, "max_cg_iters", o->max_cg_iters);
    if (o->init_iters >= 0) cJSON_AddNumberToObject(j, "init_iters", o->init_iters);
    if (o->cg_tol >= 0) cJSON_AddNumberToObject(j, "cg_tol", o->cg_tol);
    if (o->linear >= 0) cJSON_AddStringToObject(j, "linear", o->linear == SOLVER_LINEAR_DIRECT ? "direct" : "pcg");
    if (o->fps >= 0) cJSON_AddNumberToObject(j, "fps", o->fps);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return t;
}

/* --- building a job's targets ---------------------------------------------- */

/* The mapping code names a robot by its URDF robot name ("g1_29dof_rev_1_0");
 * a client named it `user_name` ("g1", an upload's name). Replaces the first
 * quoted URDF name in err->msg with the client's name, so that the message
 * speaks of the robot the request named. */
static void err_name_robot(struct rt_err *err, const char *urdf_name, const char *user_name)
{
    char quoted[48], msg[sizeof err->msg];
    if (!err || !strcmp(urdf_name, user_name)) return;
    snprintf(quoted, sizeof quoted, "'%.40s'", urdf_name);
    const char *at = strstr(err->msg, quoted);
    if (!at) return;
    snprintf(msg, sizeof msg, "%.*s'%s'%s", (int)(at - err->msg), err->msg, user_name, at + strlen(quoted));
    rt_err_set(err, err->code, err->where, "%s", msg);
}

void srv_job_input_free(struct srv_job_input *in)
{
    rtg_targets_free(&in->t);
    memset(in, 0, sizeof *in);
}

enum rt_status srv_job_build(struct srv *s, const struct store_job *j,
                             const struct kin_robot *robot, struct srv_job_input *in,
                             struct rt_err *err)
{
    struct rtg_profile *prof = NULL;
    struct kin_clip *bvh = NULL;
    struct kin_robot *src = NULL;
    double *states = NULL;
    struct srv_job_opts o;
    enum rt_status st;
    memset(in, 0, sizeof *in);
    cJSON *oj = j->options ? cJSON_Parse(j->options) : NULL;
    st = srv_job_opts_parse(oj, &o, err);
    cJSON_Delete(oj);
    if (st != RT_OK) return st;
    solver_options_default(&in->opt);
    if (j->profile[0]) {
        if ((st = srv_profile_load(s, j->profile, &prof, err)) != RT_OK) goto done;
        snprintf(in->profile, sizeof in->profile, "%s", j->profile);
    }
    if (j->source_kind == STORE_SRC_BVH) {
        if ((st = kin_bvh_parse(j->clip, j->clip_len, "clip", &bvh, err)) != RT_OK) goto done;
        if (bvh->n_frames < 1) {
            st = rt_err_set(err, RT_EINVAL, "clip", "the clip has no frames");
            goto done;
        }
        if (bvh->n_frames > s->cfg.max_frames) {
            st = rt_err_set(err, RT_ELIMIT, "clip", "%d frames: the limit is %d", bvh->n_frames, s->cfg.max_frames);
            goto done;
        }
        if (bvh->n_joints > s->cfg.max_joints) {
            st = rt_err_set(err, RT_ELIMIT, "clip", "%d joints: the limit is %d", bvh->n_joints, s->cfg.max_joints);
            goto done;
        }
        if (!prof) {
            if ((st = rtg_retarget_pick_profile(bvh, robot, &prof, err)) != RT_OK) {
                err_name_robot(err, robot->name, j->robot);
                goto done;
            }
            /* the profile used: a bundled one's name is its key, an
             * automatic one's "auto:TEMPLATE" */
            snprintf(in->profile, sizeof in->profile, "%s", prof->name);
        }
        if ((st = rtg_targets_from_clip(robot, bvh, prof, &in->t, err)) != RT_OK)
            err_name_robot(err, robot->name, j->robot);
    } else {
        int n_frames = 0;
        if ((st = srv_robot_load(s, j->source_robot, &src, err)) != RT_OK) goto done;
        st = kin_traj_parse(j->clip, j->clip_len, "trajectory", RT_ROOT_COLS + src->n_dof, &states,
                            &n_frames, err);
        if (st != RT_OK) goto done;
        if (n_frames > s->cfg.max_frames) {
            st = rt_err_set(err, RT_ELIMIT, "trajectory", "%d frames: the limit is %d", n_frames, s->cfg.max_frames);
            goto done;
        }
        double dt = o.fps > 0 ? 1.0 / o.fps : 1.0 / 30.0;
        /* As `retarget solve`: a profile given wins; two different robot
         * models (URDF robot names differ) use the bundled pair profile when
         * there is one; the identity mapping (links of the same name) is for
         * the same model or a pair no bundled profile covers. */
        if (!prof && strcmp(src->name, robot->name)) {
            prof = rtg_profile_find_robot_pair(j->source_robot, j->robot);
            if (!prof) prof = rtg_profile_find_robot_pair(src->name, robot->name);
            if (prof) snprintf(in->profile, sizeof in->profile, "%s", prof->name);
        }
        if (prof) {
            st = rtg_targets_from_robot_traj(robot, src, states, n_frames, dt, prof, &in->t, err);
        } else if ((st = rtg_targets_from_traj(src, states, n_frames, dt, robot, &in->t, NULL)) != RT_OK) {
            st = rt_err_set(err, RT_EINVAL, "body.profile",
                            "no mapping from robot '%.40s' to '%.40s': name a profile", j->source_robot,
                            j->robot);
        }
    }
    if (st != RT_OK) goto done;
    if (prof) rtg_profile_solver_options(prof, &in->opt);
    /* The order of `retarget solve`: defaults, the profile, then the options. */
    if (o.max_lm_iters >= 0) in->opt.max_lm_iters = o.max_lm_iters;
    if (o.max_cg_iters >= 0) in->opt.max_cg_iters = o.max_cg_iters;
    if (o.init_iters >= 0) in->opt.init_iters = o.init_iters;
    if (o.cg_tol >= 0) in->opt.cg_tol = (float)o.cg_tol;
    if (o.linear >= 0) in->opt.linear = o.linear;
    in->opt.threads = s->cfg.solver_threads;
done:
    if (st != RT_OK) {
        rtg_targets_free(&in->t);
        memset(in, 0, sizeof *in);
    }
    rtg_profile_free(prof);
    kin_clip_free(bvh);
    kin_robot_free(src);
    free(states);
    return st;
}
