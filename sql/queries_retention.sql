-- Retention of the platform's history (package admin/retention): finished
-- runs with their slot attempts, alarm events with their deliveries, audit
-- entries, each past its own horizon. The leader runs it in small batches:
-- a keyset walk over an (instant, id) index, read without locks, then one
-- short transaction per batch that locks the chosen rows by primary key,
-- checks them again and deletes them. Lists "IN (?)" are expanded per call.

-- Runs created before the cutoff (a run finishes after it is created), in
-- index order (idx_run_created), after the last (created_at, id) seen.
-- args: cutoff, last created_at, last created_at, last id, limit
-- name: RetentionRunsScan
SELECT id, created_at, status, COALESCE(finished_at, 0), slot_count FROM job_run
WHERE created_at < ? AND (created_at > ? OR (created_at = ? AND id > ?))
ORDER BY created_at, id LIMIT ?;

-- The runs of a batch that are still finished before the cutoff (a run
-- retried by hand since the scan is running again, and stays).
-- args: ids…, cutoff
-- name: RetentionRunsLock
SELECT id FROM job_run
WHERE id IN (?) AND status IN ('succeeded', 'failed', 'partially_failed', 'cancelled', 'skipped')
  AND finished_at IS NOT NULL AND finished_at < ? {{for_update}};

-- uk_slot_attempt (run_id, slot, attempt) serves this.
-- name: RetentionAttemptsDelete
DELETE FROM slot_attempt WHERE run_id IN (?);

-- name: RetentionRunsDelete
DELETE FROM job_run WHERE id IN (?);

-- Alarm events before the cutoff (idx_alarm_at).
-- args: cutoff, last at, last at, last id, limit
-- name: RetentionAlarmsScan
SELECT id, at FROM alarm_event
WHERE at < ? AND (at > ? OR (at = ? AND id > ?))
ORDER BY at, id LIMIT ?;

-- Only alarms whose deliveries were created and none is still pending:
-- deleting one the notifier has not sent would lose it.
-- args: ids…, cutoff
-- name: RetentionAlarmsLock
SELECT e.id FROM alarm_event e
WHERE e.id IN (?) AND e.at < ? AND e.fanned_out = 1
  AND NOT EXISTS (SELECT 1 FROM alarm_delivery d WHERE d.alarm_id = e.id AND d.status = 'pending') {{for_update}};

-- uk_delivery (alarm_id, group_key) serves this.
-- name: RetentionDeliveriesDelete
DELETE FROM alarm_delivery WHERE alarm_id IN (?);

-- name: RetentionAlarmsDelete
DELETE FROM alarm_event WHERE id IN (?);

-- The groups of alarms (before they are deleted).
-- name: RetentionAlarmGroupsOf
SELECT DISTINCT group_id FROM alarm_event WHERE id IN (?) AND group_id IS NOT NULL;

-- Groups left without alarms.
-- name: RetentionAlarmGroupsDelete
DELETE FROM alarm_event_group WHERE id IN (?)
  AND NOT EXISTS (SELECT 1 FROM alarm_event e WHERE e.group_id = alarm_event_group.id);

-- Audit entries before the cutoff (idx_audit_at).
-- args: cutoff, last at, last at, last id, limit
-- name: RetentionAuditScan
SELECT id, at FROM audit_log
WHERE at < ? AND (at > ? OR (at = ? AND id > ?))
ORDER BY at, id LIMIT ?;

-- args: ids…, cutoff
-- name: RetentionAuditDelete
DELETE FROM audit_log WHERE id IN (?) AND at < ?;

-- Utilization samples before the cutoff (idx_util_at).
-- args: cutoff, last at, last at, last id, limit
-- name: RetentionUtilizationScan
SELECT id, at FROM utilization_sample
WHERE at < ? AND (at > ? OR (at = ? AND id > ?))
ORDER BY at, id LIMIT ?;

-- args: ids…, cutoff
-- name: RetentionUtilizationDelete
DELETE FROM utilization_sample WHERE id IN (?) AND at < ?;

-- Dead letters before the cutoff (idx_dead_died), whatever became of their
-- runs: their own horizon (--dead-retention).
-- args: cutoff, last died_at, last died_at, last id, limit
-- name: RetentionDeadScan
SELECT id, died_at FROM dead_letter
WHERE died_at < ? AND (died_at > ? OR (died_at = ? AND id > ?))
ORDER BY died_at, id LIMIT ?;

-- args: ids…, cutoff
-- name: RetentionDeadDelete
DELETE FROM dead_letter WHERE id IN (?) AND died_at < ?;

-- The params replays gave slots of the runs deleted (primary key run_id, slot).
-- name: RetentionReplayParamsDelete
DELETE FROM slot_replay_params WHERE run_id IN (?);
