/* select.h -- order statistics of doubles: the k-th smallest of an array
 * without sorting it, for the quality report's percentiles (one p95 per
 * target and per clip, over every frame: a sort or a quickselect there
 * spent most of its time on mispredicted comparisons). */
#ifndef RT_BASE_SELECT_H
#define RT_BASE_SELECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The k-th smallest (from 0) of v[0..n), 0 <= k < n, no NaN among them:
 * the value a sort by `<` would put at index k, bit for bit (but a zero
 * is given as +0: -0 and +0 compare equal). v is left as it is; `scratch` holds
 * n values. A radix selection on keys whose unsigned order is the values'
 * order: from the first byte in which the keys differ, each pass counts
 * the remaining candidates' byte and keeps those of the byte where the
 * k-th falls; a pass is a few instructions a value and no branch on it. */
double rt_kth_smallest(const double *v, int n, int k, uint64_t *scratch);

#ifdef __cplusplus
}
#endif
#endif
