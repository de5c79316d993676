/* reply.c -- the daemon's replies and its table from rt_status to HTTP
 * status (reply.h). Each reply is one MHD response queued and released
 * here, counted in s->metrics by its status; an error reply is also one
 * log line. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "reply.h"
#include "state.h"

/* Status table: STYLE.md "Errors", plus 409 for a request that conflicts
 * with the resource's state (finished job, reused idempotency key, a
 * bundled name) and 429 for a quota used up (the active-job limit). */
unsigned int srv_http_status(int st)
{
    switch (st) {
    case RT_OK: return MHD_HTTP_OK;
    case RT_EINVAL:
    case RT_EPARSE: return MHD_HTTP_BAD_REQUEST;
    case RT_ENOTFOUND: return MHD_HTTP_NOT_FOUND;
    case RT_ELIMIT: return MHD_HTTP_CONTENT_TOO_LARGE;
    case RT_ENODEV:
    case RT_ENOMEM: return MHD_HTTP_SERVICE_UNAVAILABLE;
    case RT_ESTATE:
    case RT_ECONFLICT: return MHD_HTTP_CONFLICT;
    case RT_EBUSY: return MHD_HTTP_TOO_MANY_REQUESTS;
    default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
    }
}

/* A response for `len` bytes of malloc'd `text` (freed with it), with a
 * content type and one more header `hdr: val` (hdr NULL: none). NULL (and
 * text freed) when MHD cannot make one. */
static struct MHD_Response *make_resp(const char *type, char *text, size_t len, const char *hdr, const char *val)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, text, &free);
    if (!resp) {
        free(text);
        return NULL;
    }
    if (type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (hdr) MHD_add_response_header(resp, hdr, val);
    return resp;
}

/* The fixed 503 body for a reply that could not be printed. */
static struct MHD_Response *oom_resp(void)
{
    static const char oom[] = "{\"error\":{\"code\":\"out of memory\",\"where\":\"\",\"message\":\"out of memory\"}}";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
    if (resp) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return resp;
}

enum MHD_Result srv_resp_queue(struct srv *s, struct MHD_Connection *c, struct srv_resp *out)
{
    if (!out->resp) return MHD_NO;
    enum MHD_Result ret = MHD_queue_response(c, out->code, out->resp);
    MHD_destroy_response(out->resp);
    srv_metrics_http(&s->metrics, out->code);
    out->resp = NULL;
    return ret;
}

void srv_resp_free(struct srv_resp *out)
{
    if (!out || !out->resp) return;
    MHD_destroy_response(out->resp);
    out->resp = NULL;
}

void srv_resp_json_hdr(struct srv *s, struct srv_resp *out, unsigned int code, char *text, const char *hdr,
                       const char *val)
{
    (void)s;
    /* cJSON_free is free() unless hooks are installed; the daemon installs none. */
    if (text) {
        out->code = code;
        out->resp = make_resp("application/json", text, strlen(text), hdr, val);
    } else {
        out->code = MHD_HTTP_SERVICE_UNAVAILABLE;
        out->resp = oom_resp();
    }
}

/* The error body {"error":{"code","where","message"}} as text, and its log
 * line (STYLE.md "Errors"); NULL when out of memory. */
static char *err_text(struct srv *s, unsigned int http, const char *code, const char *where, const char *msg)
{
    cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddStringToObject(e, "where", where ? where : "");
    cJSON_AddStringToObject(e, "message", msg ? msg : "");
    if (http >= 500 || !s->cfg.quiet)
        rt_log(http >= 500 ? "error" : "warn", "http", where && where[0] ? where : "-", "%u %s", http,
               msg ? msg : "");
    char *text = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return text;
}

void srv_resp_err_http(struct srv *s, struct srv_resp *out, unsigned int http, const char *code,
                       const char *where, const char *msg)
{
    srv_resp_json_hdr(s, out, http, err_text(s, http, code, where, msg), NULL, NULL);
}

void srv_resp_err(struct srv *s, struct srv_resp *out, const struct rt_err *err)
{
    srv_resp_err_http(s, out, srv_http_status(err->code), rt_status_str(err->code), err->where, err->msg);
}

void srv_resp_text(struct srv *s, struct srv_resp *out, unsigned int code, const char *type, char *text, size_t len)
{
    (void)s;
    out->code = code;
    out->resp = make_resp(type, text, len, NULL, NULL);
}

enum MHD_Result srv_reply(struct srv *s, struct MHD_Connection *c, unsigned int code,
                          const char *type, char *text, size_t len)
{
    struct srv_resp r;
    srv_resp_text(s, &r, code, type, text, len);
    return srv_resp_queue(s, c, &r);
}

enum MHD_Result srv_reply_json_hdr(struct srv *s, struct MHD_Connection *c, unsigned int code,
                                   char *text, const char *hdr, const char *val)
{
    struct srv_resp r;
    srv_resp_json_hdr(s, &r, code, text, hdr, val);
    return srv_resp_queue(s, c, &r);
}

enum MHD_Result srv_reply_json(struct srv *s, struct MHD_Connection *c, unsigned int code,
                               cJSON *j)
{
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    return srv_reply_json_hdr(s, c, code, text, NULL, NULL);
}

enum MHD_Result srv_reply_err_hdr(struct srv *s, struct MHD_Connection *c, unsigned int http,
                                  const char *code, const char *where, const char *msg,
                                  const char *hdr, const char *val)
{
    return srv_reply_json_hdr(s, c, http, err_text(s, http, code, where, msg), hdr, val);
}

enum MHD_Result srv_reply_err_http(struct srv *s, struct MHD_Connection *c, unsigned int http,
                                   const char *code, const char *where, const char *msg)
{
    return srv_reply_err_hdr(s, c, http, code, where, msg, NULL, NULL);
}

enum MHD_Result srv_reply_err(struct srv *s, struct MHD_Connection *c, const struct rt_err *err)
{
    return srv_reply_err_http(s, c, srv_http_status(err->code), rt_status_str(err->code), err->where,
                              err->msg);
}
