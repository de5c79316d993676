/* metrics.c -- GET /v1/metrics in the Prometheus text format: jobs by state
 * (from the store), frames and clips solved, batches, solve seconds, HTTP
 * requests by status code. Counters live in struct srv_metrics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

enum MHD_Result srv_route_metrics(struct srv *s, struct MHD_Connection *c)
{
    long long counts[STORE_N_STATES];
    struct rt_err err;
    char *text = NULL;
    size_t len = 0;
    if (store_job_counts(s->store, counts, &err) != RT_OK) return srv_reply_err(s, c, &err);
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        rt_err_set(&err, RT_ENOMEM, "metrics", "out of memory");
        return srv_reply_err(s, c, &err);
    }
    fputs("# HELP retargetd_jobs Jobs in the database by state.\n# TYPE retargetd_jobs gauge\n", f);
    for (int i = 0; i < STORE_N_STATES; i++)
        fprintf(f, "retargetd_jobs{state=\"%s\"} %lld\n", store_state_str(i), counts[i]);
    fprintf(f, "# HELP retargetd_scheduler_queued Jobs waiting in the scheduler.\n"
               "# TYPE retargetd_scheduler_queued gauge\nretargetd_scheduler_queued %d\n",
            sched_queued(s->sched));
    pthread_mutex_lock(&s->metrics.mu);
    fprintf(f,
            "# HELP retargetd_frames_solved_total Frames solved (succeeded or not stored).\n"
            "# TYPE retargetd_frames_solved_total counter\nretargetd_frames_solved_total %llu\n"
            "# HELP retargetd_clips_solved_total Clips solved.\n"
            "# TYPE retargetd_clips_solved_total counter\nretargetd_clips_solved_total %llu\n"
            "# HELP retargetd_batches_total Solver batches run.\n"
            "# TYPE retargetd_batches_total counter\nretargetd_batches_total %llu\n"
            "# HELP retargetd_solve_seconds_total Wall seconds spent in solver batches.\n"
            "# TYPE retargetd_solve_seconds_total counter\nretargetd_solve_seconds_total %.6f\n"
            "# HELP retargetd_http_requests_total HTTP requests by status code.\n"
            "# TYPE retargetd_http_requests_total counter\n",
            s->metrics.frames_solved, s->metrics.clips_solved, s->metrics.batches,
            s->metrics.solve_seconds);
    for (int code = 100; code < 600; code++)
        if (s->metrics.http[code])
            fprintf(f, "retargetd_http_requests_total{code=\"%d\"} %llu\n", code, s->metrics.http[code]);
    pthread_mutex_unlock(&s->metrics.mu);
    if (fclose(f) || !text) {
        free(text);
        rt_err_set(&err, RT_ENOMEM, "metrics", "out of memory");
        return srv_reply_err(s, c, &err);
    }
    return srv_reply(s, c, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len);
}
