/* tokens.c -- `retargetd token add|list|revoke` (srv.h): the token
 * administration, on the database file directly and without a running
 * daemon. A token is 32 random bytes from /dev/urandom written as hex; only
 * its SHA-256 is stored, so a token is shown once, when it is made. A
 * running daemon reads tokens per request (auth.c), so a change takes
 * effect at once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/sha256.h"
#include "../storage/store.h"
#include "srv.h"

enum rt_status srv_token_add(const char *db_path, const char *name, int admin,
                             char token[SRV_TOKEN_HEX + 1], struct rt_err *err)
{
    _Static_assert(SRV_TOKEN_HEX == 2 * RT_SHA256_LEN, "a token is written as a digest's hex");
    unsigned char raw[RT_SHA256_LEN], hash[RT_SHA256_LEN];
    struct store *st = NULL;
    enum rt_status rc;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    while (fd >= 0 && got < sizeof raw) {
        ssize_t n = read(fd, raw + got, sizeof raw - got);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            break;
        }
        got += (size_t)n;
    }
    if (fd >= 0) close(fd);
    if (got != sizeof raw) return rt_err_set(err, RT_EIO, "/dev/urandom", "cannot read random bytes");
    rt_sha256_hex(raw, token); /* lower-case hex: SRV_TOKEN_HEX digits + NUL */
    if (rt_sha256(token, SRV_TOKEN_HEX, hash) != RT_OK) rc = rt_err_set(err, RT_ENOMEM, "token", "out of memory");
    else if ((rc = store_open(db_path, &st, err)) == RT_OK) rc = store_token_add(st, name, hash, admin, err);
    store_close(st);
    memset(raw, 0, sizeof raw);
    if (rc != RT_OK) memset(token, 0, SRV_TOKEN_HEX + 1);
    return rc;
}

static void print_token(void *user, const char *name, int admin, double created)
{
    char when[32] = "-";
    time_t t = (time_t)created;
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(user, "%s\t%s\t%s\n", name, admin ? "admin" : "user", when);
}

enum rt_status srv_token_list(const char *db_path, FILE *out, struct rt_err *err)
{
    struct store *st = NULL;
    enum rt_status rc;
    if ((rc = store_open(db_path, &st, err)) == RT_OK) {
        fputs("name\tadmin\tcreated\n", out);
        rc = store_token_list(st, print_token, out, err);
    }
    store_close(st);
    return rc;
}

enum rt_status srv_token_revoke(const char *db_path, const char *name, struct rt_err *err)
{
    struct store *st = NULL;
    enum rt_status rc;
    if ((rc = store_open(db_path, &st, err)) == RT_OK) rc = store_token_revoke(st, name, err);
    store_close(st);
    return rc;
}
