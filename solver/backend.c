/* backend.c -- backend selection, the configuration's defaults and checks,
 * and the thin wrapper around the ops table (backend.h). The backends
 * themselves live in cpu/cpu_backend.c and cuda/cuda_backend.cu. */
#include "backend.h"

#include <string.h>

void solver_backend_config_default(struct solver_backend_config *c)
{
    memset(c, 0, sizeof *c);
}

static int is_flag(int v) { return v == 0 || v == 1; }

enum rt_status solver_backend_config_check(const struct solver_backend_config *c, struct rt_err *err)
{
    if (c->threads < 0 || c->threads > SOLVER_MAX_THREADS)
        return rt_err_set(err, RT_EINVAL, "backend.threads", "%d (want 0..%d; 0: one per core)", c->threads,
                          SOLVER_MAX_THREADS);
    if (c->cuda_devices < 0)
        return rt_err_set(err, RT_EINVAL, "backend.cuda_devices", "%d (want >= 0; 0: all)", c->cuda_devices);
    if (!is_flag(c->cuda_profile))
        return rt_err_set(err, RT_EINVAL, "backend.cuda_profile", "%d (want 0 or 1)", c->cuda_profile);
    if (!is_flag(c->cuda_unrolled_cg))
        return rt_err_set(err, RT_EINVAL, "backend.cuda_unrolled_cg", "%d (want 0 or 1)", c->cuda_unrolled_cg);
    if (!is_flag(c->cpu_profile))
        return rt_err_set(err, RT_EINVAL, "backend.cpu_profile", "%d (want 0 or 1)", c->cpu_profile);
    if (!is_flag(c->cuda_cg_up))
        return rt_err_set(err, RT_EINVAL, "backend.cuda_cg_up", "%d (want 0 or 1)", c->cuda_cg_up);
    if (!is_flag(c->cuda_priority))
        return rt_err_set(err, RT_EINVAL, "backend.cuda_priority", "%d (want 0 or 1)", c->cuda_priority);
    return RT_OK;
}

enum rt_status solver_backend_init(struct solver_backend *out, const char *name,
                                   const struct solver_backend_config *cfg, struct rt_err *err)
{
    struct solver_backend_config def;
    out->ops = NULL;
    out->ctx = NULL;
    if (!cfg) {
        solver_backend_config_default(&def);
        cfg = &def;
    }
    enum rt_status st = solver_backend_config_check(cfg, err);
    if (st != RT_OK) return st;
    if (!name || !strcmp(name, "auto")) {
        if (solver_backend_cuda_init(out, cfg, NULL) == RT_OK) return RT_OK;
        return solver_backend_cpu_init(out, cfg, err);
    }
    if (!strcmp(name, "cpu")) return solver_backend_cpu_init(out, cfg, err);
    if (!strcmp(name, "cuda")) return solver_backend_cuda_init(out, cfg, err);
    return rt_err_set(err, RT_EINVAL, "backend", "unknown backend '%s' (want cpu, cuda or auto)",
                      RT_QUOTE(name));
}

enum rt_status solver_backend_solve(struct solver_backend *be, const struct solver_batch *b,
                                    struct solver_result *res, struct rt_err *err)
{
    if (!be || !be->ops) return rt_err_set(err, RT_ESTATE, "backend", "backend not initialized");
    /* The one check of the batch per solve: backends rely on it. */
    enum rt_status st = solver_batch_check(b, err);
    if (st != RT_OK) return st;
    if (!res || !res->state || !res->clips) return rt_err_set(err, RT_EINVAL, "result", "no output arrays");
    return be->ops->solve(be->ctx, b, res, err);
}

void solver_backend_free(struct solver_backend *be)
{
    if (!be || !be->ops) return;
    if (be->ops->destroy) be->ops->destroy(be->ctx);
    be->ops = NULL;
    be->ctx = NULL;
}

void *solver_backend_host_alloc(struct solver_backend *be, size_t bytes)
{
    if (!be || !be->ops || !be->ops->host_alloc || !bytes) return NULL;
    return be->ops->host_alloc(be->ctx, bytes);
}

void solver_backend_host_free(struct solver_backend *be, void *p)
{
    if (p && be && be->ops && be->ops->host_free) be->ops->host_free(be->ctx, p);
}

const char *solver_backend_name(const struct solver_backend *be)
{
    return be && be->ops ? be->ops->name : "none";
}
