-- Retry budgets and circuit breakers (issue 37, docs/failures.md). The
-- macros are those of queries.sql.
--
-- job_breaker holds the jobs whose breaker is open or probing, or has
-- counted failures; a job without a row is closed with none counted. Any
-- replica counts failures where it records them (results, lost
-- executors); only the leader changes a breaker's state, each change in a
-- transaction fenced by its epoch and guarded by the state it expects.

-- fragment: BreakerColumns
b.job_id, b.app, b.state, b.failures, b.last_error, b.opened_at, b.reason, b.probe_at, b.probe_token, b.epoch;

-- name: BreakerCountFailures :exec
-- in: job_id int64, app string, failures int, last_error string, failures int, last_error string
-- A job's failures counted after its last success (the second failures
-- and last_error repeat the first two for the update).
INSERT INTO job_breaker (job_id, app, state, failures, last_error) VALUES (?, ?, 'closed', ?, ?)
{{upsert(job_id)}} failures = job_breaker.failures + ?, last_error = ?;

-- name: BreakerResetFailures :exec
-- in: failures int, last_error string, last_error string, job_id int64
-- A job whose slot succeeded, then failed `failures` times: its count
-- starts again (a closed breaker with none counted has no row).
UPDATE job_breaker SET failures = ?, last_error = CASE WHEN ? = '' THEN last_error ELSE ? END WHERE job_id = ?;

-- name: BreakerForgetClosed :exec
-- in: job_id int64
DELETE FROM job_breaker WHERE job_id = ? AND state = 'closed';

-- name: BreakerJobsOfRuns :many
-- in: ids []int64
-- out: job_id int64, app string
-- The jobs with a breaker among those of runs (a lost attempt's).
SELECT DISTINCT r.job_id, r.app FROM job_run r JOIN job j ON j.id = r.job_id
WHERE r.id IN (?) AND j.breaker_threshold > 0;

-- name: Breakers :many
-- out: BreakerState
-- Every breaker with a state (O(such jobs)), with its job's settings: the
-- leader's round and the metric.
SELECT {{BreakerColumns}}, COALESCE(j.name, '') AS job_name, COALESCE(j.breaker_threshold, 0) AS breaker_threshold,
       COALESCE(j.breaker_cooldown, '') AS breaker_cooldown
FROM job_breaker b LEFT JOIN job j ON j.id = b.job_id
ORDER BY b.job_id;

-- name: BreakerOfJob :one
-- in: job_id int64
-- out: BreakerState
SELECT {{BreakerColumns}}, COALESCE(j.name, '') AS job_name, COALESCE(j.breaker_threshold, 0) AS breaker_threshold,
       COALESCE(j.breaker_cooldown, '') AS breaker_cooldown
FROM job_breaker b LEFT JOIN job j ON j.id = b.job_id
WHERE b.job_id = ?;

-- name: BreakersOfJobs :many
-- in: ids []int64
-- out: BreakerState
-- The breakers of a page of jobs (O(the page), by primary key): the job
-- list's breaker column.
SELECT {{BreakerColumns}}, COALESCE(j.name, '') AS job_name, COALESCE(j.breaker_threshold, 0) AS breaker_threshold,
       COALESCE(j.breaker_cooldown, '') AS breaker_cooldown
FROM job_breaker b LEFT JOIN job j ON j.id = b.job_id
WHERE b.job_id IN (?);

-- name: BreakerOpen :exec
-- in: opened_at sql.NullInt64, reason msg.Msg, probe_at int64, epoch int64, job_id int64, state string
-- Open (from closed) or open again (from probing, keeping when it first
-- opened: opened_at NULL keeps it), guarded by the state the leader read.
UPDATE job_breaker SET state = 'open', opened_at = COALESCE(?, opened_at), reason = ?, probe_at = ?, probe_token = NULL,
       failures = 0, epoch = ?
WHERE job_id = ? AND state = ?;

-- name: BreakerProbe :exec
-- in: probe_token int64, epoch int64, job_id int64
UPDATE job_breaker SET state = 'probing', probe_token = ?, epoch = ? WHERE job_id = ? AND state = 'open';

-- name: BreakerClose :exec
-- in: job_id int64, state string, state string
-- Closed (by the probe, guarded by probing; by hand, from any state).
DELETE FROM job_breaker WHERE job_id = ? AND (state = ? OR ? = '');

-- name: BreakerReleaseRuns :exec
-- in: job_id int64
-- The pending runs a breaker held start at the next round.
UPDATE job_run SET held_until = 0 WHERE job_id = ? AND status = 'pending' AND held_until > 0;

-- name: AlarmResolveBreaker :exec
-- in: resolved_by string, resolved_msg msg.Msg, job_id int64
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = ?, resolved_msg = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN 'shardjob' ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
WHERE kind = 'breaker_open' AND job_id = ? AND resolved_at IS NULL;

-- name: BreakerProbeOutcome :one
-- in: id int64
-- out: status string, error_class string, current bool, error string
SELECT status, error_class, current, error FROM slot_attempt WHERE id = ?;

-- name: BreakerHeldRetry :one
-- in: job_id int64
-- out: RetryCandidate
-- The oldest failed slot of the job that waits for a retry (the breaker
-- holds it): the probe when there is one.
SELECT a.id, a.run_id, a.slot, a.attempt, a.failures, a.executor_id, a.finished_at, j.retry_backoff_ms,
       a.retry_after_ms, r.job_id, j.retry_backoff_max, j.retry_budget_percent, j.retry_budget_window, a.error
FROM job_run r JOIN slot_attempt a ON a.run_id = r.id JOIN job j ON j.id = r.job_id
WHERE r.job_id = ? AND r.status = 'running' AND a.current = 1 AND a.status = 'failed' AND a.failures < j.retry_max
  AND a.error_class <> 'permanent' AND a.no_retry = 0
ORDER BY a.id LIMIT 1;

-- name: BreakerHeldUnplaced :one
-- in: job_id int64
-- out: id int64
-- The oldest unplaced attempt of the job (a retry made before the breaker
-- opened, a slot moved off a lost executor, a probe run's slot).
SELECT a.id FROM job_run r JOIN slot_attempt a ON a.run_id = r.id
WHERE r.job_id = ? AND r.status = 'running' AND a.current = 1 AND a.status = 'assigned' AND a.executor_id IS NULL
ORDER BY a.id LIMIT 1;

-- name: BreakerHeldRun :one
-- in: job_id int64, scheduled_at int64
-- out: id int64, slot_count int
-- The oldest due pending run of the job (the breaker holds it).
SELECT id, slot_count FROM job_run
WHERE job_id = ? AND status = 'pending' AND scheduled_at <= ?
ORDER BY scheduled_at, id LIMIT 1;

-- name: RetryBudgetUse :one
-- in: dispatched_at int64, finished_at int64, job_id int64, scheduled_at int64
-- out: firsts int, retries int
-- A job's first attempts dispatched since ? and its failed attempts retried
-- (superseded by a retry) that finished since ?, over its runs scheduled
-- since ? (the window and a day before it: uk_run's job_id prefix).
SELECT COALESCE(SUM(CASE WHEN a.attempt = 1 AND a.dispatched_at >= ? THEN 1 ELSE 0 END), 0) AS firsts,
       COALESCE(SUM(CASE WHEN a.status = 'failed' AND a.current = 0 AND a.finished_at >= ? THEN 1 ELSE 0 END), 0) AS retries
FROM job_run r JOIN slot_attempt a ON a.run_id = r.id
WHERE r.job_id = ? AND r.scheduled_at >= ?;

-- name: AttemptDenyRetry :exec
-- in: error_msg msg.Msg, id int64
-- A failed slot its retry budget does not let retry: it is final.
UPDATE slot_attempt SET no_retry = 1, error_msg = ?
WHERE id = ? AND current = 1 AND status = 'failed' AND no_retry = 0;
