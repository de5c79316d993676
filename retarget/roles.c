/* roles.c -- a robot's body roles from its kinematic tree (roles.h says
 * the rules and their order; docs/profiles.md "Robots without a profile"
 * says it for users).
 *
 * Topology finds the limbs (the lowest leaves are feet, the widest are
 * hands), the zero pose and the joint axes find the joints inside a limb,
 * and names only break ties and give sides. */
#include "roles.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static const char *const role_names[RTG_RROLE_COUNT] = {
    "pelvis", "torso", "head",
    "left_hip", "left_knee", "left_foot", "left_shoulder", "left_elbow", "left_hand",
    "right_hip", "right_knee", "right_foot", "right_shoulder", "right_elbow", "right_hand",
};

const char *rtg_robot_role_name(int role)
{
    return role >= 0 && role < RTG_RROLE_COUNT ? role_names[role] : "?";
}

int rtg_robot_role_index(const char *name)
{
    for (int i = 0; name && i < RTG_RROLE_COUNT; i++)
        if (strcmp(role_names[i], name) == 0) return i;
    return -1;
}

int rtg_robot_role_required(int role)
{
    return role >= 0 && role < RTG_RROLE_COUNT && role != RTG_RROLE_HEAD && role != RTG_RROLE_L_HAND &&
           role != RTG_RROLE_R_HAND;
}

/* ---- names ---- */

/* Lower-cased copy of `s` into buf (cap bytes). */
static void lower(const char *s, char *buf, size_t cap)
{
    size_t i = 0;
    for (; s && s[i] && i + 1 < cap; i++) buf[i] = (char)tolower((unsigned char)s[i]);
    buf[i] = 0;
}

/* Side a name says: 1 left, 2 right, 0 none (roles.h rule 1). */
static int name_side(const char *name)
{
    char b[KIN_MAX_NAME + 1];
    size_t n;
    lower(name, b, sizeof b);
    n = strlen(b);
    int l = strstr(b, "left") != NULL, r = strstr(b, "right") != NULL;
    if (l != r) return l ? 1 : 2;
    if (l) return 0;
    if (n > 2 && b[1] == '_' && (b[0] == 'l' || b[0] == 'r')) return b[0] == 'l' ? 1 : 2;
    if (n > 2 && b[n - 2] == '_' && (b[n - 1] == 'l' || b[n - 1] == 'r')) return b[n - 1] == 'l' ? 1 : 2;
    l = strstr(b, "_l_") != NULL, r = strstr(b, "_r_") != NULL;
    if (l != r) return l ? 1 : 2;
    return 0;
}

/* 1 when link k's name or its joint's contains one of the words. */
static int named(const struct kin_robot *r, int k, const char *const *words)
{
    char a[KIN_MAX_NAME + 1], b[KIN_MAX_NAME + 1];
    int j = r->links[k].joint;
    lower(r->links[k].name, a, sizeof a);
    lower(j >= 0 ? r->joints[j].name : "", b, sizeof b);
    for (; *words; words++)
        if (strstr(a, *words) || strstr(b, *words)) return 1;
    return 0;
}

/* ---- the tree at the zero pose ---- */

struct rtree {
    const struct kin_robot *r;
    double *P, *M;   /* zero-pose positions [n*3], rotations [n*9] */
    int *n_child;
    int *side;       /* 0 none, 1 left, 2 right */
    double extent;   /* size of the robot (m), for tolerances */
};

static void rtree_free(struct rtree *t)
{
    free(t->P);
    free(t->M);
    free(t->n_child);
    free(t->side);
}

static int rtree_init(struct rtree *t, const struct kin_robot *r)
{
    int n = r->n_links;
    memset(t, 0, sizeof *t);
    t->r = r;
    double *state = calloc((size_t)(7 + r->n_dof), sizeof *state);
    t->P = malloc((size_t)n * 3 * sizeof *t->P);
    t->M = malloc((size_t)n * 9 * sizeof *t->M);
    t->n_child = calloc((size_t)n, sizeof *t->n_child);
    t->side = calloc((size_t)n, sizeof *t->side);
    if (!state || !t->P || !t->M || !t->n_child || !t->side) {
        free(state);
        rtree_free(t);
        return -1;
    }
    state[6] = 1.0;
    kin_fk(r, state, t->P, t->M);
    free(state);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int k = 0; k < n; k++) {
        if (r->links[k].parent >= 0) t->n_child[r->links[k].parent]++;
        for (int i = 0; i < 3; i++) {
            if (t->P[3 * k + i] < lo[i]) lo[i] = t->P[3 * k + i];
            if (t->P[3 * k + i] > hi[i]) hi[i] = t->P[3 * k + i];
        }
    }
    t->extent = 0;
    for (int i = 0; i < 3; i++) t->extent = fmax(t->extent, hi[i] - lo[i]);
    for (int k = 0; k < n; k++) {
        int s = 0;
        for (int a = k; a >= 0 && !s; a = r->links[a].parent) {
            int j = r->links[a].joint;
            s = name_side(r->links[a].name);
            if (!s && j >= 0) s = name_side(r->joints[j].name);
        }
        if (!s && fabs(t->P[3 * k + 1]) > 1e-3) s = t->P[3 * k + 1] > 0 ? 1 : 2;
        t->side[k] = s;
    }
    return 0;
}

static int movable(const struct kin_robot *r, int k)
{
    int j = r->links[k].joint;
    return j >= 0 && r->joints[j].type != KIN_JOINT_FIXED;
}

static double dist(const double *a, const double *b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Distance of point p from the axis of link k's joint (through k's origin). */
static double axis_dist(const struct rtree *t, int k, const double *p)
{
    const double *ax = t->r->joints[t->r->links[k].joint].axis, *m = t->M + 9 * k;
    double w[3], d[3], c[3];
    for (int i = 0; i < 3; i++) w[i] = m[3 * i] * ax[0] + m[3 * i + 1] * ax[1] + m[3 * i + 2] * ax[2];
    for (int i = 0; i < 3; i++) d[i] = p[i] - t->P[3 * k + i];
    c[0] = d[1] * w[2] - d[2] * w[1];
    c[1] = d[2] * w[0] - d[0] * w[2];
    c[2] = d[0] * w[1] - d[1] * w[0];
    double nw = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    return nw > 0 ? sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / nw : 0;
}

/* The movable links on the path from `top` (exclusive) down to `leaf`, cut
 * at the first link with several children; returns their count. */
static int chain(const struct rtree *t, int top, int leaf, int *out, int cap)
{
    int path[KIN_MAX_LINKS], n = 0, m = 0;
    for (int a = leaf; a >= 0 && a != top && n < KIN_MAX_LINKS; a = t->r->links[a].parent) path[n++] = a;
    for (int i = n - 1; i >= 0; i--) {
        int k = path[i];
        if (movable(t->r, k) && m < cap) out[m++] = k;
        if (t->n_child[k] > 1) break;
    }
    return m;
}

/* Rule 5's "hip rule": of c[0..n), the deepest consecutive link whose
 * origin lies on the axes of the joints above it in the chain. */
static int centre(const struct rtree *t, const int *c, int n, int knee)
{
    double tol = 0.15 * dist(t->P + 3 * c[0], t->P + 3 * knee);
    int best = c[0];
    for (int i = 1; i < n; i++) {
        int ok = 1;
        for (int a = 0; a < i && ok; a++) ok = axis_dist(t, c[a], t->P + 3 * c[i]) <= tol;
        if (!ok) break;
        best = c[i];
    }
    return best;
}

/* Of c[lo..hi), the link nearest the midpoint of links a and b. */
static int nearest_mid(const struct rtree *t, const int *c, int lo, int hi, int a, int b)
{
    double mid[3];
    int best = -1;
    double bd = INFINITY;
    for (int i = 0; i < 3; i++) mid[i] = 0.5 * (t->P[3 * a + i] + t->P[3 * b + i]);
    for (int i = lo; i < hi; i++) {
        double d = dist(t->P + 3 * c[i], mid);
        if (d < bd) bd = d, best = i;
    }
    return best;
}

static const char *const w_foot[] = {"ankle", "foot", NULL};
static const char *const w_knee[] = {"knee", NULL};
static const char *const w_hand[] = {"wrist", "hand", NULL};
static const char *const w_elbow[] = {"elbow", NULL};
static const char *const w_head[] = {"head", NULL};
static const char *const w_neck[] = {"neck", NULL};

/* A leg chain's hip, knee and foot; 0, or -1 when it is too short. */
static int leg_roles(const struct rtree *t, const int *c, int n, int *hip, int *knee, int *foot)
{
    int fi = n - 1, ki = -1;
    *hip = *knee = *foot = -1;
    if (n < 3) return -1;
    for (int i = n - 1; i >= 2; i--)
        if (named(t->r, c[i], w_foot)) { fi = i; break; }
    for (int i = 1; i < fi && ki < 0; i++)
        if (named(t->r, c[i], w_knee)) ki = i;
    if (ki < 0) ki = nearest_mid(t, c, 1, fi, c[0], c[fi]);
    if (ki < 1) return -1;
    *foot = c[fi];
    *knee = c[ki];
    *hip = centre(t, c, ki, c[ki]);
    return 0;
}

/* An arm chain's shoulder, elbow and hand (-1: none); 0, or -1 when it is
 * too short. */
static int arm_roles(const struct rtree *t, const int *c, int n, int *shoulder, int *elbow, int *hand)
{
    int ei = -1, hi = -1;
    *shoulder = *elbow = *hand = -1;
    if (n < 2) return -1;
    for (int i = 1; i < n && ei < 0; i++)
        if (named(t->r, c[i], w_elbow)) ei = i;
    if (ei < 0) {
        if (n == 2) ei = 1;
        else ei = nearest_mid(t, c, 1, n - 1, c[0], c[n - 1]);
    }
    for (int i = n - 1; i > ei && hi < 0; i--)
        if (named(t->r, c[i], w_hand)) hi = i;
    if (hi < 0 && ei < n - 1) hi = n - 1;
    *elbow = c[ei];
    *hand = hi >= 0 ? c[hi] : -1;
    *shoulder = centre(t, c, ei, c[ei]);
    return 0;
}

static void msg_add(char *msg, size_t cap, const char *text)
{
    size_t used = strlen(msg);
    if (used + 2 < cap) snprintf(msg + used, cap - used, "%s%s", used ? ", " : "", text);
}

/* The refusal for missing required roles: limbs whole when every role of
 * the limb is missing. */
static enum rt_status missing_error(const struct kin_robot *r, const struct rtg_robot_roles *o,
                                    struct rt_err *err)
{
    static const char *const side_word[2] = {"left", "right"};
    char miss[512] = "", item[48];
    for (int part = 0; part < 4; part++) {
        if (part == 0 || part == 2) {
            int role = part == 0 ? RTG_RROLE_PELVIS : RTG_RROLE_TORSO;
            if (o->link[role] < 0) msg_add(miss, sizeof miss, part == 0 ? "no pelvis" : "no torso");
        }
        int first = part < 2 ? RTG_RROLE_L_HIP : RTG_RROLE_L_SHOULDER;
        if (part == 0 || part == 2) continue;
        for (int s = 0; s < 2; s++) {
            int base = first + s * RTG_RROLE_SIDED, n_miss = 0;
            for (int k = 0; k < 3; k++) n_miss += rtg_robot_role_required(base + k) && o->link[base + k] < 0;
            int n_req = part == 1 ? 3 : 2;
            if (n_miss == n_req) {
                snprintf(item, sizeof item, "no %s %s", side_word[s], part == 1 ? "leg" : "arm");
                msg_add(miss, sizeof miss, item);
                continue;
            }
            for (int k = 0; k < 3; k++)
                if (rtg_robot_role_required(base + k) && o->link[base + k] < 0) {
                    snprintf(item, sizeof item, "no %s", role_names[base + k]);
                    for (char *p = item; *p; p++) if (*p == '_') *p = ' ';
                    msg_add(miss, sizeof miss, item);
                }
        }
    }
    return rt_err_set(err, RT_EINVAL, "robot", "cannot map robot '%s': %s", RT_QUOTE(r->name), miss);
}

enum rt_status rtg_robot_roles_check(const struct kin_robot *r, const struct rtg_robot_roles *roles,
                                     struct rt_err *err)
{
    for (int k = 0; k < RTG_RROLE_COUNT; k++)
        if (rtg_robot_role_required(k) && roles->link[k] < 0) return missing_error(r, roles, err);
    return RT_OK;
}

enum rt_status rtg_robot_roles(const struct kin_robot *r, struct rtg_robot_roles *out,
                               struct rt_err *err)
{
    struct rtree t;
    int foot_leaf[2] = {-1, -1}, hand_leaf[2] = {-1, -1}, pelvis = -1, torso = -1;
    for (int k = 0; k < RTG_RROLE_COUNT; k++) out->link[k] = -1;
    if (rtree_init(&t, r)) return rt_err_set(err, RT_ENOMEM, "robot", "out of memory");
    double z_root = t.P[2], min_drop = 0.1 * t.extent;

    /* 2. Legs: the lowest sided leaf, then the lowest of the other side. */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 1; k < r->n_links; k++) {
            if (t.n_child[k] || !t.side[k] || t.P[3 * k + 2] > z_root - min_drop) continue;
            if (pass == 1 && (foot_leaf[0] < 0 || t.side[k] == t.side[foot_leaf[0]])) continue;
            int *slot = &foot_leaf[pass];
            if (*slot < 0 || t.P[3 * k + 2] < t.P[3 * *slot + 2]) *slot = k;
        }
    if (foot_leaf[0] >= 0 && foot_leaf[1] >= 0) {
        if (t.side[foot_leaf[0]] == 2) {
            int s = foot_leaf[0];
            foot_leaf[0] = foot_leaf[1], foot_leaf[1] = s;
        }
        pelvis = kin_link_common_ancestor(r, foot_leaf[0], foot_leaf[1]);
    } else {
        foot_leaf[0] = foot_leaf[1] = -1;
    }
    /* 3. Arms: the widest sided leaf on each side, not under a leg. */
    for (int k = 1; k < r->n_links; k++) {
        if (t.n_child[k] || !t.side[k]) continue;
        int under_leg = 0;
        for (int s = 0; s < 2 && pelvis >= 0; s++) {
            int a = kin_link_common_ancestor(r, k, foot_leaf[s]);
            under_leg |= a >= 0 && a != pelvis && kin_link_is_ancestor(r, pelvis, a);
        }
        if (under_leg || k == foot_leaf[0] || k == foot_leaf[1]) continue;
        int s = t.side[k] - 1;
        if (hand_leaf[s] < 0 || fabs(t.P[3 * k + 1]) > fabs(t.P[3 * hand_leaf[s] + 1])) hand_leaf[s] = k;
    }
    if (hand_leaf[0] >= 0 && hand_leaf[1] >= 0) {
        torso = kin_link_common_ancestor(r, hand_leaf[0], hand_leaf[1]);
        /* The torso must not lie on a leg. */
        for (int s = 0; s < 2 && torso >= 0 && pelvis >= 0; s++)
            if (torso != pelvis && kin_link_is_ancestor(r, torso, foot_leaf[s]) &&
                !kin_link_is_ancestor(r, torso, pelvis))
                torso = -1;
    }
    out->link[RTG_RROLE_PELVIS] = pelvis;
    out->link[RTG_RROLE_TORSO] = torso;

    /* 4-5. Chains and the joints in them. */
    for (int s = 0; s < 2; s++) {
        int c[KIN_MAX_LINKS], n, o = s * RTG_RROLE_SIDED;
        if (pelvis >= 0) {
            n = chain(&t, pelvis, foot_leaf[s], c, KIN_MAX_LINKS);
            leg_roles(&t, c, n, &out->link[RTG_RROLE_L_HIP + o], &out->link[RTG_RROLE_L_KNEE + o],
                      &out->link[RTG_RROLE_L_FOOT + o]);
        }
        if (torso >= 0) {
            n = chain(&t, torso, hand_leaf[s], c, KIN_MAX_LINKS);
            arm_roles(&t, c, n, &out->link[RTG_RROLE_L_SHOULDER + o], &out->link[RTG_RROLE_L_ELBOW + o],
                      &out->link[RTG_RROLE_L_HAND + o]);
        }
    }
    /* Arms found nowhere: what met was no torso (panda's fingers). */
    if (torso >= 0 && out->link[RTG_RROLE_L_ELBOW] < 0 && out->link[RTG_RROLE_R_ELBOW] < 0)
        out->link[RTG_RROLE_TORSO] = torso = -1;
    /* 6. Head: named, nearest the torso, on no limb. */
    for (int pass = 0; torso >= 0 && pass < 2 && out->link[RTG_RROLE_HEAD] < 0; pass++) {
        int best = -1, best_depth = 1 << 30;
        for (int k = 0; k < r->n_links; k++) {
            if (!named(r, k, pass ? w_neck : w_head) || t.side[k]) continue;
            int on_limb = 0;
            for (int s = 0; s < 2; s++)
                on_limb |= (foot_leaf[s] >= 0 && kin_link_is_ancestor(r, k, foot_leaf[s]) && k != pelvis &&
                            !kin_link_is_ancestor(r, k, pelvis)) ||
                           (hand_leaf[s] >= 0 && kin_link_is_ancestor(r, k, hand_leaf[s]));
            if (on_limb) continue;
            int depth = 0;
            for (int a = k; a >= 0; a = r->links[a].parent) depth++;
            if (depth < best_depth) best = k, best_depth = depth;
        }
        out->link[RTG_RROLE_HEAD] = best;
    }
    rtree_free(&t);
    return rtg_robot_roles_check(r, out, err);
}

enum rt_status rtg_robot_roles_set(const struct kin_robot *r, struct rtg_robot_roles *roles,
                                   const char *role_name, const char *link_name, const char *where,
                                   struct rt_err *err)
{
    int role = rtg_robot_role_index(role_name);
    if (role < 0)
        return rt_err_set(err, RT_EINVAL, where, "unknown role '%s' (pelvis, torso, head, left_hip, "
                          "left_knee, left_foot, left_shoulder, left_elbow, left_hand, right_...)", RT_QUOTE(role_name));
    int k = kin_robot_link_index(r, link_name);
    if (k < 0)
        return rt_err_set(err, RT_EINVAL, where, "robot '%s' has no link '%s'", RT_QUOTE(r->name), RT_QUOTE(link_name));
    roles->link[role] = k;
    return RT_OK;
}

char *rtg_robot_roles_json(const struct kin_robot *r, const struct rtg_robot_roles *roles)
{
    cJSON *o = cJSON_CreateObject(), *m, *miss;
    char *text = NULL;
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "robot", r->name);
    m = cJSON_AddObjectToObject(o, "roles");
    miss = cJSON_AddArrayToObject(o, "missing");
    for (int k = 0; m && miss && k < RTG_RROLE_COUNT; k++) {
        if (roles->link[k] >= 0) cJSON_AddStringToObject(m, role_names[k], r->links[roles->link[k]].name);
        else cJSON_AddItemToArray(miss, cJSON_CreateString(role_names[k]));
    }
    if (m && miss) text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}
