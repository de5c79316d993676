/* reduce.cu -- the CUDA executor of DESIGN.md "The reduction order".
 *
 * Reduction order: DESIGN.md "The reduction order"; do not reorder.
 * One warp reduces one 512-entry block. Lane l holds entries l + 32k,
 * k = 0..15, in registers v[k]. Strides 256, 128, 64 and 32 pair entry
 * l + 32k with l + 32(k + s/32) inside the lane (v[k] += v[k + s/32]);
 * strides 16..1 pair lanes through __shfl_down_sync (lane l += lane l + s).
 * That is the pairwise tree of solver/reduce.h entry for entry, so every
 * partial is the same float the CPU computes. Padding past the end of a
 * segment is a literal +0.0f, as on the CPU (it turns a -0 sum into +0
 * exactly where the CPU does).
 *
 * Levels: level 0 reads the input (x[i], or a[i] * b[i] rounded to float);
 * level k >= 1 reads the partials of level k - 1, whose segment c is
 * contiguous. A segment that already has one partial is copied, not reduced
 * again, because the specification stops a sequence once it has one entry.
 * No atomics; no shared memory; the launch shape is a function of the
 * segment lengths alone. */
#include "reduce.cuh"
#include "cuda_api.h"

#include <stdlib.h>
#include <string.h>

enum rt_status cuda_reduce_plan_build(struct cuda_reduce_plan *p, const size_t *seg_off, int n_seg,
                                      cudaStream_t stream, struct rt_err *err)
{
    size_t nb[CUDA_REDUCE_MAX_LEVELS];
    int n_levels = 0;
    size_t n1 = (size_t)n_seg + 1;
    if (n_seg < 1) return CUDA_ERR(err, RT_EINVAL, "reduce", "no segments");
    /* Count blocks per level on the host first. */
    {
        size_t *cur = (size_t *)malloc(n1 * sizeof *cur);
        if (!cur) return CUDA_ERR(err, RT_ENOMEM, "reduce", "out of memory");
        memcpy(cur, seg_off, n1 * sizeof *cur);
        for (;;) {
            size_t tot = 0;
            for (int c = 0; c < n_seg; c++) {
                size_t len = cur[c + 1] - cur[c];
                size_t b = (n_levels > 0 && len == 1) ? 1 : (len + 511) / 512;
                cur[c] = tot;
                tot += b;
            }
            cur[n_seg] = tot;
            if (n_levels == CUDA_REDUCE_MAX_LEVELS) {
                free(cur);
                return CUDA_ERR(err, RT_ELIMIT, "reduce", "segment too long");
            }
            nb[n_levels++] = tot;
            if (tot == (size_t)n_seg) break;
        }
        free(cur);
    }
    /* Host staging: (n_levels + 1) offset arrays, then the block maps. */
    size_t n_map = 0, n_part = 0;
    for (int k = 0; k < n_levels; k++) n_map += nb[k];
    for (int k = 0; k + 1 < n_levels; k++) n_part += nb[k];
    size_t bytes = (size_t)(n_levels + 1) * n1 * sizeof(size_t) + n_map * sizeof(int);
    if (bytes > p->host_cap) {
        free(p->host);
        p->host = malloc(bytes);
        p->host_cap = p->host ? bytes : 0;
        if (!p->host) return CUDA_ERR(err, RT_ENOMEM, "reduce", "out of memory");
    }
    size_t *offs = (size_t *)p->host;
    int *maps = (int *)(offs + (size_t)(n_levels + 1) * n1);
    memcpy(offs, seg_off, n1 * sizeof *offs);
    {
        int *m = maps;
        for (int k = 0; k < n_levels; k++) {
            const size_t *in = offs + (size_t)k * n1;
            size_t *out = offs + (size_t)(k + 1) * n1;
            size_t tot = 0;
            for (int c = 0; c < n_seg; c++) {
                size_t len = in[c + 1] - in[c];
                size_t b = (k > 0 && len == 1) ? 1 : (len + 511) / 512;
                out[c] = tot;
                for (size_t j = 0; j < b; j++) *m++ = c;
                tot += b;
            }
            out[n_seg] = tot;
        }
    }
    enum rt_status st = cuda_buf_reserve(&p->meta, bytes, err);
    if (st != RT_OK) return st;
    st = cuda_buf_reserve(&p->part, (size_t)CUDA_REDUCE_MAX_K * n_part * sizeof(float), err);
    if (st != RT_OK) return st;
    CUDA_TRY(cudaMemcpyAsync(p->meta.ptr, p->host, bytes, cudaMemcpyHostToDevice, stream), err);
    CUDA_TRY(cudaStreamSynchronize(stream), err);
    size_t *d_offs = (size_t *)p->meta.ptr;
    int *d_maps = (int *)(d_offs + (size_t)(n_levels + 1) * n1);
    p->n_seg = n_seg;
    p->n_levels = n_levels;
    for (int k = 0; k < n_levels; k++) {
        p->lv[k].in_off = d_offs + (size_t)k * n1;
        p->lv[k].out_off = d_offs + (size_t)(k + 1) * n1;
        p->lv[k].blk_seg = d_maps;
        p->lv[k].n_blocks = nb[k];
        d_maps += nb[k];
    }
    return RT_OK;
}

void cuda_reduce_plan_free(struct cuda_reduce_plan *p)
{
    if (!p) return;
    cuda_buf_free(&p->meta);
    cuda_buf_free(&p->part);
    free(p->host);
    p->host = NULL;
    p->host_cap = 0;
    p->n_levels = 0;
}

/* ---- C entry for tests and benchmarks (cuda_api.h) ---- */

static enum rt_status sum_once(const struct cuda_reduce_plan *p, const float *x, float *out,
                               cudaStream_t s, struct rt_err *err)
{
    cuda_reduce_src<1> src = {{x}, {NULL}};
    cuda_reduce_dst<1> dst = {{out}};
    return cuda_reduce_run<1>(p, src, dst, cuda_reduce_nofin(), s, err);
}

extern "C" enum rt_status solver_cuda_sum_segments(const float *x, const size_t *seg_off, int n_seg,
                                                   float *out, float *ms, struct rt_err *err)
{
    struct cuda_reduce_plan plan;
    memset(&plan, 0, sizeof plan);
    enum rt_status st = RT_OK;
    float *d_x = NULL, *d_out = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    size_t n = seg_off[n_seg];
    CUDA_GOTO(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), err, st, fail);
    CUDA_GOTO(cudaMalloc((void **)&d_x, (n ? n : 1) * sizeof(float)), err, st, fail);
    CUDA_GOTO(cudaMalloc((void **)&d_out, (size_t)n_seg * sizeof(float)), err, st, fail);
    CUDA_GOTO(cudaMemcpyAsync(d_x, x, n * sizeof(float), cudaMemcpyHostToDevice, s), err, st, fail);
    if ((st = cuda_reduce_plan_build(&plan, seg_off, n_seg, s, err)) != RT_OK) goto fail;
    if ((st = sum_once(&plan, d_x, d_out, s, err)) != RT_OK) goto fail;
    CUDA_GOTO(cudaMemcpyAsync(out, d_out, (size_t)n_seg * sizeof(float), cudaMemcpyDeviceToHost, s),
              err, st, fail);
    CUDA_GOTO(cudaStreamSynchronize(s), err, st, fail);
    if (ms) {
        enum { REPS = 21 };
        float t[REPS];
        CUDA_GOTO(cudaEventCreate(&e0), err, st, fail);
        CUDA_GOTO(cudaEventCreate(&e1), err, st, fail);
        for (int r = 0; r < REPS; r++) {
            CUDA_GOTO(cudaEventRecord(e0, s), err, st, fail);
            if ((st = sum_once(&plan, d_x, d_out, s, err)) != RT_OK) goto fail;
            CUDA_GOTO(cudaEventRecord(e1, s), err, st, fail);
            CUDA_GOTO(cudaEventSynchronize(e1), err, st, fail);
            CUDA_GOTO(cudaEventElapsedTime(&t[r], e0, e1), err, st, fail);
        }
        for (int i = 1; i < REPS; i++) /* insertion sort: median */
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
                float tmp = t[j]; t[j] = t[j - 1]; t[j - 1] = tmp;
            }
        *ms = t[REPS / 2];
    }
fail:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cuda_reduce_plan_free(&plan);
    if (d_out) cudaFree(d_out);
    if (d_x) cudaFree(d_x);
    if (s) cudaStreamDestroy(s);
    return st;
}
