/* report.c -- assembles NAME.report.json. The quality figures come from
 * kinematics/quality.c (kin_quality_json), shared by every caller. */
#include "report.h"

#include "quality.h"

cJSON *kin_report_json(const struct kin_report_info *info, const struct kin_robot *r,
                       const struct kin_targets *t, const float *state,
                       const struct solver_clip_result *res)
{
    cJSON *root = cJSON_CreateObject(), *solver = NULL, *quality = NULL;
    if (!root) return NULL;
    cJSON_AddNumberToObject(root, "frames", t->n_frames);
    cJSON_AddNumberToObject(root, "frame_time", t->frame_time);
    if (info->source) cJSON_AddStringToObject(root, "source", info->source);
    cJSON_AddStringToObject(root, "robot", info->robot ? info->robot : r->name);
    if (info->profile) cJSON_AddStringToObject(root, "profile", info->profile);
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
    quality = kin_quality_json(r, t, state, t->n_frames);
    if (!quality) goto fail;
    cJSON_AddItemToObject(root, "quality", quality);
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}
