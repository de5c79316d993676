/* fuzz_bvh.c -- libFuzzer target for the BVH reader (`make fuzz`).
 *
 * Feeds arbitrary bytes to kin_bvh_parse(); when a clip comes back, runs
 * everything a request would run on it: forward kinematics of the first and
 * last frame with and without the y-up conversion, unit detection, a joint
 * lookup and the inspect JSON. ASan and UBSan (the Makefile builds with
 * both) turn any out-of-bounds access, leak or undefined arithmetic into a
 * finding. Parse errors must carry a "name:LINE" location; a clip that
 * comes back keeps the value bounds of bvh.h and has unique joint names.
 * kin_bvh_parse_borrowed() must agree with it: the same status, error and
 * frames, every row the same bits read back from the (unterminated) input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/bvh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kin_clip *c = NULL;
    struct rt_err err = {0};
    enum rt_status st = kin_bvh_parse((const char *)data, size, "fuzz.bvh", &c, &err);
    if (st != RT_OK) {
        struct kin_clip *b = NULL;
        struct rt_err berr = {0};
        if (kin_bvh_parse_borrowed((const char *)data, size, "fuzz.bvh", &b, &berr) != st || b ||
            strcmp(berr.where, err.where) || strcmp(berr.msg, err.msg))
            abort();
        /* Every failure is a clean status with a location and a reason. */
        if (c != NULL || (st != RT_EPARSE && st != RT_ELIMIT && st != RT_EINVAL && st != RT_ENOMEM) ||
            strncmp(err.where, "fuzz.bvh", 8) != 0 || !err.msg[0])
            abort();
        return 0;
    }
    {
        struct kin_clip *b = NULL;
        struct rt_err berr = {0};
        if (kin_bvh_parse_borrowed((const char *)data, size, "fuzz.bvh", &b, &berr) != st || !b ||
            b->n_frames != c->n_frames || b->n_channels != c->n_channels || b->motion)
            abort();
        double *row = malloc(sizeof(double) * (size_t)c->n_channels);
        for (int f = 0; row && f < c->n_frames; f++) {
            kin_clip_row(b, f, row);
            if (memcmp(row, c->motion + (size_t)f * (size_t)c->n_channels, sizeof(double) * (size_t)c->n_channels))
                abort();
        }
        free(row);
        kin_clip_free(b);
    }
    int n_all = c->n_joints + c->n_end_sites;
    if (c->n_joints < 1 || c->n_frames < 0 || c->n_channels < 3 || n_all > 2 * KIN_BVH_MAX_JOINTS)
        abort();
    if (!(c->frame_time >= KIN_BVH_MIN_FRAME_TIME && c->frame_time <= KIN_BVH_MAX_FRAME_TIME)) abort();
    for (size_t i = 0; i < (size_t)c->n_frames * (size_t)c->n_channels; i++)
        if (!(c->motion[i] >= -KIN_BVH_MAX_POS && c->motion[i] <= KIN_BVH_MAX_POS) &&
            !(c->motion[i] >= -KIN_BVH_MAX_ANGLE && c->motion[i] <= KIN_BVH_MAX_ANGLE))
            abort();
    for (int i = 0; i < c->n_joints; i++)
        if (kin_clip_find_joint(c, c->joints[i].name) != i) abort();
    if (c->n_frames > 0) {
        double *pos = malloc(sizeof(double) * 3 * (size_t)n_all);
        double *rot = malloc(sizeof(double) * 9 * (size_t)n_all);
        if (pos && rot) {
            const struct kin_bvh_convert cm_y = {0.01, 'y'};
            kin_clip_global(c, 0, NULL, pos, rot);
            kin_clip_global(c, c->n_frames - 1, &cm_y, pos, rot);
        }
        free(pos);
        free(rot);
    }
    struct kin_bvh_convert conv;
    double h;
    (void)kin_clip_detect_units(c, &conv, &h, &err);
    if (kin_clip_find_joint(c, c->joints[0].name) != 0) abort();
    char *js = kin_clip_inspect_json(c);
    free(js);
    kin_clip_free(c);
    return 0;
}
