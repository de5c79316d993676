/* parse.c -- strict reading of what a request carries (parse.h): routes,
 * JSON, query parameters, submissions, job names, idempotency keys.
 *
 * JSON is read in two passes. cJSON builds the tree, but it is lenient in
 * ways that matter here: it stops after the first value and ignores what
 * follows, keeps the first of two equal keys out of sight, decodes \u0000
 * into a NUL that silently ends the C string ("g1\u0000junk" reads as
 * "g1"), passes bytes that are not UTF-8 through into replies, and names
 * no nesting limit (it fails at depth 1000 as a plain "malformed JSON").
 * So a scan of the raw text comes first (nesting, strings), then cJSON,
 * then the text after the value and a walk for repeated keys. Every check
 * is linear in the input, or n log n for the keys of one object. */
#include "parse.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/utf8.h"
#include "../storage/store.h"
#include "state.h"

/* --- routes ---------------------------------------------------------------- */

int srv_route_parse(const char *url, struct srv_req *r)
{
    if (!strcmp(url, "/") || !strncmp(url, "/ui/", 4)) return r->route = SRV_R_UI;
    if (strncmp(url, "/v1/", 4)) return 0;
    const char *p = url + 4;
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    const char *rest = slash ? slash + 1 : NULL;
#define IS(word) (n == sizeof(word) - 1 && !strncmp(p, word, n))
    if (IS("health") && !rest) return r->route = SRV_R_HEALTH;
    if (IS("metrics") && !rest) return r->route = SRV_R_METRICS;
    if (IS("token") && !rest) return r->route = SRV_R_TOKEN;
    if (IS("openapi.json") && !rest) return r->route = SRV_R_OPENAPI;
    if (IS("robots") || IS("profiles")) {
        int one = IS("robots") ? SRV_R_ROBOT : SRV_R_PROFILE;
        if (!rest || !*rest) return r->route = one - 1;
        const char *sub = strchr(rest, '/');
        size_t name_len = sub ? (size_t)(sub - rest) : strlen(rest);
        if (name_len > STORE_MAX_NAME) return 0;
        snprintf(r->name, sizeof r->name, "%.*s", (int)name_len, rest);
        if (!sub) return r->route = one;
        /* GET /v1/robots/NAME/urdf: the robot's URDF text. */
        if (one == SRV_R_ROBOT && name_len && !strcmp(sub, "/urdf")) return r->route = SRV_R_ROBOT_URDF;
        return 0;
    }
    if (IS("jobs")) {
        if (!rest || !*rest) return r->route = SRV_R_JOBS;
        char *end;
        if (rest[0] < '0' || rest[0] > '9') return 0;
        errno = 0;
        long long id = strtoll(rest, &end, 10);
        if (errno || id <= 0) return 0;
        r->id = id;
        if (!*end) return r->route = SRV_R_JOB;
        if (!strcmp(end, "/result")) return r->route = SRV_R_RESULT;
        if (!strcmp(end, "/result.csv")) return r->route = SRV_R_RESULT_CSV;
        if (!strcmp(end, "/result.npz")) return r->route = SRV_R_RESULT_NPZ;
        if (!strcmp(end, "/source")) return r->route = SRV_R_SOURCE;
        return 0;
    }
#undef IS
    return 0;
}

/* --- strict JSON ----------------------------------------------------------- */

/* Sets err to RT_EPARSE at the position `off` of text: "label:LINE:COL" or
 * "label:LINE", with "MSG at offset OFF". */
static enum rt_status json_fail(const char *text, size_t len, size_t off, const char *label, int line_col,
                                struct rt_err *err, const char *msg)
{
    long line = 1, col = 1;
    char where[RT_ERR_WHERE_MAX];
    if (off > len) off = len;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') line++, col = 1;
        else col++;
    }
    if (line_col) snprintf(where, sizeof where, "%s:%ld:%ld", label, line, col);
    else snprintf(where, sizeof where, "%s:%ld", label, line);
    return rt_err_set(err, RT_EPARSE, where, "%s at offset %zu (line %ld, column %ld)", msg, off, line, col);
}

static int hex4_zero(const char *p, const char *end)
{
    if (end - p < 4) return 0;
    for (int i = 0; i < 4; i++)
        if (p[i] != '0') return 0;
    return 1;
}

/* The raw scan: nesting depth outside strings; inside strings no raw
 * control character, no \u0000 and only valid UTF-8. Grammar is cJSON's
 * business; this only has to be right on what it refuses. */
static enum rt_status json_scan(const char *text, size_t len, const char *label, int line_col,
                                struct rt_err *err)
{
    const char *p = text, *end = text + len;
    int depth = 0;
    char msg[64];
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '[' || c == '{') {
            if (++depth > SRV_JSON_MAX_DEPTH) {
                snprintf(msg, sizeof msg, "JSON nested deeper than %d levels", SRV_JSON_MAX_DEPTH);
                return json_fail(text, len, (size_t)(p - text), label, line_col, err, msg);
            }
            p++;
        } else if (c == ']' || c == '}') {
            if (depth > 0) depth--;
            p++;
        } else if (c == '"') {
            const char *start = p++;
            while (p < end && *p != '"') {
                unsigned char d = (unsigned char)*p;
                if (d < 0x20)
                    return json_fail(text, len, (size_t)(p - text), label, line_col, err,
                                     "control character in a string (escape it)");
                if (d == '\\') {
                    if (p + 1 < end && p[1] == 'u' && hex4_zero(p + 2, end))
                        return json_fail(text, len, (size_t)(p - text), label, line_col, err,
                                         "\\u0000 (NUL) in a string");
                    p += p + 1 < end ? 2 : 1;
                    continue;
                }
                if (d >= 0x80) {
                    size_t k = rt_utf8_char_len(p, (size_t)(end - p));
                    if (!k)
                        return json_fail(text, len, (size_t)(p - text), label, line_col, err,
                                         "string is not valid UTF-8");
                    p += k;
                    continue;
                }
                p++;
            }
            if (p >= end) return json_fail(text, len, (size_t)(start - text), label, line_col, err,
                                           "malformed JSON: unterminated string");
            p++;
        } else {
            p++;
        }
    }
    return RT_OK;
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* The first key that an object in `node` repeats (depth-first), or NULL.
 * The depth is bounded by the scan (SRV_JSON_MAX_DEPTH). Small objects are
 * compared pairwise, larger ones sorted. *oom is set when sorting space
 * cannot be had. */
static const char *json_dup_key(const cJSON *node, int *oom)
{
    if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return NULL;
    int n = 0;
    for (const cJSON *c = node->child; c; c = c->next) {
        const char *d = json_dup_key(c, oom);
        if (d || *oom) return d;
        n++;
    }
    if (!cJSON_IsObject(node) || n < 2) return NULL;
    if (n <= 16) {
        for (const cJSON *a = node->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (!strcmp(a->string, b->string)) return a->string;
        return NULL;
    }
    const cJSON **v = malloc((size_t)n * sizeof *v);
    const char *dup = NULL;
    if (!v) {
        *oom = 1;
        return NULL;
    }
    int k = 0;
    for (const cJSON *c = node->child; c; c = c->next) v[k++] = c;
    qsort(v, (size_t)n, sizeof *v, key_cmp);
    for (int i = 1; i < n && !dup; i++)
        if (!strcmp(v[i - 1]->string, v[i]->string)) dup = v[i]->string;
    free(v);
    return dup;
}

/* The offset of the first `"key"` member after `from` in text, for the
 * error of a repeated key (a best effort: 0 when not found). */
static size_t key_offset(const char *text, size_t len, const char *key, int nth)
{
    size_t k = strlen(key);
    int seen = 0;
    for (size_t i = 0; k + 2 <= len && i + k + 2 <= len; i++)
        if (text[i] == '"' && !memcmp(text + i + 1, key, k) && text[i + 1 + k] == '"' && ++seen == nth) return i;
    return 0;
}

enum rt_status srv_json_parse(const char *text, size_t len, const char *label, int line_col,
                              cJSON **out, struct rt_err *err)
{
    const char *end = NULL;
    enum rt_status st;
    *out = NULL;
    if ((st = json_scan(text, len, label, line_col, err)) != RT_OK) return st;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        return json_fail(text, len, off, label, line_col, err, "malformed JSON");
    }
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r')) off++;
    if (off < len) {
        cJSON_Delete(root);
        return json_fail(text, len, off, label, line_col, err, "text after the JSON value");
    }
    int oom = 0;
    const char *dup = json_dup_key(root, &oom);
    if (dup || oom) {
        char msg[96];
        snprintf(msg, sizeof msg, "key '%s' given twice", RT_QUOTE(dup ? dup : ""));
        st = oom ? rt_err_set(err, RT_ENOMEM, label, "out of memory")
                 : json_fail(text, len, key_offset(text, len, dup, 2), label, line_col, err, msg);
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return RT_OK;
}

/* --- query parameters ------------------------------------------------------ */

enum rt_status srv_query_check(const struct srv_query *q, const char *const *known, struct rt_err *err)
{
    char where[64], list[128];
    size_t used = 0;
    list[0] = 0;
    for (int i = 0; known[i] && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
    if (q->overflow)
        return rt_err_set(err, RT_EINVAL, "query", "more than %d query parameters", SRV_QUERY_MAX);
    for (int i = 0; i < q->n; i++) {
        int ok = 0;
        for (int k = 0; known[k] && !ok; k++) ok = !strcmp(q->key[i], known[k]);
        /* A key that is not printable ASCII is named by what it is. */
        int plain = 1;
        for (const char *c = q->key[i]; *c && plain; c++) plain = *c > 0x20 && *c < 0x7f;
        snprintf(where, sizeof where, "query.%s", plain ? RT_QUOTE(q->key[i]) : "?");
        if (!ok)
            return rt_err_set(err, RT_EINVAL, where, "unknown parameter (known: %s)", list[0] ? list : "none");
        for (int k = 0; k < i; k++)
            if (!strcmp(q->key[k], q->key[i])) return rt_err_set(err, RT_EINVAL, where, "given twice");
    }
    return RT_OK;
}

const char *srv_query_get(const struct srv_query *q, const char *key)
{
    for (int i = 0; i < q->n; i++)
        if (!strcmp(q->key[i], key)) return q->val[i] ? q->val[i] : "";
    return NULL;
}

/* --- submissions ----------------------------------------------------------- */

static enum rt_status get_str(const cJSON *root, const char *key, int required, const char **out,
                              struct rt_err *err)
{
    char where[64];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    snprintf(where, sizeof where, "body.%s", key);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) {
        if (required) return rt_err_set(err, RT_EINVAL, where, "required");
        return RT_OK;
    }
    if (!cJSON_IsString(v)) return rt_err_set(err, RT_EINVAL, where, "expected a string");
    *out = v->valuestring;
    return RT_OK;
}

/* A name given in the query: valid UTF-8 (a %-escape may decode to any
 * byte), else RT_EINVAL at `where`. */
static enum rt_status query_text(const char *v, const char *where, struct rt_err *err)
{
    size_t bad = 0;
    if (v && !rt_utf8_valid(v, strlen(v), &bad))
        return rt_err_set(err, RT_EINVAL, where, "not valid UTF-8 (byte %zu)", bad + 1);
    return RT_OK;
}

static enum rt_status submit_query(const char *body, size_t len, const struct srv_query *q,
                                   struct srv_submit *out, struct rt_err *err)
{
    static const char *const known[] = {"robot", "profile", "name", NULL};
    enum rt_status st;
    out->raw = 1;
    out->where_robot = "query.robot";
    out->where_profile = "query.profile";
    out->where_name = "query.name";
    if ((st = srv_query_check(q, known, err)) != RT_OK) return st;
    out->robot = srv_query_get(q, "robot");
    out->profile = srv_query_get(q, "profile");
    out->name = srv_query_get(q, "name");
    if (!out->robot)
        return rt_err_set(err, RT_EINVAL, "query.robot",
                          "required: the raw BVH form is POST /v1/jobs?robot=NAME (a JSON body takes no query)");
    if ((st = query_text(out->robot, "query.robot", err)) != RT_OK ||
        (st = query_text(out->profile, "query.profile", err)) != RT_OK ||
        (st = query_text(out->name, "query.name", err)) != RT_OK)
        return st;
    out->kind = STORE_SRC_BVH;
    out->source = body;
    out->source_len = len;
    return RT_OK;
}

static enum rt_status submit_json(const char *body, size_t len, struct srv_submit *out, cJSON **rootp,
                                  struct rt_err *err)
{
    static const char *const fields[] = {"robot", "profile", "clip", "source_robot", "trajectory", "options",
                                         "name", NULL};
    enum rt_status st;
    cJSON *root = NULL;
    out->where_robot = "body.robot";
    out->where_profile = "body.profile";
    out->where_name = "body.name";
    if ((st = srv_json_parse(body, len, "body", 1, &root, err)) != RT_OK) return st;
    *rootp = root;
    if (!cJSON_IsObject(root)) return rt_err_set(err, RT_EINVAL, "body", "expected a JSON object");
    for (const cJSON *v = root->child; v; v = v->next) {
        int ok = 0;
        for (int i = 0; fields[i] && !ok; i++) ok = !strcmp(v->string, fields[i]);
        if (!ok) {
            char where[RT_ERR_WHERE_MAX];
            snprintf(where, sizeof where, "body.%s", RT_QUOTE(v->string));
            return rt_err_set(err, RT_EINVAL, where,
                              "unknown field (known: robot, profile, clip, source_robot, trajectory, options, name)");
        }
    }
    const char *clip = NULL, *traj = NULL;
    if ((st = get_str(root, "robot", 1, &out->robot, err)) != RT_OK ||
        (st = get_str(root, "profile", 0, &out->profile, err)) != RT_OK ||
        (st = get_str(root, "clip", 0, &clip, err)) != RT_OK ||
        (st = get_str(root, "source_robot", 0, &out->source_robot, err)) != RT_OK ||
        (st = get_str(root, "trajectory", 0, &traj, err)) != RT_OK ||
        (st = get_str(root, "name", 0, &out->name, err)) != RT_OK)
        return st;
    if ((clip != NULL) == (traj != NULL))
        return rt_err_set(err, RT_EINVAL, "body.clip", "give either \"clip\" (BVH text) or \"trajectory\" (CSV text)");
    out->kind = STORE_SRC_BVH;
    if (traj) {
        if (!out->source_robot) return rt_err_set(err, RT_EINVAL, "body.source_robot", "required with \"trajectory\"");
        out->kind = STORE_SRC_CSV;
        clip = traj;
    }
    out->source = clip;
    out->source_len = strlen(clip);
    st = rtg_job_options_from_json(cJSON_GetObjectItemCaseSensitive(root, "options"), "body.options", &out->opts,
                                   err);
    if (st != RT_OK) return st;
    /* A BVH clip's frame rate is its Frame Time: an fps would be ignored
     * (and would only split batches). */
    if (out->kind == STORE_SRC_BVH && (out->opts.set & (1u << RTG_JOB_FPS)))
        return rt_err_set(err, RT_EINVAL, "body.options.fps",
                          "a BVH clip carries its own Frame Time; fps is for trajectories only");
    return RT_OK;
}

enum rt_status srv_submit_parse(const char *body, size_t len, const struct srv_query *q,
                                struct srv_submit *out, cJSON **root, struct rt_err *err)
{
    memset(out, 0, sizeof *out);
    *root = NULL;
    if (q && (q->n > 0 || q->overflow)) return submit_query(body, len, q, out, err);
    return submit_json(body, len, out, root, err);
}

/* --- names and keys -------------------------------------------------------- */

enum rt_status srv_job_name(const char *given, const char *where, char out[SRV_JOB_NAME_BYTES + 1],
                            struct rt_err *err)
{
    size_t n = given ? strlen(given) : 0, bad = 0, k = 0;
    out[0] = 0;
    if (!n) {
        snprintf(out, SRV_JOB_NAME_BYTES + 1, "clip");
        return RT_OK;
    }
    if (!rt_utf8_valid(given, n, &bad))
        return rt_err_set(err, RT_EINVAL, where, "not valid UTF-8 (byte %zu)", bad + 1);
    size_t cut = rt_utf8_prefix(given, n, SRV_JOB_MAX_NAME);
    for (size_t i = 0; i < cut;) {
        size_t cl = rt_utf8_char_len(given + i, cut - i);
        unsigned char c = (unsigned char)given[i];
        /* C0 controls, DEL, and the C1 controls U+0080..U+009F (C2 80..9F). */
        int ctl = c < 0x20 || c == 0x7f || (c == 0xc2 && cl == 2 && (unsigned char)given[i + 1] < 0xa0);
        if (ctl || c == '/' || c == '\\' || c == '"') {
            out[k++] = '_';
        } else {
            memcpy(out + k, given + i, cl);
            k += cl;
        }
        i += cl;
    }
    out[k] = 0;
    if (out[0] == '.') out[0] = '_';
    return RT_OK;
}

enum rt_status srv_idem_key(const char *value, const char **key, struct rt_err *err)
{
    size_t n = value ? strlen(value) : 0, bad = 0;
    *key = NULL;
    if (!n) return RT_OK;
    if (n > SRV_MAX_KEY) return rt_err_set(err, RT_ELIMIT, "Idempotency-Key", "longer than %d bytes", SRV_MAX_KEY);
    if (!rt_utf8_valid(value, n, &bad))
        return rt_err_set(err, RT_EINVAL, "Idempotency-Key", "not valid UTF-8 (byte %zu)", bad + 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
            return rt_err_set(err, RT_EINVAL, "Idempotency-Key", "control character at byte %zu", i + 1);
    *key = value;
    return RT_OK;
}
