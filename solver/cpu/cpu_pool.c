/* cpu_pool.c -- a small fork-join thread pool for the CPU backend, and the
 * host driver of the reduce.h summation order.
 *
 * One task at a time: cpu_pool_run() publishes (fn, ctx, n), bumps a
 * generation counter, runs thread 0's share itself and waits until every
 * worker has finished its share. Workers spin briefly on the generation and
 * then sleep on a condition variable, so short solver phases pay about a
 * microsecond and idle pools cost nothing. Atomics here only synchronize;
 * no arithmetic result ever depends on them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../reduce.h"
#include "cpu_internal.h"

#define POOL_SPINS 4000

struct cpu_worker {
    struct cpu_pool *pool;
    int tid;
    pthread_t thread;
};

struct cpu_pool {
    int n_threads;
    struct cpu_worker *w;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t go, done_cv;
    atomic_uint gen;
    atomic_int done;
    atomic_int stop;
    cpu_task_fn fn;
    void *ctx;
    size_t n_items;
};

static void pool_share(struct cpu_pool *p, int tid)
{
    size_t P = (size_t)p->n_threads, n = p->n_items;
    size_t b = n * (size_t)tid / P, e = n * (size_t)(tid + 1) / P;
    if (b < e) p->fn(p->ctx, tid, b, e);
}

static void *pool_main(void *arg)
{
    struct cpu_worker *w = (struct cpu_worker *)arg;
    struct cpu_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        int spins = 0;
        while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen) {
            if (++spins < POOL_SPINS) continue;
            pthread_mutex_lock(&p->mu);
            while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen)
                pthread_cond_wait(&p->go, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        if (atomic_load(&p->stop)) break;
        pool_share(p, w->tid);
        if (atomic_fetch_add_explicit(&p->done, 1, memory_order_acq_rel) + 1 == p->n_threads - 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

enum rt_status cpu_pool_create(int threads, struct cpu_pool **out, struct rt_err *err)
{
    struct cpu_pool *p = (struct cpu_pool *)calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return rt_err_set(err, RT_ENOMEM, "solver", "out of memory (thread pool)");
    p->n_threads = threads < 1 ? 1 : threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    atomic_init(&p->gen, 0u);
    atomic_init(&p->done, 0);
    atomic_init(&p->stop, 0);
    if (p->n_threads > 1) {
        p->w = (struct cpu_worker *)calloc((size_t)p->n_threads, sizeof *p->w);
        if (!p->w) goto fail;
        for (int i = 1; i < p->n_threads; i++) {
            p->w[i].pool = p;
            p->w[i].tid = i;
            if (pthread_create(&p->w[i].thread, NULL, pool_main, &p->w[i]) != 0) goto fail;
            p->started = i;
        }
    }
    *out = p;
    return RT_OK;
fail:
    cpu_pool_free(p);
    return rt_err_set(err, RT_ENOMEM, "backend.threads", "cannot start %d threads", threads);
}

void cpu_pool_run(struct cpu_pool *p, cpu_task_fn fn, void *ctx, size_t n_items)
{
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n_items;
    if (p->n_threads == 1) {
        pool_share(p, 0);
        return;
    }
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->gen, 1u, memory_order_acq_rel);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    pool_share(p, 0);
    int spins = 0;
    while (atomic_load_explicit(&p->done, memory_order_acquire) < p->n_threads - 1) {
        if (++spins < POOL_SPINS) continue;
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->done, memory_order_acquire) < p->n_threads - 1)
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

int cpu_pool_threads(const struct cpu_pool *p) { return p ? p->n_threads : 1; }

void cpu_pool_free(struct cpu_pool *p)
{
    if (!p) return;
    if (p->started > 0) {
        atomic_store(&p->stop, 1);
        pthread_mutex_lock(&p->mu);
        atomic_fetch_add(&p->gen, 1u);
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        for (int i = 1; i <= p->started; i++) pthread_join(p->w[i].thread, NULL);
    }
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done_cv);
    pthread_mutex_destroy(&p->mu);
    free(p->w);
    free(p);
}

/* ---- reduction driver ---------------------------------------------- */

struct red_task {
    const float *x;
    size_t n;
    float *part;
};

static void red_blocks(void *ctx, int tid, size_t begin, size_t end)
{
    struct red_task *t = (struct red_task *)ctx;
    float buf[RT_REDUCE_BLOCK];
    (void)tid;
    for (size_t b = begin; b < end; b++) t->part[b] = rt_reduce_block_of(t->x, t->n, b, buf);
}

float cpu_reduce_sum(struct cpu_pool *pool, const float *x, size_t n)
{
    /* Reduction order: DESIGN.md "The reduction order"; do not reorder. */
    if (n == 0) return 0.0f;
    size_t nb = rt_reduce_nblocks(n);
    float stack[RT_REDUCE_BLOCK + CPU_REDUCE_SERIAL_BLOCKS];
    if (nb <= CPU_REDUCE_SERIAL_BLOCKS || !pool || cpu_pool_threads(pool) == 1) {
        if (nb <= CPU_REDUCE_SERIAL_BLOCKS) return rt_reduce_serial(x, n, stack);
    }
    float *part = (float *)malloc((nb + RT_REDUCE_BLOCK + rt_reduce_nblocks(nb)) * sizeof(float));
    if (!part) { /* fall back to block-by-block on this thread: same order, no allocation */
        float buf[RT_REDUCE_BLOCK];
        float acc[RT_REDUCE_BLOCK];
        /* With no memory, do the levels in place over a copy-free scheme:
         * level 1 values are consumed 512 at a time into level 2. Only
         * reachable for huge n; handles up to 512^2 blocks. */
        size_t nb2 = rt_reduce_nblocks(nb);
        float top[RT_REDUCE_BLOCK];
        for (size_t b2 = 0; b2 < nb2 && b2 < RT_REDUCE_BLOCK; b2++) {
            for (int i = 0; i < RT_REDUCE_BLOCK; i++) {
                size_t b = b2 * RT_REDUCE_BLOCK + (size_t)i;
                acc[i] = b < nb ? rt_reduce_block_of(x, n, b, buf) : 0.0f;
            }
            top[b2] = rt_reduce_block512(acc);
        }
        if (nb2 == 1) return top[0];
        for (size_t i = nb2; i < RT_REDUCE_BLOCK; i++) top[i] = 0.0f;
        return rt_reduce_block512(top);
    }
    struct red_task t = {x, n, part};
    if (pool && cpu_pool_threads(pool) > 1) cpu_pool_run(pool, red_blocks, &t, nb);
    else red_blocks(&t, 0, 0, nb);
    float r = nb == 1 ? part[0] : rt_reduce_serial(part, nb, part + nb);
    free(part);
    return r;
}
