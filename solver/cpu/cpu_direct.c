/* cpu_direct.c -- the reference linear solver: the banded system
 * (H + lambda D) d = -g of each selected clip assembled in double and solved
 * with LAPACK's banded Cholesky (LAPACKE_dpbsv). Same linearization as the
 * PCG path (the float blocks B_t, gradients, damping and frozen masks), so
 * the two steps differ only by the linear solver.
 *
 * LAPACKE is opened (dlopen of liblapacke.so.3) at the first direct solve,
 * not linked: a threaded LAPACK (Debian's OpenBLAS) starts a thread per
 * core when it is loaded, and each spins for a while (0.08 CPU-s on the
 * 2-core build machine), in every process of the project -- on the H200's
 * 16 cores, 15 of them beside the CUDA context's creation and the sources'
 * reading -- while only this reference path calls it. */
#include <dlfcn.h>
#include <lapacke.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../frame.h"
#include "cpu_internal.h"

/* Adds v to the upper band entry (i, j), i <= j, of the column-major band. */
static void band_add(double *ab, int kd, size_t i, size_t j, double v)
{
    ab[(size_t)kd + i - j + j * (size_t)(kd + 1)] += v;
}

static int is_frozen(const struct cpu_ctx *c, int f, int k) { return (int)((c->frozen[f] >> k) & 1ull); }

typedef lapack_int (*dpbsv_fn)(int layout, char uplo, lapack_int n, lapack_int kd, lapack_int nrhs, double *ab,
                               lapack_int ldab, double *b, lapack_int ldb);
static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;
static dpbsv_fn lapack_dpbsv;
static char lapack_why[200];

static void lapack_open(void)
{
    void *h = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_LOCAL);
    void *f = h ? dlsym(h, "LAPACKE_dpbsv") : NULL;
    if (!f) {
        const char *why = dlerror();
        snprintf(lapack_why, sizeof lapack_why, "%s", why ? why : "LAPACKE_dpbsv not found");
        return;
    }
    memcpy(&lapack_dpbsv, &f, sizeof f); /* POSIX: a function's address through void * */
}

enum rt_status cpu_direct(struct cpu_ctx *c, struct rt_err *err)
{
    pthread_once(&lapack_once, lapack_open);
    if (!lapack_dpbsv)
        return rt_err_set(err, RT_EBACKEND, "solver.direct", "the direct linear solver needs LAPACKE: %s",
                          lapack_why);
    const struct solver_batch *b = c->b;
    int n = c->n;
    int has_acc = 0, has_vel = 0;
    for (int k = 0; k < n; k++) {
        if (b->w_acc && b->w_acc[k] > 0.0f) has_acc = 1;
        if (b->w_vel && b->w_vel[k] > 0.0f) has_vel = 1;
    }
    int kd = has_acc ? 2 * n : ((has_vel || b->v_limit) ? n : n - 1);
    if (kd < 0) kd = 0;
    for (int ci = 0; ci < c->nc; ci++) {
        const struct cpu_clip *cl = &c->clip[ci];
        if (!cl->sel) continue;
        size_t N = (size_t)cl->T * (size_t)n, sz;
        if (!rt_mul_size(N, (size_t)kd + 1, &sz) || !rt_mul_size(sz, sizeof(double), &sz))
            return rt_err_set(err, RT_ELIMIT, "solver.direct", "banded system too large");
        double *ab = (double *)calloc(sz / sizeof(double), sizeof(double));
        double *rhs = (double *)malloc(N * sizeof(double));
        if (!ab || !rhs) {
            free(ab);
            free(rhs);
            return rt_err_set(err, RT_ENOMEM, "solver.direct", "out of memory (%zu frames)", (size_t)cl->T);
        }
        for (int t = 0; t < cl->T; t++) {
            int f = cl->off + t;
            const float *lamd = c->lamd + (size_t)f * n;
            for (int i = 0; i < n; i++) {
                size_t gi = (size_t)t * n + (size_t)i;
                rhs[gi] = -(double)c->g[(size_t)f * n + i];
                for (int j = i; j < n; j++) {
                    double v = (double)c->B[cpu_quad_at(c, (size_t)f, j, i)]; /* B_ij = B_ji */
                    if (i == j) v += (double)lamd[i];
                    band_add(ab, kd, gi, (size_t)t * n + (size_t)j, v);
                }
            }
        }
        /* Smoothness: velocity rows (s, s+1) with -1, +1; acceleration rows
         * (s-1, s, s+1) with 1, -2, 1; a frozen coordinate takes no part. */
        for (int k = 0; k < n; k++) {
            double wv = b->w_vel ? (double)b->w_vel[k] * b->w_vel[k] : 0.0;
            double wa = b->w_acc ? (double)b->w_acc[k] * b->w_acc[k] : 0.0;
            for (int s = 0; s + 1 < cl->T && wv > 0.0; s++) {
                int idx[2] = {s, s + 1};
                double cf[2] = {-1.0, 1.0};
                for (int u = 0; u < 2; u++)
                    for (int w = u; w < 2; w++) {
                        if (is_frozen(c, cl->off + idx[u], k) || is_frozen(c, cl->off + idx[w], k)) continue;
                        band_add(ab, kd, (size_t)idx[u] * n + k, (size_t)idx[w] * n + k, wv * cf[u] * cf[w]);
                    }
            }
            /* Velocity limits: the active differences' rows, as velocity rows. */
            double wl = b->v_limit ? (double)b->w_vlim * b->w_vlim : 0.0;
            for (int s = 0; s + 1 < cl->T && wl > 0.0; s++) {
                if (!((c->vact[cl->off + s] >> k) & 1ull)) continue;
                int idx[2] = {s, s + 1};
                double cf[2] = {-1.0, 1.0};
                for (int u = 0; u < 2; u++)
                    for (int w = u; w < 2; w++) {
                        if (is_frozen(c, cl->off + idx[u], k) || is_frozen(c, cl->off + idx[w], k)) continue;
                        band_add(ab, kd, (size_t)idx[u] * n + k, (size_t)idx[w] * n + k, wl * cf[u] * cf[w]);
                    }
            }
            for (int s = 1; s + 1 < cl->T && wa > 0.0; s++) {
                int idx[3] = {s - 1, s, s + 1};
                double cf[3] = {1.0, -2.0, 1.0};
                for (int u = 0; u < 3; u++)
                    for (int w = u; w < 3; w++) {
                        if (is_frozen(c, cl->off + idx[u], k) || is_frozen(c, cl->off + idx[w], k)) continue;
                        band_add(ab, kd, (size_t)idx[u] * n + k, (size_t)idx[w] * n + k, wa * cf[u] * cf[w]);
                    }
            }
        }
        lapack_int info = lapack_dpbsv(LAPACK_COL_MAJOR, 'U', (lapack_int)N, (lapack_int)kd, 1, ab,
                                        (lapack_int)kd + 1, rhs, (lapack_int)N);
        if (info != 0) {
            free(ab);
            free(rhs);
            return rt_err_set(err, RT_EBACKEND, "solver.direct", "LAPACKE_dpbsv failed (info %d)", (int)info);
        }
        for (size_t i = 0; i < N; i++) c->d[(size_t)cl->off * n + i] = (float)rhs[i];
        free(ab);
        free(rhs);
    }
    return RT_OK;
}
