-- Scheduling partitions (issue 38, docs/architecture.md "Partitions"). The
-- macros are those of queries.sql.
--
-- scheduler_partition holds the fencing record of each partition that was
-- ever claimed: the epoch of its current owner, who that is and since
-- when. Epochs only go up: a claim with an epoch not above the recorded
-- one changes nothing, and the owner's scheduling transactions read the
-- row with a shared lock, so that a claim waits for them and they cannot
-- commit after it.

-- name: PartitionCreate :exec
-- in: id int
-- The row of a partition never claimed before, at epoch 0.
{{insert_ignore}} INTO scheduler_partition (id, epoch, holder, claimed_ms) VALUES (?, 0, '', 0);

-- name: PartitionClaim :exec
-- in: epoch int64, holder string, id int, epoch int64
UPDATE scheduler_partition SET epoch = ?, holder = ?, claimed_ms = {{now_ms}} WHERE id = ? AND epoch < ?;

-- name: PartitionGet :one
-- in: id int
-- out: PartitionRecord
SELECT id, epoch, holder, claimed_ms FROM scheduler_partition WHERE id = ?;

-- name: PartitionEpochShared :one
-- in: id int
-- out: epoch int64
SELECT epoch FROM scheduler_partition WHERE id = ? {{lock_shared}};

-- name: Partitions :many
-- out: PartitionRecord
-- Every claimed partition (at most the installation's partition count).
SELECT id, epoch, holder, claimed_ms FROM scheduler_partition ORDER BY id;

-- Jobs by partition. A job's partition_id is partition.Of(id, count):
-- {{partition_hash(id)}} is its 32-bit hash (the id's halves added, times
-- 1640531527, modulo 2^32; every intermediate fits in a signed BIGINT),
-- scaled here to 0..count-1 by h·count/2^32. TestPartitionOfSQLAgrees
-- checks it against the Go function on every dialect.

-- name: JobsPartitionUnset :many
-- in: limit int
-- out: id int64
-- Jobs whose partition_id is not filled yet (a range of
-- idx_job_partition_due: NULL sorts first).
SELECT id FROM job WHERE partition_id IS NULL LIMIT ?;

-- name: JobsPartitionFill :exec
-- in: count int, ids []int64
UPDATE job SET partition_id = {{partition_hash(id)}} * ? {{idiv}} 4294967296 WHERE id IN (?) AND partition_id IS NULL;

-- name: JobsPartitionFillAll :exec
-- in: count int
-- Every unfilled job in one statement: for loaders that write jobs in
-- bulk (one long transaction; the admins fill by JobsPartitionFill).
UPDATE job SET partition_id = {{partition_hash(id)}} * ? {{idiv}} 4294967296 WHERE partition_id IS NULL;

-- name: JobClaimDueIn :many
-- in: partitions []int, next_fire_at int64, limit int
-- out: Job
-- The due jobs of some partitions, locked (SKIP LOCKED): one range of
-- idx_job_partition_due per partition, read in index order — by
-- partition, then oldest first — and stopped at the limit. No ORDER BY:
-- over an IN list an engine may sort every due row first (PostgreSQL 15
-- does), which at a herd of 100,000 would read the herd for each batch.
-- The index is forced: an IN list of more than 200 partitions is costed
-- from index statistics on MariaDB, which lag behind a herd
-- (TestInListsKeepTheirIndexWithStaleStatistics).
SELECT {{JobColumns}}
FROM job {{force_index(idx_job_partition_due)}}
WHERE partition_id IN (?) AND enabled = 1 AND paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
LIMIT ? {{for_update_skip_locked}};

-- name: JobNextDueIn :one
-- in: partitions []int
-- out: next_fire_at sql.NullInt64
-- The earliest next firing among some partitions: the first entry of each
-- partition's range of idx_job_partition_due (one index dive per
-- partition), the smallest of them. The index is forced: during a bulk
-- load (planned while the job table was nearly empty) MariaDB chose
-- another plan and read over a million rows per call.
SELECT MIN((SELECT j.next_fire_at FROM job j {{force_index(idx_job_partition_due)}}
            WHERE j.partition_id = sp.id AND j.enabled = 1 AND j.paused = 0 AND j.next_fire_at IS NOT NULL
            ORDER BY j.next_fire_at LIMIT 1))
FROM scheduler_partition sp WHERE sp.id IN (?);

-- name: JobCountDueIn :one
-- in: partitions []int, next_fire_at int64, limit int
-- out: n int
-- Counts up to the limit only (the pre-read window needs no more).
SELECT COUNT(*) FROM (SELECT 1 FROM job {{force_index(idx_job_partition_due)}} WHERE partition_id IN (?) AND enabled = 1 AND paused = 0 AND next_fire_at IS NOT NULL AND next_fire_at <= ?
                      LIMIT ?) d;

-- name: JobsResumeDueIn :exec
-- in: pause_until int64, partitions []int
-- JobsResumeDue for some partitions (a range of idx_job_pause_until: few
-- jobs are paused until an instant; "+partition_id" keeps SQLite, which
-- has no index hints, from reading every job of the partitions by
-- idx_job_partition_due instead).
UPDATE job {{force_index(idx_job_pause_until)}} SET paused = 0, pause_until = NULL, updated_at = {{now_ms}}, version = version + 1 WHERE pause_until <= ? AND +partition_id IN (?);

-- name: JobNextPauseEndIn :one
-- in: partitions []int
-- out: pause_until sql.NullInt64
-- A range of idx_job_pause_until, as JobsResumeDueIn.
SELECT MIN(pause_until) FROM job {{force_index(idx_job_pause_until)}} WHERE pause_until IS NOT NULL AND +partition_id IN (?);

-- name: PartitionEpochsShared :many
-- in: ids []int
-- out: PartitionEpoch
-- The epochs of some partitions, read with a shared lock (in partition
-- order, as ClaimPartitions takes them).
SELECT id, epoch FROM scheduler_partition WHERE id IN (?) ORDER BY id {{lock_shared}};

-- name: PartitionsNextDue :many
-- out: PartitionNextDue
-- Each claimed partition's earliest next firing (one index dive each):
-- the Cluster page's firing lag of a partition is how far that is in
-- the past.
SELECT sp.id, (SELECT j.next_fire_at FROM job j
               WHERE j.partition_id = sp.id AND j.enabled = 1 AND j.paused = 0 AND j.next_fire_at IS NOT NULL
               ORDER BY j.next_fire_at LIMIT 1) AS next_due
FROM scheduler_partition sp ORDER BY sp.id;

-- Settings every admin of an installation shares (installation_setting,
-- migration 0054): the partition count.

-- name: SettingRecord :exec
-- in: name string, value int64
-- Records a setting unless one is recorded already.
{{insert_ignore}} INTO installation_setting (name, value, set_ms) VALUES (?, ?, {{now_ms}});

-- name: SettingGet :one
-- in: name string
-- out: value int64
SELECT value FROM installation_setting WHERE name = ?;

-- name: SettingPut :exec
-- in: name string, value int64
-- Records a setting, replacing the value recorded before.
INSERT INTO installation_setting (name, value, set_ms) VALUES (?, ?, {{now_ms}})
{{upsert(name)}} value = {{excluded(value)}}, set_ms = {{excluded(set_ms)}};

-- name: JobIDMax :one
-- out: id int64
SELECT COALESCE(MAX(id), 0) FROM job;

-- name: JobsPartitionClear :exec
-- in: after int64, upto int64
-- Forgets the partition of the jobs of one id range (by the primary key),
-- for a change of the partition count.
UPDATE job SET partition_id = NULL WHERE id > ? AND id <= ? AND partition_id IS NOT NULL;

-- name: PartitionsForget :exec
-- Every partition's fencing record, for a change of the partition count
-- (epochs stay above every earlier one without them: they are built from
-- the leader's term).
DELETE FROM scheduler_partition;
