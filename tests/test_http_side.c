/* test_http_side.c -- the scheduler's side lane: a short group is solved
 * beside a long batch, not after it.
 *
 * RT_SIDE_CPU=1 gives the daemon a side lane beside its CPU backend (on a
 * GPU it has one of its own: rtg_backend_init_side). The test is linked
 * with -Wl,--wrap=rtg_batch_solve (the Makefile): a call that holds the
 * "hold" trajectory (the real G1 reference five times over, 19,725 frames,
 * past the side lane's SCHED_SIDE_FRAMES, so the main worker's) keeps its
 * worker there after the real solve until the test lets it go. While the
 * main worker holds, a short BVH clip (run_forward, 45 frames) is solved
 * by the side lane (one call seen by the wrapper meanwhile): it succeeds
 * before the hold is let go, with `retarget solve`'s bytes; then the hold
 * job succeeds too. (test_crash_alone runs its crashes with a side lane
 * as well: a job retried alone is run by itself.) */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_util.h"
#include "wrap_solve.h"

#define HOLD_FRAMES (5 * 3945)

static atomic_int holding, release_hold, side_calls;

enum rt_status __wrap_rtg_batch_solve(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                                      const struct solver_options *opt, struct rtg_batch_item *items, int n,
                                      void (*progress)(void *user, int lm_iter, int clips_done),
                                      void *progress_user, struct rt_err *err)
{
    int hold = 0;
    for (int i = 0; i < n; i++) hold |= items[i].t->n_frames == HOLD_FRAMES;
    if (!hold && atomic_load(&holding)) atomic_fetch_add(&side_calls, 1);
    enum rt_status st = __real_rtg_batch_solve(ws, be, robot, opt, items, n, progress, progress_user, err);
    if (hold) wrap_hold(&holding, &release_hold);
    return st;
}

static char dir[64];

static const char *job_state(long long id, char state[16])
{
    char path[64], *body = NULL;
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    http(NULL, "GET", path, NULL, 0, NULL, &body);
    cJSON *j = body ? cJSON_Parse(body) : NULL, *st = cJSON_GetObjectItemCaseSensitive(j, "state");
    snprintf(state, 16, "%s", cJSON_IsString(st) ? st->valuestring : "?");
    cJSON_Delete(j);
    free(body);
    return state;
}

int main(void)
{
    char path[512], state[16];
    char *ref = ref_trajectory_in(dir, "test_http_side");
    /* The hold trajectory: the reference five times over, no iterations. */
    size_t rl = strlen(ref);
    char *rows = malloc(5 * rl + 1);
    CHECK(rows != NULL);
    if (!rows) return test_report("test_http_side");
    for (int i = 0; i < 5; i++) memcpy(rows + i * rl, ref, rl);
    rows[5 * rl] = 0;
    cJSON *hj = cJSON_CreateObject(), *o;
    cJSON_AddStringToObject(hj, "source_robot", "g1");
    cJSON_AddStringToObject(hj, "robot", "g1");
    cJSON_AddStringToObject(hj, "name", "hold");
    cJSON_AddStringToObject(hj, "trajectory", rows);
    o = cJSON_AddObjectToObject(hj, "options");
    cJSON_AddNumberToObject(o, "max_lm_iters", 0);
    cJSON_AddNumberToObject(o, "init_iters", 0);
    char *hold_body = cJSON_PrintUnformatted(hj);
    cJSON_Delete(hj);
    free(rows);
    /* The short clip and its reference. */
    char clip_path[512], out[256];
    snprintf(clip_path, sizeof clip_path, "%s/clips/run_forward.bvh", test_data_dir());
    char *clip = test_slurp(clip_path, NULL);
    CHECK(clip != NULL);
    snprintf(out, sizeof out, "%s/ref", dir);
    char *argv[] = {clip_path, "--robot", "g1", "-o", out, "--quiet", NULL};
    CHECK_EQ_INT(cli_solve(6, argv), 0);
    char *short_body = clip ? job_body("g1", "run_forward", clip, -1) : NULL;

    setenv("RT_SIDE_CPU", "1", 1);
    struct srv_config cfg;
    srv_config_default(&cfg);
    snprintf(path, sizeof path, "%s/side.db", dir);
    cfg.db_path = path;
    cfg.no_auth = 1;
    cfg.batch_wait_ms = 0;
    cfg.solver_threads = 2;
    struct srv *s = http_start(&cfg);
    unsetenv("RT_SIDE_CPU");
    CHECK(s != NULL && hold_body && short_body);
    if (!s || !hold_body || !short_body) return test_report("test_http_side");

    long long hold = http_submit(hold_body);
    for (int i = 0; i < 6000 && !atomic_load(&holding); i++) usleep(5000);
    CHECK(atomic_load(&holding));
    long long sh = http_submit(short_body);
    /* Solved while the main worker holds. */
    for (int i = 0; i < 1500 && strcmp(job_state(sh, state), "succeeded") && strcmp(state, "failed"); i++)
        usleep(20000);
    CHECK_EQ_STR(state, "succeeded");
    CHECK(atomic_load(&holding));
    CHECK_EQ_INT(atomic_load(&side_calls), 1);
    CHECK(result_is_ref(sh, dir, "run_forward"));
    CHECK_EQ_STR(job_state(hold, state), "running");
    atomic_store(&release_hold, 1);
    http_wait(NULL, hold, state);
    CHECK_EQ_STR(state, "succeeded");
    printf("test_http_side: the short clip solved by the side lane while the main worker held\n");
    srv_stop(s);
    free(hold_body);
    cJSON_free(short_body);
    free(clip);
    free(ref);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    if (system(path)) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_http_side");
}
