/* sha256.h -- SHA-256 (FIPS 180-4), for hashing bearer tokens before they
 * reach the database and for content hashes of job inputs. A small
 * self-contained implementation, checked against the FIPS test vectors in
 * tests/test_store.c.
 *
 * Memory: no allocation; the caller owns every buffer. */
#ifndef RT_STORE_SHA256_H
#define RT_STORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define RT_SHA256_LEN 32

struct rt_sha256 {
    uint32_t h[8];
    uint64_t n_bytes;     /* bytes hashed so far */
    unsigned char buf[64];
    size_t n_buf;         /* bytes waiting in buf, < 64 */
};

void rt_sha256_init(struct rt_sha256 *c);
void rt_sha256_update(struct rt_sha256 *c, const void *data, size_t len);
void rt_sha256_final(struct rt_sha256 *c, unsigned char out[RT_SHA256_LEN]);

/* One-shot digest of `len` bytes. */
void rt_sha256(const void *data, size_t len, unsigned char out[RT_SHA256_LEN]);

/* Lower-case hex of a digest into hex[65] (NUL-terminated). */
void rt_sha256_hex(const unsigned char d[RT_SHA256_LEN], char hex[2 * RT_SHA256_LEN + 1]);

#endif
