-- migrate up
-- Server messages as codes: see the MySQL migration of the same version.
ALTER TABLE job_run ADD COLUMN error_msg TEXT NOT NULL DEFAULT '';
ALTER TABLE slot_attempt ADD COLUMN error_msg TEXT NOT NULL DEFAULT '';
ALTER TABLE alarm_event ADD COLUMN message_msg TEXT NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE alarm_event DROP COLUMN message_msg;
ALTER TABLE slot_attempt DROP COLUMN error_msg;
ALTER TABLE job_run DROP COLUMN error_msg;
