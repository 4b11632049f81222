-- The "business" tables of the record-level demo handlers (demo.ledger and
-- demo.ledger-external), PostgreSQL >= 13. Same tables and meaning as
-- ledger.sql (read the comments there); keys are BYTEA, compared byte for
-- byte as sdk/records' own. demo.RegisterRecords runs this file after
-- records.Processor.EnsureSchema (shard_lock, dedup_record); every
-- statement is idempotent.
--
-- The instants are statement_timestamp(), the database clock at the start
-- of the statement as MySQL's CURRENT_TIMESTAMP(6) default: now() would be
-- the start of the transaction, earlier than a lock the transaction waited
-- for.

-- demo.ledger: one row per record, unique on the idempotency key.
CREATE TABLE IF NOT EXISTS ledger (
  id          BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  record_key  BYTEA       NOT NULL,
  source_key  BYTEA       NOT NULL,
  job_id      BIGINT      NOT NULL,
  run_id      BIGINT      NOT NULL,
  slot        INT         NOT NULL,
  amount      BIGINT      NOT NULL,
  token       BIGINT      NOT NULL,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp(),
  CONSTRAINT uq_ledger_record UNIQUE (record_key)
);
CREATE INDEX IF NOT EXISTS idx_ledger_job ON ledger (job_id, run_id, slot);
COMMENT ON COLUMN ledger.record_key IS 'records.Record.IdempotencyKey: <job_id>|<scope>|<key>';
COMMENT ON COLUMN ledger.source_key IS 'records.Record.Key';
COMMENT ON COLUMN ledger.amount IS 'the record id when the key is a number, else 1';
COMMENT ON COLUMN ledger.token IS 'fencing token of the attempt that booked it';
COMMENT ON COLUMN ledger.created_at IS 'database clock, statement time';

-- demo.ledger-external: one row per call, deliberately not unique.
CREATE TABLE IF NOT EXISTS external_calls (
  id               BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  idempotency_key  BYTEA       NOT NULL,
  job_id           BIGINT      NOT NULL,
  run_id           BIGINT      NOT NULL,
  slot             INT         NOT NULL,
  token            BIGINT      NOT NULL,
  attempt          INT         NOT NULL,
  uncertain        BOOLEAN     NOT NULL,
  at               TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp()
);
CREATE INDEX IF NOT EXISTS idx_external_calls_key ON external_calls (idempotency_key);
CREATE INDEX IF NOT EXISTS idx_external_calls_job ON external_calls (job_id, run_id, slot);
COMMENT ON COLUMN external_calls.idempotency_key IS 'records.Record.IdempotencyKey';
COMMENT ON COLUMN external_calls.token IS 'fencing token of the calling attempt';
COMMENT ON COLUMN external_calls.attempt IS 'records.Record.Attempt';
COMMENT ON COLUMN external_calls.uncertain IS 'records.Record.Uncertain: an earlier attempt may have made this call';
