/* solve.c -- `retarget solve`: offline retargeting without a server.
 *
 * Each SOURCE (a BVH clip, or a robot trajectory CSV with --source-robot)
 * goes through the job recipe (retarget/job.h): planned (parsed, profile
 * picked, every input checked) and built into targets; the clips are
 * solved alone or, with --batch, together in one solver call per group of
 * clips with identical weights and options (a batch shares them), and each
 * clip's NAME.csv and NAME.report.json are written to the output folder. A
 * clip's CSV bytes are the same solo or batched (DESIGN.md, "The numerical
 * contract"). Every source is planned before anything is solved, so a bad
 * one stops the run before any work. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/num.h"
#include "../kinematics/bvh.h"
#include "../kinematics/robot.h"
#include "../kinematics/traj.h"
#include "../retarget/batch.h"
#include "../retarget/job.h"
#include "../retarget/options.h"
#include "../retarget/output.h"
#include "../retarget/profile.h"
#include "../retarget/retarget.h"
#include "../solver/backend.h"
#include "cli.h"

#define CLI_MAX_SOURCES 4096

struct solve_args {
    const char *robot, *source_robot, *profile, *out_dir, *backend;
    int batch, per_frame, no_header, quiet, threads, help;
    struct rtg_job_options opts;
    int n_sources;
    const char **sources;
};

struct clip {
    const char *path;
    char name[256];
    char profile[128]; /* profile used ("cmu_g1", "auto:cmu_asf_g1"), "" for the identity mapping */
    struct rtg_targets t;
    struct solver_options opt;
    float *state;
    struct solver_clip_result res;
    int solved;
};

static int parse_args(int argc, char **argv, struct solve_args *a, struct rt_err *err)
{
    memset(a, 0, sizeof *a);
    a->out_dir = ".";
    a->backend = "auto";
    a->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (a->threads < 1) a->threads = 1;
    if (a->threads > 64) a->threads = 64;
    a->sources = calloc((size_t)argc + 1, sizeof *a->sources);
    if (!a->sources) return rt_err_set(err, RT_ENOMEM, "args", "out of memory");
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const struct rtg_option *row = rtg_option_by_flag(!strcmp(o, "-q") ? "--quiet" : !strcmp(o, "-h") ? "--help" : o,
                                                          RTG_SCOPE_SOLVE);
        if (!row) {
            if (o[0] == '-' && o[1]) return rt_err_set(err, RT_EINVAL, o, "unknown option (retarget solve --help lists them)");
            if (a->n_sources >= CLI_MAX_SOURCES)
                return rt_err_set(err, RT_ELIMIT, o, "more than %d sources", CLI_MAX_SOURCES);
            a->sources[a->n_sources++] = o;
            continue;
        }
        if (row->kind != RTG_OPT_FLAG) {
            if (!v) return rt_err_set(err, RT_EINVAL, o, "missing value");
            i++;
        }
        if (row->key) {
            /* A job option: the table reads it. */
            if (rtg_job_options_set_text(&a->opts, (enum rtg_job_opt)(row - rtg_options()), v, o, err) != RT_OK)
                return err ? err->code : RT_EINVAL;
        } else if (!strcmp(row->flag, "--robot")) a->robot = v;
        else if (!strcmp(row->flag, "--source-robot")) a->source_robot = v;
        else if (!strcmp(row->flag, "--profile")) a->profile = v;
        else if (!strcmp(row->flag, "-o") || !strcmp(row->flag, "--out")) a->out_dir = v;
        else if (!strcmp(row->flag, "--backend")) a->backend = v;
        else if (!strcmp(row->flag, "--threads")) {
            long long n;
            char range[64];
            if (!rt_parse_int(v, (long long)row->lo, (long long)row->hi, &n))
                return rt_err_set(err, RT_EINVAL, o, "expected %s, got '%.20s'", rtg_option_range(row, range, sizeof range), v);
            a->threads = (int)n;
        }
        else if (!strcmp(row->flag, "--batch")) a->batch = 1;
        else if (!strcmp(row->flag, "--per-frame")) a->per_frame = 1;
        else if (!strcmp(row->flag, "--no-header")) a->no_header = 1;
        else if (!strcmp(row->flag, "--quiet")) a->quiet = 1;
        else if (!strcmp(row->flag, "--help")) a->help = 1;
    }
    if (a->help) return RT_OK;
    if (!a->robot) return rt_err_set(err, RT_EINVAL, "--robot", "required (a bundled name or a URDF path)");
    if (a->n_sources == 0) return rt_err_set(err, RT_EINVAL, "solve", "no source files given");
    return RT_OK;
}

void cli_solve_usage(FILE *f)
{
    fputs("usage: retarget solve SOURCE... --robot NAME|FILE [options]\n"
          "  SOURCE is a BVH clip, or a robot trajectory CSV with --source-robot.\n"
          "  Writes DIR/NAME.csv and DIR/NAME.report.json for each source.\n",
          f);
    rtg_options_usage(f, RTG_SCOPE_SOLVE);
}

/* Plans and builds clip `c` through the job recipe (retarget/job.h);
 * `given` is the --profile profile (NULL without one). */
static enum rt_status load_source(const struct solve_args *a, const struct kin_robot *robot,
                                  const struct kin_robot *src_robot, const struct rtg_profile *given,
                                  struct clip *c, struct rt_err *err)
{
    struct rtg_job_plan plan;
    char *text = NULL;
    size_t len = 0;
    int bvh = cli_is_bvh(c->path);
    enum rt_status st;
    memset(&plan, 0, sizeof plan);
    if (!bvh && !src_robot)
        return rt_err_set(err, RT_EINVAL, c->path, "a trajectory CSV needs --source-robot NAME|URDF (the robot it moves)");
    st = rt_read_file(c->path, bvh ? KIN_BVH_MAX_BYTES : KIN_TRAJ_MAX_BYTES, &text, &len, err);
    if (st != RT_OK) return st;
    const char *base = strrchr(c->path, '/');
    struct rtg_job_spec spec = {
        .robot = robot,
        .robot_name = a->robot,
        .profile = given,
        .source_kind = bvh ? RTG_SRC_BVH : RTG_SRC_TRAJ,
        .source = text,
        .source_len = len,
        /* As kin_bvh_load() and kin_traj_read() label their errors. */
        .source_label = bvh && strlen(c->path) > 80 && base ? base + 1 : c->path,
        .source_robot = src_robot,
        .source_robot_name = a->source_robot,
        .opts = a->opts,
        .profile_where = c->path,
        .profile_hint = "give --profile FILE",
    };
    if ((st = rtg_job_plan(&spec, &plan, err)) != RT_OK) goto done;
    if (plan.warning[0] && !a->quiet) fprintf(stderr, "retarget: %s: warning: %s\n", c->path, plan.warning);
    if ((st = rtg_job_build(robot, &plan, &c->t, err)) != RT_OK) goto done;
    c->opt = plan.opt;
    c->opt.threads = a->threads;
    snprintf(c->profile, sizeof c->profile, "%s", plan.profile_name);
done:
    rtg_job_plan_free(&plan);
    free(text);
    return st;
}

static int weights_equal(const struct kin_robot *robot, const struct clip *cx, const struct clip *cy)
{
    return !memcmp(&cx->opt, &cy->opt, sizeof cx->opt) &&
           rtg_targets_same_weights(robot, &cx->t, &cy->t);
}

struct progress {
    int quiet, n_clips;
    const char *what;
};

static void on_progress(void *user, int lm_iter, int clips_done)
{
    struct progress *p = user;
    if (p->quiet) return;
    fprintf(stderr, "\rsolve %s: LM iteration %d, %d/%d clips done   ", p->what, lm_iter,
            clips_done, p->n_clips);
    fflush(stderr);
}

/* Solves clips[idx[0..n)] as one batch (retarget/batch.c concatenates
 * their targets in the solver's layout and scatters the result back). */
static enum rt_status solve_group(const struct solve_args *a, struct solver_backend *be,
                                  const struct kin_robot *robot, struct clip *clips,
                                  const int *idx, int n, struct rt_err *err)
{
    enum rt_status st;
    struct rtg_batch_item *items = calloc((size_t)n, sizeof *items);
    if (!items) return rt_err_set(err, RT_ENOMEM, "batch", "out of memory");
    for (int i = 0; i < n; i++) items[i].t = &clips[idx[i]].t;
    struct progress prog = {a->quiet || !isatty(2), n, n > 1 ? "batch" : clips[idx[0]].name};
    st = rtg_batch_solve(be, robot, &clips[idx[0]].opt, items, n, on_progress, &prog, err);
    if (!prog.quiet) fputs("\n", stderr);
    if (st == RT_OK)
        for (int i = 0; i < n; i++) {
            struct clip *c = &clips[idx[i]];
            c->state = items[i].state;
            c->res = items[i].res;
            c->solved = n;
        }
    free(items);
    return st;
}

static enum rt_status write_outputs(const struct solve_args *a, struct solver_backend *be,
                                    const struct kin_robot *robot, struct clip *c,
                                    struct rt_err *err)
{
    char path[4096];
    enum rt_status st = RT_OK;
    cJSON *rep = NULL;
    struct rtg_report_info info = {
        .profile = c->profile[0] ? c->profile : NULL,
        .source = c->path,
        .robot = robot->name,
        .backend = solver_backend_name(be),
        .mode = a->per_frame ? "per-frame" : "trajectory",
        .threads = a->threads,
        .batch_clips = c->solved,
    };
    /* The trajectory solve puts the feet on the ground; the per-frame
     * baseline is left as solved. */
    if ((st = rtg_job_finish(robot, &c->t, c->state, !a->per_frame, &info, &c->res, &rep, err)) != RT_OK)
        return st;
    snprintf(path, sizeof path, "%s/%s.csv", a->out_dir, c->name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        cJSON_Delete(rep);
        return rt_err_set(err, RT_EIO, path, "cannot write: %s", strerror(errno));
    }
    const char **names = malloc((size_t)rt_state_cols(&robot->tree) * sizeof *names);
    if (!names) st = rt_err_set(err, RT_ENOMEM, path, "out of memory");
    else st = rtg_csv_write(f, a->no_header ? NULL : names, rtg_columns(robot, names), c->state,
                            c->t.n_frames, err);
    free(names);
    if (fclose(f) && st == RT_OK) st = rt_err_set(err, RT_EIO, path, "write failed");
    if (st != RT_OK) {
        cJSON_Delete(rep);
        return st;
    }
    const cJSON *warn = cJSON_GetObjectItemCaseSensitive(rep, "warnings"), *w;
    cJSON_ArrayForEach(w, warn)
        if (cJSON_IsString(w)) fprintf(stderr, "retarget: %s: warning: %s\n", c->path, w->valuestring);
    char *text = rep ? cJSON_Print(rep) : NULL;
    cJSON_Delete(rep);
    if (!text) return rt_err_set(err, RT_ENOMEM, c->name, "out of memory for the report");
    snprintf(path, sizeof path, "%s/%s.report.json", a->out_dir, c->name);
    st = cli_write_file(path, text, strlen(text), 1, err);
    cJSON_free(text);
    return st;
}

int cli_solve(int argc, char **argv) { return cli_solve_err(argc, argv, NULL); }

int cli_solve_err(int argc, char **argv, struct rt_err *err_out)
{
    struct solve_args a;
    struct rt_err err;
    struct kin_robot *robot = NULL, *src_robot = NULL;
    struct rtg_profile *given = NULL;
    struct solver_backend be = {0};
    struct clip *clips = NULL;
    int *idx = NULL, rc = 1;
    rt_err_clear(&err);
    if (parse_args(argc, argv, &a, &err) != RT_OK) {
        if (err_out) *err_out = err;
        else cli_fail(&err);
        rc = 2;
        goto done;
    }
    if (a.help) {
        cli_solve_usage(stdout);
        rc = 0;
        goto done;
    }
    if (kin_robot_load(a.robot, &robot, &err) != RT_OK) goto fail;
    if (a.source_robot && kin_robot_load(a.source_robot, &src_robot, &err) != RT_OK) goto fail;
    if (solver_backend_init(&be, a.backend, &err) != RT_OK) goto fail;
    if (a.out_dir && cli_mkdirs(a.out_dir, &err) != RT_OK) goto fail;
    clips = calloc((size_t)a.n_sources, sizeof *clips);
    idx = calloc((size_t)a.n_sources, sizeof *idx);
    if (!clips || !idx) {
        rt_err_set(&err, RT_ENOMEM, "solve", "out of memory");
        goto fail;
    }
    if (a.profile && rtg_profile_load(a.profile, &given, &err) != RT_OK) goto fail;
    for (int i = 0; i < a.n_sources; i++) {
        clips[i].path = a.sources[i];
        cli_base_name(a.sources[i], clips[i].name, sizeof clips[i].name);
        for (int j = 0; j < i; j++)
            if (!strcmp(clips[j].name, clips[i].name)) {
                rt_err_set(&err, RT_EINVAL, a.sources[i], "two sources named '%s' would write the same outputs",
                           clips[i].name);
                goto fail;
            }
        if (load_source(&a, robot, src_robot, given, &clips[i], &err) != RT_OK) goto fail;
    }
    if (a.per_frame) {
        for (int i = 0; i < a.n_sources; i++) {
            struct clip *c = &clips[i];
            size_t bytes;
            if (!rt_mul_size((size_t)c->t.n_frames, (size_t)rt_state_cols(&robot->tree) * sizeof(float), &bytes) ||
                !(c->state = malloc(bytes))) {
                rt_err_set(&err, RT_ENOMEM, c->path, "out of memory");
                goto fail;
            }
            if (rtg_solve_per_frame(robot, &c->t, &c->opt, c->state, &c->res, &err) != RT_OK) goto fail;
            c->solved = 1;
        }
    } else if (a.batch) {
        /* Group clips with identical weights; each group is one solver call. */
        for (int i = 0; i < a.n_sources; i++) {
            if (clips[i].solved) continue;
            int n = 0;
            for (int j = i; j < a.n_sources; j++)
                if (!clips[j].solved && weights_equal(robot, &clips[i], &clips[j])) idx[n++] = j;
            if (solve_group(&a, &be, robot, clips, idx, n, &err) != RT_OK) goto fail;
        }
    } else {
        for (int i = 0; i < a.n_sources; i++) {
            idx[0] = i;
            if (solve_group(&a, &be, robot, clips, idx, 1, &err) != RT_OK) goto fail;
        }
    }
    for (int i = 0; i < a.n_sources; i++) {
        if (write_outputs(&a, &be, robot, &clips[i], &err) != RT_OK) goto fail;
        if (!a.quiet)
            fprintf(stderr, "retarget: %s: %d frames, %d LM / %d CG iterations, cost %.6g, %s, %.3f s\n",
                    clips[i].name, clips[i].t.n_frames, clips[i].res.lm_iters, clips[i].res.cg_iters,
                    (double)clips[i].res.final_cost, solver_termination_str(clips[i].res.termination),
                    clips[i].res.seconds);
    }
    rc = 0;
    goto done;
fail:
    if (err_out) *err_out = err;
    else cli_fail(&err);
done:
    if (clips)
        for (int i = 0; i < a.n_sources; i++) {
            rtg_targets_free(&clips[i].t);
            free(clips[i].state);
        }
    free(clips);
    free(idx);
    free(a.sources);
    solver_backend_free(&be);
    rtg_profile_free(given);
    kin_robot_free(robot);
    kin_robot_free(src_robot);
    return rc;
}
