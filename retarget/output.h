/* output.h -- the one writer of a solved trajectory: its column names and
 * its rows, as CSV (Unitree's retargeted-LAFAN1 layout: root x y z, root
 * quaternion qx qy qz qw, then the joint coordinates in URDF order) and as
 * the JSON rows of the daemon's result. `retarget solve`, the daemon's
 * result routes and its scheduler (which stores the column names with each
 * result) all write through it, so their bytes agree.
 *
 * Every value is printed as %.9g prints it, which round-trips a float
 * exactly: equal bytes mean equal bits.
 *
 * It also writes the NPZ of BeyondMimic / mjlab (rtg_npz_format(): one
 * zip archive of .npy arrays, through libzip) and resamples a trajectory
 * to another frame rate (rtg_resample()).
 *
 * Memory: rtg_columns_json(), rtg_npz_format() and rtg_resample() return
 * malloc'd memory the caller frees; the
 * names of rtg_columns() are borrowed from the robot (and static). */
#ifndef RT_RTG_OUTPUT_H
#define RT_RTG_OUTPUT_H

#include <stdio.h>

#include "../kinematics/robot.h"
#include "../base/status.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills names[0 .. RT_ROOT_COLS + r->n_dof) with the state columns of `r`:
 * root_x .. root_qw, then the joints in URDF order. Returns the count. */
int rtg_columns(const struct kin_robot *r, const char **names);

/* The columns of rtg_columns() as a compact JSON array, malloc'd; NULL when
 * out of memory. */
char *rtg_columns_json(const struct kin_robot *r);

/* `n_frames` rows of `cols` floats of `state` as CSV, after a header row
 * of names[0..cols) when `names` is not NULL, into a malloc'd buffer *out
 * of *len bytes (not NUL-terminated; the caller frees it). RT_ENOMEM (then
 * *out is NULL). */
enum rt_status rtg_csv_format(const char *const *names, int cols, const float *state, int n_frames,
                              char **out, size_t *len);

/* rtg_csv_format() of a long trajectory in pieces of RTG_CSV_PIECE_ROWS
 * rows shared out with the workers of `pool` that have nothing else to do
 * (rtg_pool_for_idle; NULL: this thread alone), then joined: the same
 * bytes. */
#define RTG_CSV_PIECE_ROWS 2048
enum rt_status rtg_csv_format_on(struct rtg_pool *pool, const char *const *names, int cols, const float *state,
                                 int n_frames, char **out, size_t *len);

/* Writes the rows as a JSON array of arrays ([[x,y,..],[..]]). */
void rtg_json_rows_write(FILE *f, int cols, const float *state, int n_frames);

/* The NPZ of a trajectory, in the BeyondMimic / mjlab motion layout
 * (docs/api.md "NPZ"): arrays, C order, little endian,
 *   fps            float64 (1,)        frames per second
 *   joint_pos      float32 (T, D)      the coordinates in URDF order
 *   joint_vel      float32 (T, D)      rad/s (m/s), central differences
 *   body_pos_w     float32 (T, B, 3)   world position of every link
 *   body_quat_w    float32 (T, B, 4)   world orientation, w x y z
 *   body_lin_vel_w float32 (T, B, 3)   central differences of body_pos_w
 *   body_ang_vel_w float32 (T, B, 3)   world frame, from the neighbouring
 *                                      rotations: log(R(t+1) R(t-1)^T) / 2dt
 *   joint_names    <U (D,)             the order of joint_pos's columns
 *   body_names     <U (B,)             the links in topological order
 *                                      (body 0 is the root)
 * T = n_frames rows of `state` (RT_ROOT_COLS + r->n_dof floats each: root
 * x y z, qx qy qz qw, coordinates); B = r->n_links; D = r->n_dof. The
 * first and last frames take one-sided differences; one frame has zero
 * velocities. Bodies come from kin_fk() of each row, so body_pos_w is the
 * forward kinematics of joint_pos and the root pose. The archive's bytes
 * depend only on the inputs (entries stored, fixed times). On success *out
 * holds *len bytes the caller frees. RT_EINVAL for fps <= 0 or no frames,
 * RT_ELIMIT when the arrays would not fit in memory sizes, RT_ENOMEM, and
 * RT_EIO when libzip fails (its message in err); *out is NULL then. */
enum rt_status rtg_npz_format(const struct kin_robot *r, const float *state, int n_frames, double fps,
                              char **out, size_t *len, struct rt_err *err);

/* Frames of a trajectory at `fps_in` resampled to `fps_out`: the output
 * frame k is at time k / fps_out, k = 0 .. floor((n_frames - 1) *
 * fps_out / fps_in) (+1e-9 against rounding), so that it never runs past
 * the last input frame. Positions and coordinates are interpolated
 * linearly, the root quaternion (columns 3..6, x y z w) by slerp along the
 * shorter arc. `cols` >= RT_ROOT_COLS floats a row. *out gets *n_out rows
 * (malloc'd; the caller frees). RT_EINVAL for a rate <= 0 or no frames,
 * RT_ELIMIT past RTG_RESAMPLE_MAX_FRAMES output frames, RT_ENOMEM. */
#define RTG_RESAMPLE_MAX_FRAMES 10000000
enum rt_status rtg_resample(const float *state, int n_frames, int cols, double fps_in, double fps_out,
                            float **out, int *n_out, struct rt_err *err);

/* Writes `v` as %.9g does into buf (16 bytes, all of which it may write:
 * the text, its NUL, then scratch); returns the length. */
int rtg_format_float(float v, char *buf);

#ifdef __cplusplus
}
#endif
#endif
