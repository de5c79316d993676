/* cuda_api.h -- C entry points of the CUDA backend beyond the ops table,
 * for tests and benchmarks: device description and the device reduction.
 * Implemented by the .cu files, and by cuda_stub.c (RT_ENODEV "built
 * without CUDA") when the project is built without nvcc, so that callers
 * link either way and need no #ifdef. */
#ifndef RT_SOLVER_CUDA_API_H
#define RT_SOLVER_CUDA_API_H

#include <stddef.h>

#include "../../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes "NAME, N SMs, X GiB, cc M.m" of device 0 into buf. Returns RT_OK,
 * RT_ENODEV ("no CUDA device", "built without CUDA") or RT_EBACKEND. */
enum rt_status solver_cuda_device_describe(char *buf, size_t cap, struct rt_err *err);

/* Sums x over n_seg segments (segment c = x[seg_off[c] .. seg_off[c+1]),
 * each non-empty) on the device in the DESIGN.md reduction order, into
 * out[n_seg] (host). With ms non-NULL, also times the device reduction
 * alone (median of 21 event-timed runs, milliseconds) into *ms.
 * Synchronous. Returns RT_OK, RT_ENODEV, RT_ENOMEM or RT_EBACKEND. */
enum rt_status solver_cuda_sum_segments(const float *x, const size_t *seg_off, int n_seg,
                                        float *out, float *ms, struct rt_err *err);

struct solver_backend;

/* Timing of the last solve on a CUDA backend: the PCG graphs alone
 * (event-timed, ms), how many were launched, and the whole solve from host
 * arrays to host arrays (ms). RT_ENODEV when `be` is not a CUDA backend. */
enum rt_status solver_cuda_last_stats(const struct solver_backend *be, double *pcg_ms, int *pcg_graphs,
                                      double *solve_ms, struct rt_err *err);

/* How many devices a backend uses (0: not CUDA). solver_backend_cuda_init()
 * takes at most solver_backend_config.cuda_devices of them (0: all); with
 * several, a batch is split by clips over them, same bits as on one. */
int solver_cuda_backend_devices(const struct solver_backend *be);

/* Measured device-to-device copy bandwidth (bytes read + written per
 * second, GB/s) over `bytes`-byte buffers, median of 11 copies. */
enum rt_status solver_cuda_copy_bandwidth(size_t bytes, double *gbs, struct rt_err *err);

/* For a process that is done with CUDA: resets every device's primary
 * context (cudaDeviceReset), releasing what the process still holds there,
 * so that the driver's teardown runs now, on the caller's thread, and not
 * in the process's exit. Only once no CUDA backend lives and no host
 * memory of solver_backend_host_alloc() is left; a later CUDA call starts
 * a fresh context. Nothing without a device or without CUDA. */
void solver_cuda_release_devices(void);

/* Asks the driver for `queues` work queues a device
 * (CUDA_DEVICE_MAX_CONNECTIONS) unless the environment names a number:
 * each queue costs a context's start and end. On an H100 (driver 580) a
 * context took 119-148 ms to create with the driver's default of 8, 87
 * with 3, 45-53 with 2, and its reset 72, 35 and 27 ms (bench/RESULTS.md,
 * thirteenth session). Streams beyond the queues share them, and one
 * stream's work then waits behind another's: give one a stream, and one
 * for the runtime's own. Effective only before the process's first CUDA
 * call; call it from one thread, before other threads start (it sets the
 * environment). Nothing without CUDA. */
void solver_cuda_limit_queues(int queues);

#ifdef __cplusplus
}
#endif
#endif
