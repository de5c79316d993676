/* srv.h -- the retargetd daemon as a library: start it on an address with a
 * database, read back its port, stop it. server/main.c is a thin command
 * line around this; tests/test_http_*.c start the real daemon in-process
 * on 127.0.0.1:0 through the same calls.
 *
 * server/daemon.c implements the daemon's calls, server/tokens.c the token
 * administration; struct srv_config is in config.h.
 *
 * Memory: srv_start() returns a daemon the caller stops (and frees) with
 * srv_stop(); the configuration's strings are copied. */
#ifndef RT_SRV_H
#define RT_SRV_H

#include <stddef.h>
#include <stdio.h>

#include "../base/status.h"
#include "config.h"

#define SRV_TOKEN_HEX 64 /* a token is 32 random bytes as lower-case hex */

/* Fills `c` with the defaults (listen 127.0.0.1:8080, db var/retargetd.db,
 * one HTTP thread per core (4 to 64), backend auto, SRV_MAX_BODY_DEFAULT, 100000 frames,
 * 512 joints, 1000 active jobs, batch frames and wait by backend, 30 s idle and
 * 60 s request timeouts, 1024 connections and 64 per IP address,
 * validation threads one a core (2 to 32) with a queue of 64,
 * synchronous FULL). */
void srv_config_default(struct srv_config *c);

struct srv;

/* Takes the database's lock (DB_PATH.lock: one daemon per database),
 * opens the database (migrating it, returning jobs a crash left running to
 * the queue), starts the solver worker, the validation threads and the HTTP
 * daemon. RT_EINVAL for a bad address or option, RT_ESTATE for --no-auth
 * off loopback or a database another daemon holds (the message names its
 * pid), RT_EIO when the address cannot be bound or the database opened,
 * RT_ENODEV when the backend asked for is absent. *out is NULL on failure. */
enum rt_status srv_start(const struct srv_config *c, struct srv **out, struct rt_err *err);

/* The port the daemon listens on (the chosen one when asked for port 0). */
unsigned int srv_port(const struct srv *s);

/* Stops accepting requests, lets the worker finish the batch it is solving
 * (its results are stored), stops it and closes the database. Jobs still
 * queued stay queued in the database. NULL-safe. */
void srv_stop(struct srv *s);

/* `retargetd token add`: creates a token named `name` in the database at
 * `db_path` and writes it (SRV_TOKEN_HEX hex digits + NUL) to `token`. Only
 * its SHA-256 is stored. */
enum rt_status srv_token_add(const char *db_path, const char *name, int admin,
                             char token[SRV_TOKEN_HEX + 1], struct rt_err *err);

/* `retargetd token list`: writes one line per token of the database at
 * `db_path` to `out`, in name order, under a header line:
 * "NAME<TAB>admin|user<TAB>CREATED" (created as UTC, ISO 8601). Never the
 * hash: a token cannot be shown again. */
enum rt_status srv_token_list(const char *db_path, FILE *out, struct rt_err *err);

/* `retargetd token revoke`: deletes token `name`, so that requests with it
 * are 401 from then on (a running daemon reads tokens per request). The
 * jobs it submitted stay, owned by its name, and the name is never
 * issued again (srv_token_add() of it is RT_ECONFLICT). RT_ENOTFOUND when
 * there is no such token. */
enum rt_status srv_token_revoke(const char *db_path, const char *name, struct rt_err *err);

#endif
