-- migrate up
-- Start rates: see the MySQL migration of the same version.
ALTER TABLE app ADD COLUMN max_starts_per_second INT NULL;

-- migrate down
ALTER TABLE app DROP COLUMN max_starts_per_second;
