-- migrate up
-- One job, several zones: see the MySQL migration of the same version.
ALTER TABLE job ADD COLUMN time_zones TEXT NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE job DROP COLUMN time_zones;
