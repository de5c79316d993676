/* bench_store.c -- what --sync full costs: the store's writes of one job's
 * life (insert with its clip, claim, two progress updates, finish with its
 * result), timed one by one under PRAGMA synchronous FULL and NORMAL on a
 * database in DIR (default /tmp: put it on the disk the daemon will use).
 *
 *   bench_store [DIR] [JOBS=200] [CLIP_BYTES=400000] [FRAMES=125] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../storage/store.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *mode, const char *what, double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += ms[i];
    printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", mode, what, n, sum / n, ms[n / 2],
           ms[(int)(0.99 * (n - 1))], ms[n - 1]);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    int jobs = argc > 2 ? atoi(argv[2]) : 200;
    size_t clip_len = argc > 3 ? (size_t)atol(argv[3]) : 400000;
    int frames = argc > 4 ? atoi(argv[4]) : 125, cols = 36;
    char *clip = malloc(clip_len + 1);
    float *traj = calloc((size_t)frames * cols, sizeof *traj);
    double *t_ins = malloc((size_t)jobs * sizeof(double)), *t_claim = malloc((size_t)jobs * sizeof(double));
    double *t_prog = malloc((size_t)jobs * sizeof(double)), *t_fin = malloc((size_t)jobs * sizeof(double));
    for (size_t i = 0; i < clip_len; i++) clip[i] = (char)('0' + i % 10);
    clip[clip_len] = 0;
    printf("| sync | write | n | mean ms | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|\n");
    for (int full = 1; full >= 0; full--) {
        char path[512];
        struct store *s = NULL;
        struct rt_err err;
        snprintf(path, sizeof path, "%s/bench_store_%d.db", dir, (int)getpid());
        if (store_open(path, &s, &err) != RT_OK || store_set_sync(s, full, &err) != RT_OK) {
            fprintf(stderr, "bench_store: %s: %s\n", err.where, err.msg);
            return 1;
        }
        double t_all = rt_now();
        for (int i = 0; i < jobs; i++) {
            struct store_job_new n;
            memset(&n, 0, sizeof n);
            char name[32];
            snprintf(name, sizeof name, "job%d", i);
            n.owner = "bench";
            n.name = name;
            n.robot = "g1";
            n.options = "{}";
            n.class_key = "g1|x|bvh||{}";
            n.clip = clip;
            n.clip_len = clip_len;
            n.frames = frames;
            n.input_hash[0] = (unsigned char)i;
            int64_t id = 0;
            int existed = 0, claimed = 0, stored = 0;
            double t0 = rt_now();
            store_job_insert(s, &n, &id, &existed, NULL);
            double t1 = rt_now();
            store_job_claim(s, id, &claimed, NULL);
            double t2 = rt_now();
            store_job_progress(s, id, 1, 1.0, NULL);
            store_job_progress(s, id, 2, 0.5, NULL);
            double t3 = rt_now();
            store_job_finish(s, id, frames, cols, "[]", traj, "{\"quality\":{}}", 2, 0.5, 0.1, 1, &stored, NULL);
            double t4 = rt_now();
            t_ins[i] = (t1 - t0) * 1e3;
            t_claim[i] = (t2 - t1) * 1e3;
            t_prog[i] = (t3 - t2) * 1e3 / 2;
            t_fin[i] = (t4 - t3) * 1e3;
        }
        t_all = rt_now() - t_all;
        const char *mode = full ? "full" : "normal";
        report(mode, "insert (clip)", t_ins, jobs);
        report(mode, "claim", t_claim, jobs);
        report(mode, "progress", t_prog, jobs);
        report(mode, "finish (result)", t_fin, jobs);
        printf("| %s | whole life of a job | %d | %.3f | | | |\n", mode, jobs, t_all * 1e3 / jobs);
        store_close(s);
        char cmd[1700];
        snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", path, path, path);
        if (system(cmd)) fprintf(stderr, "cannot remove %s\n", path);
    }
    printf("\n%d jobs, clip %zu bytes, result %d x %d floats, database in %s\n", jobs, clip_len, frames, cols, dir);
    free(clip);
    free(traj);
    free(t_ins);
    free(t_claim);
    free(t_prog);
    free(t_fin);
    return 0;
}
