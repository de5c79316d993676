/* pool.h -- the host's worker threads for the work around the solver:
 * reading, planning and building clips, measuring and formatting results.
 * The CLI and the daemon keep one pool each; jobs run on it in parallel
 * across clips, and a task may be queued to run while the caller goes on
 * (the solve of the next batch), so that host work overlaps the device.
 *
 * Every task writes only its own outputs, so results never depend on the
 * number of threads or their timing.
 *
 * Memory: rtg_pool_create() returns a pool the caller frees with
 * rtg_pool_free(), which waits for queued tasks first. */
#ifndef RT_RTG_POOL_H
#define RT_RTG_POOL_H

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtg_pool;

/* Starts `threads` workers (1..256). RT_ENOMEM / RT_EINVAL; *out NULL then. */
enum rt_status rtg_pool_create(int threads, struct rtg_pool **out, struct rt_err *err);

/* rtg_pool_create() with workers at `nice` (1..19; 0: the caller's
 * priority) above the process's other threads where the OS sets it per
 * thread (Linux): host work in the background of a server's requests. */
enum rt_status rtg_pool_create_nice(int threads, int nice, struct rtg_pool **out, struct rt_err *err);

/* Waits for every queued task, stops the workers, frees. NULL-safe. */
void rtg_pool_free(struct rtg_pool *p);

/* The workers running (rtg_pool_retire() lowers it). */
int rtg_pool_threads(const struct rtg_pool *p);

/* Stops `k` workers once they are done with their current tasks (never
 * the last one): a pool sized for a first stage that leaves cores to
 * other threads after it. */
void rtg_pool_retire(struct rtg_pool *p, int k);

/* Starts `k` more workers: a pool sized for a stage that left cores to
 * other threads, given them back after it. Returns how many started. */
int rtg_pool_grow(struct rtg_pool *p, int k);

/* Runs fn(ctx, i) for i in [0, n) on the pool's threads and the caller's,
 * and returns when every call has returned. Its helpers go ahead of the
 * tasks already queued (a loop the caller waits on is never held up by
 * finishing work queued earlier); a worker busy with a task joins when it
 * is done with it. */
void rtg_pool_for(struct rtg_pool *p, int n, void (*fn)(void *ctx, int i), void *ctx);

/* rtg_pool_for() whose helpers are queued behind the tasks already
 * waiting: workers with nothing else to do share the loop, a busy pool
 * leaves it to the caller. For splitting a task that is itself one of many
 * (a clip's quality across its frames) without holding the others up. */
void rtg_pool_for_idle(struct rtg_pool *p, int n, void (*fn)(void *ctx, int i), void *ctx);

/* A clip's frames in pieces for rtg_pool_for_idle: RTG_POOL_PIECE frames a
 * piece (a few hundred microseconds of work, so that idle workers can take
 * a share of a long clip), how many pieces n frames make, and piece k's
 * frames [*f0, *f1). */
#define RTG_POOL_PIECE 256
static inline int rtg_pool_pieces(int n, int size) { return (n + size - 1) / size; }
static inline void rtg_pool_piece(int k, int size, int n, int *f0, int *f1)
{
    *f0 = k * size;
    *f1 = *f0 + size < n ? *f0 + size : n;
}

/* A group of queued tasks that can be waited for. */
struct rtg_pool_group {
    int pending;
};

/* Queues fn(arg) to run on a worker; `g` (may be NULL) counts it until it
 * has run. Returns RT_ENOMEM when the task cannot be queued (then it has
 * run on the caller's thread, so it is never lost). */
enum rt_status rtg_pool_submit(struct rtg_pool *p, struct rtg_pool_group *g, void (*fn)(void *arg), void *arg);

/* rtg_pool_submit() ahead of every task already queued: work the caller
 * will wait on soon (the next solver call's targets) before work that can
 * wait (the finishing of solved clips). */
enum rt_status rtg_pool_submit_first(struct rtg_pool *p, struct rtg_pool_group *g, void (*fn)(void *arg), void *arg);

/* Waits until every task queued with `g` has run. */
void rtg_pool_wait(struct rtg_pool *p, struct rtg_pool_group *g);

#ifdef __cplusplus
}
#endif
#endif
