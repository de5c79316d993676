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

/* POST /v1/jobs with a JSON body: checks the 201, returns the job's id (-1
 * when the reply has none). */
static inline long long http_submit(const char *body)
{
    char *resp = NULL;
    long long id = -1;
    CHECK_EQ_INT(http(NULL, "POST", "/v1/jobs", body, strlen(body), NULL, &resp), 201);
    if (resp) id = (long long)json_num(resp, "id");
    free(resp);
    return id;
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

/* Lines [from, from+n) of text (malloc'd), or NULL when it has fewer. */
static inline char *lines_of(const char *text, int from, int n)
{
    const char *p = text, *start = NULL;
    for (int i = 0; *p && i < from + n; i++) {
        if (i == from) start = p;
        const char *e = strchr(p, '\n');
        if (!e) return NULL;
        p = e + 1;
    }
    if (!start) return NULL;
    size_t len = (size_t)(p - start);
    char *out = malloc(len + 1);
    if (!out) return NULL;
    memcpy(out, start, len);
    out[len] = 0;
    return out;
}

/* The number at report.solver.batch_clips in GET /v1/jobs/ID/result, -1 if none. */
static inline int batch_clips(long long id)
{
    char url[64], *body = NULL;
    snprintf(url, sizeof url, "/v1/jobs/%lld/result?trajectory=0", id);
    if (http(NULL, "GET", url, NULL, 0, NULL, &body) != 200) {
        free(body);
        return -1;
    }
    cJSON *j = cJSON_Parse(body), *r = cJSON_GetObjectItemCaseSensitive(j, "report");
    cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "solver"), "batch_clips");
    int n = cJSON_IsNumber(v) ? v->valueint : -1;
    cJSON_Delete(j);
    free(body);
    return n;
}

/* A temporary folder /tmp/NAME.XXXXXX into dir[64] and the text of the
 * real G1 reference trajectory (malloc'd); skips the test without either. */
static inline char *ref_trajectory_in(char dir[64], const char *name)
{
    char path[512];
    snprintf(dir, 64, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(path, sizeof path, "%s/reference/g1/dance1_subject1.csv", test_data_dir());
    char *ref = test_slurp(path, NULL);
    if (!ref) TEST_SKIP("no ../shared/data/reference/g1 (set RT_SHARED_DATA)");
    return ref;
}

/* A trajectory job onto the G1 named `name`: `rows` (G1 reference
 * trajectory CSV rows) written to DIR/NAME.csv and, with `ref`, solved
 * alone by `retarget solve` into DIR/ref/NAME.csv (a failed solve is a
 * failed check). Returns the JSON submission body (cJSON_free), NULL when
 * the file cannot be written. */
static inline char *window_job(const char *dir, const char *name, const char *rows, int ref)
{
    char src[256], out[256];
    snprintf(src, sizeof src, "%s/%s.csv", dir, name);
    FILE *f = fopen(src, "wb");
    if (!f) return NULL;
    fputs(rows, f);
    fclose(f);
    if (ref) {
        snprintf(out, sizeof out, "%s/ref", dir);
        char *argv[] = {src, "--source-robot", "g1", "--robot", "g1", "-o", out, "--quiet", NULL};
        CHECK_EQ_INT(cli_solve(8, argv), 0);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "source_robot", "g1");
    cJSON_AddStringToObject(j, "robot", "g1");
    cJSON_AddStringToObject(j, "name", name);
    cJSON_AddStringToObject(j, "trajectory", rows);
    char *body = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return body;
}

/* Whether GET /v1/jobs/ID/result.csv equals DIR/ref/NAME.csv byte for byte. */
static inline int result_is_ref(long long id, const char *dir, const char *name)
{
    char url[64], *csv = NULL, ref_path[256];
    size_t len = 0;
    snprintf(url, sizeof url, "/v1/jobs/%lld/result.csv", id);
    int ok = http(NULL, "GET", url, NULL, 0, NULL, &csv) == 200;
    snprintf(ref_path, sizeof ref_path, "%s/ref/%s.csv", dir, name);
    char *want = test_slurp(ref_path, &len);
    ok = ok && csv && want && strlen(csv) == len && !memcmp(csv, want, len);
    free(csv);
    free(want);
    return ok;
}

#endif
