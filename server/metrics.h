/* metrics.h -- the daemon's counters (replies by HTTP status, solver
 * batches, clips, frames and seconds) and the Prometheus text of GET
 * /v1/metrics.
 *
 * The lowest of the server's modules: server/reply.c counts every reply
 * here and the scheduler's worker every solved batch, so metrics.c
 * includes no other server header. What the text needs from above -- the
 * scheduler's queue length -- its caller (server/http.c) passes in.
 *
 * Memory: the counters live in struct srv (state.h); srv_metrics_text()
 * returns text that the caller frees. */
#ifndef RT_SRV_METRICS_H
#define RT_SRV_METRICS_H

#include <pthread.h>
#include <stddef.h>

#include "../base/status.h"

struct store;

/* The host stages of a job, for retargetd_stage_seconds_total. */
enum srv_stage {
    SRV_STAGE_PLAN = 0, /* submission: parse, map, check (HTTP threads) */
    SRV_STAGE_TARGETS,  /* worker: the stored plan read back, targets built */
    SRV_STAGE_SOLVE,    /* worker: solver calls (wall) */
    SRV_STAGE_QUALITY,  /* worker: ground lift, quality, report */
    SRV_STAGE_STORE,    /* worker: the result's transaction */
    SRV_STAGE_FORMAT,   /* fetch: CSV and JSON rendered from the stored floats */
    SRV_STAGE_COUNT
};

/* The parts of a submission's (POST /v1/jobs) time, for the histogram
 * retargetd_submit_seconds{part}: where a slow reply waited. */
enum srv_submit_part {
    SRV_SUB_BODY = 0, /* request line to the last byte of the body (the upload) */
    SRV_SUB_QUEUE,    /* waiting for a validation thread (--plan-threads) */
    SRV_SUB_PREPARE,  /* the request parsed, the robot and profile loaded */
    SRV_SUB_PLAN,     /* rtg_job_plan(): the clip parsed, mapped and checked */
    SRV_SUB_INSERT,   /* the row written (store_job_insert: the group commit), in all; of which: */
    SRV_SUB_INSERT_PACK,   /* the source packed for the database (zstd, on the validation thread) */
    SRV_SUB_INSERT_GROUP,  /* waiting for the commit before (or, taken along, for the one that took it) */
    SRV_SUB_INSERT_LOCK,   /* a group's leader only: waiting for the store's writer (a result commit, a claim) */
    SRV_SUB_INSERT_WRITE,  /* a leader only: the group's rows written */
    SRV_SUB_INSERT_COMMIT, /* a leader only: its commit (and disk sync) */
    SRV_SUB_INSERT_MORE,   /* a leader only: the later groups it committed before it returned */
    SRV_SUB_REPLY,    /* the job read back and its JSON made */
    SRV_SUB_RESUME,   /* the connection resumed until the reply is queued */
    SRV_SUB_COUNT
};
/* Where the solver worker's wall time goes, for
 * retargetd_worker_seconds_total{part}: what a batch waits on besides its
 * solve. */
enum srv_worker_part {
    SRV_WK_IDLE = 0, /* no group ready: no jobs, or the oldest waiting for company (--batch-wait-ms) */
    SRV_WK_BUILD,    /* a batch solved, the next one's build (rows read, targets) not done yet */
    SRV_WK_FINISH,   /* the batch before still finishing (SCHED_FINISHING_BATCHES) */
    SRV_WK_CLAIM,    /* the jobs claimed (queued -> running) by the worker: only around a job retried alone */
    SRV_WK_SOLVE,    /* the solver calls (rtg_batch_solve_packed; a call not packed ahead: its pack too) */
    SRV_WK_MARK,     /* the solved jobs handed to the progress thread to mark (store_job_solved_many) */
    SRV_WK_COUNT
};

/* Where a batch's build goes (the wall time of the thread that builds it,
 * for retargetd_build_seconds_total{part}), the part of the worker's
 * `build` wait that it did not overlap with the solve before. */
enum srv_build_part {
    SRV_BUILD_ROWS = 0, /* the jobs' rows read and checked, the robot loaded */
    SRV_BUILD_TARGETS,  /* every job's targets built (in parallel on the host pool, the claim beside them) */
    SRV_BUILD_CLAIM,    /* the jobs claimed: queued -> running (a write: waits for the store's writer; beside the
                         * targets, or by the worker around a job retried alone) */
    SRV_BUILD_PACK,     /* the first solver call packed into its arrays */
    SRV_BUILD_COUNT
};

#define SRV_SUB_BUCKETS 12 /* upper bounds 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000 ms; then +Inf */

/* Counters for GET /v1/metrics. Guarded by `mu`. */
struct srv_metrics {
    pthread_mutex_t mu;
    unsigned long long http[600]; /* requests by status code */
    unsigned long long frames_solved, batches, clips_solved;
    double solve_seconds;
    double stage_seconds[SRV_STAGE_COUNT]; /* summed over threads */
    unsigned long long sub_count[SRV_SUB_COUNT][SRV_SUB_BUCKETS + 1]; /* per bucket, not cumulative */
    double sub_sum[SRV_SUB_COUNT];
    double worker_seconds[SRV_WK_COUNT];
    double build_seconds[SRV_BUILD_COUNT];
    unsigned long long builds[2]; /* jobs built from the submission's kept plan [0], from the store [1] */
};

/* Zeroes the counters and creates their mutex; srv_metrics_free() destroys it. */
void srv_metrics_init(struct srv_metrics *m);
void srv_metrics_free(struct srv_metrics *m);
/* Counts one reply with HTTP status `code` (codes >= 600 are not counted). */
void srv_metrics_http(struct srv_metrics *m, unsigned int code);
/* Counts one solver batch of `clips` clips and `frames` frames that took
 * `seconds` of wall time. */
void srv_metrics_solved(struct srv_metrics *m, int clips, long long frames, double seconds);
/* Adds `seconds` to stage `stage` (enum srv_stage). */
void srv_metrics_stage(struct srv_metrics *m, int stage, double seconds);
/* Adds `seconds` of the worker's wall time to part `part` (enum srv_worker_part). */
void srv_metrics_worker(struct srv_metrics *m, int part, double seconds);
/* Adds `seconds` of a batch's build to part `part` (enum srv_build_part). */
void srv_metrics_build(struct srv_metrics *m, int part, double seconds);
/* Counts one job built: from the plan its submission kept (server/plans.h)
 * when `kept`, else from the store. */
void srv_metrics_built(struct srv_metrics *m, int kept);
/* Counts `seconds` spent in part `part` (enum srv_submit_part) of one
 * submission. */
void srv_metrics_submit(struct srv_metrics *m, int part, double seconds);
/* Writes GET /v1/metrics in the Prometheus text format into *text (*len
 * bytes, malloc'd; the caller frees it): jobs by state (from `store`),
 * `queued` as the jobs waiting in the scheduler, then the counters of `m`.
 * On failure *text is NULL and `err` says why: the store's error, or
 * RT_ENOMEM at "metrics". */
enum rt_status srv_metrics_text(struct srv_metrics *m, struct store *store, int queued, char **text,
                                size_t *len, struct rt_err *err);

#endif
