ALTER TABLE job DROP COLUMN completed_msg, DROP COLUMN completed_at, DROP COLUMN max_runs, DROP COLUMN end_at, DROP COLUMN start_at;
