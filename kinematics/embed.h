/* embed.h -- files compiled into the library: the bundled robots
 * (robots/<name>.urdf) and profiles (profiles/<name>.json). deploy/embed.sh
 * generates each table into $(B)/gen/ at build time, so that
 * kin_robot_load("g1") and rtg_profile_load("cmu_g1") work from any working
 * directory without the source tree. Everything here is static, read-only
 * data that lives for the whole process. */
#ifndef RT_KIN_EMBED_H
#define RT_KIN_EMBED_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kin_embedded {
    const char *name; /* file name without its extension (with it: embed.sh --keep-ext) */
    const char *text; /* the file's bytes, followed by one NUL */
    size_t len;       /* bytes, without the NUL */
};

/* Each table ends with an entry whose name is NULL; each names array lists
 * the same names, NULL-terminated, in the same (sorted) order. */
extern const struct kin_embedded kin_embedded_robots[];
extern const char *const kin_embedded_robots_names[];
extern const struct kin_embedded kin_embedded_profiles[];
extern const char *const kin_embedded_profiles_names[];

#ifdef __cplusplus
}
#endif
#endif
