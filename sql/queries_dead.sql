-- Dead letters (issue 37; docs/failures.md "Dead letters"): the slots that
-- failed permanently or used up their retries, written by admin/runstate in
-- the transaction that records the failure, listed by the operator API and
-- replayed by hand as new attempts of the same run. The macros are those of
-- queries.sql.

-- fragment: DeadLetterColumns
d.id, d.app, d.job_id, d.job_name, d.handler, d.run_id, d.scheduled_at, d.slot, d.token, d.attempt, d.params, d.slot_param,
d.error, d.error_msg, d.error_class, d.processed, d.skipped, d.failed, d.uncertain, d.died_at, d.replayed_at, d.replayed_by,
d.replay_token, d.replays

-- name: DeadLetterSources :many
-- in: ids []int64
-- out: DeadSource
-- What a dead letter keeps of each dead attempt (IN list of tokens), its
-- outcome written already: the run key, the handler, the params it ran with
-- (a replay's, else the run's) and the job's slot params (the slot's param
-- is picked by the caller), at the database clock.
SELECT a.id AS token, a.run_id, a.slot, a.attempt, a.processed, a.skipped, a.failed, a.uncertain, a.error, a.error_msg,
       a.error_class, r.job_id, r.app, COALESCE(NULLIF(r.job_name, ''), j.name, '') AS job_name, COALESCE(j.handler, '') AS handler,
       r.scheduled_at, COALESCE(o.params, r.params) AS params, COALESCE(j.slot_params, '') AS slot_params, r.slot_count,
       {{now_ms}} AS died_at
FROM slot_attempt a JOIN job_run r ON r.id = a.run_id LEFT JOIN job j ON j.id = r.job_id
LEFT JOIN slot_replay_params o ON o.run_id = a.run_id AND o.slot = a.slot
WHERE a.id IN (?);

-- name: DeadLetterInsert :execrows
-- in: app string, job_id int64, job_name string, handler string, run_id int64, scheduled_at int64, slot int, token int64, attempt int, params string, slot_param string, error string, error_msg string, error_class string, processed int64, skipped int64, failed int64, uncertain int64, died_at int64
INSERT INTO dead_letter (app, job_id, job_name, handler, run_id, scheduled_at, slot, token, attempt, params, slot_param,
                         error, error_msg, error_class, processed, skipped, failed, uncertain, died_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: DeadLetterList :many
-- in: id int64, all_apps bool, apps []string, app string, app string, job_id int64, job_id int64, handler string, handler string, class string, class string, from int64, to int64, limit int
-- out: DeadLetter
-- Newest first after id ? (keyset), of the apps a reader may see, with the
-- optional filters ('' and 0: any); died_at in [from, to).
SELECT {{DeadLetterColumns}}
FROM dead_letter d
WHERE d.id < ? AND (? = 1 OR d.app IN (?)) AND (? = '' OR d.app = ?) AND (? = 0 OR d.job_id = ?)
  AND (? = '' OR d.handler = ?) AND (? = '' OR d.error_class = ?) AND d.died_at >= ? AND d.died_at < ?
ORDER BY d.id DESC LIMIT ?;

-- name: DeadLetterCount :one
-- in: all_apps bool, apps []string, app string, app string, job_id int64, job_id int64, handler string, handler string, class string, class string, from int64, to int64, limit int
-- out: n int64
-- How many dead letters DeadLetterList's filters select, counting at most ?.
SELECT COUNT(*) FROM (SELECT 1 FROM dead_letter d
WHERE (? = 1 OR d.app IN (?)) AND (? = '' OR d.app = ?) AND (? = 0 OR d.job_id = ?)
  AND (? = '' OR d.handler = ?) AND (? = '' OR d.error_class = ?) AND d.died_at >= ? AND d.died_at < ?
LIMIT ?) c;

-- name: DeadLettersByID :many
-- in: ids []int64
-- out: DeadLetter
SELECT {{DeadLetterColumns}} FROM dead_letter d WHERE d.id IN (?) ORDER BY d.id;

-- name: DeadLettersLock :many
-- in: ids []int64
-- out: DeadLetter
-- DeadLettersByID locked until the end of the replay's transaction: a second
-- replay of the same letters waits, then finds them replayed.
SELECT {{DeadLetterColumns}} FROM dead_letter d WHERE d.id IN (?) ORDER BY d.id {{for_update}};

-- name: DeadSlotsLock :many
-- in: ids []int64
-- out: DeadSlot
-- The current attempt of each dead letter's slot (IN list of letters),
-- locked in token order as results lock them, and whether the run's job
-- was deleted since.
SELECT d.id AS dead_id, a.id AS token, a.run_id, a.slot, a.attempt, a.status,
       CASE WHEN EXISTS (SELECT 1 FROM job j WHERE j.id = d.job_id) THEN 0 ELSE 1 END AS job_deleted
FROM dead_letter d JOIN slot_attempt a ON a.run_id = d.run_id AND a.slot = d.slot AND a.current = 1
WHERE d.id IN (?) ORDER BY a.id {{for_update}};

-- name: AttemptsSupersedeFinished :exec
-- in: ids []int64
-- A replay: the failed or cancelled current attempts (IN list) are
-- superseded by the new ones (AttemptInsertWaiting).
UPDATE slot_attempt SET current = 0 WHERE id IN (?) AND current = 1 AND status IN ('failed', 'cancelled');

-- name: RunsReopen :exec
-- in: started_at int64, ids []int64
-- A replay: the runs (IN list) that ended run again (RunReopen for many).
UPDATE job_run SET status = 'running', finished_at = NULL, error = '', error_msg = '', started_at = COALESCE(started_at, ?)
WHERE id IN (?) AND status IN ('failed', 'partially_failed', 'cancelled');

-- name: SlotReplayParamsUpsert :execrows
-- in: run_id int64, slot int, params string
INSERT INTO slot_replay_params (run_id, slot, params) VALUES (?, ?, ?)
{{upsert(run_id, slot)}} params = {{excluded(params)}};

-- name: DeadLettersMarkReplayed :exec
-- in: replayed_at int64, replayed_by string, ids []int64, force bool
-- The letters (IN list) are replayed now by ?: the new token is the
-- current attempt of the slot. Only letters not replayed yet unless forced:
-- the caller checks that every letter changed.
UPDATE dead_letter SET replayed_at = ?, replayed_by = ?, replays = replays + 1,
  replay_token = (SELECT a.id FROM slot_attempt a WHERE a.run_id = dead_letter.run_id AND a.slot = dead_letter.slot AND a.current = 1)
WHERE id IN (?) AND (? = 1 OR replayed_at IS NULL);
