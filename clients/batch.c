/* batch.c -- `retarget batch`: a whole corpus, through the daemon or
 * locally.
 *
 *   retarget batch CORPUS_DIR --robot R --out DIR [--server URL] [--token T]
 *                  [--profile P] [--source-robot S] [--shard I/N] [--jobs N]
 *                  [--threads N] [job options: --max-lm N ...]
 *
 * Every source under CORPUS_DIR -- .bvh clips, joint positions (.npz, .npy
 * with its names in NAME.txt beside it, CSVs of NAME_x,NAME_y,NAME_z
 * columns) and, with --source-robot, every other .csv (a trajectory) --
 * sorted by relative path; with --shard I/N only those whose index i has
 * i % N == I (a Slurm array: --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT).
 * Each clip's NAME.csv and NAME.report.json go to DIR/<its relative folder>/.
 *
 * Resumable: DIR/manifest.jsonl gets one line per clip finished,
 * {"clip","hash","status":"done"|"failed","job","frames","seconds","error"};
 * a clip whose latest line is "done" with the same input hash (SHA-256 of
 * its bytes, the robot, profile, source robot and the canonical job
 * options) is skipped. Each line is
 * one write() on an O_APPEND descriptor, so shards may share the file.
 * Through the daemon the input hash is also the job's Idempotency-Key, so a
 * rerun after a crash picks up the jobs it had submitted.
 *
 * Up to --jobs clips are in flight at once (threads); a clip's failure is
 * recorded and the corpus goes on. The exit status is 1 when any failed.
 *
 * Locally the clips are solved in groups, one `retarget solve --batch`
 * call a group (cli_solve_run: the clips' solver calls shared, as a GPU
 * wants them): consecutive clips to do with one output folder, at most
 * BATCH_GROUP_MAX of them and about an eighth of a job's share, so that a
 * stop loses little and the progress moves. A clip's bytes are the same
 * in any group (DESIGN.md "The numerical contract"). A group that fails is
 * solved again clip by clip, so that a bad clip fails alone; each clip's
 * manifest line gets its share of the group's seconds. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/clock.h"
#include "../base/num.h"
#include "../base/sha256.h"
#include "../kinematics/joints.h"
#include "../retarget/options.h"
#include "cli.h"

#define BATCH_MAX_CLIPS 1000000
#define BATCH_GROUP_MAX 128

struct batch {
    const char *corpus, *robot, *profile, *source_robot, *out;
    struct cli_server srv;
    int server, shard_i, shard_n, jobs, threads, progress;
    struct rtg_job_options opts; /* the job options given (the option table reads them) */
    char **clips; /* relative paths */
    int n_clips, cap_clips;
    size_t corpus_len;
    /* the run */
    pthread_mutex_t mu;
    int next, n_done, n_failed, n_skipped, n_todo;
    int group_max; /* clips a local group takes at most */
    int *todo;
    char (*hash)[2 * RT_SHA256_LEN + 1];
    int manifest_fd;
};

#define BATCH_MAX_DEPTH 64

/* 1 when the file at `path` starts with a joint-position CSV header
 * (kin_joints_is_csv() of its first MiB: a header of the most joints
 * fits). */
static int joint_csv(const char *path)
{
    char *buf = malloc(1u << 20);
    FILE *f = buf ? fopen(path, "rb") : NULL;
    size_t n = f ? fread(buf, 1, 1u << 20, f) : 0;
    if (f) fclose(f);
    int yes = buf && n && kin_joints_is_csv(buf, n);
    free(buf);
    return yes;
}

/* The sources of a corpus, as `retarget solve` reads them: .bvh clips,
 * .npz and .npy joint positions, joint-position CSVs, and with
 * --source-robot every other .csv (a trajectory). */
static int want_file(const struct batch *b, const char *path)
{
    size_t n = strlen(path);
    if (cli_is_bvh(path) || cli_joints_format(path, NULL, 0)) return 1;
    if (n <= 4 || strcasecmp(path + n - 4, ".csv")) return 0;
    return b->source_robot || joint_csv(path);
}

/* Adds `path` (below the corpus) to b->clips by its relative path. */
static int add_clip(struct batch *b, const char *path)
{
    if (b->n_clips >= BATCH_MAX_CLIPS) return -1;
    if (b->n_clips == b->cap_clips) {
        int cap = b->cap_clips ? 2 * b->cap_clips : 256;
        char **c = realloc(b->clips, (size_t)cap * sizeof *c);
        if (!c) return -1;
        b->clips = c;
        b->cap_clips = cap;
    }
    const char *rel = path + b->corpus_len;
    while (*rel == '/') rel++;
    if (!(b->clips[b->n_clips] = strdup(rel))) return -1;
    b->n_clips++;
    return 0;
}

/* Collects the wanted regular files below folder `dir`, not following
 * symbolic links (as nftw's FTW_PHYS). -1 when a folder cannot be read, the
 * tree is deeper than BATCH_MAX_DEPTH, or memory runs out. */
static int walk(struct batch *b, const char *dir, int depth)
{
    char path[4096];
    struct dirent *e;
    int rc = 0;
    if (depth > BATCH_MAX_DEPTH) return -1;
    DIR *d = opendir(dir);
    if (!d) return -1;
    while (rc == 0 && (e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path || lstat(path, &st)) {
            rc = -1;
            break;
        }
        if (S_ISDIR(st.st_mode)) rc = walk(b, path, depth + 1);
        else if (S_ISREG(st.st_mode) && want_file(b, path)) rc = add_clip(b, path);
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* mkdir -p of the folder part of `path`. */
static int make_dirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (!slash || slash == tmp) return 0;
    *slash = 0;
    return cli_mkdirs(tmp, NULL) == RT_OK ? 0 : -1;
}

static enum rt_status input_hash(const struct batch *b, const char *path, char hex[65],
                                 struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    unsigned char d[RT_SHA256_LEN];
    enum rt_status st = rt_read_file(path, 1u << 30, &text, &len, err);
    if (st != RT_OK) return st;
    struct rt_sha256 h;
    if (rt_sha256_init(&h) != RT_OK) {
        free(text);
        return rt_err_set(err, RT_ENOMEM, path, "out of memory");
    }
    const char *parts[3] = {b->robot, b->profile ? b->profile : "", b->source_robot ? b->source_robot : ""};
    for (int i = 0; i < 3; i++) rt_sha256_update(&h, parts[i], strlen(parts[i]) + 1);
    char *opts = rtg_job_options_json(&b->opts);
    if (!opts) {
        rt_sha256_drop(&h);
        free(text);
        return rt_err_set(err, RT_ENOMEM, path, "out of memory");
    }
    rt_sha256_update(&h, opts, strlen(opts) + 1);
    free(opts);
    rt_sha256_update(&h, text, len);
    /* An .npy's names (PATH with .txt for .npy) are part of its input. */
    size_t n = strlen(path);
    if (n > 4 && !strcasecmp(path + n - 4, ".npy")) {
        char np[4096], *names = NULL;
        size_t names_len = 0;
        snprintf(np, sizeof np, "%.*s.txt", (int)(n - 4), path);
        if (rt_read_file(np, 1u << 20, &names, &names_len, NULL) == RT_OK) {
            rt_sha256_update(&h, "\0names\0", 7);
            rt_sha256_update(&h, names, names_len);
        }
        free(names);
    }
    rt_sha256_final(&h, d);
    rt_sha256_hex(d, hex);
    free(text);
    return RT_OK;
}

/* Reads DIR/manifest.jsonl: marks clips whose latest record is "done" with
 * the hash they have now. */
static void read_manifest(struct batch *b, unsigned char *done)
{
    char path[4096], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/manifest.jsonl", b->out);
    if (rt_read_file(path, 1u << 30, &text, &len, NULL) != RT_OK) return;
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        cJSON *j = cJSON_Parse(line);
        cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "clip"), *h = cJSON_GetObjectItemCaseSensitive(j, "hash"),
              *s = cJSON_GetObjectItemCaseSensitive(j, "status");
        if (cJSON_IsString(c) && cJSON_IsString(h) && cJSON_IsString(s)) {
            char **hit = bsearch(&c->valuestring, b->clips, (size_t)b->n_clips, sizeof *b->clips, cmp_str);
            if (hit) {
                int i = (int)(hit - b->clips);
                done[i] = !strcmp(s->valuestring, "done") && !strcmp(h->valuestring, b->hash[i]);
            }
        }
        cJSON_Delete(j);
    }
    free(text);
}

static void record(struct batch *b, int i, int ok, long long job, double seconds, const struct rt_err *err)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "clip", b->clips[i]);
    cJSON_AddStringToObject(j, "hash", b->hash[i]);
    cJSON_AddStringToObject(j, "status", ok ? "done" : "failed");
    if (job > 0) cJSON_AddNumberToObject(j, "job", (double)job);
    cJSON_AddNumberToObject(j, "seconds", seconds);
    if (!ok) {
        cJSON *e = cJSON_AddObjectToObject(j, "error");
        cJSON_AddStringToObject(e, "where", err->where);
        cJSON_AddStringToObject(e, "message", err->msg);
    }
    char *t = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!t) return;
    size_t n = strlen(t);
    char *line = malloc(n + 2);
    if (line) {
        memcpy(line, t, n);
        line[n] = '\n';
        /* One write() per line on O_APPEND: lines of concurrent writers never interleave. */
        if (write(b->manifest_fd, line, n + 1) != (ssize_t)(n + 1))
            fprintf(stderr, "retarget: %s/manifest.jsonl: write failed\n", b->out);
        free(line);
    }
    cJSON_free(t);
}

static void draw(struct batch *b)
{
    if (!b->progress) return;
    int width = 30, finished = b->n_done + b->n_failed, fill = b->n_todo ? finished * width / b->n_todo : width;
    char bar[40];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\rbatch [%s] %d/%d done, %d failed, %d skipped ", bar, b->n_done, b->n_todo, b->n_failed,
            b->n_skipped);
    fflush(stderr);
}

/* The output folder of clip i (its relative folder below --out), and its
 * base name when `name` is given. 0 when the folder cannot be made. */
static int clip_dir(const struct batch *b, int i, char *dir, size_t cap, char *name, size_t name_cap)
{
    snprintf(dir, cap, "%s/%s", b->out, b->clips[i]);
    if (name) cli_base_name(dir, name, name_cap);
    *strrchr(dir, '/') = 0;
    snprintf(dir + strlen(dir), cap - strlen(dir), "/");
    int ok = !make_dirs(dir);
    dir[strlen(dir) - 1] = 0;
    return ok;
}

/* Whether clips i and j write into one folder. */
static int same_dir(const struct batch *b, int i, int j)
{
    const char *x = strrchr(b->clips[i], '/'), *y = strrchr(b->clips[j], '/');
    size_t nx = x ? (size_t)(x - b->clips[i]) : 0, ny = y ? (size_t)(y - b->clips[j]) : 0;
    return nx == ny && !strncmp(b->clips[i], b->clips[j], nx);
}

/* Clips idx[0..n) (one folder) solved locally: `retarget solve --batch`
 * as a call. */
static enum rt_status solve_local(struct batch *b, const int *idx, int n, struct rt_err *err)
{
    char dir[4096];
    struct cli_solve_args a;
    const char **src = calloc((size_t)n, sizeof *src);
    char *paths = malloc((size_t)n * 4096);
    enum rt_status st = RT_OK;
    if (!src || !paths) st = rt_err_set(err, RT_ENOMEM, "batch", "out of memory");
    else if (!clip_dir(b, idx[0], dir, sizeof dir, NULL, 0))
        st = rt_err_set(err, RT_EIO, dir, "cannot create folder: %s", strerror(errno));
    for (int k = 0; k < n && st == RT_OK; k++) {
        snprintf(paths + (size_t)k * 4096, 4096, "%s/%s", b->corpus, b->clips[idx[k]]);
        src[k] = paths + (size_t)k * 4096;
    }
    if (st == RT_OK) {
        cli_solve_args_init(&a);
        a.robot = b->robot;
        a.profile = b->profile;
        a.source_robot = b->source_robot;
        a.out_dir = dir;
        a.threads = b->threads;
        a.quiet = 1;
        a.batch = 1;
        a.opts = b->opts;
        a.sources = src;
        a.n_sources = n;
        rt_err_clear(err);
        if (cli_solve_run(&a, err))
            st = err->code != RT_OK ? (enum rt_status)err->code : rt_err_set(err, RT_EINVAL, src[0], "solve failed");
    }
    free(src);
    free(paths);
    return st;
}

static enum rt_status run_one(struct batch *b, int i, long long *job, struct rt_err *err)
{
    char src[4096], dir[4096], name[256], hdr[200];
    *job = 0;
    if (!b->server) return solve_local(b, &i, 1, err);
    snprintf(src, sizeof src, "%s/%s", b->corpus, b->clips[i]);
    if (!clip_dir(b, i, dir, sizeof dir, name, sizeof name))
        return rt_err_set(err, RT_EIO, dir, "cannot create folder: %s", strerror(errno));
    char *body = NULL, *resp = NULL, state[16];
    long code = 0;
    enum rt_status st = cli_job_body(src, b->robot, b->profile, b->source_robot, &b->opts, &body, err);
    if (st != RT_OK) return st;
    snprintf(hdr, sizeof hdr, "Idempotency-Key: batch-%s", b->hash[i]);
    st = cli_http(&b->srv, "POST", "/v1/jobs", "application/json", body, strlen(body), hdr, &code, &resp, NULL, err);
    free(body);
    if (st != RT_OK) return st;
    if (code != 200 && code != 201) {
        st = cli_http_error(code, resp, err);
        if (!strncmp(err->where, "clip", 4) || !strncmp(err->where, "trajectory", 10) ||
            !strncmp(err->where, "joints.", 7)) {
            char w[RT_ERR_WHERE_MAX];
            snprintf(w, sizeof w, "%s", err->where);
            snprintf(err->where, sizeof err->where, "%s%s", b->clips[i], strchr(w, ':') ? strchr(w, ':') : "");
        }
        free(resp);
        return st;
    }
    cJSON *j = cJSON_Parse(resp);
    free(resp);
    *job = cli_json_int(j, "id", 0);
    cJSON_Delete(j);
    if (*job <= 0) return rt_err_set(err, RT_EPARSE, "server", "no job id in the reply");
    if ((st = cli_wait_job(&b->srv, *job, 0, 0, state, err)) != RT_OK) return st;
    return cli_fetch_job(&b->srv, *job, dir, name, 0, err);
}

/* Clip i's result: its manifest line, the counts, a failure's message. */
static void finished(struct batch *b, int i, enum rt_status st, long long job, double seconds, const struct rt_err *err)
{
    pthread_mutex_lock(&b->mu);
    record(b, i, st == RT_OK, job, seconds, err);
    if (st == RT_OK) b->n_done++;
    else {
        char line[RT_ERR_LINE_MAX];
        b->n_failed++;
        if (b->progress) fputc('\n', stderr);
        fprintf(stderr, "retarget: %s: %s\n", b->clips[i], rt_err_line(err, line, sizeof line));
    }
    draw(b);
    pthread_mutex_unlock(&b->mu);
}

static void *worker(void *arg)
{
    struct batch *b = arg;
    for (;;) {
        /* The next clip, or locally the next group (clips of one folder). */
        pthread_mutex_lock(&b->mu);
        int k = b->next, m = 0;
        while (b->next < b->n_todo && m < (b->server ? 1 : b->group_max) &&
               (m == 0 || same_dir(b, b->todo[k], b->todo[b->next]))) {
            b->next++;
            m++;
        }
        pthread_mutex_unlock(&b->mu);
        if (m == 0) return NULL;
        struct rt_err err;
        long long job = 0;
        rt_err_clear(&err);
        double t0 = rt_now();
        if (m > 1 && solve_local(b, b->todo + k, m, &err) == RT_OK) {
            double share = (rt_now() - t0) / m;
            for (int q = 0; q < m; q++) finished(b, b->todo[k + q], RT_OK, 0, share, &err);
            continue;
        }
        /* One clip, or a group that failed: clip by clip. */
        for (int q = 0; q < m; q++) {
            int i = b->todo[k + q];
            rt_err_clear(&err);
            t0 = rt_now();
            enum rt_status st = run_one(b, i, &job, &err);
            finished(b, i, st, job, rt_now() - t0, &err);
        }
    }
}

int cli_batch(int argc, char **argv)
{
    struct batch b;
    struct rt_err err;
    int rc = 1, n_cpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    unsigned char *done = NULL;
    pthread_t *th = NULL;
    int n_th = 0;
    memset(&b, 0, sizeof b);
    pthread_mutex_init(&b.mu, NULL);
    b.srv.url = getenv("RETARGET_SERVER");
    b.srv.token = getenv("RETARGET_TOKEN");
    b.shard_n = 1;
    b.jobs = 0;
    b.manifest_fd = -1;
    b.progress = isatty(2);
    rt_err_clear(&err);
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const struct rtg_option *row;
        if (o[0] != '-') {
            if (b.corpus) goto usage;
            b.corpus = o;
            continue;
        }
        if (!strcmp(o, "--quiet")) {
            b.progress = 0;
            continue;
        }
        if (!v) goto usage;
        i++;
        if (!strcmp(o, "--robot")) b.robot = v;
        else if (!strcmp(o, "--out") || !strcmp(o, "-o")) b.out = v;
        else if (!strcmp(o, "--server")) b.srv.url = v, b.server = 1;
        else if (!strcmp(o, "--token")) b.srv.token = v;
        else if (!strcmp(o, "--profile")) b.profile = v;
        else if (!strcmp(o, "--source-robot")) b.source_robot = v;
        else if (!strcmp(o, "--shard")) {
            /* strtol with range checks: sscanf's %d is undefined on overflow. */
            char *slash, *end = NULL;
            errno = 0;
            long si = strtol(v, &slash, 10), sn = -1;
            if (v[0] >= '0' && v[0] <= '9' && *slash == '/' && slash[1] >= '0' && slash[1] <= '9')
                sn = strtol(slash + 1, &end, 10);
            if (sn < 1 || *end || errno || sn > BATCH_MAX_CLIPS || si >= sn) {
                fprintf(stderr, "retarget: --shard: expected I/N with 0 <= I < N, got '%s'\n", RT_QUOTE(v));
                return 2;
            }
            b.shard_i = (int)si;
            b.shard_n = (int)sn;
        } else if ((row = rtg_option_by_flag(o, RTG_SCOPE_BATCH)) && row->key) {
            /* A job option: the table reads it. */
            if (rtg_job_options_set_text(&b.opts, (enum rtg_job_opt)(row - rtg_options()), v, o, &err) != RT_OK) {
                cli_fail(&err);
                return 2;
            }
        } else if (!strcmp(o, "--jobs") || !strcmp(o, "--threads")) {
            long long x;
            char range[64];
            row = rtg_option_by_flag(o, RTG_SCOPE_BATCH);
            if (!row || !rt_parse_int(v, (long long)row->lo, (long long)row->hi, &x)) {
                fprintf(stderr, "retarget: %s: expected %s, got '%s'\n", o,
                        row ? rtg_option_range(row, range, sizeof range) : "an integer", RT_QUOTE(v));
                return 2;
            }
            if (!strcmp(o, "--jobs")) b.jobs = (int)x;
            else b.threads = (int)x;
        } else goto usage;
    }
    if (!b.corpus || !b.robot || !b.out) goto usage;
    if (b.server && (!b.srv.url || !b.srv.url[0])) goto usage;
    if (b.jobs < 1) b.jobs = b.server ? 8 : 1;
    if (b.threads < 1) b.threads = n_cpu / b.jobs > 0 ? n_cpu / b.jobs : 1;
    if (cli_mkdirs(b.out, &err) != RT_OK) goto fail;
    b.corpus_len = strlen(b.corpus);
    if (walk(&b, b.corpus, 0)) {
        rt_err_set(&err, RT_EIO, b.corpus, "cannot list the corpus (or out of memory)");
        goto fail;
    }
    qsort(b.clips, (size_t)b.n_clips, sizeof *b.clips, cmp_str);
    b.hash = calloc((size_t)b.n_clips + 1, sizeof *b.hash);
    b.todo = calloc((size_t)b.n_clips + 1, sizeof *b.todo);
    done = calloc((size_t)b.n_clips + 1, 1);
    if (!b.hash || !b.todo || !done) {
        rt_err_set(&err, RT_ENOMEM, "batch", "out of memory");
        goto fail;
    }
    int n_shard = 0;
    for (int i = 0; i < b.n_clips; i++) {
        char src[4096];
        if (i % b.shard_n != b.shard_i) continue;
        n_shard++;
        snprintf(src, sizeof src, "%s/%s", b.corpus, b.clips[i]);
        if (input_hash(&b, src, b.hash[i], &err) != RT_OK) goto fail;
    }
    read_manifest(&b, done);
    for (int i = 0; i < b.n_clips; i++) {
        if (i % b.shard_n != b.shard_i) continue;
        if (done[i]) b.n_skipped++;
        else b.todo[b.n_todo++] = i;
    }
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/manifest.jsonl", b.out);
    if ((b.manifest_fd = open(mpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666)) < 0) {
        rt_err_set(&err, RT_EIO, mpath, "cannot open: %s", strerror(errno));
        goto fail;
    }
    fprintf(stderr, "retarget: batch: %d clip(s) in shard %d/%d, %d already done, %d to do, %s\n", n_shard,
            b.shard_i, b.shard_n, b.n_skipped, b.n_todo, b.server ? b.srv.url : "locally");
    draw(&b);
    /* A local group: about an eighth of a job's share, 1..BATCH_GROUP_MAX. */
    b.group_max = b.n_todo / (8 * b.jobs);
    if (b.group_max < 1) b.group_max = 1;
    if (b.group_max > BATCH_GROUP_MAX) b.group_max = BATCH_GROUP_MAX;
    n_th = b.jobs < b.n_todo ? b.jobs : b.n_todo;
    th = calloc((size_t)n_th + 1, sizeof *th);
    if (!th) {
        rt_err_set(&err, RT_ENOMEM, "batch", "out of memory");
        goto fail;
    }
    int started = 0;
    for (; started < n_th; started++)
        if (pthread_create(&th[started], NULL, worker, &b)) break;
    if (started == 0 && n_th > 0) worker(&b);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    if (b.progress) fputc('\n', stderr);
    fprintf(stderr, "retarget: batch: %d done, %d failed, %d skipped (manifest %s)\n", b.n_done, b.n_failed,
            b.n_skipped, mpath);
    rc = b.n_failed ? 1 : 0;
    goto done;
usage:
    fputs("usage: retarget batch CORPUS_DIR --robot R --out DIR [--server URL] [--token T] [--profile P]\n"
          "                      [--source-robot S] [--shard I/N] [--jobs N] [--threads N] [--max-lm N]\n",
          stderr);
    rc = 2;
    goto done;
fail:
    cli_fail(&err);
done:
    if (b.manifest_fd >= 0) close(b.manifest_fd);
    for (int i = 0; i < b.n_clips; i++) free(b.clips[i]);
    free(b.clips);
    free(b.hash);
    free(b.todo);
    free(done);
    free(th);
    pthread_mutex_destroy(&b.mu);
    return rc;
}
