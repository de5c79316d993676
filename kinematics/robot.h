/* robot.h -- a robot model read from URDF (urdf.c) or MJCF (mjcf.c): links,
 * joints, limits, collision geometry, and its kinematic tree in flat arrays
 * for the solver; forward kinematics and geometric Jacobians in double
 * precision for tools, tests and reports.
 *
 * Memory: kin_robot_load*() return a robot the caller frees with
 * kin_robot_free(); every pointer inside it is owned by the robot. */
#ifndef RT_KIN_ROBOT_H
#define RT_KIN_ROBOT_H

#include <stddef.h>

#include "../base/status.h"
#include "../base/tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked while reading, before anything they size is allocated. */
#define KIN_URDF_MAX_BYTES (16u << 20)
#define KIN_MAX_LINKS 1024
#define KIN_MAX_NAME 128
/* MJCF only: geoms kept per robot, <default> classes, kept elements
 * (mujoco, compiler, default, worldbody, body, frame, joint, freejoint,
 * geom; everything else is skipped unread), element nesting, and
 * <include> nesting (the main file is depth 0) and files. The byte limit,
 * KIN_URDF_MAX_BYTES, holds for the main file and its includes together. */
#define KIN_MAX_GEOMS 4096
#define KIN_MJCF_MAX_CLASSES 1024
#define KIN_MJCF_MAX_ELEMENTS 16384
#define KIN_MJCF_MAX_DEPTH 256
#define KIN_MJCF_MAX_INCLUDE_DEPTH 8
#define KIN_MJCF_MAX_FILES 64
/* Value bounds of a joint's <origin>: |xyz| <= KIN_URDF_MAX_ORIGIN metres,
 * |rpy| <= KIN_URDF_MAX_RPY radians (RT_EINVAL at the line otherwise). */
#define KIN_URDF_MAX_ORIGIN 1e3
#define KIN_URDF_MAX_RPY 1e3

enum kin_joint_type {
    KIN_JOINT_FIXED = 0,
    KIN_JOINT_REVOLUTE = 1,
    KIN_JOINT_CONTINUOUS = 2,
    KIN_JOINT_PRISMATIC = 3
};

struct kin_joint {
    char *name;
    int type;            /* enum kin_joint_type */
    int parent, child;   /* link indices (topological order, see below) */
    double xyz[3], rpy[3];
    double rot[9];       /* origin rotation, row-major: Rz(yaw) Ry(pitch) Rx(roll) of rpy
                          * (MJCF: the exact rotation; rpy is derived from it) */
    double axis[3];      /* unit; (1,0,0) when the URDF gives none, MJCF (0,0,1) */
    int has_limits;      /* revolute/prismatic: 1; continuous/fixed: 0; an MJCF
                          * slide without limits: prismatic with has_limits 0 */
    double lower, upper; /* no limits: -inf, +inf; fixed: 0, 0 */
    double effort, velocity;
    int mimic;           /* index of the leader joint (file order) or -1 */
    double mimic_mult, mimic_offset;
    int coord;           /* coordinate index in q (movable, non-mimic), else -1 */
};

struct kin_link {
    char *name;
    int parent;       /* parent link index, -1 for the root */
    int joint;        /* index (file order) of the joint from its parent, -1 for the root */
};

enum kin_geom_type {
    KIN_GEOM_PLANE = 0,
    KIN_GEOM_HFIELD = 1,
    KIN_GEOM_SPHERE = 2,
    KIN_GEOM_CAPSULE = 3,
    KIN_GEOM_ELLIPSOID = 4,
    KIN_GEOM_CYLINDER = 5,
    KIN_GEOM_BOX = 6,
    KIN_GEOM_MESH = 7,
    KIN_GEOM_SDF = 8
};

/* A geometric primitive fixed to a link, kept for collision work (MJCF
 * <geom>; URDF <collision> boxes, spheres and cylinders, with contype and
 * conaffinity 1, group 0, no name). `size` is MJCF's: sphere radius;
 * capsule and cylinder radius, half-length; ellipsoid radii; box
 * half-extents; unused entries 0. A `fromto` is resolved as MuJoCo does:
 * the midpoint becomes pos, the segment the local z axis, and its half
 * length size[1] (capsule, cylinder) or size[2] (box, ellipsoid). Mesh
 * geoms keep their pose as written: MuJoCo moves a mesh to its inertial
 * frame, which needs the mesh file. */
struct kin_geom {
    char *name;         /* NULL when unnamed */
    char *mesh;         /* the mesh asset it names (mesh=), NULL when none */
    int link;           /* link index (topological order) */
    int type;           /* enum kin_geom_type */
    int group, contype, conaffinity; /* as in MJCF (defaults 0, 1, 1) */
    double size[3];
    double pos[3];      /* in the link frame */
    double quat[4];     /* x y z w (retargetd's order, not MJCF's w x y z), link frame */
};

/* Invariants: links[] is in topological order (link 0 is the root, every
 * parent index is smaller than its child's); joints[] is in file order;
 * coordinates (q) are the movable non-mimic joints in file order, so
 * n_dof == number of joints with coord >= 0. */
struct kin_robot {
    char *name;
    int n_links, n_joints, n_dof;
    struct kin_link *links;
    struct kin_joint *joints;
    int *coord_joint;          /* [n_dof] joint index (file order) of each coordinate */
    int n_geoms;
    struct kin_geom *geoms;    /* [n_geoms] in file order; NULL when none */
    struct rt_tree tree;   /* float flat arrays owned by the robot; floating_base = 1 */
    void *priv;                /* storage behind `tree` */
};

/* Parses URDF text. `name` labels errors ("g1.urdf"): errors say
 * "name:LINE" in `where` and name the element ("joint 'x': missing <limit>").
 * Rejects: no or several root links, cycles, unknown joint types, revolute or
 * prismatic joints without <limit>, references to unknown links, duplicate
 * names, a mimic naming an unknown joint, an <origin> past the bounds
 * above (RT_EINVAL). Collision boxes, spheres and cylinders become geoms;
 * visual and inertial elements and meshes are skipped. */
enum rt_status kin_robot_parse_urdf(const char *text, size_t len, const char *name,
                                    struct kin_robot **out, struct rt_err *err);

/* Parses MJCF text (mjcf.c has the details) into the same model the URDF
 * reader builds. `name` labels errors ("g1.xml:120", the element and
 * attribute named: "body 'x': bad quat '1 0 0'"). `base_dir` is the folder
 * that <include file=...> is resolved against; NULL refuses includes.
 * Link names are body names; a body with several hinge/slide joints
 * becomes a chain of links "BODY__JOINT" ending in the body's own link.
 * Rejects ball joints, free joints below the top body, unknown joint or
 * geom types, and everything urdf reading rejects (limits, names). */
enum rt_status kin_robot_parse_mjcf(const char *text, size_t len, const char *name,
                                    const char *base_dir, struct kin_robot **out,
                                    struct rt_err *err);

/* Parses URDF or MJCF text, chosen by the root element (<robot> or
 * <mujoco>); any other root is RT_EPARSE naming both. Arguments as
 * kin_robot_parse_mjcf(); `base_dir` matters only to MJCF. */
enum rt_status kin_robot_parse(const char *text, size_t len, const char *name, const char *base_dir,
                               struct kin_robot **out, struct rt_err *err);

/* Loads a robot by bundled name ("g1", "h1"; URDF) or by file path (URDF or
 * MJCF by root element; an MJCF's includes are resolved against the file's
 * folder). A name with '/' or ending in .urdf or .xml is a path. */
enum rt_status kin_robot_load(const char *name_or_path, struct kin_robot **out, struct rt_err *err);

/* NULL-safe. */
void kin_robot_free(struct kin_robot *r);

/* For the readers only: given a robot whose name, links, joints (rot, xyz,
 * axis, limits, mimic, coord) and coord_joint are filled, builds the flat
 * arrays behind r->tree and the double twins kin_fk uses. Returns RT_OK or
 * RT_ENOMEM; on failure the robot is still safe to kin_robot_free(). */
enum rt_status kin_robot_finish(struct kin_robot *r);

/* Link index (topological order) of the link called `name`, or -1. */
int kin_robot_link_index(const struct kin_robot *r, const char *name);

/* Whether link a is link b or one of b's ancestors (b < 0: no). */
int kin_link_is_ancestor(const struct kin_robot *r, int a, int b);

/* The lowest common ancestor of links a and b (a link is its own), or -1. */
int kin_link_common_ancestor(const struct kin_robot *r, int a, int b);

/* Joint index (file order) of the joint called `name`, or -1. */
int kin_robot_joint_index(const struct kin_robot *r, const char *name);

/* Names of the bundled robots, NULL-terminated. */
const char *const *kin_robot_bundled(void);

/* The URDF text of bundled robot `name` (static, NUL-terminated, *len bytes
 * without the NUL), or NULL when no bundled robot has that name. */
const char *kin_robot_bundled_text(const char *name, size_t *len);

/* Forward kinematics in double. `state` is one frame in the solver's column
 * order (root x y z, qx qy qz qw, then n_dof coordinates); the quaternion is
 * normalized internally. Writes every link's world position [n_links*3] and
 * rotation [n_links*9, row-major]. */
void kin_fk(const struct kin_robot *r, const double *state, double *link_pos, double *link_rot);

/* kin_fk() of n frames, four at a time where the compiler has vector
 * types: the same bits as kin_fk() on each. Frame f's state is at
 * state + f stride; its links go to link_pos + 3 f n_links and
 * link_rot + 9 f n_links. */
void kin_fk_frames(const struct kin_robot *r, int n, const double *state, size_t stride, double *link_pos,
                   double *link_rot);

/* Geometric Jacobian of link `link` at `state`: 6 rows (world linear
 * velocity of the link origin, then world angular velocity) by
 * 6 + n_dof columns (base translation dp, base rotation dphi in the world
 * frame with R <- Exp(dphi) R, then the coordinates), row-major into J.
 * Mimic joints contribute to their leader's column with their multiplier. */
void kin_jacobian(const struct kin_robot *r, const double *state, int link, double *J);

/* --- facts.c: the robot's own facts ------------------------------------- */

/* Distance (m) from the origin of foot link `foot_link` of `r` down to its
 * sole. Known robots: Unitree G1 ankle_roll_link 0.035 (its collision
 * spheres sit 0.03 below, radius 0.005), Unitree H1 ankle_link 0.062 (its
 * collision box: centre 0.05 below, 0.024 high). Others: the depth at the
 * zero pose of the lowest point of the link's collision primitives
 * (spheres, capsules, cylinders, ellipsoids, boxes; MJCF geoms with a
 * contype or conaffinity), e.g. Booster T1's MJCF 0.03 (two capsules of
 * radius 0.02 centred 0.01 below left_foot_link; its URDF's box 0.03 high
 * centred 0.015 below: 0.03 too); without any (meshes only) and for
 * foot_link -1: 0 (the link origin is the sole). */
double kin_robot_sole_offset(const struct kin_robot *r, int foot_link);

/* The links of the identity mapping between two robots of one model (the
 * G1's: pelvis, torso and the links that pin every limb), NULL-terminated,
 * static. */
const char *const *kin_robot_identity_links(void);

/* The identity mapping's foot links of `r` (left, right): link indices, -1
 * where `r` has no such link. */
void kin_robot_identity_feet(const struct kin_robot *r, int foot_link[2]);

/* JSON summary for `retarget inspect` (malloc'd, caller frees):
 * {"kind":"robot","name":..,"dof":N,"links":N,"joints":[{"name","type",
 * "parent","child","axis":[x,y,z],"lower","upper"},...]} in file order. */
char *kin_robot_inspect_json(const struct kin_robot *r);

#ifdef __cplusplus
}
#endif
#endif
