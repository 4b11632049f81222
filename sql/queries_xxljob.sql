-- Named queries of XXL-JOB executor support (admin/xxljob, admin/store/xxljob.go).
-- Same macros as queries.sql.

-- name: XXLExecutorRefresh :exec
-- in: address string, capacity int, version string, instance_id string, app string
-- A registration (every ~30 s) or an answered beat of an XXL-JOB executor:
-- it is online again, as a shardjob heartbeat would make it.
UPDATE executor SET address = ?, capacity = ?, version = ?, handlers = '', state = 'online', protocol = 'xxljob',
                    last_heartbeat = {{now_ms}}
WHERE instance_id = ? AND app = ?;

-- name: XXLExecutorInsert :exec
-- in: instance_id string, app string, address string, capacity int, version string
INSERT INTO executor (instance_id, app, address, capacity, version, handlers, state, registered_at, last_heartbeat, protocol)
VALUES (?, ?, ?, ?, ?, '', 'online', {{now_ms}}, {{now_ms}}, 'xxljob');

-- name: XXLExecutorBeat :exec
-- in: id int64
-- The admin probed the executor and it answered: a heartbeat on its behalf.
-- A lost or removed executor comes back only by registering again.
UPDATE executor SET last_heartbeat = {{now_ms}}
WHERE id = ? AND protocol = 'xxljob' AND state IN ('online', 'draining');

-- name: XXLExecutorsLive :many
-- out: Executor
SELECT id, instance_id, app, address, capacity, speed, version, handlers, state, registered_at, last_heartbeat
FROM executor WHERE protocol = 'xxljob' AND state IN ('online', 'draining') ORDER BY id;

-- name: ExecutorProtocolByAddress :one
-- in: address string
-- out: ExecutorRef
-- The protocol (and version: for XXL-JOB executors, the protocol generation)
-- of the executor listening at an address (the newest row if the address
-- was reused).
SELECT id, app, protocol, version FROM executor WHERE address = ? ORDER BY last_heartbeat DESC, id DESC LIMIT 1;

-- name: ExecutorsLiveAtAddress :many
-- in: address string, address_slash string, instance_id string, max_age_ms int64
-- out: ExecutorRef
-- The live executors (online or draining, heard from within ? ms) at an
-- address, written with and without a trailing slash, other than one
-- instance: an address belongs to one executor identity at a time.
SELECT id, app, protocol FROM executor
WHERE address IN (?, ?) AND instance_id <> ? AND state IN ('online', 'draining')
  AND last_heartbeat >= {{now_ms}} - ?
ORDER BY id;

-- name: XXLUnackedStale :many
-- in: executor_id int64, older_than_ms int64, limit int
-- out: DispatchSlot
-- Current attempts placed on an XXL-JOB executor whose run call was never
-- accepted, placed more than ? ms ago: the prober pushes them again (XXL-JOB
-- executors have no heartbeat response that would carry them).
SELECT a.id AS token, a.run_id, a.slot, a.attempt, r.job_id, j.name AS job_name, j.handler, r.scheduled_at,
       COALESCE(o.params, r.params) AS params, r.slot_count, j.timeout_ms, j.slot_params, r.time_zone, r.dedup_scope, r.uncertain_policy,
       r.record_max_attempts, r.workflow, a.executor_id, a.failures
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
LEFT JOIN slot_replay_params o ON o.run_id = a.run_id AND o.slot = a.slot
WHERE a.unacked = 1 AND a.executor_id = ? AND a.current = 1 AND a.acked = 0 AND a.status = 'assigned'
  AND a.dispatched_at < {{now_ms}} - ?
ORDER BY a.id LIMIT ?;

-- name: XXLAttemptsOverdue :many
-- in: default_timeout_ms int64, grace_ms int64, limit int
-- out: OverdueAttempt
-- Running attempts on XXL-JOB executors whose callback is overdue: their
-- result is lost. An executor runs the runs of one XXL-JOB job id (one slot
-- of a job, xxljob.SlotJobID) one after the other (SERIAL_EXECUTION), so an
-- attempt's time starts when it was accepted or when an earlier attempt of
-- the same slot on the same executor last finished, whichever is later, and
-- it may wait for the attempts still ahead of it: overdue after queue_pos ×
-- the job's timeout (the default ? when the job has none) plus a grace ?.
-- {{join_in_order}} throughout: from the XXL-JOB executors (none: nothing
-- read), never from the jobs or runs, whatever the statistics say.
SELECT token, executor_id, run_id, slot, timeout_ms FROM (
  SELECT a.id AS token, a.executor_id, a.run_id, a.slot, j.timeout_ms,
         COALESCE(a.started_at, a.dispatched_at) AS accepted_at,
         (SELECT COUNT(*) FROM slot_attempt b JOIN job_run rb ON rb.id = b.run_id
          WHERE b.executor_id = a.executor_id AND b.live = 1 AND b.current = 1 AND b.status = 'running'
            AND rb.job_id = r.job_id AND b.slot = a.slot AND b.id <= a.id) AS queue_pos,
         (SELECT MAX(b.finished_at) FROM slot_attempt b JOIN job_run rb ON rb.id = b.run_id
          WHERE b.executor_id = a.executor_id AND rb.job_id = r.job_id AND b.slot = a.slot AND b.id < a.id
            AND b.finished_at >= COALESCE(a.started_at, a.dispatched_at)) AS freed_at
  FROM executor e {{join_in_order}} slot_attempt a ON a.executor_id = e.id AND a.live = 1
       {{join_in_order}} job_run r ON r.id = a.run_id {{join_in_order}} job j ON j.id = r.job_id
  WHERE e.protocol = 'xxljob' AND a.current = 1 AND a.status = 'running'
) x
WHERE CASE WHEN freed_at > accepted_at THEN freed_at ELSE accepted_at END
      < {{now_ms}} - queue_pos * (CASE WHEN timeout_ms > 0 THEN timeout_ms ELSE ? END) - ?
ORDER BY token LIMIT ?;

-- name: XXLAttemptByToken :one
-- in: id int64
-- out: TokenInfo
-- An attempt with what a callback, log or kill needs about it.
SELECT a.id AS token, a.run_id, a.slot, a.status, a.current, COALESCE(a.executor_id, 0) AS executor_id,
       a.started_at, COALESCE(a.dispatched_at, 0) AS dispatched_at, r.job_id, r.scheduled_at, COALESCE(e.app, '') AS app, COALESCE(e.address, '') AS address,
       COALESCE(e.protocol, '') AS protocol, COALESCE(e.version, '') AS version, COALESCE(j.timeout_ms, 0) AS timeout_ms
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id LEFT JOIN executor e ON e.id = a.executor_id
     LEFT JOIN job j ON j.id = r.job_id
WHERE a.id = ?;

-- name: XXLSlotsOfTokens :many
-- in: ids []int64
-- out: JobSlot
-- The job slots of attempts (a kill names an XXL-JOB job id, one per slot).
SELECT DISTINCT r.job_id, a.slot FROM slot_attempt a JOIN job_run r ON r.id = a.run_id WHERE a.id IN (?)
ORDER BY r.job_id, a.slot;

-- name: XXLClaimRedispatch :exec
-- in: id int64, executor_id int64, older_than_ms int64
-- One replica claims an unaccepted attempt for pushing it again (the others
-- see a fresh dispatched_at and leave it).
UPDATE slot_attempt SET dispatched_at = {{now_ms}}
WHERE id = ? AND executor_id = ? AND current = 1 AND acked = 0 AND status = 'assigned' AND dispatched_at < {{now_ms}} - ?;

-- name: XXLHandlerTurns :many
-- in: executor_id int64
-- out: handler string, token int64
-- Whose turn it is on an XXL-JOB executor that runs one task per handler
-- (xxl-job-executor-go keeps one task object per handler name): for each
-- handler, the smallest token of its unfinished attempts placed there. Only
-- that attempt may be sent; the others wait in the admin (xxljob.Router).
SELECT j.handler, MIN(a.id) AS token
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status IN ('assigned', 'running')
GROUP BY j.handler;

-- name: XXLRunningSince :many
-- in: executor_id int64, older_than_ms int64, limit int
-- out: RunningAttempt
-- Running attempts on an XXL-JOB executor accepted more than ? ms ago: the
-- prober asks the executor (idleBeat of the slot's job id) whether it still
-- has them.
SELECT a.id AS token, a.run_id, a.slot, r.job_id, j.handler
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status = 'running'
  AND COALESCE(a.started_at, a.dispatched_at) < {{now_ms}} - ?
ORDER BY a.id LIMIT ?;

-- name: XXLAttemptRunningLocked :one
-- in: id int64, executor_id int64
-- out: Attempt
-- A running attempt of an executor, locked to lose it (XXLLoseIdle).
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM slot_attempt a
WHERE a.id = ? AND a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status = 'running' {{for_update}};

-- name: XXLAttemptLose :exec
-- in: error string, error_msg msg.Msg, id int64
-- An attempt its XXL-JOB executor says it no longer has: superseded as
-- lost, with the reason.
UPDATE slot_attempt SET current = 0, status = 'lost', error_class = 'lost', finished_at = {{now_ms}}, error = ?, error_msg = ?
WHERE id = ? AND current = 1 AND status = 'running';
