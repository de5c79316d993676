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
 * Memory: rtg_columns_json() returns malloc'd text the caller frees; the
 * names of rtg_columns() are borrowed from the robot (and static). */
#ifndef RT_RTG_OUTPUT_H
#define RT_RTG_OUTPUT_H

#include <stdio.h>

#include "../kinematics/robot.h"
#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills names[0 .. RT_ROOT_COLS + r->n_dof) with the state columns of `r`:
 * root_x .. root_qw, then the joints in URDF order. Returns the count. */
int rtg_columns(const struct kin_robot *r, const char **names);

/* The columns of rtg_columns() as a compact JSON array, malloc'd; NULL when
 * out of memory. */
char *rtg_columns_json(const struct kin_robot *r);

/* Writes `n_frames` rows of `cols` floats of `state` as CSV, after a header
 * row of names[0..cols) when `names` is not NULL. RT_EIO when the stream
 * reports an error. */
enum rt_status rtg_csv_write(FILE *f, const char *const *names, int cols, const float *state,
                             int n_frames, struct rt_err *err);

/* As rtg_csv_write(), into a malloc'd buffer *out of *len bytes (not
 * NUL-terminated; the caller frees it). RT_ENOMEM (then *out is NULL). */
enum rt_status rtg_csv_format(const char *const *names, int cols, const float *state, int n_frames,
                              char **out, size_t *len);

/* Writes the rows as a JSON array of arrays ([[x,y,..],[..]]). */
void rtg_json_rows_write(FILE *f, int cols, const float *state, int n_frames);

/* Writes `v` as %.9g does into buf (room for 16 bytes); returns the length. */
int rtg_format_float(float v, char *buf);

#ifdef __cplusplus
}
#endif
#endif
