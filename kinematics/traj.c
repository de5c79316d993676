/* traj.c -- reading robot trajectories (Unitree's retargeted-LAFAN1 CSV
 * layout); retarget/output.c writes them. */
#include "traj.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/num.h"
#include "rot.h"

/* Parses one number of a CSV field starting at *p; advances past it and a
 * following comma. Returns 0 on a malformed field: anything but a plain
 * decimal ([+-]digits[.digits][e[+-]digits] or .digits), so that strtod's
 * extras (hex floats, inf, nan) never pass, and anything that is not
 * finite as a double. The text need not be NUL-terminated at `end`, so
 * strtod() reads a NUL-terminated copy of the number's characters, never
 * the bytes past `end`. */
static int parse_field(const char **p, const char *end, double *v)
{
    const char *s = *p;
    char num[128];
    size_t n = 0;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s >= end || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.')) return 0;
    size_t used = rt_decimal_fast(s, end, v);
    if (used && s + used < end && s[used] != ',' && s[used] != ' ' && s[used] != '\t' && s[used] != '\r' &&
        s[used] != '\n')
        used = 0; /* more than the fast path reads: strtod's business (or an error) below */
    if (used) {
        s += used;
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        if (s < end && *s != ',') return 0;
        if (s < end) s++;
        *p = s;
        return 1;
    }
    while (s + n < end && s[n] != ',' && s[n] != ' ' && s[n] != '\t') {
        if (n == sizeof num - 1) return 0;
        num[n] = s[n];
        n++;
    }
    num[n] = 0;
    const char *q = num;
    int digits = 0;
    if (*q == '+' || *q == '-') q++;
    while (isdigit((unsigned char)*q)) q++, digits++;
    if (*q == '.')
        for (q++; isdigit((unsigned char)*q); q++) digits++;
    if (!digits) return 0;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!isdigit((unsigned char)*q)) return 0;
        while (isdigit((unsigned char)*q)) q++;
    }
    if (*q) return 0;
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

/* "PATH:LINE" in buf (RT_ERR_WHERE_MAX bytes): the where of an error at
 * that line, made only when there is one. */
static const char *at(char *buf, const char *path, long line)
{
    snprintf(buf, RT_ERR_WHERE_MAX, "%s:%ld", path, line);
    return buf;
}

enum rt_status kin_traj_parse(const char *text, size_t len, const char *path, int cols,
                              double **out, int *n_frames, struct rt_err *err)
{
    char where[RT_ERR_WHERE_MAX];
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
        if (n == 0 && !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.')) {
            if (line > 1 || rows) {
                st = rt_err_set(err, RT_EPARSE, at(where, path, line), "unexpected text row");
                goto fail;
            }
            continue; /* header row */
        }
        if (n >= KIN_TRAJ_MAX_FRAMES) {
            st = rt_err_set(err, RT_ELIMIT, at(where, path, line), "more than %d frames", KIN_TRAJ_MAX_FRAMES);
            goto fail;
        }
        if (n == cap) {
            /* At the first row, room for every line left (a row of `cols`
             * numbers takes at least 2 * cols - 1 bytes, so blank lines
             * cannot inflate it), so that a large trajectory is never
             * copied as it grows: the old blocks of a growing array can
             * stay resident beside the new one. */
            size_t ncap = cap * 2, bytes;
            if (!cap) {
                size_t most = (size_t)(end - s) / (2 * (size_t)(cols > 0 ? cols : 1) - 1) + 1;
                ncap = 1;
                for (const char *q = s; ncap < most && (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
                    ncap++;
                if (ncap > (size_t)KIN_TRAJ_MAX_FRAMES) ncap = (size_t)KIN_TRAJ_MAX_FRAMES;
            }
            if (!rt_mul_size(ncap, (size_t)cols * sizeof(double), &bytes)) {
                st = rt_err_set(err, RT_ELIMIT, at(where, path, line), "trajectory too large");
                goto fail;
            }
            double *nr = realloc(rows, bytes);
            if (!nr) {
                st = rt_err_set(err, RT_ENOMEM, at(where, path, line), "out of memory");
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
                st = rt_err_set(err, RT_EPARSE, at(where, path, line), "column %d: bad number '%.*s'", c + 1,
                                (int)(fe - f > 24 ? 24 : fe - f), f);
                goto fail;
            }
            /* Bounds (traj.h): finite as a double is not enough, the solver
             * works in float32. */
            double lim = c < 3 ? KIN_TRAJ_MAX_POS : KIN_TRAJ_MAX_COORD;
            if (c < cols && (c < 3 || c >= 7) && fabs(v) > lim) {
                char col[32];
                if (c < 3) snprintf(col, sizeof col, "root %c", "xyz"[c]);
                else snprintf(col, sizeof col, "joint %d", c - 6);
                st = rt_err_set(err, RT_EINVAL, at(where, path, line), "column %d (%s) is %g: the limit is %g%s",
                                c + 1, col, v, lim, c < 3 ? " m" : " (rad or m)");
                goto fail;
            }
            if (c < cols) row[c] = v;
            c++;
        }
        if (c != cols) {
            st = rt_err_set(err, RT_EPARSE, at(where, path, line), "row has %d values, expected %d", c, cols);
            goto fail;
        }
        double qn = sqrt(row[3] * row[3] + row[4] * row[4] + row[5] * row[5] + row[6] * row[6]);
        if (!(qn > 0.5 && qn < 1.5)) {
            st = rt_err_set(err, RT_EPARSE, at(where, path, line), "root quaternion norm %.3g is not 1", qn);
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

