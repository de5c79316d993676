/* output.c -- column names and trajectory rows (see output.h). */
#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const root_cols[RT_ROOT_COLS] = {"root_x",  "root_y",  "root_z", "root_qx",
                                                    "root_qy", "root_qz", "root_qw"};

int rtg_columns(const struct kin_robot *r, const char **names)
{
    for (int k = 0; k < RT_ROOT_COLS; k++) names[k] = root_cols[k];
    for (int k = 0; k < r->n_dof; k++) names[RT_ROOT_COLS + k] = r->joints[r->coord_joint[k]].name;
    return RT_ROOT_COLS + r->n_dof;
}

char *rtg_columns_json(const struct kin_robot *r)
{
    const char **names = malloc((size_t)(RT_ROOT_COLS + r->n_dof) * sizeof *names);
    cJSON *a = names ? cJSON_CreateArray() : NULL;
    char *t = NULL;
    int n = names ? rtg_columns(r, names) : 0;
    for (int k = 0; a && k < n; k++) cJSON_AddItemToArray(a, cJSON_CreateString(names[k]));
    if (a && cJSON_GetArraySize(a) == n) t = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    free(names);
    return t;
}

/* Powers of ten as long double: exact up to 1e27 (64-bit mantissa). */
static long double pow10l_small(int n)
{
    static long double tab[28];
    static int ready;
    if (!ready) {
        long double x = 1.0L;
        for (int i = 0; i < 28; i++, x *= 10.0L) tab[i] = x;
        ready = 1;
    }
    return tab[n];
}

/* %.9g of a float, without printf: the nine significant digits come from
 * the value scaled into [1e8, 1e9) in long double (one or two roundings,
 * a relative error below 1e-18), rounded to the nearest integer. A value
 * whose scaled fraction lies within 1e-6 of one half -- where that error
 * could decide the rounding -- and NaN and infinities go to snprintf, so
 * the bytes are always printf's (tests/test_output.c compares them over
 * millions of values). The layout is %g's: exponent X of the rounded
 * value, fixed notation when -4 <= X < 9, trailing zeros dropped. */
int rtg_format_float(float v, char *buf)
{
    double d = (double)v;
    if (!isfinite(d)) return snprintf(buf, 16, "%.9g", d);
    char *o = buf;
    if (signbit(d)) *o++ = '-', d = -d;
    if (d == 0.0) {
        *o++ = '0';
        *o = 0;
        return (int)(o - buf);
    }
    /* k = floor(log10(d)), then s = d * 10^(8 - k) in [1e8, 1e9). */
    int e2;
    frexp(d, &e2); /* d in [2^(e2-1), 2^e2): k is within one of (e2-1) log10(2) */
    int k = (int)floor((e2 - 1) * 0.30102999566398120);
    long double s;
    for (int tries = 0;; tries++) {
        int p = 8 - k;
        if (p >= 0 && p <= 27) s = (long double)d * pow10l_small(p);
        else if (p < 0 && -p <= 27) s = (long double)d / pow10l_small(-p);
        else if (p > 27) s = (long double)d * pow10l_small(27) * pow10l_small(p - 27);
        else return snprintf(buf, 16, "%.9g", (double)v);
        if (s < 1e8L) k--;
        else if (s >= 1e9L) k++;
        else break;
        if (tries > 2) return snprintf(buf, 16, "%.9g", (double)v);
    }
    long double fl = floorl(s), frac = s - fl;
    if (fabsl(frac - 0.5L) < 1e-6L) return snprintf(buf, 16, "%.9g", (double)v);
    unsigned long n = (unsigned long)fl + (frac > 0.5L);
    if (n >= 1000000000ul) n /= 10, k++;
    char dg[9];
    for (int i = 8; i >= 0; i--) dg[i] = (char)('0' + n % 10), n /= 10;
    int nd = 9;
    while (nd > 1 && dg[nd - 1] == '0') nd--;
    if (k >= -4 && k < 9) {
        if (k < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = -1; i > k; i--) *o++ = '0';
            for (int i = 0; i < nd; i++) *o++ = dg[i];
        } else {
            for (int i = 0; i <= k; i++) *o++ = dg[i];
            if (nd > k + 1) {
                *o++ = '.';
                for (int i = k + 1; i < nd; i++) *o++ = dg[i];
            }
        }
    } else {
        *o++ = dg[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++) *o++ = dg[i];
        }
        *o++ = 'e';
        *o++ = k < 0 ? '-' : '+';
        int e = k < 0 ? -k : k;
        if (e >= 100) *o++ = (char)('0' + e / 100);
        *o++ = (char)('0' + e / 10 % 10);
        *o++ = (char)('0' + e % 10);
    }
    *o = 0;
    return (int)(o - buf);
}

enum rt_status rtg_csv_format(const char *const *names, int cols, const float *state, int n_frames,
                              char **out, size_t *len)
{
    /* A value takes at most 15 bytes and its separator one. */
    size_t cap = 1, used = 0;
    for (int k = 0; names && k < cols; k++) cap += strlen(names[k]) + 1;
    cap += (size_t)n_frames * (size_t)cols * 16 + 1;
    char *b = malloc(cap);
    *out = NULL;
    *len = 0;
    if (!b) return RT_ENOMEM;
    if (names) {
        for (int k = 0; k < cols; k++) {
            size_t n = strlen(names[k]);
            if (k) b[used++] = ',';
            memcpy(b + used, names[k], n);
            used += n;
        }
        b[used++] = '\n';
    }
    for (int t = 0; t < n_frames; t++) {
        const float *row = state + (size_t)t * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            if (c) b[used++] = ',';
            used += (size_t)rtg_format_float(row[c], b + used);
        }
        b[used++] = '\n';
    }
    *out = b;
    *len = used;
    return RT_OK;
}

enum rt_status rtg_csv_write(FILE *f, const char *const *names, int cols, const float *state,
                             int n_frames, struct rt_err *err)
{
    char *b = NULL;
    size_t len = 0;
    if (rtg_csv_format(names, cols, state, n_frames, &b, &len) != RT_OK)
        return rt_err_set(err, RT_ENOMEM, "output", "out of memory");
    size_t w = fwrite(b, 1, len, f);
    free(b);
    if (w != len || ferror(f)) return rt_err_set(err, RT_EIO, "output", "write failed");
    return RT_OK;
}

void rtg_json_rows_write(FILE *f, int cols, const float *state, int n_frames)
{
    /* One row at a time through a buffer: a value takes at most 15 bytes. */
    size_t cap = (size_t)cols * 16 + 4;
    char *b = malloc(cap);
    fputc('[', f);
    for (int t = 0; b && t < n_frames; t++) {
        size_t used = 0;
        if (t) b[used++] = ',';
        b[used++] = '[';
        for (int k = 0; k < cols; k++) {
            if (k) b[used++] = ',';
            used += (size_t)rtg_format_float(state[(size_t)t * (size_t)cols + (size_t)k], b + used);
        }
        b[used++] = ']';
        fwrite(b, 1, used, f);
    }
    fputc(']', f);
    free(b);
}
