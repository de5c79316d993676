/* assets.c -- robots and profiles: the bundled ones compiled into the
 * library and the ones admins upload (PUT /v1/robots/NAME with URDF or
 * MJCF text, PUT /v1/profiles/NAME with profile JSON). The robot reader is
 * picked by the root element; an uploaded MJCF may not <include> (an
 * upload has no folder to resolve it against). An upload is parsed before it
 * is stored, so a stored robot or profile always loads; a bundled name
 * cannot be replaced. Names never reach a file path: kin_robot_load() and
 * rtg_profile_load() are called with bundled names only. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/robot.h"
#include "../retarget/profile.h"
#include "../storage/store.h"
#include "assets.h"
#include "parse.h"
#include "plans.h"
#include "reply.h"
#include "state.h"

static int in_list(const char *const *names, const char *name)
{
    for (int i = 0; names && names[i]; i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

/* 1 when `name` is a bundled robot / profile (which uploads cannot replace). */
static int is_bundled_robot(const char *name) { return in_list(kin_robot_bundled(), name); }
static int is_bundled_profile(const char *name) { return in_list(rtg_profile_bundled(), name); }

enum rt_status srv_robot_load(struct srv *s, const char *name, struct kin_robot **out,
                              struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    if (is_bundled_robot(name)) return kin_robot_load(name, out, err);
    enum rt_status st = store_asset_get(s->store, "robot", name, &text, &len, err);
    if (st == RT_ENOTFOUND) rt_err_set(err, st, "robot", "no robot named '%s'", RT_QUOTE(name));
    if (st != RT_OK) return st;
    st = kin_robot_parse(text, len, name, NULL, out, err);
    free(text);
    return st;
}

enum rt_status srv_profile_load(struct srv *s, const char *name, struct rtg_profile **out,
                                struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    if (is_bundled_profile(name)) return rtg_profile_load(name, out, err);
    enum rt_status st = store_asset_get(s->store, "profile", name, &text, &len, err);
    if (st == RT_ENOTFOUND) rt_err_set(err, st, "profile", "no profile named '%s'", RT_QUOTE(name));
    if (st != RT_OK) return st;
    st = rtg_profile_parse(text, len, name, out, err);
    free(text);
    return st;
}

/* --- names held by submissions being planned ------------------------------ */

/* One name in use: `count` submissions hold it, `replacing` while a PUT of
 * it is being stored. Entries with neither are removed. */
struct inuse_entry {
    char kind; /* 'r' robot, 'p' profile */
    char name[STORE_MAX_NAME + 1];
    int count, replacing;
};

struct srv_inuse {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled when a replacement ends */
    struct inuse_entry *v;
    int n, cap;
};

enum rt_status srv_inuse_init(struct srv *s, struct rt_err *err)
{
    struct srv_inuse *u = calloc(1, sizeof *u);
    if (!u) return rt_err_set(err, RT_ENOMEM, "srv", "out of memory");
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, NULL);
    s->inuse = u;
    return RT_OK;
}

void srv_inuse_free(struct srv *s)
{
    struct srv_inuse *u = s ? s->inuse : NULL;
    if (!u) return;
    pthread_cond_destroy(&u->cv);
    pthread_mutex_destroy(&u->mu);
    free(u->v);
    free(u);
    s->inuse = NULL;
}

/* The entry of (kind, name), or NULL. Caller holds u->mu. */
static struct inuse_entry *inuse_find(struct srv_inuse *u, const char *kind, const char *name)
{
    for (int i = 0; i < u->n; i++)
        if (u->v[i].kind == kind[0] && !strcmp(u->v[i].name, name)) return &u->v[i];
    return NULL;
}

/* The entry of (kind, name), made when absent; NULL when out of memory.
 * Caller holds u->mu. */
static struct inuse_entry *inuse_get(struct srv_inuse *u, const char *kind, const char *name)
{
    struct inuse_entry *e = inuse_find(u, kind, name);
    if (e) return e;
    if (u->n == u->cap) {
        int cap = u->cap ? 2 * u->cap : 16;
        struct inuse_entry *v = realloc(u->v, (size_t)cap * sizeof *v);
        if (!v) return NULL;
        u->v = v;
        u->cap = cap;
    }
    e = &u->v[u->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind[0];
    snprintf(e->name, sizeof e->name, "%s", name);
    return e;
}

/* Removes `e` when nothing holds it. Caller holds u->mu. */
static void inuse_drop_idle(struct srv_inuse *u, struct inuse_entry *e)
{
    if (e->count > 0 || e->replacing) return;
    *e = u->v[--u->n];
}

enum rt_status srv_asset_hold(struct srv *s, const char *kind, const char *name, struct rt_err *err)
{
    struct srv_inuse *u = s->inuse;
    struct inuse_entry *e;
    pthread_mutex_lock(&u->mu);
    while ((e = inuse_find(u, kind, name)) && e->replacing) pthread_cond_wait(&u->cv, &u->mu);
    if (!(e = inuse_get(u, kind, name))) {
        pthread_mutex_unlock(&u->mu);
        return rt_err_set(err, RT_ENOMEM, kind, "out of memory");
    }
    e->count++;
    pthread_mutex_unlock(&u->mu);
    return RT_OK;
}

void srv_asset_release(struct srv *s, const char *kind, const char *name)
{
    struct srv_inuse *u = s->inuse;
    pthread_mutex_lock(&u->mu);
    struct inuse_entry *e = inuse_find(u, kind, name);
    if (e && e->count > 0) {
        e->count--;
        inuse_drop_idle(u, e);
    }
    pthread_mutex_unlock(&u->mu);
}

int srv_asset_held(struct srv *s, const char *kind, const char *name)
{
    struct srv_inuse *u = s->inuse;
    pthread_mutex_lock(&u->mu);
    struct inuse_entry *e = inuse_find(u, kind, name);
    int n = e ? e->count : 0;
    pthread_mutex_unlock(&u->mu);
    return n;
}

/* Marks (kind, name) as being replaced: RT_ECONFLICT (where "url") when a
 * submission holds it or another PUT of it is being stored. */
static enum rt_status replace_begin(struct srv *s, const char *kind, const char *name, struct rt_err *err)
{
    struct srv_inuse *u = s->inuse;
    enum rt_status st = RT_OK;
    pthread_mutex_lock(&u->mu);
    struct inuse_entry *e = inuse_get(u, kind, name);
    if (!e) st = rt_err_set(err, RT_ENOMEM, kind, "out of memory");
    else if (e->count > 0)
        st = rt_err_set(err, RT_ECONFLICT, "url",
                        "%d submission(s) using %s '%s' are being validated: it can be replaced once their "
                        "jobs finish or are cancelled",
                        e->count, kind, name);
    else if (e->replacing)
        st = rt_err_set(err, RT_ECONFLICT, "url", "another upload of %s '%s' is being stored: retry", kind, name);
    else e->replacing = 1;
    pthread_mutex_unlock(&u->mu);
    return st;
}

static void replace_end(struct srv *s, const char *kind, const char *name)
{
    struct srv_inuse *u = s->inuse;
    pthread_mutex_lock(&u->mu);
    struct inuse_entry *e = inuse_find(u, kind, name);
    if (e) {
        e->replacing = 0;
        inuse_drop_idle(u, e);
    }
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

/* store_asset_put() between replace_begin() and replace_end(). */
static enum rt_status asset_put(struct srv *s, const char *kind, const char *name, const char *text, size_t len,
                                struct rt_err *err)
{
    enum rt_status st = replace_begin(s, kind, name, err);
    if (st != RT_OK) return st;
    st = store_asset_put(s->store, kind, name, text, len, err);
    /* Plans kept from submissions were made with the assets before: the
     * jobs are built from the store again, against this one. */
    if (st == RT_OK) srv_plans_clear(s->plans);
    replace_end(s, kind, name);
    return st;
}

/* --- routes ------------------------------------------------------------------ */

struct list_ctx {
    cJSON *arr;
};

static void add_uploaded(void *user, const char *name, double created)
{
    struct list_ctx *l = user;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddBoolToObject(o, "bundled", 0);
    cJSON_AddNumberToObject(o, "created", created);
    cJSON_AddItemToArray(l->arr, o);
}

static enum MHD_Result list_assets(struct srv *s, struct MHD_Connection *c, const char *kind,
                                   const char *const *bundled)
{
    struct rt_err err;
    cJSON *root = cJSON_CreateObject();
    struct list_ctx l = {cJSON_AddArrayToObject(root, !strcmp(kind, "robot") ? "robots" : "profiles")};
    for (int i = 0; bundled && bundled[i]; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", bundled[i]);
        cJSON_AddBoolToObject(o, "bundled", 1);
        cJSON_AddItemToArray(l.arr, o);
    }
    if (store_asset_list(s->store, kind, add_uploaded, &l, &err) != RT_OK) {
        cJSON_Delete(root);
        return srv_reply_err(s, c, &err);
    }
    return srv_reply_json(s, c, MHD_HTTP_OK, root);
}

/* Why `name` may not name an uploaded robot or profile (a static phrase for
 * a message), or NULL when it may. */
static const char *name_why(const char *name)
{
    if (!store_name_ok(name)) return "expected 1..64 characters of A-Z a-z 0-9 _ . -";
    size_t n = strlen(name);
    if (name[0] == '.') return "must not start with '.'";
    if (n >= 5 && (!strcmp(name + n - 5, ".urdf") || !strcmp(name + n - 5, ".json")))
        return "must not end in .urdf or .json (such a name is read as a file path)";
    return NULL;
}

enum rt_status srv_name_check(const char *name, const char *kind, const char *where, struct rt_err *err)
{
    const char *why = name ? name_why(name) : "required";
    if (!why) return RT_OK;
    return rt_err_set(err, RT_EINVAL, where, "%s name: %s", kind, why);
}

/* The checks before GET or PUT of robot/profile `name` (kind "robot" or
 * "profile"): a name srv_name_check() accepts, and for an upload (`put`)
 * none of `bundled`, which cannot be replaced (RT_ECONFLICT). */
static enum rt_status asset_check(const char *kind, const char *name, int put,
                                  const char *const *bundled, struct rt_err *err)
{
    enum rt_status st = srv_name_check(name, kind, "url", err);
    if (st == RT_OK && put && in_list(bundled, name))
        st = rt_err_set(err, RT_ECONFLICT, "url", "'%s' is a bundled %s and cannot be replaced", name, kind);
    return st;
}

/* GET /v1/robots/NAME/urdf: the URDF text as bundled or uploaded (what the
 * web page draws the robot from). */
static enum MHD_Result robot_urdf(struct srv *s, struct MHD_Connection *c, const char *name)
{
    struct rt_err err;
    size_t len = 0;
    char *text = NULL;
    const char *t = kin_robot_bundled_text(name, &len);
    if (t) {
        if (!(text = malloc(len + 1))) {
            rt_err_set(&err, RT_ENOMEM, "robot", "out of memory");
            return srv_reply_err(s, c, &err);
        }
        memcpy(text, t, len + 1);
    } else {
        enum rt_status st = store_asset_get(s->store, "robot", name, &text, &len, &err);
        if (st == RT_ENOTFOUND) rt_err_set(&err, st, "robot", "no robot named '%s'", RT_QUOTE(name));
        if (st != RT_OK) return srv_reply_err(s, c, &err);
    }
    return srv_reply(s, c, MHD_HTTP_OK, "application/xml", text, len);
}

enum MHD_Result srv_route_robots(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                 const char *method)
{
    struct rt_err err;
    struct kin_robot *robot = NULL;
    rt_err_clear(&err);
    if (r->route == SRV_R_ROBOTS) return list_assets(s, c, "robot", kin_robot_bundled());
    if (asset_check("robot", r->name, !strcmp(method, "PUT"), kin_robot_bundled(), &err) != RT_OK)
        return srv_reply_err(s, c, &err);
    if (r->route == SRV_R_ROBOT_URDF) return robot_urdf(s, c, r->name);
    if (!strcmp(method, "PUT")) {
        char label[STORE_MAX_NAME + 8];
        snprintf(label, sizeof label, "%s.urdf", r->name);
        if (kin_robot_parse(r->body, r->len, label, NULL, &robot, &err) != RT_OK)
            return srv_reply_err(s, c, &err);
        if (robot->n_joints > s->cfg.max_joints) {
            rt_err_set(&err, RT_ELIMIT, label, "%d joints: the limit is %d", robot->n_joints, s->cfg.max_joints);
            kin_robot_free(robot);
            return srv_reply_err(s, c, &err);
        }
        if (asset_put(s, "robot", r->name, r->body, r->len, &err) != RT_OK) {
            kin_robot_free(robot);
            return srv_reply_err(s, c, &err);
        }
        rt_log("info", "srv", r->name, "robot uploaded by '%s' (%d dof)", r->owner, robot->n_dof);
    } else if (srv_robot_load(s, r->name, &robot, &err) != RT_OK) {
        return srv_reply_err(s, c, &err);
    }
    char *json = kin_robot_inspect_json(robot);
    kin_robot_free(robot);
    if (!json) {
        rt_err_set(&err, RT_ENOMEM, "robot", "out of memory");
        return srv_reply_err(s, c, &err);
    }
    return srv_reply(s, c, !strcmp(method, "PUT") ? MHD_HTTP_CREATED : MHD_HTTP_OK, "application/json",
                     json, strlen(json));
}

enum MHD_Result srv_route_profiles(struct srv *s, struct MHD_Connection *c, struct srv_req *r,
                                   const char *method)
{
    struct rt_err err;
    struct rtg_profile *p = NULL;
    rt_err_clear(&err);
    if (r->route == SRV_R_PROFILES) return list_assets(s, c, "profile", rtg_profile_bundled());
    if (asset_check("profile", r->name, !strcmp(method, "PUT"), rtg_profile_bundled(), &err) != RT_OK)
        return srv_reply_err(s, c, &err);
    if (!strcmp(method, "PUT")) {
        char label[STORE_MAX_NAME + 8];
        snprintf(label, sizeof label, "%s.json", r->name);
        /* Strict JSON first (one value, no repeated key, no NUL, a named
         * nesting limit): the profile reader takes cJSON's lenient view. */
        cJSON *strict = NULL;
        if (srv_json_parse(r->body, r->len, label, 0, &strict, &err) != RT_OK) return srv_reply_err(s, c, &err);
        cJSON_Delete(strict);
        if (rtg_profile_parse(r->body, r->len, label, &p, &err) != RT_OK) return srv_reply_err(s, c, &err);
        rtg_profile_free(p);
        if (asset_put(s, "profile", r->name, r->body, r->len, &err) != RT_OK)
            return srv_reply_err(s, c, &err);
        rt_log("info", "srv", r->name, "profile uploaded by '%s'", r->owner);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", r->name);
        cJSON_AddBoolToObject(j, "bundled", 0);
        return srv_reply_json(s, c, MHD_HTTP_CREATED, j);
    }
    /* GET: the profile's JSON text as stored (or bundled). */
    size_t len = 0;
    char *text = NULL;
    if (is_bundled_profile(r->name)) {
        const char *t = rtg_profile_bundled_text(r->name, &len);
        if (t && (text = malloc(len + 1))) memcpy(text, t, len + 1);
        if (!text) {
            rt_err_set(&err, RT_ENOMEM, "profile", "out of memory");
            return srv_reply_err(s, c, &err);
        }
    } else if (store_asset_get(s->store, "profile", r->name, &text, &len, &err) != RT_OK) {
        return srv_reply_err(s, c, &err);
    }
    return srv_reply(s, c, MHD_HTTP_OK, "application/json", text, len);
}
