/* profile_embed.h -- the table of bundled profiles compiled into the
 * library. The Makefile generates its definition from profiles/<name>.json with
 * deploy/embed_profiles.sh ($(B)/gen/profiles_embed.c); profile.c is its only
 * reader. Builds that compile kinematics/ sources directly (the fuzzers)
 * compile the generated file with them. */
#ifndef RT_KIN_PROFILE_EMBED_H
#define RT_KIN_PROFILE_EMBED_H

#include <stddef.h>

#define KIN_PROFILE_EMBED_MAX 256

struct kin_profile_embed {
    const char *name; /* file name without ".json" */
    const char *text; /* the file's bytes, NUL-terminated */
    size_t len;       /* bytes, without the NUL */
};

/* Terminated by an entry whose name is NULL; names are sorted. */
extern const struct kin_profile_embed kin_profile_embedded[];

/* The names of kin_profile_embedded[], NULL-terminated. */
extern const char *const kin_profile_embedded_names[];

#endif
