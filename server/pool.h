/* pool.h -- a small pool of threads that run tasks from a bounded queue:
 * the daemon's validation threads, which plan submissions off the HTTP
 * threads (server/http.c), so that a large clip being parsed never delays
 * /v1/health or a status poll served by the same MHD thread.
 *
 * Memory: srv_pool_start() returns a pool that srv_pool_stop() ends and
 * frees. A task's argument is the caller's. */
#ifndef RT_SRV_POOL_H
#define RT_SRV_POOL_H

#include "../base/status.h"

struct srv_pool;

/* Starts `n_threads` threads (>= 1) taking tasks from a queue of at most
 * `max_queued` (>= 1) waiting tasks. With `nice` > 0 the threads run at
 * that much lower priority (setpriority on the thread), so that HTTP
 * threads preempt them on a busy machine. RT_ENOMEM when threads or memory
 * cannot be had; *out is NULL then. */
enum rt_status srv_pool_start(int n_threads, int max_queued, int nice, struct srv_pool **out,
                              struct rt_err *err);

/* Queues fn(arg) to run on a pool thread. Returns 0, or -1 (fn is not
 * called) when the queue is full or the pool is stopping. Thread-safe. */
int srv_pool_submit(struct srv_pool *p, void (*fn)(void *arg), void *arg);

/* Tasks queued and not yet started, and tasks running. */
void srv_pool_load(struct srv_pool *p, int *queued, int *running);

/* Refuses new tasks (srv_pool_submit() is -1 from now on), runs every task
 * already queued and joins the threads; the pool stays allocated, so that
 * callers racing with it still find it. NULL-safe, idempotent. */
void srv_pool_drain(struct srv_pool *p);

/* srv_pool_drain(), then frees the pool. NULL-safe. */
void srv_pool_stop(struct srv_pool *p);

#endif
