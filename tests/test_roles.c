/* test_roles.c -- a robot's body roles (retarget/roles.c) and the
 * automatic mapping onto robots no bundled profile targets: the roles of
 * every shared humanoid in both formats by name, the arms refused naming
 * what is missing, the roles JSON, the sole offset from foot geoms, roles
 * profiles ("robot_roles") that override a role, and every shared clip
 * (cut to RT_TEST_FRAMES frames, default 240) onto Booster T1 (URDF and
 * MJCF) and G1 23 dof (no bundled profile fits it) with no profile, within
 * the bounds: no joint-limit violation, ground penetration at most
 * 1 cm, mean position error below 3 cm. */
#include <dirent.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../kinematics/robot.h"
#include "../retarget/batch.h"
#include "../retarget/engine.h"
#include "../retarget/profile.h"
#include "../retarget/quality.h"
#include "../retarget/retarget.h"
#include "../retarget/roles.h"
#include "clip_util.h"
#include "test.h"

static int max_frames(void) { return test_env_int("RT_TEST_FRAMES", 240); }

static struct kin_robot *load_robot(const char *file)
{
    char path[512];
    struct kin_robot *r = NULL;
    struct rt_err e;
    snprintf(path, sizeof path, "%s/robots/%s", test_data_dir(), file);
    if (kin_robot_load(path, &r, &e)) {
        fprintf(stderr, "%s: %s: %s\n", path, e.where, e.msg);
        return NULL;
    }
    return r;
}

/* Expected links in role order (roles.h); NULL: absent. */
struct expect {
    const char *file;
    const char *link[RTG_RROLE_COUNT];
};

#define G1_ARMS(hand)                                                                              \
    "left_hip_roll_link", "left_knee_link", "left_ankle_roll_link", "left_shoulder_roll_link",     \
        "left_elbow_link", "left_" hand, "right_hip_roll_link", "right_knee_link",                 \
        "right_ankle_roll_link", "right_shoulder_roll_link", "right_elbow_link", "right_" hand
#define T1_ROLES                                                                                   \
    "Waist", "Trunk", "H1", "Hip_Roll_Left", "Shank_Left", "left_foot_link", "AL2", "AL3",         \
        "left_hand_link", "Hip_Roll_Right", "Shank_Right", "right_foot_link", "AR2", "AR3",        \
        "right_hand_link"
#define H1_ROLES                                                                                   \
    "pelvis", "torso_link", NULL, "left_hip_roll_link", "left_knee_link", "left_ankle_link",       \
        "left_shoulder_roll_link", "left_elbow_link", NULL, "right_hip_roll_link",                 \
        "right_knee_link", "right_ankle_link", "right_shoulder_roll_link", "right_elbow_link", NULL

static void test_roles_by_name(void)
{
    static const struct expect cases[] = {
        {"g1_29dof_rev_1_0.urdf", {"pelvis", "torso_link", "head_link", G1_ARMS("wrist_yaw_link")}},
        {"g1_29dof_rev_1_0.xml", {"pelvis", "torso_link", NULL, G1_ARMS("wrist_yaw_link")}},
        {"g1_mocap_29dof.xml", {"pelvis", "torso_link", "head_link", G1_ARMS("wrist_yaw_link")}},
        {"g1_23dof_rev_1_0.urdf", {"pelvis", "torso_link", "head_link", G1_ARMS("wrist_roll_rubber_hand")}},
        {"g1_23dof_rev_1_0.xml", {"pelvis", "torso_link", NULL, G1_ARMS("wrist_roll_rubber_hand")}},
        {"h1.urdf", {H1_ROLES}},
        {"h1.xml", {H1_ROLES}},
        {"T1_serial.urdf", {T1_ROLES}},
        {"T1_serial.xml", {T1_ROLES}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_robot *r = load_robot(cases[i].file);
        struct rtg_robot_roles rr;
        struct rt_err e;
        CHECK(r != NULL);
        if (!r) continue;
        CHECK_EQ_INT(rtg_robot_roles(r, &rr, &e), RT_OK);
        for (int k = 0; k < RTG_RROLE_COUNT; k++) {
            const char *want = cases[i].link[k], *got = rr.link[k] >= 0 ? r->links[rr.link[k]].name : NULL;
            if (!want) {
                CHECK_EQ_INT(rr.link[k], -1);
            } else {
                CHECK_EQ_STR(got, want);
            }
            if ((want == NULL) != (got == NULL) || (want && got && strcmp(want, got)))
                fprintf(stderr, "  %s: %s\n", cases[i].file, rtg_robot_role_name(k));
        }
        kin_robot_free(r);
    }
}

static void test_refusals(void)
{
    static const struct { const char *file, *msg; } cases[] = {
        {"panda.urdf", "cannot map robot 'panda': no pelvis, no left leg, no right leg, no torso, no left arm, no right arm"},
        {"ur5_robot.urdf", "cannot map robot 'ur5': no pelvis, no left leg, no right leg, no torso, no left arm, no right arm"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_robot *r = load_robot(cases[i].file);
        struct rtg_robot_roles rr;
        struct rt_err e;
        CHECK(r != NULL);
        if (!r) continue;
        rt_err_clear(&e);
        CHECK_EQ_INT(rtg_robot_roles(r, &rr, &e), RT_EINVAL);
        CHECK_EQ_STR(e.msg, cases[i].msg);
        CHECK_EQ_STR(e.where, "robot");
        /* Retargeting onto it with no profile says the same. */
        struct kin_clip *clip = test_load_clip("clips/run_forward.bvh");
        struct rtg_profile *p = NULL;
        CHECK(clip != NULL);
        if (clip) {
            rt_err_clear(&e);
            CHECK_EQ_INT(rtg_retarget_pick_profile(clip, r, &p, &e), RT_EINVAL);
            CHECK(p == NULL);
            CHECK_EQ_STR(e.msg, cases[i].msg);
        }
        kin_clip_free(clip);
        kin_robot_free(r);
    }
    /* A humanoid missing one knee joint is refused naming just that. */
    struct kin_robot *t1 = load_robot("T1_serial.urdf");
    CHECK(t1 != NULL);
    if (t1) {
        struct rtg_robot_roles rr;
        struct rt_err e;
        CHECK_EQ_INT(rtg_robot_roles(t1, &rr, &e), RT_OK);
        rr.link[RTG_RROLE_L_KNEE] = -1;
        rr.link[RTG_RROLE_R_SHOULDER] = rr.link[RTG_RROLE_R_ELBOW] = -1;
        CHECK_EQ_INT(rtg_robot_roles_check(t1, &rr, &e), RT_EINVAL);
        CHECK_EQ_STR(e.msg, "cannot map robot 'T1': no left knee, no right arm");
        kin_robot_free(t1);
    }
}

static void test_json(void)
{
    struct kin_robot *r = load_robot("T1_serial.xml"), *h = load_robot("h1.urdf");
    struct rtg_robot_roles rr;
    struct rt_err e;
    CHECK(r && h);
    if (!r || !h) goto out;
    rtg_robot_roles(r, &rr, &e);
    char *j = rtg_robot_roles_json(r, &rr);
    CHECK_EQ_STR(j, "{\"robot\":\"T1\",\"roles\":{\"pelvis\":\"Waist\",\"torso\":\"Trunk\",\"head\":\"H1\","
                    "\"left_hip\":\"Hip_Roll_Left\",\"left_knee\":\"Shank_Left\",\"left_foot\":\"left_foot_link\","
                    "\"left_shoulder\":\"AL2\",\"left_elbow\":\"AL3\",\"left_hand\":\"left_hand_link\","
                    "\"right_hip\":\"Hip_Roll_Right\",\"right_knee\":\"Shank_Right\",\"right_foot\":\"right_foot_link\","
                    "\"right_shoulder\":\"AR2\",\"right_elbow\":\"AR3\",\"right_hand\":\"right_hand_link\"},"
                    "\"missing\":[]}");
    free(j);
    rtg_robot_roles(h, &rr, &e);
    j = rtg_robot_roles_json(h, &rr);
    CHECK(j && strstr(j, "\"missing\":[\"head\",\"left_hand\",\"right_hand\"]"));
    free(j);
out:
    kin_robot_free(r);
    kin_robot_free(h);
}

static void test_sole_offset(void)
{
    struct kin_robot *x = load_robot("T1_serial.xml"), *u = load_robot("T1_serial.urdf");
    struct kin_robot *g = load_robot("g1_29dof_rev_1_0.xml"), *h = load_robot("h1.xml");
    CHECK(x && u && g && h);
    if (x && u && g && h) {
        /* Two capsules of radius 0.02 centred 0.01 below the foot link. */
        CHECK_NEAR(kin_robot_sole_offset(x, kin_robot_link_index(x, "left_foot_link")), 0.03, 1e-5);
        CHECK_NEAR(kin_robot_sole_offset(x, kin_robot_link_index(x, "right_foot_link")), 0.03, 1e-5);
        /* The URDF's collision box: 0.03 high, centred 0.015 below. */
        CHECK_NEAR(kin_robot_sole_offset(u, kin_robot_link_index(u, "left_foot_link")), 0.03, 1e-9);
        /* Known robots keep their values, whatever their geoms. */
        CHECK_EQ_INT(kin_robot_sole_offset(g, kin_robot_link_index(g, "left_ankle_roll_link")) == 0.035, 1);
        CHECK_EQ_INT(kin_robot_sole_offset(h, kin_robot_link_index(h, "left_ankle_link")) == 0.062, 1);
    }
    kin_robot_free(x);
    kin_robot_free(u);
    kin_robot_free(g);
    kin_robot_free(h);
}

static void test_roles_profile(void)
{
    static const char text[] = "{\"name\": \"t1_trunk\", \"robot_roles\": {\"pelvis\": \"Trunk\", \"left_hand\": \"AL3\"}}";
    struct rtg_profile *p = NULL, *q = NULL, *built = NULL;
    struct kin_robot *t1 = load_robot("T1_serial.urdf"), *h1 = load_robot("h1.urdf");
    struct kin_clip *clip = test_load_clip("clips/cmu_12_01_walk.bvh");
    struct rt_err e;
    CHECK(t1 && h1 && clip);
    if (!t1 || !h1 || !clip) goto out;
    CHECK_EQ_INT(rtg_profile_parse(text, sizeof text - 1, "t1.json", &p, &e), RT_OK);
    if (!p) goto out;
    CHECK_EQ_INT(p->n_links, 0);
    CHECK_EQ_INT(p->n_roles, 2);
    /* Written back and read again: the same roles. */
    {
        struct cJSON *js = rtg_profile_json(p);
        char *t = js ? cJSON_PrintUnformatted(js) : NULL;
        CHECK_EQ_STR(t, "{\"name\":\"t1_trunk\",\"robot_roles\":{\"pelvis\":\"Trunk\",\"left_hand\":\"AL3\"}}");
        if (t) CHECK_EQ_INT(rtg_profile_parse(t, strlen(t), "again", &q, &e), RT_OK);
        if (q) CHECK_EQ_STR(q->role_link[1], "AL3");
        free(t);
        cJSON_Delete(js);
    }
    CHECK_EQ_INT(rtg_retarget_roles_profile(clip, t1, p, &built, &e), RT_OK);
    if (built) {
        CHECK_EQ_STR(built->links[0].link, "Trunk");
        int hand = -1;
        for (int k = 0; k < built->n_links; k++)
            if (!strcmp(built->links[k].joint, "LeftHand")) hand = k;
        CHECK(hand > 0);
        if (hand > 0) CHECK_EQ_STR(built->links[hand].link, "AL3");
        CHECK(!strncmp(built->name, "auto:roles:", 11));
    }
    rtg_profile_free(built);
    built = NULL;
    /* A bundled robot with a roles profile takes the roles path; H1 gets
     * its hands from the profile (its forearm has no link of its own). */
    {
        static const char h[] = "{\"robot_roles\": {\"left_hand\": \"left_elbow_link\"}}";
        struct rtg_profile *hp = NULL;
        CHECK_EQ_INT(rtg_profile_parse(h, sizeof h - 1, "h.json", &hp, &e), RT_OK);
        /* left_hand == left_elbow would be a zero-length forearm: the
         * targets refuse nothing, but the role is taken as given. */
        if (hp) CHECK_EQ_INT(rtg_retarget_roles_profile(clip, h1, hp, &built, &e), RT_OK);
        if (built) CHECK(!strncmp(built->name, "auto:roles:cmu_h1", 17));
        rtg_profile_free(built);
        built = NULL;
        rtg_profile_free(hp);
    }
    /* Refusals: an unknown link, an unknown role, roles with links. */
    {
        static const char bad_link[] = "{\"robot_roles\": {\"left_hand\": \"paw\"}}";
        static const char bad_role[] = "{\"robot_roles\": {\"left_paw\": \"AL3\"}}";
        static const char both[] = "{\"robot_roles\": {\"left_hand\": \"AL3\"}, \"root\": {\"joint\": \"Hips\", \"link\": \"Trunk\"}}";
        static const char extra[] = "{\"robot_roles\": {\"left_hand\": \"AL3\"}, \"scale\": 1}";
        struct rtg_profile *b = NULL;
        CHECK_EQ_INT(rtg_profile_parse(bad_link, sizeof bad_link - 1, "b.json", &b, &e), RT_OK);
        if (b) {
            CHECK_EQ_INT(rtg_retarget_roles_profile(clip, t1, b, &built, &e), RT_EINVAL);
            CHECK_EQ_STR(e.where, "profile:robot_roles.left_hand");
            CHECK(strstr(e.msg, "no link 'paw'") != NULL);
            CHECK(built == NULL);
        }
        rtg_profile_free(b);
        b = NULL;
        CHECK_EQ_INT(rtg_profile_parse(bad_role, sizeof bad_role - 1, "b.json", &b, &e), RT_EINVAL);
        CHECK_EQ_STR(e.where, "b.json:robot_roles.left_paw");
        CHECK_EQ_INT(rtg_profile_parse(both, sizeof both - 1, "b.json", &b, &e), RT_EINVAL);
        CHECK_EQ_STR(e.where, "b.json:robot_roles");
        CHECK_EQ_INT(rtg_profile_parse(extra, sizeof extra - 1, "b.json", &b, &e), RT_EINVAL);
        CHECK_EQ_STR(e.where, "b.json:scale");
    }
    /* Bundled robots with no profile keep their bundled mapping. */
    {
        struct kin_robot *g1 = load_robot("g1_29dof_rev_1_0.urdf");
        CHECK(g1 != NULL);
        if (g1) {
            CHECK_EQ_INT(rtg_retarget_pick_profile(clip, g1, &built, &e), RT_OK);
            if (built) CHECK_EQ_STR(built->name, "cmu_g1");
        }
        rtg_profile_free(built);
        built = NULL;
        kin_robot_free(g1);
    }
out:
    rtg_profile_free(p);
    rtg_profile_free(q);
    kin_robot_free(t1);
    kin_robot_free(h1);
    kin_clip_free(clip);
}

/* On the bundled robots the roles path, forced by a roles profile,
 * rebuilds the bundled profile link for link: the roles are the links the
 * bundled profiles were written with. */
static void test_roles_path_matches_bundled(void)
{
    static const struct { const char *robot, *clip, *bundled; } cases[] = {
        {"g1_29dof_rev_1_0.urdf", "clips/01_01.bvh", "cmu_g1"},
        {"g1_29dof_rev_1_0.xml", "clips/jesse_dance.bvh", "mixamo_g1"},
        {"h1.urdf", "clips/run_forward.bvh", "games105_h1"},
        {"h1.xml", "clips/jumping_jacks.bvh", "cmu_asf_h1"},
    };
    static const char text[] = "{\"robot_roles\": {\"pelvis\": \"pelvis\"}}";
    struct rtg_profile *force = NULL;
    struct rt_err e;
    CHECK_EQ_INT(rtg_profile_parse(text, sizeof text - 1, "force.json", &force, &e), RT_OK);
    for (size_t i = 0; force && i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_robot *r = load_robot(cases[i].robot);
        struct kin_clip *c = test_load_clip(cases[i].clip);
        struct rtg_profile *a = NULL, *b = NULL;
        char want[64];
        CHECK(r && c);
        if (r && c) {
            CHECK_EQ_INT(rtg_retarget_pick_profile(c, r, &a, &e), RT_OK);
            CHECK_EQ_INT(rtg_retarget_roles_profile(c, r, force, &b, &e), RT_OK);
        }
        if (a && b) {
            snprintf(want, sizeof want, "auto:roles:%s", cases[i].bundled);
            CHECK_EQ_STR(a->name, cases[i].bundled);
            CHECK_EQ_STR(b->name, want);
            CHECK_EQ_INT(b->n_links, a->n_links);
            for (int k = 0; k < a->n_links && k < b->n_links; k++) {
                CHECK_EQ_STR(b->links[k].link, a->links[k].link);
                CHECK_EQ_STR(b->links[k].joint, a->links[k].joint);
            }
        }
        rtg_profile_free(a);
        rtg_profile_free(b);
        kin_clip_free(c);
        kin_robot_free(r);
    }
    rtg_profile_free(force);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The shared clips (clips/ *.bvh), sorted; returns the count. */
static int list_clips(char names[][64], int cap)
{
    char dir[512];
    char *ptr[64];
    int n = 0;
    snprintf(dir, sizeof dir, "%s/clips", test_data_dir());
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < cap) {
        size_t len = strlen(de->d_name);
        if (len > 4 && len < 64 && !strcmp(de->d_name + len - 4, ".bvh")) snprintf(names[n++], 64, "%s", de->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++) ptr[i] = names[i];
    qsort(ptr, (size_t)n, sizeof ptr[0], cmp_str);
    char tmp[64][64];
    for (int i = 0; i < n; i++) snprintf(tmp[i], 64, "%s", ptr[i]);
    for (int i = 0; i < n; i++) memcpy(names[i], tmp[i], 64);
    return n;
}

static void test_end_to_end(struct solver_backend *be)
{
    static const char *const robots[] = {"T1_serial.urdf", "T1_serial.xml", "g1_23dof_rev_1_0.urdf",
                                         "g1_23dof_rev_1_0.xml"};
    char clips[64][64];
    int n_clips = list_clips(clips, 64);
    CHECK(n_clips >= 6);
    for (size_t r = 0; r < sizeof robots / sizeof robots[0]; r++) {
        struct kin_robot *robot = load_robot(robots[r]);
        CHECK(robot != NULL);
        if (!robot) continue;
        for (int c = 0; c < n_clips; c++) {
            char rel[96];
            struct rtg_profile *prof = NULL;
            struct rtg_targets t;
            struct rt_err e;
            memset(&t, 0, sizeof t);
            snprintf(rel, sizeof rel, "clips/%.60s", clips[c]);
            struct kin_clip *clip = test_load_clip(rel);
            CHECK(clip != NULL);
            if (!clip) continue;
            if (clip->n_frames > max_frames()) clip->n_frames = max_frames();
            CHECK_EQ_INT(rtg_retarget_pick_profile(clip, robot, &prof, &e), RT_OK);
            if (!prof) {
                fprintf(stderr, "  %s onto %s: %s: %s\n", clips[c], robots[r], e.where, e.msg);
                kin_clip_free(clip);
                continue;
            }
            CHECK(!strncmp(prof->name, "auto:roles:", 11));
            CHECK_EQ_INT(rtg_targets_from_clip(robot, clip, prof, &t, &e), RT_OK);
            if (t.pos) {
                struct solver_options opt;
                struct rtg_batch_item it;
                solver_options_default(&opt);
                rtg_profile_solver_options(prof, &opt);
                memset(&it, 0, sizeof it);
                it.t = &t;
                CHECK_EQ_INT(rtg_batch_solve(NULL, be, robot, &opt, &it, 1, NULL, NULL, &e), RT_OK);
                if (it.state) {
                    struct rtg_quality q;
                    CHECK_EQ_INT(rtg_quality_compute(robot, &t, it.state, t.n_frames, &q, NULL, NULL), RT_OK);
                    printf("%-18s %-22s %-24s frames %4d pos mean %.4f m p95 %.4f pen %.4f m limits %d\n",
                           clips[c], robots[r], prof->name, t.n_frames, q.pos_m.mean, q.pos_m.p95,
                           q.ground_penetration_m, q.joint_limit_violations);
                    CHECK_EQ_INT(q.joint_limit_violations, 0);
                    CHECK(q.ground_penetration_m <= 0.01);
                    CHECK(q.pos_m.mean < 0.03);
                }
                free(it.state);
            }
            rtg_targets_free(&t);
            rtg_profile_free(prof);
            kin_clip_free(clip);
        }
        kin_robot_free(robot);
    }
}

int main(void)
{
    struct solver_backend be;
    struct rt_err e;
    struct kin_robot *probe = load_robot("T1_serial.urdf");
    if (!probe) TEST_SKIP("shared data not found (set RT_SHARED_DATA)");
    kin_robot_free(probe);
    test_roles_by_name();
    test_refusals();
    test_json();
    test_sole_offset();
    test_roles_profile();
    test_roles_path_matches_bundled();
    if (rtg_backend_init(&be, "cpu", 2, &e)) {
        fprintf(stderr, "cpu backend: %s: %s\n", e.where, e.msg);
        return 1;
    }
    test_end_to_end(&be);
    solver_backend_free(&be);
    return test_report("test_roles");
}
