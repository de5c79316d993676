/* ui.h -- the web page (server/ui.c): GET / and GET /ui/FILE, the
 * single-page app of web/ that deploy/web.sh bundles at build time and the
 * build embeds in the daemon ($(B)/gen/srv_ui_files.c), or, with
 * --static-dir DIR (for working on the page), the files of DIR. No token is
 * needed for these files: the page asks for one and sends it with its API
 * calls. */
#ifndef RT_SRV_UI_H
#define RT_SRV_UI_H

#include <microhttpd.h>

struct srv;

/* Serves `url` ("/" is index.html, "/ui/NAME" the file NAME; the caller has
 * routed only those here and checked the method, GET or HEAD) with its
 * content type by extension and caching headers: a content-hashed asset
 * (every file but index.html) is cacheable for a year, immutable;
 * index.html, and every file under --static-dir, is "no-cache" with an
 * ETag, and an If-None-Match that matches it is answered 304. A NAME that
 * is not 1..128 characters of [A-Za-z0-9_.-] not starting with '.', or no
 * such file, is 404. Queues the reply and returns MHD's result. */
enum MHD_Result srv_route_ui(struct srv *s, struct MHD_Connection *c, const char *url);

#endif
