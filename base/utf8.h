/* utf8.h -- UTF-8 checks for text that users send and the daemon echoes
 * back in JSON (job names, idempotency keys, query values): whether bytes
 * are valid UTF-8, where to cut a string at a character boundary, and a
 * repair for text stored before it was checked. Valid means RFC 3629: no
 * overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
 * Pure functions on caller-owned bytes; nothing is allocated. */
#ifndef RT_BASE_UTF8_H
#define RT_BASE_UTF8_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length in bytes of the valid UTF-8 sequence (one character) at s[0..n),
 * or 0 when s does not start with one (n == 0 included). */
size_t rt_utf8_char_len(const char *s, size_t n);

/* 1 when the n bytes at s are valid UTF-8 (n == 0 included), else 0; with
 * a non-NULL `bad`, *bad gets the offset of the first invalid byte. */
int rt_utf8_valid(const char *s, size_t n, size_t *bad);

/* The byte length of the first `max_chars` characters of the valid UTF-8
 * string s of n bytes (all n when it has no more): a cut there never
 * splits a character. The caller guarantees s is valid UTF-8. */
size_t rt_utf8_prefix(const char *s, size_t n, size_t max_chars);

/* Replaces, in the NUL-terminated string s, every byte that does not
 * belong to a valid UTF-8 character with '?'. Returns how many it replaced. */
size_t rt_utf8_repair(char *s);

#ifdef __cplusplus
}
#endif
#endif
