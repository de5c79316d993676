/* targets.c -- allocation and default weights of a per-frame target set, and
 * the targets of the identity mapping from one robot's trajectory onto
 * another of the same model. */
#include "targets.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/rot.h"

/* Smoothness weights are given for 30 fps and scaled with the frame rate so
 * that the penalty is on velocity and acceleration, not on per-frame
 * differences: a first difference is v*dt, a second a*dt^2. */
#define RTG_REF_DT (1.0 / 30.0)
#define RTG_W_VEL_JOINT 0.05f
#define RTG_W_VEL_BASE 0.05f
#define RTG_W_ACC_JOINT 0.2f
#define RTG_W_ACC_BASE 0.2f
#define RTG_W_REST 0.01f

enum rt_status rtg_targets_alloc(struct rtg_targets *t, const struct kin_robot *r, int n_frames,
                                 int n_targets, struct rt_err *err)
{
    size_t n_ft, n3, n4;
    int nt = rt_tangent_dim(&r->tree);
    memset(t, 0, sizeof *t);
    if (n_frames < 1 || n_targets < 0 || n_targets > RTG_MAX_TARGETS)
        return rt_err_set(err, RT_ELIMIT, "targets", "bad size: %d frames, %d targets (max %d)",
                          n_frames, n_targets, RTG_MAX_TARGETS);
    if (!rt_mul_size((size_t)n_frames, (size_t)(n_targets ? n_targets : 1), &n_ft) ||
        !rt_mul_size(n_ft, 3 * sizeof(float), &n3) || !rt_mul_size(n_ft, 4 * sizeof(float), &n4))
        return rt_err_set(err, RT_ELIMIT, "targets", "too many frames: %d", n_frames);
    t->n_frames = n_frames;
    t->n_targets = n_targets;
    t->frame_time = RTG_REF_DT;
    t->foot_link[0] = t->foot_link[1] = -1;
    t->sole_offset = -1.0;
    t->target_link = calloc((size_t)(n_targets ? n_targets : 1), sizeof(int));
    t->pos = malloc(n3);
    t->rot = malloc(n4);
    t->wpos = calloc(n_ft, sizeof(float));
    t->wrot = calloc(n_ft, sizeof(float));
    t->w_vel = calloc((size_t)nt, sizeof(float));
    t->w_acc = calloc((size_t)nt, sizeof(float));
    t->rest = calloc((size_t)(r->n_dof ? r->n_dof : 1), sizeof(float));
    t->w_rest = calloc((size_t)(r->n_dof ? r->n_dof : 1), sizeof(float));
    if (!t->target_link || !t->pos || !t->rot || !t->wpos || !t->wrot || !t->w_vel || !t->w_acc ||
        !t->rest || !t->w_rest) {
        rtg_targets_free(t);
        return rt_err_set(err, RT_ENOMEM, "targets", "out of memory for %d frames", n_frames);
    }
    /* Identity orientations keep unused slots well-formed. */
    for (size_t i = 0; i < n_ft; i++) {
        t->pos[3 * i] = t->pos[3 * i + 1] = t->pos[3 * i + 2] = 0.0f;
        t->rot[4 * i] = t->rot[4 * i + 1] = t->rot[4 * i + 2] = 0.0f;
        t->rot[4 * i + 3] = 1.0f;
    }
    return RT_OK;
}

void rtg_targets_free(struct rtg_targets *t)
{
    if (!t) return;
    free(t->target_link);
    free(t->pos);
    free(t->rot);
    free(t->wpos);
    free(t->wrot);
    free(t->w_vel);
    free(t->w_acc);
    free(t->rest);
    free(t->w_rest);
    free(t->init);
    free(t->contact);
    free(t->planted);
    free(t->capsules);
    free(t->capsule_link);
    free(t->capsule_seg);
    free(t->pair);
    free(t->ground);
    free(t->v_limit);
    memset(t, 0, sizeof *t);
    t->foot_link[0] = t->foot_link[1] = -1;
    t->sole_offset = -1.0;
}

void rtg_targets_default_weights(struct rtg_targets *t, const struct kin_robot *r)
{
    int nb = r->tree.floating_base ? 6 : 0;
    int nt = rt_tangent_dim(&r->tree);
    double dt = t->frame_time > 0 ? t->frame_time : RTG_REF_DT;
    float sv = (float)(RTG_REF_DT / dt), sa = sv * sv;
    for (int i = 0; i < nt; i++) {
        int base = i < nb;
        t->w_vel[i] = (base ? RTG_W_VEL_BASE : RTG_W_VEL_JOINT) * sv;
        t->w_acc[i] = (base ? RTG_W_ACC_BASE : RTG_W_ACC_JOINT) * sa;
    }
    for (int j = 0; j < r->n_dof; j++) {
        double lo = r->joints[r->coord_joint[j]].lower, hi = r->joints[r->coord_joint[j]].upper;
        /* Rest at zero when zero is inside the limits, else at the nearest bound. */
        double rest = 0.0;
        if (lo > 0.0) rest = lo;
        if (hi < 0.0) rest = hi;
        t->rest[j] = (float)rest;
        t->w_rest[j] = RTG_W_REST;
    }
}

enum rt_status rtg_targets_velocity_limits(struct rtg_targets *t, const struct kin_robot *r, double scale,
                                           struct rt_err *err)
{
    int nb = r->tree.floating_base ? 6 : 0, nt = rt_tangent_dim(&r->tree);
    double dt = t->frame_time > 0 ? t->frame_time : RTG_REF_DT;
    free(t->v_limit);
    t->v_limit = NULL;
    t->w_vlim = 0.0f;
    if (!(scale > 0.0) || r->n_dof < 1) return RT_OK;
    if (!(t->v_limit = calloc((size_t)nt, sizeof *t->v_limit)))
        return rt_err_set(err, RT_ENOMEM, "targets", "out of memory");
    for (int j = 0; j < r->n_dof; j++) {
        double v = r->joints[r->coord_joint[j]].velocity;
        if (!(v > 0.0 && isfinite(v))) v = RTG_VLIM_FALLBACK;
        t->v_limit[nb + j] = (float)(v * dt);
    }
    t->w_vlim = (float)(RTG_W_VLIM_REF * scale * (RTG_REF_DT / dt));
    return RT_OK;
}

/* Weights of the identity mapping relative to rtg_targets_default_weights(). */
#define RTG_TRAJ_SMOOTH_SCALE 0.25f
#define RTG_TRAJ_REST_SCALE 0.1f
#define RTG_TRAJ_ROT_WEIGHT 0.3f

/* The frames of rtg_targets_from_traj() in pieces of RTG_POOL_PIECE. */
struct traj_pieces {
    const struct kin_robot *src;
    const double *states;
    int n_frames, n;
    const int *src_link;
    struct rtg_targets *t;
    atomic_int failed;
};

static void traj_piece(void *ctx, int k)
{
    struct traj_pieces *tp = ctx;
    const struct kin_robot *src = tp->src;
    struct rtg_targets *t = tp->t;
    int f0, f1, n = tp->n;
    rtg_pool_piece(k, RTG_POOL_PIECE, tp->n_frames, &f0, &f1);
    int cols = RT_ROOT_COLS + src->n_dof;
    size_t nl = (size_t)src->n_links;
    double *pos = malloc(4 * nl * 12 * sizeof(double)), *rot = pos + 4 * 3 * nl; /* four frames' links */
    for (int f = f0; pos && f < f1; f += 4) {
        int m = f1 - f < 4 ? f1 - f : 4;
        kin_fk_frames(src, m, tp->states + (size_t)f * (size_t)cols, (size_t)cols, pos, rot);
        for (int l = 0; l < m; l++)
            for (int j = 0; j < n; j++) {
                size_t i = (size_t)(f + l) * (size_t)n + (size_t)j;
                const double *lp = pos + (size_t)l * 3 * nl, *lr = rot + (size_t)l * 9 * nl;
                double q[4];
                for (int c = 0; c < 3; c++) t->pos[3 * i + c] = (float)lp[3 * tp->src_link[j] + c];
                kin_mat_to_quat(lr + 9 * tp->src_link[j], q);
                for (int c = 0; c < 4; c++) t->rot[4 * i + c] = (float)q[c];
                t->wpos[i] = 1.0f;
                t->wrot[i] = RTG_TRAJ_ROT_WEIGHT;
            }
    }
    if (!pos) atomic_store(&tp->failed, 1);
    free(pos);
}

enum rt_status rtg_targets_from_traj(struct rtg_pool *pool, const struct kin_robot *src, const double *states,
                                     int n_frames, double frame_time,
                                     const struct kin_robot *dst, struct rtg_targets *t,
                                     struct rt_err *err)
{
    int src_link[RTG_MAX_TARGETS], dst_link[RTG_MAX_TARGETS], n = 0;
    char missing[1024] = "";
    enum rt_status st;
    const char *const *ids = kin_robot_identity_links();
    for (int i = 0; ids[i]; i++) {
        int a = kin_robot_link_index(src, ids[i]);
        int b = kin_robot_link_index(dst, ids[i]);
        if (a >= 0 && b >= 0) {
            src_link[n] = a;
            dst_link[n] = b;
            n++;
        } else if (strlen(missing) + strlen(ids[i]) + 2 < sizeof missing) {
            strcat(missing, missing[0] ? " " : "");
            strcat(missing, ids[i]);
        }
    }
    if (n < 2)
        return rt_err_set(err, RT_ENOTFOUND, "mapping",
                          "robots '%s' and '%s' share too few mapped links (missing: %s)",
                          src->name, dst->name, missing);
    st = rtg_targets_alloc(t, dst, n_frames, n, err);
    if (st != RT_OK) return st;
    t->frame_time = frame_time;
    rtg_targets_default_weights(t, dst);
    /* A robot trajectory is already feasible and smooth: track it closely,
     * with lighter smoothness and rest terms than a human capture needs. */
    for (int i = 0; i < rt_tangent_dim(&dst->tree); i++) {
        t->w_vel[i] *= RTG_TRAJ_SMOOTH_SCALE;
        t->w_acc[i] *= RTG_TRAJ_SMOOTH_SCALE;
    }
    for (int j = 0; j < dst->n_dof; j++) t->w_rest[j] *= RTG_TRAJ_REST_SCALE;
    memcpy(t->target_link, dst_link, (size_t)n * sizeof(int));
    struct traj_pieces tp = {src, states, n_frames, n, src_link, t, 0};
    atomic_init(&tp.failed, 0);
    rtg_pool_for_idle(pool, rtg_pool_pieces(n_frames, RTG_POOL_PIECE), traj_piece, &tp);
    if (atomic_load(&tp.failed)) {
        rtg_targets_free(t);
        return rt_err_set(err, RT_ENOMEM, "targets", "out of memory");
    }
    kin_robot_identity_feet(dst, t->foot_link);
    return RT_OK;
}
