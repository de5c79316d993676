-- schema.sql -- the retargetd database, version 1 (PRAGMA user_version = 1).
-- Embedded into the binary by storage/store.c (.incbin); later versions are
-- the migrations in store.c, applied in order at open. Timestamps are Unix
-- seconds (REAL). Only storage/store.c speaks SQL.

-- Bearer tokens: only the SHA-256 of a token is stored.
CREATE TABLE tokens (
    id      INTEGER PRIMARY KEY,
    name    TEXT NOT NULL UNIQUE,
    hash    BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    admin   INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1)),
    created REAL NOT NULL
);

-- Uploaded robots (bundled ones are compiled in and never stored).
CREATE TABLE robots (
    name    TEXT PRIMARY KEY,
    urdf    TEXT NOT NULL,
    created REAL NOT NULL
);

-- Uploaded profiles (bundled ones are compiled in).
CREATE TABLE profiles (
    name    TEXT PRIMARY KEY,
    json    TEXT NOT NULL,
    created REAL NOT NULL
);

-- Jobs. `owner` is the token name ("anonymous" with auth off). The
-- idempotency key is unique per owner; input_hash is the SHA-256 of the
-- submission, so that a key reused for another input is refused.
-- class_key groups jobs that may share a solver batch (robot, profile,
-- options); frames is the clip's frame count (the horizon class).
CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    owner        TEXT NOT NULL,
    idem_key     TEXT,
    input_hash   BLOB NOT NULL CHECK (length(input_hash) = 32),
    name         TEXT NOT NULL,
    robot        TEXT NOT NULL,
    profile      TEXT,
    options      TEXT NOT NULL DEFAULT '{}',
    source_kind  TEXT NOT NULL CHECK (source_kind IN ('bvh', 'csv')),
    source_robot TEXT,
    clip         TEXT NOT NULL,
    frames       INTEGER NOT NULL CHECK (frames > 0),
    class_key    TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'queued'
                 CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    lm_iter      INTEGER NOT NULL DEFAULT 0,
    cost         REAL,
    error        TEXT,
    created      REAL NOT NULL,
    started      REAL,
    finished     REAL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (owner, idem_key)
);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_owner ON jobs (owner, id);

-- Results: the trajectory as little-endian float32, frames x columns,
-- row-major (the CSV's rows), and the report JSON. Written in the same
-- transaction that marks its job succeeded.
CREATE TABLE results (
    job_id     INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    frames     INTEGER NOT NULL CHECK (frames > 0),
    columns    INTEGER NOT NULL CHECK (columns > 0),
    trajectory BLOB NOT NULL CHECK (length(trajectory) = frames * columns * 4),
    report     TEXT NOT NULL
);
