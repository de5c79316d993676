/* joints.h -- joint-position sources: named points over frames, as body
 * models (SMPL, SMPL-X) and motion-capture tools export them, read from
 *   .npz  numpy archive (libzip): `joints` or `positions` (T, J, 3) float32
 *         or float64, `joint_names` (J,) strings, optional `fps` (scalar
 *         or (1,)) and `parents` (J,) integers (-1 for the root);
 *   .npy  one (T, J, 3) array, with the names given apart (one a line);
 *   CSV   a header row of NAME_x,NAME_y,NAME_z column triples (an optional
 *         first column `frame`, `time` or `t` is skipped), then one row of
 *         numbers a frame.
 * Positions are kept as written (file units and axes); the caller converts
 * them (struct kin_bvh_convert: metres, z up). Topology: the `parents`
 * given, else the SMPL/SMPL-X kinematic tree for the names it knows
 * (pelvis, left_hip, ..., right_wrist, the fingers), every other joint
 * hanging from joint 0.
 *
 * kin_joints_skeleton() turns frame 0 into a BVH-shaped skeleton (a clip
 * with no motion whose rest pose is frame 0), so that the profile
 * detection and the skeleton recognizer of retarget/ read a joint-position
 * source as they read a clip.
 *
 * Memory: kin_joints_parse*() return a source the caller frees with
 * kin_joints_free(); kin_joints_skeleton() a clip freed with
 * kin_clip_free(). Everything inside is owned by its struct. */
#ifndef RT_KIN_JOINTS_H
#define RT_KIN_JOINTS_H

#include <stddef.h>

#include "../base/status.h"
#include "bvh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits, checked before anything they size is allocated. */
#define KIN_JOINTS_MAX_BYTES (1u << 30)
#define KIN_JOINTS_MAX_JOINTS 1024
#define KIN_JOINTS_MAX_FRAMES 10000000
#define KIN_JOINTS_MAX_NAME 128

struct kin_joints {
    int n_joints, n_frames;
    double fps;      /* from the file (npz `fps`), 0 when it has none */
    char **names;    /* [n_joints], distinct, non-empty */
    int *parent;     /* [n_joints], -1 for roots; parent index < own index not required */
    double *pos;     /* [n_frames * n_joints * 3], as written */
    char warning[160];
};

/* Parses an .npz archive (see the file comment). `label` names the source
 * in errors ("walk.npz", "body.joints"): where = "LABEL:KEY" ("walk.npz:joints")
 * with the reason ("shape (100, 22) is not (T, J, 3)", "no `joint_names`",
 * "object arrays (pickles) are not read: save names as a string array").
 * RT_EPARSE for a damaged or unexpected file, RT_ELIMIT past the limits,
 * RT_EINVAL for names that do not match the array (count, empty, repeated).
 * On failure *out is NULL. */
enum rt_status kin_joints_parse_npz(const void *data, size_t len, const char *label, struct kin_joints **out,
                                    struct rt_err *err);

/* Parses an .npy array (T, J, 3) with `names` (text, one name a line, `names_len`
 * bytes; blank lines skipped). Errors as kin_joints_parse_npz(). */
enum rt_status kin_joints_parse_npy(const void *data, size_t len, const char *names, size_t names_len,
                                    const char *label, struct kin_joints **out, struct rt_err *err);

/* Parses CSV joint positions (see the file comment): where = "LABEL:LINE"
 * ("row has 65 values, expected 66", "column 'pelvis_y' should be
 * 'pelvis_z'"). Lines end in LF or CRLF; blank lines are skipped. */
enum rt_status kin_joints_parse_csv(const char *text, size_t len, const char *label, struct kin_joints **out,
                                    struct rt_err *err);

/* Any of the three by content: an .npz by its zip signature, an .npy by its
 * magic (needs `names`; NULL is RT_EINVAL asking for them), else CSV. */
enum rt_status kin_joints_parse(const void *data, size_t len, const char *names, size_t names_len,
                                const char *label, struct kin_joints **out, struct rt_err *err);

/* 1 when `text` (len bytes) starts with a joint-position CSV header: a
 * first line of NAME_x,NAME_y,NAME_z triples (after an optional frame or
 * time column); 0 otherwise. */
int kin_joints_is_csv(const char *text, size_t len);

/* NULL-safe. */
void kin_joints_free(struct kin_joints *j);

/* The parent of joint `name` in the SMPL / SMPL-X tree, by name ("pelvis"
 * has none: NULL; "left_knee" -> "left_hip"; "left_index2" ->
 * "left_index1"); NULL also for names the tree does not have. Static. */
const char *kin_joints_smpl_parent(const char *name);

/* 1 when `name` is a joint of the SMPL / SMPL-X body tree. */
int kin_joints_is_smpl(const char *name);

/* Frame 0 of `j` as a skeleton: a clip of j->n_joints joints in an order
 * where parents come first (a root first), no motion, each OFFSET the
 * joint's frame-0 position minus its parent's (so the rest pose is frame 0,
 * in file units and axes), no channels, no End Sites. `*order` (when not
 * NULL) gets the malloc'd map from the clip's joint index to j's (the
 * caller frees it). A source with several roots has them hung from the
 * first. RT_ENOMEM. */
enum rt_status kin_joints_skeleton(const struct kin_joints *j, struct kin_clip **out, int **order,
                                   struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
