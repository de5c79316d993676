/* profile.c -- parsing retargeting profiles (JSON, through cJSON) into
 * struct rtg_profile, with defaults for every field a profile leaves out and
 * an error naming the field ("cmu_g1.json:links[3].position_weight") for
 * every field that is wrong. Unknown keys are errors too: a misspelt
 * "positon_weight" silently falling back to a default is the kind of bug a
 * user never finds. The bundled profiles are compiled in (see
 * embed.h and the Makefile rule that generates their table). */
#include "profile.h"
#include "roles.h"
#include "options.h"
#include "../kinematics/robot.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/embed.h"

/* Parse context: the label for errors and the caller's err. */
struct pctx {
    const char *name;
    struct rt_err *err;
};

static int perr(struct pctx *c, int code, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int perr(struct pctx *c, int code, const char *field, const char *fmt, ...)
{
    char where[RT_ERR_WHERE_MAX], msg[RT_ERR_MSG_MAX];
    va_list ap;
    snprintf(where, sizeof where, "%s:%s", c->name, field);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rt_err_set(c->err, code, where, "%s", msg);
}

/* Refuses keys of `obj` not in the NULL-terminated `allowed`. */
static int check_keys(struct pctx *c, const cJSON *obj, const char *path, const char *const *allowed)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (it->string && strcmp(it->string, *a) == 0) ok = 1;
        if (!ok) {
            char f[96];
            snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", it->string ? it->string : "?");
            return perr(c, RT_EINVAL, f, "unknown field");
        }
    }
    return RT_OK;
}

/* A string field: returns RT_OK and sets *out (malloc'd) when present,
 * leaves *out alone when absent; an error when not a non-empty string. */
static int get_str(struct pctx *c, const cJSON *obj, const char *key, const char *path, char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char f[96];
    if (!v) return RT_OK;
    snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", key);
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return perr(c, RT_EINVAL, f, "expected a non-empty string");
    if (strlen(v->valuestring) >= RTG_PROFILE_MAX_NAME)
        return perr(c, RT_EINVAL, f, "longer than %d characters", RTG_PROFILE_MAX_NAME - 1);
    free(*out);
    *out = strdup(v->valuestring);
    if (!*out) return perr(c, RT_ENOMEM, f, "out of memory");
    return RT_OK;
}

/* A number field in [lo, hi]; absent leaves *out alone. */
static int get_num(struct pctx *c, const cJSON *obj, const char *key, const char *path, double lo,
                   double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char f[96];
    if (!v) return RT_OK;
    snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return perr(c, RT_EINVAL, f, "expected a number");
    if (v->valuedouble < lo || v->valuedouble > hi)
        return perr(c, RT_EINVAL, f, "%g is out of range [%g, %g]", v->valuedouble, lo, hi);
    *out = v->valuedouble;
    return RT_OK;
}

static int get_int(struct pctx *c, const cJSON *obj, const char *key, const char *path, int lo,
                   int hi, int *out)
{
    double d = *out;
    int st = get_num(c, obj, key, path, lo, hi, &d);
    if (st) return st;
    if (d != floor(d)) {
        char f[96];
        snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", key);
        return perr(c, RT_EINVAL, f, "expected an integer");
    }
    *out = (int)d;
    return RT_OK;
}

/* An object field (NULL when absent); error when present but not an object. */
static int get_obj(struct pctx *c, const cJSON *obj, const char *key, const char *path,
                   const cJSON **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (!v) return RT_OK;
    if (!cJSON_IsObject(v)) {
        char f[96];
        snprintf(f, sizeof f, "%s%s%s", path, path[0] ? "." : "", key);
        return perr(c, RT_EINVAL, f, "expected an object");
    }
    *out = v;
    return RT_OK;
}

static int parse_units(struct pctx *c, const cJSON *v, double *units)
{
    static const struct { const char *name; double m; } tab[] = {
        {"m", 1.0}, {"cm", 0.01}, {"mm", 0.001}, {"in", 0.0254},
        /* CMU's ASF/AMC length unit as cgspeed's BVH conversion keeps it:
         * (1/0.45) inches. */
        {"cmu", 0.0254 / 0.45},
    };
    if (!v) return RT_OK;
    if (cJSON_IsNumber(v)) {
        if (!isfinite(v->valuedouble) || v->valuedouble <= 0 || v->valuedouble > 1000)
            return perr(c, RT_EINVAL, "source.units", "metres per unit must be in (0, 1000]");
        *units = v->valuedouble;
        return RT_OK;
    }
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "auto") == 0) { *units = 0; return RT_OK; }
        for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
            if (strcmp(v->valuestring, tab[i].name) == 0) { *units = tab[i].m; return RT_OK; }
    }
    return perr(c, RT_EINVAL, "source.units",
                "expected \"auto\", \"m\", \"cm\", \"mm\", \"in\", \"cmu\" or metres per unit");
}

static int parse_source(struct pctx *c, const cJSON *src, struct rtg_profile *p)
{
    static const char *const keys[] = {"kind", "robot", "skeleton", "match", "units", "up", NULL};
    char *kind = NULL;
    int st;
    if (!src) return RT_OK;
    if ((st = check_keys(c, src, "source", keys))) return st;
    if ((st = get_str(c, src, "kind", "source", &kind))) return st;
    if (kind) {
        if (strcmp(kind, "bvh") == 0) p->source = RTG_SOURCE_BVH;
        else if (strcmp(kind, "robot") == 0) p->source = RTG_SOURCE_ROBOT;
        else st = perr(c, RT_EINVAL, "source.kind", "expected \"bvh\" or \"robot\", got \"%s\"", kind);
        free(kind);
        if (st) return st;
    }
    if ((st = get_str(c, src, "robot", "source", &p->source_robot))) return st;
    if (p->source == RTG_SOURCE_ROBOT && !p->source_robot)
        return perr(c, RT_EINVAL, "source.robot", "required when source.kind is \"robot\"");
    if ((st = get_str(c, src, "skeleton", "source", &p->skeleton))) return st;
    if ((st = parse_units(c, cJSON_GetObjectItemCaseSensitive(src, "units"), &p->units))) return st;
    const cJSON *up = cJSON_GetObjectItemCaseSensitive(src, "up");
    if (up) {
        if (!cJSON_IsString(up) || (strcmp(up->valuestring, "auto") && strcmp(up->valuestring, "y") &&
                                    strcmp(up->valuestring, "z")))
            return perr(c, RT_EINVAL, "source.up", "expected \"auto\", \"y\" or \"z\"");
        p->up = up->valuestring[0] == 'a' ? 0 : up->valuestring[0];
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(src, "match");
    if (m) {
        int n = cJSON_GetArraySize(m), i = 0;
        const cJSON *it;
        if (!cJSON_IsArray(m) || n < 1 || n > RTG_PROFILE_MAX_MATCH)
            return perr(c, RT_EINVAL, "source.match", "expected an array of 1 to %d joint names",
                        RTG_PROFILE_MAX_MATCH);
        p->match = calloc((size_t)n, sizeof *p->match);
        if (!p->match) return perr(c, RT_ENOMEM, "source.match", "out of memory");
        cJSON_ArrayForEach(it, m) {
            char f[32];
            snprintf(f, sizeof f, "source.match[%d]", i);
            if (!cJSON_IsString(it) || !it->valuestring[0] ||
                strlen(it->valuestring) >= RTG_PROFILE_MAX_NAME)
                return perr(c, RT_EINVAL, f, "expected a joint name");
            if (!(p->match[i] = strdup(it->valuestring))) return perr(c, RT_ENOMEM, f, "out of memory");
            p->n_match = ++i;
        }
    }
    return RT_OK;
}

static int parse_frame(struct pctx *c, const cJSON *fr, const char *path, struct rtg_profile_frame *f)
{
    int n = 0;
    const cJSON *it;
    char fp[96];
    snprintf(fp, sizeof fp, "%s.frame", path);
    if (cJSON_IsString(fr) && strcmp(fr->valuestring, "source") == 0) {
        f->source = 1;
        return RT_OK;
    }
    if (!cJSON_IsObject(fr) || cJSON_GetArraySize(fr) != 2)
        return perr(c, RT_EINVAL, fp, "expected \"source\" or two axes, e.g. {\"y\":[\"RightUpLeg\",\"LeftUpLeg\"],\"z\":[\"Hips\",\"Spine\"]}");
    cJSON_ArrayForEach(it, fr) {
        char ap[112];
        snprintf(ap, sizeof ap, "%s.%s", fp, it->string);
        if (strcmp(it->string, "x") && strcmp(it->string, "y") && strcmp(it->string, "z"))
            return perr(c, RT_EINVAL, ap, "unknown axis (x, y or z)");
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
            !cJSON_IsString(cJSON_GetArrayItem(it, 0)) || !cJSON_IsString(cJSON_GetArrayItem(it, 1)))
            return perr(c, RT_EINVAL, ap, "expected [\"from joint\", \"to joint\"]");
        const char *a = cJSON_GetArrayItem(it, 0)->valuestring, *b = cJSON_GetArrayItem(it, 1)->valuestring;
        if (!a[0] || !b[0] || strlen(a) >= RTG_PROFILE_MAX_NAME || strlen(b) >= RTG_PROFILE_MAX_NAME ||
            strcmp(a, b) == 0)
            return perr(c, RT_EINVAL, ap, "expected two different joint names");
        f->axis[n] = it->string[0];
        f->from[n] = strdup(a);
        f->to[n] = strdup(b);
        if (!f->from[n] || !f->to[n]) return perr(c, RT_ENOMEM, ap, "out of memory");
        n++;
    }
    if (f->axis[0] == f->axis[1])
        return perr(c, RT_EINVAL, fp, "the two axes must differ");
    return RT_OK;
}

/* One entry of "links" (or "root" when is_root). */
static int parse_link(struct pctx *c, const cJSON *o, const char *path, int is_root,
                      struct rtg_profile_link *l, char **parent_name)
{
    static const char *const keys[] = {"joint", "link", "parent", "attach", "position_weight",
                                       "orientation_weight", "frame", "offset", "reference", NULL};
    int st;
    char *s = NULL;
    char f[96];
    if (!cJSON_IsObject(o)) return perr(c, RT_EINVAL, path, "expected an object");
    if ((st = check_keys(c, o, path, keys))) return st;
    if ((st = get_str(c, o, "joint", path, &l->joint))) return st;
    if ((st = get_str(c, o, "link", path, &l->link))) return st;
    snprintf(f, sizeof f, "%s.joint", path);
    if (!l->joint) return perr(c, RT_EINVAL, f, "required (the source joint name)");
    snprintf(f, sizeof f, "%s.link", path);
    if (!l->link) return perr(c, RT_EINVAL, f, "required (the robot link name)");
    if ((st = get_str(c, o, "parent", path, parent_name))) return st;
    snprintf(f, sizeof f, "%s.parent", path);
    if (is_root && *parent_name) return perr(c, RT_EINVAL, f, "the root has no parent");
    l->attach = is_root ? RTG_ATTACH_ROOT : RTG_ATTACH_DIRECTION;
    l->wpos = 1.0;
    l->wrot = 0.0;
    if ((st = get_str(c, o, "attach", path, &s))) return st;
    if (s) {
        snprintf(f, sizeof f, "%s.attach", path);
        if (is_root) st = perr(c, RT_EINVAL, f, "the root is never attached");
        else if (strcmp(s, "direction") == 0) l->attach = RTG_ATTACH_DIRECTION;
        else if (strcmp(s, "rigid") == 0) l->attach = RTG_ATTACH_RIGID;
        else if (strcmp(s, "scaled") == 0) l->attach = RTG_ATTACH_SCALED;
        else st = perr(c, RT_EINVAL, f, "expected \"direction\", \"rigid\" or \"scaled\", got \"%s\"", s);
        free(s);
        s = NULL;
        if (st) return st;
    }
    if ((st = get_num(c, o, "position_weight", path, 0, 1e6, &l->wpos))) return st;
    if ((st = get_num(c, o, "orientation_weight", path, 0, 1e6, &l->wrot))) return st;
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(o, "frame");
    if (fr && (st = parse_frame(c, fr, path, &l->frame))) return st;
    snprintf(f, sizeof f, "%s.orientation_weight", path);
    if (l->wrot > 0 && !l->frame.axis[0] && !l->frame.source)
        return perr(c, RT_EINVAL, f, "an orientation weight needs a \"frame\"");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(o, "offset");
    snprintf(f, sizeof f, "%s.offset", path);
    if (off) {
        if (cJSON_IsString(off) && strcmp(off->valuestring, "auto") == 0) {
            l->offset_mode = RTG_OFFSET_AUTO;
        } else if (cJSON_IsString(off) && strcmp(off->valuestring, "identity") == 0) {
            l->offset_mode = RTG_OFFSET_IDENTITY;
        } else if (cJSON_IsArray(off) && cJSON_GetArraySize(off) == 4) {
            double n = 0;
            for (int i = 0; i < 4; i++) {
                const cJSON *e = cJSON_GetArrayItem(off, i);
                if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
                    return perr(c, RT_EINVAL, f, "expected 4 numbers (quaternion x y z w)");
                l->offset[i] = e->valuedouble;
                n += e->valuedouble * e->valuedouble;
            }
            if (n < 1e-12) return perr(c, RT_EINVAL, f, "zero quaternion");
            for (int i = 0; i < 4; i++) l->offset[i] /= sqrt(n);
            l->offset_mode = RTG_OFFSET_GIVEN;
        } else {
            return perr(c, RT_EINVAL, f, "expected \"auto\", \"identity\" or [x, y, z, w]");
        }
    }
    if ((st = get_str(c, o, "reference", path, &s))) return st;
    if (s) {
        snprintf(f, sizeof f, "%s.reference", path);
        if (strcmp(s, "contacts") == 0) l->ref_contacts = 1;
        else if (strcmp(s, "neutral") == 0) l->ref_contacts = 0;
        else st = perr(c, RT_EINVAL, f, "expected \"neutral\" or \"contacts\", got \"%s\"", s);
        free(s);
        if (st) return st;
    }
    return RT_OK;
}

static int parse_links(struct pctx *c, const cJSON *root, const cJSON *links, struct rtg_profile *p)
{
    int n = links ? cJSON_GetArraySize(links) : 0, st = RT_OK, i;
    char **parents = NULL;
    if (!root) return perr(c, RT_EINVAL, "root", "required: {\"joint\": ..., \"link\": ...}");
    if (links && !cJSON_IsArray(links)) return perr(c, RT_EINVAL, "links", "expected an array");
    if (n + 1 > RTG_PROFILE_MAX_LINKS)
        return perr(c, RT_ELIMIT, "links", "%d links; at most %d (root included)", n + 1,
                    RTG_PROFILE_MAX_LINKS);
    p->links = calloc((size_t)n + 1, sizeof *p->links);
    parents = calloc((size_t)n + 1, sizeof *parents);
    if (!p->links || !parents) { st = perr(c, RT_ENOMEM, "links", "out of memory"); goto fail; }
    for (i = 0; i <= n; i++) p->links[i].parent = -1;
    p->n_links = n + 1;
    if ((st = parse_link(c, root, "root", 1, &p->links[0], &parents[0]))) goto fail;
    for (i = 0; i < n; i++) {
        char path[32];
        snprintf(path, sizeof path, "links[%d]", i);
        if ((st = parse_link(c, cJSON_GetArrayItem(links, i), path, 0, &p->links[i + 1], &parents[i + 1])))
            goto fail;
    }
    /* Names unique; parents resolve to an earlier entry (default: the root). */
    for (i = 1; i <= n; i++) {
        char path[48];
        for (int k = 0; k < i; k++) {
            snprintf(path, sizeof path, "links[%d].joint", i - 1);
            if (strcmp(p->links[k].joint, p->links[i].joint) == 0) {
                st = perr(c, RT_EINVAL, path, "joint '%s' is mapped twice", p->links[i].joint);
                goto fail;
            }
            snprintf(path, sizeof path, "links[%d].link", i - 1);
            if (strcmp(p->links[k].link, p->links[i].link) == 0) {
                st = perr(c, RT_EINVAL, path, "link '%s' is mapped twice", p->links[i].link);
                goto fail;
            }
        }
        p->links[i].parent = 0;
        if (parents[i]) {
            p->links[i].parent = -1;
            for (int k = 0; k < i; k++)
                if (strcmp(p->links[k].joint, parents[i]) == 0) p->links[i].parent = k;
            if (p->links[i].parent < 0) {
                snprintf(path, sizeof path, "links[%d].parent", i - 1);
                st = perr(c, RT_EINVAL, path, "'%s' is not the root's or an earlier link's joint",
                          parents[i]);
                goto fail;
            }
        }
        if (p->links[i].attach == RTG_ATTACH_RIGID && !p->links[p->links[i].parent].frame.axis[0] &&
            !p->links[p->links[i].parent].frame.source) {
            snprintf(path, sizeof path, "links[%d].attach", i - 1);
            st = perr(c, RT_EINVAL, path, "\"rigid\" needs a parent with a \"frame\"");
            goto fail;
        }
    }
fail:
    if (parents)
        for (i = 0; i <= n; i++) free(parents[i]);
    free(parents);
    return st;
}

static int parse_feet(struct pctx *c, const cJSON *feet, struct rtg_profile *p)
{
    static const char *const keys[] = {"left", "right", NULL};
    static const char *const fkeys[] = {"joint", "toe", NULL};
    int st;
    if (!feet) return RT_OK;
    if ((st = check_keys(c, feet, "feet", keys))) return st;
    for (int s = 0; s < 2; s++) {
        const char *side = s ? "right" : "left";
        char path[32], f[48];
        char *joint = NULL;
        const cJSON *o;
        snprintf(path, sizeof path, "feet.%s", side);
        if ((st = get_obj(c, feet, side, "feet", &o))) return st;
        if (!o) return perr(c, RT_EINVAL, path, "required when \"feet\" is given");
        if ((st = check_keys(c, o, path, fkeys))) return st;
        if ((st = get_str(c, o, "joint", path, &joint))) return st;
        snprintf(f, sizeof f, "%s.joint", path);
        if (!joint) return perr(c, RT_EINVAL, f, "required (a mapped source joint)");
        p->feet[s].link = rtg_profile_link_index(p, joint);
        if (p->feet[s].link < 1) st = perr(c, RT_EINVAL, f, "'%s' is not a mapped non-root joint", joint);
        free(joint);
        if (st) return st;
        if ((st = get_str(c, o, "toe", path, &p->feet[s].toe))) return st;
    }
    if (p->feet[0].link == p->feet[1].link)
        return perr(c, RT_EINVAL, "feet.right.joint", "left and right are the same joint");
    return RT_OK;
}

static int parse_ground(struct pctx *c, const cJSON *g, struct rtg_profile *p)
{
    static const char *const keys[] = {"mode", "sole_offset_m", "contact_height_m",
                                       "contact_speed_m_s", "min_contact_s", "contact_weight", NULL};
    char *mode = NULL;
    int st;
    if (!g) return RT_OK;
    if ((st = check_keys(c, g, "ground", keys))) return st;
    if ((st = get_str(c, g, "mode", "ground", &mode))) return st;
    if (mode) {
        if (strcmp(mode, "contacts") == 0) p->ground = RTG_GROUND_CONTACTS;
        else if (strcmp(mode, "lowest") == 0) p->ground = RTG_GROUND_LOWEST;
        else if (strcmp(mode, "none") == 0) p->ground = RTG_GROUND_NONE;
        else st = perr(c, RT_EINVAL, "ground.mode", "expected \"contacts\", \"lowest\" or \"none\", got \"%s\"", mode);
        free(mode);
        if (st) return st;
    }
    if ((st = get_num(c, g, "sole_offset_m", "ground", 0, 1, &p->sole_offset))) return st;
    if ((st = get_num(c, g, "contact_height_m", "ground", 0, 1, &p->contact_height))) return st;
    if ((st = get_num(c, g, "contact_speed_m_s", "ground", 0, 100, &p->contact_speed))) return st;
    if ((st = get_num(c, g, "min_contact_s", "ground", 0, 10, &p->min_contact))) return st;
    if ((st = get_num(c, g, "contact_weight", "ground", 0, 1e6, &p->contact_weight))) return st;
    return RT_OK;
}

static int parse_tail(struct pctx *c, const cJSON *w, const cJSON *s, struct rtg_profile *p)
{
    static const char *const wkeys[] = {"velocity", "acceleration", "rest", NULL};
    static const char *const skeys[] = {"max_lm_iters", "max_cg_iters", "init_iters", "cg_tol", NULL};
    int st;
    if (w) {
        if ((st = check_keys(c, w, "weights", wkeys))) return st;
        if ((st = get_num(c, w, "velocity", "weights", 0, 1e6, &p->w_vel))) return st;
        if ((st = get_num(c, w, "acceleration", "weights", 0, 1e6, &p->w_acc))) return st;
        if ((st = get_num(c, w, "rest", "weights", 0, 1e6, &p->w_rest))) return st;
    }
    if (s) {
        if ((st = check_keys(c, s, "solver", skeys))) return st;
        /* The ranges of the option table (options.h), as everywhere. */
        static const int ints[] = {RTG_JOB_MAX_LM, RTG_JOB_MAX_CG, RTG_JOB_INIT_ITERS};
        int *dst[] = {&p->max_lm_iters, &p->max_cg_iters, &p->init_iters};
        for (int i = 0; i < 3; i++) {
            const struct rtg_option *r = rtg_job_option(ints[i]);
            if ((st = get_int(c, s, r->key, "solver", (int)r->lo, (int)r->hi, dst[i]))) return st;
        }
        const struct rtg_option *tol = rtg_job_option(RTG_JOB_CG_TOL);
        if ((st = get_num(c, s, tol->key, "solver", tol->lo, tol->hi, &p->cg_tol))) return st;
        if (p->cg_tol >= tol->hi) return perr(c, RT_EINVAL, "solver.cg_tol", "%g is out of range [0, 1)", p->cg_tol);
    }
    return RT_OK;
}

/* "robot_roles": {"left_hand": "left_hand_link", ...}: role names are
 * roles.h's; the links are checked against the robot when it is mapped. */
static int parse_roles(struct pctx *c, const cJSON *o, struct rtg_profile *p)
{
    const cJSON *it;
    int n = 0;
    if (!cJSON_IsObject(o)) return perr(c, RT_EINVAL, "robot_roles", "expected an object of role: link");
    cJSON_ArrayForEach(it, o) n++;
    if (n < 1 || n > RTG_PROFILE_MAX_ROLES)
        return perr(c, RT_EINVAL, "robot_roles", "%d roles; 1 to %d", n, RTG_PROFILE_MAX_ROLES);
    p->role_name = calloc((size_t)n, sizeof *p->role_name);
    p->role_link = calloc((size_t)n, sizeof *p->role_link);
    if (!p->role_name || !p->role_link) return perr(c, RT_ENOMEM, "robot_roles", "out of memory");
    cJSON_ArrayForEach(it, o) {
        char f[RT_QUOTE_BUF + 16];
        snprintf(f, sizeof f, "robot_roles.%s", it->string ? RT_QUOTE(it->string) : "?");
        if (rtg_robot_role_index(it->string) < 0)
            return perr(c, RT_EINVAL, f, "unknown role (pelvis, torso, head, left_/right_ hip, knee, foot, "
                        "shoulder, elbow, hand)");
        for (int i = 0; i < p->n_roles; i++)
            if (!strcmp(p->role_name[i], it->string)) return perr(c, RT_EINVAL, f, "given twice");
        if (!cJSON_IsString(it) || !it->valuestring[0] || strlen(it->valuestring) >= RTG_PROFILE_MAX_NAME)
            return perr(c, RT_EINVAL, f, "expected a robot link name");
        p->role_name[p->n_roles] = strdup(it->string);
        p->role_link[p->n_roles] = strdup(it->valuestring);
        if (!p->role_name[p->n_roles] || !p->role_link[p->n_roles]) {
            free(p->role_name[p->n_roles]);
            free(p->role_link[p->n_roles]);
            return perr(c, RT_ENOMEM, f, "out of memory");
        }
        p->n_roles++;
    }
    return RT_OK;
}

static atomic_long n_parsed;

long rtg_profile_parse_count(void) { return atomic_load(&n_parsed); }

enum rt_status rtg_profile_parse(const char *text, size_t len, const char *name,
                                 struct rtg_profile **out, struct rt_err *err)
{
    static const char *const keys[] = {"name", "robot", "source", "scale", "root", "links",
                                       "feet", "ground", "weights", "solver", "description",
                                       "robot_roles", NULL};
    static const char *const role_keys[] = {"name", "robot", "description", "robot_roles", NULL};
    struct pctx c = {name ? name : "profile", err};
    struct rtg_profile *p = NULL;
    cJSON *doc = NULL;
    atomic_fetch_add(&n_parsed, 1);
    const char *end = NULL;
    const cJSON *o;
    int st = RT_OK;
    *out = NULL;
    if (len > RTG_PROFILE_MAX_BYTES) {
        st = rt_err_set(err, RT_ELIMIT, c.name, "profile is %zu bytes; at most %u", len,
                        RTG_PROFILE_MAX_BYTES);
        goto fail;
    }
    doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!doc) {
        size_t off = end && end >= text ? (size_t)(end - text) : 0;
        size_t line = 1;
        for (size_t i = 0; i < off && i < len; i++) line += text[i] == '\n';
        char where[RT_ERR_WHERE_MAX];
        snprintf(where, sizeof where, "%s:%zu", c.name, line);
        st = rt_err_set(err, RT_EPARSE, where, "malformed JSON near byte %zu", off);
        goto fail;
    }
    if (!cJSON_IsObject(doc)) { st = perr(&c, RT_EINVAL, "(top)", "expected a JSON object"); goto fail; }
    /* cJSON recurses without a depth limit of its own beyond its build
     * default; profiles are shallow, so refuse deep input explicitly. */
    {
        const cJSON *stack[RTG_PROFILE_MAX_DEPTH + 1];
        int depth = 0;
        stack[0] = doc;
        const cJSON *cur = doc->child;
        while (cur || depth > 0) {
            if (!cur) { cur = stack[depth--]->next; continue; }
            if (cur->child) {
                if (depth + 1 >= RTG_PROFILE_MAX_DEPTH) {
                    st = perr(&c, RT_ELIMIT, "(top)", "nested deeper than %d", RTG_PROFILE_MAX_DEPTH);
                    goto fail;
                }
                stack[++depth] = cur;
                cur = cur->child;
            } else {
                cur = cur->next;
            }
        }
    }
    const cJSON *roles = cJSON_GetObjectItemCaseSensitive(doc, "robot_roles");
    if (roles && cJSON_GetObjectItemCaseSensitive(doc, "root")) {
        st = perr(&c, RT_EINVAL, "robot_roles",
                  "a profile maps links itself (root, links) or names robot roles, not both");
        goto fail;
    }
    if ((st = check_keys(&c, doc, "", roles ? role_keys : keys))) goto fail;
    p = calloc(1, sizeof *p);
    if (!p) { st = rt_err_set(err, RT_ENOMEM, c.name, "out of memory"); goto fail; }
    p->feet[0].link = p->feet[1].link = -1;
    p->ground = RTG_GROUND_CONTACTS;
    p->sole_offset = -1;
    p->contact_height = 0.05;
    p->contact_speed = 0.6;
    p->min_contact = 0.1;
    p->contact_weight = 10.0;
    p->w_vel = p->w_acc = p->w_rest = 1.0;
    p->max_lm_iters = p->max_cg_iters = p->init_iters = -1;
    p->cg_tol = -1;
    if ((st = get_str(&c, doc, "name", "", &p->name))) goto fail;
    if (!p->name) {
        /* Default: the label without folders and ".json". */
        const char *b = strrchr(c.name, '/');
        b = b ? b + 1 : c.name;
        size_t n = strlen(b);
        if (n > 5 && strcmp(b + n - 5, ".json") == 0) n -= 5;
        p->name = malloc(n + 1);
        if (!p->name) { st = rt_err_set(err, RT_ENOMEM, c.name, "out of memory"); goto fail; }
        memcpy(p->name, b, n);
        p->name[n] = 0;
    }
    if ((st = get_str(&c, doc, "robot", "", &p->robot))) goto fail;
    if (roles) {
        if ((st = parse_roles(&c, roles, p))) goto fail;
        *out = p;
        p = NULL;
        goto fail;
    }
    if ((st = get_obj(&c, doc, "source", "", &o))) goto fail;
    if ((st = parse_source(&c, o, p))) goto fail;
    {
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(doc, "scale");
        if (sc && !(cJSON_IsString(sc) && strcmp(sc->valuestring, "auto") == 0)) {
            if (!cJSON_IsNumber(sc) || !isfinite(sc->valuedouble) || sc->valuedouble <= 0 ||
                sc->valuedouble > 100) {
                st = perr(&c, RT_EINVAL, "scale", "expected \"auto\" or a number in (0, 100]");
                goto fail;
            }
            p->scale = sc->valuedouble;
        }
    }
    {
        const cJSON *root = cJSON_GetObjectItemCaseSensitive(doc, "root");
        const cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
        if ((st = parse_links(&c, root, links, p))) goto fail;
    }
    if ((st = get_obj(&c, doc, "feet", "", &o))) goto fail;
    if ((st = parse_feet(&c, o, p))) goto fail;
    if ((st = get_obj(&c, doc, "ground", "", &o))) goto fail;
    if ((st = parse_ground(&c, o, p))) goto fail;
    {
        const cJSON *w, *s;
        if ((st = get_obj(&c, doc, "weights", "", &w))) goto fail;
        if ((st = get_obj(&c, doc, "solver", "", &s))) goto fail;
        if ((st = parse_tail(&c, w, s, p))) goto fail;
    }
    if (p->feet[0].link < 0 && p->ground == RTG_GROUND_CONTACTS) p->ground = RTG_GROUND_LOWEST;
    *out = p;
    p = NULL;
fail:
    rtg_profile_free(p);
    cJSON_Delete(doc);
    return st;
}

enum rt_status rtg_profile_load(const char *name_or_path, struct rtg_profile **out,
                                struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    enum rt_status st;
    size_t n = strlen(name_or_path);
    *out = NULL;
    if (strchr(name_or_path, '/') || (n > 5 && strcmp(name_or_path + n - 5, ".json") == 0)) {
        st = rt_read_file(name_or_path, RTG_PROFILE_MAX_BYTES, &text, &len, err);
        if (st) return st;
        st = rtg_profile_parse(text, len, name_or_path, out, err);
        free(text);
        return st;
    }
    const char *t = rtg_profile_bundled_text(name_or_path, &len);
    if (!t) {
        char list[160];
        size_t used = 0;
        list[0] = 0;
        for (const char *const *b = rtg_profile_bundled(); *b && used < sizeof list; b++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *b);
        return rt_err_set(err, RT_ENOTFOUND, "profile", "no bundled profile '%s' (bundled: %s)",
                          name_or_path, list);
    }
    const struct rtg_profile *b = rtg_profile_bundled_get(name_or_path);
    if (!b) {
        /* A bundled profile that does not parse: say why. */
        char label[RTG_PROFILE_MAX_NAME + 8];
        snprintf(label, sizeof label, "%.*s.json", RTG_PROFILE_MAX_NAME - 1, name_or_path);
        return rtg_profile_parse(t, len, label, out, err);
    }
    if (!(*out = rtg_profile_copy(b))) return rt_err_set(err, RT_ENOMEM, "profile", "out of memory");
    return RT_OK;
}

/* --- bundled profiles, parsed once per process --------------------------- */

/* Parsed at the first use (pthread_once) and never changed or freed: every
 * thread reads the same immutable profiles. A bundled profile that fails
 * to parse is NULL here; rtg_profile_load() then reports its error. */
static pthread_once_t bundled_once = PTHREAD_ONCE_INIT;
static struct rtg_profile **bundled_parsed;
static int n_bundled;

static void bundled_init(void)
{
    const char *const *names = rtg_profile_bundled();
    int n = 0;
    while (names[n]) n++;
    bundled_parsed = calloc((size_t)(n ? n : 1), sizeof *bundled_parsed);
    if (!bundled_parsed) return;
    n_bundled = n;
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char label[RTG_PROFILE_MAX_NAME + 8];
        const char *t = rtg_profile_bundled_text(names[i], &len);
        snprintf(label, sizeof label, "%.*s.json", RTG_PROFILE_MAX_NAME - 1, names[i]);
        if (rtg_profile_parse(t, len, label, &bundled_parsed[i], NULL) != RT_OK) bundled_parsed[i] = NULL;
    }
}

const struct rtg_profile *rtg_profile_bundled_get(const char *name)
{
    const char *const *names = rtg_profile_bundled();
    pthread_once(&bundled_once, bundled_init);
    for (int i = 0; i < n_bundled; i++)
        if (!strcmp(names[i], name)) return bundled_parsed[i];
    return NULL;
}

static int dup_str(char **dst, const char *src)
{
    *dst = NULL;
    return !src || (*dst = strdup(src)) != NULL;
}

struct rtg_profile *rtg_profile_copy(const struct rtg_profile *p)
{
    struct rtg_profile *c = calloc(1, sizeof *c);
    int ok = c != NULL;
    if (!ok) return NULL;
    *c = *p;
    c->name = c->robot = c->skeleton = c->source_robot = NULL;
    c->match = NULL;
    c->n_match = 0;
    c->links = NULL;
    c->n_links = 0;
    c->feet[0].toe = c->feet[1].toe = NULL;
    c->role_name = c->role_link = NULL;
    c->n_roles = 0;
    ok = dup_str(&c->name, p->name) && dup_str(&c->robot, p->robot) && dup_str(&c->skeleton, p->skeleton) &&
         dup_str(&c->source_robot, p->source_robot) && dup_str(&c->feet[0].toe, p->feet[0].toe) &&
         dup_str(&c->feet[1].toe, p->feet[1].toe);
    if (ok && p->n_match) {
        ok = (c->match = calloc((size_t)p->n_match, sizeof *c->match)) != NULL;
        for (int i = 0; ok && i < p->n_match; i++, c->n_match++) ok = dup_str(&c->match[i], p->match[i]);
    }
    if (ok && p->n_roles) {
        ok = (c->role_name = calloc((size_t)p->n_roles, sizeof *c->role_name)) != NULL &&
             (c->role_link = calloc((size_t)p->n_roles, sizeof *c->role_link)) != NULL;
        for (int i = 0; ok && i < p->n_roles; i++, c->n_roles++)
            ok = dup_str(&c->role_name[i], p->role_name[i]) && dup_str(&c->role_link[i], p->role_link[i]);
    }
    if (ok && p->n_links) {
        ok = (c->links = calloc((size_t)p->n_links, sizeof *c->links)) != NULL;
        for (int i = 0; ok && i < p->n_links; i++, c->n_links++) {
            struct rtg_profile_link *d = &c->links[i];
            const struct rtg_profile_link *l = &p->links[i];
            *d = *l;
            d->joint = d->link = NULL;
            for (int a = 0; a < 2; a++) d->frame.from[a] = d->frame.to[a] = NULL;
            ok = dup_str(&d->joint, l->joint) && dup_str(&d->link, l->link);
            for (int a = 0; ok && a < 2; a++)
                ok = dup_str(&d->frame.from[a], l->frame.from[a]) && dup_str(&d->frame.to[a], l->frame.to[a]);
        }
    }
    if (!ok) {
        rtg_profile_free(c);
        return NULL;
    }
    return c;
}

/* --- writing a profile back as JSON -------------------------------------- */

static cJSON *frame_json(const struct rtg_profile_frame *f)
{
    if (f->source) return cJSON_CreateString("source");
    cJSON *o = cJSON_CreateObject();
    for (int a = 0; o && a < 2; a++) {
        char k[2] = {f->axis[a], 0};
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateString(f->from[a]));
        cJSON_AddItemToArray(pair, cJSON_CreateString(f->to[a]));
        cJSON_AddItemToObject(o, k, pair);
    }
    return o;
}

static cJSON *link_json(const struct rtg_profile *p, int i)
{
    static const char *const attach[] = {"root", "direction", "rigid", "scaled"};
    const struct rtg_profile_link *l = &p->links[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "joint", l->joint);
    cJSON_AddStringToObject(o, "link", l->link);
    if (i > 0) {
        cJSON_AddStringToObject(o, "parent", p->links[l->parent].joint);
        cJSON_AddStringToObject(o, "attach", attach[l->attach]);
    }
    cJSON_AddNumberToObject(o, "position_weight", l->wpos);
    cJSON_AddNumberToObject(o, "orientation_weight", l->wrot);
    if (l->frame.source || l->frame.axis[0]) cJSON_AddItemToObject(o, "frame", frame_json(&l->frame));
    if (l->offset_mode == RTG_OFFSET_IDENTITY) cJSON_AddStringToObject(o, "offset", "identity");
    else if (l->offset_mode == RTG_OFFSET_GIVEN)
        cJSON_AddItemToObject(o, "offset", cJSON_CreateDoubleArray(l->offset, 4));
    cJSON_AddStringToObject(o, "reference", l->ref_contacts ? "contacts" : "neutral");
    return o;
}

cJSON *rtg_profile_json(const struct rtg_profile *p)
{
    static const char *const ground[] = {"contacts", "lowest", "none"};
    cJSON *o = cJSON_CreateObject(), *src, *links, *g, *w, *sv;
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "name", p->name);
    if (p->robot) cJSON_AddStringToObject(o, "robot", p->robot);
    if (p->n_links == 0) {
        cJSON *r = cJSON_AddObjectToObject(o, "robot_roles");
        for (int i = 0; r && i < p->n_roles; i++) cJSON_AddStringToObject(r, p->role_name[i], p->role_link[i]);
        return o;
    }
    src = cJSON_AddObjectToObject(o, "source");
    cJSON_AddStringToObject(src, "kind", p->source == RTG_SOURCE_ROBOT ? "robot" : "bvh");
    if (p->source_robot) cJSON_AddStringToObject(src, "robot", p->source_robot);
    if (p->skeleton) cJSON_AddStringToObject(src, "skeleton", p->skeleton);
    if (p->n_match) {
        cJSON *m = cJSON_AddArrayToObject(src, "match");
        for (int i = 0; i < p->n_match; i++) cJSON_AddItemToArray(m, cJSON_CreateString(p->match[i]));
    }
    if (p->units > 0) cJSON_AddNumberToObject(src, "units", p->units);
    if (p->up) {
        char up[2] = {p->up, 0};
        cJSON_AddStringToObject(src, "up", up);
    }
    if (p->scale > 0) cJSON_AddNumberToObject(o, "scale", p->scale);
    cJSON_AddItemToObject(o, "root", link_json(p, 0));
    links = cJSON_AddArrayToObject(o, "links");
    for (int i = 1; i < p->n_links; i++) cJSON_AddItemToArray(links, link_json(p, i));
    if (p->feet[0].link > 0 && p->feet[1].link > 0) {
        cJSON *f = cJSON_AddObjectToObject(o, "feet");
        for (int s = 0; s < 2; s++) {
            cJSON *side = cJSON_AddObjectToObject(f, s ? "right" : "left");
            cJSON_AddStringToObject(side, "joint", p->links[p->feet[s].link].joint);
            if (p->feet[s].toe) cJSON_AddStringToObject(side, "toe", p->feet[s].toe);
        }
    }
    g = cJSON_AddObjectToObject(o, "ground");
    cJSON_AddStringToObject(g, "mode", ground[p->ground]);
    if (p->sole_offset >= 0) cJSON_AddNumberToObject(g, "sole_offset_m", p->sole_offset);
    cJSON_AddNumberToObject(g, "contact_height_m", p->contact_height);
    cJSON_AddNumberToObject(g, "contact_speed_m_s", p->contact_speed);
    cJSON_AddNumberToObject(g, "min_contact_s", p->min_contact);
    cJSON_AddNumberToObject(g, "contact_weight", p->contact_weight);
    w = cJSON_AddObjectToObject(o, "weights");
    cJSON_AddNumberToObject(w, "velocity", p->w_vel);
    cJSON_AddNumberToObject(w, "acceleration", p->w_acc);
    cJSON_AddNumberToObject(w, "rest", p->w_rest);
    sv = cJSON_AddObjectToObject(o, "solver");
    if (p->max_lm_iters >= 0) cJSON_AddNumberToObject(sv, "max_lm_iters", p->max_lm_iters);
    if (p->max_cg_iters >= 0) cJSON_AddNumberToObject(sv, "max_cg_iters", p->max_cg_iters);
    if (p->init_iters >= 0) cJSON_AddNumberToObject(sv, "init_iters", p->init_iters);
    if (p->cg_tol >= 0) cJSON_AddNumberToObject(sv, "cg_tol", p->cg_tol);
    return o;
}

static void frame_free(struct rtg_profile_frame *f)
{
    for (int i = 0; i < 2; i++) {
        free(f->from[i]);
        free(f->to[i]);
    }
}

void rtg_profile_free(struct rtg_profile *p)
{
    if (!p) return;
    free(p->name);
    free(p->robot);
    free(p->skeleton);
    free(p->source_robot);
    for (int i = 0; i < p->n_match; i++) free(p->match[i]);
    free(p->match);
    if (p->links) {
        for (int i = 0; i < p->n_links; i++) {
            free(p->links[i].joint);
            free(p->links[i].link);
            frame_free(&p->links[i].frame);
        }
    }
    free(p->links);
    for (int s = 0; s < 2; s++) free(p->feet[s].toe);
    for (int i = 0; i < p->n_roles; i++) {
        free(p->role_name[i]);
        free(p->role_link[i]);
    }
    free(p->role_name);
    free(p->role_link);
    free(p);
}

const char *const *rtg_profile_bundled(void)
{
    return kin_embedded_profiles_names;
}

const char *rtg_profile_bundled_text(const char *name, size_t *len)
{
    for (const struct kin_embedded *e = kin_embedded_profiles; e->name; e++)
        if (strcmp(e->name, name) == 0) {
            if (len) *len = e->len;
            return e->text;
        }
    return NULL;
}

int rtg_profile_fits_robot(const char *label, const char *robot_name)
{
    size_t n;
    if (!label || !robot_name) return 0;
    n = strlen(label);
    return strncmp(label, robot_name, n) == 0 && (robot_name[n] == 0 || robot_name[n] == '_');
}

const char *rtg_profile_robot_label(const char *robot_name)
{
    const char *label = robot_name;
    const char *const *bundled = kin_robot_bundled();
    for (int i = 0; bundled && bundled[i]; i++)
        if (rtg_profile_fits_robot(bundled[i], robot_name)) label = bundled[i];
    return label;
}

struct rtg_profile *rtg_profile_find_robot_pair(const char *src, const char *dst)
{
    const char *const *names = rtg_profile_bundled();
    for (int i = 0; names && names[i]; i++) {
        const struct rtg_profile *p = rtg_profile_bundled_get(names[i]);
        if (p && p->source == RTG_SOURCE_ROBOT && rtg_profile_fits_robot(p->source_robot, src) &&
            rtg_profile_fits_robot(p->robot, dst))
            return rtg_profile_copy(p);
    }
    return NULL;
}

int rtg_profile_link_index(const struct rtg_profile *p, const char *joint)
{
    for (int i = 0; i < p->n_links; i++)
        if (strcmp(p->links[i].joint, joint) == 0) return i;
    return -1;
}

void rtg_profile_solver_options(const struct rtg_profile *p, struct solver_options *o)
{
    if (p->max_lm_iters > 0) o->max_lm_iters = p->max_lm_iters;
    if (p->max_cg_iters > 0) o->max_cg_iters = p->max_cg_iters;
    if (p->init_iters >= 0) o->init_iters = p->init_iters;
    if (p->cg_tol > 0) o->cg_tol = (float)p->cg_tol;
}
