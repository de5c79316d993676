/* fuzz_urdf.c -- libFuzzer target for the URDF reader: any bytes must give
 * either a robot or an error status with a message, never a crash, a
 * sanitizer report or a leak. On success the robot is also run through
 * kin_fk, kin_jacobian and the inspect JSON, so that whatever the parser
 * accepts is usable downstream. Built and run by `make fuzz`. */
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
    int st = kin_robot_parse_urdf((const char *)data, size, "fuzz.urdf", &r, &err);
    if (st != RT_OK) {
        /* A failure always names where; the robot pointer stays NULL. */
        if (r || !err.where[0] || !err.msg[0]) abort();
        return 0;
    }
    if (!r || r->n_links < 1 || r->n_dof < 0 || r->n_dof >= r->n_links) abort();
    for (int k = 1; k < r->n_links; k++)
        if (r->tree.parent[k] < 0 || r->tree.parent[k] >= k) abort();
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
