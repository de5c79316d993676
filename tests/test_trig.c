/* test_trig.c -- kinematics/trig.h: the FK's sine and cosine and the
 * rotation errors' arc cosine. Against long
 * double's sinl and cosl, every result within one unit in the last place
 * (below 1 ulp: at most 1 counted in whole ulps of the double result) over
 * joint angles, BVH-sized angles, the range's end, the neighbours of the
 * multiples of pi/2 where the range reduction cancels, tiny values and
 * zeros (their sign kept); lanes past the fast range, inf and NaN as
 * libm's; kin_sincos() of a value is kin_sincos4()'s lane of it whatever
 * the other lanes hold; and most results libm's bits. kin_acos likewise
 * over [-1, 1], its ends and what lies outside. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../kinematics/trig.h"
#include "test.h"

static uint64_t rs = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17; }
static double unif(double lo, double hi) { return lo + (hi - lo) * (double)(rnd() >> 11) * 0x1p-53; }

static long checked, over, same_libm;
static double worst;

/* |got - want| in units of the last place of the double nearest want. */
static double ulps(double got, long double want)
{
    double w = (double)want;
    if (w == 0.0) return got == 0.0 ? 0.0 : INFINITY;
    int e;
    frexp(w, &e);
    double ulp = ldexp(1.0, e - 53);
    return (double)fabsl((long double)got - want) / ulp;
}

static void check(double x)
{
    double s, c;
    kin_sincos(x, &s, &c);
    long double xs = (long double)x;
    double es = ulps(s, sinl(xs)), ec = ulps(c, cosl(xs));
    checked++;
    if (es > worst) worst = es;
    if (ec > worst) worst = ec;
    if (es > 1.0 || ec > 1.0) {
        if (over++ < 5) fprintf(stderr, "x = %a: sin %a (%.3f ulp), cos %a (%.3f ulp)\n", x, s, es, c, ec);
    }
    if (s == sin(x) && c == cos(x)) same_libm++;
}

int main(void)
{
    for (int i = 0; i < 300000; i++) check(unif(-M_PI, M_PI)); /* joint angles */
    for (int i = 0; i < 100000; i++) check(unif(-0.8, 0.8));
    for (int i = 0; i < 100000; i++) check(unif(-50.0, 50.0)); /* BVH degrees in radians, many turns */
    for (int i = 0; i < 50000; i++) check(unif(-KIN_TRIG_FAST_MAX, KIN_TRIG_FAST_MAX));
    for (int i = 0; i < 20000; i++) check(ldexp(unif(1.0, 2.0), -(int)(rnd() % 1060))); /* tiny, subnormal */
    /* Next to the multiples of pi/2, where x - n pi/2 cancels (the second
     * and third rounds of the reduction). */
    for (long k = 1; k < 83000; k += 1 + (long)(rnd() % 7)) {
        double x = (double)k * (M_PI / 2);
        for (int d = -3; d <= 3; d++) {
            double y = x;
            for (int m = 0; m < (d < 0 ? -d : d); m++) y = nextafter(y, d < 0 ? 0.0 : INFINITY);
            if (y <= KIN_TRIG_FAST_MAX) check(y), check(-y);
        }
    }
    check(M_PI / 2), check(M_PI), check(M_PI / 4), check(KIN_TRIG_FAST_MAX), check(-KIN_TRIG_FAST_MAX);
    printf("test_trig: %ld values, worst %.3f ulp, %ld over one ulp, %.2f%% libm's bits\n", checked, worst, over,
           100.0 * (double)same_libm / (double)checked);
    CHECK_EQ_INT((int)over, 0);
    CHECK(same_libm > checked * 9 / 10);

    /* Zeros keep their sign; sin(0) = 0, cos(0) = 1 exactly. */
    double s, c;
    kin_sincos(-0.0, &s, &c);
    CHECK(s == 0.0 && signbit(s) && c == 1.0);
    kin_sincos(0.0, &s, &c);
    CHECK(s == 0.0 && !signbit(s) && c == 1.0);

    /* Past the fast range, inf and NaN: libm's, lane by lane. */
    const double odd[] = {0x1p17 + 1.0, -1e6, 1e300, 0x1p60 + 3.0, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        kin_sincos(odd[i], &s, &c);
        double ws = sin(odd[i]), wc = cos(odd[i]);
        CHECK(isnan(ws) ? isnan(s) && isnan(c) : (s == ws && c == wc));
    }

    /* acos against acosl over [-1, 1] (uniform, near the ends, near the
     * branches at +-1/2, tiny), below one ulp; the ends and outside. */
    long a_checked = 0, a_over = 0, a_libm = 0;
    double a_worst = 0;
    for (int i = 0; i < 600000; i++) {
        uint64_t r = rnd() % 4;
        double x = r == 0 ? unif(-1.0, 1.0) : r == 1 ? (rnd() & 1 ? 1.0 : -1.0) * (1.0 - ldexp(unif(0, 1), -(int)(rnd() % 50)))
                 : r == 2 ? (rnd() & 1 ? 0.5 : -0.5) + unif(-1e-6, 1e-6) : ldexp(unif(-1, 1), -(int)(rnd() % 80));
        double a = kin_acos(x), e = ulps(a, acosl((long double)x));
        a_checked++;
        if (e > a_worst) a_worst = e;
        if (e > 1.0 && a_over++ < 5) fprintf(stderr, "acos(%a) = %a: %.3f ulp\n", x, a, e);
        if (a == acos(x)) a_libm++;
    }
    printf("test_trig: acos: %ld values, worst %.3f ulp, %ld over one ulp, %.2f%% libm's bits\n", a_checked, a_worst,
           a_over, 100.0 * (double)a_libm / (double)a_checked);
    CHECK_EQ_INT((int)a_over, 0);
    CHECK(kin_acos(1.0) == 0.0 && kin_acos(-1.0) == acos(-1.0) && kin_acos(0.0) == acos(0.0));
    CHECK(isnan(kin_acos(1.0 + DBL_EPSILON)) && isnan(kin_acos(-2.0)) && isnan(kin_acos(NAN)));

    /* A value's lane is kin_sincos() of it, whatever its neighbours (in
     * range or not). */
    int lanes_bad = 0;
    for (int i = 0; i < 200000; i++) {
        kin_v4d v, sv, cv;
        for (int l = 0; l < 4; l++) {
            uint64_t r = rnd() % 16;
            v[l] = r == 0 ? 1e7 * unif(-1, 1) : r == 1 ? NAN : unif(-20.0, 20.0);
        }
        kin_sincos4(&v, &sv, &cv);
        for (int l = 0; l < 4; l++) {
            double ls = sv[l], lc = cv[l];
            kin_sincos(v[l], &s, &c);
            if (memcmp(&s, &ls, sizeof s) || memcmp(&c, &lc, sizeof c)) lanes_bad++;
        }
        for (int l = 0; l < 4; l++) v[l] = rnd() % 8 == 0 ? unif(-1.5, 1.5) : unif(-1.0, 1.0);
        kin_acos4(&v, &sv);
        for (int l = 0; l < 4; l++) {
            double la = sv[l], a = kin_acos(v[l]);
            if (memcmp(&a, &la, sizeof a) && !(isnan(a) && isnan(la))) lanes_bad++;
        }
    }
    CHECK_EQ_INT(lanes_bad, 0);
    return test_report("test_trig");
}
