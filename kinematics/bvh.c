/* bvh.c -- reads BVH (Biovision Hierarchy) motion capture and computes the
 * source skeleton's global joint poses, frame by frame.
 *
 * Clips arrive from users over HTTP and by the thousand from corpus runs, so
 * the reader treats every byte as hostile: it copies one line at a time into
 * a NUL-terminated buffer (the input itself need not be terminated), checks
 * every limit in bvh.h before it allocates what the limit sizes, sizes the
 * motion array from what the remaining bytes could possibly hold rather than
 * from the `Frames:` header, and reports the first problem as "name:LINE:
 * reason". It accepts what real exporters write (tabs, CRLF, blank lines,
 * "End  Site", names with spaces and colons, rotation channels before
 * position channels, leaf JOINTs without End Site) and nothing it cannot
 * give a meaning to. The conventions of the forward kinematics (channel
 * order, position channels replacing OFFSET, the up-axis conversion) are
 * stated once in bvh.h. */
#include "bvh.h"
#include "rot.h"
#include "../base/num.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BVH_PI 3.14159265358979323846

/* ------------------------------------------------------------------------ */
/* Line reader and tokenizer                                                */
/* ------------------------------------------------------------------------ */

/* Parser state. Invariants: buf holds the current line (line number `line`,
 * 1-based; 0 before the first) NUL-terminated, with tokens already returned
 * cut out by NULs; cur points into buf at the first unread byte; next is the
 * first byte of the following line in text (which starts at begin), or end. */
struct bvh_parser {
    const char *begin, *next, *end;
    const char *name;
    int line;
    char *buf;
    char *cur, *line_end; /* the current line in buf: the next byte to read, its NUL */
    struct rt_err *err;
};

static int is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Reports an error at the current line: where = "name:LINE". Bytes that are
 * not printable ASCII in the message become '?', so a quoted token can never
 * carry control characters into a log line or a JSON error body. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static enum rt_status perr(struct bvh_parser *P, enum rt_status code, const char *fmt, ...)
{
    char where[RT_ERR_WHERE_MAX], *msg = P->err ? P->err->msg : NULL;
    va_list ap;
    if (!P->err) return code;
    /* Formatted straight into the error (its arguments never point there). */
    va_start(ap, fmt);
    int n = vsnprintf(msg, RT_ERR_MSG_MAX, fmt, ap);
    va_end(ap);
    if (n < 0) msg[0] = 0;
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) *p = '?';
    snprintf(where, sizeof where, "%s:%d", P->name, P->line);
    return (enum rt_status)rt_err_set(P->err, code, where, "%s", msg);
}

/* Reads the next line into buf. Returns 1, 0 at the end of the input, or a
 * negative status (line too long, NUL byte). Lines end in LF, CRLF or CR. */
static int read_line(struct bvh_parser *P)
{
    if (P->next >= P->end) return 0;
    const char *s = P->next, *e = memchr(s, '\n', (size_t)(P->end - s)), *cr;
    if (!e) e = P->end;
    if ((cr = memchr(s, '\r', (size_t)(e - s)))) e = cr; /* the line ends at the first CR or LF */
    size_t n = (size_t)(e - s);
    if (e < P->end) {
        if (*e == '\r' && e + 1 < P->end && e[1] == '\n') e += 2;
        else e++;
    }
    P->next = e;
    P->line++;
    if (n > KIN_BVH_MAX_LINE)
        return perr(P, RT_ELIMIT, "line longer than %u bytes", (unsigned)KIN_BVH_MAX_LINE);
    if (memchr(s, 0, n)) return perr(P, RT_EPARSE, "NUL byte in line");
    memcpy(P->buf, s, n);
    P->buf[n] = 0;
    P->cur = P->buf;
    P->line_end = P->buf + n;
    return 1;
}

/* Next whitespace-separated token of the current line, NUL-terminated in
 * place, or NULL when the line has no more. */
static char *line_token(struct bvh_parser *P)
{
    char *s = P->cur;
    while (is_ws(*s)) s++;
    if (!*s) {
        P->cur = s;
        return NULL;
    }
    char *e = s;
    while (*e && !is_ws(*e)) e++;
    if (*e) *e++ = 0;
    P->cur = e;
    return s;
}

/* Next token across lines. Returns 1 with *tok set, 0 at the end of the
 * input, or a negative status from read_line. */
static int next_token(struct bvh_parser *P, char **tok)
{
    for (;;) {
        char *t = line_token(P);
        if (t) {
            *tok = t;
            return 1;
        }
        int r = read_line(P);
        if (r <= 0) return r;
    }
}

/* ASCII case-insensitive equality. */
static int eq_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return *a == *b;
}

/* Parses a whole token as a finite decimal number. strtod alone would also
 * take "nan", "inf" and hex floats, so the characters are checked first. */
static int parse_number(const char *tok, double *out)
{
    size_t n = strlen(tok);
    if (n && rt_decimal_fast(tok, tok + n, out) == n) return 1; /* strtod's bits, finite */
    const char *p = tok;
    if (*p == '+' || *p == '-') p++;
    if (!((*p >= '0' && *p <= '9') || *p == '.')) return 0;
    for (const char *q = p; *q; q++)
        if (!((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' ||
              *q == '-'))
            return 0;
    char *end;
    errno = 0;
    double v = strtod(tok, &end);
    if (end == tok || *end) return 0;
    if (!isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* The next value of a motion row: 1 with *v set, 0 when the line has no
 * more, -1 for a token that is not a number (*tok: it). A plain decimal
 * that ends where its token ends is read in place (rt_decimal_fast: the
 * bits parse_number gives it); anything else goes through line_token and
 * parse_number. */
static int row_value(struct bvh_parser *P, double *v, char **tok)
{
    char *s = P->cur;
    while (is_ws(*s)) s++;
    if (!*s) {
        P->cur = s;
        return 0;
    }
    size_t u = rt_decimal_fast(s, P->line_end, v);
    if (u && (!s[u] || is_ws(s[u]))) {
        P->cur = s + u;
        return 1;
    }
    P->cur = s;
    *tok = line_token(P);
    return parse_number(*tok, v) ? 1 : -1;
}

/* Parses a whole token of decimal digits into *out, saturating at `cap + 1`
 * so that any larger value reads as "above cap" without overflow. */
static int parse_count(const char *tok, long long cap, long long *out)
{
    long long v = 0;
    if (!*tok) return 0;
    for (const char *p = tok; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        if (v <= cap) v = v * 10 + (*p - '0');
    }
    *out = v > cap ? cap + 1 : v;
    return 1;
}

/* 1 when s is valid UTF-8 (no overlongs, surrogates or code points above
 * U+10FFFF) without control characters. */
static int name_ok(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s;
        if (c < 0x20 || c == 0x7f) return 0;
        if (c < 0x80) {
            s++;
            continue;
        }
        int n;
        unsigned cp, min;
        if ((c & 0xe0) == 0xc0) n = 1, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) n = 2, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) n = 3, cp = c & 0x07, min = 0x10000;
        else return 0;
        for (int i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (s[i] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        s += n + 1;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Hierarchy                                                                */
/* ------------------------------------------------------------------------ */

/* Growable joint list. Names are owned; chan[] entries past n_channels -1. */
struct joint_list {
    struct kin_bvh_joint *v;
    int n, cap;
};

static void joint_list_free(struct joint_list *L)
{
    for (int i = 0; i < L->n; i++) free(L->v[i].name);
    free(L->v);
    L->v = NULL;
    L->n = L->cap = 0;
}

/* Appends a zeroed joint that takes ownership of `name` (freed here on
 * failure). The caller has checked the count against its limit, which also
 * bounds the capacity. */
static enum rt_status joint_list_add(struct bvh_parser *P, struct joint_list *L, char *name,
                                     int parent, int limit, struct kin_bvh_joint **out)
{
    if (L->n == L->cap) {
        int ncap = L->cap ? L->cap * 2 : 32;
        if (ncap > limit) ncap = limit;
        size_t bytes;
        if (ncap <= L->cap || !rt_mul_size((size_t)ncap, sizeof *L->v, &bytes)) {
            free(name);
            return perr(P, RT_ELIMIT, "more than %d joints", limit);
        }
        struct kin_bvh_joint *nv = realloc(L->v, bytes);
        if (!nv) {
            free(name);
            return perr(P, RT_ENOMEM, "out of memory for joints");
        }
        L->v = nv;
        L->cap = ncap;
    }
    struct kin_bvh_joint *j = &L->v[L->n++];
    memset(j, 0, sizeof *j);
    j->name = name;
    j->parent = parent;
    for (int k = 0; k < 6; k++) j->chan[k] = -1;
    *out = j;
    return RT_OK;
}

/* Copies the rest of the current line into *out as the name of a `kw`
 * joint: trimmed, a trailing '{' removed (then *brace is 1), inner
 * whitespace runs folded to one space, checked to be UTF-8 text. The line is
 * consumed. */
static enum rt_status take_name(struct bvh_parser *P, const char *kw, char **out, int *brace)
{
    char *s = P->cur, *e = s + strlen(s);
    P->cur = e;
    *out = NULL;
    *brace = 0;
    while (is_ws(*s)) s++;
    while (e > s && is_ws(e[-1])) e--;
    if (e > s && e[-1] == '{') {
        *brace = 1;
        e--;
        while (e > s && is_ws(e[-1])) e--;
    }
    if (e == s) return perr(P, RT_EPARSE, "expected a name after %s", kw);
    if ((size_t)(e - s) >= KIN_BVH_MAX_NAME)
        return perr(P, RT_ELIMIT, "%s name longer than %d bytes", kw, KIN_BVH_MAX_NAME - 1);
    char *name = malloc((size_t)(e - s) + 1), *d = name;
    if (!name) return perr(P, RT_ENOMEM, "out of memory for a joint name");
    /* s starts with a non-space, so d[-1] exists whenever a space is met. */
    for (const char *p = s; p < e; p++) {
        if (!is_ws(*p)) *d++ = *p;
        else if (d[-1] != ' ') *d++ = ' ';
    }
    *d = 0;
    if (!name_ok((const unsigned char *)name)) {
        free(name);
        return perr(P, RT_EPARSE, "%s name is not valid UTF-8 text", kw);
    }
    *out = name;
    return RT_OK;
}

/* Expects the next token to be '{'. */
static enum rt_status expect_brace(struct bvh_parser *P, const char *after)
{
    char *tok;
    int r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file, expected '{' after %s", after);
    if (strcmp(tok, "{") != 0)
        return perr(P, RT_EPARSE, "expected '{' after %s, got '%s'", after, RT_QUOTE(tok));
    return RT_OK;
}

/* Reads the three numbers of an OFFSET. */
static enum rt_status read_offset(struct bvh_parser *P, double off[3])
{
    for (int k = 0; k < 3; k++) {
        char *tok;
        int r = next_token(P, &tok);
        if (r < 0) return (enum rt_status)r;
        if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file inside OFFSET");
        if (!parse_number(tok, &off[k]))
            return perr(P, RT_EPARSE, "OFFSET value %d is not a number: '%s'", k + 1, RT_QUOTE(tok));
        if (fabs(off[k]) > KIN_BVH_MAX_POS)
            return perr(P, RT_EINVAL, "OFFSET value %d is %g: the limit is %g file units", k + 1, off[k],
                        KIN_BVH_MAX_POS);
    }
    return RT_OK;
}

static int channel_of(const char *tok)
{
    static const char *const names[6] = {"Xposition", "Yposition", "Zposition",
                                         "Xrotation", "Yrotation", "Zrotation"};
    for (int k = 0; k < 6; k++)
        if (eq_nocase(tok, names[k])) return k;
    return -1;
}

/* Reads "n c1 .. cn" after CHANNELS into joint j, whose columns start at
 * *n_channels; advances *n_channels. */
static enum rt_status read_channels(struct bvh_parser *P, struct kin_bvh_joint *j,
                                    int *n_channels)
{
    char *tok;
    long long n;
    int r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file inside CHANNELS");
    if (!parse_count(tok, 1000, &n))
        return perr(P, RT_EPARSE, "CHANNELS count is not a number: '%s'", RT_QUOTE(tok));
    if (n != 3 && n != 6)
        return perr(P, RT_EPARSE, "CHANNELS %s: a joint has 3 or 6 channels",
                    n > 1000 ? "(huge)" : tok);
    if (*n_channels > KIN_BVH_MAX_CHANNELS - (int)n)
        return perr(P, RT_ELIMIT, "more than %d channels", KIN_BVH_MAX_CHANNELS);
    int seen = 0;
    for (int k = 0; k < (int)n; k++) {
        r = next_token(P, &tok);
        if (r < 0) return (enum rt_status)r;
        if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file inside CHANNELS");
        int ch = channel_of(tok);
        if (ch < 0) return perr(P, RT_EPARSE, "unknown channel '%s'", RT_QUOTE(tok));
        if (seen & (1 << ch)) return perr(P, RT_EPARSE, "channel '%s' listed twice", RT_QUOTE(tok));
        seen |= 1 << ch;
        j->chan[k] = ch;
    }
    j->n_channels = (int)n;
    j->chan_off = *n_channels;
    *n_channels += (int)n;
    return RT_OK;
}

/* Reads an End Site block after the words "End Site"; the End Site is a
 * child of joint index `parent`. */
static enum rt_status read_end_site(struct bvh_parser *P, const struct joint_list *joints,
                                    struct joint_list *ends, int parent)
{
    enum rt_status st = expect_brace(P, "End Site");
    if (st) return st;
    if (ends->n >= KIN_BVH_MAX_JOINTS)
        return perr(P, RT_ELIMIT, "more than %d End Sites", KIN_BVH_MAX_JOINTS);
    const char *pn = joints->v[parent].name;
    size_t len = strlen(pn);
    char *name = malloc(len + 5);
    if (!name) return perr(P, RT_ENOMEM, "out of memory for a joint name");
    memcpy(name, pn, len);
    memcpy(name + len, "_end", 5);
    struct kin_bvh_joint *e;
    st = joint_list_add(P, ends, name, parent, KIN_BVH_MAX_JOINTS, &e);
    if (st) return st;
    e->end_site = 1;
    int have_offset = 0;
    for (;;) {
        char *tok;
        int r = next_token(P, &tok);
        if (r < 0) return (enum rt_status)r;
        if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file inside End Site");
        if (strcmp(tok, "OFFSET") == 0) {
            if (have_offset) return perr(P, RT_EPARSE, "End Site has two OFFSETs");
            have_offset = 1;
            st = read_offset(P, ends->v[ends->n - 1].offset);
            if (st) return st;
        } else if (strcmp(tok, "}") == 0) {
            if (!have_offset) return perr(P, RT_EPARSE, "End Site without OFFSET");
            return RT_OK;
        } else if (strcmp(tok, "CHANNELS") == 0) {
            return perr(P, RT_EPARSE, "End Site cannot have CHANNELS");
        } else {
            return perr(P, RT_EPARSE, "unexpected '%s' in End Site", RT_QUOTE(tok));
        }
    }
}

/* Opens a ROOT (depth 0) or JOINT whose keyword was just read: takes its
 * name and its '{', appends it and pushes it on the stack. */
static enum rt_status open_joint(struct bvh_parser *P, struct joint_list *joints, int *stack,
                                 int *depth)
{
    const char *kw = *depth ? "JOINT" : "ROOT";
    char *name;
    int brace;
    if (*depth >= KIN_BVH_MAX_DEPTH)
        return perr(P, RT_ELIMIT, "joints nested deeper than %d", KIN_BVH_MAX_DEPTH);
    if (joints->n >= KIN_BVH_MAX_JOINTS)
        return perr(P, RT_ELIMIT, "more than %d joints", KIN_BVH_MAX_JOINTS);
    enum rt_status st = take_name(P, kw, &name, &brace);
    if (st) return st;
    /* At most KIN_BVH_MAX_JOINTS names, each compared once: a bounded cost. */
    for (int i = 0; i < joints->n; i++)
        if (strcmp(joints->v[i].name, name) == 0) {
            st = perr(P, RT_EINVAL, "a second joint named '%s': joint names must be unique", name);
            free(name);
            return st;
        }
    struct kin_bvh_joint *j;
    st = joint_list_add(P, joints, name, *depth ? stack[*depth - 1] : -1, KIN_BVH_MAX_JOINTS, &j);
    if (st) return st;
    stack[(*depth)++] = joints->n - 1;
    if (!brace) st = expect_brace(P, *depth == 1 ? "ROOT name" : "JOINT name");
    return st;
}

/* Reads HIERARCHY .. the root's closing '}' into joints and ends. Nesting is
 * an explicit stack of joint indices, so depth costs no C stack. A joint
 * must have its OFFSET and CHANNELS before its first child and its '}'. */
static enum rt_status read_hierarchy(struct bvh_parser *P, struct joint_list *joints,
                                     struct joint_list *ends, int *n_channels)
{
    int stack[KIN_BVH_MAX_DEPTH];
    int depth = 0;
    /* Only the joint on top of the stack can still get OFFSET or CHANNELS:
     * its ancestors already had both before it was opened. */
    int have_offset = 0, have_channels = 0;
    enum rt_status st;
    char *tok;
    int r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "empty file: expected HIERARCHY");
    if (strcmp(tok, "HIERARCHY") != 0)
        return perr(P, RT_EPARSE, "expected HIERARCHY, got '%s'", RT_QUOTE(tok));
    r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file, expected ROOT");
    if (strcmp(tok, "ROOT") != 0) return perr(P, RT_EPARSE, "expected ROOT, got '%s'", RT_QUOTE(tok));
    st = open_joint(P, joints, stack, &depth);
    if (st) return st;
    for (;;) {
        int top = stack[depth - 1];
        r = next_token(P, &tok);
        if (r < 0) return (enum rt_status)r;
        if (r == 0)
            return perr(P, RT_EPARSE, "truncated: end of file inside joint '%s' (missing '}')",
                        joints->v[top].name);
        int is_end = strcmp(tok, "EndSite") == 0;
        if (strcmp(tok, "OFFSET") == 0) {
            if (have_offset) return perr(P, RT_EPARSE, "joint has two OFFSETs");
            st = read_offset(P, joints->v[top].offset);
            if (st) return st;
            have_offset = 1;
        } else if (strcmp(tok, "CHANNELS") == 0) {
            if (have_channels) return perr(P, RT_EPARSE, "joint has two CHANNELS lines");
            st = read_channels(P, &joints->v[top], n_channels);
            if (st) return st;
            have_channels = 1;
        } else if (strcmp(tok, "JOINT") == 0 || strcmp(tok, "End") == 0 || is_end ||
                   strcmp(tok, "}") == 0) {
            if (!have_offset || !have_channels)
                return perr(P, RT_EPARSE, "joint '%s' needs OFFSET and CHANNELS before '%s'",
                            joints->v[top].name, RT_QUOTE(tok));
            if (tok[0] == 'J') {
                st = open_joint(P, joints, stack, &depth);
                if (st) return st;
                have_offset = have_channels = 0;
            } else if (tok[0] == 'E') {
                if (!is_end) {
                    r = next_token(P, &tok);
                    if (r < 0) return (enum rt_status)r;
                    if (r == 0 || strcmp(tok, "Site") != 0)
                        return perr(P, RT_EPARSE, "expected 'Site' after 'End'");
                }
                st = read_end_site(P, joints, ends, top);
                if (st) return st;
            } else if (--depth == 0) {
                return RT_OK;
            } else {
                have_offset = have_channels = 1; /* back in the parent */
            }
        } else if (strcmp(tok, "MOTION") == 0) {
            return perr(P, RT_EPARSE, "MOTION inside joint '%s' (missing '}')",
                        joints->v[top].name);
        } else if (strcmp(tok, "ROOT") == 0) {
            return perr(P, RT_EPARSE, "ROOT inside the hierarchy");
        } else {
            return perr(P, RT_EPARSE, "unknown keyword '%s' in joint '%s'", RT_QUOTE(tok),
                        joints->v[top].name);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Motion                                                                   */
/* ------------------------------------------------------------------------ */

/* Returns what follows `prefix` (ASCII case-insensitive) in tok, or NULL. */
static const char *after_prefix(const char *tok, const char *prefix)
{
    for (; *prefix; tok++, prefix++) {
        char x = *tok, y = *prefix;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return NULL;
    }
    return tok;
}

/* The value of "KEY: v" where KEY: was just read as `tok` (the value may be
 * glued to it, "Frames:12", or be the next token). */
static enum rt_status key_value(struct bvh_parser *P, const char *tok, const char *prefix,
                                const char **value)
{
    const char *v = after_prefix(tok, prefix);
    if (v && !*v) {
        char *t;
        int r = next_token(P, &t);
        if (r < 0) return (enum rt_status)r;
        if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file after '%s'", prefix);
        v = t;
    }
    *value = v;
    return RT_OK;
}

/* Reads MOTION, Frames: and Frame Time:, which must end its line. */
static enum rt_status read_motion_header(struct bvh_parser *P, int *declared, double *frame_time)
{
    char *tok;
    const char *v;
    long long n;
    enum rt_status st;
    int r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file before MOTION");
    if (strcmp(tok, "ROOT") == 0)
        return perr(P, RT_EPARSE, "a second ROOT: only one hierarchy is supported");
    if (strcmp(tok, "MOTION") != 0)
        return perr(P, RT_EPARSE, "expected MOTION after the hierarchy, got '%s'", RT_QUOTE(tok));

    r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file, expected 'Frames:'");
    if (!after_prefix(tok, "Frames:"))
        return perr(P, RT_EPARSE, "expected 'Frames:', got '%s'", RT_QUOTE(tok));
    st = key_value(P, tok, "Frames:", &v);
    if (st) return st;
    if (!parse_count(v, KIN_BVH_MAX_FRAMES, &n))
        return perr(P, RT_EPARSE, "Frames: must be a non-negative integer, got '%s'", RT_QUOTE(v));
    if (n > KIN_BVH_MAX_FRAMES)
        return perr(P, RT_ELIMIT, "Frames: %s exceeds the limit of %d", RT_QUOTE(v), KIN_BVH_MAX_FRAMES);
    *declared = (int)n;

    r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0) return perr(P, RT_EPARSE, "truncated: end of file, expected 'Frame Time:'");
    if (!eq_nocase(tok, "Frame"))
        return perr(P, RT_EPARSE, "expected 'Frame Time:', got '%s'", RT_QUOTE(tok));
    r = next_token(P, &tok);
    if (r < 0) return (enum rt_status)r;
    if (r == 0 || !after_prefix(tok, "Time:"))
        return perr(P, RT_EPARSE, "expected 'Frame Time:'");
    st = key_value(P, tok, "Time:", &v);
    if (st) return st;
    if (!parse_number(v, frame_time))
        return perr(P, RT_EPARSE, "Frame Time: expected a number, got '%s'", RT_QUOTE(v));
    if (!(*frame_time > 0.0))
        return perr(P, RT_EPARSE, "Frame Time must be positive, got '%s'", RT_QUOTE(v));
    if (*frame_time < KIN_BVH_MIN_FRAME_TIME || *frame_time > KIN_BVH_MAX_FRAME_TIME)
        return perr(P, RT_EINVAL, "Frame Time %g s is outside [%g, %g] s", *frame_time,
                    KIN_BVH_MIN_FRAME_TIME, KIN_BVH_MAX_FRAME_TIME);
    tok = line_token(P);
    if (tok) return perr(P, RT_EPARSE, "unexpected '%s' after Frame Time", RT_QUOTE(tok));
    return RT_OK;
}

/* Reads the motion rows: every non-blank line left, each exactly nc numbers.
 * The array grows geometrically from min(declared, what the remaining bytes
 * can hold): a row of nc numbers takes at least 2*nc - 1 bytes plus a line
 * end, so a lying `Frames:` header cannot make it allocate more than the
 * input could fill. With `offs` the rows are checked one at a time in a
 * one-row buffer and *offs gets each row's byte offset from P->begin
 * instead (*out stays NULL). */
static enum rt_status read_rows(struct bvh_parser *P, const struct joint_list *joints, int nc,
                                int declared, double **out, uint32_t **offs, int *n_rows)
{
    static const char *const chan_names[6] = {"Xposition", "Yposition", "Zposition",
                                              "Xrotation", "Yrotation", "Zrotation"};
    size_t remaining = (size_t)(P->end - P->next);
    size_t bound = (remaining + 1) / (2 * (size_t)nc - 1), cap = 0, bytes;
    double *m = NULL;
    uint32_t *at = NULL;
    int rows = 0;
    enum rt_status st = RT_OK;
    /* col_joint[k]: the joint whose channel column k is (for the bounds). */
    int *col_joint = malloc((size_t)nc * sizeof *col_joint);
    if (bound > KIN_BVH_MAX_FRAMES) bound = KIN_BVH_MAX_FRAMES;
    *out = NULL;
    if (offs) *offs = NULL;
    *n_rows = 0;
    if (!col_joint) return perr(P, RT_ENOMEM, "out of memory for %d channels", nc);
    if (offs && !(m = malloc((size_t)nc * sizeof *m))) {
        free(col_joint);
        return perr(P, RT_ENOMEM, "out of memory for %d channels", nc);
    }
    for (int i = 0; i < joints->n; i++)
        for (int k = 0; k < joints->v[i].n_channels; k++) col_joint[joints->v[i].chan_off + k] = i;
    for (;;) {
        size_t line_at = (size_t)(P->next - P->begin);
        int r = read_line(P);
        if (r < 0) {
            st = (enum rt_status)r;
            goto fail;
        }
        if (r == 0) break;
        while (is_ws(*P->cur)) P->cur++;
        if (!*P->cur) continue; /* a blank line */
        if ((size_t)rows == cap) {
            if (cap >= KIN_BVH_MAX_FRAMES) {
                st = perr(P, RT_ELIMIT, "more than %d motion rows", KIN_BVH_MAX_FRAMES);
                goto fail;
            }
            size_t ncap = cap ? cap * 2 : ((size_t)declared ? (size_t)declared : 64);
            if (ncap > bound) ncap = bound;
            if (ncap <= cap) ncap = cap + 1;
            if (offs) {
                uint32_t *na = realloc(at, ncap * sizeof *at);
                if (!na) {
                    st = perr(P, RT_ENOMEM, "out of memory for %zu motion rows", ncap);
                    goto fail;
                }
                at = na;
            } else {
                double *nm;
                if (!rt_mul_size(ncap, (size_t)nc, &bytes) || !rt_mul_size(bytes, sizeof *m, &bytes) ||
                    !(nm = realloc(m, bytes))) {
                    st = perr(P, RT_ENOMEM, "out of memory for %zu motion rows", ncap);
                    goto fail;
                }
                m = nm;
            }
            cap = ncap;
        }
        double *dst = offs ? m : m + (size_t)rows * (size_t)nc;
        if (offs) at[rows] = (uint32_t)line_at; /* KIN_BVH_MAX_BYTES < 2^32 */
        int k = 0;
        for (;;) {
            double v = 0;
            char *tok = NULL;
            int got = k < nc ? row_value(P, &v, &tok) : line_token(P) != NULL; /* past nc: counted only */
            if (got == 0) break;
            if (got < 0) {
                st = perr(P, RT_EPARSE, "row %d: value %d is not a number: '%s'", rows + 1,
                          k + 1, RT_QUOTE(tok));
                goto fail;
            }
            if (k < nc) {
                dst[k] = v;
                const struct kin_bvh_joint *j = &joints->v[col_joint[k]];
                int ch = j->chan[k - j->chan_off], rot = ch >= KIN_XROT;
                double lim = rot ? KIN_BVH_MAX_ANGLE : KIN_BVH_MAX_POS;
                if (fabs(dst[k]) > lim) {
                    st = perr(P, RT_EINVAL, "row %d: value %d (%s of '%s') is %g%s: the limit is %g%s",
                              rows + 1, k + 1, chan_names[ch], j->name, dst[k], rot ? " degrees" : "", lim,
                              rot ? "" : " file units");
                    goto fail;
                }
            }
            k++;
        }
        if (k != nc) {
            st = perr(P, RT_EPARSE, "row %d has %d values, expected %d", rows + 1, k, nc);
            goto fail;
        }
        rows++;
    }
    if (rows < declared) {
        st = perr(P, RT_EPARSE, "truncated: Frames: %d declared, %d rows", declared, rows);
        goto fail;
    }
    if (offs) {
        free(m);
        m = NULL;
        if (rows == 0) {
            free(at);
            at = NULL;
        } else if ((size_t)rows < cap) {
            uint32_t *na = realloc(at, (size_t)rows * sizeof *at);
            if (na) at = na;
        }
        *offs = at;
    } else if (rows == 0) {
        free(m);
        m = NULL;
    } else if ((size_t)rows < cap) {
        double *nm = realloc(m, (size_t)rows * (size_t)nc * sizeof *m);
        if (nm) m = nm;
    }
    free(col_joint);
    *out = m;
    *n_rows = rows;
    return RT_OK;
fail:
    free(col_joint);
    free(m);
    free(at);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Clip                                                                     */
/* ------------------------------------------------------------------------ */

/* Parses a whole clip (contract in bvh.h). The pieces own their memory until
 * the end: on any failure everything read so far is freed and *out stays
 * NULL; on success the joint and End Site lists are moved into one array. */
static enum rt_status parse_clip(const char *text, size_t len, const char *name, int borrow,
                                 struct kin_clip **out, struct rt_err *err)
{
    struct bvh_parser P;
    struct joint_list joints = {0}, ends = {0};
    struct kin_clip *c = NULL;
    double *motion = NULL;
    uint32_t *row_at = NULL;
    int n_channels = 0, declared = 0, rows = 0;
    double frame_time = 0.0;
    size_t bytes;
    enum rt_status st;

    assert(out);
    *out = NULL;
    memset(&P, 0, sizeof P);
    P.name = name && name[0] ? name : "bvh";
    P.err = err;
    if (len > KIN_BVH_MAX_BYTES)
        return rt_err_set(err, RT_ELIMIT, P.name, "clip larger than %u bytes",
                          (unsigned)KIN_BVH_MAX_BYTES);
    if (!text) text = "";
    P.begin = text;
    P.next = text;
    P.end = text + len;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) P.next += 3;
    P.buf = malloc((len < KIN_BVH_MAX_LINE ? len : KIN_BVH_MAX_LINE) + 1);
    if (!P.buf) return rt_err_set(err, RT_ENOMEM, P.name, "out of memory");
    P.buf[0] = 0;
    P.cur = P.buf;

    st = read_hierarchy(&P, &joints, &ends, &n_channels);
    if (st) goto fail;
    st = read_motion_header(&P, &declared, &frame_time);
    if (st) goto fail;
    st = read_rows(&P, &joints, n_channels, declared, &motion, borrow ? &row_at : NULL, &rows);
    if (st) goto fail;

    c = calloc(1, sizeof *c);
    if (!c || !rt_mul_size((size_t)(joints.n + ends.n), sizeof *c->joints, &bytes) ||
        !(c->joints = malloc(bytes))) {
        st = perr(&P, RT_ENOMEM, "out of memory for the clip");
        goto fail;
    }
    /* The names move into the clip; the lists keep only their arrays. */
    memcpy(c->joints, joints.v, (size_t)joints.n * sizeof *c->joints);
    if (ends.n) memcpy(c->joints + joints.n, ends.v, (size_t)ends.n * sizeof *c->joints);
    c->n_joints = joints.n;
    c->n_end_sites = ends.n;
    c->n_channels = n_channels;
    c->n_frames = rows;
    c->declared_frames = declared;
    c->frame_time = frame_time;
    c->motion = motion;
    if (borrow) {
        c->text = text;
        c->text_len = len;
        c->row_at = row_at;
    }
    if (rows > declared)
        snprintf(c->warning, sizeof c->warning, "Frames: %d declared, %d rows read; using %d",
                 declared, rows, rows);
    free(joints.v);
    free(ends.v);
    free(P.buf);
    *out = c;
    return RT_OK;
fail:
    if (c) free(c->joints);
    free(c);
    free(motion);
    free(row_at);
    joint_list_free(&ends);
    joint_list_free(&joints);
    free(P.buf);
    return st;
}

enum rt_status kin_bvh_parse(const char *text, size_t len, const char *name,
                             struct kin_clip **out, struct rt_err *err)
{
    return parse_clip(text, len, name, 0, out, err);
}

enum rt_status kin_bvh_parse_borrowed(const char *text, size_t len, const char *name,
                                      struct kin_clip **out, struct rt_err *err)
{
    return parse_clip(text, len, name, 1, out, err);
}

/* Reads `path` whole (rt_read_file refuses more than KIN_BVH_MAX_BYTES) and
 * parses it under the path as given, so that errors name the file the user
 * typed; a path too long for rt_err's `where` (which must keep ":LINE") is
 * shortened to its base name. The daemon parses bodies with its own label. */
enum rt_status kin_bvh_load(const char *path, struct kin_clip **out, struct rt_err *err)
{
    char *text = NULL;
    size_t len = 0;
    assert(path && out);
    *out = NULL;
    enum rt_status st = rt_read_file(path, KIN_BVH_MAX_BYTES, &text, &len, err);
    if (st) return st;
    const char *base = strrchr(path, '/');
    st = kin_bvh_parse(text, len, strlen(path) <= 80 || !base ? path : base + 1, out, err);
    free(text);
    return st;
}

/* Frees a clip and every name in it; NULL does nothing. */
void kin_clip_free(struct kin_clip *c)
{
    if (!c) return;
    if (c->joints)
        for (int i = 0; i < c->n_joints + c->n_end_sites; i++) free(c->joints[i].name);
    free(c->joints);
    free(c->motion);
    free(c->row_at);
    free(c);
}

/* Row `frame` of a borrowed clip, parsed again from its text: read_rows()
 * checked it (nc numbers, each a whole token parse_number() takes), so every
 * token is read as it was then. A token is copied out before strtod, since
 * the text need not be NUL-terminated; tokens longer than the buffer (only
 * zero-padded numbers reach that) take a heap copy. */
static void borrowed_row(const struct kin_clip *c, int frame, double *row)
{
    const char *p = c->text + c->row_at[frame], *end = c->text + c->text_len;
    char tok[128];
    for (int k = 0; k < c->n_channels; k++) {
        while (p < end && is_ws(*p)) p++;
        const char *s = p;
        while (p < end && !is_ws(*p) && *p != '\n') p++;
        size_t n = (size_t)(p - s);
        char *buf = n < sizeof tok ? tok : malloc(n + 1);
        row[k] = 0.0;
        if (!buf) continue; /* unreachable in practice: a token of 128+ bytes and no memory */
        memcpy(buf, s, n);
        buf[n] = 0;
        if (!parse_number(buf, &row[k])) row[k] = 0.0;
        if (buf != tok) free(buf);
    }
}

void kin_clip_row(const struct kin_clip *c, int frame, double *row)
{
    assert(c && row && frame >= 0 && frame < c->n_frames);
    if (c->motion) memcpy(row, c->motion + (size_t)frame * (size_t)c->n_channels, (size_t)c->n_channels * sizeof *row);
    else borrowed_row(c, frame, row);
}

/* Linear search: clips have at most 2 * KIN_BVH_MAX_JOINTS entries and
 * callers look names up once per clip, not per frame. */
int kin_clip_find_joint(const struct kin_clip *c, const char *name)
{
    if (!c || !name) return -1;
    for (int i = 0; i < c->n_joints + c->n_end_sites; i++)
        if (strcmp(c->joints[i].name, name) == 0) return i;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Forward kinematics                                                       */
/* ------------------------------------------------------------------------ */

/* The rotation about axis 0 (x), 1 (y) or 2 (z) with cosine c and sine s. */
static void rot_axis(int axis, double c, double s, double *R)
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I, sizeof I);
    switch (axis) {
    case 0: R[4] = c; R[5] = -s; R[7] = s; R[8] = c; break;
    case 1: R[0] = c; R[2] = s; R[6] = -s; R[8] = c; break;
    default: R[0] = c; R[1] = -s; R[3] = s; R[4] = c; break;
    }
}

/* R = R Rk, Rk the rotation about `axis` with cosine c and sine s
 * (rot_axis's matrix): kin_mat_mul's products and sums, less the terms
 * with Rk's exact zeros (a sum only loses a zero, so a result can differ
 * only in the sign of a zero) and its exact ones (R[i] * 1 is R[i]). */
static void mul_axis(double *R, int axis, double c, double s)
{
    for (int i = 0; i < 3; i++) {
        double *r = R + 3 * i, a, b;
        switch (axis) {
        case 0: a = r[1] * c + r[2] * s; b = r[1] * -s + r[2] * c; r[1] = a; r[2] = b; break;
        case 1: a = r[0] * c + r[2] * -s; b = r[0] * s + r[2] * c; r[0] = a; r[2] = b; break;
        default: a = r[0] * c + r[1] * s; b = r[0] * -s + r[1] * c; r[0] = a; r[1] = b; break;
        }
    }
}

/* Local rotation R and translation t of joint j in motion row `row` (NULL:
 * the rest pose). Bvh.h "Conventions": rotations compose in channel order,
 * intrinsically; a position channel replaces its OFFSET component. The
 * first rotation is its own matrix (the identity times it), each next one
 * multiplies in with mul_axis. Returns 0 when R is the identity (no
 * rotation channel, or the rest pose). */
static int joint_local(const struct kin_bvh_joint *j, const double *row, double *R, double *t)
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    int first = 1;
    memcpy(R, I, sizeof I);
    memcpy(t, j->offset, 3 * sizeof *t);
    if (!row) return 0;
    for (int k = 0; k < j->n_channels; k++) {
        double v = row[j->chan_off + k];
        int ch = j->chan[k];
        if (ch < KIN_XROT) {
            t[ch] = v;
        } else {
            double a = v * (BVH_PI / 180.0), c = cos(a), s = sin(a);
            if (first) rot_axis(ch - KIN_XROT, c, s, R);
            else mul_axis(R, ch - KIN_XROT, c, s);
            first = 0;
        }
    }
    return !first;
}

/* Unconverted global poses of every joint and End Site for one motion row
 * (NULL: rest pose). Parents precede children in joints[], so one pass in
 * order suffices. */
static void clip_pose(const struct kin_clip *c, const double *row, double *pos, double *rot)
{
    int n_all = c->n_joints + c->n_end_sites;
    for (int i = 0; i < n_all; i++) {
        const struct kin_bvh_joint *j = &c->joints[i];
        double R[9], t[3];
        int rotated = joint_local(j, row, R, t);
        if (j->parent < 0) {
            memcpy(rot + 9 * i, R, sizeof R);
            memcpy(pos + 3 * i, t, sizeof t);
        } else {
            const double *Rp = rot + 9 * j->parent, *pp = pos + 3 * j->parent;
            if (rotated) kin_mat_mul(Rp, R, rot + 9 * i);
            else memcpy(rot + 9 * i, Rp, sizeof R); /* Rp I: Rp, but for the sign of a zero */
            for (int a = 0; a < 3; a++)
                pos[3 * i + a] = pp[a] + (Rp[3 * a] * t[0] + Rp[3 * a + 1] * t[1] + Rp[3 * a + 2] * t[2]);
        }
    }
}

/* Applies p = scale A p and R = A R A^T in place (bvh.h struct
 * kin_bvh_convert; A = Rx(+90 deg) for up 'y', identity for up 'z'). A's
 * entries are 0 and +-1, so A R A^T moves R's entries and negates some:
 * what the two products give, but for the sign of a zero. */
static void convert_pose(int n_all, const struct kin_bvh_convert *conv, double *pos, double *rot)
{
    double s = conv ? conv->scale : 1.0;
    int y_up = conv && conv->up == 'y';
    for (int i = 0; i < n_all; i++) {
        double *p = pos + 3 * i;
        if (y_up) {
            double y = p[1], z = p[2];
            p[1] = -z;
            p[2] = y;
            double *R = rot + 9 * i, m[9];
            memcpy(m, R, sizeof m);
            R[0] = m[0]; R[1] = -m[2]; R[2] = m[1];
            R[3] = -m[6]; R[4] = m[8]; R[5] = -m[7];
            R[6] = m[3]; R[7] = -m[5]; R[8] = m[4];
        }
        p[0] *= s;
        p[1] *= s;
        p[2] *= s;
    }
}

/* Global poses of one frame (contract in bvh.h): one pass in parent order,
 * then the conversion. The preconditions are the caller's; they are asserted,
 * never derived from input. */
void kin_clip_global(const struct kin_clip *c, int frame, const struct kin_bvh_convert *conv,
                     double *pos, double *rot)
{
    assert(c && pos && rot);
    assert(frame >= 0 && frame < c->n_frames);
    assert(!conv || conv->up == 'y' || conv->up == 'z');
    if (c->motion) {
        clip_pose(c, c->motion + (size_t)frame * (size_t)c->n_channels, pos, rot);
    } else {
        double row[KIN_BVH_MAX_CHANNELS];
        borrowed_row(c, frame, row);
        clip_pose(c, row, pos, rot);
    }
    convert_pose(c->n_joints + c->n_end_sites, conv, pos, rot);
}

/* The known units by standing height (ranges in bvh.h
 * kin_units_from_height; keep the two in step). */
const char *kin_units_from_height(double h, double *scale)
{
    static const struct {
        double lo, hi, scale;
        const char *name;
    } units[] = {
        {1.0, 2.5, 1.0, "m"},
        {10.0, 40.0, KIN_BVH_CMU_SCALE, "cmu"},
        {55.0, 75.0, 0.0254, "in"},
        {100.0, 250.0, 0.01, "cm"},
        {1000.0, 2500.0, 0.001, "mm"},
    };
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        if (h >= units[u].lo && h <= units[u].hi) {
            *scale = units[u].scale;
            return units[u].name;
        }
    return NULL;
}

/* Unit and up-axis guess from the frame-0 extent (heuristic and ranges in
 * bvh.h). Leaves *out untouched on failure. */
enum rt_status kin_clip_detect_units(const struct kin_clip *c, struct kin_bvh_convert *out,
                                     double *height_m, struct rt_err *err)
{
    int n_all = c->n_joints + c->n_end_sites;
    double *pos = NULL, *rot = NULL, lo[3], hi[3], ext[3], scale;
    size_t bp, br;
    enum rt_status st = RT_OK;
    if (!rt_mul_size((size_t)n_all, 3 * sizeof *pos, &bp) ||
        !rt_mul_size((size_t)n_all, 9 * sizeof *rot, &br) || !(pos = malloc(bp)) ||
        !(rot = malloc(br))) {
        st = rt_err_set(err, RT_ENOMEM, "units", "out of memory");
        goto done;
    }
    double *row = c->n_frames > 0 ? malloc((size_t)c->n_channels * sizeof *row) : NULL;
    if (c->n_frames > 0 && !row) {
        st = rt_err_set(err, RT_ENOMEM, "units", "out of memory");
        goto done;
    }
    if (row) kin_clip_row(c, 0, row);
    clip_pose(c, row, pos, rot);
    free(row);
    for (int a = 0; a < 3; a++) lo[a] = hi[a] = pos[a];
    for (int i = 1; i < n_all; i++)
        for (int a = 0; a < 3; a++) {
            if (pos[3 * i + a] < lo[a]) lo[a] = pos[3 * i + a];
            if (pos[3 * i + a] > hi[a]) hi[a] = pos[3 * i + a];
        }
    for (int a = 0; a < 3; a++) ext[a] = hi[a] - lo[a];
    int up = ext[1] >= ext[2] ? 1 : 2;
    double h = ext[up];
    if (kin_units_from_height(h, &scale)) {
        out->scale = scale;
        out->up = up == 1 ? 'y' : 'z';
        if (height_m) *height_m = h * scale;
        goto done;
    }
    st = rt_err_set(err, RT_EINVAL, "units",
                    "cannot guess the unit: the skeleton spans %.4g units along %c in frame 0 "
                    "(known: m 1-2.5, CMU 10-40, in 55-75, cm 100-250, mm 1000-2500)",
                    h, up == 1 ? 'y' : 'z');
done:
    free(rot);
    free(pos);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                  */
/* ------------------------------------------------------------------------ */

/* The `retarget inspect` summary (fields in bvh.h). The text is copied out of
 * cJSON's allocator so that the caller frees it with plain free(). */
char *kin_clip_inspect_json(const struct kin_clip *c)
{
    char num[40], *text = NULL, *copy = NULL;
    cJSON *o = cJSON_CreateObject(), *names;
    if (!o) return NULL;
    rt_format_double(c->frame_time, num, sizeof num);
    if (!cJSON_AddStringToObject(o, "kind", "clip") ||
        !cJSON_AddNumberToObject(o, "frames", c->n_frames) ||
        !cJSON_AddNumberToObject(o, "declared_frames", c->declared_frames) ||
        !cJSON_AddRawToObject(o, "frame_time", num) ||
        !cJSON_AddNumberToObject(o, "joints", c->n_joints) ||
        !cJSON_AddNumberToObject(o, "end_sites", c->n_end_sites) ||
        !cJSON_AddNumberToObject(o, "channels", c->n_channels) ||
        !(names = cJSON_AddArrayToObject(o, "joint_names")))
        goto done;
    for (int i = 0; i < c->n_joints; i++) {
        cJSON *s = cJSON_CreateString(c->joints[i].name);
        if (!s) goto done;
        cJSON_AddItemToArray(names, s);
    }
    if (c->warning[0] && !cJSON_AddStringToObject(o, "warning", c->warning)) goto done;
    text = cJSON_PrintUnformatted(o);
    if (text) {
        size_t n = strlen(text) + 1;
        copy = malloc(n);
        if (copy) memcpy(copy, text, n);
    }
done:
    if (text) cJSON_free(text);
    cJSON_Delete(o);
    return copy;
}
