/* pool.c -- the host's worker threads (see pool.h): one queue of tasks
 * under one mutex; rtg_pool_for() hands indices out with an atomic counter
 * so that the caller's thread works too. */
#include "pool.h"

#include <pthread.h>
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
    int n_threads, stop;
    pthread_t *threads;
};

static void *worker(void *arg)
{
    struct rtg_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop) pthread_cond_wait(&p->work, &p->mu);
        if (!p->head) break;
        struct task *t = p->head;
        p->head = t->next;
        if (!p->head) p->tail = NULL;
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
    struct rtg_pool *p;
    *out = NULL;
    if (threads < 1 || threads > 256) return rt_err_set(err, RT_EINVAL, "threads", "%d threads (want 1..256)", threads);
    if (!(p = calloc(1, sizeof *p)) || !(p->threads = calloc((size_t)threads, sizeof *p->threads))) {
        free(p);
        return rt_err_set(err, RT_ENOMEM, "pool", "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p)) break;
        p->n_threads++;
    }
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

int rtg_pool_threads(const struct rtg_pool *p) { return p ? p->n_threads : 1; }

enum rt_status rtg_pool_submit(struct rtg_pool *p, struct rtg_pool_group *g, void (*fn)(void *arg), void *arg)
{
    struct task *t = p ? malloc(sizeof *t) : NULL;
    if (!t) {
        fn(arg);
        return RT_ENOMEM;
    }
    t->fn = fn;
    t->arg = arg;
    t->g = g;
    t->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (g) g->pending++;
    if (p->tail) p->tail->next = t;
    else p->head = t;
    p->tail = t;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return RT_OK;
}

void rtg_pool_wait(struct rtg_pool *p, struct rtg_pool_group *g)
{
    if (!p || !g) return;
    pthread_mutex_lock(&p->mu);
    while (g->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

struct for_ctx {
    void (*fn)(void *ctx, int i);
    void *ctx;
    int n;
    atomic_int next;
};

static void for_run(void *arg)
{
    struct for_ctx *f = arg;
    for (int i; (i = atomic_fetch_add(&f->next, 1)) < f->n;) f->fn(f->ctx, i);
}

void rtg_pool_for(struct rtg_pool *p, int n, void (*fn)(void *ctx, int i), void *ctx)
{
    struct for_ctx f = {fn, ctx, n, 0};
    struct rtg_pool_group g = {0};
    int helpers = p ? p->n_threads : 0;
    if (helpers > n - 1) helpers = n - 1;
    for (int k = 0; k < helpers; k++) rtg_pool_submit(p, &g, for_run, &f);
    for_run(&f);
    rtg_pool_wait(p, &g);
}
