/* bench_http.c -- latency of cheap requests while large submissions are
 * validated: N client threads POST the same large trajectory job (about
 * 13.5 MB of CSV in JSON, each thread with its own Idempotency-Key, so that
 * after the first one every POST is validated in full and then answered
 * with the stored job) in a loop, while one more thread asks GET
 * /v1/health and GET /v1/jobs/ID every 10 ms. Prints the percentiles of
 * both and how many submissions were served.
 *
 *   bench_http PORT [SUBMITTERS=6] [SECONDS=20] [ROWS=41000]
 *
 * The daemon is started by bench/http_latency.sh (no auth, a batch window
 * of an hour so that nothing is solved while measuring). Raw sockets, one
 * connection per request, Connection: close. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../base/clock.h"

static unsigned int port;
static volatile int stop;
static char *body;
static size_t body_len;

/* One request; returns the HTTP status (0: none) and, with `out`, the body
 * (malloc'd). */
static long request(const char *head, const char *data, size_t len, char **out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        if (fd >= 0) close(fd);
        return 0;
    }
    size_t hl = strlen(head);
    for (size_t off = 0; off < hl + len;) {
        const char *p = off < hl ? head + off : data + (off - hl);
        size_t n = off < hl ? hl - off : hl + len - off;
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) break;
        off += (size_t)k;
    }
    char buf[65536];
    size_t got = 0;
    char *all = NULL;
    for (;;) {
        ssize_t k = recv(fd, buf, sizeof buf, 0);
        if (k <= 0) break;
        char *na = realloc(all, got + (size_t)k + 1);
        if (!na) break;
        all = na;
        memcpy(all + got, buf, (size_t)k);
        got += (size_t)k;
        all[got] = 0;
    }
    close(fd);
    long st = all && !strncmp(all, "HTTP/1.", 7) ? strtol(all + 9, NULL, 10) : 0;
    if (out) *out = all;
    else free(all);
    return st;
}

struct lat {
    double *v;
    int n, cap;
};

static void lat_add(struct lat *l, double x)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(struct lat *l, double p)
{
    if (!l->n) return 0;
    int i = (int)(p / 100.0 * (l->n - 1) + 0.5);
    return l->v[i];
}

struct submitter {
    pthread_t t;
    int id, n, bad;
    double secs;
};

static void *submit_main(void *arg)
{
    struct submitter *s = arg;
    char head[256];
    snprintf(head, sizeof head,
             "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nIdempotency-Key: bench-%d\r\n"
             "Content-Length: %zu\r\n\r\n",
             s->id, body_len);
    while (!stop) {
        double t0 = rt_now();
        long st = request(head, body, body_len, NULL);
        if (stop) break;
        s->secs += rt_now() - t0;
        s->n++;
        if (st != 200 && st != 201) s->bad++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_http PORT [SUBMITTERS] [SECONDS] [ROWS]\n");
        return 2;
    }
    port = (unsigned int)atoi(argv[1]);
    int n_sub = argc > 2 ? atoi(argv[2]) : 6, secs = argc > 3 ? atoi(argv[3]) : 20;
    int rows = argc > 4 ? atoi(argv[4]) : 41000;
    /* A G1 trajectory: root walking along x, joints swinging; 36 columns. */
    size_t cap = (size_t)rows * 36 * 12 + 256, k = 0;
    body = malloc(cap);
    k += (size_t)snprintf(body + k, cap - k, "{\"robot\":\"g1\",\"source_robot\":\"g1\",\"name\":\"big\",\"trajectory\":\"");
    for (int r = 0; r < rows; r++) {
        double t = r / 30.0;
        k += (size_t)snprintf(body + k, cap - k, "%.6f,0.000000,0.790000,0,0,0,1", 0.5 * t);
        for (int j = 0; j < 29; j++) k += (size_t)snprintf(body + k, cap - k, ",%.6f", 0.2 * __builtin_sin(t + j));
        k += (size_t)snprintf(body + k, cap - k, "\\n");
    }
    k += (size_t)snprintf(body + k, cap - k, "\"}");
    body_len = k;
    /* One submission first: its job is the one the poller asks for. */
    char head[256], *resp = NULL;
    snprintf(head, sizeof head,
             "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nIdempotency-Key: bench-0\r\n"
             "Content-Length: %zu\r\n\r\n",
             body_len);
    double t0 = rt_now();
    long st = request(head, body, body_len, &resp);
    double first = rt_now() - t0;
    long long id = 1;
    const char *idp = resp ? strstr(resp, "\"id\":") : NULL;
    if (idp) id = atoll(idp + 5);
    free(resp);
    printf("body: %zu bytes, %d rows; first submission HTTP %ld in %.3f s (job %lld)\n", body_len, rows, st, first,
           id);
    struct submitter *subs = calloc((size_t)n_sub, sizeof *subs);
    for (int i = 0; i < n_sub; i++) {
        subs[i].id = i;
        pthread_create(&subs[i].t, NULL, submit_main, &subs[i]);
    }
    struct lat health = {0}, status = {0};
    char status_head[128];
    snprintf(status_head, sizeof status_head, "GET /v1/jobs/%lld HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", id);
    int bad = 0;
    double end = rt_now() + secs;
    while (rt_now() < end) {
        double a = rt_now();
        if (request("GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", NULL, 0, NULL) != 200) bad++;
        double b = rt_now();
        if (request(status_head, NULL, 0, NULL) != 200) bad++;
        double c = rt_now();
        lat_add(&health, (b - a) * 1e3);
        lat_add(&status, (c - b) * 1e3);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    stop = 1;
    int n_done = 0, n_bad = 0;
    double sub_secs = 0;
    for (int i = 0; i < n_sub; i++) {
        pthread_join(subs[i].t, NULL);
        n_done += subs[i].n;
        n_bad += subs[i].bad;
        sub_secs += subs[i].secs;
    }
    qsort(health.v, (size_t)health.n, sizeof *health.v, cmp_double);
    qsort(status.v, (size_t)status.n, sizeof *status.v, cmp_double);
    printf("\n| request | n | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n");
    printf("| GET /v1/health | %d | %.2f | %.2f | %.2f | %.2f |\n", health.n, pct(&health, 50), pct(&health, 90),
           pct(&health, 99), health.v ? health.v[health.n - 1] : 0);
    printf("| GET /v1/jobs/%lld | %d | %.2f | %.2f | %.2f | %.2f |\n", id, status.n, pct(&status, 50),
           pct(&status, 90), pct(&status, 99), status.v ? status.v[status.n - 1] : 0);
    printf("\n%d submitters: %d submissions of %.1f MB validated in %d s (mean %.3f s each), %d not 200/201; "
           "%d health/status replies not 200\n",
           n_sub, n_done, body_len / 1e6, secs, n_done ? sub_secs / n_done : 0, n_bad, bad);
    free(health.v);
    free(status.v);
    free(subs);
    free(body);
    return 0;
}
