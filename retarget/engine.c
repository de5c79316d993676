/* engine.c -- the solver backend's configuration from the programs'
 * arguments and the RT_CUDA_* environment switches (engine.h). The one
 * place that reads those variables; it depends on solver/ alone, so the
 * GPU benchmarks and tests link it without the rest of retarget/. */
#include "engine.h"

#include <limits.h>
#include <stdlib.h>

/* 1 when the variable's value starts with '1' (the documented "=1"). */
static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '1';
}

/* A positive decimal integer (saturated at INT_MAX), or 0 for anything
 * else: unset, empty, zero, negative, or not all digits. */
static int env_count(const char *name)
{
    const char *v = getenv(name);
    long long n = 0;
    if (!v || !*v) return 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        if (n < INT_MAX) n = n * 10 + (*p - '0');
    }
    return n > INT_MAX ? INT_MAX : (int)n;
}

void rtg_backend_config_env(struct solver_backend_config *c, int threads)
{
    solver_backend_config_default(c);
    c->threads = threads;
    c->cuda_devices = env_count("RT_CUDA_DEVICES");
    c->cuda_profile = env_flag("RT_CUDA_PROFILE");
    c->cuda_unrolled_cg = env_flag("RT_CUDA_UNROLLED_CG");
    c->cuda_cg_up = env_flag("RT_CUDA_CG_UP");
    c->cpu_profile = env_flag("RT_CPU_PROFILE");
}

enum rt_status rtg_backend_init(struct solver_backend *out, const char *name, int threads, struct rt_err *err)
{
    struct solver_backend_config cfg;
    rtg_backend_config_env(&cfg, threads);
    return solver_backend_init(out, name, &cfg, err);
}
