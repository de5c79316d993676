/* auth.c -- bearer tokens. A request carries "Authorization: Bearer TOKEN";
 * the token's SHA-256 is looked up in the store, which never holds a token
 * itself. The token's name owns the jobs it submits. With --no-auth (only
 * allowed on loopback, see srv_start) every request is the admin
 * "anonymous". */
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../base/sha256.h"
#include "../storage/store.h"
#include "auth.h"
#include "state.h"

unsigned int srv_auth(struct srv *s, struct MHD_Connection *c, struct srv_req *r, const char **why)
{
    unsigned char hash[RT_SHA256_LEN];
    if (s->cfg.no_auth) {
        snprintf(r->owner, sizeof r->owner, "%s", SRV_OWNER_ANON);
        r->admin = 1;
        return 0;
    }
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7)) {
        *why = "missing bearer token (Authorization: Bearer TOKEN)";
        return MHD_HTTP_UNAUTHORIZED;
    }
    h += 7;
    while (*h == ' ') h++;
    size_t n = strlen(h);
    while (n && (h[n - 1] == ' ' || h[n - 1] == '\t')) n--;
    if (n == 0 || n > 256) {
        *why = "invalid token";
        return MHD_HTTP_UNAUTHORIZED;
    }
    if (rt_sha256(h, n, hash) != RT_OK) {
        *why = "out of memory";
        return MHD_HTTP_SERVICE_UNAVAILABLE;
    }
    if (store_token_find(s->store, hash, r->owner, &r->admin, NULL) != RT_OK) {
        *why = "invalid token";
        return MHD_HTTP_UNAUTHORIZED;
    }
    return 0;
}
