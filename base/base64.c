/* base64.c -- RFC 4648 base64 encoding and strict in-place decoding (see
 * base64.h for why it is written here). */
#include "base64.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *rt_base64_encode(const void *data, size_t len, size_t *out_len)
{
    const unsigned char *in = data;
    size_t groups = len / 3 + (len % 3 != 0), n;
    if (!rt_mul_size(groups, 4, &n) || n == SIZE_MAX) return NULL;
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t k = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[k++] = alphabet[v >> 18 & 63];
        out[k++] = alphabet[v >> 12 & 63];
        out[k++] = alphabet[v >> 6 & 63];
        out[k++] = alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);
        out[k++] = alphabet[v >> 18 & 63];
        out[k++] = alphabet[v >> 12 & 63];
        out[k++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
        out[k++] = '=';
    }
    out[k] = 0;
    if (out_len) *out_len = k;
    return out;
}

/* The value of base64 character c, -1 for any other byte. */
static int value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static int blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

enum rt_status rt_base64_decode(char *text, size_t len, size_t *out_len, const char *where, struct rt_err *err)
{
    unsigned char *p = (unsigned char *)text;
    size_t k = 0, n_chars = 0, pad = 0, pad_at = 0;
    uint32_t acc = 0;
    *out_len = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        if (blank(c)) continue;
        if (c == '=') {
            if (pad == 0) pad_at = i;
            pad++;
            n_chars++;
            /* '=' ends the text: at most two, only in the last group. */
            if (pad > 2 || (n_chars % 4 != 3 && n_chars % 4 != 0))
                return rt_err_set(err, RT_EPARSE, where, "character %zu ('=') is padding in the wrong place", i + 1);
            continue;
        }
        int v = value(c);
        if (v < 0) {
            if (c >= 0x20 && c < 0x7f)
                return rt_err_set(err, RT_EPARSE, where, "character %zu ('%c') is not base64", i + 1, c);
            return rt_err_set(err, RT_EPARSE, where, "character %zu (byte 0x%02x) is not base64", i + 1, c);
        }
        if (pad) return rt_err_set(err, RT_EPARSE, where, "character %zu comes after the '=' padding", i + 1);
        acc = acc << 6 | (uint32_t)v;
        /* Four characters read make three bytes: k + 3 <= the characters
         * read so far, so the write never overtakes the read. */
        if (++n_chars % 4 == 0) {
            p[k++] = (unsigned char)(acc >> 16);
            p[k++] = (unsigned char)(acc >> 8);
            p[k++] = (unsigned char)acc;
            acc = 0;
        }
    }
    if (n_chars % 4)
        return rt_err_set(err, RT_EPARSE, where, "%zu base64 characters: not a multiple of 4 (cut short?)", n_chars);
    if (pad) {
        /* The last group held 4 - pad characters in acc (shifted by the
         * padding, which added nothing): 18 or 12 bits, of which the low
         * 2 or 4 must be zero. */
        uint32_t bits = acc;
        if (pad == 1) {
            if (bits & 3) return rt_err_set(err, RT_EPARSE, where, "character %zu: unused bits set before the padding", pad_at);
            p[k++] = (unsigned char)(bits >> 10);
            p[k++] = (unsigned char)(bits >> 2);
        } else {
            if (bits & 15) return rt_err_set(err, RT_EPARSE, where, "character %zu: unused bits set before the padding", pad_at);
            p[k++] = (unsigned char)(bits >> 4);
        }
    }
    *out_len = k;
    return RT_OK;
}
