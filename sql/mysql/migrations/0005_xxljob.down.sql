ALTER TABLE executor DROP COLUMN protocol;
