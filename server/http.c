/* http.c -- retargetd's HTTP front: the per-request state in *req_cls,
 * limits checked before a body is read, and routing to the route modules
 * (health here, metrics through metrics.h, robots and profiles to
 * assets.c, jobs to jobs.c, the web page at / and /ui/ to ui.c; token and
 * openapi.json here too).
 *
 * Request life (libmicrohttpd's largepost.c pattern): the first call of
 * the access handler allocates struct srv_req, parses the route and refuses
 * early -- unknown route, wrong method, missing or bad token, a non-admin
 * upload, a Content-Length over max_body -- before a byte of body is read.
 * Later calls append the body (a body that outgrows max_body without a
 * Content-Length is discarded and answered 413 at the end). The final call
 * dispatches. MHD_OPTION_NOTIFY_COMPLETED frees the state.
 *
 * struct srv_req is defined in state.h, not here: auth.c and the route
 * modules, which are below this file, fill and read it and must not
 * include http.h. daemon.c's opening comment gives the order of the
 * server's modules and why. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/embed.h"
#include "../storage/store.h"
#include "assets.h"
#include "auth.h"
#include "http.h"
#include "jobs.h"
#include "metrics.h"
#include "reply.h"
#include "sched.h"
#include "state.h"
#include "ui.h"

/* $(B)/gen/srv_openapi.c: server/openapi.json, one entry. */
extern const struct kin_embedded srv_openapi[];

/* Parses the URL into r->route (and name/id); 0 when no route matches. */
static int parse_route(const char *url, struct srv_req *r)
{
    if (!strcmp(url, "/") || !strncmp(url, "/ui/", 4)) return r->route = SRV_R_UI;
    if (strncmp(url, "/v1/", 4)) return 0;
    const char *p = url + 4;
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    const char *rest = slash ? slash + 1 : NULL;
#define IS(word) (n == sizeof(word) - 1 && !strncmp(p, word, n))
    if (IS("health") && !rest) return r->route = SRV_R_HEALTH;
    if (IS("metrics") && !rest) return r->route = SRV_R_METRICS;
    if (IS("token") && !rest) return r->route = SRV_R_TOKEN;
    if (IS("openapi.json") && !rest) return r->route = SRV_R_OPENAPI;
    if (IS("robots") || IS("profiles")) {
        int one = IS("robots") ? SRV_R_ROBOT : SRV_R_PROFILE;
        if (!rest || !*rest) return r->route = one - 1;
        const char *sub = strchr(rest, '/');
        size_t name_len = sub ? (size_t)(sub - rest) : strlen(rest);
        if (name_len > STORE_MAX_NAME) return 0;
        snprintf(r->name, sizeof r->name, "%.*s", (int)name_len, rest);
        if (!sub) return r->route = one;
        /* GET /v1/robots/NAME/urdf: the robot's URDF text. */
        if (one == SRV_R_ROBOT && name_len && !strcmp(sub, "/urdf")) return r->route = SRV_R_ROBOT_URDF;
        return 0;
    }
    if (IS("jobs")) {
        if (!rest || !*rest) return r->route = SRV_R_JOBS;
        char *end;
        if (rest[0] < '0' || rest[0] > '9') return 0;
        errno = 0;
        long long id = strtoll(rest, &end, 10);
        if (errno || id <= 0) return 0;
        r->id = id;
        if (!*end) return r->route = SRV_R_JOB;
        if (!strcmp(end, "/result")) return r->route = SRV_R_RESULT;
        if (!strcmp(end, "/result.csv")) return r->route = SRV_R_RESULT_CSV;
        if (!strcmp(end, "/result.npz")) return r->route = SRV_R_RESULT_NPZ;
        if (!strcmp(end, "/source")) return r->route = SRV_R_SOURCE;
        return 0;
    }
#undef IS
    return 0;
}

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

enum MHD_Result srv_http_request(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls)
{
    struct srv *s = cls;
    struct srv_req *r = *req_cls;
    (void)version;
    if (!r) {
        int has_body, admin_only;
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        *req_cls = r;
        if (!parse_route(url, r))
            return srv_reply_err_http(s, c, MHD_HTTP_NOT_FOUND, "not found", "url", "no such resource");
        if (!method_ok(r->route, method, &has_body, &admin_only))
            return srv_reply_err_hdr(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed", "method",
                                     "method not allowed on this resource", MHD_HTTP_HEADER_ALLOW,
                                     route_allow(r->route));
        /* The page's files need no token: the page asks for one. */
        if (r->route != SRV_R_HEALTH && r->route != SRV_R_METRICS && r->route != SRV_R_UI &&
            r->route != SRV_R_OPENAPI) {
            const char *why = NULL;
            unsigned int code = srv_auth(s, c, r, &why);
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
                char msg[160];
                snprintf(msg, sizeof msg, "request body of %.24s bytes is larger than the limit of %zu bytes",
                         cl, s->cfg.max_body);
                return srv_reply_err_http(s, c, MHD_HTTP_CONTENT_TOO_LARGE, rt_status_str(RT_ELIMIT),
                                          "body", msg);
            }
        }
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_big) return MHD_YES;
        if (n > s->cfg.max_body - r->len) {
            r->too_big = 1;
            free(r->body);
            r->body = NULL;
            r->len = r->cap = 0;
            return MHD_YES;
        }
        if (r->len + n + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
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
    if (r->too_big) {
        char msg[160];
        snprintf(msg, sizeof msg, "request body is larger than the limit of %zu bytes", s->cfg.max_body);
        return srv_reply_err_http(s, c, MHD_HTTP_CONTENT_TOO_LARGE, rt_status_str(RT_ELIMIT), "body", msg);
    }
    if (!r->body) {
        if (!(r->body = calloc(1, 1))) return MHD_NO;
    }
    return dispatch(s, c, r, url, method);
}

void srv_http_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                        enum MHD_RequestTerminationCode toe)
{
    struct srv_req *r = *req_cls;
    (void)cls;
    (void)c;
    (void)toe;
    if (!r) return;
    free(r->body);
    free(r);
    *req_cls = NULL;
}
