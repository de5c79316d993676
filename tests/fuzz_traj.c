/* fuzz_traj.c -- libFuzzer target for the trajectory CSV reader (the robot
 * trajectory source of `retarget solve` and of POST /v1/jobs): any bytes give
 * either rows of exactly the asked column count with unit quaternions, or an
 * error that names the line, never a crash, a sanitizer report or a leak.
 * Built and run by `make fuzz`. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../kinematics/traj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks the column count, so short rows are reachable. */
    int cols = size ? 7 + data[0] % 32 : 7;
    double *rows = NULL;
    int n = 0;
    struct rt_err err;
    int st = kin_traj_parse(size ? (const char *)data + 1 : "", size ? size - 1 : 0, "fuzz.csv", cols,
                            &rows, &n, &err);
    if (st != RT_OK) {
        if (rows || n || !err.where[0] || !err.msg[0]) abort();
        return 0;
    }
    if (!rows || n < 1) abort();
    for (int t = 0; t < n; t++) {
        const double *r = rows + (size_t)t * (size_t)cols;
        double qn = sqrt(r[3] * r[3] + r[4] * r[4] + r[5] * r[5] + r[6] * r[6]);
        if (!(fabs(qn - 1.0) < 1e-9)) abort();
        for (int c = 0; c < cols; c++)
            if (!isfinite(r[c])) abort();
    }
    free(rows);
    return 0;
}
