-- Named queries of package records, for both dialects.
--
-- A query starts with a line "-- name: Name"; "-- name: Name.mysql",
-- "-- name: Name.postgres" and "-- name: Name.sqlite" give a dialect its own
-- text, which wins over the shared one; each name is run by the constant qName of queries_gen.go
-- (go generate, with sql/archive.sql). Macros replaced per dialect when the
-- file is loaded:
--   {{now_ms}}         the database clock in Unix milliseconds
--   {{insert_ignore}}  INSERT IGNORE (MySQL) / INSERT OR IGNORE (SQLite) /
--                      INSERT … ON CONFLICT DO NOTHING (PostgreSQL: the clause
--                      is put at the end of the statement)
--   {{for_update}}     FOR UPDATE (MySQL, PostgreSQL) / nothing (SQLite: one writer at a time)
-- Placeholders are "?" on every dialect; on PostgreSQL they are numbered
-- ($1, $2, …) when the query is loaded, or after the batch's expansion.
-- and per call, for the size of the batch:
--   {{list}}           ?, ?, …            (n placeholders)
--   {{cases}}          WHEN ? THEN ? …    (n pairs)
--   {{rows}} (tuple)   the tuple, n times, comma-separated (multi-row insert)
--
-- Dedup writes take their timestamps ("now") from LockCheck, the first
-- statement of their transaction, so that one transaction uses one instant
-- of the database clock.

-- name: DBNow
SELECT {{now_ms}};

-- ---------------------------------------------------------------- shard_lock

-- Take a lock that does not exist yet. Nothing happens when it exists.
-- args: job, run, slot, token, holder, lease_ms
-- name: LockInsert
{{insert_ignore}} INTO shard_lock (job_id, run_id, slot, token, holder, lease_until, acquired_at, released_at)
VALUES (?, ?, ?, ?, ?, {{now_ms}} + ?, {{now_ms}}, NULL);

-- The lock, locked for the decision of Acquire.
-- name: LockRead
SELECT token, holder, lease_until, released_at, {{now_ms}} FROM shard_lock
WHERE job_id = ? AND run_id = ? AND slot = ? {{for_update}};

-- args: token, holder, lease_ms, job, run, slot
-- name: LockTake
UPDATE shard_lock
SET token = ?, holder = ?, lease_until = {{now_ms}} + ?, acquired_at = {{now_ms}}, released_at = NULL
WHERE job_id = ? AND run_id = ? AND slot = ?;

-- args: lease_ms, job, run, slot, token, holder
-- name: LockRenew
UPDATE shard_lock SET lease_until = {{now_ms}} + ?
WHERE job_id = ? AND run_id = ? AND slot = ? AND token = ? AND holder = ? AND released_at IS NULL;

-- Release marks the row: deleting it would let an older token in again.
-- args: job, run, slot, token, holder
-- name: LockRelease
UPDATE shard_lock SET released_at = {{now_ms}}, lease_until = {{now_ms}}
WHERE job_id = ? AND run_id = ? AND slot = ? AND token = ? AND holder = ? AND released_at IS NULL;

-- The fencing check, first statement of every dedup write transaction. On
-- MySQL a shared lock: the writes of one holder run in parallel, and a newer
-- token's takeover (an exclusive lock) waits until they committed, so every
-- transaction either commits before the takeover or sees it. On SQLite a
-- no-op write, which takes the database's write lock first thing (a
-- transaction that reads first may fail to upgrade to writing).
-- args: job, run, slot → token, holder, now
-- name: LockCheck.mysql
SELECT token, holder, {{now_ms}} FROM shard_lock
WHERE job_id = ? AND run_id = ? AND slot = ? LOCK IN SHARE MODE;

-- name: LockCheck.postgres
SELECT token, holder, {{now_ms}} FROM shard_lock
WHERE job_id = ? AND run_id = ? AND slot = ? FOR SHARE;

-- name: LockCheck.sqlite
UPDATE shard_lock SET token = token
WHERE job_id = ? AND run_id = ? AND slot = ?
RETURNING token, holder, {{now_ms}};

-- Which of these tokens still hold a live lock of the job (an attempt that
-- may still finish its pending records)?
-- args: job, now, tokens…
-- name: LockLive
SELECT DISTINCT token FROM shard_lock
WHERE job_id = ? AND released_at IS NULL AND lease_until > ? AND token IN ({{list}});

-- args: older_than_ms, limit
-- name: LockPurge.mysql
DELETE FROM shard_lock WHERE lease_until < {{now_ms}} - ? LIMIT ?;

-- name: LockPurge.postgres
DELETE FROM shard_lock WHERE ctid IN (
  SELECT ctid FROM shard_lock WHERE lease_until < {{now_ms}} - ? LIMIT ?);

-- name: LockPurge.sqlite
DELETE FROM shard_lock WHERE rowid IN (
  SELECT rowid FROM shard_lock WHERE lease_until < {{now_ms}} - ? LIMIT ?);

-- -------------------------------------------------------------- dedup_record

-- Claim: one multi-row insert per batch; rows that exist are left alone.
-- args per row: job, scope, key, status, token, run, now, now
-- name: DedupInsert
{{insert_ignore}} INTO dedup_record
  (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at)
VALUES {{rows}} (?, ?, ?, ?, 1, ?, ?, '', ?, ?);

-- MySQL: the same as one INSERT … SELECT from a JSON array of the keys in
-- hex (JSON_TABLE: MySQL 8.0.4, MariaDB 10.6). It parses in about half the
-- time of a 1000-row VALUES list, the largest cost of a claim.
-- args: job, scope, status, token, run, now, now, '["6b31", …]'
-- name: DedupInsert.mysql
INSERT IGNORE INTO dedup_record
  (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at)
SELECT ?, ?, UNHEX(j.k), ?, 1, ?, ?, '', ?, ?
FROM JSON_TABLE(?, '$[*]' COLUMNS (k VARCHAR(510) PATH '$')) AS j;

-- PostgreSQL: the same from the JSON array of keys in hex (the arguments of
-- MySQL's), cast where PostgreSQL cannot infer a type from an INSERT's SELECT.
-- name: DedupInsert.postgres
INSERT INTO dedup_record
  (job_id, scope, record_key, status, attempts, token, run_id, error, created_at, updated_at)
SELECT CAST(? AS BIGINT), CAST(? AS BYTEA), decode(j.k, 'hex'), CAST(? AS TEXT), 1, CAST(? AS BIGINT), CAST(? AS BIGINT), '',
       CAST(? AS BIGINT), CAST(? AS BIGINT)
FROM json_array_elements_text(CAST(? AS JSON)) AS j(k)
ON CONFLICT DO NOTHING;

-- The rows of a batch, current and locked (MySQL, PostgreSQL).
-- args: job, scope, keys…
-- name: DedupRead
SELECT record_key, status, attempts, token FROM dedup_record
WHERE job_id = ? AND scope = ? AND record_key IN ({{list}}) {{for_update}};

-- Take rows over for a retry, compare-and-set on what Read returned.
-- args: token, run, now, job, scope, old status, old token, old attempts, keys…
-- name: DedupTake
UPDATE dedup_record
SET status = 'pending', token = ?, run_id = ?, attempts = attempts + 1, error = '', updated_at = ?
WHERE job_id = ? AND scope = ? AND status = ? AND token = ? AND attempts = ? AND record_key IN ({{list}});

-- args: now, job, scope, token, keys…
-- name: DedupDone
UPDATE dedup_record SET status = 'done', error = '', updated_at = ?
WHERE job_id = ? AND scope = ? AND token = ? AND status = 'pending' AND record_key IN ({{list}});

-- args: (key, error)…, now, job, scope, token, keys…
-- name: DedupFail
UPDATE dedup_record SET status = 'failed', error = CASE record_key {{cases}} END, updated_at = ?
WHERE job_id = ? AND scope = ? AND token = ? AND status <> 'failed' AND record_key IN ({{list}});

-- Give back records claimed and not applied (the Process call stopped
-- first): failed, without spending an attempt, so that the next attempt
-- takes them whatever its uncertain-record policy.
-- args: now, job, scope, token, keys…
-- name: DedupUnclaim
UPDATE dedup_record
SET status = 'failed', attempts = attempts - 1,
    error = 'given back: the Process call stopped before this record was applied', updated_at = ?
WHERE job_id = ? AND scope = ? AND token = ? AND status = 'pending' AND record_key IN ({{list}});

-- The same for records taken over as uncertain: they stay pending, so that
-- the next attempt sees them as uncertain too.
-- args: now, job, scope, token, keys…
-- name: DedupUnclaimUncertain
UPDATE dedup_record SET attempts = attempts - 1, updated_at = ?
WHERE job_id = ? AND scope = ? AND token = ? AND status = 'pending' AND record_key IN ({{list}});
