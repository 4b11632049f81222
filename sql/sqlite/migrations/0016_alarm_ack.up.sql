-- Acknowledging and resolving alarms: see the MySQL migration of the same
-- version.
ALTER TABLE alarm_event ADD COLUMN acked_at BIGINT NULL;
ALTER TABLE alarm_event ADD COLUMN acked_by VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE alarm_event ADD COLUMN resolved_at BIGINT NULL;
ALTER TABLE alarm_event ADD COLUMN resolved_by VARCHAR(64) NOT NULL DEFAULT '';
