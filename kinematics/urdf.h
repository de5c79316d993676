/* urdf.h -- internals of the URDF reader (kinematics/urdf.c) that other
 * translation units need: the table of bundled robots.
 *
 * The public contract of the reader is robot.h. This header only declares
 * the bundled-robot table, which is not written by hand: deploy/embed.sh
 * generates it from the .urdf files in robots/ into
 * $(B)/gen/bundled_robots.c at build time, so that kin_robot_load("g1")
 * works from any working directory without the source tree. Everything in
 * the table is static, read-only data that lives for the whole process. */
#ifndef RT_KIN_URDF_H
#define RT_KIN_URDF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Names of the bundled robots (file names without ".urdf"), NULL-terminated;
 * kin_bundled_data[i] holds kin_bundled_len[i] bytes of robot i's URDF text
 * (followed by one NUL byte that the length does not count). */
extern const char *const kin_bundled_names[];
extern const unsigned char *const kin_bundled_data[];
extern const size_t kin_bundled_len[];

#ifdef __cplusplus
}
#endif
#endif
