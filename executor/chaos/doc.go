// Package chaos holds the failure tests of record-level exactly-once
// (sdk/records through the demo handlers of executor/demo): a real
// shardjob-admin, real shardjob-executor processes and a private MariaDB or
// PostgreSQL server, broken on purpose while a run processes records, and then rows counted to
// prove that no record was lost or applied twice, and that no attempt wrote
// anything after a newer attempt had fenced it off; and the count, by
// cause, of plain-handler slots run more than once through executor and
// admin faults (Duplicate causes, below).
//
// The package has no production code; everything is in its tests.
//
// The short form runs in make test; the long form in make chaos.
//
// # Scenario
//
// One private database server holds both the platform database (the
// admin's --db-dsn) and a business database (the executors'
// --demo-db-dsn, whose sessions end a transaction idle for 2 s so that the
// transaction of a frozen executor does not hold its slot's shard lock: see
// sdk/records). TestChaosRecordsExactlyOnce runs on MariaDB
// (testenv.StartMariaDB; idle_transaction_timeout=2 in the DSN),
// TestChaosRecordsExactlyOncePostgres the same scenario on PostgreSQL
// (testenv.StartPostgreSQL; the admin with --db-driver postgres, the demo
// handlers on pgx with records.DialectPostgres, and
// options=-c idle_in_transaction_session_timeout=2000 in the URL). What
// differs by dialect (the DSNs, the test's own pools, which fail fast
// while the server is down, and the SQL that reads keys out of binary
// columns) is the business interface of business_test.go.
//
// One `shardjob-admin serve` (ZooKeeper from testenv, --heartbeat-interval
// 500ms, so executors are lost after 1.5s of silence) and three executors
// (--capacity 4) of one app.
//
//  1. Transactional. A job of 256 slots runs demo.ledger over R records
//     (scope=job, batches of 20 committed one after the other, retry_max
//     3). While it runs: kill -9 an executor half-way through a slot (a
//     replacement starts at once); kill -9 the database server and start
//     it again; SIGSTOP another executor half-way through a slot until the
//     admin has declared it lost and newer tokens have taken the shard
//     locks of the slots it was running, then SIGCONT it. The run must end succeeded —
//     after a POST /api/v1/runs/:id/retry when the database outage used up
//     a slot's retries (the run then ends partially_failed; the test logs
//     it and retries, as an operator would) — and SQL must show: one done
//     dedup row and one ledger row per record, the ids 1..R each booked
//     once (SUM(amount)), every ledger row written by the token of its done
//     row, by an attempt of the slot owning the record; for every slot, the
//     rows of an older token all written before the first row of a newer
//     one (the database clock: a fenced token writes nothing after the
//     takeover); nothing written by the frozen executor's tokens after they
//     were fenced; each slot the killed or frozen executor was running
//     superseded as lost; and each succeeded attempt's processed counter
//     equal to the rows its token booked.
//  2. Same run key. POST /api/v1/jobs/:id/trigger with the first run's
//     scheduled_at returns that run (200, created=false) and starts
//     nothing; a retry of the succeeded run is refused (409); a new firing
//     (another scheduled_at) in the same job scope processes nothing: every
//     record skipped, ledger and dedup rows unchanged (count and checksum
//     of tokens, attempts and updated_at).
//  3. External, uncertain=retry. demo.ledger-external (one external_calls
//     row per call, outside the dedup transaction) with a kill -9 mid-run:
//     every record done and called at least once; a key called more than
//     once was first called by a superseded attempt (the killed one), and
//     every later call is flagged uncertain, with attempt >= 2 and a
//     larger token (its dedup row counts the hand-outs); each succeeded
//     attempt made exactly as many uncertain calls as it reported
//     uncertain records.
//  4. External, uncertain=skip, kill -9 mid-run: no key is called twice;
//     every record is done (called exactly once) or left pending by a
//     superseded attempt (called at most once), and the pending ones are
//     exactly those reported: the succeeded attempts' uncertain counters
//     (GET /api/v1/runs/:id) and their alarm log lines add up to the
//     pending rows, and their "ledger slot done" lines list those keys.
//
// Counts and timings are logged, with a final "SUMMARY records-chaos" line
// naming the form and the database.
// Failures starting with DEFECT describe misbehaviour of the product: lost
// or doubled records, writes after fencing, work stealing that moved a
// started slot, a retry budget spent by moves.
//
// # Duplicate causes (TestChaosDuplicateCauses)
//
// Plain handlers (no sdk/records) run at least once; this scenario counts
// how often one runs more than once, and why (issue 16). Its own cluster:
// a private MariaDB as above, two `shardjob-admin serve` replicas (the first
// leads) and three executors whose --admins list the replica first, so that
// the admin they use is not the one that declares executors lost. A job of
// 256 demo.range slots (about 1.2 s each; 2 s in the long form) runs, and
// while it runs:
//
//	(a) kill -9 of an executor running slots and an immediate restart
//	    under the same --instance-id; the first heartbeat of the new
//	    process supersedes the slots of the old one;
//	(b) SIGSTOP of the admin most executors send their heartbeats to
//	    (the replica in the first round) for twice the loss threshold,
//	    then SIGCONT; the executors' states are polled meanwhile;
//	(c) SIGSTOP of another executor (the one with the most slots assigned
//	    and not started) until the leader declared it lost and moved its
//	    slots, then SIGCONT.
//
// Then the run must end (succeeded, or failed with a reason) within the
// deadline, every executor must have finished every handler of the run it
// started, and no current attempt of the run may be left assigned or
// running in slot_attempt: otherwise the run is stuck (DEFECT). Every
// "slot started" line of the run (executors log at debug) beyond the one of
// the slot's current token is a duplicate, attributed by the process that
// logged it and by when its token was superseded (slot_attempt.finished_at):
//
//	executor killed             a start by the killed process (allowed)
//	executor frozen             a start by the frozen process before SIGSTOP
//	                            whose token was superseded after it (allowed;
//	                            includes slots that finished but whose result
//	                            was not delivered before the freeze)
//	admin frozen (cause 6)      a start by another process whose token was
//	                            superseded while the admin was frozen or
//	                            within the loss threshold after it (DEFECT)
//	stale after wake (cause 5)  a start by the woken process of a token
//	                            superseded before that start (DEFECT)
//	other                       anything else, such as a token started twice
//	                            or a started slot moved (DEFECT)
//
// A "SUMMARY duplicate-causes" line gives the duplicates by cause and the
// stuck runs; the DEFECT assertions come after it, so the figures are
// printed whatever they are. The short form is one round (about 80 s with
// -race on two cores, binaries built); the long form (SHARDJOB_CHAOS=long,
// make chaos) three rounds, one run each, with the faults moving to the
// next executor. Executors stay with the admin that answered them, so
// after a freeze most of them use the other admin: (b) freezes whichever
// admin most executors use, which was the leader in the second round of
// the runs measured (within its ZooKeeper session, so it keeps leading).
//
// # Forms
//
// The short form runs in every `go test ./...` (also with -race): R =
// 20,000 records, about a minute and a half on two cores for each database
// (and the duplicate causes scenario, one round, about as long). The long form
// processes R = 200,000 records and is selected by environment:
//
//	SHARDJOB_CHAOS=long           the long form
//	SHARDJOB_CHAOS_RECORDS=n      R (overrides the form's)
//	SHARDJOB_CHAOS_LOG_DIR=dir    keep the whole output of every process in dir
//
//	SHARDJOB_CHAOS=long go test -count=1 -timeout 30m ./executor/chaos/
//
// The machine's own MariaDB (3306) and PostgreSQL (5432) are never
// touched: the server broken here is private to the test and stopped by its
// fixture.
package chaos
