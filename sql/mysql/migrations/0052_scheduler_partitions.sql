-- migrate up
-- Scheduling partitions (issue 38, docs/architecture.md "Partitions"): the
-- fencing record of each of the installation's partitions, as the leader
-- table is for the whole leadership. An admin that the published
-- assignment makes the owner of a partition claims the partition's epoch
-- here (only upwards); every write of that partition's scheduling reads
-- its row with a shared lock and aborts unless the epoch is still its
-- own, so a paused former owner writes nothing after the hand-over. A row
-- is created by the first claim of its partition.
CREATE TABLE scheduler_partition (
  id         INT           NOT NULL PRIMARY KEY,
  epoch      BIGINT        NOT NULL DEFAULT 0,
  holder     VARCHAR(255)  NOT NULL DEFAULT '',
  claimed_ms BIGINT        NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- migrate down
DROP TABLE scheduler_partition;
