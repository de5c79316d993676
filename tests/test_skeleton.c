/* test_skeleton.c -- automatic skeleton mapping (retarget/skeleton.c):
 * name splitting, the role every real clip's joints are given, refusals
 * that say what is missing, the template each clip gets, and end to end on
 * cut clips (RT_TEST_SKEL_FRAMES, default 200 frames) onto G1 and H1 within
 * the issue's bounds. Also the variants a new user brings, made in memory
 * from real clips: Z-up, metres, millimetres, every second frame at twice
 * the frame time, a root with rotation channels only. A Z-up or re-unitted
 * clip must give the same targets as the original. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../retarget/quality.h"
#include "../retarget/retarget.h"
#include "../kinematics/robot.h"
#include "../retarget/skeleton.h"
#include "clip_util.h"
#include "test.h"

static int max_frames(void) { return test_env_int("RT_TEST_SKEL_FRAMES", 200); }

static void test_split_name(void)
{
    static const struct { const char *name; int side; const char *core; } cases[] = {
        {"LeftUpLeg", 1, "upleg"},        {"RightForeArm", 2, "forearm"},
        {"mixamorig:LeftHand", 1, "hand"}, {"LHipJoint", 1, "hip"},
        {"lShoulder", 1, "shoulder"},      {"rTorso_Clavicle", 2, "torsoclavicle"},
        {"thigh.L", 1, "thigh"},           {"calf_r", 2, "calf"},
        {"L_Knee", 1, "knee"},             {"Bip01 L Thigh", 1, "thigh"},
        {"Bip001_R_Foot", 2, "foot"},      {"left_ankle", 1, "ankle"},
        {"HandRight", 2, "hand"},          {"Hand R", 2, "hand"},
        {"Spine1", 0, "spine"},            {"LowerBack", 0, "lowerback"},
        {"lowerback", 0, "lowerback"},     {"RootJoint", 0, "root"},
        {"lhand", 0, "lhand"},             {"Neck1", 0, "neck"},
        {"spine.001", 0, "spine"},         {"Hips", 0, "hips"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char core[64];
        int side = rtg_skeleton_split_name(cases[i].name, core, sizeof core);
        CHECK_EQ_INT(side, cases[i].side);
        CHECK_EQ_STR(core, cases[i].core);
        if (side != cases[i].side || strcmp(core, cases[i].core))
            fprintf(stderr, "  split_name(\"%s\")\n", cases[i].name);
    }
}

/* Expected roles per clip: pelvis, chest, left upper arm, forearm, hand,
 * thigh, shin, foot, toe (NULL: absent). */
struct expect {
    const char *clip, *pelvis, *chest, *uarm, *farm, *hand, *thigh, *shin, *foot, *toe;
};

static void test_recognize(void)
{
    static const struct expect cases[] = {
        {"clips/01_01.bvh", "Hips", "Spine1", "LeftArm", "LeftForeArm", "LeftHand", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"},
        {"clips/01_03.bvh", "Hips", "Spine1", "LeftArm", "LeftForeArm", "LeftHand", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"},
        {"clips/cmu_12_01_walk.bvh", "Hips", "Spine1", "LeftArm", "LeftForeArm", "LeftHand", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"},
        {"clips/jumping_jacks.bvh", "Hips", "Chest2", "LeftShoulder", "LeftElbow", "LeftWrist", "LeftHip", "LeftKnee", "LeftAnkle", "LeftToe"},
        {"clips/run_forward.bvh", "RootJoint", "lowerback_torso", "lShoulder", "lElbow", "lWrist", "lHip", "lKnee", "lAnkle", "lToeJoint"},
        {"clips/jesse_dance.bvh", "Hips", "Spine2", "LeftArm", "LeftForeArm", "LeftHand", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"},
        {"clips/edge/Boxing_Toes.bvh", "Hips", "Chest", "LeftShoulder", "LeftElbow", "LeftWrist", "LeftHip", "LeftKnee", "LeftAnkle", "LeftToes"},
        {"clips/edge/bvh_example.bvh", "Hips", "Spine3", "LeftArm", "LeftForeArm", "LeftHand", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"},
        {"clips/edge/example.bvh", "Hips", "Chest", "LeftUpArm", "LeftLowArm", "LeftHand", "LeftUpLeg", "LeftLowLeg", "LeftFoot", NULL},
        {"clips/edge/milad.bvh", "Hips", "Spine3", "LeftArm", "LeftForeArm", "LeftHand", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftFoot_end"},
        {"clips/edge/test_freebvh.bvh", "mixamorig:Hips", "mixamorig:Spine2", "mixamorig:LeftArm", "mixamorig:LeftForeArm",
         "mixamorig:LeftHand", "mixamorig:LeftUpLeg", "mixamorig:LeftLeg", "mixamorig:LeftFoot", "mixamorig:LeftToeBase"},
        {"clips/edge/test_mocapbank.bvh", "Hips", "Chest2", "LeftShoulder", "LeftElbow", "LeftWrist", "LeftHip", "LeftKnee", "LeftAnkle", "LeftAnkle_end"},
    };
    static const int roles[] = {RTG_ROLE_PELVIS, RTG_ROLE_CHEST, RTG_ROLE_L_UPPER_ARM, RTG_ROLE_L_FOREARM,
                                RTG_ROLE_L_HAND, RTG_ROLE_L_THIGH, RTG_ROLE_L_SHIN, RTG_ROLE_L_FOOT, RTG_ROLE_L_TOE};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_clip *c = test_load_clip(cases[i].clip);
        struct rtg_skeleton_map m;
        struct rt_err e;
        CHECK(c != NULL);
        if (!c) continue;
        CHECK_EQ_INT(rtg_skeleton_recognize(c, &m, &e), RT_OK);
        const char *const *want = &cases[i].pelvis;
        for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
            int j = m.joint[roles[r]];
            const char *got = j >= 0 ? c->joints[j].name : NULL;
            if (!want[r]) {
                CHECK(got == NULL); /* e.g. an End Site on the shin's line is no toe */
                continue;
            }
            CHECK_EQ_STR(got, want[r]);
            if (!got || strcmp(got, want[r]))
                fprintf(stderr, "  %s: %s\n", cases[i].clip, rtg_skeleton_role_name(roles[r]));
            /* The right side mirrors the left. */
            int jr = m.joint[roles[r] + (roles[r] >= RTG_ROLE_L_CLAVICLE ? RTG_ROLE_SIDED : 0)];
            CHECK(jr >= 0);
            if (roles[r] >= RTG_ROLE_L_CLAVICLE && jr >= 0) {
                char core_l[64], core_r[64];
                CHECK_EQ_INT(rtg_skeleton_split_name(c->joints[jr].name, core_r, sizeof core_r), 2);
                if (j >= 0 && j < c->n_joints) {
                    rtg_skeleton_split_name(c->joints[j].name, core_l, sizeof core_l);
                    CHECK_EQ_STR(core_r, core_l);
                }
            }
        }
        /* Every role that is required is present. */
        for (int r = 0; r < RTG_ROLE_COUNT; r++) {
            int kind = r >= RTG_ROLE_R_CLAVICLE ? r - RTG_ROLE_SIDED : r;
            if (kind == RTG_ROLE_NECK || kind == RTG_ROLE_HEAD || kind == RTG_ROLE_L_CLAVICLE ||
                kind == RTG_ROLE_L_HAND || kind == RTG_ROLE_L_TOE)
                continue;
            CHECK(m.joint[r] >= 0);
        }
        kin_clip_free(c);
    }
}

/* Clips that are not human skeletons are refused with what is missing. */
static void test_refuse(const struct kin_robot *g1)
{
    static const struct { const char *clip, *says[3]; } cases[] = {
        {"clips/edge/rotation_first_root.bvh", {"no left foot", "Foot/Ankle under LeftLeg", "no right leg"}},
        {"clips/edge/sinusoidal.bvh", {"not a human skeleton", "base", "Left/Right"}},
        {"clips/edge/full_precision_frame_time.bvh", {"not a human skeleton", "Hips", "Head"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_clip *c = test_load_clip(cases[i].clip);
        struct rtg_profile *p = NULL;
        struct rtg_targets t;
        struct rt_err e;
        if (!c) continue;
        CHECK_EQ_INT(rtg_retarget_pick_profile(c, g1, &p, &e), RT_EINVAL);
        CHECK(p == NULL);
        for (int k = 0; k < 3; k++) {
            CHECK(strstr(e.msg, cases[i].says[k]) != NULL);
            if (!strstr(e.msg, cases[i].says[k])) fprintf(stderr, "  %s: '%s' not in '%s'\n", cases[i].clip, cases[i].says[k], e.msg);
        }
        CHECK_EQ_INT(rtg_targets_from_clip(g1, c, NULL, &t, &e), RT_EINVAL);
        CHECK(strstr(e.msg, "cannot map") != NULL);
        kin_clip_free(c);
    }
    /* An arm without hand or forearm names what it looked for; a forearm
     * with another name is found by topology (the hand's parent). */
    struct kin_clip *c = test_load_clip("clips/edge/example.bvh");
    struct rtg_skeleton_map m;
    struct rt_err e;
    if (!c) return;
    int j = kin_clip_find_joint(c, "RightLowArm"), h = kin_clip_find_joint(c, "RightHand");
    CHECK(j >= 0 && h >= 0);
    if (j >= 0 && h >= 0) {
        char *old_j = c->joints[j].name, *old_h = c->joints[h].name;
        c->joints[j].name = (char *)"RightBone";
        CHECK_EQ_INT(rtg_skeleton_recognize(c, &m, &e), RT_OK);
        CHECK_EQ_INT(m.joint[RTG_ROLE_R_FOREARM], j);
        c->joints[h].name = (char *)"RightBone2";
        CHECK_EQ_INT(rtg_skeleton_recognize(c, &m, &e), RT_EINVAL);
        CHECK(strstr(e.msg, "no right arm (looked for ForeArm/LowArm/Elbow)") != NULL);
        CHECK(strstr(e.msg, "left") == NULL);
        c->joints[j].name = old_j;
        c->joints[h].name = old_h;
    }
    kin_clip_free(c);
}

/* Clips a bundled profile fits get that profile by name; the automatic
 * mapping of the same clips picks it as the template. Others get a template
 * for the robot. */
static void test_templates(const struct kin_robot *g1, const struct kin_robot *h1)
{
    static const struct { const char *clip, *g1, *h1; } cases[] = {
        {"clips/01_01.bvh", "auto:cmu_g1", "auto:cmu_h1"},
        {"clips/jumping_jacks.bvh", "auto:cmu_asf_g1", "auto:cmu_asf_h1"},
        {"clips/run_forward.bvh", "auto:games105_g1", "auto:games105_h1"},
        {"clips/jesse_dance.bvh", "auto:mixamo_g1", "auto:mixamo_h1"},
        {"clips/edge/Boxing_Toes.bvh", "auto:cmu_asf_g1", "auto:cmu_asf_h1"},
        {"clips/edge/test_mocapbank.bvh", "auto:cmu_asf_g1", "auto:cmu_asf_h1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_clip *c = test_load_clip(cases[i].clip);
        struct rtg_profile *p = NULL;
        struct rt_err e;
        if (!c) continue;
        CHECK_EQ_INT(rtg_skeleton_auto_profile(c, g1, &p, &e), RT_OK);
        CHECK_EQ_STR(p ? p->name : NULL, cases[i].g1);
        if (p) {
            CHECK_EQ_INT(p->n_links, 14);
            CHECK_EQ_INT(p->n_match, 0);
        }
        rtg_profile_free(p);
        CHECK_EQ_INT(rtg_skeleton_auto_profile(c, h1, &p, &e), RT_OK);
        CHECK_EQ_STR(p ? p->name : NULL, cases[i].h1);
        if (p) CHECK_EQ_INT(p->n_links, 12);
        rtg_profile_free(p);
        kin_clip_free(c);
    }
    /* Biovision's example.bvh: the feet's End Sites carry on down the shin,
     * so there are no toes and the feet track positions only. */
    struct kin_clip *c = test_load_clip("clips/edge/example.bvh");
    struct rtg_profile *p = NULL;
    struct rt_err e;
    if (!c) return;
    CHECK_EQ_INT(rtg_skeleton_auto_profile(c, g1, &p, &e), RT_OK);
    for (int s = 0; p && s < 2; s++) {
        int k = p->feet[s].link;
        CHECK(p->feet[s].toe == NULL);
        CHECK(k > 0 && p->links[k].wrot == 0 && p->links[k].frame.axis[0] == 0);
    }
    rtg_profile_free(p);
    kin_clip_free(c);
}

/* ---- variants of real clips ---- */

/* Scales lengths (offsets, position channels) by s. */
static void clip_scale(struct kin_clip *c, double s)
{
    for (int j = 0; j < c->n_joints + c->n_end_sites; j++)
        for (int i = 0; i < 3; i++) c->joints[j].offset[i] *= s;
    for (int j = 0; j < c->n_joints; j++)
        for (int k = 0; k < c->joints[j].n_channels; k++)
            if (c->joints[j].chan[k] <= KIN_ZPOS)
                for (int f = 0; f < c->n_frames; f++) c->motion[(size_t)f * c->n_channels + c->joints[j].chan_off + k] *= s;
}

/* Y-up to Z-up: every position p -> A p, every rotation R -> A R A^T with
 * A = Rx(+90 deg) (x -> x, y -> z, z -> -y): new y = -old z, new z = old y;
 * a Y rotation becomes a Z rotation, a Z rotation a Y rotation by minus
 * the angle. */
static void clip_z_up(struct kin_clip *c)
{
    for (int j = 0; j < c->n_joints + c->n_end_sites; j++) {
        double *o = c->joints[j].offset, y = o[1], z = o[2];
        o[1] = -z;
        o[2] = y;
    }
    for (int j = 0; j < c->n_joints; j++)
        for (int k = 0; k < c->joints[j].n_channels; k++) {
            int *ch = &c->joints[j].chan[k], neg = 0;
            switch (*ch) {
            case KIN_YPOS: *ch = KIN_ZPOS; break;
            case KIN_ZPOS: *ch = KIN_YPOS; neg = 1; break;
            case KIN_YROT: *ch = KIN_ZROT; break;
            case KIN_ZROT: *ch = KIN_YROT; neg = 1; break;
            default: break;
            }
            for (int f = 0; neg && f < c->n_frames; f++) {
                double *v = &c->motion[(size_t)f * c->n_channels + c->joints[j].chan_off + k];
                *v = -*v;
            }
        }
}

/* Every second frame at twice the frame time. */
static void clip_half_rate(struct kin_clip *c)
{
    int n = (c->n_frames + 1) / 2;
    for (int f = 1; f < n; f++)
        memmove(c->motion + (size_t)f * c->n_channels, c->motion + (size_t)(2 * f) * c->n_channels,
                (size_t)c->n_channels * sizeof(double));
    c->n_frames = n;
    c->frame_time *= 2;
}

/* Drops the root's position channels: the root stays at its OFFSET. */
static void clip_root_rotation_only(struct kin_clip *c)
{
    struct kin_bvh_joint *r = &c->joints[0];
    int keep[6], nk = 0, nc = c->n_channels - 3;
    if (r->n_channels != 6) return;
    for (int k = 0; k < 6; k++)
        if (r->chan[k] >= KIN_XROT) keep[nk++] = k;
    for (int f = 0; f < c->n_frames; f++) {
        const double *src = c->motion + (size_t)f * c->n_channels;
        double *dst = c->motion + (size_t)f * nc, row[6];
        for (int k = 0; k < 3; k++) row[k] = src[r->chan_off + keep[k]];
        /* Rows only move down, and within a row the root's columns come first. */
        double rest[KIN_BVH_MAX_CHANNELS];
        memcpy(rest, src + 6, (size_t)(c->n_channels - 6) * sizeof(double));
        memcpy(dst, row, 3 * sizeof(double));
        memcpy(dst + 3, rest, (size_t)(c->n_channels - 6) * sizeof(double));
    }
    int ch[3] = {r->chan[keep[0]], r->chan[keep[1]], r->chan[keep[2]]};
    r->n_channels = 3;
    for (int k = 0; k < 6; k++) r->chan[k] = k < 3 ? ch[k] : -1;
    for (int j = 1; j < c->n_joints; j++) c->joints[j].chan_off -= 3;
    c->n_channels = nc;
}

/* The CPU backend every solve of this test runs on (4 threads, opened in
 * main and reused for every clip). */
static struct solver_backend cpu_be;

/* Solves `clip` (the detected or automatic profile) and checks the bounds;
 * returns the quality in *q and the targets in *t (caller frees). */
static int solve_bounds(const struct kin_robot *robot, const struct kin_clip *clip, const char *label,
                        double pos_bound, struct rtg_targets *t, struct rtg_quality *q)
{
    struct rtg_profile *prof = NULL;
    struct rt_err e;
    memset(t, 0, sizeof *t);
    memset(q, 0, sizeof *q);
    CHECK_EQ_INT(rtg_retarget_pick_profile(clip, robot, &prof, &e), RT_OK);
    if (!prof) {
        fprintf(stderr, "  %s: %s: %s\n", label, e.where, e.msg);
        return -1;
    }
    CHECK_EQ_INT(rtg_targets_from_clip(robot, clip, prof, t, &e), RT_OK);
    if (!t->pos) {
        fprintf(stderr, "  %s: %s: %s\n", label, e.where, e.msg);
        rtg_profile_free(prof);
        return -1;
    }
    struct solver_options opt;
    struct solver_batch b;
    struct solver_clip_result cr;
    int off[2] = {0, t->n_frames};
    float *state = malloc((size_t)t->n_frames * rt_state_cols(&robot->tree) * sizeof(float));
    struct solver_result res = {state, &cr};
    solver_options_default(&opt);
    rtg_profile_solver_options(prof, &opt);
    rtg_targets_batch(robot, t, off, &opt, &b);
    int rc = -1;
    if (state && solver_backend_solve(&cpu_be, &b, &res, &e) == RT_OK) {
        { struct rtg_quality qf; CHECK(rtg_quality_finish(robot, t, state, 1, &qf, NULL, NULL) == RT_OK); } /* as rtg_job_finish() does */
        CHECK_EQ_INT(rtg_quality_compute(robot, t, state, t->n_frames, q, NULL, NULL), RT_OK);
        printf("%-40s %s %-18s frames %4d pos mean %.4f pen %.4f limits %d\n", label, robot->name,
               prof->name, t->n_frames, q->pos_m.mean, q->ground_penetration_m, q->joint_limit_violations);
        CHECK_EQ_INT(q->joint_limit_violations, 0);
        CHECK(q->ground_penetration_m <= 0.01);
        CHECK(q->pos_m.mean < pos_bound);
        rc = 0;
    }
    CHECK(rc == 0);
    free(state);
    rtg_profile_free(prof);
    return rc;
}

/* Edge clips onto G1 and H1, cut to max_frames(). */
static void test_edge_end_to_end(const struct kin_robot *const robots[2])
{
    static const char *const clips[] = {"clips/edge/Boxing_Toes.bvh", "clips/edge/bvh_example.bvh",
                                        "clips/edge/example.bvh", "clips/edge/milad.bvh",
                                        "clips/edge/test_freebvh.bvh", "clips/edge/test_mocapbank.bvh"};
    for (int r = 0; r < 2; r++)
        for (size_t i = 0; i < sizeof clips / sizeof clips[0]; i++) {
            struct kin_clip *c = test_load_clip(clips[i]);
            struct rtg_targets t;
            struct rtg_quality q;
            if (!c) continue;
            if (c->n_frames > max_frames()) c->n_frames = max_frames();
            /* Known: test_mocapbank kneels (from frame 140), folding a knee
             * and rolling a hip beyond H1's range (knee 2.05 rad, hip roll
             * 0.43 rad); even the per-frame solve stays 3.4 cm off. It is
             * retargeted, not refused, and held to 5 cm. */
            double bound = r == 1 && strstr(clips[i], "mocapbank") ? 0.05 : 0.03;
            solve_bounds(robots[r], c, clips[i], bound, &t, &q);
            rtg_targets_free(&t);
            kin_clip_free(c);
        }
}

/* Largest difference between two target sets' positions. */
static double targets_diff(const struct rtg_targets *a, const struct rtg_targets *b)
{
    double d = INFINITY;
    if (a->n_frames == b->n_frames && a->n_targets == b->n_targets && a->pos && b->pos) {
        d = 0;
        for (size_t i = 0; i < (size_t)a->n_frames * a->n_targets * 3; i++)
            if (fabs((double)a->pos[i] - b->pos[i]) > d) d = fabs((double)a->pos[i] - b->pos[i]);
    }
    return d;
}

static void test_variants(const struct kin_robot *const robots[2])
{
    static const char *const clips[] = {"clips/cmu_12_01_walk.bvh", "clips/jesse_dance.bvh",
                                        "clips/edge/Boxing_Toes.bvh"};
    for (size_t i = 0; i < sizeof clips / sizeof clips[0]; i++)
        for (int r = 0; r < 2; r++) {
            struct rtg_targets t0, tv;
            struct rtg_quality q;
            char label[96];
            struct kin_clip *c = test_load_clip(clips[i]);
            if (!c) continue;
            if (c->n_frames > max_frames()) c->n_frames = max_frames();
            struct kin_bvh_convert conv;
            CHECK_EQ_INT(kin_clip_detect_units(c, &conv, NULL, NULL), RT_OK);
            if (solve_bounds(robots[r], c, clips[i], 0.03, &t0, &q)) {
                kin_clip_free(c);
                continue;
            }
            for (int v = 0; v < 5; v++) {
                struct kin_clip *cv = test_load_clip(clips[i]);
                static const char *const what[] = {"z-up", "metres", "millimetres", "half rate", "root rotation only"};
                if (!cv) continue;
                if (cv->n_frames > max_frames()) cv->n_frames = max_frames();
                if (v == 0) clip_z_up(cv);
                if (v == 1) clip_scale(cv, conv.scale);
                if (v == 2) clip_scale(cv, conv.scale * 1000.0);
                if (v == 3) clip_half_rate(cv);
                if (v == 4) clip_root_rotation_only(cv);
                snprintf(label, sizeof label, "%s (%s)", clips[i], what[v]);
                if (solve_bounds(robots[r], cv, label, 0.03, &tv, &q) == 0 && v <= 2) {
                    /* Same motion, other conventions: the same targets. */
                    double d = targets_diff(&t0, &tv);
                    CHECK(d < 1e-4);
                    if (!(d < 1e-4)) fprintf(stderr, "  %s: targets differ by %g m\n", label, d);
                }
                if (v == 3) CHECK_EQ_INT(tv.n_frames, (t0.n_frames + 1) / 2);
                rtg_targets_free(&tv);
                kin_clip_free(cv);
            }
            rtg_targets_free(&t0);
            kin_clip_free(c);
        }
}

int main(void)
{
    struct kin_robot *robots[2] = {NULL, NULL};
    struct rt_err e;
    struct kin_clip *probe = test_load_clip("clips/01_01.bvh");
    if (!probe) TEST_SKIP("shared data not found (set RT_SHARED_DATA)");
    kin_clip_free(probe);
    if (kin_robot_load("g1", &robots[0], &e) || kin_robot_load("h1", &robots[1], &e)) {
        fprintf(stderr, "robot: %s: %s\n", e.where, e.msg);
        kin_robot_free(robots[0]);
        return 1;
    }
    struct solver_backend_config cfg;
    solver_backend_config_default(&cfg);
    cfg.threads = 4;
    if (solver_backend_init(&cpu_be, "cpu", &cfg, &e)) {
        fprintf(stderr, "cpu backend: %s: %s\n", e.where, e.msg);
        kin_robot_free(robots[0]);
        kin_robot_free(robots[1]);
        return 1;
    }
    test_split_name();
    test_recognize();
    test_refuse(robots[0]);
    test_templates(robots[0], robots[1]);
    test_edge_end_to_end((const struct kin_robot *const *)robots);
    test_variants((const struct kin_robot *const *)robots);
    kin_robot_free(robots[0]);
    kin_robot_free(robots[1]);
    solver_backend_free(&cpu_be);
    return test_report("test_skeleton");
}
