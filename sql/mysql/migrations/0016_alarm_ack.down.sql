ALTER TABLE alarm_event DROP COLUMN acked_at, DROP COLUMN acked_by, DROP COLUMN resolved_at, DROP COLUMN resolved_by;
