-- migrate up
-- Per-run cost (issue 36): three indexes of job_run that had `status` in
-- them, although the queries that read them look for a few runs only, were
-- rewritten by every status change of every run — a run changes status
-- twice (pending → running → ended), each change rewrote six secondary
-- index entries. Now:
--   idx_run_start_after (start_after) and idx_run_held_until (held_until):
--     the wake-up (RunNextPending) reads the smallest start_after / held_until
--     after now of a pending run; the runs with such a value in the future
--     are, but for a few cancelled ones, exactly the pending jittered or
--     held runs, so the status need not be in the index. Neither column
--     changes when a run starts or ends.
--   idx_run_backfill (backfill_id, backfill_status): backfill_status is the
--     run's status for a backfill's run and NULL for every other run, so a
--     plain run's status changes leave its entry alone; the backfill's turn
--     (JobBackfillTurns) still reads only the running and pending runs of
--     its backfills.
-- A start and a settle now rewrite three entries each instead of six.
-- BenchmarkStartRuns and BenchmarkFinishResults measure them against the
-- former indexes side by side. Adding the stored column rebuilds job_run
-- (minutes at tens of millions of runs; run it in a quiet hour).
ALTER TABLE job_run
  DROP INDEX idx_run_start_after, DROP INDEX idx_run_held_until, DROP INDEX idx_run_backfill,
  ADD COLUMN backfill_status VARCHAR(24) AS (CASE WHEN backfill_id = 0 THEN NULL ELSE status END) STORED,
  ADD INDEX idx_run_start_after (start_after), ADD INDEX idx_run_held_until (held_until),
  ADD INDEX idx_run_backfill (backfill_id, backfill_status);

-- migrate down
ALTER TABLE job_run
  DROP INDEX idx_run_start_after, DROP INDEX idx_run_held_until, DROP INDEX idx_run_backfill,
  DROP COLUMN backfill_status,
  ADD INDEX idx_run_start_after (status, start_after), ADD INDEX idx_run_held_until (status, held_until),
  ADD INDEX idx_run_backfill (backfill_id, status);
