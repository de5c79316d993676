/* status.c -- status names, error detail, overflow-checked sizes, file
 * reading and one-line logging shared by every module. */
#include "status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *rt_status_str(int st)
{
    switch (st) {
    case RT_OK: return "ok";
    case RT_EINVAL: return "invalid argument";
    case RT_EPARSE: return "parse error";
    case RT_ENOTFOUND: return "not found";
    case RT_ELIMIT: return "limit exceeded";
    case RT_ENOMEM: return "out of memory";
    case RT_EIO: return "i/o error";
    case RT_ENODEV: return "no device";
    case RT_EBACKEND: return "backend error";
    case RT_ESTATE: return "invalid state";
    case RT_ECONFLICT: return "conflict";
    case RT_EBUSY: return "too many requests";
    default: return "unknown error";
    }
}

/* Ends buf (of capacity cap, holding a string that was cut) with
 * RT_ERR_CUT_MARK, at a UTF-8 character boundary. */
static void mark_cut(char *buf, size_t cap)
{
    size_t m = sizeof RT_ERR_CUT_MARK - 1, at = cap - 1 - m;
    while (at > 0 && ((unsigned char)buf[at] & 0xC0) == 0x80) at--;
    memcpy(buf + at, RT_ERR_CUT_MARK, m + 1);
}

/* One line: a newline from input would split a log record. */
static void one_line(char *p)
{
    for (; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

int rt_err_set(struct rt_err *err, int code, const char *where, const char *fmt, ...)
{
    if (!err) return code;
    /* `where` or an argument may be err's own text: format into copies. */
    static const size_t wcap = sizeof err->where, mcap = sizeof err->msg;
    char *w = malloc(wcap), *m = malloc(mcap);
    va_list ap;
    if (!w || !m) {
        free(w);
        free(m);
        err->code = code;
        snprintf(err->msg, mcap, "%s (out of memory for the message)", rt_status_str(code));
        return code;
    }
    if ((size_t)snprintf(w, wcap, "%s", where ? where : "") >= wcap) mark_cut(w, wcap);
    va_start(ap, fmt);
    int n = vsnprintf(m, mcap, fmt, ap);
    va_end(ap);
    if (n < 0) snprintf(m, mcap, "%s", rt_status_str(code));
    else if ((size_t)n >= mcap) mark_cut(m, mcap);
    one_line(w);
    one_line(m);
    err->code = code;
    memcpy(err->where, w, strlen(w) + 1);
    memcpy(err->msg, m, strlen(m) + 1);
    free(w);
    free(m);
    return code;
}

const char *rt_quote(const char *s, char buf[RT_QUOTE_BUF])
{
    size_t n = strlen(s), k = RT_QUOTE_MAX - 20;
    if (n <= RT_QUOTE_MAX) return s;
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    snprintf(buf, RT_QUOTE_BUF, "%.*s... (%zu bytes)", (int)k, s, n);
    return buf;
}

void rt_err_clear(struct rt_err *err)
{
    if (!err) return;
    err->code = RT_OK;
    err->where[0] = 0;
    err->msg[0] = 0;
}

const char *rt_err_line(const struct rt_err *err, char *buf, size_t cap)
{
    if (!cap) return buf;
    if (!err) {
        snprintf(buf, cap, "unknown error");
    } else if (err->where[0]) {
        snprintf(buf, cap, "%s: %s", err->where, err->msg[0] ? err->msg : rt_status_str(err->code));
    } else {
        snprintf(buf, cap, "%s", err->msg[0] ? err->msg : rt_status_str(err->code));
    }
    return buf;
}

int rt_mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

void rt_format_double(double v, char *buf, size_t cap)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

enum rt_status rt_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
                            struct rt_err *err)
{
    char *buf = NULL;
    size_t n = 0, cap = 0;
    FILE *f = fopen(path, "rb");
    struct stat sb;
    *out = NULL;
    if (len) *len = 0;
    if (!f) return rt_err_set(err, RT_EIO, path, "cannot open: %s", strerror(errno));
    /* A regular file's size is known: one buffer of it and a byte more (no
     * copy as it grows; the byte sees a file that grew since). */
    size_t first = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size < max_bytes
                       ? (size_t)sb.st_size + 1
                       : 65536;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : first;
            if (ncap > max_bytes + 1) ncap = max_bytes + 1;
            if (ncap <= cap) {
                fclose(f);
                free(buf);
                return rt_err_set(err, RT_ELIMIT, path, "file larger than %zu bytes", max_bytes);
            }
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                fclose(f);
                free(buf);
                return rt_err_set(err, RT_ENOMEM, path, "out of memory reading file");
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return rt_err_set(err, RT_EIO, path, "read error");
    }
    if (n > max_bytes) {
        free(buf);
        return rt_err_set(err, RT_ELIMIT, path, "file larger than %zu bytes", max_bytes);
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf) return rt_err_set(err, RT_ENOMEM, path, "out of memory");
    }
    buf[n] = 0;
    *out = buf;
    if (len) *len = n;
    return RT_OK;
}

void rt_log(const char *level, const char *module, const char *where, const char *fmt, ...)
{
    /* The record as an error holds it: whole, on one line (`where` may be
     * a path or name from input too). */
    struct rt_err *e = malloc(sizeof *e);
    char *msg;
    va_list ap;
    if (!e) {
        fprintf(stderr, "%s %s: (out of memory for a log record)\n", level, module);
        return;
    }
    if (!(msg = malloc(RT_ERR_MSG_MAX))) {
        free(e);
        fprintf(stderr, "%s %s: (out of memory for a log record)\n", level, module);
        return;
    }
    va_start(ap, fmt);
    int n = vsnprintf(msg, RT_ERR_MSG_MAX, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n >= RT_ERR_MSG_MAX) mark_cut(msg, RT_ERR_MSG_MAX);
    rt_err_set(e, RT_OK, where, "%s", msg);
    if (e->where[0])
        fprintf(stderr, "%s %s: %s: %s\n", level, module, e->where, e->msg);
    else
        fprintf(stderr, "%s %s: %s\n", level, module, e->msg);
    free(msg);
    free(e);
}
