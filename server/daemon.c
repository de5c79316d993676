/* daemon.c -- the daemon's life (srv.h): srv_start() wires the store, the
 * scheduler and the libmicrohttpd daemon (a thread pool) together, and
 * srv_stop() takes them apart in reverse. The token administration of
 * srv.h is in tokens.c.
 *
 * One daemon per database: srv_start() takes an flock() on DB_PATH.lock
 * (holding the daemon's pid) for the daemon's whole life, and a second
 * daemon on the same file refuses to start, naming the holder. So when
 * the lock is ours, every job the file says is running belongs to a
 * daemon that is gone, and crash recovery may queue it again.
 *
 * The server's modules, bottom up. A module's .c includes only headers
 * of modules listed before it, so no two modules include each other in a
 * circle (tests/test_layers.sh checks the graph):
 *   config.h    the options, struct srv_config (types only)
 *   metrics     the counters and the text of GET /v1/metrics
 *   state.h     struct srv and struct srv_req (types only)
 *   parse       strict reading of URLs, JSON, queries, submissions, names
 *   pool        the validation threads (a bounded task queue)
 *   reply       the replies and the rt_status -> HTTP table
 *   auth        bearer tokens
 *   assets      robots and profiles: loading, the name rule, their routes
 *   job_input   a job's options and targets, at submission and in the worker
 *   sched       the scheduler and its worker
 *   jobs        the job routes
 *   ui          the web page: / and /ui/FILE, embedded or from --static-dir
 *   http        a request's life: limits, auth, routing to the routes above
 *   daemon      srv_start, srv_stop, srv_port (srv.h)
 *   tokens      the token administration (srv.h, the store only)
 * srv.h, the public API of main.c and the tests, includes only config.h.
 * Why this order: every reply is counted and every solved batch too, so
 * metrics is below reply and sched, and http.c serves the metrics text
 * (with the scheduler's queue length, which metrics cannot ask for). The
 * job routes queue and cancel jobs in sched while the worker rebuilds
 * jobs, so the build of a job is a module below both, job_input. auth and
 * the routes fill and read struct srv_req, so it is in state.h, below
 * them, rather than in http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../storage/store.h"
#include "assets.h"
#include "http.h"
#include "metrics.h"
#include "plans.h"
#include "pool.h"
#include "sched.h"
#include "srv.h"
#include "state.h"

void srv_config_default(struct srv_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = "127.0.0.1:8080";
    c->db_path = "var/retargetd.db";
    /* HTTP threads: plans run on them, so one per core (4 at least). */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = ncpu > 4 ? (ncpu < 64 ? (unsigned int)ncpu : 64u) : 4u;
    c->backend = "auto";
    c->solver_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (c->solver_threads < 1) c->solver_threads = 1;
    if (c->solver_threads > 64) c->solver_threads = 64;
    c->host_threads = c->solver_threads;
    c->max_body = SRV_MAX_BODY_DEFAULT;
    c->max_frames = 100000;
    c->max_joints = 512;
    c->max_active = 1000;
    c->batch_frames = 0; /* by backend: server/sched.c */
    c->batch_wait_ms = -1; /* by backend: server/sched.c */
    c->idle_timeout_s = 30;
    c->request_timeout_s = 60;
    c->max_connections = 1024;
    c->max_per_ip = 64;
    c->sync_full = 1;
    /* Validation threads: one a core (2 to 32). They run at nice +5, below
     * the HTTP threads that serve polls; with half the cores a burst of
     * submissions queued for a thread (bench-e2e, 16 clients: 11 ms a
     * submission on average, the most of its p99). */
    c->plan_threads = ncpu > 2 ? (ncpu < 32 ? (int)ncpu : 32) : 2;
    c->plan_queue = 64;
    c->plan_cache_mb = 256;
}

/* Takes the daemon's lock on PATH.lock (see the top of this file) into
 * *fd and writes our pid into it. RT_ESTATE naming the holder's pid when
 * another daemon has it, RT_EIO when the file cannot be opened. */
static enum rt_status db_lock(const char *db_path, int *fd, struct rt_err *err)
{
    char path[4096], pid[32];
    *fd = -1;
    if (snprintf(path, sizeof path, "%s.lock", db_path) >= (int)sizeof path)
        return rt_err_set(err, RT_EINVAL, "--db", "path too long");
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) return rt_err_set(err, RT_EIO, path, "cannot open the lock file: %s", strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        ssize_t n = e == EWOULDBLOCK ? pread(f, pid, sizeof pid - 1, 0) : -1;
        close(f);
        if (e != EWOULDBLOCK) return rt_err_set(err, RT_EIO, path, "cannot lock: %s", strerror(e));
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        return rt_err_set(err, RT_ESTATE, db_path,
                          "the database is in use by another retargetd (pid %s, lock %s): one daemon per database",
                          pid[0] ? pid : "unknown", path);
    }
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)len, 0) != len)
        rt_log("warn", "srv", path, "cannot write the pid into the lock file: %s", strerror(errno));
    *fd = f;
    return RT_OK;
}

/* MHD's own messages, under the address asked for ("Failed to bind to
 * port 8080: Address already in use" names what failed). */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    const struct srv *s = cls;
    char line[RT_ERR_MSG_MAX];
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
        return rt_err_set(err, RT_EINVAL, "--listen", "expected ADDR:PORT, got '%s'", RT_QUOTE(spec));
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = 0;
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end || errno || port < 0 || port > 65535)
        return rt_err_set(err, RT_EINVAL, "--listen", "bad port in '%s'", RT_QUOTE(spec));
    memset(ss, 0, sizeof *ss);
    size_t hn = strlen(host);
    if (host[0] == '[' && hn > 2 && host[hn - 1] == ']') {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        host[hn - 1] = 0;
        if (inet_pton(AF_INET6, host + 1, &a->sin6_addr) != 1)
            return rt_err_set(err, RT_EINVAL, "--listen", "bad IPv6 address in '%s'", RT_QUOTE(spec));
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        *loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
        return RT_OK;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
        return rt_err_set(err, RT_EINVAL, "--listen", "bad IPv4 address in '%s'", RT_QUOTE(spec));
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    *v6 = 0;
    *loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    return RT_OK;
}

/* MHD's accept policy: every connection, until srv_stop() begins; then
 * each new one is closed as it is accepted. (Not MHD_quiesce_daemon(),
 * which closes the listen socket: on an epoll daemon with a thread pool
 * it removes that socket from each worker's epoll set while the worker
 * may be removing it too, and the loser's epoll_ctl fails and MHD aborts
 * the process, "Failed to remove listen FD from epoll set" -- a defect
 * open in libmicrohttpd 0.9.75, seen here under ASan's timing.) */
static enum MHD_Result srv_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct srv *s = (struct srv *)cls;
    (void)addr;
    (void)addrlen;
    return atomic_load(&s->closing) ? MHD_NO : MHD_YES;
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
                          "authentication may be off only on a loopback address, not '%s'", RT_QUOTE(cfg->listen));
    if (cfg->threads < 1 || cfg->threads > 1024)
        return rt_err_set(err, RT_EINVAL, "--threads", "expected 1..1024");
    if (cfg->max_body < 1) return rt_err_set(err, RT_EINVAL, "--max-body", "expected > 0");
    if (cfg->batch_frames < 0 || cfg->batch_wait_ms < -1 || cfg->max_frames < 1 || cfg->max_joints < 1 ||
        cfg->solver_threads < 1 || cfg->host_threads < 1 || cfg->host_threads > 256)
        return rt_err_set(err, RT_EINVAL, "options", "batch, frame, joint and thread limits must be positive");
    struct stat sd;
    if (cfg->static_dir && (stat(cfg->static_dir, &sd) || !S_ISDIR(sd.st_mode)))
        return rt_err_set(err, RT_EINVAL, "--static-dir", "'%s' is not a folder", cfg->static_dir);
    if (cfg->plan_threads < 0 || cfg->plan_threads > 256 || cfg->plan_queue < 1)
        return rt_err_set(err, RT_EINVAL, "--plan-threads", "expected 0..256 threads and a queue of 1 or more");
    if (cfg->plan_cache_mb < 0 || cfg->plan_cache_mb > 1048576)
        return rt_err_set(err, RT_EINVAL, "--plan-cache-mb", "expected 0..1048576 MiB");
    if (cfg->max_connections < 1) return rt_err_set(err, RT_EINVAL, "--max-connections", "expected > 0");
    struct srv *s = calloc(1, sizeof *s);
    if (!s) return rt_err_set(err, RT_ENOMEM, "srv", "out of memory");
    s->lock_fd = -1;
    atomic_init(&s->in_flight, 0);
    atomic_init(&s->closing, 0);
    s->cfg = *cfg;
    s->listen = strdup(cfg->listen);
    s->db_path = strdup(cfg->db_path);
    s->backend = strdup(cfg->backend ? cfg->backend : "auto");
    s->static_dir = cfg->static_dir ? strdup(cfg->static_dir) : NULL;
    srv_metrics_init(&s->metrics);
    if (!s->listen || !s->db_path || !s->backend || (cfg->static_dir && !s->static_dir)) {
        st = rt_err_set(err, RT_ENOMEM, "srv", "out of memory");
        goto fail;
    }
    s->cfg.listen = s->listen;
    s->cfg.db_path = s->db_path;
    s->cfg.backend = s->backend;
    s->cfg.static_dir = s->static_dir;
    if ((st = srv_inuse_init(s, err)) != RT_OK) goto fail;
    if ((st = db_lock(s->db_path, &s->lock_fd, err)) != RT_OK) goto fail;
    if ((st = store_open(s->db_path, &s->store, err)) != RT_OK) goto fail;
    if ((st = store_set_sync(s->store, s->cfg.sync_full, err)) != RT_OK) goto fail;
    store_set_pack(s->store, !s->cfg.sources_raw);
    /* The lock is ours: jobs left running belong to a daemon that is gone. */
    int n_requeued = 0, n_failed = 0;
    if ((st = store_job_requeue_running(s->store, &n_requeued, &n_failed, err)) != RT_OK) goto fail;
    if (n_requeued) rt_log("warn", "srv", s->db_path, "%d job(s) left running by a crash queued again", n_requeued);
    if (n_failed)
        rt_log("warn", "srv", s->db_path, "%d job(s) left running by a crash failed: interrupted %d times",
               n_failed, STORE_MAX_ATTEMPTS);
    if ((st = srv_plans_create((size_t)s->cfg.plan_cache_mb << 20, &s->plans, err)) != RT_OK) goto fail;
    if ((st = sched_start(s, &s->sched, err)) != RT_OK) goto fail;
    if (s->cfg.plan_threads > 0 &&
        ((st = srv_pool_start(s->cfg.plan_threads, s->cfg.plan_queue, 5, &s->pool, err)) != RT_OK ||
         (st = srv_pool_start(s->cfg.plan_threads, s->cfg.plan_queue, 5, &s->rpool, err)) != RT_OK))
        goto fail;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    if (v6) flags |= MHD_USE_IPv6;
    /* MHD binds MHD_OPTION_SOCK_ADDR but names the port argument in its
     * messages ("Failed to bind to port N"): pass the one asked for. */
    uint16_t port = v6 ? ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port)
                       : ntohs(((const struct sockaddr_in *)&ss)->sin_port);
    /* A pool of one is no pool to MHD (it warns): one polling thread. */
    struct MHD_OptionItem pool_opt[] = {
        {s->cfg.threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, (intptr_t)s->cfg.threads, NULL},
        {MHD_OPTION_END, 0, NULL}};
    s->mhd = MHD_start_daemon(flags, port, &srv_accept, s, &srv_http_request, s,
                              MHD_OPTION_EXTERNAL_LOGGER, &on_mhd_log, (void *)s,
                              MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&ss,
                              MHD_OPTION_ARRAY, pool_opt,
                              MHD_OPTION_NOTIFY_COMPLETED, &srv_http_completed, (void *)s,
                              MHD_OPTION_URI_LOG_CALLBACK, &srv_http_uri, (void *)s,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)s->cfg.idle_timeout_s,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned int)s->cfg.max_connections,
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)s->cfg.max_per_ip,
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
    /* No new connections (srv_accept); every submission handed to the pool resumes its
     * connection (MHD must not stop with one suspended; one that arrives
     * meanwhile gets a 503); then the replies in flight get up to two
     * seconds to go out, so that a client whose job was stored hears so. */
    atomic_store(&s->closing, 1);
    srv_pool_drain(s->pool);
    srv_pool_drain(s->rpool);
    for (int i = 0; s->mhd && i < 200 && atomic_load(&s->in_flight) > 0; i++) usleep(10000);
    if (s->mhd) MHD_stop_daemon(s->mhd);
    srv_pool_stop(s->pool);
    srv_pool_stop(s->rpool);
    sched_stop(s->sched);
    srv_plans_free(s->plans);
    store_close(s->store);
    if (s->lock_fd >= 0) close(s->lock_fd); /* releases the flock */
    srv_inuse_free(s);
    srv_metrics_free(&s->metrics);
    free(s->listen);
    free(s->db_path);
    free(s->backend);
    free(s->static_dir);
    free(s);
}
