/* metrics.c -- GET /v1/metrics in the Prometheus text format: jobs by state
 * (from the store), frames and clips solved, batches, solve seconds, HTTP
 * requests by status code, a histogram of each part of a submission's
 * time. Counters live in struct srv_metrics, inside struct srv;
 * server/http.c serves the text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../storage/store.h"
#include "metrics.h"

void srv_metrics_init(struct srv_metrics *m)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
}

void srv_metrics_free(struct srv_metrics *m) { pthread_mutex_destroy(&m->mu); }

void srv_metrics_http(struct srv_metrics *m, unsigned int code)
{
    pthread_mutex_lock(&m->mu);
    if (code < 600) m->http[code]++;
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_solved(struct srv_metrics *m, int clips, long long frames, double seconds)
{
    pthread_mutex_lock(&m->mu);
    m->batches++;
    m->clips_solved += (unsigned long long)clips;
    m->frames_solved += (unsigned long long)frames;
    m->solve_seconds += seconds;
    pthread_mutex_unlock(&m->mu);
}

/* sums[k] += seconds for k in [0, n) and seconds a duration (not negative,
 * not NaN); anything else is dropped. */
static void add_seconds(struct srv_metrics *m, double *sums, int n, int k, double seconds)
{
    if (k < 0 || k >= n || !(seconds >= 0)) return;
    pthread_mutex_lock(&m->mu);
    sums[k] += seconds;
    pthread_mutex_unlock(&m->mu);
}

void srv_metrics_stage(struct srv_metrics *m, int stage, double seconds)
{
    add_seconds(m, m->stage_seconds, SRV_STAGE_COUNT, stage, seconds);
}

void srv_metrics_worker(struct srv_metrics *m, int part, double seconds)
{
    add_seconds(m, m->worker_seconds, SRV_WK_COUNT, part, seconds);
}

void srv_metrics_build(struct srv_metrics *m, int part, double seconds)
{
    add_seconds(m, m->build_seconds, SRV_BUILD_COUNT, part, seconds);
}

void srv_metrics_built(struct srv_metrics *m, int kept)
{
    pthread_mutex_lock(&m->mu);
    m->builds[kept ? 0 : 1]++;
    pthread_mutex_unlock(&m->mu);
}

static const double sub_bounds[SRV_SUB_BUCKETS] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                   0.1,   0.2,   0.5,   1.0,  2.0,  5.0};
static const char *const sub_names[SRV_SUB_COUNT] = {"body",          "queue",        "prepare",     "plan",
                                                     "insert",        "insert_pack",  "insert_group", "insert_lock",
                                                     "insert_write",  "insert_commit", "insert_more", "reply",     "resume"};

void srv_metrics_submit(struct srv_metrics *m, int part, double seconds)
{
    if (part < 0 || part >= SRV_SUB_COUNT || !(seconds >= 0)) return;
    int k = 0;
    while (k < SRV_SUB_BUCKETS && seconds > sub_bounds[k]) k++;
    pthread_mutex_lock(&m->mu);
    m->sub_count[part][k]++;
    m->sub_sum[part] += seconds;
    pthread_mutex_unlock(&m->mu);
}

enum rt_status srv_metrics_text(struct srv_metrics *m, struct store *store, int queued, char **out,
                                size_t *out_len, struct rt_err *err)
{
    long long counts[STORE_N_STATES];
    char *text = NULL;
    size_t len = 0;
    enum rt_status st;
    *out = NULL;
    *out_len = 0;
    if ((st = store_job_counts(store, counts, err)) != RT_OK) return st;
    FILE *f = open_memstream(&text, &len);
    if (!f) return rt_err_set(err, RT_ENOMEM, "metrics", "out of memory");
    fputs("# HELP retargetd_jobs Jobs in the database by state.\n# TYPE retargetd_jobs gauge\n", f);
    for (int i = 0; i < STORE_N_STATES; i++)
        fprintf(f, "retargetd_jobs{state=\"%s\"} %lld\n", store_state_str(i), counts[i]);
    fprintf(f, "# HELP retargetd_scheduler_queued Jobs waiting in the scheduler.\n"
               "# TYPE retargetd_scheduler_queued gauge\nretargetd_scheduler_queued %d\n",
            queued);
    pthread_mutex_lock(&m->mu);
    fprintf(f,
            "# HELP retargetd_frames_solved_total Frames solved (succeeded or not stored).\n"
            "# TYPE retargetd_frames_solved_total counter\nretargetd_frames_solved_total %llu\n"
            "# HELP retargetd_clips_solved_total Clips solved.\n"
            "# TYPE retargetd_clips_solved_total counter\nretargetd_clips_solved_total %llu\n"
            "# HELP retargetd_batches_total Solver batches run.\n"
            "# TYPE retargetd_batches_total counter\nretargetd_batches_total %llu\n"
            "# HELP retargetd_solve_seconds_total Wall seconds spent in solver batches.\n"
            "# TYPE retargetd_solve_seconds_total counter\nretargetd_solve_seconds_total %.6f\n"
            "# HELP retargetd_stage_seconds_total Host seconds per job stage, summed over threads.\n"
            "# TYPE retargetd_stage_seconds_total counter\n"
            "retargetd_stage_seconds_total{stage=\"plan\"} %.6f\n"
            "retargetd_stage_seconds_total{stage=\"targets\"} %.6f\n"
            "retargetd_stage_seconds_total{stage=\"solve\"} %.6f\n"
            "retargetd_stage_seconds_total{stage=\"quality\"} %.6f\n"
            "retargetd_stage_seconds_total{stage=\"store\"} %.6f\n"
            "retargetd_stage_seconds_total{stage=\"format\"} %.6f\n",
            m->frames_solved, m->clips_solved, m->batches, m->solve_seconds, m->stage_seconds[SRV_STAGE_PLAN],
            m->stage_seconds[SRV_STAGE_TARGETS], m->stage_seconds[SRV_STAGE_SOLVE], m->stage_seconds[SRV_STAGE_QUALITY],
            m->stage_seconds[SRV_STAGE_STORE], m->stage_seconds[SRV_STAGE_FORMAT]);
    fprintf(f,
            "# HELP retargetd_worker_seconds_total Wall seconds of the solver worker by what it did or waited on.\n"
            "# TYPE retargetd_worker_seconds_total counter\n"
            "retargetd_worker_seconds_total{part=\"idle\"} %.6f\n"
            "retargetd_worker_seconds_total{part=\"build\"} %.6f\n"
            "retargetd_worker_seconds_total{part=\"finish\"} %.6f\n"
            "retargetd_worker_seconds_total{part=\"claim\"} %.6f\n"
            "retargetd_worker_seconds_total{part=\"solve\"} %.6f\n"
            "retargetd_worker_seconds_total{part=\"mark\"} %.6f\n",
            m->worker_seconds[SRV_WK_IDLE], m->worker_seconds[SRV_WK_BUILD], m->worker_seconds[SRV_WK_FINISH],
            m->worker_seconds[SRV_WK_CLAIM], m->worker_seconds[SRV_WK_SOLVE], m->worker_seconds[SRV_WK_MARK]);
    fprintf(f,
            "# HELP retargetd_build_seconds_total Wall seconds of the batches' builds by part.\n"
            "# TYPE retargetd_build_seconds_total counter\n"
            "retargetd_build_seconds_total{part=\"rows\"} %.6f\n"
            "retargetd_build_seconds_total{part=\"targets\"} %.6f\n"
            "retargetd_build_seconds_total{part=\"claim\"} %.6f\n"
            "retargetd_build_seconds_total{part=\"pack\"} %.6f\n",
            m->build_seconds[SRV_BUILD_ROWS], m->build_seconds[SRV_BUILD_TARGETS], m->build_seconds[SRV_BUILD_CLAIM],
            m->build_seconds[SRV_BUILD_PACK]);
    fprintf(f,
            "# HELP retargetd_builds_total Jobs built for the solver, by where their parsed source came from.\n"
            "# TYPE retargetd_builds_total counter\n"
            "retargetd_builds_total{from=\"submission\"} %llu\n"
            "retargetd_builds_total{from=\"store\"} %llu\n",
            m->builds[0], m->builds[1]);
    fputs("# HELP retargetd_http_requests_total HTTP requests by status code.\n"
          "# TYPE retargetd_http_requests_total counter\n", f);
    for (int code = 100; code < 600; code++)
        if (m->http[code])
            fprintf(f, "retargetd_http_requests_total{code=\"%d\"} %llu\n", code, m->http[code]);
    fputs("# HELP retargetd_submit_seconds Where the time of a submission (POST /v1/jobs) goes, by part.\n"
          "# TYPE retargetd_submit_seconds histogram\n", f);
    for (int p = 0; p < SRV_SUB_COUNT; p++) {
        unsigned long long cum = 0;
        for (int k = 0; k <= SRV_SUB_BUCKETS; k++) {
            cum += m->sub_count[p][k];
            if (k < SRV_SUB_BUCKETS)
                fprintf(f, "retargetd_submit_seconds_bucket{part=\"%s\",le=\"%g\"} %llu\n", sub_names[p],
                        sub_bounds[k], cum);
            else
                fprintf(f, "retargetd_submit_seconds_bucket{part=\"%s\",le=\"+Inf\"} %llu\n", sub_names[p], cum);
        }
        fprintf(f, "retargetd_submit_seconds_sum{part=\"%s\"} %.6f\nretargetd_submit_seconds_count{part=\"%s\"} %llu\n",
                sub_names[p], m->sub_sum[p], sub_names[p], cum);
    }
    pthread_mutex_unlock(&m->mu);
    if (fclose(f) || !text) {
        free(text);
        return rt_err_set(err, RT_ENOMEM, "metrics", "out of memory");
    }
    *out = text;
    *out_len = len;
    return RT_OK;
}
