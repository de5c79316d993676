/* http_raw.h -- HTTP/1.1 over a plain socket for the daemon tests that
 * must send what no client library would (repeated headers, %00 in a URL,
 * a body that stalls or trickles): send the bytes, read until the daemon
 * closes, split the status, the head and the body. */
#ifndef RT_TEST_HTTP_RAW_H
#define RT_TEST_HTTP_RAW_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct reply {
    long status;       /* 0: no reply (the connection closed without one) */
    char *head, *body; /* malloc'd, NUL-terminated; body points into the same buffer */
    size_t body_len;
};

static inline void reply_free(struct reply *r)
{
    free(r->head);
    memset(r, 0, sizeof *r);
}

/* A connected socket to 127.0.0.1:port, or -1. */
static inline int raw_connect(unsigned int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static inline int raw_send(int fd, const char *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t k = send(fd, p + off, n - off, MSG_NOSIGNAL);
        if (k <= 0) return -1; /* the daemon may refuse early and close */
        off += (size_t)k;
    }
    return 0;
}

/* Reads from fd until the daemon closes or `timeout_ms` pass without a
 * byte, and closes fd. */
static inline struct reply raw_read(int fd, int timeout_ms)
{
    struct reply r = {0, NULL, NULL, 0};
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0) break;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
        ssize_t n = recv(fd, buf + len, cap - len, 0);
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = 0;
    char *sep = strstr(buf, "\r\n\r\n");
    if (strncmp(buf, "HTTP/1.", 7) || !sep) {
        free(buf);
        return r;
    }
    r.status = strtol(buf + 9, NULL, 10);
    r.head = buf;
    *sep = 0;
    r.body = sep + 4;
    r.body_len = len - (size_t)(r.body - buf);
    return r;
}

/* One request (Connection: close) with bearer `token` (NULL: none), extra
 * header lines `headers` ("Name: value\r\n"..., may be NULL) and `body`
 * with its Content-Length (body NULL: neither). */
static inline struct reply raw_request(unsigned int port, const char *method, const char *path, const char *token,
                                       const char *headers, const char *body, size_t body_len)
{
    struct reply none = {0, NULL, NULL, 0};
    size_t cap = body_len + strlen(path) + (headers ? strlen(headers) : 0) + 512;
    char *req = malloc(cap);
    int k = snprintf(req, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", method, path);
    if (token) k += snprintf(req + k, cap - (size_t)k, "Authorization: Bearer %s\r\n", token);
    if (headers) k += snprintf(req + k, cap - (size_t)k, "%s", headers);
    if (body) k += snprintf(req + k, cap - (size_t)k, "Content-Length: %zu\r\n", body_len);
    k += snprintf(req + k, cap - (size_t)k, "\r\n");
    if (body) memcpy(req + k, body, body_len);
    int fd = raw_connect(port);
    if (fd < 0) {
        free(req);
        return none;
    }
    raw_send(fd, req, (size_t)k + (body ? body_len : 0));
    free(req);
    return raw_read(fd, 10000);
}

#endif
