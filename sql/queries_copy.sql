-- Copying an installation between databases (admin/store/copy.go,
-- `shardjob-admin copy`): what the copy reads of each database's catalog.
-- The statements that move the rows are written from the columns these
-- return (copyStatements), not here: they are the same for every table.

-- The columns of table ?, in their order: name, type, and "GENERATED" for
-- a column the database computes (job.state), which the copy leaves out.
-- name: CopyColumns.mysql :many
-- in: table string
-- out: column_name string, data_type string, generated string
SELECT column_name, data_type, CASE WHEN extra LIKE '%GENERATED%' THEN 'GENERATED' ELSE '' END
FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position;
-- name: CopyColumns.postgres
SELECT column_name, data_type, CASE WHEN is_generated = 'ALWAYS' THEN 'GENERATED' ELSE '' END
FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position;
-- name: CopyColumns.sqlite
SELECT name AS column_name, type AS data_type, CASE WHEN hidden IN (2, 3) THEN 'GENERATED' ELSE '' END FROM pragma_table_xinfo(?) ORDER BY cid;

-- The tables of the database, by name.
-- name: CopyTables.mysql :many
-- out: table_name string
SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name;
-- name: CopyTables.postgres
SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name;
-- name: CopyTables.sqlite
SELECT name AS table_name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name;

-- The copied installation's leader: its epoch stays, so that a write of
-- an older term is still refused.
-- name: CopyLeader :exec
-- in: epoch int64, holder string, since_ms int64
UPDATE leader SET epoch = ?, holder = ?, since_ms = ? WHERE id = 1;

-- PostgreSQL's identity of table ? continues at ? (after the largest id
-- copied). MySQL and SQLite move their counters on an insert with an id:
-- the shared text (not run) returns the id it is given.
-- name: CopyIdentity.postgres :one
-- in: table string, next int64
-- out: next sql.NullInt64
SELECT setval(pg_get_serial_sequence(?, 'id'), ?, false);
-- name: CopyIdentity
SELECT CASE WHEN ? = '' THEN NULL ELSE ? END;
