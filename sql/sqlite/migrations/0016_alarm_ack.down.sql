ALTER TABLE alarm_event DROP COLUMN resolved_by;
ALTER TABLE alarm_event DROP COLUMN resolved_at;
ALTER TABLE alarm_event DROP COLUMN acked_by;
ALTER TABLE alarm_event DROP COLUMN acked_at;
