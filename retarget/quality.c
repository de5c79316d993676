/* quality.c -- the quality figures of a solved trajectory (quality.h has the
 * definitions). Everything is recomputed in double from the float result by
 * kin_fk(), independently of the solver's own residuals, so that the report
 * measures what a user of the CSV gets. */
#include "quality.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../base/select.h"
#include "../kinematics/rot.h"
#include "../kinematics/trig.h"
#include "collide.h"

/* Mean, nearest-rank p95 and max of v[0..n) (no NaN); `key` is n values
 * of scratch. The mean sums v in its order; p95 and max are elements, the
 * bits a full sort would give. */
static struct rtg_quality_stat stat_of(const double *v, int n, uint64_t *key)
{
    struct rtg_quality_stat s = {0, 0, 0, n};
    if (n <= 0) return s;
    double sum = 0, mx = v[0];
    for (int i = 0; i < n; i++) {
        sum += v[i];
        if (v[i] > mx) mx = v[i];
    }
    int r = (int)ceil(0.95 * n) - 1;
    if (r < 0) r = 0;
    s.mean = sum / n;
    s.p95 = rt_kth_smallest(v, n, r, key);
    s.max = mx;
    return s;
}

/* The statistics of per-frame errors e[k * n + f] (NAN: no sample) of nt
 * targets: each target's samples in frame order into per_link[k] (may be
 * NULL), and all of them, target after target, as the result; `buf` and
 * `key` hold nt * n values. Reorders e. */
static struct rtg_quality_stat errors_stats(double *e, int nt, int n, double *buf, uint64_t *key,
                                            struct rtg_quality_stat *per_link)
{
    int m = 0;
    for (int k = 0; k < nt; k++) {
        double *ek = e + (size_t)k * n;
        int c = 0;
        for (int f = 0; f < n; f++)
            if (!isnan(ek[f])) ek[c++] = ek[f];
        memcpy(buf + m, ek, (size_t)c * sizeof *buf);
        m += c;
        if (per_link) per_link[k] = stat_of(ek, c, key);
    }
    return stat_of(buf, m, key);
}

/* The ground lift's rule (rtg_quality_finish(), quality.h): from the
 * per-frame penetration pen[0..n), the lift of every frame into lift[]:
 * a running max, then a running mean, both RTG_LIFT_WINDOW_S wide. */
static void lift_of(const double *pen, int n, double frame_time, double *mx, double *lift)
{
    double dt = frame_time > 0 ? frame_time : 1.0 / 30.0;
    int w = (int)floor(0.5 * RTG_LIFT_WINDOW_S / dt + 0.5);
    for (int f = 0; f < n; f++) {
        mx[f] = 0;
        for (int g = f - w; g <= f + w; g++)
            if (g >= 0 && g < n && pen[g] > mx[f]) mx[f] = pen[g];
    }
    for (int f = 0; f < n; f++) {
        double sum = 0;
        int cnt = 0;
        for (int g = f - w; g <= f + w; g++) {
            sum += mx[g < 0 ? 0 : g >= n ? n - 1 : g];
            cnt++;
        }
        lift[f] = sum / cnt;
    }
}

/* Per-frame figures beyond the tracking errors (NULL where not wanted):
 * the deepest self-penetration and its pair, the lowest body point, and
 * every link's position (for body speeds). */
struct frame_extra {
    double *self_pen, *low, *bodies;
    struct rtg_collide_scratch *scratch;
    int *self_pair;
};

/* What the forward kinematics of frame f (its links' poses lp, lr) gives
 * the figures: its tracking errors (ep/er at [k * n + f], NAN where the
 * target has no weight; er the cosine of the rotation error until
 * rot_degrees()), its feet and its penetration, and with ex its deepest
 * self-penetration `depth` in `pair`, measured with its lowest capsule
 * point `low` (rtg_collide_depth, rtg_collide_depth4). */
static void figures_at(const struct kin_robot *r, const struct rtg_targets *t, int f, int n, const double sole[2],
                       const double *lp, const double *lr, double *ep, double *er, double *foot, double *pen,
                       const struct frame_extra *ex, double depth, int pair, double low)
{
    int nt = t->n_targets;
    for (int k = 0; k < nt; k++) {
        size_t i = (size_t)f * nt + k, slot = (size_t)k * n + f;
        int l = t->target_link[k];
        ep[slot] = er[slot] = NAN;
        if (t->wpos[i] > 0) {
            double d = 0;
            for (int c = 0; c < 3; c++) {
                double e = lp[3 * l + c] - t->pos[3 * i + c];
                d += e * e;
            }
            ep[slot] = sqrt(d);
        }
        if (t->wrot[i] > 0) {
            double qt[4] = {t->rot[4 * i], t->rot[4 * i + 1], t->rot[4 * i + 2], t->rot[4 * i + 3]};
            double m[9];
            kin_quat_to_mat(qt, m);
            er[slot] = kin_rot_cos(lr + 9 * l, m);
        }
    }
    pen[f] = 0;
    for (int side = 0; side < 2; side++) {
        int l = t->foot_link[side];
        if (l < 0 || l >= r->n_links) continue;
        for (int c = 0; c < 3; c++) foot[6 * (size_t)f + 3 * side + c] = lp[3 * l + c];
        double d = sole[side] - lp[3 * l + 2];
        if (d > pen[f]) pen[f] = d;
    }
    if (!ex) return;
    ex->self_pen[f] = depth;
    ex->self_pair[f] = pair;
    for (int side = 0; side < 2; side++)
        if (t->foot_link[side] >= 0 && t->foot_link[side] < r->n_links && -pen[f] < low) low = -pen[f];
    if (!(low < INFINITY))
        for (int l = 0; l < r->n_links; l++)
            if (lp[3 * l + 2] < low) low = lp[3 * l + 2];
    ex->low[f] = low;
    memcpy(ex->bodies + (size_t)f * 3 * r->n_links, lp, (size_t)r->n_links * 3 * sizeof *lp);
}

/* The rotation errors in degrees from figures_at()'s cosines, v[0..n)
 * (NAN stays NAN): kin_acos4() over runs of four, kin_acos()'s same bits
 * at a run's end or for one value. */
static KIN_CLONES void rot_degrees(double *v, int n)
{
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        kin_v4d c, a;
        memcpy(&c, v + i, sizeof c);
        kin_acos4(&c, &a);
        a = a * (180.0 / M_PI);
        memcpy(v + i, &a, sizeof a);
    }
    for (; i < n; i++) v[i] = kin_acos(v[i]) * (180.0 / M_PI);
}

static void frame_figures(const struct kin_robot *r, const struct rtg_targets *t, const float *row, int f,
                          int n, const double sole[2], double *x, double *lp, double *lr, double *ep, double *er,
                          double *foot, double *pen, const struct frame_extra *ex)
{
    int cols = RT_ROOT_COLS + r->n_dof;
    for (int c = 0; c < cols; c++) x[c] = row[c];
    kin_fk(r, x, lp, lr);
    double depth = 0.0, low = INFINITY;
    int pair = -1;
    if (ex) depth = rtg_collide_depth(t, lp, lr, ex->scratch, &pair, &low);
    figures_at(r, t, f, n, sole, lp, lr, ep, er, foot, pen, ex, depth, pair, low);
    for (int k = 0; k < t->n_targets; k++) rot_degrees(er + (size_t)k * n + f, 1);
}

/* The fastest position target of t between frames f and f + 1 (m/s; 0 at
 * the last frame). */
static double target_speed(const struct rtg_targets *t, int n, int nl, double dt, int f)
{
    int nt = t->n_targets;
    double best = 0;
    if (f + 1 >= n) return 0;
    for (int k = 0; k < nt; k++) {
        size_t i = (size_t)f * nt + k;
        int l = t->target_link[k];
        if (!(t->wpos[i] > 0) || l < 0 || l >= nl || !(t->wpos[i + nt] > 0)) continue;
        const float *p = t->pos + 3 * i, *p1 = p + 3 * nt;
        double v = sqrt((p1[0] - p[0]) * (p1[0] - p[0]) + (p1[1] - p[1]) * (p1[1] - p[1]) +
                        (p1[2] - p[2]) * (p1[2] - p[2])) / dt;
        if (v > best) best = v;
    }
    return best;
}

/* The fastest position target of t between frames f and f + 1 (m/s) and
 * the largest position error of the robot's links (ex->bodies) in those
 * two frames. */
static void source_at(const struct rtg_targets *t, const struct frame_extra *ex, int n, int nl, double dt, int f,
                      double *speed, double *error)
{
    int nt = t->n_targets;
    *speed = target_speed(t, n, nl, dt, f);
    *error = 0;
    for (int g = f; g <= f + 1 && g < n; g++)
        for (int k = 0; k < nt; k++) {
            size_t i = (size_t)g * nt + k;
            int l = t->target_link[k];
            if (!(t->wpos[i] > 0) || l < 0 || l >= nl) continue;
            const float *p = t->pos + 3 * i;
            const double *b = ex->bodies + ((size_t)g * nl + l) * 3;
            double e = sqrt((b[0] - p[0]) * (b[0] - p[0]) + (b[1] - p[1]) * (b[1] - p[1]) + (b[2] - p[2]) * (b[2] - p[2]));
            if (e > *error) *error = e;
        }
}

/* What the source does where the speed and ground filters look (quality.h
 * "max_joint_velocity_at"), and its fastest target over the clip. */
static void source_figures(const struct rtg_targets *t, const struct frame_extra *ex, int n, int nl, double dt,
                           struct rtg_quality *q)
{
    int nt = t->n_targets;
    if (q->fast_joint_frame >= 0)
        source_at(t, ex, n, nl, dt, q->fast_joint_frame, &q->src_speed_joint, &q->src_err_joint);
    if (q->fast_link_frame >= 0)
        source_at(t, ex, n, nl, dt, q->fast_link_frame, &q->src_speed_link, &q->src_err_link);
    for (int f = 0; f + 1 < n; f++) {
        double v = target_speed(t, n, nl, dt, f);
        if (v > q->source_max_speed_m_s) q->source_max_speed_m_s = v;
    }
    q->low_target_z = 0;
    if (q->low_frame >= 0) {
        double lo = INFINITY;
        for (int k = 0; k < nt; k++) {
            size_t i = (size_t)q->low_frame * nt + k;
            if (t->wpos[i] > 0 && t->pos[3 * i + 2] < lo) lo = t->pos[3 * i + 2];
        }
        if (lo < INFINITY) q->low_target_z = lo;
    }
}

/* The plausibility figures (quality.h) from the per-frame figures: self
 * and ground penetration, foot slide speeds, contacts kept, body and joint
 * speeds, normalized jerk, and the dataset filters they fail. *spd is
 * scratch the caller frees. */
static enum rt_status plausibility(const struct kin_robot *r, const struct rtg_targets *t, const float *state,
                                   int n, double dt, const double sole[2], const double *foot,
                                   const struct frame_extra *ex, double **spd, struct rtg_quality *q)
{
    int nd = r->n_dof, cols = RT_ROOT_COLS + nd, nl = r->n_links;
    int deep3 = 0, run = 0, longest = 0, src_contacts = 0, kept = 0, ns = 0;
    q->self_pair = -1;
    q->self_frame = q->slide_frame = -1;
    q->fast_joint = q->fast_joint_frame = q->fast_link = q->fast_link_frame = q->low_frame = -1;
    q->lowest_body_z_m = INFINITY;
    for (int f = 0; f < n; f++) {
        if (ex->self_pen[f] > q->self_penetration_m) {
            q->self_penetration_m = ex->self_pen[f];
            q->self_pair = ex->self_pair[f];
            q->self_frame = f;
        }
        if (ex->self_pen[f] > RTG_PEN_TOL) q->self_penetration_frames++;
        if (ex->self_pen[f] > RTG_FILTER_SELF_FRAMES_DEPTH) deep3++;
        if (ex->low[f] < q->lowest_body_z_m) q->lowest_body_z_m = ex->low[f];
        run = ex->low[f] > RTG_FILTER_FLOAT_HEIGHT ? run + 1 : 0;
        if (run > longest) longest = run;
        for (int side = 0; side < 2; side++) {
            int l = t->foot_link[side];
            if (l < 0 || l >= nl) continue;
            double h = foot[6 * (size_t)f + 3 * side + 2] - sole[side];
            if (-h > RTG_PEN_TOL) {
                q->ground_penetration_frames++;
                break;
            }
        }
    }
    if (!(q->lowest_body_z_m < INFINITY)) q->lowest_body_z_m = 0.0;
    for (int f = 0; f < n; f++)
        if (ex->low[f] == q->lowest_body_z_m) {
            q->low_frame = f;
            break;
        }
    /* Feet in contact: speed between consecutive contact frames, and the
     * source's contact frames the robot's sole reproduces (within 2 cm). */
    /* 2 n + 1 speeds, then as many keys of scratch for stat_of */
    if (!(*spd = malloc((size_t)(2 * n + 1) * (sizeof **spd + sizeof(uint64_t))))) return RT_ENOMEM;
    double smax = 0;
    for (int side = 0; side < 2 && t->contact; side++) {
        int l = t->foot_link[side];
        if (l < 0 || l >= nl) continue;
        for (int f = 0; f < n; f++) {
            if (!t->contact[2 * (size_t)f + side]) continue;
            src_contacts++;
            if (foot[6 * (size_t)f + 3 * side + 2] - sole[side] <= RTG_CONTACT_KEPT_M) kept++;
            if (f == 0 || !t->contact[2 * (size_t)(f - 1) + side]) continue;
            const double *a = foot + 6 * (size_t)(f - 1) + 3 * side, *b = foot + 6 * (size_t)f + 3 * side;
            double v = hypot(b[0] - a[0], b[1] - a[1]) / dt;
            (*spd)[ns++] = v;
            if (v > RTG_SLIDE_SPEED_TOL) q->foot_slide_frames++;
            if (v > smax) {
                smax = v;
                q->slide_frame = f;
            }
        }
    }
    struct rtg_quality_stat ss = stat_of(*spd, ns, (uint64_t *)(*spd + 2 * n + 1));
    q->foot_slide_speed_p95 = ss.p95;
    q->foot_slide_speed_max = ss.max;
    q->contacts_kept = src_contacts ? (double)kept / src_contacts : 1.0;
    /* Body speeds (link origins) and joint speeds against the robot's limits. */
    /* A link's speed is sqrt(d2) / dt, which never falls as d2 grows: one
     * whose d2 is at most the greatest seen (d2_top) cannot be faster than
     * the fastest, and its root and quotient are skipped (the same first
     * fastest link as testing every speed). */
    double jbest = -1, d2_top = 0, vbest = q->max_body_speed_m_s;
    for (int f = 0; f + 1 < n; f++) {
        const double *a = ex->bodies + (size_t)f * 3 * nl, *b = a + 3 * nl;
        for (int l = 0; l < nl; l++) {
            double dx = b[3 * l] - a[3 * l], dy = b[3 * l + 1] - a[3 * l + 1], dz = b[3 * l + 2] - a[3 * l + 2];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (!(d2 > d2_top)) continue;
            d2_top = d2;
            double v = sqrt(d2) / dt;
            if (v > vbest) {
                vbest = v;
                q->fast_link = l;
                q->fast_link_frame = f;
            }
        }
        const float *s0 = state + (size_t)f * cols + RT_ROOT_COLS, *s1 = s0 + cols;
        int over = 0;
        for (int j = 0; j < nd; j++) {
            double vmax = r->joints[r->coord_joint[j]].velocity;
            double v = fabs((double)s1[j] - (double)s0[j]) / dt;
            if (v > jbest) {
                jbest = v;
                q->fast_joint = j;
                q->fast_joint_frame = f;
            }
            if (vmax > 0 && v > vmax) {
                over = 1;
                if (v / vmax > q->joint_velocity_over_limit_ratio) q->joint_velocity_over_limit_ratio = v / vmax;
            }
        }
        q->joint_velocity_over_limit_frames += over;
    }
    q->max_body_speed_m_s = vbest;
    /* Normalized jerk (dimensionless): per joint and per window of
     * RTG_JERK_WINDOW_S, sqrt(0.5 sum_t jerk_t^2 dt T^5 / A^2), T the
     * window's duration and A the joint's path length in it (sum |dq|),
     * over the windows where the joint moves (A > 1e-3 rad); the mean. */
    {
        int w = (int)floor(RTG_JERK_WINDOW_S / dt + 0.5), m = 0;
        double sum = 0;
        if (w < 4) w = 4;
        for (int j = 0; j < nd; j++)
            for (int f0 = 0; f0 + w <= n; f0 += w) {
                double A = 0, J = 0, T = (w - 1) * dt;
                for (int f = f0; f + 1 < f0 + w; f++) {
                    const float *a = state + (size_t)f * cols + RT_ROOT_COLS + j;
                    A += fabs((double)a[cols] - (double)a[0]);
                    if (f + 3 < f0 + w) {
                        double d3 = ((double)a[3 * cols] - 3.0 * (double)a[2 * cols] + 3.0 * (double)a[cols] -
                                     (double)a[0]) / (dt * dt * dt);
                        J += d3 * d3 * dt;
                    }
                }
                if (A > 1e-3) {
                    sum += sqrt(0.5 * J * pow(T, 5) / (A * A));
                    m++;
                }
            }
        q->normalized_jerk = m ? sum / m : 0.0;
    }
    source_figures(t, ex, n, nl, dt, q);
    if (q->lowest_body_z_m < -RTG_FILTER_BELOW_GROUND) q->filters |= RTG_FILTER_BELOW;
    if (q->max_body_speed_m_s > RTG_FILTER_BODY_SPEED) q->filters |= RTG_FILTER_BODY_FAST;
    if (q->max_joint_velocity > RTG_FILTER_JOINT_SPEED) q->filters |= RTG_FILTER_JOINT_FAST;
    if (longest * dt > RTG_FILTER_FLOAT_SECONDS) q->filters |= RTG_FILTER_FLOATING;
    if (q->self_penetration_m > RTG_FILTER_SELF_DEPTH) q->filters |= RTG_FILTER_SELF_DEEP;
    if (deep3 > RTG_FILTER_SELF_FRAMES) q->filters |= RTG_FILTER_SELF_LONG;
    return RT_OK;
}

const char *rtg_quality_filter_name(int bit)
{
    switch (bit) {
    case RTG_FILTER_BELOW: return "body_below_ground";
    case RTG_FILTER_BODY_FAST: return "body_speed";
    case RTG_FILTER_JOINT_FAST: return "joint_speed";
    case RTG_FILTER_FLOATING: return "floating";
    case RTG_FILTER_SELF_DEEP: return "self_penetration_depth";
    case RTG_FILTER_SELF_LONG: return "self_penetration_frames";
    default: return "?";
    }
}

/* The figures, with the ground lift first when `lift`: one FK pass gives
 * every frame's figures and penetration; the frames the lift raises are
 * evaluated again. The lift's and the figures' arithmetic is that of
 * a lift followed by a separate pass, bit for bit. */
/* The first pass of figures() over a clip's frames, in pieces of
 * RTG_POOL_PIECE frames (rtg_pool_for_idle): each frame's figures go to its
 * own slots, so the pieces give the bits of one pass in frame order. */
struct fig_chunks {
    const struct kin_robot *r;
    const struct rtg_targets *t;
    const float *state;
    int n_frames, cols;
    const double *sole;
    double *ep, *er, *foot, *pen;
    const struct frame_extra *ex;
    atomic_int failed;
};

static void fig_chunk(void *ctx, int k)
{
    struct fig_chunks *c = ctx;
    const struct kin_robot *r = c->r;
    int f0, f1;
    rtg_pool_piece(k, RTG_POOL_PIECE, c->n_frames, &f0, &f1);
    size_t cols = (size_t)c->cols, nl = (size_t)r->n_links;
    /* Four frames at a time (kin_fk_frames): their states, link positions, rotations. */
    double *x = malloc(4 * (cols + 12 * nl) * sizeof *x), *lp = x + 4 * cols, *lr = lp + 12 * nl;
    struct rtg_collide_scratch *sc = rtg_collide_scratch_new(c->t); /* the collision figures' */
    if (x && sc) {
        for (int f = f0; f < f1; f += 4) {
            int m = f1 - f < 4 ? f1 - f : 4;
            const float *rows = c->state + (size_t)f * cols;
            double depth[4], low[4];
            int pair[4];
            for (size_t j = 0; j < (size_t)m * cols; j++) x[j] = rows[j];
            kin_fk_frames(r, m, x, cols, lp, lr);
            rtg_collide_depth4(c->t, m, lp, lr, nl, sc, depth, pair, low);
            for (int l = 0; l < m; l++)
                figures_at(r, c->t, f + l, c->n_frames, c->sole, lp + (size_t)l * 3 * nl, lr + (size_t)l * 9 * nl,
                           c->ep, c->er, c->foot, c->pen, c->ex, depth[l], pair[l], low[l]);
        }
        /* The piece's rotation errors, target by target (frames in a row). */
        for (int j = 0; j < c->t->n_targets; j++) rot_degrees(c->er + (size_t)j * c->n_frames + f0, f1 - f0);
    } else {
        atomic_store(&c->failed, 1);
    }
    free(x);
    rtg_collide_scratch_free(sc);
}

static enum rt_status figures(const struct kin_robot *r, const struct rtg_targets *t, float *state,
                              int n_frames, int lift, struct rtg_pool *pool, struct rtg_quality *q,
                              struct rtg_quality_stat *per_link_pos, struct rtg_quality_stat *per_link_rot)
{
    int nt = t->n_targets, nd = r->n_dof, cols = RT_ROOT_COLS + nd;
    double *x = NULL, *lp = NULL, *lr = NULL, *ep = NULL, *er = NULL, *buf = NULL;
    double *foot = NULL, *pen = NULL, *mx = NULL, *lf = NULL, *spd = NULL;
    uint64_t *key = NULL;
    struct frame_extra ex = {NULL, NULL, NULL, NULL, NULL};
    size_t nb = 0;
    double foot_prev[6], sole[2] = {0.0, 0.0}; /* per side: last contact position, sole offset */
    size_t nft;
    enum rt_status st = RT_OK;
    double dt = t->frame_time > 0 ? t->frame_time : 1.0 / 30.0;
    memset(q, 0, sizeof *q);
    if (n_frames > t->n_frames) n_frames = t->n_frames;
    if (n_frames < 1) return RT_OK;
    if (!rt_mul_size((size_t)n_frames, (size_t)(nt ? nt : 1), &nft) || nft > SIZE_MAX / (2 * sizeof(double)))
        return RT_ENOMEM;
    x = malloc((size_t)cols * sizeof *x);
    lp = malloc((size_t)r->n_links * 3 * sizeof *lp);
    lr = malloc((size_t)r->n_links * 9 * sizeof *lr);
    ep = malloc(nft * sizeof *ep); /* errors, target-major: [k * n_frames + f] */
    er = malloc(nft * sizeof *er);
    buf = malloc(nft * sizeof *buf);
    key = malloc(nft * sizeof *key);
    foot = calloc((size_t)n_frames * 6, sizeof *foot);
    pen = malloc((size_t)n_frames * sizeof *pen);
    if (lift) {
        mx = malloc((size_t)n_frames * sizeof *mx);
        lf = malloc((size_t)n_frames * sizeof *lf);
    }
    ex.self_pen = malloc((size_t)n_frames * sizeof *ex.self_pen);
    ex.low = malloc((size_t)n_frames * sizeof *ex.low);
    ex.self_pair = malloc((size_t)n_frames * sizeof *ex.self_pair);
    ex.scratch = rtg_collide_scratch_new(t);
    if (rt_mul_size((size_t)n_frames, (size_t)r->n_links * 3 * sizeof(double), &nb))
        ex.bodies = malloc(nb);
    if (!x || !lp || !lr || !ep || !er || !buf || !key || !foot || !pen || (lift && (!mx || !lf)) || !ex.self_pen ||
        !ex.low || !ex.self_pair || !ex.scratch || !ex.bodies) {
        st = RT_ENOMEM;
        goto fail;
    }
    for (int side = 0; side < 2; side++) {
        int l = t->foot_link[side];
        if (l >= 0 && l < r->n_links)
            sole[side] = t->sole_offset >= 0 ? t->sole_offset : kin_robot_sole_offset(r, l);
    }
    struct fig_chunks fc = {r, t, state, n_frames, cols, sole, ep, er, foot, pen, &ex, 0};
    atomic_init(&fc.failed, 0);
    rtg_pool_for_idle(pool, rtg_pool_pieces(n_frames, RTG_POOL_PIECE), fig_chunk, &fc); /* NULL: this thread */
    if (atomic_load(&fc.failed)) {
        st = RT_ENOMEM;
        goto fail;
    }
    double top = 0;
    for (int f = 0; f < n_frames; f++)
        if (pen[f] > top) top = pen[f];
    /* The lift needs both feet. */
    if (lift && t->foot_link[0] >= 0 && t->foot_link[1] >= 0 && top > 0) {
        lift_of(pen, n_frames, t->frame_time, mx, lf);
        for (int f = 0; f < n_frames; f++) {
            /* A hair more than the penetration, so float rounding of the
             * stored height never leaves a foot a few micrometres below. */
            if (!(lf[f] > 0)) continue;
            float *row = state + (size_t)f * cols;
            row[2] += (float)(lf[f] + 1e-5);
            frame_figures(r, t, row, f, n_frames, sole, x, lp, lr, ep, er, foot, pen, &ex);
        }
    }
    for (int f = 0; f < n_frames; f++) {
        const float *s = state + (size_t)f * cols;
        /* Joint limits. */
        int at_limit = 0;
        for (int j = 0; j < nd; j++) {
            const struct kin_joint *jt = &r->joints[r->coord_joint[j]];
            double v = s[RT_ROOT_COLS + j];
            if (!jt->has_limits) continue;
            if (v < jt->lower - RTG_QUALITY_LIMIT_TOL || v > jt->upper + RTG_QUALITY_LIMIT_TOL)
                q->joint_limit_violations++;
            if (v < jt->lower + 1e-4 || v > jt->upper - 1e-4) at_limit = 1;
        }
        q->frames_at_limit += at_limit;
        /* Feet. */
        for (int side = 0; side < 2; side++) {
            int l = t->foot_link[side];
            if (l < 0 || l >= r->n_links) continue;
            const double *fp = foot + 6 * (size_t)f + 3 * side;
            double p = sole[side] - fp[2];
            if (p > q->ground_penetration_m) q->ground_penetration_m = p;
            int in = t->contact && t->contact[2 * (size_t)f + side];
            int was = f > 0 && t->contact && t->contact[2 * (size_t)(f - 1) + side];
            if (in) q->contact_frames++;
            if (in && was) q->foot_slide_m += hypot(fp[0] - foot_prev[3 * side], fp[1] - foot_prev[3 * side + 1]);
            for (int c = 0; c < 3; c++) foot_prev[3 * side + c] = fp[c];
        }
    }
    /* Joint velocity and jerk over time. */
    {
        double jsum = 0;
        long jn = 0;
        for (int f = 0; f + 1 < n_frames; f++)
            for (int j = 0; j < nd; j++) {
                const float *a = state + (size_t)f * cols + RT_ROOT_COLS;
                double v = fabs((double)a[cols + j] - (double)a[j]) / dt;
                if (v > q->max_joint_velocity) q->max_joint_velocity = v;
                if (f + 3 < n_frames) {
                    double d3 = (double)a[3 * cols + j] - 3.0 * (double)a[2 * cols + j] +
                                3.0 * (double)a[cols + j] - (double)a[j];
                    jsum += fabs(d3);
                    jn++;
                }
            }
        q->mean_jerk = jn ? jsum / (double)jn / (dt * dt * dt) : 0.0;
    }
    if ((st = plausibility(r, t, state, n_frames, dt, sole, foot, &ex, &spd, q)) != RT_OK) goto fail;
    /* Statistics: overall from all samples in frame order, then per link. */
    q->pos_m = errors_stats(ep, nt, n_frames, buf, key, per_link_pos);
    q->rot_deg = errors_stats(er, nt, n_frames, buf, key, per_link_rot);
fail:
    free(x);
    free(lp);
    free(lr);
    free(ep);
    free(er);
    free(buf);
    free(key);
    free(foot);
    free(pen);
    free(mx);
    free(lf);
    free(spd);
    free(ex.self_pen);
    free(ex.low);
    free(ex.self_pair);
    rtg_collide_scratch_free(ex.scratch);
    free(ex.bodies);
    return st;
}

enum rt_status rtg_quality_compute(const struct kin_robot *r, const struct rtg_targets *t,
                                   const float *state, int n_frames, struct rtg_quality *q,
                                   struct rtg_quality_stat *per_link_pos,
                                   struct rtg_quality_stat *per_link_rot)
{
    /* Without the lift the state is only read. */
    return figures(r, t, (float *)state, n_frames, 0, NULL, q, per_link_pos, per_link_rot);
}

enum rt_status rtg_quality_finish(const struct kin_robot *r, const struct rtg_targets *t, float *state,
                                  int lift, struct rtg_quality *q, struct rtg_quality_stat *per_link_pos,
                                  struct rtg_quality_stat *per_link_rot)
{
    return rtg_quality_finish_on(NULL, r, t, state, lift, q, per_link_pos, per_link_rot);
}

enum rt_status rtg_quality_finish_on(struct rtg_pool *pool, const struct kin_robot *r, const struct rtg_targets *t,
                                     float *state, int lift, struct rtg_quality *q,
                                     struct rtg_quality_stat *per_link_pos, struct rtg_quality_stat *per_link_rot)
{
    return figures(r, t, state, t->n_frames, lift, pool, q, per_link_pos, per_link_rot);
}

static cJSON *stat_json(const struct rtg_quality_stat *s)
{
    if (s->n <= 0) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!cJSON_AddNumberToObject(o, "mean", s->mean) || !cJSON_AddNumberToObject(o, "p95", s->p95) ||
        !cJSON_AddNumberToObject(o, "max", s->max)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Adds `item` under `key`; on a NULL item (out of memory) returns 0. */
static int add(cJSON *o, const char *key, cJSON *item)
{
    if (!item) return 0;
    cJSON_AddItemToObject(o, key, item);
    return 1;
}

/* ["link_a", "link_b"] of pair p of t, or null. */
static cJSON *pair_json(const struct kin_robot *r, const struct rtg_targets *t, int p)
{
    if (p < 0 || p >= t->n_pairs) return cJSON_CreateNull();
    const char *names[2] = {r->links[t->capsules[t->pair[2 * p]].link].name,
                            r->links[t->capsules[t->pair[2 * p + 1]].link].name};
    return cJSON_CreateStringArray(names, 2);
}

static cJSON *slide_json(const struct rtg_quality *q)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!cJSON_AddNumberToObject(o, "p95", q->foot_slide_speed_p95) ||
        !cJSON_AddNumberToObject(o, "max", q->foot_slide_speed_max)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* {"frame": f, key: name, "source_speed_m_s", "tracking_error_m",
 * "lowest_target_z_m"} (the figures that are not NAN, key when given), or
 * null for f < 0. */
static cJSON *at_json(int f, const char *key, const char *name, double speed, double error, double low)
{
    if (f < 0) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!cJSON_AddNumberToObject(o, "frame", f) || (key && !cJSON_AddStringToObject(o, key, name ? name : "?")) ||
        (!isnan(speed) && !cJSON_AddNumberToObject(o, "source_speed_m_s", speed)) ||
        (!isnan(error) && !cJSON_AddNumberToObject(o, "tracking_error_m", error)) ||
        (!isnan(low) && !cJSON_AddNumberToObject(o, "lowest_target_z_m", low))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The names of the failed filters, in bit order. */
static cJSON *filters_json(unsigned filters)
{
    cJSON *a = cJSON_CreateArray();
    for (unsigned bit = 1; a && bit <= RTG_FILTER_LAST; bit <<= 1) {
        if (!(filters & bit)) continue;
        cJSON *x = cJSON_CreateString(rtg_quality_filter_name((int)bit));
        if (!x) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, x);
    }
    return a;
}

cJSON *rtg_quality_json(const struct kin_robot *r, const struct rtg_targets *t,
                        const float *state, int n_frames)
{
    struct rtg_quality q;
    int nt = t->n_targets;
    struct rtg_quality_stat *pl = calloc((size_t)(nt ? nt : 1), sizeof *pl);
    struct rtg_quality_stat *rl = calloc((size_t)(nt ? nt : 1), sizeof *rl);
    cJSON *o = NULL;
    if (pl && rl && rtg_quality_compute(r, t, state, n_frames, &q, pl, rl) == RT_OK)
        o = rtg_quality_to_json(r, t, &q, pl, rl);
    free(pl);
    free(rl);
    return o;
}

cJSON *rtg_quality_to_json(const struct kin_robot *r, const struct rtg_targets *t,
                           const struct rtg_quality *qp, const struct rtg_quality_stat *pl,
                           const struct rtg_quality_stat *rl)
{
    const struct rtg_quality q = *qp;
    cJSON *o = NULL, *links;
    int nt = t->n_targets;
    o = cJSON_CreateObject();
    if (!o) goto fail;
    if (!add(o, "position_error_m", stat_json(&q.pos_m)) ||
        !add(o, "rotation_error_deg", stat_json(&q.rot_deg)))
        goto fail;
    if (!cJSON_AddNumberToObject(o, "joint_limit_violations", q.joint_limit_violations) ||
        !cJSON_AddNumberToObject(o, "frames_at_limit", q.frames_at_limit) ||
        !cJSON_AddNumberToObject(o, "max_joint_velocity_rad_s", q.max_joint_velocity) ||
        !cJSON_AddNumberToObject(o, "mean_jerk", q.mean_jerk) ||
        !cJSON_AddNumberToObject(o, "foot_slide_m", q.foot_slide_m) ||
        !cJSON_AddNumberToObject(o, "ground_penetration_m", q.ground_penetration_m) ||
        !cJSON_AddNumberToObject(o, "contact_frames", q.contact_frames) ||
        !cJSON_AddNumberToObject(o, "self_penetration_m", q.self_penetration_m) ||
        !cJSON_AddNumberToObject(o, "self_penetration_frames", q.self_penetration_frames) ||
        !add(o, "self_penetration_pair", pair_json(r, t, q.self_pair)) ||
        !add(o, "self_penetration_worst_frame", q.self_frame >= 0 ? cJSON_CreateNumber(q.self_frame) : cJSON_CreateNull()) ||
        !cJSON_AddNumberToObject(o, "ground_penetration_frames", q.ground_penetration_frames) ||
        !cJSON_AddNumberToObject(o, "lowest_body_z_m", q.lowest_body_z_m) ||
        !add(o, "foot_slide_speed_m_s", slide_json(&q)) ||
        !cJSON_AddNumberToObject(o, "foot_slide_frames", q.foot_slide_frames) ||
        !add(o, "foot_slide_worst_frame", q.slide_frame >= 0 ? cJSON_CreateNumber(q.slide_frame) : cJSON_CreateNull()) ||
        !cJSON_AddNumberToObject(o, "contacts_kept", q.contacts_kept) ||
        !cJSON_AddNumberToObject(o, "normalized_jerk", q.normalized_jerk) ||
        !cJSON_AddNumberToObject(o, "max_body_speed_m_s", q.max_body_speed_m_s) ||
        !cJSON_AddNumberToObject(o, "joint_velocity_over_limit_frames", q.joint_velocity_over_limit_frames) ||
        !cJSON_AddNumberToObject(o, "joint_velocity_over_limit_ratio", q.joint_velocity_over_limit_ratio) ||
        !add(o, "filters", filters_json(q.filters)) ||
        !cJSON_AddNumberToObject(o, "source_max_speed_m_s", q.source_max_speed_m_s) ||
        !add(o, "max_joint_velocity_at",
             at_json(q.fast_joint_frame, "joint",
                     q.fast_joint >= 0 ? r->joints[r->coord_joint[q.fast_joint]].name : NULL, q.src_speed_joint,
                     q.src_err_joint, NAN)) ||
        !add(o, "max_body_speed_at",
             at_json(q.fast_link_frame, "link", q.fast_link >= 0 ? r->links[q.fast_link].name : NULL,
                     q.src_speed_link, q.src_err_link, NAN)) ||
        !add(o, "lowest_body_at", at_json(q.low_frame, NULL, NULL, NAN, NAN, q.low_target_z)))
        goto fail;
    links = cJSON_AddArrayToObject(o, "links");
    if (!links) goto fail;
    for (int k = 0; k < nt; k++) {
        cJSON *l = cJSON_CreateObject();
        if (!l) goto fail;
        cJSON_AddItemToArray(links, l);
        int li = t->target_link[k];
        if (!cJSON_AddStringToObject(l, "link", li >= 0 && li < r->n_links ? r->links[li].name : "?") ||
            !add(l, "position_error_m", stat_json(&pl[k])) ||
            !add(l, "rotation_error_deg", stat_json(&rl[k])))
            goto fail;
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

/* A series value for JSON: NAN -> null, else rounded to 1e-6. */
static cJSON *series_num(double v)
{
    if (isnan(v)) return cJSON_CreateNull();
    return cJSON_CreateNumber(round(v * 1e6) / 1e6);
}

/* An array of n values v[0], v[stride], ... ; NULL when out of memory. */
static cJSON *series_array(const double *v, int n, size_t stride)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) {
        cJSON *x = series_num(v[(size_t)i * stride]);
        if (!x) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, x);
    }
    return a;
}

cJSON *rtg_quality_series_json(const struct kin_robot *r, const struct rtg_targets *t,
                               const float *state, int n_frames)
{
    int nt = t->n_targets, cols = RT_ROOT_COLS + r->n_dof;
    double *x = NULL, *lp = NULL, *lr = NULL, *ep = NULL, *er = NULL, *foot = NULL, *pen = NULL;
    double sole[2] = {0.0, 0.0};
    cJSON *o = NULL, *links, *feet;
    size_t nft;
    if (n_frames > t->n_frames) n_frames = t->n_frames;
    if (n_frames < 0) n_frames = 0;
    if (!rt_mul_size((size_t)(n_frames ? n_frames : 1), (size_t)(nt ? nt : 1), &nft) ||
        nft > SIZE_MAX / sizeof(double))
        return NULL;
    x = malloc((size_t)cols * sizeof *x);
    lp = malloc((size_t)r->n_links * 3 * sizeof *lp);
    lr = malloc((size_t)r->n_links * 9 * sizeof *lr);
    ep = malloc(nft * sizeof *ep); /* target-major: [k * n_frames + f] */
    er = malloc(nft * sizeof *er);
    foot = calloc((size_t)(n_frames ? n_frames : 1) * 6, sizeof *foot);
    pen = malloc((size_t)(n_frames ? n_frames : 1) * sizeof *pen);
    if (!x || !lp || !lr || !ep || !er || !foot || !pen) goto fail;
    for (int side = 0; side < 2; side++) {
        int l = t->foot_link[side];
        if (l >= 0 && l < r->n_links)
            sole[side] = t->sole_offset >= 0 ? t->sole_offset : kin_robot_sole_offset(r, l);
    }
    for (int f = 0; f < n_frames; f++)
        frame_figures(r, t, state + (size_t)f * cols, f, n_frames, sole, x, lp, lr, ep, er, foot, pen, NULL);
    if (!(o = cJSON_CreateObject()) || !(links = cJSON_AddArrayToObject(o, "links")) ||
        !(feet = cJSON_AddArrayToObject(o, "feet")))
        goto fail;
    for (int k = 0; k < nt; k++) {
        cJSON *l = cJSON_CreateObject();
        if (!l) goto fail;
        cJSON_AddItemToArray(links, l);
        int li = t->target_link[k];
        if (!cJSON_AddStringToObject(l, "link", li >= 0 && li < r->n_links ? r->links[li].name : "?") ||
            !add(l, "position_error_m", series_array(ep + (size_t)k * n_frames, n_frames, 1)) ||
            !add(l, "rotation_error_deg", series_array(er + (size_t)k * n_frames, n_frames, 1)))
            goto fail;
    }
    for (int side = 0; side < 2; side++) {
        int l = t->foot_link[side];
        if (l < 0 || l >= r->n_links) continue;
        cJSON *fo = cJSON_CreateObject(), *h, *ct;
        if (!fo) goto fail;
        cJSON_AddItemToArray(feet, fo);
        if (!cJSON_AddStringToObject(fo, "side", side ? "right" : "left") ||
            !cJSON_AddStringToObject(fo, "link", r->links[l].name) || !(h = cJSON_AddArrayToObject(fo, "height_m")) ||
            !(ct = cJSON_AddArrayToObject(fo, "contact")))
            goto fail;
        for (int f = 0; f < n_frames; f++) {
            cJSON *hv = series_num(foot[6 * (size_t)f + 3 * side + 2] - sole[side]);
            cJSON *cv = cJSON_CreateNumber(t->contact && t->contact[2 * (size_t)f + side] ? 1 : 0);
            if (!hv || !cv) {
                cJSON_Delete(hv);
                cJSON_Delete(cv);
                goto fail;
            }
            cJSON_AddItemToArray(h, hv);
            cJSON_AddItemToArray(ct, cv);
        }
    }
    goto done;
fail:
    cJSON_Delete(o);
    o = NULL;
done:
    free(x);
    free(lp);
    free(lr);
    free(ep);
    free(er);
    free(foot);
    free(pen);
    return o;
}
