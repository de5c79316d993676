/* backend.c -- backend selection and the thin wrapper around the ops table. */
#include "backend.h"

#include <string.h>

static enum rt_status cpu_solve(void *ctx, const struct solver_batch *b, struct solver_result *res,
                                struct rt_err *err)
{
    (void)ctx;
    return solver_solve_cpu(b, res, err);
}

static const struct solver_backend_ops cpu_ops = {
    .name = "cpu",
    .solve = cpu_solve,
    .synchronize = NULL,
    .destroy = NULL,
};

enum rt_status solver_backend_init(struct solver_backend *out, const char *name,
                                   struct rt_err *err)
{
    out->ops = NULL;
    out->ctx = NULL;
    if (!name || !strcmp(name, "auto")) {
        if (solver_backend_cuda_init(out, NULL) == RT_OK) return RT_OK;
        out->ops = &cpu_ops;
        return RT_OK;
    }
    if (!strcmp(name, "cpu")) {
        out->ops = &cpu_ops;
        return RT_OK;
    }
    if (!strcmp(name, "cuda")) return solver_backend_cuda_init(out, err);
    return rt_err_set(err, RT_EINVAL, "backend", "unknown backend '%.40s' (want cpu, cuda or auto)",
                      name);
}

enum rt_status solver_backend_solve(struct solver_backend *be, const struct solver_batch *b,
                                    struct solver_result *res, struct rt_err *err)
{
    if (!be || !be->ops) return rt_err_set(err, RT_ESTATE, "backend", "backend not initialized");
    enum rt_status st = solver_batch_check(b, err);
    if (st != RT_OK) return st;
    return be->ops->solve(be->ctx, b, res, err);
}

void solver_backend_free(struct solver_backend *be)
{
    if (!be || !be->ops) return;
    if (be->ops->destroy) be->ops->destroy(be->ctx);
    be->ops = NULL;
    be->ctx = NULL;
}

const char *solver_backend_name(const struct solver_backend *be)
{
    return be && be->ops ? be->ops->name : "none";
}
