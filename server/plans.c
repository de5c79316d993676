/* plans.c -- parsed plans handed from a submission to the worker
 * (plans.h): a list in the order they were put, under one mutex, with the
 * bytes of their parsed sources counted against the budget. */
#include "plans.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/robot.h"
#include "../retarget/job.h"

/* What a plan is counted for beyond its states: an allowance for the
 * source robot it keeps (its links, joints and capsules; not measured per
 * robot). */
#define PLANS_ROBOT_BYTES ((size_t)64 << 10)

struct plan_entry {
    int64_t id;
    size_t bytes;
    struct rtg_job_plan plan;
    struct kin_robot *src;
    struct plan_entry *next;
};

struct srv_plans {
    pthread_mutex_t mu;
    size_t budget, used;
    int n;
    struct plan_entry *head, *tail; /* oldest first */
};

enum rt_status srv_plans_create(size_t budget, struct srv_plans **out, struct rt_err *err)
{
    struct srv_plans *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c) return rt_err_set(err, RT_ENOMEM, "plans", "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    c->budget = budget;
    *out = c;
    return RT_OK;
}

static void entry_free(struct plan_entry *e)
{
    rtg_job_plan_free(&e->plan);
    kin_robot_free(e->src);
    free(e);
}

void srv_plans_clear(struct srv_plans *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    struct plan_entry *e = c->head;
    c->head = c->tail = NULL;
    c->used = 0;
    c->n = 0;
    pthread_mutex_unlock(&c->mu);
    while (e) {
        struct plan_entry *next = e->next;
        entry_free(e);
        e = next;
    }
}

void srv_plans_free(struct srv_plans *c)
{
    if (!c) return;
    srv_plans_clear(c);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

size_t srv_plans_bytes(const struct rtg_job_plan *plan)
{
    if (!plan->states || !plan->source_robot || plan->n_frames < 0) return SIZE_MAX;
    size_t cols = (size_t)RT_ROOT_COLS + (size_t)plan->source_robot->n_dof;
    if ((size_t)plan->n_frames > SIZE_MAX / sizeof(double) / cols) return SIZE_MAX;
    return (size_t)plan->n_frames * cols * sizeof(double);
}

int srv_plans_fits(const struct srv_plans *c, const struct rtg_job_plan *plan)
{
    size_t bytes = srv_plans_bytes(plan);
    return c && plan->source_kind == RTG_SRC_TRAJ && bytes <= SRV_PLANS_ONE && bytes + PLANS_ROBOT_BYTES <= c->budget;
}

int srv_plans_put(struct srv_plans *c, int64_t id, struct rtg_job_plan *plan, struct kin_robot *src)
{
    if (!srv_plans_fits(c, plan) || plan->source_robot != src) return 0;
    size_t bytes = srv_plans_bytes(plan) + PLANS_ROBOT_BYTES;
    struct plan_entry *e = malloc(sizeof *e), *gone = NULL;
    if (!e) return 0;
    *e = (struct plan_entry){id, bytes, *plan, src, NULL};
    pthread_mutex_lock(&c->mu);
    /* Room for it: the oldest plans go (their jobs are built from the
     * store). */
    while (c->head && c->used + bytes > c->budget) {
        struct plan_entry *old = c->head;
        c->head = old->next;
        if (!c->head) c->tail = NULL;
        c->used -= old->bytes;
        c->n--;
        old->next = gone;
        gone = old;
    }
    if (c->tail) c->tail->next = e;
    else c->head = e;
    c->tail = e;
    c->used += bytes;
    c->n++;
    pthread_mutex_unlock(&c->mu);
    while (gone) {
        struct plan_entry *next = gone->next;
        entry_free(gone);
        gone = next;
    }
    memset(plan, 0, sizeof *plan);
    return 1;
}

int srv_plans_take(struct srv_plans *c, int64_t id, struct rtg_job_plan *plan, struct kin_robot **src)
{
    struct plan_entry *e = NULL, *prev = NULL;
    if (!c) return 0;
    pthread_mutex_lock(&c->mu);
    for (e = c->head; e && e->id != id; e = e->next) prev = e;
    if (e) {
        if (prev) prev->next = e->next;
        else c->head = e->next;
        if (c->tail == e) c->tail = prev;
        c->used -= e->bytes;
        c->n--;
    }
    pthread_mutex_unlock(&c->mu);
    if (!e) return 0;
    *plan = e->plan;
    *src = e->src;
    free(e);
    return 1;
}

void srv_plans_count(struct srv_plans *c, int *n, size_t *bytes)
{
    pthread_mutex_lock(&c->mu);
    *n = c->n;
    *bytes = c->used;
    pthread_mutex_unlock(&c->mu);
}
