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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/base64.h"
#include "../base/utf8.h"
#include "../kinematics/joints.h"
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

/* The length of the run from p (before end) of bytes that a JSON string
 * holds as they are: printable ASCII but '"' and '\\'. Eight at a time
 * (a submitted clip is hundreds of kB of them): a word with none of the
 * others is skipped whole -- the byte tests (a byte below 0x20, equal to
 * '"' or '\\', or 0x80 and up) find every such byte, and a word they flag
 * is walked a byte at a time. */
static size_t plain_run(const char *p, const char *end)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    const char *s = p;
    while (end - p >= 8) {
        uint64_t v, q, bs;
        memcpy(&v, p, 8);
        q = v ^ (ones * (unsigned char)'"');
        bs = v ^ (ones * (unsigned char)'\\');
        if ((((v - ones * 0x20) & ~v) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | v) & high) break;
        p += 8;
    }
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
        p++;
    }
    return (size_t)(p - s);
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
                p += plain_run(p, end);
                if (p >= end || *p == '"') break;
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

/* cJSON's reading of `text` and the checks after it. `text` is the scanned
 * text `orig` with the `gap` bytes at orig[gap_at] cut out (gap 0: the
 * same text); errors are placed in `orig`. */
static enum rt_status json_tree(const char *text, size_t len, const char *orig, size_t orig_len, size_t gap_at,
                                size_t gap, const char *label, int line_col, cJSON **out, struct rt_err *err)
{
    const char *end = NULL;
    enum rt_status st;
    *out = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : root ? len : 0;
    if (!root) return json_fail(orig, orig_len, off < gap_at ? off : off + gap, label, line_col, err, "malformed JSON");
    while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r')) off++;
    if (off < len) {
        cJSON_Delete(root);
        return json_fail(orig, orig_len, off < gap_at ? off : off + gap, label, line_col, err,
                         "text after the JSON value");
    }
    int oom = 0;
    const char *dup = json_dup_key(root, &oom);
    if (dup || oom) {
        char msg[96];
        snprintf(msg, sizeof msg, "key '%s' given twice", RT_QUOTE(dup ? dup : ""));
        st = oom ? rt_err_set(err, RT_ENOMEM, label, "out of memory")
                 : json_fail(orig, orig_len, key_offset(orig, orig_len, dup, 2), label, line_col, err, msg);
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return RT_OK;
}

enum rt_status srv_json_parse(const char *text, size_t len, const char *label, int line_col,
                              cJSON **out, struct rt_err *err)
{
    enum rt_status st;
    *out = NULL;
    if ((st = json_scan(text, len, label, line_col, err)) != RT_OK) return st;
    return json_tree(text, len, text, len, 0, 0, label, line_col, out, err);
}

/* --- a submission's clip, lifted out of the tree ----------------------------- */

/* The clip or trajectory is nearly all of a submission's body. cJSON would
 * copy it into the tree, and the body and its copy would be held at once
 * (a submission is to cost at most twice its body: docs/api.md "Limits").
 * So it is cut out of the text cJSON reads and decoded in place in the
 * body instead: a decoded JSON string is never longer than its text. */

/* The index of the closing quote of the string opening at t[i], or >= len.
 * The scan has passed the text. */
static size_t str_close(const char *t, size_t len, size_t i)
{
    for (i++; i < len; i++) {
        i += plain_run(t + i, t + len);
        if (i >= len || t[i] == '"') break;
        if (t[i] == '\\') i++;
    }
    return i;
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
    return i;
}

/* The content t[*a, *b) of the string value of the first member of the
 * top-level object whose key is keys[k] (plain keys, no escapes); returns
 * k + 1, or 0 when there is none before the first thing that does not look
 * as expected (cJSON then reads the whole text and names what is wrong). */
static int top_string(const char *t, size_t len, const char *const *keys, size_t *a, size_t *b)
{
    size_t i = skip_ws(t, len, 0);
    if (i >= len || t[i] != '{') return 0;
    for (i++;;) {
        i = skip_ws(t, len, i);
        if (i >= len || t[i] != '"') return 0;
        size_t k0 = i + 1, k1 = str_close(t, len, i);
        if (k1 >= len) return 0;
        i = skip_ws(t, len, k1 + 1);
        if (i >= len || t[i] != ':') return 0;
        i = skip_ws(t, len, i + 1);
        if (i < len && t[i] == '"') {
            size_t v1 = str_close(t, len, i);
            if (v1 >= len) return 0;
            for (int k = 0; keys[k]; k++)
                if (k1 - k0 == strlen(keys[k]) && !memcmp(t + k0, keys[k], k1 - k0)) {
                    *a = i + 1;
                    *b = v1;
                    return k + 1;
                }
            i = v1 + 1;
        } else {
            /* Another value: up to the ',' or '}' that ends it. */
            for (int depth = 0; i < len; i++) {
                char c = t[i];
                if (c == '"') i = str_close(t, len, i);
                else if (c == '{' || c == '[') depth++;
                else if ((c == '}' || c == ']') && depth-- == 0) break;
                else if (c == ',' && depth == 0) break;
            }
        }
        i = skip_ws(t, len, i);
        if (i >= len || t[i] != ',') return 0;
        i++;
    }
}

static int hex4(const char *p, size_t n, unsigned *out)
{
    unsigned v = 0;
    if (n < 4) return 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return 0;
        v = v * 16 + (unsigned)d;
    }
    *out = v;
    return 1;
}

/* Decodes the JSON string content t[a, b) as cJSON does (the seven short
 * escapes, \uXXXX with surrogate pairs, to UTF-8) into t + a when `write`,
 * NUL-terminated; only checks when not. Returns the decoded length, or
 * (size_t)-1 with *bad the offset of an escape cJSON refuses. */
static size_t json_unescape(char *t, size_t a, size_t b, int write, size_t *bad)
{
    size_t r = a, w = a;
    while (r < b) {
        size_t run = plain_run(t + r, t + b);
        if (run) {
            if (write && w != r) memmove(t + w, t + r, run);
            w += run, r += run;
            continue;
        }
        if (t[r] != '\\') {
            if (write) t[w] = t[r];
            w++, r++;
            continue;
        }
        char e = r + 1 < b ? t[r + 1] : 0, one = 0;
        unsigned cp = 0, lo = 0;
        switch (e) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u': break;
        default: *bad = r; return (size_t)-1;
        }
        if (one) {
            if (write) t[w] = one;
            w++, r += 2;
            continue;
        }
        size_t used = 6;
        if (!hex4(t + r + 2, b - r - 2, &cp) || (cp >= 0xDC00 && cp <= 0xDFFF)) {
            *bad = r;
            return (size_t)-1;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (b - r < 12 || t[r + 6] != '\\' || t[r + 7] != 'u' || !hex4(t + r + 8, b - r - 8, &lo) ||
                lo < 0xDC00 || lo > 0xDFFF) {
                *bad = r;
                return (size_t)-1;
            }
            cp = 0x10000 + (((cp & 0x3FF) << 10) | (lo & 0x3FF));
            used = 12;
        }
        unsigned char u[4];
        int n = 0;
        if (cp < 0x80) u[n++] = (unsigned char)cp;
        else if (cp < 0x800) {
            u[n++] = (unsigned char)(0xC0 | (cp >> 6));
            u[n++] = (unsigned char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            u[n++] = (unsigned char)(0xE0 | (cp >> 12));
            u[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            u[n++] = (unsigned char)(0x80 | (cp & 0x3F));
        } else {
            u[n++] = (unsigned char)(0xF0 | (cp >> 18));
            u[n++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
            u[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            u[n++] = (unsigned char)(0x80 | (cp & 0x3F));
        }
        if (write) memcpy(t + w, u, (size_t)n);
        w += (size_t)n, r += used;
    }
    if (write) t[w] = 0;
    return w - a;
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

/* --- joint positions -------------------------------------------------------- */

/* The joint-position format a raw body's Content-Type names ("npy", "npz",
 * "csv"), or NULL: a BVH clip (no type, text/plain, anything else). The
 * media type is compared without case and without its parameters. */
static const char *ctype_joints(const char *ctype)
{
    static const char *const types[][2] = {{"application/x-npy", "npy"}, {"application/zip", "npz"},
                                           {"application/x-npz", "npz"}, {"text/csv", "csv"}};
    if (!ctype) return NULL;
    while (*ctype == ' ' || *ctype == '\t') ctype++;
    size_t n = strcspn(ctype, ";");
    while (n > 0 && (ctype[n - 1] == ' ' || ctype[n - 1] == '\t')) n--;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i][0]) == n && !strncasecmp(ctype, types[i][0], n)) return types[i][1];
    return NULL;
}

/* RT_EPARSE at `where` unless data[0..len) starts as format `fmt` says:
 * an .npz's zip signature, an .npy's magic, a CSV's NAME_x,NAME_y,NAME_z
 * header (kin_joints_parse() tells them apart by the same marks, so bytes
 * of another format would be read as what they are, not as what was
 * named). */
static enum rt_status joints_bytes_check(const char *fmt, const char *data, size_t len, const char *where,
                                         struct rt_err *err)
{
    if (!strcmp(fmt, "npz")) {
        if (len < 4 || memcmp(data, "PK\x03\x04", 4))
            return rt_err_set(err, RT_EPARSE, where, "not an .npz archive (a zip file begins with 'PK\\x03\\x04')");
    } else if (!strcmp(fmt, "npy")) {
        if (len < 6 || memcmp(data, "\x93NUMPY", 6))
            return rt_err_set(err, RT_EPARSE, where, "not an .npy array (it begins with '\\x93NUMPY')");
    } else if (!kin_joints_is_csv(data, len)) {
        return rt_err_set(err, RT_EPARSE, where,
                          "no joint-position CSV header: the first line must be NAME_x,NAME_y,NAME_z column triples");
    }
    return RT_OK;
}

/* The units and up axis given (either may be NULL) into out. */
static enum rt_status joints_units_up(const char *units, const char *up, const char *where_units,
                                      const char *where_up, struct srv_submit *out, struct rt_err *err)
{
    if (units && !rtg_units_metres(units, &out->joint_units))
        return rt_err_set(err, RT_EINVAL, where_units, "expected m, cm, mm, in or cmu, got '%.20s'", units);
    if (up && strcmp(up, "y") && strcmp(up, "z"))
        return rt_err_set(err, RT_EINVAL, where_up, "expected y or z, got '%.20s'", up);
    out->joint_up = up ? up[0] : 0;
    return RT_OK;
}

/* Appends name `v` (n bytes) and a line break to out->names_buf, whose
 * room the caller has sized. A name that is empty or holds a control
 * character (which would split it or vanish as a blank line) is RT_EINVAL
 * at `where`. */
static enum rt_status names_add(struct srv_submit *out, const char *v, size_t n, const char *where,
                                struct rt_err *err)
{
    if (!n) return rt_err_set(err, RT_EINVAL, where, "empty joint name");
    if (n > KIN_JOINTS_MAX_NAME) return rt_err_set(err, RT_ELIMIT, where, "name longer than %d bytes", KIN_JOINTS_MAX_NAME);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
            return rt_err_set(err, RT_EINVAL, where, "control character in a joint name");
    memcpy(out->names_buf + out->joint_names_len, v, n);
    out->joint_names_len += n;
    out->names_buf[out->joint_names_len++] = '\n';
    out->names_buf[out->joint_names_len] = 0;
    out->joint_names = out->names_buf;
    return RT_OK;
}

/* Room for `bytes` of names and their line breaks in out->names_buf. */
static enum rt_status names_alloc(struct srv_submit *out, size_t bytes, const char *where, struct rt_err *err)
{
    if (bytes > (size_t)KIN_JOINTS_MAX_JOINTS * (KIN_JOINTS_MAX_NAME + 2))
        return rt_err_set(err, RT_ELIMIT, where, "more than %d joint names", KIN_JOINTS_MAX_JOINTS);
    if (!(out->names_buf = malloc(bytes + 1))) return rt_err_set(err, RT_ENOMEM, where, "out of memory");
    out->names_buf[0] = 0;
    return RT_OK;
}

/* The raw form's `joint_names=A,B,C` as names one a line. */
static enum rt_status names_from_query(const char *v, struct srv_submit *out, struct rt_err *err)
{
    size_t n = strlen(v);
    enum rt_status st = names_alloc(out, n + 1, "query.joint_names", err);
    for (const char *p = v; st == RT_OK;) {
        size_t k = strcspn(p, ",");
        if ((st = names_add(out, p, k, "query.joint_names", err)) != RT_OK || !p[k]) break;
        p += k + 1;
    }
    return st;
}

/* The JSON "joint_names" array as names one a line. */
static enum rt_status names_from_json(const cJSON *arr, struct srv_submit *out, struct rt_err *err)
{
    const char *where = "body.joints.joint_names";
    char w[64];
    size_t bytes = 0;
    int n = 0;
    if (!cJSON_IsArray(arr)) return rt_err_set(err, RT_EINVAL, where, "expected an array of strings");
    for (const cJSON *e = arr->child; e; e = e->next, n++) {
        snprintf(w, sizeof w, "%s[%d]", where, n);
        if (!cJSON_IsString(e)) return rt_err_set(err, RT_EINVAL, w, "expected a string");
        if (n >= KIN_JOINTS_MAX_JOINTS) return rt_err_set(err, RT_ELIMIT, where, "more than %d joint names", KIN_JOINTS_MAX_JOINTS);
        bytes += strlen(e->valuestring) + 1;
    }
    if (!n) return rt_err_set(err, RT_EINVAL, where, "no joint names");
    enum rt_status st = names_alloc(out, bytes, where, err);
    n = 0;
    for (const cJSON *e = arr->child; e && st == RT_OK; e = e->next, n++) {
        snprintf(w, sizeof w, "%s[%d]", where, n);
        st = names_add(out, e->valuestring, strlen(e->valuestring), w, err);
    }
    return st;
}

/* The JSON body's "joints" object (see srv_submit_parse()). */
static enum rt_status submit_joints_json(cJSON *jo, struct srv_submit *out, struct rt_err *err)
{
    static const char *const keys[] = {"format", "data_base64", "text", "joint_names", "units", "up", NULL};
    enum rt_status st;
    char where[96];
    if (!cJSON_IsObject(jo))
        return rt_err_set(err, RT_EINVAL, "body.joints",
                          "expected an object {\"format\": \"npz\"|\"npy\"|\"csv\", \"data_base64\"|\"text\", ...}");
    for (const cJSON *v = jo->child; v; v = v->next) {
        int ok = 0;
        for (int i = 0; keys[i] && !ok; i++) ok = !strcmp(v->string, keys[i]);
        snprintf(where, sizeof where, "body.joints.%.60s", v->string);
        if (!ok)
            return rt_err_set(err, RT_EINVAL, where, "unknown field (known: format, data_base64, text, joint_names, units, up)");
        if (strcmp(v->string, "joint_names") && !cJSON_IsString(v))
            return rt_err_set(err, RT_EINVAL, where, "expected a string");
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(jo, "format");
    cJSON *b64 = cJSON_GetObjectItemCaseSensitive(jo, "data_base64");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(jo, "text");
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(jo, "joint_names");
    const cJSON *units = cJSON_GetObjectItemCaseSensitive(jo, "units"), *up = cJSON_GetObjectItemCaseSensitive(jo, "up");
    if (!f) return rt_err_set(err, RT_EINVAL, "body.joints.format", "required: npz, npy or csv");
    const char *fmt = !strcmp(f->valuestring, "npz") ? "npz" : !strcmp(f->valuestring, "npy") ? "npy"
                      : !strcmp(f->valuestring, "csv") ? "csv" : NULL;
    if (!fmt) return rt_err_set(err, RT_EINVAL, "body.joints.format", "expected npz, npy or csv, got '%.20s'", f->valuestring);
    if ((b64 != NULL) == (text != NULL))
        return rt_err_set(err, RT_EINVAL, "body.joints.data_base64",
                          "give either \"data_base64\" (the file's bytes) or \"text\" (CSV text)");
    if (text && strcmp(fmt, "csv"))
        return rt_err_set(err, RT_EINVAL, "body.joints.text", "text is for format csv: give an .%s as data_base64", fmt);
    if (b64) {
        size_t n = 0;
        out->where_source = "body.joints.data_base64";
        if ((st = rt_base64_decode(b64->valuestring, strlen(b64->valuestring), &n, out->where_source, err)) != RT_OK)
            return st;
        out->source = b64->valuestring;
        out->source_len = n;
    } else {
        out->where_source = "body.joints.text";
        out->source = text->valuestring;
        out->source_len = strlen(text->valuestring);
    }
    if ((st = joints_bytes_check(fmt, out->source, out->source_len, out->where_source, err)) != RT_OK) return st;
    if (!strcmp(fmt, "npy") && !names)
        return rt_err_set(err, RT_EINVAL, "body.joints.joint_names", "required for format npy: an .npy holds no names");
    if (strcmp(fmt, "npy") && names)
        return rt_err_set(err, RT_EINVAL, "body.joints.joint_names",
                          "only for format npy: an .npz and a CSV name their joints themselves");
    if (names && (st = names_from_json(names, out, err)) != RT_OK) return st;
    out->kind = STORE_SRC_JOINTS;
    out->joint_format = fmt;
    return joints_units_up(units ? units->valuestring : NULL, up ? up->valuestring : NULL, "body.joints.units",
                           "body.joints.up", out, err);
}

/* The raw form's joint-position body of format `fmt` and its parameters. */
static enum rt_status submit_query_joints(const char *body, size_t len, const struct srv_query *q, const char *fmt,
                                          struct srv_submit *out, struct rt_err *err)
{
    enum rt_status st;
    const char *fps = srv_query_get(q, "fps"), *names = srv_query_get(q, "joint_names");
    out->kind = STORE_SRC_JOINTS;
    out->joint_format = fmt;
    out->where_source = "body";
    out->source = body;
    out->source_len = len;
    if ((st = joints_bytes_check(fmt, body, len, "body", err)) != RT_OK) return st;
    if (!strcmp(fmt, "npy") && !names)
        return rt_err_set(err, RT_EINVAL, "query.joint_names",
                          "required for application/x-npy: an .npy holds no names (joint_names=A,B,...)");
    if (strcmp(fmt, "npy") && names)
        return rt_err_set(err, RT_EINVAL, "query.joint_names",
                          "only for application/x-npy: an .npz and a CSV name their joints themselves");
    if (names && (st = names_from_query(names, out, err)) != RT_OK) return st;
    if (fps && (st = rtg_job_options_set_text(&out->opts, RTG_JOB_FPS, fps, "query.fps", err)) != RT_OK) return st;
    return joints_units_up(srv_query_get(q, "units"), srv_query_get(q, "up"), "query.units", "query.up", out, err);
}

void srv_submit_free(struct srv_submit *sub)
{
    if (!sub) return;
    free(sub->names_buf);
    sub->names_buf = NULL;
    sub->joint_names = NULL;
    sub->joint_names_len = 0;
}

static enum rt_status submit_query(const char *body, size_t len, const struct srv_query *q, const char *ctype,
                                   struct srv_submit *out, struct rt_err *err)
{
    static const char *const known[] = {"robot", "profile", "name", NULL};
    static const char *const known_joints[] = {"robot", "profile", "name", "fps", "units", "up", "joint_names", NULL};
    const char *fmt = ctype_joints(ctype);
    enum rt_status st;
    out->raw = 1;
    out->where_robot = "query.robot";
    out->where_profile = "query.profile";
    out->where_name = "query.name";
    if ((st = srv_query_check(q, fmt ? known_joints : known, err)) != RT_OK) return st;
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
    if (fmt) return submit_query_joints(body, len, q, fmt, out, err);
    out->kind = STORE_SRC_BVH;
    out->source = body;
    out->source_len = len;
    return RT_OK;
}

static enum rt_status submit_json(char *body, size_t len, struct srv_submit *out, cJSON **rootp,
                                  struct rt_err *err)
{
    static const char *const fields[] = {"robot",   "profile", "clip", "source_robot", "trajectory", "joints",
                                         "options", "name",    NULL};
    static const char *const lifted_keys[] = {"clip", "trajectory", NULL};
    enum rt_status st;
    cJSON *root = NULL;
    size_t a = 0, b = 0;
    out->where_robot = "body.robot";
    out->where_profile = "body.profile";
    out->where_name = "body.name";
    if ((st = json_scan(body, len, "body", 1, err)) != RT_OK) return st;
    /* The clip's text cut out of what cJSON reads (its value there: ""). */
    int lifted = top_string(body, len, lifted_keys, &a, &b);
    if (lifted) {
        size_t n = len - (b - a);
        char *rest = malloc(n + 1);
        if (!rest) return rt_err_set(err, RT_ENOMEM, "body", "out of memory");
        memcpy(rest, body, a);
        memcpy(rest + a, body + b, len - b);
        rest[n] = 0;
        st = json_tree(rest, n, body, len, a, b - a, "body", 1, &root, err);
        free(rest);
    } else {
        st = json_tree(body, len, body, len, 0, 0, "body", 1, &root, err);
    }
    if (st != RT_OK) return st;
    *rootp = root;
    if (!cJSON_IsObject(root)) return rt_err_set(err, RT_EINVAL, "body", "expected a JSON object");
    for (const cJSON *v = root->child; v; v = v->next) {
        int ok = 0;
        for (int i = 0; fields[i] && !ok; i++) ok = !strcmp(v->string, fields[i]);
        if (!ok) {
            char where[RT_ERR_WHERE_MAX];
            snprintf(where, sizeof where, "body.%s", RT_QUOTE(v->string));
            return rt_err_set(err, RT_EINVAL, where,
                              "unknown field (known: robot, profile, clip, source_robot, trajectory, joints, options, "
                              "name)");
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
    cJSON *joints = cJSON_GetObjectItemCaseSensitive(root, "joints");
    if (joints && cJSON_IsNull(joints)) joints = NULL;
    if ((clip != NULL) + (traj != NULL) + (joints != NULL) != 1)
        return rt_err_set(err, RT_EINVAL, "body.clip",
                          "give one of \"clip\" (BVH text), \"trajectory\" (CSV text) or \"joints\" (joint positions)");
    if (lifted) {
        /* Checked first, so that an error's line and column are read from
         * the text as it came; then decoded over itself. */
        size_t bad = 0;
        if (json_unescape(body, a, b, 0, &bad) == (size_t)-1)
            return json_fail(body, len, bad, "body", 1, err, "malformed JSON: a bad escape in a string");
        json_unescape(body, a, b, 1, &bad);
        if (lifted == 1) clip = body + a;
        else traj = body + a;
    }
    out->kind = STORE_SRC_BVH;
    if (joints) {
        if (out->source_robot)
            return rt_err_set(err, RT_EINVAL, "body.source_robot", "only with \"trajectory\"");
        if ((st = submit_joints_json(joints, out, err)) != RT_OK) return st;
    } else if (traj) {
        if (!out->source_robot) return rt_err_set(err, RT_EINVAL, "body.source_robot", "required with \"trajectory\"");
        out->kind = STORE_SRC_CSV;
        clip = traj;
    }
    if (!joints) {
        out->source = clip;
        out->source_len = strlen(clip);
    }
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

enum rt_status srv_submit_parse(char *body, size_t len, const struct srv_query *q, const char *ctype,
                                struct srv_submit *out, cJSON **root, struct rt_err *err)
{
    memset(out, 0, sizeof *out);
    *root = NULL;
    /* A joint-position content type is the raw form even without a query
     * (which then lacks its robot), never JSON. */
    static const struct srv_query none = {0, 0, {0}, {0}};
    if ((q && (q->n > 0 || q->overflow)) || ctype_joints(ctype))
        return submit_query(body, len, q ? q : &none, ctype, out, err);
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
