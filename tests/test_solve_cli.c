/* test_solve_cli.c -- `retarget solve` end to end on the real G1 reference
 * trajectory: the round trip's accuracy, the report's fields, and the
 * numerical contract on output bytes (batched == solo, run == run,
 * --threads 1 == --threads 2), exercised through cli_solve() itself; the
 * --stats file's stages and timeline; and
 * cli_json_int(), the client's reading of integers in server replies, and
 * cli_http()'s refusal of a URL or token it would cut; kin_traj_parse() on
 * text without a NUL terminator; a G1 trajectory onto the H1 through the
 * bundled pair profile when none is given. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../clients/cli.h"
#include "../base/status.h"
#include "../kinematics/robot.h"
#include "../kinematics/traj.h"
#include "../solver/cuda/cuda_api.h"
#include "test.h"

static char dir[64];

/* Writes rows [from, from+n) of the reference (tiled when past its end). */
static int write_cut(const char *ref, int n_ref, char **lines, int from, int n, const char *name)
{
    char path[256];
    (void)ref;
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", lines[(from + i) % n_ref]);
    return fclose(f) == 0;
}

static int run_solve(const char *out, const char *const *srcs, int n_src, const char *extra1,
                     const char *extra2)
{
    char *argv[64];
    int argc = 0;
    char outdir[256];
    static char paths[16][256];
    snprintf(outdir, sizeof outdir, "%s/%s", dir, out);
    for (int i = 0; i < n_src; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s.csv", dir, srcs[i]);
        argv[argc++] = paths[i];
    }
    argv[argc++] = "--source-robot";
    argv[argc++] = "g1";
    argv[argc++] = "--robot";
    argv[argc++] = "g1";
    argv[argc++] = "-o";
    argv[argc++] = outdir;
    argv[argc++] = "--quiet";
    if (extra1) argv[argc++] = (char *)extra1;
    if (extra2) argv[argc++] = (char *)extra2;
    argv[argc] = NULL;
    return cli_solve(argc, argv);
}

static int same_file(const char *a_out, const char *b_out, const char *name, const char *ext)
{
    char pa[256], pb[256];
    size_t la, lb;
    snprintf(pa, sizeof pa, "%s/%s/%s%s", dir, a_out, name, ext);
    snprintf(pb, sizeof pb, "%s/%s/%s%s", dir, b_out, name, ext);
    char *a = test_slurp(pa, &la), *b = test_slurp(pb, &lb);
    int same = a && b && la == lb && !memcmp(a, b, la);
    if (!same) fprintf(stderr, "differ: %s vs %s\n", pa, pb);
    free(a);
    free(b);
    return same;
}

static double num(cJSON *o, const char *a, const char *b)
{
    cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : -1.0;
}

/* cli_json_int() on server replies: absent, non-numbers and doubles beyond
 * 2^53 (which a cast would make undefined) give the default. */
static void test_json_int(void)
{
    cJSON *j = cJSON_Parse("{\"id\":42,\"neg\":-7,\"big\":1e300,\"nan\":\"x\",\"edge\":9007199254740992}");
    CHECK_EQ_INT(cli_json_int(j, "id", 0), 42);
    CHECK_EQ_INT(cli_json_int(j, "neg", 0), -7);
    CHECK_EQ_INT(cli_json_int(j, "big", -1), -1);
    CHECK_EQ_INT(cli_json_int(j, "nan", -1), -1);
    CHECK_EQ_INT(cli_json_int(j, "none", 5), 5);
    CHECK_EQ_INT(cli_json_int(j, "edge", 0), 9007199254740992LL);
    CHECK_EQ_INT(cli_json_int(NULL, "id", 3), 3);
    cJSON_Delete(j);
}

/* cli_http() refuses a URL or token it would have to cut, before any
 * request is sent. */
static void test_http_limits(void)
{
    static char long_url[3000], long_token[600];
    memset(long_url, 'a', sizeof long_url - 1);
    memcpy(long_url, "http://127.0.0.1:9/", 19);
    memset(long_token, 'b', sizeof long_token - 1);
    struct cli_server srv = {long_url, NULL};
    struct rt_err err;
    long code = 0;
    char *resp = NULL;
    rt_err_clear(&err);
    CHECK_EQ_INT(cli_http(&srv, "GET", "/v1/health", NULL, NULL, 0, NULL, &code, &resp, NULL, &err), RT_ELIMIT);
    CHECK_EQ_STR(err.where, "--server");
    srv.url = "http://127.0.0.1:9";
    srv.token = long_token;
    CHECK_EQ_INT(cli_http(&srv, "GET", "/v1/health", NULL, NULL, 0, NULL, &code, &resp, NULL, &err), RT_ELIMIT);
    CHECK_EQ_STR(err.where, "--token");
    CHECK(resp == NULL);
}

/* kin_traj_parse() on text that is not NUL-terminated (as its header
 * allows): the last number ends at `len`, and the digits that follow in
 * memory are not read as part of it. */
static void test_traj_unterminated(void)
{
    static const char csv[] = "0,0,0.75,0,0,0,1\n0.5,0,0.75,0,0,0,1";
    size_t len = sizeof csv - 1;
    char *text = malloc(len + 1);
    double *rows = NULL;
    int n = 0;
    struct rt_err err;
    CHECK(text != NULL);
    if (!text) return;
    memcpy(text, csv, len);
    text[len] = '5'; /* not part of the text */
    CHECK_EQ_INT(kin_traj_parse(text, len, "t.csv", 7, &rows, &n, &err), RT_OK);
    CHECK_EQ_INT(n, 2);
    CHECK(rows && rows[7] == 0.5 && rows[13] == 1.0);
    free(rows);
    /* One byte shorter, the text ends in ',' (the final "1" is cut off
     * whole): the last row has 6 values of 7, a parse error. */
    CHECK_EQ_INT(kin_traj_parse(text, len - 1, "t.csv", 7, &rows, &n, &err), RT_EPARSE);
    free(text);
}

/* The rows of DIR/OUT/NAME.csv (header skipped), malloc'd, or NULL. */
static double *read_rows(const char *out, const char *name, int cols, int *n)
{
    char path[256];
    size_t len = 0;
    double *rows = NULL;
    snprintf(path, sizeof path, "%s/%s/%s.csv", dir, out, name);
    char *text = test_slurp(path, &len), *body = text ? strchr(text, '\n') : NULL;
    if (body && kin_traj_parse(body + 1, len - (size_t)(body + 1 - text), path, cols, &rows, n, NULL) != RT_OK) rows = NULL;
    free(text);
    return rows;
}

/* --out-fps: the 513 frames of c513 (30 fps) written at 50 fps are
 * floor(512 * 50 / 30) + 1 = 854 rows; every third solved frame is every
 * fifth written one, bit for bit; no joint leaves its limits and no joint
 * moves faster than in the solved frames (linear interpolation); --format
 * npz writes NAME.npz (its layout is test_npz's). */
static void test_out_fps(void)
{
    struct kin_robot *g1 = NULL;
    CHECK_EQ_INT(kin_robot_load("g1", &g1, NULL), RT_OK);
    if (!g1) return;
    const char *one[] = {"c513"};
    int cols = RT_ROOT_COLS + g1->n_dof, n30 = 0, n50 = 0, viol = 0, same = 1;
    CHECK_EQ_INT(run_solve("o_fps50", one, 1, "--out-fps", "50"), 0);
    double *a = read_rows("o_solo", "c513", cols, &n30), *b = read_rows("o_fps50", "c513", cols, &n50);
    CHECK(a && b);
    CHECK_EQ_INT(n30, 513);
    CHECK_EQ_INT(n50, 854);
    double v30 = 0, v50 = 0;
    for (int t = 0; a && b && t < n50; t++) {
        if (t % 5 == 0) same &= !memcmp(a + (size_t)(t / 5 * 3) * cols, b + (size_t)t * cols, (size_t)cols * sizeof *a);
        for (int j = 0; j < g1->n_dof; j++) {
            const struct kin_joint *jt = &g1->joints[g1->coord_joint[j]];
            double q = b[(size_t)t * cols + RT_ROOT_COLS + j];
            viol += q < jt->lower - 1e-6 || q > jt->upper + 1e-6;
            if (t) v50 = fmax(v50, fabs(q - b[(size_t)(t - 1) * cols + RT_ROOT_COLS + j]) * 50);
            if (t && t < n30) v30 = fmax(v30, fabs(a[(size_t)t * cols + RT_ROOT_COLS + j] -
                                                   a[(size_t)(t - 1) * cols + RT_ROOT_COLS + j]) * 30);
        }
    }
    printf("out-fps 30 -> 50: %d -> %d frames, %d limit violations, max joint velocity %.4g -> %.4g rad/s\n", n30,
           n50, viol, v30, v50);
    CHECK(same);
    CHECK_EQ_INT(viol, 0);
    CHECK(v50 <= v30 * (1 + 1e-5));
    free(a);
    free(b);
    /* --format npz: NAME.npz, a zip. */
    CHECK_EQ_INT(run_solve("o_npz50", one, 1, "--format", "npz"), 0);
    char path[256];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/o_npz50/c513.npz", dir);
    char *z = test_slurp(path, &len);
    CHECK(z && len > 4 && !memcmp(z, "PK\x03\x04", 4));
    free(z);
    /* --out-fps out of range */
    CHECK(run_solve("o_bad", one, 1, "--out-fps", "0") != 0);
    kin_robot_free(g1);
}

/* --lanes 2: the calls of two plans (trajectory windows and a BVH clip)
 * taken from both ends of the queue by two lanes, each with a backend of
 * its own, the same bytes as one lane; every call in the timeline. */
static void test_lanes(const char *const *wins, int n_win)
{
    char bvh[512], out[2][256], stats[256];
    char *argv[32];
    snprintf(bvh, sizeof bvh, "%s/clips/jumping_jacks.bvh", test_data_dir());
    if (access(bvh, R_OK) != 0) return;
    snprintf(stats, sizeof stats, "%s/lanes.json", dir);
    for (int l = 0; l < 2; l++) {
        static char paths[8][256];
        int argc = 0;
        snprintf(out[l], sizeof out[l], "%s/o_lanes%d", dir, l + 1);
        for (int i = 0; i < n_win; i++) {
            snprintf(paths[i], sizeof paths[i], "%s/%s.csv", dir, wins[i]);
            argv[argc++] = paths[i];
        }
        argv[argc++] = bvh;
        const char *rest[] = {"--source-robot", "g1", "--robot", "g1", "--batch", "--threads", "2", "--quiet",
                              "--lanes", l ? "2" : "1", "-o", out[l], "--stats", stats};
        for (size_t k = 0; k < sizeof rest / sizeof rest[0]; k++) argv[argc++] = (char *)rest[k];
        argv[argc] = NULL;
        CHECK_EQ_INT(cli_solve(argc, argv), 0);
    }
    for (int i = 0; i < n_win; i++) CHECK(same_file("o_lanes1", "o_lanes2", wins[i], ".csv"));
    CHECK(same_file("o_lanes1", "o_lanes2", "jumping_jacks", ".csv"));
    size_t sl;
    char *st = test_slurp(stats, &sl);
    cJSON *j = st ? cJSON_Parse(st) : NULL, *c;
    cJSON *calls = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "timeline"), "calls");
    int clips = 0, lanes_ok = 1;
    cJSON_ArrayForEach(c, calls) {
        clips += (int)num(c, "clips", NULL);
        lanes_ok &= num(c, "lane", NULL) == 0 || num(c, "lane", NULL) == 1;
    }
    CHECK(lanes_ok);
    CHECK_EQ_INT(cJSON_GetArraySize(calls), 2);
    CHECK_EQ_INT(clips, n_win + 1);
    cJSON_Delete(j);
    free(st);
    /* Out of range: what and where. */
    {
        char *bad[] = {"x.csv", "--robot", "g1", "--lanes", "3", NULL};
        struct rt_err e;
        CHECK_EQ_INT(cli_solve_err(5, bad, &e), 2);
        CHECK_EQ_STR(e.where, "--lanes");
        CHECK(strstr(e.msg, "got '3'") != NULL);
    }
}

int main(void)
{
    char ref[512], *text;
    size_t len;
    /* What the environment names for the CUDA work queues before any
     * solve: `retarget solve` asks for 3 only where it names none. */
    const char *q0 = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    char queues0[16] = "";
    if (q0) snprintf(queues0, sizeof queues0, "%s", q0);
    test_json_int();
    test_http_limits();
    test_traj_unterminated();
    snprintf(ref, sizeof ref, "%s/reference/g1/dance1_subject1.csv", test_data_dir());
    if (!(text = test_slurp(ref, &len))) TEST_SKIP("reference trajectory not found");
    snprintf(dir, sizeof dir, "/tmp/rt_solve_XXXXXX");
    if (!mkdtemp(dir)) return 1;

    /* Split the reference into rows (CRLF). */
    char **lines = malloc(8192 * sizeof *lines);
    int n_ref = 0;
    for (char *p = strtok(text, "\r\n"); p && n_ref < 8192; p = strtok(NULL, "\r\n")) lines[n_ref++] = p;
    CHECK_EQ_INT(n_ref, 3945);

    /* 1. The whole real trajectory, default settings. */
    CHECK(write_cut(ref, n_ref, lines, 0, n_ref, "full"));
    const char *full[] = {"full"};
    CHECK_EQ_INT(run_solve("o_full", full, 1, NULL, NULL), 0);
    {
        char path[256];
        snprintf(path, sizeof path, "%s/o_full/full.report.json", dir);
        char *rep = test_slurp(path, &len);
        cJSON *j = rep ? cJSON_Parse(rep) : NULL;
        CHECK(j != NULL);
        if (j) {
            cJSON *q = cJSON_GetObjectItemCaseSensitive(j, "quality");
            CHECK_EQ_INT(num(j, "frames", NULL), 3945);
            double mean = num(q, "position_error_m", "mean"), mx = num(q, "position_error_m", "max");
            printf("round trip: position error mean %.3g m, max %.3g m, lm %g, cg %g, %.3f s\n",
                   mean, mx, num(j, "solver", "lm_iterations"), num(j, "solver", "cg_iterations"),
                   num(j, "solver", "seconds"));
            CHECK(mean >= 0 && mean < 0.005);
            CHECK(mx >= 0 && mx < 0.02);
            CHECK_EQ_INT(num(q, "joint_limit_violations", NULL), 0);
            CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(j, "solver"), "termination")));
            CHECK(num(q, "rotation_error_deg", "p95") >= 0);
            cJSON_Delete(j);
        }
        free(rep);
    }

    /* 2. Batched == solo, run == run, threads 1 == threads 2, by output bytes. */
    static const int sizes[] = {1, 2, 511, 512, 513};
    const char *names[] = {"c1", "c2", "c511", "c512", "c513"};
    int n_clips = 5;
    for (int i = 0; i < n_clips; i++) CHECK(write_cut(ref, n_ref, lines, 37 * i, sizes[i], names[i]));
    CHECK_EQ_INT(run_solve("o_batch", names, n_clips, "--batch", NULL), 0);
    CHECK_EQ_INT(run_solve("o_batch2", names, n_clips, "--batch", NULL), 0);
    {
        /* --stats: the stages and the timeline (five solo calls), in the
         * order they happen. */
        char sp[256];
        snprintf(sp, sizeof sp, "%s/stats.json", dir);
        CHECK_EQ_INT(run_solve("o_stats", names, n_clips, "--stats", sp), 0);
        size_t sl;
        char *st = test_slurp(sp, &sl);
        cJSON *j = st ? cJSON_Parse(st) : NULL, *tl = cJSON_GetObjectItemCaseSensitive(j, "timeline");
        cJSON *calls = cJSON_GetObjectItemCaseSensitive(tl, "calls"), *c;
        int clips = 0, frames = 0, ordered = 1;
        double at = num(tl, "first_targets", NULL);
        cJSON_ArrayForEach(c, calls) {
            clips += (int)num(c, "clips", NULL);
            frames += (int)num(c, "frames", NULL);
            ordered &= num(c, "start", NULL) >= at && num(c, "end", NULL) >= num(c, "start", NULL);
            at = num(c, "end", NULL);
        }
        CHECK(j && num(j, "stages", "quality") > 0 && num(j, "frames", NULL) == 1539);
        CHECK_EQ_INT(clips, 5);
        CHECK_EQ_INT(frames, 1539);
        CHECK(ordered && cJSON_GetArraySize(calls) == 5);
        CHECK(num(tl, "planned", NULL) > 0 && num(tl, "backend", NULL) > 0 &&
              num(tl, "first_targets", NULL) >= num(tl, "planned", NULL) && num(tl, "solved", NULL) >= at &&
              num(tl, "written", NULL) >= num(tl, "solved", NULL) && num(j, "wall", NULL) >= num(tl, "written", NULL));
        CHECK(num(tl, "started_unix", NULL) > 1.7e9);
        CHECK(num(j, "peak_rss_kb", NULL) > 1000); /* the process's own: a few MB at least */
        /* the backends released after the last solve, before the stats */
        CHECK(num(tl, "released", NULL) >= num(tl, "solved", NULL) &&
              num(j, "wall", NULL) >= num(tl, "released", NULL));
        cJSON_Delete(j);
        free(st);
    }
    for (int i = 0; i < n_clips; i++) {
        const char *one[] = {names[i]};
        CHECK_EQ_INT(run_solve("o_solo", one, 1, "--threads", "2"), 0);
    }
    const char *t1args[] = {"c513"};
    CHECK_EQ_INT(run_solve("o_t1", t1args, 1, "--threads", "1"), 0);
    for (int i = 0; i < n_clips; i++) {
        CHECK(same_file("o_batch", "o_solo", names[i], ".csv"));
        CHECK(same_file("o_batch", "o_batch2", names[i], ".csv"));
    }
    CHECK(same_file("o_t1", "o_solo", "c513", ".csv"));
    test_out_fps();
    test_lanes(names + 2, 3);

    /* 3. A G1 trajectory onto the H1 without --profile: two different
     * models, so the bundled pair profile g1_to_h1 maps it (matching link
     * names instead tracks about 0.1 m off), and the report names it. */
    {
        CHECK(write_cut(ref, n_ref, lines, 100, 60, "g1h1"));
        const char *one[] = {"g1h1"};
        CHECK_EQ_INT(run_solve("o_h1", one, 1, "--robot", "h1"), 0);
        char path[256];
        snprintf(path, sizeof path, "%s/o_h1/g1h1.report.json", dir);
        char *rep = test_slurp(path, &len);
        cJSON *j = rep ? cJSON_Parse(rep) : NULL;
        const cJSON *pn = cJSON_GetObjectItemCaseSensitive(j, "profile");
        CHECK(cJSON_IsString(pn) && !strcmp(pn->valuestring, "g1_to_h1"));
        double mean = num(cJSON_GetObjectItemCaseSensitive(j, "quality"), "position_error_m", "mean");
        CHECK(mean >= 0 && mean < 0.05);
        cJSON_Delete(j);
        free(rep);
    }

    /* -o creates missing parent folders. */
    {
        const char *one[] = {"c2"};
        char path[256];
        CHECK_EQ_INT(run_solve("o_deep/a/b", one, 1, NULL, NULL), 0);
        snprintf(path, sizeof path, "%s/o_deep/a/b/c2.csv", dir);
        CHECK(access(path, R_OK) == 0);
    }

    /* 4. Bad input: a clear error, not a crash. */
    {
        char path[256];
        snprintf(path, sizeof path, "%s/bad.csv", dir);
        FILE *f = fopen(path, "wb");
        fprintf(f, "%s\n1,2,3\n", lines[0]);
        fclose(f);
        const char *bad[] = {"bad"};
        CHECK(run_solve("o_bad", bad, 1, NULL, NULL) != 0);
    }

    /* The work queues: 3 (two lanes' streams and the runtime's) where CUDA
     * is built in and the environment named none, else as they were. */
    {
        char desc[256];
        struct rt_err e;
        int built = solver_cuda_device_describe(desc, sizeof desc, &e) == RT_OK ||
                    !strstr(e.msg, "built without CUDA");
        const char *q = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        const char *want = queues0[0] ? queues0 : built ? "3" : NULL;
        CHECK(want ? q && !strcmp(q, want) : q == NULL);
    }

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    free(lines);
    free(text);
    return test_report("test_solve_cli");
}
