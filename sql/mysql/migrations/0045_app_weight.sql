-- migrate up
-- Fair share (issue 33): an app's weight in the platform's shared
-- capacity (--max-running-slots); NULL: 1, every app after this migration.
ALTER TABLE app ADD COLUMN weight INT NULL;

-- migrate down
ALTER TABLE app DROP COLUMN weight;
