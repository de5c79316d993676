/* solve.c -- `retarget solve`: offline retargeting without a server.
 *
 * Each SOURCE becomes a struct rtg_targets (a robot trajectory CSV through
 * the source robot's forward kinematics; a BVH clip through a profile), the
 * clips are solved alone or, with --batch, together in one solver call per
 * group of clips with identical weights (a batch shares its weights), and
 * each clip's NAME.csv and NAME.report.json are written to the output
 * folder. A clip's CSV bytes are the same solo or batched (DESIGN.md,
 * "The numerical contract"). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../retarget/batch.h"
#include "../retarget/engine.h"
#include "../kinematics/bvh.h"
#include "../retarget/profile.h"
#include "../retarget/report.h"
#include "../retarget/retarget.h"
#include "../kinematics/robot.h"
#include "../retarget/targets.h"
#include "../kinematics/traj.h"
#include "../retarget/output.h"
#include "../solver/backend.h"
#include "cli.h"

#define CLI_MAX_SOURCES 4096

struct solve_args {
    const char *robot, *source_robot, *profile, *out_dir, *backend, *linear;
    int batch, per_frame, no_header, quiet, threads, max_lm, max_cg;
    double fps, cg_tol;
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

/* Strict integer option: digits only, in [lo, hi]. */
static int parse_int(const char *opt, const char *s, int lo, int hi, int *out, struct rt_err *err)
{
    char *end;
    long v;
    if (!s || !*s || !((*s >= '0' && *s <= '9') || *s == '-'))
        return rt_err_set(err, RT_EINVAL, opt, "expected an integer, got '%.20s'", s ? s : "");
    errno = 0;
    v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return rt_err_set(err, RT_EINVAL, opt, "expected an integer in [%d, %d], got '%.20s'", lo,
                          hi, s);
    *out = (int)v;
    return RT_OK;
}

static int parse_args(int argc, char **argv, struct solve_args *a, struct rt_err *err)
{
    memset(a, 0, sizeof *a);
    a->out_dir = ".";
    a->backend = "auto";
    a->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (a->threads < 1) a->threads = 1;
    if (a->threads > 64) a->threads = 64;
    a->max_lm = -1;
    a->max_cg = -1;
    a->cg_tol = -1.0;
    a->sources = calloc((size_t)argc + 1, sizeof *a->sources);
    if (!a->sources) return rt_err_set(err, RT_ENOMEM, "args", "out of memory");
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                          \
    do {                                                                                      \
        if (!v) return rt_err_set(err, RT_EINVAL, o, "missing value");                        \
        i++;                                                                                  \
    } while (0)
        if (!strcmp(o, "--robot")) { NEED_VALUE(); a->robot = v; }
        else if (!strcmp(o, "--source-robot")) { NEED_VALUE(); a->source_robot = v; }
        else if (!strcmp(o, "--profile")) { NEED_VALUE(); a->profile = v; }
        else if (!strcmp(o, "-o") || !strcmp(o, "--out")) { NEED_VALUE(); a->out_dir = v; }
        else if (!strcmp(o, "--backend")) { NEED_VALUE(); a->backend = v; }
        else if (!strcmp(o, "--linear")) { NEED_VALUE(); a->linear = v; }
        else if (!strcmp(o, "--threads")) { NEED_VALUE(); if (parse_int(o, v, 1, 256, &a->threads, err)) return err->code; }
        else if (!strcmp(o, "--max-lm")) { NEED_VALUE(); if (parse_int(o, v, 0, 100000, &a->max_lm, err)) return err->code; }
        else if (!strcmp(o, "--max-cg")) { NEED_VALUE(); if (parse_int(o, v, 1, 100000, &a->max_cg, err)) return err->code; }
        else if (!strcmp(o, "--cg-tol")) {
            char *end;
            NEED_VALUE();
            a->cg_tol = strtod(v, &end);
            if (end == v || *end || !(a->cg_tol >= 0.0 && a->cg_tol < 1.0))
                return rt_err_set(err, RT_EINVAL, o, "expected a tolerance in [0, 1), got '%.20s'", v);
        }
        else if (!strcmp(o, "--fps")) {
            char *end;
            NEED_VALUE();
            a->fps = strtod(v, &end);
            if (*end || !(a->fps > 0.0 && a->fps <= 10000.0))
                return rt_err_set(err, RT_EINVAL, o, "expected a frame rate in (0, 10000], got '%.20s'", v);
        }
        else if (!strcmp(o, "--batch")) a->batch = 1;
        else if (!strcmp(o, "--per-frame")) a->per_frame = 1;
        else if (!strcmp(o, "--no-header")) a->no_header = 1;
        else if (!strcmp(o, "--quiet") || !strcmp(o, "-q")) a->quiet = 1;
        else if (o[0] == '-' && o[1]) return rt_err_set(err, RT_EINVAL, o, "unknown option");
        else {
            if (a->n_sources >= CLI_MAX_SOURCES)
                return rt_err_set(err, RT_ELIMIT, o, "more than %d sources", CLI_MAX_SOURCES);
            a->sources[a->n_sources++] = o;
        }
#undef NEED_VALUE
    }
    if (!a->robot) return rt_err_set(err, RT_EINVAL, "--robot", "required (a bundled name or a URDF path)");
    if (a->n_sources == 0) return rt_err_set(err, RT_EINVAL, "solve", "no source files given");
    if (a->linear && strcmp(a->linear, "pcg") && strcmp(a->linear, "direct"))
        return rt_err_set(err, RT_EINVAL, "--linear", "expected pcg or direct, got '%.20s'", a->linear);
    return RT_OK;
}

/* Applies the command line's solver overrides on top of a clip's options
 * (defaults, then its profile's). */
static void apply_overrides(const struct solve_args *a, struct solver_options *o)
{
    if (a->max_lm >= 0) o->max_lm_iters = a->max_lm;
    if (a->max_cg >= 0) o->max_cg_iters = a->max_cg;
    if (a->cg_tol >= 0) o->cg_tol = (float)a->cg_tol;
    if (a->linear && !strcmp(a->linear, "direct")) o->linear = SOLVER_LINEAR_DIRECT;
}

/* `given` is the --profile profile (NULL without one); `pair` the bundled
 * robot-to-robot profile for the source robot and the robot (NULL when
 * there is none or a profile is given). Both are the same for every source,
 * so the caller resolves them once. */
static enum rt_status load_source(const struct solve_args *a, const struct kin_robot *robot,
                                  const struct kin_robot *src_robot, const struct rtg_profile *given,
                                  const struct rtg_profile *pair, struct clip *c, struct rt_err *err)
{
    const struct rtg_profile *prof = given;
    struct rtg_profile *picked = NULL;
    struct kin_clip *bvh = NULL;
    double *states = NULL;
    int n_frames = 0;
    enum rt_status st;
    solver_options_default(&c->opt);
    if (cli_is_bvh(c->path)) {
        if ((st = kin_bvh_load(c->path, &bvh, err)) != RT_OK) goto done;
        if (bvh->warning[0] && !a->quiet)
            fprintf(stderr, "retarget: %s: warning: %s\n", c->path, bvh->warning);
        if (!prof) {
            if ((st = rtg_retarget_pick_profile(bvh, robot, &picked, err)) != RT_OK) goto done;
            prof = picked;
        }
        st = rtg_targets_from_clip(robot, bvh, prof, &c->t, err);
    } else {
        if (!src_robot) {
            st = rt_err_set(err, RT_EINVAL, c->path,
                            "a trajectory CSV needs --source-robot NAME|URDF (the robot it moves)");
            goto done;
        }
        st = kin_traj_read(c->path, RT_ROOT_COLS + src_robot->n_dof, &states, &n_frames, err);
        if (st != RT_OK) goto done;
        double dt = a->fps > 0 ? 1.0 / a->fps : 1.0 / 30.0;
        if (!prof) prof = pair;
        if (prof) {
            st = rtg_targets_from_robot_traj(robot, src_robot, states, n_frames, dt, prof, &c->t,
                                             err);
        } else if ((st = rtg_targets_from_traj(src_robot, states, n_frames, dt, robot, &c->t,
                                               NULL)) != RT_OK) {
            st = rt_err_set(err, RT_EINVAL, c->path,
                            "no mapping from robot '%.40s' to '%.40s': give --profile FILE",
                            a->source_robot, a->robot);
        }
    }
    if (st == RT_OK && prof) {
        rtg_profile_solver_options(prof, &c->opt);
        snprintf(c->profile, sizeof c->profile, "%s", prof->name ? prof->name : "");
    }
done:
    rtg_profile_free(picked);
    kin_clip_free(bvh);
    free(states);
    return st;
}

/* The bundled robot-to-robot profile for a trajectory CSV source, or NULL.
 * A profile given wins (the caller asks only without one). Otherwise two
 * different robot models (their URDF robot names differ) use the bundled
 * profile for the pair when there is one: matching links by name across
 * models tracks far worse. The identity mapping (links of the same name) is
 * for the same model, or for a pair no bundled profile covers. Looked up
 * only when some source is a trajectory CSV. */
static struct rtg_profile *find_pair_profile(const struct solve_args *a, const struct kin_robot *robot,
                                             const struct kin_robot *src_robot)
{
    struct rtg_profile *pair = NULL;
    int any_traj = 0;
    for (int i = 0; i < a->n_sources && !any_traj; i++) any_traj = !cli_is_bvh(a->sources[i]);
    if (!any_traj || !src_robot || !strcmp(src_robot->name, robot->name)) return NULL;
    pair = rtg_profile_find_robot_pair(a->source_robot, a->robot);
    if (!pair) pair = rtg_profile_find_robot_pair(src_robot->name, robot->name);
    return pair;
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
    struct solver_options opt = clips[idx[0]].opt;
    apply_overrides(a, &opt);
    st = rtg_batch_solve(be, robot, &opt, items, n, on_progress, &prog, err);
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
                                    const struct kin_robot *robot, const struct clip *c,
                                    struct rt_err *err)
{
    char path[4096];
    enum rt_status st = RT_OK;
    snprintf(path, sizeof path, "%s/%s.csv", a->out_dir, c->name);
    FILE *f = fopen(path, "wb");
    if (!f) return rt_err_set(err, RT_EIO, path, "cannot write: %s", strerror(errno));
    const char **names = malloc((size_t)rt_state_cols(&robot->tree) * sizeof *names);
    if (!names) st = rt_err_set(err, RT_ENOMEM, path, "out of memory");
    else st = rtg_csv_write(f, a->no_header ? NULL : names, rtg_columns(robot, names), c->state,
                            c->t.n_frames, err);
    free(names);
    if (fclose(f) && st == RT_OK) st = rt_err_set(err, RT_EIO, path, "write failed");
    if (st != RT_OK) return st;
    struct rtg_report_info info = {
        .profile = c->profile[0] ? c->profile : NULL,
        .source = c->path,
        .robot = robot->name,
        .backend = solver_backend_name(be),
        .mode = a->per_frame ? "per-frame" : "trajectory",
        .threads = a->threads,
        .batch_clips = c->solved,
    };
    cJSON *rep = rtg_report_json(&info, robot, &c->t, c->state, &c->res);
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
    struct rtg_profile *given = NULL, *pair = NULL;
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
    if (kin_robot_load(a.robot, &robot, &err) != RT_OK) goto fail;
    if (a.source_robot && kin_robot_load(a.source_robot, &src_robot, &err) != RT_OK) goto fail;
    if (rtg_backend_init(&be, a.backend, a.threads, &err) != RT_OK) goto fail;
    if (a.out_dir && cli_mkdirs(a.out_dir, &err) != RT_OK) goto fail;
    clips = calloc((size_t)a.n_sources, sizeof *clips);
    idx = calloc((size_t)a.n_sources, sizeof *idx);
    if (!clips || !idx) {
        rt_err_set(&err, RT_ENOMEM, "solve", "out of memory");
        goto fail;
    }
    if (a.profile && rtg_profile_load(a.profile, &given, &err) != RT_OK) goto fail;
    if (!given) pair = find_pair_profile(&a, robot, src_robot);
    for (int i = 0; i < a.n_sources; i++) {
        clips[i].path = a.sources[i];
        cli_base_name(a.sources[i], clips[i].name, sizeof clips[i].name);
        for (int j = 0; j < i; j++)
            if (!strcmp(clips[j].name, clips[i].name)) {
                rt_err_set(&err, RT_EINVAL, a.sources[i], "two sources named '%s' would write the same outputs",
                           clips[i].name);
                goto fail;
            }
        if (load_source(&a, robot, src_robot, given, pair, &clips[i], &err) != RT_OK) goto fail;
    }
    if (a.per_frame) {
        for (int i = 0; i < a.n_sources; i++) {
            struct clip *c = &clips[i];
            size_t bytes;
            struct solver_options opt = c->opt;
            apply_overrides(&a, &opt);
            if (!rt_mul_size((size_t)c->t.n_frames, (size_t)rt_state_cols(&robot->tree) * sizeof(float), &bytes) ||
                !(c->state = malloc(bytes))) {
                rt_err_set(&err, RT_ENOMEM, c->path, "out of memory");
                goto fail;
            }
            if (rtg_solve_per_frame(&be, robot, &c->t, &opt, c->state, &c->res, &err) != RT_OK) goto fail;
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
    rtg_profile_free(pair);
    kin_robot_free(robot);
    kin_robot_free(src_robot);
    return rc;
}
