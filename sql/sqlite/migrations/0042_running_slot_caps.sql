-- migrate up
-- Concurrency caps: see the MySQL migration of the same version.
ALTER TABLE app ADD COLUMN max_running_slots INT NULL;
ALTER TABLE job ADD COLUMN max_running_slots INT NULL;

-- migrate down
ALTER TABLE job DROP COLUMN max_running_slots;
ALTER TABLE app DROP COLUMN max_running_slots;
