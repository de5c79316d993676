/* num.h -- strict number parsing for everything a user types or sends: a
 * whole string is one decimal number or it is refused. No leading or
 * trailing blanks, no hex, no "inf"/"nan", no empty string, no overflow.
 * The CLI's flags, the daemon's query parameters and the option table read
 * numbers through these two functions only. */
#ifndef RT_BASE_NUM_H
#define RT_BASE_NUM_H

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

#ifdef __cplusplus
}
#endif
#endif
