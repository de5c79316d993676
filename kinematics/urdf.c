/* urdf.c -- the URDF reader, the robot model built from it, and forward
 * kinematics and geometric Jacobians in double precision (robot.h).
 *
 * Reading happens in two stages. Expat streams the XML and the handlers
 * below copy what matters into plain "source" records in file order: the
 * <link> names and, for every <joint> that is a direct child of <robot>, its
 * type, <parent>, <child>, <origin>, <axis>, <limit> and <mimic>, and each
 * link's <collision> boxes, spheres and cylinders (leniently: a malformed
 * one is dropped, never an error). Everything else (visual, meshes,
 * inertial, gazebo, transmission, material, unknown elements) is skipped
 * without comment. The second stage resolves names,
 * checks the structure (one root, no cycle, one parent joint per link,
 * limits where the type needs them, mimic leaders that exist and move) and
 * builds the robot: links in depth-first order from the root with siblings
 * in file order, joints in file order, coordinates for the movable non-mimic
 * joints in file order, and the float struct rt_tree.
 *
 * Every error names the element and the line ("g1.urdf:120"). Input is
 * untrusted: counts are checked against KIN_MAX_LINKS and names against
 * KIN_MAX_NAME before anything they size is allocated, numbers must be
 * finite and complete, and a DOCTYPE (the door to entity expansion) is
 * refused. */
#include "robot.h"
#include "rot.h"
#include "trig.h"
#include "embed.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <expat.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Source records: what the XML said, in file order, before any checking
 * that needs the whole file. Strings are malloc'd and owned by the parse. */

struct urdf_link_src {
    char *name;
    long line;
};

struct urdf_joint_src {
    char *name;
    long line;
    int type; /* enum kin_joint_type */
    char *parent, *child, *mimic;
    long parent_line, child_line, mimic_line;
    int has_origin, has_axis, has_limit;
    double xyz[3], rpy[3], axis[3];
    double lower, upper, effort, velocity;
    double mimic_mult, mimic_offset;
};

/* A <collision> primitive of a <link> (box, sphere, cylinder), kept for
 * the robot's facts (a foot's sole); anything else is skipped. */
struct urdf_geom_src {
    int link;          /* source link index */
    int type;          /* enum kin_geom_type, or -1 while unknown / unusable */
    double size[3], xyz[3], rpy[3];
};

struct urdf_parse {
    XML_Parser xp;
    const char *label; /* names the input in `where` */
    struct rt_err *err;
    int status;  /* first failure, RT_OK while all is well */
    int depth;   /* element depth: <robot> is 1 */
    int joint;   /* index of the <joint> being read (depth >= 2), or -1 */
    char *robot_name;
    struct urdf_link_src *links;
    struct urdf_joint_src *joints;
    int n_links, cap_links, n_joints, cap_joints;
    int link;    /* source index of the <link> being read, or -1 */
    int geom;    /* index of the <collision> being read, or -1 */
    struct urdf_geom_src *geoms;
    int n_geoms, cap_geoms;
};

/* Storage behind kin_robot.tree, and the same per-link quantities in double
 * for kin_fk/kin_jacobian. Per link i in topological order; entries of link 0
 * (the root) are identity/unused. */
struct kin_robot_priv {
    int *parent, *joint_type, *joint_index;
    float *joint_mult, *joint_offset, *origin_pos, *origin_rot, *axis;
    float *lower, *upper; /* [n_dof] */
    double *d_pos, *d_rot, *d_axis, *d_mult, *d_offset;
    unsigned char *d_shape; /* [n_links] LINK_* bits: which of kin_fk's products are trivial */
};

/* A link's shape (kin_robot_finish): its origin rotation exactly the
 * identity, which components of its origin are exactly zero, and the
 * coordinate axis its joint turns about (when the axis is exactly +-x, +-y
 * or +-z). link_step skips the products these make exact zeros. */
enum {
    LINK_ROT_IDENTITY = 1,
    LINK_POS_ZERO_X = 2, LINK_POS_ZERO_Y = 4, LINK_POS_ZERO_Z = 8,
    LINK_AXIS_SHIFT = 4, /* 2 bits: 0 any axis, 1 + the coordinate axis */
};

/* ---------------------------------------------------------------------------
 * Small rotation helpers (double, row-major 3x3). */

/* URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll). */
static void rot_from_rpy(const double rpy[3], double R[9])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]);
    double cp = cos(rpy[1]), sp = sin(rpy[1]);
    double cy = cos(rpy[2]), sy = sin(rpy[2]);
    R[0] = cy * cp; R[1] = cy * sp * sr - sy * cr; R[2] = cy * sp * cr + sy * sr;
    R[3] = sy * cp; R[4] = sy * sp * sr + cy * cr; R[5] = sy * sp * cr - cy * sr;
    R[6] = -sp;     R[7] = cp * sr;                R[8] = cp * cr;
}

/* ---------------------------------------------------------------------------
 * A link's step of forward kinematics in pieces written once for kin_fk
 * (doubles, one frame) and kin_fk4 (FK4 vectors, four frames: GCC's vector
 * types take the same operators, a double operand applying to every lane),
 * so that each lane does kin_fk's operations in its order. */

/* R = the rotation about the unit axis `a` with cosine c and sine s
 * (Rodrigues); T the type of c, s and R's entries. */
#define LINK_AXIS_ANGLE(T, R, a, c, s)                                                         \
    do {                                                                                       \
        T u_ = 1.0 - (c);                                                                      \
        (R)[0] = (c) + (a)[0] * (a)[0] * u_;                                                   \
        (R)[1] = (a)[0] * (a)[1] * u_ - (a)[2] * (s);                                          \
        (R)[2] = (a)[0] * (a)[2] * u_ + (a)[1] * (s);                                          \
        (R)[3] = (a)[0] * (a)[1] * u_ + (a)[2] * (s);                                          \
        (R)[4] = (c) + (a)[1] * (a)[1] * u_;                                                   \
        (R)[5] = (a)[1] * (a)[2] * u_ - (a)[0] * (s);                                          \
        (R)[6] = (a)[0] * (a)[2] * u_ - (a)[1] * (s);                                          \
        (R)[7] = (a)[1] * (a)[2] * u_ + (a)[0] * (s);                                          \
        (R)[8] = (c) + (a)[2] * (a)[2] * u_;                                                   \
    } while (0)

/* Row i of Rp times (o0, o1, o2): kin_mat_vec's sum, and the same without
 * the terms of o's exactly zero components. */
#define LINK_DOT3(Rp, o, i) ((Rp)[3 * (i)] * (o)[0] + (Rp)[3 * (i) + 1] * (o)[1] + (Rp)[3 * (i) + 2] * (o)[2])
#define LINK_DOT_12(Rp, o, i) ((Rp)[3 * (i) + 1] * (o)[1] + (Rp)[3 * (i) + 2] * (o)[2])
#define LINK_DOT_02(Rp, o, i) ((Rp)[3 * (i)] * (o)[0] + (Rp)[3 * (i) + 2] * (o)[2])
#define LINK_DOT_01(Rp, o, i) ((Rp)[3 * (i)] * (o)[0] + (Rp)[3 * (i) + 1] * (o)[1])

/* t = Rp o less the products of o's components that are exactly zero
 * (z: bit j for component j; all three: t is `zero`). */
#define LINK_ORIGIN(t, Rp, o, z, zero)                                                         \
    do {                                                                                       \
        switch (z) {                                                                           \
        case 0: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = LINK_DOT3(Rp, o, i_); break;          \
        case 1: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = LINK_DOT_12(Rp, o, i_); break;        \
        case 2: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = LINK_DOT_02(Rp, o, i_); break;        \
        case 3: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = (Rp)[3 * i_ + 2] * (o)[2]; break;     \
        case 4: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = LINK_DOT_01(Rp, o, i_); break;        \
        case 5: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = (Rp)[3 * i_ + 1] * (o)[1]; break;     \
        case 6: for (int i_ = 0; i_ < 3; i_++) (t)[i_] = (Rp)[3 * i_] * (o)[0]; break;         \
        default: (t)[0] = (t)[1] = (t)[2] = (zero);                                            \
        }                                                                                      \
    } while (0)

/* R = Ro M (kin_mat_mul's sums), M a joint's rotation: about x, y or z
 * (ax 1, 2, 3) without the products of M's exact zeros (about x, M's column
 * 0 is (M0, 0, 0) and its columns 1 and 2 have no row 0; alike for y, z),
 * else (ax 0) whole. */
#define LINK_ROTATE(R, Ro, M, ax)                                                              \
    do {                                                                                       \
        switch (ax) {                                                                          \
        case 1:                                                                                \
            for (int i_ = 0; i_ < 3; i_++) {                                                   \
                (R)[3 * i_] = (Ro)[3 * i_] * (M)[0];                                           \
                (R)[3 * i_ + 1] = (Ro)[3 * i_ + 1] * (M)[4] + (Ro)[3 * i_ + 2] * (M)[7];       \
                (R)[3 * i_ + 2] = (Ro)[3 * i_ + 1] * (M)[5] + (Ro)[3 * i_ + 2] * (M)[8];       \
            }                                                                                  \
            break;                                                                             \
        case 2:                                                                                \
            for (int i_ = 0; i_ < 3; i_++) {                                                   \
                (R)[3 * i_] = (Ro)[3 * i_] * (M)[0] + (Ro)[3 * i_ + 2] * (M)[6];               \
                (R)[3 * i_ + 1] = (Ro)[3 * i_ + 1] * (M)[4];                                   \
                (R)[3 * i_ + 2] = (Ro)[3 * i_] * (M)[2] + (Ro)[3 * i_ + 2] * (M)[8];           \
            }                                                                                  \
            break;                                                                             \
        case 3:                                                                                \
            for (int i_ = 0; i_ < 3; i_++) {                                                   \
                (R)[3 * i_] = (Ro)[3 * i_] * (M)[0] + (Ro)[3 * i_ + 1] * (M)[3];               \
                (R)[3 * i_ + 1] = (Ro)[3 * i_] * (M)[1] + (Ro)[3 * i_ + 1] * (M)[4];           \
                (R)[3 * i_ + 2] = (Ro)[3 * i_ + 2] * (M)[8];                                   \
            }                                                                                  \
            break;                                                                             \
        default:                                                                               \
            for (int i_ = 0; i_ < 3; i_++)                                                     \
                for (int j_ = 0; j_ < 3; j_++)                                                 \
                    (R)[3 * i_ + j_] = (Ro)[3 * i_] * (M)[j_] + (Ro)[3 * i_ + 1] * (M)[3 + j_] + \
                                       (Ro)[3 * i_ + 2] * (M)[6 + j_];                         \
        }                                                                                      \
    } while (0)

/* Rotation by `theta` about the unit axis `a` (Rodrigues). */
static void rot_from_axis_angle(const double a[3], double theta, double R[9])
{
    double c, s;
    kin_sincos(theta, &s, &c);
    LINK_AXIS_ANGLE(double, R, a, c, s);
}

/* ---------------------------------------------------------------------------
 * Errors. Only the first failure is kept; later handler calls see
 * ps->status != RT_OK and do nothing. */

static void urdf_fail(struct urdf_parse *ps, int code, long line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void urdf_fail(struct urdf_parse *ps, int code, long line, const char *fmt, ...)
{
    char where[RT_ERR_WHERE_MAX], msg[RT_ERR_MSG_MAX];
    va_list ap;
    if (ps->status != RT_OK) return;
    ps->status = code;
    if (line > 0) snprintf(where, sizeof where, "%s:%ld", ps->label, line);
    else snprintf(where, sizeof where, "%s", ps->label);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rt_err_set(ps->err, code, where, "%s", msg);
    if (ps->xp) XML_StopParser(ps->xp, XML_FALSE);
}

static const char *attr_get(const char **atts, const char *key)
{
    for (int i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], key) == 0) return atts[i + 1];
    return NULL;
}

/* Parses exactly n finite decimal numbers separated by white space. Refuses
 * "inf", "nan", hexadecimal and trailing junk; returns 1 on success. */
static int parse_numbers(const char *s, double *out, int n)
{
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.')) return 0;
        out[i] = strtod(p, &end);
        if (end == p || !isfinite(out[i]) || strcspn(p, "xXpP") < (size_t)(end - p)) return 0;
        if (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') return 0;
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return *p == 0;
}

/* Reads attribute `key` of element `elem` into n numbers; an absent
 * attribute leaves `out` alone. Returns 0 after reporting a malformed one. */
static int attr_numbers(struct urdf_parse *ps, const char **atts, const char *key, double *out,
                        int n, const char *elem, long line)
{
    const char *v = attr_get(atts, key);
    double tmp[3];
    assert(n <= 3);
    if (!v) return 1;
    if (!parse_numbers(v, tmp, n)) {
        struct urdf_joint_src *j = &ps->joints[ps->joint];
        urdf_fail(ps, RT_EPARSE, line, "joint '%s': <%s> %s: expected %d number%s, got '%s'",
                  j->name, elem, key, n, n > 1 ? "s" : "", RT_QUOTE(v));
        return 0;
    }
    memcpy(out, tmp, (size_t)n * sizeof *out);
    return 1;
}

/* Copies a name attribute, checking it is present, non-empty and within
 * KIN_MAX_NAME - 1 bytes. Returns NULL after reporting. */
static char *name_dup(struct urdf_parse *ps, const char *v, const char *what, long line)
{
    char *s;
    size_t n;
    if (!v || !v[0]) {
        urdf_fail(ps, RT_EPARSE, line, "%s without a name", what);
        return NULL;
    }
    n = strlen(v);
    if (n >= KIN_MAX_NAME) {
        urdf_fail(ps, RT_ELIMIT, line, "%s name longer than %d bytes: '%s'", what,
                  KIN_MAX_NAME - 1, RT_QUOTE(v));
        return NULL;
    }
    s = malloc(n + 1);
    if (!s) {
        urdf_fail(ps, RT_ENOMEM, line, "out of memory");
        return NULL;
    }
    memcpy(s, v, n + 1);
    return s;
}

/* Grows *arr (elements of `size` bytes) to hold one more than *n, within
 * KIN_MAX_LINKS elements. Returns RT_OK, RT_ELIMIT or RT_ENOMEM. */
static int grow(void **arr, int *cap, int n, size_t size)
{
    size_t bytes;
    int ncap;
    void *p;
    if (n < *cap) return RT_OK;
    if (n >= KIN_MAX_LINKS) return RT_ELIMIT;
    ncap = *cap ? *cap * 2 : 16;
    if (ncap > KIN_MAX_LINKS) ncap = KIN_MAX_LINKS;
    if (!rt_mul_size((size_t)ncap, size, &bytes)) return RT_ENOMEM;
    p = realloc(*arr, bytes);
    if (!p) return RT_ENOMEM;
    *arr = p;
    *cap = ncap;
    return RT_OK;
}

static int joint_type_from(const char *s)
{
    if (!strcmp(s, "revolute")) return KIN_JOINT_REVOLUTE;
    if (!strcmp(s, "continuous")) return KIN_JOINT_CONTINUOUS;
    if (!strcmp(s, "prismatic")) return KIN_JOINT_PRISMATIC;
    if (!strcmp(s, "fixed")) return KIN_JOINT_FIXED;
    return -1;
}

static const char *joint_type_name(int t)
{
    switch (t) {
    case KIN_JOINT_REVOLUTE: return "revolute";
    case KIN_JOINT_CONTINUOUS: return "continuous";
    case KIN_JOINT_PRISMATIC: return "prismatic";
    default: return "fixed";
    }
}

/* ---------------------------------------------------------------------------
 * Expat handlers: stage one. */

static void on_link(struct urdf_parse *ps, const char **atts, long line)
{
    int st = grow((void **)&ps->links, &ps->cap_links, ps->n_links, sizeof *ps->links);
    char *name;
    if (st == RT_ELIMIT) {
        urdf_fail(ps, RT_ELIMIT, line, "more than %d links", KIN_MAX_LINKS);
        return;
    }
    if (st != RT_OK) {
        urdf_fail(ps, RT_ENOMEM, line, "out of memory");
        return;
    }
    if (!(name = name_dup(ps, attr_get(atts, "name"), "<link>", line))) return;
    ps->links[ps->n_links].name = name;
    ps->links[ps->n_links].line = line;
    ps->link = ps->n_links++;
}

/* Exactly n finite numbers separated by blanks in s; 0 otherwise. Lenient
 * on purpose: collision geometry is optional, so a bad one is dropped, not
 * an error (readers elsewhere did not fail on it before it was kept). */
static int soft_numbers(const char *s, double *out, int n)
{
    char *end;
    if (!s) return 0;
    for (int i = 0; i < n; i++) {
        out[i] = strtod(s, &end);
        if (end == s || !isfinite(out[i])) return 0;
        s = end;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return *s == 0;
}

/* Elements inside a <link>: <collision> (depth 3), its <origin> (4), its
 * <geometry>'s primitive (5). */
static void on_link_child(struct urdf_parse *ps, const char *el, const char **atts)
{
    if (ps->depth == 3) {
        if (strcmp(el, "collision") != 0 || ps->n_geoms >= KIN_MAX_GEOMS) return;
        if (ps->n_geoms == ps->cap_geoms) {
            int cap = ps->cap_geoms ? 2 * ps->cap_geoms : 16;
            void *g = realloc(ps->geoms, (size_t)cap * sizeof *ps->geoms);
            if (!g) return; /* optional: dropped */
            ps->geoms = g;
            ps->cap_geoms = cap;
        }
        struct urdf_geom_src *g = &ps->geoms[ps->n_geoms];
        memset(g, 0, sizeof *g);
        g->link = ps->link;
        g->type = -1;
        ps->geom = ps->n_geoms++;
        return;
    }
    if (ps->geom < 0) return;
    struct urdf_geom_src *g = &ps->geoms[ps->geom];
    if (ps->depth == 4 && !strcmp(el, "origin")) {
        double v[3];
        if (soft_numbers(attr_get(atts, "xyz"), v, 3)) memcpy(g->xyz, v, sizeof v);
        if (soft_numbers(attr_get(atts, "rpy"), v, 3)) memcpy(g->rpy, v, sizeof v);
    } else if (ps->depth == 5) {
        double v[3];
        if (!strcmp(el, "box") && soft_numbers(attr_get(atts, "size"), v, 3)) {
            g->type = KIN_GEOM_BOX;
            for (int i = 0; i < 3; i++) g->size[i] = 0.5 * fabs(v[i]);
        } else if (!strcmp(el, "sphere") && soft_numbers(attr_get(atts, "radius"), v, 1)) {
            g->type = KIN_GEOM_SPHERE;
            g->size[0] = fabs(v[0]);
        } else if (!strcmp(el, "cylinder") && soft_numbers(attr_get(atts, "radius"), v, 1) &&
                   soft_numbers(attr_get(atts, "length"), v + 1, 1)) {
            g->type = KIN_GEOM_CYLINDER;
            g->size[0] = fabs(v[0]);
            g->size[1] = 0.5 * fabs(v[1]);
        }
    }
}

static void on_joint(struct urdf_parse *ps, const char **atts, long line)
{
    int st = grow((void **)&ps->joints, &ps->cap_joints, ps->n_joints, sizeof *ps->joints);
    struct urdf_joint_src *j;
    const char *type;
    if (st == RT_ELIMIT) {
        urdf_fail(ps, RT_ELIMIT, line, "more than %d joints", KIN_MAX_LINKS);
        return;
    }
    if (st != RT_OK) {
        urdf_fail(ps, RT_ENOMEM, line, "out of memory");
        return;
    }
    j = &ps->joints[ps->n_joints];
    memset(j, 0, sizeof *j);
    j->line = line;
    j->axis[0] = 1;
    j->mimic_mult = 1;
    if (!(j->name = name_dup(ps, attr_get(atts, "name"), "<joint>", line))) return;
    ps->joint = ps->n_joints++; /* counted now so that the name is freed */
    type = attr_get(atts, "type");
    if (!type) {
        urdf_fail(ps, RT_EPARSE, line, "joint '%s': missing type", j->name);
        return;
    }
    j->type = joint_type_from(type);
    if (j->type < 0) {
        if (!strcmp(type, "floating") || !strcmp(type, "planar"))
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': unsupported joint type '%s' (the base is always floating)",
                      j->name, type);
        else
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': unknown joint type '%s'", j->name, RT_QUOTE(type));
    }
}

/* A child element of the current <joint>. */
static void on_joint_child(struct urdf_parse *ps, const char *el, const char **atts, long line)
{
    struct urdf_joint_src *j = &ps->joints[ps->joint];
    if (!strcmp(el, "parent") || !strcmp(el, "child")) {
        int is_parent = el[0] == 'p';
        char **slot = is_parent ? &j->parent : &j->child;
        const char *v = attr_get(atts, "link");
        if (*slot) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': more than one <%s>", j->name, el);
            return;
        }
        if (!v || !v[0]) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': <%s> without a link", j->name, el);
            return;
        }
        if (!(*slot = name_dup(ps, v, is_parent ? "<parent> link" : "<child> link", line))) return;
        if (is_parent) j->parent_line = line;
        else j->child_line = line;
    } else if (!strcmp(el, "origin")) {
        if (j->has_origin) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': more than one <origin>", j->name);
            return;
        }
        j->has_origin = 1;
        if (!attr_numbers(ps, atts, "xyz", j->xyz, 3, el, line)) return;
        if (!attr_numbers(ps, atts, "rpy", j->rpy, 3, el, line)) return;
        /* Bounds (robot.h): the tree is float32, and an origin past them
         * is no robot. */
        for (int k = 0; k < 6; k++) {
            double v = k < 3 ? j->xyz[k] : j->rpy[k - 3], lim = k < 3 ? KIN_URDF_MAX_ORIGIN : KIN_URDF_MAX_RPY;
            if (fabs(v) > lim) {
                urdf_fail(ps, RT_EINVAL, line, "joint '%s': <origin> %s value %d is %g: the limit is %g %s",
                          j->name, k < 3 ? "xyz" : "rpy", k % 3 + 1, v, lim, k < 3 ? "m" : "rad");
                return;
            }
        }
    } else if (!strcmp(el, "axis")) {
        if (j->has_axis) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': more than one <axis>", j->name);
            return;
        }
        j->has_axis = 1;
        if (!attr_numbers(ps, atts, "xyz", j->axis, 3, el, line)) return;
        if (j->type != KIN_JOINT_FIXED) {
            double n = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
            if (!(n > 1e-12) || !isfinite(n)) {
                urdf_fail(ps, RT_EPARSE, line, "joint '%s': <axis> has zero length", j->name);
                return;
            }
        }
    } else if (!strcmp(el, "limit")) {
        if (j->has_limit) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': more than one <limit>", j->name);
            return;
        }
        j->has_limit = 1;
        if (!attr_numbers(ps, atts, "lower", &j->lower, 1, el, line)) return;
        if (!attr_numbers(ps, atts, "upper", &j->upper, 1, el, line)) return;
        if (!attr_numbers(ps, atts, "effort", &j->effort, 1, el, line)) return;
        if (!attr_numbers(ps, atts, "velocity", &j->velocity, 1, el, line)) return;
        if ((j->type == KIN_JOINT_REVOLUTE || j->type == KIN_JOINT_PRISMATIC) && j->lower > j->upper)
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': <limit> lower %g > upper %g", j->name,
                      j->lower, j->upper);
    } else if (!strcmp(el, "mimic")) {
        const char *v = attr_get(atts, "joint");
        if (j->mimic) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': more than one <mimic>", j->name);
            return;
        }
        if (!v || !v[0]) {
            urdf_fail(ps, RT_EPARSE, line, "joint '%s': <mimic> without a joint", j->name);
            return;
        }
        if (!(j->mimic = name_dup(ps, v, "<mimic> joint", line))) return;
        j->mimic_line = line;
        if (!attr_numbers(ps, atts, "multiplier", &j->mimic_mult, 1, el, line)) return;
        attr_numbers(ps, atts, "offset", &j->mimic_offset, 1, el, line);
    }
    /* calibration, dynamics, safety_controller and the rest: not ours. */
}

/* </joint>: checks that need the whole element. */
static void on_joint_end(struct urdf_parse *ps)
{
    struct urdf_joint_src *j = &ps->joints[ps->joint];
    if (!j->parent)
        urdf_fail(ps, RT_EPARSE, j->line, "joint '%s': missing <parent>", j->name);
    else if (!j->child)
        urdf_fail(ps, RT_EPARSE, j->line, "joint '%s': missing <child>", j->name);
    else if ((j->type == KIN_JOINT_REVOLUTE || j->type == KIN_JOINT_PRISMATIC) && !j->has_limit)
        urdf_fail(ps, RT_EPARSE, j->line, "joint '%s': %s joint without <limit>", j->name,
                  joint_type_name(j->type));
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **atts)
{
    struct urdf_parse *ps = ud;
    long line;
    if (ps->status != RT_OK) return;
    ps->depth++;
    line = (long)XML_GetCurrentLineNumber(ps->xp);
    if (ps->depth == 1) {
        const char *name = attr_get(atts, "name");
        if (strcmp(el, "robot") != 0) {
            urdf_fail(ps, RT_EPARSE, line, "root element is <%s>, expected <robot>", RT_QUOTE(el));
            return;
        }
        if (name && name[0]) ps->robot_name = name_dup(ps, name, "<robot>", line);
    } else if (ps->depth == 2) {
        if (!strcmp(el, "link")) on_link(ps, atts, line);
        else if (!strcmp(el, "joint")) on_joint(ps, atts, line);
    } else if (ps->depth == 3 && ps->joint >= 0) {
        on_joint_child(ps, el, atts, line);
    } else if (ps->depth >= 3 && ps->depth <= 5 && ps->link >= 0) {
        on_link_child(ps, el, atts);
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *el)
{
    struct urdf_parse *ps = ud;
    (void)el;
    if (ps->status != RT_OK) return;
    if (ps->depth == 2 && ps->joint >= 0) {
        on_joint_end(ps);
        ps->joint = -1;
    }
    if (ps->depth == 2) ps->link = -1;
    if (ps->depth == 3) ps->geom = -1;
    ps->depth--;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    struct urdf_parse *ps = ud;
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    urdf_fail(ps, RT_EPARSE, (long)XML_GetCurrentLineNumber(ps->xp),
              "<!DOCTYPE> is not accepted in URDF");
}

static void parse_free(struct urdf_parse *ps)
{
    for (int i = 0; i < ps->n_links; i++) free(ps->links[i].name);
    for (int i = 0; i < ps->n_joints; i++) {
        free(ps->joints[i].name);
        free(ps->joints[i].parent);
        free(ps->joints[i].child);
        free(ps->joints[i].mimic);
    }
    free(ps->links);
    free(ps->joints);
    free(ps->geoms);
    free(ps->robot_name);
    if (ps->xp) XML_ParserFree(ps->xp);
}

/* ---------------------------------------------------------------------------
 * Name lookup: open addressing over an array of names, FNV-1a. */

struct name_index {
    const char *const *names;
    int *slot; /* index + 1, 0 = empty */
    size_t mask;
};

static size_t name_hash(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Builds the index over names[0..n). On a duplicate stores the index of
 * the later name in *dup and of the earlier one in *first; else *dup = -1. */
static int name_index_build(struct name_index *ix, const char *const *names, int n, int *dup,
                            int *first)
{
    size_t cap = 16, bytes;
    while (cap < (size_t)n * 2) cap *= 2;
    *dup = *first = -1;
    ix->names = names;
    ix->mask = cap - 1;
    if (!rt_mul_size(cap, sizeof *ix->slot, &bytes)) return RT_ENOMEM;
    if (!(ix->slot = calloc(1, bytes))) return RT_ENOMEM;
    for (int i = 0; i < n; i++) {
        size_t h = name_hash(names[i]) & ix->mask;
        while (ix->slot[h]) {
            if (!strcmp(names[ix->slot[h] - 1], names[i])) {
                *dup = i;
                *first = ix->slot[h] - 1;
                return RT_OK;
            }
            h = (h + 1) & ix->mask;
        }
        ix->slot[h] = i + 1;
    }
    return RT_OK;
}

static int name_index_find(const struct name_index *ix, const char *s)
{
    size_t h = name_hash(s) & ix->mask;
    while (ix->slot[h]) {
        if (!strcmp(ix->names[ix->slot[h] - 1], s)) return ix->slot[h] - 1;
        h = (h + 1) & ix->mask;
    }
    return -1;
}

/* ---------------------------------------------------------------------------
 * Stage two: resolve names, order the links, build the robot. */

/* The structure of a complete parse, in file-order indices.
 * Invariants once resolve_names() and order_links() succeed: every joint
 * has a parent and a child link, no link has two parent joints, exactly one
 * link (topo[0]) has none, and topo[] lists every link with each parent
 * before its children; pos[] is its inverse. */
struct urdf_tree {
    int *jparent, *jchild; /* [n_joints] link of <parent> and <child> */
    int *leader;           /* [n_joints] mimic leader joint, or -1 */
    int *parent_joint;     /* [n_links] joint whose child the link is, or -1 */
    int *topo;             /* [n_links] link (file order) at each topological position */
    int *pos;              /* [n_links] topological position of each link */
};

static void *alloc_array(size_t n, size_t size)
{
    size_t bytes;
    if (!rt_mul_size(n ? n : 1, size, &bytes)) return NULL;
    return calloc(1, bytes);
}

static void tree_free(struct urdf_tree *t)
{
    free(t->jparent);
    free(t->jchild);
    free(t->leader);
    free(t->parent_joint);
    free(t->topo);
    free(t->pos);
}

/* Unique link and joint names; the links every joint names exist and have
 * one parent joint each; mimic leaders exist and own a coordinate. A mimic
 * on a fixed joint has nothing to follow and is ignored. */
static int resolve_names(struct urdf_parse *ps, struct urdf_tree *t)
{
    int nl = ps->n_links, nj = ps->n_joints, dup, first;
    struct name_index lix = {0}, jix = {0};
    const char **lnames = alloc_array((size_t)nl, sizeof *lnames);
    const char **jnames = alloc_array((size_t)nj, sizeof *jnames);

    if (!lnames || !jnames) goto oom;
    for (int i = 0; i < nl; i++) lnames[i] = ps->links[i].name;
    for (int j = 0; j < nj; j++) jnames[j] = ps->joints[j].name;
    if (name_index_build(&lix, lnames, nl, &dup, &first) != RT_OK) goto oom;
    if (dup >= 0) {
        urdf_fail(ps, RT_EPARSE, ps->links[dup].line, "duplicate link name '%s' (first at line %ld)",
                  lnames[dup], ps->links[first].line);
        goto fail;
    }
    if (name_index_build(&jix, jnames, nj, &dup, &first) != RT_OK) goto oom;
    if (dup >= 0) {
        urdf_fail(ps, RT_EPARSE, ps->joints[dup].line, "duplicate joint name '%s' (first at line %ld)",
                  jnames[dup], ps->joints[first].line);
        goto fail;
    }

    for (int i = 0; i < nl; i++) t->parent_joint[i] = -1;
    for (int j = 0; j < nj; j++) {
        const struct urdf_joint_src *js = &ps->joints[j];
        t->jparent[j] = name_index_find(&lix, js->parent);
        t->jchild[j] = name_index_find(&lix, js->child);
        if (t->jparent[j] < 0) {
            urdf_fail(ps, RT_EPARSE, js->parent_line, "joint '%s': <parent> names unknown link '%s'",
                      js->name, js->parent);
            goto fail;
        }
        if (t->jchild[j] < 0) {
            urdf_fail(ps, RT_EPARSE, js->child_line, "joint '%s': <child> names unknown link '%s'",
                      js->name, js->child);
            goto fail;
        }
        if (t->parent_joint[t->jchild[j]] >= 0) {
            urdf_fail(ps, RT_EPARSE, js->child_line, "link '%s' has two parent joints: '%s' and '%s'",
                      js->child, ps->joints[t->parent_joint[t->jchild[j]]].name, js->name);
            goto fail;
        }
        t->parent_joint[t->jchild[j]] = j;
    }

    for (int j = 0; j < nj; j++) {
        const struct urdf_joint_src *js = &ps->joints[j];
        int l;
        t->leader[j] = -1;
        if (!js->mimic || js->type == KIN_JOINT_FIXED) continue;
        l = name_index_find(&jix, js->mimic);
        if (l < 0) {
            urdf_fail(ps, RT_EPARSE, js->mimic_line, "joint '%s': <mimic> names unknown joint '%s'",
                      js->name, js->mimic);
            goto fail;
        }
        if (ps->joints[l].type == KIN_JOINT_FIXED || ps->joints[l].mimic) {
            urdf_fail(ps, RT_EPARSE, js->mimic_line,
                      "joint '%s': <mimic> leader '%s' is %s; it must be a movable joint that is not itself a mimic",
                      js->name, js->mimic, ps->joints[l].mimic ? "a mimic" : "fixed");
            goto fail;
        }
        t->leader[j] = l;
    }

fail:
    free(lix.slot);
    free(jix.slot);
    free(lnames);
    free(jnames);
    return ps->status;
oom:
    urdf_fail(ps, RT_ENOMEM, 0, "out of memory");
    goto fail;
}

/* One root, then a depth-first walk from it with children in joint file
 * order. Every link has at most one parent, so the walk never meets a link
 * twice, and a link it does not reach hangs below a cycle. */
static int order_links(struct urdf_parse *ps, struct urdf_tree *t)
{
    int nl = ps->n_links, nj = ps->n_joints, root = -1, n_topo = 0, sp = 0;
    int *child_start = alloc_array((size_t)nl + 1, sizeof *child_start);
    int *child_list = alloc_array((size_t)nj, sizeof *child_list);
    int *stack = alloc_array((size_t)nl, sizeof *stack);

    if (!child_start || !child_list || !stack) {
        urdf_fail(ps, RT_ENOMEM, 0, "out of memory");
        goto fail;
    }
    for (int i = 0; i < nl; i++) {
        if (t->parent_joint[i] >= 0) continue;
        if (root >= 0) {
            urdf_fail(ps, RT_EPARSE, ps->links[i].line,
                      "multiple root links: '%s' (line %ld) and '%s' have no parent joint",
                      ps->links[root].name, ps->links[root].line, ps->links[i].name);
            goto fail;
        }
        root = i;
    }

    /* Children of each link in CSR form, stable in joint file order; pos[]
     * serves as the fill cursor before it takes its real meaning. */
    for (int j = 0; j < nj; j++) child_start[t->jparent[j] + 1]++;
    for (int i = 0; i < nl; i++) child_start[i + 1] += child_start[i];
    for (int i = 0; i < nl; i++) t->pos[i] = child_start[i];
    for (int j = 0; j < nj; j++) child_list[t->pos[t->jparent[j]]++] = t->jchild[j];

    if (root >= 0) stack[sp++] = root;
    while (sp > 0) {
        int l = stack[--sp];
        t->topo[n_topo++] = l;
        for (int c = child_start[l + 1] - 1; c >= child_start[l]; c--) stack[sp++] = child_list[c];
    }
    for (int i = 0; i < nl; i++) t->pos[i] = -1;
    for (int k = 0; k < n_topo; k++) t->pos[t->topo[k]] = k;
    if (n_topo < nl) {
        int l = 0;
        while (t->pos[l] >= 0) l++;
        /* nl steps up from an unreached link end inside the cycle. */
        for (int s = 0; s < nl; s++) l = t->jparent[t->parent_joint[l]];
        const struct urdf_joint_src *js = &ps->joints[t->parent_joint[l]];
        urdf_fail(ps, RT_EPARSE, js->line, "joint '%s' closes a cycle through link '%s'", js->name,
                  ps->links[l].name);
        goto fail;
    }

fail:
    free(child_start);
    free(child_list);
    free(stack);
    return ps->status;
}

/* Fills r's links and joints (names copied) and coordinates from a checked
 * parse. Returns RT_OK or RT_ENOMEM. */
static int fill_model(const struct urdf_parse *ps, const struct urdf_tree *t, struct kin_robot *r)
{
    int nl = ps->n_links, nj = ps->n_joints;
    r->n_links = nl;
    r->n_joints = nj;
    r->name = strdup(ps->robot_name ? ps->robot_name : ps->label);
    r->links = alloc_array((size_t)nl, sizeof *r->links);
    r->joints = alloc_array((size_t)nj, sizeof *r->joints);
    if (!r->name || !r->links || !r->joints) return RT_ENOMEM;
    for (int j = 0; j < nj; j++) {
        const struct urdf_joint_src *js = &ps->joints[j];
        struct kin_joint *kj = &r->joints[j];
        double n = sqrt(js->axis[0] * js->axis[0] + js->axis[1] * js->axis[1] + js->axis[2] * js->axis[2]);
        if (!(kj->name = strdup(js->name))) return RT_ENOMEM;
        kj->type = js->type;
        kj->parent = t->pos[t->jparent[j]];
        kj->child = t->pos[t->jchild[j]];
        memcpy(kj->xyz, js->xyz, sizeof kj->xyz);
        memcpy(kj->rpy, js->rpy, sizeof kj->rpy);
        rot_from_rpy(kj->rpy, kj->rot);
        if (n > 1e-12 && isfinite(n)) {
            for (int k = 0; k < 3; k++) kj->axis[k] = js->axis[k] / n;
        } else { /* only a fixed joint gets here */
            kj->axis[0] = 1, kj->axis[1] = 0, kj->axis[2] = 0;
        }
        kj->has_limits = js->type == KIN_JOINT_REVOLUTE || js->type == KIN_JOINT_PRISMATIC;
        if (kj->has_limits) {
            kj->lower = js->lower;
            kj->upper = js->upper;
        } else if (js->type == KIN_JOINT_CONTINUOUS) {
            kj->lower = -INFINITY;
            kj->upper = INFINITY;
        }
        kj->effort = js->effort;
        kj->velocity = js->velocity;
        kj->mimic = t->leader[j];
        kj->mimic_mult = t->leader[j] >= 0 ? js->mimic_mult : 1.0;
        kj->mimic_offset = t->leader[j] >= 0 ? js->mimic_offset : 0.0;
        kj->coord = (js->type != KIN_JOINT_FIXED && t->leader[j] < 0) ? r->n_dof++ : -1;
    }
    for (int k = 0; k < nl; k++) {
        int l = t->topo[k], pj = t->parent_joint[l];
        if (!(r->links[k].name = strdup(ps->links[l].name))) return RT_ENOMEM;
        r->links[k].joint = pj;
        r->links[k].parent = pj >= 0 ? t->pos[t->jparent[pj]] : -1;
    }
    r->coord_joint = alloc_array((size_t)r->n_dof, sizeof *r->coord_joint);
    if (!r->coord_joint) return RT_ENOMEM;
    for (int j = 0; j < nj; j++)
        if (r->joints[j].coord >= 0) r->coord_joint[r->joints[j].coord] = j;
    return RT_OK;
}

/* Fills the per-link flat arrays behind r->tree (float, for the solver) and
 * their double twins (for kin_fk), and points r->tree at them. Both come
 * from the same double origins (each joint's xyz and rot), so they differ
 * only by the float rounding. Shared by both readers (robot.h). Returns
 * RT_OK or RT_ENOMEM. */
enum rt_status kin_robot_finish(struct kin_robot *r)
{
    struct kin_robot_priv *pv = r->priv;
    size_t nl = (size_t)r->n_links, nd = (size_t)r->n_dof;
    if (!pv && !(pv = r->priv = calloc(1, sizeof *pv))) return RT_ENOMEM;
    pv->parent = alloc_array(nl, sizeof *pv->parent);
    pv->joint_type = alloc_array(nl, sizeof *pv->joint_type);
    pv->joint_index = alloc_array(nl, sizeof *pv->joint_index);
    pv->joint_mult = alloc_array(nl, sizeof *pv->joint_mult);
    pv->joint_offset = alloc_array(nl, sizeof *pv->joint_offset);
    pv->origin_pos = alloc_array(nl * 3, sizeof *pv->origin_pos);
    pv->origin_rot = alloc_array(nl * 9, sizeof *pv->origin_rot);
    pv->axis = alloc_array(nl * 3, sizeof *pv->axis);
    pv->lower = alloc_array(nd, sizeof *pv->lower);
    pv->upper = alloc_array(nd, sizeof *pv->upper);
    pv->d_pos = alloc_array(nl * 3, sizeof *pv->d_pos);
    pv->d_rot = alloc_array(nl * 9, sizeof *pv->d_rot);
    pv->d_axis = alloc_array(nl * 3, sizeof *pv->d_axis);
    pv->d_mult = alloc_array(nl, sizeof *pv->d_mult);
    pv->d_offset = alloc_array(nl, sizeof *pv->d_offset);
    pv->d_shape = alloc_array(nl, sizeof *pv->d_shape);
    if (!pv->parent || !pv->joint_type || !pv->joint_index || !pv->joint_mult || !pv->joint_offset ||
        !pv->origin_pos || !pv->origin_rot || !pv->axis || !pv->lower || !pv->upper || !pv->d_pos ||
        !pv->d_rot || !pv->d_axis || !pv->d_mult || !pv->d_offset || !pv->d_shape)
        return RT_ENOMEM;

    for (size_t c = 0; c < nd; c++) {
        const struct kin_joint *kj = &r->joints[r->coord_joint[c]];
        if (kj->type == KIN_JOINT_CONTINUOUS) {
            pv->lower[c] = -FLT_MAX;
            pv->upper[c] = FLT_MAX;
        } else { /* clamped, so that a huge double limit stays a finite float */
            pv->lower[c] = (float)fmax(fmin(kj->lower, FLT_MAX), -FLT_MAX);
            pv->upper[c] = (float)fmax(fmin(kj->upper, FLT_MAX), -FLT_MAX);
        }
    }
    for (size_t k = 0; k < nl; k++) {
        int j = r->links[k].joint;
        const struct kin_joint *kj = j >= 0 ? &r->joints[j] : NULL;
        double *R = pv->d_rot + 9 * k;
        pv->parent[k] = r->links[k].parent;
        pv->d_mult[k] = 1.0;
        if (!kj) { /* the root: identity origin, no motion */
            pv->joint_type[k] = RT_JOINT_FIXED;
            pv->joint_index[k] = -1;
            R[0] = R[4] = R[8] = 1.0;
            pv->d_axis[3 * k] = 1.0;
        } else {
            pv->joint_type[k] = kj->type == KIN_JOINT_FIXED       ? RT_JOINT_FIXED
                                : kj->type == KIN_JOINT_PRISMATIC ? RT_JOINT_PRISMATIC
                                                                  : RT_JOINT_REVOLUTE;
            if (kj->type == KIN_JOINT_FIXED) {
                pv->joint_index[k] = -1;
            } else if (kj->mimic >= 0) {
                pv->joint_index[k] = r->joints[kj->mimic].coord;
                pv->d_mult[k] = kj->mimic_mult;
                pv->d_offset[k] = kj->mimic_offset;
            } else {
                pv->joint_index[k] = kj->coord;
            }
            memcpy(R, kj->rot, sizeof kj->rot);
            memcpy(pv->d_pos + 3 * k, kj->xyz, sizeof kj->xyz);
            memcpy(pv->d_axis + 3 * k, kj->axis, sizeof kj->axis);
        }
        pv->joint_mult[k] = (float)pv->d_mult[k];
        pv->joint_offset[k] = (float)pv->d_offset[k];
        for (int i = 0; i < 3; i++) pv->origin_pos[3 * k + i] = (float)pv->d_pos[3 * k + i];
        for (int i = 0; i < 3; i++) pv->axis[3 * k + i] = (float)pv->d_axis[3 * k + i];
        for (int i = 0; i < 9; i++) pv->origin_rot[9 * k + i] = (float)R[i];
        unsigned sh = 0;
        int ident = 1, axis = -1, ones = 0, zeros = 0;
        for (int i = 0; i < 9; i++) ident &= R[i] == (i % 4 == 0 ? 1.0 : 0.0);
        if (ident) sh |= LINK_ROT_IDENTITY;
        for (int i = 0; i < 3; i++) {
            if (pv->d_pos[3 * k + i] == 0.0) sh |= (unsigned)LINK_POS_ZERO_X << i;
            double a = pv->d_axis[3 * k + i];
            if (a == 0.0) zeros++;
            else if (a == 1.0 || a == -1.0) { ones++; axis = i; }
        }
        if (zeros == 2 && ones == 1) sh |= (unsigned)(1 + axis) << LINK_AXIS_SHIFT;
        pv->d_shape[k] = (unsigned char)sh;
    }
    r->tree.n_links = r->n_links;
    r->tree.n_joints = r->n_dof;
    r->tree.floating_base = 1;
    r->tree.parent = pv->parent;
    r->tree.joint_type = pv->joint_type;
    r->tree.joint_index = pv->joint_index;
    r->tree.joint_mult = pv->joint_mult;
    r->tree.joint_offset = pv->joint_offset;
    r->tree.origin_pos = pv->origin_pos;
    r->tree.origin_rot = pv->origin_rot;
    r->tree.axis = pv->axis;
    r->tree.lower = pv->lower;
    r->tree.upper = pv->upper;
    return RT_OK;
}

/* Checks a complete parse and builds the robot into *out. Reports through
 * urdf_fail() and returns ps->status; *out is set only on success. */
static int build_robot(struct urdf_parse *ps, struct kin_robot **out)
{
    size_t nl = (size_t)ps->n_links, nj = (size_t)ps->n_joints;
    struct urdf_tree t = {0};
    struct kin_robot *r = NULL;

    if (nl == 0) {
        urdf_fail(ps, RT_EPARSE, 0, "no <link> elements");
        goto fail;
    }
    t.jparent = alloc_array(nj, sizeof *t.jparent);
    t.jchild = alloc_array(nj, sizeof *t.jchild);
    t.leader = alloc_array(nj, sizeof *t.leader);
    t.parent_joint = alloc_array(nl, sizeof *t.parent_joint);
    t.topo = alloc_array(nl, sizeof *t.topo);
    t.pos = alloc_array(nl, sizeof *t.pos);
    if (!t.jparent || !t.jchild || !t.leader || !t.parent_joint || !t.topo || !t.pos) {
        urdf_fail(ps, RT_ENOMEM, 0, "out of memory");
        goto fail;
    }
    if (resolve_names(ps, &t) != RT_OK || order_links(ps, &t) != RT_OK) goto fail;
    if (!(r = calloc(1, sizeof *r)) || fill_model(ps, &t, r) != RT_OK || kin_robot_finish(r) != RT_OK) {
        urdf_fail(ps, RT_ENOMEM, 0, "out of memory");
        goto fail;
    }
    /* Collision primitives, on their links in topological order. */
    int n_geoms = 0;
    for (int g = 0; g < ps->n_geoms; g++) n_geoms += ps->geoms[g].type >= 0;
    if (n_geoms > 0 && (r->geoms = calloc((size_t)n_geoms, sizeof *r->geoms)) != NULL) {
        for (int g = 0; g < ps->n_geoms; g++) {
            const struct urdf_geom_src *src = &ps->geoms[g];
            struct kin_geom *d;
            double R[9];
            if (src->type < 0) continue;
            d = &r->geoms[r->n_geoms++];
            d->link = t.pos[src->link];
            d->type = src->type;
            d->contype = d->conaffinity = 1;
            memcpy(d->size, src->size, sizeof d->size);
            memcpy(d->pos, src->xyz, sizeof d->pos);
            rot_from_rpy(src->rpy, R);
            kin_mat_to_quat(R, d->quat);
        }
    }
    *out = r;
    r = NULL;

fail:
    kin_robot_free(r);
    tree_free(&t);
    return ps->status;
}

/* Parses `len` bytes of URDF text (no NUL needed) into a new robot in *out
 * (robot.h). On failure *out is NULL, nothing is left allocated, and `err`
 * says "name:LINE" and what is wrong; RT_EPARSE for bad input, RT_ELIMIT
 * past KIN_URDF_MAX_BYTES, KIN_MAX_LINKS links or joints, or KIN_MAX_NAME. */
enum rt_status kin_robot_parse_urdf(const char *text, size_t len, const char *name,
                                    struct kin_robot **out, struct rt_err *err)
{
    struct urdf_parse ps;
    memset(&ps, 0, sizeof ps);
    ps.label = name && name[0] ? name : "urdf";
    ps.err = err;
    ps.joint = -1;
    ps.link = -1;
    ps.geom = -1;
    *out = NULL;
    if (!text && len) return rt_err_set(err, RT_EINVAL, ps.label, "no URDF text");
    if (len > KIN_URDF_MAX_BYTES)
        return rt_err_set(err, RT_ELIMIT, ps.label, "URDF larger than %u bytes", KIN_URDF_MAX_BYTES);
    if (!(ps.xp = XML_ParserCreate(NULL))) return rt_err_set(err, RT_ENOMEM, ps.label, "out of memory");
    XML_SetUserData(ps.xp, &ps);
    XML_SetElementHandler(ps.xp, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(ps.xp, on_doctype);
    if (XML_Parse(ps.xp, text ? text : "", (int)len, XML_TRUE) != XML_STATUS_OK && ps.status == RT_OK) {
        enum XML_Error code = XML_GetErrorCode(ps.xp);
        urdf_fail(&ps, code == XML_ERROR_NO_MEMORY ? RT_ENOMEM : RT_EPARSE,
                  (long)XML_GetCurrentLineNumber(ps.xp), "XML: %s", XML_ErrorString(code));
    }
    XML_ParserFree(ps.xp);
    ps.xp = NULL;
    if (ps.status == RT_OK) build_robot(&ps, out);
    parse_free(&ps);
    return ps.status;
}

/* The name of the root element of XML `text` and its line: skips a byte
 * order mark, white space, the XML declaration, processing instructions
 * and comments. Returns 0 when the text does not start like that (a
 * DOCTYPE, garbage): the URDF reader then says what is wrong. */
static int root_element(const char *text, size_t len, char *name, size_t cap, long *line)
{
    size_t i = 0;
    *line = 1;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) i = 3;
    for (;;) {
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
            if (text[i++] == '\n') ++*line;
        if (i + 1 >= len || text[i] != '<') return 0;
        const char *close = NULL;
        if (text[i + 1] == '?') close = "?>";
        else if (len - i >= 4 && !memcmp(text + i, "<!--", 4)) close = "-->";
        if (!close) {
            if (text[i + 1] == '!') return 0;
            break;
        }
        size_t n = strlen(close), j = i + 2;
        while (j + n <= len && memcmp(text + j, close, n)) j++;
        if (j + n > len) return 0;
        for (size_t k = i; k < j; k++)
            if (text[k] == '\n') ++*line;
        i = j + n;
    }
    size_t k = 0;
    for (i++; i < len && k + 1 < cap && !strchr(" \t\r\n/>", text[i]) && text[i]; i++) name[k++] = text[i];
    name[k] = 0;
    return k > 0;
}

/* Picks the reader by the root element (robot.h). */
enum rt_status kin_robot_parse(const char *text, size_t len, const char *name, const char *base_dir,
                               struct kin_robot **out, struct rt_err *err)
{
    char root[40];
    long line;
    const char *label = name && name[0] ? name : "robot";
    *out = NULL;
    if (!text && len) return rt_err_set(err, RT_EINVAL, label, "no robot text");
    if (text && root_element(text, len, root, sizeof root, &line)) {
        if (!strcmp(root, "mujoco")) return kin_robot_parse_mjcf(text, len, name, base_dir, out, err);
        if (strcmp(root, "robot") != 0) {
            char where[RT_ERR_WHERE_MAX];
            snprintf(where, sizeof where, "%s:%ld", label, line);
            return rt_err_set(err, RT_EPARSE, where,
                              "root element is <%s>, expected <robot> (URDF) or <mujoco> (MJCF)", RT_QUOTE(root));
        }
    }
    return kin_robot_parse_urdf(text, len, name, out, err);
}

static int ends_with(const char *s, size_t n, const char *tail)
{
    size_t t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* A bundled name is one without '/' that does not end in ".urdf" or
 * ".xml"; an unknown one is RT_ENOTFOUND with the bundled names listed.
 * Anything else is a file path, read whole (RT_EIO, RT_ELIMIT) and parsed
 * by its root element with the path as the label of its errors and its
 * folder as the base of MJCF includes. *out is NULL on failure. */
enum rt_status kin_robot_load(const char *name_or_path, struct kin_robot **out, struct rt_err *err)
{
    const char *s = name_or_path;
    size_t n;
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    enum rt_status st;
    *out = NULL;
    if (!s || !s[0]) return rt_err_set(err, RT_EINVAL, "robot", "no robot name or path");
    n = strlen(s);
    if (!strchr(s, '/') && !ends_with(s, n, ".urdf") && !ends_with(s, n, ".xml")) {
        char list[96] = "";
        for (const struct kin_embedded *e = kin_embedded_robots; e->name; e++) {
            if (!strcmp(e->name, s)) return kin_robot_parse_urdf(e->text, e->len, s, out, err);
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", e == kin_embedded_robots ? "" : ", ", e->name);
        }
        return rt_err_set(err, RT_ENOTFOUND, s,
                          "unknown robot '%s' (bundled: %s; or give a .urdf or .xml path)", RT_QUOTE(s), list);
    }
    st = rt_read_file(s, KIN_URDF_MAX_BYTES, &text, &len, err);
    if (st != RT_OK) return st;
    const char *slash = strrchr(s, '/');
    if (!(dir = slash ? strndup(s, (size_t)(slash - s) + (slash == s)) : strdup("."))) {
        free(text);
        return rt_err_set(err, RT_ENOMEM, s, "out of memory");
    }
    st = kin_robot_parse(text, len, s, dir, out, err);
    free(dir);
    free(text);
    return st;
}

/* Frees the robot and everything it owns; NULL-safe. Also frees a robot
 * that build_robot() left half-built (NULL members are skipped). */
void kin_robot_free(struct kin_robot *r)
{
    struct kin_robot_priv *pv;
    if (!r) return;
    pv = r->priv;
    if (pv) {
        free(pv->parent);
        free(pv->joint_type);
        free(pv->joint_index);
        free(pv->joint_mult);
        free(pv->joint_offset);
        free(pv->origin_pos);
        free(pv->origin_rot);
        free(pv->axis);
        free(pv->lower);
        free(pv->upper);
        free(pv->d_pos);
        free(pv->d_rot);
        free(pv->d_axis);
        free(pv->d_mult);
        free(pv->d_offset);
        free(pv->d_shape);
        free(pv);
    }
    if (r->links)
        for (int i = 0; i < r->n_links; i++) free(r->links[i].name);
    if (r->joints)
        for (int i = 0; i < r->n_joints; i++) free(r->joints[i].name);
    if (r->geoms)
        for (int i = 0; i < r->n_geoms; i++) {
            free(r->geoms[i].name);
            free(r->geoms[i].mesh);
        }
    free(r->geoms);
    free(r->links);
    free(r->joints);
    free(r->coord_joint);
    free(r->name);
    free(r);
}

/* Linear search: these run once per name while setting up, never per frame. */
int kin_robot_link_index(const struct kin_robot *r, const char *name)
{
    for (int i = 0; i < r->n_links; i++)
        if (!strcmp(r->links[i].name, name)) return i;
    return -1;
}

int kin_link_is_ancestor(const struct kin_robot *r, int a, int b)
{
    for (; b >= 0; b = r->links[b].parent)
        if (a == b) return 1;
    return 0;
}

int kin_link_common_ancestor(const struct kin_robot *r, int a, int b)
{
    for (; a >= 0; a = r->links[a].parent)
        if (kin_link_is_ancestor(r, a, b)) return a;
    return -1;
}

/* As kin_robot_link_index(), over joints in file order. */
int kin_robot_joint_index(const struct kin_robot *r, const char *name)
{
    for (int i = 0; i < r->n_joints; i++)
        if (!strcmp(r->joints[i].name, name)) return i;
    return -1;
}

/* The generated table (embed.h); static, never NULL. */
const char *const *kin_robot_bundled(void)
{
    return kin_embedded_robots_names;
}

const char *kin_robot_bundled_text(const char *name, size_t *len)
{
    for (const struct kin_embedded *e = kin_embedded_robots; e->name; e++)
        if (!strcmp(e->name, name)) {
            if (len) *len = e->len;
            return e->text;
        }
    return NULL;
}

/* ---------------------------------------------------------------------------
 * Kinematics in double. */

/* World pose of link k from its parent's pose: T_k = T_parent * origin_k *
 * motion_k. `q` holds the coordinates. Every product is kin_mat_mul's and
 * kin_mat_vec's, each sum in its order, except that a term the link's shape
 * makes an exact zero (an identity origin, a zero origin component, a
 * coordinate axis's off-plane entries) is not added: adding a zero leaves
 * every other sum as it is, so only a result that is itself zero can
 * differ, and then only in its sign. */
static void link_step(const struct kin_robot_priv *pv, int k, const double *q, const double *p_par,
                      const double *R_par, double *p, double *R)
{
    double Rb[9], t[3];
    const double *Ro = R_par;
    int idx = pv->joint_index[k];
    unsigned sh = pv->d_shape[k];
    double v = idx >= 0 ? pv->d_mult[k] * q[idx] + pv->d_offset[k] : 0.0;
    const double *a = pv->d_axis + 3 * k, *o = pv->d_pos + 3 * k;
    if (!(sh & LINK_ROT_IDENTITY)) {
        kin_mat_mul(R_par, pv->d_rot + 9 * k, Rb);
        Ro = Rb;
    }
    LINK_ORIGIN(t, R_par, o, (sh / LINK_POS_ZERO_X) & 7u, 0.0);
    for (int i = 0; i < 3; i++) p[i] = p_par[i] + t[i];
    if (idx >= 0 && pv->joint_type[k] == RT_JOINT_REVOLUTE) {
        double M[9];
        rot_from_axis_angle(a, v, M);
        LINK_ROTATE(R, Ro, M, (sh >> LINK_AXIS_SHIFT) & 3u);
    } else {
        memcpy(R, Ro, sizeof Rb);
        if (idx >= 0 && pv->joint_type[k] == RT_JOINT_PRISMATIC) {
            kin_mat_vec(Ro, a, t);
            for (int i = 0; i < 3; i++) p[i] += t[i] * v;
        }
    }
}

/* Links in topological order, so each parent's pose is ready before its
 * children's. The caller provides state[7 + n_dof], link_pos[3 n_links] and
 * link_rot[9 n_links]. */
void kin_fk(const struct kin_robot *r, const double *state, double *link_pos, double *link_rot)
{
    const struct kin_robot_priv *pv = r->priv;
    const double *q = state + RT_ROOT_COLS;
    memcpy(link_pos, state, 3 * sizeof *link_pos);
    kin_quat_to_mat(state + 3, link_rot);
    for (int k = 1; k < r->n_links; k++) {
        int p = pv->parent[k];
        link_step(pv, k, q, link_pos + 3 * p, link_rot + 9 * p, link_pos + 3 * k, link_rot + 9 * k);
    }
}

/* ---------------------------------------------------------------------------
 * Four frames at once. Lane l of every FK4 vector is frame l, and each lane
 * takes link_step's operations in its order (the LINK_ pieces above, the
 * same products and sums of doubles, nothing contracted: -ffp-contract=off),
 * so a lane's values are kin_fk's bits (the sine and cosine too: trig.h).
 * With AVX a vector is one register (the "avx" clone of KIN_CLONES, trig.h,
 * and "avx2", whose integer lanes serve the sine's range reduction; not
 * under ASan, whose run then checks the default one); without it the
 * compiler splits it in two SSE2 halves. Robots of more than FK4_MAX_LINKS
 * links (their four frames' links would not fit the stack) go frame by
 * frame. */

#define FK4_MAX_LINKS 128

#if defined(__GNUC__) || defined(__clang__)
typedef kin_v4d fk4_v; /* trig.h */

struct fk4_link {
    fk4_v p[3], R[9];
};

/* link_step over four frames: q[l] is frame l's coordinates. */
static inline __attribute__((always_inline)) void link_step4(const struct kin_robot_priv *pv, int k,
                                                             const double *const q[4], const struct fk4_link *par,
                                                             struct fk4_link *out)
{
    const fk4_v zero = {0.0, 0.0, 0.0, 0.0};
    fk4_v Rb[9], t[3], v = zero;
    const fk4_v *Ro = par->R;
    int idx = pv->joint_index[k];
    unsigned sh = pv->d_shape[k];
    const double *a = pv->d_axis + 3 * k, *o = pv->d_pos + 3 * k;
    if (idx >= 0) {
        fk4_v qi = {q[0][idx], q[1][idx], q[2][idx], q[3][idx]};
        v = pv->d_mult[k] * qi + pv->d_offset[k];
    }
    if (!(sh & LINK_ROT_IDENTITY)) {
        LINK_ROTATE(Rb, par->R, pv->d_rot + 9 * k, 0); /* kin_mat_mul's sums */
        Ro = Rb;
    }
    LINK_ORIGIN(t, par->R, o, (sh / LINK_POS_ZERO_X) & 7u, zero);
    for (int i = 0; i < 3; i++) out->p[i] = par->p[i] + t[i];
    if (idx >= 0 && pv->joint_type[k] == RT_JOINT_REVOLUTE) {
        fk4_v c, s, M[9];
        kin_sincos4(&v, &s, &c);
        LINK_AXIS_ANGLE(fk4_v, M, a, c, s);
        LINK_ROTATE(out->R, Ro, M, (sh >> LINK_AXIS_SHIFT) & 3u);
    } else {
        memcpy(out->R, Ro, sizeof out->R);
        if (idx >= 0 && pv->joint_type[k] == RT_JOINT_PRISMATIC)
            for (int i = 0; i < 3; i++) {
                fk4_v ti = LINK_DOT3(Ro, a, i); /* kin_mat_vec's */
                out->p[i] += ti * v;
            }
    }
}

/* n (1..4) frames: frame l's state at state + l stride, its links at
 * link_pos + 3 l n_links and link_rot + 9 l n_links. */
static KIN_CLONES void kin_fk4(const struct kin_robot *r, int n, const double *state, size_t stride,
                               double *link_pos, double *link_rot)
{
    const struct kin_robot_priv *pv = r->priv;
    size_t nl = (size_t)r->n_links;
    struct fk4_link L[FK4_MAX_LINKS];
    const double *q[4];
    for (int l = 0; l < 4; l++) {
        const double *s = state + (size_t)(l < n ? l : 0) * stride; /* lanes past n: frame 0 again */
        double m[9];
        q[l] = s + RT_ROOT_COLS;
        kin_quat_to_mat(s + 3, m);
        for (int i = 0; i < 3; i++) L[0].p[i][l] = s[i];
        for (int i = 0; i < 9; i++) L[0].R[i][l] = m[i];
    }
    for (size_t k = 1; k < nl; k++) link_step4(pv, (int)k, q, &L[pv->parent[k]], &L[k]);
    /* Out frame by frame, each lane by its constant index; the lanes past
     * n go to `spare`. */
    double spare[12 * FK4_MAX_LINKS], *P[4], *R[4];
    for (int l = 0; l < 4; l++) {
        P[l] = l < n ? link_pos + (size_t)l * 3 * nl : spare;
        R[l] = l < n ? link_rot + (size_t)l * 9 * nl : spare + 3 * FK4_MAX_LINKS;
    }
    for (size_t k = 0; k < nl; k++) {
        for (int i = 0; i < 3; i++) {
            fk4_v x = L[k].p[i];
            P[0][3 * k + i] = x[0], P[1][3 * k + i] = x[1], P[2][3 * k + i] = x[2], P[3][3 * k + i] = x[3];
        }
        for (int i = 0; i < 9; i++) {
            fk4_v x = L[k].R[i];
            R[0][9 * k + i] = x[0], R[1][9 * k + i] = x[1], R[2][9 * k + i] = x[2], R[3][9 * k + i] = x[3];
        }
    }
}
#endif

void kin_fk_frames(const struct kin_robot *r, int n, const double *state, size_t stride, double *link_pos,
                   double *link_rot)
{
    size_t nl = (size_t)r->n_links;
#if defined(__GNUC__) || defined(__clang__)
    if (r->n_links <= FK4_MAX_LINKS) {
        for (int f = 0; f < n; f += 4)
            kin_fk4(r, n - f < 4 ? n - f : 4, state + (size_t)f * stride, stride, link_pos + (size_t)f * 3 * nl,
                    link_rot + (size_t)f * 9 * nl);
        return;
    }
#endif
    for (int f = 0; f < n; f++)
        kin_fk(r, state + (size_t)f * stride, link_pos + (size_t)f * 3 * nl, link_rot + (size_t)f * 9 * nl);
}

/* Geometric Jacobian of `link` (robot.h for the column convention). Walks
 * only the path from the root to the link, twice: once for the link's
 * position, once for the columns, so it needs no scratch beyond the path.
 * The caller provides J[6 * (6 + n_dof)] and 0 <= link < n_links. */
void kin_jacobian(const struct kin_robot *r, const double *state, int link, double *J)
{
    const struct kin_robot_priv *pv = r->priv;
    const double *q = state + RT_ROOT_COLS;
    int path[KIN_MAX_LINKS], n_path = 0, cols = 6 + r->n_dof;
    double p[3], R[9], x[3], d[3];
    assert(link >= 0 && link < r->n_links);
    memset(J, 0, (size_t)6 * (size_t)cols * sizeof *J);
    for (int k = link; k > 0; k = pv->parent[k]) path[n_path++] = k;

    /* Pass 1: the link's world position x. */
    memcpy(p, state, sizeof p);
    kin_quat_to_mat(state + 3, R);
    for (int s = n_path - 1; s >= 0; s--) {
        double pn[3], Rn[9];
        link_step(pv, path[s], q, p, R, pn, Rn);
        memcpy(p, pn, sizeof p);
        memcpy(R, Rn, sizeof R);
    }
    memcpy(x, p, sizeof x);

    /* Base: dp moves every link by dp; dphi (world frame, R <- Exp(dphi) R)
     * rotates every link about the root origin: dx = dphi x (x - p_root). */
    for (int i = 0; i < 3; i++) {
        J[i * cols + i] = 1.0;
        J[(3 + i) * cols + 3 + i] = 1.0;
        d[i] = x[i] - state[i];
    }
    J[0 * cols + 4] = d[2];  J[0 * cols + 5] = -d[1];
    J[1 * cols + 3] = -d[2]; J[1 * cols + 5] = d[0];
    J[2 * cols + 3] = d[1];  J[2 * cols + 4] = -d[0];

    /* Pass 2: each moving joint on the path, in its coordinate's column.
     * The joint axis in the world is R_k a (a revolute motion leaves its own
     * axis fixed); the joint sits at the child link's origin. Mimic joints
     * add to their leader's column, scaled by their multiplier. */
    memcpy(p, state, sizeof p);
    kin_quat_to_mat(state + 3, R);
    for (int s = n_path - 1; s >= 0; s--) {
        int k = path[s], idx = pv->joint_index[k];
        double pn[3], Rn[9], w[3], c[3];
        link_step(pv, k, q, p, R, pn, Rn);
        memcpy(p, pn, sizeof p);
        memcpy(R, Rn, sizeof R);
        if (idx < 0) continue;
        kin_mat_vec(R, pv->d_axis + 3 * k, w);
        double m = pv->d_mult[k];
        int col = 6 + idx;
        if (pv->joint_type[k] == RT_JOINT_REVOLUTE) {
            for (int i = 0; i < 3; i++) d[i] = x[i] - p[i];
            kin_cross(w, d, c);
            for (int i = 0; i < 3; i++) {
                J[i * cols + col] += m * c[i];
                J[(3 + i) * cols + col] += m * w[i];
            }
        } else {
            for (int i = 0; i < 3; i++) J[i * cols + col] += m * w[i];
        }
    }
}

/* ---------------------------------------------------------------------------
 * JSON summary. */

/* A number that reads back to exactly `v` (rt_format_double); non-finite
 * values become null. */
static cJSON *json_number(double v)
{
    char buf[40];
    if (!isfinite(v)) return cJSON_CreateNull();
    rt_format_double(v, buf, sizeof buf);
    return cJSON_CreateRaw(buf);
}

/* Adds `item` to `obj` under `key`; a NULL item (failed allocation) makes
 * *ok 0 so that the caller checks once at the end. */
static void json_add(cJSON *obj, const char *key, cJSON *item, int *ok)
{
    if (!item) { *ok = 0; return; }
    if (key) cJSON_AddItemToObject(obj, key, item);
    else cJSON_AddItemToArray(obj, item);
}

/* The `retarget inspect` summary (robot.h), plus "effort" and "velocity"
 * for movable joints and "mimic" {joint, multiplier, offset} for mimic
 * joints. Limits are null for continuous and fixed joints. Returns a
 * malloc'd string the caller frees, or NULL when out of memory. */
char *kin_robot_inspect_json(const struct kin_robot *r)
{
    int ok = 1;
    char *text = NULL;
    cJSON *root = cJSON_CreateObject(), *joints = cJSON_CreateArray();
    if (!root || !joints) {
        cJSON_Delete(root);
        cJSON_Delete(joints);
        return NULL;
    }
    json_add(root, "kind", cJSON_CreateString("robot"), &ok);
    json_add(root, "name", cJSON_CreateString(r->name), &ok);
    json_add(root, "dof", cJSON_CreateNumber(r->n_dof), &ok);
    json_add(root, "links", cJSON_CreateNumber(r->n_links), &ok);
    cJSON_AddItemToObject(root, "joints", joints);
    for (int j = 0; j < r->n_joints && ok; j++) {
        const struct kin_joint *kj = &r->joints[j];
        cJSON *o = cJSON_CreateObject(), *axis = cJSON_CreateArray();
        if (!o || !axis) {
            cJSON_Delete(o);
            cJSON_Delete(axis);
            goto fail;
        }
        cJSON_AddItemToArray(joints, o);
        json_add(o, "name", cJSON_CreateString(kj->name), &ok);
        json_add(o, "type", cJSON_CreateString(joint_type_name(kj->type)), &ok);
        json_add(o, "parent", cJSON_CreateString(r->links[kj->parent].name), &ok);
        json_add(o, "child", cJSON_CreateString(r->links[kj->child].name), &ok);
        for (int i = 0; i < 3; i++) json_add(axis, NULL, json_number(kj->axis[i]), &ok);
        cJSON_AddItemToObject(o, "axis", axis);
        json_add(o, "lower", kj->has_limits ? json_number(kj->lower) : cJSON_CreateNull(), &ok);
        json_add(o, "upper", kj->has_limits ? json_number(kj->upper) : cJSON_CreateNull(), &ok);
        if (kj->type != KIN_JOINT_FIXED) {
            json_add(o, "effort", json_number(kj->effort), &ok);
            json_add(o, "velocity", json_number(kj->velocity), &ok);
        }
        if (kj->mimic >= 0) {
            cJSON *m = cJSON_CreateObject();
            if (!m) goto fail;
            cJSON_AddItemToObject(o, "mimic", m);
            json_add(m, "joint", cJSON_CreateString(r->joints[kj->mimic].name), &ok);
            json_add(m, "multiplier", json_number(kj->mimic_mult), &ok);
            json_add(m, "offset", json_number(kj->mimic_offset), &ok);
        }
    }
    if (ok) text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;

fail: /* `joints` belongs to `root` by now */
    cJSON_Delete(root);
    return NULL;
}
