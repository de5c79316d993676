/* store.h -- retargetd's SQLite database: tokens, uploaded robots and
 * profiles, jobs and their results. The only SQL of the project lives in
 * store.c (DESIGN.md "Layout").
 *
 * The database runs in WAL mode with a busy timeout and foreign keys on.
 * Its schema is storage/schema.sql (version 1) plus the migrations in
 * store.c; PRAGMA user_version holds the version, and store_open() brings
 * an older file up to STORE_VERSION in one transaction per step, refusing a
 * file from a newer build.
 *
 * A job's source is stored packed from version 9 (one zstd frame with its
 * checksum, when that saves an eighth; store_set_pack()) and read back as
 * the bytes submitted.
 *
 * Jobs move queued -> running -> succeeded | failed | cancelled. A result is
 * inserted in the same transaction that marks its job succeeded, and only
 * while the job is still running, so a cancelled job's result is never
 * stored and no reader ever sees a succeeded job without its result.
 *
 * Threads: a struct store may be used from any thread. It holds several
 * connections to the file: one that writes (serialized by a mutex), eight
 * that only read (each lent to one reader at a time), so that reads never
 * wait for a commit, and the WAL checkpointer's own.
 *
 * Memory: strings and arrays a store_* function returns through pointers
 * are malloc'd and the caller frees them (free(), or store_job_release()
 * for a struct store_job). */
#ifndef RT_STORE_H
#define RT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../base/status.h"
#include "../base/sha256.h"

#define STORE_VERSION 9
#define STORE_MAX_NAME 64          /* robot, profile, token, owner names (bytes) */
#define STORE_MAX_KEY 128          /* Idempotency-Key (bytes) */
#define STORE_MAX_JOB_NAME 480     /* a job name (bytes: 120 UTF-8 characters) */
#define STORE_MAX_TEXT (256u << 20) /* a clip, URDF or profile text (bytes) */
#define STORE_MAX_PAGE 1000        /* jobs per store_job_list() page */
#define STORE_YIELD_MS 20          /* a results commit waits at most this for queued submissions */
#define STORE_MAX_ATTEMPTS 3       /* solves (or result stores) a crash may interrupt before a job is failed */

enum store_state {
    STORE_QUEUED = 0,
    STORE_RUNNING = 1,
    STORE_SUCCEEDED = 2,
    STORE_FAILED = 3,
    STORE_CANCELLED = 4
};
#define STORE_N_STATES 5

/* A job's source: a BVH clip, a robot trajectory CSV, or joint positions
 * (.npz, .npy or CSV bytes, kinematics/joints.h; from schema version 7). */
enum store_source { STORE_SRC_BVH = 0, STORE_SRC_CSV = 1, STORE_SRC_JOINTS = 2 };

/* The stored name of a source kind ("bvh", "csv", "joints"). */
const char *store_source_str(int kind);

struct store;

/* "queued", "running", ... ; "unknown" outside the enum. */
const char *store_state_str(int state);

/* Opens (creating when absent) the database at `path` and migrates it to
 * STORE_VERSION. RT_EIO when SQLite cannot open or write it, RT_ESTATE for a
 * file whose user_version is newer than this build. *out is NULL on failure. */
enum rt_status store_open(const char *path, struct store **out, struct rt_err *err);

/* As store_open() but migrates only up to `version` (1..STORE_VERSION): for
 * tests of the migrations. */
enum rt_status store_open_at(const char *path, int version, struct store **out,
                             struct rt_err *err);

/* NULL-safe. */
void store_close(struct store *s);

/* PRAGMA synchronous of this connection: FULL (full = 1: every commit is
 * on disk when it returns, in WAL mode too) or NORMAL (a commit may be
 * lost to a power failure, never to a crash of the process; the file stays
 * consistent either way). store_open() leaves NORMAL. With FULL, progress
 * updates (store_job_progress*), which are advisory, are still committed
 * without a sync of their own. RT_EIO. */
enum rt_status store_set_sync(struct store *s, int full, struct rt_err *err);

/* Whether store_job_insert() packs sources (from schema 9; on when opened):
 * off, every source is stored as given. Reads are the same either way.
 * Set before the store is shared with other threads (read unlocked). */
void store_set_pack(struct store *s, int on);

/* PRAGMA synchronous of this connection: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA;
 * -1 when it cannot be read. */
int store_synchronous(struct store *s);

/* PRAGMA user_version of the open file (as migrated by store_open). */
int store_version(struct store *s);

/* 1 when `name` is 1..STORE_MAX_NAME bytes of [A-Za-z0-9_.-] (NULL: 0): the
 * rule for token, owner, robot and profile names. */
int store_name_ok(const char *name);

/* --- tokens ------------------------------------------------------------ */

/* Adds a token named `name` (1..STORE_MAX_NAME bytes of [A-Za-z0-9_.-])
 * whose SHA-256 is `hash`. RT_ECONFLICT when the name or hash exists. */
enum rt_status store_token_add(struct store *s, const char *name,
                               const unsigned char hash[RT_SHA256_LEN], int admin,
                               struct rt_err *err);

/* Finds the token whose hash is `hash`: its name into name[STORE_MAX_NAME+1]
 * and its admin flag. RT_ENOTFOUND when there is none. */
enum rt_status store_token_find(struct store *s, const unsigned char hash[RT_SHA256_LEN],
                                char *name, int *admin, struct rt_err *err);

/* Calls fn for every token in name order with its name, admin flag and
 * creation time (never its hash). */
enum rt_status store_token_list(struct store *s,
                                void (*fn)(void *user, const char *name, int admin, double created),
                                void *user, struct rt_err *err);

/* Deletes the token named `name`. RT_ENOTFOUND when there is none. Jobs
 * keep its name as their owner. */
enum rt_status store_token_revoke(struct store *s, const char *name, struct rt_err *err);

/* --- robots and profiles (kind: "robot" or "profile") -------------------- */

/* Inserts or replaces the uploaded text of robot/profile `name`.
 * RT_ECONFLICT (where "url") when queued or running jobs name it (a robot
 * as robot or source_robot, a profile as profile): they are built from it
 * when they run. The check and the write are one transaction. */
enum rt_status store_asset_put(struct store *s, const char *kind, const char *name,
                               const char *text, size_t len, struct rt_err *err);

/* The text of uploaded robot/profile `name` (malloc'd, NUL-terminated).
 * RT_ENOTFOUND when not uploaded. */
enum rt_status store_asset_get(struct store *s, const char *kind, const char *name, char **text,
                               size_t *len, struct rt_err *err);

/* Calls fn for each uploaded robot/profile in name order. */
enum rt_status store_asset_list(struct store *s, const char *kind,
                                void (*fn)(void *user, const char *name, double created),
                                void *user, struct rt_err *err);

/* --- jobs -------------------------------------------------------------- */

/* A new job. Strings are borrowed. idem_key and profile and source_robot
 * may be NULL. */
struct store_job_new {
    const char *owner, *idem_key, *name, *robot, *profile, *options, *source_robot, *class_key;
    const char *plan; /* the job's plan (retarget/job.h, rtg_job_plan_json()), or NULL */
    int source_kind; /* enum store_source */
    const char *clip; /* the source's bytes (binary for .npz and .npy joint positions) */
    size_t clip_len;
    /* STORE_SRC_JOINTS: the .npy's joint names (one a line, NULL for none),
     * metres per unit (0: detected) and up axis ('y', 'z', 0: detected). */
    const char *joint_names;
    double joint_units;
    char joint_up;
    int frames;
    unsigned char input_hash[RT_SHA256_LEN];
    int max_active; /* refuse when the owner has this many queued+running jobs (0: no limit) */
    /* Out, when not NULL: where store_job_insert()'s time went (seconds):
     * the clip packed (pack, on the caller's thread: from schema 9 a source
     * of 4 KiB or more is stored as one zstd frame when that saves an
     * eighth, and read back as the bytes given), waiting for the group
     * commit before (group); a submission that led its group also the
     * wait for the writer connection (lock), the group's inserts (write),
     * its commit (commit) and the later groups it committed before it
     * returned (more: those queued meanwhile, STORE_LEAD_ROUNDS). Those
     * four are -1 for a submission that another's commit took along. */
    struct store_insert_times *times;
};

struct store_insert_times {
    double pack, group, lock, write, commit, more;
};

/* A job as read back. Strings are NUL-terminated; options, error and clip
 * are malloc'd (NULL when absent or not asked for). Timestamps are Unix
 * seconds, 0 when unset; cost is NAN when unknown. */
struct store_job {
    int64_t id;
    char owner[STORE_MAX_NAME + 1], name[STORE_MAX_JOB_NAME + 1], robot[STORE_MAX_NAME + 1];
    char profile[STORE_MAX_NAME + 1], source_robot[STORE_MAX_NAME + 1];
    char idem_key[STORE_MAX_KEY + 1], class_key[256];
    int source_kind, state, frames, lm_iter, attempts;
    double cost, created, started, finished;
    double solve_seconds; /* wall time of its solver batch, 0 until solved */
    int batch_clips;      /* clips in that batch, 0 until solved */
    char *options, *error, *clip;
    char *plan;       /* the stored plan, NULL for a job stored before version 4 */
    size_t clip_len;
    /* Read with the clip (STORE_SRC_JOINTS): as struct store_job_new's;
     * joint_names malloc'd or NULL. */
    char *joint_names;
    size_t joint_names_len;
    double joint_units;
    char joint_up;
};

/* Frees the malloc'd fields of `j` and NULLs them (NULL-safe). */
void store_job_release(struct store_job *j);

/* Inserts a queued job and returns its id. With an idempotency key that
 * the owner already used: the existing job's id and *existed = 1 when the
 * input hash matches, RT_ECONFLICT when it does not. RT_ELIMIT when a field
 * exceeds its STORE_MAX_* limit; RT_EBUSY when the owner has max_active
 * queued or running jobs.
 * The check and the insert are one transaction. */
enum rt_status store_job_insert(struct store *s, const struct store_job_new *in, int64_t *id,
                                int *existed, struct rt_err *err);

/* Reads job `id`. With a non-NULL `owner`, a job of another owner is
 * RT_ENOTFOUND too (a token never learns of others' jobs). with_clip: also
 * read the clip, as submitted (a packed one unpacked; RT_EIO naming the
 * job when its stored frame is corrupt). */
enum rt_status store_job_get(struct store *s, int64_t id, const char *owner, int with_clip,
                             struct store_job *out, struct rt_err *err);

/* Up to `limit` (1..STORE_MAX_PAGE) of `owner`'s jobs with id < before
 * (before <= 0: from the newest), newest first, without clips, into a
 * malloc'd array *out of *n entries (each released with store_job_release,
 * the array with free). */
enum rt_status store_job_list(struct store *s, const char *owner, int64_t before, int limit,
                              struct store_job **out, int *n, struct rt_err *err);

/* Calls fn for every queued job in id order (the scheduler's start-up
 * load). fn gets the id, frame count, the runs a crash interrupted
 * (attempts: 0 for a job never taken) and the class key the job was stored
 * with; what to make of the attempts is the scheduler's decision. */
enum rt_status store_job_each_queued(struct store *s,
                                     void (*fn)(void *user, int64_t id, int frames, int attempts,
                                                const char *class_key),
                                     void *user, struct rt_err *err);

/* Crash recovery: every job left running returns to queued (its progress
 * cleared), except one whose solve has now been interrupted
 * STORE_MAX_ATTEMPTS times: it would likely bring the daemon down again,
 * so it is failed with an error saying so. A run interrupted after its
 * solve had finished (store_job_solved_many(): its result not stored yet)
 * does not count as an interrupted solve; STORE_MAX_ATTEMPTS such runs
 * fail the job too. `attempts` still counts every run taken. *n gets how
 * many were queued again, *n_failed how many were failed (either may be
 * NULL). One transaction. */
enum rt_status store_job_requeue_running(struct store *s, int *n, int *n_failed, struct rt_err *err);

/* queued -> running (started = now, attempts + 1). *claimed = 0 when the job
 * was not queued any more (cancelled meanwhile). */
enum rt_status store_job_claim(struct store *s, int64_t id, int *claimed, struct rt_err *err);

/* store_job_claim() of ids[0..n) in one transaction, claimed[i] for each
 * (all 0 on failure). Not synced on its own with --sync full: a claim a
 * power cut loses leaves its job queued, as it was. */
enum rt_status store_job_claim_many(struct store *s, const int64_t *ids, int n, int *claimed, struct rt_err *err);

/* Marks the running jobs among ids[0..n) solved: their results are being
 * made and stored, so a crash from now on does not count against their
 * solves (store_job_requeue_running()). One transaction, not synced on its
 * own with --sync full (a lost mark counts the run as an interrupted
 * solve, as before the mark). A no-op at schema versions below 8. */
enum rt_status store_job_solved_many(struct store *s, const int64_t *ids, int n, struct rt_err *err);

/* Progress of a running job (LM iteration, cost; cost NAN: unknown).
 * store_job_progress_many() and store_job_finish_many() first wait, at
 * most STORE_YIELD_MS, while submissions (store_job_insert) are queued
 * for or making their commit: submissions go first. */
enum rt_status store_job_progress(struct store *s, int64_t id, int lm_iter, double cost,
                                  struct rt_err *err);

/* As store_job_progress() for each of the `n` jobs in ids[] (the jobs of
 * one solver batch), in one transaction: either every running job among
 * them gets lm_iter and cost, or (on an error) none does. n <= 0: no-op. */
enum rt_status store_job_progress_many(struct store *s, const int64_t *ids, int n, int lm_iter,
                                       double cost, struct rt_err *err);

/* A result to store with store_job_finish_many(). */
struct store_result_new {
    int64_t id;
    int frames, columns;
    const char *column_names; /* JSON array, or NULL */
    const float *traj;        /* frames * columns */
    const char *report;
    int lm_iter;
    double cost, solve_seconds;
    int batch_clips;
    int stored; /* out: 1 when stored, 0 when the job was cancelled meanwhile */
};

/* As store_job_finish() for n results in one transaction (a solver batch's
 * results: one commit, not n). On an error nothing is stored and every
 * `stored` is 0; the caller may retry the jobs one at a time. */
enum rt_status store_job_finish_many(struct store *s, struct store_result_new *r, int n, struct rt_err *err);

/* running -> succeeded together with its result, in one transaction.
 * `traj` holds frames * columns floats; `column_names` is a JSON array of
 * the `columns` column names (NULL: not recorded), kept with the result so
 * that reading it never needs the robot; `report` is JSON text; the solve
 * time and the clips of its solver batch are recorded with it. When the job
 * is no longer running (cancelled), nothing is written and *stored = 0. On
 * any failure the transaction is rolled back: no half-written row. */
enum rt_status store_job_finish(struct store *s, int64_t id, int frames, int columns,
                                const char *column_names, const float *traj, const char *report,
                                int lm_iter, double cost, double solve_seconds, int batch_clips,
                                int *stored, struct rt_err *err);

/* queued|running -> failed with error JSON `error_json`. */
enum rt_status store_job_fail(struct store *s, int64_t id, const char *error_json,
                              struct rt_err *err);

/* queued|running -> cancelled. RT_ENOTFOUND as store_job_get (owner may be
 * NULL); RT_ESTATE when the job already finished (*state gets its state). */
enum rt_status store_job_cancel(struct store *s, int64_t id, const char *owner, int *state,
                                struct rt_err *err);

/* The result of a succeeded job: frames, columns, the column names
 * (malloc'd JSON array; *column_names NULL for a result stored before
 * schema version 3; NULL to skip), the trajectory (malloc'd frames*columns
 * floats; NULL allowed to skip it) and the report (malloc'd JSON text; NULL
 * to skip). RT_ENOTFOUND as store_job_get; RT_ESTATE when the job has no
 * result (not succeeded). */
enum rt_status store_result_get(struct store *s, int64_t id, const char *owner, int *frames,
                                int *columns, char **column_names, float **traj, char **report,
                                struct rt_err *err);

/* Jobs per state (counts[STORE_N_STATES]). */
enum rt_status store_job_counts(struct store *s, long long counts[STORE_N_STATES],
                                struct rt_err *err);

#endif
