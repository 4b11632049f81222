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
