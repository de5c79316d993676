/* test_reduce.c -- the reduce.h summation order against a plain reference
 * model of DESIGN.md "The reduction order", bit for bit, at the block
 * boundaries and on a long sequence; the host driver at 1 and 2 threads;
 * and inputs crafted so that any other order gives a different float. */
#include <stdint.h>

#include "../solver/cpu/cpu_internal.h"
#include "../solver/reduce.h"
#include "test.h"

/* The reference, written from the specification alone: levels of blocks of
 * 512 (zero-padded), each reduced with strides 256..1, entry i += entry i+s. */
static float ref_sum(const float *x, size_t n)
{
    if (n == 0) return 0.0f;
    size_t m = n;
    float *cur = (float *)malloc(n * sizeof(float));
    memcpy(cur, x, n * sizeof(float));
    do {
        size_t nb = (m + 511) / 512;
        float *next = (float *)malloc(nb * sizeof(float));
        for (size_t b = 0; b < nb; b++) {
            float v[512];
            for (size_t i = 0; i < 512; i++) v[i] = b * 512 + i < m ? cur[b * 512 + i] : 0.0f;
            for (size_t s = 256; s >= 1; s /= 2)
                for (size_t i = 0; i < s; i++) v[i] += v[i + s];
            next[b] = v[0];
        }
        free(cur);
        cur = next;
        m = nb;
    } while (m > 1);
    float r = cur[0];
    free(cur);
    return r;
}

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    float u = (float)((rng >> 40) & 0xffffff) / 16777216.0f;
    int e = (int)((rng >> 20) & 31);
    return (u - 0.5f) * (float)(1 << (e % 20)); /* wide magnitudes: order matters */
}

int main(void)
{
    static const size_t lens[] = {1, 2, 511, 512, 513, 262145};
    struct cpu_pool *pool2 = NULL;
    struct rt_err err;
    CHECK(cpu_pool_create(2, &pool2, &err) == RT_OK);
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li];
        float *x = (float *)malloc(n * sizeof(float));
        float *scratch = (float *)malloc((512 + rt_reduce_nblocks(n)) * sizeof(float));
        for (size_t i = 0; i < n; i++) x[i] = frand();
        float want = ref_sum(x, n);
        float serial = rt_reduce_serial(x, n, scratch);
        float one = cpu_reduce_sum(NULL, x, n);
        float two = cpu_reduce_sum(pool2, x, n);
        CHECK_BITS_EQ(&serial, &want, 1);
        CHECK_BITS_EQ(&one, &want, 1);
        CHECK_BITS_EQ(&two, &want, 1);
        if (n == 1) CHECK_BITS_EQ(&serial, &x[0], 1);
        free(x);
        free(scratch);
    }

    /* Order sensitivity within a block: 1e8 at 0 and -1e8 at 256 cancel in
     * the first tree level, leaving the 1 at entry 1. A sequential sum
     * (1e8 + 1 rounds to 1e8) or a neighbour-pairing tree gives 0. */
    {
        float x[512] = {0}, scratch[513];
        x[0] = 1e8f; x[1] = 1.0f; x[256] = -1e8f;
        float got = rt_reduce_serial(x, 512, scratch), seq = 0.0f, pair;
        for (int i = 0; i < 512; i++) seq += x[i];
        float v[512];
        memcpy(v, x, sizeof v);
        for (int s = 1; s < 512; s *= 2)
            for (int i = 0; i + s < 512; i += 2 * s) v[i] += v[i + s];
        pair = v[0];
        CHECK(got == 1.0f);
        CHECK(seq != got);
        CHECK(pair != got);
    }
    /* Across blocks: 513 entries, x[0] = 1e8 and x[256] = 1 in block 0,
     * x[512] = -1e8 alone in block 1. Block 0 is reduced on its own first:
     * 1e8 + 1 rounds to 1e8, and that partial plus -1e8 gives 0, so the 1 is
     * lost. A flat 1024-wide tree would pair entry 0 with entry 512 first
     * (1e8 - 1e8 = 0) and keep the 1. */
    {
        float x[513] = {0}, scratch[514];
        x[0] = 1e8f; x[256] = 1.0f; x[512] = -1e8f;
        float got = rt_reduce_serial(x, 513, scratch);
        float v[1024] = {0};
        memcpy(v, x, sizeof x);
        for (int s = 512; s >= 1; s /= 2)
            for (int i = 0; i < s; i++) v[i] += v[i + s];
        CHECK(got == 0.0f);
        CHECK(v[0] == 1.0f);
        float want = ref_sum(x, 513);
        CHECK_BITS_EQ(&got, &want, 1);
    }
    cpu_pool_free(pool2);
    return test_report("test_reduce");
}
