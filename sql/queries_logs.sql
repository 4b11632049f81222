-- Named queries of shipped handler logs (tables run_log and run_log_state,
-- migration 0006). Same conventions as queries.sql.

-- The slot attempts among tokens (IN list) that the executor ran, of runs
-- still active or finished less than ? ms ago: only those may log.
-- name: RunLogTokens :many
-- in: executor_id int64, horizon_ms int64, tokens []int64
-- out: logToken
SELECT a.id AS token, a.run_id, a.slot, a.attempt
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id
WHERE a.executor_id = ? AND (r.finished_at IS NULL OR r.finished_at > {{now_ms}} - ?) AND a.id IN (?);

-- One tuple per run (multiRow), in run_id order. Run outside the appending
-- transaction, so that the transaction only takes the rows' exclusive locks
-- (no shared lock from a duplicate key).
-- name: RunLogStateEnsure :execrows
-- in: run_id int64
{{insert_ignore}} INTO run_log_state (run_id) VALUES (?);

-- The states of the runs of a batch (IN list), locked in run_id order.
-- name: RunLogStatesLock :many
-- in: run_ids []int64
-- out: RunLogState
SELECT run_id, next_seq, stored_lines, stored_bytes, dropped_executor, dropped_cap, dropped_quota
FROM run_log_state WHERE run_id IN (?) ORDER BY run_id {{for_update}};

-- name: RunLogState :one
-- in: run_id int64
-- out: RunLogState
SELECT run_id, next_seq, stored_lines, stored_bytes, dropped_executor, dropped_cap, dropped_quota
FROM run_log_state WHERE run_id = ?;

-- Set by key (byKey): the states of every run of a batch, locked before.
-- name: RunLogStatesUpdate
-- Untyped: a "set by key" update sized at run time (execByKey).
UPDATE run_log_state
SET next_seq = CASE run_id WHEN ? THEN ? END,
    stored_lines = CASE run_id WHEN ? THEN ? END,
    stored_bytes = CASE run_id WHEN ? THEN ? END,
    dropped_executor = dropped_executor + CASE run_id WHEN ? THEN ? END,
    dropped_cap = dropped_cap + CASE run_id WHEN ? THEN ? END,
    dropped_quota = dropped_quota + CASE run_id WHEN ? THEN ? END
WHERE run_id IN (?);

-- Expanded to one tuple per line (multiRow).
-- name: RunLogInsert :execrows
-- in: run_id int64, seq int64, slot int, token int64, attempt int, at int64, level int, message string, attrs string
INSERT INTO run_log (run_id, seq, slot, token, attempt, at, level, message, attrs)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);

-- Keyset page of a run's lines: seq > after, level >= min.
-- name: RunLogPage :many
-- in: run_id int64, seq int64, level int, limit int
-- out: RunLogLine
SELECT seq, slot, token, attempt, at, level, message, attrs FROM run_log
WHERE run_id = ? AND seq > ? AND level >= ?
ORDER BY seq LIMIT ?;

-- The same, of one slot (index idx_run_log_slot).
-- name: RunLogPageSlot :many
-- in: run_id int64, slot int, seq int64, level int, limit int
-- out: RunLogLine
SELECT seq, slot, token, attempt, at, level, message, attrs FROM run_log
WHERE run_id = ? AND slot = ? AND seq > ? AND level >= ?
ORDER BY seq LIMIT ?;

-- For retention: the logs of purged runs (IN list). The primary key
-- (run_id, seq) serves both.
-- name: RunLogDeleteRuns :exec
-- in: run_ids []int64
DELETE FROM run_log WHERE run_id IN (?);

-- name: RunLogStateDeleteRuns :exec
-- in: run_ids []int64
DELETE FROM run_log_state WHERE run_id IN (?);

-- name: AppLogDayEnsure :exec
-- in: app string, day string
-- The row of an app's logs of a UTC day (YYYY-MM-DD), made outside the
-- appending transaction (which then only locks it).
{{insert_ignore}} INTO app_log_day (app, day) VALUES (?, ?);

-- name: AppLogDayLock :one
-- in: app string, day string
-- out: bytes int64
SELECT bytes FROM app_log_day WHERE app = ? AND day = ? {{for_update}};

-- name: AppLogDayAdd :exec
-- in: bytes int64, dropped int, app string, day string
UPDATE app_log_day SET bytes = bytes + ?, dropped = dropped + ? WHERE app = ? AND day = ?;

-- name: AppLogDay :one
-- in: app string, day string
-- out: bytes int64, dropped int64
SELECT bytes, dropped FROM app_log_day WHERE app = ? AND day = ?;

-- name: AppLogQuota :one
-- in: name string
-- out: max_log_bytes_per_day int64
SELECT COALESCE(max_log_bytes_per_day, 0) FROM app WHERE name = ?;
