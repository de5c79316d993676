/* test_base64.c -- base/base64: the RFC 4648 test vectors both ways, every
 * length 0..300 of arbitrary bytes round-tripping through the encoder and
 * the in-place decoder, line breaks skipped, and each refusal (a character
 * outside the alphabet, a cut group, misplaced padding, unused bits set)
 * naming the character. */
#include <stdlib.h>
#include <string.h>

#include "../base/base64.h"
#include "test.h"

static void vectors(void)
{
    static const char *const v[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                       {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                       {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = 0;
        char *e = rt_base64_encode(v[i][0], strlen(v[i][0]), &n);
        CHECK_EQ_STR(e, v[i][1]);
        CHECK_EQ_INT(n, strlen(v[i][1]));
        char buf[16];
        snprintf(buf, sizeof buf, "%s", v[i][1]);
        CHECK_EQ_INT(rt_base64_decode(buf, strlen(buf), &n, "b", NULL), RT_OK);
        CHECK(n == strlen(v[i][0]) && !memcmp(buf, v[i][0], n));
        free(e);
    }
}

static void roundtrip(void)
{
    unsigned char data[300];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 151 + 7);
    int bad = 0;
    for (size_t len = 0; len <= sizeof data; len++) {
        size_t n = 0, m = 0;
        char *e = rt_base64_encode(data, len, &n);
        if (!e || n != (len + 2) / 3 * 4 || rt_base64_decode(e, n, &m, "b", NULL) != RT_OK || m != len ||
            memcmp(e, data, len))
            bad++;
        free(e);
    }
    CHECK_EQ_INT(bad, 0);
    /* MIME-style line breaks and blanks are skipped. */
    char wrapped[] = "Zm9v\r\nYmFy\n Zg==\n";
    size_t m = 0;
    CHECK_EQ_INT(rt_base64_decode(wrapped, strlen(wrapped), &m, "b", NULL), RT_OK);
    CHECK(m == 7 && !memcmp(wrapped, "foobarf", 7));
}

static void refusals(void)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"Zm9~", "character 4 ('~') is not base64"},
        {"Zm9", "3 base64 characters: not a multiple of 4"},
        {"Z===", "padding in the wrong place"},
        {"Zg=a", "comes after the '=' padding"},
        {"Zm==Zm9v", "comes after the '=' padding"},
        {"Zh==", "unused bits set"},
        {"Zm9=", "unused bits set"},
        {"Zm9v\x01", "byte 0x01"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[32];
        size_t m = 0;
        struct rt_err err;
        snprintf(buf, sizeof buf, "%s", bad[i].text);
        CHECK_EQ_INT(rt_base64_decode(buf, strlen(buf), &m, "body.x", &err), RT_EPARSE);
        CHECK_EQ_STR(err.where, "body.x");
        if (!strstr(err.msg, bad[i].msg)) fprintf(stderr, "'%s': message '%s'\n", bad[i].text, err.msg);
        CHECK(strstr(err.msg, bad[i].msg) != NULL);
    }
}

int main(void)
{
    vectors();
    roundtrip();
    refusals();
    return test_report("test_base64");
}
