-- The dashboard's per-minute rollup of runs (admin/runstats, migration
-- 0037): the leader folds each closed minute once into run_stat_minute, one
-- row per app; GET /api/v1/dashboard sums the rows of its window. Macros:
-- see queries.sql.

-- name: RunStatCursorGet :one
-- out: folded_until int64
SELECT folded_until FROM run_stat_cursor WHERE id = 1;

-- The first fold of an installation starts here; a cursor that exists
-- stays where it is.
-- name: RunStatCursorInit :exec
-- in: folded_until int64
{{insert_ignore}} INTO run_stat_cursor (id, folded_until) VALUES (1, ?);

-- Moves the cursor over one minute, only from where the folder found it:
-- 0 rows means another admin folded that minute (or is folding it: on MySQL
-- this waits for its transaction and then finds the cursor moved).
-- args: new folded_until, the minute being folded
-- name: RunStatCursorAdvance :exec
-- in: folded_until int64, from_folded_until int64
UPDATE run_stat_cursor SET folded_until = ? WHERE id = 1 AND folded_until = ?;

-- The first instants at or after ? that a run started and that a run
-- finished (the first entry of idx_run_started and of idx_run_finished
-- from there: two index reads); NULL when none has since. A folder far
-- behind skips the quiet minutes before them in one step.
-- name: RunStatNextActivity :one
-- in: from_ms int64, from_ms int64
-- out: started sql.NullInt64, finished sql.NullInt64
SELECT (SELECT started_at FROM job_run WHERE started_at >= ? ORDER BY started_at LIMIT 1) AS started,
       (SELECT finished_at FROM job_run WHERE finished_at >= ? ORDER BY finished_at LIMIT 1) AS finished;

-- The runs started in [from, to), per app (idx_run_started).
-- name: RunStatStarted :many
-- in: from_ms int64, to_ms int64
-- out: app string, n int64
SELECT app, COUNT(*) AS n FROM job_run WHERE started_at >= ? AND started_at < ? GROUP BY app;

-- The runs finished in [from, to) (idx_run_finished), with when their first
-- slot started on an executor (uk_slot_attempt: the attempts of each run);
-- the store counts outcomes and the start-lag histogram.
-- name: RunStatFinished :many
-- in: from_ms int64, to_ms int64
-- out: finishedRun
SELECT r.app, r.status, r.trigger_kind, r.scheduled_at,
       (SELECT MIN(a.started_at) FROM slot_attempt a WHERE a.run_id = r.id) AS first_started_at
FROM job_run r WHERE r.finished_at >= ? AND r.finished_at < ?;

-- name: RunStatInsert :exec
-- in: minute int64, app string, started int64, succeeded int64, failed int64, cancelled int64, skipped int64, lag_0 int64, lag_1 int64, lag_2 int64, lag_3 int64, lag_4 int64, lag_5 int64, lag_6 int64, lag_7 int64, lag_8 int64, lag_9 int64, lag_10 int64, lag_11 int64
INSERT INTO run_stat_minute (minute, app, started, succeeded, failed, cancelled, skipped,
  lag_0, lag_1, lag_2, lag_3, lag_4, lag_5, lag_6, lag_7, lag_8, lag_9, lag_10, lag_11)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- The minute of every app together: the sum of its apps' rows.
-- name: RunStatInsertAll :exec
-- in: minute int64, started int64, succeeded int64, failed int64, cancelled int64, skipped int64, lag_0 int64, lag_1 int64, lag_2 int64, lag_3 int64, lag_4 int64, lag_5 int64, lag_6 int64, lag_7 int64, lag_8 int64, lag_9 int64, lag_10 int64, lag_11 int64
INSERT INTO run_stat_minute_all (minute, started, succeeded, failed, cancelled, skipped,
  lag_0, lag_1, lag_2, lag_3, lag_4, lag_5, lag_6, lag_7, lag_8, lag_9, lag_10, lag_11)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- The minutes of [from, to) of every app together (run_stat_minute_all,
-- migration 0055): a primary-key range, the window's minutes, whatever the
-- number of apps.
-- args: from, to
-- name: RunStatRange :many
-- in: from_ms int64, to_ms int64
-- out: runStatRow
SELECT minute, started, succeeded, failed, cancelled, skipped,
       lag_0, lag_1, lag_2, lag_3, lag_4, lag_5, lag_6, lag_7, lag_8, lag_9, lag_10, lag_11
FROM run_stat_minute_all
WHERE minute >= ? AND minute < ?
ORDER BY minute;

-- The same over some apps (a user limited to apps, or one app):
-- idx_run_stat_app (app, minute), minutes × those apps rows.
-- args: apps…, from, to
-- name: RunStatRangeOfApps :many
-- in: apps []string, from_ms int64, to_ms int64
-- out: runStatRow
SELECT minute, SUM(started) AS started, SUM(succeeded) AS succeeded, SUM(failed) AS failed,
       SUM(cancelled) AS cancelled, SUM(skipped) AS skipped,
       SUM(lag_0) AS lag_0, SUM(lag_1) AS lag_1, SUM(lag_2) AS lag_2, SUM(lag_3) AS lag_3,
       SUM(lag_4) AS lag_4, SUM(lag_5) AS lag_5, SUM(lag_6) AS lag_6, SUM(lag_7) AS lag_7,
       SUM(lag_8) AS lag_8, SUM(lag_9) AS lag_9, SUM(lag_10) AS lag_10, SUM(lag_11) AS lag_11
FROM run_stat_minute
WHERE app IN (?) AND minute >= ? AND minute < ?
GROUP BY minute ORDER BY minute;

-- Minutes past the rollup's horizon (primary key range).
-- name: RunStatPrune :exec
-- in: minute int64
DELETE FROM run_stat_minute WHERE minute < ?;

-- The same of every app together.
-- name: RunStatPruneAll :exec
-- in: minute int64
DELETE FROM run_stat_minute_all WHERE minute < ?;
