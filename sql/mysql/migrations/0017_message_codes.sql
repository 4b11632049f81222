-- migrate up
-- Server messages as a code with arguments (admin/msg), next to their
-- English text: the console shows them in the reader's language. '' when
-- the message has no code (a handler's own error, rows written before).
ALTER TABLE job_run ADD COLUMN error_msg VARCHAR(2048) NOT NULL DEFAULT '';
ALTER TABLE slot_attempt ADD COLUMN error_msg VARCHAR(2048) NOT NULL DEFAULT '';
ALTER TABLE alarm_event ADD COLUMN message_msg VARCHAR(2048) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE alarm_event DROP COLUMN message_msg;
ALTER TABLE slot_attempt DROP COLUMN error_msg;
ALTER TABLE job_run DROP COLUMN error_msg;
