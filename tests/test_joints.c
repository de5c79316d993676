/* test_joints.c -- joint-position sources (kinematics/joints.c and the
 * RTG_SRC_JOINTS recipe): the CSV reader and its errors at the line; the
 * SMPL tree; .npy and .npz as numpy writes them (savez, savez_compressed,
 * unicode and byte names, fps, parents; pickled names refused); and the
 * check the issue asks for: the joint world positions of a shared BVH clip
 * (kin_clip_global), written as CSV, .npz and .npy, retarget onto the G1
 * through `retarget solve` with the position error of the BVH itself; the
 * same positions under SMPL joint names retarget with no profile given
 * (the recognizer maps them). The numpy parts skip alone when
 * /usr/bin/python3 cannot import numpy. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../clients/cli.h"
#include "../kinematics/bvh.h"
#include "../kinematics/joints.h"
#include "../retarget/skeleton.h"
#include "test.h"

static char dir[64];

static void test_csv(void)
{
    struct kin_joints *j = NULL;
    struct rt_err err;
    const char *ok = "frame,pelvis_x,pelvis_y,pelvis_z,left_hip_x,left_hip_y,left_hip_z\r\n"
                     "0,0,0,0.9,0.1,0,0.85\r\n\r\n1,0.01,0,0.9,0.11,0,0.85\r\n";
    CHECK(kin_joints_is_csv(ok, strlen(ok)));
    CHECK(!kin_joints_is_csv("root_x,root_y,root_z,root_qx\n", 29));
    CHECK(!kin_joints_is_csv("root_x,root_y,root_z,root_qx,root_qy,root_qz\n", 42));
    CHECK(!kin_joints_is_csv("1,2,3\n", 6));
    CHECK_EQ_INT(kin_joints_parse_csv(ok, strlen(ok), "j.csv", &j, &err), RT_OK);
    CHECK(j && j->n_joints == 2 && j->n_frames == 2);
    if (j) {
        CHECK_EQ_STR(j->names[0], "pelvis");
        CHECK_EQ_STR(j->names[1], "left_hip");
        CHECK_EQ_INT(j->parent[0], -1);
        CHECK_EQ_INT(j->parent[1], 0);
        CHECK(j->pos[6] == 0.01 && j->pos[11] == 0.85);
    }
    kin_joints_free(j);
    const char *bad_row = "a_x,a_y,a_z\n1,2,3\n1,2\n";
    CHECK_EQ_INT(kin_joints_parse_csv(bad_row, strlen(bad_row), "j.csv", &j, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "j.csv:3");
    CHECK(strstr(err.msg, "row has 2 values, expected 3") != NULL);
    const char *bad_hdr = "a_x,a_y,b_z\n1,2,3\n";
    CHECK_EQ_INT(kin_joints_parse_csv(bad_hdr, strlen(bad_hdr), "j.csv", &j, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "j.csv:1");
    CHECK(strstr(err.msg, "'b_z' should be 'a_z'") != NULL);
    const char *bad_num = "a_x,a_y,a_z\n1,2,x\n";
    CHECK_EQ_INT(kin_joints_parse_csv(bad_num, strlen(bad_num), "j.csv", &j, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "j.csv:2");
    const char *dup = "a_x,a_y,a_z,a_x,a_y,a_z\n1,2,3,4,5,6\n";
    CHECK_EQ_INT(kin_joints_parse_csv(dup, strlen(dup), "j.csv", &j, &err), RT_EINVAL);
    CHECK(strstr(err.msg, "repeated") != NULL);
    CHECK_EQ_INT(kin_joints_parse_csv("a_x,a_y,a_z\n", 12, "j.csv", &j, &err), RT_EINVAL);
    CHECK(j == NULL);
    /* An .npy without names is refused by kin_joints_parse(). */
    CHECK_EQ_INT(kin_joints_parse("\x93NUMPY\x01\x00", 8, NULL, 0, "j.npy", &j, &err), RT_EINVAL);
}

static void test_smpl_tree(void)
{
    CHECK(kin_joints_smpl_parent("pelvis") == NULL && kin_joints_is_smpl("pelvis"));
    CHECK_EQ_STR(kin_joints_smpl_parent("left_knee"), "left_hip");
    CHECK_EQ_STR(kin_joints_smpl_parent("right_wrist"), "right_elbow");
    CHECK_EQ_STR(kin_joints_smpl_parent("spine3"), "spine2");
    CHECK_EQ_STR(kin_joints_smpl_parent("left_shoulder"), "left_collar");
    CHECK_EQ_STR(kin_joints_smpl_parent("left_index1"), "left_wrist");
    CHECK_EQ_STR(kin_joints_smpl_parent("right_thumb3"), "right_thumb2");
    CHECK(kin_joints_smpl_parent("left_index4") == NULL && !kin_joints_is_smpl("Hips"));
}

/* CMU joint -> SMPL joint, for the SMPL-named copy of a CMU clip. */
static const char *const cmu_smpl[][2] = {
    {"Hips", "pelvis"},           {"LeftUpLeg", "left_hip"},     {"RightUpLeg", "right_hip"},
    {"LowerBack", "spine1"},      {"LeftLeg", "left_knee"},      {"RightLeg", "right_knee"},
    {"Spine", "spine2"},          {"LeftFoot", "left_ankle"},    {"RightFoot", "right_ankle"},
    {"Spine1", "spine3"},         {"LeftToeBase", "left_foot"},  {"RightToeBase", "right_foot"},
    {"Neck1", "neck"},            {"LeftShoulder", "left_collar"}, {"RightShoulder", "right_collar"},
    {"Head", "head"},             {"LeftArm", "left_shoulder"},  {"RightArm", "right_shoulder"},
    {"LeftForeArm", "left_elbow"}, {"RightForeArm", "right_elbow"}, {"LeftHand", "left_wrist"},
    {"RightHand", "right_wrist"},
};
#define N_SMPL 22

/* Writes the clip's joint world positions (file units and axes, as
 * kin_clip_global gives them without conversion): NAME.csv with every
 * joint and End Site under its own name, and, for `smpl`, smpl.csv with
 * the 22 SMPL joints only, in SMPL's order. Returns the frame count. */
static int write_positions(const struct kin_clip *c, const char *name)
{
    int n_all = c->n_joints + c->n_end_sites, idx[N_SMPL];
    double *pos = malloc((size_t)n_all * 3 * sizeof *pos), *rot = malloc((size_t)n_all * 9 * sizeof *rot);
    char path[256];
    for (int k = 0; k < N_SMPL; k++) idx[k] = kin_clip_find_joint(c, cmu_smpl[k][0]);
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    FILE *f = fopen(path, "w");
    snprintf(path, sizeof path, "%s/smpl.csv", dir);
    FILE *g = fopen(path, "w");
    for (int j = 0; f && j < n_all; j++)
        fprintf(f, "%s%s_x,%s_y,%s_z", j ? "," : "", c->joints[j].name, c->joints[j].name, c->joints[j].name);
    for (int k = 0; g && k < N_SMPL; k++) fprintf(g, "%s%s_x,%s_y,%s_z", k ? "," : "", cmu_smpl[k][1], cmu_smpl[k][1], cmu_smpl[k][1]);
    if (f) fputc('\n', f);
    if (g) fputc('\n', g);
    for (int t = 0; f && g && t < c->n_frames; t++) {
        kin_clip_global(c, t, NULL, pos, rot);
        for (int j = 0; j < 3 * n_all; j++) fprintf(f, "%s%.17g", j ? "," : "", pos[j]);
        for (int k = 0; k < N_SMPL; k++)
            fprintf(g, "%s%.17g,%.17g,%.17g", k ? "," : "", pos[3 * idx[k]], pos[3 * idx[k] + 1], pos[3 * idx[k] + 2]);
        fputc('\n', f);
        fputc('\n', g);
    }
    if (f) fclose(f);
    if (g) fclose(g);
    free(pos);
    free(rot);
    return c->n_frames;
}

static int solve(const char *src, const char *out, const char *x1, const char *x2)
{
    char outdir[256];
    char *argv[16];
    int argc = 0;
    snprintf(outdir, sizeof outdir, "%s/%s", dir, out);
    argv[argc++] = (char *)src;
    argv[argc++] = "--robot";
    argv[argc++] = "g1";
    argv[argc++] = "-o";
    argv[argc++] = outdir;
    argv[argc++] = "--quiet";
    argv[argc++] = "--backend";
    argv[argc++] = "cpu";
    if (x1) argv[argc++] = (char *)x1;
    if (x2) argv[argc++] = (char *)x2;
    argv[argc] = NULL;
    return cli_solve(argc, argv);
}

/* The report of DIR/OUT/NAME: position error mean and max, limit
 * violations, profile; 0 when it cannot be read. */
static int report(const char *out, const char *name, double *mean, double *mx, int *viol, char *profile, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/%s.report.json", dir, out, name);
    char *text = test_slurp(path, NULL);
    cJSON *j = text ? cJSON_Parse(text) : NULL, *q = cJSON_GetObjectItemCaseSensitive(j, "quality");
    cJSON *pe = cJSON_GetObjectItemCaseSensitive(q, "position_error_m");
    cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "profile");
    int ok = j && pe;
    if (ok) {
        *mean = cJSON_GetObjectItemCaseSensitive(pe, "mean")->valuedouble;
        *mx = cJSON_GetObjectItemCaseSensitive(pe, "max")->valuedouble;
        *viol = cJSON_GetObjectItemCaseSensitive(q, "joint_limit_violations")->valueint;
        snprintf(profile, cap, "%s", cJSON_IsString(p) ? p->valuestring : "");
    }
    cJSON_Delete(j);
    free(text);
    return ok;
}

static int have_numpy(void) { return system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0; }

/* CSV -> .npz / .npy with numpy (the forms users write). */
static int numpy_convert(const char *name)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && /usr/bin/python3 -c \"\n"
             "import numpy as np\n"
             "h = open('%s.csv').readline().strip().split(',')\n"
             "names = [c[:-2] for c in h[0::3]]\n"
             "a = np.loadtxt('%s.csv', delimiter=',', skiprows=1).reshape(-1, len(names), 3)\n"
             "np.savez('%s_npz.npz', joints=a.astype(np.float32), joint_names=np.array(names), fps=np.float64(120.0))\n"
             "np.savez_compressed('%s_zc.npz', positions=a, joint_names=np.array(names, dtype='S'), fps=[120])\n"
             "np.save('%s_npy.npy', a)\n"
             "open('%s_npy.txt', 'w').write('\\\\n'.join(names) + '\\\\n')\n"
             "np.savez('pickled.npz', joints=a[:2], joint_names=np.array(names, dtype=object))\n"
             "np.savez('shape.npz', joints=a[:2].reshape(2, -1), joint_names=np.array(names))\n"
             "\"",
             dir, name, name, name, name, name, name);
    return system(cmd);
}

static void test_roundtrip(void)
{
    char path[512];
    struct kin_clip *c = NULL;
    struct rt_err err;
    double m0, x0, m1, x1;
    int v0, v1;
    char p0[64], p1[64];
    snprintf(path, sizeof path, "%s/clips/cmu_12_01_walk.bvh", test_data_dir());
    if (kin_bvh_load(path, &c, &err) != RT_OK) TEST_SKIP("no ../shared/data/clips (set RT_SHARED_DATA)");
    /* Every 4th frame: 131 frames at 30 fps keep the test short. */
    int keep = 0;
    for (int t = 0; t < c->n_frames; t += 4, keep++)
        memmove(c->motion + (size_t)keep * c->n_channels, c->motion + (size_t)t * c->n_channels,
                (size_t)c->n_channels * sizeof *c->motion);
    c->n_frames = keep;
    c->frame_time *= 4;
    write_positions(c, "walk");
    char src[256], bvh_path[512];
    snprintf(bvh_path, sizeof bvh_path, "%s/clips/cmu_12_01_walk.bvh", test_data_dir());
    /* The BVH reference at the same rate: the whole clip, every 4th frame,
     * written back as BVH text from the kept rows. */
    char *orig = test_slurp(bvh_path, NULL);
    CHECK(orig != NULL);
    if (orig) {
        char *motion = strstr(orig, "MOTION");
        snprintf(path, sizeof path, "%s/walk.bvh", dir);
        FILE *f = fopen(path, "w");
        if (f && motion) {
            fwrite(orig, 1, (size_t)(motion - orig), f);
            fprintf(f, "MOTION\nFrames: %d\nFrame Time: %.17g\n", c->n_frames, c->frame_time);
            for (int t = 0; t < c->n_frames; t++)
                for (int k = 0; k < c->n_channels; k++)
                    fprintf(f, "%.17g%s", c->motion[(size_t)t * c->n_channels + k], k + 1 < c->n_channels ? " " : "\n");
        }
        if (f) fclose(f);
        free(orig);
    }
    CHECK_EQ_INT(solve(path, "o_bvh", NULL, NULL), 0);
    CHECK(report("o_bvh", "walk", &m0, &x0, &v0, p0, sizeof p0));
    /* CSV of the clip's own names: the bundled cmu_g1 profile by name. */
    snprintf(src, sizeof src, "%s/walk.csv", dir);
    CHECK_EQ_INT(solve(src, "o_csv", "--fps", "30"), 0);
    CHECK(report("o_csv", "walk", &m1, &x1, &v1, p1, sizeof p1));
    printf("bvh: position error mean %.5f max %.5f m (%s); csv: mean %.5f max %.5f m (%s)\n", m0, x0, p0, m1, x1, p1);
    CHECK_EQ_STR(p1, p0);
    CHECK_NEAR(m1, m0, 1e-4);
    CHECK_NEAR(x1, x0, 1e-3);
    CHECK_EQ_INT(v1, 0);
    /* The up axis given as detection finds it (y): the same solve; the
     * unit given (--units cmu, the file's own, where detection reads the
     * size from the body): the thresholds in metres move a little, the
     * quality stays; a wrong up axis is another solve. */
    double m3 = -1, x3 = -1;
    int v3;
    char p3[64];
    CHECK_EQ_INT(solve(src, "o_given", "--up", "y"), 0);
    CHECK(report("o_given", "walk", &m3, &x3, &v3, p3, sizeof p3));
    CHECK(m3 == m1 && x3 == x1);
    CHECK_EQ_INT(solve(src, "o_cmu", "--units", "cmu"), 0);
    CHECK(report("o_cmu", "walk", &m3, &x3, &v3, p3, sizeof p3));
    printf("walk.csv --units cmu: position error mean %.5f m\n", m3);
    CHECK_NEAR(m3, m1, 2e-3);
    CHECK_EQ_INT(v3, 0);
    CHECK_EQ_INT(solve(src, "o_upz", "--up", "z"), 0);
    CHECK(report("o_upz", "walk", &m3, &x3, &v3, p3, sizeof p3));
    printf("walk.csv --up z (wrong): position error mean %.5f m\n", m3);
    CHECK(m3 != m1);
    /* SMPL names, no profile: recognized, an automatic mapping. The
     * recognizer reads the skeleton view: SMPL's ankle is the foot, its
     * "foot" the toe, its shoulder the upper arm, its collar the clavicle. */
    snprintf(src, sizeof src, "%s/smpl.csv", dir);
    {
        size_t len = 0;
        char *text = test_slurp(src, &len);
        struct kin_joints *jp = NULL;
        struct kin_clip *sk = NULL;
        struct rtg_skeleton_map m;
        CHECK(text && kin_joints_parse_csv(text, len, "smpl.csv", &jp, &err) == RT_OK);
        CHECK(jp && kin_joints_skeleton(jp, &sk, NULL, &err) == RT_OK);
        CHECK(sk && rtg_skeleton_recognize(sk, &m, &err) == RT_OK);
        if (sk) {
            static const struct { int role; const char *name; } want[] = {
                {RTG_ROLE_PELVIS, "pelvis"},          {RTG_ROLE_CHEST, "spine3"},
                {RTG_ROLE_L_THIGH, "left_hip"},       {RTG_ROLE_L_SHIN, "left_knee"},
                {RTG_ROLE_L_FOOT, "left_ankle"},      {RTG_ROLE_L_TOE, "left_foot"},
                {RTG_ROLE_L_CLAVICLE, "left_collar"}, {RTG_ROLE_L_UPPER_ARM, "left_shoulder"},
                {RTG_ROLE_L_FOREARM, "left_elbow"},   {RTG_ROLE_L_HAND, "left_wrist"},
                {RTG_ROLE_R_FOOT, "right_ankle"},     {RTG_ROLE_R_HAND, "right_wrist"},
            };
            for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
                int i = m.joint[want[k].role];
                CHECK_EQ_STR(i >= 0 ? sk->joints[i].name : "(none)", want[k].name);
            }
        }
        kin_clip_free(sk);
        kin_joints_free(jp);
        free(text);
    }
    CHECK_EQ_INT(solve(src, "o_smpl", "--fps", "30"), 0);
    double m2 = -1, x2 = -1;
    int v2 = -1;
    char p2[64] = "";
    CHECK(report("o_smpl", "smpl", &m2, &x2, &v2, p2, sizeof p2));
    printf("smpl names: position error mean %.5f max %.5f m (%s)\n", m2, x2, p2);
    CHECK(!strncmp(p2, "auto:", 5));
    CHECK(m2 >= 0 && m2 < 2 * m0 + 0.01);
    CHECK_EQ_INT(v2, 0);
    kin_clip_free(c);
    if (!have_numpy()) TEST_SKIP("/usr/bin/python3 cannot import numpy (the .npz and .npy parts)");
    CHECK_EQ_INT(numpy_convert("walk"), 0);
    static const char *const forms[] = {"walk_npz.npz", "walk_zc.npz", "walk_npy.npy"};
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(src, sizeof src, "%s/%s", dir, forms[k]);
        snprintf(name, sizeof name, "%.*s", (int)(strlen(forms[k]) - 4), forms[k]);
        /* The .npz carry fps 120: --fps 30 gives the kept rate. */
        CHECK_EQ_INT(solve(src, "o_np", "--fps", "30"), 0);
        double m = -1, x = -1;
        int v = -1;
        char p[64] = "";
        CHECK(report("o_np", name, &m, &x, &v, p, sizeof p));
        printf("%s: position error mean %.5f max %.5f m (%s)\n", forms[k], m, x, p);
        CHECK_EQ_STR(p, p0);
        CHECK_NEAR(m, m0, 1e-3);
        CHECK_EQ_INT(v, 0);
    }
    /* Refusals, with the file and key named. */
    struct kin_joints *j = NULL;
    size_t len = 0;
    snprintf(src, sizeof src, "%s/pickled.npz", dir);
    char *data = test_slurp(src, &len);
    CHECK_EQ_INT(kin_joints_parse(data, len, NULL, 0, "p.npz", &j, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "p.npz:joint_names");
    CHECK(strstr(err.msg, "pickles") != NULL);
    free(data);
    snprintf(src, sizeof src, "%s/shape.npz", dir);
    data = test_slurp(src, &len);
    CHECK_EQ_INT(kin_joints_parse(data, len, NULL, 0, "s.npz", &j, &err), RT_EPARSE);
    CHECK_EQ_STR(err.where, "s.npz:joints");
    CHECK(strstr(err.msg, "is not (T, J, 3)") != NULL);
    free(data);
    CHECK_EQ_INT(kin_joints_parse("PK\x03\x04xxxx", 8, NULL, 0, "d.npz", &j, &err), RT_EPARSE);
    CHECK(j == NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_joints.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    test_csv();
    test_smpl_tree();
    test_roundtrip();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_joints");
}
