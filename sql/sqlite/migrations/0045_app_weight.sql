-- migrate up
-- Fair share: see the MySQL migration of the same version.
ALTER TABLE app ADD COLUMN weight INT NULL;

-- migrate down
ALTER TABLE app DROP COLUMN weight;
