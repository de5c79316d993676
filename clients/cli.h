/* cli.h -- subcommands of the `retarget` tool, one file each. Each takes the
 * arguments after its name and returns the process exit status. */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdio.h>
#include <strings.h>

#include "../base/status.h"

#include "../retarget/options.h"

/* `retarget solve` as a call (solve.c): what its flags say. `retarget
 * batch` runs its local solves through it, without an argv. */
struct cli_solve_args {
    const char *robot, *source_robot, *profile, *out_dir, *backend;
    int batch, per_frame, no_header, quiet, threads, help;
    int threads_given; /* --threads was on the command line */
    int lanes;         /* --lanes: solver calls in flight at once with --batch, 1 or 2; 0: the default, 1 */
    const char *stats;              /* --stats FILE: host seconds per stage, or NULL */
    int npz;                        /* --format npz: NAME.npz instead of NAME.csv */
    const char *joint_names;        /* --joint-names FILE: the names of .npy sources, or NULL */
    double units;                   /* --units: metres per unit of joint positions, 0 detected */
    char up;                        /* --up: 'y' or 'z', 0 detected */
    double out_fps;                 /* --out-fps F: the written rate, 0 for the source's */
    struct rtg_job_options opts;    /* the job options given */
    int n_sources;
    const char **sources;
};
/* The defaults: output ".", backend auto, one thread per core (at most 64). */
void cli_solve_args_init(struct cli_solve_args *a);
/* Runs the solve of `a`: 0 on success, 1 with `err` set otherwise. */
int cli_solve_run(const struct cli_solve_args *a, struct rt_err *err);

int cli_solve(int argc, char **argv);
/* As cli_solve(), but with a non-NULL `err` the failure is returned there
 * instead of printed (`retarget batch` records it in its manifest). */
int cli_solve_err(int argc, char **argv, struct rt_err *err);
/* The usage of `retarget solve`, generated from the option table. */
void cli_solve_usage(FILE *f);

/* The HTTP client (client_http.c): `retarget submit|status|wait|fetch|cancel|list`. */
int cli_submit(int argc, char **argv);
int cli_status(int argc, char **argv);
int cli_wait(int argc, char **argv);
int cli_fetch(int argc, char **argv);
int cli_cancel(int argc, char **argv);
int cli_list(int argc, char **argv);
/* `retarget batch` (batch.c): a corpus through the daemon or locally. */
int cli_batch(int argc, char **argv);

/* A daemon to talk to: base URL ("http://127.0.0.1:8080") and bearer token
 * (may be NULL). */
struct cli_server {
    const char *url;
    const char *token;
};

/* One HTTP request to the daemon (libcurl). `body` (may be NULL) is sent
 * with `ctype`; extra_header (may be NULL) is one "Name: value" line. On
 * success *code is the HTTP status and *resp a malloc'd NUL-terminated body
 * of *resp_len bytes (caller frees). RT_EIO when the daemon cannot be
 * reached. A non-2xx status is not an error here: see cli_http_error(). */
enum rt_status cli_http(const struct cli_server *srv, const char *method, const char *path,
                        const char *ctype, const char *body, size_t body_len,
                        const char *extra_header, long *code, char **resp, size_t *resp_len,
                        struct rt_err *err);

/* Fills `err` from an error reply {"error":{"code","where","message"}} with
 * HTTP status `code`; returns the rt_status it maps to. */
enum rt_status cli_http_error(long code, const char *resp, struct rt_err *err);

/* The submission body for a source file: {"robot","profile","name",
 * "clip"|"trajectory"+"source_robot"|"joints","options"}; malloc'd JSON
 * text. Joint positions (cli_joints_format()) go as a "joints" object:
 * .npz and .npy bytes in base64 (an .npy's names from PATH with .txt for
 * .npy), a CSV as text. */
enum rt_status cli_job_body(const char *path, const char *robot, const char *profile,
                            const char *source_robot, const struct rtg_job_options *opts, char **body,
                            struct rt_err *err);

/* Writes job `id`'s NAME.csv (with `npz`: NAME.npz, from result.npz) and
 * NAME.report.json into `dir` (as `retarget solve` does, --format npz).
 * `name` (may be NULL) overrides the job's name. */
enum rt_status cli_fetch_job(const struct cli_server *srv, long long id, const char *dir,
                             const char *name, int npz, struct rt_err *err);

/* Polls job `id` until it is finished; its final state name into state[16].
 * With `progress`, draws a bar on stderr. */
enum rt_status cli_wait_job(const struct cli_server *srv, long long id, double timeout_s,
                            int progress, char state[16], struct rt_err *err);
int cli_render(int argc, char **argv);

/* The integer at key `k` of JSON object `o` (may be NULL), or `def` when it
 * is absent, not a number, or beyond +-2^53 (a reply from the server is
 * input: casting an out-of-range double to an integer is undefined). */
struct cJSON;
long long cli_json_int(const struct cJSON *o, const char *k, long long def);

/* Prints "retarget: WHERE: reason" on stderr and returns 1. */
int cli_fail(const struct rt_err *err);

/* mkdir -p: creates folder `dir` and any missing parents. RT_EIO naming the
 * folder that could not be created. */
enum rt_status cli_mkdirs(const char *dir, struct rt_err *err);

/* Writes data[0..len) to file `path` (created or truncated), then a '\n'
 * when `nl`. RT_EIO "cannot write: REASON" when it cannot be opened,
 * "write failed" when closing it fails. */
enum rt_status cli_write_file(const char *path, const char *data, size_t len, int nl,
                              struct rt_err *err);

/* NAME of a path into out[cap]: its file name without folders and without
 * its last extension ("a/b.c.bvh" -> "b.c", ".x" -> ".x"). */
void cli_base_name(const char *path, char *out, size_t cap);

/* The joint-position format of source file `path` with bytes
 * text[0..len): "npz" or "npy" by extension, "csv" for a file (not .bvh)
 * whose first line is NAME_x,NAME_y,NAME_z triples; NULL for any other
 * source. As `retarget solve` tells them apart. */
const char *cli_joints_format(const char *path, const char *text, size_t len);

/* 1 when `path` names a BVH file (by extension). */
int cli_is_bvh(const char *path);

#endif
