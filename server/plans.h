/* plans.h -- parsed plans handed from a submission to the worker.
 *
 * POST /v1/jobs parses a trajectory source to plan it (every input check);
 * the worker would read the source text back from the store and parse it
 * again to build the job's targets. For a trajectory source of at most
 * SRV_PLANS_ONE bytes parsed, the submission leaves its plan here (with the
 * source robot it borrows) under the job's id, and the worker takes it:
 * no text read back, no second parse. The same plan the stored text gives
 * (the same parser over the same bytes, the same stored options), so the
 * same targets and the same bits.
 *
 * The plans held are bounded (srv_plans_create's budget): a plan that does
 * not fit is not kept, and the oldest go first when a new one needs room.
 * A job whose plan is not here (a restart, a job retried, a plan evicted or
 * never kept) is built from the store as before. A robot or profile
 * replaced drops every plan (srv_plans_clear), so that a job is always
 * built against the assets of its build, as one read back would be.
 *
 * Thread-safe (one mutex). Memory: srv_plans_create() returns a cache that
 * srv_plans_free() frees with every plan it holds. */
#ifndef RT_SRV_PLANS_H
#define RT_SRV_PLANS_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"

struct kin_robot;
struct rtg_job_plan;
struct srv_plans;

/* The largest parsed plan kept: 4 MiB (a G1 trajectory of about 14,500
 * frames), so that a large submission still costs at most twice its body
 * (tests/test_submit_memory.sh). */
#define SRV_PLANS_ONE ((size_t)4 << 20)

/* A cache of at most `budget` bytes of parsed plans (0: none is kept).
 * RT_ENOMEM. */
enum rt_status srv_plans_create(size_t budget, struct srv_plans **out, struct rt_err *err);

/* Frees `c` and every plan in it. NULL-safe. */
void srv_plans_free(struct srv_plans *c);

/* The bytes of `plan`'s parsed source (what srv_plans_put() counts). */
size_t srv_plans_bytes(const struct rtg_job_plan *plan);

/* Whether `c` would keep `plan`: a trajectory plan with its parsed states,
 * of at most SRV_PLANS_ONE bytes, within the budget (a submission keeps the
 * parsed source only then; NULL-safe: 0). */
int srv_plans_fits(const struct srv_plans *c, const struct rtg_job_plan *plan);

/* Keeps `plan` and `src` (the source robot it borrows) for job `id` when
 * srv_plans_fits(): on 1 the cache owns both and `plan` is zeroed, the
 * oldest plans dropped to make room; on 0 (it does not fit, or out of
 * memory) the caller keeps them. */
int srv_plans_put(struct srv_plans *c, int64_t id, struct rtg_job_plan *plan, struct kin_robot *src);

/* Takes job `id`'s plan into *plan and its source robot into *src (the
 * caller owns both: rtg_job_plan_free, kin_robot_free). 0 when none is
 * held. */
int srv_plans_take(struct srv_plans *c, int64_t id, struct rtg_job_plan *plan, struct kin_robot **src);

/* Drops every plan (a robot or profile was replaced). */
void srv_plans_clear(struct srv_plans *c);

/* Plans held and their bytes (the tests). */
void srv_plans_count(struct srv_plans *c, int *n, size_t *bytes);

#endif
