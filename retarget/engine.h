/* engine.h -- the solver backend as the programs open it. The solver never
 * reads the environment (solver/backend.h); the command-line tool, the
 * daemon, the benchmarks and the tests fill its configuration here: the
 * thread count they were given, and the CUDA backend's switches from the
 * environment, read once when the backend is created (README.md):
 *   RT_CUDA_DEVICES=N     use at most N devices (N a positive integer;
 *                         anything else: all)        -> cuda_devices
 *   RT_CUDA_PROFILE=1     per-phase timing line      -> cuda_profile
 *   RT_CUDA_UNROLLED_CG=1 CG graph unrolled          -> cuda_unrolled_cg
 *   RT_CUDA_CG_UP=1       CG update one frame a warp -> cuda_cg_up
 *   RT_CPU_PROFILE=1      per-phase timing line (CPU) -> cpu_profile
 * A switch is on when its value starts with '1'.
 *
 * Memory: rtg_backend_init() fills a caller-owned struct whose context the
 * caller releases with solver_backend_free(). */
#ifndef RT_RTG_ENGINE_H
#define RT_RTG_ENGINE_H

#include "../base/status.h"
#include "../solver/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills `c` with the defaults, then `threads` (the CPU backend's thread
 * count; 0: one per core) and the cuda_* fields from the RT_CUDA_*
 * environment variables above. Never fails; the caller checks `threads`
 * (solver_backend_init() refuses it out of range). */
void rtg_backend_config_env(struct solver_backend_config *c, int threads);

/* solver_backend_init(out, name, cfg, err) with the configuration of
 * rtg_backend_config_env(cfg, threads). Same returns and failure state. */
enum rt_status rtg_backend_init(struct solver_backend *out, const char *name, int threads, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
