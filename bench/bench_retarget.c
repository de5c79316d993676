/* bench_retarget.c -- every clip of shared/data/clips and clips/edge onto G1
 * and H1 through the detected bundled profile or, when none fits by name,
 * the automatic mapping (retarget/skeleton.h): trajectory solve and
 * (optionally) the per-frame baseline, with the quality figures of each.
 * Prints one line per clip, robot and mode, and one "refused" line with the
 * reason for a clip that cannot be mapped; bench/RESULTS.md records the runs.
 *
 * Usage: bench_retarget [--per-frame] [--json] [--frames N] [--threads N] [CLIP.bvh...]
 * (default clips: $RT_SHARED_DATA/clips, the six clips and the nine edge clips). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../kinematics/bvh.h"
#include "../retarget/engine.h"
#include "../retarget/quality.h"
#include "../retarget/retarget.h"
#include "../kinematics/robot.h"

static void print_q(const char *clip, const char *robot, const char *mode, int frames,
                    const struct rtg_quality *q, double secs)
{
    printf("%-26s %-3s %-10s frames %5d  pos mean %.4f p95 %.4f max %.4f m  rot mean %5.2f deg  "
           "limits %d  pen %.4f m  slide %.3f m  jerk %.1f  maxvel %.2f  %.2f s\n",
           clip, robot, mode, frames, q->pos_m.mean, q->pos_m.p95, q->pos_m.max, q->rot_deg.mean,
           q->joint_limit_violations, q->ground_penetration_m, q->foot_slide_m, q->mean_jerk,
           q->max_joint_velocity, secs);
}

/* Strict integer argument in [lo, hi]: digits only (atoi took "x" as 0
 * threads). */
static int arg_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "bench_retarget: %s: expected an integer in [%d, %d], got '%.20s'\n", opt, lo, hi, v);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const def[] = {"01_01.bvh", "01_03.bvh", "cmu_12_01_walk.bvh",
                                      "jumping_jacks.bvh", "run_forward.bvh", "jesse_dance.bvh",
                                      "edge/Boxing_Toes.bvh", "edge/bvh_example.bvh", "edge/example.bvh",
                                      "edge/full_precision_frame_time.bvh", "edge/milad.bvh",
                                      "edge/rotation_first_root.bvh", "edge/sinusoidal.bvh",
                                      "edge/test_freebvh.bvh", "edge/test_mocapbank.bvh"};
    enum { N_DEF = sizeof def / sizeof def[0] };
    static const char *const robots[] = {"g1", "h1"};
    const char *clips[64];
    int n_clips = 0, per_frame = 0, dump = 0, max_frames = 0, threads = 8, rc = 0;
    char paths[N_DEF][512];
    const char *data = getenv("RT_SHARED_DATA");
    if (!data || !data[0]) data = "../shared/data";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--per-frame") == 0) per_frame = 1;
        else if (strcmp(argv[i], "--json") == 0) dump = 1;
        else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
            if (arg_int("--frames", argv[++i], 0, 100000000, &max_frames)) return 2;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (arg_int("--threads", argv[++i], 1, 256, &threads)) return 2;
        }
        else if (n_clips < 64) clips[n_clips++] = argv[i];
    }
    if (!n_clips)
        for (int i = 0; i < N_DEF; i++) {
            snprintf(paths[i], sizeof paths[i], "%s/clips/%s", data, def[i]);
            clips[n_clips++] = paths[i];
        }
    struct solver_backend be; /* one CPU backend for every clip and robot */
    {
        struct rt_err err;
        char line[RT_ERR_LINE_MAX];
        if (rtg_backend_init(&be, "cpu", threads, &err)) {
            fprintf(stderr, "%s\n", rt_err_line(&err, line, sizeof line));
            return 1;
        }
    }
    for (int r = 0; r < 2; r++) {
        struct kin_robot *robot = NULL;
        struct rt_err err;
        char line[RT_ERR_LINE_MAX];
        if (kin_robot_load(robots[r], &robot, &err)) {
            solver_backend_free(&be);
            fprintf(stderr, "%s\n", rt_err_line(&err, line, sizeof line));
            return 1;
        }
        for (int c = 0; c < n_clips; c++) {
            struct kin_clip *clip = NULL;
            struct rtg_targets t;
            struct rtg_quality q;
            struct solver_options opt;
            const char *base = strrchr(clips[c], '/') ? strrchr(clips[c], '/') + 1 : clips[c];
            if (strstr(clips[c], "/edge/")) base = strstr(clips[c], "/edge/") + 1;
            if (kin_bvh_load(clips[c], &clip, &err)) {
                fprintf(stderr, "%s\n", rt_err_line(&err, line, sizeof line));
                rc = 1;
                continue;
            }
            if (max_frames > 0 && clip->n_frames > max_frames) clip->n_frames = max_frames;
            struct rtg_profile *prof = NULL;
            if (rtg_retarget_pick_profile(clip, robot, &prof, &err) ||
                rtg_targets_from_clip(robot, clip, prof, &t, &err)) {
                /* A clip that cannot be mapped is refused with the reason. */
                printf("%-26s %-3s refused    %s\n", base, robots[r], rt_err_line(&err, line, sizeof line));
                rtg_profile_free(prof);
                kin_clip_free(clip);
                continue;
            }
            printf("%-26s %-3s profile    %s\n", base, robots[r], prof->name);
            int cols = rt_state_cols(&robot->tree), off[2] = {0, t.n_frames};
            float *state = malloc((size_t)t.n_frames * cols * sizeof(float));
            struct solver_clip_result cr;
            struct solver_result res = {state, &cr};
            struct solver_batch b;
            solver_options_default(&opt);
            rtg_profile_solver_options(prof, &opt);
            rtg_profile_free(prof);
            rtg_targets_batch(robot, &t, off, &opt, &b);
            double t0 = rt_now();
            if (solver_backend_solve(&be, &b, &res, &err)) {
                fprintf(stderr, "%s %s: %s\n", base, robots[r], rt_err_line(&err, line, sizeof line));
                rc = 1;
            } else {
                { struct rtg_quality qf; rtg_quality_finish(robot, &t, state, 1, &qf, NULL, NULL); } /* as rtg_job_finish() does */
                rtg_quality_compute(robot, &t, state, t.n_frames, &q, NULL, NULL);
                print_q(base, robots[r], "trajectory", t.n_frames, &q, rt_now() - t0);
                if (dump) {
                    cJSON *j = rtg_quality_json(robot, &t, state, t.n_frames);
                    char *txt = j ? cJSON_Print(j) : NULL;
                    if (txt) printf("%s\n", txt);
                    free(txt);
                    cJSON_Delete(j);
                    /* Where the feet go deepest. */
                    double *x = malloc((size_t)cols * sizeof *x), *lp = malloc((size_t)robot->n_links * 3 * sizeof *lp),
                           *lr = malloc((size_t)robot->n_links * 9 * sizeof *lr);
                    for (int f = 0; f < t.n_frames; f++) {
                        for (int cc = 0; cc < cols; cc++) x[cc] = state[(size_t)f * cols + cc];
                        kin_fk(robot, x, lp, lr);
                        for (int sd = 0; sd < 2; sd++) {
                            int l = t.foot_link[sd];
                            double pen = kin_robot_sole_offset(robot, l) - lp[3 * l + 2];
                            if (pen > 0.008) {
                                int k = 0;
                                while (t.target_link[k] != l) k++;
                                size_t i = (size_t)f * t.n_targets + k;
                                printf("  pen %.4f frame %d foot %d contact %d target z %.4f w %.1f\n", pen, f, sd,
                                       t.contact ? t.contact[2 * f + sd] : -1, t.pos[3 * i + 2], t.wpos[i]);
                            }
                        }
                    }
                    free(x);
                    free(lp);
                    free(lr);
                }
            }
            if (per_frame) {
                t0 = rt_now();
                if (rtg_solve_per_frame(&be, robot, &t, &opt, state, &cr, &err)) {
                    fprintf(stderr, "%s %s: %s\n", base, robots[r], rt_err_line(&err, line, sizeof line));
                    rc = 1;
                } else {
                    rtg_quality_compute(robot, &t, state, t.n_frames, &q, NULL, NULL);
                    print_q(base, robots[r], "per-frame", t.n_frames, &q, rt_now() - t0);
                }
            }
            fflush(stdout);
            free(state);
            rtg_targets_free(&t);
            kin_clip_free(clip);
        }
        kin_robot_free(robot);
    }
    solver_backend_free(&be);
    return rc;
}
