/* test_http_auth.c -- authentication and authorization against the real
 * daemon in-process on 127.0.0.1:0: 401 without or with a bad token (before
 * any body is read), public health and metrics, 403 for a non-admin robot
 * or profile upload, uploads validated by parsing (400 naming the line or
 * field), bundled names protected (409), 404 for another token's job (get,
 * result, cancel), each token's list holding only its jobs, --no-auth
 * refused off loopback, tokens stored hashed. */
#include <curl/curl.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_util.h"

static size_t keep_headers(char *p, size_t size, size_t n, void *user)
{
    char *buf = user;
    size_t used = strlen(buf), len = size * n;
    if (used + len < 2048) {
        memcpy(buf + used, p, len);
        buf[used + len] = 0;
    }
    return len;
}

static size_t drop_body(char *p, size_t size, size_t n, void *user)
{
    (void)p;
    (void)user;
    return size * n;
}

/* METHOD PATH without a token; the response headers into hdrs[2048]. */
static long http_headers(const char *method, const char *path, char *hdrs)
{
    char url[256];
    long code = 0;
    CURL *c = curl_easy_init();
    if (!c) return 0;
    hdrs[0] = 0;
    snprintf(url, sizeof url, "%s%s", http_url, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, keep_headers);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, hdrs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, drop_body);
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    return code;
}

int main(void)
{
    char dir[64], db[128], path[512], buf[200], url[64];
    char admin[SRV_TOKEN_HEX + 1], user[SRV_TOKEN_HEX + 1];
    struct rt_err err;
    struct srv_config cfg;
    char *resp = NULL;
    long code;
    snprintf(dir, sizeof dir, "/tmp/test_http_auth.XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    snprintf(db, sizeof db, "%s/auth.db", dir);
    CHECK_EQ_INT(srv_token_add(db, "alice", 1, admin, &err), RT_OK);
    CHECK_EQ_INT(srv_token_add(db, "bob", 0, user, &err), RT_OK);
    CHECK_EQ_INT(srv_token_add(db, "bob", 0, buf, &err), RT_ECONFLICT);
    CHECK_EQ_INT((int)strlen(admin), SRV_TOKEN_HEX);
    CHECK(strcmp(admin, user) != 0);
    {
        /* Only hashes in the database. The same connection first counts the
         * tokens rows (alice and bob), so that a query that reads nothing
         * cannot pass the "not found" check below. */
        sqlite3 *d = NULL;
        sqlite3_stmt *q = NULL;
        int rows = -1, found = -1;
        CHECK_EQ_INT(sqlite3_open_v2(db, &d, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        CHECK_EQ_INT(sqlite3_prepare_v2(d, "SELECT count(*) FROM tokens", -1, &q, NULL), SQLITE_OK);
        CHECK_EQ_INT(sqlite3_step(q), SQLITE_ROW);
        rows = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        q = NULL;
        CHECK_EQ_INT(rows, 2);
        CHECK_EQ_INT(sqlite3_prepare_v2(d, "SELECT count(*) FROM tokens WHERE hex(hash) = upper(?) OR hash = ?", -1,
                                        &q, NULL),
                     SQLITE_OK);
        sqlite3_bind_text(q, 1, admin, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, admin, -1, SQLITE_STATIC);
        CHECK_EQ_INT(sqlite3_step(q), SQLITE_ROW);
        found = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        sqlite3_close(d);
        CHECK_EQ_INT(found, 0);
    }
    /* --no-auth only on loopback. */
    struct srv *s = NULL;
    srv_config_default(&cfg);
    cfg.db_path = db;
    cfg.no_auth = 1;
    cfg.listen = "0.0.0.0:0";
    CHECK_EQ_INT(srv_start(&cfg, &s, &err), RT_ESTATE);
    CHECK(s == NULL);

    srv_config_default(&cfg);
    cfg.db_path = db;
    cfg.batch_wait_ms = 0;
    cfg.solver_threads = 2;
    s = http_start(&cfg);
    CHECK(s != NULL);
    if (!s) return test_report("test_http_auth");

    /* Public: health. Everything else needs a token, the metrics too
     * (unless --metrics-public, below). */
    CHECK_EQ_INT(http(NULL, "GET", "/v1/health", NULL, 0, NULL, NULL), 200);
    CHECK_EQ_INT(http(NULL, "GET", "/v1/metrics", NULL, 0, NULL, NULL), 401);
    code = http(NULL, "GET", "/v1/jobs", NULL, 0, NULL, &resp);
    CHECK_EQ_INT(code, 401);
    CHECK_EQ_STR(err_field(resp, "code", buf, sizeof buf), "unauthorized");
    free(resp);
    CHECK_EQ_INT(http("not-a-token", "GET", "/v1/jobs", NULL, 0, NULL, NULL), 401);
    CHECK_EQ_INT(http("not-a-token", "POST", "/v1/jobs", "{}", 2, NULL, NULL), 401);
    CHECK_EQ_INT(http(user, "GET", "/v1/jobs", NULL, 0, NULL, NULL), 200);
    CHECK_EQ_INT(http(user, "GET", "/v1/robots", NULL, 0, NULL, NULL), 200);
    CHECK_EQ_INT(http(user, "GET", "/v1/nothing", NULL, 0, NULL, NULL), 404);
    CHECK_EQ_INT(http(user, "PATCH", "/v1/jobs", NULL, 0, NULL, NULL), 405);
    /* 401 says how to authenticate, 405 which methods the resource takes. */
    {
        char hdrs[2048];
        CHECK_EQ_INT(http_headers("GET", "/v1/jobs", hdrs), 401);
        CHECK(strstr(hdrs, "WWW-Authenticate: Bearer") != NULL);
        CHECK_EQ_INT(http_headers("PATCH", "/v1/jobs", hdrs), 405);
        CHECK(strstr(hdrs, "Allow: GET, HEAD, POST\r\n") != NULL);
        CHECK_EQ_INT(http_headers("POST", "/v1/robots/g1", hdrs), 405);
        CHECK(strstr(hdrs, "Allow: GET, HEAD, PUT\r\n") != NULL);
        CHECK_EQ_INT(http_headers("PUT", "/v1/jobs/1", hdrs), 405);
        CHECK(strstr(hdrs, "Allow: GET, HEAD, DELETE\r\n") != NULL);
        CHECK_EQ_INT(http_headers("POST", "/v1/health", hdrs), 405);
        CHECK(strstr(hdrs, "Allow: GET, HEAD\r\n") != NULL);
    }

    /* Robots: admin only, parsed before stored, bundled names protected. */
    snprintf(path, sizeof path, "%s/robots/g1_29dof_rev_1_0.urdf", test_data_dir());
    size_t ulen = 0;
    char *urdf = test_slurp(path, &ulen);
    if (!urdf) urdf = test_slurp("robots/g1.urdf", &ulen);
    CHECK(urdf != NULL);
    if (urdf) {
        code = http(user, "PUT", "/v1/robots/myg1", urdf, ulen, NULL, &resp);
        CHECK_EQ_INT(code, 403);
        CHECK_EQ_STR(err_field(resp, "code", buf, sizeof buf), "forbidden");
        free(resp);
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/myg1", urdf, ulen, NULL, NULL), 201);
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/g1", urdf, ulen, NULL, NULL), 409);
        code = http(user, "GET", "/v1/robots", NULL, 0, NULL, &resp);
        CHECK(resp && strstr(resp, "\"name\":\"myg1\""));
        free(resp);
        CHECK_EQ_INT(http(user, "GET", "/v1/robots/myg1", NULL, 0, NULL, NULL), 200);
        /* A name that holds ".urdf" but does not end in it is a valid upload
         * name, and a job may name it too. */
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/g1.urdf.v2", urdf, ulen, NULL, NULL), 201);
        /* The message gives the reason: the ending, not the characters. */
        http_expect_error(admin, "PUT", "/v1/robots/g1.v2.urdf", urdf, ulen, 400, NULL,
                          "must not end in .urdf or .json");
        http_expect_error(admin, "PUT", "/v1/robots/a$b", urdf, ulen, 400, NULL, "A-Z a-z 0-9 _ . -");
        free(urdf);
    }
    const char *bad_urdf = "<robot name=\"x\">\n<link name=\"a\"/>\n<joint name=\"j\" type=\"revolute\">\n"
                           "<parent link=\"a\"/><child link=\"b\"/>\n</joint>\n</robot>\n";
    code = http(admin, "PUT", "/v1/robots/broken", bad_urdf, strlen(bad_urdf), NULL, &resp);
    CHECK_EQ_INT(code, 400);
    CHECK(strncmp(err_field(resp, "where", buf, sizeof buf), "broken.urdf:", 12) == 0);
    free(resp);
    CHECK_EQ_INT(http(user, "GET", "/v1/robots/broken", NULL, 0, NULL, NULL), 404);
    /* MJCF uploads: the reader follows the root element; includes are refused. */
    snprintf(path, sizeof path, "%s/robots/T1_serial.xml", test_data_dir());
    char *mjcf = test_slurp(path, &ulen);
    if (mjcf) {
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/myt1", mjcf, ulen, NULL, &resp), 201);
        CHECK(resp && strstr(resp, "\"dof\":23") && strstr(resp, "\"name\":\"T1\""));
        free(resp);
        CHECK_EQ_INT(http(user, "GET", "/v1/robots/myt1", NULL, 0, NULL, &resp), 200);
        CHECK(resp && strstr(resp, "\"name\":\"Left_Shoulder_Pitch\""));
        free(resp);
        free(mjcf);
    }
    const char *inc_mjcf = "<mujoco>\n<include file=\"/etc/passwd\"/>\n</mujoco>\n";
    http_expect_error(admin, "PUT", "/v1/robots/inc", inc_mjcf, strlen(inc_mjcf), 400, "inc.urdf:2",
                      "includes are refused");

    /* Profiles: admin only, validated (the field is named). */
    size_t plen = 0;
    const char *ptext = NULL;
    {
        extern const char *rtg_profile_bundled_text(const char *name, size_t *len);
        ptext = rtg_profile_bundled_text("cmu_g1", &plen);
    }
    CHECK(ptext != NULL);
    if (ptext) {
        CHECK_EQ_INT(http(user, "PUT", "/v1/profiles/mine", ptext, plen, NULL, NULL), 403);
        CHECK_EQ_INT(http(admin, "PUT", "/v1/profiles/mine", ptext, plen, NULL, NULL), 201);
        CHECK_EQ_INT(http(user, "GET", "/v1/profiles/mine", NULL, 0, NULL, NULL), 200);
    }
    /* A root that is no object is named first (the links are parsed after
     * the root, so the negative weight below it is not reached). */
    const char *bad_prof = "{\"root\":\"Hips\",\"links\":[{\"joint\":\"Hips\",\"link\":\"pelvis\",\"position_weight\":-1}]}";
    http_expect_error(admin, "PUT", "/v1/profiles/bad", bad_prof, strlen(bad_prof), 400, "bad.json:root", NULL);
    /* With a valid root, the negative position_weight is the field named. */
    const char *bad_weight = "{\"root\":{\"joint\":\"Hips\",\"link\":\"pelvis\"},\"links\":[{\"joint\":\"LeftUpLeg\","
                             "\"link\":\"left_hip_roll_link\",\"position_weight\":-1}]}";
    http_expect_error(admin, "PUT", "/v1/profiles/bad", bad_weight, strlen(bad_weight), 400,
                      "bad.json:links[0].position_weight", NULL);
    CHECK_EQ_INT(http(user, "GET", "/v1/profiles/bad", NULL, 0, NULL, NULL), 404);

    /* Jobs are visible only to the token that submitted them. */
    snprintf(path, sizeof path, "%s/clips/run_forward.bvh", test_data_dir());
    char *clip = test_slurp(path, NULL);
    if (!clip) TEST_SKIP("no ../shared/data/clips (set RT_SHARED_DATA)");
    char *body = job_body("g1", "rf", clip, 2);
    code = http(user, "POST", "/v1/jobs", body, strlen(body), NULL, &resp);
    CHECK_EQ_INT(code, 201);
    long long id = resp ? (long long)json_num(resp, "id") : -1;
    free(resp);
    free(body);
    char state[16];
    http_wait(user, id, state);
    CHECK_EQ_STR(state, "succeeded");
    snprintf(url, sizeof url, "/v1/jobs/%lld", id);
    CHECK_EQ_INT(http(user, "GET", url, NULL, 0, NULL, NULL), 200);
    CHECK_EQ_INT(http(admin, "GET", url, NULL, 0, NULL, NULL), 404);
    CHECK_EQ_INT(http(admin, "DELETE", url, NULL, 0, NULL, NULL), 404);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result.csv", id);
    CHECK_EQ_INT(http(admin, "GET", url, NULL, 0, NULL, NULL), 404);
    CHECK_EQ_INT(http(user, "GET", url, NULL, 0, NULL, NULL), 200);
    code = http(admin, "GET", "/v1/jobs", NULL, 0, NULL, &resp);
    CHECK(resp && strstr(resp, "\"jobs\":[]"));
    free(resp);
    code = http(user, "GET", "/v1/jobs?limit=1", NULL, 0, NULL, &resp);
    CHECK(resp && strstr(resp, "\"name\":\"rf\""));
    free(resp);
    /* A job on the uploaded robot and profile. */
    body = job_body("myg1", "rf2", clip, 2);
    code = http(user, "POST", "/v1/jobs", body, strlen(body), NULL, &resp);
    CHECK_EQ_INT(code, 201);
    free(body);
    free(resp);
    body = job_body("g1.urdf.v2", "rf3", clip, 2);
    code = http(user, "POST", "/v1/jobs", body, strlen(body), NULL, &resp);
    CHECK_EQ_INT(code, 201);
    free(body);
    free(resp);
    /* A humanoid no bundled profile fits is mapped by its roles. */
    snprintf(path, sizeof path, "%s/robots/g1_23dof_rev_1_0.urdf", test_data_dir());
    char *u23 = test_slurp(path, &ulen);
    CHECK(u23 != NULL);
    if (u23) {
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/g1_23dof", u23, ulen, NULL, NULL), 201);
        body = job_body("g1_23dof", "rf23", clip, 2);
        code = http(user, "POST", "/v1/jobs", body, strlen(body), NULL, &resp);
        CHECK_EQ_INT(code, 201);
        free(resp);
        free(body);
        free(u23);
    }
    /* A robot that cannot be mapped: the message names the robot as the
     * request did (not its URDF name), its missing roles, and gives no
     * command-line advice. */
    snprintf(path, sizeof path, "%s/robots/panda.urdf", test_data_dir());
    char *arm = test_slurp(path, &ulen);
    CHECK(arm != NULL);
    if (arm) {
        CHECK_EQ_INT(http(admin, "PUT", "/v1/robots/myarm", arm, ulen, NULL, NULL), 201);
        body = job_body("myarm", "rfarm", clip, 2);
        code = http(user, "POST", "/v1/jobs", body, strlen(body), NULL, &resp);
        CHECK_EQ_INT(code, 400);
        err_field(resp, "message", buf, sizeof buf);
        CHECK(strstr(buf, "'myarm'") != NULL);
        CHECK(strstr(buf, "no left leg") != NULL);
        CHECK(strstr(buf, "--profile") == NULL);
        {
            char where[96];
            err_field(resp, "where", where, sizeof where);
            CHECK_EQ_STR(where, "body.robot");
        }
        if (!strstr(buf, "'myarm'") || !strstr(buf, "no left leg") || strstr(buf, "--profile"))
            fprintf(stderr, "  message: %s\n", buf);
        free(resp);
        free(body);
        free(arm);
    }
    code = http(user, "GET", "/v1/metrics", NULL, 0, NULL, &resp);
    CHECK(resp && strstr(resp, "retargetd_http_requests_total{code=\"401\"} 5"));
    CHECK(resp && strstr(resp, "retargetd_http_requests_total{code=\"403\"} 2"));
    free(resp);
    /* token list: names, admin flag, creation time, never the hash;
     * token revoke: the token is refused from the next request on. */
    {
        FILE *f = tmpfile();
        char out[1024] = "";
        CHECK(f != NULL);
        if (f) {
            CHECK_EQ_INT(srv_token_list(db, f, &err), RT_OK);
            rewind(f);
            size_t got = fread(out, 1, sizeof out - 1, f);
            out[got] = 0;
            fclose(f);
        }
        CHECK(!strncmp(out, "name\tadmin\tcreated\n", 19));
        CHECK(strstr(out, "\nalice\tadmin\t20") != NULL);
        CHECK(strstr(out, "\nbob\tuser\t20") != NULL);
        CHECK(strstr(out, admin) == NULL && strstr(out, user) == NULL);
        CHECK_EQ_INT(http(user, "GET", "/v1/jobs", NULL, 0, NULL, NULL), 200);
        CHECK_EQ_INT(srv_token_revoke(db, "bob", &err), RT_OK);
        CHECK_EQ_INT(http(user, "GET", "/v1/jobs", NULL, 0, NULL, NULL), 401);
        CHECK_EQ_INT(http(admin, "GET", "/v1/jobs", NULL, 0, NULL, NULL), 200);
        CHECK_EQ_INT(srv_token_revoke(db, "bob", &err), RT_ENOTFOUND);
        CHECK_EQ_STR(err.where, "token.name");
    }
    /* A port in use: srv_start fails, and the log names the address and
     * port asked for (not "port 0"). */
    {
        char listen[64], logpath[128], want[96], db2[128];
        struct srv_config c2;
        struct srv *s2 = NULL;
        srv_config_default(&c2);
        snprintf(listen, sizeof listen, "127.0.0.1:%u", srv_port(s));
        snprintf(logpath, sizeof logpath, "%s/bind.log", dir);
        c2.listen = listen;
        /* Another database: one daemon per database is a check of its own. */
        snprintf(db2, sizeof db2, "%s/other.db", dir);
        c2.db_path = db2;
        c2.backend = "cpu";
        c2.quiet = 1;
        fflush(stderr);
        int saved = dup(2), fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        CHECK(saved >= 0 && fd >= 0);
        if (fd >= 0) dup2(fd, 2);
        CHECK_EQ_INT(srv_start(&c2, &s2, &err), RT_EIO);
        fflush(stderr);
        if (saved >= 0) dup2(saved, 2);
        if (fd >= 0) close(fd);
        if (saved >= 0) close(saved);
        CHECK(s2 == NULL);
        char *log = test_slurp(logpath, NULL);
        snprintf(want, sizeof want, "%s: Failed to bind to port %u", listen, srv_port(s));
        CHECK(log && strstr(log, want));
        CHECK(log && !strstr(log, "port 0"));
        if (log && !strstr(log, want)) fprintf(stderr, "  log: %s\n", log);
        free(log);
    }
    srv_stop(s);
    /* --metrics-public: the metrics without a token, nothing else. */
    {
        char db2[96];
        struct srv_config c2;
        snprintf(db2, sizeof db2, "%s/public.db", dir);
        srv_config_default(&c2);
        c2.db_path = db2;
        c2.metrics_public = 1;
        c2.solver_threads = 2;
        s = http_start(&c2);
        CHECK(s != NULL);
        if (s) {
            CHECK_EQ_INT(http(NULL, "GET", "/v1/metrics", NULL, 0, NULL, NULL), 200);
            CHECK_EQ_INT(http(NULL, "GET", "/v1/jobs", NULL, 0, NULL, NULL), 401);
            srv_stop(s);
        }
    }
    free(clip);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    return test_report("test_http_auth");
}
