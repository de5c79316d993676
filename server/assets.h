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

/* Robots and profiles in use by submissions being planned. A submission
 * holds every name it plans with (robot, source robot, profile) from
 * before it loads them until its job row is written (or it fails); from
 * then on the stored job itself blocks a replacement (store_asset_put). A
 * PUT of a held name is RT_ECONFLICT, like one of a name that queued jobs
 * use; a submission that arrives while a PUT of its name is being stored
 * waits for it (a PUT takes no longer than one SQLite write) and then
 * plans with the new text. So a job always runs on the robot and profile
 * it was validated on.
 *
 * srv_inuse_init() makes the (empty) table into s->inuse, srv_inuse_free()
 * frees it (NULL-safe). srv_asset_hold() is RT_ENOMEM when the table
 * cannot grow; srv_asset_release() undoes one hold; srv_asset_held() is
 * how many holds `name` has (a test hook). kind is "robot" or "profile". */
enum rt_status srv_inuse_init(struct srv *s, struct rt_err *err);
void srv_inuse_free(struct srv *s);
enum rt_status srv_asset_hold(struct srv *s, const char *kind, const char *name, struct rt_err *err);
void srv_asset_release(struct srv *s, const char *kind, const char *name);
int srv_asset_held(struct srv *s, const char *kind, const char *name);

/* GET /v1/robots, GET and PUT (admin) /v1/robots/NAME; the profiles alike.
 * Each queues its reply (errors as srv_reply_err) and returns MHD's result.
 * An upload is parsed before it is stored: a refused one stores nothing; a
 * name held by a submission being planned is 409 (see srv_asset_hold). */
enum MHD_Result srv_route_robots(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                 const char *method);
enum MHD_Result srv_route_profiles(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                   const char *method);

#endif
