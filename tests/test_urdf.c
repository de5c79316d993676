/* test_urdf.c -- the URDF reader and double-precision kinematics
 * (kinematics/robot.h, kinematics/urdf.c) against the real robot files in
 * ../shared/data/robots and against small hand-written broken inputs.
 *
 * What is checked, and against what:
 *  - every movable joint of G1 29-dof, G1 23-dof, H1, Panda and UR5: name,
 *    type, parent/child, axis, limits, effort and velocity exactly as the
 *    joint tables in ../shared/data/SOURCES.md (values compared with ==
 *    after strtod of the same decimal text), the dof, mimic handling;
 *  - forward kinematics of the zero pose against link origins accumulated
 *    by a separate, deliberately naive reader in this file (string search
 *    for <joint>, <parent>, <child>, <origin>; transforms composed from the
 *    link up to the root), never through the robot's arrays;
 *  - kin_jacobian, all 6 rows and every column including the floating
 *    base, against central finite differences of kin_fk at random
 *    configurations within the limits (G1 and Panda);
 *  - the float struct rt_tree: invariants, and its own forward
 *    kinematics against kin_fk;
 *  - kin_fk (which skips the products a link's shape makes exact zeros)
 *    against every product written out, == on every value, on a robot of
 *    every link shape and on the real ones;
 *  - malformed inputs: status, "name:LINE" and the element named;
 *  - KIN_MAX_LINKS and KIN_MAX_NAME at N (accepted) and N+1 (rejected);
 *  - bundled robots from another working directory, the inspect JSON. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* M_PI, strdup, strndup */
#endif
#include "test.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <limits.h>
#include <unistd.h>

#include "../kinematics/robot.h"
#include "../kinematics/trig.h"

struct joint_row {
    const char *name, *type, *parent, *child, *axis, *lower, *upper, *effort, *velocity;
};

/* Joint tables: movable joints in file order, copied from the tables in
 * ../shared/data/SOURCES.md. */
static const struct joint_row rows_g1_29dof_rev_1_0[] = {
    {"left_hip_pitch_joint", "revolute", "pelvis", "left_hip_pitch_link", "0 1 0", "-2.5307", "2.8798", "88", "32"},
    {"left_hip_roll_joint", "revolute", "left_hip_pitch_link", "left_hip_roll_link", "1 0 0", "-0.5236", "2.9671", "139", "20"},
    {"left_hip_yaw_joint", "revolute", "left_hip_roll_link", "left_hip_yaw_link", "0 0 1", "-2.7576", "2.7576", "88", "32"},
    {"left_knee_joint", "revolute", "left_hip_yaw_link", "left_knee_link", "0 1 0", "-0.087267", "2.8798", "139", "20"},
    {"left_ankle_pitch_joint", "revolute", "left_knee_link", "left_ankle_pitch_link", "0 1 0", "-0.87267", "0.5236", "35", "30"},
    {"left_ankle_roll_joint", "revolute", "left_ankle_pitch_link", "left_ankle_roll_link", "1 0 0", "-0.2618", "0.2618", "35", "30"},
    {"right_hip_pitch_joint", "revolute", "pelvis", "right_hip_pitch_link", "0 1 0", "-2.5307", "2.8798", "88", "32"},
    {"right_hip_roll_joint", "revolute", "right_hip_pitch_link", "right_hip_roll_link", "1 0 0", "-2.9671", "0.5236", "139", "20"},
    {"right_hip_yaw_joint", "revolute", "right_hip_roll_link", "right_hip_yaw_link", "0 0 1", "-2.7576", "2.7576", "88", "32"},
    {"right_knee_joint", "revolute", "right_hip_yaw_link", "right_knee_link", "0 1 0", "-0.087267", "2.8798", "139", "20"},
    {"right_ankle_pitch_joint", "revolute", "right_knee_link", "right_ankle_pitch_link", "0 1 0", "-0.87267", "0.5236", "35", "30"},
    {"right_ankle_roll_joint", "revolute", "right_ankle_pitch_link", "right_ankle_roll_link", "1 0 0", "-0.2618", "0.2618", "35", "30"},
    {"waist_yaw_joint", "revolute", "pelvis", "waist_yaw_link", "0 0 1", "-2.618", "2.618", "88", "32"},
    {"waist_roll_joint", "revolute", "waist_yaw_link", "waist_roll_link", "1 0 0", "-0.52", "0.52", "35", "30"},
    {"waist_pitch_joint", "revolute", "waist_roll_link", "torso_link", "0 1 0", "-0.52", "0.52", "35", "30"},
    {"left_shoulder_pitch_joint", "revolute", "torso_link", "left_shoulder_pitch_link", "0 1 0", "-3.0892", "2.6704", "25", "37"},
    {"left_shoulder_roll_joint", "revolute", "left_shoulder_pitch_link", "left_shoulder_roll_link", "1 0 0", "-1.5882", "2.2515", "25", "37"},
    {"left_shoulder_yaw_joint", "revolute", "left_shoulder_roll_link", "left_shoulder_yaw_link", "0 0 1", "-2.618", "2.618", "25", "37"},
    {"left_elbow_joint", "revolute", "left_shoulder_yaw_link", "left_elbow_link", "0 1 0", "-1.0472", "2.0944", "25", "37"},
    {"left_wrist_roll_joint", "revolute", "left_elbow_link", "left_wrist_roll_link", "1 0 0", "-1.972222054", "1.972222054", "25", "37"},
    {"left_wrist_pitch_joint", "revolute", "left_wrist_roll_link", "left_wrist_pitch_link", "0 1 0", "-1.614429558", "1.614429558", "5", "22"},
    {"left_wrist_yaw_joint", "revolute", "left_wrist_pitch_link", "left_wrist_yaw_link", "0 0 1", "-1.614429558", "1.614429558", "5", "22"},
    {"right_shoulder_pitch_joint", "revolute", "torso_link", "right_shoulder_pitch_link", "0 1 0", "-3.0892", "2.6704", "25", "37"},
    {"right_shoulder_roll_joint", "revolute", "right_shoulder_pitch_link", "right_shoulder_roll_link", "1 0 0", "-2.2515", "1.5882", "25", "37"},
    {"right_shoulder_yaw_joint", "revolute", "right_shoulder_roll_link", "right_shoulder_yaw_link", "0 0 1", "-2.618", "2.618", "25", "37"},
    {"right_elbow_joint", "revolute", "right_shoulder_yaw_link", "right_elbow_link", "0 1 0", "-1.0472", "2.0944", "25", "37"},
    {"right_wrist_roll_joint", "revolute", "right_elbow_link", "right_wrist_roll_link", "1 0 0", "-1.972222054", "1.972222054", "25", "37"},
    {"right_wrist_pitch_joint", "revolute", "right_wrist_roll_link", "right_wrist_pitch_link", "0 1 0", "-1.614429558", "1.614429558", "5", "22"},
    {"right_wrist_yaw_joint", "revolute", "right_wrist_pitch_link", "right_wrist_yaw_link", "0 0 1", "-1.614429558", "1.614429558", "5", "22"},
};
static const struct joint_row rows_g1_23dof_rev_1_0[] = {
    {"left_hip_pitch_joint", "revolute", "pelvis", "left_hip_pitch_link", "0 1 0", "-2.5307", "2.8798", "88", "32"},
    {"left_hip_roll_joint", "revolute", "left_hip_pitch_link", "left_hip_roll_link", "1 0 0", "-0.5236", "2.9671", "139", "20"},
    {"left_hip_yaw_joint", "revolute", "left_hip_roll_link", "left_hip_yaw_link", "0 0 1", "-2.7576", "2.7576", "88", "32"},
    {"left_knee_joint", "revolute", "left_hip_yaw_link", "left_knee_link", "0 1 0", "-0.087267", "2.8798", "139", "20"},
    {"left_ankle_pitch_joint", "revolute", "left_knee_link", "left_ankle_pitch_link", "0 1 0", "-0.87267", "0.5236", "35", "30"},
    {"left_ankle_roll_joint", "revolute", "left_ankle_pitch_link", "left_ankle_roll_link", "1 0 0", "-0.2618", "0.2618", "35", "30"},
    {"right_hip_pitch_joint", "revolute", "pelvis", "right_hip_pitch_link", "0 1 0", "-2.5307", "2.8798", "88", "32"},
    {"right_hip_roll_joint", "revolute", "right_hip_pitch_link", "right_hip_roll_link", "1 0 0", "-2.9671", "0.5236", "139", "20"},
    {"right_hip_yaw_joint", "revolute", "right_hip_roll_link", "right_hip_yaw_link", "0 0 1", "-2.7576", "2.7576", "88", "32"},
    {"right_knee_joint", "revolute", "right_hip_yaw_link", "right_knee_link", "0 1 0", "-0.087267", "2.8798", "139", "20"},
    {"right_ankle_pitch_joint", "revolute", "right_knee_link", "right_ankle_pitch_link", "0 1 0", "-0.87267", "0.5236", "35", "30"},
    {"right_ankle_roll_joint", "revolute", "right_ankle_pitch_link", "right_ankle_roll_link", "1 0 0", "-0.2618", "0.2618", "35", "30"},
    {"waist_yaw_joint", "revolute", "pelvis", "torso_link", "0 0 1", "-2.618", "2.618", "88", "32"},
    {"left_shoulder_pitch_joint", "revolute", "torso_link", "left_shoulder_pitch_link", "0 1 0", "-3.0892", "2.6704", "25", "37"},
    {"left_shoulder_roll_joint", "revolute", "left_shoulder_pitch_link", "left_shoulder_roll_link", "1 0 0", "-1.5882", "2.2515", "25", "37"},
    {"left_shoulder_yaw_joint", "revolute", "left_shoulder_roll_link", "left_shoulder_yaw_link", "0 0 1", "-2.618", "2.618", "25", "37"},
    {"left_elbow_joint", "revolute", "left_shoulder_yaw_link", "left_elbow_link", "0 1 0", "-1.0472", "2.0944", "25", "37"},
    {"left_wrist_roll_joint", "revolute", "left_elbow_link", "left_wrist_roll_rubber_hand", "1 0 0", "-1.972222054", "1.972222054", "25", "37"},
    {"right_shoulder_pitch_joint", "revolute", "torso_link", "right_shoulder_pitch_link", "0 1 0", "-3.0892", "2.6704", "25", "37"},
    {"right_shoulder_roll_joint", "revolute", "right_shoulder_pitch_link", "right_shoulder_roll_link", "1 0 0", "-2.2515", "1.5882", "25", "37"},
    {"right_shoulder_yaw_joint", "revolute", "right_shoulder_roll_link", "right_shoulder_yaw_link", "0 0 1", "-2.618", "2.618", "25", "37"},
    {"right_elbow_joint", "revolute", "right_shoulder_yaw_link", "right_elbow_link", "0 1 0", "-1.0472", "2.0944", "25", "37"},
    {"right_wrist_roll_joint", "revolute", "right_elbow_link", "right_wrist_roll_rubber_hand", "1 0 0", "-1.972222054", "1.972222054", "25", "37"},
};
static const struct joint_row rows_h1[] = {
    {"left_hip_yaw_joint", "revolute", "pelvis", "left_hip_yaw_link", "0 0 1", "-0.43", "0.43", "200", "23"},
    {"left_hip_roll_joint", "revolute", "left_hip_yaw_link", "left_hip_roll_link", "1 0 0", "-0.43", "0.43", "200", "23"},
    {"left_hip_pitch_joint", "revolute", "left_hip_roll_link", "left_hip_pitch_link", "0 1 0", "-3.14", "2.53", "200", "23"},
    {"left_knee_joint", "revolute", "left_hip_pitch_link", "left_knee_link", "0 1 0", "-0.26", "2.05", "300", "14"},
    {"left_ankle_joint", "revolute", "left_knee_link", "left_ankle_link", "0 1 0", "-0.87", "0.52", "40", "9"},
    {"right_hip_yaw_joint", "revolute", "pelvis", "right_hip_yaw_link", "0 0 1", "-0.43", "0.43", "200", "23"},
    {"right_hip_roll_joint", "revolute", "right_hip_yaw_link", "right_hip_roll_link", "1 0 0", "-0.43", "0.43", "200", "23"},
    {"right_hip_pitch_joint", "revolute", "right_hip_roll_link", "right_hip_pitch_link", "0 1 0", "-3.14", "2.53", "200", "23"},
    {"right_knee_joint", "revolute", "right_hip_pitch_link", "right_knee_link", "0 1 0", "-0.26", "2.05", "300", "14"},
    {"right_ankle_joint", "revolute", "right_knee_link", "right_ankle_link", "0 1 0", "-0.87", "0.52", "40", "9"},
    {"torso_joint", "revolute", "pelvis", "torso_link", "0 0 1", "-2.35", "2.35", "200", "23"},
    {"left_shoulder_pitch_joint", "revolute", "torso_link", "left_shoulder_pitch_link", "0 1 0", "-2.87", "2.87", "40", "9"},
    {"left_shoulder_roll_joint", "revolute", "left_shoulder_pitch_link", "left_shoulder_roll_link", "1 0 0", "-0.34", "3.11", "40", "9"},
    {"left_shoulder_yaw_joint", "revolute", "left_shoulder_roll_link", "left_shoulder_yaw_link", "0 0 1", "-1.3", "4.45", "18", "20"},
    {"left_elbow_joint", "revolute", "left_shoulder_yaw_link", "left_elbow_link", "0 1 0", "-1.25", "2.61", "18", "20"},
    {"right_shoulder_pitch_joint", "revolute", "torso_link", "right_shoulder_pitch_link", "0 1 0", "-2.87", "2.87", "40", "9"},
    {"right_shoulder_roll_joint", "revolute", "right_shoulder_pitch_link", "right_shoulder_roll_link", "1 0 0", "-3.11", "0.34", "40", "9"},
    {"right_shoulder_yaw_joint", "revolute", "right_shoulder_roll_link", "right_shoulder_yaw_link", "0 0 1", "-4.45", "1.3", "18", "20"},
    {"right_elbow_joint", "revolute", "right_shoulder_yaw_link", "right_elbow_link", "0 1 0", "-1.25", "2.61", "18", "20"},
};
static const struct joint_row rows_panda[] = {
    {"panda_joint1", "revolute", "panda_link0", "panda_link1", "0 0 1", "-2.8973", "2.8973", "87.0", "2.175"},
    {"panda_joint2", "revolute", "panda_link1", "panda_link2", "0 0 1", "-1.7628", "1.7628", "87.0", "2.175"},
    {"panda_joint3", "revolute", "panda_link2", "panda_link3", "0 0 1", "-2.8973", "2.8973", "87.0", "2.175"},
    {"panda_joint4", "revolute", "panda_link3", "panda_link4", "0 0 1", "-3.0718", "-0.0698", "87.0", "2.175"},
    {"panda_joint5", "revolute", "panda_link4", "panda_link5", "0 0 1", "-2.8973", "2.8973", "12.0", "2.61"},
    {"panda_joint6", "revolute", "panda_link5", "panda_link6", "0 0 1", "-0.0175", "3.7525", "12.0", "2.61"},
    {"panda_joint7", "revolute", "panda_link6", "panda_link7", "0 0 1", "-2.8973", "2.8973", "12.0", "2.61"},
    {"panda_finger_joint1", "prismatic", "panda_hand", "panda_leftfinger", "0 1 0", "0.0", "0.04", "100", "0.2"},
    {"panda_finger_joint2", "prismatic", "panda_hand", "panda_rightfinger", "0 -1 0", "0.0", "0.04", "100", "0.2"},
};
static const struct joint_row rows_ur5_robot[] = {
    {"shoulder_pan_joint", "revolute", "base_link", "shoulder_link", "0 0 1", "-6.28318530718", "6.28318530718", "150.0", "3.15"},
    {"shoulder_lift_joint", "revolute", "shoulder_link", "upper_arm_link", "0 1 0", "-6.28318530718", "6.28318530718", "150.0", "3.15"},
    {"elbow_joint", "revolute", "upper_arm_link", "forearm_link", "0 1 0", "-3.14159265359", "3.14159265359", "150.0", "3.15"},
    {"wrist_1_joint", "revolute", "forearm_link", "wrist_1_link", "0 1 0", "-6.28318530718", "6.28318530718", "28.0", "3.2"},
    {"wrist_2_joint", "revolute", "wrist_1_link", "wrist_2_link", "0 0 1", "-6.28318530718", "6.28318530718", "28.0", "3.2"},
    {"wrist_3_joint", "revolute", "wrist_2_link", "wrist_3_link", "0 1 0", "-6.28318530718", "6.28318530718", "28.0", "3.2"},
};

/* ------------------------------------------------------------------------
 * Helpers: small 3x3 algebra written here, independently of urdf.c. */

static void m3_mul(const double *A, const double *B, double *C)
{
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            T[3 * i + j] = 0;
            for (int k = 0; k < 3; k++) T[3 * i + j] += A[3 * i + k] * B[3 * k + j];
        }
    memcpy(C, T, sizeof T);
}

static void m3_vec(const double *A, const double *v, double *out)
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = A[3 * i] * v[0] + A[3 * i + 1] * v[1] + A[3 * i + 2] * v[2];
    memcpy(out, t, sizeof t);
}

/* Rotation about a principal axis: 0 = x, 1 = y, 2 = z. */
static void m3_principal(int axis, double a, double *R)
{
    double c = cos(a), s = sin(a);
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    memset(R, 0, 9 * sizeof *R);
    R[4 * axis] = 1;
    R[3 * i + i] = c;
    R[3 * i + j] = -s;
    R[3 * j + i] = s;
    R[3 * j + j] = c;
}

/* URDF rpy as the product of three elementary rotations: Rz(y) Ry(p) Rx(r). */
static void m3_rpy(const double *rpy, double *R)
{
    double X[9], Y[9], Z[9];
    m3_principal(0, rpy[0], X);
    m3_principal(1, rpy[1], Y);
    m3_principal(2, rpy[2], Z);
    m3_mul(Y, X, R);
    m3_mul(Z, R, R);
}

/* Rotation about unit axis a by angle t: exp of the skew matrix, computed
 * as Rodrigues' formula in matrix form I + s K + (1 - c) K^2. */
static void m3_axis_angle(const double *a, double t, double *R)
{
    double K[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0}, K2[9];
    m3_mul(K, K, K2);
    for (int i = 0; i < 9; i++) R[i] = (i % 4 == 0) + sin(t) * K[i] + (1 - cos(t)) * K2[i];
}

static void quat_to_m3(const double *q, double *R)
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
    double Rr[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
    memcpy(R, Rr, sizeof Rr);
}

/* log map of a rotation close to the identity or not (angle < pi). */
static void m3_log(const double *R, double *w)
{
    double v[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
    double c = (R[0] + R[4] + R[8] - 1) / 2, s = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) / 2;
    double ang = atan2(s, c), f = s > 1e-12 ? ang / (2 * s) : 0.5;
    for (int i = 0; i < 3; i++) w[i] = f * v[i];
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static char *path_of(const char *file)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 512, "%s/robots/%s", test_data_dir(), file);
    return b;
}

static struct kin_robot *load_or_skip(const char *file)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    int st = kin_robot_load(path_of(file), &r, &err);
    if (st == RT_EIO && access(path_of(file), R_OK) != 0) TEST_SKIP("shared robot files not found (set RT_SHARED_DATA)");
    if (st != RT_OK) {
        char line[300];
        fprintf(stderr, "load %s: %s\n", file, rt_err_line(&err, line, sizeof line));
    }
    CHECK_EQ_INT(st, RT_OK);
    return r;
}

static const char *type_str(int t)
{
    return t == KIN_JOINT_REVOLUTE ? "revolute" : t == KIN_JOINT_CONTINUOUS ? "continuous"
         : t == KIN_JOINT_PRISMATIC ? "prismatic" : t == KIN_JOINT_FIXED ? "fixed" : "?";
}

/* ------------------------------------------------------------------------
 * Joint tables. */

static void check_table(const char *file, const struct joint_row *rows, int n_rows, int n_links,
                        int n_joints, int dof, const char *root)
{
    struct kin_robot *r = load_or_skip(file);
    int coord = 0;
    if (!r) return;
    CHECK_EQ_INT(r->n_links, n_links);
    CHECK_EQ_INT(r->n_joints, n_joints);
    CHECK_EQ_INT(r->n_dof, dof);
    CHECK_EQ_STR(r->links[0].name, root);
    CHECK_EQ_INT(r->links[0].parent, -1);
    CHECK_EQ_INT(r->links[0].joint, -1);
    for (int i = 0; i < n_rows; i++) {
        const struct joint_row *w = &rows[i];
        int j = kin_robot_joint_index(r, w->name);
        double ax[3];
        CHECK(j >= 0);
        if (j < 0) { fprintf(stderr, "  %s: no joint %s\n", file, w->name); continue; }
        const struct kin_joint *kj = &r->joints[j];
        CHECK_EQ_STR(type_str(kj->type), w->type);
        CHECK_EQ_STR(r->links[kj->parent].name, w->parent);
        CHECK_EQ_STR(r->links[kj->child].name, w->child);
        CHECK_EQ_INT(r->links[kj->child].joint, j);
        CHECK(sscanf(w->axis, "%lf %lf %lf", &ax[0], &ax[1], &ax[2]) == 3);
        CHECK(kj->axis[0] == ax[0] && kj->axis[1] == ax[1] && kj->axis[2] == ax[2]);
        CHECK_EQ_INT(kj->has_limits, 1);
        /* Exactly the file's decimal text, read with strtod. */
        CHECK(kj->lower == strtod(w->lower, NULL));
        CHECK(kj->upper == strtod(w->upper, NULL));
        CHECK(kj->effort == strtod(w->effort, NULL));
        CHECK(kj->velocity == strtod(w->velocity, NULL));
        if (kj->mimic < 0) {
            /* Coordinates are the non-mimic movable joints in file order. */
            CHECK_EQ_INT(kj->coord, coord);
            CHECK_EQ_INT(r->coord_joint[coord], j);
            coord++;
        } else {
            CHECK_EQ_INT(kj->coord, -1);
        }
        if (i > 0) CHECK(j > kin_robot_joint_index(r, rows[i - 1].name));
    }
    CHECK_EQ_INT(coord, dof);
    /* Topological order: every parent before its child. */
    for (int k = 1; k < r->n_links; k++) {
        CHECK(r->links[k].parent >= 0 && r->links[k].parent < k);
        CHECK(r->joints[r->links[k].joint].child == k);
        CHECK(r->joints[r->links[k].joint].parent == r->links[k].parent);
    }
    kin_robot_free(r);
}

/* ------------------------------------------------------------------------
 * A naive second reader: string search over the text with comments blanked,
 * for the zero-pose check. Deliberately shares nothing with urdf.c. */

struct naive_joint {
    char name[128], parent[128], child[128];
    double xyz[3], rpy[3];
};

/* Value of attribute `key` inside the tag text [p, end), or 0. */
static int naive_attr(const char *p, const char *end, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=\"", key);
    for (const char *s = strstr(p, pat); s && s < end; s = strstr(s + 1, pat)) {
        const char *v = s + strlen(pat), *q = strchr(v, '"');
        if (!q || q > end || (size_t)(q - v) >= cap) return 0;
        memcpy(out, v, (size_t)(q - v));
        out[q - v] = 0;
        return 1;
    }
    return 0;
}

static int naive_read(const char *text, struct naive_joint *out, int cap)
{
    char *t = strdup(text), buf[256];
    int n = 0;
    for (char *c = strstr(t, "<!--"); c; c = strstr(c, "<!--")) {
        char *e = strstr(c, "-->");
        if (!e) { *c = 0; break; }
        memset(c, ' ', (size_t)(e + 3 - c));
    }
    for (char *p = strstr(t, "<joint"); p && n < cap; p = strstr(p + 1, "<joint")) {
        char *gt = strchr(p, '>'), *end = strstr(p, "</joint>");
        struct naive_joint *j = &out[n];
        if (!gt || !end || !naive_attr(p, gt, "type", buf, sizeof buf)) continue; /* transmission */
        memset(j, 0, sizeof *j);
        naive_attr(p, gt, "name", j->name, sizeof j->name);
        char *e = strstr(p, "<parent");
        if (e && e < end) naive_attr(e, strchr(e, '>'), "link", j->parent, sizeof j->parent);
        e = strstr(p, "<child");
        if (e && e < end) naive_attr(e, strchr(e, '>'), "link", j->child, sizeof j->child);
        e = strstr(p, "<origin");
        if (e && e < end) {
            char *egt = strchr(e, '>');
            if (naive_attr(e, egt, "xyz", buf, sizeof buf))
                sscanf(buf, "%lf %lf %lf", &j->xyz[0], &j->xyz[1], &j->xyz[2]);
            if (naive_attr(e, egt, "rpy", buf, sizeof buf))
                sscanf(buf, "%lf %lf %lf", &j->rpy[0], &j->rpy[1], &j->rpy[2]);
        }
        n++;
    }
    free(t);
    return n;
}

static void check_zero_pose(const char *file)
{
    static struct naive_joint nj[KIN_MAX_LINKS];
    struct kin_robot *r = load_or_skip(file);
    char *text = test_slurp(path_of(file), NULL);
    double *state, *pos, *rot, worst = 0;
    int n;
    if (!r || !text) { CHECK(text != NULL); kin_robot_free(r); free(text); return; }
    n = naive_read(text, nj, KIN_MAX_LINKS);
    CHECK_EQ_INT(n, r->n_joints);
    state = calloc((size_t)(7 + r->n_dof), sizeof *state);
    pos = calloc((size_t)r->n_links * 3, sizeof *pos);
    rot = calloc((size_t)r->n_links * 9, sizeof *rot);
    state[6] = 1; /* identity quaternion, zero coordinates */
    kin_fk(r, state, pos, rot);
    for (int k = 0; k < r->n_links; k++) {
        /* Walk from link k to the root: T <- origin(j) * T. */
        double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
        const char *name = r->links[k].name;
        for (int steps = 0; steps <= n; steps++) {
            int j = 0;
            while (j < n && strcmp(nj[j].child, name)) j++;
            if (j == n) break;
            double Ro[9], t[3];
            m3_rpy(nj[j].rpy, Ro);
            m3_vec(Ro, p, t);
            for (int i = 0; i < 3; i++) p[i] = t[i] + nj[j].xyz[i];
            m3_mul(Ro, R, R);
            name = nj[j].parent;
        }
        CHECK_EQ_STR(name, r->links[0].name);
        for (int i = 0; i < 3; i++) worst = fmax(worst, fabs(p[i] - pos[3 * k + i]));
        for (int i = 0; i < 9; i++) worst = fmax(worst, fabs(R[i] - rot[9 * k + i]));
    }
    if (worst > 1e-12) fprintf(stderr, "  %s: zero pose differs by %g\n", file, worst);
    CHECK(worst <= 1e-12);
    free(state);
    free(pos);
    free(rot);
    free(text);
    kin_robot_free(r);
}

/* ------------------------------------------------------------------------
 * Jacobian against finite differences; float tree against kin_fk. */

static void random_state(const struct kin_robot *r, double *s)
{
    double n = 0;
    for (int i = 0; i < 3; i++) s[i] = 2 * urand() - 1;
    for (int i = 3; i < 7; i++) { s[i] = 2 * urand() - 1; n += s[i] * s[i]; }
    for (int i = 3; i < 7; i++) s[i] /= sqrt(n);
    for (int c = 0; c < r->n_dof; c++) {
        const struct kin_joint *kj = &r->joints[r->coord_joint[c]];
        double lo = kj->has_limits ? kj->lower : -M_PI, hi = kj->has_limits ? kj->upper : M_PI;
        s[7 + c] = lo + (hi - lo) * urand();
    }
}

/* Column c of the tangent space moved by d: base dp, base dphi (world
 * frame: q <- Exp(d e_i) q), then coordinates. */
static void perturb(const struct kin_robot *r, const double *s, int c, double d, double *out)
{
    memcpy(out, s, (size_t)(7 + r->n_dof) * sizeof *out);
    if (c < 3) {
        out[c] += d;
    } else if (c < 6) {
        double e[4] = {0, 0, 0, cos(d / 2)}, x = s[3], y = s[4], z = s[5], w = s[6];
        e[c - 3] = sin(d / 2);
        out[3] = e[3] * x + e[0] * w + e[1] * z - e[2] * y;
        out[4] = e[3] * y - e[0] * z + e[1] * w + e[2] * x;
        out[5] = e[3] * z + e[0] * y - e[1] * x + e[2] * w;
        out[6] = e[3] * w - e[0] * x - e[1] * y - e[2] * z;
    } else {
        out[7 + c - 6] += d;
    }
}

static void check_jacobian(const struct kin_robot *r, const char *what, int n_configs)
{
    int nl = r->n_links, cols = 6 + r->n_dof, ns = 7 + r->n_dof;
    double h = 1e-6, worst = 0, big = 0;
    int wk = 0, wr = 0, wc = 0;
    double *s = malloc(sizeof *s * (size_t)ns), *sp = malloc(sizeof *sp * (size_t)ns);
    double *sm = malloc(sizeof *sm * (size_t)ns);
    double *pp = malloc(sizeof *pp * (size_t)nl * 3), *pm = malloc(sizeof *pm * (size_t)nl * 3);
    double *Rp = malloc(sizeof *Rp * (size_t)nl * 9), *Rm = malloc(sizeof *Rm * (size_t)nl * 9);
    double *J = malloc(sizeof *J * (size_t)nl * 6 * (size_t)cols);
    for (int cfg = 0; cfg < n_configs; cfg++) {
        random_state(r, s);
        for (int k = 0; k < nl; k++) kin_jacobian(r, s, k, J + (size_t)k * 6 * (size_t)cols);
        for (int c = 0; c < cols; c++) {
            perturb(r, s, c, h, sp);
            perturb(r, s, c, -h, sm);
            kin_fk(r, sp, pp, Rp);
            kin_fk(r, sm, pm, Rm);
            for (int k = 0; k < nl; k++) {
                double fd[6], RmT[9], D[9];
                const double *A = Rp + 9 * k, *B = Rm + 9 * k;
                for (int i = 0; i < 3; i++) fd[i] = (pp[3 * k + i] - pm[3 * k + i]) / (2 * h);
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++) RmT[3 * i + j] = B[3 * j + i];
                m3_mul(A, RmT, D);
                m3_log(D, fd + 3);
                for (int i = 3; i < 6; i++) fd[i] /= 2 * h;
                for (int row = 0; row < 6; row++) {
                    double jv = J[((size_t)k * 6 + (size_t)row) * (size_t)cols + (size_t)c];
                    double e = fabs(jv - fd[row]);
                    big = fmax(big, fabs(jv));
                    if (e > worst) { worst = e; wk = k; wr = row; wc = c; }
                }
            }
        }
    }
    if (worst > 1e-6)
        fprintf(stderr, "  %s: Jacobian vs finite differences: %g at link %d row %d col %d\n", what,
                worst, wk, wr, wc);
    CHECK(worst <= 1e-6);
    CHECK(big > 0.1); /* the comparison was not vacuous */
    free(s); free(sp); free(sm); free(pp); free(pm); free(Rp); free(Rm); free(J);
}

/* Forward kinematics from the float rt_tree alone (doubles for the
 * arithmetic), as a solver would read the arrays. */
static void tree_fk(const struct rt_tree *t, const double *s, double *pos, double *rot)
{
    memcpy(pos, s, 3 * sizeof *pos);
    quat_to_m3(s + 3, rot);
    for (int k = 1; k < t->n_links; k++) {
        int p = t->parent[k], idx = t->joint_index[k];
        double O[9], o[3], a[3], v = 0, M[9], d[3];
        for (int i = 0; i < 9; i++) O[i] = t->origin_rot[9 * k + i];
        for (int i = 0; i < 3; i++) o[i] = t->origin_pos[3 * k + i], a[i] = t->axis[3 * k + i];
        if (idx >= 0) v = (double)t->joint_mult[k] * s[7 + idx] + (double)t->joint_offset[k];
        m3_vec(rot + 9 * p, o, d);
        for (int i = 0; i < 3; i++) pos[3 * k + i] = pos[3 * p + i] + d[i];
        m3_mul(rot + 9 * p, O, rot + 9 * k);
        if (idx >= 0 && t->joint_type[k] == RT_JOINT_REVOLUTE) {
            m3_axis_angle(a, v, M);
            m3_mul(rot + 9 * k, M, rot + 9 * k);
        } else if (idx >= 0 && t->joint_type[k] == RT_JOINT_PRISMATIC) {
            m3_vec(rot + 9 * k, a, d);
            for (int i = 0; i < 3; i++) pos[3 * k + i] += v * d[i];
        }
    }
}

static void check_tree(const struct kin_robot *r, const char *what)
{
    const struct rt_tree *t = &r->tree;
    int nl = r->n_links;
    double worst = 0;
    CHECK_EQ_INT(t->n_links, nl);
    CHECK_EQ_INT(t->n_joints, r->n_dof);
    CHECK_EQ_INT(t->floating_base, 1);
    CHECK_EQ_INT(t->parent[0], -1);
    CHECK_EQ_INT(t->joint_index[0], -1);
    for (int k = 1; k < nl; k++) {
        const struct kin_joint *kj = &r->joints[r->links[k].joint];
        int want = kj->type == KIN_JOINT_FIXED ? -1 : kj->mimic >= 0 ? r->joints[kj->mimic].coord : kj->coord;
        CHECK(t->parent[k] >= 0 && t->parent[k] < k);
        CHECK_EQ_INT(t->joint_index[k], want);
        CHECK_EQ_INT(t->joint_type[k], kj->type == KIN_JOINT_FIXED ? RT_JOINT_FIXED
                                       : kj->type == KIN_JOINT_PRISMATIC ? RT_JOINT_PRISMATIC
                                                                         : RT_JOINT_REVOLUTE);
        CHECK(t->joint_mult[k] == (float)(kj->mimic >= 0 ? kj->mimic_mult : 1.0));
        CHECK(t->joint_offset[k] == (float)(kj->mimic >= 0 ? kj->mimic_offset : 0.0));
    }
    for (int c = 0; c < r->n_dof; c++) {
        const struct kin_joint *kj = &r->joints[r->coord_joint[c]];
        CHECK(t->lower[c] <= t->upper[c]);
        if (kj->type == KIN_JOINT_CONTINUOUS) {
            CHECK(t->lower[c] == -FLT_MAX && t->upper[c] == FLT_MAX);
        } else {
            CHECK(t->lower[c] == (float)kj->lower && t->upper[c] == (float)kj->upper);
        }
    }
    double *s = malloc(sizeof *s * (size_t)(7 + r->n_dof));
    double *p1 = malloc(sizeof *p1 * (size_t)nl * 3), *p2 = malloc(sizeof *p2 * (size_t)nl * 3);
    double *R1 = malloc(sizeof *R1 * (size_t)nl * 9), *R2 = malloc(sizeof *R2 * (size_t)nl * 9);
    for (int cfg = 0; cfg < 20; cfg++) {
        random_state(r, s);
        kin_fk(r, s, p1, R1);
        tree_fk(t, s, p2, R2);
        for (int i = 0; i < nl * 3; i++) worst = fmax(worst, fabs(p1[i] - p2[i]));
        for (int i = 0; i < nl * 9; i++) worst = fmax(worst, fabs(R1[i] - R2[i]));
    }
    if (worst > 2e-6) fprintf(stderr, "  %s: float tree FK differs from kin_fk by %g\n", what, worst);
    CHECK(worst <= 2e-6);
    free(s); free(p1); free(p2); free(R1); free(R2);
}

/* ------------------------------------------------------------------------
 * Malformed inputs. */

static void expect_fail(const char *what, const char *text, int want, const char *want_where,
                        const char *want_msg1, const char *want_msg2)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    int before = test_failed;
    rt_err_clear(&err);
    int st = kin_robot_parse_urdf(text, strlen(text), "t.urdf", &r, &err);
    CHECK_EQ_INT(st, want);
    CHECK(r == NULL);
    CHECK_EQ_INT(err.code, want);
    CHECK_EQ_STR(err.where, want_where);
    CHECK(strstr(err.msg, want_msg1) != NULL);
    CHECK(!want_msg2 || strstr(err.msg, want_msg2) != NULL);
    if (test_failed > before) fprintf(stderr, "  case '%s': where '%s' msg '%s'\n", what, err.where, err.msg);
    kin_robot_free(r);
    /* And without an error record. */
    CHECK_EQ_INT(kin_robot_parse_urdf(text, strlen(text), "t.urdf", &r, NULL), want);
    kin_robot_free(r);
}

#define LINK3 "  <link name=\"a\"/>\n  <link name=\"b\"/>\n  <link name=\"c\"/>\n" /* lines 2-4 */

static void test_malformed(void)
{
    expect_fail("multiple roots",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:4", "multiple root links: 'a'", "'c'");
    expect_fail("cycle",
                "<robot name=\"t\">\n"
                "  <link name=\"r\"/>\n  <link name=\"a\"/>\n  <link name=\"b\"/>\n"
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "  <joint name=\"j2\" type=\"fixed\"><parent link=\"b\"/><child link=\"a\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'j1' closes a cycle", "'b'");
    expect_fail("cycle without a root",
                "<robot name=\"t\">\n"
                "  <link name=\"a\"/>\n  <link name=\"b\"/>\n"
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "  <joint name=\"j2\" type=\"fixed\"><parent link=\"b\"/><child link=\"a\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'j2' closes a cycle", NULL);
    expect_fail("self loop",
                "<robot name=\"t\">\n  <link name=\"a\"/>\n  <link name=\"b\"/>\n"
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"b\"/><child link=\"b\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:4", "joint 'j1' closes a cycle", NULL);
    expect_fail("unknown joint type",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"ball\">\n"
                "    <parent link=\"a\"/><child link=\"b\"/>\n"
                "  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'j1': unknown joint type 'ball'", NULL);
    expect_fail("floating joint",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"base\" type=\"floating\">\n"
                "    <parent link=\"a\"/><child link=\"b\"/>\n"
                "  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'base': unsupported joint type 'floating'", NULL);
    expect_fail("planar joint",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"p\" type=\"planar\"/>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'p': unsupported joint type 'planar'", NULL);
    expect_fail("joint without type",
                "<robot name=\"t\">\n" LINK3 "  <joint name=\"j\"/>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'j': missing type", NULL);
    expect_fail("revolute without limit",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"knee\" type=\"revolute\">\n"
                "    <parent link=\"a\"/><child link=\"b\"/>\n"
                "    <axis xyz=\"0 1 0\"/>\n"
                "  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'knee': revolute joint without <limit>", NULL);
    expect_fail("prismatic without limit",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"s\" type=\"prismatic\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 's': prismatic joint without <limit>", NULL);
    expect_fail("unknown child link",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\">\n"
                "    <parent link=\"a\"/>\n"
                "    <child link=\"zz\"/>\n"
                "  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:7", "joint 'j1': <child> names unknown link 'zz'", NULL);
    expect_fail("unknown parent link",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\">\n"
                "    <parent link=\"qq\"/>\n"
                "    <child link=\"b\"/>\n"
                "  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "joint 'j1': <parent> names unknown link 'qq'", NULL);
    expect_fail("missing child",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\">\n    <parent link=\"a\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "joint 'j1': missing <child>", NULL);
    expect_fail("duplicate joint name",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:6", "duplicate joint name 'j1'", "line 5");
    expect_fail("duplicate link name",
                "<robot name=\"t\">\n" LINK3 "  <link name=\"b\">\n  </link>\n</robot>\n",
                RT_EPARSE, "t.urdf:5", "duplicate link name 'b'", "line 3");
    expect_fail("two parent joints",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "  <joint name=\"j2\" type=\"fixed\"><parent link=\"c\"/>\n"
                "    <child link=\"b\"/></joint>\n"
                "</robot>\n",
                RT_EPARSE, "t.urdf:7", "link 'b' has two parent joints: 'j1' and 'j2'", NULL);
    expect_fail("short xyz",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin xyz=\"1 2\" rpy=\"0 0 0\"/>\n"
                "  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "joint 'j1': <origin> xyz: expected 3 numbers, got '1 2'", NULL);
    expect_fail("long rpy",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin rpy=\"0 0 0 0\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "<origin> rpy", NULL);
    expect_fail("junk number",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <limit lower=\"-1x\" upper=\"1\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "<limit> lower", "'-1x'");
    expect_fail("nan",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <axis xyz=\"nan 0 1\"/><limit lower=\"-1\" upper=\"1\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "<axis> xyz", NULL);
    expect_fail("hexadecimal number",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin xyz=\"0x1p3 0 0\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "<origin> xyz", NULL);
    expect_fail("overflowing number",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <limit lower=\"-1e999\" upper=\"1\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "<limit> lower", NULL);
    expect_fail("zero axis",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <axis xyz=\"0 0 0\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "joint 'j1': <axis> has zero length", NULL);
    expect_fail("lower above upper",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <limit lower=\"1\" upper=\"-1\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "lower 1 > upper -1", NULL);
    expect_fail("mimic of unknown joint",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <mimic joint=\"ghost\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:6", "joint 'j1': <mimic> names unknown joint 'ghost'", NULL);
    expect_fail("mimic of a fixed joint",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                "  <joint name=\"j2\" type=\"continuous\"><parent link=\"b\"/><child link=\"c\"/>\n"
                "    <mimic joint=\"j1\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:7", "leader 'j1' is fixed", NULL);
    expect_fail("two origins",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin xyz=\"0 0 1\"/>\n    <origin xyz=\"0 0 2\"/>\n  </joint>\n</robot>\n",
                RT_EPARSE, "t.urdf:7", "joint 'j1': more than one <origin>", NULL);
    expect_fail("link without name", "<robot name=\"t\">\n  <link/>\n</robot>\n", RT_EPARSE,
                "t.urdf:2", "<link> without a name", NULL);
    expect_fail("no links", "<robot name=\"t\">\n</robot>\n", RT_EPARSE, "t.urdf", "no <link> elements", NULL);
    expect_fail("wrong root element", "<?xml version=\"1.0\"?>\n<sdf version=\"1.6\">\n</sdf>\n", RT_EPARSE,
                "t.urdf:2", "root element is <sdf>, expected <robot>", NULL);
    expect_fail("empty input", "", RT_EPARSE, "t.urdf:1", "XML: ", NULL);
    expect_fail("XML syntax", "<robot name=\"t\">\n  <link name=\"a\">\n  </lnk>\n</robot>\n", RT_EPARSE,
                "t.urdf:3", "XML: mismatched tag", NULL);
    expect_fail("two documents", "<robot name=\"t\"><link name=\"a\"/></robot>\n<robot/>\n", RT_EPARSE,
                "t.urdf:2", "XML: junk after document element", NULL);
    expect_fail("DOCTYPE",
                "<?xml version=\"1.0\"?>\n<!DOCTYPE robot [\n<!ENTITY a \"aaaaaaaaaa\">\n"
                "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n]>\n<robot name=\"&b;\"><link name=\"a\"/></robot>\n",
                RT_EPARSE, "t.urdf:2", "<!DOCTYPE> is not accepted", NULL);
}

/* Truncating a real file anywhere gives a parse error at or before the
 * end, never a robot; the line is the truncated text's last line. */
static void test_truncated(void)
{
    char *text = test_slurp(path_of("g1_29dof_rev_1_0.urdf"), NULL);
    if (!text) { CHECK(text != NULL); return; }
    size_t len = strlen(text);
    /* Cut right after a newline in the middle of the file. */
    size_t cut = len / 2;
    while (text[cut - 1] != '\n') cut--;
    int lines = 1;
    for (size_t i = 0; i < cut; i++) lines += text[i] == '\n';
    char want[32];
    snprintf(want, sizeof want, "t.urdf:%d", lines);
    char *part = strndup(text, cut);
    expect_fail("truncated at a line end", part, RT_EPARSE, want, "XML: ", NULL);
    free(part);
    /* Every cut point in the first 4 KiB and a stride through the rest; the
     * loop stops at the first cut that breaks a condition, and one CHECK
     * covers all three conditions for that cut (or the last one tried). */
    struct kin_robot *r = NULL;
    struct rt_err err;
    int st = RT_EPARSE;
    size_t n;
    memset(&err, 0, sizeof err);
    for (n = 0; n < len; n += n < 4096 ? 1 : 97) {
        memset(&err, 0, sizeof err);
        st = kin_robot_parse_urdf(text, n, "t.urdf", &r, &err);
        if (st != RT_EPARSE || r != NULL || strncmp(err.where, "t.urdf:", 7) != 0) break;
    }
    if (n < len) fprintf(stderr, "  cut at %zu: status %d where '%s'\n", n, st, err.where);
    CHECK(st == RT_EPARSE && r == NULL && strncmp(err.where, "t.urdf:", 7) == 0);
    kin_robot_free(r);
    free(text);
}

/* ------------------------------------------------------------------------
 * Limits at N and N+1. */

static char *chain_urdf(int n_links, int name_len)
{
    size_t cap = (size_t)n_links * 200 + (size_t)name_len + 256, used = 0;
    char *s = malloc(cap);
    used += (size_t)snprintf(s + used, cap - used, "<robot name=\"big\">\n");
    for (int i = 0; i < n_links; i++) {
        if (i == 0 && name_len > 0) {
            used += (size_t)snprintf(s + used, cap - used, "<link name=\"");
            memset(s + used, 'n', (size_t)name_len);
            used += (size_t)name_len;
            used += (size_t)snprintf(s + used, cap - used, "\"/>\n");
        } else {
            used += (size_t)snprintf(s + used, cap - used, "<link name=\"l%d\"/>\n", i);
        }
    }
    for (int i = 1; i < n_links; i++)
        used += (size_t)snprintf(s + used, cap - used,
                                 "<joint name=\"j%d\" type=\"revolute\"><parent link=\"l%d\"/><child link=\"l%d\"/>"
                                 "<origin xyz=\"0 0 0.01\"/><limit lower=\"-1\" upper=\"1\"/></joint>\n",
                                 i, i - 1, i);
    snprintf(s + used, cap - used, "</robot>\n");
    return s;
}

static void check_fk_frames(const struct kin_robot *r, const char *what, int samples);

static void test_limits(void)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    char *s = chain_urdf(KIN_MAX_LINKS, 0);
    CHECK_EQ_INT(kin_robot_parse_urdf(s, strlen(s), "big.urdf", &r, &err), RT_OK);
    if (r) {
        CHECK_EQ_INT(r->n_links, KIN_MAX_LINKS);
        CHECK_EQ_INT(r->n_dof, KIN_MAX_LINKS - 1);
        double *st = calloc((size_t)(7 + r->n_dof), sizeof *st), *J = calloc((size_t)6 * (size_t)(6 + r->n_dof), sizeof *J);
        st[6] = 1;
        /* The deepest path there can be: every joint turns the tip about x. */
        kin_jacobian(r, st, r->n_links - 1, J);
        int ones = 0;
        for (int c = 6; c < 6 + r->n_dof; c++) ones += J[3 * (6 + r->n_dof) + c] == 1.0;
        CHECK_EQ_INT(ones, r->n_dof);
        free(st);
        free(J);
        check_fk_frames(r, "big.urdf", 9); /* past the four-frame path's links: frame by frame */
    }
    kin_robot_free(r);
    free(s);
    r = NULL;
    s = chain_urdf(KIN_MAX_LINKS + 1, 0);
    CHECK_EQ_INT(kin_robot_parse_urdf(s, strlen(s), "big.urdf", &r, &err), RT_ELIMIT);
    CHECK(r == NULL);
    {
        char want[32];
        snprintf(want, sizeof want, "big.urdf:%d", KIN_MAX_LINKS + 2); /* the 1025th <link> */
        CHECK_EQ_STR(err.where, want);
        CHECK(strstr(err.msg, "more than 1024 links") != NULL);
    }
    free(s);

    /* Names: KIN_MAX_NAME - 1 bytes fit, KIN_MAX_NAME do not. */
    s = chain_urdf(1, KIN_MAX_NAME - 1);
    CHECK_EQ_INT(kin_robot_parse_urdf(s, strlen(s), "n.urdf", &r, &err), RT_OK);
    if (r) CHECK_EQ_INT((long long)strlen(r->links[0].name), KIN_MAX_NAME - 1);
    kin_robot_free(r);
    r = NULL;
    free(s);
    s = chain_urdf(1, KIN_MAX_NAME);
    CHECK_EQ_INT(kin_robot_parse_urdf(s, strlen(s), "n.urdf", &r, &err), RT_ELIMIT);
    CHECK_EQ_STR(err.where, "n.urdf:2");
    CHECK(strstr(err.msg, "name longer than 127 bytes") != NULL);
    free(s);

    /* Size: refused before expat sees it. */
    CHECK_EQ_INT(kin_robot_parse_urdf("<robot/>", (size_t)KIN_URDF_MAX_BYTES + 1, "huge.urdf", &r, &err), RT_ELIMIT);
    CHECK(r == NULL);
}

/* ------------------------------------------------------------------------
 * A tiny robot with what the real files lack: continuous, prismatic with
 * an off-axis direction, mimic with multiplier and offset, attributes in
 * unusual order, skipped elements. */

static const char tiny_urdf[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"tiny\">\n"
    "  <material name=\"m\"><color rgba=\"1 0 0 1\"/></material>\n"
    "  <link name=\"base\"><visual><origin xyz=\"9 9 9\"/></visual><inertial><mass value=\"1\"/></inertial></link>\n"
    "  <joint type=\"continuous\" name=\"spin\">\n"
    "    <calibration rising=\"0\"/><dynamics damping=\"1\"/>\n"
    "    <parent link=\"base\"/><child link=\"arm\"/>\n"
    "    <origin rpy=\"0.3 -0.2 0.1\" xyz=\"0 0 0.5\"/>\n"
    "    <axis xyz=\"0 0 2\"/>\n"
    "    <limit effort=\"5\" velocity=\"6\"/>\n"
    "  </joint>\n"
    "  <link name=\"arm\"/>\n"
    "  <link name=\"tip\"/>\n"
    "  <joint name=\"slide\" type=\"prismatic\">\n"
    "    <parent link=\"arm\"/><child link=\"tip\"/>\n"
    "    <origin xyz=\"0.25 0 0\" rpy=\"0.1 0.2 0.3\"/>\n"
    "    <axis xyz=\"1 1 0\"/>\n"
    "    <limit lower=\"-0.1\" upper=\"0.2\" effort=\"1\" velocity=\"2\"/>\n"
    "  </joint>\n"
    "  <joint name=\"follow\" type=\"revolute\">\n"
    "    <parent link=\"arm\"/><child link=\"hand\"/>\n"
    "    <origin xyz=\"0.1 0.2 0.3\" rpy=\"-0.4 0.5 0.6\"/>\n"
    "    <axis xyz=\"0 1 0\"/>\n"
    "    <limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"2\"/>\n"
    "    <mimic joint=\"spin\" multiplier=\"-0.5\" offset=\"0.25\"/>\n"
    "  </joint>\n"
    "  <link name=\"hand\"/>\n"
    "  <joint name=\"tool\" type=\"fixed\"><parent link=\"hand\"/><child link=\"tcp\"/>\n"
    "    <origin xyz=\"0 0 0.05\"/><mimic joint=\"nonexistent_but_fixed_ignores_it\"/></joint>\n"
    "  <link name=\"tcp\"/>\n"
    "  <gazebo reference=\"arm\"><link name=\"not_a_link\"/></gazebo>\n"
    "  <transmission name=\"t\"><joint name=\"spin\"><hardwareInterface>x</hardwareInterface></joint></transmission>\n"
    "  <unknown_element><joint name=\"nope\" type=\"ball\"/></unknown_element>\n"
    "</robot>\n";

static void test_tiny(void)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    int st = kin_robot_parse_urdf(tiny_urdf, strlen(tiny_urdf), "tiny.urdf", &r, &err);
    if (st != RT_OK) fprintf(stderr, "  tiny: %s: %s\n", err.where, err.msg);
    CHECK_EQ_INT(st, RT_OK);
    if (!r) return;
    CHECK_EQ_STR(r->name, "tiny");
    CHECK_EQ_INT(r->n_links, 5);
    CHECK_EQ_INT(r->n_joints, 4);
    CHECK_EQ_INT(r->n_dof, 2);
    /* Depth first, siblings in joint file order. */
    const char *order[] = {"base", "arm", "tip", "hand", "tcp"};
    for (int k = 0; k < 5; k++) CHECK_EQ_STR(r->links[k].name, order[k]);
    int spin = kin_robot_joint_index(r, "spin"), slide = kin_robot_joint_index(r, "slide");
    int follow = kin_robot_joint_index(r, "follow"), tool = kin_robot_joint_index(r, "tool");
    CHECK_EQ_INT(spin, 0);
    CHECK_EQ_INT(tool, 3);
    CHECK_EQ_INT(kin_robot_joint_index(r, "nope"), -1);
    CHECK_EQ_INT(kin_robot_link_index(r, "not_a_link"), -1);
    CHECK_EQ_INT(kin_robot_link_index(r, "tcp"), 4);
    const struct kin_joint *js = &r->joints[spin], *jf = &r->joints[follow], *jt = &r->joints[tool];
    CHECK_EQ_INT(js->type, KIN_JOINT_CONTINUOUS);
    CHECK_EQ_INT(js->has_limits, 0);
    CHECK(isinf(js->lower) && js->lower < 0 && isinf(js->upper) && js->upper > 0);
    CHECK(js->effort == 5 && js->velocity == 6);
    CHECK(js->axis[0] == 0 && js->axis[1] == 0 && js->axis[2] == 1);
    CHECK(js->rpy[0] == 0.3 && js->rpy[1] == -0.2 && js->xyz[2] == 0.5);
    CHECK_NEAR(r->joints[slide].axis[0], sqrt(0.5), 1e-15);
    CHECK_NEAR(r->joints[slide].axis[1], sqrt(0.5), 1e-15);
    CHECK_EQ_INT(r->joints[slide].coord, 1);
    CHECK_EQ_INT(jf->mimic, spin);
    CHECK_EQ_INT(jf->coord, -1);
    CHECK(jf->mimic_mult == -0.5 && jf->mimic_offset == 0.25);
    CHECK_EQ_INT(jt->mimic, -1);
    CHECK(jt->axis[0] == 1 && jt->axis[1] == 0 && jt->axis[2] == 0);
    CHECK(jt->lower == 0 && jt->upper == 0);
    CHECK_EQ_INT(r->tree.joint_index[3], 0);
    CHECK(r->tree.joint_mult[3] == -0.5f && r->tree.joint_offset[3] == 0.25f);
    CHECK(r->tree.lower[0] == -FLT_MAX && r->tree.upper[0] == FLT_MAX);
    CHECK(r->tree.lower[1] == -0.1f && r->tree.upper[1] == 0.2f);
    check_tree(r, "tiny");
    check_jacobian(r, "tiny", 20);

    /* JSON: continuous and fixed have null limits; numbers read back exactly. */
    char *json = kin_robot_inspect_json(r);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    CHECK(doc != NULL);
    if (doc) {
        cJSON *joints = cJSON_GetObjectItemCaseSensitive(doc, "joints");
        CHECK_EQ_INT(cJSON_GetArraySize(joints), 4);
        cJSON *j0 = cJSON_GetArrayItem(joints, 0), *j1 = cJSON_GetArrayItem(joints, 1);
        cJSON *j2 = cJSON_GetArrayItem(joints, 2), *j3 = cJSON_GetArrayItem(joints, 3);
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j0, "type")), "continuous");
        CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j0, "lower")));
        CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j0, "upper")));
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j1, "lower")) == -0.1);
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j3, "type")), "fixed");
        CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j3, "lower")));
        CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j3, "axis")), 3);
        cJSON *m = cJSON_GetObjectItemCaseSensitive(j2, "mimic");
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "joint")), "spin");
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(m, "multiplier")) == -0.5);
        /* sqrt(0.5) needs 17 digits to read back exactly. */
        cJSON *ax = cJSON_GetObjectItemCaseSensitive(j1, "axis");
        CHECK(cJSON_GetNumberValue(cJSON_GetArrayItem(ax, 0)) == r->joints[slide].axis[0]);
    }
    cJSON_Delete(doc);
    free(json);
    kin_robot_free(r);
}

/* ------------------------------------------------------------------------
 * kin_fk against every product written out.
 *
 * kin_fk skips the products that a link's shape makes exact zeros (an
 * identity origin rotation, zero origin components, a joint about a
 * coordinate axis). This oracle multiplies everything, in kin_fk's order
 * (each sum left to right over the inner index), from the joints' own
 * xyz, rot and axis, with the FK's sine and cosine (trig.h, which
 * test_trig checks); == then holds for every value (it takes -0 == +0:
 * skipping a zero term can only change a zero result's sign). */

static void ref_rot_axis(const double a[3], double th, double R[9])
{
    double c, s;
    kin_sincos(th, &s, &c);
    double t = 1.0 - c;
    R[0] = c + a[0] * a[0] * t;        R[1] = a[0] * a[1] * t - a[2] * s; R[2] = a[0] * a[2] * t + a[1] * s;
    R[3] = a[0] * a[1] * t + a[2] * s; R[4] = c + a[1] * a[1] * t;        R[5] = a[1] * a[2] * t - a[0] * s;
    R[6] = a[0] * a[2] * t - a[1] * s; R[7] = a[1] * a[2] * t + a[0] * s; R[8] = c + a[2] * a[2] * t;
}

static void ref_mul(const double *a, const double *b, double *o)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) o[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}

static void ref_fk(const struct kin_robot *r, const double *s, double *p, double *R)
{
    const double *q = s + RT_ROOT_COLS;
    double x = s[3], y = s[4], z = s[5], w = s[6], n = sqrt(x * x + y * y + z * z + w * w);
    double m[9], t[3];
    p[0] = s[0]; p[1] = s[1]; p[2] = s[2];
    x /= n; y /= n; z /= n; w /= n;
    m[0] = 1 - 2 * (y * y + z * z); m[1] = 2 * (x * y - z * w);     m[2] = 2 * (x * z + y * w);
    m[3] = 2 * (x * y + z * w);     m[4] = 1 - 2 * (x * x + z * z); m[5] = 2 * (y * z - x * w);
    m[6] = 2 * (x * z - y * w);     m[7] = 2 * (y * z + x * w);     m[8] = 1 - 2 * (x * x + y * y);
    memcpy(R, m, sizeof m);
    for (int k = 1; k < r->n_links; k++) {
        const struct kin_joint *j = &r->joints[r->links[k].joint];
        const double *pp = p + 3 * r->links[k].parent, *Rp = R + 9 * r->links[k].parent;
        double Ro[9], M[9], v = 0.0;
        int moves = j->type != KIN_JOINT_FIXED;
        if (moves)
            v = j->mimic >= 0 ? j->mimic_mult * q[r->joints[j->mimic].coord] + j->mimic_offset
                              : 1.0 * q[j->coord] + 0.0;
        ref_mul(Rp, j->rot, Ro);
        for (int i = 0; i < 3; i++)
            t[i] = Rp[3 * i] * j->xyz[0] + Rp[3 * i + 1] * j->xyz[1] + Rp[3 * i + 2] * j->xyz[2];
        for (int i = 0; i < 3; i++) p[3 * k + i] = pp[i] + t[i];
        if (moves && j->type != KIN_JOINT_PRISMATIC) {
            ref_rot_axis(j->axis, v, M);
            ref_mul(Ro, M, R + 9 * k);
        } else {
            memcpy(R + 9 * k, Ro, sizeof Ro);
            if (moves) {
                const double *a = j->axis;
                for (int i = 0; i < 3; i++) t[i] = Ro[3 * i] * a[0] + Ro[3 * i + 1] * a[1] + Ro[3 * i + 2] * a[2];
                for (int i = 0; i < 3; i++) p[3 * k + i] += t[i] * v;
            }
        }
    }
}

/* Every link's shape: origins with no rotation, one, two and three zero
 * components, joints about +-x, +-y, +-z and an oblique axis, a mimic, a
 * prismatic and a fixed joint. */
static const char shapes_urdf[] =
    "<robot name=\"shapes\"><link name=\"l0\"/>"
    "<joint name=\"j1\" type=\"revolute\"><parent link=\"l0\"/><child link=\"l1\"/>"
    "<origin xyz=\"0 0 0.3\"/><axis xyz=\"1 0 0\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l1\"/>"
    "<joint name=\"j2\" type=\"revolute\"><parent link=\"l1\"/><child link=\"l2\"/>"
    "<origin xyz=\"0.1 0 0.2\" rpy=\"0.2 0 0\"/><axis xyz=\"0 -1 0\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l2\"/>"
    "<joint name=\"j3\" type=\"continuous\"><parent link=\"l2\"/><child link=\"l3\"/>"
    "<origin xyz=\"0.1 -0.05 0.2\" rpy=\"0.1 -0.3 0.7\"/><axis xyz=\"0 0 -1\"/></joint><link name=\"l3\"/>"
    "<joint name=\"j4\" type=\"revolute\"><parent link=\"l3\"/><child link=\"l4\"/>"
    "<origin xyz=\"0 0.2 0\"/><axis xyz=\"0 0.6 0.8\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l4\"/>"
    "<joint name=\"j5\" type=\"revolute\"><parent link=\"l4\"/><child link=\"l5\"/>"
    "<origin xyz=\"0 0 0\"/><axis xyz=\"0 1 0\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/>"
    "<mimic joint=\"j1\" multiplier=\"-0.5\" offset=\"0.25\"/></joint><link name=\"l5\"/>"
    "<joint name=\"j6\" type=\"prismatic\"><parent link=\"l5\"/><child link=\"l6\"/>"
    "<origin xyz=\"0.05 0 0\" rpy=\"0 0.4 0\"/><axis xyz=\"0 0 1\"/><limit lower=\"-0.2\" upper=\"0.2\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l6\"/>"
    "<joint name=\"j7\" type=\"fixed\"><parent link=\"l6\"/><child link=\"l7\"/><origin xyz=\"0 0 0.1\"/></joint><link name=\"l7\"/>"
    "<joint name=\"j8\" type=\"revolute\"><parent link=\"l0\"/><child link=\"l8\"/>"
    "<origin xyz=\"-0.1 0.1 0\"/><axis xyz=\"0 0 1\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l8\"/>"
    "<joint name=\"j9\" type=\"revolute\"><parent link=\"l8\"/><child link=\"l9\"/>"
    "<origin xyz=\"0.3 0 0\"/><axis xyz=\"-1 0 0\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l9\"/>"
    "<joint name=\"j10\" type=\"prismatic\"><parent link=\"l9\"/><child link=\"l10\"/>"
    "<origin xyz=\"0.02 0.03 0.04\" rpy=\"0.3 0.2 0.1\"/><axis xyz=\"0.48 0.6 0.64\"/><limit lower=\"-0.2\" upper=\"0.2\" effort=\"1\" velocity=\"1\"/></joint><link name=\"l10\"/>"
    "</robot>";

static void check_fk_products(const struct kin_robot *r, const char *what, int samples)
{
    int cols = RT_ROOT_COLS + r->n_dof, bad = 0;
    double *s = malloc(sizeof *s * (size_t)cols);
    double *p = malloc(sizeof *p * 3 * (size_t)r->n_links), *R = malloc(sizeof *R * 9 * (size_t)r->n_links);
    double *pr = malloc(sizeof *pr * 3 * (size_t)r->n_links), *Rr = malloc(sizeof *Rr * 9 * (size_t)r->n_links);
    unsigned seed = 12345;
    for (int it = 0; it < samples; it++) {
        for (int c = 0; c < cols; c++) {
            seed = seed * 1103515245u + 12345u;
            s[c] = ((double)(seed >> 8) / 16777216.0 - 0.5) * 3.0;
        }
        if (it == 0) /* the identity pose: exact zeros everywhere */
            for (int c = 0; c < cols; c++) s[c] = c == 6 ? 1.0 : 0.0;
        kin_fk(r, s, p, R);
        ref_fk(r, s, pr, Rr);
        for (int i = 0; i < 3 * r->n_links; i++) bad += !(p[i] == pr[i]);
        for (int i = 0; i < 9 * r->n_links; i++) bad += !(R[i] == Rr[i]);
    }
    if (bad) fprintf(stderr, "  %s: %d FK values differ from every product written out\n", what, bad);
    CHECK_EQ_INT(bad, 0);
    free(s); free(p); free(R); free(pr); free(Rr);
}

/* kin_fk_frames against kin_fk frame by frame: the same bits (memcmp: the
 * sign of a zero and a NaN's payload too), for every n from 1 to 9 (whole
 * groups of four and the rest), at random poses, the identity pose, a zero
 * quaternion and a NaN coordinate. */
static void check_fk_frames(const struct kin_robot *r, const char *what, int samples)
{
    int cols = RT_ROOT_COLS + r->n_dof, nl = r->n_links, bad = 0;
    double *s = malloc(sizeof *s * 9 * (size_t)cols);
    double *p = malloc(sizeof *p * 9 * 12 * (size_t)nl), *R = p + 9 * 3 * (size_t)nl;
    double *pr = malloc(sizeof *pr * 12 * (size_t)nl), *Rr = pr + 3 * (size_t)nl;
    unsigned seed = 777;
    for (int it = 0; it < samples; it++) {
        int n = 1 + it % 9;
        for (int l = 0; l < n; l++) {
            double *x = s + (size_t)l * (size_t)cols;
            for (int c = 0; c < cols; c++) {
                seed = seed * 1103515245u + 12345u;
                x[c] = ((double)(seed >> 8) / 16777216.0 - 0.5) * 3.0;
            }
            if (it == 1 && l == 1)
                for (int c = 0; c < cols; c++) x[c] = c == 6 ? 1.0 : 0.0;
            if (it == 2 && l == 0) x[3] = x[4] = x[5] = x[6] = 0.0;
            if (it == 3 && l == 2 && cols > RT_ROOT_COLS) x[cols - 1] = NAN;
        }
        kin_fk_frames(r, n, s, (size_t)cols, p, R);
        for (int l = 0; l < n; l++) {
            kin_fk(r, s + (size_t)l * (size_t)cols, pr, Rr);
            bad += memcmp(p + (size_t)l * 3 * (size_t)nl, pr, sizeof *pr * 3 * (size_t)nl) != 0;
            bad += memcmp(R + (size_t)l * 9 * (size_t)nl, Rr, sizeof *Rr * 9 * (size_t)nl) != 0;
        }
    }
    if (bad) fprintf(stderr, "  %s: kin_fk_frames differs from kin_fk in %d frames' positions or rotations\n", what, bad);
    CHECK_EQ_INT(bad, 0);
    free(s); free(p); free(pr);
}

static void test_fk_products(void)
{
    const char *files[] = {"g1_29dof_rev_1_0.urdf", "g1_23dof_rev_1_0.urdf", "h1.urdf", "panda.urdf",
                           "ur5_robot.urdf"};
    struct kin_robot *r = NULL;
    struct rt_err err;
    CHECK_EQ_INT(kin_robot_parse_urdf(shapes_urdf, strlen(shapes_urdf), "shapes.urdf", &r, &err), RT_OK);
    if (r) check_fk_products(r, "shapes", 200);
    if (r) check_fk_frames(r, "shapes", 200);
    kin_robot_free(r);
    for (int i = 0; i < 5; i++) {
        if (!(r = load_or_skip(files[i]))) continue;
        check_fk_products(r, files[i], 200);
        check_fk_frames(r, files[i], 200);
        kin_robot_free(r);
    }
}

/* ------------------------------------------------------------------------
 * Real robots: tree, Jacobians, JSON, bundled names. */

static void test_real_kinematics(void)
{
    const char *files[] = {"g1_29dof_rev_1_0.urdf", "g1_23dof_rev_1_0.urdf", "h1.urdf", "panda.urdf",
                           "ur5_robot.urdf"};
    for (int i = 0; i < 5; i++) {
        struct kin_robot *r = load_or_skip(files[i]);
        if (!r) continue;
        check_tree(r, files[i]);
        if (i == 0 || i == 3) check_jacobian(r, files[i], 6);
        kin_robot_free(r);
        check_zero_pose(files[i]);
    }
}

static void test_panda_mimic(void)
{
    struct kin_robot *r = load_or_skip("panda.urdf");
    if (!r) return;
    int f1 = kin_robot_joint_index(r, "panda_finger_joint1"), f2 = kin_robot_joint_index(r, "panda_finger_joint2");
    CHECK_EQ_INT(r->joints[f2].mimic, f1);
    CHECK_EQ_INT(r->joints[f2].coord, -1);
    CHECK(r->joints[f2].mimic_mult == 1.0 && r->joints[f2].mimic_offset == 0.0);
    int rf = kin_robot_link_index(r, "panda_rightfinger"), lf = kin_robot_link_index(r, "panda_leftfinger");
    CHECK_EQ_INT(r->tree.joint_index[rf], r->joints[f1].coord);
    CHECK_EQ_INT(r->tree.joint_index[lf], 7);
    /* Opening the gripper by d moves the fingers 2d apart. */
    double s[7 + 8] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, -1.5, 0, 1.5, 0, 0.03};
    double *p = malloc(sizeof *p * 3 * (size_t)r->n_links), *R = malloc(sizeof *R * 9 * (size_t)r->n_links);
    kin_fk(r, s, p, R);
    double d = 0;
    for (int i = 0; i < 3; i++) d += (p[3 * lf + i] - p[3 * rf + i]) * (p[3 * lf + i] - p[3 * rf + i]);
    CHECK_NEAR(sqrt(d), 0.06, 1e-12);
    free(p);
    free(R);
    kin_robot_free(r);
}

static void test_inspect_json(void)
{
    struct kin_robot *r = load_or_skip("g1_29dof_rev_1_0.urdf");
    if (!r) return;
    char *json = kin_robot_inspect_json(r);
    cJSON *doc = json ? cJSON_Parse(json) : NULL;
    CHECK(doc != NULL);
    if (doc) {
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "kind")), "robot");
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "name")), "g1_29dof_rev_1_0");
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "dof")) == 29);
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "links")) == 39);
        cJSON *joints = cJSON_GetObjectItemCaseSensitive(doc, "joints");
        CHECK_EQ_INT(cJSON_GetArraySize(joints), 38);
        int i = 0, fixed = 0;
        cJSON *j;
        cJSON_ArrayForEach(j, joints) {
            const struct kin_joint *kj = &r->joints[i++];
            CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "name")), kj->name);
            cJSON *lo = cJSON_GetObjectItemCaseSensitive(j, "lower"), *up = cJSON_GetObjectItemCaseSensitive(j, "upper");
            if (kj->type == KIN_JOINT_FIXED) {
                fixed++;
                CHECK(cJSON_IsNull(lo) && cJSON_IsNull(up));
            } else {
                CHECK(cJSON_IsNumber(lo) && cJSON_GetNumberValue(lo) == kj->lower);
                CHECK(cJSON_IsNumber(up) && cJSON_GetNumberValue(up) == kj->upper);
            }
        }
        CHECK_EQ_INT(fixed, 9);
        /* As written in the file, not rounded: */
        CHECK(strstr(json, "\"lower\":-1.972222054,") != NULL);
        CHECK(strstr(json, "\"upper\":2.8798,") != NULL);
    }
    cJSON_Delete(doc);
    free(json);
    kin_robot_free(r);
}

static void test_bundled(void)
{
    const char *const *names = kin_robot_bundled();
    struct kin_robot *r = NULL, *f = NULL;
    struct rt_err err;
    char cwd[4096];
    int n = 0, has_g1 = 0, has_h1 = 0;
    for (; names[n]; n++) {
        has_g1 |= !strcmp(names[n], "g1");
        has_h1 |= !strcmp(names[n], "h1");
    }
    CHECK(has_g1 && has_h1);
    /* From a directory with no robots in it. */
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir("/") == 0);
    CHECK_EQ_INT(kin_robot_load("g1", &r, &err), RT_OK);
    if (r) {
        CHECK_EQ_INT(r->n_dof, 29);
        CHECK_EQ_INT(r->n_links, 39);
        CHECK_EQ_STR(r->name, "g1_29dof_rev_1_0");
    }
    kin_robot_free(r);
    CHECK_EQ_INT(kin_robot_load("h1", &r, &err), RT_OK);
    if (r) CHECK_EQ_INT(r->n_dof, 19);
    kin_robot_free(r);
    r = NULL;
    CHECK_EQ_INT(kin_robot_load("g2", &r, &err), RT_ENOTFOUND);
    CHECK(r == NULL);
    CHECK_EQ_STR(err.where, "g2");
    CHECK(strstr(err.msg, "g1") && strstr(err.msg, "h1"));
    CHECK_EQ_INT(kin_robot_load("no_such_robot.urdf", &r, &err), RT_EIO);
    CHECK_EQ_INT(kin_robot_load("", &r, &err), RT_EINVAL);
    CHECK(chdir(cwd) == 0);

    /* The bundled G1 is the shared file, byte for byte. */
    char *a = test_slurp("robots/g1.urdf", NULL), *b = test_slurp(path_of("g1_29dof_rev_1_0.urdf"), NULL);
    CHECK(a && b && !strcmp(a, b));
    free(a);
    free(b);
    CHECK_EQ_INT(kin_robot_load("g1", &r, &err), RT_OK);
    f = load_or_skip("g1_29dof_rev_1_0.urdf");
    if (r && f) {
        CHECK_EQ_INT(r->n_joints, f->n_joints);
        for (int j = 0; j < r->n_joints && j < f->n_joints; j++) CHECK_EQ_STR(r->joints[j].name, f->joints[j].name);
    }
    kin_robot_free(r);
    kin_robot_free(f);
    kin_robot_free(NULL);
}

/* <origin> bounds (robot.h): |xyz| <= KIN_URDF_MAX_ORIGIN m and |rpy| <=
 * KIN_URDF_MAX_RPY rad accepted at N, refused past N naming the line. */
static void test_origin_bounds(void)
{
    const char *ok[] = {"xyz=\"1000 -1000 0\"", "xyz=\"0 0 1e3\" rpy=\"1000 -1000 0\"", NULL};
    for (int i = 0; ok[i]; i++) {
        char text[512];
        struct kin_robot *r = NULL;
        struct rt_err err = {0};
        snprintf(text, sizeof text,
                 "<robot name=\"t\">\n" LINK3
                 "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                 "    <origin %s/>\n  </joint>\n"
                 "  <joint name=\"j2\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/></joint>\n</robot>\n",
                 ok[i]);
        CHECK_EQ_INT(kin_robot_parse_urdf(text, strlen(text), "t.urdf", &r, &err), RT_OK);
        if (err.code) fprintf(stderr, "  origin %s: %s: %s\n", ok[i], err.where, err.msg);
        kin_robot_free(r);
    }
    expect_fail("origin 1e308",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin xyz=\"1e308 0 0\"/>\n  </joint>\n</robot>\n",
                RT_EINVAL, "t.urdf:6", "joint 'j1': <origin> xyz value 1 is 1e+308", "the limit is 1000 m");
    expect_fail("origin past 1e3",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin xyz=\"0 0 -1000.5\"/>\n  </joint>\n</robot>\n",
                RT_EINVAL, "t.urdf:6", "<origin> xyz value 3 is -1000.5", NULL);
    expect_fail("rpy 1e300",
                "<robot name=\"t\">\n" LINK3
                "  <joint name=\"j1\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/>\n"
                "    <origin xyz=\"0 0 0\" rpy=\"0 1e300 0\"/>\n  </joint>\n</robot>\n",
                RT_EINVAL, "t.urdf:6", "<origin> rpy value 2 is 1e+300", "the limit is 1000 rad");
}

int main(void)
{
    check_table("g1_29dof_rev_1_0.urdf", rows_g1_29dof_rev_1_0,
                (int)(sizeof rows_g1_29dof_rev_1_0 / sizeof *rows_g1_29dof_rev_1_0), 39, 38, 29, "pelvis");
    check_table("g1_23dof_rev_1_0.urdf", rows_g1_23dof_rev_1_0,
                (int)(sizeof rows_g1_23dof_rev_1_0 / sizeof *rows_g1_23dof_rev_1_0), 31, 30, 23, "pelvis");
    check_table("h1.urdf", rows_h1, (int)(sizeof rows_h1 / sizeof *rows_h1), 25, 24, 19, "pelvis");
    check_table("panda.urdf", rows_panda, (int)(sizeof rows_panda / sizeof *rows_panda), 13, 12, 8, "panda_link0");
    check_table("ur5_robot.urdf", rows_ur5_robot, (int)(sizeof rows_ur5_robot / sizeof *rows_ur5_robot), 11, 10, 6,
                "world");
    test_real_kinematics();
    test_fk_products();
    test_panda_mimic();
    test_inspect_json();
    test_tiny();
    test_malformed();
    test_origin_bounds();
    test_truncated();
    test_limits();
    test_bundled();
    return test_report("test_urdf");
}
