-- migrate up
-- Indexes of slot_attempt that an attempt's start does not rewrite: see the
-- MySQL migration of the same version (VIRTUAL columns here: SQLite adds no
-- STORED column to a table; the indexes hold the computed values).
DROP INDEX idx_attempt_executor;
DROP INDEX idx_attempt_status;
ALTER TABLE slot_attempt ADD COLUMN live SMALLINT GENERATED ALWAYS AS (CASE WHEN current = 1 AND status IN ('assigned', 'running') THEN 1 END) VIRTUAL;
ALTER TABLE slot_attempt ADD COLUMN unacked SMALLINT GENERATED ALWAYS AS (CASE WHEN current = 1 AND status = 'assigned' AND acked = 0 AND executor_id IS NOT NULL THEN 1 END) VIRTUAL;
CREATE INDEX idx_attempt_executor ON slot_attempt (executor_id, live);
CREATE INDEX idx_attempt_unacked ON slot_attempt (unacked, executor_id, id);

-- migrate down
DROP INDEX idx_attempt_unacked;
DROP INDEX idx_attempt_executor;
ALTER TABLE slot_attempt DROP COLUMN unacked;
ALTER TABLE slot_attempt DROP COLUMN live;
CREATE INDEX idx_attempt_executor ON slot_attempt (executor_id, status);
CREATE INDEX idx_attempt_status ON slot_attempt (status, id);
