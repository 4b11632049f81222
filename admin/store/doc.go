// Package store is the platform database of the shardjob admin: jobs, runs,
// slot attempts, executors, users, the audit log and the leader epoch.
//
// One Store type serves three dialects — MySQL/MariaDB and PostgreSQL
// (production) and SQLite (standalone mode) — from the same named queries in
// sql/queries*.sql, with a few dialect macros (see that file) and, where
// the dialects differ more, a Name.mysql, Name.postgres or Name.sqlite text.
// No SQL is written in Go: see "Add a query" in docs/architecture.md.
// A typed query (a kind after its name, "-- in:" and "-- out:" lines) is
// run through its generated method, written once against dbtx so that the
// pool, a transaction and a connection share it:
// s.q.APIKeyList(ctx, tx, apiKeyListParams{…}) (typed_*_gen.go; see
// sql/namedsql/gen). The others are named by the constants of
// queries_gen.go (s.q.get(qName)); TestQueryNames fails when a generated
// file is stale or a query is dead, and TestQueriesAreTyped keeps the
// number of untyped queries from growing. A job's columns are listed once (the fragments
// JobDefinition and JobColumns of sql/queries.sql): CreateJob and UpdateJob
// bind Job by its db tags (sqlx named queries), and the records policy is
// one struct, RecordsPolicy, embedded in every row that carries it (Job,
// NewRun, DispatchSlot). Every instant is stored as Unix
// milliseconds; decisions about ownership (heartbeat age, lease expiry) use
// the database clock ({{now_ms}}), never the clock of one machine.
//
// Migrations are embedded (sql/<dialect>/migrations), applied in order by
// Migrate, recorded in the schema_migrations table, and idempotent. A database
// whose schema is newer than the binary is refused with ErrSchemaTooNew.
//
// Fencing: scheduling transactions call CheckEpoch first, which reads the
// leader row with a shared lock and fails with ErrStaleEpoch unless the
// epoch is still the caller's. A leader that lost its ZooKeeper session can
// therefore write nothing once a successor has claimed a larger epoch.
//
// The store is data access: SQL, row types, locks and transactions. What
// to write — which results are accepted, how a run settles, which alarms
// and child runs follow — is decided by admin/runstate, which writes
// through Tx: one transaction with typed methods (LockAttempts,
// ApplyOutcomes, RunSlotCounts, SettleRuns, InsertChildRun, RaiseAlarms,
// CheckEpoch, ClaimDue, …), so that no package outside the store holds a
// *sqlx.Tx or the pool (TestOnlyStoreUsesSQLX; DB is for tests). Packages
// with their own named queries (retention) run them through Scan, Batch,
// Tx.SelectIDs and Tx.ExecIn. Nor does the store compute a domain value:
// a run's copy of its job, its start after a jitter and its deadlines as
// instants (NewRun) come from admin/jobrules, and the store writes them
// as given.
//
// The hot path works on sets: a batch of results (runstate's
// FinishAttempts over Tx), a log request (AppendRunLogs) or a heartbeat's
// updates take a constant number of statements, not one per row ("set by key" updates, multi-row inserts and
// upserts; see sql/queries.sql). Rows are locked in primary-key order —
// attempts by id, then runs by id; log states by run_id — and heartbeat
// updates of attempts go through the primary key, so that they do not
// deadlock with results. InnoDB may still choose a deadlock victim: Tx and
// the store's autocommit updates run again on 1213 and 1205.
//
// Driver errors are classified by their typed errors, never by their
// messages: an insert that hits a unique key (MySQL/MariaDB error 1062,
// SQLite's SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY) is ErrConflict from
// the methods that create jobs, users and API keys, and a registration
// that lost a race to another replica reads the row that won.
//
// The conformance suite (store_test.go) runs every test against both
// dialects, each on its own database or file.
package store
