-- Named queries of alarm delivery (admin/alarm, docs/alarms.md). Same format
-- and macros as queries.sql. Times are Unix milliseconds of the notifier's
-- clock, passed as parameters so that tests can inject a clock.

-- name: AlarmRouteList :many
-- in: job_id int64
-- out: AlarmRoute
SELECT job_id, channel, recipient FROM job_alarm_route WHERE job_id = ? ORDER BY channel, recipient;

-- name: AlarmRouteDeleteJob :exec
-- in: job_id int64
DELETE FROM job_alarm_route WHERE job_id = ?;

-- name: AlarmRouteInsert :exec
-- in: job_id int64, channel string, recipient string
INSERT INTO job_alarm_route (job_id, channel, recipient) VALUES (?, ?, ?);

-- name: AlarmFanOutClaim :many
-- in: limit int
-- out: Alarm
SELECT id, at, kind, severity, job_id, run_id, dedup_key, message, raised_by, group_id FROM alarm_event
WHERE fanned_out = 0 ORDER BY id LIMIT ? {{for_update_skip_locked}};

-- The claimed alarms that follow another alarm of their group, one still
-- open and raised before them: they send no message of their own (one
-- message per group; the group's count is in the console).
-- name: AlarmFanOutFollowers :many
-- in: ids []int64
-- out: id int64
SELECT e.id FROM alarm_event e WHERE e.id IN (?)
  AND EXISTS (SELECT 1 FROM alarm_event p WHERE p.group_id = e.group_id AND p.id < e.id AND p.resolved_at IS NULL);

-- name: AlarmFanOutMark :exec
-- in: ids []int64
UPDATE alarm_event SET fanned_out = 1 WHERE id IN (?);

-- name: AlarmGroupEnsure :exec
-- in: group_key string, channel string, recipient string, job_id sql.NullInt64, kind string
{{insert_ignore}} INTO alarm_group (group_key, channel, recipient, job_id, kind) VALUES (?, ?, ?, ?, ?);

-- name: AlarmDeliveryInsert :exec
-- in: alarm_id int64, group_key string, created_at int64
{{insert_ignore}} INTO alarm_delivery (alarm_id, group_key, status, created_at) VALUES (?, ?, 'pending', ?);

-- name: AlarmGroupsDue :many
-- in: window_until int64, retry_at int64, lease_until int64, limit int
-- out: group_key string, channel string, recipient string, job_id sql.NullInt64, kind string, window_until int64, attempts int
SELECT group_key, channel, recipient, job_id, kind, window_until, attempts FROM alarm_group g
WHERE window_until <= ? AND retry_at <= ? AND lease_until <= ?
  AND EXISTS (SELECT 1 FROM alarm_delivery d WHERE d.group_key = g.group_key AND d.status = 'pending')
ORDER BY retry_at, group_key LIMIT ? {{for_update_skip_locked}};

-- name: AlarmDeliveryOldest :one
-- in: group_key string
-- out: id int64, created_at int64
SELECT id, created_at FROM alarm_delivery WHERE group_key = ? AND status = 'pending' ORDER BY id LIMIT 1;

-- name: AlarmDeliveryClaimOne :exec
-- in: claim string, id int64
UPDATE alarm_delivery SET claim = ? WHERE id = ?;

-- name: AlarmDeliveryClaimGroup :exec
-- in: claim string, group_key string
UPDATE alarm_delivery SET claim = ? WHERE group_key = ? AND status = 'pending';

-- name: AlarmGroupLease :exec
-- in: lease_owner string, lease_until int64, group_key string
UPDATE alarm_group SET lease_owner = ?, lease_until = ? WHERE group_key = ?;

-- name: AlarmClaimSample :many
-- in: claim string, limit int
-- out: Alarm
SELECT e.id, e.at, e.kind, e.severity, e.job_id, e.run_id, e.dedup_key, e.message, e.raised_by, e.group_id
FROM alarm_delivery d JOIN alarm_event e ON e.id = d.alarm_id
WHERE d.claim = ? AND d.status = 'pending' ORDER BY d.id LIMIT ?;

-- name: AlarmClaimCounts :many
-- in: claim string
-- out: AlarmCount
SELECT e.kind AS kind, e.job_id AS job_id, COUNT(*) AS n
FROM alarm_delivery d JOIN alarm_event e ON e.id = d.alarm_id
WHERE d.claim = ? AND d.status = 'pending'
GROUP BY e.kind, e.job_id ORDER BY n DESC, kind, job_id;

-- name: AlarmGroupSent :exec
-- in: window_until int64, last_sent_at int64, group_key string, lease_owner string
UPDATE alarm_group SET window_until = ?, last_sent_at = ?, attempts = 0, retry_at = 0, last_error = '',
                       lease_owner = '', lease_until = 0
WHERE group_key = ? AND lease_owner = ?;

-- name: AlarmDeliveriesSent :exec
-- in: done_at int64, claim string
UPDATE alarm_delivery SET status = 'sent', done_at = ?, attempts = attempts + 1
WHERE claim = ? AND status = 'pending';

-- name: AlarmGroupFailed :exec
-- in: attempts int, retry_at int64, last_error string, group_key string, lease_owner string
UPDATE alarm_group SET attempts = ?, retry_at = ?, last_error = ?, lease_owner = '', lease_until = 0
WHERE group_key = ? AND lease_owner = ?;

-- name: AlarmDeliveriesFailed :exec
-- in: status string, done_at sql.NullInt64, last_error string, claim string
UPDATE alarm_delivery SET status = ?, done_at = ?, attempts = attempts + 1, last_error = ?
WHERE claim = ? AND status = 'pending';

-- name: AlarmDeliveryCounts :many
-- out: status string, n int
SELECT status, COUNT(*) AS n FROM alarm_delivery GROUP BY status;
