/* targets.c -- allocation and default weights of a per-frame target set. */
#include "targets.h"

#include <stdlib.h>
#include <string.h>

/* Smoothness weights are given for 30 fps and scaled with the frame rate so
 * that the penalty is on velocity and acceleration, not on per-frame
 * differences: a first difference is v*dt, a second a*dt^2. */
#define KIN_REF_DT (1.0 / 30.0)
#define KIN_W_VEL_JOINT 0.05f
#define KIN_W_VEL_BASE 0.05f
#define KIN_W_ACC_JOINT 0.2f
#define KIN_W_ACC_BASE 0.2f
#define KIN_W_REST 0.01f

enum rt_status kin_targets_alloc(struct kin_targets *t, const struct kin_robot *r, int n_frames,
                                 int n_targets, struct rt_err *err)
{
    size_t n_ft, n3, n4;
    int nt = solver_tangent_dim(&r->tree);
    memset(t, 0, sizeof *t);
    if (n_frames < 1 || n_targets < 0 || n_targets > KIN_MAX_TARGETS)
        return rt_err_set(err, RT_ELIMIT, "targets", "bad size: %d frames, %d targets (max %d)",
                          n_frames, n_targets, KIN_MAX_TARGETS);
    if (!rt_mul_size((size_t)n_frames, (size_t)(n_targets ? n_targets : 1), &n_ft) ||
        !rt_mul_size(n_ft, 3 * sizeof(float), &n3) || !rt_mul_size(n_ft, 4 * sizeof(float), &n4))
        return rt_err_set(err, RT_ELIMIT, "targets", "too many frames: %d", n_frames);
    t->n_frames = n_frames;
    t->n_targets = n_targets;
    t->frame_time = KIN_REF_DT;
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
        kin_targets_free(t);
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

void kin_targets_free(struct kin_targets *t)
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
    memset(t, 0, sizeof *t);
    t->foot_link[0] = t->foot_link[1] = -1;
    t->sole_offset = -1.0;
}

void kin_targets_default_weights(struct kin_targets *t, const struct kin_robot *r)
{
    int nb = r->tree.floating_base ? 6 : 0;
    int nt = solver_tangent_dim(&r->tree);
    double dt = t->frame_time > 0 ? t->frame_time : KIN_REF_DT;
    float sv = (float)(KIN_REF_DT / dt), sa = sv * sv;
    for (int i = 0; i < nt; i++) {
        int base = i < nb;
        t->w_vel[i] = (base ? KIN_W_VEL_BASE : KIN_W_VEL_JOINT) * sv;
        t->w_acc[i] = (base ? KIN_W_ACC_BASE : KIN_W_ACC_JOINT) * sa;
    }
    for (int j = 0; j < r->n_dof; j++) {
        double lo = r->joints[r->coord_joint[j]].lower, hi = r->joints[r->coord_joint[j]].upper;
        /* Rest at zero when zero is inside the limits, else at the nearest bound. */
        double rest = 0.0;
        if (lo > 0.0) rest = lo;
        if (hi < 0.0) rest = hi;
        t->rest[j] = (float)rest;
        t->w_rest[j] = KIN_W_REST;
    }
}
