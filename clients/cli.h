/* cli.h -- subcommands of the `retarget` tool, one file each. Each takes the
 * arguments after its name and returns the process exit status. */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <strings.h>

#include "../kinematics/status.h"

int cli_solve(int argc, char **argv);
int cli_render(int argc, char **argv);

/* Prints "retarget: WHERE: reason" on stderr and returns 1. */
int cli_fail(const struct rt_err *err);

/* 1 when `path` names a BVH file (by extension). */
int cli_is_bvh(const char *path);

#endif
