/* test_status.c -- base/status.c, the layer every module shares:
 * rt_mul_size at its overflow boundary, rt_err_set and rt_log keeping a
 * record on one line whatever the input puts in `where` or the message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/status.h"
#include "test.h"

static void test_mul_size(void)
{
    size_t out = 0;
    CHECK(rt_mul_size(SIZE_MAX / 2, 2, &out) && out == SIZE_MAX / 2 * 2);
    CHECK(!rt_mul_size(SIZE_MAX / 2 + 1, 2, &out));
    CHECK(rt_mul_size(0, SIZE_MAX, &out) && out == 0);
}

static void test_err_one_line(void)
{
    struct rt_err err;
    rt_err_set(&err, RT_EPARSE, "a\nb", "x\ry\nz");
    CHECK_EQ_STR(err.where, "a b");
    CHECK_EQ_STR(err.msg, "x y z");
}

/* rt_log's record, read back from a file standing in for stderr. */
static void test_log_one_line(void)
{
    char path[] = "/tmp/test_status.XXXXXX", buf[512] = "";
    int fd = mkstemp(path), saved = dup(2);
    CHECK(fd >= 0 && saved >= 0);
    if (fd < 0 || saved < 0) return;
    fflush(stderr);
    dup2(fd, 2);
    rt_log("warn", "test", "db\npath", "two\nlines");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fdopen(fd, "r");
    if (f) {
        rewind(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    unlink(path);
    CHECK_EQ_STR(buf, "warn test: db path: two lines\n");
}

int main(void)
{
    test_mul_size();
    test_err_one_line();
    test_log_one_line();
    CHECK_EQ_STR(rt_status_str(RT_EBUSY), "too many requests");
    return test_report("test_status");
}
