/* http.h -- the daemon's two libmicrohttpd callbacks (server/http.c),
 * which server/daemon.c hands to MHD_start_daemon() with the daemon's
 * struct srv as their closure: the access handler, and the completion
 * callback that frees the request's state.
 *
 * Memory: srv_http_request() allocates a request's struct srv_req into
 * *req_cls; srv_http_completed() frees it. */
#ifndef RT_SRV_HTTP_H
#define RT_SRV_HTTP_H

#include <microhttpd.h>
#include <stddef.h>

/* MHD's access handler (MHD_AccessHandlerCallback); `cls` is the daemon's
 * struct srv. Refuses what it can on the first call, before a byte of body
 * is read; collects the body on later calls; routes on the last one.
 * Returns MHD's result of queueing the reply, or MHD_NO when out of
 * memory (MHD then closes the connection). */
enum MHD_Result srv_http_request(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls);

/* MHD_OPTION_URI_LOG_CALLBACK: called when a request line has arrived,
 * with the URL as sent (before MHD decodes it); allocates the request's
 * state (its clock starts here) and returns it for *req_cls (NULL when out
 * of memory: the access handler allocates it then). */
void *srv_http_uri(void *cls, const char *uri, struct MHD_Connection *c);

/* MHD_OPTION_NOTIFY_COMPLETED: frees the request's state in *req_cls (if
 * any) and clears it. */
void srv_http_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                        enum MHD_RequestTerminationCode toe);

#endif
