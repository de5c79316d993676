/* test_output.c -- retarget/output.c: rtg_format_float() writes exactly the
 * bytes of printf's %.9g (the CSV's contract: equal bytes, equal bits) over
 * millions of floats -- random bit patterns, every power-of-ten boundary and
 * its neighbours, integers, subnormals, rounding ties of nine digits -- and
 * the CSV and JSON row writers. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../retarget/output.h"
#include "test.h"

static long n_checked, n_bad;

static void check_one(float v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%.9g", (double)v);
    int n = rtg_format_float(v, got);
    n_checked++;
    if (n != (int)strlen(want) || strcmp(got, want)) {
        if (n_bad++ < 10) fprintf(stderr, "rtg_format_float(%a): got '%s' want '%s'\n", (double)v, got, want);
    }
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int main(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    /* Random bit patterns: every exponent, both signs. */
    for (int i = 0; i < 1500000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_one(from_bits((uint32_t)x));
    }
    /* Values of the size a trajectory holds, densely. */
    for (int i = 0; i < 500000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        check_one((float)((double)(x % 2000000001ull) / 1e9 - 1.0) * 4.0f);
    }
    /* Around every power of ten: the float below, at, above. */
    for (int e = -45; e <= 38; e++) {
        float p = (float)pow(10.0, e);
        float lo = p, hi = p;
        for (int k = 0; k < 64; k++) {
            check_one(lo), check_one(-lo), check_one(hi);
            lo = nextafterf(lo, 0.0f), hi = nextafterf(hi, INFINITY);
        }
    }
    /* Integers, halves, subnormals, specials. */
    for (int i = -100000; i <= 100000; i++) check_one((float)i), check_one((float)i + 0.5f), check_one((float)i / 8.0f);
    for (uint32_t u = 1; u < 200000; u += 7) check_one(from_bits(u));
    check_one(0.0f), check_one(-0.0f), check_one(INFINITY), check_one(-INFINITY), check_one(NAN);
    check_one(FLT_MAX), check_one(FLT_MIN), check_one(1e-45f);
    fprintf(stderr, "%ld values compared with printf's %%.9g, %ld differ\n", n_checked, n_bad);
    CHECK_EQ_INT((int)n_bad, 0);

    /* The writers: header, rows, and the JSON arrays. */
    const char *names[3] = {"a", "b", "c"};
    float rows[6] = {1.0f, -0.5f, 1e-7f, 3.14159274f, 0.0f, 123456789.0f};
    char *mem = NULL;
    size_t len = 0;
    CHECK_EQ_INT(rtg_csv_format(names, 3, rows, 2, &mem, &len), RT_OK);
    static const char want_csv[] = "a,b,c\n1,-0.5,1.00000001e-07\n3.14159274,0,123456792\n";
    CHECK(mem && len == sizeof want_csv - 1 && !memcmp(mem, want_csv, len));
    free(mem);
    FILE *f = open_memstream(&mem, &len);
    rtg_json_rows_write(f, 3, rows, 2);
    fclose(f);
    CHECK_EQ_STR(mem, "[[1,-0.5,1.00000001e-07],[3.14159274,0,123456792]]");
    free(mem);

    /* A long trajectory formatted in pieces on a pool: the bytes of the
     * one-thread format, at every piece boundary and with or without the
     * header; no pool, or too short for two pieces, is the same call. */
    {
        struct rtg_pool *pool = NULL;
        struct rt_err err;
        CHECK_EQ_INT(rtg_pool_create(3, &pool, &err), RT_OK);
        static const int sizes[] = {0, 1, RTG_CSV_PIECE_ROWS - 1, RTG_CSV_PIECE_ROWS, 2 * RTG_CSV_PIECE_ROWS,
                                    2 * RTG_CSV_PIECE_ROWS + 1, 7 * RTG_CSV_PIECE_ROWS + 13};
        const int cols = 5, most = 7 * RTG_CSV_PIECE_ROWS + 13;
        const char *hdr[5] = {"root_x", "q1", "q2", "q3", "q4"};
        float *st = malloc(sizeof(float) * (size_t)most * cols);
        for (int i = 0; st && i < most * cols; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            st[i] = (float)((double)(x % 2000001ull) / 1e5 - 10.0);
        }
        for (size_t s = 0; st && s < sizeof sizes / sizeof sizes[0]; s++)
            for (int h = 0; h < 2; h++) {
                char *a = NULL, *b = NULL;
                size_t la = 0, lb = 0;
                CHECK_EQ_INT(rtg_csv_format(h ? hdr : NULL, cols, st, sizes[s], &a, &la), RT_OK);
                CHECK_EQ_INT(rtg_csv_format_on(pool, h ? hdr : NULL, cols, st, sizes[s], &b, &lb), RT_OK);
                CHECK(a && b && la == lb && !memcmp(a, b, la));
                free(a);
                free(b);
            }
        free(st);
        rtg_pool_free(pool);
    }
    return test_report("test_output");
}
