-- migrate up
-- A job's scheduling partition (issue 38, docs/architecture.md
-- "Partitions"): partition.Of(id, count), written by the admins — in
-- CreateJob's transaction for a new job, and by any admin replica for the
-- jobs that have none (this migration's existing jobs, jobs loaded in
-- bulk) before it fires them. It cannot be a generated column: the
-- engines compute those before the auto-increment id is known. The
-- replica that owns a partition claims its due jobs by
-- idx_job_partition_due, one range per owned partition; the wake-up
-- reads its first entry per partition. NULL until filled: such a job is
-- not fired by partition until an admin fills it (within a second).
ALTER TABLE job ADD COLUMN partition_id INT NULL;
CREATE INDEX idx_job_partition_due ON job (partition_id, enabled, paused, next_fire_at);

-- migrate down
DROP INDEX idx_job_partition_due;
ALTER TABLE job DROP COLUMN partition_id;
