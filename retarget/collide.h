/* collide.h -- the self-collision term of a job: which of the robot's
 * capsules (kinematics/capsule.h) are checked against which, with what
 * margin and weight, copied into the job's targets for the solver; and the
 * self-penetration figures of a solved trajectory for the report
 * (docs/solver.md "Self-collision", docs/profiles.md "Quality figures"). */
#ifndef RT_RTG_COLLIDE_H
#define RT_RTG_COLLIDE_H

#include "../kinematics/robot.h"
#include "targets.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults: the hinge w (margin - d) is active below RTG_COLLIDE_MARGIN of
 * clearance, with weight RTG_COLLIDE_WEIGHT (a position target has weight
 * 1: a capsule 1 cm inside its margin costs as much as a target 20 cm
 * away). Pairs closer than the margin at the zero pose are not checked. */
#define RTG_COLLIDE_MARGIN 0.01
#define RTG_COLLIDE_WEIGHT 20.0
/* Metres the two feet's capsules, posed at their anchors, keep apart where
 * both feet are in contact (retarget.c anchors_apart): twice the default
 * margin, so that a foot solved a little off its anchor does not bring the
 * pair inside the margin. */
#define RTG_ANCHOR_CLEARANCE (2.0 * RTG_COLLIDE_MARGIN)
/* The ground term's default weight: softer than the pairs', since a
 * capsule kept above the floor may have to swing a limb away from its
 * targets (Booster T1's hand cylinder in edge/Boxing_Toes.bvh: at 20 the
 * knees swing at 49 rad/s to make room, at 10 or 5 the motion passes every
 * filter with the capsules within 5 mm of the floor). */
#define RTG_GROUND_WEIGHT 10.0

/* Fills t's capsules, pairs, weight and margin for robot r: the robot's
 * capsules and the pairs that can touch (kin_capsule_pairs with the margin
 * as clearance); when t->on_ground, the capsules kept above z = 0 with
 * weight ground_weight: all but the legs' (a foot link and the links from
 * it up to, not including, the feet's common ancestor: docs/solver.md "The
 * ground"). A weight of 0 turns its term off in the solve
 * (rtg_targets_batch passes no pairs, or no ground); the report still
 * measures them. */
enum rt_status rtg_targets_collide(struct rtg_targets *t, const struct kin_robot *r, double margin, double weight,
                                   double ground_weight, struct rt_err *err);

/* What rtg_collide_depth() and rtg_collide_depth4() need beside the
 * frames: room for four frames' capsules' world poses and t's pairs as rows
 * of bits (one per thread; it depends on t's capsules and pairs only). NULL
 * when out of memory; _free is NULL-safe. */
struct rtg_collide_scratch;
struct rtg_collide_scratch *rtg_collide_scratch_new(const struct rtg_targets *t);
void rtg_collide_scratch_free(struct rtg_collide_scratch *s);

/* The deepest self-penetration of one frame (world link poses from kin_fk):
 * max(0, -d) over t's pairs, and the pair it is in (-1 when none
 * penetrates); *low gets the lowest point of any capsule but the feet's
 * (their soles are the ground figures'; world z; +inf without capsules).
 * `s` from rtg_collide_scratch_new(t). */
double rtg_collide_depth(const struct rtg_targets *t, const double *link_pos, const double *link_rot,
                         struct rtg_collide_scratch *s, int *pair, double *low);

/* rtg_collide_depth() of m (1..4) frames whose link poses lie one after
 * the other (kin_fk_frames: frame l's at link_pos + 3 l n_links and
 * link_rot + 9 l n_links), into depth[l], pair[l] and low[l] (m of each):
 * the same bits as one frame at a time. */
void rtg_collide_depth4(const struct rtg_targets *t, int m, const double *link_pos, const double *link_rot,
                        size_t n_links, struct rtg_collide_scratch *s, double *depth, int *pair, double *low);

#ifdef __cplusplus
}
#endif
#endif
