/* batch.c -- several clips' targets as one solver batch (see batch.h).
 * Moved here from clients/solve.c so that the CLI and the daemon build
 * batches the same way. */
#include "batch.h"

#include "retarget.h"

#include <limits.h>
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
           x->w_vlim == y->w_vlim && (!x->v_limit) == (!y->v_limit) &&
           (!x->v_limit || !memcmp(x->v_limit, y->v_limit, (size_t)nt * sizeof(float)));
}

enum rt_status rtg_batch_solve(struct solver_backend *be, const struct kin_robot *robot,
                               const struct solver_options *opt, struct rtg_batch_item *items,
                               int n, void (*progress)(void *user, int lm_iter, int clips_done),
                               void *progress_user, struct rt_err *err)
{
    const struct rtg_targets *t0 = items[0].t;
    int nk = t0->n_targets, cols = rt_state_cols(&robot->tree);
    size_t total = 0;
    enum rt_status st = RT_ENOMEM;
    int *off = malloc((size_t)(n + 1) * sizeof(int));
    float *pos = NULL, *rot = NULL, *wpos = NULL, *wrot = NULL, *init = NULL, *state = NULL;
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
    size_t nft = total * (size_t)(nk ? nk : 1);
    pos = malloc(nft * 3 * sizeof(float));
    rot = malloc(nft * 4 * sizeof(float));
    wpos = malloc(nft * sizeof(float));
    wrot = malloc(nft * sizeof(float));
    state = malloc(total * (size_t)cols * sizeof(float));
    if (t0->init) init = malloc(total * (size_t)cols * sizeof(float));
    if (!pos || !rot || !wpos || !wrot || !state || (t0->init && !init)) goto fail;
    for (int i = 0; i < n; i++) {
        const struct rtg_targets *t = items[i].t;
        size_t o = (size_t)off[i] * (size_t)nk, m = (size_t)t->n_frames * (size_t)nk;
        memcpy(pos + 3 * o, t->pos, 3 * m * sizeof(float));
        memcpy(rot + 4 * o, t->rot, 4 * m * sizeof(float));
        memcpy(wpos + o, t->wpos, m * sizeof(float));
        memcpy(wrot + o, t->wrot, m * sizeof(float));
        if (init)
            memcpy(init + (size_t)off[i] * (size_t)cols, t->init,
                   (size_t)t->n_frames * (size_t)cols * sizeof(float));
    }
    /* the first clip's weights and options (the caller groups equal ones),
     * the batch's concatenated targets */
    struct solver_batch b;
    rtg_targets_batch(robot, t0, off, opt, &b);
    b.n_clips = n;
    b.target_pos = pos;
    b.target_rot = rot;
    b.target_wpos = wpos;
    b.target_wrot = wrot;
    b.init = init;
    b.progress = progress;
    b.progress_user = progress_user;
    struct solver_result r = {state, res};
    st = solver_backend_solve(be, &b, &r, err);
    if (st != RT_OK) goto fail;
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)items[i].t->n_frames * (size_t)cols * sizeof(float);
        if (!(items[i].state = malloc(bytes))) {
            for (int j = 0; j < i; j++) {
                free(items[j].state);
                items[j].state = NULL;
            }
            st = RT_ENOMEM;
            goto fail;
        }
        memcpy(items[i].state, state + (size_t)off[i] * (size_t)cols, bytes);
        items[i].res = res[i];
    }
    st = RT_OK;
fail:
    if (st == RT_ENOMEM)
        rt_err_set(err, RT_ENOMEM, "batch", "out of memory for %zu frames", total);
    free(off);
    free(res);
    free(pos);
    free(rot);
    free(wpos);
    free(wrot);
    free(init);
    free(state);
    return st;
}
