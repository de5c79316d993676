/* options.c -- the option table and the readers of job options (see
 * options.h). */
#include "options.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "../base/num.h"
#include "../kinematics/bvh.h"

static const char *const linear_choices[] = {"pcg", "direct", NULL};
static const char *const backend_choices[] = {"cpu", "cuda", "auto", NULL};
static const char *const format_choices[] = {"csv", "npz", NULL};
static const char *const units_choices[] = {"m", "cm", "mm", "in", "cmu", NULL};
static const char *const up_choices[] = {"y", "z", NULL};
/* Metres per unit of each units_choices entry, in its order. */
static const double units_metres[] = {1.0, 0.01, 0.001, 0.0254, KIN_BVH_CMU_SCALE};
_Static_assert(sizeof units_metres / sizeof units_metres[0] + 1 == sizeof units_choices / sizeof units_choices[0],
               "one scale per units choice");
static const char *const sync_choices[] = {"full", "normal", NULL};
static const char *const sources_choices[] = {"packed", "raw", NULL};

#define S_SOLVE RTG_SCOPE_SOLVE
#define S_SUBMIT RTG_SCOPE_SUBMIT
#define S_BATCH RTG_SCOPE_BATCH
#define S_CLIENT RTG_SCOPE_CLIENT
#define S_HTTP (RTG_SCOPE_SUBMIT | RTG_SCOPE_BATCH | RTG_SCOPE_CLIENT)

/* The job options come first, in enum rtg_job_opt order. */
static const struct rtg_option table[] = {
    {"max_lm_iters", "--max-lm", "N", RTG_OPT_INT, 0, SOLVER_MAX_LM_ITERS, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "96 or the profile's",
     "most Levenberg-Marquardt iterations of the trajectory solve (from the 24th on it stops when 8 iterations lower the cost by less than 5%)"},
    {"max_cg_iters", "--max-cg", "N", RTG_OPT_INT, 1, SOLVER_MAX_CG_ITERS, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "24 or the profile's",
     "conjugate-gradient iterations per LM iteration"},
    {"init_iters", "--init-iters", "N", RTG_OPT_INT, 0, SOLVER_MAX_INIT_ITERS, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "8 or the profile's",
     "per-frame LM iterations before the coupled solve"},
    {"cg_tol", "--cg-tol", "T", RTG_OPT_REAL, 0, 1, 0, 1, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "0.001 or the profile's",
     "stop CG at |r| <= T |g|"},
    {"linear", "--linear", "pcg|direct", RTG_OPT_CHOICE, 0, 0, 0, 0, linear_choices,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "pcg",
     "linear solver of each LM step (direct: banded Cholesky in double, the reference)"},
    {"fps", "--fps", "F", RTG_OPT_REAL, 0, 10000, 1, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "30",
     "frame rate of a trajectory CSV or joint-position source (a BVH clip carries its own; an .npz's fps is replaced)"},
    {"collide_weight", "--collide-weight", "W", RTG_OPT_REAL, 0, 1000, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "20 (0 for a trajectory of the robot's own model)",
     "weight of the self-collision term (0: off)"},
    {"collide_margin", "--collide-margin", "M", RTG_OPT_REAL, 0, 0.2, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "0.01",
     "clearance (m) below which two of the robot's capsules are pushed apart"},
    {"velocity_weight", "--velocity-weight", "S", RTG_OPT_REAL, 0, 100, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "1",
     "scale of the soft bound on the robot's joint velocity limits (0: off)"},
    {"ground_weight", "--ground-weight", "W", RTG_OPT_REAL, 0, 1000, 0, 0, NULL,
     RTG_SCOPE_JOB | S_SOLVE | S_SUBMIT | S_BATCH, "10 (0 for a trajectory of the robot's own model)",
     "weight of the term that keeps the robot's capsules off the legs above the ground (0: off)"},
    /* retarget solve */
    {NULL, "--robot", "NAME|FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE | S_SUBMIT | S_BATCH | RTG_SCOPE_RENDER,
     NULL, "the robot: a bundled name (g1, h1), an uploaded name (daemon) or a URDF or MJCF file (required)"},
    {NULL, "--profile", "NAME|FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE | S_SUBMIT | S_BATCH, "detected",
     "the retargeting profile; without one it is detected from the clip's joint names"},
    {NULL, "--source-robot", "NAME|FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE | S_SUBMIT | S_BATCH, NULL,
     "the robot a trajectory CSV source moves (required for CSV sources)"},
    {NULL, "--units", "m|cm|mm|in|cmu", RTG_OPT_CHOICE, 0, 0, 0, 0, units_choices, S_SOLVE, "detected",
     "length unit of joint-position sources (replaces the profile's and the detected one)"},
    {NULL, "--up", "y|z", RTG_OPT_CHOICE, 0, 0, 0, 0, up_choices, S_SOLVE, "detected",
     "up axis of joint-position sources (replaces the profile's and the detected one)"},
    {NULL, "--joint-names", "FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE, "SOURCE with .txt for .npy",
     "the joint names of .npy joint-position sources, one a line"},
    {NULL, "--out", "DIR", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE | S_BATCH | S_CLIENT, ".",
     "output folder (-o): NAME.csv and NAME.report.json"},
    {NULL, "-o", "DIR|FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE | S_BATCH | S_CLIENT | RTG_SCOPE_RENDER, NULL,
     "the same as --out (render: the SVG file)"},
    {NULL, "--batch", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, S_SOLVE, NULL,
     "solve the sources together, one solver call per group of equal weights"},
    {NULL, "--backend", "cpu|cuda|auto", RTG_OPT_CHOICE, 0, 0, 0, 0, backend_choices,
     S_SOLVE | RTG_SCOPE_DAEMON, "auto", "solver backend (auto: the GPU when there is one)"},
    {NULL, "--threads", "N", RTG_OPT_INT, 1, 256, 0, 0, NULL, S_SOLVE | S_BATCH, "one per core, at most 64",
     "CPU threads (batch: of the local solve; on the CUDA backend the host stages leave a core to each lane's solving thread, and two to the backend's start, unless this is given)"},
    {NULL, "--lanes", "N", RTG_OPT_INT, 1, 2, 0, 0, NULL, S_SOLVE, "2 on the CUDA backend, else 1",
     "solver calls in flight at once with --batch: with 2, one lane takes the calls largest first and another, whose CUDA stream has the device's greatest priority, those of at most 65,536 frames smallest first, so that small latency-bound calls run beside the large ones (for the CUDA backend; two CPU lanes share the cores)"},
    {NULL, "--per-frame", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, S_SOLVE, NULL,
     "the per-frame IK baseline instead of the trajectory solve"},
    {NULL, "--stats", "FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SOLVE, NULL,
     "write the host seconds per stage (read, plan, targets, solve, quality, format, write) as JSON"},
    {NULL, "--format", "csv|npz", RTG_OPT_CHOICE, 0, 0, 0, 0, format_choices, S_SOLVE | S_CLIENT, "csv",
     "trajectory file: NAME.csv, or NAME.npz in the BeyondMimic/mjlab motion layout (docs/api.md \"NPZ\"; fetch: result.npz)"},
    {NULL, "--out-fps", "F", RTG_OPT_REAL, 0, 10000, 1, 0, NULL, S_SOLVE, "the source's",
     "resample the written trajectory to F frames per second (linear; slerp for the root rotation)"},
    {NULL, "--no-header", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, S_SOLVE, NULL,
     "CSV without its header row (exactly Unitree's layout)"},
    {NULL, "--quiet", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, S_SOLVE | S_BATCH | RTG_SCOPE_DAEMON, NULL,
     "only warnings and errors (-q)"},
    /* the HTTP client */
    {NULL, "--server", "URL", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_HTTP, "$RETARGET_SERVER",
     "the retargetd to talk to (batch: without it, clips are solved locally)"},
    {NULL, "--token", "T", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_HTTP, "$RETARGET_TOKEN", "bearer token"},
    {NULL, "--idempotency-key", "K", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_SUBMIT, NULL,
     "resubmitting with the same key returns the same job"},
    {NULL, "--limit", "N", RTG_OPT_INT, 1, 1000, 0, 0, NULL, S_CLIENT, "50", "list: jobs per page"},
    {NULL, "--timeout", "S", RTG_OPT_INT, 0, 2147483647, 0, 0, NULL, S_CLIENT, "0 (none)",
     "wait: give up after S seconds"},
    {NULL, "--shard", "I/N", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, S_BATCH, "0/1",
     "this run takes the clips whose index modulo N is I"},
    {NULL, "--jobs", "N", RTG_OPT_INT, 1, 1024, 0, 0, NULL, S_BATCH, "8", "clips in flight at once"},
    /* retarget render */
    {NULL, "--frames", "N", RTG_OPT_INT, 1, 64, 0, 0, NULL, RTG_SCOPE_RENDER, "6", "frames drawn"},
    {NULL, "--worst", "REPORT.json", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, RTG_SCOPE_RENDER, NULL,
     "draw the frames the solve's report names as the worst (deepest self-penetration, fastest sliding foot)"},
    /* retargetd */
    {NULL, "--listen", "ADDR:PORT", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, RTG_SCOPE_DAEMON, "127.0.0.1:8080",
     "address to serve on (port 0 picks one)"},
    {NULL, "--db", "FILE", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, RTG_SCOPE_DAEMON | RTG_SCOPE_TOKEN,
     "var/retargetd.db", "the SQLite database (created when absent)"},
    {NULL, "--threads", "N", RTG_OPT_INT, 1, 1024, 0, 0, NULL, RTG_SCOPE_DAEMON, "one per core, 4 to 64",
     "HTTP threads (submissions are planned on them)"},
    {NULL, "--solver-threads", "N", RTG_OPT_INT, 1, 256, 0, 0, NULL, RTG_SCOPE_DAEMON, "one per core",
     "CPU solver threads"},
    {NULL, "--host-threads", "N", RTG_OPT_INT, 1, 256, 0, 0, NULL, RTG_SCOPE_DAEMON, "one per core",
     "threads that build and finish jobs around the solver"},
    {NULL, "--max-body", "BYTES", RTG_OPT_INT, 1, 2147483647, 0, 0, NULL, RTG_SCOPE_DAEMON, "67108864",
     "request body limit"},
    {NULL, "--max-frames", "N", RTG_OPT_INT, 1, 10000000, 0, 0, NULL, RTG_SCOPE_DAEMON, "100000",
     "frames per clip"},
    {NULL, "--max-joints", "N", RTG_OPT_INT, 1, 1024, 0, 0, NULL, RTG_SCOPE_DAEMON, "512",
     "BVH joints per clip, URDF joints per robot"},
    {NULL, "--max-active", "N", RTG_OPT_INT, 0, 2147483647, 0, 0, NULL, RTG_SCOPE_DAEMON, "1000",
     "queued + running jobs per token (0: no limit)"},
    {NULL, "--batch-frames", "N", RTG_OPT_INT, 1, 10000000, 0, 0, NULL, RTG_SCOPE_DAEMON,
     "20000 on the CPU, 524288 on a GPU", "frame budget of one solver batch"},
    {NULL, "--batch-wait-ms", "N", RTG_OPT_INT, 0, 3600000, 0, 0, NULL, RTG_SCOPE_DAEMON, "50",
     "how long the oldest job of a class waits for company"},
    {NULL, "--idle-timeout", "S", RTG_OPT_INT, 1, 86400, 0, 0, NULL, RTG_SCOPE_DAEMON, "30",
     "close a connection idle this many seconds"},
    {NULL, "--request-timeout", "S", RTG_OPT_INT, 1, 86400, 0, 0, NULL, RTG_SCOPE_DAEMON, "60",
     "a request must arrive whole (headers and body) within S seconds (else 408 or closed)"},
    {NULL, "--max-connections", "N", RTG_OPT_INT, 1, 65536, 0, 0, NULL, RTG_SCOPE_DAEMON, "1024",
     "connections served at once"},
    {NULL, "--max-per-ip", "N", RTG_OPT_INT, 0, 65536, 0, 0, NULL, RTG_SCOPE_DAEMON, "64",
     "connections from one IP address (0: no limit)"},
    {NULL, "--plan-threads", "N", RTG_OPT_INT, 0, 256, 0, 0, NULL, RTG_SCOPE_DAEMON, "half the cores, 2 to 32",
     "threads that validate and plan submissions off the HTTP threads (0: on the HTTP thread)"},
    {NULL, "--plan-queue", "N", RTG_OPT_INT, 1, 65536, 0, 0, NULL, RTG_SCOPE_DAEMON, "64",
     "submissions waiting for a validation thread (more: 503)"},
    {NULL, "--plan-cache-mb", "N", RTG_OPT_INT, 0, 1048576, 0, 0, NULL, RTG_SCOPE_DAEMON, "256",
     "parsed trajectories kept from their submissions for the worker, at most N MiB (0: none)"},
    {NULL, "--sync", "full|normal", RTG_OPT_CHOICE, 0, 0, 0, 0, sync_choices, RTG_SCOPE_DAEMON, "full",
     "SQLite synchronous: full syncs every commit (power-loss safe), normal only checkpoints"},
    {NULL, "--sources", "packed|raw", RTG_OPT_CHOICE, 0, 0, 0, 0, sources_choices, RTG_SCOPE_DAEMON, "packed",
     "submitted sources stored zstd-packed (text about 2.4x smaller) or as sent; read back as sent either way"},
    {NULL, "--metrics-public", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, RTG_SCOPE_DAEMON, NULL,
     "GET /v1/metrics without a token (for a scraper on a trusted network); otherwise any token"},
    {NULL, "--no-auth", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, RTG_SCOPE_DAEMON, NULL,
     "no tokens (refused unless listening on loopback)"},
    {NULL, "--static-dir", "DIR", RTG_OPT_TEXT, 0, 0, 0, 0, NULL, RTG_SCOPE_DAEMON, "the embedded page",
     "serve the web page (/ and /ui/) from DIR, e.g. build/web (working on web/)"},
    {NULL, "--admin", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, RTG_SCOPE_TOKEN, NULL,
     "token add: the token may manage robots and profiles"},
    {NULL, "--help", NULL, RTG_OPT_FLAG, 0, 0, 0, 0, NULL, 0xffffu & ~(unsigned)RTG_SCOPE_JOB, NULL,
     "this text (-h)"},
    {NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, 0, NULL, NULL},
};

const struct rtg_option *rtg_options(void) { return table; }

const struct rtg_option *rtg_job_option(enum rtg_job_opt which) { return &table[which]; }

const struct rtg_option *rtg_option_by_flag(const char *flag, unsigned scope)
{
    for (const struct rtg_option *r = table; r->flag || r->key; r++)
        if (r->flag && (r->scope & scope) && !strcmp(r->flag, flag)) return r;
    return NULL;
}

/* "pcg or direct" (quote "") or "\"pcg\" or \"direct\"" (quote "\""). */
static void choices_text(const struct rtg_option *r, const char *quote, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; r->choices[i] && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s%s%s", i ? (r->choices[i + 1] ? ", " : " or ") : "",
                                 quote, r->choices[i], quote);
}

const char *rtg_option_range(const struct rtg_option *r, char *buf, size_t cap)
{
    switch (r->kind) {
    case RTG_OPT_INT: snprintf(buf, cap, "an integer in [%.0f, %.0f]", r->lo, r->hi); break;
    case RTG_OPT_REAL:
        snprintf(buf, cap, "a number in %c%g, %g%c", r->lo_open ? '(' : '[', r->lo, r->hi,
                 r->hi_open ? ')' : ']');
        break;
    case RTG_OPT_CHOICE: choices_text(r, "", buf, cap); break;
    default: snprintf(buf, cap, "%s", r->arg ? r->arg : "no value"); break;
    }
    return buf;
}

static int in_range(const struct rtg_option *r, double v)
{
    if (r->lo_open ? !(v > r->lo) : !(v >= r->lo)) return 0;
    if (r->hi_open ? !(v < r->hi) : !(v <= r->hi)) return 0;
    return 1;
}

/* Stores a checked value of job option `which`. */
static void job_store(struct rtg_job_options *o, enum rtg_job_opt which, double v)
{
    switch (which) {
    case RTG_JOB_MAX_LM: o->max_lm_iters = (int)v; break;
    case RTG_JOB_MAX_CG: o->max_cg_iters = (int)v; break;
    case RTG_JOB_INIT_ITERS: o->init_iters = (int)v; break;
    case RTG_JOB_CG_TOL: o->cg_tol = v; break;
    case RTG_JOB_LINEAR: o->linear = (int)v; break;
    case RTG_JOB_FPS: o->fps = v; break;
    case RTG_JOB_COLLIDE_WEIGHT: o->collide_weight = v; break;
    case RTG_JOB_COLLIDE_MARGIN: o->collide_margin = v; break;
    case RTG_JOB_VELOCITY_WEIGHT: o->velocity_weight = v; break;
    case RTG_JOB_GROUND_WEIGHT: o->ground_weight = v; break;
    default: return;
    }
    o->set |= 1u << which;
}

static int choice_index(const struct rtg_option *r, const char *s)
{
    for (int i = 0; r->choices[i]; i++)
        if (!strcmp(r->choices[i], s)) return i;
    return -1;
}

enum rt_status rtg_job_options_set_text(struct rtg_job_options *o, enum rtg_job_opt which,
                                        const char *text, const char *where, struct rt_err *err)
{
    const struct rtg_option *r = &table[which];
    char range[96];
    long long iv;
    double v;
    int ok;
    if (r->kind == RTG_OPT_INT) ok = rt_parse_int(text, (long long)r->lo, (long long)r->hi, &iv), v = (double)iv;
    else if (r->kind == RTG_OPT_REAL) ok = rt_parse_real(text, &v) && in_range(r, v);
    else ok = (v = choice_index(r, text ? text : "")) >= 0;
    if (!ok)
        return rt_err_set(err, RT_EINVAL, where, "expected %s, got '%s'", rtg_option_range(r, range, sizeof range),
                          RT_QUOTE(text ? text : ""));
    job_store(o, which, v);
    return RT_OK;
}

enum rt_status rtg_job_options_from_json(const cJSON *obj, const char *prefix,
                                         struct rtg_job_options *o, struct rt_err *err)
{
    memset(o, 0, sizeof *o);
    if (!obj || cJSON_IsNull(obj)) return RT_OK;
    if (!cJSON_IsObject(obj)) return rt_err_set(err, RT_EINVAL, prefix, "expected an object");
    for (const cJSON *v = obj->child; v; v = v->next) {
        char where[RT_ERR_WHERE_MAX], range[96];
        int which = -1;
        for (int i = 0; i < RTG_JOB_OPT_COUNT; i++)
            if (!strcmp(table[i].key, v->string)) which = i;
        snprintf(where, sizeof where, "%s.%s", prefix, RT_QUOTE(v->string));
        if (which < 0) {
            char known[160];
            size_t used = 0;
            for (int i = 0; i < RTG_JOB_OPT_COUNT; i++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", table[i].key);
            return rt_err_set(err, RT_EINVAL, where, "unknown option (known: %s)", known);
        }
        const struct rtg_option *r = &table[which];
        double x = 0;
        int ok;
        if (r->kind == RTG_OPT_CHOICE) {
            ok = cJSON_IsString(v) && (x = choice_index(r, v->valuestring)) >= 0;
        } else {
            ok = cJSON_IsNumber(v);
            if (ok) x = v->valuedouble;
            if (r->kind == RTG_OPT_INT) ok = ok && x == floor(x) && x >= r->lo && x <= r->hi;
            else ok = ok && isfinite(x) && in_range(r, x);
        }
        if (!ok) {
            if (r->kind == RTG_OPT_CHOICE) choices_text(r, "\"", range, sizeof range);
            else rtg_option_range(r, range, sizeof range);
            return rt_err_set(err, RT_EINVAL, where, "expected %s", range);
        }
        job_store(o, which, x);
    }
    return RT_OK;
}

char *rtg_job_options_json(const struct rtg_job_options *o)
{
    cJSON *j = cJSON_CreateObject();
    for (int i = 0; j && i < RTG_JOB_OPT_COUNT; i++) {
        if (!(o->set & (1u << i))) continue;
        switch (i) {
        case RTG_JOB_MAX_LM: cJSON_AddNumberToObject(j, table[i].key, o->max_lm_iters); break;
        case RTG_JOB_MAX_CG: cJSON_AddNumberToObject(j, table[i].key, o->max_cg_iters); break;
        case RTG_JOB_INIT_ITERS: cJSON_AddNumberToObject(j, table[i].key, o->init_iters); break;
        case RTG_JOB_CG_TOL: cJSON_AddNumberToObject(j, table[i].key, o->cg_tol); break;
        case RTG_JOB_LINEAR: cJSON_AddStringToObject(j, table[i].key, linear_choices[o->linear]); break;
        case RTG_JOB_FPS: cJSON_AddNumberToObject(j, table[i].key, o->fps); break;
        case RTG_JOB_COLLIDE_WEIGHT: cJSON_AddNumberToObject(j, table[i].key, o->collide_weight); break;
        case RTG_JOB_COLLIDE_MARGIN: cJSON_AddNumberToObject(j, table[i].key, o->collide_margin); break;
        case RTG_JOB_VELOCITY_WEIGHT: cJSON_AddNumberToObject(j, table[i].key, o->velocity_weight); break;
        case RTG_JOB_GROUND_WEIGHT: cJSON_AddNumberToObject(j, table[i].key, o->ground_weight); break;
        default: break;
        }
    }
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    return t;
}

void rtg_job_options_apply(const struct rtg_job_options *o, struct solver_options *s)
{
    if (o->set & (1u << RTG_JOB_MAX_LM)) s->max_lm_iters = o->max_lm_iters;
    if (o->set & (1u << RTG_JOB_MAX_CG)) s->max_cg_iters = o->max_cg_iters;
    if (o->set & (1u << RTG_JOB_INIT_ITERS)) s->init_iters = o->init_iters;
    if (o->set & (1u << RTG_JOB_CG_TOL)) s->cg_tol = (float)o->cg_tol;
    if (o->set & (1u << RTG_JOB_LINEAR)) s->linear = o->linear;
}

void rtg_options_usage(FILE *f, unsigned scope)
{
    for (const struct rtg_option *r = table; r->flag || r->key; r++) {
        char left[64], range[96];
        if (!r->flag || !(r->scope & scope)) continue;
        snprintf(left, sizeof left, "%s%s%s", r->flag, r->arg ? " " : "", r->arg ? r->arg : "");
        fprintf(f, "  %-26s %s", left, r->help);
        if (r->kind == RTG_OPT_INT || r->kind == RTG_OPT_REAL)
            fprintf(f, " (%s", rtg_option_range(r, range, sizeof range)), fputs(r->def ? "" : ")", f);
        if (r->def) fprintf(f, "%sdefault %s)", r->kind == RTG_OPT_INT || r->kind == RTG_OPT_REAL ? "; " : " (", r->def);
        fputc('\n', f);
    }
}

void rtg_options_markdown(FILE *f)
{
    fputs("| key | type | range | default | what |\n|---|---|---|---|---|\n", f);
    for (int i = 0; i < RTG_JOB_OPT_COUNT; i++) {
        const struct rtg_option *r = &table[i];
        char range[96];
        const char *type = r->kind == RTG_OPT_INT ? "integer" : r->kind == RTG_OPT_REAL ? "number" : "string";
        if (r->kind == RTG_OPT_CHOICE) choices_text(r, "\"", range, sizeof range);
        else rtg_option_range(r, range, sizeof range);
        fprintf(f, "| `%s` | %s | %s | %s | ", r->key, type, range, r->def ? r->def : "");
        for (const char *h = r->help; *h; h++) {
            if (*h == '|') fputc('\\', f); /* a table cell */
            fputc(*h, f);
        }
        fprintf(f, " (CLI `%s`) |\n", r->flag);
    }
}

int rtg_units_metres(const char *name, double *metres)
{
    for (int k = 0; name && units_choices[k]; k++)
        if (!strcmp(units_choices[k], name)) {
            *metres = units_metres[k];
            return 1;
        }
    return 0;
}
