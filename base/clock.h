/* clock.h -- the one monotonic clock: seconds that only go forward, for
 * timings (solve seconds, benchmarks), deadlines and the scheduler's wait
 * times. Not a time of day: compare two readings, never print one.
 *
 * Valid C and C++: the CUDA backend's .cu files call it too. */
#ifndef RT_CLOCK_H
#define RT_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in seconds (nanosecond resolution); never fails on Linux. */
double rt_now(void);

#ifdef __cplusplus
}
#endif
#endif
