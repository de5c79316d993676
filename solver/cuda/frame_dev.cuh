/* frame_dev.cuh -- solver/frame.h and solver/reduce.h for device code.
 *
 * frame.h is compiled unchanged; the one thing nvcc needs that the C
 * headers do not give is a device-callable rt_tangent_dim() and
 * rt_state_cols(): solver.h defines them `static inline` (host only).
 * They are renamed out of the way while solver.h is included and redefined
 * here as __host__ __device__ with the same bodies. (The cleaner fix is to
 * mark them RT_HD-style in solver.h; until then this wrapper keeps the CPU
 * developer's headers untouched.) Include this, never frame.h, from .cu. */
#ifndef RT_CUDA_FRAME_DEV_CUH
#define RT_CUDA_FRAME_DEV_CUH

#ifdef RT_SOLVER_H
#error "include frame_dev.cuh before solver.h in CUDA sources"
#endif

#define rt_tangent_dim solver_tangent_dim_host_only_
#define rt_state_cols solver_state_cols_host_only_
#include "../solver.h"
#undef rt_tangent_dim
#undef rt_state_cols

static __host__ __device__ __forceinline__ int rt_state_cols(const struct rt_tree *t)
{
    return RT_ROOT_COLS + t->n_joints;
}
static __host__ __device__ __forceinline__ int rt_tangent_dim(const struct rt_tree *t)
{
    return (t->floating_base ? 6 : 0) + t->n_joints;
}

#include "../frame.h"
#include "../reduce.h"

#endif
