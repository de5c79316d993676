/* test_select.c -- base/select.c: rt_kth_smallest() against qsort over
 * generated arrays: lengths 1 to 3,000; values of one sign or both, of
 * every magnitude (subnormals, infinities), many equal values, zeros of
 * both signs, and the quality report's kind (errors of a few millimetres
 * to a few centimetres); every k of the short arrays, the p95 rank and
 * random ranks of the long ones. The value must be the sorted array's at
 * k, bit for bit (a zero as +0), and the input must be left as it was. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/select.h"
#include "test.h"

static uint64_t x = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; }
static double unit(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

static int cmp(const void *a, const void *b)
{
    double p = *(const double *)a, q = *(const double *)b;
    return (p > q) - (p < q);
}

/* A value of kind `kind`. */
static double value(int kind)
{
    switch (kind) {
    case 0: return 0.001 + 0.05 * unit();                  /* tracking errors, metres */
    case 1: return (double)(rnd() % 7) * 0.25;              /* few distinct values */
    case 2: return (unit() - 0.5) * 1e3;                    /* both signs */
    case 3: {                                                /* any finite bits */
        uint64_t b;
        do b = rnd();
        while (((b >> 52) & 0x7ff) == 0x7ff);
        double d;
        memcpy(&d, &b, sizeof d);
        return d;
    }
    default: {                                               /* the edges */
        static const double e[] = {0.0, -0.0, 1.0, -1.0, 4.9e-324, -4.9e-324, 1e308, -1e308, 2.2250738585072014e-308};
        int i = (int)(rnd() % 11);
        return i < 9 ? e[i] : (i == 9 ? INFINITY : -INFINITY);
    }
    }
}

int main(void)
{
    enum { NMAX = 3000 };
    double *v = malloc(NMAX * sizeof *v), *keep = malloc(NMAX * sizeof *v), *s = malloc(NMAX * sizeof *v);
    uint64_t *scratch = malloc(NMAX * sizeof *scratch);
    long checked = 0, wrong = 0, moved = 0;
    for (int round = 0; round < 3000; round++) {
        int n = round < 200 ? 1 + round % 40 : 1 + (int)(rnd() % NMAX), kind = (int)(rnd() % 5);
        for (int i = 0; i < n; i++) v[i] = value(kind == 4 && rnd() % 2 ? (int)(rnd() % 4) : kind);
        memcpy(keep, v, (size_t)n * sizeof *v);
        memcpy(s, v, (size_t)n * sizeof *v);
        qsort(s, (size_t)n, sizeof *s, cmp);
        int ks[4] = {(int)ceil(0.95 * n) - 1, 0, n - 1, (int)(rnd() % (unsigned)n)};
        int nk = n <= 40 ? n : 4;
        for (int j = 0; j < nk; j++) {
            int k = n <= 40 ? j : ks[j];
            double got = rt_kth_smallest(v, n, k, scratch), want = s[k] == 0 ? 0.0 : s[k];
            checked++;
            if (memcmp(&got, &want, sizeof got)) {
                if (wrong++ < 5) fprintf(stderr, "n %d kind %d k %d: %.17g, sorted %.17g\n", n, kind, k, got, want);
            }
            if (memcmp(v, keep, (size_t)n * sizeof *v)) moved++;
        }
    }
    printf("rt_kth_smallest: %ld selections against qsort, %ld wrong, %ld with the input changed\n", checked, wrong,
           moved);
    CHECK(checked > 10000);
    CHECK_EQ_INT((int)wrong, 0);
    CHECK_EQ_INT((int)moved, 0);
    free(v), free(keep), free(s), free(scratch);
    return test_report("test_select");
}
