/* store.c -- the SQLite database of retargetd (see store.h). The schema is
 * storage/schema.sql, embedded below with .incbin; migrations[] holds each
 * later version's SQL. Every entry point takes the store's mutex, so one
 * connection serves every thread and multi-statement transactions never
 * interleave. */
#include "store.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <zstd.h>

/* The schema file, embedded at build time (the Makefile makes store.o
 * depend on storage/schema.sql). NUL-terminated. */
__asm__(".pushsection .rodata\n"
        ".balign 16\n"
        "store_schema_text:\n"
        ".incbin \"storage/schema.sql\"\n"
        ".byte 0\n"
        ".popsection\n");
extern const char store_schema_text[] __asm__("store_schema_text");

/* The columns of jobs at version 6, which migration 7 copies. */
#define MIGRATE7_COLS                                                                                      \
    "id, owner, idem_key, input_hash, name, robot, profile, options, source_kind, source_robot, clip, "    \
    "frames, class_key, state, lm_iter, cost, error, created, started, finished, attempts, solve_seconds, " \
    "batch_clips, plan"

/* Migration i (1-based) brings a file from version i-1 to version i.
 * Never edit a released entry: add one. */
static const char *migration_sql(int version)
{
    switch (version) {
    case 1: return store_schema_text;
    case 2: /* solve timing and batch size per job, for the job view and metrics */
        return "ALTER TABLE jobs ADD COLUMN solve_seconds REAL;\n"
               "ALTER TABLE jobs ADD COLUMN batch_clips INTEGER;\n";
    case 3: /* a result's column names (JSON array), so that reading it never
             * needs the robot, which an upload may have replaced since */
        return "ALTER TABLE results ADD COLUMN column_names TEXT;\n";
    case 4: /* the job's plan (retarget/job.h): the worker builds from it
             * without mapping the clip again */
        return "ALTER TABLE jobs ADD COLUMN plan TEXT;\n";
    case 5: /* clips in a table of their own: SQLite stores a row's columns
             * in order, and in the jobs row the clip came before the state,
             * the progress and every column added since, so that each
             * status read walked the clip's overflow pages and each update
             * (a claim, the progress every 50 ms) rewrote the whole clip --
             * milliseconds per poll and per update for a clip of a few MB */
        return "CREATE TABLE job_clips (\n"
               "    job_id INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,\n"
               "    clip   TEXT NOT NULL\n"
               ");\n"
               "INSERT INTO job_clips (job_id, clip) SELECT id, clip FROM jobs;\n"
               "UPDATE jobs SET clip = '';\n";
    case 6: /* the names of revoked tokens, never issued again: a job's
             * owner is a token's name, so a reissued name would see the
             * revoked token's jobs */
        return "CREATE TABLE revoked_tokens (\n"
               "    name    TEXT PRIMARY KEY,\n"
               "    revoked REAL NOT NULL\n"
               ");\n";
    case 7: /* joint-position sources (kinematics/joints.h): a third source
             * kind, and with the source its .npy joint names (one a line),
             * units (metres per unit) and up axis when given. SQLite cannot
             * alter a CHECK constraint, so jobs is rebuilt: a new table,
             * the rows copied with their ids, the old one dropped, the new
             * one renamed, its indexes made again (SQLite's "making other
             * kinds of table schema changes"). migrate() runs this with
             * foreign keys off, so that the DROP does not cascade into
             * results and job_clips, whose references name the table and
             * bind to the renamed one, and checks them before the commit.
             * The AUTOINCREMENT counter is carried over, so that an id is
             * never given twice. */
        return "CREATE TABLE jobs_new (\n"
               "    id           INTEGER PRIMARY KEY AUTOINCREMENT,\n"
               "    owner        TEXT NOT NULL,\n"
               "    idem_key     TEXT,\n"
               "    input_hash   BLOB NOT NULL CHECK (length(input_hash) = 32),\n"
               "    name         TEXT NOT NULL,\n"
               "    robot        TEXT NOT NULL,\n"
               "    profile      TEXT,\n"
               "    options      TEXT NOT NULL DEFAULT '{}',\n"
               "    source_kind  TEXT NOT NULL CHECK (source_kind IN ('bvh', 'csv', 'joints')),\n"
               "    source_robot TEXT,\n"
               "    clip         TEXT NOT NULL,\n"
               "    frames       INTEGER NOT NULL CHECK (frames > 0),\n"
               "    class_key    TEXT NOT NULL,\n"
               "    state        TEXT NOT NULL DEFAULT 'queued'\n"
               "                 CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),\n"
               "    lm_iter      INTEGER NOT NULL DEFAULT 0,\n"
               "    cost         REAL,\n"
               "    error        TEXT,\n"
               "    created      REAL NOT NULL,\n"
               "    started      REAL,\n"
               "    finished     REAL,\n"
               "    attempts     INTEGER NOT NULL DEFAULT 0,\n"
               "    solve_seconds REAL,\n"
               "    batch_clips  INTEGER,\n"
               "    plan         TEXT,\n"
               "    UNIQUE (owner, idem_key)\n"
               ");\n"
               "INSERT INTO jobs_new (" MIGRATE7_COLS ") SELECT " MIGRATE7_COLS " FROM jobs;\n"
               "INSERT INTO sqlite_sequence (name, seq) SELECT 'jobs_new', 0 WHERE NOT EXISTS\n"
               "    (SELECT 1 FROM sqlite_sequence WHERE name = 'jobs_new');\n"
               "UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence\n"
               "    WHERE name = 'jobs'), 0)) WHERE name = 'jobs_new';\n"
               "DROP TABLE jobs;\n"
               "ALTER TABLE jobs_new RENAME TO jobs;\n"
               "CREATE INDEX jobs_by_state ON jobs (state, id);\n"
               "CREATE INDEX jobs_by_owner ON jobs (owner, id);\n"
               "ALTER TABLE job_clips ADD COLUMN joint_names TEXT;\n"
               "ALTER TABLE job_clips ADD COLUMN joint_units REAL;\n"
               "ALTER TABLE job_clips ADD COLUMN joint_up TEXT;\n";
    case 8: /* a run's phase: solved is set once its solve has finished
             * (the result still to be stored), finish_interrupts counts the
             * runs a crash interrupted in that phase. A crash there says
             * nothing of the clip, so store_job_requeue_running() fails a
             * job for its interrupted solves (attempts minus those runs),
             * not for a daemon killed while it stored results. */
        return "ALTER TABLE jobs ADD COLUMN solved INTEGER NOT NULL DEFAULT 0;\n"
               "ALTER TABLE jobs ADD COLUMN finish_interrupts INTEGER NOT NULL DEFAULT 0;\n";
    case 9: /* a source stored packed: clip_encoding 'zstd' says that
             * job_clips.clip holds one zstd frame of the submitted bytes
             * (store_job_insert() packs text sources, about 2.4 times
             * smaller, so that fewer bytes go through the one writer, the
             * WAL and the disk); NULL: the bytes as submitted (every row
             * written before). With it, a joint-position source's names,
             * units and up axis move to jobs (job_clips keeps its columns,
             * NULL in new rows): a value after the clip in job_clips'
             * record made SQLite build the zeroblob the clip is written
             * into in memory, twice the clip (tests/test_store.c) */
        return "ALTER TABLE jobs ADD COLUMN clip_encoding TEXT CHECK (clip_encoding IN ('zstd'));\n"
               "ALTER TABLE jobs ADD COLUMN joint_names TEXT;\n"
               "ALTER TABLE jobs ADD COLUMN joint_units REAL;\n"
               "ALTER TABLE jobs ADD COLUMN joint_up TEXT;\n"
               "UPDATE jobs SET (joint_names, joint_units, joint_up) = (SELECT joint_names, joint_units, joint_up\n"
               "    FROM job_clips WHERE job_id = jobs.id) WHERE source_kind = 'joints';\n";
    default: return NULL;
    }
}

/* Connections to one file: `db` writes (and reads inside its
 * transactions), serialized by `mu`; STORE_READERS read-only ones (PRAGMA
 * query_only), each lent to one reader at a time (reader_take and
 * reader_give, under rmu). In WAL mode a reader never waits for a writer,
 * so status polls, listings, token checks and result fetches do not queue
 * behind a commit that writes (and syncs) a large clip or result, and
 * with several read connections they do not queue behind each other
 * either: a fetch that reads a long result blob holds one of them, not
 * every poll. `version` is the schema version after the migrations. */
#define STORE_READERS 8

struct insert_req;

struct store {
    sqlite3 *db;
    sqlite3 *rdb[STORE_READERS];
    int rbusy[STORE_READERS];
    pthread_mutex_t mu, rmu;
    pthread_cond_t rcv;
    /* store_job_insert()'s group commit: the submissions waiting, and
     * whether one of them is committing (under gmu). */
    pthread_mutex_t gmu;
    pthread_cond_t gcv;
    struct insert_req *g_head, **g_tail;
    int g_leader;
    /* The WAL checkpointer: a connection of its own and a thread that folds
     * the WAL back into the database every STORE_CHECKPOINT_MS, so that no
     * writer's commit (a submission's) waits for a checkpoint (started,
     * stop and the wakeup under cmu). */
    sqlite3 *cdb;
    pthread_t ckpt;
    int ckpt_started, ckpt_stop;
    unsigned wal_restarts; /* the WAL restarts so far (under cmu; wcv signals each) */
    pthread_mutex_t cmu;
    pthread_cond_t ccv, wcv;
    int version;
    int sync_full; /* store_set_sync(): the writer's PRAGMA synchronous is FULL */
    int no_pack;   /* store_set_pack(s, 0): sources stored as given */
};

static const char *const state_names[STORE_N_STATES] = {"queued", "running", "succeeded", "failed",
                                                        "cancelled"};

const char *store_state_str(int state)
{
    return state >= 0 && state < STORE_N_STATES ? state_names[state] : "unknown";
}

const char *store_source_str(int kind)
{
    return kind == STORE_SRC_CSV ? "csv" : kind == STORE_SRC_JOINTS ? "joints" : "bvh";
}

static int state_from_str(const char *s)
{
    for (int i = 0; s && i < STORE_N_STATES; i++)
        if (!strcmp(s, state_names[i])) return i;
    return -1;
}

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static enum rt_status db_err(sqlite3 *db, struct rt_err *err, const char *where)
{
    int rc = sqlite3_errcode(db);
    enum rt_status st = RT_EIO;
    if ((rc & 0xff) == SQLITE_CONSTRAINT) st = RT_ECONFLICT;
    if ((rc & 0xff) == SQLITE_NOMEM) st = RT_ENOMEM;
    return rt_err_set(err, st, where, "sqlite: %s", sqlite3_errmsg(db));
}

static enum rt_status exec(struct store *s, const char *sql, struct rt_err *err, const char *where)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK) return RT_OK;
    enum rt_status st = rt_err_set(err, RT_EIO, where, "sqlite: %s", msg ? msg : "error");
    sqlite3_free(msg);
    return st;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return NULL;
    return st;
}

static void rollback(struct store *s) { sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL); }

/* Ends the transaction a BEGIN IMMEDIATE opened: COMMIT when st is RT_OK,
 * else ROLLBACK. A failed COMMIT is rolled back and its status returned, so
 * a caller never leaves a half-written transaction open. */
static enum rt_status tx_end(struct store *s, enum rt_status st, struct rt_err *err, const char *where)
{
    if (st == RT_OK && (st = exec(s, "COMMIT", err, where)) == RT_OK) return RT_OK;
    rollback(s);
    return st;
}

static int user_version(struct store *s)
{
    sqlite3_stmt *q = prep(s->db, "PRAGMA user_version");
    int v = -1;
    if (q && sqlite3_step(q) == SQLITE_ROW) v = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    return v;
}

/* RT_OK when no row of the open transaction breaks a foreign key (PRAGMA
 * foreign_key_check returns no row), else RT_EIO at `where` naming the
 * first table that does. */
static enum rt_status fk_check(struct store *s, const char *where, struct rt_err *err)
{
    sqlite3_stmt *q = prep(s->db, "PRAGMA foreign_key_check");
    enum rt_status st = RT_OK;
    if (!q) return db_err(s->db, err, where);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        st = rt_err_set(err, RT_EIO, where, "a row of table '%s' breaks a foreign key",
                        (const char *)sqlite3_column_text(q, 0));
    else if (rc != SQLITE_DONE) st = db_err(s->db, err, where);
    sqlite3_finalize(q);
    return st;
}

/* Brings the file from its version up to `target`, one transaction per
 * step. Foreign keys are off while the steps run (PRAGMA foreign_keys
 * cannot change inside a transaction, and a table rebuild's DROP TABLE
 * would otherwise delete the rows that reference it); each step checks
 * them before its commit, and they are on again when this returns,
 * whatever the outcome. */
static enum rt_status migrate(struct store *s, int target, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    int v = user_version(s);
    if (v < 0) return db_err(s->db, err, "db");
    if (v > STORE_VERSION)
        return rt_err_set(err, RT_ESTATE, "db",
                          "database version %d is newer than this build's %d", v, STORE_VERSION);
    if (v >= target) return RT_OK;
    if ((st = exec(s, "PRAGMA foreign_keys = OFF", err, "db:migrate")) != RT_OK) return st;
    for (; v < target; v++) {
        char pragma[64];
        if ((st = exec(s, "BEGIN IMMEDIATE", err, "db:migrate")) != RT_OK) break;
        /* Re-read inside the write lock: another process may have migrated. */
        int cur = user_version(s);
        if (cur > v) {
            exec(s, "COMMIT", NULL, NULL);
            v = cur - 1;
            continue;
        }
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
        char where[32];
        snprintf(where, sizeof where, "db:migration %d", v + 1);
        if ((st = exec(s, migration_sql(v + 1), err, where)) != RT_OK ||
            (st = fk_check(s, where, err)) != RT_OK ||
            (st = exec(s, pragma, err, where)) != RT_OK ||
            (st = exec(s, "COMMIT", err, where)) != RT_OK) {
            rollback(s);
            break;
        }
    }
    enum rt_status on = exec(s, "PRAGMA foreign_keys = ON", st == RT_OK ? err : NULL, "db:migrate");
    return st != RT_OK ? st : on;
}

/* Milliseconds between the checkpointer's passes; WAL frames (pages of
 * 4 kB) past which it restarts the WAL, and the size the file is cut back
 * to then. */
#define STORE_CHECKPOINT_MS 100
/* Milliseconds a connection waits for a lock before SQLITE_BUSY. */
#define STORE_BUSY_MS 5000
#define STORE_WAL_RESTART_FRAMES 8192
#define STORE_WAL_LIMIT "33554432"
/* A restart holds writers back while it waits for readers: it is tried
 * only once a passive pass has copied the whole WAL (so that it copies
 * nothing and only waits), and then waits at most STORE_RESTART_WAIT_MS;
 * past STORE_WAL_FORCE_FRAMES it is made whatever it costs, so the WAL
 * stays bounded under any load. */
#define STORE_RESTART_WAIT_MS 10
#define STORE_WAL_FORCE_FRAMES 16384
/* Past this the writer itself waits for the restart (wal_hook): above the
 * force size, so that a daemon whose checkpoints keep up with its writes
 * never holds a submission there (at 64 MB the p99 of bench-e2e's
 * submissions rose from 76-122 to 165-183 ms on the H200), and below the
 * 96 MB that test_store allows. */
#define STORE_WAL_HOLD_FRAMES 20480

static void *checkpointer_main(void *arg)
{
    struct store *s = arg;
    pthread_mutex_lock(&s->cmu);
    while (!s->ckpt_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += STORE_CHECKPOINT_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&s->ccv, &s->cmu, &ts);
        if (s->ckpt_stop) break;
        pthread_mutex_unlock(&s->cmu);
        /* PASSIVE: copies what it can without waiting for any reader or
         * writer; the database file is synced when it has copied. A WAL
         * that readers never let restart from its beginning (polls all the
         * time) is restarted once it holds STORE_WAL_RESTART_FRAMES: that
         * waits for the readers of the moment and holds writers back that
         * long (a submission's group commit among them), so it is tried
         * when the pass copied everything, with a short wait (see
         * STORE_RESTART_WAIT_MS); the file is cut back to
         * journal_size_limit. */
        int n_log = 0, n_done = 0;
        (void)sqlite3_wal_checkpoint_v2(s->cdb, NULL, SQLITE_CHECKPOINT_PASSIVE, &n_log, &n_done);
        int force = n_log >= STORE_WAL_FORCE_FRAMES;
        if (n_log >= STORE_WAL_RESTART_FRAMES && (n_done == n_log || force)) {
            sqlite3_busy_timeout(s->cdb, force ? STORE_BUSY_MS : STORE_RESTART_WAIT_MS);
            int rc = sqlite3_wal_checkpoint_v2(s->cdb, NULL, SQLITE_CHECKPOINT_RESTART, &n_log, &n_done);
            sqlite3_busy_timeout(s->cdb, STORE_BUSY_MS);
            if (rc == SQLITE_OK) {
                pthread_mutex_lock(&s->cmu);
                s->wal_restarts++;
                pthread_cond_broadcast(&s->wcv); /* a writer held by wal_hook goes on */
                pthread_mutex_unlock(&s->cmu);
            }
        }
        pthread_mutex_lock(&s->cmu);
    }
    pthread_mutex_unlock(&s->cmu);
    return NULL;
}

/* The writer's commit hook (sqlite3_wal_hook: after the commit, its lock
 * released). A WAL past STORE_WAL_RESTART_FRAMES wakes the checkpointer at
 * once rather than at its next pass. One past STORE_WAL_HOLD_FRAMES, which
 * the passes have not kept up with, holds the writer here until the
 * checkpointer has restarted it (at most STORE_BUSY_MS): a writer faster
 * than the passes (test_store's 1 MB inserts back to back took it to
 * 100-174 MB) would otherwise take the WAL past any bound while a pass
 * copies. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
    struct store *s = arg;
    (void)db;
    (void)name;
    if (frames < STORE_WAL_RESTART_FRAMES) return SQLITE_OK;
    pthread_mutex_lock(&s->cmu);
    pthread_cond_signal(&s->ccv);
    if (frames >= STORE_WAL_HOLD_FRAMES) {
        unsigned epoch = s->wal_restarts;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += STORE_BUSY_MS / 1000;
        while (s->wal_restarts == epoch && !s->ckpt_stop)
            if (pthread_cond_timedwait(&s->wcv, &s->cmu, &ts) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&s->cmu);
    return SQLITE_OK;
}

/* Moves checkpoints off the writer (wal_autocheckpoint 0 there) onto a
 * thread of their own, woken by the writer's commits past the restart
 * size; where that cannot start, the writer checkpoints as SQLite does by
 * default. */
static void checkpointer_start(struct store *s, const char *path)
{
    /* The connection learns that the file is in WAL mode when it first
     * reads it: until then a checkpoint would do nothing. */
    if (sqlite3_open_v2(path, &s->cdb, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(s->cdb, STORE_BUSY_MS) != SQLITE_OK ||
        sqlite3_exec(s->cdb, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close_v2(s->cdb);
        s->cdb = NULL;
        return;
    }
    sqlite3_exec(s->cdb, "PRAGMA journal_size_limit = " STORE_WAL_LIMIT, NULL, NULL, NULL);
    sqlite3_exec(s->db, "PRAGMA journal_size_limit = " STORE_WAL_LIMIT, NULL, NULL, NULL);
    if (pthread_create(&s->ckpt, NULL, checkpointer_main, s)) return;
    s->ckpt_started = 1;
    sqlite3_exec(s->db, "PRAGMA wal_autocheckpoint = 0", NULL, NULL, NULL);
    sqlite3_wal_hook(s->db, wal_hook, s); /* after: the pragma sets a hook of its own */
}

/* Opens a connection to `path` (flags, and FULLMUTEX) with the store's
 * busy timeout and extended result codes. */
static enum rt_status conn_open(const char *path, int flags, sqlite3 **db, struct rt_err *err)
{
    if (sqlite3_open_v2(path, db, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK)
        return rt_err_set(err, RT_EIO, path, "cannot open database: %s", *db ? sqlite3_errmsg(*db) : "out of memory");
    sqlite3_busy_timeout(*db, STORE_BUSY_MS);
    sqlite3_extended_result_codes(*db, 1);
    return RT_OK;
}

enum rt_status store_open_at(const char *path, int version, struct store **out, struct rt_err *err)
{
    enum rt_status st;
    struct store *s = calloc(1, sizeof *s);
    *out = NULL;
    if (version < 1 || version > STORE_VERSION) {
        free(s);
        return rt_err_set(err, RT_EINVAL, "db", "no schema version %d", version);
    }
    if (!s) return rt_err_set(err, RT_ENOMEM, "db", "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->rmu, NULL);
    pthread_cond_init(&s->rcv, NULL);
    pthread_mutex_init(&s->gmu, NULL);
    pthread_cond_init(&s->gcv, NULL);
    pthread_mutex_init(&s->cmu, NULL);
    pthread_cond_init(&s->ccv, NULL);
    pthread_cond_init(&s->wcv, NULL);
    s->g_tail = &s->g_head;
    if ((st = conn_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &s->db, err)) != RT_OK) goto fail;
    if ((st = exec(s, "PRAGMA journal_mode = WAL", err, path)) != RT_OK ||
        (st = exec(s, "PRAGMA synchronous = NORMAL", err, path)) != RT_OK ||
        (st = exec(s, "PRAGMA foreign_keys = ON", err, path)) != RT_OK)
        goto fail;
    if ((st = migrate(s, version, err)) != RT_OK) goto fail;
    s->version = user_version(s);
    for (int i = 0; i < STORE_READERS; i++) {
        if ((st = conn_open(path, SQLITE_OPEN_READWRITE, &s->rdb[i], err)) != RT_OK) goto fail;
        if (sqlite3_exec(s->rdb[i], "PRAGMA query_only = 1", NULL, NULL, NULL) != SQLITE_OK) {
            st = rt_err_set(err, RT_EIO, path, "sqlite: %s", sqlite3_errmsg(s->rdb[i]));
            goto fail;
        }
    }
    checkpointer_start(s, path);
    *out = s;
    return RT_OK;
fail:
    store_close(s);
    return st;
}

enum rt_status store_open(const char *path, struct store **out, struct rt_err *err)
{
    return store_open_at(path, STORE_VERSION, out, err);
}

void store_set_pack(struct store *s, int on)
{
    s->no_pack = !on;
}

enum rt_status store_set_sync(struct store *s, int full, struct rt_err *err)
{
    pthread_mutex_lock(&s->mu);
    enum rt_status st = exec(s, full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", err, "db");
    if (st == RT_OK) s->sync_full = full;
    pthread_mutex_unlock(&s->mu);
    return st;
}

int store_synchronous(struct store *s)
{
    int v = -1;
    pthread_mutex_lock(&s->mu);
    sqlite3_stmt *q = prep(s->db, "PRAGMA synchronous");
    if (q && sqlite3_step(q) == SQLITE_ROW) v = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    pthread_mutex_unlock(&s->mu);
    return v;
}

void store_close(struct store *s)
{
    if (!s) return;
    if (s->ckpt_started) {
        pthread_mutex_lock(&s->cmu);
        s->ckpt_stop = 1;
        pthread_cond_signal(&s->ccv);
        pthread_cond_broadcast(&s->wcv);
        pthread_mutex_unlock(&s->cmu);
        pthread_join(s->ckpt, NULL);
    }
    sqlite3_close_v2(s->cdb);
    pthread_mutex_destroy(&s->cmu);
    pthread_cond_destroy(&s->ccv);
    pthread_cond_destroy(&s->wcv);
    for (int i = 0; i < STORE_READERS; i++) sqlite3_close_v2(s->rdb[i]);
    sqlite3_close_v2(s->db);
    pthread_mutex_destroy(&s->rmu);
    pthread_cond_destroy(&s->rcv);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->gmu);
    pthread_cond_destroy(&s->gcv);
    free(s);
}

int store_version(struct store *s) { return s->version; }

int store_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > STORE_MAX_NAME) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return 0;
    }
    return 1;
}

static void copy_col(char *dst, size_t cap, sqlite3_stmt *q, int col)
{
    const unsigned char *t = sqlite3_column_text(q, col);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

static char *dup_col(sqlite3_stmt *q, int col, size_t *len)
{
    if (sqlite3_column_type(q, col) == SQLITE_NULL) return NULL;
    const unsigned char *t = sqlite3_column_text(q, col);
    int n = sqlite3_column_bytes(q, col);
    char *d = malloc((size_t)n + 1);
    if (d) {
        memcpy(d, t ? (const char *)t : "", (size_t)n);
        d[n] = 0;
        if (len) *len = (size_t)n;
    }
    return d;
}

#define LOCK(s) pthread_mutex_lock(&(s)->mu)
#define UNLOCK(s) pthread_mutex_unlock(&(s)->mu)
/* Lends a free read connection, waiting while all are lent. */
static sqlite3 *reader_take(struct store *s)
{
    pthread_mutex_lock(&s->rmu);
    for (;;) {
        for (int i = 0; i < STORE_READERS; i++)
            if (!s->rbusy[i]) {
                s->rbusy[i] = 1;
                pthread_mutex_unlock(&s->rmu);
                return s->rdb[i];
            }
        pthread_cond_wait(&s->rcv, &s->rmu);
    }
}

static void reader_give(struct store *s, sqlite3 *rdb)
{
    pthread_mutex_lock(&s->rmu);
    for (int i = 0; i < STORE_READERS; i++)
        if (s->rdb[i] == rdb) s->rbusy[i] = 0;
    pthread_cond_signal(&s->rcv);
    pthread_mutex_unlock(&s->rmu);
}

/* A read: `rdb` is the lent connection from RLOCK to RUNLOCK. */
#define RLOCK(s) sqlite3 *rdb = reader_take(s)
#define RUNLOCK(s) reader_give((s), rdb)

/* --- tokens ------------------------------------------------------------ */

enum rt_status store_token_add(struct store *s, const char *name,
                               const unsigned char hash[RT_SHA256_LEN], int admin,
                               struct rt_err *err)
{
    if (!store_name_ok(name))
        return rt_err_set(err, RT_EINVAL, "token.name",
                          "expected 1..%d characters of A-Z a-z 0-9 _ . -", STORE_MAX_NAME);
    enum rt_status st = RT_OK;
    LOCK(s);
    sqlite3_stmt *q = NULL;
    if (s->version >= 6) {
        /* A revoked name is never issued again (migration 6). */
        q = prep(s->db, "SELECT 1 FROM revoked_tokens WHERE name = ?");
        if (!q) {
            st = db_err(s->db, err, "token");
            goto done;
        }
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        int rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            st = rt_err_set(err, RT_ECONFLICT, "token.name",
                            "'%s' named a revoked token: a name is never issued again (its jobs keep it)", name);
            goto done;
        }
        if (rc != SQLITE_DONE) {
            st = db_err(s->db, err, "token");
            goto done;
        }
        sqlite3_finalize(q);
    }
    q = prep(s->db, "INSERT INTO tokens (name, hash, admin, created) VALUES (?,?,?,?)");
    if (!q) {
        st = db_err(s->db, err, "token");
        goto done;
    }
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_blob(q, 2, hash, RT_SHA256_LEN, SQLITE_STATIC);
    sqlite3_bind_int(q, 3, admin ? 1 : 0);
    sqlite3_bind_double(q, 4, now_s());
    if (sqlite3_step(q) != SQLITE_DONE) {
        st = db_err(s->db, err, "token");
        if (st == RT_ECONFLICT) rt_err_set(err, st, "token.name", "a token named '%s' exists", name);
    }
done:
    sqlite3_finalize(q);
    UNLOCK(s);
    return st;
}

enum rt_status store_token_find(struct store *s, const unsigned char hash[RT_SHA256_LEN],
                                char *name, int *admin, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, "SELECT name, admin FROM tokens WHERE hash = ?");
    if (!q) {
        st = db_err(rdb, err, "token");
        goto done;
    }
    sqlite3_bind_blob(q, 1, hash, RT_SHA256_LEN, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        copy_col(name, STORE_MAX_NAME + 1, q, 0);
        *admin = sqlite3_column_int(q, 1);
    } else if (rc == SQLITE_DONE) {
        st = rt_err_set(err, RT_ENOTFOUND, "token", "unknown token");
    } else {
        st = db_err(rdb, err, "token");
    }
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}

enum rt_status store_token_list(struct store *s,
                                void (*fn)(void *user, const char *name, int admin, double created),
                                void *user, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, "SELECT name, admin, created FROM tokens ORDER BY name");
    if (!q) {
        st = db_err(rdb, err, "token");
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        fn(user, (const char *)sqlite3_column_text(q, 0), sqlite3_column_int(q, 1), sqlite3_column_double(q, 2));
    if (rc != SQLITE_DONE) st = db_err(rdb, err, "token");
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}

enum rt_status store_token_revoke(struct store *s, const char *name, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    sqlite3_stmt *q = NULL;
    LOCK(s);
    /* One transaction: the token goes and its name is remembered. */
    if ((st = exec(s, "BEGIN IMMEDIATE", err, "token")) != RT_OK) goto unlock;
    q = prep(s->db, "DELETE FROM tokens WHERE name = ?");
    if (!q) goto dberr;
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
    if (sqlite3_changes(s->db) == 0) {
        st = rt_err_set(err, RT_ENOTFOUND, "token.name", "no token named '%s'", RT_QUOTE(name));
        goto end;
    }
    if (s->version >= 6) {
        /* Remembered, so that the name is never issued again. */
        sqlite3_finalize(q);
        q = prep(s->db, "INSERT OR REPLACE INTO revoked_tokens (name, revoked) VALUES (?,?)");
        if (!q) goto dberr;
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_double(q, 2, now_s());
        if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
    }
    goto end;
dberr:
    st = db_err(s->db, err, "token");
end:
    sqlite3_finalize(q);
    st = tx_end(s, st, err, "token");
unlock:
    UNLOCK(s);
    return st;
}

/* --- robots and profiles ----------------------------------------------- */

static const char *asset_table(const char *kind)
{
    if (!strcmp(kind, "robot")) return "robots";
    if (!strcmp(kind, "profile")) return "profiles";
    return NULL;
}

enum rt_status store_asset_put(struct store *s, const char *kind, const char *name,
                               const char *text, size_t len, struct rt_err *err)
{
    const char *table = asset_table(kind);
    char sql[160];
    assert(table);
    if (!store_name_ok(name))
        return rt_err_set(err, RT_EINVAL, kind, "name: expected 1..%d characters of A-Z a-z 0-9 _ . -",
                          STORE_MAX_NAME);
    if (len > STORE_MAX_TEXT)
        return rt_err_set(err, RT_ELIMIT, kind, "larger than %u bytes", STORE_MAX_TEXT);
    int robot = !strcmp(kind, "robot");
    enum rt_status st = RT_OK;
    sqlite3_stmt *q = NULL;
    LOCK(s);
    if ((st = exec(s, "BEGIN IMMEDIATE", err, kind)) != RT_OK) goto unlock;
    /* A queued or running job is built from the robot and profile it names
     * when it runs: replacing one under it would change or break it. */
    q = prep(s->db, robot ? "SELECT count(*), min(id) FROM jobs WHERE state IN ('queued','running') "
                        "AND (robot = ?1 OR source_robot = ?1)"
                      : "SELECT count(*), min(id) FROM jobs WHERE state IN ('queued','running') "
                        "AND profile = ?1");
    if (!q) goto dberr;
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW) goto dberr;
    if (sqlite3_column_int64(q, 0) > 0) {
        st = rt_err_set(err, RT_ECONFLICT, "url",
                        "%lld queued or running job(s) use %s '%s' (job %lld first): it can be "
                        "replaced once they finish or are cancelled",
                        (long long)sqlite3_column_int64(q, 0), kind, name,
                        (long long)sqlite3_column_int64(q, 1));
        goto end;
    }
    sqlite3_finalize(q);
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO %s (name, %s, created) VALUES (?,?,?)", table,
             robot ? "urdf" : "json");
    q = prep(s->db, sql);
    if (!q) goto dberr;
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, text, (int)len, SQLITE_STATIC);
    sqlite3_bind_double(q, 3, now_s());
    if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
    goto end;
dberr:
    st = db_err(s->db, err, kind);
end:
    sqlite3_finalize(q);
    st = tx_end(s, st, err, kind);
unlock:
    UNLOCK(s);
    return st;
}

enum rt_status store_asset_get(struct store *s, const char *kind, const char *name, char **text,
                               size_t *len, struct rt_err *err)
{
    const char *table = asset_table(kind);
    char sql[160];
    assert(table);
    *text = NULL;
    snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE name = ?",
             !strcmp(kind, "robot") ? "urdf" : "json", table);
    enum rt_status st = RT_OK;
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, sql);
    if (!q) {
        st = db_err(rdb, err, kind);
        goto done;
    }
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_ROW) {
        if (!(*text = dup_col(q, 0, len))) st = rt_err_set(err, RT_ENOMEM, kind, "out of memory");
    } else if (rc == SQLITE_DONE) {
        st = rt_err_set(err, RT_ENOTFOUND, kind, "no %s named '%s'", kind, RT_QUOTE(name));
    } else {
        st = db_err(rdb, err, kind);
    }
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}

enum rt_status store_asset_list(struct store *s, const char *kind,
                                void (*fn)(void *user, const char *name, double created),
                                void *user, struct rt_err *err)
{
    const char *table = asset_table(kind);
    char sql[96];
    assert(table);
    snprintf(sql, sizeof sql, "SELECT name, created FROM %s ORDER BY name", table);
    enum rt_status st = RT_OK;
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, sql);
    if (!q) {
        st = db_err(rdb, err, kind);
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        fn(user, (const char *)sqlite3_column_text(q, 0), sqlite3_column_double(q, 1));
    if (rc != SQLITE_DONE) st = db_err(rdb, err, kind);
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}

/* --- jobs -------------------------------------------------------------- */

void store_job_release(struct store_job *j)
{
    if (!j) return;
    free(j->options);
    free(j->error);
    free(j->clip);
    free(j->plan);
    free(j->joint_names);
    j->options = j->error = j->clip = j->plan = j->joint_names = NULL;
}

#define JOB_COLS                                                                             \
    "id, owner, idem_key, name, robot, profile, source_robot, class_key, source_kind, state, " \
    "frames, lm_iter, attempts, cost, created, started, finished, options, error, "          \
    "solve_seconds, batch_clips, plan"

/* Reads a row of JOB_COLS (then the clip at column 22 when with_clip, as
 * stored: store_job_get() unpacks it). */
static enum rt_status job_from_row(sqlite3_stmt *q, int with_clip, struct store_job *j)
{
    memset(j, 0, sizeof *j);
    j->id = sqlite3_column_int64(q, 0);
    copy_col(j->owner, sizeof j->owner, q, 1);
    copy_col(j->idem_key, sizeof j->idem_key, q, 2);
    copy_col(j->name, sizeof j->name, q, 3);
    copy_col(j->robot, sizeof j->robot, q, 4);
    copy_col(j->profile, sizeof j->profile, q, 5);
    copy_col(j->source_robot, sizeof j->source_robot, q, 6);
    copy_col(j->class_key, sizeof j->class_key, q, 7);
    const char *kind = (const char *)sqlite3_column_text(q, 8);
    j->source_kind = !kind ? STORE_SRC_BVH
                     : !strcmp(kind, "csv") ? STORE_SRC_CSV
                     : !strcmp(kind, "joints") ? STORE_SRC_JOINTS
                                               : STORE_SRC_BVH;
    j->state = state_from_str((const char *)sqlite3_column_text(q, 9));
    j->frames = sqlite3_column_int(q, 10);
    j->lm_iter = sqlite3_column_int(q, 11);
    j->attempts = sqlite3_column_int(q, 12);
    j->cost = sqlite3_column_type(q, 13) == SQLITE_NULL ? NAN : sqlite3_column_double(q, 13);
    j->created = sqlite3_column_double(q, 14);
    j->started = sqlite3_column_double(q, 15);
    j->finished = sqlite3_column_double(q, 16);
    j->options = dup_col(q, 17, NULL);
    j->error = dup_col(q, 18, NULL);
    j->solve_seconds = sqlite3_column_double(q, 19);
    j->batch_clips = sqlite3_column_int(q, 20);
    j->plan = dup_col(q, 21, NULL);
    if (with_clip) j->clip = dup_col(q, 22, &j->clip_len);
    /* From version 7 the joint-position fields follow the clip. */
    if (with_clip && sqlite3_column_count(q) > 25) {
        j->joint_names = dup_col(q, 23, &j->joint_names_len);
        j->joint_units = sqlite3_column_double(q, 24);
        const char *up = (const char *)sqlite3_column_text(q, 25);
        j->joint_up = up && (up[0] == 'y' || up[0] == 'z') && !up[1] ? up[0] : 0;
    }
    if ((sqlite3_column_type(q, 17) != SQLITE_NULL && !j->options) ||
        (sqlite3_column_type(q, 21) != SQLITE_NULL && !j->plan) ||
        (sqlite3_column_type(q, 18) != SQLITE_NULL && !j->error) || (with_clip && !j->clip) ||
        (with_clip && sqlite3_column_count(q) > 25 && sqlite3_column_type(q, 23) != SQLITE_NULL && !j->joint_names)) {
        store_job_release(j);
        return RT_ENOMEM;
    }
    return RT_OK;
}

/* What store_job_insert() refuses before it touches the database. */
static enum rt_status insert_check(const struct store *s, const struct store_job_new *in, struct rt_err *err)
{
    if (!store_name_ok(in->owner)) return rt_err_set(err, RT_EINVAL, "owner", "bad owner name");
    if (!store_name_ok(in->robot)) return rt_err_set(err, RT_EINVAL, "body.robot", "bad robot name");
    if (in->profile && !store_name_ok(in->profile))
        return rt_err_set(err, RT_EINVAL, "body.profile", "bad profile name");
    if (in->idem_key && strlen(in->idem_key) > STORE_MAX_KEY)
        return rt_err_set(err, RT_ELIMIT, "Idempotency-Key", "longer than %d bytes", STORE_MAX_KEY);
    if (in->clip_len > STORE_MAX_TEXT)
        return rt_err_set(err, RT_ELIMIT, "clip", "larger than %u bytes", STORE_MAX_TEXT);
    if (strlen(in->name) >= sizeof ((struct store_job *)0)->name ||
        strlen(in->class_key) >= sizeof ((struct store_job *)0)->class_key)
        return rt_err_set(err, RT_ELIMIT, "name", "job name or class too long");
    if (in->frames <= 0) return rt_err_set(err, RT_EINVAL, "clip", "no frames");
    if (in->source_kind == STORE_SRC_JOINTS && s->version < 7)
        return rt_err_set(err, RT_ESTATE, "db", "joint-position jobs need schema version 7 (this file is at %d)",
                          s->version);
    if (in->joint_up && in->joint_up != 'y' && in->joint_up != 'z')
        return rt_err_set(err, RT_EINVAL, "joint_up", "expected 'y' or 'z'");
    return RT_OK;
}

/* Sources from this size up are packed (schema 9; below it a zstd frame's
 * own bytes and the row's column are most of what would be saved). */
#define STORE_PACK_MIN 4096
/* zstd's level for the sources: 1, the fastest standard level. A 600 KB
 * window of the G1 reference trajectory packs 2.4x at about 270 MB/s on
 * the 2-core build machine (bench/RESULTS.md); higher levels gain a few
 * per cent for several times the time. */
#define STORE_PACK_LEVEL 1

/* The clip of `in` as the database holds it from schema 9: one zstd frame
 * when that is at least an eighth smaller than the bytes, else NULL (then
 * the bytes are stored as given: binary .npz sources, short or random
 * ones, an older file, or no memory to pack them, which the plain bytes
 * do as well). Runs on the submitting thread, before its group commit,
 * so that the writer only copies the packed bytes. */
static unsigned char *pack_clip(const struct store *s, const struct store_job_new *in, size_t *len)
{
    *len = 0;
    if (s->version < 9 || s->no_pack || in->clip_len < STORE_PACK_MIN) return NULL;
    size_t cap = ZSTD_compressBound(in->clip_len), n = 0;
    unsigned char *z = ZSTD_isError(cap) ? NULL : malloc(cap);
    ZSTD_CCtx *cc = z ? ZSTD_createCCtx() : NULL;
    /* The frame carries its content size and a checksum of the bytes
     * (XXH64): a stored frame corrupted in a way that still decodes is
     * refused on reading, not handed on as a different source. */
    if (!cc || ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, STORE_PACK_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(n = ZSTD_compress2(cc, z, cap, in->clip, in->clip_len)) || n > in->clip_len - in->clip_len / 8) {
        ZSTD_freeCCtx(cc);
        free(z);
        return NULL;
    }
    ZSTD_freeCCtx(cc);
    *len = n;
    return z;
}

/* A packed clip read back (store_job_get(); clip_encoding 'zstd', the one
 * value its CHECK allows): *clip (malloc'd, NUL-terminated) replaced by
 * the bytes it packs. RT_EIO, naming job `id`, for a frame that does not
 * unpack to its stated size or checksum (a corrupt row: the server's
 * fault, not the user's); RT_ENOMEM. */
static enum rt_status unpack_clip(int64_t id, char **clip, size_t *len, struct rt_err *err)
{
    if (!*clip) return RT_OK;
    unsigned long long n = ZSTD_getFrameContentSize(*clip, *len);
    if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n == 0 || n > STORE_MAX_TEXT)
        return rt_err_set(err, RT_EIO, "jobs", "job %lld: stored source is not a zstd frame of 1..%u bytes",
                          (long long)id, STORE_MAX_TEXT);
    char *out = malloc((size_t)n + 1);
    if (!out) return rt_err_set(err, RT_ENOMEM, "jobs", "out of memory");
    size_t got = ZSTD_decompress(out, (size_t)n, *clip, *len);
    if (ZSTD_isError(got) || got != n) {
        free(out);
        return rt_err_set(err, RT_EIO, "jobs", "job %lld: stored source does not unpack (zstd: %s)", (long long)id,
                          ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short frame");
    }
    out[n] = 0;
    free(*clip);
    *clip = out;
    *len = (size_t)n;
    return RT_OK;
}

/* One job inserted inside the writer's open transaction, under a savepoint:
 * on any failure its own changes are undone and the transaction goes on
 * (store_job_insert()'s group commit). `packed` (packed_len bytes): the
 * clip as pack_clip() made it, or NULL for the bytes as given. */
static enum rt_status insert_one(struct store *s, const struct store_job_new *in, const unsigned char *packed,
                                 size_t packed_len, int64_t *id, int *existed, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    sqlite3_stmt *q = NULL;
    *existed = 0;
    *id = 0;
    if ((st = exec(s, "SAVEPOINT insert_one", err, "jobs")) != RT_OK) return st;
    if (in->idem_key) {
        q = prep(s->db, "SELECT id, input_hash FROM jobs WHERE owner = ? AND idem_key = ?");
        if (!q) goto dberr;
        sqlite3_bind_text(q, 1, in->owner, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, in->idem_key, -1, SQLITE_STATIC);
        int rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            const void *h = sqlite3_column_blob(q, 1);
            if (sqlite3_column_bytes(q, 1) != RT_SHA256_LEN || memcmp(h, in->input_hash, RT_SHA256_LEN)) {
                st = rt_err_set(err, RT_ECONFLICT, "Idempotency-Key",
                                "key already used for a different submission (job %lld)",
                                (long long)sqlite3_column_int64(q, 0));
            } else {
                *id = sqlite3_column_int64(q, 0);
                *existed = 1;
            }
            goto end;
        }
        if (rc != SQLITE_DONE) goto dberr;
        sqlite3_finalize(q);
        q = NULL;
    }
    if (in->max_active > 0) {
        q = prep(s->db, "SELECT count(*) FROM jobs WHERE owner = ? AND state IN ('queued','running')");
        if (!q) goto dberr;
        sqlite3_bind_text(q, 1, in->owner, -1, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_ROW) goto dberr;
        if (sqlite3_column_int64(q, 0) >= in->max_active) {
            st = rt_err_set(err, RT_EBUSY, "jobs", "%d jobs queued or running: the limit is %d",
                            (int)sqlite3_column_int64(q, 0), in->max_active);
            goto end;
        }
        sqlite3_finalize(q);
        q = NULL;
    }
    /* A file at an older schema version (store_open_at()) has no plan
     * column (before 4) or no clip_encoding (before 9). */
    q = prep(s->db, s->version >= 9 ? "INSERT INTO jobs (owner, idem_key, input_hash, name, robot, profile, options, "
                                      "source_kind, source_robot, clip, frames, class_key, created, plan, "
                                      "clip_encoding, joint_names, joint_units, joint_up) "
                                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                    : in->plan ? "INSERT INTO jobs (owner, idem_key, input_hash, name, robot, profile, options, "
                           "source_kind, source_robot, clip, frames, class_key, created, plan) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                         : "INSERT INTO jobs (owner, idem_key, input_hash, name, robot, profile, options, "
                           "source_kind, source_robot, clip, frames, class_key, created) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!q) goto dberr;
    sqlite3_bind_text(q, 1, in->owner, -1, SQLITE_STATIC);
    if (in->idem_key) sqlite3_bind_text(q, 2, in->idem_key, -1, SQLITE_STATIC);
    sqlite3_bind_blob(q, 3, in->input_hash, RT_SHA256_LEN, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, in->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 5, in->robot, -1, SQLITE_STATIC);
    if (in->profile) sqlite3_bind_text(q, 6, in->profile, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 7, in->options ? in->options : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 8, store_source_str(in->source_kind), -1, SQLITE_STATIC);
    if (in->source_robot) sqlite3_bind_text(q, 9, in->source_robot, -1, SQLITE_STATIC);
    /* From version 5 the clip lives in job_clips (migration 5). */
    if (s->version >= 5) sqlite3_bind_text(q, 10, "", 0, SQLITE_STATIC);
    else sqlite3_bind_text(q, 10, in->clip, (int)in->clip_len, SQLITE_STATIC);
    sqlite3_bind_int(q, 11, in->frames);
    sqlite3_bind_text(q, 12, in->class_key, -1, SQLITE_STATIC);
    sqlite3_bind_double(q, 13, now_s());
    if (in->plan) sqlite3_bind_text(q, 14, in->plan, -1, SQLITE_STATIC);
    char up[2] = {in->joint_up, 0};
    if (s->version >= 9) {
        if (packed) sqlite3_bind_text(q, 15, "zstd", -1, SQLITE_STATIC);
        if (in->joint_names) sqlite3_bind_text(q, 16, in->joint_names, -1, SQLITE_STATIC);
        if (in->joint_units > 0) sqlite3_bind_double(q, 17, in->joint_units);
        if (in->joint_up) sqlite3_bind_text(q, 18, up, 1, SQLITE_TRANSIENT);
    }
    if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
    *id = sqlite3_last_insert_rowid(s->db);
    if (s->version >= 5) {
        sqlite3_finalize(q);
        /* A zeroblob of the clip's size, then the bytes written into it:
         * an INSERT of the text would first build the whole row in memory,
         * a second copy of a clip of many MB, and so would any value
         * after the clip in its record (hence the joint fields in jobs from
         * version 9). The clip is stored as a BLOB (read back the same as
         * text; joint positions may be binary, .npz or .npy, and are read
         * back byte for byte). */
        const void *bytes = packed ? (const void *)packed : (const void *)in->clip;
        size_t n_bytes = packed ? packed_len : in->clip_len;
        int fields = s->version >= 7 && s->version < 9; /* the joint fields in job_clips (7, 8) */
        q = prep(s->db, fields ? "INSERT INTO job_clips (job_id, clip, joint_names, joint_units, joint_up) "
                                 "VALUES (?, zeroblob(?), ?, ?, ?)"
                               : "INSERT INTO job_clips (job_id, clip) VALUES (?, zeroblob(?))");
        if (!q) goto dberr;
        sqlite3_bind_int64(q, 1, *id);
        sqlite3_bind_int64(q, 2, (sqlite3_int64)n_bytes);
        if (fields) {
            if (in->joint_names) sqlite3_bind_text(q, 3, in->joint_names, -1, SQLITE_STATIC);
            if (in->joint_units > 0) sqlite3_bind_double(q, 4, in->joint_units);
            if (in->joint_up) sqlite3_bind_text(q, 5, up, 1, SQLITE_TRANSIENT);
        }
        if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
        sqlite3_blob *blob = NULL;
        if (sqlite3_blob_open(s->db, "main", "job_clips", "clip", *id, 1, &blob) != SQLITE_OK ||
            sqlite3_blob_write(blob, bytes, (int)n_bytes, 0) != SQLITE_OK) {
            sqlite3_blob_close(blob);
            goto dberr;
        }
        if (sqlite3_blob_close(blob) != SQLITE_OK) goto dberr;
    }
    goto end;
dberr:
    st = db_err(s->db, err, "jobs");
end:
    sqlite3_finalize(q);
    if (st != RT_OK) {
        exec(s, "ROLLBACK TO insert_one", NULL, NULL);
        *existed = 0;
        *id = 0;
    }
    exec(s, "RELEASE insert_one", NULL, NULL);
    return st;
}

/* Groups one leader commits in a row (store_job_insert()). */
#define STORE_LEAD_ROUNDS 4

/* A submission waiting for its group's commit (store_job_insert()). */
struct insert_req {
    const struct store_job_new *in;
    const unsigned char *packed; /* pack_clip()'s, or NULL */
    size_t packed_len;
    int64_t *id;
    int *existed;
    struct rt_err *err;
    enum rt_status st;
    int done;
    struct insert_req *next;
};

/* One group of submissions (store_job_insert()): inserted in one
 * transaction, each under its own savepoint, and committed once. Sets
 * every request's st, id and existed; a failed BEGIN or COMMIT is every
 * request's error (nothing of the group stored). tm, when not NULL, gets
 * the writer lock's wait, the rows' and the commit's times. */
static void commit_group(struct store *s, struct insert_req *group, struct store_insert_times *tm)
{
    double t1 = now_s();
    LOCK(s);
    double t2 = now_s();
    struct rt_err begin_err;
    enum rt_status bst = exec(s, "BEGIN IMMEDIATE", &begin_err, "jobs");
    for (struct insert_req *r = group; r; r = r->next) {
        if (bst != RT_OK) {
            if (r->err) *r->err = begin_err;
            r->st = bst;
        } else {
            r->st = insert_one(s, r->in, r->packed, r->packed_len, r->id, r->existed, r->err);
        }
    }
    double t3 = now_s();
    if (bst == RT_OK) {
        struct rt_err commit_err;
        enum rt_status cst = tx_end(s, RT_OK, &commit_err, "jobs");
        for (struct insert_req *r = group; cst != RT_OK && r; r = r->next) {
            if (r->st == RT_OK) {
                if (r->err) *r->err = commit_err;
                r->st = cst;
            }
            *r->existed = 0;
            *r->id = 0;
        }
    }
    if (tm) {
        tm->lock = t2 - t1;
        tm->write = t3 - t2;
        tm->commit = now_s() - t3;
    }
    UNLOCK(s);
}

enum rt_status store_job_insert(struct store *s, const struct store_job_new *in, int64_t *id,
                                int *existed, struct rt_err *err)
{
    enum rt_status st;
    *existed = 0;
    *id = 0;
    if ((st = insert_check(s, in, err)) != RT_OK) return st;
    /* Group commit: the first submission to find no commit under way
     * leads: it takes every submission queued so far, inserts them in one
     * transaction (each under its own savepoint) and commits once, one
     * disk sync for all; those queued meanwhile are its next group (up to
     * STORE_LEAD_ROUNDS groups), then wait for the next leader. Alone, a
     * submission commits at once. */
    struct store_insert_times tm = {0, 0, -1, -1, -1, -1};
    double t0 = now_s();
    size_t packed_len;
    unsigned char *packed = pack_clip(s, in, &packed_len);
    tm.pack = now_s() - t0;
    t0 += tm.pack;
    struct insert_req me = {in, packed, packed_len, id, existed, err, RT_OK, 0, NULL};
    int led = 0; /* this submission led a group (else another's commit took it along) */
    pthread_mutex_lock(&s->gmu);
    *s->g_tail = &me;
    s->g_tail = &me.next;
    while (!me.done) {
        if (s->g_leader) {
            pthread_cond_wait(&s->gcv, &s->gmu);
            continue;
        }
        s->g_leader = 1;
        led = 1;
        /* The leader commits what is queued, then, while it is running
         * anyway, what queued during that commit (at most STORE_LEAD_ROUNDS
         * groups): those need no thread to wake up and lead. */
        double t_more = 0;
        for (int round = 0; s->g_head && round < STORE_LEAD_ROUNDS; round++) {
            struct insert_req *group = s->g_head;
            s->g_head = NULL;
            s->g_tail = &s->g_head;
            pthread_mutex_unlock(&s->gmu);
            if (round == 0) tm.group = now_s() - t0;
            if (round == 1) t_more = now_s();
            commit_group(s, group, round == 0 ? &tm : NULL);
            pthread_mutex_lock(&s->gmu);
            for (struct insert_req *r = group; r; r = r->next) r->done = 1;
            pthread_cond_broadcast(&s->gcv);
        }
        tm.more = t_more > 0 ? now_s() - t_more : 0;
        s->g_leader = 0;
        pthread_cond_broadcast(&s->gcv);
    }
    pthread_mutex_unlock(&s->gmu);
    if (!led) tm.group = now_s() - t0;
    free(packed);
    if (in->times) *in->times = tm;
    return me.st;
}

/* Submissions first: a results commit (store_job_finish_many) or a
 * progress write waits, at most STORE_YIELD_MS, while a submission's group
 * is queued or committing, so that a submission waits for at most the one
 * commit already under way, not for a run of result commits. */
static void yield_to_inserts(struct store *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + STORE_YIELD_MS * 1000000L;
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&s->gmu);
    while (s->g_head || s->g_leader)
        if (pthread_cond_timedwait(&s->gcv, &s->gmu, &ts) != 0) break; /* STORE_YIELD_MS passed */
    pthread_mutex_unlock(&s->gmu);
}

/* After the first sqlite3_step() (result `rc`) of a query for job `id`
 * whose column `owner_col` is the job's owner: RT_OK when the row is there
 * and `owner` (NULL: anyone) may see it; RT_ENOTFOUND "no job ID" when it
 * is missing or another owner's (a token never learns of others' jobs);
 * else the step's error, at `where`. */
static enum rt_status job_row(sqlite3 *db, sqlite3_stmt *q, int rc, int owner_col, int64_t id,
                              const char *owner, const char *where, struct rt_err *err)
{
    if (rc == SQLITE_DONE ||
        (rc == SQLITE_ROW && owner && strcmp(owner, (const char *)sqlite3_column_text(q, owner_col))))
        return rt_err_set(err, RT_ENOTFOUND, "jobs", "no job %lld", (long long)id);
    if (rc != SQLITE_ROW) return db_err(db, err, where);
    return RT_OK;
}

enum rt_status store_job_get(struct store *s, int64_t id, const char *owner, int with_clip,
                             struct store_job *out, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    int packed = 0; /* the clip is stored packed (version 9) */
    memset(out, 0, sizeof *out);
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, !with_clip     ? "SELECT " JOB_COLS " FROM jobs WHERE id = ?"
                                : s->version >= 9 ? "SELECT " JOB_COLS ", c.clip, jobs.joint_names, jobs.joint_units, "
                                                    "jobs.joint_up, jobs.clip_encoding FROM jobs LEFT JOIN job_clips c "
                                                    "ON c.job_id = jobs.id WHERE jobs.id = ?"
                                : s->version >= 7 ? "SELECT " JOB_COLS ", c.clip, c.joint_names, c.joint_units, "
                                                    "c.joint_up FROM jobs LEFT JOIN job_clips c ON "
                                                    "c.job_id = jobs.id WHERE jobs.id = ?"
                                : s->version >= 5 ? "SELECT " JOB_COLS ", (SELECT clip FROM job_clips "
                                                    "WHERE job_id = jobs.id) FROM jobs WHERE id = ?"
                                                  : "SELECT " JOB_COLS ", clip FROM jobs WHERE id = ?");
    if (!q) {
        st = db_err(rdb, err, "jobs");
        goto done;
    }
    sqlite3_bind_int64(q, 1, id);
    if ((st = job_row(rdb, q, sqlite3_step(q), 1, id, owner, "jobs", err)) == RT_OK &&
        job_from_row(q, with_clip, out) != RT_OK)
        st = rt_err_set(err, RT_ENOMEM, "jobs", "out of memory");
    /* From version 9 a clip may be stored packed (pack_clip()): unpacked
     * once the read connection is given back. */
    packed = st == RT_OK && with_clip && sqlite3_column_count(q) > 26 && sqlite3_column_type(q, 26) != SQLITE_NULL;
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    if (packed && (st = unpack_clip(id, &out->clip, &out->clip_len, err)) != RT_OK) store_job_release(out);
    return st;
}

enum rt_status store_job_list(struct store *s, const char *owner, int64_t before, int limit,
                              struct store_job **out, int *n, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    *out = NULL;
    *n = 0;
    if (limit < 1 || limit > STORE_MAX_PAGE)
        return rt_err_set(err, RT_EINVAL, "limit", "expected 1..%d", STORE_MAX_PAGE);
    struct store_job *jobs = calloc((size_t)limit, sizeof *jobs);
    if (!jobs) return rt_err_set(err, RT_ENOMEM, "jobs", "out of memory");
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, "SELECT " JOB_COLS " FROM jobs WHERE owner = ? AND id < ? "
                                "ORDER BY id DESC LIMIT ?");
    if (!q) {
        st = db_err(rdb, err, "jobs");
        goto done;
    }
    sqlite3_bind_text(q, 1, owner, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, before > 0 ? before : INT64_MAX);
    sqlite3_bind_int(q, 3, limit);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW && *n < limit) {
        if (job_from_row(q, 0, &jobs[*n]) != RT_OK) {
            st = rt_err_set(err, RT_ENOMEM, "jobs", "out of memory");
            goto done;
        }
        (*n)++;
    }
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) st = db_err(rdb, err, "jobs");
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    if (st != RT_OK) {
        for (int i = 0; i < *n; i++) store_job_release(&jobs[i]);
        free(jobs);
        *n = 0;
        return st;
    }
    *out = jobs;
    return RT_OK;
}

enum rt_status store_job_each_queued(struct store *s,
                                     void (*fn)(void *user, int64_t id, int frames, int attempts,
                                                const char *class_key),
                                     void *user, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, "SELECT id, frames, attempts, class_key FROM jobs "
                                "WHERE state = 'queued' ORDER BY id");
    if (!q) {
        st = db_err(rdb, err, "jobs");
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        fn(user, sqlite3_column_int64(q, 0), sqlite3_column_int(q, 1), sqlite3_column_int(q, 2),
           (const char *)sqlite3_column_text(q, 3));
    if (rc != SQLITE_DONE) st = db_err(rdb, err, "jobs");
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}

enum rt_status store_job_requeue_running(struct store *s, int *n, int *n_failed, struct rt_err *err)
{
    char fail_solve[480], fail_finish[480];
    int failed = 0, requeued = 0;
    enum rt_status st;
    double t = now_s();
    /* Before version 8 there is no phase: every run counts as a solve. */
    const char *solves = s->version >= 8 ? "attempts - finish_interrupts" : "attempts";
    snprintf(fail_solve, sizeof fail_solve,
             "UPDATE jobs SET state = 'failed', finished = %.6f, error = '{\"code\":\"%s\",\"where\":\"jobs\","
             "\"message\":\"interrupted %d times while it was solved (the daemon stopped while it ran): "
             "not retried\"}' WHERE state = 'running'%s AND %s >= %d",
             t, rt_status_str(RT_ESTATE), STORE_MAX_ATTEMPTS, s->version >= 8 ? " AND solved = 0" : "", solves,
             STORE_MAX_ATTEMPTS);
    snprintf(fail_finish, sizeof fail_finish,
             "UPDATE jobs SET state = 'failed', finished = %.6f, error = '{\"code\":\"%s\",\"where\":\"jobs\","
             "\"message\":\"interrupted %d times while its result was stored (the daemon stopped after its "
             "solve): not retried\"}' WHERE state = 'running' AND solved = 1 AND finish_interrupts + 1 >= %d",
             t, rt_status_str(RT_ESTATE), STORE_MAX_ATTEMPTS, STORE_MAX_ATTEMPTS);
    LOCK(s);
    if ((st = exec(s, "BEGIN IMMEDIATE", err, "jobs")) != RT_OK) goto unlock;
    if ((st = exec(s, fail_solve, err, "jobs")) != RT_OK) goto end;
    failed = sqlite3_changes(s->db);
    if (s->version >= 8) {
        if ((st = exec(s, fail_finish, err, "jobs")) != RT_OK) goto end;
        failed += sqlite3_changes(s->db);
    }
    if ((st = exec(s, s->version >= 8 ? "UPDATE jobs SET state = 'queued', lm_iter = 0, cost = NULL, "
                                        "finish_interrupts = finish_interrupts + solved, solved = 0 "
                                        "WHERE state = 'running'"
                                      : "UPDATE jobs SET state = 'queued', lm_iter = 0, cost = NULL "
                                        "WHERE state = 'running'",
                   err, "jobs")) != RT_OK)
        goto end;
    requeued = sqlite3_changes(s->db);
end:
    st = tx_end(s, st, err, "jobs");
unlock:
    UNLOCK(s);
    if (st != RT_OK) failed = requeued = 0;
    if (n) *n = requeued;
    if (n_failed) *n_failed = failed;
    return st;
}

/* One UPDATE (a `?` for the id) over ids[0..n) in one transaction not
 * synced on its own under --sync full; changed[i] whether job i's row
 * changed (all 0 on failure; changed may be NULL). The claims and the
 * solved marks: losing either to a power cut leaves the job as it was
 * before (queued; or counted as interrupted in its solve), which the
 * restart handles. */
static enum rt_status update_each(struct store *s, const char *sql, int bind_now, const int64_t *ids, int n,
                                  int *changed, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    sqlite3_stmt *q = NULL;
    for (int i = 0; changed && i < n; i++) changed[i] = 0;
    if (n <= 0) return RT_OK;
    LOCK(s);
    if (s->sync_full) exec(s, "PRAGMA synchronous = NORMAL", NULL, NULL);
    if ((st = exec(s, "BEGIN IMMEDIATE", err, "jobs")) != RT_OK) goto unlock;
    q = prep(s->db, sql);
    if (!q) goto dberr;
    if (bind_now) sqlite3_bind_double(q, 1, now_s());
    for (int i = 0; i < n; i++) {
        sqlite3_reset(q);
        sqlite3_bind_int64(q, bind_now ? 2 : 1, ids[i]);
        if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
        if (changed) changed[i] = sqlite3_changes(s->db) == 1;
    }
    goto end;
dberr:
    st = db_err(s->db, err, "jobs");
end:
    sqlite3_finalize(q);
    st = tx_end(s, st, err, "jobs");
    if (st != RT_OK)
        for (int i = 0; changed && i < n; i++) changed[i] = 0;
unlock:
    if (s->sync_full) exec(s, "PRAGMA synchronous = FULL", NULL, NULL);
    UNLOCK(s);
    return st;
}

enum rt_status store_job_claim_many(struct store *s, const int64_t *ids, int n, int *claimed, struct rt_err *err)
{
    return update_each(s,
                       s->version >= 8 ? "UPDATE jobs SET state = 'running', started = ?, attempts = attempts + 1, "
                                         "lm_iter = 0, cost = NULL, solved = 0 WHERE id = ? AND state = 'queued'"
                                       : "UPDATE jobs SET state = 'running', started = ?, attempts = attempts + 1, "
                                         "lm_iter = 0, cost = NULL WHERE id = ? AND state = 'queued'",
                       1, ids, n, claimed, err);
}

enum rt_status store_job_solved_many(struct store *s, const int64_t *ids, int n, struct rt_err *err)
{
    if (s->version < 8) return RT_OK;
    return update_each(s, "UPDATE jobs SET solved = 1 WHERE id = ? AND state = 'running'", 0, ids, n, NULL, err);
}

enum rt_status store_job_claim(struct store *s, int64_t id, int *claimed, struct rt_err *err)
{
    return store_job_claim_many(s, &id, 1, claimed, err);
}

enum rt_status store_job_progress_many(struct store *s, const int64_t *ids, int n, int lm_iter,
                                       double cost, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    sqlite3_stmt *q = NULL;
    if (n <= 0) return RT_OK;
    yield_to_inserts(s);
    LOCK(s);
    /* Progress is advisory (a crash queues the job again and clears it),
     * and it is written every 50 ms while a batch runs: with --sync full
     * its commit is not synced on its own. WAL stays consistent, and the
     * next synced commit makes it durable too. */
    if (s->sync_full) exec(s, "PRAGMA synchronous = NORMAL", NULL, NULL);
    if ((st = exec(s, "BEGIN IMMEDIATE", err, "jobs")) != RT_OK) goto unlock;
    q = prep(s->db, "UPDATE jobs SET lm_iter = ?, cost = ? WHERE id = ? AND state = 'running'");
    if (!q) goto dberr;
    sqlite3_bind_int(q, 1, lm_iter);
    if (isfinite(cost)) sqlite3_bind_double(q, 2, cost);
    for (int i = 0; i < n; i++) {
        /* Bindings survive a reset: only the id changes per row. */
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 3, ids[i]);
        if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
    }
    goto end;
dberr:
    st = db_err(s->db, err, "jobs");
end:
    sqlite3_finalize(q);
    st = tx_end(s, st, err, "jobs");
unlock:
    if (s->sync_full) exec(s, "PRAGMA synchronous = FULL", NULL, NULL);
    UNLOCK(s);
    return st;
}

enum rt_status store_job_progress(struct store *s, int64_t id, int lm_iter, double cost,
                                  struct rt_err *err)
{
    return store_job_progress_many(s, &id, 1, lm_iter, cost, err);
}

enum rt_status store_job_finish_many(struct store *s, struct store_result_new *r, int n, struct rt_err *err)
{
    enum rt_status st = RT_OK;
    sqlite3_stmt *up = NULL, *ins = NULL;
    size_t bytes;
    for (int i = 0; i < n; i++) {
        r[i].stored = 0;
        if (r[i].frames <= 0 || r[i].columns <= 0 ||
            !rt_mul_size((size_t)r[i].frames, (size_t)r[i].columns * 4, &bytes) || bytes > (size_t)INT32_MAX)
            return rt_err_set(err, RT_ELIMIT, "result", "trajectory of %d x %d values too large", r[i].frames,
                              r[i].columns);
    }
    yield_to_inserts(s);
    LOCK(s);
    if ((st = exec(s, "BEGIN IMMEDIATE", err, "result")) != RT_OK) goto unlock;
    up = prep(s->db, "UPDATE jobs SET state = 'succeeded', finished = ?, lm_iter = ?, cost = ?, "
                     "solve_seconds = ?, batch_clips = ? WHERE id = ? AND state = 'running'");
    ins = prep(s->db, "INSERT INTO results (job_id, frames, columns, trajectory, report, column_names) "
                      "VALUES (?,?,?,?,?,?)");
    if (!up || !ins) goto dberr;
    for (int i = 0; i < n; i++) {
        struct store_result_new *x = &r[i];
        sqlite3_reset(up);
        sqlite3_clear_bindings(up);
        sqlite3_bind_double(up, 1, now_s());
        sqlite3_bind_int(up, 2, x->lm_iter);
        if (isfinite(x->cost)) sqlite3_bind_double(up, 3, x->cost);
        sqlite3_bind_double(up, 4, x->solve_seconds);
        sqlite3_bind_int(up, 5, x->batch_clips);
        sqlite3_bind_int64(up, 6, x->id);
        if (sqlite3_step(up) != SQLITE_DONE) goto dberr;
        if (sqlite3_changes(s->db) != 1) continue; /* cancelled meanwhile: store nothing */
        sqlite3_reset(ins);
        sqlite3_clear_bindings(ins);
        sqlite3_bind_int64(ins, 1, x->id);
        sqlite3_bind_int(ins, 2, x->frames);
        sqlite3_bind_int(ins, 3, x->columns);
        sqlite3_bind_blob(ins, 4, x->traj, x->frames * x->columns * 4, SQLITE_STATIC);
        sqlite3_bind_text(ins, 5, x->report, -1, SQLITE_STATIC);
        if (x->column_names) sqlite3_bind_text(ins, 6, x->column_names, -1, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE) goto dberr;
        x->stored = 1;
    }
    goto end;
dberr:
    st = db_err(s->db, err, "result");
end:
    sqlite3_finalize(up);
    sqlite3_finalize(ins);
    /* A cancelled job changed no row: committing that is a no-op. */
    if ((st = tx_end(s, st, err, "result")) != RT_OK)
        for (int i = 0; i < n; i++) r[i].stored = 0;
unlock:
    UNLOCK(s);
    return st;
}

enum rt_status store_job_finish(struct store *s, int64_t id, int frames, int columns,
                                const char *column_names, const float *traj, const char *report,
                                int lm_iter, double cost, double solve_seconds, int batch_clips,
                                int *stored, struct rt_err *err)
{
    struct store_result_new r = {id, frames, columns, column_names, traj, report, lm_iter, cost,
                                 solve_seconds, batch_clips, 0};
    enum rt_status st = store_job_finish_many(s, &r, 1, err);
    *stored = r.stored;
    return st;
}

enum rt_status store_job_fail(struct store *s, int64_t id, const char *error_json,
                              struct rt_err *err)
{
    enum rt_status st = RT_OK;
    LOCK(s);
    sqlite3_stmt *q = prep(s->db, "UPDATE jobs SET state = 'failed', error = ?, finished = ? "
                              "WHERE id = ? AND state IN ('queued','running')");
    if (!q) {
        st = db_err(s->db, err, "jobs");
        goto done;
    }
    sqlite3_bind_text(q, 1, error_json, -1, SQLITE_STATIC);
    sqlite3_bind_double(q, 2, now_s());
    sqlite3_bind_int64(q, 3, id);
    if (sqlite3_step(q) != SQLITE_DONE) st = db_err(s->db, err, "jobs");
done:
    sqlite3_finalize(q);
    UNLOCK(s);
    return st;
}

enum rt_status store_job_cancel(struct store *s, int64_t id, const char *owner, int *state,
                                struct rt_err *err)
{
    enum rt_status st = RT_OK;
    sqlite3_stmt *q = NULL;
    *state = -1;
    LOCK(s);
    if ((st = exec(s, "BEGIN IMMEDIATE", err, "jobs")) != RT_OK) goto unlock;
    q = prep(s->db, "SELECT owner, state FROM jobs WHERE id = ?");
    if (!q) goto dberr;
    sqlite3_bind_int64(q, 1, id);
    if ((st = job_row(s->db, q, sqlite3_step(q), 0, id, owner, "jobs", err)) != RT_OK) goto end;
    *state = state_from_str((const char *)sqlite3_column_text(q, 1));
    if (*state != STORE_QUEUED && *state != STORE_RUNNING) {
        st = rt_err_set(err, RT_ESTATE, "jobs", "job %lld already %s", (long long)id,
                        store_state_str(*state));
        goto end;
    }
    sqlite3_finalize(q);
    q = prep(s->db, "UPDATE jobs SET state = 'cancelled', finished = ? WHERE id = ?");
    if (!q) goto dberr;
    sqlite3_bind_double(q, 1, now_s());
    sqlite3_bind_int64(q, 2, id);
    if (sqlite3_step(q) != SQLITE_DONE) goto dberr;
    goto end;
dberr:
    st = db_err(s->db, err, "jobs");
end:
    sqlite3_finalize(q);
    st = tx_end(s, st, err, "jobs");
unlock:
    UNLOCK(s);
    return st;
}

enum rt_status store_result_get(struct store *s, int64_t id, const char *owner, int *frames,
                                int *columns, char **column_names, float **traj, char **report,
                                struct rt_err *err)
{
    enum rt_status st = RT_OK;
    if (traj) *traj = NULL;
    if (report) *report = NULL;
    if (column_names) *column_names = NULL;
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, "SELECT j.owner, j.state, r.frames, r.columns, r.trajectory, r.report, "
                                "r.column_names "
                                "FROM jobs j LEFT JOIN results r ON r.job_id = j.id WHERE j.id = ?");
    if (!q) {
        st = db_err(rdb, err, "result");
        goto done;
    }
    sqlite3_bind_int64(q, 1, id);
    if ((st = job_row(rdb, q, sqlite3_step(q), 0, id, owner, "result", err)) != RT_OK) goto done;
    if (sqlite3_column_type(q, 2) == SQLITE_NULL) {
        st = rt_err_set(err, RT_ESTATE, "jobs", "job %lld is %s: no result", (long long)id,
                        (const char *)sqlite3_column_text(q, 1));
        goto done;
    }
    *frames = sqlite3_column_int(q, 2);
    *columns = sqlite3_column_int(q, 3);
    if (traj) {
        int n = sqlite3_column_bytes(q, 4);
        if ((size_t)n != (size_t)*frames * (size_t)*columns * 4) {
            st = rt_err_set(err, RT_EIO, "result", "trajectory blob has %d bytes", n);
            goto done;
        }
        if (!(*traj = malloc((size_t)n))) {
            st = rt_err_set(err, RT_ENOMEM, "result", "out of memory");
            goto done;
        }
        memcpy(*traj, sqlite3_column_blob(q, 4), (size_t)n);
    }
    if ((report && !(*report = dup_col(q, 5, NULL))) ||
        (column_names && sqlite3_column_type(q, 6) != SQLITE_NULL && !(*column_names = dup_col(q, 6, NULL)))) {
        st = rt_err_set(err, RT_ENOMEM, "result", "out of memory");
        if (traj) {
            free(*traj);
            *traj = NULL;
        }
        if (report) {
            free(*report);
            *report = NULL;
        }
    }
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}

enum rt_status store_job_counts(struct store *s, long long counts[STORE_N_STATES],
                                struct rt_err *err)
{
    enum rt_status st = RT_OK;
    memset(counts, 0, STORE_N_STATES * sizeof counts[0]);
    RLOCK(s);
    sqlite3_stmt *q = prep(rdb, "SELECT state, count(*) FROM jobs GROUP BY state");
    if (!q) {
        st = db_err(rdb, err, "jobs");
        goto done;
    }
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int k = state_from_str((const char *)sqlite3_column_text(q, 0));
        if (k >= 0) counts[k] = sqlite3_column_int64(q, 1);
    }
    if (rc != SQLITE_DONE) st = db_err(rdb, err, "jobs");
done:
    sqlite3_finalize(q);
    RUNLOCK(s);
    return st;
}
