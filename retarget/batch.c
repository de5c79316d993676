/* batch.c -- several clips' targets as one solver batch (see batch.h), so
 * that the CLI and the daemon build batches the same way: the clips packed
 * into the caller's reused arrays in parallel (rtg_batch_pack), solved, and
 * copied back out or handed out as one block (rtg_batch_solve_packed). */
#include "batch.h"

#include "retarget.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"

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

/* The arrays of a ws, by bit in pin_mask. */
enum { WS_POS, WS_ROT, WS_WPOS, WS_WROT, WS_INIT, WS_STATE, WS_PLANTED };

static void ws_release(struct rtg_batch_ws *ws, int k, void *p)
{
    if (ws->pin_mask & (1u << k)) solver_backend_host_free(ws->be, p);
    else free(p);
    ws->pin_mask &= ~(1u << k);
}

void rtg_batch_ws_free(struct rtg_batch_ws *ws)
{
    if (!ws) return;
    ws_release(ws, WS_POS, ws->pos);
    ws_release(ws, WS_ROT, ws->rot);
    ws_release(ws, WS_WPOS, ws->wpos);
    ws_release(ws, WS_WROT, ws->wrot);
    ws_release(ws, WS_INIT, ws->init);
    ws_release(ws, WS_STATE, ws->state);
    ws_release(ws, WS_PLANTED, ws->planted);
    free(ws->packed);
    free(ws->off);
    free(ws->block);
    struct rtg_pool *pool = ws->pool;
    int pinned = ws->pinned, block_ahead = ws->block_ahead;
    memset(ws, 0, sizeof *ws);
    ws->pool = pool;
    ws->pinned = pinned;
    ws->block_ahead = block_ahead;
}

/* Grows array k (*a, *cap elements of `size` bytes) to hold n, keeping
 * nothing: page-locked from `be` when ws->pinned and the backend gives it
 * (the target arrays, which go to the device), else rt_alloc_large (huge
 * pages: base/mem.h). An eighth
 * more than asked, so that calls of about the same size do not grow it
 * again (page-locking 100 MB takes 14-21 ms and holds up the device's
 * other callers for a few: bench/RESULTS.md, "twelfth session"). 0 when
 * out of memory. */
static int ws_reserve(struct rtg_batch_ws *ws, struct solver_backend *be, int k, void **a, size_t *cap, size_t n,
                      size_t size)
{
    if (n <= *cap && *a) return 1;
    ws_release(ws, k, *a);
    *a = NULL;
    n += n / 8;
    size_t bytes = (n ? n : 1) * size;
    if (ws->pinned && k != WS_STATE && (!ws->be || ws->be == be) && (*a = solver_backend_host_alloc(be, bytes))) {
        ws->be = be;
        ws->pin_mask |= 1u << k;
    } else {
        *a = rt_alloc_large(bytes, 64, NULL);
    }
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
    float *block; /* copy_in: touches the clip's part of it */
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
    if (c->init && t->init)
        memcpy(c->init + (size_t)c->off[i] * (size_t)c->cols, t->init,
               (size_t)t->n_frames * (size_t)c->cols * sizeof(float));
    unsigned char *pl = c->planted + 2 * (size_t)c->off[i];
    if (t->planted) memcpy(pl, t->planted, 2 * (size_t)t->n_frames);
    else memset(pl, 0, 2 * (size_t)t->n_frames);
    if (c->block)
        memset(c->block + (size_t)c->off[i] * (size_t)c->cols, 0,
               (size_t)t->n_frames * (size_t)c->cols * sizeof(float));
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

enum rt_status rtg_batch_pack(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                              const struct rtg_batch_item *items, int n, struct rt_err *err)
{
    const struct rtg_targets *t0 = items[0].t;
    int nk = t0->n_targets, cols = rt_state_cols(&robot->tree);
    size_t total = 0;
    ws->n_packed = 0;
    if (n > ws->cap_packed) {
        const struct rtg_targets **p = realloc(ws->packed, (size_t)n * sizeof *p);
        if (p) ws->packed = p;
        int *o = p ? realloc(ws->off, ((size_t)n + 1) * sizeof *o) : NULL;
        if (o) ws->off = o;
        if (!p || !o) return rt_err_set(err, RT_ENOMEM, "batch", "out of memory for %d clips", n);
        ws->cap_packed = n;
    }
    ws->off[0] = 0;
    for (int i = 0; i < n; i++) {
        if (items[i].t->n_targets != nk)
            return rt_err_set(err, RT_EINVAL, "batch", "clip %d has %d targets, the batch's first %d", i,
                              items[i].t->n_targets, nk);
        total += (size_t)items[i].t->n_frames;
        if (total > INT_MAX / 64) return rt_err_set(err, RT_ELIMIT, "batch", "too many frames in one batch");
        ws->off[i + 1] = (int)total;
    }
    /* total <= INT_MAX/64 and nk <= RTG_MAX_TARGETS, cols <= 64 + 7: no overflow. */
    size_t nft = total * (size_t)(nk ? nk : 1), nfc = total * (size_t)cols;
    if (!ws_reserve(ws, be, WS_POS, (void **)&ws->pos, &ws->cap_pos, 3 * nft, sizeof(float)) ||
        !ws_reserve(ws, be, WS_ROT, (void **)&ws->rot, &ws->cap_rot, 4 * nft, sizeof(float)) ||
        !ws_reserve(ws, be, WS_WPOS, (void **)&ws->wpos, &ws->cap_wpos, nft, sizeof(float)) ||
        !ws_reserve(ws, be, WS_WROT, (void **)&ws->wrot, &ws->cap_wrot, nft, sizeof(float)) ||
        (t0->init && !ws_reserve(ws, be, WS_INIT, (void **)&ws->init, &ws->cap_init, nfc, sizeof(float))) ||
        !ws_reserve(ws, be, WS_PLANTED, (void **)&ws->planted, &ws->cap_planted, 2 * total, 1)) {
        rtg_batch_ws_free(ws);
        return rt_err_set(err, RT_ENOMEM, "batch", "out of memory for %zu frames", total);
    }
    free(ws->block);
    ws->block = ws->block_ahead ? rt_alloc_large((nfc ? nfc : 1) * sizeof(float), 64, NULL) : NULL;
    struct batch_copy cp = {(struct rtg_batch_item *)items, ws->off, nk, cols, 0, ws->pos, ws->rot, ws->wpos,
                            ws->wrot, t0->init ? ws->init : NULL, NULL, ws->planted, NULL, ws->block};
    atomic_init(&cp.failed, 0);
    rtg_pool_for(ws->pool, n, copy_in, &cp);
    for (int i = 0; i < n; i++) ws->packed[i] = items[i].t;
    ws->n_packed = n;
    return RT_OK;
}

int rtg_batch_packed(const struct rtg_batch_ws *ws, const struct rtg_batch_item *items, int n)
{
    if (n < 1 || ws->n_packed != n) return 0;
    for (int i = 0; i < n; i++)
        if (ws->packed[i] != items[i].t) return 0;
    return 1;
}

enum rt_status rtg_batch_solve_packed(struct rtg_batch_ws *ws, struct solver_backend *be,
                                      const struct kin_robot *robot, const struct solver_options *opt,
                                      struct rtg_batch_item *items, int n,
                                      void (*progress)(void *user, int lm_iter, int clips_done),
                                      void *progress_user, float **block, struct rt_err *err)
{
    const struct rtg_targets *t0 = items[0].t;
    int cols = rt_state_cols(&robot->tree);
    enum rt_status st = RT_ENOMEM;
    for (int i = 0; i < n; i++) items[i].state = NULL;
    if (block) *block = NULL;
    if (!rtg_batch_packed(ws, items, n))
        return rt_err_set(err, RT_ESTATE, "batch", "the clips packed are not the clips solved");
    ws->n_packed = 0; /* consumed: the solve reads what is packed once */
    size_t total = (size_t)ws->off[n], nfc = total * (size_t)cols;
    struct solver_clip_result *res = malloc((size_t)n * sizeof *res);
    float *state = NULL;
    if (!res) goto fail;
    if (block) {
        state = *block = ws->block ? ws->block : rt_alloc_large((nfc ? nfc : 1) * sizeof(float), 64, NULL);
        ws->block = NULL;
    }
    else if (ws_reserve(ws, be, WS_STATE, (void **)&ws->state, &ws->cap_state, nfc, sizeof(float))) state = ws->state;
    if (!state) goto fail;
    /* the first clip's weights and options (the caller groups equal ones),
     * the batch's concatenated targets */
    struct solver_batch b;
    rtg_targets_batch(robot, t0, ws->off, opt, &b);
    /* The flags where the pairs are solved and some clip has them. */
    int planted = 0;
    for (int i = 0; i < n && !planted; i++) planted = items[i].t->planted != NULL;
    b.n_clips = n;
    b.target_pos = ws->pos;
    b.target_rot = ws->rot;
    b.target_wpos = ws->wpos;
    b.target_wrot = ws->wrot;
    b.init = t0->init ? ws->init : NULL;
    b.planted = planted && b.n_pairs ? ws->planted : NULL;
    b.progress = progress;
    b.progress_user = progress_user;
    struct solver_result r = {state, res};
    st = solver_backend_solve(be, &b, &r, err);
    if (st != RT_OK) goto fail;
    if (block) {
        for (int i = 0; i < n; i++) {
            items[i].state = state + (size_t)ws->off[i] * (size_t)cols;
            items[i].res = res[i];
        }
    } else {
        struct batch_copy cp = {items, ws->off, 0, cols, 0, NULL, NULL, NULL, NULL, NULL, state, NULL, res, NULL};
        atomic_init(&cp.failed, 0);
        rtg_pool_for(ws->pool, n, copy_out, &cp);
        if (atomic_load(&cp.failed)) {
            for (int j = 0; j < n; j++) {
                free(items[j].state);
                items[j].state = NULL;
            }
            st = RT_ENOMEM;
        }
    }
fail:
    if (st == RT_ENOMEM) rt_err_set(err, RT_ENOMEM, "batch", "out of memory for %zu frames", total);
    if (st != RT_OK && block) {
        free(*block);
        *block = NULL;
        for (int i = 0; i < n; i++) items[i].state = NULL;
    }
    free(res);
    return st;
}

enum rt_status rtg_batch_solve(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                               const struct solver_options *opt, struct rtg_batch_item *items,
                               int n, void (*progress)(void *user, int lm_iter, int clips_done),
                               void *progress_user, struct rt_err *err)
{
    struct rtg_batch_ws own = {0};
    if (!ws) ws = &own;
    for (int i = 0; i < n; i++) items[i].state = NULL;
    enum rt_status st = rtg_batch_pack(ws, be, robot, items, n, err);
    if (st == RT_OK) st = rtg_batch_solve_packed(ws, be, robot, opt, items, n, progress, progress_user, NULL, err);
    rtg_batch_ws_free(&own);
    return st;
}
