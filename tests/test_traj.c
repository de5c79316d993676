/* test_traj.c -- the trajectory CSV reader's number rules (kinematics/traj.h):
 * every value a plain finite decimal (no hex floats), root positions within
 * KIN_TRAJ_MAX_POS metres and joint coordinates within KIN_TRAJ_MAX_COORD,
 * each bound accepted at N and refused past N with "PATH:LINE" and the
 * column. A value that overflows float32 (1e39) must be refused by the
 * reader itself, so that `retarget solve` refuses it too: the solver works
 * in float32, and an inf there came back as a result that was not JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../clients/cli.h"
#include "../kinematics/traj.h"
#include "test.h"

/* A 2-row trajectory of 7 + n_joint columns: row 2 gets `field` at column
 * `col` (1-based), every other value is a valid pose. */
static char *make_csv(int n_joint, int col, const char *field)
{
    static char buf[4096];
    size_t k = 0;
    for (int row = 0; row < 2; row++) {
        for (int c = 1; c <= 7 + n_joint; c++) {
            const char *v = c == 7 ? "1" : c == 3 ? "0.75" : "0";
            if (row == 1 && c == col) v = field;
            k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", c > 1 ? "," : "", v);
        }
        k += (size_t)snprintf(buf + k, sizeof buf - k, "\n");
    }
    return buf;
}

static void expect_ok(int n_joint, int col, const char *field)
{
    double *rows = NULL;
    int n = 0;
    struct rt_err err = {0};
    const char *t = make_csv(n_joint, col, field);
    enum rt_status st = kin_traj_parse(t, strlen(t), "t.csv", 7 + n_joint, &rows, &n, &err);
    CHECK_EQ_INT(st, RT_OK);
    if (st != RT_OK) fprintf(stderr, "  column %d = '%s': %s: %s\n", col, field, err.where, err.msg);
    CHECK_EQ_INT(n, 2);
    free(rows);
}

static void expect_bad(int n_joint, int col, const char *field, enum rt_status want, const char *msg)
{
    double *rows = NULL;
    int n = 0;
    struct rt_err err = {0};
    const char *t = make_csv(n_joint, col, field);
    CHECK_EQ_INT(kin_traj_parse(t, strlen(t), "t.csv", 7 + n_joint, &rows, &n, &err), want);
    CHECK_EQ_STR(err.where, "t.csv:2");
    if (!strstr(err.msg, msg)) {
        test_failed++;
        fprintf(stderr, "column %d = '%s': message '%s' lacks '%s'\n", col, field, err.msg, msg);
    } else {
        test_passed++;
    }
    CHECK(rows == NULL);
}

int main(void)
{
    /* Root positions: metres, |x| <= 1e4. */
    expect_ok(2, 1, "1e4");
    expect_ok(2, 2, "-10000");
    expect_ok(2, 3, "9999.5");
    expect_bad(2, 1, "1e39", RT_EINVAL, "column 1 (root x) is 1e+39");
    expect_bad(2, 1, "1e308", RT_EINVAL, "the limit is 10000 m");
    expect_bad(2, 2, "-10000.001", RT_EINVAL, "column 2 (root y)");
    expect_bad(2, 3, "3.5e38", RT_EINVAL, "column 3 (root z)");
    /* Joint coordinates: |q| <= 1e4 (radians or metres). */
    expect_ok(2, 8, "1e4");
    expect_ok(2, 9, "-3.14159");
    expect_bad(2, 8, "1e308", RT_EINVAL, "column 8 (joint 1) is 1e+308");
    expect_bad(2, 9, "-2e4", RT_EINVAL, "column 9 (joint 2)");
    /* Hex floats, inf, nan and overflow are not numbers. */
    const char *bad[] = {"0x1p3", "0X10", "1p3", "0x.8", "inf", "-inf", "nan", "-nan", "1e999", "1e", "1.2.3", NULL};
    for (int i = 0; bad[i]; i++) expect_bad(2, 1, bad[i], RT_EPARSE, "bad number");
    for (int i = 0; bad[i]; i++) expect_bad(2, 8, bad[i], RT_EPARSE, "bad number");
    /* Plain decimals as before: signs, exponents, a bare fraction. */
    expect_ok(2, 1, "+1.5e2");
    expect_ok(2, 8, ".25");
    expect_ok(2, 8, "-0.5E-3");

    /* `retarget solve` refuses the file with its line, before solving. */
    char dir[] = "/tmp/test_traj.XXXXXX", path[128], out[160], want[200];
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(path, sizeof path, "%s/inf.csv", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        /* A G1 trajectory: 7 + 29 columns; row 2 has root x = 1e39. */
        for (int row = 0; row < 2; row++) {
            for (int c = 1; c <= 36; c++)
                fprintf(f, "%s%s", c > 1 ? "," : "", row == 1 && c == 1 ? "1e39" : c == 7 ? "1" : c == 3 ? "0.75" : "0");
            fputc('\n', f);
        }
        fclose(f);
        struct rt_err err = {0};
        char *argv[] = {path, "--source-robot", "g1", "--robot", "g1", "-o", out, "--quiet", NULL};
        CHECK(cli_solve_err(8, argv, &err) != 0);
        snprintf(want, sizeof want, "%s:2", path);
        CHECK_EQ_STR(err.where, want);
        CHECK(strstr(err.msg, "column 1 (root x) is 1e+39") != NULL);
        snprintf(want, sizeof want, "%s/inf.csv", out);
        CHECK(access(want, F_OK) != 0); /* nothing written */
    }
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    return test_report("test_traj");
}
