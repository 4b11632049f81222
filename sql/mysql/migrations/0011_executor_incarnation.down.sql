ALTER TABLE executor DROP COLUMN incarnation;
