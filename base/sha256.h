/* sha256.h -- SHA-256 (FIPS 180-4), for hashing bearer tokens before they
 * reach the database and for content hashes of job inputs (a submitted
 * source is hashed whole: hundreds of kB a job). OpenSSL's libcrypto
 * computes it (EVP; its x86 code uses the SHA extensions where the CPU has
 * them: 1.8 GB/s against 270-330 MB/s for portable C on the build
 * machine); tests/test_store.c checks the FIPS test vectors.
 *
 * Memory: a context holds libcrypto's state from rt_sha256_init() until
 * rt_sha256_final() or rt_sha256_drop() releases it. */
#ifndef RT_STORE_SHA256_H
#define RT_STORE_SHA256_H

#include <stddef.h>

#include "status.h"

#define RT_SHA256_LEN 32

struct rt_sha256 {
    void *md; /* EVP_MD_CTX */
};

/* RT_ENOMEM when libcrypto cannot start a digest (c is then empty: final
 * and drop are no-ops on it). */
enum rt_status rt_sha256_init(struct rt_sha256 *c);
void rt_sha256_update(struct rt_sha256 *c, const void *data, size_t len);
/* The digest into out; releases the context. */
void rt_sha256_final(struct rt_sha256 *c, unsigned char out[RT_SHA256_LEN]);
/* Releases a context without its digest (an error path); NULL-safe. */
void rt_sha256_drop(struct rt_sha256 *c);

/* One-shot digest of `len` bytes; RT_ENOMEM as rt_sha256_init(). */
enum rt_status rt_sha256(const void *data, size_t len, unsigned char out[RT_SHA256_LEN]);

/* Lower-case hex of a digest into hex[65] (NUL-terminated). */
void rt_sha256_hex(const unsigned char d[RT_SHA256_LEN], char hex[2 * RT_SHA256_LEN + 1]);

#endif
