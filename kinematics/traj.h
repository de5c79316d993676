/* traj.h -- reading robot trajectories as CSV in Unitree's retargeted-LAFAN1 layout:
 * one row per frame, root x y z, root quaternion qx qy qz qw, then the joint
 * coordinates in URDF order; an optional header row of column names.
 *
 * Memory: kin_traj_read() returns a malloc'd array the caller frees. */
#ifndef RT_KIN_TRAJ_H
#define RT_KIN_TRAJ_H

#include "robot.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIN_TRAJ_MAX_BYTES (1u << 30)
#define KIN_TRAJ_MAX_FRAMES 10000000
/* Value bounds: root position |x| <= KIN_TRAJ_MAX_POS metres, joint
 * coordinates |q| <= KIN_TRAJ_MAX_COORD (radians or metres); the root
 * quaternion's norm must be within (0.5, 1.5) and is normalized. Finite is
 * not enough: the solver works in float32, where 1e39 is inf. */
#define KIN_TRAJ_MAX_POS 1e4
#define KIN_TRAJ_MAX_COORD 1e4

/* Reads a trajectory of `cols` columns per row (7 + n_dof of the robot).
 * Accepts LF or CRLF, blank lines, and one leading header row (a first row
 * whose first field is not a number). Numbers are plain decimals (no hex,
 * inf or nan). Errors: RT_EPARSE with where = "PATH:LINE" ("row has 35
 * values, expected 36", "bad number 'x'"); RT_EINVAL for a value past the
 * bounds above ("column 1 (root x) is 1e+39: the limit is 10000 m").
 * On success *out holds n_frames * cols doubles; quaternions are normalized. */
enum rt_status kin_traj_read(const char *path, int cols, double **out, int *n_frames,
                             struct rt_err *err);

/* As kin_traj_read(), from `len` bytes of `text` (need not be
 * NUL-terminated); `path` labels errors ("PATH:LINE"). The daemon reads
 * trajectories from request bodies with it. */
enum rt_status kin_traj_parse(const char *text, size_t len, const char *path, int cols,
                              double **out, int *n_frames, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
