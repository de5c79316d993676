/* profile.h -- retargeting profiles: how a source skeleton (a BVH clip's
 * joints, or another robot's links) maps onto a robot's links, and the
 * knobs of the retargeting around that mapping (scale, units, up axis,
 * orientation frames and offsets, feet and ground, weights, solver options).
 *
 * A profile is JSON; docs/profiles.md documents every field. Defaults keep
 * a profile short: only "root" and "links" are required. Profiles bundled
 * with the binary (profiles/<name>.json) are looked up by name.
 *
 * Memory: rtg_profile_parse()/rtg_profile_load() return a profile the caller
 * frees with rtg_profile_free(); every pointer inside it is owned by it. */
#ifndef RT_RTG_PROFILE_H
#define RT_RTG_PROFILE_H

#include <stddef.h>

#include "../solver/solver.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RTG_PROFILE_MAX_BYTES (1u << 20)
#define RTG_PROFILE_MAX_LINKS 64   /* == RTG_MAX_TARGETS */
#define RTG_PROFILE_MAX_MATCH 64
#define RTG_PROFILE_MAX_NAME 128
#define RTG_PROFILE_MAX_DEPTH 16   /* JSON nesting */
#define RTG_PROFILE_MAX_ROLES 32   /* entries of "robot_roles" */

enum rtg_profile_source { RTG_SOURCE_BVH = 0, RTG_SOURCE_ROBOT = 1 };

/* How a mapped link's position target is built (docs/profiles.md "links"). */
enum rtg_attach {
    RTG_ATTACH_ROOT = 0,      /* the root: scaled source root position */
    RTG_ATTACH_DIRECTION = 1, /* parent target + robot segment length x source bone direction */
    RTG_ATTACH_RIGID = 2,     /* parent target + parent target rotation x robot zero-pose offset */
    RTG_ATTACH_SCALED = 3     /* parent target + scale x source offset from the parent joint */
};

enum rtg_offset_mode {
    RTG_OFFSET_AUTO = 0,     /* derived: see docs/profiles.md "Orientation offsets" */
    RTG_OFFSET_IDENTITY = 1, /* target rotation = source frame */
    RTG_OFFSET_GIVEN = 2     /* target rotation = source frame x offset quaternion */
};

enum rtg_ground_mode {
    RTG_GROUND_CONTACTS = 0, /* feet in contact touch z = 0; contacts anchored */
    RTG_GROUND_LOWEST = 1,   /* the lowest foot point of the clip touches z = 0; no anchors */
    RTG_GROUND_NONE = 2      /* heights as captured (after units and scale) */
};

/* An orientation frame built from source joint positions: axis `axis[0]`
 * points exactly from joint from[0] to joint to[0]; axis `axis[1]` points
 * from from[1] to to[1], made orthogonal to the first; the third completes a
 * right-handed frame. axis[] are 'x', 'y' or 'z'. With `source` set the
 * frame is instead the source's own rotation of the mapped joint (reliable
 * for robot sources; for BVH it trusts the rest pose). axis[0] == 0 and
 * source == 0: no frame. */
struct rtg_profile_frame {
    int source;  /* 1: the source joint's (link's) own rotation, "frame": "source" */
    char axis[2];
    char *from[2], *to[2];
};

struct rtg_profile_link {
    char *joint;          /* source joint (or source robot link) name */
    char *link;           /* robot link name */
    int parent;           /* index into links[] of the parent mapping; -1 for the root */
    int attach;           /* enum rtg_attach */
    double wpos, wrot;    /* position / orientation weights, >= 0 */
    struct rtg_profile_frame frame; /* source frame for the orientation target */
    int offset_mode;      /* enum rtg_offset_mode */
    double offset[4];     /* RTG_OFFSET_GIVEN: quaternion x y z w (unit) */
    int ref_contacts;     /* 1: derive the offset at contact frames (feet) */
};

struct rtg_profile_foot {
    int link;      /* index into links[] of the foot mapping, -1 if none */
    char *toe;     /* source toe joint (optional; contact detection) */
};

/* Invariants after a successful parse: a roles profile has n_links == 0
 * and 1 <= n_roles <= RTG_PROFILE_MAX_ROLES, every other field at its
 * default; otherwise n_roles == 0, 1 <= n_links <= RTG_PROFILE_MAX_LINKS;
 * links[0] is the root (parent -1, attach ROOT); every other link's parent is
 * a smaller index; weights are finite and >= 0; numbers are in range. Fields
 * the JSON leaves out hold their documented defaults; "auto" is a flag. */
struct rtg_profile {
    char *name;            /* "cmu_g1"; defaults to the file name */
    char *robot;           /* robot the profile targets ("g1"), or NULL */
    char *skeleton;        /* label of the source skeleton ("cmu"), or NULL */
    int source;            /* enum rtg_profile_source */
    char *source_robot;    /* RTG_SOURCE_ROBOT: the source robot's name */
    char **match;          /* joint names that identify the skeleton */
    int n_match;
    double units;          /* metres per source unit; 0: detect */
    char up;               /* 'y', 'z', or 0: detect */
    double scale;          /* 0: auto (leg length ratio) */
    int n_links;
    struct rtg_profile_link *links;
    struct rtg_profile_foot feet[2]; /* left, right */
    int ground;            /* enum rtg_ground_mode */
    double sole_offset;    /* m from the foot link origin down to the sole; < 0: the robot's */
    double contact_height; /* m above the foot's ground level */
    double contact_speed;  /* m/s, horizontal */
    double min_contact;    /* s: shorter contacts and gaps are dropped / filled */
    double contact_weight; /* position weight of a foot anchor */
    double w_vel, w_acc, w_rest; /* multipliers of rtg_targets_default_weights */
    int max_lm_iters, max_cg_iters, init_iters; /* -1: solver default */
    double cg_tol;         /* < 0: solver default */
    /* A roles profile ("robot_roles", docs/profiles.md "Robots without a
     * profile"): n_links == 0 and these name robot links for roles
     * (roles.h names: "left_hand"); the automatic mapping does the rest
     * (rtg_retarget_roles_profile()). 0 and NULL in a mapping profile. */
    int n_roles;
    char **role_name, **role_link;
};

/* Parses profile JSON. `name` labels errors: where is "name:field.path"
 * ("cmu_g1.json:links[3].position_weight") or "name:offset" for malformed
 * JSON. RT_EPARSE for malformed JSON, RT_EINVAL for a bad or unknown field,
 * RT_ELIMIT for oversize input. On failure *out is NULL. */
enum rt_status rtg_profile_parse(const char *text, size_t len, const char *name,
                                 struct rtg_profile **out, struct rt_err *err);

/* Loads a bundled profile by name ("cmu_g1") or a profile file by path
 * (anything containing '/' or ending in ".json"). RT_ENOTFOUND for an
 * unknown bundled name (the message lists them). */
enum rt_status rtg_profile_load(const char *name_or_path, struct rtg_profile **out,
                                struct rt_err *err);

/* NULL-safe. */
void rtg_profile_free(struct rtg_profile *p);

/* A deep copy of `p` (the caller frees it), NULL when out of memory. */
struct rtg_profile *rtg_profile_copy(const struct rtg_profile *p);

/* Bundled profile `name` as parsed once per process (immutable, shared by
 * every thread, never freed), or NULL for an unknown name or one that does
 * not parse. rtg_profile_load() of a bundled name returns a copy of it. */
const struct rtg_profile *rtg_profile_bundled_get(const char *name);

/* `p` as profile JSON that rtg_profile_parse() reads back into the same
 * profile (every field; numbers round-trip exactly). The job recipe stores
 * an automatic mapping this way. The caller deletes the tree; NULL when
 * out of memory. */
struct cJSON;
struct cJSON *rtg_profile_json(const struct rtg_profile *p);

/* How many times rtg_profile_parse() has run in this process (a test
 * hook: bundled profiles are parsed once per process). */
long rtg_profile_parse_count(void);

/* Names of the bundled profiles, NULL-terminated, in detection priority. */
const char *const *rtg_profile_bundled(void);

/* The JSON text of bundled profile `name` (static, NUL-terminated) or NULL. */
const char *rtg_profile_bundled_text(const char *name, size_t *len);

/* 1 when a profile's robot label fits `robot_name`: equal, or robot_name
 * starts with it followed by '_' ("g1" fits "g1_29dof_rev_1_0"). 0 when
 * either is NULL. */
int rtg_profile_fits_robot(const char *label, const char *robot_name);

/* The label profiles use for a robot: the bundled robot name that
 * robot_name fits ("g1" for "g1_29dof_rev_1_0"), else robot_name itself. */
const char *rtg_profile_robot_label(const char *robot_name);

/* The first bundled robot-to-robot profile (source kind "robot") whose
 * source robot fits `src` and whose robot fits `dst`, loaded; the caller
 * frees it with rtg_profile_free(). NULL when there is none. */
struct rtg_profile *rtg_profile_find_robot_pair(const char *src, const char *dst);

/* Index into p->links of the mapping whose source joint is `joint`, or -1. */
int rtg_profile_link_index(const struct rtg_profile *p, const char *joint);

/* Applies the profile's solver overrides to `o` (fields it leaves at their
 * defaults are not touched). */
void rtg_profile_solver_options(const struct rtg_profile *p, struct solver_options *o);

#ifdef __cplusplus
}
#endif
#endif
