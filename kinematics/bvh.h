/* bvh.h -- a BVH motion-capture reader and source-skeleton forward kinematics.
 *
 * Memory: kin_bvh_load*() return a clip the caller frees with
 * kin_clip_free(); every pointer inside it is owned by the clip. */
#ifndef RT_KIN_BVH_H
#define RT_KIN_BVH_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits, checked before anything they size is allocated. */
#define KIN_BVH_MAX_BYTES (512u << 20)
#define KIN_BVH_MAX_JOINTS 1024
#define KIN_BVH_MAX_CHANNELS 6144
#define KIN_BVH_MAX_FRAMES 10000000
#define KIN_BVH_MAX_LINE (1u << 20)
#define KIN_BVH_MAX_DEPTH 256

enum kin_bvh_channel { KIN_XPOS = 0, KIN_YPOS, KIN_ZPOS, KIN_XROT, KIN_YROT, KIN_ZROT };

struct kin_bvh_joint {
    char *name;      /* "End Site" children get "<parent>_end" */
    int parent;      /* joint index, -1 for the root */
    int end_site;    /* 1 for End Site entries (no channels) */
    double offset[3];
    int n_channels;  /* 0, 3 or 6 */
    int chan_off;    /* first column of this joint in a motion row */
    int chan[6];     /* enum kin_bvh_channel, in file order */
};

/* Invariants: joints[] in file order (parents before children); the root is
 * joint 0; n_joints counts ROOT and JOINT entries only, and the End Sites
 * follow in joints[n_joints .. n_joints + n_end_sites). */
struct kin_clip {
    int n_joints, n_end_sites, n_channels, n_frames;
    int declared_frames;  /* the Frames: header value */
    double frame_time;    /* seconds, as written */
    struct kin_bvh_joint *joints;
    double *motion;       /* [n_frames * n_channels] raw channel values */
    char warning[160];    /* non-fatal note (extra rows), "" if none */
};

/* Parses BVH text. `name` labels errors: failures return RT_EPARSE or
 * RT_ELIMIT with where = "name:LINE" and a one-line reason.
 * Frame-count policy: the frames are the complete motion rows present. A
 * file with more rows than `Frames:` declares keeps them all and sets
 * `warning`; fewer rows than declared (a truncated file) or a partial row is
 * an error. */
enum rt_status kin_bvh_parse(const char *text, size_t len, const char *name,
                             struct kin_clip **out, struct rt_err *err);
enum rt_status kin_bvh_load(const char *path, struct kin_clip **out, struct rt_err *err);
void kin_clip_free(struct kin_clip *c); /* NULL-safe */

/* Unit and up-axis conversion applied to global positions and orientations:
 * p_out = scale * A p, R_out = A R A^T, where A maps the clip's up axis to +Z
 * (up 'y': x->x, y->z, z->-y is the right-handed choice, i.e. A = Rx(+90 deg));
 * up 'z' is the identity. */
struct kin_bvh_convert {
    double scale; /* metres per file unit (cm: 0.01) */
    char up;      /* 'y' or 'z' */
};

/* Global position [n_all*3] and rotation [n_all*9, row-major] of every joint
 * and End Site (n_all = n_joints + n_end_sites) in frame `frame`, after
 * conversion. Euler angles compose in the order their channels list
 * (intrinsic: R = R_c1 R_c2 R_c3 for channels c1 c2 c3). */
void kin_clip_global(const struct kin_clip *c, int frame, const struct kin_bvh_convert *conv,
                     double *pos, double *rot);

/* JSON summary for `retarget inspect`: {"kind":"clip","frames":N,
 * "frame_time":s,"joints":N,"channels":N,"joint_names":[...]} (malloc'd). */
char *kin_clip_inspect_json(const struct kin_clip *c);

#ifdef __cplusplus
}
#endif
#endif
