ALTER TABLE slot_attempt DROP COLUMN error_class, DROP COLUMN retry_after_ms;
