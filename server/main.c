/* main.c -- the retargetd command line.
 *
 *   retargetd [--listen ADDR:PORT] [--db FILE] [--threads N] [--backend cpu|cuda|auto]
 *             [--solver-threads N] [--max-body BYTES] [--max-frames N] [--max-joints N]
 *             [--max-active N] [--batch-frames N] [--batch-wait-ms N]
 *             [--idle-timeout S] [--request-timeout S] [--max-connections N] [--max-per-ip N]
 *             [--plan-threads N] [--plan-queue N] [--plan-cache-mb N] [--sync full|normal]
 *             [--sources packed|raw] [--no-auth] [--quiet] [--static-dir DIR]
 *   retargetd token add NAME [--admin] --db FILE
 *   retargetd token list --db FILE
 *   retargetd token revoke NAME --db FILE
 *
 * Runs until SIGINT or SIGTERM, then stops accepting requests, lets the
 * batch being solved finish and closes the database. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/num.h"
#include "../retarget/options.h"
#include "srv.h"

/* Generated from the option table (retarget/options.c). */
static void usage(FILE *f)
{
    fputs("usage: retargetd [options]   (serves the API under /v1)\n", f);
    rtg_options_usage(f, RTG_SCOPE_DAEMON);
    fputs("       retargetd token add NAME [--admin] --db FILE   (prints a new token once)\n"
          "       retargetd token list --db FILE\n"
          "       retargetd token revoke NAME --db FILE\n",
          f);
    rtg_options_usage(f, RTG_SCOPE_TOKEN);
}

/* Strict unsigned integer in [lo, hi]: digits only. */
/* Strict unsigned integer in [lo, hi] (base/num.h: digits only). */
static int parse_num(const char *opt, const char *v, unsigned long long lo, unsigned long long hi,
                     unsigned long long *out)
{
    long long x;
    if (v && v[0] >= '0' && v[0] <= '9' && rt_parse_int(v, (long long)lo, (long long)hi, &x)) {
        *out = (unsigned long long)x;
        return 0;
    }
    fprintf(stderr, "retargetd: %s: expected an integer in [%llu, %llu], got '%s'\n", opt, lo, hi,
            RT_QUOTE(v ? v : ""));
    return -1;
}

static int cmd_token(int argc, char **argv)
{
    const char *name = NULL, *db = NULL;
    int admin = 0;
    char token[SRV_TOKEN_HEX + 1];
    struct rt_err err;
    int add = argc >= 1 && !strcmp(argv[0], "add"), list = argc >= 1 && !strcmp(argv[0], "list");
    int revoke = argc >= 1 && !strcmp(argv[0], "revoke");
    if (!add && !list && !revoke) {
        usage(stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--admin") && add) admin = 1;
        else if (!strcmp(argv[i], "--db") && i + 1 < argc) db = argv[++i];
        else if (argv[i][0] != '-' && !name) name = argv[i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (!db || (list ? name != NULL : !name)) {
        usage(stderr);
        return 2;
    }
    rt_err_clear(&err);
    if (list || revoke) {
        if ((list ? srv_token_list(db, stdout, &err) : srv_token_revoke(db, name, &err)) != RT_OK) {
            char line[RT_ERR_LINE_MAX];
            fprintf(stderr, "retargetd: %s\n", rt_err_line(&err, line, sizeof line));
            return 1;
        }
        return 0;
    }
    if (srv_token_add(db, name, admin, token, &err) != RT_OK) {
        char line[RT_ERR_LINE_MAX];
        fprintf(stderr, "retargetd: %s\n", rt_err_line(&err, line, sizeof line));
        return 1;
    }
    /* The token is shown once; only its hash is stored. */
    printf("%s\n", token);
    return 0;
}

int main(int argc, char **argv)
{
    struct srv_config cfg;
    struct srv *s = NULL;
    struct rt_err err;
    unsigned long long v;
    if (argc > 1 && !strcmp(argv[1], "token")) return cmd_token(argc - 2, argv + 2);
    srv_config_default(&cfg);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--no-auth")) { cfg.no_auth = 1; continue; }
        if (!strcmp(o, "--metrics-public")) { cfg.metrics_public = 1; continue; }
        if (!strcmp(o, "--quiet")) { cfg.quiet = 1; continue; }
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) { usage(stdout); return 0; }
        if (!val) {
            fprintf(stderr, "retargetd: %s: unknown option or missing value\n", o);
            usage(stderr);
            return 2;
        }
        i++;
        if (!strcmp(o, "--listen")) cfg.listen = val;
        else if (!strcmp(o, "--db")) cfg.db_path = val;
        else if (!strcmp(o, "--backend")) cfg.backend = val;
        else if (!strcmp(o, "--static-dir")) cfg.static_dir = val;
        else if (!strcmp(o, "--threads")) { if (parse_num(o, val, 1, 1024, &v)) return 2; cfg.threads = (unsigned int)v; }
        else if (!strcmp(o, "--solver-threads")) { if (parse_num(o, val, 1, 256, &v)) return 2; cfg.solver_threads = (int)v; }
        else if (!strcmp(o, "--host-threads")) { if (parse_num(o, val, 1, 256, &v)) return 2; cfg.host_threads = (int)v; }
        else if (!strcmp(o, "--max-body")) { if (parse_num(o, val, 1, (1ull << 31) - 1, &v)) return 2; cfg.max_body = (size_t)v; }
        else if (!strcmp(o, "--max-frames")) { if (parse_num(o, val, 1, 10000000, &v)) return 2; cfg.max_frames = (int)v; }
        else if (!strcmp(o, "--max-joints")) { if (parse_num(o, val, 1, 1024, &v)) return 2; cfg.max_joints = (int)v; }
        else if (!strcmp(o, "--max-active")) { if (parse_num(o, val, 0, INT_MAX, &v)) return 2; cfg.max_active = (int)v; }
        else if (!strcmp(o, "--batch-frames")) { if (parse_num(o, val, 1, 10000000, &v)) return 2; cfg.batch_frames = (int)v; }
        else if (!strcmp(o, "--batch-wait-ms")) { if (parse_num(o, val, 0, 3600000, &v)) return 2; cfg.batch_wait_ms = (int)v; }
        else if (!strcmp(o, "--idle-timeout")) { if (parse_num(o, val, 1, 86400, &v)) return 2; cfg.idle_timeout_s = (unsigned int)v; }
        else if (!strcmp(o, "--request-timeout")) { if (parse_num(o, val, 1, 86400, &v)) return 2; cfg.request_timeout_s = (unsigned int)v; }
        else if (!strcmp(o, "--max-connections")) { if (parse_num(o, val, 1, 65536, &v)) return 2; cfg.max_connections = (unsigned int)v; }
        else if (!strcmp(o, "--max-per-ip")) { if (parse_num(o, val, 0, 65536, &v)) return 2; cfg.max_per_ip = (unsigned int)v; }
        else if (!strcmp(o, "--plan-threads")) { if (parse_num(o, val, 0, 256, &v)) return 2; cfg.plan_threads = (int)v; }
        else if (!strcmp(o, "--plan-queue")) { if (parse_num(o, val, 1, 65536, &v)) return 2; cfg.plan_queue = (int)v; }
        else if (!strcmp(o, "--plan-cache-mb")) { if (parse_num(o, val, 0, 1048576, &v)) return 2; cfg.plan_cache_mb = (int)v; }
        else if (!strcmp(o, "--sync")) {
            if (strcmp(val, "full") && strcmp(val, "normal")) {
                fprintf(stderr, "retargetd: --sync: expected full or normal, got '%s'\n", RT_QUOTE(val));
                return 2;
            }
            cfg.sync_full = !strcmp(val, "full");
        }
        else if (!strcmp(o, "--sources")) {
            if (strcmp(val, "packed") && strcmp(val, "raw")) {
                fprintf(stderr, "retargetd: --sources: expected packed or raw, got '%s'\n", RT_QUOTE(val));
                return 2;
            }
            cfg.sources_raw = !strcmp(val, "raw");
        }
        else {
            fprintf(stderr, "retargetd: %s: unknown option\n", o);
            usage(stderr);
            return 2;
        }
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    /* Block the signals before any thread starts, so that only sigwait sees them. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    rt_err_clear(&err);
    if (srv_start(&cfg, &s, &err) != RT_OK) {
        char line[RT_ERR_LINE_MAX];
        fprintf(stderr, "retargetd: %s\n", rt_err_line(&err, line, sizeof line));
        return 1;
    }
    int sig = 0;
    sigwait(&set, &sig);
    rt_log("info", "srv", "signal", "%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    srv_stop(s);
    return 0;
}
