/* cpu_pool.c -- a small fork-join thread pool for the CPU backend, and the
 * host driver of the reduce.h summation order.
 *
 * One task at a time: cpu_pool_run() publishes (fn, ctx, n), bumps a
 * generation counter, takes ranges of items itself like every worker and
 * waits until every worker has finished. Workers spin on the generation
 * (with the CPU's pause hint, then yielding the core at each turn) for up
 * to POOL_SPIN_S and then sleep on a condition variable, and so does the
 * caller on the count of finished workers: a solve runs thousands of short
 * phases (five or more a CG iteration) with a little serial work between
 * them, and a sleeping thread takes tens of microseconds to wake, so the
 * spin outlasts those gaps; idle pools cost nothing once it has run out.
 *
 * The items are taken in guided ranges: each claim takes 1 / (2 P) of the
 * items still unclaimed (at least one), from one atomic cursor, so the
 * first ranges are long and contiguous and the last ones short. A thread
 * whose frames need more initialization iterations, or that the system
 * held back, takes fewer ranges; none waits on a slower neighbour's fixed
 * share. Atomics here only synchronize; no arithmetic result ever depends
 * on them (an item's outputs are its own, whichever thread computes them).
 *
 * With timing on (cpu_pool_set_timing, the backend's profile), every run
 * also adds up each thread's busy time, the slowest thread's and the run's
 * wall, which cpu_pool_take_times() hands out and clears. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../../base/clock.h"
#include "../reduce.h"
#include "cpu_internal.h"

/* Seconds a thread spins before it sleeps; past the first POOL_SPIN_BUSY_S
 * it yields the core at each turn (sched_yield), so that other threads of
 * the process (a server's request threads, the host pool) run there when
 * they have work: a spin that kept its core would take it from them between
 * the solver's phases, which the spin is only meant to bridge. */
#define POOL_SPIN_S 200e-6
#define POOL_SPIN_BUSY_S 20e-6

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins while *v == seen (v a generation) -- or, with below set, while
 * *v < seen (a count) -- for up to POOL_SPIN_S; returns 1 when that ended
 * it, 0 when the time ran out. */
static int spin_wait(atomic_uint *v, unsigned seen, int below)
{
    double t0 = rt_now();
    int yield = 0;
    for (unsigned i = 0;; i++) {
        unsigned x = atomic_load_explicit(v, memory_order_acquire);
        if (below ? x >= seen : x != seen) return 1;
        if (yield) sched_yield();
        else cpu_relax();
        if (yield || (i & 63) == 63) {
            double t = rt_now() - t0;
            if (t > POOL_SPIN_S) return 0;
            yield = t > POOL_SPIN_BUSY_S;
        }
    }
}

struct cpu_worker {
    struct cpu_pool *pool;
    int tid;
    pthread_t thread;
    double busy; /* with timing: seconds in the last run's ranges */
    char pad[64];
};

struct cpu_pool {
    int n_threads;
    struct cpu_worker *w;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t go, done_cv;
    atomic_uint gen;
    atomic_uint done;
    atomic_int stop;
    cpu_task_fn fn;
    void *ctx;
    size_t n_items;
    char pad0[64];
    atomic_size_t next; /* the first item not yet claimed (a cache line of its own) */
    char pad1[64];
    int timing;
    double t_busy, t_max, t_wall; /* with timing: sums since the last cpu_pool_take_times */
};

/* Claims guided ranges of the run's items until none is left. */
static void pool_share(struct cpu_pool *p, int tid)
{
    size_t n = p->n_items, div = 2 * (size_t)p->n_threads;
    double t0 = p->timing ? rt_now() : 0;
    size_t b = atomic_load_explicit(&p->next, memory_order_relaxed);
    while (b < n) {
        size_t take = (n - b) / div;
        if (take < 1) take = 1;
        if (!atomic_compare_exchange_weak_explicit(&p->next, &b, b + take, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue; /* b now holds the cursor another thread moved */
        p->fn(p->ctx, tid, b, b + take);
        b = atomic_load_explicit(&p->next, memory_order_relaxed);
    }
    if (p->timing) p->w[tid].busy = rt_now() - t0;
}

static void *pool_main(void *arg)
{
    struct cpu_worker *w = (struct cpu_worker *)arg;
    struct cpu_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        if (!spin_wait(&p->gen, seen, 0)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen)
                pthread_cond_wait(&p->go, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        if (atomic_load(&p->stop)) break;
        pool_share(p, w->tid);
        if (atomic_fetch_add_explicit(&p->done, 1u, memory_order_acq_rel) + 1 == (unsigned)(p->n_threads - 1)) {
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
    atomic_init(&p->done, 0u);
    atomic_init(&p->stop, 0);
    atomic_init(&p->next, 0);
    p->w = (struct cpu_worker *)calloc((size_t)p->n_threads, sizeof *p->w);
    if (!p->w) goto fail;
    for (int i = 1; i < p->n_threads; i++) {
        p->w[i].pool = p;
        p->w[i].tid = i;
        if (pthread_create(&p->w[i].thread, NULL, pool_main, &p->w[i]) != 0) goto fail;
        p->started = i;
    }
    *out = p;
    return RT_OK;
fail:
    cpu_pool_free(p);
    return rt_err_set(err, RT_ENOMEM, "backend.threads", "cannot start %d threads", threads);
}

static void pool_account(struct cpu_pool *p, double t0)
{
    double sum = 0, max = 0;
    for (int i = 0; i < p->n_threads; i++) {
        sum += p->w[i].busy;
        if (p->w[i].busy > max) max = p->w[i].busy;
    }
    p->t_busy += sum;
    p->t_max += max;
    p->t_wall += rt_now() - t0;
}

void cpu_pool_run(struct cpu_pool *p, cpu_task_fn fn, void *ctx, size_t n_items)
{
    double t0 = p->timing ? rt_now() : 0;
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n_items;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    if (p->n_threads == 1) {
        pool_share(p, 0);
        if (p->timing) pool_account(p, t0);
        return;
    }
    atomic_store_explicit(&p->done, 0u, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->gen, 1u, memory_order_acq_rel);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    pool_share(p, 0);
    if (!spin_wait(&p->done, (unsigned)(p->n_threads - 1), 1)) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->done, memory_order_acquire) < (unsigned)(p->n_threads - 1))
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    if (p->timing) pool_account(p, t0);
}

int cpu_pool_threads(const struct cpu_pool *p) { return p ? p->n_threads : 1; }

void cpu_pool_set_timing(struct cpu_pool *p, int on)
{
    p->timing = on != 0;
    p->t_busy = p->t_max = p->t_wall = 0;
}

void cpu_pool_take_times(struct cpu_pool *p, double *busy, double *max, double *wall)
{
    *busy = p->t_busy;
    *max = p->t_max;
    *wall = p->t_wall;
    p->t_busy = p->t_max = p->t_wall = 0;
}

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
