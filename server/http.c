/* http.c -- retargetd's HTTP front: the libmicrohttpd daemon (a thread
 * pool), the per-request state in *req_cls, limits checked before a body is
 * read and routing to the resource files (the replies are reply.c's).
 * Also srv_start()/srv_stop(), which wire the store, the scheduler and the
 * daemon together, and the token administration.
 *
 * Request life (libmicrohttpd's largepost.c pattern): the first call of
 * the access handler allocates struct srv_req, parses the route and refuses
 * early -- unknown route, wrong method, missing or bad token, a non-admin
 * upload, a Content-Length over max_body -- before a byte of body is read.
 * Later calls append the body (a body that outgrows max_body without a
 * Content-Length is discarded and answered 413 at the end). The final call
 * dispatches. MHD_OPTION_NOTIFY_COMPLETED frees the state. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../base/sha256.h"
#include "../storage/store.h"
#include "assets.h"
#include "auth.h"
#include "jobs.h"
#include "metrics.h"
#include "reply.h"
#include "sched.h"
#include "srv.h"
#include "state.h"

void srv_config_default(struct srv_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = "127.0.0.1:8080";
    c->db_path = "var/retargetd.db";
    c->threads = 4;
    c->backend = "auto";
    c->solver_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (c->solver_threads < 1) c->solver_threads = 1;
    if (c->solver_threads > 64) c->solver_threads = 64;
    c->max_body = SRV_MAX_BODY_DEFAULT;
    c->max_frames = 100000;
    c->max_joints = 512;
    c->max_active = 1000;
    c->batch_frames = 20000;
    c->batch_wait_ms = 50;
}

/* Parses the URL into r->route (and name/id); 0 when no route matches. */
static int parse_route(const char *url, struct srv_req *r)
{
    if (strncmp(url, "/v1/", 4)) return 0;
    const char *p = url + 4;
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    const char *rest = slash ? slash + 1 : NULL;
#define IS(word) (n == sizeof(word) - 1 && !strncmp(p, word, n))
    if (IS("health") && !rest) return r->route = SRV_R_HEALTH;
    if (IS("metrics") && !rest) return r->route = SRV_R_METRICS;
    if (IS("robots") || IS("profiles")) {
        int one = IS("robots") ? SRV_R_ROBOT : SRV_R_PROFILE;
        if (!rest || !*rest) return r->route = one - 1;
        if (strchr(rest, '/') || strlen(rest) > STORE_MAX_NAME) return 0;
        snprintf(r->name, sizeof r->name, "%s", rest);
        return r->route = one;
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
    case SRV_R_RESULT_CSV: return get;
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
                                const char *method)
{
    switch (r->route) {
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
    case SRV_R_ROBOTS:
    case SRV_R_ROBOT: return srv_route_robots(s, c, r, method);
    case SRV_R_PROFILES:
    case SRV_R_PROFILE: return srv_route_profiles(s, c, r, method);
    default: return srv_route_jobs(s, c, r, method);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
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
        if (r->route != SRV_R_HEALTH && r->route != SRV_R_METRICS) {
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
    return dispatch(s, c, r, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
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

/* MHD's own messages, under the address asked for ("Failed to bind to
 * port 8080: Address already in use" names what failed). */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    const struct srv *s = cls;
    char line[256];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    rt_log("warn", "http", s && s->listen ? s->listen : "mhd", "%s", line);
}

/* Parses "A.B.C.D:PORT" or "[V6]:PORT" into `ss`; *loopback when the
 * address is 127.0.0.0/8 or ::1. */
static enum rt_status parse_listen(const char *spec, struct sockaddr_storage *ss, int *v6,
                                   int *loopback, struct rt_err *err)
{
    char host[64];
    const char *colon = strrchr(spec, ':');
    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host)
        return rt_err_set(err, RT_EINVAL, "--listen", "expected ADDR:PORT, got '%.40s'", spec);
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = 0;
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end || errno || port < 0 || port > 65535)
        return rt_err_set(err, RT_EINVAL, "--listen", "bad port in '%.40s'", spec);
    memset(ss, 0, sizeof *ss);
    size_t hn = strlen(host);
    if (host[0] == '[' && hn > 2 && host[hn - 1] == ']') {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        host[hn - 1] = 0;
        if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
            return rt_err_set(err, RT_EINVAL, "--listen", "bad IPv6 address in '%.40s'", spec);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        *loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
        return RT_OK;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
        return rt_err_set(err, RT_EINVAL, "--listen", "bad IPv4 address in '%.40s'", spec);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    *v6 = 0;
    *loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    return RT_OK;
}

enum rt_status srv_start(const struct srv_config *cfg, struct srv **out, struct rt_err *err)
{
    struct sockaddr_storage ss;
    int v6 = 0, loopback = 0;
    enum rt_status st;
    *out = NULL;
    if ((st = parse_listen(cfg->listen, &ss, &v6, &loopback, err)) != RT_OK) return st;
    if (cfg->no_auth && !loopback)
        return rt_err_set(err, RT_ESTATE, "--no-auth",
                          "authentication may be off only on a loopback address, not '%.40s'", cfg->listen);
    if (cfg->threads < 1 || cfg->threads > 1024)
        return rt_err_set(err, RT_EINVAL, "--threads", "expected 1..1024");
    if (cfg->max_body < 1) return rt_err_set(err, RT_EINVAL, "--max-body", "expected > 0");
    if (cfg->batch_frames < 1 || cfg->batch_wait_ms < 0 || cfg->max_frames < 1 || cfg->max_joints < 1 ||
        cfg->solver_threads < 1)
        return rt_err_set(err, RT_EINVAL, "options", "batch, frame, joint and thread limits must be positive");
    struct srv *s = calloc(1, sizeof *s);
    if (!s) return rt_err_set(err, RT_ENOMEM, "srv", "out of memory");
    s->cfg = *cfg;
    s->listen = strdup(cfg->listen);
    s->db_path = strdup(cfg->db_path);
    s->backend = strdup(cfg->backend ? cfg->backend : "auto");
    srv_metrics_init(&s->metrics);
    if (!s->listen || !s->db_path || !s->backend) {
        st = rt_err_set(err, RT_ENOMEM, "srv", "out of memory");
        goto fail;
    }
    s->cfg.listen = s->listen;
    s->cfg.db_path = s->db_path;
    s->cfg.backend = s->backend;
    if ((st = store_open(s->db_path, &s->store, err)) != RT_OK) goto fail;
    int n_requeued = 0, n_failed = 0;
    if ((st = store_job_requeue_running(s->store, &n_requeued, &n_failed, err)) != RT_OK) goto fail;
    if (n_requeued) rt_log("warn", "srv", s->db_path, "%d job(s) left running by a crash queued again", n_requeued);
    if (n_failed)
        rt_log("warn", "srv", s->db_path, "%d job(s) left running by a crash failed: interrupted %d times",
               n_failed, STORE_MAX_ATTEMPTS);
    if ((st = sched_start(s, &s->sched, err)) != RT_OK) goto fail;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    if (v6) flags |= MHD_USE_IPv6;
    /* MHD binds MHD_OPTION_SOCK_ADDR but names the port argument in its
     * messages ("Failed to bind to port N"): pass the one asked for. */
    uint16_t port = v6 ? ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port)
                       : ntohs(((const struct sockaddr_in *)&ss)->sin_port);
    s->mhd = MHD_start_daemon(flags, port, NULL, NULL, &on_request, s,
                              MHD_OPTION_EXTERNAL_LOGGER, &on_mhd_log, (void *)s,
                              MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&ss,
                              MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)s->cfg.threads,
                              MHD_OPTION_NOTIFY_COMPLETED, &on_completed, (void *)s,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1024,
                              MHD_OPTION_END);
    if (!s->mhd) {
        st = rt_err_set(err, RT_EIO, s->listen, "cannot listen (address in use or not available)");
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    if (s->cfg.no_auth)
        rt_log("warn", "srv", s->listen, "authentication is OFF (--no-auth on loopback): every client is admin");
    if (!s->cfg.quiet)
        rt_log("info", "srv", s->listen, "listening on port %u, database %s, backend %s", s->port,
               s->db_path, sched_backend(s->sched));
    *out = s;
    return RT_OK;
fail:
    srv_stop(s);
    return st;
}

unsigned int srv_port(const struct srv *s) { return s->port; }

void srv_stop(struct srv *s)
{
    if (!s) return;
    if (s->mhd) MHD_stop_daemon(s->mhd);
    sched_stop(s->sched);
    store_close(s->store);
    srv_metrics_free(&s->metrics);
    free(s->listen);
    free(s->db_path);
    free(s->backend);
    free(s);
}

enum rt_status srv_token_add(const char *db_path, const char *name, int admin,
                             char token[SRV_TOKEN_HEX + 1], struct rt_err *err)
{
    _Static_assert(SRV_TOKEN_HEX == 2 * RT_SHA256_LEN, "a token is written as a digest's hex");
    unsigned char raw[RT_SHA256_LEN], hash[RT_SHA256_LEN];
    struct store *st = NULL;
    enum rt_status rc;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    while (fd >= 0 && got < sizeof raw) {
        ssize_t n = read(fd, raw + got, sizeof raw - got);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            break;
        }
        got += (size_t)n;
    }
    if (fd >= 0) close(fd);
    if (got != sizeof raw) return rt_err_set(err, RT_EIO, "/dev/urandom", "cannot read random bytes");
    rt_sha256_hex(raw, token); /* lower-case hex: SRV_TOKEN_HEX digits + NUL */
    rt_sha256(token, SRV_TOKEN_HEX, hash);
    if ((rc = store_open(db_path, &st, err)) == RT_OK) rc = store_token_add(st, name, hash, admin, err);
    store_close(st);
    memset(raw, 0, sizeof raw);
    if (rc != RT_OK) memset(token, 0, SRV_TOKEN_HEX + 1);
    return rc;
}

static void print_token(void *user, const char *name, int admin, double created)
{
    char when[32] = "-";
    time_t t = (time_t)created;
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(user, "%s\t%s\t%s\n", name, admin ? "admin" : "user", when);
}

enum rt_status srv_token_list(const char *db_path, FILE *out, struct rt_err *err)
{
    struct store *st = NULL;
    enum rt_status rc;
    if ((rc = store_open(db_path, &st, err)) == RT_OK) {
        fputs("name\tadmin\tcreated\n", out);
        rc = store_token_list(st, print_token, out, err);
    }
    store_close(st);
    return rc;
}

enum rt_status srv_token_revoke(const char *db_path, const char *name, struct rt_err *err)
{
    struct store *st = NULL;
    enum rt_status rc;
    if ((rc = store_open(db_path, &st, err)) == RT_OK) rc = store_token_revoke(st, name, err);
    store_close(st);
    return rc;
}
