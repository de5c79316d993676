/* mem.h -- large work arrays backed by transparent huge pages: a solve's
 * arena and a batch's arrays are hundreds of MB touched once, and their
 * first touch one 4 KiB page at a time is a page fault each (about a
 * tenth of a CPU solve on a VM, and the faults of several threads queue
 * on the process's memory map). Asked with madvise(MADV_HUGEPAGE), the
 * kernel maps them 2 MiB at a time where transparent huge pages are on
 * ("always" or "madvise"); elsewhere they are ordinary pages.
 *
 * Valid C and C++. */
#ifndef RT_MEM_H
#define RT_MEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Arrays from this size up are asked for huge pages. */
#define RT_HUGE_MIN ((size_t)4 << 20)

/* At least `bytes` (> 0) aligned to `align` (a power of two, at most
 * 2 MiB): from RT_HUGE_MIN up, 2 MiB-aligned, rounded up to whole 2 MiB
 * and advised as huge pages. *cap (may be NULL) gets the usable size.
 * Released with free(). NULL when out of memory or on overflow. */
void *rt_alloc_large(size_t bytes, size_t align, size_t *cap);

#ifdef __cplusplus
}
#endif
#endif
