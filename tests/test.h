/* test.h -- a tiny test harness, after Redis testhelp.h.
 *
 * CHECK* macros count passes and failures and print "file:line: expr: got vs
 * want" for each failure; test_report() prints "NAME: N passed, N failed"
 * and returns the process exit code. TEST_SKIP exits 77, which `make test`
 * counts as skipped, never as passed; after a failed CHECK it exits with the
 * failure report instead. */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/status.h"

static int test_passed, test_failed;

#define CHECK(expr)                                                                  \
    do {                                                                             \
        if (expr) test_passed++;                                                     \
        else { test_failed++; fprintf(stderr, "%s:%d: %s: false\n", __FILE__, __LINE__, #expr); } \
    } while (0)

#define CHECK_EQ_INT(got, want)                                                      \
    do {                                                                             \
        long long g_ = (long long)(got), w_ = (long long)(want);                     \
        if (g_ == w_) test_passed++;                                                 \
        else { test_failed++; fprintf(stderr, "%s:%d: %s: got %lld want %lld\n", __FILE__, __LINE__, #got, g_, w_); } \
    } while (0)

#define CHECK_EQ_STR(got, want)                                                      \
    do {                                                                             \
        const char *g_ = (got), *w_ = (want);                                        \
        if (g_ && w_ && strcmp(g_, w_) == 0) test_passed++;                          \
        else { test_failed++; fprintf(stderr, "%s:%d: %s: got \"%s\" want \"%s\"\n", __FILE__, __LINE__, #got, g_ ? g_ : "(null)", w_ ? w_ : "(null)"); } \
    } while (0)

#define CHECK_NEAR(got, want, tol)                                                   \
    do {                                                                             \
        double g_ = (double)(got), w_ = (double)(want), t_ = (double)(tol);          \
        if (fabs(g_ - w_) <= t_) test_passed++;                                      \
        else { test_failed++; fprintf(stderr, "%s:%d: %s: got %.9g want %.9g (tol %.3g)\n", __FILE__, __LINE__, #got, g_, w_, t_); } \
    } while (0)

/* Compares n elements of two arrays bit for bit; reports the first difference. */
#define CHECK_BITS_EQ(a, b, n)                                                       \
    do {                                                                             \
        size_t n_ = (size_t)(n), i_;                                                 \
        const unsigned char *a_ = (const unsigned char *)(a), *b_ = (const unsigned char *)(b); \
        size_t es_ = sizeof *(a);                                                    \
        for (i_ = 0; i_ < n_; i_++) if (memcmp(a_ + i_ * es_, b_ + i_ * es_, es_)) break; \
        if (i_ == n_) test_passed++;                                                 \
        else { test_failed++; fprintf(stderr, "%s:%d: %s vs %s: first difference at element %zu of %zu\n", __FILE__, __LINE__, #a, #b, i_, n_); } \
    } while (0)

static inline int test_report(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
    return test_failed ? 1 : 0;
}

/* TEST_SKIP's body: exit 77 when no CHECK has failed so far; after a failed
 * CHECK, the failure report instead (named after the source file), so that a
 * skip later in the run never hides a failure. */
static inline void test_skip_exit(const char *file, const char *why)
{
    if (test_failed == 0) {
        fprintf(stderr, "skipped: %s\n", why);
        exit(77);
    }
    const char *base = strrchr(file, '/');
    char name[64];
    snprintf(name, sizeof name, "%s", base ? base + 1 : file);
    char *dot = strrchr(name, '.');
    if (dot) *dot = 0;
    fprintf(stderr, "%s: stopped early (%s) after %d failed checks\n", name, why, test_failed);
    exit(test_report(name));
}

#define TEST_SKIP(why) test_skip_exit(__FILE__, why)

/* The whole file at `path` (at most 1 GiB) in a NUL-terminated malloc'd
 * buffer, its length in *len when `len` is not NULL; NULL when it cannot be
 * read. The caller frees the buffer. */
static inline char *test_slurp(const char *path, size_t *len)
{
    char *buf = NULL;
    if (rt_read_file(path, 1u << 30, &buf, len, NULL) != RT_OK) return NULL;
    return buf;
}

/* Path of the shared data folder: $RT_SHARED_DATA or ../shared/data. */
static inline const char *test_data_dir(void)
{
    const char *d = getenv("RT_SHARED_DATA");
    return d && d[0] ? d : "../shared/data";
}

#endif
