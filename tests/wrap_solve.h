/* wrap_solve.h -- for tests linked with -Wl,--wrap=rtg_batch_solve_packed
 * (the Makefile names them): the scheduler's solver calls reach the test's
 * __wrap_rtg_batch_solve_packed, which may pass them on to the real one. */
#ifndef RT_TEST_WRAP_SOLVE_H
#define RT_TEST_WRAP_SOLVE_H

#include <stdatomic.h>
#include <unistd.h>

#include "../retarget/batch.h"

enum rt_status __real_rtg_batch_solve_packed(struct rtg_batch_ws *ws, struct solver_backend *be,
                                             const struct kin_robot *robot, const struct solver_options *opt,
                                             struct rtg_batch_item *items, int n,
                                             void (*progress)(void *user, int lm_iter, int clips_done),
                                             void *progress_user, float **block, struct rt_err *err);
enum rt_status __wrap_rtg_batch_solve_packed(struct rtg_batch_ws *ws, struct solver_backend *be,
                                             const struct kin_robot *robot, const struct solver_options *opt,
                                             struct rtg_batch_item *items, int n,
                                             void (*progress)(void *user, int lm_iter, int clips_done),
                                             void *progress_user, float **block, struct rt_err *err);

/* Holds the calling worker (inside a wrapped call): sets *holding, waits
 * until the test sets *release (at most 30 s), then clears both. */
static inline void wrap_hold(atomic_int *holding, atomic_int *release)
{
    atomic_store(holding, 1);
    for (int i = 0; i < 6000 && !atomic_load(release); i++) usleep(5000);
    atomic_store(release, 0);
    atomic_store(holding, 0);
}

#endif
