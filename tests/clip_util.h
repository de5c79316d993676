/* clip_util.h -- helpers of the tests that read the shared capture clips
 * (test_retarget, test_skeleton): load a clip by its path under the shared
 * data folder, and read a frame cap from the environment. */
#ifndef RT_TEST_CLIP_UTIL_H
#define RT_TEST_CLIP_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kinematics/bvh.h"
#include "test.h"

/* The positive integer in environment variable `name`, else `def` (unset,
 * not all digits, out of range). */
static inline int test_env_int(const char *name, int def)
{
    const char *s = getenv(name);
    char *end;
    if (!s || s[0] < '0' || s[0] > '9') return def;
    errno = 0;
    long n = strtol(s, &end, 10);
    return *end || errno || n < 1 || n > 1000000000L ? def : (int)n;
}

/* Loads test_data_dir()/rel; prints the error and returns NULL on failure.
 * The caller frees the clip with kin_clip_free(). */
static inline struct kin_clip *test_load_clip(const char *rel)
{
    char path[512];
    struct kin_clip *c = NULL;
    struct rt_err e;
    snprintf(path, sizeof path, "%s/%s", test_data_dir(), rel);
    if (kin_bvh_load(path, &c, &e)) {
        fprintf(stderr, "%s: %s: %s\n", path, e.where, e.msg);
        return NULL;
    }
    return c;
}

#endif
