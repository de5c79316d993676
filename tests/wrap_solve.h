/* wrap_solve.h -- for tests linked with -Wl,--wrap=rtg_batch_solve (the
 * Makefile names them): the scheduler's solver calls reach the test's
 * __wrap_rtg_batch_solve, which may pass them on to the real one. */
#ifndef RT_TEST_WRAP_SOLVE_H
#define RT_TEST_WRAP_SOLVE_H

#include "../retarget/batch.h"

enum rt_status __real_rtg_batch_solve(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                                      const struct solver_options *opt, struct rtg_batch_item *items, int n,
                                      void (*progress)(void *user, int lm_iter, int clips_done),
                                      void *progress_user, struct rt_err *err);
enum rt_status __wrap_rtg_batch_solve(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                                      const struct solver_options *opt, struct rtg_batch_item *items, int n,
                                      void (*progress)(void *user, int lm_iter, int clips_done),
                                      void *progress_user, struct rt_err *err);

#endif
