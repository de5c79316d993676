/* fuzz_profile.c -- libFuzzer target for the profile reader (JSON through
 * cJSON into struct rtg_profile): any bytes give either a profile that
 * satisfies the invariants profile.h states, or an error that names where,
 * never a crash, a sanitizer report or a leak. Built and run by `make fuzz`. */
#include <stdint.h>
#include <stdlib.h>

#include "../retarget/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rtg_profile *p = NULL;
    struct rt_err err;
    int st = rtg_profile_parse((const char *)data, size, "fuzz.json", &p, &err);
    if (st != RT_OK) {
        if (p || !err.where[0] || !err.msg[0]) abort();
        return 0;
    }
    if (!p || p->n_links < 1 || p->n_links > RTG_PROFILE_MAX_LINKS || p->links[0].parent != -1) abort();
    for (int k = 1; k < p->n_links; k++)
        if (p->links[k].parent < 0 || p->links[k].parent >= k) abort();
    struct solver_options o = {0};
    rtg_profile_solver_options(p, &o);
    rtg_profile_free(p);
    return 0;
}
