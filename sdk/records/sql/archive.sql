-- Named queries of records.Archive (same format and macros as queries.sql).
--
-- The walk is keyset-only, never OFFSET: a (job_id, scope) group is found
-- from the previous one with one seek on the primary key, and inside a
-- group the rows are read in windows "record_key > last key ORDER BY
-- record_key LIMIT n", again a primary-key range. Each window is read
-- without locks; then the window's rows to move are locked, copied and
-- deleted in one short transaction, by the same primary-key range.

-- The first group of a job after a scope (scope '' for the first one).
-- args: job, scope
-- name: ArchiveNextScope
SELECT scope FROM dedup_record WHERE job_id = ? AND scope > ? ORDER BY scope LIMIT 1;

-- The first group of the next job.
-- args: job
-- name: ArchiveNextJob
SELECT job_id, scope FROM dedup_record WHERE job_id > ? ORDER BY job_id, scope LIMIT 1;

-- One window of a group, read without locks.
-- args: job, scope, after key, limit
-- name: ArchiveScan
SELECT record_key, status, updated_at FROM dedup_record
WHERE job_id = ? AND scope = ? AND record_key > ?
ORDER BY record_key LIMIT ?;

-- The rows to move of one window (after key, last key], in one short
-- transaction. MySQL runs it READ COMMITTED (PostgreSQL's default): the locking read locks the
-- matching rows only (rows that do not match are unlocked at once, and no
-- gap is locked), so that the copy and the delete see exactly those rows.
-- On SQLite the transaction is alone (one writer) and starts with the copy.
-- args: job, scope, after key, last key, cutoff
-- name: ArchiveLock
SELECT COUNT(*) FROM dedup_record
WHERE job_id = ? AND scope = ? AND record_key > ? AND record_key <= ?
  AND status = 'done' AND updated_at < ? {{for_update}};
-- (PostgreSQL locks no rows under an aggregate: count the locked rows.)
-- name: ArchiveLock.postgres
SELECT COUNT(*) FROM (SELECT 1 FROM dedup_record
  WHERE job_id = ? AND scope = ? AND record_key > ? AND record_key <= ?
    AND status = 'done' AND updated_at < ? FOR UPDATE) locked;

-- args: now, job, scope, after key, last key, cutoff
-- name: ArchiveCopy
{{insert_ignore}} INTO dedup_record_archive
  (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at, archived_at)
SELECT job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at, ?
FROM dedup_record
WHERE job_id = ? AND scope = ? AND record_key > ? AND record_key <= ?
  AND status = 'done' AND updated_at < ?;

-- args: job, scope, after key, last key, cutoff
-- name: ArchiveDelete
DELETE FROM dedup_record
WHERE job_id = ? AND scope = ? AND record_key > ? AND record_key <= ?
  AND status = 'done' AND updated_at < ?;
