ALTER TABLE alarm_event DROP COLUMN message_msg;
ALTER TABLE slot_attempt DROP COLUMN error_msg;
ALTER TABLE job_run DROP COLUMN error_msg;
