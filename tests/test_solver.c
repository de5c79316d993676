/* test_solver.c -- the CPU solver against its contract (DESIGN.md "The
 * numerical contract") on the real G1 trajectory:
 *   - frame.h Jacobian rows (through B = J^T J and g = J^T r of one target)
 *     against central differences of the double-precision kin_fk;
 *   - batched == solo, run == run, 1 == 2 == 7 threads, bit for bit, for
 *     clips of 1, 2, 511, 512 and 513 frames;
 *   - one backend context reused over batches of different shapes (big,
 *     small, big again) at 1, 2 and 4 threads == a fresh context per batch,
 *     bit for bit, also with the context's arena poisoned before each solve;
 *   - the PCG step against the banded direct step on one linearization;
 *   - the round trip: FK of the reference trajectory, solved from the rest
 *     pose with default options, must come back within 5 mm mean, 2 cm max,
 *     with zero joint-limit violations, the coupled solve stopping on its
 *     cost tests within 3 iterations;
 *   - lm_rule_step's cost tests (the ftol test, quadratic convergence);
 *   - options, batch and backend configuration validation at their limits. */
#include "../solver/backend.h"
#include "../solver/cpu/cpu_internal.h"
#include "../solver/frame.h"
#include "g1_clip.h"
#include "test.h"

/* ---- double helpers for finite differences -------------------------- */
static void dq_mul(const double *a, const double *b, double *o)
{
    double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    o[0] = x; o[1] = y; o[2] = z; o[3] = w;
}

/* state (+) eps e_c in double (same retraction as frame_retract, no clamp). */
static void d_retract(const double *x, int c, double eps, double *o, int cols)
{
    memcpy(o, x, (size_t)cols * sizeof(double));
    if (c < 3) o[c] += eps;
    else if (c < 6) {
        double h = 0.5 * eps, e[4] = {0, 0, 0, cos(h)}, q[4];
        e[c - 3] = sin(h);
        dq_mul(e, x + 3, q);
        memcpy(o + 3, q, sizeof q);
    } else o[7 + c - 6] += eps;
}

/* Log of a rotation matrix (double), for the FD of the orientation residual. */
static void d_log(const double *R, double *phi)
{
    double q[4];
    g1_quat_from_m3d(R, q);
    if (q[3] < 0) for (int i = 0; i < 4; i++) q[i] = -q[i];
    double s = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    double k = s < 1e-12 ? 2.0 / q[3] : 2.0 * atan2(s, q[3]) / s;
    for (int i = 0; i < 3; i++) phi[i] = k * q[i];
}

static void test_jacobian(const struct g1_clip *c)
{
    const struct rt_tree *tr = &c->robot->tree;
    int n = c->dim, cols = c->cols, nl = tr->n_links;
    int f = 1234;
    float x[64];
    double xd[64], xp[64], xm[64];
    for (int i = 0; i < cols; i++) x[i] = c->truth[(size_t)f * cols + i];
    for (int j = 0; j < tr->n_joints; j++) { /* move off the truth so residuals are not zero */
        float v = x[7 + j] + 0.05f * (float)((j % 5) - 2);
        x[7 + j] = rt_clampf(v, tr->lower[j] + 0.01f, tr->upper[j] - 0.01f);
    }
    for (int i = 0; i < cols; i++) xd[i] = x[i];
    double *lp = (double *)malloc((size_t)nl * 3 * sizeof(double)), *lr = (double *)malloc((size_t)nl * 9 * sizeof(double));
    double *lp2 = (double *)malloc((size_t)nl * 3 * sizeof(double)), *lr2 = (double *)malloc((size_t)nl * 9 * sizeof(double));
    float *B = (float *)malloc((size_t)n * n * sizeof(float)), g[64];
    float *lk = (float *)malloc((size_t)nl * FRAME_LINK_STRIDE * sizeof(float));
    double worst_b = 0, worst_g = 0;
    for (int mode = 0; mode < 2; mode++) /* 0: position rows, 1: orientation rows */
        for (int k = 0; k < c->nt; k++) {
            float wp = mode == 0 ? 1.0f : 0.0f, wo = mode == 1 ? 1.0f : 0.0f;
            int off[2] = {0, 1};
            size_t ti = (size_t)f * c->nt + (size_t)k;
            struct solver_batch b;
            memset(&b, 0, sizeof b);
            b.tree = tr;
            b.n_clips = 1;
            b.frame_off = off;
            b.n_targets = 1;
            b.target_link = &c->target_link[k];
            b.target_pos = c->tpos + 3 * ti;
            b.target_rot = c->trot + 4 * ti;
            b.target_wpos = &wp;
            b.target_wrot = &wo;
            frame_eval(&b, 0, x, NULL, 0, 1, lk, B, g);
            /* FD Jacobian of the residual (6 rows) in double. */
            double J[6][64], r0[6];
            int l = c->target_link[k];
            kin_fk(c->robot, xd, lp, lr);
            double Rt[9], qt[4];
            for (int a = 0; a < 4; a++) qt[a] = c->trot[4 * ti + a];
            { double xx = qt[0], y = qt[1], z = qt[2], w = qt[3];
              double R[9] = {1 - 2 * (y * y + z * z), 2 * (xx * y - z * w), 2 * (xx * z + y * w),
                             2 * (xx * y + z * w), 1 - 2 * (xx * xx + z * z), 2 * (y * z - xx * w),
                             2 * (xx * z - y * w), 2 * (y * z + xx * w), 1 - 2 * (xx * xx + y * y)};
              memcpy(Rt, R, sizeof R); }
            for (int col = 0; col < n; col++) {
                double h = 1e-6, rp[6], rm[6];
                for (int sgn = 0; sgn < 2; sgn++) {
                    double *xs = sgn ? xm : xp, *rr = sgn ? rm : rp;
                    d_retract(xd, col, sgn ? -h : h, xs, cols);
                    kin_fk(c->robot, xs, lp2, lr2);
                    for (int a = 0; a < 3; a++) rr[a] = lp2[3 * l + a] - c->tpos[3 * ti + a];
                    double M[9];
                    for (int i = 0; i < 3; i++)
                        for (int j = 0; j < 3; j++)
                            M[3 * i + j] = lr2[9 * l + 3 * i] * Rt[3 * j] + lr2[9 * l + 3 * i + 1] * Rt[3 * j + 1] +
                                           lr2[9 * l + 3 * i + 2] * Rt[3 * j + 2];
                    d_log(M, rr + 3);
                }
                for (int a = 0; a < 6; a++) J[a][col] = (rp[a] - rm[a]) / (2 * h);
            }
            for (int a = 0; a < 3; a++) r0[a] = lp[3 * l + a] - c->tpos[3 * ti + a];
            { double M[9];
              for (int i = 0; i < 3; i++)
                  for (int j = 0; j < 3; j++)
                      M[3 * i + j] = lr[9 * l + 3 * i] * Rt[3 * j] + lr[9 * l + 3 * i + 1] * Rt[3 * j + 1] +
                                     lr[9 * l + 3 * i + 2] * Rt[3 * j + 2];
              d_log(M, r0 + 3); }
            int r_lo = mode == 0 ? 0 : 3;
            /* Position rows are exact; orientation rows use the Gauss-Newton
             * approximation (Jacobian of Log taken as I), exact only at zero
             * residual, so they are compared with a looser tolerance. */
            double tol = mode == 0 ? 2e-3 : 6e-2, scale = 0;
            for (int i = 0; i < n; i++) scale = fmax(scale, fabs((double)B[(size_t)i * n + i]));
            for (int i = 0; i < n; i++) {
                double gi = 0;
                for (int a = r_lo; a < r_lo + 3; a++) gi += J[a][i] * r0[a];
                double eg = fabs(gi - g[i]) / (1e-3 + sqrt(scale) * 0.2);
                if (eg > worst_g) worst_g = eg;
                for (int j = 0; j < n; j++) {
                    double bij = 0;
                    for (int a = r_lo; a < r_lo + 3; a++) bij += J[a][i] * J[a][j];
                    double e = fabs(bij - B[(size_t)i * n + j]) / (scale + 1e-12);
                    if (e > tol) {
                        fprintf(stderr, "jacobian: %s %s B[%d][%d] = %g, FD %g\n", g1_target_names[k],
                                mode ? "rot" : "pos", i, j, (double)B[(size_t)i * n + j], bij);
                        CHECK(e <= tol);
                        i = n; break;
                    }
                    if (mode == 0 && e > worst_b) worst_b = e;
                }
            }
        }
    printf("jacobian: worst relative B difference (position rows) %.2e, gradient %.2e\n", worst_b, worst_g);
    CHECK(worst_b < 2e-3);
    CHECK(worst_g < 0.1);
    free(lp); free(lr); free(lp2); free(lr2); free(B); free(lk);
}

/* Solves clips (first[k], len[k]) of the G1 clip in one batch. */
static int solve_cut(const struct g1_clip *c, int n_clips, const int *first, const int *len, int threads,
                     float **state_out, struct solver_clip_result *cr)
{
    int off[16];
    float *own;
    struct solver_batch b;
    struct rt_err err;
    g1_clip_batch(c, n_clips, first, len, off, &own, &b);
    *state_out = (float *)malloc((size_t)off[n_clips] * c->cols * sizeof(float));
    struct solver_result r = {*state_out, cr};
    int st = g1_cpu_solve(&b, threads, &r, &err);
    if (st != RT_OK) fprintf(stderr, "solve: %s: %s\n", err.where, err.msg);
    free(own);
    return st;
}

static void check_clip_eq(const struct solver_clip_result *a, const struct solver_clip_result *b)
{
    CHECK_EQ_INT(a->lm_iters, b->lm_iters);
    CHECK_EQ_INT(a->cg_iters, b->cg_iters);
    CHECK_EQ_INT(a->termination, b->termination);
    CHECK_BITS_EQ(&a->initial_cost, &b->initial_cost, 1);
    CHECK_BITS_EQ(&a->final_cost, &b->final_cost, 1);
    CHECK_BITS_EQ(&a->final_lambda, &b->final_lambda, 1);
    CHECK_BITS_EQ(&a->start_cost, &b->start_cost, 1);
}

static void test_bits(const struct g1_clip *c)
{
    enum { NC = 5 };
    const int first[NC] = {100, 900, 1500, 2200, 3000};
    const int len[NC] = {1, 2, 511, 512, 513};
    float *solo[NC], *batch, *batch2, *batch_t2, *batch_t7;
    struct solver_clip_result rs[NC], rb[NC], rb2[NC], rt2[NC], rt7[NC];
    for (int k = 0; k < NC; k++) CHECK(solve_cut(c, 1, &first[k], &len[k], 1, &solo[k], &rs[k]) == RT_OK);
    CHECK(solve_cut(c, NC, first, len, 1, &batch, rb) == RT_OK);
    CHECK(solve_cut(c, NC, first, len, 1, &batch2, rb2) == RT_OK);
    CHECK(solve_cut(c, NC, first, len, 2, &batch_t2, rt2) == RT_OK);
    /* 7 threads: once the short clips stop, the frames of those still
     * running are shared out anew (cpu_run_selected), mid-clip. */
    CHECK(solve_cut(c, NC, first, len, 7, &batch_t7, rt7) == RT_OK);
    size_t off = 0;
    for (int k = 0; k < NC; k++) {
        size_t cnt = (size_t)len[k] * c->cols;
        CHECK_BITS_EQ(batch + off, solo[k], cnt);    /* batched == solo */
        CHECK_BITS_EQ(batch2 + off, batch + off, cnt); /* run == run */
        CHECK_BITS_EQ(batch_t2 + off, batch + off, cnt); /* 1 thread == 2 threads */
        CHECK_BITS_EQ(batch_t7 + off, batch + off, cnt); /* == 7 threads */
        check_clip_eq(&rb[k], &rs[k]);
        check_clip_eq(&rb2[k], &rb[k]);
        check_clip_eq(&rt2[k], &rb[k]);
        check_clip_eq(&rt7[k], &rb[k]);
        printf("clip %d frames: lm %d cg %d %s cost %.6g -> %.6g\n", len[k], rb[k].lm_iters, rb[k].cg_iters,
               solver_termination_str(rb[k].termination), (double)rb[k].initial_cost, (double)rb[k].final_cost);
        off += cnt;
        free(solo[k]);
    }
    /* Reversed batch order: still the same bits per clip. */
    {
        int rf[NC], rl[NC];
        float *rev;
        struct solver_clip_result rr[NC];
        for (int k = 0; k < NC; k++) { rf[k] = first[NC - 1 - k]; rl[k] = len[NC - 1 - k]; }
        CHECK(solve_cut(c, NC, rf, rl, 2, &rev, rr) == RT_OK);
        size_t ro = 0;
        for (int k = 0; k < NC; k++) {
            int o = NC - 1 - k;
            size_t bo = 0;
            for (int j = 0; j < o; j++) bo += (size_t)len[j] * c->cols;
            CHECK_BITS_EQ(rev + ro, batch + bo, (size_t)rl[k] * c->cols);
            check_clip_eq(&rr[k], &rb[o]);
            ro += (size_t)rl[k] * c->cols;
        }
        free(rev);
    }
    free(batch); free(batch2); free(batch_t2); free(batch_t7);
}

static void test_cg_vs_direct(const struct g1_clip *c)
{
    int first = 400, len = 600, off[2];
    float *own;
    struct solver_batch b;
    struct rt_err err;
    g1_clip_batch(c, 1, &first, &len, off, &own, &b);
    b.opt.max_cg_iters = 400;
    b.opt.cg_tol = 1e-6f;
    size_t n = (size_t)len * c->dim;
    float *x = (float *)malloc((size_t)len * c->cols * sizeof(float));
    float *dp = (float *)malloc(n * sizeof(float)), *dd = (float *)malloc(n * sizeof(float));
    memcpy(x, c->truth + (size_t)first * c->cols, (size_t)len * c->cols * sizeof(float));
    for (int t = 0; t < len; t++) /* a linearization away from the solution */
        for (int j = 0; j < 29; j++) {
            float *v = &x[(size_t)t * c->cols + 7 + j];
            *v = rt_clampf(*v + 0.1f * rt_sinf(0.37f * (float)t + (float)j), b.tree->lower[j], b.tree->upper[j]);
        }
    int it = 0;
    struct solver_backend be;
    CHECK(solver_backend_init(&be, "cpu", NULL, &err) == RT_OK);
    CHECK(solver_cpu_debug_steps(&be, &b, x, 1e-3f, dp, dd, &it, &err) == RT_OK);
    solver_backend_free(&be);
    double np = 0, nd = 0, ne = 0;
    for (size_t i = 0; i < n; i++) { np += (double)dp[i] * dp[i]; nd += (double)dd[i] * dd[i]; ne += ((double)dp[i] - dd[i]) * ((double)dp[i] - dd[i]); }
    np = sqrt(np); nd = sqrt(nd); ne = sqrt(ne);
    double rel = fabs(np - nd) / nd;
    printf("cg vs direct (%d frames, %d CG iterations): |d_pcg| %.6g |d_direct| %.6g rel norm diff %.2e rel error %.2e\n",
           len, it, np, nd, rel, ne / nd);
    CHECK(rel <= 1e-4);
    CHECK(ne / nd <= 1e-2);
    free(x); free(dp); free(dd); free(own);
}

static void test_roundtrip(const struct g1_clip *c)
{
    int first = 0, len = c->n_frames, off[2];
    float *own;
    struct solver_batch b;
    struct rt_err err;
    struct solver_clip_result cr;
    g1_clip_batch(c, 1, &first, &len, off, &own, &b);
    float *st = (float *)malloc((size_t)len * c->cols * sizeof(float));
    struct solver_result r = {st, &cr};
    CHECK(g1_cpu_solve(&b, 2, &r, &err) == RT_OK);
    double mp, xp, xr;
    int viol;
    g1_clip_errors(c, &b, st, &mp, &xp, &xr, &viol);
    printf("round trip %d frames: mean %.3f mm, max %.3f mm, max rot %.4f rad, violations %d, lm %d cg %d %s, "
           "cost %.4g -> %.4g -> %.6g, %.3f s\n", len, mp * 1e3, xp * 1e3, xr, viol, cr.lm_iters, cr.cg_iters,
           solver_termination_str(cr.termination), (double)cr.start_cost, (double)cr.initial_cost,
           (double)cr.final_cost, cr.seconds);
    CHECK(mp < 5e-3);
    CHECK(xp < 2e-2);
    CHECK_EQ_INT(viol, 0);
    CHECK_EQ_INT(cr.limit_violations, 0);
    /* the coupled solve settles in a few iterations after the
     * initialization (lm_rule_step's cost tests: 2, where the step test
     * alone took 6) */
    CHECK_EQ_INT(cr.termination, SOLVER_TERM_COST);
    CHECK(cr.lm_iters <= 3);
    free(st);
    free(own);
}

/* lm_rule_step's stops. On a step it rejects: a clip whose model promises
 * no gain above tol_cost, and whose cost did not move by more, has settled
 * (cost); one whose model still promises a gain, or whose cost rose, goes
 * on with more damping; tol_cost 0 turns the test off. On a step it
 * accepts: a gain below tol_cost stops (cost), and so does quadratic
 * convergence -- two steps that matched their model, the second's gain
 * extrapolated one step further below tol_cost -- but not a step off its
 * model, nor a linear convergence. */
static void test_lm_rule(void)
{
    struct solver_options o;
    solver_options_default(&o);
    const float c0 = 0.25f, up = 0.25f * (1.0f + 1e-7f); /* up - c0 ~ 3e-8 < tol_cost c0 */
    float cost = c0, lam = 1e-3f, nu = 2.0f, dp = 0.0f;
    int term = SOLVER_TERM_NONE;
    CHECK_EQ_INT(lm_rule_step(&o, &cost, up, 1e-9f, 1e-8f, 100.0f, &lam, &nu, &dp, &term), 0);
    CHECK_EQ_INT(term, SOLVER_TERM_COST);
    CHECK(cost == c0);
    term = SOLVER_TERM_NONE;
    lam = 1e-3f;
    nu = 2.0f;
    CHECK_EQ_INT(lm_rule_step(&o, &cost, up, 1e-5f, 1e-8f, 100.0f, &lam, &nu, &dp, &term), 0);
    CHECK_EQ_INT(term, SOLVER_TERM_NONE);
    CHECK(lam == 2e-3f && nu == 4.0f);
    CHECK_EQ_INT(lm_rule_step(&o, &cost, 0.2501f, 1e-9f, 1e-8f, 100.0f, &lam, &nu, &dp, &term), 0);
    CHECK_EQ_INT(term, SOLVER_TERM_NONE);
    o.tol_cost = 0.0f;
    CHECK_EQ_INT(lm_rule_step(&o, &cost, c0, 0.0f, 1e-8f, 100.0f, &lam, &nu, &dp, &term), 0);
    CHECK_EQ_INT(term, SOLVER_TERM_NONE);
    solver_options_default(&o);
    CHECK_EQ_INT(lm_rule_step(&o, &cost, 0.25f - 1e-8f, 1e-8f, 1e-8f, 100.0f, &lam, &nu, &dp, &term), 1);
    CHECK_EQ_INT(term, SOLVER_TERM_COST);
    CHECK(cost == 0.25f - 1e-8f);
    /* accepted steps: 6% of the cost matching the model, then 1e-5 of it */
    const float second[3][2] = {{0.94f - 1e-5f, 1e-5f}, /* quadratic: stops */
                                {0.94f - 1e-5f, 2e-5f}, /* rho 0.5, off the model: goes on */
                                {0.91f, 0.03f}};        /* linear: goes on */
    for (int v = 0; v < 3; v++) {
        cost = 1.0f;
        lam = 1e-3f;
        nu = 2.0f;
        dp = 0.0f;
        term = SOLVER_TERM_NONE;
        CHECK_EQ_INT(lm_rule_step(&o, &cost, 0.94f, 0.06f, 1e-2f, 100.0f, &lam, &nu, &dp, &term), 1);
        CHECK_EQ_INT(term, SOLVER_TERM_NONE);
        CHECK(dp > 0.0f);
        CHECK_EQ_INT(lm_rule_step(&o, &cost, second[v][0], second[v][1], 1e-2f, 100.0f, &lam, &nu, &dp, &term), 1);
        CHECK_EQ_INT(term, v == 0 ? SOLVER_TERM_COST : SOLVER_TERM_NONE);
        CHECK(cost == second[v][0]);
    }
}

static void test_validation(const struct g1_clip *c)
{
    int first = 0, len = 4, off[2];
    float *own;
    struct solver_batch b;
    struct rt_err err;
    g1_clip_batch(c, 1, &first, &len, off, &own, &b);
    CHECK(solver_batch_check(&b, &err) == RT_OK);
    b.opt.max_cg_iters = 0;
    CHECK(solver_batch_check(&b, &err) == RT_EINVAL);
    b.opt.max_cg_iters = 1;
    off[1] = 0;
    CHECK(solver_batch_check(&b, &err) == RT_EINVAL);
    off[1] = 4;
    float bad = -1.0f;
    const float *saved = b.w_vel;
    float wv[64];
    for (int i = 0; i < c->dim; i++) wv[i] = 0.1f;
    wv[3] = bad;
    b.w_vel = wv;
    CHECK(solver_batch_check(&b, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "batch.w_vel");
    b.w_vel = saved;
    CHECK_EQ_STR(solver_termination_str(SOLVER_TERM_COST), "cost");
    CHECK_EQ_STR(solver_termination_str(99), "unknown");
    free(own);
}

/* The backend configuration at its limits: threads 0..SOLVER_MAX_THREADS
 * (256 threads on 4 frames: most threads get no frame, same bits as one),
 * the CUDA fields, unknown names, and an empty backend. */
static void test_backend_config(const struct g1_clip *c)
{
    int first = 10, len = 4, off[2];
    float *own, x1[4 * 64], x256[4 * 64];
    struct solver_batch b;
    struct solver_clip_result r1, r256;
    struct solver_result o1 = {x1, &r1}, o256 = {x256, &r256};
    struct solver_backend be = {0};
    struct solver_backend_config cfg;
    struct rt_err err;
    g1_clip_batch(c, 1, &first, &len, off, &own, &b);
    solver_backend_config_default(&cfg);
    CHECK_EQ_INT(cfg.threads, 0);
    CHECK(solver_backend_config_check(&cfg, &err) == RT_OK);
    CHECK(g1_cpu_solve(&b, 1, &o1, &err) == RT_OK);
    CHECK(g1_cpu_solve(&b, SOLVER_MAX_THREADS, &o256, &err) == RT_OK);
    CHECK_BITS_EQ(x256, x1, (size_t)len * c->cols);
    check_clip_eq(&r256, &r1);
    cfg.threads = SOLVER_MAX_THREADS + 1;
    CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.threads");
    CHECK(be.ops == NULL && be.ctx == NULL);
    solver_backend_free(&be); /* a no-op on the empty backend */
    cfg.threads = -1;
    CHECK(solver_backend_init(&be, "auto", &cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.threads");
    cfg.threads = 0; /* one per core */
    CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_OK);
    CHECK_EQ_STR(solver_backend_name(&be), "cpu");
    CHECK(solver_backend_solve(&be, &b, &o256, &err) == RT_OK);
    CHECK_BITS_EQ(x256, x1, (size_t)len * c->cols);
    solver_backend_free(&be);
    solver_backend_free(&be); /* idempotent */
    CHECK_EQ_STR(solver_backend_name(&be), "none");
    CHECK(solver_backend_solve(&be, &b, &o256, &err) == RT_ESTATE);
    cfg.cuda_devices = -1;
    CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.cuda_devices");
    cfg.cuda_devices = 0;
    cfg.cuda_profile = 2;
    CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.cuda_profile");
    cfg.cuda_profile = 0;
    cfg.cpu_profile = 2;
    CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.cpu_profile");
    cfg.cpu_profile = 0;
    cfg.cuda_unrolled_cg = -1;
    CHECK(solver_backend_config_check(&cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.cuda_unrolled_cg");
    cfg.cuda_unrolled_cg = 0;
    cfg.cuda_cg_up = 3;
    CHECK(solver_backend_config_check(&cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.cuda_cg_up");
    cfg.cuda_cg_up = 0;
    cfg.cuda_priority = 2;
    CHECK(solver_backend_config_check(&cfg, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend.cuda_priority");
    CHECK(solver_backend_init(&be, "gpu", NULL, &err) == RT_EINVAL);
    CHECK_EQ_STR(err.where, "backend");
    CHECK(solver_backend_init(&be, NULL, NULL, &err) == RT_OK); /* auto: CUDA or the CPU */
    CHECK(solver_backend_solve(&be, &b, &o256, &err) == RT_OK);
    solver_backend_free(&be);
    CHECK(solver_cpu_debug_poison(&be, 1) == -1); /* not a CPU backend */
    free(own);
}

/* One batch of the reuse test: clips (first[k], len[k]). */
struct reuse_batch {
    int n;
    int first[8], len[8];
};

/* Solves batch `rb` on `be` into a new state (frames * cols) and cr[]. */
static float *solve_on(struct solver_backend *be, const struct g1_clip *c, const struct reuse_batch *rb,
                       struct solver_clip_result *cr)
{
    int off[9];
    float *own;
    struct solver_batch b;
    struct rt_err err;
    g1_clip_batch(c, rb->n, rb->first, rb->len, off, &own, &b);
    float *x = (float *)malloc((size_t)off[rb->n] * c->cols * sizeof(float));
    struct solver_result r = {x, cr};
    enum rt_status st = solver_backend_solve(be, &b, &r, &err);
    CHECK_EQ_INT(st, RT_OK);
    if (st != RT_OK) fprintf(stderr, "solve: %s: %s\n", err.where, err.msg);
    free(own);
    return x;
}

static size_t reuse_frames(const struct reuse_batch *rb)
{
    size_t nf = 0;
    for (int k = 0; k < rb->n; k++) nf += (size_t)rb->len[k];
    return nf;
}

/* One CPU backend context solving batches of different shapes in sequence
 * -- a big one, a small one with more clips and fewer frames, the big one
 * again -- gives the bits of a fresh context per batch, at 1, 2 and 4
 * threads (the context grows its arena for the big batch, lays the small
 * one over it, then reuses it). A poisoned context (its arena filled with
 * NaNs before every solve) going small, big, small, big gives them too, so
 * no solve reads anything an earlier one left behind. */
static void test_reuse(const struct g1_clip *c)
{
    static const struct reuse_batch big = {3, {600, 1700, 2900}, {300, 200, 2}};
    static const struct reuse_batch small = {4, {50, 1200, 2500, 3600}, {1, 3, 5, 7}};
    const struct reuse_batch *seq[3] = {&big, &small, &big};
    struct solver_clip_result ref_big[8], ref_small[8], cr[8];
    float *ref[2];
    struct rt_err err;
    {   /* the references: a fresh one-thread context per batch */
        struct solver_backend fresh;
        struct solver_backend_config one;
        solver_backend_config_default(&one);
        one.threads = 1;
        CHECK(solver_backend_init(&fresh, "cpu", &one, &err) == RT_OK);
        ref[0] = solve_on(&fresh, c, &big, ref_big);
        solver_backend_free(&fresh);
        CHECK(solver_backend_init(&fresh, "cpu", &one, &err) == RT_OK);
        ref[1] = solve_on(&fresh, c, &small, ref_small);
        solver_backend_free(&fresh);
    }
    static const int threads[3] = {1, 2, 4};
    for (int ti = 0; ti < 3; ti++) {
        struct solver_backend be;
        struct solver_backend_config cfg;
        solver_backend_config_default(&cfg);
        cfg.threads = threads[ti];
        CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_OK);
        for (int i = 0; i < 3; i++) {
            int is_big = seq[i] == &big;
            float *x = solve_on(&be, c, seq[i], cr);
            CHECK_BITS_EQ(x, ref[is_big ? 0 : 1], reuse_frames(seq[i]) * c->cols);
            for (int k = 0; k < seq[i]->n; k++) check_clip_eq(&cr[k], is_big ? &ref_big[k] : &ref_small[k]);
            free(x);
        }
        solver_backend_free(&be);
    }
    {
        const struct reuse_batch *pseq[4] = {&small, &big, &small, &big};
        struct solver_backend be;
        struct solver_backend_config cfg;
        solver_backend_config_default(&cfg);
        cfg.threads = 2;
        CHECK(solver_backend_init(&be, "cpu", &cfg, &err) == RT_OK);
        CHECK(solver_cpu_debug_poison(&be, 1) == 0);
        for (int i = 0; i < 4; i++) {
            int is_big = pseq[i] == &big;
            float *x = solve_on(&be, c, pseq[i], cr);
            CHECK_BITS_EQ(x, ref[is_big ? 0 : 1], reuse_frames(pseq[i]) * c->cols);
            for (int k = 0; k < pseq[i]->n; k++) check_clip_eq(&cr[k], is_big ? &ref_big[k] : &ref_small[k]);
            free(x);
        }
        solver_backend_free(&be);
    }
    printf("reuse: %zu-frame and %zu-frame batches on one context == fresh contexts (1, 2, 4 threads; poisoned)\n",
           reuse_frames(&big), reuse_frames(&small));
    free(ref[0]);
    free(ref[1]);
}

int main(void)
{
    struct g1_clip c;
    if (g1_clip_load(&c, test_data_dir(), 0) != 0) TEST_SKIP("G1 robot or reference trajectory unavailable");
    test_lm_rule();
    test_validation(&c);
    test_backend_config(&c);
    test_jacobian(&c);
    test_bits(&c);
    test_reuse(&c);
    test_cg_vs_direct(&c);
    test_roundtrip(&c);
    g1_clip_free(&c);
    return test_report("test_solver");
}
