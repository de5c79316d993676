/* bench_gpu.c -- the CUDA backend's benchmark (issue 5, `make bench-gpu`).
 *
 * On the real G1 clip (tests/g1_clip.h; shared/data or $RT_SHARED_DATA):
 *   1. device copy bandwidth (bytes read + written), the ceiling;
 *   2. the reference workload: 4 clips x 3,188 frames, 32 LM x 64 CG fixed
 *      (all tolerances 0): seconds per solve end to end (host arrays to
 *      host arrays) and the PCG graphs alone, CG iteration time against its
 *      byte floor (2 n^2 + 16 n floats per frame per iteration);
 *   3. the same 4 clips batched vs one solo: identical bits or not;
 *   4. throughput at default settings for batches of 1..1,024 clips of the
 *      real clip's length, and a mixed-length batch (300..8,000 frames);
 *   5. the reduction-accuracy table (tree on the GPU vs the serial per-lane
 *      float baseline, max relative error against float64);
 *   6. with several devices: throughput on one vs all (a batch split by
 *      clips), and whether the bits agree;
 *   7. `windows F...`: batches of about F frames made as the daemon makes
 *      them from the bench-e2e corpus (windows of 300..3945 frames), for
 *      the solver's rate at the daemon's batch sizes;
 *   8. `hostmem MB...`: solver_backend_host_alloc() of MB megabytes (the
 *      page-locked arrays of a CLI or daemon call: about 95 MB for 131,000
 *      frames of the G1), its first write and its release, timed, and the
 *      allocation again while a 131,000-frame batch solves beside it: how
 *      long it holds the device's other callers up.
 * The single-device sections use the "cuda" backend configured from the
 * environment (retarget/engine.h), which takes every device unless
 * RT_CUDA_DEVICES limits it (bench_gpu.sh sets 1); the several-device
 * section sets its device limits itself.
 * Without a device it says so and exits 77. Prints a short table last. */
#include "../base/clock.h"
#include "../retarget/engine.h"
#include "../solver/backend.h"
#include "../solver/cuda/cuda_api.h"
#include "../tests/g1_tiled.h"

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

static const char *data_dir(void)
{
    const char *d = getenv("RT_SHARED_DATA");
    return d && d[0] ? d : "../shared/data";
}

static struct solver_backend gpu;
static char summary[8192];
static size_t sum_len;
#define SUM(...) (sum_len += (size_t)snprintf(summary + sum_len, sizeof summary - sum_len, __VA_ARGS__))

static int solve(struct g1_tiled *t, int cols, float **out, struct solver_clip_result **cr, double *sec)
{
    struct rt_err err;
    *out = (float *)malloc((size_t)t->nf * cols * sizeof(float));
    *cr = (struct solver_clip_result *)calloc((size_t)t->b.n_clips, sizeof **cr);
    struct solver_result r = {*out, *cr};
    double t0 = rt_now();
    enum rt_status st = solver_backend_solve(&gpu, &t->b, &r, &err);
    *sec = rt_now() - t0;
    if (st != RT_OK) fprintf(stderr, "solve: %s: %s\n", err.where, err.msg);
    return st == RT_OK ? 0 : -1;
}

static void fixed_opts(struct solver_options *o)
{
    o->max_lm_iters = 32;
    o->max_cg_iters = 64;
    o->cg_tol = 0.0f;
    o->tol_cost = 0.0f;
    o->tol_grad = 0.0f;
    o->tol_step = 0.0f;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void reference(const struct g1_clip *c, double copy_gbs)
{
    int first[4] = {0, 0, 0, 0}, len[4] = {3188, 3188, 3188, 3188};
    struct g1_tiled t, one;
    if (g1_tiled_make(&t, c, 4, first, len) || g1_tiled_make(&one, c, 1, first, len)) return;
    fixed_opts(&t.b.opt);
    fixed_opts(&one.b.opt);
    float *x = NULL, *xs = NULL;
    struct solver_clip_result *cr = NULL, *crs = NULL;
    double sec[5], pcg[5], s;
    int graphs = 0;
    struct rt_err err;
    for (int r = 0; r < 6; r++) {
        free(x), free(cr);
        if (solve(&t, c->cols, &x, &cr, &s)) return;
        double pm, sm;
        solver_cuda_last_stats(&gpu, &pm, &graphs, &sm, &err);
        if (r) { sec[r - 1] = s; pcg[r - 1] = pm; }
    }
    qsort(sec, 5, sizeof *sec, cmp_d);
    qsort(pcg, 5, sizeof *pcg, cmp_d);
    int n = c->dim, nf = t.nf;
    /* The 4 identical clips run their CG iterations in lock step; the
     * graph's remaining slots of the 64 are launches that skip every frame. */
    double iters = (double)cr[0].cg_iters;
    double it_us = 1e3 * pcg[2] / iters;
    /* Byte floor of one CG iteration: the packed block and factor read once
     * (n (n + 1) / 2 floats each) and the vector traffic of matvec (p, lamd
     * in, q out), p.q (p, q), the update (F, p, q, d, r in; d, r, z out),
     * r.r / r.z (r, z) and p = z + beta p (z, p in; p out): 17 n floats. */
    double floor_b = (double)nf * (2.0 * n * (n + 1) / 2 + 17.0 * n) * 4.0;
    double gbs = floor_b / (it_us * 1e-6) / 1e9;
    printf("reference 4 x 3188 frames, 32 LM x 64 CG: median of 5: %.4f s end to end, PCG graphs %.4f s "
           "(%d graphs of 64 CG slots, %.1f us per CG iteration actually run), lm %d cg %d term %s cost %.6g -> %.6g\n",
           sec[2], 1e-3 * pcg[2], graphs, it_us, cr[0].lm_iters, cr[0].cg_iters,
           solver_termination_str(cr[0].termination), (double)cr[0].initial_cost,
           (double)cr[0].final_cost);
    printf("CG iteration byte floor %.1f MB (%d frames x (%d*%d + 17*%d) floats, packed blocks); achieved %.0f GB/s = %.0f%% of "
           "copy %.0f GB/s\n", floor_b / 1e6, nf, n, n + 1, n, gbs, 100.0 * gbs / copy_gbs, copy_gbs);
    SUM("reference 4x3188, <=32 LM x 64 CG  %8.4f s end-to-end  %8.4f s PCG  (lm %d, cg %d, %s)\n"
        "  CG iteration %6.1f us, floor %.1f MB -> %5.0f GB/s (%3.0f%% of copy)\n",
        sec[2], 1e-3 * pcg[2], cr[0].lm_iters, cr[0].cg_iters, solver_termination_str(cr[0].termination), it_us,
        floor_b / 1e6, gbs, 100.0 * gbs / copy_gbs);
    /* The same at a size where launches amortize: 64 clips x the real
     * length, 2 LM x 64 CG fixed (clips in lock step). */
    {
        int nb = 64;
        int *fb = (int *)calloc((size_t)nb, sizeof(int)), *lb = (int *)malloc((size_t)nb * sizeof(int));
        for (int k = 0; k < nb; k++) lb[k] = c->n_frames;
        struct g1_tiled big;
        if (g1_tiled_make(&big, c, nb, fb, lb) == 0) {
            fixed_opts(&big.b.opt);
            big.b.opt.max_lm_iters = 2;
            float *xb = NULL;
            struct solver_clip_result *rb = NULL;
            double sb, pm = 0, sm = 0, best = 1e30;
            int gr = 0;
            for (int r = 0; r < 3; r++) {
                free(xb), free(rb);
                if (solve(&big, c->cols, &xb, &rb, &sb)) break;
                solver_cuda_last_stats(&gpu, &pm, &gr, &sm, &err);
                if (r && pm < best) best = pm;
            }
            if (rb && best < 1e29) {
                double fl = (double)big.nf * (2.0 * n * (n + 1) / 2 + 17.0 * n) * 4.0;
                double us = 1e3 * best / (double)rb[0].cg_iters, g2 = fl / (us * 1e-6) / 1e9;
                printf("CG at %d x %d frames, 2 LM x 64 CG: %d CG iterations, %.1f us each, floor %.1f MB, %.0f GB/s = "
                       "%.0f%% of copy\n", nb, c->n_frames, rb[0].cg_iters, us, fl / 1e6, g2, 100.0 * g2 / copy_gbs);
                SUM("  CG iteration at %dx%d: %7.1f us, floor %.0f MB -> %5.0f GB/s (%3.0f%% of copy)\n", nb,
                    c->n_frames, us, fl / 1e6, g2, 100.0 * g2 / copy_gbs);
            }
            free(xb), free(rb);
            g1_tiled_free(&big);
        }
        free(fb), free(lb);
    }
    /* batched vs solo */
    if (solve(&one, c->cols, &xs, &crs, &s) == 0) {
        int same = 1;
        for (int k = 0; k < 4; k++)
            same &= !memcmp(x + (size_t)k * 3188 * c->cols, xs, (size_t)3188 * c->cols * sizeof(float)) &&
                    cr[k].cg_iters == crs[0].cg_iters && !memcmp(&cr[k].final_cost, &crs[0].final_cost, 4);
        printf("4 copies of 3188 frames batched vs solo at CG budget 64: %s\n", same ? "IDENTICAL" : "DIFFERENT");
        SUM("4x3188 batched vs solo (CG 64)     %s\n", same ? "identical bits" : "DIFFERENT BITS");
    }
    free(x), free(xs), free(cr), free(crs);
    g1_tiled_free(&t);
    g1_tiled_free(&one);
}

/* only > 0: that one batch size, no mixed batch. */
static void throughput(const struct g1_clip *c, int only)
{
    static const int sizes[] = {1, 4, 16, 64, 256, 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int nc = sizes[i];
        if (only > 0 && nc != only) continue;
        int *first = (int *)calloc((size_t)nc, sizeof(int)), *len = (int *)malloc((size_t)nc * sizeof(int));
        for (int k = 0; k < nc; k++) { len[k] = c->n_frames; first[k] = 0; }
        struct g1_tiled t;
        if (g1_tiled_make(&t, c, nc, first, len)) { free(first), free(len); break; }
        float *x = NULL;
        struct solver_clip_result *cr = NULL;
        double s = 0, s2 = 0;
        int ok = solve(&t, c->cols, &x, &cr, &s) == 0;
        if (ok && s < 20.0) { free(x), free(cr); ok = solve(&t, c->cols, &x, &cr, &s2) == 0; if (ok && s2 < s) s = s2; }
        if (ok) {
            int lm = 0, cg = 0;
            for (int k = 0; k < nc; k++) { lm = cr[k].lm_iters > lm ? cr[k].lm_iters : lm; cg += cr[k].cg_iters; }
            printf("throughput %4d x %d frames (default options): %.3f s, %.0f frames/s (max lm %d, mean cg %.1f, "
                   "clip 0 cost %.6g)\n", nc, c->n_frames, s, t.nf / s, lm, (double)cg / nc, (double)cr[0].final_cost);
            SUM("throughput %4d clips x %d        %8.3f s  %10.0f frames/s\n", nc, c->n_frames, s, t.nf / s);
        }
        free(x), free(cr), free(first), free(len);
        g1_tiled_free(&t);
        if (!ok || s > 20.0) break;
    }
    if (only > 0) return;
    /* mixed lengths 300..8000 */
    enum { NM = 64 };
    int first[NM], len[NM];
    uint32_t r = 12345;
    for (int k = 0; k < NM; k++) {
        r = r * 1664525u + 1013904223u;
        len[k] = 300 + (int)((r >> 8) % 7701u);
        first[k] = (int)((r >> 4) % (uint32_t)c->n_frames);
    }
    struct g1_tiled t;
    if (g1_tiled_make(&t, c, NM, first, len) == 0) {
        float *x = NULL;
        struct solver_clip_result *cr = NULL;
        double s = 0, s2;
        if (solve(&t, c->cols, &x, &cr, &s) == 0) {
            free(x), free(cr);
            if (solve(&t, c->cols, &x, &cr, &s2) == 0 && s2 < s) s = s2;
            printf("throughput mixed %d clips of 300..8000 frames (%d frames): %.3f s, %.0f frames/s\n", NM, t.nf, s,
                   t.nf / s);
            SUM("throughput mixed 64 clips 300..8000 (%d frames) %.3f s  %.0f frames/s\n", t.nf, s, t.nf / s);
        }
        free(x), free(cr);
        g1_tiled_free(&t);
    }
}

/* Batches as the daemon builds them from the bench-e2e corpus: windows of
 * the real clip with lengths uniform in 300..3945 (a fixed seed), as many
 * as fill `frames`; solved twice, the faster kept. */
static void windows(const struct g1_clip *c, int frames)
{
    int cap = frames / 300 + 2, nc = 0, nf = 0;
    int *first = (int *)malloc((size_t)cap * sizeof(int)), *len = (int *)malloc((size_t)cap * sizeof(int));
    uint32_t r = 2024u + (uint32_t)frames;
    while (first && len && nf < frames && nc < cap) {
        r = r * 1664525u + 1013904223u;
        len[nc] = 300 + (int)((r >> 8) % 3646u);
        if (len[nc] > c->n_frames) len[nc] = c->n_frames;
        r = r * 1664525u + 1013904223u;
        first[nc] = (int)((r >> 4) % (uint32_t)(c->n_frames - len[nc] + 1));
        nf += len[nc++];
    }
    struct g1_tiled t;
    if (nc && g1_tiled_make(&t, c, nc, first, len) == 0) {
        float *x = NULL;
        struct solver_clip_result *cr = NULL;
        double s = 0, s2;
        if (solve(&t, c->cols, &x, &cr, &s) == 0) {
            free(x), free(cr);
            x = NULL, cr = NULL;
            if (solve(&t, c->cols, &x, &cr, &s2) == 0 && s2 < s) s = s2;
            printf("windows %d clips of 300..3945 frames (%d frames): %.3f s, %.0f frames/s\n", nc, t.nf, s, t.nf / s);
            SUM("windows %4d clips (%7d frames)   %8.3f s  %10.0f frames/s\n", nc, t.nf, s, t.nf / s);
        }
        free(x), free(cr);
        g1_tiled_free(&t);
    }
    free(first), free(len);
}

/* ---- several devices ------------------------------------------------ */
static int clips_same(const struct solver_clip_result *a, const struct solver_clip_result *b, int nc)
{
    for (int k = 0; k < nc; k++)
        if (a[k].lm_iters != b[k].lm_iters || a[k].cg_iters != b[k].cg_iters || a[k].termination != b[k].termination ||
            memcmp(&a[k].final_cost, &b[k].final_cost, 4) || memcmp(&a[k].final_lambda, &b[k].final_lambda, 4) ||
            memcmp(&a[k].initial_cost, &b[k].initial_cost, 4) || memcmp(&a[k].start_cost, &b[k].start_cost, 4))
            return 0;
    return 1;
}

/* Throughput on one device vs all devices (split by clips), and whether
 * the bits agree. */
static void multi(const struct g1_clip *c)
{
    struct solver_backend one, all;
    struct solver_backend_config cfg;
    struct rt_err err;
    rtg_backend_config_env(&cfg, 0);
    cfg.cuda_devices = 0; /* all */
    if (solver_backend_cuda_init(&all, &cfg, &err) != RT_OK) return;
    int nd = solver_cuda_backend_devices(&all);
    if (nd < 2) {
        printf("several devices: only %d device, not run\n", nd);
        SUM("multi-GPU: %d device, not run\n", nd);
        solver_backend_free(&all);
        return;
    }
    cfg.cuda_devices = 1;
    if (solver_backend_cuda_init(&one, &cfg, &err) != RT_OK) { solver_backend_free(&all); return; }
    static const int counts[] = {16, 64, 256};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        int nc = counts[ci];
        int *first = (int *)calloc((size_t)nc, sizeof(int)), *len = (int *)malloc((size_t)nc * sizeof(int));
        for (int k = 0; k < nc; k++) len[k] = c->n_frames;
        struct g1_tiled t;
        if (g1_tiled_make(&t, c, nc, first, len)) { free(first), free(len); break; }
        size_t sb = (size_t)t.nf * c->cols * sizeof(float);
        float *x1 = (float *)malloc(sb), *x2 = (float *)malloc(sb);
        struct solver_clip_result *r1 = (struct solver_clip_result *)calloc((size_t)nc, sizeof *r1);
        struct solver_clip_result *r2 = (struct solver_clip_result *)calloc((size_t)nc, sizeof *r2);
        struct solver_result o1 = {x1, r1}, o2 = {x2, r2};
        double s1 = 1e30, s2 = 1e30;
        int ok = 1;
        for (int rep = 0; rep < 2 && ok; rep++) {
            double t0 = rt_now();
            ok &= solver_backend_solve(&one, &t.b, &o1, &err) == RT_OK;
            double t1 = rt_now();
            ok &= solver_backend_solve(&all, &t.b, &o2, &err) == RT_OK;
            double t2 = rt_now();
            if (t1 - t0 < s1) s1 = t1 - t0;
            if (t2 - t1 < s2) s2 = t2 - t1;
        }
        if (ok) {
            int same = !memcmp(x1, x2, sb) && clips_same(r1, r2, nc);
            printf("%d devices vs 1: %4d clips x %d frames: 1 device %.3f s (%.0f frames/s), %d devices %.3f s (%.0f "
                   "frames/s), speedup %.2f, bits %s\n", nd, nc, c->n_frames, s1, t.nf / s1, nd, s2, t.nf / s2, s1 / s2,
                   same ? "IDENTICAL" : "DIFFERENT");
            SUM("multi-GPU %4d clips x %d: 1 dev %8.0f f/s, %d dev %8.0f f/s, x%.2f, %s\n", nc, c->n_frames, t.nf / s1,
                nd, t.nf / s2, s1 / s2, same ? "identical bits" : "DIFFERENT BITS");
        } else {
            fprintf(stderr, "multi: %s: %s\n", err.where, err.msg);
        }
        free(x1), free(x2), free(r1), free(r2), free(first), free(len);
        g1_tiled_free(&t);
        if (!ok) break;
    }
    solver_backend_free(&one);
    solver_backend_free(&all);
}

/* ---- reduction accuracy ---------------------------------------------- */
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static double unit(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

static void accuracy(void)
{
    static const size_t lens[] = {10500, 43155, 65536, 111580, 262144, 1048576, 4194304};
    printf("reduction accuracy (max relative error vs float64 over 5 draws): length | N(0,1): serial512 tree-gpu | "
           "log-uniform: serial512 tree-gpu\n");
    SUM("reduction accuracy: length  N(0,1) serial / tree-gpu   loguniform serial / tree-gpu\n");
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li];
        float *x = (float *)malloc(n * sizeof(float));
        double err[2][2] = {{0, 0}, {0, 0}};
        for (int dist = 0; dist < 2; dist++)
            for (int draw = 0; draw < 5; draw++) {
                double exact = 0;
                for (size_t i = 0; i < n; i++) {
                    float v;
                    if (dist == 0) {
                        double u = unit() + 1e-300, w = unit();
                        v = (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * w));
                    } else {
                        v = (float)((rnd() & 1 ? 1 : -1) * pow(10.0, -4.0 * unit()));
                    }
                    x[i] = v;
                    exact += (double)v;
                }
                float lane[512] = {0};
                for (size_t i = 0; i < n; i++) lane[i % 512] += x[i];
                float ser = 0;
                for (int l = 0; l < 512; l++) ser += lane[l];
                size_t off[2] = {0, n};
                float tree;
                struct rt_err e;
                if (solver_cuda_sum_segments(x, off, 1, &tree, NULL, &e) != RT_OK) { free(x); return; }
                double d = fabs(exact) > 0 ? fabs(exact) : 1;
                double es = fabs((double)ser - exact) / d, et = fabs((double)tree - exact) / d;
                if (es > err[dist][0]) err[dist][0] = es;
                if (et > err[dist][1]) err[dist][1] = et;
            }
        printf("  %8zu | %.2e %.2e | %.2e %.2e\n", n, err[0][0], err[0][1], err[1][0], err[1][1]);
        SUM("  %8zu   %.2e / %.2e            %.2e / %.2e\n", n, err[0][0], err[0][1], err[1][0], err[1][1]);
        free(x);
    }
}

/* A solve of `t` on a thread of its own (hostmem's load). */
struct bg_solve {
    struct g1_tiled *t;
    int cols;
    double sec;
};

static void *bg_solve_run(void *arg)
{
    struct bg_solve *b = (struct bg_solve *)arg;
    float *out;
    struct solver_clip_result *cr;
    solve(b->t, b->cols, &out, &cr, &b->sec);
    free(out);
    free(cr);
    return NULL;
}

static void hostmem(const struct g1_clip *c, int mb)
{
    size_t bytes = (size_t)mb << 20;
    double ta = 1e9, tw = 1e9, tf = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = rt_now();
        char *p = (char *)solver_backend_host_alloc(&gpu, bytes);
        double t1 = rt_now();
        if (!p) {
            printf("hostmem %d MB: no page-locked memory\n", mb);
            return;
        }
        memset(p, r, bytes);
        double t2 = rt_now();
        solver_backend_host_free(&gpu, p);
        double t3 = rt_now();
        if (t1 - t0 < ta) ta = t1 - t0;
        if (t2 - t1 < tw) tw = t2 - t1;
        if (t3 - t2 < tf) tf = t3 - t2;
    }
    printf("hostmem %d MB: alloc %.1f ms, first write %.1f ms, free %.1f ms (least of 5)\n", mb, 1e3 * ta, 1e3 * tw,
           1e3 * tf);
    SUM("hostmem %d MB: alloc %.1f ms, write %.1f ms, free %.1f ms\n", mb, 1e3 * ta, 1e3 * tw, 1e3 * tf);
    /* The same allocation while a batch of windows solves on another thread. */
    enum { NW = 40 };
    int first[NW], len[NW], nf = 0;
    for (int k = 0; k < NW; k++) { /* about 128,000 frames */
        len[k] = c->n_frames < 3200 ? c->n_frames : 3200;
        first[k] = 0;
        nf += len[k];
    }
    struct g1_tiled t;
    if (g1_tiled_make(&t, c, NW, first, len)) return;
    struct bg_solve alone = {&t, c->cols, 0}, beside = {&t, c->cols, 0};
    bg_solve_run(&alone);
    pthread_t th;
    if (pthread_create(&th, NULL, bg_solve_run, &beside) == 0) {
        usleep(20000);
        double t0 = rt_now();
        void *p = solver_backend_host_alloc(&gpu, bytes);
        double t1 = rt_now();
        pthread_join(th, NULL);
        solver_backend_host_free(&gpu, p);
        printf("hostmem %d MB during a solve of %d frames: alloc %.1f ms; the solve %.1f ms (alone %.1f ms)\n", mb, nf,
               1e3 * (t1 - t0), 1e3 * beside.sec, 1e3 * alone.sec);
        SUM("hostmem %d MB beside a %d-frame solve: alloc %.1f ms, solve %.1f ms (alone %.1f)\n", mb, nf,
            1e3 * (t1 - t0), 1e3 * beside.sec, 1e3 * alone.sec);
    }
    g1_tiled_free(&t);
}

int main(int argc, char **argv)
{
    char desc[256];
    struct rt_err err;
    const char *only = argc > 1 ? argv[1] : "all";
    if (solver_cuda_device_describe(desc, sizeof desc, &err) != RT_OK) {
        fprintf(stderr, "skipped: no CUDA device (%s)\n", err.msg);
        return 77;
    }
    printf("device: %s\n", desc);
    if (rtg_backend_init(&gpu, "cuda", 0, &err) != RT_OK) {
        fprintf(stderr, "cuda backend: %s\n", err.msg);
        return 1;
    }
    double gbs = 0;
    if (solver_cuda_copy_bandwidth((size_t)1 << 30, &gbs, &err) == RT_OK)
        printf("device-to-device copy: %.0f GB/s (read + write, 1 GiB, median of 11)\n", gbs);
    SUM("device: %s\ncopy bandwidth %.0f GB/s\n", desc, gbs);
    struct g1_clip c;
    if (g1_clip_load(&c, data_dir(), 0) != 0) {
        fprintf(stderr, "G1 data unavailable\n");
        return 1;
    }
    (void)g1_clip_batch, (void)g1_clip_errors, (void)g1_cpu_solve;
    if (!strcmp(only, "all") || !strcmp(only, "reference")) reference(&c, gbs);
    if (!strcmp(only, "all") || !strcmp(only, "throughput")) throughput(&c, argc > 2 ? atoi(argv[2]) : 0);
    if (!strcmp(only, "all") || !strcmp(only, "accuracy")) accuracy();
    if (!strcmp(only, "multi")) multi(&c);
    if (!strcmp(only, "hostmem"))
        for (int i = 2; i < argc; i++) hostmem(&c, atoi(argv[i]));
    if (!strcmp(only, "windows"))
        for (int i = 2; i < argc; i++) windows(&c, atoi(argv[i]));
    g1_clip_free(&c);
    solver_backend_free(&gpu);
    printf("\n==== summary ====\n%s", summary);
    return 0;
}
