/* state.h -- the types that the server's modules share: the daemon's
 * state (struct srv) and one request's state (struct srv_req, with the
 * routes that server/http.c parses a URL into). Type definitions only, no
 * functions: every module may include it without depending on another.
 *
 * Memory: server/daemon.c creates and frees struct srv (srv_start,
 * srv_stop); server/http.c creates and frees struct srv_req (its access
 * handler and MHD_OPTION_NOTIFY_COMPLETED). auth.c and the route modules
 * fill and read a request while it lives. */
#ifndef RT_SRV_STATE_H
#define RT_SRV_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../storage/store.h"
#include "config.h"
#include "metrics.h"

#define SRV_OWNER_ANON "anonymous"

struct MHD_Daemon;
struct MHD_Connection;
struct MHD_Response;
struct sched;
struct srv_inuse;
struct srv_plans;
struct srv_pool;

/* The daemon: made by srv_start() before any thread starts that reads it,
 * freed by srv_stop() after they have all stopped. The HTTP threads and the
 * worker only read it; the counters in `metrics` have their own mutex, and
 * the store and the scheduler lock themselves. */
struct srv {
    struct srv_config cfg;       /* strings point into the copies below */
    char *listen, *db_path, *backend, *static_dir;
    struct store *store;
    struct MHD_Daemon *mhd;
    struct sched *sched;
    struct srv_metrics metrics;
    struct srv_inuse *inuse; /* robots and profiles held by submissions being planned (assets.c) */
    struct srv_plans *plans; /* parsed plans handed from submissions to the worker (plans.h) */
    struct srv_pool *pool;   /* the validation threads that plan submissions (http.c) */
    struct srv_pool *rpool;  /* as many that make results (GET .../result*), so that no submission waits behind them */
    int lock_fd;             /* DB_PATH.lock, held with flock() while the daemon lives; -1 none */
    atomic_int in_flight;    /* requests from their request line to their completion (http.c) */
    atomic_int closing;      /* srv_stop() began: new connections are closed as they come (daemon.c) */
    unsigned int port;
};

/* Routes of the API (server/http.c parses the URL into one). */
enum srv_route {
    SRV_R_NONE = 0,
    SRV_R_HEALTH,
    SRV_R_METRICS,
    SRV_R_ROBOTS,
    SRV_R_ROBOT,
    SRV_R_PROFILES,
    SRV_R_PROFILE,
    SRV_R_JOBS,
    SRV_R_JOB,
    SRV_R_RESULT,
    SRV_R_RESULT_CSV,
    SRV_R_RESULT_NPZ, /* GET /v1/jobs/ID/result.npz */
    SRV_R_SOURCE,     /* GET /v1/jobs/ID/source */
    SRV_R_ROBOT_URDF, /* GET /v1/robots/NAME/urdf */
    SRV_R_UI,         /* GET / and /ui/FILE: the web page (server/ui.c) */
    SRV_R_TOKEN,      /* GET /v1/token: who the request's token is */
    SRV_R_OPENAPI     /* GET /v1/openapi.json: server/openapi.json */
};

/* Query parameters as copied out of a request, in order, duplicates kept
 * (server/parse.h reads them). A parameter without '=' has an empty value.
 * `overflow` is set when the request had more than SRV_QUERY_MAX. */
#define SRV_QUERY_MAX 16
struct srv_query {
    int n, overflow;
    const char *key[SRV_QUERY_MAX], *val[SRV_QUERY_MAX];
};

/* Per-request state, in *req_cls from the request line (MHD's URI log
 * callback) or the first call of the access handler to
 * MHD_OPTION_NOTIFY_COMPLETED, which frees it.
 *
 * A submission (POST /v1/jobs) is planned, and a result (GET .../result*)
 * made, on a validation thread while its connection is suspended: from the
 * hand-over until `done` is set, that
 * thread alone touches the fields below `query`, and http.c only frees the
 * request after the thread resumed the connection. */
struct srv_req {
    int route;              /* enum srv_route */
    char name[STORE_MAX_NAME + 1]; /* robot/profile name from the URL */
    int64_t id;             /* job id from the URL */
    char owner[STORE_MAX_NAME + 1];
    int admin;
    char *body;             /* NUL-terminated, len bytes */
    size_t len, cap;
    size_t body_hint;       /* the Content-Length (<= max_body), 0 if none */
    int too_big;            /* the body passed max_body: 413 at the end */
    int nul_in_url;         /* the raw URL held %00 (MHD would decode it to a NUL) */
    int started;            /* the access handler has seen the request */
    int counted;            /* counted in srv.in_flight */
    double t_start;         /* rt_now() at the request line */
    struct MHD_Connection *conn;
    struct srv *srv;        /* the daemon, for the validation thread */
    struct srv_query query; /* the query parameters, copied into query_buf */
    char *query_buf;
    char *idem;             /* the Idempotency-Key header, copied; NULL when absent */
    char *ctype;            /* POST /v1/jobs: the Content-Type header, copied; NULL when absent */
    int queued, done;       /* handed to the validation pool; its reply is in `resp` */
    double t_queued, t_done; /* rt_now() when handed to the pool and when its reply was made */
    unsigned int resp_code;
    struct MHD_Response *resp;
};

#endif
