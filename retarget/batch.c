/* batch.c -- several clips' targets as one solver batch (see batch.h), so
 * that the CLI and the daemon build batches the same way: the clips copied
 * into the caller's reused arrays in parallel, solved, copied back out. */
#include "batch.h"

#include "retarget.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

int rtg_targets_same_weights(const struct kin_robot *robot, const struct rtg_targets *x,
                             const struct rtg_targets *y)
{
    int nt = rt_tangent_dim(&robot->tree), nq = robot->n_dof;
    return x->n_targets == y->n_targets &&
           !memcmp(x->target_link, y->target_link, (size_t)x->n_targets * sizeof(int)) &&
           !memcmp(x->w_vel, y->w_vel, (size_t)nt * sizeof(float)) &&
           !memcmp(x->w_acc, y->w_acc, (size_t)nt * sizeof(float)) &&
           !memcmp(x->rest, y->rest, (size_t)nq * sizeof(float)) &&
           !memcmp(x->w_rest, y->w_rest, (size_t)nq * sizeof(float)) && (!x->init) == (!y->init) &&
           x->n_capsules == y->n_capsules && x->n_pairs == y->n_pairs && x->w_collide == y->w_collide &&
           x->collide_margin == y->collide_margin &&
           (!x->n_capsules || (!memcmp(x->capsule_link, y->capsule_link, (size_t)x->n_capsules * sizeof(int)) &&
                               !memcmp(x->capsule_seg, y->capsule_seg, (size_t)x->n_capsules * 7 * sizeof(float)))) &&
           (!x->n_pairs || !memcmp(x->pair, y->pair, (size_t)x->n_pairs * 2 * sizeof(int))) &&
           x->n_ground == y->n_ground && x->w_ground == y->w_ground &&
           (!x->n_ground || !memcmp(x->ground, y->ground, (size_t)x->n_ground * sizeof(int))) &&
           x->foot_link[0] == y->foot_link[0] && x->foot_link[1] == y->foot_link[1] &&
           x->w_vlim == y->w_vlim && (!x->v_limit) == (!y->v_limit) &&
           (!x->v_limit || !memcmp(x->v_limit, y->v_limit, (size_t)nt * sizeof(float)));
}

void rtg_batch_ws_free(struct rtg_batch_ws *ws)
{
    if (!ws) return;
    free(ws->pos);
    free(ws->rot);
    free(ws->wpos);
    free(ws->wrot);
    free(ws->init);
    free(ws->state);
    free(ws->planted);
    struct rtg_pool *pool = ws->pool;
    memset(ws, 0, sizeof *ws);
    ws->pool = pool;
}

/* Grows *a to hold `n` floats (keeping nothing); 0 when out of memory. */
static int ws_reserve(float **a, size_t *cap, size_t n)
{
    if (n <= *cap && *a) return 1;
    free(*a);
    *a = malloc((n ? n : 1) * sizeof **a);
    *cap = *a ? n : 0;
    return *a != NULL;
}

/* Grows *a to hold `n` bytes (keeping nothing); 0 when out of memory. */
static int ws_reserve_bytes(unsigned char **a, size_t *cap, size_t n)
{
    if (n <= *cap && *a) return 1;
    free(*a);
    *a = malloc(n ? n : 1);
    *cap = *a ? n : 0;
    return *a != NULL;
}

/* One clip's part of a batch, copied in or out (rtg_pool_for). */
struct batch_copy {
    struct rtg_batch_item *items;
    const int *off;
    int nk, cols;
    atomic_int failed;
    float *pos, *rot, *wpos, *wrot, *init, *state;
    unsigned char *planted;
    const struct solver_clip_result *res;
};

static void copy_in(void *ctx, int i)
{
    const struct batch_copy *c = ctx;
    const struct rtg_targets *t = c->items[i].t;
    size_t o = (size_t)c->off[i] * (size_t)c->nk, m = (size_t)t->n_frames * (size_t)c->nk;
    memcpy(c->pos + 3 * o, t->pos, 3 * m * sizeof(float));
    memcpy(c->rot + 4 * o, t->rot, 4 * m * sizeof(float));
    memcpy(c->wpos + o, t->wpos, m * sizeof(float));
    memcpy(c->wrot + o, t->wrot, m * sizeof(float));
    if (c->init)
        memcpy(c->init + (size_t)c->off[i] * (size_t)c->cols, t->init,
               (size_t)t->n_frames * (size_t)c->cols * sizeof(float));
    if (c->planted) {
        unsigned char *pl = c->planted + 2 * (size_t)c->off[i];
        if (t->planted) memcpy(pl, t->planted, 2 * (size_t)t->n_frames);
        else memset(pl, 0, 2 * (size_t)t->n_frames);
    }
}

static void copy_out(void *ctx, int i)
{
    struct batch_copy *c = ctx;
    size_t bytes = (size_t)c->items[i].t->n_frames * (size_t)c->cols * sizeof(float);
    if (!(c->items[i].state = malloc(bytes))) {
        atomic_store(&c->failed, 1);
        return;
    }
    memcpy(c->items[i].state, c->state + (size_t)c->off[i] * (size_t)c->cols, bytes);
    c->items[i].res = c->res[i];
}

enum rt_status rtg_batch_solve(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                               const struct solver_options *opt, struct rtg_batch_item *items,
                               int n, void (*progress)(void *user, int lm_iter, int clips_done),
                               void *progress_user, struct rt_err *err)
{
    const struct rtg_targets *t0 = items[0].t;
    int nk = t0->n_targets, cols = rt_state_cols(&robot->tree);
    size_t total = 0;
    enum rt_status st = RT_ENOMEM;
    struct rtg_batch_ws own = {0};
    if (!ws) ws = &own;
    int *off = malloc((size_t)(n + 1) * sizeof(int));
    struct solver_clip_result *res = malloc((size_t)n * sizeof *res);
    for (int i = 0; i < n; i++) items[i].state = NULL;
    if (!off || !res) goto fail;
    off[0] = 0;
    for (int i = 0; i < n; i++) {
        total += (size_t)items[i].t->n_frames;
        if (total > INT_MAX / 64) {
            st = rt_err_set(err, RT_ELIMIT, "batch", "too many frames in one batch");
            goto fail;
        }
        off[i + 1] = (int)total;
    }
    /* total <= INT_MAX/64 and nk <= RTG_MAX_TARGETS, cols <= 64 + 7: no overflow. */
    size_t nft = total * (size_t)(nk ? nk : 1), nfc = total * (size_t)cols;
    int planted = 0;
    for (int i = 0; i < n && !planted; i++) planted = items[i].t->planted != NULL;
    planted = planted && t0->n_pairs > 0 && t0->w_collide > 0.0f;
    if (!ws_reserve(&ws->pos, &ws->cap_pos, 3 * nft) || !ws_reserve(&ws->rot, &ws->cap_rot, 4 * nft) ||
        !ws_reserve(&ws->wpos, &ws->cap_wpos, nft) || !ws_reserve(&ws->wrot, &ws->cap_wrot, nft) ||
        !ws_reserve(&ws->state, &ws->cap_state, nfc) || (t0->init && !ws_reserve(&ws->init, &ws->cap_init, nfc)) ||
        (planted && !ws_reserve_bytes(&ws->planted, &ws->cap_planted, 2 * total))) {
        rtg_batch_ws_free(ws);
        goto fail;
    }
    struct batch_copy cp = {items, off, nk, cols, 0, ws->pos, ws->rot, ws->wpos, ws->wrot,
                            t0->init ? ws->init : NULL, ws->state, planted ? ws->planted : NULL, res};
    atomic_init(&cp.failed, 0);
    rtg_pool_for(ws->pool, n, copy_in, &cp);
    /* the first clip's weights and options (the caller groups equal ones),
     * the batch's concatenated targets */
    struct solver_batch b;
    rtg_targets_batch(robot, t0, off, opt, &b);
    b.n_clips = n;
    b.target_pos = ws->pos;
    b.target_rot = ws->rot;
    b.target_wpos = ws->wpos;
    b.target_wrot = ws->wrot;
    b.init = cp.init;
    b.planted = cp.planted;
    b.progress = progress;
    b.progress_user = progress_user;
    struct solver_result r = {ws->state, res};
    st = solver_backend_solve(be, &b, &r, err);
    if (st != RT_OK) goto fail;
    rtg_pool_for(ws->pool, n, copy_out, &cp);
    st = RT_OK;
    if (atomic_load(&cp.failed)) {
        for (int j = 0; j < n; j++) {
            free(items[j].state);
            items[j].state = NULL;
        }
        st = RT_ENOMEM;
    }
fail:
    if (st == RT_ENOMEM)
        rt_err_set(err, RT_ENOMEM, "batch", "out of memory for %zu frames", total);
    free(off);
    free(res);
    rtg_batch_ws_free(&own);
    return st;
}
