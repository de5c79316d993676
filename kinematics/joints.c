/* joints.c -- joint-position sources: .npz (libzip), .npy, CSV (see
 * joints.h). */
#include "joints.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "../base/num.h"

void kin_joints_free(struct kin_joints *j)
{
    if (!j) return;
    for (int i = 0; j->names && i < j->n_joints; i++) free(j->names[i]);
    free(j->names);
    free(j->parent);
    free(j->pos);
    free(j);
}

/* --- the SMPL / SMPL-X tree ------------------------------------------------- */

/* name, parent: SMPL-X's body (its first 22 joints are SMPL's), SMPL's two
 * hand joints, SMPL-X's jaw and eyes; fingers are matched by pattern. */
static const char *const smpl_tree[][2] = {
    {"pelvis", NULL},
    {"left_hip", "pelvis"},         {"right_hip", "pelvis"},        {"spine1", "pelvis"},
    {"left_knee", "left_hip"},      {"right_knee", "right_hip"},    {"spine2", "spine1"},
    {"left_ankle", "left_knee"},    {"right_ankle", "right_knee"},  {"spine3", "spine2"},
    {"left_foot", "left_ankle"},    {"right_foot", "right_ankle"},  {"neck", "spine3"},
    {"left_collar", "spine3"},      {"right_collar", "spine3"},     {"head", "neck"},
    {"left_shoulder", "left_collar"}, {"right_shoulder", "right_collar"},
    {"left_elbow", "left_shoulder"}, {"right_elbow", "right_shoulder"},
    {"left_wrist", "left_elbow"},   {"right_wrist", "right_elbow"},
    {"left_hand", "left_wrist"},    {"right_hand", "right_wrist"},
    {"jaw", "head"},                {"left_eye_smplhf", "head"},    {"right_eye_smplhf", "head"},
};

/* The finger joints of SMPL-X (and MANO), [side][finger][1..3]. */
static const char *const finger_names[2][5][3] = {
    {{"left_index1", "left_index2", "left_index3"}, {"left_middle1", "left_middle2", "left_middle3"}, {"left_pinky1", "left_pinky2", "left_pinky3"}, {"left_ring1", "left_ring2", "left_ring3"}, {"left_thumb1", "left_thumb2", "left_thumb3"}},
    {{"right_index1", "right_index2", "right_index3"}, {"right_middle1", "right_middle2", "right_middle3"}, {"right_pinky1", "right_pinky2", "right_pinky3"}, {"right_ring1", "right_ring2", "right_ring3"}, {"right_thumb1", "right_thumb2", "right_thumb3"}},
};

const char *kin_joints_smpl_parent(const char *name)
{
    for (size_t i = 0; i < sizeof smpl_tree / sizeof smpl_tree[0]; i++)
        if (!strcmp(name, smpl_tree[i][0])) return smpl_tree[i][1];
    /* left_index1 -> left_wrist, left_index2 -> left_index1, ... */
    for (int side = 0; side < 2; side++)
        for (int f = 0; f < 5; f++)
            for (int k = 0; k < 3; k++)
                if (!strcmp(name, finger_names[side][f][k]))
                    return k ? finger_names[side][f][k - 1] : side ? "right_wrist" : "left_wrist";
    return NULL;
}

int kin_joints_is_smpl(const char *name)
{
    return !strcmp(name, "pelvis") || kin_joints_smpl_parent(name) != NULL;
}

/* --- .npy ------------------------------------------------------------------- */

/* One parsed .npy: its dtype (kind 'f', 'i', 'u', 'U', 'S', 'O' or 'b'
 * and item size), shape and data. */
struct npy {
    char kind;
    int item, nd;
    size_t shape[4], count;
    const unsigned char *data;
};

/* Parses the .npy at data[0..len): RT_EPARSE naming `where`. */
static enum rt_status npy_parse(const unsigned char *data, size_t len, const char *where, struct npy *a,
                                struct rt_err *err)
{
    char hdr[1024];
    size_t hl, pre;
    memset(a, 0, sizeof *a);
    if (len < 10 || memcmp(data, "\x93NUMPY", 6)) return rt_err_set(err, RT_EPARSE, where, "not an .npy array");
    if (data[6] == 1) hl = (size_t)data[8] | (size_t)data[9] << 8, pre = 10;
    else if ((data[6] == 2 || data[6] == 3) && len >= 12)
        hl = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 | (size_t)data[11] << 24, pre = 12;
    else return rt_err_set(err, RT_EPARSE, where, ".npy format version %d is not read", data[6]);
    if (hl >= sizeof hdr || hl > len - pre) return rt_err_set(err, RT_EPARSE, where, "damaged .npy header");
    memcpy(hdr, data + pre, hl);
    hdr[hl] = 0;
    const char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"), *sh = strstr(hdr, "'shape':");
    if (!d || !fo || !sh) return rt_err_set(err, RT_EPARSE, where, "damaged .npy header");
    d = strchr(d + 8, '\'');
    if (!d) return rt_err_set(err, RT_EPARSE, where, "damaged .npy header");
    d++;
    /* '<f8', '|u1', '<U12', '|S12', '|O': little endian or no byte order. */
    if (d[0] == '>') return rt_err_set(err, RT_EPARSE, where, "big-endian arrays are not read");
    if (d[0] != '<' && d[0] != '|' && d[0] != '=') return rt_err_set(err, RT_EPARSE, where, "dtype '%s' is not read", RT_QUOTE(d));
    a->kind = d[1];
    if (a->kind == 'O') return rt_err_set(err, RT_EPARSE, where, "object arrays (pickles) are not read: save names as a string array");
    long long item;
    char num[16];
    size_t k = 0;
    for (const char *p = d + 2; *p >= '0' && *p <= '9' && k < sizeof num - 1; p++) num[k++] = *p;
    num[k] = 0;
    if (!rt_parse_int(num, 1, 1 << 20, &item) || !strchr("fiuUSb", a->kind))
        return rt_err_set(err, RT_EPARSE, where, "dtype '%s' is not read", RT_QUOTE(d - 1));
    a->item = (int)item * (a->kind == 'U' ? 4 : 1);
    const char *f = fo + 16;
    while (*f == ' ') f++;
    if (!strncmp(f, "True", 4)) return rt_err_set(err, RT_EPARSE, where, "Fortran-order arrays are not read");
    const char *s = strchr(sh, '(');
    if (!s) return rt_err_set(err, RT_EPARSE, where, "damaged .npy header");
    s++;
    a->count = 1;
    while (*s && *s != ')') {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ')') break;
        if (a->nd == 4) return rt_err_set(err, RT_EPARSE, where, "more than 4 dimensions");
        k = 0;
        while (*s >= '0' && *s <= '9' && k < sizeof num - 1) num[k++] = *s++;
        num[k] = 0;
        long long v;
        if (!rt_parse_int(num, 0, 1ll << 40, &v)) return rt_err_set(err, RT_EPARSE, where, "damaged .npy shape");
        a->shape[a->nd++] = (size_t)v;
        if (!rt_mul_size(a->count, (size_t)v, &a->count)) return rt_err_set(err, RT_ELIMIT, where, "array too large");
        while (*s == ' ' || *s == 'L') s++;
        if (*s != ',' && *s != ')') return rt_err_set(err, RT_EPARSE, where, "damaged .npy shape");
    }
    size_t bytes;
    if (!rt_mul_size(a->count, (size_t)a->item, &bytes) || bytes > len - pre - hl)
        return rt_err_set(err, RT_EPARSE, where, "the array is cut short (%zu elements of %d bytes)", a->count, a->item);
    a->data = data + pre + hl;
    return RT_OK;
}

/* Element i of a numeric array as a double; 0 for other kinds. */
static double npy_num(const struct npy *a, size_t i)
{
    const unsigned char *p = a->data + i * (size_t)a->item;
    if (a->kind == 'f' && a->item == 8) {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    if (a->kind == 'f' && a->item == 4) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    if (a->kind == 'i' || a->kind == 'u') {
        uint64_t u = 0;
        for (int b = a->item - 1; b >= 0; b--) u = u << 8 | p[b];
        if (a->kind == 'i' && a->item < 8 && (u >> (a->item * 8 - 1) & 1)) u |= ~0ull << (a->item * 8);
        return a->kind == 'i' ? (double)(int64_t)u : (double)u;
    }
    return 0;
}

static struct kin_joints *joints_new(int n_joints, int n_frames)
{
    struct kin_joints *j = calloc(1, sizeof *j);
    size_t n;
    if (!j) return NULL;
    j->n_joints = n_joints;
    j->n_frames = n_frames;
    j->names = calloc((size_t)n_joints, sizeof *j->names);
    j->parent = malloc((size_t)n_joints * sizeof *j->parent);
    if (rt_mul_size((size_t)n_joints * 3, (size_t)n_frames, &n) && rt_mul_size(n, sizeof(double), &n))
        j->pos = malloc(n ? n : 1);
    if (!j->names || !j->parent || !j->pos) {
        kin_joints_free(j);
        return NULL;
    }
    for (int i = 0; i < n_joints; i++) j->parent[i] = -2; /* not given */
    return j;
}

/* Checks the sizes of a (T, J, 3) position array and copies it in. */
static enum rt_status joints_from_array(const struct npy *a, const char *where, struct kin_joints **out,
                                        struct rt_err *err)
{
    *out = NULL;
    if (a->kind != 'f' || (a->item != 4 && a->item != 8))
        return rt_err_set(err, RT_EPARSE, where, "positions must be float32 or float64");
    if (a->nd != 3 || a->shape[2] != 3) {
        char sh[64] = "";
        size_t u = 0;
        for (int i = 0; i < a->nd; i++) u += (size_t)snprintf(sh + u, sizeof sh - u, "%s%zu", i ? ", " : "", a->shape[i]);
        return rt_err_set(err, RT_EPARSE, where, "shape (%s) is not (T, J, 3)", sh);
    }
    if (a->shape[0] < 1) return rt_err_set(err, RT_EINVAL, where, "no frames");
    if (a->shape[0] > KIN_JOINTS_MAX_FRAMES)
        return rt_err_set(err, RT_ELIMIT, where, "%zu frames: the limit is %d", a->shape[0], KIN_JOINTS_MAX_FRAMES);
    if (a->shape[1] < 1 || a->shape[1] > KIN_JOINTS_MAX_JOINTS)
        return rt_err_set(err, RT_ELIMIT, where, "%zu joints: between 1 and %d", a->shape[1], KIN_JOINTS_MAX_JOINTS);
    struct kin_joints *j = joints_new((int)a->shape[1], (int)a->shape[0]);
    if (!j) return rt_err_set(err, RT_ENOMEM, where, "out of memory");
    for (size_t i = 0; i < a->count; i++) {
        j->pos[i] = npy_num(a, i);
        if (!isfinite(j->pos[i])) {
            kin_joints_free(j);
            return rt_err_set(err, RT_EINVAL, where, "frame %zu joint %zu: not a finite number", i / (a->shape[1] * 3),
                              i / 3 % a->shape[1]);
        }
    }
    *out = j;
    return RT_OK;
}

/* Checks a name: non-empty, short, no control characters, not repeated. */
static enum rt_status name_check(struct kin_joints *j, int i, const char *where, struct rt_err *err)
{
    const char *n = j->names[i];
    if (!n[0]) return rt_err_set(err, RT_EINVAL, where, "joint %d has an empty name", i);
    if (strlen(n) > KIN_JOINTS_MAX_NAME) return rt_err_set(err, RT_ELIMIT, where, "joint %d: name longer than %d bytes", i, KIN_JOINTS_MAX_NAME);
    for (const unsigned char *p = (const unsigned char *)n; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return rt_err_set(err, RT_EINVAL, where, "joint %d: control character in its name", i);
    for (int k = 0; k < i; k++)
        if (!strcmp(j->names[k], n)) return rt_err_set(err, RT_EINVAL, where, "joint name '%s' repeated", RT_QUOTE(n));
    return RT_OK;
}

/* Parents by the SMPL tree for the names it knows; every other joint (not
 * given one) hangs from the root: "pelvis" when there is one, else joint 0. */
static void parents_default(struct kin_joints *j)
{
    int root = 0;
    for (int i = 0; i < j->n_joints; i++)
        if (!strcmp(j->names[i], "pelvis")) root = i;
    for (int i = 0; i < j->n_joints; i++) {
        if (j->parent[i] != -2) continue;
        const char *p = kin_joints_smpl_parent(j->names[i]);
        j->parent[i] = i == root ? -1 : root;
        for (int k = 0; p && k < j->n_joints; k++)
            if (!strcmp(j->names[k], p)) j->parent[i] = k;
    }
}

/* One string of a 'U' (UTF-32LE) or 'S' array, as UTF-8, into buf. */
static void npy_string(const struct npy *a, size_t i, char *buf, size_t cap)
{
    const unsigned char *p = a->data + i * (size_t)a->item;
    size_t o = 0;
    if (a->kind == 'S') {
        for (int k = 0; k < a->item && p[k] && o + 1 < cap; k++) buf[o++] = (char)p[k];
    } else {
        for (int k = 0; k + 4 <= a->item; k += 4) {
            uint32_t c = (uint32_t)p[k] | (uint32_t)p[k + 1] << 8 | (uint32_t)p[k + 2] << 16 | (uint32_t)p[k + 3] << 24;
            if (!c) break;
            if (c < 0x80 && o + 1 < cap) buf[o++] = (char)c;
            else if (c < 0x800 && o + 2 < cap) buf[o++] = (char)(0xc0 | c >> 6), buf[o++] = (char)(0x80 | (c & 0x3f));
            else if (c < 0x10000 && o + 3 < cap)
                buf[o++] = (char)(0xe0 | c >> 12), buf[o++] = (char)(0x80 | (c >> 6 & 0x3f)), buf[o++] = (char)(0x80 | (c & 0x3f));
            else if (o + 4 < cap)
                buf[o++] = (char)(0xf0 | c >> 18), buf[o++] = (char)(0x80 | (c >> 12 & 0x3f)),
                buf[o++] = (char)(0x80 | (c >> 6 & 0x3f)), buf[o++] = (char)(0x80 | (c & 0x3f));
        }
    }
    buf[o] = 0;
}

enum rt_status kin_joints_parse_npy(const void *data, size_t len, const char *names, size_t names_len,
                                    const char *label, struct kin_joints **out, struct rt_err *err)
{
    struct npy a;
    enum rt_status st;
    *out = NULL;
    if (!names) return rt_err_set(err, RT_EINVAL, label, "an .npy array needs its joint names (one a line)");
    if (len > KIN_JOINTS_MAX_BYTES) return rt_err_set(err, RT_ELIMIT, label, "larger than %u bytes", KIN_JOINTS_MAX_BYTES);
    if ((st = npy_parse(data, len, label, &a, err)) != RT_OK) return st;
    struct kin_joints *j = NULL;
    if ((st = joints_from_array(&a, label, &j, err)) != RT_OK) return st;
    int n = 0;
    size_t i = 0;
    char where[112];
    snprintf(where, sizeof where, "%s:names", label);
    while (i < names_len) {
        size_t e = i;
        while (e < names_len && names[e] != '\n') e++;
        size_t l = e;
        while (l > i && (names[l - 1] == '\r' || names[l - 1] == ' ' || names[l - 1] == '\t')) l--;
        while (i < l && (names[i] == ' ' || names[i] == '\t')) i++;
        if (l > i) {
            if (n == j->n_joints) {
                st = rt_err_set(err, RT_EINVAL, where, "more names than the %d joints of the array", j->n_joints);
                goto fail;
            }
            if (!(j->names[n] = strndup(names + i, l - i))) {
                st = rt_err_set(err, RT_ENOMEM, label, "out of memory");
                goto fail;
            }
            if ((st = name_check(j, n, where, err)) != RT_OK) goto fail;
            n++;
        }
        i = e + 1;
    }
    if (n != j->n_joints) {
        st = rt_err_set(err, RT_EINVAL, where, "%d names for the %d joints of the array", n, j->n_joints);
        goto fail;
    }
    parents_default(j);
    *out = j;
    return RT_OK;
fail:
    kin_joints_free(j);
    return st;
}

/* --- .npz ------------------------------------------------------------------- */

/* Member `key`.npy of the archive into a malloc'd buffer (*buf, *len);
 * RT_ENOTFOUND (no message) when absent. */
static enum rt_status zip_member(zip_t *za, const char *key, const char *label, unsigned char **buf, size_t *len,
                                 struct rt_err *err)
{
    char name[64], where[112];
    zip_stat_t zs;
    snprintf(name, sizeof name, "%s.npy", key);
    snprintf(where, sizeof where, "%s:%s", label, key);
    *buf = NULL;
    zip_int64_t idx = zip_name_locate(za, name, 0);
    if (idx < 0) return RT_ENOTFOUND;
    if (zip_stat_index(za, (zip_uint64_t)idx, 0, &zs) < 0 || !(zs.valid & ZIP_STAT_SIZE))
        return rt_err_set(err, RT_EPARSE, where, "damaged archive member");
    if (zs.size > KIN_JOINTS_MAX_BYTES)
        return rt_err_set(err, RT_ELIMIT, where, "larger than %u bytes", KIN_JOINTS_MAX_BYTES);
    zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)idx, 0);
    if (!zf) return rt_err_set(err, RT_EPARSE, where, "libzip: %s", zip_strerror(za));
    *buf = malloc(zs.size ? zs.size : 1);
    zip_int64_t got = *buf ? zip_fread(zf, *buf, zs.size) : -1;
    zip_fclose(zf);
    if (!*buf) return rt_err_set(err, RT_ENOMEM, where, "out of memory");
    if (got < 0 || (zip_uint64_t)got != zs.size) {
        free(*buf);
        *buf = NULL;
        return rt_err_set(err, RT_EPARSE, where, "damaged archive member");
    }
    *len = zs.size;
    return RT_OK;
}

enum rt_status kin_joints_parse_npz(const void *data, size_t len, const char *label, struct kin_joints **out,
                                    struct rt_err *err)
{
    zip_error_t ze;
    zip_source_t *src;
    zip_t *za = NULL;
    unsigned char *pb = NULL, *nb = NULL, *fb = NULL, *rb = NULL;
    size_t pl = 0, nl = 0, fl = 0, rl = 0;
    struct kin_joints *j = NULL;
    struct npy a;
    enum rt_status st;
    char where[112];
    *out = NULL;
    if (len > KIN_JOINTS_MAX_BYTES) return rt_err_set(err, RT_ELIMIT, label, "larger than %u bytes", KIN_JOINTS_MAX_BYTES);
    zip_error_init(&ze);
    if (!(src = zip_source_buffer_create(data, len, 0, &ze)) || !(za = zip_open_from_source(src, ZIP_RDONLY, &ze))) {
        st = rt_err_set(err, RT_EPARSE, label, "not an .npz archive (libzip: %s)", zip_error_strerror(&ze));
        zip_source_free(src);
        zip_error_fini(&ze);
        return st;
    }
    zip_error_fini(&ze);
    const char *pkey = "joints";
    st = zip_member(za, pkey, label, &pb, &pl, err);
    if (st == RT_ENOTFOUND) st = zip_member(za, pkey = "positions", label, &pb, &pl, err);
    if (st == RT_ENOTFOUND) {
        st = rt_err_set(err, RT_EPARSE, label, "no `joints` (or `positions`) array in the archive");
        goto done;
    }
    if (st != RT_OK) goto done;
    snprintf(where, sizeof where, "%s:%s", label, pkey);
    if ((st = npy_parse(pb, pl, where, &a, err)) != RT_OK || (st = joints_from_array(&a, where, &j, err)) != RT_OK)
        goto done;
    /* joint_names */
    snprintf(where, sizeof where, "%s:joint_names", label);
    st = zip_member(za, "joint_names", label, &nb, &nl, err);
    if (st == RT_ENOTFOUND) st = rt_err_set(err, RT_EPARSE, label, "no `joint_names` array in the archive");
    if (st != RT_OK || (st = npy_parse(nb, nl, where, &a, err)) != RT_OK) goto done;
    if (a.kind != 'U' && a.kind != 'S') {
        st = rt_err_set(err, RT_EPARSE, where, "expected an array of strings");
        goto done;
    }
    if (a.nd != 1 || a.shape[0] != (size_t)j->n_joints) {
        st = rt_err_set(err, RT_EINVAL, where, "%zu names for the %d joints of `%s`", a.count, j->n_joints, pkey);
        goto done;
    }
    for (int i = 0; i < j->n_joints; i++) {
        char name[4 * KIN_JOINTS_MAX_NAME + 8];
        npy_string(&a, (size_t)i, name, sizeof name);
        if (!(j->names[i] = strdup(name))) {
            st = rt_err_set(err, RT_ENOMEM, label, "out of memory");
            goto done;
        }
        if ((st = name_check(j, i, where, err)) != RT_OK) goto done;
    }
    /* fps (optional) */
    snprintf(where, sizeof where, "%s:fps", label);
    st = zip_member(za, "fps", label, &fb, &fl, err);
    if (st == RT_OK) {
        if ((st = npy_parse(fb, fl, where, &a, err)) != RT_OK) goto done;
        double fps = a.count == 1 && strchr("fiu", a.kind) ? npy_num(&a, 0) : -1;
        if (!(fps > 0) || fps > 10000) {
            st = rt_err_set(err, RT_EINVAL, where, "expected one frame rate in (0, 10000]");
            goto done;
        }
        j->fps = fps;
    } else if (st != RT_ENOTFOUND) goto done;
    /* parents (optional) */
    snprintf(where, sizeof where, "%s:parents", label);
    st = zip_member(za, "parents", label, &rb, &rl, err);
    if (st == RT_OK) {
        if ((st = npy_parse(rb, rl, where, &a, err)) != RT_OK) goto done;
        if ((a.kind != 'i' && a.kind != 'u') || a.nd != 1 || a.shape[0] != (size_t)j->n_joints) {
            st = rt_err_set(err, RT_EINVAL, where, "expected %d integers", j->n_joints);
            goto done;
        }
        for (int i = 0; i < j->n_joints; i++) {
            double p = npy_num(&a, (size_t)i);
            if (p < -1 || p >= j->n_joints || p == i) {
                st = rt_err_set(err, RT_EINVAL, where, "joint %d: parent %.0f is not -1 or another joint", i, p);
                goto done;
            }
            j->parent[i] = (int)p;
        }
        /* No cycles: following parents from any joint reaches a root. */
        for (int i = 0; i < j->n_joints; i++) {
            int k = i, steps = 0;
            while (k >= 0 && steps <= j->n_joints) k = j->parent[k], steps++;
            if (k >= 0) {
                st = rt_err_set(err, RT_EINVAL, where, "the parents of joint %d form a cycle", i);
                goto done;
            }
        }
    } else if (st != RT_ENOTFOUND) goto done;
    st = RT_OK;
    parents_default(j);
    *out = j;
    j = NULL;
done:
    zip_discard(za); /* frees the source too */
    free(pb);
    free(nb);
    free(fb);
    free(rb);
    kin_joints_free(j);
    return st;
}

/* --- CSV -------------------------------------------------------------------- */

/* The next line of text[*at..len) (without its end) into [*b, *e). 0 at the end. */
static int next_line(const char *text, size_t len, size_t *at, size_t *b, size_t *e)
{
    if (*at >= len) return 0;
    *b = *at;
    size_t i = *at;
    while (i < len && text[i] != '\n') i++;
    *at = i + 1;
    *e = i;
    if (*e > *b && text[*e - 1] == '\r') (*e)--;
    return 1;
}

/* 1 when field [b, e) ends in `suffix` (2 chars). */
static int ends_with(const char *b, size_t n, const char *suffix)
{
    return n > 2 && b[n - 2] == suffix[0] && b[n - 1] == suffix[1];
}

static int skip_column(const char *f, size_t n)
{
    return (n == 5 && !strncmp(f, "frame", 5)) || (n == 4 && !strncmp(f, "time", 4)) || (n == 1 && f[0] == 't');
}

/* Splits the header line [b, e) into fields (pointers into text). */
static int split_fields(const char *text, size_t b, size_t e, const char **f, size_t *fl, int cap)
{
    int n = 0;
    size_t i = b;
    for (;;) {
        size_t s = i;
        while (i < e && text[i] != ',') i++;
        size_t s2 = s, e2 = i;
        while (s2 < e2 && (text[s2] == ' ' || text[s2] == '"')) s2++;
        while (e2 > s2 && (text[e2 - 1] == ' ' || text[e2 - 1] == '"')) e2--;
        if (n == cap) return -1;
        f[n] = text + s2;
        fl[n++] = e2 - s2;
        if (i >= e) break;
        i++;
    }
    return n;
}

int kin_joints_is_csv(const char *text, size_t len)
{
    enum { CAP = 3 * KIN_JOINTS_MAX_JOINTS + 1 };
    static const char *const axes[3] = {"_x", "_y", "_z"};
    size_t at = 0, b, e, *fl = malloc(CAP * sizeof *fl);
    const char **f = malloc(CAP * sizeof *f);
    int yes = 0;
    if (f && fl && next_line(text, len, &at, &b, &e)) {
        if (e - b >= 3 && !memcmp(text + b, "\xef\xbb\xbf", 3)) b += 3;
        int n = split_fields(text, b, e, f, fl, CAP);
        int k = n > 0 && skip_column(f[0], fl[0]);
        /* Every column after the optional first is in a NAME_x,NAME_y,NAME_z
         * triple (a trajectory's root_x,root_y,root_z,root_qx is not). */
        yes = n > 0 && n - k >= 3 && (n - k) % 3 == 0;
        for (int c = k; yes && c < n; c++) {
            const char *c0 = f[k + (c - k) / 3 * 3];
            size_t n0 = fl[k + (c - k) / 3 * 3];
            yes = ends_with(f[c], fl[c], axes[(c - k) % 3]) && fl[c] == n0 && !memcmp(f[c], c0, n0 - 2);
        }
    }
    free(f);
    free(fl);
    return yes;
}

enum rt_status kin_joints_parse_csv(const char *text, size_t len, const char *label, struct kin_joints **out,
                                    struct rt_err *err)
{
    enum { CAP = 3 * KIN_JOINTS_MAX_JOINTS + 1 };
    const char **f = NULL;
    size_t *fl = NULL, at = 0, b, e;
    struct kin_joints *j = NULL;
    enum rt_status st = RT_OK;
    char where[112];
    int line = 1;
    *out = NULL;
    if (len > KIN_JOINTS_MAX_BYTES) return rt_err_set(err, RT_ELIMIT, label, "larger than %u bytes", KIN_JOINTS_MAX_BYTES);
    f = malloc(CAP * sizeof *f);
    fl = malloc(CAP * sizeof *fl);
    if (!f || !fl) {
        st = rt_err_set(err, RT_ENOMEM, label, "out of memory");
        goto done;
    }
    snprintf(where, sizeof where, "%s:1", label);
    if (!next_line(text, len, &at, &b, &e)) {
        st = rt_err_set(err, RT_EPARSE, where, "empty file");
        goto done;
    }
    if (e - b >= 3 && !memcmp(text + b, "\xef\xbb\xbf", 3)) b += 3;
    int n = split_fields(text, b, e, f, fl, CAP);
    if (n < 0) {
        st = rt_err_set(err, RT_ELIMIT, where, "more than %d joints", KIN_JOINTS_MAX_JOINTS);
        goto done;
    }
    int skip = n > 0 && skip_column(f[0], fl[0]);
    if ((n - skip) % 3 || n - skip < 3) {
        st = rt_err_set(err, RT_EPARSE, where, "expected NAME_x,NAME_y,NAME_z column triples, got %d columns", n - skip);
        goto done;
    }
    int nj = (n - skip) / 3;
    /* Count the data rows first, to allocate once. */
    size_t at2 = at;
    long rows = 0;
    while (next_line(text, len, &at2, &b, &e))
        if (e > b) rows++;
    if (rows < 1) {
        st = rt_err_set(err, RT_EINVAL, label, "no frames");
        goto done;
    }
    if (rows > KIN_JOINTS_MAX_FRAMES) {
        st = rt_err_set(err, RT_ELIMIT, label, "%ld frames: the limit is %d", rows, KIN_JOINTS_MAX_FRAMES);
        goto done;
    }
    if (!(j = joints_new(nj, (int)rows))) {
        st = rt_err_set(err, RT_ENOMEM, label, "out of memory");
        goto done;
    }
    static const char *const axes[3] = {"_x", "_y", "_z"};
    for (int k = 0; k < nj; k++) {
        const char *c0 = f[skip + 3 * k];
        size_t n0 = fl[skip + 3 * k];
        for (int a = 0; a < 3; a++) {
            const char *c = f[skip + 3 * k + a];
            size_t cl = fl[skip + 3 * k + a];
            if (!ends_with(c, cl, axes[a]) || cl != n0 || memcmp(c, c0, n0 - 2)) {
                st = rt_err_set(err, RT_EPARSE, where, "column '%.*s' should be '%.*s%s'", (int)(cl > 60 ? 60 : cl), c,
                                (int)(n0 - 2 > 60 ? 60 : n0 - 2), c0, axes[a]);
                goto done;
            }
        }
        if (!(j->names[k] = strndup(c0, n0 - 2))) {
            st = rt_err_set(err, RT_ENOMEM, label, "out of memory");
            goto done;
        }
        if ((st = name_check(j, k, where, err)) != RT_OK) goto done;
    }
    int t = 0;
    while (next_line(text, len, &at, &b, &e)) {
        line++;
        if (e == b) continue;
        snprintf(where, sizeof where, "%s:%d", label, line);
        int c = 0;
        size_t i = b;
        for (;;) {
            size_t s = i;
            while (i < e && text[i] != ',') i++;
            if (c >= skip && c < n) {
                char num[64];
                double v;
                size_t nn = i - s;
                while (nn && text[s] == ' ') s++, nn--;
                while (nn && text[s + nn - 1] == ' ') nn--;
                if (nn >= sizeof num) nn = sizeof num - 1;
                memcpy(num, text + s, nn);
                num[nn] = 0;
                if (!rt_parse_real(num, &v)) {
                    st = rt_err_set(err, RT_EPARSE, where, "bad number '%s'", RT_QUOTE(num));
                    goto done;
                }
                j->pos[(size_t)t * (size_t)nj * 3 + (size_t)(c - skip)] = v;
            }
            c++;
            if (i >= e) break;
            i++;
        }
        if (c != n) {
            st = rt_err_set(err, RT_EPARSE, where, "row has %d values, expected %d", c, n);
            goto done;
        }
        t++;
    }
    parents_default(j);
    *out = j;
    j = NULL;
done:
    kin_joints_free(j);
    free(f);
    free(fl);
    return st;
}

enum rt_status kin_joints_parse(const void *data, size_t len, const char *names, size_t names_len,
                                const char *label, struct kin_joints **out, struct rt_err *err)
{
    if (len >= 4 && !memcmp(data, "PK\x03\x04", 4)) return kin_joints_parse_npz(data, len, label, out, err);
    if (len >= 6 && !memcmp(data, "\x93NUMPY", 6))
        return kin_joints_parse_npy(data, len, names, names_len, label, out, err);
    return kin_joints_parse_csv(data, len, label, out, err);
}

/* --- the skeleton view -------------------------------------------------------- */

enum rt_status kin_joints_skeleton(const struct kin_joints *j, struct kin_clip **out, int **order,
                                   struct rt_err *err)
{
    int n = j->n_joints, *ord = malloc((size_t)n * sizeof *ord), *pos_of = malloc((size_t)n * sizeof *pos_of);
    struct kin_clip *c = calloc(1, sizeof *c);
    *out = NULL;
    if (order) *order = NULL;
    if (!ord || !pos_of || !c || !(c->joints = calloc((size_t)n, sizeof *c->joints))) goto oom;
    c->n_joints = n; /* names filled below; kin_clip_free() frees those set */
    /* Order: the first root, then repeatedly every joint whose parent is
     * placed (breadth by passes); roots after the first hang from it. */
    int placed = 0, root = -1;
    for (int i = 0; i < n; i++) pos_of[i] = -1;
    for (int i = 0; i < n && root < 0; i++)
        if (j->parent[i] < 0) root = i;
    if (root < 0) root = 0;
    ord[placed] = root, pos_of[root] = placed++;
    while (placed < n) {
        int before = placed;
        for (int i = 0; i < n; i++) {
            if (pos_of[i] >= 0) continue;
            int p = j->parent[i];
            if (p < 0 || pos_of[p] >= 0) ord[placed] = i, pos_of[i] = placed++;
        }
        if (placed == before) /* unreachable after the cycle check; hang the rest from the root */
            for (int i = 0; i < n; i++)
                if (pos_of[i] < 0) ord[placed] = i, pos_of[i] = placed++;
    }
    c->frame_time = j->fps > 0 ? 1.0 / j->fps : 1.0 / 30.0;
    for (int k = 0; k < n; k++) {
        int i = ord[k], p = j->parent[i];
        struct kin_bvh_joint *bj = &c->joints[k];
        if (!(bj->name = strdup(j->names[i]))) goto oom;
        bj->parent = k == 0 ? -1 : p < 0 ? 0 : pos_of[p];
        int pi = k == 0 ? -1 : p < 0 ? root : p;
        for (int a = 0; a < 3; a++) bj->offset[a] = j->pos[(size_t)i * 3 + a] - (pi >= 0 ? j->pos[(size_t)pi * 3 + a] : 0);
        for (int a = 0; a < 6; a++) bj->chan[a] = -1;
    }
    free(pos_of);
    if (order) *order = ord;
    else free(ord);
    *out = c;
    return RT_OK;
oom:
    free(ord);
    free(pos_of);
    kin_clip_free(c);
    return rt_err_set(err, RT_ENOMEM, "joints", "out of memory");
}
