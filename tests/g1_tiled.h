/* g1_tiled.h -- batches of any clip lengths cut from the real G1 clip
 * (tests/g1_clip.h), for the CUDA tests and benchmarks. Clip k starts at
 * source frame first[k] and runs len[k] frames; past the end of the real
 * trajectory it plays back and forth (ping-pong), so that a 70,000-frame
 * clip is real motion without jumps. The batch's target arrays belong to
 * struct g1_tiled and are freed by g1_tiled_free(). */
#ifndef RT_TESTS_G1_TILED_H
#define RT_TESTS_G1_TILED_H

#include "g1_clip.h"

struct g1_tiled {
    struct solver_batch b;
    int *frame_off;
    float *buf;
    int nf;
};

static int g1_src_frame(const struct g1_clip *c, long i)
{
    long n = c->n_frames;
    if (n == 1) return 0;
    long p = i % (2 * (n - 1));
    return (int)(p < n ? p : 2 * (n - 1) - p);
}

static int g1_tiled_make(struct g1_tiled *t, const struct g1_clip *c, int n_clips, const int *first, const int *len)
{
    memset(t, 0, sizeof *t);
    t->frame_off = (int *)malloc(((size_t)n_clips + 1) * sizeof(int));
    if (!t->frame_off) return -1;
    long nf = 0;
    t->frame_off[0] = 0;
    for (int k = 0; k < n_clips; k++) { nf += len[k]; t->frame_off[k + 1] = (int)nf; }
    t->nf = (int)nf;
    const size_t nt = (size_t)c->nt;
    t->buf = (float *)malloc((size_t)nf * nt * 9 * sizeof(float));
    if (!t->buf) return -1;
    float *tp = t->buf, *tq = tp + (size_t)nf * nt * 3, *wp = tq + (size_t)nf * nt * 4, *wo = wp + (size_t)nf * nt;
    for (int k = 0; k < n_clips; k++)
        for (long i = 0; i < len[k]; i++) {
            size_t d = (size_t)(t->frame_off[k] + i) * nt, s = (size_t)g1_src_frame(c, first[k] + i) * nt;
            memcpy(tp + 3 * d, c->tpos + 3 * s, 3 * nt * sizeof(float));
            memcpy(tq + 4 * d, c->trot + 4 * s, 4 * nt * sizeof(float));
            memcpy(wp + d, c->wpos + s, nt * sizeof(float));
            memcpy(wo + d, c->wrot + s, nt * sizeof(float));
        }
    g1_batch_fill(c, n_clips, t->frame_off, tp, tq, wp, wo, &t->b);
    return 0;
}

static void g1_tiled_free(struct g1_tiled *t)
{
    free(t->frame_off);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

#endif
