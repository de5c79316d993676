/* test_cuda.c -- the CUDA backend against the CPU, bit for bit.
 *
 * Needs a CUDA device: without one (CI, the build machine) it says
 * "no CUDA device" and exits 77, which `make test` counts as skipped, never
 * as passed. On a GPU machine it checks:
 *   - the device reduction against solver/reduce.h's serial executor, bit
 *     for bit, at segment lengths around every block and level boundary,
 *     batched (many segments in one plan) against solo, run against run;
 *   - the solver (when the CUDA solve exists): see solver_checks(). */
#include "../solver/cuda/cuda_api.h"
#include "../solver/reduce.h"
#include "test.h"

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}
static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }
static float rng_normal(void)
{
    double u = rng_unit() + 1e-300, v = rng_unit();
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

static float cpu_sum(const float *x, size_t n)
{
    float *scratch = malloc((RT_REDUCE_BLOCK + rt_reduce_nblocks(n ? n : 1)) * sizeof *scratch);
    float r = rt_reduce_serial(x, n, scratch);
    free(scratch);
    return r;
}

static void reduce_checks(void)
{
    static const size_t lens[] = {1,      2,      3,      31,      32,      33,      511,
                                  512,    513,    1023,   1024,    1025,    35 * 3188, 262143,
                                  262144, 262145, 262657, 1 << 20, 35 * 70000, 134217};
    enum { NL = sizeof lens / sizeof lens[0] };
    size_t off[NL + 4];
    off[0] = 0;
    for (int i = 0; i < NL; i++) off[i + 1] = off[i] + lens[i];
    /* Three special segments: -0 at length 1, 512 and 513. */
    off[NL + 1] = off[NL] + 1;
    off[NL + 2] = off[NL + 1] + 512;
    off[NL + 3] = off[NL + 2] + 513;
    int n_seg = NL + 3;
    size_t n = off[n_seg];
    float *x = malloc(n * sizeof *x);
    float *want = malloc((size_t)n_seg * sizeof *want), *got = malloc((size_t)n_seg * sizeof *got);
    float *again = malloc((size_t)n_seg * sizeof *again);
    for (size_t i = 0; i < off[NL]; i++) {
        float g = rng_normal();
        /* every fourth segment log-uniform magnitudes in [1e-4, 1] */
        x[i] = (i % 7 == 3) ? (float)((rng_next() & 1 ? 1 : -1) * pow(10.0, -4.0 * rng_unit())) : g;
    }
    for (size_t i = off[NL]; i < n; i++) x[i] = -0.0f;
    for (int c = 0; c < n_seg; c++) want[c] = cpu_sum(x + off[c], off[c + 1] - off[c]);

    struct rt_err err;
    enum rt_status st = solver_cuda_sum_segments(x, off, n_seg, got, NULL, &err);
    CHECK_EQ_INT(st, RT_OK);
    if (st != RT_OK) fprintf(stderr, "%s: %s\n", err.where, err.msg);
    CHECK_BITS_EQ(got, want, n_seg);
    for (int c = 0; c < n_seg; c++)
        if (memcmp(&got[c], &want[c], 4))
            fprintf(stderr, "  segment %d (len %zu): gpu %.9g cpu %.9g\n", c, off[c + 1] - off[c],
                    got[c], want[c]);
    /* run == run */
    CHECK_EQ_INT(solver_cuda_sum_segments(x, off, n_seg, again, NULL, &err), RT_OK);
    CHECK_BITS_EQ(again, got, n_seg);
    /* batched == solo */
    int solo_ok = 1;
    for (int c = 0; c < n_seg; c++) {
        size_t so[2] = {0, off[c + 1] - off[c]};
        float r;
        if (solver_cuda_sum_segments(x + off[c], so, 1, &r, NULL, &err) != RT_OK ||
            memcmp(&r, &got[c], 4)) {
            solo_ok = 0;
            fprintf(stderr, "  solo segment %d differs\n", c);
        }
    }
    CHECK(solo_ok);
    /* the -0 cases follow the specification: length 1 -> +0, 512 -> -0, 513 -> +0 */
    CHECK(!signbit(got[NL]) && signbit(got[NL + 1]) && !signbit(got[NL + 2]));
    free(x), free(want), free(got), free(again);
}

int main(void)
{
    char desc[256];
    struct rt_err err;
    enum rt_status st = solver_cuda_device_describe(desc, sizeof desc, &err);
    if (st == RT_ENODEV) TEST_SKIP("no CUDA device");
    CHECK_EQ_INT(st, RT_OK);
    if (st != RT_OK) {
        fprintf(stderr, "%s: %s\n", err.where, err.msg);
        return test_report("test_cuda");
    }
    printf("device: %s\n", desc);
    reduce_checks();
    return test_report("test_cuda");
}
