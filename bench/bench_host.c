/* bench_host.c -- the host's part of a job, one stage at a time, on one
 * thread: what `retarget solve` and the daemon spend around the solver for
 * every frame (issue 11: on the H200's host these stages, not the GPU,
 * bound the CLI and the daemon).
 *
 * For every source of CORPUS (the *.csv trajectories of the G1 and *.bvh
 * clips, as bench-e2e builds it) it reads the file, plans the job, builds
 * its targets (retarget/job.h), takes the solved frames from SOLVED/NAME.csv
 * (what `retarget solve` wrote for it, so the quality is measured on a real
 * solution), finishes it (ground lift, quality, report) and formats the
 * CSV and the report's text, as clients/solve.c does, with no pool. Each
 * stage is timed per source and summed; over ROUNDS rounds the least sum of
 * each stage is printed, in seconds and microseconds per frame, with an
 * FNV-1a hash of every CSV and quality object written, so that a change of
 * the code can show that its bytes stay the same.
 *
 * Usage: bench_host CORPUS SOLVED [ROUNDS] (default 3). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/clock.h"
#include "../base/status.h"
#include "../kinematics/robot.h"
#include "../kinematics/traj.h"
#include "../retarget/job.h"
#include "../retarget/output.h"
#include "../retarget/report.h"

enum { S_READ, S_PLAN, S_TARGETS, S_QUALITY, S_FORMAT, S_COUNT };
static const char *const stage_names[S_COUNT] = {"read", "plan", "targets", "quality", "format"};

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static int fail(const char *what, const struct rt_err *err)
{
    fprintf(stderr, "bench_host: %s: %s: %s\n", what, err->where, err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_host CORPUS SOLVED [ROUNDS]\n");
        return 2;
    }
    const char *corpus = argv[1], *solved = argv[2];
    int rounds = argc > 3 ? atoi(argv[3]) : 3;
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "bench_host: ROUNDS: expected 1..1000, got '%s'\n", argv[3]);
        return 2;
    }
    struct rt_err err;
    struct kin_robot *robot = NULL;
    rt_err_clear(&err);
    if (kin_robot_load("g1", &robot, &err) != RT_OK) return fail("g1", &err);
    int cols = rt_state_cols(&robot->tree);
    const char **names = malloc((size_t)cols * sizeof *names);
    if (!names) return 1;
    rtg_columns(robot, names);

    DIR *d = opendir(corpus);
    if (!d) {
        fprintf(stderr, "bench_host: %s: cannot open\n", corpus);
        return 1;
    }
    char **files = NULL;
    int n_files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || (strcasecmp(e->d_name + n - 4, ".csv") && strcasecmp(e->d_name + n - 4, ".bvh"))) continue;
        char **nf = realloc(files, (size_t)(n_files + 1) * sizeof *files);
        if (!nf || !(nf[n_files] = strdup(e->d_name))) return 1;
        files = nf;
        n_files++;
    }
    closedir(d);
    qsort(files, (size_t)n_files, sizeof *files, by_name);

    double best[S_COUNT];
    long frames = 0;
    uint64_t hash = 1469598103934665603ull;
    for (int s = 0; s < S_COUNT; s++) best[s] = 1e30;
    for (int round = 0; round < rounds; round++) {
        double sum[S_COUNT] = {0};
        long fr = 0;
        for (int i = 0; i < n_files; i++) {
            char path[4096], spath[4096];
            const char *f = files[i];
            size_t n = strlen(f);
            int bvh = !strcasecmp(f + n - 4, ".bvh");
            snprintf(path, sizeof path, "%s/%s", corpus, f);
            snprintf(spath, sizeof spath, "%s/%.*s.csv", solved, (int)(n - 4), f);
            char *text = NULL;
            size_t len = 0;
            double t0 = rt_now();
            if (rt_read_file(path, (size_t)1 << 30, &text, &len, &err) != RT_OK) return fail(path, &err);
            double t1 = rt_now();
            struct rtg_job_spec spec = {
                .robot = robot, .robot_name = "g1", .source_kind = bvh ? RTG_SRC_BVH : RTG_SRC_TRAJ,
                .source = text, .source_len = len, .source_label = path,
                .source_robot = bvh ? NULL : robot, .source_robot_name = bvh ? NULL : "g1",
                .profile_where = path, .profile_hint = "give --profile FILE",
            };
            struct rtg_job_plan plan;
            if (rtg_job_plan(&spec, &plan, &err) != RT_OK) return fail(path, &err);
            double t2 = rt_now();
            struct rtg_targets t;
            if (rtg_job_build(robot, &plan, &t, &err) != RT_OK) return fail(path, &err);
            double t3 = rt_now();
            rtg_job_plan_free(&plan);
            free(text);
            double *sd = NULL;
            int sn = 0;
            if (kin_traj_read(spath, cols, &sd, &sn, &err) != RT_OK) return fail(spath, &err);
            if (sn != t.n_frames) {
                fprintf(stderr, "bench_host: %s: %d frames, the source %d\n", spath, sn, t.n_frames);
                return 1;
            }
            float *state = malloc((size_t)sn * (size_t)cols * sizeof *state);
            if (!state) return 1;
            for (size_t k = 0; k < (size_t)sn * (size_t)cols; k++) state[k] = (float)sd[k];
            free(sd);
            struct rtg_report_info info = {.source = path, .robot = robot->name, .backend = "cpu",
                                           .mode = "trajectory", .threads = 1, .batch_clips = 1};
            struct solver_clip_result res;
            memset(&res, 0, sizeof res);
            cJSON *rep = NULL;
            double t4 = rt_now();
            if (rtg_job_finish(NULL, robot, &t, state, 1, &info, &res, &rep, &err) != RT_OK) return fail(path, &err);
            double t5 = rt_now();
            char *rtext = cJSON_Print(rep), *csv = NULL;
            size_t csv_len = 0;
            if (!rtext || rtg_csv_format(names, cols, state, sn, &csv, &csv_len) != RT_OK) return 1;
            double t6 = rt_now();
            if (round == 0) {
                char *q = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(rep, "quality"));
                if (!q) return 1;
                hash = fnv(fnv(hash, csv, csv_len), q, strlen(q));
                free(q);
            }
            sum[S_READ] += t1 - t0;
            sum[S_PLAN] += t2 - t1;
            sum[S_TARGETS] += t3 - t2;
            sum[S_QUALITY] += t5 - t4;
            sum[S_FORMAT] += t6 - t5;
            fr += sn;
            free(csv);
            free(rtext);
            cJSON_Delete(rep);
            free(state);
            rtg_targets_free(&t);
        }
        frames = fr;
        for (int s = 0; s < S_COUNT; s++)
            if (sum[s] < best[s]) best[s] = sum[s];
    }
    double all = 0;
    printf("bench_host: %d sources, %ld frames, %d rounds (least of each stage), one thread\n", n_files, frames,
           rounds);
    for (int s = 0; s < S_COUNT; s++) {
        printf("  %-8s %8.3f s  %7.3f us/frame\n", stage_names[s], best[s], best[s] * 1e6 / (double)frames);
        all += best[s];
    }
    printf("  %-8s %8.3f s  %7.3f us/frame\n", "all", all, all * 1e6 / (double)frames);
    printf("  output hash %016llx (the CSVs and the quality objects)\n", (unsigned long long)hash);
    for (int i = 0; i < n_files; i++) free(files[i]);
    free(files);
    free(names);
    kin_robot_free(robot);
    return 0;
}
