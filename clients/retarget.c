/* retarget.c -- the `retarget` command-line tool.
 *
 *   retarget inspect ROBOT.urdf|ROBOT.xml|NAME|CLIP.bvh
 *   retarget solve SOURCE... --robot NAME|URDF|MJCF [--source-robot NAME|URDF|MJCF]
 *                  [--profile NAME|FILE] [-o DIR] [--batch] [--backend cpu|cuda|auto]
 *                  [--threads N] [--per-frame] [--no-header] [--fps F]
 *                  [--max-lm N] [--max-cg N] [--cg-tol T] [--linear pcg|direct] [--quiet]
 *   retarget render CLIP.bvh RESULT.csv --robot NAME -o FILE.svg
 *   retarget batch CORPUS_DIR --robot R --out DIR [--server URL] [--shard I/N] [--jobs N]
 *   retarget submit|status|wait|fetch|cancel|list ... [--server URL] [--token T]
 *
 * Errors are one line on stderr, "retarget: WHERE: reason", and a non-zero
 * exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../kinematics/robot.h"
#include "cli.h"

static void usage(FILE *f)
{
    fputs("usage: retarget inspect ROBOT.urdf|ROBOT.xml|ROBOT-NAME|CLIP.bvh\n"
          "       retarget solve SOURCE... --robot NAME|URDF|MJCF [--source-robot NAME|URDF|MJCF]\n"
          "                [--profile NAME|FILE] [-o DIR] [--batch] [--backend cpu|cuda|auto]\n"
          "                [--threads N] [--per-frame] [--no-header] [--fps F]\n"
          "                [--max-lm N] [--max-cg N] [--cg-tol T] [--linear pcg|direct] [--quiet]\n"
          "       retarget render CLIP.bvh RESULT.csv --robot NAME -o FILE.svg\n"
          "       retarget batch CORPUS_DIR --robot R --out DIR [--server URL] [--shard I/N] [--jobs N]\n"
          "       retarget submit CLIP --robot R [--profile P] [--source-robot S]   (prints the job id)\n"
          "       retarget status|wait|cancel ID;  retarget fetch ID -o DIR;  retarget list\n"
          "                (HTTP client: --server URL or $RETARGET_SERVER, --token T or $RETARGET_TOKEN)\n",
          f);
}

static int cmd_inspect(int argc, char **argv)
{
    struct rt_err err;
    char *json = NULL;
    if (argc != 1) {
        usage(stderr);
        return 2;
    }
    rt_err_clear(&err);
    if (cli_is_bvh(argv[0])) {
        struct kin_clip *clip = NULL;
        if (kin_bvh_load(argv[0], &clip, &err) != RT_OK) return cli_fail(&err);
        if (clip->warning[0]) fprintf(stderr, "retarget: %s: warning: %s\n", argv[0], clip->warning);
        json = kin_clip_inspect_json(clip);
        kin_clip_free(clip);
    } else {
        struct kin_robot *robot = NULL;
        if (kin_robot_load(argv[0], &robot, &err) != RT_OK) return cli_fail(&err);
        json = kin_robot_inspect_json(robot);
        kin_robot_free(robot);
    }
    if (!json) {
        rt_err_set(&err, RT_ENOMEM, argv[0], "out of memory");
        return cli_fail(&err);
    }
    puts(json);
    free(json);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "inspect")) return cmd_inspect(argc - 2, argv + 2);
    if (!strcmp(argv[1], "solve")) return cli_solve(argc - 2, argv + 2);
    if (!strcmp(argv[1], "batch")) return cli_batch(argc - 2, argv + 2);
    if (!strcmp(argv[1], "submit")) return cli_submit(argc - 2, argv + 2);
    if (!strcmp(argv[1], "status")) return cli_status(argc - 2, argv + 2);
    if (!strcmp(argv[1], "wait")) return cli_wait(argc - 2, argv + 2);
    if (!strcmp(argv[1], "fetch")) return cli_fetch(argc - 2, argv + 2);
    if (!strcmp(argv[1], "cancel")) return cli_cancel(argc - 2, argv + 2);
    if (!strcmp(argv[1], "list")) return cli_list(argc - 2, argv + 2);
    if (!strcmp(argv[1], "render")) return cli_render(argc - 2, argv + 2);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "retarget: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
