/* sched.c -- the scheduler and its solver worker.
 *
 * Queued jobs wait here in submission order, each with its horizon class
 * (ceil(log2(frames)): clips of similar length share a batch, so a short
 * clip never waits on the LM iterations of a long one) and its class key
 * (robot, profile, source, options: what a batch must share). A group --
 * one class and one key -- is dispatched when its frames reach the batch
 * budget (--batch-frames) or its oldest job has waited --batch-wait-ms
 * (a job retried alone after a crash, load_queued(), at once);
 * the oldest ready group goes first, and a batch takes that group's jobs in
 * order up to the frame budget (at least one job, however long), then the
 * jobs of the other ready groups of its key that the budget leaves room for.
 *
 * One worker owns the solver backend ("auto": the GPU when there is one,
 * else the CPU with --solver-threads threads). A batch's targets are built
 * from each job's stored plan in parallel on the host pool (--host-threads)
 * while the worker solves the batch before it, and the build claims its
 * jobs while their targets are built (queued -> running; a job cancelled
 * meanwhile is skipped; the worker claims them itself around a job retried
 * alone). The jobs split by identical weights and options
 * (rtg_targets_same_weights) into parts, one solver call each; the build
 * packs the first part into one of two sets of page-locked batch arrays
 * (rtg_batch_pack) while the worker solves the batch before from the
 * other. The worker solves each part (rtg_batch_solve_packed: the clips'
 * states one block, no copy out), leaves the solved jobs' mark to the
 * progress thread and queues each job's finishing on the pool: the ground
 * lift, quality and report, and the result stored in the transaction that
 * marks the job succeeded -- or dropped when the job was cancelled while it
 * ran. Between its solves the worker waits for the store's writer only
 * around a job retried alone. The finishing of batch N runs while the worker
 * solves batch N+1 and batch N+2 is built. A clip's result is the same
 * bits in any batch (DESIGN.md "The numerical contract"), so batching is
 * invisible in the results. Progress (LM iteration) is written to the job
 * row while the batch runs. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/clock.h"
#include "../retarget/batch.h"
#include "../retarget/job.h"
#include "../retarget/engine.h"
#include "../retarget/output.h"
#include "../retarget/pool.h"
#include "../retarget/report.h"
#include "../solver/backend.h"
#include "../storage/store.h"
#include "assets.h"
#include "job_input.h"
#include "metrics.h"
#include "plans.h"
#include "sched.h"
#include "state.h"

/* Bytes of results per commit (store_batch()). */
#define SCHED_STORE_BYTES ((size_t)4 << 20)
/* Solved batches still finishing past which the worker waits before it
 * solves another: two. A crash reruns the jobs whose results are not
 * stored yet (store_job_solved_many keeps that from counting against their
 * solves), and each batch behind holds its clips' results. With one, on
 * the H200 the worker waited 0.3-0.6 s of bench-e2e's 2.5 s for the batch
 * before to finish; with two 0.0-0.1 s, and the run took 2.42-2.44 s
 * against 2.48-2.57 s (once the mark and the claim had left the worker's
 * thread: while they were on it, the wait moved to them). */
#define SCHED_FINISHING_BATCHES 2

/* The host pool's nice value above the request handlers' (rtg_pool_create_nice). */
#define SCHED_HOST_NICE 10
/* Threads that copy a batch's clips into the solver's arrays. */
#define SCHED_COPY_THREADS 4

struct sched_entry {
    int64_t id;
    int frames, hclass;
    int alone;    /* a job a crash interrupted: a group of its own, dispatched at once */
    double t_enq; /* rt_now() */
    char key[256];
};

struct sched {
    struct srv *s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct sched_entry *q; /* in submission order */
    int n, cap;
    int stop;
    int started;
    pthread_t worker;
    struct solver_backend be;
    struct rtg_pool *pool; /* host work: building and finishing jobs */
    struct rtg_pool *copy_pool; /* the batch arrays' copies in (rtg_batch_pack) */
    /* Two sets of batch arrays, reused call to call (page-locked where the
     * backend has them, so that a GPU takes them by DMA): the build of the
     * next batch packs its first call into one while the worker solves
     * from the other (build_req.ws, alternating). */
    struct rtg_batch_ws ws[2];
    int ws_next;
    int finishing;          /* solved batches not yet freed (under mu) */
    /* Progress writes (on_progress, progress_main): the solver's thread
     * only leaves the running call's job ids and LM iteration here (under
     * pmu); a thread of their own writes them to the store, so that a
     * solve never waits for the store's writer (a result commit, a sync). */
    pthread_mutex_t pmu;
    pthread_cond_t pcv;
    int64_t *p_ids;
    int p_n, p_cap, p_lm, p_dirty, p_stop, p_started;
    pthread_t p_thread;
    /* Solved jobs to mark so (store_job_solved_many), left by the worker
     * after each solve for the same thread (under pmu): the mark waits for
     * the store's writer, and the worker goes on to its next solve. */
    int64_t *m_ids;
    int m_n, m_cap;
};

static int horizon_class(int frames)
{
    int c = 0;
    while (c < 31 && (1 << c) < frames) c++;
    return c;
}

static void add_locked(struct sched *q, int64_t id, int frames, const char *key, int alone)
{
    if (q->n == q->cap) {
        int cap = q->cap ? 2 * q->cap : 64;
        struct sched_entry *e = realloc(q->q, (size_t)cap * sizeof *e);
        if (!e) {
            /* The job stays queued in the database; a restart picks it up. */
            rt_log("error", "sched", "queue", "out of memory: job %lld waits for a restart", (long long)id);
            return;
        }
        q->q = e;
        q->cap = cap;
    }
    struct sched_entry *e = &q->q[q->n++];
    e->id = id;
    e->frames = frames;
    e->hclass = horizon_class(frames);
    e->alone = alone;
    e->t_enq = rt_now();
    snprintf(e->key, sizeof e->key, "%s", key);
}

void sched_add(struct sched *q, int64_t id, int frames, const char *class_key)
{
    pthread_mutex_lock(&q->mu);
    add_locked(q, id, frames, class_key, 0);
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void sched_remove(struct sched *q, int64_t id)
{
    pthread_mutex_lock(&q->mu);
    for (int i = 0; i < q->n; i++)
        if (q->q[i].id == id) {
            memmove(&q->q[i], &q->q[i + 1], (size_t)(q->n - i - 1) * sizeof q->q[0]);
            q->n--;
            break;
        }
    pthread_mutex_unlock(&q->mu);
}

int sched_queued(struct sched *q)
{
    pthread_mutex_lock(&q->mu);
    int n = q->n;
    pthread_mutex_unlock(&q->mu);
    return n;
}

const char *sched_backend(struct sched *q) { return solver_backend_name(&q->be); }

/* The frame budget of one batch: --batch-frames, or by default what the
 * backend wants -- a GPU is full only at hundreds of thousands of frames,
 * the CPU is as fast in small batches and they keep latency down. */
#define SCHED_BATCH_FRAMES_CPU 20000
#define SCHED_BATCH_FRAMES_CUDA 524288
static long long batch_budget(const struct sched *q)
{
    if (q->s->cfg.batch_frames > 0) return q->s->cfg.batch_frames;
    return strcmp(solver_backend_name(&q->be), "cuda") ? SCHED_BATCH_FRAMES_CPU : SCHED_BATCH_FRAMES_CUDA;
}

/* How long the oldest job of a group waits for company: --batch-wait-ms,
 * or by default SCHED_BATCH_WAIT_MS on either backend. A GPU fills a batch
 * only with many clips, but under load they gather while the batch before
 * is solved: on the H200, bench-e2e's daemon took 2.51-2.67 s with 50 ms
 * against 2.89-2.99 s with 200 (the clips' latency, with 8 in flight a
 * client, bounds the rate). */
#define SCHED_BATCH_WAIT_MS 50
static int batch_wait_ms(const struct sched *q)
{
    return q->s->cfg.batch_wait_ms >= 0 ? q->s->cfg.batch_wait_ms : SCHED_BATCH_WAIT_MS;
}

static int same_group(const struct sched_entry *a, const struct sched_entry *b)
{
    return a->hclass == b->hclass && !strcmp(a->key, b->key);
}

/* Whether the group of q->q[i] (its first entry) is ready: its frames
 * reach `budget`, it is a job alone, or it has waited `wait` s. */
static int group_ready(const struct sched *q, int i, long long budget, double now, double wait)
{
    long long frames = 0;
    for (int k = i; k < q->n; k++)
        if (same_group(&q->q[k], &q->q[i])) frames += q->q[k].frames;
    return frames >= budget || q->q[i].alone || now - q->q[i].t_enq >= wait;
}

/* Picks the oldest ready group and moves up to a frame budget of its jobs
 * into out[] (capacity q->n), then, within what the budget leaves, the
 * jobs of the other groups of its key that are ready too (other horizon
 * classes: under load several are ready at once, and one larger call
 * solves more frames a second than two smaller ones; a group not yet ready
 * keeps gathering). Returns how many, 0 when none is ready (then *wait_s
 * is how long until the oldest group is). Caller holds q->mu. */
static int pick_locked(struct sched *q, struct sched_entry *out, double *wait_s)
{
    double now = rt_now(), wait = (double)batch_wait_ms(q) / 1000.0;
    long long budget = batch_budget(q);
    int lead = -1;
    *wait_s = -1;
    for (int i = 0; i < q->n && lead < 0; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = same_group(&q->q[k], &q->q[i]);
        if (!seen && group_ready(q, i, budget, now, wait)) lead = i;
    }
    if (lead < 0) {
        if (q->n) *wait_s = q->q[0].t_enq + wait - now;
        return 0;
    }
    struct sched_entry g = q->q[lead];
    /* The classes that join: each ready group of g's key (a job alone has
     * a key of its own). Asked of any of a group's jobs, group_ready() is
     * true only if it is of the group's first (later ones waited less and
     * have fewer frames after them), so no first entry need be sought. */
    int join[32] = {0};
    join[g.hclass] = 1;
    if (!g.alone)
        for (int i = 0; i < q->n; i++)
            if (!join[q->q[i].hclass] && !strcmp(q->q[i].key, g.key) && group_ready(q, i, budget, now, wait))
                join[q->q[i].hclass] = 1;
    long long frames = 0;
    int n = 0, w = 0;
    for (int pass = 0; pass < 2; pass++) { /* g's own group first, then the others that join */
        for (int k = 0; k < q->n; k++) {
            struct sched_entry *e = &q->q[k];
            int take = pass == 0 ? same_group(e, &g) : !same_group(e, &g) && join[e->hclass] && !strcmp(e->key, g.key);
            if (take && (n == 0 || frames + e->frames <= budget)) {
                frames += e->frames;
                out[n++] = *e;
                e->id = -1; /* taken */
            }
        }
    }
    for (int k = 0; k < q->n; k++)
        if (q->q[k].id >= 0) q->q[w++] = q->q[k];
    q->n = w;
    return n;
}

/* --- running a batch -------------------------------------------------------- */

struct progress {
    struct sched *q;
    const int64_t *ids;
    int n;
    double last;
};

/* Called by the solver between LM iterations: at most every 50 ms, notes
 * the call's jobs and iteration for progress_main (the solver goes on at
 * once). */
static void on_progress(void *user, int lm_iter, int clips_done)
{
    struct progress *p = user;
    struct sched *q = p->q;
    double now = rt_now();
    (void)clips_done;
    if (now - p->last < 0.05) return;
    p->last = now;
    pthread_mutex_lock(&q->pmu);
    if (p->n > q->p_cap) {
        int64_t *ids = realloc(q->p_ids, (size_t)p->n * sizeof *ids);
        if (ids) {
            q->p_ids = ids;
            q->p_cap = p->n;
        }
    }
    if (p->n <= q->p_cap) {
        memcpy(q->p_ids, p->ids, (size_t)p->n * sizeof *p->ids);
        q->p_n = p->n;
        q->p_lm = lm_iter;
        q->p_dirty = 1;
        pthread_cond_signal(&q->pcv);
    }
    pthread_mutex_unlock(&q->pmu);
}

/* Marks jobs ids[0..n) solved in the store: from then a crash interrupts
 * the storing of their results, not their solve, and does not count
 * against their solves. A mark that fails only leaves the jobs counted as
 * before. */
static void mark_now(struct sched *q, const int64_t *ids, int n)
{
    struct rt_err err;
    rt_err_clear(&err);
    if (store_job_solved_many(q->s->store, ids, n, &err) != RT_OK) {
        char line[RT_ERR_LINE_MAX];
        rt_log("warn", "sched", "batch",
               "marking %d job(s) solved failed (%s): a crash now counts as an interrupted solve", n,
               rt_err_line(&err, line, sizeof line));
    }
}

/* The progress writer: marks the solved jobs that mark_solved() left and
 * stores what on_progress() noted last (a write that waits for the store's
 * writer delays only the next mark or progress, never a solve). On stop it
 * writes the marks left before it returns. */
static void *progress_main(void *arg)
{
    struct sched *q = arg;
    int64_t *ids = NULL, *marks = NULL;
    int cap = 0, m_cap = 0;
    pthread_mutex_lock(&q->pmu);
    for (;;) {
        while (!q->p_dirty && !q->m_n && !q->p_stop) pthread_cond_wait(&q->pcv, &q->pmu);
        if (q->m_n) {
            /* Swap the queue for the thread's own array: the worker fills
             * the other while these are written. */
            int64_t *t = marks;
            int n = q->m_n, tc = m_cap;
            marks = q->m_ids;
            m_cap = q->m_cap;
            q->m_ids = t;
            q->m_cap = tc;
            q->m_n = 0;
            pthread_mutex_unlock(&q->pmu);
            mark_now(q, marks, n);
            pthread_mutex_lock(&q->pmu);
            continue;
        }
        if (q->p_stop) break;
        int n = q->p_n, lm = q->p_lm;
        if (n > cap) {
            int64_t *b = realloc(ids, (size_t)n * sizeof *b);
            if (!b) {
                q->p_dirty = 0; /* out of memory: this progress is skipped */
                continue;
            }
            ids = b;
            cap = n;
        }
        memcpy(ids, q->p_ids, (size_t)n * sizeof *ids);
        q->p_dirty = 0;
        pthread_mutex_unlock(&q->pmu);
        store_job_progress_many(q->s->store, ids, n, lm, NAN, NULL);
        pthread_mutex_lock(&q->pmu);
    }
    pthread_mutex_unlock(&q->pmu);
    free(ids);
    free(marks);
    return NULL;
}

/* Leaves the jobs ids[0..n) of a finished solve for progress_main() to
 * mark solved. Out of memory, it marks them on the caller's thread. */
static void mark_solved(struct sched *q, const int64_t *ids, int n)
{
    pthread_mutex_lock(&q->pmu);
    if (q->m_n + n > q->m_cap) {
        int cap = q->m_cap ? q->m_cap : 256;
        while (cap < q->m_n + n) cap *= 2;
        int64_t *b = realloc(q->m_ids, (size_t)cap * sizeof *b);
        if (!b) {
            pthread_mutex_unlock(&q->pmu);
            mark_now(q, ids, n);
            return;
        }
        q->m_ids = b;
        q->m_cap = cap;
    }
    memcpy(q->m_ids + q->m_n, ids, (size_t)n * sizeof *ids);
    q->m_n += n;
    pthread_cond_signal(&q->pcv);
    pthread_mutex_unlock(&q->pmu);
}

static char *error_json(const struct rt_err *err)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "code", rt_status_str(err->code));
    cJSON_AddStringToObject(e, "where", err->where);
    cJSON_AddStringToObject(e, "message", err->msg);
    char *t = cJSON_PrintUnformatted(e);
    cJSON_Delete(e);
    return t;
}

static void fail_job(struct sched *q, int64_t id, const struct rt_err *err)
{
    char *e = error_json(err);
    char line[RT_ERR_LINE_MAX];
    rt_log("warn", "sched", "job", "job %lld failed: %s", (long long)id, rt_err_line(err, line, sizeof line));
    store_job_fail(q->s->store, id, e ? e : "{\"code\":\"out of memory\"}", NULL);
    free(e);
}

/* A batch in flight: its jobs, its robot, and the finishing tasks queued
 * for it on the host pool. It lives until those tasks have run: the last
 * reference (the worker's, or the last finishing task's) frees it, so that
 * finishing (lift, quality, report, store) overlaps the next batches'
 * builds and solves. */
struct batch_ctx;

struct batch_job {
    struct store_job j;
    struct srv_job_input in;
    int ok, done;
    struct rt_err err;     /* of the build */
    /* after the solve */
    struct batch_ctx *ctx;
    float *state;
    struct solver_clip_result res;
    int part_clips;        /* clips in its solver call */
    double part_seconds;   /* that call's wall time */
    char *report;          /* the report text, once finished (NULL: failed) */
    int finished;          /* 1 once finish_job ran */
    int stored;            /* 1 once store_batch() took it */
};

struct batch_ctx {
    struct sched *q;
    struct kin_robot *robot;
    char *col_names;
    struct batch_job *jobs;
    int n;
    struct rtg_batch_ws *ws; /* its calls' arrays (sched.ws[0] or [1]) */
    float **blocks;         /* n: its calls' states, one block a call (rtg_batch_solve_packed) */
    int n_blocks;
    atomic_int unfinished;  /* finishing tasks queued and not yet run */
    atomic_int refs;        /* the worker's, until it has queued every part, and one per finishing task */
    struct sched_entry *e;  /* the queue entries it was built from (to queue them again) */
    int *idx;               /* n: the jobs of one solver call (solve_batch()) */
    int claimed;            /* its jobs claimed (claim_batch()): by its build, or before its solve */
    int solved;             /* counted in sched.finishing (set by the worker, under its reference) */
    pthread_mutex_t store_mu; /* one store_batch() at a time */
};

/* Stores the finished jobs of batch `b` not stored yet in a few
 * transactions (commits of about SCHED_STORE_BYTES, not one per job); when
 * one fails, its jobs one by one,
 * so that one bad result fails alone. The last finishing task of a call
 * runs it, so a result is durable as soon as it is finished, while the
 * worker solves the next batch. */
static void store_batch(struct batch_ctx *b)
{
    struct sched *q = b->q;
    struct srv *s = q->s;
    struct rt_err err;
    int cols = b->robot ? rt_state_cols(&b->robot->tree) : 0, m = 0;
    struct store_result_new *r = calloc((size_t)b->n, sizeof *r);
    struct batch_job **of = calloc((size_t)b->n, sizeof *of);
    double t0 = rt_now();
    rt_err_clear(&err);
    pthread_mutex_lock(&b->store_mu);
    for (int i = 0; i < b->n; i++) {
        struct batch_job *j = &b->jobs[i];
        if (!j->finished || j->stored) continue;
        j->stored = 1;
        if (!j->report || !b->col_names) {
            rt_err_set(&err, RT_ENOMEM, "report", "out of memory");
            fail_job(q, j->j.id, &err);
            continue;
        }
        if (!r || !of) {
            int stored = 0;
            if (store_job_finish(s->store, j->j.id, j->in.t.n_frames, cols, b->col_names, j->state, j->report,
                                 j->res.lm_iters, j->res.final_cost, j->part_seconds, j->part_clips, &stored,
                                 &err) != RT_OK)
                fail_job(q, j->j.id, &err);
            continue;
        }
        r[m] = (struct store_result_new){j->j.id, j->in.t.n_frames, cols, b->col_names, j->state, j->report,
                                         j->res.lm_iters, j->res.final_cost, j->part_seconds, j->part_clips, 0};
        of[m++] = j;
    }
    /* Commits of at most SCHED_STORE_BYTES (at least one result each): a
     * submission waiting for the store's writer waits for one of those, not
     * for a whole batch's results (30 MB for 120 windows of the G1). */
    for (int k0 = 0; k0 < m;) {
        size_t bytes = 0;
        int k1 = k0;
        while (k1 < m && (k1 == k0 || bytes < SCHED_STORE_BYTES)) {
            bytes += (size_t)r[k1].frames * (size_t)r[k1].columns * sizeof(float) + strlen(r[k1].report);
            k1++;
        }
        if (store_job_finish_many(s->store, r + k0, k1 - k0, &err) != RT_OK) {
            for (int k = k0; k < k1; k++) {
                rt_err_clear(&err);
                if (store_job_finish_many(s->store, &r[k], 1, &err) != RT_OK) fail_job(q, r[k].id, &err);
            }
        }
        k0 = k1;
    }
    for (int k = 0; k < m; k++)
        if (!r[k].stored && of[k])
            rt_log("info", "sched", "job", "job %lld was cancelled while running: result dropped", (long long)r[k].id);
    pthread_mutex_unlock(&b->store_mu);
    srv_metrics_stage(&s->metrics, SRV_STAGE_STORE, rt_now() - t0);
    free(r);
    free(of);
}

/* Drops one reference to `b` (the worker's, or a finishing task's); the
 * last stores what is finished and not stored yet and frees the batch. */
static void batch_ctx_release(struct batch_ctx *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
    store_batch(b);
    for (int i = 0; i < b->n; i++) {
        srv_job_input_free(&b->jobs[i].in);
        store_job_release(&b->jobs[i].j);
        cJSON_free(b->jobs[i].report);
    }
    for (int k = 0; k < b->n_blocks; k++) free(b->blocks[k]);
    free(b->blocks);
    free(b->jobs);
    free(b->idx);
    free(b->e);
    free(b->col_names);
    kin_robot_free(b->robot);
    pthread_mutex_destroy(&b->store_mu);
    struct sched *q = b->q;
    int b_solved = b->solved;
    free(b);
    if (!b_solved) return;
    pthread_mutex_lock(&q->mu);
    q->finishing--;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* On the pool: one solved job finished -- ground lift, quality and report
 * from one FK pass, the report formatted; the last of a call's stores them
 * (store_batch()). */
static void finish_job(void *arg)
{
    struct batch_job *b = arg;
    struct sched *q = b->ctx->q;
    struct srv *s = q->s;
    const struct kin_robot *robot = b->ctx->robot;
    cJSON *rep = NULL;
    double t0 = rt_now();
    struct rtg_report_info info = {
        .source = b->j.name,
        .robot = robot->name,
        .profile = b->in.profile[0] ? b->in.profile : NULL,
        .backend = solver_backend_name(&q->be),
        .mode = "trajectory",
        .threads = s->cfg.solver_threads,
        .batch_clips = b->part_clips,
    };
    if (rtg_job_finish(q->pool, robot, &b->in.t, b->state, 1, &info, &b->res, &rep, NULL) == RT_OK)
        b->report = cJSON_PrintUnformatted(rep);
    cJSON_Delete(rep);
    b->finished = 1;
    srv_metrics_stage(&s->metrics, SRV_STAGE_QUALITY, rt_now() - t0);
    /* The last of the finished jobs queued so far stores them all. */
    struct batch_ctx *bc = b->ctx;
    if (atomic_fetch_sub(&bc->unfinished, 1) == 1) store_batch(bc);
    batch_ctx_release(bc); /* may free b */
}

/* Solves jobs[idx[0..n)] (same weights and options) as one solver call and
 * queues each job's finishing on the host pool. */
static void solve_part(struct batch_ctx *bc, const int *idx, int n)
{
    struct sched *q = bc->q;
    struct srv *s = q->s;
    struct batch_job *jobs = bc->jobs;
    struct rt_err err;
    struct rtg_batch_item *items = calloc((size_t)n, sizeof *items);
    int64_t *ids = calloc((size_t)n, sizeof *ids);
    long long frames = 0;
    rt_err_clear(&err);
    if (!items || !ids) {
        rt_err_set(&err, RT_ENOMEM, "batch", "out of memory");
        for (int i = 0; i < n; i++) fail_job(q, jobs[idx[i]].j.id, &err);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        items[i].t = &jobs[idx[i]].in.t;
        ids[i] = jobs[idx[i]].j.id;
        frames += items[i].t->n_frames;
    }
    struct progress prog = {q, ids, n, 0};
    double t0 = rt_now();
    float *block = NULL;
    /* The first call of a batch was packed by its build (build_batch());
     * a later one, or one solved again alone, is packed here. */
    enum rt_status st = rtg_batch_packed(bc->ws, items, n)
                            ? RT_OK
                            : rtg_batch_pack(bc->ws, &q->be, bc->robot, items, n, &err);
    if (st == RT_OK)
        st = rtg_batch_solve_packed(bc->ws, &q->be, bc->robot, &jobs[idx[0]].in.opt, items, n, on_progress, &prog,
                                    &block, &err);
    double dt = rt_now() - t0;
    if (st == RT_OK) bc->blocks[bc->n_blocks++] = block; /* at most n calls solve: each job once */
    srv_metrics_worker(&s->metrics, SRV_WK_SOLVE, dt);
    if (st != RT_OK && n > 1) {
        /* One clip may have failed the call for all: each is solved again
         * alone, so that it fails by itself and its batch mates succeed
         * (with the bits they would have had in the batch: DESIGN.md "The
         * numerical contract"). */
        char line[300];
        rt_log("warn", "sched", "batch", "a solver call of %d clips failed (%s): solving each alone", n,
               rt_err_line(&err, line, sizeof line));
        for (int i = 0; i < n; i++) solve_part(bc, &idx[i], 1);
        goto done;
    }
    if (st != RT_OK) {
        fail_job(q, ids[0], &err);
        goto done;
    }
    srv_metrics_solved(&s->metrics, n, frames, dt);
    srv_metrics_stage(&s->metrics, SRV_STAGE_SOLVE, dt);
    /* The mark (mark_now()) is written by the progress thread: the worker
     * does not wait for the store's writer between its solves. */
    double t_mark = rt_now();
    mark_solved(q, ids, n);
    srv_metrics_worker(&s->metrics, SRV_WK_MARK, rt_now() - t_mark);
    for (int i = 0; i < n; i++) {
        struct batch_job *b = &jobs[idx[i]];
        b->state = items[i].state;
        b->res = items[i].res;
        b->part_clips = n;
        b->part_seconds = dt;
        atomic_fetch_add(&bc->unfinished, 1);
        atomic_fetch_add(&bc->refs, 1);
        rtg_pool_submit(q->pool, NULL, finish_job, b);
    }
    if (!s->cfg.quiet)
        rt_log("info", "sched", "batch", "%d clip(s) (%s), %lld frames solved in %.3f s on %s", n,
               store_source_str(jobs[idx[0]].j.source_kind), frames, dt, solver_backend_name(&q->be));
done:
    free(items);
    free(ids);
}

/* On the pool: job i of a batch built from its stored plan, or from the
 * submission's parsed plan where it was kept (server/plans.h). */
static void build_job(void *arg, int i)
{
    struct batch_ctx *bc = arg;
    struct batch_job *b = &bc->jobs[i];
    double t0 = rt_now();
    if (!b->ok) return;
    rt_err_clear(&b->err);
    /* The row again, with its source text unless the submission left its
     * parsed plan (server/plans.h): read here, in parallel with the batch's
     * other jobs, not one after another on the building thread. */
    int64_t id = b->j.id;
    struct rtg_job_plan plan;
    struct kin_robot *src = NULL;
    int planned = srv_plans_take(bc->q->s->plans, id, &plan, &src);
    store_job_release(&b->j);
    enum rt_status gs = store_job_get(bc->q->s->store, id, NULL, !planned, &b->j, &b->err);
    /* Queued, or running: claimed by this batch's build beside it (a job
     * is in one batch at a time); anything else was cancelled since. */
    if (gs != RT_OK || (b->j.state != STORE_QUEUED && b->j.state != STORE_RUNNING)) {
        if (gs == RT_OK) store_job_release(&b->j); /* cancelled since it was picked */
        if (gs == RT_OK || gs == RT_ENOTFOUND) rt_err_clear(&b->err); /* else build_batch() fails it */
        b->j.id = id;
        b->ok = 0;
    } else {
        if ((planned ? srv_job_build_planned(bc->q->pool, &b->j, bc->robot, &plan, &b->in, &b->err)
                     : srv_job_build(bc->q->s, bc->q->pool, &b->j, bc->robot, &b->in, &b->err)) != RT_OK)
            b->ok = 0;
        free(b->j.clip); /* the targets are built; the text is not needed */
        b->j.clip = NULL;
        srv_metrics_stage(&bc->q->s->metrics, SRV_STAGE_TARGETS, rt_now() - t0);
        srv_metrics_built(&bc->q->s->metrics, planned);
    }
    if (planned) {
        rtg_job_plan_free(&plan);
        kin_robot_free(src);
    }
}

/* A claim of some of a batch's jobs (queued -> running): want[i] says
 * which to ask for, got[i] which were claimed (a job cancelled meanwhile
 * is not), failed that the claim did not happen (out of memory, the
 * store's error). It reads only the batch's queue entries, so it may run
 * while the jobs are built. */
struct claim {
    struct batch_ctx *bc;
    int *want, *got;
    int failed;
};

static void claim_run(struct claim *c)
{
    struct batch_ctx *bc = c->bc;
    struct rt_err err;
    int n = bc->n, n_want = 0;
    int *claimed = calloc((size_t)n, sizeof *claimed);
    int64_t *ids = calloc((size_t)n, sizeof *ids);
    double t0 = rt_now();
    c->failed = c->failed || !claimed || !ids;
    for (int i = 0; !c->failed && i < n; i++)
        if (c->want[i]) ids[n_want++] = bc->e[i].id;
    rt_err_clear(&err);
    if (!c->failed && store_job_claim_many(bc->q->s->store, ids, n_want, claimed, &err) != RT_OK) {
        char line[RT_ERR_LINE_MAX];
        rt_log("warn", "sched", "batch", "claiming %d job(s) failed (%s): queued again", n_want,
               rt_err_line(&err, line, sizeof line));
        c->failed = 1;
    }
    for (int i = 0, k = 0; !c->failed && i < n; i++) c->got[i] = c->want[i] && claimed[k++];
    srv_metrics_build(&bc->q->s->metrics, SRV_BUILD_CLAIM, rt_now() - t0);
    free(claimed);
    free(ids);
}

/* The claim's outcome on the jobs: one not claimed is dropped; when the
 * claim failed, the jobs built go back in the queue (unclaimed, they are
 * still queued in the database) and none of `bc` is left to solve. */
static void claim_apply(struct claim *c)
{
    struct batch_ctx *bc = c->bc;
    struct sched *q = bc->q;
    struct batch_job *jobs = bc->jobs;
    bc->claimed = 1;
    if (c->failed) {
        pthread_mutex_lock(&q->mu);
        for (int i = 0; i < bc->n; i++)
            if (jobs[i].ok) add_locked(q, bc->e[i].id, bc->e[i].frames, bc->e[i].key, bc->e[i].alone);
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        for (int i = 0; i < bc->n; i++) jobs[i].ok = 0;
    } else {
        for (int i = 0; i < bc->n; i++)
            if (!c->got[i]) jobs[i].ok = 0;
    }
}

/* A claim's arrays for `bc` (want: the jobs whose rows were read), or
 * failed when out of memory; claim_free() releases them. */
static void claim_init(struct claim *c, struct batch_ctx *bc)
{
    c->bc = bc;
    c->want = calloc((size_t)bc->n, sizeof *c->want);
    c->got = calloc((size_t)bc->n, sizeof *c->got);
    c->failed = !c->want || !c->got;
    for (int i = 0; !c->failed && i < bc->n; i++) c->want[i] = bc->jobs[i].ok;
}

static void claim_free(struct claim *c)
{
    free(c->want);
    free(c->got);
}

/* Claims the built jobs of `bc` (the worker's, around a job retried
 * alone). */
static void claim_batch(struct batch_ctx *bc)
{
    struct claim c;
    claim_init(&c, bc);
    claim_run(&c);
    claim_apply(&c);
    claim_free(&c);
}

/* Item 0 the claim, item i > 0 job i - 1's build: the claim runs beside the
 * builds (its wait for the store's writer overlaps them). */
static void claim_or_build(void *ctx, int i)
{
    struct claim *c = ctx;
    if (i == 0) claim_run(c);
    else build_job(c->bc, i - 1);
}

/* The next part of `bc` to solve: the jobs not solved yet that share the
 * options and weights of the first of them (one solver call), their
 * indices into idx; returns how many (0: none left). With `take` they are
 * marked done. */
static int next_part(struct batch_ctx *bc, int *idx, int take)
{
    struct batch_job *jobs = bc->jobs;
    int m = 0;
    for (int i = 0; i < bc->n && !m; i++) {
        if (!jobs[i].ok || jobs[i].done) continue;
        for (int k = i; k < bc->n; k++)
            if (jobs[k].ok && !jobs[k].done && !memcmp(&jobs[k].in.opt, &jobs[i].in.opt, sizeof jobs[i].in.opt) &&
                rtg_targets_same_weights(bc->robot, &jobs[i].in.t, &jobs[k].in.t))
                idx[m++] = k;
    }
    for (int k = 0; take && k < m; k++) jobs[idx[k]].done = 1;
    return m;
}

/* Packs the first part of a built batch into its arrays (on the build's
 * thread, while the worker solves the batch before): solve_part() then
 * finds it packed. A failure only leaves it to solve_part(). */
static void pack_ahead(struct batch_ctx *bc)
{
    struct rtg_batch_item *items = NULL;
    struct rt_err err;
    int m = bc->robot ? next_part(bc, bc->idx, 0) : 0;
    if (!m || !(items = calloc((size_t)m, sizeof *items))) return;
    for (int k = 0; k < m; k++) items[k].t = &bc->jobs[bc->idx[k]].in.t;
    rt_err_clear(&err);
    (void)rtg_batch_pack(bc->ws, &bc->q->be, bc->robot, items, m, &err);
    free(items);
}

/* Reads and builds (in parallel on the host pool: each job's source text
 * and targets) the jobs of a batch: the worker builds the next batch this
 * way while it solves the one before. With `claim`, the build then claims
 * them (claim_batch()), so that the worker need not wait for the store's
 * writer before the solve; without, solve_batch() claims them (a job
 * cancelled meanwhile is dropped then). A job whose targets cannot be
 * built fails here. `e` (n malloc'd queue entries) is the batch's from the
 * call on. Returns the batch, which the caller releases -- or NULL when
 * out of memory (the jobs are put back in the queue). */
static struct batch_ctx *build_batch(struct sched *q, struct sched_entry *e, int n, int claim,
                                     struct rtg_batch_ws *ws)
{
    struct srv *s = q->s;
    struct rt_err err;
    struct batch_ctx *bc = calloc(1, sizeof *bc);
    struct batch_job *jobs = calloc((size_t)n, sizeof *jobs);
    int *idx = calloc((size_t)n, sizeof *idx);
    float **blocks = calloc((size_t)n, sizeof *blocks);
    double t0 = rt_now(), t1;
    char robot_name[STORE_MAX_NAME + 1] = "";
    if (!bc || !jobs || !idx || !blocks) {
        /* Put them back: the jobs are still queued in the database. */
        pthread_mutex_lock(&q->mu);
        for (int i = 0; i < n; i++) add_locked(q, e[i].id, e[i].frames, e[i].key, e[i].alone);
        pthread_mutex_unlock(&q->mu);
        free(bc);
        free(jobs);
        free(idx);
        free(blocks);
        free(e);
        return NULL;
    }
    bc->q = q;
    bc->jobs = jobs;
    bc->idx = idx;
    bc->blocks = blocks;
    bc->ws = ws;
    bc->n = n;
    atomic_init(&bc->refs, 1);
    bc->e = e;
    pthread_mutex_init(&bc->store_mu, NULL);
    for (int i = 0; i < n; i++) {
        jobs[i].ctx = bc;
        rt_err_clear(&err);
        if (store_job_get(s->store, e[i].id, NULL, 0, &jobs[i].j, &err) != RT_OK) { /* the text: build_job() */
            if (err.code != RT_ENOTFOUND) fail_job(q, e[i].id, &err);
            continue;
        }
        if (jobs[i].j.state != STORE_QUEUED) { /* cancelled since it was queued */
            store_job_release(&jobs[i].j);
            continue;
        }
        if (!bc->robot) {
            if (srv_robot_load(s, jobs[i].j.robot, &bc->robot, &err) != RT_OK) {
                fail_job(q, e[i].id, &err);
                store_job_release(&jobs[i].j);
                continue;
            }
            snprintf(robot_name, sizeof robot_name, "%s", jobs[i].j.robot);
            bc->col_names = rtg_columns_json(bc->robot);
        }
        if (strcmp(jobs[i].j.robot, robot_name)) {
            rt_err_set(&err, RT_ESTATE, "batch", "robot differs within a batch");
            fail_job(q, e[i].id, &err);
            store_job_release(&jobs[i].j);
            continue;
        }
        jobs[i].ok = 1;
    }
    t1 = rt_now();
    srv_metrics_build(&s->metrics, SRV_BUILD_ROWS, t1 - t0);
    struct claim c;
    if (claim) {
        /* The claim beside the builds (claim_or_build: item 0). */
        claim_init(&c, bc);
        rtg_pool_for(q->pool, n + 1, claim_or_build, &c);
    } else {
        rtg_pool_for(q->pool, n, build_job, bc);
    }
    for (int i = 0; i < n; i++)
        if (!jobs[i].ok && jobs[i].err.code != RT_OK) fail_job(q, jobs[i].j.id, &jobs[i].err);
    t0 = rt_now();
    srv_metrics_build(&s->metrics, SRV_BUILD_TARGETS, t0 - t1);
    if (claim) {
        claim_apply(&c);
        claim_free(&c);
        pack_ahead(bc); /* claimed: the jobs it packs are the ones solved */
        srv_metrics_build(&s->metrics, SRV_BUILD_PACK, rt_now() - t0);
    }
    return bc;
}

/* Claims the built jobs of `bc` unless its build did (claim_batch()),
 * splits them by identical options and weights and solves each part; their
 * finishing is left queued. */
static void solve_batch(struct batch_ctx *bc)
{
    struct sched *q = bc->q;
    if (!bc->claimed) {
        double t_claim = rt_now();
        claim_batch(bc);
        srv_metrics_worker(&q->s->metrics, SRV_WK_CLAIM, rt_now() - t_claim);
    }
    for (int m; (m = next_part(bc, bc->idx, 1)) > 0;) solve_part(bc, bc->idx, m);
}

/* A batch built on the pool while the worker solves the one before. */
struct build_req {
    struct sched *q;
    struct sched_entry *e; /* a copy of the picked entries, build_batch()'s from then on */
    int n;
    int claim;             /* build_batch()'s */
    struct rtg_batch_ws *ws; /* build_batch()'s */
    struct batch_ctx *bc;  /* out */
};

static void build_req_run(void *arg)
{
    struct build_req *r = arg;
    r->bc = build_batch(r->q, r->e, r->n, r->claim, r->ws);
}

/* The worker: picks a ready group, builds it, and solves it while the next
 * ready group is built on the pool; the finishing of each batch runs on the
 * pool while the next is solved. */
static void *worker_main(void *arg)
{
    struct sched *q = arg;
    struct sched_entry *batch = NULL;
    struct batch_ctx *cur = NULL; /* built, to solve */
    int batch_cap = 0, worked = 0;
    pthread_mutex_lock(&q->mu);
    while (!q->stop || cur) {
        double wait_s = -1;
        if (batch_cap < q->n) {
            struct sched_entry *b = realloc(batch, (size_t)q->n * sizeof *b);
            if (b) {
                batch = b;
                batch_cap = q->n;
            }
        }
        int n = !q->stop && batch_cap >= q->n ? pick_locked(q, batch, &wait_s) : 0;
        /* The build claims its jobs, off the worker's thread. A claim counts
         * an attempt, so a crash in the solve beside it counts against the
         * jobs claimed too (docs/api.md "Crash recovery"); so none is
         * claimed that way beside a job retried alone (load_queued()), which
         * may be the clip that crashes, nor for one: the worker claims those. */
        int claim = n && !batch[0].alone && !(cur && cur->e[0].alone);
        struct build_req req = {q, NULL, n, claim, &q->ws[q->ws_next], NULL};
        struct rtg_pool_group gb = {0};
        if (n && !(req.e = malloc((size_t)n * sizeof *req.e))) {
            for (int i = 0; i < n; i++) add_locked(q, batch[i].id, batch[i].frames, batch[i].key, batch[i].alone);
            n = 0;
            wait_s = 0.1; /* out of memory: retry */
        }
        if (n || cur) {
            pthread_mutex_unlock(&q->mu);
            if (n) {
                memcpy(req.e, batch, (size_t)n * sizeof *req.e);
                q->ws_next ^= 1; /* cur solves from the other set */
                rtg_pool_submit_first(q->pool, &gb, build_req_run, &req);
            }
            if (cur) {
                /* Finishing runs behind the solves on the pool, at most
                 * SCHED_FINISHING_BATCHES batches behind. */
                double t_fin = rt_now();
                pthread_mutex_lock(&q->mu);
                while (q->finishing > SCHED_FINISHING_BATCHES) pthread_cond_wait(&q->cv, &q->mu);
                pthread_mutex_unlock(&q->mu);
                srv_metrics_worker(&q->s->metrics, SRV_WK_FINISH, rt_now() - t_fin);
                solve_batch(cur);
                pthread_mutex_lock(&q->mu);
                q->finishing++;
                cur->solved = 1;
                pthread_mutex_unlock(&q->mu);
                batch_ctx_release(cur); /* its finishing tasks hold it now */
                cur = NULL;
                worked = 1;
            }
            if (n) {
                double t_build = rt_now();
                rtg_pool_wait(q->pool, &gb);
                srv_metrics_worker(&q->s->metrics, SRV_WK_BUILD, rt_now() - t_build);
                cur = req.bc;
            }
            pthread_mutex_lock(&q->mu);
            continue;
        }
        if (worked) {
            /* Nothing to solve: give the batch arrays back while idle. */
            worked = 0;
            pthread_mutex_unlock(&q->mu);
            rtg_batch_ws_free(&q->ws[0]);
            rtg_batch_ws_free(&q->ws[1]);
            pthread_mutex_lock(&q->mu);
            continue;
        }
        if (q->stop) break;
        if (wait_s < 0 && q->n && batch_cap < q->n) wait_s = 0.1; /* out of memory: retry */
        double t_idle = rt_now();
        if (wait_s < 0) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            double t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + wait_s + 1e-4;
            ts.tv_sec = (time_t)t;
            ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
            pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        }
        srv_metrics_worker(&q->s->metrics, SRV_WK_IDLE, rt_now() - t_idle);
    }
    pthread_mutex_unlock(&q->mu);
    free(batch);
    return NULL;
}

/* The start-up load. A job a crash interrupted (attempts > 0) comes back
 * alone: a class key of its own, "KEY|alone:ID", so that a clip that
 * brings the daemon down is retried by itself -- it alone reaches
 * STORE_MAX_ATTEMPTS and fails (store_job_requeue_running) while its old
 * batch mates run and succeed without it. It waits for no company
 * (--batch-wait-ms): none can join it. */
static void load_queued(void *user, int64_t id, int frames, int attempts, const char *class_key)
{
    char key[sizeof ((struct sched_entry *)0)->key];
    if (attempts > 0) {
        snprintf(key, sizeof key, "%.200s|alone:%lld", class_key, (long long)id);
        class_key = key;
    }
    add_locked(user, id, frames, class_key, attempts > 0);
}

enum rt_status sched_start(struct srv *s, struct sched **out, struct rt_err *err)
{
    enum rt_status st;
    struct sched *q = calloc(1, sizeof *q);
    *out = NULL;
    if (!q) return rt_err_set(err, RT_ENOMEM, "sched", "out of memory");
    q->s = s;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    pthread_mutex_init(&q->pmu, NULL);
    pthread_cond_init(&q->pcv, NULL);
    if (pthread_create(&q->p_thread, NULL, progress_main, q)) {
        st = rt_err_set(err, RT_ENOMEM, "sched", "cannot start the progress thread");
        goto fail;
    }
    q->p_started = 1;
    if ((st = rtg_backend_init(&q->be, s->cfg.backend, s->cfg.solver_threads, err)) != RT_OK) goto fail;
    /* Building and finishing jobs give way to the request handlers and the
     * validation threads (health, polls and submissions stay fast while a
     * corpus is solved): nice SCHED_HOST_NICE. */
    if ((st = rtg_pool_create_nice(s->cfg.host_threads, SCHED_HOST_NICE, &q->pool, err)) != RT_OK) goto fail;
    /* The batch arrays are filled by threads of their own, at the worker's
     * priority: the host pool is busy finishing the batch before, and a
     * copy waiting for its threads would hold the solver (a part packed by
     * the worker itself) or the next batch's build. */
    if ((st = rtg_pool_create(SCHED_COPY_THREADS, &q->copy_pool, err)) != RT_OK) goto fail;
    for (int k = 0; k < 2; k++) q->ws[k] = (struct rtg_batch_ws){.pool = q->copy_pool, .pinned = 1, .block_ahead = 1};
    if ((st = store_job_each_queued(s->store, load_queued, q, err)) != RT_OK) goto fail;
    if (q->n && !s->cfg.quiet) rt_log("info", "sched", "start", "%d queued job(s) from the database", q->n);
    if (pthread_create(&q->worker, NULL, worker_main, q)) {
        st = rt_err_set(err, RT_ENOMEM, "sched", "cannot start the worker thread");
        goto fail;
    }
    q->started = 1;
    *out = q;
    return RT_OK;
fail:
    sched_stop(q);
    return st;
}

void sched_stop(struct sched *q)
{
    if (!q) return;
    if (q->started) {
        pthread_mutex_lock(&q->mu);
        q->stop = 1;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->worker, NULL);
    }
    if (q->p_started) {
        pthread_mutex_lock(&q->pmu);
        q->p_stop = 1;
        pthread_cond_signal(&q->pcv);
        pthread_mutex_unlock(&q->pmu);
        pthread_join(q->p_thread, NULL);
    }
    free(q->p_ids);
    free(q->m_ids);
    pthread_cond_destroy(&q->pcv);
    pthread_mutex_destroy(&q->pmu);
    rtg_pool_free(q->pool);
    rtg_pool_free(q->copy_pool);
    rtg_batch_ws_free(&q->ws[0]);
    rtg_batch_ws_free(&q->ws[1]);
    solver_backend_free(&q->be);
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
    free(q->q);
    free(q);
}
