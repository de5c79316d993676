/* batch.h -- solving several clips' targets as one solver batch: the
 * concatenation of their per-frame targets in the solver's layout (frame
 * offsets, no padding) and the scattering of the result back to each clip.
 * `retarget solve --batch` and the daemon's scheduler both go through it, so
 * that a clip's bits are the same from either (DESIGN.md "The numerical
 * contract": batched equals solo).
 *
 * Memory: rtg_batch_solve() fills each item's `state` with a malloc'd array
 * the caller frees; the targets are borrowed; a struct rtg_batch_ws keeps
 * its arrays until rtg_batch_ws_free(). */
#ifndef RT_RTG_BATCH_H
#define RT_RTG_BATCH_H

#include "../solver/backend.h"
#include "../kinematics/robot.h"
#include "../base/status.h"
#include "pool.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rtg_batch_item {
    const struct rtg_targets *t;   /* in, borrowed: the clip's targets */
    float *state;                  /* out: [t->n_frames * state_cols], caller frees */
    struct solver_clip_result res; /* out */
};

/* 1 when two clips' targets can share one batch: a batch shares its target
 * layout, its smoothness and rest weights and whether an initial state is
 * given (struct solver_batch). Options are compared by the caller. */
int rtg_targets_same_weights(const struct kin_robot *robot, const struct rtg_targets *x,
                             const struct rtg_targets *y);

/* What one caller's batches reuse from call to call: the concatenated
 * arrays (a 262,144-frame G1 batch holds about 300 MB of targets, whose
 * fresh pages cost more to fault in than the copy itself), and the pool
 * that copies clips in and out in parallel. Zero it to start (pool NULL:
 * copies on the caller's thread); one solving thread at a time. */
struct rtg_batch_ws {
    struct rtg_pool *pool;          /* borrowed, may be NULL */
    float *pos, *rot, *wpos, *wrot, *init, *state;
    size_t cap_pos, cap_rot, cap_wpos, cap_wrot, cap_init, cap_state; /* floats each holds */
    unsigned char *planted; /* the clips' contact flags (solver_batch.planted) */
    size_t cap_planted;     /* bytes */
};

/* Frees the arrays (not the pool) and zeroes them; NULL-safe. */
void rtg_batch_ws_free(struct rtg_batch_ws *ws);

/* Solves items[0..n) as one batch on `be` with options `opt` (n >= 1; every
 * item's targets built for `robot` and rtg_targets_same_weights() with
 * items[0]). `ws` (may be NULL: arrays of this call only, copies on this
 * thread) keeps the arrays for the next call. `progress` (may be NULL) is
 * the solver's per-LM-iteration callback. On success every item's state and
 * res are set; on failure no item owns memory and `err` says why
 * (RT_ELIMIT for more than INT_MAX/64 frames, RT_ENOMEM, or the backend's
 * error). */
enum rt_status rtg_batch_solve(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                               const struct solver_options *opt, struct rtg_batch_item *items,
                               int n, void (*progress)(void *user, int lm_iter, int clips_done),
                               void *progress_user, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
