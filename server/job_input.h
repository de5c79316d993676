/* job_input.h -- what a job solves, built from its stored form
 * (server/job_input.c): its options (parsed, and as canonical text), the
 * targets from its clip and the solver options. POST /v1/jobs
 * (server/jobs.c) builds it to validate a submission before the row is
 * written; the scheduler's worker (server/sched.c) builds it again from
 * the stored clip and options. One function serves both, so that a job
 * that was accepted is a job that the worker can run.
 *
 * Memory: srv_job_build() fills a caller-owned struct srv_job_input that
 * srv_job_input_free() empties; srv_job_opts_text() returns text that the
 * caller frees. */
#ifndef RT_SRV_JOB_INPUT_H
#define RT_SRV_JOB_INPUT_H

#include "../base/status.h"
#include "../retarget/targets.h"
#include "../solver/solver.h"
#include "../storage/store.h"

struct cJSON;
struct kin_robot;
struct srv;

/* A job's options as the client gave them; unset ones are negative. */
struct srv_job_opts {
    int max_lm_iters, max_cg_iters, init_iters, linear; /* -1: unset */
    double cg_tol, fps;                                 /* < 0: unset */
};

/* Parses the "options" object (NULL: none) into `o`; unknown keys and
 * values out of range are RT_EINVAL naming body.options.KEY. */
enum rt_status srv_job_opts_parse(const struct cJSON *obj, struct srv_job_opts *o, struct rt_err *err);

/* The canonical text of `o` (fixed key order), malloc'd (the caller frees
 * it); NULL when out of memory. */
char *srv_job_opts_text(const struct srv_job_opts *o);

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

#endif
