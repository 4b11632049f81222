-- migrate up
-- Windows and one-offs of a job (docs/schedules.md, "Windows and
-- one-offs"): start_at and end_at (Unix ms, NULL for none) bound its
-- firings; max_runs (0: no limit) ends it after that many successful
-- scheduled runs. A job that will not fire again for one of these reasons
-- (or because its one-time @at schedule fired) is completed: completed_at
-- is when the leader found it so, completed_msg why (a message code, as
-- job_run.error_msg); an edit of the job plans it again. pause_until: a
-- paused job that the leader resumes by itself at that instant (NULL: a
-- pause without end, or not paused), indexed for the leader's look-up.
ALTER TABLE job ADD COLUMN start_at BIGINT NULL,
  ADD COLUMN end_at BIGINT NULL,
  ADD COLUMN max_runs INT NOT NULL DEFAULT 0,
  ADD COLUMN completed_at BIGINT NULL,
  ADD COLUMN completed_msg VARCHAR(2048) NOT NULL DEFAULT '',
  ADD COLUMN pause_until BIGINT NULL,
  ADD KEY idx_job_pause_until (pause_until);

-- migrate down
ALTER TABLE job DROP KEY idx_job_pause_until, DROP COLUMN pause_until, DROP COLUMN completed_msg, DROP COLUMN completed_at, DROP COLUMN max_runs, DROP COLUMN end_at, DROP COLUMN start_at;
