ALTER TABLE slot_attempt DROP COLUMN failures;
