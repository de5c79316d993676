/* frame.h -- the per-frame math of the trajectory-IK solver, written once
 * for the CPU backend and (next) the CUDA backend.
 *
 * Everything here is RT_HD: `static inline` in C, `static __host__
 * __device__ __forceinline__` under nvcc. Nothing host-only: no malloc, no
 * libm, no printf; every temporary lives on the stack or in caller scratch.
 * Bits: DESIGN.md "The numerical contract" point 3. The loops below have one
 * fixed order that both backends execute unchanged; -ffp-contract=off and
 * nvcc -fmad=false keep the compilers from fusing; sqrtf and division are
 * correctly rounded on both; sin, cos, atan2 and acos are the polynomial
 * versions below (rt_sinf...), never libm's or CUDA's.
 *
 * Conventions (SOLVER.md):
 *   state of a frame  x = (p[3], quat xyzw[4], theta[n_joints])   (solver.h)
 *   tangent of a frame d = (dp[3], dphi[3], dtheta[n_joints]) with a
 *     floating base, else dtheta only; dim = rt_tangent_dim()
 *   retraction        p += dp, R <- Exp(dphi) R (world frame),
 *                     theta <- clamp(theta + dtheta, lower, upper)
 *   residuals         tracking: w_p (x_k - xhat_k), w_o Log(R_k Rhat_k^T);
 *                     rest: w_r (theta - rest); smoothness over neighbours
 *                     through the forward difference dq_t = q_{t+1} (-) q_t
 *                     (root rotation Log(R_{t+1} R_t^T)): velocity w_v dq_t,
 *                     acceleration w_a (dq_t - dq_{t-1}); their Jacobians are
 *                     +-I (Gauss-Newton), so they couple frames only through
 *                     scaled identities (the stencil, frame_stencil_apply).
 *   cost              0.5 * sum r^2.
 *
 * Block storage: a frame's block B_t = J_t^T J_t (tracking + rest rows only)
 * is a full dim x dim row-major float array, symmetric (assembled in the
 * upper triangle, then mirrored), so that the block product can run as
 * column axpys whose every output still sums in index order. A Cholesky
 * factor is stored the same way: F[i][j] = F[j][i] = L[i][j] (j <= i), so
 * both triangular solves read contiguous rows. */
#ifndef RT_SOLVER_FRAME_H
#define RT_SOLVER_FRAME_H

#include <math.h> /* sqrtf only: correctly rounded on host and device */

#include "solver.h"
#include "reduce.h"
#include "lm_rule.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FRAME_MAX_DIM 64     /* tangent coordinates per frame */
#define FRAME_MAX_LINKS 256  /* links of a tree */
#define FRAME_LINK_STRIDE 15 /* per link scratch: pos[3], rot[9], world axis[3] */
#define FRAME_PAIR_CAPS 128  /* capsules whose world segments frame_eval keeps on its stack */
#define FRAME_DMIN 1e-6f     /* Marquardt scaling floor: D = max(diag H, FRAME_DMIN) */

#ifdef __cplusplus
#define FRAME_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define FRAME_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
FRAME_STATIC_ASSERT(FRAME_MAX_DIM <= 64, "frozen masks are 64-bit");
FRAME_STATIC_ASSERT(sizeof(float) == 4 && sizeof(unsigned long long) == 8, "IEEE binary32 floats");
/* The tree and the batch travel to the device as structs of pointers: the
 * host and device compilers must agree on their layout. */
FRAME_STATIC_ASSERT(sizeof(struct rt_tree) == 4 * sizeof(int) + 10 * sizeof(void *) ||
                        sizeof(struct rt_tree) == 3 * sizeof(int) + 10 * sizeof(void *),
                    "struct rt_tree layout changed: update the device copy");

/* ------------------------------------------------------------------ */
/* Deterministic elementary functions (cephes-style minimax polynomials with
 * Cody-Waite range reduction). Accurate to about 1-2 ulp for |x| < 8192;
 * beyond that the reduction loses bits but stays deterministic. */

#define RT_PI_F 3.14159265358979f
#define RT_PI_2_F 1.57079632679490f
#define RT_PI_4_F 0.785398163397448f

RT_HD void rt_sincosf(float x, float *s_out, float *c_out)
{
    float ax = x < 0.0f ? -x : x;
    float ssign = x < 0.0f ? -1.0f : 1.0f, csign = 1.0f;
    if (!(ax <= 1.0e7f)) { /* huge, inf or nan: no meaningful result */
        float nan = (x - x) * 0.0f;
        *s_out = ax > 1.0e7f && ax - ax == 0.0f ? 0.0f : nan;
        *c_out = ax > 1.0e7f && ax - ax == 0.0f ? 1.0f : nan;
        return;
    }
    int j = (int)(ax * 1.27323954473516f); /* 4/pi */
    if (j & 1) j += 1;
    float y = (float)j;
    j &= 7;
    if (j > 3) { ssign = -ssign; csign = -csign; j -= 4; }
    if (j > 1) csign = -csign;
    float r = ((ax - y * 0.78515625f) - y * 2.4187564849853515625e-4f) - y * 3.77489497744594108e-8f;
    float z = r * r;
    float ps = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * r + r;
    float pc = ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z;
    pc = pc - 0.5f * z;
    pc = pc + 1.0f;
    if (j == 1 || j == 2) { *s_out = ssign * pc; *c_out = csign * ps; }
    else { *s_out = ssign * ps; *c_out = csign * pc; }
}

RT_HD float rt_sinf(float x) { float s, c; rt_sincosf(x, &s, &c); return s; }
RT_HD float rt_cosf(float x) { float s, c; rt_sincosf(x, &s, &c); return c; }

/* atan for x >= 0 (cephes atanf reduction). */
RT_HD float rt_atan_pos(float x)
{
    float y0 = 0.0f;
    if (x > 2.414213562373095f) { y0 = RT_PI_2_F; x = -1.0f / x; }
    else if (x > 0.4142135623730950f) { y0 = RT_PI_4_F; x = (x - 1.0f) / (x + 1.0f); }
    float z = x * x;
    float p = (((8.05374449538e-2f * z - 1.38776856032e-1f) * z + 1.99777106478e-1f) * z -
               3.33329491539e-1f) * z * x + x;
    return y0 + p;
}

RT_HD float rt_atanf(float x) { return x < 0.0f ? -rt_atan_pos(-x) : rt_atan_pos(x); }

RT_HD float rt_atan2f(float y, float x)
{
    float ay = y < 0.0f ? -y : y, ax = x < 0.0f ? -x : x, a;
    if (ax == 0.0f && ay == 0.0f) a = 0.0f;
    else if (ay <= ax) a = rt_atan_pos(ay / ax);
    else a = RT_PI_2_F - rt_atan_pos(ax / ay);
    if (x < 0.0f) a = RT_PI_F - a;
    return y < 0.0f ? -a : a;
}

RT_HD float rt_acosf(float x)
{
    if (x > 1.0f) x = 1.0f;
    if (x < -1.0f) x = -1.0f;
    return rt_atan2f(sqrtf((1.0f - x) * (1.0f + x)), x);
}

RT_HD float rt_clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* ------------------------------------------------------------------ */
/* Small vectors, rotations and quaternions (x, y, z, w). */

RT_HD float v3_dot(const float *a, const float *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

RT_HD void v3_cross(const float *a, const float *b, float *o)
{
    float x = a[1] * b[2] - a[2] * b[1];
    float y = a[2] * b[0] - a[0] * b[2];
    float z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}

/* o = A * v, A row-major 3x3. */
RT_HD void m3_mulv(const float *A, const float *v, float *o)
{
    float x = A[0] * v[0] + A[1] * v[1] + A[2] * v[2];
    float y = A[3] * v[0] + A[4] * v[1] + A[5] * v[2];
    float z = A[6] * v[0] + A[7] * v[1] + A[8] * v[2];
    o[0] = x; o[1] = y; o[2] = z;
}

/* O = A * B (O must not alias A or B). */
RT_HD void m3_mul(const float *A, const float *B, float *O)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            O[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* O = A * B^T. */
RT_HD void m3_mul_bt(const float *A, const float *B, float *O)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            O[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}

/* Rotation by angle (sin s, cos c) about unit axis a (Rodrigues). */
RT_HD void m3_axis_angle(const float *a, float s, float c, float *R)
{
    float t = 1.0f - c;
    float x = a[0], y = a[1], z = a[2];
    R[0] = t * x * x + c;     R[1] = t * x * y - s * z; R[2] = t * x * z + s * y;
    R[3] = t * x * y + s * z; R[4] = t * y * y + c;     R[5] = t * y * z - s * x;
    R[6] = t * x * z - s * y; R[7] = t * y * z + s * x; R[8] = t * z * z + c;
}

RT_HD void q_normalize(float *q)
{
    float n = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (n > 0.0f) {
        float inv = 1.0f / n;
        q[0] = q[0] * inv; q[1] = q[1] * inv; q[2] = q[2] * inv; q[3] = q[3] * inv;
    } else {
        q[0] = 0.0f; q[1] = 0.0f; q[2] = 0.0f; q[3] = 1.0f;
    }
}

/* o = a (x) b (Hamilton product); o may alias a or b. */
RT_HD void q_mul(const float *a, const float *b, float *o)
{
    float w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    float x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    float y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    float z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    o[0] = x; o[1] = y; o[2] = z; o[3] = w;
}

/* Rotation matrix of a unit quaternion. */
RT_HD void q_to_m3(const float *q, float *R)
{
    float x = q[0], y = q[1], z = q[2], w = q[3];
    R[0] = 1.0f - 2.0f * (y * y + z * z); R[1] = 2.0f * (x * y - z * w); R[2] = 2.0f * (x * z + y * w);
    R[3] = 2.0f * (x * y + z * w); R[4] = 1.0f - 2.0f * (x * x + z * z); R[5] = 2.0f * (y * z - x * w);
    R[6] = 2.0f * (x * z - y * w); R[7] = 2.0f * (y * z + x * w); R[8] = 1.0f - 2.0f * (x * x + y * y);
}

/* Unit quaternion of a rotation matrix (Shepperd's branch on the largest
 * diagonal term, so no branch divides by a small number). */
RT_HD void q_from_m3(const float *m, float *q)
{
    float tr = m[0] + m[4] + m[8], s;
    if (tr > 0.0f) {
        s = sqrtf(tr + 1.0f) * 2.0f;
        q[3] = 0.25f * s; q[0] = (m[7] - m[5]) / s; q[1] = (m[2] - m[6]) / s; q[2] = (m[3] - m[1]) / s;
    } else if (m[0] > m[4] && m[0] > m[8]) {
        s = sqrtf(1.0f + m[0] - m[4] - m[8]) * 2.0f;
        q[3] = (m[7] - m[5]) / s; q[0] = 0.25f * s; q[1] = (m[1] + m[3]) / s; q[2] = (m[2] + m[6]) / s;
    } else if (m[4] > m[8]) {
        s = sqrtf(1.0f + m[4] - m[0] - m[8]) * 2.0f;
        q[3] = (m[2] - m[6]) / s; q[0] = (m[1] + m[3]) / s; q[1] = 0.25f * s; q[2] = (m[5] + m[7]) / s;
    } else {
        s = sqrtf(1.0f + m[8] - m[0] - m[4]) * 2.0f;
        q[3] = (m[3] - m[1]) / s; q[0] = (m[2] + m[6]) / s; q[1] = (m[5] + m[7]) / s; q[2] = 0.25f * s;
    }
}

/* Log of a unit quaternion as a rotation vector (angle in [0, pi]). */
RT_HD void q_log(const float *qin, float *phi)
{
    float x = qin[0], y = qin[1], z = qin[2], w = qin[3];
    if (w < 0.0f) { x = -x; y = -y; z = -z; w = -w; }
    float s = sqrtf(x * x + y * y + z * z), k;
    if (s < 1e-3f) k = (2.0f / w) * (1.0f - (s * s) / (3.0f * w * w));
    else k = 2.0f * rt_atan2f(s, w) / s;
    phi[0] = k * x; phi[1] = k * y; phi[2] = k * z;
}

/* Exp of a rotation vector as a unit quaternion. */
RT_HD void q_exp(const float *phi, float *q)
{
    float t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2], k, w;
    if (t2 < 1e-6f) {
        k = 0.5f - t2 / 48.0f;
        w = 1.0f - t2 / 8.0f + (t2 * t2) / 384.0f;
    } else {
        float t = sqrtf(t2), s, c;
        rt_sincosf(0.5f * t, &s, &c);
        k = s / t;
        w = c;
    }
    q[0] = k * phi[0]; q[1] = k * phi[1]; q[2] = k * phi[2]; q[3] = w;
}

/* Log of SO(3): rotation vector of R (through its quaternion). */
RT_HD void m3_log(const float *R, float *phi)
{
    float q[4];
    q_from_m3(R, q);
    q_log(q, phi);
}

/* Exp of SO(3) as a matrix. */
RT_HD void m3_exp(const float *phi, float *R)
{
    float q[4];
    q_exp(phi, q);
    q_to_m3(q, R);
}

/* ------------------------------------------------------------------ */
/* Forward kinematics of link i > 0 of one frame, its parent's entry of `lk`
 * already filled: `lk` holds FRAME_LINK_STRIDE floats per link: world
 * position, world rotation (row-major) and the world joint axis (zero for
 * fixed joints). Link i = T_parent * origin_i * motion_i (solver.h). A link
 * reads only its parent's entry and writes only its own, so links of one
 * depth may run in any order or in parallel with the same bits (the CUDA
 * backend runs them a tree level at a time). */
RT_HD void frame_fk_link(const struct rt_tree *tr, const float *x, float *lk, int i)
{
    const float *th = x + RT_ROOT_COLS;
    const float *P = lk + (size_t)tr->parent[i] * FRAME_LINK_STRIDE;
    float *L = lk + (size_t)i * FRAME_LINK_STRIDE;
    float Rj[9], o[3];
    m3_mul(P + 3, tr->origin_rot + 9 * i, Rj);
    m3_mulv(P + 3, tr->origin_pos + 3 * i, o);
    o[0] = P[0] + o[0]; o[1] = P[1] + o[1]; o[2] = P[2] + o[2];
    int type = tr->joint_type[i], ji = tr->joint_index[i];
    if (type == RT_JOINT_FIXED || ji < 0) {
        for (int k = 0; k < 9; k++) L[3 + k] = Rj[k];
        L[0] = o[0]; L[1] = o[1]; L[2] = o[2];
        L[12] = 0.0f; L[13] = 0.0f; L[14] = 0.0f;
        return;
    }
    const float *ax = tr->axis + 3 * i;
    float v = tr->joint_mult[i] * th[ji] + tr->joint_offset[i];
    m3_mulv(Rj, ax, L + 12);
    if (type == RT_JOINT_REVOLUTE) {
        float s, c, Rm[9];
        rt_sincosf(v, &s, &c);
        m3_axis_angle(ax, s, c, Rm);
        m3_mul(Rj, Rm, L + 3);
        L[0] = o[0]; L[1] = o[1]; L[2] = o[2];
    } else { /* prismatic */
        for (int k = 0; k < 9; k++) L[3 + k] = Rj[k];
        L[0] = o[0] + v * L[12]; L[1] = o[1] + v * L[13]; L[2] = o[2] + v * L[14];
    }
}

/* The root entry of `lk` (link 0): the base pose, quaternion normalized
 * here, or the identity for a fixed base. */
RT_HD void frame_fk_root(const struct rt_tree *tr, const float *x, float *lk)
{
    if (tr->floating_base) {
        float q[4] = {x[3], x[4], x[5], x[6]};
        q_normalize(q);
        lk[0] = x[0]; lk[1] = x[1]; lk[2] = x[2];
        q_to_m3(q, lk + 3);
    } else {
        for (int i = 0; i < 12; i++) lk[i] = (i >= 3 && (i - 3) % 4 == 0) ? 1.0f : 0.0f;
    }
    lk[12] = 0.0f; lk[13] = 0.0f; lk[14] = 0.0f;
}

/* Forward kinematics of one frame: the root, then every link in index
 * order (parents first, solver.h). */
RT_HD void frame_fk(const struct rt_tree *tr, const float *x, float *lk)
{
    frame_fk_root(tr, x, lk);
    for (int i = 1; i < tr->n_links; i++) frame_fk_link(tr, x, lk, i);
}

/* ------------------------------------------------------------------ */
/* Smoothness: forward differences and the stencil. */

/* dq = x_b (-) x_a in tangent coordinates: dp, Log(R_b R_a^T), dtheta. */
RT_HD void frame_diff(const struct rt_tree *tr, const float *xa, const float *xb, float *dq)
{
    int ro = 0;
    if (tr->floating_base) {
        float qa[4] = {-xa[3], -xa[4], -xa[5], xa[6]}, qr[4];
        dq[0] = xb[0] - xa[0]; dq[1] = xb[1] - xa[1]; dq[2] = xb[2] - xa[2];
        q_mul(xb + 3, qa, qr);
        q_log(qr, dq + 3);
        ro = 6;
    }
    for (int j = 0; j < tr->n_joints; j++)
        dq[ro + j] = xb[RT_ROOT_COLS + j] - xa[RT_ROOT_COLS + j];
}

RT_HD float frame_w(const float *w, int c) { return w ? w[c] * w[c] : 0.0f; }

/* Diagonal of the smoothness operator at frame t of T, coordinate c. */
RT_HD float frame_smooth_diag(const struct solver_batch *b, int c, int t, int T)
{
    float wv = frame_w(b->w_vel, c), wa = frame_w(b->w_acc, c);
    float dv = (float)((t >= 1) + (t <= T - 2));
    float da = (float)((t - 1 >= 1 && t - 1 <= T - 2) * 1 + (t >= 1 && t <= T - 2) * 4 +
                       (t + 1 >= 1 && t + 1 <= T - 2) * 1);
    return wv * dv + wa * da;
}

/* Second difference at s from forward differences v (stride n, coord c):
 * a(s) = v_s - v_{s-1}, defined for 1 <= s <= T-2. */
RT_HD float frame_acc_at(const float *v, int n, int c, int s) { return v[(size_t)s * n + c] - v[(size_t)(s - 1) * n + c]; }

/* Smoothness adjoint at frame t, coordinate c, applied to the forward
 * differences v (T-1 rows of n, clip-local):
 *   w_v^2 (v_{t-1} - v_t) + w_a^2 (a_{t-1} - 2 a_t + a_{t+1}),
 * terms present only where defined. This is D^T (D q) for the gradient
 * (v = dq) and, with v = differences of a direction, the stencil S x. */
RT_HD float frame_smooth_adj(const struct solver_batch *b, const float *v, int n, int c, int t, int T)
{
    float wv = frame_w(b->w_vel, c), wa = frame_w(b->w_acc, c);
    float gv = 0.0f, ga = 0.0f;
    if (t >= 1) gv = gv + v[(size_t)(t - 1) * n + c];
    if (t <= T - 2) gv = gv - v[(size_t)t * n + c];
    if (t - 1 >= 1 && t - 1 <= T - 2) ga = ga + frame_acc_at(v, n, c, t - 1);
    if (t >= 1 && t <= T - 2) ga = ga - 2.0f * frame_acc_at(v, n, c, t);
    if (t + 1 >= 1 && t + 1 <= T - 2) ga = ga + frame_acc_at(v, n, c, t + 1);
    return wv * gv + wa * ga;
}

/* Stencil S x at frame t, coordinate c, for a direction x of the clip
 * (T rows of n, clip-local): the same adjoint with v_s = x_{s+1} - x_s
 * computed on the fly, so frames never exchange anything but x. */
RT_HD float frame_stencil_at(const struct solver_batch *b, const float *x, int n, int c, int t, int T)
{
    float wv = frame_w(b->w_vel, c), wa = frame_w(b->w_acc, c);
    float v[4]; /* v_{t-2}, v_{t-1}, v_t, v_{t+1} */
    for (int k = 0; k < 4; k++) {
        int s = t - 2 + k;
        v[k] = (s >= 0 && s <= T - 2) ? x[(size_t)(s + 1) * n + c] - x[(size_t)s * n + c] : 0.0f;
    }
    float gv = 0.0f, ga = 0.0f;
    if (t >= 1) gv = gv + v[1];
    if (t <= T - 2) gv = gv - v[2];
    if (t - 1 >= 1 && t - 1 <= T - 2) ga = ga + (v[1] - v[0]);
    if (t >= 1 && t <= T - 2) ga = ga - 2.0f * (v[2] - v[1]);
    if (t + 1 >= 1 && t + 1 <= T - 2) ga = ga + (v[3] - v[2]);
    return wv * gv + wa * ga;
}

/* Velocity limits (solver.h): the excess of a forward difference v of
 * coordinate c beyond its limit (0 inside it, or without a limit). */
RT_HD float frame_vlim_excess(const struct solver_batch *b, float v, int c)
{
    float L = b->v_limit[c];
    if (!(L > 0.0f)) return 0.0f;
    return v > L ? v - L : (v < -L ? v + L : 0.0f);
}

/* The coordinates whose forward difference dq_t is beyond its limit (bit c),
 * at frame t of T: the active set the linearization fixes for the PCG. */
RT_HD unsigned long long frame_vlim_mask(const struct solver_batch *b, const float *dq, int n, int t, int T)
{
    unsigned long long m = 0;
    if (t > T - 2) return 0;
    for (int c = 0; c < n; c++)
        if (frame_vlim_excess(b, dq[(size_t)t * n + c], c) != 0.0f) m |= 1ull << c;
    return m;
}

/* Gradient of the velocity-limit residuals at frame t, coordinate c:
 * w^2 (e_{t-1} - e_t), e the excess of the forward differences dq. */
RT_HD float frame_vlim_adj(const struct solver_batch *b, const float *dq, int n, int c, int t, int T)
{
    float w2 = b->w_vlim * b->w_vlim, gv = 0.0f;
    if (t >= 1) gv = gv + frame_vlim_excess(b, dq[(size_t)(t - 1) * n + c], c);
    if (t <= T - 2) gv = gv - frame_vlim_excess(b, dq[(size_t)t * n + c], c);
    return w2 * gv;
}

/* Their Gauss-Newton product with a clip direction x at frame t (act: the
 * clip's masks, frame_vlim_mask at the linearization point):
 * w^2 (a_{t-1} (x_t - x_{t-1}) - a_t (x_{t+1} - x_t)). */
RT_HD float frame_vlim_stencil(const struct solver_batch *b, const unsigned long long *act, const float *x, int n,
                               int c, int t, int T)
{
    float w2 = b->w_vlim * b->w_vlim, gv = 0.0f;
    if (t >= 1 && ((act[t - 1] >> c) & 1ull)) gv = gv + (x[(size_t)t * n + c] - x[(size_t)(t - 1) * n + c]);
    if (t <= T - 2 && ((act[t] >> c) & 1ull)) gv = gv - (x[(size_t)(t + 1) * n + c] - x[(size_t)t * n + c]);
    return w2 * gv;
}

/* And its diagonal: w^2 (a_{t-1} + a_t). */
RT_HD float frame_vlim_diag(const struct solver_batch *b, const unsigned long long *act, int c, int t, int T)
{
    float w2 = b->w_vlim * b->w_vlim;
    float d = (float)((t >= 1 && ((act[t - 1] >> c) & 1ull)) + (t <= T - 2 && ((act[t] >> c) & 1ull)));
    return w2 * d;
}

/* Jacobian column c < 6 of the floating base for a target on link entry L
 * (position rows jp, orientation rows jo): translation e_c, rotation
 * e_c x (x_L - p). */
RT_HD void frame_jac_root(const float *lk, const float *L, int c, float *jp, float *jo)
{
    float r[3] = {L[0] - lk[0], L[1] - lk[1], L[2] - lk[2]};
    if (c < 3) {
        jp[0] = c == 0 ? 1.0f : 0.0f; jp[1] = c == 1 ? 1.0f : 0.0f; jp[2] = c == 2 ? 1.0f : 0.0f;
        jo[0] = 0.0f; jo[1] = 0.0f; jo[2] = 0.0f;
    } else if (c == 3) {
        jp[0] = 0.0f; jp[1] = -r[2]; jp[2] = r[1];
        jo[0] = 1.0f; jo[1] = 0.0f; jo[2] = 0.0f;
    } else if (c == 4) {
        jp[0] = r[2]; jp[1] = 0.0f; jp[2] = -r[0];
        jo[0] = 0.0f; jo[1] = 1.0f; jo[2] = 0.0f;
    } else {
        jp[0] = -r[1]; jp[1] = r[0]; jp[2] = 0.0f;
        jo[0] = 0.0f; jo[1] = 0.0f; jo[2] = 1.0f;
    }
}

/* Contribution of the (non-fixed) joint of link i to the Jacobian columns of
 * a target on link entry L: revolute m a x (x_L - o), m a; prismatic m a, 0. */
RT_HD void frame_jac_joint(const struct rt_tree *tr, const float *lk, const float *L, int i, float *cp, float *co)
{
    const float *A = lk + (size_t)i * FRAME_LINK_STRIDE;
    float m = tr->joint_mult[i];
    if (tr->joint_type[i] == RT_JOINT_REVOLUTE) {
        float r[3] = {L[0] - A[0], L[1] - A[1], L[2] - A[2]};
        v3_cross(A + 12, r, cp);
        cp[0] = m * cp[0]; cp[1] = m * cp[1]; cp[2] = m * cp[2];
        co[0] = m * A[12]; co[1] = m * A[13]; co[2] = m * A[14];
    } else {
        cp[0] = m * A[12]; cp[1] = m * A[13]; cp[2] = m * A[14];
        co[0] = 0.0f; co[1] = 0.0f; co[2] = 0.0f;
    }
}

/* ------------------------------------------------------------------ */
/* Self-collision: capsule pairs (solver.h, docs/solver.md). */

/* World end points of capsule c from the link records. */
RT_HD void frame_capsule_world(const struct solver_batch *b, const float *lk, int c, float *p0, float *p1)
{
    const float *sg = b->capsule_seg + 7 * c;
    const float *L = lk + (size_t)b->capsule_link[c] * FRAME_LINK_STRIDE;
    float o[3];
    m3_mulv(L + 3, sg, o);
    p0[0] = L[0] + o[0]; p0[1] = L[1] + o[1]; p0[2] = L[2] + o[2];
    m3_mulv(L + 3, sg + 3, o);
    p1[0] = L[0] + o[0]; p1[1] = L[1] + o[1]; p1[2] = L[2] + o[2];
}

/* Bounding sphere of capsule c whose world segment is [a0, a1]: centre
 * s[0..2], radius s[3] (half the segment plus the capsule's radius). */
RT_HD void frame_capsule_sphere(const struct solver_batch *b, int c, const float *a0, const float *a1, float *s)
{
    float h[3] = {a1[0] - a0[0], a1[1] - a0[1], a1[2] - a0[2]};
    s[0] = 0.5f * (a0[0] + a1[0]); s[1] = 0.5f * (a0[1] + a1[1]); s[2] = 0.5f * (a0[2] + a1[2]);
    s[3] = 0.5f * sqrtf(v3_dot(h, h)) + b->capsule_seg[7 * c + 6];
}

/* Whether two capsules with bounding spheres sa, sb (frame_capsule_sphere)
 * lie margin + 1 mm apart: then their distance cannot be below the margin
 * and the pair is skipped. */
RT_HD int frame_spheres_apart(const float *sa, const float *sb, float margin)
{
    float reach = (sa[3] + sb[3]) + (margin + 1e-3f);
    float v[3] = {sa[0] - sb[0], sa[1] - sb[1], sa[2] - sb[2]};
    return reach > 0.0f && v3_dot(v, v) >= reach * reach;
}

/* Closest points pa on segment [p0, p1] and pb on [q0, q1] (the clamped
 * parametric solution; Ericson, Real-Time Collision Detection, 5.1.9). */
RT_HD void frame_seg_closest(const float *p0, const float *p1, const float *q0, const float *q1, float *pa,
                             float *pb)
{
    float d1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    float d2[3] = {q1[0] - q0[0], q1[1] - q0[1], q1[2] - q0[2]};
    float r[3] = {p0[0] - q0[0], p0[1] - q0[1], p0[2] - q0[2]};
    float a = v3_dot(d1, d1), e = v3_dot(d2, d2), f = v3_dot(d2, r);
    float s = 0.0f, t = 0.0f;
    const float eps = 1e-12f;
    if (a <= eps && e > eps) {
        t = rt_clampf(f / e, 0.0f, 1.0f);
    } else if (a > eps) {
        float c = v3_dot(d1, r);
        if (e <= eps) {
            s = rt_clampf(-c / a, 0.0f, 1.0f);
        } else {
            float bb = v3_dot(d1, d2), den = a * e - bb * bb;
            s = den > 0.0f ? rt_clampf((bb * f - c * e) / den, 0.0f, 1.0f) : 0.0f;
            t = (bb * s + f) / e;
            if (t < 0.0f) { t = 0.0f; s = rt_clampf(-c / a, 0.0f, 1.0f); }
            else if (t > 1.0f) { t = 1.0f; s = rt_clampf((bb - c) / a, 0.0f, 1.0f); }
        }
    }
    pa[0] = p0[0] + d1[0] * s; pa[1] = p0[1] + d1[1] * s; pa[2] = p0[2] + d1[2] * s;
    pb[0] = q0[0] + d2[0] * t; pb[1] = q0[1] + d2[1] * t; pb[2] = q0[2] + d2[2] * t;
}

/* Signed distance of capsule pair p whose segments in the world are
 * [a0, a1] and [b0, b1]: |pa - pb| minus both radii, with pa, pb the
 * closest points of the two segments and nrm the unit vector from pb to pa
 * (+z where they meet: a crossing, whose distance still has the right
 * value). */
RT_HD float frame_pair_eval_seg(const struct solver_batch *b, int p, const float *a0, const float *a1,
                                const float *b0, const float *b1, float *pa, float *pb, float *nrm)
{
    int ca = b->pair[2 * p], cb = b->pair[2 * p + 1];
    frame_seg_closest(a0, a1, b0, b1, pa, pb);
    float v[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]};
    float len = sqrtf(v3_dot(v, v));
    if (len > 1e-9f) {
        float inv = 1.0f / len;
        nrm[0] = v[0] * inv; nrm[1] = v[1] * inv; nrm[2] = v[2] * inv;
    } else {
        nrm[0] = 0.0f; nrm[1] = 0.0f; nrm[2] = 1.0f;
    }
    return len - (b->capsule_seg[7 * ca + 6] + b->capsule_seg[7 * cb + 6]);
}

/* The same at the link records (the segments by frame_capsule_world). */
RT_HD float frame_pair_eval(const struct solver_batch *b, const float *lk, int p, float *pa, float *pb, float *nrm)
{
    int ca = b->pair[2 * p], cb = b->pair[2 * p + 1];
    float a0[3], a1[3], b0[3], b1[3];
    frame_capsule_world(b, lk, ca, a0, a1);
    frame_capsule_world(b, lk, cb, b0, b1);
    return frame_pair_eval_seg(b, p, a0, a1, b0, b1, pa, pb, nrm);
}

/* Adds v at column col of a compact Jacobian row (cols[0..nc), jr): a new
 * column is appended, a column already there (a mimic joint's leader)
 * gets v added. Returns the new column count. */
RT_HD int frame_row_put(int *cols, float *jr, int nc, int col, float v)
{
    int e = 0;
    while (e < nc && cols[e] != col) e++;
    if (e == nc) {
        cols[nc] = col;
        jr[nc] = v;
        return nc + 1;
    }
    jr[e] = jr[e] + v;
    return nc;
}

/* Height above the ground (z = 0) of capsule c's lowest point: the lower
 * end of its segment (the first on a tie) minus its radius; P gets that
 * end. */
RT_HD float frame_ground_eval(const struct solver_batch *b, const float *lk, int c, float *P)
{
    float p0[3], p1[3];
    frame_capsule_world(b, lk, c, p0, p1);
    const float *lo = p1[2] < p0[2] ? p1 : p0;
    P[0] = lo[0]; P[1] = lo[1]; P[2] = lo[2];
    return lo[2] - b->capsule_seg[7 * c + 6];
}

/* The Jacobian row of that height: the z row of point P's Jacobian on
 * capsule c's link, root columns (0..5 with a floating base) then the
 * chain from the link up, compact in walk order as a target's, a mimic
 * joint adding into its leader's; returns the number of columns. */
RT_HD int frame_ground_jac(const struct solver_batch *b, const float *lk, int c, const float *P, int *cols,
                           float *jr)
{
    const struct rt_tree *tr = b->tree;
    const int ro = tr->floating_base ? 6 : 0;
    int nc = 0;
    if (tr->floating_base)
        for (int k = 0; k < 6; k++) {
            float jp[3], jo[3];
            frame_jac_root(lk, P, k, jp, jo);
            cols[nc] = k;
            jr[nc] = jp[2];
            nc++;
        }
    for (int i = b->capsule_link[c]; i > 0; i = tr->parent[i]) {
        int ji = tr->joint_index[i];
        if (ji < 0 || tr->joint_type[i] == RT_JOINT_FIXED) continue;
        float cp[3], co[3];
        frame_jac_joint(tr, lk, P, i, cp, co);
        nc = frame_row_put(cols, jr, nc, ro + ji, cp[2]);
    }
    return nc;
}

/* A hinge's row added to the gradient and the block (upper triangle):
 * g[cols] -= ge jr, B[cols_a, cols_c] += w2 jr_a jr_c (cols_c >= cols_a),
 * a then c ascending. The self-collision pairs and the ground use it. */
RT_HD void frame_add_row(float *B, float *g, int n, const int *cols, const float *jr, int nc, float ge, float w2)
{
    for (int a = 0; a < nc; a++) {
        g[cols[a]] = g[cols[a]] - ge * jr[a];
        for (int c2 = 0; c2 < nc; c2++) {
            if (cols[c2] < cols[a]) continue;
            float *h = B + (size_t)cols[a] * n + cols[c2];
            *h = *h + w2 * (jr[a] * jr[c2]);
        }
    }
}

/* Is `link` a foot planted in global frame f (solver_batch.planted)? */
RT_HD int frame_pair_planted(const struct solver_batch *b, int f, int link)
{
    if (!b->planted) return 0;
    for (int s = 0; s < 2; s++)
        if (link == b->foot_link[s] && b->planted[2 * (size_t)f + s]) return 1;
    return 0;
}

/* The Jacobian row of pair p's distance in global frame f: nrm . (d pa/dq
 * - d pb/dq), the closest points held fixed to their links. Only the joints
 * below the two links' common ancestor have a column: the base and the
 * shared joints move both points alike. A side whose link is a foot
 * planted in frame f, the other side's not, has none: the other link
 * moves around it (docs/solver.md "Self-collision"). Columns compact in
 * walk order (capsule a's link to the ancestor, then b's), a mimic joint
 * adding into its leader's; returns their number. */
RT_HD int frame_pair_jac(const struct solver_batch *b, int f, const float *lk, int p, const float *pa, const float *pb,
                         const float *nrm, int *cols, float *jr)
{
    const struct rt_tree *tr = b->tree;
    const int ro = tr->floating_base ? 6 : 0;
    const int la = b->capsule_link[b->pair[2 * p]], lb = b->capsule_link[b->pair[2 * p + 1]];
    const int fa = frame_pair_planted(b, f, la), fb = frame_pair_planted(b, f, lb);
    int nc = 0;
    for (int side = 0; side < 2; side++) {
        if (fa != fb && (side ? fb : fa)) continue;
        const int other = side ? la : lb;
        const float *P = side ? pb : pa;
        for (int i = side ? lb : la; i > 0; i = tr->parent[i]) {
            int shared = 0;
            for (int k = other; k >= 0 && !shared; k = tr->parent[k]) shared = k == i;
            if (shared) break;
            int ji = tr->joint_index[i];
            if (ji < 0 || tr->joint_type[i] == RT_JOINT_FIXED) continue;
            float cp[3], co[3];
            frame_jac_joint(tr, lk, P, i, cp, co);
            float v = v3_dot(nrm, cp);
            if (side) v = -v;
            nc = frame_row_put(cols, jr, nc, ro + ji, v);
        }
    }
    return nc;
}

/* ------------------------------------------------------------------ */
/* Residuals, Jacobian rows, block and gradient of one frame. */

/* Residuals of target slot ti (frame f, target k: ti = f n_targets + k)
 * on link record L: ep = x_L - p_target when hp, eo = log(R_L R_target^T)
 * (the target quaternion normalized first) when ho; zeros otherwise. One
 * definition for frame_eval and the warp executor (warp_eval). */
RT_HD void frame_target_residual(const struct solver_batch *b, size_t ti, const float *L, int hp, int ho, float *ep,
                                 float *eo)
{
    ep[0] = ep[1] = ep[2] = 0.0f;
    eo[0] = eo[1] = eo[2] = 0.0f;
    if (hp) {
        const float *tp = b->target_pos + 3 * ti;
        ep[0] = L[0] - tp[0]; ep[1] = L[1] - tp[1]; ep[2] = L[2] - tp[2];
    }
    if (ho) {
        float qt[4] = {b->target_rot[4 * ti], b->target_rot[4 * ti + 1], b->target_rot[4 * ti + 2],
                       b->target_rot[4 * ti + 3]};
        float Rt[9], M[9];
        q_normalize(qt);
        q_to_m3(qt, Rt);
        m3_mul_bt(L + 3, Rt, M);
        m3_log(M, eo);
    }
}

/* Evaluates frame f (global index; clip-local t of T) at state x.
 * Returns the frame's partial cost
 *     0.5 * ((track + vel) + acc)
 * where track sums, in this order, w_p^2 |e_p|^2 and w_o^2 |e_o|^2 per target
 * k = 0..K-1 and then w_r^2 (theta_j - rest_j)^2 per joint; vel is
 * sum_c w_v^2 dq_t^2 (t <= T-2); acc is sum_c w_a^2 (dq_t - dq_{t-1})^2
 * (1 <= t <= T-2). dq: the clip's forward differences (T-1 rows of dim),
 * or NULL for no smoothness (independent per-frame solves).
 * With B non-NULL also writes the block B (dim x dim, symmetric, tracking
 * and rest rows only) and g = J^T r (all residuals, smoothness included).
 * Block accumulation order: entry (i, j) sums its per-target contribution
 * w_p^2 (Jp_i . Jp_j) + w_o^2 (Jo_i . Jo_j) over k ascending, then the
 * active collision pairs' w_c^2 (j_i j_j) over p ascending, then the
 * ground capsules' (below z = 0) in their order, then rest.
 * The cost's track term sums the targets, then w_c^2 (margin - d)^2 of the
 * active pairs in order, then w_g^2 h^2 of the ground capsules below the
 * ground in order, then rest. fk = 0: lk already holds the link records
 * of a state with x's bits (frame_fk is not run again: the same floats). */
RT_HD float frame_eval_fk(const struct solver_batch *b, int f, const float *x, const float *dq, int t,
                          int T, float *lk, float *B, float *g, int fk)
{
    const struct rt_tree *tr = b->tree;
    const int n = rt_tangent_dim(tr), ro = tr->floating_base ? 6 : 0;
    const float *th = x + RT_ROOT_COLS;
    float track = 0.0f, vel = 0.0f, acc = 0.0f;

    if (fk) frame_fk(tr, x, lk);
    if (B) {
        /* the upper triangle: the terms add there, the mirror at the end
         * writes the rest */
        for (int i = 0; i < n; i++)
            for (int j = i; j < n; j++) B[(size_t)i * n + j] = 0.0f;
        for (int i = 0; i < n; i++) g[i] = 0.0f;
    }
    for (int k = 0; k < b->n_targets; k++) {
        size_t ti = (size_t)f * (size_t)b->n_targets + (size_t)k;
        float wp = b->target_wpos ? b->target_wpos[ti] : 0.0f;
        float wo = b->target_wrot ? b->target_wrot[ti] : 0.0f;
        int hp = wp > 0.0f && b->target_pos, ho = wo > 0.0f && b->target_rot;
        if (!hp && !ho) continue;
        int link = b->target_link[k];
        const float *L = lk + (size_t)link * FRAME_LINK_STRIDE;
        float ep[3], eo[3];
        float wp2 = wp * wp, wo2 = wo * wo;
        frame_target_residual(b, ti, L, hp, ho, ep, eo);
        if (hp) track = track + wp2 * v3_dot(ep, ep);
        if (ho) track = track + wo2 * v3_dot(eo, eo);
        if (!B) continue;

        /* Jacobian columns of this target, compact: root (6) then the chain. */
        int cols[FRAME_MAX_DIM], nc = 0;
        float jp[FRAME_MAX_DIM][3], jo[FRAME_MAX_DIM][3];
        if (tr->floating_base) {
            for (int c = 0; c < 6; c++) {
                cols[nc] = c;
                frame_jac_root(lk, L, c, jp[nc], jo[nc]);
                nc++;
            }
        }
        /* down: the chain's columns so far strictly descending (as a tree
         * numbered parents first gives them). Then a column below the last
         * is new without a search, and the block's pairs below are ranges. */
        const int nr = nc;
        int down = 1;
        for (int i = link; i > 0; i = tr->parent[i]) {
            int ji = tr->joint_index[i], type = tr->joint_type[i];
            if (ji < 0 || type == RT_JOINT_FIXED) continue;
            float cp[3], co[3];
            frame_jac_joint(tr, lk, L, i, cp, co);
            int col = ro + ji, e = nc, above = nc > nr && col >= cols[nc - 1];
            if (!down || above)
                for (e = 0; e < nc && cols[e] != col; e++) {}
            if (e == nc) {
                if (above) down = 0;
                cols[nc] = col;
                jp[nc][0] = cp[0]; jp[nc][1] = cp[1]; jp[nc][2] = cp[2];
                jo[nc][0] = co[0]; jo[nc][1] = co[1]; jo[nc][2] = co[2];
                nc++;
            } else { /* a mimic joint shares its leader's column */
                jp[e][0] = jp[e][0] + cp[0]; jp[e][1] = jp[e][1] + cp[1]; jp[e][2] = jp[e][2] + cp[2];
                jo[e][0] = jo[e][0] + co[0]; jo[e][1] = jo[e][1] + co[1]; jo[e][2] = jo[e][2] + co[2];
            }
        }
        for (int a = 0; a < nc; a++) {
            float ga = 0.0f;
            if (hp) ga = ga + wp2 * v3_dot(jp[a], ep);
            if (ho) ga = ga + wo2 * v3_dot(jo[a], eo);
            g[cols[a]] = g[cols[a]] + ga;
            /* the slots c2 with cols[c2] >= cols[a]: with `down`, a root
             * slot's are [a, nc) (every chain column is above the root's),
             * a chain slot's [nr, a]; each entry gets its one term either way */
            float *row = B + (size_t)cols[a] * n;
            const int c0 = down ? (a < nr ? a : nr) : 0, c1 = down ? (a < nr ? nc : a + 1) : nc;
            for (int c2 = c0; c2 < c1; c2++) {
                if (!down && cols[c2] < cols[a]) continue;
                float h = 0.0f;
                if (hp) h = h + wp2 * v3_dot(jp[a], jp[c2]);
                if (ho) h = h + wo2 * v3_dot(jo[a], jo[c2]);
                float *e = row + cols[c2];
                *e = *e + h;
            }
        }
    }
    /* The capsules' world segments once (the same floats as
     * frame_pair_eval's), each with its bounding sphere: a pair whose
     * spheres lie margin + 1 mm apart cannot be below the margin, and is
     * skipped as frame_pair_eval's distance would skip it. */
    float cw[FRAME_PAIR_CAPS][10]; /* a0[3], a1[3], the sphere's centre[3] and radius */
    const int cached = b->n_pairs > 0 && b->n_capsules <= FRAME_PAIR_CAPS;
    for (int c = 0; cached && c < b->n_capsules; c++) {
        float *w = cw[c];
        frame_capsule_world(b, lk, c, w, w + 3);
        frame_capsule_sphere(b, c, w, w + 3, w + 6);
    }
    for (int p = 0; p < b->n_pairs; p++) {
        float pa[3], pb[3], nrm[3];
        float d;
        if (cached) {
            const float *wa = cw[b->pair[2 * p]], *wb = cw[b->pair[2 * p + 1]];
            if (frame_spheres_apart(wa + 6, wb + 6, b->collide_margin)) continue;
            d = frame_pair_eval_seg(b, p, wa, wa + 3, wb, wb + 3, pa, pb, nrm);
        } else {
            d = frame_pair_eval(b, lk, p, pa, pb, nrm);
        }
        if (!(d < b->collide_margin)) continue;
        float e = b->collide_margin - d, w2 = b->w_collide * b->w_collide;
        track = track + w2 * (e * e);
        if (!B) continue;
        int cols[FRAME_MAX_DIM];
        float jr[FRAME_MAX_DIM];
        int nc = frame_pair_jac(b, f, lk, p, pa, pb, nrm, cols, jr);
        frame_add_row(B, g, n, cols, jr, nc, w2 * e, w2);
    }
    for (int i = 0; i < b->n_ground; i++) {
        float P[3];
        float h = frame_ground_eval(b, lk, b->ground[i], P);
        if (!(h < 0.0f)) continue;
        float e = 0.0f - h, w2 = b->w_ground * b->w_ground;
        track = track + w2 * (e * e);
        if (!B) continue;
        int cols[FRAME_MAX_DIM];
        float jr[FRAME_MAX_DIM];
        int nc = frame_ground_jac(b, lk, b->ground[i], P, cols, jr);
        frame_add_row(B, g, n, cols, jr, nc, w2 * e, w2);
    }
    if (b->w_rest) {
        for (int j = 0; j < tr->n_joints; j++) {
            float w2 = b->w_rest[j] * b->w_rest[j];
            float d = th[j] - (b->rest ? b->rest[j] : 0.0f);
            track = track + w2 * (d * d);
            if (B) {
                int c = ro + j;
                B[(size_t)c * n + c] = B[(size_t)c * n + c] + w2;
                g[c] = g[c] + w2 * d;
            }
        }
    }
    if (dq) {
        for (int c = 0; c < n; c++) {
            if (t <= T - 2) { float v = dq[(size_t)t * n + c]; vel = vel + frame_w(b->w_vel, c) * (v * v); }
            if (t <= T - 2 && b->v_limit) {
                float e = frame_vlim_excess(b, dq[(size_t)t * n + c], c);
                vel = vel + (b->w_vlim * b->w_vlim) * (e * e);
            }
            if (t >= 1 && t <= T - 2) { float a = frame_acc_at(dq, n, c, t); acc = acc + frame_w(b->w_acc, c) * (a * a); }
            if (B) g[c] = g[c] + frame_smooth_adj(b, dq, n, c, t, T);
            if (B && b->v_limit) g[c] = g[c] + frame_vlim_adj(b, dq, n, c, t, T);
        }
    }
    if (B) /* mirror the upper triangle */
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) B[(size_t)j * n + i] = B[(size_t)i * n + j];
    return 0.5f * ((track + vel) + acc);
}

/* frame_eval_fk with the forward kinematics of x computed into lk. */
RT_HD float frame_eval(const struct solver_batch *b, int f, const float *x, const float *dq, int t, int T,
                       float *lk, float *B, float *g)
{
    return frame_eval_fk(b, f, x, dq, t, T, lk, B, g, 1);
}

/* Joint-limit rule (SOLVER.md "Joint limits"): a joint sitting at a bound
 * with a gradient pushing outward is frozen for this linearization: its row
 * and column of B are zeroed, its diagonal set to 1, its gradient zeroed.
 * Returns the frozen mask (bit c: tangent coordinate c). */
RT_HD unsigned long long frame_freeze(const struct rt_tree *tr, const float *x, float *B, float *g)
{
    const int n = rt_tangent_dim(tr), ro = tr->floating_base ? 6 : 0;
    unsigned long long mask = 0;
    for (int j = 0; j < tr->n_joints; j++) {
        int c = ro + j;
        float th = x[RT_ROOT_COLS + j];
        if ((th <= tr->lower[j] && g[c] > 0.0f) || (th >= tr->upper[j] && g[c] < 0.0f)) {
            mask |= 1ull << c;
            for (int i = 0; i < n; i++) { B[(size_t)c * n + i] = 0.0f; B[(size_t)i * n + c] = 0.0f; }
            B[(size_t)c * n + c] = 1.0f;
            g[c] = 0.0f;
        }
    }
    return mask;
}

/* x_out = x (+) d: p += dp, q <- normalize(Exp(dphi) q), theta clamped to
 * the limits. x_out may alias x. */
RT_HD void frame_retract(const struct rt_tree *tr, const float *x, const float *d, float *xo)
{
    int ro = 0;
    if (tr->floating_base) {
        float dq[4], q[4] = {x[3], x[4], x[5], x[6]};
        xo[0] = x[0] + d[0]; xo[1] = x[1] + d[1]; xo[2] = x[2] + d[2];
        q_exp(d + 3, dq);
        q_mul(dq, q, q);
        q_normalize(q);
        xo[3] = q[0]; xo[4] = q[1]; xo[5] = q[2]; xo[6] = q[3];
        ro = 6;
    } else {
        for (int i = 0; i < RT_ROOT_COLS; i++) xo[i] = x[i];
    }
    for (int j = 0; j < tr->n_joints; j++)
        xo[RT_ROOT_COLS + j] = rt_clampf(x[RT_ROOT_COLS + j] + d[ro + j], tr->lower[j], tr->upper[j]);
}

/* ------------------------------------------------------------------ */
/* Dense block algebra (n <= FRAME_MAX_DIM). */

/* y = B x (B full symmetric). Column-axpy order: every y_i sums B_ij x_j
 * over j ascending, starting from 0 (the same bits as the row form). */
RT_HD void frame_block_mul(const float *B, const float *x, float *y, int n)
{
    for (int i = 0; i < n; i++) y[i] = 0.0f;
    for (int j = 0; j < n; j++) {
        const float *row = B + (size_t)j * n;
        float xj = x[j];
        for (int i = 0; i < n; i++) y[i] = y[i] + row[i] * xj;
    }
}

/* Cholesky of the symmetric positive matrix M into F (F[i][j] = F[j][i] =
 * L[i][j] off the diagonal, F[i][i] = 1 / L[i][i]: the solves multiply by
 * the reciprocal pivot instead of dividing, n divisions per factorization
 * instead of 2n per solve). Order: Cholesky-Banachiewicz, row i, column
 * j <= i, products over k ascending, L[i][j] = s / L[j][j]. A pivot that
 * is not above 1e-7 * M_ii (roundoff on a nearly singular block) is raised
 * to that floor, so the factor always exists and the preconditioner stays
 * positive. */
RT_HD void frame_chol(const float *M, float *F, int n)
{
    /* Column by column: entry (i, j) needs L's columns k < j only, so the
     * entries of column j are computed side by side, each with the order
     * above (k ascending). Row j of the symmetric F and M holds column j
     * (F[k][i] = L[i][k] once column k is done), so the sums run over rows
     * i >= j of contiguous memory, which the compiler vectorizes. */
    float s[FRAME_MAX_DIM];
    for (int j = 0; j < n; j++) {
        float *Fj = F + (size_t)j * n;
        for (int i = j; i < n; i++) s[i] = M[(size_t)j * n + i];
        for (int k = 0; k < j; k++) {
            const float *Fk = F + (size_t)k * n;
            float ljk = Fj[k];
            for (int i = j; i < n; i++) s[i] = s[i] - Fk[i] * ljk;
        }
        float fl = 1e-7f * M[(size_t)j * n + j] + 1e-30f, p = s[j];
        if (!(p > fl)) p = fl;
        p = sqrtf(p);
        Fj[j] = p;
        for (int i = j + 1; i < n; i++) {
            float v = s[i] / p;
            F[(size_t)i * n + j] = v;
            Fj[i] = v;
        }
    }
    for (int i = 0; i < n; i++) F[(size_t)i * n + i] = 1.0f / F[(size_t)i * n + i];
}

/* z = (L L^T)^-1 r with the factor from frame_chol; z may alias r.
 * Forward: z_j *= 1/L_jj, then z_i -= L_ij z_j for i > j (j ascending);
 * backward: z_j *= 1/L_jj, then z_i -= L_ji z_j for i < j (j descending).
 * Each z_i thus subtracts its products in index order, as the row forms do. */
RT_HD void frame_chol_solve(const float *F, const float *r, float *z, int n)
{
    if (z != r)
        for (int i = 0; i < n; i++) z[i] = r[i];
    for (int j = 0; j < n; j++) {
        const float *row = F + (size_t)j * n;
        float zj = z[j] * row[j];
        z[j] = zj;
        for (int i = j + 1; i < n; i++) z[i] = z[i] - row[i] * zj;
    }
    for (int j = n - 1; j >= 0; j--) {
        const float *row = F + (size_t)j * n;
        float zj = z[j] * row[j];
        z[j] = zj;
        for (int i = 0; i < j; i++) z[i] = z[i] - row[i] * zj;
    }
}

/* Marquardt scaling of frame t: D_c = max(B_cc + sdiag_c, FRAME_DMIN)
 * (1 for frozen coordinates), written as lam * D into lamd; also builds the
 * preconditioner block M = B + diag(lam D + sdiag) (frozen: sdiag 0), which
 * frame_precond factors into F. lam = lambda_clip * mu_frame.
 * act: the clip's velocity-limit masks (NULL: no limits), whose diagonal
 * joins sdiag. */
RT_HD void frame_precond_matrix(const struct solver_batch *b, const float *B, unsigned long long frozen, float lam,
                                int t, int T, int smooth, const unsigned long long *act, float *lamd, float *M)
{
    const int n = rt_tangent_dim(b->tree);
    for (int i = 0; i < n * n; i++) M[i] = B[i];
    for (int c = 0; c < n; c++) {
        int fz = (int)((frozen >> c) & 1ull);
        float sd = (smooth && !fz) ? frame_smooth_diag(b, c, t, T) : 0.0f;
        if (smooth && !fz && act) sd = sd + frame_vlim_diag(b, act, c, t, T);
        float D = fz ? 1.0f : B[(size_t)c * n + c] + sd;
        if (!(D > FRAME_DMIN)) D = FRAME_DMIN;
        lamd[c] = lam * D;
        M[(size_t)c * n + c] = (B[(size_t)c * n + c] + lamd[c]) + sd;
    }
}

/* frame_precond_matrix, then M (scratch, n*n) factored into F. */
RT_HD void frame_precond(const struct solver_batch *b, const float *B, unsigned long long frozen, float lam,
                         int t, int T, int smooth, const unsigned long long *act, float *lamd, float *M, float *F)
{
    frame_precond_matrix(b, B, frozen, lam, t, T, smooth, act, lamd, M);
    frame_chol(M, F, rt_tangent_dim(b->tree));
}

/* frame_matvec after its block product: y holds B x_t on entry and gets
 * the damping, the stencil and the velocity limits' terms added (frozen
 * outputs 0). A backend that keeps B in its own layout forms B x_t its own
 * way (the same sums in the same order) and calls this for the rest. */
RT_HD void frame_matvec_rest(const struct solver_batch *b, const float *lamd, unsigned long long frozen,
                             const float *xc, int t, int T, int smooth, const unsigned long long *act, float *y)
{
    const int n = rt_tangent_dim(b->tree);
    const float *x = xc + (size_t)t * n;
    for (int c = 0; c < n; c++) {
        if ((frozen >> c) & 1ull) { y[c] = 0.0f; continue; }
        float v = y[c];
        if (lamd) v = v + lamd[c] * x[c];
        if (smooth) v = v + frame_stencil_at(b, xc, n, c, t, T);
        if (smooth && act) v = v + frame_vlim_stencil(b, act, xc, n, c, t, T);
        y[c] = v;
    }
}

/* (H + lam D) x at frame t, for the clip direction xc (T rows of n,
 * clip-local): y = B x_t + lamd (.) x_t + S x (stencil), frozen outputs 0.
 * lamd NULL: undamped H. Per coordinate: ((Bx)_c + lamd_c x_c) + (Sx)_c,
 * plus the velocity limits' product when act (the clip's masks) is given. */
RT_HD void frame_matvec(const struct solver_batch *b, const float *B, const float *lamd,
                        unsigned long long frozen, const float *xc, int t, int T, int smooth,
                        const unsigned long long *act, float *y)
{
    const int n = rt_tangent_dim(b->tree);
    frame_block_mul(B, xc + (size_t)t * n, y, n);
    frame_matvec_rest(b, lamd, frozen, xc, t, T, smooth, act, y);
}

/* Sequential dot product (intra-frame quantities only; clip scalars go
 * through reduce.h). */
RT_HD float frame_dot(const float *a, const float *b, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++) s = s + a[i] * b[i];
    return s;
}

/* ------------------------------------------------------------------ */
/* Independent per-frame LM (the initialization, no smoothness). */

/* Scratch floats needed by frame_init_solve. */
/* The starting state of global frame f, written to x (state_cols floats):
 * b->init's row with the quaternion normalized and the joints clamped to
 * their limits; without b->init, the rest pose (clamped) with the base at
 * the root link's target when one is given that frame (else the origin,
 * identity). Both backends start from it (it is the same bits either way). */
RT_HD void frame_start_state(const struct solver_batch *b, int f, float *x)
{
    const struct rt_tree *tr = b->tree;
    int cols = RT_ROOT_COLS + tr->n_joints;
    if (b->init) {
        for (int i = 0; i < cols; i++) x[i] = b->init[(size_t)f * (size_t)cols + (size_t)i];
        if (tr->floating_base) q_normalize(x + 3);
        for (int j = 0; j < tr->n_joints; j++)
            x[RT_ROOT_COLS + j] = rt_clampf(x[RT_ROOT_COLS + j], tr->lower[j], tr->upper[j]);
        return;
    }
    int root_k = -1;
    for (int k = 0; k < b->n_targets; k++)
        if (b->target_link[k] == 0) { root_k = k; break; }
    x[0] = x[1] = x[2] = 0.0f;
    x[3] = x[4] = x[5] = 0.0f;
    x[6] = 1.0f;
    if (tr->floating_base && root_k >= 0) {
        size_t ti = (size_t)f * (size_t)b->n_targets + (size_t)root_k;
        if (b->target_pos && b->target_wpos && b->target_wpos[ti] > 0.0f)
            for (int i = 0; i < 3; i++) x[i] = b->target_pos[3 * ti + i];
        if (b->target_rot && b->target_wrot && b->target_wrot[ti] > 0.0f) {
            for (int i = 0; i < 4; i++) x[3 + i] = b->target_rot[4 * ti + i];
            q_normalize(x + 3);
        }
    }
    for (int j = 0; j < tr->n_joints; j++)
        x[RT_ROOT_COLS + j] = rt_clampf(b->rest ? b->rest[j] : 0.0f, tr->lower[j], tr->upper[j]);
}

RT_HD size_t frame_init_scratch(const struct rt_tree *tr)
{
    size_t n = (size_t)rt_tangent_dim(tr);
    return (size_t)tr->n_links * FRAME_LINK_STRIDE + 3 * n * n + 4 * n + 2 * (size_t)rt_state_cols(tr);
}

/* Runs up to `iters` LM iterations on frame f alone (tracking and rest
 * residuals, no smoothness), its own damping starting at lam0 with the
 * Nielsen update, from x (updated in place; joints stay within limits);
 * stops early once an accepted step gains little (lm_rule_init_done).
 * Returns the frame's final damping; *lk_x (may be NULL) gets 1 when the
 * scratch's link records (its first floats) are those of the returned x,
 * for a frame_eval_fk of x without its kinematics. An accepted step's
 * linearization reuses the trial's link records the same way. */
RT_HD float frame_init_solve(const struct solver_batch *b, int f, float *x, int iters, float lam0, float *scratch,
                             int *lk_x)
{
    const struct rt_tree *tr = b->tree;
    const int n = rt_tangent_dim(tr), cols = rt_state_cols(tr);
    float *lk = scratch, *B = lk + (size_t)tr->n_links * FRAME_LINK_STRIDE, *M = B + (size_t)n * n,
          *F = M + (size_t)n * n, *g = F + (size_t)n * n, *d = g + n, *Bd = d + n, *lamd = Bd + n,
          *xt = lamd + n;
    float lam = lam0, nu = 2.0f;
    float cost = frame_eval(b, f, x, NULL, 0, 1, lk, B, g);
    int at_x = 1; /* lk holds x's link records */
    unsigned long long fz = frame_freeze(tr, x, B, g);
    for (int it = 0; it < iters; it++) {
        frame_precond(b, B, fz, lam, 0, 1, 0, NULL, lamd, M, F);
        frame_chol_solve(F, g, d, n);
        for (int c = 0; c < n; c++) d[c] = -d[c];
        frame_block_mul(B, d, Bd, n);
        float pred = -frame_dot(g, d, n) - 0.5f * frame_dot(d, Bd, n);
        frame_retract(tr, x, d, xt);
        float cnew = frame_eval(b, f, xt, NULL, 0, 1, lk, NULL, NULL);
        float rho = lm_rule_rho(cost, cnew, pred);
        at_x = 0; /* lk holds xt's */
        if (rho > 0.0f) {
            for (int i = 0; i < cols; i++) x[i] = xt[i];
            at_x = 1;
            lam = lm_rule_shrink(lam, rho, LM_RULE_INIT_LAMBDA_MIN);
            nu = 2.0f;
            if (lm_rule_init_done(cost, cnew)) break;
            if (it + 1 < iters) {
                cost = frame_eval_fk(b, f, x, NULL, 0, 1, lk, B, g, 0);
                fz = frame_freeze(tr, x, B, g);
            }
        } else {
            lam = lam * nu;
            nu = nu * 2.0f;
            if (lam > LM_RULE_INIT_LAMBDA_MAX) break;
        }
    }
    if (lk_x) *lk_x = at_x;
    return lam;
}

#ifdef __cplusplus
}
#endif
#endif
