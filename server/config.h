/* config.h -- struct srv_config, the daemon's options: what srv_start()
 * takes (srv.h) and what the server's modules read back as s->cfg
 * (state.h). Type definitions only. It is a header of its own so that the
 * modules below the daemon see the options without including srv.h, whose
 * functions server/daemon.c and server/tokens.c implement on top of them.
 *
 * Memory: the strings are borrowed; srv_start() copies them. */
#ifndef RT_SRV_CONFIG_H
#define RT_SRV_CONFIG_H

#include <stddef.h>

#define SRV_MAX_BODY_DEFAULT (64u << 20)

struct srv_config {
    const char *listen;      /* "ADDR:PORT" ("127.0.0.1:8080", "[::1]:0"); port 0 picks one */
    const char *db_path;     /* SQLite file, created when absent */
    unsigned int threads;    /* HTTP thread pool size (>= 1) */
    const char *backend;     /* solver backend: "cpu", "cuda" or "auto" */
    int solver_threads;      /* CPU solver threads per batch (>= 1) */
    int host_threads;        /* threads building and finishing jobs around the solver (>= 1) */
    size_t max_body;         /* request body limit, bytes */
    int max_frames;          /* frames per clip */
    int max_joints;          /* BVH joints per clip, URDF joints per robot */
    int max_active;          /* queued + running jobs per token (0: no limit) */
    int batch_frames;        /* frame budget of one solver batch (0: by backend, server/sched.c) */
    int batch_wait_ms;       /* how long the oldest job of a class waits for company (-1: by backend) */
    int no_auth;             /* 1: no tokens (refused unless listening on loopback) */
    int metrics_public;      /* 1: GET /v1/metrics needs no token (--metrics-public) */
    int quiet;               /* 1: log warnings and errors only */
    const char *static_dir;  /* NULL: the embedded web page; else serve / and /ui/ from here */
    unsigned int idle_timeout_s;    /* a connection idle this long is closed (MHD_OPTION_CONNECTION_TIMEOUT) */
    unsigned int request_timeout_s; /* a request must arrive whole (line, headers, body) within this */
    unsigned int max_connections;   /* connections served at once, in all (MHD_OPTION_CONNECTION_LIMIT) */
    unsigned int max_per_ip;        /* connections from one IP address (0: no limit) */
    int sync_full;           /* 1: PRAGMA synchronous = FULL (--sync full), 0: NORMAL */
    int sources_raw;         /* 1: sources stored as sent (--sources raw), 0: packed (store_set_pack) */
    int plan_threads;        /* validation threads that plan submissions (0: on the HTTP thread) */
    int plan_queue;          /* submissions waiting for a validation thread, at most (more: 503) */
    int plan_delay_ms;       /* test hook: a submission sleeps this long holding its names (0) */
    int plan_cache_mb;       /* parsed plans handed from submissions to the worker, at most (server/plans.h) */
};

#endif
