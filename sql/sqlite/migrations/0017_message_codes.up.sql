-- Server messages as codes: see the MySQL migration of the same version.
ALTER TABLE job_run ADD COLUMN error_msg TEXT NOT NULL DEFAULT '';
ALTER TABLE slot_attempt ADD COLUMN error_msg TEXT NOT NULL DEFAULT '';
ALTER TABLE alarm_event ADD COLUMN message_msg TEXT NOT NULL DEFAULT '';
