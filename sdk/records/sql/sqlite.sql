-- shardjob record-level exactly-once: the executor-side tables, SQLite >= 3.35.
--
-- Same tables and meaning as mysql.sql (read the comments there). SQLite
-- compares TEXT byte for byte by default, so keys need no special type.
-- All instants are BIGINT Unix milliseconds of the database clock.

CREATE TABLE IF NOT EXISTS shard_lock (
  job_id      BIGINT        NOT NULL,
  run_id      BIGINT        NOT NULL,
  slot        INT           NOT NULL,
  token       BIGINT        NOT NULL,
  holder      VARCHAR(255)  NOT NULL,
  lease_until BIGINT        NOT NULL,
  acquired_at BIGINT        NOT NULL,
  released_at BIGINT        NULL,
  PRIMARY KEY (job_id, run_id, slot)
);
CREATE INDEX IF NOT EXISTS idx_shard_lock_token ON shard_lock (job_id, token);
CREATE INDEX IF NOT EXISTS idx_shard_lock_lease ON shard_lock (lease_until);

CREATE TABLE IF NOT EXISTS dedup_record (
  job_id      BIGINT        NOT NULL,
  scope       VARCHAR(128)  NOT NULL,
  record_key  VARCHAR(255)  NOT NULL,
  status      VARCHAR(8)    NOT NULL,
  attempts    INT           NOT NULL,
  token       BIGINT        NOT NULL,
  run_id      BIGINT        NOT NULL,
  error       VARCHAR(1024) NOT NULL DEFAULT '',
  created_at  BIGINT        NOT NULL,
  updated_at  BIGINT        NOT NULL,
  PRIMARY KEY (job_id, scope, record_key)
) WITHOUT ROWID;
-- No secondary index (see mysql.sql).

CREATE TABLE IF NOT EXISTS dedup_record_archive (
  job_id      BIGINT        NOT NULL,
  scope       VARCHAR(128)  NOT NULL,
  record_key  VARCHAR(255)  NOT NULL,
  status      VARCHAR(8)    NOT NULL,
  attempts    INT           NOT NULL,
  token       BIGINT        NOT NULL,
  run_id      BIGINT        NOT NULL,
  error       VARCHAR(1024) NOT NULL DEFAULT '',
  created_at  BIGINT        NOT NULL,
  updated_at  BIGINT        NOT NULL,
  archived_at BIGINT        NOT NULL,
  PRIMARY KEY (job_id, scope, record_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_dedup_archive_archived ON dedup_record_archive (archived_at);
