/* cli.c -- helpers shared by the `retarget` subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_fail(const struct rt_err *err)
{
    char line[300];
    fprintf(stderr, "retarget: %s\n", rt_err_line(err, line, sizeof line));
    return 1;
}

int cli_is_bvh(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && !strcasecmp(path + n - 4, ".bvh");
}
