-- Named queries of the platform store, shared by both dialects.
--
-- Each query starts with a line "-- name: Name" ("-- name: Name.mysql",
-- "-- name: Name.postgres" and "-- name: Name.sqlite" give a dialect its own
-- text; see sql/namedsql) and
-- is run by the constant qName of admin/store/queries_gen.go (go generate).
-- Fragments ("-- fragment: Name": a column list written once, such as
-- JobDefinition) are replaced by sql/namedsql: {{Name}} by the list,
-- {{named(Name)}} by ":c1, :c2, …" and {{assign(Name)}} by
-- "c1 = :c1, c2 = :c2, …" (a query with ":name" parameters binds a struct by
-- its db tags: the store runs it as a sqlx named query).
-- Macros in double braces are replaced per dialect when the file is loaded
-- (MySQL / PostgreSQL / SQLite):
--   {{now_ms}}                 the database clock in Unix milliseconds
--   {{insert_ignore}}          INSERT IGNORE / INSERT … ON CONFLICT DO NOTHING / INSERT OR IGNORE
--   {{for_update_skip_locked}} FOR UPDATE SKIP LOCKED / the same / nothing (SQLite: one writer)
--   {{for_update}}             FOR UPDATE / FOR UPDATE / nothing
--   {{lock_shared}}            LOCK IN SHARE MODE / FOR SHARE / nothing
--   {{force_primary}}          FORCE INDEX (PRIMARY) / nothing / nothing: rows in primary-key order
--   {{join_in_order}}          STRAIGHT_JOIN / JOIN / CROSS JOIN: the left table stays the outer one on
--                              MySQL and SQLite, whatever their statistics say
--   {{upsert(k1, k2)}}         ON DUPLICATE KEY UPDATE / ON CONFLICT(k1, k2) DO UPDATE SET (both)
--   {{excluded(col)}}          the value an upsert tried to insert: VALUES(col) / excluded.col (both)
--                              (an upsert's assignments name the table's own columns with the
--                              table's name: PostgreSQL finds a bare name ambiguous)
--   {{force_index(idx)}}       FORCE INDEX (idx) / nothing / nothing: a long IN list (over 200
--                              values) is costed from statistics that lag behind a herd
--   {{returning_id}}           nothing / RETURNING id / nothing: ends an insert whose
--                              LastInsertId the store reads (admin/store/postgres.go)
-- Statements are written with "?" placeholders on every dialect; the
-- PostgreSQL connection numbers them ($1, $2, …).
-- The VALUES tuple of an insert can be expanded to a multi-row insert by the
-- store (text after the tuple, such as an upsert's assignments, stays last).
-- A "set by id" update (AttemptsFinish) is expanded by the store: each
-- "CASE id WHEN ? THEN ? END" to one arm per row, "id IN (?)" to the ids.
-- {{filters}} is filled in per call with the optional conditions of a list
-- (RunList; see filters in admin/store).
-- "COALESCE(?, {{now_ms}})" lets tests pass a fixed "now" while production
-- passes NULL and uses the database clock.
-- An instant that another process compares (heartbeats, leases, sessions) is
-- written from {{now_ms}}, a lease as "{{now_ms}} + ?" with its length as the
-- parameter, never as an instant of the caller's clock (docs/architecture.md,
-- "Clocks").

-- name: DBNow :one
-- out: now_ms int64
SELECT {{now_ms}};

-- name: LeaderGet :one
-- out: LeaderRecord
SELECT epoch, holder, since_ms FROM leader WHERE id = 1;

-- name: LeaderGetShared :one
-- out: epoch int64
SELECT epoch FROM leader WHERE id = 1 {{lock_shared}};

-- name: LeaderClaim :exec
-- in: epoch int64, holder string, epoch int64
UPDATE leader SET epoch = ?, holder = ?, since_ms = {{now_ms}} WHERE id = 1 AND epoch < ?;

-- name: UserCount :one
-- out: n int
SELECT COUNT(*) FROM app_user;

-- name: UserInsert :lastid
-- in: username string, password_hash string, role string
INSERT INTO app_user (username, password_hash, role, created_at) VALUES (?, ?, ?, {{now_ms}}) {{returning_id}};

-- name: UserByName :one
-- in: username string
-- out: User
SELECT id, username, password_hash, role, apps, created_at, source, COALESCE(subject, '') AS subject, email, checked_at, recheck_at, refused FROM app_user WHERE username = ?;

-- name: UserByID :one
-- in: id int64
-- out: User
SELECT id, username, password_hash, role, apps, created_at, source, COALESCE(subject, '') AS subject, email, checked_at, recheck_at, refused FROM app_user WHERE id = ?;

-- name: SessionInsert :exec
-- in: token_hash string, user_id int64, expires_after_ms int64
INSERT INTO user_session (token_hash, user_id, expires_at) VALUES (?, ?, {{now_ms}} + ?);

-- name: SessionGet :one
-- in: token_hash string
-- out: user_id int64
SELECT user_id FROM user_session WHERE token_hash = ? AND expires_at > {{now_ms}};

-- name: SessionDelete :exec
-- in: token_hash string
DELETE FROM user_session WHERE token_hash = ?;

-- name: SessionPurge :exec
DELETE FROM user_session WHERE expires_at <= {{now_ms}};

-- name: AuditInsert :exec
-- in: actor string, action string, object string, detail string, app string, owner_id int64, token_id sql.NullInt64
INSERT INTO audit_log (at, actor, action, object, detail, app, owner_id, token_id) VALUES ({{now_ms}}, ?, ?, ?, ?, ?, ?, ?);

-- fragment: JobDefinition
-- The columns of a job's definition, the fields of store.Job that CreateJob
-- and UpdateJob write by name (db tags): a new setting of a job is added
-- here, and every job query below has it.
description, handler, cron_expr, time_zone, time_zones, misfire_policy, overlap_policy, misfire_threshold_ms, max_catch_up,
slot_count, slot_params, params, timeout_ms, retry_max, retry_backoff_ms, dedup_scope, uncertain_policy,
record_max_attempts, start_deadline, finish_deadline, deadline_action, calendar_id, calendar_rule, calendar_shift,
start_at, end_at, max_runs, completed_at, completed_msg, jitter_window, wait_for, wait_timeout, on_timeout, enabled, child_job_ids,
max_running_slots, priority, retry_backoff_max, retry_budget_percent, retry_budget_window, breaker_threshold, breaker_cooldown;

-- fragment: JobColumns
-- Every column of job, as store.Job reads them.
id, app, name, {{JobDefinition}}, paused, pause_until, next_fire_at, created_at, updated_at, version, workflow_id;

-- name: JobInsert :lastid
-- in: Job
-- created_at 0: the database clock (the @every anchor of a new job).
-- workflow_id: the workflow that owns the job (an inline node's), NULL for
-- an ordinary job.
INSERT INTO job (app, name, {{JobDefinition}}, paused, next_fire_at, created_at, updated_at, version, workflow_id)
VALUES (:app, :name, {{named(JobDefinition)}}, 0, :next_fire_at, COALESCE(NULLIF(:created_at, 0), {{now_ms}}), {{now_ms}}, 1, :workflow_id) {{returning_id}};

-- name: JobByID :one
-- in: id int64
-- out: Job
SELECT {{JobColumns}} FROM job WHERE id = ?;

-- name: JobList :many
-- in: id int64, limit int
-- out: Job
-- The ordinary jobs: not those of workflows' inline nodes.
SELECT {{JobColumns}} FROM job WHERE id > ? AND workflow_id IS NULL ORDER BY id LIMIT ?;

-- name: JobListOfApps :many
-- in: id int64, apps []string, limit int
-- out: Job
-- JobList limited to the jobs of some apps.
SELECT {{JobColumns}} FROM job WHERE id > ? AND app IN (?) AND workflow_id IS NULL ORDER BY id LIMIT ?;

-- name: RunResults :many
-- in: run_ids []int64
-- out: run_id int64, slot int, result string, slot_count int
-- The results of the succeeded current attempts of some runs, with the
-- slot count of their run (RunResults composes a run's result).
SELECT a.run_id, a.slot, a.result, r.slot_count FROM slot_attempt a JOIN job_run r ON r.id = a.run_id
WHERE a.run_id IN (?) AND a.current = 1 AND a.status = 'succeeded' AND a.result IS NOT NULL
ORDER BY a.run_id, a.slot;

-- name: JobsSetNextFire :exec
-- in: next_fire_at sql.NullInt64, ids []int64
-- SetNextFire: jobs that share their next firing.
UPDATE job SET next_fire_at = ? WHERE id IN (?);

-- name: JobsSetNextFireByID
-- SetNextFire: the other jobs, each its own value ("set by key" update).
UPDATE job SET next_fire_at = CASE id WHEN ? THEN ? END WHERE id IN (?);

-- name: JobSetEnabled :exec
-- in: enabled bool, next_fire_at sql.NullInt64, id int64
UPDATE job SET enabled = ?, next_fire_at = ?, updated_at = {{now_ms}}, version = version + 1 WHERE id = ?;

-- name: JobUpdate :exec
-- in: Job
UPDATE job SET {{assign(JobDefinition)}}, next_fire_at = :next_fire_at, updated_at = {{now_ms}}, version = version + 1
WHERE id = :id AND version = :version;

-- name: JobReplan :exec
-- in: next_fire_at sql.NullInt64, id int64, old_next_fire_at sql.NullInt64
-- A job's next firing planned again after an edit of its calendar, if the
-- leader has not moved it since it was read (not a change of the job: its
-- version stays).
UPDATE job SET next_fire_at = ? WHERE id = ? AND next_fire_at = ?;

-- name: JobsMaxRunsReached :many
-- in: ids []int64
-- out: JobMaxRuns
-- Of the jobs of an IN list, those with max_runs not completed yet, with
-- their scheduled runs (cron, catch_up) that succeeded (as
-- RunCountsForMaxRuns counts them): a results batch completes those that
-- reached it.
SELECT j.id, j.max_runs,
       (SELECT COUNT(*) FROM job_run r WHERE r.job_id = j.id AND r.trigger_kind IN ('cron', 'catch_up') AND r.status = 'succeeded') AS succeeded
FROM job j WHERE j.id IN (?) AND j.max_runs > 0 AND j.completed_at IS NULL ORDER BY j.id;

-- name: JobCompleteIfOpen :exec
-- in: completed_msg string, id int64
-- JobComplete for a job not completed yet (two results batches may find
-- the same job complete; the first one records it).
UPDATE job SET completed_at = {{now_ms}}, completed_msg = ?, next_fire_at = NULL WHERE id = ? AND completed_at IS NULL;

-- name: JobComplete :exec
-- in: completed_msg any, id int64
-- The leader found that the job will not fire again (its window, max_runs,
-- or a one-time schedule): not an edit, the version stays.
UPDATE job SET completed_at = {{now_ms}}, completed_msg = ?, next_fire_at = NULL WHERE id = ?;

-- name: JobSetPaused :exec
-- in: paused bool, next_fire_at sql.NullInt64, id int64
-- Pause (without end) or resume by hand: no pause_until.
UPDATE job SET paused = ?, pause_until = NULL, next_fire_at = ?, updated_at = {{now_ms}}, version = version + 1 WHERE id = ?;

-- name: JobPauseUntil :exec
-- in: pause_until int64, next_fire_at sql.NullInt64, id int64
-- A pause that ends by itself at pause_until; next_fire_at stays the first
-- firing after the pause began, so the misfire policy decides the missed
-- firings when the leader resumes the job (JobsResumeDue).
UPDATE job SET paused = 1, pause_until = ?, next_fire_at = ?, updated_at = {{now_ms}}, version = version + 1 WHERE id = ?;

-- name: JobsResumeDue :exec
-- in: pause_until int64
-- The leader resumes the jobs whose pause_until has come (a range of
-- idx_job_pause_until: pause_until is NULL unless a job is paused until).
UPDATE job SET paused = 0, pause_until = NULL, updated_at = {{now_ms}}, version = version + 1 WHERE pause_until <= ?;

-- name: JobNextPauseEnd :one
-- out: pause_until sql.NullInt64
SELECT MIN(pause_until) FROM job;

-- name: JobChildren :many
-- in: ids []int64
-- out: id int64, child_job_ids string
-- The child jobs of some jobs (ChildGraphFrom walks the graph from the
-- children of an edited job, one level a query, by primary key).
SELECT id, child_job_ids FROM job WHERE id IN (?) AND child_job_ids <> '';

-- name: JobsOfHandler :many
-- in: handler string, id int64, limit int
-- out: Job
-- The ordinary jobs of one handler, after id ?, by id (idx_job_handler):
-- the watchdog's hourly check of the dedup-archive jobs.
SELECT {{JobColumns}} FROM job WHERE handler = ? AND id > ? AND workflow_id IS NULL ORDER BY id LIMIT ?;

-- name: AppJobCountAdd :exec
-- in: id int64
-- The new job ? counted in its app's app_job_count row (migration 0033),
-- in CreateJob's transaction; a workflow's inline job is not counted.
INSERT INTO app_job_count (app, jobs) SELECT app, 1 FROM job WHERE id = ? AND workflow_id IS NULL
{{upsert(app)}} jobs = app_job_count.jobs + 1;

-- name: AppJobCountRemove :exec
-- in: id int64
-- The job ? taken off its app's count, in DeleteJob's transaction before
-- the job is deleted.
UPDATE app_job_count SET jobs = jobs - 1 WHERE app = (SELECT app FROM job WHERE id = ? AND workflow_id IS NULL);

-- name: AppJobCounts :many
-- out: AppJobCount
-- The number of ordinary jobs of every app that has one (GET
-- /api/v1/apps): one row per app, kept by CreateJob and DeleteJob.
SELECT app, jobs FROM app_job_count WHERE jobs > 0 ORDER BY app;

-- name: JobExists :one
-- in: id int64
-- out: n int
SELECT COUNT(*) FROM job WHERE id = ?;

-- name: JobDelete :exec
-- in: id int64
DELETE FROM job WHERE id = ?;

-- name: RunsCancelPendingOfJob :exec
-- in: error string, error_msg any, job_id int64
-- DeleteJob: the job's pending runs end with it (idx_run_job_status).
UPDATE job_run SET status = 'cancelled', finished_at = {{now_ms}}, error = ?, error_msg = ?
WHERE job_id = ? AND status = 'pending';

-- name: RunRunningOfJob :one
-- in: job_id int64
-- out: n int
-- DeleteJob: the job's running runs, read after its pending ones were
-- cancelled in the same transaction.
SELECT COUNT(*) FROM job_run WHERE job_id = ? AND status = 'running';

-- name: JobClaimDue :many
-- in: next_fire_at int64, limit int
-- out: Job
SELECT {{JobColumns}}
FROM job
WHERE enabled = 1 AND paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
ORDER BY next_fire_at, id
LIMIT ? {{for_update_skip_locked}};

-- name: JobNextDue :one
-- out: next_fire_at sql.NullInt64
-- idx_job_due (enabled, paused, next_fire_at), migration 0033: the first
-- entry of the range, not every enabled job (a plain MIN() over the range
-- read all of it on MariaDB 10.11: ORDER BY … LIMIT 1 stops at the first).
SELECT MIN(t) FROM (SELECT next_fire_at AS t FROM job WHERE enabled = 1 AND paused = 0 AND next_fire_at IS NOT NULL
                    ORDER BY next_fire_at LIMIT 1) d;

-- name: JobCountDue :one
-- in: next_fire_at int64, limit int
-- out: n int
-- Counts up to the limit only: the pre-read window needs no more (at a
-- million jobs the whole count read 100,000 entries a second, a tenth of
-- the database's time in bench-scale).
SELECT COUNT(*) FROM (SELECT 1 FROM job WHERE enabled = 1 AND paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
                      LIMIT ?) d;

-- name: RunInsert :execrows
-- in: job_id int64, scheduled_at int64, trigger_kind string, status string, params string, slot_count int, epoch int64, error string, error_msg msg.Msg, parent_run_id sql.NullInt64, status string, time_zone string, dedup_scope string, uncertain_policy string, record_max_attempts int, app string, start_deadline_at sql.NullInt64, finish_deadline_at sql.NullInt64, deadline_action string, deadline_check_at sql.NullInt64, calendar_id int64, calendar_version string, shifted_from sql.NullInt64, start_after int64, backfill_id int64, workflow sql.NullString, job_name string, priority sql.NullInt64
-- The run keeps its job's time zone, records policy, app and name, deadlines (as
-- instants) and calendar (id and version) as they are now (see migrations
-- 0008, 0010, 0020, 0021 and 0030), from the
-- job row the caller read (scalar subqueries per row made firing 5x slower,
-- and an eighth of a herd's database time): run lists filtered by app use an
-- index. backfill_id is the job backfill that creates the run (0: none);
-- workflow the workflow context of a workflow node's run (NULL: none,
-- migration 0032).
{{insert_ignore}} INTO job_run (job_id, scheduled_at, trigger_kind, status, params, slot_count, epoch, error, error_msg,
                                parent_run_id, created_at, finished_at,
                                time_zone, dedup_scope, uncertain_policy, record_max_attempts, app,
                                start_deadline_at, finish_deadline_at, deadline_action, deadline_check_at,
                                calendar_id, calendar_version, shifted_from, start_after, backfill_id, workflow, job_name, priority)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {{now_ms}}, CASE WHEN ? = 'skipped' THEN {{now_ms}} ELSE NULL END,
        ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) {{returning_id}};

-- name: JobApps :many
-- in: ids []int64
-- out: JobKey
SELECT id, app, name FROM job WHERE id IN (?);

-- first_started_at: when the run's first slot started on an executor
-- (what users feel), not when the run was assigned (started_at).
-- name: RunByID :one
-- in: id int64
-- out: Run
SELECT r.id, r.job_id, COALESCE(NULLIF(r.job_name, ''), j.name, '') AS job_name, COALESCE(NULLIF(r.app, ''), j.app, '') AS app, r.scheduled_at, r.trigger_kind, r.status, r.params, r.slot_count,
       r.slots_succeeded, r.slots_failed, r.epoch, r.created_at, r.started_at, r.finished_at, r.error, r.error_msg, r.parent_run_id,
       r.predicted_ms, (SELECT MIN(a.started_at) FROM slot_attempt a WHERE a.run_id = r.id) AS first_started_at,
       r.start_deadline_at, r.finish_deadline_at, r.deadline_action, r.calendar_id, r.calendar_version, r.shifted_from, r.time_zone, r.start_after,
       r.workflow, CASE WHEN j.id IS NULL THEN 1 ELSE 0 END AS job_deleted
FROM job_run r LEFT JOIN job j ON j.id = r.job_id WHERE r.id = ?;

-- name: RunScheduledAt :one
-- in: id int64
-- out: scheduled_at int64
-- ListRuns: the keyset cursor's scheduled time.
SELECT scheduled_at FROM job_run WHERE id = ?;

-- name: RunList
-- ListRuns, latest scheduled first (ties by id): {{filters}} is "WHERE" and
-- the conditions of the filter that are set, or nothing (see filters in
-- admin/store/runs.go). Indexes give each filter's order: idx_run_sched_id,
-- uk_run_key (job), idx_run_status (status), idx_run_app_sched (app).
SELECT r.id, r.job_id, COALESCE(NULLIF(r.job_name, ''), j.name, '') AS job_name, COALESCE(NULLIF(r.app, ''), j.app, '') AS app, r.scheduled_at, r.trigger_kind, r.status, r.params, r.slot_count,
       r.slots_succeeded, r.slots_failed, r.epoch, r.created_at, r.started_at, r.finished_at, r.error, r.error_msg, r.parent_run_id,
       r.predicted_ms, (SELECT MIN(a.started_at) FROM slot_attempt a WHERE a.run_id = r.id) AS first_started_at,
       r.start_deadline_at, r.finish_deadline_at, r.deadline_action, r.calendar_id, r.calendar_version, r.shifted_from, r.time_zone, r.start_after,
       CASE WHEN j.id IS NULL THEN 1 ELSE 0 END AS job_deleted
FROM job_run r LEFT JOIN job j ON j.id = r.job_id {{filters}} ORDER BY r.scheduled_at DESC, r.id DESC LIMIT ?;

-- name: RunReopen :exec
-- in: started_at int64, id int64, status string
-- RetryRun: the run, if it is in the given finished status, runs again.
UPDATE job_run SET status = 'running', finished_at = NULL, error = '', error_msg = '', started_at = COALESCE(started_at, ?)
WHERE id = ? AND status = ?;

-- name: RunByKey :one
-- in: job_id int64, scheduled_at int64
-- out: Run
SELECT r.id, r.job_id, COALESCE(NULLIF(r.job_name, ''), j.name, '') AS job_name, COALESCE(NULLIF(r.app, ''), j.app, '') AS app, r.scheduled_at, r.trigger_kind, r.status, r.params, r.slot_count,
       r.slots_succeeded, r.slots_failed, r.epoch, r.created_at, r.started_at, r.finished_at, r.error, r.error_msg, r.parent_run_id,
       r.predicted_ms, r.start_deadline_at, r.finish_deadline_at, r.deadline_action, r.calendar_id, r.calendar_version, r.shifted_from, r.time_zone, r.start_after,
       CASE WHEN j.id IS NULL THEN 1 ELSE 0 END AS job_deleted
FROM job_run r LEFT JOIN job j ON j.id = r.job_id WHERE r.job_id = ? AND r.scheduled_at = ?;

-- name: RunIDByKey :one
-- in: job_id int64, scheduled_at int64
-- out: id int64
-- The id of the run of a run key (uk_run_key): RunInsert, a multi-row
-- insert, gives the rows it inserted, not their ids.
SELECT id FROM job_run WHERE job_id = ? AND scheduled_at = ?;

-- name: RunNextPending :one
-- in: after int64, after int64, after int64
-- out: t sql.NullInt64
-- The next instant a pending run becomes due: its scheduled time (a run
-- created ahead of time), its start_after (a jittered run) or its
-- held_until (a held run: waits not met, a backfill's turn), after ?
-- (idx_run_status; idx_run_start_after and idx_run_held_until, which do
-- not hold the status since migration 0050: they are read in order up to
-- the first pending run, past the few ended runs with a future value).
SELECT MIN(t) FROM (SELECT (SELECT MIN(scheduled_at) FROM job_run WHERE status = 'pending' AND scheduled_at > ?) AS t
                    UNION ALL
                    SELECT (SELECT start_after FROM job_run WHERE start_after > ? AND status = 'pending' ORDER BY start_after LIMIT 1) AS t
                    UNION ALL
                    SELECT (SELECT held_until FROM job_run WHERE held_until > ? AND status = 'pending' ORDER BY held_until LIMIT 1) AS t) d;

-- name: RunRunningIDsOfJob :many
-- in: job_id int64, limit int
-- out: id int64
-- The start round's overlap check of a queue or replace job: the ids of
-- its running runs, in no order (idx_run_job_status: only those runs).
SELECT id FROM job_run WHERE job_id = ? AND status = 'running' LIMIT ?;

-- name: RunActiveForJob :one
-- in: job_id int64
-- out: n int
SELECT COUNT(*) FROM job_run WHERE job_id = ? AND status IN ('pending', 'running');

-- name: RunTransition :exec
-- in: status string, started_at sql.NullInt64, finished_at sql.NullInt64, error string, error_msg string, id int64, from_status string
UPDATE job_run SET status = ?, started_at = COALESCE(started_at, ?), finished_at = ?, error = ?, error_msg = ?
WHERE id = ? AND status = ?;

-- name: RunsSettle
-- Untyped: a "set by id" update, its CASE arms and IN list sized at run
-- time by the store (execByKey).
-- Set by id (see AttemptsFinish): the slot counters of every run of a
-- results batch; status, finished_at and error of those that end (NULL:
-- unchanged).
UPDATE job_run
SET slots_succeeded = CASE id WHEN ? THEN ? END,
    slots_failed = CASE id WHEN ? THEN ? END,
    finished_at = COALESCE(CASE id WHEN ? THEN ? END, finished_at),
    error = COALESCE(CASE id WHEN ? THEN ? END, error),
    error_msg = COALESCE(CASE id WHEN ? THEN ? END, error_msg),
    status = COALESCE(CASE id WHEN ? THEN ? END, status)
WHERE id IN (?);

-- name: AttemptInsert :execrows
-- in: run_id int64, slot int, attempt int, executor_id int64, lease_ms int64
-- lease_until is the database clock plus the lease (milliseconds), like
-- every instant another process compares (docs/architecture.md, "Clocks").
INSERT INTO slot_attempt (run_id, slot, attempt, executor_id, status, current, dispatched_at, lease_until)
VALUES (?, ?, ?, ?, 'assigned', 1, {{now_ms}}, {{now_ms}} + ?);

-- Every attempt of a run, with its executor's instance id ('' when none).
-- name: AttemptsOfRun :many
-- in: run_id int64
-- out: Attempt
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures,
       a.error_msg, a.error_class, COALESCE(e.instance_id, '') AS executor_instance
FROM slot_attempt a LEFT JOIN executor e ON e.id = a.executor_id WHERE a.run_id = ? ORDER BY a.slot, a.attempt;

-- name: AttemptByID :one
-- in: id int64
-- out: Attempt
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM slot_attempt a WHERE a.id = ?;

-- name: DispatchUnacked :many
-- in: executor_id int64, limit int
-- out: DispatchSlot
SELECT a.id AS token, a.run_id, a.slot, a.attempt, r.job_id, j.name AS job_name, j.handler, r.scheduled_at,
       COALESCE(o.params, r.params) AS params, r.slot_count, j.timeout_ms, j.slot_params, r.time_zone, r.dedup_scope, r.uncertain_policy,
       r.record_max_attempts, r.workflow, COALESCE(r.priority, j.priority) AS priority
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
LEFT JOIN slot_replay_params o ON o.run_id = a.run_id AND o.slot = a.slot
WHERE a.unacked = 1 AND a.executor_id = ? AND a.current = 1 AND a.acked = 0 AND a.status IN ('assigned', 'running')
ORDER BY a.id LIMIT ?;

-- name: AttemptByIDForUpdate :one
-- in: id int64
-- out: Attempt
-- AttemptByID, the row locked until the end of the transaction.
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM slot_attempt a WHERE a.id = ? {{for_update}};

-- name: AttemptsLive :many
-- in: executor_id int64, ids []int64
-- out: id int64
SELECT a.id FROM slot_attempt a
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status IN ('assigned', 'running') AND a.id IN (?);

-- The heartbeat's updates of an executor's attempts go through the primary
-- key ({{force_primary}}), as results do: rows locked in id order, never in
-- the order of idx_attempt_executor (a deadlock with a results batch).
-- name: AttemptAck :exec
-- in: accept_seq int64, executor_id int64, ids []int64
-- The first acknowledgement fixes accept_seq, the executor's number of the
-- batch that accepted the token (NULL when the executor gives none).
UPDATE slot_attempt {{force_primary}} SET acked = 1, accept_seq = COALESCE(accept_seq, NULLIF(?, 0))
WHERE executor_id = ? AND current = 1 AND status IN ('assigned', 'running') AND id IN (?);

-- name: AttemptStarted :exec
-- in: accept_seq int64, executor_id int64, ids []int64
UPDATE slot_attempt {{force_primary}} SET acked = 1, accept_seq = COALESCE(accept_seq, NULLIF(?, 0)),
       status = 'running', started_at = COALESCE(started_at, {{now_ms}})
WHERE executor_id = ? AND current = 1 AND status IN ('assigned', 'running') AND id IN (?);

-- name: AttemptsAcceptedBy :many
-- in: executor_id int64, accept_seq int64
-- out: id int64
-- The current attempts an executor process acknowledged in its batch
-- accept_seq or earlier (reconciliation against its heartbeat).
SELECT a.id FROM slot_attempt a
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status IN ('assigned', 'running')
  AND a.acked = 1 AND a.accept_seq <= ?
ORDER BY a.id;

-- name: AttemptsAcceptedByLocked :many
-- in: executor_id int64, accept_seq int64, ids []int64
-- out: Attempt
-- The same, restricted to ids and locked in id order, to move them.
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM slot_attempt a
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status IN ('assigned', 'running')
  AND a.acked = 1 AND a.accept_seq <= ? AND a.id IN (?)
ORDER BY a.id {{for_update}};

-- name: AttemptsLockForFinish :many
-- in: ids []int64
-- out: AttemptState
-- The attempts of a results batch, locked in id order (one table only: a
-- join would lock job and executor rows too, and the leader's SKIP LOCKED
-- claim would skip those jobs).
SELECT id, run_id, status, current, executor_id FROM slot_attempt WHERE id IN (?) ORDER BY id {{for_update}};

-- name: AttemptsFinish
-- Untyped: a "set by id" update sized at run time (see below).
-- Set by id (the store expands each CASE to one arm per attempt and the IN
-- list to the ids): the outcomes of a results batch, locked and checked
-- before; the guard repeats the check.
UPDATE slot_attempt {{force_primary}}
SET status = CASE id WHEN ? THEN ? END,
    finished_at = CASE id WHEN ? THEN ? END,
    started_at = COALESCE(CASE id WHEN ? THEN ? END, started_at),
    processed = CASE id WHEN ? THEN ? END,
    skipped = CASE id WHEN ? THEN ? END,
    failed = CASE id WHEN ? THEN ? END,
    uncertain = CASE id WHEN ? THEN ? END,
    error = CASE id WHEN ? THEN ? END,
    error_msg = CASE id WHEN ? THEN ? END,
    result = CASE id WHEN ? THEN ? END,
    error_class = CASE id WHEN ? THEN ? END,
    retry_after_ms = CASE id WHEN ? THEN ? END
WHERE id IN (?) AND current = 1 AND status IN ('assigned', 'running');

-- name: AttemptSupersede :exec
-- in: status string, error_class string, id int64
-- status lost (error_class lost) or moved (error_class '').
UPDATE slot_attempt SET current = 0, status = ?, error_class = ?, finished_at = {{now_ms}}
WHERE id = ? AND current = 1 AND status IN ('assigned', 'running');

-- name: AttemptsOfLostExecutors :many
-- in: limit int
-- out: Attempt
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM executor e {{join_in_order}} slot_attempt a ON a.executor_id = e.id AND a.live = 1
WHERE a.current = 1 AND a.status IN ('assigned', 'running') AND e.state IN ('lost', 'gone')
ORDER BY a.id LIMIT ?;

-- name: RunsSlotCounts :many
-- in: run_ids []int64
-- out: SlotCounts
-- Per run (IN list), with its job's child jobs and max_runs and its trigger
-- (a succeeded scheduled run may complete its job): a failed attempt whose job allows another attempt
-- counts as active: the leader retries it after a backoff. failures counts
-- earlier failed attempts of the slot, so this one is failure number
-- failures+1. A permanent failure (error_class) has no retry left.
-- The attempts by uk_slot_attempt whatever the statistics say (a settle
-- batch's list of 256 runs is costed from them: during a herd they called
-- slot_attempt empty, and every batch read the whole table).
SELECT
  a.run_id,
  COALESCE(SUM(CASE WHEN a.status = 'succeeded' THEN 1 ELSE 0 END), 0) AS succeeded,
  COALESCE(SUM(CASE WHEN a.status = 'cancelled'
                      OR (a.status = 'failed' AND (a.failures >= COALESCE(j.retry_max, 0) OR a.error_class = 'permanent' OR a.no_retry = 1)) THEN 1 ELSE 0 END), 0) AS failed,
  COALESCE(SUM(CASE WHEN a.status IN ('assigned', 'running')
                      OR (a.status = 'failed' AND a.failures < COALESCE(j.retry_max, 0) AND a.error_class <> 'permanent' AND a.no_retry = 0) THEN 1 ELSE 0 END), 0) AS active,
  COALESCE(MAX(j.child_job_ids), '') AS child_job_ids,
  COALESCE(MAX(j.max_runs), 0) AS max_runs, MAX(r.trigger_kind) AS trigger_kind
FROM slot_attempt a {{force_index(uk_slot_attempt)}} JOIN job_run r ON r.id = a.run_id LEFT JOIN job j ON j.id = r.job_id
WHERE a.run_id IN (?) AND a.current = 1
GROUP BY a.run_id;

-- name: ExecutorUpsert :exec
-- in: instance_id string, app string, address string, capacity int, version string, handlers string, state string
INSERT INTO executor (instance_id, app, address, capacity, version, handlers, state, registered_at, last_heartbeat)
VALUES (?, ?, ?, ?, ?, ?, ?, {{now_ms}}, {{now_ms}});

-- name: ExecutorHeartbeat :exec
-- in: address string, capacity int, version string, handlers string, state string, instance_id string, app string
UPDATE executor SET address = ?, capacity = ?, version = ?, handlers = ?, state = ?, last_heartbeat = {{now_ms}}
WHERE instance_id = ? AND app = ?;

-- name: ExecutorByInstance :one
-- in: instance_id string
-- out: Executor
SELECT id, instance_id, app, address, capacity, speed, version, handlers, state, registered_at, last_heartbeat, drain_requested, protocol,
       incarnation
FROM executor WHERE instance_id = ?;

-- name: AttemptsUnacknowledged :many
-- in: older_than_ms int64, limit int
-- out: Unacknowledged
-- Attempts placed on an executor that has not acknowledged them for longer
-- than ? ms (database clock): pushed and delivered in heartbeats, refused
-- or never taken.
SELECT a.id AS token, a.executor_id, COALESCE(e.instance_id, '') AS instance_id
FROM slot_attempt a LEFT JOIN executor e ON e.id = a.executor_id
WHERE a.unacked = 1 AND a.status = 'assigned' AND a.current = 1 AND a.acked = 0 AND a.executor_id IS NOT NULL
  AND a.dispatched_at < {{now_ms}} - ?
ORDER BY a.id LIMIT ?;

-- name: ExecutorReincarnate :exec
-- in: incarnation string, id int64, previous string
-- Records the process behind an executor; the guard makes one heartbeat of
-- a restarted process (of several racing on different admins) the one that
-- deals with its predecessor's slots.
UPDATE executor SET incarnation = ? WHERE id = ? AND incarnation = ?;

-- name: AttemptsHeldBy :many
-- in: executor_id int64
-- out: Attempt
-- The current, unfinished attempts placed on an executor, locked in id order.
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM slot_attempt a
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status IN ('assigned', 'running')
ORDER BY a.id {{for_update}};

-- name: ExecutorByID :one
-- in: id int64
-- out: Executor
SELECT id, instance_id, app, address, capacity, speed, version, handlers, state, registered_at, last_heartbeat, drain_requested, protocol
FROM executor WHERE id = ?;

-- name: ExecutorList :many
-- out: Executor
SELECT id, instance_id, app, address, capacity, speed, version, handlers, state, registered_at, last_heartbeat, drain_requested, protocol
FROM executor ORDER BY app, id;

-- name: ExecutorsOnline :many
-- in: app string, max_age_ms int64
-- out: Executor
SELECT id, instance_id, app, address, capacity, speed, version, handlers, state, registered_at, last_heartbeat, drain_requested, protocol
FROM executor WHERE app = ? AND state = 'online' AND drain_requested = 0 AND last_heartbeat >= {{now_ms}} - ? ORDER BY id;

-- name: ExecutorSetDrain :exec
-- in: drain_requested bool, id int64
UPDATE executor SET drain_requested = ? WHERE id = ?;

-- name: ExecutorsDraining :many
-- out: Executor
SELECT id, instance_id, app, address, capacity, speed, version, handlers, state, registered_at, last_heartbeat, drain_requested, protocol
FROM executor WHERE drain_requested = 1 AND state IN ('online', 'draining') ORDER BY id;

-- name: ExecutorsSilent :many
-- in: max_age_ms int64
-- out: id int64, instance_id string, app string, last_heartbeat int64
SELECT id, instance_id, app, last_heartbeat FROM executor
WHERE state IN ('online', 'draining') AND last_heartbeat < {{now_ms}} - ?;

-- name: ExecutorMarkLost :exec
-- in: id int64, max_age_ms int64
UPDATE executor SET state = 'lost' WHERE id = ? AND state IN ('online', 'draining') AND last_heartbeat < {{now_ms}} - ?;

-- name: ExecutorsLostSince :many
-- in: max_age_ms int64
-- out: id int64
-- Lost executors silent for more than ? ms (database clock): a plain read,
-- so that the leader's rounds lock nothing when there are none.
SELECT id FROM executor WHERE state = 'lost' AND last_heartbeat < {{now_ms}} - ?;

-- name: ExecutorsForget :exec
-- in: max_age_ms int64, ids []int64
-- Marks lost executors (ids of ExecutorsLostSince, expanded by sqlx.In)
-- gone; the guard skips one that heartbeated or re-registered since.
UPDATE executor SET state = 'gone' WHERE state = 'lost' AND last_heartbeat < {{now_ms}} - ? AND id IN (?);

-- name: ExecutorDeregister :exec
-- in: instance_id string
UPDATE executor SET state = 'gone', last_heartbeat = {{now_ms}} WHERE instance_id = ?;

-- name: RunActiveJobs :many
-- in: job_ids []int64
-- out: job_id int64
SELECT DISTINCT job_id FROM job_run WHERE status IN ('pending', 'running') AND job_id IN (?);

-- name: RunCountsForMaxRuns :many
-- in: job_ids []int64
-- out: RunCounts
-- The scheduled runs (cron, catch_up) of jobs with max_runs that succeeded
-- and that are still pending or running.
SELECT job_id, SUM(CASE WHEN status = 'succeeded' THEN 1 ELSE 0 END) AS succeeded,
       SUM(CASE WHEN status IN ('pending', 'running') THEN 1 ELSE 0 END) AS active
FROM job_run WHERE job_id IN (?) AND trigger_kind IN ('cron', 'catch_up') GROUP BY job_id;

-- name: AttemptsCancelRun :exec
-- in: error string, error_msg string, run_id int64
UPDATE slot_attempt SET status = 'cancelled', error_class = 'cancelled', finished_at = {{now_ms}}, error = ?, error_msg = ?
WHERE run_id = ? AND current = 1 AND status IN ('assigned', 'running');

-- name: AttemptsActiveOfRun :many
-- in: run_id int64
-- out: ActiveToken
SELECT a.id AS token, e.address FROM slot_attempt a JOIN executor e ON e.id = a.executor_id
WHERE a.run_id = ? AND a.current = 1 AND a.status IN ('assigned', 'running');

-- An alarm joins its group (group_id); one the admin resolves at once (an
-- info alarm: ? = 1) is resolved and acknowledged by "shardjob" with the
-- reason in resolved_msg.
-- name: AlarmInsert :execrows
-- in: kind string, severity string, job_id sql.NullInt64, run_id sql.NullInt64, dedup_key string, message string, message_msg msg.Msg, raised_by string, app string, group_id int64, executor_id sql.NullInt64, resolved bool, resolved_by string, resolved bool, resolved_by string, resolved_msg msg.Msg
{{insert_ignore}} INTO alarm_event (at, kind, severity, job_id, run_id, dedup_key, message, message_msg, raised_by, app,
                                    group_id, executor_id, acked_at, acked_by, resolved_at, resolved_by, resolved_msg)
VALUES ({{now_ms}}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, CASE WHEN ? = 1 THEN {{now_ms}} END, ?, CASE WHEN ? = 1 THEN {{now_ms}} END, ?, ?);

-- A group of alarms (the alarms of a run, of a job within an hour, of a kind
-- and app within an hour): its key, created once whoever raises first.
-- name: AlarmEventGroupInsert :execrows
-- in: group_key string, scope string, app string
{{insert_ignore}} INTO alarm_event_group (group_key, scope, app, created_at) VALUES (?, ?, ?, {{now_ms}});

-- The current group of a scope: the newest one created after ?.
-- name: AlarmEventGroupOfScope :one
-- in: scope string, created_at int64
-- out: id int64
SELECT id FROM alarm_event_group WHERE scope = ? AND created_at > ? ORDER BY id DESC LIMIT 1;

-- name: AlarmEventGroupIDs :many
-- in: group_keys []string
-- out: id int64, group_key string
SELECT id, group_key FROM alarm_event_group WHERE group_key IN (?);

-- One page of the groups one reader may see, newest first: the groups with
-- a member that matches the filters (AlarmFilter in admin/store).
-- name: AlarmEventGroupPage
SELECT DISTINCT group_id FROM alarm_event {{filters}} ORDER BY group_id DESC LIMIT ?;

-- What a group is, from all its members: counts, first and last seen, the
-- worst severity (3 critical, 2 warning, 1 info).
-- name: AlarmEventGroupStats :many
-- in: group_ids []int64
-- out: group_id int64, n int, n_open int, n_unacked int, first_at int64, last_at int64, last_id int64, worst int
SELECT group_id, COUNT(*) AS n, SUM(CASE WHEN resolved_at IS NULL THEN 1 ELSE 0 END) AS n_open,
       SUM(CASE WHEN acked_at IS NULL AND resolved_at IS NULL THEN 1 ELSE 0 END) AS n_unacked,
       MIN(at) AS first_at, MAX(at) AS last_at, MAX(id) AS last_id,
       MAX(CASE severity WHEN 'critical' THEN 3 WHEN 'warning' THEN 2 ELSE 1 END) AS worst
FROM alarm_event WHERE group_id IN (?) GROUP BY group_id;

-- name: AlarmEventGroupKinds :many
-- in: group_ids []int64
-- out: group_id int64, kind string, n int
SELECT group_id, kind, COUNT(*) AS n FROM alarm_event WHERE group_id IN (?) GROUP BY group_id, kind ORDER BY group_id, n DESC, kind;

-- The alarms that match the filters, counted up to ? (a bounded scan).
-- name: AlarmCountWhere
SELECT COUNT(*) FROM (SELECT 1 AS one FROM alarm_event {{filters}} LIMIT ?) m;

-- Acknowledge every open, unacknowledged alarm that matches the filters
-- (which say so): by, then the filters' arguments.
-- name: AlarmBulkAck
UPDATE alarm_event SET acked_at = {{now_ms}}, acked_by = ? {{filters}};

-- Resolve every open alarm that matches the filters (which say so): by,
-- by, then the filters' arguments.
-- name: AlarmBulkResolve
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN ? ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
{{filters}};

-- Resolve the executor_lost alarms of executors that heartbeat again
-- (after the alarm): the reason.
-- name: AlarmResolveExecutorsBack :exec
-- in: resolved_msg msg.Msg
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = 'shardjob', resolved_msg = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN 'shardjob' ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
WHERE kind = 'executor_lost' AND resolved_at IS NULL AND executor_id IS NOT NULL
  AND EXISTS (SELECT 1 FROM executor e WHERE e.id = alarm_event.executor_id AND e.state IN ('online', 'draining')
                                         AND e.last_heartbeat > alarm_event.at);

-- Resolve the waiting run_unplaceable alarms (warning) whose run has been
-- placed since (its slots have attempts): the reason.
-- name: AlarmResolveRunsPlaced :exec
-- in: resolved_msg msg.Msg
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = 'shardjob', resolved_msg = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN 'shardjob' ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
WHERE kind = 'run_unplaceable' AND resolved_at IS NULL AND severity = 'warning' AND run_id IS NOT NULL
  AND EXISTS (SELECT 1 FROM slot_attempt a WHERE a.run_id = alarm_event.run_id);

-- name: RunLastSucceeded :one
-- in: job_id int64
-- out: finished_at sql.NullInt64
SELECT MAX(finished_at) FROM job_run WHERE job_id = ? AND status = 'succeeded';

-- The alarms one reader may see, newest first: id < ?, then every alarm
-- (? = no app limit), or those of an app in the list (?); alarms of no app
-- (the platform's) only without a limit.
-- The job's name comes with its id ('' once the job is deleted).
-- fragment: AlarmColumns
a.id, a.at, a.kind, a.severity, a.job_id, a.run_id, a.dedup_key, a.message, a.message_msg, a.raised_by, a.app,
COALESCE(j.name, '') AS job_name, a.acked_at, a.acked_by, a.resolved_at, a.resolved_by, a.resolved_msg, a.group_id, a.executor_id

-- name: AlarmList :many
-- in: id int64, no_app_limit bool, apps []string, limit int
-- out: Alarm
SELECT {{AlarmColumns}}
FROM alarm_event a LEFT JOIN job j ON j.id = a.job_id
WHERE a.id < ? AND (? = 1 OR (a.app <> '' AND a.app IN (?))) ORDER BY a.id DESC LIMIT ?;

-- The members of a group, newest first: group, id < ?, limit.
-- name: AlarmListOfGroup :many
-- in: group_id int64, id int64, limit int
-- out: Alarm
SELECT {{AlarmColumns}}
FROM alarm_event a LEFT JOIN job j ON j.id = a.job_id
WHERE a.group_id = ? AND a.id < ? ORDER BY a.id DESC LIMIT ?;

-- name: AlarmListByIDs :many
-- in: ids []int64
-- out: Alarm
SELECT {{AlarmColumns}}
FROM alarm_event a LEFT JOIN job j ON j.id = a.job_id WHERE a.id IN (?);

-- name: AlarmByID :one
-- in: id int64
-- out: Alarm
SELECT {{AlarmColumns}}
FROM alarm_event a LEFT JOIN job j ON j.id = a.job_id WHERE a.id = ?;

-- Acknowledge an open alarm (once): by, alarm id.
-- name: AlarmAck :exec
-- in: acked_by string, id int64
UPDATE alarm_event SET acked_at = {{now_ms}}, acked_by = ? WHERE id = ? AND acked_at IS NULL AND resolved_at IS NULL;

-- Resolve an alarm (once), acknowledging it too if nobody had: by, by, id.
-- name: AlarmResolve :exec
-- in: resolved_by string, acked_by string, id int64
UPDATE alarm_event SET resolved_at = {{now_ms}}, resolved_by = ?,
       acked_by = CASE WHEN acked_at IS NULL THEN ? ELSE acked_by END, acked_at = COALESCE(acked_at, {{now_ms}})
WHERE id = ? AND resolved_at IS NULL;

-- name: JobsOverdue :many
-- in: grace_ms int64, limit int
-- out: OverdueJob
SELECT id, app, name, next_fire_at FROM job
WHERE enabled = 1 AND paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at < {{now_ms}} - ?
ORDER BY next_fire_at LIMIT ?;

-- name: RunCountsInWindow :many
-- in: from_ms int64, to_ms int64
-- out: job_id int64, n int
-- From idx_run_scheduled (scheduled_at, trigger_kind, job_id) alone: the
-- runs of the window, not all of job_run.
SELECT job_id, COUNT(*) AS n FROM job_run
WHERE scheduled_at >= ? AND scheduled_at < ? AND trigger_kind IN ('cron', 'catch_up')
GROUP BY job_id;

-- name: AttemptsToRetry :many
-- in: limit int
-- out: RetryCandidate
-- A permanent failure (error_class) is never retried; retry_after_ms is the
-- least delay its handler asked for, which the leader waits for as well as
-- the backoff.
-- A slot whose retry budget was spent (no_retry) is final; the slots of a
-- job whose circuit breaker is open or probing wait (the leader's breaker
-- round picks the probe among them: BreakerHeldRetry).
SELECT a.id, a.run_id, a.slot, a.attempt, a.failures, a.executor_id, a.finished_at, j.retry_backoff_ms,
       a.retry_after_ms, r.job_id, j.retry_backoff_max, j.retry_budget_percent, j.retry_budget_window, a.error
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
WHERE a.current = 1 AND a.status = 'failed' AND a.failures < j.retry_max AND a.error_class <> 'permanent'
  AND a.no_retry = 0 AND r.status = 'running'
  AND NOT EXISTS (SELECT 1 FROM job_breaker b WHERE b.job_id = r.job_id AND b.state <> 'closed')
ORDER BY a.id LIMIT ?;

-- name: AttemptSupersedeFailed :exec
-- in: id int64
UPDATE slot_attempt SET current = 0 WHERE id = ? AND current = 1 AND status IN ('failed', 'cancelled');

-- name: AttemptInsertUnplaced :lastid
-- in: run_id int64, slot int, attempt int, failures int
INSERT INTO slot_attempt (run_id, slot, attempt, failures, executor_id, status, current, dispatched_at, lease_until)
VALUES (?, ?, ?, ?, NULL, 'assigned', 1, NULL, NULL) {{returning_id}};

-- name: AttemptInsertMoved :lastid
-- in: run_id int64, slot int, attempt int, failures int, executor_id int64, lease_ms int64
-- The next attempt of a slot moved off an executor (lost, or unstarted work
-- given to an idle one): same failure count as the attempt it replaces.
-- lease_until: the database clock plus the lease, as in AttemptInsert.
INSERT INTO slot_attempt (run_id, slot, attempt, failures, executor_id, status, current, dispatched_at, lease_until)
VALUES (?, ?, ?, ?, ?, 'assigned', 1, {{now_ms}}, {{now_ms}} + ?) {{returning_id}};

-- name: AttemptsUnplaced :many
-- in: id int64, limit int
-- out: Unplaced
-- Attempts waiting for an executor after id ? (keyset), oldest first:
-- retries, and slots held back by a concurrency cap; not those of a job
-- whose circuit breaker is open or probing, but its probe. idx_attempt_executor
-- (executor_id NULL, live 1, + id) gives the order directly.
SELECT a.id, a.run_id, a.slot, a.attempt, j.app, j.handler, r.job_id, COALESCE(j.max_running_slots, 0) AS job_max_running_slots,
       (SELECT p.executor_id FROM slot_attempt p WHERE p.run_id = a.run_id AND p.slot = a.slot AND p.attempt = a.attempt - 1) AS previous_executor
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
WHERE a.executor_id IS NULL AND a.live = 1 AND a.current = 1 AND a.status = 'assigned' AND a.id > ?
  AND NOT EXISTS (SELECT 1 FROM job_breaker b WHERE b.job_id = r.job_id AND b.state <> 'closed'
                  AND (b.probe_token IS NULL OR b.probe_token <> a.id))
ORDER BY a.id LIMIT ?;

-- name: AttemptInsertWaiting :execrows
-- in: run_id int64, slot int, attempt int
-- The first attempt of a slot that a concurrency cap holds back: not placed
-- (no executor, no lease) until the leader places it (AttemptPlace).
INSERT INTO slot_attempt (run_id, slot, attempt, executor_id, status, current)
VALUES (?, ?, ?, NULL, 'assigned', 1);

-- name: AttemptPlace :exec
-- in: executor_id int64, lease_ms int64, id int64
-- lease_until: the database clock plus the lease, as in AttemptInsert.
UPDATE slot_attempt SET executor_id = ?, dispatched_at = {{now_ms}}, lease_until = {{now_ms}} + ?
WHERE id = ? AND current = 1 AND status = 'assigned' AND executor_id IS NULL;

-- name: AttemptsFailedOfRun :many
-- in: run_id int64
-- out: Attempt
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures
FROM slot_attempt a WHERE a.run_id = ? AND a.current = 1 AND a.status IN ('failed', 'cancelled');

-- name: SlotStatsUpsert
-- Untyped: a multi-row upsert with placeholders after its tuples (the
-- smoothing weight), which a :execrows query cannot have.
-- One tuple per sample (multiRow); the four arguments after the tuples are
-- the smoothing weight. A first sample is taken as is; several samples of a
-- slot in one statement are applied one after the other, in tuple order.
INSERT INTO slot_stats (job_id, slot, cost_ms, records, samples, last_executor, updated_at)
VALUES (?, ?, ?, ?, 1, ?, {{now_ms}})
{{upsert(job_id, slot)}} cost_ms = slot_stats.cost_ms * (1 - ?) + ? * {{excluded(cost_ms)}},
  records = slot_stats.records * (1 - ?) + ? * {{excluded(records)}}, samples = slot_stats.samples + 1,
  last_executor = {{excluded(last_executor)}}, updated_at = {{excluded(updated_at)}};

-- name: SlotStatsOfJob :many
-- in: job_id int64
-- out: SlotStat
SELECT slot, cost_ms, records, samples, last_executor FROM slot_stats WHERE job_id = ? ORDER BY slot;

-- name: ExecutorSetSpeed :exec
-- in: speed float64, id int64
UPDATE executor SET speed = ? WHERE id = ?;

-- name: RunSetPredicted :exec
-- in: predicted_ms int64, id int64
UPDATE job_run SET predicted_ms = ? WHERE id = ?;

-- name: AttemptForStats :many
-- in: ids []int64
-- out: AttemptInfo
SELECT a.id, a.run_id, a.slot, a.failures, COALESCE(a.executor_id, 0) AS executor_id, r.job_id, COALESCE(e.speed, 1) AS speed,
       s.cost_ms, s.last_executor, COALESCE(j.retry_max, 0) AS retry_max, COALESCE(j.name, '') AS job_name, r.app,
       COALESCE(j.breaker_threshold, 0) AS breaker_threshold
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id LEFT JOIN executor e ON e.id = a.executor_id
LEFT JOIN slot_stats s ON s.job_id = r.job_id AND s.slot = a.slot LEFT JOIN job j ON j.id = r.job_id
WHERE a.id IN (?);

-- name: ExecutorLoad :many
-- out: ExecutorLoad
SELECT a.executor_id, COUNT(*) AS active,
       COALESCE(SUM(CASE WHEN a.status = 'assigned' AND a.acked = 1 THEN 1 ELSE 0 END), 0) AS queued
FROM executor e {{join_in_order}} slot_attempt a ON a.executor_id = e.id AND a.live = 1
WHERE a.current = 1 AND a.status IN ('assigned', 'running')
GROUP BY a.executor_id;

-- name: AttemptsQueuedOn :many
-- in: executor_id int64, limit int
-- out: QueuedAttempt
SELECT a.id, a.run_id, a.slot, a.attempt, a.executor_id, a.status, a.current, a.acked, a.dispatched_at,
       a.lease_until, a.started_at, a.finished_at, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.failures,
       COALESCE(j.handler, '') AS handler
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id LEFT JOIN job j ON j.id = r.job_id
WHERE a.executor_id = ? AND a.live = 1 AND a.current = 1 AND a.status = 'assigned' AND a.acked = 1
ORDER BY a.id DESC LIMIT ?;

-- name: UserList :many
-- out: User
SELECT id, username, password_hash, role, apps, created_at, source, COALESCE(subject, '') AS subject, email, checked_at, recheck_at, refused FROM app_user ORDER BY username;

-- name: UserSetApps :exec
-- in: apps string, id int64
UPDATE app_user SET apps = ? WHERE id = ?;

-- name: UserSetRole :exec
-- in: role string, id int64
UPDATE app_user SET role = ? WHERE id = ?;

-- name: UserSetPassword :exec
-- in: password_hash string, id int64
UPDATE app_user SET password_hash = ? WHERE id = ?;

-- name: UserDelete :exec
-- in: id int64
DELETE FROM app_user WHERE id = ?;

-- The directory user of a source and subject (admin/sso).
-- name: UserBySubject :one
-- in: source string, subject string
-- out: User
SELECT id, username, password_hash, role, apps, created_at, source, COALESCE(subject, '') AS subject, email, checked_at, recheck_at, refused FROM app_user WHERE source = ? AND subject = ?;

-- A directory user's first sign-in (no password: password_hash stays
-- empty, which no password matches).
-- name: UserInsertSSO :lastid
-- in: username string, role string, apps string, source string, subject string, email string, checked_at int64, refresh_token sql.NullString
INSERT INTO app_user (username, password_hash, role, apps, source, subject, email, checked_at, recheck_at, refresh_token, created_at)
VALUES (?, '', ?, ?, ?, ?, ?, ?, 0, ?, {{now_ms}}) {{returning_id}};

-- A sign-in or a recheck that mapped the user: what the directory says
-- now; the refresh token is kept when the answer brought none.
-- name: UserApplySSO :exec
-- in: username string, role string, apps string, email string, checked_at int64, refresh_token sql.NullString, id int64
UPDATE app_user SET username = ?, role = ?, apps = ?, email = ?, checked_at = ?, refused = '',
  refresh_token = COALESCE(?, refresh_token)
WHERE id = ?;

-- One admin request claims a user's recheck: the one whose update changes
-- the row asks the directory; the others keep the last answer.
-- name: UserClaimRecheck :exec
-- in: started int64, id int64, recheck_at int64
UPDATE app_user SET recheck_at = ? WHERE id = ? AND recheck_at = ?;

-- name: UserRefuse :exec
-- in: refused string, id int64
UPDATE app_user SET refused = ?, refresh_token = NULL WHERE id = ?;

-- name: UserRefreshToken :one
-- in: id int64
-- out: refresh_token sql.NullString
SELECT refresh_token FROM app_user WHERE id = ?;

-- A pending OIDC sign-in, by the hash of its state (admin/sso).
-- name: SSOLoginInsert :exec
-- in: state_hash string, nonce string, verifier string, return_to string, expires_after_ms int64
INSERT INTO sso_login (state_hash, nonce, verifier, return_to, expires_at) VALUES (?, ?, ?, ?, {{now_ms}} + ?);

-- name: SSOLoginGet :one
-- in: state_hash string
-- out: nonce string, verifier string, return_to string
SELECT nonce, verifier, return_to FROM sso_login WHERE state_hash = ? AND expires_at > {{now_ms}};

-- name: SSOLoginDelete :exec
-- in: state_hash string
DELETE FROM sso_login WHERE state_hash = ?;

-- name: SSOLoginPurge :exec
DELETE FROM sso_login WHERE expires_at <= {{now_ms}};

-- name: SessionDeleteUser :exec
-- in: user_id int64
DELETE FROM user_session WHERE user_id = ?;

-- The entries one reader may see (store.AuditScope), newest first: id <
-- ?, then everything (? = all: admins), or the entries of an app (app set)
-- that is any app (?) or in the list (?), or about the reader's own account
-- (owner_id = ?); then the filter (store.AuditFilter): an actor ('' = any),
-- action and object prefixes as LIKE patterns ('%' = any; '!' escapes),
-- at in [from, to). The token's name comes with its id.
-- name: AuditList :many
-- in: id int64, all bool, all_apps bool, apps []string, owner_id int64, actor string, actor string, action string, object string, from int64, to int64, limit int
-- out: AuditEntry
SELECT a.id, a.at, a.actor, a.action, a.object, a.detail, a.app, a.owner_id, a.token_id, COALESCE(t.name, '') AS token_name
FROM audit_log a LEFT JOIN api_token t ON t.id = a.token_id
WHERE a.id < ? AND (? = 1 OR (a.app <> '' AND (? = 1 OR a.app IN (?))) OR (a.owner_id <> 0 AND a.owner_id = ?))
  AND (? = '' OR a.actor = ?) AND a.action LIKE ? ESCAPE '!' AND a.object LIKE ? ESCAPE '!' AND a.at >= ? AND a.at < ?
ORDER BY a.id DESC LIMIT ?;

-- name: RunPendingPage :many
-- in: now_ms int64, now_ms int64, now_ms int64, scheduled_at int64, scheduled_at int64, id int64, limit int
-- out: PendingRun
-- A page of pending runs that are due (scheduled_at <= ?, start_after <= ?:
-- a jittered run waits for its offset, and held_until <= ?: a held run
-- waits for its next check), after a keyset cursor (scheduled_at, id), with
-- what starting them needs of their job. idx_run_status (status,
-- scheduled_at, + id) gives the order directly; start_after and held_until
-- filter in the rows read (0 for a run without jitter, or not held): such
-- runs scheduled but not yet due are read and passed over.
SELECT r.id, r.job_id, COALESCE(NULLIF(r.job_name, ''), j.name, '') AS job_name, COALESCE(NULLIF(r.app, ''), j.app, '') AS app, r.scheduled_at, r.trigger_kind, r.status, r.params, r.slot_count,
       r.slots_succeeded, r.slots_failed, r.epoch, r.created_at, r.started_at, r.finished_at, r.error, r.error_msg, r.parent_run_id,
       r.predicted_ms, r.start_after, r.time_zone, r.held_until, r.backfill_id, j.id IS NOT NULL AS job_exists, COALESCE(j.handler, '') AS handler,
       COALESCE(j.overlap_policy, '') AS overlap_policy, COALESCE(j.enabled, 0) AS job_enabled, COALESCE(j.paused, 0) AS job_paused,
       COALESCE(j.wait_for, '') AS wait_for, COALESCE(j.wait_timeout, '') AS wait_timeout, COALESCE(j.on_timeout, '') AS on_timeout,
       COALESCE(j.max_running_slots, 0) AS job_max_running_slots, COALESCE(j.priority, 1) AS job_priority, COALESCE(r.priority, j.priority, 1) AS priority
FROM job_run r LEFT JOIN job j ON j.id = r.job_id
WHERE r.status = 'pending' AND r.scheduled_at <= ? AND r.start_after <= ? AND r.held_until <= ? AND (r.scheduled_at > ? OR (r.scheduled_at = ? AND r.id > ?))
ORDER BY r.scheduled_at, r.id LIMIT ?;

-- name: RunsLockPending :many
-- in: ids []int64
-- out: id int64
-- The runs of an IN list that are still pending, locked in id order.
SELECT id FROM job_run WHERE id IN (?) AND status = 'pending' ORDER BY id {{for_update}};

-- name: RunsStart :exec
-- in: started_at int64, ids []int64
-- error held why the run waited (RunsWaiting): it no longer does.
UPDATE job_run SET status = 'running', started_at = COALESCE(started_at, ?), error = '', error_msg = '' WHERE status = 'pending' AND id IN (?);

-- name: RunsWaiting :exec
-- in: error string, error_msg any, ids []int64
-- Why pending runs (IN list) cannot start yet, shown on the run.
UPDATE job_run SET error = ?, error_msg = ? WHERE status = 'pending' AND id IN (?);

-- name: RunsHold :exec
-- in: held_until int64, error string, error_msg any, ids []int64
-- Pending runs (IN list) held until an instant, with why (shown on the
-- run): the leader passes them over until then.
UPDATE job_run SET held_until = ?, error = ?, error_msg = ? WHERE status = 'pending' AND id IN (?);

-- name: RunsFailPending :exec
-- in: finished_at int64, error string, error_msg any, ids []int64
-- Pending runs (IN list) that waited past the leader's unplaceable timeout.
UPDATE job_run SET status = 'failed', finished_at = ?, error = ?, error_msg = ? WHERE status = 'pending' AND id IN (?);

-- name: RunsSetPredicted
-- Set by id (store.byKey).
UPDATE job_run SET predicted_ms = CASE id WHEN ? THEN ? END WHERE id IN (?);

-- name: SlotStatsOfJobs :many
-- in: job_ids []int64
-- out: job_id int64, slot int, cost_ms float64, records float64, samples int, last_executor sql.NullInt64
SELECT job_id, slot, cost_ms, records, samples, last_executor FROM slot_stats WHERE job_id IN (?) ORDER BY job_id, slot;

-- name: DispatchOfExecutor :many
-- in: executor_id int64, id int64, limit int
-- out: DispatchSlot
-- The current, unacknowledged attempts placed on an executor, oldest token
-- first: what a push to it carries (many runs in one request).
SELECT a.id AS token, a.run_id, a.slot, a.attempt, r.job_id, j.name AS job_name, j.handler, r.scheduled_at,
       COALESCE(o.params, r.params) AS params, r.slot_count, j.timeout_ms, j.slot_params, r.time_zone, r.dedup_scope, r.uncertain_policy,
       r.record_max_attempts, r.workflow, a.executor_id, a.failures, COALESCE(r.priority, j.priority) AS priority
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id JOIN job j ON j.id = r.job_id
LEFT JOIN slot_replay_params o ON o.run_id = a.run_id AND o.slot = a.slot
WHERE a.unacked = 1 AND a.executor_id = ? AND a.current = 1 AND a.acked = 0 AND a.status = 'assigned' AND a.id > ?
ORDER BY a.id LIMIT ?;

-- name: RunsSkipPendingScheduled :exec
-- in: error string, error_msg any, job_id int64
-- Disabling or pausing a job skips its firings that have not started (runs
-- created ahead of time by the pre-read window, or waiting for an
-- executor); runs triggered by hand still run.
UPDATE job_run SET status = 'skipped', finished_at = {{now_ms}}, error = ?, error_msg = ?
WHERE job_id = ? AND status = 'pending' AND trigger_kind IN ('cron', 'catch_up');

-- name: RunsLock :many
-- in: ids []int64
-- out: LockedRun
-- The runs of a results batch (IN list), locked in id order, and the
-- database clock (the settle time of those that end).
SELECT id, job_id, app, status, epoch, {{now_ms}} AS db_now FROM job_run WHERE id IN (?) ORDER BY id {{for_update}};

-- name: JobForChildRun :one
-- in: id int64
-- out: ChildJob
SELECT app, name, slot_count, params, enabled, time_zone, dedup_scope, uncertain_policy, record_max_attempts,
       start_deadline, finish_deadline, deadline_action
FROM job WHERE id = ?;

-- name: RunsDeadlineDue :many
-- in: deadline_check_at int64, limit int
-- out: DueDeadline
-- Runs with a deadline not checked yet that has passed (deadline_check_at
-- <= now), earliest first: the leader's deadline check
-- (idx_run_deadline_check; checked runs have NULL there and are not in the
-- range), with what deciding needs: when the first slot started and when
-- the run ended.
SELECT r.id, r.job_id, r.app, COALESCE(j.name, '') AS job_name, r.status, r.scheduled_at, r.finished_at,
       r.start_deadline_at, r.finish_deadline_at, r.deadline_action, r.deadline_check_at,
       (SELECT MIN(a.started_at) FROM slot_attempt a WHERE a.run_id = r.id) AS first_started_at
FROM job_run r LEFT JOIN job j ON j.id = r.job_id
WHERE r.deadline_check_at <= ?
ORDER BY r.deadline_check_at, r.id LIMIT ?;

-- name: RunsDeadlineChecked
-- Set by id (store.byKey): the next deadline to check of each run (NULL:
-- none left). A check repeated by a second leader raises nothing twice
-- (alarm dedup keys) and cancels nothing twice (guarded transitions).
UPDATE job_run SET deadline_check_at = CASE id WHEN ? THEN ? END WHERE id IN (?);

-- name: RunCountOfParent :one
-- in: job_id int64, parent_run_id int64
-- out: n int
SELECT COUNT(*) FROM job_run WHERE job_id = ? AND parent_run_id = ?;

-- Utilization samples (admin/utilization, migration 0018): one row per app
-- that has executors, recorded by the leader every sample interval in one
-- statement. It reads the executor table and each executor's live
-- attempts (idx_attempt_executor); busy and queued count the attempts of
-- online executors only, capacity their slots, as the dashboard's table
-- does.
-- args: at (NULL: the database clock; tests pass a fixed instant)
-- name: UtilizationSample :exec
-- in: at sql.NullInt64
INSERT INTO utilization_sample (at, app, executors, capacity, busy, queued)
SELECT COALESCE(?, {{now_ms}}), e.app,
       SUM(CASE WHEN e.state = 'online' THEN 1 ELSE 0 END),
       SUM(CASE WHEN e.state = 'online' THEN e.capacity ELSE 0 END),
       COALESCE(SUM(l.busy), 0), COALESCE(SUM(l.queued), 0)
FROM executor e
LEFT JOIN (SELECT a.executor_id,
                  SUM(CASE WHEN a.status = 'assigned' AND a.acked = 1 THEN 0 ELSE 1 END) AS busy,
                  SUM(CASE WHEN a.status = 'assigned' AND a.acked = 1 THEN 1 ELSE 0 END) AS queued
           FROM executor x {{join_in_order}} slot_attempt a ON a.executor_id = x.id AND a.live = 1
           WHERE a.status IN ('assigned', 'running') AND a.current = 1
           GROUP BY a.executor_id) l ON l.executor_id = e.id AND e.state = 'online'
WHERE e.state <> 'gone'
GROUP BY e.app;

-- Samples given as they are (tests, and tools that import history).
-- name: UtilizationInsert :execrows
-- in: at int64, app string, executors int, capacity int, busy int, queued int
INSERT INTO utilization_sample (at, app, executors, capacity, busy, queued) VALUES (?, ?, ?, ?, ?, ?);

-- The samples of [from, to) downsampled into buckets of a fixed width
-- aligned on the Unix epoch (bucket = at - at mod width): per app and
-- bucket the largest busy and queued, the sums of capacity and online
-- executors (the store divides them by samples: MySQL's AVG would round to
-- 4 decimals), and how many samples. Range by idx_util_at.
-- args: width, width, from, to, every app?, apps…
-- name: UtilizationBuckets.mysql
SELECT app, (at DIV ?) * ? AS bucket, SUM(executors) AS executors_sum, SUM(capacity) AS capacity_sum,
       MAX(busy) AS busy, MAX(queued) AS queued, COUNT(*) AS samples
FROM utilization_sample
WHERE at >= ? AND at < ? AND (? = 1 OR app IN (?))
GROUP BY app, bucket ORDER BY app, bucket;
-- name: UtilizationBuckets :many
-- in: width_ms int64, width_ms int64, from_ms int64, to_ms int64, all_apps bool, apps []string
-- out: bucketRow
SELECT app, (at / ?) * ? AS bucket, SUM(executors) AS executors_sum, SUM(capacity) AS capacity_sum,
       MAX(busy) AS busy, MAX(queued) AS queued, COUNT(*) AS samples
FROM utilization_sample
WHERE at >= ? AND at < ? AND (? = 1 OR app IN (?))
GROUP BY app, bucket ORDER BY app, bucket;

-- Migrations (admin/store/migrate.go). Concurrent admins are serialised
-- with a named lock on MySQL; SQLite has one writer, its lock is a no-op.

-- name: SchemaMigrationsCreate :exec
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INT          NOT NULL PRIMARY KEY,
  name       VARCHAR(128) NOT NULL,
  applied_at BIGINT       NOT NULL
);

-- name: SchemaVersion :one
-- out: version int
SELECT COALESCE(MAX(version), 0) FROM schema_migrations;

-- name: SchemaMigrationRecord :exec
-- in: version int, name string
INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, {{now_ms}});

-- name: MigrationLock.mysql :one
-- out: got sql.NullInt64
-- A lock per database (GET_LOCK names are server-wide; a name holds at most
-- 64 characters, hence the digest): admins migrating the same database take
-- turns, and installations in other databases of the server do not wait.
SELECT GET_LOCK(CONCAT('shardjob_migrate:', MD5(DATABASE())), 60);
-- name: MigrationLock.postgres
-- An advisory lock of the session, keyed by the database's name; it waits
-- as long as the migrating admin takes (the caller's context bounds it).
SELECT 1 FROM (SELECT pg_advisory_lock(hashtext('shardjob_migrate:' || current_database()))) l;
-- name: MigrationLock.sqlite
SELECT 1;

-- name: MigrationUnlock.mysql :exec
SELECT RELEASE_LOCK(CONCAT('shardjob_migrate:', MD5(DATABASE())));
-- name: MigrationUnlock.postgres
SELECT pg_advisory_unlock(hashtext('shardjob_migrate:' || current_database()));
-- name: MigrationUnlock.sqlite
SELECT 1;

-- name: ServerVersion.mysql :one
-- out: version string
SELECT VERSION();
-- name: ServerVersion.postgres
SELECT version();
-- name: ServerVersion.sqlite
SELECT sqlite_version();

-- name: CalendarInsert :lastid
-- in: Calendar
INSERT INTO business_calendar (app, name, description, week, days, holidays, workdays, version, revision, created_at, updated_at, updated_by)
VALUES (:app, :name, :description, :week, :days, :holidays, :workdays, :version, 1, {{now_ms}}, {{now_ms}}, :updated_by) {{returning_id}};

-- name: CalendarUpdate :exec
-- in: Calendar
-- An edit of the revision read (optimistic lock): app and name stay.
UPDATE business_calendar SET description = :description, week = :week, days = :days, holidays = :holidays, workdays = :workdays,
       version = :version, revision = revision + 1, updated_at = {{now_ms}}, updated_by = :updated_by
WHERE id = :id AND revision = :revision;

-- name: CalendarByID :one
-- in: id int64
-- out: Calendar
SELECT id, app, name, description, week, days, holidays, workdays, version, revision, created_at, updated_at, updated_by
FROM business_calendar WHERE id = ?;

-- The calendars one reader may see, by app then name: every calendar (? =
-- no app limit), or the global ones and those of an app in the list (?).
-- The days are left out (GET one calendar for them).
-- name: CalendarList :many
-- in: all_apps bool, apps []string
-- out: Calendar
SELECT id, app, name, description, week, '' AS days, holidays, workdays, version, revision, created_at, updated_at, updated_by
FROM business_calendar WHERE ? = 1 OR app = '' OR app IN (?) ORDER BY app, name LIMIT 1000;

-- name: CalendarDelete :exec
-- in: id int64
DELETE FROM business_calendar WHERE id = ?;

-- name: CalendarVersions :many
-- in: ids []int64
-- out: id int64, version string
-- The version of each calendar the leader's due jobs use (one query per
-- batch that has calendar jobs): it loads a calendar's days only when its
-- version is not the one it has cached.
SELECT id, version FROM business_calendar WHERE id IN (?);

-- name: JobsOfCalendar :many
-- in: calendar_id int64
-- out: Job
-- The jobs that use a calendar (idx_job_calendar), to replan them after an
-- edit and to refuse deleting a calendar in use.
SELECT {{JobColumns}} FROM job WHERE calendar_id = ? ORDER BY id LIMIT 1000;
