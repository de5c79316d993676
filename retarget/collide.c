/* collide.c -- a job's self-collision pairs and their penetration depths
 * (collide.h). */
#include "collide.h"


#include <math.h>
#include <stdlib.h>
#include <string.h>

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

double rtg_collide_depth(const struct rtg_targets *t, const double *link_pos, const double *link_rot,
                         double *scratch, int *pair, double *low)
{
    double deepest = 0.0, lowest = INFINITY;
    *pair = -1;
    /* World end points, centre and reach (half length plus radius) of
     * every capsule once, then each pair: the reach test first (most pairs
     * are far apart), the segments after. scratch: 10 doubles a capsule. */
    for (int c = 0; c < t->n_capsules; c++) {
        const struct kin_capsule *k = &t->capsules[c];
        double *w = scratch + 10 * c, hl = 0;
        kin_capsule_world(k, link_pos, link_rot, w, w + 3);
        for (int i = 0; i < 3; i++) {
            w[6 + i] = 0.5 * (w[i] + w[3 + i]);
            hl += (w[3 + i] - w[i]) * (w[3 + i] - w[i]);
        }
        w[9] = 0.5 * sqrt(hl) + k->radius;
        double z = (w[2] < w[5] ? w[2] : w[5]) - k->radius;
        if (z < lowest && k->link != t->foot_link[0] && k->link != t->foot_link[1]) lowest = z;
    }
    for (int p = 0; p < t->n_pairs; p++) {
        int ia = t->pair[2 * p], ib = t->pair[2 * p + 1];
        const double *a = scratch + 10 * ia, *b = scratch + 10 * ib;
        double dx = a[6] - b[6], dy = a[7] - b[7], dz = a[8] - b[8], reach = a[9] + b[9];
        if (dx * dx + dy * dy + dz * dz >= reach * reach) continue;
        double pa[3], pb[3], e = 0;
        kin_segment_closest(a, a + 3, b, b + 3, pa, pb);
        for (int i = 0; i < 3; i++) e += (pa[i] - pb[i]) * (pa[i] - pb[i]);
        double d = sqrt(e) - t->capsules[ia].radius - t->capsules[ib].radius;
        if (-d > deepest) {
            deepest = -d;
            *pair = p;
        }
    }
    *low = lowest;
    return deepest;
}
