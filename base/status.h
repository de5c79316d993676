/* status.h -- status codes, caller-owned error detail and size helpers.
 *
 * This is the lowest layer of retargetd: every fallible function in every
 * module returns an `enum rt_status` and, when the caller passes a non-NULL
 * `struct rt_err *`, fills in what went wrong and where the user must look
 * (`clip.bvh:120`, `urdf:joint[7].limit`, `body.options.max_iters`).
 * There is no global "last error". */
#ifndef RT_STATUS_H
#define RT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rt_status {
    RT_OK = 0,
    RT_EINVAL = -1,    /* invalid argument or option */
    RT_EPARSE = -2,    /* malformed input file or body */
    RT_ENOTFOUND = -3, /* named thing does not exist */
    RT_ELIMIT = -4,    /* input exceeds a documented limit */
    RT_ENOMEM = -5,    /* allocation failed */
    RT_EIO = -6,       /* read or write failed */
    RT_ENODEV = -7,    /* no such backend or device */
    RT_EBACKEND = -8,  /* a backend (CUDA, LAPACK) reported an error */
    RT_ESTATE = -9,    /* operation not valid in the current state */
    RT_ECONFLICT = -10, /* conflicting request (idempotency, duplicates) */
    RT_EBUSY = -11      /* too many requests: a per-client quota is used up; retry later */
};

struct rt_err {
    int code;       /* an enum rt_status */
    char where[96]; /* what the user must fix: file:line, field path */
    char msg[160];  /* one line, no trailing newline */
};

/* Returns a static, never NULL, lower-case name for `st` ("ok", "parse error"). */
const char *rt_status_str(int st);

/* Fills `err` (when non-NULL) with `code`, `where` (may be NULL) and a
 * printf-style message, truncating to the buffers; returns `code` so that
 * one line can both report and return. */
int rt_err_set(struct rt_err *err, int code, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Clears `err` (NULL-safe). */
void rt_err_clear(struct rt_err *err);

/* Formats `err` as "where: message" (or "message" without a where) into buf. */
const char *rt_err_line(const struct rt_err *err, char *buf, size_t cap);

/* Stores a*b in *out and returns 1, or returns 0 when the product overflows
 * size_t. Every size derived from input goes through this before malloc. */
int rt_mul_size(size_t a, size_t b, size_t *out);

/* Writes into buf the shortest of %.15g .. %.17g that strtod reads back
 * as exactly v (cJSON's own printer accepts an error of one ulp). */
void rt_format_double(double v, char *buf, size_t cap);

/* Reads a whole file into a NUL-terminated malloc'd buffer (caller frees).
 * Refuses files larger than `max_bytes` with RT_ELIMIT. */
enum rt_status rt_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
                            struct rt_err *err);

/* One-line log record to stderr: "level module: where: message". */
void rt_log(const char *level, const char *module, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
