/* collide.c -- a job's self-collision pairs and their penetration depths
 * (collide.h). */
#include "collide.h"


#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/trig.h"

/* Whether `link` is on a leg: a foot link, or a link on the chain from a
 * foot up to (not including) the two feet's nearest common ancestor. With
 * one foot unknown, only the other foot's own link. */
static int on_leg(const struct kin_robot *r, const int foot[2], int link)
{
    for (int side = 0; side < 2; side++) {
        int f = foot[side], other = foot[1 - side];
        if (f < 0) continue;
        if (other < 0) {
            if (link == f) return 1;
            continue;
        }
        if (kin_link_is_ancestor(r, link, f) && !kin_link_is_ancestor(r, link, other)) return 1;
    }
    return 0;
}

enum rt_status rtg_targets_collide(struct rtg_targets *t, const struct kin_robot *r, double margin, double weight,
                                   double ground_weight, struct rt_err *err)
{
    struct kin_capsule *caps = NULL;
    int n = 0, np = 0, *pairs = NULL;
    enum rt_status st;
    t->n_capsules = t->n_pairs = t->n_ground = 0;
    t->w_collide = (float)weight;
    t->w_ground = (float)ground_weight;
    t->collide_margin = (float)margin;
    if ((st = kin_robot_capsules(r, &caps, &n, err)) != RT_OK) return st;
    if (n >= 2 && (st = kin_capsule_pairs(r, caps, n, margin, &pairs, &np, err)) != RT_OK) {
        free(caps);
        return st;
    }
    if (np == 0) {
        free(caps);
        free(pairs);
        return RT_OK;
    }
    t->capsule_link = malloc((size_t)n * sizeof(int));
    t->capsule_seg = malloc((size_t)n * 7 * sizeof(float));
    t->ground = t->on_ground ? malloc((size_t)n * sizeof(int)) : NULL;
    if (!t->capsule_link || !t->capsule_seg || (t->on_ground && !t->ground)) {
        free(caps);
        free(pairs);
        free(t->capsule_link);
        free(t->capsule_seg);
        free(t->ground);
        t->capsule_link = NULL;
        t->capsule_seg = NULL;
        t->ground = NULL;
        return rt_err_set(err, RT_ENOMEM, "capsules", "out of memory");
    }
    for (int c = 0; c < n; c++) {
        float *sg = t->capsule_seg + 7 * c;
        t->capsule_link[c] = caps[c].link;
        for (int k = 0; k < 3; k++) {
            sg[k] = (float)caps[c].a[k];
            sg[3 + k] = (float)caps[c].b[k];
        }
        sg[6] = (float)caps[c].radius;
        /* Above the ground: every capsule but the legs'. */
        if (t->ground && !on_leg(r, t->foot_link, caps[c].link)) t->ground[t->n_ground++] = c;
    }
    t->capsules = caps;
    t->n_capsules = n;
    t->pair = pairs;
    t->n_pairs = np;
    return RT_OK;
}

/* Room for four frames' capsules (rtg_collide_depth4), frame l's in its
 * lane l of ends, cx, cy and cz; the reach and the rows are the frames'. */
struct rtg_collide_scratch {
    int n, fast;           /* capsules; 1: the pairs are rows (below) and n <= 64 */
    double *ends;          /* [4][6 n] world end points */
    double *cx, *cy, *cz;  /* [4][n + 4] world centre, set every frame (each lane's last 4: padding, 0) */
    double *cr;            /* [n + 4] reach: half length plus radius, a hair over (rtg_collide_scratch_new) */
    unsigned long long *row; /* [n] bit k of row i: (i, k) is a pair */
    int *first;            /* [n] index of row i's first pair */
};

/* One frame's capsules in a scratch: its lane l (the one place that knows
 * the lanes' layout; rtg_collide_depth4 writes through it, the pair tests
 * read through it). */
struct frame_caps {
    double *ends, *cx, *cy, *cz;
    const double *cr;
};

static inline struct frame_caps caps_of(const struct rtg_collide_scratch *s, int l)
{
    size_t m = (size_t)s->n + 4;
    return (struct frame_caps){s->ends + 6 * (size_t)s->n * l, s->cx + m * l, s->cy + m * l, s->cz + m * l, s->cr};
}

struct rtg_collide_scratch *rtg_collide_scratch_new(const struct rtg_targets *t)
{
    int n = t->n_capsules, m = n + 4;
    struct rtg_collide_scratch *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->n = n;
    s->ends = malloc((size_t)(4 * 6 * n + 13 * m) * sizeof(double));
    s->row = calloc((size_t)m, sizeof *s->row);
    s->first = calloc((size_t)m, sizeof *s->first);
    if (!s->ends || !s->row || !s->first) {
        rtg_collide_scratch_free(s);
        return NULL;
    }
    s->cx = s->ends + 4 * 6 * n;
    s->cy = s->cx + 4 * m;
    s->cz = s->cy + 4 * m;
    s->cr = s->cz + 4 * m;
    for (int l = 0; l < 4; l++)
        for (int c = n; c < m; c++) s->cx[l * m + c] = s->cy[l * m + c] = s->cz[l * m + c] = 0.0;
    for (int c = n; c < m; c++) s->cr[c] = 0.0;
    /* A capsule's length is its link's rigid motion's to rounding (the
     * world rotation is orthonormal to a few units of 1e-16): the reach is
     * taken once from the capsule's own end points and made larger by a
     * relative 2^-30, far above that rounding, so that no pair whose world
     * spheres meet is ever taken as far apart (a pair the hair adds is
     * measured, and its depth is not above zero but by rounding). */
    for (int c = 0; c < n; c++) {
        const struct kin_capsule *k = &t->capsules[c];
        double hl = 0.0;
        for (int i = 0; i < 3; i++) hl += (k->b[i] - k->a[i]) * (k->b[i] - k->a[i]);
        s->cr[c] = (0.5 * sqrt(hl) + k->radius) * (1.0 + 0x1p-30);
    }
    /* Rows: the pairs in (first, second) order, first < second, as
     * kin_capsule_pairs lists them; anything else takes the pair loop. */
    s->fast = n <= 64;
    for (int p = 0; p < t->n_pairs && s->fast; p++) {
        int a = t->pair[2 * p], b = t->pair[2 * p + 1];
        int pa = p ? t->pair[2 * p - 2] : -1, pb = p ? t->pair[2 * p - 1] : -1;
        if (a < 0 || b <= a || b >= n || a < pa || (a == pa && b <= pb)) s->fast = 0;
        else {
            if (!s->row[a]) s->first[a] = p;
            s->row[a] |= 1ull << b;
        }
    }
    return s;
}

void rtg_collide_scratch_free(struct rtg_collide_scratch *s)
{
    if (!s) return;
    free(s->ends);
    free(s->row);
    free(s->first);
    free(s);
}

/* Whether pair (a, b) is far apart: |centre a - centre b|^2 >= (reach a +
 * reach b)^2, the capsules then cannot touch. */
static int far_apart(const struct frame_caps *s, int a, int b)
{
    double dx = s->cx[a] - s->cx[b], dy = s->cy[a] - s->cy[b], dz = s->cz[a] - s->cz[b], reach = s->cr[a] + s->cr[b];
    return dx * dx + dy * dy + dz * dz >= reach * reach;
}

/* The bits k > i of row i whose pair (i, k) is far apart, the test of
 * far_apart in the same operations: four capsules at a time (GCC's
 * vectors, trig.h; each lane the scalar IEEE operation), the lanes past n
 * the padding, whose bits no row has. */
static inline __attribute__((always_inline)) unsigned long long far_bits(const struct frame_caps *s, int n, int i)
{
    unsigned long long far = 0;
    kin_v4d ax = {s->cx[i], s->cx[i], s->cx[i], s->cx[i]}, ay = {s->cy[i], s->cy[i], s->cy[i], s->cy[i]};
    kin_v4d az = {s->cz[i], s->cz[i], s->cz[i], s->cz[i]}, ar = {s->cr[i], s->cr[i], s->cr[i], s->cr[i]};
    for (int k = i + 1; k < n; k += 4) {
        kin_v4d bx, by, bz, br;
        memcpy(&bx, s->cx + k, sizeof bx);
        memcpy(&by, s->cy + k, sizeof by);
        memcpy(&bz, s->cz + k, sizeof bz);
        memcpy(&br, s->cr + k, sizeof br);
        kin_v4d dx = ax - bx, dy = ay - by, dz = az - bz, r = ar + br;
        kin_v4i f = dx * dx + dy * dy + dz * dz >= r * r;
        far |= (unsigned long long)((f[0] & 1) | (f[1] & 2) | (f[2] & 4) | (f[3] & 8)) << k;
    }
    return far;
}

/* Pair p of capsules a and b, near enough to touch: its depth into
 * *deepest and p into *pair when it is the deepest so far. */
static void pair_depth(const struct rtg_targets *t, const struct frame_caps *s, int p, int a, int b,
                       double *deepest, int *pair)
{
    const double *wa = s->ends + 6 * a, *wb = s->ends + 6 * b;
    double pa[3], pb[3], e = 0;
    kin_segment_closest(wa, wa + 3, wb, wb + 3, pa, pb);
    for (int k = 0; k < 3; k++) e += (pa[k] - pb[k]) * (pa[k] - pb[k]);
    double d = sqrt(e) - t->capsules[a].radius - t->capsules[b].radius;
    if (-d > *deepest) {
        *deepest = -d;
        *pair = p;
    }
}

/* The deepest penetration of the pairs of the frame whose capsules' world
 * end points and centres are s (a lane of sc, whose rows give the pairs;
 * rtg_collide_depth4): the reach test first (most pairs are far apart), the
 * segments after, in pair order. */
static inline __attribute__((always_inline)) double pairs_depth(const struct rtg_targets *t,
                                                                const struct rtg_collide_scratch *sc,
                                                                const struct frame_caps *s, int *pair)
{
    double deepest = 0.0;
    *pair = -1;
    if (sc->fast) { /* row by row, the near pairs' bits in pair order */
        for (int i = 0; i < sc->n; i++) {
            unsigned long long row = sc->row[i];
            if (!row) continue;
            for (unsigned long long near = row & ~far_bits(s, sc->n, i); near; near &= near - 1) {
                int k = __builtin_ctzll(near);
                int p = sc->first[i] + __builtin_popcountll(row & ((1ull << k) - 1));
                pair_depth(t, s, p, i, k, &deepest, pair);
            }
        }
    } else {
        for (int p = 0; p < t->n_pairs; p++) {
            int ia = t->pair[2 * p], ib = t->pair[2 * p + 1];
            if (!far_apart(s, ia, ib)) pair_depth(t, s, p, ia, ib, &deepest, pair);
        }
    }
    return deepest;
}

KIN_CLONES void rtg_collide_depth4(const struct rtg_targets *t, int m, const double *link_pos, const double *link_rot,
                                   size_t n_links, struct rtg_collide_scratch *s, double *depth, int *pair, double *low)
{
    kin_v4d lowest = {INFINITY, INFINITY, INFINITY, INFINITY};
    const double *P[4], *R[4];
    struct frame_caps lane[4];
    for (int l = 0; l < 4; l++) { /* lanes past m: frame 0 again, not stored */
        P[l] = link_pos + (size_t)(l < m ? l : 0) * 3 * n_links;
        R[l] = link_rot + (size_t)(l < m ? l : 0) * 9 * n_links;
        lane[l] = caps_of(s, l);
    }
    /* World end points and centre of every capsule once, the four frames
     * at once (kin_capsule_at's operations lane by lane, the same bits; one
     * frame at a time they were two fifths of the collision figures' time),
     * each frame's into its lane of s; then each frame's pairs. */
    for (int c = 0; c < t->n_capsules; c++) {
        const struct kin_capsule *k = &t->capsules[c];
        size_t lp = 3 * (size_t)k->link, lr = 9 * (size_t)k->link;
        kin_v4d w[6];
        for (int i = 0; i < 3; i++) {
            kin_v4d m0 = {R[0][lr + 3 * i], R[1][lr + 3 * i], R[2][lr + 3 * i], R[3][lr + 3 * i]};
            kin_v4d m1 = {R[0][lr + 3 * i + 1], R[1][lr + 3 * i + 1], R[2][lr + 3 * i + 1], R[3][lr + 3 * i + 1]};
            kin_v4d m2 = {R[0][lr + 3 * i + 2], R[1][lr + 3 * i + 2], R[2][lr + 3 * i + 2], R[3][lr + 3 * i + 2]};
            kin_v4d p = {P[0][lp + i], P[1][lp + i], P[2][lp + i], P[3][lp + i]};
            w[i] = m0 * k->a[0] + m1 * k->a[1] + m2 * k->a[2];
            w[3 + i] = m0 * k->b[0] + m1 * k->b[1] + m2 * k->b[2];
            w[i] = w[i] + p;
            w[3 + i] = w[3 + i] + p;
        }
        kin_v4d cx = 0.5 * (w[0] + w[3]), cy = 0.5 * (w[1] + w[4]), cz = 0.5 * (w[2] + w[5]);
        for (int l = 0; l < m; l++) {
            double *e = lane[l].ends + 6 * c;
            for (int i = 0; i < 6; i++) e[i] = w[i][l];
            lane[l].cx[c] = cx[l];
            lane[l].cy[c] = cy[l];
            lane[l].cz[c] = cz[l];
        }
        if (k->link != t->foot_link[0] && k->link != t->foot_link[1]) {
            kin_v4d z = KIN_TRIG_BLEND(w[2] < w[5], w[2], w[5]) - k->radius;
            lowest = KIN_TRIG_BLEND(z < lowest, z, lowest);
        }
    }
    for (int l = 0; l < m; l++) {
        low[l] = lowest[l];
        depth[l] = pairs_depth(t, s, &lane[l], &pair[l]);
    }
}

double rtg_collide_depth(const struct rtg_targets *t, const double *link_pos, const double *link_rot,
                         struct rtg_collide_scratch *s, int *pair, double *low)
{
    double depth;
    rtg_collide_depth4(t, 1, link_pos, link_rot, 0, s, &depth, pair, low);
    return depth;
}
