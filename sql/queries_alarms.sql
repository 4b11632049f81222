-- Named queries of alarm delivery (admin/alarm, docs/alarms.md). Same format
-- and macros as queries.sql. Times are Unix milliseconds of the notifier's
-- clock, passed as parameters so that tests can inject a clock.

-- name: AlarmRouteList
SELECT job_id, channel, recipient FROM job_alarm_route WHERE job_id = ? ORDER BY channel, recipient;

-- name: AlarmRouteDeleteJob
DELETE FROM job_alarm_route WHERE job_id = ?;

-- name: AlarmRouteInsert
INSERT INTO job_alarm_route (job_id, channel, recipient) VALUES (?, ?, ?);

-- name: AlarmFanOutClaim
SELECT id, at, kind, severity, job_id, run_id, dedup_key, message, raised_by, group_id FROM alarm_event
WHERE fanned_out = 0 ORDER BY id LIMIT ? {{for_update_skip_locked}};

-- The claimed alarms that follow another alarm of their group, one still
-- open and raised before them: they send no message of their own (one
-- message per group; the group's count is in the console).
-- name: AlarmFanOutFollowers
SELECT e.id FROM alarm_event e WHERE e.id IN (?)
  AND EXISTS (SELECT 1 FROM alarm_event p WHERE p.group_id = e.group_id AND p.id < e.id AND p.resolved_at IS NULL);

-- name: AlarmFanOutMark
UPDATE alarm_event SET fanned_out = 1 WHERE id IN (?);

-- name: AlarmGroupEnsure
{{insert_ignore}} INTO alarm_group (group_key, channel, recipient, job_id, kind) VALUES (?, ?, ?, ?, ?);

-- name: AlarmDeliveryInsert
{{insert_ignore}} INTO alarm_delivery (alarm_id, group_key, status, created_at) VALUES (?, ?, 'pending', ?);

-- name: AlarmGroupsDue
SELECT group_key, channel, recipient, job_id, kind, window_until, attempts FROM alarm_group g
WHERE window_until <= ? AND retry_at <= ? AND lease_until <= ?
  AND EXISTS (SELECT 1 FROM alarm_delivery d WHERE d.group_key = g.group_key AND d.status = 'pending')
ORDER BY retry_at, group_key LIMIT ? {{for_update_skip_locked}};

-- name: AlarmDeliveryOldest
SELECT id, created_at FROM alarm_delivery WHERE group_key = ? AND status = 'pending' ORDER BY id LIMIT 1;

-- name: AlarmDeliveryClaimOne
UPDATE alarm_delivery SET claim = ? WHERE id = ?;

-- name: AlarmDeliveryClaimGroup
UPDATE alarm_delivery SET claim = ? WHERE group_key = ? AND status = 'pending';

-- name: AlarmGroupLease
UPDATE alarm_group SET lease_owner = ?, lease_until = ? WHERE group_key = ?;

-- name: AlarmClaimSample
SELECT e.id, e.at, e.kind, e.severity, e.job_id, e.run_id, e.dedup_key, e.message, e.raised_by, e.group_id
FROM alarm_delivery d JOIN alarm_event e ON e.id = d.alarm_id
WHERE d.claim = ? AND d.status = 'pending' ORDER BY d.id LIMIT ?;

-- name: AlarmClaimCounts
SELECT e.kind AS kind, e.job_id AS job_id, COUNT(*) AS n
FROM alarm_delivery d JOIN alarm_event e ON e.id = d.alarm_id
WHERE d.claim = ? AND d.status = 'pending'
GROUP BY e.kind, e.job_id ORDER BY n DESC, kind, job_id;

-- name: AlarmGroupSent
UPDATE alarm_group SET window_until = ?, last_sent_at = ?, attempts = 0, retry_at = 0, last_error = '',
                       lease_owner = '', lease_until = 0
WHERE group_key = ? AND lease_owner = ?;

-- name: AlarmDeliveriesSent
UPDATE alarm_delivery SET status = 'sent', done_at = ?, attempts = attempts + 1
WHERE claim = ? AND status = 'pending';

-- name: AlarmGroupFailed
UPDATE alarm_group SET attempts = ?, retry_at = ?, last_error = ?, lease_owner = '', lease_until = 0
WHERE group_key = ? AND lease_owner = ?;

-- name: AlarmDeliveriesFailed
UPDATE alarm_delivery SET status = ?, done_at = ?, attempts = attempts + 1, last_error = ?
WHERE claim = ? AND status = 'pending';

-- name: AlarmDeliveryCounts
SELECT status, COUNT(*) AS n FROM alarm_delivery GROUP BY status;
