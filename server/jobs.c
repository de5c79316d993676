/* jobs.c -- the job resources: POST /v1/jobs (a clip for a robot), GET
 * /v1/jobs (the token's jobs, paged), GET and DELETE /v1/jobs/ID, GET
 * /v1/jobs/ID/result (report and trajectory as JSON) and .../result.csv.
 *
 * A submission is validated completely before it is stored: the JSON, the
 * options, the robot and profile names, the clip (parsed, limits on frames
 * and joints) and the targets built from it, so that a stored job fails
 * later only for reasons outside the input (memory, the backend). What is
 * stored is the clip text and canonical options; the worker rebuilds the
 * same targets from them with srv_job_build(), which is also the code that
 * validates here. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../retarget/retarget.h"
#include "../kinematics/traj.h"
#include "../retarget/output.h"
#include "internal.h"

#define JOB_MAX_NAME 120

/* --- options --------------------------------------------------------------- */

struct job_opts {
    int max_lm_iters, max_cg_iters, init_iters, linear; /* -1: unset */
    double cg_tol, fps;                                 /* < 0: unset */
};

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

/* Parses the "options" object (NULL: none) into `o`; unknown keys and
 * values out of range are errors naming body.options.KEY. */
static enum rt_status parse_options(const cJSON *obj, struct job_opts *o, struct rt_err *err)
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

/* The canonical text of `o` (fixed key order), malloc'd. */
static char *options_text(const struct job_opts *o)
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
    struct job_opts o;
    enum rt_status st;
    memset(in, 0, sizeof *in);
    cJSON *oj = j->options ? cJSON_Parse(j->options) : NULL;
    st = parse_options(oj, &o, err);
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

/* --- JSON views ------------------------------------------------------------ */

static void add_time(cJSON *o, const char *k, double t)
{
    if (t > 0) cJSON_AddNumberToObject(o, k, t);
    else cJSON_AddNullToObject(o, k);
}

static cJSON *job_json(const struct store_job *j)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)j->id);
    cJSON_AddStringToObject(o, "name", j->name);
    cJSON_AddStringToObject(o, "state", store_state_str(j->state));
    cJSON_AddStringToObject(o, "robot", j->robot);
    if (j->profile[0]) cJSON_AddStringToObject(o, "profile", j->profile);
    else cJSON_AddNullToObject(o, "profile");
    cJSON_AddStringToObject(o, "source", j->source_kind == STORE_SRC_CSV ? "csv" : "bvh");
    if (j->source_robot[0]) cJSON_AddStringToObject(o, "source_robot", j->source_robot);
    cJSON_AddNumberToObject(o, "frames", j->frames);
    cJSON *opts = j->options ? cJSON_Parse(j->options) : NULL;
    cJSON_AddItemToObject(o, "options", opts ? opts : cJSON_CreateObject());
    cJSON *p = cJSON_AddObjectToObject(o, "progress");
    cJSON_AddNumberToObject(p, "lm_iteration", j->lm_iter);
    if (isfinite(j->cost)) cJSON_AddNumberToObject(p, "cost", j->cost);
    else cJSON_AddNullToObject(p, "cost");
    add_time(o, "created", j->created);
    add_time(o, "started", j->started);
    add_time(o, "finished", j->finished);
    cJSON_AddNumberToObject(o, "attempts", j->attempts);
    if (j->started > 0 && j->finished > 0) cJSON_AddNumberToObject(o, "run_seconds", j->finished - j->started);
    if (j->started > 0) cJSON_AddNumberToObject(o, "queue_seconds", j->started - j->created);
    if (j->batch_clips > 0) {
        cJSON_AddNumberToObject(o, "solve_seconds", j->solve_seconds);
        cJSON_AddNumberToObject(o, "batch_clips", j->batch_clips);
    }
    if (j->idem_key[0]) cJSON_AddStringToObject(o, "idempotency_key", j->idem_key);
    cJSON *e = j->error ? cJSON_Parse(j->error) : NULL;
    cJSON_AddItemToObject(o, "error", e ? e : cJSON_CreateNull());
    return o;
}

/* --- POST /v1/jobs ----------------------------------------------------------- */

static const char *qarg(struct MHD_Connection *c, const char *k)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
}

static enum rt_status json_error(const char *body, size_t len, const char *end, struct rt_err *err)
{
    size_t off = end && end >= body && end <= body + len ? (size_t)(end - body) : 0;
    long line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (body[i] == '\n') line++, col = 1;
        else col++;
    }
    char where[64];
    snprintf(where, sizeof where, "body:%ld:%ld", line, col);
    return rt_err_set(err, RT_EPARSE, where, "malformed JSON at offset %zu (line %ld, column %ld)", off, line, col);
}

static enum rt_status get_str(const cJSON *root, const char *key, int required, const char **out,
                              struct rt_err *err)
{
    char where[64];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    snprintf(where, sizeof where, "body.%s", key);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) {
        if (required) return rt_err_set(err, RT_EINVAL, where, "required");
        return RT_OK;
    }
    if (!cJSON_IsString(v)) return rt_err_set(err, RT_EINVAL, where, "expected a string");
    *out = v->valuestring;
    return RT_OK;
}

static void hash_field(struct rt_sha256 *h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    rt_sha256_update(h, &n, sizeof n);
    if (n) rt_sha256_update(h, s, n);
}

static enum MHD_Result post_job(struct srv *s, struct MHD_Connection *c, struct srv_req *r)
{
    struct rt_err err;
    cJSON *root = NULL;
    struct kin_robot *robot = NULL;
    struct srv_job_input in;
    struct job_opts o;
    char *opts = NULL, class_key[256], name[JOB_MAX_NAME + 1];
    const char *robot_name = NULL, *profile = NULL, *clip = NULL, *source_robot = NULL, *jname = NULL;
    size_t clip_len = 0;
    int kind = STORE_SRC_BVH;
    enum rt_status st;
    memset(&in, 0, sizeof in);
    rt_err_clear(&err);
    if (qarg(c, "robot")) {
        /* A raw BVH body: POST /v1/jobs?robot=g1[&profile=P][&name=N]. */
        robot_name = qarg(c, "robot");
        profile = qarg(c, "profile");
        jname = qarg(c, "name");
        clip = r->body;
        clip_len = r->len;
        st = parse_options(NULL, &o, &err);
    } else {
        const char *end = NULL;
        root = cJSON_ParseWithLengthOpts(r->body, r->len, &end, 0);
        if (!root) {
            st = json_error(r->body, r->len, end, &err);
            goto fail;
        }
        if (!cJSON_IsObject(root)) {
            st = rt_err_set(&err, RT_EINVAL, "body", "expected a JSON object");
            goto fail;
        }
        for (cJSON *v = root->child; v; v = v->next)
            if (strcmp(v->string, "robot") && strcmp(v->string, "profile") && strcmp(v->string, "clip") &&
                strcmp(v->string, "source_robot") && strcmp(v->string, "trajectory") &&
                strcmp(v->string, "options") && strcmp(v->string, "name")) {
                char where[96];
                snprintf(where, sizeof where, "body.%.60s", v->string);
                st = rt_err_set(&err, RT_EINVAL, where,
                                "unknown field (known: robot, profile, clip, source_robot, trajectory, options, name)");
                goto fail;
            }
        const char *traj = NULL;
        if ((st = get_str(root, "robot", 1, &robot_name, &err)) != RT_OK ||
            (st = get_str(root, "profile", 0, &profile, &err)) != RT_OK ||
            (st = get_str(root, "clip", 0, &clip, &err)) != RT_OK ||
            (st = get_str(root, "source_robot", 0, &source_robot, &err)) != RT_OK ||
            (st = get_str(root, "trajectory", 0, &traj, &err)) != RT_OK ||
            (st = get_str(root, "name", 0, &jname, &err)) != RT_OK)
            goto fail;
        if ((clip != NULL) == (traj != NULL)) {
            st = rt_err_set(&err, RT_EINVAL, "body.clip", "give either \"clip\" (BVH text) or \"trajectory\" (CSV text)");
            goto fail;
        }
        if (traj) {
            if (!source_robot) {
                st = rt_err_set(&err, RT_EINVAL, "body.source_robot", "required with \"trajectory\"");
                goto fail;
            }
            kind = STORE_SRC_CSV;
            clip = traj;
        }
        clip_len = strlen(clip);
        st = parse_options(cJSON_GetObjectItemCaseSensitive(root, "options"), &o, &err);
        /* A BVH clip's frame rate is its Frame Time: an fps would be ignored
         * (and would only split batches). */
        if (st == RT_OK && kind == STORE_SRC_BVH && o.fps >= 0)
            st = rt_err_set(&err, RT_EINVAL, "body.options.fps",
                            "a BVH clip carries its own Frame Time; fps is for trajectories only");
    }
    if (st != RT_OK) goto fail;
    if ((st = srv_name_check(robot_name, "robot", "body.robot", &err)) != RT_OK ||
        (profile && (st = srv_name_check(profile, "profile", "body.profile", &err)) != RT_OK) ||
        (source_robot && (st = srv_name_check(source_robot, "robot", "body.source_robot", &err)) != RT_OK))
        goto fail;
    snprintf(name, sizeof name, "%s", jname && jname[0] ? jname : "clip");
    for (char *p = name; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 32 || *p == '"') *p = '_';
    if (name[0] == '.') name[0] = '_';
    if (!(opts = options_text(&o))) {
        st = rt_err_set(&err, RT_ENOMEM, "body", "out of memory");
        goto fail;
    }
    /* Validate everything by building the targets, as the worker will. */
    if ((st = srv_robot_load(s, robot_name, &robot, &err)) != RT_OK) {
        if (st == RT_ENOTFOUND) snprintf(err.where, sizeof err.where, "body.robot");
        goto fail;
    }
    struct store_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.robot, sizeof j.robot, "%s", robot_name);
    snprintf(j.profile, sizeof j.profile, "%s", profile ? profile : "");
    snprintf(j.source_robot, sizeof j.source_robot, "%s", source_robot ? source_robot : "");
    j.source_kind = kind;
    j.options = opts;
    j.clip = (char *)clip;
    j.clip_len = clip_len;
    if ((st = srv_job_build(s, &j, robot, &in, &err)) != RT_OK) {
        /* A profile that does not exist (404) or cannot map the clip (400). */
        if (!strcmp(err.where, "profile")) snprintf(err.where, sizeof err.where, "body.profile");
        goto fail;
    }
    snprintf(class_key, sizeof class_key, "%s|%s|%s|%s|%s", robot_name, in.profile,
             kind == STORE_SRC_CSV ? "csv" : "bvh", source_robot ? source_robot : "", opts);
    struct store_job_new nj = {
        .owner = r->owner,
        .idem_key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key"),
        .name = name,
        .robot = robot_name,
        /* An automatic mapping ("auto:TEMPLATE") is no stored profile: the
         * worker maps the clip again, with the same result. */
        .profile = in.profile[0] && strncmp(in.profile, "auto:", 5) ? in.profile : NULL,
        .options = opts,
        .source_robot = source_robot,
        .class_key = class_key,
        .source_kind = kind,
        .clip = clip,
        .clip_len = clip_len,
        .frames = in.t.n_frames,
        .max_active = s->cfg.max_active,
    };
    if (nj.idem_key && !nj.idem_key[0]) nj.idem_key = NULL;
    struct rt_sha256 h;
    rt_sha256_init(&h);
    hash_field(&h, robot_name);
    hash_field(&h, profile);
    hash_field(&h, source_robot);
    hash_field(&h, opts);
    hash_field(&h, name);
    rt_sha256_update(&h, &clip_len, sizeof clip_len);
    rt_sha256_update(&h, clip, clip_len);
    rt_sha256_final(&h, nj.input_hash);
    int64_t id = 0;
    int existed = 0;
    if ((st = store_job_insert(s->store, &nj, &id, &existed, &err)) != RT_OK) goto fail;
    if (!existed) sched_add(s->sched, id, nj.frames, class_key);
    srv_job_input_free(&in);
    kin_robot_free(robot);
    free(opts);
    cJSON_Delete(root);
    robot = NULL;
    struct store_job out;
    if ((st = store_job_get(s->store, id, NULL, 0, &out, &err)) != RT_OK) return srv_reply_err(s, c, &err);
    cJSON *jj = job_json(&out);
    store_job_release(&out);
    char *text = cJSON_PrintUnformatted(jj);
    cJSON_Delete(jj);
    if (!text) {
        rt_err_set(&err, RT_ENOMEM, "jobs", "out of memory");
        return srv_reply_err(s, c, &err);
    }
    char loc[64];
    snprintf(loc, sizeof loc, "/v1/jobs/%lld", (long long)id);
    return srv_reply_json_hdr(s, c, existed ? MHD_HTTP_OK : MHD_HTTP_CREATED, text, MHD_HTTP_HEADER_LOCATION,
                              loc);
fail:
    srv_job_input_free(&in);
    kin_robot_free(robot);
    free(opts);
    cJSON_Delete(root);
    return srv_reply_err(s, c, &err);
}

/* --- GET /v1/jobs ------------------------------------------------------------ */

static enum rt_status query_int(struct MHD_Connection *c, const char *k, long long lo, long long hi,
                                long long *out, struct rt_err *err)
{
    const char *v = qarg(c, k);
    if (!v) return RT_OK;
    char *end, where[32];
    errno = 0;
    long long x = strtoll(v, &end, 10);
    snprintf(where, sizeof where, "query.%s", k);
    if (!(v[0] >= '0' && v[0] <= '9') || *end || errno || x < lo || x > hi)
        return rt_err_set(err, RT_EINVAL, where, "expected an integer in [%lld, %lld]", lo, hi);
    *out = x;
    return RT_OK;
}

static enum MHD_Result list_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r)
{
    struct rt_err err;
    long long limit = 50, before = 0;
    struct store_job *jobs = NULL;
    int n = 0;
    if (query_int(c, "limit", 1, STORE_MAX_PAGE, &limit, &err) != RT_OK ||
        query_int(c, "before", 0, INT64_MAX, &before, &err) != RT_OK ||
        store_job_list(s->store, r->owner, before, (int)limit, &jobs, &n, &err) != RT_OK)
        return srv_reply_err(s, c, &err);
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "jobs");
    for (int i = 0; i < n; i++) {
        cJSON_AddItemToArray(arr, job_json(&jobs[i]));
        store_job_release(&jobs[i]);
    }
    if (n == limit && n > 0) cJSON_AddNumberToObject(root, "next_before", (double)jobs[n - 1].id);
    else cJSON_AddNullToObject(root, "next_before");
    free(jobs);
    return srv_reply_json(s, c, MHD_HTTP_OK, root);
}

/* --- results ----------------------------------------------------------------- */

/* A boolean query parameter: absent keeps *out; 0/false and 1/true set it;
 * anything else is RT_EINVAL naming query.K. */
static enum rt_status query_bool(struct MHD_Connection *c, const char *k, int *out, struct rt_err *err)
{
    const char *v = qarg(c, k);
    char where[32];
    if (!v) return RT_OK;
    if (!strcmp(v, "0") || !strcmp(v, "false")) *out = 0;
    else if (!strcmp(v, "1") || !strcmp(v, "true")) *out = 1;
    else {
        snprintf(where, sizeof where, "query.%s", k);
        return rt_err_set(err, RT_EINVAL, where, "expected 0, 1, false or true, got '%.20s'", v);
    }
    return RT_OK;
}

static enum MHD_Result get_result(struct srv *s, struct MHD_Connection *c, struct srv_req *r, int csv)
{
    struct rt_err err;
    struct store_job j;
    struct kin_robot *robot = NULL;
    float *traj = NULL;
    char *report = NULL, *text = NULL, *names = NULL;
    cJSON *cols_json = NULL;
    size_t len = 0;
    int frames = 0, cols = 0;
    int want_traj = 1, header = 1, ok = 0; /* ok: text holds the reply */
    memset(&j, 0, sizeof j);
    if ((!csv && query_bool(c, "trajectory", &want_traj, &err) != RT_OK) ||
        (csv && query_bool(c, "header", &header, &err) != RT_OK) ||
        store_job_get(s->store, r->id, r->owner, 0, &j, &err) != RT_OK ||
        store_result_get(s->store, r->id, r->owner, &frames, &cols, &names, want_traj ? &traj : NULL,
                         csv ? NULL : &report, &err) != RT_OK)
        goto done;
    if (!names) {
        /* A result stored before schema version 3 has no column names: the
         * robot's current joints name them, if it still has as many. */
        if (srv_robot_load(s, j.robot, &robot, &err) != RT_OK) goto done;
        if (cols != RT_ROOT_COLS + robot->n_dof) {
            rt_err_set(&err, RT_ESTATE, "result", "robot '%s' changed since the job ran (%d columns, now %d)",
                       j.robot, cols, RT_ROOT_COLS + robot->n_dof);
            goto done;
        }
        if (!(names = rtg_columns_json(robot))) {
            rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
            goto done;
        }
    }
    cols_json = cJSON_Parse(names);
    if (!cJSON_IsArray(cols_json) || cJSON_GetArraySize(cols_json) != cols) {
        rt_err_set(&err, RT_EIO, "result", "job %lld: stored column names do not match its %d columns",
                   (long long)j.id, cols);
        goto done;
    }
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
        goto done;
    }
    if (csv) {
        /* The stored header names the columns (the robot may have changed). */
        const char **hdr = calloc((size_t)cols, sizeof *hdr);
        int k = 0;
        if (!hdr) {
            fclose(f);
            free(text);
            rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
            goto done;
        }
        for (const cJSON *e = cols_json->child; e; e = e->next, k++)
            hdr[k] = cJSON_IsString(e) ? e->valuestring : "";
        rtg_csv_write(f, header ? hdr : NULL, cols, traj, frames, NULL);
        free(hdr);
    } else {
        cJSON *nm = cJSON_CreateString(j.name), *rb = cJSON_CreateString(j.robot);
        char *nms = cJSON_PrintUnformatted(nm), *rbs = cJSON_PrintUnformatted(rb);
        char *cls = cJSON_PrintUnformatted(cols_json);
        cJSON_Delete(nm);
        cJSON_Delete(rb);
        fprintf(f, "{\"id\":%lld,\"name\":%s,\"robot\":%s,\"frames\":%d,\"columns\":%s", (long long)j.id,
                nms ? nms : "null", rbs ? rbs : "null", frames, cls ? cls : "null");
        free(nms);
        free(rbs);
        free(cls);
        fprintf(f, ",\"report\":%s", report);
        if (want_traj) {
            fputs(",\"trajectory\":", f);
            rtg_json_rows_write(f, cols, traj, frames);
        }
        fputc('}', f);
    }
    if (fclose(f) || !text) {
        free(text);
        rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
        goto done;
    }
    ok = 1;
done:
    store_job_release(&j);
    kin_robot_free(robot);
    cJSON_Delete(cols_json);
    free(names);
    free(traj);
    free(report);
    if (!ok) return srv_reply_err(s, c, &err);
    return srv_reply(s, c, MHD_HTTP_OK, csv ? "text/csv" : "application/json", text, len);
}

enum MHD_Result srv_route_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                               const char *method)
{
    struct rt_err err;
    struct store_job j;
    rt_err_clear(&err);
    switch (r->route) {
    case SRV_R_JOBS: return !strcmp(method, "POST") ? post_job(s, c, r) : list_jobs(s, c, r);
    case SRV_R_RESULT: return get_result(s, c, r, 0);
    case SRV_R_RESULT_CSV: return get_result(s, c, r, 1);
    default: break;
    }
    if (!strcmp(method, "DELETE")) {
        int prev = -1;
        if (store_job_cancel(s->store, r->id, r->owner, &prev, &err) != RT_OK) return srv_reply_err(s, c, &err);
        sched_remove(s->sched, r->id);
        if (!s->cfg.quiet)
            rt_log("info", "jobs", "cancel", "job %lld cancelled while %s", (long long)r->id, store_state_str(prev));
    }
    if (store_job_get(s->store, r->id, r->owner, 0, &j, &err) != RT_OK) return srv_reply_err(s, c, &err);
    cJSON *o = job_json(&j);
    store_job_release(&j);
    return srv_reply_json(s, c, MHD_HTTP_OK, o);
}
