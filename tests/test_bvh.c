/* test_bvh.c -- tests of the BVH reader and source forward kinematics.
 *
 * Three kinds of evidence: the real clips in shared/data (every one loads,
 * with the frame, joint and channel counts SOURCES.md lists and the motion
 * rows counted here independently; bone lengths stay constant over every
 * frame; the root sits where its position channels say after conversion;
 * units are guessed plausibly; the poses equal every product written out),
 * hand-written clips with poses worked out by
 * hand (which pin the Euler order, the composition convention, position
 * channels replacing OFFSET and the y-up conversion), and malformed or
 * oversized inputs that must fail with the right status and "name:LINE" at
 * the limit N+1 while N passes. */
#include "../kinematics/bvh.h"

#include <cjson/cJSON.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static const double PI = 3.14159265358979323846;

/* Reference rotations, written out independently of bvh.c. */
static void ref_rot(char axis, double deg, double R[9])
{
    double a = deg * PI / 180.0, c = cos(a), s = sin(a);
    double X[9] = {1, 0, 0, 0, c, -s, 0, s, c};
    double Y[9] = {c, 0, s, 0, 1, 0, -s, 0, c};
    double Z[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
    memcpy(R, axis == 'x' ? X : axis == 'y' ? Y : Z, sizeof X);
}

static void ref_mul(const double *a, const double *b, double *out)
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int k = 0; k < 3; k++) s += a[3 * i + k] * b[3 * k + j];
            t[3 * i + j] = s;
        }
    memcpy(out, t, sizeof t);
}

static void ref_apply(const double *R, const double *v, double *out)
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
    memcpy(out, t, sizeof t);
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > m) m = fabs(a[i] - b[i]);
    return m;
}

/* Motion rows counted without the parser: non-blank lines after the line
 * that holds "Frame Time". */
static int count_rows(const char *text, size_t len)
{
    const char *p = strstr(text, "Frame Time");
    if (!p) return -1;
    const char *end = text + len;
    while (p < end && *p != '\n' && *p != '\r') p++;
    int rows = 0, blank = 1;
    for (; p < end; p++) {
        if (*p == '\n' || *p == '\r') {
            if (!blank) rows++;
            blank = 1;
        } else if (*p != ' ' && *p != '\t') {
            blank = 0;
        }
    }
    return rows + !blank;
}

static struct kin_clip *parse_ok(const char *text, const char *label)
{
    struct kin_clip *c = NULL;
    struct rt_err err = {0};
    enum rt_status st = kin_bvh_parse(text, strlen(text), "t.bvh", &c, &err);
    if (st != RT_OK) {
        fprintf(stderr, "%s: unexpected failure: %s: %s\n", label, err.where, err.msg);
        test_failed++;
        return NULL;
    }
    test_passed++;
    return c;
}

/* Parses text expecting status `want` at line `line` of "t.bvh" with a
 * message containing `msg_part`. */
static void expect_fail_n(const char *text, size_t len, enum rt_status want, int line,
                          const char *msg_part, const char *label)
{
    struct kin_clip *c = (struct kin_clip *)1;
    struct rt_err err = {0};
    char where[64];
    enum rt_status st = kin_bvh_parse(text, len, "t.bvh", &c, &err);
    snprintf(where, sizeof where, "t.bvh:%d", line);
    if (st != want || c != NULL || strcmp(err.where, where) != 0 || !strstr(err.msg, msg_part)) {
        test_failed++;
        fprintf(stderr, "%s: got status %d where '%s' msg '%s'; want %d '%s' '...%s...'\n", label,
                st, err.where, err.msg, want, where, msg_part);
    } else {
        test_passed++;
    }
    if (st == RT_OK && c != (struct kin_clip *)1) kin_clip_free(c);
    /* The borrowed parse checks the same and says the same. */
    struct kin_clip *b = (struct kin_clip *)1;
    struct rt_err berr = {0};
    enum rt_status bst = kin_bvh_parse_borrowed(text, len, "t.bvh", &b, &berr);
    if (bst != st || b != NULL || strcmp(berr.where, err.where) || strcmp(berr.msg, err.msg)) {
        test_failed++;
        fprintf(stderr, "%s: borrowed parse: status %d where '%s' msg '%s'; the parse: %d '%s' '%s'\n", label, bst,
                berr.where, berr.msg, st, err.where, err.msg);
    } else {
        test_passed++;
    }
    if (bst == RT_OK && b != (struct kin_clip *)1) kin_clip_free(b);
}

static void expect_fail(const char *text, enum rt_status want, int line, const char *msg_part,
                        const char *label)
{
    expect_fail_n(text, strlen(text), want, line, msg_part, label);
}

/* Growable string for generated clips. */
struct sbuf {
    char *p;
    size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s)
{
    size_t k = strlen(s);
    if (b->n + k + 1 > b->cap) {
        b->cap = (b->n + k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, s, k + 1);
    b->n += k;
}

/* ------------------------------------------------------------------------ */
/* Real clips                                                               */
/* ------------------------------------------------------------------------ */

struct clip_case {
    const char *file;
    int frames, declared, joints, end_sites, channels;
    int human;      /* 1: a whole human skeleton, so the unit guess must work */
    double scale;   /* expected unit guess (0: not checked) */
    char up;
};

/* From shared/data/SOURCES.md (Frames, data lines, joints, End Sites,
 * channels, units / up axis). */
static const struct clip_case CLIPS[] = {
    {"clips/cmu_12_01_walk.bvh", 524, 524, 31, 7, 96, 1, KIN_BVH_CMU_SCALE, 'y'},
    {"clips/01_01.bvh", 2752, 2752, 31, 7, 96, 1, KIN_BVH_CMU_SCALE, 'y'},
    {"clips/01_03.bvh", 4511, 4511, 31, 7, 96, 1, KIN_BVH_CMU_SCALE, 'y'},
    {"clips/run_forward.bvh", 45, 45, 20, 5, 63, 1, 1.0, 'y'},
    {"clips/jesse_dance.bvh", 1007, 1007, 60, 13, 183, 1, 0.01, 'y'},
    {"clips/jumping_jacks.bvh", 125, 125, 31, 7, 96, 1, KIN_BVH_CMU_SCALE, 'y'},
    {"clips/edge/Boxing_Toes.bvh", 3070, 3069, 21, 5, 66, 1, 0.01, 'y'},
    {"clips/edge/milad.bvh", 422, 422, 59, 13, 354, 1, 0.01, 'y'},
    {"clips/edge/rotation_first_root.bvh", 4, 4, 4, 2, 15, 0, 0, 0},
    {"clips/edge/full_precision_frame_time.bvh", 3, 3, 2, 1, 9, 0, 0, 0},
    {"clips/edge/bvh_example.bvh", 75, 75, 24, 5, 75, 1, 0.0254, 'z'},
    {"clips/edge/sinusoidal.bvh", 120, 120, 4, 0, 15, 0, 0, 0},
    {"clips/edge/example.bvh", 2, 2, 18, 5, 57, 1, 0.0254, 'y'},
    {"clips/edge/test_freebvh.bvh", 69, 69, 55, 15, 168, 1, 0.01, 'y'},
    {"clips/edge/test_mocapbank.bvh", 455, 455, 19, 5, 60, 1, 0.01, 'y'},
};

/* Every bone of a joint without position channels, and of every End Site,
 * keeps its OFFSET length in every frame; rotations stay orthonormal; the
 * root sits at its position channels (or OFFSET) through the y-up, cm
 * conversion: p = 0.01 * (x, -z, y). */
static void check_clip_kinematics(const struct kin_clip *c, const char *label)
{
    int n_all = c->n_joints + c->n_end_sites;
    double *pos = malloc(sizeof(double) * 3 * (size_t)n_all);
    double *rot = malloc(sizeof(double) * 9 * (size_t)n_all);
    double *cpos = malloc(sizeof(double) * 3 * (size_t)n_all);
    double *crot = malloc(sizeof(double) * 9 * (size_t)n_all);
    const struct kin_bvh_convert cm_y = {0.01, 'y'};
    double worst_bone = 0, worst_root = 0, worst_ortho = 0, worst_conv = 0;
    const struct kin_bvh_joint *root = &c->joints[0];
    for (int f = 0; f < c->n_frames; f++) {
        kin_clip_global(c, f, NULL, pos, rot);
        kin_clip_global(c, f, &cm_y, cpos, crot);
        for (int i = 1; i < n_all; i++) {
            const struct kin_bvh_joint *j = &c->joints[i];
            int has_pos = 0;
            for (int k = 0; k < j->n_channels; k++) has_pos |= j->chan[k] < KIN_XROT;
            if (has_pos) continue;
            const double *p = pos + 3 * i, *q = pos + 3 * j->parent;
            double len = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                              (p[2] - q[2]) * (p[2] - q[2]));
            double want = sqrt(j->offset[0] * j->offset[0] + j->offset[1] * j->offset[1] +
                               j->offset[2] * j->offset[2]);
            double rel = fabs(len - want) / (want > 1e-9 ? want : 1.0);
            if (rel > worst_bone) worst_bone = rel;
        }
        /* Root: position channels replace OFFSET components. */
        double r[3] = {root->offset[0], root->offset[1], root->offset[2]};
        const double *row = c->motion + (size_t)f * (size_t)c->n_channels;
        for (int k = 0; k < root->n_channels; k++)
            if (root->chan[k] < KIN_XROT) r[root->chan[k]] = row[root->chan_off + k];
        double want[3] = {0.01 * r[0], 0.01 * -r[2], 0.01 * r[1]};
        double d = max_abs_diff(cpos, want, 3);
        if (d > worst_root) worst_root = d;
        /* Conversion of every joint: p' = 0.01 A p, R' = A R A^T. */
        double A[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}, At[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0};
        for (int i = 0; i < n_all; i++) {
            double pw[3], Rw[9];
            ref_apply(A, pos + 3 * i, pw);
            for (int a = 0; a < 3; a++) pw[a] *= 0.01;
            ref_mul(A, rot + 9 * i, Rw);
            ref_mul(Rw, At, Rw);
            double dp = max_abs_diff(pw, cpos + 3 * i, 3) / 0.01;
            double dr = max_abs_diff(Rw, crot + 9 * i, 9);
            if (dp > worst_conv) worst_conv = dp;
            if (dr > worst_conv) worst_conv = dr;
            double RRt[9], Rt[9], I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) Rt[3 * a + b] = rot[9 * i + 3 * b + a];
            ref_mul(rot + 9 * i, Rt, RRt);
            double o = max_abs_diff(RRt, I, 9);
            if (o > worst_ortho) worst_ortho = o;
        }
    }
    if (worst_bone > 1e-6 || worst_root > 1e-9 || worst_ortho > 1e-12 || worst_conv > 1e-9)
        fprintf(stderr, "%s: bone %.3g root %.3g ortho %.3g conv %.3g\n", label, worst_bone,
                worst_root, worst_ortho, worst_conv);
    CHECK(worst_bone <= 1e-6);
    CHECK(worst_root <= 1e-9);
    CHECK(worst_ortho <= 1e-12);
    CHECK(worst_conv <= 1e-9);
    free(pos);
    free(rot);
    free(cpos);
    free(crot);
}

/* kin_clip_global (unconverted) against every product written out: each
 * joint's rotation the identity times its channels' axis rotations in
 * order, then its parent's times it, all full 3x3 products summed left to
 * right. == on every value (it takes -0 == +0: the reader skips the
 * products with an exact 0 or 1 of an axis rotation, which can change
 * only the sign of a zero). At most 400 frames a clip. */
static void check_pose_products(const struct kin_clip *c, const char *label)
{
    int n_all = c->n_joints + c->n_end_sites, bad = 0;
    double *pos = malloc(sizeof(double) * 3 * (size_t)n_all), *rot = malloc(sizeof(double) * 9 * (size_t)n_all);
    double *rp = malloc(sizeof(double) * 3 * (size_t)n_all), *rr = malloc(sizeof(double) * 9 * (size_t)n_all);
    int step = c->n_frames > 400 ? c->n_frames / 400 : 1;
    for (int f = 0; f < c->n_frames; f += step) {
        const double *row = c->motion + (size_t)f * (size_t)c->n_channels;
        kin_clip_global(c, f, NULL, pos, rot);
        for (int i = 0; i < n_all; i++) {
            const struct kin_bvh_joint *j = &c->joints[i];
            double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, t[3] = {j->offset[0], j->offset[1], j->offset[2]};
            for (int k = 0; k < j->n_channels; k++) {
                int ch = j->chan[k];
                double v = row[j->chan_off + k];
                if (ch < KIN_XROT) {
                    t[ch] = v;
                    continue;
                }
                double a = v * (3.14159265358979323846 / 180.0), co = cos(a), si = sin(a), K[9], o[9];
                double X[9] = {1, 0, 0, 0, co, -si, 0, si, co}, Y[9] = {co, 0, si, 0, 1, 0, -si, 0, co};
                double Z[9] = {co, -si, 0, si, co, 0, 0, 0, 1};
                memcpy(K, ch == KIN_XROT ? X : ch == KIN_XROT + 1 ? Y : Z, sizeof K);
                for (int a1 = 0; a1 < 3; a1++)
                    for (int b1 = 0; b1 < 3; b1++)
                        o[3 * a1 + b1] = R[3 * a1] * K[b1] + R[3 * a1 + 1] * K[3 + b1] + R[3 * a1 + 2] * K[6 + b1];
                memcpy(R, o, sizeof o);
            }
            if (j->parent < 0) {
                memcpy(rr + 9 * i, R, sizeof R);
                memcpy(rp + 3 * i, t, sizeof t);
                continue;
            }
            const double *P = rr + 9 * j->parent, *pp = rp + 3 * j->parent;
            for (int a1 = 0; a1 < 3; a1++) {
                for (int b1 = 0; b1 < 3; b1++)
                    rr[9 * i + 3 * a1 + b1] = P[3 * a1] * R[b1] + P[3 * a1 + 1] * R[3 + b1] + P[3 * a1 + 2] * R[6 + b1];
                rp[3 * i + a1] = pp[a1] + (P[3 * a1] * t[0] + P[3 * a1 + 1] * t[1] + P[3 * a1 + 2] * t[2]);
            }
        }
        for (int i = 0; i < 3 * n_all; i++) bad += !(pos[i] == rp[i]);
        for (int i = 0; i < 9 * n_all; i++) bad += !(rot[i] == rr[i]);
    }
    /* The y-up conversion: A R A^T, A = Rx(+90 deg), both products written out. */
    {
        static const double A[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}, At[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0};
        const struct kin_bvh_convert cy = {1.0, 'y'};
        int f = c->n_frames / 2;
        kin_clip_global(c, f, NULL, rp, rr);
        kin_clip_global(c, f, &cy, pos, rot);
        for (int i = 0; i < n_all; i++) {
            double t1[9], t2[9];
            const double *R = rr + 9 * i;
            for (int a1 = 0; a1 < 3; a1++)
                for (int b1 = 0; b1 < 3; b1++)
                    t1[3 * a1 + b1] = A[3 * a1] * R[b1] + A[3 * a1 + 1] * R[3 + b1] + A[3 * a1 + 2] * R[6 + b1];
            for (int a1 = 0; a1 < 3; a1++)
                for (int b1 = 0; b1 < 3; b1++)
                    t2[3 * a1 + b1] = t1[3 * a1] * At[b1] + t1[3 * a1 + 1] * At[3 + b1] + t1[3 * a1 + 2] * At[6 + b1];
            for (int e = 0; e < 9; e++) bad += !(rot[9 * i + e] == t2[e]);
        }
    }
    if (bad) fprintf(stderr, "  %s: %d pose values differ from every product written out\n", label, bad);
    CHECK_EQ_INT(bad, 0);
    free(pos);
    free(rot);
    free(rp);
    free(rr);
}

static void check_inspect_json(const struct kin_clip *c)
{
    char *js = kin_clip_inspect_json(c);
    CHECK(js != NULL);
    if (!js) return;
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(js, strlen(js) + 1, &end, 1);
    CHECK(o != NULL);
    if (o) {
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "kind")), "clip");
        CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "frames")),
                     c->n_frames);
        CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "declared_frames")),
                     c->declared_frames);
        CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "joints")),
                     c->n_joints);
        CHECK_EQ_INT(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "channels")),
                     c->n_channels);
        /* Exact: the printed frame time reads back to the same double. */
        CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "frame_time")) ==
              c->frame_time);
        cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "joint_names");
        CHECK_EQ_INT(cJSON_GetArraySize(names), c->n_joints);
        int same = 1;
        for (int i = 0; i < c->n_joints && same; i++) {
            const char *s = cJSON_GetStringValue(cJSON_GetArrayItem(names, i));
            same = s && strcmp(s, c->joints[i].name) == 0;
        }
        CHECK(same);
        cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "warning");
        if (c->warning[0]) CHECK_EQ_STR(cJSON_GetStringValue(w), c->warning);
        else CHECK(w == NULL);
        cJSON_Delete(o);
    }
    free(js);
}

/* kin_bvh_parse_borrowed() against kin_bvh_parse() on `len` bytes copied
 * to a buffer of exactly that size (no NUL after it: ASan sees a read past
 * the end): the same clip, every row and every frame's global poses the
 * same bits, the same unit guess. */
static void check_borrowed(const char *text, size_t len, const char *label)
{
    char *exact = malloc(len ? len : 1);
    struct kin_clip *c = NULL, *b = NULL;
    struct rt_err err = {0};
    CHECK(exact != NULL);
    if (!exact) return;
    memcpy(exact, text, len);
    enum rt_status st = kin_bvh_parse(exact, len, label, &c, &err);
    enum rt_status bst = kin_bvh_parse_borrowed(exact, len, label, &b, &err);
    CHECK_EQ_INT(bst, st);
    if (c && b) {
        int n_all = c->n_joints + c->n_end_sites, same = 1;
        CHECK(b->motion == NULL && b->row_at != NULL);
        CHECK_EQ_INT(b->n_frames, c->n_frames);
        CHECK_EQ_INT(b->n_channels, c->n_channels);
        CHECK_EQ_STR(b->warning, c->warning);
        double *row = malloc((size_t)c->n_channels * sizeof *row);
        double *p1 = malloc((size_t)n_all * 12 * sizeof *p1), *p2 = malloc((size_t)n_all * 12 * sizeof *p2);
        const struct kin_bvh_convert cm = {0.01, 'y'};
        for (int f = 0; row && p1 && p2 && f < c->n_frames; f++) {
            kin_clip_row(b, f, row);
            same &= !memcmp(row, c->motion + (size_t)f * (size_t)c->n_channels, (size_t)c->n_channels * sizeof *row);
            kin_clip_global(c, f, &cm, p1, p1 + 3 * n_all);
            kin_clip_global(b, f, &cm, p2, p2 + 3 * n_all);
            same &= !memcmp(p1, p2, (size_t)n_all * 12 * sizeof *p1);
        }
        if (!same) fprintf(stderr, "%s: a borrowed clip's frames differ from the parsed clip's\n", label);
        CHECK(same);
        struct kin_bvh_convert u1 = {0, 0}, u2 = {0, 0};
        double h1 = 0, h2 = 0;
        CHECK_EQ_INT(kin_clip_detect_units(b, &u2, &h2, NULL), kin_clip_detect_units(c, &u1, &h1, NULL));
        CHECK(u1.scale == u2.scale && u1.up == u2.up && h1 == h2);
        free(row);
        free(p1);
        free(p2);
    }
    kin_clip_free(c);
    kin_clip_free(b);
    free(exact);
}

static int test_real_clips(void)
{
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/clips", test_data_dir());
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "note: %s missing; real-clip tests not run\n", path);
        return 0;
    }
    for (size_t k = 0; k < sizeof CLIPS / sizeof CLIPS[0]; k++) {
        const struct clip_case *cc = &CLIPS[k];
        struct kin_clip *c = NULL;
        struct rt_err err = {0};
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", test_data_dir(), cc->file);
        enum rt_status st = kin_bvh_load(path, &c, &err);
        if (st != RT_OK) fprintf(stderr, "%s: %s: %s\n", cc->file, err.where, err.msg);
        CHECK_EQ_INT(st, RT_OK);
        if (!c) continue;
        char *text = test_slurp(path, &len);
        CHECK(text != NULL);
        int rows = text ? count_rows(text, len) : -1;
        if (text) check_borrowed(text, len, cc->file);
        free(text);
        CHECK_EQ_INT(c->n_frames, rows);
        CHECK_EQ_INT(c->n_frames, cc->frames);
        CHECK_EQ_INT(c->declared_frames, cc->declared);
        CHECK_EQ_INT(c->n_joints, cc->joints);
        CHECK_EQ_INT(c->n_end_sites, cc->end_sites);
        CHECK_EQ_INT(c->n_channels, cc->channels);
        CHECK(c->frame_time > 0);
        CHECK_EQ_INT(c->warning[0] != 0, c->n_frames != c->declared_frames);
        /* Structure: parents first, channels tile the row, End Sites last. */
        int next_col = 0, ok = 1;
        for (int i = 0; i < c->n_joints + c->n_end_sites; i++) {
            const struct kin_bvh_joint *j = &c->joints[i];
            ok &= i == 0 ? j->parent == -1 : (j->parent >= 0 && j->parent < i);
            ok &= j->end_site == (i >= c->n_joints);
            ok &= j->end_site ? j->n_channels == 0 && j->parent < c->n_joints
                              : (j->n_channels == 3 || j->n_channels == 6);
            if (!j->end_site) {
                ok &= j->chan_off == next_col;
                next_col += j->n_channels;
            }
            ok &= kin_clip_find_joint(c, j->name) <= i;
        }
        CHECK(ok);
        CHECK_EQ_INT(next_col, c->n_channels);
        check_clip_kinematics(c, cc->file);
        check_pose_products(c, cc->file);
        check_inspect_json(c);

        struct kin_bvh_convert conv = {0, 0};
        double h = 0;
        struct rt_err uerr = {0};
        st = kin_clip_detect_units(c, &conv, &h, &uerr);
        printf("%-42s frames %5d joints %2d units %s scale %.7g up %c height %.3f m\n", cc->file,
               c->n_frames, c->n_joints, st == RT_OK ? "ok" : "--", conv.scale,
               conv.up ? conv.up : '-', h);
        if (cc->human) {
            CHECK_EQ_INT(st, RT_OK);
            CHECK(conv.scale == cc->scale);
            CHECK_EQ_INT(conv.up, cc->up);
            /* Joint-centre span in frame 0 (toe to head End Site): a
             * little under stature, and frame 0 may not be upright. */
            CHECK(h >= 1.3 && h <= 2.0);
        }
        kin_clip_free(c);
    }

    /* Clip-specific facts. */
    struct kin_clip *c = NULL;
    snprintf(path, sizeof path, "%s/clips/edge/Boxing_Toes.bvh", test_data_dir());
    if (kin_bvh_load(path, &c, NULL) == RT_OK) {
        CHECK_EQ_INT(c->n_frames, 3070);
        CHECK_EQ_STR(c->warning, "Frames: 3069 declared, 3070 rows read; using 3070");
        kin_clip_free(c);
    }
    snprintf(path, sizeof path, "%s/clips/edge/full_precision_frame_time.bvh", test_data_dir());
    if (kin_bvh_load(path, &c, NULL) == RT_OK) {
        CHECK(c->frame_time == 0.0417083750417);
        char *js = kin_clip_inspect_json(c);
        CHECK(js && strstr(js, "\"frame_time\":0.0417083750417,"));
        free(js);
        kin_clip_free(c);
    }
    /* Root CHANNELS Zrot Xrot Yrot Xpos Ypos Zpos: the position is columns
     * 3..5, the rotation Rz(c0) Rx(c1) Ry(c2). Row 0: 5 -3 0 10 50 -20. */
    snprintf(path, sizeof path, "%s/clips/edge/rotation_first_root.bvh", test_data_dir());
    if (kin_bvh_load(path, &c, NULL) == RT_OK) {
        double pos[18], rot[54], R[9], Rk[9], want[3] = {10, 50, -20};
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK(max_abs_diff(pos, want, 3) == 0);
        ref_rot('z', 5, R);
        ref_rot('x', -3, Rk);
        ref_mul(R, Rk, R);
        ref_rot('y', 0, Rk);
        ref_mul(R, Rk, R);
        CHECK(max_abs_diff(rot, R, 9) < 1e-15);
        for (int f = 0; f < c->n_frames; f++) {
            kin_clip_global(c, f, NULL, pos, rot);
            CHECK(max_abs_diff(pos, c->motion + f * c->n_channels + 3, 3) == 0);
        }
        kin_clip_free(c);
    }
    /* milad.bvh: every joint has 6 channels; its position channels replace
     * OFFSET (hips y 94.09 cm, not 93.02 + 94.09), so RightUpLeg sits at
     * hips + R_hips (its channels), not R_hips (OFFSET + channels). */
    snprintf(path, sizeof path, "%s/clips/edge/milad.bvh", test_data_dir());
    if (kin_bvh_load(path, &c, NULL) == RT_OK) {
        int n = c->n_joints + c->n_end_sites;
        double *pos = malloc(sizeof(double) * 3 * n), *rot = malloc(sizeof(double) * 9 * n);
        int ru = kin_clip_find_joint(c, "RightUpLeg");
        CHECK_EQ_INT(ru, 1);
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK_NEAR(pos[1], 94.085983, 1e-12);
        double t[3] = {-9.266407, -1.625247, -0.024537}, w[3];
        ref_apply(rot, t, w);
        for (int a = 0; a < 3; a++) w[a] += pos[a];
        CHECK(max_abs_diff(pos + 3 * ru, w, 3) < 1e-12);
        free(pos);
        free(rot);
        kin_clip_free(c);
    }
    snprintf(path, sizeof path, "%s/clips/edge/test_freebvh.bvh", test_data_dir());
    if (kin_bvh_load(path, &c, NULL) == RT_OK) {
        CHECK_EQ_INT(kin_clip_find_joint(c, "mixamorig:Hips"), 0);
        CHECK_EQ_INT(kin_clip_find_joint(c, "mixamorig:hips"), -1);
        CHECK(kin_clip_find_joint(c, "mixamorig:HeadTop_End_end") >= c->n_joints);
        kin_clip_free(c);
    }
    /* A missing file is an I/O error naming the path. */
    struct rt_err err = {0};
    c = (struct kin_clip *)1;
    CHECK_EQ_INT(kin_bvh_load("/nonexistent/x.bvh", &c, &err), RT_EIO);
    CHECK(c == NULL);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Hand-written poses                                                       */
/* ------------------------------------------------------------------------ */

#define TINY_FMT \
    "HIERARCHY\n" \
    "ROOT r\n" \
    "{\n" \
    "  OFFSET 0 0 0\n" \
    "  CHANNELS 6 Xposition Yposition Zposition %s\n" \
    "  JOINT c\n" \
    "  {\n" \
    "    OFFSET %s\n" \
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n" \
    "    End Site\n" \
    "    {\n" \
    "      OFFSET 0 0 1\n" \
    "    }\n" \
    "  }\n" \
    "}\n" \
    "MOTION\n" \
    "Frames: 1\n" \
    "Frame Time: 0.1\n" \
    "%s\n"

static struct kin_clip *tiny(const char *root_rot, const char *child_off, const char *row)
{
    char text[1024];
    snprintf(text, sizeof text, TINY_FMT, root_rot, child_off, row);
    return parse_ok(text, "tiny");
}

static void test_known_poses(void)
{
    double pos[9], rot[27], R[9], Rk[9];
    struct kin_clip *c;

    /* 90 deg about Z on the root: child at OFFSET (1,0,0) lands on (0,1,0),
     * its End Site (0,0,1) further on at (0,1,1). */
    c = tiny("Zrotation Xrotation Yrotation", "1 0 0", "0 0 0 90 0 0 0 0 0");
    if (c) {
        double want[9] = {0, 0, 0, 0, 1, 0, 0, 1, 1};
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK(max_abs_diff(pos, want, 9) < 1e-15);
        CHECK_EQ_INT(c->n_joints, 2);
        CHECK_EQ_INT(c->n_end_sites, 1);
        CHECK_EQ_STR(c->joints[2].name, "c_end");
        CHECK_EQ_INT(c->joints[2].parent, 1);
        kin_clip_free(c);
    }
    /* Same angles Z=90 X=90 Y=0, two channel orders. Intrinsic ZXY:
     * Rz Rx (0,1,0) = Rz (0,0,1) = (0,0,1). Intrinsic XYZ: Rx Ry Rz (0,1,0)
     * = Rx (-1,0,0) = (-1,0,0). (Extrinsic would swap the two.) */
    c = tiny("Zrotation Xrotation Yrotation", "0 1 0", "0 0 0 90 90 0 0 0 0");
    if (c) {
        double want[3] = {0, 0, 1};
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK(max_abs_diff(pos + 3, want, 3) < 1e-15);
        kin_clip_free(c);
    }
    c = tiny("Xrotation Yrotation Zrotation", "0 1 0", "0 0 0 90 0 90 0 0 0");
    if (c) {
        double want[3] = {-1, 0, 0};
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK(max_abs_diff(pos + 3, want, 3) < 1e-15);
        kin_clip_free(c);
    }
    /* General angles against the reference model, root YXZ then child ZXY:
     * R_child = Ry(30) Rx(40) Rz(50) * Rz(-20) Rx(15) Ry(70). */
    c = tiny("Yrotation Xrotation Zrotation", "0.5 2 -1", "1 2 3 30 40 50 -20 15 70");
    if (c) {
        double Rr[9], Rc[9], p[3], off[3] = {0.5, 2, -1};
        ref_rot('y', 30, Rr);
        ref_rot('x', 40, Rk);
        ref_mul(Rr, Rk, Rr);
        ref_rot('z', 50, Rk);
        ref_mul(Rr, Rk, Rr);
        ref_rot('z', -20, Rc);
        ref_rot('x', 15, Rk);
        ref_mul(Rc, Rk, Rc);
        ref_rot('y', 70, Rk);
        ref_mul(Rc, Rk, Rc);
        ref_mul(Rr, Rc, R);
        ref_apply(Rr, off, p);
        p[0] += 1, p[1] += 2, p[2] += 3;
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK(max_abs_diff(rot, Rr, 9) < 1e-15);
        CHECK(max_abs_diff(rot + 9, R, 9) < 1e-15);
        CHECK(max_abs_diff(pos + 3, p, 3) < 1e-14);
        /* End Site: child's rotation, child's position + R (0,0,1). */
        double e[3] = {p[0] + R[2], p[1] + R[5], p[2] + R[8]};
        CHECK(max_abs_diff(pos + 6, e, 3) < 1e-14);
        CHECK(max_abs_diff(rot + 18, R, 9) < 1e-15);
        /* Conversion: up y, scale 2: p' = 2 (x, -z, y), R' = A R A^T. */
        struct kin_bvh_convert conv = {2.0, 'y'};
        double cpos[9], crot[27], A[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0},
                                   At[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0}, W[9];
        kin_clip_global(c, 0, &conv, cpos, crot);
        double wp[3] = {2 * 1.0, 2 * -3.0, 2 * 2.0};
        CHECK(max_abs_diff(cpos, wp, 3) == 0);
        ref_mul(A, R, W);
        ref_mul(W, At, W);
        CHECK(max_abs_diff(crot + 9, W, 9) < 1e-15);
        /* Up z is the identity apart from scale. */
        struct kin_bvh_convert zc = {0.5, 'z'};
        kin_clip_global(c, 0, &zc, cpos, crot);
        for (int i = 0; i < 9; i++) cpos[i] *= 2;
        CHECK(max_abs_diff(cpos, pos, 9) == 0);
        CHECK(max_abs_diff(crot, rot, 27) == 0);
        kin_clip_free(c);
    }
    /* A 90 deg turn about Z in a y-up clip is a turn about -Y once z is up:
     * A Rz(90) A^T = Ry(-90). */
    c = tiny("Zrotation Xrotation Yrotation", "1 0 0", "0 0 0 90 0 0 0 0 0");
    if (c) {
        struct kin_bvh_convert conv = {1.0, 'y'};
        kin_clip_global(c, 0, &conv, pos, rot);
        ref_rot('y', -90, R);
        CHECK(max_abs_diff(rot, R, 9) < 1e-15);
        kin_clip_free(c);
    }
    /* Position channels replace OFFSET: root OFFSET (5,5,5) with position
     * channels (1,2,3) sits at (1,2,3); a child with 6 channels, OFFSET
     * (10,0,0) and positions (0,1,0) sits 1 above its parent. Rotation
     * channels listed before position channels are read from their own
     * columns. */
    c = parse_ok("HIERARCHY\nROOT r\n{\nOFFSET 5 5 5\n"
                 "CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition\n"
                 "JOINT c\n{\nOFFSET 10 0 0\n"
                 "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n}\n}\n"
                 "MOTION\nFrames: 1\nFrame Time: 0.5\n0 0 0 1 2 3 0 1 0 0 0 0\n",
                 "replace");
    if (c) {
        double want[6] = {1, 2, 3, 1, 3, 3};
        kin_clip_global(c, 0, NULL, pos, rot);
        CHECK(max_abs_diff(pos, want, 6) == 0);
        CHECK_EQ_INT(c->n_end_sites, 0); /* leaf JOINT, no End Site */
        kin_clip_free(c);
    }
}

/* ------------------------------------------------------------------------ */
/* Whitespace and line-end variants                                         */
/* ------------------------------------------------------------------------ */

static const char *BASE =
    "HIERARCHY\n"
    "ROOT mixamorig:Hips\n"
    "{\n"
    "  OFFSET 0 93.5 0\n"
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "  JOINT Bip01 L Thigh\n"
    "  {\n"
    "    OFFSET 1.5e1 -2 0.25\n"
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n"
    "    JOINT left.knee-1\n"
    "    {\n"
    "      OFFSET 0 -40 0\n"
    "      CHANNELS 3 Zrotation Xrotation Yrotation\n"
    "      End Site\n"
    "      {\n"
    "        OFFSET 0 -1 0\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "MOTION\n"
    "Frames: 3\n"
    "Frame Time: 0.0333333\n"
    "1 2 3 4 5 6 7 8 9 10 11 12\n"
    "-1.5 2e-3 +3 4.25 -5E+1 6. .7 8 9 10 11 12\n"
    "0 0 0 0 0 0 0 0 0 0 0 0\n";

static char *replace_all(const char *s, const char *from, const char *to)
{
    struct sbuf b = {0};
    size_t fl = strlen(from);
    char one[2] = {0, 0};
    sb_add(&b, "");
    while (*s) {
        if (strncmp(s, from, fl) == 0) {
            sb_add(&b, to);
            s += fl;
        } else {
            one[0] = *s++;
            sb_add(&b, one);
        }
    }
    return b.p;
}

static void test_borrowed(void)
{
    check_borrowed(BASE, strlen(BASE), "base");
    /* The last row at the very end of the input, without a line end. */
    check_borrowed(BASE, strlen(BASE) - 1, "no final newline");
    char *crlf = replace_all(BASE, "\n", "\r\n"), *cr = replace_all(BASE, "\n", "\r");
    char *tabs = replace_all(BASE, " ", " \t  ");
    if (crlf) check_borrowed(crlf, strlen(crlf), "crlf");
    if (cr) check_borrowed(cr, strlen(cr) - 1, "cr, no final line end");
    if (tabs) check_borrowed(tabs, strlen(tabs), "tabs");
    free(crlf);
    free(cr);
    free(tabs);
    /* A long zero-padded number (a token longer than the row reader's buffer). */
    char *padded = replace_all(BASE, "4.25", "0000000000000000000000000000000000000000000000000000000000000000000000000"
                                             "0000000000000000000000000000000000000000000000000000000000000004.25");
    if (padded) check_borrowed(padded, strlen(padded), "a 140-byte number");
    free(padded);
}

static void test_variants(void)
{
    struct kin_clip *base = parse_ok(BASE, "base");
    if (!base) return;
    CHECK_EQ_STR(base->joints[0].name, "mixamorig:Hips");
    CHECK_EQ_STR(base->joints[1].name, "Bip01 L Thigh");
    CHECK_EQ_STR(base->joints[2].name, "left.knee-1");
    CHECK_EQ_STR(base->joints[3].name, "left.knee-1_end");
    CHECK_EQ_INT(kin_clip_find_joint(base, "Bip01 L Thigh"), 1);
    CHECK_EQ_INT(kin_clip_find_joint(base, "nope"), -1);
    CHECK_EQ_INT(kin_clip_find_joint(NULL, "nope"), -1);
    CHECK(base->joints[1].offset[0] == 15.0);
    CHECK(base->motion[12] == -1.5 && base->motion[13] == 2e-3 && base->motion[16] == -50.0);
    CHECK(base->frame_time == 0.0333333);

    char *v[8];
    int nv = 0;
    v[nv++] = replace_all(BASE, "\n", "\r\n");                    /* CRLF */
    v[nv++] = replace_all(BASE, " ", "\t");                       /* tabs */
    v[nv++] = replace_all(BASE, " ", " \t  ");                    /* runs */
    v[nv++] = replace_all(BASE, "\n", "\n\n \t\n");               /* blank lines */
    v[nv++] = replace_all(BASE, "\n", "\r");                      /* old Mac CR */
    v[nv++] = replace_all(BASE, "End Site", "End \t  Site");      /* End Site spacing */
    v[nv++] = replace_all(BASE, "\n  {", " {");                   /* brace on name line */
    {
        char *t = replace_all(BASE, "\n", " \t\r\n"); /* trailing whitespace + CRLF */
        struct sbuf b = {0};
        sb_add(&b, "\xef\xbb\xbf"); /* UTF-8 BOM */
        sb_add(&b, t);
        free(t);
        v[nv++] = b.p;
    }
    for (int i = 0; i < nv; i++) {
        char label[32];
        snprintf(label, sizeof label, "variant %d", i);
        struct kin_clip *c = parse_ok(v[i], label);
        if (c) {
            CHECK_EQ_INT(c->n_frames, 3);
            CHECK_EQ_INT(c->n_joints, 3);
            CHECK_EQ_INT(c->n_end_sites, 1);
            CHECK_EQ_INT(c->n_channels, 12);
            CHECK(c->frame_time == base->frame_time);
            CHECK_BITS_EQ(c->motion, base->motion, 36);
            int same = 1;
            for (int j = 0; j < 4; j++) {
                same &= strcmp(c->joints[j].name, base->joints[j].name) == 0;
                same &= memcmp(c->joints[j].offset, base->joints[j].offset, sizeof(double) * 3) == 0;
                same &= c->joints[j].parent == base->joints[j].parent;
            }
            if (!same) fprintf(stderr, "%s: skeleton differs\n", label);
            CHECK(same);
            kin_clip_free(c);
        }
        free(v[i]);
    }
    /* Inner whitespace of a name folds to one space. */
    char *t = replace_all(BASE, "Bip01 L Thigh", "Bip01\t L  Thigh");
    struct kin_clip *c = parse_ok(t, "name spaces");
    if (c) CHECK_EQ_STR(c->joints[1].name, "Bip01 L Thigh");
    kin_clip_free(c);
    free(t);
    /* Declared 0 frames with no rows is a valid, empty clip. */
    t = replace_all(BASE, "Frames: 3", "Frames: 0");
    char *cut = strstr(t, "Frame Time: 0.0333333\n");
    cut[strlen("Frame Time: 0.0333333\n")] = 0;
    c = parse_ok(t, "zero frames");
    if (c) {
        CHECK_EQ_INT(c->n_frames, 0);
        CHECK(c->motion == NULL);
        CHECK(c->warning[0] == 0);
        /* Rest pose, a partial skeleton 43 units tall: no unit fits. */
        struct kin_bvh_convert conv = {0, 0};
        struct rt_err uerr = {0};
        CHECK_EQ_INT(kin_clip_detect_units(c, &conv, NULL, &uerr), RT_EINVAL);
        CHECK(strstr(uerr.msg, "spans 43 units along y") != NULL);
        check_inspect_json(c);
        kin_clip_free(c);
    }
    free(t);
    /* More rows than declared: kept, with a warning. */
    t = replace_all(BASE, "Frames: 3", "Frames: 2");
    c = parse_ok(t, "extra rows");
    if (c) {
        CHECK_EQ_INT(c->n_frames, 3);
        CHECK_EQ_INT(c->declared_frames, 2);
        CHECK_EQ_STR(c->warning, "Frames: 2 declared, 3 rows read; using 3");
        check_inspect_json(c);
        kin_clip_free(c);
    }
    free(t);
    kin_clip_free(base);
}

/* ------------------------------------------------------------------------ */
/* Malformed input                                                          */
/* ------------------------------------------------------------------------ */

static void test_malformed(void)
{
    /* Line numbers below refer to BASE: line 22 is "Frames: 3", 23 the
     * Frame Time, 24..26 the rows. */
    char *t;
    /* Truncated mid-row: the last row stops after 4 values. */
    t = strdup(BASE);
    *strstr(t, "0 0 0 0 0 0 0 0") = 0;
    strcat(t, "0 0 0 0");
    expect_fail(t, RT_EPARSE, 26, "row 3 has 4 values, expected 12", "mid-row");
    free(t);
    /* Truncated after whole rows: fewer than declared. */
    t = strdup(BASE);
    *strstr(t, "0 0 0 0 0 0 0 0") = 0;
    expect_fail(t, RT_EPARSE, 25, "truncated: Frames: 3 declared, 2 rows", "short");
    free(t);
    /* Too many values in a row. */
    t = replace_all(BASE, "10 11 12\n0 0", "10 11 12 13\n0 0");
    expect_fail(t, RT_EPARSE, 25, "row 2 has 13 values, expected 12", "long row");
    free(t);
    /* Truncated before MOTION, and inside the hierarchy. */
    t = strdup(BASE);
    *strstr(t, "MOTION") = 0;
    expect_fail(t, RT_EPARSE, 20, "truncated: end of file before MOTION", "no MOTION");
    *strstr(t, "    JOINT left") = 0;
    expect_fail(t, RT_EPARSE, 9, "truncated: end of file inside joint 'Bip01 L Thigh'",
                "mid-hierarchy");
    free(t);
    /* Missing '{' after a JOINT name. */
    t = replace_all(BASE, "  JOINT Bip01 L Thigh\n  {\n", "  JOINT Bip01 L Thigh\n");
    expect_fail(t, RT_EPARSE, 7, "expected '{' after JOINT name, got 'OFFSET'", "no brace");
    free(t);
    /* CHANNELS 4, CHANNELS 0, unknown and repeated channels. */
    t = replace_all(BASE, "CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT",
                    "CHANNELS 4 Zrotation Xrotation Yrotation Xposition\n    JOINT");
    expect_fail(t, RT_EPARSE, 9, "CHANNELS 4: a joint has 3 or 6 channels", "channels 4");
    free(t);
    t = replace_all(BASE, "CHANNELS 3 Zrotation Xrotation Yrotation\n    JOINT",
                    "CHANNELS 0\n    JOINT");
    expect_fail(t, RT_EPARSE, 9, "CHANNELS 0", "channels 0");
    free(t);
    t = replace_all(BASE, "3 Zrotation Xrotation Yrotation\n    JOINT",
                    "3 Zrotation Wrotation Yrotation\n    JOINT");
    expect_fail(t, RT_EPARSE, 9, "unknown channel 'Wrotation'", "bad channel");
    free(t);
    t = replace_all(BASE, "3 Zrotation Xrotation Yrotation\n    JOINT",
                    "3 Zrotation Xrotation Zrotation\n    JOINT");
    expect_fail(t, RT_EPARSE, 9, "listed twice", "dup channel");
    free(t);
    /* Bad numbers: in a row, in an OFFSET, nan, inf, hex, overflow. */
    t = replace_all(BASE, "-1.5 2e-3", "-1.5 1.2.3");
    expect_fail(t, RT_EPARSE, 25, "row 2: value 2 is not a number: '1.2.3'", "1.2.3");
    free(t);
    const char *bad[] = {"nan", "inf", "-infinity", "0x10", "1e999", "1,5", "--1", "", NULL};
    for (int i = 0; bad[i]; i++) {
        char from[64];
        snprintf(from, sizeof from, "1 2 3 4 5 6 7 8 9 10 11 %s\n", bad[i][0] ? bad[i] : "");
        t = replace_all(BASE, "1 2 3 4 5 6 7 8 9 10 11 12\n", from);
        if (bad[i][0]) expect_fail(t, RT_EPARSE, 24, "row 1: value 12 is not a number", bad[i]);
        else expect_fail(t, RT_EPARSE, 24, "row 1 has 11 values, expected 12", "missing");
        free(t);
    }
    t = replace_all(BASE, "OFFSET 0 -40 0", "OFFSET 0 -4O 0");
    expect_fail(t, RT_EPARSE, 12, "OFFSET value 2 is not a number: '-4O'", "offset");
    free(t);
    /* Frames: -1, not a number, over the limit; Frame Time 0 and junk. */
    t = replace_all(BASE, "Frames: 3", "Frames: -1");
    expect_fail(t, RT_EPARSE, 22, "Frames: must be a non-negative integer, got '-1'", "frames -1");
    free(t);
    t = replace_all(BASE, "Frames: 3", "Frames: 3x");
    expect_fail(t, RT_EPARSE, 22, "non-negative integer", "frames 3x");
    free(t);
    t = replace_all(BASE, "Frame Time: 0.0333333", "Frame Time: 0");
    expect_fail(t, RT_EPARSE, 23, "Frame Time must be positive", "frame time 0");
    free(t);
    t = replace_all(BASE, "Frame Time: 0.0333333", "Frame Time: nan");
    expect_fail(t, RT_EPARSE, 23, "Frame Time: expected a number", "frame time nan");
    free(t);
    t = replace_all(BASE, "Frame Time: 0.0333333", "Frame Time: 0.03 1 2");
    expect_fail(t, RT_EPARSE, 23, "unexpected '1' after Frame Time", "frame time junk");
    free(t);
    t = replace_all(BASE, "Frames: 3", "Frame: 3");
    expect_fail(t, RT_EPARSE, 22, "expected 'Frames:'", "frames keyword");
    free(t);
    /* Frames: 99999999999 with no rows: refused at the header. */
    t = strdup(BASE);
    strcpy(strstr(t, "Frames: 3"), "Frames: 99999999999\nFrame Time: 0.01\n");
    expect_fail(t, RT_ELIMIT, 22, "Frames: 99999999999 exceeds the limit of 10000000",
                "frames huge");
    free(t);
    /* Unknown keyword; MOTION inside a joint; a second ROOT; End Site with
     * CHANNELS; no name; NUL byte; not a BVH at all; empty input. */
    t = replace_all(BASE, "    OFFSET 1.5e1", "    SCALE 2\n    OFFSET 1.5e1");
    expect_fail(t, RT_EPARSE, 8, "unknown keyword 'SCALE' in joint 'Bip01 L Thigh'", "keyword");
    free(t);
    t = replace_all(BASE, "  }\n}\nMOTION", "  }\nMOTION");
    expect_fail(t, RT_EPARSE, 20, "MOTION inside joint 'mixamorig:Hips' (missing '}')", "brace");
    free(t);
    t = replace_all(BASE, "}\nMOTION", "}\nROOT again\n{\n}\nMOTION");
    expect_fail(t, RT_EPARSE, 21, "a second ROOT", "two roots");
    free(t);
    t = replace_all(BASE, "OFFSET 0 -1 0", "OFFSET 0 -1 0\nCHANNELS 3 Xrotation Yrotation Zrotation");
    expect_fail(t, RT_EPARSE, 17, "End Site cannot have CHANNELS", "end channels");
    free(t);
    t = replace_all(BASE, "JOINT Bip01 L Thigh", "JOINT");
    expect_fail(t, RT_EPARSE, 6, "expected a name after JOINT", "no name");
    free(t);
    t = replace_all(BASE, "JOINT Bip01 L Thigh", "JOINT Bip\x01");
    expect_fail(t, RT_EPARSE, 6, "not valid UTF-8", "control char name");
    free(t);
    t = replace_all(BASE, "JOINT Bip01 L Thigh", "JOINT Bip\xc3\x28");
    expect_fail(t, RT_EPARSE, 6, "not valid UTF-8", "bad utf8 name");
    free(t);
    t = replace_all(BASE, "JOINT Bip01 L Thigh", "JOINT H\xc3\xbc" "fte");
    struct kin_clip *c = parse_ok(t, "utf8 name");
    if (c) CHECK_EQ_STR(c->joints[1].name, "H\xc3\xbc" "fte");
    kin_clip_free(c);
    free(t);
    t = replace_all(BASE, "JOINT left.knee-1\n    {\n      OFFSET 0 -40 0\n      CHANNELS 3 Zrotation Xrotation Yrotation\n",
                    "JOINT left.knee-1\n    {\n      CHANNELS 3 Zrotation Xrotation Yrotation\n");
    expect_fail(t, RT_EPARSE, 13, "needs OFFSET and CHANNELS", "no offset");
    free(t);
    {
        char nul[] = "HIERARCHY\nROOT a\0b\n";
        expect_fail_n(nul, sizeof nul - 1, RT_EPARSE, 2, "NUL byte", "nul");
    }
    expect_fail("<html>not a clip</html>\n", RT_EPARSE, 1, "expected HIERARCHY", "html");
    expect_fail("", RT_EPARSE, 0, "empty file", "empty");
    expect_fail("\n \n\t\n", RT_EPARSE, 3, "empty file", "blank");
    expect_fail("HIERARCHY\n", RT_EPARSE, 1, "expected ROOT", "only hierarchy");
    expect_fail("HIERARCHY\nJOINT a\n", RT_EPARSE, 2, "expected ROOT, got 'JOINT'", "no root");
    {
        /* NULL text with len 0 is an empty input, not a crash. */
        struct kin_clip *e = NULL;
        CHECK_EQ_INT(kin_bvh_parse(NULL, 0, NULL, &e, NULL), RT_EPARSE);
        CHECK(e == NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* Limits: N accepted, N+1 rejected                                         */
/* ------------------------------------------------------------------------ */

/* A root with n-1 leaf children (flat) or a chain n deep, 3 channels each,
 * then `frames_hdr` and the given rows. */
static char *gen_clip(int n, int chain, const char *frames_hdr, const char *rows)
{
    struct sbuf b = {0};
    char line[128];
    sb_add(&b, "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n");
    for (int i = 1; i < n; i++) {
        snprintf(line, sizeof line, "JOINT j%d\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n%s",
                 i, chain ? "" : "}\n");
        sb_add(&b, line);
    }
    if (chain)
        for (int i = 1; i < n; i++) sb_add(&b, "}\n");
    sb_add(&b, "}\nMOTION\n");
    sb_add(&b, frames_hdr);
    sb_add(&b, "\nFrame Time: 0.01\n");
    sb_add(&b, rows);
    return b.p;
}

static void test_limits(void)
{
    struct kin_clip *c;
    char *t;
    /* Joints. */
    t = gen_clip(KIN_BVH_MAX_JOINTS, 0, "Frames: 0", "");
    c = parse_ok(t, "max joints");
    if (c) CHECK_EQ_INT(c->n_joints, KIN_BVH_MAX_JOINTS);
    kin_clip_free(c);
    free(t);
    t = gen_clip(KIN_BVH_MAX_JOINTS + 1, 0, "Frames: 0", "");
    expect_fail(t, RT_ELIMIT, 5 + 5 * (KIN_BVH_MAX_JOINTS - 1) + 1, "more than 1024 joints",
                "max joints + 1");
    free(t);
    /* Depth. */
    t = gen_clip(KIN_BVH_MAX_DEPTH, 1, "Frames: 0", "");
    c = parse_ok(t, "max depth");
    if (c) CHECK_EQ_INT(c->joints[KIN_BVH_MAX_DEPTH - 1].parent, KIN_BVH_MAX_DEPTH - 2);
    kin_clip_free(c);
    free(t);
    t = gen_clip(KIN_BVH_MAX_DEPTH + 1, 1, "Frames: 0", "");
    expect_fail(t, RT_ELIMIT, 5 + 4 * (KIN_BVH_MAX_DEPTH - 1) + 1, "nested deeper than 256",
                "max depth + 1");
    free(t);
    /* Frames: the limit itself passes the header (then the rows are short);
     * one more is refused there. */
    t = gen_clip(2, 0, "Frames: 10000000", "0 0 0 0 0 0\n");
    expect_fail(t, RT_EPARSE, 15, "truncated: Frames: 10000000 declared, 1 rows", "max frames");
    free(t);
    t = gen_clip(2, 0, "Frames: 10000001", "0 0 0 0 0 0\n");
    expect_fail(t, RT_ELIMIT, 13, "exceeds the limit of 10000000", "max frames + 1");
    free(t);
    /* A lying header must not size the motion array: 10^7 frames of 1024
     * joints x 3 channels would be 245 GB; the input holds one row. Outside
     * the sanitizers an address-space limit makes any such attempt fail
     * (RT_ENOMEM instead of the expected RT_EPARSE). */
    {
        struct sbuf row = {0};
        for (int i = 0; i < 3 * KIN_BVH_MAX_JOINTS; i++) sb_add(&row, "0 ");
        sb_add(&row, "\n");
        t = gen_clip(KIN_BVH_MAX_JOINTS, 0, "Frames: 10000000", row.p);
        struct rlimit old, lim;
        int limited = 0;
        if (!TEST_ASAN && getrlimit(RLIMIT_AS, &old) == 0) {
            long pages = 0, page = 4096;
            FILE *f = fopen("/proc/self/statm", "r");
            if (f) {
                if (fscanf(f, "%ld", &pages) != 1) pages = 0;
                fclose(f);
            }
            lim = old;
            lim.rlim_cur = (rlim_t)pages * (rlim_t)page + ((rlim_t)1 << 30);
            if (pages > 0 && (old.rlim_cur == RLIM_INFINITY || lim.rlim_cur < old.rlim_cur))
                limited = setrlimit(RLIMIT_AS, &lim) == 0;
        }
        expect_fail(t, RT_EPARSE, 5 + 5 * (KIN_BVH_MAX_JOINTS - 1) + 5,
                    "truncated: Frames: 10000000 declared, 1 rows", "lying header");
        if (limited) setrlimit(RLIMIT_AS, &old);
        free(t);
        free(row.p);
    }
    /* Line length: KIN_BVH_MAX_LINE bytes pass, one more is refused. */
    {
        size_t n = KIN_BVH_MAX_LINE;
        char *row = malloc(n + 2);
        memset(row, ' ', n);
        memcpy(row, "1 2 3 4 5 6", 11);
        row[n] = '\n';
        row[n + 1] = 0;
        t = gen_clip(2, 0, "Frames: 1", row);
        c = parse_ok(t, "max line");
        if (c) CHECK(c->motion[5] == 6.0);
        kin_clip_free(c);
        free(t);
        row[n] = ' ';
        row[n + 1] = 0;
        t = gen_clip(2, 0, "Frames: 1", row);
        strcat(t, "\n");
        expect_fail(t, RT_ELIMIT, 15, "line longer than 1048576 bytes", "max line + 1");
        free(t);
        free(row);
    }
    /* Bytes: refused from the length alone, before the text is read (the
     * buffer here is far shorter than the length claimed). */
    {
        struct kin_clip *e = (struct kin_clip *)1;
        struct rt_err err = {0};
        CHECK_EQ_INT(kin_bvh_parse("HIERARCHY", (size_t)KIN_BVH_MAX_BYTES + 1, "big.bvh", &e, &err),
                     RT_ELIMIT);
        CHECK(e == NULL);
        CHECK_EQ_STR(err.where, "big.bvh");
    }
}

/* ------------------------------------------------------------------------ */
/* Value bounds (bvh.h): N accepted, past N refused at the line              */
/* ------------------------------------------------------------------------ */

static void test_bounds(void)
{
    struct kin_clip *c;
    char *t;
    /* Frame Time in [KIN_BVH_MIN_FRAME_TIME, KIN_BVH_MAX_FRAME_TIME] s. */
    const char *ft_ok[] = {"1e-5", "0.00001", "10", "10.0", NULL};
    const char *ft_bad[] = {"1e-300", "1e-40", "9.9e-6", "10.001", "1e308", NULL};
    for (int i = 0; ft_ok[i]; i++) {
        char to[64];
        snprintf(to, sizeof to, "Frame Time: %s", ft_ok[i]);
        t = replace_all(BASE, "Frame Time: 0.0333333", to);
        c = parse_ok(t, ft_ok[i]);
        kin_clip_free(c);
        free(t);
    }
    for (int i = 0; ft_bad[i]; i++) {
        char to[64];
        snprintf(to, sizeof to, "Frame Time: %s", ft_bad[i]);
        t = replace_all(BASE, "Frame Time: 0.0333333", to);
        expect_fail(t, RT_EINVAL, 23, "Frame Time", ft_bad[i]);
        expect_fail(t, RT_EINVAL, 23, "[1e-05, 10] s", ft_bad[i]);
        free(t);
    }
    /* Position channels and OFFSETs: |x| <= KIN_BVH_MAX_POS file units. */
    t = replace_all(BASE, "1 2 3 4 5 6 7 8 9 10 11 12\n", "1e6 -1e6 3 4 5 6 7 8 9 10 11 12\n");
    c = parse_ok(t, "root at 1e6");
    kin_clip_free(c);
    free(t);
    t = replace_all(BASE, "1 2 3 4 5 6 7 8 9 10 11 12\n", "1e308 2 3 4 5 6 7 8 9 10 11 12\n");
    expect_fail(t, RT_EINVAL, 24, "row 1: value 1 (Xposition of 'mixamorig:Hips') is 1e+308", "root 1e308");
    free(t);
    t = replace_all(BASE, "0 0 0 0 0 0 0 0 0 0 0 0\n", "0 -1000001 0 0 0 0 0 0 0 0 0 0\n");
    expect_fail(t, RT_EINVAL, 26, "row 3: value 2 (Yposition", "root -1000001");
    free(t);
    t = replace_all(BASE, "OFFSET 0 -40 0", "OFFSET 0 -1e6 0");
    c = parse_ok(t, "offset 1e6");
    kin_clip_free(c);
    free(t);
    t = replace_all(BASE, "OFFSET 0 -40 0", "OFFSET 0 -1.5e6 0");
    expect_fail(t, RT_EINVAL, 12, "OFFSET value 2 is -1.5e+06", "offset 1.5e6");
    free(t);
    t = replace_all(BASE, "OFFSET 0 -1 0", "OFFSET 1e300 -1 0");
    expect_fail(t, RT_EINVAL, 16, "OFFSET value 1 is 1e+300", "end site offset");
    free(t);
    /* Rotation channels: |a| <= KIN_BVH_MAX_ANGLE degrees. */
    t = replace_all(BASE, "1 2 3 4 5 6 7 8 9 10 11 12\n", "1 2 3 4 5 6 7 8 9 10 11 -1e6\n");
    c = parse_ok(t, "angle 1e6");
    kin_clip_free(c);
    free(t);
    t = replace_all(BASE, "1 2 3 4 5 6 7 8 9 10 11 12\n", "1 2 3 4 5 6 7 8 9 10 11 1e308\n");
    expect_fail(t, RT_EINVAL, 24, "row 1: value 12 (Yrotation of 'left.knee-1') is 1e+308 degrees", "angle 1e308");
    free(t);
    t = replace_all(BASE, "1 2 3 4 5 6 7 8 9 10 11 12\n", "1 2 3 4 5 6 1000000.5 8 9 10 11 12\n");
    expect_fail(t, RT_EINVAL, 24, "the limit is 1e+06", "angle 1e6 + 0.5");
    free(t);
    /* Two joints of one name make the mapping ambiguous. */
    t = replace_all(BASE, "JOINT left.knee-1", "JOINT Bip01 L Thigh");
    expect_fail(t, RT_EINVAL, 10, "a second joint named 'Bip01 L Thigh'", "duplicate joint");
    free(t);
    t = replace_all(BASE, "JOINT left.knee-1", "JOINT mixamorig:Hips");
    expect_fail(t, RT_EINVAL, 10, "a second joint named 'mixamorig:Hips'", "duplicate of the root");
    free(t);
    /* Names that differ only in case or by folded blanks are distinct or equal as read. */
    t = replace_all(BASE, "JOINT left.knee-1", "JOINT bip01 l thigh");
    c = parse_ok(t, "case differs");
    kin_clip_free(c);
    free(t);
    t = replace_all(BASE, "JOINT left.knee-1", "JOINT Bip01  L\tThigh");
    expect_fail(t, RT_EINVAL, 10, "a second joint named 'Bip01 L Thigh'", "folded blanks");
    free(t);
}

int main(void)
{
    test_known_poses();
    test_variants();
    test_malformed();
    test_limits();
    test_bounds();
    test_borrowed();
    int have_data = test_real_clips();
    int rc = test_report("test_bvh");
    if (rc == 0 && !have_data) TEST_SKIP("shared/data/clips not found (set RT_SHARED_DATA)");
    return rc;
}
