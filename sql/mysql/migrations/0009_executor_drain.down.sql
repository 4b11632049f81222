ALTER TABLE executor DROP COLUMN drain_requested;
