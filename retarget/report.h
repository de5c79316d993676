/* report.h -- the NAME.report.json of a solved clip: what was solved, how
 * the solver did, and the quality figures of the result.
 *
 * Memory: rtg_report_json() returns a cJSON tree the caller deletes. */
#ifndef RT_RTG_REPORT_H
#define RT_RTG_REPORT_H

#include <cjson/cJSON.h>

#include "../solver/solver.h"
#include "../kinematics/robot.h"
#include "quality.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fields of the report that describe the run, not the result. */
struct rtg_report_info {
    const char *source;     /* source file path */
    const char *robot;      /* robot name */
    const char *profile;    /* profile used, or NULL (identity mapping) */
    const char *backend;    /* "cpu", "cuda" */
    const char *mode;       /* "trajectory" or "per-frame" */
    int threads;
    int batch_clips;        /* clips in the solver call */
};

/* Builds {"frames", "frame_time", "source", "robot", "profile",
 * "source_units":{...}, "solver":{...}, "quality":{...}, "warnings":[...]}
 * for one clip. "source_units" ({"guessed": true, "metres_per_unit",
 * "up", "height_units"}) is present only when the source's unit was not
 * recognized and its scale was guessed (t->units); "warnings" only when
 * the unit was guessed or the result leaves the quality bounds (mean
 * position error 3 cm, ground penetration 1 cm, any joint-limit
 * violation). The quality figures are `q` and the
 * per-link statistics when `q` is not NULL (rtg_job_finish() computes them), else they are
 * computed from `state`, the clip's n_frames rows. Returns
 * NULL only when out of memory. */
cJSON *rtg_report_json(const struct rtg_report_info *info, const struct kin_robot *r,
                       const struct rtg_targets *t, const float *state,
                       const struct solver_clip_result *res, const struct rtg_quality *q,
                       const struct rtg_quality_stat *per_link_pos,
                       const struct rtg_quality_stat *per_link_rot);

#ifdef __cplusplus
}
#endif
#endif
