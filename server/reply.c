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

/* srv_reply() with one more header `hdr: val` (hdr NULL: none). */
static enum MHD_Result reply_hdr(struct srv *s, struct MHD_Connection *c, unsigned int code,
                                 const char *type, char *text, size_t len, const char *hdr,
                                 const char *val)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, text, &free);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    if (type) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (hdr) MHD_add_response_header(resp, hdr, val);
    enum MHD_Result ret = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    srv_metrics_http(&s->metrics, code);
    return ret;
}

enum MHD_Result srv_reply(struct srv *s, struct MHD_Connection *c, unsigned int code,
                          const char *type, char *text, size_t len)
{
    return reply_hdr(s, c, code, type, text, len, NULL, NULL);
}

enum MHD_Result srv_reply_json_hdr(struct srv *s, struct MHD_Connection *c, unsigned int code,
                                   char *text, const char *hdr, const char *val)
{
    if (!text) {
        static const char oom[] = "{\"error\":{\"code\":\"out of memory\",\"where\":\"\",\"message\":\"out of memory\"}}";
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
        if (!resp) return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
        MHD_destroy_response(resp);
        srv_metrics_http(&s->metrics, MHD_HTTP_SERVICE_UNAVAILABLE);
        return ret;
    }
    /* cJSON_free is free() unless hooks are installed; the daemon installs none. */
    return reply_hdr(s, c, code, "application/json", text, strlen(text), hdr, val);
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
    cJSON *root = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddStringToObject(e, "where", where ? where : "");
    cJSON_AddStringToObject(e, "message", msg ? msg : "");
    if (http >= 500 || !s->cfg.quiet)
        rt_log(http >= 500 ? "error" : "warn", "http", where && where[0] ? where : "-", "%u %s", http,
               msg ? msg : "");
    char *text = root ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return srv_reply_json_hdr(s, c, http, text, hdr, val);
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
