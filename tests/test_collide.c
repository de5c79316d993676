/* test_collide.c -- the plausibility terms of the solve. The self-collision
 * term: the robots' capsules and pairs (kinematics/capsule.h), the float distance and Jacobian row of the solver
 * (solver/frame.h) against the double distance and its finite differences,
 * the same bits for any thread count with the term on, and a solve that
 * pulls the robot apart where its targets would make it penetrate itself.
 * The report's self-penetration (rtg_collide_depth) against every pair
 * measured one by one. The ground term: the lowest point of every capsule and its Jacobian row
 * against finite differences, a planted foot's capsules an obstacle that
 * moves only the other link, and a solve whose hand targets are below the
 * ground keeping the capsules above it. The velocity limits: a clip played
 * too fast for limits at a third of the robot's, slowed where it exceeds
 * them, on the PCG and the direct solver. */
#include "test.h"

#include "../kinematics/capsule.h"
#include "../retarget/collide.h"
#include "../solver/frame.h"
#include "g1_clip.h"

/* No pair of one link, of a link and its parent, or of a link and a
 * non-branching ancestor. */
static void pairs_checks(const char *name, int want_caps_min)
{
    struct kin_robot *r = NULL;
    struct kin_capsule *caps = NULL;
    int n = 0, np = 0, *pairs = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s", name);
    if (strchr(name, '/')) snprintf(path, sizeof path, "%s/%s", test_data_dir(), name);
    CHECK_EQ_INT(kin_robot_load(path, &r, NULL), RT_OK);
    if (!r) return;
    CHECK_EQ_INT(kin_robot_capsules(r, &caps, &n, NULL), RT_OK);
    CHECK(n >= want_caps_min);
    CHECK_EQ_INT(kin_capsule_pairs(r, caps, n, RTG_COLLIDE_MARGIN, &pairs, &np, NULL), RT_OK);
    CHECK(np > 0);
    int bad = 0;
    for (int p = 0; p < np; p++) {
        int a = caps[pairs[2 * p]].link, b = caps[pairs[2 * p + 1]].link;
        if (a == b || r->links[a].parent == b || r->links[b].parent == a) bad++;
        if (!(pairs[2 * p] < pairs[2 * p + 1])) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    for (int c = 0; c < n; c++) CHECK(caps[c].radius >= 0.0 && caps[c].radius <= 0.5);
    printf("%s: %d capsules, %d pairs\n", name, n, np);
    free(caps);
    free(pairs);
    kin_robot_free(r);
}

/* frame_pair_eval (float) against kin_capsule_distance (double), and
 * frame_pair_jac against central differences of the double distance, at
 * frames of the real G1 clip with the arms pushed into the body. */
static void jacobian_checks(const struct g1_clip *c, const struct g1_collide *cd)
{
    const struct kin_robot *r = c->robot;
    struct solver_batch b;
    memset(&b, 0, sizeof b);
    b.tree = &r->tree;
    g1_collide_set(cd, 1.0f, 0.2f, &b);
    const struct kin_capsule *caps = cd->t.capsules;
    int cols = c->cols, nl = r->n_links, checked = 0, worst_i = 0;
    float *lk = malloc((size_t)nl * FRAME_LINK_STRIDE * sizeof *lk);
    double *x = malloc((size_t)cols * sizeof *x), *P = malloc((size_t)nl * 3 * sizeof *P);
    double *M = malloc((size_t)nl * 9 * sizeof *M);
    double worst_d = 0, worst_j = 0;
    int eshoulder = kin_robot_joint_index(r, "left_shoulder_roll_joint");
    int cshoulder = eshoulder >= 0 ? r->joints[eshoulder].coord : -1;
    for (int f = 0; f < c->n_frames; f += 97) {
        float xf[128];
        for (int k = 0; k < cols; k++) xf[k] = c->truth[(size_t)f * cols + k];
        if (cshoulder >= 0) xf[RT_ROOT_COLS + cshoulder] = -0.2f; /* arm into the torso */
        frame_fk(&r->tree, xf, lk);
        for (int p = 0; p < cd->t.n_pairs; p++) {
            float pa[3], pb[3], nrm[3];
            float d = frame_pair_eval(&b, lk, p, pa, pb, nrm);
            for (int k = 0; k < cols; k++) x[k] = xf[k];
            kin_fk(r, x, P, M);
            double dd = kin_capsule_distance(&caps[cd->t.pair[2 * p]], &caps[cd->t.pair[2 * p + 1]], P, M);
            if (fabs(d - dd) > worst_d) worst_d = fabs(d - dd);
            if (!(d < 0.05f)) continue;
            int cl[FRAME_MAX_DIM];
            float jr[FRAME_MAX_DIM];
            int nc = frame_pair_jac(&b, f, lk, p, pa, pb, nrm, cl, jr);
            for (int e = 0; e < nc; e++) {
                int j = cl[e] - 6; /* joint coordinate */
                const double h = 1e-6;
                x[RT_ROOT_COLS + j] = xf[RT_ROOT_COLS + j] + h;
                kin_fk(r, x, P, M);
                double up = kin_capsule_distance(&caps[cd->t.pair[2 * p]], &caps[cd->t.pair[2 * p + 1]], P, M);
                x[RT_ROOT_COLS + j] = xf[RT_ROOT_COLS + j] - h;
                kin_fk(r, x, P, M);
                double dn = kin_capsule_distance(&caps[cd->t.pair[2 * p]], &caps[cd->t.pair[2 * p + 1]], P, M);
                x[RT_ROOT_COLS + j] = xf[RT_ROOT_COLS + j];
                double fd = (up - dn) / (2 * h), err = fabs(fd - jr[e]);
                if (err > worst_j) {
                    worst_j = err;
                    worst_i = p;
                }
                checked++;
            }
        }
    }
    printf("distance float vs double: max %.3g m; Jacobian vs differences: %d entries, max error %.3g (pair %d)\n",
           worst_d, checked, worst_j, worst_i);
    CHECK(worst_d < 1e-5);
    CHECK(checked > 50);
    CHECK(worst_j < 2e-3);
    free(lk);
    free(x);
    free(P);
    free(M);
}

/* A planted foot is an obstacle (frame_pair_jac with b.planted): at a pose
 * of the real G1 clip with the left leg swung across the right, every pair
 * of the right foot's capsules and another link's keeps exactly the other
 * side's columns and values when the right foot is planted, and loses
 * every column of the right leg's joints; a pair of the two feet keeps
 * both sides when both are planted, and when neither is. */
static void planted_checks(const struct g1_clip *c, const struct g1_collide *cd)
{
    const struct kin_robot *r = c->robot;
    struct solver_batch b;
    memset(&b, 0, sizeof b);
    b.tree = &r->tree;
    g1_collide_set(cd, 1.0f, 0.2f, &b); /* a wide margin: many pairs active */
    int foot[2] = {kin_robot_link_index(r, "left_ankle_roll_link"), kin_robot_link_index(r, "right_ankle_roll_link")};
    CHECK(foot[0] >= 0 && foot[1] >= 0);
    b.foot_link[0] = foot[0];
    b.foot_link[1] = foot[1];
    unsigned char planted[2 * 2] = {0, 1, 1, 1}; /* frame 0: right planted; frame 1: both */
    float *lk = malloc((size_t)r->n_links * FRAME_LINK_STRIDE * sizeof *lk);
    float xf[128];
    for (int k = 0; k < c->cols; k++) xf[k] = c->truth[k];
    int hip = kin_robot_joint_index(r, "left_hip_roll_joint");
    CHECK(hip >= 0);
    xf[RT_ROOT_COLS + r->joints[hip].coord] = -0.5f; /* left leg inward, across the right */
    frame_fk(&r->tree, xf, lk);
    int right_pairs = 0, feet_pairs = 0, bad = 0;
    for (int p = 0; p < b.n_pairs; p++) {
        int la = b.capsule_link[b.pair[2 * p]], lb = b.capsule_link[b.pair[2 * p + 1]];
        int ra = la == foot[1], rb = lb == foot[1];
        if (!ra && !rb) continue;
        float pa[3], pb[3], nrm[3];
        if (!(frame_pair_eval(&b, lk, p, pa, pb, nrm) < b.collide_margin)) continue;
        int c0[FRAME_MAX_DIM], c1[FRAME_MAX_DIM], c2[FRAME_MAX_DIM];
        float j0[FRAME_MAX_DIM], j1[FRAME_MAX_DIM], j2[FRAME_MAX_DIM];
        b.planted = NULL;
        int n0 = frame_pair_jac(&b, 0, lk, p, pa, pb, nrm, c0, j0);
        b.planted = planted;
        int n1 = frame_pair_jac(&b, 0, lk, p, pa, pb, nrm, c1, j1);
        int n2 = frame_pair_jac(&b, 1, lk, p, pa, pb, nrm, c2, j2);
        int other = ra ? lb : la;
        if (other == foot[0]) {
            /* both planted (frame 1): the row is the unplanted one */
            feet_pairs++;
            bad += n2 != n0;
            for (int e = 0; e < n0 && e < n2; e++) bad += c2[e] != c0[e] || j2[e] != j0[e];
        }
        right_pairs++;
        /* frame 0: the right leg's joints gone, every other column as before */
        int kept = 0;
        for (int e = 0; e < n0; e++) {
            int ji = c0[e] - 6, link = -1;
            for (int l = 0; l < r->n_links; l++)
                if (r->tree.joint_index[l] == ji) link = l;
            int on_right = link >= 0 && kin_link_is_ancestor(r, link, foot[1]) && !kin_link_is_ancestor(r, link, other);
            int found = -1;
            for (int u = 0; u < n1; u++)
                if (c1[u] == c0[e]) found = u;
            if (on_right) bad += found >= 0;
            else {
                kept++;
                bad += found < 0 || (found >= 0 && j1[found] != j0[e]);
            }
        }
        bad += n1 != kept;
    }
    printf("planted foot: %d active pairs with the right foot (%d of the two feet), %d mismatches\n", right_pairs,
           feet_pairs, bad);
    CHECK(right_pairs > 0);
    CHECK(feet_pairs > 0);
    CHECK_EQ_INT(bad, 0);
    free(lk);
}

/* The deepest penetration of every frame of a state, over the batch's pairs
 * (the solver's own float distance). */
static double deepest(const struct g1_clip *c, const struct solver_batch *b, const float *state, int nf)
{
    float *lk = malloc((size_t)c->robot->n_links * FRAME_LINK_STRIDE * sizeof *lk);
    double worst = 0;
    for (int f = 0; f < nf; f++) {
        frame_fk(&c->robot->tree, state + (size_t)f * c->cols, lk);
        for (int p = 0; p < b->n_pairs; p++) {
            float pa[3], pb[3], nrm[3];
            float d = frame_pair_eval(b, lk, p, pa, pb, nrm);
            if (-d > worst) worst = -d;
        }
    }
    free(lk);
    return worst;
}

/* The G1 round trip with every arm target pulled 20 cm towards the body's
 * midline: without the term the arms go into the torso; with it they stay
 * out (within a few millimetres), the same bits at 1 and 3 threads. */
static void solve_checks(const struct g1_clip *c, const struct g1_collide *cd)
{
    const int first[2] = {0, 400}, len[2] = {60, 200};
    int off[3];
    float *owned = NULL;
    struct solver_batch b;
    g1_clip_batch(c, 2, first, len, off, &owned, &b);
    int nt = c->nt, nf = off[2];
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < nt; k++) {
            const char *name = c->robot->links[c->target_link[k]].name;
            if (!strstr(name, "wrist") && !strstr(name, "elbow")) continue;
            float *tp = (float *)b.target_pos + 3 * ((size_t)f * nt + k);
            const float *pel = b.target_pos + 3 * ((size_t)f * nt);
            float dy = pel[1] - tp[1];
            tp[1] += dy > 0.2f ? 0.2f : (dy < -0.2f ? -0.2f : dy);
        }
    size_t bytes = (size_t)nf * c->cols * sizeof(float);
    float *s_off = malloc(bytes), *s1 = malloc(bytes), *s3 = malloc(bytes);
    struct solver_clip_result rr[2];
    struct solver_result r0 = {s_off, rr}, r1 = {s1, rr}, r3 = {s3, rr};
    CHECK_EQ_INT(g1_cpu_solve(&b, 2, &r0, NULL), RT_OK);
    g1_collide_set(cd, (float)RTG_COLLIDE_WEIGHT, (float)RTG_COLLIDE_MARGIN, &b);
    CHECK_EQ_INT(g1_cpu_solve(&b, 1, &r1, NULL), RT_OK);
    CHECK_EQ_INT(g1_cpu_solve(&b, 3, &r3, NULL), RT_OK);
    CHECK(memcmp(s1, s3, bytes) == 0);
    double d_off = deepest(c, &b, s_off, nf), d_on = deepest(c, &b, s1, nf);
    printf("arms pulled in: deepest self-penetration %.4f m without the term, %.4f m with it\n", d_off, d_on);
    CHECK(d_off > 0.015);
    CHECK(d_on < 0.005);
    free(owned);
    free(s_off);
    free(s1);
    free(s3);
}

/* The lowest capsule point (float, the solver's) of every frame of a
 * state over the batch's ground capsules. */
static double lowest(const struct g1_clip *c, const struct solver_batch *b, const float *state, int nf)
{
    float *lk = malloc((size_t)c->robot->n_links * FRAME_LINK_STRIDE * sizeof *lk);
    double low = INFINITY;
    for (int f = 0; f < nf; f++) {
        frame_fk(&c->robot->tree, state + (size_t)f * c->cols, lk);
        for (int i = 0; i < b->n_ground; i++) {
            float P[3];
            float h = frame_ground_eval(b, lk, b->ground[i], P);
            if (h < low) low = h;
        }
    }
    free(lk);
    return low;
}

/* Lowest point of capsule k in double at the float state xf: its segment's
 * lower end's z minus its radius. */
static double ground_height(const struct kin_robot *r, const struct kin_capsule *k, const float *xf, double *x,
                            double *P, double *M)
{
    double w0[3], w1[3];
    for (int i = 0; i < RT_ROOT_COLS + r->n_dof; i++) x[i] = xf[i];
    kin_fk(r, x, P, M);
    kin_capsule_world(k, P, M, w0, w1);
    return (w0[2] < w1[2] ? w0[2] : w1[2]) - k->radius;
}

/* The ground term. frame_ground_eval (float) against the double capsule
 * ends, and frame_ground_jac against central differences along every
 * tangent coordinate (the base's six through frame_retract) at frames of
 * the real G1 clip. Then a 200-frame crouch (every target but the
 * ankles' 45 cm lower) whose wrist targets are 50 cm below the ground, the
 * feet named as a job names them: without the term the arms go through
 * it, with it (the default weight) every capsule off the legs stays
 * within 1 cm of it, the same bits at 1 and 3 threads. */
static void ground_checks(const struct g1_clip *c)
{
    const struct kin_robot *r = c->robot;
    struct g1_collide gd, gf;
    CHECK(g1_collide_make(&gd, r, RTG_COLLIDE_MARGIN, 1, NULL, NULL) == 0);
    CHECK(g1_collide_make(&gf, r, RTG_COLLIDE_MARGIN, 1, "left_ankle_roll_link", "right_ankle_roll_link") == 0);
    CHECK(gd.t.n_ground == gd.t.n_capsules && gd.t.n_ground > 20);
    CHECK(gf.t.n_ground > 20 && gf.t.n_ground < gd.t.n_ground);
    struct solver_batch b;
    memset(&b, 0, sizeof b);
    b.tree = &r->tree;
    g1_collide_set(&gd, 1.0f, 0.0f, &b);
    int cols = c->cols, nl = r->n_links, n = rt_tangent_dim(&r->tree), checked = 0;
    float *lk = malloc((size_t)nl * FRAME_LINK_STRIDE * sizeof *lk);
    double *x = malloc((size_t)cols * sizeof *x), *P = malloc((size_t)nl * 3 * sizeof *P);
    double *M = malloc((size_t)nl * 9 * sizeof *M);
    double worst_h = 0, worst_j = 0;
    for (int f = 0; f < c->n_frames; f += 131) {
        float xf[128], xp[128], xm[128], d[FRAME_MAX_DIM];
        for (int k = 0; k < cols; k++) xf[k] = c->truth[(size_t)f * cols + k];
        frame_fk(&r->tree, xf, lk);
        for (int i = 0; i < b.n_ground; i++) {
            const struct kin_capsule *k = &gd.t.capsules[b.ground[i]];
            float Pf[3];
            float h = frame_ground_eval(&b, lk, b.ground[i], Pf);
            double hd = ground_height(r, k, xf, x, P, M);
            if (fabs(h - hd) > worst_h) worst_h = fabs(h - hd);
            double w0[3], w1[3];
            kin_capsule_world(k, P, M, w0, w1);
            if (fabs(w0[2] - w1[2]) < 2e-3) continue; /* which end is lower may switch */
            int cl[FRAME_MAX_DIM];
            float jr[FRAME_MAX_DIM];
            int nc = frame_ground_jac(&b, lk, b.ground[i], Pf, cl, jr);
            for (int e = 0; e < nc; e++) {
                const float step = 1e-3f;
                for (int j = 0; j < n; j++) d[j] = 0.0f;
                d[cl[e]] = step;
                frame_retract(&r->tree, xf, d, xp);
                d[cl[e]] = -step;
                frame_retract(&r->tree, xf, d, xm);
                if (cl[e] >= 6 && xp[RT_ROOT_COLS + cl[e] - 6] - xm[RT_ROOT_COLS + cl[e] - 6] < 1.9f * step)
                    continue; /* at a joint limit */
                double fd = (ground_height(r, k, xp, x, P, M) - ground_height(r, k, xm, x, P, M)) / (2.0 * step);
                if (fabs(fd - jr[e]) > worst_j) worst_j = fabs(fd - jr[e]);
                checked++;
            }
        }
    }
    printf("ground: %d capsules; height float vs double: max %.3g m; Jacobian vs differences: %d entries, max error "
           "%.3g\n", b.n_ground, worst_h, checked, worst_j);
    CHECK(worst_h < 1e-5);
    CHECK(checked > 200);
    CHECK(worst_j < 2e-3);
    free(lk);
    free(x);
    free(P);
    free(M);

    const int first[1] = {300}, len[1] = {200};
    int off[2];
    float *owned = NULL;
    g1_clip_batch(c, 1, first, len, off, &owned, &b);
    int nt = c->nt, nf = off[1];
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < nt; k++) {
            const char *name = r->links[c->target_link[k]].name;
            float *tp = (float *)b.target_pos + 3 * ((size_t)f * nt + k);
            if (strstr(name, "wrist")) tp[2] = -0.50f;
            else if (!strstr(name, "ankle")) tp[2] -= 0.45f; /* a crouch */
        }
    size_t bytes = (size_t)nf * cols * sizeof(float);
    float *s_off = malloc(bytes), *s1 = malloc(bytes), *s3 = malloc(bytes);
    struct solver_clip_result rr[1];
    struct solver_result r0 = {s_off, rr}, r1 = {s1, rr}, r3 = {s3, rr};
    g1_collide_set(&gf, 0.0f, 0.0f, &b);
    b.n_pairs = 0;
    CHECK_EQ_INT(g1_cpu_solve(&b, 2, &r0, NULL), RT_OK);
    g1_collide_set(&gf, (float)RTG_GROUND_WEIGHT, (float)RTG_COLLIDE_MARGIN, &b);
    b.n_pairs = 0;
    CHECK_EQ_INT(g1_cpu_solve(&b, 1, &r1, NULL), RT_OK);
    CHECK_EQ_INT(g1_cpu_solve(&b, 3, &r3, NULL), RT_OK);
    CHECK(memcmp(s1, s3, bytes) == 0);
    double lo_off = lowest(c, &b, s_off, nf), lo_on = lowest(c, &b, s1, nf);
    printf("crouch, hands pulled below the ground: lowest capsule point %.4f m without the term, %.4f m with "
           "it\n", lo_off, lo_on);
    CHECK(lo_off < -0.05);
    CHECK(lo_on > -0.01);
    free(owned);
    free(s_off);
    free(s1);
    free(s3);
    g1_collide_free(&gd);
    g1_collide_free(&gf);
}

/* Velocity limits: the G1 clip played three times as fast (every third
 * frame's targets) exceeds a third of the robot's joint velocity limits; with the
 * bound the frames over a limit fall, the same bits at 1 and 3 threads,
 * and --linear direct solves with the same term. */
static void vlimit_checks(const struct g1_clip *c)
{
    int len = 200, first[1] = {0}, lens[1] = {200}, off[2];
    float *owned = NULL, vl[FRAME_MAX_DIM];
    struct solver_batch b;
    g1_clip_batch(c, 1, first, lens, off, &owned, &b);
    int nt = c->nt;
    for (int f = 0; f < len; f++) /* frame f takes the targets of frame 3f */
        for (int k = 0; k < nt; k++) {
            size_t d = (size_t)f * nt + k, s = (size_t)(3 * f) * nt + k;
            memcpy((float *)b.target_pos + 3 * d, c->tpos + 3 * s, 3 * sizeof(float));
            memcpy((float *)b.target_rot + 4 * d, c->trot + 4 * s, 4 * sizeof(float));
        }
    size_t bytes = (size_t)len * c->cols * sizeof(float);
    float *s0 = malloc(bytes), *s1 = malloc(bytes), *s3 = malloc(bytes), *sd = malloc(bytes);
    struct solver_clip_result rr[1];
    struct solver_result r0 = {s0, rr}, r1 = {s1, rr}, r3 = {s3, rr}, rd = {sd, rr};
    CHECK_EQ_INT(g1_cpu_solve(&b, 2, &r0, NULL), RT_OK);
    g1_vlimit_set(c->robot, 1.0 / 30.0, 1.0 / 3.0, 4.0f, vl, &b);
    CHECK_EQ_INT(g1_cpu_solve(&b, 1, &r1, NULL), RT_OK);
    CHECK_EQ_INT(g1_cpu_solve(&b, 3, &r3, NULL), RT_OK);
    CHECK(memcmp(s1, s3, bytes) == 0);
    b.opt.linear = SOLVER_LINEAR_DIRECT;
    CHECK_EQ_INT(g1_cpu_solve(&b, 2, &rd, NULL), RT_OK);
    int over[3] = {0, 0, 0};
    double excess[3] = {0, 0, 0}; /* rad/s beyond the limits, summed */
    const float *st[3] = {s0, s1, sd};
    for (int k = 0; k < 3; k++)
        for (int f = 0; f + 1 < len; f++)
            for (int j = 0; j < c->robot->n_dof; j++) {
                double v = fabs((double)st[k][(size_t)(f + 1) * c->cols + RT_ROOT_COLS + j] -
                                (double)st[k][(size_t)f * c->cols + RT_ROOT_COLS + j]) * 30.0;
                double lim = c->robot->joints[c->robot->coord_joint[j]].velocity / 3.0;
                over[k] += v > lim * 1.001;
                if (v > lim) excess[k] += v - lim;
            }
    printf("3x speed: (frame, joint) over the velocity limit: %d without the bound, %d with it (pcg), %d (direct); "
           "excess summed %.1f, %.1f, %.1f rad/s\n", over[0], over[1], over[2], excess[0], excess[1], excess[2]);
    CHECK(over[0] > 20);
    CHECK(over[1] < over[0] && over[2] < over[0]);
    CHECK(excess[1] < 0.5 * excess[0]);
    CHECK(excess[2] < 0.5 * excess[0]);
    free(owned);
    free(s0);
    free(s1);
    free(s3);
    free(sd);
}

/* rtg_collide_depth (the report's self-penetration: pairs by rows of
 * bits, the reach tests four at a time) against every pair measured with
 * kin_capsule_distance in pair order, the first deepest kept: the same
 * depth's bits, the same pair and the same lowest point, at random poses
 * over the joints' whole ranges (many penetrate); and with the pairs in
 * another order (the pair loop) against the same measure in that order.
 * rtg_collide_depth4 of the poses 4, 3, 2 and 1 at a time: each pose's
 * bits, pair and lowest point as rtg_collide_depth's. */
static void depth_case(const struct kin_robot *r, struct rtg_targets *t, const char *what)
{
    int cols = RT_ROOT_COLS + r->n_dof, bad = 0, pen = 0, bad4 = 0, n4 = 0, m4 = 4, k4 = 0;
    size_t nl = (size_t)r->n_links;
    struct rtg_collide_scratch *sc = rtg_collide_scratch_new(t), *sc4 = rtg_collide_scratch_new(t);
    double *s = malloc(sizeof *s * (size_t)cols), got4[4], low4[4];
    double *lp = malloc(sizeof *lp * 3 * 4 * nl), *lr = malloc(sizeof *lr * 9 * 4 * nl);
    int pair4[4];
    struct { double depth, low; int pair; } want4[4];
    CHECK(sc && sc4 && s && lp && lr);
    unsigned seed = 777;
    for (int it = 0; sc && sc4 && s && lp && lr && it < 300; it++) {
        for (int c = 0; c < cols; c++) {
            seed = seed * 1103515245u + 12345u;
            double u = (double)(seed >> 8) / 16777216.0;
            s[c] = c < 3 ? u - 0.5 : c < 7 ? (c == 6 ? 1.0 : 0.0) : 0.0;
            if (c >= 7) {
                const struct kin_joint *j = &r->joints[r->coord_joint[c - 7]];
                double lo = j->has_limits ? j->lower : -M_PI, hi = j->has_limits ? j->upper : M_PI;
                s[c] = lo + u * (hi - lo);
            }
        }
        double *ps = lp + 3 * nl * (size_t)k4, *rs = lr + 9 * nl * (size_t)k4; /* this pose's slot of 4 */
        kin_fk(r, s, ps, rs);
        int pair, want_pair = -1;
        double low, want_low = INFINITY, want = 0.0;
        double got = rtg_collide_depth(t, ps, rs, sc, &pair, &low);
        want4[k4].depth = got;
        want4[k4].low = low;
        want4[k4].pair = pair;
        if (++k4 == m4) { /* m4 poses in a row: at once */
            rtg_collide_depth4(t, m4, lp, lr, nl, sc4, got4, pair4, low4);
            for (int l = 0; l < m4; l++)
                bad4 += memcmp(&got4[l], &want4[l].depth, sizeof got4[l]) != 0 || pair4[l] != want4[l].pair ||
                        memcmp(&low4[l], &want4[l].low, sizeof low4[l]) != 0;
            n4 += m4;
            k4 = 0;
            m4 = m4 == 1 ? 4 : m4 - 1;
        }
        for (int p = 0; p < t->n_pairs; p++) {
            double d = kin_capsule_distance(&t->capsules[t->pair[2 * p]], &t->capsules[t->pair[2 * p + 1]], ps, rs);
            if (-d > want) {
                want = -d;
                want_pair = p;
            }
        }
        for (int c = 0; c < t->n_capsules; c++) {
            double w0[3], w1[3];
            const struct kin_capsule *k = &t->capsules[c];
            kin_capsule_world(k, ps, rs, w0, w1);
            double z = (w0[2] < w1[2] ? w0[2] : w1[2]) - k->radius;
            if (z < want_low && k->link != t->foot_link[0] && k->link != t->foot_link[1]) want_low = z;
        }
        pen += want_pair >= 0;
        bad += memcmp(&got, &want, sizeof got) != 0 || pair != want_pair || memcmp(&low, &want_low, sizeof low) != 0;
    }
    if (bad) fprintf(stderr, "  %s: %d of 300 poses differ from every pair measured\n", what, bad);
    CHECK_EQ_INT(bad, 0);
    printf("%s: %d of 300 random poses penetrate, depth and pair as measured pair by pair\n", what, pen);
    CHECK(pen > 10); /* the poses do penetrate */
    if (bad4) fprintf(stderr, "  %s: %d of %d poses four at a time differ from one at a time\n", what, bad4, n4);
    CHECK_EQ_INT(bad4, 0);
    CHECK(n4 >= 290);
    rtg_collide_scratch_free(sc);
    rtg_collide_scratch_free(sc4);
    free(s);
    free(lp);
    free(lr);
}

static void depth_checks(const char *name)
{
    struct kin_robot *r = NULL;
    struct rtg_targets t;
    char path[512], what[600];
    snprintf(path, sizeof path, "%s", name);
    if (strchr(name, '/')) snprintf(path, sizeof path, "%s/%s", test_data_dir(), name);
    CHECK_EQ_INT(kin_robot_load(path, &r, NULL), RT_OK);
    if (!r) return;
    memset(&t, 0, sizeof t);
    kin_robot_identity_feet(r, t.foot_link);
    CHECK_EQ_INT(rtg_targets_collide(&t, r, RTG_COLLIDE_MARGIN, RTG_COLLIDE_WEIGHT, 0.0, NULL), RT_OK);
    CHECK(t.n_pairs > 0);
    depth_case(r, &t, name);
    /* The pairs backwards, each one's capsules swapped: the pair loop. */
    for (int p = 0; p < t.n_pairs / 2; p++)
        for (int e = 0; e < 2; e++) {
            int q = t.n_pairs - 1 - p, x = t.pair[2 * p + e];
            t.pair[2 * p + e] = t.pair[2 * q + e];
            t.pair[2 * q + e] = x;
        }
    for (int p = 0; p < t.n_pairs; p++) {
        int x = t.pair[2 * p];
        t.pair[2 * p] = t.pair[2 * p + 1];
        t.pair[2 * p + 1] = x;
    }
    snprintf(what, sizeof what, "%s, pairs reversed", name);
    depth_case(r, &t, what);
    rtg_targets_free(&t);
    kin_robot_free(r);
}

int main(void)
{
    (void)g1_clip_errors;
    pairs_checks("g1", 20);
    pairs_checks("h1", 10);
    pairs_checks("robots/T1_serial.urdf", 10);
    pairs_checks("robots/T1_serial.xml", 10);
    depth_checks("g1");
    depth_checks("h1");
    depth_checks("robots/T1_serial.urdf");
    struct g1_clip c;
    if (g1_clip_load(&c, test_data_dir(), 800) != 0) {
        fprintf(stderr, "G1 data unavailable\n");
        CHECK(0);
        return test_report("test_collide");
    }
    struct g1_collide cd;
    CHECK(g1_collide_make(&cd, c.robot, RTG_COLLIDE_MARGIN, 0, NULL, NULL) == 0);
    jacobian_checks(&c, &cd);
    planted_checks(&c, &cd);
    solve_checks(&c, &cd);
    ground_checks(&c);
    vlimit_checks(&c);
    g1_collide_free(&cd);
    g1_clip_free(&c);
    return test_report("test_collide");
}
