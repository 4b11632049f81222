-- migrate up
-- Per-run cost (issue 36), continued from migration 0050 for slot_attempt:
-- both of its secondary indexes had `status` in them (idx_attempt_executor
-- (executor_id, status), idx_attempt_status (status, id)), so an attempt's
-- start (assigned → running) and its end rewrote two entries each. Every
-- query that reads them looks for attempts that are not ended, so:
--   live    = 1 for a current attempt that is assigned or running, NULL
--             once it ends or is superseded;
--   unacked = 1 for a current attempt placed on an executor that has not
--             acknowledged it yet, NULL otherwise.
--   idx_attempt_executor (executor_id, live): an executor's attempts that
--     are not ended (and, with executor_id NULL, the ones waiting for an
--     executor); a start leaves it alone, an end rewrites it.
--   idx_attempt_unacked (unacked, executor_id, id): the attempts that wait
--     for their executor's acknowledgement, each executor's in token order
--     (what a push or a heartbeat response carries, and the leader's
--     dispatch timeout); the acknowledgement rewrites it, nothing after.
-- An attempt's start and end now rewrite one entry each instead of two.
-- The queries that read the global range of idx_attempt_status (placed
-- slots, the executors' load, attempts of lost executors) read from the
-- executors through idx_attempt_executor instead.
ALTER TABLE slot_attempt
  DROP INDEX idx_attempt_executor, DROP INDEX idx_attempt_status,
  ADD COLUMN live TINYINT AS (CASE WHEN current = 1 AND status IN ('assigned', 'running') THEN 1 END) STORED,
  ADD COLUMN unacked TINYINT AS (CASE WHEN current = 1 AND status = 'assigned' AND acked = 0 AND executor_id IS NOT NULL THEN 1 END) STORED,
  ADD INDEX idx_attempt_executor (executor_id, live),
  ADD INDEX idx_attempt_unacked (unacked, executor_id, id);

-- migrate down
ALTER TABLE slot_attempt
  DROP INDEX idx_attempt_executor, DROP INDEX idx_attempt_unacked,
  DROP COLUMN live, DROP COLUMN unacked,
  ADD INDEX idx_attempt_executor (executor_id, status),
  ADD INDEX idx_attempt_status (status, id);
