/* test_num.c -- base/num.c: rt_decimal_fast(), the exact fast path of the
 * trajectory CSV and BVH readers, against strtod(): over generated numbers
 * in every form it takes (signs, leading zeros, integer and fraction parts,
 * exponents, 1 to 15 significant digits, decimal exponents -22..22) it
 * reads the whole number and gives strtod's bits; what it does not take
 * (more digits, exponents out of its range, malformed text) it leaves,
 * returning 0; it never reads past `end`. And rt_parse_int / rt_parse_real,
 * the strict readers of flags and options. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/num.h"
#include "test.h"

static uint64_t x = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; }

int main(void)
{
    char s[96];
    long taken = 0, checked = 0, wrong = 0;
    for (int i = 0; i < 400000; i++) {
        /* [sign][int digits][.frac digits][e[sign]exp] */
        int w = 0, ni = (int)(rnd() % 10), nf = (int)(rnd() % 10), lz = (int)(rnd() % 3);
        uint64_t r = rnd();
        if (r & 1) s[w++] = (r & 2) ? '-' : '+';
        for (int k = 0; k < lz; k++) s[w++] = '0';
        for (int k = 0; k < ni; k++) s[w++] = (char)('0' + rnd() % 10);
        if (nf || !ni) {
            s[w++] = '.';
            for (int k = 0; k < nf; k++) s[w++] = (char)('0' + rnd() % 10);
        }
        if (rnd() % 3 == 0) w += snprintf(s + w, sizeof s - (size_t)w, "e%d", (int)(rnd() % 61) - 30);
        s[w] = 0;
        char *end;
        double want = strtod(s, &end), got = -1;
        size_t used = rt_decimal_fast(s, s + w, &got);
        if (!used) continue;
        taken++;
        checked++;
        if (used != (size_t)w || end != s + w || memcmp(&got, &want, sizeof got)) {
            if (wrong++ < 5) fprintf(stderr, "'%s': used %zu of %d, %.17g against strtod's %.17g\n", s, used, w, got, want);
        }
        /* As a field of a row: what follows (a separator and more digits,
         * or a byte past the ASCII digits) lies within the eight bytes the
         * reader loads at a time, and stops it all the same. */
        static const char *const after[] = {",12345678", " 9", ":", "\xff\xfa" "0000000", "/0"};
        const char *a = after[rnd() % 5];
        size_t al = strlen(a);
        memcpy(s + w, a, al + 1);
        got = -1;
        used = rt_decimal_fast(s, s + w + al, &got);
        if (used != (size_t)w || memcmp(&got, &want, sizeof got)) {
            if (wrong++ < 5) fprintf(stderr, "'%s': used %zu of %d, %.17g against strtod's %.17g\n", s, used, w, got, want);
        }
    }
    CHECK_EQ_INT((int)wrong, 0);
    CHECK(taken > 200000); /* most of these forms are the fast path's */
    /* Its edges: 15 significant digits in, 16 out; exponents +-22 in, 23 out. */
    double v;
    const char *t15 = "123456789012345";
    CHECK_EQ_INT((int)rt_decimal_fast(t15, t15 + 15, &v), 15);
    CHECK(v == 123456789012345.0);
    const char *t16 = "1234567890123456";
    CHECK_EQ_INT((int)rt_decimal_fast(t16, t16 + 16, &v), 0);
    const char *e22 = "1e22", *e23 = "1e23", *em22 = "5e-22", *em23 = "5e-23";
    CHECK_EQ_INT((int)rt_decimal_fast(e22, e22 + 4, &v), 4);
    CHECK(v == 1e22);
    CHECK_EQ_INT((int)rt_decimal_fast(e23, e23 + 4, &v), 0);
    CHECK_EQ_INT((int)rt_decimal_fast(em22, em22 + 5, &v), 5);
    CHECK(v == 5e-22);
    CHECK_EQ_INT((int)rt_decimal_fast(em23, em23 + 5, &v), 0);
    /* Leading zeros are not significant; zero with any exponent is zero. */
    const char *lz = "0000000000000000000001.5", *z = "-0e999";
    CHECK_EQ_INT((int)rt_decimal_fast(lz, lz + strlen(lz), &v), (int)strlen(lz));
    CHECK(v == 1.5);
    CHECK_EQ_INT((int)rt_decimal_fast(z, z + 6, &v), 6);
    CHECK(v == 0.0 && signbit(v));
    /* Not numbers: nothing read. */
    static const char *const bad[] = {"", ".", "-", "+.", "e5", "1e", "1e+", "inf", "nan", "--1", NULL};
    for (int i = 0; bad[i]; i++) CHECK_EQ_INT((int)rt_decimal_fast(bad[i], bad[i] + strlen(bad[i]), &v), 0);
    /* It stops at the number's end (the caller checks what follows) and at
     * `end`, never past it. */
    const char *hex = "0x10", *two = "2.5,7";
    CHECK_EQ_INT((int)rt_decimal_fast(hex, hex + 4, &v), 1); /* the "0"; the reader refuses the 'x' */
    CHECK_EQ_INT((int)rt_decimal_fast(two, two + 5, &v), 3);
    CHECK(v == 2.5);
    CHECK_EQ_INT((int)rt_decimal_fast(two, two + 2, &v), 2);
    CHECK(v == 2.0);
    /* The strict readers. */
    long long n;
    CHECK(rt_parse_int("-42", -100, 100, &n) && n == -42);
    CHECK(!rt_parse_int("42 ", -100, 100, &n) && !rt_parse_int("101", -100, 100, &n) && !rt_parse_int("+1", 0, 9, &n));
    CHECK(rt_parse_real("-1.25e2", &v) && v == -125.0);
    CHECK(!rt_parse_real("1e999", &v) && !rt_parse_real("0x1p3", &v) && !rt_parse_real(" 1", &v) && !rt_parse_real("nan", &v));
    printf("test_num: %ld numbers read as strtod reads them\n", checked);
    return test_report("test_num");
}
