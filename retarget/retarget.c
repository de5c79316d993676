/* retarget.c -- turning a source motion into per-frame robot link targets.
 *
 * A source is a set of named points moving over frames, in metres, z up:
 * the joints of a BVH clip (after unit and up-axis conversion) or the links
 * of another robot (forward kinematics of its trajectory). A profile maps
 * some of those points to robot links. The method (docs/profiles.md "How
 * targets are built"), in order:
 *
 *  1. Units and up axis: declared in the profile or settled from the
 *     skeleton (source_units(): never refused for an unknown unit).
 *  2. Contacts: a foot is in contact while its ankle is within
 *     contact_height of that ankle's ground level (the clip's 5th percentile
 *     of its height) and moves horizontally slower than contact_speed;
 *     contacts and gaps shorter than min_contact are dropped or filled.
 *  3. Scale: robot leg length over source leg length (the mapped
 *     "direction"/"scaled" segments from each foot up to the root, robot
 *     lengths at its zero pose, source lengths at frame 0), unless fixed.
 *  4. Orientation targets: a frame built from source joint positions (two
 *     axes named by joint pairs), times an offset. The frames are written in
 *     the robot's convention (x forward, y left, z up for an upright body),
 *     so the derived ("auto") offset is the link's zero-pose rotation; for
 *     feet ("reference": "contacts") it is averaged over the contact frames
 *     with their heading removed, so that a flat source foot is a flat robot
 *     foot whatever angle the source's ankle-to-toe bone makes with the floor.
 *     Joint rotations of the source are never used: no rest pose is trusted
 *     (Rokoko's is not upright).
 *  5. Positions: the root at scale x source root; a "direction" link at its
 *     parent's target plus the robot's segment length along the source bone;
 *     a "rigid" link at its parent's target plus the parent's target rotation
 *     applied to the robot's zero-pose offset; a "scaled" link at its
 *     parent's target plus scale x the source offset. Robot-length segments
 *     make every target reachable, which is what keeps position errors small.
 *  6. Ground: the clip is moved so that its first root position is above the
 *     origin and feet in contact have their sole on z = 0 (the median contact
 *     height of the foot targets becomes sole_offset); a frame whose foot
 *     target would still be below sole_offset is lifted whole (every target
 *     of that frame), so no foot target goes below the ground.
 *  7. Anchors (SOLVER.md "Foot contact"): over each contact interval the foot
 *     link's position target is the interval's mean horizontal position at
 *     sole height, with weight contact_weight, and its orientation target is
 *     made level (heading kept); the swing targets within
 *     RTG_CONTACT_BLEND_S of an interval leave and reach its anchor smoothly
 *     (blend_swing), so that the foot's target has no jump at the
 *     interval's ends for the smoothness terms to spread into the contact.
 *     Where both feet are down, two anchors whose foot capsules would come
 *     closer than RTG_ANCHOR_CLEARANCE move apart first (anchors_apart). */
#include "retarget.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/mem.h"
#include "../kinematics/capsule.h"
#include "../kinematics/rot.h"
#include "collide.h"
#include "roles.h"
#include "skeleton.h"

/* Metres a swinging foot target keeps above the ground (docs/profiles.md). */
#define RTG_SWING_CLEARANCE 0.01
/* Metres an anchored (contact) foot target sits above the ground: the
 * smoothness terms round off the landing, and this keeps that above z = 0. */
#define RTG_CONTACT_CLEARANCE 0.003
/* Seconds over which a swing foot's target leaves or reaches its contact
 * anchor (blend_swing). */
#define RTG_CONTACT_BLEND_S 0.1

/* ---- small vector helpers ---- */

static void v_sub(const double *a, const double *b, double *o)
{
    for (int i = 0; i < 3; i++) o[i] = a[i] - b[i];
}
static double v_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double v_norm(const double *a) { return sqrt(v_dot(a, a)); }
/* o = a^T * b */
static void m_tmul(const double *a, const double *b, double *o)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) o[3 * r + c] = a[r] * b[c] + a[3 + r] * b[3 + c] + a[6 + r] * b[6 + c];
}
static void m_tvec(const double *m, const double *v, double *o)
{
    for (int r = 0; r < 3; r++) o[r] = m[r] * v[0] + m[3 + r] * v[1] + m[6 + r] * v[2];
}
static void m_rotz(double yaw, double *o)
{
    double c = cos(yaw), s = sin(yaw);
    o[0] = c; o[1] = -s; o[2] = 0;
    o[3] = s; o[4] = c;  o[5] = 0;
    o[6] = 0; o[7] = 0;  o[8] = 1;
}
/* Heading of rotation m: the angle of its x axis projected on the ground. */
static double m_yaw(const double *m) { return atan2(m[3], m[0]); }

/* o = the rotation a fraction s of the way from a to b (slerp of their
 * quaternions along the shorter arc); o may alias b. */
static void m_slerp(const double *a, const double *b, double s, double *o)
{
    double qa[4], qb[4], q[4], d = 0, wa, wb;
    kin_mat_to_quat(a, qa);
    kin_mat_to_quat(b, qb);
    for (int i = 0; i < 4; i++) d += qa[i] * qb[i];
    if (d < 0) {
        d = -d;
        for (int i = 0; i < 4; i++) qb[i] = -qb[i];
    }
    if (d > 0.9995) {
        wa = 1.0 - s;
        wb = s;
    } else {
        double th = acos(d), sn = sin(th);
        wa = sin((1.0 - s) * th) / sn;
        wb = sin(s * th) / sn;
    }
    for (int i = 0; i < 4; i++) q[i] = wa * qa[i] + wb * qb[i];
    kin_quat_to_mat(q, o);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of v[0..n) (sorted copy in `tmp`). */
static double quantile(const double *v, int n, double q, double *tmp)
{
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    int i = (int)floor(q * (n - 1) + 0.5);
    if (i < 0) i = 0;
    if (i > n - 1) i = n - 1;
    return tmp[i];
}

/* ---- sources ---- */

/* A source motion: n_pts named points over n_frames frames, metres, z up.
 * names[] are borrowed from the clip or robot. */
struct source {
    int n_pts, n_frames;
    double frame_time;
    const char **names;
    double *pos;  /* [n_frames * n_pts * 3] */
    double *rot;  /* [n_frames * n_pts * 9] own rotations, or NULL when unused */
    double *rot0; /* [n_pts * 9] rotations in the rest / zero pose, or NULL */
    struct rtg_source_units units; /* how file units became metres (BVH, joints) */
};

static void source_free(struct source *s)
{
    free(s->names);
    free(s->pos);
    free(s->rot);
    free(s->rot0);
    memset(s, 0, sizeof *s);
}

/* Index of the point called `name`: exact, else a "namespace:name" match. */
static int source_find(const struct source *s, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < s->n_pts; i++)
        if (strcmp(s->names[i], name) == 0) return i;
    for (int i = 0; i < s->n_pts; i++) {
        const char *c = strrchr(s->names[i], ':');
        if (c && strlen(c + 1) == n && strcmp(c + 1, name) == 0) return i;
    }
    return -1;
}

static const double *src_at(const struct source *s, int f, int j)
{
    return s->pos + ((size_t)f * (size_t)s->n_pts + (size_t)j) * 3;
}

static enum rt_status source_alloc(struct source *s, int n_pts, int n_frames, int with_rot,
                                   struct rt_err *err)
{
    size_t n, bytes, rbytes;
    memset(s, 0, sizeof *s);
    if (n_frames < 1)
        return rt_err_set(err, RT_EINVAL, "source", "the source has no frames");
    if (!rt_mul_size((size_t)n_pts, (size_t)n_frames, &n) || !rt_mul_size(n, 3 * sizeof(double), &bytes) ||
        !rt_mul_size(n, 9 * sizeof(double), &rbytes))
        return rt_err_set(err, RT_ELIMIT, "source", "too many frames: %d", n_frames);
    s->names = calloc((size_t)n_pts, sizeof *s->names);
    /* Every frame's points (and frames) once: megabytes for a long clip,
     * on huge pages (base/mem.h). */
    s->pos = rt_alloc_large(bytes, 16, NULL);
    if (with_rot) {
        s->rot = rt_alloc_large(rbytes, 16, NULL);
        s->rot0 = malloc((size_t)n_pts * 9 * sizeof(double));
    }
    if (!s->names || !s->pos || (with_rot && (!s->rot || !s->rot0))) {
        source_free(s);
        return rt_err_set(err, RT_ENOMEM, "source", "out of memory for %d frames", n_frames);
    }
    s->n_pts = n_pts;
    s->n_frames = n_frames;
    return RT_OK;
}

/* A leading calibration pose: CMU's cgspeed BVHs start with one T-pose
 * frame, and the next frame has the arms down, a step of 77-132 m/s at 120
 * fps. No limb moves that fast (the fastest step of any shared clip after
 * its first frames is 20 m/s, a marker glitch). A trajectory cannot follow
 * such a jump, and smoothing it spreads a 0.1-0.3 m hand error over the
 * first frames. So within the first RTG_CALIB_WINDOW_S seconds, frames
 * before the last step faster than RTG_CALIB_SPEED take the pose of the
 * frame after it (docs/profiles.md "How targets are built", step 1). */
#define RTG_CALIB_SPEED 30.0   /* m/s */
#define RTG_CALIB_WINDOW_S 0.25

static void hold_calibration_frames(struct source *s)
{
    double dt = s->frame_time > 0 ? s->frame_time : 1.0 / 30.0;
    int first = 0;
    for (int f = 1; f < s->n_frames && (f - 1) * dt <= RTG_CALIB_WINDOW_S; f++) {
        double vmax = 0;
        for (int j = 0; j < s->n_pts; j++) {
            double d[3];
            v_sub(src_at(s, f, j), src_at(s, f - 1, j), d);
            if (v_norm(d) / dt > vmax) vmax = v_norm(d) / dt;
        }
        if (vmax > RTG_CALIB_SPEED) first = f;
    }
    size_t np = (size_t)s->n_pts;
    for (int f = 0; f < first; f++) {
        memcpy(s->pos + (size_t)f * np * 3, s->pos + (size_t)first * np * 3, np * 3 * sizeof(double));
        if (s->rot) memcpy(s->rot + (size_t)f * np * 9, s->rot + (size_t)first * np * 9, np * 9 * sizeof(double));
    }
}

/* ---- units and up axis (docs/profiles.md "Units and up axis") ---- */

/* Frames sampled, evenly over the clip, for the up axis and the size. */
#define RTG_UNITS_SAMPLES 1024
/* A head above the feet along an axis by at least this cosine, in the median
 * frame, makes that axis up. */
#define RTG_UP_MIN_COS 0.5
/* The height, in metres, that every source is taken to have (its median
 * height over the sampled frames) unless the profile or the job gives its
 * units: the median of the shared human clips' own (1.30-1.76 m in their
 * recognized units). Only the metre-valued thresholds of the profile
 * (contact_height_m, contact_speed_m_s, the calibration hold) depend on
 * it; the scale onto the robot is the ratio of leg lengths whatever the
 * unit. Taking every clip's size from its body, not from its unit, makes a
 * clip in any unit retarget to the same result. */
#define RTG_NOMINAL_HEIGHT_M 1.55

/* Raw positions (file units and axes) of a source's n_pts points in frame
 * f, written to `buf` [n_pts * 3] or returned from the source itself;
 * `rot` is scratch [n_pts * 9]. */
typedef const double *(*raw_frame_fn)(const void *ctx, int f, double *buf, double *rot);

static const double *clip_raw(const void *ctx, int f, double *buf, double *rot)
{
    kin_clip_global(ctx, f, NULL, buf, rot);
    return buf;
}

static const double *joints_raw(const void *ctx, int f, double *buf, double *rot)
{
    const struct kin_joints *jp = ctx;
    (void)buf, (void)rot;
    return jp->pos + (size_t)f * (size_t)jp->n_joints * 3;
}

/* Index of `name` in names[0..n) as source_find() matches, or -1. */
static int name_find(const char *const *names, int n, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    for (int i = 0; i < n; i++) {
        const char *c = strrchr(names[i], ':');
        if (c && strlen(c + 1) == len && strcmp(c + 1, name) == 0) return i;
    }
    return -1;
}

/* The points that are lowest (feet) and highest (head) on a standing body:
 * the skeleton recognizer's feet and head (else neck, else chest) when it
 * recognizes `skel`, else the profile's feet and root (`p` may be NULL).
 * Returns 0 when no pair is known. */
static int body_ends(const struct kin_clip *skel, const struct rtg_profile *p, const char *const *names,
                     int n_pts, int feet[2], int *head)
{
    struct rtg_skeleton_map m;
    feet[0] = feet[1] = *head = -1;
    if (rtg_skeleton_recognize(skel, &m, NULL) == RT_OK) {
        int top = m.joint[RTG_ROLE_HEAD] >= 0 ? m.joint[RTG_ROLE_HEAD]
                  : m.joint[RTG_ROLE_NECK] >= 0 ? m.joint[RTG_ROLE_NECK] : m.joint[RTG_ROLE_CHEST];
        int lf = m.joint[RTG_ROLE_L_FOOT], rf = m.joint[RTG_ROLE_R_FOOT];
        if (top >= 0 && lf >= 0 && rf >= 0) {
            *head = name_find(names, n_pts, skel->joints[top].name);
            feet[0] = name_find(names, n_pts, skel->joints[lf].name);
            feet[1] = name_find(names, n_pts, skel->joints[rf].name);
        }
    }
    if ((*head < 0 || feet[0] < 0 || feet[1] < 0) && p && p->n_links > 0 && p->feet[0].link > 0 &&
        p->feet[1].link > 0) {
        *head = name_find(names, n_pts, p->links[0].joint);
        feet[0] = name_find(names, n_pts, p->links[p->feet[0].link].joint);
        feet[1] = name_find(names, n_pts, p->links[p->feet[1].link].joint);
    }
    return *head >= 0 && feet[0] >= 0 && feet[1] >= 0 && *head != feet[0] && *head != feet[1];
}

/* The median of v[0..n) (n >= 1), reordering v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Settles units and up axis (the rules: docs/profiles.md "Units and up
 * axis"): the profile's when given; else the up axis from the body over
 * the whole clip (head above feet in the median sampled frame), falling
 * back to the axis of the larger frame-0 span; the scale that gives the
 * median sampled span along up RTG_NOMINAL_HEIGHT_M, in any unit (the
 * unit's name from the frame-0 span when kin_units_from_height() knows
 * it, else guessed: reported only). */
static enum rt_status source_units(const struct kin_clip *skel, const struct rtg_profile *p, int n_frames,
                                   int n_pts, const char *const *names, raw_frame_fn raw, const void *ctx,
                                   struct rtg_source_units *u, struct rt_err *err)
{
    double *buf = NULL, *rot = NULL, *vy = NULL, *vz = NULL, *sy = NULL, *sz = NULL;
    int feet[2], head, ns = n_frames < RTG_UNITS_SAMPLES ? n_frames : RTG_UNITS_SAMPLES, nv = 0;
    enum rt_status st = RT_OK;
    memset(u, 0, sizeof *u);
    u->scale = p ? p->units : 0;
    u->up = p ? p->up : 0;
    if (u->scale > 0 && u->up) return RT_OK;
    if (n_frames < 1 || n_pts < 1)
        return rt_err_set(err, RT_EINVAL, "profile:source.units", "the source has no frames to measure");
    /* One block: a frame's points and rotations, then four samples each. */
    buf = malloc(((size_t)n_pts * 12 + (size_t)ns * 4) * sizeof *buf);
    if (!buf) return rt_err_set(err, RT_ENOMEM, "units", "out of memory");
    rot = buf + (size_t)n_pts * 3;
    vy = rot + (size_t)n_pts * 9;
    vz = vy + ns;
    sy = vz + ns;
    sz = sy + ns;
    int ends = body_ends(skel, p, names, n_pts, feet, &head);
    double span0[3] = {0, 0, 0};
    for (int i = 0; i < ns; i++) {
        int f = ns > 1 ? (int)((long long)i * (n_frames - 1) / (ns - 1)) : 0;
        const double *q = raw(ctx, f, buf, rot);
        double lo[3], hi[3];
        for (int a = 0; a < 3; a++) lo[a] = hi[a] = q[a];
        for (int j = 1; j < n_pts; j++)
            for (int a = 0; a < 3; a++) {
                if (q[3 * j + a] < lo[a]) lo[a] = q[3 * j + a];
                if (q[3 * j + a] > hi[a]) hi[a] = q[3 * j + a];
            }
        if (i == 0)
            for (int a = 0; a < 3; a++) span0[a] = hi[a] - lo[a];
        sy[i] = hi[1] - lo[1];
        sz[i] = hi[2] - lo[2];
        if (!ends) continue;
        double d[3];
        for (int a = 0; a < 3; a++) d[a] = q[3 * head + a] - 0.5 * (q[3 * feet[0] + a] + q[3 * feet[1] + a]);
        double len = v_norm(d);
        if (!(len > 0)) continue;
        vy[nv] = d[1] / len;
        vz[nv] = d[2] / len;
        nv++;
    }
    if (!u->up && nv > 0) {
        double my = median(vy, nv), mz = median(vz, nv);
        if (my >= RTG_UP_MIN_COS && my >= mz) u->up = 'y', u->up_from_body = 1;
        else if (mz >= RTG_UP_MIN_COS) u->up = 'z', u->up_from_body = 1;
    }
    if (!u->up) u->up = span0[1] >= span0[2] ? 'y' : 'z';
    if (!(u->scale > 0)) {
        /* The scale is the body's own (median height RTG_NOMINAL_HEIGHT_M)
         * whatever the unit, so that a clip in any unit gives the same
         * result; a unit the table recognizes is only named. */
        double h0 = u->up == 'y' ? span0[1] : span0[2], known;
        double h = median(u->up == 'y' ? sy : sz, ns);
        if (!(h > 0)) {
            st = rt_err_set(err, RT_EINVAL, "profile:source.units",
                            "the skeleton has no extent along its up axis %c; set source.units", u->up);
            goto done;
        }
        u->unit = kin_units_from_height(h0, &known);
        u->scale = RTG_NOMINAL_HEIGHT_M / h;
        u->guessed = !u->unit;
        u->height_units = h;
    }
done:
    free(buf);
    return st;
}

enum rt_status rtg_source_units_clip(const struct kin_clip *clip, const struct rtg_profile *p,
                                     struct rtg_source_units *u, struct rt_err *err)
{
    int n_all = clip->n_joints + clip->n_end_sites;
    const char **names = malloc((size_t)(n_all > 0 ? n_all : 1) * sizeof *names);
    enum rt_status st;
    if (!names) return rt_err_set(err, RT_ENOMEM, "units", "out of memory");
    for (int j = 0; j < n_all; j++) names[j] = clip->joints[j].name;
    st = source_units(clip, p, clip->n_frames, n_all, names, clip_raw, clip, u, err);
    free(names);
    return st;
}

enum rt_status rtg_source_units_joints(const struct kin_joints *jp, const struct kin_clip *skel,
                                       const struct rtg_profile *p, struct rtg_source_units *u,
                                       struct rt_err *err)
{
    return source_units(skel, p, jp->n_frames, jp->n_joints, (const char *const *)jp->names, joints_raw, jp,
                        u, err);
}

/* The clip's frames' global poses in pieces of RTG_POOL_PIECE frames
 * (rtg_pool_for_idle): each frame is its own, so the pieces give the bits
 * of one loop. */
struct source_pieces {
    const struct kin_clip *clip;
    const struct kin_bvh_convert *conv;
    struct source *s;
    int n_all, n_frames;
    atomic_int failed;
};

static void source_piece(void *ctx, int k)
{
    struct source_pieces *sp = ctx;
    struct source *s = sp->s;
    int f0, f1;
    rtg_pool_piece(k, RTG_POOL_PIECE, sp->n_frames, &f0, &f1);
    double *rot = s->rot ? NULL : malloc((size_t)sp->n_all * 9 * sizeof(double)); /* rotations not kept */
    if (!s->rot && !rot) {
        atomic_store(&sp->failed, 1);
        return;
    }
    for (int f = f0; f < f1; f++) {
        double *fr = s->rot ? s->rot + (size_t)f * (size_t)sp->n_all * 9 : rot;
        kin_clip_global(sp->clip, f, sp->conv, s->pos + (size_t)f * (size_t)sp->n_all * 3, fr);
    }
    free(rot);
}

/* The source of `clip` through `p`: every frame, or with max_frames > 0 at
 * most that many (the job plan's checks need only the first ones); the
 * frames' poses shared out with `pool`'s idle workers (NULL: this thread).
 * Its units are `known`, else measured (rtg_source_units_clip). */
static enum rt_status source_from_clip(struct rtg_pool *pool, const struct kin_clip *clip,
                                       const struct rtg_profile *p, int max_frames,
                                       const struct rtg_source_units *known, struct source *s, struct rt_err *err)
{
    struct kin_bvh_convert conv;
    int n_all = clip->n_joints + clip->n_end_sites;
    enum rt_status st;
    if (clip->n_frames < 1)
        return rt_err_set(err, RT_EINVAL, "clip", "the clip has no frames");
    struct rtg_source_units units;
    if (known) units = *known;
    else if ((st = rtg_source_units_clip(clip, p, &units, err)) != RT_OK) return st;
    conv.scale = units.scale;
    conv.up = units.up;
    int with_rot = 0;
    for (int k = 0; k < p->n_links; k++) with_rot |= p->links[k].frame.source;
    int n_frames = max_frames > 0 && max_frames < clip->n_frames ? max_frames : clip->n_frames;
    if ((st = source_alloc(s, n_all, n_frames, with_rot, err))) return st;
    s->units = units;
    s->frame_time = clip->frame_time;
    for (int j = 0; j < n_all; j++) s->names[j] = clip->joints[j].name;
    struct source_pieces sp = {clip, &conv, s, n_all, n_frames, 0};
    atomic_init(&sp.failed, 0);
    rtg_pool_for_idle(pool, rtg_pool_pieces(n_frames, RTG_POOL_PIECE), source_piece, &sp);
    if (atomic_load(&sp.failed)) {
        source_free(s);
        return rt_err_set(err, RT_ENOMEM, "source", "out of memory");
    }
    hold_calibration_frames(s);
    /* The rest pose has identity rotations (bvh.h), and so has its
     * up-axis conversion A I A^T. */
    for (int j = 0; s->rot0 && j < n_all; j++) {
        double *m = s->rot0 + 9 * j;
        for (int i = 0; i < 9; i++) m[i] = (i % 4 == 0);
    }
    return RT_OK;
}

/* The source of joint positions `jp` through `p`: points only (no
 * rotations: a profile link whose frame is "source" is refused), converted
 * by the profile's units and up axis or those detected on `skel` (jp's
 * frame 0 as a skeleton, kin_joints_skeleton()); every frame, or with
 * max_frames > 0 at most that many. */
static enum rt_status source_from_joints(const struct kin_joints *jp, const struct kin_clip *skel,
                                         const struct rtg_profile *p, double frame_time, int max_frames,
                                         struct source *s, struct rt_err *err)
{
    struct kin_bvh_convert conv;
    enum rt_status st;
    for (int k = 0; k < p->n_links; k++)
        if (p->links[k].frame.source)
            return rt_err_set(err, RT_EINVAL, "profile", "profile '%s': link '%s' takes the source's own rotations "
                              "(frame \"source\"), which joint positions do not have", RT_QUOTE(p->name), RT_QUOTE(p->links[k].link));
    struct rtg_source_units units;
    if ((st = rtg_source_units_joints(jp, skel, p, &units, err)) != RT_OK) return st;
    conv.scale = units.scale;
    conv.up = units.up;
    int n_frames = max_frames > 0 && max_frames < jp->n_frames ? max_frames : jp->n_frames;
    if ((st = source_alloc(s, jp->n_joints, n_frames, 0, err))) return st;
    s->units = units;
    s->frame_time = frame_time;
    for (int j = 0; j < jp->n_joints; j++) s->names[j] = jp->names[j];
    size_t n = (size_t)n_frames * (size_t)jp->n_joints;
    for (size_t i = 0; i < n; i++) {
        const double *q = jp->pos + 3 * i;
        double *o = s->pos + 3 * i;
        /* p = scale A p, A = Rx(+90 deg) for up 'y' (kin_clip_global's). */
        if (conv.up == 'y') o[0] = q[0], o[1] = -q[2], o[2] = q[1];
        else o[0] = q[0], o[1] = q[1], o[2] = q[2];
        for (int a = 0; a < 3; a++) o[a] *= conv.scale;
    }
    hold_calibration_frames(s);
    return RT_OK;
}

static enum rt_status source_from_robot(const struct kin_robot *src, const double *states,
                                        int n_frames, double frame_time, struct source *s,
                                        struct rt_err *err)
{
    double *rot = NULL;
    enum rt_status st;
    int cols = RT_ROOT_COLS + src->n_dof;
    if ((st = source_alloc(s, src->n_links, n_frames, 1, err))) return st;
    s->frame_time = frame_time;
    for (int j = 0; j < src->n_links; j++) s->names[j] = src->links[j].name;
    rot = calloc((size_t)cols + (size_t)src->n_links * 3, sizeof(double));
    if (!rot) {
        source_free(s);
        return rt_err_set(err, RT_ENOMEM, "source", "out of memory");
    }
    kin_fk_frames(src, n_frames, states, (size_t)cols, s->pos, s->rot);
    /* Zero pose: base at the origin, upright, every coordinate 0. */
    rot[6] = 1.0;
    kin_fk(src, rot, rot + cols, s->rot0);
    free(rot);
    return RT_OK;
}

/* ---- profile resolution ---- */

/* Source point indices of everything a profile names. */
struct resolved {
    int joint[RTG_PROFILE_MAX_LINKS];
    int frame_pt[RTG_PROFILE_MAX_LINKS][4]; /* from0 to0 from1 to1 */
    int toe[2];
    int link[RTG_PROFILE_MAX_LINKS];        /* robot link index */
};

/* Appends `name` to the comma-separated list `buf` (capacity `cap`) unless
 * already there; when it does not fit, the list ends in ", ..." once. */
static void list_add(char *buf, size_t cap, const char *name)
{
    size_t n = strlen(name), used = strlen(buf);
    const char *p = buf;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == buf || p[-1] == ' ') && (p[n] == ',' || p[n] == 0)) return;
        p += n;
    }
    if (used >= 5 && strcmp(buf + used - 5, ", ...") == 0) return;
    if (used + 2 + n + 6 <= cap) {
        snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", name);
    } else if (used + 6 <= cap) {
        snprintf(buf + used, cap - used, ", ...");
    }
}

/* Appends to out[] (used bytes so far: *used; never past `limit` bytes)
 * `label` and the names of the comma-separated `list` (list_add()'s form),
 * as many as fit, then " and N more" for the rest. A list that list_add()
 * cut ("..., ...") counts its cut tail as one more. Nothing when the list
 * is empty. */
static void put_names(char *out, size_t *used, size_t limit, const char *label, const char *list)
{
    char item[RTG_PROFILE_MAX_NAME + 8], tail[32];
    int n = 0, put = 0;
    if (!list[0]) return;
    n = 1;
    for (const char *q = list; (q = strstr(q, ", ")) != NULL; q += 2) n++;
    size_t need = strlen(label);
    snprintf(tail, sizeof tail, " and %d more", n);
    if (*used + need + strlen(tail) > limit) return; /* the caller leaves room for this */
    *used += (size_t)snprintf(out + *used, limit + 1 - *used, "%s", label);
    const char *p = list;
    for (int i = 0; i < n; i++) {
        const char *e = strstr(p, ", ");
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > RTG_PROFILE_MAX_NAME) len = RTG_PROFILE_MAX_NAME;
        snprintf(item, sizeof item, "%s%.*s", put ? ", " : "", (int)len, p);
        int rest = n - i - 1;
        if (rest) snprintf(tail, sizeof tail, " and %d more", rest);
        else tail[0] = 0;
        if (strcmp(item + (put ? 2 : 0), "...") && *used + strlen(item) + strlen(tail) <= limit) {
            *used += (size_t)snprintf(out + *used, limit + 1 - *used, "%s", item);
            put++;
        } else {
            break;
        }
        p = e ? e + 2 : p + len;
    }
    if (put < n) {
        snprintf(tail, sizeof tail, put ? " and %d more" : "%d", n - put);
        *used += (size_t)snprintf(out + *used, limit + 1 - *used, "%s", tail);
    }
}

/* The message for a profile that cannot map a source: "'NAME' cannot map
 * this source; missing joints A, B and 3 more; links C", within `cap`
 * bytes (struct rt_err's msg): as many names as fit, the links keeping at
 * least a share of the room when both lists are long. */
static void missing_message(char *out, size_t cap, const char *profile, const char *mj,
                            const char *ml)
{
    size_t used = (size_t)snprintf(out, cap, "'%s' cannot map this source; missing ", RT_QUOTE(profile));
    size_t limit = cap - 1;
    if (used > limit) used = limit;
    /* Room kept for the links: all of them when short, else half of what is left. */
    size_t links_len = ml[0] ? strlen("; links ") + strlen(ml) : 0, left = limit - used;
    size_t keep = links_len < left / 2 ? links_len : (ml[0] ? left / 2 : 0);
    put_names(out, &used, limit - keep, "joints ", mj);
    put_names(out, &used, limit, mj[0] ? "; links " : "links ", ml);
}

/* Resolves the profile's names against the source (and the robot when not
 * NULL); returns the number of missing names and lists them. */
static int resolve(const struct rtg_profile *p, const struct source *s, const struct kin_robot *r,
                   struct resolved *rs, char *missing_joints, size_t cap_j, char *missing_links,
                   size_t cap_l)
{
    int n_missing = 0;
    /* Mapped joints first: they are what a user recognizes. */
    for (int k = 0; k < p->n_links; k++)
        if ((rs->joint[k] = source_find(s, p->links[k].joint)) < 0) {
            list_add(missing_joints, cap_j, p->links[k].joint);
            n_missing++;
        }
    for (int k = 0; k < p->n_links; k++) {
        const struct rtg_profile_link *l = &p->links[k];
        for (int a = 0; a < 4; a++) {
            const char *nm = l->frame.axis[0] ? (a & 1 ? l->frame.to[a / 2] : l->frame.from[a / 2]) : NULL;
            rs->frame_pt[k][a] = nm ? source_find(s, nm) : -1;
            if (nm && rs->frame_pt[k][a] < 0) {
                list_add(missing_joints, cap_j, nm);
                n_missing++;
            }
        }
        if (r) {
            if ((rs->link[k] = kin_robot_link_index(r, l->link)) < 0) {
                list_add(missing_links, cap_l, l->link);
                n_missing++;
            }
        }
    }
    for (int f = 0; f < 2; f++) {
        rs->toe[f] = -1;
        if (p->feet[f].toe && (rs->toe[f] = source_find(s, p->feet[f].toe)) < 0) {
            list_add(missing_joints, cap_j, p->feet[f].toe);
            n_missing++;
        }
    }
    return n_missing;
}

/* A source over a clip's names only (no frames), for detection. */
static int names_only_source(const struct kin_clip *clip, struct source *s)
{
    memset(s, 0, sizeof *s);
    s->n_pts = clip->n_joints + clip->n_end_sites;
    s->names = calloc((size_t)(s->n_pts ? s->n_pts : 1), sizeof *s->names);
    if (!s->names) return -1;
    for (int j = 0; j < s->n_pts; j++) s->names[j] = clip->joints[j].name;
    return 0;
}

/* Scores every bundled BVH profile for `robot_name` (and `robot` when not
 * NULL): best = a profile with nothing missing and the most links; when none
 * fits, `closest` is the one missing the fewest names. With best_p, the
 * best profile as loaded goes there (the caller frees it), NULL if none. */
static enum rt_status detect(const struct kin_clip *clip, const char *robot_name,
                             const struct kin_robot *robot, const char **best,
                             const char **closest, char *miss_j, size_t cap_j, char *miss_l,
                             size_t cap_l, struct rtg_profile **best_p)
{
    struct source s;
    const struct rtg_profile *keep = NULL;
    int best_links = -1, closest_missing = 1 << 30;
    *best = *closest = NULL;
    if (names_only_source(clip, &s)) return RT_ENOMEM;
    for (const char *const *b = rtg_profile_bundled(); *b; b++) {
        const struct rtg_profile *p = rtg_profile_bundled_get(*b);
        struct resolved rs;
        char mj[160] = "", ml[160] = "";
        /* With the robot at hand its links decide; by name, the label does. */
        if (!p || p->source != RTG_SOURCE_BVH || (!robot && !rtg_profile_fits_robot(p->robot, robot_name)))
            continue;
        int miss = resolve(p, &s, robot, &rs, mj, sizeof mj, ml, sizeof ml);
        for (int i = 0; i < p->n_match; i++)
            if (source_find(&s, p->match[i]) < 0) {
                list_add(mj, sizeof mj, p->match[i]);
                miss++;
            }
        /* Ties go to the profile written for this robot. */
        int score = 2 * p->n_links + rtg_profile_fits_robot(p->robot, robot_name);
        if (miss == 0 && score > best_links) {
            best_links = score;
            *best = *b;
            keep = p;
        }
        if (miss > 0 && miss < closest_missing) {
            closest_missing = miss;
            *closest = *b;
            snprintf(miss_j, cap_j, "%s", mj);
            snprintf(miss_l, cap_l, "%s", ml);
        }
    }
    source_free(&s);
    if (best_p && keep && !(*best_p = rtg_profile_copy(keep))) return RT_ENOMEM;
    if (best_p && !keep) *best_p = NULL;
    return RT_OK;
}

const char *rtg_retarget_detect_profile(const struct kin_clip *clip, const char *robot_name)
{
    const char *best, *closest;
    char mj[8], ml[8];
    if (!clip || !robot_name) return NULL;
    if (detect(clip, robot_name, NULL, &best, &closest, mj, sizeof mj, ml, sizeof ml, NULL)) return NULL;
    return best;
}

enum rt_status rtg_retarget_pick_profile(const struct kin_clip *clip, const struct kin_robot *robot,
                                         struct rtg_profile **out, struct rt_err *err)
{
    const char *best, *closest;
    char mj[160] = "", ml[160] = "";
    *out = NULL;
    /* Bundled robots are named by their URDF; profiles by the short names. */
    const char *rname = rtg_profile_robot_label(robot->name);
    if (detect(clip, rname, robot, &best, &closest, mj, sizeof mj, ml, sizeof ml, out))
        return rt_err_set(err, RT_ENOMEM, "profile", "out of memory");
    if (*out) return RT_OK;
    if (!closest)
        return rt_err_set(err, RT_EINVAL, "profile",
                          "no bundled profile targets robot '%s': give a profile", RT_QUOTE(robot->name));
    /* No bundled profile fits by name: recognize the skeleton by synonyms
     * and topology and fill the closest template (skeleton.h). */
    return rtg_skeleton_auto_profile(clip, robot, out, err);
}

enum rt_status rtg_retarget_roles_profile(const struct kin_clip *clip, const struct kin_robot *robot,
                                          const struct rtg_profile *roles_profile, struct rtg_profile **out,
                                          struct rt_err *err)
{
    struct rtg_robot_roles rr;
    enum rt_status st;
    *out = NULL;
    /* Found roles first (a robot that lacks some is fine: the profile may
     * name them), then the profile's. */
    rtg_robot_roles(robot, &rr, NULL);
    for (int i = 0; i < roles_profile->n_roles; i++) {
        char where[RT_ERR_WHERE_MAX];
        snprintf(where, sizeof where, "profile:robot_roles.%s", RT_QUOTE(roles_profile->role_name[i]));
        st = rtg_robot_roles_set(robot, &rr, roles_profile->role_name[i], roles_profile->role_link[i], where, err);
        if (st != RT_OK) return st;
    }
    return rtg_skeleton_auto_profile_roles(clip, robot, &rr, out, err);
}

/* ---- building targets ---- */

/* Builds the source frame of link k at frame f into m (columns = axes).
 * Returns 0 when degenerate (the caller keeps the previous frame's). */
static int build_frame(const struct source *s, int f, const struct rtg_profile_frame *fr,
                       const int pts[4], double *m)
{
    double a[3], b[3], cols[3][3];
    int ia = fr->axis[0] - 'x', ib = fr->axis[1] - 'x';
    v_sub(src_at(s, f, pts[1]), src_at(s, f, pts[0]), a);
    v_sub(src_at(s, f, pts[3]), src_at(s, f, pts[2]), b);
    double na = v_norm(a);
    if (na < 1e-9) return 0;
    for (int i = 0; i < 3; i++) a[i] /= na;
    double d = v_dot(a, b);
    for (int i = 0; i < 3; i++) b[i] -= d * a[i];
    double nb = v_norm(b);
    if (nb < 1e-9 * (na + 1)) return 0;
    for (int i = 0; i < 3; i++) b[i] /= nb;
    memcpy(cols[ia], a, sizeof a);
    memcpy(cols[ib], b, sizeof b);
    int ic = 3 - ia - ib;
    kin_cross(cols[(ic + 1) % 3], cols[(ic + 2) % 3], cols[ic]);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) m[3 * r + c] = cols[c][r];
    return 1;
}

/* Projects the (possibly unnormalized) 3x3 matrix onto a rotation through
 * its quaternion. */
static void m_orthonormalize(double *m)
{
    double q[4];
    /* Gram-Schmidt on the columns first so that the quaternion is sound. */
    double x[3] = {m[0], m[3], m[6]}, y[3] = {m[1], m[4], m[7]}, z[3];
    double n = v_norm(x);
    for (int i = 0; i < 3; i++) x[i] /= n;
    double d = v_dot(x, y);
    for (int i = 0; i < 3; i++) y[i] -= d * x[i];
    n = v_norm(y);
    for (int i = 0; i < 3; i++) y[i] /= n;
    kin_cross(x, y, z);
    double r[9] = {x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]};
    kin_mat_to_quat(r, q);
    kin_quat_to_mat(q, m);
}

/* Bends segment d (from knee b) towards the straight continuation of the
 * segment a -> b so that the angle between (b - a) and d is at most `max`
 * radians, keeping |d| and the plane of the bend. */
static void clamp_bend(const double *a, const double *b, double *d, double max)
{
    double u[3], w[3], len = v_norm(d);
    v_sub(b, a, u);
    double nu = v_norm(u);
    if (!(nu > 1e-12) || !(len > 1e-12)) return;
    for (int i = 0; i < 3; i++) u[i] /= nu;
    double c = v_dot(u, d) / len;
    if (c >= cos(max)) return;
    /* w: unit vector in the bend plane, perpendicular to u, towards d. */
    for (int i = 0; i < 3; i++) w[i] = d[i] / len - c * u[i];
    double nw = v_norm(w);
    if (!(nw > 1e-9)) return; /* folded straight back: no plane; leave it */
    for (int i = 0; i < 3; i++) d[i] = len * (cos(max) * u[i] + sin(max) * w[i] / nw);
}

/* Marks contacts of foot point `j` into c[0..n) (see the file comment). */
static void detect_contacts(const struct source *s, int j, const struct rtg_profile *p,
                            unsigned char *c, double *h, double *tmp)
{
    int n = s->n_frames;
    double dt = s->frame_time > 0 ? s->frame_time : 1.0 / 30.0;
    for (int f = 0; f < n; f++) h[f] = src_at(s, f, j)[2];
    double floor_h = quantile(h, n, 0.05, tmp);
    for (int f = 0; f < n; f++) {
        int a = f > 0 ? f - 1 : f, b = f < n - 1 ? f + 1 : f;
        double v = 0;
        if (b > a) {
            const double *pa = src_at(s, a, j), *pb = src_at(s, b, j);
            v = hypot(pb[0] - pa[0], pb[1] - pa[1]) / ((b - a) * dt);
        }
        c[f] = (h[f] - floor_h < p->contact_height) && v < p->contact_speed;
    }
    int min_len = (int)floor(p->min_contact / dt + 0.5);
    if (min_len < 1) return;
    /* Fill short gaps between contacts, then drop short contacts. */
    for (int pass = 0; pass < 2; pass++) {
        unsigned char want = pass == 0 ? 0 : 1;
        int f = 0;
        while (f < n) {
            if (c[f] != want) { f++; continue; }
            int e = f;
            while (e < n && c[e] == want) e++;
            int interior = pass == 1 || (f > 0 && e < n);
            if (e - f < min_len && interior)
                for (int k = f; k < e; k++) c[k] = !want;
            f = e;
        }
    }
}

/* Step 3 of docs/profiles.md "How targets are built": the profile's scale,
 * else the ratio of the robot's mapped leg segments (zero pose P0) to the
 * source's in its frame 0 (after the calibration hold). */
static enum rt_status derive_scale(const struct source *s, const struct rtg_profile *p,
                                   const struct resolved *rs, const double *P0, double *out,
                                   struct rt_err *err)
{
    int has_feet = p->feet[0].link > 0 && p->feet[1].link > 0;
    double lr = 0, ls = 0;
    *out = p->scale;
    if (p->scale > 0) return RT_OK;
    for (int k = 1; k < p->n_links; k++) {
        int in_leg = !has_feet;
        for (int side = 0; side < 2 && !in_leg; side++)
            for (int a = p->feet[side].link; a > 0; a = p->links[a].parent)
                if (a == k) in_leg = 1;
        if (!in_leg || p->links[k].attach == RTG_ATTACH_RIGID) continue;
        double d[3];
        int pk = p->links[k].parent;
        v_sub(P0 + 3 * rs->link[k], P0 + 3 * rs->link[pk], d);
        lr += v_norm(d);
        v_sub(src_at(s, 0, rs->joint[k]), src_at(s, 0, rs->joint[pk]), d);
        ls += v_norm(d);
    }
    if (!(ls > 1e-6) || !(lr > 1e-6))
        return rt_err_set(err, RT_EINVAL, "profile:scale",
                          "cannot derive the scale (no mapped leg segments); set \"scale\"");
    *out = lr / ls;
    return RT_OK;
}

/* Everything build_targets() can refuse, without building: the names the
 * profile maps, the sizes, and the scale (which needs the source's frame 0
 * only). `s` may hold only a source's first frames. */
static enum rt_status check_targets(const struct kin_robot *robot, const struct source *s, int n_frames,
                                    const struct rtg_profile *p, struct rt_err *err)
{
    struct resolved rs;
    char mj[4096] = "", ml[4096] = "";
    size_t nfl, b9;
    enum rt_status st;
    if (resolve(p, s, robot, &rs, mj, sizeof mj, ml, sizeof ml)) {
        char msg[sizeof err->msg];
        missing_message(msg, sizeof msg, p->name, mj, ml);
        return rt_err_set(err, RT_EINVAL, "profile", "%s", msg);
    }
    if (!rt_mul_size((size_t)n_frames, (size_t)p->n_links, &nfl) || !rt_mul_size(nfl, 9 * sizeof(double), &b9))
        return rt_err_set(err, RT_ELIMIT, "source", "too many frames: %d", n_frames);
    double *zstate = calloc((size_t)(RT_ROOT_COLS + robot->n_dof), sizeof *zstate);
    double *P0 = malloc((size_t)robot->n_links * 12 * sizeof *P0), scale;
    if (!zstate || !P0) {
        st = rt_err_set(err, RT_ENOMEM, "targets", "out of memory");
    } else {
        zstate[6] = 1.0;
        kin_fk(robot, zstate, P0, P0 + 3 * robot->n_links);
        st = derive_scale(s, p, &rs, P0, &scale, err);
    }
    free(zstate);
    free(P0);
    return st;
}

enum rt_status rtg_targets_check_clip(const struct kin_robot *robot, const struct kin_clip *clip,
                                      const struct rtg_profile *profile, struct rtg_source_units *units,
                                      struct rt_err *err)
{
    struct source s;
    enum rt_status st;
    if (profile->n_links == 0) {
        struct rtg_profile *built = NULL;
        if ((st = rtg_retarget_roles_profile(clip, robot, profile, &built, err))) return st;
        st = rtg_targets_check_clip(robot, clip, built, units, err);
        rtg_profile_free(built);
        return st;
    }
    if (profile->source != RTG_SOURCE_BVH)
        return rt_err_set(err, RT_EINVAL, "profile:source.kind",
                          "profile '%s' maps a robot trajectory, not a BVH clip", RT_QUOTE(profile->name));
    /* The calibration hold looks no further than its window: the frames
     * up to it give frame 0 exactly as the full source has it. */
    double dt = clip->frame_time > 0 ? clip->frame_time : 1.0 / 30.0;
    double want = RTG_CALIB_WINDOW_S / dt + 3.0;
    int head = want < (double)clip->n_frames ? (int)want : clip->n_frames;
    memset(&s, 0, sizeof s);
    if ((st = source_from_clip(NULL, clip, profile, head, NULL, &s, err))) return st;
    st = check_targets(robot, &s, clip->n_frames, profile, err);
    if (st == RT_OK && units) *units = s.units;
    source_free(&s);
    return st;
}

enum rt_status rtg_targets_check_joints(const struct kin_robot *robot, const struct kin_joints *jp,
                                        const struct kin_clip *skel, double frame_time,
                                        const struct rtg_profile *profile, struct rt_err *err)
{
    struct source s;
    enum rt_status st;
    if (profile->source != RTG_SOURCE_BVH)
        return rt_err_set(err, RT_EINVAL, "profile:source.kind",
                          "profile '%s' maps a robot trajectory, not joint positions", RT_QUOTE(profile->name));
    double dt = frame_time > 0 ? frame_time : 1.0 / 30.0;
    double want = RTG_CALIB_WINDOW_S / dt + 3.0;
    int head = want < (double)jp->n_frames ? (int)want : jp->n_frames;
    memset(&s, 0, sizeof s);
    if ((st = source_from_joints(jp, skel, profile, frame_time, head, &s, err))) return st;
    st = check_targets(robot, &s, jp->n_frames, profile, err);
    source_free(&s);
    return st;
}

enum rt_status rtg_targets_check_robot_traj(const struct kin_robot *robot, const struct kin_robot *src,
                                            const double *states, int n_frames,
                                            const struct rtg_profile *profile, struct rt_err *err)
{
    struct source s;
    enum rt_status st;
    if (profile->source != RTG_SOURCE_ROBOT)
        return rt_err_set(err, RT_EINVAL, "profile:source.kind",
                          "profile '%s' maps a BVH skeleton, not a robot trajectory", RT_QUOTE(profile->name));
    if (n_frames < 1) return rt_err_set(err, RT_EINVAL, "source", "the source has no frames");
    if ((st = source_from_robot(src, states, 1, 0, &s, err))) return st;
    st = check_targets(robot, &s, n_frames, profile, err);
    source_free(&s);
    return st;
}

/* Step 7's blend: the swing targets of foot link k within w frames of a
 * contact interval of c[0..n) start from (and end at) that interval's
 * anchor, P = A + s(u) (P_swing - A) with s the smoothstep of u = distance
 * / (w + 1), so that the foot's target leaves and reaches the anchor with
 * continuous position and zero velocity. Without it the target jumps at
 * the interval's ends and the smoothness terms spread that jump into the
 * contact frames as sliding. A gap between two intervals is split at its
 * middle. Orientation targets are blended the same way (geodesically from
 * the anchor's level rotation). sw[0..n) receives each frame's share of
 * swing: 0 in contact, sm in the blend, 1 elsewhere; the foot's position
 * weight moves from contact_weight to the link's weight by it, so that
 * neither the target nor its weight steps at the interval's ends. */
static void blend_swing(double *tp, double *tr, const unsigned char *c, int n, int nl, int k, int w, double *sw)
{
    for (int f = 0; f < n; f++) sw[f] = c[f] ? 0.0 : 1.0;
    if (w < 1) return;
    int f = 0;
    while (f < n) {
        if (c[f]) { f++; continue; }
        int g0 = f, g1 = f;
        while (g1 < n && !c[g1]) g1++;
        int prev = g0 > 0, next = g1 < n, len = g1 - g0;
        int wl = prev && next ? len / 2 : len;
        if (wl > w) wl = w;
        for (int g = g0; g < g1; g++) {
            int from = -1, dist = 0;
            if (prev && g - g0 < wl) { from = g0 - 1; dist = g - g0 + 1; }
            else if (next && g1 - 1 - g < wl) { from = g1; dist = g1 - g; }
            if (from < 0) continue;
            double u = (double)dist / (wl + 1), sm = u * u * (3.0 - 2.0 * u);
            sw[g] = sm;
            double *P = &tp[((size_t)g * nl + k) * 3];
            const double *A = &tp[((size_t)from * nl + k) * 3];
            for (int i = 0; i < 3; i++) P[i] = A[i] + sm * (P[i] - A[i]);
            double *R = tr + ((size_t)g * nl + k) * 9;
            m_slerp(tr + ((size_t)from * nl + k) * 9, R, sm, R);
        }
        f = g1;
    }
}

/* The signed distance of the two foot links' capsules (link[2]) posed at
 * their targets (slots k[2]) in frame g, and in dir[2] the horizontal part
 * of the closest points' vector from the first foot to the second; +inf
 * when a foot has no capsule. */
static double feet_distance(const struct kin_capsule *caps, int nc, const int link[2], const int k[2],
                            const double *tp, const double *tr, int nl, int g, double *dir)
{
    double best = INFINITY;
    size_t i0 = (size_t)g * nl + k[0], i1 = (size_t)g * nl + k[1];
    for (int a = 0; a < nc; a++) {
        if (caps[a].link != link[0]) continue;
        for (int b = 0; b < nc; b++) {
            if (caps[b].link != link[1]) continue;
            double a0[3], a1[3], b0[3], b1[3], pa[3], pb[3], v[3];
            kin_capsule_at(&caps[a], tp + 3 * i0, tr + 9 * i0, a0, a1);
            kin_capsule_at(&caps[b], tp + 3 * i1, tr + 9 * i1, b0, b1);
            kin_segment_closest(a0, a1, b0, b1, pa, pb);
            v_sub(pb, pa, v);
            double d = v_norm(v) - caps[a].radius - caps[b].radius;
            if (d < best) {
                best = d;
                dir[0] = v[0];
                dir[1] = v[1];
            }
        }
    }
    return best;
}

/* Moves the position target of slot k horizontally by (dx, dy) over the
 * whole contact interval (flags c) that holds frame f. */
static void interval_shift(double *tp, const unsigned char *c, int n, int nl, int k, int f, double dx, double dy)
{
    int a0 = f, a1 = f;
    while (a0 > 0 && c[a0 - 1]) a0--;
    while (a1 < n && c[a1]) a1++;
    for (int g = a0; g < a1; g++) {
        double *P = tp + 3 * ((size_t)g * nl + k);
        P[0] += dx;
        P[1] += dy;
    }
}

/* The feet's anchors kept apart (docs/profiles.md "How targets are built",
 * step 7): where both feet are in contact and their capsules, posed at the
 * anchors with the level rotations (tp, tr after the anchors), come closer
 * than RTG_ANCHOR_CLEARANCE, the two contact intervals' anchors move apart
 * horizontally, each by half of what is missing at the run's worst frame,
 * for the whole interval, so that each foot still stays put. Source feet
 * closer together than a robot's feet are wide would otherwise have the
 * collision term push two planted feet apart and the anchors pull them
 * back, frame after frame (Booster T1 MJCF on 01_01.bvh: both feet
 * chattering 2-3 cm a frame at 120 fps). Up to four passes, since one
 * interval can overlap several of the other foot's. link: the foot links;
 * k: their target slots. */
static enum rt_status anchors_apart(const struct kin_robot *robot, const int link[2], const int k[2], double *tp,
                                    const double *tr, const unsigned char *contact, int n, int nl,
                                    struct rt_err *err)
{
    struct kin_capsule *caps = NULL;
    int nc = 0;
    enum rt_status st = kin_robot_capsules(robot, &caps, &nc, err);
    if (st != RT_OK) return st;
    const unsigned char *c0 = contact, *c1 = contact + (size_t)n;
    for (int pass = 0; pass < 4; pass++) {
        int moved = 0, f = 0;
        while (f < n) {
            if (!(c0[f] && c1[f])) {
                f++;
                continue;
            }
            int e = f;
            while (e < n && c0[e] && c1[e]) e++;
            /* The worst frame of the run [f, e): both feet in one interval each. */
            double worst = INFINITY, dir[2] = {0, 0};
            for (int g = f; g < e; g++) {
                double v[2] = {0, 0}, d = feet_distance(caps, nc, link, k, tp, tr, nl, g, v);
                if (d < worst) {
                    worst = d;
                    dir[0] = v[0];
                    dir[1] = v[1];
                }
            }
            if (worst < RTG_ANCHOR_CLEARANCE) {
                double h = hypot(dir[0], dir[1]);
                if (h < 1e-9) { /* closest points one above the other: between the anchors */
                    const double *A = tp + 3 * ((size_t)f * nl + k[0]), *B = tp + 3 * ((size_t)f * nl + k[1]);
                    dir[0] = B[0] - A[0];
                    dir[1] = B[1] - A[1];
                    h = hypot(dir[0], dir[1]);
                }
                if (h >= 1e-9) {
                    double half = 0.5 * (RTG_ANCHOR_CLEARANCE - worst) / h;
                    interval_shift(tp, c0, n, nl, k[0], f, -half * dir[0], -half * dir[1]);
                    interval_shift(tp, c1, n, nl, k[1], f, half * dir[0], half * dir[1]);
                    moved = 1;
                }
            }
            f = e;
        }
        if (!moved) break;
    }
    free(caps);
    return RT_OK;
}

static enum rt_status build_targets(const struct kin_robot *robot, const struct source *s,
                                    const struct rtg_profile *p, struct rtg_targets *t,
                                    struct rt_err *err)
{
    struct resolved rs;
    /* Every missing name, so that the message can count those it leaves out. */
    char mj[4096] = "", ml[4096] = "";
    int nl = p->n_links, n = s->n_frames;
    int nd = robot->n_dof, cols = RT_ROOT_COLS + nd;
    double *zstate = NULL, *P0 = NULL, *M0 = NULL, *h = NULL, *tmp = NULL, *sw = NULL;
    double *tp = NULL, *tr = NULL; /* per frame per link target pos [n*nl*3], rot [n*nl*9] */
    unsigned char *contact = NULL;
    double off[RTG_PROFILE_MAX_LINKS][9];
    enum rt_status st = RT_OK;
    size_t nfl, b3, b9;

    memset(t, 0, sizeof *t);
    if (resolve(p, s, robot, &rs, mj, sizeof mj, ml, sizeof ml)) {
        char msg[sizeof err->msg];
        missing_message(msg, sizeof msg, p->name, mj, ml);
        return rt_err_set(err, RT_EINVAL, "profile", "%s", msg);
    }
    if (!rt_mul_size((size_t)n, (size_t)nl, &nfl) || !rt_mul_size(nfl, 3 * sizeof(double), &b3) ||
        !rt_mul_size(nfl, 9 * sizeof(double), &b9))
        return rt_err_set(err, RT_ELIMIT, "source", "too many frames: %d", n);
    zstate = calloc((size_t)cols, sizeof *zstate);
    P0 = malloc((size_t)robot->n_links * 3 * sizeof *P0);
    M0 = malloc((size_t)robot->n_links * 9 * sizeof *M0);
    h = malloc((size_t)n * 2 * sizeof *h); /* both feet in the ground step */
    tmp = malloc((size_t)n * 2 * sizeof *tmp);
    tp = rt_alloc_large(b3, 16, NULL);
    tr = rt_alloc_large(b9, 16, NULL);
    contact = calloc((size_t)n * 2, 1);
    sw = malloc((size_t)n * 2 * sizeof *sw); /* each foot's share of swing (blend_swing) */
    if (!zstate || !P0 || !M0 || !h || !tmp || !tp || !tr || !contact || !sw) {
        st = rt_err_set(err, RT_ENOMEM, "targets", "out of memory for %d frames", n);
        goto fail;
    }
    /* The robot's zero pose: base at the origin, upright, every coordinate 0. */
    zstate[6] = 1.0;
    kin_fk(robot, zstate, P0, M0);

    /* 2. Contacts. */
    int has_feet = p->feet[0].link > 0 && p->feet[1].link > 0;
    if (has_feet && p->ground == RTG_GROUND_CONTACTS)
        for (int side = 0; side < 2; side++) {
            unsigned char *c1 = contact + (size_t)side * (size_t)n;
            detect_contacts(s, rs.joint[p->feet[side].link], p, c1, h, tmp);
        }

    /* The sole's height above the foot link origin: the profile's, else the
     * robot's known geometry. */
    double sole = p->sole_offset >= 0 ? p->sole_offset
                  : has_feet ? kin_robot_sole_offset(robot, rs.link[p->feet[0].link]) : 0.0;

    /* 3. Scale. */
    double scale;
    if ((st = derive_scale(s, p, &rs, P0, &scale, err))) goto fail;

    /* 4. Orientation frames and their offsets. */
    for (int k = 0; k < nl; k++) {
        const struct rtg_profile_link *l = &p->links[k];
        double prev[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        double *m0 = M0 + 9 * rs.link[k];
        if (l->frame.source) {
            /* The source's own rotation; auto offset = its rest/zero-pose
             * rotation^T x the robot link's zero-pose rotation. */
            const double *r0 = s->rot0 + 9 * rs.joint[k];
            if (l->offset_mode == RTG_OFFSET_IDENTITY) {
                for (int i = 0; i < 9; i++) off[k][i] = (i % 4 == 0);
            } else if (l->offset_mode == RTG_OFFSET_GIVEN) {
                kin_quat_to_mat(l->offset, off[k]);
            } else {
                m_tmul(r0, m0, off[k]);
            }
            for (int f = 0; f < n; f++) {
                const double *S = s->rot + ((size_t)f * (size_t)s->n_pts + (size_t)rs.joint[k]) * 9;
                kin_mat_mul(S, off[k], tr + ((size_t)f * nl + k) * 9);
            }
            continue;
        }
        if (!l->frame.axis[0]) {
            /* No frame: the rotation target is unused (weight 0), but a rigid
             * child never needs it (the parser refuses that). */
            for (int f = 0; f < n; f++) memcpy(tr + ((size_t)f * nl + k) * 9, m0, sizeof prev);
            continue;
        }
        for (int f = 0; f < n; f++) {
            double *m = tr + ((size_t)f * nl + k) * 9;
            if (!build_frame(s, f, &l->frame, rs.frame_pt[k], m)) memcpy(m, prev, sizeof prev);
            memcpy(prev, m, sizeof prev);
        }
        if (l->offset_mode == RTG_OFFSET_IDENTITY) {
            static const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
            memcpy(off[k], id, sizeof id);
        } else if (l->offset_mode == RTG_OFFSET_GIVEN) {
            kin_quat_to_mat(l->offset, off[k]);
        } else {
            memcpy(off[k], m0, sizeof off[k]);
            int side = p->feet[0].link == k ? 0 : p->feet[1].link == k ? 1 : -1;
            if (l->ref_contacts && side >= 0) {
                /* Mean over contact frames of S^T Rz(yaw S) M0: the foot's
                 * flat pose as the source holds it. */
                double acc[9] = {0}, a[9], b[9], rz[9];
                int cnt = 0;
                const unsigned char *c1 = contact + (size_t)side * (size_t)n;
                for (int pass = 0; pass < 2 && cnt == 0; pass++) {
                    /* Pass 1 (no contacts): the lowest tenth of the frames. */
                    double thr = 0;
                    if (pass == 1) {
                        for (int f = 0; f < n; f++) h[f] = src_at(s, f, rs.joint[k])[2];
                        thr = quantile(h, n, 0.1, tmp);
                    }
                    for (int f = 0; f < n; f++) {
                        if (pass == 0 ? !c1[f] : src_at(s, f, rs.joint[k])[2] > thr) continue;
                        const double *S = tr + ((size_t)f * nl + k) * 9;
                        m_rotz(m_yaw(S), rz);
                        m_tmul(S, rz, a);
                        kin_mat_mul(a, m0, b);
                        for (int i = 0; i < 9; i++) acc[i] += b[i];
                        cnt++;
                    }
                }
                if (cnt > 0) {
                    memcpy(off[k], acc, sizeof acc);
                    m_orthonormalize(off[k]);
                }
            }
        }
        for (int f = 0; f < n; f++) {
            double *m = tr + ((size_t)f * nl + k) * 9, o[9];
            kin_mat_mul(m, off[k], o);
            memcpy(m, o, sizeof o);
        }
    }

    /* 5. Positions. A foot's segment bends at the knee no further than the
     * robot's knee does (knee_max, radians from straight): a deeper source
     * knee (kneeling, a deep squat on H1, whose knee stops at 117 degrees)
     * would otherwise ask for a leg the robot cannot fold. */
    double knee_max[RTG_PROFILE_MAX_LINKS] = {0};
    for (int side = 0; has_feet && side < 2; side++) {
        int k = p->feet[side].link, pk = p->links[k].parent, gk = pk > 0 ? p->links[pk].parent : -1;
        if (gk < 0 || p->links[k].attach != RTG_ATTACH_DIRECTION || p->links[pk].attach != RTG_ATTACH_DIRECTION)
            continue;
        /* The knee joint: the movable joint nearest above the foot link up
         * to the knee link; its upper bound is the flexion limit, measured
         * from the zero pose's bend. */
        int lk = rs.link[pk], jk = robot->links[lk].joint;
        if (jk < 0 || !robot->joints[jk].has_limits || !(robot->joints[jk].upper > 0)) continue;
        double a[3], b[3];
        v_sub(P0 + 3 * lk, P0 + 3 * rs.link[gk], a);
        v_sub(P0 + 3 * rs.link[k], P0 + 3 * lk, b);
        double c0 = v_dot(a, b) / (v_norm(a) * v_norm(b) + 1e-300);
        knee_max[k] = robot->joints[jk].upper + acos(c0 > 1 ? 1 : c0 < -1 ? -1 : c0);
    }
    for (int f = 0; f < n; f++) {
        double *P = tp + (size_t)f * nl * 3;
        const double *r0 = src_at(s, f, rs.joint[0]);
        for (int i = 0; i < 3; i++) P[i] = scale * r0[i];
        for (int k = 1; k < nl; k++) {
            int pk = p->links[k].parent;
            double d[3], e[3];
            switch (p->links[k].attach) {
            case RTG_ATTACH_RIGID: {
                const double *mp = M0 + 9 * rs.link[pk];
                const double *Rp = tr + ((size_t)f * nl + pk) * 9;
                v_sub(P0 + 3 * rs.link[k], P0 + 3 * rs.link[pk], d);
                m_tvec(mp, d, e);  /* offset in the parent link's frame */
                kin_mat_vec(Rp, e, d);
                break;
            }
            case RTG_ATTACH_SCALED:
                v_sub(src_at(s, f, rs.joint[k]), src_at(s, f, rs.joint[pk]), d);
                for (int i = 0; i < 3; i++) d[i] *= scale;
                break;
            default: {
                v_sub(P0 + 3 * rs.link[k], P0 + 3 * rs.link[pk], e);
                double len = v_norm(e);
                v_sub(src_at(s, f, rs.joint[k]), src_at(s, f, rs.joint[pk]), d);
                double nd2 = v_norm(d);
                for (int i = 0; i < 3; i++) d[i] = nd2 > 1e-12 ? d[i] * len / nd2 : 0;
                if (knee_max[k] > 0) clamp_bend(P + 3 * p->links[pk].parent, P + 3 * pk, d, knee_max[k]);
                break;
            }
            }
            for (int i = 0; i < 3; i++) P[3 * k + i] = P[3 * pk + i] + d[i];
        }
    }

    /* 6. Ground and origin. */
    {
        double dz = 0, dx = tp[0], dy = tp[1];
        if (p->ground != RTG_GROUND_NONE) {
            int have = 0;
            if (has_feet && p->ground == RTG_GROUND_CONTACTS) {
                int m = 0;
                for (int side = 0; side < 2; side++)
                    for (int f = 0; f < n; f++)
                        if (contact[(size_t)side * n + f]) h[m++] = tp[((size_t)f * nl + p->feet[side].link) * 3 + 2];
                if (m > 0) {
                    dz = sole - quantile(h, m, 0.5, tmp);
                    have = 1;
                }
            }
            if (!have) {
                /* Lowest point of the feet (or of every target without feet). */
                double lo = INFINITY;
                for (int f = 0; f < n; f++)
                    for (int k = 0; k < nl; k++) {
                        if (has_feet && k != p->feet[0].link && k != p->feet[1].link) continue;
                        double z = tp[((size_t)f * nl + k) * 3 + 2];
                        if (z < lo) lo = z;
                    }
                dz = sole - lo;
            }
        }
        for (size_t i = 0; i < nfl; i++) {
            tp[3 * i] -= dx;
            tp[3 * i + 1] -= dy;
            tp[3 * i + 2] += dz;
        }
    }

    /* A frame whose foot would go below the sole is lifted whole, so that the
     * legs keep their source shape rather than folding around a clamped foot. */
    if (has_feet && p->ground != RTG_GROUND_NONE)
        for (int f = 0; f < n; f++) {
            double lift = 0;
            for (int side = 0; side < 2; side++) {
                double z = tp[((size_t)f * nl + p->feet[side].link) * 3 + 2];
                if (sole - z > lift) lift = sole - z;
            }
            for (int k = 0; lift > 0 && k < nl; k++) tp[((size_t)f * nl + k) * 3 + 2] += lift;
        }

    /* Allocate the output now that every step that can fail on input passed. */
    if ((st = rtg_targets_alloc(t, robot, n, nl, err))) goto fail;
    t->frame_time = s->frame_time > 0 ? s->frame_time : 1.0 / 30.0;
    rtg_targets_default_weights(t, robot);
    for (int i = 0; i < rt_tangent_dim(&robot->tree); i++) {
        t->w_vel[i] *= (float)p->w_vel;
        t->w_acc[i] *= (float)p->w_acc;
    }
    for (int j = 0; j < nd; j++) t->w_rest[j] *= (float)p->w_rest;
    for (int k = 0; k < nl; k++) t->target_link[k] = rs.link[k];

    /* 7. Anchors, level feet in contact, nothing below the ground. */
    if (has_feet && p->ground != RTG_GROUND_NONE) {
        double dt = s->frame_time > 0 ? s->frame_time : 1.0 / 30.0;
        for (int side = 0; side < 2; side++) {
            int k = p->feet[side].link;
            const unsigned char *c1 = contact + (size_t)side * n;
            int f = 0;
            while (f < n) {
                if (!c1[f]) {
                    /* Swing: keep a clearance above the sole so that tracking
                     * error does not put the foot through the floor. */
                    double *z = &tp[((size_t)f * nl + k) * 3 + 2];
                    if (*z < sole + RTG_SWING_CLEARANCE) *z = sole + RTG_SWING_CLEARANCE;
                    f++;
                    continue;
                }
                int e = f;
                double mx = 0, my = 0;
                while (e < n && c1[e]) {
                    mx += tp[((size_t)e * nl + k) * 3];
                    my += tp[((size_t)e * nl + k) * 3 + 1];
                    e++;
                }
                mx /= (e - f);
                my /= (e - f);
                for (int g = f; g < e; g++) {
                    double *P = &tp[((size_t)g * nl + k) * 3];
                    double *R = tr + ((size_t)g * nl + k) * 9, rz[9], m0l[9];
                    P[0] = mx;
                    P[1] = my;
                    P[2] = sole + RTG_CONTACT_CLEARANCE;
                    /* Level: keep the heading relative to the zero pose. */
                    const double *m0 = M0 + 9 * rs.link[k];
                    double yaw = m_yaw(R) - m_yaw(m0);
                    m_rotz(yaw, rz);
                    kin_mat_mul(rz, m0, m0l);
                    memcpy(R, m0l, sizeof m0l);
                }
                f = e;
            }
        }
        int kf[2] = {p->feet[0].link, p->feet[1].link}, lf[2] = {rs.link[kf[0]], rs.link[kf[1]]};
        if ((st = anchors_apart(robot, lf, kf, tp, tr, contact, n, nl, err)) != RT_OK) goto fail;
        for (int side = 0; side < 2; side++)
            blend_swing(tp, tr, contact + (size_t)side * n, n, nl, kf[side], (int)floor(RTG_CONTACT_BLEND_S / dt + 0.5),
                        sw + (size_t)side * n);
    }

    for (int f = 0; f < n; f++)
        for (int k = 0; k < nl; k++) {
            size_t i = (size_t)f * nl + k;
            double q[4];
            for (int c = 0; c < 3; c++) t->pos[3 * i + c] = (float)tp[3 * i + c];
            kin_mat_to_quat(tr + 9 * i, q);
            for (int c = 0; c < 4; c++) t->rot[4 * i + c] = (float)q[c];
            t->wpos[i] = (float)p->links[k].wpos;
            t->wrot[i] = (float)p->links[k].wrot;
            int side = k == p->feet[0].link ? 0 : k == p->feet[1].link ? 1 : -1;
            if (side >= 0 && p->ground == RTG_GROUND_CONTACTS && has_feet) {
                double a = sw[(size_t)side * n + f], cw = p->contact_weight;
                t->wpos[i] = (float)(cw + a * (p->links[k].wpos - cw));
            }
        }

    /* Initial state: base on the root target, rest pose elsewhere. */
    {
        size_t ni;
        if (!rt_mul_size((size_t)n, (size_t)cols * sizeof(float), &ni)) {
            st = rt_err_set(err, RT_ELIMIT, "targets", "too many frames: %d", n);
            goto fail;
        }
        t->init = malloc(ni);
        if (!t->init) {
            st = rt_err_set(err, RT_ENOMEM, "targets", "out of memory");
            goto fail;
        }
        for (int f = 0; f < n; f++) {
            float *x = t->init + (size_t)f * cols;
            double q[4], mt[9];
            const double *m0 = M0 + 9 * rs.link[0];
            const double *Rt = tr + (size_t)f * nl * 9;
            /* Base rotation = root target rotation x (root link zero-pose rotation)^T. */
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    mt[3 * r + c] = Rt[3 * r] * m0[3 * c] + Rt[3 * r + 1] * m0[3 * c + 1] + Rt[3 * r + 2] * m0[3 * c + 2];
            kin_mat_to_quat(mt, q);
            for (int c = 0; c < 3; c++) x[c] = t->pos[(size_t)f * nl * 3 + c];
            if (rs.link[0] != 0) {
                /* The root mapping is not on the floating base (T1's
                 * pelvis "Waist" hangs below "Trunk"): the base goes where
                 * it puts that link on its target, mt x (its zero-pose
                 * offset) away. */
                const double *o = P0 + 3 * rs.link[0];
                for (int c = 0; c < 3; c++)
                    x[c] = (float)(tp[(size_t)f * nl * 3 + c] - (mt[3 * c] * o[0] + mt[3 * c + 1] * o[1] + mt[3 * c + 2] * o[2]));
            }
            for (int c = 0; c < 4; c++) x[3 + c] = (float)q[c];
            for (int j = 0; j < nd; j++) x[RT_ROOT_COLS + j] = t->rest[j];
        }
    }
    if (has_feet) {
        t->foot_link[0] = rs.link[p->feet[0].link];
        t->foot_link[1] = rs.link[p->feet[1].link];
        t->sole_offset = sole;
        t->on_ground = p->ground != RTG_GROUND_NONE;
        if (p->ground == RTG_GROUND_CONTACTS) {
            /* rtg_targets stores contacts frame-major: [frame * 2 + side]. */
            t->contact = malloc((size_t)n * 2);
            t->planted = malloc((size_t)n * 2);
            if (!t->contact || !t->planted) {
                st = rt_err_set(err, RT_ENOMEM, "targets", "out of memory");
                goto fail;
            }
            for (int f = 0; f < n; f++)
                for (int side = 0; side < 2; side++) {
                    size_t i = 2 * (size_t)f + side;
                    t->contact[i] = contact[(size_t)side * n + f];
                    t->planted[i] = t->contact[i] && sw[(size_t)(1 - side) * n + f] >= 1.0;
                }
        }
    }
fail:
    if (st != RT_OK) rtg_targets_free(t);
    free(zstate);
    free(P0);
    free(M0);
    free(h);
    free(tmp);
    free(tp);
    free(tr);
    free(contact);
    free(sw);
    return st;
}

enum rt_status rtg_targets_from_clip(const struct kin_robot *robot, const struct kin_clip *clip,
                                     const struct rtg_profile *profile, struct rtg_targets *t,
                                     struct rt_err *err)
{
    return rtg_targets_from_clip_on(NULL, robot, clip, profile, NULL, t, err);
}

enum rt_status rtg_targets_from_clip_on(struct rtg_pool *pool, const struct kin_robot *robot,
                                        const struct kin_clip *clip, const struct rtg_profile *profile,
                                        const struct rtg_source_units *units, struct rtg_targets *t,
                                        struct rt_err *err)
{
    struct rtg_profile *picked = NULL;
    struct source s;
    enum rt_status st;
    memset(t, 0, sizeof *t);
    memset(&s, 0, sizeof s);
    if (!profile) {
        if ((st = rtg_retarget_pick_profile(clip, robot, &picked, err))) return st;
        profile = picked;
    } else if (profile->n_links == 0) {
        if ((st = rtg_retarget_roles_profile(clip, robot, profile, &picked, err))) return st;
        profile = picked;
    }
    if (profile->source != RTG_SOURCE_BVH) {
        st = rt_err_set(err, RT_EINVAL, "profile:source.kind",
                        "profile '%s' maps a robot trajectory, not a BVH clip", RT_QUOTE(profile->name));
        goto fail;
    }
    if ((st = source_from_clip(pool, clip, profile, 0, units, &s, err))) goto fail;
    st = build_targets(robot, &s, profile, t, err);
    if (st == RT_OK) t->units = s.units;
fail:
    source_free(&s);
    rtg_profile_free(picked);
    return st;
}

enum rt_status rtg_targets_from_joints(const struct kin_robot *robot, const struct kin_joints *jp,
                                       const struct kin_clip *skel, double frame_time,
                                       const struct rtg_profile *profile, struct rtg_targets *t,
                                       struct rt_err *err)
{
    struct source s;
    enum rt_status st;
    memset(t, 0, sizeof *t);
    if (profile->source != RTG_SOURCE_BVH)
        return rt_err_set(err, RT_EINVAL, "profile:source.kind",
                          "profile '%s' maps a robot trajectory, not joint positions", RT_QUOTE(profile->name));
    if ((st = source_from_joints(jp, skel, profile, frame_time, 0, &s, err))) return st;
    st = build_targets(robot, &s, profile, t, err);
    if (st == RT_OK) t->units = s.units;
    source_free(&s);
    return st;
}

enum rt_status rtg_targets_from_robot_traj(const struct kin_robot *robot,
                                           const struct kin_robot *src, const double *states,
                                           int n_frames, double frame_time,
                                           const struct rtg_profile *profile,
                                           struct rtg_targets *t, struct rt_err *err)
{
    struct source s;
    enum rt_status st;
    memset(t, 0, sizeof *t);
    if (profile->source != RTG_SOURCE_ROBOT)
        return rt_err_set(err, RT_EINVAL, "profile:source.kind",
                          "profile '%s' maps a BVH skeleton, not a robot trajectory", RT_QUOTE(profile->name));
    if ((st = source_from_robot(src, states, n_frames, frame_time, &s, err))) return st;
    st = build_targets(robot, &s, profile, t, err);
    source_free(&s);
    return st;
}

void rtg_targets_batch(const struct kin_robot *robot, const struct rtg_targets *t,
                       const int frame_off[2], const struct solver_options *opt,
                       struct solver_batch *b)
{
    memset(b, 0, sizeof *b);
    b->tree = &robot->tree;
    b->n_clips = 1;
    b->frame_off = frame_off;
    b->n_targets = t->n_targets;
    b->target_link = t->target_link;
    b->target_pos = t->pos;
    b->target_rot = t->rot;
    b->target_wpos = t->wpos;
    b->target_wrot = t->wrot;
    b->w_vel = t->w_vel;
    b->w_acc = t->w_acc;
    b->rest = t->rest;
    b->w_rest = t->w_rest;
    b->init = t->init;
    b->n_capsules = t->n_capsules;
    b->capsule_link = t->capsule_link;
    b->capsule_seg = t->capsule_seg;
    b->n_pairs = t->w_collide > 0.0f ? t->n_pairs : 0;
    b->pair = t->pair;
    b->n_ground = t->w_ground > 0.0f ? t->n_ground : 0;
    b->ground = t->ground;
    b->w_ground = t->w_ground;
    b->w_collide = t->w_collide;
    b->collide_margin = t->collide_margin;
    b->planted = b->n_pairs ? t->planted : NULL;
    b->foot_link[0] = t->foot_link[0];
    b->foot_link[1] = t->foot_link[1];
    b->v_limit = t->w_vlim > 0.0f ? t->v_limit : NULL;
    b->w_vlim = t->w_vlim;
    b->opt = *opt;
}

enum rt_status rtg_solve_per_frame(struct solver_backend *be, const struct kin_robot *robot,
                                   const struct rtg_targets *t, const struct solver_options *opt, float *state,
                                   struct solver_clip_result *res, struct rt_err *err)
{
    static const int one[2] = {0, 1};
    int cols = rt_state_cols(&robot->tree), nt = t->n_targets;
    struct solver_clip_result acc, cr;
    struct solver_batch b;
    double t0;
    enum rt_status st = RT_OK;
    memset(&acc, 0, sizeof acc);
    t0 = rt_now();
    rtg_targets_batch(robot, t, one, opt, &b);
    b.w_vel = b.w_acc = NULL; /* smoothness off: each frame on its own */
    b.opt.init_iters = 0;
    for (int f = 0; f < t->n_frames; f++) {
        size_t i = (size_t)f * (size_t)nt;
        struct solver_result r = {state + (size_t)f * cols, &cr};
        b.target_pos = t->pos + 3 * i;
        b.target_rot = t->rot + 4 * i;
        b.target_wpos = t->wpos + i;
        b.target_wrot = t->wrot + i;
        b.init = f > 0 ? state + (size_t)(f - 1) * cols : t->init;
        memset(&cr, 0, sizeof cr);
        if ((st = solver_backend_solve(be, &b, &r, err))) {
            char where[RT_ERR_WHERE_MAX];
            snprintf(where, sizeof where, "per-frame:%d", f);
            if (err) snprintf(err->where, sizeof err->where, "%s", where);
            return st;
        }
        acc.lm_iters += cr.lm_iters;
        acc.cg_iters += cr.cg_iters;
        acc.initial_cost += cr.initial_cost;
        acc.final_cost += cr.final_cost;
        acc.termination = cr.termination;
    }
    acc.seconds = rt_now() - t0;
    if (res) *res = acc;
    return st;
}
