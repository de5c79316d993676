/* cpu_internal.h -- the CPU backend's internal interfaces: the thread pool,
 * the host reduction driver, the solver context shared by cpu_backend.c,
 * cpu_lm.c, cpu_cg.c and cpu_direct.c, and test hooks. Not part of the
 * public API; tests include it to compare the PCG and the direct linear
 * solves and to check that a context reused across solves leaks nothing
 * from one solve into the next. */
#ifndef RT_SOLVER_CPU_INTERNAL_H
#define RT_SOLVER_CPU_INTERNAL_H

#include <stddef.h>

#include "../solver.h"

/* ---- thread pool --------------------------------------------------- */
/* A fixed set of threads (the caller is thread 0) that runs one task over
 * items [0, n): the threads claim contiguous ranges, long ones first, until
 * none is left (cpu_pool.c), so fn may get any number of ranges on any
 * thread. Results never depend on P or on which thread ran an item because
 * every item writes only its own outputs (DESIGN.md "The numerical
 * contract" point 2); tid only picks the thread's scratch. The CPU backend
 * creates one per context and keeps it for the context's life; no
 * globals. */
struct cpu_pool;
typedef void (*cpu_task_fn)(void *ctx, int tid, size_t begin, size_t end);
enum rt_status cpu_pool_create(int threads, struct cpu_pool **out, struct rt_err *err);
void cpu_pool_run(struct cpu_pool *p, cpu_task_fn fn, void *ctx, size_t n_items);
int cpu_pool_threads(const struct cpu_pool *p);
void cpu_pool_free(struct cpu_pool *p); /* NULL-safe; joins the threads */
/* Timing (the profile): with `on`, each run adds its threads' busy seconds,
 * its slowest thread's and its wall; take_times returns those sums since
 * the last take (or since timing was set) and clears them. */
void cpu_pool_set_timing(struct cpu_pool *p, int on);
void cpu_pool_take_times(struct cpu_pool *p, double *busy, double *max, double *wall);

/* ---- reduction driver ---------------------------------------------- */
/* Sum of x[0..n) in the reduce.h order, executed by length: up to
 * CPU_REDUCE_SERIAL_BLOCKS blocks on the calling thread in one loop, longer
 * sequences with the first level's blocks spread over the pool, then the
 * next levels serially. Same bits either way. `pool` may be NULL. */
#define CPU_REDUCE_SERIAL_BLOCKS 64
float cpu_reduce_sum(struct cpu_pool *pool, const float *x, size_t n);

/* ---- test hooks (cpu_backend.c) ------------------------------------ */
struct solver_backend;

/* On the CPU backend `be`, for one linearization of every clip of `b`
 * (checked here with solver_batch_check()) at `state`
 * (n_frames * cols) with clip damping `lambda` (per-frame factors 1),
 * writes the PCG step (b->opt.max_cg_iters, b->opt.cg_tol) into d_pcg and
 * the direct banded double-precision step into d_direct (each n_frames *
 * tangent_dim floats). cg_iters (may be NULL) receives the CG iterations of
 * clip 0. RT_EINVAL when `be` is not a CPU backend or `b` is invalid. */
enum rt_status solver_cpu_debug_steps(struct solver_backend *be, const struct solver_batch *b,
                                      const float *state, float lambda, float *d_pcg, float *d_direct,
                                      int *cg_iters, struct rt_err *err);

/* With `on` set, every later solve on the CPU backend `be` first fills its
 * whole work arena with 0xff bytes (NaN floats, -1 integers) before it sets
 * up the batch, so that any read of a value left by an earlier solve shows
 * in the results. Returns 0, or -1 when `be` is not a CPU backend. */
int solver_cpu_debug_poison(struct solver_backend *be, int on);

/* ---- solver context ------------------------------------------------ */
/* The phases of a solve that the profile (config cpu_profile) times. */
enum { CPU_PH_START, CPU_PH_INIT, CPU_PH_REPAIR, CPU_PH_LIN, CPU_PH_PRECOND, CPU_PH_PCG, CPU_PH_EVAL,
       CPU_PH_ACCEPT, CPU_PH_COPY, CPU_PH_N };

struct cpu_clip {
    int off, T;         /* first global frame, frames */
    int active;         /* LM still running */
    int sel;            /* selected for the current phase */
    int cg_on, cg_it;   /* PCG running; iterations this LM step */
    int need_lin;       /* B, g must be recomputed at x */
    int lm_iters, cg_total, term;
    float lambda, nu, dec_prev; /* dec_prev: lm_rule_step's */
    float cost, cost_t, pred;
    float gg, rz, alpha, beta;
    float start_cost, initial_cost;
    float mark; /* cost at the last progress test (lm_rule_end_iter) */
};

/* The blocks B and factors F in quads: frames 4q..4q+3 (global) share quad
 * q, which holds the lower triangle of their blocks (i >= j, row-major:
 * entry (i, j) at i(i+1)/2 + j) as four-float vectors, lane l the frame
 * 4q + l. The PCG's per-frame products then run on four frames at once
 * with each lane doing frame_block_mul's and frame_chol_solve's operations
 * in their order (the same bits), and read half the bytes of full blocks
 * (B is symmetric to the bit: frame_eval mirrors its upper triangle; F
 * holds L below the diagonal and 1 / L_ii on it). A lane past nf is never
 * stored. cpu_quad_at() (after the context) gives the index of entry
 * (i, j), i >= j, of frame f's block. */
#define CPU_QUAD 4

/* The CPU backend's context. The pool and the thread count are fixed at
 * creation; everything else belongs to the solve in progress.
 *
 * Invariants: every per-solve array below points into `arena`, laid out by
 * cpu_ctx_prepare() for the current batch (sizes nf, nc, n, cols, nl); the
 * arena holds arena_cap bytes, grows to the largest batch seen and shrinks
 * only when the context is freed. Nothing in it carries over from one solve
 * to the next: cpu_ctx_prepare() zeroes `clip`, sets `clip_of` and `mu`,
 * and every other array is written by a phase of the solve before any
 * phase reads it (the arena is never assumed to be zero; with `poison` set
 * it is filled with 0xff bytes on every solve to prove it). */
struct cpu_ctx {
    struct cpu_pool *pool;
    int threads;
    int poison;                   /* test hook: solver_cpu_debug_poison() */
    int profile;                  /* config cpu_profile: one timing line per solve (cpu_lm.c) */
    double prof_t;                /* with profile: the last mark */
    struct {                      /* with profile, ms per phase: its wall, and of the pool's runs in it the
                                     threads' busy sum, the slowest thread's and the runs' wall */
        double ms[CPU_PH_N], busy[CPU_PH_N], max[CPU_PH_N], pool[CPU_PH_N];
    } prof;
    unsigned char *arena;
    size_t arena_cap;
    /* the current batch (borrowed for one solve) and its sizes */
    const struct solver_batch *b;
    const struct solver_batch *binit; /* b with the initialization's weights (init_solve) */
    const struct rt_tree *tr;
    int n, cols, nf, nc, nl;
    int *clip_of;                 /* [nf] */
    struct cpu_clip *clip;        /* [nc] */
    float *x, *xt;                /* [nf*cols] state, trial state */
    float *dq;                    /* [nf*n] forward differences of the state being evaluated */
    float *B, *F;                 /* blocks, factors: in quads (below), [nq*np*4] */
    int np;                       /* n(n+1)/2: a block's lower triangle */
    float *g, *lamd, *d, *r, *z, *p, *q; /* [nf*n] */
    unsigned long long *frozen;   /* [nf] */
    unsigned long long *vact;     /* [nf] velocity-limit masks at the linearization point */
    float *mu;                    /* [nf] per-frame damping factor */
    float *part, *part_t, *pred_f;/* [nf] per-frame cost at x, at xt, predicted decrease */
    float *gmax_f;                /* [nf] max |g| of the frame's entries (the linearization's) */
    float *tscratch;              /* per thread: links + one n*n block + init scratch */
    size_t tscratch_stride;
    /* dot-product blocks (rebuilt per call) */
    int *blk_clip;
    size_t *blk_start;
    float *blk_part[3];
    size_t blk_cap;
    float *red_scratch;           /* serial reduction scratch */
    /* per-clip dot products: the LM step's |d|^2, |x|^2, and the PCG's */
    float (*dot_d)[3], (*dot_x)[3], (*dot_cg)[3];
    int *cg_was;                  /* [nc] sel before the PCG */
    /* the selected clips of the phase cpu_run_selected() runs: their
     * indices and where each one's frames start among theirs */
    int *sel_list;                /* [nc] */
    size_t *sel_start;            /* [nc + 1] */
    int sel_n;
    cpu_task_fn ph_fn;
    /* phase arguments */
    const float *ph_state;
    float *ph_out;
    const float *ph_u[3], *ph_v[3];
    int ph_ndot, ph_width, ph_undamped;
};

/* cpu_lm.c: the whole solve of the batch cpu_ctx_prepare() set up, its
 * results into `res` (room for the batch); and the test hook's steps. */
enum rt_status cpu_lm_solve(struct cpu_ctx *c, struct solver_result *res, struct rt_err *err);
enum rt_status cpu_lm_debug_steps(struct cpu_ctx *c, const float *state, float lambda, float *d_pcg,
                                  float *d_direct, int *cg_iters, struct rt_err *err);
static inline size_t cpu_quad_at(const struct cpu_ctx *c, size_t f, int i, int j)
{
    return ((f / CPU_QUAD) * (size_t)c->np + (size_t)i * (size_t)(i + 1) / 2 + (size_t)j) * CPU_QUAD + f % CPU_QUAD;
}

void cpu_linearize(struct cpu_ctx *c, const float *state);
void cpu_costs(struct cpu_ctx *c, const float *state, float *out);
void cpu_precondition(struct cpu_ctx *c);
void cpu_pcg(struct cpu_ctx *c);
void cpu_predict(struct cpu_ctx *c);
enum rt_status cpu_direct(struct cpu_ctx *c, struct rt_err *err);
/* Per clip c with sel set: out[c] = sum over entries (frame, coordinate) of
 * u*v for up to 3 pairs (width floats per frame), reduce.h order. */
void cpu_dots(struct cpu_ctx *c, int ndot, const float *const *u, const float *const *v, int width,
              float out[][3]);
void cpu_select_all_active(struct cpu_ctx *c);
/* Runs the per-frame phase `fn` over the frames of the clips with `sel`
 * set, shared evenly by frame count among the pool's threads (fn gets
 * ranges of global frames, each within one clip). Splitting [0, nf) would
 * leave a thread whose frames belong to clips that have stopped with
 * nothing to do while its neighbours carry the clips still running; which
 * thread runs a frame never changes what it computes. */
void cpu_run_selected(struct cpu_ctx *c, cpu_task_fn fn);

#endif
