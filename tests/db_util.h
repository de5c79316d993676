/* db_util.h -- a test's own look into a retargetd database file, beside
 * the store's API: how a job's source is stored (tests of schema 9's
 * packed sources). Header-only; the test links SQLite. */
#ifndef RT_TEST_DB_UTIL_H
#define RT_TEST_DB_UTIL_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* Job `id`'s stored clip in the database at `path`, through a connection
 * of the test's own: its stored length in *len (-1: no such row) and its
 * encoding in enc ("" for NULL, "?" before version 9, which has no
 * clip_encoding, or for no such row). */
static inline void test_stored_clip(const char *path, int64_t id, int *len, char *enc, size_t cap)
{
    sqlite3 *raw = NULL;
    sqlite3_stmt *q = NULL;
    *len = -1;
    snprintf(enc, cap, "?");
    if (sqlite3_open(path, &raw) == SQLITE_OK &&
        (sqlite3_prepare_v2(raw,
                            "SELECT length(c.clip), coalesce(j.clip_encoding, '') FROM job_clips c "
                            "JOIN jobs j ON j.id = c.job_id WHERE c.job_id = ?",
                            -1, &q, NULL) == SQLITE_OK ||
         sqlite3_prepare_v2(raw, "SELECT length(clip), '?' FROM job_clips WHERE job_id = ?", -1, &q, NULL) ==
             SQLITE_OK)) {
        sqlite3_bind_int64(q, 1, id);
        if (sqlite3_step(q) == SQLITE_ROW) {
            *len = sqlite3_column_int(q, 0);
            snprintf(enc, cap, "%s", (const char *)sqlite3_column_text(q, 1));
        }
    }
    sqlite3_finalize(q);
    sqlite3_close(raw);
}

#endif
