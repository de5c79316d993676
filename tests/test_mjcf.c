/* test_mjcf.c -- the MJCF reader (kinematics/mjcf.c) and the reader choice
 * by root element (kin_robot_parse, kin_robot_load).
 *
 * What is checked, and against what:
 *  - the real MJCF files of G1 29-dof, G1 23-dof, H1 and Booster T1 in
 *    ../shared/data/robots against the URDF files of the same robots read
 *    by the URDF reader: the dof, the joint names in coordinate order, the
 *    limits, and the world position and rotation of every link both files
 *    name, at the zero pose and at 20 random poses inside the limits, with
 *    the floating base at the identity (both roots sit at the origin, so
 *    the MJCF root body's initial height does not enter). Where the files
 *    themselves differ, the measured difference is stated at the check;
 *  - every orientation form (quat in w x y z, euler with eulerseq in lower,
 *    upper and mixed case, degrees and radians, axisangle, xyaxes, zaxis)
 *    against rotations composed here from elementary ones;
 *  - joint pos (rotation about an off-origin anchor) and multi-joint bodies
 *    against transforms composed here in 4x4 form, default classes with
 *    childclass and class= inheritance, limited/autolimits, geoms and
 *    fromto, frames, unnamed bodies and joints, include resolved and refused;
 *  - malformed inputs: status, "name:LINE" and the element named; every
 *    limit at N (accepted) and N+1 (rejected).
 * The real-file checks skip only when ../shared/data is absent. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* M_PI, mkdtemp */
#endif
#include "test.h"

#include <errno.h>
#include <float.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kinematics/robot.h"

/* ------------------------------------------------------------------------
 * Helpers. */

static struct kin_robot *parse_ok(const char *text, const char *base_dir)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    rt_err_clear(&err);
    int st = kin_robot_parse_mjcf(text, strlen(text), "t.xml", base_dir, &r, &err);
    if (st != RT_OK) fprintf(stderr, "  parse: %s: %s\n", err.where, err.msg);
    CHECK_EQ_INT(st, RT_OK);
    return r;
}

static void expect_fail_dir(const char *what, const char *text, size_t len, const char *base_dir, int want,
                            const char *want_where, const char *want_msg1, const char *want_msg2)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    int before = test_failed;
    rt_err_clear(&err);
    int st = kin_robot_parse_mjcf(text, len, "t.xml", base_dir, &r, &err);
    CHECK_EQ_INT(st, want);
    CHECK(r == NULL);
    CHECK_EQ_INT(err.code, want);
    CHECK_EQ_STR(err.where, want_where);
    CHECK(strstr(err.msg, want_msg1) != NULL);
    CHECK(!want_msg2 || strstr(err.msg, want_msg2) != NULL);
    if (test_failed > before) fprintf(stderr, "  case '%s': where '%s' msg '%s'\n", what, err.where, err.msg);
    kin_robot_free(r);
    /* And without an error record. */
    CHECK_EQ_INT(kin_robot_parse_mjcf(text, len, "t.xml", base_dir, &r, NULL), want);
    kin_robot_free(r);
}

static void expect_fail(const char *what, const char *text, int want, const char *want_where,
                        const char *want_msg1, const char *want_msg2)
{
    expect_fail_dir(what, text, strlen(text), NULL, want, want_where, want_msg1, want_msg2);
}

/* World pose of link `name` with the base at the identity and coordinates q
 * (NULL: all zero). */
static int link_pose(const struct kin_robot *r, const double *q, const char *name, double p[3], double R[9])
{
    int l = kin_robot_link_index(r, name);
    double *state = calloc(7 + (size_t)r->n_dof, sizeof *state);
    double *pos = calloc(3 * (size_t)r->n_links, sizeof *pos), *rot = calloc(9 * (size_t)r->n_links, sizeof *rot);
    CHECK(l >= 0);
    if (l >= 0 && state && pos && rot) {
        state[6] = 1;
        for (int i = 0; q && i < r->n_dof; i++) state[7 + i] = q[i];
        kin_fk(r, state, pos, rot);
        memcpy(p, pos + 3 * l, 3 * sizeof *p);
        memcpy(R, rot + 9 * l, 9 * sizeof *R);
    }
    free(state);
    free(pos);
    free(rot);
    return l;
}

static double max_diff(const double *a, const double *b, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* 3x3 row-major. */
static void m3_mul(const double *a, const double *b, double *o)
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    memcpy(o, t, sizeof t);
}

/* Elementary rotation about x (0), y (1) or z (2). */
static void m3_principal(int axis, double a, double *R)
{
    double c = cos(a), s = sin(a);
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    memset(R, 0, 9 * sizeof *R);
    R[3 * axis + axis] = 1;
    R[3 * i + i] = c;
    R[3 * i + j] = -s;
    R[3 * j + i] = s;
    R[3 * j + j] = c;
}

static void m3_prod3(int a0, double x0, int a1, double x1, int a2, double x2, double *R)
{
    double A[9], B[9], C[9];
    m3_principal(a0, x0, A);
    m3_principal(a1, x1, B);
    m3_principal(a2, x2, C);
    m3_mul(A, B, R);
    m3_mul(R, C, R);
}

/* 4x4 rigid transforms, row-major, composed here independently of the reader. */
static void t4_trans(double x, double y, double z, double *T)
{
    memset(T, 0, 16 * sizeof *T);
    T[0] = T[5] = T[10] = T[15] = 1;
    T[3] = x, T[7] = y, T[11] = z;
}

static void t4_rot(int axis, double a, double *T)
{
    double R[9];
    m3_principal(axis, a, R);
    t4_trans(0, 0, 0, T);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) T[4 * i + j] = R[3 * i + j];
}

static void t4_mul(const double *a, const double *b, double *o)
{
    double t[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            t[4 * i + j] = 0;
            for (int k = 0; k < 4; k++) t[4 * i + j] += a[4 * i + k] * b[4 * k + j];
        }
    memcpy(o, t, sizeof t);
}

static void t4_check(const double *T, const double *p, const double *R, double tol, const char *what)
{
    double tp[3] = {T[3], T[7], T[11]}, tr[9];
    int before = test_failed;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) tr[3 * i + j] = T[4 * i + j];
    CHECK(max_diff(tp, p, 3) <= tol);
    CHECK(max_diff(tr, R, 9) <= tol);
    if (test_failed > before)
        fprintf(stderr, "  %s: got p (%g %g %g) want (%g %g %g), rot diff %g\n", what, p[0], p[1], p[2], tp[0],
                tp[1], tp[2], max_diff(tr, R, 9));
}

static unsigned long long rng_state = 0x2545f4914f6cdd1dull;
static double urand(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static char *data_path(const char *file)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 512, "%s/robots/%s", test_data_dir(), file);
    return b;
}

/* ------------------------------------------------------------------------
 * The real robots: MJCF against URDF. */

/* A limit where the two files of one robot disagree: the MJCF rounds the
 * URDF's value to 6 significant digits. */
struct known_limit {
    const char *joint;
    double diff; /* measured |MJCF - URDF|, both bounds */
};

/* G1: Unitree's MJCF writes the wrist ranges as 1.97222 and 1.61443 where
 * the URDF has 1.972222054 and 1.614429558. */
static const struct known_limit g1_known[] = {
    {"left_wrist_roll_joint", 2.054e-6},  {"right_wrist_roll_joint", 2.054e-6},
    {"left_wrist_pitch_joint", 4.42e-7},  {"right_wrist_pitch_joint", 4.42e-7},
    {"left_wrist_yaw_joint", 4.42e-7},    {"right_wrist_yaw_joint", 4.42e-7},
    {NULL, 0},
};

struct robot_pair {
    const char *urdf, *mjcf;
    int n_common_links;               /* links both files name */
    const struct known_limit *known;  /* NULL: none */
    double pos_tol, rot_tol;          /* FK; see the table below */
};

/* FK tolerances: 1e-5 m everywhere. The rotation tolerance is stated per
 * robot: Unitree's MJCFs write body quaternions to 6 significant digits
 * (0.996179 0 -0.0873386 0 for the hip roll's 0.1749 rad pitch), so link
 * rotations differ from the URDF's rpy by up to 1.6e-6 (measured 1.46e-6
 * G1, 1.55e-6 H1) and positions by up to 5.4e-7 m; Booster's T1 files
 * agree to 1e-10. */
static const struct robot_pair pairs[] = {
    {"g1_29dof_rev_1_0.urdf", "g1_29dof_rev_1_0.xml", 30, g1_known, 1e-5, 5e-6},
    {"g1_23dof_rev_1_0.urdf", "g1_23dof_rev_1_0.xml", 24, g1_known, 1e-5, 5e-6},
    {"h1.urdf", "h1.xml", 20, NULL, 1e-5, 5e-6},
    {"T1_serial.urdf", "T1_serial.xml", 24, NULL, 1e-5, 1e-9},
};

static double known_diff(const struct known_limit *k, const char *joint)
{
    for (; k && k->joint; k++)
        if (!strcmp(k->joint, joint)) return k->diff;
    return -1;
}

static void compare_pair(const struct robot_pair *pr)
{
    struct kin_robot *u = NULL, *m = NULL;
    struct rt_err err;
    int st;
    rt_err_clear(&err);
    st = kin_robot_load(data_path(pr->urdf), &u, &err);
    if (st == RT_EIO && access(data_path(pr->urdf), R_OK) != 0) TEST_SKIP("shared robot files not found (set RT_SHARED_DATA)");
    CHECK_EQ_INT(st, RT_OK);
    st = kin_robot_load(data_path(pr->mjcf), &m, &err);
    if (st != RT_OK) fprintf(stderr, "  %s: %s: %s\n", pr->mjcf, err.where, err.msg);
    CHECK_EQ_INT(st, RT_OK);
    if (!u || !m) goto done;

    /* dof and coordinate order: every one of these MJCFs lists its joints
     * in the URDF's order, so the coordinates match one to one by index. */
    CHECK_EQ_INT(m->n_dof, u->n_dof);
    int n = m->n_dof < u->n_dof ? m->n_dof : u->n_dof, *map = calloc((size_t)m->n_dof + 1, sizeof *map);
    for (int c = 0; c < m->n_dof; c++) {
        const struct kin_joint *mj = &m->joints[m->coord_joint[c]];
        int uj = kin_robot_joint_index(u, mj->name);
        CHECK(uj >= 0);
        map[c] = uj >= 0 ? u->joints[uj].coord : -1;
        if (c < n) CHECK_EQ_STR(mj->name, u->joints[u->coord_joint[c]].name);
        if (uj < 0) continue;
        const struct kin_joint *ujt = &u->joints[uj];
        CHECK_EQ_INT(mj->has_limits, ujt->has_limits);
        double d = fmax(fabs(mj->lower - ujt->lower), fabs(mj->upper - ujt->upper)), kd = known_diff(pr->known, mj->name);
        if (kd >= 0) { /* the files differ: the measured difference, to 1e-9 */
            CHECK_NEAR(d, kd, 1e-9);
        } else {
            CHECK_NEAR(mj->lower, ujt->lower, 1e-6);
            CHECK_NEAR(mj->upper, ujt->upper, 1e-6);
        }
        CHECK_NEAR(max_diff(mj->axis, ujt->axis, 3), 0, 1e-12);
    }

    /* FK of the links both name. */
    size_t nu = (size_t)u->n_links, nm = (size_t)m->n_links;
    double *su = calloc(7 + (size_t)u->n_dof, sizeof *su), *sm = calloc(7 + (size_t)m->n_dof, sizeof *sm);
    double *pu = calloc(3 * nu, sizeof *pu), *ru = calloc(9 * nu, sizeof *ru);
    double *pm = calloc(3 * nm, sizeof *pm), *rm = calloc(9 * nm, sizeof *rm);
    int common = 0;
    double worst_p = 0, worst_r = 0;
    for (int k = 0; k < m->n_links; k++) common += kin_robot_link_index(u, m->links[k].name) >= 0;
    CHECK_EQ_INT(common, pr->n_common_links);
    CHECK_EQ_STR(m->links[0].name, u->links[0].name);
    for (int t = 0; t <= 20; t++) {
        su[6] = sm[6] = 1;
        for (int c = 0; c < m->n_dof; c++) {
            const struct kin_joint *mj = &m->joints[m->coord_joint[c]];
            double lo = mj->has_limits ? mj->lower : -M_PI, hi = mj->has_limits ? mj->upper : M_PI;
            double v = t ? lo + (hi - lo) * urand() : 0.0;
            sm[7 + c] = v;
            if (map[c] >= 0) su[7 + map[c]] = v;
        }
        kin_fk(u, su, pu, ru);
        kin_fk(m, sm, pm, rm);
        for (int k = 0; k < m->n_links; k++) {
            int l = kin_robot_link_index(u, m->links[k].name);
            if (l < 0) continue;
            worst_p = fmax(worst_p, max_diff(pu + 3 * l, pm + 3 * k, 3));
            worst_r = fmax(worst_r, max_diff(ru + 9 * l, rm + 9 * k, 9));
        }
    }
    if (worst_p > pr->pos_tol || worst_r > pr->rot_tol)
        fprintf(stderr, "  %s: FK differs by %.3g m, %.3g in rotation\n", pr->mjcf, worst_p, worst_r);
    CHECK(worst_p <= pr->pos_tol);
    CHECK(worst_r <= pr->rot_tol);
    printf("  %s vs %s: %d dof, %d common links, FK max |dp| %.2g m, max |dR| %.2g\n", pr->mjcf, pr->urdf,
           m->n_dof, common, worst_p, worst_r);
    free(map);
    free(su);
    free(sm);
    free(pu);
    free(ru);
    free(pm);
    free(rm);
done:
    kin_robot_free(u);
    kin_robot_free(m);
}

/* What the real files hold beyond the joints: names, geoms, the mocap
 * model's extra bodies. */
static void test_real_details(void)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    if (kin_robot_load(data_path("g1_29dof_rev_1_0.xml"), &r, &err) != RT_OK) return;
    CHECK_EQ_STR(r->name, "g1_29dof_rev_1_0");
    CHECK_EQ_INT(r->n_links, 30);
    /* 72 geoms in the file, one of them the floor in the second <worldbody>. */
    CHECK_EQ_INT(r->n_geoms, 71);
    int meshes = 0;
    for (int g = 0; g < r->n_geoms; g++) {
        CHECK(r->geoms[g].link >= 0 && r->geoms[g].link < r->n_links);
        meshes += r->geoms[g].type == KIN_GEOM_MESH;
    }
    CHECK(meshes > 0);
    CHECK_EQ_STR(r->geoms[0].mesh, "pelvis");
    CHECK_EQ_INT(r->geoms[0].contype, 0);
    CHECK_EQ_INT(r->geoms[0].group, 1);
    CHECK_EQ_INT(r->geoms[2].contype, 1);
    CHECK_EQ_INT(r->joints[0].effort == 88, 1);
    kin_robot_free(r);

    /* H1: geom types from the class chain (h1 -> visual / collision). */
    if (kin_robot_load(data_path("h1.xml"), &r, &err) == RT_OK) {
        int cyl = 0;
        for (int g = 0; g < r->n_geoms; g++) {
            const struct kin_geom *kg = &r->geoms[g];
            if (kg->type == KIN_GEOM_CYLINDER) {
                cyl++;
                CHECK_NEAR(kg->size[0], 0.06, 1e-15);
                CHECK_NEAR(kg->size[1], 0.035, 1e-15);
                CHECK_EQ_INT(kg->group, 3);
            } else {
                CHECK_EQ_INT(kg->type, KIN_GEOM_MESH);
            }
        }
        CHECK_EQ_INT(cyl, 2);
        kin_robot_free(r);
    }

    /* T1: unlimited joints made limited by the main default, spheres with no type. */
    if (kin_robot_load(data_path("T1_serial.xml"), &r, &err) == RT_OK) {
        int head = -1;
        for (int g = 0; g < r->n_geoms; g++)
            if (r->geoms[g].name && !strcmp(r->geoms[g].name, "head")) head = g;
        CHECK(head >= 0);
        if (head >= 0) {
            CHECK_EQ_INT(r->geoms[head].type, KIN_GEOM_SPHERE);
            CHECK_NEAR(r->geoms[head].size[0], 0.08, 1e-15);
            CHECK_EQ_INT(r->geoms[head].link, kin_robot_link_index(r, "H2"));
        }
        kin_robot_free(r);
    }

    /* GMR's mocap G1: jointless bodies (toes, head, IMU) are fixed links. */
    if (kin_robot_load(data_path("g1_mocap_29dof.xml"), &r, &err) == RT_OK) {
        CHECK_EQ_INT(r->n_dof, 29);
        CHECK_EQ_INT(r->n_links, 38);
        int toe = kin_robot_link_index(r, "left_toe_link");
        CHECK(toe > 0);
        if (toe > 0) {
            CHECK_EQ_STR(r->joints[r->links[toe].joint].name, "left_toe_link__fixed");
            CHECK_EQ_INT(r->joints[r->links[toe].joint].type, KIN_JOINT_FIXED);
            CHECK_EQ_STR(r->links[r->links[toe].parent].name, "left_ankle_roll_link");
        }
        kin_robot_free(r);
    }
}

/* ------------------------------------------------------------------------
 * Orientation forms. */

#define DOC(compiler, body) \
    "<mujoco model=\"t\">\n" compiler "\n<worldbody>\n<body name=\"root\"><freejoint/>\n" body "\n</body>\n</worldbody>\n</mujoco>\n"

static void check_orient(const char *what, const char *text, const double *want)
{
    struct kin_robot *r = parse_ok(text, NULL);
    double p[3], R[9];
    if (!r) {
        fprintf(stderr, "  case '%s'\n", what);
        return;
    }
    if (link_pose(r, NULL, "c", p, R) >= 0) {
        int before = test_failed;
        CHECK(max_diff(R, want, 9) <= 1e-12);
        if (test_failed > before) fprintf(stderr, "  case '%s': rotation differs by %g\n", what, max_diff(R, want, 9));
    }
    kin_robot_free(r);
}

static void test_orientations(void)
{
    const double d = M_PI / 180;
    double W[9], A[9], B[9];

    /* quat is w x y z: 45 degrees about z (read as x y z w it would turn
     * about x by about 180 degrees). */
    m3_principal(2, M_PI / 4, W);
    check_orient("quat", DOC("", "<body name=\"c\" quat=\"0.92387953251128674 0 0 0.38268343236508978\"/>"), W);
    /* Normalized first. */
    check_orient("quat scaled", DOC("", "<body name=\"c\" quat=\"1.8477590650225735 0 0 0.76536686473017956\"/>"), W);

    /* euler: degrees by default, eulerseq "xyz" (intrinsic) by default. */
    m3_principal(0, 90 * d, W);
    check_orient("euler default", DOC("", "<body name=\"c\" euler=\"90 0 0\"/>"), W);
    m3_prod3(0, 30 * d, 1, 45 * d, 2, 60 * d, W);
    check_orient("euler xyz", DOC("", "<body name=\"c\" euler=\"30 45 60\"/>"), W);
    /* Upper case: fixed axes, so the later rotations apply on the left. */
    m3_prod3(2, 60 * d, 1, 45 * d, 0, 30 * d, W);
    check_orient("euler XYZ", DOC("<compiler eulerseq=\"XYZ\"/>", "<body name=\"c\" euler=\"30 45 60\"/>"), W);
    m3_prod3(2, 30 * d, 1, 45 * d, 0, 60 * d, W);
    check_orient("euler zyx", DOC("<compiler eulerseq=\"zyx\"/>", "<body name=\"c\" euler=\"30 45 60\"/>"), W);
    /* Mixed: x (moving) then Y (fixed, on the left) then z (moving, on the right). */
    m3_principal(1, 45 * d, A);
    m3_principal(0, 30 * d, B);
    m3_mul(A, B, W);
    m3_principal(2, 60 * d, A);
    m3_mul(W, A, W);
    check_orient("euler xYz", DOC("<compiler eulerseq=\"xYz\"/>", "<body name=\"c\" euler=\"30 45 60\"/>"), W);
    m3_prod3(0, 0.5, 1, -0.25, 2, 1.0, W);
    check_orient("euler radian", DOC("<compiler angle=\"radian\"/>", "<body name=\"c\" euler=\"0.5 -0.25 1\"/>"), W);

    /* axisangle: the axis is normalized, the angle follows <compiler angle>. */
    m3_principal(2, 90 * d, W);
    check_orient("axisangle", DOC("", "<body name=\"c\" axisangle=\"0 0 2 90\"/>"), W);
    m3_principal(0, 1.2, W);
    check_orient("axisangle radian", DOC("<compiler angle=\"radian\"/>", "<body name=\"c\" axisangle=\"1 0 0 1.2\"/>"), W);

    /* xyaxes: the frame's x and y axes; y is made orthogonal to x. */
    m3_principal(2, 90 * d, W);
    check_orient("xyaxes", DOC("", "<body name=\"c\" xyaxes=\"0 1 0 -1 0 0\"/>"), W);
    check_orient("xyaxes skew", DOC("", "<body name=\"c\" xyaxes=\"0 2 0 -1 5 0\"/>"), W);

    /* zaxis: the shortest rotation taking z onto the vector. */
    m3_principal(1, 90 * d, W);
    check_orient("zaxis x", DOC("", "<body name=\"c\" zaxis=\"3 0 0\"/>"), W);
    m3_principal(0, 180 * d, W);
    check_orient("zaxis -z", DOC("", "<body name=\"c\" zaxis=\"0 0 -1\"/>"), W);
    m3_principal(0, 0, W);
    check_orient("zaxis z", DOC("", "<body name=\"c\" zaxis=\"0 0 1\"/>"), W);

    /* A child's pos is in its parent's turned frame. */
    {
        struct kin_robot *r = parse_ok(DOC("", "<body name=\"a\" pos=\"1 0 0\" euler=\"0 0 90\">"
                                               "<body name=\"c\" pos=\"2 0 0\"/></body>"), NULL);
        double p[3], R[9], want[3] = {1, 2, 0};
        if (r && link_pose(r, NULL, "c", p, R) >= 0) CHECK(max_diff(p, want, 3) <= 1e-12);
        kin_robot_free(r);
    }

    /* Geoms keep their rotation as a quaternion x y z w. */
    {
        struct kin_robot *r = parse_ok(DOC("", "<geom name=\"g\" type=\"box\" size=\"1 2 3\" pos=\"0 0 1\" euler=\"0 0 90\"/>"), NULL);
        if (r) {
            CHECK_EQ_INT(r->n_geoms, 1);
            double want[4] = {0, 0, sin(M_PI / 4), cos(M_PI / 4)}, wp[3] = {0, 0, 1}, ws[3] = {1, 2, 3};
            CHECK(max_diff(r->geoms[0].quat, want, 4) <= 1e-12);
            CHECK(max_diff(r->geoms[0].pos, wp, 3) == 0);
            CHECK(max_diff(r->geoms[0].size, ws, 3) == 0);
            CHECK_EQ_INT(r->geoms[0].type, KIN_GEOM_BOX);
            CHECK_EQ_INT(r->geoms[0].link, 0);
            CHECK_EQ_STR(r->geoms[0].name, "g");
        }
        kin_robot_free(r);
    }
}

/* ------------------------------------------------------------------------
 * Joints: anchors, chains, limits, names. */

static void test_joint_pos(void)
{
    /* A hinge at pos (0 1 0) of a body at (1 0 0): at 90 degrees the body's
     * origin swings about the anchor to (2 1 0), and a child at (2 0 0) in
     * the body to (2 3 0). */
    struct kin_robot *r = parse_ok(DOC("", "<body name=\"arm\" pos=\"1 0 0\">\n"
                                           "<joint name=\"j\" axis=\"0 0 1\" pos=\"0 1 0\" range=\"-180 180\"/>\n"
                                           "<body name=\"tip\" pos=\"2 0 0\"/></body>"), NULL);
    double q = M_PI / 2, p[3], R[9], T[16], A[16], B[16];
    if (!r) return;
    CHECK_EQ_INT(r->n_dof, 1);
    CHECK_EQ_INT(r->n_links, 4);
    CHECK_EQ_STR(r->links[1].name, "arm__j");
    CHECK_EQ_STR(r->links[2].name, "arm");
    CHECK_EQ_STR(r->joints[r->links[1].joint].name, "j");
    CHECK_EQ_STR(r->joints[r->links[2].joint].name, "arm__anchor");
    CHECK_EQ_STR(r->joints[r->links[3].joint].name, "tip__fixed");
    CHECK_NEAR(r->joints[0].lower, -M_PI, 1e-15);
    CHECK_EQ_INT(r->joints[0].type, KIN_JOINT_REVOLUTE);
    for (int t = 0; t < 6; t++, q = 3 * urand() - 1.5) {
        /* arm = T(1 0 0) T(0 1 0) Rz(q) T(0 -1 0); tip = arm T(2 0 0) */
        t4_trans(1, 0, 0, T);
        t4_trans(0, 1, 0, A);
        t4_mul(T, A, T);
        t4_rot(2, q, A);
        t4_mul(T, A, T);
        t4_trans(0, -1, 0, A);
        t4_mul(T, A, T);
        if (link_pose(r, &q, "arm", p, R) >= 0) t4_check(T, p, R, 1e-12, "arm");
        t4_trans(2, 0, 0, B);
        t4_mul(T, B, T);
        if (link_pose(r, &q, "tip", p, R) >= 0) t4_check(T, p, R, 1e-12, "tip");
        if (t == 0) {
            double w[3] = {2, 3, 0};
            CHECK(max_diff(p, w, 3) <= 1e-12);
        }
    }
    kin_robot_free(r);

    /* Three joints in one body: hinge x, slide z, hinge y about (0 0 0.5),
     * applied in file order in the moving body frame. */
    r = parse_ok(DOC("<compiler angle=\"radian\"/>",
                     "<body name=\"b\" pos=\"0 0 1\">\n"
                     "<joint name=\"j1\" axis=\"1 0 0\"/>\n"
                     "<joint name=\"j2\" type=\"slide\" axis=\"0 0 1\" pos=\"5 5 5\" range=\"-0.5 0.5\"/>\n"
                     "<joint name=\"j3\" axis=\"0 1 0\" pos=\"0 0 0.5\"/>\n"
                     "<body name=\"c\" pos=\"0.3 0 0\"/></body>"),
                 NULL);
    if (!r) return;
    CHECK_EQ_INT(r->n_dof, 3);
    CHECK_EQ_STR(r->links[1].name, "b__j1");
    CHECK_EQ_STR(r->links[2].name, "b__j2");
    CHECK_EQ_STR(r->links[3].name, "b__j3");
    CHECK_EQ_STR(r->links[4].name, "b");
    CHECK_EQ_STR(r->joints[r->coord_joint[0]].name, "j1");
    CHECK_EQ_STR(r->joints[r->coord_joint[1]].name, "j2");
    CHECK_EQ_STR(r->joints[r->coord_joint[2]].name, "j3");
    CHECK_EQ_INT(r->joints[r->coord_joint[0]].type, KIN_JOINT_CONTINUOUS);
    CHECK_EQ_INT(r->joints[r->coord_joint[1]].type, KIN_JOINT_PRISMATIC);
    CHECK_NEAR(r->joints[r->coord_joint[1]].upper, 0.5, 0); /* a length: no degree conversion */
    for (int t = 0; t < 8; t++) {
        double qs[3] = {t ? 4 * urand() - 2 : 0, t ? urand() - 0.5 : 0, t ? 4 * urand() - 2 : 0};
        t4_trans(0, 0, 1, T);
        t4_rot(0, qs[0], A);
        t4_mul(T, A, T);
        t4_trans(0, 0, qs[1], A);
        t4_mul(T, A, T);
        t4_trans(0, 0, 0.5, A);
        t4_mul(T, A, T);
        t4_rot(1, qs[2], A);
        t4_mul(T, A, T);
        t4_trans(0, 0, -0.5, A);
        t4_mul(T, A, T);
        if (link_pose(r, qs, "b", p, R) >= 0) t4_check(T, p, R, 1e-12, "b");
        t4_trans(0.3, 0, 0, A);
        t4_mul(T, A, T);
        if (link_pose(r, qs, "c", p, R) >= 0) t4_check(T, p, R, 1e-12, "c");
    }
    /* The Jacobian of such a chain against finite differences of kin_fk. */
    {
        double qs[3] = {0.3, 0.1, -0.7}, J[6 * 9], s0[10] = {0.1, 0.2, 0.3, 0, 0, 0, 1}, pp[3 * 6], pr[9 * 6];
        double pm_[3 * 6], h = 1e-6;
        int c = kin_robot_link_index(r, "c");
        memcpy(s0 + 7, qs, sizeof qs);
        kin_jacobian(r, s0, c, J);
        for (int k = 0; k < 3; k++) {
            s0[7 + k] += h;
            kin_fk(r, s0, pp, pr);
            s0[7 + k] -= 2 * h;
            kin_fk(r, s0, pm_, pr);
            s0[7 + k] += h;
            for (int i = 0; i < 3; i++) CHECK_NEAR(J[i * 9 + 6 + k], (pp[3 * c + i] - pm_[3 * c + i]) / (2 * h), 1e-8);
        }
    }
    kin_robot_free(r);

    /* A joint inside a <frame> of the body: its axis and anchor turn with it. */
    r = parse_ok(DOC("<compiler angle=\"radian\"/>",
                     "<body name=\"b\"><frame pos=\"0 1 0\" euler=\"0 0 1.5707963267948966\">"
                     "<joint name=\"j\" axis=\"1 0 0\"/></frame></body>"),
                 NULL);
    if (r) {
        double want_axis[3] = {0, 1, 0};
        CHECK(max_diff(r->joints[0].axis, want_axis, 3) <= 1e-15);
        CHECK_EQ_STR(r->links[1].name, "b__j");
        q = 0.4;
        t4_trans(0, 1, 0, T);
        t4_rot(1, q, A);
        t4_mul(T, A, T);
        t4_trans(0, -1, 0, A);
        t4_mul(T, A, T);
        if (link_pose(r, &q, "b", p, R) >= 0) t4_check(T, p, R, 1e-12, "frame joint");
    }
    kin_robot_free(r);

    /* Unnamed bodies are bodyN (MuJoCo's id), unnamed joints BODY__jointK. */
    r = parse_ok(DOC("", "<body><joint/><body name=\"x\"><joint type=\"slide\"/><joint/></body></body>"), NULL);
    if (r) {
        CHECK_EQ_INT(r->n_dof, 3);
        CHECK_EQ_STR(r->links[1].name, "body2");
        CHECK_EQ_STR(r->joints[0].name, "body2__joint0");
        CHECK_EQ_STR(r->links[2].name, "x__x__joint0");
        CHECK_EQ_STR(r->joints[2].name, "x__joint1");
        CHECK_EQ_STR(r->links[3].name, "x");
    }
    kin_robot_free(r);

    /* Hinges on the top body: it hangs below a root link "world", placed
     * where the file puts it. */
    {
        const char *t = "<mujoco><compiler angle=\"radian\"/><worldbody>\n"
                        "<body name=\"base\" pos=\"0 0 2\"><joint name=\"yaw\"/><body name=\"e\" pos=\"1 0 0\"/></body>\n"
                        "</worldbody></mujoco>";
        r = parse_ok(t, NULL);
        if (r) {
            CHECK_EQ_STR(r->links[0].name, "world");
            CHECK_EQ_STR(r->links[1].name, "base");
            CHECK_EQ_STR(r->name, "t");
            q = M_PI / 2;
            double w[3] = {0, 1, 2};
            if (link_pose(r, &q, "e", p, R) >= 0) CHECK(max_diff(p, w, 3) <= 1e-12);
        }
        kin_robot_free(r);
    }

    /* Several top bodies: the one with a free joint is the robot; static
     * ones (and their joints, geoms, children) are scenery. */
    {
        const char *t = "<mujoco model=\"m\"><worldbody>\n"
                        "<geom type=\"plane\" size=\"1 1 1\"/>\n"
                        "<body name=\"table\"><geom type=\"box\" size=\"1 1 1\"/><body name=\"leg\"/></body>\n"
                        "<frame pos=\"0 0 1\"><body name=\"bot\"><freejoint/><geom size=\"0.1\"/>"
                        "<body name=\"arm\"><joint/></body></body></frame>\n"
                        "</worldbody></mujoco>";
        r = parse_ok(t, NULL);
        if (r) {
            CHECK_EQ_INT(r->n_links, 2);
            CHECK_EQ_STR(r->links[0].name, "bot");
            CHECK_EQ_INT(r->n_geoms, 1);
            CHECK_EQ_STR(r->name, "m");
        }
        kin_robot_free(r);
    }
}

static void test_limits(void)
{
    struct kin_robot *r;
    /* autolimits (default true): a range makes a joint limited; degrees
     * for hinges by default; limited="false" wins; no range: unlimited. */
    r = parse_ok(DOC("", "<body name=\"a\"><joint name=\"h\" range=\"-90 45\"/>\n"
                         "<body name=\"b\"><joint name=\"free_turn\"/>\n"
                         "<body name=\"c\"><joint name=\"off\" limited=\"false\" range=\"-1 1\"/>\n"
                         "<body name=\"d\"><joint name=\"s\" type=\"slide\" range=\"-0.5 0.25\"/>\n"
                         "<body name=\"e\"><joint name=\"su\" type=\"slide\"/></body></body></body></body></body>"),
                 NULL);
    if (r) {
        const struct kin_joint *j = r->joints;
        CHECK_EQ_INT(r->n_dof, 5);
        CHECK_EQ_INT(j[0].type, KIN_JOINT_REVOLUTE);
        CHECK_EQ_INT(j[0].has_limits, 1);
        CHECK_NEAR(j[0].lower, -M_PI / 2, 1e-15);
        CHECK_NEAR(j[0].upper, M_PI / 4, 1e-15);
        CHECK_EQ_INT(j[1].type, KIN_JOINT_CONTINUOUS);
        CHECK_EQ_INT(j[1].has_limits, 0);
        CHECK(j[1].lower == -INFINITY && j[1].upper == INFINITY);
        CHECK_EQ_INT(j[2].type, KIN_JOINT_CONTINUOUS);
        CHECK_EQ_INT(j[3].type, KIN_JOINT_PRISMATIC);
        CHECK_EQ_INT(j[3].has_limits, 1);
        CHECK(j[3].lower == -0.5 && j[3].upper == 0.25);
        CHECK_EQ_INT(j[4].type, KIN_JOINT_PRISMATIC);
        CHECK_EQ_INT(j[4].has_limits, 0);
        /* The solver's float limits: finite. */
        CHECK(r->tree.lower[4] == -FLT_MAX && r->tree.upper[4] == FLT_MAX);
        CHECK(r->tree.lower[1] == -FLT_MAX);
        CHECK(r->tree.upper[0] == (float)(M_PI / 4));
        for (int i = 0; i < 5; i++) CHECK(j[i].velocity == 0);
    }
    kin_robot_free(r);

    /* Radians; limited="true"; autolimits off with limited given. */
    r = parse_ok(DOC("<compiler angle=\"radian\" autolimits=\"false\"/>",
                     "<body name=\"a\"><joint limited=\"true\" range=\"-1 2\" actuatorfrcrange=\"-30 20\"/></body>"),
                 NULL);
    if (r) {
        CHECK(r->joints[0].lower == -1 && r->joints[0].upper == 2);
        CHECK(r->joints[0].effort == 30);
    }
    kin_robot_free(r);

    expect_fail("autolimits off, range without limited",
                DOC("<compiler autolimits=\"false\"/>", "<body name=\"a\"><joint name=\"j\" range=\"-1 2\"/></body>"),
                RT_EPARSE, "t.xml:5", "joint 'j': range without limited", NULL);
    expect_fail("limited without range", DOC("", "<body name=\"a\">\n<joint name=\"j\" limited=\"true\"/></body>"),
                RT_EPARSE, "t.xml:6", "joint 'j': limited, but range lower 0 is not below upper 0", NULL);
    expect_fail("reversed range", DOC("", "<body name=\"a\"><joint name=\"j\" range=\"1 -1\"/></body>"), RT_EPARSE,
                "t.xml:5", "not below upper", NULL);
    expect_fail("bad limited", DOC("", "<body name=\"a\"><joint name=\"j\" limited=\"yes\"/></body>"), RT_EPARSE,
                "t.xml:5", "joint 'j': bad limited 'yes' (true, false or auto)", NULL);
}

static void test_defaults(void)
{
    const char *t = "<mujoco>\n"
                    "<compiler angle=\"radian\"/>\n"
                    "<default>\n"
                    "  <joint axis=\"1 0 0\" range=\"-1 1\"/>\n"
                    "  <geom type=\"box\" size=\"0.1 0.2 0.3\" contype=\"0\"/>\n"
                    "  <default class=\"a\">\n"
                    "    <joint range=\"-0.5 0.5\"/>\n"
                    "    <default class=\"b\">\n"
                    "      <joint axis=\"0 1 0\"/>\n"
                    "      <geom type=\"capsule\" size=\"0.05\"/>\n"
                    "    </default>\n"
                    "    <geom group=\"3\"/>\n"
                    "  </default>\n"
                    "  <default class=\"f\"><geom type=\"cylinder\" fromto=\"0 0 0 2 0 0\" size=\"0.1\"/></default>\n"
                    "</default>\n"
                    "<worldbody>\n"
                    "<body name=\"root\"><freejoint/>\n"
                    "  <body name=\"m\"><joint name=\"jm\"/><geom name=\"gm\"/></body>\n"
                    "  <body name=\"p\" childclass=\"b\"><joint name=\"jb\"/><geom name=\"gb\"/>\n"
                    "    <body name=\"p2\"><joint name=\"ja\" class=\"a\"/><joint name=\"jown\" axis=\"0 0 1\" range=\"-2 2\"/>"
                    "<geom name=\"gm2\" class=\"main\"/></body>\n"
                    "    <frame childclass=\"a\"><body name=\"p3\"><joint name=\"jf\"/></body></frame>\n"
                    "  </body>\n"
                    "  <body name=\"g\"><geom name=\"gf\" class=\"f\"/><geom name=\"gf2\" class=\"f\" fromto=\"0 0 0 0 0 1\" type=\"capsule\"/></body>\n"
                    "</body>\n"
                    "</worldbody>\n"
                    "</mujoco>\n";
    struct kin_robot *r = parse_ok(t, NULL);
    if (!r) return;
    int jm = kin_robot_joint_index(r, "jm"), jb = kin_robot_joint_index(r, "jb"), ja = kin_robot_joint_index(r, "ja");
    int jo = kin_robot_joint_index(r, "jown"), jf = kin_robot_joint_index(r, "jf");
    double ax[3] = {1, 0, 0}, ay[3] = {0, 1, 0}, az[3] = {0, 0, 1};
    CHECK(jm >= 0 && jb >= 0 && ja >= 0 && jo >= 0 && jf >= 0);
    if (jm < 0 || jb < 0 || ja < 0 || jo < 0 || jf < 0) goto done;
    /* main */
    CHECK(max_diff(r->joints[jm].axis, ax, 3) == 0);
    CHECK(r->joints[jm].upper == 1);
    /* childclass b: axis from b, range from a */
    CHECK(max_diff(r->joints[jb].axis, ay, 3) == 0);
    CHECK(r->joints[jb].upper == 0.5);
    /* class= wins over the inherited childclass */
    CHECK(max_diff(r->joints[ja].axis, ax, 3) == 0);
    CHECK(r->joints[ja].upper == 0.5);
    /* the element's own attributes win over every class */
    CHECK(max_diff(r->joints[jo].axis, az, 3) == 0);
    CHECK(r->joints[jo].upper == 2);
    /* a frame's childclass */
    CHECK(max_diff(r->joints[jf].axis, ax, 3) == 0);
    CHECK(r->joints[jf].upper == 0.5);

    /* geoms: box from main; capsule from b with size[0] replaced and the
     * rest inherited (MuJoCo reads fewer numbers over the class's);
     * class main explicitly; a class fromto. */
    CHECK_EQ_INT(r->n_geoms, 5);
    const struct kin_geom *g = r->geoms;
    CHECK_EQ_STR(g[0].name, "gm");
    CHECK_EQ_INT(g[0].type, KIN_GEOM_BOX);
    CHECK(g[0].size[0] == 0.1 && g[0].size[1] == 0.2 && g[0].size[2] == 0.3);
    CHECK_EQ_INT(g[0].contype, 0);
    CHECK_EQ_INT(g[0].conaffinity, 1);
    CHECK_EQ_STR(g[1].name, "gb");
    CHECK_EQ_INT(g[1].type, KIN_GEOM_CAPSULE);
    CHECK(g[1].size[0] == 0.05 && g[1].size[1] == 0.2 && g[1].size[2] == 0.3);
    /* class b was copied from a before a's <geom group> (MuJoCo reads a
     * class's own elements first, then its nested classes: b has it). */
    CHECK_EQ_INT(g[1].group, 3);
    CHECK_EQ_STR(g[2].name, "gm2");
    CHECK_EQ_INT(g[2].type, KIN_GEOM_BOX);
    CHECK_EQ_INT(g[2].group, 0);
    CHECK_EQ_INT(g[2].link, kin_robot_link_index(r, "p2"));
    /* fromto 0 0 0 -> 2 0 0: centre (1 0 0), z turned onto x (Ry(90)),
     * half length 1 in size[1]. */
    {
        double wp[3] = {1, 0, 0}, wq[4] = {0, sin(M_PI / 4), 0, cos(M_PI / 4)};
        CHECK_EQ_INT(g[3].type, KIN_GEOM_CYLINDER);
        CHECK(max_diff(g[3].pos, wp, 3) <= 1e-15);
        CHECK(max_diff(g[3].quat, wq, 4) <= 1e-15);
        CHECK_NEAR(g[3].size[1], 1.0, 1e-15);
        CHECK_NEAR(g[3].size[0], 0.1, 0);
        double wp2[3] = {0, 0, 0.5}, wq2[4] = {0, 0, 0, 1};
        CHECK_EQ_INT(g[4].type, KIN_GEOM_CAPSULE);
        CHECK(max_diff(g[4].pos, wp2, 3) <= 1e-15);
        CHECK(max_diff(g[4].quat, wq2, 4) <= 1e-15);
        CHECK_NEAR(g[4].size[1], 0.5, 1e-15);
    }
done:
    kin_robot_free(r);

    expect_fail("unknown class", DOC("", "<body name=\"a\">\n<joint name=\"j\" class=\"nope\"/></body>"), RT_EPARSE,
                "t.xml:6", "joint 'j': unknown class 'nope'", NULL);
    expect_fail("unknown childclass", DOC("", "<body name=\"a\" childclass=\"nope\"/>"), RT_EPARSE, "t.xml:5",
                "body 'a': unknown childclass 'nope'", NULL);
    expect_fail("class twice",
                "<mujoco>\n<default>\n<default class=\"x\"/>\n<default class=\"x\"/>\n</default>\n</mujoco>\n",
                RT_EPARSE, "t.xml:4", "default class 'x' defined twice (first at line 3)", NULL);
    expect_fail("nested default without class", "<mujoco>\n<default>\n<default>\n</default></default>\n</mujoco>\n",
                RT_EPARSE, "t.xml:3", "nested <default> without a class", NULL);
    expect_fail("bad default value",
                "<mujoco>\n<default>\n<default class=\"x\">\n<joint axis=\"1 0\"/>\n</default></default>\n</mujoco>\n",
                RT_EPARSE, "t.xml:4", "joint of default 'x': bad axis '1 0' (expected 3 numbers)", NULL);
}

/* ------------------------------------------------------------------------
 * Includes. */

static char tmpdir[256];

static void write_file(const char *name, const char *text, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(fwrite(text, 1, len, f), len);
    fclose(f);
}

static void write_str(const char *name, const char *text) { write_file(name, text, strlen(text)); }

static void remove_files(void)
{
    char path[600];
    const char *names[] = {"main.xml", "defaults.xml", "parts/leg.xml", "broken.xml", "big.xml", NULL};
    for (int i = 0; names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    for (int i = 0; i <= KIN_MJCF_MAX_INCLUDE_DEPTH + 1; i++) {
        snprintf(path, sizeof path, "%s/d%d.xml", tmpdir, i);
        unlink(path);
    }
    for (int i = 0; i < KIN_MJCF_MAX_FILES; i++) {
        snprintf(path, sizeof path, "%s/f%d.xml", tmpdir, i);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/parts", tmpdir);
    rmdir(path);
    rmdir(tmpdir);
}

static void test_include(void)
{
    const char *main_text = "<mujoco model=\"inc\">\n"
                            "<include file=\"defaults.xml\"/>\n"
                            "<worldbody>\n"
                            "<body name=\"root\"><freejoint/>\n"
                            "<include file=\"parts/leg.xml\"/>\n"
                            "</body>\n"
                            "</worldbody>\n"
                            "</mujoco>\n";
    struct kin_robot *r;
    struct rt_err err;
    char dir[300], path[400];
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_mjcf_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        CHECK(0);
        return;
    }
    snprintf(path, sizeof path, "%s/parts", tmpdir);
    CHECK_EQ_INT(mkdir(path, 0700), 0);
    write_str("defaults.xml", "<mujoco><compiler angle=\"radian\"/><default><joint axis=\"0 1 0\"/></default></mujoco>\n");
    write_str("parts/leg.xml", "<mujoco>\n<body name=\"thigh\">\n<joint name=\"hip\" range=\"-1 1\"/>\n"
                               "<body name=\"shin\"><joint name=\"knee\" range=\"0 2\"/></body></body>\n</mujoco>\n");
    write_str("main.xml", main_text);

    /* Resolved against base_dir: the defaults and the compiler apply to
     * the included bodies, which sit where the include was. */
    r = parse_ok(main_text, tmpdir);
    if (r) {
        double ay[3] = {0, 1, 0};
        CHECK_EQ_INT(r->n_dof, 2);
        CHECK_EQ_STR(r->links[1].name, "thigh");
        CHECK_EQ_STR(r->links[2].name, "shin");
        CHECK_EQ_INT(r->links[1].parent, 0);
        CHECK(r->joints[1].upper == 2); /* radians, from the included compiler */
        CHECK(max_diff(r->joints[0].axis, ay, 3) == 0);
    }
    kin_robot_free(r);
    /* Through kin_robot_load: the file's folder is the base. */
    snprintf(path, sizeof path, "%s/main.xml", tmpdir);
    r = NULL;
    CHECK_EQ_INT(kin_robot_load(path, &r, &err), RT_OK);
    if (r) CHECK_EQ_STR(r->name, "inc");
    kin_robot_free(r);

    /* Refused without a folder (the daemon's uploads). */
    expect_fail("include refused", main_text, RT_EPARSE, "t.xml:2",
                "include 'defaults.xml': includes are refused here", NULL);
    /* A missing file, an error inside an included file (its own name and
     * line), a file included twice. */
    {
        const char *t = "<mujoco>\n<include file=\"nope.xml\"/>\n</mujoco>";
        expect_fail_dir("include missing", t, strlen(t), tmpdir, RT_EIO, "t.xml:2", "include 'nope.xml': cannot open",
                        NULL);
    }
    write_str("broken.xml", "<mujoco>\n<worldbody>\n<body name=\"x\" pos=\"1 2\"/>\n</worldbody>\n</mujoco>\n");
    {
        const char *t = "<mujoco>\n<include file=\"broken.xml\"/>\n</mujoco>";
        expect_fail_dir("error in include", t, strlen(t), tmpdir, RT_EPARSE, "broken.xml:3",
                        "body 'x': bad pos '1 2' (expected 3 numbers)", NULL);
        t = "<mujoco>\n<include file=\"defaults.xml\"/>\n<include file=\"defaults.xml\"/>\n</mujoco>";
        expect_fail_dir("included twice", t, strlen(t), tmpdir, RT_EPARSE, "t.xml:3", "included twice", NULL);
        t = "<mujoco>\n<worldbody><include/></worldbody>\n</mujoco>";
        expect_fail_dir("include without file", t, strlen(t), tmpdir, RT_EPARSE, "t.xml:2", "<include> without a file",
                        NULL);
        t = "<mujoco>\n<include file=\"broken.xml\">\n</mujoco>";
        expect_fail_dir("XML error after include", t, strlen(t), tmpdir, RT_EPARSE, "t.xml:3", "XML:", NULL);
    }

    /* Include depth: the main file including d1, which includes d2, ..,
     * d8 is 8 deep and accepted; from d0, d8 would be the 9th and is
     * refused at d7's include. */
    for (int i = 0; i <= KIN_MJCF_MAX_INCLUDE_DEPTH; i++) {
        char name[32], text[200];
        snprintf(name, sizeof name, "d%d.xml", i);
        if (i < KIN_MJCF_MAX_INCLUDE_DEPTH)
            snprintf(text, sizeof text, "<mujoco>\n<include file=\"d%d.xml\"/>\n</mujoco>\n", i + 1);
        else
            snprintf(text, sizeof text, "<mujoco><worldbody><body name=\"deep\"/></worldbody></mujoco>\n");
        write_str(name, text);
    }
    {
        char t[200];
        snprintf(t, sizeof t, "<mujoco>\n<include file=\"d1.xml\"/>\n</mujoco>");
        r = parse_ok(t, tmpdir); /* d1 .. d8: 8 files deep */
        if (r) CHECK_EQ_STR(r->links[0].name, "deep");
        kin_robot_free(r);
        snprintf(t, sizeof t, "<mujoco>\n<include file=\"d0.xml\"/>\n</mujoco>");
        snprintf(dir, sizeof dir, "d%d.xml:2", KIN_MJCF_MAX_INCLUDE_DEPTH - 1);
        expect_fail_dir("include depth", t, strlen(t), tmpdir, RT_ELIMIT, dir, "includes nested deeper than 8", NULL);
    }

    /* Files: KIN_MJCF_MAX_FILES - 1 included files accepted, one more refused. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t cap = 64 + 32 * (size_t)KIN_MJCF_MAX_FILES, used = 0;
        char *t = malloc(cap), name[32], where[32];
        if (!t) break;
        used += (size_t)snprintf(t, cap, "<mujoco>\n");
        for (int i = 0; i < KIN_MJCF_MAX_FILES - 1 + extra; i++) {
            snprintf(name, sizeof name, "f%d.xml", i);
            if (!extra) write_str(name, i ? "<mujoco/>" : "<mujoco><worldbody><body name=\"f\"/></worldbody></mujoco>");
            used += (size_t)snprintf(t + used, cap - used, "<include file=\"%s\"/>\n", name);
        }
        used += (size_t)snprintf(t + used, cap - used, "</mujoco>\n");
        if (!extra) {
            r = parse_ok(t, tmpdir);
            kin_robot_free(r);
        } else {
            write_str(name, "<mujoco/>");
            snprintf(where, sizeof where, "t.xml:%d", 1 + KIN_MJCF_MAX_FILES);
            expect_fail_dir("files N+1", t, used, tmpdir, RT_ELIMIT, where, "more than 63 included files", NULL);
        }
        free(t);
    }

    /* Bytes: the main file and its includes together, at N and N + 1. */
    {
        const char *t = "<mujoco>\n<include file=\"big.xml\"/>\n</mujoco>";
        size_t n = KIN_URDF_MAX_BYTES - strlen(t);
        char *big = malloc(n + 1);
        const char *head = "<mujoco><worldbody><body name=\"b\"/></worldbody></mujoco><!--";
        CHECK(big != NULL);
        if (big) {
            memset(big, ' ', n);
            memcpy(big, head, strlen(head));
            memcpy(big + n - 3, "-->", 3);
            write_file("big.xml", big, n);
            r = parse_ok(t, tmpdir);
            CHECK(r != NULL);
            kin_robot_free(r);
            big[n - 3] = ' ';
            memcpy(big + n - 2, "-->", 3);
            write_file("big.xml", big, n + 1);
            expect_fail_dir("include bytes", t, strlen(t), tmpdir, RT_ELIMIT, "t.xml:2",
                            "the model and its includes exceed 16777216 bytes", NULL);
            free(big);
        }
    }
    remove_files();
}

/* ------------------------------------------------------------------------
 * Malformed input and limits. */

static void test_malformed(void)
{
    expect_fail("not mujoco", "<robot name=\"r\"/>", RT_EPARSE, "t.xml:1", "root element is <robot>, expected <mujoco>",
                NULL);
    expect_fail("no worldbody", "<mujoco model=\"m\">\n<compiler angle=\"radian\"/>\n</mujoco>", RT_EPARSE, "t.xml:1",
                "no <worldbody>", NULL);
    expect_fail("empty worldbody", "<mujoco>\n<worldbody><geom size=\"1\"/></worldbody>\n</mujoco>", RT_EPARSE,
                "t.xml:1", "<worldbody> has no <body>", NULL);
    expect_fail("XML syntax", "<mujoco>\n<worldbody>\n<body name=\"a\">\n</worldbody>\n</mujoco>", RT_EPARSE, "t.xml:4",
                "XML: mismatched tag", NULL);
    expect_fail("doctype", "<!DOCTYPE mujoco [<!ENTITY a \"b\">]>\n<mujoco/>", RT_EPARSE, "t.xml:1", "<!DOCTYPE>", NULL);
    expect_fail("empty", "", RT_EPARSE, "t.xml:1", "XML:", NULL);

    /* Numbers. */
    expect_fail("short pos", DOC("", "<body name=\"b\" pos=\"1 2\"/>"), RT_EPARSE, "t.xml:5",
                "body 'b': bad pos '1 2' (expected 3 numbers)", NULL);
    expect_fail("short quat", DOC("", "<body name=\"x\" quat=\"1 0 0\"/>"), RT_EPARSE, "t.xml:5",
                "body 'x': bad quat '1 0 0'", NULL);
    expect_fail("long quat", DOC("", "<body name=\"x\" quat=\"1 0 0 0 0\"/>"), RT_EPARSE, "t.xml:5",
                "body 'x': bad quat '1 0 0 0 0'", NULL);
    expect_fail("zero quat", DOC("", "<body name=\"x\" quat=\"0 0 0 0\"/>"), RT_EPARSE, "t.xml:5",
                "body 'x': bad quat '0 0 0 0' (zero-length", NULL);
    expect_fail("nan", DOC("", "<body name=\"x\" pos=\"0 nan 0\"/>"), RT_EPARSE, "t.xml:5", "bad pos '0 nan 0'", NULL);
    expect_fail("inf", DOC("", "<body name=\"x\" pos=\"0 1e999 0\"/>"), RT_EPARSE, "t.xml:5", "bad pos", NULL);
    expect_fail("hex", DOC("", "<body name=\"x\" pos=\"0 0x10 0\"/>"), RT_EPARSE, "t.xml:5", "bad pos", NULL);
    expect_fail("commas", DOC("", "<body name=\"x\" pos=\"0,0,0\"/>"), RT_EPARSE, "t.xml:5", "bad pos", NULL);
    expect_fail("bad euler", DOC("", "<body name=\"x\" euler=\"1 2 x\"/>"), RT_EPARSE, "t.xml:5",
                "body 'x': bad euler '1 2 x' (expected 3 numbers)", NULL);
    expect_fail("bad xyaxes", DOC("", "<body name=\"x\" xyaxes=\"1 0 0 2 0 0\"/>"), RT_EPARSE, "t.xml:5",
                "body 'x': bad xyaxes", "zero-length");
    expect_fail("bad zaxis", DOC("", "<body name=\"x\" zaxis=\"0 0 0\"/>"), RT_EPARSE, "t.xml:5", "bad zaxis", NULL);
    expect_fail("bad axisangle", DOC("", "<body name=\"x\" axisangle=\"0 0 1\"/>"), RT_EPARSE, "t.xml:5",
                "bad axisangle '0 0 1' (expected 4 numbers)", NULL);
    expect_fail("two orientations", DOC("", "<body name=\"x\" quat=\"1 0 0 0\" euler=\"0 0 0\"/>"), RT_EPARSE,
                "t.xml:5", "body 'x': both quat and euler given", NULL);
    expect_fail("joint axis zero", DOC("", "<body name=\"a\"><joint name=\"j\" axis=\"0 0 0\"/></body>"), RT_EPARSE,
                "t.xml:5", "joint 'j': axis too small", NULL);
    expect_fail("geom size", DOC("", "<geom name=\"g\" size=\"1 2 3 4\"/>"), RT_EPARSE, "t.xml:5",
                "geom 'g': bad size '1 2 3 4' (expected 1 to 3 numbers)", NULL);
    expect_fail("geom group", DOC("", "<geom group=\"1.5\"/>"), RT_EPARSE, "t.xml:5",
                "geom: bad group '1.5' (expected an integer)", NULL);
    expect_fail("geom type", DOC("", "<geom type=\"blob\"/>"), RT_EPARSE, "t.xml:5", "geom: unknown geom type 'blob'",
                NULL);
    expect_fail("fromto sphere", DOC("", "<geom fromto=\"0 0 0 1 0 0\"/>"), RT_EPARSE, "t.xml:5",
                "geom: fromto needs a capsule", NULL);
    expect_fail("fromto zero", DOC("", "<geom type=\"capsule\" fromto=\"1 0 0 1 0 0\"/>"), RT_EPARSE, "t.xml:5",
                "fromto has zero length", NULL);

    /* Joints. */
    expect_fail("unknown joint type", DOC("", "<body name=\"a\"><joint name=\"j\" type=\"spherical\"/></body>"),
                RT_EPARSE, "t.xml:5", "joint 'j': unknown joint type 'spherical'", NULL);
    expect_fail("ball", DOC("", "<body name=\"a\">\n<joint name=\"shoulder\" type=\"ball\"/></body>"), RT_EPARSE,
                "t.xml:6", "joint 'shoulder': ball joints are not supported", NULL);
    expect_fail("free below the top", DOC("", "<body name=\"a\">\n<freejoint name=\"f\"/></body>"), RT_EPARSE, "t.xml:6",
                "body 'a': a free joint is allowed only on a top-level body", NULL);
    expect_fail("free type below the top", DOC("", "<body name=\"a\">\n<joint type=\"free\"/></body>"), RT_EPARSE,
                "t.xml:6", "a free joint is allowed only on a top-level body", NULL);
    expect_fail("free and hinge", "<mujoco><worldbody>\n<body name=\"r\"><freejoint/>\n<joint name=\"h\"/></body>\n"
                                  "</worldbody></mujoco>",
                RT_EPARSE, "t.xml:2", "body 'r': a free joint must be the body's only joint", NULL);
    expect_fail("ref", DOC("", "<body name=\"a\"><joint name=\"j\" ref=\"0.5\"/></body>"), RT_EPARSE, "t.xml:5",
                "joint 'j': a nonzero ref (0.5) is not supported", NULL);
    expect_fail("joint in worldbody", "<mujoco><worldbody>\n<joint name=\"w\"/><body name=\"r\"/>\n</worldbody></mujoco>",
                RT_EPARSE, "t.xml:2", "joint 'w': a joint directly in <worldbody>", NULL);

    /* Structure. */
    expect_fail("two robots", "<mujoco><worldbody>\n<body name=\"a\"/>\n<body name=\"b\"/>\n</worldbody></mujoco>",
                RT_EPARSE, "t.xml:3", "2 bodies in <worldbody> (body 'a', body 'b', ...) and 0 with a free joint", NULL);
    expect_fail("duplicate body", DOC("", "<body name=\"a\"/>\n<body name=\"a\"/>"), RT_EPARSE, "t.xml:6",
                "duplicate link name 'a' (first at line 5)", NULL);
    expect_fail("made name taken", DOC("", "<body name=\"a\"><joint name=\"j\"/><joint name=\"k\"/></body>\n<body name=\"a__j\"/>"),
                RT_EPARSE, "t.xml:6", "duplicate link name 'a__j'", NULL);
    expect_fail("duplicate joint", DOC("", "<body name=\"a\"><joint name=\"j\"/></body>\n<body name=\"b\"><joint name=\"j\"/></body>"),
                RT_EPARSE, "t.xml:6", "duplicate joint name 'j' (first at line 5)", NULL);
    expect_fail("replicate", DOC("", "<replicate count=\"3\"/>"), RT_EPARSE, "t.xml:5", "<replicate> is not supported",
                NULL);
    expect_fail("compiler angle", "<mujoco>\n<compiler angle=\"gradian\"/>\n<worldbody/></mujoco>", RT_EPARSE, "t.xml:2",
                "compiler: bad angle 'gradian'", NULL);
    expect_fail("compiler eulerseq", "<mujoco>\n<compiler eulerseq=\"xyw\"/>\n<worldbody/></mujoco>", RT_EPARSE,
                "t.xml:2", "compiler: bad eulerseq 'xyw'", NULL);
    expect_fail("compiler coordinate", "<mujoco>\n<compiler coordinate=\"global\"/>\n<worldbody/></mujoco>", RT_EPARSE,
                "t.xml:2", "coordinate 'global' is not supported", NULL);
    expect_fail("compiler autolimits", "<mujoco>\n<compiler autolimits=\"1\"/>\n<worldbody/></mujoco>", RT_EPARSE,
                "t.xml:2", "compiler: bad autolimits '1'", NULL);

    /* Skipped without being read: assets, actuators, sensors, sites. */
    {
        struct kin_robot *r = parse_ok("<mujoco><asset><mesh name=\"m\" file=\"x.stl\"/><bogus a=\"b\"/></asset>\n"
                                       "<worldbody><body name=\"r\"><site pos=\"bad\"/><inertial pos=\"bad\"/>"
                                       "<camera/><body name=\"c\"><joint name=\"j\"/></body></body></worldbody>\n"
                                       "<actuator><motor joint=\"j\"/></actuator><equality><joint joint1=\"j\" joint2=\"j\"/></equality>"
                                       "</mujoco>",
                                       NULL);
        if (r) CHECK_EQ_INT(r->n_dof, 1);
        kin_robot_free(r);
    }
}

/* A model with a root and `n` child bodies, each with `joints` hinges,
 * plus `extra` more hinges on the last body (malloc'd). */
static char *make_bodies(int n, int joints, int extra, size_t *len)
{
    size_t cap = 256 + (size_t)n * (64 + 24 * (size_t)joints) + 24 * (size_t)extra, used = 0;
    char *t = malloc(cap);
    if (!t) return NULL;
    used += (size_t)snprintf(t + used, cap - used, "<mujoco>\n<worldbody>\n<body name=\"r\"><freejoint/>\n");
    for (int i = 0; i < n; i++) {
        used += (size_t)snprintf(t + used, cap - used, "<body name=\"b%d\">", i);
        for (int k = 0; k < joints + (i == n - 1 ? extra : 0); k++)
            used += (size_t)snprintf(t + used, cap - used, "<joint name=\"j%d_%d\"/>", i, k);
        used += (size_t)snprintf(t + used, cap - used, "</body>\n");
    }
    used += (size_t)snprintf(t + used, cap - used, "</body>\n</worldbody>\n</mujoco>\n");
    *len = used;
    return t;
}

static void test_limits_n(void)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    size_t len;
    char *t, where[32];

    /* Bodies: KIN_MAX_LINKS (the root and 1023 children) accepted, one more refused. */
    t = make_bodies(KIN_MAX_LINKS - 1, 1, 0, &len);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(kin_robot_parse_mjcf(t, len, "t.xml", NULL, &r, &err), RT_OK);
        if (r) CHECK_EQ_INT(r->n_links, KIN_MAX_LINKS);
        kin_robot_free(r);
        free(t);
    }
    t = make_bodies(KIN_MAX_LINKS, 0, 0, &len);
    if (t) {
        snprintf(where, sizeof where, "t.xml:%d", 3 + KIN_MAX_LINKS);
        expect_fail_dir("bodies N+1", t, len, NULL, RT_ELIMIT, where, "more than 1024 bodies", NULL);
        free(t);
    }
    /* Links: 511 two-hinge bodies make 1 + 1022 links; one more hinge makes
     * 1024, two more 1025. */
    t = make_bodies(511, 2, 1, &len);
    if (t) {
        CHECK_EQ_INT(kin_robot_parse_mjcf(t, len, "t.xml", NULL, &r, &err), RT_OK);
        if (r) {
            CHECK_EQ_INT(r->n_links, KIN_MAX_LINKS);
            CHECK_EQ_INT(r->n_dof, KIN_MAX_LINKS - 1);
        }
        kin_robot_free(r);
        free(t);
    }
    t = make_bodies(511, 2, 2, &len);
    if (t) {
        snprintf(where, sizeof where, "t.xml:%d", 3 + 511);
        expect_fail_dir("links N+1", t, len, NULL, RT_ELIMIT, where, "more than 1024 links", NULL);
        free(t);
    }

    /* Geoms: KIN_MAX_GEOMS accepted, one more refused. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t cap = 256 + 24 * (size_t)(KIN_MAX_GEOMS + 1), used = 0;
        t = malloc(cap);
        if (!t) break;
        used += (size_t)snprintf(t, cap, "<mujoco>\n<worldbody>\n<body name=\"r\">\n");
        for (int i = 0; i < KIN_MAX_GEOMS + extra; i++) used += (size_t)snprintf(t + used, cap - used, "<geom size=\"1\"/>\n");
        used += (size_t)snprintf(t + used, cap - used, "</body></worldbody></mujoco>\n");
        if (!extra) {
            CHECK_EQ_INT(kin_robot_parse_mjcf(t, used, "t.xml", NULL, &r, &err), RT_OK);
            if (r) CHECK_EQ_INT(r->n_geoms, KIN_MAX_GEOMS);
            kin_robot_free(r);
        } else {
            snprintf(where, sizeof where, "t.xml:%d", 4 + KIN_MAX_GEOMS);
            expect_fail_dir("geoms N+1", t, used, NULL, RT_ELIMIT, where, "more than 4096 geoms", NULL);
        }
        free(t);
    }

    /* Default classes. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t cap = 256 + 40 * (size_t)(KIN_MJCF_MAX_CLASSES + 1), used = 0;
        t = malloc(cap);
        if (!t) break;
        used += (size_t)snprintf(t, cap, "<mujoco>\n<default>\n");
        for (int i = 0; i < KIN_MJCF_MAX_CLASSES - 1 + extra; i++)
            used += (size_t)snprintf(t + used, cap - used, "<default class=\"c%d\"/>\n", i);
        used += (size_t)snprintf(t + used, cap - used,
                                 "</default>\n<worldbody><body name=\"r\"><geom class=\"c7\"/></body></worldbody></mujoco>\n");
        if (!extra) {
            CHECK_EQ_INT(kin_robot_parse_mjcf(t, used, "t.xml", NULL, &r, &err), RT_OK);
            kin_robot_free(r);
        } else {
            snprintf(where, sizeof where, "t.xml:%d", 2 + KIN_MJCF_MAX_CLASSES);
            expect_fail_dir("classes N+1", t, used, NULL, RT_ELIMIT, where, "more than 1024 <default> classes", NULL);
        }
        free(t);
    }

    /* Nesting: mujoco, worldbody, the root and frames down to depth N. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t cap = 256 + 20 * (size_t)KIN_MJCF_MAX_DEPTH, used = 0;
        int frames = KIN_MJCF_MAX_DEPTH - 3 + extra;
        t = malloc(cap);
        if (!t) break;
        used += (size_t)snprintf(t, cap, "<mujoco><worldbody><body name=\"r\">\n");
        for (int i = 0; i < frames; i++) used += (size_t)snprintf(t + used, cap - used, "<frame>\n");
        for (int i = 0; i < frames; i++) used += (size_t)snprintf(t + used, cap - used, "</frame>");
        used += (size_t)snprintf(t + used, cap - used, "</body></worldbody></mujoco>\n");
        if (!extra) {
            CHECK_EQ_INT(kin_robot_parse_mjcf(t, used, "t.xml", NULL, &r, &err), RT_OK);
            kin_robot_free(r);
        } else {
            snprintf(where, sizeof where, "t.xml:%d", 1 + frames);
            expect_fail_dir("depth N+1", t, used, NULL, RT_ELIMIT, where, "elements nested deeper than 256", NULL);
        }
        free(t);
    }

    /* Kept elements: mujoco, worldbody, the root and flat frames up to N. */
    for (int extra = 0; extra <= 1; extra++) {
        int frames = KIN_MJCF_MAX_ELEMENTS - 3 + extra;
        size_t cap = 256 + 10 * (size_t)frames, used = 0;
        t = malloc(cap);
        if (!t) break;
        used += (size_t)snprintf(t, cap, "<mujoco>\n<worldbody>\n<body name=\"r\">\n");
        for (int i = 0; i < frames; i++) used += (size_t)snprintf(t + used, cap - used, "<frame/>\n");
        used += (size_t)snprintf(t + used, cap - used, "</body></worldbody></mujoco>\n");
        if (!extra) {
            CHECK_EQ_INT(kin_robot_parse_mjcf(t, used, "t.xml", NULL, &r, &err), RT_OK);
            kin_robot_free(r);
        } else {
            snprintf(where, sizeof where, "t.xml:%d", 3 + frames);
            expect_fail_dir("elements N+1", t, used, NULL, RT_ELIMIT, where, "more than 16384 model elements", NULL);
        }
        free(t);
    }

    /* The deepest body chain the nesting allows, one hinge each (the
     * innermost <joint> at depth N). */
    {
        int n = KIN_MJCF_MAX_DEPTH - 4;
        size_t cap = 256 + 48 * (size_t)n, used = 0;
        t = malloc(cap);
        if (t) {
            used += (size_t)snprintf(t, cap, "<mujoco><worldbody><body name=\"r\">\n");
            for (int i = 0; i < n; i++) used += (size_t)snprintf(t + used, cap - used, "<body name=\"c%d\"><joint/>\n", i);
            for (int i = 0; i < n; i++) used += (size_t)snprintf(t + used, cap - used, "</body>");
            used += (size_t)snprintf(t + used, cap - used, "</body></worldbody></mujoco>\n");
            CHECK_EQ_INT(kin_robot_parse_mjcf(t, used, "t.xml", NULL, &r, &err), RT_OK);
            if (r) {
                CHECK_EQ_INT(r->n_links, n + 1);
                CHECK_EQ_INT(r->links[n].parent, n - 1);
            }
            kin_robot_free(r);
            free(t);
        }
    }

    /* Bytes: KIN_URDF_MAX_BYTES accepted, one more refused before parsing. */
    {
        size_t n = KIN_URDF_MAX_BYTES;
        const char *head = "<mujoco><worldbody><body name=\"b\"/></worldbody></mujoco>";
        t = malloc(n + 1);
        if (t) {
            memset(t, '\n', n + 1);
            memcpy(t, head, strlen(head));
            CHECK_EQ_INT(kin_robot_parse_mjcf(t, n, "t.xml", NULL, &r, &err), RT_OK);
            kin_robot_free(r);
            expect_fail_dir("bytes N+1", t, n + 1, NULL, RT_ELIMIT, "t.xml", "MJCF larger than 16777216 bytes", NULL);
            free(t);
        }
    }

    /* Names: KIN_MAX_NAME - 1 bytes accepted, one more refused; a made name
     * (BODY__fixed) counts too. */
    {
        char name[KIN_MAX_NAME + 2], text[KIN_MAX_NAME * 2 + 256];
        memset(name, 'n', sizeof name);
        name[KIN_MAX_NAME - 1] = 0;
        snprintf(text, sizeof text, DOC("", "<body name=\"%s\"><joint name=\"%s\"/></body>"), name, name);
        r = parse_ok(text, NULL);
        if (r) CHECK_EQ_INT(strlen(r->links[1].name), KIN_MAX_NAME - 1);
        kin_robot_free(r);
        name[KIN_MAX_NAME - 1] = 'n';
        name[KIN_MAX_NAME] = 0;
        snprintf(text, sizeof text, DOC("", "<body name=\"%s\"><joint name=\"j\"/></body>"), name);
        expect_fail("body name N+1", text, RT_ELIMIT, "t.xml:5", "body name longer than 127 bytes", NULL);
        snprintf(text, sizeof text, DOC("", "<body name=\"b\"><joint name=\"%s\"/></body>"), name);
        expect_fail("joint name N+1", text, RT_ELIMIT, "t.xml:5", "joint name longer than 127 bytes", NULL);
        name[KIN_MAX_NAME - 1 - 7] = 0; /* + "__fixed" = 127 */
        snprintf(text, sizeof text, DOC("", "<body name=\"%s\"/>"), name);
        r = parse_ok(text, NULL);
        if (r) CHECK_EQ_INT(strlen(r->joints[0].name), KIN_MAX_NAME - 1);
        kin_robot_free(r);
        name[KIN_MAX_NAME - 1 - 7] = 'n';
        name[KIN_MAX_NAME - 1 - 6] = 0;
        snprintf(text, sizeof text, DOC("", "<body name=\"%s\"/>"), name);
        expect_fail("made name N+1", text, RT_ELIMIT, "t.xml:5", "fixed joint name BODY__fixed longer than 127 bytes",
                    NULL);
    }
}

/* ------------------------------------------------------------------------
 * The reader choice. */

static void test_dispatch(void)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    const char *urdf = "<?xml version=\"1.0\"?>\n<!-- a robot -->\n<robot name=\"u\"><link name=\"a\"/></robot>";
    const char *mjcf = "\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- <robot> -->\n<mujoco model=\"m\"><worldbody>"
                       "<body name=\"a\"/></worldbody></mujoco>";
    CHECK_EQ_INT(kin_robot_parse(urdf, strlen(urdf), "x", NULL, &r, &err), RT_OK);
    if (r) CHECK_EQ_STR(r->name, "u");
    kin_robot_free(r);
    CHECK_EQ_INT(kin_robot_parse(mjcf, strlen(mjcf), "x", NULL, &r, &err), RT_OK);
    if (r) CHECK_EQ_STR(r->name, "m");
    kin_robot_free(r);
    rt_err_clear(&err);
    CHECK_EQ_INT(kin_robot_parse("\n\n<sdf/>", 8, "x.sdf", NULL, &r, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "x.sdf:3");
    CHECK(strstr(err.msg, "root element is <sdf>, expected <robot> (URDF) or <mujoco> (MJCF)") != NULL);
    CHECK(r == NULL);
    /* Garbage goes to the URDF reader, which names the XML error. */
    CHECK_EQ_INT(kin_robot_parse("{}", 2, "x", NULL, &r, &err), RT_EPARSE);
    CHECK(strstr(err.msg, "XML") != NULL);
    /* The MJCF reader's own errors come through, include refusal too. */
    const char *inc = "<mujoco>\n<include file=\"a.xml\"/></mujoco>";
    CHECK_EQ_INT(kin_robot_parse(inc, strlen(inc), "up.xml", NULL, &r, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "up.xml:2");
    /* A name ending in .xml is a path, never a bundled name. */
    CHECK_EQ_INT(kin_robot_load("no-such-robot.xml", &r, &err), RT_EIO);
    CHECK_EQ_INT(kin_robot_load("no-such-robot", &r, &err), RT_ENOTFOUND);
    CHECK(strstr(err.msg, ".urdf or .xml path") != NULL);
    /* The name falls back to the file name without its extension. */
    const char *anon = "<mujoco><worldbody><body name=\"a\"/></worldbody></mujoco>";
    CHECK_EQ_INT(kin_robot_parse_mjcf(anon, strlen(anon), "dir/robot.v2.xml", NULL, &r, &err), RT_OK);
    if (r) CHECK_EQ_STR(r->name, "robot.v2");
    kin_robot_free(r);
    /* inspect works on an MJCF robot. */
    CHECK_EQ_INT(kin_robot_parse_mjcf(anon, strlen(anon), "x.xml", NULL, &r, &err), RT_OK);
    if (r) {
        char *json = kin_robot_inspect_json(r);
        CHECK(json && strstr(json, "\"name\":\"x\"") && strstr(json, "\"dof\":0"));
        free(json);
    }
    kin_robot_free(r);
}

int main(void)
{
    test_orientations();
    test_joint_pos();
    test_limits();
    test_defaults();
    test_include();
    test_malformed();
    test_limits_n();
    test_dispatch();
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) compare_pair(&pairs[i]);
    test_real_details();
    return test_report("test_mjcf");
}
