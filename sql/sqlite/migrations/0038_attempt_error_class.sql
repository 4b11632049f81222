-- migrate up
-- Error classes of failed attempts: see the MySQL migration of the same
-- version.
ALTER TABLE slot_attempt ADD COLUMN error_class VARCHAR(16) NOT NULL DEFAULT '';
ALTER TABLE slot_attempt ADD COLUMN retry_after_ms BIGINT NULL;

-- migrate down
ALTER TABLE slot_attempt DROP COLUMN retry_after_ms;
ALTER TABLE slot_attempt DROP COLUMN error_class;
