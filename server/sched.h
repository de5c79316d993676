/* sched.h -- the scheduler and its solver worker (server/sched.c): jobs
 * wait in horizon-length classes and are solved in batches on the solver
 * backend, their results stored as each batch ends.
 *
 * Memory: sched_start() returns a scheduler that the caller stops and
 * frees with sched_stop(). */
#ifndef RT_SRV_SCHED_H
#define RT_SRV_SCHED_H

#include <stdint.h>

#include "../base/status.h"

struct sched;
struct srv;

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
