/* jobs.c -- the job resources: POST /v1/jobs (a clip, trajectory or
 * joint positions for a robot), GET
 * /v1/jobs (the token's jobs, paged), GET and DELETE /v1/jobs/ID, GET
 * /v1/jobs/ID/result (report and trajectory as JSON; with ?series=1 also
 * per-frame series for plotting), .../result.csv, .../result.npz (the
 * BeyondMimic/mjlab motion layout, rendered on fetch from the stored
 * floats; ?fps=F resamples) and .../source (the clip or trajectory text as
 * submitted).
 *
 * A submission is validated completely before it is stored: the request
 * read strictly (server/parse.c: strict JSON, the raw form's query, UTF-8
 * names and keys), the options, the robot and profile names, the clip
 * (parsed, limits on frames, joints and values) and its plan (retarget/
 * job.h), so that a stored job fails later only for reasons outside the
 * input (memory, the backend). What is stored is the clip text, canonical
 * options and the plan; the worker builds the targets from them with
 * srv_job_build() (server/job_input.c). srv_jobs_submit() runs on a
 * validation thread (http.c) and holds the robots and profile it plans
 * with until the row is written (assets.h). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../base/num.h"
#include "../base/sha256.h"
#include "../base/utf8.h"
#include "../kinematics/robot.h"
#include "../retarget/job.h"
#include "../retarget/output.h"
#include "../storage/store.h"
#include "assets.h"
#include "job_input.h"
#include "jobs.h"
#include "metrics.h"
#include "parse.h"
#include "plans.h"
#include "reply.h"
#include "sched.h"
#include "state.h"

_Static_assert(SRV_JOB_NAME_BYTES <= STORE_MAX_JOB_NAME, "a cut job name fits the store's");
_Static_assert(SRV_MAX_KEY == STORE_MAX_KEY, "one limit for idempotency keys");

/* --- JSON views ------------------------------------------------------------ */

static void add_time(cJSON *o, const char *k, double t)
{
    if (t > 0) cJSON_AddNumberToObject(o, k, t);
    else cJSON_AddNullToObject(o, k);
}

/* A stored string as JSON text can carry: a row written before names and
 * keys were checked may hold bytes that are not UTF-8, which would make
 * the whole reply invalid JSON. `buf` gets a repaired copy. */
static const char *utf8_text(const char *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", s);
    rt_utf8_repair(buf);
    return buf;
}

static cJSON *job_json(const struct store_job *j)
{
    char buf[sizeof j->name > sizeof j->idem_key ? sizeof j->name : sizeof j->idem_key];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)j->id);
    cJSON_AddStringToObject(o, "name", utf8_text(j->name, buf, sizeof buf));
    cJSON_AddStringToObject(o, "state", store_state_str(j->state));
    cJSON_AddStringToObject(o, "robot", j->robot);
    if (j->profile[0]) cJSON_AddStringToObject(o, "profile", j->profile);
    else cJSON_AddNullToObject(o, "profile");
    cJSON_AddStringToObject(o, "source", store_source_str(j->source_kind));
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
    if (j->idem_key[0]) cJSON_AddStringToObject(o, "idempotency_key", utf8_text(j->idem_key, buf, sizeof buf));
    cJSON *e = j->error ? cJSON_Parse(j->error) : NULL;
    cJSON_AddItemToObject(o, "error", e ? e : cJSON_CreateNull());
    return o;
}

/* --- POST /v1/jobs ----------------------------------------------------------- */

static const char *qarg(struct MHD_Connection *c, const char *k)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
}

static void hash_field(struct rt_sha256 *h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    rt_sha256_update(h, &n, sizeof n);
    if (n) rt_sha256_update(h, s, n);
}

/* The names a submission plans with, held (assets.h srv_asset_hold) from
 * before they are loaded until the job row is written. */
struct holds {
    const char *kind[3], *name[3];
    int n;
};

static enum rt_status hold(struct srv *s, struct holds *h, const char *kind, const char *name,
                           struct rt_err *err)
{
    if (!name) return RT_OK;
    enum rt_status st = srv_asset_hold(s, kind, name, err);
    if (st == RT_OK) {
        h->kind[h->n] = kind;
        h->name[h->n++] = name;
    }
    return st;
}

static void release(struct srv *s, struct holds *h)
{
    while (h->n > 0) {
        h->n--;
        srv_asset_release(s, h->kind[h->n], h->name[h->n]);
    }
}

void srv_jobs_submit(struct srv *s, struct srv_req *r, struct srv_resp *out)
{
    struct rt_err err;
    cJSON *root = NULL;
    struct kin_robot *robot = NULL, *src = NULL;
    struct rtg_profile *prof = NULL;
    struct srv_submit sub;
    struct rtg_job_spec spec;
    struct rtg_job_plan plan;
    struct holds held = {{0}, {0}, 0};
    char *opts = NULL, *plan_text = NULL, class_key[256], name[SRV_JOB_NAME_BYTES + 1];
    const char *idem = NULL;
    enum rt_status st;
    memset(&plan, 0, sizeof plan);
    memset(&sub, 0, sizeof sub);
    rt_err_clear(&err);
    double t_prep = rt_now();
    /* What the request says, strictly (parse.h): form, fields, names, key. */
    if ((st = srv_idem_key(r->idem, &idem, &err)) != RT_OK ||
        (st = srv_submit_parse(r->body, r->len, &r->query, r->ctype, &sub, &root, &err)) != RT_OK)
        goto fail;
    const char *robot_name = sub.robot, *profile = sub.profile, *source_robot = sub.source_robot;
    if ((st = srv_name_check(robot_name, "robot", sub.where_robot, &err)) != RT_OK ||
        (profile && (st = srv_name_check(profile, "profile", sub.where_profile, &err)) != RT_OK) ||
        (source_robot && (st = srv_name_check(source_robot, "robot", "body.source_robot", &err)) != RT_OK) ||
        (st = srv_job_name(sub.name, sub.where_name, name, &err)) != RT_OK)
        goto fail;
    if (!(opts = rtg_job_options_json(&sub.opts))) {
        st = rt_err_set(&err, RT_ENOMEM, "body", "out of memory");
        goto fail;
    }
    /* Plan the job (retarget/job.h): every way the input can be wrong is
     * found here; the worker builds the targets from the stored plan. The
     * robots and the profile stay held until the row is written, so that
     * none is replaced between the plan and the insert. */
    if ((st = hold(s, &held, "robot", robot_name, &err)) != RT_OK ||
        (st = hold(s, &held, "robot", sub.kind == STORE_SRC_CSV ? source_robot : NULL, &err)) != RT_OK ||
        (st = hold(s, &held, "profile", profile, &err)) != RT_OK)
        goto fail;
    if (s->cfg.plan_delay_ms > 0) usleep((useconds_t)s->cfg.plan_delay_ms * 1000u); /* test hook */
    if ((st = srv_robot_load(s, robot_name, &robot, &err)) != RT_OK) {
        if (st == RT_ENOTFOUND) snprintf(err.where, sizeof err.where, "%s", sub.where_robot);
        goto fail;
    }
    if (profile && (st = srv_profile_load(s, profile, &prof, &err)) != RT_OK) {
        if (st == RT_ENOTFOUND || !strcmp(err.where, "profile"))
            snprintf(err.where, sizeof err.where, "%s", sub.where_profile);
        goto fail;
    }
    if (sub.kind == STORE_SRC_CSV && (st = srv_robot_load(s, source_robot, &src, &err)) != RT_OK) {
        if (st == RT_ENOTFOUND) snprintf(err.where, sizeof err.where, "body.source_robot");
        goto fail;
    }
    srv_job_spec(s, robot_name, robot, prof, sub.kind, sub.source, sub.source_len, source_robot, src, &sub.opts,
                 &spec);
    spec.joint_names = sub.joint_names;
    spec.joint_names_len = sub.joint_names_len;
    spec.joint_units = sub.joint_units;
    spec.joint_up = sub.joint_up;
    /* The body outlives the plan, whose source is dropped before the insert:
     * a clip's frames are read from the body, not copied (submit memory). */
    spec.source_borrow = 1;
    double t_plan = rt_now();
    srv_metrics_submit(&s->metrics, SRV_SUB_PREPARE, t_plan - t_prep);
    st = rtg_job_plan(&spec, &plan, &err);
    double t_planned = rt_now();
    srv_metrics_stage(&s->metrics, SRV_STAGE_PLAN, t_planned - t_plan);
    srv_metrics_submit(&s->metrics, SRV_SUB_PLAN, t_planned - t_plan);
    if (st != RT_OK) {
        /* A profile that does not exist (404) or cannot map the clip (400);
         * a robot whose roles cannot be mapped (400). */
        if (!strcmp(err.where, "profile") || !strcmp(err.where, "body.profile"))
            snprintf(err.where, sizeof err.where, "%s", sub.where_profile);
        else if (!strcmp(err.where, "robot"))
            snprintf(err.where, sizeof err.where, "%s", sub.where_robot);
        goto fail;
    }
    if (!(plan_text = rtg_job_plan_json(&plan))) {
        st = rt_err_set(&err, RT_ENOMEM, "body", "out of memory");
        goto fail;
    }
    /* The parsed source is as big as the text again: gone before the
     * store copies the text (a submission costs at most twice its body) --
     * unless it is a trajectory small enough to be handed to the worker
     * (server/plans.h), which then need not parse it again. */
    int keep = srv_plans_fits(s->plans, &plan);
    if (!keep) rtg_job_plan_drop_source(&plan);
    /* A named profile goes by the name the client gave it. */
    const char *used = profile ? profile : plan.profile_name;
    snprintf(class_key, sizeof class_key, "%s|%s|%s|%s|%s", robot_name, used, store_source_str(sub.kind),
             source_robot ? source_robot : "", opts);
    struct store_job_new nj = {
        .owner = r->owner,
        .idem_key = idem,
        .name = name,
        .robot = robot_name,
        /* An automatic mapping ("auto:TEMPLATE") is no stored profile: the
         * plan holds it in full. */
        .profile = used[0] && !plan.profile_auto ? used : NULL,
        .options = opts,
        .plan = plan_text,
        .source_robot = source_robot,
        .class_key = class_key,
        .source_kind = sub.kind,
        .clip = sub.source,
        .clip_len = sub.source_len,
        .joint_names = sub.joint_names,
        .joint_units = sub.joint_units,
        .joint_up = sub.joint_up,
        .frames = plan.n_frames,
        .max_active = s->cfg.max_active,
    };
    struct rt_sha256 h;
    if (rt_sha256_init(&h) != RT_OK) {
        st = rt_err_set(&err, RT_ENOMEM, "body", "out of memory");
        goto fail;
    }
    hash_field(&h, robot_name);
    hash_field(&h, profile);
    hash_field(&h, source_robot);
    hash_field(&h, opts);
    hash_field(&h, name);
    /* A joint-position source also by what reads it (hashed only for that
     * kind, so that the hashes of other jobs, and their keys, stay). */
    if (sub.kind == STORE_SRC_JOINTS) {
        hash_field(&h, "joints");
        hash_field(&h, sub.joint_names);
        rt_sha256_update(&h, &sub.joint_units, sizeof sub.joint_units);
        rt_sha256_update(&h, &sub.joint_up, 1);
    }
    rt_sha256_update(&h, &nj.clip_len, sizeof nj.clip_len);
    rt_sha256_update(&h, nj.clip, nj.clip_len);
    rt_sha256_final(&h, nj.input_hash);
    int64_t id = 0;
    int existed = 0;
    struct store_insert_times it = {0, 0, -1, -1, -1, -1};
    nj.times = &it;
    double t_insert = rt_now();
    st = store_job_insert(s->store, &nj, &id, &existed, &err);
    double t_inserted = rt_now();
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT, t_inserted - t_insert);
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT_PACK, it.pack);
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT_GROUP, it.group);
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT_LOCK, it.lock);
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT_WRITE, it.write);
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT_COMMIT, it.commit);
    srv_metrics_submit(&s->metrics, SRV_SUB_INSERT_MORE, it.more);
    /* Kept before the names are released: a robot or profile replaced
     * after this drops it (srv_plans_clear). The cache owns src then. */
    if (st == RT_OK && !existed && keep && srv_plans_put(s->plans, id, &plan, src)) src = NULL;
    release(s, &held);
    if (st != RT_OK) goto fail;
    if (!existed) sched_add(s->sched, id, nj.frames, class_key);
    srv_submit_free(&sub);
    rtg_job_plan_free(&plan);
    rtg_profile_free(prof);
    kin_robot_free(robot);
    kin_robot_free(src);
    free(opts);
    free(plan_text);
    cJSON_Delete(root);
    struct store_job job;
    if ((st = store_job_get(s->store, id, NULL, 0, &job, &err)) != RT_OK) {
        srv_resp_err(s, out, &err);
        return;
    }
    cJSON *jj = job_json(&job);
    store_job_release(&job);
    char *text = cJSON_PrintUnformatted(jj);
    cJSON_Delete(jj);
    char loc[64];
    snprintf(loc, sizeof loc, "/v1/jobs/%lld", (long long)id);
    srv_resp_json_hdr(s, out, existed ? MHD_HTTP_OK : MHD_HTTP_CREATED, text, MHD_HTTP_HEADER_LOCATION, loc);
    srv_metrics_submit(&s->metrics, SRV_SUB_REPLY, rt_now() - t_inserted);
    return;
fail:
    release(s, &held);
    srv_submit_free(&sub);
    rtg_job_plan_free(&plan);
    rtg_profile_free(prof);
    kin_robot_free(robot);
    kin_robot_free(src);
    free(opts);
    free(plan_text);
    cJSON_Delete(root);
    srv_resp_err(s, out, &err);
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
static enum rt_status query_bool(const struct srv_req *r, const char *k, int *out, struct rt_err *err)
{
    const char *v = srv_query_get(&r->query, k);
    char where[32];
    if (!v) return RT_OK;
    if (!strcmp(v, "0") || !strcmp(v, "false")) *out = 0;
    else if (!strcmp(v, "1") || !strcmp(v, "true")) *out = 1;
    else {
        snprintf(where, sizeof where, "query.%s", k);
        return rt_err_set(err, RT_EINVAL, where, "expected 0, 1, false or true, got '%s'", RT_QUOTE(v));
    }
    return RT_OK;
}

/* The reply of GET /v1/jobs/ID/result[.csv] into `out`: from the request's
 * copied query and the store only, so that it runs on a validation thread
 * while the connection is suspended (formatting a long result takes
 * milliseconds that an HTTP thread owes its other connections' polls). */
static void result_resp(struct srv *s, struct srv_req *r, int csv, struct srv_resp *out)
{
    struct rt_err err;
    struct store_job j;
    struct kin_robot *robot = NULL;
    float *traj = NULL;
    char *report = NULL, *text = NULL, *names = NULL;
    cJSON *cols_json = NULL;
    size_t len = 0;
    int frames = 0, cols = 0;
    char *series = NULL;
    int want_traj = 1, header = 1, want_series = 0, ok = 0; /* ok: text holds the reply */
    memset(&j, 0, sizeof j);
    if ((!csv && query_bool(r, "trajectory", &want_traj, &err) != RT_OK) ||
        (!csv && query_bool(r, "series", &want_series, &err) != RT_OK) ||
        (csv && query_bool(r, "header", &header, &err) != RT_OK) ||
        store_job_get(s->store, r->id, r->owner, want_series, &j, &err) != RT_OK ||
        store_result_get(s->store, r->id, r->owner, &frames, &cols, &names,
                         want_traj || want_series ? &traj : NULL, csv ? NULL : &report, &err) != RT_OK)
        goto done;
    /* The series need the targets: the job is built again from its plan. */
    if (want_series && srv_job_series(s, &j, traj, frames, cols, &series, &err) != RT_OK) goto done;
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
    /* Inputs are bounded so that no solve yields inf or nan (the readers'
     * bounds); a stored value that is not finite would make the JSON
     * reply invalid, so it is refused as a corrupt row instead. */
    for (size_t i = 0; traj && i < (size_t)frames * (size_t)cols; i++)
        if (!isfinite(traj[i])) {
            rt_err_set(&err, RT_EIO, "result", "job %lld: the stored trajectory holds a value that is not finite "
                                               "(frame %zu, column %zu)",
                       (long long)j.id, i / (size_t)cols, i % (size_t)cols + 1);
            goto done;
        }
    cols_json = cJSON_Parse(names);
    if (!cJSON_IsArray(cols_json) || cJSON_GetArraySize(cols_json) != cols) {
        rt_err_set(&err, RT_EIO, "result", "job %lld: stored column names do not match its %d columns",
                   (long long)j.id, cols);
        goto done;
    }
    double t_format = rt_now();
    if (csv) {
        /* The stored header names the columns (the robot may have changed);
         * the rows formatted straight into the reply's buffer. */
        const char **hdr = calloc((size_t)cols, sizeof *hdr);
        int k = 0;
        for (const cJSON *e = cols_json->child; hdr && e; e = e->next, k++)
            hdr[k] = cJSON_IsString(e) ? e->valuestring : "";
        enum rt_status fs = hdr ? rtg_csv_format(header ? hdr : NULL, cols, traj, frames, &text, &len) : RT_ENOMEM;
        free(hdr);
        if (fs != RT_OK) {
            rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
            goto done;
        }
        srv_metrics_stage(&s->metrics, SRV_STAGE_FORMAT, rt_now() - t_format);
        ok = 1;
        goto done;
    }
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
        goto done;
    }
    {
        char nbuf[sizeof j.name];
        cJSON *nm = cJSON_CreateString(utf8_text(j.name, nbuf, sizeof nbuf)), *rb = cJSON_CreateString(j.robot);
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
        if (series) {
            fputs(",\"series\":", f);
            fputs(series, f);
        }
        fputc('}', f);
    }
    if (fclose(f) || !text) {
        free(text);
        rt_err_set(&err, RT_ENOMEM, "result", "out of memory");
        goto done;
    }
    srv_metrics_stage(&s->metrics, SRV_STAGE_FORMAT, rt_now() - t_format);
    ok = 1;
done:
    store_job_release(&j);
    kin_robot_free(robot);
    cJSON_Delete(cols_json);
    free(names);
    free(traj);
    free(report);
    free(series);
    if (!ok) srv_resp_err(s, out, &err);
    else srv_resp_text(s, out, MHD_HTTP_OK, csv ? "text/csv" : "application/json", text, len);
}

/* GET /v1/jobs/ID/result.npz[?fps=F]: the stored trajectory as an NPZ
 * (rtg_npz_format()), its bodies from the job's robot as loaded now; the
 * rate is the report's frame_time, or F (rtg_resample()). RT_ESTATE when
 * the robot's coordinates no longer match the stored columns. */
static void result_npz_resp(struct srv *s, struct srv_req *r, struct srv_resp *out)
{
    struct rt_err err;
    struct store_job j;
    struct kin_robot *robot = NULL;
    float *traj = NULL, *resampled = NULL;
    char *report = NULL, *names = NULL, *npz = NULL;
    cJSON *cols_json = NULL, *rep = NULL;
    size_t len = 0;
    int frames = 0, cols = 0, ok = 0;
    double fps_out = 0;
    const char *fq = srv_query_get(&r->query, "fps");
    memset(&j, 0, sizeof j);
    rt_err_clear(&err);
    if (fq && (!rt_parse_real(fq, &fps_out) || !(fps_out > 0) || fps_out > 10000)) {
        rt_err_set(&err, RT_EINVAL, "query.fps", "expected a frame rate in (0, 10000], got '%s'", RT_QUOTE(fq));
        goto done;
    }
    if (store_job_get(s->store, r->id, r->owner, 0, &j, &err) != RT_OK ||
        store_result_get(s->store, r->id, r->owner, &frames, &cols, &names, &traj, &report, &err) != RT_OK ||
        srv_robot_load(s, j.robot, &robot, &err) != RT_OK)
        goto done;
    if (cols != RT_ROOT_COLS + robot->n_dof) {
        rt_err_set(&err, RT_ESTATE, "result", "robot '%s' changed since the job ran (%d columns, now %d)", j.robot,
                   cols, RT_ROOT_COLS + robot->n_dof);
        goto done;
    }
    /* The stored names must be the robot's coordinates, in its order. */
    cols_json = names ? cJSON_Parse(names) : NULL;
    for (int k = 0; cols_json && k < robot->n_dof; k++) {
        const cJSON *e = cJSON_GetArrayItem(cols_json, RT_ROOT_COLS + k);
        if (!cJSON_IsString(e) || strcmp(e->valuestring, robot->joints[robot->coord_joint[k]].name)) {
            rt_err_set(&err, RT_ESTATE, "result", "robot '%s' changed since the job ran (column %d is '%s')", j.robot,
                       RT_ROOT_COLS + k, cJSON_IsString(e) ? e->valuestring : "?");
            goto done;
        }
    }
    rep = report ? cJSON_Parse(report) : NULL;
    const cJSON *ft = cJSON_GetObjectItemCaseSensitive(rep, "frame_time");
    if (!cJSON_IsNumber(ft) || !(ft->valuedouble > 0)) {
        rt_err_set(&err, RT_EIO, "result", "job %lld: the stored report has no frame_time", (long long)j.id);
        goto done;
    }
    double fps = 1.0 / ft->valuedouble, t_format = rt_now();
    const float *rows = traj;
    if (fps_out > 0) {
        if (rtg_resample(traj, frames, cols, fps, fps_out, &resampled, &frames, &err) != RT_OK) goto done;
        rows = resampled;
        fps = fps_out;
    }
    if (rtg_npz_format(robot, rows, frames, fps, &npz, &len, &err) != RT_OK) goto done;
    srv_metrics_stage(&s->metrics, SRV_STAGE_FORMAT, rt_now() - t_format);
    ok = 1;
done:
    store_job_release(&j);
    kin_robot_free(robot);
    cJSON_Delete(cols_json);
    cJSON_Delete(rep);
    free(names);
    free(traj);
    free(resampled);
    free(report);
    if (!ok) srv_resp_err(s, out, &err);
    else srv_resp_text(s, out, MHD_HTTP_OK, "application/octet-stream", npz, len);
}

int srv_jobs_is_result(int route)
{
    return route == SRV_R_RESULT || route == SRV_R_RESULT_CSV || route == SRV_R_RESULT_NPZ;
}

void srv_jobs_result(struct srv *s, struct srv_req *r, struct srv_resp *out)
{
    if (r->route == SRV_R_RESULT_NPZ) result_npz_resp(s, r, out);
    else result_resp(s, r, r->route == SRV_R_RESULT_CSV, out);
}

/* GET /v1/jobs/ID/source: the clip (BVH, text/plain), trajectory (CSV,
 * text/csv) or joint positions (application/zip for an .npz,
 * application/x-npy, text/csv) exactly as submitted (base64 decoded), to
 * the job's owner; in any state. */
static enum MHD_Result get_source(struct srv *s, struct MHD_Connection *c, struct srv_req *r)
{
    struct rt_err err;
    struct store_job j;
    memset(&j, 0, sizeof j);
    if (store_job_get(s->store, r->id, r->owner, 1, &j, &err) != RT_OK) return srv_reply_err(s, c, &err);
    char *text = j.clip;
    size_t len = j.clip_len;
    const char *label = j.source_kind == STORE_SRC_JOINTS ? srv_joints_label(j.clip ? j.clip : "", len) : "";
    const char *type = j.source_kind == STORE_SRC_CSV     ? "text/csv"
                       : !strcmp(label, "joints.npz")     ? "application/zip"
                       : !strcmp(label, "joints.npy")     ? "application/x-npy"
                       : j.source_kind == STORE_SRC_JOINTS ? "text/csv"
                                                           : "text/plain; charset=utf-8";
    j.clip = NULL;
    store_job_release(&j);
    if (!text && !(text = calloc(1, 1))) {
        rt_err_set(&err, RT_ENOMEM, "jobs", "out of memory");
        return srv_reply_err(s, c, &err);
    }
    return srv_reply(s, c, MHD_HTTP_OK, type, text, len);
}

enum MHD_Result srv_route_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                               const char *method)
{
    struct rt_err err;
    struct store_job j;
    rt_err_clear(&err);
    switch (r->route) {
    case SRV_R_JOBS:
        if (strcmp(method, "POST")) return list_jobs(s, c, r);
        {
            struct srv_resp out = {0, NULL};
            srv_jobs_submit(s, r, &out);
            return srv_resp_queue(s, c, &out);
        }
    case SRV_R_RESULT:
    case SRV_R_RESULT_CSV:
    case SRV_R_RESULT_NPZ: {
        struct srv_resp out = {0, NULL};
        srv_jobs_result(s, r, &out);
        return srv_resp_queue(s, c, &out);
    }
    case SRV_R_SOURCE: return get_source(s, c, r);
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
