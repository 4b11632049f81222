-- The "business" tables of the record-level demo handlers (demo.ledger and
-- demo.ledger-external), MySQL 8 / MariaDB >= 10.6. demo.RegisterRecords
-- runs this file after records.Processor.EnsureSchema (shard_lock,
-- dedup_record); every statement is idempotent.

-- demo.ledger books one row per record, in the transaction that marks the
-- record done (records.Transactional): exactly once.
-- record_key is the record's identity, its idempotency key
-- "<job_id>|<scope>|<key>": unique, so that a record can never be booked
-- twice, whatever the handler does; a second firing of the job in a new
-- scope (the default scope is the run) books its records again under new
-- keys. source_key is the key the Source yielded (the record id).
CREATE TABLE IF NOT EXISTS ledger (
  id          BIGINT         NOT NULL AUTO_INCREMENT,
  record_key  VARBINARY(512) NOT NULL COMMENT 'records.Record.IdempotencyKey: <job_id>|<scope>|<key>',
  source_key  VARBINARY(255) NOT NULL COMMENT 'records.Record.Key',
  job_id      BIGINT         NOT NULL,
  run_id      BIGINT         NOT NULL,
  slot        INT            NOT NULL,
  amount      BIGINT         NOT NULL COMMENT 'the record id when the key is a number, else 1',
  token       BIGINT         NOT NULL COMMENT 'fencing token of the attempt that booked it',
  created_at  DATETIME(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6) COMMENT 'database clock, statement time',
  PRIMARY KEY (id),
  UNIQUE KEY uq_ledger_record (record_key),
  KEY idx_ledger_job (job_id, run_id, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- demo.ledger-external stands for a call to a remote system that is not
-- part of the dedup transaction (records.External): one row per call, on a
-- connection of its own, committed at once. Deliberately NOT unique on
-- idempotency_key: the table counts calls, so that a repeated call (policy
-- Retry after a crash) shows up as a second row.
CREATE TABLE IF NOT EXISTS external_calls (
  id               BIGINT         NOT NULL AUTO_INCREMENT,
  idempotency_key  VARBINARY(512) NOT NULL COMMENT 'records.Record.IdempotencyKey',
  job_id           BIGINT         NOT NULL,
  run_id           BIGINT         NOT NULL,
  slot             INT            NOT NULL,
  token            BIGINT         NOT NULL COMMENT 'fencing token of the calling attempt',
  attempt          INT            NOT NULL COMMENT 'records.Record.Attempt',
  uncertain        BOOLEAN        NOT NULL COMMENT 'records.Record.Uncertain: an earlier attempt may have made this call',
  at               DATETIME(6)    NOT NULL DEFAULT CURRENT_TIMESTAMP(6) COMMENT 'database clock',
  PRIMARY KEY (id),
  KEY idx_external_calls_key (idempotency_key),
  KEY idx_external_calls_job (job_id, run_id, slot)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
