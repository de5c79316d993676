/* skeleton.c -- automatic mapping of a human skeleton onto a bundled
 * profile's template (skeleton.h says what and why; docs/profiles.md
 * "Automatic mapping" says how, for users).
 *
 * Names propose, topology disposes: a synonym only makes a joint a
 * candidate for a role, and the tree decides which candidate plays it (the
 * foot nearest the root on each side, the shin and thigh the nearest
 * same-side ancestors above it with the right names, ...). "Shoulder" is a
 * clavicle in Mixamo and CMU and an upper arm in Biovision/ASF and
 * GAMES-105; "Hip" is the pelvis without a side and a thigh with one; the
 * walk up from the forearm settles both. Joints that coincide with their
 * parent in the first frame (CMU's LowerBack, Neck, LeftShoulder, LHipJoint
 * have zero offsets) are stepped over where a role needs a direction.
 *
 * The profile is the template's with joint names substituted, so
 * rtg_targets_from_clip() treats it exactly as a bundled profile. */
#include "skeleton.h"

#include "roles.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Candidate classes a core name proposes (bit mask). */
enum {
    C_PELVIS = 1 << 0,
    C_SPINE = 1 << 1,
    C_NECK = 1 << 2,
    C_HEAD = 1 << 3,
    C_CLAV = 1 << 4,
    C_UPARM = 1 << 5,
    C_FOREARM = 1 << 6,
    C_HAND = 1 << 7,
    C_THIGH = 1 << 8,
    C_SHIN = 1 << 9,
    C_FOOT = 1 << 10,
    C_TOE = 1 << 11
};

struct synonym {
    const char *core;
    int cls;
};

/* Cores of joints without a side. */
static const struct synonym unsided[] = {
    {"hips", C_PELVIS}, {"hip", C_PELVIS}, {"pelvis", C_PELVIS}, {"root", C_PELVIS},
    {"base", C_PELVIS}, {"cog", C_PELVIS},
    {"spine", C_SPINE}, {"ab", C_SPINE}, {"abdomen", C_SPINE}, {"chest", C_SPINE},
    {"torso", C_SPINE}, {"back", C_SPINE}, {"lowerback", C_SPINE}, {"upperback", C_SPINE},
    {"upperchest", C_SPINE}, {"waist", C_SPINE}, {"pelvislowerback", C_SPINE},
    {"lowerbacktorso", C_SPINE},
    {"neck", C_NECK}, {"lowerneck", C_NECK}, {"upperneck", C_NECK}, {"torsohead", C_NECK | C_HEAD},
    {"head", C_HEAD}, {"headtop", C_HEAD}, {"skull", C_HEAD},
};

/* Cores of joints with a side. */
static const struct synonym sided[] = {
    {"collar", C_CLAV}, {"clavicle", C_CLAV}, {"torsoclavicle", C_CLAV}, {"scapula", C_CLAV},
    {"shoulder", C_CLAV | C_UPARM},
    {"arm", C_UPARM}, {"uparm", C_UPARM}, {"upperarm", C_UPARM}, {"humerus", C_UPARM},
    {"forearm", C_FOREARM}, {"lowarm", C_FOREARM}, {"lowerarm", C_FOREARM}, {"elbow", C_FOREARM},
    {"radius", C_FOREARM}, {"ulna", C_FOREARM},
    {"hand", C_HAND}, {"wrist", C_HAND},
    {"upleg", C_THIGH}, {"thigh", C_THIGH}, {"hip", C_THIGH}, {"femur", C_THIGH},
    {"upperleg", C_THIGH},
    {"leg", C_SHIN}, {"lowleg", C_SHIN}, {"lowerleg", C_SHIN}, {"knee", C_SHIN},
    {"shin", C_SHIN}, {"calf", C_SHIN}, {"tibia", C_SHIN},
    {"foot", C_FOOT}, {"ankle", C_FOOT},
    {"toe", C_TOE}, {"toes", C_TOE}, {"toebase", C_TOE}, {"ball", C_TOE},
};

static const char *const role_names[RTG_ROLE_COUNT] = {
    "pelvis", "spine", "chest_base", "chest", "neck", "head",
    "left_clavicle", "left_upper_arm", "left_forearm", "left_hand",
    "left_thigh", "left_shin", "left_foot", "left_toe",
    "right_clavicle", "right_upper_arm", "right_forearm", "right_hand",
    "right_thigh", "right_shin", "right_foot", "right_toe",
};

const char *rtg_skeleton_role_name(int role)
{
    return role >= 0 && role < RTG_ROLE_COUNT ? role_names[role] : "?";
}

static int is_lr(char c) { return c == 'L' || c == 'l' || c == 'R' || c == 'r'; }
static int lr_side(char c) { return c == 'L' || c == 'l' ? 1 : 2; }
static int is_sep(char c) { return c == '_' || c == ' ' || c == '.' || c == '-'; }

int rtg_skeleton_split_name(const char *name, char *core, size_t cap)
{
    const char *s = name, *c;
    char buf[128];
    size_t n, start = 0, end, k = 0;
    int side = 0;
    if ((c = strrchr(s, ':')) != NULL) s = c + 1;
    if ((c = strrchr(s, '|')) != NULL) s = c + 1;
    /* 3ds Max biped: "Bip01 L Thigh", "Bip001_R_Foot". */
    if (strncasecmp(s, "bip", 3) == 0 && isdigit((unsigned char)s[3])) {
        const char *p = s + 3;
        while (isdigit((unsigned char)*p)) p++;
        if (is_sep(*p)) s = p + 1;
    }
    n = strlen(s);
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    end = n;
    if (n > 4 && strncasecmp(buf, "left", 4) == 0) {
        side = 1, start = 4;
    } else if (n > 5 && strncasecmp(buf, "right", 5) == 0) {
        side = 2, start = 5;
    } else if (n > 4 && strcasecmp(buf + n - 4, "left") == 0) {
        side = 1, end = n - 4;
    } else if (n > 5 && strcasecmp(buf + n - 5, "right") == 0) {
        side = 2, end = n - 5;
    } else if (n >= 3 && is_lr(buf[0]) && is_sep(buf[1])) {
        side = lr_side(buf[0]), start = 2;          /* L_Hip, l_hip, "L Thigh" */
    } else if (n >= 2 && is_lr(buf[0]) && isupper((unsigned char)buf[1])) {
        side = lr_side(buf[0]), start = 1;          /* LHipJoint, lHip, rTorso_Clavicle */
    } else if (n >= 3 && is_sep(buf[n - 2]) && is_lr(buf[n - 1])) {
        side = lr_side(buf[n - 1]), end = n - 2;    /* thigh.L, calf_l, "Hand R" */
    }
    if (cap == 0) return side;
    for (size_t i = start; i < end && k + 1 < cap; i++)
        if (isalnum((unsigned char)buf[i])) core[k++] = (char)tolower((unsigned char)buf[i]);
    core[k] = 0;
    for (int pass = 0; pass < 2; pass++) {
        while (k > 0 && isdigit((unsigned char)core[k - 1])) core[--k] = 0;
        if (k > 5 && strcmp(core + k - 5, "joint") == 0) core[k -= 5] = 0;
        else if (k > 3 && strcmp(core + k - 3, "jnt") == 0) core[k -= 3] = 0;
    }
    return side;
}

static int classify(int side, const char *core)
{
    const struct synonym *t = side ? sided : unsided;
    size_t n = side ? sizeof sided / sizeof sided[0] : sizeof unsided / sizeof unsided[0];
    int cls = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].core, core) == 0) cls |= t[i].cls;
    return cls;
}

/* ---- the tree ---- */

struct tree {
    const struct kin_clip *clip;
    int n, n_joints;  /* entries (joints + End Sites), joints */
    int *side, *cls, *depth;
    double *pos;      /* first frame (or rest pose), file units */
    double tol;       /* coincidence tolerance, file units */
};

static void tree_free(struct tree *t)
{
    free(t->side);
    free(t->cls);
    free(t->depth);
    free(t->pos);
}

static int parent(const struct tree *t, int j) { return j >= 0 ? t->clip->joints[j].parent : -1; }

static int tree_init(struct tree *t, const struct kin_clip *c)
{
    memset(t, 0, sizeof *t);
    t->clip = c;
    t->n_joints = c->n_joints;
    t->n = c->n_joints + c->n_end_sites;
    size_t n = (size_t)(t->n > 0 ? t->n : 1);
    t->side = calloc(n, sizeof *t->side);
    t->cls = calloc(n, sizeof *t->cls);
    t->depth = calloc(n, sizeof *t->depth);
    t->pos = calloc(n * 3, sizeof *t->pos);
    double *rot = malloc(n * 9 * sizeof *rot);
    if (!t->side || !t->cls || !t->depth || !t->pos || !rot) {
        free(rot);
        tree_free(t);
        return -1;
    }
    if (c->n_frames > 0) {
        kin_clip_global(c, 0, NULL, t->pos, rot);
    } else {
        for (int j = 0; j < t->n; j++) {
            int p = c->joints[j].parent;
            for (int i = 0; i < 3; i++) t->pos[3 * j + i] = c->joints[j].offset[i] + (p >= 0 ? t->pos[3 * p + i] : 0);
        }
    }
    free(rot);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int j = 0; j < t->n; j++) {
        char core[64];
        int p = c->joints[j].parent;
        t->depth[j] = p >= 0 ? t->depth[p] + 1 : 0;
        if (j < t->n_joints) {
            t->side[j] = rtg_skeleton_split_name(c->joints[j].name, core, sizeof core);
            t->cls[j] = classify(t->side[j], core);
        }
        for (int i = 0; i < 3; i++) {
            if (t->pos[3 * j + i] < lo[i]) lo[i] = t->pos[3 * j + i];
            if (t->pos[3 * j + i] > hi[i]) hi[i] = t->pos[3 * j + i];
        }
    }
    double d2 = 0;
    for (int i = 0; t->n > 0 && i < 3; i++) d2 += (hi[i] - lo[i]) * (hi[i] - lo[i]);
    t->tol = 1e-3 * sqrt(d2);
    return 0;
}

/* 1 when a is b or an ancestor of b. */
static int is_anc(const struct tree *t, int a, int b)
{
    for (; b >= 0; b = parent(t, b))
        if (a == b) return 1;
    return 0;
}

static int lca(const struct tree *t, int a, int b)
{
    for (; a >= 0; a = parent(t, a))
        if (is_anc(t, a, b)) return a;
    return -1;
}

static int coincide(const struct tree *t, int a, int b)
{
    double d2 = 0;
    for (int i = 0; i < 3; i++) {
        double d = t->pos[3 * a + i] - t->pos[3 * b + i];
        d2 += d * d;
    }
    return sqrt(d2) <= t->tol;
}

/* Cosine of the angle at `at` between the segments to a and to b (first
 * frame); 1 when either is degenerate. */
static double cos_angle(const struct tree *t, int at, int a, int b)
{
    double u[3], v[3], uu = 0, vv = 0, uv = 0;
    for (int i = 0; i < 3; i++) {
        u[i] = t->pos[3 * a + i] - t->pos[3 * at + i];
        v[i] = t->pos[3 * b + i] - t->pos[3 * at + i];
        uu += u[i] * u[i], vv += v[i] * v[i], uv += u[i] * v[i];
    }
    return uu > 0 && vv > 0 ? uv / sqrt(uu * vv) : 1.0;
}

/* The joint of side `side` with a class in `mask` nearest the root (first
 * in file order among equals), not under `excl` (-1: none); -1 if none. */
static int nearest(const struct tree *t, int side, int mask, int excl)
{
    int best = -1;
    for (int j = 0; j < t->n_joints; j++)
        if (t->side[j] == side && (t->cls[j] & mask) && !(excl >= 0 && is_anc(t, excl, j)) &&
            (best < 0 || t->depth[j] < t->depth[best]))
            best = j;
    return best;
}

/* The nearest ancestor of j on the same side with a class in `mask`; else
 * j's parent when it is on that side and has no class in `not_mask`; else -1. */
static int walk_up(const struct tree *t, int j, int mask, int not_mask)
{
    int side = t->side[j], p0 = parent(t, j);
    for (int a = p0; a >= 0 && t->side[a] == side; a = parent(t, a))
        if (t->cls[a] & mask) return a;
    if (p0 >= 0 && t->side[p0] == side && !(t->cls[p0] & not_mask)) return p0;
    return -1;
}

/* The first child of j (a joint with a class in `mask` first, then any
 * joint, then an End Site), stepping over children that coincide with j;
 * -1 if none. */
static int child_of(const struct tree *t, int j, int mask)
{
    for (int depth = 0; j >= 0 && depth < 8; depth++) {
        int pick = -1;
        for (int pass = 0; pass < 3 && pick < 0; pass++)
            for (int c = j + 1; c < t->n && pick < 0; c++) {
                if (parent(t, c) != j) continue;
                if (pass == 0 && c < t->n_joints && (t->cls[c] & mask)) pick = c;
                if (pass == 1 && c < t->n_joints) pick = c;
                if (pass == 2 && c >= t->n_joints) pick = c;
            }
        if (pick < 0 || !coincide(t, pick, j)) return pick;
        j = pick;
    }
    return -1;
}

/* Appends ", text" (or "text") to the message; stops at its capacity. */
static void msg_add(char *msg, size_t cap, const char *text)
{
    size_t used = strlen(msg);
    if (used + 2 < cap) snprintf(msg + used, cap - used, "%s%s", used ? ", " : "", text);
}

static const char *jname(const struct tree *t, int j) { return t->clip->joints[j].name; }

enum rt_status rtg_skeleton_recognize(const struct kin_clip *clip, struct rtg_skeleton_map *m,
                                      struct rt_err *err)
{
    struct tree t;
    char miss[RT_ERR_MSG_MAX / 2] = "", item[RT_QUOTE_BUF + 160];
    static const char *const side_word[2] = {"left", "right"};
    enum rt_status st = RT_OK;
    for (int r = 0; r < RTG_ROLE_COUNT; r++) m->joint[r] = -1;
    if (tree_init(&t, clip)) return rt_err_set(err, RT_ENOMEM, "skeleton", "out of memory");

    int n_sided = 0;
    for (int j = 0; j < t.n_joints; j++) n_sided += t.side[j] != 0;
    if (n_sided == 0) {
        char names[6 * (RT_QUOTE_BUF + 2) + 8] = "";
        for (int j = 0; j < t.n_joints && j < 6; j++) msg_add(names, sizeof names, jname(&t, j));
        st = rt_err_set(err, RT_EINVAL, "skeleton",
                        "cannot map: not a human skeleton, no joint is named Left/Right or L/R "
                        "(%d joints: %s%s)", t.n_joints, names, t.n_joints > 6 ? ", ..." : "");
        goto done;
    }

    /* What is missing, per side: 0 none, else an index into what[]; hint
     * names the joint the search stopped at. */
    static const char *const what[] = {
        "", "leg (looked for Foot/Ankle", "foot (looked for Foot/Ankle under",
        "shin (looked for Leg/Knee/Shin/Calf above", "thigh (looked for UpLeg/Thigh/Hip above",
        "arm (looked for ForeArm/LowArm/Elbow", "upper arm (looked for Arm/UpArm/Shoulder above"};
    int leg_miss[2] = {0, 0}, arm_miss[2] = {0, 0}, leg_hint[2] = {-1, -1}, arm_hint[2] = {-1, -1};
    for (int s = 0; s < 2; s++) {
        int o = s * RTG_ROLE_SIDED, side = s + 1;
        /* Legs: foot, then the shin and thigh above it. */
        int foot = nearest(&t, side, C_FOOT, -1), shin = -1, thigh = -1;
        if (foot < 0) {
            int hint = nearest(&t, side, C_SHIN, -1);
            if (hint < 0) hint = nearest(&t, side, C_THIGH, -1);
            leg_miss[s] = hint >= 0 ? 2 : 1;
            leg_hint[s] = hint;
        } else if ((shin = walk_up(&t, foot, C_SHIN, C_THIGH)) < 0) {
            leg_miss[s] = 3, leg_hint[s] = foot;
        } else if ((thigh = walk_up(&t, shin, C_THIGH, 0)) < 0) {
            leg_miss[s] = 4, leg_hint[s] = shin;
        }
        m->joint[RTG_ROLE_L_FOOT + o] = foot;
        m->joint[RTG_ROLE_L_SHIN + o] = shin;
        m->joint[RTG_ROLE_L_THIGH + o] = thigh;
        if (foot >= 0 && shin >= 0) {
            /* A toe points forward from the ankle: an End Site that carries
             * on along the shin (Biovision's "LeftFoot { End Site }" points
             * straight down) would make the foot frame degenerate. */
            int toe = child_of(&t, foot, C_TOE);
            if (toe >= 0 && fabs(cos_angle(&t, foot, toe, shin)) > 0.8) toe = -1;
            m->joint[RTG_ROLE_L_TOE + o] = toe;
        }

        /* Arms: the hand (or, without one, the forearm) nearest the root. */
        int hand = nearest(&t, side, C_HAND, thigh), fore = -1, upper = -1;
        if (hand >= 0) {
            fore = walk_up(&t, hand, C_FOREARM, C_UPARM | C_CLAV);
        } else {
            fore = nearest(&t, side, C_FOREARM, thigh);
            if (fore >= 0) hand = child_of(&t, fore, C_HAND);
        }
        if (fore < 0) {
            arm_miss[s] = 5;
        } else if ((upper = walk_up(&t, fore, C_UPARM, 0)) < 0) {
            arm_miss[s] = 6, arm_hint[s] = fore;
        }
        m->joint[RTG_ROLE_L_HAND + o] = hand;
        m->joint[RTG_ROLE_L_FOREARM + o] = fore;
        m->joint[RTG_ROLE_L_UPPER_ARM + o] = upper;
        if (upper >= 0) {
            int c = parent(&t, upper);
            if (c >= 0 && t.side[c] == side) m->joint[RTG_ROLE_L_CLAVICLE + o] = c;
        }
    }
    for (int limb = 0; limb < 2; limb++) {
        int *mi = limb ? arm_miss : leg_miss, *hi = limb ? arm_hint : leg_hint;
        for (int s = 0; s < 2; s++) {
            char text[RT_QUOTE_BUF + 80];
            if (!mi[s]) continue;
            /* Both sides missing alike without a hint: say it once. */
            int both = s == 0 && mi[1] == mi[0] && hi[0] < 0 && hi[1] < 0;
            snprintf(text, sizeof text, "%s%s%s)", what[mi[s]], hi[s] >= 0 ? " " : "",
                     hi[s] >= 0 ? RT_QUOTE(jname(&t, hi[s])) : "");
            snprintf(item, sizeof item, "no %s %s", both ? "left/right" : side_word[s], text);
            msg_add(miss, sizeof miss, item);
            if (both) break;
        }
    }
    if (miss[0]) {
        st = rt_err_set(err, RT_EINVAL, "skeleton", "cannot map: %s", miss);
        goto done;
    }

    /* Topology: the legs meet at the pelvis, the arms at the chest, and the
     * chest hangs from the pelvis. */
    int thl = m->joint[RTG_ROLE_L_THIGH], thr = m->joint[RTG_ROLE_R_THIGH];
    int ual = m->joint[RTG_ROLE_L_UPPER_ARM], uar = m->joint[RTG_ROLE_R_UPPER_ARM];
    int pelvis = lca(&t, thl, thr), chest = lca(&t, ual, uar);
    if (pelvis < 0 || t.side[pelvis] || is_anc(&t, thl, thr) || is_anc(&t, thr, thl)) {
        st = rt_err_set(err, RT_EINVAL, "skeleton",
                        "cannot map: the thighs %s and %s do not branch from one pelvis",
                        RT_QUOTE(jname(&t, thl)), RT_QUOTE(jname(&t, thr)));
        goto done;
    }
    if (chest < 0 || t.side[chest] || !is_anc(&t, pelvis, chest) || is_anc(&t, ual, uar) ||
        is_anc(&t, uar, ual) || is_anc(&t, thl, chest) || is_anc(&t, thr, chest)) {
        st = rt_err_set(err, RT_EINVAL, "skeleton",
                        "cannot map: the arms %s and %s do not branch from a spine above the pelvis %s",
                        RT_QUOTE(jname(&t, ual)), RT_QUOTE(jname(&t, uar)), RT_QUOTE(jname(&t, pelvis)));
        goto done;
    }
    /* Neck: a child of the chest on neither arm nor leg, preferably named
     * Neck/Head or leading to a Head. */
    int neck = -1, neck_score = -1;
    for (int c = chest + 1; c < t.n; c++) {
        if (parent(&t, c) != chest) continue;
        if (is_anc(&t, c, ual) || is_anc(&t, c, uar) || is_anc(&t, c, thl) || is_anc(&t, c, thr)) continue;
        int score = c < t.n_joints ? 1 : 0;
        if (c < t.n_joints && (t.cls[c] & (C_NECK | C_HEAD))) score = 3;
        for (int d = c + 1; score < 2 && d < t.n_joints; d++)
            if ((t.cls[d] & C_HEAD) && is_anc(&t, c, d)) score = 2;
        if (score > neck_score) neck = c, neck_score = score;
    }
    while (neck >= 0 && coincide(&t, neck, chest)) neck = child_of(&t, neck, C_NECK | C_HEAD);
    m->joint[RTG_ROLE_NECK] = neck;
    for (int d = 0; neck >= 0 && d < t.n_joints; d++)
        if ((t.cls[d] & C_HEAD) && is_anc(&t, neck, d) &&
            (m->joint[RTG_ROLE_HEAD] < 0 || t.depth[d] < t.depth[m->joint[RTG_ROLE_HEAD]]))
            m->joint[RTG_ROLE_HEAD] = d;
    /* Spine: the first joint above the pelvis (towards the chest) that does
     * not coincide with it; chest base: below the chest likewise. */
    int spine = -1;
    for (int a = chest; a >= 0 && a != pelvis; a = parent(&t, a))
        if (!coincide(&t, a, pelvis)) spine = a;
    if (spine < 0) spine = neck;
    int base = chest;
    for (int a = parent(&t, chest); chest != pelvis && a >= 0; a = parent(&t, a)) {
        base = a;
        if (a == pelvis || !coincide(&t, a, chest)) break;
    }
    if (spine < 0 || (base == chest && neck < 0)) {
        st = rt_err_set(err, RT_EINVAL, "skeleton",
                        "cannot map: no spine between the pelvis %s and the arms (looked for Spine/Chest/Neck)",
                        RT_QUOTE(jname(&t, pelvis)));
        goto done;
    }
    m->joint[RTG_ROLE_PELVIS] = pelvis;
    m->joint[RTG_ROLE_CHEST] = chest;
    m->joint[RTG_ROLE_SPINE] = spine;
    m->joint[RTG_ROLE_CHEST_BASE] = base;
done:
    if (st != RT_OK)
        for (int r = 0; r < RTG_ROLE_COUNT; r++) m->joint[r] = -1;
    tree_free(&t);
    return st;
}

/* ---- the template ---- */

/* Roles of a template's links, derived from its structure: links[0] is the
 * pelvis; each foot, its parent (shin) and grandparent (thigh); the rigid
 * child of the root that other links hang from is the chest; its children
 * are upper arms (side from their joint names, else the robot link's),
 * their children forearms, theirs hands. Returns 0, or -1 when a link has
 * no role (the template is not one of the humanoid kind). */
/* The left-side role of a sided role; an unsided role itself. */
static int role_kind(int r) { return r >= RTG_ROLE_R_CLAVICLE ? r - RTG_ROLE_SIDED : r; }

static int template_roles(const struct rtg_profile *p, int *lrole)
{
    int chest = -1;
    for (int k = 0; k < p->n_links; k++) lrole[k] = -1;
    lrole[0] = RTG_ROLE_PELVIS;
    for (int s = 0; s < 2; s++) {
        int f = p->feet[s].link, o = s * RTG_ROLE_SIDED;
        if (f <= 0) return -1;
        int sh = p->links[f].parent, th = sh > 0 ? p->links[sh].parent : -1;
        if (sh <= 0 || th <= 0) return -1;
        lrole[f] = RTG_ROLE_L_FOOT + o;
        lrole[sh] = RTG_ROLE_L_SHIN + o;
        lrole[th] = RTG_ROLE_L_THIGH + o;
    }
    for (int k = 1; k < p->n_links && chest < 0; k++) {
        if (lrole[k] >= 0 || p->links[k].parent != 0) continue;
        for (int c = k + 1; c < p->n_links; c++)
            if (p->links[c].parent == k) chest = k;
    }
    if (chest < 0) return -1;
    lrole[chest] = RTG_ROLE_CHEST;
    for (int k = 1; k < p->n_links; k++) {
        int pk = p->links[k].parent, step = -1;
        if (lrole[k] >= 0) continue;
        if (pk == chest) step = 0;
        else if (pk > 0 && role_kind(lrole[pk]) == RTG_ROLE_L_UPPER_ARM) step = 1;
        else if (pk > 0 && role_kind(lrole[pk]) == RTG_ROLE_L_FOREARM) step = 2;
        if (step < 0) return -1;
        char core[64];
        int side = rtg_skeleton_split_name(p->links[k].joint, core, sizeof core);
        if (!side) side = strncmp(p->links[k].link, "left", 4) == 0 ? 1 : strncmp(p->links[k].link, "right", 5) == 0 ? 2 : 0;
        if (!side) return -1;
        lrole[k] = RTG_ROLE_L_UPPER_ARM + step + (side - 1) * RTG_ROLE_SIDED;
    }
    return 0;
}

/* Role of a name inside link k's frame (end e: 0 from, 1 to). */
static int frame_role(const struct rtg_profile *p, const int *lrole, int k, int e, const char *name)
{
    for (int m = 0; m < p->n_links; m++)
        if (strcmp(p->links[m].joint, name) == 0) return lrole[m];
    for (int s = 0; s < 2; s++)
        if (p->feet[s].toe && strcmp(p->feet[s].toe, name) == 0) return RTG_ROLE_L_TOE + s * RTG_ROLE_SIDED;
    if (lrole[k] == RTG_ROLE_PELVIS) return RTG_ROLE_SPINE;
    if (lrole[k] == RTG_ROLE_CHEST) return e == 0 ? RTG_ROLE_CHEST_BASE : RTG_ROLE_NECK;
    return -1;
}

/* 1 when the clip has joint `name` (exactly or after a "namespace:"). */
static int clip_has(const struct kin_clip *c, const char *name)
{
    size_t n = strlen(name);
    for (int j = 0; j < c->n_joints + c->n_end_sites; j++) {
        const char *nm = c->joints[j].name, *col = strrchr(nm, ':');
        if (strcmp(nm, name) == 0 || (col && strlen(col + 1) == n && strcmp(col + 1, name) == 0)) return 1;
    }
    return 0;
}

/* How many of the template's joint names the clip has. */
static int template_score(const struct rtg_profile *p, const struct kin_clip *c)
{
    int score = 0;
    for (int k = 0; k < p->n_links; k++) {
        score += clip_has(c, p->links[k].joint);
        for (int a = 0; p->links[k].frame.axis[0] && a < 2; a++)
            score += clip_has(c, p->links[k].frame.from[a]) + clip_has(c, p->links[k].frame.to[a]);
    }
    for (int s = 0; s < 2; s++) score += p->feet[s].toe ? clip_has(c, p->feet[s].toe) : 0;
    return score;
}

/* Replaces *slot with a copy of `name`; -1 when out of memory. */
static int set_name(char **slot, const char *name)
{
    char *d = strdup(name);
    if (!d) return -1;
    free(*slot);
    *slot = d;
    return 0;
}

/* Removes leaf link k, renumbering parents and feet. */
static void drop_link(struct rtg_profile *p, int k)
{
    struct rtg_profile_link *l = &p->links[k];
    free(l->joint);
    free(l->link);
    for (int a = 0; a < 2; a++) {
        free(l->frame.from[a]);
        free(l->frame.to[a]);
    }
    memmove(&p->links[k], &p->links[k + 1], (size_t)(p->n_links - k - 1) * sizeof *l);
    p->n_links--;
    for (int m = 0; m < p->n_links; m++)
        if (p->links[m].parent > k) p->links[m].parent--;
    for (int s = 0; s < 2; s++)
        if (p->feet[s].link > k) p->feet[s].link--;
}

/* The robot role (roles.h) that plays skeleton role r in a template. */
static int robot_role_of(int r)
{
    int side = r >= RTG_ROLE_R_CLAVICLE ? 1 : 0, k = role_kind(r), o = side * RTG_RROLE_SIDED;
    switch (k) {
    case RTG_ROLE_PELVIS: return RTG_RROLE_PELVIS;
    case RTG_ROLE_CHEST: return RTG_RROLE_TORSO;
    case RTG_ROLE_L_THIGH: return RTG_RROLE_L_HIP + o;
    case RTG_ROLE_L_SHIN: return RTG_RROLE_L_KNEE + o;
    case RTG_ROLE_L_FOOT: return RTG_RROLE_L_FOOT + o;
    case RTG_ROLE_L_UPPER_ARM: return RTG_RROLE_L_SHOULDER + o;
    case RTG_ROLE_L_FOREARM: return RTG_RROLE_L_ELBOW + o;
    case RTG_ROLE_L_HAND: return RTG_RROLE_L_HAND + o;
    default: return -1;
    }
}

/* The bundled robot whose templates suit a robot of these roles: H1's
 * (one-joint ankles, feet tracked loosely) when both ankles have a single
 * joint below the knee, else G1's. */
static const char *template_family(const struct kin_robot *robot, const struct rtg_robot_roles *rr)
{
    int one = 1;
    for (int s = 0; s < 2; s++) {
        int o = s * RTG_RROLE_SIDED, n = 0, knee = rr->link[RTG_RROLE_L_KNEE + o];
        for (int a = rr->link[RTG_RROLE_L_FOOT + o]; a >= 0 && a != knee; a = robot->links[a].parent) {
            int j = robot->links[a].joint;
            n += j >= 0 && robot->joints[j].type != KIN_JOINT_FIXED;
        }
        one &= n == 1;
    }
    return one ? "h1" : "g1";
}

enum rt_status rtg_skeleton_auto_profile(const struct kin_clip *clip, const struct kin_robot *robot,
                                         struct rtg_profile **out, struct rt_err *err)
{
    return rtg_skeleton_auto_profile_roles(clip, robot, NULL, out, err);
}

enum rt_status rtg_skeleton_auto_profile_roles(const struct kin_clip *clip, const struct kin_robot *robot,
                                               const struct rtg_robot_roles *roles,
                                               struct rtg_profile **out, struct rt_err *err)
{
    struct rtg_skeleton_map m;
    struct rtg_robot_roles rr;
    struct rtg_profile *p = NULL;
    const char *best = NULL, *rname;
    int best_score = -1, lrole[RTG_PROFILE_MAX_LINKS], by_roles = roles != NULL;
    char label[RTG_PROFILE_MAX_NAME];
    enum rt_status st;
    *out = NULL;
    if ((st = rtg_skeleton_recognize(clip, &m, err)) != RT_OK) return st;

    rname = rtg_profile_robot_label(robot->name);
    for (const char *const *b = rtg_profile_bundled(); !by_roles && *b; b++) {
        const struct rtg_profile *t = rtg_profile_bundled_get(*b);
        int ok = 1;
        if (!t) continue;
        ok = t->source == RTG_SOURCE_BVH && rtg_profile_fits_robot(t->robot, rname) && template_roles(t, lrole) == 0;
        for (int k = 0; ok && k < t->n_links; k++) ok = kin_robot_link_index(robot, t->links[k].link) >= 0;
        int score = ok ? template_score(t, clip) : -1;
        if (ok && score > best_score) best_score = score, best = *b;
    }
    if (!best) {
        /* No bundled profile targets the robot: its roles from its tree
         * (or the caller's), onto the closest bundled robot's template. */
        if (roles) {
            rr = *roles;
            if ((st = rtg_robot_roles_check(robot, &rr, err)) != RT_OK) return st;
        } else if ((st = rtg_robot_roles(robot, &rr, err)) != RT_OK) {
            return st;
        }
        by_roles = 1;
        const char *family = template_family(robot, &rr);
        for (const char *const *b = rtg_profile_bundled(); *b; b++) {
            const struct rtg_profile *t = rtg_profile_bundled_get(*b);
            if (!t || t->source != RTG_SOURCE_BVH || !rtg_profile_fits_robot(t->robot, family) ||
                template_roles(t, lrole) != 0)
                continue;
            int score = template_score(t, clip);
            if (score > best_score) best_score = score, best = *b;
        }
        if (!best)
            return rt_err_set(err, RT_EINVAL, "profile",
                              "no bundled profile targets robot '%s': give a profile", RT_QUOTE(robot->name));
    }
    if ((st = rtg_profile_load(best, &p, err)) != RT_OK) return st;
    template_roles(p, lrole);
    if (by_roles) {
        /* The robot's role links replace the template's; a template link
         * whose role the robot lacks (a hand) is dropped with its
         * children. */
        for (int k = 0; k < p->n_links; k++) {
            int q = robot_role_of(lrole[k]), link = q >= 0 ? rr.link[q] : -1;
            if (link >= 0 && set_name(&p->links[k].link, robot->links[link].name)) goto oom;
        }
        for (int k = p->n_links - 1; k > 0; k--) {
            int q = robot_role_of(lrole[k]);
            if (q < 0 || rr.link[q] >= 0) continue;
            int leaf = 1;
            for (int c = k + 1; c < p->n_links; c++) leaf &= p->links[c].parent != k;
            if (!leaf || p->feet[0].link == k || p->feet[1].link == k) {
                st = rt_err_set(err, RT_EINVAL, "robot", "cannot map robot '%s': no %s", RT_QUOTE(robot->name),
                                rtg_robot_role_name(q));
                goto fail;
            }
            drop_link(p, k);
            memmove(&lrole[k], &lrole[k + 1], (size_t)(p->n_links - k) * sizeof lrole[0]);
        }
        if (set_name(&p->robot, robot->name)) goto oom;
    }

    /* Substitute the frames' names first: they are looked up by the
     * template's own joint names, which the links' substitution replaces. */
    for (int k = 0; k < p->n_links; k++) {
        struct rtg_profile_frame *fr = &p->links[k].frame;
        for (int a = 0; fr->axis[0] && a < 2; a++)
            for (int e = 0; e < 2; e++) {
                char **slot = e ? &fr->to[a] : &fr->from[a];
                int r = frame_role(p, lrole, k, e, *slot);
                int j = r >= 0 ? m.joint[r] : -1;
                if (r == RTG_ROLE_NECK && j < 0) j = m.joint[RTG_ROLE_CHEST];
                if (r < 0 || (j < 0 && role_kind(r) != RTG_ROLE_L_TOE)) {
                    st = rt_err_set(err, RT_EINVAL, "profile", "template '%s' links[%d].frame has no role", best, k);
                    goto fail;
                }
                if (j < 0) continue; /* a missing toe: the foot's frame goes below */
                if (set_name(slot, clip->joints[j].name)) goto oom;
            }
    }
    for (int s = 0; s < 2; s++) {
        int toe = m.joint[RTG_ROLE_L_TOE + s * RTG_ROLE_SIDED];
        int f = p->feet[s].link;
        if (toe >= 0) {
            if (set_name(&p->feet[s].toe, clip->joints[toe].name)) goto oom;
            continue;
        }
        /* No toe: the foot tracks its position only. */
        free(p->feet[s].toe);
        p->feet[s].toe = NULL;
        struct rtg_profile_link *l = &p->links[f];
        for (int a = 0; a < 2; a++) {
            free(l->frame.from[a]);
            free(l->frame.to[a]);
            l->frame.from[a] = l->frame.to[a] = NULL;
        }
        l->frame.axis[0] = l->frame.axis[1] = 0;
        l->wrot = 0;
        l->ref_contacts = 0;
    }
    for (int k = 0; k < p->n_links; k++)
        if (m.joint[lrole[k]] >= 0 && set_name(&p->links[k].joint, clip->joints[m.joint[lrole[k]]].name))
            goto oom;
    /* Hands the clip lacks are dropped (they are leaves). */
    for (int k = p->n_links - 1; k > 0; k--)
        if (m.joint[lrole[k]] < 0) {
            drop_link(p, k);
            memmove(&lrole[k], &lrole[k + 1], (size_t)(p->n_links - k) * sizeof lrole[0]);
        }
    for (int i = 0; i < p->n_match; i++) free(p->match[i]);
    free(p->match);
    p->match = NULL;
    p->n_match = 0;
    snprintf(label, sizeof label, by_roles ? "auto:roles:%s" : "auto:%s", best);
    if (set_name(&p->name, label) || set_name(&p->skeleton, "auto")) goto oom;
    *out = p;
    return RT_OK;
oom:
    st = rt_err_set(err, RT_ENOMEM, "profile", "out of memory");
fail:
    rtg_profile_free(p);
    return st;
}
