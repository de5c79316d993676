/* traj.h -- robot trajectories as CSV in Unitree's retargeted-LAFAN1 layout:
 * one row per frame, root x y z, root quaternion qx qy qz qw, then the joint
 * coordinates in URDF order; an optional header row of column names.
 *
 * Memory: kin_traj_read() returns a malloc'd array the caller frees. */
#ifndef RT_KIN_TRAJ_H
#define RT_KIN_TRAJ_H

#include <stdio.h>

#include "robot.h"
#include "status.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIN_TRAJ_MAX_BYTES (1u << 30)
#define KIN_TRAJ_MAX_FRAMES 10000000

/* Reads a trajectory of `cols` columns per row (7 + n_dof of the robot).
 * Accepts LF or CRLF, blank lines, and one leading header row (a first row
 * whose first field is not a number). Errors: RT_EPARSE with where =
 * "PATH:LINE" ("row has 35 values, expected 36", "bad number 'x'").
 * On success *out holds n_frames * cols doubles; quaternions are normalized. */
enum rt_status kin_traj_read(const char *path, int cols, double **out, int *n_frames,
                             struct rt_err *err);

/* As kin_traj_read(), from `len` bytes of `text` (need not be
 * NUL-terminated); `path` labels errors ("PATH:LINE"). The daemon reads
 * trajectories from request bodies with it. */
enum rt_status kin_traj_parse(const char *text, size_t len, const char *path, int cols,
                              double **out, int *n_frames, struct rt_err *err);

/* Writes `n_frames` rows of `state` (float, robot state layout) as CSV, with
 * the header row unless `no_header`. Every value is printed with %.9g, which
 * round-trips a float exactly, so equal bytes mean equal bits. */
enum rt_status kin_traj_write(FILE *f, const struct kin_robot *r, const float *state,
                              int n_frames, int no_header, struct rt_err *err);

/* The link pairs of the identity mapping between two robots of one model:
 * the names of links tracked in position and orientation (NULL-terminated). */
const char *const *kin_traj_identity_links(void);

/* Targets for robot `dst` from a trajectory of robot `src` (FK in double of
 * every frame): the identity mapping's links that exist in both robots, each
 * tracked in position and orientation with weight 1, plus default weights.
 * RT_ENOTFOUND naming the missing links when fewer than 2 links match. */
enum rt_status kin_targets_from_traj(const struct kin_robot *src, const double *states,
                                     int n_frames, double frame_time,
                                     const struct kin_robot *dst, struct kin_targets *t,
                                     struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
