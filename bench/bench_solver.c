/* bench_solver.c -- CPU solver benchmarks on the real G1 round trip
 * (tests/g1_clip.h): throughput, PCG vs the banded direct step, the
 * convergence case with and without the remedies for the one-lambda stall,
 * and the accuracy of the reduction tree against serial per-lane sums.
 * Prints markdown; bench/run.sh appends it to bench/RESULTS.md.
 * Usage: bench_solver [DATA_DIR] [section...]  sections: speed cg conv reduce */
#include <stdint.h>

#include "../base/clock.h"
#include "../retarget/engine.h"
#include "../solver/cpu/cpu_internal.h"
#include "../solver/reduce.h"
#include "../tests/g1_clip.h"

static int want(int argc, char **argv, const char *name)
{
    if (argc <= 2) return 1;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], name)) return 1;
    return 0;
}

/* The CPU backend with `threads` threads (1..BENCH_MAX_THREADS), opened on
 * first use and kept for the whole run, as the CLI and the daemon keep
 * theirs: a timed solve pays neither for threads nor (after the first
 * batch of its size) for memory. */
#define BENCH_MAX_THREADS 2
static struct solver_backend cpu_be[BENCH_MAX_THREADS + 1];

static struct solver_backend *cpu_backend(int threads)
{
    struct rt_err err;
    if (threads < 1 || threads > BENCH_MAX_THREADS) {
        fprintf(stderr, "bench_solver: %d threads (want 1..%d)\n", threads, BENCH_MAX_THREADS);
        exit(1);
    }
    if (!cpu_be[threads].ops && rtg_backend_init(&cpu_be[threads], "cpu", threads, &err) != RT_OK) {
        fprintf(stderr, "cpu backend: %s: %s\n", err.where, err.msg);
        exit(1);
    }
    return &cpu_be[threads];
}

static double solve(const struct g1_clip *c, int threads, int n_clips, const int *first, const int *len,
                    const struct solver_options *opt, float *state, struct solver_clip_result *cr, double *truth_cost)
{
    struct solver_backend *be = cpu_backend(threads);
    int off[8];
    float *own;
    struct solver_batch b;
    struct rt_err err;
    g1_clip_batch(c, n_clips, first, len, off, &own, &b);
    if (opt) b.opt = *opt;
    struct solver_result r = {state, cr};
    double t0 = rt_now();
    if (solver_backend_solve(be, &b, &r, &err) != RT_OK) {
        fprintf(stderr, "solve: %s: %s\n", err.where, err.msg);
        exit(1);
    }
    double dt = rt_now() - t0;
    if (truth_cost) { /* the cost of the reference trajectory itself */
        struct solver_batch bt = b;
        struct solver_clip_result ct[8];
        float *tmp = (float *)malloc((size_t)off[n_clips] * c->cols * sizeof(float));
        float *init = (float *)malloc((size_t)off[n_clips] * c->cols * sizeof(float));
        for (int k = 0; k < n_clips; k++)
            memcpy(init + (size_t)off[k] * c->cols, c->truth + (size_t)first[k] * c->cols,
                   (size_t)len[k] * c->cols * sizeof(float));
        bt.init = init;
        bt.opt.max_lm_iters = 0;
        bt.opt.init_iters = 0;
        struct solver_result rt = {tmp, ct};
        solver_backend_solve(be, &bt, &rt, &err);
        *truth_cost = ct[0].final_cost;
        free(tmp);
        free(init);
    }
    free(own);
    return dt;
}

static void bench_speed(const struct g1_clip *c)
{
    static const int sizes[] = {300, 1233, 3188, 3945};
    printf("\n### Throughput (default options, G1 round trip from the rest pose)\n\n");
    printf("| frames/clip | clips | threads | wall s | frames/s | LM iters/s | LM iters | CG iters | mean mm | max mm | viol |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int nb = 1; nb <= 4; nb += 3)
            for (int th = 1; th <= 2; th++) {
                int T = sizes[si], first[4], len[4];
                for (int k = 0; k < nb; k++) {
                    len[k] = T;
                    first[k] = (c->n_frames - T) * k / 4;
                }
                struct solver_options o;
                solver_options_default(&o);
                float *st = (float *)malloc((size_t)nb * T * c->cols * sizeof(float));
                struct solver_clip_result cr[4];
                double best = 1e30;
                for (int rep = 0; rep < (T * nb < 2000 ? 3 : 1); rep++) {
                    double dt = solve(c, th, nb, first, len, &o, st, cr, NULL);
                    if (dt < best) best = dt;
                }
                int lm = 0, cg = 0;
                for (int k = 0; k < nb; k++) { lm += cr[k].lm_iters; cg += cr[k].cg_iters; }
                int off[5];
                float *own;
                struct solver_batch b;
                g1_clip_batch(c, nb, first, len, off, &own, &b);
                double mp, xp, xr;
                int viol;
                g1_clip_errors(c, &b, st, &mp, &xp, &xr, &viol);
                printf("| %d | %d | %d | %.3f | %.0f | %.1f | %d | %d | %.3f | %.2f | %d |\n", T, nb, th, best,
                       (double)T * nb / best, lm / best, lm, cg, mp * 1e3, xp * 1e3, viol);
                fflush(stdout);
                free(own);
                free(st);
            }
}

static void bench_cg(const struct g1_clip *c)
{
    printf("\n### PCG step vs banded direct step (one linearization, lambda 1e-3)\n\n");
    printf("Linearization point: the reference trajectory with joints moved by 0.1 sin(0.37 t + j).\n\n");
    printf("| frames | CG budget | cg_tol | CG iters | PCG s | direct s | rel. norm diff | rel. error |\n|---|---|---|---|---|---|---|---|\n");
    static const int sizes[] = {1233, 3945};
    static const int budgets[] = {24, 24, 400, 400};
    static const float tols[] = {0.0f, 1e-4f, 1e-5f, 1e-6f}; /* 0: the default cg_tol */
    for (int si = 0; si < 2; si++)
        for (int bi = 0; bi < 4; bi++) {
            int first = 0, len = sizes[si], off[2];
            float *own;
            struct solver_batch b;
            struct rt_err err;
            g1_clip_batch(c, 1, &first, &len, off, &own, &b);
            b.opt.max_cg_iters = budgets[bi];
            if (tols[bi] > 0.0f) b.opt.cg_tol = tols[bi];
            size_t n = (size_t)len * c->dim;
            float *x = (float *)malloc((size_t)len * c->cols * sizeof(float));
            float *dp = (float *)malloc(n * sizeof(float)), *dd = (float *)malloc(n * sizeof(float));
            memcpy(x, c->truth, (size_t)len * c->cols * sizeof(float));
            for (int t = 0; t < len; t++)
                for (int j = 0; j < 29; j++) {
                    float *v = &x[(size_t)t * c->cols + 7 + j];
                    float w = *v + 0.1f * (float)sin(0.37 * t + j);
                    *v = w < b.tree->lower[j] ? b.tree->lower[j] : (w > b.tree->upper[j] ? b.tree->upper[j] : w);
                }
            int it = 0;
            double t0 = rt_now();
            solver_cpu_debug_steps(cpu_backend(1), &b, x, 1e-3f, dp, dd, &it, &err);
            double t1 = rt_now();
            /* solver_cpu_debug_steps computes the PCG and the direct step in
             * one call: the time printed is their total (neither is timed alone) */
            double np = 0, nd = 0, ne = 0;
            for (size_t i = 0; i < n; i++) {
                np += (double)dp[i] * dp[i];
                nd += (double)dd[i] * dd[i];
                ne += ((double)dp[i] - dd[i]) * ((double)dp[i] - dd[i]);
            }
            np = sqrt(np); nd = sqrt(nd); ne = sqrt(ne);
            printf("| %d | %d | %g | %d | (total with direct) %.3f | - | %.2e | %.2e |\n", len, budgets[bi],
                   (double)b.opt.cg_tol, it, t1 - t0, fabs(np - nd) / nd, ne / nd);
            fflush(stdout);
            free(x); free(dp); free(dd); free(own);
        }
}

static void bench_conv(const struct g1_clip *c)
{
    int first = 0, len = 3188;
    printf("\n### Convergence case: first 3188 frames, 32 LM x 64 CG fixed (all tolerances 0), from the rest pose\n\n");
    printf("| linear | init_iters | per-frame damping | final cost | vs direct (same remedies) | cost of truth | mean mm | max mm | LM | CG | term | s |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    float *st = (float *)malloc((size_t)len * c->cols * sizeof(float));
    for (int variant = 0; variant < 4; variant++) {
        int init = (variant & 1) ? 0 : 8, pfd = (variant & 2) ? 0 : 1;
        double cost[2], truth = 0;
        for (int lin = 1; lin >= 0; lin--) {
            struct solver_options o;
            struct solver_clip_result cr;
            solver_options_default(&o);
            o.max_lm_iters = 32;
            o.max_cg_iters = 64;
            o.cg_tol = 0.0f;
            o.tol_cost = 0.0f;
            o.tol_grad = 0.0f;
            o.tol_step = 0.0f;
            o.init_iters = init;
            o.per_frame_damping = pfd;
            o.linear = lin;
            double dt = solve(c, 2, 1, &first, &len, &o, st, &cr, lin == 0 ? &truth : NULL);
            cost[lin] = cr.final_cost;
            int off[2];
            float *own;
            struct solver_batch b;
            g1_clip_batch(c, 1, &first, &len, off, &own, &b);
            double mp, xp, xr;
            int viol;
            g1_clip_errors(c, &b, st, &mp, &xp, &xr, &viol);
            free(own);
            if (lin == 0)
                printf("| pcg | %d | %s | %.6g | %+.2e | %.6g | %.3f | %.2f | %d | %d | %s | %.2f |\n", init, pfd ? "on" : "off",
                       cost[0], (cost[0] - cost[1]) / cost[1], truth, mp * 1e3, xp * 1e3, cr.lm_iters, cr.cg_iters,
                       solver_termination_str(cr.termination), dt);
            else
                printf("| direct | %d | %s | %.6g | 0 | | %.3f | %.2f | %d | - | %s | %.2f |\n", init, pfd ? "on" : "off",
                       cost[1], mp * 1e3, xp * 1e3, cr.lm_iters, solver_termination_str(cr.termination), dt);
            fflush(stdout);
        }
    }
    free(st);
}

static uint64_t rs;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Relative error |s - s64| / |s64| of (a) 512 float32 lanes striding the
 * vector, then the lane sums added in order, and (b) the reduce.h tree, over
 * RED_SEEDS draws per length and distribution. Random-sign sums sometimes
 * nearly cancel, and then any float32 sum has a large relative error (the
 * problem's condition number, not the method), so the table gives the
 * median over draws beside the maximum, and the error scaled by the
 * root-sum-square of the inputs, which is the size of a random-sign sum
 * without the cancelling draws. */
#define RED_SEEDS 21
static void bench_reduce(void)
{
    static const size_t lens[] = {10500, 43155, 65536, 111580, 262144, 1048576, 4194304};
    static const char *dname[2] = {"N(0,1)", "log-uniform [1e-4,1], random signs"};
    printf("\n### Reduction accuracy vs float64 (%d draws per cell)\n\n", RED_SEEDS);
    printf("(a) serial per-lane: 512 lanes striding the vector, each accumulating in float32, then the 512 lane sums added in order; (b) the reduce.h tree. "
           "rel = |s - s64| / |s64|; rss = |s - s64| / sqrt(sum x^2).\n\n");
    printf("| inputs | length | lanes rel max | tree rel max | lanes rel median | tree rel median | lanes rss max | tree rss max | median lanes/tree |\n|---|---|---|---|---|---|---|---|---|\n");
    size_t maxn = lens[sizeof lens / sizeof lens[0] - 1];
    float *x = (float *)malloc(maxn * sizeof(float));
    float *scratch = (float *)malloc((512 + rt_reduce_nblocks(maxn)) * sizeof(float));
    for (int dist = 0; dist < 2; dist++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t n = lens[li];
            double rel[2][RED_SEEDS], rss[2] = {0, 0};
            for (int seed = 0; seed < RED_SEEDS; seed++) {
                rs = 0x9E3779B97F4A7C15ull * (uint64_t)(seed + 1 + 17 * dist + 1000 * li);
                for (size_t i = 0; i < n; i++) {
                    if (dist == 0) {
                        double u1 = urand(), u2 = urand();
                        x[i] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
                    } else {
                        double m = pow(10.0, -4.0 * urand());
                        x[i] = (float)(urand() < 0.5 ? -m : m);
                    }
                }
                double ref = 0, sq = 0;
                for (size_t i = 0; i < n; i++) {
                    ref += (double)x[i];
                    sq += (double)x[i] * (double)x[i];
                }
                float lanes[512], lane_sum = 0.0f;
                for (int l = 0; l < 512; l++) {
                    float a = 0.0f;
                    for (size_t i = (size_t)l; i < n; i += 512) a += x[i];
                    lanes[l] = a;
                }
                for (int l = 0; l < 512; l++) lane_sum += lanes[l];
                float tree = rt_reduce_serial(x, n, scratch);
                double el = fabs((double)lane_sum - ref), et = fabs((double)tree - ref);
                rel[0][seed] = el / fabs(ref);
                rel[1][seed] = et / fabs(ref);
                if (el / sqrt(sq) > rss[0]) rss[0] = el / sqrt(sq);
                if (et / sqrt(sq) > rss[1]) rss[1] = et / sqrt(sq);
            }
            qsort(rel[0], RED_SEEDS, sizeof(double), cmp_double);
            qsort(rel[1], RED_SEEDS, sizeof(double), cmp_double);
            double med0 = rel[0][RED_SEEDS / 2], med1 = rel[1][RED_SEEDS / 2];
            printf("| %s | %zu | %.2e | %.2e | %.2e | %.2e | %.2e | %.2e | %.1fx |\n", dname[dist], n,
                   rel[0][RED_SEEDS - 1], rel[1][RED_SEEDS - 1], med0, med1, rss[0], rss[1],
                   med0 / fmax(med1, 1e-30));
            fflush(stdout);
        }
    free(x);
    free(scratch);
}

int main(int argc, char **argv)
{
    const char *data = argc > 1 ? argv[1] : "../shared/data";
    struct g1_clip c;
    int need_clip = want(argc, argv, "speed") || want(argc, argv, "cg") || want(argc, argv, "conv");
    (void)g1_cpu_solve; /* the benchmark keeps its backends (cpu_backend()) */
    if (need_clip && g1_clip_load(&c, data, 0) != 0) return 1;
    if (want(argc, argv, "speed")) bench_speed(&c);
    if (want(argc, argv, "cg")) bench_cg(&c);
    if (want(argc, argv, "conv")) bench_conv(&c);
    if (want(argc, argv, "reduce")) bench_reduce();
    if (need_clip) g1_clip_free(&c);
    for (int t = 0; t <= BENCH_MAX_THREADS; t++) solver_backend_free(&cpu_be[t]);
    return 0;
}
