/* pool.c -- threads that run queued tasks (pool.h). The queue is a ring
 * of max_queued slots under one mutex; stopping drains it, so that every
 * task that was accepted runs (a validation task must resume the
 * connection it suspended before MHD can stop). */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pool_task {
    void (*fn)(void *arg);
    void *arg;
};

struct srv_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct pool_task *ring; /* [cap]; tasks at head, head+1, .. (mod cap), n of them */
    int cap, head, n, running, stop, nice;
    int n_threads;
    pthread_t *threads;
};

static void *pool_main(void *arg)
{
    struct srv_pool *p = arg;
    /* Linux: a thread is a task of its own for setpriority(). */
    if (p->nice > 0) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), p->nice);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->n && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
        if (!p->n) break; /* stopping and drained */
        struct pool_task t = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->n--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        t.fn(t.arg);
        pthread_mutex_lock(&p->mu);
        p->running--;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

enum rt_status srv_pool_start(int n_threads, int max_queued, int nice, struct srv_pool **out,
                              struct rt_err *err)
{
    struct srv_pool *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return rt_err_set(err, RT_ENOMEM, "pool", "out of memory");
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->cap = max_queued > 0 ? max_queued : 1;
    p->nice = nice;
    p->ring = calloc((size_t)p->cap, sizeof *p->ring);
    p->threads = calloc((size_t)(n_threads > 0 ? n_threads : 1), sizeof *p->threads);
    if (!p->ring || !p->threads) {
        srv_pool_stop(p);
        return rt_err_set(err, RT_ENOMEM, "pool", "out of memory");
    }
    for (int i = 0; i < (n_threads > 0 ? n_threads : 1); i++) {
        if (pthread_create(&p->threads[i], NULL, pool_main, p)) {
            srv_pool_stop(p);
            return rt_err_set(err, RT_ENOMEM, "pool", "cannot start validation thread %d", i + 1);
        }
        p->n_threads++;
    }
    *out = p;
    return RT_OK;
}

int srv_pool_submit(struct srv_pool *p, void (*fn)(void *arg), void *arg)
{
    int ok = 0;
    pthread_mutex_lock(&p->mu);
    if (!p->stop && p->n < p->cap) {
        p->ring[(p->head + p->n) % p->cap] = (struct pool_task){fn, arg};
        p->n++;
        ok = 1;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return ok ? 0 : -1;
}

void srv_pool_load(struct srv_pool *p, int *queued, int *running)
{
    pthread_mutex_lock(&p->mu);
    if (queued) *queued = p->n;
    if (running) *running = p->running;
    pthread_mutex_unlock(&p->mu);
}

void srv_pool_drain(struct srv_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_threads; i++) pthread_join(p->threads[i], NULL);
    p->n_threads = 0;
}

void srv_pool_stop(struct srv_pool *p)
{
    if (!p) return;
    srv_pool_drain(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->ring);
    free(p->threads);
    free(p);
}
