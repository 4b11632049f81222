-- migrate up
-- One job, several zones (docs/schedules.md, "Several zones"): time_zones
-- is the job's list of IANA zones, comma-separated in list order, when it
-- has more than one ('' for a job with one zone, which time_zone holds; with
-- several, time_zone is the first of them). job_run.time_zone already holds
-- the zone of each firing.
ALTER TABLE job ADD COLUMN time_zones VARCHAR(600) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE job DROP COLUMN time_zones;
