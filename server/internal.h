/* internal.h -- what the server's files share: the daemon's and the
 * request's state (state.h), the replies (reply.h), the metrics
 * (metrics.h), robots and profiles (assets.h), a job's input
 * (job_input.h), and the entry points of auth, jobs and the scheduler. Not
 * installed; callers outside server/ use srv.h. */
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
#include "assets.h"
#include "job_input.h"
#include "metrics.h"
#include "reply.h"
#include "srv.h"
#include "state.h"

/* --- auth.c --------------------------------------------------------------- */

/* Authenticates the request's bearer token into req->owner / req->admin.
 * Returns 0, or 401 (no or unknown token) with `why` set. */
unsigned int srv_auth(struct srv *s, struct MHD_Connection *c, struct srv_req *r, const char **why);

/* --- jobs.c --------------------------------------------------------------- */

/* POST and GET /v1/jobs, GET and DELETE /v1/jobs/ID, GET .../result and
 * .../result.csv. Queues the reply and returns MHD's result. A submission
 * is validated completely (srv_job_build) before its row is written. */
enum MHD_Result srv_route_jobs(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                               const char *method);

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
