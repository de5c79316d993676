/* reply.h -- how the daemon answers: text, JSON and error replies queued
 * on a libmicrohttpd connection, and the one table from rt_status to HTTP
 * status (STYLE.md "Errors"). Every reply is counted in the metrics
 * (metrics.h) by its status. Error bodies are
 * {"error":{"code":..,"where":..,"message":..}}. Each function returns
 * MHD's result of queueing the reply (MHD_NO when none could be made).
 *
 * Memory: a reply function owns the text or cJSON tree it is given from
 * the call on, in every case: MHD frees the text with the response, or the
 * reply function frees it when no response could be made. */
#ifndef RT_SRV_REPLY_H
#define RT_SRV_REPLY_H

#include <microhttpd.h>
#include <stddef.h>

#include "../base/status.h"

struct cJSON;
struct srv;

/* Queues `len` bytes of malloc'd `text` (MHD frees it with free()) with
 * `code` and content type `type`; counts it in the metrics. */
enum MHD_Result srv_reply(struct srv *s, struct MHD_Connection *c, unsigned int code,
                          const char *type, char *text, size_t len);

/* Queues cJSON tree `j` (may be NULL) as JSON with `code`; `j` is deleted
 * here in every case. When it cannot be printed (out of memory) a fixed 503
 * error body goes instead. Returns MHD's result of queueing. */
enum MHD_Result srv_reply_json(struct srv *s, struct MHD_Connection *c, unsigned int code,
                               struct cJSON *j);

/* Queues malloc'd JSON text `text` (MHD frees it with free()) with `code`
 * and one more header `hdr: val` (hdr NULL: none). A NULL `text` (printing
 * it ran out of memory) queues the fixed 503 error body of srv_reply_json()
 * instead, without the header. srv_reply_json() and the error replies
 * use it. */
enum MHD_Result srv_reply_json_hdr(struct srv *s, struct MHD_Connection *c, unsigned int code,
                                   char *text, const char *hdr, const char *val);

/* Queues {"error":{"code","where","message"}} with the HTTP status of
 * err->code (srv_http_status). */
enum MHD_Result srv_reply_err(struct srv *s, struct MHD_Connection *c, const struct rt_err *err);

/* As srv_reply_err with an explicit HTTP status and code name (401, 403).
 * Every error reply is also one log line, "warn http: WHERE: HTTP MSG"
 * ("error" from 500 up; quiet daemons log only those). */
enum MHD_Result srv_reply_err_http(struct srv *s, struct MHD_Connection *c, unsigned int http,
                                   const char *code, const char *where, const char *msg);

/* srv_reply_err_http() carrying header `hdr: val` (hdr NULL: none): 401
 * says how to authenticate (RFC 9110 11.6.1: WWW-Authenticate), 405 which
 * methods the resource takes (15.5.6: Allow). */
enum MHD_Result srv_reply_err_hdr(struct srv *s, struct MHD_Connection *c, unsigned int http,
                                  const char *code, const char *where, const char *msg,
                                  const char *hdr, const char *val);

/* A reply made but not queued yet: the submission route builds it on a
 * validation thread (http.c) and the connection queues it when MHD calls
 * back after MHD_resume_connection(). resp NULL: none could be made (out
 * of memory). */
struct MHD_Response;
struct srv_resp {
    unsigned int code;
    struct MHD_Response *resp;
};

/* Make a reply into `out` as srv_reply_json_hdr() and srv_reply_err() would
 * queue it (the error reply is logged here, when it is made). `text` is
 * owned from the call on. Safe from any thread. */
void srv_resp_json_hdr(struct srv *s, struct srv_resp *out, unsigned int code, char *text, const char *hdr,
                       const char *val);
void srv_resp_err(struct srv *s, struct srv_resp *out, const struct rt_err *err);
/* srv_reply()'s reply, made (`text` owned from the call on). */
void srv_resp_text(struct srv *s, struct srv_resp *out, unsigned int code, const char *type, char *text, size_t len);
void srv_resp_err_http(struct srv *s, struct srv_resp *out, unsigned int http, const char *code,
                       const char *where, const char *msg);

/* Queues out->resp on `c`, counts it in the metrics and releases it (out
 * is emptied). MHD_NO when there is none or MHD refuses it. Only on the
 * connection's own thread (MHD's access handler). */
enum MHD_Result srv_resp_queue(struct srv *s, struct MHD_Connection *c, struct srv_resp *out);

/* Releases a reply that was never queued (NULL-safe, idempotent). */
void srv_resp_free(struct srv_resp *out);

/* The HTTP status for an rt_status: EINVAL, EPARSE 400; ENOTFOUND 404;
 * ELIMIT 413; EBUSY 429; ENODEV, ENOMEM 503; ESTATE, ECONFLICT 409;
 * anything else 500. */
unsigned int srv_http_status(int st);

#endif
