/* capsule.h -- a robot's collision volumes as capsules, the link pairs that
 * can touch, and the distance between two capsules: what the self-collision
 * term of the solve and the self-penetration figures of the report measure
 * (docs/solver.md "Self-collision"). Everything here is in double and in
 * metres; the solver evaluates the same capsules in float (solver/frame.h). */
#ifndef RT_KIN_CAPSULE_H
#define RT_KIN_CAPSULE_H

#include "robot.h"
#include "rot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A segment a-b fixed to a link (link frame), swept by a sphere of `radius`. */
struct kin_capsule {
    int link;
    double a[3], b[3];
    double radius;
};

/* Bone capsules (below): radius = KIN_BONE_RADIUS_SCALE x the bone's
 * length, clamped to [KIN_BONE_RADIUS_MIN, KIN_BONE_RADIUS_MAX]; bones
 * shorter than KIN_BONE_MIN_LEN are not capsules. */
#define KIN_BONE_RADIUS_SCALE 0.2
#define KIN_BONE_RADIUS_MIN 0.02
#define KIN_BONE_RADIUS_MAX 0.04
#define KIN_BONE_MIN_LEN 0.02
#define KIN_LEAF_RADIUS 0.04
#define KIN_MIN_PRIMITIVE 0.01 /* primitives thinner than this (contact points) are not volumes */

/* The robot's capsules, in link order. A link with collision primitives
 * (MJCF geoms with a contype or conaffinity; URDF <collision> boxes,
 * spheres, cylinders) of at least KIN_MIN_PRIMITIVE radius gets one capsule
 * per primitive: a sphere is a capsule of zero length; capsules and
 * cylinders keep their radius and axis; a box or an ellipsoid becomes a
 * capsule along its longest axis with the larger of the two other half
 * extents as radius. Any other link (meshes only, or nothing) gets bone
 * capsules: one from its origin to each child link's origin (the bone;
 * children on a fixed joint with no child of their own, sensor and marker
 * frames, are not bones where the link has another child),
 * and where it has two or more children one more between the two child
 * origins farthest apart (hip to hip, shoulder to shoulder); a link with a
 * moving joint and no bone (a foot, a hand) is a sphere of
 * KIN_LEAF_RADIUS at its origin. Returns RT_ENOMEM or RT_OK with *out
 * malloc'd (NULL when *n is 0). */
enum rt_status kin_robot_capsules(const struct kin_robot *r, struct kin_capsule **out, int *n,
                                  struct rt_err *err);

/* Closest points of segments [p0, p1] and [q0, q1]: pa, pb. */
void kin_segment_closest(const double *p0, const double *p1, const double *q0, const double *q1, double *pa,
                         double *pb);

/* World end points w0, w1 of capsule c with its link at position pos[3],
 * rotation rot[9] (row-major). Inline: the quality figures take it for
 * every capsule of every frame. */
static inline void kin_capsule_at(const struct kin_capsule *c, const double *pos, const double *rot, double *w0,
                                  double *w1)
{
    kin_mat_vec(rot, c->a, w0);
    kin_mat_vec(rot, c->b, w1);
    for (int k = 0; k < 3; k++) {
        w0[k] += pos[k];
        w1[k] += pos[k];
    }
}

/* World end points w0, w1 of capsule c, given every link's world pose (kin_fk). */
static inline void kin_capsule_world(const struct kin_capsule *c, const double *link_pos, const double *link_rot,
                                     double *w0, double *w1)
{
    kin_capsule_at(c, link_pos + 3 * c->link, link_rot + 9 * c->link, w0, w1);
}

/* Signed distance between capsules ca and cb (segment distance minus both
 * radii: < 0 is penetration), given every link's world pose (kin_fk). */
double kin_capsule_distance(const struct kin_capsule *ca, const struct kin_capsule *cb, const double *link_pos,
                            const double *link_rot);

/* The pairs of capsules that can touch: never two of one link, of a link
 * and its parent or grandparent (the joint between them keeps them apart
 * or together), of a link and an ancestor that does not branch (one limb,
 * which its joint limits keep from folding into itself; a trunk link with
 * two or more limbs below is checked against them), nor two closer than
 * `clear` (m) at the
 * zero pose (joints at 0, clamped to their limits), which touch by design.
 * *pairs gets 2 capsule indices per pair (malloc'd; NULL when *n_pairs is
 * 0), in ascending order. */
enum rt_status kin_capsule_pairs(const struct kin_robot *r, const struct kin_capsule *caps, int n_caps,
                                 double clear, int **pairs, int *n_pairs, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
