/* test_http_classes.c -- the scheduler's horizon classes under load: the
 * ready groups of one key share a solver call; a group not yet ready does
 * not join.
 *
 * The test is linked with -Wl,--wrap=rtg_batch_solve_packed (the
 * Makefile): the scheduler's solver calls reach
 * __wrap_rtg_batch_solve_packed below, which records how many clips each
 * call holds and, for a call that holds the "hold" clip (HOLD_FRAMES
 * frames), keeps the worker there after the real solve until the test lets
 * it go -- a busy worker, as under load, without timing on the solver's
 * speed. Windows of the real G1 reference trajectory, 1 s batch window:
 *  1. while the worker holds, a 50-frame clip (class 6) and a 200-frame
 *     clip (class 8) are submitted and both wait past the window: then one
 *     call solves the two (report solver.batch_clips 2);
 *  2. while it holds again, a 50-frame clip waits past the window and a
 *     200-frame clip is submitted just before the worker goes on: the
 *     first is solved alone, the second after its own window, alone.
 * Every result is byte-identical to `retarget solve` of its window alone. */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_util.h"
#include "wrap_solve.h"

#define HOLD_FRAMES 100
#define WAIT_MS 1000


/* The solver calls seen (the worker is one thread): the clips each held. */
static int call_clips[64];
static atomic_int n_calls, holding, release_hold;

enum rt_status __wrap_rtg_batch_solve_packed(struct rtg_batch_ws *ws, struct solver_backend *be,
                                             const struct kin_robot *robot, const struct solver_options *opt,
                                             struct rtg_batch_item *items, int n,
                                             void (*progress)(void *user, int lm_iter, int clips_done),
                                             void *progress_user, float **block, struct rt_err *err)
{
    int k = atomic_load(&n_calls), hold = 0;
    if (k < 64) call_clips[k] = n;
    for (int i = 0; i < n; i++) hold |= items[i].t->n_frames == HOLD_FRAMES;
    enum rt_status st = __real_rtg_batch_solve_packed(ws, be, robot, opt, items, n, progress, progress_user, block, err);
    atomic_store(&n_calls, k + 1);
    if (hold) wrap_hold(&holding, &release_hold);
    return st;
}

static char dir[64];

/* Waits until the worker holds (a "hold" clip's call returned). */
static void wait_holding(void)
{
    for (int i = 0; i < 6000 && !atomic_load(&holding); i++) usleep(5000);
    CHECK(atomic_load(&holding));
}

static void check_job(long long id, const char *name, int clips)
{
    char state[16];
    http_wait(NULL, id, state);
    CHECK_EQ_STR(state, "succeeded");
    CHECK_EQ_INT(batch_clips(id), clips);
    CHECK(result_is_ref(id, dir, name));
}

int main(void)
{
    char path[512];
    struct srv_config cfg;
    char *ref = ref_trajectory_in(dir, "test_http_classes");
    /* hold, then short and long (scene 1), short2 and long2 (scene 2). */
    static const char *const names[5] = {"hold", "short", "long", "short2", "long2"};
    static const int from[5] = {0, 200, 400, 800, 1200}, frames[5] = {HOLD_FRAMES, 50, 200, 50, 200};
    char *body[5];
    for (int i = 0; i < 5; i++) {
        char *rows = lines_of(ref, from[i], frames[i]);
        body[i] = rows ? window_job(dir, names[i], rows, i > 0) : NULL;
        free(rows);
        CHECK(body[i] != NULL);
        if (!body[i]) return test_report("test_http_classes");
    }
    atomic_store(&n_calls, 0); /* the references' `retarget solve` calls went through the wrapper too */

    srv_config_default(&cfg);
    snprintf(path, sizeof path, "%s/classes.db", dir);
    cfg.db_path = path;
    cfg.no_auth = 1;
    cfg.batch_wait_ms = WAIT_MS;
    cfg.solver_threads = 2;
    struct srv *s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_classes");

    /* 1. Two classes, both ready when the worker comes back: one call. */
    long long hold = http_submit(body[0]);
    wait_holding();
    long long sh = http_submit(body[1]), lo = http_submit(body[2]);
    usleep((WAIT_MS + 500) * 1000);
    atomic_store(&release_hold, 1);
    check_job(sh, "short", 2);
    check_job(lo, "long", 2);
    CHECK_EQ_INT(atomic_load(&n_calls), 2);
    CHECK_EQ_INT(call_clips[1], 2);

    /* 2. The long clip submitted just before the worker goes on is not
     *    ready: the short one goes alone, the long one after its window. */
    long long hold2 = http_submit(body[0]);
    wait_holding();
    long long sh2 = http_submit(body[3]);
    usleep((WAIT_MS + 500) * 1000);
    long long lo2 = http_submit(body[4]);
    atomic_store(&release_hold, 1);
    check_job(sh2, "short2", 1);
    check_job(lo2, "long2", 1);
    CHECK_EQ_INT(atomic_load(&n_calls), 5);
    CHECK_EQ_INT(call_clips[3], 1);
    CHECK_EQ_INT(call_clips[4], 1);
    char state[16];
    http_wait(NULL, hold, state);
    CHECK_EQ_STR(state, "succeeded");
    http_wait(NULL, hold2, state);
    CHECK_EQ_STR(state, "succeeded");
    printf("test_http_classes: %d solver calls: %d, %d, %d, %d, %d clips\n", atomic_load(&n_calls), call_clips[0],
           call_clips[1], call_clips[2], call_clips[3], call_clips[4]);
    srv_stop(s);
    for (int i = 0; i < 5; i++) cJSON_free(body[i]);
    free(ref);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    if (system(path)) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_http_classes");
}
