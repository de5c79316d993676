/* http.c -- retargetd's HTTP front: the per-request state in *req_cls,
 * limits checked before a body is read, and routing to the route modules
 * (health here, metrics through metrics.h, robots and profiles to
 * assets.c, jobs to jobs.c, the web page at / and /ui/ to ui.c; token and
 * openapi.json here too).
 *
 * Request life (libmicrohttpd's largepost.c pattern): MHD's URI log
 * callback, called when the request line has arrived, allocates struct
 * srv_req and starts the request's clock. The first call of the access
 * handler (the headers have arrived) refuses early -- a URL with %00, a
 * repeated Content-Length, Transfer-Encoding other than chunked or beside
 * Content-Length, unknown route, wrong method, missing or bad token, a
 * non-admin upload, a Content-Length over max_body, a request past its
 * deadline -- before a byte of body is read. Later calls append the body
 * (a body that outgrows max_body without a Content-Length is discarded and
 * answered 413 at the end). The final call dispatches.
 * MHD_OPTION_NOTIFY_COMPLETED frees the state.
 *
 * Deadlines: a request must arrive whole within --request-timeout seconds
 * of its request line. MHD's own timeout (--idle-timeout) is inactivity;
 * for a request with a body the connection's timeout is lowered to what
 * is left of the deadline (when that is shorter), so that a client that
 * stalls (after a chunk size of ffffffffffffffff, say) is cut off at the
 * deadline at the latest, and each
 * piece of body that arrives late ends the connection at once. MHD lets a
 * reply be queued only before the body is read or after all of it, so a
 * deadline passed in the middle of a body closes the connection without
 * one (logged), and a deadline passed before or after the body is a 408.
 *
 * Submissions (POST /v1/jobs) are planned off the HTTP threads: the final
 * call suspends the connection (MHD_suspend_connection) and hands the
 * request to the validation pool (pool.h, --plan-threads); the pool thread
 * runs srv_jobs_submit(), which makes the reply without touching the
 * connection, and resumes it; MHD then calls the access handler once more
 * and the reply is queued. A large clip being parsed therefore never holds
 * an HTTP thread, and /v1/health and status polls stay fast. Results
 * (GET .../result, result.csv, result.npz), whose formatting takes
 * milliseconds for a long clip, go the same way. A full queue
 * (--plan-queue) is 503 with Retry-After.
 *
 * struct srv_req is defined in state.h, not here: auth.c and the route
 * modules, which are below this file, fill and read it and must not
 * include http.h. daemon.c's opening comment gives the order of the
 * server's modules and why. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../kinematics/embed.h"
#include "../base/clock.h"
#include "../storage/store.h"
#include "assets.h"
#include "auth.h"
#include "http.h"
#include "jobs.h"
#include "metrics.h"
#include "parse.h"
#include "pool.h"
#include "reply.h"
#include "sched.h"
#include "state.h"
#include "ui.h"

/* $(B)/gen/srv_openapi.c: server/openapi.json, one entry. */
extern const struct kin_embedded srv_openapi[];

/* The Allow header of a route (what method_ok() accepts). */
static const char *route_allow(int route)
{
    switch (route) {
    case SRV_R_ROBOT:
    case SRV_R_PROFILE: return "GET, HEAD, PUT";
    case SRV_R_JOBS: return "GET, HEAD, POST";
    case SRV_R_JOB: return "GET, HEAD, DELETE";
    default: return "GET, HEAD";
    }
}

/* Methods each route takes, and whether it reads a body. */
static int method_ok(int route, const char *m, int *has_body, int *admin_only)
{
    int get = !strcmp(m, "GET") || !strcmp(m, "HEAD");
    *has_body = 0;
    *admin_only = 0;
    switch (route) {
    case SRV_R_HEALTH:
    case SRV_R_METRICS:
    case SRV_R_ROBOTS:
    case SRV_R_PROFILES:
    case SRV_R_RESULT:
    case SRV_R_RESULT_CSV:
    case SRV_R_RESULT_NPZ:
    case SRV_R_SOURCE:
    case SRV_R_ROBOT_URDF:
    case SRV_R_UI:
    case SRV_R_TOKEN:
    case SRV_R_OPENAPI: return get;
    case SRV_R_ROBOT:
    case SRV_R_PROFILE:
        if (!strcmp(m, "PUT")) return *has_body = *admin_only = 1;
        return get;
    case SRV_R_JOBS:
        if (!strcmp(m, "POST")) return *has_body = 1;
        return get;
    case SRV_R_JOB: return get || !strcmp(m, "DELETE");
    default: return 0;
    }
}

/* GET /v1/metrics: the text of srv_metrics_text(), with the scheduler's
 * queue length (a 503 when out of memory). */
static enum MHD_Result route_metrics(struct srv *s, struct MHD_Connection *c)
{
    struct rt_err err;
    char *text = NULL;
    size_t len = 0;
    if (srv_metrics_text(&s->metrics, s->store, sched_queued(s->sched), &text, &len, &err) != RT_OK)
        return srv_reply_err(s, c, &err);
    return srv_reply(s, c, MHD_HTTP_OK, "text/plain; version=0.0.4", text, len);
}

static enum MHD_Result dispatch(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                const char *url, const char *method)
{
    switch (r->route) {
    case SRV_R_UI: return srv_route_ui(s, c, url);
    case SRV_R_HEALTH: {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "status", "ok");
        cJSON_AddStringToObject(j, "backend", sched_backend(s->sched));
        cJSON_AddNumberToObject(j, "queued", sched_queued(s->sched));
        cJSON_AddNumberToObject(j, "schema", store_version(s->store));
        cJSON_AddBoolToObject(j, "auth", !s->cfg.no_auth);
        return srv_reply_json(s, c, MHD_HTTP_OK, j);
    }
    case SRV_R_METRICS: return route_metrics(s, c);
    case SRV_R_OPENAPI: {
        /* The OpenAPI 3.1 description of /v1 (tests/test_openapi.sh checks
         * real replies against it). */
        const struct kin_embedded *e = &srv_openapi[0];
        char *text = e->name ? malloc(e->len + 1) : NULL;
        if (!text) {
            struct rt_err err;
            rt_err_set(&err, RT_ENOMEM, "openapi", "out of memory");
            return srv_reply_err(s, c, &err);
        }
        memcpy(text, e->text, e->len + 1);
        return srv_reply(s, c, MHD_HTTP_OK, "application/json", text, e->len);
    }
    case SRV_R_TOKEN: {
        /* Who the token is: what the web page shows, and whether it offers
         * the admin's uploads. */
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", r->owner);
        cJSON_AddBoolToObject(j, "admin", r->admin);
        cJSON_AddBoolToObject(j, "auth", !s->cfg.no_auth);
        return srv_reply_json(s, c, MHD_HTTP_OK, j);
    }
    case SRV_R_ROBOTS:
    case SRV_R_ROBOT:
    case SRV_R_ROBOT_URDF: return srv_route_robots(s, c, r, method);
    case SRV_R_PROFILES:
    case SRV_R_PROFILE: return srv_route_profiles(s, c, r, method);
    default: return srv_route_jobs(s, c, r, method);
    }
}

void *srv_http_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct srv *s = cls;
    struct srv_req *r = calloc(1, sizeof *r);
    (void)c;
    if (!r) return NULL; /* the access handler tries again */
    r->t_start = rt_now();
    r->counted = 1;
    atomic_fetch_add(&s->in_flight, 1);
    /* MHD decodes %00 into a NUL that ends the URL it passes on
     * ("/v1/robots/g1%00junk" would read as "/v1/robots/g1"): only the raw
     * URL shows it. */
    r->nul_in_url = uri && strstr(uri, "%00") != NULL;
    return r;
}

/* Headers whose count or combination matters (RFC 9112 6.3: a request
 * with Content-Length given twice, or with Transfer-Encoding and
 * Content-Length both, is to be refused: it is how requests are
 * smuggled past proxies). */
struct hdr_counts {
    int content_length, transfer_encoding, idem_key;
    const char *te;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct hdr_counts *h = cls;
    (void)kind;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) h->content_length++;
    else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) h->transfer_encoding++, h->te = value;
    else if (!strcasecmp(key, "Idempotency-Key")) h->idem_key++;
    return MHD_YES;
}

/* Copies the query parameters into r->query (one buffer, r->query_buf). */
struct query_copy {
    struct srv_req *r;
    size_t need, used;
};

static enum MHD_Result copy_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct query_copy *q = cls;
    struct srv_query *dst = &q->r->query;
    size_t kl = strlen(key), vl = value ? strlen(value) : 0;
    (void)kind;
    if (!q->r->query_buf) { /* the sizing pass */
        q->need += kl + vl + 2;
        return MHD_YES;
    }
    if (dst->n == SRV_QUERY_MAX) {
        dst->overflow = 1;
        return MHD_YES;
    }
    char *k = q->r->query_buf + q->used;
    memcpy(k, key, kl + 1);
    char *v = k + kl + 1;
    memcpy(v, value ? value : "", vl + 1);
    q->used += kl + vl + 2;
    dst->key[dst->n] = k;
    dst->val[dst->n++] = v;
    return MHD_YES;
}

static int copy_query(struct MHD_Connection *c, struct srv_req *r)
{
    struct query_copy q = {r, 0, 0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
    if (!q.need) return 0;
    if (!(r->query_buf = malloc(q.need))) return -1;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, &q);
    return 0;
}

/* A GET route's query parameters: none given twice. */
static const char *query_repeated(const struct srv_query *q)
{
    for (int i = 0; i < q->n; i++)
        for (int k = 0; k < i; k++)
            if (!strcmp(q->key[i], q->key[k])) return q->key[i];
    return NULL;
}

/* The request's deadline passed (--request-timeout). */
static int past_deadline(const struct srv *s, const struct srv_req *r)
{
    return s->cfg.request_timeout_s > 0 && rt_now() - r->t_start > (double)s->cfg.request_timeout_s;
}

static enum MHD_Result reply_timeout(struct srv *s, struct MHD_Connection *c, const struct srv_req *r)
{
    char msg[128];
    snprintf(msg, sizeof msg, "the request took %.0f s to arrive: the limit is %u s (--request-timeout)",
             rt_now() - r->t_start, s->cfg.request_timeout_s);
    return srv_reply_err_http(s, c, MHD_HTTP_REQUEST_TIMEOUT, "request timeout", "request", msg);
}

/* The checks of the first call, before any body is read; a reply queued
 * here refuses the body. */
static enum MHD_Result first_call(struct srv *s, struct MHD_Connection *c, struct srv_req *r, const char *url,
                                  const char *method)
{
    int has_body, admin_only;
    struct hdr_counts h = {0, 0, 0, NULL};
    char msg[RT_ERR_MSG_MAX];
    r->started = 1;
    r->conn = c;
    if (r->t_start <= 0) r->t_start = rt_now();
    if (r->nul_in_url)
        return srv_reply_err_http(s, c, MHD_HTTP_BAD_REQUEST, rt_status_str(RT_EINVAL), "url",
                                  "the URL holds %00 (a NUL byte), which no name or parameter may contain");
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &h);
    if (h.content_length > 1) {
        snprintf(msg, sizeof msg, "given %d times: one Content-Length or none", h.content_length);
        return srv_reply_err_http(s, c, MHD_HTTP_BAD_REQUEST, rt_status_str(RT_EINVAL), "Content-Length", msg);
    }
    if (h.transfer_encoding && (h.content_length || h.transfer_encoding > 1 || !h.te || strcasecmp(h.te, "chunked")))
        return srv_reply_err_http(s, c, MHD_HTTP_BAD_REQUEST, rt_status_str(RT_EINVAL), "Transfer-Encoding",
                                  h.content_length ? "given with Content-Length: one of the two"
                                                   : "only \"chunked\" is supported, once");
    if (h.idem_key > 1)
        return srv_reply_err_http(s, c, MHD_HTTP_BAD_REQUEST, rt_status_str(RT_EINVAL), "Idempotency-Key",
                                  "given twice");
    if (!srv_route_parse(url, r))
        return srv_reply_err_http(s, c, MHD_HTTP_NOT_FOUND, "not found", "url", "no such resource");
    if (!method_ok(r->route, method, &has_body, &admin_only))
        return srv_reply_err_hdr(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", "method",
                                 "method not allowed on this resource", MHD_HTTP_HEADER_ALLOW,
                                 route_allow(r->route));
    if (copy_query(c, r)) return MHD_NO;
    const char *rep = r->route != SRV_R_JOBS || !has_body ? query_repeated(&r->query) : NULL;
    if (rep) {
        char where[64];
        snprintf(where, sizeof where, "query.%s", RT_QUOTE(rep));
        return srv_reply_err_http(s, c, MHD_HTTP_BAD_REQUEST, rt_status_str(RT_EINVAL), where, "given twice");
    }
    /* Health, the page's files and the API's description need no token
     * (the page asks for one); the metrics only with --metrics-public. */
    if (r->route != SRV_R_HEALTH && !(r->route == SRV_R_METRICS && s->cfg.metrics_public) &&
        r->route != SRV_R_UI && r->route != SRV_R_OPENAPI) {
        const char *why = NULL;
        unsigned int code = srv_auth(s, c, r, &why);
        if (code == MHD_HTTP_SERVICE_UNAVAILABLE)
            return srv_reply_err_http(s, c, code, "out of memory", "Authorization", why);
        if (code)
            return srv_reply_err_hdr(s, c, code, "unauthorized", "Authorization", why,
                                     MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"retargetd\"");
        if (admin_only && !r->admin)
            return srv_reply_err_http(s, c, MHD_HTTP_FORBIDDEN, "forbidden", "Authorization",
                                      "this token may not change robots or profiles (admin only)");
    }
    /* Refuse an oversize body from its Content-Length, before reading it. */
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && has_body) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (cl[0] < '0' || cl[0] > '9' || *end || errno || n > s->cfg.max_body) {
            snprintf(msg, sizeof msg, "request body of %s bytes is larger than the limit of %zu bytes", RT_QUOTE(cl),
                     s->cfg.max_body);
            return srv_reply_err_http(s, c, MHD_HTTP_CONTENT_TOO_LARGE, rt_status_str(RT_ELIMIT), "body", msg);
        }
        r->body_hint = (size_t)n;
    }
    if (past_deadline(s, r)) return reply_timeout(s, c, r);
    if (has_body && s->cfg.request_timeout_s > 0) {
        /* A stalled body ends at the deadline, not after --idle-timeout. */
        double left = (double)s->cfg.request_timeout_s - (rt_now() - r->t_start);
        unsigned int t = left < 1 ? 1u : (unsigned int)ceil(left);
        if (!s->cfg.idle_timeout_s || t < s->cfg.idle_timeout_s)
            MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, t);
    }
    if (r->route == SRV_R_JOBS && has_body) {
        const char *k = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
        if (k && !(r->idem = strdup(k))) return MHD_NO;
        /* The raw form's joint-position bodies are told apart by their type. */
        const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (t && !(r->ctype = strdup(t))) return MHD_NO;
    }
    return MHD_YES;
}

/* The validation pool's task: plans the submission, keeps the reply for
 * the access handler and resumes the connection. After the resume the
 * request may be freed at any moment, so nothing touches it then. */
static void plan_task(void *arg)
{
    struct srv_req *r = arg;
    struct srv *s = r->srv;
    struct srv_resp out = {0, NULL};
    if (srv_jobs_is_result(r->route)) {
        srv_jobs_result(s, r, &out);
    } else {
        srv_metrics_submit(&s->metrics, SRV_SUB_QUEUE, rt_now() - r->t_queued);
        srv_jobs_submit(s, r, &out);
    }
    r->resp_code = out.code;
    r->resp = out.resp;
    r->t_done = rt_now();
    r->done = 1;
    MHD_resume_connection(r->conn);
}

enum MHD_Result srv_http_request(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls)
{
    struct srv *s = cls;
    struct srv_req *r = *req_cls;
    (void)version;
    if (!r) {
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        *req_cls = r;
    }
    if (!r->started) return first_call(s, c, r, url, method);
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (past_deadline(s, r)) {
            /* MHD takes no reply in the middle of a body: close. */
            rt_log("warn", "http", "request", "body still arriving after %u s (--request-timeout): connection closed",
                   s->cfg.request_timeout_s);
            return MHD_NO;
        }
        if (r->too_big) return MHD_YES;
        if (n > s->cfg.max_body - r->len) {
            r->too_big = 1;
            free(r->body);
            r->body = NULL;
            r->len = r->cap = 0;
            return MHD_YES;
        }
        if (r->len + n + 1 > r->cap) {
            /* The announced length in one allocation, so that a large body
             * is never copied as it grows (the copy and the old block would
             * both be resident); doubling past it, or without one. */
            size_t cap = r->cap ? r->cap : r->body_hint ? r->body_hint + 1 : 4096;
            while (cap < r->len + n + 1) cap = cap > SIZE_MAX / 2 ? r->len + n + 1 : cap * 2;
            char *b = realloc(r->body, cap);
            if (!b) return MHD_NO;
            r->body = b;
            r->cap = cap;
        }
        memcpy(r->body + r->len, upload, n);
        r->len += n;
        r->body[r->len] = 0;
        return MHD_YES;
    }
    if (r->done) { /* back from the validation pool */
        struct srv_resp out = {r->resp_code, r->resp};
        r->resp = NULL;
        enum MHD_Result ret = srv_resp_queue(s, c, &out);
        if (r->route == SRV_R_JOBS) srv_metrics_submit(&s->metrics, SRV_SUB_RESUME, rt_now() - r->t_done);
        return ret;
    }
    if (r->queued) return MHD_YES; /* not expected: the connection is suspended until done */
    if (s->cfg.idle_timeout_s) MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->cfg.idle_timeout_s);
    if (past_deadline(s, r)) return reply_timeout(s, c, r);
    if (r->too_big) {
        char msg[RT_ERR_MSG_MAX];
        snprintf(msg, sizeof msg, "request body is larger than the limit of %zu bytes", s->cfg.max_body);
        return srv_reply_err_http(s, c, MHD_HTTP_CONTENT_TOO_LARGE, rt_status_str(RT_ELIMIT), "body", msg);
    }
    if (!r->body) {
        if (!(r->body = calloc(1, 1))) return MHD_NO;
    }
    if (((r->route == SRV_R_JOBS && !strcmp(method, "POST")) ||
         (srv_jobs_is_result(r->route) && !strcmp(method, "GET"))) &&
        s->pool) {
        r->srv = s;
        r->queued = 1;
        r->t_queued = rt_now();
        if (r->route == SRV_R_JOBS) srv_metrics_submit(&s->metrics, SRV_SUB_BODY, r->t_queued - r->t_start);
        MHD_suspend_connection(c);
        if (srv_pool_submit(srv_jobs_is_result(r->route) ? s->rpool : s->pool, plan_task, r) != 0) {
            struct srv_resp out = {0, NULL};
            srv_resp_err_http(s, &out, MHD_HTTP_SERVICE_UNAVAILABLE, "busy", "jobs",
                              "every validation thread is busy and the queue is full (--plan-queue), or the "
                              "daemon is stopping: retry shortly");
            if (out.resp) MHD_add_response_header(out.resp, "Retry-After", "1");
            r->resp_code = out.code;
            r->resp = out.resp;
            r->t_done = rt_now();
            r->done = 1;
            MHD_resume_connection(c);
        }
        return MHD_YES;
    }
    return dispatch(s, c, r, url, method);
}

void srv_http_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                        enum MHD_RequestTerminationCode toe)
{
    struct srv *s = cls;
    struct srv_req *r = *req_cls;
    (void)c;
    (void)toe;
    if (!r) return;
    if (r->counted) atomic_fetch_sub(&s->in_flight, 1);
    if (r->resp) MHD_destroy_response(r->resp);
    free(r->query_buf);
    free(r->idem);
    free(r->ctype);
    free(r->body);
    free(r);
    *req_cls = NULL;
}
