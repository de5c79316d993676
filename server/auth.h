/* auth.h -- bearer-token authentication of a request (server/auth.c):
 * who sends it (the token's name, which owns the jobs it submits) and
 * whether it may change robots and profiles. */
#ifndef RT_SRV_AUTH_H
#define RT_SRV_AUTH_H

struct MHD_Connection;
struct srv;
struct srv_req;

/* Authenticates the request's bearer token into req->owner / req->admin.
 * Returns 0, or 401 (no or unknown token) or 503 (no memory to hash it)
 * with *why set to a static phrase for the reply. */
unsigned int srv_auth(struct srv *s, struct MHD_Connection *c, struct srv_req *r, const char **why);

#endif
