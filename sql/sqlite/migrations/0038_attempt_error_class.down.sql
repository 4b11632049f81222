ALTER TABLE slot_attempt DROP COLUMN retry_after_ms;
ALTER TABLE slot_attempt DROP COLUMN error_class;
