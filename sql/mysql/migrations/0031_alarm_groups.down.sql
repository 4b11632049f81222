DROP INDEX idx_alarm_open ON alarm_event;
DROP INDEX idx_alarm_kind_open ON alarm_event;
DROP INDEX idx_alarm_group ON alarm_event;
ALTER TABLE alarm_event DROP COLUMN group_id, DROP COLUMN executor_id, DROP COLUMN resolved_msg;
DROP TABLE alarm_event_group;
