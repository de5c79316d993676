/* test_http_ui.c -- what the web page needs from the daemon, against the
 * real daemon in-process on 127.0.0.1:0: the page at / and /ui/NAME
 * (content types; index.html "no-cache" with an ETag and 304 on
 * If-None-Match; hashed assets cacheable and immutable; 404 for unknown,
 * dot and path-like names; no token needed), --static-dir (files read from
 * the folder; not a folder is refused), GET /v1/token, GET
 * /v1/robots/NAME/urdf (bundled and uploaded text), GET /v1/jobs/ID/source
 * (the clip as submitted, only to its owner; stored packed, and a 500
 * naming the job when the stored bytes are corrupt), and GET
 * /v1/jobs/ID/result?series=1 (per-frame series that agree with the report;
 * the reply without it unchanged). */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kinematics/robot.h"
#include "db_util.h"
#include "http_util.h"

struct reply {
    long code;
    char hdrs[4096];
    char *body;
    size_t len;
};

static size_t keep_headers(char *p, size_t size, size_t n, void *user)
{
    struct reply *r = user;
    size_t used = strlen(r->hdrs), len = size * n;
    if (used + len < sizeof r->hdrs) {
        memcpy(r->hdrs + used, p, len);
        r->hdrs[used + len] = 0;
    }
    return len;
}

static size_t keep_body(char *p, size_t size, size_t n, void *user)
{
    struct reply *r = user;
    size_t len = size * n;
    char *b = realloc(r->body, r->len + len + 1);
    if (!b) return 0;
    memcpy(b + r->len, p, len);
    r->body = b;
    r->len += len;
    r->body[r->len] = 0;
    return len;
}

/* METHOD PATH with an optional token and one optional extra header line;
 * status, headers and body into *r (r->body freed by the caller). */
static void fetch(const char *token, const char *method, const char *path, const char *header, struct reply *r)
{
    char url[512], auth[300];
    struct curl_slist *h = NULL;
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    if (!c) return;
    snprintf(url, sizeof url, "%s%s", http_url, path);
    if (token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    if (header) h = curl_slist_append(h, header);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    if (!strcmp(method, "HEAD")) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, keep_headers);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
}

/* The value of header `name` (case-insensitive) in r->hdrs into out[cap]; "" when absent. */
static const char *header(const struct reply *r, const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    out[0] = 0;
    for (const char *p = r->hdrs; p && *p;) {
        const char *e = strstr(p, "\r\n");
        if (!strncasecmp(p, name, n) && p[n] == ':') {
            const char *v = p + n + 1;
            while (*v == ' ') v++;
            size_t l = e ? (size_t)(e - v) : strlen(v);
            snprintf(out, cap, "%.*s", (int)l, v);
            break;
        }
        p = e ? e + 2 : NULL;
    }
    return out;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The page's files, embedded (the real bundle or, without npm, the
 * placeholder page). */
static void check_page(void)
{
    struct reply r;
    char v[256], etag[128], inm[200];
    fetch(NULL, "GET", "/", NULL, &r);
    CHECK_EQ_INT(r.code, 200);
    CHECK_EQ_STR(header(&r, "Content-Type", v, sizeof v), "text/html; charset=utf-8");
    CHECK_EQ_STR(header(&r, "Cache-Control", v, sizeof v), "no-cache");
    header(&r, "ETag", etag, sizeof etag);
    CHECK(strlen(etag) == 34 && etag[0] == '"');
    CHECK(r.body && strstr(r.body, "<title>retargetd</title>"));
    /* The bundle's script and style sheet, by the names index.html gives them. */
    const char *js = r.body ? strstr(r.body, "/ui/app-") : NULL;
    int placeholder = r.body && strstr(r.body, "built without its web page");
    CHECK(js || placeholder);
    if (js) {
        char path[128];
        size_t n = strcspn(js, "\"");
        snprintf(path, sizeof path, "%.*s", (int)n, js);
        struct reply a;
        fetch(NULL, "GET", path, NULL, &a);
        CHECK_EQ_INT(a.code, 200);
        CHECK_EQ_STR(header(&a, "Cache-Control", v, sizeof v), "public, max-age=31536000, immutable");
        CHECK(strstr(path, ".js") ? !strcmp(header(&a, "Content-Type", v, sizeof v), "text/javascript; charset=utf-8")
                                  : !strcmp(header(&a, "Content-Type", v, sizeof v), "text/css; charset=utf-8"));
        CHECK(a.len > 1000);
        CHECK_EQ_STR(header(&a, "ETag", v, sizeof v), "");
        free(a.body);
    }
    free(r.body);
    /* Revalidation: the same ETag is 304 without a body, another one 200. */
    snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
    fetch(NULL, "GET", "/", inm, &r);
    CHECK_EQ_INT(r.code, 304);
    CHECK_EQ_INT((long)r.len, 0);
    CHECK_EQ_STR(header(&r, "ETag", v, sizeof v), etag);
    free(r.body);
    fetch(NULL, "GET", "/", "If-None-Match: \"0000\"", &r);
    CHECK_EQ_INT(r.code, 200);
    free(r.body);
    fetch(NULL, "HEAD", "/", NULL, &r);
    CHECK_EQ_INT(r.code, 200);
    free(r.body);
    /* Unknown, dot and path-like names; other methods; no page under /v1. */
    const char *bad[] = {"/ui/nosuch.js", "/ui/", "/ui/.placeholder", "/ui/a/../index.html", "/ui/%2e%2e%2fMakefile",
                         "/index.html", "/ui/index.html/x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char where[64];
        fetch(NULL, "GET", bad[i], NULL, &r);
        CHECK_EQ_INT(r.code, 404);
        CHECK_EQ_STR(err_field(r.body ? r.body : "", "where", where, sizeof where), "url");
        if (r.code != 404) fprintf(stderr, "  GET %s\n", bad[i]);
        free(r.body);
    }
    fetch(NULL, "POST", "/", NULL, &r);
    CHECK_EQ_INT(r.code, 405);
    CHECK_EQ_STR(header(&r, "Allow", v, sizeof v), "GET, HEAD");
    free(r.body);
}

int main(void)
{
    char dir[64], db[128], path[512], buf[256];
    char admin[SRV_TOKEN_HEX + 1], bob[SRV_TOKEN_HEX + 1], carol[SRV_TOKEN_HEX + 1];
    struct rt_err err;
    struct srv_config cfg;
    struct reply r;
    char *resp = NULL;
    size_t len = 0;
    snprintf(dir, sizeof dir, "/tmp/test_http_ui.XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(db, sizeof db, "%s/ui.db", dir);
    CHECK_EQ_INT(srv_token_add(db, "alice", 1, admin, &err), RT_OK);
    CHECK_EQ_INT(srv_token_add(db, "bob", 0, bob, &err), RT_OK);
    CHECK_EQ_INT(srv_token_add(db, "carol", 0, carol, &err), RT_OK);

    srv_config_default(&cfg);
    cfg.db_path = db;
    cfg.batch_wait_ms = 0;
    cfg.solver_threads = 2;
    struct srv *s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_ui");

    /* The page needs no token; the API does. */
    check_page();

    /* GET /v1/token. */
    CHECK_EQ_INT(http(NULL, "GET", "/v1/token", NULL, 0, NULL, NULL), 401);
    CHECK_EQ_INT(http(bob, "GET", "/v1/token", NULL, 0, NULL, &resp), 200);
    CHECK_EQ_STR(resp, "{\"name\":\"bob\",\"admin\":false,\"auth\":true}");
    free(resp);
    CHECK_EQ_INT(http(admin, "GET", "/v1/token", NULL, 0, NULL, &resp), 200);
    CHECK_EQ_STR(resp, "{\"name\":\"alice\",\"admin\":true,\"auth\":true}");
    free(resp);
    CHECK_EQ_INT(http(bob, "DELETE", "/v1/token", NULL, 0, NULL, NULL), 405);

    /* GET /v1/robots/NAME/urdf: the bundled text, an upload's bytes. */
    const char *g1 = kin_robot_bundled_text("g1", &len);
    CHECK(g1 != NULL && kin_robot_bundled_text("nosuch", NULL) == NULL);
    fetch(bob, "GET", "/v1/robots/g1/urdf", NULL, &r);
    CHECK_EQ_INT(r.code, 200);
    CHECK_EQ_STR(header(&r, "Content-Type", buf, sizeof buf), "application/xml");
    CHECK(g1 && r.len == len && !memcmp(r.body, g1, len));
    free(r.body);
    CHECK_EQ_INT(http(NULL, "GET", "/v1/robots/g1/urdf", NULL, 0, NULL, NULL), 401);
    http_expect_error(bob, "GET", "/v1/robots/nosuch/urdf", NULL, 0, 404, "robot", "no robot named 'nosuch'");
    http_expect_error(bob, "GET", "/v1/robots/g1/mjcf", NULL, 0, 404, "url", NULL);
    http_expect_error(bob, "GET", "/v1/profiles/cmu_g1/urdf", NULL, 0, 404, "url", NULL);
    http_expect_error(bob, "GET", "/v1/robots/a.urdf/urdf", NULL, 0, 400, "url", NULL);
    http_expect_error(admin, "PUT", "/v1/robots/g1/urdf", "x", 1, 405, "method", NULL);
    snprintf(path, sizeof path, "%s/robots/h1.urdf", "../shared/data");
    char *h1 = test_slurp(path, &len);
    if (h1) {
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/lab_h1", h1, len, NULL, NULL), 201);
        fetch(bob, "GET", "/v1/robots/lab_h1/urdf", NULL, &r);
        CHECK_EQ_INT(r.code, 200);
        CHECK(r.len == len && !memcmp(r.body, h1, len));
        free(r.body);
        free(h1);
    }

    /* A job: its source as submitted, its series. */
    snprintf(path, sizeof path, "%s/clips/run_forward.bvh", "../shared/data");
    char *clip = test_slurp(path, &len);
    if (!clip) {
        srv_stop(s);
        TEST_SKIP("no ../shared/data/clips/run_forward.bvh");
    }
    CHECK_EQ_INT(http(bob, "POST", "/v1/jobs?robot=g1&name=rf", clip, len, NULL, &resp), 201);
    long long id = resp ? (long long)json_num(resp, "id") : -1;
    free(resp);
    char state[16], url[96];
    http_wait(bob, id, state);
    CHECK_EQ_STR(state, "succeeded");
    snprintf(url, sizeof url, "/v1/jobs/%lld/source", id);
    fetch(bob, "GET", url, NULL, &r);
    CHECK_EQ_INT(r.code, 200);
    CHECK_EQ_STR(header(&r, "Content-Type", buf, sizeof buf), "text/plain; charset=utf-8");
    CHECK(r.len == len && !memcmp(r.body, clip, len));
    free(r.body);
    http_expect_error(carol, "GET", url, NULL, 0, 404, "jobs", NULL); /* another token's job */
    http_expect_error(admin, "GET", url, NULL, 0, 404, "jobs", NULL);
    CHECK_EQ_INT(http(NULL, "GET", url, NULL, 0, NULL, NULL), 401);
    CHECK_EQ_INT(http(bob, "GET", "/v1/jobs/99999/source", NULL, 0, NULL, NULL), 404);
    CHECK_EQ_INT(http(bob, "DELETE", url, NULL, 0, NULL, NULL), 405);

    /* ?series=1 adds "series" and changes nothing else. */
    char *plain = NULL, *zero = NULL, *with = NULL;
    snprintf(url, sizeof url, "/v1/jobs/%lld/result", id);
    CHECK_EQ_INT(http(bob, "GET", url, NULL, 0, NULL, &plain), 200);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result?series=0", id);
    CHECK_EQ_INT(http(bob, "GET", url, NULL, 0, NULL, &zero), 200);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result?series=1", id);
    CHECK_EQ_INT(http(bob, "GET", url, NULL, 0, NULL, &with), 200);
    CHECK(plain && zero && !strcmp(plain, zero) && !strstr(plain, "\"series\""));
    size_t pl = plain ? strlen(plain) : 0;
    CHECK(with && plain && !strncmp(with, plain, pl - 1) && !strncmp(with + pl - 1, ",\"series\":{", 11));
    cJSON *res = with ? cJSON_Parse(with) : NULL;
    cJSON *series = cJSON_GetObjectItemCaseSensitive(res, "series");
    cJSON *report = cJSON_GetObjectItemCaseSensitive(res, "report");
    cJSON *quality = cJSON_GetObjectItemCaseSensitive(report, "quality");
    cJSON *qlinks = cJSON_GetObjectItemCaseSensitive(quality, "links");
    cJSON *links = cJSON_GetObjectItemCaseSensitive(series, "links");
    cJSON *feet = cJSON_GetObjectItemCaseSensitive(series, "feet");
    int frames = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "frames"));
    CHECK_EQ_INT(frames, 45);
    CHECK(cJSON_GetArraySize(links) > 0);
    CHECK_EQ_INT(cJSON_GetArraySize(links), cJSON_GetArraySize(qlinks));
    /* Each link's per-frame errors average to the report's mean (the series
     * are rounded to 1e-6), in the report's order. */
    for (int k = 0; k < cJSON_GetArraySize(links); k++) {
        cJSON *l = cJSON_GetArrayItem(links, k), *q = cJSON_GetArrayItem(qlinks, k);
        CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(l, "link")),
                     cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(q, "link")));
        const char *kinds[2] = {"position_error_m", "rotation_error_deg"};
        for (int t = 0; t < 2; t++) {
            cJSON *a = cJSON_GetObjectItemCaseSensitive(l, kinds[t]);
            cJSON *st = cJSON_GetObjectItemCaseSensitive(q, kinds[t]);
            CHECK_EQ_INT(cJSON_GetArraySize(a), frames);
            double sum = 0;
            int n = 0;
            for (cJSON *e = a ? a->child : NULL; e; e = e->next)
                if (cJSON_IsNumber(e)) sum += e->valuedouble, n++;
            if (cJSON_IsNull(st)) CHECK_EQ_INT(n, 0);
            else CHECK_NEAR(sum / (n ? n : 1), cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(st, "mean")), 1e-6);
        }
    }
    /* Both feet; their contact frames add up to the report's. */
    CHECK_EQ_INT(cJSON_GetArraySize(feet), 2);
    int contacts = 0;
    double lowest = 1e9;
    for (cJSON *f = feet ? feet->child : NULL; f; f = f->next) {
        cJSON *hm = cJSON_GetObjectItemCaseSensitive(f, "height_m"), *ct = cJSON_GetObjectItemCaseSensitive(f, "contact");
        CHECK_EQ_INT(cJSON_GetArraySize(hm), frames);
        CHECK_EQ_INT(cJSON_GetArraySize(ct), frames);
        for (cJSON *e = ct ? ct->child : NULL; e; e = e->next) contacts += e->valueint;
        for (cJSON *e = hm ? hm->child : NULL; e; e = e->next)
            if (e->valuedouble < lowest) lowest = e->valuedouble;
    }
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(feet, 0), "side")), "left");
    CHECK_EQ_INT(contacts, (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(quality, "contact_frames")));
    /* No sole below the ground by more than the report's penetration. */
    CHECK(lowest >= -cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(quality, "ground_penetration_m")) - 1e-6);
    cJSON_Delete(res);
    free(plain);
    free(zero);
    free(with);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result?series=yes", id);
    http_expect_error(bob, "GET", url, NULL, 0, 400, "query.series", NULL);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result?series=1&trajectory=0", id);
    CHECK_EQ_INT(http(bob, "GET", url, NULL, 0, NULL, &resp), 200);
    CHECK(resp && strstr(resp, "\"series\":{") && !strstr(resp, "\"trajectory\":["));
    free(resp);
    /* The source is stored packed (schema 9); cut short on disk, its fetch
     * is a 500 that names the job, and the daemon answers on. */
    {
        sqlite3 *raw = NULL;
        char enc[16], want[64], sql[128];
        int stored = 0;
        test_stored_clip(db, id, &stored, enc, sizeof enc);
        CHECK_EQ_STR(enc, "zstd");
        CHECK(stored > 0 && (size_t)stored < len);
        CHECK_EQ_INT(sqlite3_open(db, &raw), SQLITE_OK);
        sqlite3_busy_timeout(raw, 5000);
        snprintf(sql, sizeof sql, "UPDATE job_clips SET clip = substr(clip, 1, length(clip) / 2) WHERE job_id = %lld",
                 id);
        CHECK_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(raw);
        snprintf(url, sizeof url, "/v1/jobs/%lld/source", id);
        snprintf(want, sizeof want, "job %lld: stored source does not unpack", id);
        http_expect_error(bob, "GET", url, NULL, 0, 500, "jobs", want);
        snprintf(url, sizeof url, "/v1/jobs/%lld", id);
        CHECK_EQ_INT(http(bob, "GET", url, NULL, 0, NULL, NULL), 200);
    }
    free(clip);
    srv_stop(s);

    /* --static-dir: the folder's files, revalidated on every load. */
    char sdir[128];
    snprintf(sdir, sizeof sdir, "%s/static", dir);
    mkdir(sdir, 0700);
    snprintf(path, sizeof path, "%s/index.html", sdir);
    write_file(path, "<!doctype html><title>dev</title>");
    snprintf(path, sizeof path, "%s/app.css", sdir);
    write_file(path, "body{}");
    srv_config_default(&cfg);
    cfg.db_path = db;
    cfg.no_auth = 1;
    cfg.static_dir = path; /* a file, not a folder */
    s = NULL;
    CHECK_EQ_INT(srv_start(&cfg, &s, &err), RT_EINVAL);
    CHECK_EQ_STR(err.where, "--static-dir");
    cfg.static_dir = sdir;
    s = http_start(&cfg);
    CHECK(s != NULL);
    if (s) {
        fetch(NULL, "GET", "/", NULL, &r);
        CHECK_EQ_INT(r.code, 200);
        CHECK_EQ_STR(r.body, "<!doctype html><title>dev</title>");
        CHECK_EQ_STR(header(&r, "Cache-Control", buf, sizeof buf), "no-cache");
        free(r.body);
        fetch(NULL, "GET", "/ui/app.css", NULL, &r);
        CHECK_EQ_INT(r.code, 200);
        CHECK_EQ_STR(header(&r, "Content-Type", buf, sizeof buf), "text/css; charset=utf-8");
        CHECK_EQ_STR(header(&r, "Cache-Control", buf, sizeof buf), "no-cache");
        free(r.body);
        CHECK_EQ_INT(http(NULL, "GET", "/ui/missing.js", NULL, 0, NULL, NULL), 404);
        CHECK_EQ_INT(http(NULL, "GET", "/ui/..%2Fui.db", NULL, 0, NULL, NULL), 404);
        /* Under --no-auth the token is the anonymous admin. */
        CHECK_EQ_INT(http(NULL, "GET", "/v1/token", NULL, 0, NULL, &resp), 200);
        CHECK_EQ_STR(resp, "{\"name\":\"anonymous\",\"admin\":true,\"auth\":false}");
        free(resp);
        srv_stop(s);
    }
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_report("test_http_ui");
}
