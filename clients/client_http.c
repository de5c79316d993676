/* client_http.c -- `retarget submit|status|wait|fetch|cancel|list`: the
 * command-line client of retargetd, over libcurl.
 *
 *   retarget submit SOURCE --robot R [--profile P] [--source-robot S] [--max-lm N]
 *                   [--idempotency-key K]                 prints the job id
 *   retarget status ID                                    the job as JSON
 *   retarget wait ID [--timeout S]                        progress bar on stderr
 *   retarget fetch ID -o DIR [--format csv|npz]           DIR/NAME.csv (or .npz), DIR/NAME.report.json
 *   retarget cancel ID
 *   retarget list [--limit N]
 *
 * Every command takes --server URL (default $RETARGET_SERVER, else
 * http://127.0.0.1:8080) and --token T (default $RETARGET_TOKEN). Errors are
 * one line, "retarget: WHERE: message (HTTP n)", and exit status 1. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/base64.h"
#include "../base/clock.h"
#include "../base/num.h"
#include "../kinematics/joints.h"
#include "cli.h"

struct buf {
    char *p;
    size_t n, cap;
};

/* Largest reply kept in memory: a 10-million-frame result as JSON is less. */
#define CLI_MAX_REPLY (1ull << 31)

static size_t on_data(char *data, size_t size, size_t nmemb, void *user)
{
    struct buf *b = user;
    size_t n = size * nmemb; /* libcurl: size is 1 */
    /* A reply past the limit fails the transfer (CURLE_WRITE_ERROR) rather
     * than growing without bound or overflowing the doubling below. */
    if (n > CLI_MAX_REPLY - b->n) return 0;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return 0;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

enum rt_status cli_http(const struct cli_server *srv, const char *method, const char *path,
                        const char *ctype, const char *body, size_t body_len,
                        const char *extra_header, long *code, char **resp, size_t *resp_len,
                        struct rt_err *err)
{
    char url[2048], hdr[400];
    struct buf b = {0};
    struct curl_slist *h = NULL;
    enum rt_status st = RT_OK;
    *resp = NULL;
    pthread_once(&curl_once, curl_init_once);
    /* A cut URL or header would send the request elsewhere or unauthenticated. */
    if ((size_t)snprintf(url, sizeof url, "%s%s", srv->url, path) >= sizeof url)
        return rt_err_set(err, RT_ELIMIT, "--server", "URL longer than %zu bytes", sizeof url - 1);
    if (srv->token && strlen(srv->token) > sizeof hdr - sizeof "Authorization: Bearer ")
        return rt_err_set(err, RT_ELIMIT, "--token", "longer than %zu bytes",
                          sizeof hdr - sizeof "Authorization: Bearer ");
    CURL *c = curl_easy_init();
    if (!c) return rt_err_set(err, RT_ENOMEM, "http", "cannot start libcurl");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 600L);
    if (srv->token && srv->token[0]) {
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", srv->token);
        h = curl_slist_append(h, hdr);
    }
    if (extra_header) h = curl_slist_append(h, extra_header);
    if (body) {
        snprintf(hdr, sizeof hdr, "Content-Type: %s", ctype ? ctype : "application/json");
        h = curl_slist_append(h, hdr);
        h = curl_slist_append(h, "Expect:");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    if (h) curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        if (rc == CURLE_WRITE_ERROR)
            st = rt_err_set(err, RT_ELIMIT, srv->url, "reply larger than %llu bytes (or out of memory)",
                            (unsigned long long)CLI_MAX_REPLY);
        else
            st = rt_err_set(err, RT_EIO, srv->url, "%s", curl_easy_strerror(rc));
        free(b.p);
        goto done;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
    if (!b.p && !(b.p = calloc(1, 1))) {
        st = rt_err_set(err, RT_ENOMEM, "http", "out of memory");
        goto done;
    }
    *resp = b.p;
    if (resp_len) *resp_len = b.n;
done:
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return st;
}

enum rt_status cli_http_error(long code, const char *resp, struct rt_err *err)
{
    enum rt_status st = code == 404 ? RT_ENOTFOUND : code == 413 ? RT_ELIMIT : code == 429 ? RT_EBUSY
                        : code == 409 ? RT_ESTATE : code >= 500 ? RT_EIO : RT_EINVAL;
    cJSON *j = resp ? cJSON_Parse(resp) : NULL;
    cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "where"), *m = cJSON_GetObjectItemCaseSensitive(e, "message");
    rt_err_set(err, st, cJSON_IsString(w) && w->valuestring[0] ? w->valuestring : "server", "%s (HTTP %ld)",
               cJSON_IsString(m) ? m->valuestring : "request failed", code);
    cJSON_Delete(j);
    return st;
}

/* The "joints" field of a submission (docs/api.md): the file's bytes as
 * base64 (.npz, .npy) or its text (CSV); an .npy's names from PATH with
 * .txt for .npy, one a line. */
static enum rt_status joints_field(cJSON *j, const char *path, const char *fmt, const char *text, size_t len,
                                   struct rt_err *err)
{
    cJSON *o = cJSON_AddObjectToObject(j, "joints");
    cJSON_AddStringToObject(o, "format", fmt);
    if (!strcmp(fmt, "csv")) {
        cJSON_AddStringToObject(o, "text", text);
        return RT_OK;
    }
    char *b64 = rt_base64_encode(text, len, NULL);
    if (!b64) return rt_err_set(err, RT_ENOMEM, path, "out of memory");
    cJSON_AddStringToObject(o, "data_base64", b64);
    free(b64);
    if (strcmp(fmt, "npy")) return RT_OK;
    char np[4096], *names = NULL;
    size_t n = strlen(path), names_len = 0;
    snprintf(np, sizeof np, "%.*s.txt", (int)(n - 4), path);
    if (rt_read_file(np, 1u << 20, &names, &names_len, NULL) != RT_OK)
        return rt_err_set(err, RT_EINVAL, path, "an .npy needs its joint names, one a line, in %.60s", np);
    cJSON *arr = cJSON_AddArrayToObject(o, "joint_names");
    for (char *p = names, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl) *nl = 0;
        size_t k = strlen(p);
        if (k && p[k - 1] == '\r') p[--k] = 0;
        if (k) cJSON_AddItemToArray(arr, cJSON_CreateString(p));
    }
    free(names);
    return RT_OK;
}

const char *cli_joints_format(const char *path, const char *text, size_t len)
{
    size_t n = strlen(path);
    if (n > 4 && !strcasecmp(path + n - 4, ".npz")) return "npz";
    if (n > 4 && !strcasecmp(path + n - 4, ".npy")) return "npy";
    if (!cli_is_bvh(path) && text && kin_joints_is_csv(text, len)) return "csv";
    return NULL;
}

enum rt_status cli_job_body(const char *path, const char *robot, const char *profile,
                            const char *source_robot, const struct rtg_job_options *opts, char **body,
                            struct rt_err *err)
{
    char *text = NULL, name[256];
    size_t len = 0;
    enum rt_status st = rt_read_file(path, 1u << 30, &text, &len, err);
    *body = NULL;
    if (st != RT_OK) return st;
    if (strlen(text) != len && !cli_joints_format(path, text, len)) {
        free(text);
        return rt_err_set(err, RT_EPARSE, path, "the file holds a NUL byte");
    }
    cli_base_name(path, name, sizeof name);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "robot", robot);
    if (profile) cJSON_AddStringToObject(j, "profile", profile);
    cJSON_AddStringToObject(j, "name", name);
    const char *fmt = cli_joints_format(path, text, len);
    if (fmt) {
        if ((st = joints_field(j, path, fmt, text, len, err)) != RT_OK) {
            free(text);
            cJSON_Delete(j);
            return st;
        }
    } else if (cli_is_bvh(path)) {
        cJSON_AddStringToObject(j, "clip", text);
    } else {
        if (!source_robot) {
            free(text);
            cJSON_Delete(j);
            return rt_err_set(err, RT_EINVAL, path, "a trajectory CSV needs --source-robot NAME");
        }
        cJSON_AddStringToObject(j, "source_robot", source_robot);
        cJSON_AddStringToObject(j, "trajectory", text);
    }
    if (opts && opts->set) {
        char *ot = rtg_job_options_json(opts);
        cJSON *oj = ot ? cJSON_Parse(ot) : NULL;
        free(ot);
        if (!oj) {
            free(text);
            cJSON_Delete(j);
            return rt_err_set(err, RT_ENOMEM, path, "out of memory");
        }
        cJSON_AddItemToObject(j, "options", oj);
    }
    free(text);
    *body = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return *body ? RT_OK : rt_err_set(err, RT_ENOMEM, path, "out of memory");
}

/* GET path -> parsed JSON (2xx) or an error. */
static enum rt_status get_json(const struct cli_server *srv, const char *method, const char *path,
                               cJSON **out, struct rt_err *err)
{
    long code = 0;
    char *resp = NULL;
    enum rt_status st = cli_http(srv, method, path, NULL, NULL, 0, NULL, &code, &resp, NULL, err);
    *out = NULL;
    if (st != RT_OK) return st;
    if (code < 200 || code > 299) st = cli_http_error(code, resp, err);
    else if (!(*out = cJSON_Parse(resp))) st = rt_err_set(err, RT_EPARSE, path, "malformed JSON from the server");
    free(resp);
    return st;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

long long cli_json_int(const cJSON *o, const char *k, long long def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    /* Converting a double outside long long's range (or NaN) is undefined:
     * only integers up to 2^53 in magnitude are taken. */
    if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) <= 9007199254740992.0)) return def;
    return (long long)v->valuedouble;
}

enum rt_status cli_fetch_job(const struct cli_server *srv, long long id, const char *dir,
                             const char *name, int npz, struct rt_err *err)
{
    char path[4096], url[128], jname[256];
    cJSON *job = NULL, *res = NULL;
    char *csv = NULL, *rep = NULL;
    size_t csv_len = 0;
    long code = 0;
    enum rt_status st;
    snprintf(url, sizeof url, "/v1/jobs/%lld", id);
    if ((st = get_json(srv, "GET", url, &job, err)) != RT_OK) goto done;
    snprintf(jname, sizeof jname, "%s", name ? name : jstr(job, "name"));
    if (!jname[0] || strchr(jname, '/')) snprintf(jname, sizeof jname, "job%lld", id);
    snprintf(url, sizeof url, "/v1/jobs/%lld/result.%s", id, npz ? "npz" : "csv");
    if ((st = cli_http(srv, "GET", url, NULL, NULL, 0, NULL, &code, &csv, &csv_len, err)) != RT_OK) goto done;
    if (code != 200) {
        st = cli_http_error(code, csv, err);
        goto done;
    }
    snprintf(url, sizeof url, "/v1/jobs/%lld/result?trajectory=0", id);
    if ((st = get_json(srv, "GET", url, &res, err)) != RT_OK) goto done;
    /* The report as `retarget solve` prints it (cJSON_Print). */
    if (!(rep = cJSON_Print(cJSON_GetObjectItemCaseSensitive(res, "report")))) {
        st = rt_err_set(err, RT_EPARSE, url, "no report in the result");
        goto done;
    }
    if ((st = cli_mkdirs(dir, err)) != RT_OK) goto done;
    snprintf(path, sizeof path, "%s/%s.%s", dir, jname, npz ? "npz" : "csv");
    if ((st = cli_write_file(path, csv, csv_len, 0, err)) != RT_OK) goto done;
    snprintf(path, sizeof path, "%s/%s.report.json", dir, jname);
    st = cli_write_file(path, rep, strlen(rep), 1, err);
done:
    cJSON_Delete(job);
    cJSON_Delete(res);
    free(csv);
    cJSON_free(rep);
    return st;
}

static void draw_bar(long long id, const char *state, int lm, int max_lm)
{
    int width = 30, fill = max_lm > 0 ? (lm * width) / max_lm : 0;
    if (fill > width) fill = width;
    if (!strcmp(state, "succeeded")) fill = width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\rjob %lld [%s] %-9s LM %d   ", id, bar, state, lm);
    fflush(stderr);
}

enum rt_status cli_wait_job(const struct cli_server *srv, long long id, double timeout_s,
                            int progress, char state[16], struct rt_err *err)
{
    char url[64];
    double t0 = rt_now();
    snprintf(url, sizeof url, "/v1/jobs/%lld", id);
    for (int round = 0;; round++) {
        cJSON *job = NULL;
        enum rt_status st = get_json(srv, "GET", url, &job, err);
        if (st != RT_OK) return st;
        snprintf(state, 16, "%s", jstr(job, "state"));
        int lm = (int)cli_json_int(cJSON_GetObjectItemCaseSensitive(job, "progress"), "lm_iteration", 0);
        int max_lm = (int)cli_json_int(cJSON_GetObjectItemCaseSensitive(job, "options"), "max_lm_iters", 50);
        if (progress) draw_bar(id, state, lm, max_lm);
        int done = strcmp(state, "queued") && strcmp(state, "running");
        if (done && strcmp(state, "succeeded")) {
            cJSON *e = cJSON_GetObjectItemCaseSensitive(job, "error");
            rt_err_set(err, RT_ESTATE, cJSON_IsObject(e) ? jstr(e, "where") : url, "job %lld %s%s%s", id, state,
                       cJSON_IsObject(e) ? ": " : "", cJSON_IsObject(e) ? jstr(e, "message") : "");
        }
        cJSON_Delete(job);
        if (done) {
            if (progress) fputc('\n', stderr);
            return strcmp(state, "succeeded") ? RT_ESTATE : RT_OK;
        }
        double el = rt_now() - t0;
        if (timeout_s > 0 && el > timeout_s) {
            if (progress) fputc('\n', stderr);
            return rt_err_set(err, RT_ESTATE, url, "still %s after %.0f s", state, timeout_s);
        }
        /* Poll fast at first, then every 250 ms. */
        usleep(round < 20 ? 50000 : 250000);
    }
}

/* --- the subcommands ---------------------------------------------------------- */

struct client_args {
    struct cli_server srv;
    const char *robot, *profile, *source_robot, *out, *idem;
    int limit, npz; /* npz: fetch --format npz */
    struct rtg_job_options opts;
    double timeout;
    const char *pos[4];
    int n_pos;
};

static int parse_client_args(int argc, char **argv, struct client_args *a, int want_pos)
{
    memset(a, 0, sizeof *a);
    a->srv.url = getenv("RETARGET_SERVER");
    if (!a->srv.url || !a->srv.url[0]) a->srv.url = "http://127.0.0.1:8080";
    a->srv.token = getenv("RETARGET_TOKEN");
    a->limit = 50;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (o[0] == '-' && o[1]) {
            if (!v) {
                fprintf(stderr, "retarget: %s: missing value\n", o);
                return -1;
            }
            i++;
            if (!strcmp(o, "--server")) a->srv.url = v;
            else if (!strcmp(o, "--token")) a->srv.token = v;
            else if (!strcmp(o, "--robot")) a->robot = v;
            else if (!strcmp(o, "--profile")) a->profile = v;
            else if (!strcmp(o, "--source-robot")) a->source_robot = v;
            else if (!strcmp(o, "-o") || !strcmp(o, "--out")) a->out = v;
            else if (!strcmp(o, "--idempotency-key")) a->idem = v;
            else if (!strcmp(o, "--format")) {
                if (strcmp(v, "csv") && strcmp(v, "npz")) {
                    fprintf(stderr, "retarget: --format: expected csv or npz, got '%.20s'\n", v);
                    return -1;
                }
                a->npz = !strcmp(v, "npz");
            }
            else if (rtg_option_by_flag(o, RTG_SCOPE_SUBMIT) && rtg_option_by_flag(o, RTG_SCOPE_SUBMIT)->key) {
                /* A job option: the table reads it. */
                struct rt_err e;
                const struct rtg_option *row = rtg_option_by_flag(o, RTG_SCOPE_SUBMIT);
                if (rtg_job_options_set_text(&a->opts, (enum rtg_job_opt)(row - rtg_options()), v, o, &e) != RT_OK) {
                    cli_fail(&e);
                    return -1;
                }
            } else if (!strcmp(o, "--limit") || !strcmp(o, "--timeout")) {
                long long x;
                if (v[0] < '0' || v[0] > '9' || !rt_parse_int(v, 0, 1000000, &x)) {
                    fprintf(stderr, "retarget: %s: expected a non-negative integer, got '%s'\n", o, RT_QUOTE(v));
                    return -1;
                }
                if (!strcmp(o, "--limit")) a->limit = (int)x;
                else a->timeout = (double)x;
            } else {
                fprintf(stderr, "retarget: %s: unknown option\n", o);
                return -1;
            }
        } else if (a->n_pos < 4) {
            a->pos[a->n_pos++] = o;
        }
    }
    if (a->n_pos != want_pos) {
        fprintf(stderr, "retarget: expected %d argument%s (see retarget --help)\n", want_pos, want_pos == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

static int parse_id(const char *s, long long *id)
{
    char *end;
    errno = 0;
    *id = strtoll(s, &end, 10);
    if (s[0] < '1' || s[0] > '9' || *end || errno) {
        fprintf(stderr, "retarget: '%s' is not a job id\n", RT_QUOTE(s));
        return -1;
    }
    return 0;
}

int cli_submit(int argc, char **argv)
{
    struct client_args a;
    struct rt_err err;
    char *body = NULL, *resp = NULL, hdr[200];
    long code = 0;
    if (parse_client_args(argc, argv, &a, 1)) return 2;
    if (!a.robot) {
        fprintf(stderr, "retarget: --robot is required\n");
        return 2;
    }
    rt_err_clear(&err);
    if (cli_job_body(a.pos[0], a.robot, a.profile, a.source_robot, &a.opts, &body, &err) != RT_OK)
        return cli_fail(&err);
    if (a.idem) snprintf(hdr, sizeof hdr, "Idempotency-Key: %s", RT_QUOTE(a.idem));
    enum rt_status st = cli_http(&a.srv, "POST", "/v1/jobs", "application/json", body, strlen(body),
                                 a.idem ? hdr : NULL, &code, &resp, NULL, &err);
    free(body);
    if (st != RT_OK) return cli_fail(&err);
    if (code != 200 && code != 201) {
        cli_http_error(code, resp, &err);
        free(resp);
        return cli_fail(&err);
    }
    cJSON *j = cJSON_Parse(resp);
    free(resp);
    long long id = cli_json_int(j, "id", 0);
    cJSON_Delete(j);
    if (id <= 0) {
        rt_err_set(&err, RT_EPARSE, "server", "no job id in the reply");
        return cli_fail(&err);
    }
    printf("%lld\n", id);
    return 0;
}

static int print_json(const struct client_args *a, const char *method, const char *path)
{
    struct rt_err err;
    cJSON *j = NULL;
    rt_err_clear(&err);
    if (get_json(&a->srv, method, path, &j, &err) != RT_OK) return cli_fail(&err);
    char *t = cJSON_Print(j);
    cJSON_Delete(j);
    if (t) puts(t);
    cJSON_free(t);
    return 0;
}

/* `retarget status|cancel ID`: `method` on /v1/jobs/ID, the job printed. */
static int job_request(int argc, char **argv, const char *method)
{
    struct client_args a;
    long long id;
    char path[64];
    if (parse_client_args(argc, argv, &a, 1) || parse_id(a.pos[0], &id)) return 2;
    snprintf(path, sizeof path, "/v1/jobs/%lld", id);
    return print_json(&a, method, path);
}

int cli_status(int argc, char **argv) { return job_request(argc, argv, "GET"); }

int cli_cancel(int argc, char **argv) { return job_request(argc, argv, "DELETE"); }

int cli_wait(int argc, char **argv)
{
    struct client_args a;
    struct rt_err err;
    long long id;
    char state[16];
    if (parse_client_args(argc, argv, &a, 1) || parse_id(a.pos[0], &id)) return 2;
    rt_err_clear(&err);
    if (cli_wait_job(&a.srv, id, a.timeout, isatty(2), state, &err) != RT_OK) return cli_fail(&err);
    printf("%s\n", state);
    return 0;
}

int cli_fetch(int argc, char **argv)
{
    struct client_args a;
    struct rt_err err;
    long long id;
    if (parse_client_args(argc, argv, &a, 1) || parse_id(a.pos[0], &id)) return 2;
    rt_err_clear(&err);
    if (cli_fetch_job(&a.srv, id, a.out ? a.out : ".", NULL, a.npz, &err) != RT_OK) return cli_fail(&err);
    return 0;
}

int cli_list(int argc, char **argv)
{
    struct client_args a;
    struct rt_err err;
    char path[64];
    cJSON *j = NULL;
    if (parse_client_args(argc, argv, &a, 0)) return 2;
    if (a.limit < 1) a.limit = 1;
    snprintf(path, sizeof path, "/v1/jobs?limit=%d", a.limit);
    rt_err_clear(&err);
    if (get_json(&a.srv, "GET", path, &j, &err) != RT_OK) return cli_fail(&err);
    printf("%-8s %-10s %7s %-8s %s\n", "ID", "STATE", "FRAMES", "ROBOT", "NAME");
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "jobs"))
        printf("%-8lld %-10s %7lld %-8s %s\n", cli_json_int(it, "id", 0), jstr(it, "state"),
               cli_json_int(it, "frames", 0), jstr(it, "robot"), jstr(it, "name"));
    cJSON_Delete(j);
    return 0;
}
