-- migrate up
-- Acknowledging and resolving alarms: see the MySQL migration of the same
-- version.
ALTER TABLE alarm_event ADD COLUMN acked_at BIGINT NULL;
ALTER TABLE alarm_event ADD COLUMN acked_by VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE alarm_event ADD COLUMN resolved_at BIGINT NULL;
ALTER TABLE alarm_event ADD COLUMN resolved_by VARCHAR(64) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE alarm_event DROP COLUMN resolved_by;
ALTER TABLE alarm_event DROP COLUMN resolved_at;
ALTER TABLE alarm_event DROP COLUMN acked_by;
ALTER TABLE alarm_event DROP COLUMN acked_at;
