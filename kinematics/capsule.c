/* capsule.c -- a robot's collision capsules from its description, the pairs
 * that can touch, and capsule distances in double (capsule.h). The solver's
 * float twin of the distance is solver/frame.h's frame_pair_eval; this one
 * serves pair selection and the report, which need no bit contract. */
#include "capsule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rot.h"

static double v_dist(const double *a, const double *b)
{
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static double clamp01(double v) { return v < 0.0 ? 0.0 : (v > 1.0 ? 1.0 : v); }

void kin_segment_closest(const double *p0, const double *p1, const double *q0, const double *q1, double *pa,
                         double *pb)
{
    double d1[3], d2[3], r[3];
    for (int k = 0; k < 3; k++) {
        d1[k] = p1[k] - p0[k];
        d2[k] = q1[k] - q0[k];
        r[k] = p0[k] - q0[k];
    }
    double a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2];
    double e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2];
    double f = d2[0] * r[0] + d2[1] * r[1] + d2[2] * r[2];
    double s = 0.0, t = 0.0;
    const double eps = 1e-18;
    if (a <= eps && e > eps) {
        t = clamp01(f / e);
    } else if (a > eps) {
        double c = d1[0] * r[0] + d1[1] * r[1] + d1[2] * r[2];
        if (e <= eps) {
            s = clamp01(-c / a);
        } else {
            double bb = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2], den = a * e - bb * bb;
            s = den > 0.0 ? clamp01((bb * f - c * e) / den) : 0.0;
            t = (bb * s + f) / e;
            if (t < 0.0) { t = 0.0; s = clamp01(-c / a); }
            else if (t > 1.0) { t = 1.0; s = clamp01((bb - c) / a); }
        }
    }
    for (int k = 0; k < 3; k++) {
        pa[k] = p0[k] + d1[k] * s;
        pb[k] = q0[k] + d2[k] * t;
    }
}

double kin_capsule_distance(const struct kin_capsule *ca, const struct kin_capsule *cb, const double *link_pos,
                            const double *link_rot)
{
    double a0[3], a1[3], b0[3], b1[3], pa[3], pb[3];
    kin_capsule_world(ca, link_pos, link_rot, a0, a1);
    kin_capsule_world(cb, link_pos, link_rot, b0, b1);
    kin_segment_closest(a0, a1, b0, b1, pa, pb);
    return v_dist(pa, pb) - ca->radius - cb->radius;
}

/* A collision primitive as a capsule in its link's frame; 0 for what is not
 * a volume (meshes, planes, height fields, contact points). */
static int geom_capsule(const struct kin_geom *g, struct kin_capsule *c)
{
    double ext[3] = {g->size[0], g->size[1], g->size[2]}, axis[3] = {0, 0, 0}, m[9], half = 0.0, rad;
    int k = 2;
    if (g->contype == 0 && g->conaffinity == 0) return 0;
    switch (g->type) {
    case KIN_GEOM_SPHERE: rad = ext[0]; break;
    case KIN_GEOM_CAPSULE:
    case KIN_GEOM_CYLINDER: rad = ext[0]; half = ext[1]; break;
    case KIN_GEOM_BOX:
    case KIN_GEOM_ELLIPSOID:
        k = ext[0] >= ext[1] && ext[0] >= ext[2] ? 0 : (ext[1] >= ext[2] ? 1 : 2);
        rad = fmax(ext[(k + 1) % 3], ext[(k + 2) % 3]);
        half = fmax(0.0, ext[k] - rad);
        break;
    default: return 0;
    }
    if (!(rad >= KIN_MIN_PRIMITIVE) || !isfinite(rad) || !isfinite(half)) return 0;
    axis[k] = half;
    kin_quat_to_mat(g->quat, m);
    double d[3];
    kin_mat_vec(m, axis, d);
    c->link = g->link;
    for (int i = 0; i < 3; i++) {
        c->a[i] = g->pos[i] - d[i];
        c->b[i] = g->pos[i] + d[i];
    }
    c->radius = rad;
    return 1;
}

static double bone_radius(double len)
{
    double r = KIN_BONE_RADIUS_SCALE * len;
    return r < KIN_BONE_RADIUS_MIN ? KIN_BONE_RADIUS_MIN : (r > KIN_BONE_RADIUS_MAX ? KIN_BONE_RADIUS_MAX : r);
}

static void bone(struct kin_capsule *c, int link, const double *a, const double *b)
{
    c->link = link;
    memcpy(c->a, a, sizeof c->a);
    memcpy(c->b, b, sizeof c->b);
    c->radius = bone_radius(v_dist(a, b));
}

/* 1 when link c hangs from a fixed joint and has no child (a sensor frame,
 * a marker, a hand's end frame). */
static int fixed_leaf(const struct kin_robot *r, int c)
{
    if (r->tree.joint_index[c] >= 0 && r->tree.joint_type[c] != RT_JOINT_FIXED) return 0;
    for (int k = c + 1; k < r->n_links; k++)
        if (r->links[k].parent == c) return 0;
    return 1;
}

/* Bone capsules of link i (at most children + 1, or the leaf sphere). */
static int bone_capsules(const struct kin_robot *r, int i, struct kin_capsule *out)
{
    static const double zero[3] = {0, 0, 0};
    const float *op = r->tree.origin_pos;
    int n = 0, far_a = -1, far_b = -1, moving = 0;
    double far = 0.0;
    for (int c = i + 1; c < r->n_links; c++)
        moving |= r->links[c].parent == i && !fixed_leaf(r, c);
    for (int c = i + 1; c < r->n_links; c++) {
        if (r->links[c].parent != i || (moving && fixed_leaf(r, c))) continue;
        double oc[3] = {op[3 * c], op[3 * c + 1], op[3 * c + 2]};
        if (v_dist(oc, zero) < KIN_BONE_MIN_LEN) continue;
        bone(&out[n++], i, zero, oc);
        for (int d = i + 1; d < c; d++) {
            if (r->links[d].parent != i || (moving && fixed_leaf(r, d))) continue;
            double od[3] = {op[3 * d], op[3 * d + 1], op[3 * d + 2]};
            if (v_dist(od, zero) < KIN_BONE_MIN_LEN) continue;
            double dd = v_dist(oc, od);
            if (dd > far) { far = dd; far_a = d; far_b = c; }
        }
    }
    if (far_a >= 0 && far >= KIN_BONE_MIN_LEN) {
        double oa[3] = {op[3 * far_a], op[3 * far_a + 1], op[3 * far_a + 2]};
        double ob[3] = {op[3 * far_b], op[3 * far_b + 1], op[3 * far_b + 2]};
        bone(&out[n++], i, oa, ob);
    }
    if (n == 0 && i > 0 && r->tree.joint_index[i] >= 0 && r->tree.joint_type[i] != RT_JOINT_FIXED) {
        out[n].link = i;
        memset(out[n].a, 0, sizeof out[n].a);
        memset(out[n].b, 0, sizeof out[n].b);
        out[n].radius = KIN_LEAF_RADIUS;
        n++;
    }
    return n;
}

enum rt_status kin_robot_capsules(const struct kin_robot *r, struct kin_capsule **out, int *n,
                                  struct rt_err *err)
{
    /* At most one per primitive plus, per link, one per child and one more. */
    size_t cap = (size_t)r->n_geoms + 2 * (size_t)r->n_links + 1;
    struct kin_capsule *c = malloc(cap * sizeof *c);
    int m = 0;
    *out = NULL;
    *n = 0;
    if (!c) return rt_err_set(err, RT_ENOMEM, "capsules", "out of memory");
    for (int i = 0; i < r->n_links; i++) {
        int m0 = m;
        for (int g = 0; g < r->n_geoms; g++)
            if (r->geoms[g].link == i && geom_capsule(&r->geoms[g], &c[m])) m++;
        if (m == m0) m += bone_capsules(r, i, c + m);
    }
    if (m == 0) {
        free(c);
        return RT_OK;
    }
    *out = c;
    *n = m;
    return RT_OK;
}

/* Number of children of link y with a moving joint somewhere below. */
static int moving_children(const struct kin_robot *r, int y)
{
    int n = 0;
    for (int c = y + 1; c < r->n_links; c++)
        if (r->links[c].parent == y && !fixed_leaf(r, c)) n++;
    return n;
}

/* 1 when the pair of links is not checked: one link, a link and its parent
 * or grandparent, or a link and an ancestor that does not branch (one
 * limb, whose joint limits keep it from folding into itself). */
static int same_chain(const struct kin_robot *r, int a, int b)
{
    for (int s = 0; s < 2; s++) {
        int x = s ? a : b, y = s ? b : a, up = 0;
        for (; x >= 0 && x != y; x = r->links[x].parent) up++;
        if (x == y) return up <= 2 || moving_children(r, y) < 2;
    }
    return 0;
}

enum rt_status kin_capsule_pairs(const struct kin_robot *r, const struct kin_capsule *caps, int n_caps,
                                 double clear, int **pairs, int *n_pairs, struct rt_err *err)
{
    double *state = calloc((size_t)RT_ROOT_COLS + (size_t)r->n_dof, sizeof *state);
    double *P = malloc((size_t)r->n_links * 3 * sizeof *P), *M = malloc((size_t)r->n_links * 9 * sizeof *M);
    int *out = NULL, n = 0;
    size_t cap = 0;
    enum rt_status st = RT_OK;
    *pairs = NULL;
    *n_pairs = 0;
    if (!state || !P || !M) goto oom;
    state[6] = 1.0;
    for (int j = 0; j < r->n_dof; j++) {
        const struct kin_joint *J = &r->joints[r->coord_joint[j]];
        state[RT_ROOT_COLS + j] = J->lower > 0.0 ? J->lower : (J->upper < 0.0 ? J->upper : 0.0);
    }
    kin_fk(r, state, P, M);
    for (int i = 0; i < n_caps; i++)
        for (int k = i + 1; k < n_caps; k++) {
            if (same_chain(r, caps[i].link, caps[k].link)) continue;
            if (kin_capsule_distance(&caps[i], &caps[k], P, M) < clear) continue;
            if ((size_t)n == cap) {
                size_t nc = cap ? 2 * cap : 64;
                int *g = realloc(out, nc * 2 * sizeof *out);
                if (!g) goto oom;
                out = g;
                cap = nc;
            }
            out[2 * n] = i;
            out[2 * n + 1] = k;
            n++;
        }
    *pairs = out;
    *n_pairs = n;
    out = NULL;
    goto done;
oom:
    st = rt_err_set(err, RT_ENOMEM, "capsules", "out of memory");
done:
    free(out);
    free(state);
    free(P);
    free(M);
    return st;
}
