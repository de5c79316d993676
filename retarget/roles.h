/* roles.h -- the body roles of a robot (pelvis, torso, hips, knees, feet,
 * shoulders, elbows, hands, head) found from its kinematic tree, so that a
 * human clip can be retargeted onto a robot no bundled profile was written
 * for (docs/profiles.md "Robots without a profile").
 *
 * Everything is read at the zero pose (base at the origin, upright, every
 * coordinate 0), in the robot's own frame (x forward, y left, z up). The
 * fallback order, first rule that decides wins:
 *
 *  1. Sides. A link is left or right by the first name that says so on the
 *     way from it up to the root, link names and joint names alike: "left"
 *     or "right" anywhere in the name (any case), else an "l_"/"r_" prefix,
 *     a "_l"/"_r" suffix or an "_l_"/"_r_" infix; failing every name, the
 *     sign of its lateral coordinate (y > 0 left; |y| under 1 mm: no side).
 *  2. Legs. The leaves (links without children) below the root link's
 *     origin with a side; the lowest one is the first leg, the lowest of the
 *     other side the second. The pelvis is the link where their two paths
 *     meet (their lowest common ancestor: the root on G1 and H1, "Waist"
 *     under T1's floating "Trunk").
 *  3. Arms. Of the other leaves with a side and not under a leg, the one
 *     widest to each side (largest |y|). The torso is where the two arm
 *     paths meet; it must not lie on a leg.
 *  4. Chains. A limb's chain is the path from the pelvis (torso) down to
 *     its leaf, cut at the first link with several children (a palm with
 *     fingers, a foot with toe and heel links), movable links only. A leg
 *     needs 3 of them, an arm 2.
 *  5. Joints in a chain. Foot: the deepest link named "ankle" or "foot",
 *     else the chain's last. Knee: the first link between the first and the
 *     foot named "knee" (link or joint name), else the one nearest the
 *     midpoint of the first link and the foot. Hip: of the links before the
 *     knee, the deepest consecutive one whose origin lies on the axes of
 *     every joint above it in the chain, within 15 % of the distance from
 *     the chain's first link to the knee (the hip's centre of rotation:
 *     G1's and H1's hip_roll_link, T1's Hip_Roll). Arms alike: hand the
 *     deepest link named "wrist" or "hand" below the elbow, else the last
 *     link below the elbow (none when the elbow ends the chain, as on H1);
 *     elbow the first named "elbow", else the link nearest the midpoint of
 *     the chain; shoulder by the hip rule.
 *  6. Head: the link named "head" (else "neck") nearest the root that has
 *     no side and is on neither arm nor leg; informational. With no arm
 *     found on either side there is no torso either (what met was not one:
 *     a gripper's fingers).
 *
 * Required roles: pelvis, torso, hips, knees, feet, shoulders, elbows. The
 * hands and the head are optional (a template's hand link is dropped).
 * A profile can name any role's link itself (rtg_robot_roles_set()). */
#ifndef RT_RTG_ROLES_H
#define RT_RTG_ROLES_H

#include "../base/status.h"
#include "../kinematics/robot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sided roles are RTG_RROLE_L_* + side * RTG_RROLE_SIDED (0 left, 1 right). */
enum rtg_robot_role {
    RTG_RROLE_PELVIS = 0,
    RTG_RROLE_TORSO,
    RTG_RROLE_HEAD,       /* optional */
    RTG_RROLE_L_HIP,
    RTG_RROLE_L_KNEE,
    RTG_RROLE_L_FOOT,
    RTG_RROLE_L_SHOULDER,
    RTG_RROLE_L_ELBOW,
    RTG_RROLE_L_HAND,     /* optional */
    RTG_RROLE_R_HIP,
    RTG_RROLE_R_KNEE,
    RTG_RROLE_R_FOOT,
    RTG_RROLE_R_SHOULDER,
    RTG_RROLE_R_ELBOW,
    RTG_RROLE_R_HAND,
    RTG_RROLE_COUNT
};
#define RTG_RROLE_SIDED (RTG_RROLE_R_HIP - RTG_RROLE_L_HIP)

/* link[role]: link index (topological order) or -1 when not found. */
struct rtg_robot_roles {
    int link[RTG_RROLE_COUNT];
};

/* "pelvis", "left_hip", ... (static, never NULL; "?" out of range). */
const char *rtg_robot_role_name(int role);

/* The role called `name`, or -1. */
int rtg_robot_role_index(const char *name);

/* 1 for the roles every mapped robot has (all but the head and hands). */
int rtg_robot_role_required(int role);

/* Finds the roles of `r` (the file comment says how). Always fills *out
 * with what was found; returns RT_OK when every required role is there,
 * else RT_EINVAL with where "robot" and a message naming every missing
 * one: "cannot map robot 'panda': no pelvis, no left leg, no right leg,
 * no torso, no left arm, no right arm" (a limb whose chain is not found
 * is named as a whole, else its missing joints: "no left knee"). */
enum rt_status rtg_robot_roles(const struct kin_robot *r, struct rtg_robot_roles *out,
                               struct rt_err *err);

/* Sets role `role_name` to link `link_name` of `r`. RT_EINVAL naming the
 * unknown role or link (where: `where`). */
enum rt_status rtg_robot_roles_set(const struct kin_robot *r, struct rtg_robot_roles *roles,
                                   const char *role_name, const char *link_name, const char *where,
                                   struct rt_err *err);

/* Checks that every required role is set; RT_EINVAL as rtg_robot_roles(). */
enum rt_status rtg_robot_roles_check(const struct kin_robot *r, const struct rtg_robot_roles *roles,
                                     struct rt_err *err);

/* {"robot":NAME,"roles":{"pelvis":"Waist",...},"missing":["left_hand",...]}
 * in role order (malloc'd text, the caller frees it; NULL when out of
 * memory). */
char *rtg_robot_roles_json(const struct kin_robot *r, const struct rtg_robot_roles *roles);

#ifdef __cplusplus
}
#endif
#endif
