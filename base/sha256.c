/* sha256.c -- SHA-256 through libcrypto's EVP interface (see sha256.h). */
#include "sha256.h"

#include <openssl/evp.h>

enum rt_status rt_sha256_init(struct rt_sha256 *c)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    c->md = NULL;
    if (!m) return RT_ENOMEM;
    if (EVP_DigestInit_ex(m, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(m);
        return RT_ENOMEM;
    }
    c->md = m;
    return RT_OK;
}

void rt_sha256_update(struct rt_sha256 *c, const void *data, size_t len)
{
    if (c->md && len) (void)EVP_DigestUpdate(c->md, data, len); /* SHA-256 has no failure past init */
}

void rt_sha256_final(struct rt_sha256 *c, unsigned char out[RT_SHA256_LEN])
{
    unsigned int n = 0;
    if (!c->md) return;
    (void)EVP_DigestFinal_ex(c->md, out, &n);
    rt_sha256_drop(c);
}

void rt_sha256_drop(struct rt_sha256 *c)
{
    if (!c) return;
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
}

enum rt_status rt_sha256(const void *data, size_t len, unsigned char out[RT_SHA256_LEN])
{
    struct rt_sha256 c;
    enum rt_status st = rt_sha256_init(&c);
    if (st != RT_OK) return st;
    rt_sha256_update(&c, data, len);
    rt_sha256_final(&c, out);
    return RT_OK;
}

void rt_sha256_hex(const unsigned char d[RT_SHA256_LEN], char hex[2 * RT_SHA256_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < RT_SHA256_LEN; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * RT_SHA256_LEN] = 0;
}
