/* fuzz_mjcf.c -- libFuzzer target for the MJCF reader: any bytes must give
 * either a robot or an error status with a message, never a crash, a
 * sanitizer report or a leak. Includes are refused (no folder), as for the
 * daemon's uploads. On success the robot is checked against the model's
 * invariants (robot.h) and run through kin_fk, kin_jacobian and the
 * inspect JSON, so that whatever the reader accepts is usable downstream.
 * Built and run by `make fuzz`. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/robot.h"
#include "../retarget/roles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kin_robot *r = NULL;
    struct rt_err err;
    int st = kin_robot_parse_mjcf((const char *)data, size, "fuzz.xml", NULL, &r, &err);
    if (st != RT_OK) {
        /* A failure always names where; the robot pointer stays NULL. */
        if (r || !err.where[0] || !err.msg[0]) abort();
        return 0;
    }
    if (!r || r->n_links < 1 || r->n_links > KIN_MAX_LINKS || r->n_dof < 0 || r->n_dof >= r->n_links ||
        r->n_joints != r->n_links - 1 || r->n_geoms < 0 || r->n_geoms > KIN_MAX_GEOMS)
        abort();
    for (int k = 1; k < r->n_links; k++) {
        const struct kin_joint *j = &r->joints[r->links[k].joint];
        if (r->tree.parent[k] < 0 || r->tree.parent[k] >= k || j->child != k || j->parent != r->links[k].parent) abort();
        if (j->has_limits && !(j->lower < j->upper)) abort();
        if (fabs(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2] - 1) > 1e-9) abort();
    }
    for (int c = 0; c < r->n_dof; c++)
        if (r->joints[r->coord_joint[c]].coord != c || !(r->tree.lower[c] <= r->tree.upper[c])) abort();
    for (int g = 0; g < r->n_geoms; g++)
        if (r->geoms[g].link < 0 || r->geoms[g].link >= r->n_links) abort();
    size_t ns = 7 + (size_t)r->n_dof, nl = (size_t)r->n_links;
    double *state = calloc(ns, sizeof *state), *pos = calloc(nl * 3, sizeof *pos);
    double *rot = calloc(nl * 9, sizeof *rot), *J = calloc(6 * (6 + (size_t)r->n_dof), sizeof *J);
    if (state && pos && rot && J) {
        state[6] = 1;
        for (size_t i = 7; i < ns; i++) state[i] = 0.1 * (double)i;
        kin_fk(r, state, pos, rot);
        kin_jacobian(r, state, r->n_links - 1, J);
    }
    char *json = kin_robot_inspect_json(r);
    free(json);
    /* Whatever tree the reader accepts, its roles are found or refused. */
    struct rtg_robot_roles roles;
    struct rt_err rerr;
    rtg_robot_roles(r, &roles, &rerr);
    for (int k = 0; k < RTG_RROLE_COUNT; k++)
        if (roles.link[k] < -1 || roles.link[k] >= r->n_links) abort();
    json = rtg_robot_roles_json(r, &roles);
    free(json);
    free(state);
    free(pos);
    free(rot);
    free(J);
    kin_robot_free(r);
    return 0;
}
