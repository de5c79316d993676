/* mjcf.c -- the MJCF (MuJoCo XML) reader: builds the same struct kin_robot
 * that urdf.c builds from URDF (robot.h), so that the solver, FK and every
 * tool see one model whatever the description was.
 *
 * Reading happens in two stages. Stage one streams the XML with expat, and
 * every <include>d file spliced in place of its <include> element as
 * MuJoCo does, into a small element tree that keeps only what the model
 * needs: <mujoco model>, <compiler>, <default> classes with their <joint>
 * and <geom>, and <worldbody> with its <body>, <frame>, <joint>,
 * <freejoint> and <geom>. Everything else (assets, actuators, sensors,
 * equality constraints, contacts, keyframes, sites, inertials, cameras,
 * lights) is skipped unread. Stage two needs the whole tree, because a
 * <compiler> or a <default> may come after the bodies it changes.
 *
 * How MJCF maps onto the model:
 *  - The root link is the one body directly in <worldbody> (through
 *    <frame>s), or, when there are several, the one with a free joint: the
 *    others are scenery welded to the world and are dropped, as are world
 *    geoms. Its free joint (<freejoint>, or type="free") is the floating
 *    base every model has, and is skipped; so is its initial placement
 *    (pos/quat), since the root's pose is the base pose. A free joint below
 *    the top is refused. A root body with hinge or slide joints hangs below
 *    an added root link "world".
 *  - Every other body is one link whose frame is exactly the MJCF body
 *    frame. Without a joint it is fixed to its parent (fixed joint
 *    "BODY__fixed"). MuJoCo applies a body's joints in order, each hinge
 *    turning about an axis through its `pos` in the body frame moved by
 *    the joints before it. That is modelled exactly as a chain of links:
 *    each joint J but the last moves an intermediate link "BODY__J" (no
 *    geometry, an origin offset only) whose origin sits at the joint's
 *    anchor; the last joint moves the body's own link; and when that last
 *    hinge has a nonzero pos, it too moves a link "BODY__J" and a fixed
 *    joint "BODY__anchor" shifts the body's link back by -pos, so that the
 *    body's link is the body frame. Joints keep the file's names. A body
 *    with one joint at pos 0 (every converted URDF) needs none of this. Unnamed bodies are "bodyN" (N is MuJoCo's body id), unnamed
 *    joints "BODY__jointK" (K counts the body's joints from 0).
 *  - Coordinates are the hinge and slide joints in file order: MuJoCo's
 *    qpos order without the free joint's seven entries.
 *  - Limits follow MuJoCo: limited="true|false|auto"; auto means limited
 *    when a range is given (range != "0 0") and <compiler autolimits>
 *    (default true, as in MuJoCo >= 2.3.3) is on, and is an error when it
 *    is off. A hinge range is in degrees unless <compiler angle="radian">
 *    (MuJoCo's default is degree); a slide range is a length. An unlimited
 *    hinge is continuous; an unlimited slide is prismatic without limits.
 *    Effort is the larger magnitude of actuatorfrcrange (0 when absent);
 *    velocity limits do not exist in MJCF and stay 0.
 *  - Orientation: quat (w x y z), euler (with <compiler eulerseq>, default
 *    "xyz"; lower case turns with the frame, upper case about fixed axes),
 *    axisangle, xyaxes, zaxis, at most one per element, degrees as above.
 *  - Defaults: the unnamed top-level <default> is class "main"; nested
 *    classes inherit from their parent; an element takes class= or else the
 *    childclass of the nearest enclosing body or frame, else main. Joint
 *    and geom attributes come from defaults (each class copies its parent
 *    when it is defined, as MuJoCo does).
 *  - Geoms of kept bodies are stored per link (struct kin_geom); a geom
 *    size with fewer than 3 numbers keeps the rest from its class.
 * Ignored: <equality> (a joint coupled by <equality joint joint1 joint2
 * polycoef> stays an independent coordinate, where URDF would say
 * <mimic>), mesh files, every physical attribute. Refused with a message
 * that names the element and line: ball joints (no single axis), a nonzero
 * joint ref (it would shift the coordinate's zero), <replicate>,
 * <composite>, <flexcomp>, <attach> (they create bodies this reader does
 * not see), <compiler coordinate="global">, a DOCTYPE, and <include> when
 * the caller gives no folder (the daemon).
 *
 * Input is untrusted: the main file and its includes together stay within
 * KIN_URDF_MAX_BYTES, element counts and nesting within the KIN_MJCF_*
 * limits and KIN_MAX_LINKS / KIN_MAX_GEOMS, names within KIN_MAX_NAME, all
 * checked before what they size is allocated; numbers must be finite and
 * complete; nothing in the input reaches an assert. */
#include "robot.h"
#include "rot.h"

#include <assert.h>
#include <expat.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MJ_PI 3.14159265358979323846
#define MJ_EPS 1e-14 /* MuJoCo's mjEPS: shorter axes are refused */

/* ---------------------------------------------------------------------------
 * Stage one: the element tree. */

enum mj_tag {
    MJ_MUJOCO,
    MJ_COMPILER,
    MJ_DEFAULT,
    MJ_WORLDBODY,
    MJ_BODY,
    MJ_FRAME,
    MJ_JOINT,
    MJ_FREEJOINT,
    MJ_GEOM
};

static const char *const tag_names[] = {"mujoco", "compiler", "default", "worldbody", "body",
                                        "frame",  "joint",    "freejoint", "geom"};

/* One kept element. Children are in file order (first .. last, linked by
 * next); attributes are attrs[attr .. attr + n_attr). */
struct mj_node {
    int tag;
    int parent, first, last, next; /* node indices, -1 for none */
    int file;                      /* index into mj_parse.files */
    long line;
    size_t attr;
    int n_attr;
    int id; /* body: MuJoCo's body id (document order from 1) */
};

struct mj_attr {
    size_t key, val; /* offsets into mj_parse.pool */
};

struct mj_parse {
    XML_Parser xp; /* the parser now running (an include's while it is read) */
    struct rt_err *err;
    int status; /* first failure; RT_OK while all is well */
    const char *base_dir;
    char *files[KIN_MJCF_MAX_FILES]; /* error labels: [0] the main file, then includes */
    char *paths[KIN_MJCF_MAX_FILES]; /* resolved include paths ([0] unused) */
    int n_files, file;               /* file: the one being read */
    int inc_depth, inc_top;          /* inc_top: the next element is an include's root */
    size_t bytes;                    /* main file and includes read so far */
    int depth;                       /* open elements on the stack */
    long skip;                       /* > 0: inside a skipped element, its nesting */
    int stack[KIN_MJCF_MAX_DEPTH];   /* per open element: the node its children join */
    struct mj_node *nodes;
    int n_nodes, cap_nodes;
    struct mj_attr *attrs;
    size_t n_attrs, cap_attrs;
    char *pool;
    size_t n_pool, cap_pool;
    int n_bodies, n_geoms, n_classes;
};

/* Errors: only the first failure is kept; later calls do nothing. */
static void mj_fail_at(struct mj_parse *ps, int code, int file, long line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static void mj_fail_at(struct mj_parse *ps, int code, int file, long line, const char *fmt, ...)
{
    char where[RT_ERR_WHERE_MAX], msg[RT_ERR_MSG_MAX];
    va_list ap;
    if (ps->status != RT_OK) return;
    ps->status = code;
    if (line > 0) snprintf(where, sizeof where, "%s:%ld", ps->files[file], line);
    else snprintf(where, sizeof where, "%s", ps->files[file]);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rt_err_set(ps->err, code, where, "%s", msg);
    if (ps->xp) XML_StopParser(ps->xp, XML_FALSE);
}

#define mj_fail(ps, code, ...) \
    mj_fail_at((ps), (code), (ps)->file, (long)XML_GetCurrentLineNumber((ps)->xp), __VA_ARGS__)

static const char *attr_get(const char **atts, const char *key)
{
    for (int i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], key) == 0) return atts[i + 1];
    return NULL;
}

/* Grows *arr (elements of `size` bytes) to hold index n, within `max`
 * elements. Returns RT_OK, RT_ELIMIT or RT_ENOMEM. */
static int grow(void **arr, int *cap, int n, size_t size, int max)
{
    size_t bytes;
    int ncap;
    void *p;
    if (n < *cap) return RT_OK;
    if (n >= max) return RT_ELIMIT;
    ncap = *cap ? *cap * 2 : 16;
    if (ncap > max) ncap = max;
    if (!rt_mul_size((size_t)ncap, size, &bytes)) return RT_ENOMEM;
    if (!(p = realloc(*arr, bytes))) return RT_ENOMEM;
    *arr = p;
    *cap = ncap;
    return RT_OK;
}

/* Appends the NUL-terminated s to the pool; its offset in *off. The pool
 * holds attribute text only, so it stays below the input size plus one
 * NUL per string. */
static int pool_add(struct mj_parse *ps, const char *s, size_t *off)
{
    size_t n = strlen(s) + 1;
    if (ps->cap_pool - ps->n_pool < n) {
        size_t ncap = ps->cap_pool ? ps->cap_pool : 4096;
        char *p;
        while (ncap - ps->n_pool < n) {
            if (ncap > ((size_t)-1) / 2) return RT_ENOMEM;
            ncap *= 2;
        }
        if (!(p = realloc(ps->pool, ncap))) return RT_ENOMEM;
        ps->pool = p;
        ps->cap_pool = ncap;
    }
    memcpy(ps->pool + ps->n_pool, s, n);
    *off = ps->n_pool;
    ps->n_pool += n;
    return RT_OK;
}

/* A new node of `tag` below `parent` (-1 for the root) with a copy of the
 * element's attributes. Returns its index, or -1 after reporting. */
static int node_add(struct mj_parse *ps, int tag, int parent, const char **atts, long line)
{
    struct mj_node *nd;
    size_t n_att = 0;
    int st = grow((void **)&ps->nodes, &ps->cap_nodes, ps->n_nodes, sizeof *ps->nodes, KIN_MJCF_MAX_ELEMENTS);
    if (st == RT_ELIMIT) {
        mj_fail(ps, RT_ELIMIT, "more than %d model elements (body, frame, joint, geom, default, ...)",
                KIN_MJCF_MAX_ELEMENTS);
        return -1;
    }
    if (st != RT_OK) goto oom;
    while (atts[2 * n_att]) n_att++;
    if (ps->cap_attrs - ps->n_attrs < n_att) {
        size_t ncap = ps->cap_attrs ? ps->cap_attrs : 64, bytes;
        void *p;
        while (ncap - ps->n_attrs < n_att) ncap *= 2; /* n_att is bounded by the input size */
        if (!rt_mul_size(ncap, sizeof *ps->attrs, &bytes) || !(p = realloc(ps->attrs, bytes))) goto oom;
        ps->attrs = p;
        ps->cap_attrs = ncap;
    }
    nd = &ps->nodes[ps->n_nodes];
    nd->tag = tag;
    nd->parent = parent;
    nd->first = nd->last = nd->next = -1;
    nd->file = ps->file;
    nd->line = line;
    nd->attr = ps->n_attrs;
    nd->n_attr = (int)n_att;
    nd->id = 0;
    for (size_t i = 0; i < n_att; i++) {
        struct mj_attr *a = &ps->attrs[ps->n_attrs + i];
        if (pool_add(ps, atts[2 * i], &a->key) != RT_OK || pool_add(ps, atts[2 * i + 1], &a->val) != RT_OK)
            goto oom;
    }
    ps->n_attrs += n_att;
    if (parent >= 0) {
        struct mj_node *pn = &ps->nodes[parent];
        if (pn->last >= 0) ps->nodes[pn->last].next = ps->n_nodes;
        else pn->first = ps->n_nodes;
        pn->last = ps->n_nodes;
    }
    return ps->n_nodes++;
oom:
    mj_fail(ps, RT_ENOMEM, "out of memory");
    return -1;
}

static void push(struct mj_parse *ps, int node)
{
    if (ps->depth >= KIN_MJCF_MAX_DEPTH) {
        mj_fail(ps, RT_ELIMIT, "elements nested deeper than %d", KIN_MJCF_MAX_DEPTH);
        return;
    }
    ps->stack[ps->depth++] = node;
}

/* Which child elements are kept: the tag, -1 to skip the element and all
 * below it, -2 for elements that make bodies we cannot see. */
static int child_tag(int ptag, const char *el)
{
    switch (ptag) {
    case MJ_MUJOCO:
        if (!strcmp(el, "compiler")) return MJ_COMPILER;
        if (!strcmp(el, "default")) return MJ_DEFAULT;
        if (!strcmp(el, "worldbody")) return MJ_WORLDBODY;
        return -1;
    case MJ_DEFAULT:
        if (!strcmp(el, "default")) return MJ_DEFAULT;
        if (!strcmp(el, "joint")) return MJ_JOINT;
        if (!strcmp(el, "geom")) return MJ_GEOM;
        return -1;
    case MJ_WORLDBODY:
    case MJ_BODY:
    case MJ_FRAME:
        if (!strcmp(el, "body")) return MJ_BODY;
        if (!strcmp(el, "frame")) return MJ_FRAME;
        if (!strcmp(el, "joint")) return MJ_JOINT;
        if (!strcmp(el, "freejoint")) return MJ_FREEJOINT;
        if (!strcmp(el, "geom")) return MJ_GEOM;
        if (!strcmp(el, "replicate") || !strcmp(el, "composite") || !strcmp(el, "flexcomp") ||
            !strcmp(el, "attach"))
            return -2;
        return -1;
    default:
        return -1;
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **atts);
static void XMLCALL on_end(void *ud, const XML_Char *el);
static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset);

/* <include file=...>: reads the file (relative to base_dir unless
 * absolute) and parses it here with the same handlers; its root element is
 * dropped and its children join the include's parent, as in MuJoCo. */
/* Reads an included file into *text; reports and fails otherwise. Its own
 * frame holds the struct rt_err, so that nested includes do not keep one
 * on the stack each (never inlined into do_include()). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static enum rt_status include_read(struct mj_parse *ps, const char *file, const char *path, char **text,
                                   size_t *len)
{
    struct rt_err e;
    rt_err_clear(&e);
    if (rt_read_file(path, KIN_URDF_MAX_BYTES - ps->bytes, text, len, &e) == RT_OK) return RT_OK;
    if (e.code == RT_ELIMIT)
        mj_fail(ps, RT_ELIMIT, "include '%s': the model and its includes exceed %u bytes", file,
                KIN_URDF_MAX_BYTES);
    else
        mj_fail(ps, e.code, "include '%s': %s", file, e.msg);
    return (enum rt_status)e.code;
}

static void do_include(struct mj_parse *ps, const char **atts)
{
    const char *file = attr_get(atts, "file");
    char *path = NULL, *text = NULL;
    size_t len = 0, n;
    XML_Parser outer = ps->xp, inner = NULL;
    int outer_file = ps->file, idx;

    if (!file || !file[0]) {
        mj_fail(ps, RT_EPARSE, "<include> without a file");
        return;
    }
    if (!ps->base_dir) {
        mj_fail(ps, RT_EPARSE, "include '%s': includes are refused here (no folder to resolve them against)",
                file);
        return;
    }
    if (ps->inc_depth >= KIN_MJCF_MAX_INCLUDE_DEPTH) {
        mj_fail(ps, RT_ELIMIT, "include '%s': includes nested deeper than %d", file,
                KIN_MJCF_MAX_INCLUDE_DEPTH);
        return;
    }
    if (ps->n_files >= KIN_MJCF_MAX_FILES) {
        mj_fail(ps, RT_ELIMIT, "include '%s': more than %d included files", file, KIN_MJCF_MAX_FILES - 1);
        return;
    }
    n = strlen(ps->base_dir) + strlen(file) + 2;
    if (!(path = malloc(n))) goto oom;
    if (file[0] == '/') snprintf(path, n, "%s", file);
    else snprintf(path, n, "%s/%s", ps->base_dir, file);
    for (int i = 1; i < ps->n_files; i++)
        if (!strcmp(ps->paths[i], path)) {
            mj_fail(ps, RT_EPARSE, "include '%s': the file is included twice (MuJoCo allows once)", file);
            free(path);
            return;
        }
    if (include_read(ps, file, path, &text, &len) != RT_OK) {
        free(path);
        return;
    }
    ps->bytes += len;
    if (!(ps->files[ps->n_files] = strdup(file))) goto oom;
    ps->paths[ps->n_files] = path; /* both freed by parse_free() from here on */
    path = NULL;
    idx = ps->n_files++;
    if (!(inner = XML_ParserCreate(NULL))) goto oom;
    XML_SetUserData(inner, ps);
    XML_SetElementHandler(inner, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(inner, on_doctype);
    ps->xp = inner;
    ps->file = idx;
    ps->inc_depth++;
    ps->inc_top = 1;
    if (XML_Parse(inner, text, (int)len, XML_TRUE) != XML_STATUS_OK && ps->status == RT_OK) {
        enum XML_Error code = XML_GetErrorCode(inner);
        mj_fail(ps, code == XML_ERROR_NO_MEMORY ? RT_ENOMEM : RT_EPARSE, "XML: %s", XML_ErrorString(code));
    }
    ps->inc_depth--;
    ps->inc_top = 0;
    ps->xp = outer;
    ps->file = outer_file;
    XML_ParserFree(inner);
    free(text);
    if (ps->status != RT_OK) XML_StopParser(outer, XML_FALSE);
    return;
oom:
    free(path);
    free(text);
    mj_fail(ps, RT_ENOMEM, "out of memory");
}

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **atts)
{
    struct mj_parse *ps = ud;
    long line;
    int parent, tag, node;
    if (ps->status != RT_OK) return;
    if (ps->skip) {
        ps->skip++;
        return;
    }
    line = (long)XML_GetCurrentLineNumber(ps->xp);
    if (ps->inc_top) { /* an included file's root: its children take its place */
        ps->inc_top = 0;
        push(ps, ps->stack[ps->depth - 1]);
        return;
    }
    if (ps->depth == 0) {
        if (strcmp(el, "mujoco") != 0) {
            mj_fail(ps, RT_EPARSE, "root element is <%s>, expected <mujoco>", RT_QUOTE(el));
            return;
        }
        if ((node = node_add(ps, MJ_MUJOCO, -1, atts, line)) >= 0) push(ps, node);
        return;
    }
    parent = ps->stack[ps->depth - 1];
    tag = child_tag(ps->nodes[parent].tag, el);
    if (!strcmp(el, "include") && ps->nodes[parent].tag <= MJ_FRAME) {
        do_include(ps, atts);
        ps->skip = 1; /* the include element itself: its end tag */
        return;
    }
    if (tag == -2) {
        mj_fail(ps, RT_EPARSE, "<%s> is not supported (it makes bodies this reader does not expand)", RT_QUOTE(el));
        return;
    }
    if (tag < 0) {
        ps->skip = 1;
        return;
    }
    if (tag == MJ_BODY && ++ps->n_bodies > KIN_MAX_LINKS) {
        mj_fail(ps, RT_ELIMIT, "more than %d bodies", KIN_MAX_LINKS);
        return;
    }
    if (tag == MJ_GEOM && ps->nodes[parent].tag != MJ_DEFAULT && ++ps->n_geoms > KIN_MAX_GEOMS) {
        mj_fail(ps, RT_ELIMIT, "more than %d geoms", KIN_MAX_GEOMS);
        return;
    }
    if (tag == MJ_DEFAULT && ++ps->n_classes > KIN_MJCF_MAX_CLASSES) {
        mj_fail(ps, RT_ELIMIT, "more than %d <default> classes", KIN_MJCF_MAX_CLASSES);
        return;
    }
    if ((node = node_add(ps, tag, parent, atts, line)) < 0) return;
    if (tag == MJ_BODY) ps->nodes[node].id = ps->n_bodies;
    push(ps, node);
}

static void XMLCALL on_end(void *ud, const XML_Char *el)
{
    struct mj_parse *ps = ud;
    (void)el;
    if (ps->status != RT_OK) return;
    if (ps->skip) ps->skip--;
    else if (ps->depth > 0) ps->depth--;
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    struct mj_parse *ps = ud;
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    mj_fail(ps, RT_EPARSE, "<!DOCTYPE> is not accepted in MJCF");
}

static void parse_free(struct mj_parse *ps)
{
    for (int i = 0; i < ps->n_files; i++) {
        free(ps->files[i]);
        free(ps->paths[i]);
    }
    free(ps->nodes);
    free(ps->attrs);
    free(ps->pool);
}

/* ---------------------------------------------------------------------------
 * Values. */

static const char *node_attr(const struct mj_parse *ps, int node, const char *key)
{
    const struct mj_node *nd = &ps->nodes[node];
    for (int i = 0; i < nd->n_attr; i++) {
        const struct mj_attr *a = &ps->attrs[nd->attr + (size_t)i];
        if (!strcmp(ps->pool + a->key, key)) return ps->pool + a->val;
    }
    return NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Parses between 1 and `max` finite decimal numbers separated by white
 * space into out; returns how many, or 0 for anything else (inf, nan, hex,
 * junk, too many). */
static int parse_upto(const char *s, double *out, int max)
{
    const char *p = s;
    int n = 0;
    for (;;) {
        char *end;
        while (is_space(*p)) p++;
        if (!*p) return n;
        if (n == max) return 0;
        if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.')) return 0;
        out[n] = strtod(p, &end);
        if (end == p || !isfinite(out[n]) || strcspn(p, "xXpP") < (size_t)(end - p)) return 0;
        if (*end && !is_space(*end)) return 0;
        p = end;
        n++;
    }
}

/* Exactly n numbers. */
static int parse_numbers(const char *s, double *out, int n)
{
    double tmp[6];
    assert(n <= 6);
    if (parse_upto(s, tmp, n) != n) return 0;
    memcpy(out, tmp, (size_t)n * sizeof *out);
    return 1;
}

/* A decimal integer that fits an int, optional sign, white space around. */
static int parse_int(const char *s, int *out)
{
    double v;
    if (parse_upto(s, &v, 1) != 1 || v != floor(v) || v < -2147483647.0 || v > 2147483647.0) return 0;
    if (strpbrk(s, ".eE")) return 0;
    *out = (int)v;
    return 1;
}

/* "BODY 'name'" for messages: the element's tag and name; an element of a
 * <default> says which class. */
static const char *node_desc(const struct mj_parse *ps, int node, char *buf, size_t cap)
{
    const struct mj_node *nd = &ps->nodes[node];
    const char *tag = tag_names[nd->tag];
    const char *name = node_attr(ps, node, nd->tag == MJ_DEFAULT ? "class" : "name");
    if (nd->tag != MJ_DEFAULT && nd->parent >= 0 && ps->nodes[nd->parent].tag == MJ_DEFAULT) {
        const char *cls = node_attr(ps, nd->parent, "class");
        if (ps->nodes[ps->nodes[nd->parent].parent].tag == MJ_MUJOCO) cls = "main";
        snprintf(buf, cap, "%s of default '%s'", tag, cls ? RT_QUOTE(cls) : "?");
    } else if (name && name[0]) {
        snprintf(buf, cap, "%s '%s'", tag, RT_QUOTE(name));
    } else {
        snprintf(buf, cap, "%s", tag);
    }
    return buf;
}

/* ---------------------------------------------------------------------------
 * Rotations (double, row-major 3x3). */

static void mat_identity(double R[9])
{
    memset(R, 0, 9 * sizeof *R);
    R[0] = R[4] = R[8] = 1.0;
}

/* Rotation by `theta` about the unit axis `a` (Rodrigues). */
static void mat_axis_angle(const double a[3], double theta, double R[9])
{
    double c = cos(theta), s = sin(theta), t = 1.0 - c;
    R[0] = c + a[0] * a[0] * t;        R[1] = a[0] * a[1] * t - a[2] * s; R[2] = a[0] * a[2] * t + a[1] * s;
    R[3] = a[0] * a[1] * t + a[2] * s; R[4] = c + a[1] * a[1] * t;        R[5] = a[1] * a[2] * t - a[0] * s;
    R[6] = a[0] * a[2] * t - a[1] * s; R[7] = a[1] * a[2] * t + a[0] * s; R[8] = c + a[2] * a[2] * t;
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* URDF's rpy of R = Rz(y) Ry(p) Rx(r), for kin_joint.rpy (informative; the
 * model uses the matrix). */
static void mat_to_rpy(const double R[9], double rpy[3])
{
    double cp = sqrt(R[0] * R[0] + R[3] * R[3]);
    rpy[1] = atan2(-R[6], cp);
    if (cp > 1e-12) {
        rpy[0] = atan2(R[7], R[8]);
        rpy[2] = atan2(R[3], R[0]);
    } else {
        rpy[0] = 0.0;
        rpy[2] = atan2(-R[1], R[4]);
    }
}

/* A rigid transform: x -> R x + p. */
struct mj_xf {
    double p[3];
    double R[9];
};

static void xf_identity(struct mj_xf *t)
{
    memset(t->p, 0, sizeof t->p);
    mat_identity(t->R);
}

/* o = a * b (apply b, then a); o may alias neither. */
static void xf_mul(const struct mj_xf *a, const struct mj_xf *b, struct mj_xf *o)
{
    double t[3];
    kin_mat_mul(a->R, b->R, o->R);
    kin_mat_vec(a->R, b->p, t);
    for (int i = 0; i < 3; i++) o->p[i] = a->p[i] + t[i];
}

/* ---------------------------------------------------------------------------
 * Stage two: compiler settings, default classes, the body tree. */

enum { MJ_HINGE, MJ_SLIDE, MJ_BALL, MJ_FREE };
enum { MJ_FALSE = 0, MJ_TRUE = 1, MJ_AUTO = 2 };

/* A joint's attributes as MuJoCo initializes them, then as a class or the
 * element sets them. */
struct mj_jattr {
    int type, limited, frclimited;
    double pos[3], axis[3], range[2], frcrange[2], ref;
};

struct mj_gattr {
    int type, has_fromto, group, contype, conaffinity;
    double size[3], pos[3], R[9], fromto[6];
    const char *mesh; /* into the pool */
};

struct mj_class {
    const char *name; /* into the pool; "main" for class 0 */
    int node;         /* its <default>, -1 for main */
    struct mj_jattr j;
    struct mj_gattr g;
};

/* A hinge or slide joint of the body being built, resolved. */
struct mj_joint {
    int node;
    char name[KIN_MAX_NAME];
    int type;        /* MJ_HINGE or MJ_SLIDE */
    int has_limits;
    double pos[3];   /* anchor in the body frame (0 for a slide) */
    double axis[3];  /* unit, in the body frame */
    double lower, upper, effort;
};

struct mj_build {
    struct mj_parse *ps;
    int degree, autolimits;
    char seq[4];
    struct mj_class *classes;
    int n_classes;
    struct kin_robot *r;
    int cap_links, cap_joints, cap_geoms;
    struct mj_loc { int file; long line; } *link_loc, *joint_loc; /* [KIN_MAX_LINKS] */
    struct mj_joint *bj; /* [KIN_MAX_LINKS] scratch: one body's joints */
};

#define b_fail(b, code, node, ...) \
    mj_fail_at((b)->ps, (code), (b)->ps->nodes[node].file, (b)->ps->nodes[node].line, __VA_ARGS__)

static int is_orient_key(const char *k)
{
    return !strcmp(k, "quat") || !strcmp(k, "axisangle") || !strcmp(k, "euler") || !strcmp(k, "xyaxes") ||
           !strcmp(k, "zaxis");
}

/* Orientation attribute `key` = `v` of `node` into R (MuJoCo's
 * conventions: quat w x y z; angles per <compiler angle>; euler per
 * eulerseq). Returns 0 after reporting. */
static int orient_parse(struct mj_build *b, int node, const char *key, const char *v, double R[9])
{
    double a[6], n, d = b->degree ? MJ_PI / 180.0 : 1.0;
    char desc[RT_QUOTE_BUF + 32];
    if (!strcmp(key, "quat")) {
        if (!parse_numbers(v, a, 4)) goto bad4;
        n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3]);
        if (!(n >= MJ_EPS)) goto zero;
        double q[4] = {a[1] / n, a[2] / n, a[3] / n, a[0] / n};
        kin_quat_to_mat(q, R);
    } else if (!strcmp(key, "axisangle")) {
        if (!parse_numbers(v, a, 4)) goto bad4;
        if (!((n = norm3(a)) >= MJ_EPS)) goto zero;
        for (int i = 0; i < 3; i++) a[i] /= n;
        mat_axis_angle(a, a[3] * d, R);
    } else if (!strcmp(key, "euler")) {
        if (!parse_numbers(v, a, 3)) {
            b_fail(b, RT_EPARSE, node, "%s: bad euler '%s' (expected 3 numbers)",
                   node_desc(b->ps, node, desc, sizeof desc), RT_QUOTE(v));
            return 0;
        }
        mat_identity(R);
        for (int i = 0; i < 3; i++) {
            double e[3] = {0, 0, 0}, E[9], T[9];
            char c = b->seq[i];
            e[c == 'x' || c == 'X' ? 0 : c == 'y' || c == 'Y' ? 1 : 2] = 1.0;
            mat_axis_angle(e, a[i] * d, E);
            if (c >= 'a') kin_mat_mul(R, E, T); /* intrinsic: about the moved axes */
            else kin_mat_mul(E, R, T);           /* extrinsic: about the fixed axes */
            memcpy(R, T, sizeof T);
        }
    } else if (!strcmp(key, "xyaxes")) {
        double x[3], y[3], z[3], dot;
        if (!parse_numbers(v, a, 6)) {
            b_fail(b, RT_EPARSE, node, "%s: bad xyaxes '%s' (expected 6 numbers)",
                   node_desc(b->ps, node, desc, sizeof desc), RT_QUOTE(v));
            return 0;
        }
        memcpy(x, a, sizeof x);
        memcpy(y, a + 3, sizeof y);
        if (!((n = norm3(x)) >= MJ_EPS)) goto zero;
        for (int i = 0; i < 3; i++) x[i] /= n;
        dot = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
        for (int i = 0; i < 3; i++) y[i] -= dot * x[i];
        if (!((n = norm3(y)) >= MJ_EPS)) goto zero;
        for (int i = 0; i < 3; i++) y[i] /= n;
        kin_cross(x, y, z);
        for (int i = 0; i < 3; i++) {
            R[3 * i] = x[i];
            R[3 * i + 1] = y[i];
            R[3 * i + 2] = z[i];
        }
    } else { /* zaxis: the shortest rotation taking +z onto the vector */
        double ax[3], s;
        if (!parse_numbers(v, a, 3)) {
            b_fail(b, RT_EPARSE, node, "%s: bad zaxis '%s' (expected 3 numbers)",
                   node_desc(b->ps, node, desc, sizeof desc), RT_QUOTE(v));
            return 0;
        }
        if (!((n = norm3(a)) >= MJ_EPS)) goto zero;
        for (int i = 0; i < 3; i++) a[i] /= n;
        ax[0] = -a[1], ax[1] = a[0], ax[2] = 0.0;
        s = norm3(ax);
        if (s < 1e-10) ax[0] = 1.0, ax[1] = 0.0;
        else ax[0] /= s, ax[1] /= s;
        mat_axis_angle(ax, atan2(s, a[2]), R);
    }
    return 1;
bad4:
    b_fail(b, RT_EPARSE, node, "%s: bad %s '%s' (expected 4 numbers)", node_desc(b->ps, node, desc, sizeof desc),
           key, RT_QUOTE(v));
    return 0;
zero:
    b_fail(b, RT_EPARSE, node, "%s: bad %s '%s' (zero-length axis or quaternion)",
           node_desc(b->ps, node, desc, sizeof desc), key, RT_QUOTE(v));
    return 0;
}

/* Reads `n` numbers of attribute `key` of `node` into out when present.
 * Returns 0 after reporting a malformed one. */
static int attr_vec(struct mj_build *b, int node, const char *key, const char *v, double *out, int n)
{
    char desc[RT_QUOTE_BUF + 32];
    if (parse_numbers(v, out, n)) return 1;
    b_fail(b, RT_EPARSE, node, "%s: bad %s '%s' (expected %d number%s)", node_desc(b->ps, node, desc, sizeof desc),
           key, RT_QUOTE(v), n, n > 1 ? "s" : "");
    return 0;
}

static int parse_limited(const char *v)
{
    if (!strcmp(v, "true")) return MJ_TRUE;
    if (!strcmp(v, "false")) return MJ_FALSE;
    if (!strcmp(v, "auto")) return MJ_AUTO;
    return -1;
}

/* Applies the attributes of a <joint> or <freejoint> node (an element or
 * a class's) over *j. Returns 0 after reporting. */
static int joint_attrs(struct mj_build *b, int node, struct mj_jattr *j)
{
    const struct mj_parse *ps = b->ps;
    const struct mj_node *nd = &ps->nodes[node];
    char desc[RT_QUOTE_BUF + 32];
    if (nd->tag == MJ_FREEJOINT) {
        j->type = MJ_FREE;
        return 1;
    }
    for (int i = 0; i < nd->n_attr; i++) {
        const char *k = ps->pool + ps->attrs[nd->attr + (size_t)i].key;
        const char *v = ps->pool + ps->attrs[nd->attr + (size_t)i].val;
        if (!strcmp(k, "type")) {
            if (!strcmp(v, "hinge")) j->type = MJ_HINGE;
            else if (!strcmp(v, "slide")) j->type = MJ_SLIDE;
            else if (!strcmp(v, "ball")) j->type = MJ_BALL;
            else if (!strcmp(v, "free")) j->type = MJ_FREE;
            else {
                b_fail(b, RT_EPARSE, node, "%s: unknown joint type '%s' (hinge, slide, ball, free)",
                       node_desc(ps, node, desc, sizeof desc), RT_QUOTE(v));
                return 0;
            }
        } else if (!strcmp(k, "pos")) {
            if (!attr_vec(b, node, k, v, j->pos, 3)) return 0;
        } else if (!strcmp(k, "axis")) {
            if (!attr_vec(b, node, k, v, j->axis, 3)) return 0;
        } else if (!strcmp(k, "range")) {
            if (!attr_vec(b, node, k, v, j->range, 2)) return 0;
        } else if (!strcmp(k, "actuatorfrcrange")) {
            if (!attr_vec(b, node, k, v, j->frcrange, 2)) return 0;
        } else if (!strcmp(k, "ref")) {
            if (!attr_vec(b, node, k, v, &j->ref, 1)) return 0;
        } else if (!strcmp(k, "limited") || !strcmp(k, "actuatorfrclimited")) {
            int l = parse_limited(v);
            if (l < 0) {
                b_fail(b, RT_EPARSE, node, "%s: bad %s '%s' (true, false or auto)",
                       node_desc(ps, node, desc, sizeof desc), k, RT_QUOTE(v));
                return 0;
            }
            if (k[0] == 'l') j->limited = l;
            else j->frclimited = l;
        }
    }
    return 1;
}

static int geom_type_from(const char *v)
{
    static const char *const names[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid",
                                        "cylinder", "box", "mesh", "sdf"};
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(v, names[i])) return i; /* enum kin_geom_type has this order */
    return -1;
}

/* As joint_attrs(), for a <geom>. At most one orientation per element. */
static int geom_attrs(struct mj_build *b, int node, struct mj_gattr *g)
{
    const struct mj_parse *ps = b->ps;
    const struct mj_node *nd = &ps->nodes[node];
    const char *orient = NULL;
    char desc[RT_QUOTE_BUF + 32];
    for (int i = 0; i < nd->n_attr; i++) {
        const char *k = ps->pool + ps->attrs[nd->attr + (size_t)i].key;
        const char *v = ps->pool + ps->attrs[nd->attr + (size_t)i].val;
        if (!strcmp(k, "type")) {
            if ((g->type = geom_type_from(v)) < 0) {
                b_fail(b, RT_EPARSE, node, "%s: unknown geom type '%s'", node_desc(ps, node, desc, sizeof desc), RT_QUOTE(v));
                return 0;
            }
        } else if (!strcmp(k, "size")) {
            double s[3];
            int n = parse_upto(v, s, 3);
            if (!n) {
                b_fail(b, RT_EPARSE, node, "%s: bad size '%s' (expected 1 to 3 numbers)",
                       node_desc(ps, node, desc, sizeof desc), RT_QUOTE(v));
                return 0;
            }
            memcpy(g->size, s, (size_t)n * sizeof *s); /* as MuJoCo: the rest stay as inherited */
        } else if (!strcmp(k, "pos")) {
            if (!attr_vec(b, node, k, v, g->pos, 3)) return 0;
        } else if (!strcmp(k, "fromto")) {
            if (!attr_vec(b, node, k, v, g->fromto, 6)) return 0;
            g->has_fromto = 1;
        } else if (!strcmp(k, "mesh")) {
            g->mesh = v;
        } else if (!strcmp(k, "group") || !strcmp(k, "contype") || !strcmp(k, "conaffinity")) {
            int *slot = k[0] == 'g' ? &g->group : k[3] == 't' ? &g->contype : &g->conaffinity;
            if (!parse_int(v, slot)) {
                b_fail(b, RT_EPARSE, node, "%s: bad %s '%s' (expected an integer)",
                       node_desc(ps, node, desc, sizeof desc), k, RT_QUOTE(v));
                return 0;
            }
        } else if (is_orient_key(k)) {
            if (orient) {
                b_fail(b, RT_EPARSE, node, "%s: both %s and %s given (at most one orientation)",
                       node_desc(ps, node, desc, sizeof desc), orient, k);
                return 0;
            }
            orient = k;
            if (!orient_parse(b, node, k, v, g->R)) return 0;
        }
    }
    return 1;
}

/* A body's or frame's pos and orientation into *t (identity when absent). */
static int frame_attrs(struct mj_build *b, int node, struct mj_xf *t)
{
    const struct mj_parse *ps = b->ps;
    const struct mj_node *nd = &ps->nodes[node];
    const char *orient = NULL;
    char desc[RT_QUOTE_BUF + 32];
    xf_identity(t);
    for (int i = 0; i < nd->n_attr; i++) {
        const char *k = ps->pool + ps->attrs[nd->attr + (size_t)i].key;
        const char *v = ps->pool + ps->attrs[nd->attr + (size_t)i].val;
        if (!strcmp(k, "pos")) {
            if (!attr_vec(b, node, k, v, t->p, 3)) return 0;
        } else if (is_orient_key(k)) {
            if (orient) {
                b_fail(b, RT_EPARSE, node, "%s: both %s and %s given (at most one orientation)",
                       node_desc(ps, node, desc, sizeof desc), orient, k);
                return 0;
            }
            orient = k;
            if (!orient_parse(b, node, k, v, t->R)) return 0;
        }
    }
    return 1;
}

/* <compiler> elements in order; later ones override. */
static int read_compiler(struct mj_build *b)
{
    const struct mj_parse *ps = b->ps;
    b->degree = 1;
    b->autolimits = 1;
    memcpy(b->seq, "xyz", 4);
    for (int c = ps->nodes[0].first; c >= 0; c = ps->nodes[c].next) {
        const struct mj_node *nd = &ps->nodes[c];
        if (nd->tag != MJ_COMPILER) continue;
        for (int i = 0; i < nd->n_attr; i++) {
            const char *k = ps->pool + ps->attrs[nd->attr + (size_t)i].key;
            const char *v = ps->pool + ps->attrs[nd->attr + (size_t)i].val;
            if (!strcmp(k, "angle")) {
                if (strcmp(v, "radian") && strcmp(v, "degree")) {
                    b_fail(b, RT_EPARSE, c, "compiler: bad angle '%s' (radian or degree)", RT_QUOTE(v));
                    return 0;
                }
                b->degree = v[0] == 'd';
            } else if (!strcmp(k, "eulerseq")) {
                if (strlen(v) != 3 || strspn(v, "xyzXYZ") != 3) {
                    b_fail(b, RT_EPARSE, c, "compiler: bad eulerseq '%s' (3 of x y z X Y Z)", RT_QUOTE(v));
                    return 0;
                }
                memcpy(b->seq, v, 4);
            } else if (!strcmp(k, "autolimits")) {
                if (strcmp(v, "true") && strcmp(v, "false")) {
                    b_fail(b, RT_EPARSE, c, "compiler: bad autolimits '%s' (true or false)", RT_QUOTE(v));
                    return 0;
                }
                b->autolimits = v[0] == 't';
            } else if (!strcmp(k, "coordinate")) {
                if (strcmp(v, "local") != 0) {
                    b_fail(b, RT_EPARSE, c, "compiler: coordinate '%s' is not supported (local only)", RT_QUOTE(v));
                    return 0;
                }
            }
        }
    }
    return 1;
}

static int class_find(const struct mj_build *b, const char *name)
{
    if (!strcmp(name, "main")) return 0;
    for (int i = 1; i < b->n_classes; i++)
        if (!strcmp(b->classes[i].name, name)) return i;
    return -1;
}

/* A <default> node as class `cls`: first its own <joint> and <geom>
 * children, then its nested classes, each copying this one as it is then
 * (MuJoCo's order). */
static int read_default(struct mj_build *b, int node, int cls)
{
    struct mj_parse *ps = b->ps;
    for (int c = ps->nodes[node].first; c >= 0; c = ps->nodes[c].next) {
        if (ps->nodes[c].tag == MJ_JOINT && !joint_attrs(b, c, &b->classes[cls].j)) return 0;
        if (ps->nodes[c].tag == MJ_GEOM && !geom_attrs(b, c, &b->classes[cls].g)) return 0;
    }
    for (int c = ps->nodes[node].first; c >= 0; c = ps->nodes[c].next) {
        const char *name;
        int k;
        if (ps->nodes[c].tag != MJ_DEFAULT) continue;
        name = node_attr(ps, c, "class");
        if (!name || !name[0]) {
            b_fail(b, RT_EPARSE, c, "nested <default> without a class");
            return 0;
        }
        if ((k = class_find(b, name)) >= 0) {
            if (k == 0) b_fail(b, RT_EPARSE, c, "default class 'main' is the top-level <default>");
            else b_fail(b, RT_EPARSE, c, "default class '%s' defined twice (first at line %ld)", RT_QUOTE(name),
                        ps->nodes[b->classes[k].node].line);
            return 0;
        }
        assert(b->n_classes < ps->n_classes + 1); /* counted in stage one */
        k = b->n_classes++;
        b->classes[k] = b->classes[cls];
        b->classes[k].name = name;
        b->classes[k].node = c;
        if (!read_default(b, c, k)) return 0;
    }
    return 1;
}

static int read_classes(struct mj_build *b)
{
    struct mj_parse *ps = b->ps;
    struct mj_class *m;
    if (!(b->classes = calloc((size_t)ps->n_classes + 1, sizeof *b->classes))) {
        mj_fail_at(ps, RT_ENOMEM, 0, 0, "out of memory");
        return 0;
    }
    b->n_classes = 1;
    m = &b->classes[0];
    m->name = "main";
    m->node = -1;
    m->j.type = MJ_HINGE;
    m->j.axis[2] = 1.0;
    m->j.limited = m->j.frclimited = MJ_AUTO;
    m->g.type = KIN_GEOM_SPHERE;
    m->g.contype = m->g.conaffinity = 1;
    mat_identity(m->g.R);
    for (int c = ps->nodes[0].first; c >= 0; c = ps->nodes[c].next)
        if (ps->nodes[c].tag == MJ_DEFAULT && !read_default(b, c, 0)) return 0;
    return 1;
}

/* The class an element uses: its class= (which must exist), else `cc`. */
static int elem_class(struct mj_build *b, int node, int cc)
{
    const char *name = node_attr(b->ps, node, "class");
    char desc[RT_QUOTE_BUF + 32];
    int k;
    if (!name) return cc;
    if ((k = class_find(b, name)) < 0)
        b_fail(b, RT_EPARSE, node, "%s: unknown class '%s'", node_desc(b->ps, node, desc, sizeof desc), RT_QUOTE(name));
    return k;
}

/* The childclass a body or frame gives its contents, or -1 after reporting. */
static int child_class(struct mj_build *b, int node, int cc)
{
    const char *name = node_attr(b->ps, node, "childclass");
    char desc[RT_QUOTE_BUF + 32];
    int k;
    if (!name) return cc;
    if ((k = class_find(b, name)) < 0)
        b_fail(b, RT_EPARSE, node, "%s: unknown childclass '%s'", node_desc(b->ps, node, desc, sizeof desc),
               RT_QUOTE(name));
    return k;
}

/* Writes s1 s2 s3 into the KIN_MAX_NAME buffer dst (which none of them
 * may alias), or reports at `node` that the name is too long. */
static int name_set(struct mj_build *b, int node, char *dst, const char *what, const char *s1, const char *s2,
                    const char *s3)
{
    int n = snprintf(dst, KIN_MAX_NAME, "%s%s%s", s1, s2 ? s2 : "", s3 ? s3 : "");
    if (n < 0 || n >= KIN_MAX_NAME) {
        b_fail(b, RT_ELIMIT, node, "%s longer than %d bytes: '%s...'", what, KIN_MAX_NAME - 1, RT_QUOTE(s1));
        return 0;
    }
    return 1;
}

/* The body's name (or "bodyN") into dst. */
static int body_name(struct mj_build *b, int node, char *dst)
{
    const char *name = node_attr(b->ps, node, "name");
    char tmp[32];
    if (name && name[0]) return name_set(b, node, dst, "body name", name, NULL, NULL);
    snprintf(tmp, sizeof tmp, "body%d", b->ps->nodes[node].id);
    return name_set(b, node, dst, "body name", tmp, NULL, NULL);
}

/* Appends a link and its joint (none for the root) to the robot. `kind`
 * is the enum kin_joint_type; `j` the MJCF joint behind it or NULL for a
 * fixed one; `origin` its origin in the parent link's frame. Returns the
 * new link's index, or -1 after reporting. */
static int add_link(struct mj_build *b, int node, const char *link_name, const char *joint_name, int parent,
                    int kind, const struct mj_joint *j, const struct mj_xf *origin)
{
    struct kin_robot *r = b->r;
    struct kin_link *l;
    struct kin_joint *kj;
    int st = grow((void **)&r->links, &b->cap_links, r->n_links, sizeof *r->links, KIN_MAX_LINKS);
    if (st == RT_OK && parent >= 0)
        st = grow((void **)&r->joints, &b->cap_joints, r->n_joints, sizeof *r->joints, KIN_MAX_LINKS);
    if (st == RT_ELIMIT) {
        b_fail(b, RT_ELIMIT, node, "more than %d links (one per body, plus one per extra joint of a body)",
               KIN_MAX_LINKS);
        return -1;
    }
    if (st != RT_OK) goto oom;
    l = &r->links[r->n_links];
    if (!(l->name = strdup(link_name))) goto oom;
    l->parent = parent;
    l->joint = parent >= 0 ? r->n_joints : -1;
    b->link_loc[r->n_links].file = b->ps->nodes[node].file;
    b->link_loc[r->n_links].line = b->ps->nodes[node].line;
    r->n_links++;
    if (parent < 0) return 0;
    kj = &r->joints[r->n_joints];
    memset(kj, 0, sizeof *kj);
    if (!(kj->name = strdup(joint_name))) goto oom;
    b->joint_loc[r->n_joints].file = b->ps->nodes[j ? j->node : node].file;
    b->joint_loc[r->n_joints].line = b->ps->nodes[j ? j->node : node].line;
    r->n_joints++;
    kj->type = kind;
    kj->parent = parent;
    kj->child = r->n_links - 1;
    memcpy(kj->xyz, origin->p, sizeof kj->xyz);
    memcpy(kj->rot, origin->R, sizeof kj->rot);
    mat_to_rpy(origin->R, kj->rpy);
    kj->mimic = -1;
    kj->mimic_mult = 1.0;
    kj->coord = -1;
    if (j) {
        memcpy(kj->axis, j->axis, sizeof kj->axis);
        kj->has_limits = j->has_limits;
        kj->lower = j->has_limits ? j->lower : -INFINITY;
        kj->upper = j->has_limits ? j->upper : INFINITY;
        kj->effort = j->effort;
        kj->coord = r->n_dof++;
    } else {
        kj->axis[2] = 1.0;
    }
    return r->n_links - 1;
oom:
    mj_fail_at(b->ps, RT_ENOMEM, 0, 0, "out of memory");
    return -1;
}

/* Resolves a <joint>/<freejoint> element with class chain `cc` into *j;
 * *type gets the MJCF type. Returns 0 after reporting. */
static int joint_resolve(struct mj_build *b, int node, int cc, const struct mj_xf *fr, struct mj_joint *j,
                         int *type, const char *body, int k)
{
    struct mj_jattr a;
    char desc[RT_QUOTE_BUF + 32], tmp[32];
    const char *name = node_attr(b->ps, node, "name");
    double n, t[3];
    int cls = b->ps->nodes[node].tag == MJ_FREEJOINT ? 0 : elem_class(b, node, cc);
    if (cls < 0) return 0;
    a = b->classes[cls].j;
    if (!joint_attrs(b, node, &a)) return 0;
    *type = a.type;
    j->node = node;
    if (name && name[0]) {
        if (!name_set(b, node, j->name, "joint name", name, NULL, NULL)) return 0;
    } else {
        snprintf(tmp, sizeof tmp, "__joint%d", k);
        if (!name_set(b, node, j->name, "joint name BODY__jointK", body, tmp, NULL)) return 0;
    }
    node_desc(b->ps, node, desc, sizeof desc);
    if (a.type == MJ_BALL) {
        b_fail(b, RT_EPARSE, node, "%s: ball joints are not supported (no single axis; use three hinges)", desc);
        return 0;
    }
    if (a.type == MJ_FREE) return 1;
    if (a.ref != 0.0) {
        b_fail(b, RT_EPARSE, node, "%s: a nonzero ref (%g) is not supported", desc, a.ref);
        return 0;
    }
    j->type = a.type;
    if (!((n = norm3(a.axis)) >= MJ_EPS)) {
        b_fail(b, RT_EPARSE, node, "%s: axis too small", desc);
        return 0;
    }
    for (int i = 0; i < 3; i++) t[i] = a.axis[i] / n;
    kin_mat_vec(fr->R, t, j->axis); /* a <frame> turns the axis and moves the anchor */
    kin_mat_vec(fr->R, a.pos, t);
    for (int i = 0; i < 3; i++) j->pos[i] = a.type == MJ_HINGE ? fr->p[i] + t[i] : 0.0;
    int hasrange = !(a.range[0] == 0.0 && a.range[1] == 0.0), lim;
    if (a.limited == MJ_AUTO) {
        if (hasrange && !b->autolimits) {
            b_fail(b, RT_EPARSE, node, "%s: range without limited while compiler autolimits is false", desc);
            return 0;
        }
        lim = hasrange;
    } else {
        lim = a.limited == MJ_TRUE;
    }
    j->has_limits = lim;
    if (lim) {
        double f = b->degree && a.type == MJ_HINGE ? MJ_PI / 180.0 : 1.0;
        if (!(a.range[0] < a.range[1])) {
            b_fail(b, RT_EPARSE, node, "%s: limited, but range lower %g is not below upper %g", desc, a.range[0],
                   a.range[1]);
            return 0;
        }
        j->lower = a.range[0] * f;
        j->upper = a.range[1] * f;
    }
    j->effort = 0.0;
    if (a.frclimited != MJ_FALSE) j->effort = fmax(fabs(a.frcrange[0]), fabs(a.frcrange[1]));
    return 1;
}

/* Walks a body's direct contents through <frame>s, calling `visit` on
 * every element of `want` (MJ_JOINT also yields MJ_FREEJOINT) with its
 * frame transform in the body frame and the class in force. Returns 0
 * after a failure. */
typedef int (*mj_visit_fn)(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *ctx);

static int walk(struct mj_build *b, int node, const struct mj_xf *fr, int cc, int want, mj_visit_fn visit,
                void *ctx)
{
    struct mj_parse *ps = b->ps;
    for (int c = ps->nodes[node].first; c >= 0; c = ps->nodes[c].next) {
        int tag = ps->nodes[c].tag;
        if (tag == MJ_FRAME) {
            struct mj_xf f, t;
            int fcc = child_class(b, c, cc);
            if (fcc < 0 || !frame_attrs(b, c, &f)) return 0;
            xf_mul(fr, &f, &t);
            if (!walk(b, c, &t, fcc, want, visit, ctx)) return 0;
        } else if (tag == want || (want == MJ_JOINT && tag == MJ_FREEJOINT)) {
            if (!visit(b, c, fr, cc, ctx)) return 0;
        }
    }
    return 1;
}

struct joints_ctx {
    const char *body;
    int n, n_free, first_free;
};

static int visit_joint(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *vctx)
{
    struct joints_ctx *x = vctx;
    int type;
    if (!joint_resolve(b, node, cc, fr, &b->bj[x->n], &type, x->body, x->n + x->n_free)) return 0;
    if (type == MJ_FREE) {
        if (!x->n_free++) x->first_free = node;
    } else {
        x->n++; /* at most KIN_MAX_LINKS: joints are elements of at most that many bodies' links */
        if (x->n >= KIN_MAX_LINKS) {
            b_fail(b, RT_ELIMIT, node, "more than %d links (one per body, plus one per extra joint of a body)",
                   KIN_MAX_LINKS);
            return 0;
        }
    }
    return 1;
}

struct geoms_ctx {
    int link;
};

static int visit_geom(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *vctx)
{
    struct geoms_ctx *x = vctx;
    struct kin_robot *r = b->r;
    struct mj_gattr a;
    struct mj_xf g, w;
    struct kin_geom *kg;
    const char *name = node_attr(b->ps, node, "name");
    char desc[RT_QUOTE_BUF + 32];
    int cls = elem_class(b, node, cc), st;
    if (cls < 0) return 0;
    a = b->classes[cls].g;
    if (!geom_attrs(b, node, &a)) return 0;
    memcpy(g.p, a.pos, sizeof g.p);
    memcpy(g.R, a.R, sizeof g.R);
    if (a.has_fromto) { /* MuJoCo: midpoint, z along the segment, half length */
        double d[3], len;
        int slot = a.type == KIN_GEOM_CAPSULE || a.type == KIN_GEOM_CYLINDER ? 1
                   : a.type == KIN_GEOM_BOX || a.type == KIN_GEOM_ELLIPSOID  ? 2
                                                                             : -1;
        node_desc(b->ps, node, desc, sizeof desc);
        if (slot < 0) {
            b_fail(b, RT_EPARSE, node, "%s: fromto needs a capsule, cylinder, box or ellipsoid", desc);
            return 0;
        }
        for (int i = 0; i < 3; i++) {
            d[i] = a.fromto[3 + i] - a.fromto[i];
            g.p[i] = 0.5 * (a.fromto[i] + a.fromto[3 + i]);
        }
        if (!((len = norm3(d)) >= MJ_EPS)) {
            b_fail(b, RT_EPARSE, node, "%s: fromto has zero length", desc);
            return 0;
        }
        double ax[3] = {-d[1] / len, d[0] / len, 0.0}, s = norm3(ax);
        if (s < 1e-10) ax[0] = 1.0, ax[1] = 0.0;
        else ax[0] /= s, ax[1] /= s;
        mat_axis_angle(ax, atan2(s, d[2] / len), g.R);
        a.size[slot] = 0.5 * len;
    }
    xf_mul(fr, &g, &w);
    st = grow((void **)&r->geoms, &b->cap_geoms, r->n_geoms, sizeof *r->geoms, KIN_MAX_GEOMS);
    if (st != RT_OK) { /* the count was checked in stage one */
        mj_fail_at(b->ps, RT_ENOMEM, 0, 0, "out of memory");
        return 0;
    }
    kg = &r->geoms[r->n_geoms];
    memset(kg, 0, sizeof *kg);
    r->n_geoms++; /* counted now so that the names are freed */
    if ((name && name[0] && !(kg->name = strdup(name))) || (a.mesh && !(kg->mesh = strdup(a.mesh)))) {
        mj_fail_at(b->ps, RT_ENOMEM, 0, 0, "out of memory");
        return 0;
    }
    kg->link = x->link;
    kg->type = a.type;
    kg->group = a.group;
    kg->contype = a.contype;
    kg->conaffinity = a.conaffinity;
    memcpy(kg->size, a.size, sizeof kg->size);
    memcpy(kg->pos, w.p, sizeof kg->pos);
    kin_mat_to_quat(w.R, kg->quat);
    return 1;
}

static int build_body(struct mj_build *b, int node, int parent_link, const struct mj_xf *pose, int cc);

static int visit_body(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *vctx)
{
    int link = *(int *)vctx;
    struct mj_xf own, pose;
    if (!frame_attrs(b, node, &own)) return 0;
    xf_mul(fr, &own, &pose);
    return build_body(b, node, link, &pose, cc);
}

/* The links of one body below `parent_link` (-1: the body is the root),
 * `pose` its frame in the parent link's frame, then its geoms, then its
 * child bodies (DESIGN.md's topological order: each link before its
 * children, siblings in file order). Returns 0 after reporting. */
static int build_body(struct mj_build *b, int node, int parent_link, const struct mj_xf *pose, int cc)
{
    char bname[KIN_MAX_NAME], lname[KIN_MAX_NAME], jname[KIN_MAX_NAME];
    struct joints_ctx jx = {bname, 0, 0, -1};
    struct geoms_ctx gx;
    struct mj_xf ident, origin;
    char desc[RT_QUOTE_BUF + 32];
    int prev = parent_link, link;

    xf_identity(&ident);
    if ((cc = child_class(b, node, cc)) < 0 || !body_name(b, node, bname)) return 0;
    if (!walk(b, node, &ident, cc, MJ_JOINT, visit_joint, &jx)) return 0;
    node_desc(b->ps, node, desc, sizeof desc);
    if (jx.n_free && parent_link >= 0) {
        b_fail(b, RT_EPARSE, jx.first_free,
               "%s: a free joint is allowed only on a top-level body (the floating base)", desc);
        return 0;
    }
    if (jx.n_free && jx.n) {
        b_fail(b, RT_EPARSE, jx.first_free, "%s: a free joint must be the body's only joint", desc);
        return 0;
    }
    if (parent_link < 0 && jx.n) { /* hinges on the top body: it hangs below a "world" link */
        if (add_link(b, node, "world", NULL, -1, KIN_JOINT_FIXED, NULL, &ident) < 0) return 0;
        prev = 0;
    }
    if (prev < 0) {
        if ((link = add_link(b, node, bname, NULL, -1, KIN_JOINT_FIXED, NULL, &ident)) < 0) return 0;
    } else if (jx.n == 0) {
        if (!name_set(b, node, jname, "fixed joint name BODY__fixed", bname, "__fixed", NULL)) return 0;
        if ((link = add_link(b, node, bname, jname, prev, KIN_JOINT_FIXED, NULL, pose)) < 0) return 0;
    } else {
        /* Joint k moves link L_k = B_k T(p_k), B_k the body frame after
         * joints 0..k: so L_0 = pose T(p_0) M_0 and L_k = L_(k-1) T(p_k - p_(k-1)) M_k,
         * and the body is L_last T(-p_last). */
        const double *pp = NULL;
        for (int k = 0; k < jx.n; k++) {
            const struct mj_joint *j = &b->bj[k];
            int last = k == jx.n - 1, at_body = last && norm3(j->pos) == 0.0;
            int kind = j->type == MJ_SLIDE ? KIN_JOINT_PRISMATIC
                       : j->has_limits     ? KIN_JOINT_REVOLUTE
                                           : KIN_JOINT_CONTINUOUS;
            if (k == 0) {
                struct mj_xf t;
                xf_identity(&t);
                memcpy(t.p, j->pos, sizeof t.p);
                xf_mul(pose, &t, &origin);
            } else {
                xf_identity(&origin);
                for (int i = 0; i < 3; i++) origin.p[i] = j->pos[i] - pp[i];
            }
            if (at_body) memcpy(lname, bname, sizeof lname);
            else if (!name_set(b, j->node, lname, "link name BODY__JOINT", bname, "__", j->name))
                return 0;
            if ((prev = add_link(b, j->node, lname, j->name, prev, kind, j, &origin)) < 0) return 0;
            pp = j->pos;
        }
        link = prev;
        if (norm3(pp) != 0.0) {
            xf_identity(&origin);
            for (int i = 0; i < 3; i++) origin.p[i] = -pp[i];
            if (!name_set(b, node, jname, "joint name BODY__anchor", bname, "__anchor", NULL)) return 0;
            if ((link = add_link(b, node, bname, jname, prev, KIN_JOINT_FIXED, NULL, &origin)) < 0) return 0;
        }
    }
    gx.link = link;
    if (!walk(b, node, &ident, cc, MJ_GEOM, visit_geom, &gx)) return 0;
    return walk(b, node, &ident, cc, MJ_BODY, visit_body, &link);
}

/* Top-level bodies (through <frame>s in <worldbody>): collected in order. */
struct tops_ctx {
    int *node, *cc, n;
    struct mj_xf *fr;
};

static int visit_top(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *vctx)
{
    struct tops_ctx *x = vctx;
    (void)b;
    x->node[x->n] = node;
    x->cc[x->n] = cc;
    x->fr[x->n++] = *fr;
    return 1;
}

static int visit_world_joint(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *vctx)
{
    char desc[RT_QUOTE_BUF + 32];
    (void)fr, (void)cc, (void)vctx;
    b_fail(b, RT_EPARSE, node, "%s: a joint directly in <worldbody> (joints belong to bodies)",
           node_desc(b->ps, node, desc, sizeof desc));
    return 0;
}

struct free_ctx {
    int n;
};

/* Only the type: a dropped scenery body's joints are not checked further. */
static int visit_count_free(struct mj_build *b, int node, const struct mj_xf *fr, int cc, void *vctx)
{
    struct free_ctx *x = vctx;
    struct mj_jattr a;
    int cls = b->ps->nodes[node].tag == MJ_FREEJOINT ? 0 : elem_class(b, node, cc);
    (void)fr;
    if (cls < 0) return 0;
    a = b->classes[cls].j;
    if (!joint_attrs(b, node, &a)) return 0;
    x->n += a.type == MJ_FREE;
    return 1;
}

/* Sorts names to find duplicates; reports the later one. */
struct name_ref {
    const char *name;
    int i;
};

static int name_ref_cmp(const void *a, const void *b)
{
    const struct name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->i - y->i;
}

/* Links (is_joint 0) or joints (1) of the robot have unique names. */
static int check_unique(struct mj_build *b, int is_joint)
{
    const struct kin_robot *r = b->r;
    const struct mj_loc *loc = is_joint ? b->joint_loc : b->link_loc;
    const char *what = is_joint ? "joint" : "link";
    int n = is_joint ? r->n_joints : r->n_links, ok = 1;
    struct name_ref *v;
    if (n < 2) return 1;
    if (!(v = calloc((size_t)n, sizeof *v))) {
        mj_fail_at(b->ps, RT_ENOMEM, 0, 0, "out of memory");
        return 0;
    }
    for (int i = 0; i < n; i++) {
        v[i].name = is_joint ? r->joints[i].name : r->links[i].name;
        v[i].i = i;
    }
    qsort(v, (size_t)n, sizeof *v, name_ref_cmp);
    for (int i = 1; i < n && ok; i++)
        if (!strcmp(v[i].name, v[i - 1].name)) {
            int later = v[i].i, first = v[i - 1].i;
            if (loc[first].file == loc[later].file)
                mj_fail_at(b->ps, RT_EPARSE, loc[later].file, loc[later].line,
                           "duplicate %s name '%s' (first at line %ld)", what, RT_QUOTE(v[i].name), loc[first].line);
            else
                mj_fail_at(b->ps, RT_EPARSE, loc[later].file, loc[later].line,
                           "duplicate %s name '%s' (first at %s:%ld)", what, RT_QUOTE(v[i].name),
                           b->ps->files[loc[first].file], loc[first].line);
            ok = 0;
        }
    free(v);
    return ok;
}

/* The robot's name: <mujoco model>, else the label's file name without
 * its extension. */
static char *model_name(const struct mj_parse *ps)
{
    const char *m = node_attr(ps, 0, "model"), *s, *dot;
    if (m && m[0]) return strndup(m, KIN_MAX_NAME - 1);
    s = strrchr(ps->files[0], '/');
    s = s ? s + 1 : ps->files[0];
    dot = strrchr(s, '.');
    return strndup(s, dot && dot > s ? (size_t)(dot - s) : strlen(s));
}

static int build_robot(struct mj_parse *ps, struct kin_robot **out)
{
    struct mj_build b;
    struct tops_ctx tops = {NULL, NULL, 0, NULL};
    struct mj_xf ident, own, pose;
    int root = -1, n_world = 0;
    memset(&b, 0, sizeof b);
    b.ps = ps;
    xf_identity(&ident);
    if (!read_compiler(&b) || !read_classes(&b)) goto fail;

    tops.node = calloc((size_t)ps->n_bodies + 1, sizeof *tops.node);
    tops.cc = calloc((size_t)ps->n_bodies + 1, sizeof *tops.cc);
    tops.fr = calloc((size_t)ps->n_bodies + 1, sizeof *tops.fr);
    if (!tops.node || !tops.cc || !tops.fr) goto oom;
    for (int c = ps->nodes[0].first; c >= 0; c = ps->nodes[c].next) {
        if (ps->nodes[c].tag != MJ_WORLDBODY) continue;
        n_world++;
        if (!walk(&b, c, &ident, 0, MJ_BODY, visit_top, &tops) ||
            !walk(&b, c, &ident, 0, MJ_JOINT, visit_world_joint, NULL))
            goto fail;
    }
    if (!n_world) {
        mj_fail_at(ps, RT_EPARSE, 0, ps->nodes[0].line, "no <worldbody>");
        goto fail;
    }
    if (tops.n == 0) {
        mj_fail_at(ps, RT_EPARSE, 0, ps->nodes[0].line, "<worldbody> has no <body>");
        goto fail;
    }
    if (tops.n == 1) {
        root = 0;
    } else { /* several: the one with a free joint; the others are scenery */
        int n_free = 0;
        for (int i = 0; i < tops.n; i++) {
            struct free_ctx fx = {0};
            int cc = child_class(&b, tops.node[i], tops.cc[i]);
            if (cc < 0 || !walk(&b, tops.node[i], &ident, cc, MJ_JOINT, visit_count_free, &fx)) goto fail;
            if (fx.n && !n_free++) root = i;
        }
        if (n_free != 1) {
            char d0[80], d1[80];
            mj_fail_at(ps, RT_EPARSE, ps->nodes[tops.node[1]].file, ps->nodes[tops.node[1]].line,
                       "%d bodies in <worldbody> (%s, %s, ...) and %d with a free joint: expected one robot",
                       tops.n, node_desc(ps, tops.node[0], d0, sizeof d0), node_desc(ps, tops.node[1], d1, sizeof d1),
                       n_free);
            goto fail;
        }
    }

    b.link_loc = calloc(KIN_MAX_LINKS, sizeof *b.link_loc);
    b.joint_loc = calloc(KIN_MAX_LINKS, sizeof *b.joint_loc);
    b.bj = calloc(KIN_MAX_LINKS, sizeof *b.bj);
    if (!b.link_loc || !b.joint_loc || !b.bj || !(b.r = calloc(1, sizeof *b.r))) goto oom;
    /* The placement matters only when the root hangs below "world". */
    if (!frame_attrs(&b, tops.node[root], &own)) goto fail;
    xf_mul(&tops.fr[root], &own, &pose);
    if (!build_body(&b, tops.node[root], -1, &pose, tops.cc[root])) goto fail;
    if (!check_unique(&b, 0) || !check_unique(&b, 1)) goto fail;
    if (!(b.r->name = model_name(ps))) goto oom;
    if (!(b.r->coord_joint = calloc((size_t)b.r->n_dof + 1, sizeof *b.r->coord_joint))) goto oom;
    for (int j = 0; j < b.r->n_joints; j++)
        if (b.r->joints[j].coord >= 0) b.r->coord_joint[b.r->joints[j].coord] = j;
    if (kin_robot_finish(b.r) != RT_OK) goto oom;
    *out = b.r;
    b.r = NULL;

fail:
    kin_robot_free(b.r);
    free(tops.node);
    free(tops.cc);
    free(tops.fr);
    free(b.classes);
    free(b.link_loc);
    free(b.joint_loc);
    free(b.bj);
    return ps->status;
oom:
    mj_fail_at(ps, RT_ENOMEM, 0, 0, "out of memory");
    goto fail;
}

/* Parses `len` bytes of MJCF (no NUL needed) into a new robot in *out
 * (robot.h). On failure *out is NULL, nothing is left allocated, and `err`
 * says "name:LINE" (or "INCLUDED-FILE:LINE") and what is wrong: RT_EPARSE
 * for bad or unsupported input, RT_ELIMIT past a documented limit, RT_EIO
 * for an include that cannot be read, RT_ENOMEM. */
enum rt_status kin_robot_parse_mjcf(const char *text, size_t len, const char *name,
                                    const char *base_dir, struct kin_robot **out,
                                    struct rt_err *err)
{
    struct mj_parse *ps;
    const char *label = name && name[0] ? name : "mjcf";
    int st;
    *out = NULL;
    if (!text && len) return rt_err_set(err, RT_EINVAL, label, "no MJCF text");
    if (len > KIN_URDF_MAX_BYTES)
        return rt_err_set(err, RT_ELIMIT, label, "MJCF larger than %u bytes", KIN_URDF_MAX_BYTES);
    /* On the heap: the element stack makes it a few KiB. */
    if (!(ps = calloc(1, sizeof *ps)) || !(ps->files[0] = strdup(label))) {
        free(ps);
        return rt_err_set(err, RT_ENOMEM, label, "out of memory");
    }
    ps->n_files = 1;
    ps->err = err;
    ps->base_dir = base_dir;
    ps->bytes = len;
    if (!(ps->xp = XML_ParserCreate(NULL))) {
        parse_free(ps);
        free(ps);
        return rt_err_set(err, RT_ENOMEM, label, "out of memory");
    }
    XML_SetUserData(ps->xp, ps);
    XML_SetElementHandler(ps->xp, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(ps->xp, on_doctype);
    if (XML_Parse(ps->xp, text ? text : "", (int)len, XML_TRUE) != XML_STATUS_OK && ps->status == RT_OK) {
        enum XML_Error code = XML_GetErrorCode(ps->xp);
        mj_fail(ps, code == XML_ERROR_NO_MEMORY ? RT_ENOMEM : RT_EPARSE, "XML: %s", XML_ErrorString(code));
    }
    XML_ParserFree(ps->xp);
    ps->xp = NULL;
    if (ps->status == RT_OK) build_robot(ps, out);
    st = ps->status;
    parse_free(ps);
    free(ps);
    return st;
}
