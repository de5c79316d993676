/* fuzz_http.c -- libFuzzer target for what the daemon reads out of a
 * request before anything else touches it (server/parse.h): the route of a
 * URL, the query parameters, strict JSON, a job submission in either body
 * form, job names and idempotency keys. An input is three parts split at
 * its first two newlines -- the URL path, the query string (split at '&'
 * and '=' and %-decoded as libmicrohttpd does), the body. The checks: never
 * a crash, a sanitizer report or a leak; every failure says where and
 * what; a body that passes strict JSON prints back to text that passes it
 * again and is UTF-8; a submission that passes has a robot and a source
 * (joint positions with their format, a base64 one decoded, the .npy
 * names one a line), with the body's length picking its Content-Type; a
 * stored job name is UTF-8 of at most 120 characters and 480 bytes, with no
 * separator, quote or control character and no leading '.'.
 * Built and run by `make fuzz`. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "../server/parse.h"
#include "../server/state.h"
#include "../storage/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* In-place %-decoding and '+' to ' ', as MHD does for arguments. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '+') *w++ = ' ';
        else if (*r == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0) {
            *w++ = (char)(hexval(r[1]) * 16 + hexval(r[2]));
            r += 2;
        } else *w++ = *r;
    }
    *w = 0;
}

static void check_err(const struct rt_err *err)
{
    if (err->code >= 0 || !err->where[0] || !err->msg[0]) abort();
}

static void check_name(const char *given)
{
    char out[SRV_JOB_NAME_BYTES + 1];
    struct rt_err err = {0};
    if (srv_job_name(given, "body.name", out, &err) != RT_OK) {
        check_err(&err);
        return;
    }
    size_t n = strlen(out);
    if (!n || n > SRV_JOB_NAME_BYTES || !rt_utf8_valid(out, n, NULL) || out[0] == '.') abort();
    if (rt_utf8_prefix(out, n, SRV_JOB_MAX_NAME) != n) abort(); /* at most 120 characters */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '"') abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    const char *nl1 = memchr(p, '\n', size);
    const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(end - nl1 - 1)) : NULL;
    size_t ul = nl1 ? (size_t)(nl1 - p) : size;
    const char *qs = nl1 ? nl1 + 1 : end;
    size_t ql = nl2 ? (size_t)(nl2 - qs) : (size_t)(end - qs);
    const char *body = nl2 ? nl2 + 1 : end;
    size_t bl = (size_t)(end - body);

    /* The URL, as MHD passes it: a C string. */
    char *url = malloc(ul + 1);
    memcpy(url, p, ul);
    url[ul] = 0;
    struct srv_req r;
    memset(&r, 0, sizeof r);
    int route = srv_route_parse(url, &r);
    if (route < 0 || route > SRV_R_OPENAPI || (route && route != r.route)) abort();
    if ((route == SRV_R_ROBOT || route == SRV_R_PROFILE || route == SRV_R_ROBOT_URDF) &&
        strlen(r.name) > STORE_MAX_NAME)
        abort();
    if ((route == SRV_R_JOB || route == SRV_R_RESULT || route == SRV_R_RESULT_CSV || route == SRV_R_RESULT_NPZ ||
         route == SRV_R_SOURCE) &&
        r.id <= 0)
        abort();
    free(url);

    /* The query: key=value pairs, at most SRV_QUERY_MAX kept. */
    char *qbuf = malloc(ql + 1);
    memcpy(qbuf, qs, ql);
    qbuf[ql] = 0;
    struct srv_query q;
    memset(&q, 0, sizeof q);
    for (char *s = qbuf, *next; ql && s; s = next) {
        next = strchr(s, '&');
        if (next) *next++ = 0;
        char *eq = strchr(s, '=');
        if (eq) *eq++ = 0;
        unescape(s);
        if (eq) unescape(eq);
        if (q.n == SRV_QUERY_MAX) {
            q.overflow = 1;
            break;
        }
        q.key[q.n] = s;
        q.val[q.n++] = eq ? eq : "";
    }
    static const char *const known[] = {"robot", "profile", "name", NULL};
    struct rt_err err = {0};
    if (srv_query_check(&q, known, &err) != RT_OK) check_err(&err);
    const char *key = NULL;
    memset(&err, 0, sizeof err);
    if (q.n && srv_idem_key(q.val[0], &key, &err) != RT_OK) check_err(&err);
    if (key && (strlen(key) > SRV_MAX_KEY || !rt_utf8_valid(key, strlen(key), NULL))) abort();
    if (q.n) check_name(q.val[0]);

    /* The body as strict JSON: what passes prints back to what passes. */
    cJSON *root = NULL;
    memset(&err, 0, sizeof err);
    if (srv_json_parse(body, bl, "body", 1, &root, &err) == RT_OK) {
        char *text = cJSON_PrintUnformatted(root);
        cJSON *again = NULL;
        struct rt_err e2 = {0};
        if (!text || !rt_utf8_valid(text, strlen(text), NULL) ||
            srv_json_parse(text, strlen(text), "again", 1, &again, &e2) != RT_OK)
            abort();
        cJSON_Delete(again);
        cJSON_free(text);
        cJSON_Delete(root);
    } else {
        check_err(&err);
        if (root) abort();
    }

    /* The submission: with a query (or a joint-position content type,
     * picked by the body's length) the raw form, else the JSON form. */
    static const char *const types[] = {NULL, NULL, "application/x-npy", "application/zip; x=1", "TEXT/CSV"};
    struct srv_submit sub;
    memset(&err, 0, sizeof err);
    root = NULL;
    /* srv_submit_parse decodes the clip in place: a copy of the body. */
    char *mut = malloc(bl + 1);
    memcpy(mut, body, bl);
    mut[bl] = 0;
    if (srv_submit_parse(mut, bl, q.n || q.overflow ? &q : NULL, types[bl % 5], &sub, &root, &err) == RT_OK) {
        if (!sub.robot || !sub.source || !sub.where_robot) abort();
        /* Only a joint-position source may be binary (base64-decoded). */
        if (!sub.raw && sub.kind != STORE_SRC_JOINTS && sub.source_len != strlen(sub.source)) abort();
        if (sub.kind == STORE_SRC_CSV && !sub.source_robot) abort();
        if (sub.kind == STORE_SRC_JOINTS && (!sub.joint_format || !sub.where_source)) abort();
        if (sub.joint_names && sub.joint_names_len != strlen(sub.joint_names)) abort();
        check_name(sub.name);
        if (!sub.raw && sub.kind != STORE_SRC_JOINTS) {
            /* The clip decoded in place is cJSON's string, byte for byte. */
            cJSON *whole = NULL;
            struct rt_err e3 = {0};
            if (srv_json_parse(body, bl, "body", 1, &whole, &e3) != RT_OK) abort();
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(whole, sub.kind == STORE_SRC_CSV ? "trajectory" : "clip");
            if (!cJSON_IsString(v) || strcmp(v->valuestring, sub.source)) abort();
            cJSON_Delete(whole);
        }
    } else {
        check_err(&err);
    }
    srv_submit_free(&sub);
    cJSON_Delete(root);
    free(mut);
    free(qbuf);
    return 0;
}
