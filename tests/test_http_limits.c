/* test_http_limits.c -- the daemon's limits on time, connections and
 * concurrency, against the real daemon in-process:
 *   - submissions are planned off the HTTP threads: with one HTTP thread
 *     and a submission that takes 1.5 s to plan (the plan_delay_ms test
 *     hook), /v1/health answers at once; planned on the HTTP thread
 *     (--plan-threads 0, as before) it waits for the plan;
 *   - a full validation queue is 503 with Retry-After; stopping the daemon
 *     with submissions in the queue answers them (no connection is left
 *     suspended);
 *   - a robot or profile that a submission is planning with cannot be
 *     replaced (409) until the job is stored, and then the queued job
 *     keeps blocking it;
 *   - --request-timeout: a stalled body, a stalled chunked body after a
 *     chunk size of ffffffffffffffff and a trickled body are cut off at the
 *     deadline (not after --idle-timeout); slow headers get a 408;
 *   - --max-per-ip: the connection past the limit is closed at once;
 *   - one daemon per database: a second srv_start() on the same file is
 *     refused naming the holder's pid, and starts once the first stopped;
 *   - --sync: the store's PRAGMA synchronous; --sources: a clip stored as
 *     sent (raw) or packed (the default). */
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../server/assets.h"
#include "../server/srv.h"
#include "../server/state.h"
#include "db_util.h"
#include "http_raw.h"
#include "test.h"

static char dir[64];
static char *clip; /* run_forward.bvh */

static struct srv *start(struct srv_config *cfg, const char *db)
{
    struct srv *s = NULL;
    struct rt_err err;
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, db);
    cfg->listen = "127.0.0.1:0";
    cfg->db_path = strdup(path);
    cfg->backend = "cpu";
    cfg->quiet = 1;
    cfg->no_auth = 1;
    cfg->solver_threads = 1;
    cfg->batch_wait_ms = 3600000; /* accepted jobs stay queued */
    if (srv_start(cfg, &s, &err) != RT_OK) {
        char line[300];
        fprintf(stderr, "srv_start: %s\n", rt_err_line(&err, line, sizeof line));
    }
    free((char *)cfg->db_path);
    return s;
}

/* --- a submission on a thread of its own ----------------------------------- */

struct post {
    unsigned int port;
    const char *path, *body;
    size_t len;
    struct reply r;
    pthread_t t;
    double t_done;
};

static void *post_main(void *arg)
{
    struct post *p = arg;
    p->r = raw_request(p->port, "POST", p->path, NULL, NULL, p->body, p->len);
    p->t_done = rt_now();
    return NULL;
}

static void post_start(struct post *p, unsigned int port, const char *path, const char *body)
{
    memset(p, 0, sizeof *p);
    p->port = port;
    p->path = path;
    p->body = body;
    p->len = strlen(body);
    pthread_create(&p->t, NULL, post_main, p);
}

static long post_join(struct post *p)
{
    pthread_join(p->t, NULL);
    long st = p->r.status;
    reply_free(&p->r);
    return st;
}

/* Seconds one GET /v1/health takes; its status in *st. */
static double health_time(unsigned int port, long *st)
{
    double t0 = rt_now();
    struct reply r = raw_request(port, "GET", "/v1/health", NULL, NULL, NULL, 0);
    *st = r.status;
    reply_free(&r);
    return rt_now() - t0;
}

/* Waits (up to 5 s) until `kind` `name` is held by a submission. */
static int wait_held(struct srv *s, const char *kind, const char *name)
{
    for (int i = 0; i < 500; i++) {
        if (srv_asset_held(s, kind, name) > 0) return 1;
        usleep(10000);
    }
    return 0;
}

static void test_off_http_threads(void)
{
    for (int inline_plan = 1; inline_plan >= 0; inline_plan--) {
        struct srv_config cfg;
        srv_config_default(&cfg);
        cfg.threads = 1; /* one HTTP thread serves every connection */
        cfg.plan_threads = inline_plan ? 0 : 2;
        cfg.plan_delay_ms = 1500;
        struct srv *s = start(&cfg, inline_plan ? "inline.db" : "pool.db");
        CHECK(s != NULL);
        if (!s) return;
        struct post p;
        char path[] = "/v1/jobs?robot=g1&name=slow";
        post_start(&p, srv_port(s), path, clip);
        CHECK(wait_held(s, "robot", "g1"));
        long st = 0;
        double dt = health_time(srv_port(s), &st);
        CHECK_EQ_INT(st, 200);
        if (inline_plan) {
            /* As before: the health check waited for the plan. */
            CHECK(dt > 0.5);
        } else {
            CHECK(dt < 0.5);
            if (dt >= 0.5) fprintf(stderr, "  /v1/health took %.3f s while a submission was planned\n", dt);
        }
        CHECK_EQ_INT(post_join(&p), 201);
        srv_stop(s);
    }
}

static void test_pool_full_and_stop(void)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.plan_threads = 1;
    cfg.plan_queue = 1;
    cfg.plan_delay_ms = 1000;
    struct srv *s = start(&cfg, "full.db");
    CHECK(s != NULL);
    if (!s) return;
    struct post a, b, c;
    post_start(&a, srv_port(s), "/v1/jobs?robot=g1&name=a", clip);
    CHECK(wait_held(s, "robot", "g1")); /* a is planning */
    post_start(&b, srv_port(s), "/v1/jobs?robot=g1&name=b", clip);
    usleep(200000); /* b waits in the queue */
    struct reply r = raw_request(srv_port(s), "POST", "/v1/jobs?robot=g1&name=c", NULL, NULL, clip, strlen(clip));
    CHECK_EQ_INT(r.status, 503);
    CHECK(r.head && strstr(r.head, "Retry-After: 1"));
    CHECK(r.body && strstr(r.body, "\"code\":\"busy\""));
    reply_free(&r);
    /* Stop while a is planning and b is queued: both are answered. */
    post_start(&c, srv_port(s), "/v1/jobs?robot=g1&name=c2", clip);
    usleep(50000);
    srv_stop(s);
    CHECK_EQ_INT(post_join(&a), 201);
    CHECK_EQ_INT(post_join(&b), 201);
    long sc = post_join(&c);
    CHECK(sc == 201 || sc == 503 || sc == 0); /* queued before the stop, refused, or not accepted at all */
}

static void test_replace_while_planned(void)
{
    struct srv_config cfg;
    size_t g1_len = 0, h1_len = 0;
    char *g1 = test_slurp("robots/g1.urdf", &g1_len), *h1 = test_slurp("robots/h1.urdf", &h1_len);
    CHECK(g1 && h1);
    if (!g1 || !h1) return;
    srv_config_default(&cfg);
    cfg.plan_delay_ms = 1000;
    struct srv *s = start(&cfg, "replace.db");
    CHECK(s != NULL);
    if (!s) return;
    unsigned int port = srv_port(s);
    struct reply r = raw_request(port, "PUT", "/v1/robots/lab", NULL, NULL, g1, g1_len);
    CHECK_EQ_INT(r.status, 201);
    reply_free(&r);
    struct post p;
    post_start(&p, port, "/v1/jobs?robot=lab&profile=games105_g1&name=on_lab", clip);
    CHECK(wait_held(s, "robot", "lab"));
    CHECK_EQ_INT(srv_asset_held(s, "profile", "games105_g1"), 1);
    /* Issue 15 item 4: a PUT while the job is validated on the old robot. */
    r = raw_request(port, "PUT", "/v1/robots/lab", NULL, NULL, h1, h1_len);
    CHECK_EQ_INT(r.status, 409);
    CHECK(r.body && strstr(r.body, "being validated"));
    reply_free(&r);
    CHECK_EQ_INT(post_join(&p), 201);
    CHECK_EQ_INT(srv_asset_held(s, "robot", "lab"), 0);
    /* Stored and queued, the job keeps the robot from being replaced. */
    r = raw_request(port, "PUT", "/v1/robots/lab", NULL, NULL, h1, h1_len);
    CHECK_EQ_INT(r.status, 409);
    CHECK(r.body && strstr(r.body, "queued or running job(s) use robot 'lab'"));
    reply_free(&r);
    r = raw_request(port, "DELETE", "/v1/jobs/1", NULL, NULL, NULL, 0);
    CHECK_EQ_INT(r.status, 200);
    reply_free(&r);
    r = raw_request(port, "PUT", "/v1/robots/lab", NULL, NULL, h1, h1_len);
    CHECK_EQ_INT(r.status, 201);
    reply_free(&r);
    /* A failed submission releases what it held. */
    r = raw_request(port, "POST", "/v1/jobs?robot=lab&profile=nosuch", NULL, NULL, clip, strlen(clip));
    CHECK_EQ_INT(r.status, 404);
    reply_free(&r);
    CHECK_EQ_INT(srv_asset_held(s, "robot", "lab"), 0);
    CHECK_EQ_INT(srv_asset_held(s, "profile", "nosuch"), 0);
    /* The hold itself, without a submission. */
    struct rt_err err;
    CHECK_EQ_INT(srv_asset_hold(s, "profile", "studio", &err), RT_OK);
    size_t plen = 0;
    char *prof = test_slurp("profiles/games105_g1.json", &plen);
    r = raw_request(port, "PUT", "/v1/profiles/studio", NULL, NULL, prof, plen);
    CHECK_EQ_INT(r.status, 409);
    reply_free(&r);
    srv_asset_release(s, "profile", "studio");
    r = raw_request(port, "PUT", "/v1/profiles/studio", NULL, NULL, prof, plen);
    CHECK_EQ_INT(r.status, 201);
    reply_free(&r);
    free(prof);
    srv_stop(s);
    free(g1);
    free(h1);
}

/* Seconds until the daemon closes fd (or 30 s); the reply, if any, in *st. */
static double until_closed(int fd, long *st)
{
    double t0 = rt_now();
    struct reply r = raw_read(fd, 30000);
    *st = r.status;
    reply_free(&r);
    return rt_now() - t0;
}

static void test_deadlines(void)
{
    struct srv_config cfg;
    srv_config_default(&cfg);
    cfg.request_timeout_s = 2;
    cfg.idle_timeout_s = 30;
    cfg.max_per_ip = 4;
    cfg.max_body = 1u << 20;
    struct srv *s = start(&cfg, "deadline.db");
    CHECK(s != NULL);
    if (!s) return;
    unsigned int port = srv_port(s);
    long st = 0;
    const char head[] = "POST /v1/jobs?robot=g1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789";
    /* A body that stalls: closed at the deadline, not after 30 s idle. */
    int fd = raw_connect(port);
    raw_send(fd, head, sizeof head - 1);
    double dt = until_closed(fd, &st);
    CHECK(dt < 5.0);
    CHECK(dt > 1.0);
    if (dt >= 5.0) fprintf(stderr, "  stalled body closed after %.1f s\n", dt);
    /* Issue 15 item 6: a chunk size of ffffffffffffffff, then nothing. */
    const char chunked[] = "POST /v1/jobs?robot=g1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "ffffffffffffffff\r\nHIER";
    fd = raw_connect(port);
    raw_send(fd, chunked, sizeof chunked - 1);
    dt = until_closed(fd, &st);
    CHECK(dt < 5.0);
    if (dt >= 5.0) fprintf(stderr, "  huge chunk closed after %.1f s\n", dt);
    /* A trickled body: each byte resets MHD's idle timer, the deadline
     * does not move. */
    fd = raw_connect(port);
    raw_send(fd, head, sizeof head - 1);
    double t0 = rt_now();
    int sent = 0;
    for (int i = 0; i < 20 && rt_now() - t0 < 8; i++) {
        usleep(400000);
        if (raw_send(fd, "x", 1) != 0) break;
        sent++;
    }
    dt = until_closed(fd, &st);
    CHECK(rt_now() - t0 < 6.0);
    CHECK(sent < 15);
    CHECK_EQ_INT(st, 0); /* closed without a reply: MHD takes none mid-body */
    /* Headers that take longer than the deadline: 408, as JSON. */
    fd = raw_connect(port);
    const char slow[] = "GET /v1/health HTTP/1.1\r\nHost: x\r\n";
    raw_send(fd, slow, sizeof slow - 1);
    for (int i = 0; i < 6; i++) {
        usleep(500000);
        raw_send(fd, "X-Slow: 1\r\n", 11);
    }
    raw_send(fd, "\r\n", 2);
    struct reply r = raw_read(fd, 10000);
    CHECK_EQ_INT(r.status, 408);
    CHECK(r.body && strstr(r.body, "\"where\":\"request\""));
    reply_free(&r);
    /* A chunked body past --max-body: 413 at its end. */
    {
        size_t n = (1u << 20) + 1024;
        char *req = malloc(n + 256);
        int k = sprintf(req, "POST /v1/jobs?robot=g1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n", n);
        memset(req + k, 'x', n);
        memcpy(req + k + n, "\r\n0\r\n\r\n", 7);
        fd = raw_connect(port);
        raw_send(fd, req, (size_t)k + n + 7);
        r = raw_read(fd, 10000);
        CHECK_EQ_INT(r.status, 413);
        reply_free(&r);
        free(req);
    }
    /* --max-per-ip 4: of five connections held open at once, one is
     * closed by the daemon without a reply (which one depends on the
     * order MHD accepts them in), the other four are served. */
    {
        int c5[5], served = 0, refused = 0;
        for (int i = 0; i < 5; i++) {
            c5[i] = raw_connect(port);
            usleep(100000);
        }
        for (int i = 0; i < 5; i++) {
            if (c5[i] < 0) {
                refused++;
                continue;
            }
            raw_send(c5[i], "GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 55);
            r = raw_read(c5[i], 3000);
            if (r.status == 200) served++;
            else if (r.status == 0) refused++;
            reply_free(&r);
        }
        CHECK_EQ_INT(served, 4);
        CHECK_EQ_INT(refused, 1);
    }
    usleep(200000);
    CHECK(health_time(port, &st) < 1.0);
    CHECK_EQ_INT(st, 200);
    srv_stop(s);
}

/* POSTs the clip to the daemon on `port` and returns how db `path` stored
 * it (test_stored_clip(): "" as sent, "zstd" packed, "?" no such job). */
static void post_and_encoding(unsigned int port, const char *path, char *enc, size_t cap)
{
    struct reply r = raw_request(port, "POST", "/v1/jobs?robot=g1&name=enc", NULL, NULL, clip, strlen(clip));
    CHECK_EQ_INT(r.status, 201);
    cJSON *j = r.body ? cJSON_Parse(r.body) : NULL;
    long long id = (long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "id"));
    cJSON_Delete(j);
    reply_free(&r);
    int len;
    test_stored_clip(path, id, &len, enc, cap);
}

static void test_one_daemon_per_db(void)
{
    struct srv_config a, b;
    struct rt_err err;
    struct srv *s2 = NULL;
    char path[128], want[64];
    srv_config_default(&a);
    srv_config_default(&b);
    a.sync_full = 0;
    a.sources_raw = 1;
    struct srv *s1 = start(&a, "one.db");
    CHECK(s1 != NULL);
    if (!s1) return;
    CHECK_EQ_INT(store_synchronous(s1->store), 1); /* --sync normal */
    snprintf(path, sizeof path, "%s/one.db", dir);
    char enc[16];
    post_and_encoding(srv_port(s1), path, enc, sizeof enc);
    CHECK_EQ_STR(enc, ""); /* --sources raw */
    b.listen = "127.0.0.1:0";
    b.db_path = path;
    b.backend = "cpu";
    b.quiet = 1;
    b.no_auth = 1;
    CHECK_EQ_INT(srv_start(&b, &s2, &err), RT_ESTATE);
    CHECK(s2 == NULL);
    snprintf(want, sizeof want, "pid %ld", (long)getpid());
    CHECK(strstr(err.msg, want) != NULL);
    CHECK(strstr(err.msg, "one daemon per database") != NULL);
    srv_stop(s1);
    CHECK_EQ_INT(srv_start(&b, &s2, &err), RT_OK);
    if (s2) {
        CHECK_EQ_INT(store_synchronous(s2->store), 2); /* --sync full, the default */
        post_and_encoding(srv_port(s2), path, enc, sizeof enc);
        CHECK_EQ_STR(enc, "zstd"); /* --sources packed, the default */
    }
    srv_stop(s2);
}

/* Rows written before names were checked, or a result that is not finite
 * (which no input accepted now can produce): every reply is still valid
 * JSON -- the name repaired ('?' for each stray byte), the result refused
 * as a corrupt row (500, as JSON). */
static void test_stored_rows(void)
{
    struct srv_config cfg;
    struct rt_err err;
    srv_config_default(&cfg);
    struct srv *s = start(&cfg, "rows.db");
    CHECK(s != NULL);
    if (!s) return;
    unsigned int port = srv_port(s);
    struct store_job_new n;
    memset(&n, 0, sizeof n);
    n.owner = SRV_OWNER_ANON;
    n.name = "old\xff\xc3name";
    n.idem_key = "key\xfe";
    n.robot = "g1";
    n.options = "{}";
    n.class_key = "g1|x|bvh||{}";
    n.clip = "HIERARCHY";
    n.clip_len = 9;
    n.frames = 2;
    int64_t id = 0;
    int existed = 0, claimed = 0, stored = 0;
    CHECK_EQ_INT(store_job_insert(s->store, &n, &id, &existed, &err), RT_OK);
    CHECK_EQ_INT(store_job_claim(s->store, id, &claimed, &err), RT_OK);
    float traj[2 * 8] = {0};
    traj[5] = INFINITY;
    CHECK_EQ_INT(store_job_finish(s->store, id, 2, 8, "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\"]", traj, "{}", 1, 0.5, 0.1, 1, &stored, &err), RT_OK);
    struct reply r = raw_request(port, "GET", "/v1/jobs", NULL, NULL, NULL, 0);
    CHECK_EQ_INT(r.status, 200);
    CHECK(r.body && strstr(r.body, "\"name\":\"old??name\"") && strstr(r.body, "\"idempotency_key\":\"key?\""));
    cJSON *list = r.body ? cJSON_Parse(r.body) : NULL;
    CHECK(list != NULL);
    cJSON_Delete(list);
    reply_free(&r);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/result", (long long)id);
    r = raw_request(port, "GET", path, NULL, NULL, NULL, 0);
    CHECK_EQ_INT(r.status, 500);
    CHECK(r.body && strstr(r.body, "not finite"));
    cJSON *j = r.body ? cJSON_Parse(r.body) : NULL;
    CHECK(j != NULL);
    cJSON_Delete(j);
    reply_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld/result.csv", (long long)id);
    r = raw_request(port, "GET", path, NULL, NULL, NULL, 0);
    CHECK_EQ_INT(r.status, 500);
    reply_free(&r);
    srv_stop(s);
}

int main(void)
{
    char path[512];
    snprintf(dir, sizeof dir, "/tmp/test_http_limits.XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(path, sizeof path, "%s/clips/run_forward.bvh", test_data_dir());
    if (!(clip = test_slurp(path, NULL))) TEST_SKIP("no ../shared/data/clips (set RT_SHARED_DATA)");
    test_off_http_threads();
    test_pool_full_and_stop();
    test_replace_while_planned();
    test_deadlines();
    test_one_daemon_per_db();
    test_stored_rows();
    free(clip);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    return test_report("test_http_limits");
}
