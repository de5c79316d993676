/* base64.h -- RFC 4648 base64 (the standard alphabet, '=' padding), as a
 * JSON body carries binary files: a job's .npz or .npy joint positions
 * (server/parse.c decodes them, clients/ encode them).
 *
 * None of the libraries linked offers it publicly (libcurl's base64 is
 * internal, cJSON, SQLite's core library, libmicrohttpd 0.9.75, libzip and
 * expat have none, OpenSSL is not linked), so these two functions are it.
 *
 * Memory: rt_base64_encode() returns malloc'd text the caller frees;
 * rt_base64_decode() writes into the caller's buffer. */
#ifndef RT_BASE_BASE64_H
#define RT_BASE_BASE64_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The base64 text of data[0..len) with '=' padding and no line breaks,
 * NUL-terminated, malloc'd; its length (4 * ceil(len / 3)) in *out_len
 * when out_len is not NULL. NULL when the size overflows or memory runs
 * out. */
char *rt_base64_encode(const void *data, size_t len, size_t *out_len);

/* Decodes text[0..len) in place: the bytes go to text[0..*out_len), which
 * is at most 3/4 of len, so the caller's buffer serves as the output
 * (decoding never writes past what it has read). Strict: only the
 * alphabet A-Z a-z 0-9 + /, a length that is a multiple of 4, '=' only as
 * the last one or two characters, and the unused bits of the last group
 * zero (so that one byte string has one encoding); ASCII blanks and line
 * breaks (space, \t, \r, \n) are skipped, as MIME tools wrap lines.
 * RT_EPARSE at `where` naming the first offending character by offset
 * ("character 17 ('~') is not base64"); on failure text is partly
 * overwritten. */
enum rt_status rt_base64_decode(char *text, size_t len, size_t *out_len, const char *where, struct rt_err *err);

#ifdef __cplusplus
}
#endif
#endif
