/* http_util.h -- helpers of the test_http_* tests: start the real daemon
 * in-process on 127.0.0.1:0 (srv_start; the port read back with
 * MHD_DAEMON_INFO_BIND_PORT inside it), speak HTTP with libcurl through the
 * client's own cli_http(), poll a job. Files are read with test.h's
 * test_slurp(). */
#ifndef RT_TEST_HTTP_UTIL_H
#define RT_TEST_HTTP_UTIL_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../clients/cli.h"
#include "../server/srv.h"
#include "test.h"

static char http_url[64];

static inline struct srv *http_start(struct srv_config *cfg)
{
    struct srv *s = NULL;
    struct rt_err err;
    cfg->listen = "127.0.0.1:0";
    cfg->threads = 4;
    cfg->quiet = 1;
    cfg->backend = "cpu";
    if (srv_start(cfg, &s, &err) != RT_OK) {
        char line[300];
        fprintf(stderr, "srv_start: %s\n", rt_err_line(&err, line, sizeof line));
        return NULL;
    }
    snprintf(http_url, sizeof http_url, "http://127.0.0.1:%u", srv_port(s));
    return s;
}

/* One request; returns the HTTP status (0 when unreachable); *out gets the
 * body (caller frees) when out is non-NULL. */
static inline long http(const char *token, const char *method, const char *path, const char *body,
                 size_t len, const char *header, char **out)
{
    struct cli_server srv = {http_url, token};
    long code = 0;
    char *resp = NULL;
    if (cli_http(&srv, method, path, "application/json", body, len, header, &code, &resp, NULL, NULL) != RT_OK)
        code = 0;
    if (out) *out = resp;
    else free(resp);
    return code;
}

static inline double json_num(const char *text, const char *k)
{
    cJSON *j = cJSON_Parse(text);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    double x = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(j);
    return x;
}

/* The string at error.FIELD of an error reply, into out[cap]. */
static inline const char *err_field(const char *text, const char *field, char *out, size_t cap)
{
    cJSON *j = cJSON_Parse(text);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"), field);
    snprintf(out, cap, "%s", cJSON_IsString(v) ? v->valuestring : "");
    cJSON_Delete(j);
    return out;
}

/* One request whose reply must be an error: status `code`, error.where
 * equal to `where` and error.message containing `msg` (either check
 * skipped when NULL). A failed check also names the request. */
static inline void http_expect_error(const char *token, const char *method, const char *path, const char *body,
                                     size_t len, long code, const char *where, const char *msg)
{
    char *resp = NULL, buf[512];
    int failed = test_failed;
    CHECK_EQ_INT(http(token, method, path, body, len, NULL, &resp), code);
    if (where) CHECK_EQ_STR(err_field(resp, "where", buf, sizeof buf), where);
    if (msg) CHECK(strstr(err_field(resp, "message", buf, sizeof buf), msg) != NULL);
    if (test_failed != failed) fprintf(stderr, "  in %s %s: reply %s\n", method, path, resp ? resp : "(none)");
    free(resp);
}

/* Polls GET /v1/jobs/ID until it leaves queued/running (or ~30 s); returns
 * the final state into state[16]. */
static inline void http_wait(const char *token, long long id, char state[16])
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    state[0] = 0;
    for (int i = 0; i < 1500; i++) {
        char *body = NULL;
        http(token, "GET", path, NULL, 0, NULL, &body);
        cJSON *j = body ? cJSON_Parse(body) : NULL;
        cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "state");
        snprintf(state, 16, "%s", cJSON_IsString(st) ? st->valuestring : "?");
        cJSON_Delete(j);
        free(body);
        if (strcmp(state, "queued") && strcmp(state, "running")) return;
        usleep(20000);
    }
}

/* A JSON submission body for BVH text. */
static inline char *job_body(const char *robot, const char *name, const char *clip, int max_lm)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "robot", robot);
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "clip", clip);
    if (max_lm >= 0) cJSON_AddNumberToObject(cJSON_AddObjectToObject(j, "options"), "max_lm_iters", max_lm);
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return t;
}

#endif
