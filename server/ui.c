/* ui.c -- the web page's files (ui.h). The embedded ones are a table that
 * deploy/web.sh generates with deploy/embed.sh --keep-ext: each entry is a
 * file name and its bytes, static for the life of the process, so a reply
 * points MHD at them without a copy. With --static-dir the file is read
 * from that folder on every request, so an edited page shows on reload.
 *
 * Caching: esbuild names the script and the style sheet by their content
 * hash (web/build.mjs), so a changed file is a new URL and the old one may
 * be kept for a year; index.html, which names them, is revalidated on every
 * load ("no-cache" plus an ETag: a 304 when unchanged). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/sha256.h"
#include "../kinematics/embed.h"
#include "metrics.h"
#include "reply.h"
#include "state.h"
#include "ui.h"

/* $(B)/gen/srv_ui_files.c: the bundle's files, ending with a NULL name. */
extern const struct kin_embedded srv_ui_files[];

#define UI_MAX_NAME 128
#define UI_MAX_FILE (64u << 20) /* a file under --static-dir */

static const char *content_type(const char *name)
{
    static const struct { const char *ext, *type; } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".txt", "text/plain; charset=utf-8"},
        {".map", "application/json"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(dot, types[i].ext)) return types[i].type;
    return "application/octet-stream";
}

/* 1 when `name` may name a file of the page: 1..UI_MAX_NAME characters of
 * [A-Za-z0-9_.-], not starting with '.'. This is what keeps a URL from
 * reaching outside --static-dir (no '/', no "..", no dot files). */
static int name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > UI_MAX_NAME || name[0] == '.') return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '.' || ch == '-'))
            return 0;
    }
    return 1;
}

/* Reads DIR/name into a malloc'd buffer; RT_ENOTFOUND when it cannot be
 * opened, RT_ELIMIT past UI_MAX_FILE, RT_EIO, RT_ENOMEM. */
static enum rt_status read_static(const char *dir, const char *name, char **out, size_t *len,
                                  struct rt_err *err)
{
    char path[4096];
    char *buf = NULL;
    size_t cap = 0, n = 0;
    enum rt_status st = RT_OK;
    *out = NULL;
    *len = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return rt_err_set(err, RT_ENOTFOUND, "url", "no such resource");
    FILE *f = fopen(path, "rb");
    if (!f) return rt_err_set(err, RT_ENOTFOUND, "url", "no such resource");
    for (;;) {
        if (n == cap) {
            if (cap >= UI_MAX_FILE) {
                st = rt_err_set(err, RT_ELIMIT, "url", "%s: larger than %u bytes", name, UI_MAX_FILE);
                goto fail;
            }
            size_t ncap = cap ? cap * 2 : 65536;
            char *b = realloc(buf, ncap);
            if (!b) {
                st = rt_err_set(err, RT_ENOMEM, "url", "out of memory");
                goto fail;
            }
            buf = b;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        st = rt_err_set(err, RT_EIO, "url", "%s: %s", name, strerror(errno));
        goto fail;
    }
    fclose(f);
    *out = buf;
    *len = n;
    return RT_OK;
fail:
    fclose(f);
    free(buf);
    return st;
}

/* The ETag of `len` bytes: the first 16 bytes of their SHA-256 in hex,
 * quoted, into tag[36]. RT_ENOMEM when the digest cannot start. */
static enum rt_status etag_of(const void *data, size_t len, char tag[36])
{
    unsigned char h[RT_SHA256_LEN];
    if (rt_sha256(data, len, h) != RT_OK) return RT_ENOMEM;
    tag[0] = '"';
    for (int i = 0; i < 16; i++) snprintf(tag + 1 + 2 * i, 3, "%02x", h[i]);
    tag[33] = '"';
    tag[34] = 0;
    return RT_OK;
}

enum MHD_Result srv_route_ui(struct srv *s, struct MHD_Connection *c, const char *url)
{
    struct rt_err err;
    const char *name = !strcmp(url, "/") ? "index.html" : url + 4; /* after "/ui/" */
    const char *data = NULL;
    char *owned = NULL, tag[36];
    size_t len = 0;
    rt_err_clear(&err);
    if (!name_ok(name)) return srv_reply_err_http(s, c, MHD_HTTP_NOT_FOUND, "not found", "url", "no such resource");
    if (s->cfg.static_dir) {
        if (read_static(s->cfg.static_dir, name, &owned, &len, &err) != RT_OK) return srv_reply_err(s, c, &err);
        data = owned;
    } else {
        for (const struct kin_embedded *e = srv_ui_files; e->name && !data; e++)
            if (!strcmp(e->name, name)) data = e->text, len = e->len;
        if (!data) return srv_reply_err_http(s, c, MHD_HTTP_NOT_FOUND, "not found", "url", "no such resource");
    }
    int immutable = !s->cfg.static_dir && strcmp(name, "index.html");
    unsigned int code = MHD_HTTP_OK;
    if (!immutable) {
        if (etag_of(data, len, tag) != RT_OK) {
            free(owned);
            rt_err_set(&err, RT_ENOMEM, "url", "out of memory");
            return srv_reply_err(s, c, &err);
        }
        const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
        if (inm && strstr(inm, tag)) code = MHD_HTTP_NOT_MODIFIED;
    }
    struct MHD_Response *resp;
    if (code == MHD_HTTP_NOT_MODIFIED) {
        free(owned);
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else if (owned) {
        resp = MHD_create_response_from_buffer_with_free_callback(len, owned, &free);
        if (!resp) free(owned);
    } else {
        resp = MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_PERSISTENT);
    }
    if (!resp) return MHD_NO;
    if (code == MHD_HTTP_OK) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(name));
        MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            immutable ? "public, max-age=31536000, immutable" : "no-cache");
    if (!immutable) MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, tag);
    enum MHD_Result ret = MHD_queue_response(c, code, resp);
    MHD_destroy_response(resp);
    srv_metrics_http(&s->metrics, code);
    return ret;
}
