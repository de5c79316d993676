/* test_npz.c -- retarget/output.c's NPZ writer and resampler, read back by
 * numpy itself (/usr/bin/python3, Debian's python3-numpy): np.load gives
 * the keys, dtypes, shapes and names of the BeyondMimic/mjlab layout;
 * body_pos_w is the forward kinematics (kin_fk) of joint_pos and the root
 * pose within 1e-6 m; velocities are those of a known motion; the bytes
 * are the same run to run. Then rtg_resample() at 30 -> 50 fps: frame
 * counts, kept frames bit for bit, linear joints, slerp of the root. Skips
 * (77) only when numpy cannot be imported. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kinematics/robot.h"
#include "../retarget/output.h"
#include "test.h"

#define T_FRAMES 40
#define FPS 30.0
#define YAW_RATE 0.5 /* rad/s about z */
#define VX 0.3       /* m/s */

static const char *script =
    "import sys, numpy as np\n"
    "d = np.load(sys.argv[1])\n"
    "want = ['fps','joint_pos','joint_vel','body_pos_w','body_quat_w','body_lin_vel_w','body_ang_vel_w',"
    "'joint_names','body_names']\n"
    "assert sorted(d.files) == sorted(want), d.files\n"
    "T, D, B = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])\n"
    "assert d['fps'].shape == (1,) and d['fps'].dtype == np.float64\n"
    "for k in ['joint_pos','joint_vel']: assert d[k].shape == (T, D) and d[k].dtype == np.float32, k\n"
    "for k in ['body_pos_w','body_lin_vel_w','body_ang_vel_w']: assert d[k].shape == (T, B, 3) and d[k].dtype == np.float32, k\n"
    "assert d['body_quat_w'].shape == (T, B, 4) and d['body_quat_w'].dtype == np.float32\n"
    "assert d['joint_names'].shape == (D,) and d['joint_names'].dtype.kind == 'U'\n"
    "assert d['body_names'].shape == (B,) and d['body_names'].dtype.kind == 'U'\n"
    "with open(sys.argv[2] + '.names', 'w') as f:\n"
    "    f.write('\\n'.join(list(d['joint_names']) + list(d['body_names'])) + '\\n')\n"
    "np.concatenate([d['fps'].astype(np.float64).ravel()] + [d[k].astype(np.float64).ravel() for k in want[1:7]])"
    ".tofile(sys.argv[2])\n";

/* Runs the script on `npz`; 0 when numpy read it and every assert held. */
static int numpy_read(const char *dir, const char *npz, int T, int D, int B)
{
    char cmd[1024], py[256];
    snprintf(py, sizeof py, "%s/check.py", dir);
    FILE *f = fopen(py, "w");
    if (!f) return -1;
    fputs(script, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s/back.bin %d %d %d", py, npz, dir, T, D, B);
    return system(cmd);
}

static void make_motion(const struct kin_robot *r, float *state, int T)
{
    int cols = RT_ROOT_COLS + r->n_dof;
    for (int t = 0; t < T; t++) {
        float *s = state + (size_t)t * (size_t)cols;
        double tm = t / FPS, yaw = YAW_RATE * tm;
        s[0] = (float)(VX * tm), s[1] = 0.1f, s[2] = 0.8f;
        s[3] = 0, s[4] = 0, s[5] = (float)sin(yaw / 2), s[6] = (float)cos(yaw / 2);
        for (int j = 0; j < r->n_dof; j++) {
            const struct kin_joint *jt = &r->joints[r->coord_joint[j]];
            double lo = isfinite(jt->lower) ? jt->lower : -1, hi = isfinite(jt->upper) ? jt->upper : 1;
            s[RT_ROOT_COLS + j] = (float)(0.5 * (lo + hi) + 0.25 * (hi - lo) * sin(0.2 * t + j));
        }
    }
}

static void test_npz(const struct kin_robot *r, const char *dir)
{
    int T = T_FRAMES, D = r->n_dof, B = r->n_links, cols = RT_ROOT_COLS + D;
    float *state = malloc((size_t)T * (size_t)cols * sizeof *state);
    char *z = NULL, *z2 = NULL, path[256], bin[256];
    size_t len = 0, len2 = 0;
    struct rt_err err;
    make_motion(r, state, T);
    CHECK_EQ_INT(rtg_npz_format(r, state, T, FPS, &z, &len, &err), RT_OK);
    CHECK_EQ_INT(rtg_npz_format(r, state, T, FPS, &z2, &len2, &err), RT_OK);
    CHECK(z && z2 && len == len2 && !memcmp(z, z2, len)); /* run == run */
    CHECK(len > 4 && !memcmp(z, "PK\x03\x04", 4));
    snprintf(path, sizeof path, "%s/m.npz", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(z, 1, len, f) == len && fclose(f) == 0);
    if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0) TEST_SKIP("/usr/bin/python3 cannot import numpy");
    CHECK_EQ_INT(numpy_read(dir, path, T, D, B), 0);
    snprintf(bin, sizeof bin, "%s/back.bin", dir);
    size_t n_back = 0;
    double *back = (double *)(void *)test_slurp(bin, &n_back);
    size_t want = 1 + 2 * (size_t)T * D + (size_t)T * B * 13;
    CHECK(back && n_back == want * sizeof(double));
    if (back && n_back == want * sizeof(double)) {
        const double *jp = back + 1, *jv = jp + (size_t)T * D, *bp = jv + (size_t)T * D, *bq = bp + (size_t)T * B * 3;
        const double *bl = bq + (size_t)T * B * 4, *ba = bl + (size_t)T * B * 3;
        CHECK_NEAR(back[0], FPS, 0);
        double *lp = malloc((size_t)B * 3 * sizeof *lp), *lr = malloc((size_t)B * 9 * sizeof *lr);
        double *row = malloc((size_t)cols * sizeof *row), worst = 0, worst_v = 0, worst_w = 0, worst_q = 0;
        int joints_exact = 1;
        for (int t = 0; t < T; t++) {
            /* FK of joint_pos with the root pose read back (w x y z -> x y z w). */
            const double *q0 = bq + (size_t)t * B * 4;
            row[0] = bp[(size_t)t * B * 3], row[1] = bp[(size_t)t * B * 3 + 1], row[2] = bp[(size_t)t * B * 3 + 2];
            row[3] = q0[1], row[4] = q0[2], row[5] = q0[3], row[6] = q0[0];
            for (int j = 0; j < D; j++) {
                row[RT_ROOT_COLS + j] = jp[(size_t)t * D + j];
                if ((float)jp[(size_t)t * D + j] != state[(size_t)t * cols + RT_ROOT_COLS + j]) joints_exact = 0;
            }
            kin_fk(r, row, lp, lr);
            for (int k = 0; k < B * 3; k++) {
                double e = fabs(lp[k] - bp[(size_t)t * B * 3 + k]);
                if (e > worst) worst = e;
            }
            /* root: quaternion is yaw/2 about z, w >= 0 */
            double yaw = YAW_RATE * t / FPS;
            worst_q = fmax(worst_q, fabs(q0[0] - cos(yaw / 2)) + fabs(q0[3] - sin(yaw / 2)));
            /* the root moves at (VX, 0, 0) and turns at YAW_RATE about z */
            worst_v = fmax(worst_v, fabs(bl[(size_t)t * B * 3] - VX) + fabs(bl[(size_t)t * B * 3 + 1]));
            worst_w = fmax(worst_w, fabs(ba[(size_t)t * B * 3 + 2] - YAW_RATE) + fabs(ba[(size_t)t * B * 3]) +
                                        fabs(ba[(size_t)t * B * 3 + 1]));
        }
        CHECK(joints_exact);
        CHECK_NEAR(worst, 0, 1e-6);
        CHECK_NEAR(worst_q, 0, 1e-6);
        CHECK_NEAR(worst_v, 0, 1e-5);
        CHECK_NEAR(worst_w, 0, 1e-4);
        /* joint_vel: central differences of joint_pos in the middle */
        int t = T / 2, j = 3;
        CHECK_NEAR(jv[(size_t)t * D + j], (jp[(size_t)(t + 1) * D + j] - jp[(size_t)(t - 1) * D + j]) * FPS / 2, 1e-4);
        free(lp), free(lr), free(row);
        /* names in the file: the coordinates in URDF order, then the links */
        snprintf(bin, sizeof bin, "%s/back.bin.names", dir);
        char *names = test_slurp(bin, NULL), *p = names;
        int ok = names != NULL;
        for (int k = 0; ok && k < D + B; k++) {
            const char *w = k < D ? r->joints[r->coord_joint[k]].name : r->links[k - D].name;
            size_t n = strlen(w);
            ok = !strncmp(p, w, n) && p[n] == '\n';
            p += n + 1;
        }
        CHECK(ok);
        free(names);
    }
    free(back);
    /* Inputs refused. */
    free(z2);
    CHECK_EQ_INT(rtg_npz_format(r, state, T, 0, &z2, &len2, &err), RT_EINVAL);
    CHECK_EQ_INT(rtg_npz_format(r, state, 0, FPS, &z2, &len2, &err), RT_EINVAL);
    CHECK(z2 == NULL);
    free(z);
    free(z2);
    free(state);
}

static void test_resample(const struct kin_robot *r)
{
    int T = 31, cols = RT_ROOT_COLS + r->n_dof, n = 0;
    float *state = malloc((size_t)T * (size_t)cols * sizeof *state), *out = NULL;
    struct rt_err err;
    make_motion(r, state, T);
    CHECK_EQ_INT(rtg_resample(state, T, cols, 30, 50, &out, &n, &err), RT_OK);
    CHECK_EQ_INT(n, 51); /* 1 s at 30 fps is 31 frames; at 50 fps, 51 */
    /* output frame 5k is input frame 3k exactly */
    int same = 1;
    for (int k = 0; k <= 10; k++) same &= !memcmp(out + (size_t)5 * k * cols, state + (size_t)3 * k * cols, (size_t)cols * sizeof *out);
    CHECK(same);
    /* frame 1 is at t = 0.02 s, 0.6 of the way from input frame 0 to 1 */
    double want = state[RT_ROOT_COLS + 2] + 0.6 * (state[cols + RT_ROOT_COLS + 2] - state[RT_ROOT_COLS + 2]);
    CHECK_NEAR(out[cols + RT_ROOT_COLS + 2], want, 1e-6);
    CHECK_NEAR(out[cols + 0], VX * 0.02, 1e-7);
    /* slerp: the yaw at 0.02 s */
    CHECK_NEAR(out[cols + 5], sin(YAW_RATE * 0.02 / 2), 1e-7);
    CHECK_NEAR(out[cols + 6], cos(YAW_RATE * 0.02 / 2), 1e-7);
    free(out);
    /* 50 -> 30 and the same rate */
    CHECK_EQ_INT(rtg_resample(state, T, cols, 50, 30, &out, &n, &err), RT_OK);
    CHECK_EQ_INT(n, 19); /* 0.6 s at 30 fps */
    free(out);
    CHECK_EQ_INT(rtg_resample(state, T, cols, 30, 30, &out, &n, &err), RT_OK);
    CHECK(n == T && !memcmp(out, state, (size_t)T * cols * sizeof *out));
    free(out);
    CHECK_EQ_INT(rtg_resample(state, T, cols, 30, 0, &out, &n, &err), RT_EINVAL);
    CHECK_EQ_INT(rtg_resample(state, T, cols, 1, 1e7, &out, &n, &err), RT_ELIMIT);
    CHECK(out == NULL);
    free(state);
}

int main(void)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    char dir[] = "/tmp/test_npz.XXXXXX";
    if (kin_robot_load("g1", &r, &err) != RT_OK) {
        fprintf(stderr, "g1: %s\n", err.msg);
        return 1;
    }
    CHECK(mkdtemp(dir) != NULL);
    test_resample(r);
    test_npz(r, dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    kin_robot_free(r);
    return test_report("test_npz");
}
