/* batch.h -- solving several clips' targets as one solver batch: the
 * concatenation of their per-frame targets in the solver's layout (frame
 * offsets, no padding) and the scattering of the result back to each clip.
 * `retarget solve --batch` and the daemon's scheduler both go through it, so
 * that a clip's bits are the same from either (DESIGN.md "The numerical
 * contract": batched equals solo).
 *
 * Memory: rtg_batch_solve() fills each item's `state` with a malloc'd array
 * the caller frees (rtg_batch_solve_packed() with a block: one array for
 * all); the targets are borrowed; a struct rtg_batch_ws keeps its arrays
 * until rtg_batch_ws_free(). */
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
    int pinned;                     /* 1: the target arrays from solver_backend_host_alloc() where it
                                       gives them (set before the first call; for arrays kept long) */
    int block_ahead;                /* 1: rtg_batch_pack() also allocates the block that
                                       rtg_batch_solve_packed() hands out, its pages touched there
                                       (off the solving thread) */
    float *pos, *rot, *wpos, *wrot, *init, *state;
    size_t cap_pos, cap_rot, cap_wpos, cap_wrot, cap_init, cap_state; /* floats each holds */
    unsigned char *planted; /* the clips' contact flags (solver_batch.planted) */
    size_t cap_planted;     /* bytes */
    /* internal: the backend the pinned arrays came from, which of them did
     * (a bit per array), and what rtg_batch_pack() packed */
    struct solver_backend *be;
    unsigned pin_mask;
    const struct rtg_targets **packed; /* the items' targets, in order */
    int *off;                          /* their first frames, and the total at [n_packed] */
    int n_packed, cap_packed;
    float *block;                      /* block_ahead's, until handed out */
};

/* Frees the arrays (not the pool) and zeroes them, keeping the pool and
 * the settings (pinned, block_ahead); NULL-safe. */
void rtg_batch_ws_free(struct rtg_batch_ws *ws);

/* The first half of rtg_batch_solve(): items[0..n) copied into ws's
 * arrays (in parallel on ws->pool), for rtg_batch_solve_packed() of the
 * same items. Lets a caller pack the next call while this one solves, into
 * a second ws. RT_EINVAL for items whose target counts differ (not one
 * layout), RT_ELIMIT, RT_ENOMEM (then nothing is packed). */
enum rt_status rtg_batch_pack(struct rtg_batch_ws *ws, struct solver_backend *be, const struct kin_robot *robot,
                              const struct rtg_batch_item *items, int n, struct rt_err *err);

/* 1 when ws holds items[0..n) as rtg_batch_pack() packed them (the same
 * targets in the same order, not solved since), else 0. */
int rtg_batch_packed(const struct rtg_batch_ws *ws, const struct rtg_batch_item *items, int n);

/* The second half: solves what rtg_batch_pack() packed into ws, which must
 * be items[0..n) in the same order (RT_ESTATE otherwise). `block` NULL:
 * each item's state is malloc'd, as rtg_batch_solve() does; else the
 * states are one malloc'd array, *block, that the caller frees once it is
 * done with every item's state (which points into it). */
enum rt_status rtg_batch_solve_packed(struct rtg_batch_ws *ws, struct solver_backend *be,
                                      const struct kin_robot *robot, const struct solver_options *opt,
                                      struct rtg_batch_item *items, int n,
                                      void (*progress)(void *user, int lm_iter, int clips_done),
                                      void *progress_user, float **block, struct rt_err *err);

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
