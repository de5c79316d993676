/* test_plans.c -- parsed plans handed from a submission to the worker
 * (server/plans.h).
 *  1. The cache alone, with plans of windows of the real G1 reference
 *     trajectory: a plan taken is the one put; the oldest go first when a
 *     new one needs room; a plan past SRV_PLANS_ONE, one larger than the
 *     budget, a BVH plan and any plan with a budget of 0 are not kept (the
 *     caller keeps them); clear drops them all.
 *  2. The daemon: trajectory jobs built from the submissions' plans give
 *     `retarget solve`'s bytes (retargetd_builds_total{from="submission"});
 *     a robot uploaded while a job is queued drops its plan, and the job is
 *     built from the store, the same bytes; with --plan-cache-mb 0 every
 *     job is built from the store, the same bytes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kinematics/robot.h"
#include "../retarget/job.h"
#include "../server/plans.h"
#include "http_util.h"

static char dir[64];

/* A plan of rows [from, from + n) of the reference (text `ref`) on `g1`. */
static int plan_of(const char *ref, int from, int n, const struct kin_robot *g1, struct rtg_job_plan *plan)
{
    char *rows = lines_of(ref, from, n);
    struct rtg_job_spec spec;
    struct rt_err err;
    memset(&spec, 0, sizeof spec);
    spec.robot = g1;
    spec.robot_name = "g1";
    spec.source_kind = RTG_SRC_TRAJ;
    spec.source = rows;
    spec.source_len = rows ? strlen(rows) : 0;
    spec.source_label = "trajectory";
    spec.source_robot = g1;
    spec.source_robot_name = "g1";
    int ok = rows && rtg_job_plan(&spec, plan, &err) == RT_OK;
    free(rows);
    return ok;
}

static void test_cache(const char *ref)
{
    struct kin_robot *g1[4] = {NULL};
    struct rt_err err;
    struct rtg_job_plan p[4], got;
    struct kin_robot *src = NULL;
    struct srv_plans *c = NULL;
    int n;
    size_t bytes;
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(kin_robot_load("g1", &g1[i], &err), RT_OK);
        CHECK(g1[i] && plan_of(ref, 100 * i, 300, g1[i], &p[i]));
        if (!g1[i]) return;
    }
    size_t one = srv_plans_bytes(&p[0]);
    CHECK(one == (size_t)300 * (size_t)(RT_ROOT_COLS + g1[0]->n_dof) * sizeof(double));
    /* Room for two with the robot each keeps (tens of KB): the third
     * pushes the first out. */
    CHECK_EQ_INT(srv_plans_create(2 * one + 200000, &c, &err), RT_OK);
    double first = p[0].states[7];
    CHECK_EQ_INT(srv_plans_put(c, 10, &p[0], g1[0]), 1);
    CHECK(p[0].states == NULL); /* owned by the cache now */
    CHECK_EQ_INT(srv_plans_put(c, 11, &p[1], g1[1]), 1);
    srv_plans_count(c, &n, &bytes);
    CHECK_EQ_INT(n, 2);
    CHECK(bytes >= 2 * one);
    CHECK_EQ_INT(srv_plans_put(c, 12, &p[2], g1[2]), 1);
    srv_plans_count(c, &n, &bytes);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(srv_plans_take(c, 10, &got, &src), 0); /* evicted */
    CHECK_EQ_INT(srv_plans_take(c, 12, &got, &src), 1);
    CHECK(src == g1[2] && got.source_robot == g1[2] && got.n_frames == 300 && got.states);
    rtg_job_plan_free(&got);
    kin_robot_free(src);
    CHECK_EQ_INT(srv_plans_take(c, 12, &got, &src), 0); /* taken once */
    /* A plan past SRV_PLANS_ONE is not kept: the caller still has it. */
    int frames = p[3].n_frames;
    p[3].n_frames = (int)(SRV_PLANS_ONE / ((size_t)(RT_ROOT_COLS + g1[3]->n_dof) * sizeof(double))) + 1;
    CHECK_EQ_INT(srv_plans_put(c, 13, &p[3], g1[3]), 0);
    CHECK(p[3].states != NULL);
    p[3].n_frames = frames;
    /* Not a trajectory: not kept. */
    p[3].source_kind = RTG_SRC_BVH;
    CHECK_EQ_INT(srv_plans_put(c, 13, &p[3], g1[3]), 0);
    p[3].source_kind = RTG_SRC_TRAJ;
    srv_plans_clear(c);
    srv_plans_count(c, &n, &bytes);
    CHECK_EQ_INT(n, 0);
    CHECK(bytes == 0);
    CHECK_EQ_INT(srv_plans_take(c, 11, &got, &src), 0);
    srv_plans_free(c);
    /* A cache of no budget keeps nothing; one smaller than a plan neither. */
    CHECK_EQ_INT(srv_plans_create(0, &c, &err), RT_OK);
    CHECK_EQ_INT(srv_plans_put(c, 1, &p[3], g1[3]), 0);
    srv_plans_free(c);
    CHECK_EQ_INT(srv_plans_create(one / 2, &c, &err), RT_OK);
    CHECK_EQ_INT(srv_plans_put(c, 1, &p[3], g1[3]), 0);
    /* The same plan, kept, is the same frames. */
    srv_plans_free(c);
    CHECK_EQ_INT(srv_plans_create(4 * one, &c, &err), RT_OK);
    struct rtg_job_plan again;
    CHECK(plan_of(ref, 0, 300, g1[3], &again));
    CHECK_EQ_INT(srv_plans_put(c, 5, &again, g1[3]), 1);
    CHECK_EQ_INT(srv_plans_take(c, 5, &got, &src), 1);
    CHECK(got.states && got.states[7] == first);
    rtg_job_plan_free(&got);
    srv_plans_free(c); /* frees nothing more: g1[3] went with `got`'s take */
    kin_robot_free(src);
    rtg_job_plan_free(&p[3]);
    printf("cache: %zu bytes a 300-frame plan; eviction, limits and clear as documented\n", one);
}

/* retargetd_builds_total{from="FROM"} from GET /v1/metrics (-1: absent). */
static long long builds(const char *from)
{
    char *m = NULL, key[64];
    long long v = -1;
    http(NULL, "GET", "/v1/metrics", NULL, 0, NULL, &m);
    snprintf(key, sizeof key, "retargetd_builds_total{from=\"%s\"} ", from);
    const char *at = m ? strstr(m, key) : NULL;
    if (at) v = strtoll(at + strlen(key), NULL, 10);
    free(m);
    return v;
}

static void check_done(long long id, const char *name)
{
    char state[16];
    http_wait(NULL, id, state);
    CHECK_EQ_STR(state, "succeeded");
    CHECK(result_is_ref(id, dir, name));
}

static void test_daemon(const char *ref)
{
    static const char *const names[4] = {"kept", "replaced", "kept2", "nocache"};
    char *body[4], path[512];
    for (int i = 0; i < 4; i++) {
        char *rows = lines_of(ref, 300 * i, 120);
        body[i] = rows ? window_job(dir, names[i], rows, 1) : NULL;
        free(rows);
        CHECK(body[i] != NULL);
        if (!body[i]) return;
    }
    struct srv_config cfg;
    srv_config_default(&cfg);
    snprintf(path, sizeof path, "%s/plans.db", dir);
    cfg.db_path = path;
    cfg.no_auth = 1;
    cfg.solver_threads = 2;
    cfg.batch_wait_ms = 0;
    struct srv *s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return;
    check_done(http_submit(body[0]), names[0]);
    CHECK_EQ_INT(builds("submission"), 1);
    CHECK_EQ_INT(builds("store"), 0);
    srv_stop(s);
    /* A robot replaced while a job waits: its plan is dropped, the job is
     * built from the store. The batch window holds the job queued. */
    cfg.batch_wait_ms = 1500;
    s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return;
    size_t ulen = 0;
    char upath[512];
    snprintf(upath, sizeof upath, "%s/robots/panda.urdf", test_data_dir());
    char *urdf = test_slurp(upath, &ulen);
    CHECK(urdf != NULL);
    long long id = http_submit(body[1]);
    CHECK_EQ_INT(http(NULL, "PUT", "/v1/robots/arm", urdf, ulen, NULL, NULL), 201);
    check_done(id, names[1]);
    CHECK_EQ_INT(builds("submission"), 0);
    CHECK_EQ_INT(builds("store"), 1);
    check_done(http_submit(body[2]), names[2]);
    CHECK_EQ_INT(builds("submission"), 1);
    srv_stop(s);
    free(urdf);
    /* --plan-cache-mb 0: from the store. */
    cfg.batch_wait_ms = 0;
    cfg.plan_cache_mb = 0;
    s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return;
    check_done(http_submit(body[3]), names[3]);
    CHECK_EQ_INT(builds("submission"), 0);
    CHECK_EQ_INT(builds("store"), 1);
    srv_stop(s);
    for (int i = 0; i < 4; i++) cJSON_free(body[i]);
    printf("daemon: jobs built from their submissions' plans and from the store give retarget solve's bytes\n");
}

int main(void)
{
    char *ref = ref_trajectory_in(dir, "test_plans");
    test_cache(ref);
    test_daemon(ref);
    free(ref);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_plans");
}
