/* utf8.c -- UTF-8 validity, character cuts and repair (see utf8.h). */
#include "utf8.h"

#include <string.h>

size_t rt_utf8_char_len(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) return 0;
    unsigned c = u[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned cp, min;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (u[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

int rt_utf8_valid(const char *s, size_t n, size_t *bad)
{
    size_t i = 0;
    while (i < n) {
        size_t k = rt_utf8_char_len(s + i, n - i);
        if (!k) {
            if (bad) *bad = i;
            return 0;
        }
        i += k;
    }
    return 1;
}

size_t rt_utf8_prefix(const char *s, size_t n, size_t max_chars)
{
    size_t i = 0;
    for (size_t c = 0; c < max_chars && i < n; c++) {
        size_t k = rt_utf8_char_len(s + i, n - i);
        i += k ? k : 1; /* not valid UTF-8 (a caller's error): one byte at a time */
    }
    return i;
}

size_t rt_utf8_repair(char *s)
{
    size_t n = strlen(s), i = 0, fixed = 0;
    while (i < n) {
        size_t k = rt_utf8_char_len(s + i, n - i);
        if (k) {
            i += k;
            continue;
        }
        s[i++] = '?';
        fixed++;
    }
    return fixed;
}
