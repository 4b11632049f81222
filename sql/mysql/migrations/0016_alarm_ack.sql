-- migrate up
-- An alarm is open until a person acknowledges it (they know, someone is on
-- it) and then resolves it (the cause is dealt with). Who and when, for the
-- console and the audit log; resolving also acknowledges.
ALTER TABLE alarm_event ADD COLUMN acked_at BIGINT NULL, ADD COLUMN acked_by VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN resolved_at BIGINT NULL, ADD COLUMN resolved_by VARCHAR(64) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE alarm_event DROP COLUMN acked_at, DROP COLUMN acked_by, DROP COLUMN resolved_at, DROP COLUMN resolved_by;
