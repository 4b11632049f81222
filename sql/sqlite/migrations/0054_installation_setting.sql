-- migrate up
-- Settings that every admin of an installation must share, recorded by the
-- first admin that starts with them (issue 38). partition_count: the
-- number of scheduling partitions, on which every job's stored
-- partition_id depends. An admin started with another count refuses to
-- start; `shardjob-admin repartition` changes it while every admin is
-- stopped (docs/operations.md).
CREATE TABLE installation_setting (
  name   VARCHAR(64) NOT NULL PRIMARY KEY,
  value  BIGINT      NOT NULL,
  set_ms BIGINT      NOT NULL
);

-- migrate down
DROP TABLE installation_setting;
