/* facts.c -- what a robot description does not say but retargeting needs
 * to know of a robot: where the sole is below a foot link, and which links
 * pin every chain of a model when one trajectory of it is mapped onto
 * another of the same model (the identity mapping). Known robots are
 * recognized by their link names; others get the documented fallbacks. */
#include <math.h>
#include <stdlib.h>
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

/* The depth below the origin of link `k` (at the zero pose, along world z)
 * of the lowest point of its collision primitives: spheres, capsules,
 * cylinders, ellipsoids (bounded by their largest radius) and boxes; 0
 * when it has none (a URDF, whose reader keeps no geometry, or meshes
 * only). */
static double geom_sole(const struct kin_robot *r, int k)
{
    double depth = 0, *state, *P, *M;
    int found = 0;
    if (r->n_geoms <= 0) return 0.0;
    state = calloc((size_t)(7 + r->n_dof), sizeof *state);
    P = malloc((size_t)r->n_links * 3 * sizeof *P);
    M = malloc((size_t)r->n_links * 9 * sizeof *M);
    if (!state || !P || !M) goto done;
    state[6] = 1.0;
    kin_fk(r, state, P, M);
    const double *m = M + 9 * k;
    for (int g = 0; g < r->n_geoms; g++) {
        const struct kin_geom *G = &r->geoms[g];
        if (G->link != k || (G->contype == 0 && G->conaffinity == 0)) continue;
        double x = G->quat[0], y = G->quat[1], z = G->quat[2], w = G->quat[3];
        /* Row 2 of the geom's rotation in the link frame, then in the world. */
        double gz[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                           {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                           {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
        double wz[3], cz = m[6] * G->pos[0] + m[7] * G->pos[1] + m[8] * G->pos[2], reach;
        for (int c = 0; c < 3; c++) wz[c] = m[6] * gz[0][c] + m[7] * gz[1][c] + m[8] * gz[2][c];
        switch (G->type) {
        case KIN_GEOM_SPHERE: reach = G->size[0]; break;
        case KIN_GEOM_CAPSULE: reach = G->size[0] + fabs(wz[2]) * G->size[1]; break;
        case KIN_GEOM_CYLINDER:
            reach = fabs(wz[2]) * G->size[1] + sqrt(fmax(0, 1 - wz[2] * wz[2])) * G->size[0];
            break;
        case KIN_GEOM_ELLIPSOID: reach = fmax(G->size[0], fmax(G->size[1], G->size[2])); break;
        case KIN_GEOM_BOX:
            reach = fabs(wz[0]) * G->size[0] + fabs(wz[1]) * G->size[1] + fabs(wz[2]) * G->size[2];
            break;
        default: continue;
        }
        if (!found || reach - cz > depth) depth = reach - cz;
        found = 1;
    }
done:
    free(state);
    free(P);
    free(M);
    return found && depth > 0 ? depth : 0.0;
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
    return geom_sole(r, foot_link);
}
