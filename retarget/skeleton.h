/* skeleton.h -- recognizing a human skeleton in a BVH clip by joint-name
 * synonyms and topology, and building a retargeting profile for it from a
 * bundled template, for clips that no bundled profile fits by exact joint
 * names (Biovision "LeftUpArm/LeftLowArm", "Ab/Chest", SMPL "L_Hip",
 * Blender "thigh.L", Unreal "calf_l", 3ds Max "Bip01 L Thigh", ...).
 *
 * Recognition (docs/profiles.md "Automatic mapping"): every joint's name is
 * split into a side (Left/Right, L/R, l/r, _L/_R, .L/.R, left_/right_,
 * "L " after namespace prefixes such as "mixamorig:" or "Bip01 ") and a core
 * ("UpLeg", "Knee", ...) that names candidate roles by synonyms. Topology
 * then decides and confirms: per side the foot nearest the root, the shin
 * and thigh above it on the same side, the hand (or forearm) nearest the
 * root, the forearm and upper arm above it; the pelvis is where the two legs
 * meet, the chest where the two arms meet, and the chest must hang from the
 * pelvis. Fingers and toes beyond the first are ignored.
 *
 * Memory: rtg_skeleton_auto_profile() returns a profile the caller frees
 * with rtg_profile_free(). */
#ifndef RT_RTG_SKELETON_H
#define RT_RTG_SKELETON_H

#include <stddef.h>

#include "../kinematics/bvh.h"
#include "profile.h"
#include "../kinematics/robot.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Roles. Sided roles are RTG_ROLE_L_* + side * RTG_ROLE_SIDED (side 0 left,
 * 1 right). */
enum rtg_role {
    RTG_ROLE_PELVIS = 0, /* where the legs meet: the root mapping */
    RTG_ROLE_SPINE,      /* first joint above the pelvis towards the chest */
    RTG_ROLE_CHEST_BASE, /* the joint below the chest (the torso frame's z from) */
    RTG_ROLE_CHEST,      /* where the arms meet */
    RTG_ROLE_NECK,       /* first joint above the chest towards the head (may be absent) */
    RTG_ROLE_HEAD,       /* informational (may be absent) */
    RTG_ROLE_L_CLAVICLE, /* informational (may be absent) */
    RTG_ROLE_L_UPPER_ARM,
    RTG_ROLE_L_FOREARM,
    RTG_ROLE_L_HAND,     /* may be an End Site, or absent */
    RTG_ROLE_L_THIGH,
    RTG_ROLE_L_SHIN,
    RTG_ROLE_L_FOOT,
    RTG_ROLE_L_TOE,      /* may be an End Site, or absent */
    RTG_ROLE_R_CLAVICLE,
    RTG_ROLE_R_UPPER_ARM,
    RTG_ROLE_R_FOREARM,
    RTG_ROLE_R_HAND,
    RTG_ROLE_R_THIGH,
    RTG_ROLE_R_SHIN,
    RTG_ROLE_R_FOOT,
    RTG_ROLE_R_TOE,
    RTG_ROLE_COUNT
};
#define RTG_ROLE_SIDED (RTG_ROLE_R_CLAVICLE - RTG_ROLE_L_CLAVICLE)

/* A recognized skeleton: joint[role] is an index into clip->joints (a
 * ROOT/JOINT, or an End Site for a hand or toe), or -1 when absent. After a
 * successful rtg_skeleton_recognize() every role is present except NECK,
 * HEAD, the clavicles, the hands and the toes. */
struct rtg_skeleton_map {
    int joint[RTG_ROLE_COUNT];
};

/* The role's name: "pelvis", "left_foot", ... (static, never NULL). */
const char *rtg_skeleton_role_name(int role);

/* Splits a joint name into a side (returned: 0 none, 1 left, 2 right) and a
 * core: the name without namespace ("mixamorig:"), "Bip01 " prefix and side
 * marker, lower-cased, with separators, a trailing "joint"/"jnt" and
 * trailing digits removed ("mixamorig:LeftUpLeg" -> 1, "upleg";
 * "thigh.L" -> 1, "thigh"; "Spine1" -> 0, "spine"). `core` gets at most
 * cap - 1 characters and a NUL. */
int rtg_skeleton_split_name(const char *name, char *core, size_t cap);

/* Recognizes the skeleton of `clip` (see the file comment). RT_EINVAL
 * (the clip is input that cannot be used) when a required role is missing; the message lists every missing role
 * and what was looked for: "cannot map: no left foot (looked for
 * Foot/Ankle under LeftKnee)". The clip's first frame (its rest pose when
 * it has none) decides which of several coinciding joints is used. */
enum rt_status rtg_skeleton_recognize(const struct kin_clip *clip, struct rtg_skeleton_map *m,
                                      struct rt_err *err);

/* Builds a profile for `clip` onto `robot` from the bundled BVH profile for
 * that robot that shares the most joint names with the clip (the template:
 * same links, weights, ground handling and solver options), with the
 * recognized joints substituted for the template's. A template hand link
 * whose role the clip lacks is dropped; without toes the feet track
 * positions only. On success *out is a new profile named
 * "auto:<template>"; on failure *out is NULL and RT_EINVAL says what is
 * missing (see rtg_skeleton_recognize()) or that no bundled profile targets
 * the robot; RT_ENOMEM. */
enum rt_status rtg_skeleton_auto_profile(const struct kin_clip *clip, const struct kin_robot *robot,
                                         struct rtg_profile **out, struct rt_err *err);

/* As rtg_skeleton_auto_profile(), but when no bundled profile targets
 * `robot`, the template is the closest bundled robot's (H1's for robots
 * with one-joint ankles, else G1's; the clip decides which of its
 * profiles) with the robot's role links (roles.h) substituted: `roles`
 * when not NULL (every required role set), else rtg_robot_roles(). The
 * profile is then named "auto:roles:<template>". A robot without hands
 * drops the template's hand links. RT_EINVAL naming the robot's missing
 * roles ("cannot map robot 'panda': no pelvis, ..."). */
struct rtg_robot_roles;
enum rt_status rtg_skeleton_auto_profile_roles(const struct kin_clip *clip, const struct kin_robot *robot,
                                               const struct rtg_robot_roles *roles,
                                               struct rtg_profile **out, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
