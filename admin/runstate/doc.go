// Package runstate is the run state machine of the admin: which executor
// results are accepted, how a run settles, which alarms a result or a
// settled run raises, which child runs a succeeded run creates, how a
// run is cancelled or ended before it starts, and how a finished run is
// retried by hand (Retry: reopened, its failed and cancelled slots tried
// again with a fresh retry budget).
//
// The decisions are pure functions of what the store read under its locks
// (decide.go, table-tested without a database): accept (current, active
// attempt of the reporting executor; a result delivered twice is accepted
// twice, applied once), settle and outcome (succeeded, failed or
// partially_failed with its error text, when no slot is active), slotAlarms
// (slot_dead, records_uncertain) and the run_failed alarm, childRun, and
// transition (a status change and its timestamps).
//
// Machine applies them through admin/store, each change in ONE store
// transaction (store.Tx) as before the split: the attempts are locked in id
// order, then the runs in id order, the leader epoch is checked where the
// leader writes, and a deadlock or lock-wait timeout runs the whole
// transaction again — so the decisions read everything from the
// transaction and keep no state between tries. The store stays data
// access: SQL, row types, locks and transactions, with typed methods on
// store.Tx (LockAttempts, ApplyOutcomes, RunSlotCounts, SettleRuns,
// InsertChildRun, RaiseAlarms, …); no package outside the store sees a
// *sqlx.Tx (TestOnlyStoreUsesSQLX in admin/store).
//
// Why a package of its own and not methods of the store: the rules change
// for product reasons (a new alarm, a new way to end a run) and are tested
// as tables; the store changes for data reasons (a query, an index, a
// dialect) and is tested against both databases. The transactional part
// (Machine) is tested against both dialects in runstate_test.go; most of
// the state machine's end-to-end tests stay in the store's conformance
// suite, which calls Machine.
//
// Set-based transitions that a caller decides for many runs at once stay
// guarded UPDATEs of the store, called by their decider: the leader's
// MarkWaiting and FailPending (runs no executor can take) and the skipping
// of pending firings when a job is disabled or paused (in the transaction
// of that change). Moving attempts between executors (Reassign, Steal,
// ReleaseAttempts, PlaceAttempt) is placement, not a run transition: it
// stays with the scheduler and the store.
//
// Callers: the executor protocol (admin/executorsvc) and the XXL-JOB layer
// (admin/xxljob) finish attempts; the operator API cancels and retries runs; the
// scheduler fails unacknowledged attempts, replaces runs (overlap policy
// replace) and ends pending runs of deleted, disabled or paused jobs.
package runstate
