/* cli.c -- helpers shared by the `retarget` subcommands. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int cli_fail(const struct rt_err *err)
{
    char line[RT_ERR_LINE_MAX];
    fprintf(stderr, "retarget: %s\n", rt_err_line(err, line, sizeof line));
    return 1;
}

enum rt_status cli_write_file(const char *path, const char *data, size_t len, int nl,
                              struct rt_err *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) return rt_err_set(err, RT_EIO, path, "cannot write: %s", strerror(errno));
    fwrite(data, 1, len, f);
    if (nl) fputc('\n', f);
    if (fclose(f)) return rt_err_set(err, RT_EIO, path, "write failed");
    return RT_OK;
}

void cli_base_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    snprintf(out, cap, "%s", b ? b + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

int cli_is_bvh(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && !strcasecmp(path + n - 4, ".bvh");
}

enum rt_status cli_mkdirs(const char *dir, struct rt_err *err)
{
    char tmp[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof tmp) return rt_err_set(err, RT_EINVAL, "folder", "bad folder path (%zu bytes)", n);
    memcpy(tmp, dir, n + 1);
    for (char *p = tmp + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(tmp, 0777) && errno != EEXIST)
                return rt_err_set(err, RT_EIO, dir, "cannot create folder %s: %s", tmp, strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
    return RT_OK;
}
