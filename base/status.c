/* status.c -- status names, error detail, overflow-checked sizes, file
 * reading and one-line logging shared by every module. */
#include "status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int rt_err_set(struct rt_err *err, int code, const char *where, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    snprintf(err->where, sizeof err->where, "%s", where ? where : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* Messages are one line: a newline from input would split a log record. */
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    for (char *p = err->where; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return code;
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
    *out = NULL;
    if (len) *len = 0;
    if (!f) return rt_err_set(err, RT_EIO, path, "cannot open: %s", strerror(errno));
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
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
    char msg[512], at[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One record, one line: `where` may be a path or name from input too. */
    snprintf(at, sizeof at, "%s", where ? where : "");
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    for (char *p = at; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    if (at[0])
        fprintf(stderr, "%s %s: %s: %s\n", level, module, at, msg);
    else
        fprintf(stderr, "%s %s: %s\n", level, module, msg);
}
