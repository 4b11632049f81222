-- shardjob record-level exactly-once: the executor-side tables, PostgreSQL >= 13.
--
-- Same tables and meaning as mysql.sql (read the comments there). Scopes and
-- keys are BYTEA: compared byte for byte whatever the database's collation
-- (text under a linguistic collation would sort and compare by rules that
-- have nothing to do with record identity). error is TEXT.
-- All instants are BIGINT Unix milliseconds of the database clock.

CREATE TABLE IF NOT EXISTS shard_lock (
  job_id      BIGINT  NOT NULL,
  run_id      BIGINT  NOT NULL,
  slot        INT     NOT NULL,
  token       BIGINT  NOT NULL,
  holder      TEXT    NOT NULL,
  lease_until BIGINT  NOT NULL,
  acquired_at BIGINT  NOT NULL,
  released_at BIGINT  NULL,
  PRIMARY KEY (job_id, run_id, slot)
);
CREATE INDEX IF NOT EXISTS idx_shard_lock_token ON shard_lock (job_id, token);
CREATE INDEX IF NOT EXISTS idx_shard_lock_lease ON shard_lock (lease_until);

CREATE TABLE IF NOT EXISTS dedup_record (
  job_id      BIGINT  NOT NULL,
  scope       BYTEA   NOT NULL,
  record_key  BYTEA   NOT NULL,
  status      TEXT    NOT NULL,
  attempts    INT     NOT NULL,
  token       BIGINT  NOT NULL,
  run_id      BIGINT  NOT NULL,
  error       TEXT    NOT NULL DEFAULT '',
  created_at  BIGINT  NOT NULL,
  updated_at  BIGINT  NOT NULL,
  PRIMARY KEY (job_id, scope, record_key)
);
-- No secondary index (see mysql.sql).

CREATE TABLE IF NOT EXISTS dedup_record_archive (
  job_id      BIGINT  NOT NULL,
  scope       BYTEA   NOT NULL,
  record_key  BYTEA   NOT NULL,
  status      TEXT    NOT NULL,
  attempts    INT     NOT NULL,
  token       BIGINT  NOT NULL,
  run_id      BIGINT  NOT NULL,
  error       TEXT    NOT NULL DEFAULT '',
  created_at  BIGINT  NOT NULL,
  updated_at  BIGINT  NOT NULL,
  archived_at BIGINT  NOT NULL,
  PRIMARY KEY (job_id, scope, record_key)
);
CREATE INDEX IF NOT EXISTS idx_dedup_archive_archived ON dedup_record_archive (archived_at);
