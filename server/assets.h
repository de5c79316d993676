/* assets.h -- robots and profiles (server/assets.c): loading one by name
 * (bundled, else uploaded), the rule for uploaded names, and the routes
 * /v1/robots[/NAME] and /v1/profiles[/NAME].
 *
 * Memory: srv_robot_load() and srv_profile_load() return a robot or a
 * profile that the caller frees with kin_robot_free() or
 * rtg_profile_free(). */
#ifndef RT_SRV_ASSETS_H
#define RT_SRV_ASSETS_H

#include <microhttpd.h>

#include "../base/status.h"

struct kin_robot;
struct rtg_profile;
struct srv;
struct srv_req;

/* Loads robot `name`: a bundled one, else an uploaded one. RT_ENOTFOUND. */
enum rt_status srv_robot_load(struct srv *s, const char *name, struct kin_robot **out,
                              struct rt_err *err);
/* Loads profile `name`: a bundled one, else an uploaded one. RT_ENOTFOUND. */
enum rt_status srv_profile_load(struct srv *s, const char *name, struct rtg_profile **out,
                                struct rt_err *err);
/* RT_OK when `name` may name an uploaded robot or profile: store_name_ok()
 * (1..STORE_MAX_NAME of [A-Za-z0-9_.-]), not starting with '.', not ending
 * in .urdf or .json (which the loaders would take for paths). Else
 * RT_EINVAL at `where` with "KIND name: WHY" (name NULL: "required").
 * Uploads and job submissions check names with this one rule, so every
 * uploaded name can be used. */
enum rt_status srv_name_check(const char *name, const char *kind, const char *where, struct rt_err *err);

/* GET /v1/robots, GET and PUT (admin) /v1/robots/NAME; the profiles alike.
 * Each queues its reply (errors as srv_reply_err) and returns MHD's result.
 * An upload is parsed before it is stored: a refused one stores nothing. */
enum MHD_Result srv_route_robots(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                 const char *method);
enum MHD_Result srv_route_profiles(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                   const char *method);

#endif
