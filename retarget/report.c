/* report.c -- assembles NAME.report.json. The quality figures come from
 * retarget/quality.c (rtg_quality_json), shared by every caller. */
#include "report.h"

#include <stdio.h>
#include <string.h>

#include "quality.h"

/* Bounds a retargeted clip is held to (docs/profiles.md "Quality bounds"):
 * past them the report carries a warning, so that a corpus run can flag the
 * clips whose motion the robot cannot follow. */
#define RTG_REPORT_MAX_MEAN_POS_M 0.03
#define RTG_REPORT_MAX_PENETRATION_M 0.01
/* A robot whose position targets are all within this distance where a
 * speed filter fails is following them: the speed is the source's. */
#define RTG_REPORT_FOLLOW_M 0.05

static double num_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : 0.0;
}

static int failed(const cJSON *q, const char *filter)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(q, "filters"))
        if (cJSON_IsString(x) && strcmp(x->valuestring, filter) == 0) return 1;
    return 0;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
    return cJSON_IsString(x) ? x->valuestring : "?";
}

/* One warning per failed speed or ground filter that says whether the
 * source itself is that fast or that low there, or the robot cannot follow
 * it (quality "max_joint_velocity_at", "max_body_speed_at",
 * "lowest_body_at"). The filters themselves stay as they are. */
static void filter_warnings(cJSON *w, const cJSON *q)
{
    char msg[512];
    if (failed(q, "joint_speed")) {
        double err = num_at(q, "max_joint_velocity_at", "tracking_error_m");
        int n = snprintf(msg, sizeof msg, "joint_speed filter (%.0f rad/s): %s reaches %.1f rad/s in frame %.0f, where the "
                         "source's fastest target moves %.2f m/s and the robot's largest position error is %.3f m: ",
                         RTG_FILTER_JOINT_SPEED, str_at(q, "max_joint_velocity_at", "joint"),
                         num_at(q, "max_joint_velocity_rad_s", NULL), num_at(q, "max_joint_velocity_at", "frame"),
                         num_at(q, "max_joint_velocity_at", "source_speed_m_s"), err);
        snprintf(msg + n, sizeof msg - (size_t)n, "%s",
                 err <= RTG_REPORT_FOLLOW_M ? "the robot holds its position targets there, so the source's motion (or a "
                                              "rotation those targets leave free) is that fast"
                                            : "the robot cannot follow the source continuously there and swings to "
                                              "another configuration");
        cJSON_AddItemToArray(w, cJSON_CreateString(msg));
    }
    if (failed(q, "body_speed")) {
        double err = num_at(q, "max_body_speed_at", "tracking_error_m");
        double src = num_at(q, "max_body_speed_at", "source_speed_m_s");
        int n = snprintf(msg, sizeof msg, "body_speed filter (%.0f m/s): %s reaches %.1f m/s in frame %.0f, where the "
                         "source's fastest target moves %.2f m/s and the robot's largest position error is %.3f m: ",
                         RTG_FILTER_BODY_SPEED, str_at(q, "max_body_speed_at", "link"),
                         num_at(q, "max_body_speed_m_s", NULL), num_at(q, "max_body_speed_at", "frame"), src, err);
        snprintf(msg + n, sizeof msg - (size_t)n, "%s",
                 src > RTG_FILTER_BODY_SPEED || err <= RTG_REPORT_FOLLOW_M
                     ? "the source itself moves that fast"
                     : "the robot cannot follow the source continuously there and swings to another configuration");
        cJSON_AddItemToArray(w, cJSON_CreateString(msg));
    }
    if (failed(q, "body_below_ground")) {
        double low = num_at(q, "lowest_body_at", "lowest_target_z_m");
        int n = snprintf(msg, sizeof msg, "body_below_ground filter (%.2f m): a body of the robot reaches z = %.3f m in "
                         "frame %.0f, where the source's lowest target is at z = %.3f m: ",
                         -RTG_FILTER_BELOW_GROUND, num_at(q, "lowest_body_z_m", NULL),
                         num_at(q, "lowest_body_at", "frame"), low);
        snprintf(msg + n, sizeof msg - (size_t)n, "%s",
                 low < -RTG_FILTER_BELOW_GROUND ? "the source itself goes below the ground"
                                                : "the robot's collision geometry reaches below the ground where "
                                                  "the source's points do not");
        cJSON_AddItemToArray(w, cJSON_CreateString(msg));
    }
}

/* Adds "warnings": [..] to `root` when the quality figures leave the
 * bounds. */
static void add_warnings(cJSON *root, const cJSON *q)
{
    char msg[256];
    cJSON *w = cJSON_CreateArray();
    if (!w) return;
    double mean = num_at(q, "position_error_m", "mean");
    double pen = num_at(q, "ground_penetration_m", NULL);
    double viol = num_at(q, "joint_limit_violations", NULL);
    if (mean > RTG_REPORT_MAX_MEAN_POS_M) {
        snprintf(msg, sizeof msg,
                 "mean position error %.3f m exceeds %.2f m: the robot cannot follow this motion closely "
                 "(see quality.links for where)", mean, RTG_REPORT_MAX_MEAN_POS_M);
        cJSON_AddItemToArray(w, cJSON_CreateString(msg));
    }
    if (pen > RTG_REPORT_MAX_PENETRATION_M) {
        snprintf(msg, sizeof msg, "a foot goes %.3f m below the ground (bound %.2f m)", pen,
                 RTG_REPORT_MAX_PENETRATION_M);
        cJSON_AddItemToArray(w, cJSON_CreateString(msg));
    }
    if (viol > 0) {
        snprintf(msg, sizeof msg, "%.0f joint-limit violations", viol);
        cJSON_AddItemToArray(w, cJSON_CreateString(msg));
    }
    filter_warnings(w, q);
    if (cJSON_GetArraySize(w) > 0) cJSON_AddItemToObject(root, "warnings", w);
    else cJSON_Delete(w);
}

cJSON *rtg_report_json(const struct rtg_report_info *info, const struct kin_robot *r,
                       const struct rtg_targets *t, const float *state,
                       const struct solver_clip_result *res, const struct rtg_quality *q,
                       const struct rtg_quality_stat *per_link_pos, const struct rtg_quality_stat *per_link_rot)
{
    cJSON *root = cJSON_CreateObject(), *solver = NULL, *quality = NULL;
    if (!root) return NULL;
    cJSON_AddNumberToObject(root, "frames", t->n_frames);
    cJSON_AddNumberToObject(root, "frame_time", t->frame_time);
    if (info->source) cJSON_AddStringToObject(root, "source", info->source);
    cJSON_AddStringToObject(root, "robot", info->robot ? info->robot : r->name);
    if (info->profile) cJSON_AddStringToObject(root, "profile", info->profile);
    if (t->units.up) {
        /* How the source was read: its scale from its own size (or as
         * given), its up axis, and the unit's name where the height is one
         * the table knows (null: none; the name does not change the
         * result). */
        cJSON *su = cJSON_AddObjectToObject(root, "source_units");
        char up[2] = {t->units.up, 0};
        int given = !(t->units.height_units > 0);
        if (!su || !cJSON_AddBoolToObject(su, "given", given) ||
            !(t->units.unit ? cJSON_AddStringToObject(su, "unit", t->units.unit) : cJSON_AddNullToObject(su, "unit")) ||
            !cJSON_AddNumberToObject(su, "metres_per_unit", t->units.scale) ||
            !cJSON_AddStringToObject(su, "up", up) ||
            (!given && !cJSON_AddNumberToObject(su, "height_units", t->units.height_units)))
            goto fail;
    }
    solver = cJSON_AddObjectToObject(root, "solver");
    if (!solver) goto fail;
    cJSON_AddStringToObject(solver, "backend", info->backend ? info->backend : "cpu");
    cJSON_AddStringToObject(solver, "mode", info->mode ? info->mode : "trajectory");
    cJSON_AddNumberToObject(solver, "lm_iterations", res->lm_iters);
    cJSON_AddNumberToObject(solver, "cg_iterations", res->cg_iters);
    cJSON_AddNumberToObject(solver, "initial_cost", res->initial_cost);
    cJSON_AddNumberToObject(solver, "final_cost", res->final_cost);
    cJSON_AddStringToObject(solver, "termination", solver_termination_str(res->termination));
    cJSON_AddNumberToObject(solver, "seconds", res->seconds);
    cJSON_AddNumberToObject(solver, "threads", info->threads);
    cJSON_AddNumberToObject(solver, "batch_clips", info->batch_clips);
    quality = q ? rtg_quality_to_json(r, t, q, per_link_pos, per_link_rot)
                : rtg_quality_json(r, t, state, t->n_frames);
    if (!quality) goto fail;
    cJSON_AddItemToObject(root, "quality", quality);
    add_warnings(root, quality);
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}
