-- migrate up
-- Start rates (issue 33): the most runs of an app the leader starts a
-- second (a token bucket; NULL: no limit, every app after this migration).
ALTER TABLE app ADD COLUMN max_starts_per_second INT NULL;

-- migrate down
ALTER TABLE app DROP COLUMN max_starts_per_second;
