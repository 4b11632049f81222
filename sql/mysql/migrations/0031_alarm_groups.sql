-- migrate up
-- Alarm groups (docs/alarms.md): the alarms of one run, of one job within an
-- hour, or of one kind and app within an hour, are one group, listed as one
-- row with a count and acknowledged or resolved together. alarm_event_group
-- only gives a group its id: scope is what its alarms share (run:7, job:42,
-- kind:executor_lost:billing), group_key is unique (the scope of a run; the
-- scope and the creation instant otherwise: a new group of the scope starts
-- an hour after the last one started). Counts, first and last seen and the
-- worst severity are read from the members.
CREATE TABLE alarm_event_group (
  id          BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
  group_key   VARCHAR(191) NOT NULL,
  scope       VARCHAR(191) NOT NULL DEFAULT '',
  app         VARCHAR(64)  NOT NULL DEFAULT '',
  created_at  BIGINT       NOT NULL,
  UNIQUE KEY uk_alarm_event_group (group_key),
  KEY idx_alarm_event_group_scope (scope, created_at)
) ENGINE=InnoDB;
-- group_id: the alarm's group. executor_id: the executor an executor_lost
-- alarm is about (resolved by itself when it heartbeats again).
-- resolved_msg: why the admin resolved an alarm by itself (a message code).
ALTER TABLE alarm_event ADD COLUMN group_id BIGINT NULL, ADD COLUMN executor_id BIGINT NULL,
  ADD COLUMN resolved_msg VARCHAR(1024) NOT NULL DEFAULT '';
-- Each existing alarm is a group of its own, with the alarm's id.
INSERT INTO alarm_event_group (id, group_key, scope, app, created_at)
SELECT id, CONCAT('alarm:', id), CONCAT('alarm:', id), app, at FROM alarm_event;
UPDATE alarm_event SET group_id = id;
CREATE INDEX idx_alarm_group ON alarm_event (group_id, id);
CREATE INDEX idx_alarm_kind_open ON alarm_event (kind, resolved_at);
-- Open alarms (resolved_at IS NULL) are found without a scan: Open only, bulk resolve.
CREATE INDEX idx_alarm_open ON alarm_event (resolved_at, group_id);

-- migrate down
DROP INDEX idx_alarm_open ON alarm_event;
DROP INDEX idx_alarm_kind_open ON alarm_event;
DROP INDEX idx_alarm_group ON alarm_event;
ALTER TABLE alarm_event DROP COLUMN group_id, DROP COLUMN executor_id, DROP COLUMN resolved_msg;
DROP TABLE alarm_event_group;
