/* num.c -- strict decimal numbers (see num.h). */
#include "num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int rt_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    const char *p = s;
    char *end;
    if (!s) return 0;
    if (*p == '-') p++;
    if (!is_digit(*p)) return 0;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

int rt_parse_real(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    char *end;
    if (!s) return 0;
    /* The shape first, so that strtod's extras (hex, inf, nan, blanks) never pass. */
    if (*p == '-' || *p == '+') p++;
    while (is_digit(*p)) p++, digits++;
    if (*p == '.') {
        p++;
        while (is_digit(*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+') p++;
        if (!is_digit(*p)) return 0;
        while (is_digit(*p)) p++;
    }
    if (*p) return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || (errno == ERANGE && v != 0.0)) return 0;
    *out = v;
    return 1;
}
