/* internal.h -- what the server's files share: the daemon's state, the
 * per-request state, the reply helpers of http.c, the scheduler's entry
 * points and the metrics. Not installed; callers outside server/ use srv.h. */
#ifndef RT_SRV_INTERNAL_H
#define RT_SRV_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "../retarget/profile.h"
#include "../kinematics/robot.h"
#include "../retarget/targets.h"
#include "../solver/solver.h"
#include "../storage/store.h"
#include "srv.h"

#define SRV_OWNER_ANON "anonymous"

/* Counters for GET /v1/metrics. Guarded by `mu`. */
struct srv_metrics {
    pthread_mutex_t mu;
    unsigned long long http[600]; /* requests by status code */
    unsigned long long frames_solved, batches, clips_solved;
    double solve_seconds;
};

struct sched;

struct srv {
    struct srv_config cfg;       /* strings point into the copies below */
    char *listen, *db_path, *backend;
    struct store *store;
    struct MHD_Daemon *mhd;
    struct sched *sched;
    struct srv_metrics metrics;
    unsigned int port;
};

/* Routes of the API (server/http.c parses the URL into one). */
enum srv_route {
    SRV_R_NONE = 0,
    SRV_R_HEALTH,
    SRV_R_METRICS,
    SRV_R_ROBOTS,
    SRV_R_ROBOT,
    SRV_R_PROFILES,
    SRV_R_PROFILE,
    SRV_R_JOBS,
    SRV_R_JOB,
    SRV_R_RESULT,
    SRV_R_RESULT_CSV
};

/* Per-request state, in *req_cls from the first call of the access handler
 * to MHD_OPTION_NOTIFY_COMPLETED, which frees it. */
struct srv_req {
    int route;              /* enum srv_route */
    char name[STORE_MAX_NAME + 1]; /* robot/profile name from the URL */
    int64_t id;             /* job id from the URL */
    char owner[STORE_MAX_NAME + 1];
    int admin;
    char *body;             /* NUL-terminated, len bytes */
    size_t len, cap;
    int too_big;            /* the body passed max_body: 413 at the end */
};

/* --- http.c: replies ------------------------------------------------------ */

/* Queues `len` bytes of malloc'd `text` (MHD frees it with free()) with
 * `code` and content type `type`; counts it in the metrics. */
enum MHD_Result srv_reply(struct srv *s, struct MHD_Connection *c, unsigned int code,
                          const char *type, char *text, size_t len);

/* Queues cJSON tree `j` (may be NULL) as JSON with `code`; `j` is deleted
 * here in every case. When it cannot be printed (out of memory) a fixed 503
 * error body goes instead. Returns MHD's result of queueing. */
struct cJSON;
enum MHD_Result srv_reply_json(struct srv *s, struct MHD_Connection *c, unsigned int code,
                               struct cJSON *j);

/* Queues malloc'd JSON text `text` (MHD frees it with free()) with `code`
 * and one more header `hdr: val` (hdr NULL: none). A NULL `text` (printing
 * it ran out of memory) queues the fixed 503 error body of srv_reply_json()
 * instead, without the header. srv_reply_json() and the error replies
 * use it. */
enum MHD_Result srv_reply_json_hdr(struct srv *s, struct MHD_Connection *c, unsigned int code,
                                   char *text, const char *hdr, const char *val);

/* Queues {"error":{"code","where","message"}} with the HTTP status of
 * err->code (srv_http_status). */
enum MHD_Result srv_reply_err(struct srv *s, struct MHD_Connection *c, const struct rt_err *err);

/* As srv_reply_err with an explicit HTTP status and code name (401, 403). */
enum MHD_Result srv_reply_err_http(struct srv *s, struct MHD_Connection *c, unsigned int http,
                                   const char *code, const char *where, const char *msg);

/* The HTTP status for an rt_status: EINVAL, EPARSE 400; ENOTFOUND 404;
 * ELIMIT 413; EBUSY 429; ENODEV, ENOMEM 503; ESTATE, ECONFLICT 409;
 * anything else 500. */
unsigned int srv_http_status(int st);

/* --- auth.c --------------------------------------------------------------- */

/* Authenticates the request's bearer token into req->owner / req->admin.
 * Returns 0, or 401 (no or unknown token) with `why` set. */
unsigned int srv_auth(struct srv *s, struct MHD_Connection *c, struct srv_req *r, const char **why);

/* --- assets.c: robots and profiles ---------------------------------------- */

/* Loads robot `name`: a bundled one, else an uploaded one. RT_ENOTFOUND. */
enum rt_status srv_robot_load(struct srv *s, const char *name, struct kin_robot **out,
                              struct rt_err *err);
/* Loads profile `name`: a bundled one, else an uploaded one. RT_ENOTFOUND. */
enum rt_status srv_profile_load(struct srv *s, const char *name, struct rtg_profile **out,
                                struct rt_err *err);
/* RT_OK when `name` may name an uploaded robot or profile: store_name_ok()
 * (1..STORE_MAX_NAME of [A-Za-z0-9_.-]), not starting with '.', not ending
 * in .urdf or .json (which the loaders would take for paths). Else
 * RT_EINVAL at `where` with "KIND name: WHY" (name NULL: "required").
 * Uploads and job submissions check names with this one rule, so every
 * uploaded name can be used. */
enum rt_status srv_name_check(const char *name, const char *kind, const char *where, struct rt_err *err);

/* GET /v1/robots, GET and PUT (admin) /v1/robots/NAME; the profiles alike.
 * Each queues its reply (errors as srv_reply_err) and returns MHD's result.
 * An upload is parsed before it is stored: a refused one stores nothing. */
enum MHD_Result srv_route_robots(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                 const char *method);
enum MHD_Result srv_route_profiles(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                   const char *method);

/* --- jobs.c --------------------------------------------------------------- */

/* POST and GET /v1/jobs, GET and DELETE /v1/jobs/ID, GET .../result and
 * .../result.csv. Queues the reply and returns MHD's result. A submission
 * is validated completely (srv_job_build) before its row is written. */
enum MHD_Result srv_route_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                               const char *method);

/* What a job solves: its targets and options, built from the stored job
 * exactly as at submission (the worker rebuilds them from the clip text). */
struct srv_job_input {
    struct rtg_targets t;
    struct solver_options opt;
    char profile[STORE_MAX_NAME + 1]; /* the profile used ("" for the identity mapping) */
};

/* Builds `in` for job `j` (with its clip) on `robot`. On failure `in` is
 * zeroed and `err` names what and where (clip:LINE, body.options.X). */
enum rt_status srv_job_build(struct srv *s, const struct store_job *j,
                             const struct kin_robot *robot, struct srv_job_input *in,
                             struct rt_err *err);
/* Frees what srv_job_build put in `in` and zeroes it; safe on a zeroed or
 * already freed `in`. */
void srv_job_input_free(struct srv_job_input *in);

/* --- sched.c -------------------------------------------------------------- */

/* Starts the scheduler: opens the solver backend (s->cfg.backend), loads
 * the database's queued jobs and starts the worker thread. On failure *out
 * is NULL, nothing is left running, and err says why (RT_ENODEV for an
 * absent backend, RT_ENOMEM). The caller stops it with sched_stop(). */
enum rt_status sched_start(struct srv *s, struct sched **out, struct rt_err *err);
/* Adds a queued job (called after its row is committed). */
void sched_add(struct sched *q, int64_t id, int frames, const char *class_key);
/* Drops a queued job (cancelled); a no-op when it is not queued here. */
void sched_remove(struct sched *q, int64_t id);
/* Number of jobs waiting in the scheduler. */
int sched_queued(struct sched *q);
/* Name of the backend the worker solves on ("cpu", "cuda"); static. */
const char *sched_backend(struct sched *q);
/* Lets the worker finish the batch it is solving (its results are stored),
 * joins it and frees the scheduler. Jobs still queued stay queued in the
 * database. NULL-safe. */
void sched_stop(struct sched *q);

/* --- metrics.c ------------------------------------------------------------ */

/* Zeroes the counters and creates their mutex; srv_metrics_free() destroys it. */
void srv_metrics_init(struct srv_metrics *m);
void srv_metrics_free(struct srv_metrics *m);
/* Counts one reply with HTTP status `code` (codes >= 600 are not counted). */
void srv_metrics_http(struct srv_metrics *m, unsigned int code);
/* Counts one solver batch of `clips` clips and `frames` frames that took
 * `seconds` of wall time. */
void srv_metrics_solved(struct srv_metrics *m, int clips, long long frames, double seconds);
/* GET /v1/metrics: the Prometheus text. Queues the reply (a 503 when out of
 * memory) and returns MHD's result. */
enum MHD_Result srv_route_metrics(struct srv *s, struct MHD_Connection *c);

#endif
