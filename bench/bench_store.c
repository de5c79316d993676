/* bench_store.c -- what --sync full costs: the store's writes of one job's
 * life (insert with its clip, claim, two progress updates, finish with its
 * result), timed one by one under PRAGMA synchronous FULL and NORMAL on a
 * database in DIR (default /tmp: put it on the disk the daemon will use).
 * The clip is the first CLIP_BYTES of the real G1 trajectory
 * ($RT_SHARED_DATA or ../shared/data, reference/g1/dance1_subject1.csv,
 * cut at a line's end; digits where the file is not there), so that the
 * packing of schema 9 sees what a user's trajectory is. VERSION opens the
 * file at that schema version (8: sources stored as given), for a side by
 * side with the default.
 *
 *   bench_store [DIR] [JOBS=200] [CLIP_BYTES=400000] [FRAMES=125] [VERSION] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../base/status.h"
#include "../storage/store.h"

/* clip_len bytes of the real trajectory (whole lines, the text repeated
 * when it is shorter), else digits; says which on stderr. */
static void fill_clip(char *clip, size_t clip_len)
{
    const char *d = getenv("RT_SHARED_DATA");
    char path[1024], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/reference/g1/dance1_subject1.csv", d && d[0] ? d : "../shared/data");
    if (rt_read_file(path, (size_t)1 << 30, &text, &len, NULL) != RT_OK || len == 0) {
        fprintf(stderr, "bench_store: %s not found: the clip is digits\n", path);
        for (size_t i = 0; i < clip_len; i++) clip[i] = (char)('0' + i % 10);
        clip[clip_len] = 0;
        free(text);
        return;
    }
    for (size_t i = 0; i < clip_len; i++) clip[i] = text[i % len];
    size_t end = clip_len;
    while (end > 1 && clip[end - 1] != '\n') end--;
    memset(clip + end, ' ', clip_len - end); /* the cut line's bytes as spaces */
    if (end > 1) clip[clip_len - 1] = '\n';
    clip[clip_len] = 0;
    fprintf(stderr, "bench_store: the clip is %zu bytes of %s\n", clip_len, path);
    free(text);
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : 0;
}

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
    int version = argc > 5 ? atoi(argv[5]) : STORE_VERSION;
    char *clip = malloc(clip_len + 1);
    float *traj = calloc((size_t)frames * cols, sizeof *traj);
    double *t_ins = malloc((size_t)jobs * sizeof(double)), *t_claim = malloc((size_t)jobs * sizeof(double));
    double *t_prog = malloc((size_t)jobs * sizeof(double)), *t_fin = malloc((size_t)jobs * sizeof(double));
    double *t_pack = malloc((size_t)jobs * sizeof(double)), *t_write = malloc((size_t)jobs * sizeof(double));
    if (!clip || !traj || !t_ins || !t_claim || !t_prog || !t_fin || !t_pack || !t_write || version < 1 ||
        version > STORE_VERSION) {
        fprintf(stderr, "bench_store: out of memory, or VERSION not in 1..%d\n", STORE_VERSION);
        return 2;
    }
    fill_clip(clip, clip_len);
    printf("| sync | write | n | mean ms | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|\n");
    for (int full = 1; full >= 0; full--) {
        char path[512];
        struct store *s = NULL;
        struct rt_err err;
        snprintf(path, sizeof path, "%s/bench_store_%d.db", dir, (int)getpid());
        if (store_open_at(path, version, &s, &err) != RT_OK || store_set_sync(s, full, &err) != RT_OK) {
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
            struct store_insert_times tm = {0, 0, 0, 0, 0, 0};
            n.times = &tm;
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
            t_pack[i] = tm.pack * 1e3;
            t_write[i] = (tm.write + tm.commit) * 1e3;
            t_claim[i] = (t2 - t1) * 1e3;
            t_prog[i] = (t3 - t2) * 1e3 / 2;
            t_fin[i] = (t4 - t3) * 1e3;
        }
        t_all = rt_now() - t_all;
        const char *mode = full ? "full" : "normal";
        report(mode, "insert (clip)", t_ins, jobs);
        report(mode, "of which packing", t_pack, jobs);
        report(mode, "of which the writer (rows, commit)", t_write, jobs);
        report(mode, "claim", t_claim, jobs);
        report(mode, "progress", t_prog, jobs);
        report(mode, "finish (result)", t_fin, jobs);
        printf("| %s | whole life of a job | %d | %.3f | | | |\n", mode, jobs, t_all * 1e3 / jobs);
        store_close(s);
        printf("| %s | database file after the run (MB) | %d | %.1f | | | |\n", mode, jobs, file_size(path) / 1e6);
        char cmd[1700];
        snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", path, path, path);
        if (system(cmd)) fprintf(stderr, "cannot remove %s\n", path);
    }
    printf("\n%d jobs, clip %zu bytes, result %d x %d floats, database in %s, schema version %d\n", jobs, clip_len,
           frames, cols, dir, version);
    free(clip);
    free(traj);
    free(t_ins);
    free(t_claim);
    free(t_pack);
    free(t_write);
    free(t_prog);
    free(t_fin);
    return 0;
}
