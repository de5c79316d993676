/* test_reduce.c -- the reduce.h summation order against a plain reference
 * model of DESIGN.md "The reduction order", bit for bit, at the block
 * boundaries and on a long sequence; the host driver at 1 and 2 threads;
 * and inputs crafted so that any other order gives a different float. Also
 * the CPU backend's thread pool that drives it: every item of a run taken
 * exactly once, in ranges within [0, n), at any thread count, run after
 * run (its ranges are claimed from one cursor), and its timing sums. */
#include <stdatomic.h>
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

/* A run's items, each counted by the thread that took it. */
struct visits {
    size_t n;
    atomic_int *count;
    atomic_int bad; /* a range outside [0, n), empty, or a bad thread id */
    int threads;
};

static void visit(void *ctx, int tid, size_t begin, size_t end)
{
    struct visits *v = (struct visits *)ctx;
    if (begin >= end || end > v->n || tid < 0 || tid >= v->threads) atomic_store(&v->bad, 1);
    for (size_t i = begin; i < end && i < v->n; i++) atomic_fetch_add(&v->count[i], 1);
}

static void pool_checks(void)
{
    static const int threads[] = {1, 2, 3, 8};
    static const size_t sizes[] = {0, 1, 7, 1000, 100003};
    struct rt_err err;
    for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
        struct cpu_pool *p = NULL;
        CHECK(cpu_pool_create(threads[ti], &p, &err) == RT_OK);
        if (!p) continue;
        CHECK_EQ_INT(cpu_pool_threads(p), threads[ti]);
        cpu_pool_set_timing(p, 1);
        int once = 1, bad = 0;
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int run = 0; run < 20; run++) {
                struct visits v = {sizes[si], (atomic_int *)calloc(sizes[si] + 1, sizeof(atomic_int)), 0, threads[ti]};
                atomic_init(&v.bad, 0);
                cpu_pool_run(p, visit, &v, v.n);
                for (size_t i = 0; i < v.n; i++) once = once && atomic_load(&v.count[i]) == 1;
                bad |= atomic_load(&v.bad);
                free(v.count);
            }
        CHECK(once);
        CHECK(!bad);
        double busy = -1, max = -1, wall = -1;
        cpu_pool_take_times(p, &busy, &max, &wall);
        CHECK(busy >= 0 && max >= 0 && wall > 0 && max <= busy + 1e-12);
        cpu_pool_take_times(p, &busy, &max, &wall); /* taken: cleared */
        CHECK(busy == 0 && max == 0 && wall == 0);
        cpu_pool_free(p);
    }
}

int main(void)
{
    pool_checks();
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
