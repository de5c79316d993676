/* clock.c -- rt_now(), the monotonic clock of base/clock.h. */
#include "clock.h"

#include <time.h>

double rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
