/* joints_util.h -- joint-position sources for the tests that submit or
 * batch them (test_http_jobs, test_http_bad, test_batch_cli): the world
 * positions of a BVH clip's joints and End Sites under their own names
 * (kin_clip_global(), file units and axes, as kinematics/joints.h reads
 * them back), as CSV text, as .npy bytes of any dtype and shape, and as an
 * .npz written with libzip (`joints`, `joint_names`, `fps`), as numpy's
 * np.save and np.savez lay them out.
 *
 * Memory: every function returning a pointer returns malloc'd bytes the
 * caller frees. */
#ifndef RT_TEST_JOINTS_UTIL_H
#define RT_TEST_JOINTS_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "../kinematics/bvh.h"
#include "test.h"

/* An .npy (format 1.0) of dtype `descr` ("<f8", "<i4", "<U12"), the `nd`
 * dimensions of `shape`, and the raw element bytes data[0..data_len). */
static inline char *test_npy(const char *descr, const int *shape, int nd, const void *data, size_t data_len,
                             size_t *len)
{
    char hdr[256], sh[96] = "";
    size_t k = 0;
    for (int i = 0; i < nd; i++) k += (size_t)snprintf(sh + k, sizeof sh - k, "%d%s", shape[i], nd == 1 ? "," : i + 1 < nd ? ", " : "");
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh);
    /* Padded with blanks to a multiple of 64 bytes in all, ending in '\n'. */
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64, hl = total - 10;
    char *out = malloc(total + data_len);
    if (!out) return NULL;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)(hl & 0xff);
    out[9] = (char)(hl >> 8);
    memcpy(out + 10, hdr, (size_t)n);
    memset(out + 10 + n, ' ', hl - (size_t)n - 1);
    out[total - 1] = '\n';
    if (data_len) memcpy(out + total, data, data_len);
    *len = total + data_len;
    return out;
}

/* Frames [0, n_frames) of clip `c` (all of them when n_frames <= 0 or
 * more than it has) as world positions: *pos gets n_frames x J x 3
 * doubles, *n_joints J (joints, then End Sites); returns the frame count. */
static inline int test_clip_positions(const struct kin_clip *c, int n_frames, double **pos, int *n_joints)
{
    int J = c->n_joints + c->n_end_sites;
    if (n_frames <= 0 || n_frames > c->n_frames) n_frames = c->n_frames;
    double *p = malloc((size_t)n_frames * (size_t)J * 3 * sizeof *p), *rot = malloc((size_t)J * 9 * sizeof *rot);
    for (int t = 0; p && rot && t < n_frames; t++) kin_clip_global(c, t, NULL, p + (size_t)t * J * 3, rot);
    free(rot);
    *pos = p;
    *n_joints = J;
    return n_frames;
}

/* The CSV form: NAME_x,NAME_y,NAME_z columns, one row a frame (%.17g). */
static inline char *test_joints_csv(const struct kin_clip *c, const double *pos, int T, int J, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    for (int j = 0; j < J; j++) {
        const char *n = c->joints[j].name;
        fprintf(f, "%s%s_x,%s_y,%s_z", j ? "," : "", n, n, n);
    }
    fputc('\n', f);
    for (int t = 0; t < T; t++)
        for (int k = 0; k < 3 * J; k++) fprintf(f, "%.17g%c", pos[(size_t)t * J * 3 + k], k + 1 < 3 * J ? ',' : '\n');
    fclose(f);
    return text;
}

/* The names one a line (an .npy's names file). */
static inline char *test_joint_names(const struct kin_clip *c, int J, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) return NULL;
    for (int j = 0; j < J; j++) fprintf(f, "%s\n", c->joints[j].name);
    fclose(f);
    return text;
}

/* The names as an .npy of dtype <U (UTF-32LE, the longest name wide). */
static inline char *test_names_npy(const struct kin_clip *c, int J, size_t *len)
{
    if (J < 1) return NULL; /* (a negative J would be a huge size below) */
    size_t w = 1;
    for (int j = 0; j < J; j++) w = strlen(c->joints[j].name) > w ? strlen(c->joints[j].name) : w;
    unsigned char *d = calloc((size_t)J * w, 4);
    for (int j = 0; d && j < J; j++)
        for (size_t i = 0; i < strlen(c->joints[j].name); i++) d[((size_t)j * w + i) * 4] = (unsigned char)c->joints[j].name[i];
    char descr[32];
    snprintf(descr, sizeof descr, "<U%zu", w);
    int shape[1] = {J};
    char *out = d ? test_npy(descr, shape, 1, d, (size_t)J * w * 4, len) : NULL;
    free(d);
    return out;
}

/* Writes `path` as an .npz (stored members) of the n members named in
 * `names` with the bytes of `data`/`lens` (each an .npy). 0 on success. */
static inline int test_write_npz(const char *path, int n, const char *const *names, char *const *data,
                                 const size_t *lens)
{
    int ze = 0;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    if (!za) return -1;
    for (int i = 0; i < n; i++) {
        zip_source_t *src = zip_source_buffer(za, data[i], lens[i], 0);
        zip_int64_t idx = src ? zip_file_add(za, names[i], src, ZIP_FL_OVERWRITE) : -1;
        if (idx < 0) {
            zip_source_free(src);
            zip_discard(za);
            return -1;
        }
        zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
    }
    return zip_close(za) ? -1 : 0;
}

/* Writes DIR/NAME.csv, DIR/NAME_npy.npy with DIR/NAME_npy.txt (its names)
 * and DIR/NAME_npz.npz (float64 `joints`, `joint_names`, `fps` of the
 * clip's frame time) from the first n_frames frames of `c` (all when <=
 * 0). Returns the frame count, 0 on failure. */
static inline int test_write_joint_files(const struct kin_clip *c, int n_frames, const char *dir, const char *name)
{
    double *pos = NULL;
    int J = 0, T = test_clip_positions(c, n_frames, &pos, &J), ok = pos != NULL;
    char path[512];
    size_t len = 0;
    char *text = ok ? test_joints_csv(c, pos, T, J, &len) : NULL;
    FILE *f;
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    ok = text && (f = fopen(path, "wb")) && fwrite(text, 1, len, f) == len && !fclose(f);
    free(text);
    int shape[3] = {T, J, 3};
    size_t nlen = 0, plen = 0, flen = 0;
    char *npy = ok ? test_npy("<f8", shape, 3, pos, (size_t)T * J * 3 * sizeof *pos, &plen) : NULL;
    snprintf(path, sizeof path, "%s/%s_npy.npy", dir, name);
    ok = npy && (f = fopen(path, "wb")) && fwrite(npy, 1, plen, f) == plen && !fclose(f);
    char *names = ok ? test_joint_names(c, J, &nlen) : NULL;
    snprintf(path, sizeof path, "%s/%s_npy.txt", dir, name);
    ok = names && (f = fopen(path, "wb")) && fwrite(names, 1, nlen, f) == nlen && !fclose(f);
    free(names);
    double fps = 1.0 / c->frame_time;
    int one[1] = {1};
    char *fnpy = ok ? test_npy("<f8", one, 1, &fps, sizeof fps, &flen) : NULL;
    char *nnpy = ok ? test_names_npy(c, J, &nlen) : NULL;
    static const char *const members[] = {"joints.npy", "joint_names.npy", "fps.npy"};
    char *data[3] = {npy, nnpy, fnpy};
    size_t lens[3] = {plen, nlen, flen};
    snprintf(path, sizeof path, "%s/%s_npz.npz", dir, name);
    ok = ok && fnpy && nnpy && !test_write_npz(path, 3, members, data, lens);
    free(npy);
    free(nnpy);
    free(fnpy);
    free(pos);
    return ok ? T : 0;
}

#endif
