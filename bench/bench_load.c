/* bench_load.c -- the load client of `make bench-e2e` (bench/e2e.sh): K
 * concurrent HTTP clients against a running retargetd.
 *
 * Each client (a thread with its own libcurl handle, so its connection is
 * kept alive) keeps up to --inflight jobs (default 8) submitted, as a
 * corpus run does: it takes clips from a shared queue and submits them
 * (POST /v1/jobs: a trajectory CSV as {"robot","source_robot","name",
 * "trajectory"}, a BVH clip as the raw body with ?robot=&name=), polls its
 * jobs (GET /v1/jobs/ID) in turn every --poll-ms, fetches each one that
 * succeeded (GET /v1/jobs/ID/result.csv into OUTDIR/NAME.csv) and submits
 * the next clip in its place. Every request's latency is recorded: submit, each
 * poll, fetch, and each clip from submit to the result written.
 *
 * Prints "key value" lines on stdout (backend, clips, failed, frames,
 * wall_s, frames_per_s, then n/p50/p99 of submit, poll and fetch in ms and
 * of the clip in s, and when the submissions were accepted and the
 * results fetched, in s from the start); per-clip failures go to stderr. Exit status 0 when
 * every clip succeeded, 1 otherwise, 2 for a bad command line.
 *
 * Usage: bench_load URL OUTDIR K FILE... [--robot R] [--source-robot R]
 *        [--poll-ms N] [--inflight M] [--timeout-s N] [--wait-s N] [--metrics FILE]
 * --wait-s: how long to wait for GET /v1/health to answer before starting
 * (default 30); --metrics: GET /v1/metrics after the run, saved to FILE;
 * --timeout-s: the longest one job may take (default 3600). */
#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/clock.h"

struct buf {
    char *p;
    size_t len, cap;
};

/* Appends n bytes, keeping a NUL after them; returns 0, or -1 out of memory. */
static int buf_add(struct buf *b, const void *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

static int buf_str(struct buf *b, const char *s) { return buf_add(b, s, strlen(s)); }

/* s as a JSON string literal, quotes included. */
static int buf_json_str(struct buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    if (buf_add(b, "\"", 1)) return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        char esc[7] = {'\\', 0};
        size_t el = 2;
        if (c == '"' || c == '\\') esc[1] = (char)c;
        else if (c == '\n') esc[1] = 'n';
        else if (c == '\r') esc[1] = 'r';
        else if (c == '\t') esc[1] = 't';
        else {
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            el = 6;
        }
        if (buf_add(b, s + run, i - run) || buf_add(b, esc, el)) return -1;
        run = i + 1;
    }
    return buf_add(b, s + run, n - run) || buf_add(b, "\"", 1) ? -1 : 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *user)
{
    return buf_add(user, p, size * n) ? 0 : size * n;
}

/* Latencies of one kind, seconds. */
struct lat {
    double *v;
    size_t n, cap;
};

static int lat_add(struct lat *l, double s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        double *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of the sorted v[0..n), n >= 1. */
static double pct(const double *v, size_t n, double p)
{
    size_t r = (size_t)ceil(p * (double)n);
    return v[r ? r - 1 : 0];
}

static void lat_print(const char *what, struct lat *l, double scale, const char *unit)
{
    printf("%s_n %zu\n", what, l->n);
    if (!l->n) {
        printf("%s_p50_%s n/a\n%s_p99_%s n/a\n", what, unit, what, unit);
        return;
    }
    qsort(l->v, l->n, sizeof *l->v, cmp_double);
    printf("%s_p50_%s %.3f\n%s_p99_%s %.3f\n", what, unit, scale * pct(l->v, l->n, 0.50), what, unit,
           scale * pct(l->v, l->n, 0.99));
}

struct run {
    const char *url, *out_dir, *robot, *source_robot;
    const char **files;
    int n_files, poll_ms, timeout_s, inflight;
    pthread_mutex_t mu;
    int next;                              /* the queue: files[next..n_files) are left */
    int failed;                            /* under mu */
    long long frames;                      /* under mu: result rows fetched */
    struct lat submit, poll, fetch, clip;  /* under mu */
    double t0;                             /* the run's start (rt_now) */
    struct lat sub_at, res_at;             /* under mu: when each submission was accepted, each result fetched */
};

struct client {
    struct run *r;
    CURL *h;
    struct buf resp;
    long code;
};

/* One request; the body (NULL for GET) is sent as is. On return c->resp
 * holds the reply body and c->code its status (0 for a transport error,
 * with the reason in c->resp). Returns the latency in seconds. */
static double request(struct client *c, const char *url, const char *body, size_t body_len)
{
    struct curl_slist *hdr = NULL;
    char ebuf[CURL_ERROR_SIZE] = "";
    c->resp.len = 0;
    if (c->resp.p) c->resp.p[0] = 0;
    curl_easy_reset(c->h);
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->resp);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT, 600L);
    curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, ebuf);
    if (body) {
        /* No "Expect: 100-continue" round trip before a large body. */
        hdr = curl_slist_append(hdr, "Expect:");
        curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(c->h, CURLOPT_POST, 1L);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    double t0 = rt_now();
    CURLcode rc = curl_easy_perform(c->h);
    double dt = rt_now() - t0;
    c->code = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->code);
    else {
        c->resp.len = 0;
        buf_str(&c->resp, ebuf[0] ? ebuf : curl_easy_strerror(rc));
    }
    curl_slist_free_all(hdr);
    return dt;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

static int read_file(const char *path, struct buf *b)
{
    char chunk[65536];
    size_t got;
    FILE *f = fopen(path, "rb");
    b->len = 0;
    if (!f) return -1;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (buf_add(b, chunk, got)) break;
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (!b->p && buf_add(b, "", 0)) return -1;
    return bad ? -1 : 0;
}

/* NAME of DIR/NAME.EXT into out. */
static void base_name(const char *path, char *out, size_t cap)
{
    const char *s = strrchr(path, '/');
    s = s ? s + 1 : path;
    snprintf(out, cap, "%s", s);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* The error of a failed reply or job, one line. */
static void describe(const char *json, char *out, size_t cap)
{
    cJSON *j = cJSON_Parse(json), *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code"),
                *where = cJSON_GetObjectItemCaseSensitive(e, "where"),
                *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
    if (cJSON_IsString(code) && cJSON_IsString(msg))
        snprintf(out, cap, "%s: %s: %s", code->valuestring,
                 cJSON_IsString(where) ? where->valuestring : "-", msg->valuestring);
    else snprintf(out, cap, "%.200s", json);
    cJSON_Delete(j);
}

/* Submits one clip; returns its job id, or -1 (said on stderr). */
static long long submit_clip(struct client *c, const char *path, const char *name, struct buf *text,
                             struct buf *body, struct lat *submit)
{
    struct run *r = c->r;
    char url[2048], why[512];
    long long id = -1;
    int bvh = ends_with(path, ".bvh") || ends_with(path, ".BVH");
    if (read_file(path, text)) {
        fprintf(stderr, "bench_load: %s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    body->len = 0;
    if (bvh) {
        char *ename = curl_easy_escape(c->h, name, 0), *erobot = curl_easy_escape(c->h, r->robot, 0);
        snprintf(url, sizeof url, "%s/v1/jobs?robot=%s&name=%s", r->url, erobot ? erobot : "", ename ? ename : "");
        curl_free(ename);
        curl_free(erobot);
    } else {
        snprintf(url, sizeof url, "%s/v1/jobs", r->url);
        if (buf_str(body, "{\"robot\":") || buf_json_str(body, r->robot, strlen(r->robot)) ||
            buf_str(body, ",\"source_robot\":") ||
            buf_json_str(body, r->source_robot, strlen(r->source_robot)) || buf_str(body, ",\"name\":") ||
            buf_json_str(body, name, strlen(name)) || buf_str(body, ",\"trajectory\":") ||
            buf_json_str(body, text->p, text->len) || buf_str(body, "}")) {
            fprintf(stderr, "bench_load: %s: out of memory\n", name);
            return -1;
        }
    }
    /* Submit; 429 (too many active jobs) and 503 are retried. */
    for (int attempt = 0;; attempt++) {
        double dt = bvh ? request(c, url, text->p, text->len) : request(c, url, body->p, body->len);
        lat_add(submit, dt);
        if ((c->code == 429 || c->code == 503) && attempt < 600) {
            sleep_ms(100);
            continue;
        }
        break;
    }
    if (c->code != 200 && c->code != 201) {
        describe(c->resp.p ? c->resp.p : "", why, sizeof why);
        fprintf(stderr, "bench_load: %s: submit: HTTP %ld: %s\n", name, c->code, why);
        return -1;
    }
    pthread_mutex_lock(&c->r->mu);
    lat_add(&c->r->sub_at, rt_now() - c->r->t0);
    pthread_mutex_unlock(&c->r->mu);
    cJSON *j = cJSON_Parse(c->resp.p);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
    if (cJSON_IsNumber(jid)) id = (long long)jid->valuedouble;
    cJSON_Delete(j);
    if (id < 0) fprintf(stderr, "bench_load: %s: submit: no job id in %.200s\n", name, c->resp.p);
    return id;
}

/* Polls job `id` once: 1 succeeded, 0 still queued or running, -1 failed
 * (said on stderr). */
static int poll_job(struct client *c, const char *name, long long id, struct lat *poll)
{
    struct run *r = c->r;
    char url[2048], why[512], state[32];
    snprintf(url, sizeof url, "%s/v1/jobs/%lld", r->url, id);
    lat_add(poll, request(c, url, NULL, 0));
    if (c->code != 200) {
        describe(c->resp.p ? c->resp.p : "", why, sizeof why);
        fprintf(stderr, "bench_load: %s: job %lld: poll: HTTP %ld: %s\n", name, id, c->code, why);
        return -1;
    }
    cJSON *j = cJSON_Parse(c->resp.p);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "state");
    snprintf(state, sizeof state, "%s", cJSON_IsString(s) ? s->valuestring : "?");
    if (!strcmp(state, "failed") || !strcmp(state, "cancelled")) {
        char *e = cJSON_PrintUnformatted(j);
        fprintf(stderr, "bench_load: %s: job %lld %s: %s\n", name, id, state, e ? e : "");
        cJSON_free(e);
    }
    cJSON_Delete(j);
    if (!strcmp(state, "succeeded")) return 1;
    if (!strcmp(state, "queued") || !strcmp(state, "running")) return 0;
    if (strcmp(state, "failed") && strcmp(state, "cancelled"))
        fprintf(stderr, "bench_load: %s: job %lld: unexpected state '%s'\n", name, id, state);
    return -1;
}

/* Fetches job `id`'s CSV into OUTDIR/NAME.csv; returns its rows or -1. */
static long long fetch_job(struct client *c, const char *name, long long id, struct lat *fetch)
{
    struct run *r = c->r;
    char url[2048], why[512], out[4096];
    snprintf(url, sizeof url, "%s/v1/jobs/%lld/result.csv", r->url, id);
    lat_add(fetch, request(c, url, NULL, 0));
    if (c->code != 200) {
        describe(c->resp.p ? c->resp.p : "", why, sizeof why);
        fprintf(stderr, "bench_load: %s: job %lld: result.csv: HTTP %ld: %s\n", name, id, c->code, why);
        return -1;
    }
    snprintf(out, sizeof out, "%s/%s.csv", r->out_dir, name);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(c->resp.p, 1, c->resp.len, f) != c->resp.len || fclose(f)) {
        fprintf(stderr, "bench_load: %s: cannot write: %s\n", out, strerror(errno));
        return -1;
    }
    long long rows = 0;
    for (size_t i = 0; i < c->resp.len; i++) rows += c->resp.p[i] == '\n';
    if (c->resp.len && c->resp.p[0] >= 'A') rows--; /* the header row */
    return rows;
}

/* A client keeps up to --inflight jobs submitted: it fills its window,
 * polls the jobs in it in turn, fetches each one that succeeded and
 * submits the next clip in its place -- as a corpus run does. */
struct slot {
    long long id;
    char name[256];
    double t0;
};

static void record(struct run *r, long long rows, double dt)
{
    pthread_mutex_lock(&r->mu);
    if (rows < 0) r->failed++;
    else {
        r->frames += rows;
        lat_add(&r->clip, dt);
        lat_add(&r->res_at, rt_now() - r->t0);
    }
    pthread_mutex_unlock(&r->mu);
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct run *r = c->r;
    struct buf text = {0}, body = {0};
    struct lat submit = {0}, poll = {0}, fetch = {0};
    struct slot *slots = calloc((size_t)r->inflight, sizeof *slots);
    int n_open = 0, more = 1;
    for (int k = 0; slots && k < r->inflight; k++) slots[k].id = -1;
    while (slots && (more || n_open)) {
        /* Fill the window. */
        for (int k = 0; more && k < r->inflight; k++) {
            if (slots[k].id >= 0) continue;
            pthread_mutex_lock(&r->mu);
            int i = r->next < r->n_files ? r->next++ : -1;
            pthread_mutex_unlock(&r->mu);
            if (i < 0) {
                more = 0;
                break;
            }
            base_name(r->files[i], slots[k].name, sizeof slots[k].name);
            slots[k].t0 = rt_now();
            slots[k].id = submit_clip(c, r->files[i], slots[k].name, &text, &body, &submit);
            if (slots[k].id < 0) record(r, -1, 0);
            else n_open++;
        }
        if (!n_open) continue;
        sleep_ms(r->poll_ms);
        for (int k = 0; k < r->inflight; k++) {
            struct slot *sl = &slots[k];
            if (sl->id < 0) continue;
            int st = poll_job(c, sl->name, sl->id, &poll);
            if (st == 0 && rt_now() - sl->t0 < r->timeout_s) continue;
            if (st == 0) fprintf(stderr, "bench_load: %s: job %lld not done after %d s\n", sl->name, sl->id, r->timeout_s);
            long long rows = st > 0 ? fetch_job(c, sl->name, sl->id, &fetch) : -1;
            record(r, rows, rt_now() - sl->t0);
            sl->id = -1;
            n_open--;
        }
    }
    /* Merge this client's latencies. */
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < submit.n; i++) lat_add(&r->submit, submit.v[i]);
    for (size_t i = 0; i < poll.n; i++) lat_add(&r->poll, poll.v[i]);
    for (size_t i = 0; i < fetch.n; i++) lat_add(&r->fetch, fetch.v[i]);
    pthread_mutex_unlock(&r->mu);
    free(slots);
    free(submit.v);
    free(poll.v);
    free(fetch.v);
    free(text.p);
    free(body.p);
    return NULL;
}

static int arg_int(const char *what, const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "bench_load: %s: expected an integer in [%d, %d], got '%.20s'\n", what, lo, hi, v);
        return -1;
    }
    *out = (int)x;
    return 0;
}

int main(int argc, char **argv)
{
    struct run r;
    const char *pos[3] = {0}, *metrics = NULL;
    int n_pos = 0, k = 0, wait_s = 30, rc = 1;
    char backend[32] = "?", url[2048];
    memset(&r, 0, sizeof r);
    r.robot = "g1";
    r.source_robot = "g1";
    r.poll_ms = 20;
    r.inflight = 8;
    r.timeout_s = 3600;
    r.files = calloc((size_t)argc, sizeof *r.files);
    if (!r.files) return 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int is_opt = !strcmp(o, "--robot") || !strcmp(o, "--source-robot") || !strcmp(o, "--poll-ms") ||
                     !strcmp(o, "--inflight") ||
                     !strcmp(o, "--timeout-s") || !strcmp(o, "--wait-s") || !strcmp(o, "--metrics");
        if (is_opt && !v) {
            fprintf(stderr, "bench_load: %s: missing value\n", o);
            return 2;
        }
        if (!strcmp(o, "--robot")) r.robot = argv[++i];
        else if (!strcmp(o, "--source-robot")) r.source_robot = argv[++i];
        else if (!strcmp(o, "--metrics")) metrics = argv[++i];
        else if (!strcmp(o, "--inflight")) {
            if (arg_int(o, argv[++i], 1, 100000, &r.inflight)) return 2;
        } else if (!strcmp(o, "--poll-ms")) {
            if (arg_int(o, argv[++i], 0, 60000, &r.poll_ms)) return 2;
        } else if (!strcmp(o, "--timeout-s")) {
            if (arg_int(o, argv[++i], 1, 1000000, &r.timeout_s)) return 2;
        } else if (!strcmp(o, "--wait-s")) {
            if (arg_int(o, argv[++i], 0, 3600, &wait_s)) return 2;
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "bench_load: %s: unknown option\n", o);
            return 2;
        } else if (n_pos < 3) pos[n_pos++] = o;
        else r.files[r.n_files++] = o;
    }
    if (n_pos < 3 || !r.n_files) {
        fprintf(stderr, "usage: bench_load URL OUTDIR K FILE... [--robot R] [--source-robot R] [--poll-ms N]\n"
                        "                  [--timeout-s N] [--wait-s N] [--metrics FILE]\n");
        return 2;
    }
    r.url = pos[0];
    r.out_dir = pos[1];
    if (arg_int("K", pos[2], 1, 1024, &k)) return 2;
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
        fprintf(stderr, "bench_load: curl_global_init failed\n");
        return 1;
    }
    pthread_mutex_init(&r.mu, NULL);
    struct client *cl = calloc((size_t)k, sizeof *cl);
    pthread_t *th = calloc((size_t)k, sizeof *th);
    if (!cl || !th) goto done;
    for (int i = 0; i < k; i++) {
        cl[i].r = &r;
        if (!(cl[i].h = curl_easy_init())) {
            fprintf(stderr, "bench_load: curl_easy_init failed\n");
            goto done;
        }
    }

    /* The daemon is up when /v1/health answers. */
    snprintf(url, sizeof url, "%s/v1/health", r.url);
    for (double until = rt_now() + wait_s;;) {
        request(&cl[0], url, NULL, 0);
        if (cl[0].code == 200) break;
        if (rt_now() > until) {
            fprintf(stderr, "bench_load: %s: no answer after %d s (%s)\n", url, wait_s,
                    cl[0].resp.p ? cl[0].resp.p : "");
            goto done;
        }
        sleep_ms(100);
    }
    {
        cJSON *j = cJSON_Parse(cl[0].resp.p);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backend");
        if (cJSON_IsString(b)) snprintf(backend, sizeof backend, "%s", b->valuestring);
        cJSON_Delete(j);
    }

    double t0 = rt_now();
    r.t0 = t0;
    int started = 0;
    for (; started < k; started++)
        if (pthread_create(&th[started], NULL, client_main, &cl[started])) {
            fprintf(stderr, "bench_load: cannot start client %d\n", started);
            break;
        }
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    double wall = rt_now() - t0;
    if (!started) goto done;

    printf("backend %s\nclients %d\nclips %d\nfailed %d\nframes %lld\nwall_s %.3f\nframes_per_s %.1f\n", backend,
           started, r.n_files, r.failed, r.frames, wall, wall > 0 ? (double)r.frames / wall : 0.0);
    lat_print("submit", &r.submit, 1e3, "ms");
    lat_print("poll", &r.poll, 1e3, "ms");
    lat_print("fetch", &r.fetch, 1e3, "ms");
    lat_print("clip", &r.clip, 1.0, "s");
    /* The run's course: when the submissions were accepted and the results
     * fetched, seconds from its start (p99 is about the last). */
    lat_print("submitted_at", &r.sub_at, 1.0, "s");
    lat_print("fetched_at", &r.res_at, 1.0, "s");

    if (metrics) {
        snprintf(url, sizeof url, "%s/v1/metrics", r.url);
        request(&cl[0], url, NULL, 0);
        FILE *f = cl[0].code == 200 ? fopen(metrics, "wb") : NULL;
        if (!f || fwrite(cl[0].resp.p, 1, cl[0].resp.len, f) != cl[0].resp.len || fclose(f))
            fprintf(stderr, "bench_load: %s: metrics not saved (HTTP %ld)\n", metrics, cl[0].code);
    }
    rc = r.failed || r.frames == 0 ? 1 : 0;
done:
    if (cl)
        for (int i = 0; i < k; i++) {
            if (cl[i].h) curl_easy_cleanup(cl[i].h);
            free(cl[i].resp.p);
        }
    free(cl);
    free(th);
    free(r.files);
    free(r.submit.v);
    free(r.poll.v);
    free(r.fetch.v);
    free(r.clip.v);
    pthread_mutex_destroy(&r.mu);
    curl_global_cleanup();
    return rc;
}
