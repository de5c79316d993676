/* test_submit_parse.c -- server/parse.c's JSON submission (srv_submit_parse):
 * the clip's string is cut out of what cJSON reads and decoded in place
 * (json_unescape), its runs of plain bytes skipped eight at a time
 * (plain_run). Differential against cJSON over generated strings: plain
 * runs of every length from 0 to 40 around each kind of byte that stops a
 * run (the seven short escapes, \u escapes of one to three UTF-8 bytes, a
 * surrogate pair, raw UTF-8 of two to four bytes), at every offset modulo
 * eight; the decoded source must be cJSON's valuestring byte for byte. And
 * the refusals the scan makes inside a long string: a raw control
 * character and invalid UTF-8 at each of 24 offsets, each named at its
 * line and column. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/parse.h"
#include "test.h"

/* {"robot":"g1","name":"n","clip":"<s>"} parsed as a submission; 1 when it
 * passes and its source is cJSON's decoding of the same body. */
static int same_as_cjson(const char *s)
{
    size_t n = strlen(s);
    char *body = malloc(n + 64), *copy = malloc(n + 64);
    int len = snprintf(body, n + 64, "{\"robot\":\"g1\",\"name\":\"n\",\"clip\":\"%s\"}", s);
    memcpy(copy, body, (size_t)len + 1);
    cJSON *want = cJSON_Parse(copy);
    const cJSON *clip = cJSON_GetObjectItemCaseSensitive(want, "clip");
    struct srv_submit sub;
    cJSON *root = NULL;
    struct rt_err err;
    rt_err_clear(&err);
    enum rt_status st = srv_submit_parse(body, (size_t)len, NULL, "application/json", &sub, &root, &err);
    int ok = st == RT_OK && cJSON_IsString(clip) && sub.source && sub.source_len == strlen(clip->valuestring) &&
             !memcmp(sub.source, clip->valuestring, sub.source_len);
    if (!ok) fprintf(stderr, "differs: st %d (%s), clip \"%s\"\n", (int)st, err.msg, s);
    srv_submit_free(&sub);
    cJSON_Delete(root);
    cJSON_Delete(want);
    free(body);
    free(copy);
    return ok;
}

/* The error of a submission whose clip is `s` (RT_OK when none): its
 * where into where[RT_ERR_WHERE_MAX], its message into msg. */
static enum rt_status refusal(const char *s, char *where, char *msg)
{
    size_t n = strlen(s);
    char *body = malloc(n + 64);
    int len = snprintf(body, n + 64, "{\"robot\":\"g1\",\"clip\":\"%s\"}", s);
    struct srv_submit sub;
    cJSON *root = NULL;
    struct rt_err err;
    rt_err_clear(&err);
    enum rt_status st = srv_submit_parse(body, (size_t)len, NULL, "application/json", &sub, &root, &err);
    snprintf(where, RT_ERR_WHERE_MAX, "%s", err.where);
    snprintf(msg, RT_ERR_MSG_MAX, "%s", err.msg);
    srv_submit_free(&sub);
    cJSON_Delete(root);
    free(body);
    return st;
}

int main(void)
{
    static const char *const stops[] = {
        "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\r", "\\b", "\\f", /* the short escapes */
        "\\u0041", "\\u00e9", "\\u20ac", "\\ud83d\\ude00",         /* one to four UTF-8 bytes */
        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",           /* raw UTF-8 */
    };
    const int n_stops = (int)(sizeof stops / sizeof stops[0]);
    char s[256];
    int checked = 0, failed = 0;
    for (int k = 0; k < n_stops; k++)
        for (int before = 0; before <= 40; before++)
            for (int after = 0; after <= 17; after++) {
                int w = 0;
                for (int i = 0; i < before; i++) s[w++] = (char)('a' + i % 26);
                w += snprintf(s + w, sizeof s - (size_t)w, "%s", stops[k]);
                for (int i = 0; i < after; i++) s[w++] = (char)('0' + i % 10);
                s[w] = 0;
                checked++;
                if (!same_as_cjson(s)) failed++;
            }
    /* Many stops in one long string, and a long plain run alone. */
    {
        char *big = malloc(200000);
        int w = 0;
        for (int i = 0; w < 199000; i++) {
            for (int j = 0; j < i % 23; j++) big[w++] = (char)('A' + (i + j) % 26);
            w += snprintf(big + w, 200000 - (size_t)w, "%s", stops[i % n_stops]);
        }
        big[w] = 0;
        checked++;
        if (!same_as_cjson(big)) failed++;
        memset(big, 'x', 150001);
        big[150001] = 0;
        checked++;
        if (!same_as_cjson(big)) failed++;
        free(big);
    }
    CHECK_EQ_INT(failed, 0);
    /* The refusals inside a long string, at their column: the body is one
     * line, and the clip's text starts at column 23 (after
     * {"robot":"g1","clip":" ). */
    for (int at = 0; at < 24; at++)
        for (int kind = 0; kind < 2; kind++) {
            char where[RT_ERR_WHERE_MAX], msg[RT_ERR_MSG_MAX], want[64];
            memset(s, 'q', 40);
            s[40] = 0;
            s[at] = kind ? (char)0xff : '\x01';
            CHECK_EQ_INT(refusal(s, where, msg), RT_EPARSE);
            snprintf(want, sizeof want, "body:1:%d", 23 + at);
            CHECK_EQ_STR(where, want);
            CHECK(strstr(msg, kind ? "not valid UTF-8" : "control character") != NULL);
        }
    printf("test_submit_parse: %d strings decoded as cJSON does\n", checked);
    return test_report("test_submit_parse");
}
