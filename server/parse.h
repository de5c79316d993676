/* parse.h -- what a request carries, read strictly and without side
 * effects: the route of a URL, JSON bodies (one value, no duplicate keys,
 * no NUL in strings, a nesting limit), query parameter sets (no unknown or
 * repeated parameter), a job submission in either body form, job names and
 * idempotency keys (UTF-8, cut at characters). No MHD connection, no
 * store, no I/O: http.c and jobs.c call these with what they copied out of
 * the request, and tests/fuzz_http.c calls them directly.
 *
 * Memory: srv_json_parse() returns a cJSON tree the caller deletes;
 * srv_submit_* fill a struct srv_submit whose strings are borrowed from the
 * body, its tree and the query (which must outlive it). */
#ifndef RT_SRV_PARSE_H
#define RT_SRV_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "../retarget/options.h"
#include "state.h"

struct cJSON;

#define SRV_JSON_MAX_DEPTH 64  /* arrays and objects nested in a JSON body */
#define SRV_JOB_MAX_NAME 120   /* characters of a job name (longer names are cut) */
#define SRV_JOB_NAME_BYTES (4 * SRV_JOB_MAX_NAME) /* a cut name's UTF-8 bytes, at most */
#define SRV_MAX_KEY 128        /* bytes of an Idempotency-Key */

/* Parses `url` (the path, already %-decoded by MHD) into r->route and
 * r->name or r->id. Returns the route (enum srv_route), 0 when none
 * matches. Robot and profile names longer than STORE_MAX_NAME, ids that
 * are not positive decimal integers and extra path segments match none. */
int srv_route_parse(const char *url, struct srv_req *r);

/* Parses `len` bytes of `text` (need not be NUL-terminated) as strict JSON
 * into *out: exactly one value with only white space after it, UTF-8
 * strings without raw control characters or \u0000, objects without a
 * repeated key, at most SRV_JSON_MAX_DEPTH levels of arrays and objects.
 * Errors are RT_EPARSE at `label`:LINE:COLUMN (line_col) or `label`:LINE,
 * saying what ("nested deeper than 64 levels", "key 'robot' given twice",
 * "text after the JSON value") and at which byte offset. *out is NULL on
 * failure. */
enum rt_status srv_json_parse(const char *text, size_t len, const char *label, int line_col,
                              struct cJSON **out, struct rt_err *err);

/* RT_OK when every parameter of `q` is one of the NULL-terminated `known`
 * and none is given twice; else RT_EINVAL at "query.KEY" ("unknown
 * parameter (known: ...)", "given twice"), or at "query" for too many. */
enum rt_status srv_query_check(const struct srv_query *q, const char *const *known, struct rt_err *err);

/* The value of parameter `key` in `q` (its only one after
 * srv_query_check()), or NULL. */
const char *srv_query_get(const struct srv_query *q, const char *key);

/* A job submission as the client gave it: which form, the names as sent,
 * the source text and the options. `where_*` name the request part that
 * carried each name ("body.robot" or "query.robot"), for later errors. */
struct srv_submit {
    int raw;                  /* 1: the raw body form (?robot=...) */
    int kind;                 /* enum store_source */
    const char *robot, *profile, *source_robot, *name; /* NULL when absent */
    const char *source;       /* the clip, trajectory or joint-position bytes, source_len bytes */
    size_t source_len;
    struct rtg_job_options opts;
    const char *where_robot, *where_profile, *where_name;
    /* STORE_SRC_JOINTS: the format given ("npz", "npy", "csv"), the .npy's
     * joint names (one a line, in names_buf; NULL otherwise), metres per
     * unit (0: detected) and the up axis ('y', 'z', 0: detected), and
     * where the bytes came from ("body.joints.data_base64", "body"). */
    const char *joint_format;
    const char *joint_names;
    size_t joint_names_len;
    double joint_units;
    char joint_up;
    const char *where_source;
    char *names_buf;          /* owned; srv_submit_free() */
};

/* Reads POST /v1/jobs: with any query parameter the raw body form, else a
 * strict JSON body (srv_json_parse(), label "body") whose fields are
 * robot, profile, clip | trajectory + source_robot | joints, options, name.
 *
 * The raw form's `q` holds robot (required), profile and name; the body is
 * a BVH clip, or, by `ctype` (the Content-Type, may be NULL; parameters
 * after ';' ignored), joint positions: application/x-npy (an .npy; then
 * `joint_names=A,B,...` is required), application/zip or
 * application/x-npz (an .npz), text/csv (NAME_x,NAME_y,NAME_z columns),
 * which also take fps, units (m|cm|mm|in|cmu) and up (y|z). Unknown and
 * repeated parameters are refused (srv_query_check()).
 *
 * The JSON "joints" object is {"format": "npz"|"npy"|"csv",
 * "data_base64": TEXT | "text": CSV TEXT, "joint_names": [..] (npy only,
 * required), "units", "up"}; the base64 is decoded in place, in the tree.
 * The bytes are checked to be of the format named (an .npz's zip
 * signature, an .npy's magic, a CSV's header); reading them is the job
 * recipe's.
 *
 * *root gets the JSON tree the strings point into (NULL for the raw
 * form); the caller deletes it, and calls srv_submit_free(out), also on
 * failure. Errors name the field: "body.FIELD", "body.options.KEY",
 * "body.joints.KEY", "query.KEY", "body:LINE:COL". Names are checked for
 * UTF-8 only (the name rules of robots and profiles are assets.c's).
 * Memory: the JSON form's clip or trajectory string is decoded in place in
 * `body` (never copied into the tree), so out->source points into `body`
 * in either form, and `body` is changed: the caller keeps it for as long
 * as it uses `out` and reads nothing else from it. */
enum rt_status srv_submit_parse(char *body, size_t len, const struct srv_query *q, const char *ctype,
                                struct srv_submit *out, struct cJSON **root, struct rt_err *err);

/* Frees what srv_submit_parse() allocated in `sub` (NULL-safe, idempotent). */
void srv_submit_free(struct srv_submit *sub);

/* The stored form of job name `given` (NULL or "": "clip"): valid UTF-8
 * (else RT_EINVAL at `where`), cut after SRV_JOB_MAX_NAME characters
 * (never inside one), '/', '\\', '"' and control characters replaced by
 * '_', and a leading '.' too. Writes a NUL-terminated string of at most
 * SRV_JOB_NAME_BYTES bytes to out[SRV_JOB_NAME_BYTES + 1]. */
enum rt_status srv_job_name(const char *given, const char *where, char out[SRV_JOB_NAME_BYTES + 1],
                            struct rt_err *err);

/* Checks an Idempotency-Key header value: NULL or "" is none (RT_OK, *key
 * NULL); more than SRV_MAX_KEY bytes is RT_ELIMIT, bytes that are not
 * UTF-8 or are control characters RT_EINVAL, both at "Idempotency-Key".
 * Else *key = value. */
enum rt_status srv_idem_key(const char *value, const char **key, struct rt_err *err);

#endif
