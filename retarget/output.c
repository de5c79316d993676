/* output.c -- column names and trajectory rows, as CSV, JSON rows and NPZ,
 * and the resampling of a trajectory (see output.h). */
#include "output.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "../base/mem.h"

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
 * the value scaled into [1e8, 1e9), exactly in 128-bit integers where the
 * compiler has them (digits_exact(): every value from 1e-19 to 1e8), else
 * in long double (one or two roundings, a relative error below 1e-18),
 * rounded to the nearest integer. An exact tie, a long double whose scaled
 * fraction lies within 1e-6 of one half -- where its error could decide the
 * rounding -- and NaN and infinities go to snprintf, so
 * the bytes are always printf's (tests/test_output.c compares them over
 * millions of values). The layout is %g's: exponent X of the rounded
 * value, fixed notation when -4 <= X < 9, trailing zeros dropped. */
#ifdef __SIZEOF_INT128__
/* The nine digits of a float's value m 2^e (m < 2^24 its integer
 * significand) at decimal exponent k, exactly: s = m 10^(8-k) 2^e as a
 * 128-bit integer and its remainder, for 0 <= 8 - k <= 27 and e >= -127
 * (the values a trajectory holds: 1e-19 up to 1e8). Returns the rounded
 * digits, 0 when s is not in [1e8, 1e9) (k is off by one), or -1 outside
 * the range or on an exact tie (left to printf). */
static long long digits_exact(unsigned long long m, int e, int k)
{
    static const unsigned long long p10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                               10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                               100000000000ull, 1000000000000ull, 10000000000000ull,
                                               100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                               100000000000000000ull, 1000000000000000000ull,
                                               10000000000000000000ull};
    int p = 8 - k;
    if (p < 0 || p > 27 || e < -127 || e > 40) return -1;
    if (p <= 12 && e < 0 && e > -64) { /* m 10^p < 2^24 10^12 < 2^64: the same in 64 bits */
        unsigned long long n = m * p10[p], q = n >> -e, rem = n & ((1ull << -e) - 1), half = 1ull << (-e - 1);
        if (q < 100000000u || q >= 1000000000u) return 0;
        if (rem == half) return -1;
        return (long long)q + (rem > half);
    }
    unsigned __int128 num = (unsigned __int128)m * (p > 19 ? p10[19] : p10[p]);
    if (p > 19) num *= p10[p - 19];
    if (e >= 0) {
        num <<= e;
        return num < 100000000u || num >= 1000000000u ? 0 : (long long)num;
    }
    unsigned __int128 q = num >> -e, rem = num & (((unsigned __int128)1 << -e) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (-e - 1);
    if (q < 100000000u || q >= 1000000000u) return 0;
    if (rem == half) return -1;
    return (long long)q + (rem > half);
}
#endif

/* floor(x log10(2)) for |x| <= 1000 in integers: the double product
 * floor(x * 0.30102999566398120) for every binary exponent of a float
 * (the powers of ten of tests/test_output.c reach each one). */
static int floor_log10_pow2(int x) { return (x * 78913 - (x < 0 ? (1 << 18) - 1 : 0)) / (1 << 18); }

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
    /* k = floor(log10(d)), then s = d * 10^(8 - k) in [1e8, 1e9). d is
     * in [2^(e2-1), 2^e2), from the float's exponent bits (frexp() for a
     * subnormal): k is within one of (e2-1) log10(2). */
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e2 = (int)(bits >> 23 & 0xff) - 126;
    if (e2 == -126) frexp(d, &e2);
    int k = floor_log10_pow2(e2 - 1);
    unsigned long n;
#ifdef __SIZEOF_INT128__
    {
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        int be = (int)(u >> 23 & 0xff);
        unsigned long long m = be ? (u & 0x7fffffu) | 0x800000u : u & 0x7fffffu;
        int e = be ? be - 150 : -149;
        long long x = digits_exact(m, e, k);
        if (x == 0) x = digits_exact(m, e, ++k);
        if (x > 0) {
            n = (unsigned long)x;
            goto digits;
        }
    }
#endif
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
    n = (unsigned long)fl + (frac > 0.5L);
#ifdef __SIZEOF_INT128__
digits:
#endif
    if (n >= 1000000000ul) n /= 10, k++;
    /* The nine digits, two at a time from a table, the last on its own;
     * then the text is laid out in t with copies of fixed sizes and its
     * 16 bytes (the value, its NUL and what follows) copied to buf. */
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    char dg[16], t[40] = {'-'}; /* the sign, then zeros: every byte that goes to buf set */
    unsigned lo = (unsigned)(n % 10000u), hi = (unsigned)(n / 10000u); /* hi < 100000 */
    memcpy(dg + 7, pairs + 2 * (lo % 100u), 2);
    memcpy(dg + 5, pairs + 2 * (lo / 100u), 2);
    memcpy(dg + 3, pairs + 2 * (hi % 100u), 2);
    memcpy(dg + 1, pairs + 2 * (hi / 100u % 100u), 2);
    dg[0] = (char)('0' + hi / 10000u);
    memset(dg + 9, '0', 7);
    /* nd: the digits up to the last that is not 0 (bytes 1..8 of dg, the
     * lowest address in the lowest byte). */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t z;
    memcpy(&z, dg + 1, 8);
    z ^= 0x3030303030303030ull;
    int nd = z ? 2 + (63 - __builtin_clzll(z)) / 8 : 1;
#else
    int nd = 9;
    while (nd > 1 && dg[nd - 1] == '0') nd--;
#endif
    int neg = o > buf, len;
    char *w = t + neg;
    if (k >= 0 && k < 9) {
        memcpy(w, dg, 16); /* the integer part: digits 0..k */
        if (nd > k + 1) {  /* the fraction: digits k + 1.. after a point */
            w[k + 1] = '.';
            memcpy(w + k + 2, dg + k + 1, 8);
            len = nd + 1;
        } else {
            len = k + 1;
        }
    } else if (k >= -4 && k < 0) {
        memcpy(w, "0.000000", 8); /* 0, the point, -k - 1 zeros */
        memcpy(w + 1 - k, dg, 16);
        len = 1 - k + nd;
    } else {
        char *e0 = w;
        *w++ = dg[0];
        if (nd > 1) {
            *w++ = '.';
            for (int i = 1; i < nd; i++) *w++ = dg[i];
        }
        *w++ = 'e';
        *w++ = k < 0 ? '-' : '+';
        int e = k < 0 ? -k : k;
        if (e >= 100) *w++ = (char)('0' + e / 100);
        *w++ = (char)('0' + e / 10 % 10);
        *w++ = (char)('0' + e % 10);
        len = (int)(w - e0);
    }
    len += neg;
    t[len] = 0;
    memcpy(buf, t, 16);
    return len;
}

/* The header row of names[0..cols) into b (nothing when names is NULL);
 * returns the bytes written. */
static size_t csv_header(char *b, const char *const *names, int cols)
{
    size_t used = 0;
    for (int k = 0; names && k < cols; k++) {
        size_t n = strlen(names[k]);
        if (k) b[used++] = ',';
        memcpy(b + used, names[k], n);
        used += n;
    }
    if (names) b[used++] = '\n';
    return used;
}

/* Rows [t0, t1) of `state` as CSV into b; returns the bytes written (at
 * most (t1 - t0) * cols * 16). */
static size_t csv_rows(char *b, int cols, const float *state, int t0, int t1)
{
    size_t used = 0;
    for (int t = t0; t < t1; t++) {
        const float *row = state + (size_t)t * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            if (c) b[used++] = ',';
            used += (size_t)rtg_format_float(row[c], b + used);
        }
        b[used++] = '\n';
    }
    return used;
}

/* The pieces of rtg_csv_format_on(): piece k's rows into buf[k]. */
struct csv_pieces {
    int cols, n_frames;
    const float *state;
    char **buf;
    size_t *len;
};

static void csv_piece(void *ctx, int k)
{
    struct csv_pieces *p = ctx;
    int t0, t1;
    rtg_pool_piece(k, RTG_CSV_PIECE_ROWS, p->n_frames, &t0, &t1);
    p->buf[k] = malloc((size_t)(t1 - t0) * (size_t)p->cols * 16 + 1);
    if (p->buf[k]) p->len[k] = csv_rows(p->buf[k], p->cols, p->state, t0, t1);
}

enum rt_status rtg_csv_format_on(struct rtg_pool *pool, const char *const *names, int cols, const float *state,
                                 int n_frames, char **out, size_t *len)
{
    int np = rtg_pool_pieces(n_frames, RTG_CSV_PIECE_ROWS);
    if (!pool || np < 2) return rtg_csv_format(names, cols, state, n_frames, out, len);
    *out = NULL;
    *len = 0;
    struct csv_pieces p = {cols, n_frames, state, calloc((size_t)np, sizeof(char *)), calloc((size_t)np, sizeof(size_t))};
    enum rt_status st = RT_ENOMEM;
    if (p.buf && p.len) {
        rtg_pool_for_idle(pool, np, csv_piece, &p);
        size_t total = 0;
        int ok = 1;
        for (int k = 0; k < np; k++) ok &= p.buf[k] != NULL, total += p.len[k];
        for (int k = 0; names && k < cols; k++) total += strlen(names[k]) + 1;
        char *b = ok ? rt_alloc_large(total + 1, 16, NULL) : NULL;
        if (b) {
            size_t used = csv_header(b, names, cols);
            for (int k = 0; k < np; k++) {
                memcpy(b + used, p.buf[k], p.len[k]);
                used += p.len[k];
            }
            *out = b;
            *len = used;
            st = RT_OK;
        }
    }
    for (int k = 0; p.buf && k < np; k++) free(p.buf[k]);
    free(p.buf);
    free(p.len);
    return st;
}

enum rt_status rtg_csv_format(const char *const *names, int cols, const float *state, int n_frames,
                              char **out, size_t *len)
{
    /* A value takes at most 15 bytes and its separator one. */
    size_t cap = 1;
    for (int k = 0; names && k < cols; k++) cap += strlen(names[k]) + 1;
    cap += (size_t)n_frames * (size_t)cols * 16 + 1;
    char *b = rt_alloc_large(cap, 16, NULL);
    *out = NULL;
    *len = 0;
    if (!b) return RT_ENOMEM;
    size_t used = csv_header(b, names, cols);
    used += csv_rows(b + used, cols, state, 0, n_frames);
    *out = b;
    *len = used;
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

/* --- NPZ --------------------------------------------------------------------- */

/* One .npy member: the header (format 1.0, padded to 64 bytes as numpy
 * writes it) then the data. shape[] has `nd` dims; `descr` is numpy's
 * dtype string ('<f4', '<f8', '<U12'). Returns the malloc'd member of
 * *len bytes with data_bytes of room after the header at *data, or NULL. */
static char *npy_alloc(const char *descr, const size_t *shape, int nd, size_t data_bytes, char **data, size_t *len)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < nd; i++) n += snprintf(dict + n, sizeof dict - (size_t)n, "%zu,%s", shape[i], i + 1 < nd ? " " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t hl = (size_t)n + 1, pre = 10; /* magic 6, version 2, header length 2; '\n' ends the dict */
    size_t pad = (64 - (pre + hl) % 64) % 64;
    hl += pad;
    if (hl > 65535 || data_bytes > SIZE_MAX - pre - hl) return NULL;
    char *b = malloc(pre + hl + data_bytes + 1);
    if (!b) return NULL;
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (char)(hl & 0xff);
    b[9] = (char)(hl >> 8);
    memcpy(b + pre, dict, (size_t)n);
    memset(b + pre + n, ' ', pad);
    b[pre + hl - 1] = '\n';
    *data = b + pre + hl;
    *len = pre + hl + data_bytes;
    return b;
}

static void put_u32le(char *p, uint32_t v)
{
    p[0] = (char)(v & 0xff), p[1] = (char)(v >> 8 & 0xff), p[2] = (char)(v >> 16 & 0xff), p[3] = (char)(v >> 24);
}

/* Decodes one UTF-8 sequence at *s (advancing it); a malformed byte is
 * taken as its own code point, so that every name still comes out. */
static uint32_t utf8_next(const unsigned char **s)
{
    const unsigned char *p = *s;
    uint32_t c = p[0];
    int n = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (c >= 0xf8) n = 0;
    for (int i = 1; i <= n; i++)
        if ((p[i] & 0xc0) != 0x80) n = 0;
    if (n) {
        c &= 0x3fu >> n;
        for (int i = 1; i <= n; i++) c = c << 6 | (p[i] & 0x3fu);
    }
    *s = p + n + 1;
    return c;
}

static size_t utf8_count(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; n++) utf8_next(&p);
    return n;
}

/* The names as a numpy unicode array ('<UN', UTF-32LE, N the longest). */
static char *npy_names(const char *const *names, size_t count, size_t *len)
{
    size_t w = 1, bytes;
    char descr[32], *data;
    for (size_t i = 0; i < count; i++) {
        size_t n = utf8_count(names[i]);
        if (n > w) w = n;
    }
    if (w > 1u << 20 || !rt_mul_size(count, w * 4, &bytes)) return NULL;
    snprintf(descr, sizeof descr, "<U%zu", w);
    char *b = npy_alloc(descr, &count, 1, bytes, &data, len);
    if (!b) return NULL;
    memset(data, 0, bytes);
    for (size_t i = 0; i < count; i++) {
        const unsigned char *p = (const unsigned char *)names[i];
        for (size_t k = 0; *p; k++) put_u32le(data + (i * w + k) * 4, utf8_next(&p));
    }
    return b;
}

/* Row-major rotation to a unit quaternion w x y z (Shepperd's method). */
static void rot_to_quat(const double *m, double *q)
{
    double tr = m[0] + m[4] + m[8];
    if (tr > 0) {
        double s = sqrt(tr + 1.0) * 2;
        q[0] = 0.25 * s, q[1] = (m[7] - m[5]) / s, q[2] = (m[2] - m[6]) / s, q[3] = (m[3] - m[1]) / s;
    } else if (m[0] > m[4] && m[0] > m[8]) {
        double s = sqrt(1.0 + m[0] - m[4] - m[8]) * 2;
        q[0] = (m[7] - m[5]) / s, q[1] = 0.25 * s, q[2] = (m[1] + m[3]) / s, q[3] = (m[2] + m[6]) / s;
    } else if (m[4] > m[8]) {
        double s = sqrt(1.0 + m[4] - m[0] - m[8]) * 2;
        q[0] = (m[2] - m[6]) / s, q[1] = (m[1] + m[3]) / s, q[2] = 0.25 * s, q[3] = (m[5] + m[7]) / s;
    } else {
        double s = sqrt(1.0 + m[8] - m[0] - m[4]) * 2;
        q[0] = (m[3] - m[1]) / s, q[1] = (m[2] + m[6]) / s, q[2] = (m[5] + m[7]) / s, q[3] = 0.25 * s;
    }
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

/* World angular velocity taking rotation a (w x y z) to b in time dt:
 * the rotation vector of b a^-1, divided by dt. */
static void ang_vel(const double *a, const double *b, double dt, double *w)
{
    /* r = b * conj(a) */
    double rw = b[0] * a[0] + b[1] * a[1] + b[2] * a[2] + b[3] * a[3];
    double rx = -b[0] * a[1] + b[1] * a[0] - b[2] * a[3] + b[3] * a[2];
    double ry = -b[0] * a[2] + b[1] * a[3] + b[2] * a[0] - b[3] * a[1];
    double rz = -b[0] * a[3] - b[1] * a[2] + b[2] * a[1] + b[3] * a[0];
    if (rw < 0) rw = -rw, rx = -rx, ry = -ry, rz = -rz;
    double s = sqrt(rx * rx + ry * ry + rz * rz);
    double f = s < 1e-12 ? 2.0 : 2.0 * atan2(s, rw) / s;
    w[0] = rx * f / dt, w[1] = ry * f / dt, w[2] = rz * f / dt;
}

/* The arrays are built in double and stored as float32. */
struct npz_member {
    const char *name;
    char *bytes;
    size_t len;
};

static enum rt_status zip_fail(zip_error_t *ze, struct rt_err *err)
{
    enum rt_status st = rt_err_set(err, RT_EIO, "npz", "libzip: %s", zip_error_strerror(ze));
    zip_error_fini(ze);
    return st;
}

/* Writes the members into one zip archive in memory (libzip): entries
 * stored uncompressed (as numpy.savez does) with a fixed time. The
 * members' bytes are handed to libzip, which frees them. */
static enum rt_status zip_members(struct npz_member *m, int n, char **out, size_t *len, struct rt_err *err)
{
    zip_error_t ze;
    zip_source_t *src, *s;
    zip_t *za;
    zip_stat_t zst;
    int i = 0;
    zip_error_init(&ze);
    if (!(src = zip_source_buffer_create(NULL, 0, 0, &ze))) goto fail_members;
    if (!(za = zip_open_from_source(src, ZIP_TRUNCATE, &ze))) {
        zip_source_free(src);
        goto fail_members;
    }
    zip_source_keep(src);
    for (; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.npy", m[i].name);
        if (!(s = zip_source_buffer(za, m[i].bytes, m[i].len, 1))) goto fail_zip;
        m[i].bytes = NULL; /* the source owns it now */
        zip_int64_t idx = zip_file_add(za, name, s, ZIP_FL_ENC_UTF_8);
        if (idx < 0) {
            zip_source_free(s);
            goto fail_zip;
        }
        /* 1980-01-02 12:00 local: a fixed DOS date, the same bytes every run. */
        if (zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0) < 0 ||
            zip_file_set_mtime(za, (zip_uint64_t)idx, 315662400, 0) < 0)
            goto fail_zip;
    }
    if (zip_close(za) < 0) {
        zip_error_set(&ze, zip_error_code_zip(zip_get_error(za)), zip_error_code_system(zip_get_error(za)));
        zip_discard(za);
        zip_source_free(src);
        return zip_fail(&ze, err);
    }
    if (zip_source_stat(src, &zst) < 0 || zip_source_open(src) < 0) {
        zip_error_set(&ze, ZIP_ER_INTERNAL, 0);
        zip_source_free(src);
        return zip_fail(&ze, err);
    }
    char *b = malloc(zst.size ? zst.size : 1);
    if (!b || zip_source_read(src, b, zst.size) != (zip_int64_t)zst.size) {
        free(b);
        zip_source_close(src);
        zip_source_free(src);
        return rt_err_set(err, RT_ENOMEM, "npz", "out of memory");
    }
    zip_source_close(src);
    zip_source_free(src);
    zip_error_fini(&ze);
    *out = b;
    *len = zst.size;
    return RT_OK;
fail_zip:
    zip_error_set(&ze, zip_error_code_zip(zip_get_error(za)), zip_error_code_system(zip_get_error(za)));
    zip_discard(za);
    zip_source_free(src);
fail_members:
    for (int k = 0; k < n; k++) free(m[k].bytes), m[k].bytes = NULL;
    return zip_fail(&ze, err);
}

enum npz_arr { NPZ_FPS, NPZ_JPOS, NPZ_JVEL, NPZ_BPOS, NPZ_BQUAT, NPZ_BLIN, NPZ_BANG, NPZ_JNAMES, NPZ_BNAMES, NPZ_N };
static const char *const npz_names[NPZ_N] = {"fps",         "joint_pos",      "joint_vel",      "body_pos_w", "body_quat_w",
                                             "body_lin_vel_w", "body_ang_vel_w", "joint_names", "body_names"};

enum rt_status rtg_npz_format(const struct kin_robot *r, const float *state, int n_frames, double fps, char **out,
                              size_t *len, struct rt_err *err)
{
    struct npz_member m[NPZ_N];
    char *data[NPZ_N];
    double *pos = NULL, *quat = NULL, *lpos = NULL, *lrot = NULL, *row = NULL;
    const char **names = NULL;
    enum rt_status st = RT_ENOMEM;
    size_t T = (size_t)n_frames, B = (size_t)r->n_links, D = (size_t)r->n_dof, cols = RT_ROOT_COLS + D, tb, sz;
    memset(m, 0, sizeof m);
    *out = NULL;
    *len = 0;
    if (!(fps > 0) || !isfinite(fps)) return rt_err_set(err, RT_EINVAL, "fps", "expected a frame rate > 0, got %g", fps);
    if (n_frames < 1) return rt_err_set(err, RT_EINVAL, "npz", "no frames");
    if (!rt_mul_size(T, B, &tb) || !rt_mul_size(tb, 4 * sizeof(double), &sz) || !rt_mul_size(T, cols * 4, &sz))
        return rt_err_set(err, RT_ELIMIT, "npz", "%d frames of %zu bodies do not fit in memory sizes", n_frames, B);
    for (int i = 0; i < NPZ_N; i++) m[i].name = npz_names[i];
    pos = malloc(tb * 3 * sizeof *pos);
    quat = malloc(tb * 4 * sizeof *quat);
    lpos = malloc(4 * B * 3 * sizeof *lpos); /* four frames at a time (kin_fk_frames) */
    lrot = malloc(4 * B * 9 * sizeof *lrot);
    row = malloc(4 * cols * sizeof *row);
    names = malloc((D + B + RT_ROOT_COLS) * sizeof *names);
    if (!pos || !quat || !lpos || !lrot || !row || !names) goto fail;
    size_t one = 1, s2[2] = {T, D}, s3[3] = {T, B, 3}, s4[3] = {T, B, 4};
    if (!(m[NPZ_FPS].bytes = npy_alloc("<f8", &one, 1, 8, &data[NPZ_FPS], &m[NPZ_FPS].len))) goto fail;
    for (int i = NPZ_JPOS; i <= NPZ_JVEL; i++)
        if (!(m[i].bytes = npy_alloc("<f4", s2, 2, T * D * 4, &data[i], &m[i].len))) goto fail;
    for (int i = NPZ_BPOS; i <= NPZ_BANG; i++)
        if (!(m[i].bytes = npy_alloc("<f4", i == NPZ_BQUAT ? s4 : s3, 3, tb * (i == NPZ_BQUAT ? 4 : 3) * 4, &data[i], &m[i].len)))
            goto fail;
    rtg_columns(r, names);
    if (!(m[NPZ_JNAMES].bytes = npy_names(names + RT_ROOT_COLS, D, &m[NPZ_JNAMES].len))) goto fail;
    for (size_t b = 0; b < B; b++) names[b] = r->links[b].name;
    if (!(m[NPZ_BNAMES].bytes = npy_names(names, B, &m[NPZ_BNAMES].len))) goto fail;
    memcpy(data[NPZ_FPS], &fps, 8); /* little-endian hosts only (Linux x86-64, arm64) */
    /* Bodies by forward kinematics, four frames at a time (kin_fk's
     * bits); each body's quaternion kept on the hemisphere of its previous
     * frame so that the series is continuous. */
    for (size_t t0 = 0; t0 < T; t0 += 4) {
        size_t nf = T - t0 < 4 ? T - t0 : 4;
        for (size_t k = 0; k < nf * cols; k++) row[k] = state[t0 * cols + k];
        kin_fk_frames(r, (int)nf, row, cols, lpos, lrot);
        for (size_t t = t0; t < t0 + nf; t++)
            for (size_t b = 0; b < B; b++) {
                double *q = quat + (t * B + b) * 4;
                memcpy(pos + (t * B + b) * 3, lpos + ((t - t0) * B + b) * 3, 3 * sizeof *pos);
                rot_to_quat(lrot + ((t - t0) * B + b) * 9, q);
                const double *p = t ? quat + ((t - 1) * B + b) * 4 : NULL;
                if (p ? q[0] * p[0] + q[1] * p[1] + q[2] * p[2] + q[3] * p[3] < 0 : q[0] < 0)
                    for (int k = 0; k < 4; k++) q[k] = -q[k];
            }
    }
    float *jp = (float *)(void *)data[NPZ_JPOS], *jv = (float *)(void *)data[NPZ_JVEL];
    float *bp = (float *)(void *)data[NPZ_BPOS], *bq = (float *)(void *)data[NPZ_BQUAT];
    float *bl = (float *)(void *)data[NPZ_BLIN], *ba = (float *)(void *)data[NPZ_BANG];
    double dt = 1.0 / fps;
    for (size_t t = 0; t < T; t++) {
        /* Central differences inside, one-sided at the ends; one frame: 0. */
        size_t t0 = t ? t - 1 : 0, t1 = t + 1 < T ? t + 1 : t;
        double h = (double)(t1 - t0) * dt;
        for (size_t j = 0; j < D; j++) {
            double a = state[t0 * cols + RT_ROOT_COLS + j], c = state[t1 * cols + RT_ROOT_COLS + j];
            jp[t * D + j] = state[t * cols + RT_ROOT_COLS + j];
            jv[t * D + j] = t1 > t0 ? (float)((c - a) / h) : 0.0f;
        }
        for (size_t b = 0; b < B; b++) {
            size_t i = t * B + b;
            double w[3] = {0, 0, 0};
            if (t1 > t0) ang_vel(quat + (t0 * B + b) * 4, quat + (t1 * B + b) * 4, h, w);
            for (int k = 0; k < 3; k++) {
                bp[i * 3 + k] = (float)pos[i * 3 + k];
                bl[i * 3 + k] = t1 > t0 ? (float)((pos[(t1 * B + b) * 3 + k] - pos[(t0 * B + b) * 3 + k]) / h) : 0.0f;
                ba[i * 3 + k] = (float)w[k];
            }
            for (int k = 0; k < 4; k++) bq[i * 4 + k] = (float)quat[i * 4 + k];
        }
    }
    st = zip_members(m, NPZ_N, out, len, err);
    goto done;
fail:
    st = rt_err_set(err, RT_ENOMEM, "npz", "out of memory");
    for (int i = 0; i < NPZ_N; i++) free(m[i].bytes);
done:
    free(names);
    free(row);
    free(lrot);
    free(lpos);
    free(quat);
    free(pos);
    return st;
}

/* --- resampling ------------------------------------------------------------- */

enum rt_status rtg_resample(const float *state, int n_frames, int cols, double fps_in, double fps_out, float **out,
                            int *n_out, struct rt_err *err)
{
    *out = NULL;
    *n_out = 0;
    if (!(fps_in > 0) || !isfinite(fps_in) || !(fps_out > 0) || !isfinite(fps_out))
        return rt_err_set(err, RT_EINVAL, "fps", "expected frame rates > 0, got %g -> %g", fps_in, fps_out);
    if (n_frames < 1 || cols < RT_ROOT_COLS) return rt_err_set(err, RT_EINVAL, "resample", "no frames");
    double span = (double)(n_frames - 1) * fps_out / fps_in;
    if (span + 1 > RTG_RESAMPLE_MAX_FRAMES)
        return rt_err_set(err, RT_ELIMIT, "fps", "%d frames at %g fps would be %.0f frames at %g fps (limit %d)", n_frames,
                          fps_in, span + 1, fps_out, RTG_RESAMPLE_MAX_FRAMES);
    int n = (int)floor(span + 1e-9) + 1;
    size_t bytes;
    if (!rt_mul_size((size_t)n, (size_t)cols * sizeof(float), &bytes) || !(*out = malloc(bytes)))
        return rt_err_set(err, RT_ENOMEM, "resample", "out of memory");
    for (int k = 0; k < n; k++) {
        double x = (double)k * fps_in / fps_out;
        int i = (int)floor(x);
        if (i > n_frames - 1) i = n_frames - 1;
        if (i < 0) i = 0;
        double u = x - i;
        if (i == n_frames - 1 || u < 1e-12) u = 0;
        const float *a = state + (size_t)i * (size_t)cols, *b = u > 0 ? a + cols : a;
        float *o = *out + (size_t)k * (size_t)cols;
        for (int c = 0; c < cols; c++)
            o[c] = c >= 3 && c < 7 ? 0.0f : (float)((double)a[c] + u * ((double)b[c] - (double)a[c]));
        /* slerp of the root quaternion (x y z w) along the shorter arc */
        double qa[4], qb[4], d = 0, na = 0, nb = 0;
        for (int c = 0; c < 4; c++) qa[c] = a[3 + c], qb[c] = b[3 + c], na += qa[c] * qa[c], nb += qb[c] * qb[c];
        na = sqrt(na), nb = sqrt(nb);
        for (int c = 0; c < 4; c++) qa[c] /= na, qb[c] /= nb, d += qa[c] * qb[c];
        if (d < 0) {
            d = -d;
            for (int c = 0; c < 4; c++) qb[c] = -qb[c];
        }
        double wa = 1 - u, wb = u;
        if (d < 0.9995) {
            double th = acos(d), s = sin(th);
            wa = sin((1 - u) * th) / s, wb = sin(u * th) / s;
        }
        double q[4], nq = 0;
        for (int c = 0; c < 4; c++) q[c] = wa * qa[c] + wb * qb[c], nq += q[c] * q[c];
        nq = sqrt(nq);
        /* u == 0 keeps the input frame's bits. */
        for (int c = 0; c < 4; c++) o[3 + c] = u > 0 ? (float)(q[c] / nq) : a[3 + c];
    }
    *n_out = n;
    return RT_OK;
}
