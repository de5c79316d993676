/* warp.cuh -- warp-per-frame executors of solver/frame.h's per-frame loops.
 *
 * frame.h defines the arithmetic: for every float it computes, which
 * operands, in which order. A frame's loops have many independent outputs
 * (block entries, rows of a Cholesky column, coordinates of a
 * triangular solve, links of one tree level), so a warp can run one frame
 * with its lanes over those outputs and produce every float with exactly
 * the operations of frame.h: no sum is split, no order changes. What is
 * sequential in frame.h stays sequential here (a scalar that all lanes
 * compute redundantly, from the same shared-memory inputs, is the same bits
 * on every lane). Where an output is computed by a call of a frame.h
 * function (frame_fk_link, frame_jac_root, frame_jac_joint, q_log,
 * frame_smooth_adj, frame_retract, ...), it is that function.
 *
 * Storage on the GPU: blocks B and factors L are symmetric / lower
 * triangular, so only the lower triangle is kept, packed by rows
 * (entry (i, j), j <= i, at i (i + 1) / 2 + j) and padded per frame to a
 * multiple of 128 floats (CUDA_PK_STRIDE) so that a warp stages it with
 * aligned 16-byte loads. The values are those of the CPU's full storage
 * (which mirrors the upper triangle and stores F[i][j] = F[j][i] =
 * L[i][j]), so every product reads the same float.
 *
 * Cholesky: frame_chol is Cholesky-Banachiewicz; entry (i, j) is
 * s = M_ij - L_i0 L_j0 - L_i1 L_j1 - ... - L_i,j-1 L_j,j-1 (k ascending),
 * then s / L_jj (or the floored sqrt on the diagonal). The left-looking
 * form below (warp_chol) computes column j's entries side by side, each
 * entry's subtractions in that order, one lane per row. */
#ifndef RT_CUDA_WARP_CUH
#define RT_CUDA_WARP_CUH

#include "frame_dev.cuh"

#define CUDA_PK_STRIDE(n) (((((size_t)(n) * ((size_t)(n) + 1)) / 2 + 127) / 128) * 128)

static __host__ __device__ __forceinline__ int pk_idx(int i, int j) { return i * (i + 1) / 2 + j; } /* j <= i */
static __host__ __device__ __forceinline__ int pk_sym(int i, int j) { return i >= j ? pk_idx(i, j) : pk_idx(j, i); }

/* Per-batch tables of the warp executors (device pointers; built on the
 * host by cuda_warp_tables_build in lin.cu from the tree and n). */
struct warp_tabs {
    const short *fk_order;         /* links 1..n_links-1 by depth */
    const int *fk_wave;            /* [n_waves + 1] offsets into fk_order */
    int n_waves;
    const int *ch_off;             /* [n_targets + 1] chain elements of each target */
    const short *ch_link;          /* the chain's links with a joint, walk order (link to root) */
    const signed char *ch_slot;    /* compact slot of each chain element */
    const signed char *ch_first;   /* 1: the element opens its slot; 0: a mimic adds into it */
    const signed char *tg_nc;      /* [n_targets] compact columns */
    const signed char *tg_cols;    /* [n_targets * FRAME_MAX_DIM] tangent column of each slot */
    const unsigned short *spair;   /* slot pairs (a, c), c <= a, a ascending: a | c << 8 */
    /* All targets' Jacobian columns at once (warp_eval_targets_jtj; n_slots 0:
     * one target after the other). Slot s of the store: target sl_k[s]'s
     * compact slot s - sl_off[k]. */
    int n_slots, merges;
    const int *sl_off;             /* [n_targets + 1] */
    const unsigned char *sl_k;     /* [n_slots] the slot's target */
    const short *sl_code;          /* [n_slots] its joint's link, or -1 - c for root column c */
    const short *sl_order;         /* [n_slots] the slots, root columns first (lanes take them in turn) */
    const int *gc_off;             /* [n + 1] the slots of gradient entry c, targets ascending */
    const short *gc_slot;
    const int *be_off;             /* [33] lane l's block entries: be_off[l] .. be_off[l + 1] */
    const short *be_at;            /* the entry's packed index */
    const int *bi_off;             /* [entries + 1] the entry's slot pairs, targets ascending */
    const unsigned *bi;            /* slot a | slot c << 12 | target << 24 */
};

/* Shared-memory workspace of one warp (floats; see warp_ws_floats). The
 * factor F shares its floats with the link records lk: a kernel that
 * factors (precond, init, repair) never needs the links of the state it
 * factors for -- warp_init_solve's trial eval rebuilds them after the
 * solve, and the eval that reuses them runs before the next factor. */
struct warp_ws {
    float *lk, *B, *F, *g, *d, *Bd, *lamd, *dM, *x, *xt, *tmp, *jp, *jo, *rs;
    float *J; /* the targets' Jacobian columns (6 floats a slot) of the kernels that build B; NULL in the others */
};

/* Per-target residual record (warp_eval): ep[3], eo[3], wp2, wo2, the
 * position and rotation cost terms, flags (1: position, 2: rotation). */
#define WARP_RS 12

static __host__ __device__ __forceinline__ size_t warp_r4(size_t v) { return (v + 3) & ~(size_t)3; }

/* Row stride of the full-storage factor of the removed RT_CUDA_INIT=full
 * executor (88bb2d4); only warp_ws_at's full = 1 layout still reads it. */
static __host__ __device__ __forceinline__ int warp_fs(int n)
{
    int s = (n + 3) & ~3;
    if (!((s >> 2) & 1)) s += 4;
    return s;
}

static __host__ __device__ __forceinline__ size_t warp_ws_floats(int nl, int n, int cols, int nt)
{
    size_t pk = warp_r4((size_t)n * (n + 1) / 2), lk = warp_r4((size_t)nl * FRAME_LINK_STRIDE);
    return (lk > pk ? lk : pk) + pk + 5 * warp_r4((size_t)n) + 3 * warp_r4((size_t)cols) + (size_t)WARP_RS * (size_t)nt;
}

/* full = 1: the layout of the removed full-storage init executor (88bb2d4;
 * F over the dead link records). No caller passes 1 any more, but the
 * branch stays on purpose: nvcc optimizes this function on its own before
 * inlining it, and without the branch the default kernels (lin, cost,
 * precond, init, repair) compile to different PTX (other register counts
 * and instruction order). Dropping it changes the default code and should
 * be measured like any other kernel change. */
static __device__ __forceinline__ struct warp_ws warp_ws_at(float *base, int nl, int n, int cols, int full = 0)
{
    struct warp_ws w;
    size_t pk = warp_r4((size_t)n * (n + 1) / 2), vn = warp_r4((size_t)n), vc = warp_r4((size_t)cols);
    float *p = base;
    if (full) {
        size_t lkf = warp_r4((size_t)nl * FRAME_LINK_STRIDE) + pk;
        if (warp_r4((size_t)n * (size_t)warp_fs(n)) > lkf) lkf = warp_r4((size_t)n * (size_t)warp_fs(n));
        w.lk = p;
        w.F = p;
        p += lkf;
        w.B = p; p += pk;
    } else {
        size_t lk = warp_r4((size_t)nl * FRAME_LINK_STRIDE);
        w.lk = p;
        w.F = p; /* never live together (struct warp_ws) */
        p += lk > pk ? lk : pk;
        w.B = p; p += pk;
    }
    w.g = p; p += vn;
    w.d = p; p += vn;
    w.Bd = p; p += vn;
    w.lamd = p; p += vn;
    w.dM = p; p += vn;
    w.x = p; p += vc;
    w.xt = p; p += vc;
    w.tmp = p; p += vc;
    w.rs = p;
    w.jp = w.jo = w.J = NULL; /* warp_rows_at */
    return w;
}

/* The rows' region after the workspace of a kernel that builds B (jac 1:
 * the staging jp, jo of one target's or one hinge's columns, 3 n floats
 * each; jac 2 with n_slots > 0: the store J of every target's columns,
 * 6 floats a slot, jp and jo inside it -- warp_add_row stages its rows
 * there after the targets are done with it). 0 floats for jac 0. */
static __host__ __device__ __forceinline__ size_t warp_rows_floats(int n, int n_slots, int jac)
{
    size_t vj = warp_r4((size_t)n * 3), st = jac == 2 ? warp_r4((size_t)6 * n_slots) : 0;
    return jac ? (st > 2 * vj ? st : 2 * vj) : 0;
}

static __device__ __forceinline__ void warp_rows_at(struct warp_ws *w, float *p, int n, int n_slots, int jac)
{
    if (!jac) return;
    w->jp = p;
    w->jo = p + warp_r4((size_t)n * 3);
    if (jac == 2 && n_slots > 0) w->J = p;
}

/* Copies `count` floats (a multiple of 4, both 16-byte aligned) with
 * independent 16-byte loads, up to 8 in flight per lane. */
static __device__ __forceinline__ void warp_copy4(float *dst, const float *src, int count, unsigned lane)
{
    const float4 *s4 = (const float4 *)src;
    float4 *d4 = (float4 *)dst;
    int q4 = count >> 2;
    for (int base = 0; base < q4; base += 256) {
        float4 r[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            int q = base + u * 32 + (int)lane;
            if (q < q4) r[u] = s4[q];
        }
#pragma unroll
        for (int u = 0; u < 8; u++) {
            int q = base + u * 32 + (int)lane;
            if (q < q4) d4[q] = r[u];
        }
    }
}

static __device__ __forceinline__ void warp_copy(float *dst, const float *src, int count, unsigned lane)
{
    for (int i = (int)lane; i < count; i += 32) dst[i] = src[i];
}

/* frame_fk: the root on lane 0, then one tree level at a time, lanes over
 * the links of a level (frame_fk_link reads only the parent's entry). */
static __device__ void warp_fk(const struct rt_tree *tr, const struct warp_tabs &tb, const float *x, float *lk,
                               unsigned lane)
{
    if (lane == 0) frame_fk_root(tr, x, lk);
    __syncwarp();
    for (int w = 0; w < tb.n_waves; w++) {
        for (int e = tb.fk_wave[w] + (int)lane; e < tb.fk_wave[w + 1]; e += 32) frame_fk_link(tr, x, lk, tb.fk_order[e]);
        __syncwarp();
    }
}

/* frame_add_row on one warp: lane 0 has the row (its nc values jr[] and
 * columns cols[], from frame_pair_jac or frame_ground_jac) and stages it
 * in ws.jp (values) and ws.jo (columns, as int bits); then the lanes add
 * its gradient entries and its block entries (packed lower triangle: each
 * entry once per row, so in the CPU's order across rows). */
static __device__ void warp_add_row(const struct warp_ws &ws, int nc, const int *cols, const float *jr, float ge,
                                    float w2, float *g, float *B, unsigned lane)
{
    if (lane == 0)
        for (int a = 0; a < nc; a++) { ws.jp[a] = jr[a]; ws.jo[a] = __int_as_float(cols[a]); }
    nc = __shfl_sync(0xffffffffu, nc, 0);
    __syncwarp();
    for (int a = (int)lane; a < nc; a += 32) {
        int ca = __float_as_int(ws.jo[a]);
        g[ca] = g[ca] - ge * ws.jp[a];
    }
    for (int a = 0; a < nc; a++) {
        const int ca = __float_as_int(ws.jo[a]);
        for (int c2 = (int)lane; c2 < nc; c2 += 32) {
            const int cc = __float_as_int(ws.jo[c2]);
            if (cc < ca) continue;
            const int at = pk_idx(cc, ca);
            B[at] = B[at] + w2 * (ws.jp[a] * ws.jp[c2]);
        }
    }
    __syncwarp();
}

/* Target k's mimic joints added into their leaders' columns, in walk
 * order (frame_eval's chain loop; one lane): slot s's columns at
 * jp + stride s and jo + stride s. L: the target's link record. */
static __device__ __forceinline__ void warp_jac_merges(const struct rt_tree *tr, const struct warp_tabs &tb, const float *lk,
                                                       const float *L, int k, float *jp, float *jo, int stride)
{
    for (int e = tb.ch_off[k]; e < tb.ch_off[k + 1]; e++) {
        if (tb.ch_first[e]) continue;
        float cp[3], co[3];
        float *P = jp + stride * tb.ch_slot[e], *O = jo + stride * tb.ch_slot[e];
        frame_jac_joint(tr, lk, L, tb.ch_link[e], cp, co);
        P[0] = P[0] + cp[0]; P[1] = P[1] + cp[1]; P[2] = P[2] + cp[2];
        O[0] = O[0] + co[0]; O[1] = O[1] + co[1]; O[2] = O[2] + co[2];
    }
}

/* The targets' part of frame_eval's block and gradient, every target at
 * once (ws.J, the tables of warp_tabs): the lanes compute every active
 * target's Jacobian columns (frame_jac_root / frame_jac_joint, lane 0 the
 * mimic joints' additions in walk order), then each gradient entry and
 * each block entry is owned by one lane, which adds its targets' terms in
 * target order -- frame_eval's expressions and order for every entry, so
 * the same floats as one target after the other. ws.rs holds the targets'
 * records (warp_eval); B and g are zero. */
static __device__ void warp_eval_targets_jtj(const struct solver_batch *b, const struct warp_tabs &tb, const float *lk,
                                             const struct warp_ws &ws, float *B, float *g, unsigned lane)
{
    const struct rt_tree *tr = b->tree;
    const int n = rt_tangent_dim(tr);
    float *J = ws.J;
    const float *rsb = ws.rs;
    for (int q = (int)lane; q < tb.n_slots; q += 32) {
        const int s = tb.sl_order[q], k = tb.sl_k[s];
        if (!(int)rsb[(size_t)WARP_RS * k + 10]) continue; /* no residual this frame */
        const float *L = lk + (size_t)b->target_link[k] * FRAME_LINK_STRIDE;
        const int code = tb.sl_code[s];
        if (code < 0) frame_jac_root(lk, L, -1 - code, J + 6 * s, J + 6 * s + 3);
        else frame_jac_joint(tr, lk, L, code, J + 6 * s, J + 6 * s + 3);
    }
    __syncwarp();
    if (tb.merges) { /* mimic joints add into their leader's column, in walk order */
        if (lane == 0)
            for (int k = 0; k < b->n_targets; k++) {
                if (!(int)rsb[(size_t)WARP_RS * k + 10]) continue;
                float *Jk = J + 6 * tb.sl_off[k];
                warp_jac_merges(tr, tb, lk, lk + (size_t)b->target_link[k] * FRAME_LINK_STRIDE, k, Jk, Jk + 3, 6);
            }
        __syncwarp();
    }
    for (int c = (int)lane; c < n; c += 32) {
        float gc = g[c];
        for (int i = tb.gc_off[c]; i < tb.gc_off[c + 1]; i++) {
            const int s = tb.gc_slot[i];
            const float *rs = rsb + (size_t)WARP_RS * tb.sl_k[s];
            const int fl = (int)rs[10];
            if (!fl) continue;
            float ga = 0.0f;
            if (fl & 1) ga = ga + rs[6] * v3_dot(J + 6 * s, rs);
            if (fl & 2) ga = ga + rs[7] * v3_dot(J + 6 * s + 3, rs + 3);
            gc = gc + ga;
        }
        g[c] = gc;
    }
    for (int q = tb.be_off[lane]; q < tb.be_off[lane + 1]; q++) {
        const int at = tb.be_at[q];
        float acc = B[at];
        for (int i = tb.bi_off[q]; i < tb.bi_off[q + 1]; i++) {
            const unsigned it = tb.bi[i];
            const int sa = (int)(it & 0xfffu), sc = (int)((it >> 12) & 0xfffu);
            const float *rs = rsb + (size_t)WARP_RS * (it >> 24);
            const int fl = (int)rs[10];
            if (!fl) continue;
            float h = 0.0f;
            if (fl & 1) h = h + rs[6] * v3_dot(J + 6 * sa, J + 6 * sc);
            if (fl & 2) h = h + rs[7] * v3_dot(J + 6 * sa + 3, J + 6 * sc + 3);
            acc = acc + h;
        }
        B[at] = acc;
    }
    __syncwarp();
}

/* Bounding sphere of capsule c (frame_capsule_sphere, as frame_eval's
 * cached capsules): centre s[0..2], radius s[3]. */
static __device__ __forceinline__ void warp_capsule_sphere(const struct solver_batch *b, const float *lk, int c,
                                                           float *s)
{
    float a0[3], a1[3];
    frame_capsule_world(b, lk, c, a0, a1);
    frame_capsule_sphere(b, c, a0, a1, s);
}

/* Position of the k-th set bit of m, k from 0 (k < popc(m)): the largest s
 * with fewer than k + 1 set bits below it. */
static __device__ __forceinline__ int warp_nth_bit(unsigned m, int k)
{
    int s = 0;
#pragma unroll
    for (int w = 16; w; w >>= 1)
        if (__popc(m & ((1u << (s + w)) - 1u)) <= k) s += w;
    return s;
}

/* Takes the queued candidate pairs (lane j < cnt holds pair qp, in pair
 * order): lanes evaluate theirs (frame_pair_eval), then the active ones are
 * taken in pair order, every lane computing the pair again (the same
 * floats) and adding its cost term, lane 0 its Jacobian row
 * (frame_pair_jac) into ws.jp (values) and ws.jo (columns), the lanes the
 * gradient and the block entries (each entry once per pair). */
static __device__ float warp_pairs_take(const struct solver_batch *b, int f, const float *lk, const struct warp_ws &ws,
                                        int qp, int cnt, float track, float *B, float *g, unsigned lane)
{
    int act = 0;
    if ((int)lane < cnt) {
        float pa[3], pb[3], nrm[3];
        act = frame_pair_eval(b, lk, qp, pa, pb, nrm) < b->collide_margin;
    }
    unsigned m = __ballot_sync(0xffffffffu, act);
    while (m) {
        const int p = __shfl_sync(0xffffffffu, qp, __ffs(m) - 1);
        m &= m - 1;
        float pa[3], pb[3], nrm[3];
        float d = frame_pair_eval(b, lk, p, pa, pb, nrm);
        float e = b->collide_margin - d, w2 = b->w_collide * b->w_collide;
        track = track + w2 * (e * e);
        if (!B) continue;
        int nc = 0, cols[FRAME_MAX_DIM];
        float jr[FRAME_MAX_DIM];
        if (lane == 0) nc = frame_pair_jac(b, f, lk, p, pa, pb, nrm, cols, jr);
        warp_add_row(ws, nc, cols, jr, w2 * e, w2, g, B, lane);
    }
    return track;
}

/* frame_eval's self-collision loop on one warp. With at most 64 capsules
 * their bounding spheres are computed once (lane c keeps capsules c and
 * c + 32) and tested first, 32 pairs at a time, as frame_eval's cached path
 * tests them: a pair whose spheres lie margin + 1 mm apart cannot be below
 * the margin. The pairs that pass are queued in pair order, a lane a pair,
 * and taken 32 at a time (warp_pairs_take), so a frame pays one full
 * distance a lane for every 32 candidates rather than for every 32 pairs.
 * More capsules: every pair is a candidate. Either way the pairs below the
 * margin are the same and are added in the same order: the same bits. */
static __device__ float warp_pairs(const struct solver_batch *b, int f, const float *lk, const struct warp_ws &ws,
                                   float track, float *B, float *g, unsigned lane)
{
    const int cull = b->n_capsules <= 64;
    float s0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, s1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (cull && (int)lane < b->n_capsules) warp_capsule_sphere(b, lk, (int)lane, s0);
    if (cull && (int)lane + 32 < b->n_capsules) warp_capsule_sphere(b, lk, (int)lane + 32, s1);
    int qp = 0, q = 0; /* lane j < q holds queued pair qp */
    for (int p0 = 0; p0 < b->n_pairs; p0 += 32) {
        const int p = p0 + (int)lane;
        int cand = p < b->n_pairs;
        if (cull) {
            const int ca = cand ? b->pair[2 * p] : 0, cb = cand ? b->pair[2 * p + 1] : 0;
            float va[4], vb[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                float a0 = __shfl_sync(0xffffffffu, s0[k], ca & 31), a1 = __shfl_sync(0xffffffffu, s1[k], ca & 31);
                float b0 = __shfl_sync(0xffffffffu, s0[k], cb & 31), b1 = __shfl_sync(0xffffffffu, s1[k], cb & 31);
                va[k] = ca < 32 ? a0 : a1;
                vb[k] = cb < 32 ? b0 : b1;
            }
            if (frame_spheres_apart(va, vb, b->collide_margin)) cand = 0;
        }
        const unsigned m = __ballot_sync(0xffffffffu, cand);
        const int nm = __popc(m), k = (int)lane - q;
        if (k >= 0 && k < nm) qp = p0 + warp_nth_bit(m, k);
        if (q + nm < 32) {
            q += nm;
            continue;
        }
        track = warp_pairs_take(b, f, lk, ws, qp, 32, track, B, g, lane);
        const int taken = 32 - q;
        q = nm - taken;
        if ((int)lane < q) qp = p0 + warp_nth_bit(m, taken + (int)lane);
    }
    if (q) track = warp_pairs_take(b, f, lk, ws, qp, q, track, B, g, lane);
    return track;
}

/* frame_eval on one warp. x: the frame's state (any memory all lanes can
 * read); dq: the clip's forward differences or NULL; B (packed, shared) and
 * g (shared) NULL for the cost alone. Returns the partial cost on every
 * lane. Leaves B, g complete after a final __syncwarp, and the link records
 * (ws.lk) and target records (ws.rs) of x. reuse = 1: ws.lk and ws.rs
 * already hold those of a state with x's bits (the last warp_eval ran on a
 * copy of x), so FK and the target residuals are not recomputed: they
 * would be the same floats. */
static __device__ float warp_eval(const struct solver_batch *b, const struct warp_tabs &tb, int f, const float *x,
                                  const float *dq, int t, int T, const struct warp_ws &ws, float *B, float *g,
                                  unsigned lane, int reuse = 0)
{
    const struct rt_tree *tr = b->tree;
    const int n = rt_tangent_dim(tr), ro = tr->floating_base ? 6 : 0;
    const float *th = x + RT_ROOT_COLS;
    float track = 0.0f, vel = 0.0f, acc = 0.0f;
    float *lk = ws.lk;

    if (!reuse) warp_fk(tr, tb, x, lk, lane);
    if (B) {
        int pk = n * (n + 1) / 2;
        for (int i = (int)lane; i < pk; i += 32) B[i] = 0.0f;
        for (int i = (int)lane; i < n; i += 32) g[i] = 0.0f;
        __syncwarp();
    }
    /* The targets' residuals and cost terms are independent: lane k
     * computes target k's (frame_eval's expressions) into its record; the
     * cost terms are then added in target order on every lane. */
    const int nt = b->n_targets;
    for (int k = reuse ? nt : (int)lane; k < nt; k += 32) {
        size_t ti = (size_t)f * (size_t)nt + (size_t)k;
        float wp = b->target_wpos ? b->target_wpos[ti] : 0.0f;
        float wo = b->target_wrot ? b->target_wrot[ti] : 0.0f;
        int hp = wp > 0.0f && b->target_pos, ho = wo > 0.0f && b->target_rot;
        float *rs = ws.rs + (size_t)WARP_RS * k;
        rs[10] = (float)(hp | (ho << 1));
        if (!hp && !ho) continue;
        int link = b->target_link[k];
        const float *L = lk + (size_t)link * FRAME_LINK_STRIDE;
        float ep[3], eo[3];
        float wp2 = wp * wp, wo2 = wo * wo;
        frame_target_residual(b, ti, L, hp, ho, ep, eo);
        float tp_ = hp ? wp2 * v3_dot(ep, ep) : 0.0f, to_ = ho ? wo2 * v3_dot(eo, eo) : 0.0f;
        rs[0] = ep[0]; rs[1] = ep[1]; rs[2] = ep[2];
        rs[3] = eo[0]; rs[4] = eo[1]; rs[5] = eo[2];
        rs[6] = wp2; rs[7] = wo2; rs[8] = tp_; rs[9] = to_;
    }
    __syncwarp();
    for (int k = 0; k < nt; k++) {
        const float *rs = ws.rs + (size_t)WARP_RS * k;
        int fl = (int)rs[10];
        if (fl & 1) track = track + rs[8];
        if (fl & 2) track = track + rs[9];
    }
    if (B && ws.J) warp_eval_targets_jtj(b, tb, lk, ws, B, g, lane);
    for (int k = 0; B && !ws.J && k < nt; k++) {
        const float *rs = ws.rs + (size_t)WARP_RS * k;
        const int fl = (int)rs[10], hp = fl & 1, ho = fl & 2;
        if (!fl) continue;
        const float *L = lk + (size_t)b->target_link[k] * FRAME_LINK_STRIDE;
        const float *ep = rs, *eo = rs + 3;
        const float wp2 = rs[6], wo2 = rs[7];

        /* Jacobian columns of this target, compact (frame_eval's list). */
        const int nc = tb.tg_nc[k];
        const signed char *cols = tb.tg_cols + (size_t)k * FRAME_MAX_DIM;
        float *jp = ws.jp, *jo = ws.jo;
        if (tr->floating_base && lane < 6) frame_jac_root(lk, L, (int)lane, jp + 3 * lane, jo + 3 * lane);
        int e0 = tb.ch_off[k], e1 = tb.ch_off[k + 1], merges = 0;
        for (int e = e0 + (int)lane; e < e1; e += 32)
            if (tb.ch_first[e]) {
                int s = tb.ch_slot[e];
                frame_jac_joint(tr, lk, L, tb.ch_link[e], jp + 3 * s, jo + 3 * s);
            }
        for (int e = e0; e < e1; e++) merges |= !tb.ch_first[e];
        __syncwarp();
        if (merges) { /* mimic joints add into their leader's column, in walk order */
            if (lane == 0) warp_jac_merges(tr, tb, lk, L, k, jp, jo, 3);
            __syncwarp();
        }
        for (int a = (int)lane; a < nc; a += 32) {
            float ga = 0.0f;
            if (hp) ga = ga + wp2 * v3_dot(jp + 3 * a, ep);
            if (ho) ga = ga + wo2 * v3_dot(jo + 3 * a, eo);
            g[cols[a]] = g[cols[a]] + ga;
        }
        /* Block entries: every unordered slot pair once (the products of
         * v3_dot commute exactly, so dot(a, c) == dot(c, a) bit for bit);
         * entry (max col, min col) of the packed lower triangle = the CPU's
         * (min col, max col). Loads of a batch before its stores (the
         * entries are distinct, so the batch may run in any order). */
        const int np = nc * (nc + 1) / 2;
        for (int p0 = (int)lane; p0 < np; p0 += 64) {
            float v[2];
            int at[2];
#pragma unroll
            for (int u = 0; u < 2; u++) {
                int p = p0 + 32 * u;
                if (p >= np) break;
                unsigned pr = tb.spair[p];
                int sa = (int)(pr & 0xffu), sc = (int)(pr >> 8);
                int ca = cols[sa], cc = cols[sc];
                int hi = ca > cc ? ca : cc, lo = ca > cc ? cc : ca;
                float h = 0.0f;
                if (hp) h = h + wp2 * v3_dot(jp + 3 * sa, jp + 3 * sc);
                if (ho) h = h + wo2 * v3_dot(jo + 3 * sa, jo + 3 * sc);
                at[u] = pk_idx(hi, lo);
                v[u] = B[at[u]] + h;
            }
#pragma unroll
            for (int u = 0; u < 2; u++)
                if (p0 + 32 * u < np) B[at[u]] = v[u];
        }
        __syncwarp();
    }
    /* Self-collision pairs: frame_eval's loop with its bounding-sphere
     * test (warp_pairs). */
    if (b->n_pairs) track = warp_pairs(b, f, lk, ws, track, B, g, lane);
    /* The ground capsules (frame_eval's loop), the same way: lanes find
     * those below z = 0, 32 at a time, then they are taken in order. */
    for (int i0 = 0; i0 < b->n_ground; i0 += 32) {
        int act = 0;
        if (i0 + (int)lane < b->n_ground) {
            float P[3];
            act = frame_ground_eval(b, lk, b->ground[i0 + (int)lane], P) < 0.0f;
        }
        unsigned m = __ballot_sync(0xffffffffu, act);
        while (m) {
            const int c = b->ground[i0 + __ffs(m) - 1];
            m &= m - 1;
            float P[3];
            float h = frame_ground_eval(b, lk, c, P);
            float e = 0.0f - h, w2 = b->w_ground * b->w_ground;
            track = track + w2 * (e * e);
            if (!B) continue;
            int nc = 0, cols[FRAME_MAX_DIM];
            float jr[FRAME_MAX_DIM];
            if (lane == 0) nc = frame_ground_jac(b, lk, c, P, cols, jr);
            warp_add_row(ws, nc, cols, jr, w2 * e, w2, g, B, lane);
        }
    }
    if (b->w_rest) {
        /* lane j's term into ws.dM (free during an eval), then added in
         * joint order on every lane */
        const float *wr = b->w_rest, *rest = b->rest;
        const int nj = tr->n_joints;
        for (int j = (int)lane; j < nj; j += 32) {
            float w2 = wr[j] * wr[j];
            float d = th[j] - (rest ? rest[j] : 0.0f);
            ws.dM[j] = w2 * (d * d);
            if (B) {
                int c = ro + j;
                B[pk_idx(c, c)] = B[pk_idx(c, c)] + w2;
                g[c] = g[c] + w2 * d;
            }
        }
        __syncwarp();
        for (int j = 0; j < nj; j++) track = track + ws.dM[j];
    }
    if (dq) {
        for (int c = 0; c < n; c++) {
            if (t <= T - 2) { float v = dq[(size_t)t * n + c]; vel = vel + frame_w(b->w_vel, c) * (v * v); }
            if (t <= T - 2 && b->v_limit) {
                float e = frame_vlim_excess(b, dq[(size_t)t * n + c], c);
                vel = vel + (b->w_vlim * b->w_vlim) * (e * e);
            }
            if (t >= 1 && t <= T - 2) { float a = frame_acc_at(dq, n, c, t); acc = acc + frame_w(b->w_acc, c) * (a * a); }
        }
        if (B) {
            __syncwarp(); /* the rest terms above wrote g from other lanes */
            for (int c = (int)lane; c < n; c += 32) {
                g[c] = g[c] + frame_smooth_adj(b, dq, n, c, t, T);
                if (b->v_limit) g[c] = g[c] + frame_vlim_adj(b, dq, n, c, t, T);
            }
        }
    }
    __syncwarp();
    return 0.5f * ((track + vel) + acc);
}

/* frame_freeze on one warp (packed B, shared B and g). Returns the mask on
 * every lane. */
static __device__ unsigned long long warp_freeze(const struct rt_tree *tr, const float *x, float *B, float *g,
                                                 unsigned lane)
{
    const int n = rt_tangent_dim(tr), ro = tr->floating_base ? 6 : 0, nj = tr->n_joints;
    int c0 = 0, c1 = 0;
    {
        int j = (int)lane;
        if (j < nj) {
            float th = x[RT_ROOT_COLS + j];
            float gc = g[ro + j];
            c0 = (th <= tr->lower[j] && gc > 0.0f) || (th >= tr->upper[j] && gc < 0.0f);
        }
        j = (int)lane + 32;
        if (j < nj) {
            float th = x[RT_ROOT_COLS + j];
            float gc = g[ro + j];
            c1 = (th <= tr->lower[j] && gc > 0.0f) || (th >= tr->upper[j] && gc < 0.0f);
        }
    }
    unsigned long long m0 = __ballot_sync(0xffffffffu, c0), m1 = __ballot_sync(0xffffffffu, c1);
    unsigned long long mask = (m0 << ro) | (m1 << (ro + 32));
    if (!mask) return 0;
    __syncwarp();
    for (unsigned long long m = mask; m; m &= m - 1) {
        int c = __ffsll((long long)m) - 1;
        for (int i = (int)lane; i < n; i += 32) B[pk_sym(i, c)] = i == c ? 1.0f : 0.0f;
        __syncwarp();
    }
    for (int c = (int)lane; c < n; c += 32)
        if ((mask >> c) & 1ull) g[c] = 0.0f;
    __syncwarp();
    return mask;
}

/* frame_chol on one warp, in place on the packed M (shared), with dM the
 * original diagonal of M (the pivot floor reads it). Left-looking, one
 * column j at a time: the lane of row i >= j computes
 * s = M_ij - L_i0 L_j0 - ... - L_i,j-1 L_j,j-1 (k ascending, frame_chol's
 * order for that entry), the lane of row j turns its s into the pivot
 * sqrt(max(s, floor)), and every row below divides by it. Row i < 32 sits
 * on lane i; a row 32 + l rides on lane l, in a second slot while lane l's
 * own row is still open (columns j < n - 32), in its only slot after. */
static __device__ __forceinline__ float warp_chol_pivot(float s, const float *dM, int j)
{
    float fl = 1e-7f * dM[j] + 1e-30f;
    if (!(s > fl)) s = fl;
    return sqrtf(s);
}

static __device__ void warp_chol(float *A, const float *dM, int n, unsigned lane)
{
    for (int j = 0; j < n; j++) {
        const float *rj = A + pk_idx(j, 0);
        if (j < n - 32) { /* two slots: rows lane (from j on) and lane + 32 */
            const int i0 = (int)lane, i1 = (int)lane + 32, a0 = i0 >= j, a1 = i1 < n;
            float *r0 = A + pk_idx(i0, 0), *r1 = A + pk_idx(a1 ? i1 : 0, 0);
            float s0 = a0 ? r0[j] : 0.0f, s1 = a1 ? r1[j] : 0.0f;
#pragma unroll 4
            for (int k = 0; k < j; k++) {
                float l = rj[k];
                if (a0) s0 = s0 - r0[k] * l;
                if (a1) s1 = s1 - r1[k] * l;
            }
            float piv = warp_chol_pivot(__shfl_sync(0xffffffffu, s0, j), dM, j);
            if (a0) r0[j] = i0 == j ? piv : s0 / piv;
            if (a1) r1[j] = s1 / piv;
        } else { /* one slot: row lane while lane >= j, else lane + 32 */
            const int i = (int)lane >= j ? (int)lane : (int)lane + 32, a = i < n && i >= j;
            float *ri = A + pk_idx(a ? i : 0, 0);
            float s = a ? ri[j] : 0.0f;
#pragma unroll 4
            for (int k = 0; k < j; k++) {
                float l = rj[k];
                if (a) s = s - ri[k] * l;
            }
            float piv = warp_chol_pivot(__shfl_sync(0xffffffffu, s, j & 31), dM, j);
            if (a) ri[j] = i == j ? piv : s / piv;
        }
        __syncwarp();
    }
    /* frame_chol's final pass: the diagonal holds 1 / L_jj */
    for (int c = (int)lane; c < n; c += 32) A[pk_idx(c, c)] = 1.0f / A[pk_idx(c, c)];
    __syncwarp();
}

/* frame_precond on one warp: lamd (shared), F = chol(B + diag(...))
 * (packed, shared; dM scratch). */
static __device__ void warp_precond(const struct solver_batch *b, const float *B, unsigned long long frozen, float lam,
                                    int t, int T, int smooth, const unsigned long long *act, float *lamd, float *F,
                                    float *dM, unsigned lane)
{
    const int n = rt_tangent_dim(b->tree), pk = n * (n + 1) / 2;
    for (int i = (int)lane; i < pk; i += 32) F[i] = B[i];
    __syncwarp();
    for (int c = (int)lane; c < n; c += 32) {
        int fz = (int)((frozen >> c) & 1ull);
        float bcc = B[pk_idx(c, c)];
        float sd = (smooth && !fz) ? frame_smooth_diag(b, c, t, T) : 0.0f;
        if (smooth && !fz && act) sd = sd + frame_vlim_diag(b, act, c, t, T);
        float D = fz ? 1.0f : bcc + sd;
        if (!(D > FRAME_DMIN)) D = FRAME_DMIN;
        lamd[c] = lam * D;
        float m = (bcc + lamd[c]) + sd;
        F[pk_idx(c, c)] = m;
        dM[c] = m;
    }
    __syncwarp();
    warp_chol(F, dM, n, lane);
}

/* Step j of group_chol_solve's forward substitution (phase ph: pivot j is
 * coordinate slot ph of lane j mod LPF). */
template <int LPF, int NC>
static __device__ __forceinline__ void group_fwd_step(const float *F, int n, unsigned hl, float *v,
                                                      const float *const *row_of, int ph, int j)
{
    float zj = __shfl_sync(0xffffffffu, v[ph], j & (LPF - 1), LPF) * F[pk_idx(j, j)];
#pragma unroll
    for (int m = ph; m < NC; m++) {
        int i = (int)hl + LPF * m;
        if (m == ph) {
            if (i == j) v[m] = zj;
            else if (i > j && i < n) v[m] = v[m] - row_of[m][j] * zj;
        } else if (i < n) {
            v[m] = v[m] - row_of[m][j] * zj;
        }
    }
}

/* Step j of the backward substitution. */
template <int LPF, int NC>
static __device__ __forceinline__ void group_bwd_step(const float *F, unsigned hl, float *v, int ph, int j)
{
    const float *row = F + pk_idx(j, 0);
    float zj = __shfl_sync(0xffffffffu, v[ph], j & (LPF - 1), LPF) * row[j];
#pragma unroll
    for (int m = 0; m <= ph; m++) {
        int i = (int)hl + LPF * m;
        if (m == ph) {
            if (i == j) v[m] = zj;
            else if (i < j) v[m] = v[m] - row[i] * zj;
        } else { /* i < LPF ph <= j < n */
            v[m] = v[m] - row[i] * zj;
        }
    }
}

/* frame_chol_solve with a packed factor F (shared) on a group of LPF lanes
 * (a power of two <= 32; LPF = 32: one frame per warp): lane hl of the
 * group holds coordinates hl, hl + LPF, ..., hl + (NC - 1) LPF in v[0..NC)
 * (n <= NC LPF). Phase ph takes the pivots LPF ph .. LPF (ph + 1) - 1,
 * owned by coordinate slot ph and broadcast inside the group (LPF-wide
 * shuffles); every coordinate subtracts the same products in the same
 * order as frame_chol_solve (forward j ascending, backward j descending).
 * Every lane of the warp calls it. */
template <int LPF, int NC>
static __device__ __forceinline__ void group_chol_solve(const float *F, int n, unsigned hl, float *v)
{
    const float *row_of[NC]; /* row starts of the lane's coordinates (the forward reads row i, column j) */
#pragma unroll
    for (int m = 0; m < NC; m++) {
        int i = (int)hl + LPF * m;
        row_of[m] = F + pk_idx(i < n ? i : 0, 0);
    }
#pragma unroll
    for (int ph = 0; ph < NC; ph++) {
        if (LPF * (ph + 1) <= n) {
            /* a whole phase, unrolled: every index below is a constant */
#pragma unroll
            for (int jj = 0; jj < LPF; jj++)
                group_fwd_step<LPF, NC>(F, n, hl, v, row_of, ph, LPF * ph + jj);
        } else {
            int j1 = LPF * (ph + 1) < n ? LPF * (ph + 1) : n;
            for (int j = LPF * ph; j < j1; j++) group_fwd_step<LPF, NC>(F, n, hl, v, row_of, ph, j);
        }
    }
#pragma unroll
    for (int ph = NC - 1; ph >= 0; ph--) {
        if (LPF * (ph + 1) <= n) {
#pragma unroll
            for (int jj = LPF - 1; jj >= 0; jj--) group_bwd_step<LPF, NC>(F, hl, v, ph, LPF * ph + jj);
        } else {
            int j1 = LPF * (ph + 1) < n ? LPF * (ph + 1) : n;
            for (int j = j1 - 1; j >= LPF * ph; j--) group_bwd_step<LPF, NC>(F, hl, v, ph, j);
        }
    }
}

/* frame_chol_solve on one warp with a packed factor; lane l holds
 * coordinates l (z0) and l + 32 (z1). */
static __device__ __forceinline__ void warp_chol_solve_pk(const float *F, int n, unsigned lane, float *z0, float *z1)
{
    float v[2] = {*z0, *z1};
    group_chol_solve<32, 2>(F, n, lane, v);
    *z0 = v[0];
    *z1 = v[1];
}

/* (B x)_c for packed symmetric B (shared) and x (shared), c = lane (*y0)
 * and c = lane + 32 (*y1): frame_block_mul's order, j ascending from 0.
 * Every lane runs the same j loop (B_cj read from row c while j <= c, from
 * row j past it), so no lane waits on another's longer loop; the reads of
 * one step hit distinct banks (row starts c (c + 1) / 2 are distinct mod
 * 32, and row j's entries are consecutive). */
static __device__ __forceinline__ void warp_block_rows(const float *B, const float *x, int n, unsigned lane, float *y0,
                                                       float *y1)
{
    const int c0 = (int)lane, c1 = (int)lane + 32;
    const int r0 = pk_idx(c0, 0), r1 = pk_idx(c1, 0);
    float a0 = 0.0f, a1 = 0.0f;
    if (n > 32) {
        /* j < 32, unrolled (every offset a constant): row c1's entries j
         * all lie in its own row (j < 32 <= c1); row c0's in its row while
         * j <= c0, then in row j at column c0. */
        const int h1 = c1 < n;
        const float *b0r = B + r0, *b0c = B + c0, *b1r = B + (h1 ? r1 : 0);
#pragma unroll
        for (int j = 0; j < 32; j++) {
            float xj = x[j];
            float bj = j <= c0 ? b0r[j] : b0c[j * (j + 1) / 2];
            a0 = a0 + bj * xj;
            if (h1) a1 = a1 + b1r[j] * xj;
        }
        for (int j = 32; j < n; j++) { /* j > c0 from here on */
            float xj = x[j];
            int tj = pk_idx(j, 0);
            a0 = a0 + B[tj + c0] * xj;
            if (h1) a1 = a1 + B[j <= c1 ? r1 + j : tj + c1] * xj;
        }
    } else if (c0 < n) {
        int tj = 0; /* pk_idx(j, 0) */
        for (int j = 0; j < n; j++) {
            a0 = a0 + B[j <= c0 ? r0 + j : tj + c0] * x[j];
            tj += j + 1;
        }
    }
    *y0 = a0;
    *y1 = a1;
}

/* frame_init_solve on one warp. x (shared) is updated in place. Uses ws.B,
 * F, g, d, Bd, lamd, dM, xt, lk, rs, jp, jo. Returns the final damping and
 * in *cost_out the cost of the final x: frame_eval's value for it, which
 * the loop already has (the cost of every accepted trial state is computed
 * by the same warp_eval on a copy of the same bits), so the caller needs no
 * further evaluation. */
static __device__ float warp_init_solve(const struct solver_batch *b, const struct warp_tabs &tb, int f, float *x,
                                        int iters, float lam0, const struct warp_ws &ws, unsigned lane,
                                        float *cost_out)
{
    const struct rt_tree *tr = b->tree;
    const int n = rt_tangent_dim(tr), cols = rt_state_cols(tr);
    float lam = lam0, nu = 2.0f;
    float cost = warp_eval(b, tb, f, x, NULL, 0, 1, ws, ws.B, ws.g, lane);
    unsigned long long fz = warp_freeze(tr, x, ws.B, ws.g, lane);
    for (int it = 0; it < iters; it++) {
        warp_precond(b, ws.B, fz, lam, 0, 1, 0, NULL, ws.lamd, ws.F, ws.dM, lane);
        float z0 = (int)lane < n ? ws.g[lane] : 0.0f, z1 = (int)lane + 32 < n ? ws.g[lane + 32] : 0.0f;
        warp_chol_solve_pk(ws.F, n, lane, &z0, &z1);
        if ((int)lane < n) ws.d[lane] = -z0;
        if ((int)lane + 32 < n) ws.d[lane + 32] = -z1;
        __syncwarp();
        {
            float b0, b1;
            warp_block_rows(ws.B, ws.d, n, lane, &b0, &b1);
            if ((int)lane < n) ws.Bd[lane] = b0;
            if ((int)lane + 32 < n) ws.Bd[lane + 32] = b1;
        }
        __syncwarp();
        float pred = -frame_dot(ws.g, ws.d, n) - 0.5f * frame_dot(ws.d, ws.Bd, n);
        if (lane == 0) frame_retract(tr, x, ws.d, ws.xt);
        __syncwarp();
        float cnew = warp_eval(b, tb, f, ws.xt, NULL, 0, 1, ws, NULL, NULL, lane);
        float rho = lm_rule_rho(cost, cnew, pred);
        if (rho > 0.0f) {
            for (int i = (int)lane; i < cols; i += 32) x[i] = ws.xt[i];
            __syncwarp();
            lam = lm_rule_shrink(lam, rho, LM_RULE_INIT_LAMBDA_MIN);
            nu = 2.0f;
            int done = lm_rule_init_done(cost, cnew); /* the same on every lane */
            cost = cnew;
            if (done) break;
            if (it + 1 < iters) {
                /* ws.lk and ws.rs hold x's records (the trial eval above) */
                cost = warp_eval(b, tb, f, x, NULL, 0, 1, ws, ws.B, ws.g, lane, 1);
                fz = warp_freeze(tr, x, ws.B, ws.g, lane);
            }
        } else {
            lam = lam * nu;
            nu = nu * 2.0f;
            if (lam > LM_RULE_INIT_LAMBDA_MAX) break;
        }
    }
    *cost_out = cost;
    return lam;
}

#endif
