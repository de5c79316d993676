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

/* Sizes of an error's text. They bound every message the code builds from
 * bounded input, so that errors reach the user whole: a name is at most
 * RT_NAME_MAX - 1 bytes wherever it enters (a BVH joint, URDF or MJCF link
 * or joint, a profile, a joint-position source, a stored robot or token:
 * each reader enforces its documented limit, all of them <= this), a path
 * at most RT_PATH_MAX - 1 bytes (PATH_MAX: the system opens no longer
 * one), and a value of unbounded length (a bad token, an option's value,
 * a JSON key) is quoted through rt_quote(). `where` holds a path and a suffix (":LINE", ":key", a field
 * path); `msg` a path, a few names, a nested message of a reader and the
 * text around them. Should a message still not fit, rt_err_set() ends it
 * with RT_ERR_CUT_MARK rather than cutting it silently.
 *
 * struct rt_err is about 12.5 KiB: keep it off the stack of recursive
 * functions (none has one; an MJCF <include> reads its file in a frame of
 * its own), pass it by pointer, and keep it out of device code (solver/cuda
 * uses it on the host only). */
#define RT_NAME_MAX 256
#define RT_PATH_MAX 4096
#define RT_ERR_WHERE_MAX (RT_PATH_MAX + 2 * RT_NAME_MAX)
#define RT_ERR_MSG_MAX (2 * RT_PATH_MAX)
#define RT_ERR_LINE_MAX (RT_ERR_WHERE_MAX + RT_ERR_MSG_MAX + 2)
#define RT_ERR_CUT_MARK " [...]"

struct rt_err {
    int code;                     /* an enum rt_status */
    char where[RT_ERR_WHERE_MAX]; /* what the user must fix: file:line, field path */
    char msg[RT_ERR_MSG_MAX];     /* one line, no trailing newline */
};

/* Returns a static, never NULL, lower-case name for `st` ("ok", "parse error"). */
const char *rt_status_str(int st);

/* Fills `err` (when non-NULL) with `code`, `where` (may be NULL) and a
 * printf-style message; returns `code` so that one line can both report
 * and return. A `where` or message longer than its buffer (which the
 * limits above rule out for messages built from bounded input) ends in
 * RT_ERR_CUT_MARK. `where` and the arguments may point into `err` itself. */
int rt_err_set(struct rt_err *err, int code, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Clears `err` (NULL-safe). */
void rt_err_clear(struct rt_err *err);

/* Formats `err` as "where: message" (or "message" without a where) into
 * buf; a buf of RT_ERR_LINE_MAX bytes always holds the whole line. */
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

/* Quotes a value of unbounded length in a message: returns `s` itself when
 * it is at most RT_QUOTE_MAX bytes (so any name, RT_NAME_MAX - 1 bytes at
 * most, comes whole), else writes to buf (RT_QUOTE_BUF bytes) its first
 * bytes, cut at a UTF-8 character boundary, then "... (N bytes)", and
 * returns buf. The message stays whole and says that the value is an
 * excerpt. */
#define RT_QUOTE_MAX RT_NAME_MAX
#define RT_QUOTE_BUF (RT_QUOTE_MAX + 40)
const char *rt_quote(const char *s, char buf[RT_QUOTE_BUF]);
/* rt_quote() with a buffer that lives until the end of the enclosing block
 * (a compound literal): rt_err_set(err, RT_EPARSE, w, "got '%s'", RT_QUOTE(tok)). */
#define RT_QUOTE(s) rt_quote((s), (char[RT_QUOTE_BUF]){0})

/* One-line log record to stderr: "level module: where: message", each
 * whole (at most RT_ERR_WHERE_MAX and RT_ERR_MSG_MAX bytes, as an error). */
void rt_log(const char *level, const char *module, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
