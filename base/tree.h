/* tree.h -- a kinematic tree in flat arrays and the layout of one frame's
 * state: the contract between the robot model that kinematics/ reads from a
 * description and the solver/ that moves it. It lives at the bottom floor so
 * that neither of the two imports the other (DESIGN.md "Layout"). Every
 * pointer is borrowed. Valid C and C++ (the CUDA backend reads it). */
#ifndef RT_BASE_TREE_H
#define RT_BASE_TREE_H

#ifdef __cplusplus
extern "C" {
#endif

enum rt_joint_type {
    RT_JOINT_FIXED = 0,
    RT_JOINT_REVOLUTE = 1, /* also continuous: revolute without limits */
    RT_JOINT_PRISMATIC = 2
};

/* A kinematic tree in flat arrays, links in topological order.
 *
 * Invariants: link 0 is the root; parent[i] < i for i > 0 and parent[0] = -1.
 * Link i's world transform is  T_parent(i) * origin_i * motion_i  where
 * origin_i = (origin_pos[3i..], origin_rot[9i..] row-major) is the URDF joint
 * origin and motion_i is a rotation about (revolute) or a translation along
 * (prismatic) axis[3i..] (unit, in the joint frame) by
 *     joint_mult[i] * q[joint_index[i]] + joint_offset[i].
 * Fixed joints have joint_index[i] = -1. Mimic joints point joint_index at
 * their leader's coordinate with the mimic multiplier and offset; every other
 * joint has mult 1 and offset 0. The root link's own origin is identity
 * (origin of link 0 is ignored). With floating_base = 1 the root transform is
 * the base pose (position, unit quaternion); with 0 it is the identity.
 * Coordinates: q has n_joints entries, in URDF order of their joints.
 * Limits: lower[j] <= upper[j]; continuous joints carry -/+ FLT_MAX. */
struct rt_tree {
    int n_links;
    int n_joints;      /* independent coordinates (mimic joints excluded) */
    int floating_base; /* 1: a 6-dof free base precedes the joints */
    const int *parent;
    const int *joint_type;  /* enum rt_joint_type, per link */
    const int *joint_index; /* per link: coordinate index or -1 */
    const float *joint_mult;
    const float *joint_offset;
    const float *origin_pos; /* [n_links * 3] */
    const float *origin_rot; /* [n_links * 9] row-major */
    const float *axis;       /* [n_links * 3] */
    const float *lower;      /* [n_joints] */
    const float *upper;      /* [n_joints] */
};

/* The state of one frame, in Unitree's retargeted-LAFAN1 column order:
 * root x y z, root quaternion qx qy qz qw, then the n_joints coordinates.
 * Fixed-base trees still carry the 7 root entries (identity). */
#define RT_ROOT_COLS 7
static inline int rt_state_cols(const struct rt_tree *t) { return RT_ROOT_COLS + t->n_joints; }
/* Tangent dimension per frame: 6 + n_joints with a floating base, else n_joints. */
static inline int rt_tangent_dim(const struct rt_tree *t) { return (t->floating_base ? 6 : 0) + t->n_joints; }

#ifdef __cplusplus
}
#endif
#endif
