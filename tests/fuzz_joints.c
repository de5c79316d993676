/* fuzz_joints.c -- libFuzzer target for the joint-position readers
 * (kinematics/joints.c: .npz through libzip, .npy with names, CSV): any
 * bytes give either a source whose sizes, names and parents keep the
 * invariants of joints.h and whose skeleton view can be built, or an error
 * with a place and a message, never a crash, a sanitizer report or a leak.
 * The first byte picks the reader. Built and run by `make fuzz`. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kinematics/joints.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char names[] = "pelvis\nleft_hip\nright_hip\nspine1\n";
    struct kin_joints *j = NULL;
    struct rt_err err;
    const char *p = size ? (const char *)data + 1 : "";
    size_t n = size ? size - 1 : 0;
    int pick = size ? data[0] % 4 : 0;
    enum rt_status st = pick == 0   ? kin_joints_parse_npz(p, n, "fuzz.npz", &j, &err)
                        : pick == 1 ? kin_joints_parse_npy(p, n, names, sizeof names - 1, "fuzz.npy", &j, &err)
                        : pick == 2 ? kin_joints_parse_csv(p, n, "fuzz.csv", &j, &err)
                                    : kin_joints_parse(p, n, names, sizeof names - 1, "fuzz", &j, &err);
    if (pick == 2) (void)kin_joints_is_csv(p, n);
    if (st != RT_OK) {
        if (j || !err.where[0] || !err.msg[0]) abort();
        return 0;
    }
    if (!j || j->n_joints < 1 || j->n_frames < 1) abort();
    for (int i = 0; i < j->n_joints; i++) {
        if (!j->names[i][0] || j->parent[i] < -1 || j->parent[i] >= j->n_joints || j->parent[i] == i) abort();
        for (int k = 0; k < i; k++)
            if (!strcmp(j->names[i], j->names[k])) abort();
    }
    for (size_t i = 0; i < (size_t)j->n_frames * (size_t)j->n_joints * 3; i++)
        if (!isfinite(j->pos[i])) abort();
    struct kin_clip *c = NULL;
    if (kin_joints_skeleton(j, &c, NULL, &err) != RT_OK || !c || c->n_joints != j->n_joints || c->joints[0].parent != -1)
        abort();
    for (int i = 1; i < c->n_joints; i++)
        if (c->joints[i].parent < 0 || c->joints[i].parent >= i) abort();
    kin_clip_free(c);
    kin_joints_free(j);
    return 0;
}
