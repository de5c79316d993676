/* internal.h -- what the server's files share: the daemon's and the
 * request's state (state.h), the replies (reply.h), the metrics
 * (metrics.h), and the entry points of auth, assets, jobs and the
 * scheduler. Not installed; callers outside server/ use srv.h. */
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
#include "metrics.h"
#include "reply.h"
#include "srv.h"
#include "state.h"

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

#endif
