/* test_python_client.c -- the Python client (clients/python/retarget_client.py,
 * standard library only) against the real daemon started in-process on
 * 127.0.0.1:0: submit a real clip, wait, fetch, and compare the CSV byte for
 * byte with what `retarget solve` writes, for joint positions (.npz, .npy,
 * CSV) as for a BVH clip; server errors come back as one
 * line with the HTTP status, and a non-zero exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "http_util.h"
#include "joints_util.h"

static char dir[64];

/* 1 when files `pa` and `pb` hold the same bytes (and are not empty). */
static int same_files(const char *pa, const char *pb)
{
    size_t la = 0, lb = 0;
    char *a = NULL, *b = NULL;
    int same = rt_read_file(pa, 1 << 24, &a, &la, NULL) == RT_OK && rt_read_file(pb, 1 << 24, &b, &lb, NULL) == RT_OK &&
               la == lb && la > 0 && !memcmp(a, b, la);
    if (!same) fprintf(stderr, "%s and %s differ\n", pa, pb);
    free(a);
    free(b);
    return same;
}

/* Runs the client with `args`; returns its exit status, output in out[cap]. */
static int py(const char *args, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "RETARGET_SERVER=%s python3 clients/python/retarget_client.py %s 2>&1", http_url, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* `submit SRC --robot g1` then `wait ID`: the job id, 0 on failure. */
static long submit_wait(const char *src, char *out, size_t cap)
{
    char args[1024];
    snprintf(args, sizeof args, "submit %s --robot g1", src);
    if (py(args, out, cap)) return 0;
    long id = strtol(out, NULL, 10);
    snprintf(args, sizeof args, "wait %ld", id);
    if (id <= 0 || py(args, out, cap) || !strstr(out, "\"succeeded\"")) return 0;
    return id;
}

int main(void)
{
    char clip[512], out[4096], args[1024];
    if (system("python3 -c 'import json, urllib.request' 2>/dev/null") != 0) TEST_SKIP("no python3");
    snprintf(clip, sizeof clip, "%s/clips/run_forward.bvh", test_data_dir());
    FILE *f = fopen(clip, "rb");
    if (!f) TEST_SKIP("shared data not found");
    fclose(f);
    snprintf(dir, sizeof dir, "/tmp/rt_py_XXXXXX");
    if (!mkdtemp(dir)) return 1;

    struct srv_config cfg;
    srv_config_default(&cfg);
    char db[128];
    snprintf(db, sizeof db, "%s/d.db", dir);
    cfg.db_path = db;
    cfg.no_auth = 1;
    cfg.batch_wait_ms = 0;
    struct srv *s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_python_client");

    CHECK_EQ_INT(py("health", out, sizeof out), 0);
    CHECK(strstr(out, "\"ok\"") != NULL);

    snprintf(args, sizeof args, "submit %s --robot g1", clip);
    CHECK_EQ_INT(py(args, out, sizeof out), 0);
    long id = strtol(out, NULL, 10);
    CHECK(id > 0);
    /* The same key returns the same job. */
    snprintf(args, sizeof args, "submit %s --robot g1 --idempotency-key k1", clip);
    CHECK_EQ_INT(py(args, out, sizeof out), 0);
    long k1 = strtol(out, NULL, 10);
    CHECK_EQ_INT(py(args, out, sizeof out), 0);
    CHECK_EQ_INT(strtol(out, NULL, 10), k1);
    CHECK(k1 > 0 && k1 != id);
    snprintf(args, sizeof args, "wait %ld", id);
    CHECK_EQ_INT(py(args, out, sizeof out), 0);
    CHECK(strstr(out, "\"succeeded\"") != NULL);
    snprintf(args, sizeof args, "fetch %ld -o %s/py", id, dir);
    CHECK_EQ_INT(py(args, out, sizeof out), 0);

    /* The same clip offline. */
    char odir[128], *argv[] = {clip, "--robot", "g1", "-o", odir, "--quiet", NULL};
    snprintf(odir, sizeof odir, "%s/cli", dir);
    CHECK_EQ_INT(cli_solve(6, argv), 0);
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s/py/run_forward.csv", dir);
    snprintf(pb, sizeof pb, "%s/cli/run_forward.csv", dir);
    CHECK(same_files(pa, pb));
    size_t la = 0;
    char *a = NULL;
    snprintf(pa, sizeof pa, "%s/py/run_forward.report.json", dir);
    CHECK(rt_read_file(pa, 1 << 24, &a, &la, NULL) == RT_OK && a && strstr(a, "\"quality\""));
    free(a);
    /* fetch --format npz --fps 50: the bytes of solve --format npz --out-fps 50. */
    snprintf(args, sizeof args, "fetch %ld -o %s/pyz --format npz --fps 50", id, dir);
    CHECK_EQ_INT(py(args, out, sizeof out), 0);
    char *zargv[] = {clip, "--robot", "g1", "-o", odir, "--quiet", "--format", "npz", "--out-fps", "50", NULL};
    snprintf(odir, sizeof odir, "%s/cliz", dir);
    CHECK_EQ_INT(cli_solve(10, zargv), 0);
    snprintf(pa, sizeof pa, "%s/pyz/run_forward.npz", dir);
    snprintf(pb, sizeof pb, "%s/cliz/run_forward.npz", dir);
    CHECK(same_files(pa, pb));

    /* Joint positions (the first 40 frames of the clip as .npz, .npy with
     * its names beside it, CSV): submitted, solved, fetched, the bytes of
     * `retarget solve` of the same file. */
    {
        struct kin_clip *c = NULL;
        struct rt_err err;
        CHECK_EQ_INT(kin_bvh_load(clip, &c, &err), RT_OK);
        CHECK_EQ_INT(c ? test_write_joint_files(c, 40, dir, "rfj") : 0, 40);
        kin_clip_free(c);
        static const char *const files[] = {"rfj_npz.npz", "rfj_npy.npy", "rfj.csv"};
        for (int k = 0; k < 3; k++) {
            char src[256], name[64];
            snprintf(src, sizeof src, "%s/%s", dir, files[k]);
            snprintf(name, sizeof name, "%.*s", (int)(strlen(files[k]) - 4), files[k]);
            long jid = submit_wait(src, out, sizeof out);
            CHECK(jid > 0);
            snprintf(args, sizeof args, "fetch %ld -o %s/pyj", jid, dir);
            CHECK_EQ_INT(py(args, out, sizeof out), 0);
            char *jargv[] = {src, "--robot", "g1", "-o", odir, "--quiet", NULL};
            snprintf(odir, sizeof odir, "%s/clij", dir);
            CHECK_EQ_INT(cli_solve(6, jargv), 0);
            snprintf(pa, sizeof pa, "%s/pyj/%s.csv", dir, name);
            snprintf(pb, sizeof pb, "%s/clij/%s.csv", dir, name);
            CHECK(same_files(pa, pb));
        }
        /* An .npy whose names file is missing: said so, exit 1. */
        snprintf(pa, sizeof pa, "%s/rfj_npy.txt", dir);
        remove(pa);
        snprintf(args, sizeof args, "submit %s/rfj_npy.npy --robot g1", dir);
        CHECK_EQ_INT(py(args, out, sizeof out), 1);
        CHECK(strstr(out, "rfj_npy.txt") != NULL);
    }

    /* Errors: unknown job (404), malformed BVH (400 with the line). */
    CHECK_EQ_INT(py("status 999999", out, sizeof out), 1);
    CHECK(strstr(out, "retarget_client: 404") != NULL);
    snprintf(pa, sizeof pa, "%s/bad.bvh", dir);
    f = fopen(pa, "wb");
    fputs("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n", f);
    fclose(f);
    snprintf(args, sizeof args, "submit %s --robot g1", pa);
    CHECK_EQ_INT(py(args, out, sizeof out), 1);
    CHECK(strstr(out, "400") != NULL && strstr(out, "clip:4") != NULL);

    srv_stop(s);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    if (system(args)) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_python_client");
}
