-- migrate up
-- A job's jitter window (docs/schedules.md, "Jitter window"): a duration
-- as the job states it ("10m"; '' for none). Each scheduled run of such a
-- job keeps start_after, the instant (Unix ms) before which the leader does
-- not start it: its scheduled time plus a deterministic offset in [0,
-- window); 0 for a run that may start at its scheduled time. The run key
-- stays (job_id, scheduled_at). idx_run_start_after finds the next pending
-- run to wake for.
ALTER TABLE job ADD COLUMN jitter_window VARCHAR(32) NOT NULL DEFAULT '';
ALTER TABLE job_run ADD COLUMN start_after BIGINT NOT NULL DEFAULT 0,
  ADD KEY idx_run_start_after (status, start_after);

-- migrate down
ALTER TABLE job_run DROP INDEX idx_run_start_after, DROP COLUMN start_after;
ALTER TABLE job DROP COLUMN jitter_window;
