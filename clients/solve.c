/* solve.c -- `retarget solve`: offline retargeting without a server.
 *
 * Each SOURCE (a BVH clip, joint positions -- .npz, .npy, CSV of NAME_x,
 * NAME_y, NAME_z columns -- or a robot trajectory CSV with --source-robot)
 * goes through the job recipe (retarget/job.h). The host work runs on a
 * pool of threads (retarget/pool.h), in three stages:
 *   1. every source read and planned, in parallel across sources, while
 *      the backend starts on a thread of its own (a CUDA context takes a
 *      few tenths of a second); every source is planned before anything
 *      is solved, so a bad one stops the run before any work;
 *   2. the solves: each clip alone, or with --batch the clips with
 *      identical weights and options together, in solver calls of at most
 *      CLI_BATCH_FRAMES frames (a batch shares its weights and options),
 *      taken largest first; a call's targets are built from the plans, in
 *      parallel, and packed into the arrays it is solved from (page-locked
 *      where the backend has them: rtg_batch_pack), while the call before
 *      it solves from the other of two such sets; a call's solved frames
 *      are one block that its clips share until the last is written. With
 *      --lanes 2 (for the CUDA backend) a side lane with a backend of its own
 *      takes the small calls smallest first at the same time
 *      (side_lane());
 *   3. each solved clip finished (ground lift, quality, report), resampled
 *      when --out-fps asks, formatted (CSV, or NPZ with --format npz)
 *      and written -- queued to the pool as soon as its solver call
 *      returns, so that it overlaps the next call. Once the last call
 *      returned, the backends and the devices are released on a thread
 *      of their own beside the last clips' finishing (struct release).
 * A clip's bytes are the same solo or batched, for any thread count and
 * any batch size (DESIGN.md, "The numerical contract"). Messages are
 * printed in source order whatever the threads' timing. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../base/num.h"
#include "../retarget/engine.h"
#include "../kinematics/bvh.h"
#include "../kinematics/joints.h"
#include "../kinematics/robot.h"
#include "../kinematics/traj.h"
#include "../retarget/batch.h"
#include "../retarget/job.h"
#include "../retarget/options.h"
#include "../retarget/output.h"
#include "../retarget/pool.h"
#include "../retarget/profile.h"
#include "../retarget/retarget.h"
#include "../solver/backend.h"
#include "../solver/cuda/cuda_api.h"
#include "cli.h"

#define CLI_MAX_SOURCES 100000
/* Frames per solver call with --batch: large enough to fill a GPU (on the
 * H200 a call of 133,000 frames of the bench-e2e corpus solves as fast per
 * frame as one of 263,000: bench_gpu windows), small enough that the
 * first call's targets and the last call's finishing, which nothing
 * overlaps, stay short. */
#define CLI_BATCH_FRAMES 131072

/* The largest call the side lane (--lanes 2) takes: the calls it is for
 * are the small ones, which wait on the device's round trips far more
 * than they use it (on an H100 a call of 45 frames took 0.011 s, one of
 * 7,787 0.057 s, one of 131,000 0.087 s); a large call gains nothing
 * beside another and would double the device memory held. */
#define CLI_SIDE_FRAMES 65536

/* Without --threads the host pool leaves cores to the threads that wait
 * on the device: while the sources are read and planned, two to the
 * backend's start (unless it is the CPU's: the thread that creates a CUDA
 * context and the driver's own), then, with the CUDA backend, one to each
 * lane's solving thread (whose host loop waits on the device every LM
 * iteration), and after the last solve one to the release of the
 * backends (struct release). A thread more than the cores stalls the
 * rest: on a 16-core H100 host 16 workers beside a CUDA context's start
 * read the sources in 0.54-0.93 thread-seconds, 15 in 0.52-0.57, 14 in
 * 0.13-0.24, and the run took 1,105-1,305 ms against 1,069-1,246 with 14
 * workers throughout (bench/RESULTS.md, thirteenth session; 13, 12 and 10
 * were no faster; on the H200's host, the second session: 15 workers
 * beside one lane 1.95-2.34 s against 2.16-2.66 with 16). */
#define CLI_START_SPARE_CORES 2

/* The lanes (--lanes; default two on the CUDA backend, else one; one for
 * --per-frame, which solves clip after clip on the main thread). */
static int cli_lanes(const struct cli_solve_args *a, const char *backend)
{
    if (a->per_frame) return 1;
    return a->lanes ? a->lanes : !strcmp(backend, "cuda") ? 2 : 1;
}

/* The phases of a run that size the host pool differently. */
enum cli_phase { CLI_STARTING, CLI_SOLVING, CLI_FINISHING };

/* The host pool's workers in phase `ph` of a run on `backend` (NULL while
 * it starts). */
static int cli_pool_cores(const struct cli_solve_args *a, enum cli_phase ph, const char *backend)
{
    if (a->threads_given) return a->threads;
    int spare = 0;
    if (ph == CLI_STARTING) /* whether an "auto" backend will be CUDA's is not known yet: a
                             * machine of four cores or fewer (the CPU's, likely) keeps them all */
        spare = strcmp(a->backend, "cpu") && a->threads > 4 ? CLI_START_SPARE_CORES : 0;
    else if (!strcmp(backend, "cuda"))
        spare = ph == CLI_SOLVING ? cli_lanes(a, backend) : 1; /* finishing: the release's one */
    return a->threads - spare > 1 ? a->threads - spare : 1;
}

/* Retires or starts workers until the pool has `want`. */
static void pool_resize(struct rtg_pool *pool, int want)
{
    int now = rtg_pool_threads(pool);
    if (want < now) rtg_pool_retire(pool, now - want);
    else if (want > now) rtg_pool_grow(pool, want - now);
}

/* The host stages that --stats reports (seconds summed over threads). */
enum { ST_READ, ST_PLAN, ST_TARGETS, ST_SOLVE, ST_QUALITY, ST_FORMAT, ST_WRITE, ST_COUNT };
static const char *const stage_names[ST_COUNT] = {"read", "plan", "targets", "solve", "quality", "format", "write"};

/* A solver call's states, one block for all its clips (rtg_batch_solve_packed),
 * freed by the last of them to be written. */
struct call_state {
    float *block;
    atomic_int left;
};

struct clip {
    const char *path;
    char name[256];
    char profile[128]; /* profile used ("cmu_g1", "auto:cmu_asf_g1"), "" for the identity mapping */
    char warning[160]; /* the reader's note, printed in order */
    struct rtg_job_plan plan;  /* stage 1's plan, until its targets are built */
    struct rtg_targets t_store; /* the targets, built just before their solver call, freed once written */
    int t_frames;              /* their frame count (the plan's until built) */
    struct solver_options opt;
    float *state;             /* the solved frames: its own, or in its call's block (cs) */
    struct call_state *cs;    /* the call's block that state points into, NULL: state is the clip's */
    struct solver_clip_result res;
    int solved;        /* clips in its solver call, 0 until solved */
    enum rt_status st; /* of stage 1 or 3 */
    struct rt_err err;
    char **warnings;   /* the report's warnings, printed in order */
    int n_warnings;
    char filters[160]; /* "pass" or "fail: NAME ..." (quality.filters) */
    double t[ST_COUNT];
};

/* When each part of the run ended (--stats "timeline", seconds from the
 * start): where the wall goes that the stages' thread-seconds do not say. */
#define CLI_TIMELINE_CALLS 64
struct timeline {
    double started_unix; /* the start, in seconds since 1970 (for the process's own start and exit) */
    double robot, backend, planned, first_targets, solved, written;
    double released; /* the backends and their devices released (beside the finishing), 0 if not */
    int n_calls; /* calls recorded (the first CLI_TIMELINE_CALLS) */
    struct tl_call {
        double start, end;
        int clips, frames;
        int lane; /* 0 the main lane, 1 the side lane */
    } call[CLI_TIMELINE_CALLS];
};

struct run {
    const struct cli_solve_args *a;
    const struct kin_robot *robot, *src_robot;
    const struct rtg_profile *given;
    struct solver_backend *be;
    const char *backend;     /* its name, kept past its release (struct release) */
    struct clip *clips;
    struct rtg_pool *pool;   /* the host pool: its idle workers help a clip's quality */
    double wall0;
    pthread_mutex_t mu;      /* the lanes': the queue, the timeline, the progress line */
    struct timeline tl;
    /* The calls: call j is clips idx[call_at[j] .. call_at[j + 1]); the
     * ones not yet taken are order[q_lo .. q_hi), largest first. */
    const int *idx, *call_at, *order, *frames_of;
    int q_lo, q_hi, n_calls, calls_started;
    int stop; /* a lane failed: no more calls taken */
    struct build_arg *bargs;
};

void cli_solve_args_init(struct cli_solve_args *a)
{
    memset(a, 0, sizeof *a);
    a->out_dir = ".";
    a->backend = "auto";
    a->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (a->threads < 1) a->threads = 1;
    if (a->threads > 64) a->threads = 64;
}

static int parse_args(int argc, char **argv, struct cli_solve_args *a, struct rt_err *err)
{
    cli_solve_args_init(a);
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
        else if (!strcmp(row->flag, "--threads") || !strcmp(row->flag, "--lanes")) {
            long long n;
            char range[64];
            if (!rt_parse_int(v, (long long)row->lo, (long long)row->hi, &n))
                return rt_err_set(err, RT_EINVAL, o, "expected %s, got '%s'",
                                  rtg_option_range(row, range, sizeof range), RT_QUOTE(v));
            if (row->flag[2] == 'l') {
                a->lanes = (int)n;
            } else {
                a->threads = (int)n;
                a->threads_given = 1;
            }
        }
        else if (!strcmp(row->flag, "--batch")) a->batch = 1;
        else if (!strcmp(row->flag, "--per-frame")) a->per_frame = 1;
        else if (!strcmp(row->flag, "--no-header")) a->no_header = 1;
        else if (!strcmp(row->flag, "--quiet")) a->quiet = 1;
        else if (!strcmp(row->flag, "--help")) a->help = 1;
        else if (!strcmp(row->flag, "--stats")) a->stats = v;
        else if (!strcmp(row->flag, "--joint-names")) a->joint_names = v;
        else if (!strcmp(row->flag, "--units") || !strcmp(row->flag, "--up")) {
            int k = 0;
            while (row->choices[k] && strcmp(row->choices[k], v)) k++;
            if (!row->choices[k]) {
                char range[64];
                return rt_err_set(err, RT_EINVAL, o, "expected %s, got '%s'",
                                  rtg_option_range(row, range, sizeof range), RT_QUOTE(v));
            }
            if (row->flag[2] == 'u' && row->flag[3] == 'n') rtg_units_metres(v, &a->units);
            else a->up = v[0];
        }
        else if (!strcmp(row->flag, "--format")) {
            if (strcmp(v, "csv") && strcmp(v, "npz"))
                return rt_err_set(err, RT_EINVAL, o, "expected csv or npz, got '%s'", RT_QUOTE(v));
            a->npz = !strcmp(v, "npz");
        } else if (!strcmp(row->flag, "--out-fps")) {
            char range[64];
            if (!rt_parse_real(v, &a->out_fps) || !(a->out_fps > row->lo) || a->out_fps > row->hi)
                return rt_err_set(err, RT_EINVAL, o, "expected %s, got '%s'",
                                  rtg_option_range(row, range, sizeof range), RT_QUOTE(v));
        }
    }
    if (a->help) return RT_OK;
    if (!a->robot) return rt_err_set(err, RT_EINVAL, "--robot", "required (a bundled name or a URDF path)");
    if (a->n_sources == 0) return rt_err_set(err, RT_EINVAL, "solve", "no source files given");
    return RT_OK;
}

void cli_solve_usage(FILE *f)
{
    fputs("usage: retarget solve SOURCE... --robot NAME|FILE [options]\n"
          "  SOURCE is a BVH clip, joint positions (.npz, .npy, or a CSV of NAME_x,NAME_y,NAME_z\n"
          "  columns; docs/sources.md), or a robot trajectory CSV with --source-robot.\n"
          "  Writes DIR/NAME.csv (--format npz: DIR/NAME.npz) and DIR/NAME.report.json for each source.\n",
          f);
    rtg_options_usage(f, RTG_SCOPE_SOLVE);
}

/* The kind of source at `path` (its bytes text[0..len)): .bvh a clip;
 * .npz and .npy joint positions; a CSV whose header is NAME_x,NAME_y,NAME_z
 * triples joint positions, any other CSV a robot trajectory. */
static int source_kind(const char *path, const char *text, size_t len)
{
    if (cli_is_bvh(path)) return RTG_SRC_BVH;
    return cli_joints_format(path, text, len) ? RTG_SRC_JOINTS : RTG_SRC_TRAJ;
}

/* Stage 1 for clip i: read and plan (retarget/job.h); the plan is kept
 * for build(). */
static void prepare(void *ctx, int i)
{
    struct run *r = ctx;
    const struct cli_solve_args *a = r->a;
    struct clip *c = &r->clips[i];
    struct rtg_job_plan *plan = &c->plan;
    char *text = NULL, *names = NULL;
    size_t len = 0, names_len = 0;
    int bvh = cli_is_bvh(c->path);
    double t0 = rt_now(), t1;
    memset(plan, 0, sizeof *plan);
    rt_err_clear(&c->err);
    c->st = rt_read_file(c->path, bvh ? KIN_BVH_MAX_BYTES : KIN_JOINTS_MAX_BYTES, &text, &len, &c->err);
    int kind = c->st == RT_OK ? source_kind(c->path, text, len) : RTG_SRC_BVH;
    if (c->st == RT_OK && kind == RTG_SRC_TRAJ && !r->src_robot)
        c->st = rt_err_set(&c->err, RT_EINVAL, c->path,
                           "a trajectory CSV needs --source-robot NAME|URDF (the robot it moves)");
    /* An .npy's joint names: --joint-names FILE, else PATH with .txt for .npy. */
    size_t n = strlen(c->path);
    if (c->st == RT_OK && kind == RTG_SRC_JOINTS && n > 4 && !strcasecmp(c->path + n - 4, ".npy")) {
        char np[4096];
        if (a->joint_names) snprintf(np, sizeof np, "%s", a->joint_names);
        else snprintf(np, sizeof np, "%.*s.txt", (int)(n - 4), c->path);
        if (rt_read_file(np, 1u << 20, &names, &names_len, NULL) != RT_OK)
            c->st = rt_err_set(&c->err, RT_EINVAL, c->path,
                               "an .npy needs its joint names, one a line: --joint-names FILE (or %s)", np);
    }
    t1 = rt_now();
    c->t[ST_READ] = t1 - t0;
    if (c->st != RT_OK) goto out;
    const char *base = strrchr(c->path, '/');
    struct rtg_job_spec spec = {
        .robot = r->robot,
        .robot_name = a->robot,
        .profile = r->given,
        .source_kind = kind,
        .source = text,
        .source_len = len,
        /* As kin_bvh_load() and kin_traj_read() label their errors. */
        .source_label = bvh && strlen(c->path) > 80 && base ? base + 1 : c->path,
        .source_robot = r->src_robot,
        .source_robot_name = a->source_robot,
        .joint_names = names,
        .joint_names_len = names_len,
        .joint_units = a->units,
        .joint_up = a->up,
        .opts = a->opts,
        .profile_where = c->path,
        .profile_hint = "give --profile FILE",
    };
    if ((c->st = rtg_job_plan(&spec, plan, &c->err)) == RT_OK) {
        snprintf(c->warning, sizeof c->warning, "%s", plan->warning);
        c->t[ST_PLAN] = rt_now() - t1;
        c->opt = plan->opt;
        c->t_frames = plan->n_frames;
        snprintf(c->profile, sizeof c->profile, "%s", plan->profile_name);
    }
out:
    free(names);
    free(text);
}

/* The targets of clip i from its plan, which is freed (rtg_pool_for). */
static void build(void *ctx, int i)
{
    struct run *r = ctx;
    struct clip *c = &r->clips[i];
    double t0 = rt_now();
    if (c->st != RT_OK) return;
    c->st = rtg_job_build_on(r->pool, r->robot, &c->plan, &c->t_store, &c->err);
    c->t[ST_TARGETS] = rt_now() - t0;
    if (c->st == RT_OK) c->t_frames = c->t_store.n_frames;
    rtg_job_plan_free(&c->plan);
}

/* A solver call packed by the last of its clips' builds (rtg_batch_pack),
 * into the arrays it will be solved from, while the call before it solves. */
struct call_pack {
    struct run *r;
    const int *idx; /* the call's clips */
    int n;
    struct rtg_batch_ws *ws;
    atomic_int left; /* builds still to run */
    enum rt_status st; /* RT_OK: ws holds the call's clips, in order */
};

static void pack_call(struct call_pack *cp)
{
    struct run *r = cp->r;
    struct rtg_batch_item *items = calloc((size_t)cp->n, sizeof *items);
    cp->st = items ? RT_OK : RT_ENOMEM;
    for (int q = 0; q < cp->n && cp->st == RT_OK; q++) {
        const struct clip *c = &r->clips[cp->idx[q]];
        if (c->st != RT_OK) cp->st = RT_EINVAL; /* a build that failed: the call is packed when solved */
        items[q].t = &c->t_store;
    }
    if (cp->st == RT_OK) cp->st = rtg_batch_pack(cp->ws, r->be, r->robot, items, cp->n, NULL);
    free(items);
}

/* build() of one clip as a queued task; the call's last packs it. */
struct build_arg {
    struct run *r;
    int i;
    struct call_pack *cp;
};

static void build_task(void *arg)
{
    const struct build_arg *b = arg;
    build(b->r, b->i);
    if (b->cp && atomic_fetch_sub(&b->cp->left, 1) == 1) pack_call(b->cp);
}

static int weights_equal(const struct kin_robot *robot, const struct clip *cx, const struct clip *cy)
{
    return !memcmp(&cx->opt, &cy->opt, sizeof cx->opt) && rtg_targets_same_weights(robot, &cx->t_store, &cy->t_store);
}

/* Whether two planned clips will likely share a solver call: the same
 * options, terms, mapping, kind and rate. The built targets decide
 * (weights_equal()); this only groups the calls before they are built. */
static int plans_alike(const struct clip *cx, const struct clip *cy)
{
    const struct rtg_job_plan *x = &cx->plan, *y = &cy->plan;
    return !memcmp(&x->opt, &y->opt, sizeof x->opt) && x->collide_weight == y->collide_weight &&
           x->ground_weight == y->ground_weight &&
           x->collide_margin == y->collide_margin && x->velocity_weight == y->velocity_weight &&
           x->source_kind == y->source_kind && x->frame_time == y->frame_time &&
           !strcmp(x->profile_name, y->profile_name);
}

/* A lane's progress line (the lanes share stderr under r->mu). */
struct progress {
    int quiet, n_clips, call, n_calls;
    pthread_mutex_t *mu;
};

static void on_progress(void *user, int lm_iter, int clips_done)
{
    struct progress *p = user;
    if (p->quiet) return;
    pthread_mutex_lock(p->mu);
    fprintf(stderr, "\rsolve: call %d/%d, LM iteration %d, %d/%d clips done   ", p->call, p->n_calls, lm_iter,
            clips_done, p->n_clips);
    fflush(stderr);
    pthread_mutex_unlock(p->mu);
}

/* Whether a call is left for the side lane: the smallest left has at
 * most CLI_SIDE_FRAMES frames (under r->mu once the side lane runs). */
static int side_call_left(const struct run *r)
{
    return r->q_lo < r->q_hi && r->frames_of[r->order[r->q_hi - 1]] <= CLI_SIDE_FRAMES;
}

/* The next call a lane solves: the largest left for the main lane, the
 * smallest for the side lane (`back`, side_call_left()); -1 when none is
 * left. */
static int take_call(struct run *r, int back)
{
    int j = -1;
    pthread_mutex_lock(&r->mu);
    if (!r->stop && r->q_lo < r->q_hi && (!back || side_call_left(r)))
        j = back ? r->order[--r->q_hi] : r->order[r->q_lo++];
    pthread_mutex_unlock(&r->mu);
    return j;
}

/* The built clips of call j: those whose weights equal its first built
 * one's into sel (their count returned), the others appended to
 * alone[*n_alone ..] (solved one by one: the same bits). */
static int split_call(struct run *r, int j, int *sel, int *alone, int *n_alone)
{
    int n_ok = 0, lead = -1;
    for (int q = r->call_at[j]; q < r->call_at[j + 1]; q++) {
        struct clip *c = &r->clips[r->idx[q]];
        if (c->st != RT_OK) continue; /* a build that failed: reported at the end */
        if (lead < 0 || weights_equal(r->robot, &r->clips[lead], c)) {
            if (lead < 0) lead = r->idx[q];
            sel[n_ok++] = r->idx[q];
        } else {
            alone[(*n_alone)++] = r->idx[q];
        }
    }
    return n_ok;
}

/* Lets go of the clip's solved frames (the call's block with its last clip). */
static void release_state(struct clip *c)
{
    if (c->cs) {
        if (atomic_fetch_sub(&c->cs->left, 1) == 1) {
            free(c->cs->block);
            free(c->cs);
        }
    } else {
        free(c->state);
    }
    c->cs = NULL;
    c->state = NULL;
}

/* Stage 3 for one clip: finish (lift, quality, report), format, write. */
static void finish(void *arg)
{
    struct clip *c = ((struct clip **)arg)[0];
    struct run *r = ((struct run **)arg)[1];
    const struct cli_solve_args *a = r->a;
    const struct kin_robot *robot = r->robot;
    char path[4096], *csv = NULL, *text = NULL;
    float *resampled = NULL;
    size_t csv_len = 0;
    cJSON *rep = NULL;
    double t0 = rt_now(), t1, t2;
    free(arg);
    struct rtg_report_info info = {
        .profile = c->profile[0] ? c->profile : NULL,
        .source = c->path,
        .robot = robot->name,
        .backend = r->backend,
        .mode = a->per_frame ? "per-frame" : "trajectory",
        .threads = a->threads,
        .batch_clips = c->solved,
    };
    /* The trajectory solve puts the feet on the ground; the per-frame
     * baseline is left as solved. */
    c->st = rtg_job_finish(r->pool, robot, &c->t_store, c->state, !a->per_frame, &info, &c->res, &rep, &c->err);
    t1 = rt_now();
    c->t[ST_QUALITY] = t1 - t0;
    if (c->st != RT_OK) return;
    const cJSON *warn = cJSON_GetObjectItemCaseSensitive(rep, "warnings"), *w;
    int nw = cJSON_GetArraySize(warn);
    if (nw > 0 && (c->warnings = calloc((size_t)nw, sizeof *c->warnings)))
        cJSON_ArrayForEach(w, warn)
            if (cJSON_IsString(w) && (c->warnings[c->n_warnings] = strdup(w->valuestring))) c->n_warnings++;
    const cJSON *quality = cJSON_GetObjectItemCaseSensitive(rep, "quality");
    const cJSON *filters = cJSON_GetObjectItemCaseSensitive(quality, "filters"), *fl;
    snprintf(c->filters, sizeof c->filters, "%s", cJSON_GetArraySize(filters) > 0 ? "fail:" : "pass");
    cJSON_ArrayForEach(fl, filters)
        if (cJSON_IsString(fl) && strlen(c->filters) + strlen(fl->valuestring) + 2 < sizeof c->filters) {
            strcat(c->filters, " ");
            strcat(c->filters, fl->valuestring);
        }
    const char **names = malloc((size_t)rt_state_cols(&robot->tree) * sizeof *names);
    int cols = names ? rtg_columns(robot, names) : 0;
    text = rep ? cJSON_Print(rep) : NULL;
    cJSON_Delete(rep);
    if (!names || !text) {
        c->st = rt_err_set(&c->err, RT_ENOMEM, c->name, "out of memory for the outputs");
        goto done;
    }
    /* The written rate: the source's, or --out-fps (the report measures
     * the solved frames, at the source's rate). */
    double fps = 1.0 / c->t_store.frame_time;
    const float *rows = c->state;
    int n_rows = c->t_store.n_frames;
    if (a->out_fps > 0) {
        if ((c->st = rtg_resample(c->state, n_rows, cols, fps, a->out_fps, &resampled, &n_rows, &c->err)) != RT_OK) goto done;
        rows = resampled;
        fps = a->out_fps;
    }
    if (a->npz) c->st = rtg_npz_format(robot, rows, n_rows, fps, &csv, &csv_len, &c->err);
    else if (rtg_csv_format_on(r->pool, a->no_header ? NULL : names, cols, rows, n_rows, &csv, &csv_len) != RT_OK)
        c->st = rt_err_set(&c->err, RT_ENOMEM, c->name, "out of memory for the outputs");
    if (c->st != RT_OK) goto done;
    t2 = rt_now();
    c->t[ST_FORMAT] = t2 - t1;
    snprintf(path, sizeof path, "%s/%s.%s", a->out_dir, c->name, a->npz ? "npz" : "csv");
    if ((c->st = cli_write_file(path, csv, csv_len, 0, &c->err)) != RT_OK) goto done;
    snprintf(path, sizeof path, "%s/%s.report.json", a->out_dir, c->name);
    c->st = cli_write_file(path, text, strlen(text), 1, &c->err);
    c->t[ST_WRITE] = rt_now() - t2;
done:
    /* The clip is written: what it holds is not needed any more. */
    rtg_targets_free(&c->t_store);
    release_state(c);
    free(names);
    free(resampled);
    free(csv);
    cJSON_free(text);
}

/* Queues stage 3 of clip c (runs it here when the pool cannot take it). */
static void queue_finish(struct rtg_pool *pool, struct rtg_pool_group *g, struct run *r, struct clip *c)
{
    void **arg = malloc(2 * sizeof *arg);
    if (!arg) {
        c->st = rt_err_set(&c->err, RT_ENOMEM, c->name, "out of memory");
        return;
    }
    arg[0] = c;
    arg[1] = r;
    rtg_pool_submit(pool, g, finish, arg);
}

/* Solves clips[idx[0..n)] in one call and queues their stage 3: from ws
 * as packed when `packed` (they are the clips packed, in order), else
 * packed here first. */
static enum rt_status solve_call(struct run *r, struct solver_backend *be, struct rtg_pool_group *g, const int *idx,
                                 int n, struct rtg_batch_ws *ws, int packed, struct progress *prog, double *solve_s,
                                 struct rt_err *err)
{
    struct rtg_pool *pool = r->pool;
    struct rtg_batch_item *items = calloc((size_t)n, sizeof *items);
    struct call_state *cs = malloc(sizeof *cs);
    enum rt_status st = RT_OK;
    if (!items || !cs) {
        free(items);
        free(cs);
        return rt_err_set(err, RT_ENOMEM, "batch", "out of memory");
    }
    for (int i = 0; i < n; i++) items[i].t = &r->clips[idx[i]].t_store;
    pthread_mutex_lock(&r->mu);
    prog->n_clips = n;
    prog->call = ++r->calls_started; /* clips solved alone after their call are calls of their own */
    prog->n_calls = prog->call > r->n_calls ? prog->call : r->n_calls;
    pthread_mutex_unlock(&r->mu);
    double t0 = rt_now();
    if (!packed) st = rtg_batch_pack(ws, be, r->robot, items, n, err);
    if (st == RT_OK)
        st = rtg_batch_solve_packed(ws, be, r->robot, &r->clips[idx[0]].opt, items, n, on_progress, prog, &cs->block,
                                    err);
    double t1 = rt_now();
    *solve_s += t1 - t0;
    pthread_mutex_lock(&r->mu);
    if (r->tl.n_calls < CLI_TIMELINE_CALLS) {
        int frames = 0;
        for (int i = 0; i < n; i++) frames += r->clips[idx[i]].t_frames;
        r->tl.call[r->tl.n_calls++] = (struct tl_call){t0 - r->wall0, t1 - r->wall0, n, frames, be != r->be};
    }
    pthread_mutex_unlock(&r->mu);
    if (st == RT_OK) {
        atomic_init(&cs->left, n);
        for (int i = 0; i < n; i++) {
            struct clip *c = &r->clips[idx[i]];
            c->state = items[i].state;
            c->cs = cs;
            c->res = items[i].res;
            c->solved = n;
            queue_finish(pool, g, r, c);
        }
    } else {
        free(cs);
    }
    free(items);
    return st;
}

/* The side lane (--lanes 2): a thread with a backend of its own (CUDA: its
 * stream at the device's greatest priority) that takes the calls from the
 * small end of the queue while the main lane takes the large ones, so
 * that the small calls, which wait on the device's latency far more than
 * they use it, run beside the large ones instead of after them. Each call
 * is built on the pool, then packed and solved here; its clips' finishing
 * is queued like the main lane's. A backend that cannot start leaves the
 * calls to the main lane. */
struct lane {
    struct run *r;
    struct rtg_pool_group *g; /* the finishing tasks */
    struct solver_backend be;
    struct rtg_batch_ws ws;
    struct progress prog;
    int *sel, *alone;
    double solve_s;
    enum rt_status st;
    struct rt_err err;
};

static void *side_lane(void *arg)
{
    struct lane *l = arg;
    struct run *r = l->r;
    struct solver_backend_config cfg;
    struct rt_err ignored;
    int j;
    rtg_backend_config_env(&cfg, r->a->threads);
    cfg.cuda_priority = 1;
    if (solver_backend_init(&l->be, r->backend, &cfg, &ignored) != RT_OK) return NULL;
    while (l->st == RT_OK && (j = take_call(r, 1)) >= 0) {
        struct rtg_pool_group gb = {0};
        int n_alone = 0;
        for (int q = r->call_at[j]; q < r->call_at[j + 1]; q++)
            rtg_pool_submit_first(r->pool, &gb, build_task, &r->bargs[r->idx[q]]);
        rtg_pool_wait(r->pool, &gb);
        int n_ok = split_call(r, j, l->sel, l->alone, &n_alone);
        if (n_ok) l->st = solve_call(r, &l->be, l->g, l->sel, n_ok, &l->ws, 0, &l->prog, &l->solve_s, &l->err);
        for (int q = 0; q < n_alone && l->st == RT_OK; q++)
            l->st = solve_call(r, &l->be, l->g, &l->alone[q], 1, &l->ws, 0, &l->prog, &l->solve_s, &l->err);
    }
    if (l->st != RT_OK) { /* the main lane takes no more calls either */
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_mutex_unlock(&r->mu);
    }
    return NULL;
}

/* Writes the --stats JSON. */
static enum rt_status write_stats(const struct cli_solve_args *a, const struct clip *clips, double solve_s,
                                  double wall, const struct timeline *tl, struct rt_err *err)
{
    double sum[ST_COUNT] = {0};
    long long frames = 0;
    cJSON *o = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(o, "stages");
    for (int i = 0; i < a->n_sources; i++) {
        for (int k = 0; k < ST_COUNT; k++) sum[k] += clips[i].t[k];
        frames += clips[i].res.lm_iters >= 0 ? clips[i].t_frames : 0;
    }
    sum[ST_SOLVE] = solve_s;
    for (int k = 0; k < ST_COUNT; k++) cJSON_AddNumberToObject(st, stage_names[k], sum[k]);
    cJSON_AddNumberToObject(o, "frames", (double)frames);
    cJSON_AddNumberToObject(o, "clips", a->n_sources);
    cJSON_AddNumberToObject(o, "threads", a->threads);
    cJSON_AddNumberToObject(o, "wall", wall);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) cJSON_AddNumberToObject(o, "peak_rss_kb", (double)ru.ru_maxrss);
    cJSON *t = cJSON_AddObjectToObject(o, "timeline"), *calls;
    cJSON_AddNumberToObject(t, "started_unix", tl->started_unix);
    cJSON_AddNumberToObject(t, "robot", tl->robot);
    cJSON_AddNumberToObject(t, "backend", tl->backend);
    cJSON_AddNumberToObject(t, "planned", tl->planned);
    cJSON_AddNumberToObject(t, "first_targets", tl->first_targets);
    cJSON_AddNumberToObject(t, "solved", tl->solved);
    cJSON_AddNumberToObject(t, "written", tl->written);
    cJSON_AddNumberToObject(t, "released", tl->released);
    if ((calls = cJSON_AddArrayToObject(t, "calls")))
        for (int k = 0; k < tl->n_calls; k++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddNumberToObject(c, "start", tl->call[k].start);
            cJSON_AddNumberToObject(c, "end", tl->call[k].end);
            cJSON_AddNumberToObject(c, "clips", tl->call[k].clips);
            cJSON_AddNumberToObject(c, "frames", tl->call[k].frames);
            cJSON_AddNumberToObject(c, "lane", tl->call[k].lane);
            cJSON_AddItemToArray(calls, c);
        }
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text) return rt_err_set(err, RT_ENOMEM, "--stats", "out of memory");
    enum rt_status s = cli_write_file(a->stats, text, strlen(text), 1, err);
    cJSON_free(text);
    return s;
}

int cli_solve(int argc, char **argv) { return cli_solve_err(argc, argv, NULL); }

int cli_solve_err(int argc, char **argv, struct rt_err *err_out)
{
    struct cli_solve_args a;
    struct rt_err err;
    int rc;
    rt_err_clear(&err);
    if (parse_args(argc, argv, &a, &err) != RT_OK) {
        if (err_out) *err_out = err;
        else cli_fail(&err);
        free(a.sources);
        return 2;
    }
    if (a.help) {
        cli_solve_usage(stdout);
        free(a.sources);
        return 0;
    }
    /* One process, one run: a CUDA work queue for each lane's stream and
     * one for the runtime's own instead of the driver's 8, so that the
     * context starts and ends sooner (the backend up 0.02-0.03 s sooner on
     * an H100 lend: solver_cuda_limit_queues). Here, before any thread
     * starts; `retarget batch` runs several solves at once and keeps the
     * driver's. */
    if (strcmp(a.backend, "cpu")) solver_cuda_limit_queues(cli_lanes(&a, "cuda") + 1);
    rc = cli_solve_run(&a, &err);
    if (rc) {
        if (err_out) *err_out = err;
        else cli_fail(&err);
    }
    free(a.sources);
    return rc;
}

/* The backend started on a thread of its own while the sources are read
 * and planned: a CUDA context takes a good part of a second to create. */
struct backend_start {
    struct solver_backend *be;
    const char *name;
    int threads;
    enum rt_status st;
    struct rt_err err;
    double done; /* rt_now() when it returned */
};

static void *backend_start(void *arg)
{
    struct backend_start *b = arg;
    rt_err_clear(&b->err);
    b->st = rtg_backend_init(b->be, b->name, b->threads, &b->err);
    b->done = rt_now();
    return NULL;
}

/* The backends and their page-locked arrays, released once the last
 * solve returned, and with them the devices (solver_cuda_release_devices),
 * so that the driver's teardown runs beside the finishing of the last
 * calls, not after the last write. The finishing needs none of them: a
 * call's solved block is the clips' own (rtg_batch_solve_packed). */
struct release {
    struct run *r;
    struct rtg_batch_ws *ws[3];
    struct solver_backend *be[2];
};

static void *release_backends(void *arg)
{
    struct release *rl = arg;
    for (int k = 0; k < 3; k++) rtg_batch_ws_free(rl->ws[k]);
    for (int k = 0; k < 2; k++)
        if (rl->be[k]) solver_backend_free(rl->be[k]);
    if (!strcmp(rl->r->backend, "cuda")) solver_cuda_release_devices(); /* set: the release follows the solves */
    double t = rt_now() - rl->r->wall0;
    pthread_mutex_lock(&rl->r->mu);
    rl->r->tl.released = t;
    pthread_mutex_unlock(&rl->r->mu);
    return NULL;
}

/* Waits for the backend's start, then sizes the host pool for the solves
 * (cli_pool_cores()). */
static enum rt_status backend_join(struct backend_start *bs, pthread_t th, int *running, struct run *r,
                                   struct rtg_pool *pool, struct rt_err *err)
{
    if (*running) pthread_join(th, NULL);
    *running = 0;
    r->tl.backend = bs->done - r->wall0;
    if (bs->st != RT_OK) {
        *err = bs->err;
        return bs->st;
    }
    r->backend = solver_backend_name(bs->be);
    pool_resize(pool, cli_pool_cores(r->a, CLI_SOLVING, r->backend));
    return RT_OK;
}

int cli_solve_run(const struct cli_solve_args *a, struct rt_err *err)
{
    struct kin_robot *robot = NULL, *src_robot = NULL;
    struct rtg_profile *given = NULL;
    struct solver_backend be = {0};
    struct rtg_pool *pool = NULL;
    struct rtg_pool_group g = {0};
    struct clip *clips = NULL;
    struct rtg_batch_ws ws[2] = {{0}, {0}}; /* two calls' arrays, reused: call k packed into ws[k & 1] */
    struct build_arg *bargs = NULL;
    struct backend_start bs = {&be, a->backend, a->threads, RT_OK, {0}, 0};
    pthread_t bs_thread;
    int bs_running = 0;
    int *idx = NULL, *done = NULL, *call_at = NULL, *sel = NULL, *order = NULL, *frames_of = NULL, rc = 1, failed = -1;
    struct lane *side = NULL; /* --lanes 2 */
    pthread_t side_thread;
    int side_running = 0;
    struct release rel;
    pthread_t rel_thread;
    int rel_running = 0;
    double wall0 = rt_now(), solve_s = 0;
    struct run r = {.a = a, .be = &be, .wall0 = wall0};
    pthread_mutex_init(&r.mu, NULL);
    rt_err_clear(err);
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r.tl.started_unix = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    }
    if (kin_robot_load(a->robot, &robot, err) != RT_OK) goto out;
    if (a->source_robot && kin_robot_load(a->source_robot, &src_robot, err) != RT_OK) goto out;
    r.tl.robot = rt_now() - wall0;
    if (a->out_dir && cli_mkdirs(a->out_dir, err) != RT_OK) goto out;
    if (a->profile && rtg_profile_load(a->profile, &given, err) != RT_OK) goto out;
    if (pthread_create(&bs_thread, NULL, backend_start, &bs) == 0) bs_running = 1;
    else backend_start(&bs);
    if (rtg_pool_create(cli_pool_cores(a, CLI_STARTING, NULL), &pool, err) != RT_OK) goto out;
    clips = calloc((size_t)a->n_sources, sizeof *clips);
    idx = calloc((size_t)a->n_sources, sizeof *idx);
    done = calloc((size_t)a->n_sources, sizeof *done);
    if (!clips || !idx || !done) {
        rt_err_set(err, RT_ENOMEM, "solve", "out of memory");
        goto out;
    }
    for (int i = 0; i < a->n_sources; i++) {
        clips[i].path = a->sources[i];
        cli_base_name(a->sources[i], clips[i].name, sizeof clips[i].name);
    }
    for (int i = 0; i < a->n_sources; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(clips[j].name, clips[i].name)) {
                rt_err_set(err, RT_EINVAL, a->sources[i], "two sources named '%s' would write the same outputs",
                           clips[i].name);
                goto out;
            }
    /* Page-locked target arrays where the backend has them: kept for the
     * whole run, and a GPU takes them by DMA. */
    for (int k = 0; k < 2; k++) ws[k] = (struct rtg_batch_ws){.pool = pool, .pinned = 1, .block_ahead = 1};
    r.pool = pool;
    r.robot = robot;
    r.src_robot = src_robot;
    r.given = given;
    r.clips = clips;
    /* 1. Every source read and planned, in parallel, while the backend
     *    starts; the first failure in source order is the one reported. */
    rtg_pool_for(pool, a->n_sources, prepare, &r);
    r.tl.planned = rt_now() - wall0;
    for (int i = 0; i < a->n_sources; i++) {
        if (clips[i].warning[0] && !a->quiet)
            fprintf(stderr, "retarget: %s: warning: %s\n", clips[i].path, clips[i].warning);
        if (clips[i].st != RT_OK) {
            *err = clips[i].err;
            goto out;
        }
    }
    /* 2. The solves, each call's stage 3 queued as it returns. */
    struct progress prog = {a->quiet || !isatty(2), 0, 0, 0, &r.mu};
    if (a->per_frame) {
        rtg_pool_for(pool, a->n_sources, build, &r);
        if (backend_join(&bs, bs_thread, &bs_running, &r, pool, err) != RT_OK) goto out;
        for (int i = 0; i < a->n_sources; i++) {
            if (clips[i].st != RT_OK) continue; /* reported below */
            struct clip *c = &clips[i];
            size_t bytes;
            if (!rt_mul_size((size_t)c->t_store.n_frames, (size_t)rt_state_cols(&robot->tree) * sizeof(float), &bytes) ||
                !(c->state = malloc(bytes))) {
                rt_err_set(err, RT_ENOMEM, c->path, "out of memory");
                goto out;
            }
            double t0 = rt_now();
            if (rtg_solve_per_frame(r.be, robot, &c->t_store, &c->opt, c->state, &c->res, err) != RT_OK) goto out;
            solve_s += rt_now() - t0;
            c->solved = 1;
            queue_finish(pool, &g, &r, c);
        }
    } else {
        /* The calls, from the plans: solo, one per clip; --batch, the clips
         * whose plans are alike, in source order, cut at CLI_BATCH_FRAMES.
         * A call's targets are built in parallel (ahead of the finishing
         * work on the pool) while the call before it solves; a clip whose
         * built weights differ from its call's first is solved alone at the
         * end (the same bits: DESIGN.md "The numerical contract"). */
        int n_calls = 0, m = 0, n_alone = 0;
        call_at = malloc(((size_t)a->n_sources + 1) * sizeof *call_at);
        sel = malloc((size_t)a->n_sources * sizeof *sel);
        bargs = malloc((size_t)a->n_sources * sizeof *bargs);
        if (!call_at || !sel || !bargs) {
            rt_err_set(err, RT_ENOMEM, "solve", "out of memory");
            goto out;
        }
        memset(done, 0, (size_t)a->n_sources * sizeof *done);
        for (int i = 0; i < a->n_sources; i++) {
            if (done[i]) continue;
            long long frames = 0;
            call_at[n_calls++] = m;
            for (int j = i; j < a->n_sources; j++) {
                if (done[j] || (j > i && (!a->batch || !plans_alike(&clips[i], &clips[j])))) continue;
                if (m > call_at[n_calls - 1] && frames + clips[j].t_frames > CLI_BATCH_FRAMES) continue;
                idx[m++] = j;
                done[j] = 1;
                frames += clips[j].t_frames;
                if (!a->batch) break;
            }
        }
        call_at[n_calls] = m;
        /* The queue: the calls by frames, largest first (stable), so that
         * the last call, whose finishing nothing overlaps, is a small one.
         * The main lane takes the calls from the front: call k's clips
         * built and packed (the last build packs) into ws[k & 1] while
         * call k - 1 solves from the other; the side lane (--lanes 2)
         * from the back, those of at most CLI_SIDE_FRAMES frames. */
        order = malloc((size_t)(n_calls ? n_calls : 1) * sizeof *order);
        frames_of = malloc((size_t)(n_calls ? n_calls : 1) * sizeof *frames_of);
        if (!order || !frames_of) {
            rt_err_set(err, RT_ENOMEM, "solve", "out of memory");
            goto out;
        }
        for (int k = 0; k < n_calls; k++) {
            frames_of[k] = 0;
            for (int q = call_at[k]; q < call_at[k + 1]; q++) frames_of[k] += clips[idx[q]].t_frames;
            int at = k;
            for (; at > 0 && frames_of[order[at - 1]] < frames_of[k]; at--) order[at] = order[at - 1];
            order[at] = k;
        }
        r.idx = idx;
        r.call_at = call_at;
        r.order = order;
        r.frames_of = frames_of;
        r.n_calls = n_calls;
        r.q_lo = 0;
        r.q_hi = n_calls;
        r.bargs = bargs;
        struct call_pack cps[2];
        struct rtg_pool_group gb = {0};
        for (int i = 0; i < a->n_sources; i++) bargs[i] = (struct build_arg){&r, i, NULL};
        /* The first call's targets built while the backend may still be
         * starting; packed once it has (page-locked). */
        int cur = take_call(&r, 0), slot = 0;
        if (cur >= 0) {
            cps[0] = (struct call_pack){&r, idx + call_at[cur], call_at[cur + 1] - call_at[cur], &ws[0], 0, RT_EINVAL};
            for (int q = call_at[cur]; q < call_at[cur + 1]; q++)
                rtg_pool_submit_first(pool, &gb, build_task, &bargs[idx[q]]);
        }
        rtg_pool_wait(pool, &gb);
        if (backend_join(&bs, bs_thread, &bs_running, &r, pool, err) != RT_OK) goto out;
        if (cur >= 0) pack_call(&cps[0]);
        r.tl.first_targets = rt_now() - wall0;
        /* Two lanes on the CUDA backend unless asked (bench/RESULTS.md,
         * eleventh session: the side lane took the corpus's small calls
         * beside the large ones, 7.7% off the mean on an H100 lend, level on
         * an H200 lend whose host's finishing was the tail; the same bytes);
         * one on the CPU, whose lanes would share the cores. */
        int lanes = cli_lanes(a, r.backend);
        if (lanes == 2 && side_call_left(&r)) {
            side = calloc(1, sizeof *side);
            int *buf = side ? malloc(2 * (size_t)a->n_sources * sizeof *buf) : NULL;
            if (!buf) {
                free(side);
                side = NULL;
                rt_err_set(err, RT_ENOMEM, "solve", "out of memory");
                goto out;
            }
            side->r = &r;
            side->g = &g;
            side->ws = (struct rtg_batch_ws){.pool = pool};
            side->prog = prog;
            side->sel = buf;
            side->alone = buf + a->n_sources;
            if (pthread_create(&side_thread, NULL, side_lane, side) == 0) side_running = 1;
        }
        while (cur >= 0) {
            int nxt = take_call(&r, 0), n_cur = call_at[cur + 1] - call_at[cur];
            if (nxt >= 0) {
                struct call_pack *cp = &cps[slot ^ 1];
                *cp = (struct call_pack){&r, idx + call_at[nxt], call_at[nxt + 1] - call_at[nxt], &ws[slot ^ 1], 0, RT_EINVAL};
                atomic_init(&cp->left, cp->n);
                for (int q = call_at[nxt]; q < call_at[nxt + 1]; q++) {
                    bargs[idx[q]].cp = cp;
                    rtg_pool_submit_first(pool, &gb, build_task, &bargs[idx[q]]);
                }
            }
            int n_ok = split_call(&r, cur, sel, done, &n_alone); /* done[] is free again: the clips solved alone */
            int packed = cps[slot].st == RT_OK && n_ok == n_cur;
            if (n_ok && solve_call(&r, &be, &g, sel, n_ok, &ws[slot], packed, &prog, &solve_s, err) != RT_OK) {
                rtg_pool_wait(pool, &gb);
                goto out;
            }
            rtg_pool_wait(pool, &gb);
            cur = nxt;
            slot ^= 1;
        }
        for (int q = 0; q < n_alone; q++)
            if (solve_call(&r, &be, &g, &done[q], 1, &ws[0], 0, &prog, &solve_s, err) != RT_OK) goto out;
        if (side_running) {
            pthread_join(side_thread, NULL);
            side_running = 0;
            solve_s += side->solve_s;
            if (side->st != RT_OK) {
                *err = side->err;
                goto out;
            }
        }
        if (!prog.quiet) fputs("\n", stderr);
    }
    r.tl.solved = rt_now() - wall0;
    /* The solves are over: the cores left to the lanes' solving threads
     * finish clips now, but one, for the release of the backends, their
     * arrays and the devices, beside the finishing, not after it (on an
     * H100 lend the process ended 0.16-0.17 s after its last write before,
     * 0.10-0.14 s with this; the rest is the driver's closing of the
     * device files at the exit: bench/RESULTS.md, "twelfth session"). */
    pool_resize(pool, cli_pool_cores(a, CLI_FINISHING, r.backend));
    rel = (struct release){&r, {&ws[0], &ws[1], side ? &side->ws : NULL}, {&be, side ? &side->be : NULL}};
    if (pthread_create(&rel_thread, NULL, release_backends, &rel) == 0) rel_running = 1;
    else release_backends(&rel);
    /* 3. Every clip finished and written; messages in source order. */
    rtg_pool_wait(pool, &g);
    r.tl.written = rt_now() - wall0;
    if (rel_running) pthread_join(rel_thread, NULL);
    rel_running = 0;
    for (int i = 0; i < a->n_sources; i++) {
        struct clip *c = &clips[i];
        for (int k = 0; k < c->n_warnings; k++) fprintf(stderr, "retarget: %s: warning: %s\n", c->path, c->warnings[k]);
        if (c->st != RT_OK) {
            if (failed < 0) failed = i;
            continue;
        }
        if (!a->quiet)
            fprintf(stderr, "retarget: %s: %d frames, %d LM / %d CG iterations, cost %.6g, %s, %.3f s\n", c->name,
                    c->t_frames, c->res.lm_iters, c->res.cg_iters, (double)c->res.final_cost,
                    solver_termination_str(c->res.termination), c->res.seconds);
        if (!a->quiet) fprintf(stderr, "retarget: %s: filters: %s\n", c->name, c->filters);
    }
    if (failed >= 0) {
        *err = clips[failed].err;
        goto out;
    }
    if (a->stats && write_stats(a, clips, solve_s, rt_now() - wall0, &r.tl, err) != RT_OK) goto out;
    rc = 0;
out:
    if (side_running) { /* no more calls for the side lane after a failure */
        pthread_mutex_lock(&r.mu);
        r.stop = 1;
        pthread_mutex_unlock(&r.mu);
        pthread_join(side_thread, NULL);
    }
    if (bs_running) pthread_join(bs_thread, NULL);
    if (rel_running) pthread_join(rel_thread, NULL);
    rtg_pool_free(pool); /* waits for queued work */
    if (side) {
        rtg_batch_ws_free(&side->ws);
        solver_backend_free(&side->be);
        free(side->sel);
        free(side);
    }
    rtg_batch_ws_free(&ws[0]);
    rtg_batch_ws_free(&ws[1]);
    if (clips)
        for (int i = 0; i < a->n_sources; i++) {
            rtg_job_plan_free(&clips[i].plan);
            rtg_targets_free(&clips[i].t_store);
            release_state(&clips[i]);
            for (int k = 0; k < clips[i].n_warnings; k++) free(clips[i].warnings[k]);
            free(clips[i].warnings);
        }
    free(clips);
    free(idx);
    free(done);
    free(call_at);
    free(sel);
    free(bargs);
    free(order);
    free(frames_of);
    solver_backend_free(&be);
    pthread_mutex_destroy(&r.mu);
    rtg_profile_free(given);
    kin_robot_free(robot);
    kin_robot_free(src_robot);
    return rc;
}
