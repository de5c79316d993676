/* g1_clip.h -- the G1 round-trip problem shared by tests/test_solver.c and
 * bench/bench_solver.c: read the real reference trajectory
 * (shared/data/reference/g1/dance1_subject1.csv), run double-precision FK
 * (kin_fk) to get per-frame targets for 14 links, and build a solver batch
 * that must recover the trajectory from the rest pose.
 *
 * Header-only (static functions) so both programs include it; everything it
 * allocates belongs to `struct g1_clip` and is released by g1_clip_free().
 * g1_cpu_solve() solves a batch on a CPU backend of its own (the "fresh
 * context" that reused contexts are compared with). */
#ifndef RT_TESTS_G1_CLIP_H
#define RT_TESTS_G1_CLIP_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/robot.h"
#include "../retarget/collide.h"
#include "../solver/backend.h"
#include "../solver/solver.h"

#define G1_NT 14
static const char *const g1_target_names[G1_NT] = {
    "pelvis", "torso_link",
    "left_hip_roll_link", "left_knee_link", "left_ankle_roll_link",
    "left_shoulder_roll_link", "left_elbow_link", "left_wrist_yaw_link",
    "right_hip_roll_link", "right_knee_link", "right_ankle_roll_link",
    "right_shoulder_roll_link", "right_elbow_link", "right_wrist_yaw_link"};

#define CLIP_MAX_TARGETS 32

struct g1_clip {
    struct kin_robot *robot;
    int n_frames, cols, dim;
    float *truth;       /* [n_frames * cols] the reference trajectory */
    int nt;             /* targets per frame */
    int target_link[CLIP_MAX_TARGETS];
    float *tpos, *trot, *wpos, *wrot; /* [n_frames * nt * 3 | 4 | 1] */
    float *w_vel, *w_acc, *rest, *w_rest;
};

static void g1_clip_free(struct g1_clip *c)
{
    if (!c) return;
    kin_robot_free(c->robot);
    free(c->truth); free(c->tpos); free(c->trot); free(c->wpos); free(c->wrot);
    free(c->w_vel); free(c->w_acc); free(c->rest); free(c->w_rest);
    memset(c, 0, sizeof *c);
}

static void g1_quat_from_m3d(const double *m, double *q)
{
    double tr = m[0] + m[4] + m[8], s;
    if (tr > 0) { s = sqrt(tr + 1.0) * 2; q[3] = 0.25 * s; q[0] = (m[7] - m[5]) / s; q[1] = (m[2] - m[6]) / s; q[2] = (m[3] - m[1]) / s; }
    else if (m[0] > m[4] && m[0] > m[8]) { s = sqrt(1.0 + m[0] - m[4] - m[8]) * 2; q[3] = (m[7] - m[5]) / s; q[0] = 0.25 * s; q[1] = (m[1] + m[3]) / s; q[2] = (m[2] + m[6]) / s; }
    else if (m[4] > m[8]) { s = sqrt(1.0 + m[4] - m[0] - m[8]) * 2; q[3] = (m[2] - m[6]) / s; q[0] = (m[1] + m[3]) / s; q[1] = 0.25 * s; q[2] = (m[5] + m[7]) / s; }
    else { s = sqrt(1.0 + m[8] - m[0] - m[4]) * 2; q[3] = (m[3] - m[1]) / s; q[0] = (m[2] + m[6]) / s; q[1] = (m[5] + m[7]) / s; q[2] = 0.25 * s; }
}

static int robot_clip_finish(struct g1_clip *c, const char *robot, const char *const *names, int nt);

/* Clears c and loads the robot (cols, dim); -1 with a message on stderr. */
static int robot_clip_open(struct g1_clip *c, const char *robot, int nt)
{
    struct rt_err err;
    memset(c, 0, sizeof *c);
    if (nt < 1 || nt > CLIP_MAX_TARGETS) { fprintf(stderr, "%s: %d targets\n", robot, nt); return -1; }
    if (kin_robot_load(robot, &c->robot, &err) != RT_OK) {
        fprintf(stderr, "%s: %s: %s\n", robot, err.where, err.msg);
        return -1;
    }
    c->cols = rt_state_cols(&c->robot->tree);
    c->dim = rt_tangent_dim(&c->robot->tree);
    return 0;
}

/* The same problem for another robot (kin_robot_load's name) with a
 * reference trajectory at data_dir/reference/ROBOT/dance1_subject1.csv
 * and nt <= CLIP_MAX_TARGETS target links by name. Loads at most
 * max_frames frames (0: all). Returns 0 on success, -1 when the robot or
 * the data is unavailable (message on stderr). */
static int robot_clip_load(struct g1_clip *c, const char *data_dir, int max_frames, const char *robot,
                           const char *const *names, int nt)
{
    char path[512];
    if (robot_clip_open(c, robot, nt)) return -1;
    snprintf(path, sizeof path, "%s/reference/%s/dance1_subject1.csv", data_dir, robot);
    FILE *fp = fopen(path, "rb");
    if (!fp) { fprintf(stderr, "%s: cannot open %s\n", robot, path); return -1; }
    size_t cap = 4096, n = 0;
    c->truth = (float *)malloc(cap * (size_t)c->cols * sizeof(float));
    char line[4096];
    while (fgets(line, sizeof line, fp) && (max_frames <= 0 || (int)n < max_frames)) {
        char *p = line, *e;
        if (n == cap) { cap *= 2; c->truth = (float *)realloc(c->truth, cap * (size_t)c->cols * sizeof(float)); }
        int k;
        for (k = 0; k < c->cols; k++) {
            double v = strtod(p, &e);
            if (e == p) break;
            c->truth[n * (size_t)c->cols + (size_t)k] = (float)v;
            p = e;
            while (*p == ',' || *p == ' ') p++;
        }
        if (k == c->cols) n++;
    }
    fclose(fp);
    c->n_frames = (int)n;
    if (n == 0) { fprintf(stderr, "%s: no frames in %s\n", robot, path); return -1; }
    return robot_clip_finish(c, robot, names, nt);
}

/* A synthetic trajectory of n_frames for a robot without a reference one
 * (unit checks only): the base drifts and turns slowly, every joint swings
 * sinusoidally over 30% of its range with its own phase. */
static inline int robot_clip_synth(struct g1_clip *c, const char *robot, int n_frames, const char *const *names, int nt)
{
    if (robot_clip_open(c, robot, nt) || n_frames < 1) return -1;
    const struct rt_tree *tr = &c->robot->tree;
    c->n_frames = n_frames;
    c->truth = (float *)malloc((size_t)n_frames * (size_t)c->cols * sizeof(float));
    for (int f = 0; f < n_frames; f++) {
        float *x = c->truth + (size_t)f * (size_t)c->cols;
        double t = 2.0 * M_PI * f / 240.0, yaw = 0.3 * sin(0.5 * t);
        x[0] = (float)(0.1 * sin(t));
        x[1] = (float)(0.05 * cos(t));
        x[2] = (float)(0.3 + 0.02 * sin(2.0 * t));
        x[3] = 0.0f;
        x[4] = 0.0f;
        x[5] = (float)sin(0.5 * yaw);
        x[6] = (float)cos(0.5 * yaw);
        for (int j = 0; j < tr->n_joints; j++) {
            double mid = 0.5 * (tr->lower[j] + tr->upper[j]), half = 0.5 * (tr->upper[j] - tr->lower[j]);
            x[RT_ROOT_COLS + j] = (float)(mid + 0.3 * half * sin(t + 0.7 * j));
        }
    }
    return robot_clip_finish(c, robot, names, nt);
}

/* The targets (double-precision FK of c->truth at the named links) and the
 * weights of the round-trip problem. */
static int robot_clip_finish(struct g1_clip *c, const char *robot, const char *const *names, int nt)
{
    const struct rt_tree *tr = &c->robot->tree;
    size_t n = (size_t)c->n_frames;
    c->nt = nt;
    for (int k = 0; k < nt; k++) {
        c->target_link[k] = kin_robot_link_index(c->robot, names[k]);
        if (c->target_link[k] < 0) { fprintf(stderr, "%s: no link %s\n", robot, names[k]); return -1; }
    }
    c->tpos = (float *)malloc(n * nt * 3 * sizeof(float));
    c->trot = (float *)malloc(n * nt * 4 * sizeof(float));
    c->wpos = (float *)malloc(n * nt * sizeof(float));
    c->wrot = (float *)malloc(n * nt * sizeof(float));
    int nl = c->robot->tree.n_links;
    double *st = (double *)malloc((size_t)c->cols * sizeof(double));
    double *lp = (double *)malloc((size_t)nl * 3 * sizeof(double)), *lr = (double *)malloc((size_t)nl * 9 * sizeof(double));
    for (size_t f = 0; f < n; f++) {
        for (int k = 0; k < c->cols; k++) st[k] = c->truth[f * (size_t)c->cols + (size_t)k];
        kin_fk(c->robot, st, lp, lr);
        for (int k = 0; k < nt; k++) {
            size_t i = f * nt + (size_t)k;
            int l = c->target_link[k];
            double q[4];
            for (int a = 0; a < 3; a++) c->tpos[3 * i + a] = (float)lp[3 * l + a];
            g1_quat_from_m3d(lr + 9 * l, q);
            for (int a = 0; a < 4; a++) c->trot[4 * i + a] = (float)q[a];
            c->wpos[i] = 1.0f;
            c->wrot[i] = 0.3f;
        }
    }
    free(st); free(lp); free(lr);
    c->w_vel = (float *)malloc((size_t)c->dim * sizeof(float));
    c->w_acc = (float *)malloc((size_t)c->dim * sizeof(float));
    c->rest = (float *)calloc((size_t)tr->n_joints, sizeof(float));
    c->w_rest = (float *)malloc((size_t)tr->n_joints * sizeof(float));
    for (int k = 0; k < c->dim; k++) { c->w_vel[k] = 0.02f; c->w_acc[k] = 0.05f; }
    for (int j = 0; j < tr->n_joints; j++) c->w_rest[j] = 1e-3f;
    return 0;
}

/* The G1 round trip (14 links). */
static int g1_clip_load(struct g1_clip *c, const char *data_dir, int max_frames)
{
    return robot_clip_load(c, data_dir, max_frames, "g1", g1_target_names, G1_NT);
}

/* A batch over frames [first, first + len) of the clip for each of n_clips
 * clips given by (first[k], len[k]); frame_off must have room for n_clips+1.
 * Targets are views into the clip when the clips are one contiguous cut,
 * else copied into *owned (caller frees). */

/* Fills `b` for n_clips clips of the real clip's targets already copied into
 * tp/tq/wp/wo (frame_off as in struct solver_batch), with its weights and the
 * default options. */
static void g1_batch_fill(const struct g1_clip *c, int n_clips, const int *frame_off, const float *tp,
                          const float *tq, const float *wp, const float *wo, struct solver_batch *b)
{
    memset(b, 0, sizeof *b);
    b->tree = &c->robot->tree;
    b->n_clips = n_clips;
    b->frame_off = frame_off;
    b->n_targets = c->nt;
    b->target_link = c->target_link;
    b->target_pos = tp;
    b->target_rot = tq;
    b->target_wpos = wp;
    b->target_wrot = wo;
    b->w_vel = c->w_vel;
    b->w_acc = c->w_acc;
    b->rest = c->rest;
    b->w_rest = c->w_rest;
    solver_options_default(&b->opt);
}

/* The robot's self-collision capsules and pairs as a job has them
 * (retarget/collide.h, held in a target set of its own: t.capsules in
 * double, t.capsule_link / capsule_seg / pair for the solver), with
 * `ground` every capsule but the named feet links' kept above z = 0 as
 * well; g1_collide_set points a batch at them. */
struct g1_collide {
    struct rtg_targets t;
};

static inline int g1_collide_make(struct g1_collide *cd, const struct kin_robot *r, double clear, int ground,
                                  const char *left_foot, const char *right_foot)
{
    memset(cd, 0, sizeof *cd);
    cd->t.foot_link[0] = left_foot ? kin_robot_link_index(r, left_foot) : -1;
    cd->t.foot_link[1] = right_foot ? kin_robot_link_index(r, right_foot) : -1;
    cd->t.on_ground = ground; /* without feet named, every capsule is kept above z = 0 */
    return rtg_targets_collide(&cd->t, r, clear, 1.0, 1.0, NULL) == RT_OK ? 0 : -1;
}

static inline void g1_collide_set(const struct g1_collide *cd, float weight, float margin, struct solver_batch *b)
{
    b->n_capsules = cd->t.n_capsules;
    b->capsule_link = cd->t.capsule_link;
    b->capsule_seg = cd->t.capsule_seg;
    b->n_pairs = cd->t.n_pairs;
    b->pair = cd->t.pair;
    b->n_ground = cd->t.n_ground;
    b->ground = cd->t.ground;
    b->w_ground = weight;
    b->w_collide = weight;
    b->collide_margin = margin;
}

/* Velocity limits of robot r for frames dt apart, scaled by `frac` (below 1:
 * tighter than the robot's, so that many differences are beyond them), into
 * vl[tangent_dim]; points the batch at them with weight w. */
static inline void g1_vlimit_set(const struct kin_robot *r, double dt, double frac, float w, float *vl,
                                 struct solver_batch *b)
{
    int nb = r->tree.floating_base ? 6 : 0;
    for (int c = 0; c < rt_tangent_dim(&r->tree); c++) vl[c] = 0.0f;
    for (int j = 0; j < r->n_dof; j++) {
        double v = r->joints[r->coord_joint[j]].velocity;
        vl[nb + j] = v > 0 ? (float)(v * frac * dt) : 0.0f;
    }
    b->v_limit = vl;
    b->w_vlim = w;
}

static inline void g1_collide_free(struct g1_collide *cd) { rtg_targets_free(&cd->t); }

static void g1_clip_batch(const struct g1_clip *c, int n_clips, const int *first, const int *len,
                          int *frame_off, float **owned, struct solver_batch *b)
{
    int nf = 0;
    frame_off[0] = 0;
    for (int k = 0; k < n_clips; k++) { nf += len[k]; frame_off[k + 1] = nf; }
    const size_t nt = (size_t)c->nt;
    float *buf = (float *)malloc((size_t)nf * nt * 9 * sizeof(float));
    float *tp = buf, *tq = buf + (size_t)nf * nt * 3, *wp = tq + (size_t)nf * nt * 4, *wo = wp + (size_t)nf * nt;
    for (int k = 0; k < n_clips; k++) {
        size_t dst = (size_t)frame_off[k] * nt, src = (size_t)first[k] * nt, cnt = (size_t)len[k] * nt;
        memcpy(tp + 3 * dst, c->tpos + 3 * src, 3 * cnt * sizeof(float));
        memcpy(tq + 4 * dst, c->trot + 4 * src, 4 * cnt * sizeof(float));
        memcpy(wp + dst, c->wpos + src, cnt * sizeof(float));
        memcpy(wo + dst, c->wrot + src, cnt * sizeof(float));
    }
    *owned = buf;
    g1_batch_fill(c, n_clips, frame_off, tp, tq, wp, wo, b);
}

/* Solves `b` into `r` on a new CPU backend with `threads` threads, freed
 * before returning (a fresh context: no earlier solve, its own pool). */
static enum rt_status g1_cpu_solve(const struct solver_batch *b, int threads, struct solver_result *r,
                                   struct rt_err *err)
{
    struct solver_backend be;
    struct solver_backend_config cfg;
    solver_backend_config_default(&cfg);
    cfg.threads = threads;
    enum rt_status st = solver_backend_init(&be, "cpu", &cfg, err);
    if (st == RT_OK) st = solver_backend_solve(&be, b, r, err);
    solver_backend_free(&be);
    return st;
}

/* Round-trip errors of a solved state against the targets, with kin_fk:
 * mean and max link position error (m) over all frames and targets, max
 * orientation error (rad), and joint-limit violations. */
static void g1_clip_errors(const struct g1_clip *c, const struct solver_batch *b, const float *state,
                           double *mean_pos, double *max_pos, double *max_rot, int *violations)
{
    const struct rt_tree *tr = b->tree;
    int nf = b->frame_off[b->n_clips], nl = tr->n_links;
    double *st = (double *)malloc((size_t)c->cols * sizeof(double));
    double *lp = (double *)malloc((size_t)nl * 3 * sizeof(double)), *lr = (double *)malloc((size_t)nl * 9 * sizeof(double));
    double sum = 0, mx = 0, mr = 0;
    int viol = 0;
    for (int f = 0; f < nf; f++) {
        const float *x = state + (size_t)f * c->cols;
        for (int k = 0; k < c->cols; k++) st[k] = x[k];
        for (int j = 0; j < tr->n_joints; j++)
            if (x[7 + j] < tr->lower[j] || x[7 + j] > tr->upper[j]) viol++;
        kin_fk(c->robot, st, lp, lr);
        for (int k = 0; k < c->nt; k++) {
            size_t i = (size_t)f * c->nt + (size_t)k;
            int l = c->target_link[k];
            double e = 0, q[4], qt[4];
            for (int a = 0; a < 3; a++) { double d = lp[3 * l + a] - b->target_pos[3 * i + a]; e += d * d; }
            e = sqrt(e);
            sum += e;
            if (e > mx) mx = e;
            g1_quat_from_m3d(lr + 9 * l, q);
            for (int a = 0; a < 4; a++) qt[a] = b->target_rot[4 * i + a];
            double dot = fabs(q[0] * qt[0] + q[1] * qt[1] + q[2] * qt[2] + q[3] * qt[3]);
            double ang = 2 * acos(dot > 1 ? 1 : dot);
            if (ang > mr) mr = ang;
        }
    }
    *mean_pos = sum / ((double)nf * c->nt);
    *max_pos = mx;
    *max_rot = mr;
    *violations = viol;
    free(st); free(lp); free(lr);
}

#endif
