/* pool.c -- the host's worker threads (see pool.h): one queue of tasks
 * under one mutex; rtg_pool_for() hands indices out with an atomic counter
 * so that the caller's thread works too, its helpers queued ahead of the
 * tasks already waiting, and returns once every index is done. */
#include "pool.h"

#include <pthread.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <stdatomic.h>
#include <stdlib.h>

struct task {
    void (*fn)(void *arg);
    void *arg;
    struct rtg_pool_group *g;
    struct task *next;
};

struct rtg_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct task *head, *tail;
    int n_threads, stop, nice;
    atomic_int n_active; /* n_threads less the retired ones (read without the lock) */
    pthread_t *threads;
};

static void *worker(void *arg)
{
    struct rtg_pool *p = arg;
#ifdef __linux__
    /* Linux's nice value is per thread: a background pool yields the CPU
     * to the process's other threads (a daemon's request handlers). A
     * refusal only leaves the thread at its priority. */
    if (p->nice > 0) (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), p->nice);
#endif
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (!p->head) break;
        struct task *t = p->head;
        p->head = t->next;
        if (!p->head) p->tail = NULL;
        if (!t->fn) { /* rtg_pool_retire()'s */
            free(t);
            break;
        }
        pthread_mutex_unlock(&p->mu);
        t->fn(t->arg);
        pthread_mutex_lock(&p->mu);
        if (t->g && --t->g->pending == 0) pthread_cond_broadcast(&p->done);
        free(t);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

enum rt_status rtg_pool_create(int threads, struct rtg_pool **out, struct rt_err *err)
{
    return rtg_pool_create_nice(threads, 0, out, err);
}

enum rt_status rtg_pool_create_nice(int threads, int nice, struct rtg_pool **out, struct rt_err *err)
{
    struct rtg_pool *p;
    *out = NULL;
    if (threads < 1 || threads > 256) return rt_err_set(err, RT_EINVAL, "threads", "%d threads (want 1..256)", threads);
    if (!(p = calloc(1, sizeof *p)) || !(p->threads = calloc((size_t)threads, sizeof *p->threads))) {
        free(p);
        return rt_err_set(err, RT_ENOMEM, "pool", "out of memory");
    }
    p->nice = nice > 0 ? (nice < 19 ? nice : 19) : 0;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p)) break;
        p->n_threads++;
    }
    atomic_init(&p->n_active, p->n_threads);
    if (!p->n_threads) {
        rtg_pool_free(p);
        return rt_err_set(err, RT_ENOMEM, "pool", "cannot start a thread");
    }
    *out = p;
    return RT_OK;
}

void rtg_pool_free(struct rtg_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p);
}

int rtg_pool_threads(const struct rtg_pool *p) { return p ? atomic_load(&p->n_active) : 1; }

void rtg_pool_retire(struct rtg_pool *p, int k)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    for (; k > 0 && atomic_load(&p->n_active) > 1; k--) {
        struct task *t = malloc(sizeof *t);
        if (!t) break;
        *t = (struct task){NULL, NULL, NULL, p->head};
        p->head = t;
        if (!p->tail) p->tail = t;
        atomic_fetch_sub(&p->n_active, 1);
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
}

int rtg_pool_grow(struct rtg_pool *p, int k)
{
    int started = 0;
    if (!p || k <= 0) return 0;
    pthread_mutex_lock(&p->mu);
    pthread_t *th = realloc(p->threads, (size_t)(p->n_threads + k) * sizeof *th);
    if (th) {
        p->threads = th;
        for (; started < k && !pthread_create(&p->threads[p->n_threads], NULL, worker, p); started++) {
            p->n_threads++;
            atomic_fetch_add(&p->n_active, 1);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return started;
}

/* Queues fn(arg) behind every queued task, or ahead of them (`first`:
 * work the caller will wait on soon). 0 when it cannot be queued. */
static int enqueue(struct rtg_pool *p, struct rtg_pool_group *g, void (*fn)(void *arg), void *arg, int first)
{
    struct task *t = p ? malloc(sizeof *t) : NULL;
    if (!t) return 0;
    *t = (struct task){fn, arg, g, NULL};
    pthread_mutex_lock(&p->mu);
    if (g) g->pending++;
    if (first) {
        t->next = p->head;
        p->head = t;
        if (!p->tail) p->tail = t;
    } else {
        if (p->tail) p->tail->next = t;
        else p->head = t;
        p->tail = t;
    }
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return 1;
}

enum rt_status rtg_pool_submit(struct rtg_pool *p, struct rtg_pool_group *g, void (*fn)(void *arg), void *arg)
{
    if (enqueue(p, g, fn, arg, 0)) return RT_OK;
    fn(arg);
    return RT_ENOMEM;
}

enum rt_status rtg_pool_submit_first(struct rtg_pool *p, struct rtg_pool_group *g, void (*fn)(void *arg), void *arg)
{
    if (enqueue(p, g, fn, arg, 1)) return RT_OK;
    fn(arg);
    return RT_ENOMEM;
}

void rtg_pool_wait(struct rtg_pool *p, struct rtg_pool_group *g)
{
    if (!p || !g) return;
    pthread_mutex_lock(&p->mu);
    while (g->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* An rtg_pool_for() in progress: on the heap, since a helper queued behind
 * other tasks may start after the caller has returned; the last of the
 * caller and its helpers to let go frees it. */
struct for_ctx {
    struct rtg_pool *p;
    void (*fn)(void *ctx, int i);
    void *ctx;
    int n;
    atomic_int next, done, refs;
};

static void for_release(struct for_ctx *f)
{
    if (atomic_fetch_sub(&f->refs, 1) == 1) free(f);
}

static void for_run(void *arg)
{
    struct for_ctx *f = arg;
    for (int i; (i = atomic_fetch_add(&f->next, 1)) < f->n;) {
        f->fn(f->ctx, i);
        if (atomic_fetch_add(&f->done, 1) + 1 == f->n && f->p) {
            pthread_mutex_lock(&f->p->mu);
            pthread_cond_broadcast(&f->p->done);
            pthread_mutex_unlock(&f->p->mu);
        }
    }
    for_release(f);
}

/* rtg_pool_for() with its helpers queued ahead of the queued tasks
 * (`first`) or behind them. */
static void pool_for(struct rtg_pool *p, int n, void (*fn)(void *ctx, int i), void *ctx, int first)
{
    if (n <= 0) return;
    struct for_ctx *f = malloc(sizeof *f);
    if (!f) {
        for (int i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    f->p = p;
    f->fn = fn;
    f->ctx = ctx;
    f->n = n;
    atomic_init(&f->next, 0);
    atomic_init(&f->done, 0);
    atomic_init(&f->refs, 1);
    int helpers = p ? rtg_pool_threads(p) : 0;
    if (helpers > n - 1) helpers = n - 1;
    for (int k = 0; k < helpers; k++) {
        atomic_fetch_add(&f->refs, 1);
        if (!enqueue(p, NULL, for_run, f, first)) atomic_fetch_sub(&f->refs, 1);
    }
    atomic_fetch_add(&f->refs, 1); /* the caller's for_run lets go of one */
    for_run(f);
    if (p) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&f->done) < n) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    for_release(f);
}

void rtg_pool_for(struct rtg_pool *p, int n, void (*fn)(void *ctx, int i), void *ctx)
{
    /* The helpers go ahead of queued work (the finishing of an earlier
     * batch), so that a loop the caller waits on is never held up by it. */
    pool_for(p, n, fn, ctx, 1);
}

void rtg_pool_for_idle(struct rtg_pool *p, int n, void (*fn)(void *ctx, int i), void *ctx)
{
    pool_for(p, n, fn, ctx, 0);
}
