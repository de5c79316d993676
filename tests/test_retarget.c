/* test_retarget.c -- skeleton detection on every shared clip, targets and
 * quality figures, and end to end: every clip of shared/data/clips (not
 * edge/) onto G1 and H1 with the detected profile meets the bounds
 * (zero joint-limit violations, ground penetration <= 1 cm, mean position
 * error < 3 cm), the trajectory solve beats the per-frame baseline on jerk,
 * and a G1 trajectory maps onto H1 through g1_to_h1.
 *
 * Long clips are cut to RT_TEST_FRAMES frames (default 240) to keep the
 * sanitizer build quick; bench/bench_retarget measures the full clips. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../kinematics/capsule.h"
#include "../kinematics/rot.h"
#include "../retarget/collide.h"
#include "../retarget/quality.h"
#include "../retarget/retarget.h"
#include "../kinematics/robot.h"
#include "clip_util.h"
#include "test.h"

static int max_frames(void) { return test_env_int("RT_TEST_FRAMES", 240); }

static void test_detect(void)
{
    static const struct { const char *clip, *g1, *h1; } cases[] = {
        {"clips/01_01.bvh", "cmu_g1", "cmu_h1"},
        {"clips/01_03.bvh", "cmu_g1", "cmu_h1"},
        {"clips/cmu_12_01_walk.bvh", "cmu_g1", "cmu_h1"},
        {"clips/jumping_jacks.bvh", "cmu_asf_g1", "cmu_asf_h1"},
        {"clips/run_forward.bvh", "games105_g1", "games105_h1"},
        {"clips/jesse_dance.bvh", "mixamo_g1", "mixamo_h1"},
        {"clips/edge/test_freebvh.bvh", "mixamo_g1", "mixamo_h1"}, /* mixamorig: prefix */
        {"clips/edge/sinusoidal.bvh", NULL, NULL},
        {"clips/edge/example.bvh", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct kin_clip *c = test_load_clip(cases[i].clip);
        CHECK(c != NULL);
        if (!c) continue;
        const char *g = rtg_retarget_detect_profile(c, "g1");
        const char *h = rtg_retarget_detect_profile(c, "h1");
        const char *g2 = rtg_retarget_detect_profile(c, "g1_29dof_rev_1_0");
        if (cases[i].g1) {
            CHECK_EQ_STR(g, cases[i].g1);
            CHECK_EQ_STR(h, cases[i].h1);
            CHECK_EQ_STR(g2, cases[i].g1);
        } else {
            CHECK(g == NULL && h == NULL);
        }
        kin_clip_free(c);
    }
}

/* A clip no bundled profile fits by name is mapped automatically
 * (test_skeleton covers that); one that is no human skeleton is refused with
 * what is missing. */
static void test_unmappable(const struct kin_robot *g1)
{
    struct kin_clip *c = test_load_clip("clips/edge/rotation_first_root.bvh");
    struct rtg_targets t;
    struct rt_err e;
    CHECK(c != NULL);
    if (!c) return;
    CHECK_EQ_INT(rtg_targets_from_clip(g1, c, NULL, &t, &e), RT_EINVAL);
    CHECK(strstr(e.msg, "cannot map") != NULL);
    CHECK(strstr(e.msg, "foot") != NULL);
    CHECK(t.n_frames == 0 && t.pos == NULL);
    kin_clip_free(c);
    c = test_load_clip("clips/edge/example.bvh");
    CHECK(c != NULL);
    if (!c) return;
    CHECK_EQ_INT(rtg_targets_from_clip(g1, c, NULL, &t, &e), RT_OK);
    rtg_targets_free(&t);
    /* An explicit profile names what the clip lacks. */
    struct rtg_profile *p = NULL;
    CHECK_EQ_INT(rtg_profile_load("cmu_g1", &p, &e), RT_OK);
    if (p) {
        CHECK_EQ_INT(rtg_targets_from_clip(g1, c, p, &t, &e), RT_EINVAL);
        CHECK(strstr(e.msg, "LeftLeg") != NULL);
    }
    rtg_profile_free(p);
    kin_clip_free(c);
}

/* The message of a profile that cannot map: no empty "missing ;" list,
 * within struct rt_err's msg without a cut name, every missing joint and
 * link named (the "and N more" tail is only for lists past its size). */
static void test_missing_message(void)
{
    struct kin_robot *h1 = NULL;
    struct rtg_profile *p = NULL;
    struct rtg_targets t;
    struct rt_err e;
    struct kin_clip *rf = test_load_clip("clips/run_forward.bvh");
    struct kin_clip *ex = test_load_clip("clips/edge/example.bvh");
    CHECK(rf != NULL);
    CHECK(ex != NULL);
    CHECK_EQ_INT(kin_robot_load("h1", &h1, &e), RT_OK);
    if (!rf || !ex || !h1) goto done;
    /* Only links missing: a G1 profile on the H1. */
    CHECK_EQ_INT(rtg_profile_load("games105_g1", &p, &e), RT_OK);
    CHECK_EQ_INT(rtg_targets_from_clip(h1, rf, p, &t, &e), RT_EINVAL);
    CHECK(strstr(e.msg, "missing ;") == NULL);
    CHECK(strstr(e.msg, "joints") == NULL);
    CHECK(strstr(e.msg, "'games105_g1' cannot map this source; missing links ") == e.msg);
    CHECK(strlen(e.msg) < sizeof e.msg - 1);
    size_t n = strlen(e.msg);
    CHECK(n > 5 && (!strcmp(e.msg + n - 5, " more") || !strcmp(e.msg + n - 5, "_link")));
    if (n <= 5 || (strcmp(e.msg + n - 5, " more") && strcmp(e.msg + n - 5, "_link")))
        fprintf(stderr, "  cut message: '%s'\n", e.msg);
    rtg_profile_free(p);
    p = NULL;
    /* Joints and links missing: both lists, whole (struct rt_err holds
     * every name a profile can list, base/status.h). */
    CHECK_EQ_INT(rtg_profile_load("cmu_g1", &p, &e), RT_OK);
    CHECK_EQ_INT(rtg_targets_from_clip(h1, ex, p, &t, &e), RT_EINVAL);
    CHECK(strstr(e.msg, "missing joints ") != NULL);
    CHECK(strstr(e.msg, "; links ") != NULL);
    CHECK(strstr(e.msg, " more") == NULL);
    n = strlen(e.msg);
    CHECK(n < sizeof e.msg - 1 && n > 5 && !strcmp(e.msg + n - 5, "_link"));
    if (n <= 5 || strcmp(e.msg + n - 5, "_link")) fprintf(stderr, "  cut message: '%s'\n", e.msg);
done:
    rtg_profile_free(p);
    kin_robot_free(h1);
    kin_clip_free(rf);
    kin_clip_free(ex);
}

/* Targets of a standing-then-moving clip: feet on the ground, contacts,
 * anchors fixed over each contact interval, root starting above the origin. */
static void test_targets(const struct kin_robot *g1)
{
    struct kin_clip *c = test_load_clip("clips/cmu_12_01_walk.bvh");
    struct rtg_targets t;
    struct rt_err e;
    CHECK(c != NULL);
    if (!c) return;
    CHECK_EQ_INT(rtg_targets_from_clip(g1, c, NULL, &t, &e), RT_OK);
    if (t.pos) {
        CHECK_EQ_INT(t.n_frames, c->n_frames);
        CHECK_NEAR(t.frame_time, c->frame_time, 1e-12);
        CHECK_NEAR(t.pos[0], 0, 1e-6); /* root x, y of frame 0 at the origin */
        CHECK_NEAR(t.pos[1], 0, 1e-6);
        CHECK(t.pos[2] > 0.5f && t.pos[2] < 1.0f); /* pelvis at G1 height */
        CHECK(t.contact != NULL);
        CHECK(t.foot_link[0] == kin_robot_link_index(g1, "left_ankle_roll_link"));
        int k = -1, n_contact = 0, below = 0, moved = 0;
        for (int i = 0; i < t.n_targets; i++)
            if (t.target_link[i] == t.foot_link[0]) k = i;
        CHECK(k >= 0);
        for (int f = 0; k >= 0 && f < t.n_frames; f++) {
            const float *p = t.pos + 3 * ((size_t)f * t.n_targets + k);
            if (p[2] < 0.038f - 1e-6f) below++;
            if (t.contact[2 * f]) {
                n_contact++;
                CHECK_NEAR(p[2], 0.038, 1e-6); /* sole + 3 mm */
                if (f > 0 && t.contact[2 * (f - 1)]) {
                    const float *q = p - 3 * t.n_targets;
                    if (p[0] != q[0] || p[1] != q[1]) moved++;
                }
            }
        }
        CHECK_EQ_INT(below, 0);
        CHECK_EQ_INT(moved, 0); /* one anchor per contact interval */
        /* The foot's position weight: contact_weight in contact, the link's
         * weight beyond the blend window (0.1 s) of every contact, and in
         * the window between the two: after a contact followed by a long
         * gap, the first swing frame closer to contact_weight than the
         * frame after it. */
        int w = (int)floor(0.1 / t.frame_time + 0.5), far = 0, blend = 0, bad = 0;
        float wc = -1, ws = -1;
        for (int f = 0; k >= 0 && f < t.n_frames; f++) {
            float wf = t.wpos[(size_t)f * t.n_targets + k];
            int near = 0;
            for (int g = f - w; g <= f + w; g++)
                if (g >= 0 && g < t.n_frames && t.contact[2 * g]) near = 1;
            if (t.contact[2 * f]) {
                if (wc < 0) wc = wf;
                bad += wf != wc;
            } else if (!near) {
                if (ws < 0) ws = wf;
                bad += wf != ws;
                far++;
            }
        }
        CHECK_NEAR(wc, 10.0, 1e-6); /* the bundled profiles' contact_weight */
        CHECK(ws > 0 && ws < wc);
        CHECK(far > 0);
        for (int f = 1; k >= 0 && f + 2 * w + 2 < t.n_frames; f++) {
            /* a contact's end followed by a gap longer than two windows */
            int gap = t.contact[2 * (f - 1)] != 0;
            for (int g = f; gap && g <= f + 2 * w + 1; g++) gap = !t.contact[2 * g];
            if (!gap) continue;
            float a = t.wpos[(size_t)f * t.n_targets + k], b = t.wpos[(size_t)(f + 1) * t.n_targets + k];
            blend++;
            bad += !(a < wc && a > b && b > ws);
        }
        CHECK(blend > 0);
        CHECK_EQ_INT(bad, 0);
        CHECK(n_contact > t.n_frames / 5);
        CHECK(t.init != NULL);
    }
    rtg_targets_free(&t);
    kin_clip_free(c);
}

/* The feet's anchors kept apart: the real 01_01.bvh onto Booster T1 (MJCF),
 * whose feet are wider than the source's stance; in every frame where both
 * feet are in contact, the two foot links' capsules posed at their targets
 * are at least RTG_ANCHOR_CLEARANCE apart, and each contact interval keeps
 * one anchor. */
static void test_anchors_apart(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/robots/T1_serial.xml", test_data_dir());
    struct kin_robot *r = NULL;
    struct kin_clip *c = test_load_clip("clips/01_01.bvh");
    struct rtg_targets t;
    struct rt_err e;
    struct kin_capsule *caps = NULL;
    int nc = 0;
    memset(&t, 0, sizeof t);
    CHECK(c != NULL);
    CHECK_EQ_INT(kin_robot_load(path, &r, &e), RT_OK);
    if (!c || !r) goto done;
    CHECK_EQ_INT(rtg_targets_from_clip(r, c, NULL, &t, &e), RT_OK);
    CHECK_EQ_INT(kin_robot_capsules(r, &caps, &nc, &e), RT_OK);
    if (!t.pos || !t.contact) goto done;
    int k[2] = {-1, -1};
    for (int i = 0; i < t.n_targets; i++)
        for (int side = 0; side < 2; side++)
            if (t.target_link[i] == t.foot_link[side]) k[side] = i;
    CHECK(k[0] >= 0 && k[1] >= 0);
    int both = 0, close = 0, moved = 0;
    double nearest = INFINITY;
    for (int f = 0; k[0] >= 0 && k[1] >= 0 && f < t.n_frames; f++) {
        for (int side = 0; side < 2; side++)
            if (f > 0 && t.contact[2 * f + side] && t.contact[2 * (f - 1) + side]) {
                const float *p = t.pos + 3 * ((size_t)f * t.n_targets + k[side]), *q = p - 3 * t.n_targets;
                if (p[0] != q[0] || p[1] != q[1]) moved++;
            }
        if (!t.contact[2 * f] || !t.contact[2 * f + 1]) continue;
        both++;
        double w[2][2][3];
        for (int a = 0; a < nc; a++)
            for (int b = 0; b < nc; b++) {
                if (caps[a].link != t.foot_link[0] || caps[b].link != t.foot_link[1]) continue;
                const struct kin_capsule *cs[2] = {&caps[a], &caps[b]};
                for (int side = 0; side < 2; side++) {
                    size_t i = (size_t)f * t.n_targets + k[side];
                    double q[4] = {t.rot[4 * i], t.rot[4 * i + 1], t.rot[4 * i + 2], t.rot[4 * i + 3]}, m[9];
                    double pos[3] = {t.pos[3 * i], t.pos[3 * i + 1], t.pos[3 * i + 2]};
                    kin_quat_to_mat(q, m);
                    kin_capsule_at(cs[side], pos, m, w[side][0], w[side][1]);
                }
                double pa[3], pb[3], d2 = 0;
                kin_segment_closest(w[0][0], w[0][1], w[1][0], w[1][1], pa, pb);
                for (int x = 0; x < 3; x++) d2 += (pa[x] - pb[x]) * (pa[x] - pb[x]);
                double d = sqrt(d2) - caps[a].radius - caps[b].radius;
                if (d < nearest) nearest = d;
                if (d < RTG_ANCHOR_CLEARANCE - 1e-4) close++;
            }
    }
    printf("anchors apart (T1 MJCF, 01_01.bvh): %d frames with both feet down, nearest foot capsules %.4f m, "
           "%d closer than %.3f m\n", both, nearest, close, RTG_ANCHOR_CLEARANCE);
    CHECK(both > 100);
    CHECK_EQ_INT(close, 0);
    CHECK_EQ_INT(moved, 0);
done:
    free(caps);
    rtg_targets_free(&t);
    kin_clip_free(c);
    kin_robot_free(r);
}

/* Quality figures against a reference model: a trajectory equal to its own
 * FK targets has zero error; jerk of q = a t^3 is 6a. */
static void test_quality_model(const struct kin_robot *g1)
{
    struct rtg_targets t;
    struct rt_err e;
    int n = 8, cols = RT_ROOT_COLS + g1->n_dof;
    int link = kin_robot_link_index(g1, "left_knee_link");
    CHECK_EQ_INT(rtg_targets_alloc(&t, g1, n, 1, &e), RT_OK);
    if (!t.pos) return;
    t.frame_time = 0.1;
    t.target_link[0] = link;
    float *state = calloc((size_t)n * cols, sizeof(float));
    double *x = calloc((size_t)cols, sizeof(double)), *lp = malloc((size_t)g1->n_links * 3 * sizeof(double)),
           *lr = malloc((size_t)g1->n_links * 9 * sizeof(double));
    int j_knee = -1;
    for (int j = 0; j < g1->n_dof; j++)
        if (strcmp(g1->joints[g1->coord_joint[j]].name, "left_knee_joint") == 0) j_knee = j;
    for (int f = 0; f < n; f++) {
        float *s = state + (size_t)f * cols;
        double tt = f * 0.1;
        s[2] = 0.8f;
        s[6] = 1.0f;
        s[RT_ROOT_COLS + j_knee] = (float)(0.5 * tt * tt * tt); /* a = 0.5: jerk 3 rad/s^3 */
        for (int c = 0; c < cols; c++) x[c] = s[c];
        kin_fk(g1, x, lp, lr);
        for (int c = 0; c < 3; c++) t.pos[3 * f + c] = (float)lp[3 * link + c];
        t.wpos[f] = 1.0f;
    }
    struct rtg_quality q;
    CHECK_EQ_INT(rtg_quality_compute(g1, &t, state, n, &q, NULL, NULL), RT_OK);
    CHECK_NEAR(q.pos_m.mean, 0, 1e-6);
    CHECK_EQ_INT(q.pos_m.n, n);
    CHECK_EQ_INT(q.rot_deg.n, 0);
    CHECK_NEAR(q.mean_jerk, 3.0 / g1->n_dof, 1e-3); /* one joint of n_dof moves */
    CHECK_EQ_INT(q.joint_limit_violations, 0);
    /* A knee past its limit is a violation; a pelvis dropped 10 cm with the
     * feet marked puts them through the floor. */
    state[RT_ROOT_COLS + j_knee] = -0.5f;
    t.foot_link[0] = kin_robot_link_index(g1, "left_ankle_roll_link");
    for (int f = 0; f < n; f++) state[(size_t)f * cols + 2] = 0.0f;
    CHECK_EQ_INT(rtg_quality_compute(g1, &t, state, n, &q, NULL, NULL), RT_OK);
    CHECK_EQ_INT(q.joint_limit_violations, 1);
    CHECK(q.ground_penetration_m > 0.5);
    cJSON *j = rtg_quality_json(g1, &t, state, n);
    CHECK(j != NULL);
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(j, "mean_jerk")));
    CHECK(cJSON_IsObject(cJSON_GetObjectItem(j, "position_error_m")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "rotation_error_deg")));
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "links")), 1);
    cJSON_Delete(j);
    free(state);
    free(x);
    free(lp);
    free(lr);
    rtg_targets_free(&t);
}

/* The CPU backend every solve of this test runs on (4 threads, opened in
 * main): one context over many clips and both robots, as the CLI uses it. */
static struct solver_backend cpu_be;
static struct rtg_pool *quality_pool; /* for rtg_quality_finish_on() */

/* Solves `t` (trajectory) into a new state array; NULL on failure. */
static float *solve(const struct kin_robot *r, const struct rtg_targets *t, const struct rtg_profile *p)
{
    struct solver_options opt;
    struct solver_batch b;
    struct solver_clip_result cr;
    struct rt_err e;
    int off[2] = {0, t->n_frames};
    float *state = malloc((size_t)t->n_frames * rt_state_cols(&r->tree) * sizeof(float));
    struct solver_result res = {state, &cr};
    solver_options_default(&opt);
    if (p) rtg_profile_solver_options(p, &opt);
    rtg_targets_batch(r, t, off, &opt, &b);
    if (solver_backend_solve(&cpu_be, &b, &res, &e)) {
        fprintf(stderr, "solve: %s: %s\n", e.where, e.msg);
        free(state);
        return NULL;
    }
    /* The lift and figures as rtg_job_finish() makes them, on this thread
     * and shared out on a pool in pieces of frames: the same bits. */
    size_t bytes = (size_t)t->n_frames * rt_state_cols(&r->tree) * sizeof(float);
    float *shared = malloc(bytes);
    int nt = t->n_targets ? t->n_targets : 1;
    struct rtg_quality_stat *st[4];
    for (int k = 0; k < 4; k++) st[k] = calloc((size_t)nt, sizeof *st[k]);
    struct rtg_quality q1, q2;
    if (shared && st[0] && st[1] && st[2] && st[3]) {
        memcpy(shared, state, bytes);
        CHECK_EQ_INT(rtg_quality_finish(r, t, state, 1, &q1, st[0], st[1]), RT_OK);
        CHECK_EQ_INT(rtg_quality_finish_on(quality_pool, r, t, shared, 1, &q2, st[2], st[3]), RT_OK);
        cJSON *j1 = rtg_quality_to_json(r, t, &q1, st[0], st[1]), *j2 = rtg_quality_to_json(r, t, &q2, st[2], st[3]);
        char *a = j1 ? cJSON_PrintUnformatted(j1) : NULL, *b2 = j2 ? cJSON_PrintUnformatted(j2) : NULL;
        CHECK(a && b2 && !strcmp(a, b2) && !memcmp(state, shared, bytes));
        cJSON_free(a);
        cJSON_free(b2);
        cJSON_Delete(j1);
        cJSON_Delete(j2);
    }
    free(shared);
    for (int k = 0; k < 4; k++) free(st[k]);
    return state;
}

static void test_end_to_end(void)
{
    static const char *const clips[] = {"clips/01_01.bvh", "clips/01_03.bvh", "clips/cmu_12_01_walk.bvh",
                                        "clips/jumping_jacks.bvh", "clips/run_forward.bvh",
                                        "clips/jesse_dance.bvh"};
    static const char *const robots[] = {"g1", "h1"};
    for (int r = 0; r < 2; r++) {
        struct kin_robot *robot = NULL;
        struct rt_err e;
        CHECK_EQ_INT(kin_robot_load(robots[r], &robot, &e), RT_OK);
        if (!robot) continue;
        for (size_t c = 0; c < sizeof clips / sizeof clips[0]; c++) {
            struct kin_clip *clip = test_load_clip(clips[c]);
            struct rtg_targets t;
            CHECK(clip != NULL);
            if (!clip) continue;
            if (clip->n_frames > max_frames()) clip->n_frames = max_frames();
            struct rtg_profile *prof = NULL;
            CHECK_EQ_INT(rtg_retarget_pick_profile(clip, robot, &prof, &e), RT_OK);
            CHECK_EQ_INT(rtg_targets_from_clip(robot, clip, prof, &t, &e), RT_OK);
            float *state = t.pos ? solve(robot, &t, prof) : NULL;
            rtg_profile_free(prof);
            CHECK(state != NULL);
            if (state) {
                struct rtg_quality q;
                CHECK_EQ_INT(rtg_quality_compute(robot, &t, state, t.n_frames, &q, NULL, NULL), RT_OK);
                printf("%s %s: frames %d pos mean %.4f m pen %.4f m limits %d jerk %.1f\n", clips[c],
                       robots[r], t.n_frames, q.pos_m.mean, q.ground_penetration_m,
                       q.joint_limit_violations, q.mean_jerk);
                CHECK_EQ_INT(q.joint_limit_violations, 0);
                CHECK(q.ground_penetration_m <= 0.01);
                CHECK(q.pos_m.mean < 0.03);
            }
            free(state);
            rtg_targets_free(&t);
            kin_clip_free(clip);
        }
        kin_robot_free(robot);
    }
}

/* The comparison on 01_01, onto G1 and H1: >= 3x lower mean jerk
 * than the per-frame baseline at a mean position error no worse than 5%
 * above it. */
static void test_jerk_vs_per_frame(void)
{
    static const char *const robots[] = {"g1", "h1"};
    for (int r = 0; r < 2; r++) {
        struct kin_robot *robot = NULL;
        struct kin_clip *clip = test_load_clip("clips/01_01.bvh");
        struct rtg_targets t;
        struct rt_err e;
        memset(&t, 0, sizeof t);
        CHECK(clip != NULL);
        CHECK_EQ_INT(kin_robot_load(robots[r], &robot, &e), RT_OK);
        if (!clip || !robot) {
            kin_clip_free(clip);
            kin_robot_free(robot);
            return;
        }
        if (clip->n_frames > max_frames()) clip->n_frames = max_frames();
        struct rtg_profile *prof = NULL;
        CHECK_EQ_INT(rtg_retarget_pick_profile(clip, robot, &prof, &e), RT_OK);
        CHECK_EQ_INT(rtg_targets_from_clip(robot, clip, prof, &t, &e), RT_OK);
        float *traj = t.pos ? solve(robot, &t, prof) : NULL;
        size_t pf_n = (size_t)clip->n_frames * rt_state_cols(&robot->tree);
        float *pf = malloc(pf_n * sizeof(float)), *pf1 = malloc(pf_n * sizeof(float));
        struct solver_options opt;
        struct solver_clip_result cr, cr1;
        solver_options_default(&opt);
        CHECK(traj != NULL);
        if (traj && t.pos) {
            CHECK_EQ_INT(rtg_solve_per_frame(&cpu_be, robot, &t, &opt, pf, &cr, &e), RT_OK);
            {   /* the same bits on a fresh one-thread backend */
                struct solver_backend one;
                struct solver_backend_config cfg;
                solver_backend_config_default(&cfg);
                cfg.threads = 1;
                CHECK_EQ_INT(solver_backend_init(&one, "cpu", &cfg, &e), RT_OK);
                CHECK_EQ_INT(rtg_solve_per_frame(&one, robot, &t, &opt, pf1, &cr1, &e), RT_OK);
                CHECK_BITS_EQ(pf1, pf, pf_n);
                CHECK_EQ_INT(cr1.lm_iters, cr.lm_iters);
                CHECK_BITS_EQ(&cr1.final_cost, &cr.final_cost, 1);
                solver_backend_free(&one);
            }
            struct rtg_quality qt, qp;
            CHECK_EQ_INT(rtg_quality_compute(robot, &t, traj, t.n_frames, &qt, NULL, NULL), RT_OK);
            CHECK_EQ_INT(rtg_quality_compute(robot, &t, pf, t.n_frames, &qp, NULL, NULL), RT_OK);
            printf("01_01 %s %d frames: trajectory jerk %.1f pos %.4f max %.4f; per-frame jerk %.1f pos %.4f (%.1fx)\n",
                   robots[r], t.n_frames, qt.mean_jerk, qt.pos_m.mean, qt.pos_m.max, qp.mean_jerk, qp.pos_m.mean,
                   qp.mean_jerk / qt.mean_jerk);
            CHECK(qp.mean_jerk >= 3.0 * qt.mean_jerk);
            CHECK(qt.pos_m.mean <= 1.05 * qp.pos_m.mean);
            CHECK_EQ_INT(qp.joint_limit_violations, 0);
            /* The leading calibration T-pose is held, not chased: no hand
             * (or any link) is left 0.25 m behind in the first frames. */
            CHECK(qt.pos_m.max < 0.15);
        }
        rtg_profile_free(prof);
        free(traj);
        free(pf);
        free(pf1);
        rtg_targets_free(&t);
        kin_clip_free(clip);
        kin_robot_free(robot);
    }
}

/* A G1 trajectory (from a clip) onto H1 through the g1_to_h1 profile. */
static void test_robot_source(void)
{
    struct kin_robot *g1 = NULL, *h1 = NULL;
    struct kin_clip *clip = test_load_clip("clips/cmu_12_01_walk.bvh");
    struct rtg_targets t, t2;
    struct rtg_profile *p = NULL;
    struct rt_err e;
    memset(&t, 0, sizeof t);
    memset(&t2, 0, sizeof t2);
    CHECK_EQ_INT(kin_robot_load("g1", &g1, &e), RT_OK);
    CHECK_EQ_INT(kin_robot_load("h1", &h1, &e), RT_OK);
    CHECK_EQ_INT(rtg_profile_load("g1_to_h1", &p, &e), RT_OK);
    CHECK(clip != NULL);
    if (!clip || !g1 || !h1 || !p) goto done;
    if (clip->n_frames > 120) clip->n_frames = 120;
    CHECK_EQ_INT(rtg_targets_from_clip(g1, clip, NULL, &t, &e), RT_OK);
    float *gs = t.pos ? solve(g1, &t, NULL) : NULL;
    CHECK(gs != NULL);
    if (gs) {
        int cols = rt_state_cols(&g1->tree);
        double *states = malloc((size_t)t.n_frames * cols * sizeof(double));
        for (size_t i = 0; i < (size_t)t.n_frames * cols; i++) states[i] = gs[i];
        CHECK_EQ_INT(rtg_targets_from_robot_traj(h1, g1, states, t.n_frames, t.frame_time, p, &t2, &e), RT_OK);
        /* A BVH profile refuses a robot trajectory and vice versa. */
        struct rtg_targets t3;
        CHECK_EQ_INT(rtg_targets_from_clip(h1, clip, p, &t3, &e), RT_EINVAL);
        float *hs = t2.pos ? solve(h1, &t2, p) : NULL;
        CHECK(hs != NULL);
        if (hs) {
            struct rtg_quality q;
            CHECK_EQ_INT(rtg_quality_compute(h1, &t2, hs, t2.n_frames, &q, NULL, NULL), RT_OK);
            printf("g1 -> h1: pos mean %.4f m pen %.4f limits %d\n", q.pos_m.mean, q.ground_penetration_m,
                   q.joint_limit_violations);
            CHECK(q.pos_m.mean < 0.03);
            CHECK_EQ_INT(q.joint_limit_violations, 0);
            CHECK(q.ground_penetration_m <= 0.01);
        }
        free(hs);
        free(states);
    }
    free(gs);
done:
    rtg_targets_free(&t);
    rtg_targets_free(&t2);
    rtg_profile_free(p);
    kin_clip_free(clip);
    kin_robot_free(g1);
    kin_robot_free(h1);
}

int main(void)
{
    struct kin_robot *g1 = NULL;
    struct rt_err e;
    struct kin_clip *probe = test_load_clip("clips/01_01.bvh");
    if (!probe) TEST_SKIP("shared data not found (set RT_SHARED_DATA)");
    kin_clip_free(probe);
    if (kin_robot_load("g1", &g1, &e)) {
        fprintf(stderr, "g1: %s: %s\n", e.where, e.msg);
        return 1;
    }
    {
        struct solver_backend_config cfg;
        solver_backend_config_default(&cfg);
        cfg.threads = 4;
        if (solver_backend_init(&cpu_be, "cpu", &cfg, &e)) {
            fprintf(stderr, "cpu backend: %s: %s\n", e.where, e.msg);
            return 1;
        }
    }
    if (rtg_pool_create(3, &quality_pool, &e)) return 1;
    test_detect();
    test_unmappable(g1);
    test_missing_message();
    test_targets(g1);
    test_anchors_apart();
    test_quality_model(g1);
    test_end_to_end();
    test_jerk_vs_per_frame();
    test_robot_source();
    kin_robot_free(g1);
    solver_backend_free(&cpu_be);
    rtg_pool_free(quality_pool);
    return test_report("test_retarget");
}
