/* select.c -- rt_kth_smallest(), the radix selection of base/select.h. */
#include "select.h"

#include <string.h>

/* The key of a double that is not NaN whose unsigned order is the value's
 * order: the bits with the sign flipped for a value >= 0, all of them
 * flipped for one < 0; -0 takes +0's key. */
static inline uint64_t order_key(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    if (b == 1ull << 63) b = 0;
    return b >> 63 ? ~b : b | 1ull << 63;
}

static inline double key_value(uint64_t k)
{
    uint64_t b = k >> 63 ? k & ~(1ull << 63) : ~k;
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

double rt_kth_smallest(const double *v, int n, int k, uint64_t *key)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < n; i++) {
        uint64_t x = order_key(v[i]);
        key[i] = x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    if (lo == hi) return key_value(lo);
    /* The keys agree above the highest bit of lo ^ hi: start at its byte. */
    int m = n, shift = (63 - __builtin_clzll(lo ^ hi)) / 8 * 8;
    unsigned cnt[256];
    for (; shift >= 0 && m > 1; shift -= 8) {
        memset(cnt, 0, sizeof cnt);
        for (int i = 0; i < m; i++) cnt[(key[i] >> shift) & 255]++;
        unsigned b = 0;
        while ((unsigned)k >= cnt[b]) k -= (int)cnt[b++];
        if (cnt[b] == (unsigned)m) continue;
        int j = 0; /* the candidates of byte b, kept in place */
        for (int i = 0; i < m; i++) {
            key[j] = key[i];
            j += ((key[i] >> shift) & 255) == b;
        }
        m = j;
    }
    /* One candidate left, or several whose keys are equal. */
    return key_value(key[0]);
}
