DROP INDEX idx_alarm_open;
DROP INDEX idx_alarm_kind_open;
DROP INDEX idx_alarm_group;
ALTER TABLE alarm_event DROP COLUMN group_id;
ALTER TABLE alarm_event DROP COLUMN executor_id;
ALTER TABLE alarm_event DROP COLUMN resolved_msg;
DROP TABLE alarm_event_group;
