/* test_job.c -- the job recipe (retarget/job.c): plan errors name what and
 * where; plan + build + solve + finish gives the bytes `retarget solve`
 * writes; a stored plan (an automatic mapping included) builds the same
 * targets without detecting again; bundled profiles are parsed once per
 * process and round-trip through rtg_profile_json(); targets from a robot
 * trajectory; the option table's one range per option; a solver call
 * packed ahead of its solve gives the same bits; the pool's workers
 * retired and started again (rtg_pool_grow). Reads the shared
 * clips and robots (skips without them). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../clients/cli.h"
#include "../kinematics/traj.h"
#include "../retarget/batch.h"
#include "../retarget/engine.h"
#include "../retarget/job.h"
#include "../retarget/output.h"
#include "../solver/backend.h"
#include "clip_util.h"
#include "test.h"

static char *slurp_data(const char *rel, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", test_data_dir(), rel);
    return test_slurp(path, len);
}

static void spec_bvh(struct rtg_job_spec *s, const struct kin_robot *r, const char *text, size_t len)
{
    test_spec_bvh(s, r, text, len, "clip");
    s->profile_where = "body.profile";
    s->profile_hint = "name a profile";
}

/* Plan errors: each names the field the user must fix. */
static void test_plan_errors(const struct kin_robot *g1, const struct kin_robot *h1)
{
    struct rtg_job_spec s;
    struct rtg_job_plan p;
    struct rt_err e;
    const char *bad = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 2 Xposition\n}\n";
    spec_bvh(&s, g1, bad, strlen(bad));
    CHECK(rtg_job_plan(&s, &p, &e) != RT_OK);
    CHECK(!strncmp(e.where, "clip:", 5));
    CHECK(p.clip == NULL && p.profile == NULL);

    size_t len;
    char *jj = slurp_data("clips/jumping_jacks.bvh", &len);
    if (!jj) return;
    spec_bvh(&s, g1, jj, len);
    s.max_frames = 124; /* the clip has 125 */
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_ELIMIT);
    CHECK_EQ_STR(e.where, "clip");
    CHECK(strstr(e.msg, "125 frames: the limit is 124") != NULL);
    s.max_frames = 125;
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_OK);
    CHECK_EQ_INT(p.n_frames, 125);
    rtg_job_plan_free(&p);
    s.max_frames = 0;
    s.max_joints = 1;
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_ELIMIT);
    CHECK(strstr(e.msg, "joints: the limit is 1") != NULL);
    s.max_joints = 0;

    /* A profile that maps another skeleton: its missing joints, at "profile". */
    struct rtg_profile *lafan = NULL;
    CHECK_EQ_INT(rtg_profile_load("lafan1_g1", &lafan, NULL), RT_OK);
    s.profile = lafan;
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_EINVAL);
    CHECK_EQ_STR(e.where, "profile");
    CHECK(strstr(e.msg, "cannot map this source; missing joints") != NULL);
    rtg_profile_free(lafan);
    s.profile = NULL;

    /* A trajectory: its rows are checked against the source robot. */
    const char *row = "0,0,0.8,0,0,0,1,0.1\n";
    memset(&s, 0, sizeof s);
    s.robot = g1;
    s.robot_name = "g1";
    s.source_kind = RTG_SRC_TRAJ;
    s.source = row;
    s.source_len = strlen(row);
    s.source_label = "trajectory";
    s.source_robot = g1;
    s.source_robot_name = "g1";
    s.profile_where = "body.profile";
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_EPARSE);
    CHECK_EQ_STR(e.where, "trajectory:1");
    /* The identity mapping between robots that share too few links. */
    if (h1) {
        char line[1024];
        size_t used = 0;
        for (int c = 0; c < RT_ROOT_COLS + h1->n_dof; c++)
            used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", c ? "," : "", c == 6 ? "1" : "0");
        line[used++] = '\n';
        s.source = line;
        s.source_len = used;
        s.source_robot = h1;
        s.source_robot_name = "myrobot";
        s.robot_name = "other";
        s.profile_hint = "name a profile";
        /* h1 -> g1 has no bundled pair profile under these names or the URDF names. */
        enum rt_status st = rtg_job_plan(&s, &p, &e);
        if (st != RT_OK) {
            CHECK_EQ_STR(e.where, "body.profile");
            CHECK(strstr(e.msg, "no mapping from robot 'myrobot' to 'other': name a profile") != NULL);
        } else {
            rtg_job_plan_free(&p);
        }
    }
    free(jj);
}

/* Plan + build + solve + finish == the CSV and report `retarget solve` writes. */
static void test_same_as_cli(const struct kin_robot *g1)
{
    char dir[] = "/tmp/test_job_XXXXXX", src[512], out[600];
    size_t len, clen;
    if (!mkdtemp(dir)) return;
    snprintf(src, sizeof src, "%s/clips/run_forward.bvh", test_data_dir());
    char *argv[] = {src, "--robot", "g1", "-o", dir, "--quiet", "--threads", "2", "--backend", "cpu", NULL};
    struct rt_err e;
    CHECK_EQ_INT(cli_solve_err(10, argv, &e), 0);
    char *text = test_slurp(src, &len);
    if (!text) return;
    struct rtg_job_spec s;
    struct rtg_job_plan p;
    struct rtg_targets t;
    spec_bvh(&s, g1, text, len);
    s.source_label = src;
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_OK);
    CHECK_EQ_STR(p.profile_name, "games105_g1");
    CHECK_EQ_INT(rtg_job_build(g1, &p, &t, &e), RT_OK);
    struct solver_backend be;
    CHECK_EQ_INT(rtg_backend_init(&be, "cpu", 2, &e), RT_OK);
    struct rtg_batch_item item = {.t = &t};
    CHECK_EQ_INT(rtg_batch_solve(NULL, &be, g1, &p.opt, &item, 1, NULL, NULL, &e), RT_OK);
    cJSON *rep = NULL;
    struct rtg_report_info info = {.source = src, .robot = g1->name, .profile = p.profile_name,
                                   .backend = "cpu", .mode = "trajectory", .threads = 2, .batch_clips = 1};
    CHECK_EQ_INT(rtg_job_finish(NULL, g1, &t, item.state, 1, &info, &item.res, &rep, &e), RT_OK);
    char *mem = NULL;
    size_t mlen = 0;
    const char **names = malloc((size_t)rt_state_cols(&g1->tree) * sizeof *names);
    CHECK_EQ_INT(rtg_csv_format(names, rtg_columns(g1, names), item.state, t.n_frames, &mem, &mlen), RT_OK);
    snprintf(out, sizeof out, "%s/run_forward.csv", dir);
    char *cli = test_slurp(out, &clen);
    CHECK(cli && clen == mlen && !memcmp(cli, mem, mlen));
    /* The report too, but for the wall time. */
    cJSON *sv = cJSON_GetObjectItem(rep, "solver");
    snprintf(out, sizeof out, "%s/run_forward.report.json", dir);
    char *crep = test_slurp(out, &clen);
    cJSON *cj = crep ? cJSON_Parse(crep) : NULL;
    cJSON_DeleteItemFromObject(sv, "seconds");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(cj, "solver"), "seconds");
    char *a = cJSON_Print(rep), *b = cj ? cJSON_Print(cj) : NULL;
    CHECK(a && b && !strcmp(a, b));
    cJSON_free(a);
    cJSON_free(b);
    cJSON_Delete(cj);
    cJSON_Delete(rep);
    free(crep);
    free(cli);
    free(mem);
    free(names);
    free(item.state);
    rtg_targets_free(&t);
    rtg_job_plan_free(&p);
    solver_backend_free(&be);
    free(text);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

/* A task that waits (at most 5 s) until `want` tasks run at once. */
struct meet {
    atomic_int in;
    int want, met[8];
};
static struct meet meet_all;
static void meet_task(void *arg)
{
    int k = (int)(size_t)arg, n = atomic_fetch_add(&meet_all.in, 1) + 1;
    double t0 = rt_now();
    while (n < meet_all.want && rt_now() - t0 < 5.0) n = atomic_load(&meet_all.in);
    meet_all.met[k] = n >= meet_all.want;
}

/* A call packed ahead (rtg_batch_pack, page-locked arrays where the
 * backend has them, the state block touched there) and solved from what
 * is packed (rtg_batch_solve_packed) gives rtg_batch_solve()'s bits, the
 * states in one block at the clips' offsets; rtg_batch_packed() knows the
 * clips packed until they are solved; solving other clips than those
 * packed, or the same packing twice, is refused. And the pool's
 * workers retired and started again. */
static void test_packed(const struct kin_robot *g1)
{
    static const char *const names[2] = {"clips/01_01.bvh", "clips/01_03.bvh"};
    struct rtg_job_plan p[2];
    struct rtg_targets t[2];
    char *text[2];
    struct rt_err e;
    memset(p, 0, sizeof p);
    memset(t, 0, sizeof t);
    for (int k = 0; k < 2; k++) {
        size_t len;
        struct rtg_job_spec s;
        text[k] = slurp_data(names[k], &len);
        if (!text[k]) return;
        spec_bvh(&s, g1, text[k], len);
        CHECK_EQ_INT(rtg_job_plan(&s, &p[k], &e), RT_OK);
        p[k].opt.max_lm_iters = 2; /* a short solve: the bits, not the motion */
        CHECK_EQ_INT(rtg_job_build(g1, &p[k], &t[k], &e), RT_OK);
    }
    CHECK(rtg_targets_same_weights(g1, &t[0], &t[1]));
    struct solver_backend be;
    struct rtg_pool *pool = NULL;
    CHECK_EQ_INT(rtg_backend_init(&be, "cpu", 2, &e), RT_OK);
    CHECK_EQ_INT(rtg_pool_create(3, &pool, &e), RT_OK);
    struct rtg_batch_item a[2] = {{.t = &t[0]}, {.t = &t[1]}}, b[2] = {{.t = &t[0]}, {.t = &t[1]}};
    struct rtg_batch_item sw[2] = {{.t = &t[1]}, {.t = &t[0]}};
    CHECK_EQ_INT(rtg_batch_solve(NULL, &be, g1, &p[0].opt, a, 2, NULL, NULL, &e), RT_OK);
    struct rtg_batch_ws ws = {.pool = pool, .pinned = 1, .block_ahead = 1};
    float *block = NULL;
    int cols = rt_state_cols(&g1->tree);
    {
        /* clips of two target layouts are not one batch */
        struct rtg_targets other = t[1];
        other.n_targets--;
        struct rtg_batch_item mixed[2] = {{.t = &t[0]}, {.t = &other}};
        CHECK_EQ_INT(rtg_batch_pack(&ws, &be, g1, mixed, 2, &e), RT_EINVAL);
        CHECK(strstr(e.msg, "clip 1 has") != NULL);
    }
    CHECK_EQ_INT(rtg_batch_pack(&ws, &be, g1, b, 2, &e), RT_OK);
    CHECK(ws.block != NULL);
    /* rtg_batch_packed: the same clips in the same order only */
    CHECK(rtg_batch_packed(&ws, b, 2));
    CHECK(!rtg_batch_packed(&ws, sw, 2));
    CHECK(!rtg_batch_packed(&ws, b, 1));
    CHECK(!rtg_batch_packed(&ws, b, 0));
    CHECK_EQ_INT(rtg_batch_solve_packed(&ws, &be, g1, &p[0].opt, sw, 2, NULL, NULL, &block, &e), RT_ESTATE);
    CHECK(strstr(e.msg, "not the clips solved") != NULL);
    CHECK_EQ_INT(rtg_batch_pack(&ws, &be, g1, b, 2, &e), RT_OK);
    CHECK_EQ_INT(rtg_batch_solve_packed(&ws, &be, g1, &p[0].opt, b, 2, NULL, NULL, &block, &e), RT_OK);
    CHECK(block && b[0].state == block && b[1].state == block + (size_t)t[0].n_frames * cols);
    for (int k = 0; k < 2; k++) {
        CHECK(!memcmp(a[k].state, b[k].state, (size_t)t[k].n_frames * cols * sizeof(float)));
        CHECK(!memcmp(&a[k].res.final_cost, &b[k].res.final_cost, sizeof(float)) &&
              a[k].res.lm_iters == b[k].res.lm_iters && a[k].res.cg_iters == b[k].res.cg_iters);
    }
    float *solved = block;
    CHECK(!rtg_batch_packed(&ws, b, 2)); /* consumed by the solve */
    CHECK_EQ_INT(rtg_batch_solve_packed(&ws, &be, g1, &p[0].opt, b, 2, NULL, NULL, &block, &e), RT_ESTATE);
    CHECK(block == NULL);
    free(solved);
    /* Workers retired finish what they hold; never the last one. */
    CHECK_EQ_INT(rtg_pool_threads(pool), 3);
    rtg_pool_retire(pool, 1);
    CHECK_EQ_INT(rtg_pool_threads(pool), 2);
    rtg_pool_retire(pool, 5);
    CHECK_EQ_INT(rtg_pool_threads(pool), 1);
    /* ... and grown back: three tasks that each wait for the other two
     * all finish only when three workers run them at once. */
    CHECK_EQ_INT(rtg_pool_grow(pool, 2), 2);
    CHECK_EQ_INT(rtg_pool_threads(pool), 3);
    {
        struct rtg_pool_group mg = {0};
        atomic_init(&meet_all.in, 0);
        meet_all.want = 3;
        for (int k = 0; k < 3; k++) rtg_pool_submit(pool, &mg, meet_task, (void *)(size_t)k);
        rtg_pool_wait(pool, &mg);
        CHECK(meet_all.met[0] && meet_all.met[1] && meet_all.met[2]);
    }
    rtg_pool_retire(pool, 2);
    CHECK_EQ_INT(rtg_pool_threads(pool), 1);
    CHECK_EQ_INT(rtg_batch_pack(&ws, &be, g1, b, 2, &e), RT_OK);
    CHECK_EQ_INT(rtg_batch_solve_packed(&ws, &be, g1, &p[0].opt, b, 2, NULL, NULL, NULL, &e), RT_OK);
    for (int k = 0; k < 2; k++) {
        CHECK(!memcmp(a[k].state, b[k].state, (size_t)t[k].n_frames * cols * sizeof(float)));
        free(b[k].state);
        free(a[k].state);
    }
    rtg_batch_ws_free(&ws);
    CHECK(ws.pool == pool && ws.pinned == 1 && ws.block_ahead == 1 && ws.pos == NULL);
    rtg_pool_free(pool);
    solver_backend_free(&be);
    for (int k = 0; k < 2; k++) {
        rtg_targets_free(&t[k]);
        rtg_job_plan_free(&p[k]);
        free(text[k]);
    }
}

static int targets_equal(const struct rtg_targets *x, const struct rtg_targets *y)
{
    size_t m = (size_t)x->n_frames * (size_t)x->n_targets;
    return x->n_frames == y->n_frames && x->n_targets == y->n_targets &&
           !memcmp(x->target_link, y->target_link, (size_t)x->n_targets * sizeof(int)) &&
           !memcmp(x->pos, y->pos, 3 * m * sizeof(float)) && !memcmp(x->rot, y->rot, 4 * m * sizeof(float)) &&
           !memcmp(x->wpos, y->wpos, m * sizeof(float)) && !memcmp(x->wrot, y->wrot, m * sizeof(float)) &&
           x->foot_link[0] == y->foot_link[0] && x->foot_link[1] == y->foot_link[1] &&
           (!x->contact) == (!y->contact) && (!x->contact || !memcmp(x->contact, y->contact, (size_t)x->n_frames * 2)) &&
           !memcmp(&x->units.scale, &y->units.scale, sizeof x->units.scale) && x->units.up == y->units.up &&
           x->units.unit == y->units.unit && x->units.guessed == y->units.guessed &&
           x->units.up_from_body == y->units.up_from_body &&
           !memcmp(&x->units.height_units, &y->units.height_units, sizeof x->units.height_units);
}

/* The stored plan of an automatic mapping builds the same targets, with one
 * parse of the source and no detection (no bundled profile parsed). The
 * plan carries the units its check measured into its build; a plan loaded
 * from the store measures them again: the same targets and units. */
static void test_stored_plan(const struct kin_robot *g1)
{
    static const char *const clips[] = {"clips/edge/example.bvh", "clips/edge/milad.bvh", "clips/jumping_jacks.bvh"};
    for (size_t i = 0; i < sizeof clips / sizeof clips[0]; i++) {
        size_t len;
        char *text = slurp_data(clips[i], &len);
        struct rtg_job_spec s;
        struct rtg_job_plan p, q;
        struct rtg_targets t1, t2;
        struct rt_err e;
        struct rtg_job_counts c0, c1;
        if (!text) continue;
        spec_bvh(&s, g1, text, len);
        CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_OK);
        CHECK(p.units_known && p.units.scale > 0 && p.units.up);
        char *stored = rtg_job_plan_json(&p);
        CHECK(stored != NULL);
        CHECK_EQ_INT(rtg_job_build(g1, &p, &t1, &e), RT_OK);
        {
            /* The submission's plan reads the clip's frames from the text
             * (source_borrow): the same plan, the same targets. */
            struct rtg_job_spec sb = s;
            struct rtg_job_plan pb;
            struct rtg_targets t3;
            sb.source_borrow = 1;
            CHECK_EQ_INT(rtg_job_plan(&sb, &pb, &e), RT_OK);
            CHECK(pb.clip && !pb.clip->motion);
            char *json_b = rtg_job_plan_json(&pb);
            CHECK(json_b && stored && !strcmp(json_b, stored));
            CHECK_EQ_INT(rtg_job_build(g1, &pb, &t3, &e), RT_OK);
            CHECK(targets_equal(&t1, &t3));
            rtg_targets_free(&t3);
            rtg_job_plan_free(&pb);
            free(json_b);
        }
        /* The worker: a named profile is loaded by the caller; an automatic
         * one comes from the plan. */
        struct rtg_profile *named = NULL;
        if (!p.profile_auto) CHECK_EQ_INT(rtg_profile_load(p.profile_name, &named, NULL), RT_OK);
        s.profile = named;
        long parses0 = rtg_profile_parse_count();
        rtg_job_counts_get(&c0);
        CHECK_EQ_INT(rtg_job_plan_load(&s, stored, &q, &e), RT_OK);
        CHECK(!q.units_known);
        rtg_job_counts_get(&c1);
        CHECK_EQ_INT((int)(c1.source_parses - c0.source_parses), 1);
        /* Only the stored mapping, if any, is parsed: never a bundled profile. */
        CHECK_EQ_INT((int)(rtg_profile_parse_count() - parses0), p.profile_auto ? 1 : 0);
        CHECK_EQ_STR(q.profile_name, p.profile_name);
        CHECK(!memcmp(&q.opt, &p.opt, sizeof p.opt));
        CHECK_EQ_INT(rtg_job_build(g1, &q, &t2, &e), RT_OK);
        CHECK(targets_equal(&t1, &t2));
        if (i == 0) CHECK(p.profile_auto && !strncmp(p.profile_name, "auto:", 5));
        rtg_targets_free(&t1);
        rtg_targets_free(&t2);
        rtg_job_plan_free(&p);
        rtg_job_plan_free(&q);
        rtg_profile_free(named);
        free(stored);
        free(text);
    }
}

/* Bundled profiles: parsed once per process, whatever is planned after;
 * and each reads back from rtg_profile_json() as the same profile. */
static void test_bundled_once(const struct kin_robot *g1)
{
    size_t len;
    char *text = slurp_data("clips/cmu_12_01_walk.bvh", &len);
    struct rtg_job_spec s;
    struct rtg_job_plan p;
    if (!text) return;
    spec_bvh(&s, g1, text, len);
    CHECK_EQ_INT(rtg_job_plan(&s, &p, NULL), RT_OK); /* the first use parses them */
    rtg_job_plan_free(&p);
    long n0 = rtg_profile_parse_count();
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(rtg_job_plan(&s, &p, NULL), RT_OK);
        rtg_job_plan_free(&p);
    }
    CHECK_EQ_INT((int)(rtg_profile_parse_count() - n0), 0);
    free(text);
    for (const char *const *b = rtg_profile_bundled(); *b; b++) {
        const struct rtg_profile *bp = rtg_profile_bundled_get(*b);
        CHECK(bp != NULL);
        if (!bp) continue;
        cJSON *j = rtg_profile_json(bp);
        char *t1 = cJSON_PrintUnformatted(j);
        struct rtg_profile *back = NULL;
        CHECK_EQ_INT(rtg_profile_parse(t1, strlen(t1), *b, &back, NULL), RT_OK);
        cJSON *j2 = back ? rtg_profile_json(back) : NULL;
        char *t2 = j2 ? cJSON_PrintUnformatted(j2) : NULL;
        CHECK(t2 && !strcmp(t1, t2));
        if (back) {
            CHECK_EQ_INT(back->n_links, bp->n_links);
            CHECK(back->scale == bp->scale && back->units == bp->units && back->contact_height == bp->contact_height);
        }
        cJSON_free(t1);
        cJSON_free(t2);
        cJSON_Delete(j);
        cJSON_Delete(j2);
        rtg_profile_free(back);
    }
}

/* Targets from a robot trajectory: the identity mapping tracks each link at
 * its source pose. */
static void test_traj_targets(const struct kin_robot *g1)
{
    size_t len;
    char *text = slurp_data("reference/g1/dance1_subject1.csv", &len);
    struct rtg_job_spec s;
    struct rtg_job_plan p;
    struct rtg_targets t;
    if (!text) return;
    memset(&s, 0, sizeof s);
    s.robot = g1;
    s.robot_name = "g1";
    s.source_kind = RTG_SRC_TRAJ;
    s.source = text;
    s.source_len = len;
    s.source_label = "dance.csv";
    s.source_robot = g1;
    s.source_robot_name = "g1";
    CHECK_EQ_INT(rtg_job_options_set_text(&s.opts, RTG_JOB_FPS, "50", "--fps", NULL), RT_OK);
    CHECK_EQ_INT(rtg_job_plan(&s, &p, NULL), RT_OK);
    CHECK(p.profile == NULL && p.profile_name[0] == 0);
    CHECK_NEAR(p.frame_time, 0.02, 1e-15);
    CHECK_EQ_INT(rtg_job_build(g1, &p, &t, NULL), RT_OK);
    CHECK_EQ_INT(t.n_targets, 14);
    CHECK_EQ_INT(t.n_frames, p.n_frames);
    double *lp = malloc((size_t)g1->n_links * 3 * sizeof *lp), *lr = malloc((size_t)g1->n_links * 9 * sizeof *lr);
    int cols = RT_ROOT_COLS + g1->n_dof;
    double worst = 0;
    for (int f = 0; f < t.n_frames; f += 97) {
        kin_fk(g1, p.states + (size_t)f * cols, lp, lr);
        for (int k = 0; k < t.n_targets; k++)
            for (int c = 0; c < 3; c++) {
                double d = fabs(lp[3 * t.target_link[k] + c] - t.pos[3 * ((size_t)f * t.n_targets + k) + c]);
                if (d > worst) worst = d;
            }
    }
    CHECK(worst < 1e-6);
    free(lp);
    free(lr);
    rtg_targets_free(&t);
    rtg_job_plan_free(&p);
    free(text);
}

/* One range per option: the CLI text reader, the JSON reader and the
 * solver's check agree at N and N+1. */
static void test_option_ranges(void)
{
    struct rtg_job_options o;
    struct rt_err e;
    memset(&o, 0, sizeof o);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_MAX_LM, "10000", "--max-lm", &e), RT_OK);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_MAX_LM, "10001", "--max-lm", &e), RT_EINVAL);
    CHECK_EQ_STR(e.msg, "expected an integer in [0, 10000], got '10001'");
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_CG_TOL, "0", "--cg-tol", &e), RT_OK);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_CG_TOL, "1", "--cg-tol", &e), RT_EINVAL);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_CG_TOL, "0x0.1p0", "--cg-tol", &e), RT_EINVAL);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_FPS, "0", "--fps", &e), RT_EINVAL);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_FPS, "10000", "--fps", &e), RT_OK);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_LINEAR, "direct", "--linear", &e), RT_OK);
    CHECK_EQ_INT(rtg_job_options_set_text(&o, RTG_JOB_LINEAR, "lu", "--linear", &e), RT_EINVAL);
    cJSON *j = cJSON_Parse("{\"max_lm_iters\":10001}");
    CHECK_EQ_INT(rtg_job_options_from_json(j, "body.options", &o, &e), RT_EINVAL);
    CHECK_EQ_STR(e.where, "body.options.max_lm_iters");
    CHECK_EQ_STR(e.msg, "expected an integer in [0, 10000]");
    cJSON_Delete(j);
    j = cJSON_Parse("{\"max_lm_iters\":10000,\"cg_tol\":0,\"linear\":\"direct\",\"max_cg_iters\":1}");
    CHECK_EQ_INT(rtg_job_options_from_json(j, "body.options", &o, &e), RT_OK);
    char *canon = rtg_job_options_json(&o);
    CHECK_EQ_STR(canon, "{\"max_lm_iters\":10000,\"max_cg_iters\":1,\"cg_tol\":0,\"linear\":\"direct\"}");
    free(canon);
    cJSON_Delete(j);
    /* The solver takes the table's extremes and refuses one past them. */
    struct solver_options so;
    solver_options_default(&so);
    rtg_job_options_apply(&o, &so);
    CHECK_EQ_INT(so.max_lm_iters, SOLVER_MAX_LM_ITERS);
    CHECK_EQ_INT(so.linear, SOLVER_LINEAR_DIRECT);
    CHECK((int)rtg_job_option(RTG_JOB_MAX_LM)->hi == SOLVER_MAX_LM_ITERS);
    CHECK((int)rtg_job_option(RTG_JOB_MAX_CG)->hi == SOLVER_MAX_CG_ITERS);
}

int main(void)
{
    struct kin_robot *g1 = NULL, *h1 = NULL;
    test_option_ranges();
    char probe[512];
    snprintf(probe, sizeof probe, "%s/clips/jumping_jacks.bvh", test_data_dir());
    if (access(probe, R_OK)) TEST_SKIP("no shared data");
    CHECK_EQ_INT(kin_robot_load("g1", &g1, NULL), RT_OK);
    CHECK_EQ_INT(kin_robot_load("h1", &h1, NULL), RT_OK);
    if (!g1) return test_report("test_job");
    test_plan_errors(g1, h1);
    test_same_as_cli(g1);
    test_packed(g1);
    test_stored_plan(g1);
    test_bundled_once(g1);
    test_traj_targets(g1);
    kin_robot_free(g1);
    kin_robot_free(h1);
    return test_report("test_job");
}
