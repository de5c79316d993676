/* test_mem.c -- base/mem.c: rt_alloc_large() gives aligned memory of at
 * least the size asked (2 MiB-aligned whole 2 MiB from RT_HUGE_MIN up),
 * refuses bad arguments, and -- where the kernel's transparent huge pages
 * are "always" or "madvise" -- a large array touched once is mapped with
 * huge pages (AnonHugePages of /proc/self/smaps_rollup grows by at least
 * half of it) and, under "madvise", takes under half of the page faults
 * of the same array unadvised. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../base/mem.h"
#include "test.h"

/* AnonHugePages of this process in kB, -1 when it cannot be read. */
static long anon_huge_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(void)
{
    size_t cap = 0;
    /* Small: the alignment asked, the size rounded up to it. */
    unsigned char *p = rt_alloc_large(100, 64, &cap);
    CHECK(p != NULL);
    CHECK(((uintptr_t)p & 63) == 0);
    CHECK_EQ_INT((int)cap, 128);
    free(p);
    /* Large: 2 MiB-aligned, whole 2 MiB. */
    size_t big = RT_HUGE_MIN + 12345;
    p = rt_alloc_large(big, 64, &cap);
    CHECK(p != NULL);
    CHECK(((uintptr_t)p & ((2u << 20) - 1)) == 0);
    CHECK(cap >= big && cap % (2u << 20) == 0 && cap - big < (2u << 20));
    if (p) memset(p, 1, cap);
    free(p);
    /* Refused: nothing, a size that overflows, an alignment that is not a
     * power of two or is over 2 MiB. */
    CHECK(rt_alloc_large(0, 64, NULL) == NULL);
    CHECK(rt_alloc_large(SIZE_MAX - 10, 64, NULL) == NULL);
    CHECK(rt_alloc_large(100, 48, NULL) == NULL);
    CHECK(rt_alloc_large(100, 4u << 20, NULL) == NULL);

    /* Huge pages where the kernel gives them to those who ask. */
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f)) mode[0] = 0;
        fclose(f);
    }
    long before = anon_huge_kb();
    if (before >= 0 && (strstr(mode, "[always]") || strstr(mode, "[madvise]"))) {
        size_t n = (size_t)64 << 20;
        long f0 = minor_faults();
        p = rt_alloc_large(n, 64, &cap);
        CHECK(p != NULL);
        if (p) memset(p, 7, n);
        long faults = minor_faults() - f0, huge = anon_huge_kb() - before;
        /* 64 MiB in 4 KiB pages is 16,384 faults; in 2 MiB pages 32 (the
         * kernel compacts memory for an advised range: defrag "madvise"). */
        printf("test_mem: 64 MiB touched: %ld faults, AnonHugePages +%ld kB (THP %s)\n", faults, huge,
               strstr(mode, "[always]") ? "always" : "madvise");
        CHECK(huge >= 32768);
        if (strstr(mode, "[madvise]")) {
            /* Against 64 MiB that nobody advised: under half of its
             * faults (a sanitizer's shadow memory faults in both). */
            unsigned char *q = malloc(n);
            f0 = minor_faults();
            if (q) memset(q, 7, n);
            long plain = minor_faults() - f0;
            printf("test_mem: the same unadvised: %ld faults\n", plain);
            CHECK(faults * 2 < plain);
            free(q);
        }
        free(p);
    } else {
        printf("test_mem: transparent huge pages off here: the huge-page check not run\n");
    }
    return test_report("test_mem");
}
