/* bvh.h -- a BVH motion-capture reader and source-skeleton forward kinematics.
 *
 * Memory: kin_bvh_load*() return a clip the caller frees with
 * kin_clip_free(); every pointer inside it is owned by the clip.
 *
 * Conventions (kinematics/bvh.c implements them; tests/test_bvh.c pins them):
 * - Rotation channels are degrees and compose in the order the CHANNELS line
 *   lists them, intrinsically: "Zrotation Xrotation Yrotation" gives
 *   R = Rz Rx Ry. Position channels may come before or after them.
 * - A joint's local transform is translation(t) * R. t is the OFFSET, except
 *   that each position channel REPLACES the matching OFFSET component (it
 *   does not add to it): assimp, bvhio, Blender (root) and GAMES-105 read
 *   BVH this way, and real clips need it (milad.bvh and jesse_dance.bvh have
 *   root OFFSET y 93/94 cm and root Yposition 94/88 cm: adding would put the
 *   hips 1.8 m above the floor). three.js adds instead; the two agree
 *   whenever the OFFSET of a joint with position channels is zero.
 * - The rest pose (no motion row) uses the OFFSETs and identity rotations. */
#ifndef RT_KIN_BVH_H
#define RT_KIN_BVH_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"

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
#define KIN_BVH_MAX_NAME 128 /* bytes of a ROOT/JOINT name, its NUL included (RT_NAME_MAX bounds it) */

/* Value bounds, checked as each number is read (the error names its line).
 * Finite is not enough: a value that passes float32 on its way to the
 * solver, or a frame time whose inverse does, fails far from the input.
 * The bounds are generous for any capture: positions (OFFSETs and position
 * channels) are in file units, so KIN_BVH_MAX_POS is 10 km in centimetres
 * and 1 km in millimetres, the smallest unit kin_clip_detect_units() knows;
 * rotation channels are degrees; the frame time is 100 kHz .. 0.1 Hz. */
#define KIN_BVH_MAX_POS 1e6
#define KIN_BVH_MAX_ANGLE 1e6
#define KIN_BVH_MIN_FRAME_TIME 1e-5
#define KIN_BVH_MAX_FRAME_TIME 10.0

enum kin_bvh_channel { KIN_XPOS = 0, KIN_YPOS, KIN_ZPOS, KIN_XROT, KIN_YROT, KIN_ZROT };

struct kin_bvh_joint {
    char *name;      /* "End Site" children get "<parent>_end"; valid UTF-8,
                        inner whitespace runs folded to one space */
    int parent;      /* joint index, -1 for the root */
    int end_site;    /* 1 for End Site entries (no channels) */
    double offset[3];
    int n_channels;  /* 0, 3 or 6 */
    int chan_off;    /* first column of this joint in a motion row */
    int chan[6];     /* enum kin_bvh_channel, in file order; -1 past n_channels */
};

/* Invariants: joints[] in file order (parents before children); the root is
 * joint 0; n_joints counts ROOT and JOINT entries only, and the End Sites
 * follow in joints[n_joints .. n_joints + n_end_sites). */
struct kin_clip {
    int n_joints, n_end_sites, n_channels, n_frames;
    int declared_frames;  /* the Frames: header value */
    double frame_time;    /* seconds, as written */
    struct kin_bvh_joint *joints;
    double *motion;       /* [n_frames * n_channels] raw channel values
                             (NULL when n_frames is 0, or for a borrowed clip) */
    /* A clip from kin_bvh_parse_borrowed(): no motion array; row_at[f] is
     * the byte offset of row f in `text` (borrowed, text_len bytes), read
     * again by kin_clip_row() when a frame is asked for. */
    const char *text;
    size_t text_len;
    uint32_t *row_at;
    char warning[160];    /* non-fatal note (extra rows), "" if none */
};

/* Parses BVH text. `name` labels errors: failures return RT_EPARSE or
 * RT_ELIMIT with where = "name:LINE" and a one-line reason.
 * Frame-count policy: the frames are the complete motion rows present. A
 * file with more rows than `Frames:` declares keeps them all and sets
 * `warning`; fewer rows than declared (a truncated file) or a partial row is
 * an error.
 *
 * `text` need not be NUL-terminated and may hold any bytes. Lines end in LF,
 * CRLF or a lone CR; blank lines and runs of spaces and tabs are allowed
 * anywhere; a UTF-8 byte order mark is skipped. A joint's name is the rest
 * of its ROOT/JOINT line (so "Bip01 L Thigh" and "mixamorig:Hips" work), a
 * trailing '{' excepted, at most KIN_BVH_MAX_NAME - 1 bytes (RT_ELIMIT).
 * Every joint has OFFSET and CHANNELS 3 or 6 (each
 * channel at most once) before its children; "End Site" (any whitespace
 * between the words) holds only an OFFSET; leaf JOINTs need no End Site.
 * Numbers are decimal (exponents allowed; no hex, nan or inf). Frames: is a
 * non-negative integer no larger than KIN_BVH_MAX_FRAMES; Frame Time: is in
 * [KIN_BVH_MIN_FRAME_TIME, KIN_BVH_MAX_FRAME_TIME] seconds and kept as
 * strtod parsed it. Rows are the non-blank lines after the Frame Time line,
 * each with exactly n_channels numbers. OFFSETs and position channels are
 * within +-KIN_BVH_MAX_POS, rotation channels within +-KIN_BVH_MAX_ANGLE
 * (RT_EINVAL at the line otherwise). ROOT and JOINT names are unique (two
 * joints of one name would make any mapping by name ambiguous: RT_EINVAL
 * at the second); an End Site's generated name is not checked.
 * On success *out owns a new clip; on failure *out is NULL, nothing leaks
 * and `err` (when non-NULL) says what and where. */
enum rt_status kin_bvh_parse(const char *text, size_t len, const char *name,
                             struct kin_clip **out, struct rt_err *err);

/* kin_bvh_parse() with every check, keeping each row's place in `text`
 * instead of its values: the clip borrows `text`, which must outlive it and
 * stay unchanged. Its frames read as a parsed clip's do (kin_clip_row(),
 * kin_clip_global(): the same doubles, parsed again from the text each time
 * a frame is asked for). For a caller that looks at a few frames of a large
 * clip whose text it holds anyway (the daemon's submission: 4 bytes a frame
 * instead of 8 a channel value). */
enum rt_status kin_bvh_parse_borrowed(const char *text, size_t len, const char *name,
                                      struct kin_clip **out, struct rt_err *err);

/* The n_channels raw values of row `frame` (0 <= frame < n_frames) into
 * row[]: from the motion array, or parsed from the borrowed text. */
void kin_clip_row(const struct kin_clip *c, int frame, double *row);

/* Reads the file at `path` (at most KIN_BVH_MAX_BYTES, else RT_ELIMIT) and
 * parses it as kin_bvh_parse() does, labelling errors with the file's base
 * name ("01_01.bvh:120"). RT_EIO when the file cannot be read. */
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

/* CMU's length unit in metres: (1/0.45) inch (mocap.cs.cmu.edu FAQ). The
 * cgspeed BVH conversions of the CMU database keep it (hips ~17 units up). */
#define KIN_BVH_CMU_SCALE ((1.0 / 0.45) * 2.54 / 100.0)

/* Global position [n_all*3] and rotation [n_all*9, row-major] of every joint
 * and End Site (n_all = n_joints + n_end_sites) in frame `frame`, after
 * conversion. Euler angles compose in the order their channels list
 * (intrinsic: R = R_c1 R_c2 R_c3 for channels c1 c2 c3).
 * Local transform: see "Conventions" above (position channels replace the
 * OFFSET components they name). Globals: R_j = R_parent R_local,
 * p_j = p_parent + R_parent t_j; End Sites take their parent's rotation.
 * The caller guarantees 0 <= frame < n_frames, conv->up is 'y' or 'z' (a
 * NULL conv means scale 1, up 'z': no conversion) and both arrays are large
 * enough; nothing is allocated. */
void kin_clip_global(const struct kin_clip *c, int frame, const struct kin_bvh_convert *conv,
                     double *pos, double *rot);

/* JSON summary for `retarget inspect`: {"kind":"clip","frames":N,
 * "declared_frames":N,"frame_time":s,"joints":N,"end_sites":N,"channels":N,
 * "joint_names":[...]} plus "warning" when the clip has one. frame_time is
 * printed with the fewest digits (15..17) that read back to the same double.
 * Returns a malloc'd string the caller frees with free(), or NULL when out
 * of memory. */
char *kin_clip_inspect_json(const struct kin_clip *c);

/* Index into joints[] of the joint or End Site called `name` (exact,
 * case-sensitive), or -1. ROOT/JOINT entries come first, so a real joint
 * wins over an End Site of the same name; with repeated names the first in
 * file order wins. NULL-safe (returns -1). */
int kin_clip_find_joint(const struct kin_clip *c, const char *name);

/* The length unit a standing height of `h` file units suggests: the name
 * ("m", "cmu", "in", "cm", "mm") of the first unit whose range holds h and
 * its metres per unit in *scale, or NULL (and *scale untouched) when h is
 * in no range:
 *     1    <= h <= 2.5   metres       scale 1
 *     10   <= h <= 40    CMU units    scale KIN_BVH_CMU_SCALE (0.0564444)
 *     55   <= h <= 75    inches       scale 0.0254
 *     100  <= h <= 250   centimetres  scale 0.01
 *     1000 <= h <= 2500  millimetres  scale 0.001
 * The returned name is static. */
const char *kin_units_from_height(double h, double *scale);

/* Guesses the unit and up axis of a clip from its skeleton in frame 0 (the
 * rest pose when the clip has no frames), for clips whose user did not say.
 * Heuristic: the global positions of all joints and End Sites are taken
 * without conversion; up is whichever of y and z the skeleton spans more
 * (x is never up: BVH is y-up by convention, z-up from some exporters, and
 * a T-pose's arm span along x rivals its height). The span along up is the
 * standing height h in file units, and kin_units_from_height(h) names the
 * unit. Anything else (a crouching or partial skeleton, an unknown unit) returns
 * RT_EINVAL with the height in the message; the caller must then ask for the
 * unit. On success fills *out and, when non-NULL, *height_m (h * scale).
 * RT_ENOMEM when scratch space cannot be had. */
enum rt_status kin_clip_detect_units(const struct kin_clip *c, struct kin_bvh_convert *out,
                                     double *height_m, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
