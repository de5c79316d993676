/* clip_util.h -- helpers of the tests that read the shared capture clips
 * (test_retarget, test_skeleton, test_job, test_units): load a clip by its
 * path under the shared data folder, read a frame cap from the
 * environment, and fill a job spec for a BVH clip. */
#ifndef RT_TEST_CLIP_UTIL_H
#define RT_TEST_CLIP_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../retarget/job.h"
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

/* A job spec for BVH `text` (len bytes, borrowed) onto `robot` ("g1"),
 * errors labelled `label`; everything else zero (the profile detected). */
static inline void test_spec_bvh(struct rtg_job_spec *s, const struct kin_robot *robot, const char *text,
                                 size_t len, const char *label)
{
    memset(s, 0, sizeof *s);
    s->robot = robot;
    s->robot_name = "g1";
    s->source_kind = RTG_SRC_BVH;
    s->source = text;
    s->source_len = len;
    s->source_label = label;
}

#endif
