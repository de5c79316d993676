/* test_store.c -- storage/: SHA-256 against the FIPS vectors, the schema and
 * its migration from version 1 (and migration 7's rebuild of the jobs
 * table from a version-6 file with rows), tokens, idempotency keys, crash recovery
 * (running -> queued), a result written only with the state change that
 * makes its job succeeded (and never for a cancelled job), limits at N and
 * N+1, paging. */
#include <math.h>
#include <sqlite3.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/sha256.h"
#include "../storage/store.h"
#include "db_util.h"
#include "test.h"

static char dir[64];

static void db_path(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

static void test_sha256(void)
{
    unsigned char d[32];
    char hex[65];
    rt_sha256("abc", 3, d);
    rt_sha256_hex(d, hex);
    CHECK_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    rt_sha256("", 0, d);
    rt_sha256_hex(d, hex);
    CHECK_EQ_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    rt_sha256(m, strlen(m), d);
    rt_sha256_hex(d, hex);
    CHECK_EQ_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* a million 'a' fed in odd pieces */
    static char a[1000000];
    memset(a, 'a', sizeof a);
    struct rt_sha256 c;
    CHECK_EQ_INT(rt_sha256_init(&c), RT_OK);
    for (size_t i = 0; i < sizeof a; i += 333) rt_sha256_update(&c, a + i, sizeof a - i < 333 ? sizeof a - i : 333);
    rt_sha256_final(&c, d);
    rt_sha256_hex(d, hex);
    CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static struct store_job_new new_job(const char *owner, const char *key, const char *clip)
{
    struct store_job_new n;
    memset(&n, 0, sizeof n);
    n.owner = owner;
    n.idem_key = key;
    n.name = "clip";
    n.robot = "g1";
    n.profile = "cmu_g1";
    n.options = "{}";
    n.class_key = "g1|cmu_g1|bvh||{}";
    n.source_kind = STORE_SRC_BVH;
    n.clip = clip;
    n.clip_len = strlen(clip);
    n.frames = 10;
    rt_sha256(clip, strlen(clip), n.input_hash);
    return n;
}

struct blocked_insert {
    struct store *s;
    struct store_job_new n;
    int64_t id;
    enum rt_status st;
};

static void *insert_main(void *arg)
{
    struct blocked_insert *b = arg;
    int existed = 0;
    b->st = store_job_insert(b->s, &b->n, &b->id, &existed, NULL);
    return NULL;
}

static void test_schema_and_migration(void)
{
    char path[128];
    struct store *s = NULL;
    struct rt_err err;
    int64_t id = 0;
    int existed;
    db_path(path, sizeof path, "mig.db");
    CHECK_EQ_INT(store_open_at(path, 1, &s, &err), RT_OK);
    CHECK_EQ_INT(store_version(s), 1);
    struct store_job_new n = new_job("alice", NULL, "CLIP");
    CHECK_EQ_INT(store_job_insert(s, &n, &id, &existed, &err), RT_OK);
    store_close(s);
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    CHECK_EQ_INT(store_version(s), STORE_VERSION);
    struct store_job j;
    CHECK_EQ_INT(store_job_get(s, id, "alice", 1, &j, &err), RT_OK);
    CHECK_EQ_STR(j.clip, "CLIP");
    CHECK_EQ_INT(j.batch_clips, 0);
    store_job_release(&j);
    /* Version 5 keeps clips out of the jobs rows (job_clips), for rows
     * written before it too; a new job's clip goes there as well. */
    n = new_job("alice", NULL, "CLIP2");
    CHECK_EQ_INT(store_job_insert(s, &n, &id, &existed, &err), RT_OK);
    CHECK_EQ_INT(store_job_get(s, id, "alice", 1, &j, &err), RT_OK);
    CHECK_EQ_STR(j.clip, "CLIP2");
    CHECK_EQ_INT((int)j.clip_len, 5);
    store_job_release(&j);
    store_close(s);
    {
        sqlite3 *raw;
        sqlite3_stmt *q;
        sqlite3_open(path, &raw);
        sqlite3_prepare_v2(raw, "SELECT (SELECT count(*) FROM jobs WHERE clip != ''), "
                                "(SELECT group_concat(clip, ',') FROM (SELECT clip FROM job_clips ORDER BY job_id))",
                           -1, &q, NULL);
        CHECK_EQ_INT(sqlite3_step(q), SQLITE_ROW);
        CHECK_EQ_INT(sqlite3_column_int(q, 0), 0);
        CHECK_EQ_STR((const char *)sqlite3_column_text(q, 1), "CLIP,CLIP2");
        sqlite3_finalize(q);
        /* A reader never waits for a writer: while another connection
         * holds the write lock and a store_job_insert() waits for it (with
         * the store's write mutex held), a status read answers at once. */
        CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
        CHECK_EQ_INT(sqlite3_exec(raw, "BEGIN IMMEDIATE; UPDATE jobs SET name = 'changed'", NULL, NULL, NULL), SQLITE_OK);
        struct blocked_insert bi = {s, new_job("alice", NULL, "CLIP3"), 0, RT_OK};
        pthread_t t;
        pthread_create(&t, NULL, insert_main, &bi);
        usleep(200000); /* the insert now waits for the write lock */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK_EQ_INT(store_job_get(s, id, "alice", 0, &j, &err), RT_OK);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        CHECK(j.name[0] && strcmp(j.name, "changed"));
        store_job_release(&j);
        double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
        CHECK(ms < 100);
        if (ms >= 100) fprintf(stderr, "  a read waited %.0f ms for a blocked write\n", ms);
        sqlite3_exec(raw, "ROLLBACK", NULL, NULL, NULL);
        pthread_join(t, NULL);
        CHECK_EQ_INT(bi.st, RT_OK);
        sqlite3_close(raw);
        store_close(s);
    }
    /* A file from a newer build is refused. */
    sqlite3 *db;
    sqlite3_open(path, &db);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    CHECK_EQ_INT(store_open(path, &s, &err), RT_ESTATE);
    CHECK(s == NULL);
    /* WAL is on: journal_mode persists in the file, read back here through a
     * second connection (foreign_keys is per connection, not checked here). */
    db_path(path, sizeof path, "fresh.db");
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    store_close(s);
    sqlite3_open(path, &db);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(q, 0), "wal"));
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* n pseudo-random bytes, none of them NUL (xorshift64 from `seed`): a
 * clip that does not pack. */
static void random_bytes(char *p, size_t n, unsigned long long seed)
{
    unsigned long long x = seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (char)(1 + (x >> 24) % 255);
    }
}

/* Schema 9 packs sources: a real trajectory CSV is stored as a zstd frame
 * well under half its size and read back byte for byte; a short clip and
 * incompressible bytes are stored as given; rows of a version-8 file
 * read back unchanged after the migration (a joint-position job's names,
 * units and up axis too, which it moves to jobs); a packed row that is corrupt
 * fails its read with the job named (its status still reads), and so
 * do a frame that claims more than a clip may hold and a frame with any
 * one byte changed (its checksum). */
static void test_packed_sources(void)
{
    char path[128], src[512], enc[16];
    struct store *s = NULL;
    struct rt_err err;
    struct store_job j;
    int64_t id8 = 0, id_csv = 0, id_short = 0, id_rand = 0;
    int existed, len;
    size_t csv_len = 0;
    snprintf(src, sizeof src, "%s/reference/g1/dance1_subject1.csv", test_data_dir());
    char *csv = test_slurp(src, &csv_len);
    if (!csv) {
        fprintf(stderr, "  skip the packed sources: %s not found (set RT_SHARED_DATA)\n", src);
        return;
    }
    size_t rand_len = 64 << 10;
    char *rnd = malloc(rand_len + 1);
    if (rnd) random_bytes(rnd, rand_len, 88172645463325252ull);
    db_path(path, sizeof path, "packed.db");
    /* A version-8 file holds the clip as given. */
    CHECK_EQ_INT(store_open_at(path, 8, &s, &err), RT_OK);
    struct store_job_new n = new_job("erin", NULL, csv);
    n.clip_len = csv_len;
    n.source_kind = STORE_SRC_CSV;
    CHECK_EQ_INT(store_job_insert(s, &n, &id8, &existed, &err), RT_OK);
    /* And a joint-position job with its fields, which version 9 moves. */
    int64_t id8j = 0;
    struct store_job_new nj8 = new_job("erin", NULL, "Hips_x,Hips_y,Hips_z\n0,1,0\n");
    nj8.source_kind = STORE_SRC_JOINTS;
    nj8.joint_names = "Hips\n";
    nj8.joint_units = 0.001;
    nj8.joint_up = 'z';
    CHECK_EQ_INT(store_job_insert(s, &nj8, &id8j, &existed, &err), RT_OK);
    store_close(s);
    test_stored_clip(path, id8, &len, enc, sizeof enc);
    CHECK_EQ_INT(len, (int)csv_len);
    CHECK_EQ_STR(enc, "?"); /* no clip_encoding column yet */
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    CHECK_EQ_INT(store_version(s), STORE_VERSION);
    CHECK_EQ_INT(store_job_get(s, id8, "erin", 1, &j, &err), RT_OK);
    CHECK(j.clip_len == csv_len && j.clip && !memcmp(j.clip, csv, csv_len) && j.clip[csv_len] == 0);
    store_job_release(&j);
    CHECK_EQ_INT(store_job_get(s, id8j, "erin", 1, &j, &err), RT_OK);
    CHECK_EQ_STR(j.clip ? j.clip : "", "Hips_x,Hips_y,Hips_z\n0,1,0\n");
    CHECK_EQ_STR(j.joint_names ? j.joint_names : "", "Hips\n");
    CHECK_NEAR(j.joint_units, 0.001, 0);
    CHECK_EQ_INT(j.joint_up, 'z');
    store_job_release(&j);
    /* Version 9: the CSV packed, with the time it took reported. */
    struct store_insert_times tm = {-1, -1, -1, -1, -1, -1};
    n = new_job("erin", NULL, csv);
    n.clip_len = csv_len;
    n.source_kind = STORE_SRC_CSV;
    n.times = &tm;
    CHECK_EQ_INT(store_job_insert(s, &n, &id_csv, &existed, &err), RT_OK);
    CHECK(tm.pack > 0 && tm.pack < 5.0);
    /* Alone, it led its group: the writer's times are its own, and no
     * later group queued behind it. */
    CHECK(tm.group >= 0 && tm.lock >= 0 && tm.write > 0 && tm.commit >= 0);
    CHECK(tm.more == 0);
    test_stored_clip(path, id_csv, &len, enc, sizeof enc);
    CHECK_EQ_STR(enc, "zstd");
    CHECK(len > 0 && (size_t)len < csv_len / 2);
    fprintf(stderr, "  %s: %zu bytes stored as %d (%.2fx), packed in %.1f ms\n", src, csv_len, len,
            (double)csv_len / (len > 0 ? len : 1), tm.pack * 1e3);
    CHECK_EQ_INT(store_job_get(s, id_csv, "erin", 1, &j, &err), RT_OK);
    CHECK(j.clip_len == csv_len && j.clip && !memcmp(j.clip, csv, csv_len) && j.clip[csv_len] == 0);
    CHECK_EQ_INT(j.source_kind, STORE_SRC_CSV);
    store_job_release(&j);
    /* Short, and incompressible: as given. */
    n = new_job("erin", NULL, "HIERARCHY\nROOT Hips\n");
    CHECK_EQ_INT(store_job_insert(s, &n, &id_short, &existed, &err), RT_OK);
    test_stored_clip(path, id_short, &len, enc, sizeof enc);
    CHECK_EQ_INT(len, (int)strlen("HIERARCHY\nROOT Hips\n"));
    CHECK_EQ_STR(enc, "");
    if (rnd) {
        rnd[rand_len] = 0;
        n = new_job("erin", NULL, "");
        n.clip = rnd;
        n.clip_len = rand_len;
        n.source_kind = STORE_SRC_JOINTS;
        CHECK_EQ_INT(store_job_insert(s, &n, &id_rand, &existed, &err), RT_OK);
        test_stored_clip(path, id_rand, &len, enc, sizeof enc);
        CHECK_EQ_INT(len, (int)rand_len);
        CHECK_EQ_STR(enc, "");
        CHECK_EQ_INT(store_job_get(s, id_rand, "erin", 1, &j, &err), RT_OK);
        CHECK(j.clip_len == rand_len && j.clip && !memcmp(j.clip, rnd, rand_len));
        store_job_release(&j);
    }
    /* A packed row cut short, then one whose frame claims 1 GiB: each read
     * with its clip fails and names the job; without the clip it reads. */
    static const char *const corrupt[] = {"UPDATE job_clips SET clip = substr(clip, 1, length(clip) - 64) WHERE job_id = ?",
                                          "UPDATE job_clips SET clip = x'28b52ffd' || x'a0' || x'00000040' || "
                                          "zeroblob(16) WHERE job_id = ?"};
    for (int k = 0; k < 2; k++) {
        sqlite3 *raw;
        sqlite3_stmt *q;
        sqlite3_open(path, &raw);
        sqlite3_busy_timeout(raw, 5000);
        CHECK_EQ_INT(sqlite3_prepare_v2(raw, corrupt[k], -1, &q, NULL), SQLITE_OK);
        sqlite3_bind_int64(q, 1, id_csv);
        CHECK_EQ_INT(sqlite3_step(q), SQLITE_DONE);
        sqlite3_finalize(q);
        sqlite3_close(raw);
        rt_err_clear(&err);
        memset(&j, 0x5a, sizeof j);
        CHECK_EQ_INT(store_job_get(s, id_csv, "erin", 1, &j, &err), RT_EIO);
        CHECK(j.clip == NULL && j.options == NULL);
        char want[64];
        snprintf(want, sizeof want, "job %lld: stored source", (long long)id_csv);
        CHECK(strstr(err.msg, want) != NULL);
        fprintf(stderr, "  corrupt %d: %s: %s\n", k, err.where, err.msg);
        CHECK_EQ_INT(store_job_get(s, id_csv, "erin", 0, &j, &err), RT_OK);
        store_job_release(&j);
    }
    /* One byte changed anywhere in a packed frame (a fresh job each time):
     * the read fails, never hands back other bytes (the frame's checksum). */
    for (int k = 1; k <= 8; k++) {
        int64_t idk = 0;
        n = new_job("erin", NULL, csv);
        n.clip_len = csv_len;
        n.source_kind = STORE_SRC_CSV;
        CHECK_EQ_INT(store_job_insert(s, &n, &idk, &existed, &err), RT_OK);
        test_stored_clip(path, idk, &len, enc, sizeof enc);
        int at = len / 9 * k;
        sqlite3 *raw;
        sqlite3_blob *b = NULL;
        unsigned char byte = 0;
        sqlite3_open(path, &raw);
        sqlite3_busy_timeout(raw, 5000);
        CHECK_EQ_INT(sqlite3_blob_open(raw, "main", "job_clips", "clip", idk, 1, &b), SQLITE_OK);
        CHECK_EQ_INT(sqlite3_blob_read(b, &byte, 1, at), SQLITE_OK);
        byte ^= 0x10;
        CHECK_EQ_INT(sqlite3_blob_write(b, &byte, 1, at), SQLITE_OK);
        sqlite3_blob_close(b);
        sqlite3_close(raw);
        int len2;
        test_stored_clip(path, idk, &len2, enc, sizeof enc);
        CHECK_EQ_INT(len2, len);
        CHECK_EQ_INT(store_job_get(s, idk, "erin", 1, &j, &err), RT_EIO);
        if (k == 4) fprintf(stderr, "  a byte changed at %d of %d: %s\n", at, len, err.msg);
    }
    store_close(s);
    free(rnd);
    free(csv);
}

/* A joint-position source with its names, units and up axis: SQLite
 * writes the clip into its zeroblob without building the row in memory
 * (its highwater grows by much less than the clip, not twice it), and the
 * fields read back. */
static void test_joint_fields_insert(void)
{
    char path[128];
    struct store *s = NULL;
    struct rt_err err;
    struct store_job j;
    int64_t id = 0;
    int existed;
    size_t n = (size_t)16 << 20;
    char *clip = malloc(n + 1);
    if (!clip) return;
    random_bytes(clip, n, 0x2545f4914f6cdd1dull);
    clip[n] = 0;
    db_path(path, sizeof path, "joints.db");
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    struct store_job_new nj = new_job("frank", NULL, "");
    nj.clip = clip;
    nj.clip_len = n;
    nj.source_kind = STORE_SRC_JOINTS;
    nj.joint_names = "Hips\nSpine\n";
    nj.joint_units = 0.01;
    nj.joint_up = 'y';
    sqlite3_int64 before = sqlite3_memory_used();
    sqlite3_memory_highwater(1);
    CHECK_EQ_INT(store_job_insert(s, &nj, &id, &existed, &err), RT_OK);
    sqlite3_int64 grew = sqlite3_memory_highwater(0) - before;
    fprintf(stderr, "  a 16 MB joint-position clip with its fields: SQLite's memory grew %.1f MB at most\n", grew / 1e6);
    CHECK(grew < (sqlite3_int64)(n / 2));
    CHECK_EQ_INT(store_job_get(s, id, "frank", 1, &j, &err), RT_OK);
    CHECK(j.clip_len == n && j.clip && !memcmp(j.clip, clip, n));
    CHECK_EQ_STR(j.joint_names ? j.joint_names : "", "Hips\nSpine\n");
    CHECK_EQ_INT((int)j.joint_names_len, 11);
    CHECK_NEAR(j.joint_units, 0.01, 0);
    CHECK_EQ_INT(j.joint_up, 'y');
    store_job_release(&j);
    store_close(s);
    free(clip);
}

/* Migration 7 rebuilds the jobs table (its source_kind CHECK gains
 * 'joints'): a version-6 file with a finished job (its result and clip
 * rows reference it), a queued one with an idempotency key and a deleted
 * top id keeps every row, field, reference and index, keeps counting ids
 * from where it was, still cascades a deletion, and takes joint-position
 * jobs, which version 6 refused. */
static void test_migration_7(void)
{
    char path[128];
    struct store *s = NULL;
    struct rt_err err;
    int64_t id1 = 0, id2 = 0, id3 = 0, id4 = 0;
    int existed = 0, stored = 0;
    db_path(path, sizeof path, "mig7.db");
    CHECK_EQ_INT(store_open_at(path, 6, &s, &err), RT_OK);
    CHECK_EQ_INT(store_version(s), 6);
    struct store_job_new n = new_job("alice", NULL, "CLIP-A");
    n.plan = "{\"profile\":\"cmu_g1\"}";
    CHECK_EQ_INT(store_job_insert(s, &n, &id1, &existed, &err), RT_OK);
    int claimed = 0;
    CHECK_EQ_INT(store_job_claim(s, id1, &claimed, &err), RT_OK);
    float traj[2 * 3] = {1, 2, 3, 4, 5, 6.5f};
    CHECK_EQ_INT(store_job_finish(s, id1, 2, 3, "[\"a\",\"b\",\"c\"]", traj, "{\"ok\":1}", 7, 0.25, 1.5, 1,
                                  &stored, &err), RT_OK);
    CHECK_EQ_INT(stored, 1);
    n = new_job("bob", "key-b", "CLIP-B");
    n.source_kind = STORE_SRC_CSV;
    n.source_robot = "h1";
    CHECK_EQ_INT(store_job_insert(s, &n, &id2, &existed, &err), RT_OK);
    n = new_job("bob", NULL, "CLIP-C");
    CHECK_EQ_INT(store_job_insert(s, &n, &id3, &existed, &err), RT_OK);
    /* Version 6 has no joint-position kind. */
    n = new_job("bob", NULL, "pelvis_x,pelvis_y,pelvis_z\n0,0,1\n");
    n.source_kind = STORE_SRC_JOINTS;
    CHECK_EQ_INT(store_job_insert(s, &n, &id4, &existed, &err), RT_ESTATE);
    store_close(s);
    {
        /* The top id deleted (as a purge would): ids must not be reused. */
        sqlite3 *raw;
        sqlite3_open(path, &raw);
        sqlite3_exec(raw, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM jobs WHERE id = %lld", (long long)id3);
        CHECK_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(raw);
    }
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    CHECK_EQ_INT(store_version(s), STORE_VERSION);
    if (!s) return;
    struct store_job j;
    CHECK_EQ_INT(store_job_get(s, id1, "alice", 1, &j, &err), RT_OK);
    CHECK_EQ_STR(j.clip, "CLIP-A");
    CHECK_EQ_INT(j.state, STORE_SUCCEEDED);
    CHECK_EQ_STR(j.plan ? j.plan : "", "{\"profile\":\"cmu_g1\"}");
    CHECK_EQ_INT(j.lm_iter, 7);
    CHECK_EQ_INT(j.batch_clips, 1);
    CHECK(j.joint_names == NULL && j.joint_units == 0 && j.joint_up == 0);
    store_job_release(&j);
    int frames = 0, cols = 0;
    float *back = NULL;
    char *names = NULL, *report = NULL;
    CHECK_EQ_INT(store_result_get(s, id1, "alice", &frames, &cols, &names, &back, &report, &err), RT_OK);
    CHECK(frames == 2 && cols == 3 && back && !memcmp(back, traj, sizeof traj));
    CHECK_EQ_STR(names, "[\"a\",\"b\",\"c\"]");
    CHECK_EQ_STR(report, "{\"ok\":1}");
    free(back);
    free(names);
    free(report);
    CHECK_EQ_INT(store_job_get(s, id2, "bob", 1, &j, &err), RT_OK);
    CHECK_EQ_STR(j.clip, "CLIP-B");
    CHECK_EQ_INT(j.source_kind, STORE_SRC_CSV);
    CHECK_EQ_STR(j.source_robot, "h1");
    CHECK_EQ_STR(j.idem_key, "key-b");
    store_job_release(&j);
    /* The idempotency key still binds (the UNIQUE constraint came along). */
    n = new_job("bob", "key-b", "CLIP-B");
    n.source_kind = STORE_SRC_CSV;
    n.source_robot = "h1";
    int64_t again = 0;
    CHECK_EQ_INT(store_job_insert(s, &n, &again, &existed, &err), RT_OK);
    CHECK(again == id2 && existed == 1);
    /* A joint-position job: binary bytes and the joint fields kept. */
    static const char npy[] = "\x93NUMPY\x01\x00\x00pos";
    n = new_job("bob", NULL, "x");
    n.source_kind = STORE_SRC_JOINTS;
    n.clip = npy;
    n.clip_len = sizeof npy - 1;
    n.joint_names = "pelvis\nleft_hip\n";
    n.joint_units = 0.01;
    n.joint_up = 'z';
    CHECK_EQ_INT(store_job_insert(s, &n, &id4, &existed, &err), RT_OK);
    CHECK(id4 > id3);
    CHECK_EQ_INT(store_job_get(s, id4, "bob", 1, &j, &err), RT_OK);
    CHECK_EQ_INT(j.source_kind, STORE_SRC_JOINTS);
    CHECK(j.clip_len == sizeof npy - 1 && !memcmp(j.clip, npy, sizeof npy - 1));
    CHECK_EQ_STR(j.joint_names, "pelvis\nleft_hip\n");
    CHECK(j.joint_units == 0.01 && j.joint_up == 'z');
    store_job_release(&j);
    store_close(s);
    {
        sqlite3 *raw;
        sqlite3_stmt *q;
        sqlite3_open(path, &raw);
        sqlite3_exec(raw, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
        /* The indexes are back, the CHECK has the new kind, and foreign
         * keys hold and still cascade. */
        sqlite3_prepare_v2(raw, "SELECT (SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master "
                                "WHERE type = 'index' AND tbl_name = 'jobs' AND name LIKE 'jobs_by_%' ORDER BY name)), "
                                "(SELECT count(*) FROM sqlite_master WHERE name = 'jobs_new'), "
                                "(SELECT sql LIKE '%''joints''%' FROM sqlite_master WHERE name = 'jobs')",
                           -1, &q, NULL);
        CHECK_EQ_INT(sqlite3_step(q), SQLITE_ROW);
        CHECK_EQ_STR((const char *)sqlite3_column_text(q, 0), "jobs_by_owner,jobs_by_state");
        CHECK_EQ_INT(sqlite3_column_int(q, 1), 0);
        CHECK_EQ_INT(sqlite3_column_int(q, 2), 1);
        sqlite3_finalize(q);
        sqlite3_prepare_v2(raw, "PRAGMA foreign_key_check", -1, &q, NULL);
        CHECK_EQ_INT(sqlite3_step(q), SQLITE_DONE);
        sqlite3_finalize(q);
        char sql[160];
        snprintf(sql, sizeof sql, "DELETE FROM jobs WHERE id = %lld", (long long)id1);
        CHECK_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM results WHERE job_id = %lld) + "
                                  "(SELECT count(*) FROM job_clips WHERE job_id = %lld)", (long long)id1, (long long)id1);
        sqlite3_prepare_v2(raw, sql, -1, &q, NULL);
        CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 0);
        sqlite3_finalize(q);
        sqlite3_close(raw);
    }
}

struct token_seen {
    char names[256];
    int admins;
};

static void seen_token(void *user, const char *name, int admin, double created)
{
    struct token_seen *t = user;
    size_t n = strlen(t->names);
    snprintf(t->names + n, sizeof t->names - n, "%s;", name);
    t->admins += admin;
    CHECK(created > 0);
}

static void test_tokens(struct store *s)
{
    struct rt_err err;
    unsigned char h1[32], h2[32];
    char name[STORE_MAX_NAME + 1];
    int admin = -1;
    rt_sha256("secret-1", 8, h1);
    rt_sha256("secret-2", 8, h2);
    CHECK_EQ_INT(store_token_add(s, "alice", h1, 1, &err), RT_OK);
    CHECK_EQ_INT(store_token_add(s, "alice", h2, 0, &err), RT_ECONFLICT);
    CHECK_EQ_INT(store_token_add(s, "bob", h2, 0, &err), RT_OK);
    CHECK_EQ_INT(store_token_add(s, "bad name", h2, 0, &err), RT_EINVAL);
    CHECK_EQ_INT(store_token_find(s, h1, name, &admin, &err), RT_OK);
    CHECK_EQ_STR(name, "alice");
    CHECK_EQ_INT(admin, 1);
    CHECK_EQ_INT(store_token_find(s, h2, name, &admin, &err), RT_OK);
    CHECK_EQ_INT(admin, 0);
    unsigned char h3[32];
    rt_sha256("nope", 4, h3);
    CHECK_EQ_INT(store_token_find(s, h3, name, &admin, &err), RT_ENOTFOUND);
    /* Name length: N accepted, N+1 refused. */
    char longname[STORE_MAX_NAME + 2];
    memset(longname, 'x', STORE_MAX_NAME);
    longname[STORE_MAX_NAME] = 0;
    rt_sha256("l1", 2, h3);
    CHECK_EQ_INT(store_token_add(s, longname, h3, 0, &err), RT_OK);
    longname[STORE_MAX_NAME] = 'x';
    longname[STORE_MAX_NAME + 1] = 0;
    rt_sha256("l2", 2, h3);
    CHECK_EQ_INT(store_token_add(s, longname, h3, 0, &err), RT_EINVAL);
    /* List in name order; revoke: the token no longer authenticates. */
    struct token_seen seen = {"", 0};
    CHECK_EQ_INT(store_token_list(s, seen_token, &seen, &err), RT_OK);
    CHECK(!strncmp(seen.names, "alice;bob;", 10));
    CHECK_EQ_INT(seen.admins, 1);
    CHECK_EQ_INT(store_token_revoke(s, "bob", &err), RT_OK);
    CHECK_EQ_INT(store_token_find(s, h2, name, &admin, &err), RT_ENOTFOUND);
    CHECK_EQ_INT(store_token_revoke(s, "bob", &err), RT_ENOTFOUND);
    seen.names[0] = 0;
    CHECK_EQ_INT(store_token_list(s, seen_token, &seen, &err), RT_OK);
    CHECK(strstr(seen.names, "bob;") == NULL);
    /* A revoked name is never issued again: its jobs keep the name. */
    unsigned char h4[RT_SHA256_LEN];
    rt_sha256("new-bob", 7, h4);
    CHECK_EQ_INT(store_token_add(s, "bob", h4, 0, &err), RT_ECONFLICT);
    CHECK_EQ_STR(err.where, "token.name");
    CHECK(strstr(err.msg, "revoked") != NULL);
    CHECK_EQ_INT(store_token_find(s, h4, name, &admin, &err), RT_ENOTFOUND);
}

static void test_idempotency(struct store *s)
{
    struct rt_err err;
    int64_t a = 0, b = 0, c = 0;
    int existed = -1;
    struct store_job_new n = new_job("alice", "key-1", "BVH A");
    CHECK_EQ_INT(store_job_insert(s, &n, &a, &existed, &err), RT_OK);
    CHECK_EQ_INT(existed, 0);
    CHECK_EQ_INT(store_job_insert(s, &n, &b, &existed, &err), RT_OK);
    CHECK_EQ_INT(existed, 1);
    CHECK_EQ_INT(b, a);
    /* Same key, other input: conflict. */
    struct store_job_new n2 = new_job("alice", "key-1", "BVH B");
    CHECK_EQ_INT(store_job_insert(s, &n2, &c, &existed, &err), RT_ECONFLICT);
    CHECK(strstr(err.msg, "different") != NULL);
    /* Same key, other owner: a new job. */
    struct store_job_new n3 = new_job("bob", "key-1", "BVH A");
    CHECK_EQ_INT(store_job_insert(s, &n3, &c, &existed, &err), RT_OK);
    CHECK_EQ_INT(existed, 0);
    CHECK(c != a);
    /* Key length: N accepted, N+1 refused. */
    char key[STORE_MAX_KEY + 2];
    memset(key, 'k', STORE_MAX_KEY);
    key[STORE_MAX_KEY] = 0;
    struct store_job_new n4 = new_job("alice", key, "BVH C");
    CHECK_EQ_INT(store_job_insert(s, &n4, &c, &existed, &err), RT_OK);
    key[STORE_MAX_KEY] = 'k';
    key[STORE_MAX_KEY + 1] = 0;
    CHECK_EQ_INT(store_job_insert(s, &n4, &c, &existed, &err), RT_ELIMIT);
    /* Other owners never see the job. */
    struct store_job j;
    CHECK_EQ_INT(store_job_get(s, a, "bob", 0, &j, &err), RT_ENOTFOUND);
    CHECK_EQ_INT(store_job_get(s, a, "alice", 0, &j, &err), RT_OK);
    CHECK_EQ_INT(j.state, STORE_QUEUED);
    CHECK_EQ_STR(j.idem_key, "key-1");
    store_job_release(&j);
}

static void test_active_limit(struct store *s)
{
    struct rt_err err;
    int64_t id;
    int existed;
    char clip[32];
    /* carol may have 3 active jobs: the 3rd is accepted, the 4th refused. */
    for (int i = 0; i < 4; i++) {
        snprintf(clip, sizeof clip, "clip %d", i);
        struct store_job_new n = new_job("carol", NULL, clip);
        n.max_active = 3;
        CHECK_EQ_INT(store_job_insert(s, &n, &id, &existed, &err), i < 3 ? RT_OK : RT_EBUSY);
    }
    CHECK(strstr(err.msg, "limit is 3") != NULL);
}


/* store_job_each_queued()'s callback of the crash test: the keys in order. */
struct keys_seen {
    int n;
    int attempts[8];
    char key[8][96];
};

static void seen_key(void *user, int64_t id, int frames, int attempts, const char *key)
{
    struct keys_seen *k = user;
    (void)id;
    (void)frames;
    if (k->n < 8) {
        k->attempts[k->n] = attempts;
        snprintf(k->key[k->n++], sizeof k->key[0], "%s", key);
    }
}

/* Group commit: 16 threads insert at once, every job its own clip; each
 * fourth pair shares an Idempotency-Key (the second finds the first:
 * existed, the same id), and one reuses a key for a different clip (409
 * alone, its group's other jobs stored). */
#define GROUP_THREADS 16
struct group_insert {
    struct store *s;
    char key[32], clip[64];
    int use_key;
    int64_t id;
    int existed;
    enum rt_status st;
    struct store_insert_times tm;
};

static void *group_insert_run(void *arg)
{
    struct group_insert *g = arg;
    struct store_job_new nj = new_job("gus", g->use_key ? g->key : NULL, g->clip);
    struct rt_err err;
    nj.times = &g->tm;
    g->st = store_job_insert(g->s, &nj, &g->id, &g->existed, &err);
    return NULL;
}

static void test_group_commit(const char *path)
{
    struct store *s = NULL;
    struct rt_err err;
    struct group_insert g[GROUP_THREADS];
    pthread_t th[GROUP_THREADS];
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    if (!s) return;
    for (int i = 0; i < GROUP_THREADS; i++) {
        memset(&g[i], 0, sizeof g[i]);
        g[i].s = s;
        /* Threads 0-1, 4-5, 8-9, 12-13 share a key and a clip; 15 reuses 14's key. */
        int pair = i % 4 < 2;
        snprintf(g[i].key, sizeof g[i].key, "k%d", pair ? i / 4 : i == 15 ? 14 : i);
        snprintf(g[i].clip, sizeof g[i].clip, "clip %d", pair ? i / 4 : i);
        g[i].use_key = pair || i >= 14;
    }
    for (int i = 0; i < GROUP_THREADS; i++) CHECK_EQ_INT(pthread_create(&th[i], NULL, group_insert_run, &g[i]), 0);
    for (int i = 0; i < GROUP_THREADS; i++) pthread_join(th[i], NULL);
    int stored = 0, conflicts = 0;
    for (int i = 0; i < GROUP_THREADS; i++) {
        if (g[i].st == RT_ECONFLICT) conflicts++;
        else CHECK_EQ_INT(g[i].st, RT_OK);
        if (g[i].st == RT_OK && !g[i].existed) stored++;
    }
    /* 14 and 15: one stored, the other a conflict (whichever came second). */
    CHECK_EQ_INT(conflicts, 1);
    CHECK_EQ_INT(stored, GROUP_THREADS - 4 - 1);
    /* Where the time went: every submission waited for its group (or
     * none); the writer's times belong to the ones that led a group, at
     * least one, and are -1 for those taken along. */
    int leaders = 0;
    for (int i = 0; i < GROUP_THREADS; i++) {
        const struct store_insert_times *t = &g[i].tm;
        CHECK(t->group >= 0);
        if (t->lock >= 0) {
            leaders++;
            CHECK(t->write >= 0 && t->commit >= 0 && t->more >= 0);
        } else {
            CHECK(t->lock == -1 && t->write == -1 && t->commit == -1 && t->more == -1);
        }
    }
    CHECK(leaders >= 1);
    for (int i = 0; i < GROUP_THREADS; i += 4) {
        CHECK_EQ_INT(g[i].existed + g[i + 1].existed, 1);
        CHECK(g[i].id == g[i + 1].id && g[i].id > 0);
    }
    for (int i = 0; i < GROUP_THREADS; i++) {
        struct store_job j;
        if (g[i].st != RT_OK) continue;
        CHECK_EQ_INT(store_job_get(s, g[i].id, NULL, 1, &j, &err), RT_OK);
        CHECK(j.clip && !strcmp(j.clip, g[i].clip));
        store_job_release(&j);
    }
    store_close(s);
}

/* Readers in parallel: 24 threads (more than the store's read connections)
 * read jobs with their clips and count states at once, each read getting
 * its own job's clip back. */
#define READ_THREADS 24
#define READ_JOBS 32
struct reader_run {
    struct store *s;
    const int64_t *ids;
    int t, bad;
};

static void *reader_main(void *arg)
{
    struct reader_run *r = arg;
    for (int it = 0; it < 50; it++) {
        int k = (r->t * 7 + it) % READ_JOBS;
        struct store_job j;
        struct rt_err err;
        char want[32];
        snprintf(want, sizeof want, "reader clip %d", k);
        if (store_job_get(r->s, r->ids[k], NULL, 1, &j, &err) != RT_OK || !j.clip || strcmp(j.clip, want))
            r->bad++;
        store_job_release(&j);
        long long counts[STORE_N_STATES];
        if (store_job_counts(r->s, counts, &err) != RT_OK || counts[STORE_QUEUED] < READ_JOBS) r->bad++;
    }
    return NULL;
}

static void test_readers(const char *path)
{
    struct store *s = NULL;
    struct rt_err err;
    int64_t ids[READ_JOBS];
    char clips[READ_JOBS][32];
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    if (!s) return;
    for (int k = 0; k < READ_JOBS; k++) {
        int existed = 0;
        snprintf(clips[k], sizeof clips[k], "reader clip %d", k);
        struct store_job_new nj = new_job("rita", NULL, clips[k]);
        CHECK_EQ_INT(store_job_insert(s, &nj, &ids[k], &existed, &err), RT_OK);
    }
    struct reader_run r[READ_THREADS];
    pthread_t th[READ_THREADS];
    for (int t = 0; t < READ_THREADS; t++) {
        r[t] = (struct reader_run){s, ids, t, 0};
        CHECK_EQ_INT(pthread_create(&th[t], NULL, reader_main, &r[t]), 0);
    }
    int bad = 0;
    for (int t = 0; t < READ_THREADS; t++) {
        pthread_join(th[t], NULL);
        bad += r[t].bad;
    }
    CHECK_EQ_INT(bad, 0);
    store_close(s);
}

/* The checkpointer keeps the WAL bounded while a reader polls all the
 * time: 160 submissions of 1 MB clips written back to back (160 MB, faster
 * than the passes 100 ms apart copy them), and the WAL file never passes
 * 96 MB (the restart threshold is 32 MB, forced past 64 MB; past 80 MB the
 * writer waits for the restart). */
struct wal_poller {
    struct store *s;
    int64_t id;
    volatile int stop;
};

static void *wal_poll_run(void *arg)
{
    struct wal_poller *w = arg;
    while (!w->stop) {
        struct store_job j;
        struct rt_err err;
        if (store_job_get(w->s, w->id, NULL, 0, &j, &err) == RT_OK) store_job_release(&j);
    }
    return NULL;
}

static long long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (f) fclose(f);
    return n;
}

static void test_wal_bounded(const char *folder)
{
    char path[512], wal[520];
    struct store *s = NULL;
    struct rt_err err;
    snprintf(path, sizeof path, "%s/wal.db", folder);
    snprintf(wal, sizeof wal, "%s-wal", path);
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    if (!s) return;
    size_t n = (size_t)1 << 20;
    char *clip = malloc(n + 1);
    if (!clip) {
        store_close(s);
        return;
    }
    /* Random bytes: a clip that packs (schema 9) would write a few KB. */
    random_bytes(clip, n, 0x9e3779b97f4a7c15ull);
    clip[n] = 0;
    struct store_job_new nj = new_job("wal", NULL, "first");
    int64_t id;
    int existed;
    CHECK_EQ_INT(store_job_insert(s, &nj, &id, &existed, &err), RT_OK);
    struct wal_poller w = {s, id, 0};
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, wal_poll_run, &w), 0);
    long long most = 0;
    for (int i = 0; i < 160; i++) {
        clip[0] = (char)('a' + i % 26);
        struct store_job_new big = new_job("wal", NULL, clip);
        CHECK_EQ_INT(store_job_insert(s, &big, &id, &existed, &err), RT_OK);
        long long sz = file_size(wal);
        if (sz > most) most = sz;
    }
    w.stop = 1;
    pthread_join(th, NULL);
    fprintf(stderr, "160 inserts of 1 MB back to back: the WAL at most %lld bytes\n", most);
    CHECK(most > 0 && most <= (96ll << 20));
    free(clip);
    store_close(s);
}

/* store_job_claim_many(): one transaction, each job claimed at most once,
 * a cancelled one not at all, and each claim counted as an attempt. */
static void test_claim_many(const char *path)
{
    struct store *s = NULL;
    struct rt_err err;
    int64_t id[3];
    int existed, claimed[3] = {-1, -1, -1}, state;
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    if (!s) return;
    for (int i = 0; i < 3; i++) {
        struct store_job_new nj = new_job("fay", NULL, i == 0 ? "M0" : i == 1 ? "M1" : "M2");
        CHECK_EQ_INT(store_job_insert(s, &nj, &id[i], &existed, &err), RT_OK);
    }
    CHECK_EQ_INT(store_job_cancel(s, id[1], "fay", &state, &err), RT_OK);
    CHECK_EQ_INT(store_job_claim_many(s, id, 3, claimed, &err), RT_OK);
    CHECK(claimed[0] == 1 && claimed[1] == 0 && claimed[2] == 1);
    CHECK_EQ_INT(store_job_claim_many(s, id, 3, claimed, &err), RT_OK);
    CHECK(claimed[0] == 0 && claimed[1] == 0 && claimed[2] == 0);
    for (int i = 0; i < 3; i += 2) {
        struct store_job j;
        CHECK_EQ_INT(store_job_get(s, id[i], NULL, 0, &j, &err), RT_OK);
        CHECK_EQ_INT(j.state, STORE_RUNNING);
        CHECK_EQ_INT(j.attempts, 1);
        store_job_release(&j);
    }
    store_close(s);
}

static void test_lifecycle(const char *path)
{
    struct store *s = NULL;
    struct rt_err err;
    int64_t a, b, c;
    int existed, claimed, stored, n, state;
    float traj[6] = {1, 2, 3, 4, 5, 6};
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    struct store_job_new na = new_job("dave", NULL, "A"), nb = new_job("dave", NULL, "B"),
                         nc = new_job("dave", NULL, "C");
    store_job_insert(s, &na, &a, &existed, &err);
    store_job_insert(s, &nb, &b, &existed, &err);
    store_job_insert(s, &nc, &c, &existed, &err);
    CHECK_EQ_INT(store_job_claim(s, a, &claimed, &err), RT_OK);
    CHECK_EQ_INT(claimed, 1);
    CHECK_EQ_INT(store_job_claim(s, a, &claimed, &err), RT_OK);
    CHECK_EQ_INT(claimed, 0);
    CHECK_EQ_INT(store_job_progress(s, a, 7, 0.5, &err), RT_OK);
    struct store_job j;
    store_job_get(s, a, NULL, 0, &j, &err);
    CHECK_EQ_INT(j.state, STORE_RUNNING);
    CHECK_EQ_INT(j.lm_iter, 7);
    CHECK_EQ_INT(j.attempts, 1);
    store_job_release(&j);
    /* No result for a job that is not succeeded. */
    int fr, co;
    CHECK_EQ_INT(store_result_get(s, a, NULL, &fr, &co, NULL, NULL, NULL, &err), RT_ESTATE);
    /* A bad result (mismatched blob) is rolled back whole: the job stays running. */
    CHECK(store_job_finish(s, a, -1, 3, NULL, traj, "{}", 5, 0.25, 0.1, 1, &stored, &err) != RT_OK);
    CHECK_EQ_INT(stored, 0);
    store_job_get(s, a, NULL, 0, &j, &err);
    CHECK_EQ_INT(j.state, STORE_RUNNING);
    store_job_release(&j);
    /* Crash: a and b claimed, the process dies, restart requeues them. */
    store_job_claim(s, b, &claimed, &err);
    store_close(s);
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    int n_failed = -1;
    CHECK_EQ_INT(store_job_requeue_running(s, &n, &n_failed, &err), RT_OK);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(n_failed, 0);
    store_job_get(s, a, NULL, 0, &j, &err);
    CHECK_EQ_INT(j.state, STORE_QUEUED);
    CHECK_EQ_INT(j.lm_iter, 0);
    store_job_release(&j);
    /* The queued jobs in id order with their stored keys and the runs a
     * crash interrupted (the scheduler retries those alone): a and b once,
     * c never. */
    {
        struct keys_seen ks;
        memset(&ks, 0, sizeof ks);
        CHECK_EQ_INT(store_job_each_queued(s, seen_key, &ks, &err), RT_OK);
        CHECK_EQ_INT(ks.n, 3);
        CHECK_EQ_STR(ks.key[0], na.class_key);
        CHECK_EQ_STR(ks.key[1], nb.class_key);
        CHECK_EQ_STR(ks.key[2], nc.class_key);
        CHECK_EQ_INT(ks.attempts[0], 1);
        CHECK_EQ_INT(ks.attempts[1], 1);
        CHECK_EQ_INT(ks.attempts[2], 0);
    }
    /* Result and state in one transaction. */
    store_job_claim(s, a, &claimed, &err);
    CHECK_EQ_INT(store_job_finish(s, a, 2, 3, "[\"x\",\"y\",\"z\"]", traj, "{\"ok\":1}", 5, 0.25, 0.1, 2, &stored, &err), RT_OK);
    CHECK_EQ_INT(stored, 1);
    float *t = NULL;
    char *rep = NULL;
    char *names = NULL;
    CHECK_EQ_INT(store_result_get(s, a, "dave", &fr, &co, &names, &t, &rep, &err), RT_OK);
    CHECK_EQ_INT(fr, 2);
    CHECK_EQ_INT(co, 3);
    CHECK_EQ_STR(names, "[\"x\",\"y\",\"z\"]");
    free(names);
    CHECK(t && !memcmp(t, traj, sizeof traj));
    CHECK_EQ_STR(rep, "{\"ok\":1}");
    free(t);
    free(rep);
    CHECK_EQ_INT(store_result_get(s, a, "eve", &fr, &co, NULL, NULL, NULL, &err), RT_ENOTFOUND);
    store_job_get(s, a, NULL, 0, &j, &err);
    CHECK_EQ_INT(j.state, STORE_SUCCEEDED);
    CHECK_EQ_INT(j.batch_clips, 2);
    CHECK_NEAR(j.cost, 0.25, 1e-9);
    store_job_release(&j);
    /* Cancel while running: the result is never stored. */
    store_job_claim(s, b, &claimed, &err);
    CHECK_EQ_INT(store_job_cancel(s, b, "eve", &state, &err), RT_ENOTFOUND);
    CHECK_EQ_INT(store_job_cancel(s, b, "dave", &state, &err), RT_OK);
    CHECK_EQ_INT(state, STORE_RUNNING);
    CHECK_EQ_INT(store_job_finish(s, b, 2, 3, NULL, traj, "{}", 5, 0.25, 0.1, 1, &stored, &err), RT_OK);
    CHECK_EQ_INT(stored, 0);
    CHECK_EQ_INT(store_result_get(s, b, NULL, &fr, &co, NULL, NULL, NULL, &err), RT_ESTATE);
    CHECK_EQ_INT(store_job_cancel(s, b, NULL, &state, &err), RT_ESTATE);
    CHECK_EQ_INT(state, STORE_CANCELLED);
    CHECK_EQ_INT(store_job_cancel(s, a, NULL, &state, &err), RT_ESTATE);
    /* Cancel while queued: the claim fails. */
    CHECK_EQ_INT(store_job_cancel(s, c, NULL, &state, &err), RT_OK);
    store_job_claim(s, c, &claimed, &err);
    CHECK_EQ_INT(claimed, 0);
    /* A job interrupted STORE_MAX_ATTEMPTS times fails instead of running
     * again; at one attempt fewer it is queued again. */
    {
        struct store_job_new ne = new_job("erin", NULL, "E");
        int64_t e = 0;
        store_job_insert(s, &ne, &e, &existed, &err);
        for (int k = 1; k <= STORE_MAX_ATTEMPTS; k++) {
            CHECK_EQ_INT(store_job_claim(s, e, &claimed, &err), RT_OK);
            CHECK_EQ_INT(claimed, 1);
            CHECK_EQ_INT(store_job_requeue_running(s, &n, &n_failed, &err), RT_OK);
            CHECK_EQ_INT(n, k < STORE_MAX_ATTEMPTS ? 1 : 0);
            CHECK_EQ_INT(n_failed, k < STORE_MAX_ATTEMPTS ? 0 : 1);
        }
        store_job_get(s, e, NULL, 0, &j, &err);
        CHECK_EQ_INT(j.state, STORE_FAILED);
        CHECK_EQ_INT(j.attempts, STORE_MAX_ATTEMPTS);
        CHECK(j.finished > 0);
        CHECK(j.error && strstr(j.error, "interrupted 3 times while it was solved") &&
              strstr(j.error, "\"code\":\"invalid state\""));
        store_job_release(&j);
    }
    /* A run interrupted after its solve (marked solved, its result not
     * stored) is queued again without counting as an interrupted solve:
     * with two such runs between them, three interrupted solves still fail
     * the job only at the third, while attempts counts all five runs. */
    {
        struct store_job_new nf = new_job("fred", NULL, "F");
        int64_t fj = 0;
        store_job_insert(s, &nf, &fj, &existed, &err);
        const int solved[5] = {1, 0, 1, 0, 0};
        for (int k = 0; k < 5; k++) {
            CHECK_EQ_INT(store_job_claim(s, fj, &claimed, &err), RT_OK);
            CHECK_EQ_INT(claimed, 1);
            if (solved[k]) CHECK_EQ_INT(store_job_solved_many(s, &fj, 1, &err), RT_OK);
            CHECK_EQ_INT(store_job_requeue_running(s, &n, &n_failed, &err), RT_OK);
            CHECK_EQ_INT(n_failed, k < 4 ? 0 : 1);
            CHECK_EQ_INT(n, k < 4 ? 1 : 0);
        }
        store_job_get(s, fj, NULL, 0, &j, &err);
        CHECK_EQ_INT(j.state, STORE_FAILED);
        CHECK_EQ_INT(j.attempts, 5);
        CHECK(j.error && strstr(j.error, "interrupted 3 times while it was solved"));
        store_job_release(&j);
        /* STORE_MAX_ATTEMPTS runs interrupted while their results were
         * stored fail a job too (its finishing would crash again). */
        struct store_job_new ng = new_job("gina", NULL, "G");
        int64_t gj = 0;
        store_job_insert(s, &ng, &gj, &existed, &err);
        for (int k = 1; k <= STORE_MAX_ATTEMPTS; k++) {
            CHECK_EQ_INT(store_job_claim(s, gj, &claimed, &err), RT_OK);
            CHECK_EQ_INT(store_job_solved_many(s, &gj, 1, &err), RT_OK);
            CHECK_EQ_INT(store_job_requeue_running(s, &n, &n_failed, &err), RT_OK);
            CHECK_EQ_INT(n_failed, k < STORE_MAX_ATTEMPTS ? 0 : 1);
        }
        store_job_get(s, gj, NULL, 0, &j, &err);
        CHECK_EQ_INT(j.state, STORE_FAILED);
        CHECK(j.error && strstr(j.error, "interrupted 3 times while its result was stored"));
        store_job_release(&j);
        /* A finished job is not marked (nor is one not running). */
        CHECK_EQ_INT(store_job_solved_many(s, &gj, 1, &err), RT_OK);
    }
    /* Fail. */
    struct store_job_new nd = new_job("dave", NULL, "D");
    int64_t d;
    store_job_insert(s, &nd, &d, &existed, &err);
    CHECK_EQ_INT(store_job_fail(s, d, "{\"code\":\"x\"}", &err), RT_OK);
    store_job_get(s, d, NULL, 0, &j, &err);
    CHECK_EQ_INT(j.state, STORE_FAILED);
    CHECK_EQ_STR(j.error, "{\"code\":\"x\"}");
    store_job_release(&j);
    long long counts[STORE_N_STATES];
    CHECK_EQ_INT(store_job_counts(s, counts, &err), RT_OK);
    CHECK_EQ_INT(counts[STORE_SUCCEEDED], 1);
    CHECK_EQ_INT(counts[STORE_CANCELLED], 2);
    CHECK_EQ_INT(counts[STORE_FAILED], 4); /* erin, fred, gina, dave */
    /* Paging, newest first. */
    struct store_job *page = NULL;
    CHECK_EQ_INT(store_job_list(s, "dave", 0, 2, &page, &n, &err), RT_OK);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(page[0].id, d);
    CHECK_EQ_INT(page[1].id, c);
    int64_t before = page[1].id;
    for (int i = 0; i < n; i++) store_job_release(&page[i]);
    free(page);
    CHECK_EQ_INT(store_job_list(s, "dave", before, 10, &page, &n, &err), RT_OK);
    CHECK_EQ_INT(n, 2);
    for (int i = 0; i < n; i++) store_job_release(&page[i]);
    free(page);
    CHECK_EQ_INT(store_job_list(s, "dave", 0, STORE_MAX_PAGE + 1, &page, &n, &err), RT_EINVAL);
    store_close(s);
}

static void test_assets(struct store *s)
{
    struct rt_err err;
    char *t = NULL;
    size_t len = 0;
    CHECK_EQ_INT(store_asset_put(s, "robot", "myrobot", "<robot/>", 8, &err), RT_OK);
    CHECK_EQ_INT(store_asset_get(s, "robot", "myrobot", &t, &len, &err), RT_OK);
    CHECK_EQ_STR(t, "<robot/>");
    free(t);
    CHECK_EQ_INT(store_asset_get(s, "profile", "myrobot", &t, &len, &err), RT_ENOTFOUND);
    CHECK_EQ_INT(store_asset_put(s, "profile", "../x", "{}", 2, &err), RT_EINVAL);
    /* Not replaced while a queued or running job names it. */
    struct store_job_new n = new_job("carol", NULL, "ASSET");
    n.robot = "myrobot";
    n.profile = "myprofile";
    int64_t id = 0;
    int existed = 0;
    CHECK_EQ_INT(store_asset_put(s, "profile", "myprofile", "{}", 2, &err), RT_OK);
    CHECK_EQ_INT(store_job_insert(s, &n, &id, &existed, &err), RT_OK);
    CHECK_EQ_INT(store_asset_put(s, "robot", "myrobot", "<robot name=\"b\"/>", 17, &err), RT_ECONFLICT);
    CHECK_EQ_STR(err.where, "url");
    CHECK_EQ_INT(store_asset_put(s, "profile", "myprofile", "{}", 2, &err), RT_ECONFLICT);
    CHECK_EQ_INT(store_asset_get(s, "robot", "myrobot", &t, &len, &err), RT_OK);
    CHECK_EQ_STR(t, "<robot/>");
    free(t);
    CHECK_EQ_INT(store_job_fail(s, id, "{}", &err), RT_OK);
    CHECK_EQ_INT(store_asset_put(s, "robot", "myrobot", "<robot name=\"b\"/>", 17, &err), RT_OK);
    CHECK_EQ_INT(store_asset_put(s, "profile", "myprofile", "{}", 2, &err), RT_OK);
}

int main(void)
{
    char path[128];
    struct store *s = NULL;
    struct rt_err err;
    snprintf(dir, sizeof dir, "/tmp/test_store.XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    test_sha256();
    test_schema_and_migration();
    test_migration_7();
    test_packed_sources();
    test_joint_fields_insert();
    db_path(path, sizeof path, "main.db");
    CHECK_EQ_INT(store_open(path, &s, &err), RT_OK);
    if (s) {
        test_tokens(s);
        test_idempotency(s);
        test_active_limit(s);
        test_assets(s);
        /* PRAGMA synchronous: NORMAL as opened, FULL and back on request. */
        CHECK_EQ_INT(store_synchronous(s), 1);
        CHECK_EQ_INT(store_set_sync(s, 1, &err), RT_OK);
        CHECK_EQ_INT(store_synchronous(s), 2);
        CHECK_EQ_INT(store_set_sync(s, 0, &err), RT_OK);
        CHECK_EQ_INT(store_synchronous(s), 1);
        store_close(s);
    }
    db_path(path, sizeof path, "life.db");
    test_lifecycle(path);
    test_claim_many(path);
    test_group_commit(path);
    test_readers(path);
    test_wal_bounded(dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    return test_report("test_store");
}
