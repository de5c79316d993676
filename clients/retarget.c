/* retarget.c -- the `retarget` command-line tool.
 *
 *   retarget inspect | solve | render | batch | submit | status | wait | fetch | cancel | list
 *
 * `retarget --help` lists the verbs; `retarget VERB --help` a verb's
 * options, generated from the option table (retarget/options.c).
 *
 * Errors are one line on stderr, "retarget: WHERE: reason", and a non-zero
 * exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"
#include "../kinematics/robot.h"
#include "../retarget/options.h"
#include "../retarget/roles.h"
#include "cli.h"

/* The verbs, their synopses and the option-table scope of their flags:
 * every usage text is generated from retarget/options.c's table. */
static const struct verb {
    const char *name, *synopsis;
    unsigned scope;
} verbs[] = {
    {"inspect", "retarget inspect ROBOT.urdf|ROBOT.xml|ROBOT-NAME|CLIP.bvh [--roles]   (JSON summary; --roles: the robot's body roles)", 0},
    {"solve", "retarget solve SOURCE... --robot NAME|FILE [options]   (offline, no server)", RTG_SCOPE_SOLVE},
    {"render", "retarget render CLIP.bvh RESULT.csv --robot NAME -o FILE.svg", RTG_SCOPE_RENDER},
    {"batch", "retarget batch CORPUS_DIR --robot R --out DIR [options]   (locally, or --server)", RTG_SCOPE_BATCH},
    {"submit", "retarget submit SOURCE --robot R [options]   (a BVH clip, joint positions or, with --source-robot, a trajectory; prints the job id)", RTG_SCOPE_SUBMIT},
    {"status", "retarget status ID", RTG_SCOPE_CLIENT},
    {"wait", "retarget wait ID   (a progress bar on stderr)", RTG_SCOPE_CLIENT},
    {"fetch", "retarget fetch ID -o DIR [--format csv|npz]", RTG_SCOPE_CLIENT},
    {"cancel", "retarget cancel ID", RTG_SCOPE_CLIENT},
    {"list", "retarget list", RTG_SCOPE_CLIENT},
    {"options", "retarget options   (the job options as the Markdown table of docs/api.md)", 0},
};
#define N_VERBS (sizeof verbs / sizeof verbs[0])

static void verb_usage(FILE *f, const struct verb *v)
{
    fprintf(f, "usage: %s\n", v->synopsis);
    if (v->scope) rtg_options_usage(f, v->scope);
}

static void usage(FILE *f)
{
    for (size_t i = 0; i < N_VERBS; i++) fprintf(f, "%s %s\n", i ? "      " : "usage:", verbs[i].synopsis);
    fputs("'retarget VERB --help' lists a verb's options.\n", f);
}

static int cmd_inspect(int argc, char **argv)
{
    struct rt_err err;
    char *json = NULL;
    int roles = 0;
    if (argc == 2 && !strcmp(argv[1], "--roles")) roles = 1, argc = 1;
    else if (argc == 2 && !strcmp(argv[0], "--roles")) roles = 1, argc = 1, argv++;
    if (argc != 1) {
        usage(stderr);
        return 2;
    }
    rt_err_clear(&err);
    if (roles) {
        /* The roles as found, then the refusal of a robot that lacks one
         * (exit status 1 after the JSON). */
        struct kin_robot *robot = NULL;
        struct rtg_robot_roles rr;
        if (cli_is_bvh(argv[0])) {
            rt_err_set(&err, RT_EINVAL, argv[0], "--roles takes a robot, not a clip");
            return cli_fail(&err);
        }
        if (kin_robot_load(argv[0], &robot, &err) != RT_OK) return cli_fail(&err);
        enum rt_status st = rtg_robot_roles(robot, &rr, &err);
        json = rtg_robot_roles_json(robot, &rr);
        kin_robot_free(robot);
        if (!json) {
            rt_err_set(&err, RT_ENOMEM, argv[0], "out of memory");
            return cli_fail(&err);
        }
        puts(json);
        free(json);
        return st == RT_OK ? 0 : cli_fail(&err);
    }
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
    for (size_t i = 0; i < N_VERBS && argc >= 3; i++)
        if (!strcmp(argv[1], verbs[i].name))
            for (int k = 2; k < argc; k++)
                if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
                    verb_usage(stdout, &verbs[i]);
                    return 0;
                }
    if (!strcmp(argv[1], "inspect")) return cmd_inspect(argc - 2, argv + 2);
    if (!strcmp(argv[1], "options")) {
        rtg_options_markdown(stdout);
        return 0;
    }
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
