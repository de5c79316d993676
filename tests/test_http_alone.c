/* test_http_alone.c -- a clip that fails the solver in a batch fails
 * alone; its batch mates succeed.
 *
 * The test is linked with -Wl,--wrap=rtg_batch_solve_packed (the
 * Makefile), so the scheduler's solver calls reach
 * __wrap_rtg_batch_solve_packed below: it fails (RT_EBACKEND) every call
 * that holds the clip of BAD_FRAMES frames and passes the others on to the
 * real one. Four windows of the real G1 reference trajectory (100, 110, 120 and BAD_FRAMES frames: one
 * horizon class, one class key) are submitted to the in-process daemon
 * within its batch window, so they meet in one solver call. That call
 * fails; the scheduler solves each clip again alone: the bad one fails
 * with the solver's error, the three others succeed, each solved alone
 * (report solver.batch_clips 1), with results byte-identical to
 * `retarget solve` of the same window. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_util.h"
#include "wrap_solve.h"

#define BAD_FRAMES 127
#define N_JOBS 4


/* The solver calls seen: how many clips each held (the worker is one thread). */
static int call_clips[64], n_calls;

enum rt_status __wrap_rtg_batch_solve_packed(struct rtg_batch_ws *ws, struct solver_backend *be,
                                             const struct kin_robot *robot, const struct solver_options *opt,
                                             struct rtg_batch_item *items, int n,
                                             void (*progress)(void *user, int lm_iter, int clips_done),
                                             void *progress_user, float **block, struct rt_err *err)
{
    if (n_calls < 64) call_clips[n_calls] = n;
    n_calls++;
    for (int i = 0; i < n; i++) {
        items[i].state = NULL;
        if (items[i].t->n_frames == BAD_FRAMES)
            return rt_err_set(err, RT_EBACKEND, "solver", "injected failure: a clip of %d frames", BAD_FRAMES);
    }
    return __real_rtg_batch_solve_packed(ws, be, robot, opt, items, n, progress, progress_user, block, err);
}

static char dir[64];

int main(void)
{
    char path[512], state[16], buf[200];
    static const int frames[N_JOBS] = {100, BAD_FRAMES, 110, 120};
    long long ids[N_JOBS];
    struct srv_config cfg;
    char *ref = ref_trajectory_in(dir, "test_http_alone");
    char *win[N_JOBS], *body[N_JOBS];
    for (int i = 0; i < N_JOBS; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        win[i] = lines_of(ref, 400 * i, frames[i]);
        CHECK(win[i] != NULL);
        if (!win[i]) return test_report("test_http_alone");
        /* The reference: `retarget solve` of the window, alone (through
         * the wrapper too: the bad one has none). */
        body[i] = window_job(dir, name, win[i], frames[i] != BAD_FRAMES);
        CHECK(body[i] != NULL);
        if (!body[i]) return test_report("test_http_alone");
    }

    n_calls = 0;
    /* A 2 s batch window: the four submissions meet in one batch. */
    srv_config_default(&cfg);
    snprintf(path, sizeof path, "%s/alone.db", dir);
    cfg.db_path = path;
    cfg.no_auth = 1;
    cfg.batch_wait_ms = 2000;
    cfg.solver_threads = 2;
    struct srv *s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_alone");
    for (int i = 0; i < N_JOBS; i++) {
        char *resp = NULL;
        CHECK_EQ_INT(http(NULL, "POST", "/v1/jobs", body[i], strlen(body[i]), NULL, &resp), 201);
        ids[i] = resp ? (long long)json_num(resp, "id") : -1;
        free(resp);
    }
    for (int i = 0; i < N_JOBS; i++) {
        http_wait(NULL, ids[i], state);
        if (frames[i] == BAD_FRAMES) {
            char url[64], *resp = NULL;
            CHECK_EQ_STR(state, "failed");
            snprintf(url, sizeof url, "/v1/jobs/%lld", ids[i]);
            http(NULL, "GET", url, NULL, 0, NULL, &resp);
            CHECK(resp && strstr(resp, "injected failure") != NULL);
            free(resp);
            continue;
        }
        CHECK_EQ_STR(state, "succeeded");
        /* Solved alone after the failed call, with the offline bits. */
        CHECK_EQ_INT(batch_clips(ids[i]), 1);
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        CHECK(result_is_ref(ids[i], dir, name));
    }
    /* One call of all four (failed), then each clip alone. */
    CHECK_EQ_INT(n_calls, 1 + N_JOBS);
    CHECK_EQ_INT(call_clips[0], N_JOBS);
    for (int i = 1; i < n_calls && i < 64; i++) CHECK_EQ_INT(call_clips[i], 1);
    snprintf(buf, sizeof buf, "%d solver calls, the first of %d clips", n_calls, call_clips[0]);
    printf("test_http_alone: %s\n", buf);
    srv_stop(s);
    for (int i = 0; i < N_JOBS; i++) {
        free(win[i]);
        cJSON_free(body[i]);
    }
    free(ref);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    if (system(path)) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_http_alone");
}
