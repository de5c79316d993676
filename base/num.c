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

size_t rt_decimal_fast(const char *s, const char *end, double *v)
{
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *c = s;
    unsigned long long m = 0;
    int digits = 0, exp10 = 0, neg = 0, any = 0;
    if (c < end && (*c == '-' || *c == '+')) neg = *c++ == '-';
    while (c < end && *c == '0') c++, any = 1; /* leading zeros are not significant */
    for (; c < end && *c >= '0' && *c <= '9'; c++, any = 1) {
        if (++digits > 15) return 0;
        m = m * 10 + (unsigned)(*c - '0');
    }
    if (c < end && *c == '.') {
        c++;
        if (!digits)
            for (; c < end && *c == '0'; c++, any = 1) exp10--;
        for (; c < end && *c >= '0' && *c <= '9'; c++, any = 1) {
            if (++digits > 15) return 0;
            m = m * 10 + (unsigned)(*c - '0');
            exp10--;
        }
    }
    if (!any) return 0;
    if (c < end && (*c == 'e' || *c == 'E')) {
        int eneg = 0, e = 0, ed = 0;
        c++;
        if (c < end && (*c == '-' || *c == '+')) eneg = *c++ == '-';
        for (; c < end && *c >= '0' && *c <= '9'; c++, ed++)
            if (e < 10000) e = e * 10 + (*c - '0');
        if (!ed) return 0;
        exp10 += eneg ? -e : e;
    }
    double x = (double)m;
    if (m == 0) exp10 = 0;
    if (exp10 < -22 || exp10 > 22) return 0;
    x = exp10 < 0 ? x / pow10[-exp10] : x * pow10[exp10];
    *v = neg ? -x : x;
    return (size_t)(c - s);
}
