/* num.h -- strict number parsing for everything a user types or sends: a
 * whole string is one decimal number or it is refused. No leading or
 * trailing blanks, no hex, no "inf"/"nan", no empty string, no overflow.
 * The CLI's flags, the daemon's query parameters and the option table read
 * numbers through the first two functions only; rt_decimal_fast() is the
 * readers' exact fast path for files of numbers. */
#ifndef RT_BASE_NUM_H
#define RT_BASE_NUM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses `s` as a decimal integer ([-]digits) in [lo, hi] into *out.
 * Returns 1 on success, 0 otherwise (*out untouched). */
int rt_parse_int(const char *s, long long lo, long long hi, long long *out);

/* Parses `s` as a finite decimal real ([-]digits[.digits][e[+-]digits], or
 * .digits) into *out. Returns 1 on success, 0 otherwise (*out untouched).
 * Range checks are the caller's (the option table's). */
int rt_parse_real(const char *s, double *out);

/* The decimal number at s (text up to end, not necessarily NUL-terminated)
 * read exactly as strtod() reads it, when that takes one IEEE operation:
 * [+-]digits[.digits][e[+-]digits] or [+-].digits with at most 15
 * significant digits and a decimal exponent within +-22 (the digits and
 * the power of ten are then exact doubles, so one correctly rounded
 * multiplication or division gives strtod's bits: Clinger's fast path).
 * Returns the characters used, or 0 for anything else, which the caller
 * reads with strtod() or refuses. What follows the number is the caller's
 * to check. For the numbers of files (trajectory CSV, BVH motion), where
 * strtod() is most of the reading. */
size_t rt_decimal_fast(const char *s, const char *end, double *v);

#ifdef __cplusplus
}
#endif
#endif
