/* test_http_jobs.c -- the job API end to end against the real daemon
 * in-process on 127.0.0.1:0, over HTTP with libcurl: a real clip from
 * ../shared/data/clips submitted, polled to success and its result.csv
 * compared byte for byte with what `retarget solve` (cli_solve) writes for
 * the same clip; two clips batched together give the bytes each gives
 * solo; `retarget fetch` (cli_fetch_job) writes the same NAME.csv;
 * joint positions (CSV, .npy, .npz) in the JSON and the raw form give the
 * CSV and NPZ bytes of `retarget solve` of the same file, and `retarget
 * fetch --format npz` the local NPZ's;
 * Idempotency-Key; malformed BVH (400 naming the line) and JSON (400
 * naming the offset); the body limit at N and N+1 (413, before the body is
 * read when Content-Length says so); the frame limit at N and N+1;
 * cancellation; restart recovery of queued and crash-interrupted running
 * jobs on the same database. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/base64.h"
#include "../retarget/job.h"
#include "../retarget/profile.h"
#include "../storage/store.h"
#include "http_util.h"
#include "joints_util.h"

static char dir[64];

/* Frames [from, from+n) of BVH text as a new clip (malloc'd). */
static char *cut_bvh(const char *text, int from, int n)
{
    const char *motion = strstr(text, "MOTION");
    const char *ft = motion ? strstr(motion, "Frame Time:") : NULL;
    if (!ft) return NULL;
    const char *rows = strchr(ft, '\n') + 1;
    size_t cap = strlen(text) + 64;
    char *out = malloc(cap);
    size_t k = (size_t)(motion - text);
    memcpy(out, text, k);
    k += (size_t)snprintf(out + k, cap - k, "MOTION\nFrames: %d\n", n);
    size_t ftl = (size_t)(rows - ft);
    memcpy(out + k, ft, ftl);
    k += ftl;
    const char *p = rows;
    for (int i = 0; i < from + n && *p; i++) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) + 1 : strlen(p);
        if (i >= from) {
            memcpy(out + k, p, l);
            k += l;
        }
        p += l;
    }
    out[k] = 0;
    return out;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* `retarget solve SRC --robot g1 -o DIR/OUT --quiet` and the NULL-ended
 * `extra` arguments. */
static int solve_cli_with(const char *src, const char *out, const char *const *extra)
{
    char outdir[256];
    char *argv[16];
    int argc = 0;
    snprintf(outdir, sizeof outdir, "%s/%s", dir, out);
    argv[argc++] = (char *)src;
    argv[argc++] = "--robot";
    argv[argc++] = "g1";
    argv[argc++] = "-o";
    argv[argc++] = outdir;
    argv[argc++] = "--quiet";
    for (int i = 0; extra && extra[i] && argc < 15; i++) argv[argc++] = (char *)extra[i];
    argv[argc] = NULL;
    return cli_solve(argc, argv);
}

/* `retarget solve SRC --robot g1 -o DIR/OUT --quiet [--max-lm N]` */
static int solve_cli(const char *src, const char *out, const char *max_lm)
{
    const char *extra[] = {max_lm ? "--max-lm" : NULL, max_lm, NULL};
    return solve_cli_with(src, out, extra);
}

/* `retarget solve SRC --robot g1 --format npz [--out-fps F]` into DIR/OUT. */
static int solve_cli_npz(const char *src, const char *out, const char *out_fps)
{
    const char *extra[] = {"--format", "npz", out_fps ? "--out-fps" : NULL, out_fps, NULL};
    return solve_cli_with(src, out, extra);
}

/* GET URL equals file DIR/OUT/NAME.npz byte for byte. */
static int npz_equals(const char *url, const char *out, const char *name)
{
    struct cli_server srv = {http_url, NULL};
    char path[256], *resp = NULL;
    size_t len = 0, resp_len = 0;
    long code = 0;
    snprintf(path, sizeof path, "%s/%s/%s.npz", dir, out, name);
    char *want = test_slurp(path, &len);
    int same = cli_http(&srv, "GET", url, NULL, NULL, 0, NULL, &code, &resp, &resp_len, NULL) == RT_OK &&
               code == 200 && want && resp_len == len && !memcmp(resp, want, len);
    if (!same) fprintf(stderr, "%s (HTTP %ld, %zu bytes) differs from %s (%zu bytes)\n", url, code, resp_len, path, len);
    free(resp);
    free(want);
    return same;
}

/* Every series FAMILY{part="P"} of the metrics text `resp` for P in
 * parts[0..n) is there and not negative; the one of part `busy` is above
 * zero. */
static void check_parts(const char *resp, const char *family, const char *const *parts, size_t n, const char *busy)
{
    for (size_t i = 0; resp && i < n; i++) {
        char key[128];
        snprintf(key, sizeof key, "%s{part=\"%s\"} ", family, parts[i]);
        const char *at = strstr(resp, key);
        double v = at ? strtod(at + strlen(key), NULL) : -1.0;
        CHECK(v >= 0.0);
        if (!strcmp(parts[i], busy)) CHECK(v > 0.0);
    }
}

static long long submit(const char *body, const char *key, long *code)
{
    char hdr[160], *resp = NULL;
    if (key) snprintf(hdr, sizeof hdr, "Idempotency-Key: %s", key);
    *code = http(NULL, "POST", "/v1/jobs", body, strlen(body), key ? hdr : NULL, &resp);
    long long id = resp ? (long long)json_num(resp, "id") : -1;
    free(resp);
    return id;
}

/* Result CSV of job `id` equals file DIR/OUT/NAME.csv byte for byte. */
static int result_equals(long long id, const char *out, const char *name)
{
    char path[256], url[64], *csv = NULL;
    size_t len = 0;
    snprintf(url, sizeof url, "/v1/jobs/%lld/result.csv", id);
    long code = http(NULL, "GET", url, NULL, 0, NULL, &csv);
    snprintf(path, sizeof path, "%s/%s/%s.csv", dir, out, name);
    char *want = test_slurp(path, &len);
    int same = code == 200 && csv && want && strlen(csv) == len && !memcmp(csv, want, len);
    if (!same) fprintf(stderr, "job %lld result.csv (HTTP %ld) differs from %s\n", id, code, path);
    free(csv);
    free(want);
    return same;
}

/* POST /v1/jobs of `body` (len bytes) as Content-Type `ctype` to `path`;
 * the job id (-1 without one), the status in *code, the reply in *reply
 * when reply is not NULL (caller frees). */
static long long submit_as(const char *path, const char *ctype, const char *body, size_t len, long *code,
                           char **reply)
{
    struct cli_server srv = {http_url, NULL};
    char *resp = NULL;
    *code = 0;
    if (cli_http(&srv, "POST", path, ctype, body, len, NULL, code, &resp, NULL, NULL) != RT_OK) *code = 0;
    long long id = resp ? (long long)json_num(resp, "id") : -1;
    if (reply) *reply = resp;
    else free(resp);
    return id;
}

/* GET URL gives exactly the `len` bytes of `want` with Content-Type `type`. */
static int get_bytes_equal(const char *url, const char *want, size_t len, const char *type)
{
    char *got = NULL;
    size_t got_len = 0;
    char cmd[512];
    struct cli_server srv = {http_url, NULL};
    long code = 0;
    int same = cli_http(&srv, "GET", url, NULL, NULL, 0, NULL, &code, &got, &got_len, NULL) == RT_OK && code == 200 &&
               got_len == len && !memcmp(got, want, len);
    free(got);
    /* The type, from the headers (cli_http keeps only the body). */
    snprintf(cmd, sizeof cmd, "curl -s -o /dev/null -w '%%{content_type}' '%s%s' | grep -qx '%s'", http_url, url, type);
    if (same && system(cmd)) {
        fprintf(stderr, "%s: Content-Type is not %s\n", url, type);
        same = 0;
    }
    if (!same) fprintf(stderr, "%s (HTTP %ld, %zu bytes) differs from the %zu bytes submitted\n", url, code, got_len, len);
    return same;
}

/* Joint positions through the daemon (docs/sources.md "Through the
 * daemon"): the world positions of the first 60 frames of jumping_jacks
 * as CSV, .npy (+ names) and .npz, each submitted in the JSON form (CSV
 * text, base64 bytes) and in the raw form (the file as the body, by its
 * Content-Type), give the result.csv and result.npz bytes `retarget
 * solve` writes for the same file; the job says "source": "joints", its
 * source reads back as sent, and `retarget fetch --format npz` writes the
 * local NPZ's bytes. */
static void test_joint_jobs(const char *bvh)
{
    struct kin_clip *c = NULL;
    struct rt_err err;
    char path[256], *csv = NULL, *npy = NULL, *npz = NULL, *names = NULL, state[16];
    size_t csv_len = 0, npy_len = 0, npz_len = 0, names_len = 0;
    long code = 0;
    CHECK_EQ_INT(kin_bvh_parse(bvh, strlen(bvh), "jj.bvh", &c, &err), RT_OK);
    if (!c) return;
    CHECK_EQ_INT(test_write_joint_files(c, 60, dir, "jjp"), 60);
    kin_clip_free(c);
    snprintf(path, sizeof path, "%s/jjp.csv", dir);
    csv = test_slurp(path, &csv_len);
    CHECK_EQ_INT(solve_cli(path, "refj", NULL), 0);
    CHECK_EQ_INT(solve_cli_npz(path, "refjnpz", NULL), 0);
    snprintf(path, sizeof path, "%s/jjp_npy.npy", dir);
    npy = test_slurp(path, &npy_len);
    CHECK_EQ_INT(solve_cli(path, "refj", NULL), 0);
    snprintf(path, sizeof path, "%s/jjp_npy.txt", dir);
    names = test_slurp(path, &names_len);
    snprintf(path, sizeof path, "%s/jjp_npz.npz", dir);
    npz = test_slurp(path, &npz_len);
    CHECK_EQ_INT(solve_cli(path, "refj", NULL), 0);
    CHECK(csv && npy && npz && names);
    if (!csv || !npy || !npz || !names) goto done;
    /* The JSON form: CSV as text, .npz and .npy as base64. */
    long long ids[6];
    const char *job_names[6] = {"jjp", "jjp_npz", "jjp_npy", "jjp", "jjp_npz", "jjp_npy"};
    for (int k = 0; k < 3; k++) {
        cJSON *j = cJSON_CreateObject(), *o = cJSON_AddObjectToObject(j, "joints");
        cJSON_AddStringToObject(j, "robot", "g1");
        cJSON_AddStringToObject(j, "name", job_names[k]);
        cJSON_AddStringToObject(o, "format", k == 0 ? "csv" : k == 1 ? "npz" : "npy");
        if (k == 0) {
            cJSON_AddStringToObject(o, "text", csv);
        } else {
            char *b64 = rt_base64_encode(k == 1 ? npz : npy, k == 1 ? npz_len : npy_len, NULL);
            cJSON_AddStringToObject(o, "data_base64", b64);
            free(b64);
        }
        if (k == 2) {
            cJSON *arr = cJSON_AddArrayToObject(o, "joint_names");
            for (char *p = names, *nl; *p; p = nl + 1) {
                nl = strchr(p, '\n');
                *nl = 0;
                cJSON_AddItemToArray(arr, cJSON_CreateString(p));
                *nl = '\n';
            }
        }
        char *body = cJSON_PrintUnformatted(j);
        cJSON_Delete(j);
        ids[k] = submit_as("/v1/jobs", "application/json", body, strlen(body), &code, NULL);
        CHECK_EQ_INT(code, 201);
        free(body);
    }
    /* The raw form: the file itself, told apart by its Content-Type. */
    {
        char q[4096] = "/v1/jobs?robot=g1&name=jjp_npy&joint_names=";
        size_t k = strlen(q);
        for (const char *p = names; *p && k + 2 < sizeof q; p++) q[k++] = *p == '\n' ? (p[1] ? ',' : 0) : *p;
        q[k] = 0;
        ids[3] = submit_as("/v1/jobs?robot=g1&name=jjp", "text/csv", csv, csv_len, &code, NULL);
        CHECK_EQ_INT(code, 201);
        ids[4] = submit_as("/v1/jobs?robot=g1&name=jjp_npz", "application/zip", npz, npz_len, &code, NULL);
        CHECK_EQ_INT(code, 201);
        ids[5] = submit_as(q, "application/x-npy", npy, npy_len, &code, NULL);
        CHECK_EQ_INT(code, 201);
    }
    for (int k = 0; k < 6; k++) {
        char url[96], *job = NULL;
        http_wait(NULL, ids[k], state);
        CHECK_EQ_STR(state, "succeeded");
        CHECK(result_equals(ids[k], "refj", job_names[k]));
        snprintf(url, sizeof url, "/v1/jobs/%lld", ids[k]);
        http(NULL, "GET", url, NULL, 0, NULL, &job);
        CHECK(job && strstr(job, "\"source\":\"joints\""));
        free(job);
    }
    {
        char url[96];
        snprintf(url, sizeof url, "/v1/jobs/%lld/result.npz", ids[0]);
        CHECK(npz_equals(url, "refjnpz", "jjp"));
        snprintf(url, sizeof url, "/v1/jobs/%lld/source", ids[1]);
        CHECK(get_bytes_equal(url, npz, npz_len, "application/zip"));
        snprintf(url, sizeof url, "/v1/jobs/%lld/source", ids[5]);
        CHECK(get_bytes_equal(url, npy, npy_len, "application/x-npy"));
        snprintf(url, sizeof url, "/v1/jobs/%lld/source", ids[3]);
        CHECK(get_bytes_equal(url, csv, csv_len, "text/csv"));
    }
    /* retarget fetch --format npz: the local NPZ's bytes. */
    {
        struct cli_server srv = {http_url, NULL};
        char fdir[128], p1[256], p2[256];
        size_t l1 = 0, l2 = 0;
        snprintf(fdir, sizeof fdir, "%s/fetched_npz", dir);
        CHECK_EQ_INT(cli_fetch_job(&srv, ids[0], fdir, NULL, 1, &err), RT_OK);
        snprintf(p1, sizeof p1, "%s/jjp.npz", fdir);
        snprintf(p2, sizeof p2, "%s/refjnpz/jjp.npz", dir);
        char *a = test_slurp(p1, &l1), *b = test_slurp(p2, &l2);
        CHECK(a && b && l1 == l2 && !memcmp(a, b, l1));
        free(a);
        free(b);
        char *argv[] = {"0", "--server", http_url, "-o", fdir, "--format", "npz", NULL};
        char idtext[32];
        snprintf(idtext, sizeof idtext, "%lld", ids[4]);
        argv[0] = idtext;
        CHECK_EQ_INT(cli_fetch(7, argv), 0);
        snprintf(p1, sizeof p1, "%s/jjp_npz.npz", fdir);
        snprintf(p2, sizeof p2, "%s/jjp_npz.report.json", fdir);
        CHECK(access(p1, R_OK) == 0 && access(p2, R_OK) == 0);
        char *bad[] = {idtext, "--server", http_url, "-o", fdir, "--format", "bvh", NULL};
        CHECK_EQ_INT(cli_fetch(7, bad), 2);
    }
done:
    free(csv);
    free(npy);
    free(npz);
    free(names);
}

static int job_int(long long id, const char *field)
{
    char url[64], *body = NULL;
    snprintf(url, sizeof url, "/v1/jobs/%lld", id);
    http(NULL, "GET", url, NULL, 0, NULL, &body);
    int v = body ? (int)json_num(body, field) : -1;
    free(body);
    return v;
}

int main(void)
{
    char path[512], state[16], buf[200];
    struct srv_config cfg;
    long code = 0;
    snprintf(dir, sizeof dir, "/tmp/test_http_jobs.XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(path, sizeof path, "%s/clips/run_forward.bvh", test_data_dir());
    char *run_forward = test_slurp(path, NULL);
    snprintf(path, sizeof path, "%s/clips/jumping_jacks.bvh", test_data_dir());
    char *jj = test_slurp(path, NULL);
    if (!run_forward || !jj) TEST_SKIP("no ../shared/data/clips (set RT_SHARED_DATA)");
    char src_rf[256], src_a[256], src_b[256], src_c[256];
    snprintf(src_rf, sizeof src_rf, "%s/clips/run_forward.bvh", test_data_dir());
    char *cut_a = cut_bvh(jj, 0, 60), *cut_b = cut_bvh(jj, 60, 60), *cut_c = cut_bvh(jj, 0, 61);
    snprintf(src_a, sizeof src_a, "%s/jj_a.bvh", dir);
    snprintf(src_b, sizeof src_b, "%s/jj_b.bvh", dir);
    snprintf(src_c, sizeof src_c, "%s/jj_c.bvh", dir);
    write_text(src_a, cut_a);
    write_text(src_b, cut_b);
    write_text(src_c, cut_c);
    /* References from the offline tool, each clip solved alone. */
    CHECK_EQ_INT(solve_cli(src_rf, "ref", NULL), 0);
    CHECK_EQ_INT(solve_cli(src_a, "ref", NULL), 0);
    CHECK_EQ_INT(solve_cli(src_b, "ref", NULL), 0);
    CHECK_EQ_INT(solve_cli(src_a, "ref8", "8"), 0);
    CHECK_EQ_INT(solve_cli_npz(src_rf, "refnpz", NULL), 0);
    CHECK_EQ_INT(solve_cli_npz(src_rf, "refnpz50", "50"), 0);

    /* --- daemon 1: no auth on loopback, 256 KiB bodies, 300 ms batch window --- */
    srv_config_default(&cfg);
    snprintf(path, sizeof path, "%s/jobs.db", dir);
    cfg.db_path = path;
    cfg.no_auth = 1;
    cfg.max_body = 256u << 10;
    cfg.batch_wait_ms = 300;
    cfg.solver_threads = 2;
    struct srv *s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_jobs");
    CHECK_EQ_INT(http(NULL, "GET", "/v1/health", NULL, 0, NULL, NULL), 200);

    /* A real clip, polled to success; result bytes == retarget solve. */
    char *body = job_body("g1", "run_forward", run_forward, -1);
    long long id1 = submit(body, "key-1", &code);
    CHECK_EQ_INT(code, 201);
    http_wait(NULL, id1, state);
    CHECK_EQ_STR(state, "succeeded");
    CHECK(result_equals(id1, "ref", "run_forward"));
    /* result.npz, rendered from the stored floats: the bytes of
     * `retarget solve --format npz`, and with ?fps= of --out-fps. */
    {
        char nurl[96];
        snprintf(nurl, sizeof nurl, "/v1/jobs/%lld/result.npz", id1);
        CHECK(npz_equals(nurl, "refnpz", "run_forward"));
        snprintf(nurl, sizeof nurl, "/v1/jobs/%lld/result.npz?fps=50", id1);
        CHECK(npz_equals(nurl, "refnpz50", "run_forward"));
        snprintf(nurl, sizeof nurl, "/v1/jobs/%lld/result.npz?fps=0", id1);
        http_expect_error(NULL, "GET", nurl, NULL, 0, 400, "query.fps", "expected a frame rate");
    }
    test_joint_jobs(jj);
    /* One job, built once (retarget/job.h): the submission plans it (one
     * parse of the clip) and stores the plan; the worker reads the plan (one
     * more parse of the clip) and builds the targets once. Bundled profiles
     * are not parsed again; an automatic mapping is read back from the plan
     * (one parse of it), never detected again. */
    for (int round = 0; round < 2; round++) {
        char ex_path[512];
        snprintf(ex_path, sizeof ex_path, "%s/clips/%s", test_data_dir(), round ? "run_forward.bvh" : "edge/example.bvh");
        char *ex = test_slurp(ex_path, NULL);
        struct rtg_job_counts c0, c1;
        CHECK(ex != NULL);
        if (!ex) break;
        long p0 = rtg_profile_parse_count();
        rtg_job_counts_get(&c0);
        char *eb = job_body("g1", round ? "rf_again" : "example", ex, -1);
        long long ie = submit(eb, NULL, &code);
        CHECK_EQ_INT(code, 201);
        rtg_job_counts_get(&c1);
        CHECK_EQ_INT((int)(c1.plans - c0.plans), 1);
        CHECK_EQ_INT((int)(c1.builds - c0.builds), 0); /* the submission only plans */
        http_wait(NULL, ie, state);
        CHECK_EQ_STR(state, "succeeded");
        rtg_job_counts_get(&c1);
        CHECK_EQ_INT((int)(c1.plans - c0.plans), 1);
        CHECK_EQ_INT((int)(c1.loads - c0.loads), 1);
        CHECK_EQ_INT((int)(c1.builds - c0.builds), 1);
        CHECK_EQ_INT((int)(c1.source_parses - c0.source_parses), 2);
        CHECK_EQ_INT((int)(rtg_profile_parse_count() - p0), round ? 0 : 1);
        if (round) CHECK(result_equals(ie, "ref", "run_forward"));
        free(eb);
        free(ex);
    }
    /* Idempotency-Key: the same job again (200), another body refused (409). */
    CHECK_EQ_INT(submit(body, "key-1", &code), id1);
    CHECK_EQ_INT(code, 200);
    char *body2 = job_body("g1", "other", run_forward, -1);
    submit(body2, "key-1", &code);
    CHECK_EQ_INT(code, 409);
    free(body2);
    /* ?trajectory= and ?header= take 0/1/false/true, and refuse the rest. */
    {
        char qurl[96], *qr = NULL;
        snprintf(qurl, sizeof qurl, "/v1/jobs/%lld/result?trajectory=false", id1);
        CHECK_EQ_INT(http(NULL, "GET", qurl, NULL, 0, NULL, &qr), 200);
        CHECK(qr && !strstr(qr, "\"trajectory\":["));
        free(qr);
        snprintf(qurl, sizeof qurl, "/v1/jobs/%lld/result?trajectory=true", id1);
        CHECK_EQ_INT(http(NULL, "GET", qurl, NULL, 0, NULL, &qr), 200);
        CHECK(qr && strstr(qr, "\"trajectory\":[["));
        free(qr);
        snprintf(qurl, sizeof qurl, "/v1/jobs/%lld/result?trajectory=no", id1);
        CHECK_EQ_INT(http(NULL, "GET", qurl, NULL, 0, NULL, &qr), 400);
        CHECK_EQ_STR(err_field(qr, "where", buf, sizeof buf), "query.trajectory");
        free(qr);
        snprintf(qurl, sizeof qurl, "/v1/jobs/%lld/result.csv?header=false", id1);
        CHECK_EQ_INT(http(NULL, "GET", qurl, NULL, 0, NULL, &qr), 200);
        CHECK(qr && strncmp(qr, "root_x", 6));
        free(qr);
        snprintf(qurl, sizeof qurl, "/v1/jobs/%lld/result.csv?header=1", id1);
        CHECK_EQ_INT(http(NULL, "GET", qurl, NULL, 0, NULL, &qr), 200);
        CHECK(qr && !strncmp(qr, "root_x", 6));
        free(qr);
        snprintf(qurl, sizeof qurl, "/v1/jobs/%lld/result.csv?header=2", id1);
        CHECK_EQ_INT(http(NULL, "GET", qurl, NULL, 0, NULL, &qr), 400);
        CHECK_EQ_STR(err_field(qr, "where", buf, sizeof buf), "query.header");
        free(qr);
    }
    /* A G1 trajectory (job 1's result) onto the H1 without a profile: two
     * different models, so the bundled pair profile maps it. */
    {
        char url1[64], *csv = NULL, *resp1 = NULL;
        snprintf(url1, sizeof url1, "/v1/jobs/%lld/result.csv", id1);
        CHECK_EQ_INT(http(NULL, "GET", url1, NULL, 0, NULL, &csv), 200);
        cJSON *tj = cJSON_CreateObject();
        cJSON_AddStringToObject(tj, "robot", "h1");
        cJSON_AddStringToObject(tj, "source_robot", "g1");
        cJSON_AddStringToObject(tj, "trajectory", csv ? csv : "");
        char *tb = cJSON_PrintUnformatted(tj);
        cJSON_Delete(tj);
        CHECK_EQ_INT(http(NULL, "POST", "/v1/jobs", tb, strlen(tb), NULL, &resp1), 201);
        cJSON *jr = resp1 ? cJSON_Parse(resp1) : NULL;
        const cJSON *pn = cJSON_GetObjectItemCaseSensitive(jr, "profile");
        CHECK(cJSON_IsString(pn) && !strcmp(pn->valuestring, "g1_to_h1"));
        long long it = jr ? (long long)json_num(resp1, "id") : -1;
        http_wait(NULL, it, state);
        CHECK_EQ_STR(state, "succeeded");
        cJSON_Delete(jr);
        free(resp1);
        free(tb);
        free(csv);
    }
    /* retarget fetch writes NAME.csv like retarget solve. */
    {
        struct cli_server srv = {http_url, NULL};
        struct rt_err err;
        char fdir[128], p1[256], p2[256];
        snprintf(fdir, sizeof fdir, "%s/fetched", dir);
        CHECK_EQ_INT(cli_fetch_job(&srv, id1, fdir, NULL, 0, &err), RT_OK);
        snprintf(p1, sizeof p1, "%s/run_forward.csv", fdir);
        snprintf(p2, sizeof p2, "%s/ref/run_forward.csv", dir);
        size_t l1 = 0, l2 = 0;
        char *a = test_slurp(p1, &l1), *b = test_slurp(p2, &l2);
        CHECK(a && b && l1 == l2 && !memcmp(a, b, l1));
        free(a);
        free(b);
        snprintf(p1, sizeof p1, "%s/run_forward.report.json", fdir);
        a = test_slurp(p1, NULL);
        cJSON *rep = a ? cJSON_Parse(a) : NULL;
        CHECK(cJSON_GetObjectItemCaseSensitive(rep, "quality") != NULL);
        cJSON_Delete(rep);
        free(a);
    }
    free(body);

    /* Two clips submitted together share one batch and give their solo bytes. */
    char *ba = job_body("g1", "jj_a", cut_a, -1), *bb = job_body("g1", "jj_b", cut_b, -1);
    long long ia = submit(ba, NULL, &code), ib = submit(bb, NULL, &code);
    http_wait(NULL, ia, state);
    CHECK_EQ_STR(state, "succeeded");
    http_wait(NULL, ib, state);
    CHECK_EQ_STR(state, "succeeded");
    CHECK_EQ_INT(job_int(ia, "batch_clips"), 2);
    CHECK_EQ_INT(job_int(ib, "batch_clips"), 2);
    CHECK(result_equals(ia, "ref", "jj_a"));
    CHECK(result_equals(ib, "ref", "jj_b"));
    free(ba);
    free(bb);

    /* Malformed BVH: 400 naming the line. */
    char *resp = NULL;
    const char *bad_bvh = "{\"robot\":\"g1\",\"clip\":\"HIERARCHY\\nROOT Hips\\n{\\n  OFFSET 0 0 0\\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\\n  OFFSET 1 2 oops\\n\"}";
    http_expect_error(NULL, "POST", "/v1/jobs", bad_bvh, strlen(bad_bvh), 400, "clip:6", NULL);
    /* Malformed JSON: 400 naming the offset. */
    const char *bad_json = "{\"robot\":\"g1\",\n \"clip\": tru}";
    http_expect_error(NULL, "POST", "/v1/jobs", bad_json, strlen(bad_json), 400, "body:2:10", "offset 24");
    /* A field of the wrong type, an unknown option: 400 naming the field. */
    const char *bad_opt = "{\"robot\":\"g1\",\"clip\":\"x\",\"options\":{\"max_lm_iters\":-3}}";
    http_expect_error(NULL, "POST", "/v1/jobs", bad_opt, strlen(bad_opt), 400, "body.options.max_lm_iters", NULL);
    /* fps is for trajectories: a BVH clip carries its own Frame Time. */
    const char *bvh_fps = "{\"robot\":\"g1\",\"clip\":\"x\",\"options\":{\"fps\":60}}";
    http_expect_error(NULL, "POST", "/v1/jobs", bvh_fps, strlen(bvh_fps), 400, "body.options.fps", "Frame Time");
    const char *bad_robot = "{\"robot\":\"nosuch\",\"clip\":\"x\"}";
    code = http(NULL, "POST", "/v1/jobs", bad_robot, strlen(bad_robot), NULL, &resp);
    CHECK_EQ_INT(code, 404);
    free(resp);

    /* A clip that cannot be mapped is bad input: 400 saying what is missing. */
    {
        char spath[512], *sin = NULL;
        snprintf(spath, sizeof spath, "%s/clips/edge/sinusoidal.bvh", test_data_dir());
        char *sclip = test_slurp(spath, NULL);
        char *sb = sclip ? job_body("g1", "sinusoidal", sclip, -1) : NULL;
        code = sb ? http(NULL, "POST", "/v1/jobs", sb, strlen(sb), NULL, &sin) : 0;
        CHECK_EQ_INT(code, 400);
        CHECK_EQ_STR(err_field(sin, "code", buf, sizeof buf), "invalid argument");
        CHECK_EQ_STR(err_field(sin, "where", buf, sizeof buf), "skeleton");
        CHECK(strstr(err_field(sin, "message", buf, sizeof buf), "cannot map") != NULL);
        free(sin);
        free(sb);
        free(sclip);
    }

    /* Body limit: N bytes are read (and fail as JSON: 400), N+1 refused (413). */
    size_t n = cfg.max_body;
    char *big = malloc(n + 2);
    memset(big, ' ', n + 1);
    big[0] = '[';
    big[n + 1] = 0;
    code = http(NULL, "POST", "/v1/jobs", big, n, NULL, &resp);
    CHECK_EQ_INT(code, 400);
    free(resp);
    code = http(NULL, "POST", "/v1/jobs", big, n + 1, NULL, &resp);
    CHECK_EQ_INT(code, 413);
    CHECK(strstr(err_field(resp, "message", buf, sizeof buf), "larger than the limit of 262144 bytes") != NULL);
    CHECK_EQ_STR(err_field(resp, "code", buf, sizeof buf), "limit exceeded");
    free(resp);
    free(big);

    /* Cancel a queued job: cancelled, no result, a second cancel is 409. */
    char *bc = job_body("g1", "to_cancel", cut_a, 3);
    long long ic = submit(bc, NULL, &code);
    char url[64];
    snprintf(url, sizeof url, "/v1/jobs/%lld", ic);
    code = http(NULL, "DELETE", url, NULL, 0, NULL, &resp);
    CHECK_EQ_INT(code, 200);
    CHECK(resp && strstr(resp, "\"state\":\"cancelled\""));
    free(resp);
    CHECK_EQ_INT(http(NULL, "DELETE", url, NULL, 0, NULL, NULL), 409);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result", ic);
    CHECK_EQ_INT(http(NULL, "GET", url, NULL, 0, NULL, NULL), 409);
    free(bc);
    CHECK_EQ_INT(http(NULL, "GET", "/v1/jobs/999999", NULL, 0, NULL, NULL), 404);
    /* Metrics. */
    code = http(NULL, "GET", "/v1/metrics", NULL, 0, NULL, &resp);
    CHECK_EQ_INT(code, 200);
    /* Six of them the joint-position jobs of test_joint_jobs(). */
    CHECK(resp && strstr(resp, "retargetd_jobs{state=\"succeeded\"} 12"));
    CHECK(resp && strstr(resp, "retargetd_http_requests_total{code=\"413\"} 1"));
    /* The submit histogram: every part's buckets cumulative up to its
     * count; every job planned and inserted (at least the 12 succeeded). */
    {
        static const char *const parts[] = {"body",          "queue",        "prepare",     "plan",
                                            "insert",        "insert_pack",  "insert_group", "insert_lock",
                                            "insert_write",  "insert_commit", "insert_more", "reply",     "resume"};
        for (size_t i = 0; resp && i < sizeof parts / sizeof parts[0]; i++) {
            char key[96];
            snprintf(key, sizeof key, "retargetd_submit_seconds_bucket{part=\"%s\",le=\"", parts[i]);
            long long prev = 0, last = -1, count = -1;
            int buckets = 0, monotone = 1;
            for (const char *at = strstr(resp, key); at; at = strstr(at + 1, key)) {
                const char *v = strchr(at, '}');
                long long k = v ? strtoll(v + 1, NULL, 10) : -1;
                monotone &= k >= prev;
                prev = last = k;
                buckets++;
            }
            snprintf(key, sizeof key, "retargetd_submit_seconds_count{part=\"%s\"} ", parts[i]);
            const char *c = strstr(resp, key);
            if (c) count = strtoll(c + strlen(key), NULL, 10);
            CHECK_EQ_INT(buckets, 13);
            CHECK(monotone);
            CHECK(last == count);
            if (!strcmp(parts[i], "plan") || !strcmp(parts[i], "insert")) CHECK(count >= 12);
        }
    }
    /* The worker's wall time by part: each one there, the solves of 12
     * succeeded jobs more than nothing (their builds claimed them). */
    {
        static const char *const parts[] = {"idle", "build", "finish", "claim", "solve", "mark"};
        check_parts(resp, "retargetd_worker_seconds_total", parts, sizeof parts / sizeof parts[0], "solve");
    }
    /* The builds' wall time by part: each one there, the targets of 12
     * jobs more than nothing. */
    {
        static const char *const parts[] = {"rows", "targets", "claim", "pack"};
        check_parts(resp, "retargetd_build_seconds_total", parts, sizeof parts / sizeof parts[0], "targets");
    }
    free(resp);
    /* A clip no bundled profile fits is mapped automatically ("auto:NAME",
     * not a storable profile name): accepted, solved, named in the report. */
    {
        char epath[512];
        snprintf(epath, sizeof epath, "%s/clips/edge/example.bvh", test_data_dir());
        char *ex = test_slurp(epath, NULL), *rep = NULL;
        CHECK(ex != NULL);
        char *be = ex ? job_body("g1", "example", ex, 2) : NULL;
        long long ie = be ? submit(be, NULL, &code) : -1;
        CHECK_EQ_INT(code, 201);
        http_wait(NULL, ie, state);
        CHECK_EQ_STR(state, "succeeded");
        char eurl[96];
        snprintf(eurl, sizeof eurl, "/v1/jobs/%lld/result?trajectory=0", ie);
        CHECK_EQ_INT(http(NULL, "GET", eurl, NULL, 0, NULL, &rep), 200);
        cJSON *rj = rep ? cJSON_Parse(rep) : NULL;
        const cJSON *pn = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rj, "report"), "profile");
        CHECK(cJSON_IsString(pn) && !strncmp(pn->valuestring, "auto:", 5));
        cJSON_Delete(rj);
        free(rep);
        free(be);
        free(ex);
    }
    srv_stop(s);

    /* --- restart recovery: a queued job and a crash-interrupted running one --- */
    cfg.batch_wait_ms = 600000; /* nothing dispatches: the jobs stay queued */
    cfg.max_frames = 60;
    cfg.max_active = 3;
    s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_jobs");
    char *bq = job_body("g1", "jj_a", cut_a, 8), *br = job_body("g1", "jj_b", cut_b, -1);
    long long iq = submit(bq, NULL, &code);
    CHECK_EQ_INT(code, 201);
    long long ir = submit(br, NULL, &code);
    CHECK_EQ_INT(code, 201);
    /* A job on an uploaded robot and profile: while it is queued neither
     * can be replaced (409); the robot is replaced after it ran (below). */
    size_t g1_len = 0, h1_len = 0, prof_len = 0;
    char *g1_urdf = test_slurp("robots/g1.urdf", &g1_len), *h1_urdf = test_slurp("robots/h1.urdf", &h1_len);
    const char *prof_text = rtg_profile_bundled_text("cmu_asf_g1", &prof_len);
    CHECK(g1_urdf && h1_urdf && prof_text);
    CHECK_EQ_INT(http(NULL, "PUT", "/v1/robots/lab", g1_urdf, g1_len, NULL, NULL), 201);
    CHECK_EQ_INT(http(NULL, "PUT", "/v1/profiles/studio", prof_text, prof_len, NULL, NULL), 201);
    long long il = -1;
    {
        cJSON *lj = cJSON_CreateObject();
        cJSON_AddStringToObject(lj, "robot", "lab");
        cJSON_AddStringToObject(lj, "profile", "studio");
        cJSON_AddStringToObject(lj, "name", "jj_lab");
        cJSON_AddStringToObject(lj, "clip", cut_a);
        char *lb = cJSON_PrintUnformatted(lj);
        cJSON_Delete(lj);
        il = submit(lb, NULL, &code);
        CHECK_EQ_INT(code, 201);
        free(lb);
    }
    http_expect_error(NULL, "PUT", "/v1/robots/lab", h1_urdf, h1_len, 409, NULL,
                      "queued or running job(s) use robot 'lab'");
    http_expect_error(NULL, "PUT", "/v1/profiles/studio", prof_text, prof_len, 409, NULL, "use profile 'studio'");
    /* Active-job limit: 3 queued accepted, a fourth refused with 429. */
    code = http(NULL, "POST", "/v1/jobs", bq, strlen(bq), NULL, &resp);
    CHECK_EQ_INT(code, 429);
    CHECK_EQ_STR(err_field(resp, "code", buf, sizeof buf), "too many requests");
    CHECK_EQ_STR(err_field(resp, "where", buf, sizeof buf), "jobs");
    free(resp);
    /* Frame limit: 60 frames accepted (above), 61 refused. */
    char *b61 = job_body("g1", "jj_c", cut_c, -1);
    code = http(NULL, "POST", "/v1/jobs", b61, strlen(b61), NULL, &resp);
    CHECK_EQ_INT(code, 413);
    CHECK(resp && strstr(resp, "61 frames: the limit is 60"));
    free(resp);
    free(b61);
    srv_stop(s);
    {
        /* A crash while ir was running: claimed, then nothing. */
        struct store *st = NULL;
        struct rt_err err;
        int claimed = 0;
        CHECK_EQ_INT(store_open(path, &st, &err), RT_OK);
        CHECK_EQ_INT(store_job_claim(st, ir, &claimed, &err), RT_OK);
        CHECK_EQ_INT(claimed, 1);
        store_close(st);
    }
    cfg.batch_wait_ms = 10;
    s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_jobs");
    http_wait(NULL, iq, state);
    CHECK_EQ_STR(state, "succeeded");
    http_wait(NULL, ir, state);
    CHECK_EQ_STR(state, "succeeded");
    CHECK_EQ_INT(job_int(ir, "attempts"), 2);
    CHECK(result_equals(iq, "ref8", "jj_a"));
    CHECK(result_equals(ir, "ref", "jj_b"));
    /* The robot of a finished job replaced: its result reads as before. */
    http_wait(NULL, il, state);
    CHECK_EQ_STR(state, "succeeded");
    {
        char lurl[96], *before_csv = NULL, *after_csv = NULL, *before_js = NULL, *after_js = NULL;
        snprintf(lurl, sizeof lurl, "/v1/jobs/%lld/result.csv", il);
        CHECK_EQ_INT(http(NULL, "GET", lurl, NULL, 0, NULL, &before_csv), 200);
        snprintf(lurl, sizeof lurl, "/v1/jobs/%lld/result", il);
        CHECK_EQ_INT(http(NULL, "GET", lurl, NULL, 0, NULL, &before_js), 200);
        CHECK_EQ_INT(http(NULL, "PUT", "/v1/robots/lab", h1_urdf, h1_len, NULL, NULL), 201);
        CHECK_EQ_INT(http(NULL, "GET", lurl, NULL, 0, NULL, &after_js), 200);
        snprintf(lurl, sizeof lurl, "/v1/jobs/%lld/result.csv", il);
        CHECK_EQ_INT(http(NULL, "GET", lurl, NULL, 0, NULL, &after_csv), 200);
        CHECK(before_csv && after_csv && !strcmp(before_csv, after_csv));
        CHECK(before_csv && !strncmp(before_csv, "root_x,", 7) && strstr(before_csv, "left_wrist_yaw_joint"));
        CHECK(before_js && after_js && !strcmp(before_js, after_js));
        free(before_csv);
        free(after_csv);
        free(before_js);
        free(after_js);
    }
    free(g1_urdf);
    free(h1_urdf);
    free(bq);
    free(br);
    srv_stop(s);

    free(run_forward);
    free(jj);
    free(cut_a);
    free(cut_b);
    free(cut_c);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    return test_report("test_http_jobs");
}
