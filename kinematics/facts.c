/* facts.c -- what a robot description does not say but retargeting needs
 * to know of a robot: where the sole is below a foot link, and which links
 * pin every chain of a model when one trajectory of it is mapped onto
 * another of the same model (the identity mapping). Known robots are
 * recognized by their link names; others get the documented fallbacks. */
#include <string.h>

#include "robot.h"

/* The identity mapping between two G1s (the reference round trip): pelvis,
 * torso and the limb links that pin every chain. */
static const char *const identity_links[] = {
    "pelvis",
    "torso_link",
    "left_hip_roll_link",
    "right_hip_roll_link",
    "left_knee_link",
    "right_knee_link",
    "left_ankle_roll_link",
    "right_ankle_roll_link",
    "left_shoulder_roll_link",
    "right_shoulder_roll_link",
    "left_elbow_link",
    "right_elbow_link",
    "left_wrist_yaw_link",
    "right_wrist_yaw_link",
    NULL,
};

/* Feet of the identity mapping, left then right. */
static const char *const identity_feet[2] = {"left_ankle_roll_link", "right_ankle_roll_link"};

const char *const *kin_robot_identity_links(void) { return identity_links; }

void kin_robot_identity_feet(const struct kin_robot *r, int foot_link[2])
{
    for (int e = 0; e < 2; e++) foot_link[e] = kin_robot_link_index(r, identity_feet[e]);
}

double kin_robot_sole_offset(const struct kin_robot *r, int foot_link)
{
    const char *n;
    if (!r || foot_link < 0 || foot_link >= r->n_links) return 0.0;
    n = r->links[foot_link].name;
    /* Unitree G1 (23 and 29 dof): four collision spheres of radius 0.005 at
     * z = -0.03 in the ankle roll link. */
    if (strstr(n, "ankle_roll_link")) return 0.035;
    /* Unitree H1: a collision box 0.024 high centred 0.05 below the ankle link. */
    if (strcmp(n, "left_ankle_link") == 0 || strcmp(n, "right_ankle_link") == 0) return 0.062;
    return 0.0;
}
