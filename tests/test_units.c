/* test_units.c -- any units, either up axis (docs/profiles.md "Units and up
 * axis"): shared clips rewritten with every OFFSET and position channel
 * scaled by x0.01, x0.37, x23 and x1000, each kept Y-up and turned Z-up
 * (the root's offset, position channels and rotation turned by Rx(+90 deg),
 * the hierarchy below it unchanged), retarget onto G1 to the same robot
 * motion as the original: FK link positions within 0.1 mm. Every source's
 * size is its body's (metres per unit from its median height), so the
 * unit, recognized or not, does not change the result; the report names a
 * recognized unit. Also: a clip spanning 45 units, Z-up, is retargeted
 * rather than refused; a profile's units and up still win; a clip lying
 * in its first 40% of frames keeps its up axis. Reads the shared clips
 * (skips without them). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/rot.h"
#include "../retarget/batch.h"
#include "../retarget/engine.h"
#include "../retarget/job.h"
#include "../retarget/report.h"
#include "../retarget/retarget.h"
#include "clip_util.h"
#include "test.h"

#define TEST_UNITS_TOL_M 1e-4

/* ---- a BVH writer for the variants ---- */

struct buf {
    char *p;
    size_t n, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)k + 64;
        char *np = realloc(b->p, ncap);
        if (!np) abort();
        b->p = np;
        b->cap = ncap;
    }
}

static const char *const chan_name[6] = {"Xposition", "Yposition", "Zposition",
                                         "Xrotation", "Yrotation", "Zrotation"};

/* A = Rx(+90 deg): y -> z, z -> -y (bvh.h struct kin_bvh_convert). */
static void turn(const double *v, double *o)
{
    double x = v[0], y = v[1], z = v[2];
    o[0] = x, o[1] = -z, o[2] = y;
}

static void write_joint(struct buf *b, const struct kin_clip *c, int j, int depth, double k, int z_up)
{
    const struct kin_bvh_joint *jt = &c->joints[j];
    double off[3];
    for (int a = 0; a < 3; a++) off[a] = k * jt->offset[a];
    if (j == 0 && z_up) {
        double t[3];
        turn(off, t);
        memcpy(off, t, sizeof t);
    }
    char ind[300];
    int d = depth < 256 ? depth : 256;
    memset(ind, '\t', (size_t)d);
    ind[d] = 0;
    if (jt->end_site) {
        put(b, "%sEnd Site\n%s{\n%s\tOFFSET %.17g %.17g %.17g\n%s}\n", ind, ind, ind, off[0], off[1], off[2], ind);
        return;
    }
    put(b, "%s%s %s\n%s{\n%s\tOFFSET %.17g %.17g %.17g\n%s\tCHANNELS %d", ind, j == 0 ? "ROOT" : "JOINT",
        jt->name, ind, ind, off[0], off[1], off[2], ind, jt->n_channels);
    for (int i = 0; i < jt->n_channels; i++) put(b, " %s", chan_name[jt->chan[i]]);
    put(b, "\n");
    for (int ch = j + 1; ch < c->n_joints + c->n_end_sites; ch++)
        if (c->joints[ch].parent == j) write_joint(b, c, ch, depth + 1, k, z_up);
    put(b, "%s}\n", ind);
}

/* Euler angles (degrees) of R = R_ax[0](a0) R_ax[1](a1) R_ax[2](a2), the
 * channel order's intrinsic composition (bvh.h). */
static void euler_of(const double *R, const int ax[3], double deg[3])
{
    int i = ax[0], j = ax[1], kk = ax[2];
    double e = ((j - i + 3) % 3 == 1) ? 1.0 : -1.0; /* cyclic order: +1 */
#define M(r, c) R[3 * (r) + (c)]
    double s = e * M(i, kk);
    if (s > 1) s = 1;
    if (s < -1) s = -1;
    double a1 = asin(s);
    double a0 = atan2(-e * M(j, kk), M(kk, kk));
    double a2 = atan2(-e * M(i, j), M(i, i));
#undef M
    deg[0] = a0 * 180.0 / M_PI;
    deg[1] = a1 * 180.0 / M_PI;
    deg[2] = a2 * 180.0 / M_PI;
}

static void rot_axis(int axis, double deg, double *R)
{
    double a = deg * (M_PI / 180.0), c = cos(a), s = sin(a);
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I, sizeof I);
    if (axis == 0) R[4] = c, R[5] = -s, R[7] = s, R[8] = c;
    else if (axis == 1) R[0] = c, R[2] = s, R[6] = -s, R[8] = c;
    else R[0] = c, R[1] = -s, R[3] = s, R[4] = c;
}

/* The clip as BVH text, every length times k, turned Z-up when z_up (the
 * root must have three position and three rotation channels); with
 * n_lying > 0 instead only the first n_lying frames are turned (the body
 * lies along the up axis there). malloc'd. */
static char *write_variant_lying(const struct kin_clip *c, double k, int z_up, int n_lying, size_t *len);
static char *write_variant(const struct kin_clip *c, double k, int z_up, size_t *len)
{
    return write_variant_lying(c, k, z_up, 0, len);
}

static char *write_variant_lying(const struct kin_clip *c, double k, int z_up, int n_lying, size_t *len)
{
    struct buf b = {malloc(1 << 16), 0, 1 << 16};
    const struct kin_bvh_joint *root = &c->joints[0];
    int pos_at[3] = {-1, -1, -1}, rot_at[3], rot_ax[3], nr = 0;
    if (!b.p) abort();
    for (int i = 0; i < root->n_channels; i++) {
        if (root->chan[i] < KIN_XROT) pos_at[root->chan[i]] = i;
        else if (nr < 3) rot_at[nr] = i, rot_ax[nr] = root->chan[i] - KIN_XROT, nr++;
    }
    put(&b, "HIERARCHY\n");
    write_joint(&b, c, 0, 0, k, z_up);
    put(&b, "MOTION\nFrames: %d\nFrame Time: %.17g\n", c->n_frames, c->frame_time);
    double *row = malloc((size_t)c->n_channels * sizeof *row);
    if (!row) abort();
    for (int f = 0; f < c->n_frames; f++) {
        memcpy(row, c->motion + (size_t)f * (size_t)c->n_channels, (size_t)c->n_channels * sizeof *row);
        for (int j = 0; j < c->n_joints; j++)
            for (int i = 0; i < c->joints[j].n_channels; i++)
                if (c->joints[j].chan[i] < KIN_XROT) row[c->joints[j].chan_off + i] *= k;
        if (z_up || f < n_lying) {
            double t[3], tt[3], R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Rk[9], tmp[9], A[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
            for (int a = 0; a < 3; a++) t[a] = row[root->chan_off + pos_at[a]];
            turn(t, tt);
            for (int a = 0; a < 3; a++) row[root->chan_off + pos_at[a]] = tt[a];
            for (int i = 0; i < 3; i++) {
                rot_axis(rot_ax[i], row[root->chan_off + rot_at[i]], Rk);
                kin_mat_mul(R, Rk, tmp);
                memcpy(R, tmp, sizeof tmp);
            }
            kin_mat_mul(A, R, tmp);
            double deg[3];
            euler_of(tmp, rot_ax, deg);
            for (int i = 0; i < 3; i++) row[root->chan_off + rot_at[i]] = deg[i];
        }
        for (int i = 0; i < c->n_channels; i++) put(&b, i ? " %.17g" : "%.17g", row[i]);
        put(&b, "\n");
    }
    free(row);
    *len = b.n;
    return b.p;
}

/* ---- retargeting ---- */

struct result {
    int ok, n_frames;
    double *link_pos;              /* [n_frames * n_links * 3] FK of the solved states */
    struct rtg_source_units units; /* how the clip's units were settled */
    int report_named;              /* the report's "source_units" names a unit */
};

static void result_free(struct result *r)
{
    free(r->link_pos);
    memset(r, 0, sizeof *r);
}

/* Plans, builds and solves `text` onto g1 (the detected profile; with
 * units > 0 that profile at those metres per unit and up axis `up`). */
static void retarget(const struct kin_robot *g1, struct solver_backend *be, const char *text, size_t len,
                     double units, char up, struct result *out)
{
    struct rtg_job_spec s;
    struct rtg_job_plan p;
    struct rtg_targets t;
    struct rt_err e;
    memset(out, 0, sizeof *out);
    test_spec_bvh(&s, g1, text, len, "variant");
    if (rtg_job_plan(&s, &p, &e) != RT_OK) {
        fprintf(stderr, "plan: %s: %s\n", e.where, e.msg);
        return;
    }
    if (units > 0) {
        p.profile->units = units;
        p.profile->up = up;
    }
    if (rtg_job_build(g1, &p, &t, &e) != RT_OK) {
        fprintf(stderr, "build: %s: %s\n", e.where, e.msg);
        rtg_job_plan_free(&p);
        return;
    }
    struct rtg_batch_item item = {.t = &t};
    if (rtg_batch_solve(NULL, be, g1, &p.opt, &item, 1, NULL, NULL, &e) != RT_OK) {
        fprintf(stderr, "solve: %s: %s\n", e.where, e.msg);
        goto done;
    }
    cJSON *rep = NULL;
    struct rtg_report_info info = {.robot = "g1", .profile = p.profile_name, .backend = "cpu",
                                   .mode = "trajectory", .threads = 2, .batch_clips = 1};
    if (rtg_job_finish(NULL, g1, &t, item.state, 1, &info, &item.res, &rep, &e) == RT_OK) {
        const cJSON *su = cJSON_GetObjectItemCaseSensitive(rep, "source_units");
        out->report_named = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(su, "unit"));
        cJSON_Delete(rep);
    }
    int cols = rt_state_cols(&g1->tree), nl = g1->n_links;
    double *st = malloc((size_t)cols * sizeof *st), *rot = malloc((size_t)nl * 9 * sizeof *rot);
    out->link_pos = malloc((size_t)t.n_frames * (size_t)nl * 3 * sizeof *out->link_pos);
    if (!st || !rot || !out->link_pos) abort();
    for (int f = 0; f < t.n_frames; f++) {
        for (int i = 0; i < cols; i++) st[i] = item.state[(size_t)f * (size_t)cols + (size_t)i];
        kin_fk(g1, st, out->link_pos + (size_t)f * (size_t)nl * 3, rot);
    }
    free(st);
    free(rot);
    out->n_frames = t.n_frames;
    out->units = t.units;
    out->ok = 1;
done:
    free(item.state);
    rtg_targets_free(&t);
    rtg_job_plan_free(&p);
}

/* The largest distance between two results' link positions (metres);
 * INFINITY when either failed or their lengths differ. */
static double max_dist(const struct kin_robot *g1, const struct result *a, const struct result *b)
{
    if (!a->ok || !b->ok || a->n_frames != b->n_frames) return INFINITY;
    double worst = 0;
    size_t n = (size_t)a->n_frames * (size_t)g1->n_links;
    for (size_t i = 0; i < n; i++) {
        double d = 0;
        for (int c = 0; c < 3; c++) d += (a->link_pos[3 * i + c] - b->link_pos[3 * i + c]) *
                                         (a->link_pos[3 * i + c] - b->link_pos[3 * i + c]);
        if (sqrt(d) > worst) worst = sqrt(d);
    }
    return worst;
}

/* Every variant of `rel` retargets as the original. */
static void test_clip(const struct kin_robot *g1, struct solver_backend *be, const char *rel)
{
    static const double factor[] = {0.01, 0.37, 23, 1000};
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/%s", test_data_dir(), rel);
    char *text = test_slurp(path, &len);
    struct kin_clip *c = NULL;
    struct rt_err e;
    if (!text) TEST_SKIP("no shared clips");
    CHECK_EQ_INT(kin_bvh_parse(text, len, rel, &c, &e), RT_OK);
    free(text);
    if (!c) return;
    /* The clip's first frames (RT_TEST_UNITS_FRAMES, default 600): ten
     * solves of the whole 01_01.bvh take a minute on two cores. The
     * original is their x1 rewrite. */
    int cap = test_env_int("RT_TEST_UNITS_FRAMES", 600);
    if (c->n_frames > cap) c->n_frames = cap;
    text = write_variant(c, 1.0, 0, &len);

    struct result orig, var[4][2];
    retarget(g1, be, text, len, 0, 0, &orig);
    CHECK(orig.ok);
    CHECK(orig.units.unit != NULL && !orig.units.guessed && orig.units.up == 'y');
    CHECK(orig.report_named);
    double worst = 0;
    for (size_t i = 0; i < 4; i++)
        for (int z = 0; z < 2; z++) {
            size_t vlen;
            char *v = write_variant(c, factor[i], z, &vlen);
            struct kin_clip *vc = NULL;
            CHECK_EQ_INT(kin_bvh_parse(v, vlen, "variant", &vc, &e), RT_OK);
            /* The rewrite is the clip scaled and turned: frame 0's FK. */
            if (vc) {
                int n_all = c->n_joints + c->n_end_sites;
                double *p0 = malloc((size_t)n_all * 12 * sizeof *p0), *p1 = malloc((size_t)n_all * 12 * sizeof *p1);
                struct kin_bvh_convert cy = {1.0, 'y'}, cz = {1.0 / factor[i], z ? 'z' : 'y'};
                kin_clip_global(c, 0, &cy, p0, p0 + 3 * n_all);
                kin_clip_global(vc, 0, &cz, p1, p1 + 3 * n_all);
                double w0 = 0;
                for (int q = 0; q < 3 * n_all; q++)
                    if (fabs(p0[q] - p1[q]) > w0) w0 = fabs(p0[q] - p1[q]);
                CHECK(w0 < 1e-9);
                free(p0);
                free(p1);
                kin_clip_free(vc);
            }
            retarget(g1, be, v, vlen, 0, 0, &var[i][z]);
            CHECK(var[i][z].ok);
            CHECK(var[i][z].units.up_from_body);
            CHECK_EQ_INT(var[i][z].units.up, z ? 'z' : 'y');
            /* The metres per unit follow the factor: the body's size. */
            CHECK_NEAR(var[i][z].units.scale * factor[i] / orig.units.scale, 1.0, 1e-9);
            double d = max_dist(g1, &orig, &var[i][z]);
            CHECK(d <= TEST_UNITS_TOL_M);
            if (d > worst) worst = d;
            if (!(d <= TEST_UNITS_TOL_M))
                fprintf(stderr, "%s x%g %s-up: %.3g m from the original\n", rel, factor[i], z ? "Z" : "Y", d);
            free(v);
        }
    printf("%s: 8 variants (x0.01 x0.37 x23 x1000, Y-up and Z-up) within %.3g m of the original "
           "(recognized unit %s, read at %.6g m/unit from its height)\n",
           rel, worst, orig.units.unit ? orig.units.unit : "?", orig.units.scale);
    for (size_t i = 0; i < 4; i++)
        for (int z = 0; z < 2; z++) result_free(&var[i][z]);
    result_free(&orig);
    kin_clip_free(c);
    free(text);
}

/* The reported failure: a Z-up clip spanning 45 units was refused. Now it
 * is planned and built with a guessed scale; a profile's units and up win. */
static void test_45_units(const struct kin_robot *g1)
{
    size_t len, vlen;
    char path[512];
    snprintf(path, sizeof path, "%s/clips/jumping_jacks.bvh", test_data_dir());
    char *text = test_slurp(path, &len);
    struct kin_clip *c = NULL, *vc = NULL;
    struct rt_err e;
    if (!text) return;
    CHECK_EQ_INT(kin_bvh_parse(text, len, "jj", &c, &e), RT_OK);
    struct kin_bvh_convert conv;
    double h_m = 0;
    CHECK_EQ_INT(kin_clip_detect_units(c, &conv, &h_m, &e), RT_OK);
    double k = 45.0 / (h_m / conv.scale);
    char *v = write_variant(c, k, 1, &vlen);
    CHECK_EQ_INT(kin_bvh_parse(v, vlen, "v45", &vc, &e), RT_OK);
    CHECK_EQ_INT(kin_clip_detect_units(vc, &conv, NULL, &e), RT_EINVAL); /* no unit spans 45 */
    struct rtg_job_spec s;
    struct rtg_job_plan p;
    struct rtg_targets t;
    test_spec_bvh(&s, g1, v, vlen, "v45");
    CHECK_EQ_INT(rtg_job_plan(&s, &p, &e), RT_OK);
    if (p.profile) {
        CHECK_EQ_INT(rtg_job_build(g1, &p, &t, &e), RT_OK);
        CHECK(t.units.guessed && t.units.up == 'z' && t.units.unit == NULL);
        CHECK(t.units.height_units > 40 && t.units.height_units < 50);
        rtg_targets_free(&t);
        /* Explicit settings win: units and up from the profile. */
        p.profile->units = 0.02;
        p.profile->up = 'y';
        struct rtg_source_units u;
        CHECK_EQ_INT(rtg_source_units_clip(vc, p.profile, &u, &e), RT_OK);
        CHECK(u.scale == 0.02 && u.up == 'y' && !u.guessed && !u.up_from_body);
        p.profile->up = 0;
        CHECK_EQ_INT(rtg_source_units_clip(vc, p.profile, &u, &e), RT_OK);
        CHECK(u.scale == 0.02 && u.up == 'z' && !u.guessed);
        rtg_job_plan_free(&p);
    }
    free(v);
    kin_clip_free(vc);

    /* Up from the whole clip: the first 40% of the frames lying (turned
     * onto the up axis's side) make frame 0's span point along z, yet the
     * head stands above the feet along y in most frames. */
    v = write_variant_lying(c, 1.0, 0, c->n_frames * 2 / 5, &vlen);
    vc = NULL;
    CHECK_EQ_INT(kin_bvh_parse(v, vlen, "lying", &vc, &e), RT_OK);
    if (vc) {
        struct rtg_source_units u;
        CHECK_EQ_INT(kin_clip_detect_units(vc, &conv, NULL, &e), RT_OK);
        CHECK_EQ_INT(conv.up, 'z'); /* the frame-0 rule is fooled */
        CHECK_EQ_INT(rtg_source_units_clip(vc, NULL, &u, &e), RT_OK);
        CHECK(u.up == 'y' && u.up_from_body);
    }
    free(v);
    kin_clip_free(vc);
    kin_clip_free(c);
    free(text);
}

int main(void)
{
    struct kin_robot *g1 = NULL;
    struct solver_backend be;
    struct rt_err e;
    CHECK_EQ_INT(kin_robot_load("g1", &g1, &e), RT_OK);
    CHECK_EQ_INT(rtg_backend_init(&be, "cpu", 2, &e), RT_OK);
    if (!g1) return test_report("test_units");
    test_45_units(g1);
    test_clip(g1, &be, "clips/jumping_jacks.bvh");
    test_clip(g1, &be, "clips/01_01.bvh");
    solver_backend_free(&be);
    kin_robot_free(g1);
    return test_report("test_units");
}
