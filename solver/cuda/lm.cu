/* lm.cu -- placeholder until the CPU LM lands (see lm.cuh). */
#include "lm.cuh"

#include <stdlib.h>

struct cuda_lm {
    int unused;
};

enum rt_status cuda_lm_solve(struct cuda_lm **lm, const struct solver_batch *b,
                             struct solver_result *res, cudaStream_t stream, struct rt_err *err)
{
    (void)lm, (void)b, (void)res, (void)stream;
    return CUDA_ERR(err, RT_EBACKEND, "backend", "CUDA solve not implemented yet");
}

void cuda_lm_free(struct cuda_lm *lm) { free(lm); }
