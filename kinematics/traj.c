/* traj.c -- reading and writing robot trajectories (Unitree CSV layout) and
 * turning one robot's trajectory into link targets for another. */
#include "traj.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rot.h"

/* Weights of the identity mapping relative to kin_targets_default_weights(). */
#define KIN_TRAJ_SMOOTH_SCALE 0.25f
#define KIN_TRAJ_REST_SCALE 0.1f
#define KIN_TRAJ_ROT_WEIGHT 0.3f

/* The identity mapping between two G1s (the solver issue's round trip):
 * pelvis, torso and the limb links that pin every chain. */
static const char *const identity_links[] = {
    "pelvis",
    "torso_link",
    "left_hip_roll_link",
    "right_hip_roll_link",
    "left_knee_link",
    "right_knee_link",
    "left_ankle_roll_link",
    "right_ankle_roll_link",
    "left_shoulder_roll_link",
    "right_shoulder_roll_link",
    "left_elbow_link",
    "right_elbow_link",
    "left_wrist_yaw_link",
    "right_wrist_yaw_link",
    NULL,
};

const char *const *kin_traj_identity_links(void) { return identity_links; }

/* Parses one number of a CSV field starting at *p; advances past it and a
 * following comma. Returns 0 on a malformed field. The text need not be
 * NUL-terminated at `end`, so strtod() reads a NUL-terminated copy of the
 * number's characters, never the bytes past `end`. */
static int parse_field(const char **p, const char *end, double *v)
{
    const char *s = *p;
    char num[128];
    size_t n = 0;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s >= end || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.')) return 0;
    while (s + n < end && s[n] != ',' && s[n] != ' ' && s[n] != '\t') {
        if (n == sizeof num - 1) return 0;
        num[n] = s[n];
        n++;
    }
    num[n] = 0;
    char *e;
    errno = 0;
    double x = strtod(num, &e);
    if (e == num || errno == ERANGE || !isfinite(x)) return 0;
    s += e - num;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s < end && *s != ',') return 0;
    if (s < end) s++;
    *p = s;
    *v = x;
    return 1;
}

enum rt_status kin_traj_read(const char *path, int cols, double **out, int *n_frames,
                             struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    enum rt_status st = rt_read_file(path, KIN_TRAJ_MAX_BYTES, &text, &len, err);
    *out = NULL;
    *n_frames = 0;
    if (st != RT_OK) return st;
    st = kin_traj_parse(text, len, path, cols, out, n_frames, err);
    free(text);
    return st;
}

enum rt_status kin_traj_parse(const char *text, size_t len, const char *path, int cols,
                              double **out, int *n_frames, struct rt_err *err)
{
    char where[96];
    size_t cap = 0, n = 0;
    double *rows = NULL;
    enum rt_status st = RT_OK;
    *out = NULL;
    *n_frames = 0;
    if (len > KIN_TRAJ_MAX_BYTES)
        return rt_err_set(err, RT_ELIMIT, path, "trajectory larger than %u bytes", KIN_TRAJ_MAX_BYTES);
    const char *p = text, *end = text + len;
    for (long line = 1; p < end; line++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        if (le > p && le[-1] == '\r') le--;
        const char *s = p;
        p = eol ? eol + 1 : end;
        while (s < le && (*s == ' ' || *s == '\t')) s++;
        if (s == le) continue;
        snprintf(where, sizeof where, "%.70s:%ld", path, line);
        if (n == 0 && !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.')) {
            if (line > 1 || rows) {
                st = rt_err_set(err, RT_EPARSE, where, "unexpected text row");
                goto fail;
            }
            continue; /* header row */
        }
        if (n >= KIN_TRAJ_MAX_FRAMES) {
            st = rt_err_set(err, RT_ELIMIT, where, "more than %d frames", KIN_TRAJ_MAX_FRAMES);
            goto fail;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1024, bytes;
            if (!rt_mul_size(ncap, (size_t)cols * sizeof(double), &bytes)) {
                st = rt_err_set(err, RT_ELIMIT, where, "trajectory too large");
                goto fail;
            }
            double *nr = realloc(rows, bytes);
            if (!nr) {
                st = rt_err_set(err, RT_ENOMEM, where, "out of memory");
                goto fail;
            }
            rows = nr;
            cap = ncap;
        }
        double *row = rows + n * (size_t)cols;
        int c = 0;
        while (s < le) {
            double v;
            const char *f = s;
            if (!parse_field(&s, le, &v)) {
                const char *fe = f;
                while (fe < le && *fe != ',') fe++;
                st = rt_err_set(err, RT_EPARSE, where, "column %d: bad number '%.*s'", c + 1,
                                (int)(fe - f > 24 ? 24 : fe - f), f);
                goto fail;
            }
            if (c < cols) row[c] = v;
            c++;
        }
        if (c != cols) {
            st = rt_err_set(err, RT_EPARSE, where, "row has %d values, expected %d", c, cols);
            goto fail;
        }
        double qn = sqrt(row[3] * row[3] + row[4] * row[4] + row[5] * row[5] + row[6] * row[6]);
        if (!(qn > 0.5 && qn < 1.5)) {
            st = rt_err_set(err, RT_EPARSE, where, "root quaternion norm %.3g is not 1", qn);
            goto fail;
        }
        for (int i = 3; i < 7; i++) row[i] /= qn;
        n++;
    }
    if (n == 0) {
        st = rt_err_set(err, RT_EPARSE, path, "no frames");
        goto fail;
    }
    *out = rows;
    *n_frames = (int)n;
    return RT_OK;
fail:
    free(rows);
    return st;
}

enum rt_status kin_traj_write(FILE *f, const struct kin_robot *r, const float *state,
                              int n_frames, int no_header, struct rt_err *err)
{
    int cols = SOLVER_ROOT_COLS + r->n_dof;
    if (!no_header) {
        fputs("root_x,root_y,root_z,root_qx,root_qy,root_qz,root_qw", f);
        for (int j = 0; j < r->n_dof; j++) fprintf(f, ",%s", r->joints[r->coord_joint[j]].name);
        fputc('\n', f);
    }
    for (int t = 0; t < n_frames; t++) {
        const float *row = state + (size_t)t * (size_t)cols;
        for (int c = 0; c < cols; c++) fprintf(f, c ? ",%.9g" : "%.9g", (double)row[c]);
        fputc('\n', f);
    }
    if (ferror(f)) return rt_err_set(err, RT_EIO, "output", "write failed");
    return RT_OK;
}

enum rt_status kin_targets_from_traj(const struct kin_robot *src, const double *states,
                                     int n_frames, double frame_time,
                                     const struct kin_robot *dst, struct kin_targets *t,
                                     struct rt_err *err)
{
    int src_link[KIN_MAX_TARGETS], dst_link[KIN_MAX_TARGETS], n = 0;
    char missing[128] = "";
    double *pos = NULL, *rot = NULL;
    enum rt_status st;
    for (int i = 0; identity_links[i]; i++) {
        int a = kin_robot_link_index(src, identity_links[i]);
        int b = kin_robot_link_index(dst, identity_links[i]);
        if (a >= 0 && b >= 0) {
            src_link[n] = a;
            dst_link[n] = b;
            n++;
        } else if (strlen(missing) + strlen(identity_links[i]) + 2 < sizeof missing) {
            strcat(missing, missing[0] ? " " : "");
            strcat(missing, identity_links[i]);
        }
    }
    if (n < 2)
        return rt_err_set(err, RT_ENOTFOUND, "mapping",
                          "robots '%.30s' and '%.30s' share too few mapped links (missing: %.60s)",
                          src->name, dst->name, missing);
    st = kin_targets_alloc(t, dst, n_frames, n, err);
    if (st != RT_OK) return st;
    t->frame_time = frame_time;
    kin_targets_default_weights(t, dst);
    /* A robot trajectory is already feasible and smooth: track it closely,
     * with lighter smoothness and rest terms than a human capture needs. */
    for (int i = 0; i < solver_tangent_dim(&dst->tree); i++) {
        t->w_vel[i] *= KIN_TRAJ_SMOOTH_SCALE;
        t->w_acc[i] *= KIN_TRAJ_SMOOTH_SCALE;
    }
    for (int j = 0; j < dst->n_dof; j++) t->w_rest[j] *= KIN_TRAJ_REST_SCALE;
    memcpy(t->target_link, dst_link, (size_t)n * sizeof(int));
    pos = malloc((size_t)src->n_links * 3 * sizeof(double));
    rot = malloc((size_t)src->n_links * 9 * sizeof(double));
    if (!pos || !rot) {
        st = rt_err_set(err, RT_ENOMEM, "targets", "out of memory");
        goto fail;
    }
    int cols = SOLVER_ROOT_COLS + src->n_dof;
    for (int f = 0; f < n_frames; f++) {
        kin_fk(src, states + (size_t)f * (size_t)cols, pos, rot);
        for (int k = 0; k < n; k++) {
            size_t i = (size_t)f * (size_t)n + (size_t)k;
            double q[4];
            for (int c = 0; c < 3; c++) t->pos[3 * i + c] = (float)pos[3 * src_link[k] + c];
            kin_mat_to_quat(rot + 9 * src_link[k], q);
            for (int c = 0; c < 4; c++) t->rot[4 * i + c] = (float)q[c];
            t->wpos[i] = 1.0f;
            t->wrot[i] = KIN_TRAJ_ROT_WEIGHT;
        }
    }
    for (int e = 0; e < 2; e++) {
        t->foot_link[e] = kin_robot_link_index(dst, e ? "right_ankle_roll_link" : "left_ankle_roll_link");
    }
    free(pos);
    free(rot);
    return RT_OK;
fail:
    free(pos);
    free(rot);
    kin_targets_free(t);
    return st;
}
