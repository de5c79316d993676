/* mem.c -- rt_alloc_large() of base/mem.h. */
#include "mem.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *rt_alloc_large(size_t bytes, size_t align, size_t *cap)
{
    if (!bytes || !align || (align & (align - 1)) || align > HUGE_PAGE) return NULL;
    if (bytes >= RT_HUGE_MIN) align = HUGE_PAGE;
    size_t n = (bytes + (align - 1)) & ~(align - 1);
    if (n < bytes) return NULL;
    void *p = aligned_alloc(align, n);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    if (n >= RT_HUGE_MIN) (void)madvise(p, n, MADV_HUGEPAGE); /* advice: refused, ordinary pages */
#endif
    if (cap) *cap = n;
    return p;
}
